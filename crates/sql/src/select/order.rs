//! Key order: an ORDER BY that a table's key order already gives needs no
//! sort, and a LIMIT over such a read lets the scan stop early.
//!
//! A table's rows are stored in primary key order and an index's entries in
//! the order of its columns (then the primary key, for entries that are not
//! unique), and the KV layer scans either way. So `ORDER BY id DESC LIMIT
//! 20` reads 20 rows backwards instead of reading and sorting the table,
//! and `WHERE user_id = $1 ORDER BY created_at DESC LIMIT 20` over an
//! index on `(user_id, created_at)` reads 20 index entries. A LIMIT alone
//! caps the scan the same way when nothing between them drops rows, and a
//! lone `min(col)` or `max(col)` without GROUP BY reads the one row that
//! holds it.
//!
//! Keys encode NULL below every value, so a nullable key column reads as
//! `ASC NULLS FIRST` forwards and `DESC NULLS LAST` backwards. For the
//! first ordered column of an index read, PostgreSQL's defaults (`ASC
//! NULLS LAST`, `DESC NULLS FIRST`) are served by reading its NULL entries
//! apart, after or before the others ([`Scan::nulls_moved`]); for a later
//! column that may hold NULL the sort is kept.
//! Only types whose key order is their `<` order qualify (those a hash
//! join may hash; C collation for text).

use super::*;
use crate::catalog::EXPRESSION_KEY;
use crate::plan::{AggFunc, KeyOrder, RowCap};

/// Serves the query's ORDER BY by key order where it can and pushes its
/// LIMIT into the scan (`plan` is a query's plan with its LIMIT placed).
pub fn use_key_order(plan: &mut Plan) {
    match plan {
        Plan::Limit(input, Some(limit), offset) => {
            descend(input, Some(RowCap { limit: limit.clone(), offset: offset.clone() }))
        }
        Plan::Limit(input, None, _) => descend(input, None),
        other => descend(other, None),
    }
}

/// Walks down through operators that keep their input's order, with the
/// LIMIT while none of them dropped or added rows.
fn descend(plan: &mut Plan, cap: Option<RowCap>) {
    match plan {
        Plan::Project(input, _) | Plan::Init(_, input) | Plan::Apply(input, _) => {
            descend(input, cap)
        }
        Plan::LockRows(input, _)
        | Plan::LimitTies(input, ..)
        | Plan::DistinctOn(input, _)
        | Plan::Distinct(input)
        | Plan::Filter(input, _) => descend(input, None),
        Plan::Sort(input, keys) => {
            let Some(read) = served(input, keys, cap.is_some()) else { return };
            let input = std::mem::replace(input.as_mut(), Plan::Values(Vec::new()));
            *plan = input;
            read_in_order(plan, read, cap);
        }
        Plan::Aggregate(input, group, aggs, _) if group.is_empty() => {
            let [agg] = aggs.as_slice() else { return };
            let desc = match agg.func {
                AggFunc::Max => true,
                AggFunc::Min => false,
                _ => return,
            };
            if agg.distinct || agg.filter.is_some() || !agg.order.is_empty() {
                return;
            }
            let Some(expr) = agg.arg.clone() else { return };
            // The first row in the order `col DESC|ASC NULLS LAST` holds
            // the aggregate's value (a NULL only when every value is).
            let key = SortKey { expr, desc, nulls_first: false };
            let Some(read) = served(input, &[key], true) else { return };
            let one = RowCap { limit: Expr::Const(Value::Int8(1)), offset: None };
            read_in_order(input, read, Some(one));
        }
        Plan::Scan(scan) if !matches!(scan.access, Access::Point(_)) => scan.cap = cap,
        _ => {}
    }
}

/// How a scan reads to serve an ORDER BY.
struct Read {
    order: KeyOrder,
    nulls_moved: bool,
    access: Access,
}

/// Sets the scan under `plan` (below a sort just removed) to `read`, and
/// caps it if nothing on the way drops rows.
fn read_in_order(plan: &mut Plan, read: Read, cap: Option<RowCap>) {
    match plan {
        Plan::Project(input, _) | Plan::Init(_, input) | Plan::Apply(input, _) => {
            read_in_order(input, read, cap)
        }
        Plan::Filter(input, _) => read_in_order(input, read, None),
        Plan::Scan(scan) => {
            scan.order = read.order;
            scan.nulls_moved = read.nulls_moved;
            scan.access = read.access;
            if !matches!(scan.access, Access::Point(_)) {
                scan.cap = cap;
            }
        }
        _ => {}
    }
}

/// The scan at the bottom of a chain of order-keeping operators.
fn bottom(plan: &Plan) -> Option<&Scan> {
    match plan {
        Plan::Project(input, _)
        | Plan::Init(_, input)
        | Plan::Apply(input, _)
        | Plan::Filter(input, _) => bottom(input),
        Plan::Scan(scan) => Some(scan),
        _ => None,
    }
}

/// The table column that column `c` of `plan` passes on unchanged.
fn source(plan: &Plan, c: usize) -> Option<usize> {
    match plan {
        Plan::Project(input, exprs) => match exprs.get(c)? {
            Expr::Column(i) => source(input, *i),
            _ => None,
        },
        // Apply's own columns follow its input's, which are bounded there.
        Plan::Apply(input, _) | Plan::Init(_, input) | Plan::Filter(input, _) => source(input, c),
        Plan::Scan(scan) => (c < scan.table.columns.len()).then_some(c),
        _ => None,
    }
}

/// Whether the keys (over `input`'s rows) are served by a scan's key
/// order: how to read (by the scan's own access path, or with `capped` by
/// an index whose order serves a sort of a whole table).
fn served(input: &Plan, keys: &[SortKey], capped: bool) -> Option<Read> {
    let scan = bottom(input)?;
    let t = &scan.table;
    let mut cols = Vec::with_capacity(keys.len());
    for k in keys {
        let Expr::Column(c) = &k.expr else { return None };
        cols.push((source(input, *c)?, k));
    }
    let key = match &scan.access {
        Access::Point(_) => {
            let access = scan.access.clone();
            return Some(Read { order: KeyOrder::Any, nulls_moved: false, access });
        }
        Access::Full => KeyColumns::primary(t, 0),
        Access::Range { index: None, eq, .. } => KeyColumns::primary(t, eq.len()),
        Access::Range { index: Some(i), eq, lo, hi } => {
            let mut key = KeyColumns::index(t, *i, eq.len())?;
            // A bound on the first ordered column leaves its NULLs out.
            key.bounded = lo.is_some() || hi.is_some();
            key
        }
        Access::In { .. } | Access::Current(_) | Access::Nothing => return None,
    };
    if let Some((order, nulls_moved)) = key.order(t, &cols) {
        return Some(Read { order, nulls_moved, access: scan.access.clone() });
    }
    if !capped || scan.access != Access::Full {
        return None;
    }
    // A whole-table read whose primary key order does not serve: an index
    // whose order does, read until the LIMIT is met.
    (0..t.indexes.len()).find_map(|i| {
        let (order, nulls_moved) = KeyColumns::index(t, i, 0)?.order(t, &cols)?;
        let access = Access::Range { index: Some(i), eq: Vec::new(), lo: None, hi: None };
        Some(Read { order, nulls_moved, access })
    })
}

/// The columns a scan's keys are ordered by.
struct KeyColumns {
    /// Leading key columns pinned by `=` (equal on every row read).
    pinned: Vec<usize>,
    /// The columns after them, in key order.
    order: Vec<usize>,
    /// No two rows have equal values in all of `order`.
    unique: bool,
    /// An index read whose NULL entries of `order[0]` can be read apart
    /// (see [`Scan::nulls_moved`]).
    index: bool,
    /// A range bound on `order[0]` excludes its NULLs.
    bounded: bool,
}

impl KeyColumns {
    /// The primary key's columns, the first `eq` of them pinned (a table
    /// without a primary key is in row id order, which no column gives).
    fn primary(t: &TableDef, eq: usize) -> KeyColumns {
        let pk = &t.primary_key;
        let eq = eq.min(pk.len());
        KeyColumns {
            pinned: pk[..eq].to_vec(),
            order: pk[eq..].to_vec(),
            unique: !pk.is_empty(),
            index: false,
            bounded: false,
        }
    }

    /// Index `i`'s columns, the first `eq` pinned, then the primary key
    /// where entries carry it. None for an index on expressions or with
    /// a WHERE clause.
    fn index(t: &TableDef, i: usize, eq: usize) -> Option<KeyColumns> {
        let idx = t.indexes.get(i)?;
        if !idx.is_plain() || idx.columns.contains(&EXPRESSION_KEY) || eq > idx.columns.len() {
            return None;
        }
        let pinned = idx.columns[..eq].to_vec();
        let mut order = idx.columns[eq..].to_vec();
        let not_null = idx.columns.iter().all(|&c| !nullable(t, c));
        // Unique entries without NULLs are the index values alone; the
        // others end with the row's primary key (see dml::index_entry).
        let unique = if idx.unique && not_null {
            true
        } else {
            order.extend(&t.primary_key);
            !t.primary_key.is_empty()
        };
        Some(KeyColumns { pinned, order, unique, index: true, bounded: false })
    }

    /// The direction that reads rows in the order of the sort keys (table
    /// columns with their keys), and whether NULLs of the first ordered
    /// column are read apart; None if no reading does.
    fn order(&self, t: &TableDef, keys: &[(usize, &SortKey)]) -> Option<(KeyOrder, bool)> {
        let mut dir = None;
        let mut nulls_moved = false;
        let mut pos = 0;
        for &(col, key) in keys {
            if self.pinned.contains(&col) {
                continue;
            }
            if pos == self.order.len() && self.unique {
                break; // no ties left for later keys to order
            }
            if self.order.get(pos) != Some(&col) {
                return None;
            }
            hash_class(&t.columns[col].ty.to_type())?;
            // Forwards NULLs come first, backwards last, unless read apart.
            let may_be_null = nullable(t, col) && !(pos == 0 && self.bounded);
            if may_be_null && key.nulls_first == key.desc {
                if pos > 0 || !self.index {
                    return None;
                }
                nulls_moved = true;
            }
            let d = if key.desc { KeyOrder::Descending } else { KeyOrder::Ascending };
            if dir.is_some_and(|x| x != d) {
                return None;
            }
            dir = Some(d);
            pos += 1;
        }
        Some((dir.unwrap_or(KeyOrder::Any), nulls_moved))
    }
}

/// Whether column `c` of `t` may hold NULL.
fn nullable(t: &TableDef, c: usize) -> bool {
    t.columns[c].nullable && !t.primary_key.contains(&c)
}
