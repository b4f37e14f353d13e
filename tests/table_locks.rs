//! DDL against concurrent writers of the same table: each waits for the
//! other (PostgreSQL's ROW EXCLUSIVE vs ACCESS EXCLUSIVE/SHARE table locks),
//! so no acknowledged write is lost and no index misses a row. Outcomes, not
//! timings, are asserted: whichever order the statements actually run in,
//! the result must be the one PostgreSQL gives.

use testkit::{DdlSteps, TestServer, SETTLE};

fn setup(s: &TestServer) {
    s.query("create table t (id int, v text)");
    s.query("insert into t values (1, 'one')");
}

#[test]
fn insert_waits_for_truncate_and_lands_in_the_new_storage() {
    let s = TestServer::start();
    setup(&s);
    let mut ddl = s.run("begin; truncate t");
    let mut w = s.send("insert into t values (2, 'two')");
    std::thread::sleep(SETTLE);
    ddl.query("commit");
    assert!(ddl.until_ready().is_empty());
    assert!(w.until_ready().is_empty(), "the insert succeeds after the truncate commits");
    assert_eq!(s.query("select id from t"), "2", "the acknowledged insert is not lost");
}

#[test]
fn truncate_waits_for_an_open_writer() {
    let s = TestServer::start();
    setup(&s);
    let mut w = s.run("begin; insert into t values (2, 'two')");
    let mut ddl = s.send("truncate t");
    std::thread::sleep(SETTLE);
    w.query("insert into t values (3, 'three'); commit");
    assert!(w.until_ready().is_empty());
    assert!(ddl.until_ready().is_empty());
    // The truncate ran after the writer committed, so it removed its rows;
    // a write made after the truncate is kept.
    assert_eq!(s.query("select count(*) from t"), "0");
    s.query("insert into t values (4, 'four')");
    assert_eq!(s.query("select id from t"), "4");
}

#[test]
fn unique_index_build_sees_rows_committed_while_it_waited() {
    let s = TestServer::start();
    setup(&s);
    let mut w = s.run("begin; insert into t values (1, 'again')");
    let mut ddl = s.send("create unique index t_id on t (id)");
    std::thread::sleep(SETTLE);
    w.query("commit");
    assert!(w.until_ready().is_empty());
    assert_eq!(ddl.until_ready(), vec!["23505".to_string()], "duplicate committed meanwhile");
    assert_eq!(s.query("select count(*) from t where id = 1"), "2");
}

#[test]
fn index_built_while_writers_wait_covers_every_row() {
    let s = TestServer::start();
    setup(&s);
    let mut w = s.run("begin; insert into t values (2, 'two')");
    let mut ddl = s.send("create index t_v on t (v)");
    std::thread::sleep(SETTLE);
    // A second writer queues behind the index build (FIFO: no overtaking).
    let mut w2 = s.send("insert into t values (3, 'three')");
    std::thread::sleep(SETTLE);
    w.query("commit");
    assert!(w.until_ready().is_empty());
    assert!(ddl.until_ready().is_empty());
    assert!(w2.until_ready().is_empty());
    for (v, id) in [("one", "1"), ("two", "2"), ("three", "3")] {
        assert_eq!(s.query(&format!("select id from t where v = '{v}'")), id, "row {v} by index");
    }
}

#[test]
fn add_primary_key_keeps_rows_committed_while_it_waited() {
    let s = TestServer::start();
    setup(&s);
    let mut w = s.run("begin; insert into t values (5, 'five')");
    let mut ddl = s.send("alter table t add primary key (id)");
    std::thread::sleep(SETTLE);
    w.query("commit");
    assert!(w.until_ready().is_empty());
    assert!(ddl.until_ready().is_empty());
    assert_eq!(s.query("select id from t order by id"), "1\n5");
}

#[test]
fn update_waits_for_drop_table_then_fails_cleanly() {
    let s = TestServer::start();
    setup(&s);
    let mut ddl = s.run("begin; drop table t");
    let mut w = s.send("update t set v = 'x' where id = 1");
    std::thread::sleep(SETTLE);
    ddl.query("commit");
    assert!(ddl.until_ready().is_empty());
    assert_eq!(w.until_ready(), vec!["42P01".to_string()], "the table is gone");
    w.query("select 1");
    assert!(w.until_ready().is_empty());
}

#[test]
fn concurrent_create_table_of_one_name_has_one_winner() {
    let s = TestServer::start();
    let mut a = s.run("begin; create table u (i int)");
    let mut b = s.send("create table u (j int)");
    std::thread::sleep(SETTLE);
    a.query("commit");
    assert!(a.until_ready().is_empty());
    // PostgreSQL reports 23505 (pg_type's unique index) or 42P07 here,
    // depending on timing; either way exactly one table exists.
    let codes = b.until_ready();
    assert!(codes == ["42P07"] || codes == ["23505"], "{codes:?}");
    assert_eq!(s.query("select count(*) from u"), "0");
    assert_eq!(s.query("select i from u"), "");
}

#[test]
fn lock_table_access_share_makes_ddl_wait() {
    let s = TestServer::start();
    setup(&s);
    let mut reader = s.run("begin; lock table t in access share mode");
    let mut ddl = s.send("truncate t");
    std::thread::sleep(SETTLE);
    // Had the truncate not waited, this row would land after it and stay.
    reader.query("insert into t values (2, 'two'); commit");
    assert!(reader.until_ready().is_empty());
    assert!(ddl.until_ready().is_empty());
    assert_eq!(s.query("select count(*) from t"), "0", "the truncate ran after the lock holder");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// Every statement runs on the catalog as of its snapshot: DDL another
/// session commits shows at the reader's very next statement, read or
/// write, simple or prepared, inside PL/pgSQL and in a transaction block.
/// (tests/tenants.rs runs the same with the DDL in another SQL process,
/// where only the KV server can tell the reader its catalog is stale.)
#[test]
fn each_statement_sees_ddl_committed_before_it() {
    let s = TestServer::start();
    setup(&s);
    runtime().block_on(async {
        let a = s.connect().await.expect("connect");
        let ddl = |sql: &str| {
            s.query(sql);
        };
        testkit::each_statement_sees_ddl(&a, ddl, DdlSteps::CreateThenFill).await;
    });
}
