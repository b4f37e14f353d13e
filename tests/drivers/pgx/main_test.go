// pgx v5 against Strata or PostgreSQL: a small shop application (schema,
// parameterized DML, batches, joins and aggregates, transactions, savepoints,
// SQLSTATE errors, NULLs, COPY) and a round trip of every core type in binary
// format (pgx's default, QueryExecModeCacheStatement) and in text format
// (QueryExecModeExec, and the simple protocol).
//
// Environment: STRATA_PORT (the server on 127.0.0.1, user and database
// postgres, no password) and STRATA_TEST_TARGET (strata|postgres). Every
// expectation here was checked against PostgreSQL 15. See ../README.md for the
// known-failure convention (knownFailures below). Run: go test -v .
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Checks Strata cannot pass yet, by name: on Strata they still run, a failure
// prints "known failure: <name>: <why>" and a pass "UNEXPECTED PASS: <name>"
// (remove the entry then); on PostgreSQL they must pass. One entry per missing
// feature or bug; "bug:" marks a bug rather than a missing feature.
var knownFailures = map[string]string{
}

var onStrata = os.Getenv("STRATA_TEST_TARGET") != "postgres"

// failure is what a failed expectation panics with inside a check.
type failure struct{ msg string }

// C is what a check gets: a fresh connection and assertions that stop the
// check at the first failed expectation.
type C struct {
	ctx  context.Context
	conn *pgx.Conn
}

func (c *C) Fatalf(format string, args ...any) {
	panic(failure{fmt.Sprintf(format, args...)})
}

func (c *C) NoErr(err error, what string) {
	if err != nil {
		c.Fatalf("%s: %v", what, err)
	}
}

func (c *C) Eq(got, want any, what string) {
	if !reflect.DeepEqual(got, want) {
		c.Fatalf("%s: got %#v, want %#v", what, got, want)
	}
}

// Exec runs a statement that must succeed and returns its command tag.
func (c *C) Exec(sql string, args ...any) pgconn.CommandTag {
	tag, err := c.conn.Exec(c.ctx, sql, args...)
	c.NoErr(err, sql)
	return tag
}

// Row scans the only row of a query that must succeed.
func (c *C) Row(sql string, args []any, dest ...any) {
	c.NoErr(c.conn.QueryRow(c.ctx, sql, args...).Scan(dest...), sql)
}

// PgErr expects err to be a server error and returns it.
func (c *C) PgErr(err error, what string) *pgconn.PgError {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		c.Fatalf("%s: want a server error, got %v", what, err)
	}
	return pgErr
}

func connString() string {
	port := os.Getenv("STRATA_PORT")
	if port == "" {
		panic("STRATA_PORT must be set")
	}
	// TimeZone is fixed so that timestamptz in text format prints the same
	// everywhere; unknown keys become startup parameters.
	return fmt.Sprintf("host=127.0.0.1 port=%s user=postgres dbname=postgres sslmode=disable connect_timeout=30 TimeZone=UTC", port)
}

func connect(ctx context.Context) *pgx.Conn {
	conn, err := pgx.Connect(ctx, connString())
	if err != nil {
		panic(failure{fmt.Sprintf("connect: %v", err)})
	}
	return conn
}

// check runs fn on a fresh connection as the subtest name, with the
// known-failure convention.
func check(t *testing.T, name string, fn func(c *C)) {
	t.Run(name, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		run := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					if f, ok := r.(failure); ok {
						msg = f.msg
					} else {
						msg = fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
					}
				}
			}()
			conn := connect(ctx)
			defer conn.Close(context.Background())
			fn(&C{ctx: ctx, conn: conn})
			return ""
		}
		msg := run()
		why, known := knownFailures[name]
		switch {
		case onStrata && known && msg != "":
			fmt.Printf("known failure: %s: %s (got %s)\n", name, why, strings.Join(strings.Fields(msg), " "))
		case onStrata && known:
			fmt.Printf("UNEXPECTED PASS: %s\n", name)
		case msg != "":
			t.Fatal(msg)
		}
	})
}

// ---------------------------------------------------------------------------
// The shop: customers and their orders.

type order struct {
	id         int64
	customerID int32
	total      string
	note       *string
	placedOn   string
}

func str(s string) *string { return &s }

var customers = [][]any{
	{int32(1), "ann@example.com", "Ann", true},
	{int32(2), "bob@example.com", "Bob", false},
	{int32(3), "cy@example.com", "Cy", false},
}

var orders = []order{
	{100, 1, "12.50", nil, "2024-01-05"},
	{101, 1, "7.25", str("gift wrap"), "2024-01-06"},
	{102, 2, "100.00", nil, "2024-02-01"},
	{103, 2, "0.99", str("coupon"), "2024-02-02"},
	{104, 1, "30.00", nil, "2024-03-01"},
}

func date(s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return d
}

func num(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

// numText prints a numeric as PostgreSQL would (scale kept).
func numText(c *C, n pgtype.Numeric) string {
	v, err := n.Value()
	c.NoErr(err, "numeric value")
	if v == nil {
		return "NULL"
	}
	return v.(string)
}

// makeShop creates the shop's tables afresh and fills them through a batch
// of parameterized inserts.
func makeShop(c *C) {
	c.Exec("drop table if exists orders")
	c.Exec("drop table if exists customers")
	c.Exec("create table customers (id int4 primary key, email varchar(100) not null unique," +
		" name text not null, vip bool not null default false)")
	c.Exec("create table orders (id int8 primary key, customer_id int4 not null," +
		" total numeric(10,2) not null, note text, placed_on date not null)")
	c.Exec("create index orders_by_customer on orders (customer_id)")
	batch := &pgx.Batch{}
	for _, cu := range customers {
		batch.Queue("insert into customers (id, email, name, vip) values ($1, $2, $3, $4)", cu...)
	}
	for _, o := range orders {
		batch.Queue("insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)",
			o.id, o.customerID, num(o.total), o.note, date(o.placedOn))
	}
	c.NoErr(c.conn.SendBatch(c.ctx, batch).Close(), "insert batch")
}

func count(c *C, sql string, args ...any) int64 {
	var n int64
	c.Row(sql, args, &n)
	return n
}

func TestShop(t *testing.T) {
	check(t, "connect_and_server_version", func(c *C) {
		var one int32
		var db string
		c.Row("select 1, current_database()", nil, &one, &db)
		c.Eq([]any{one, db}, []any{int32(1), "postgres"}, "select")
		v := c.conn.PgConn().ParameterStatus("server_version")
		if !strings.HasPrefix(v, "15") {
			c.Fatalf("server_version %q", v)
		}
		c.Eq(c.conn.PgConn().ParameterStatus("client_encoding"), "UTF8", "client_encoding")
		c.Eq(c.conn.PgConn().ParameterStatus("integer_datetimes"), "on", "integer_datetimes")
	})

	check(t, "show_setting_extended", func(c *C) {
		var tz string
		c.Row("show timezone", nil, &tz)
		c.Eq(tz, "UTC", "show timezone")
	})

	check(t, "schema_and_insert", func(c *C) {
		makeShop(c)
		tag := c.Exec("insert into customers (id, email, name) values ($1, $2, $3)", 4, "di@example.com", "Di")
		c.Eq(tag.String(), "INSERT 0 1", "tag")
		var id int32
		var email, name string
		var vip bool
		c.Row("select id, email, name, vip from customers where id = $1", []any{4}, &id, &email, &name, &vip)
		c.Eq([]any{id, email, name, vip}, []any{int32(4), "di@example.com", "Di", false}, "row")
		c.Eq(count(c, "select count(*) from orders"), int64(len(orders)), "orders")
	})

	check(t, "query_join_aggregate_order_limit", func(c *C) {
		makeShop(c)
		rows, err := c.conn.Query(c.ctx,
			"select c.name, count(o.id) as n, sum(o.total) as spent, max(o.placed_on) as last"+
				" from customers c join orders o on o.customer_id = c.id"+
				" where o.placed_on >= $1 group by c.name order by spent desc limit $2",
			date("2024-01-01"), 10)
		c.NoErr(err, "query")
		type total struct {
			Name  string
			N     int64
			Spent pgtype.Numeric
			Last  time.Time
		}
		got, err := pgx.CollectRows(rows, pgx.RowToStructByName[total])
		c.NoErr(err, "collect")
		var printed []string
		for _, r := range got {
			printed = append(printed, fmt.Sprintf("%s %d %s %s", r.Name, r.N, numText(c, r.Spent), r.Last.Format("2006-01-02")))
		}
		c.Eq(printed, []string{"Bob 2 100.99 2024-02-02", "Ann 3 49.75 2024-03-01"}, "totals")

		rows, err = c.conn.Query(c.ctx, "select c.name, count(o.id), coalesce(sum(o.total), 0)::float8 from customers c"+
			" left join orders o on o.customer_id = c.id group by c.id, c.name order by c.id")
		c.NoErr(err, "left join")
		type spent struct {
			name  string
			n     int64
			spent float64
		}
		left, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (spent, error) {
			var s spent
			err := r.Scan(&s.name, &s.n, &s.spent)
			return s, err
		})
		c.NoErr(err, "collect")
		c.Eq(left, []spent{{"Ann", 3, 49.75}, {"Bob", 2, 100.99}, {"Cy", 0, 0}}, "left join")

		rows, err = c.conn.Query(c.ctx, "select id from orders order by total desc, id limit $1 offset $2", 2, 1)
		c.NoErr(err, "limit offset")
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		c.NoErr(err, "collect")
		c.Eq(ids, []int64{104, 100}, "limit offset")

		var avg pgtype.Numeric
		c.Row("select round(avg(total), 2) from orders where customer_id = $1", []any{1}, &avg)
		c.Eq(numText(c, avg), "16.58", "avg")

		rows, err = c.conn.Query(c.ctx,
			"select name from customers where id in (select customer_id from orders where total > $1) order by name", num("20"))
		c.NoErr(err, "subquery")
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		c.NoErr(err, "collect")
		c.Eq(names, []string{"Ann", "Bob"}, "subquery")
	})

	check(t, "update_delete", func(c *C) {
		makeShop(c)
		tag := c.Exec("update orders set total = total + $1 where customer_id = $2", num("1.00"), 1)
		c.Eq([]any{tag.Update(), tag.RowsAffected()}, []any{true, int64(3)}, "update tag")
		var sum pgtype.Numeric
		c.Row("select sum(total) from orders where customer_id = $1", []any{1}, &sum)
		c.Eq(numText(c, sum), "52.75", "sum")
		rows, err := c.conn.Query(c.ctx, "delete from orders where note is null and total < $1 returning id", 20)
		c.NoErr(err, "delete returning")
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		c.NoErr(err, "collect")
		c.Eq(ids, []int64{100}, "deleted")
		c.Eq(rows.CommandTag().String(), "DELETE 1", "delete tag")
		tag = c.Exec("delete from customers where id = $1", 3)
		c.Eq(tag.RowsAffected(), int64(1), "delete customer")
		c.Eq(count(c, "select count(*) from orders"), int64(4), "orders")
		c.Eq(count(c, "select count(*) from customers"), int64(2), "customers")
	})

	check(t, "transactions_commit_rollback", func(c *C) {
		makeShop(c)
		other := connect(c.ctx)
		defer other.Close(context.Background())
		visible := func(id int) int64 {
			var n int64
			c.NoErr(other.QueryRow(c.ctx, "select count(*) from customers where id = $1", id).Scan(&n), "count")
			return n
		}
		tx, err := c.conn.Begin(c.ctx)
		c.NoErr(err, "begin")
		_, err = tx.Exec(c.ctx, "insert into customers (id, email, name) values ($1, $2, $3)", 10, "t@example.com", "T")
		c.NoErr(err, "insert")
		c.Eq(visible(10), int64(0), "before commit")
		c.NoErr(tx.Commit(c.ctx), "commit")
		c.Eq(visible(10), int64(1), "after commit")

		errAbort := errors.New("abort")
		err = pgx.BeginFunc(c.ctx, c.conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(c.ctx, "insert into customers (id, email, name) values ($1, $2, $3)", 11, "u@example.com", "U"); err != nil {
				return err
			}
			if _, err := tx.Exec(c.ctx, "update orders set total = 0"); err != nil {
				return err
			}
			return errAbort
		})
		c.Eq(err, errAbort, "BeginFunc rolls back")
		c.Eq(count(c, "select count(*) from customers where id = 11"), int64(0), "rolled back insert")
		var sum float64
		c.Row("select sum(total)::float8 from orders", nil, &sum)
		c.Eq(sum, 150.74, "rolled back update")

		// An error aborts the transaction until it is rolled back.
		tx, err = c.conn.Begin(c.ctx)
		c.NoErr(err, "begin")
		_, err = tx.Exec(c.ctx, "select 1 / 0")
		c.Eq(c.PgErr(err, "1/0").Code, "22012", "division by zero")
		var one int32
		err = tx.QueryRow(c.ctx, "select $1::int4", 1).Scan(&one)
		c.Eq(c.PgErr(err, "in failed tx").Code, "25P02", "in failed transaction")
		c.NoErr(tx.Rollback(c.ctx), "rollback")
		c.Row("select $1::int4", []any{1}, &one)
		c.Eq(one, int32(1), "after rollback")
	})

	check(t, "savepoints", func(c *C) {
		makeShop(c)
		tx, err := c.conn.Begin(c.ctx)
		c.NoErr(err, "begin")
		defer tx.Rollback(context.Background())
		exec := func(tx pgx.Tx, sql string) error {
			_, err := tx.Exec(c.ctx, sql)
			return err
		}
		c.NoErr(exec(tx, "insert into customers (id, email, name) values (20, 'sp1@example.com', 'Sp1')"), "insert 20")
		// A nested transaction is a savepoint in pgx.
		sp, err := tx.Begin(c.ctx)
		c.NoErr(err, "savepoint")
		c.NoErr(exec(sp, "insert into customers (id, email, name) values (21, 'sp2@example.com', 'Sp2')"), "insert 21")
		err = exec(sp, "insert into customers (id, email, name) values (22, 'ann@example.com', 'Dup')")
		c.Eq(c.PgErr(err, "dup").Code, "23505", "dup in savepoint")
		c.NoErr(sp.Rollback(c.ctx), "rollback to savepoint")
		c.NoErr(exec(tx, "insert into customers (id, email, name) values (23, 'sp3@example.com', 'Sp3')"), "insert 23")
		sp, err = tx.Begin(c.ctx)
		c.NoErr(err, "savepoint")
		c.NoErr(exec(sp, "update customers set vip = true where id = 23"), "update")
		c.NoErr(sp.Commit(c.ctx), "release savepoint")
		c.NoErr(exec(tx, "savepoint before_delete"), "sql savepoint")
		c.NoErr(exec(tx, "delete from customers where id = 20"), "delete")
		c.NoErr(exec(tx, "rollback to savepoint before_delete"), "rollback to")
		c.NoErr(exec(tx, "release savepoint before_delete"), "release")
		c.NoErr(tx.Commit(c.ctx), "commit")
		rows, err := c.conn.Query(c.ctx, "select id, vip from customers where id >= 20 order by id")
		c.NoErr(err, "select")
		got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var id int32
			var vip bool
			err := r.Scan(&id, &vip)
			return fmt.Sprintf("%d %v", id, vip), err
		})
		c.NoErr(err, "collect")
		c.Eq(got, []string{"20 false", "23 true"}, "rows")
	})

	check(t, "unique_violation_sqlstate", func(c *C) {
		makeShop(c)
		_, err := c.conn.Exec(c.ctx, "insert into customers (id, email, name) values ($1, $2, $3)", 1, "new@example.com", "New")
		e := c.PgErr(err, "dup id")
		c.Eq([]string{e.Code, e.ConstraintName, e.Detail, e.Severity}, []string{"23505", "customers_pkey", "Key (id)=(1) already exists.", "ERROR"}, "dup id")
		_, err = c.conn.Exec(c.ctx, "insert into customers (id, email, name) values ($1, $2, $3)", 9, "bob@example.com", "Bob2")
		e = c.PgErr(err, "dup email")
		c.Eq([]string{e.Code, e.ConstraintName, e.Message}, []string{"23505", "customers_email_key",
			`duplicate key value violates unique constraint "customers_email_key"`}, "dup email")
		c.Eq(count(c, "select count(*) from customers"), int64(3), "nothing inserted")
	})

	check(t, "error_fields_schema_table", func(c *C) {
		makeShop(c)
		_, err := c.conn.Exec(c.ctx, "insert into customers (id, email, name) values (1, 'x@example.com', 'X')")
		e := c.PgErr(err, "dup")
		c.Eq([]string{e.SchemaName, e.TableName}, []string{"public", "customers"}, "unique violation fields")
		_, err = c.conn.Exec(c.ctx, "insert into customers (id, email, name) values (7, $1, null)", "n@example.com")
		e = c.PgErr(err, "not null")
		c.Eq([]string{e.Code, e.SchemaName, e.TableName, e.ColumnName}, []string{"23502", "public", "customers", "name"}, "not null fields")
	})

	check(t, "nulls", func(c *C) {
		makeShop(c)
		c.Exec("insert into orders (id, customer_id, total, note, placed_on) values ($1, $2, $3, $4, $5)",
			105, 3, num("5"), nil, date("2024-04-01"))
		var note *string
		var missing bool
		var shown pgtype.Text
		c.Row("select note, note is null, coalesce(note, $1) from orders where id = $2", []any{"none", 105}, &note, &missing, &shown)
		c.Eq([]any{note, missing, shown}, []any{(*string)(nil), true, pgtype.Text{String: "none", Valid: true}}, "null note")
		c.Eq(count(c, "select count(*) from orders where note is null"), int64(4), "is null")
		var a, b int64
		var s pgtype.Numeric
		c.Row("select count(note), count(*), sum(total) filter (where false) from orders", nil, &a, &b, &s)
		c.Eq([]any{a, b, s.Valid}, []any{int64(2), int64(6), false}, "aggregates over nulls")
		var isNull bool
		var nullText pgtype.Text
		c.Row("select $1::int4 is null, $2::text", []any{nil, pgtype.Text{}}, &isNull, &nullText)
		c.Eq([]any{isNull, nullText.Valid}, []any{true, false}, "null parameters")
		rows, err := c.conn.Query(c.ctx, "select note from orders order by note, id")
		c.NoErr(err, "order by note")
		notes, err := pgx.CollectRows(rows, pgx.RowTo[pgtype.Text])
		c.NoErr(err, "collect")
		var printed []string
		for _, n := range notes {
			if n.Valid {
				printed = append(printed, n.String)
			} else {
				printed = append(printed, "NULL")
			}
		}
		c.Eq(printed, []string{"coupon", "gift wrap", "NULL", "NULL", "NULL", "NULL"}, "nulls last")
		c.Exec("drop table if exists tags")
		c.Exec("create table tags (name text unique)")
		for _, v := range []*string{nil, nil, str("a")} {
			c.Exec("insert into tags values ($1)", v)
		}
		c.Eq(count(c, "select count(*) from tags"), int64(3), "nulls are not duplicates")
	})

	check(t, "simple_protocol", func(c *C) {
		makeShop(c)
		simple := pgx.QueryExecModeSimpleProtocol
		tag, err := c.conn.Exec(c.ctx, "update customers set name = $1 where id = $2", simple, "Ann O'Neil", 1)
		c.NoErr(err, "update")
		c.Eq(tag.RowsAffected(), int64(1), "update")
		var name string
		var spent float64
		c.NoErr(c.conn.QueryRow(c.ctx, "select c.name, sum(o.total)::float8 from customers c join orders o on o.customer_id = c.id"+
			" where c.id = $1 group by c.name", simple, 1).Scan(&name, &spent), "query")
		c.Eq([]any{name, spent}, []any{"Ann O'Neil", 49.75}, "row")
	})

	check(t, "copy_from", func(c *C) {
		c.Exec("drop table if exists events")
		c.Exec("create table events (id int8 primary key, kind text, at timestamptz, payload bytea)")
		at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
		var src [][]any
		for i := 0; i < 1000; i++ {
			var payload []byte
			if i%10 != 0 {
				payload = []byte{byte(i), byte(i >> 8)}
			}
			src = append(src, []any{int64(i), fmt.Sprintf("kind%d", i%3), at.Add(time.Duration(i) * time.Second), payload})
		}
		n, err := c.conn.CopyFrom(c.ctx, pgx.Identifier{"events"}, []string{"id", "kind", "at", "payload"}, pgx.CopyFromRows(src))
		c.NoErr(err, "copy from")
		c.Eq(n, int64(1000), "copied")
		var sum, nulls int64
		c.Row("select sum(id), count(*) filter (where payload is null) from events", nil, &sum, &nulls)
		c.Eq([]any{sum, nulls}, []any{int64(499500), int64(100)}, "copied rows")
	})

	check(t, "foreign_key", func(c *C) {
		makeShop(c)
		c.Exec("drop table if exists reviews")
		c.Exec("create table reviews (id int4 primary key," +
			" customer_id int4 not null references customers (id) on delete cascade, stars int2 not null)")
		c.Exec("insert into reviews values (1, 1, 5), (2, 2, 3), (3, 2, 4)")
		_, err := c.conn.Exec(c.ctx, "insert into reviews values ($1, $2, $3)", 4, 99, 1)
		e := c.PgErr(err, "foreign key violation")
		c.Eq([]string{e.Code, e.ConstraintName}, []string{"23503", "reviews_customer_id_fkey"}, "foreign key violation")
		c.Exec("delete from customers where id = $1", 2)
		rows, err := c.conn.Query(c.ctx, "select id from reviews order by id")
		c.NoErr(err, "select")
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		c.NoErr(err, "collect")
		c.Eq(ids, []int32{1}, "cascaded")
		c.Exec("drop table reviews")
	})

	check(t, "serial_id_returning", func(c *C) {
		c.Exec("drop table if exists notes")
		c.Exec("create table notes (id serial primary key, body text not null)")
		var ids []int32
		for _, body := range []string{"first", "second"} {
			var id int32
			c.Row("insert into notes (body) values ($1) returning id", []any{body}, &id)
			ids = append(ids, id)
		}
		c.Eq(ids, []int32{1, 2}, "generated ids")
	})

	check(t, "temporary_table_is_session_local", func(c *C) {
		c.Exec("create temporary table scratch (id int4 primary key, v text)")
		c.Exec("insert into scratch values ($1, $2)", 1, "mine")
		other := connect(c.ctx)
		defer other.Close(context.Background())
		_, err := other.Exec(c.ctx, "select * from scratch")
		c.Eq(c.PgErr(err, "other session").Code, "42P01", "not visible to another session")
		_, err = other.Exec(c.ctx, "create temporary table scratch (x int8)")
		c.NoErr(err, "another session's own temporary table")
		var v string
		c.Row("select v from scratch", nil, &v)
		c.Eq(v, "mine", "still ours")
	})

	check(t, "numeric_typmod_rounds", func(c *C) {
		var n pgtype.Numeric
		c.Row("select $1::numeric(12,3)", []any{num("12345.6785")}, &n)
		c.Eq(numText(c, n), "12345.679", "rounded")
		err := c.conn.QueryRow(c.ctx, "select $1::numeric(4,2)", num("123.4")).Scan(&n)
		c.Eq(c.PgErr(err, "overflow").Code, "22003", "overflow")
	})

	check(t, "enum_types", func(c *C) {
		c.Exec("drop table if exists moods")
		c.Exec("drop type if exists mood")
		c.Exec("create type mood as enum ('sad', 'ok', 'happy')")
		c.Exec("create table moods (id int4 primary key, m mood not null, past mood[])")
		// LoadType reads pg_type (and pg_enum's labels for the enum); the
		// registered types then encode and decode in binary format.
		for _, name := range []string{"mood", "_mood"} {
			typ, err := c.conn.LoadType(c.ctx, name)
			c.NoErr(err, "LoadType "+name)
			c.conn.TypeMap().RegisterType(typ)
		}
		c.Exec("insert into moods values ($1, $2, $3), ($4, $5, $6)", 1, "happy", []string{"sad", "ok"}, 2, "sad", nil)
		rows, err := c.conn.Query(c.ctx, "select id, m, past from moods where m >= $1 order by m", "sad")
		c.NoErr(err, "query")
		var got []string
		for rows.Next() {
			var id int32
			var m string
			var past []string
			c.NoErr(rows.Scan(&id, &m, &past), "scan")
			got = append(got, fmt.Sprintf("%d %s %v", id, m, past))
		}
		c.NoErr(rows.Err(), "rows")
		c.Eq(got, []string{"2 sad []", "1 happy [sad ok]"}, "rows by label order")
		_, err = c.conn.Exec(c.ctx, "insert into moods values ($1, $2)", 3, "glad")
		c.Eq(c.PgErr(err, "bad label").Code, "22P02", "bad label")
		c.Exec("drop table moods")
		c.Exec("drop type mood")
	})
}

// ---------------------------------------------------------------------------
// Every core type, binary and text.

func mustTime(layout, s string) time.Time {
	t, err := time.Parse(layout, s)
	if err != nil {
		panic(err)
	}
	return t
}

const tsLayout = "2006-01-02 15:04:05.999999"

func ptr[T any](v T) *T { return &v }

// becomes is a value that comes back as another (jsonb is normalized).
type becomes struct{ sent, want any }

// rawBinary is a type pgx has no codec for (timetz): the value goes as a
// text parameter and comes back as the binary bytes PostgreSQL sends.
type rawBinary struct {
	sent string
	want []byte
}

// timetzBinary is timetz's binary format: microseconds since midnight, then
// the zone's offset in seconds west of UTC.
func timetzBinary(hour, min, sec, usec int64, eastSeconds int32) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(((hour*60+min)*60+sec)*1000000+usec))
	return binary.BigEndian.AppendUint32(b, uint32(-eastSeconds))
}

func clock(hour, min, sec, usec int64) pgtype.Time {
	return pgtype.Time{Microseconds: ((hour*60+min)*60+sec)*1000000 + usec, Valid: true}
}

func uuid(s string) pgtype.UUID {
	var u pgtype.UUID
	if err := u.Scan(s); err != nil {
		panic(err)
	}
	return u
}

func ts(s string) *time.Time { return ptr(mustTime(time.RFC3339Nano, s)) }

// binaryCases: type -> column type and Go values that must come back equal
// (compared by eq). Numeric values are compared as PostgreSQL prints them.
// Arrays are Go slices (pointer elements for NULLs, nested slices for two
// dimensions).
var binaryCases = []struct {
	name, coltype string
	values        []any
}{
	{"bool", "bool", []any{true, false}},
	{"int2", "int2", []any{int16(-32768), int16(0), int16(32767)}},
	{"int4", "int4", []any{int32(-2147483648), int32(42), int32(2147483647)}},
	{"int8", "int8", []any{int64(math.MinInt64), int64(0), int64(math.MaxInt64)}},
	{"float8", "float8", []any{0.1, -2.5e100, math.Pi, 0.0, math.Inf(1)}},
	{"numeric", "numeric", []any{num("12345.678"), num("-0.000123"), num("1.500"), num("0"),
		num("123456789012345678901234567890.12345"), pgtype.Numeric{Int: big.NewInt(1), Exp: 20, Valid: true}}},
	{"text", "text", []any{"héllo ☃", "", "quote ' backslash \\ newline\n tab\t"}},
	{"varchar", "varchar(10)", []any{"var", "ten chars!"}},
	{"char", "char(5)", []any{"abcde", "ab   "}},
	{"timestamp", "timestamp", []any{mustTime(tsLayout, "2024-01-02 03:04:05.123456"),
		mustTime(tsLayout, "1999-12-31 23:59:59.999999"), mustTime(tsLayout, "1970-01-01 00:00:00")}},
	{"timestamptz", "timestamptz", []any{time.Date(2024, 1, 2, 3, 4, 5, 500000000, time.UTC),
		time.Date(1969, 7, 20, 22, 17, 40, 0, time.FixedZone("+02", 2*3600))}},
	{"date", "date", []any{date("2000-02-29"), date("1969-07-20"), date("2099-12-31")}},
	{"bytea", "bytea", []any{[]byte{0, 1, 255}, []byte{}, func() []byte {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}()}},
	{"float4", "float4", []any{float32(0.1), float32(-2.5e30), float32(math.MaxFloat32), float32(0), float32(math.Inf(1)), float32(math.NaN())}},
	{"time", "time", []any{clock(4, 5, 6, 789000), clock(23, 59, 59, 999999), clock(0, 0, 0, 0), clock(24, 0, 0, 0)}},
	{"timetz", "timetz", []any{rawBinary{"04:05:06+02", timetzBinary(4, 5, 6, 0, 7200)},
		rawBinary{"23:59:59.999999-05:30", timetzBinary(23, 59, 59, 999999, -19800)},
		rawBinary{"00:00:00Z", timetzBinary(0, 0, 0, 0, 0)}}},
	{"interval", "interval", []any{pgtype.Interval{Months: 14, Days: 3, Microseconds: 14706500000, Valid: true},
		pgtype.Interval{Days: -1, Microseconds: 7200000000, Valid: true}, pgtype.Interval{Valid: true},
		pgtype.Interval{Months: -1, Days: 2, Microseconds: -1, Valid: true}}},
	{"uuid", "uuid", []any{uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid("00000000-0000-0000-0000-000000000000")}},
	// pgx sends a string as JSON text and reads the text back as it is.
	{"json", "json", []any{`{"b": 1,  "a": [1, 2]}`, `"héllo ☃"`, "null"}},
	{"jsonb", "jsonb", []any{becomes{`{"b":1,"a":[1,2.50]}`, `{"a": [1, 2.50], "b": 1}`},
		becomes{`[1e2, "\u00e9", {"a": 1, "a": 2}, null, true]`, `[100, "é", {"a": 2}, null, true]`}, "{}"}},
	{"int4_array", "int4[]", []any{[]*int32{ptr(int32(1)), nil, ptr(int32(3))}, []int32{}, []int32{math.MinInt32, math.MaxInt32}}},
	{"text_array", "text[]", []any{[]*string{str(`a "quoted" b`), str("with, comma"), nil, str("héllo ☃"), str(""), str("NULL"),
		str(`back\slash`), str("{braces}"), str(" spaced ")}, []string{}}},
	{"float8_array", "float8[]", []any{[]*float64{ptr(0.1), ptr(-2.5e100), ptr(math.Inf(1)), ptr(math.Inf(-1)), ptr(math.NaN()), nil}}},
	{"numeric_array", "numeric[]", []any{[]pgtype.Numeric{num("1.500"), num("-0.000123"), num("123456789012345678901234567890.12345"),
		{}, pgtype.Numeric{Int: big.NewInt(1), Exp: 20, Valid: true}}}},
	{"bool_array", "bool[]", []any{[]*bool{ptr(true), ptr(false), nil}}},
	{"date_array", "date[]", []any{[]*time.Time{ptr(date("2000-02-29")), nil, ptr(date("1969-07-20"))}}},
	{"timestamptz_array", "timestamptz[]", []any{[]*time.Time{ts("2024-01-02T03:04:05.5Z"), ts("1969-07-20T22:17:40+02:00"), nil}}},
	{"uuid_array", "uuid[]", []any{[]pgtype.UUID{uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), {}}}},
	{"jsonb_array", "jsonb[]", []any{becomes{[]*string{str(`{"b":1,"a":[1,2.50]}`), nil, str(`"x"`)},
		[]*string{str(`{"a": [1, 2.50], "b": 1}`), nil, str(`"x"`)}}}},
	{"int4_array_2d", "int4[][]", []any{[][]*int32{{ptr(int32(1)), ptr(int32(2)), ptr(int32(3))}, {ptr(int32(4)), nil, ptr(int32(6))}},
		[][]int32{{1}, {2}}}},
}

// printed is what a value reads back as, for comparison.
func printed(c *C, v any) string {
	switch x := v.(type) {
	case pgtype.Numeric:
		return numText(c, x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return fmt.Sprintf("%T %#v", v, v)
	}
	// Slices element by element, pointers by what they point to.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Slice:
		if rv.IsNil() {
			return fmt.Sprintf("%T(nil)", v)
		}
		var elems []string
		for i := 0; i < rv.Len(); i++ {
			elems = append(elems, printed(c, rv.Index(i).Interface()))
		}
		return fmt.Sprintf("%T{%s}", v, strings.Join(elems, ", "))
	case reflect.Pointer:
		if rv.IsNil() {
			return "NULL"
		}
		return printed(c, rv.Elem().Interface())
	}
	return fmt.Sprintf("%T %#v", v, v)
}

// scanTarget is a new pointer of v's type.
func scanTarget(v any) any {
	return reflect.New(reflect.TypeOf(v)).Interface()
}

func TestTypesBinary(t *testing.T) {
	for _, tc := range binaryCases {
		check(t, "roundtrip_binary_"+tc.name, func(c *C) {
			c.Exec("drop table if exists typed")
			c.Exec(fmt.Sprintf("create table typed (id int4 primary key, v %s)", tc.coltype))
			for i, v := range tc.values {
				var want any = v
				if b, ok := v.(becomes); ok {
					v, want = b.sent, b.want
				}
				if raw, ok := v.(rawBinary); ok {
					v, want = raw.sent, raw.want
				}
				c.Exec("insert into typed (id, v) values ($1, $2)", i, v)
				queries := []struct {
					sql  string
					args []any
				}{
					{"select v from typed where id = $1", []any{i}},
					{fmt.Sprintf("select $1::%s", tc.coltype), []any{v}},
				}
				for _, q := range queries {
					// pgx asks for text-like types in text format unless told.
					args := append([]any{pgx.QueryResultFormats{pgx.BinaryFormatCode}}, q.args...)
					rows, err := c.conn.Query(c.ctx, q.sql, args...)
					c.NoErr(err, q.sql)
					c.Eq(rows.FieldDescriptions()[0].Format, int16(pgx.BinaryFormatCode), "result format")
					got := scanTarget(want)
					if _, ok := want.([]byte); ok && tc.coltype != "bytea" {
						got = &pgtype.UndecodedBytes{}
					}
					n := 0
					_, err = pgx.ForEachRow(rows, []any{got}, func() error { n++; return nil })
					c.NoErr(err, q.sql)
					c.Eq(n, 1, q.sql)
					gotV := reflect.ValueOf(got).Elem().Interface()
					if raw, ok := gotV.(pgtype.UndecodedBytes); ok {
						gotV = []byte(raw)
					}
					c.Eq(printed(c, gotV), printed(c, want), fmt.Sprintf("%s %v: %s", tc.coltype, v, q.sql))
				}
			}
			c.Exec("insert into typed (id, v) values ($1, $2)", -1, nil)
			var isNull bool
			var got any = "not null"
			c.Row("select v is null, v from typed where id = -1", nil, &isNull, &got)
			c.Eq([]any{isNull, got}, []any{true, nil}, "null")
		})
	}
}

// textCases: type -> column type and (text sent, text expected back).
var textCases = []struct {
	name, coltype string
	pairs         [][2]string
}{
	{"bool", "bool", [][2]string{{"t", "t"}, {"false", "f"}}},
	{"int2", "int2", [][2]string{{"-32768", "-32768"}, {"32767", "32767"}}},
	{"int4", "int4", [][2]string{{"-2147483648", "-2147483648"}, {" 42", "42"}}},
	{"int8", "int8", [][2]string{{"-9223372036854775808", "-9223372036854775808"}, {"9223372036854775807", "9223372036854775807"}}},
	{"float8", "float8", [][2]string{{"0.1", "0.1"}, {"-2.5e100", "-2.5e+100"}, {"3.141592653589793", "3.141592653589793"}, {"Infinity", "Infinity"}}},
	{"numeric", "numeric", [][2]string{{"12345.678", "12345.678"}, {"-0.000123", "-0.000123"}, {"1.500", "1.500"}, {"1e20", "100000000000000000000"}}},
	{"text", "text", [][2]string{{"héllo ☃", "héllo ☃"}, {"", ""}}},
	{"varchar", "varchar(10)", [][2]string{{"var", "var"}, {"ten chars!", "ten chars!"}}},
	{"char", "char(5)", [][2]string{{"ab", "ab   "}, {"abcde", "abcde"}}},
	{"timestamp", "timestamp", [][2]string{{"2024-01-02 03:04:05.123456", "2024-01-02 03:04:05.123456"}, {"1999-12-31T23:59:59", "1999-12-31 23:59:59"}}},
	{"timestamptz", "timestamptz", [][2]string{{"2024-01-02 05:04:05.5+02", "2024-01-02 03:04:05.5+00"}, {"1969-07-20 20:17:40Z", "1969-07-20 20:17:40+00"}}},
	{"date", "date", [][2]string{{"2000-02-29", "2000-02-29"}, {"1969-07-20", "1969-07-20"}}},
	{"bytea", "bytea", [][2]string{{`\x0001ff`, `\x0001ff`}, {`\x`, `\x`}}},
	{"float4", "float4", [][2]string{{"0.1", "0.1"}, {"-2.5e30", "-2.5e+30"}, {"3.4028235e38", "3.4028235e+38"}, {"Infinity", "Infinity"}, {"NaN", "NaN"}}},
	{"time", "time", [][2]string{{"04:05:06.789", "04:05:06.789"}, {"23:59:59.999999", "23:59:59.999999"}, {"4:05 PM", "16:05:00"}, {"24:00:00", "24:00:00"}}},
	{"timetz", "timetz", [][2]string{{"04:05:06+02", "04:05:06+02"}, {"23:59:59.999999-05:30", "23:59:59.999999-05:30"}, {"00:00:00Z", "00:00:00+00"}}},
	{"interval", "interval", [][2]string{{"1 year 2 mons 3 days 04:05:06.5", "1 year 2 mons 3 days 04:05:06.5"}, {"-1 days +02:00:00", "-1 days +02:00:00"},
		{"00:00:00", "00:00:00"}, {"P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"}, {"-00:00:00.000001", "-00:00:00.000001"}}},
	{"uuid", "uuid", [][2]string{{"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}}},
	{"json", "json", [][2]string{{`{"b": 1,  "a": [1, 2]}`, `{"b": 1,  "a": [1, 2]}`}, {`[1e2, "\u00e9"]`, `[1e2, "\u00e9"]`}}},
	{"jsonb", "jsonb", [][2]string{{`{"b":1,"a":[1,2.50]}`, `{"a": [1, 2.50], "b": 1}`}, {`[1e2, "\u00e9", {"a": 1, "a": 2}, null]`, `[100, "é", {"a": 2}, null]`}}},
	{"int4_array", "int4[]", [][2]string{{"{1,NULL,3}", "{1,NULL,3}"}, {"{}", "{}"}, {" { -2147483648 , 2147483647 } ", "{-2147483648,2147483647}"}, {"[0:1]={1,2}", "[0:1]={1,2}"}}},
	{"text_array", "text[]", [][2]string{{`{"a \"quoted\" b","with, comma",NULL,héllo ☃,"","NULL","back\\slash","{braces}"," spaced ",plain}`,
		`{"a \"quoted\" b","with, comma",NULL,"héllo ☃","","NULL","back\\slash","{braces}"," spaced ",plain}`}, {"{}", "{}"}}},
	{"float8_array", "float8[]", [][2]string{{"{0.1,-2.5e100,Infinity,-Infinity,NaN,NULL}", "{0.1,-2.5e+100,Infinity,-Infinity,NaN,NULL}"}}},
	{"numeric_array", "numeric[]", [][2]string{{"{1.500,-0.000123,1e20,NULL,NaN}", "{1.500,-0.000123,100000000000000000000,NULL,NaN}"}}},
	{"bool_array", "bool[]", [][2]string{{"{t,false,NULL}", "{t,f,NULL}"}}},
	{"date_array", "date[]", [][2]string{{"{2000-02-29,NULL,1969-07-20}", "{2000-02-29,NULL,1969-07-20}"}}},
	{"timestamptz_array", "timestamptz[]", [][2]string{{`{"2024-01-02 05:04:05.5+02","1969-07-20 20:17:40Z",NULL}`, `{"2024-01-02 03:04:05.5+00","1969-07-20 20:17:40+00",NULL}`}}},
	{"uuid_array", "uuid[]", [][2]string{{"{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11,NULL}", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}"}}},
	{"jsonb_array", "jsonb[]", [][2]string{{`{"{\"b\":1,\"a\":[1,2.50]}",NULL,"[1, 2]"}`, `{"{\"a\": [1, 2.50], \"b\": 1}",NULL,"[1, 2]"}`}}},
	{"int4_array_2d", "int4[][]", [][2]string{{"{{1,2,3},{4,NULL,6}}", "{{1,2,3},{4,NULL,6}}"}, {"{{1},{2}}", "{{1},{2}}"}}},
}

// rawText runs a one-column, one-row query and returns the column's raw
// bytes and format.
func rawText(c *C, sql string, args ...any) (string, int16) {
	rows, err := c.conn.Query(c.ctx, sql, args...)
	c.NoErr(err, sql)
	defer rows.Close()
	if !rows.Next() {
		c.NoErr(rows.Err(), sql)
		c.Fatalf("%s: no row", sql)
	}
	v := string(rows.RawValues()[0])
	format := rows.FieldDescriptions()[0].Format
	rows.Close()
	c.NoErr(rows.Err(), sql)
	return v, format
}

func TestTypesText(t *testing.T) {
	for _, tc := range textCases {
		check(t, "roundtrip_text_"+tc.name, func(c *C) {
			c.Exec("drop table if exists typed")
			c.Exec(fmt.Sprintf("create table typed (id int4 primary key, v %s)", tc.coltype))
			// QueryExecModeExec: text parameters and results, no Describe.
			exec := pgx.QueryExecModeExec
			simple := pgx.QueryExecModeSimpleProtocol
			for i, p := range tc.pairs {
				_, err := c.conn.Exec(c.ctx, "insert into typed (id, v) values ($1, $2)", exec, i, p[0])
				c.NoErr(err, "insert")
				for _, mode := range []pgx.QueryExecMode{exec, simple} {
					got, format := rawText(c, "select v from typed where id = $1", mode, i)
					c.Eq([]any{got, format}, []any{p[1], int16(pgx.TextFormatCode)}, fmt.Sprintf("%s %q (%v)", tc.coltype, p[0], mode))
					got, format = rawText(c, fmt.Sprintf("select $1::%s", tc.coltype), mode, p[0])
					c.Eq([]any{got, format}, []any{p[1], int16(pgx.TextFormatCode)}, fmt.Sprintf("%s %q (%v)", tc.coltype, p[0], mode))
				}
			}
			// Text results through the cached prepared statement too.
			got, format := rawText(c, "select v from typed where id = $1", pgx.QueryResultFormats{pgx.TextFormatCode}, 0)
			c.Eq([]any{got, format}, []any{tc.pairs[0][1], int16(pgx.TextFormatCode)}, "text result of a prepared statement")
			_, err := c.conn.Exec(c.ctx, "insert into typed (id, v) values ($1, $2)", exec, -1, nil)
			c.NoErr(err, "insert null")
			var isNull bool
			c.NoErr(c.conn.QueryRow(c.ctx, fmt.Sprintf("select v is null and $1::%s is null from typed where id = -1", tc.coltype), exec, nil).Scan(&isNull), "null")
			c.Eq(isNull, true, "null")
		})
	}
}
