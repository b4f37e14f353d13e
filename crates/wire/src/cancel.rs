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

use std::collections::HashMap;
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

/// Maps each live connection's [`BackendKey`] to its cancel signal. One per
/// server, shared by all connections.
#[derive(Default)]
pub struct CancelRegistry {
    map: Mutex<HashMap<i32, (i32, Arc<Notify>)>>,
}

/// A connection's entry in the registry; removed when dropped, so every exit
/// path of a connection (including a panic) frees its pid.
pub struct Registration {
    registry: Arc<CancelRegistry>,
    key: BackendKey,
    signal: Arc<Notify>,
}

impl CancelRegistry {
    /// Gives a new connection a fresh key and signal.
    pub fn register(self: &Arc<Self>) -> Registration {
        let signal = Arc::new(Notify::new());
        let mut map = self.map.lock();
        let key = loop {
            let pid = (rand::random::<u32>() >> 1) as i32 | 1;
            if !map.contains_key(&pid) {
                break BackendKey { pid, secret: rand::random() };
            }
        };
        map.insert(key.pid, (key.secret, signal.clone()));
        Registration { registry: self.clone(), key, signal }
    }

    /// Signals the statement running on `key.pid` if `key.secret` matches;
    /// returns whether a connection was signalled (for tests and logs only:
    /// the protocol gives the requester no answer).
    pub fn cancel(&self, key: BackendKey) -> bool {
        let map = self.map.lock();
        let Some((secret, signal)) = map.get(&key.pid) else { return false };
        if *secret != key.secret {
            tracing::debug!(pid = key.pid, "cancel request with a wrong secret");
            return false;
        }
        signal.notify_waiters();
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

    /// The signal a running statement races against.
    pub fn signal(&self) -> &Notify {
        &self.signal
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
        let notified = r.signal().notified();
        assert!(reg.cancel(r.key()));
        notified.await;
    }
}
