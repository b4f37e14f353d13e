//! Failed-authentication throttling, keyed on (client address, tenant).
//!
//! SQL processes authenticate; they report each password outcome to the
//! proxy ([`crate::control::AuthEvent`]), and the proxy refuses a pair's
//! next attempts for a while after a wrong password: 1 s after the first
//! failure ([`BASE_DELAY`]), doubling with each further one, at most
//! [`MAX_DELAY`]. A refused attempt gets FATAL 08004 at once, saying how
//! long to wait, before any SQL process sees it: a throttled client is
//! never left hanging, and guessing passwords costs the server nothing.
//! A pair that logged in within [`RECENT_LOGIN`] is not throttled (its
//! user is not locked out by someone failing from the same address), and
//! a pair with no failure for [`FORGET`] starts again from 1 s.
//!
//! The table holds at most a fixed number of pairs; when it is full, the
//! stalest pairs go first (those whose wait is over and who have not
//! logged in recently, else the least recently seen).

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// The wait after the first failure.
pub const BASE_DELAY: Duration = Duration::from_secs(1);
/// The longest wait.
pub const MAX_DELAY: Duration = Duration::from_secs(60);
/// A successful login this recent exempts the pair.
pub const RECENT_LOGIN: Duration = Duration::from_secs(600);
/// A pair's failures are forgotten after this long without one.
pub const FORGET: Duration = Duration::from_secs(600);
/// Pairs the proxy remembers by default.
pub const DEFAULT_CAPACITY: usize = 100_000;

/// A client address (None: not over TCP) and a tenant id.
pub type Pair = (Option<IpAddr>, u64);

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Failures since the last success (or since they were forgotten).
    failures: u32,
    /// Attempts before this are refused.
    until: Instant,
    last_failure: Option<Instant>,
    last_login: Option<Instant>,
}

impl Entry {
    fn recent_login(&self, now: Instant) -> bool {
        self.last_login.is_some_and(|t| now.saturating_duration_since(t) < RECENT_LOGIN)
    }

    fn last_seen(&self) -> Option<Instant> {
        self.last_failure.max(self.last_login)
    }

    /// Whether forgetting it changes nothing now (its failures would
    /// still count toward the next wait).
    fn stale(&self, now: Instant) -> bool {
        now >= self.until && !self.recent_login(now)
    }

    /// Whether forgetting it changes nothing at all: stale, and its
    /// failures are forgotten anyway.
    fn forgettable(&self, now: Instant) -> bool {
        self.stale(now)
            && self.last_failure.is_none_or(|t| now.saturating_duration_since(t) >= FORGET)
    }
}

/// The throttling table (see the module documentation).
pub struct Throttle {
    entries: HashMap<Pair, Entry>,
    capacity: usize,
}

impl Throttle {
    /// A table of at most `capacity` pairs.
    pub fn new(capacity: usize) -> Throttle {
        Throttle { entries: HashMap::new(), capacity: capacity.max(1) }
    }

    /// How many pairs it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How long `pair` must still wait before it may try again (None: it
    /// may try now).
    pub fn wait(&self, pair: Pair, now: Instant) -> Option<Duration> {
        let e = self.entries.get(&pair)?;
        if e.recent_login(now) || now >= e.until {
            return None;
        }
        Some(e.until - now)
    }

    /// Records an authentication of `pair`: a success, or a wrong password.
    pub fn record(&mut self, pair: Pair, ok: bool, now: Instant) {
        if !self.entries.contains_key(&pair) {
            // A success is kept too: it exempts the pair from a later
            // failure's back-off for a while.
            self.make_room(now);
        }
        let e = self.entries.entry(pair).or_insert(Entry {
            failures: 0,
            until: now,
            last_failure: None,
            last_login: None,
        });
        if ok {
            e.failures = 0;
            e.until = now;
            e.last_login = Some(now);
            return;
        }
        if e.last_failure.is_some_and(|t| now.saturating_duration_since(t) >= FORGET) {
            e.failures = 0;
        }
        e.failures = e.failures.saturating_add(1);
        e.last_failure = Some(now);
        let doublings = (e.failures - 1).min(16);
        e.until = now + (BASE_DELAY * (1u32 << doublings)).min(MAX_DELAY);
    }

    /// Frees a place if the table is full: forgettable pairs first, then
    /// stale ones (all of them), else the least recently seen.
    fn make_room(&mut self, now: Instant) {
        if self.entries.len() < self.capacity {
            return;
        }
        self.entries.retain(|_, e| !e.forgettable(now));
        if self.entries.len() < self.capacity {
            return;
        }
        self.entries.retain(|_, e| !e.stale(now));
        if self.entries.len() < self.capacity {
            return;
        }
        let oldest = self.entries.iter().min_by_key(|(_, e)| e.last_seen()).map(|(k, _)| *k);
        if let Some(k) = oldest {
            self.entries.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(n: u8, tenant: u64) -> Pair {
        (Some(IpAddr::from([10, 0, 0, n])), tenant)
    }

    #[test]
    fn failures_back_off_doubling_up_to_the_cap() {
        let mut t = Throttle::new(10);
        let now = Instant::now();
        let p = pair(1, 7);
        assert_eq!(t.wait(p, now), None);
        let mut at = now;
        for (i, want) in [1u64, 2, 4, 8, 16, 32, 60, 60].into_iter().enumerate() {
            t.record(p, false, at);
            assert_eq!(t.wait(p, at), Some(Duration::from_secs(want)), "failure {}", i + 1);
            at += Duration::from_secs(want);
            assert_eq!(t.wait(p, at), None, "after the wait of failure {}", i + 1);
        }
        // Another address, or another tenant from the same address: not throttled.
        assert_eq!(t.wait(pair(2, 7), at - Duration::from_secs(1)), None);
        assert_eq!(t.wait(pair(1, 8), at - Duration::from_secs(1)), None);
    }

    #[test]
    fn a_recent_login_bypasses_and_resets() {
        let mut t = Throttle::new(10);
        let now = Instant::now();
        let p = pair(1, 7);
        t.record(p, false, now);
        t.record(p, false, now + Duration::from_secs(1));
        let ok_at = now + Duration::from_secs(3);
        t.record(p, true, ok_at);
        // Failing again right after a login: still not throttled.
        t.record(p, false, ok_at + Duration::from_secs(1));
        assert_eq!(t.wait(p, ok_at + Duration::from_secs(1)), None);
        t.record(p, false, ok_at + Duration::from_secs(300));
        // Once the login is no longer recent, the failures since it count.
        let later = ok_at + RECENT_LOGIN + Duration::from_secs(1);
        t.record(p, false, later);
        assert_eq!(t.wait(p, later), Some(Duration::from_secs(4)));
    }

    #[test]
    fn failures_are_forgotten_after_a_quiet_while() {
        let mut t = Throttle::new(10);
        let now = Instant::now();
        let p = pair(1, 7);
        for i in 0..5 {
            t.record(p, false, now + Duration::from_secs(i * 100));
        }
        let much_later = now + Duration::from_secs(400) + FORGET;
        t.record(p, false, much_later);
        assert_eq!(t.wait(p, much_later), Some(BASE_DELAY));
    }

    #[test]
    fn the_table_stays_bounded() {
        let mut t = Throttle::new(100);
        let now = Instant::now();
        for i in 0..10_000u64 {
            let at = now + Duration::from_millis(i);
            t.record((Some(IpAddr::from((i as u32).to_be_bytes())), 1), false, at);
            assert!(t.len() <= 100);
        }
        // The newest pair is remembered, and throttled.
        let last = (Some(IpAddr::from(9_999u32.to_be_bytes())), 1);
        assert!(t.wait(last, now + Duration::from_millis(9_999)).is_some());
        // A success of a pair never seen is kept, and exempts it from the
        // back-off of a failure that follows.
        let mut u = Throttle::new(2);
        u.record(pair(1, 1), true, now);
        assert_eq!(u.len(), 1);
        u.record(pair(1, 1), false, now);
        assert_eq!(u.wait(pair(1, 1), now), None);
    }
}
