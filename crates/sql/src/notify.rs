//! LISTEN, UNLISTEN and NOTIFY between the sessions of one tenant.
//!
//! As in PostgreSQL, everything is transactional: LISTEN and UNLISTEN take
//! effect when the transaction commits, and NOTIFY (or pg_notify) queues a
//! notification that is sent only if it commits, once per distinct (channel,
//! payload) pair, in the order first queued. At commit each notification is
//! put in the inbox of every session then listening on its channel, the
//! sender included, and the inbox's signal wakes that connection; the wire
//! layer delivers an inbox between transactions only, before ReadyForQuery
//! or while waiting for the client.
//!
//! The [`Hub`] lives in the tenant's `Database`. A tenant is served by one
//! SQL process, so it reaches every listener; the inboxes are in memory, so
//! notifications not yet delivered are lost with the process, as
//! PostgreSQL's are with the server.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::bail;
use crate::error::Result;

/// Payloads must be shorter than this many bytes (PostgreSQL's limit).
pub const PAYLOAD_LIMIT: usize = 8000;
/// Channel names must be shorter than this many bytes (NAMEDATALEN).
const CHANNEL_LIMIT: usize = 64;
/// Undelivered bytes above which an inbox takes nothing more: NOTIFY then
/// fails with 54000, as PostgreSQL's does when its queue is full.
const INBOX_LIMIT: usize = 256 << 20;

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The notifying session's pid.
    pub pid: i32,
    /// The channel.
    pub channel: String,
    /// The payload.
    pub payload: String,
}

/// The tenant's listeners, by channel.
pub struct Hub {
    channels: Mutex<HashMap<String, Vec<Arc<Inbox>>>>,
    /// Undelivered bytes above which an inbox takes nothing more.
    inbox_limit: usize,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub { channels: Mutex::default(), inbox_limit: INBOX_LIMIT }
    }
}

/// Where a session's notifications wait for delivery.
#[derive(Default)]
struct Inbox {
    queue: Mutex<(VecDeque<Note>, usize)>,
    signal: Notify,
}

impl Inbox {
    fn full(&self, limit: usize) -> bool {
        self.queue.lock().1 > limit
    }

    fn push(&self, note: Note) {
        let mut q = self.queue.lock();
        q.1 += note.channel.len() + note.payload.len();
        q.0.push_back(note);
        drop(q);
        self.signal.notify_one();
    }
}

/// A LISTEN or UNLISTEN waiting for its transaction to commit.
#[derive(Debug, Clone)]
enum Action {
    Listen(String),
    Unlisten(String),
    UnlistenAll,
}

#[derive(Default)]
struct Pending {
    actions: Vec<Action>,
    /// NOTIFYs of the open transaction, in order, without repeats.
    outgoing: Vec<(String, String)>,
    seen: HashSet<(String, String)>,
}

/// One session's side: its channels, its inbox, and what its open
/// transaction will LISTEN, UNLISTEN and NOTIFY.
pub struct Listener {
    hub: Arc<Hub>,
    inbox: Arc<Inbox>,
    pid: std::sync::atomic::AtomicI32,
    /// The channels listened to, in the order of their LISTENs.
    listening: Mutex<Vec<String>>,
    pending: Mutex<Pending>,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").field("listening", &*self.listening.lock()).finish()
    }
}

/// How far the open transaction's actions and notifications went; a
/// savepoint or a statement attempt rolls back to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark(usize, usize);

fn check_channel(channel: &str) -> Result<()> {
    if channel.is_empty() {
        bail!(InvalidParameterValue, "channel name cannot be empty");
    }
    if channel.len() >= CHANNEL_LIMIT {
        bail!(InvalidParameterValue, "channel name too long");
    }
    Ok(())
}

impl Listener {
    /// A session's listener on `hub`, listening to nothing.
    pub fn new(hub: Arc<Hub>) -> Listener {
        Listener {
            hub,
            inbox: Arc::default(),
            pid: Default::default(),
            listening: Mutex::default(),
            pending: Mutex::default(),
        }
    }

    /// Sets the pid notifications from this session carry.
    pub fn set_pid(&self, pid: i32) {
        self.pid.store(pid, std::sync::atomic::Ordering::Relaxed);
    }

    /// LISTEN `channel`, at commit.
    pub fn listen(&self, channel: &str) -> Result<()> {
        check_channel(channel)?;
        self.pending.lock().actions.push(Action::Listen(channel.to_string()));
        Ok(())
    }

    /// UNLISTEN `channel` (None: `*`), at commit.
    pub fn unlisten(&self, channel: Option<&str>) {
        let action = match channel {
            Some(c) => Action::Unlisten(c.to_string()),
            None => Action::UnlistenAll,
        };
        self.pending.lock().actions.push(action);
    }

    /// NOTIFY `channel`, `payload`, at commit.
    pub fn notify(&self, channel: &str, payload: &str) -> Result<()> {
        check_channel(channel)?;
        if payload.len() >= PAYLOAD_LIMIT {
            bail!(InvalidParameterValue, "payload string too long");
        }
        let mut p = self.pending.lock();
        let item = (channel.to_string(), payload.to_string());
        if p.seen.insert(item.clone()) {
            p.outgoing.push(item);
        }
        Ok(())
    }

    /// Where the open transaction stands.
    pub fn mark(&self) -> Mark {
        let p = self.pending.lock();
        Mark(p.actions.len(), p.outgoing.len())
    }

    /// Forgets what was queued after `mark`.
    pub fn rollback_to(&self, mark: Mark) {
        let mut p = self.pending.lock();
        p.actions.truncate(mark.0);
        if p.outgoing.len() > mark.1 {
            for item in p.outgoing.split_off(mark.1) {
                p.seen.remove(&item);
            }
        }
    }

    /// Forgets everything the transaction queued (it rolled back).
    pub fn abort(&self) {
        let mut p = self.pending.lock();
        if !p.actions.is_empty() || !p.outgoing.is_empty() {
            *p = Pending::default();
        }
    }

    /// Fails, before the transaction commits, if a listener's inbox is too
    /// full to take its notifications.
    pub fn pre_commit(&self) -> Result<()> {
        let p = self.pending.lock();
        if p.outgoing.is_empty() {
            return Ok(());
        }
        let channels = self.hub.channels.lock();
        for (channel, _) in &p.outgoing {
            let limit = self.hub.inbox_limit;
            if channels.get(channel).is_some_and(|v| v.iter().any(|i| i.full(limit))) {
                bail!(ProgramLimitExceeded, "too many notifications in the NOTIFY queue");
            }
        }
        Ok(())
    }

    /// The transaction committed: apply its LISTENs and UNLISTENs, then
    /// send its notifications.
    pub fn commit(&self) {
        let Pending { actions, outgoing, .. } = {
            let mut p = self.pending.lock();
            if p.actions.is_empty() && p.outgoing.is_empty() {
                return;
            }
            std::mem::take(&mut *p)
        };
        if !actions.is_empty() {
            let mut listening = self.listening.lock();
            let mut channels = self.hub.channels.lock();
            for a in actions {
                match a {
                    Action::Listen(c) => {
                        if !listening.contains(&c) {
                            listening.push(c.clone());
                            channels.entry(c).or_default().push(self.inbox.clone());
                        }
                    }
                    Action::Unlisten(c) => {
                        if let Some(i) = listening.iter().position(|l| *l == c) {
                            listening.remove(i);
                            self.leave(&mut channels, &c);
                        }
                    }
                    Action::UnlistenAll => {
                        for c in std::mem::take(&mut *listening) {
                            self.leave(&mut channels, &c);
                        }
                    }
                }
            }
        }
        let pid = self.pid.load(std::sync::atomic::Ordering::Relaxed);
        let channels = self.hub.channels.lock();
        for (channel, payload) in outgoing {
            let Some(inboxes) = channels.get(&channel) else { continue };
            for inbox in inboxes {
                inbox.push(Note { pid, channel: channel.clone(), payload: payload.clone() });
            }
        }
    }

    fn leave(&self, channels: &mut HashMap<String, Vec<Arc<Inbox>>>, channel: &str) {
        if let Some(v) = channels.get_mut(channel) {
            v.retain(|i| !Arc::ptr_eq(i, &self.inbox));
            if v.is_empty() {
                channels.remove(channel);
            }
        }
    }

    /// The notifications waiting for delivery, oldest first.
    pub fn take(&self) -> Vec<Note> {
        let mut q = self.inbox.queue.lock();
        q.1 = 0;
        std::mem::take(&mut q.0).into()
    }

    /// Resolves when a notification may have arrived.
    pub async fn notified(&self) {
        self.inbox.signal.notified().await
    }

    /// The channels listened to (pg_listening_channels), in LISTEN order.
    pub fn channels(&self) -> Vec<String> {
        self.listening.lock().clone()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let listening = std::mem::take(&mut *self.listening.lock());
        if listening.is_empty() {
            return;
        }
        let mut channels = self.hub.channels.lock();
        for c in listening {
            self.leave(&mut channels, &c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Listener, Listener) {
        let hub = Arc::new(Hub::default());
        let (a, b) = (Listener::new(hub.clone()), Listener::new(hub));
        a.set_pid(1);
        b.set_pid(2);
        (a, b)
    }

    #[test]
    fn notifications_follow_commits() {
        let (a, b) = pair();
        b.listen("ch").expect("valid");
        a.notify("ch", "early").expect("valid");
        a.commit();
        assert!(b.take().is_empty(), "b's LISTEN has not committed");
        b.commit();
        a.notify("ch", "x").expect("valid");
        a.notify("ch", "x").expect("valid");
        a.notify("other", "y").expect("valid");
        a.notify("ch", "z").expect("valid");
        assert!(b.take().is_empty(), "a has not committed");
        a.commit();
        let got: Vec<_> = b.take().into_iter().map(|n| (n.pid, n.payload)).collect();
        assert_eq!(got, [(1, "x".to_string()), (1, "z".to_string())]);
        a.notify("ch", "gone").expect("valid");
        a.abort();
        a.commit();
        assert!(b.take().is_empty());
    }

    #[test]
    fn savepoints_unlisten_and_drop() {
        let (a, b) = pair();
        b.listen("ch2").expect("valid");
        b.listen("ch").expect("valid");
        b.commit();
        assert_eq!(b.channels(), ["ch2", "ch"]);
        let m = a.mark();
        a.notify("ch", "1").expect("valid");
        a.rollback_to(m);
        a.notify("ch", "2").expect("valid");
        a.notify("ch", "1").expect("valid");
        a.commit();
        let got: Vec<_> = b.take().into_iter().map(|n| n.payload).collect();
        assert_eq!(got, ["2", "1"], "a rolled-back NOTIFY does not hide a later one");
        b.unlisten(None);
        b.commit();
        assert!(b.channels().is_empty());
        a.notify("ch", "3").expect("valid");
        a.commit();
        assert!(b.take().is_empty());
        b.listen("ch").expect("valid");
        b.commit();
        drop(b);
        assert!(a.hub.channels.lock().is_empty());
    }

    #[test]
    fn a_full_inbox_fails_the_notifying_commit() {
        let hub = Arc::new(Hub { channels: Mutex::default(), inbox_limit: 10 });
        let (a, b) = (Listener::new(hub.clone()), Listener::new(hub));
        b.listen("ch").expect("valid");
        b.commit();
        a.notify("ch", "0123456789").expect("valid");
        a.pre_commit().expect("room for it");
        a.commit();
        a.notify("ch", "more").expect("valid");
        let e = a.pre_commit().expect_err("b's inbox is over its limit");
        assert_eq!(e.code, sqlstate::SqlState::ProgramLimitExceeded);
        a.abort();
        assert_eq!(b.take().len(), 1, "the failed transaction sent nothing");
        a.notify("ch", "more").expect("valid");
        a.pre_commit().expect("b read its inbox: room again");
    }

    #[test]
    fn bad_channels_and_payloads() {
        let (a, _) = pair();
        assert!(a.notify("", "x").is_err());
        assert!(a.listen(&"c".repeat(64)).is_err());
        assert!(a.notify("c", &"p".repeat(PAYLOAD_LIMIT)).is_err());
        assert!(a.notify("c", &"p".repeat(PAYLOAD_LIMIT - 1)).is_ok());
    }
}
