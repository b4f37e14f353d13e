"""asyncpg against Strata or PostgreSQL: a small shop application (schema,
parameterized DML, joins and aggregates, transactions, savepoints, SQLSTATE
errors, NULLs) and a round trip of every core type in binary format (asyncpg's
default) and in text format (asyncpg's per-type text codecs).

Environment: STRATA_PORT (the server on 127.0.0.1, user and database
postgres, no password) and STRATA_TEST_TARGET (strata|postgres). Every
expectation here was checked against PostgreSQL 15. See ../README.md for the
known-failure convention (KNOWN_FAILURES below)."""

import asyncio
import datetime
import ipaddress
import decimal
import json
import math
import os
import struct

import asyncpg
import pytest
from asyncpg.pgproto import pgproto

PORT = int(os.environ["STRATA_PORT"])
ON_STRATA = os.environ.get("STRATA_TEST_TARGET", "strata") == "strata"

# Checks Strata cannot pass yet, by name: on Strata they still run, a failure
# prints "known failure: <name>: <why>" and a pass "UNEXPECTED PASS: <name>"
# (remove the entry then); on PostgreSQL they must pass. One entry per
# missing feature or bug; "bug:" marks a bug rather than a missing feature.
KNOWN_FAILURES = {}

# Lines for the end of the run (printed by conftest.py).
REPORT = []
UNEXPECTED = set()


class ConnectFailed(Exception):
    pass

D = decimal.Decimal
UTC = datetime.timezone.utc
UUID = pgproto.UUID  # what asyncpg decodes uuid to (a uuid.UUID subclass)


async def connect(**kw):
    # TimeZone is fixed so that timestamptz in text format prints the same
    # everywhere.
    return await asyncpg.connect(
        host="127.0.0.1",
        port=PORT,
        user="postgres",
        database="postgres",
        server_settings={"TimeZone": "UTC"},
        timeout=30,
        **kw,
    )


def run_check(name, check):
    """Runs the coroutine function `check(conn)` on a fresh connection, with
    the known-failure convention for `name`."""

    async def go():
        try:
            conn = await connect()
        except Exception as e:
            raise ConnectFailed(e) from e
        if ON_STRATA and "connect" in KNOWN_FAILURES and "connect" not in UNEXPECTED:
            UNEXPECTED.add("connect")
            REPORT.append("UNEXPECTED PASS: connect")
        try:
            await asyncio.wait_for(check(conn), 120)
        finally:
            await conn.close()

    why = KNOWN_FAILURES.get(name) if ON_STRATA else None
    if ON_STRATA and why is None and "connect" in KNOWN_FAILURES:
        try:
            asyncio.run(go())
        except ConnectFailed as e:
            why = KNOWN_FAILURES["connect"]
            REPORT.append(f"known failure: {name}: needs connect: {why} (got {e})")
            pytest.xfail(f"needs connect: {why}")
        return
    if why is None:
        asyncio.run(go())
        return
    try:
        asyncio.run(go())
    except Exception as e:  # noqa: BLE001 - any failure is the known one
        REPORT.append(f"known failure: {name}: {why} (got {type(e).__name__}: {e})")
        pytest.xfail(why)
    REPORT.append(f"UNEXPECTED PASS: {name}")


# ---------------------------------------------------------------------------
# The shop: customers and their orders.

CUSTOMERS = [
    (1, "ann@example.com", "Ann", True),
    (2, "bob@example.com", "Bob", False),
    (3, "cy@example.com", "Cy", False),
]
ORDERS = [
    (100, 1, D("12.50"), None, datetime.date(2024, 1, 5)),
    (101, 1, D("7.25"), "gift wrap", datetime.date(2024, 1, 6)),
    (102, 2, D("100.00"), None, datetime.date(2024, 2, 1)),
    (103, 2, D("0.99"), "coupon", datetime.date(2024, 2, 2)),
    (104, 1, D("30.00"), None, datetime.date(2024, 3, 1)),
]


async def make_shop(conn):
    """Creates the shop's tables afresh and fills them through parameters."""
    await conn.execute("drop table if exists orders")
    await conn.execute("drop table if exists customers")
    await conn.execute(
        "create table customers (id int4 primary key, email varchar(100) not null unique,"
        " name text not null, vip bool not null default false)"
    )
    await conn.execute(
        "create table orders (id int8 primary key, customer_id int4 not null,"
        " total numeric(10,2) not null, note text, placed_on date not null)"
    )
    await conn.execute("create index orders_by_customer on orders (customer_id)")
    await conn.executemany("insert into customers (id, email, name, vip) values ($1, $2, $3, $4)", CUSTOMERS)
    await conn.executemany(
        "insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)", ORDERS
    )


def test_connect_and_server_version():
    async def check(conn):
        assert await conn.fetchval("select 1") == 1
        assert conn.get_server_version().major >= 15
        assert await conn.fetchval("select current_database()") == "postgres"
        assert await conn.fetchval("select current_setting('client_encoding')") == "UTF8"

    run_check("connect_and_server_version", check)


def test_show_setting_extended():
    async def check(conn):
        assert await conn.fetchval("show client_encoding") == "UTF8"
        assert await conn.fetchval("show timezone") == "UTC"

    run_check("show_setting_extended", check)


def test_schema_and_insert():
    async def check(conn):
        await make_shop(conn)
        status = await conn.execute("insert into customers (id, email, name) values ($1, $2, $3)", 4, "di@example.com", "Di")
        assert status == "INSERT 0 1"
        row = await conn.fetchrow("select id, email, name, vip from customers where id = $1", 4)
        assert tuple(row) == (4, "di@example.com", "Di", False)
        assert await conn.fetchval("select count(*) from orders") == len(ORDERS)

    run_check("schema_and_insert", check)


def test_query_join_aggregate_order_limit():
    async def check(conn):
        await make_shop(conn)
        rows = await conn.fetch(
            "select c.name, count(o.id) as n, sum(o.total) as spent, max(o.placed_on) as last"
            " from customers c join orders o on o.customer_id = c.id"
            " where o.placed_on >= $1 group by c.name order by spent desc limit $2",
            datetime.date(2024, 1, 1),
            10,
        )
        assert [tuple(r) for r in rows] == [
            ("Bob", 2, D("100.99"), datetime.date(2024, 2, 2)),
            ("Ann", 3, D("49.75"), datetime.date(2024, 3, 1)),
        ]
        assert rows[0]["spent"] == D("100.99")
        rows = await conn.fetch(
            "select c.name, count(o.id), coalesce(sum(o.total), 0) from customers c"
            " left join orders o on o.customer_id = c.id group by c.id, c.name order by c.id"
        )
        assert [tuple(r) for r in rows] == [("Ann", 3, D("49.75")), ("Bob", 2, D("100.99")), ("Cy", 0, D("0"))]
        rows = await conn.fetch("select id, total from orders order by total desc, id limit $1 offset $2", 2, 1)
        assert [tuple(r) for r in rows] == [(104, D("30.00")), (100, D("12.50"))]
        avg = await conn.fetchval("select round(avg(total), 2) from orders where customer_id = $1", 1)
        assert avg == D("16.58")
        names = await conn.fetch(
            "select name from customers where id in (select customer_id from orders where total > $1) order by name",
            D("20"),
        )
        assert [r["name"] for r in names] == ["Ann", "Bob"]

    run_check("query_join_aggregate_order_limit", check)


def test_update_delete():
    async def check(conn):
        await make_shop(conn)
        status = await conn.execute("update orders set total = total + $1 where customer_id = $2", D("1.00"), 1)
        assert status == "UPDATE 3"
        assert await conn.fetchval("select sum(total) from orders where customer_id = $1", 1) == D("52.75")
        deleted = await conn.fetch("delete from orders where note is null and total < $1 returning id", D("20"))
        assert [r["id"] for r in deleted] == [100]
        status = await conn.execute("delete from customers where id = $1", 3)
        assert status == "DELETE 1"
        assert await conn.fetchval("select count(*) from orders") == 4
        assert await conn.fetchval("select count(*) from customers") == 2

    run_check("update_delete", check)


def test_transactions_commit_rollback():
    async def check(conn):
        await make_shop(conn)
        other = await connect()
        try:
            async with conn.transaction():
                await conn.execute("insert into customers (id, email, name) values ($1, $2, $3)", 10, "t@example.com", "T")
                # Not visible to another session before commit.
                assert await other.fetchval("select count(*) from customers where id = 10") == 0
            assert await other.fetchval("select count(*) from customers where id = 10") == 1

            with pytest.raises(RuntimeError):
                async with conn.transaction():
                    await conn.execute("insert into customers (id, email, name) values ($1, $2, $3)", 11, "u@example.com", "U")
                    await conn.execute("update orders set total = 0")
                    raise RuntimeError("abort")
            assert await conn.fetchval("select count(*) from customers where id = 11") == 0
            assert await conn.fetchval("select sum(total) from orders") == D("150.74")

            # An error aborts the transaction until it is rolled back.
            tr = conn.transaction()
            await tr.start()
            with pytest.raises(asyncpg.DivisionByZeroError):
                await conn.execute("select 1 / 0")
            with pytest.raises(asyncpg.InFailedSQLTransactionError) as e:
                await conn.fetchval("select 1")
            assert e.value.sqlstate == "25P02"
            await tr.rollback()
            assert await conn.fetchval("select 1") == 1
        finally:
            await other.close()

    run_check("transactions_commit_rollback", check)


def test_savepoints():
    async def check(conn):
        await make_shop(conn)
        async with conn.transaction():
            await conn.execute("insert into customers (id, email, name) values (20, 'sp1@example.com', 'Sp1')")
            # A nested transaction block is a savepoint in asyncpg.
            with pytest.raises(asyncpg.UniqueViolationError):
                async with conn.transaction():
                    await conn.execute("insert into customers (id, email, name) values (21, 'sp2@example.com', 'Sp2')")
                    await conn.execute("insert into customers (id, email, name) values (22, 'ann@example.com', 'Dup')")
            await conn.execute("insert into customers (id, email, name) values (23, 'sp3@example.com', 'Sp3')")
            async with conn.transaction():
                await conn.execute("update customers set vip = true where id = 23")
            # Explicit SQL savepoints too.
            await conn.execute("savepoint before_delete")
            await conn.execute("delete from customers where id = 20")
            await conn.execute("rollback to savepoint before_delete")
            await conn.execute("release savepoint before_delete")
        rows = await conn.fetch("select id, vip from customers where id >= 20 order by id")
        assert [tuple(r) for r in rows] == [(20, False), (23, True)]

    run_check("savepoints", check)


def test_unique_violation_sqlstate():
    async def check(conn):
        await make_shop(conn)
        with pytest.raises(asyncpg.PostgresError) as e:
            await conn.execute("insert into customers (id, email, name) values ($1, $2, $3)", 1, "new@example.com", "New")
        assert e.value.sqlstate == "23505"
        assert isinstance(e.value, asyncpg.UniqueViolationError)
        assert e.value.constraint_name == "customers_pkey"
        assert e.value.detail == "Key (id)=(1) already exists."
        with pytest.raises(asyncpg.UniqueViolationError) as e:
            await conn.execute("insert into customers (id, email, name) values ($1, $2, $3)", 9, "bob@example.com", "Bob2")
        assert e.value.sqlstate == "23505"
        assert e.value.constraint_name == "customers_email_key"
        assert e.value.message == 'duplicate key value violates unique constraint "customers_email_key"'
        # The connection is still usable and nothing was inserted.
        assert await conn.fetchval("select count(*) from customers") == 3

    run_check("unique_violation_sqlstate", check)


def test_error_fields_schema_table():
    async def check(conn):
        await make_shop(conn)
        with pytest.raises(asyncpg.UniqueViolationError) as e:
            await conn.execute("insert into customers (id, email, name) values (1, 'x@example.com', 'X')")
        assert (e.value.schema_name, e.value.table_name) == ("public", "customers")
        with pytest.raises(asyncpg.NotNullViolationError) as e:
            await conn.execute("insert into customers (id, email, name) values (7, $1, null)", "n@example.com")
        assert e.value.sqlstate == "23502"
        assert (e.value.schema_name, e.value.table_name, e.value.column_name) == ("public", "customers", "name")

    run_check("error_fields_schema_table", check)


def test_nulls():
    async def check(conn):
        await make_shop(conn)
        await conn.execute(
            "insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)",
            105,
            3,
            D("5"),
            None,
            datetime.date(2024, 4, 1),
        )
        row = await conn.fetchrow("select note, note is null, coalesce(note, $1) from orders where id = $2", "none", 105)
        assert tuple(row) == (None, True, "none")
        assert await conn.fetchval("select count(*) from orders where note is null") == 4
        row = await conn.fetchrow("select count(note), count(*), sum(total) filter (where false) from orders")
        assert tuple(row) == (2, 6, None)
        assert await conn.fetchval("select $1::int4 is null", None) is True
        assert await conn.fetchval("select max(total) from orders where id < 0") is None
        # NULLs sort last in ascending order.
        notes = await conn.fetch("select note from orders order by note, id")
        assert [r["note"] for r in notes] == ["coupon", "gift wrap", None, None, None, None]
        # A NULL in a unique column is not a duplicate.
        await conn.execute("drop table if exists tags")
        await conn.execute("create table tags (name text unique)")
        await conn.executemany("insert into tags values ($1)", [(None,), (None,), ("a",)])
        assert await conn.fetchval("select count(*) from tags") == 3

    run_check("nulls", check)


def test_foreign_key():
    async def check(conn):
        await make_shop(conn)
        await conn.execute("drop table if exists reviews")
        await conn.execute(
            "create table reviews (id int4 primary key,"
            " customer_id int4 not null references customers (id) on delete cascade, stars int2 not null)"
        )
        await conn.execute("insert into reviews values (1, 1, 5), (2, 2, 3), (3, 2, 4)")
        with pytest.raises(asyncpg.ForeignKeyViolationError) as e:
            await conn.execute("insert into reviews values ($1, $2, $3)", 4, 99, 1)
        assert (e.value.sqlstate, e.value.constraint_name) == ("23503", "reviews_customer_id_fkey")
        await conn.execute("delete from customers where id = $1", 2)
        assert [r["id"] for r in await conn.fetch("select id from reviews order by id")] == [1]
        await conn.execute("drop table reviews")

    run_check("foreign_key", check)


def test_serial_id_returning():
    async def check(conn):
        await conn.execute("drop table if exists notes")
        await conn.execute("create table notes (id serial primary key, body text not null)")
        ids = [await conn.fetchval("insert into notes (body) values ($1) returning id", b) for b in ("first", "second")]
        assert ids == [1, 2]

    run_check("serial_id_returning", check)


# ---------------------------------------------------------------------------
# Every core type: binary format (asyncpg's own codecs) and text format
# (set_type_codec(..., format="text") with the PostgreSQL text as the value).
# Arrays are lists; asyncpg knows only text[] and oid[] statically, so the
# others are introspected from pg_type on first use. In text format an
# array's element codec decides: a text element codec makes asyncpg send and
# read the array in text format, with the element texts as strings.


class Becomes:
    """A value that comes back as another: float4 rounding, jsonb
    normalization."""

    def __init__(self, sent, expected):
        self.sent, self.expected = sent, expected


def f4(x):
    """x rounded to float4, as asyncpg decodes a float4."""
    return struct.unpack("f", struct.pack("f", x))[0]


def tz(hours, minutes=0):
    return datetime.timezone(datetime.timedelta(hours=hours, minutes=minutes))


# type -> (column type, [python values]); each value must come back equal
# (a Becomes as its expected value).
BINARY_CASES = {
    "bool": ("bool", [True, False]),
    "int2": ("int2", [-32768, 0, 32767]),
    "int4": ("int4", [-2147483648, 42, 2147483647]),
    "int8": ("int8", [-9223372036854775808, 0, 9223372036854775807]),
    "float8": ("float8", [0.1, -2.5e100, 3.141592653589793, 0.0, float("inf")]),
    "numeric": (
        "numeric",
        [D("12345.678"), D("-0.000123"), D("1.500"), D("0"), D("123456789012345678901234567890.12345"), D("1E+20")],
    ),
    "text": ("text", ["héllo ☃", "", "quote ' backslash \\ newline\n tab\t"]),
    "varchar": ("varchar(10)", ["var", "ten chars!"]),
    "char": ("char(5)", ["abcde", "ab   "]),
    "timestamp": (
        "timestamp",
        [
            datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
            datetime.datetime(1999, 12, 31, 23, 59, 59, 999999),
            datetime.datetime(1970, 1, 1),
        ],
    ),
    "timestamptz": (
        "timestamptz",
        [
            datetime.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC),
            datetime.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC),
        ],
    ),
    "date": ("date", [datetime.date(2000, 2, 29), datetime.date(1969, 7, 20), datetime.date(2099, 12, 31)]),
    "bytea": ("bytea", [b"\x00\x01\xff", b"", bytes(range(256))]),
    "float4": (
        "float4",
        [Becomes(0.1, f4(0.1)), Becomes(-2.5e30, f4(-2.5e30)), f4(3.4028234663852886e38), 0.0, float("inf"), float("nan")],
    ),
    "time": ("time", [datetime.time(4, 5, 6, 789000), datetime.time(23, 59, 59, 999999), datetime.time(0, 0)]),
    "timetz": (
        "timetz",
        [datetime.time(4, 5, 6, tzinfo=tz(2)), datetime.time(23, 59, 59, 999999, tzinfo=tz(-5, -30)), datetime.time(0, 0, tzinfo=UTC)],
    ),
    # asyncpg sends a timedelta as days and microseconds (no months) and reads
    # months as 30 days.
    "interval": (
        "interval",
        [
            datetime.timedelta(days=428, hours=4, minutes=5, seconds=6.5),
            datetime.timedelta(days=-1, hours=2),
            datetime.timedelta(0),
            datetime.timedelta(microseconds=-1),
        ],
    ),
    "uuid": ("uuid", [UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), UUID("00000000-0000-0000-0000-000000000000")]),
    # asyncpg reads inet as an address or an interface, cidr as a network.
    "inet": (
        "inet",
        [ipaddress.ip_address("192.168.1.5"), ipaddress.ip_interface("10.1.2.3/8"), ipaddress.ip_interface("2001:db8::1/64")],
    ),
    "cidr": ("cidr", [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::/0")]),
    "inet_array": ("inet[]", [[ipaddress.ip_address("::1"), None, ipaddress.ip_interface("1.2.3.4/16")]]),
    # Ranges (asyncpg finds the subtype in pg_range); a discrete range comes
    # back canonical, [lower,upper).
    "int4range": (
        "int4range",
        [
            asyncpg.Range(1, 5),
            Becomes(asyncpg.Range(1, 5, lower_inc=False, upper_inc=True), asyncpg.Range(2, 6)),
            asyncpg.Range(None, 3),
            asyncpg.Range(empty=True),
        ],
    ),
    "numrange": ("numrange", [asyncpg.Range(D("1.5"), D("2.50"), upper_inc=True), asyncpg.Range(D("-1"), None)]),
    "tstzrange": (
        "tstzrange",
        [asyncpg.Range(datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), None)],
    ),
    "daterange": (
        "daterange",
        [Becomes(asyncpg.Range(datetime.date(2024, 1, 1), datetime.date(2024, 1, 3), upper_inc=True), asyncpg.Range(datetime.date(2024, 1, 1), datetime.date(2024, 1, 4)))],
    ),
    "int8range_array": ("int8range[]", [[asyncpg.Range(1, 2), None, asyncpg.Range(empty=True)]]),
    # json and jsonb go as text (jsonb's binary format is a version byte and
    # the text); json keeps its text, jsonb normalizes it.
    "json": ("json", ['{"b": 1,  "a": [1, 2]}', '"héllo ☃"', "null"]),
    "jsonb": (
        "jsonb",
        [
            Becomes('{"b":1,"a":[1,2.50]}', '{"a": [1, 2.50], "b": 1}'),
            Becomes('[1e2, "\\u00e9", {"a": 1, "a": 2}, null, true]', '[100, "é", {"a": 2}, null, true]'),
            "{}",
        ],
    ),
    "int4_array": ("int4[]", [[1, None, 3], [], [-2147483648, 2147483647]]),
    "text_array": (
        "text[]",
        [['a "quoted" b', "with, comma", None, "héllo ☃", "", "NULL", "back\\slash", "{braces}", " spaced "], []],
    ),
    "float8_array": ("float8[]", [[0.1, -2.5e100, float("inf"), float("-inf"), float("nan"), None]]),
    "numeric_array": ("numeric[]", [[D("1.500"), D("-0.000123"), D("123456789012345678901234567890.12345"), None, D("1E+20")]]),
    "bool_array": ("bool[]", [[True, False, None]]),
    "date_array": ("date[]", [[datetime.date(2000, 2, 29), None, datetime.date(1969, 7, 20)]]),
    "timestamptz_array": (
        "timestamptz[]",
        [[datetime.datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC), datetime.datetime(1969, 7, 20, 20, 17, 40, tzinfo=UTC), None]],
    ),
    "uuid_array": ("uuid[]", [[UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), None]]),
    "jsonb_array": (
        "jsonb[]",
        [Becomes(['{"b":1,"a":[1,2.50]}', None, '"x"'], ['{"a": [1, 2.50], "b": 1}', None, '"x"'])],
    ),
    "int4_array_2d": ("int4[][]", [[[1, 2, 3], [4, None, 6]], [[1], [2]]]),
}

# type -> (column type, pg_catalog type name, [(text sent, text expected back)]).
TEXT_CASES = {
    "bool": ("bool", "bool", [("t", "t"), ("false", "f")]),
    "int2": ("int2", "int2", [("-32768", "-32768"), ("32767", "32767")]),
    "int4": ("int4", "int4", [("-2147483648", "-2147483648"), (" 42", "42")]),
    "int8": ("int8", "int8", [("-9223372036854775808", "-9223372036854775808"), ("9223372036854775807", "9223372036854775807")]),
    "float8": ("float8", "float8", [("0.1", "0.1"), ("-2.5e100", "-2.5e+100"), ("3.141592653589793", "3.141592653589793"), ("Infinity", "Infinity")]),
    "numeric": (
        "numeric",
        "numeric",
        [("12345.678", "12345.678"), ("-0.000123", "-0.000123"), ("1.500", "1.500"), ("1e20", "100000000000000000000")],
    ),
    "text": ("text", "text", [("héllo ☃", "héllo ☃"), ("", "")]),
    "varchar": ("varchar(10)", "varchar", [("var", "var"), ("ten chars!", "ten chars!")]),
    "char": ("char(5)", "bpchar", [("ab", "ab   "), ("abcde", "abcde")]),
    "timestamp": (
        "timestamp",
        "timestamp",
        [("2024-01-02 03:04:05.123456", "2024-01-02 03:04:05.123456"), ("1999-12-31T23:59:59", "1999-12-31 23:59:59")],
    ),
    "timestamptz": (
        "timestamptz",
        "timestamptz",
        [("2024-01-02 05:04:05.5+02", "2024-01-02 03:04:05.5+00"), ("1969-07-20 20:17:40Z", "1969-07-20 20:17:40+00")],
    ),
    "date": ("date", "date", [("2000-02-29", "2000-02-29"), ("1969-07-20", "1969-07-20")]),
    "bytea": ("bytea", "bytea", [("\\x0001ff", "\\x0001ff"), ("\\x", "\\x")]),
    "float4": (
        "float4",
        "float4",
        [("0.1", "0.1"), ("-2.5e30", "-2.5e+30"), ("3.4028235e38", "3.4028235e+38"), ("Infinity", "Infinity"), ("NaN", "NaN")],
    ),
    "time": ("time", "time", [("04:05:06.789", "04:05:06.789"), ("23:59:59.999999", "23:59:59.999999"), ("4:05 PM", "16:05:00")]),
    "timetz": (
        "timetz",
        "timetz",
        [("04:05:06+02", "04:05:06+02"), ("23:59:59.999999-05:30", "23:59:59.999999-05:30"), ("00:00:00Z", "00:00:00+00")],
    ),
    "interval": (
        "interval",
        "interval",
        [
            ("1 year 2 mons 3 days 04:05:06.5", "1 year 2 mons 3 days 04:05:06.5"),
            ("-1 days +02:00:00", "-1 days +02:00:00"),
            ("00:00:00", "00:00:00"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("-00:00:00.000001", "-00:00:00.000001"),
        ],
    ),
    "uuid": (
        "uuid",
        "uuid",
        [("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), ("{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")],
    ),
    "json": ("json", "json", [('{"b": 1,  "a": [1, 2]}', '{"b": 1,  "a": [1, 2]}'), ('[1e2, "\\u00e9"]', '[1e2, "\\u00e9"]')]),
    "jsonb": (
        "jsonb",
        "jsonb",
        [('{"b":1,"a":[1,2.50]}', '{"a": [1, 2.50], "b": 1}'), ('[1e2, "\\u00e9", {"a": 1, "a": 2}, null]', '[100, "é", {"a": 2}, null]')],
    ),
    # Arrays in text format: the element type's text codec (strings in, the
    # element texts out; asyncpg quotes and parses the array literal).
    "int4_array": ("int4[]", "int4", [(["1", None, " 3"], ["1", None, "3"]), ([], [])]),
    "text_array": (
        "text[]",
        "text",
        [
            (
                ['a "quoted" b', "with, comma", None, "héllo ☃", "", "NULL", "back\\slash", "{braces}", " spaced "],
                ['a "quoted" b', "with, comma", None, "héllo ☃", "", "NULL", "back\\slash", "{braces}", " spaced "],
            ),
        ],
    ),
    "float8_array": (
        "float8[]",
        "float8",
        [(["0.1", "-2.5e100", "Infinity", "NaN", None], ["0.1", "-2.5e+100", "Infinity", "NaN", None])],
    ),
    "numeric_array": ("numeric[]", "numeric", [(["1.500", "-0.000123", "1e20", None], ["1.500", "-0.000123", "100000000000000000000", None])]),
    "bool_array": ("bool[]", "bool", [(["t", "false", None], ["t", "f", None])]),
    "date_array": ("date[]", "date", [(["2000-02-29", None, "1969-07-20"], ["2000-02-29", None, "1969-07-20"])]),
    "timestamptz_array": (
        "timestamptz[]",
        "timestamptz",
        [(["2024-01-02 05:04:05.5+02", "1969-07-20 20:17:40Z"], ["2024-01-02 03:04:05.5+00", "1969-07-20 20:17:40+00"])],
    ),
    "uuid_array": ("uuid[]", "uuid", [(["A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", None], ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", None])]),
    "jsonb_array": ("jsonb[]", "jsonb", [(['{"b":1,"a":[1,2.50]}', None, "[1, 2]"], ['{"a": [1, 2.50], "b": 1}', None, "[1, 2]"])]),
    "int4_array_2d": ("int4[][]", "int4", [([["1", "2"], ["3", None]], [["1", "2"], ["3", None]])]),
}


def same(got, expected):
    """Equal and of the same type, NaN equal to NaN, lists element by element."""
    if isinstance(expected, list):
        return type(got) is list and len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    if isinstance(expected, float) and math.isnan(expected):
        return type(got) is float and math.isnan(got)
    return got == expected and type(got) is type(expected)


async def roundtrip(conn, coltype, pairs):
    """Each (sent, expected) pair through a parameter into a table column and
    back, through `select $1::type`, and as NULL."""
    await conn.execute("drop table if exists typed")
    await conn.execute(f"create table typed (id int4 primary key, v {coltype})")
    for i, (sent, expected) in enumerate(pairs):
        await conn.execute("insert into typed (id, v) values ($1, $2)", i, sent)
        got = await conn.fetchval("select v from typed where id = $1", i)
        assert same(got, expected), (coltype, sent, got)
        got = await conn.fetchval(f"select $1::{coltype}", sent)
        assert same(got, expected), (coltype, sent, got)
    await conn.execute("insert into typed (id, v) values ($1, $2)", -1, None)
    assert await conn.fetchval("select v from typed where id = -1") is None
    assert await conn.fetchval(f"select case when $1::{coltype} is null then 'null' end", None) == "null"


@pytest.mark.parametrize("typ", list(BINARY_CASES))
def test_roundtrip_binary(typ):
    coltype, values = BINARY_CASES[typ]

    async def check(conn):
        await roundtrip(conn, coltype, [(v.sent, v.expected) if isinstance(v, Becomes) else (v, v) for v in values])

    run_check(f"roundtrip_binary_{typ}", check)


@pytest.mark.parametrize("typ", list(TEXT_CASES))
def test_roundtrip_text(typ):
    coltype, pgname, pairs = TEXT_CASES[typ]

    async def check(conn):
        await conn.set_type_codec(pgname, schema="pg_catalog", encoder=str, decoder=str, format="text")
        await roundtrip(conn, coltype, pairs)

    run_check(f"roundtrip_text_{typ}", check)


def test_numeric_typmod_rounds():
    async def check(conn):
        got = await conn.fetchval("select $1::numeric(12,3)", D("12345.6785"))
        assert got == D("12345.679") and str(got) == "12345.679"
        with pytest.raises(asyncpg.NumericValueOutOfRangeError):
            await conn.fetchval("select $1::numeric(4,2)", D("123.4"))

    run_check("numeric_typmod_rounds", check)


def test_prepared_statement_and_cursor():
    async def check(conn):
        await make_shop(conn)
        stmt = await conn.prepare("select id, total from orders where customer_id = $1 order by id")
        assert [a.name for a in stmt.get_attributes()] == ["id", "total"]
        assert [t.name for t in stmt.get_parameters()] == ["int4"]
        assert [tuple(r) for r in await stmt.fetch(2)] == [(102, D("100.00")), (103, D("0.99"))]
        assert [r["id"] for r in await stmt.fetch(1)] == [100, 101, 104]
        # A server-side cursor (portal) fetched in small batches.
        async with conn.transaction():
            ids = [r["id"] async for r in conn.cursor("select id from orders order by id", prefetch=2)]
        assert ids == [100, 101, 102, 103, 104]

    run_check("prepared_statement_and_cursor", check)


def test_cursor_moves_forward():
    # A non-prefetching cursor is a portal bound with the extended protocol;
    # forward(n) sends the SQL `MOVE FORWARD n "<portal>"`, which must reach
    # that portal (protocol portals and SQL cursors are one namespace).
    async def check(conn):
        await make_shop(conn)
        async with conn.transaction():
            cur = await conn.cursor("select id from orders order by id")
            assert [r["id"] for r in await cur.fetch(2)] == [100, 101]
            assert await cur.forward(1) == 1
            assert (await cur.fetchrow())["id"] == 103
            assert await cur.forward(10) == 1
            assert await cur.fetch(5) == []
            again = await conn.cursor("select id from orders order by id")
            assert await again.forward(4) == 4
            assert [r["id"] for r in await again.fetch(5)] == [104]

    run_check("cursor_moves_forward", check)


def test_type_introspection():
    async def check(conn):
        # set_type_codec looks jsonb up in pg_type; int4[], uuid[] and
        # jsonb[] are not among asyncpg's static codecs, so the first query
        # that has them runs asyncpg's pg_type introspection query.
        await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
        u = UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        row = await conn.fetchrow(
            "select $1::int4[] as ints, $2::uuid[] as uuids, $3::jsonb as doc, $4::jsonb[] as docs",
            [1, None, 3],
            [u, None],
            {"b": [1, 2.5], "a": None},
            [{"x": "é"}, None],
        )
        assert tuple(row) == ([1, None, 3], [u, None], {"a": None, "b": [1, 2.5]}, [{"x": "é"}, None])
        stmt = await conn.prepare("select $1::numeric[] as n, array[1.5::float4, null] as f, '{}'::jsonb as j")
        assert [(t.name, t.kind, t.schema) for t in stmt.get_parameters()] == [("numeric[]", "array", "pg_catalog")]
        assert [(a.name, a.type.name) for a in stmt.get_attributes()] == [("n", "numeric[]"), ("f", "float4[]"), ("j", "jsonb")]
        assert tuple(await stmt.fetchrow([D("1.50"), None])) == ([D("1.50"), None], [1.5, None], {})

    run_check("type_introspection", check)


def test_records_binary():
    async def check(conn):
        # asyncpg reads record (2249) and record[] in binary: each field
        # carries its own type OID (record_send).
        await make_shop(conn)
        row = await conn.fetchrow(
            "select row(1, 'a b', null::int4) as r, array[row(1, 2.5::float8)] as arr,"
            " (row(3, 4)).f2 as f from customers where id = 1"
        )
        assert (row["r"], list(row["arr"]), row["f"]) == ((1, "a b", None), [(1, 2.5)], 4)
        rows = await conn.fetch("select c from customers c where (c.id, c.name) > (1, 'Zed') order by c.id")
        assert [tuple(r["c"]) for r in rows] == [(2, "bob@example.com", "Bob", False), (3, "cy@example.com", "Cy", False)]
        each = await conn.fetch("select json_each('{\"a\": 1}'::json) as e")
        assert [tuple(r["e"]) for r in each] == [("a", "1")]

    run_check("records_binary", check)


def test_enum_types():
    async def check(conn):
        # An enum is not among asyncpg's static codecs: the first statement
        # that has one runs the pg_type introspection query, which reads
        # typtype 'e' and decodes the labels as text, in binary format too.
        await conn.execute("drop table if exists moods")
        await conn.execute("drop type if exists mood")
        await conn.execute("create type mood as enum ('sad', 'ok', 'happy')")
        await conn.execute("create table moods (id int primary key, m mood not null, past mood[])")
        await conn.executemany(
            "insert into moods values ($1, $2, $3)",
            [(1, "happy", ["sad", "ok"]), (2, "sad", None), (3, "ok", [])],
        )
        rows = await conn.fetch("select id, m, past from moods order by m")
        assert [tuple(r) for r in rows] == [(2, "sad", None), (3, "ok", []), (1, "happy", ["sad", "ok"])]
        stmt = await conn.prepare("select m from moods where m > $1 order by id")
        (param,) = stmt.get_parameters()
        assert (param.name, param.kind, param.schema) == ("mood", "scalar", "public")
        assert [r["m"] for r in await stmt.fetch("sad")] == ["happy", "ok"]
        with pytest.raises(asyncpg.InvalidTextRepresentationError) as e:
            await conn.execute("insert into moods values ($1, $2)", 4, "glad")
        assert 'invalid input value for enum mood: "glad"' in str(e.value)
        await conn.execute("drop table moods")
        await conn.execute("drop type mood")

    run_check("enum_types", check)


def test_composite_types():
    async def check(conn):
        # A composite type is introspected through pg_type.typrelid and
        # pg_attribute (asyncpg's composite codec), and sent and read in
        # binary with its own OID, nested and in arrays.
        await conn.execute("drop table if exists ap_people")
        await conn.execute("drop type if exists ap_person")
        await conn.execute("drop type if exists ap_addr")
        await conn.execute("create type ap_addr as (street text, zip int)")
        await conn.execute("create type ap_person as (name text, home ap_addr, tags int[])")
        await conn.execute("create table ap_people (id int primary key, p ap_person, past ap_addr[])")
        await conn.execute(
            "insert into ap_people values ($1, $2, $3)", 1, ("ann", ("main", 5), [1, 2]), [("elm", None), None]
        )
        row = await conn.fetchrow("select p, past, (p).home, (p).home.zip from ap_people")
        assert row["p"] == ("ann", ("main", 5), [1, 2]) and row["p"]["home"]["street"] == "main"
        assert list(row["past"]) == [("elm", None), None]
        assert (row["home"], row["zip"]) == (("main", 5), 5)
        stmt = await conn.prepare("select $1::ap_person")
        (param,) = stmt.get_parameters()
        assert (param.name, param.kind, param.schema) == ("ap_person", "composite", "public")
        assert await stmt.fetchval(("bob", None, [])) == ("bob", None, [])
        await conn.execute("drop table ap_people")
        await conn.execute("drop type ap_person")
        await conn.execute("drop type ap_addr")

    run_check("composite_types", check)


def test_listen_notify():
    async def check(conn):
        # add_listener sends LISTEN and calls back for each notification,
        # which arrives only after the sender commits.
        heard = []
        got_two = asyncio.Event()

        def on_note(_conn, pid, channel, payload):
            heard.append((channel, payload, pid))
            if len(heard) == 2:
                got_two.set()

        await conn.add_listener("new_jobs", on_note)
        sender = await connect()
        try:
            sender_pid = await sender.fetchval("select pg_backend_pid()")
            async with sender.transaction():
                await sender.execute("notify new_jobs, 'job 1'")
                await sender.execute("select pg_notify($1, $2)", "new_jobs", "job 2")
                await asyncio.sleep(0.2)
                assert heard == []
            await asyncio.wait_for(got_two.wait(), 30)
            assert heard == [("new_jobs", "job 1", sender_pid), ("new_jobs", "job 2", sender_pid)]
        finally:
            await sender.close()
        await conn.remove_listener("new_jobs", on_note)
        assert await conn.fetchval("select count(*) from pg_listening_channels()") == 0

    run_check("listen_notify", check)
