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

/// txid_current() keeps growing across a crash: a transaction after the
/// restart gets an id above every committed transaction's. (A read-only
/// transaction's id may come again after a crash, in PostgreSQL too.)
#[test]
fn transaction_ids_keep_growing_after_kill9() {
    let mut s = TestServer::start();
    s.query("create table ids (id bigint)");
    for _ in 0..3 {
        s.query("insert into ids values (txid_current())");
    }
    let before: i64 = s.query("select max(id) from ids").parse().expect("max txid");
    s.kill9();
    s.restart();
    let after: i64 = s.query("select txid_current()").parse().expect("txid");
    assert!(after > before, "{after} after {before}");
}

/// Inserts, updates of an indexed column and deletes in multi-statement
/// transactions, until the connection breaks.
async fn index_churn(port: u16, seed: i32) {
    let Ok(mut client) = testkit::connect(port).await else { return };
    let deadline = Instant::now() + LOAD_LIMIT;
    for i in 0.. {
        let id = seed * 1_000_000 + i;
        let churn = async {
            let t = client.transaction().await?;
            t.execute("insert into idx values ($1, $2, $3)", &[&id, &(i % 17), &format!("r{id}")])
                .await?;
            t.execute("update idx set grp = grp + 1 where id = $1", &[&(id - 3)]).await?;
            t.execute("delete from idx where id = $1", &[&(id - 7)]).await?;
            t.commit().await
        };
        match tokio::time::timeout(Duration::from_secs(10), churn).await {
            Ok(Ok(())) => {}
            _ => return,
        }
        if Instant::now() > deadline {
            return;
        }
    }
}

/// After a crash in the middle of index maintenance, every secondary-index
/// lookup agrees with a full scan: no row without its index entries, no
/// entry without its row.
#[test]
fn secondary_indexes_match_rows_after_kill9() {
    let mut s = TestServer::start();
    s.query("create table idx (id int primary key, grp int not null, name text not null)");
    s.query("create index idx_grp on idx (grp)");
    s.query("create index idx_name on idx (name)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let tasks = [rt.spawn(index_churn(s.port, 1)), rt.spawn(index_churn(s.port, 2))];
    std::thread::sleep(Duration::from_millis(1500));
    s.kill9();
    for t in tasks {
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_secs(20), t).await });
    }
    s.restart();
    let rows: i64 = s.query("select count(*) from idx").parse().expect("count");
    assert!(rows > 0, "nothing committed before the kill");
    // `grp + 0` and `name || ''` cannot use an index: they are full scans.
    let by_index =
        s.query("select grp, count(*) from idx where grp >= 0 group by grp order by grp");
    let by_scan =
        s.query("select grp, count(*) from idx where grp + 0 >= 0 group by grp order by grp");
    assert_eq!(by_index, by_scan, "idx_grp disagrees with the table after kill -9");
    let names = s.query("select name from idx order by id limit 50");
    for name in names.lines() {
        let via_index = s.query(&format!("select count(*) from idx where name = '{name}'"));
        let via_scan = s.query(&format!("select count(*) from idx where name || '' = '{name}'"));
        assert_eq!((via_index.as_str(), via_scan.as_str()), ("1", "1"), "name {name}");
    }
    // The recovered table is fully writable, including its unique index.
    s.query("insert into idx values (-1, 0, 'after restart')");
    let dup = s.psql(&["-c", "insert into idx values (-1, 0, 'again')"]);
    assert!(String::from_utf8_lossy(&dup.stderr).contains("idx_pkey"));
}

/// A graceful stop (SIGTERM; PostgreSQL's fast shutdown) and restart keeps
/// everything, and the server comes back on the same port.
#[test]
fn data_survives_graceful_restart() {
    let mut s = TestServer::start();
    s.query("create table keep (id int primary key, v text)");
    s.query("insert into keep select g, 'v' || g from generate_series(1, 1000) g");
    s.query("create index keep_v on keep (v)");
    s.stop();
    s.restart();
    assert_eq!(s.query("select count(*), sum(id) from keep"), "1000|500500");
    assert_eq!(s.query("select id from keep where v = 'v777'"), "777");
    s.restart();
    s.query("delete from keep where id > 10");
    s.restart();
    assert_eq!(s.query("select count(*) from keep"), "10");
}

/// `kill -9` while a CREATE INDEX over existing rows runs: after restart the
/// index either exists and is complete, or does not exist at all.
#[test]
fn create_index_is_atomic_across_kill9() {
    let mut s = TestServer::start();
    s.query("create table big (id int primary key, v text not null)");
    s.query("insert into big select g, 'v' || g from generate_series(1, 50000) g");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let port = s.port;
    let ddl = rt.spawn(async move {
        let c = testkit::connect(port).await.expect("connect");
        c.batch_execute("create index big_v on big (v)").await.is_ok()
    });
    std::thread::sleep(Duration::from_millis(150));
    s.kill9();
    let acknowledged = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), ddl).await })
        .ok()
        .and_then(|r| r.ok())
        .unwrap_or(false);
    s.restart();
    let again = s.psql(&["-c", "create index big_v on big (v)"]);
    let existed = String::from_utf8_lossy(&again.stderr).contains("already exists");
    assert!(existed || again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert!(existed || !acknowledged, "an acknowledged CREATE INDEX was lost");
    // Either way the index is there now and complete: lookups by index and
    // by full scan agree.
    for v in ["v1", "v25000", "v50000", "v777"] {
        assert_eq!(s.query(&format!("select count(*) from big where v = '{v}'")), "1", "{v}");
    }
    assert_eq!(
        s.query("select count(*) from big where v >= 'v4' and v < 'v5'"),
        s.query("select count(*) from big where v || '' >= 'v4' and v || '' < 'v5'")
    );
    s.query("insert into big values (50001, 'v50001')");
    assert_eq!(s.query("select id from big where v = 'v50001'"), "50001");
}

/// Several crash/recovery cycles in a row, each under pgbench load with more
/// clients than cores, killed at a different moment: recovery must also
/// survive crashing again soon after a recovery.
#[test]
fn repeated_crashes_under_pgbench_load() {
    let mut s = TestServer::start();
    let init = s.pgbench(&["-i", "-s", "1", "-q"]);
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let mut last = 0;
    for (cycle, delay_ms) in [1200u64, 700, 1900].into_iter().enumerate() {
        let port = s.port.to_string();
        let mut bench = Command::new("pgbench")
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "postgres", "-n"])
            .args(["-c", "6", "-j", "2", "-T", "10", "-M", "prepared", "postgres"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgbench");
        std::thread::sleep(Duration::from_millis(delay_ms));
        s.kill9();
        let deadline = Instant::now() + Duration::from_secs(20);
        while matches!(bench.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = bench.kill();
        let _ = bench.wait();
        s.restart();
        let rows = check_tpcb_invariants(&s);
        assert!(rows >= last, "cycle {cycle}: history shrank from {last} to {rows}");
        last = rows;
    }
    assert!(last > 0, "no transaction committed in any cycle");
}

/// Sequence values are never handed out twice: concurrent clients insert
/// into a SERIAL table (each row's id is unique), the server is killed, and
/// after the restart new ids are above every id committed before, although
/// the values the dead process had reserved but not used are skipped.
#[test]
fn serial_ids_stay_unique_across_clients_and_kill9() {
    let mut s = TestServer::start();
    s.query("create table events (id bigserial primary key, who int)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let insert_all = |port: u16, clients: i32, rows: i32| {
        rt.block_on(async move {
            let mut tasks = Vec::new();
            for who in 0..clients {
                tasks.push(tokio::spawn(async move {
                    let c = testkit::connect(port).await.expect("connect");
                    for _ in 0..rows {
                        c.execute("insert into events (who) values ($1)", &[&who])
                            .await
                            .expect("insert");
                    }
                }));
            }
            for t in tasks {
                t.await.expect("client task");
            }
        })
    };
    insert_all(s.port, 4, 50);
    assert_eq!(s.query("select count(*), count(distinct id) from events"), "200|200");
    let before: i64 = s.query("select max(id) from events").parse().expect("max id");
    s.kill9();
    s.restart();
    insert_all(s.port, 2, 20);
    assert_eq!(s.query("select count(*), count(distinct id) from events"), "240|240");
    let old = s.query(&format!("select count(*) from events where id <= {before}"));
    assert_eq!(old, "200", "every id given after the restart exceeds those before ({before})");
}
