"""psycopg 3 against Strata: extended protocol, parameters, text and binary
formats for every core type, transactions and SQLSTATE-based errors."""

import datetime
import decimal
import os

import psycopg
import pytest
from psycopg import errors

PORT = int(os.environ["STRATA_PORT"])


def connect(**kw):
    return psycopg.connect(host="127.0.0.1", port=PORT, user="postgres", dbname="postgres", **kw)


@pytest.fixture()
def conn():
    with connect(autocommit=True) as c:
        yield c


def test_roundtrip_types_text_and_binary(conn):
    conn.execute("drop table if exists typed")
    conn.execute(
        "create table typed (id int8 primary key, b bool, s int2, i int4, f float8, n numeric(12,3),"
        " t text, v varchar(10), c char(5), ts timestamp, tz timestamptz, d date, by bytea)"
    )
    row = (
        1,
        True,
        -7,
        123456,
        1.5,
        decimal.Decimal("12345.678"),
        "héllo",
        "var",
        "ab",
        datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
        datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
        datetime.date(2023, 12, 31),
        b"\x00\x01\xff",
    )
    conn.execute("insert into typed values (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", row)
    conn.execute("insert into typed (id) values (%b)", (2,))
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        got = cur.execute("select * from typed where id = %s", (1,)).fetchone()
        assert got[:8] == row[:8]
        assert got[8] == "ab   "
        assert got[9:] == row[9:]
        nulls = cur.execute("select * from typed where id = %s", (2,)).fetchone()
        assert nulls == (2,) + (None,) * 12


def test_binary_parameters_each_type(conn):
    """Every core type sent as a binary parameter (%b) and read back in both
    formats, typed by an explicit cast so the server parses the binary value."""
    cases = [
        ("bool", True),
        ("int2", -32768),
        ("int4", 2147483647),
        ("int8", -9223372036854775808),
        ("float8", -0.125),
        ("numeric", decimal.Decimal("-98765.4321")),
        ("text", "naïve ☃"),
        ("varchar(8)", "short"),
        ("timestamp", datetime.datetime(1999, 12, 31, 23, 59, 59, 999999)),
        ("timestamptz", datetime.datetime(2000, 2, 29, 12, 0, tzinfo=datetime.timezone.utc)),
        ("date", datetime.date(1970, 1, 1)),
        ("bytea", b"\x00binary\xff"),
    ]
    for binary in (False, True):
        cur = conn.cursor(binary=binary)
        for typ, value in cases:
            got = cur.execute(f"select %b::{typ}, %t::{typ}, %b::{typ} is null", (value, value, None)).fetchone()
            assert got == (value, value, True), (typ, binary, got)
        got = cur.execute("select %b::char(4), %b::char(4) = 'ab'", ("ab", "ab")).fetchone()
        assert got == ("ab  ", True), (binary, got)


def test_transactions_and_errors():
    with connect() as c:
        c.execute("drop table if exists acct")
        c.execute("create table acct (id int primary key, bal int not null)")
        c.commit()
        with c.transaction():
            c.execute("insert into acct values (%s, %s)", (1, 100))
        with pytest.raises(errors.UniqueViolation) as e:
            c.execute("insert into acct values (%s, %s)", (1, 5))
        assert e.value.sqlstate == "23505"
        c.rollback()
        c.execute("insert into acct values (2, 50)")
        c.rollback()
        assert c.execute("select count(*) from acct").fetchone()[0] == 1
        with pytest.raises(errors.DivisionByZero):
            c.execute("select 1/0")
        c.rollback()
        with pytest.raises(errors.UndefinedTable):
            c.execute("select * from missing_table")


def test_executemany_and_query_shapes(conn):
    conn.execute("drop table if exists people")
    conn.execute("create table people (id int primary key, name text, age int)")
    with conn.cursor() as cur:
        cur.executemany("insert into people values (%s, %s, %s)", [(i, f"p{i}", 20 + i % 7) for i in range(50)])
        rows = cur.execute("select age, count(*) from people group by age order by age limit 3").fetchall()
        assert rows == [(20, 8), (21, 7), (22, 7)]
        cur.execute("update people set age = age + %s where id < %s", (1, 10))
        assert cur.rowcount == 10
        cur.execute("delete from people where name = %s returning id", ("p3",))
        assert cur.fetchall() == [(3,)]


def test_copy(conn):
    conn.execute("drop table if exists copied")
    conn.execute("create table copied (a int, b text)")
    with conn.cursor() as cur:
        with cur.copy("copy copied (a, b) from stdin") as cp:
            for i in range(1000):
                cp.write_row((i, f"row {i}"))
        assert cur.execute("select count(*), sum(a) from copied").fetchone() == (1000, 499500)
