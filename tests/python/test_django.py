"""Django 5 ORM (psycopg 3 backend) against Strata: `migrate` of the contrib
apps and a project app (Django creates every foreign key DEFERRABLE
INITIALLY DEFERRED and reads the catalog through its introspection), then a
realistic ORM scenario: bulk and single creates, many-to-many, JSON lookups,
aggregates grouped by primary key, select/prefetch_related, subqueries,
F() updates, atomic blocks and savepoints, IntegrityError SQLSTATEs,
PROTECT and CASCADE deletes, auth users and permissions, iterator() (a
server-side cursor) and raw SQL. Every expected value was checked against
PostgreSQL 15."""

import datetime
import os
import sys
from decimal import Decimal

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "django_app"))
os.environ["DJANGO_SETTINGS_MODULE"] = "settings"

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, Permission, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, connection, transaction  # noqa: E402
from django.db.models import (  # noqa: E402
    Avg,
    Count,
    Exists,
    F,
    Max,
    Min,
    OuterRef,
    ProtectedError,
    Q,
    Subquery,
    Sum,
)
from django.db.migrations.recorder import MigrationRecorder  # noqa: E402
from django.db.models.functions import Lower, TruncDay  # noqa: E402
from shop.models import Category, Order, OrderLine, Product, Tag  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def migrated():
    call_command("migrate", verbosity=0)
    yield
    connection.close()


def test_migrate_and_introspection():
    tables = {t.name for t in connection.introspection.get_table_list(connection.cursor())}
    assert {"auth_user", "django_migrations", "shop_product", "shop_product_tags"} <= tables
    with connection.cursor() as c:
        cons = connection.introspection.get_constraints(c, "shop_product")
        rels = connection.introspection.get_relations(c, "shop_product")
    checks = [n for n, d in cons.items() if d["check"]]
    assert "price_nonneg" in checks
    assert cons["uniq_cat_name"]["unique"] and cons["uniq_cat_name"]["columns"] == ["category_id", "name"]
    assert cons["prod_cat_created"]["index"]
    assert cons["prod_cat_created"]["orders"] == ["ASC", "DESC"]
    assert rels["category_id"] == ("id", "shop_category")
    applied = MigrationRecorder(connection).applied_migrations()
    assert ("shop", "0001_initial") in applied and ("auth", "0012_alter_user_first_name_max_length") in applied
    with connection.cursor() as c:
        c.execute(
            "select condeferrable, condeferred from pg_constraint"
            " where conrelid = 'shop_product'::regclass and contype = 'f'"
        )
        assert c.fetchall() == [(True, True)]


def test_orm_scenario():
    root = Category.objects.create(name="root")
    books = Category.objects.create(name="books", parent=root)
    games = Category.objects.create(name="games", parent=root)
    tags = Tag.objects.bulk_create([Tag(label=f"t{i}") for i in range(5)])
    assert all(t.pk is not None for t in tags)
    ps = []
    for i in range(20):
        p = Product.objects.create(
            name=f"p{i}",
            price=Decimal(i) + Decimal("0.99"),
            stock=i * 3,
            category=books if i % 2 else games,
            attrs={"color": ["red", "blue"][i % 2], "n": i},
        )
        p.tags.set(tags[: i % 5])
        ps.append(p)

    assert Product.objects.filter(category__name="books").count() == 10
    top = Product.objects.filter(price__gt=10).order_by("-price").values_list("name", flat=True)
    assert list(top[:3]) == ["p19", "p18", "p17"]
    assert Product.objects.filter(attrs__color="red").count() == 10
    assert Product.objects.filter(attrs__n__gte=15).count() == 5
    per_cat = Category.objects.annotate(n=Count("products")).order_by("name")
    assert list(per_cat.values_list("name", "n")) == [("books", 10), ("games", 10), ("root", 0)]
    assert Product.objects.aggregate(t=Sum("stock"), a=Avg("price"), x=Max("price"), n=Min("price")) == {
        "t": 570,
        "a": Decimal("10.4900000000000000"),
        "x": Decimal("19.99"),
        "n": Decimal("0.99"),
    }
    first = Product.objects.select_related("category").order_by("id")[:3]
    assert [p.category.name for p in first] == ["games", "books", "games"]
    loaded = Product.objects.prefetch_related("tags").order_by("id")[:4]
    assert [sorted(t.label for t in p.tags.all()) for p in loaded] == [
        [],
        ["t0"],
        ["t0", "t1"],
        ["t0", "t1", "t2"],
    ]
    popular = Tag.objects.annotate(n=Count("product")).filter(n__gt=8).order_by("label")
    assert list(popular.values_list("label", "n")) == [("t0", 16), ("t1", 12)]
    assert Product.objects.filter(Q(stock__lt=6) | Q(name__startswith="p1")).count() == 12
    lowered = Product.objects.annotate(l=Lower("name")).filter(l__contains="1").order_by("l")
    assert list(lowered.values_list("l", flat=True)[:5]) == ["p1", "p10", "p11", "p12", "p13"]
    dearest = Product.objects.filter(category=OuterRef("pk")).order_by("-price")
    with_top = Category.objects.annotate(top=Subquery(dearest.values("name")[:1])).order_by("name")
    assert list(with_top.values_list("name", "top")) == [
        ("books", "p19"),
        ("games", "p18"),
        ("root", None),
    ]
    stocked = Category.objects.filter(Exists(Product.objects.filter(category=OuterRef("pk"))))
    assert list(stocked.order_by("name").values_list("name", flat=True)) == ["books", "games"]
    assert Product.objects.filter(tags__label__in=["t1", "t2"]).distinct().count() == 12
    assert Product.objects.filter(sku=ps[4].sku).exists()

    assert Product.objects.filter(category=games).update(stock=F("stock") + 100) == 10
    p0 = Product.objects.get(name="p0")
    p0.price = Decimal("5.50")
    p0.save()
    assert Product.objects.get(pk=p0.pk).price == Decimal("5.50")
    assert list(Product.objects.order_by("id").values_list("stock", flat=True)[:2]) == [100, 3]

    # An atomic block rolled back by a unique violation; a savepoint.
    with pytest.raises(IntegrityError) as e:
        with transaction.atomic():
            Category.objects.create(name="tmp")
            Category.objects.create(name="books")
    assert e.value.__cause__.sqlstate == "23505"
    assert not Category.objects.filter(name="tmp").exists()
    with transaction.atomic():
        Category.objects.create(name="outer")
        with pytest.raises(ValueError):
            with transaction.atomic():
                Category.objects.create(name="inner")
                raise ValueError("rolled back to the savepoint")
    assert list(Category.objects.filter(name__in=["outer", "inner"]).values_list("name", flat=True)) == ["outer"]
    with pytest.raises(IntegrityError) as e:
        Product.objects.create(name="neg", price=Decimal("-1"), category=books)
    assert e.value.__cause__.sqlstate == "23514"

    placed = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    o = Order.objects.create(customer="ann", placed=placed)
    OrderLine.objects.bulk_create([OrderLine(order=o, product=ps[i], qty=i + 1) for i in range(3)])
    assert Order.objects.annotate(items=Sum("lines__qty")).get(pk=o.pk).items == 6
    day = Order.objects.annotate(d=TruncDay("placed")).values_list("d", flat=True).get(pk=o.pk)
    assert day.isoformat() == "2026-01-01T00:00:00-06:00"
    _, created = Order.objects.get_or_create(customer="bob", defaults={"placed": placed})
    assert created
    assert not Order.objects.get_or_create(customer="bob", defaults={"placed": placed})[1]
    Order.objects.update_or_create(customer="bob", defaults={"note": "vip"})
    assert Order.objects.get(customer="bob").note == "vip"
    assert Product.objects.filter(orderline__order__customer="ann").count() == 3
    o.delete()
    assert OrderLine.objects.count() == 0

    with pytest.raises(ProtectedError):
        books.delete()

    u = User.objects.create_user("alice", "a@example.org", "pw")
    g = Group.objects.create(name="staff")
    u.groups.add(g)
    g.permissions.add(*Permission.objects.filter(codename__startswith="view_").order_by("id")[:3])
    u = User.objects.get(pk=u.pk)
    assert u.check_password("pw") and len(u.get_all_permissions()) == 3
    assert User.objects.filter(groups__name="staff").count() == 1

    assert sum(1 for _ in Product.objects.all().iterator(chunk_size=7)) == 20
    raw = Product.objects.raw("select * from shop_product where stock > %s order by id limit 2", [50])
    assert [r.name for r in raw] == ["p0", "p2"]
    with connection.cursor() as c:
        c.execute("select count(*) from shop_product where price > %s", [Decimal("3")])
        assert c.fetchone() == (18,)

    Product.objects.filter(category=games).delete()
    assert games.delete()[0] == 1
    assert Category.objects.filter(parent=root).count() == 1


def test_deferred_foreign_key_checked_at_commit():
    cat = Category.objects.create(name="deferred")
    with pytest.raises(IntegrityError) as e:
        with transaction.atomic():
            # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: a
            # dangling reference fails the COMMIT, not the INSERT.
            Product.objects.create(name="orphan", price=1, category_id=cat.pk + 1000)
            assert Product.objects.filter(name="orphan").exists()
    assert e.value.__cause__.sqlstate == "23503"
    assert not Product.objects.filter(name="orphan").exists()
