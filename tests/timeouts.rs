//! statement_timeout, lock_timeout, idle_in_transaction_session_timeout and
//! idle_session_timeout: each ends what it limits with PostgreSQL's error,
//! and the session (or, for the idle timeouts, the server) goes on.
//! Statements that would run far past their limit are used, so the tests
//! check what happens, never how fast.
//! Every test also passes against PostgreSQL (`STRATA_TEST_TARGET=postgres`).

use std::time::Duration;

use testkit::{RawClient, TestServer, SETTLE};

/// Runs `sql` on `c` and returns the SQLSTATEs of its errors.
fn codes(c: &mut RawClient, sql: &str) -> Vec<String> {
    c.query(sql);
    c.until_ready()
}

/// A query that takes many seconds of computation and never waits: a
/// nested loop over 25 million pairs.
const BUSY: &str = "select count(*) from generate_series(1, 5000) a, generate_series(1, 5000) b \
                    where a + b * 2 = 7";

#[test]
fn statement_timeout_cancels_a_waiting_or_busy_statement() {
    let s = TestServer::start();
    let mut c = RawClient::connect(s.port);
    assert!(codes(&mut c, "set statement_timeout = '200ms'").is_empty());
    assert_eq!(codes(&mut c, "select pg_sleep(30)"), ["57014"]);
    assert_eq!(codes(&mut c, BUSY), ["57014"]);
    // In a transaction block the timeout fails the block, as any error does.
    assert!(codes(&mut c, "begin").is_empty());
    assert_eq!(codes(&mut c, "select pg_sleep(30)"), ["57014"]);
    assert_eq!(codes(&mut c, "select 1"), ["25P02"]);
    assert!(codes(&mut c, "rollback").is_empty());
    // A timeout set in the same query string applies to the statements
    // after it.
    assert_eq!(
        codes(
            &mut c,
            "set statement_timeout = 0; set statement_timeout = '100ms'; select pg_sleep(30)"
        ),
        ["57014"]
    );
    assert!(codes(&mut c, "reset statement_timeout").is_empty());
    assert!(codes(&mut c, "select pg_sleep(0.3)").is_empty());
}

#[test]
fn a_cancel_request_stops_a_busy_statement() {
    let s = TestServer::start();
    let mut c = RawClient::connect(s.port);
    c.query(BUSY);
    std::thread::sleep(SETTLE);
    c.cancel(s.port);
    assert_eq!(c.until_ready(), ["57014"]);
    assert!(codes(&mut c, "select 1").is_empty());
}

/// A statement that computes for long, without waiting for anything, does
/// not hold up other sessions: another session's queries are answered while
/// it is still running.
#[test]
fn a_busy_statement_does_not_stall_other_sessions() {
    let s = TestServer::start();
    let mut other = RawClient::connect(s.port);
    let mut busy = RawClient::connect(s.port);
    busy.query(BUSY);
    std::thread::sleep(SETTLE);
    let state = format!("select state from pg_stat_activity where pid = {}", busy.pid());
    other.query(&state);
    let mut rows = Vec::new();
    loop {
        let (tag, body) = other.read_message();
        match tag {
            b'D' => rows.push(String::from_utf8_lossy(&body[6..]).to_string()),
            b'E' => panic!("{}", String::from_utf8_lossy(&body)),
            b'Z' => break,
            _ => {}
        }
    }
    assert_eq!(rows, ["active"], "answered while the busy statement ran");
    busy.cancel(s.port);
    assert_eq!(busy.until_ready(), ["57014"]);
}

#[test]
fn lock_timeout_ends_row_table_and_advisory_lock_waits() {
    let s = TestServer::start();
    s.query("create table acct (id int primary key, bal int)");
    s.query("insert into acct values (1, 100), (2, 200)");
    let mut holder = s.run(
        "begin; update acct set bal = 0 where id = 1; lock table acct in access exclusive mode; \
         select pg_advisory_lock(42)",
    );
    let mut c = RawClient::connect(s.port);
    assert!(codes(&mut c, "set lock_timeout = '200ms'").is_empty());
    assert_eq!(codes(&mut c, "update acct set bal = 1 where id = 1"), ["55P03"]);
    assert_eq!(codes(&mut c, "select * from acct where id = 1 for update"), ["55P03"]);
    assert_eq!(codes(&mut c, "select pg_advisory_lock(42)"), ["55P03"]);
    // The waits left nothing behind: once the holder is gone, all go through.
    holder.query("rollback; select pg_advisory_unlock_all()");
    assert!(holder.until_ready().is_empty());
    assert!(codes(&mut c, "update acct set bal = 1 where id = 1").is_empty());
    assert!(codes(&mut c, "select pg_advisory_lock(42)").is_empty());
    assert_eq!(s.query("select bal from acct order by id"), "1\n200");
}

#[test]
fn idle_in_transaction_timeout_closes_the_connection() {
    let s = TestServer::start();
    s.query("create table t (id int)");
    let mut c = RawClient::connect(s.port);
    let setup =
        "set idle_in_transaction_session_timeout = '200ms'; begin; insert into t values (1)";
    assert!(codes(&mut c, setup).is_empty());
    // Waiting for the client outside a transaction is not limited by it.
    let mut idle = RawClient::connect(s.port);
    assert!(codes(&mut idle, "set idle_in_transaction_session_timeout = '200ms'").is_empty());
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(c.until_closed(), ["25P03"]);
    assert!(codes(&mut idle, "select 1").is_empty());
    // The transaction was rolled back.
    assert_eq!(s.query("select count(*) from t"), "0");
}

#[test]
fn idle_session_timeout_closes_the_connection() {
    let s = TestServer::start();
    let mut c = RawClient::connect(s.port);
    assert!(codes(&mut c, "set idle_session_timeout = '200ms'").is_empty());
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(c.until_closed(), ["57P05"]);
    // A session inside a transaction block is not idle in this sense.
    let mut busy = RawClient::connect(s.port);
    assert!(codes(&mut busy, "set idle_session_timeout = '200ms'; begin").is_empty());
    std::thread::sleep(Duration::from_millis(600));
    assert!(codes(&mut busy, "commit").is_empty());
}
