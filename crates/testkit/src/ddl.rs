//! The scenario of the tests that DDL shows at once: a client runs every
//! kind of statement while another session commits DDL between them.

use tokio_postgres::{Client, SimpleQueryMessage};

/// How the DDL between the client's statements is made.
pub enum DdlSteps {
    /// Create each round's table before the PL/pgSQL probe, fill it after.
    CreateThenFill,
    /// Rename the round's column before the probe (and back at the end of
    /// the round), then create and fill the round's table.
    RenameThenCreate,
}

/// Runs five rounds in which `ddl` (another session, or another SQL
/// process) commits DDL and `client` must see it at its very next
/// statement: a simple query, a prepared one, `select probe()` (a PL/pgSQL
/// function on `t` whose handler catches everything, so a refusal must not
/// reach it as a caught error) and writes; then the same in a READ
/// COMMITTED block. `t` starts as `(id int, v text)` with one row.
pub async fn each_statement_sees_ddl(client: &Client, ddl: impl Fn(&str), steps: DdlSteps) {
    ddl("create function probe() returns text language plpgsql as $$
         begin perform count(*) from t; return 'ok';
         exception when others then return 'caught: ' || sqlerrm; end $$");
    let renames = matches!(steps, DdlSteps::RenameThenCreate);
    let count = client.prepare("select count(*) from t").await.expect("prepare");
    for round in 0..5 {
        let rows = client.simple_query("select * from t").await.expect("select");
        let width = rows.iter().find_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.len()),
            _ => None,
        });
        assert_eq!(width, Some(2 + round), "round {round}: the columns added so far");
        ddl(&format!("alter table t add column c{round} int default {round}"));
        let row = client.query_one(&format!("select c{round} from t"), &[]).await;
        let v: Option<i32> = row.expect("the new column is seen at once").get(0);
        assert_eq!(v, Some(round as i32));
        let n: i64 = client.query_one(&count, &[]).await.expect("count").get(0);
        assert_eq!(n, 1);
        match renames {
            true => ddl(&format!("alter table t rename column c{round} to d{round}")),
            false => ddl(&format!("create table u{round} (x int)")),
        }
        let probe: String = client.query_one("select probe()", &[]).await.expect("probe").get(0);
        assert_eq!(probe, "ok", "round {round}");
        match renames {
            true => ddl(&format!(
                "create table u{round} (x int); insert into u{round} values ({round})"
            )),
            false => ddl(&format!("insert into u{round} values ({round})")),
        }
        client.execute(&format!("insert into u{round} values (10)"), &[]).await.expect("insert");
        let sum = format!("select sum(x)::int8 from u{round}");
        let got: i64 = client.query_one(&sum, &[]).await.expect("sum").get(0);
        assert_eq!(got, round as i64 + 10);
        if renames {
            ddl(&format!("alter table t rename column d{round} to c{round}"));
        }
    }
    // In a block, READ COMMITTED: each statement's own snapshot.
    client.batch_execute("begin").await.expect("begin");
    let _ = client.query("select * from t", &[]).await.expect("select");
    ddl("create table late (x int); insert into late values (7)");
    let x: i32 = client.query_one("select x from late", &[]).await.expect("late table").get(0);
    assert_eq!(x, 7);
    client.batch_execute("commit").await.expect("commit");
}
