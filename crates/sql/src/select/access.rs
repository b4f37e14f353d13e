//! Access paths: pushing a WHERE clause into a table scan and choosing the
//! narrowest key range it allows (primary key point lookup, or the primary
//! or secondary key with the longest pinned prefix and a range after it).
//! Every row an access path finds is checked against the whole predicate
//! again, so a path may find a superset of the rows, never miss one.

use super::*;
use crate::func::{arrays::ArrayFunc, Func};

/// Adds a filter, pushing it into a table scan and choosing its access path.
pub fn push_filter(plan: Plan, pred: Expr) -> Plan {
    match plan {
        Plan::Scan(mut scan) if scan.cap.is_none() => {
            if scan.table.partition_check.as_ref().is_some_and(|c| c.refutes(&pred)) {
                // A partition whose bound the condition excludes.
                scan.access = Access::Nothing;
                return Plan::Scan(scan);
            }
            let pred = match scan.filter.take() {
                Some(f) => Expr::Binary(BinOp::And, Box::new(f), Box::new(pred)),
                None => pred,
            };
            scan.access = choose_access(&scan.table, &pred);
            scan.filter = Some(pred);
            Plan::Scan(scan)
        }
        // Into both sides of UNION ALL (a partitioned table's partitions).
        Plan::SetOp(SetOpKind::Union, true, l, r) => Plan::SetOp(
            SetOpKind::Union,
            true,
            Box::new(push_filter(*l, pred.clone())),
            Box::new(push_filter(*r, pred)),
        ),
        // Through a projection of columns and constants.
        Plan::Project(p, exprs)
            if exprs.iter().all(|e| matches!(e, Expr::Column(_) | Expr::Const(_)))
                && pred_columns_within(&pred, exprs.len()) =>
        {
            let inner = pred.remap_columns(&|c| exprs[c].clone());
            Plan::Project(Box::new(push_filter(*p, inner)), exprs)
        }
        other => Plan::Filter(Box::new(other), pred),
    }
}

/// True if every column `pred` reads is below `width`.
fn pred_columns_within(pred: &Expr, width: usize) -> bool {
    let mut ok = true;
    pred.walk(&mut |x| ok &= x.as_column().is_none_or(|c| c < width));
    ok
}

/// Filters `plan` (of columns `types`) by `pred`, where `pred` may read the
/// results of correlated subqueries `subs` as the columns after those. Conjuncts that do not are pushed
/// down as usual; the rest are checked above a [`Plan::Apply`] that runs the
/// subqueries per row, and the appended columns are projected away again.
pub(super) fn filter_with_subqueries(
    plan: Plan,
    pred: Expr,
    subs: Vec<Correlated>,
    types: &[DataType],
) -> Plan {
    let width = types.len();
    if subs.is_empty() {
        return super::joins::filter(plan, pred, types);
    }
    let mut parts = Vec::new();
    conjuncts(pred, &mut parts);
    let (late, early): (Vec<Expr>, Vec<Expr>) = parts.into_iter().partition(|p| {
        let mut reads = false;
        p.walk(&mut |x| reads |= x.as_column().is_some_and(|c| c >= width));
        reads
    });
    let mut plan = match and_all(early) {
        Some(e) => super::joins::filter(plan, e, types),
        None => plan,
    };
    plan = Plan::Apply(Box::new(plan), subs);
    if let Some(l) = and_all(late) {
        plan = Plan::Filter(Box::new(plan), l);
    }
    Plan::Project(Box::new(plan), (0..width).map(Expr::Column).collect())
}

/// Picks the narrowest access path the predicate allows: a point lookup if
/// the whole primary key is pinned by `=`, else the key (primary or
/// secondary) with the longest pinned prefix, extended by a `<`/`>` range on
/// the next key column.
pub fn choose_access(t: &Arc<TableDef>, pred: &Expr) -> Access {
    let mut parts = Vec::new();
    conjuncts(pred.clone(), &mut parts);
    let n = t.columns.len();
    let mut eq: Vec<Option<Expr>> = vec![None; n];
    let mut lo: Vec<Option<KeyBound>> = vec![None; n];
    let mut hi: Vec<Option<KeyBound>> = vec![None; n];
    // `col IN (values)` / `col = ANY(array)`: (values, is an array).
    let mut any: Vec<Option<(Vec<Expr>, bool)>> = vec![None; n];
    for p in &parts {
        if let Some((col, values, array)) = in_values(t, p) {
            any[col] = Some((values, array));
            continue;
        }
        let Expr::Binary(op, l, r) = p else { continue };
        // Normalize to `column op value`.
        // The value may read the enclosing query's row (a correlated
        // subquery's `b.x = a.x`): it is fixed for one run of the scan.
        let (col, val, op) = match (key_column(t, l), key_column(t, r)) {
            (Some(c), None) if r.reads_no_column() => (c, r.as_ref(), *op),
            (None, Some(c)) if l.reads_no_column() => (c, l.as_ref(), flip(*op)),
            _ => continue,
        };
        if col >= n {
            continue;
        }
        // An outer column's value has the type the binder compared it as:
        // the column's own, up to a modifier or the text family, so the
        // key lookup's cast keeps every equal value equal (a bound could
        // round past one).
        let outer_eq = op == BinOp::Eq && matches!(val, Expr::Outer(_));
        if !outer_eq && !is_key_compatible(val, &t.columns[col].ty.to_type()) {
            continue;
        }
        let bound = |inclusive| Some(KeyBound { value: val.clone(), inclusive });
        match op {
            BinOp::Eq => eq[col] = Some(val.clone()),
            BinOp::Gt => lo[col] = bound(false),
            BinOp::GtEq => lo[col] = bound(true),
            BinOp::Lt => hi[col] = bound(false),
            BinOp::LtEq => hi[col] = bound(true),
            _ => {}
        }
    }
    let pk: Vec<Expr> = t.primary_key.iter().map_while(|&c| eq[c].clone()).collect();
    if !t.primary_key.is_empty() && pk.len() == t.primary_key.len() {
        return Access::Point(pk);
    }
    // Score: 2 per pinned column, 1 for a range on the next one.
    let candidate = |index: Option<usize>, cols: &[usize]| -> Option<(usize, Access)> {
        if cols.is_empty() {
            return None;
        }
        let pinned: Vec<Expr> = cols.iter().map_while(|&c| eq[c].clone()).collect();
        let next = cols.get(pinned.len()).copied();
        let (l, h) = next.map(|c| (lo[c].clone(), hi[c].clone())).unwrap_or((None, None));
        let score = 2 * pinned.len() + usize::from(l.is_some() || h.is_some());
        (score > 0).then_some((score, Access::Range { index, eq: pinned, lo: l, hi: h }))
    };
    let mut best = candidate(None, &t.primary_key);
    // Expression and partial indexes are not read by queries yet (only
    // maintained and enforced).
    for (i, idx) in t.indexes.iter().enumerate().filter(|(_, i)| i.is_plain()) {
        if let Some(c) = candidate(Some(i), &idx.columns) {
            if best.as_ref().map(|(s, _)| c.0 > *s).unwrap_or(true) {
                best = Some(c);
            }
        }
    }
    // A list of values for the first column of a key beats a range that
    // pins no column.
    if best.as_ref().is_none_or(|(score, _)| *score < 2) {
        let keys = std::iter::once((None, t.primary_key.as_slice())).chain(
            t.indexes
                .iter()
                .enumerate()
                .filter(|(_, i)| i.is_plain())
                .map(|(i, idx)| (Some(i), idx.columns.as_slice())),
        );
        for (index, cols) in keys {
            if let Some((values, array)) = cols.first().and_then(|&c| any[c].clone()) {
                return Access::In { index, values, array };
            }
        }
    }
    best.map(|(_, a)| a).unwrap_or(Access::Full)
}

/// `col IN (values)` or `col = ANY(array)` over a table column, with values
/// a key lookup can use: (column, values, whether they are one array).
fn in_values(t: &TableDef, p: &Expr) -> Option<(usize, Vec<Expr>, bool)> {
    match p {
        Expr::InList(e, list, false) => {
            let col = key_column(t, e).filter(|&c| c < t.columns.len())?;
            let ty = t.columns[col].ty.to_type();
            let ok = list.iter().all(|v| v.reads_no_column() && is_key_compatible(v, &ty));
            ok.then(|| (col, list.clone(), false))
        }
        Expr::Func(Func::Array(ArrayFunc::AnyAll(BinOp::Eq, false)), args) => {
            let [e, arr] = args.as_slice() else { return None };
            let col = key_column(t, e).filter(|&c| c < t.columns.len())?;
            let ty = t.columns[col].ty.to_type();
            let ok = arr.reads_no_column()
                && match arr {
                    Expr::Param(_) | Expr::Outer(_) => true,
                    Expr::Const(Value::Array(a)) => a
                        .items
                        .iter()
                        .all(|v| v.is_null() || is_key_compatible(&Expr::Const(v.clone()), &ty)),
                    Expr::Cast(_, DataType::Array(elem)) => {
                        bind::strip_mod(elem) == bind::strip_mod(&ty)
                    }
                    _ => false,
                };
            ok.then(|| (col, vec![arr.clone()], true))
        }
        _ => None,
    }
}

/// True if `filter` says nothing beyond a primary key lookup: each
/// conjunct is `pk column = value`. An UPDATE or DELETE with such a WHERE
/// clause may lock the row it finds before checking it (dml.rs).
pub fn pins_primary_key_only(t: &TableDef, filter: &Expr) -> bool {
    match filter {
        Expr::Binary(BinOp::And, l, r) => {
            pins_primary_key_only(t, l) && pins_primary_key_only(t, r)
        }
        Expr::Binary(BinOp::Eq, l, r) => match (l.as_ref(), r.as_ref()) {
            (Expr::Column(c), v) | (v, Expr::Column(c)) => {
                v.reads_no_column() && t.primary_key.contains(c)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The table column `e` reads, directly or through a cast that keeps equal
/// values equal (integer widening, varchar or char to text), so an index on
/// the column can find the rows; the predicate is re-checked on every row
/// found, so the lookup may return a superset (char padding, a truncated
/// varchar) but never miss a row.
pub fn key_column(t: &TableDef, e: &Expr) -> Option<usize> {
    match e {
        Expr::Column(c) => Some(*c),
        Expr::Cast(inner, to) => {
            let Expr::Column(c) = inner.as_ref() else { return None };
            let from = t.columns.get(*c)?.ty.to_type();
            use DataType as T;
            let keeps = matches!(
                (&from, to),
                (T::Int2, T::Int4 | T::Int8)
                    | (T::Int4, T::Int8)
                    | (T::Varchar(_) | T::Char(_), T::Text)
            );
            keeps.then_some(*c)
        }
        _ => None,
    }
}

pub(super) fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        other => other,
    }
}

pub(super) fn is_key_compatible(val: &Expr, ty: &DataType) -> bool {
    match val {
        Expr::Const(Value::Null) => false,
        Expr::Const(v) => v
            .data_type()
            .map(|t| {
                bind::strip_mod(&t) == bind::strip_mod(ty)
                    || (t.is_numeric()
                        && ty.is_numeric()
                        && !matches!(t, DataType::Float8 | DataType::Numeric(_))
                        && !matches!(ty, DataType::Float8 | DataType::Numeric(_)))
            })
            .unwrap_or(false),
        Expr::Param(_) => true,
        Expr::Cast(_, t) => bind::strip_mod(t) == bind::strip_mod(ty),
        _ => false,
    }
}
