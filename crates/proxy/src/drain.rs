//! Draining a tenant's SQL processes: their sessions move, live, to a
//! fresh process ([`wire::migrate`]), and the old processes exit.
//!
//! [`Proxy::drain`] takes the tenant's routing lock, marks every process
//! it runs as draining (no new client goes to one), binds a fresh process
//! (from the warm pool, or launched), and lets go of the lock: new clients
//! go to the fresh process from then on. It then tells each old process to
//! move its sessions there (`migrate` on its control socket): each moves
//! at its next safe point, between transactions, without its client
//! noticing. An old process left with no session is retired at once; one
//! whose sessions stayed (a transaction open past the wait, temporary
//! tables, cursors or advisory locks) keeps serving them, takes no new
//! ones, and retires when idle like any other. Draining each tenant in
//! turn is a rolling restart of every SQL process (`strata tenant drain
//! --all`).
//!
//! [`Proxy::shrink`] scales a tenant down the same way: its least loaded
//! processes are drained into the ones it keeps (`strata tenant set NAME
//! --max-sql-processes K` below the number running).
//!
//! The proxy's admin socket `RUN_DIR/proxy.ctl` takes one request per
//! line: `drain TENANT MS`, or `shrink TENANT MS K`, → `drained PROCESSES
//! MOVED STAYED`, or `error MESSAGE`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::control::Control;
use crate::Proxy;

/// What a drain did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    /// Old processes drained.
    pub processes: usize,
    /// Sessions that moved.
    pub moved: u64,
    /// Sessions that stayed in an old process.
    pub stayed: u64,
}

impl Proxy {
    /// The admin socket's path.
    pub fn admin_path(&self) -> std::path::PathBuf {
        self.cfg.run_dir.join("proxy.ctl")
    }

    /// Moves every session of tenant `name` to a fresh SQL process (see the
    /// module docs), waiting up to `wait` for sessions to reach a safe
    /// point.
    pub async fn drain(self: &Arc<Self>, name: &str, wait: Duration) -> Result<Drained, String> {
        self.drain_to(name, wait, None).await
    }

    /// Scales tenant `name` down to its `keep` most loaded processes: the
    /// others' sessions move to those, and they retire.
    pub async fn shrink(
        self: &Arc<Self>,
        name: &str,
        keep: usize,
        wait: Duration,
    ) -> Result<Drained, String> {
        self.drain_to(name, wait, Some(keep.max(1))).await
    }

    /// [`Proxy::drain`] (`keep` None) or [`Proxy::shrink`].
    async fn drain_to(
        self: &Arc<Self>,
        name: &str,
        wait: Duration,
        keep: Option<usize>,
    ) -> Result<Drained, String> {
        let info = match self.lookup(name).await {
            Ok(Some(info)) => info,
            Ok(None) => return Err(format!("tenant \"{name}\" does not exist")),
            Err(e) => return Err(e.message),
        };
        let slot = self.slot(info.id);
        let mut g = slot.clone().lock_owned().await;
        let mut serving = Vec::new();
        for r in g.running.iter_mut().filter(|r| !r.draining) {
            let load = match keep {
                Some(_) => r.load().await.unwrap_or(0),
                None => 0,
            };
            serving.push((load, r.generation));
        }
        // The most loaded stay (their sessions need not move).
        serving.sort_by(|a, b| b.cmp(a));
        let kept = keep.unwrap_or(0).min(serving.len());
        let old: Vec<u64> = serving[kept..].iter().map(|(_, generation)| *generation).collect();
        if old.is_empty() {
            return Ok(Drained::default());
        }
        for r in g.running.iter_mut().filter(|r| old.contains(&r.generation)) {
            r.draining = true;
        }
        let targets: Vec<std::path::PathBuf> = if kept > 0 {
            let kept: Vec<u64> =
                serving[..kept].iter().map(|(_, generation)| *generation).collect();
            g.running
                .iter()
                .filter(|r| kept.contains(&r.generation))
                .map(|r| r.socket.clone())
                .collect()
        } else {
            let deadline = Instant::now() + self.cfg.process_wait;
            if let Err(e) = self.clone().start(&info, &slot, &mut g, deadline, true).await {
                for r in g.running.iter_mut().filter(|r| old.contains(&r.generation)) {
                    r.draining = false;
                }
                return Err(e.message);
            }
            g.running.last().map(|r| r.socket.clone()).into_iter().collect()
        };
        let mut asks = Vec::new();
        for r in g.running.iter_mut().filter(|r| old.contains(&r.generation)) {
            let ctl = match r.probe.take() {
                Some(c) => Ok(c),
                None => Control::connect(&r.socket.with_extension("ctl")).await,
            };
            let target = targets[asks.len() % targets.len()].clone();
            asks.push((r.generation, ctl, target));
        }
        drop(g);
        tracing::info!(tenant = name, processes = old.len(), "draining a tenant's SQL processes");
        let mut tasks = tokio::task::JoinSet::new();
        for (generation, ctl, target) in asks {
            tasks.spawn(async move {
                let Ok(mut ctl) = ctl else { return (generation, None, None) };
                let r = ctl.migrate(&target, wait).await.ok();
                (generation, r, Some(ctl))
            });
        }
        let mut done = Drained { processes: old.len(), ..Drained::default() };
        let mut empty = Vec::new();
        while let Some(Ok((generation, r, ctl))) = tasks.join_next().await {
            let (moved, stayed) = r.unwrap_or((0, 0));
            done.moved += moved;
            done.stayed += stayed;
            if let (Some(ctl), Some((_, 0))) = (ctl, r) {
                empty.push((generation, ctl));
            }
        }
        // Those left with nothing retire now, under the routing lock as
        // always (a client handed to one meanwhile makes it say busy).
        let mut g = slot.lock().await;
        for (generation, mut ctl) in empty {
            let Some(i) = g.running.iter().position(|r| r.generation == generation) else {
                continue;
            };
            if ctl.retire(g.running[i].handed).await.unwrap_or(false) {
                g.running.remove(i);
                ctl.closed(Duration::from_secs(5)).await;
            }
        }
        tracing::info!(tenant = name, ?done, "drained");
        Ok(done)
    }

    /// Serves the admin socket (see the module docs) for as long as the
    /// proxy runs.
    pub(crate) fn serve_admin(self: &Arc<Self>) {
        let path = self.admin_path();
        let _ = std::fs::remove_file(&path);
        let listener = match UnixListener::bind(&path) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "no admin socket");
                return;
            }
        };
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                let Some(p) = me.upgrade() else { return };
                tokio::spawn(p.admin_connection(s));
            }
        });
    }

    async fn admin_connection(self: Arc<Self>, s: UnixStream) {
        let (r, mut w) = s.into_split();
        let mut lines = BufReader::new(r).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let words: Vec<&str> = line.split_whitespace().collect();
            let ms = |w: &str| w.parse::<u64>().ok().map(Duration::from_millis);
            let done = match words.as_slice() {
                ["drain", tenant, wait] => match ms(wait) {
                    Some(wait) => self.drain(tenant, wait).await,
                    None => Err(format!("bad request {line:?}")),
                },
                ["shrink", tenant, wait, keep] => match (ms(wait), keep.parse()) {
                    (Some(wait), Ok(k)) => self.shrink(tenant, k, wait).await,
                    _ => Err(format!("bad request {line:?}")),
                },
                _ => Err(format!("unknown request {line:?}")),
            };
            let answer = match done {
                Ok(d) => format!("drained {} {} {}", d.processes, d.moved, d.stayed),
                Err(e) => format!("error {}", e.replace('\n', " ")),
            };
            if w.write_all(format!("{answer}\n").as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

/// Asks the proxy whose admin socket is `path` to drain `tenant` (see the
/// module docs), or with `keep` to shrink it to that many processes.
pub async fn request_drain(
    path: &std::path::Path,
    tenant: &str,
    wait: Duration,
    keep: Option<usize>,
) -> std::io::Result<Drained> {
    let (r, mut w) = UnixStream::connect(path).await?.into_split();
    let ms = wait.as_millis();
    let line = match keep {
        None => format!("drain {tenant} {ms}\n"),
        Some(k) => format!("shrink {tenant} {ms} {k}\n"),
    };
    w.write_all(line.as_bytes()).await?;
    let mut lines = BufReader::new(r).lines();
    let line = lines.next_line().await?.unwrap_or_default();
    let bad = || std::io::Error::other(line.strip_prefix("error ").unwrap_or(&line).to_string());
    let n: Vec<&str> = line.split_whitespace().collect();
    match n.as_slice() {
        ["drained", p, m, s] => Ok(Drained {
            processes: p.parse().map_err(|_| bad())?,
            moved: m.parse().map_err(|_| bad())?,
            stayed: s.parse().map_err(|_| bad())?,
        }),
        _ => Err(bad()),
    }
}
