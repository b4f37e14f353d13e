//! The Python suites through pytest: psycopg 3 (a real driver: extended
//! protocol with parameters, text and binary formats for every core type,
//! executemany, transactions, SQLSTATE-mapped exceptions and COPY;
//! `python/test_psycopg.py`) and SQLAlchemy 2 over psycopg (ORM models with
//! relationships, create_all, sessions, savepoints, integrity errors and
//! Alembic-style reflection; `python/test_sqlalchemy.py`), Alembic
//! migrations and autogenerate comparisons (`python/test_alembic.py`) and
//! Django 5 over psycopg (`migrate` of the contrib apps and a project app,
//! then an ORM scenario; `python/test_django.py`). The virtualenv comes
//! from scripts/setup (or `$STRATA_PYTHON`); if it is missing the test
//! fails rather than skipping. pytest gets the server's port in
//! `STRATA_PORT` and the target in `STRATA_TEST_TARGET`.

use std::process::Command;

use testkit::{run_with_timeout, Target, TestServer, CLIENT_TIMEOUT};

#[test]
fn psycopg_driver_scenario() {
    run_pytest("python/test_psycopg.py");
}

#[test]
fn sqlalchemy_orm_scenario() {
    run_pytest("python/test_sqlalchemy.py");
}

#[test]
fn alembic_migration_scenario() {
    run_pytest("python/test_alembic.py");
}

#[test]
fn django_orm_scenario() {
    run_pytest("python/test_django.py");
}

/// Runs one pytest file against a fresh server; fails with its report.
fn run_pytest(file: &str) {
    let home = std::env::var("HOME").expect("HOME");
    let python = std::env::var("STRATA_PYTHON")
        .unwrap_or_else(|_| format!("{home}/.cache/strata-venv/bin/python"));
    assert!(std::path::Path::new(&python).exists(), "{python} missing: run scripts/setup");
    let s = TestServer::start();
    let script = e2e::tests_dir().join(file);
    let target = match s.target() {
        Target::Strata => "strata",
        Target::Postgres => "postgres",
    };
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"])
        .arg(&script)
        .env("STRATA_PORT", s.port.to_string())
        .env("STRATA_TEST_TARGET", target);
    let out = run_with_timeout(&mut pytest, None, CLIENT_TIMEOUT);
    let report = String::from_utf8_lossy(&out.stdout);
    // pytest exits 5 when it collected nothing: that is a failure here too.
    assert!(
        out.status.success(),
        "{file} failed:\n{report}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        s.log_text()
    );
    eprintln!("{report}");
}
