"""SQLAlchemy 2 ORM (psycopg 3 driver) against Strata: DDL from declarative
models, sessions, joins, aggregates, relationship loading, savepoints,
IntegrityError SQLSTATEs and full catalog reflection through the inspector."""

import datetime
import decimal
import os

import pytest
import sqlalchemy as sa
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
    LargeBinary,
    MetaData,
    Numeric,
    String,
    Table,
    Text,
    UniqueConstraint,
    delete,
    func,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    selectinload,
)

PORT = int(os.environ["STRATA_PORT"])
ON_STRATA = os.environ.get("STRATA_TEST_TARGET", "strata") == "strata"
URL = f"postgresql+psycopg://postgres@127.0.0.1:{PORT}/postgres"

TABLES = ["sa_author", "sa_book", "sa_book_tag", "sa_tag"]


def not_yet_in_strata(reason):
    """Marks a test of a feature Strata lacks so far: on Strata it still runs
    but may fail (xfail; an XPASS in the report means: remove the marker); on
    PostgreSQL it must pass."""
    return pytest.mark.xfail(ON_STRATA, reason=f"TODO(strata): {reason}", strict=False)


class Base(DeclarativeBase):
    metadata = MetaData()


book_tag = Table(
    "sa_book_tag",
    Base.metadata,
    Column("book_id", BigInteger, ForeignKey("sa_book.id", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", Integer, ForeignKey("sa_tag.id"), primary_key=True),
)


class Author(Base):
    __tablename__ = "sa_author"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    bio: Mapped[str | None] = mapped_column(Text)
    active: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime, server_default=func.now())

    books: Mapped[list["Book"]] = relationship(
        back_populates="author", cascade="all, delete-orphan", passive_deletes=True, order_by="Book.id"
    )


class Book(Base):
    __tablename__ = "sa_book"
    __table_args__ = (
        UniqueConstraint("author_id", "title", name="uq_sa_book_author_title"),
        CheckConstraint("price >= 0", name="ck_sa_book_price_nonneg"),
        Index("ix_sa_book_published", "published"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("sa_author.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    price: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    rating: Mapped[float | None] = mapped_column(Float)
    published: Mapped[datetime.date | None] = mapped_column(Date)
    cover: Mapped[bytes | None] = mapped_column(LargeBinary)
    pages: Mapped[int] = mapped_column(Integer, server_default=text("100"))

    author: Mapped[Author] = relationship(back_populates="books")
    tags: Mapped[list["Tag"]] = relationship(secondary=book_tag, back_populates="books", order_by="Tag.name")


class Tag(Base):
    __tablename__ = "sa_tag"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)

    books: Mapped[list[Book]] = relationship(secondary=book_tag, back_populates="tags")


@pytest.fixture()
def engine():
    eng = sa.create_engine(URL)
    Base.metadata.drop_all(eng)
    Base.metadata.create_all(eng)
    yield eng
    Base.metadata.drop_all(eng)
    eng.dispose()


def seed(engine):
    with Session(engine) as s:
        fiction, classic, poetry = Tag(name="fiction"), Tag(name="classic"), Tag(name="poetry")
        austen = Author(name="Austen", bio="English novelist")
        s.add(austen)
        austen.books.append(
            Book(
                title="Emma",
                price=decimal.Decimal("12.50"),
                rating=4.25,
                published=datetime.date(1815, 12, 23),
                cover=b"\x00\x01\xff",
                tags=[fiction, classic],
            )
        )
        austen.books.append(
            Book(
                title="Persuasion",
                price=decimal.Decimal("9.99"),
                rating=4.5,
                published=datetime.date(1817, 12, 20),
                tags=[fiction],
            )
        )
        s.add_all(
            [
                Author(
                    name="Keats",
                    books=[Book(title="Odes", price=decimal.Decimal("5.00"), pages=60, tags=[poetry, classic])],
                ),
                Author(name="Nobody", bio=None),
            ]
        )
        s.commit()


def test_create_insert_and_server_defaults(engine):
    seed(engine)
    with Session(engine) as s:
        authors = s.scalars(select(Author).order_by(Author.id)).all()
        assert [a.name for a in authors] == ["Austen", "Keats", "Nobody"]
        assert all(a.active is True for a in authors)
        assert all(isinstance(a.created_at, datetime.datetime) for a in authors)
        assert authors[0].bio == "English novelist" and authors[2].bio is None

        emma = s.scalars(select(Book).where(Book.title == "Emma")).one()
        assert emma.price == decimal.Decimal("12.50")
        assert emma.rating == 4.25
        assert emma.published == datetime.date(1815, 12, 23)
        assert emma.cover == b"\x00\x01\xff"
        assert emma.pages == 100
        assert isinstance(emma.id, int) and emma.id >= 1
        odes = s.scalars(select(Book).where(Book.title == "Odes")).one()
        assert odes.pages == 60 and odes.published is None and odes.cover is None


def test_select_join_where_order_limit_and_aggregates(engine):
    seed(engine)
    with Session(engine) as s:
        rows = s.execute(
            select(Author.name, Book.title, Book.price)
            .join(Book, Book.author_id == Author.id)
            .where(Book.price > decimal.Decimal("6"))
            .order_by(Book.price.desc())
            .limit(2)
        ).all()
        assert rows == [
            ("Austen", "Emma", decimal.Decimal("12.50")),
            ("Austen", "Persuasion", decimal.Decimal("9.99")),
        ]

        # relationship join + offset
        titles = s.scalars(
            select(Book.title).join(Book.author).where(Author.name.in_(["Austen", "Keats"])).order_by(Book.title).limit(2).offset(1)
        ).all()
        assert titles == ["Odes", "Persuasion"]

        # outer join + count + group_by + having
        counts = s.execute(
            select(Author.name, func.count(Book.id).label("n"))
            .outerjoin(Author.books)
            .group_by(Author.name)
            .order_by(Author.name)
        ).all()
        assert counts == [("Austen", 2), ("Keats", 1), ("Nobody", 0)]

        multi = s.scalars(
            select(Author.name).join(Author.books).group_by(Author.name).having(func.count(Book.id) > 1)
        ).all()
        assert multi == ["Austen"]

        total, avg = s.execute(select(func.sum(Book.price), func.avg(Book.rating))).one()
        assert total == decimal.Decimal("27.49")
        assert avg == pytest.approx(4.375)

        # many-to-many join through the association table
        tagged = s.scalars(
            select(Book.title).join(Book.tags).where(Tag.name == "classic").order_by(Book.title)
        ).all()
        assert tagged == ["Emma", "Odes"]

        assert s.scalar(select(func.count()).select_from(Tag)) == 3
        assert s.get(Author, authors_id(s, "Keats")).name == "Keats"


def authors_id(s, name):
    return s.scalars(select(Author.id).where(Author.name == name)).one()


def test_relationship_loading(engine):
    seed(engine)
    with Session(engine) as s:
        authors = s.scalars(
            select(Author).options(selectinload(Author.books).selectinload(Book.tags)).order_by(Author.id)
        ).all()
        assert [[b.title for b in a.books] for a in authors] == [["Emma", "Persuasion"], ["Odes"], []]
        assert [t.name for t in authors[0].books[0].tags] == ["classic", "fiction"]

    with Session(engine) as s:
        # lazy loads: many-to-one, one-to-many, many-to-many
        odes = s.scalars(select(Book).where(Book.title == "Odes")).one()
        assert odes.author.name == "Keats"
        assert [b.title for b in odes.author.books] == ["Odes"]
        assert [t.name for t in odes.tags] == ["classic", "poetry"]
        poetry = s.scalars(select(Tag).where(Tag.name == "poetry")).one()
        assert [b.title for b in poetry.books] == ["Odes"]


def test_orm_update_and_delete(engine):
    seed(engine)
    with Session(engine) as s:
        emma = s.scalars(select(Book).where(Book.title == "Emma")).one()
        emma.price = decimal.Decimal("14.00")
        emma.tags = [t for t in emma.tags if t.name != "classic"]
        s.commit()
        assert s.scalar(select(Book.price).where(Book.title == "Emma")) == decimal.Decimal("14.00")
        assert [t.name for t in emma.tags] == ["fiction"]

        res = s.execute(update(Book).where(Book.price < 10).values(pages=Book.pages + 1))
        assert res.rowcount == 2
        s.commit()
        assert s.scalars(select(Book.pages).order_by(Book.title)).all() == [100, 61, 101]

        # UPDATE ... RETURNING through the ORM
        new = s.scalars(
            update(Author).where(Author.name == "Nobody").values(bio="late bloomer").returning(Author.bio)
        ).all()
        assert new == ["late bloomer"]
        s.commit()

        # ORM delete of the parent: the database cascades (passive_deletes)
        keats = s.scalars(select(Author).where(Author.name == "Keats")).one()
        s.delete(keats)
        s.commit()
        assert s.scalars(select(Book.title).order_by(Book.title)).all() == ["Emma", "Persuasion"]
        assert s.scalar(select(func.count()).select_from(book_tag)) == 2

        # bulk delete
        res = s.execute(delete(Book).where(Book.title == "Persuasion"))
        assert res.rowcount == 1
        s.commit()
        assert s.scalar(select(func.count()).select_from(Book)) == 1


def test_rollback_and_savepoint(engine):
    seed(engine)
    with Session(engine) as s:
        s.add(Author(name="Temp"))
        s.flush()
        assert s.scalar(select(func.count()).select_from(Author)) == 4
        s.rollback()
        assert s.scalar(select(func.count()).select_from(Author)) == 3

        s.add(Author(name="Kept"))
        sp = s.begin_nested()
        s.add(Author(name="Discarded"))
        s.flush()
        assert s.scalar(select(func.count()).select_from(Author)) == 5
        sp.rollback()
        with s.begin_nested():
            s.add(Author(name="AlsoKept"))
        s.commit()
        names = s.scalars(select(Author.name).order_by(Author.name)).all()
        assert names == ["AlsoKept", "Austen", "Keats", "Kept", "Nobody"]


def test_integrity_errors(engine):
    seed(engine)
    with Session(engine) as s:
        s.add(Author(name="Austen"))
        with pytest.raises(IntegrityError) as e:
            s.commit()
        assert e.value.orig.sqlstate == "23505"
        assert "sa_author_name_key" in str(e.value.orig)
        s.rollback()

        # unique violation inside a savepoint keeps the outer transaction usable
        s.add(Author(name="Brontë"))
        with pytest.raises(IntegrityError) as e:
            with s.begin_nested():
                s.add(Tag(name="fiction"))
        assert e.value.orig.sqlstate == "23505"
        s.commit()
        assert s.scalar(select(func.count()).select_from(Author)) == 4

        austen_id = authors_id(s, "Austen")
        s.add(Book(author_id=austen_id, title="Emma", price=decimal.Decimal("1")))
        with pytest.raises(IntegrityError) as e:
            s.flush()
        assert e.value.orig.sqlstate == "23505"
        assert e.value.orig.diag.constraint_name == "uq_sa_book_author_title"
        s.rollback()

        s.add(Book(author_id=999999, title="Ghost", price=decimal.Decimal("1")))
        with pytest.raises(IntegrityError) as e:
            s.flush()
        assert e.value.orig.sqlstate == "23503"
        s.rollback()

        s.add(Book(author_id=austen_id, title="Cheap", price=decimal.Decimal("-1")))
        with pytest.raises(IntegrityError) as e:
            s.flush()
        assert e.value.orig.sqlstate == "23514"
        assert e.value.orig.diag.constraint_name == "ck_sa_book_price_nonneg"
        s.rollback()

        s.add(Book(author_id=austen_id, title=None, price=decimal.Decimal("1")))
        with pytest.raises(IntegrityError) as e:
            s.flush()
        assert e.value.orig.sqlstate == "23502"
        s.rollback()


def test_inspector_reflection(engine):
    insp = sa.inspect(engine)
    names = set(insp.get_table_names())
    assert set(TABLES) <= names
    assert insp.has_table("sa_book") and not insp.has_table("sa_nope")
    assert insp.default_schema_name == "public"

    cols = {c["name"]: c for c in insp.get_columns("sa_book")}
    assert list(cols) == ["id", "author_id", "title", "price", "rating", "published", "cover", "pages"]
    types = {n: type(c["type"]).__name__ for n, c in cols.items()}
    assert types == {
        "id": "BIGINT",
        "author_id": "INTEGER",
        "title": "VARCHAR",
        "price": "NUMERIC",
        "rating": "DOUBLE_PRECISION",
        "published": "DATE",
        "cover": "BYTEA",
        "pages": "INTEGER",
    }
    assert cols["title"]["type"].length == 200
    assert (cols["price"]["type"].precision, cols["price"]["type"].scale) == (10, 2)
    assert {n: c["nullable"] for n, c in cols.items()} == {
        "id": False,
        "author_id": False,
        "title": False,
        "price": False,
        "rating": True,
        "published": True,
        "cover": True,
        "pages": False,
    }
    assert cols["id"]["default"] == "nextval('sa_book_id_seq'::regclass)"
    assert cols["id"]["autoincrement"] is True
    assert cols["pages"]["default"] == "100"
    assert cols["title"]["default"] is None

    acols = {c["name"]: c for c in insp.get_columns("sa_author")}
    assert acols["active"]["default"] == "true"
    assert acols["created_at"]["default"] == "now()"
    assert type(acols["created_at"]["type"]).__name__ == "TIMESTAMP"
    assert acols["created_at"]["type"].timezone is False
    assert type(acols["bio"]["type"]).__name__ == "TEXT"
    assert type(acols["active"]["type"]).__name__ == "BOOLEAN"

    pk = insp.get_pk_constraint("sa_book")
    assert (pk["constrained_columns"], pk["name"], pk["comment"]) == (["id"], "sa_book_pkey", None)
    pk = insp.get_pk_constraint("sa_book_tag")
    assert pk["constrained_columns"] == ["book_id", "tag_id"] and pk["name"] == "sa_book_tag_pkey"

    fks = insp.get_foreign_keys("sa_book")
    assert len(fks) == 1
    fk = fks[0]
    assert fk["name"] == "sa_book_author_id_fkey"
    assert fk["constrained_columns"] == ["author_id"]
    assert fk["referred_table"] == "sa_author"
    assert fk["referred_columns"] == ["id"]
    assert fk["referred_schema"] is None
    assert fk["options"] == {"ondelete": "CASCADE"}

    tag_fks = sorted(insp.get_foreign_keys("sa_book_tag"), key=lambda f: f["name"])
    assert [(f["constrained_columns"], f["referred_table"], f["referred_columns"], f["options"]) for f in tag_fks] == [
        (["book_id"], "sa_book", ["id"], {"ondelete": "CASCADE"}),
        (["tag_id"], "sa_tag", ["id"], {}),
    ]

    idx = {i["name"]: i for i in insp.get_indexes("sa_book")}
    assert idx["ix_sa_book_published"]["column_names"] == ["published"]
    assert idx["ix_sa_book_published"]["unique"] is False
    assert "sa_book_pkey" not in idx
    # the index behind the unique constraint is listed, flagged as duplicating it
    assert idx["uq_sa_book_author_title"]["unique"] is True
    assert idx["uq_sa_book_author_title"]["column_names"] == ["author_id", "title"]
    assert idx["uq_sa_book_author_title"]["duplicates_constraint"] == "uq_sa_book_author_title"

    uqs = insp.get_unique_constraints("sa_book")
    assert [(u["name"], u["column_names"]) for u in uqs] == [("uq_sa_book_author_title", ["author_id", "title"])]
    assert [(u["name"], u["column_names"]) for u in insp.get_unique_constraints("sa_author")] == [
        ("sa_author_name_key", ["name"])
    ]

    cks = insp.get_check_constraints("sa_book")
    assert [c["name"] for c in cks] == ["ck_sa_book_price_nonneg"]
    # The stored expression deparsed, with its implicit cast.
    assert cks[0]["sqltext"] == "price >= 0::numeric"

    assert insp.get_table_comment("sa_book") == {"text": None}
    assert "sa_book_id_seq" in insp.get_sequence_names()


def test_metadata_reflect(engine):
    md = MetaData()
    md.reflect(engine, only=TABLES)
    assert set(md.tables) == set(TABLES)

    book = md.tables["sa_book"]
    assert [c.name for c in book.columns] == ["id", "author_id", "title", "price", "rating", "published", "cover", "pages"]
    assert [c.name for c in book.primary_key.columns] == ["id"]
    fk = next(iter(book.foreign_keys))
    assert fk.column.table.name == "sa_author" and fk.column.name == "id" and fk.ondelete == "CASCADE"
    assert {i.name for i in book.indexes} >= {"ix_sa_book_published"}
    uq = [c for c in book.constraints if isinstance(c, UniqueConstraint)]
    assert [u.name for u in uq] == ["uq_sa_book_author_title"]
    ck = [c for c in book.constraints if isinstance(c, CheckConstraint)]
    assert [c.name for c in ck] == ["ck_sa_book_price_nonneg"]
    assert str(book.c.pages.server_default.arg) == "100"

    link = md.tables["sa_book_tag"]
    assert {c.name for c in link.primary_key.columns} == {"book_id", "tag_id"}
    assert sorted(f.column.table.name for f in link.foreign_keys) == ["sa_book", "sa_tag"]

    # the reflected metadata is usable: round-trip a row through Core
    with engine.begin() as conn:
        author = md.tables["sa_author"]
        aid = conn.execute(author.insert().values(name="Reflected").returning(author.c.id)).scalar_one()
        conn.execute(book.insert().values(author_id=aid, title="R", price=decimal.Decimal("3.10")))
        got = conn.execute(
            select(author.c.name, book.c.title, book.c.price, book.c.pages).join(book, book.c.author_id == author.c.id)
        ).all()
        assert got == [("Reflected", "R", decimal.Decimal("3.10"), 100)]

    # full reflection of the schema (what Alembic autogenerate does) also works
    full = MetaData()
    full.reflect(engine)
    assert set(TABLES) <= set(full.tables)


def test_enum_columns_create_query_and_reflect():
    # sa.Enum on PostgreSQL is a CREATE TYPE ... AS ENUM that create_all
    # makes (after asking pg_type whether it exists) and drop_all drops;
    # the inspector reads the labels back from pg_enum.
    import enum

    class Status(enum.Enum):
        draft = "draft"
        live = "live"
        retired = "retired"

    md = MetaData()
    docs = Table(
        "sa_doc",
        md,
        Column("id", Integer, primary_key=True),
        Column("status", sa.Enum(Status, name="sa_status"), nullable=False, server_default="draft"),
    )
    eng = sa.create_engine(URL)
    try:
        md.drop_all(eng)
        md.create_all(eng)
        with eng.begin() as c:
            c.execute(docs.insert(), [{"id": 1, "status": Status.live}, {"id": 3, "status": Status.retired}])
            c.execute(docs.insert().values(id=2))
            rows = c.execute(sa.select(docs.c.id, docs.c.status).order_by(docs.c.status.desc())).all()
            assert rows == [(3, Status.retired), (1, Status.live), (2, Status.draft)]
            n = c.execute(sa.select(func.count()).where(docs.c.status > Status.draft)).scalar()
            assert n == 2
        insp = sa.inspect(eng)
        assert insp.get_enums() == [
            {"name": "sa_status", "schema": "public", "visible": True, "labels": ["draft", "live", "retired"]}
        ]
        col = {c["name"]: c for c in insp.get_columns("sa_doc")}["status"]
        assert col["type"].enums == ["draft", "live", "retired"] and col["type"].name == "sa_status"
        assert col["default"] == "'draft'::sa_status"
        reflected = MetaData()
        reflected.reflect(eng, only=["sa_doc"])
        assert reflected.tables["sa_doc"].c.status.type.enums == ["draft", "live", "retired"]
    finally:
        md.drop_all(eng)
        eng.dispose()
    assert "sa_status" not in [e["name"] for e in sa.inspect(eng).get_enums()]


def test_schema_qualified_tables_and_reflection():
    # Table(..., schema=) makes SQLAlchemy qualify every statement
    # (CREATE SCHEMA is the application's, as with alembic); the inspector
    # lists schemas and reflects the tables, keys and enum of one of them.
    md = MetaData(schema="sa_shop")
    kinds = sa.Enum("small", "large", name="sa_kind", metadata=md)
    items = Table(
        "items",
        md,
        Column("id", Integer, primary_key=True),
        Column("name", String(40), nullable=False, unique=True),
        Column("kind", kinds, server_default="small"),
    )
    notes = Table(
        "notes",
        md,
        Column("id", Integer, primary_key=True),
        Column("item_id", Integer, sa.ForeignKey("sa_shop.items.id", ondelete="CASCADE")),
        Column("body", sa.Text),
    )
    eng = sa.create_engine(URL)
    try:
        with eng.begin() as c:
            c.execute(text("drop schema if exists sa_shop cascade"))
            c.execute(text("create schema sa_shop"))
        md.create_all(eng)
        with eng.begin() as c:
            c.execute(items.insert(), [{"id": 1, "name": "mug", "kind": "large"}])
            c.execute(items.insert(), [{"id": 2, "name": "pen"}])
            c.execute(notes.insert(), [{"id": 1, "item_id": 1, "body": "chipped"}])
            q = sa.select(items.c.name, notes.c.body).join(notes, isouter=True).order_by(items.c.id)
            assert c.execute(q).all() == [("mug", "chipped"), ("pen", None)]
            assert c.execute(sa.select(items.c.kind).where(items.c.id == 2)).scalar() == "small"
            c.execute(items.delete().where(items.c.id == 1))
            assert c.execute(sa.select(func.count()).select_from(notes)).scalar() == 0
        insp = sa.inspect(eng)
        assert "sa_shop" in insp.get_schema_names()
        assert sorted(insp.get_table_names(schema="sa_shop")) == ["items", "notes"]
        assert "items" not in insp.get_table_names()
        assert insp.get_pk_constraint("items", schema="sa_shop")["constrained_columns"] == ["id"]
        fk = insp.get_foreign_keys("notes", schema="sa_shop")[0]
        assert (fk["referred_schema"], fk["referred_table"], fk["referred_columns"]) == ("sa_shop", "items", ["id"])
        assert [u["column_names"] for u in insp.get_unique_constraints("items", schema="sa_shop")] == [["name"]]
        enums = insp.get_enums(schema="sa_shop")
        assert [(e["name"], e["schema"], e["labels"]) for e in enums] == [("sa_kind", "sa_shop", ["small", "large"])]
        reflected = MetaData()
        reflected.reflect(eng, schema="sa_shop")
        assert sorted(reflected.tables) == ["sa_shop.items", "sa_shop.notes"]
        assert reflected.tables["sa_shop.items"].c.kind.type.enums == ["small", "large"]
    finally:
        md.drop_all(eng)
        with eng.begin() as c:
            c.execute(text("drop schema if exists sa_shop cascade"))
        eng.dispose()


def test_domain_columns_create_query_and_reflect():
    # postgresql.DOMAIN is a CREATE DOMAIN that create_all makes (after
    # asking pg_type whether it exists) and drop_all drops; a value the
    # domain's CHECK refuses is an IntegrityError (23514); the inspector
    # reads the domain back from pg_type and pg_constraint.
    from sqlalchemy.dialects.postgresql import DOMAIN

    positive = DOMAIN("sa_positive", Integer, check="VALUE > 0", not_null=True)
    md = MetaData()
    items = Table(
        "sa_item",
        md,
        Column("id", Integer, primary_key=True),
        Column("qty", positive),
    )
    eng = sa.create_engine(URL)
    try:
        md.drop_all(eng)
        md.create_all(eng)
        with eng.begin() as c:
            c.execute(items.insert(), [{"id": 1, "qty": 3}, {"id": 2, "qty": 5}])
            assert c.execute(sa.select(func.sum(items.c.qty))).scalar() == 8
        with pytest.raises(IntegrityError) as e:
            with eng.begin() as c:
                c.execute(items.insert(), [{"id": 3, "qty": 0}])
        assert e.value.orig.sqlstate == "23514"
        with pytest.raises(IntegrityError) as e:
            with eng.begin() as c:
                c.execute(items.insert(), [{"id": 3, "qty": None}])
        assert e.value.orig.sqlstate == "23502"
        insp = sa.inspect(eng)
        [d] = [d for d in insp.get_domains() if d["name"] == "sa_positive"]
        assert d["type"] == "integer" and d["nullable"] is False and d["schema"] == "public"
        assert [c["check"] for c in d["constraints"]] == ["VALUE > 0"]
        col = {c["name"]: c for c in insp.get_columns("sa_item")}["qty"]
        assert isinstance(col["type"], DOMAIN) and col["type"].name == "sa_positive"
    finally:
        md.drop_all(eng)
        eng.dispose()
    assert "sa_positive" not in [d["name"] for d in sa.inspect(eng).get_domains()]
