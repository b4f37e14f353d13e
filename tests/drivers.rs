//! Real drivers beyond psycopg, each running an application scenario
//! (`drivers/<driver>/`, see drivers/README.md): asyncpg (binary formats,
//! pg_type introspection), node-postgres, pgx v5 and pgjdbc. Each gets its
//! own server. The scenarios mark what Strata cannot do yet as known
//! failures (printed, not fatal); on PostgreSQL everything must pass.
//! `scripts/setup` installs the drivers (`drivers/setup`). Each driver
//! also connects over TLS to a tenant named by the host name
//! (`drivers/run-tls`).

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

/// Each driver over TLS to the proxy (`drivers/run-tls`, see
/// drivers/README.md): certificate verification against the data
/// directory's self-signed certificate, the tenant named by the SNI host
/// name (`tlsdrv.localhost`), SCRAM, channel binding where the driver can
/// require it, and a wrong host name refused. Strata only: the PostgreSQL
/// of the tests runs without TLS and has no tenants.
#[test]
fn drivers_over_tls() {
    let Some(s) = TestServer::strata_only(&[], "TLS and tenants of the proxy") else { return };
    s.create_tenant("tlsdrv");
    s.query_tenant(
        "tlsdrv",
        "create table tls_probe (v text); insert into tls_probe values ('tlsdrv'); \
         create role tlsuser login password 'tlspw'; grant select on tls_probe to tlsuser",
    );
    let ca = s.data_dir().join("tls/server.crt");
    for driver in ["asyncpg", "node", "pgx", "jdbc"] {
        let mut cmd = Command::new(e2e::tests_dir().join("drivers/run-tls"));
        cmd.arg(driver).arg(s.port.to_string()).arg(&ca);
        let out = run_with_timeout(&mut cmd, None, CLIENT_TIMEOUT);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains(&format!("ok {driver}")),
            "{driver} over TLS failed:\n{stdout}\n{stderr}\nserver log:\n{}",
            s.log_text()
        );
    }
}
