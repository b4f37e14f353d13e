//! Hashed scans for correlated subqueries and LATERAL items.
//!
//! A subquery such as `EXISTS (SELECT 1 FROM b WHERE b.x = a.y)` runs once
//! per outer row. When `b.x` has no key or index the scan would read all of
//! `b` each time, so [`Plan::Apply`](crate::plan::Plan::Apply) and
//! `Plan::Lateral` hand the runs a [`ScanMemo`]: the first run of such a
//! scan reads the table once, with the conditions that do not read the
//! outer row, and puts the rows in a hash table by the columns compared to
//! the outer row; every run then takes the rows of its key and checks the
//! whole filter on them. The snapshot is the statement's, so every run
//! would have read the same rows.

use std::collections::HashMap;
use std::sync::Arc;

use kvapi::Txn;
use parking_lot::Mutex;
use sqltypes::DataType;

use super::{scan_plain, ExecCtx, KeyedRow};
use crate::error::Result;
use crate::expr::{and_all, conjuncts, BinOp, Expr};
use crate::plan::{Access, KeyOrder, Scan};
use crate::select::{choose_access, fits_class, hash_class, hash_key, key_column};

/// The hashed scans of one Apply or Lateral run, by scan node.
#[derive(Debug, Default)]
pub struct ScanMemo {
    scans: Mutex<HashMap<usize, Option<Arc<Hashed>>>>,
}

/// One scan's rows by key: `inner[i]` (over the table's row) equals
/// `outer[i]` (over the outer row), compared as `classes[i]`. The scan is
/// known by its node's address; its storage and filter are kept to check
/// that an address met again is the same scan.
#[derive(Debug)]
struct Hashed {
    storage: u64,
    filter: Option<Expr>,
    outer: Vec<Expr>,
    classes: Vec<DataType>,
    rows: HashMap<Vec<u8>, Vec<KeyedRow>>,
}

/// The rows of a full scan whose filter compares columns to the outer row,
/// from the memo (built at the first call); None when the scan is not of
/// that form or a value does not hash as its column (then scan normally).
pub(super) async fn scan<T: Txn>(
    cx: &ExecCtx<'_, T>,
    scan: &Scan,
    memo: &ScanMemo,
) -> Result<Option<Vec<KeyedRow>>> {
    let id = scan as *const Scan as usize;
    let known = memo.scans.lock().get(&id).cloned();
    let hashed = match known {
        Some(h) => h,
        None => {
            let h = build(cx, scan).await?.map(Arc::new);
            memo.scans.lock().insert(id, h.clone());
            h
        }
    };
    let Some(h) = hashed else { return Ok(None) };
    if h.storage != scan.table.storage || h.filter != scan.filter {
        return Ok(None);
    }
    let mut vals = Vec::with_capacity(h.outer.len());
    for (e, class) in h.outer.iter().zip(&h.classes) {
        let v = e.eval(&[], cx.eval)?;
        if !v.is_null() && !fits_class(&v, class) {
            return Ok(None);
        }
        vals.push(v);
    }
    let Some(key) = hash_key(vals, &h.classes) else { return Ok(Some(Vec::new())) };
    let mut out = Vec::new();
    let cap = super::scan_cap(scan, cx.eval)?;
    let rows = h.rows.get(&key).map(Vec::as_slice).unwrap_or(&[]);
    // The rows are in primary key order (see `build`).
    let rows: Box<dyn Iterator<Item = &KeyedRow>> = match scan.order {
        KeyOrder::Descending => Box::new(rows.iter().rev()),
        _ => Box::new(rows.iter()),
    };
    for (k, row) in rows {
        if out.len() >= cap {
            break;
        }
        let keep = match &scan.filter {
            Some(f) => f.eval_pred(row, cx.eval)?,
            None => true,
        };
        if keep {
            out.push((k.clone(), row.clone()));
        }
    }
    Ok(Some(out))
}

/// Reads and hashes the scan's table if its filter has `column = outer
/// value` conjuncts of a hashable type and its other conjuncts do not read
/// the outer row or subquery results.
async fn build<T: Txn>(cx: &ExecCtx<'_, T>, scan: &Scan) -> Result<Option<Hashed>> {
    let Some(filter) = &scan.filter else { return Ok(None) };
    if scan.access != Access::Full || scan.keyed {
        return Ok(None);
    }
    let t = &scan.table;
    let mut parts = Vec::new();
    conjuncts(filter.clone(), &mut parts);
    let (mut inner, mut outer, mut classes, mut rest) = (vec![], vec![], vec![], vec![]);
    for p in parts {
        if let Expr::Binary(BinOp::Eq, a, b) = &p {
            let pair = match (key_column(t, a), key_column(t, b)) {
                (Some(c), None) if reads_outer_only(b) => Some((c, a, b)),
                (None, Some(c)) if reads_outer_only(a) => Some((c, b, a)),
                _ => None,
            };
            let class = pair.and_then(|(c, _, _)| hash_class(&t.columns.get(c)?.ty.to_type()));
            if let (Some((_, i, o)), Some(class)) = (pair, class) {
                inner.push((**i).clone());
                outer.push((**o).clone());
                classes.push(class);
                continue;
            }
        }
        let mut plain = true;
        p.walk(&mut |x| {
            plain &= !matches!(x, Expr::Outer(_) | Expr::Subquery(_) | Expr::InSubquery(..))
        });
        if !plain {
            return Ok(None);
        }
        rest.push(p);
    }
    if inner.is_empty() {
        return Ok(None);
    }
    let filter = and_all(rest);
    let mut access = filter.as_ref().map(|f| choose_access(t, f)).unwrap_or(Access::Full);
    // A scan in key order is served from rows hashed in primary key order:
    // never read them by a secondary index then.
    if scan.order != KeyOrder::Any && !matches!(access, Access::Range { index: None, .. }) {
        access = Access::Full;
    }
    let whole = Scan {
        access,
        filter,
        order: KeyOrder::Any,
        nulls_moved: false,
        cap: None,
        ..scan.clone()
    };
    let mut rows: HashMap<Vec<u8>, Vec<KeyedRow>> = HashMap::new();
    for (k, row) in scan_plain(cx, &whole).await? {
        let mut vals = Vec::with_capacity(inner.len());
        for e in &inner {
            vals.push(e.eval(&row, cx.eval)?);
        }
        if let Some(key) = hash_key(vals, &classes) {
            rows.entry(key).or_default().push((k, row));
        }
    }
    let (storage, filter) = (scan.table.storage, scan.filter.clone());
    Ok(Some(Hashed { storage, filter, outer, classes, rows }))
}

/// True for an expression of the outer row alone: it reads an outer
/// column and no column of the scan's row or subquery result.
fn reads_outer_only(e: &Expr) -> bool {
    let (mut outer, mut other) = (false, false);
    e.walk(&mut |x| match x {
        Expr::Outer(_) => outer = true,
        Expr::Column(_) | Expr::Subquery(_) | Expr::InSubquery(..) => other = true,
        _ => {}
    });
    outer && !other
}

/// The memo to hand the runs of a correlated plan.
pub fn fresh() -> Option<Arc<ScanMemo>> {
    Some(Arc::new(ScanMemo::default()))
}
