//! psycopg 3 (a real Python driver) over the extended protocol with text and
//! binary formats. The virtualenv is created by scripts/setup; if it is
//! missing the test fails with a clear message rather than skipping.

use std::process::Command;

use testkit::TestServer;

#[test]
fn psycopg_driver_scenario() {
    let home = std::env::var("HOME").expect("HOME");
    let python = std::env::var("STRATA_PYTHON")
        .unwrap_or_else(|_| format!("{home}/.cache/strata-venv/bin/python"));
    assert!(std::path::Path::new(&python).exists(), "{python} missing: run scripts/setup");
    let s = TestServer::start();
    let script = e2e::tests_dir().join("python/test_psycopg.py");
    let out = Command::new(&python)
        .arg("-m")
        .arg("pytest")
        .arg("-q")
        .arg("-p")
        .arg("no:cacheprovider")
        .arg(&script)
        .env("STRATA_PORT", s.port.to_string())
        .output()
        .expect("pytest");
    assert!(
        out.status.success(),
        "psycopg tests failed:\n{}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        s.log_text()
    );
}
