//! Advisory locks between sessions: a lock held by one session makes
//! another wait (visible in pg_locks), is handed over when released, ends
//! with its transaction or connection, can be waited for in a cancellable
//! way, and a cycle of waits is broken with 40P01. Outcomes, not timings,
//! are asserted; every file here also passes against PostgreSQL
//! (`STRATA_TEST_TARGET=postgres`).

use std::time::{Duration, Instant};

use testkit::{TestServer, SETTLE};

/// pg_locks' advisory rows as `objid|granted` lines, in a stable order.
fn advisory_rows(s: &TestServer) -> String {
    s.query(
        "select objid, granted from pg_locks where locktype = 'advisory' \
         order by objid, granted",
    )
}

#[test]
fn a_held_lock_makes_others_wait_until_unlocked() {
    let s = TestServer::start();
    let mut a = s.run("select pg_advisory_lock(42)");
    let mut b = s.send("select pg_advisory_lock(42)");
    std::thread::sleep(SETTLE);
    assert_eq!(advisory_rows(&s), "42|f\n42|t", "b waits behind a");
    let holder = s.query("select pid from pg_locks where locktype = 'advisory' and granted");
    assert_eq!(holder, a.pid().to_string(), "pg_locks shows a's BackendKeyData pid");
    assert_eq!(s.query("select pg_try_advisory_lock(42)"), "f");
    a.query("select pg_advisory_unlock(42)");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty(), "b gets the lock once a lets go");
    assert_eq!(advisory_rows(&s), "42|t");
    let holder = s.query("select pid from pg_locks where locktype = 'advisory' and granted");
    assert_eq!(holder, b.pid().to_string());
}

#[test]
fn a_transaction_lock_ends_with_its_transaction() {
    let s = TestServer::start();
    let mut a = s.run("begin; select pg_advisory_xact_lock(7)");
    let mut b = s.send("select pg_advisory_xact_lock(7)");
    std::thread::sleep(SETTLE);
    assert_eq!(advisory_rows(&s), "7|f\n7|t");
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty());
    // b's statement was its own transaction: the lock went with it.
    assert_eq!(advisory_rows(&s), "");
    assert_eq!(s.query("select pg_try_advisory_lock(7)"), "t");
}

#[test]
fn a_closed_connection_lets_its_locks_go() {
    let s = TestServer::start();
    let a = s.run("select pg_advisory_lock(1); select pg_advisory_lock_shared(0, 2)");
    assert_eq!(advisory_rows(&s), "1|t\n2|t");
    drop(a);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !advisory_rows(&s).is_empty() {
        assert!(Instant::now() < deadline, "locks of a closed connection were kept");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(s.query("select pg_try_advisory_lock(1)"), "t");
}

#[test]
fn a_statement_keeps_what_it_took_while_it_waits_and_takes_it_once() {
    let s = TestServer::start();
    let mut a = s.run("select pg_advisory_lock(2)");
    let mut b = s.send("select pg_advisory_lock(1), pg_advisory_lock(2)");
    std::thread::sleep(SETTLE);
    assert_eq!(advisory_rows(&s), "1|t\n2|f\n2|t", "b holds 1 while it waits for 2");
    a.query("select pg_advisory_unlock(2)");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty());
    assert_eq!(advisory_rows(&s), "1|t\n2|t");
    // One unlock each releases both: the statement took each lock once.
    b.query("select pg_advisory_unlock(1), pg_advisory_unlock(2)");
    assert!(b.until_ready().is_empty());
    assert_eq!(advisory_rows(&s), "");
}

#[test]
fn a_cancelled_wait_leaves_nothing_behind() {
    let s = TestServer::start();
    let mut a = s.run("select pg_advisory_lock(5)");
    let mut b = s.send("select pg_advisory_lock(5)");
    std::thread::sleep(SETTLE);
    b.cancel(s.port);
    assert_eq!(b.until_ready(), vec!["57014".to_string()]);
    assert_eq!(advisory_rows(&s), "5|t");
    a.query("select pg_advisory_unlock(5)");
    assert!(a.until_ready().is_empty());
    assert_eq!(advisory_rows(&s), "", "the cancelled waiter was not granted the lock");
    b.query("select pg_advisory_lock(5)");
    assert!(b.until_ready().is_empty(), "the cancelled session still works");
    assert_eq!(advisory_rows(&s), "5|t");
}

#[test]
fn a_cycle_of_waits_is_a_deadlock() {
    let s = TestServer::start();
    let mut a = s.run("begin; select pg_advisory_xact_lock(1)");
    let mut b = s.run("begin; select pg_advisory_xact_lock(2)");
    a.query("select pg_advisory_xact_lock(2)");
    std::thread::sleep(SETTLE);
    b.query("select pg_advisory_xact_lock(1)");
    // One of the two is chosen (PostgreSQL picks whoever checks first);
    // its transaction fails, which lets its lock go, and the other goes on.
    let (ra, rb) = (a.until_ready(), b.until_ready());
    let deadlock = vec!["40P01".to_string()];
    assert!(
        (ra == deadlock && rb.is_empty()) || (ra.is_empty() && rb == deadlock),
        "a: {ra:?}, b: {rb:?}"
    );
    for c in [&mut a, &mut b] {
        c.query("rollback");
        assert!(c.until_ready().is_empty());
    }
    assert_eq!(advisory_rows(&s), "");
}
