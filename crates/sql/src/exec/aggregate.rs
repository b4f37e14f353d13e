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
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => AggState::MinMax(Value::Null),
        AggFunc::BoolAnd | AggFunc::BoolOr => AggState::Bool(None),
        AggFunc::StringAgg => AggState::Text(None),
        AggFunc::ArrayAgg | AggFunc::JsonAgg(_) => AggState::List(Vec::new()),
        AggFunc::JsonObjectAgg(_) => AggState::Pairs(Vec::new()),
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
        AggState::Text(t) => t.map(Value::Text).unwrap_or(Value::Null),
    })
}

pub(super) fn aggregate(
    rows: Vec<Row>,
    group: &[Expr],
    aggs: &[AggCall],
    ctx: &EvalContext,
) -> Result<Vec<Row>> {
    struct Group {
        values: Row,
        states: Vec<AggState>,
        seen: Vec<HashSet<Vec<u8>>>,
    }
    let mut groups: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut list: Vec<Group> = Vec::new();
    for row in rows {
        let mut gv = Vec::with_capacity(group.len());
        for g in group {
            gv.push(g.eval(&row, ctx)?);
        }
        let key = group_key(&gv);
        let idx = match groups.get(&key) {
            Some(&i) => i,
            None => {
                list.push(Group {
                    values: gv,
                    states: aggs.iter().map(agg_init).collect(),
                    seen: vec![HashSet::new(); aggs.len()],
                });
                groups.insert(key, list.len() - 1);
                list.len() - 1
            }
        };
        let g = &mut list[idx];
        for (j, a) in aggs.iter().enumerate() {
            let Some(input) = agg_input(a, &row, ctx)? else { continue };
            if a.distinct
                && !input.v.is_null()
                && !g.seen[j].insert(group_key(std::slice::from_ref(&input.v)))
            {
                continue;
            }
            agg_step(a, &mut g.states[j], input)?;
        }
    }
    if list.is_empty() && group.is_empty() {
        list.push(Group {
            values: vec![],
            states: aggs.iter().map(agg_init).collect(),
            seen: vec![],
        });
    }
    let mut out = Vec::with_capacity(list.len());
    for g in list {
        let mut row = g.values;
        for (a, st) in aggs.iter().zip(g.states) {
            row.push(agg_final(a, st, ctx.zone())?);
        }
        out.push(row);
    }
    Ok(out)
}
