//! sqllogictest runner: every `slt/*.slt` file runs as its own test against
//! a fresh server (Strata, or PostgreSQL with `STRATA_TEST_TARGET=postgres`),
//! through tokio-postgres' simple query protocol, so values arrive exactly as
//! psql would print them.
//!
//! PostgreSQL 15 is the oracle: every expected result and error was produced
//! by running the file against it, and CI runs these files against it too.
//! Never edit an expectation by hand to match Strata.
//!
//! Conventions:
//! - NULL prints as `NULL`, an empty string as `(empty)`.
//! - An error renders as `<SQLSTATE>: <message>`, so one regex checks both:
//!   `statement error 42P01: relation "nosuch" does not exist`. The bare form
//!   `statement error (42P01)` checks only the code.
//! - A record Strata cannot pass yet follows a comment
//!   `# known-failure(strata): <why>`: it still runs on Strata, its failure is
//!   only reported; once it passes the run prints `UNEXPECTED PASS` (remove
//!   the marker then; `STRATA_STRICT_KNOWN_FAILURES=1` makes that a failure).
//!   It must pass on PostgreSQL like any other record. A whole file for a
//!   missing feature says `# known-failure-file(strata): <why>` at its top.
//! - The label `strata` or `postgres` is set, for the rare `skipif`/`onlyif`.
//!
//! `UPDATE_GOLDENFILES=1 STRATA_TEST_TARGET=postgres cargo test -p e2e --test slt`
//! rewrites the expected results from PostgreSQL (refused for Strata). Review
//! the diff: regeneration also spells out code-only `statement error (CODE)`
//! records with their message, which is rarely wanted.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqllogictest::harness::{run, Arguments, Failed, Trial};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType, Record, Runner};
use testkit::{Target, TestServer};
use tokio_postgres::SimpleQueryMessage;

/// How long one statement may take before the file fails.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// A failed statement: SQLSTATE and message, or a client-side failure.
#[derive(Debug)]
struct SltError {
    code: Option<String>,
    message: String,
}

impl std::fmt::Display for SltError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{code}: {}", self.message),
            None => write!(f, "client error: {}", self.message),
        }
    }
}

impl std::error::Error for SltError {}

impl From<tokio_postgres::Error> for SltError {
    fn from(e: tokio_postgres::Error) -> SltError {
        match e.as_db_error() {
            Some(db) => SltError {
                code: Some(db.code().code().to_string()),
                message: db.message().to_string(),
            },
            None => SltError { code: None, message: e.to_string() },
        }
    }
}

/// One sqllogictest connection over tokio-postgres.
struct Conn {
    client: tokio_postgres::Client,
}

impl Conn {
    async fn connect(port: u16) -> Result<Conn, SltError> {
        Ok(Conn { client: testkit::connect(port).await? })
    }
}

#[async_trait::async_trait]
impl AsyncDB for Conn {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SltError> {
        let messages = tokio::time::timeout(STATEMENT_TIMEOUT, self.client.simple_query(sql))
            .await
            .map_err(|_| SltError {
                code: None,
                message: format!("statement timed out after {STATEMENT_TIMEOUT:?}"),
            })??;
        // A multi-statement string reports its last statement's result.
        let mut columns: Option<usize> = None;
        let mut rows = Vec::new();
        let mut count = 0;
        for m in messages {
            match m {
                SimpleQueryMessage::RowDescription(cols) => {
                    columns = Some(cols.len());
                    rows.clear();
                }
                SimpleQueryMessage::Row(row) => {
                    let values = (0..row.len())
                        .map(|i| match row.get(i) {
                            None => "NULL".to_string(),
                            Some("") => "(empty)".to_string(),
                            Some(v) => v.to_string(),
                        })
                        .collect();
                    rows.push(values);
                }
                SimpleQueryMessage::CommandComplete(n) => count = n,
                _ => {}
            }
        }
        Ok(match columns {
            Some(n) => DBOutput::Rows { types: vec![DefaultColumnType::Any; n], rows },
            None => DBOutput::StatementComplete(count),
        })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "postgres-wire"
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await;
    }

    fn error_sql_state(err: &SltError) -> Option<String> {
        err.code.clone()
    }
}

/// The comment that marks the next record as failing on Strata for a known
/// reason (a missing feature or a reported bug): `# known-failure(strata): why`.
const KNOWN_FAILURE: &str = "known-failure(strata):";

/// The comment that marks a whole file as a feature Strata lacks so far:
/// `# known-failure-file(strata): why`. On Strata its failures are reported
/// as one known failure; on PostgreSQL it must pass.
const KNOWN_FAILURE_FILE: &str = "known-failure-file(strata):";

/// Runs every record of a file, going on after a failure (so one run shows
/// all of a file's failures, though later ones may follow from earlier ones),
/// and returns the failures.
///
/// A record right after a `# known-failure(strata): <why>` comment still runs
/// on Strata, but its failure is only reported. If it passes, the run prints
/// `UNEXPECTED PASS` (and fails with `STRATA_STRICT_KNOWN_FAILURES=1`), so
/// stale markers get noticed without turning an engine fix into a red CI. On
/// PostgreSQL the marker means nothing: the record must pass.
async fn run_all_records<M: sqllogictest::MakeConnection<Conn = Conn>>(
    runner: &mut Runner<Conn, M>,
    path: &Path,
    target: Target,
) -> Result<(), String> {
    let records = sqllogictest::parse_file(path).map_err(|e| e.to_string())?;
    let mut failures = Vec::new();
    let mut known: Option<String> = None;
    let mut file_known: Option<String> = None;
    let strict = std::env::var_os("STRATA_STRICT_KNOWN_FAILURES").is_some();
    for record in records {
        match &record {
            Record::Comment(lines) => {
                let file_marker =
                    lines.iter().find_map(|l| l.trim().strip_prefix(KNOWN_FAILURE_FILE));
                if let Some(why) = file_marker.filter(|_| target == Target::Strata) {
                    file_known = Some(why.trim().to_string());
                }
                let marker = lines.iter().find_map(|l| l.trim().strip_prefix(KNOWN_FAILURE));
                known = marker.map(|why| why.trim().to_string()).or(known);
                continue;
            }
            Record::Newline => {
                known = None;
                continue;
            }
            _ => {}
        }
        let known = known.take().filter(|_| target == Target::Strata);
        let loc = record_location(&record);
        match (runner.run_async(record).await, known) {
            (Ok(_), None) => {}
            (Err(e), None) => failures.push(e.display(true).to_string()),
            (Err(_), Some(why)) => eprintln!("known failure at {loc}: {why}"),
            (Ok(_), Some(why)) => {
                let msg = format!("{loc} is marked `{KNOWN_FAILURE} {why}` but passes now");
                if strict {
                    failures.push(format!("{msg}: remove the marker\n"));
                } else {
                    eprintln!("UNEXPECTED PASS: {msg} (remove the marker)");
                }
            }
        }
    }
    let file = path.display();
    match (file_known, failures.is_empty()) {
        (None, true) => Ok(()),
        (None, false) => {
            Err(format!("{} failing records:\n\n{}", failures.len(), failures.join("\n")))
        }
        (Some(why), false) => {
            eprintln!("known failure: {file} ({} failing records): {why}", failures.len());
            Ok(())
        }
        (Some(why), true) if strict => {
            Err(format!("{file} is marked `{KNOWN_FAILURE_FILE} {why}` but passes now"))
        }
        (Some(why), true) => {
            eprintln!("UNEXPECTED PASS: {file} is marked `{KNOWN_FAILURE_FILE} {why}` (remove it)");
            Ok(())
        }
    }
}

/// `file:line` of a statement or query record, for messages.
fn record_location(record: &Record<DefaultColumnType>) -> String {
    match record {
        Record::Statement { loc, .. } | Record::Query { loc, .. } => loc.to_string(),
        _ => "a record".to_string(),
    }
}

/// Runs (or, with `UPDATE_GOLDENFILES=1`, regenerates) one file on its own
/// server.
fn run_file(path: &Path) -> Result<(), Failed> {
    let target = Target::from_env();
    let update = std::env::var_os("UPDATE_GOLDENFILES").is_some();
    if update && target != Target::Postgres {
        return Err("UPDATE_GOLDENFILES is only allowed with STRATA_TEST_TARGET=postgres \
                    (PostgreSQL is the oracle)"
            .into());
    }
    let mut server = TestServer::start_target(target);
    let port = server.port;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = rt.block_on(async {
        let mut runner = Runner::new(move || Conn::connect(port));
        runner.add_label(match target {
            Target::Strata => "strata",
            Target::Postgres => "postgres",
        });
        if update {
            runner
                .update_test_file(
                    path,
                    " ",
                    sqllogictest::default_validator,
                    sqllogictest::default_normalizer,
                    sqllogictest::default_column_validator,
                )
                .await
                .map_err(|e| e.to_string())
        } else {
            run_all_records(&mut runner, path, target).await
        }
    });
    let alive = server.is_alive();
    match (result, alive) {
        (Ok(()), true) => Ok(()),
        (Ok(()), false) => Err(format!("server died; log:\n{}", server.log_text()).into()),
        (Err(e), alive) => {
            let log = server.log_text();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            Err(format!("{e}\nserver alive: {alive}; log tail:\n{}", tail.join("\n")).into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let dir = e2e::tests_dir().join("slt");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/slt directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "slt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .slt files in {}", dir.display());
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            Trial::test(name.unwrap_or_default(), move || run_file(&path))
        })
        .collect();
    run(&args, trials).exit();
}
