//! The `strata` binary: command-line parsing and wiring only.
//!
//! `strata start` opens the KV node on the data directory, puts a SQL node
//! for the built-in system tenant on top of it through the embedded KV
//! client, and serves the PostgreSQL protocol on TCP and a unix socket. No
//! logic lives here; each piece is its own crate.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kvapi::TenantId;

#[derive(Parser)]
#[command(
    name = "strata",
    version,
    about = "A PostgreSQL-compatible, serverless, multi-tenant SQL database"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs KV and SQL in one process and serves PostgreSQL clients.
    Start(StartArgs),
}

#[derive(clap::Args)]
struct StartArgs {
    /// TCP address to listen on.
    #[arg(long, default_value = "127.0.0.1:5433")]
    listen: SocketAddr,
    /// Directory for the unix socket (DIR/.s.PGSQL.PORT).
    #[arg(long, default_value = "/tmp")]
    socket_dir: PathBuf,
    /// Do not listen on a unix socket.
    #[arg(long)]
    no_unix_socket: bool,
    /// Where data is stored.
    #[arg(long, default_value = "./strata-data")]
    data_dir: PathBuf,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Start(args) => start(args),
    }
}

fn start(args: StartArgs) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        // Deep (but bounded) expression trees are walked recursively, and
        // PL/pgSQL calls nest up to plpgsql::MAX_DEPTH levels, each a
        // deep stack of futures (some hundreds of KB in a debug build).
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    rt.block_on(async move {
        std::fs::create_dir_all(&args.data_dir).with_context(|| format!("creating {}", args.data_dir.display()))?;
        let node = kv::KvNode::open(&args.data_dir.join("kv")).with_context(|| format!("opening data directory {}", args.data_dir.display()))?;
        let backend = Arc::new(sqlnode::SqlNode::new(node.client(), TenantId::SYSTEM));
        backend.init().await.map_err(|e| anyhow::anyhow!("loading the catalog: {e}"))?;
        let unix = if args.no_unix_socket { None } else { Some(args.socket_dir.join(format!(".s.PGSQL.{}", args.listen.port()))) };
        let listeners = wire::Listeners::bind(args.listen, unix.as_deref()).await.context("binding listeners")?;
        tracing::info!(addr = %args.listen, unix = ?unix, data = %args.data_dir.display(), "strata is ready to accept connections");
        tokio::select! {
            r = wire::serve(backend, listeners) => r.context("serving")?,
            _ = shutdown_signal() => tracing::info!("shutting down"),
        }
        if let Some(path) = unix {
            let _ = std::fs::remove_file(path);
        }
        drop(node);
        Ok(())
    })
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else { return std::future::pending().await };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
