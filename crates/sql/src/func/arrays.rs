//! Array functions and operators: constructors, subscripts, `||`,
//! containment, the array_* functions and string_to_array. Resolution is
//! polymorphic as in PostgreSQL: the element type comes from the array
//! argument, and the other arguments are coerced to it.

use sqltypes::array::{ArrayValue, Dim};
use sqltypes::{ops, text, DataType, Value};

use crate::error::Result;
use crate::expr::BinOp;
use crate::{bail, err};

/// A LIKE or regular expression match operator (`~~`, `!~~*`, `~`,
/// `!~*`, ...) as `x op ANY/ALL (array)` applies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternOp {
    /// A POSIX regular expression (`~`) rather than a LIKE pattern.
    pub regex: bool,
    /// NOT LIKE, `!~`.
    pub negated: bool,
    /// ILIKE, `~*`: case-insensitive.
    pub ci: bool,
}

impl PatternOp {
    /// The operator's name (`~~`, `!~~*`, `~`, ...).
    pub fn symbol(self) -> &'static str {
        match (self.regex, self.negated, self.ci) {
            (false, false, false) => "~~",
            (false, false, true) => "~~*",
            (false, true, false) => "!~~",
            (false, true, true) => "!~~*",
            (true, false, false) => "~",
            (true, false, true) => "~*",
            (true, true, false) => "!~",
            (true, true, true) => "!~*",
        }
    }

    /// Whether `s` matches `pattern` (negated for the NOT operators).
    fn test(self, s: &str, pattern: &str) -> Result<bool> {
        let found = match self.regex {
            true => crate::func::regex::is_match(s, pattern, self.ci)?,
            false => crate::expr::like(s, pattern, self.ci)?,
        };
        Ok(found != self.negated)
    }
}

/// `x op ANY (a)` (ALL when `all`), `test` comparing x with one element
/// (None: unknown): true as soon as one holds (ALL: false as soon as one
/// fails), NULL when none decides and one is unknown, ALL's answer for
/// an empty array.
fn quantified(
    x: &Value,
    a: &ArrayValue,
    all: bool,
    test: impl Fn(&Value, &Value) -> Result<Option<bool>>,
) -> Result<Value> {
    if a.items.is_empty() {
        return Ok(Value::Bool(all));
    }
    if x.is_null() {
        return Ok(Value::Null);
    }
    let mut unknown = false;
    for item in &a.items {
        match test(x, item)? {
            Some(holds) if holds != all => return Ok(Value::Bool(!all)),
            Some(_) => {}
            None => unknown = true,
        }
    }
    Ok(if unknown { Value::Null } else { Value::Bool(all) })
}

/// A resolved array function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayFunc {
    /// `ARRAY[a, b, ...]`; true when the items are sub-arrays (one more
    /// dimension)
    Construct(bool),
    /// `x op ANY (array)`, or ALL when the flag is set
    AnyAll(BinOp, bool),
    /// `x LIKE ANY (array)`, `x ~ ALL (array)`, ...: a pattern match
    /// against each element, ALL when the flag is set
    MatchAnyAll(PatternOp, bool),
    /// `a[i][j]...`
    Subscript,
    /// `SET a[i][j]... = x`: (array, x, i, j, ...), the array with that
    /// element set; the binder makes a NULL array an empty one of the
    /// element type.
    Assign,
    /// `a[lo:hi]` on a one-dimensional array; the flags say whether the
    /// lower and upper bounds are given (omitted ones are not passed).
    Slice(bool, bool),
    /// array_cat, `array || array`
    Cat,
    /// array_append, `array || element`
    Append,
    /// array_prepend, `element || array`
    Prepend,
    /// `@>`: contains
    Contains,
    /// `<@`: is contained by
    ContainedBy,
    /// `&&`: overlaps
    Overlaps,
    /// array_length(a, dim)
    Length,
    /// array_lower(a, dim)
    Lower,
    /// array_upper(a, dim)
    Upper,
    /// array_ndims(a)
    Ndims,
    /// array_dims(a)
    Dims,
    /// array_fill(value, dimensions [, lower bounds]), with the element
    /// type's OID (a NULL value has no type of its own)
    Fill(u32),
    /// cardinality(a)
    Cardinality,
    /// array_to_string(a, delimiter [, null text])
    ToString,
    /// string_to_array(s, delimiter [, null text])
    FromString,
    /// array_position(a, x [, start])
    Position,
    /// array_positions(a, x)
    Positions,
    /// array_remove(a, x)
    Remove,
    /// array_replace(a, from, to)
    Replace,
    /// trim_array(a, n)
    Trim,
    /// width_bucket(operand, thresholds): the number of thresholds at or
    /// below the operand
    WidthBucket,
}

/// Resolution of one call: the function, its result type and the type each
/// argument is coerced to (None: as is).
pub type Resolved = (ArrayFunc, DataType, Vec<Option<DataType>>);

use super::no_such_function;

/// The array type argument `i` is taken as: its own if it is an array; an
/// unknown literal or NULL takes another argument's array type (else
/// text[]).
fn array_arg(name: &str, args: &[DataType], i: usize) -> Result<DataType> {
    match args.get(i) {
        Some(t @ DataType::Array(_)) => Ok(t.clone()),
        Some(DataType::Unknown) => Ok(args
            .iter()
            .find(|t| t.elem().is_some())
            .cloned()
            .unwrap_or_else(|| DataType::Text.array_of())),
        _ => Err(no_such_function(name, args)),
    }
}

/// Resolves an array function by name, or None if `name` is not one.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    resolve_known(name, args).transpose()
}

fn resolve_known(name: &str, args: &[DataType]) -> Result<Option<Resolved>> {
    use ArrayFunc as F;
    use DataType as T;
    let n = args.len();
    let int = Some(T::Int4);
    Ok(Some(match (name, n) {
        ("array_length" | "array_lower" | "array_upper", 2) => {
            let a = array_arg(name, args, 0)?;
            let f = match name {
                "array_length" => F::Length,
                "array_lower" => F::Lower,
                _ => F::Upper,
            };
            (f, T::Int4, vec![Some(a), int])
        }
        ("array_ndims" | "cardinality", 1) => {
            let a = array_arg(name, args, 0)?;
            let f = if name == "cardinality" { F::Cardinality } else { F::Ndims };
            (f, T::Int4, vec![Some(a)])
        }
        ("array_dims", 1) => (F::Dims, T::Text, vec![Some(array_arg(name, args, 0)?)]),
        ("array_fill", 2 | 3) => {
            let elem = match &args[0] {
                T::Unknown => T::Text,
                t if t.elem().is_some() => {
                    bail!(FeatureNotSupported, "array_fill of arrays is not supported yet")
                }
                t => t.clone(),
            };
            let ints = Some(T::Int4.array_of());
            (F::Fill(elem.oid()), elem.array_of(), vec![Some(elem), ints.clone(), ints])
        }
        ("array_to_string", 2 | 3) => {
            let a = array_arg(name, args, 0)?;
            (F::ToString, T::Text, vec![Some(a), Some(T::Text), Some(T::Text)])
        }
        ("string_to_array", 2 | 3) => (F::FromString, T::Text.array_of(), vec![Some(T::Text); 3]),
        ("array_cat", 2) => {
            let a = array_arg(name, args, 0)?;
            let b = array_arg(name, args, 1)?;
            let t =
                sqltypes::cast::common_type(&a, &b).ok_or_else(|| no_such_function(name, args))?;
            (F::Cat, t.clone(), vec![Some(t.clone()), Some(t)])
        }
        ("array_append", 2) => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().cloned();
            (F::Append, a.clone(), vec![Some(a), e])
        }
        ("array_prepend", 2) => {
            let a = array_arg(name, args, 1)?;
            let e = a.elem().cloned();
            (F::Prepend, a.clone(), vec![e, Some(a)])
        }
        ("array_position", 2 | 3) | ("array_positions", 2) => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().cloned();
            if name == "array_positions" {
                (F::Positions, T::Int4.array_of(), vec![Some(a), e])
            } else {
                (F::Position, T::Int4, vec![Some(a), e, int])
            }
        }
        ("array_remove", 2) => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().cloned();
            (F::Remove, a.clone(), vec![Some(a), e])
        }
        ("array_replace", 3) => {
            let a = array_arg(name, args, 0)?;
            let e = a.elem().cloned();
            (F::Replace, a.clone(), vec![Some(a), e.clone(), e])
        }
        ("trim_array", 2) => {
            let a = array_arg(name, args, 0)?;
            (F::Trim, a.clone(), vec![Some(a), int])
        }
        // width_bucket(anycompatible, anycompatiblearray)
        ("width_bucket", 2) if args[1].elem().is_some() || args[1] == T::Unknown => {
            let elem = match (&args[0], args[1].elem()) {
                (T::Unknown, Some(e)) => e.clone(),
                (x, None) => x.clone(),
                (x, Some(e)) => {
                    sqltypes::cast::common_type(x, e).ok_or_else(|| no_such_function(name, args))?
                }
            };
            let elem = if elem == T::Unknown { T::Text } else { elem };
            (F::WidthBucket, T::Int4, vec![Some(elem.clone()), Some(elem.array_of())])
        }
        _ => return Ok(None),
    }))
}

fn array(v: Value) -> Option<ArrayValue> {
    match v {
        Value::Array(a) => Some(*a),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int2(i) => Some(*i as i64),
        Value::Int4(i) => Some(*i as i64),
        Value::Int8(i) => Some(*i),
        _ => None,
    }
}

/// Equality as the array functions use it (IS NOT DISTINCT FROM).
fn same(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => ops::compare(a, b).ok().flatten() == Some(std::cmp::Ordering::Equal),
        _ => false,
    }
}

/// The elements of a one-dimensional (or empty) array, else 0A000 as
/// PostgreSQL's "only one-dimensional arrays are supported" errors.
fn one_dim(a: &ArrayValue, what: &str) -> Result<()> {
    if a.ndims() > 1 {
        bail!(FeatureNotSupported, "{what} for multidimensional arrays is not supported");
    }
    Ok(())
}

/// Builds `ARRAY[...]` from its evaluated items: scalars make a
/// one-dimensional array; arrays (sub-`ARRAY[...]`s) make one more
/// dimension, and must all have the same dimensions.
pub fn construct(elem: &DataType, items: Vec<Value>, nested: bool) -> Result<Value> {
    if !nested {
        return Ok(ArrayValue::new(elem.clone(), items).into_value());
    }
    let mut dims: Option<Vec<Dim>> = None;
    let mut flat = Vec::new();
    let mut count = 0;
    for item in items {
        let Value::Array(sub) = item else {
            if item.is_null() {
                // A NULL sub-array: PostgreSQL skips it only when all are
                // NULL; otherwise dimensions differ.
                continue;
            }
            bail!(InvalidTextRepresentation, "expected an array element");
        };
        match &dims {
            None => dims = Some(sub.dims.clone()),
            Some(d) if *d != sub.dims => bail!(
                ArraySubscriptError,
                "multidimensional arrays must have array expressions with matching dimensions"
            ),
            _ => {}
        }
        count += 1;
        flat.extend(sub.items);
    }
    let inner = dims.unwrap_or_default();
    if inner.is_empty() {
        return Ok(ArrayValue::new(elem.clone(), Vec::new()).into_value());
    }
    if inner.len() + 1 > sqltypes::array::MAXDIM {
        bail!(
            ProgramLimitExceeded,
            "number of array dimensions ({}) exceeds the maximum allowed ({})",
            inner.len() + 1,
            sqltypes::array::MAXDIM
        );
    }
    let mut all = vec![Dim { len: count, lower: 1 }];
    all.extend(inner);
    Ok(Value::Array(Box::new(ArrayValue {
        elem: elem.clone(),
        dims: all,
        items: flat,
        vector: false,
    })))
}

/// The flat position of subscripts `idx` in `a`, if inside its bounds.
fn offset(a: &ArrayValue, idx: &[i64]) -> Option<usize> {
    if idx.len() != a.ndims() {
        return None;
    }
    let mut off: usize = 0;
    for (d, &i) in a.dims.iter().zip(idx) {
        let rel = i.checked_sub(d.lower as i64)?;
        if rel < 0 || rel >= d.len as i64 {
            return None;
        }
        off = off * d.len as usize + rel as usize;
    }
    Some(off)
}

/// Evaluates an array function.
pub fn call(f: ArrayFunc, args: Vec<Value>) -> Result<Value> {
    use ArrayFunc as F;
    let mut args = args.into_iter();
    if f == F::Subscript {
        let Some(a) = args.next().and_then(array) else { return Ok(Value::Null) };
        let mut idx = Vec::new();
        for v in args {
            match int(&v) {
                Some(i) => idx.push(i),
                None => return Ok(Value::Null),
            }
        }
        return Ok(match offset(&a, &idx) {
            Some(o) => a.items[o].clone(),
            None => Value::Null,
        });
    }
    if f == F::Assign {
        let (Some(mut a), Some(v)) = (args.next(), args.next()) else {
            bail!(InternalError, "an element assignment without its array and value")
        };
        let mut at = Vec::new();
        for i in args {
            match i {
                Value::Int4(i) => at.push(i),
                _ => bail!(NullValueNotAllowed, "array subscript in assignment must not be null"),
            }
        }
        let Value::Array(arr) = &a else { bail!(InternalError, "an element assignment to {a:?}") };
        let elem = arr.elem.clone();
        sqltypes::array::set_element(&mut a, &elem, &at, v)?;
        return Ok(a);
    }
    if let F::Construct(nested) = f {
        let items: Vec<Value> = args.collect();
        // The element type as the values show it; the binder's cast around
        // the constructor then makes it exact.
        let elem = items
            .iter()
            .find_map(|v| match v {
                Value::Array(a) => Some(a.elem.clone()),
                v => v.data_type(),
            })
            .unwrap_or(DataType::Text);
        return construct(&elem, items, nested);
    }
    let mut next = || args.next().unwrap_or(Value::Null);
    Ok(match f {
        F::Construct(_) | F::Subscript | F::Assign => {
            bail!(InternalError, "{f:?} is evaluated above")
        }
        F::AnyAll(op, all) => {
            let (x, a) = (next(), next());
            let Some(a) = array(a) else { return Ok(Value::Null) };
            quantified(&x, &a, all, |x, item| Ok(ops::compare(x, item)?.map(|o| op.holds(o))))?
        }
        F::MatchAnyAll(op, all) => {
            let (x, a) = (next(), next());
            let Some(a) = array(a) else { return Ok(Value::Null) };
            quantified(&x, &a, all, |x, item| match (x, item) {
                (Value::Text(s), Value::Text(p)) => op.test(s, p).map(Some),
                _ => Ok(None),
            })?
        }
        F::Slice(has_lo, has_hi) => {
            let Some(a) = array(next()) else { return Ok(Value::Null) };
            let lo = if has_lo { next() } else { Value::Int4(i32::MIN) };
            let hi = if has_hi { next() } else { Value::Int4(i32::MAX) };
            let (Some(lo), Some(hi)) = (int(&lo), int(&hi)) else { return Ok(Value::Null) };
            one_dim(&a, "slicing")?;
            let Some(d) = a.dims.first() else { return Ok(Value::Array(Box::new(a))) };
            let first = lo.max(d.lower as i64);
            let last = hi.min(d.lower as i64 + d.len as i64 - 1);
            let items: Vec<Value> = if first > last {
                Vec::new()
            } else {
                a.items[(first - d.lower as i64) as usize..=(last - d.lower as i64) as usize]
                    .to_vec()
            };
            ArrayValue::new(a.elem, items).into_value()
        }
        F::Cat => {
            let (x, y) = (array(next()), array(next()));
            match (x, y) {
                (None, None) => Value::Null,
                (Some(x), None) => x.into_value(),
                (None, Some(y)) => y.into_value(),
                (Some(x), Some(y)) => cat(x, y)?,
            }
        }
        F::Append | F::Prepend => {
            let (first, second) = (next(), next());
            let (arr, item) = if f == F::Append { (first, second) } else { (second, first) };
            let Value::Array(a) = arr else {
                if arr.is_null() {
                    return Ok(Value::Null);
                }
                bail!(DatatypeMismatch, "argument must be an array");
            };
            let mut a = *a;
            one_dim(&a, "appending")?;
            if a.items.is_empty() {
                return Ok(ArrayValue::new(a.elem, vec![item]).into_value());
            }
            if f == F::Append {
                a.items.push(item);
                a.dims[0].len += 1;
            } else {
                // The lower bound stays (PostgreSQL readjusts it after prepending).
                a.items.insert(0, item);
                a.dims[0].len += 1;
            }
            a.into_value()
        }
        F::Contains | F::ContainedBy | F::Overlaps => {
            let (Some(x), Some(y)) = (array(next()), array(next())) else {
                return Ok(Value::Null);
            };
            let (x, y) = if f == F::ContainedBy { (y, x) } else { (x, y) };
            // NULL elements never match anything.
            let found = |v: &Value| {
                !v.is_null()
                    && x.items.iter().any(|e| {
                        ops::compare(e, v).ok().flatten() == Some(std::cmp::Ordering::Equal)
                    })
            };
            Value::Bool(if f == F::Overlaps {
                y.items.iter().any(found)
            } else {
                y.items.iter().all(found)
            })
        }
        F::Length | F::Lower | F::Upper => {
            let (Some(a), Some(d)) = (array(next()), int(&next())) else {
                return Ok(Value::Null);
            };
            let Some(dim) = usize::try_from(d - 1).ok().and_then(|i| a.dims.get(i)) else {
                return Ok(Value::Null);
            };
            Value::Int4(match f {
                F::Length => dim.len,
                F::Lower => dim.lower,
                _ => dim.lower + dim.len - 1,
            })
        }
        F::Ndims => match array(next()) {
            Some(a) if a.ndims() > 0 => Value::Int4(a.ndims() as i32),
            _ => Value::Null,
        },
        F::Dims => match array(next()) {
            Some(a) if a.ndims() > 0 => Value::Text(
                a.dims.iter().map(|d| format!("[{}:{}]", d.lower, d.lower + d.len - 1)).collect(),
            ),
            _ => Value::Null,
        },
        F::Fill(elem_oid) => {
            let value = next();
            let (dims, lower) = (next(), next());
            let bounds = |v: &Value| -> Result<Option<Vec<i64>>> {
                let Value::Array(a) = v else { return Ok(None) };
                if a.dims.len() > 1 {
                    bail!(ArraySubscriptError, "wrong number of array subscripts");
                }
                let mut out = Vec::with_capacity(a.items.len());
                for x in &a.items {
                    match int(x) {
                        Some(i) => out.push(i),
                        None => bail!(NullValueNotAllowed, "dimension values cannot be null"),
                    }
                }
                Ok(Some(out))
            };
            let Some(dims) = bounds(&dims)? else {
                bail!(NullValueNotAllowed, "dimension array or low bound array cannot be null");
            };
            let lower = match (&lower, bounds(&lower)?) {
                (Value::Null, _) => vec![1; dims.len()],
                (_, Some(l)) if l.len() == dims.len() => l,
                _ => {
                    return Err(err!(ArraySubscriptError, "wrong number of array subscripts")
                        .with_detail("Low bound array has different size than dimensions array."))
                }
            };
            if dims.len() > sqltypes::array::MAXDIM {
                bail!(
                    ProgramLimitExceeded,
                    "number of array dimensions ({}) exceeds the maximum allowed ({})",
                    dims.len(),
                    sqltypes::array::MAXDIM
                );
            }
            let elem = value
                .data_type()
                .or_else(|| DataType::from_oid(elem_oid))
                .unwrap_or(DataType::Text);
            if dims.is_empty() || dims.iter().any(|&d| d <= 0) {
                return Ok(sqltypes::array::ArrayValue::new(elem, vec![]).into_value());
            }
            let total = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
            match total {
                Some(n) if n <= sqltypes::array::MAX_ELEMENTS => {
                    let dims = dims
                        .iter()
                        .zip(&lower)
                        .map(|(&len, &lo)| sqltypes::array::Dim {
                            len: len as i32,
                            lower: lo as i32,
                        })
                        .collect();
                    let a = sqltypes::array::ArrayValue {
                        elem,
                        dims,
                        items: vec![value; n],
                        vector: false,
                    };
                    a.into_value()
                }
                _ => bail!(
                    ProgramLimitExceeded,
                    "array size exceeds the maximum allowed ({})",
                    sqltypes::array::MAX_ELEMENTS
                ),
            }
        }
        F::WidthBucket => {
            let (x, thresholds) = (next(), array(next()));
            let Some(a) = thresholds.filter(|_| !x.is_null()) else { return Ok(Value::Null) };
            if a.ndims() > 1 {
                bail!(ArraySubscriptError, "thresholds must be one-dimensional array");
            }
            if a.items.iter().any(Value::is_null) {
                bail!(NullValueNotAllowed, "thresholds array must not contain NULLs");
            }
            // A binary search, as PostgreSQL's: thresholds are taken as sorted.
            let (mut lo, mut hi) = (0, a.items.len());
            while lo < hi {
                let mid = (lo + hi) / 2;
                match ops::compare(&x, &a.items[mid])? {
                    Some(std::cmp::Ordering::Less) => hi = mid,
                    _ => lo = mid + 1,
                }
            }
            Value::Int4(lo as i32)
        }
        F::Cardinality => match array(next()) {
            Some(a) => Value::Int4(a.items.len() as i32),
            None => Value::Null,
        },
        F::ToString => {
            let (a, delim, null) = (array(next()), next(), next());
            let (Some(a), Value::Text(delim)) = (a, delim) else { return Ok(Value::Null) };
            let null = match null {
                Value::Text(s) => Some(s),
                _ => None,
            };
            let mut parts = Vec::new();
            for v in &a.items {
                match (v.is_null(), &null) {
                    (false, _) => parts.push(text::to_text(v)),
                    (true, Some(n)) => parts.push(n.clone()),
                    (true, None) => {}
                }
            }
            Value::Text(parts.join(&delim))
        }
        F::FromString => {
            let (s, delim, null) = (next(), next(), next());
            match split_string(&s, &delim, &null) {
                Some(items) => ArrayValue::new(DataType::Text, items).into_value(),
                None => Value::Null,
            }
        }
        F::Position | F::Positions => {
            let (a, x, start) = (array(next()), next(), next());
            let Some(a) = a else { return Ok(Value::Null) };
            one_dim(&a, "searching")?;
            let lower = a.dims.first().map(|d| d.lower as i64).unwrap_or(1);
            let from = int(&start).unwrap_or(lower);
            let hits = a
                .items
                .iter()
                .enumerate()
                .map(|(i, v)| (i as i64 + lower, v))
                .filter(|(i, v)| *i >= from && same(v, &x))
                .map(|(i, _)| Value::Int4(i as i32));
            if f == F::Position {
                hits.into_iter().next().unwrap_or(Value::Null)
            } else {
                ArrayValue::new(DataType::Int4, hits.collect()).into_value()
            }
        }
        F::Remove | F::Replace => {
            let (a, from) = (array(next()), next());
            let to = if f == F::Replace { Some(next()) } else { None };
            let Some(a) = a else { return Ok(Value::Null) };
            one_dim(&a, "removing elements")?;
            let lower = a.dims.first().map(|d| d.lower).unwrap_or(1);
            let items: Vec<Value> = match &to {
                None => a.items.into_iter().filter(|v| !same(v, &from)).collect(),
                Some(t) => a
                    .items
                    .into_iter()
                    .map(|v| if same(&v, &from) { t.clone() } else { v })
                    .collect(),
            };
            let mut out = ArrayValue::new(a.elem, items);
            if let Some(d) = out.dims.first_mut() {
                d.lower = lower;
            }
            out.into_value()
        }
        F::Trim => {
            let (Some(a), Some(n)) = (array(next()), int(&next())) else {
                return Ok(Value::Null);
            };
            let len = a.dims.first().map(|d| d.len as i64).unwrap_or(0);
            if n < 0 || n > len {
                bail!(
                    ArraySubscriptError,
                    "number of elements to trim must be between 0 and {len}"
                );
            }
            one_dim(&a, "trim_array")?;
            let keep = (len - n) as usize;
            let mut items = a.items;
            items.truncate(keep);
            ArrayValue::new(a.elem, items).into_value()
        }
    })
}

/// array_cat of two non-NULL arrays: same dimensions concatenate along the
/// first; one dimension fewer appends or prepends as a sub-array.
fn cat(x: ArrayValue, y: ArrayValue) -> Result<Value> {
    if x.items.is_empty() {
        return Ok(y.into_value());
    }
    if y.items.is_empty() {
        return Ok(x.into_value());
    }
    let mismatch = || {
        err!(ArraySubscriptError, "cannot concatenate incompatible arrays").with_detail(format!(
            "Arrays of {} and {} dimensions are not compatible for concatenation.",
            x.ndims(),
            y.ndims()
        ))
    };
    let mut out = x.clone();
    if x.ndims() == y.ndims() {
        if x.dims[1..].iter().map(|d| d.len).ne(y.dims[1..].iter().map(|d| d.len)) {
            return Err(mismatch());
        }
        out.dims[0].len += y.dims[0].len;
        out.items.extend(y.items);
    } else if x.ndims() == y.ndims() + 1 {
        if x.dims[1..].iter().map(|d| d.len).ne(y.dims.iter().map(|d| d.len)) {
            return Err(mismatch());
        }
        out.dims[0].len += 1;
        out.items.extend(y.items);
    } else if x.ndims() + 1 == y.ndims() {
        if y.dims[1..].iter().map(|d| d.len).ne(x.dims.iter().map(|d| d.len)) {
            return Err(mismatch());
        }
        out = y.clone();
        out.dims[0].len += 1;
        let mut items = x.items;
        items.extend(y.items);
        out.items = items;
    } else {
        return Err(mismatch());
    }
    Ok(out.into_value())
}

/// string_to_array's and string_to_table's split: `s` cut at `delim` (into
/// characters when it is NULL), with pieces equal to `null` made NULL; None
/// when `s` is NULL.
pub fn split_string(s: &Value, delim: &Value, null: &Value) -> Option<Vec<Value>> {
    let Value::Text(s) = s else { return None };
    let parts: Vec<String> = match delim {
        _ if s.is_empty() => Vec::new(),
        Value::Null => s.chars().map(String::from).collect(),
        Value::Text(d) if d.is_empty() => vec![s.clone()],
        Value::Text(d) => s.split(d.as_str()).map(String::from).collect(),
        _ => return None,
    };
    let items = parts
        .into_iter()
        .map(|p| match null {
            Value::Text(n) if *n == p => Value::Null,
            _ => Value::Text(p),
        })
        .collect();
    Some(items)
}
