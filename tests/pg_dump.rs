//! pg_dump end to end: a database built by `pg_dump/schema.sql` is dumped
//! with PostgreSQL 15's pg_dump (plain format), the script is restored with
//! psql into an empty server (with ON_ERROR_STOP: every statement must
//! succeed), and each table and view must read back exactly as in the
//! source. Three round trips: Strata into PostgreSQL, Strata into a fresh
//! Strata (whose own dump must then be the same script), and PostgreSQL
//! into Strata. "Strata" is the server under test, PostgreSQL with
//! `STRATA_TEST_TARGET=postgres`, which checks the test itself.

use std::process::Command;

use testkit::{run_with_timeout, Target, TestServer, CLIENT_TIMEOUT};

/// The relations compared after the restore.
const RELATIONS: &[&str] = &[
    "customers",
    "orders",
    "big_orders",
    "shop.items",
    "shop.sized",
    "reviews",
    "tokens",
    "order_totals",
    "taxed",
    "item_list",
    "events",
    "notes",
    "labels",
    "shipments",
    "legacy",
    "stays",
    "regions",
    "regions_rest",
    "readings",
    "readings_2024_1",
];

fn dump(s: &TestServer) -> String {
    dump_with(s, &[])
}

/// pg_dump of `s` with more options.
fn dump_with(s: &TestServer, options: &[&str]) -> String {
    let mut cmd = Command::new("pg_dump");
    cmd.args(["-h", "127.0.0.1", "-p", &s.port.to_string(), "-U", "postgres", "postgres"]);
    cmd.args(options);
    let out = run_with_timeout(&mut cmd, None, CLIENT_TIMEOUT);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pg_dump failed: {err}");
    String::from_utf8(out.stdout).expect("pg_dump writes UTF-8")
}

/// A relation's rows as COPY text, in key order.
fn rows(s: &TestServer, relation: &str) -> String {
    let sql = format!("copy (select * from {relation} order by 1) to stdout");
    let out = s.psql(&["-c", &sql]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The dump with the lines that differ between any two runs dropped: the
/// random `\restrict` key and the source's version.
fn stable(script: &str) -> String {
    let varies = |l: &&str| {
        l.starts_with("\\restrict")
            || l.starts_with("\\unrestrict")
            || l.starts_with("-- Dumped from database version")
    };
    script.lines().filter(|l| !varies(l)).collect::<Vec<_>>().join("\n")
}

/// The source database: `pg_dump/schema.sql` run on `s`.
fn build_source(s: &TestServer) {
    let schema = std::fs::read_to_string(e2e::tests_dir().join("pg_dump/schema.sql"))
        .expect("pg_dump/schema.sql");
    run(s, &schema);
}

/// Checks every relation of the restored `target` reads back as in
/// `source`, and that the restored keys, constraints and sequences work.
fn compare(source: &TestServer, target: &TestServer) {
    for r in RELATIONS {
        assert_eq!(rows(target, r), rows(source, r), "{r} differs after the restore");
    }
    // The restored sequences go on past every value the source handed out,
    // and the constraints hold.
    let value = |sql: &str, want: &str| {
        let out = target.psql(&["-Atc", sql]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{sql}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), want, "{sql}");
    };
    let violates = |sql: &str, constraint: &str| {
        let out = target.psql(&["-Atc", sql]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{sql} succeeded");
        assert!(err.contains(&format!("constraint \"{constraint}\"")), "{sql}: {err}");
    };
    value("select nextval('customers_id_seq') > 3", "t");
    value("select nextval('invoice_seq') > 1005", "t");
    violates("insert into customers (email) values ('a@x.org')", "customers_email_key");
    violates("insert into orders (customer_id, amount) values (1, -1)", "orders_amount_check");
    violates("insert into orders (customer_id, amount) values (99, 1)", "orders_customer_id_fkey");
    value("delete from customers where id = 1; select count(*) from orders", "DELETE 1\n2");
    value("select nextval('shop.items_id_seq') > 2", "t");
    // Domains came back with their constraints, defaults and nesting.
    violates("insert into shipments values (3, 0, 'x@y.z')", "qty_t_check");
    violates("insert into shipments values (3, 2000, 'x@y.z')", "small_qty_check");
    violates("insert into shipments values (3, 1, 'nobody')", "contact_at");
    violates("insert into shipments (id, n) values (3, 13)", "not_13");
    value("insert into shipments (id) values (4) returning who", "none@x.org\nINSERT 0 1");
    // NOT VALID constraints came back not valid, and hold for new rows.
    let unchecked =
        "select count(*) from pg_constraint where conname like 'legacy_%' and not convalidated";
    value(unchecked, "2");
    violates("insert into legacy values (2, -1, null)", "legacy_qty_pos");
    violates("insert into legacy values (2, 1, 999)", "legacy_customer_fk");
    // Identity columns came back as identity columns, their sequences
    // past the rows'.
    value("insert into events (kind) values ('c') returning id > 55", "t\nINSERT 0 1");
    let always = "insert into events values (1, 'd')";
    let out = target.psql(&["-Atc", always]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("GENERATED ALWAYS"), "{always}");
    value(
        "select attidentity from pg_attribute where attrelid = 'notes'::regclass and attname = 'id'",
        "d",
    );
    let view_default = "select pg_get_expr(adbin, adrelid) from pg_attrdef \
                        where adrelid = 'positive_orders'::regclass";
    value(view_default, "1");
    value("select obj_description('shop'::regnamespace, 'pg_namespace')", "the shop");
    let collations = "select string_agg(c.collname, ',' order by a.attnum) from pg_attribute a \
                      join pg_collation c on c.oid = a.attcollation \
                      where a.attrelid = 'labels'::regclass and a.attnum > 0";
    value(collations, "C,POSIX,default");
    let indexes = "select string_agg(indexdef, '; ' order by indexname) from pg_indexes \
                   where indexname in ('labels_tag_like', 'orders_doc_gin', 'orders_tags_gin')";
    value(
        indexes,
        "CREATE INDEX labels_tag_like ON public.labels USING btree (tag varchar_pattern_ops) \
         INCLUDE (plain); CREATE INDEX orders_doc_gin ON public.orders USING gin (doc jsonb_path_ops); \
         CREATE INDEX orders_tags_gin ON public.orders USING gin (tags)",
    );
    violates("insert into reviews values (3, 99, null)", "reviews_item_fkey");
    // Partition trees came back: rows route to the same partitions, the
    // partitions' keys are attached to the parent's, all valid.
    value(
        "select string_agg(tableoid::regclass || ':' || id, ',' order by id) from regions",
        "regions_eu:1,regions_us:2,regions_rest:3,regions_eu:4",
    );
    value(
        "select string_agg(tableoid::regclass || ':' || id, ',' order by id) from readings",
        "readings_2024_0:1,readings_2024_0:2,readings_later:3,readings_2024_1:5",
    );
    let attached = "select string_agg(inhrelid::regclass || '>' || inhparent::regclass, ',' \
                    order by inhrelid::regclass::text) from pg_inherits \
                    where inhparent::regclass::text like 'regions_%'";
    value(
        attached,
        "regions_eu_pkey>regions_pkey,regions_eu_region_v_idx>regions_region_v,\
         regions_eu_v_idx>regions_v_idx,regions_rest_pkey>regions_pkey,\
         regions_rest_region_v_idx>regions_region_v,regions_rest_v_idx>regions_v_idx,\
         regions_us_pkey>regions_pkey,regions_us_region_v_idx>regions_region_v,\
         regions_us_v_idx>regions_v_idx",
    );
    value("select bool_and(indisvalid) from pg_index where indrelid = 'regions'::regclass", "t");
    violates("insert into regions values (1, 'eu', 9)", "regions_eu_pkey");
    violates("insert into regions values (9, 'us', 9, 'x', 99)", "regions_customer_id_fkey");
    let copies = "select count(*) from pg_constraint where conname = 'regions_customer_id_fkey' \
                  and conparentid <> 0";
    value(copies, "3");
    // Customer 1 went above: its ON DELETE SET NULL reached the partitions.
    value("select count(*) from regions where customer_id is null", "3");
    violates("insert into readings values (4, '2031-01-01', -1)", "later_val_pos");
    value("insert into readings (at) values ('2024-02-02') returning id", "1\nINSERT 0 1");
    violates("insert into shop.items (sku) values ('x1')", "items_sku_key");
    // The extensions came back, with their functions and the defaults
    // that call them.
    value(
        "insert into tokens (n) values (3) returning hash",
        "$1$abcdefgh$IQtUouv7y7Q9dRWkQEPCc.\nINSERT 0 1",
    );
    value("select count(distinct id) from tokens", "3");
    // Owners and privileges came back.
    let acl = |rel: &str| {
        format!(
            "select relacl, pg_get_userbyid(relowner) from pg_class where oid = '{rel}'::regclass"
        )
    };
    value(&acl("customers"), "{postgres=arwdDxt/postgres,dump_reader=a*r*/postgres}|postgres");
    value(
        &acl("shop.items"),
        "{dump_owner=arwdDxt/dump_owner,dump_reader=r/dump_owner}|dump_owner",
    );
    value(&acl("invoice_seq"), "{postgres=rwU/postgres,dump_reader=U/postgres}|postgres");
    value(&acl("big_orders"), "{=r/postgres}|postgres");
    value(
        "select typacl from pg_type where typname = 'status'",
        "{postgres=U/postgres,dump_reader=U/postgres}",
    );
    value(
        "select defaclobjtype::text || ' ' || defaclacl::text from pg_default_acl order by 1",
        "S {postgres=rwU/postgres,dump_reader=U/postgres}\nr {dump_reader=r/dump_owner}",
    );
    value(
        "select nspacl, pg_get_userbyid(nspowner) from pg_namespace where nspname = 'shop'",
        "{dump_owner=UC/dump_owner,dump_reader=U/dump_owner}|dump_owner",
    );
    value(
        "select obj_description(oid, 'pg_extension') from pg_extension where extname = 'pgcrypto'",
        "hashes",
    );
}

/// The roles `pg_dump/schema.sql` makes, which a plain dump leaves out.
const ROLES: &str = "create role dump_owner; create role dump_reader;";

/// Restores `script` into `target` after making the roles it names.
fn restore(target: &TestServer, script: &str) {
    run(target, ROLES);
    run(target, script);
}

fn run(s: &TestServer, script: &str) {
    let out = s.psql_script(script);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "script failed on {:?}: {err}", s.target());
}

#[test]
fn a_dump_restores_into_postgres_with_the_same_data() {
    let source = TestServer::start();
    build_source(&source);
    let script = dump(&source);
    // Dependencies decide the order: sequences before the defaults that
    // call them, tables before the view, names qualified for the
    // restore's empty search_path.
    let pos = |s: &str| script.find(s).unwrap_or_else(|| panic!("dump lacks {s}:\n{script}"));
    assert!(pos("CREATE SEQUENCE public.customers_id_seq") < pos("SET DEFAULT nextval"));
    assert!(pos("CREATE TABLE public.orders") < pos("CREATE VIEW public.big_orders"));
    pos("ALTER SEQUENCE public.customers_id_seq OWNED BY public.customers.id;");
    pos("REFERENCES public.customers(id) ON DELETE CASCADE");
    pos("SELECT pg_catalog.set_config('search_path', '', false);");
    assert!(pos("CREATE SCHEMA shop;") < pos("CREATE TYPE shop.size AS ENUM"));
    pos("size shop.size DEFAULT 'm'::shop.size");
    pos("SET DEFAULT nextval('shop.items_id_seq'::regclass)");
    pos("REFERENCES shop.items(id) DEFERRABLE INITIALLY DEFERRED;");
    pos("(customer_id, d DESC NULLS LAST);");
    assert!(!script.contains("COMMENT ON SCHEMA public"), "{script}");
    // Extensions are dumped as CREATE EXTENSION, not as their functions;
    // plpgsql, which came with the database, not at all.
    pos("CREATE EXTENSION IF NOT EXISTS \"uuid-ossp\" WITH SCHEMA public;");
    assert!(
        pos("CREATE SCHEMA shop;")
            < pos("CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA shop;")
    );
    pos("COMMENT ON EXTENSION pgcrypto IS 'hashes';");
    pos("id uuid DEFAULT public.uuid_generate_v4() NOT NULL");
    assert!(!script.contains("EXTENSION IF NOT EXISTS plpgsql"), "{script}");
    // A PL/pgSQL trigger function comes before the tables, its triggers
    // after them (a disabled one disabled again).
    assert!(
        pos("CREATE FUNCTION public.touch_order() RETURNS trigger\n    LANGUAGE plpgsql")
            < pos("CREATE TABLE public.orders")
    );
    pos("CREATE TRIGGER orders_touch BEFORE INSERT OR UPDATE OF amount ON public.orders FOR EACH ROW WHEN ((new.amount IS NULL)) EXECUTE FUNCTION public.touch_order();");
    pos("EXECUTE FUNCTION public.touch_order('a', 'b');\n\nALTER TABLE public.orders DISABLE TRIGGER orders_note;");
    // SQL functions are dumped before the views that call them.
    assert!(
        pos("CREATE FUNCTION public.order_tax(amount numeric) RETURNS numeric")
            < pos("CREATE VIEW public.taxed")
    );
    assert!(pos("CREATE FUNCTION shop.items_of(lo integer)") < pos("FROM shop.items_of(1)"));
    pos("CREATE PROCEDURE public.add_order(IN cust integer, IN amt numeric DEFAULT 0, INOUT n integer DEFAULT NULL::integer)\n    LANGUAGE plpgsql");
    pos("COMMENT ON PROCEDURE public.add_order(IN cust integer, IN amt numeric, INOUT n integer) IS 'adds an order';");
    pos("CREATE FUNCTION public.order_stats(cust integer, OUT total numeric, OUT cnt bigint) RETURNS record\n    LANGUAGE sql STABLE");
    pos("COMMENT ON FUNCTION public.order_stats(cust integer, OUT total numeric, OUT cnt bigint) IS 'totals';");
    // Materialized views are made empty, then refreshed after the data,
    // except the one that was never populated.
    assert!(
        pos("CREATE MATERIALIZED VIEW public.order_totals AS")
            < pos("REFRESH MATERIALIZED VIEW public.order_totals;")
    );
    pos("CREATE MATERIALIZED VIEW public.later_totals AS");
    pos("ALTER TABLE shop.items OWNER TO dump_owner;");
    pos("GRANT SELECT,INSERT ON TABLE public.customers TO dump_reader WITH GRANT OPTION;");
    pos("REVOKE ALL ON TABLE public.big_orders FROM postgres;");
    pos("REVOKE ALL ON TYPE public.status FROM PUBLIC;");
    pos("ALTER DEFAULT PRIVILEGES FOR ROLE dump_owner IN SCHEMA shop GRANT SELECT ON TABLES  TO dump_reader;");
    pos("ALTER DEFAULT PRIVILEGES FOR ROLE postgres GRANT USAGE ON SEQUENCES  TO dump_reader;");
    assert!(!script.contains("REFRESH MATERIALIZED VIEW public.later_totals"), "{script}");
    pos("CREATE FUNCTION public.join_skus(sep text, VARIADIC skus text[]) RETURNS text");
    pos("LANGUAGE plpgsql STABLE SECURITY DEFINER\n    SET search_path TO 'shop', 'public'\n    SET work_mem TO '8MB'");
    pos("CREATE FUNCTION public.log_amount(a numeric) RETURNS void");
    assert!(pos("CREATE VIEW public.positive_orders AS") < pos("  WITH LOCAL CHECK OPTION;"));
    assert!(
        pos("CREATE VIEW public.positive_orders AS")
            < pos("ALTER TABLE ONLY public.positive_orders ALTER COLUMN amount SET DEFAULT 1;")
    );
    pos("ALTER TABLE public.events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (\n    SEQUENCE NAME public.events_id_seq\n    START WITH 50\n    INCREMENT BY 5");
    assert!(!script.contains("SET DEFAULT nextval('public.events_id_seq"), "{script}");
    pos("CREATE TRIGGER order_view_ins INSTEAD OF INSERT ON public.big_orders FOR EACH ROW EXECUTE FUNCTION public.order_view_ins();");

    let target = TestServer::start_target(Target::Postgres);
    restore(&target, &script);
    compare(&source, &target);
}

#[test]
fn a_dump_restores_into_a_fresh_server_that_dumps_the_same_script() {
    let source = TestServer::start();
    build_source(&source);
    let script = dump(&source);
    let target = TestServer::start();
    restore(&target, &script);
    // Taken before compare's writes move the sequences on.
    let again = dump(&target);
    assert_eq!(stable(&again), stable(&script), "the restored database dumps differently");
    compare(&source, &target);
}

#[test]
fn a_postgres_dump_restores_here_with_the_same_data() {
    let source = TestServer::start_target(Target::Postgres);
    build_source(&source);
    let script = dump(&source);
    let target = TestServer::start();
    restore(&target, &script);
    compare(&source, &target);
}

#[test]
fn a_one_table_dump_is_the_one_postgres_writes() {
    // pg_dump -t finds the table with OPERATOR(pg_catalog.~) and
    // OPERATOR(pg_catalog.=) ANY (...) conditions.
    let strata = TestServer::start();
    build_source(&strata);
    let postgres = TestServer::start_target(Target::Postgres);
    build_source(&postgres);
    // A serial's position differs: Strata's SQL process reserves blocks
    // of values, as PostgreSQL's CACHE does.
    let without_setval = |script: String| {
        let script = stable(&script);
        script.lines().filter(|l| !l.contains(".setval(")).collect::<Vec<_>>().join("\n")
    };
    for table in ["reviews", "shop.items"] {
        let ours = without_setval(dump_with(&strata, &["-t", table]));
        assert!(ours.contains("CREATE TABLE"), "no table in the dump of {table}: {ours}");
        let theirs = without_setval(dump_with(&postgres, &["-t", table]));
        assert_eq!(ours, theirs, "pg_dump -t {table}");
    }
}
