//! The `strata` binary: command-line parsing and wiring only.
//!
//! One binary, one OS process per part:
//!
//! - `strata start` runs the whole system on one machine: a supervisor
//!   ([`supervisor`]) that starts `strata kv` and `strata proxy` as child
//!   processes and restarts either when it dies; the proxy keeps a warm
//!   pool of tenant-less `strata sql --pool` processes and binds one to each
//!   tenant that wakes up. `strata start --single-process` keeps the old
//!   all-in-one server (KV and SQL of the default tenant in one process).
//! - `strata kv` is the shared KV server, `strata sql` one tenant's SQL
//!   process, `strata proxy` the front door.
//! - `strata tenant create|list|drop` manage tenants through the KV server.
//!
//! No logic lives here beyond connecting the crates: the KV server is
//! `kv::KvServer`, the RPC client `kvrpc::RpcClient`, the SQL process
//! `sqlnode::SqlNode`, the proxy `proxy::Proxy`.

use std::io::Write;
use std::net::SocketAddr;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use kvrpc::{KvAddr, Secret};

/// Every process of the binary allocates through mimalloc: glibc malloc's
/// chunk unlinking and consolidation were ~14% of the CPU of a simple-protocol
/// read benchmark.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Starts and restarts the processes of `strata start`.
mod supervisor;
/// `strata tenant ...`.
mod tenant;

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
    /// Runs everything on this machine (KV server, proxy, SQL processes)
    /// and serves PostgreSQL clients.
    Start(StartArgs),
    /// Runs the shared KV server.
    Kv(KvArgs),
    /// Runs one tenant's SQL process.
    Sql(SqlArgs),
    /// Runs the proxy that routes clients to their tenant's SQL process.
    Proxy(ProxyArgs),
    /// Creates, lists and drops tenants.
    Tenant(tenant::TenantArgs),
}

/// Where PostgreSQL clients connect (`strata start` and `strata proxy`).
#[derive(clap::Args, Clone)]
struct PgListen {
    /// TCP address to listen on.
    #[arg(long, default_value = "127.0.0.1:5433")]
    listen: SocketAddr,
    /// Directory for the unix socket (DIR/.s.PGSQL.PORT).
    #[arg(long, default_value = "/tmp")]
    socket_dir: PathBuf,
    /// Do not listen on a unix socket.
    #[arg(long)]
    no_unix_socket: bool,
}

impl PgListen {
    /// The unix socket path, unless turned off.
    fn unix_path(&self) -> Option<PathBuf> {
        (!self.no_unix_socket)
            .then(|| self.socket_dir.join(format!(".s.PGSQL.{}", self.listen.port())))
    }
}

#[derive(clap::Args, Clone)]
struct StartArgs {
    #[command(flatten)]
    pg: PgListen,
    /// Where data is stored.
    #[arg(long, default_value = "./strata-data")]
    data_dir: PathBuf,
    /// Run KV and SQL (of the default tenant only) in this one process, as
    /// before the split; for comparison in benchmarks.
    #[arg(long)]
    single_process: bool,
    /// The proxy forwards every client's bytes for the whole session
    /// instead of handing its socket to the SQL process.
    #[arg(long)]
    forward: bool,
    #[command(flatten)]
    serverless: Serverless,
}

#[derive(clap::Args)]
struct KvArgs {
    /// Where data is stored (RocksDB in DIR/kv, the secret in DIR/secret).
    #[arg(long, default_value = "./strata-data")]
    data_dir: PathBuf,
    /// TCP address to serve the KV RPC on.
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Unix socket to serve the KV RPC on.
    #[arg(long)]
    unix: Option<PathBuf>,
    /// Serve TCP connections over TLS only (SQL processes and proxies on
    /// other machines then give `--kv tls:HOST:PORT@CA-FILE`); the unix
    /// socket stays plain. The certificate is --tls-cert/--tls-key, or a
    /// self-signed one made in DATA/tls (for localhost and 127.0.0.1).
    #[arg(long)]
    tls: bool,
    /// The certificate (PEM) the KV server presents, with --tls-key.
    #[arg(long, requires_all = ["tls_key", "tls"])]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, requires_all = ["tls_cert", "tls"])]
    tls_key: Option<PathBuf>,
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("tcp").multiple(true).args(["listen", "proxy_listen"])))]
struct SqlArgs {
    /// The KV server: host:port, tls:HOST:PORT@CA-FILE (a `strata kv
    /// --tls` whose certificate chains to CA-FILE), or a unix socket path.
    #[arg(long)]
    kv: KvAddr,
    /// The tenant this process serves. Its KV token comes from the
    /// environment variable STRATA_KV_TOKEN.
    #[arg(long, required_unless_present_any = ["pool", "fork_server"], conflicts_with_all = ["pool", "fork_server"])]
    tenant: Option<String>,
    /// Start with no tenant, print `ready`, and wait for the proxy to bind
    /// this process to one (a line on standard input; see proxy::control).
    /// With STRATA_KV_POOL_TOKEN set, it connects to the KV server before
    /// it says `ready`, and the bind reuses that connection.
    #[arg(long)]
    pool: bool,
    /// Warm up, then fork a process like `--pool` for each request on
    /// standard input, a unix socket from the proxy (see proxy::fork).
    #[arg(long, conflicts_with = "pool")]
    fork_server: bool,
    /// Unix socket the proxy connects to (each connection starts with a
    /// PROXY header).
    #[arg(long)]
    proxy_socket: Option<PathBuf>,
    /// Unix socket the proxy asks this process about its connections on
    /// (and asks it to retire when idle).
    #[arg(long)]
    control_socket: Option<PathBuf>,
    /// Also serve clients directly on this TCP address.
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Also serve a Strata proxy on another machine on this TCP address
    /// (`strata proxy --remote-sql TENANT=ADDR`): each connection starts
    /// with the tenant's proxy token, which this process reads from the
    /// environment variable STRATA_PROXY_TOKEN (`strata tenant token`
    /// prints it), and a PROXY header naming the client.
    #[arg(long, requires = "tenant")]
    proxy_listen: Option<SocketAddr>,
    /// TLS on the TCP sockets: offered to the clients of --listen
    /// (`sslmode=require`/`verify-full`), and required from the first byte
    /// on --proxy-listen. With --tls-cert and --tls-key, else a
    /// self-signed certificate made in memory.
    #[arg(long, requires = "tcp")]
    tls: bool,
    /// The certificate (PEM) presented on --listen and --proxy-listen,
    /// with --tls-key.
    #[arg(long, requires_all = ["tls_key", "tls"])]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, requires_all = ["tls_cert", "tls"])]
    tls_key: Option<PathBuf>,
    /// How long the KV server may be unreachable before this process exits.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    kv_timeout: Duration,
    /// Worker threads. One by default, a current-thread runtime: a SQL
    /// process spends its time waiting on the KV server and its clients,
    /// and on this machine's two cores a second thread costs more in
    /// cross-thread wake-ups than it adds (pgbench -S c8 through the split:
    /// 42k tps with two workers, 47k with one, and 20% more again on the
    /// current-thread runtime, whose sessions' KV requests leave in one
    /// write).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

#[derive(clap::Args)]
struct ProxyArgs {
    /// The KV server: host:port, tls:HOST:PORT@CA-FILE (a `strata kv
    /// --tls` whose certificate chains to CA-FILE), or a unix socket path.
    #[arg(long)]
    kv: KvAddr,
    #[command(flatten)]
    pg: PgListen,
    /// The KV server's secret file.
    #[arg(long, default_value = "./strata-data/secret")]
    secret_file: PathBuf,
    /// Directory for the SQL processes' sockets (made private to us).
    #[arg(long, default_value = "./strata-data/run")]
    run_dir: PathBuf,
    /// Where the self-signed TLS certificate is made on first start (unless
    /// --tls-cert and --tls-key name one).
    #[arg(long, default_value = "./strata-data/tls")]
    tls_dir: PathBuf,
    /// Forward every client's bytes for the whole session instead of
    /// handing its socket to the SQL process (SCM_RIGHTS; this proxy
    /// starts the SQL processes on its own machine, so it can by default).
    #[arg(long)]
    forward: bool,
    /// Tenant NAME is served by a SQL process on another machine (`strata
    /// sql --tenant NAME --proxy-listen ADDR`) at ADDR: host:port, or
    /// tls:HOST:PORT@CA-FILE for one with --tls whose certificate chains
    /// to CA-FILE. Its clients' bytes are forwarded there; nothing is
    /// started for it here. May be given once per tenant.
    #[arg(long, value_name = "NAME=ADDR", value_parser = parse_remote_sql)]
    remote_sql: Vec<(String, KvAddr)>,
    #[command(flatten)]
    serverless: Serverless,
}

/// A `--remote-sql` value: a tenant name and a TCP address (plain or TLS).
fn parse_remote_sql(s: &str) -> Result<(String, KvAddr), String> {
    let Some((name, addr)) = s.split_once('=') else {
        return Err(format!("expected NAME=ADDR, not {s:?}"));
    };
    if name.is_empty() {
        return Err("the tenant name is empty".into());
    }
    match addr.parse::<KvAddr>()? {
        KvAddr::Unix(_) => Err("a SQL process on another machine is reached over TCP".into()),
        a => Ok((name.to_string(), a)),
    }
}

/// How the proxy runs tenants' SQL processes (`strata start` and `strata
/// proxy`).
#[derive(clap::Args, Clone)]
struct Serverless {
    /// Pre-started SQL processes, not yet bound to a tenant, kept ready
    /// for tenants that have none running.
    #[arg(long, default_value_t = 2)]
    warm_pool: usize,
    /// A tenant's SQL process exits after this long without a client
    /// connection (`500ms`, `2s`, `5min`); the tenant is then suspended
    /// until its next connection.
    #[arg(long, default_value = "5min", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// At most this many SQL processes run at once, pooled ones included;
    /// a client that finds all of them busy waits for one.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    max_sql_processes: u32,
    /// How long a client waits for a SQL process (all busy, or starting)
    /// before it gets FATAL 53300 (too_many_connections).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    process_wait: Duration,
    /// The TLS certificate (PEM) the proxy presents, with --tls-key;
    /// default: a self-signed one made in the data directory (DATA/tls).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The TLS certificate's private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Refuse TLS (answer SSLRequest with 'N').
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    no_tls: bool,
    /// Over TLS, a host name NAME.DOMAIN (`psql "host=acme.localhost"`)
    /// names tenant NAME, after options and before the database prefix.
    #[arg(long, default_value = "localhost")]
    tenant_domain: String,
    /// A client that names no tenant (no options, SNI or database prefix)
    /// is asked for its password by the proxy, which may name the tenant:
    /// `endpoint=NAME;PASSWORD` (Neon's form; `$` for `;` too). Without
    /// the prefix the client is the default tenant's, with that password.
    #[arg(long)]
    password_routing: bool,
    /// Exec the binary for every SQL process instead of forking them from
    /// a warmed-up fork server (`strata sql --fork-server`); for
    /// comparison, and a fallback the proxy also takes by itself when the
    /// fork server fails.
    #[arg(long)]
    no_fork_server: bool,
}

/// The environment variable that gives pooled SQL processes the KV
/// server's pool token (a connection bound to no tenant; see kvrpc::auth).
const POOL_TOKEN_VAR: &str = "STRATA_KV_POOL_TOKEN";

/// The environment variable that gives a SQL process started for one
/// tenant (`strata sql --tenant`) its KV token.
const KV_TOKEN_VAR: &str = "STRATA_KV_TOKEN";

/// The environment variable that gives a SQL process serving proxies on
/// other machines (`--proxy-listen`) its tenant's proxy token.
const PROXY_TOKEN_VAR: &str = "STRATA_PROXY_TOKEN";

/// Parses `500ms`, `2s`, `5min`, `1h` (a bare number is seconds).
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("bad duration {s:?}"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "min" | "m" => n * 60.0,
        "h" => n * 3600.0,
        other => return Err(format!("bad duration unit {other:?} (use ms, s, min or h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain of causes, without a backtrace.
            let _ = writeln!(std::io::stderr(), "strata: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Start(args) if args.single_process => start_single(args),
        Command::Start(args) => supervisor::run(args),
        Command::Kv(args) => kv(args),
        Command::Sql(args) => sql(args),
        Command::Proxy(args) => proxy(args),
        Command::Tenant(args) => tenant::run(args),
    }
}

/// Stack of every runtime thread: deep (but bounded) expression trees are
/// walked recursively, and PL/pgSQL calls nest up to plpgsql::MAX_DEPTH
/// levels, each a deep stack of futures (some hundreds of KB in a debug
/// build).
const STACK_SIZE: usize = 32 << 20;

/// The runtime every command runs on.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    runtime_with(None)
}

/// [`runtime`] with `threads` worker threads (None: one per core).
fn runtime_with(threads: Option<usize>) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        b.worker_threads(n.max(1));
    }
    b.thread_stack_size(STACK_SIZE).enable_all().build().context("starting the runtime")
}

/// Runs `fut` on a runtime of `threads` workers. One worker means a
/// current-thread runtime (on a thread with [`runtime_with`]'s stack): its
/// tasks run in the order they were woken, so the KV requests of the
/// sessions woken by one poll of the sockets queue up before the
/// connection's writer runs and leave in one write.
///
/// Once `fut` is done the runtime is shut down without waiting for its
/// blocking threads: a pooled process's read of its standard input (a
/// blocking read) ends only when the proxy closes the pipe, and a pooled
/// process told to stop (SIGTERM) must not wait for that.
fn block_on_threads<T: Send + 'static>(
    threads: usize,
    fut: impl std::future::Future<Output = anyhow::Result<T>> + Send + 'static,
) -> anyhow::Result<T> {
    let run = |rt: tokio::runtime::Runtime| {
        let r = rt.block_on(fut);
        rt.shutdown_background();
        r
    };
    if threads > 1 {
        return run(runtime_with(Some(threads))?);
    }
    std::thread::Builder::new()
        .name("strata-sql".into())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting the runtime")?;
            run(rt)
        })
        .context("starting the SQL thread")?
        .join()
        .map_err(|_| anyhow::anyhow!("the SQL thread panicked"))?
}

/// Tells the parent (supervisor or proxy) that this process serves now.
fn announce_ready() {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
}

fn start_single(args: StartArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async move {
        let dir = &args.data_dir;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let node = kv::KvNode::open(&dir.join("kv"))
            .with_context(|| format!("opening data directory {}", dir.display()))?;
        let tenant = node
            .tenant_id(kv::tenants::DEFAULT)
            .await
            .map_err(|e| anyhow::anyhow!("reading the tenant registry: {e}"))?
            .context("the default tenant is missing")?;
        let backend = Arc::new(sqlnode::SqlNode::new(node.client(tenant)));
        backend.init().await.map_err(|e| anyhow::anyhow!("loading the catalog: {e}"))?;
        let unix = args.pg.unix_path();
        let listeners = wire::Listeners::bind(args.pg.listen, unix.as_deref())
            .await
            .context("binding listeners")?;
        tracing::info!(addr = %args.pg.listen, unix = ?unix, data = %dir.display(), "strata (single process) is ready to accept connections");
        tokio::select! {
            r = wire::serve(backend, listeners) => r.context("serving")?,
            _ = shutdown_signal() => tracing::info!("shutting down"),
        }
        drop(node);
        Ok(())
    })
}

fn kv(args: KvArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async move {
        let dir = &args.data_dir;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let secret = Secret::load_or_create(&dir.join("secret")).context("reading the secret")?;
        let node = kv::KvNode::open(&dir.join("kv"))
            .with_context(|| format!("opening data directory {}", dir.display()))?;
        let server = node.server(secret).await.map_err(|e| anyhow::anyhow!("opening the tenant registry: {e}"))?;
        let tcp = match args.listen {
            Some(a) => Some(tokio::net::TcpListener::bind(a).await.with_context(|| format!("binding {a}"))?),
            None => None,
        };
        let unix = match &args.unix {
            Some(p) => {
                let _ = std::fs::remove_file(p);
                Some(tokio::net::UnixListener::bind(p).with_context(|| format!("binding {}", p.display()))?)
            }
            None => None,
        };
        if tcp.is_none() && unix.is_none() {
            bail!("give --listen ADDR or --unix PATH (or both)");
        }
        let tls = match (&args.tls_cert, &args.tls_key) {
            _ if !args.tls => None,
            (Some(cert), Some(key)) => Some(proxy::tls::load(cert, key)),
            _ => Some(proxy::tls::load_or_create(&dir.join("tls"))),
        };
        let tls = tls.transpose().map_err(anyhow::Error::msg)?.map(|t| t.config);
        tracing::info!(tcp = ?args.listen, unix = ?args.unix, data = %dir.display(), "KV server ready");
        announce_ready();
        tokio::select! {
            _ = server.serve(tcp, unix, tls) => {}
            _ = shutdown_signal() => tracing::info!("KV server shutting down"),
        }
        if let Some(p) = &args.unix {
            let _ = std::fs::remove_file(p);
        }
        drop(node);
        Ok(())
    })
}

/// Connects to the KV server, retrying for up to `timeout`.
async fn connect_kv(
    addr: &KvAddr,
    tenant: &str,
    token: &str,
    timeout: Duration,
) -> anyhow::Result<kvrpc::RpcClient> {
    let deadline = Instant::now() + timeout;
    loop {
        match kvrpc::RpcClient::connect(addr.clone(), tenant, token).await {
            Ok(c) => return Ok(c),
            Err(kvapi::Error::Unavailable(m))
                if Instant::now() < deadline && !m.contains("refused:") =>
            {
                tracing::debug!(error = %m, "KV server not reachable yet");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => {
                bail!("cannot connect to the KV server at {addr} as tenant \"{tenant}\": {e}")
            }
        }
    }
}

/// Who a SQL process serves, from its arguments or from the proxy's bind.
struct Serving {
    tenant: String,
    token: String,
    /// The KV connection a pooled process opened while it waited.
    pooled_kv: Option<kvrpc::Unbound>,
    proxy_socket: Option<PathBuf>,
    control_socket: Option<PathBuf>,
    /// The tenant's id and the proxy's socket for login reports.
    events: Option<(u64, PathBuf)>,
}

/// A pooled process: warms up, connects to the KV server with the pool
/// token (STRATA_KV_POOL_TOKEN, if set), says `ready`, and waits for the
/// bind line (None: input ended or we were told to stop before a tenant
/// came).
async fn wait_for_bind(kv: &KvAddr) -> anyhow::Result<Option<Serving>> {
    use tokio::io::AsyncBufReadExt;
    sqlnode::warm_up();
    let pooled_kv = match std::env::var(POOL_TOKEN_VAR) {
        // Without it the bind connects then: slower, not wrong.
        Ok(token) => kvrpc::Unbound::open(kv, &token)
            .await
            .inspect_err(|e| tracing::warn!(error = %e, "no pooled KV connection"))
            .ok(),
        Err(_) => None,
    };
    announce_ready();
    let mut line = String::new();
    let mut stdin = tokio::io::BufReader::new(tokio::io::stdin());
    tokio::select! {
        r = stdin.read_line(&mut line) => if r.context("reading the bind")? == 0 { return Ok(None) },
        _ = shutdown_signal() => return Ok(None),
    }
    let b = proxy::control::Bind::parse(&line).map_err(anyhow::Error::msg)?;
    Ok(Some(Serving {
        tenant: b.tenant,
        token: b.token,
        pooled_kv,
        proxy_socket: Some(b.socket),
        control_socket: Some(b.control),
        events: b.events.map(|p| (b.tenant_id, p)),
    }))
}

fn sql(mut args: SqlArgs) -> anyhow::Result<()> {
    if args.fork_server {
        // Single-threaded until the fork: no runtime yet.
        sqlnode::warm_up();
        // SAFETY: fd 0 is the proxy's socket; nothing else in this process
        // owns it.
        let sock = unsafe { std::os::fd::OwnedFd::from_raw_fd(0) };
        match proxy::fork::serve(sock).context("serving forks")? {
            proxy::fork::Forked::Done => return Ok(()),
            proxy::fork::Forked::Child => args.pool = true,
        }
    }
    let pool = args.pool;
    let r = block_on_threads(args.threads, async move {
        let serving = match &args.tenant {
            Some(tenant) => Serving {
                tenant: tenant.clone(),
                token: std::env::var(KV_TOKEN_VAR)
                    .with_context(|| format!("{KV_TOKEN_VAR} is not set"))?,
                pooled_kv: None,
                proxy_socket: args.proxy_socket.clone(),
                control_socket: args.control_socket.clone(),
                events: None,
            },
            None => match wait_for_bind(&args.kv).await? {
                Some(s) => s,
                None => return Ok(()),
            },
        };
        serve_tenant(args, serving).await
    });
    if let (true, Err(e)) = (pool, &r) {
        // The proxy waits for a line: tell it why, then exit non-zero.
        let _ = writeln!(std::io::stdout(), "error {}", format!("{e:#}").replace('\n', " "));
    }
    r
}

async fn serve_tenant(args: SqlArgs, mut s: Serving) -> anyhow::Result<()> {
    let bound = match s.pooled_kv.take() {
        Some(u) => kvrpc::RpcClient::bind(u, &s.tenant, &s.token)
            .await
            // Closed while we waited (a KV server restart): connect anew.
            .inspect_err(|e| tracing::debug!(error = %e, "binding the pooled KV connection"))
            .ok(),
        None => None,
    };
    let client = match bound {
        Some(c) => c,
        None => connect_kv(&args.kv, &s.tenant, &s.token, args.kv_timeout).await?,
    };
    let reporter = client.clone();
    let mut backend = sqlnode::SqlNode::new(client.clone())
        .on_sessions(move |n| reporter.report_sessions(u32::try_from(n).unwrap_or(u32::MAX)));
    if let Some((tenant_id, path)) = s.events.clone() {
        // Non-blocking: a proxy that reads slowly loses reports, never
        // holds up a login.
        let sock = std::os::unix::net::UnixDatagram::unbound().context("a datagram socket")?;
        sock.set_nonblocking(true).context("a datagram socket")?;
        backend = backend.on_auth(move |client, ok| {
            let event = proxy::control::AuthEvent { tenant_id, client, ok };
            proxy::control::report_auth(&sock, &path, event);
        });
    }
    let backend = Arc::new(backend);
    backend.init().await.map_err(|e| anyhow::anyhow!("loading the catalog: {e}"))?;
    let mut listeners = match args.listen {
        Some(a) => wire::Listeners::bind(a, None).await.with_context(|| format!("binding {a}"))?,
        None => wire::Listeners::none(),
    };
    if args.tls {
        let tls = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => proxy::tls::load(cert, key),
            _ => proxy::tls::ephemeral(),
        };
        listeners = listeners.with_tls(tls.map_err(anyhow::Error::msg)?);
    }
    if let Some(a) = args.proxy_listen {
        let token = std::env::var(PROXY_TOKEN_VAR)
            .with_context(|| format!("--proxy-listen needs {PROXY_TOKEN_VAR}"))?;
        let check: wire::server::TokenCheck = Arc::new(move |t| kvrpc::auth::same(&token, t));
        listeners =
            listeners.with_proxied_tcp(a, check).await.with_context(|| format!("binding {a}"))?;
    }
    if let Some(p) = &s.proxy_socket {
        listeners =
            listeners.with_proxied(p).with_context(|| format!("binding {}", p.display()))?;
    }
    if let Some(c) = &s.control_socket {
        let _ = std::fs::remove_file(c);
        let l = tokio::net::UnixListener::bind(c)
            .with_context(|| format!("binding {}", c.display()))?;
        let sockets = s.proxy_socket.iter().chain([c]).cloned().collect();
        tokio::spawn(proxy::control::serve(l, listeners.stats(), sockets));
    }
    tracing::info!(tenant = %s.tenant, kv = %args.kv, "SQL process ready");
    announce_ready();
    let r = tokio::select! {
        r = wire::serve_until(backend.clone(), listeners, shutdown_signal()) => r.context("serving"),
        e = watch_kv(client, args.kv_timeout) => Err(e),
    };
    if let Some(c) = &s.control_socket {
        let _ = std::fs::remove_file(c);
    }
    r
}

/// Keeps the KV connection up (a new connection is told the session count
/// by the client); returns, and the process exits non-zero, when the KV
/// server stayed out of reach for `timeout`.
async fn watch_kv(client: kvrpc::RpcClient, timeout: Duration) -> anyhow::Error {
    let mut down_since: Option<Instant> = None;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if client.is_connected() {
            down_since = None;
            continue;
        }
        if let Err(e) = client.connection().await {
            let since = *down_since.get_or_insert_with(Instant::now);
            if since.elapsed() > timeout {
                tracing::error!(error = %e, "lost the KV server; exiting");
                return anyhow::anyhow!("the KV server was out of reach for {timeout:?}: {e}");
            }
        }
    }
}

fn proxy(args: ProxyArgs) -> anyhow::Result<()> {
    runtime()?.block_on(async move {
        let secret = Secret::load(&args.secret_file)
            .with_context(|| format!("reading the secret {}", args.secret_file.display()))?;
        make_private_dir(&args.run_dir)?;
        let exe = std::env::current_exe().context("finding the strata binary")?;
        let kv = args.kv.clone();
        let pool_token = secret.pool_token();
        let sql_command = move |mode: &str| {
            let mut c = std::process::Command::new(&exe);
            c.arg("sql").arg(mode).arg("--kv").arg(kv.to_string());
            c.env(POOL_TOKEN_VAR, &pool_token);
            c
        };
        let sql_command = Arc::new(sql_command);
        let fork_server: Option<proxy::fork::CommandFactory> = match args.serverless.no_fork_server
        {
            true => None,
            false => {
                let c = sql_command.clone();
                Some(Arc::new(move || c("--fork-server")))
            }
        };
        let launcher =
            proxy::Launcher { exec: Arc::new(move || sql_command("--pool")), fork_server };
        let sv = &args.serverless;
        let tls = match (&sv.tls_cert, &sv.tls_key) {
            _ if sv.no_tls => None,
            (Some(cert), Some(key)) => {
                Some(proxy::tls::load(cert, key).map_err(anyhow::Error::msg)?)
            }
            _ => Some(proxy::tls::load_or_create(&args.tls_dir).map_err(anyhow::Error::msg)?),
        };
        let p = proxy::Proxy::new(proxy::Config {
            kv: args.kv.clone(),
            secret,
            run_dir: args.run_dir.clone(),
            launcher,
            handoff: !args.forward,
            warm_pool: args.serverless.warm_pool,
            idle_timeout: args.serverless.idle_timeout,
            tls,
            tenant_domain: args.serverless.tenant_domain.trim_matches('.').to_ascii_lowercase(),
            max_sql_processes: args.serverless.max_sql_processes as usize,
            process_wait: args.serverless.process_wait,
            password_routing: args.serverless.password_routing,
            remote: args.remote_sql.iter().cloned().collect(),
        });
        p.check_kv().await.map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let listen = args.pg.listen;
        let tcp = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("binding {listen}"))?;
        let unix_path = args.pg.unix_path();
        let unix = match &unix_path {
            Some(path) => {
                let _ = std::fs::remove_file(path);
                Some(
                    tokio::net::UnixListener::bind(path)
                        .with_context(|| format!("binding {}", path.display()))?,
                )
            }
            None => None,
        };
        tracing::info!(addr = %listen, unix = ?unix_path, "proxy ready");
        announce_ready();
        tokio::select! {
            _ = p.clone().serve(tcp, unix) => {}
            _ = shutdown_signal() => tracing::info!("proxy shutting down"),
        }
        if let Some(path) = unix_path {
            let _ = std::fs::remove_file(path);
        }
        // Our SQL processes stop with us on a clean shutdown.
        supervisor::terminate(&p.child_pids(), Duration::from_secs(10));
        Ok(())
    })
}

/// Makes `dir` (mode 0700): the sockets in it accept PROXY headers, so
/// only this user may reach them.
fn make_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("restricting {}", dir.display()))
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else { return std::future::pending().await };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("5min"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("x").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }
}
