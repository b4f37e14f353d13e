//! Join planning: conditions move to the input they read, and equalities
//! between the inputs become hash keys.
//!
//! A WHERE conjunct over a join goes as far down as the join kinds allow
//! (into the side it reads, below an inner join or onto the preserved side
//! of an outer join; into an inner join's ON when it reads both sides), and
//! an ON conjunct that reads one side only is filtered into that side
//! before the join where the kind allows it. Every condition ends at a
//! table scan where it can (see access.rs), so it may choose the scan's key
//! range.
//!
//! A join whose ON holds `l = r`, with `l` reading only the left input, `r`
//! only the right and both of one hashable type, runs as a hash join
//! ([`HashKeys`]): the right rows are put in a table by their key values and
//! each left row meets only the right rows with its key. The whole ON is
//! still checked on every pair the table yields, so a key only narrows the
//! pairs tried; it can never add one. Keys are used only for types whose
//! equality is equality of their key encoding (keycode.rs), so no equal pair
//! is missed either.

use sqltypes::{DataType, Value};

use crate::expr::{and_all, conjuncts, BinOp, Expr};
use crate::plan::{Join, JoinKind, Plan};

use super::access::push_filter;

/// The equality keys of a hash join: `left[i]` over a left row equals
/// `right[i]` over a right row, both compared as `types[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HashKeys {
    /// Key expressions over left rows.
    pub left: Vec<Expr>,
    /// Key expressions over right rows (columns numbered from the right
    /// input's first).
    pub right: Vec<Expr>,
    /// The type both sides' values are encoded as.
    pub types: Vec<DataType>,
}

impl HashKeys {
    /// The key of `row` through `exprs`, or None when a value is NULL (a
    /// NULL key equals nothing).
    pub fn key(
        &self,
        exprs: &[Expr],
        row: &[Value],
        ctx: &crate::expr::EvalContext,
    ) -> crate::error::Result<Option<Vec<u8>>> {
        let mut vals = Vec::with_capacity(exprs.len());
        for e in exprs {
            vals.push(e.eval(row, ctx)?);
        }
        Ok(hash_key(vals, &self.types))
    }
}

/// The hash key of `vals` as `classes` (see [`hash_class`]), or None when a
/// value is NULL (a NULL key equals nothing).
pub fn hash_key(vals: Vec<Value>, classes: &[DataType]) -> Option<Vec<u8>> {
    let mut norm = Vec::with_capacity(vals.len());
    for v in vals {
        norm.push(match v {
            Value::Null => return None,
            Value::Int2(i) => Value::Int8(i.into()),
            Value::Int4(i) => Value::Int8(i.into()),
            v => v,
        });
    }
    let mut out = Vec::new();
    sqltypes::keycode::encode_key(&norm, classes, &mut out);
    Some(out)
}

/// The class value `v` (not NULL) hashes as (see [`hash_class`]), if any.
pub fn value_class(v: &Value) -> Option<DataType> {
    match v {
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => Some(DataType::Int8),
        Value::Text(_) => Some(DataType::Text),
        Value::Numeric(_) => Some(DataType::Numeric(None)),
        _ => v.data_type().and_then(|t| hash_class(&t)),
    }
}

/// Whether value `v` (not NULL) hashes as `class`.
pub fn fits_class(v: &Value, class: &DataType) -> bool {
    value_class(v).as_ref() == Some(class)
}

/// Builds a join of `left` (the first `lw` columns of the joined row) and
/// `right` (`types` are the joined row's column types): ON conjuncts that
/// read one side only move into it where the kind allows, and equalities
/// between the sides become hash keys.
pub fn make_join(
    left: Plan,
    right: Plan,
    kind: JoinKind,
    on: Option<Expr>,
    types: &[DataType],
    lw: usize,
) -> Plan {
    let mut to_left = Vec::new();
    let mut to_right = Vec::new();
    let mut kept = Vec::new();
    if let Some(on) = on {
        let mut parts = Vec::new();
        conjuncts(on, &mut parts);
        for p in parts {
            let (reads_left, reads_right) = sides(&p, lw);
            match kind {
                JoinKind::Inner | JoinKind::Right(_) if !reads_right => to_left.push(p),
                JoinKind::Inner | JoinKind::Left if !reads_left => to_right.push(p),
                _ => kept.push(p),
            }
        }
    }
    let left = match and_all(to_left) {
        Some(p) => distribute(left, p, &types[..lw]),
        None => left,
    };
    let right = match and_all(to_right) {
        Some(p) => distribute(right, shift(&p, lw), &types[lw..]),
        None => right,
    };
    let hash = hash_keys(&kept, lw, types);
    let on = and_all(kept);
    let width = types.len() - lw;
    Plan::Join(Join { left: Box::new(left), right: Box::new(right), kind, on, width, hash })
}

/// Filters `plan` by `pred` (`types` are the plan's column types), moving
/// conjuncts into the join inputs they read as far as the join kinds allow
/// and into table scans.
pub fn distribute(plan: Plan, pred: Expr, types: &[DataType]) -> Plan {
    match plan {
        Plan::Join(j) if j.width <= types.len() => {
            let lw = types.len() - j.width;
            let mut parts = Vec::new();
            conjuncts(pred, &mut parts);
            let (mut to_left, mut to_right, mut above) = (vec![], vec![], vec![]);
            let mut on = Vec::new();
            if let Some(p) = j.on {
                conjuncts(p, &mut on);
            }
            for p in parts {
                let (reads_left, reads_right) = sides(&p, lw);
                match j.kind {
                    JoinKind::Inner | JoinKind::Left if !reads_right => to_left.push(p),
                    JoinKind::Inner | JoinKind::Right(_) if !reads_left => to_right.push(p),
                    JoinKind::Inner => on.push(p),
                    _ => above.push(p),
                }
            }
            let mut left = *j.left;
            if let Some(p) = and_all(to_left) {
                left = distribute(left, p, &types[..lw]);
            }
            let mut right = *j.right;
            if let Some(p) = and_all(to_right) {
                right = distribute(right, shift(&p, lw), &types[lw..]);
            }
            let plan = make_join(left, right, j.kind, and_all(on), types, lw);
            match and_all(above) {
                Some(p) => Plan::Filter(Box::new(plan), p),
                None => plan,
            }
        }
        // LATERAL: the conjuncts that read only the left side filter it
        // before the right side runs per left row (inner or left, the left
        // side is the preserved one).
        Plan::Lateral(left, right, kind, rw) if rw <= types.len() => {
            let lw = types.len() - rw;
            let mut parts = Vec::new();
            conjuncts(pred, &mut parts);
            let (to_left, above): (Vec<Expr>, Vec<Expr>) =
                parts.into_iter().partition(|p| !sides(p, lw).1);
            let left = match and_all(to_left) {
                Some(p) => distribute(*left, p, &types[..lw]),
                None => *left,
            };
            let plan = Plan::Lateral(Box::new(left), right, kind, rw);
            match and_all(above) {
                Some(p) => Plan::Filter(Box::new(plan), p),
                None => plan,
            }
        }
        // A projection of columns and expressions over them (JOIN ...
        // USING's): the condition reads what the projection computes from.
        Plan::Project(input, exprs) => {
            match input_types(&exprs, types).filter(|inner| width(&input) == Some(inner.len())) {
                Some(inner) => {
                    let pred = pred.remap_columns(&|c| exprs[c].clone());
                    Plan::Project(Box::new(distribute(*input, pred, &inner)), exprs)
                }
                None => Plan::Filter(Box::new(Plan::Project(input, exprs)), pred),
            }
        }
        other => push_filter(other, pred),
    }
}

/// Filters `plan` by a WHERE clause `pred` (`types` are the plan's column
/// types). A tree of inner joins (FROM a, b, c) is first put
/// in an order where each input after the first is joined by a condition to
/// the ones before it, where the WHERE clause allows (left-deep, keeping the
/// written order among equals); then [`distribute`] places the conditions.
pub fn filter(plan: Plan, pred: Expr, types: &[DataType]) -> Plan {
    match plan {
        Plan::Join(j) if j.kind == JoinKind::Inner => {
            let (mut leaves, mut parts) = (Vec::new(), Vec::new());
            conjuncts(pred, &mut parts);
            flatten(Plan::Join(j), types, 0, &mut leaves, &mut parts);
            reorder(leaves, parts, types)
        }
        other => distribute(other, pred, types),
    }
}

/// The inputs of a tree of inner joins, with their column types, and the
/// joins' ON conjuncts (over the whole row) added to `conds`.
fn flatten(
    plan: Plan,
    types: &[DataType],
    offset: usize,
    leaves: &mut Vec<(Plan, Vec<DataType>)>,
    conds: &mut Vec<Expr>,
) {
    match plan {
        Plan::Join(j) if j.kind == JoinKind::Inner && j.width <= types.len() => {
            let lw = types.len() - j.width;
            if let Some(on) = j.on {
                let mut parts = Vec::new();
                conjuncts(on, &mut parts);
                conds.extend(parts.iter().map(|p| p.remap_columns(&|c| Expr::Column(c + offset))));
            }
            flatten(*j.left, &types[..lw], offset, leaves, conds);
            flatten(*j.right, &types[lw..], offset + lw, leaves, conds);
        }
        other => leaves.push((other, types.to_vec())),
    }
}

/// Joins `leaves` (whose columns, in this order, make the row `types`) in
/// an order where each joins the ones before it by a condition when one
/// can, places `conds`, and projects the written column order back.
fn reorder(leaves: Vec<(Plan, Vec<DataType>)>, conds: Vec<Expr>, types: &[DataType]) -> Plan {
    let mut starts = Vec::with_capacity(leaves.len());
    let mut at = 0;
    for (_, t) in &leaves {
        starts.push(at);
        at += t.len();
    }
    let leaf_of = |c: usize| starts.iter().rposition(|&s| s <= c).unwrap_or(0);
    // The leaves each condition reads.
    let reads: Vec<Vec<usize>> = conds
        .iter()
        .map(|p| {
            let mut r = Vec::new();
            p.walk(&mut |x| {
                if let Expr::Column(c) = x {
                    let l = leaf_of(*c);
                    if !r.contains(&l) {
                        r.push(l);
                    }
                }
            });
            r
        })
        .collect();
    let mut order = vec![0];
    while order.len() < leaves.len() {
        // A condition between `l` and the leaves joined so far.
        let joined = |l: usize| {
            reads.iter().any(|r| {
                r.len() > 1 && r.contains(&l) && r.iter().all(|x| *x == l || order.contains(x))
            })
        };
        let rest = (0..leaves.len()).filter(|l| !order.contains(l));
        let next =
            rest.clone().find(|&l| joined(l)).or_else(|| rest.min()).expect("a leaf is left");
        order.push(next);
    }
    // Where each written column is now.
    let mut new_start = vec![0; leaves.len()];
    let mut at = 0;
    for &l in &order {
        new_start[l] = at;
        at += leaves[l].1.len();
    }
    let moved = |c: usize| {
        let l = leaf_of(c);
        new_start[l] + c - starts[l]
    };
    let mut leaves: Vec<Option<(Plan, Vec<DataType>)>> = leaves.into_iter().map(Some).collect();
    let mut acc: Option<(Plan, Vec<DataType>)> = None;
    for &l in &order {
        let (leaf, t) = leaves[l].take().expect("each leaf once");
        acc = Some(match acc {
            None => (leaf, t),
            Some((plan, mut acc_types)) => {
                let lw = acc_types.len();
                acc_types.extend(t);
                (make_join(plan, leaf, JoinKind::Inner, None, &acc_types, lw), acc_types)
            }
        });
    }
    let (plan, new_types) = acc.expect("at least one leaf");
    let conds: Vec<Expr> =
        conds.iter().map(|p| p.remap_columns(&|c| Expr::Column(moved(c)))).collect();
    let plan = match and_all(conds) {
        Some(p) => distribute(plan, p, &new_types),
        None => plan,
    };
    if order.windows(2).all(|w| w[0] < w[1]) {
        return plan;
    }
    Plan::Project(Box::new(plan), (0..types.len()).map(|c| Expr::Column(moved(c))).collect())
}

/// The number of columns `plan` yields, where evident.
fn width(plan: &Plan) -> Option<usize> {
    match plan {
        Plan::Scan(s) => Some(s.table.columns.len() + usize::from(s.keyed)),
        Plan::Join(j) => Some(width(&j.left)? + j.width),
        Plan::Project(_, exprs) => Some(exprs.len()),
        Plan::Filter(input, _) => width(input),
        _ => None,
    }
}

/// Whether `e` reads columns of the left input (below `lw`) and of the
/// right one.
fn sides(e: &Expr, lw: usize) -> (bool, bool) {
    let (mut l, mut r) = (false, false);
    e.walk(&mut |x| {
        if let Expr::Column(c) = x {
            if *c < lw {
                l = true;
            } else {
                r = true;
            }
        }
    });
    (l, r)
}

/// `e` over the right input's columns, numbered from its first.
fn shift(e: &Expr, lw: usize) -> Expr {
    e.remap_columns(&|c| Expr::Column(c - lw))
}

/// The column types under a projection whose outputs have `types`, when
/// each input column up to the last one read is also an output of its own
/// (JOIN ... USING's projection lists every input column after the merged
/// ones) and the other outputs compute without side effects from them; the
/// caller checks that the input is no wider.
fn input_types(exprs: &[Expr], types: &[DataType]) -> Option<Vec<DataType>> {
    let mut inner: Vec<Option<DataType>> = Vec::new();
    for (e, t) in exprs.iter().zip(types) {
        match e {
            Expr::Column(c) => {
                if inner.len() <= *c {
                    inner.resize(c + 1, None);
                }
                inner[*c] = Some(t.clone());
            }
            Expr::Func(crate::func::Func::Coalesce, args)
                if args.iter().all(|a| a.as_column().is_some()) => {}
            _ => return None,
        }
    }
    inner.into_iter().collect()
}

/// The hash keys among a join's ON conjuncts: `l = r` with `l` reading
/// only the left input and `r` only the right (or the other way round),
/// both of one hashable type.
pub fn hash_keys(on: &[Expr], lw: usize, types: &[DataType]) -> Option<HashKeys> {
    let mut keys = HashKeys { left: vec![], right: vec![], types: vec![] };
    for p in on {
        let Expr::Binary(BinOp::Eq, a, b) = p else { continue };
        let (l, r) = match (sides(a, lw), sides(b, lw)) {
            ((true, false), (false, true)) => (a, b),
            ((false, true), (true, false)) => (b, a),
            _ => continue,
        };
        let (Some(lt), Some(rt)) = (static_type(l, types), static_type(r, types)) else {
            continue;
        };
        match (hash_class(lt), hash_class(rt)) {
            (Some(x), Some(y)) if x == y => {
                keys.left.push((**l).clone());
                keys.right.push(shift(r, lw));
                keys.types.push(x);
            }
            _ => {}
        }
    }
    (!keys.left.is_empty()).then_some(keys)
}

/// The type of `e` where it is evident without binding again: a column's,
/// or a cast's target.
fn static_type<'a>(e: &'a Expr, types: &'a [DataType]) -> Option<&'a DataType> {
    match e {
        Expr::Column(c) => types.get(*c),
        Expr::Cast(_, t) => Some(t),
        _ => None,
    }
}

/// The type values of `t` are hashed as, for the types whose `=` holds
/// exactly when their key encodings are equal (integers all as int8, so
/// int4 = int8 can hash); None for the others (floats with their zeros and
/// NaNs, blank-padded char, intervals, json, arrays, ...).
pub fn hash_class(t: &DataType) -> Option<DataType> {
    Some(match t {
        DataType::Int2 | DataType::Int4 | DataType::Int8 => DataType::Int8,
        DataType::Text | DataType::Varchar(_) => DataType::Text,
        DataType::Numeric(_) => DataType::Numeric(None),
        DataType::Bool
        | DataType::Date
        | DataType::Timestamp
        | DataType::TimestampTz
        | DataType::Time
        | DataType::Uuid
        | DataType::Oid
        | DataType::Bytea
        | DataType::Enum(_) => t.clone(),
        _ => return None,
    })
}
