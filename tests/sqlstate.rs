//! SQLSTATE codes over the extended protocol (Parse/Bind/Execute through
//! tokio-postgres), where errors can surface at a different step than in a
//! simple Query: at Parse (syntax, unknown table or column), at Bind
//! (parameter conversion, see cancel.rs) or at Execute (constraints, arithmetic). Drivers
//! branch on these codes, so each is checked exactly. The slt files check the
//! same codes over the simple protocol.

use testkit::TestServer;
use tokio_postgres::error::SqlState;
use tokio_postgres::Client;

/// Runs `sql` with `params` through the extended protocol and returns the
/// SQLSTATE it failed with, or panics if it succeeded.
async fn code_of(
    c: &Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> String {
    match c.query(sql, params).await {
        Ok(rows) => panic!("{sql:?} succeeded with {} rows; expected an error", rows.len()),
        Err(e) => match e.code() {
            Some(code) => code.code().to_string(),
            None => panic!("{sql:?} failed without a SQLSTATE: {e}"),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_protocol_error_codes() {
    let s = tokio::task::spawn_blocking(TestServer::start).await.expect("server");
    let c = s.connect().await.expect("connect");
    c.batch_execute(
        "create table t (id int primary key, v int not null, s varchar(3)); \
         insert into t values (1, 1, 'a')",
    )
    .await
    .expect("setup");
    let cases: Vec<(&str, &str, SqlState)> = vec![
        ("select * from t where", "parse", SqlState::SYNTAX_ERROR),
        ("selec 1", "parse", SqlState::SYNTAX_ERROR),
        ("select * from nosuch where 1 = $1", "parse", SqlState::UNDEFINED_TABLE),
        ("select nosuch from t", "parse", SqlState::UNDEFINED_COLUMN),
        ("select nosuch_fn(1)", "parse", SqlState::UNDEFINED_FUNCTION),
        ("insert into t values (1, 2, 'b')", "execute", SqlState::UNIQUE_VIOLATION),
        ("insert into t values (2, null, 'b')", "execute", SqlState::NOT_NULL_VIOLATION),
        ("select 'abc'::int", "execute", SqlState::INVALID_TEXT_REPRESENTATION),
        ("select 32767::int2 + 1::int2", "execute", SqlState::NUMERIC_VALUE_OUT_OF_RANGE),
        ("select 1 / (v - 1) from t", "execute", SqlState::DIVISION_BY_ZERO),
        ("create table t (x int)", "execute", SqlState::DUPLICATE_TABLE),
        ("insert into t values (3, 3, 'long')", "execute", SqlState::STRING_DATA_RIGHT_TRUNCATION),
    ];
    let mut wrong = Vec::new();
    for (sql, step, want) in &cases {
        let got = code_of(&c, sql, &[]).await;
        if got != want.code() {
            wrong.push(format!("{sql:?} (fails at {step}): got {got}, want {}", want.code()));
        }
    }
    assert!(wrong.is_empty(), "wrong SQLSTATEs:\n{}", wrong.join("\n"));
    // A parameter too long for its varchar(n) column is an error, not cut
    // short; an explicit cast of a parameter does cut it.
    let (id, long): (i32, &str) = (9, "toolong");
    assert_eq!(
        code_of(&c, "insert into t values ($1, 1, $2) returning s", &[&id, &long]).await,
        SqlState::STRING_DATA_RIGHT_TRUNCATION.code()
    );
    let row = c.query_one("select $1::varchar(3)", &[&long]).await.expect("explicit cast");
    assert_eq!(row.get::<_, String>(0), "too");
    // (A text parameter the server cannot parse, 22P02 at Bind, is sent as
    // raw bytes in cancel.rs: tokio-postgres checks types client-side.)

    // 25P02: after an error in a transaction block everything is refused
    // until ROLLBACK, then the session works again.
    c.batch_execute("begin").await.expect("begin");
    assert_eq!(code_of(&c, "select 1 / 0", &[]).await, SqlState::DIVISION_BY_ZERO.code());
    assert_eq!(code_of(&c, "select 1", &[]).await, SqlState::IN_FAILED_SQL_TRANSACTION.code());
    let one: i32 = 1;
    assert_eq!(
        code_of(&c, "select v from t where id = $1", &[&one]).await,
        SqlState::IN_FAILED_SQL_TRANSACTION.code()
    );
    c.batch_execute("rollback").await.expect("rollback");
    let row = c.query_one("select v from t where id = $1", &[&one]).await.expect("after rollback");
    assert_eq!(row.get::<_, i32>(0), 1);

    // Constraint errors name the schema, table, column or constraint, as
    // drivers and ORMs read them from the ErrorResponse.
    c.batch_execute("create table ck (id int primary key, n int not null check (n > 0))")
        .await
        .expect("create ck");
    let fields = |e: tokio_postgres::Error| {
        let db = e.as_db_error().expect("a server error").clone();
        let own = |s: Option<&str>| s.map(str::to_string);
        (own(db.schema()), own(db.table()), own(db.column()), own(db.constraint()))
    };
    let some = |s: &str| Some(s.to_string());
    c.execute("insert into ck values (1, 1)", &[]).await.expect("insert");
    let e = c.execute("insert into ck values (1, 2)", &[]).await.expect_err("duplicate");
    assert_eq!(fields(e), (some("public"), some("ck"), None, some("ck_pkey")));
    let e = c.execute("insert into ck values (2, null)", &[]).await.expect_err("null");
    assert_eq!(fields(e), (some("public"), some("ck"), some("n"), None));
    let e = c.execute("insert into ck values (3, -1)", &[]).await.expect_err("check");
    assert_eq!(fields(e), (some("public"), some("ck"), None, some("ck_n_check")));
    tokio::task::spawn_blocking(move || drop(s)).await.expect("stop server");
}
