//! Operators on values: comparison, arithmetic and concatenation.
//!
//! Operands of different numeric types are promoted along int2 < int4 < int8
//! < numeric < float8 first, so `1 = 1.0` compares equal and `int4 + int8`
//! is computed in int8, with PostgreSQL's overflow errors (22003) and
//! division-by-zero errors (22012). Float NaN equals NaN and sorts above every other value.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::cast::{cast, common_type};
use crate::numeric::Numeric;
use crate::{datetime, err, DataType, Result, Value};

fn type_name(v: &Value) -> String {
    v.data_type().map(|t| t.to_string()).unwrap_or_else(|| "unknown".into())
}

fn no_operator(op: &str, a: &Value, b: &Value) -> crate::ErrorReport {
    err!(UndefinedFunction, "operator does not exist: {} {op} {}", type_name(a), type_name(b))
}

/// Converts both operands to their common type (see [`common_type`]).
fn promote(op: &str, a: &Value, b: &Value) -> Result<(Value, Value)> {
    let (Some(ta), Some(tb)) = (a.data_type(), b.data_type()) else {
        return Ok((a.clone(), b.clone()));
    };
    if ta == tb {
        return Ok((a.clone(), b.clone()));
    }
    match common_type(&ta, &tb) {
        Some(t) => Ok((cast(a.clone(), &t)?, cast(b.clone(), &t)?)),
        None => Err(no_operator(op, a, b)),
    }
}

fn float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// SQL comparison: None if either side is NULL.
pub fn compare(a: &Value, b: &Value) -> Result<Option<Ordering>> {
    if a.is_null() || b.is_null() {
        return Ok(None);
    }
    // Same-type operands (the common case, and every sort) compare in place.
    if let Some(o) = same_type_cmp(a, b) {
        return Ok(Some(o));
    }
    let (x, y) = promote("=", a, b)?;
    same_type_cmp(&x, &y).map(Some).ok_or_else(|| no_operator("=", a, b))
}

/// Compares two non-NULL values of the same kind; None for different kinds.
fn same_type_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int2(x), Value::Int2(y)) => x.cmp(y),
        (Value::Int4(x), Value::Int4(y)) => x.cmp(y),
        (Value::Int8(x), Value::Int8(y)) => x.cmp(y),
        (Value::Float8(x), Value::Float8(y)) => float_cmp(*x, *y),
        (Value::Float4(x), Value::Float4(y)) => float_cmp(*x as f64, *y as f64),
        (Value::Time(x), Value::Time(y)) => x.cmp(y),
        (Value::TimeTz(x, zx), Value::TimeTz(y, zy)) => {
            crate::timeofday::timetz_cmp((*x, *zx), (*y, *zy))
        }
        (Value::Interval(x), Value::Interval(y)) => x.span().cmp(&y.span()),
        (Value::Uuid(x), Value::Uuid(y)) => x.cmp(y),
        (Value::Inet(x), Value::Inet(y)) => x.compare(y),
        (Value::Enum(x), Value::Enum(y)) if x.ty == y.ty => {
            float_cmp(x.sort() as f64, y.sort() as f64)
        }
        (Value::Jsonb(x), Value::Jsonb(y)) => x.compare(y),
        (Value::Numeric(x), Value::Numeric(y)) => x.cmp(y),
        // char(n) values are stored blank-padded to n and literals compared
        // with them are padded at bind time, so byte order is right for all
        // string types (C collation).
        (Value::Text(x), Value::Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Timestamp(x), Value::Timestamp(y))
        | (Value::TimestampTz(x), Value::TimestampTz(y)) => x.cmp(y),
        (Value::Date(x), Value::Date(y)) => x.cmp(y),
        (Value::Bytea(x), Value::Bytea(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => crate::array::compare_arrays(x, y)?,
        (Value::Record(x), Value::Record(y)) => crate::record::compare_records(x, y)?,
        (Value::Range(x), Value::Range(y)) if x.kind == y.kind => {
            crate::range::compare_ranges(x, y)
        }
        (Value::Oid(_) | Value::Reg(_), Value::Oid(_) | Value::Reg(_)) => {
            a.as_oid()?.cmp(&b.as_oid()?)
        }
        _ => return None,
    })
}

/// Compares the elements two arrays or records have in common, in order,
/// as `array_cmp` and `record_cmp` do: the first pair that differs decides,
/// a NULL equals a NULL and sorts after any value. None if a pair cannot
/// be compared (different types).
pub fn compare_elements(a: &[Value], b: &[Value]) -> Option<Ordering> {
    for (x, y) in a.iter().zip(b) {
        let o = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => compare(x, y).ok().flatten()?,
        };
        if o != Ordering::Equal {
            return Some(o);
        }
    }
    Some(Ordering::Equal)
}

/// Total order for ORDER BY and grouping: NULLs last, incomparable types by
/// type name (never an error, so sorting cannot fail halfway).
pub fn sort_cmp(a: &Value, b: &Value) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => compare(a, b).ok().flatten().unwrap_or_else(|| {
            let ta = a.data_type().map(|t| t.oid()).unwrap_or(0);
            let tb = b.data_type().map(|t| t.oid()).unwrap_or(0);
            ta.cmp(&tb)
        }),
    }
}

fn int_range_err(t: &DataType) -> crate::ErrorReport {
    match t {
        DataType::Int2 => err!(NumericValueOutOfRange, "smallint out of range"),
        DataType::Int4 => err!(NumericValueOutOfRange, "integer out of range"),
        _ => err!(NumericValueOutOfRange, "bigint out of range"),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl Arith {
    fn symbol(self) -> &'static str {
        match self {
            Arith::Add => "+",
            Arith::Sub => "-",
            Arith::Mul => "*",
            Arith::Div => "/",
            Arith::Rem => "%",
        }
    }
}

fn int_op(op: Arith, x: i64, y: i64, t: &DataType) -> Result<Value> {
    let r = match op {
        Arith::Add => x.checked_add(y),
        Arith::Sub => x.checked_sub(y),
        Arith::Mul => x.checked_mul(y),
        Arith::Div | Arith::Rem if y == 0 => return Err(err!(DivisionByZero, "division by zero")),
        Arith::Div => x.checked_div(y),
        // i64::MIN % -1 overflows in Rust; the answer is 0.
        Arith::Rem => Some(x.checked_rem(y).unwrap_or(0)),
    };
    let r = r.ok_or_else(|| int_range_err(t))?;
    Ok(match t {
        DataType::Int2 => Value::Int2(i16::try_from(r).map_err(|_| int_range_err(t))?),
        DataType::Int4 => Value::Int4(i32::try_from(r).map_err(|_| int_range_err(t))?),
        _ => Value::Int8(r),
    })
}

/// float8 arithmetic with float.h's checks: an infinite result from finite
/// inputs is overflow, a zero result from nonzero inputs underflow.
fn float_op(op: Arith, x: f64, y: f64) -> Result<Value> {
    let overflow = || err!(NumericValueOutOfRange, "value out of range: overflow");
    let underflow = || err!(NumericValueOutOfRange, "value out of range: underflow");
    let r = match op {
        Arith::Add => x + y,
        Arith::Sub => x - y,
        Arith::Mul => x * y,
        Arith::Div if y == 0.0 && !x.is_nan() => {
            return Err(err!(DivisionByZero, "division by zero"))
        }
        Arith::Div => x / y,
        Arith::Rem => {
            return Err(err!(
                UndefinedFunction,
                "operator does not exist: double precision % double precision"
            ))
        }
    };
    let overflowed = match op {
        Arith::Div => r.is_infinite() && !x.is_infinite(),
        _ => r.is_infinite() && !x.is_infinite() && !y.is_infinite(),
    };
    if overflowed {
        return Err(overflow());
    }
    let underflowed = match op {
        Arith::Mul => r == 0.0 && x != 0.0 && y != 0.0,
        Arith::Div => r == 0.0 && x != 0.0 && !y.is_infinite(),
        _ => false,
    };
    if underflowed {
        return Err(underflow());
    }
    Ok(Value::Float8(r))
}

/// `date + integer`, `integer + date`, `date - integer`, `date - date`;
/// None when the operands are not one of these.
fn date_arith(op: Arith, a: &Value, b: &Value) -> Option<Result<Value>> {
    let days = |v: &Value| match v {
        Value::Int2(n) => Some(*n as i64),
        Value::Int4(n) => Some(*n as i64),
        _ => None,
    };
    Some(match (op, a, b) {
        (Arith::Add, Value::Date(d), n) | (Arith::Add, n, Value::Date(d)) => {
            datetime::date_add_days(*d, days(n)?).map(Value::Date)
        }
        (Arith::Sub, Value::Date(d), Value::Date(e)) => {
            datetime::date_diff(*d, *e).map(Value::Int4)
        }
        (Arith::Sub, Value::Date(d), n) => datetime::date_add_days(*d, -days(n)?).map(Value::Date),
        _ => return None,
    })
}

/// The factor of `interval * number` as a float8.
fn factor(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Int2(n) => *n as f64,
        Value::Int4(n) => *n as f64,
        Value::Int8(n) => *n as f64,
        Value::Float4(f) => *f as f64,
        Value::Float8(f) => *f,
        Value::Numeric(n) => n.to_f64(),
        _ => return None,
    })
}

/// Arithmetic with intervals and times of day: `timestamp ± interval`,
/// `timestamp - timestamp`, `date ± interval`, `interval ± interval`,
/// `interval * number`, `interval / number`, `time ± interval`,
/// `time - time`, `date + time`; None when the operands are not one of
/// these.
fn temporal_arith(op: Arith, a: &Value, b: &Value) -> Option<Result<Value>> {
    use crate::interval::{timestamp_add, timestamp_diff};
    use crate::timeofday::time_add;
    use Value as V;
    let neg = |iv: &crate::Interval| iv.neg();
    Some(match (op, a, b) {
        (Arith::Add, V::Interval(x), V::Interval(y)) => x.add(y).map(V::Interval),
        (Arith::Sub, V::Interval(x), V::Interval(y)) => x.sub(y).map(V::Interval),
        (Arith::Add, V::Timestamp(t), V::Interval(iv))
        | (Arith::Add, V::Interval(iv), V::Timestamp(t)) => timestamp_add(*t, iv).map(V::Timestamp),
        (Arith::Add, V::TimestampTz(t), V::Interval(iv))
        | (Arith::Add, V::Interval(iv), V::TimestampTz(t)) => {
            timestamp_add(*t, iv).map(V::TimestampTz)
        }
        (Arith::Sub, V::Timestamp(t), V::Interval(iv)) => {
            neg(iv).and_then(|n| timestamp_add(*t, &n)).map(V::Timestamp)
        }
        (Arith::Sub, V::TimestampTz(t), V::Interval(iv)) => {
            neg(iv).and_then(|n| timestamp_add(*t, &n)).map(V::TimestampTz)
        }
        (Arith::Add, V::Date(d), V::Interval(iv)) | (Arith::Add, V::Interval(iv), V::Date(d)) => {
            datetime::date_to_timestamp(*d).and_then(|t| timestamp_add(t, iv)).map(V::Timestamp)
        }
        (Arith::Sub, V::Date(d), V::Interval(iv)) => datetime::date_to_timestamp(*d)
            .and_then(|t| neg(iv).and_then(|n| timestamp_add(t, &n)))
            .map(V::Timestamp),
        (Arith::Sub, V::Timestamp(x), V::Timestamp(y))
        | (Arith::Sub, V::TimestampTz(x), V::TimestampTz(y)) => {
            timestamp_diff(*x, *y).map(V::Interval)
        }
        (Arith::Mul, V::Interval(iv), n) | (Arith::Mul, n, V::Interval(iv)) => {
            iv.mul(factor(n)?).map(V::Interval)
        }
        (Arith::Div, V::Interval(iv), n) => iv.div(factor(n)?).map(V::Interval),
        (Arith::Add, V::Time(t), V::Interval(iv)) | (Arith::Add, V::Interval(iv), V::Time(t)) => {
            Ok(V::Time(time_add(*t, iv.micros)))
        }
        (Arith::Sub, V::Time(t), V::Interval(iv)) => Ok(V::Time(time_add(*t, -iv.micros))),
        (Arith::Add, V::TimeTz(t, z), V::Interval(iv))
        | (Arith::Add, V::Interval(iv), V::TimeTz(t, z)) => {
            Ok(V::TimeTz(time_add(*t, iv.micros), *z))
        }
        (Arith::Sub, V::TimeTz(t, z), V::Interval(iv)) => {
            Ok(V::TimeTz(time_add(*t, -iv.micros), *z))
        }
        (Arith::Sub, V::Time(x), V::Time(y)) => {
            Ok(V::Interval(crate::Interval { months: 0, days: 0, micros: x - y }))
        }
        (Arith::Add, V::Date(d), V::Time(t)) | (Arith::Add, V::Time(t), V::Date(d)) => {
            datetime::date_to_timestamp(*d)
                .map(|ts| V::Timestamp(if datetime::timestamp_is_finite(ts) { ts + t } else { ts }))
        }
        _ => return None,
    })
}

/// The result type of a temporal operator (see `temporal_arith`): what
/// binding gives `a op b` when one side is an interval, a time of day or a
/// timestamp minus a timestamp. `op` is `+`, `-`, `*` or `/`.
pub fn temporal_result_type(op: char, a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType as T;
    let num = |t: &DataType| t.is_numeric();
    Some(match (op, a, b) {
        ('+' | '-', T::Interval, T::Interval) => T::Interval,
        ('+', T::Interval, t @ (T::Timestamp | T::TimestampTz | T::Time | T::TimeTz)) => t.clone(),
        ('+' | '-', t @ (T::Timestamp | T::TimestampTz | T::Time | T::TimeTz), T::Interval) => {
            t.clone()
        }
        ('+', T::Interval, T::Date) | ('+' | '-', T::Date, T::Interval) => T::Timestamp,
        ('-', T::Timestamp, T::Timestamp) | ('-', T::TimestampTz, T::TimestampTz) => T::Interval,
        ('-', T::Time, T::Time) => T::Interval,
        ('+', T::Date, T::Time) | ('+', T::Time, T::Date) => T::Timestamp,
        ('*', T::Interval, n) | ('*', n, T::Interval) if num(n) => T::Interval,
        ('/', T::Interval, n) if num(n) => T::Interval,
        _ => return None,
    })
}

fn arith(op: Arith, a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    if let Some(r) = date_arith(op, a, b) {
        return r;
    }
    if let Some(r) = temporal_arith(op, a, b) {
        return r;
    }
    if matches!(a, Value::Date(_)) || matches!(b, Value::Date(_)) {
        return Err(no_operator(op.symbol(), a, b));
    }
    match (a, b) {
        (Value::Int4(x), Value::Int4(y)) => {
            return int_op(op, *x as i64, *y as i64, &DataType::Int4)
        }
        (Value::Int8(x), Value::Int8(y)) => return int_op(op, *x, *y, &DataType::Int8),
        _ => {}
    }
    let (x, y) = promote(op.symbol(), a, b)?;
    Ok(match (&x, &y) {
        (Value::Int2(x), Value::Int2(y)) => int_op(op, *x as i64, *y as i64, &DataType::Int2)?,
        (Value::Int4(x), Value::Int4(y)) => int_op(op, *x as i64, *y as i64, &DataType::Int4)?,
        (Value::Int8(x), Value::Int8(y)) => int_op(op, *x, *y, &DataType::Int8)?,
        (Value::Float8(_), Value::Float8(_)) if op == Arith::Rem => {
            return Err(no_operator("%", a, b))
        }
        (Value::Float8(x), Value::Float8(y)) => float_op(op, *x, *y)?,
        (Value::Float4(_), Value::Float4(_)) if op == Arith::Rem => {
            return Err(no_operator("%", a, b))
        }
        (Value::Float4(x), Value::Float4(y)) => match float_op(op, *x as f64, *y as f64)? {
            Value::Float8(r) => {
                let f = r as f32;
                if f.is_infinite() && r.is_finite() {
                    return Err(err!(NumericValueOutOfRange, "value out of range: overflow"));
                }
                if f == 0.0 && r != 0.0 {
                    return Err(err!(NumericValueOutOfRange, "value out of range: underflow"));
                }
                Value::Float4(f)
            }
            other => other,
        },
        (Value::Numeric(x), Value::Numeric(y)) => Value::Numeric(
            match op {
                Arith::Add => x.add(y),
                Arith::Sub => x.sub(y),
                Arith::Mul => x.mul(y),
                Arith::Div => x.div(y)?,
                Arith::Rem => x.rem(y)?,
            }
            .checked()?,
        ),
        _ => return Err(no_operator(op.symbol(), a, b)),
    })
}

/// `a + b`
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    arith(Arith::Add, a, b)
}

/// `a - b`
pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    arith(Arith::Sub, a, b)
}

/// `a * b`
pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    arith(Arith::Mul, a, b)
}

/// `a / b` (integer division truncates toward zero)
pub fn div(a: &Value, b: &Value) -> Result<Value> {
    arith(Arith::Div, a, b)
}

/// `a % b`
pub fn rem(a: &Value, b: &Value) -> Result<Value> {
    arith(Arith::Rem, a, b)
}

/// An integer bitwise operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `&`
    And,
    /// `|`
    Or,
    /// `#`
    Xor,
    /// `<<` (the count is int4)
    Shl,
    /// `>>` (arithmetic)
    Shr,
}

impl BitOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BitOp::And => "&",
            BitOp::Or => "|",
            BitOp::Xor => "#",
            BitOp::Shl => "<<",
            BitOp::Shr => ">>",
        }
    }
}

/// `a & b`, `a | b`, `a # b` on integers of one type, `a << n`, `a >> n`
/// (shift counts wrap as PostgreSQL's C shifts do on x86-64).
pub fn bit(op: BitOp, a: &Value, b: &Value) -> Result<Value> {
    macro_rules! on {
        ($x:expr, $y:expr, $n:expr) => {
            match op {
                BitOp::And => $x & $y,
                BitOp::Or => $x | $y,
                BitOp::Xor => $x ^ $y,
                BitOp::Shl => $x.wrapping_shl($n as u32),
                BitOp::Shr => $x.wrapping_shr($n as u32),
            }
        };
    }
    let count = |v: &Value| match v {
        Value::Int4(n) => *n as i64,
        Value::Int2(n) => *n as i64,
        Value::Int8(n) => *n,
        _ => 0,
    };
    Ok(match (a, b) {
        (Value::Int2(x), Value::Int2(y)) => Value::Int2(on!(x, y, *y)),
        (Value::Int4(x), Value::Int4(y)) => Value::Int4(on!(x, y, *y)),
        (Value::Int8(x), Value::Int8(y)) => Value::Int8(on!(x, y, *y)),
        (Value::Int2(x), n) if matches!(op, BitOp::Shl | BitOp::Shr) => {
            Value::Int2(on!(x, x, count(n)))
        }
        (Value::Int8(x), n) if matches!(op, BitOp::Shl | BitOp::Shr) => {
            Value::Int8(on!(x, x, count(n)))
        }
        (Value::Int4(x), n) if matches!(op, BitOp::Shl | BitOp::Shr) => {
            Value::Int4(on!(x, x, count(n)))
        }
        _ => {
            let t = |v: &Value| v.data_type().map(|t| t.to_string()).unwrap_or_default();
            return Err(err!(
                UndefinedFunction,
                "operator does not exist: {} {} {}",
                t(a),
                op.symbol(),
                t(b)
            ));
        }
    })
}

/// `-a`
pub fn neg(a: &Value) -> Result<Value> {
    Ok(match a {
        Value::Null => Value::Null,
        Value::Int2(i) => {
            Value::Int2(i.checked_neg().ok_or_else(|| int_range_err(&DataType::Int2))?)
        }
        Value::Int4(i) => {
            Value::Int4(i.checked_neg().ok_or_else(|| int_range_err(&DataType::Int4))?)
        }
        Value::Int8(i) => {
            Value::Int8(i.checked_neg().ok_or_else(|| int_range_err(&DataType::Int8))?)
        }
        Value::Float8(f) => Value::Float8(-f),
        Value::Float4(f) => Value::Float4(-f),
        Value::Interval(iv) => Value::Interval(iv.neg()?),
        Value::Numeric(n) => Value::Numeric(n.neg()),
        Value::Text(s) => Value::Numeric(Numeric::parse(s)?.neg()),
        other => {
            let t = other.data_type().map(|t| t.to_string()).unwrap_or_default();
            return Err(err!(UndefinedFunction, "operator does not exist: - {t}"));
        }
    })
}

/// `a || b` on strings (non-strings are converted to text first).
pub fn concat(a: &Value, b: &Value) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let text = |v: &Value| -> Result<String> {
        match cast(v.clone(), &DataType::Text)? {
            Value::Text(s) => Ok(s),
            _ => Ok(String::new()),
        }
    };
    let (x, y) = (text(a)?, text(b)?);
    Ok(Value::Text(x + &y))
}

/// Feeds `v` into `h` for hash-based GROUP BY, DISTINCT and joins. Values
/// that [`compare`] calls equal hash alike when they have the same type, and
/// also across integer widths (int2/int4/int8 are hashed as i64), so a key
/// built from mixed integer columns still groups correctly; -0.0 and 0.0
/// hash alike, all NaNs hash alike, and numerics ignore their display scale
/// (1.0 and 1.00). Values of different non-integer types are not expected
/// to meet in one key column and may hash differently even when equal
/// (1::int4 and 1.0::numeric).
pub fn hash_value<H: Hasher>(v: &Value, h: &mut H) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Int2(i) => (2u8, *i as i64).hash(h),
        Value::Int4(i) => (2u8, *i as i64).hash(h),
        Value::Int8(i) => (2u8, *i).hash(h),
        Value::Float4(f) => hash_value(&Value::Float8(*f as f64), h),
        Value::Time(t) => (11u8, t).hash(h),
        Value::Enum(e) => (14u8, e.oid).hash(h),
        Value::TimeTz(t, z) => (12u8, t - *z as i64 * 1_000_000, z).hash(h),
        Value::Interval(iv) => (13u8, iv.span()).hash(h),
        Value::Uuid(u) => (14u8, u).hash(h),
        // inet and cidr of the same address and length are equal.
        Value::Inet(i) => (17u8, i.addr, i.bits).hash(h),
        Value::Json(s) => (15u8, s.as_bytes()).hash(h),
        Value::Jsonb(j) => {
            16u8.hash(h);
            hash_json(j, h)
        }
        Value::Float8(f) => {
            let bits = if f.is_nan() {
                f64::NAN.to_bits()
            } else if *f == 0.0 {
                0
            } else {
                f.to_bits()
            };
            (3u8, bits).hash(h)
        }
        Value::Numeric(n) => {
            4u8.hash(h);
            n.hash(h)
        }
        Value::Text(s) => (5u8, s.as_bytes()).hash(h),
        Value::Timestamp(t) => (6u8, t).hash(h),
        Value::TimestampTz(t) => (7u8, t).hash(h),
        Value::Date(d) => (8u8, d).hash(h),
        Value::Bytea(b) => (9u8, b.as_slice()).hash(h),
        // OIDs hash as integers, so joins of oid with int columns group alike.
        Value::Oid(_) | Value::Reg(_) => (2u8, v.as_oid().unwrap_or(0) as i64).hash(h),
        Value::Array(a) => {
            (10u8, &a.dims).hash(h);
            for item in &a.items {
                hash_value(item, h);
            }
        }
        Value::Record(r) => {
            (17u8, r.values.len()).hash(h);
            for v in &r.values {
                hash_value(v, h);
            }
        }
        // Equal ranges have equal bounds (canonical form).
        Value::Range(r) => {
            (18u8, r.flags()).hash(h);
            for b in [r.lower(), r.upper()].into_iter().flatten() {
                hash_value(b.value.as_ref().unwrap_or(&Value::Null), h);
            }
        }
    }
}

/// Hashes jsonb so that values [`crate::Json::compare`] calls equal hash
/// alike (numbers ignore their display scale).
fn hash_json<H: Hasher>(j: &crate::Json, h: &mut H) {
    use crate::Json;
    match j {
        Json::Null => 0u8.hash(h),
        Json::Bool(b) => (1u8, b).hash(h),
        Json::Number(n) => {
            2u8.hash(h);
            n.hash(h)
        }
        Json::String(s) => (3u8, s.as_bytes()).hash(h),
        Json::Array(items) => {
            (4u8, items.len()).hash(h);
            items.iter().for_each(|v| hash_json(v, h));
        }
        Json::Object(pairs) => {
            (5u8, pairs.len()).hash(h);
            for (k, v) in pairs {
                k.as_bytes().hash(h);
                hash_json(v, h);
            }
        }
    }
}

/// A 64-bit hash of a whole key (see [`hash_value`]).
pub fn hash_row(values: &[Value]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for v in values {
        hash_value(v, &mut h);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{parse_text, to_text};
    use DataType as T;

    /// `'a'::ta <op> 'b'::tb` as PostgreSQL 15 prints it: result type and
    /// value, or the error.
    fn pg(ta: T, a: &str, op: &str, tb: T, b: &str) -> String {
        let x = parse_text(&ta, a).expect("left operand");
        let y = parse_text(&tb, b).expect("right operand");
        let r = match op {
            "+" => add(&x, &y),
            "-" => sub(&x, &y),
            "*" => mul(&x, &y),
            "/" => div(&x, &y),
            "%" => rem(&x, &y),
            "||" => concat(&x, &y),
            _ => unreachable!("test operator {op}"),
        };
        match r {
            Ok(v) => format!(
                "{}|{}",
                v.data_type().map(|t| t.to_string()).unwrap_or_default(),
                to_text(&v)
            ),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    fn cmp(ta: T, a: &str, tb: T, b: &str) -> Option<Ordering> {
        let x = parse_text(&ta, a).expect("left operand");
        let y = parse_text(&tb, b).expect("right operand");
        compare(&x, &y).expect("comparable")
    }

    #[test]
    fn cross_type_comparison() {
        assert_eq!(cmp(T::Int4, "1", T::Int8, "1"), Some(Ordering::Equal));
        assert_eq!(cmp(T::Int4, "1", T::Numeric(None), "1.5"), Some(Ordering::Less));
        assert_eq!(cmp(T::Numeric(None), "1.0", T::Int4, "1"), Some(Ordering::Equal));
        assert_eq!(cmp(T::Int4, "1", T::Float8, "NaN"), Some(Ordering::Less));
        assert_eq!(cmp(T::Numeric(None), "NaN", T::Float8, "NaN"), Some(Ordering::Equal));
        assert_eq!(cmp(T::Float8, "NaN", T::Float8, "Infinity"), Some(Ordering::Greater));
        assert_eq!(cmp(T::Float8, "-0", T::Float8, "0"), Some(Ordering::Equal));
        assert_eq!(cmp(T::Text, "a ", T::Text, "a"), Some(Ordering::Greater));
        assert_eq!(cmp(T::Text, "B", T::Text, "a"), Some(Ordering::Less));
        assert_eq!(
            cmp(T::Date, "2024-01-02", T::Timestamp, "2024-01-02 00:00:01"),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp(T::Timestamp, "2024-01-02", T::TimestampTz, "2024-01-02"),
            Some(Ordering::Equal)
        );
        assert_eq!(cmp(T::Bytea, "\\x01", T::Bytea, "\\x0100"), Some(Ordering::Less));
        assert_eq!(compare(&Value::Null, &Value::Int4(1)).expect("null"), None);
        let e = compare(&Value::Int4(1), &Value::Text("a".into())).expect_err("no operator");
        assert_eq!(e.message, "operator does not exist: integer = text");
    }

    #[test]
    fn sort_order() {
        let mut v = [
            Value::Null,
            Value::Float8(f64::NAN),
            Value::Float8(1.0),
            Value::Float8(f64::NEG_INFINITY),
            Value::Float8(f64::INFINITY),
        ];
        v.sort_by(sort_cmp);
        let printed: Vec<String> = v.iter().map(to_text).collect();
        assert_eq!(printed, ["-Infinity", "1", "Infinity", "NaN", ""]);
        assert!(v[4].is_null());
    }

    #[test]
    fn integer_arithmetic() {
        assert_eq!(pg(T::Int4, "2147483647", "+", T::Int4, "1"), "22003 integer out of range");
        assert_eq!(pg(T::Int2, "32767", "+", T::Int2, "1"), "22003 smallint out of range");
        assert_eq!(
            pg(T::Int8, "-9223372036854775808", "-", T::Int8, "1"),
            "22003 bigint out of range"
        );
        assert_eq!(pg(T::Int4, "-2147483648", "/", T::Int4, "-1"), "22003 integer out of range");
        assert_eq!(pg(T::Int8, "-9223372036854775808", "%", T::Int8, "-1"), "bigint|0");
        assert_eq!(pg(T::Int4, "1", "/", T::Int4, "0"), "22012 division by zero");
        assert_eq!(pg(T::Int2, "1", "%", T::Int2, "0"), "22012 division by zero");
        assert_eq!(pg(T::Int4, "7", "/", T::Int4, "-2"), "integer|-3");
        assert_eq!(pg(T::Int4, "-7", "%", T::Int4, "2"), "integer|-1");
        assert_eq!(pg(T::Int4, "1", "+", T::Int8, "2"), "bigint|3");
        assert_eq!(pg(T::Int2, "-7", "*", T::Int4, "7"), "integer|-49");
        assert_eq!(
            neg(&Value::Int4(i32::MIN)).expect_err("overflow").message,
            "integer out of range"
        );
    }

    #[test]
    fn numeric_and_float_arithmetic() {
        let n = T::Numeric(None);
        assert_eq!(pg(T::Int4, "7", "+", n.clone(), "1.50"), "numeric|8.50");
        assert_eq!(pg(T::Int4, "7", "/", n.clone(), "2"), "numeric|3.5000000000000000");
        assert_eq!(pg(n.clone(), "10.5", "%", n.clone(), "3.25"), "numeric|0.75");
        assert_eq!(pg(n.clone(), "1", "/", n.clone(), "0"), "22012 division by zero");
        assert_eq!(pg(n.clone(), "1.50", "*", T::Float8, "2"), "double precision|3");
        assert_eq!(pg(T::Int4, "1", "/", T::Float8, "3"), "double precision|0.3333333333333333");
        assert_eq!(
            pg(T::Float8, "1e308", "*", T::Float8, "10"),
            "22003 value out of range: overflow"
        );
        assert_eq!(
            pg(T::Float8, "1e-300", "*", T::Float8, "1e-300"),
            "22003 value out of range: underflow"
        );
        assert_eq!(
            pg(n.clone(), "1e-20", "/", T::Float8, "1e308"),
            "22003 value out of range: underflow"
        );
        assert_eq!(pg(T::Float8, "1", "/", T::Float8, "0"), "22012 division by zero");
        assert_eq!(pg(T::Float8, "NaN", "/", T::Int4, "0"), "double precision|NaN");
        assert_eq!(pg(T::Float8, "Infinity", "-", T::Float8, "Infinity"), "double precision|NaN");
        assert_eq!(
            pg(T::Float8, "1.5", "%", T::Int4, "2"),
            "42883 operator does not exist: double precision % integer"
        );
    }

    #[test]
    fn date_arithmetic() {
        assert_eq!(pg(T::Date, "2024-01-02", "+", T::Int4, "30"), "date|2024-02-01");
        assert_eq!(pg(T::Int4, "5", "+", T::Date, "2024-01-01"), "date|2024-01-06");
        assert_eq!(pg(T::Date, "2024-01-02", "+", T::Int2, "1"), "date|2024-01-03");
        assert_eq!(pg(T::Date, "2024-01-02", "-", T::Int4, "30"), "date|2023-12-03");
        assert_eq!(pg(T::Date, "2024-03-01", "-", T::Date, "2024-02-01"), "integer|29");
        assert_eq!(pg(T::Date, "2000-02-29", "+", T::Int4, "365"), "date|2001-02-28");
        assert_eq!(pg(T::Date, "infinity", "+", T::Int4, "1"), "date|infinity");
        assert_eq!(pg(T::Date, "5874897-12-31", "+", T::Int4, "1"), "22008 date out of range");
        assert_eq!(
            pg(T::Date, "infinity", "-", T::Date, "2024-01-01"),
            "22008 cannot subtract infinite dates"
        );
        assert_eq!(
            pg(T::Date, "2024-01-02", "+", T::Int8, "1"),
            "42883 operator does not exist: date + bigint"
        );
    }

    #[test]
    fn concatenation() {
        assert_eq!(pg(T::Text, "abc", "||", T::Int4, "5"), "text|abc5");
        assert_eq!(pg(T::Numeric(None), "1.50", "||", T::Text, "x"), "text|1.50x");
        assert_eq!(pg(T::Text, "a", "||", T::Bool, "t"), "text|atrue");
        assert_eq!(pg(T::Date, "2024-01-02", "||", T::Text, ""), "text|2024-01-02");
        assert_eq!(concat(&Value::Null, &Value::Text("a".into())).expect("null"), Value::Null);
    }

    #[test]
    fn hashes_agree_with_equality() {
        let h = |v: Value| hash_row(&[v]);
        assert_eq!(h(Value::Int2(7)), h(Value::Int8(7)));
        assert_eq!(h(Value::Float8(-0.0)), h(Value::Float8(0.0)));
        assert_eq!(h(Value::Float8(f64::NAN)), h(Value::Float8(-f64::NAN)));
        let n = |s: &str| Value::Numeric(crate::Numeric::parse(s).expect("numeric"));
        assert_eq!(h(n("1.50")), h(n("1.5")));
        assert_ne!(h(Value::Int4(1)), h(Value::Int4(2)));
        assert_ne!(
            hash_row(&[Value::Null, Value::Int4(1)]),
            hash_row(&[Value::Int4(1), Value::Null])
        );
    }
}
