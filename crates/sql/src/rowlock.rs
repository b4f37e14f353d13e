//! Row locks taken by queries: `SELECT ... FOR UPDATE | NO KEY UPDATE |
//! SHARE | KEY SHARE [OF table] [NOWAIT | SKIP LOCKED]`, at any query level
//! (the job-queue pattern `UPDATE ... WHERE id = (SELECT id ... FOR UPDATE
//! SKIP LOCKED LIMIT 1)` locks in a subquery).
//!
//! PLANNING. The tables a locking clause covers are scanned *keyed*: each
//! row carries its storage key in a hidden trailing column ([`ROW_KEY`],
//! reachable by no name). [`crate::plan::Plan::LockRows`] sits where
//! PostgreSQL's LockRows node does: over the sorted rows, under the
//! projection and LIMIT, and knows the LIMIT so that it locks no more rows
//! than the query returns (a SKIP LOCKED worker takes one job, not all).
//!
//! EXECUTION. Expressions and plans run with a shared transaction, which
//! cannot lock. So LockRows only *decides*: a row whose keys this statement
//! has locked is kept, one whose key SKIP LOCKED passed over is dropped,
//! and when it meets rows not yet decided it records their keys (as many
//! as the LIMIT may still need) in the session's [`StatementLocks`] and
//! fails. The session undoes the attempt, takes the locks ([`serve`]:
//! waiting, or trying once for NOWAIT and SKIP LOCKED), and runs the
//! statement again, as it does for a sequence refill (sequence.rs).
//!
//! READ COMMITTED. If a row was changed by a transaction that committed
//! after the statement's snapshot, [`serve`] moves the snapshot forward
//! before the next attempt. That attempt sees the newest version of every
//! row it holds (nobody can change them now), re-evaluates WHERE and the
//! select list on it, and drops a row that no longer qualifies or was
//! deleted: the effect of PostgreSQL's EvalPlanQual recheck. The attempt
//! may also see rows committed meanwhile, as a statement started a moment
//! later would. Under REPEATABLE READ a changed row is 40001 instead (the
//! KV layer's rule for locks).
//!
//! STRENGTHS. Strata's row locks are exclusive or shared: FOR UPDATE and
//! FOR NO KEY UPDATE lock exclusively, FOR SHARE and FOR KEY SHARE shared
//! (parse.rs reads the two weaker forms as the stronger ones). That never
//! allows more than PostgreSQL does; it may wait where PostgreSQL would
//! not (FOR KEY SHARE against an UPDATE that leaves the key alone).

use std::collections::HashMap;

use kvapi::{IsolationLevel, Key, Txn};
use parking_lot::Mutex;
use sqltypes::Value;

use crate::error::{from_kv, Result};
use crate::expr::{EvalContext, Expr};
use crate::{bail, err};

/// The name of the hidden column holding a keyed scan's row key (no SQL
/// identifier can spell it).
pub const ROW_KEY: &str = "\u{0}row key";

/// What a locking clause does about a row another transaction holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Wait for it (the default).
    Wait,
    /// Fail at once with 55P03.
    NoWait,
    /// Leave the row out.
    SkipLocked,
}

/// One locked table of a query.
#[derive(Debug, Clone, PartialEq)]
pub struct LockTarget {
    /// The input column holding the table's row key.
    pub key_col: usize,
    /// The table's name, for 55P03's message.
    pub table: String,
    /// FOR SHARE / FOR KEY SHARE.
    pub shared: bool,
    /// NOWAIT / SKIP LOCKED.
    pub wait: WaitPolicy,
}

/// What [`crate::plan::Plan::LockRows`] locks, and the LIMIT above it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowLocking {
    /// The tables whose rows it locks.
    pub targets: Vec<LockTarget>,
    /// The query's LIMIT (None: all rows).
    pub limit: Option<Expr>,
    /// The query's OFFSET.
    pub offset: Option<Expr>,
}

/// The outcome of one row key's lock in this statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Locked,
    Skipped,
}

/// A row lock a statement attempt needs before it can go on.
#[derive(Debug, Clone)]
pub struct Request {
    key: Key,
    shared: bool,
    wait: WaitPolicy,
    table: String,
}

/// One session's row-lock decisions for the statement it runs.
#[derive(Debug, Default)]
pub struct StatementLocks {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    decided: HashMap<Vec<u8>, Decision>,
    pending: Vec<Request>,
}

impl StatementLocks {
    /// Forgets the previous statement's decisions.
    pub fn start_statement(&self) {
        let mut st = self.inner.lock();
        if !st.decided.is_empty() || !st.pending.is_empty() {
            *st = Inner::default();
        }
    }

    /// The locks a failed attempt asked for (taken once).
    pub fn take_pending(&self) -> Vec<Request> {
        std::mem::take(&mut self.inner.lock().pending)
    }
}

/// LockRows: keeps the rows whose keys are locked and drops those SKIP
/// LOCKED passed over; fails, recording what to lock, if it meets rows not
/// decided yet (module doc).
pub fn lock_rows(
    rows: Vec<Vec<Value>>,
    spec: &RowLocking,
    eval: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    let Some(locks) = eval.row_locks.as_deref() else {
        bail!(FeatureNotSupported, "row locks cannot be taken here");
    };
    let count = |e: &Option<Expr>| -> Result<Option<i64>> {
        match e.as_ref().map(|e| e.eval(&[], eval)).transpose()? {
            Some(Value::Int8(n)) => Ok(Some(n.max(0))),
            _ => Ok(None),
        }
    };
    // LIMIT NULL is no limit; the rows OFFSET passes over are locked too.
    let offset = count(&spec.offset)?.unwrap_or(0);
    let need = count(&spec.limit)?.map(|l| l.saturating_add(offset));
    let mut st = locks.inner.lock();
    let mut out = Vec::new();
    let mut undecided_rows = 0i64;
    let mut pending = Vec::new();
    for row in rows {
        if need.is_some_and(|n| out.len() as i64 + undecided_rows >= n) {
            break;
        }
        let mut skipped = false;
        let mut missing = Vec::new();
        for t in &spec.targets {
            // NULL: the table's side of an outer join had no row.
            let Some(Value::Bytea(k)) = row.get(t.key_col) else { continue };
            match st.decided.get(k.as_slice()) {
                Some(Decision::Locked) => {}
                Some(Decision::Skipped) => skipped = true,
                None => missing.push((k, t)),
            }
        }
        if skipped {
            continue;
        }
        if missing.is_empty() {
            out.push(row);
            continue;
        }
        undecided_rows += 1;
        for (k, t) in missing {
            let key = Key::decode(k.clone()).map_err(from_kv)?;
            let (shared, wait, table) = (t.shared, t.wait, t.table.clone());
            pending.push(Request { key, shared, wait, table });
        }
    }
    if pending.is_empty() {
        return Ok(out);
    }
    st.pending = pending;
    Err(err!(LockNotAvailable, "rows must be locked before the statement can go on"))
}

/// Takes the locks a statement attempt asked for, recording each outcome
/// for the next attempt. Under READ COMMITTED, moves the snapshot forward
/// if a locked row changed after it (module doc).
pub async fn serve<T: Txn>(txn: &mut T, locks: &StatementLocks, reqs: Vec<Request>) -> Result<()> {
    let mut changed = false;
    let mut decided = Vec::with_capacity(reqs.len());
    // One batch per (wait or not, shared or not), each taken in one call.
    for wait in [false, true] {
        for shared in [false, true] {
            let batch: Vec<&Request> = reqs
                .iter()
                .filter(|r| (r.wait == WaitPolicy::Wait) == wait && r.shared == shared)
                .collect();
            if batch.is_empty() {
                continue;
            }
            let keys: Vec<Key> = batch.iter().map(|r| r.key.clone()).collect();
            let got: Vec<Option<kvapi::Locked>> = match (wait, shared) {
                (false, _) => txn.try_lock(&keys, shared).await.map_err(from_kv)?,
                (true, true) => txn
                    .lock_for_share(&keys)
                    .await
                    .map_err(from_kv)?
                    .into_iter()
                    .map(Some)
                    .collect(),
                (true, false) => {
                    txn.lock(&keys).await.map_err(from_kv)?.into_iter().map(Some).collect()
                }
            };
            for (r, l) in batch.into_iter().zip(got) {
                let d = match l {
                    Some(l) => {
                        changed |= l.changed_since_snapshot;
                        Decision::Locked
                    }
                    None if r.wait == WaitPolicy::SkipLocked => Decision::Skipped,
                    None => bail!(
                        LockNotAvailable,
                        "could not obtain lock on row in relation \"{}\"",
                        r.table
                    ),
                };
                decided.push((r.key.clone(), d));
            }
        }
    }
    if changed && txn.isolation() == IsolationLevel::ReadCommitted {
        txn.refresh_snapshot();
    }
    let mut st = locks.inner.lock();
    for (k, d) in decided {
        st.decided.insert(k.into_bytes(), d);
    }
    Ok(())
}
