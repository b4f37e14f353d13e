//! The executor: runs a [`Plan`] inside a KV transaction.
//!
//! Each operator materializes its output as a vector of rows. That keeps the
//! code simple and makes every KV access a batch (a point get, or a scan of
//! up to [`SCAN_BATCH`] rows per call); streaming execution for large
//! analytical scans is future work. Row keys travel with scanned rows
//! ([`KeyedRow`]) because UPDATE and DELETE need them for locking.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;

use kvapi::{Key, KeyRange, TenantId, Txn};
use sqltypes::{cast, keycode, ops, rowcodec, DataType, Value};

use crate::bail;

// Aggregates: grouping and the aggregate functions' states.
mod aggregate;
pub mod memo;
use crate::catalog::{keys, Catalog, TableDef};
use crate::error::{from_kv, Result};
use crate::expr::{and_all, BinOp, EvalContext, Expr, SubqValue};
use crate::plan::{
    Access, Correlated, Join, JoinKind, KeyBound, KeyOrder, Plan, Scan, SetOpKind, SortKey,
    SubqKind,
};
use aggregate::aggregate;
pub(crate) use aggregate::{agg_final, agg_init, agg_input, agg_step, AggState};

/// Rows fetched per KV scan call.
pub const SCAN_BATCH: usize = 1024;

/// Upper bound on rows an operator may materialize, so one query cannot
/// exhaust the process's memory.
pub const MAX_ROWS: usize = 50_000_000;

/// A row of values.
pub type Row = Vec<Value>;

/// A stored row together with its storage key.
pub type KeyedRow = (Key, Row);

/// Everything an operator needs besides its plan node.
pub struct ExecCtx<'a, T: Txn> {
    /// The transaction.
    pub txn: &'a T,
    /// The tenant whose keys we read.
    pub tenant: TenantId,
    /// Parameters and clocks.
    pub eval: &'a EvalContext,
    /// The catalog snapshot (for system views).
    pub catalog: &'a Catalog,
}

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// Runs `plan` and returns all its rows.
pub fn run<'a, T: Txn>(plan: &'a Plan, cx: &'a ExecCtx<'a, T>) -> BoxFut<'a, Vec<Row>> {
    Box::pin(async move {
        Ok(match plan {
            Plan::Values(rows) => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    let mut row = Vec::with_capacity(r.len());
                    for e in r {
                        row.push(e.eval(&[], cx.eval)?);
                    }
                    out.push(row);
                }
                out
            }
            Plan::Scan(scan) if scan.keyed => scan_rows(cx, scan)
                .await?
                .into_iter()
                .map(|(k, mut r)| {
                    r.push(Value::Bytea(k.into_bytes()));
                    r
                })
                .collect(),
            Plan::Scan(scan) => scan_rows(cx, scan).await?.into_iter().map(|(_, r)| r).collect(),
            Plan::LockRows(input, spec) => {
                crate::rowlock::lock_rows(run(input, cx).await?, spec, cx.eval)?
            }
            Plan::Function(f) => crate::select::functions::rows(f, cx.eval)?,
            Plan::PlCall(c) => crate::plpgsql::call(c, cx).await?,
            Plan::WorkTable(id) => {
                match cx.eval.work.iter().flat_map(|w| w.iter()).rev().find(|(w, _)| w == id) {
                    Some((_, rows)) => rows.as_ref().clone(),
                    None => bail!(InternalError, "work table {id} is not set"),
                }
            }
            Plan::Recursive { id, base, step, all } => recursive(*id, base, step, *all, cx).await?,
            Plan::Sequence(def) => {
                let (last, called) = crate::sequence::stored_position(cx.txn, cx.tenant, def.oid)
                    .await?
                    .unwrap_or((def.start, false));
                vec![vec![Value::Int8(last), Value::Int8(0), Value::Bool(called)]]
            }
            Plan::System(t) => {
                let mut rows = t.rows(cx.catalog, cx.eval);
                if let crate::system::SystemTable::PgSequences = t {
                    crate::system::fill_sequence_positions(
                        &mut rows, cx.catalog, cx.txn, cx.tenant,
                    )
                    .await?;
                }
                if let Some(oid) = t.oid() {
                    rows.iter_mut().for_each(|r| r.push(Value::Oid(oid)));
                }
                rows
            }
            Plan::Filter(input, pred) => {
                let rows = run(input, cx).await?;
                let mut out = Vec::with_capacity(rows.len());
                for (i, r) in rows.into_iter().enumerate() {
                    cx.eval.interrupts.pause(i).await?;
                    if pred.eval_pred(&r, cx.eval)? {
                        out.push(r);
                    }
                }
                out
            }
            Plan::Project(input, exprs) => {
                let rows = run(input, cx).await?;
                let mut out = Vec::with_capacity(rows.len());
                for (i, r) in rows.into_iter().enumerate() {
                    cx.eval.interrupts.pause(i).await?;
                    let mut row = Vec::with_capacity(exprs.len());
                    for e in exprs {
                        row.push(e.eval(&r, cx.eval)?);
                    }
                    out.push(row);
                }
                out
            }
            Plan::Join(j) => {
                let left = run(&j.left, cx).await?;
                let right = match lookups(j, &left, cx.eval)? {
                    Some(scans) => {
                        let mut rows = Vec::new();
                        for s in &scans {
                            rows.extend(run(s, cx).await?);
                        }
                        rows
                    }
                    None => run(&j.right, cx).await?,
                };
                join(left, right, j, cx.eval).await?
            }
            Plan::Lateral(l, r, kind, width) => {
                let left = run(l, cx).await?;
                let mut out = Vec::new();
                let memo = memo::fresh();
                for row in left {
                    cx.eval.interrupts.pause_now().await?;
                    // The enclosing query's row, then this row (see `select::lateral`).
                    let eval = EvalContext { memo: memo.clone(), ..cx.eval.with_row(&row) };
                    let inner = ExecCtx {
                        txn: cx.txn,
                        tenant: cx.tenant,
                        eval: &eval,
                        catalog: cx.catalog,
                    };
                    let rights = run(r, &inner).await?;
                    if rights.is_empty() && *kind == JoinKind::Left {
                        let mut o = row.clone();
                        o.extend(std::iter::repeat_n(Value::Null, *width));
                        out.push(o);
                    }
                    for rr in rights {
                        let mut o = row.clone();
                        o.extend(rr);
                        out.push(o);
                    }
                }
                out
            }
            Plan::Apply(input, subs) => apply(run(input, cx).await?, subs, cx).await?,
            Plan::DistinctOn(input, on) => {
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                for (i, row) in run(input, cx).await?.into_iter().enumerate() {
                    cx.eval.interrupts.pause(i).await?;
                    let key =
                        on.iter().map(|e| e.eval(&row, cx.eval)).collect::<Result<Vec<_>>>()?;
                    if seen.insert(group_key(&key)) {
                        out.push(row);
                    }
                }
                out
            }
            Plan::Window(input, calls) => {
                crate::window::window(run(input, cx).await?, calls, cx.eval)?
            }
            Plan::SetOp(kind, all, l, r) => {
                let left = run(l, cx).await?;
                let right = run(r, cx).await?;
                set_op(*kind, *all, left, right)
            }
            Plan::Init(list, input) => {
                let eval = with_init_plans(list, cx).await?;
                let inner =
                    ExecCtx { txn: cx.txn, tenant: cx.tenant, eval: &eval, catalog: cx.catalog };
                run(input, &inner).await?
            }
            Plan::Aggregate(input, group, aggs, sets) => {
                let rows = run(input, cx).await?;
                aggregate(rows, group, aggs, sets.as_deref(), cx.eval).await?
            }
            Plan::Sort(input, keys) => {
                let rows = run(input, cx).await?;
                sort(rows, keys, cx.eval).await?
            }
            Plan::LimitTies(input, count, offset, keys) => {
                let rows = run(input, cx).await?;
                with_ties(rows, count, offset.as_ref(), keys, cx.eval)?
            }
            Plan::Limit(input, limit, offset) => {
                let rows = run(input, cx).await?;
                let off = row_count(offset.as_ref(), cx.eval)?.unwrap_or(0);
                let lim = row_count(limit.as_ref(), cx.eval)?.unwrap_or(usize::MAX);
                rows.into_iter().skip(off).take(lim).collect()
            }
            Plan::Distinct(input) => {
                let rows = run(input, cx).await?;
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                for (i, r) in rows.into_iter().enumerate() {
                    cx.eval.interrupts.pause(i).await?;
                    if seen.insert(group_key(&r)) {
                        out.push(r);
                    }
                }
                out
            }
        })
    })
}

/// FETCH FIRST `count` ROWS WITH TIES over `rows` (sorted on `keys`): the
/// `count` rows after `offset`, then those equal to the last one on `keys`.
fn with_ties(
    rows: Vec<Row>,
    count: &Expr,
    offset: Option<&Expr>,
    keys: &[SortKey],
    ctx: &EvalContext,
) -> Result<Vec<Row>> {
    let Some(count) = row_count(Some(count), ctx)? else {
        bail!(
            InvalidRowCountInLimitClause,
            "row count cannot be null in FETCH FIRST ... WITH TIES clause"
        );
    };
    let off = row_count(offset, ctx)?.unwrap_or(0);
    let mut rows = rows.into_iter().skip(off);
    let mut out: Vec<Row> = rows.by_ref().take(count).collect();
    if out.len() < count || count == 0 {
        return Ok(out);
    }
    let key_of = |r: &Row| keys.iter().map(|k| k.expr.eval(r, ctx)).collect::<Result<Vec<_>>>();
    // `count` rows, at least one, were taken.
    let last = key_of(&out[out.len() - 1])?;
    for r in rows {
        if compare_keys(keys, &last, &key_of(&r)?) != std::cmp::Ordering::Equal {
            break;
        }
        out.push(r);
    }
    Ok(out)
}

/// A LIMIT or OFFSET count; None when absent or NULL (no limit).
fn row_count(e: Option<&Expr>, ctx: &EvalContext) -> Result<Option<usize>> {
    let Some(e) = e else { return Ok(None) };
    match e.eval(&[], ctx)? {
        Value::Null => Ok(None),
        Value::Int8(n) if n >= 0 => Ok(Some(n as usize)),
        Value::Int8(_) => bail!(InvalidRowCountInLimitClause, "LIMIT must not be negative"),
        other => bail!(DatatypeMismatch, "invalid LIMIT value {other:?}"),
    }
}

/// How many rows a scan may stop after: its cap's LIMIT plus OFFSET, or
/// `usize::MAX`.
pub(crate) fn scan_cap(scan: &Scan, ctx: &EvalContext) -> Result<usize> {
    let Some(cap) = &scan.cap else { return Ok(usize::MAX) };
    let Some(limit) = row_count(Some(&cap.limit), ctx)? else { return Ok(usize::MAX) };
    let offset = row_count(cap.offset.as_ref(), ctx)?.unwrap_or(0);
    Ok(limit.saturating_add(offset))
}

/// How a range of keys is read: the direction, the rows to stop after,
/// and whether a filter may drop rows read.
#[derive(Clone, Copy)]
struct Reading {
    reverse: bool,
    cap: usize,
    filtered: bool,
}

impl Reading {
    /// Rows to ask the KV layer for next, `have` rows kept so far and
    /// `batch` asked last time (0 at first). Without a filter every row
    /// read is kept, so a cap asks for exactly what is missing; with one,
    /// the batches grow.
    fn next_batch(&self, have: usize, batch: usize) -> usize {
        let missing = self.cap.saturating_sub(have).max(1);
        match (self.filtered, batch) {
            (false, _) | (true, 0) => missing.min(SCAN_BATCH),
            (true, b) => (b * 4).min(SCAN_BATCH),
        }
    }

    /// The rest of `range` after reading up to `last`.
    fn rest(&self, range: &KeyRange, last: &Key) -> KeyRange {
        match self.reverse {
            false => KeyRange { start: after(last), end: range.end.clone() },
            true => KeyRange { start: range.start.clone(), end: last.clone() },
        }
    }

    async fn scan<T: Txn>(
        &self,
        cx: &ExecCtx<'_, T>,
        range: &KeyRange,
        n: usize,
    ) -> Result<Vec<(Key, Vec<u8>)>> {
        let r = match self.reverse {
            false => cx.txn.scan(range, n).await,
            true => cx.txn.scan_reverse(range, n).await,
        };
        r.map_err(from_kv)
    }
}

/// Encodes values as a canonical byte string for hashing and equality.
pub fn group_key(values: &[Value]) -> Vec<u8> {
    let types: Vec<DataType> =
        values.iter().map(|v| v.data_type().unwrap_or(DataType::Text)).collect();
    let mut out = Vec::new();
    keycode::encode_key(values, &types, &mut out);
    out
}

/// The key of a row in `table` from its primary key values (or row id).
pub fn row_key(tenant: TenantId, table: &TableDef, pk_values: &[Value]) -> Key {
    let mut rest = keys::storage_prefix(table.storage);
    let types = if table.primary_key.is_empty() { vec![DataType::Int8] } else { table.pk_types() };
    keycode::encode_key(pk_values, &types, &mut rest);
    Key::new(tenant, &rest)
}

/// Casts the values a key must equal to the key's column types. None if no
/// key can match: a NULL, or a value outside the column type's range.
pub(crate) fn key_values(
    exprs: &[Expr],
    types: &[DataType],
    ctx: &EvalContext,
) -> Result<Option<Vec<Value>>> {
    let mut vals = Vec::with_capacity(exprs.len());
    for (e, ty) in exprs.iter().zip(types) {
        let v = e.eval(&[], ctx)?;
        if v.is_null() {
            return Ok(None); // `col = NULL` matches nothing
        }
        match cast::cast_in(v, ty, ctx.zone()) {
            Ok(v) => vals.push(v),
            // `int4col = 1e10::int8`: no value of the column is equal.
            Err(e) if e.code == sqlstate::SqlState::NumericValueOutOfRange => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(vals))
}

/// The values of an [`Access::In`]: the list's, or the array's elements.
fn in_values(values: &[Expr], array: bool, ctx: &EvalContext) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for e in values {
        match (e.eval(&[], ctx)?, array) {
            (Value::Array(a), true) => out.extend(a.items),
            (_, true) => {}
            (v, false) => out.push(v),
        }
    }
    Ok(out)
}

/// Reads the rows of a scan, with their keys, applying its filter (from
/// the hashed scans of a correlated run where they serve).
pub async fn scan_rows<T: Txn>(cx: &ExecCtx<'_, T>, scan: &Scan) -> Result<Vec<KeyedRow>> {
    if let Some(m) = &cx.eval.memo {
        if scan.access == Access::Full {
            if let Some(rows) = memo::scan(cx, scan, m).await? {
                return Ok(rows);
            }
        }
    }
    scan_plain(cx, scan).await
}

/// Reads the rows of a scan by its access path.
async fn scan_plain<T: Txn>(cx: &ExecCtx<'_, T>, scan: &Scan) -> Result<Vec<KeyedRow>> {
    let t = &scan.table;
    let types = t.types();
    let mut out = Vec::new();
    let keep = |row: &Row| -> Result<bool> {
        match &scan.filter {
            Some(f) => f.eval_pred(row, cx.eval),
            None => Ok(true),
        }
    };
    let how = Reading {
        reverse: scan.order == KeyOrder::Descending,
        cap: scan_cap(scan, cx.eval)?,
        filtered: scan.filter.is_some(),
    };
    if how.cap == 0 {
        return Ok(out);
    }
    match &scan.access {
        Access::Point(exprs) => {
            let Some(vals) = key_values(exprs, &t.pk_types(), cx.eval)? else {
                return Ok(out);
            };
            let key = row_key(cx.tenant, t, &vals);
            if let Some(bytes) = cx.txn.get(&key).await.map_err(from_kv)? {
                let row = rowcodec::decode_row(&bytes, &types)?;
                if keep(&row)? {
                    out.push((key, row));
                }
            }
        }
        Access::Nothing => {}
        Access::Current(name) => {
            let name = match name.eval(&[], cx.eval)? {
                Value::Text(n) => n,
                _ => bail!(NullValueNotAllowed, "cursor name is null"),
            };
            let Some(portals) = &cx.eval.cursors else {
                bail!(InvalidCursorName, "cursor \"{name}\" does not exist");
            };
            let key = kvapi::Key::decode(portals.current_key(&name, t.oid, &t.name)?);
            let key = key.map_err(from_kv)?;
            if key.tenant() != cx.tenant {
                bail!(InternalError, "cursor \"{name}\" holds another tenant's row");
            }
            if let Some(bytes) = cx.txn.get(&key).await.map_err(from_kv)? {
                let row = rowcodec::decode_row(&bytes, &types)?;
                if keep(&row)? {
                    out.push((key, row));
                }
            }
        }
        Access::Full => {
            let range = keys::storage(cx.tenant, t.storage);
            read_range(cx, range, &types, &keep, how, false, &mut out).await?;
        }
        Access::In { index, values, array } => {
            let (storage, key_type) = match index {
                None => (t.storage, t.pk_types().into_iter().next()),
                Some(i) => {
                    let idx = &t.indexes[*i];
                    (idx.storage, idx.columns.first().map(|&c| t.columns[c].ty.to_type()))
                }
            };
            let Some(key_type) = key_type else { return Ok(out) };
            // Each value's key prefix, in key order, once.
            let mut prefixes = Vec::new();
            for v in in_values(values, *array, cx.eval)? {
                let Some(v) =
                    key_values(&[Expr::Const(v)], std::slice::from_ref(&key_type), cx.eval)?
                else {
                    continue;
                };
                let mut prefix = keys::storage_prefix(storage);
                keycode::encode_key(&v, std::slice::from_ref(&key_type), &mut prefix);
                prefixes.push(prefix);
            }
            prefixes.sort();
            prefixes.dedup();
            if index.is_none() && t.primary_key.len() == 1 {
                // Whole primary keys: one multi-get.
                let keys: Vec<Key> = prefixes.iter().map(|p| Key::new(cx.tenant, p)).collect();
                let found = cx.txn.multi_get(&keys).await.map_err(from_kv)?;
                for (key, bytes) in keys.into_iter().zip(found) {
                    if let Some(bytes) = bytes {
                        let row = rowcodec::decode_row(&bytes, &types)?;
                        if keep(&row)? {
                            out.push((key, row));
                        }
                    }
                }
            } else {
                let all = Reading { cap: usize::MAX, ..how };
                for prefix in prefixes {
                    let range = KeyRange::prefix(cx.tenant, &prefix);
                    read_range(cx, range, &types, &keep, all, index.is_some(), &mut out).await?;
                }
                out.truncate(how.cap);
            }
        }
        Access::Range { index, eq, lo, hi } => {
            let (storage, key_types) = match index {
                None => (t.storage, t.pk_types()),
                Some(i) => {
                    let idx = &t.indexes[*i];
                    (idx.storage, idx.columns.iter().map(|&c| t.columns[c].ty.to_type()).collect())
                }
            };
            let Some(range) = key_range(cx, storage, &key_types, eq, lo.as_ref(), hi.as_ref())?
            else {
                return Ok(out);
            };
            match index {
                Some(_) if scan.nulls_moved => {
                    // The entries whose next column is NULL, and the others
                    // after them; read values first forwards, NULLs first
                    // backwards.
                    let ty = &key_types[eq.len()..][..1];
                    let mut null = range.start.rest().to_vec();
                    keycode::encode_key(&[Value::Null], ty, &mut null);
                    let nulls = KeyRange::prefix(cx.tenant, &null);
                    let values = KeyRange { start: nulls.end.clone(), end: range.end };
                    let parts = match how.reverse {
                        false => [values, nulls],
                        true => [nulls, values],
                    };
                    for part in parts {
                        let how = Reading { cap: how.cap - out.len(), ..how };
                        read_range(cx, part, &types, &keep, how, true, &mut out).await?;
                    }
                }
                _ => read_range(cx, range, &types, &keep, how, index.is_some(), &mut out).await?,
            }
        }
    }
    Ok(out)
}

/// The key range of a [`Access::Range`]: `eq` pins the leading key columns,
/// `lo`/`hi` bound the next one. None if a bound is NULL (matches nothing).
fn key_range<T: Txn>(
    cx: &ExecCtx<'_, T>,
    storage: u64,
    key_types: &[DataType],
    eq: &[Expr],
    lo: Option<&KeyBound>,
    hi: Option<&KeyBound>,
) -> Result<Option<KeyRange>> {
    let Some(vals) = key_values(eq, &key_types[..eq.len()], cx.eval)? else {
        return Ok(None);
    };
    let mut prefix = keys::storage_prefix(storage);
    keycode::encode_key(&vals, &key_types[..eq.len()], &mut prefix);
    let whole = KeyRange::prefix(cx.tenant, &prefix);
    let next_ty = key_types.get(eq.len());
    // Key bytes of `prefix ++ bound`; the bound excludes or includes every key
    // that starts with them (keycode is prefix-free, so those are exactly the
    // keys whose next column equals the bound).
    let edge = |b: &KeyBound| -> Result<Edge> {
        let Some(ty) = next_ty else { return Ok(Edge::Empty) };
        let v = b.value.eval(&[], cx.eval)?;
        if v.is_null() {
            return Ok(Edge::Empty); // `col < NULL` matches nothing
        }
        let v = match cast::cast_in(v.clone(), ty, cx.eval.zone()) {
            Ok(v) => v,
            // A bound beyond the column type's range (a widened column,
            // `int4col < $1::int8`): every value is on one side of it.
            Err(e) if e.code == sqlstate::SqlState::NumericValueOutOfRange => {
                let below = ops::compare(&v, &Value::Int8(0))? == Some(std::cmp::Ordering::Less);
                return Ok(if below { Edge::BelowAll } else { Edge::AboveAll });
            }
            Err(e) => return Err(e),
        };
        let mut k = prefix.clone();
        keycode::encode_key(std::slice::from_ref(&v), std::slice::from_ref(ty), &mut k);
        let r = KeyRange::prefix(cx.tenant, &k);
        Ok(Edge::Key(r.start, r.end))
    };
    let start = match lo.map(|b| (b, edge(b))) {
        None => whole.start,
        Some((b, e)) => match e? {
            Edge::Key(s, e) => {
                if b.inclusive {
                    s
                } else {
                    e
                }
            }
            Edge::BelowAll => whole.start,
            Edge::AboveAll | Edge::Empty => return Ok(None),
        },
    };
    let end = match hi.map(|b| (b, edge(b))) {
        None => whole.end,
        Some((b, e)) => match e? {
            Edge::Key(s, e) => {
                if b.inclusive {
                    e
                } else {
                    s
                }
            }
            Edge::AboveAll => whole.end,
            Edge::BelowAll | Edge::Empty => return Ok(None),
        },
    };
    Ok(Some(KeyRange { start, end }))
}

/// Where a range bound falls among a key column's values.
enum Edge {
    /// At these keys: (first key with the value, first key after it).
    Key(Key, Key),
    /// Below every value of the column's type.
    BelowAll,
    /// Above every value of the column's type.
    AboveAll,
    /// Nothing can satisfy the bound (NULL, or no next key column).
    Empty,
}

/// The smallest key greater than `k`.
pub fn after(k: &Key) -> Key {
    let mut rest = k.rest().to_vec();
    rest.push(0);
    Key::new(k.tenant(), &rest)
}

/// Reads the rows in `range` of a table's storage, or with `index` of a
/// secondary index's (whose entries hold row keys, fetched in batches),
/// keeping those `keep` holds, until `how.cap` are kept.
async fn read_range<T: Txn>(
    cx: &ExecCtx<'_, T>,
    mut range: KeyRange,
    types: &[DataType],
    keep: &impl Fn(&Row) -> Result<bool>,
    how: Reading,
    index: bool,
    out: &mut Vec<KeyedRow>,
) -> Result<()> {
    let first = out.len();
    let mut batch = 0;
    while range.start < range.end && out.len() - first < how.cap {
        cx.eval.interrupts.pause_now().await?;
        batch = how.next_batch(out.len() - first, batch);
        let entries = how.scan(cx, &range, batch).await?;
        let (n, last) = (entries.len(), entries.last().map(|(k, _)| k.clone()));
        let rows: Vec<(Key, Option<Vec<u8>>)> = if index {
            let keys: Vec<Key> =
                entries.into_iter().map(|(_, v)| Key::new(cx.tenant, &v)).collect();
            let fetched = cx.txn.multi_get(&keys).await.map_err(from_kv)?;
            keys.into_iter().zip(fetched).collect()
        } else {
            entries.into_iter().map(|(k, v)| (k, Some(v))).collect()
        };
        for (k, bytes) in rows {
            let Some(bytes) = bytes else { continue };
            let row = rowcodec::decode_row(&bytes, types)?;
            if !keep(&row)? {
                continue;
            }
            if out.len() >= MAX_ROWS {
                bail!(ProgramLimitExceeded, "query result exceeds {MAX_ROWS} rows");
            }
            out.push((k, row));
            if out.len() - first >= how.cap {
                return Ok(());
            }
        }
        match last {
            Some(k) if n == batch => range = how.rest(&range, &k),
            _ => return Ok(()),
        }
    }
    Ok(())
}

/// At most this many distinct keys on the left of a hash join make the
/// right table read by key instead of whole.
const LOOKUP_KEYS: usize = 32;

/// For an inner or left hash join whose right input is a table scan: when
/// the left rows have few distinct keys and the table has a key or index
/// for them, one narrowed scan per key instead of the whole table (each
/// right row has one key, so the scans' rows are those of the whole scan
/// that can match). None to scan the right input whole.
fn lookups(j: &Join, left: &[Row], ctx: &EvalContext) -> Result<Option<Vec<Plan>>> {
    let (Some(keys), Plan::Scan(scan)) = (&j.hash, &*j.right) else { return Ok(None) };
    if !matches!(j.kind, JoinKind::Inner | JoinKind::Left) {
        return Ok(None);
    }
    let mut seen = HashSet::new();
    let mut scans = Vec::new();
    for l in left {
        let Some(k) = keys.key(&keys.left, l, ctx)? else { continue };
        if !seen.insert(k) {
            continue;
        }
        if seen.len() > LOOKUP_KEYS {
            return Ok(None);
        }
        let mut parts: Vec<Expr> = scan.filter.iter().cloned().collect();
        for (le, re) in keys.left.iter().zip(&keys.right) {
            let v = Expr::Const(le.eval(l, ctx)?);
            parts.push(Expr::Binary(BinOp::Eq, Box::new(re.clone()), Box::new(v)));
        }
        let filter = and_all(parts).expect("a hash join has keys");
        let access = crate::select::choose_access(&scan.table, &filter);
        if access == Access::Full {
            return Ok(None);
        }
        scans.push(Plan::Scan(Scan { access, filter: Some(filter), ..scan.clone() }));
    }
    Ok(Some(scans))
}

async fn join(left: Vec<Row>, right: Vec<Row>, j: &Join, ctx: &EvalContext) -> Result<Vec<Row>> {
    // A hash join tries each left row with the right rows of its key only.
    let mut hashed = None;
    if let Some(keys) = &j.hash {
        let mut table: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        for (i, r) in right.iter().enumerate() {
            ctx.interrupts.pause(i).await?;
            if let Some(k) = keys.key(&keys.right, r, ctx)? {
                table.entry(k).or_default().push(i);
            }
        }
        hashed = Some((keys, table));
    }
    // A nested loop tries every right row.
    let all: Vec<usize> = match hashed {
        Some(_) => Vec::new(),
        None => (0..right.len()).collect(),
    };
    let mut out = Vec::new();
    let mut right_matched = vec![false; right.len()];
    let mut row = Vec::new();
    let mut tried = 0usize;
    for l in &left {
        ctx.interrupts.pause(tried).await?;
        tried += 1;
        let candidates: &[usize] = match &hashed {
            Some((keys, t)) => match keys.key(&keys.left, l, ctx)? {
                Some(k) => t.get(&k).map_or(&[], Vec::as_slice),
                None => &[],
            },
            None => &all,
        };
        let mut matched = false;
        for &ri in candidates {
            ctx.interrupts.pause(tried).await?;
            tried += 1;
            row.clear();
            row.extend_from_slice(l);
            row.extend_from_slice(&right[ri]);
            let hit = match &j.on {
                Some(p) => p.eval_pred(&row, ctx)?,
                None => true,
            };
            if hit {
                if out.len() >= MAX_ROWS {
                    bail!(ProgramLimitExceeded, "join result exceeds {MAX_ROWS} rows");
                }
                matched = true;
                right_matched[ri] = true;
                out.push(row.clone());
            }
        }
        if !matched && matches!(j.kind, JoinKind::Left | JoinKind::Full(_)) {
            let mut row = l.clone();
            row.extend(std::iter::repeat_n(Value::Null, j.width));
            out.push(row);
        }
    }
    if let JoinKind::Right(lw) | JoinKind::Full(lw) = j.kind {
        for (r, seen) in right.into_iter().zip(right_matched) {
            if !seen {
                let mut row: Row = std::iter::repeat_n(Value::Null, lw).collect();
                row.extend(r);
                out.push(row);
            }
        }
    }
    Ok(out)
}

/// Combines two inputs by a set operation; rows compare by value, NULLs equal.
fn set_op(kind: SetOpKind, all: bool, left: Vec<Row>, right: Vec<Row>) -> Vec<Row> {
    let mut emitted: HashSet<Vec<u8>> = HashSet::new();
    let mut out = Vec::new();
    if kind == SetOpKind::Union {
        for r in left.into_iter().chain(right) {
            if all || emitted.insert(group_key(&r)) {
                out.push(r);
            }
        }
        return out;
    }
    let mut right_counts: HashMap<Vec<u8>, usize> = HashMap::new();
    for r in &right {
        *right_counts.entry(group_key(r)).or_insert(0) += 1;
    }
    for r in left {
        let k = group_key(&r);
        let n = right_counts.get(&k).copied().unwrap_or(0);
        if all {
            // Each right row matches (INTERSECT) or cancels (EXCEPT) one left row.
            if n > 0 {
                right_counts.insert(k, n - 1);
            }
            if (kind == SetOpKind::Intersect) == (n > 0) {
                out.push(r);
            }
        } else if (kind == SetOpKind::Intersect) == (n > 0) && emitted.insert(k) {
            out.push(r);
        }
    }
    out
}

/// Most rows a recursive query may produce (it would otherwise grow until
/// the process runs out of memory, taking every session with it).
const RECURSION_ROWS: usize = 10_000_000;

/// WITH RECURSIVE: runs `step` over the previous iteration's new rows until
/// it adds none. With UNION (not ALL) rows already produced are not added
/// again, so a cycle ends.
async fn recursive<T: Txn>(
    id: usize,
    base: &Plan,
    step: &Plan,
    all: bool,
    cx: &ExecCtx<'_, T>,
) -> Result<Vec<Row>> {
    let mut seen = HashSet::new();
    let mut fresh = |rows: Vec<Row>| -> Vec<Row> {
        if all {
            return rows;
        }
        rows.into_iter().filter(|r| seen.insert(group_key(r))).collect()
    };
    let mut out = fresh(run(base, cx).await?);
    let mut work = out.clone();
    while !work.is_empty() {
        // Let a cancel, statement_timeout or a closed connection stop an
        // endless recursion.
        cx.eval.interrupts.pause_now().await?;
        let mut tables = cx.eval.work.as_deref().cloned().unwrap_or_default();
        tables.push((id, std::sync::Arc::new(work)));
        let eval = EvalContext { work: Some(std::sync::Arc::new(tables)), ..cx.eval.clone() };
        let inner = ExecCtx { txn: cx.txn, tenant: cx.tenant, eval: &eval, catalog: cx.catalog };
        work = fresh(run(step, &inner).await?);
        out.extend(work.iter().cloned());
        if out.len() > RECURSION_ROWS {
            bail!(ProgramLimitExceeded, "recursive query produced more than {RECURSION_ROWS} rows");
        }
    }
    Ok(out)
}

/// Runs uncorrelated subqueries once; returns the evaluation context in
/// which `Expr::Subquery`/`InSubquery` see their results.
pub async fn with_init_plans<T: Txn>(
    list: &[(Plan, SubqKind)],
    cx: &ExecCtx<'_, T>,
) -> Result<EvalContext> {
    let mut values = Vec::with_capacity(list.len());
    for (p, kind) in list {
        values.push(subquery_value(*kind, run(p, cx).await?)?);
    }
    Ok(EvalContext { subq: std::sync::Arc::new(values), ..cx.eval.clone() })
}

/// What a subquery's rows mean to the expression that contains it.
fn subquery_value(kind: SubqKind, rows: Vec<Row>) -> Result<SubqValue> {
    Ok(match kind {
        SubqKind::Exists => SubqValue::Value(Value::Bool(!rows.is_empty())),
        SubqKind::List => {
            let values = rows.into_iter().filter_map(|r| r.into_iter().next()).collect();
            SubqValue::List(crate::expr::ValueList::new(values))
        }
        SubqKind::Array => {
            let items: Vec<Value> = rows.into_iter().filter_map(|r| r.into_iter().next()).collect();
            // The binder's cast around the subquery sets the exact element type.
            let elem = items.iter().find_map(Value::data_type).unwrap_or(DataType::Text);
            SubqValue::Value(sqltypes::array::ArrayValue::new(elem, items).into_value())
        }
        SubqKind::Row => {
            if rows.len() > 1 {
                bail!(
                    CardinalityViolation,
                    "more than one row returned by a subquery used as an expression"
                );
            }
            SubqValue::Value(match rows.into_iter().next() {
                Some(values) => {
                    let types = values.iter().map(|v| v.data_type().unwrap_or(DataType::Text));
                    let ty = sqltypes::RecordType::anonymous(types.collect());
                    Value::Record(Box::new(sqltypes::RecordValue { ty, values }))
                }
                None => Value::Null,
            })
        }
        SubqKind::Scalar => {
            if rows.len() > 1 {
                bail!(
                    CardinalityViolation,
                    "more than one row returned by a subquery used as an expression"
                );
            }
            SubqValue::Value(
                rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or(Value::Null),
            )
        }
    })
}

/// Runs each correlated subquery once per input row (with the row as the
/// outer row) and appends its result to the row.
async fn apply<T: Txn>(
    rows: Vec<Row>,
    subs: &[Correlated],
    cx: &ExecCtx<'_, T>,
) -> Result<Vec<Row>> {
    let mut out = Vec::with_capacity(rows.len());
    let memo = memo::fresh();
    for mut row in rows {
        cx.eval.interrupts.pause_now().await?;
        let values = correlated_values(&row, subs, &memo, cx).await?;
        row.extend(values);
        out.push(row);
    }
    Ok(out)
}

/// Runs correlated subqueries `subs` with `row` as their outer row (after
/// the enclosing queries' rows): each
/// one's value, EXISTS's boolean or the IN test's result. The runs of one
/// statement share `memo`.
pub async fn correlated_values<T: Txn>(
    row: &[Value],
    subs: &[Correlated],
    memo: &Option<std::sync::Arc<memo::ScanMemo>>,
    cx: &ExecCtx<'_, T>,
) -> Result<Vec<Value>> {
    let eval = EvalContext { memo: memo.clone(), ..cx.eval.with_row(row) };
    let inner = ExecCtx { txn: cx.txn, tenant: cx.tenant, eval: &eval, catalog: cx.catalog };
    let mut out = Vec::with_capacity(subs.len());
    for c in subs {
        out.push(match subquery_value(c.kind, run(&c.plan, &inner).await?)? {
            SubqValue::Value(v) => v,
            SubqValue::List(list) => {
                let Some((probe, negated)) = &c.probe else {
                    bail!(InternalError, "IN subquery without its left operand")
                };
                list.test(&probe.eval(row, cx.eval)?, *negated)?
            }
        });
    }
    Ok(out)
}

/// Orders two rows' evaluated sort keys by `keys` (direction, NULLS
/// FIRST/LAST).
pub(crate) fn compare_keys(keys: &[SortKey], a: &[Value], b: &[Value]) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Equal, Greater, Less};
    for (sk, (x, y)) in keys.iter().zip(a.iter().zip(b)) {
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Equal,
            (true, false) => {
                if sk.nulls_first {
                    Less
                } else {
                    Greater
                }
            }
            (false, true) => {
                if sk.nulls_first {
                    Greater
                } else {
                    Less
                }
            }
            (false, false) if sk.desc => ops::sort_cmp(x, y).reverse(),
            (false, false) => ops::sort_cmp(x, y),
        };
        if ord != Equal {
            return ord;
        }
    }
    Equal
}

async fn sort(rows: Vec<Row>, keys: &[SortKey], ctx: &EvalContext) -> Result<Vec<Row>> {
    let mut keyed = Vec::with_capacity(rows.len());
    for (i, r) in rows.into_iter().enumerate() {
        ctx.interrupts.pause(i).await?;
        let mut k = Vec::with_capacity(keys.len());
        for sk in keys {
            k.push(sk.expr.eval(&r, ctx)?);
        }
        keyed.push((k, r));
    }
    keyed.sort_by(|(a, _), (b, _)| compare_keys(keys, a, b));
    Ok(keyed.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnDef, TypeDef};
    use crate::select::HashKeys;

    /// `b (id int primary key, a_id int)` scanned whole, joined on
    /// `left.0 = b.<col>` by hash.
    fn join_on(col: usize, kind: JoinKind) -> Join {
        let column = |name: &str| ColumnDef {
            nullable: name != "id",
            ..ColumnDef::new(name.into(), TypeDef::from_type(&DataType::Int4))
        };
        let mut t = TableDef::new("b".into());
        t.columns = vec![column("id"), column("a_id")];
        t.primary_key = vec![0];
        let scan = Scan::full(std::sync::Arc::new(t), false);
        let on =
            Expr::Binary(BinOp::Eq, Box::new(Expr::Column(0)), Box::new(Expr::Column(1 + col)));
        Join {
            left: Box::new(Plan::Values(vec![])),
            right: Box::new(Plan::Scan(scan)),
            kind,
            on: Some(on),
            width: 2,
            hash: Some(HashKeys {
                left: vec![Expr::Column(0)],
                right: vec![Expr::Column(col)],
                types: vec![DataType::Int8],
            }),
        }
    }

    fn rows(keys: impl IntoIterator<Item = i32>) -> Vec<Row> {
        keys.into_iter().map(|k| vec![Value::Int4(k)]).collect()
    }

    #[test]
    fn few_left_keys_read_the_right_table_by_key() {
        let ctx = EvalContext::default();
        let j = join_on(0, JoinKind::Inner);
        let scans = lookups(&j, &rows([1, 2, 2]), &ctx).expect("lookups").expect("read by key");
        assert_eq!(scans.len(), 2, "one lookup per distinct key");
        for s in &scans {
            let Plan::Scan(s) = s else { panic!("not a scan: {s:?}") };
            assert!(matches!(s.access, Access::Point(_)), "{:?}", s.access);
        }
        // NULL keys match nothing and need no lookup.
        let mut with_null = rows([3]);
        with_null.push(vec![Value::Null]);
        assert_eq!(lookups(&j, &with_null, &ctx).expect("lookups").map(|s| s.len()), Some(1));
        let left = lookups(&join_on(0, JoinKind::Left), &rows([1]), &ctx).expect("lookups");
        assert!(left.is_some(), "a left join reads by key too");
    }

    #[test]
    fn many_keys_no_key_or_outer_right_read_the_table_whole() {
        let ctx = EvalContext::default();
        let many = rows(0..=LOOKUP_KEYS as i32);
        assert!(lookups(&join_on(0, JoinKind::Inner), &many, &ctx).expect("lookups").is_none());
        // b.a_id has no key or index.
        assert!(lookups(&join_on(1, JoinKind::Inner), &rows([1]), &ctx)
            .expect("lookups")
            .is_none());
        // A right or full join needs every right row.
        let right = join_on(0, JoinKind::Right(1));
        assert!(lookups(&right, &rows([1]), &ctx).expect("lookups").is_none());
    }
}
