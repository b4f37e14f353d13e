//! Declarative partitioning: `PARTITION BY RANGE | LIST | HASH (columns)`
//! and `CREATE TABLE ... PARTITION OF parent FOR VALUES ... | DEFAULT`.
//!
//! A partitioned table holds no rows itself: its partitions are ordinary
//! tables (or partitioned again) with the parent's columns in the parent's
//! order, each with a bound over the parent's key. Reading the parent reads
//! every leaf partition (select.rs appends their scans); INSERT and COPY
//! route each row to the leaf whose bound accepts it ([`route`]); UPDATE and
//! DELETE run on each leaf, and an UPDATE through the parent that moves a
//! row out of its partition's bound deletes it there and routes it again.
//! A row written to a partition directly must satisfy the partition's
//! constraint ([`Constraint`], checked with the table's own constraints).
//!
//! Bounds are stored as the text of their values (in the key columns'
//! types) and turned into values when the catalog is loaded ([`bind`]).
//! Hash partitioning computes PostgreSQL's hashes, so a row goes to the
//! partition PostgreSQL would choose and a dump of hash partitions loads.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sqltypes::{DataType, Value};

use crate::catalog::{QualName, TableDef};
use crate::error::Result;
use crate::expr::{BinOp, Expr};
use crate::{bail, err};

/// How a partitioned table divides its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Strategy {
    /// FOR VALUES FROM (...) TO (...).
    Range,
    /// FOR VALUES IN (...).
    List,
    /// FOR VALUES WITH (MODULUS m, REMAINDER r).
    Hash,
}

impl Strategy {
    /// pg_partitioned_table.partstrat.
    pub fn code(self) -> char {
        match self {
            Strategy::Range => 'r',
            Strategy::List => 'l',
            Strategy::Hash => 'h',
        }
    }

    /// The keyword PARTITION BY spells it with.
    pub fn sql(self) -> &'static str {
        match self {
            Strategy::Range => "RANGE",
            Strategy::List => "LIST",
            Strategy::Hash => "HASH",
        }
    }
}

/// A partitioned table's PARTITION BY.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionKey {
    /// The strategy.
    pub strategy: Strategy,
    /// The key columns (positions), in order.
    pub columns: Vec<usize>,
}

/// A partition's place: its parent table and its bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionOf {
    /// The parent's OID.
    pub parent: u32,
    /// The bound, its values as text in the key columns' types.
    pub bound: Bound<String>,
}

/// A partition bound over the parent's key, its values as text (stored)
/// or as values (loaded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Bound<V> {
    /// DEFAULT: every row no other partition takes.
    Default,
    /// FOR VALUES IN: the key equals one of these (None is NULL).
    List(Vec<Option<V>>),
    /// FOR VALUES FROM (from) TO (to): from <= key < to.
    Range {
        /// The inclusive lower bound, one datum per key column.
        from: Vec<Datum<V>>,
        /// The exclusive upper bound.
        to: Vec<Datum<V>>,
    },
    /// FOR VALUES WITH (MODULUS modulus, REMAINDER remainder).
    Hash {
        /// The modulus.
        modulus: u32,
        /// The remainder.
        remainder: u32,
    },
}

/// One column of a range bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Datum<V> {
    /// MINVALUE: below every value.
    Min,
    /// MAXVALUE: above every value.
    Max,
    /// A value.
    Value(V),
}

impl<V> Bound<V> {
    fn map<W>(&self, f: &mut impl FnMut(usize, &V) -> Result<W>) -> Result<Bound<W>> {
        let datums = |ds: &[Datum<V>], f: &mut dyn FnMut(usize, &V) -> Result<W>| {
            ds.iter()
                .enumerate()
                .map(|(i, d)| {
                    Ok(match d {
                        Datum::Min => Datum::Min,
                        Datum::Max => Datum::Max,
                        Datum::Value(v) => Datum::Value(f(i, v)?),
                    })
                })
                .collect::<Result<Vec<_>>>()
        };
        Ok(match self {
            Bound::Default => Bound::Default,
            Bound::List(vs) => Bound::List(
                vs.iter()
                    .map(|v| v.as_ref().map(|v| f(0, v)).transpose())
                    .collect::<Result<_>>()?,
            ),
            Bound::Range { from, to } => {
                Bound::Range { from: datums(from, &mut *f)?, to: datums(to, &mut *f)? }
            }
            &Bound::Hash { modulus, remainder } => Bound::Hash { modulus, remainder },
        })
    }

    /// True for DEFAULT.
    pub fn is_default(&self) -> bool {
        matches!(self, Bound::Default)
    }
}

impl Bound<String> {
    /// pg_get_expr(relpartbound): `FOR VALUES ...` or `DEFAULT`, each value
    /// a literal of its key column's type `types[i]`.
    pub fn sql(&self, types: &[DataType]) -> String {
        let lit = |i: usize, v: &str| literal(v, types.get(i).unwrap_or(&DataType::Text));
        let datums = |ds: &[Datum<String>]| {
            ds.iter()
                .enumerate()
                .map(|(i, d)| match d {
                    Datum::Min => "MINVALUE".to_string(),
                    Datum::Max => "MAXVALUE".to_string(),
                    Datum::Value(v) => lit(i, v),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Bound::Default => "DEFAULT".into(),
            Bound::List(vs) => {
                let vs: Vec<String> = vs
                    .iter()
                    .map(|v| v.as_deref().map_or_else(|| "NULL".into(), |v| lit(0, v)))
                    .collect();
                format!("FOR VALUES IN ({})", vs.join(", "))
            }
            Bound::Range { from, to } => {
                format!("FOR VALUES FROM ({}) TO ({})", datums(from), datums(to))
            }
            Bound::Hash { modulus, remainder } => {
                format!("FOR VALUES WITH (modulus {modulus}, remainder {remainder})")
            }
        }
    }
}

/// A bound value as PostgreSQL deparses it in a partition bound: numbers
/// and booleans bare, everything else quoted, never with a cast.
fn literal(v: &str, ty: &DataType) -> String {
    let numeric = matches!(
        ty,
        DataType::Int2 | DataType::Int4 | DataType::Int8 | DataType::Oid | DataType::Numeric(_)
    );
    let bare = match ty {
        DataType::Bool => true,
        _ if numeric => !v.starts_with('-') && v.parse::<f64>().is_ok_and(f64::is_finite),
        _ => false,
    };
    match bare {
        true => v.to_string(),
        false => crate::func::quote_literal(v),
    }
}

/// A partition's constraint in values: what a row of it satisfies.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// The parent's key columns.
    key: Vec<usize>,
    /// Their types.
    types: Vec<DataType>,
    /// The parent's strategy.
    strategy: Strategy,
    /// Its bound.
    bound: Bound<Value>,
    /// For a DEFAULT partition: the bounds of its siblings, which it
    /// excludes.
    others: Vec<Bound<Value>>,
    /// The parent's own constraint, when the parent is a partition too.
    up: Option<Arc<Constraint>>,
}

impl Constraint {
    /// True if `row` (of the partition) satisfies the constraint.
    pub fn accepts(&self, row: &[Value]) -> bool {
        let key: Vec<&Value> = self.key.iter().map(|&c| &row[c]).collect();
        let own = match &self.bound {
            Bound::Default => !self.others.iter().any(|b| takes(b, self.strategy, &key)),
            b => takes(b, self.strategy, &key),
        };
        own && self.up.as_ref().is_none_or(|u| u.accepts(row))
    }

    /// True if this is a DEFAULT partition's.
    pub fn is_default(&self) -> bool {
        self.bound.is_default()
    }

    /// True if no row satisfying `pred` (over the partition's row) can
    /// satisfy the constraint: `pred` pins a level's whole key with `=` to
    /// constants its bound does not take, or bounds a one-column range key
    /// outside the partition's range. Reading the partition is skipped
    /// then (partition pruning).
    pub fn refutes(&self, pred: &Expr) -> bool {
        let mut parts = Vec::new();
        crate::expr::conjuncts(pred.clone(), &mut parts);
        let mut limits: HashMap<usize, Limits> = HashMap::new();
        for p in &parts {
            let Expr::Binary(op, l, r) = p else { continue };
            let (c, v, op) = match (l.as_ref(), r.as_ref()) {
                (Expr::Column(c), Expr::Const(v)) => (*c, v, *op),
                (Expr::Const(v), Expr::Column(c)) => match op.flip() {
                    Some(op) => (*c, v, op),
                    None => continue,
                },
                _ => continue,
            };
            if v.is_null() {
                continue;
            }
            let l = limits.entry(c).or_default();
            match op {
                BinOp::Eq => l.eq = Some(v.clone()),
                BinOp::Lt => l.hi = Some((v.clone(), false)),
                BinOp::LtEq => l.hi = Some((v.clone(), true)),
                BinOp::Gt => l.lo = Some((v.clone(), false)),
                BinOp::GtEq => l.lo = Some((v.clone(), true)),
                _ => {}
            }
        }
        !limits.is_empty() && self.refuted_by(&limits)
    }

    fn refuted_by(&self, limits: &HashMap<usize, Limits>) -> bool {
        let fits = |v: &Value, ty: &DataType| v.data_type().is_some_and(|t| t.oid() == ty.oid());
        let pinned: Option<Vec<&Value>> = self
            .key
            .iter()
            .zip(&self.types)
            .map(|(c, ty)| limits.get(c).and_then(|l| l.eq.as_ref()).filter(|v| fits(v, ty)))
            .collect();
        let own = match (&pinned, &self.bound) {
            (Some(vals), Bound::Default) => {
                self.others.iter().any(|b| takes(b, self.strategy, vals))
            }
            (Some(vals), b) => !takes(b, self.strategy, vals),
            (None, Bound::Range { from, to }) if self.key.len() == 1 => {
                let l = limits.get(&self.key[0]);
                let ty = &self.types[0];
                let below = l.and_then(|l| l.hi.as_ref()).filter(|(v, _)| fits(v, ty)).is_some_and(
                    |(v, incl)| match &from[0] {
                        Datum::Value(f) => match sqltypes::ops::sort_cmp(v, f) {
                            Ordering::Less => true,
                            Ordering::Equal => !incl,
                            Ordering::Greater => false,
                        },
                        Datum::Min => false,
                        Datum::Max => true,
                    },
                );
                let above = l.and_then(|l| l.lo.as_ref()).filter(|(v, _)| fits(v, ty)).is_some_and(
                    |(v, _)| match &to[0] {
                        Datum::Value(t) => sqltypes::ops::sort_cmp(v, t) != Ordering::Less,
                        Datum::Min => true,
                        Datum::Max => false,
                    },
                );
                below || above
            }
            _ => false,
        };
        own || self.up.as_ref().is_some_and(|u| u.refuted_by(limits))
    }
}

/// What a condition says about one column: `= eq`, `> lo` (or `>=` when
/// inclusive), `< hi` (or `<=`).
#[derive(Default)]
struct Limits {
    eq: Option<Value>,
    lo: Option<(Value, bool)>,
    hi: Option<(Value, bool)>,
}

/// True if a (non-default) bound takes key `key`.
pub fn takes(bound: &Bound<Value>, strategy: Strategy, key: &[&Value]) -> bool {
    match bound {
        Bound::Default => false,
        Bound::List(vs) => {
            let k = key[0];
            vs.iter().any(|v| match v {
                None => k.is_null(),
                Some(v) => !k.is_null() && sqltypes::ops::sort_cmp(k, v) == Ordering::Equal,
            })
        }
        Bound::Range { from, to } => {
            !key.iter().any(|k| k.is_null())
                && key_cmp(key, from) != Ordering::Less
                && key_cmp(key, to) == Ordering::Less
        }
        &Bound::Hash { modulus, remainder } => {
            debug_assert_eq!(strategy, Strategy::Hash);
            hash::row_hash(key) % u64::from(modulus) == u64::from(remainder)
        }
    }
}

/// Compares a key (no NULLs) with a range bound.
fn key_cmp(key: &[&Value], bound: &[Datum<Value>]) -> Ordering {
    for (k, d) in key.iter().zip(bound) {
        let o = match d {
            Datum::Min => return Ordering::Greater,
            Datum::Max => return Ordering::Less,
            Datum::Value(v) => sqltypes::ops::sort_cmp(k, v),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// Compares two range bounds (lower or upper) as points.
pub fn bound_cmp(a: &[Datum<Value>], b: &[Datum<Value>]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Datum::Min, Datum::Min) | (Datum::Max, Datum::Max) => return Ordering::Equal,
            (Datum::Min, _) | (_, Datum::Max) => Ordering::Less,
            (Datum::Max, _) | (_, Datum::Min) => Ordering::Greater,
            (Datum::Value(x), Datum::Value(y)) => sqltypes::ops::sort_cmp(x, y),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// pg_get_partkeydef: `RANGE (a, b)`.
pub fn key_sql(t: &TableDef) -> Option<String> {
    let k = t.partition_key.as_ref()?;
    let cols: Vec<String> = k
        .columns
        .iter()
        .map(|&c| crate::func::catalog_info::quote_ident(&t.columns[c].name))
        .collect();
    Some(format!("{} ({})", k.strategy.sql(), cols.join(", ")))
}

/// The key columns' types of partitioned table `t`.
pub fn key_types(t: &TableDef) -> Vec<DataType> {
    let Some(k) = &t.partition_key else { return Vec::new() };
    k.columns.iter().map(|&c| t.columns[c].ty.to_type()).collect()
}

/// A stored bound's values, parsed in the key's types.
pub fn typed(bound: &Bound<String>, types: &[DataType]) -> Result<Bound<Value>> {
    bound.map(&mut |i, v| {
        let ty = types.get(i).ok_or_else(|| err!(DataCorrupted, "partition bound too long"))?;
        sqltypes::text::parse_text(ty, v)
    })
}

/// Fills in the partition constraints of the loaded tables (by catalog
/// key): each partition's bound in values, with its siblings' for a
/// DEFAULT one and its parent's when that is a partition too.
pub fn bind(tables: &mut BTreeMap<QualName, TableDef>) -> Result<()> {
    let by_oid: HashMap<u32, &TableDef> = tables.values().map(|t| (t.oid, t)).collect();
    let mut done: HashMap<u32, Arc<Constraint>> = HashMap::new();
    let parts: Vec<u32> =
        tables.values().filter(|t| t.partition_of.is_some()).map(|t| t.oid).collect();
    for oid in parts {
        constraint(oid, &by_oid, &mut done, 0)?;
    }
    for t in tables.values_mut() {
        t.partition_check = done.get(&t.oid).cloned();
    }
    Ok(())
}

fn constraint(
    oid: u32,
    by_oid: &HashMap<u32, &TableDef>,
    done: &mut HashMap<u32, Arc<Constraint>>,
    depth: usize,
) -> Result<Option<Arc<Constraint>>> {
    if let Some(c) = done.get(&oid) {
        return Ok(Some(c.clone()));
    }
    let Some(of) = by_oid.get(&oid).and_then(|t| t.partition_of.as_ref()) else {
        return Ok(None);
    };
    if depth > 64 {
        bail!(DataCorrupted, "partition hierarchy too deep");
    }
    let Some(parent) = by_oid.get(&of.parent) else {
        bail!(DataCorrupted, "partition's parent {} is missing", of.parent);
    };
    let Some(key) = &parent.partition_key else {
        bail!(DataCorrupted, "partition's parent \"{}\" is not partitioned", parent.name);
    };
    let types = key_types(parent);
    let bound = typed(&of.bound, &types)?;
    let mut others = Vec::new();
    if bound.is_default() {
        for s in by_oid.values() {
            match &s.partition_of {
                Some(o) if o.parent == of.parent && !o.bound.is_default() => {
                    others.push(typed(&o.bound, &types)?)
                }
                _ => {}
            }
        }
    }
    let up = constraint(of.parent, by_oid, done, depth + 1)?;
    let c = Arc::new(Constraint {
        key: key.columns.clone(),
        types,
        strategy: key.strategy,
        bound,
        others,
        up,
    });
    done.insert(oid, c.clone());
    Ok(Some(c))
}

/// The partitions of each partitioned table, in PostgreSQL's order (by
/// bound; DEFAULT last): reading the parent appends them in this order.
pub fn children(tables: &BTreeMap<QualName, Arc<TableDef>>) -> BTreeMap<u32, Vec<Arc<TableDef>>> {
    let mut out: BTreeMap<u32, Vec<Arc<TableDef>>> = BTreeMap::new();
    for t in tables.values() {
        if let Some(of) = &t.partition_of {
            out.entry(of.parent).or_default().push(t.clone());
        }
    }
    for kids in out.values_mut() {
        kids.sort_by(|a, b| order(a, b));
    }
    out
}

fn order(a: &TableDef, b: &TableDef) -> Ordering {
    let (Some(x), Some(y)) = (&a.partition_check, &b.partition_check) else {
        return a.oid.cmp(&b.oid);
    };
    match (&x.bound, &y.bound) {
        (Bound::Default, Bound::Default) => Ordering::Equal,
        (Bound::Default, _) => Ordering::Greater,
        (_, Bound::Default) => Ordering::Less,
        (Bound::Range { from: f, .. }, Bound::Range { from: g, .. }) => bound_cmp(f, g),
        (Bound::List(v), Bound::List(w)) => list_cmp(v, w),
        (Bound::Hash { modulus: m, remainder: r }, Bound::Hash { modulus: n, remainder: s }) => {
            (m, r).cmp(&(n, s))
        }
        _ => a.oid.cmp(&b.oid),
    }
}

/// List partitions sort by their smallest value, the one with NULL alone
/// (and no other value) last among them.
fn list_cmp(v: &[Option<Value>], w: &[Option<Value>]) -> Ordering {
    let least = |v: &[Option<Value>]| {
        v.iter().flatten().min_by(|a, b| sqltypes::ops::sort_cmp(a, b)).cloned()
    };
    match (least(v), least(w)) {
        (Some(a), Some(b)) => sqltypes::ops::sort_cmp(&a, &b),
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (None, None) => Ordering::Equal,
    }
}

/// The leaf partition of partitioned table `t` that takes `row`: 23514 if
/// none does.
pub fn route(
    kids: &BTreeMap<u32, Vec<Arc<TableDef>>>,
    t: &Arc<TableDef>,
    row: &[Value],
) -> Result<Arc<TableDef>> {
    let mut at = t.clone();
    while let Some(key) = &at.partition_key {
        let vals: Vec<&Value> = key.columns.iter().map(|&c| &row[c]).collect();
        let none = Vec::new();
        let parts = kids.get(&at.oid).unwrap_or(&none);
        let found = parts
            .iter()
            .find(|p| {
                p.partition_check
                    .as_ref()
                    .is_some_and(|c| !c.is_default() && takes(&c.bound, key.strategy, &vals))
            })
            .or_else(|| {
                parts.iter().find(|p| p.partition_check.as_ref().is_some_and(|c| c.is_default()))
            });
        let Some(p) = found else {
            let names: Vec<&str> =
                key.columns.iter().map(|&c| at.columns[c].name.as_str()).collect();
            let vals: Vec<String> = vals.into_iter().map(crate::dml::value_text).collect();
            return Err(err!(
                CheckViolation,
                "no partition of relation \"{}\" found for row",
                at.name
            )
            .with_detail(format!(
                "Partition key of the failing row contains ({}) = ({}).",
                names.join(", "),
                vals.join(", ")
            ))
            .with_table(&at.name));
        };
        at = p.clone();
    }
    Ok(at)
}

/// Rows bound for one leaf partition.
pub type Routed = (Arc<TableDef>, Vec<Vec<Value>>);

/// `rows` of partitioned table `t` grouped by the leaf partition that
/// takes them ([`route`]), leaves in the order their first row came.
pub fn split(
    kids: &BTreeMap<u32, Vec<Arc<TableDef>>>,
    t: &Arc<TableDef>,
    rows: Vec<Vec<Value>>,
) -> Result<Vec<Routed>> {
    let mut groups: Vec<Routed> = Vec::new();
    for row in rows {
        let leaf = route(kids, t, &row)?;
        match groups.iter_mut().find(|(l, _)| l.oid == leaf.oid) {
            Some((_, g)) => g.push(row),
            None => groups.push((leaf, vec![row])),
        }
    }
    Ok(groups)
}

/// Every partition under partitioned table `t`, each before its own.
pub fn descendants(kids: &BTreeMap<u32, Vec<Arc<TableDef>>>, t: &TableDef) -> Vec<Arc<TableDef>> {
    let mut out = Vec::new();
    for p in kids.get(&t.oid).into_iter().flatten() {
        out.push(p.clone());
        out.extend(descendants(kids, p));
    }
    out
}

/// The leaf partitions under partitioned table `t`, in order.
pub fn leaves(kids: &BTreeMap<u32, Vec<Arc<TableDef>>>, t: &TableDef) -> Vec<Arc<TableDef>> {
    let mut out = Vec::new();
    for p in kids.get(&t.oid).into_iter().flatten() {
        match p.partition_key {
            Some(_) => out.extend(leaves(kids, p)),
            None => out.push(p.clone()),
        }
    }
    out
}

/// The unique constraints of leaf partition `leaf` that are the ones of
/// partitioned table `root` an ON CONFLICT names (`arbiters`, as in
/// [`crate::dml::InsertPlan::arbiters`]): the primary key, and each unique
/// index matched by its key.
pub fn leaf_arbiters(
    root: &TableDef,
    leaf: &TableDef,
    arbiters: &[Option<usize>],
) -> Result<Vec<Option<usize>>> {
    let mut out = Vec::with_capacity(arbiters.len());
    for a in arbiters {
        let Some(i) = a else {
            out.push(None);
            continue;
        };
        let want = &root.indexes[*i];
        let found = leaf.indexes.iter().position(|x| {
            x.unique
                && x.columns == want.columns
                && x.exprs == want.exprs
                && x.predicate == want.predicate
        });
        match found {
            Some(j) => out.push(Some(j)),
            None => bail!(
                FeatureNotSupported,
                "partition \"{}\" has no unique index matching \"{}\"",
                leaf.name,
                want.name
            ),
        }
    }
    Ok(out)
}

/// 23514 for a row written to partition `t` that its bound does not take.
pub fn violation(t: &TableDef, row: &[Value]) -> crate::error::Error {
    err!(CheckViolation, "new row for relation \"{}\" violates partition constraint", t.name)
        .with_detail(format!("Failing row contains ({}).", crate::dml::row_text(row)))
        .with_table(&t.name)
}

/// PostgreSQL's hash partitioning: each key column hashed with its type's
/// extended hash function and the partitioning seed, the hashes combined.
pub mod hash {
    use sqltypes::Value;

    /// PostgreSQL's HASH_PARTITION_SEED.
    const SEED: u64 = 0x7A5B_2236_7996_DCFD;

    /// True if values of `ty` can be hash partitioned.
    pub fn supported(ty: &sqltypes::DataType) -> bool {
        use sqltypes::DataType as T;
        matches!(
            ty,
            T::Bool
                | T::Int2
                | T::Int4
                | T::Int8
                | T::Oid
                | T::Text
                | T::Varchar(_)
                | T::Bytea
                | T::Date
                | T::Timestamp
                | T::TimestampTz
                | T::Uuid
        )
    }

    /// The combined hash of a row's key.
    pub fn row_hash(key: &[&Value]) -> u64 {
        let mut h: u64 = 0;
        for k in key {
            if k.is_null() {
                continue;
            }
            let v = value_hash(k);
            h ^= v.wrapping_add(0x49a0_f4dd_15e5_a8e3).wrapping_add(h << 54).wrapping_add(h >> 7);
        }
        h
    }

    fn value_hash(v: &Value) -> u64 {
        match v {
            Value::Bool(b) => uint32(u32::from(*b)),
            Value::Int2(i) => uint32(*i as i32 as u32),
            Value::Int4(i) => uint32(*i as u32),
            Value::Date(d) => uint32(*d as u32),
            Value::Oid(o) => uint32(*o),
            Value::Int8(i) | Value::Timestamp(i) | Value::TimestampTz(i) => int8(*i),
            Value::Text(s) => bytes(s.as_bytes()),
            Value::Bytea(b) => bytes(b),
            Value::Uuid(u) => bytes(u),
            other => bytes(crate::dml::value_text(other).as_bytes()),
        }
    }

    /// hashint8extended: the low word, folded with the high word (or its
    /// complement for negative values).
    fn int8(i: i64) -> u64 {
        let lo = i as u32;
        let hi = (i >> 32) as u32;
        uint32(lo ^ if i >= 0 { hi } else { !hi })
    }

    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }

    fn finish(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }

    fn seeded(len: u32) -> (u32, u32, u32) {
        let init = 0x9e37_79b9u32.wrapping_add(len).wrapping_add(3_923_095);
        let (mut a, mut b, mut c) = (init, init, init);
        a = a.wrapping_add((SEED >> 32) as u32);
        b = b.wrapping_add(SEED as u32);
        mix(&mut a, &mut b, &mut c);
        (a, b, c)
    }

    /// hash_uint32_extended with the partitioning seed.
    fn uint32(k: u32) -> u64 {
        let (mut a, mut b, mut c) = seeded(4);
        a = a.wrapping_add(k);
        finish(&mut a, &mut b, &mut c);
        (u64::from(b) << 32) | u64::from(c)
    }

    /// hash_any_extended with the partitioning seed (little-endian words).
    fn bytes(k: &[u8]) -> u64 {
        let (mut a, mut b, mut c) = seeded(k.len() as u32);
        let word = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let mut rest = k;
        while rest.len() >= 12 {
            a = a.wrapping_add(word(&rest[0..4]));
            b = b.wrapping_add(word(&rest[4..8]));
            c = c.wrapping_add(word(&rest[8..12]));
            mix(&mut a, &mut b, &mut c);
            rest = &rest[12..];
        }
        // The last bytes; c's lowest byte is left for the length.
        let byte = |i: usize| u32::from(rest[i]);
        for i in (0..rest.len()).rev() {
            match i {
                8..=10 => c = c.wrapping_add(byte(i) << (8 * (i - 7))),
                4..=7 => b = b.wrapping_add(byte(i) << (8 * (i - 4))),
                _ => a = a.wrapping_add(byte(i) << (8 * i)),
            }
        }
        finish(&mut a, &mut b, &mut c);
        (u64::from(b) << 32) | u64::from(c)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// The partition (remainder) of each key, as PostgreSQL 15 chose it
        /// for tables hash partitioned with these moduli.
        fn remainders(keys: &[&[Value]], modulus: u64) -> Vec<u64> {
            keys.iter().map(|k| row_hash(&k.iter().collect::<Vec<_>>()) % modulus).collect()
        }

        #[test]
        fn int4_keys_go_where_postgresql_puts_them() {
            let keys: Vec<[Value; 1]> = (-3..=12).map(|i| [Value::Int4(i)]).collect();
            let keys: Vec<&[Value]> = keys.iter().map(|k| k.as_slice()).collect();
            let want = [0, 2, 1, 0, 0, 2, 1, 3, 1, 3, 3, 1, 1, 3, 1, 0];
            assert_eq!(remainders(&keys, 4), want);
        }

        #[test]
        fn text_keys_go_where_postgresql_puts_them() {
            let words = [
                "",
                "a",
                "ab",
                "abc",
                "abcd",
                "hello world",
                "hello world!",
                "the quick brown fox jumps",
                "x",
            ];
            let keys: Vec<[Value; 1]> =
                words.iter().map(|w| [Value::Text(w.to_string())]).collect();
            let keys: Vec<&[Value]> = keys.iter().map(|k| k.as_slice()).collect();
            assert_eq!(remainders(&keys, 3), [2, 2, 0, 1, 2, 1, 2, 2, 1]);
        }

        #[test]
        fn two_column_keys_with_nulls_go_where_postgresql_puts_them() {
            let day = |y: i32, m: u32, d: u32| {
                let base = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).expect("a date");
                let date = chrono::NaiveDate::from_ymd_opt(y, m, d).expect("a date");
                Value::Date((date - base).num_days() as i32)
            };
            let keys = [
                [Value::Int8(-10_000_000_000), day(2000, 1, 1)],
                [Value::Int8(-5), day(1999, 12, 31)],
                [Value::Int8(1), day(2020, 1, 1)],
                [Value::Int8(7), Value::Null],
                [Value::Int8(10_000_000_000), day(2024, 2, 29)],
                [Value::Null, day(2020, 1, 1)],
            ];
            let keys: Vec<&[Value]> = keys.iter().map(|k| k.as_slice()).collect();
            assert_eq!(remainders(&keys, 2), [1, 1, 1, 1, 0, 0]);
        }
    }
}
