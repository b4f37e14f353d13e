//! `strata tenant create|list|set|drop|drain|token`: tenant management through
//! the KV server's admin calls. The running cluster is found by its data
//! directory (`DIR/run/kv.sock` and the secret `DIR/secret`) or by `--kv`
//! with `--secret-file`. `drain` asks the proxy (`DIR/run/proxy.ctl`) to
//! move a tenant's sessions to a fresh SQL process ([`proxy::drain`]).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;
use kvrpc::{AdminClient, KvAddr, Secret, TenantInfo};

/// `strata tenant` arguments.
#[derive(clap::Args)]
pub struct TenantArgs {
    #[command(subcommand)]
    command: TenantCommand,
    /// The data directory `strata start` was given.
    #[arg(long, global = true, default_value = "./strata-data")]
    data_dir: PathBuf,
    /// The KV server (instead of DATA_DIR/run/kv.sock).
    #[arg(long, global = true)]
    kv: Option<KvAddr>,
    /// The KV secret (instead of DATA_DIR/secret).
    #[arg(long, global = true)]
    secret_file: Option<PathBuf>,
}

#[derive(Subcommand)]
enum TenantCommand {
    /// Creates a tenant (with a `postgres` superuser and database).
    Create {
        /// Lower-case letters, digits and hyphens; at most 63 bytes.
        name: String,
    },
    /// Lists tenants: name, id, state, created, last activity, stored bytes,
    /// the limit of SQL processes, SQL pids.
    List {
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Changes a tenant's settings.
    Set {
        /// The tenant.
        name: String,
        /// How many SQL processes may serve it at once (the proxy spreads
        /// new connections over them by load).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
        max_sql_processes: u32,
    },
    /// Moves a tenant's client sessions, live, to a fresh SQL process and
    /// retires the old ones (each session moves between transactions).
    Drain {
        /// The tenant (or --all).
        #[arg(required_unless_present = "all")]
        name: Option<String>,
        /// Every running tenant in turn: a rolling restart of the SQL
        /// processes.
        #[arg(long, conflicts_with = "name")]
        all: bool,
        /// How long a session may take to reach a point where it can move
        /// (outside a transaction); those that do not stay where they are.
        #[arg(long, default_value = "60s", value_parser = crate::parse_duration)]
        wait: std::time::Duration,
    },
    /// Prints the environment a SQL process of the tenant started by hand
    /// needs (`strata sql --tenant NAME`, on another machine say): its KV
    /// token and its proxy token, as `VAR=VALUE` lines. Keep them secret.
    Token {
        /// The tenant.
        name: String,
    },
    /// Drops a tenant and all its data.
    Drop {
        /// The tenant.
        name: String,
        /// Drop it even while clients are connected (they are cut off).
        #[arg(long)]
        force: bool,
    },
}

/// Runs a `strata tenant` command.
pub fn run(args: TenantArgs) -> anyhow::Result<()> {
    crate::runtime()?.block_on(async move {
        let kv = args.kv.clone().unwrap_or_else(|| KvAddr::Unix(args.data_dir.join("run/kv.sock")));
        let secret_file = args.secret_file.clone().unwrap_or_else(|| args.data_dir.join("secret"));
        let secret = Secret::load(&secret_file)
            .with_context(|| format!("reading the KV secret {}", secret_file.display()))?;
        let admin = AdminClient::connect(&kv, &secret.admin_token()).await.map_err(|e| {
            anyhow::anyhow!("cannot reach the KV server at {kv} (is strata running?): {e}")
        })?;
        let mut out = std::io::stdout();
        match args.command {
            TenantCommand::Create { name } => {
                let t = admin.create(&name).await.map_err(clean)?;
                writeln!(out, "created tenant \"{}\" (id {})", t.name, t.id)?;
            }
            TenantCommand::List { json } => {
                let all = admin.list().await.map_err(clean)?;
                if json {
                    writeln!(out, "{}", to_json(&all))?;
                } else {
                    writeln!(
                        out,
                        "{:<24} {:>6} {:<10} {:<20} {:<20} {:>14} {:>8}  sql_pids",
                        "name", "id", "state", "created", "last_active", "stored_bytes", "max_sql"
                    )?;
                    for t in &all {
                        let pids: Vec<String> = t.sql_pids.iter().map(u32::to_string).collect();
                        writeln!(
                            out,
                            "{:<24} {:>6} {:<10} {:<20} {:<20} {:>14} {:>8}  {}",
                            t.name,
                            t.id,
                            state(t),
                            created(t),
                            last_active(t).unwrap_or_else(|| "-".into()),
                            t.stored_bytes,
                            t.max_sql_processes,
                            pids.join(",")
                        )?;
                    }
                }
            }
            TenantCommand::Set { name, max_sql_processes } => {
                let t =
                    admin.set_max_sql_processes(&name, max_sql_processes).await.map_err(clean)?;
                writeln!(
                    out,
                    "tenant \"{}\": max_sql_processes = {}",
                    t.name, t.max_sql_processes
                )?;
                // Fewer than run now: the proxy moves the extra processes'
                // sessions to the others (no proxy here, nothing runs).
                let path = args.data_dir.join("run/proxy.ctl");
                let keep = Some(t.max_sql_processes as usize);
                let wait = std::time::Duration::from_secs(60);
                if let Ok(d) = proxy::drain::request_drain(&path, &name, wait, keep).await {
                    if d.processes > 0 {
                        writeln!(
                            out,
                            "drained {} SQL process(es): {} session(s) moved, {} stayed",
                            d.processes, d.moved, d.stayed
                        )?;
                    }
                }
            }
            TenantCommand::Drain { name, all, wait } => {
                let names = match name {
                    Some(n) if !all => vec![n],
                    _ => admin
                        .list()
                        .await
                        .map_err(clean)?
                        .into_iter()
                        .filter(|t| !t.sql_pids.is_empty())
                        .map(|t| t.name)
                        .collect(),
                };
                let path = args.data_dir.join("run/proxy.ctl");
                for name in names {
                    let d = proxy::drain::request_drain(&path, &name, wait, None)
                        .await
                        .with_context(|| format!("draining tenant \"{name}\""))?;
                    writeln!(
                        out,
                        "tenant \"{name}\": drained {} SQL process(es), {} session(s) moved, {} stayed",
                        d.processes, d.moved, d.stayed
                    )?;
                }
            }
            TenantCommand::Token { name } => {
                let Some(t) = admin.lookup(&name).await.map_err(clean)? else {
                    anyhow::bail!("tenant \"{name}\" does not exist");
                };
                writeln!(out, "{}={}", crate::KV_TOKEN_VAR, secret.tenant_token(t.id))?;
                writeln!(out, "{}={}", crate::PROXY_TOKEN_VAR, secret.proxy_token(t.id))?;
            }
            TenantCommand::Drop { name, force } => {
                admin.drop_tenant(&name, force).await.map_err(clean)?;
                writeln!(out, "dropped tenant \"{name}\"")?;
            }
        }
        Ok(())
    })
}

/// The KV server's message without the error-kind prefix.
fn clean(e: kvapi::Error) -> anyhow::Error {
    match e {
        kvapi::Error::InvalidInput(m) => anyhow::anyhow!("{m}"),
        other => anyhow::anyhow!("{other}"),
    }
}

fn state(t: &TenantInfo) -> &'static str {
    if t.sql_pids.is_empty() {
        "suspended"
    } else {
        "running"
    }
}

/// Microseconds since the epoch as RFC 3339 in UTC.
fn rfc3339(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// The creation time.
fn created(t: &TenantInfo) -> String {
    rfc3339(t.created_micros)
}

/// When it last had a client session (now while it has one); None if
/// never.
fn last_active(t: &TenantInfo) -> Option<String> {
    (t.last_active_micros > 0).then(|| rfc3339(t.last_active_micros))
}

fn to_json(all: &[TenantInfo]) -> String {
    let rows: Vec<serde_json::Value> = all
        .iter()
        .map(|t| {
            serde_json::json!({
                "name": t.name,
                "id": t.id,
                "state": state(t),
                "sql_pids": t.sql_pids,
                "sessions": t.sessions,
                "max_sql_processes": t.max_sql_processes,
                "stored_bytes": t.stored_bytes,
                "created": created(t),
                "last_active": last_active(t),
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}
