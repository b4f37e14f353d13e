//! Waits a function call asks for: pg_sleep (and pg_sleep_for,
//! pg_sleep_until), and pg_terminate_backend with a timeout.
//!
//! Expressions are evaluated synchronously, so a call cannot wait where it
//! stands. It uses the statement retry scheme instead (see
//! `Session::execute_with_retries`): the first time, the call records the
//! wait and fails; the session undoes the attempt, waits (a cancel drops
//! the wait with the statement) and runs the statement again. Calls are
//! counted per attempt, so on the next attempt the same call finds its
//! outcome and returns it, and a later call may ask for the next wait.
//! Work before the call is done again, as for the other retries; so that
//! a signal is sent once, pg_cancel_backend and pg_terminate_backend are
//! decided once per statement too, and replayed.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use sqlstate::{ErrorReport, SqlState};

use crate::err;

/// What a call waits for.
pub enum Wait {
    /// A pause.
    Sleep(Duration),
    /// Session `pid` to end, for at most `timeout`; the outcome says
    /// whether it did.
    Exit {
        /// The sessions.
        registry: Arc<crate::backends::Registry>,
        /// Whose end.
        pid: i32,
        /// For how long.
        timeout: Duration,
    },
}

/// What a call returned the first time, which later attempts replay.
#[derive(Debug, Clone)]
pub struct Memo {
    /// The call's result.
    pub result: bool,
    /// The warning it raised, raised again at each replay.
    pub warning: Option<ErrorReport>,
}

impl Memo {
    /// A result without a warning.
    pub fn ok(result: bool) -> Memo {
        Memo { result, warning: None }
    }
}

impl Wait {
    /// Waits; the outcome of the call that asked.
    pub async fn run(self) -> Memo {
        match self {
            Wait::Sleep(d) => {
                tokio::time::sleep(d).await;
                Memo::ok(true)
            }
            Wait::Exit { registry, pid, timeout } => {
                let deadline = tokio::time::Instant::now() + timeout;
                loop {
                    if registry.get(pid).is_none() {
                        return Memo::ok(true);
                    }
                    if tokio::time::Instant::now() >= deadline {
                        let msg = format!(
                            "backend with PID {pid} did not terminate within {} milliseconds",
                            timeout.as_millis()
                        );
                        let warning = Some(ErrorReport::warning(SqlState::Warning, msg));
                        return Memo { result: false, warning };
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }

    /// pg_stat_activity's (wait_event_type, wait_event) while waiting.
    pub fn event(&self) -> (&'static str, &'static str) {
        match self {
            Wait::Sleep(_) => ("Timeout", "PgSleep"),
            Wait::Exit { .. } => ("Timeout", "BackendTermination"),
        }
    }
}

/// One statement's calls that wait or signal, with what each returned.
#[derive(Default)]
pub struct StatementWaits {
    st: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// What the calls decided so far returned, in call order.
    memos: Vec<Memo>,
    /// Calls made by the running attempt.
    next: usize,
    pending: Option<Wait>,
}

impl std::fmt::Debug for StatementWaits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatementWaits").field("decided", &self.st.lock().memos.len()).finish()
    }
}

impl StatementWaits {
    /// A new statement: no call has been decided.
    pub fn start_statement(&self) {
        let mut st = self.st.lock();
        st.memos.clear();
        st.next = 0;
        st.pending = None;
    }

    /// A new attempt of the statement: calls are counted from the first.
    pub fn start_attempt(&self) {
        self.st.lock().next = 0;
    }

    /// Counts a call. If an earlier attempt decided it, returns what it
    /// returned; otherwise the caller decides now, by [`Self::settle`] or
    /// by [`Self::wait_for`]. Every call must be counted on every attempt.
    pub fn replay(&self) -> Option<Memo> {
        let mut st = self.st.lock();
        let i = st.next;
        st.next += 1;
        st.memos.get(i).cloned()
    }

    /// Records what the call just counted returns without waiting.
    pub fn settle(&self, memo: Memo) {
        self.st.lock().memos.push(memo);
    }

    /// Records the wait the call just counted needs; the returned error
    /// fails the attempt, so the session waits and runs the statement again.
    pub fn wait_for(&self, wait: Wait) -> crate::error::Error {
        self.st.lock().pending = Some(wait);
        err!(QueryCanceled, "the statement waits and runs again")
    }

    /// The wait a failed attempt asked for (taken once).
    pub fn take_pending(&self) -> Option<Wait> {
        self.st.lock().pending.take()
    }

    /// Records what the wait just done returned.
    pub fn done(&self, memo: Memo) {
        self.st.lock().memos.push(memo);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_decided_once_each_in_order() {
        let w = StatementWaits::default();
        w.start_statement();
        w.start_attempt();
        assert!(w.replay().is_none());
        w.settle(Memo::ok(false));
        assert!(w.replay().is_none());
        let _ = w.wait_for(Wait::Sleep(Duration::ZERO));
        assert!(w.take_pending().is_some());
        w.done(Memo::ok(true));
        w.start_attempt();
        assert!(!w.replay().expect("settled").result);
        assert!(w.replay().expect("waited").result);
        assert!(w.replay().is_none());
        assert!(w.take_pending().is_none());
    }
}
