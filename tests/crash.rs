//! Durability: commits acknowledged to a client survive `kill -9`, and no
//! partial transaction is ever visible after restart.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::{check_tpcb_invariants, TestServer};

/// Feeds numbered single-row commits through one psql session and records
/// which ones psql echoed back as done (each echo follows the COMMIT's
/// ReadyForQuery), then kills the server mid-stream.
#[test]
fn acknowledged_commits_survive_kill9() {
    let mut s = TestServer::start();
    s.query("create table acked (id int primary key, payload text)");
    s.query("create table batches (txn int, n int)");
    let port = s.port.to_string();
    let mut child = Command::new("psql")
        .args([
            "-X",
            "-q",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-At",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("psql");
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        for i in 1..=20_000 {
            // One autocommit insert, then a 10-row transaction, each acknowledged by a select.
            let script = format!(
                "insert into acked values ({i}, 'row {i}');\nselect 'ack {i}';\nbegin;\n{}commit;\nselect 'txn {i}';\n",
                (0..10).map(|k| format!("insert into batches values ({i}, {k});\n")).collect::<String>()
            );
            if stdin.write_all(script.as_bytes()).is_err() {
                break;
            }
        }
    });
    let stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut acked = 0u32;
        let mut txns = 0u32;
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(n) = line.strip_prefix("ack ") {
                acked = n.parse().unwrap_or(acked);
            } else if let Some(n) = line.strip_prefix("txn ") {
                txns = n.parse().unwrap_or(txns);
            }
        }
        (acked, txns)
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        if s.query("select count(*) from acked").parse::<u32>().unwrap_or(0) >= 200 {
            break;
        }
    }
    s.kill9();
    let _ = child.kill();
    let _ = child.wait();
    let _ = feeder.join();
    let (acked, txns) = reader.join().expect("reader");
    assert!(acked > 0, "nothing was acknowledged before the kill");
    s.restart();
    let present: u32 =
        s.query(&format!("select count(*) from acked where id <= {acked}")).parse().expect("count");
    assert_eq!(present, acked, "acknowledged rows lost after kill -9");
    // Every transaction is all or nothing, and acknowledged ones are all there.
    let partial = s.query(
        "select count(*) from (select txn from batches group by txn having count(*) <> 10) p",
    );
    assert_eq!(partial, "0", "a partial transaction is visible");
    let complete: u32 = s
        .query(&format!("select count(distinct txn) from batches where txn <= {txns}"))
        .parse()
        .expect("count");
    assert_eq!(complete, txns, "acknowledged transactions lost");
}

#[test]
fn pgbench_invariants_hold_after_kill9() {
    let mut s = TestServer::start();
    let init = s.pgbench(&["-i", "-s", "1", "-q"]);
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let port = s.port.to_string();
    let mut bench = Command::new("pgbench")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-U",
            "postgres",
            "-c",
            "4",
            "-j",
            "2",
            "-T",
            "20",
            "postgres",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pgbench");
    std::thread::sleep(Duration::from_secs(3));
    s.kill9();
    let _ = bench.kill();
    let _ = bench.wait();
    s.restart();
    let rows = check_tpcb_invariants(&s);
    assert!(rows > 0, "no transaction committed before the kill");
}
