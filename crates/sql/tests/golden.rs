//! Golden SQL scripts: every file in `src/testscripts/` runs against a real
//! SQL engine on the in-memory KV engine (no wire protocol in between).
//!
//! Script syntax (goldenscript): `> statement` runs one query string the way
//! a simple-protocol Query message does (all statements, then sync); a
//! `name:` prefix picks the session, so interleaved transactions are written
//! deterministically (`a:> begin` ... `b:> update ...`). Output is one line
//! per row (`v1, v2`), then the command tag, or `ERROR <sqlstate>: <message>`.
//! Regenerate with `UPDATE_GOLDENFILES=1 cargo test -p sql --test golden`.

use std::collections::HashMap;
use std::error::Error;
use std::fmt::Write as _;
use std::sync::Arc;

use kvapi::TenantId;
use sql::{Database, Outcome, Session};

type Client = kv::EmbeddedClient;

struct Runner {
    db: Arc<Database<Client>>,
    rt: tokio::runtime::Runtime,
    sessions: HashMap<String, Session<Client>>,
    _node: kv::KvNode,
}

impl Runner {
    fn new() -> Runner {
        let node = kv::KvNode::memory();
        let db = Database::new(node.client(TenantId::SYSTEM), |p| format!("plain:{p}"));
        let rt =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        Runner { db, rt, sessions: HashMap::new(), _node: node }
    }
}

fn render(v: &sqltypes::Value) -> String {
    if v.is_null() {
        return "NULL".into();
    }
    let mut out = Vec::new();
    sqltypes::text::format_text(v, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

async fn run_query(
    s: &mut Session<Client>,
    sql: &str,
    out: &mut String,
) -> Result<(), Box<dyn Error>> {
    let stmts = match s.prepare(sql, &[]).await {
        Ok(st) => st,
        Err(e) => {
            writeln!(out, "ERROR {}: {}", e.code.code(), e.message)?;
            return Ok(());
        }
    };
    for st in stmts {
        let res = match s.bind(&st, vec![]) {
            Ok(p) => s.execute(&p).await,
            Err(e) => Err(e),
        };
        match res {
            Ok(Outcome::Rows(rows, tag)) => {
                for r in rows {
                    writeln!(out, "{}", r.iter().map(render).collect::<Vec<_>>().join(", "))?;
                }
                writeln!(out, "{tag}")?;
            }
            Ok(Outcome::Command(tag)) => writeln!(out, "{tag}")?,
            Ok(Outcome::Empty) => writeln!(out, "EMPTY")?,
            Ok(Outcome::CopyIn { .. }) | Ok(Outcome::CopyOut { .. }) => {
                writeln!(out, "COPY is tested end to end")?
            }
            Err(e) => {
                writeln!(out, "ERROR {}: {}", e.code.code(), e.message)?;
                break;
            }
        }
        for n in s.take_notices() {
            writeln!(out, "{}: {}", n.severity.as_str(), n.message)?;
        }
    }
    if let Err(e) = s.sync().await {
        writeln!(out, "ERROR {}: {}", e.code.code(), e.message)?;
    }
    Ok(())
}

impl goldenscript::Runner for Runner {
    type Command = goldenscript::Command;

    fn run(
        &mut self,
        command: &goldenscript::Command,
        context: &goldenscript::Context,
    ) -> Result<String, Box<dyn Error>> {
        let name = context.prefix.clone().unwrap_or_else(|| "s".into());
        let db = self.db.clone();
        let session = self.sessions.entry(name).or_insert_with(|| Session::new(db));
        let mut out = String::new();
        self.rt.block_on(run_query(session, &command.name, &mut out))?;
        Ok(out)
    }
}

#[test]
fn golden_scripts() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/testscripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scripts in {}", dir.display());
    for f in files {
        goldenscript::run(&mut Runner::new(), &f)?;
    }
    Ok(())
}
