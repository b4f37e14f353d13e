//! `strata start`: the supervisor of one machine's processes.
//!
//! ```text
//!   strata start (supervisor, a child subreaper)
//!     ├── strata kv     --unix DATA/run/kv.sock        (restarted when it dies)
//!     └── strata proxy  --kv unix:DATA/run/kv.sock     (restarted when it dies)
//!           ├── strata sql --pool ...  (the warm pool: not yet bound to a tenant)
//!           └── strata sql --pool ...  (bound: one per running tenant)
//! ```
//!
//! The supervisor makes the data directory, its private `run/` directory
//! and the KV secret, starts the KV server and then the proxy, each of which
//! prints `ready` once it serves, and writes their pids to `run/kv.pid` and
//! `run/proxy.pid`. Then it waits: a child that exits is started again (the
//! SQL processes reconnect to a restarted KV server; a restarted proxy finds
//! the running SQL processes by their sockets). SQL processes outlive a dead
//! proxy; as a subreaper the supervisor adopts and reaps them.
//!
//! The KV server and the proxy die with the supervisor (PR_SET_PDEATHSIG),
//! so `kill -9` of the supervisor takes them down like a power cut; SQL
//! processes that lose the KV server exit on their own after `--kv-timeout`.
//! SIGTERM or Ctrl-C stops the proxy (which stops its SQL processes), then
//! the KV server, then any adopted SQL process.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::StartArgs;

/// How long a child may take to print `ready`.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a stopping child may take before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Set by SIGTERM / SIGINT.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// One supervised child.
struct Supervised {
    name: &'static str,
    child: Child,
    pid_file: PathBuf,
}

/// Runs the supervisor until SIGTERM or Ctrl-C.
pub fn run(args: StartArgs) -> anyhow::Result<()> {
    let dir = args.data_dir.clone();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let run_dir = dir.join("run");
    crate::make_private_dir(&run_dir)?;
    kvrpc::Secret::load_or_create(&dir.join("secret")).context("making the KV secret")?;
    // SAFETY: prctl and signal with constant arguments and a handler that
    // only stores to an atomic.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::signal(libc::SIGTERM, on_stop_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, on_stop_signal as *const () as libc::sighandler_t);
    }
    let kv_sock = run_dir.join("kv.sock");
    let kv_cmd = {
        let (dir, sock) = (dir.clone(), kv_sock.clone());
        move || {
            let mut c = strata_command();
            c.arg("kv").arg("--data-dir").arg(&dir).arg("--unix").arg(&sock);
            c
        }
    };
    let proxy_cmd = {
        let (args, dir, run_dir) = (args.clone(), dir.clone(), run_dir.clone());
        move || {
            let mut c = strata_command();
            c.arg("proxy")
                .arg("--kv")
                .arg(format!("unix:{}", kv_sock.display()))
                .arg("--listen")
                .arg(args.pg.listen.to_string())
                .arg("--socket-dir")
                .arg(&args.pg.socket_dir)
                .arg("--secret-file")
                .arg(dir.join("secret"))
                .arg("--run-dir")
                .arg(&run_dir);
            if args.pg.no_unix_socket {
                c.arg("--no-unix-socket");
            }
            if args.forward {
                c.arg("--forward");
            }
            c.arg("--warm-pool")
                .arg(args.serverless.warm_pool.to_string())
                .arg("--idle-timeout")
                .arg(format!("{}ms", args.serverless.idle_timeout.as_millis()))
                .arg("--max-sql-processes")
                .arg(args.serverless.max_sql_processes.to_string())
                .arg("--process-wait")
                .arg(format!("{}ms", args.serverless.process_wait.as_millis()))
                .arg("--tls-dir")
                .arg(dir.join("tls"))
                .arg("--tenant-domain")
                .arg(&args.serverless.tenant_domain);
            if args.serverless.no_tls {
                c.arg("--no-tls");
            }
            if args.serverless.password_routing {
                c.arg("--password-routing");
            }
            if args.serverless.no_fork_server {
                c.arg("--no-fork-server");
            }
            if let (Some(cert), Some(key)) = (&args.serverless.tls_cert, &args.serverless.tls_key) {
                c.arg("--tls-cert").arg(cert).arg("--tls-key").arg(key);
            }
            c
        }
    };
    let mut kv = start("kv", kv_cmd(), run_dir.join("kv.pid"))?;
    let mut proxy = match start("proxy", proxy_cmd(), run_dir.join("proxy.pid")) {
        Ok(p) => p,
        Err(e) => {
            terminate(&[kv.child.id()], STOP_TIMEOUT);
            return Err(e);
        }
    };
    tracing::info!(addr = %args.pg.listen, data = %dir.display(), kv = kv.child.id(), proxy = proxy.child.id(), "strata is ready to accept connections");
    while !STOP.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        for (pid, status) in reap() {
            if pid == kv.child.id() {
                tracing::warn!(status, "the KV server exited; starting it again");
                kv = restart(&kv_cmd, kv)?;
            } else if pid == proxy.child.id() {
                tracing::warn!(status, "the proxy exited; starting it again");
                proxy = restart(&proxy_cmd, proxy)?;
            }
        }
    }
    tracing::info!("shutting down");
    terminate(&[proxy.child.id()], STOP_TIMEOUT);
    terminate(&[kv.child.id()], STOP_TIMEOUT);
    terminate(&adopted(), STOP_TIMEOUT);
    let _ = std::fs::remove_file(&kv.pid_file);
    let _ = std::fs::remove_file(&proxy.pid_file);
    Ok(())
}

/// This same binary, with the child's death tied to ours. Its path is
/// read once, at the first start: once an upgrade has replaced the file,
/// /proc/self/exe names the old one, deleted.
fn strata_command() -> Command {
    use std::os::unix::process::CommandExt;
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let exe =
        EXE.get_or_init(|| std::env::current_exe().unwrap_or_else(|_| PathBuf::from("strata")));
    let mut c = Command::new(exe);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            Ok(())
        });
    }
    c
}

/// Starts a child and waits for its `ready` line, writing its pid file.
fn start(name: &'static str, mut cmd: Command, pid_file: PathBuf) -> anyhow::Result<Supervised> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting the {name}"))?;
    let stdout = child.stdout.take().context("child stdout")?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // The first line is the ready signal; draining the rest keeps the
        // child from ever blocking on a full pipe.
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if STOP.load(Ordering::SeqCst) {
            let _ = child.kill();
            bail!("stopped while the {name} was starting");
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(l) if l.trim() == "ready" => break,
            Ok(_) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().ok();
                bail!("the {name} did not start (exit status {status:?})");
            }
        }
    }
    write_pid(&pid_file, child.id())?;
    Ok(Supervised { name, child, pid_file })
}

/// Starts a dead child again, pausing briefly between attempts that fail.
fn restart(cmd: &impl Fn() -> Command, old: Supervised) -> anyhow::Result<Supervised> {
    let mut pause = Duration::from_millis(100);
    loop {
        if STOP.load(Ordering::SeqCst) {
            bail!("stopped while restarting the {}", old.name);
        }
        match start(old.name, cmd(), old.pid_file.clone()) {
            Ok(s) => return Ok(s),
            Err(e) => {
                tracing::error!(error = %e, "restarting the {} failed; trying again", old.name);
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}

fn write_pid(path: &Path, pid: u32) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, format!("{pid}\n"))
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Every child (our own or adopted) that has exited: (pid, status).
fn reap() -> Vec<(u32, i32)> {
    let mut out = Vec::new();
    loop {
        let mut status = 0;
        // SAFETY: waitpid with a valid pointer to a local.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return out;
        }
        out.push((pid as u32, status));
    }
}

/// Processes whose parent is us (SQL processes we adopted from a dead proxy).
fn adopted() -> Vec<u32> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else { return vec![] };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let rest = stat.rsplit_once(')')?.1;
            let ppid = rest.split_whitespace().nth(1)?;
            (ppid == me).then_some(pid)
        })
        .collect()
}

/// True while `pid` runs (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, r)| !r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// SIGTERMs `pids`, waits up to `timeout` for them to go, then SIGKILLs
/// what is left.
pub fn terminate(pids: &[u32], timeout: Duration) {
    for &pid in pids {
        // SAFETY: kill(2) on a pid we started or adopted.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
    let deadline = Instant::now() + timeout;
    while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        reap();
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in pids.iter().filter(|&&p| alive(p)) {
        // SAFETY: as above.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    }
    reap();
}
