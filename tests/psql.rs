//! psql scripts: each `psql/<name>.sql` runs through the real psql client
//! against Strata, and its combined output must equal `psql/<name>.out`,
//! which was produced by running the same script against PostgreSQL
//! (`psql/regen.sh <port>`). PostgreSQL is the oracle: never edit the
//! expected files by hand to match Strata.

use std::path::Path;
use std::process::Command;

use testkit::TestServer;

fn run_script(s: &TestServer, dir: &Path, file: &str) -> String {
    let out = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("psql -X -h 127.0.0.1 -p {} -U postgres -d postgres -f {file} 2>&1", s.port))
        .output()
        .expect("psql");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn psql_scripts_match_postgres() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("psql");
    let mut scripts: Vec<String> = std::fs::read_dir(&dir)
        .expect("psql dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sql"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    let mut failures = Vec::new();
    for file in scripts {
        let s = TestServer::start();
        let got = run_script(&s, &dir, &file);
        let want = std::fs::read_to_string(dir.join(file.replace(".sql", ".out")))
            .expect("expected output");
        if got != want {
            let diff: Vec<String> = want
                .lines()
                .zip(got.lines().chain(std::iter::repeat("<missing>")))
                .enumerate()
                .filter(|(_, (w, g))| w != g)
                .take(8)
                .map(|(i, (w, g))| format!("  line {}:\n    want: {w}\n    got:  {g}", i + 1))
                .collect();
            failures.push(format!("{file}:\n{}\n--- full output ---\n{got}", diff.join("\n")));
        }
    }
    assert!(failures.is_empty(), "psql output differs from PostgreSQL's:\n{}", failures.join("\n"));
}
