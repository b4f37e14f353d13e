//! pgbench end to end: both initialization modes, the TPC-B-like script in
//! every protocol mode with the balance invariants checked after each run,
//! and the select-only script.

use testkit::{check_tpcb_invariants, pgbench_number, TestServer};

fn run_ok(s: &TestServer, args: &[&str]) -> String {
    let out = s.pgbench(args);
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "pgbench {args:?} failed:\n{text}\nserver log:\n{}",
        s.log_text()
    );
    text
}

#[test]
fn tpcb_in_every_protocol_mode_keeps_invariants() {
    let s = TestServer::start();
    run_ok(&s, &["-i", "-s", "2", "-q"]);
    assert_eq!(s.query("select count(*) from pgbench_accounts"), "200000");
    // -n: no vacuum, so pgbench_history is not truncated between runs and the
    // invariants hold cumulatively.
    let mut total = 0;
    for mode in ["simple", "extended", "prepared"] {
        let text = run_ok(&s, &["-n", "-c", "4", "-j", "2", "-T", "5", "-M", mode]);
        let processed = pgbench_number(&text, "number of transactions actually processed:")
            .expect("processed count");
        let failed = pgbench_number(&text, "number of failed transactions:")
            .expect("pgbench 15 reports failed transactions");
        assert!(processed > 0, "{mode}: no transactions\n{text}");
        assert_eq!(failed, 0, "{mode}: failed transactions\n{text}");
        total += processed;
        assert_eq!(check_tpcb_invariants(&s), total, "{mode}: history rows != transactions");
    }
}

#[test]
fn server_side_generation_and_select_only() {
    let s = TestServer::start();
    run_ok(&s, &["-i", "-I", "dtGvp", "-s", "1"]);
    assert_eq!(s.query("select count(*) from pgbench_accounts"), "100000");
    assert_eq!(s.query("select count(*) from pgbench_tellers"), "10");
    assert_eq!(s.query("select count(*), sum(bid) from pgbench_branches"), "1|1");
    let text = run_ok(&s, &["-S", "-c", "4", "-j", "2", "-T", "3", "-M", "prepared"]);
    assert!(
        pgbench_number(&text, "number of transactions actually processed:").unwrap_or(0) > 0,
        "{text}"
    );
    // The table really has a primary key now.
    let dup = s.psql(&["-Atc", "insert into pgbench_accounts values (1, 1, 0, '')"]);
    assert!(String::from_utf8_lossy(&dup.stderr)
        .contains("duplicate key value violates unique constraint \"pgbench_accounts_pkey\""));
}
