//! Aggregation: hash grouping and the aggregate functions' running states
//! (count, sum, avg, min, max, bool_and/or, string_agg, array_agg), with
//! DISTINCT, FILTER and ORDER BY inside the call. Window aggregates
//! (`window.rs`) reuse the same states.

use std::collections::{HashMap, HashSet};

use sqltypes::{cast, ops, DataType, Value};

use super::{compare_keys, group_key, Row};
use crate::error::Result;
use crate::expr::{EvalContext, Expr};
use crate::plan::{AggCall, AggFunc};

/// Running state of one aggregate.
#[derive(Clone)]
pub(crate) enum AggState {
    Count(i64),
    Sum(Value),
    Avg(Value, i64),
    MinMax(Value),
    Bool(Option<bool>),
    Text(Option<String>),
    /// array_agg's and json_agg's values so far (NULLs included).
    List(Vec<Value>),
    /// json_object_agg's (key, value) pairs so far.
    Pairs(Vec<(Value, Value)>),
    /// An aggregate with ORDER BY: its inputs with their sort keys, fed in
    /// order at the end.
    Ordered(Vec<AggInput>),
    /// Variance and standard deviation over numerics: count, sum and sum
    /// of squares, exact.
    Moments(i64, sqltypes::Numeric, sqltypes::Numeric),
    /// Over floats: count, sum and the sum of squared deviations, updated
    /// as PostgreSQL's float8_accum does (Youngs-Cramer).
    FloatMoments(f64, f64, f64),
    /// Over (y, x) pairs: N, Sx, Sxx, Sy, Syy, Sxy, updated as
    /// PostgreSQL's float8_regr_accum does.
    Regr([f64; 6]),
}

/// One row's input to an aggregate: argument, extra argument (NULL where
/// absent) and the values of the call's ORDER BY keys.
#[derive(Clone)]
pub(crate) struct AggInput {
    pub v: Value,
    pub extra: Value,
    pub keys: Vec<Value>,
}

pub(crate) fn agg_init(a: &AggCall) -> AggState {
    if !a.order.is_empty() {
        return AggState::Ordered(Vec::new());
    }
    unordered_init(a)
}

fn unordered_init(a: &AggCall) -> AggState {
    match a.func {
        AggFunc::CountStar | AggFunc::Count => AggState::Count(0),
        AggFunc::Sum => AggState::Sum(Value::Null),
        AggFunc::Avg => AggState::Avg(Value::Null, 0),
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue | AggFunc::GroupingSet => {
            AggState::MinMax(Value::Null)
        }
        AggFunc::BoolAnd | AggFunc::BoolOr => AggState::Bool(None),
        AggFunc::StringAgg => AggState::Text(None),
        AggFunc::ArrayAgg | AggFunc::JsonAgg(_) => AggState::List(Vec::new()),
        AggFunc::JsonObjectAgg(_) => AggState::Pairs(Vec::new()),
        AggFunc::Spread(_) if a.ty == DataType::Float8 => AggState::FloatMoments(0.0, 0.0, 0.0),
        AggFunc::Spread(_) => {
            AggState::Moments(0, sqltypes::Numeric::from_i64(0), sqltypes::Numeric::from_i64(0))
        }
        AggFunc::Bits(_) => AggState::Sum(Value::Null),
        AggFunc::Percentile(_) | AggFunc::Mode => AggState::Pairs(Vec::new()),
        AggFunc::Regr(_) => AggState::Regr([0.0; 6]),
    }
}

/// An aggregate's inputs from one row: None if FILTER rejects the row.
pub(crate) fn agg_input(a: &AggCall, row: &[Value], ctx: &EvalContext) -> Result<Option<AggInput>> {
    if let Some(f) = &a.filter {
        if !matches!(f.eval(row, ctx)?, Value::Bool(true)) {
            return Ok(None);
        }
    }
    let v = match &a.arg {
        Some(e) => e.eval(row, ctx)?,
        None => Value::Null,
    };
    let extra = match &a.extra {
        Some(e) => e.eval(row, ctx)?,
        None => Value::Null,
    };
    let mut keys = Vec::with_capacity(a.order.len());
    for k in &a.order {
        keys.push(k.expr.eval(row, ctx)?);
    }
    Ok(Some(AggInput { v, extra, keys }))
}

pub(crate) fn agg_step(a: &AggCall, st: &mut AggState, input: AggInput) -> Result<()> {
    if let AggState::Ordered(list) = st {
        list.push(input);
        return Ok(());
    }
    let AggInput { v, extra, .. } = input;
    if let AggState::List(items) = st {
        items.push(v);
        return Ok(());
    }
    if let AggState::Pairs(pairs) = st {
        pairs.push((v, extra));
        return Ok(());
    }
    if a.func != AggFunc::CountStar && v.is_null() {
        return Ok(());
    }
    match st {
        AggState::List(_) | AggState::Pairs(_) | AggState::Ordered(_) => {}
        AggState::Text(acc) => {
            let Value::Text(s) = cast::cast(v, &DataType::Text)? else { return Ok(()) };
            match acc {
                None => *acc = Some(s),
                Some(out) => {
                    // The delimiter goes before every value but the first.
                    if let Value::Text(d) = cast::cast(extra, &DataType::Text)? {
                        out.push_str(&d);
                    }
                    out.push_str(&s);
                }
            }
        }
        AggState::Count(n) => *n += 1,
        AggState::Sum(acc) if matches!(a.func, AggFunc::Bits(_)) => {
            let and = a.func == AggFunc::Bits(true);
            *acc = match (&*acc, v) {
                (Value::Null, v) => v,
                (Value::Int2(x), Value::Int2(y)) => Value::Int2(if and { x & y } else { x | y }),
                (Value::Int4(x), Value::Int4(y)) => Value::Int4(if and { x & y } else { x | y }),
                (Value::Int8(x), Value::Int8(y)) => Value::Int8(if and { x & y } else { x | y }),
                (_, v) => crate::bail!(InternalError, "bit_and/bit_or over {v:?}"),
            };
        }
        AggState::Moments(n, sum, squares) => {
            let Value::Numeric(x) = cast::cast(v, &a.ty)? else { return Ok(()) };
            *n += 1;
            *squares = squares.add(&x.mul(&x));
            *sum = sum.add(&x);
        }
        AggState::Regr(m) => {
            let (Value::Float8(y), Value::Float8(x)) = (v, extra) else { return Ok(()) };
            let [n, sx, sxx, sy, syy, sxy] = m;
            let before = *n;
            *n += 1.0;
            *sx += x;
            *sy += y;
            if before > 0.0 {
                let (tx, ty) = (x * *n - *sx, y * *n - *sy);
                let scale = 1.0 / (*n * before);
                *sxx += tx * tx * scale;
                *syy += ty * ty * scale;
                *sxy += tx * ty * scale;
            } else if !x.is_finite() || !y.is_finite() {
                (*sxx, *syy, *sxy) = (f64::NAN, f64::NAN, f64::NAN);
            }
        }
        AggState::FloatMoments(n, sx, sxx) => {
            let Value::Float8(x) = cast::cast(v, &DataType::Float8)? else { return Ok(()) };
            let before = *n;
            *n += 1.0;
            *sx += x;
            if before > 0.0 {
                let t = x * *n - *sx;
                *sxx += t * t / (*n * before);
            } else if !x.is_finite() {
                *sxx = f64::NAN;
            }
        }
        AggState::Sum(acc) => {
            let v = cast::cast(v, &a.ty)?;
            *acc = if acc.is_null() { v } else { ops::add(acc, &v)? };
        }
        AggState::Avg(acc, n) => {
            let v = cast::cast(v, &a.ty)?;
            *acc = if acc.is_null() { v } else { ops::add(acc, &v)? };
            *n += 1;
        }
        AggState::MinMax(cur) if a.func == AggFunc::AnyValue => {
            if cur.is_null() {
                *cur = v;
            }
        }
        AggState::MinMax(cur) => {
            let want = if a.func == AggFunc::Min {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
            if cur.is_null() || ops::compare(&v, cur)? == Some(want) {
                *cur = v;
            }
        }
        AggState::Bool(cur) => {
            let b = matches!(v, Value::Bool(true));
            *cur = Some(match (*cur, a.func) {
                (None, _) => b,
                (Some(c), AggFunc::BoolAnd) => c && b,
                (Some(c), _) => c || b,
            });
        }
    }
    Ok(())
}

pub(crate) fn agg_final(a: &AggCall, st: AggState, zone: &sqltypes::Zone) -> Result<Value> {
    Ok(match st {
        AggState::Ordered(mut inputs) => {
            inputs.sort_by(|x, y| compare_keys(&a.order, &x.keys, &y.keys));
            let mut inner = unordered_init(a);
            for input in inputs {
                agg_step(a, &mut inner, input)?;
            }
            agg_final(a, inner, zone)?
        }
        AggState::List(items) if items.is_empty() => Value::Null,
        AggState::List(items) if matches!(a.func, AggFunc::JsonAgg(_)) => {
            crate::func::json::agg_array(&items, a.func == AggFunc::JsonAgg(true), zone)?
        }
        AggState::Pairs(pairs) if matches!(a.func, AggFunc::Percentile(_) | AggFunc::Mode) => {
            ordered_set_final(a.func, pairs)?
        }
        AggState::Pairs(pairs) if pairs.is_empty() => Value::Null,
        AggState::Pairs(pairs) => {
            crate::func::json::agg_object(&pairs, a.func == AggFunc::JsonObjectAgg(true), zone)?
        }
        AggState::List(items) => {
            let elem = a.ty.elem().cloned().unwrap_or(DataType::Text);
            sqltypes::array::ArrayValue::new(elem, items).into_value()
        }
        AggState::Count(n) => Value::Int8(n),
        AggState::Sum(v) | AggState::MinMax(v) => v,
        AggState::Avg(_, 0) => Value::Null,
        AggState::Avg(sum, n) if a.ty == DataType::Interval => {
            ops::div(&sum, &Value::Float8(n as f64))?
        }
        AggState::Avg(sum, n) => ops::div(&sum, &cast::cast(Value::Int8(n), &a.ty)?)?,
        AggState::Bool(b) => b.map(Value::Bool).unwrap_or(Value::Null),
        AggState::Moments(n, sum, squares) => {
            let AggFunc::Spread(spread) = a.func else { return Ok(Value::Null) };
            spread_numeric(spread, n, &sum, &squares)?
        }
        AggState::Regr(m) => {
            let AggFunc::Regr(kind) = a.func else { return Ok(Value::Null) };
            regr_final(kind, m)
        }
        AggState::FloatMoments(n, _, sxx) => {
            let AggFunc::Spread(spread) = a.func else { return Ok(Value::Null) };
            let denominator = if spread.population { n } else { n - 1.0 };
            if denominator <= 0.0 || (spread.population && n == 0.0) {
                return Ok(Value::Null);
            }
            let var = sxx / denominator;
            Value::Float8(if spread.root { var.sqrt() } else { var })
        }
        AggState::Text(t) => t.map(Value::Text).unwrap_or(Value::Null),
    })
}

/// Groups `rows` by `group` and computes `aggs` per group. With grouping
/// sets, every row joins one group per set, keyed by the set and the
/// values of that set's expressions (the others read as NULL), and an
/// empty set yields its row even over no input, as no GROUP BY does.
pub(super) async fn aggregate(
    rows: Vec<Row>,
    group: &[Expr],
    aggs: &[AggCall],
    sets: Option<&[Vec<usize>]>,
    ctx: &EvalContext,
) -> Result<Vec<Row>> {
    struct Group {
        set: usize,
        values: Row,
        states: Vec<AggState>,
        seen: Vec<HashSet<Vec<u8>>>,
    }
    let new_group = |set: usize, values: Row| Group {
        set,
        values,
        states: aggs.iter().map(agg_init).collect(),
        seen: vec![HashSet::new(); aggs.len()],
    };
    let all: Vec<usize> = (0..group.len()).collect();
    let sets = sets.unwrap_or(std::slice::from_ref(&all));
    let mut groups: HashMap<(usize, Vec<u8>), usize> = HashMap::new();
    let mut list: Vec<Group> = Vec::new();
    let mut inputs = Vec::with_capacity(aggs.len());
    // The last set takes the row's values; the others copy them.
    let last = sets.len().saturating_sub(1);
    for (i, row) in rows.into_iter().enumerate() {
        ctx.interrupts.pause(i).await?;
        let mut gv = Vec::with_capacity(group.len());
        for g in group {
            gv.push(g.eval(&row, ctx)?);
        }
        inputs.clear();
        for a in aggs {
            inputs.push(agg_input(a, &row, ctx)?);
        }
        for (set, members) in sets.iter().enumerate() {
            let values: Row = if members.len() == gv.len() && set == last {
                std::mem::take(&mut gv)
            } else {
                let mut v = vec![Value::Null; gv.len()];
                for &m in members {
                    v[m] = gv[m].clone();
                }
                v
            };
            let key = (set, group_key(&values));
            let idx = match groups.get(&key) {
                Some(&i) => i,
                None => {
                    list.push(new_group(set, values));
                    groups.insert(key, list.len() - 1);
                    list.len() - 1
                }
            };
            let g = &mut list[idx];
            for (j, a) in aggs.iter().enumerate() {
                let input = if set == last { inputs[j].take() } else { inputs[j].clone() };
                let Some(input) = input else { continue };
                if a.distinct
                    && !input.v.is_null()
                    && !g.seen[j].insert(group_key(std::slice::from_ref(&input.v)))
                {
                    continue;
                }
                agg_step(a, &mut g.states[j], input)?;
            }
        }
    }
    if list.is_empty() {
        for (set, members) in sets.iter().enumerate() {
            if members.is_empty() {
                list.push(new_group(set, vec![Value::Null; group.len()]));
            }
        }
    }
    let mut out = Vec::with_capacity(list.len());
    for g in list {
        let mut row = g.values;
        for (a, st) in aggs.iter().zip(g.states) {
            row.push(match a.func {
                AggFunc::GroupingSet => Value::Int4(g.set as i32),
                _ => agg_final(a, st, ctx.zone())?,
            });
        }
        out.push(row);
    }
    Ok(out)
}

/// Variance or standard deviation from exact moments, as PostgreSQL's
/// numeric_stddev_internal computes it: (N * sum(x^2) - sum(x)^2) over
/// N * (N - 1) (or N * N), with numeric division's scale, and the square
/// root at that scale. NULL for no rows, or one for the sample measures.
fn spread_numeric(
    spread: crate::plan::Spread,
    n: i64,
    sum: &sqltypes::Numeric,
    squares: &sqltypes::Numeric,
) -> Result<Value> {
    use sqltypes::Numeric;
    if n == 0 || (n == 1 && !spread.population) {
        return Ok(Value::Null);
    }
    let count = Numeric::from_i64(n);
    let numerator = count.mul(squares).sub(&sum.mul(sum));
    if numerator.sign() <= 0 {
        return Ok(Value::Numeric(Numeric::from_i64(0)));
    }
    let other = if spread.population { n } else { n - 1 };
    let denominator = count.mul(&Numeric::from_i64(other));
    let var = numerator.div(&denominator)?;
    Ok(Value::Numeric(if spread.root { var.sqrt_scaled(var.scale())? } else { var }))
}

/// An ordered-set aggregate's value from its (value, fraction) inputs in
/// the WITHIN GROUP order; NULL values are skipped, no values give NULL.
fn ordered_set_final(func: AggFunc, pairs: Vec<(Value, Value)>) -> Result<Value> {
    let fraction = pairs.first().map(|(_, f)| f.clone());
    let values: Vec<Value> = pairs.into_iter().map(|(v, _)| v).filter(|v| !v.is_null()).collect();
    if values.is_empty() {
        return Ok(Value::Null);
    }
    let n = values.len();
    let fraction = match (func, fraction) {
        (AggFunc::Mode, _) => 0.0,
        (_, Some(Value::Float8(f))) => {
            if !(0.0..=1.0).contains(&f) {
                crate::bail!(NumericValueOutOfRange, "percentile value {f} is not between 0 and 1");
            }
            f
        }
        _ => return Ok(Value::Null),
    };
    Ok(match func {
        AggFunc::Percentile(false) => {
            let row = ((fraction * n as f64).ceil() as usize).max(1);
            values[row.min(n) - 1].clone()
        }
        AggFunc::Percentile(true) => {
            let at = fraction * (n - 1) as f64;
            let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
            let float = |v: &Value| match v {
                Value::Float8(x) => *x,
                _ => f64::NAN,
            };
            let (a, b) = (float(&values[lo]), float(&values[hi.min(n - 1)]));
            Value::Float8(if lo == hi { a } else { a + (at - lo as f64) * (b - a) })
        }
        // The most frequent value; of equally frequent ones the first.
        _ => {
            let mut best = (0usize, 0usize);
            let mut start = 0;
            for i in 1..=n {
                let run_ends = i == n
                    || ops::compare(&values[i], &values[start])? != Some(std::cmp::Ordering::Equal);
                if run_ends {
                    if i - start > best.1 {
                        best = (start, i - start);
                    }
                    start = i;
                }
            }
            values[best.0].clone()
        }
    })
}

/// A two-variable statistic from its moments, as PostgreSQL's
/// float8_regr_* and float8_corr/covar_* finish them.
fn regr_final(kind: crate::plan::Regr, m: [f64; 6]) -> Value {
    use crate::plan::Regr;
    let [n, sx, sxx, sy, syy, sxy] = m;
    let f = |x: f64| Value::Float8(x);
    if kind == Regr::Count {
        return Value::Int8(n as i64);
    }
    if n < 1.0 {
        return Value::Null;
    }
    match kind {
        Regr::Count => Value::Int8(n as i64),
        Regr::AvgX => f(sx / n),
        Regr::AvgY => f(sy / n),
        Regr::Sxx => f(sxx),
        Regr::Syy => f(syy),
        Regr::Sxy => f(sxy),
        Regr::CovarPop => f(sxy / n),
        Regr::CovarSamp if n < 2.0 => Value::Null,
        Regr::CovarSamp => f(sxy / (n - 1.0)),
        Regr::Corr if sxx == 0.0 || syy == 0.0 => Value::Null,
        Regr::Corr => f(sxy / (sxx * syy).sqrt()),
        Regr::R2 if sxx == 0.0 => Value::Null,
        Regr::R2 if syy == 0.0 => f(1.0),
        Regr::R2 => f((sxy * sxy) / (sxx * syy)),
        Regr::Slope if sxx == 0.0 => Value::Null,
        Regr::Slope => f(sxy / sxx),
        Regr::Intercept if sxx == 0.0 => Value::Null,
        Regr::Intercept => f((sy - sx * sxy / sxx) / n),
    }
}
