//! Cancel keys: BackendKeyData handed to each connection, and the registry
//! a CancelRequest is looked up in.
//!
//! A CancelRequest arrives on a new connection carrying the (pid, secret)
//! pair that the target connection received at startup. The registry maps
//! the pid to that connection's signal; the secret must match, so a client
//! cannot cancel another client's statements by guessing pids. As in
//! PostgreSQL, only a statement running when the signal arrives is
//! cancelled: a signal to an idle connection is lost, and the requester is
//! never told whether anything happened.
//!
//! The same [`ConnControl`] is handed to the backend in
//! [`crate::StartupInfo::control`], so SQL can cancel or terminate another
//! connection (pg_cancel_backend, pg_terminate_backend) without its secret.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The BackendKeyData pair that identifies a connection to CancelRequest.
/// `pid` is a random positive number, not an OS process id: Strata serves
/// every connection from one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BackendKey {
    /// The process id the client sees.
    pub pid: i32,
    /// The secret that must accompany the pid.
    pub secret: i32,
}

/// What can interrupt one connection from outside: a cancel of the
/// statement it is running, or the end of the connection. Cheap to clone;
/// every clone signals the same connection.
#[derive(Clone, Default)]
pub struct ConnControl(Arc<Signals>);

#[derive(Default)]
struct Signals {
    cancel: Notify,
    terminate: Notify,
    terminated: AtomicBool,
    cancels: AtomicU64,
}

impl std::fmt::Debug for ConnControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnControl").field("terminated", &self.is_terminated()).finish()
    }
}

impl ConnControl {
    /// Cancels the statement the connection is running, if any (a signal to
    /// an idle connection is lost, as in PostgreSQL).
    pub fn cancel(&self) {
        self.0.cancels.fetch_add(1, Ordering::SeqCst);
        self.0.cancel.notify_waiters();
    }

    /// How many times [`ConnControl::cancel`] was called: a statement busy
    /// without awaiting compares it with the count at its start.
    pub fn cancels(&self) -> u64 {
        self.0.cancels.load(Ordering::SeqCst)
    }

    /// Ends the connection: a running statement is cancelled, and the
    /// client gets FATAL 57P01 whether busy or idle.
    pub fn terminate(&self) {
        self.0.terminated.store(true, Ordering::SeqCst);
        // Loops that only look at the cancel count stop too.
        self.0.cancels.fetch_add(1, Ordering::SeqCst);
        self.0.terminate.notify_waiters();
    }

    /// True once [`ConnControl::terminate`] was called.
    pub fn is_terminated(&self) -> bool {
        self.0.terminated.load(Ordering::SeqCst)
    }

    /// The cancel signal a running statement races against.
    pub fn cancel_signal(&self) -> &Notify {
        &self.0.cancel
    }

    /// The termination signal. Enable the `Notified` before checking
    /// [`ConnControl::is_terminated`] so that no signal is missed.
    pub fn terminate_signal(&self) -> &Notify {
        &self.0.terminate
    }
}

/// Maps each live connection's [`BackendKey`] to its control. One per
/// server, shared by all connections.
#[derive(Default)]
pub struct CancelRegistry {
    map: Mutex<HashMap<i32, (i32, ConnControl)>>,
}

/// A connection's entry in the registry; removed when dropped, so every exit
/// path of a connection (including a panic) frees its pid.
pub struct Registration {
    registry: Arc<CancelRegistry>,
    key: BackendKey,
    control: ConnControl,
}

impl CancelRegistry {
    /// Gives a new connection a fresh key and signal.
    pub fn register(self: &Arc<Self>) -> Registration {
        let control = ConnControl::default();
        let mut map = self.map.lock();
        let key = loop {
            let pid = (rand::random::<u32>() >> 1) as i32 | 1;
            if !map.contains_key(&pid) {
                break BackendKey { pid, secret: rand::random() };
            }
        };
        map.insert(key.pid, (key.secret, control.clone()));
        Registration { registry: self.clone(), key, control }
    }

    /// Registers a connection that arrives with its key (a session moved
    /// from another process, whose client holds that key); None if the
    /// pid is taken here.
    pub fn register_key(self: &Arc<Self>, key: BackendKey) -> Option<Registration> {
        let control = ConnControl::default();
        let mut map = self.map.lock();
        if map.contains_key(&key.pid) {
            return None;
        }
        map.insert(key.pid, (key.secret, control.clone()));
        Some(Registration { registry: self.clone(), key, control })
    }

    /// Signals the statement running on `key.pid` if `key.secret` matches;
    /// returns whether a connection was signalled (for tests and logs only:
    /// the protocol gives the requester no answer).
    pub fn cancel(&self, key: BackendKey) -> bool {
        let map = self.map.lock();
        let Some((secret, control)) = map.get(&key.pid) else { return false };
        if *secret != key.secret {
            tracing::debug!(pid = key.pid, "cancel request with a wrong secret");
            return false;
        }
        control.cancel();
        true
    }

    /// Number of registered connections.
    pub fn len(&self) -> usize {
        self.map.lock().len()
    }

    /// True if no connection is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Registration {
    /// The key to send in BackendKeyData.
    pub fn key(&self) -> BackendKey {
        self.key
    }

    /// The connection's control (cancel and terminate signals).
    pub fn control(&self) -> &ConnControl {
        &self.control
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry.map.lock().remove(&self.key.pid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_needs_the_secret_and_registration_is_released_on_drop() {
        let reg = Arc::new(CancelRegistry::default());
        let a = reg.register();
        let b = reg.register();
        assert_ne!(a.key().pid, b.key().pid);
        let wrong = BackendKey { secret: a.key().secret.wrapping_add(1), ..a.key() };
        assert!(!reg.cancel(wrong));
        assert!(reg.cancel(a.key()));
        let key = a.key();
        drop(a);
        assert!(!reg.cancel(key));
        assert_eq!(reg.len(), 1);
    }

    #[tokio::test]
    async fn a_waiting_statement_is_woken() {
        let reg = Arc::new(CancelRegistry::default());
        let r = reg.register();
        let notified = r.control().cancel_signal().notified();
        assert!(reg.cancel(r.key()));
        notified.await;
    }
}
