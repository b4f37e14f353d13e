//! Durability: every commit acknowledged to a client survives `kill -9` of
//! the server, and no partial transaction is ever visible after restart.
//! (Against PostgreSQL, `kill9` kills the postmaster and all backends at once.)

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use testkit::{check_tpcb_invariants, TestServer};

/// How long the load may run at most (the kill normally ends it after ~1 s).
const LOAD_LIMIT: Duration = Duration::from_secs(30);

/// Single-row autocommit inserts of 1, 2, 3, ...; records each id whose
/// commit was acknowledged, and stops at the first error (the kill).
async fn numbered_commits(port: u16, acked: Arc<Mutex<Vec<i32>>>) {
    let Ok(client) = testkit::connect(port).await else { return };
    let deadline = Instant::now() + LOAD_LIMIT;
    for id in 1.. {
        let payload = format!("row {id}");
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] = [&id, &payload];
        let insert = client.execute("insert into acked values ($1, $2)", &params);
        match tokio::time::timeout(Duration::from_secs(10), insert).await {
            Ok(Ok(1)) => acked.lock().expect("acked ids").push(id),
            _ => return,
        }
        if Instant::now() > deadline {
            return;
        }
    }
}

/// Transactions of 10 rows tagged with the transaction number; records each
/// acknowledged COMMIT.
async fn batch_commits(port: u16, acked: Arc<Mutex<Vec<i32>>>) {
    let Ok(mut client) = testkit::connect(port).await else { return };
    let deadline = Instant::now() + LOAD_LIMIT;
    for txn in 1.. {
        let batch = async {
            let t = client.transaction().await?;
            for k in 0..10i32 {
                t.execute("insert into batches values ($1, $2)", &[&txn, &k]).await?;
            }
            t.commit().await
        };
        match tokio::time::timeout(Duration::from_secs(10), batch).await {
            Ok(Ok(())) => acked.lock().expect("acked txns").push(txn),
            _ => return,
        }
        if Instant::now() > deadline {
            return;
        }
    }
}

#[test]
fn acknowledged_commits_survive_kill9() {
    let mut s = TestServer::start();
    s.query("create table acked (id int primary key, payload text)");
    s.query("create table batches (txn int, k int, primary key (txn, k))");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let rows = Arc::new(Mutex::new(Vec::new()));
    let txns = Arc::new(Mutex::new(Vec::new()));
    let tasks = [
        rt.spawn(numbered_commits(s.port, rows.clone())),
        rt.spawn(batch_commits(s.port, txns.clone())),
    ];
    // About a second of load (longer if nothing was acknowledged yet), then
    // the crash.
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1)
        || (rows.lock().expect("rows").is_empty() && start.elapsed() < LOAD_LIMIT)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    s.kill9();
    for t in tasks {
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(20), t).await });
    }
    let rows = rows.lock().expect("rows").clone();
    let txns = txns.lock().expect("txns").clone();
    assert!(!rows.is_empty(), "nothing was acknowledged before the kill");
    s.restart();

    // Every acknowledged row is there; at most the one in flight beyond it.
    let last = *rows.last().expect("an acknowledged row");
    assert_eq!(rows.len(), last as usize, "acknowledged ids are 1..=n");
    let present: i64 =
        s.query(&format!("select count(*) from acked where id <= {last}")).parse().expect("count");
    assert_eq!(present, last as i64, "acknowledged rows lost after kill -9");
    let beyond: i64 =
        s.query(&format!("select count(*) from acked where id > {last}")).parse().expect("count");
    assert!(beyond <= 1, "{beyond} rows beyond the last acknowledged one (only one was in flight)");

    // Every transaction is all or nothing, and acknowledged ones are all there.
    let partial = s.query(
        "select count(*) from (select txn from batches group by txn having count(*) <> 10) p",
    );
    assert_eq!(partial, "0", "a partial transaction is visible after kill -9");
    let complete: usize = s
        .query(&format!(
            "select count(distinct txn) from batches where txn <= {}",
            txns.last().copied().unwrap_or(0)
        ))
        .parse()
        .expect("count");
    assert_eq!(complete, txns.len(), "acknowledged transactions lost after kill -9");

    // The restarted server takes new writes on top of the recovered data.
    s.query(&format!("insert into acked values ({}, 'after restart')", last + 2));
}

#[test]
fn pgbench_invariants_hold_after_kill9() {
    let mut s = TestServer::start();
    let init = s.pgbench(&["-i", "-s", "1", "-q"]);
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let port = s.port.to_string();
    let mut bench = Command::new("pgbench")
        .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres"])
        .args(["-c", "4", "-j", "2", "-T", "10", "postgres"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pgbench");
    std::thread::sleep(Duration::from_secs(3));
    s.kill9();
    // pgbench exits once its connections fail; -T bounds it anyway.
    let deadline = Instant::now() + Duration::from_secs(20);
    while matches!(bench.try_wait(), Ok(None)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = bench.kill();
    let _ = bench.wait();
    s.restart();
    let rows = check_tpcb_invariants(&s);
    assert!(rows > 0, "no transaction committed before the kill");
    // And again after a second crash with no load: recovery is repeatable.
    s.kill9();
    s.restart();
    assert_eq!(check_tpcb_invariants(&s), rows);
}
