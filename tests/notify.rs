//! LISTEN / NOTIFY between sessions: notifications are sent when the
//! notifying transaction commits (never if it rolls back), once per
//! distinct payload, to every session listening at that moment, the sender
//! included; a listener hears them between its own transactions, even
//! while idle. Every test here also passes against PostgreSQL
//! (`STRATA_TEST_TARGET=postgres`).

use testkit::{TestServer, SETTLE};

fn payloads(notes: &[(i32, String, String)]) -> Vec<&str> {
    notes.iter().map(|(_, _, p)| p.as_str()).collect()
}

#[test]
fn an_idle_listener_hears_a_commit_at_once() {
    let s = TestServer::start();
    let mut listener = s.run("listen jobs");
    let mut sender = s.run("begin; notify jobs, 'first'; select pg_notify('jobs', 'second')");
    std::thread::sleep(SETTLE);
    sender.query("commit");
    assert!(sender.until_ready().is_empty());
    let (pid, channel, payload) = listener.next_notification();
    assert_eq!((pid, channel.as_str(), payload.as_str()), (sender.pid(), "jobs", "first"));
    assert_eq!(listener.next_notification().2, "second");
    // Nothing else came: the next message answers the next query.
    listener.query("select 1");
    let (codes, notes) = listener.until_ready_notified();
    assert!(codes.is_empty() && notes.is_empty(), "{codes:?} {notes:?}");
}

#[test]
fn only_committed_notifications_are_sent_once_each() {
    let s = TestServer::start();
    let mut me = s.run("listen ch");
    me.query(
        "begin; notify ch, 'a'; notify ch, 'a'; notify ch, 'b'; savepoint s; notify ch, 'c'; \
         rollback to s; notify ch, 'a'; commit",
    );
    let (codes, notes) = me.until_ready_notified();
    assert!(codes.is_empty(), "{codes:?}");
    assert_eq!(payloads(&notes), ["a", "b"], "repeats folded, the rolled-back one gone");
    assert_eq!(notes[0].0, me.pid(), "a session hears its own notifications");
    me.query("begin; notify ch, 'never'; rollback");
    assert!(me.until_ready_notified().1.is_empty());
    me.query("notify ch, 'x'; select 1/0");
    let (codes, notes) = me.until_ready_notified();
    assert_eq!(codes, ["22012"]);
    assert!(notes.is_empty(), "the query string was one failed transaction");
    me.query("notify ch");
    assert_eq!(payloads(&me.until_ready_notified().1), [""]);
}

#[test]
fn a_listener_in_a_transaction_hears_after_it_ends() {
    let s = TestServer::start();
    let mut listener = s.run("listen ch");
    listener.query("begin");
    listener.until_ready();
    s.query("notify ch, 'while busy'");
    listener.query("select 1");
    let (_, notes) = listener.until_ready_notified();
    assert!(notes.is_empty(), "not inside a transaction block");
    listener.query("commit");
    let (_, notes) = listener.until_ready_notified();
    assert_eq!(payloads(&notes), ["while busy"]);
}

#[test]
fn listen_and_unlisten_take_effect_at_commit() {
    let s = TestServer::start();
    let mut c = s.run("begin; listen a; listen b; rollback; listen d; listen c");
    // Fails with 22012 unless the channels are as expected.
    let channels_are = |want: &str| {
        format!(
            "select 1 / (select string_agg(c, ',') = '{want}' \
             from pg_listening_channels() c)::int"
        )
    };
    c.query(&channels_are("d,c"));
    assert!(c.until_ready().is_empty(), "the rolled-back LISTENs did not count");
    c.query(&format!("begin; unlisten c; {}", channels_are("d,c")));
    assert!(c.until_ready().is_empty(), "UNLISTEN waits for the commit");
    c.query("commit");
    assert!(c.until_ready().is_empty());
    s.query("notify c, '1'; notify d, '2'");
    c.query(&channels_are("d"));
    let (codes, notes) = c.until_ready_notified();
    assert!(codes.is_empty(), "{codes:?}");
    assert_eq!(payloads(&notes), ["2"], "c was unlistened");
    c.query("unlisten *; notify d, '3'");
    assert!(c.until_ready_notified().1.is_empty());
}

#[test]
fn bad_channels_and_payloads_are_errors() {
    let s = TestServer::start();
    let mut c = s.run("select 1");
    for sql in [
        "select pg_notify('', 'x')".to_string(),
        "select pg_notify(null, 'x')".to_string(),
        format!("select pg_notify('ch', repeat('x', {}))", 8000),
        format!("listen {}", "c".repeat(63)),
    ] {
        c.query(&sql);
        let codes = c.until_ready();
        let want: &[&str] = if sql.starts_with("listen") { &[] } else { &["22023"] };
        assert_eq!(codes, want, "{sql}");
    }
    c.query(&format!("select pg_notify('ch', repeat('x', {}))", 7999));
    assert!(c.until_ready().is_empty(), "7999 bytes fit");
}
