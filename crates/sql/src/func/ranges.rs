//! Functions and operators of the range types: the constructors
//! (int4range(1, 5), tstzrange(a, b, '[]')), lower, upper, isempty,
//! lower_inc, upper_inc, lower_inf, upper_inf and range_merge, and the
//! operators `@>`, `<@`, `&&`, `<<`, `>>`, `&<`, `&>`, `-|-`, `+`, `*`
//! and `-`. The range arithmetic itself is `sqltypes::range`'s.

use sqltypes::range::{self, Bound, RangeKind, RangeValue};
use sqltypes::{DataType, Value};

use crate::bail;
use crate::error::Result;

/// One function or operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeFunc {
    /// int4range(lower, upper [, flags]) and the other constructors; a
    /// NULL bound is infinite.
    Construct(RangeKind),
    /// lower(range): NULL when empty or infinite
    Lower,
    /// upper(range)
    Upper,
    /// isempty(range)
    IsEmpty,
    /// lower_inc(range)
    LowerInc,
    /// upper_inc(range)
    UpperInc,
    /// lower_inf(range)
    LowerInf,
    /// upper_inf(range)
    UpperInf,
    /// range_merge(a, b): the smallest range covering both
    Merge,
    /// `range @> element` (`element <@ range` swaps the operands)
    ContainsElem,
    /// `a @> b` (`<@` swaps)
    Contains,
    /// `a && b`
    Overlaps,
    /// `a << b` (`>>` swaps)
    LeftOf,
    /// `a &< b`
    NotRightOf,
    /// `a &> b`
    NotLeftOf,
    /// `a -|- b`
    Adjacent,
    /// `a + b`
    Union,
    /// `a * b`
    Intersect,
    /// `a - b`
    Minus,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (RangeFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// a range function (or, for lower and upper, not with a range argument).
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    if let Some(k) = range::RANGE_KINDS.into_iter().find(|k| k.name() == name) {
        let sub = Some(k.subtype());
        let params = match args.len() {
            2 => vec![sub.clone(), sub],
            3 => vec![sub.clone(), sub, Some(DataType::Text)],
            _ => return Some(Err(super::no_such_function(name, args))),
        };
        return Some(Ok((RangeFunc::Construct(k), DataType::Range(k), params)));
    }
    let kind = match args.first() {
        Some(DataType::Range(k)) => Some(*k),
        _ => None,
    };
    let f = match name {
        "lower" | "upper" if kind.is_none() => return None,
        "lower" => RangeFunc::Lower,
        "upper" => RangeFunc::Upper,
        "isempty" => RangeFunc::IsEmpty,
        "lower_inc" => RangeFunc::LowerInc,
        "upper_inc" => RangeFunc::UpperInc,
        "lower_inf" => RangeFunc::LowerInf,
        "upper_inf" => RangeFunc::UpperInf,
        "range_merge" => RangeFunc::Merge,
        _ => return None,
    };
    let arity = if f == RangeFunc::Merge { 2 } else { 1 };
    let (Some(k), true) = (kind, args.len() == arity) else {
        // An untyped literal could be any range (or multirange) type.
        if args.first() == Some(&DataType::Unknown) {
            return Some(Err(super::ambiguous_function(name, args)));
        }
        return Some(Err(super::no_such_function(name, args)));
    };
    let ty = match f {
        RangeFunc::Lower | RangeFunc::Upper => k.subtype(),
        RangeFunc::Merge => DataType::Range(k),
        _ => DataType::Bool,
    };
    Some(Ok((f, ty, vec![Some(DataType::Range(k)); arity])))
}

/// A range operator between `lt` and `rt` when either is a range (None
/// otherwise): the function, its result type, the types the operands
/// take, and whether they swap. An untyped literal beside a range is a
/// range of its kind (`r @> '[1,2)'`), as in PostgreSQL.
pub fn operator(
    sym: &str,
    lt: &DataType,
    rt: &DataType,
) -> Option<(RangeFunc, DataType, [DataType; 2], bool)> {
    let k = match (lt, rt) {
        (DataType::Range(k), _) | (_, DataType::Range(k)) => *k,
        _ => return None,
    };
    let range = DataType::Range(k);
    let is_range = |t: &DataType| *t == range || *t == DataType::Unknown;
    let both = is_range(lt) && is_range(rt);
    // An element converts to the subtype implicitly (a timestamptz is no
    // tsrange element).
    let elem = |t: &DataType| sqltypes::cast::can_implicit_cast(t, &k.subtype());
    let (f, swap) = match sym {
        "@>" if both => (RangeFunc::Contains, false),
        "<@" if both => (RangeFunc::Contains, true),
        "@>" if *lt == range && elem(rt) => (RangeFunc::ContainsElem, false),
        "<@" if *rt == range && elem(lt) => (RangeFunc::ContainsElem, true),
        "&&" if both => (RangeFunc::Overlaps, false),
        "<<" if both => (RangeFunc::LeftOf, false),
        ">>" if both => (RangeFunc::LeftOf, true),
        "&<" if both => (RangeFunc::NotRightOf, false),
        "&>" if both => (RangeFunc::NotLeftOf, false),
        "-|-" if both => (RangeFunc::Adjacent, false),
        "+" if both => (RangeFunc::Union, false),
        "*" if both => (RangeFunc::Intersect, false),
        "-" if both => (RangeFunc::Minus, false),
        _ => return None,
    };
    let ty = match f {
        RangeFunc::Union | RangeFunc::Intersect | RangeFunc::Minus => range.clone(),
        _ => DataType::Bool,
    };
    let targets = match (f, swap) {
        (RangeFunc::ContainsElem, false) => [range, k.subtype()],
        (RangeFunc::ContainsElem, true) => [k.subtype(), range],
        _ => [range.clone(), range],
    };
    Some((f, ty, targets, swap))
}

/// The range flags text of a constructor's third argument.
fn flags(v: &Value) -> Result<(bool, bool)> {
    let text = match v {
        Value::Null => {
            bail!(DataException, "range constructor flags argument must not be null")
        }
        Value::Text(s) => s.as_str(),
        _ => "",
    };
    Ok(match text {
        "[]" => (true, true),
        "[)" => (true, false),
        "(]" => (false, true),
        "()" => (false, false),
        _ => {
            return Err(crate::err!(SyntaxError, "invalid range bound flags")
                .with_hint("Valid values are \"[]\", \"[)\", \"(]\", and \"()\"."))
        }
    })
}

/// Evaluates `f`; all but the constructors are strict.
pub fn call(f: RangeFunc, mut args: Vec<Value>) -> Result<Value> {
    if let RangeFunc::Construct(k) = f {
        let (lower_inc, upper_inc) = match args.get(2) {
            Some(v) => flags(v)?,
            None => (true, false),
        };
        let mut bound = |i: usize, inclusive: bool| {
            let v = std::mem::replace(&mut args[i], Value::Null);
            Bound { value: Some(v).filter(|v| !v.is_null()), inclusive }
        };
        let (lower, upper) = (bound(0, lower_inc), bound(1, upper_inc));
        return Ok(range::make(k, lower, upper, false)?.into_value());
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let r = |i: usize| -> Result<&RangeValue> {
        match args.get(i) {
            Some(Value::Range(r)) => Ok(r),
            other => bail!(InternalError, "range function given {other:?}"),
        }
    };
    let bound_value = |b: Option<&Bound>| b.and_then(|b| b.value.clone()).unwrap_or(Value::Null);
    let test = |p: fn(&Bound) -> bool, b: Option<&Bound>| Value::Bool(b.is_some_and(p));
    Ok(match f {
        RangeFunc::Construct(_) => unreachable!("returned above"),
        RangeFunc::Lower => bound_value(r(0)?.lower()),
        RangeFunc::Upper => bound_value(r(0)?.upper()),
        RangeFunc::IsEmpty => Value::Bool(r(0)?.is_empty()),
        RangeFunc::LowerInc => test(|b| b.inclusive, r(0)?.lower()),
        RangeFunc::UpperInc => test(|b| b.inclusive, r(0)?.upper()),
        RangeFunc::LowerInf => test(|b| b.value.is_none(), r(0)?.lower()),
        RangeFunc::UpperInf => test(|b| b.value.is_none(), r(0)?.upper()),
        RangeFunc::Merge => range::union(r(0)?, r(1)?, false)?.into_value(),
        RangeFunc::ContainsElem => match &args[..] {
            [Value::Range(r), v] => Value::Bool(range::contains_elem(r, v)?),
            _ => bail!(InternalError, "range @> element given {args:?}"),
        },
        RangeFunc::Contains => Value::Bool(range::contains(r(0)?, r(1)?)),
        RangeFunc::Overlaps => Value::Bool(range::overlaps(r(0)?, r(1)?)),
        RangeFunc::LeftOf => Value::Bool(range::left_of(r(0)?, r(1)?)),
        RangeFunc::NotRightOf => Value::Bool(range::not_right_of(r(0)?, r(1)?)),
        RangeFunc::NotLeftOf => Value::Bool(range::not_left_of(r(0)?, r(1)?)),
        RangeFunc::Adjacent => Value::Bool(range::adjacent(r(0)?, r(1)?)),
        RangeFunc::Union => range::union(r(0)?, r(1)?, true)?.into_value(),
        RangeFunc::Intersect => range::intersection(r(0)?, r(1)?)?.into_value(),
        RangeFunc::Minus => range::difference(r(0)?, r(1)?)?.into_value(),
    })
}
