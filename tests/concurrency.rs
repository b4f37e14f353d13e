//! Concurrent clients over tokio-postgres: no lost updates under READ
//! COMMITTED, exactly one winner per unique key, and money is conserved by
//! concurrent transfers (deadlock victims, 40P01, and serialization failures,
//! 40001, are retried as an application would).

use std::time::{Duration, Instant};

use testkit::TestServer;
use tokio_postgres::error::SqlState;

/// Bounds each test's load, whatever the server's speed.
const LOAD_LIMIT: Duration = Duration::from_secs(30);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

#[test]
fn concurrent_increments_are_not_lost() {
    let s = TestServer::start();
    s.query("create table counter (id int primary key, n int not null)");
    s.query("insert into counter values (1, 0)");
    let (clients, rounds) = (6, 100);
    let done: Vec<u32> = runtime().block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..clients {
            let port = s.port;
            tasks.push(tokio::spawn(async move {
                let c = testkit::connect(port).await.expect("connect");
                let deadline = Instant::now() + LOAD_LIMIT;
                let mut ok = 0u32;
                for _ in 0..rounds {
                    if Instant::now() > deadline {
                        break;
                    }
                    let n = c
                        .execute("update counter set n = n + 1 where id = 1", &[])
                        .await
                        .expect("increment");
                    assert_eq!(n, 1);
                    ok += 1;
                }
                ok
            }));
        }
        let mut done = Vec::new();
        for t in tasks {
            done.push(t.await.expect("client task"));
        }
        done
    });
    let total: u32 = done.iter().sum();
    assert_eq!(s.query("select n from counter"), total.to_string(), "lost updates");
}

#[test]
fn one_winner_per_unique_key() {
    let s = TestServer::start();
    s.query("create table claims (k int primary key, who int)");
    let (clients, keys) = (4, 200);
    let wins: Vec<i64> = runtime().block_on(async {
        let mut tasks = Vec::new();
        for who in 0..clients {
            let port = s.port;
            tasks.push(tokio::spawn(async move {
                let c = testkit::connect(port).await.expect("connect");
                let mut wins = 0i64;
                for k in 0..keys {
                    match c.execute("insert into claims values ($1, $2)", &[&k, &who]).await {
                        Ok(1) => wins += 1,
                        Ok(n) => panic!("insert reported {n} rows"),
                        Err(e) => assert_eq!(e.code(), Some(&SqlState::UNIQUE_VIOLATION), "{e}"),
                    }
                }
                wins
            }));
        }
        let mut wins = Vec::new();
        for t in tasks {
            wins.push(t.await.expect("client task"));
        }
        wins
    });
    assert_eq!(wins.iter().sum::<i64>(), keys as i64, "each key has exactly one winner");
    assert_eq!(s.query("select count(*), count(distinct k) from claims"), format!("{keys}|{keys}"));
    for (who, w) in wins.iter().enumerate() {
        assert_eq!(
            s.query(&format!("select count(*) from claims where who = {who}")),
            w.to_string()
        );
    }
}

/// One transfer in its own transaction; `Ok(false)` if it must be retried.
async fn transfer(
    c: &mut tokio_postgres::Client,
    from: i32,
    to: i32,
    amount: i32,
) -> Result<bool, tokio_postgres::Error> {
    let t = c.transaction().await?;
    let step = async {
        t.execute("update bank set bal = bal - $1 where id = $2", &[&amount, &from]).await?;
        t.execute("update bank set bal = bal + $1 where id = $2", &[&amount, &to]).await?;
        Ok::<(), tokio_postgres::Error>(())
    };
    match step.await {
        Ok(()) => t.commit().await.map(|()| true),
        Err(e)
            if e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED)
                || e.code() == Some(&SqlState::T_R_SERIALIZATION_FAILURE) =>
        {
            t.rollback().await?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

#[test]
fn concurrent_transfers_conserve_money() {
    let s = TestServer::start();
    s.query("create table bank (id int primary key, bal int not null)");
    s.query("insert into bank select g, 1000 from generate_series(1, 5) g");
    let committed: u32 = runtime().block_on(async {
        let mut tasks = Vec::new();
        for client in 0..4i32 {
            let port = s.port;
            tasks.push(tokio::spawn(async move {
                let mut c = testkit::connect(port).await.expect("connect");
                let deadline = Instant::now() + LOAD_LIMIT;
                let mut committed = 0;
                // Opposite orders on purpose, so deadlocks do happen.
                for i in 0..60i32 {
                    if Instant::now() > deadline {
                        break;
                    }
                    let (from, to) = ((i + client) % 5 + 1, (i * 3 + client * 2 + 1) % 5 + 1);
                    if from != to && transfer(&mut c, from, to, 1 + i % 7).await.expect("transfer")
                    {
                        committed += 1;
                    }
                }
                committed
            }));
        }
        let mut total = 0;
        for t in tasks {
            total += t.await.expect("client task");
        }
        total
    });
    assert!(committed > 0, "no transfer committed");
    assert_eq!(s.query("select sum(bal), count(*) from bank"), "5000|5");
}

#[test]
fn many_connections_at_once() {
    let s = TestServer::start();
    s.query("create table hits (conn int, n int, primary key (conn, n))");
    let conns = 40;
    let per_conn = 10;
    runtime().block_on(async {
        // Open them all first, so they really are concurrent.
        let mut clients = Vec::new();
        for _ in 0..conns {
            clients.push(testkit::connect(s.port).await.expect("connect"));
        }
        let mut tasks = Vec::new();
        for (i, c) in clients.into_iter().enumerate() {
            let i = i as i32;
            tasks.push(tokio::spawn(async move {
                for n in 0..per_conn {
                    c.execute("insert into hits values ($1, $2)", &[&i, &n]).await.expect("insert");
                }
                let row = c
                    .query_one("select count(*) from hits where conn = $1", &[&i])
                    .await
                    .expect("count");
                assert_eq!(row.get::<_, i64>(0), per_conn as i64);
            }));
        }
        for t in tasks {
            t.await.expect("client task");
        }
    });
    assert_eq!(s.query("select count(*), count(distinct conn) from hits"), "400|40");
}

/// A client that leaves in the middle of a transaction (Terminate, or just
/// closing the socket) loses it: nothing it wrote is visible and its row
/// locks are released.
#[test]
fn abandoned_transactions_roll_back() {
    let s = TestServer::start();
    s.query("create table acct (id int primary key, bal int)");
    s.query("insert into acct values (1, 100), (2, 100)");
    for how in ["terminate", "close"] {
        let mut c = testkit::RawClient::connect(s.port);
        c.query("begin; update acct set bal = 0 where id = 1; insert into acct values (3, 3)");
        assert!(c.until_ready().is_empty());
        if how == "terminate" {
            c.send(b'X', b"");
        }
        drop(c);
        // The lock is released: this update must not wait forever
        // (psql's own timeout would fail the test).
        s.query("set lock_timeout = '10s'; update acct set bal = bal + 1 where id = 1");
        assert_eq!(s.query("select count(*) from acct where id = 3"), "0", "{how}");
    }
    assert_eq!(s.query("select bal from acct where id = 1"), "102");
}

/// An UPDATE ... FROM that waits for rows a concurrent transaction changes
/// joins their newest versions, as PostgreSQL re-evaluates it: the
/// committed change is not lost, and a row that no longer matches the
/// WHERE clause is left alone. DELETE ... USING locks the same way.
#[test]
fn update_from_joins_the_newest_row_version() {
    let s = TestServer::start();
    s.query(
        "create table acc (id int primary key, n int not null); \
         create table bonus (id int, amount int); \
         insert into acc values (1, 0), (2, 0), (3, 0); \
         insert into bonus values (1, 10), (2, 20), (3, 30)",
    );
    runtime().block_on(async {
        let a = testkit::connect(s.port).await.expect("connect");
        let b = testkit::connect(s.port).await.expect("connect");
        a.batch_execute(
            "begin; update acc set n = 5 where id = 1; update acc set n = -1 where id = 2",
        )
        .await
        .expect("first transaction");
        let waiting = tokio::spawn(async move {
            let n = b
                .execute(
                    "update acc set n = acc.n + bonus.amount from bonus \
                     where acc.id = bonus.id and acc.n >= 0",
                    &[],
                )
                .await;
            (b, n)
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        a.batch_execute("commit").await.expect("commit");
        let (b, n) = waiting.await.expect("update task");
        assert_eq!(n.expect("update from"), 2, "rows 1 and 3 updated");
        let deleted = b
            .execute(
                "delete from acc using bonus where acc.id = bonus.id and bonus.amount > 15",
                &[],
            )
            .await
            .expect("delete using");
        assert_eq!(deleted, 2);
    });
    assert_eq!(s.query("select id, n from acc order by id"), "1|15");
}
