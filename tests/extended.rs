//! The extended query protocol as a Rust driver uses it (tokio-postgres):
//! prepared statements reused with new parameters, parameter and result
//! types from Describe, binary results for every core type, NULLs, pipelined
//! queries on one connection, portals fetched in chunks, and large results.

use std::time::Duration;

use chrono::{NaiveDate, NaiveDateTime, TimeZone, Utc};
use testkit::TestServer;
use tokio_postgres::types::Type;
use tokio_postgres::Client;

/// Each test's server and connection; the server outlives the client.
async fn setup() -> (TestServer, Client) {
    let s = tokio::task::spawn_blocking(TestServer::start).await.expect("start server");
    let c = s.connect().await.expect("connect");
    (s, c)
}

/// Stops the server off the async threads (stopping waits).
async fn teardown(s: TestServer) {
    tokio::task::spawn_blocking(move || drop(s)).await.expect("stop server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_and_described_types() {
    let (s, c) = setup().await;
    c.batch_execute("create table p (id int8 primary key, name text, score float8)")
        .await
        .expect("create");
    let insert = c.prepare("insert into p values ($1, $2, $3)").await.expect("prepare");
    assert_eq!(insert.params(), &[Type::INT8, Type::TEXT, Type::FLOAT8]);
    for i in 0..100i64 {
        let name = format!("n{i}");
        let n = c.execute(&insert, &[&i, &name, &(i as f64 / 2.0)]).await.expect("insert");
        assert_eq!(n, 1);
    }
    let select = c.prepare("select id, name, score from p where id >= $1 order by id").await;
    let select = select.expect("prepare select");
    let types: Vec<&Type> = select.columns().iter().map(|col| col.type_()).collect();
    assert_eq!(types, vec![&Type::INT8, &Type::TEXT, &Type::FLOAT8]);
    let names: Vec<&str> = select.columns().iter().map(|col| col.name()).collect();
    assert_eq!(names, vec!["id", "name", "score"]);
    let rows = c.query(&select, &[&97i64]).await.expect("query");
    let got: Vec<(i64, String, f64)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    assert_eq!(
        got,
        vec![(97, "n97".into(), 48.5), (98, "n98".into(), 49.0), (99, "n99".into(), 49.5)]
    );
    // Parameter types inferred from context, and a NULL parameter.
    let stmt = c.prepare("select $1::int8 + 1, $2 = name from p where id = 5").await;
    let stmt = stmt.expect("prepare");
    assert_eq!(stmt.params(), &[Type::INT8, Type::TEXT]);
    let row = c.query_one(&stmt, &[&41i64, &None::<String>]).await.expect("query");
    assert_eq!(row.get::<_, i64>(0), 42);
    assert_eq!(row.get::<_, Option<bool>>(1), None);
    let n = c.execute("update p set name = $1 where id < $2", &[&"low", &10i64]).await;
    assert_eq!(n.expect("update"), 10);
    teardown(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_results_for_each_core_type() {
    let (s, c) = setup().await;
    c.batch_execute(
        "set timezone = 'UTC'; \
         create table typed (id int4 primary key, b bool, s int2, i int4, l int8, f float8, \
           t text, v varchar(10), ch char(4), ts timestamp, tz timestamptz, d date, by bytea); \
         insert into typed values (1, true, -2, 2000000000, -9000000000, 0.25, 'héllo', 'var', \
           'ab', '2024-02-29 23:59:59.123456', '2024-02-29 23:59:59+02', '1999-12-31', '\\x00ff'); \
         insert into typed (id) values (2)",
    )
    .await
    .expect("setup");
    let r = c.query_one("select * from typed where id = 1", &[]).await.expect("row");
    assert!(r.get::<_, bool>("b"));
    assert_eq!(r.get::<_, i16>("s"), -2);
    assert_eq!(r.get::<_, i32>("i"), 2_000_000_000);
    assert_eq!(r.get::<_, i64>("l"), -9_000_000_000);
    assert_eq!(r.get::<_, f64>("f"), 0.25);
    assert_eq!(r.get::<_, String>("t"), "héllo");
    assert_eq!(r.get::<_, String>("v"), "var");
    assert_eq!(r.get::<_, String>("ch"), "ab  ");
    let ts = NaiveDate::from_ymd_opt(2024, 2, 29)
        .and_then(|d| d.and_hms_micro_opt(23, 59, 59, 123_456))
        .expect("valid timestamp");
    assert_eq!(r.get::<_, NaiveDateTime>("ts"), ts);
    let tz = Utc.with_ymd_and_hms(2024, 2, 29, 21, 59, 59).single().expect("valid timestamptz");
    assert_eq!(r.get::<_, chrono::DateTime<Utc>>("tz"), tz);
    assert_eq!(r.get::<_, NaiveDate>("d"), NaiveDate::from_ymd_opt(1999, 12, 31).expect("date"));
    assert_eq!(r.get::<_, Vec<u8>>("by"), vec![0u8, 255]);

    // Binary parameters of the same types round-trip through the server.
    let row = c
        .query_one(
            "select $1::timestamp, $2::timestamptz, $3::date, $4::bytea, $5::int2, $6::bool",
            &[&ts, &tz, &NaiveDate::from_ymd_opt(1, 1, 1), &vec![1u8, 2, 3], &7i16, &false],
        )
        .await
        .expect("binary parameters");
    assert_eq!(row.get::<_, NaiveDateTime>(0), ts);
    assert_eq!(row.get::<_, chrono::DateTime<Utc>>(1), tz);
    assert_eq!(row.get::<_, NaiveDate>(2), NaiveDate::from_ymd_opt(1, 1, 1).expect("date"));
    assert_eq!(row.get::<_, Vec<u8>>(3), vec![1u8, 2, 3]);
    assert_eq!((row.get::<_, i16>(4), row.get::<_, bool>(5)), (7, false));

    // Every column NULL except the key.
    let r = c.query_one("select * from typed where id = 2", &[]).await.expect("row");
    assert_eq!(r.get::<_, Option<bool>>("b"), None);
    assert_eq!(r.get::<_, Option<i16>>("s"), None);
    assert_eq!(r.get::<_, Option<f64>>("f"), None);
    assert_eq!(r.get::<_, Option<String>>("ch"), None);
    assert_eq!(r.get::<_, Option<Vec<u8>>>("by"), None);
    assert_eq!(r.get::<_, Option<NaiveDate>>("d"), None);
    assert_eq!(r.get::<_, Option<String>>("t"), None);
    assert_eq!(r.get::<_, Option<i64>>("l"), None);
    assert_eq!(r.get::<_, Option<NaiveDateTime>>("ts"), None);
    teardown(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_queries_on_one_connection() {
    let (s, c) = setup().await;
    // tokio-postgres pipelines concurrent queries on one connection: all
    // Parse/Bind/Execute messages go out before the answers come back, and
    // each answer must reach the right query.
    let queries = (0..50i32).map(|i| {
        let c = &c;
        async move {
            let row = c.query_one("select $1::int4 * 2, $2::text", &[&i, &format!("q{i}")]).await;
            let row = row.expect("pipelined query");
            (row.get::<_, i32>(0), row.get::<_, String>(1))
        }
    });
    let got = futures::future::join_all(queries).await;
    for (i, (doubled, text)) in got.into_iter().enumerate() {
        assert_eq!((doubled, text), (i as i32 * 2, format!("q{i}")));
    }
    // An error in the middle of a pipeline fails only its own query.
    let ok1 = c.query_one("select 1::int4", &[]);
    let bad = c.query_one("select 1 / 0", &[]);
    let ok2 = c.query_one("select 2::int4", &[]);
    let (ok1, bad, ok2) = tokio::join!(ok1, bad, ok2);
    assert_eq!(ok1.expect("first").get::<_, i32>(0), 1);
    assert!(bad.is_err());
    assert_eq!(ok2.expect("third").get::<_, i32>(0), 2);
    teardown(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portals_and_large_results() {
    let (s, mut c) = setup().await;
    // A portal read 1000 rows at a time inside a transaction.
    let t = c.transaction().await.expect("begin");
    let portal = t
        .bind("select g, 'row ' || g from generate_series(1, 5500) g", &[])
        .await
        .expect("bind portal");
    let mut seen = 0i32;
    let mut chunks = 0;
    loop {
        let rows = t.query_portal(&portal, 1000).await.expect("fetch");
        if rows.is_empty() {
            break;
        }
        for r in &rows {
            seen += 1;
            assert_eq!(r.get::<_, i32>(0), seen);
        }
        chunks += 1;
        assert!(chunks <= 6, "more chunks than rows allow");
    }
    assert_eq!((seen, chunks), (5500, 6));
    t.commit().await.expect("commit");

    // 200k rows in one result, streamed.
    let rows = tokio::time::timeout(
        Duration::from_secs(60),
        c.query("select g, g * 2 from generate_series(1, 200000) g", &[]),
    )
    .await
    .expect("large result in time")
    .expect("large result");
    assert_eq!(rows.len(), 200_000);
    let sum: i64 = rows.iter().map(|r| r.get::<_, i32>(1) as i64).sum();
    assert_eq!(sum, 200_000 * 200_001);
    teardown(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_all_rows_have_the_described_columns() {
    let (s, c) = setup().await;
    c.batch_execute("set time zone 'Europe/Paris'").await.expect("set");
    let rows = c.query("show all", &[]).await.expect("show all");
    let names: Vec<&str> = rows[0].columns().iter().map(|col| col.name()).collect();
    assert_eq!(names, vec!["name", "setting", "description"]);
    let zone = rows.iter().find(|r| r.get::<_, &str>(0) == "TimeZone").expect("TimeZone row");
    assert_eq!(zone.get::<_, &str>(1), "Europe/Paris");
    teardown(s).await;
}

/// Each message up to ReadyForQuery, in short: its type, and the first
/// field of a DataRow, the tag of a CommandComplete, the SQLSTATE of an
/// ErrorResponse.
fn replies(c: &mut testkit::RawClient) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let (tag, body) = c.read_message();
        let text = |b: &[u8]| String::from_utf8_lossy(b).trim_end_matches('\0').to_string();
        seen.push(match tag {
            b'D' => {
                let len = i32::from_be_bytes([body[2], body[3], body[4], body[5]]) as usize;
                format!("D {}", text(&body[6..6 + len]))
            }
            b'C' => format!("C {}", text(&body)),
            b'E' => {
                let code = body.split(|b| *b == 0).find(|f| f.first() == Some(&b'C'));
                format!("E {}", code.map(|f| text(&f[1..])).unwrap_or_default())
            }
            _ => (tag as char).to_string(),
        });
        if tag == b'Z' {
            return seen;
        }
    }
}

/// A SQL FETCH or MOVE that names a protocol-level portal reaches it: in
/// PostgreSQL the two are one namespace (asyncpg's `Cursor.forward` sends
/// `MOVE FORWARD n "<portal>"`). The portal goes on where either left it,
/// and cannot go backward (55000).
#[test]
fn sql_fetch_and_move_reach_a_protocol_portal() {
    let s = TestServer::start();
    let mut c = testkit::RawClient::connect(s.port);
    c.query("begin");
    assert_eq!(replies(&mut c), ["C BEGIN", "Z"]);
    c.send(b'P', b"\0select g from generate_series(1, 12) g\0\0\0");
    c.send(b'B', b"cur\0\0\0\0\0\0\0\0");
    c.send(b'E', b"cur\0\0\0\0\x02");
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["1", "2", "D 1", "D 2", "s", "Z"]);
    c.query("fetch 3 from cur");
    assert_eq!(replies(&mut c), ["T", "D 3", "D 4", "D 5", "C FETCH 3", "Z"]);
    c.query("move 2 in cur; fetch next from \"cur\"");
    assert_eq!(replies(&mut c), ["C MOVE 2", "T", "D 8", "C FETCH 1", "Z"]);
    c.send(b'E', b"cur\0\0\0\0\x01");
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["D 9", "s", "Z"]);
    c.query("move forward all in cur");
    assert_eq!(replies(&mut c), ["C MOVE 3", "Z"]);
    c.query("fetch all from cur");
    assert_eq!(replies(&mut c), ["T", "C FETCH 0", "Z"]);
    c.query("fetch 1 from nosuch");
    assert_eq!(replies(&mut c), ["E 34000", "Z"]);
    c.query("rollback");
    assert_eq!(replies(&mut c), ["C ROLLBACK", "Z"]);

    c.query("begin");
    assert_eq!(replies(&mut c), ["C BEGIN", "Z"]);
    c.send(b'P', b"\0select g from generate_series(1, 12) g\0\0\0");
    c.send(b'B', b"cur\0\0\0\0\0\0\0\0");
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["1", "2", "Z"]);
    c.query("fetch backward 1 from cur");
    assert_eq!(replies(&mut c), ["E 55000", "Z"]);
    c.query("rollback");
    assert_eq!(replies(&mut c), ["C ROLLBACK", "Z"]);
}

/// SQL DEALLOCATE drops a protocol-level prepared statement of that name
/// (one namespace with PREPARE, as in PostgreSQL; psycopg drops its
/// statements this way), DEALLOCATE ALL drops them all, and an unknown
/// name is 26000.
#[test]
fn sql_deallocate_drops_protocol_statements() {
    let s = TestServer::start();
    let mut c = testkit::RawClient::connect(s.port);
    for name in ["ps1", "ps2", "ps3"] {
        c.send(b'P', format!("{name}\0select 1\0\0\0").as_bytes());
    }
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["1", "1", "1", "Z"]);
    c.query("deallocate ps1; deallocate prepare ps2");
    assert_eq!(replies(&mut c), ["C DEALLOCATE", "C DEALLOCATE", "Z"]);
    c.send(b'B', b"\0ps1\0\0\0\0\0\0\0");
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["E 26000", "Z"]);
    c.query("deallocate nosuch");
    assert_eq!(replies(&mut c), ["E 26000", "Z"]);
    c.query("prepare mine as select 2; deallocate all");
    assert_eq!(replies(&mut c), ["C PREPARE", "C DEALLOCATE ALL", "Z"]);
    c.send(b'B', b"\0ps3\0\0\0\0\0\0\0");
    c.send(b'S', b"");
    assert_eq!(replies(&mut c), ["E 26000", "Z"]);
    c.query("execute mine");
    assert_eq!(replies(&mut c), ["E 26000", "Z"]);
}
