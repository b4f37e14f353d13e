//! Cursors: the portals that outlive the statement that opened them.
//!
//! SQL's DECLARE and PL/pgSQL's OPEN (and cursor FOR loops) make one; SQL
//! FETCH/MOVE/CLOSE, PL/pgSQL's FETCH/MOVE/CLOSE and `WHERE CURRENT OF`
//! use it by name, so a refcursor a function returns is fetched from in
//! SQL. The session owns the one [`Portals`] store; statements reach it
//! through their evaluation context.
//!
//! A cursor's rows are computed when it opens (its snapshot is the
//! opening statement's, as in PostgreSQL) and kept; FETCH and MOVE move
//! over them exactly as PostgreSQL's portal code moves over an executor
//! (`DoPortalRunFetch` and `PortalRunSelect`), including which moves a NO
//! SCROLL cursor refuses and what MOVE counts.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use sqltypes::Value;

use crate::error::Result;
use crate::exec::Row;
use crate::expr::{CursorInfo, Expr};
use crate::plan::{Column, Plan};
use crate::{bail, err};

/// FETCH ALL's count.
pub const ALL: i64 = i64::MAX;

/// Which rows a FETCH or MOVE reads, as PostgreSQL's parser reduces its
/// directions: NEXT is `Forward(1)`, PRIOR `Backward(1)`, FIRST
/// `Absolute(1)`, LAST `Absolute(-1)`, ALL `Forward(ALL)`, a bare count
/// `Forward(n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// FORWARD n (negative: backward).
    Forward(i64),
    /// BACKWARD n (negative: forward).
    Backward(i64),
    /// ABSOLUTE n: the n-th row, from the end if negative.
    Absolute(i64),
    /// RELATIVE n: n rows on from the current one.
    Relative(i64),
}

impl Direction {
    /// The same direction with count `n` (PL/pgSQL computes it).
    pub fn with_count(self, n: i64) -> Direction {
        match self {
            Direction::Forward(_) => Direction::Forward(n),
            Direction::Backward(_) => Direction::Backward(n),
            Direction::Absolute(_) => Direction::Absolute(n),
            Direction::Relative(_) => Direction::Relative(n),
        }
    }
}

/// The table a cursor reads rows of, one each, for `WHERE CURRENT OF`:
/// each of its rows carries that row's storage key after its columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// The table's OID.
    pub table: u32,
}

/// What a new cursor is made of.
pub struct NewCursor {
    /// Its result columns.
    pub columns: Vec<Column>,
    /// Its rows (with their keys last when `source` is set).
    pub rows: Vec<Row>,
    /// SCROLL: it may move backward.
    pub scroll: bool,
    /// WITH HOLD: it outlives its transaction.
    pub hold: bool,
    /// The statement that declared it (pg_cursors).
    pub statement: String,
    /// When (microseconds since 2000).
    pub created: i64,
    /// The table it scans, for `WHERE CURRENT OF`.
    pub source: Option<Source>,
}

/// An open cursor: its rows and where it stands, kept as PostgreSQL keeps
/// a portal's (`at_start`, `at_end`, `pos`) over its executor's (`cur`).
struct Cursor {
    /// Shared with every FETCH's result (a FOR loop fetches per row).
    columns: Arc<Vec<Column>>,
    rows: Vec<Row>,
    /// Its name, statement, SCROLL and WITH HOLD (pg_cursors).
    info: CursorInfo,
    source: Option<Source>,
    /// A cursor FOR loop is reading it: CLOSE may not drop it.
    pinned: bool,
    /// When it opened, in the store's count of openings (see
    /// [`Portals::mark`]).
    opened: u64,
    at_start: bool,
    at_end: bool,
    pos: i64,
    /// The executor's place: 0 before the first row, k on row k, past the
    /// last row at `rows.len() + 1`.
    cur: usize,
}

fn forward_only() -> crate::error::ErrorReport {
    err!(ObjectNotInPrerequisiteState, "cursor can only scan forward")
        .with_hint("Declare it with SCROLL option to enable backward scan.")
}

impl Cursor {
    /// The executor's read: up to `count` rows (0: all) one way.
    fn step(&mut self, forward: bool, count: u64, out: &mut Option<&mut Vec<Row>>) -> u64 {
        let n = self.rows.len();
        let width = self.columns.len();
        let mut done = 0;
        while count == 0 || done < count {
            if forward {
                if self.cur >= n {
                    self.cur = n + 1;
                    break;
                }
                self.cur += 1;
            } else {
                if self.cur <= 1 {
                    self.cur = 0;
                    break;
                }
                self.cur -= 1;
            }
            if let (Some(out), Some(row)) = (out.as_deref_mut(), self.rows.get(self.cur - 1)) {
                out.push(row.iter().take(width).cloned().collect());
            }
            done += 1;
        }
        done
    }

    /// PostgreSQL's PortalRunSelect: reads `count` rows one way (none if
    /// `count <= 0`), keeping the portal's place.
    fn select(&mut self, forward: bool, count: i64, mut out: Option<&mut Vec<Row>>) -> Result<u64> {
        let all = count == ALL;
        let wanted = if all { 0 } else { count.max(0) as u64 };
        if forward {
            if self.at_end || count <= 0 {
                return Ok(0);
            }
            let n = self.step(true, wanted, &mut out);
            if n > 0 {
                self.at_start = false;
            }
            if all || n < wanted {
                self.at_end = true;
            }
            self.pos += n as i64;
            return Ok(n);
        }
        if !self.info.scrollable {
            return Err(forward_only());
        }
        if self.at_start || count <= 0 {
            return Ok(0);
        }
        let n = self.step(false, wanted, &mut out);
        if n > 0 && self.at_end {
            self.at_end = false;
            self.pos += 1;
        }
        if all || n < wanted {
            self.at_start = true;
            self.pos = 0;
        } else {
            self.pos -= n as i64;
        }
        Ok(n)
    }

    /// Back to before the first row (a NO SCROLL cursor only if it has not
    /// moved).
    fn rewind(&mut self) -> Result<()> {
        if self.at_start && !self.at_end {
            return Ok(());
        }
        if !self.info.scrollable {
            return Err(forward_only());
        }
        self.cur = 0;
        self.at_start = true;
        self.at_end = false;
        self.pos = 0;
        Ok(())
    }

    /// PostgreSQL's DoPortalRunFetch: moves as `dir` says and returns the
    /// rows read, or with `out` None (MOVE) the count MOVE reports.
    fn fetch(&mut self, dir: Direction, mut out: Option<&mut Vec<Row>>) -> Result<u64> {
        let moving = out.is_none();
        let (mut forward, mut count) = match dir {
            Direction::Forward(c) if c < 0 => (false, c.saturating_neg()),
            Direction::Forward(c) => (true, c),
            Direction::Backward(c) if c < 0 => (true, c.saturating_neg()),
            Direction::Backward(c) => (false, c),
            Direction::Absolute(c) if c > 0 => {
                if (c - 1) <= self.pos / 2 {
                    self.rewind()?;
                    if c > 1 {
                        self.select(true, c - 1, None)?;
                    }
                } else {
                    let pos = self.pos + i64::from(self.at_end);
                    if c <= pos {
                        self.select(false, pos - c + 1, None)?;
                    } else if c > pos + 1 {
                        self.select(true, c - pos - 1, None)?;
                    }
                }
                return self.select(true, 1, out);
            }
            Direction::Absolute(c) if c < 0 => {
                self.select(true, ALL, None)?;
                if c < -1 {
                    self.select(false, c.saturating_neg() - 1, None)?;
                }
                return self.select(false, 1, out);
            }
            Direction::Absolute(_) => {
                self.rewind()?;
                return self.select(true, 0, out);
            }
            Direction::Relative(c) if c > 0 => {
                if c > 1 {
                    self.select(true, c - 1, None)?;
                }
                return self.select(true, 1, out);
            }
            Direction::Relative(c) if c < 0 => {
                if c < -1 {
                    self.select(false, c.saturating_neg() - 1, None)?;
                }
                return self.select(false, 1, out);
            }
            Direction::Relative(_) => (true, 0),
        };
        if count == 0 {
            // FETCH 0 reads the current row again; MOVE 0 says if there
            // is one.
            let on_row = !self.at_start && !self.at_end;
            if moving {
                return Ok(u64::from(on_row));
            }
            if on_row {
                self.select(false, 1, None)?;
                count = 1;
                forward = true;
            }
        }
        if !forward && count == ALL && moving {
            let mut n = self.pos.max(0) as u64;
            if n > 0 && !self.at_end {
                n -= 1;
            }
            self.rewind()?;
            return Ok(n);
        }
        self.select(forward, count, out.take())
    }

    /// The row the cursor is on, if any.
    fn current(&self) -> Option<&Row> {
        if self.at_start || self.at_end {
            return None;
        }
        self.cur.checked_sub(1).and_then(|i| self.rows.get(i))
    }
}

/// What FETCH read.
pub struct Fetched {
    /// The rows (empty for MOVE).
    pub rows: Vec<Row>,
    /// How many: FETCH's rows, or MOVE's count.
    pub count: u64,
    /// The cursor's columns.
    pub columns: Arc<Vec<Column>>,
}

/// A session's open cursors, by name.
#[derive(Default)]
pub struct Portals {
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Portals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Portals")
    }
}

#[derive(Default)]
struct Inner {
    open: HashMap<String, Cursor>,
    /// The last generated name's number (`<unnamed portal N>`).
    unnamed: u64,
    /// Cursors opened so far.
    opened: u64,
    /// `opened` when the transaction under way started: those opened
    /// since go with a rollback, WITH HOLD or not.
    txn_start: u64,
}

/// 34000 for a cursor of that name that does not exist.
pub(crate) fn missing(name: &str) -> crate::error::ErrorReport {
    err!(InvalidCursorName, "cursor \"{name}\" does not exist")
}

impl Portals {
    /// True if a cursor of this name is open.
    pub fn exists(&self, name: &str) -> bool {
        self.inner.lock().open.contains_key(name)
    }

    /// A name for a cursor opened without one, as PostgreSQL makes them.
    pub fn unnamed(&self) -> String {
        let mut inner = self.inner.lock();
        loop {
            inner.unnamed += 1;
            let name = format!("<unnamed portal {}>", inner.unnamed);
            if !inner.open.contains_key(&name) {
                return name;
            }
        }
    }

    /// Opens cursor `name` (DECLARE's error if one is open by that name).
    pub fn open(&self, name: &str, c: NewCursor) -> Result<()> {
        let mut inner = self.inner.lock();
        if inner.open.contains_key(name) {
            bail!(DuplicateCursor, "cursor \"{name}\" already exists");
        }
        inner.opened += 1;
        let info = CursorInfo {
            name: name.to_string(),
            statement: c.statement,
            holdable: c.hold,
            scrollable: c.scroll,
            created: c.created,
        };
        let cursor = Cursor {
            columns: Arc::new(c.columns),
            rows: c.rows,
            info,
            source: c.source,
            pinned: false,
            opened: inner.opened,
            at_start: true,
            at_end: false,
            pos: 0,
            cur: 0,
        };
        inner.open.insert(name.to_string(), cursor);
        Ok(())
    }

    /// FETCH (`rows`) or MOVE from cursor `name`.
    pub fn fetch(&self, name: &str, dir: Direction, rows: bool) -> Result<Fetched> {
        let mut inner = self.inner.lock();
        let Some(c) = inner.open.get_mut(name) else { return Err(missing(name)) };
        let mut out = Vec::new();
        let count = c.fetch(dir, rows.then_some(&mut out))?;
        Ok(Fetched { rows: out, count, columns: c.columns.clone() })
    }

    /// CLOSE: drops cursor `name` (not while a FOR loop reads it).
    pub fn close(&self, name: &str) -> Result<()> {
        let mut inner = self.inner.lock();
        match inner.open.get(name) {
            None => Err(missing(name)),
            Some(c) if c.pinned => {
                bail!(InvalidCursorState, "cannot drop pinned portal \"{name}\"")
            }
            Some(_) => {
                inner.open.remove(name);
                Ok(())
            }
        }
    }

    /// CLOSE ALL: drops every cursor no FOR loop reads.
    pub fn close_all(&self) {
        self.inner.lock().open.retain(|_, c| c.pinned);
    }

    /// Marks cursor `name` as read by a FOR loop (or no longer).
    pub fn pin(&self, name: &str, pinned: bool) {
        if let Some(c) = self.inner.lock().open.get_mut(name) {
            c.pinned = pinned;
        }
    }

    /// Drops cursor `name` if open, pinned or not (a FOR loop's own, when
    /// the loop ends).
    pub fn drop_cursor(&self, name: &str) {
        self.inner.lock().open.remove(name);
    }

    /// The columns of cursor `name`.
    pub fn columns(&self, name: &str) -> Option<Vec<Column>> {
        self.inner.lock().open.get(name).map(|c| c.columns.to_vec())
    }

    /// The open cursors, for pg_cursors.
    pub fn infos(&self) -> Vec<CursorInfo> {
        self.inner.lock().open.values().map(|c| c.info.clone()).collect()
    }

    /// The transaction ended (committed if `commit`): only WITH HOLD
    /// cursors stay, and of those only the ones opened before it if it
    /// rolled back.
    pub fn end_transaction(&self, commit: bool) {
        let mut inner = self.inner.lock();
        let start = inner.txn_start;
        inner.open.retain(|_, c| c.info.holdable && (commit || c.opened <= start));
        inner.txn_start = inner.opened;
    }

    /// Where a subtransaction starts, for [`Portals::rollback_to`].
    pub fn mark(&self) -> u64 {
        self.inner.lock().opened
    }

    /// A subtransaction failed: the cursors it opened are gone.
    pub fn rollback_to(&self, mark: u64) {
        self.inner.lock().open.retain(|_, c| c.opened <= mark);
    }

    /// The storage key of the row cursor `name` is on, which must be a row
    /// of `table` (`WHERE CURRENT OF`).
    pub fn current_key(&self, name: &str, table: u32, table_name: &str) -> Result<Vec<u8>> {
        let inner = self.inner.lock();
        let Some(c) = inner.open.get(name) else { return Err(missing(name)) };
        if c.source.as_ref().map(|s| s.table) != Some(table) {
            bail!(
                InvalidCursorState,
                "cursor \"{name}\" is not a simply updatable scan of table \"{table_name}\""
            );
        }
        match c.current().and_then(|r| r.last()) {
            Some(Value::Bytea(k)) => Ok(k.clone()),
            _ => bail!(InvalidCursorState, "cursor \"{name}\" is not positioned on a row"),
        }
    }
}

/// True if a cursor over `plan` may move backward unless declared NO
/// SCROLL: PostgreSQL's rule, which refuses it to a FOR UPDATE/SHARE query.
pub fn scrollable(plan: &Plan) -> bool {
    !plan.any(&|p| matches!(p, Plan::LockRows(..)))
}

/// `plan` made to carry, after its columns, the storage key of the table
/// row each of its rows is, if it reads one table's rows one for one (a
/// projection of a scan, filtered, sorted, locked or limited): what
/// `WHERE CURRENT OF` needs. None for any other plan.
pub fn keyed(plan: &Plan) -> Option<(Plan, Source)> {
    let mut plan = plan.clone();
    let table = key_through(&mut plan)?;
    Some((plan, Source { table }))
}

/// [`keyed`]'s walk down to the projection; the table's OID.
fn key_through(p: &mut Plan) -> Option<u32> {
    match p {
        Plan::Sort(i, _) | Plan::Limit(i, ..) | Plan::Filter(i, _) | Plan::Init(_, i) => {
            key_through(i)
        }
        Plan::Project(input, exprs) => {
            let table = scan_below(input)?;
            exprs.push(Expr::Column(table.1));
            Some(table.0)
        }
        _ => None,
    }
}

/// Under a projection: the scan whose rows reach it unchanged, made to
/// carry its keys (its table's OID and the key's column).
fn scan_below(p: &mut Plan) -> Option<(u32, usize)> {
    match p {
        Plan::Sort(i, _)
        | Plan::Limit(i, ..)
        | Plan::LimitTies(i, ..)
        | Plan::Filter(i, _)
        | Plan::LockRows(i, _) => scan_below(i),
        Plan::Scan(s) => {
            s.keyed = true;
            Some((s.table.oid, s.table.columns.len()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(n: i64, scroll: bool) -> Portals {
        let p = Portals::default();
        let c = NewCursor {
            columns: vec![Column::computed("x", sqltypes::DataType::Int8)],
            rows: (1..=n).map(|i| vec![Value::Int8(i)]).collect(),
            scroll,
            hold: false,
            statement: String::new(),
            created: 0,
            source: None,
        };
        p.open("c", c).expect("opens");
        p
    }

    fn fetch(p: &Portals, d: Direction) -> Vec<i64> {
        let f = p.fetch("c", d, true).expect("fetches");
        f.rows
            .iter()
            .map(|r| match r[0] {
                Value::Int8(i) => i,
                _ => -1,
            })
            .collect()
    }

    #[test]
    fn directions_move_as_postgresql_does() {
        use Direction::*;
        let p = cursor(8, true);
        assert_eq!(fetch(&p, Forward(1)), [1]);
        assert_eq!(fetch(&p, Absolute(-1)), [8]);
        assert_eq!(fetch(&p, Backward(1)), [7]);
        assert_eq!(fetch(&p, Absolute(1)), [1]);
        assert_eq!(fetch(&p, Absolute(4)), [4]);
        assert_eq!(fetch(&p, Relative(2)), [6]);
        assert_eq!(fetch(&p, Relative(-3)), [3]);
        assert_eq!(fetch(&p, Relative(0)), [3]);
        assert_eq!(fetch(&p, Absolute(20)), Vec::<i64>::new());
        assert_eq!(fetch(&p, Backward(1)), [8]);
        assert_eq!(fetch(&p, Absolute(0)), Vec::<i64>::new());
        assert_eq!(fetch(&p, Forward(3)), [1, 2, 3]);
        assert_eq!(fetch(&p, Forward(-2)), [2, 1]);
        assert_eq!(fetch(&p, Forward(ALL)), (2..=8).collect::<Vec<_>>());
        assert_eq!(fetch(&p, Backward(ALL)), (1..=8).rev().collect::<Vec<_>>());
    }

    #[test]
    fn move_counts() {
        use Direction::*;
        let p = cursor(8, true);
        let mv = |d| p.fetch("c", d, false).expect("moves").count;
        assert_eq!(mv(Forward(ALL)), 8);
        assert_eq!(mv(Backward(ALL)), 8);
        assert_eq!(mv(Forward(3)), 3);
        assert_eq!(mv(Absolute(0)), 0);
        assert_eq!(mv(Forward(1)), 1);
        assert_eq!(mv(Absolute(-1)), 1);
        assert_eq!(mv(Forward(1)), 0);
        assert_eq!(mv(Forward(0)), 0);
    }

    #[test]
    fn no_scroll_refuses_backward_moves() {
        use Direction::*;
        let p = cursor(8, false);
        assert_eq!(fetch(&p, Forward(2)), [1, 2]);
        assert_eq!(fetch(&p, Absolute(5)), [5]);
        assert_eq!(fetch(&p, Relative(2)), [7]);
        for d in [Backward(1), Absolute(1), Relative(0)] {
            let e = p.fetch("c", d, true).err().expect("refused");
            assert_eq!(e.code.code(), "55000", "{d:?}");
        }
        // MOVE 0 only asks: still on row 7.
        assert_eq!(p.fetch("c", Forward(0), false).expect("moves").count, 1);
        // LAST reads to the end, then refuses to step back.
        let e = p.fetch("c", Absolute(-1), true).err().expect("refused");
        assert_eq!(e.code.code(), "55000");
        assert_eq!(p.fetch("c", Forward(0), false).expect("moves").count, 0);
    }

    #[test]
    fn pinned_and_transaction_scoped() {
        let p = cursor(2, true);
        p.pin("c", true);
        assert_eq!(p.close("c").err().map(|e| e.code.code().to_string()), Some("24000".into()));
        p.pin("c", false);
        p.close("c").expect("closes");
        assert_eq!(p.close("c").err().map(|e| e.code.code().to_string()), Some("34000".into()));
        // A subtransaction that fails drops the cursors opened in it.
        let q = cursor(1, true);
        let mark = q.mark();
        q.rollback_to(mark);
        assert!(q.exists("c"));
        q.rollback_to(mark - 1);
        assert!(!q.exists("c"));
    }
}
