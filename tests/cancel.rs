//! CancelRequest really cancels the running statement (57014), including a
//! statement waiting for a row lock, and the session stays usable.

use std::time::Duration;

use testkit::{RawClient, TestServer};

#[test]
fn cancel_a_statement_waiting_for_a_row_lock() {
    let s = TestServer::start();
    s.query("create table acct (id int primary key, bal int)");
    s.query("insert into acct values (1, 100)");
    let mut holder = RawClient::connect(s.port);
    holder.query("begin; update acct set bal = bal + 1 where id = 1");
    assert!(holder.until_ready().is_empty());

    let mut waiter = RawClient::connect(s.port);
    waiter.query("update acct set bal = bal + 10 where id = 1");
    std::thread::sleep(Duration::from_millis(300));
    waiter.cancel(s.port);
    assert_eq!(waiter.until_ready(), vec!["57014".to_string()]);

    // The cancelled session works, and the cancelled update left nothing behind.
    holder.query("commit");
    assert!(holder.until_ready().is_empty());
    waiter.query("select 1");
    assert!(waiter.until_ready().is_empty());
    assert_eq!(s.query("select bal from acct where id = 1"), "101");
}

#[test]
fn waiting_writer_proceeds_after_commit_and_sees_newest_row() {
    let s = TestServer::start();
    s.query("create table acct (id int primary key, bal int)");
    s.query("insert into acct values (1, 100)");
    let mut a = RawClient::connect(s.port);
    a.query("begin; update acct set bal = bal * 2 where id = 1");
    assert!(a.until_ready().is_empty());
    let mut b = RawClient::connect(s.port);
    b.query("update acct set bal = bal + 1 where id = 1");
    std::thread::sleep(Duration::from_millis(200));
    a.query("commit");
    assert!(a.until_ready().is_empty());
    assert!(b.until_ready().is_empty());
    // READ COMMITTED: b re-read the committed 200 and added 1.
    assert_eq!(s.query("select bal from acct where id = 1"), "201");
}

/// Two transactions lock rows in opposite orders: one of them (which one is
/// unspecified; PostgreSQL picks the one whose deadlock check runs first) gets
/// 40P01, rolls back, and the other then completes and commits.
#[test]
fn deadlock_is_detected() {
    let s = TestServer::start();
    s.query("create table d (id int primary key, v int)");
    s.query("insert into d values (1, 0), (2, 0)");
    let mut a = RawClient::connect(s.port);
    let mut b = RawClient::connect(s.port);
    a.query("begin; update d set v = 1 where id = 1");
    assert!(a.until_ready().is_empty());
    b.query("begin; update d set v = 2 where id = 2");
    assert!(b.until_ready().is_empty());
    a.query("update d set v = 1 where id = 2");
    std::thread::sleep(Duration::from_millis(200));
    b.query("update d set v = 2 where id = 1");
    // Each side finishes its pending update, then rolls back if it was the
    // victim or commits otherwise.
    let finish = |mut c: RawClient| {
        std::thread::spawn(move || {
            let codes = c.until_ready();
            let victim = codes == ["40P01"];
            assert!(victim || codes.is_empty(), "unexpected errors {codes:?}");
            c.query(if victim { "rollback" } else { "commit" });
            assert!(c.until_ready().is_empty());
            victim
        })
    };
    let (a, b) = (finish(a), finish(b));
    let a_victim = a.join().expect("session a");
    let b_victim = b.join().expect("session b");
    assert!(a_victim != b_victim, "exactly one victim (a: {a_victim}, b: {b_victim})");
    let want = if b_victim { "1\n1" } else { "2\n2" };
    assert_eq!(s.query("select v from d order by id"), want);
}

/// Extended protocol: Execute with a row limit suspends the portal, a second
/// Execute continues it; an error discards messages until Sync.
#[test]
fn portal_row_limits_and_error_recovery() {
    let s = TestServer::start();
    let mut c = RawClient::connect(s.port);
    // Parse (unnamed), Bind (portal "p"), Execute 2 rows, Execute rest, Sync.
    c.send(b'P', b"\0select x from generate_series(1, 5) as x\0\0\0");
    c.send(b'B', b"p\0\0\0\0\0\0\0\0");
    c.send(b'E', b"p\0\0\0\0\x02");
    c.send(b'E', b"p\0\0\0\0\0");
    c.send(b'S', b"");
    let mut tags = Vec::new();
    let mut rows = 0;
    loop {
        let (tag, body) = c.read_message();
        match tag {
            b'D' => rows += 1,
            b's' => tags.push("suspended".to_string()),
            b'C' => tags.push(String::from_utf8_lossy(&body[..body.len() - 1]).into_owned()),
            b'E' => panic!("unexpected error {}", String::from_utf8_lossy(&body)),
            b'Z' => break,
            _ => {}
        }
    }
    assert_eq!(rows, 5);
    assert_eq!(tags, vec!["suspended".to_string(), "SELECT 3".to_string()]);

    // An error in Bind skips the following Execute until Sync; then the
    // connection works again.
    c.send(b'P', b"s1\0select $1::int\0\0\0");
    c.send(b'B', b"\0s1\0\0\0\0\x01\0\0\0\x03abc\0\0");
    c.send(b'E', b"\0\0\0\0\0");
    c.send(b'S', b"");
    assert_eq!(c.until_ready(), vec!["22P02".to_string()]);
    c.query("select 1");
    assert!(c.until_ready().is_empty());
}

/// A client that disconnects while its statement waits for a lock loses
/// that statement: it is cancelled, not completed and committed later.
#[test]
fn disconnect_during_a_lock_wait_cancels_the_statement() {
    let s = TestServer::start();
    s.query("create table acct (id int primary key, bal int)");
    s.query("insert into acct values (1, 100)");
    let mut a = RawClient::connect(s.port);
    a.query("begin; update acct set bal = bal + 1 where id = 1");
    assert!(a.until_ready().is_empty());
    let mut b = RawClient::connect(s.port);
    b.query("update acct set bal = bal + 1000 where id = 1");
    std::thread::sleep(Duration::from_millis(200));
    drop(b);
    std::thread::sleep(Duration::from_millis(300));
    a.query("commit");
    assert!(a.until_ready().is_empty());
    s.query("update acct set bal = bal + 10 where id = 1");
    assert_eq!(s.query("select bal from acct where id = 1"), "111");
}

/// An endless WITH RECURSIVE query computes without reading storage; a
/// CancelRequest still stops it (it yields between iterations), and the
/// session goes on.
#[test]
fn cancel_an_endless_recursive_query() {
    let s = TestServer::start();
    let mut c = RawClient::connect(s.port);
    c.query(
        "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r",
    );
    std::thread::sleep(Duration::from_millis(300));
    c.cancel(s.port);
    assert_eq!(c.until_ready(), vec!["57014".to_string()]);
    c.query("select 1");
    assert!(c.until_ready().is_empty());
}
