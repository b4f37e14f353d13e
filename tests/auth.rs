//! Authentication: loopback trust for roles without a password, and
//! SCRAM-SHA-256 (checked by libpq) for roles with one.
//!
//! That policy is Strata's own (PostgreSQL decides by pg_hba.conf, not by
//! whether a role has a password), so these tests skip the PostgreSQL target.

use std::process::Command;

use testkit::{run_with_timeout, Target, TestServer, CLIENT_TIMEOUT};

/// True (after saying so) when the target is PostgreSQL, whose
/// authentication policy comes from pg_hba.conf instead.
fn skip_on_postgres() -> bool {
    let skip = Target::from_env() == Target::Postgres;
    if skip {
        eprintln!("skipped: Strata's authentication policy, not PostgreSQL's");
    }
    skip
}

fn psql_as(
    s: &TestServer,
    user: &str,
    password: Option<&str>,
    sql: &str,
) -> (bool, String, String) {
    let mut c = Command::new("psql");
    c.args([
        "-X",
        "-w",
        "-h",
        "127.0.0.1",
        "-p",
        &s.port.to_string(),
        "-U",
        user,
        "-d",
        "postgres",
        "-Atc",
        sql,
    ]);
    match password {
        Some(p) => c.env("PGPASSWORD", p),
        None => c.env_remove("PGPASSWORD"),
    };
    c.env("PGCONNECT_TIMEOUT", "10");
    let out = run_with_timeout(&mut c, None, CLIENT_TIMEOUT);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scram_for_roles_with_passwords() {
    if skip_on_postgres() {
        return;
    }
    let s = TestServer::start();
    s.query("create user bob with password 'hunter2'");
    s.query("create role nologin_role");
    let (ok, out, err) = psql_as(&s, "bob", Some("hunter2"), "select current_user");
    assert!(ok, "{err}");
    assert_eq!(out, "bob");
    let (ok, _, err) = psql_as(&s, "bob", Some("wrong"), "select 1");
    assert!(!ok && err.contains("password authentication failed for user \"bob\""), "{err}");
    let (ok, _, err) = psql_as(&s, "bob", None, "select 1");
    assert!(!ok, "a role with a password must not be trusted: {err}");
    // The wrong password does not make the proxy refuse this address: bob
    // logged in from it just before (tests/serverless.rs tests throttling).
    let (ok, _, err) = psql_as(&s, "nologin_role", None, "select 1");
    assert!(!ok && err.contains("not permitted to log in"), "{err}");
    let (ok, _, err) = psql_as(&s, "nobody", None, "select 1");
    assert!(!ok && err.contains("role \"nobody\" does not exist"), "{err}");

    // The superuser can get a password too; it then needs it.
    s.query("alter role postgres password 'topsecret'");
    let (ok, _, _) = psql_as(&s, "postgres", None, "select 1");
    assert!(!ok);
    let (ok, out, err) = psql_as(
        &s,
        "postgres",
        Some("topsecret"),
        "select rolname from pg_roles where rolname !~ '^pg_' order by 1",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "bob\nnologin_role\npostgres");
}

#[test]
fn drop_role() {
    if skip_on_postgres() {
        return;
    }
    let s = TestServer::start();
    s.query("create role temp_role login");
    s.query("drop role temp_role");
    let out = s.psql(&["-Atc", "drop role temp_role"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("role \"temp_role\" does not exist"));
    s.query("drop role if exists temp_role");
    // pg_roles also lists PostgreSQL's predefined pg_* roles.
    assert_eq!(s.query("select count(*) from pg_roles where rolname !~ '^pg_'"), "1");
}

/// The CONNECT privilege is checked at login (PUBLIC holds it until
/// revoked), and COPY needs SELECT to read a table and INSERT to fill it.
/// Runs on both targets: both trust loopback logins without a password.
#[test]
fn connect_and_copy_privileges() {
    let s = TestServer::start();
    s.query("create role reader login; create role stranger login");
    s.query("create table books (id int, title text); insert into books values (1, 'a')");
    s.query("grant select on books to reader");
    let (ok, out, err) = psql_as(&s, "reader", None, "copy books to stdout");
    assert!(ok, "{err}");
    assert_eq!(out, "1\ta");
    let (ok, _, err) = psql_as(&s, "reader", None, "copy books from stdin");
    assert!(!ok);
    assert!(err.contains("permission denied for table books"), "{err}");
    let (ok, _, err) = psql_as(&s, "stranger", None, "copy books to stdout");
    assert!(!ok);
    assert!(err.contains("permission denied for table books"), "{err}");
    // Without CONNECT for PUBLIC, only roles granted it (and superusers)
    // get in.
    s.query("revoke connect on database postgres from public");
    s.query("grant connect on database postgres to reader");
    let (ok, _, err) = psql_as(&s, "stranger", None, "select 1");
    assert!(!ok);
    assert!(err.contains("permission denied for database \"postgres\""), "{err}");
    assert!(err.contains("User does not have CONNECT privilege."), "{err}");
    let (ok, out, err) = psql_as(&s, "reader", None, "select current_user");
    assert!(ok, "{err}");
    assert_eq!(out, "reader");
    let (ok, _, err) = psql_as(&s, "postgres", None, "select 1");
    assert!(ok, "{err}");
}

/// A role that logged in cannot become another by the settings that say
/// who the session is: RESET ALL keeps it, and SET role, SET
/// session_authorization, set_config() and is_superuser are checked or
/// refused. Runs on both targets.
#[test]
fn settings_cannot_change_who_the_session_is() {
    let s = TestServer::start();
    s.query("create role plain login");
    let (ok, out, err) = psql_as(
        &s,
        "plain",
        None,
        "reset all; select current_user, session_user, current_setting('is_superuser')",
    );
    assert!(ok, "{err}");
    assert_eq!(out, "RESET\nplain|plain|off");
    for (sql, want) in [
        (
            "set session_authorization = 'postgres'",
            "permission denied to set session authorization",
        ),
        ("set session authorization postgres", "permission denied to set session authorization"),
        ("set role postgres", "permission denied to set role \"postgres\""),
        ("set role = 'postgres'", "permission denied to set role \"postgres\""),
        (
            "select set_config('role', 'postgres', false)",
            "permission denied to set role \"postgres\"",
        ),
        ("set is_superuser = on", "parameter \"is_superuser\" cannot be changed"),
    ] {
        let (ok, _, err) = psql_as(&s, "plain", None, sql);
        assert!(!ok, "{sql} succeeded");
        assert!(err.contains(want), "{sql}: {err}");
    }
    let (ok, out, err) =
        psql_as(&s, "plain", None, "reset role; reset session authorization; select current_user");
    assert!(ok, "{err}");
    assert_eq!(out, "RESET\nRESET\nplain");
}
