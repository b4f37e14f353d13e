//! The live sessions of one tenant's SQL process: what pg_stat_activity
//! lists, and whom pg_cancel_backend and pg_terminate_backend signal.
//!
//! Each session registers a [`Backend`] when its connection opens and
//! unregisters when the [`Registration`] is dropped. The session updates its
//! entry's [`Status`] as statements start and end (one uncontended mutex per
//! update); readers take a copy. Signals go through the [`Interrupt`] the
//! wire layer handed over, so this crate never sees a socket.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

/// Signals one connection: the wire layer's implementation cancels the
/// running statement or ends the connection.
pub trait Interrupt: Send + Sync {
    /// Cancels the statement the connection is running, if any.
    fn cancel(&self);
    /// Ends the connection (FATAL 57P01).
    fn terminate(&self);
    /// How many cancels the connection has had: a statement that sees the
    /// count change while it runs was cancelled (see `crate::interrupts`).
    /// The default: never counted.
    fn cancels(&self) -> u64 {
        0
    }
}

/// The sessions of one tenant, by pid.
#[derive(Default, Debug)]
pub struct Registry {
    map: Mutex<BTreeMap<i32, Arc<Backend>>>,
}

/// What a session is doing, as pg_stat_activity's `state` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Running a statement.
    Active,
    /// Waiting for the client, no transaction open.
    Idle,
    /// Waiting for the client inside a transaction block.
    IdleInTransaction,
    /// Waiting for the client inside a failed transaction block.
    IdleInTransactionAborted,
}

impl State {
    /// The name pg_stat_activity shows.
    pub fn name(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Idle => "idle",
            State::IdleInTransaction => "idle in transaction",
            State::IdleInTransactionAborted => "idle in transaction (aborted)",
        }
    }
}

/// A session's changing part.
#[derive(Debug, Clone)]
pub struct Status {
    /// The session's user.
    pub user: Arc<str>,
    /// The application_name setting.
    pub application_name: String,
    /// What it is doing.
    pub state: State,
    /// The running statement, or the last one when idle.
    pub query: Option<Arc<str>>,
    /// When that statement started (microseconds since 2000).
    pub query_start: Option<i64>,
    /// When the open transaction started.
    pub xact_start: Option<i64>,
    /// When `state` last changed.
    pub state_change: i64,
    /// What a waiting statement waits for: (wait_event_type, wait_event).
    pub wait: Option<(&'static str, &'static str)>,
}

/// One registered session.
pub struct Backend {
    /// The pid the client was given in BackendKeyData.
    pub pid: i32,
    /// The client's address; None for a unix socket.
    pub client: Option<std::net::SocketAddr>,
    /// The server's address the client connected to; None for a unix
    /// socket.
    pub server: Option<std::net::SocketAddr>,
    /// When the connection opened (microseconds since 2000).
    pub backend_start: i64,
    interrupt: Box<dyn Interrupt>,
    status: Mutex<Status>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("pid", &self.pid).finish()
    }
}

impl Backend {
    /// A copy of the session's status.
    pub fn status(&self) -> Status {
        self.status.lock().clone()
    }

    /// Changes the status.
    pub fn update(&self, f: impl FnOnce(&mut Status)) {
        f(&mut self.status.lock());
    }

    /// Cancels the session's running statement.
    pub fn cancel(&self) {
        self.interrupt.cancel();
    }

    /// How many cancels the session's connection has had.
    pub fn cancels(&self) -> u64 {
        self.interrupt.cancels()
    }

    /// Ends the session's connection.
    pub fn terminate(&self) {
        self.interrupt.terminate();
    }
}

/// pg_stat_activity as one transaction sees it. As in PostgreSQL, the
/// sessions' statuses are read at the transaction's first look and kept
/// until it ends, so a statement run again (see `crate::waits`) or a
/// second query in the block sees the same sessions.
#[derive(Debug)]
pub struct View {
    registry: Arc<Registry>,
    snapshot: Mutex<Option<Arc<Vec<Seen>>>>,
}

/// One session as a [`View`] saw it.
#[derive(Debug)]
pub struct Seen {
    /// The session.
    pub backend: Arc<Backend>,
    /// Its status when seen.
    pub status: Status,
}

impl View {
    /// A view of `registry` that has not looked yet.
    pub fn new(registry: Arc<Registry>) -> View {
        View { registry, snapshot: Mutex::new(None) }
    }

    /// The live sessions (for signals, which reach the session as it is).
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The sessions as first seen in this transaction.
    pub fn snapshot(&self) -> Arc<Vec<Seen>> {
        self.snapshot
            .lock()
            .get_or_insert_with(|| {
                let all = self.registry.all().into_iter();
                Arc::new(all.map(|b| Seen { status: b.status(), backend: b }).collect())
            })
            .clone()
    }

    /// The transaction ended: the next look reads the sessions again.
    pub fn clear(&self) {
        let mut s = self.snapshot.lock();
        if s.is_some() {
            *s = None;
        }
    }
}

/// A session's entry; unregistered when dropped.
pub struct Registration {
    registry: Arc<Registry>,
    backend: Arc<Backend>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.backend.fmt(f)
    }
}

impl Registration {
    /// The registered entry.
    pub fn backend(&self) -> &Arc<Backend> {
        &self.backend
    }

    /// The registry it is in.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut map = self.registry.map.lock();
        if map.get(&self.backend.pid).is_some_and(|b| Arc::ptr_eq(b, &self.backend)) {
            map.remove(&self.backend.pid);
        }
    }
}

impl Registry {
    /// Registers a session that starts now as `user`, connected over TCP
    /// from `addrs.0` to `addrs.1` (None for a unix socket).
    pub fn register(
        self: &Arc<Self>,
        pid: i32,
        addrs: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
        user: Arc<str>,
        interrupt: Box<dyn Interrupt>,
    ) -> Registration {
        let now = sqltypes::datetime::now_micros();
        let status = Status {
            user,
            application_name: String::new(),
            state: State::Idle,
            query: None,
            query_start: None,
            xact_start: None,
            state_change: now,
            wait: None,
        };
        let backend = Arc::new(Backend {
            pid,
            client: addrs.map(|a| a.0),
            server: addrs.map(|a| a.1),
            backend_start: now,
            interrupt,
            status: Mutex::new(status),
        });
        self.map.lock().insert(pid, backend.clone());
        Registration { registry: self.clone(), backend }
    }

    /// The session with this pid.
    pub fn get(&self, pid: i32) -> Option<Arc<Backend>> {
        self.map.lock().get(&pid).cloned()
    }

    /// Every session, by pid.
    pub fn all(&self) -> Vec<Arc<Backend>> {
        self.map.lock().values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Default)]
    struct Count(AtomicUsize, AtomicUsize);

    struct Signals(Arc<Count>);

    impl Interrupt for Signals {
        fn cancel(&self) {
            self.0 .0.fetch_add(1, Ordering::SeqCst);
        }
        fn terminate(&self) {
            self.0 .1.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn sessions_are_listed_signalled_and_unregistered() {
        let reg = Arc::new(Registry::default());
        let count = Arc::new(Count::default());
        let a = reg.register(7, None, Arc::from("alice"), Box::new(Signals(count.clone())));
        let b = reg.register(3, None, Arc::from("bob"), Box::new(Signals(count.clone())));
        assert_eq!(reg.all().iter().map(|b| b.pid).collect::<Vec<_>>(), [3, 7]);
        a.backend().update(|s| s.state = State::Active);
        assert_eq!(reg.get(7).expect("registered").status().state, State::Active);
        reg.get(3).expect("registered").cancel();
        reg.get(7).expect("registered").terminate();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(count.1.load(Ordering::SeqCst), 1);
        drop(b);
        assert!(reg.get(3).is_none());
        assert_eq!(reg.all().len(), 1);
    }
}
