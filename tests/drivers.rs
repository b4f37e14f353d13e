//! Real drivers beyond psycopg, each running an application scenario
//! (`drivers/<driver>/`, see drivers/README.md): asyncpg (binary formats,
//! pg_type introspection), node-postgres, pgx v5 and pgjdbc. Each gets its
//! own server. The scenarios mark what Strata cannot do yet as known
//! failures (printed, not fatal); on PostgreSQL everything must pass.
//! `scripts/setup` installs the drivers (`drivers/setup`).

use std::process::Command;

use testkit::{run_with_timeout, Target, TestServer, CLIENT_TIMEOUT};

fn scenario(driver: &str) {
    let s = TestServer::start();
    let target = match s.target() {
        Target::Strata => "strata",
        Target::Postgres => "postgres",
    };
    let run = e2e::tests_dir().join("drivers/run");
    let mut cmd = Command::new(run);
    cmd.args([driver, &s.port.to_string(), target]);
    let out = run_with_timeout(&mut cmd, None, CLIENT_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Known failures and unexpected passes are reported on stderr by the
    // runner's summary lines; echo them so scripts/test counts them.
    for line in stdout.lines().chain(stderr.lines()) {
        if line.starts_with("known failure") || line.starts_with("UNEXPECTED PASS") {
            eprintln!("{line}");
        }
    }
    assert!(
        out.status.success(),
        "{driver} scenario failed:\n{stdout}\n{stderr}\nserver log:\n{}",
        s.log_text()
    );
}

#[test]
fn asyncpg() {
    scenario("asyncpg");
}

#[test]
fn node_postgres() {
    scenario("node");
}

#[test]
fn pgx() {
    scenario("pgx");
}

#[test]
fn pgjdbc() {
    scenario("jdbc");
}
