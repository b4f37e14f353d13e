//! PostgreSQL's CHECK_FOR_INTERRUPTS for the synchronous parts of a
//! statement.
//!
//! A statement is a future. The wire layer stops it (a cancel request,
//! statement_timeout) by dropping it at an await point. But the executor's
//! row loops (filters, projections, joins, aggregates, set-returning
//! functions) run without awaiting: a statement busy in one would run on
//! until its next KV read, however long that takes. Worse, a runtime worker
//! busy that long polls no sockets, and an idle worker parked beside it
//! does not either: every other session's input waits for the loop to end.
//!
//! So the loops look up every [`EVERY`] rows. Those that can await call
//! [`Interrupts::pause`], which checks and, once per [`SLICE`] of running,
//! yields to the runtime (which polls the sockets before resuming the
//! statement); the synchronous ones call [`Interrupts::tick`], which only
//! checks. A check looks at the clock
//! and at the connection's cancel count, and fails with 57014 once the
//! statement's deadline has passed or a cancel arrived after it started.
//! The statement then fails as any other error fails it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backends::Backend;
use crate::error::ErrorReport;
use crate::error::Result;

/// How many rows a loop handles between two looks.
pub const EVERY: usize = 256;

/// How long a statement runs between two yields to the runtime.
pub const SLICE: Duration = Duration::from_millis(2);

/// What stops the running statement. Cheap to clone: every copy of an
/// evaluation context carries one.
#[derive(Clone, Default)]
pub struct Interrupts(Option<Arc<Watch>>);

struct Watch {
    /// When the statement started.
    start: Instant,
    /// When it should next yield, in nanoseconds after `start`.
    next_yield: AtomicU64,
    /// statement_timeout's end for this statement.
    deadline: Option<Instant>,
    /// The session's connection and its cancel count when the statement
    /// started.
    cancels: Option<(Arc<Backend>, u64)>,
}

impl std::fmt::Debug for Interrupts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let deadline = self.0.as_ref().and_then(|w| w.deadline);
        f.debug_struct("Interrupts").field("deadline", &deadline).finish()
    }
}

impl Interrupts {
    /// The checks for a statement starting now: `timeout`
    /// (statement_timeout) from now, and cancels of `backend` from now on.
    pub fn start(timeout: Option<Duration>, backend: Option<Arc<Backend>>) -> Interrupts {
        let start = Instant::now();
        let deadline = timeout.map(|t| start + t);
        let cancels = backend.map(|b| {
            let seen = b.cancels();
            (b, seen)
        });
        let next_yield = AtomicU64::new(SLICE.as_nanos() as u64);
        Interrupts(Some(Arc::new(Watch { start, next_yield, deadline, cancels })))
    }

    /// Called once per row by a loop with the row's index: every
    /// [`EVERY`] rows, fails with 57014 if the statement must stop.
    #[inline]
    pub fn tick(&self, row: usize) -> Result<()> {
        if !row.is_multiple_of(EVERY) {
            return Ok(());
        }
        self.check()
    }

    /// Called once per row by a loop that can await, with the row's index:
    /// every [`EVERY`] rows, fails with 57014 if the statement must stop and
    /// otherwise lets the runtime serve other sessions for a moment.
    pub async fn pause(&self, row: usize) -> Result<()> {
        match row.is_multiple_of(EVERY) {
            true => self.pause_now().await,
            false => Ok(()),
        }
    }

    /// [`Interrupts::pause`] for a loop whose every step is much work (a
    /// subquery run per row): checks at each call.
    pub async fn pause_now(&self) -> Result<()> {
        let Some(w) = &self.0 else { return Ok(()) };
        self.check()?;
        let now = w.start.elapsed().as_nanos() as u64;
        if now >= w.next_yield.load(Ordering::Relaxed) {
            w.next_yield.store(now + SLICE.as_nanos() as u64, Ordering::Relaxed);
            tokio::task::yield_now().await;
        }
        Ok(())
    }

    /// Fails with 57014 if the statement must stop now.
    pub fn check(&self) -> Result<()> {
        let Some(w) = &self.0 else { return Ok(()) };
        if let Some((backend, seen)) = &w.cancels {
            if backend.cancels() != *seen {
                return Err(ErrorReport::cancelled_by_user());
            }
        }
        if w.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ErrorReport::statement_timeout());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_deadline_stops_at_the_next_look() {
        let stop = Interrupts::start(Some(Duration::from_millis(1)), None);
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(stop.tick(1).is_ok(), "rows between looks pass");
        let e = stop.tick(EVERY).err().map(|e| e.message);
        assert_eq!(e.as_deref(), Some("canceling statement due to statement timeout"));
        assert!(Interrupts::start(None, None).check().is_ok());
        assert!(Interrupts::start(Some(Duration::from_secs(60)), None).check().is_ok());
    }
}
