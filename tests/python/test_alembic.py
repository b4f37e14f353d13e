"""Alembic (over SQLAlchemy 2 and psycopg 3) against Strata: a migration
written with Alembic's operations (create/rename/drop tables, add/alter/
rename columns, server defaults, types, foreign keys, unique and check
constraints, indexes, comments, bulk inserts) runs and downgrades, and
autogenerate compares the database with the models: no difference when
they agree, and exactly the differences PostgreSQL shows when they do not.
Autogenerate reads every column's type, nullability, server default
(pg_get_expr) and comment, and every index, unique constraint and foreign
key, so a spurious difference here is a migration an app would write for
nothing."""

import os

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    Interval,
    LargeBinary,
    MetaData,
    Numeric,
    SmallInteger,
    String,
    Table,
    Text,
    Time,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects import postgresql as pg

PORT = os.environ["STRATA_PORT"]
URL = f"postgresql+psycopg://postgres@127.0.0.1:{PORT}/postgres"


@pytest.fixture
def engine():
    eng = sa.create_engine(URL)
    yield eng
    eng.dispose()


def diff(conn, md):
    """Autogenerate's comparison, each change as (kind, table, column or name)."""
    ctx = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": True})
    out = []
    for d in compare_metadata(ctx, md):
        for change in d if isinstance(d, list) else [d]:
            kind = change[0]
            if kind.startswith("modify_"):
                out.append((kind, change[2], change[3]))
            elif kind in ("add_column", "remove_column"):
                out.append((kind, change[2], change[3].name))
            elif kind in ("add_table", "remove_table"):
                out.append((kind, change[1].name, None))
            elif kind in ("add_index", "remove_index", "add_constraint", "remove_constraint", "add_fk", "remove_fk"):
                obj = change[1]
                out.append((kind, obj.table.name, obj.name or ",".join(c.name for c in obj.columns)))
            else:
                out.append((kind, None, None))
    return sorted(out, key=repr)


def model(md):
    """A schema with every kind of column, default, key and index an app declares."""
    Table(
        "al_author",
        md,
        Column("id", Integer, primary_key=True),
        Column("name", String(100), nullable=False),
        Column("email", String(255), nullable=False, unique=True),
        Column("active", Boolean, nullable=False, server_default=sa.false()),
        Column("verified", Boolean, nullable=False, server_default=text("true")),
        Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
        Column("updated", DateTime, server_default=text("CURRENT_TIMESTAMP")),
        Column("score", Numeric(10, 2), server_default="0"),
        Column("rank", Integer, server_default=text("0")),
        Column("nick", String(20), server_default="anon"),
        Column("bio", Text, server_default=""),
        Column("big", BigInteger),
        Column("small", SmallInteger),
        Column("ratio", Float),
        Column("blob", LargeBinary),
        Column("birthday", Date),
        Column("alarm", Time),
        Column("spent", Interval),
        Column("uid", pg.UUID, server_default=text("gen_random_uuid()")),
        Column("meta", pg.JSONB, server_default=text("'{}'::jsonb")),
        Column("tags", pg.ARRAY(Text)),
        Column("kind", sa.Enum("a", "b", name="al_kind"), server_default="a"),
        CheckConstraint("score >= 0", name="al_author_score_ck"),
        comment="people who write",
    )
    Table(
        "al_book",
        md,
        Column("id", BigInteger, sa.Identity(), primary_key=True),
        Column("author_id", Integer, ForeignKey("al_author.id", ondelete="CASCADE"), nullable=False, index=True),
        Column("title", String(200), nullable=False, comment="as printed"),
        Column("isbn", String(13)),
        Column("pages", Integer, server_default=text("100")),
        UniqueConstraint("author_id", "title", name="al_book_author_title_uq"),
        Index("al_book_isbn_idx", "isbn", unique=True),
        Index("al_book_lower_title", func.lower(text("title"))),
        Index("al_book_partial", "pages", postgresql_where=text("pages > 10")),
    )
    Table(
        "al_tag",
        md,
        Column("book_id", BigInteger, ForeignKey("al_book.id", ondelete="SET NULL", onupdate="CASCADE")),
        Column("tag", String(30), primary_key=True),
        Column("seq", Integer, sa.Sequence("al_tag_seq")),
    )
    return md


def test_create_all_then_autogenerate_finds_nothing(engine):
    md = model(MetaData())
    md.drop_all(engine)
    md.create_all(engine)
    try:
        with engine.connect() as conn:
            assert diff(conn, md) == []
            # the same models with other details: each one is reported
            changed = MetaData()
            Table(
                "al_author",
                changed,
                Column("id", Integer, primary_key=True),
                Column("name", String(150), nullable=False),
                Column("email", String(255), nullable=True, unique=True),
                Column("active", Boolean, nullable=False, server_default=sa.true()),
                Column("score", Numeric(12, 2), server_default="1"),
                Column("nick", String(20), server_default="anon", comment="shown"),
                Column("extra", Integer),
                comment="people who write",
            )
            Table("al_other", changed, Column("id", Integer, primary_key=True))
            got = [d for d in diff(conn, changed) if d[1] == "al_author" or d[0] == "add_table"]
        assert got == sorted(
            [
                ("add_column", "al_author", "extra"),
                ("add_table", "al_other", None),
                ("modify_comment", "al_author", "nick"),
                ("modify_default", "al_author", "active"),
                ("modify_default", "al_author", "score"),
                ("modify_nullable", "al_author", "email"),
                ("modify_type", "al_author", "name"),
                ("modify_type", "al_author", "score"),
            ]
            + [
                ("remove_column", "al_author", c)
                for c in (
                    "verified",
                    "created_at",
                    "updated",
                    "rank",
                    "bio",
                    "big",
                    "small",
                    "ratio",
                    "blob",
                    "birthday",
                    "alarm",
                    "spent",
                    "uid",
                    "meta",
                    "tags",
                    "kind",
                )
            ],
            key=repr,
        )
    finally:
        md.drop_all(engine)


def upgrade(op):
    op.create_table(
        "mg_author",
        Column("id", Integer, primary_key=True),
        Column("name", String(50), nullable=False),
    )
    op.create_table(
        "mg_post",
        Column("id", Integer, primary_key=True),
        Column("author_id", Integer),
        Column("note", Text),
    )
    op.add_column("mg_author", Column("flag", Boolean, server_default=sa.false(), nullable=False))
    op.add_column("mg_author", Column("joined", DateTime(timezone=True), server_default=func.now()))
    op.alter_column("mg_author", "name", type_=String(120), existing_type=String(50))
    op.alter_column("mg_post", "note", nullable=False, server_default="x", existing_type=Text)
    op.create_foreign_key("mg_post_author_fk", "mg_post", "mg_author", ["author_id"], ["id"], ondelete="CASCADE")
    op.create_index("mg_post_note_idx", "mg_post", ["note"])
    op.create_unique_constraint("mg_author_name_uq", "mg_author", ["name"])
    op.create_check_constraint("mg_author_name_ck", "mg_author", "length(name) > 0")
    op.alter_column("mg_post", "note", new_column_name="body", existing_type=Text)
    op.rename_table("mg_post", "mg_entry")
    op.execute("insert into mg_author (id, name) values (1, 'ann')")
    entry = sa.table("mg_entry", sa.column("id", Integer), sa.column("author_id", Integer), sa.column("body", Text))
    op.bulk_insert(entry, [{"id": 1, "author_id": 1, "body": "hello"}, {"id": 2, "author_id": 1, "body": "again"}])
    op.alter_column("mg_author", "id", type_=BigInteger, existing_type=Integer)
    op.alter_column("mg_entry", "body", server_default=None, existing_type=Text)
    op.create_table_comment("mg_author", "authors")
    op.alter_column("mg_author", "name", comment="display name", existing_type=String(120))


def downgrade(op):
    op.drop_table_comment("mg_author")
    op.alter_column("mg_author", "id", type_=Integer, existing_type=BigInteger)
    op.rename_table("mg_entry", "mg_post")
    op.alter_column("mg_post", "body", new_column_name="note", existing_type=Text)
    op.drop_constraint("mg_author_name_ck", "mg_author", type_="check")
    op.drop_constraint("mg_author_name_uq", "mg_author", type_="unique")
    op.drop_index("mg_post_note_idx", table_name="mg_post")
    op.drop_constraint("mg_post_author_fk", "mg_post", type_="foreignkey")
    op.drop_column("mg_author", "joined")
    op.drop_column("mg_author", "flag")
    op.drop_table("mg_post")
    op.drop_table("mg_author")


def migrated_model():
    """What the models say after `upgrade`."""
    md = MetaData()
    Table(
        "mg_author",
        md,
        Column("id", BigInteger, primary_key=True),
        Column("name", String(120), nullable=False, unique=True, comment="display name"),
        Column("flag", Boolean, server_default=sa.false(), nullable=False),
        Column("joined", DateTime(timezone=True), server_default=func.now()),
        CheckConstraint("length(name) > 0", name="mg_author_name_ck"),
        comment="authors",
    )
    Table(
        "mg_entry",
        md,
        Column("id", Integer, primary_key=True),
        Column("author_id", Integer, ForeignKey("mg_author.id", name="mg_post_author_fk", ondelete="CASCADE")),
        Column("body", Text, nullable=False),
        Index("mg_post_note_idx", "body"),
    )
    return md


def test_migration_upgrade_matches_models_and_downgrades(engine):
    with engine.begin() as conn:
        conn.execute(text("drop table if exists mg_post, mg_entry, mg_author cascade"))
    # Alembic runs a migration in one transaction: DDL and data together.
    with engine.begin() as conn:
        upgrade(Operations(MigrationContext.configure(conn)))
    with engine.connect() as conn:
        rows = conn.execute(
            text("select a.id, a.name, a.flag, e.body from mg_author a join mg_entry e on e.author_id = a.id order by e.id")
        ).all()
        assert rows == [(1, "ann", False, "hello"), (1, "ann", False, "again")]
        conn.rollback()
        # the unique constraint and the check made by the migration hold
        with pytest.raises(sa.exc.IntegrityError) as err:
            with conn.begin():
                conn.execute(text("insert into mg_author (id, name) values (2, 'ann')"))
        assert err.value.orig.sqlstate == "23505"
        with pytest.raises(sa.exc.IntegrityError) as err:
            with conn.begin():
                conn.execute(text("insert into mg_author (id, name) values (3, '')"))
        assert err.value.orig.sqlstate == "23514"
        assert diff(conn, migrated_model()) == []
        insp = sa.inspect(conn)
        assert insp.get_table_comment("mg_author") == {"text": "authors"}
        assert [fk["referred_table"] for fk in insp.get_foreign_keys("mg_entry")] == ["mg_author"]
    # a migration that fails after its first step leaves nothing behind
    with pytest.raises(sa.exc.ProgrammingError) as err:
        with engine.begin() as conn:
            op = Operations(MigrationContext.configure(conn))
            op.add_column("mg_author", Column("half", Integer))
            op.create_index("mg_nowhere_idx", "mg_author", ["no_such_column"])
    assert err.value.orig.sqlstate == "42703"
    with engine.connect() as conn:
        assert "half" not in [c["name"] for c in sa.inspect(conn).get_columns("mg_author")]
    with engine.begin() as conn:
        downgrade(Operations(MigrationContext.configure(conn)))
    with engine.connect() as conn:
        assert not {"mg_author", "mg_post", "mg_entry"} & set(sa.inspect(conn).get_table_names())
