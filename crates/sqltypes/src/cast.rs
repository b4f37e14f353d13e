//! Casts between types, and the implicit-conversion rules used to type
//! operators and assignments.
//!
//! Numeric types form PostgreSQL's promotion chain int2 < int4 < int8 <
//! numeric < float8; string types meet at text; an `unknown` literal adopts
//! the other side's type.

use crate::numeric::Numeric;
use crate::text::{parse_text, to_text};
use crate::{datetime, err, DataType, RangeKind, Result, Value};

fn rank(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int2 => 1,
        DataType::Int4 => 2,
        DataType::Int8 => 3,
        DataType::Numeric(_) => 4,
        DataType::Float4 => 5,
        DataType::Float8 => 6,
        _ => return None,
    })
}

/// The type two operands are converted to, if they can meet.
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType as T;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (T::Unknown, x) | (x, T::Unknown) => Some(x.clone()),
        (T::Array(x), T::Array(y)) => common_type(x, y).map(|e| e.array_of()),
        (T::Array(_), _) | (_, T::Array(_)) => None,
        // OIDs meet small integers as oid, bigints as bigint; the OID alias
        // types meet each other and oid as oid.
        (T::Oid | T::Reg(_), T::Int2 | T::Int4)
        | (T::Int2 | T::Int4, T::Oid | T::Reg(_))
        | (T::Oid | T::Reg(_), T::Oid | T::Reg(_)) => Some(T::Oid),
        (T::Oid | T::Reg(_), T::Int8) | (T::Int8, T::Oid | T::Reg(_)) => Some(T::Int8),
        _ if a.is_string() && b.is_string() => Some(T::Text),
        // real meets other numbers as double precision, the preferred type.
        (T::Float4, t) | (t, T::Float4) if t.is_numeric() => Some(T::Float8),
        _ => match (rank(a), rank(b)) {
            (Some(x), Some(y)) => Some(if x >= y { strip(a) } else { strip(b) }),
            _ => match (a, b) {
                (T::Date, T::Timestamp) | (T::Timestamp, T::Date) => Some(T::Timestamp),
                (T::Date | T::Timestamp, T::TimestampTz)
                | (T::TimestampTz, T::Date | T::Timestamp) => Some(T::TimestampTz),
                (T::Time, T::TimeTz) | (T::TimeTz, T::Time) => Some(T::TimeTz),
                (T::Inet, T::Cidr) | (T::Cidr, T::Inet) => Some(T::Inet),
                _ if a.oid() == b.oid() => Some(strip(a)),
                _ => None,
            },
        },
    }
}

/// True for oid and its alias types.
fn is_oid(t: &DataType) -> bool {
    matches!(t, DataType::Oid | DataType::Reg(_))
}

fn strip(t: &DataType) -> DataType {
    match t {
        DataType::Numeric(_) => DataType::Numeric(None),
        other => other.clone(),
    }
}

/// True if a value of type `from` may be stored into a column of type `to`
/// (PostgreSQL's assignment casts among our types).
pub fn can_assign(from: &DataType, to: &DataType) -> bool {
    if from == to || *from == DataType::Unknown {
        return true;
    }
    if let (DataType::Array(x), DataType::Array(y)) = (from, to) {
        return can_assign(x, y);
    }
    // An anonymous record converts field by field (or fails as it runs).
    if let (DataType::Record(f), DataType::Record(_)) = (from, to) {
        return f.named.is_none();
    }
    if matches!((from, to), (DataType::Json, DataType::Jsonb) | (DataType::Jsonb, DataType::Json)) {
        return true;
    }
    if is_oid(from) || is_oid(to) {
        return can_implicit_cast(from, to) || (is_oid(to) && rank(from).is_some());
    }
    if rank(from).is_some() && rank(to).is_some() {
        return true;
    }
    if to.is_string() {
        // Anything can be assigned to text via its output function.
        return true;
    }
    if from.is_string() {
        return false;
    }
    common_type(from, to).is_some()
}

/// True if `from` converts to `to` implicitly in expressions.
pub fn can_implicit_cast(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    if let (T::Array(x), T::Array(y)) = (from, to) {
        return can_implicit_cast(x, y);
    }
    if is_oid(from) || is_oid(to) {
        return from == to
            || *from == T::Unknown
            || matches!((from, to), (T::Int2 | T::Int4 | T::Int8, _) | (_, T::Oid | T::Int8))
                && !(*from == T::Int8 && is_oid(to));
    }
    match (rank(from), rank(to)) {
        (Some(a), Some(b)) => a <= b,
        _ => {
            from == to
                || *from == T::Unknown
                || (from.is_string() && to.is_string())
                || matches!(
                    (from, to),
                    (T::Date, T::Timestamp | T::TimestampTz)
                        | (T::Timestamp, T::TimestampTz)
                        | (T::Time, T::TimeTz | T::Interval)
                )
        }
    }
}

fn out_of_range(to: &DataType) -> crate::ErrorReport {
    let name = match to {
        DataType::Int2 => "smallint",
        DataType::Int4 => "integer",
        _ => "bigint",
    };
    err!(NumericValueOutOfRange, "{name} out of range")
}

fn to_int(v: i128, to: &DataType) -> Result<Value> {
    Ok(match to {
        DataType::Int2 => Value::Int2(i16::try_from(v).map_err(|_| out_of_range(to))?),
        DataType::Int4 => Value::Int4(i32::try_from(v).map_err(|_| out_of_range(to))?),
        _ => Value::Int8(i64::try_from(v).map_err(|_| out_of_range(to))?),
    })
}

/// Explicit cast (`CAST(v AS to)`, `v::to`). NULL stays NULL.
pub fn cast(v: Value, to: &DataType) -> Result<Value> {
    use DataType as T;
    if v.is_null() || *to == T::Unknown {
        return Ok(v);
    }
    Ok(match (v, to) {
        (Value::Array(a), T::Int2Vector | T::OidVector) => {
            let elem = to.elem().cloned().unwrap_or(T::Int2);
            let Value::Array(mut v) = cast(Value::Array(a), &elem.array_of())? else {
                return Err(err!(CannotCoerce, "cannot cast to {to}"));
            };
            v.vector = true;
            if let Some(d) = v.dims.first_mut() {
                d.lower = 0;
            }
            Value::Array(v)
        }
        (Value::Array(a), T::Array(e)) => {
            let mut a = *a;
            a.vector = false;
            if a.elem != **e {
                for item in &mut a.items {
                    *item = cast(std::mem::replace(item, Value::Null), e)?;
                }
                a.elem = (**e).clone();
            }
            Value::Array(Box::new(a))
        }
        (Value::Record(r), T::Record(t)) if r.ty != *t && !t.is_pseudo() => {
            crate::record::convert(*r, t)?
        }
        (Value::Enum(e), T::Enum(t)) if e.ty == *t => Value::Enum(e),
        (Value::Range(r), T::Range(k)) if r.kind == *k => Value::Range(r),
        (Value::Oid(o), T::Oid) => Value::Oid(o),
        (Value::Reg(r), T::Oid) => Value::Oid(r.oid),
        (Value::Reg(r), T::Reg(_)) if Some(to.clone()) == Value::Reg(r.clone()).data_type() => {
            Value::Reg(r)
        }
        // Another kind, or from an integer: the name needs the catalog, so
        // the SQL layer resolves it; here the number stands in.
        (
            v @ (Value::Reg(_) | Value::Oid(_) | Value::Int2(_) | Value::Int4(_) | Value::Int8(_)),
            T::Reg(_),
        ) => {
            let oid = match cast(v, &T::Oid)? {
                Value::Oid(o) => o,
                _ => 0,
            };
            let T::Reg(kind) = *to else { unreachable!("matched above") };
            Value::Reg(Box::new(crate::RegValue { kind, oid, name: oid.to_string() }))
        }
        (Value::Int2(i), T::Oid) => Value::Oid(i as i32 as u32),
        (Value::Int4(i), T::Oid) => Value::Oid(i as u32),
        (Value::Int8(i), T::Oid) => Value::Oid(
            u32::try_from(i).map_err(|_| err!(NumericValueOutOfRange, "OID out of range"))?,
        ),
        (Value::Oid(o), T::Int8) => Value::Int8(o as i64),
        (Value::Oid(o), T::Int4) => Value::Int4(o as i32),
        (Value::Reg(r), T::Int8) => Value::Int8(r.oid as i64),
        (Value::Reg(r), T::Int4) => Value::Int4(r.oid as i32),
        (Value::Int2(i), T::Int2 | T::Int4 | T::Int8) => to_int(i as i128, to)?,
        (Value::Int4(i), T::Int2 | T::Int4 | T::Int8) => to_int(i as i128, to)?,
        (Value::Int8(i), T::Int2 | T::Int4 | T::Int8) => to_int(i as i128, to)?,
        (Value::Float8(f), T::Int2 | T::Int4 | T::Int8) => {
            if !f.is_finite() {
                return Err(out_of_range(to));
            }
            let r = f.round_ties_even();
            if !(-1.8e19..=1.8e19).contains(&r) {
                return Err(out_of_range(to));
            }
            to_int(r as i128, to)?
        }
        (Value::Numeric(n), T::Int2 | T::Int4 | T::Int8) => match n.to_i64_round() {
            Some(i) => to_int(i as i128, to)?,
            None if n.is_nan() => {
                return Err(err!(FeatureNotSupported, "cannot convert NaN to {}", to))
            }
            None if n.is_infinite() => {
                return Err(err!(FeatureNotSupported, "cannot convert infinity to {}", to))
            }
            None => return Err(out_of_range(to)),
        },
        (Value::Float4(f), T::Int2 | T::Int4 | T::Int8 | T::Float8) => {
            cast(Value::Float8(f as f64), to)?
        }
        (Value::Float4(f), T::Float4) => Value::Float4(f),
        (Value::Float4(f), T::Numeric(m)) => {
            let n = if f.is_nan() {
                Numeric::NaN
            } else if f.is_infinite() {
                if f > 0.0 {
                    Numeric::PosInf
                } else {
                    Numeric::NegInf
                }
            } else {
                Numeric::parse(&to_text(&Value::Float4(f)))?
            };
            numeric(n, m)?
        }
        (Value::Numeric(n), T::Float4) => {
            let f = n.to_f64() as f32;
            if f.is_infinite() && !n.is_infinite() {
                return Err(err!(NumericValueOutOfRange, "\"{n}\" is out of range for type real"));
            }
            Value::Float4(f)
        }
        (v @ (Value::Int2(_) | Value::Int4(_) | Value::Int8(_)), T::Float4) => {
            match cast(v, &T::Float8)? {
                Value::Float8(f) => to_float4(f)?,
                _ => return Err(err!(CannotCoerce, "cannot cast to real")),
            }
        }
        (Value::Float8(f), T::Float4) => to_float4(f)?,
        (Value::Interval(iv), T::Interval) => Value::Interval(iv),
        (Value::Time(t), T::Interval) => {
            Value::Interval(crate::Interval { months: 0, days: 0, micros: t })
        }
        (Value::Interval(iv), T::Time) => {
            Value::Time(iv.micros.rem_euclid(datetime::USECS_PER_DAY))
        }
        (Value::Timestamp(t) | Value::TimestampTz(t), T::Time)
            if datetime::timestamp_is_finite(t) =>
        {
            Value::Time(t.rem_euclid(datetime::USECS_PER_DAY))
        }
        (Value::TimestampTz(t), T::TimeTz) if datetime::timestamp_is_finite(t) => {
            Value::TimeTz(t.rem_euclid(datetime::USECS_PER_DAY), 0)
        }
        (Value::Time(t), T::TimeTz) => Value::TimeTz(t, 0),
        (Value::TimeTz(t, _), T::Time) => Value::Time(t),
        (Value::Json(s), T::Jsonb) => Value::Jsonb(Box::new(crate::json::parse_jsonb(&s)?)),
        (Value::Jsonb(j), T::Json) => Value::Json(j.to_text()),
        (Value::Jsonb(j), T::Bool) => match *j {
            crate::Json::Bool(b) => Value::Bool(b),
            other => return Err(jsonb_cast_error(&other, to)),
        },
        (Value::Jsonb(j), T::Int2 | T::Int4 | T::Int8 | T::Numeric(_) | T::Float4 | T::Float8) => {
            match *j {
                crate::Json::Number(n) => cast(Value::Numeric(n), to)?,
                other => return Err(jsonb_cast_error(&other, to)),
            }
        }
        (Value::Bool(b), T::Int4) => Value::Int4(b as i32),
        (Value::Int4(i), T::Bool) => Value::Bool(i != 0),
        (Value::Int2(i), T::Float8) => Value::Float8(i as f64),
        (Value::Int4(i), T::Float8) => Value::Float8(i as f64),
        (Value::Int8(i), T::Float8) => Value::Float8(i as f64),
        (Value::Numeric(n), T::Float8) => {
            let f = n.to_f64();
            if f.is_infinite() && !n.is_infinite() {
                return Err(err!(
                    NumericValueOutOfRange,
                    "\"{n}\" is out of range for type double precision"
                ));
            }
            Value::Float8(f)
        }
        (Value::Float8(f), T::Float8) => Value::Float8(f),
        (Value::Int2(i), T::Numeric(m)) => numeric(Numeric::from_i64(i as i64), m)?,
        (Value::Int4(i), T::Numeric(m)) => numeric(Numeric::from_i64(i as i64), m)?,
        (Value::Int8(i), T::Numeric(m)) => numeric(Numeric::from_i64(i), m)?,
        (Value::Float8(f), T::Numeric(m)) => numeric(Numeric::from_f64(f)?, m)?,
        (Value::Numeric(n), T::Numeric(m)) => numeric(n, m)?,
        (Value::Text(s), T::Text) => Value::Text(s),
        (Value::Text(s), T::Varchar(Some(n))) => Value::Text(s.chars().take(*n as usize).collect()),
        (Value::Text(s), T::Varchar(None)) => Value::Text(s),
        (Value::Text(s), T::Char(0)) => Value::Text(s),
        (Value::Text(s), T::Char(n)) => {
            let mut t: String = s.chars().take(*n as usize).collect();
            let len = t.chars().count();
            t.extend(std::iter::repeat_n(' ', *n as usize - len));
            Value::Text(t)
        }
        (Value::Text(s), _) => parse_text(to, &s)?,
        // inet and cidr cast to text as text() writes them: with the length.
        (Value::Inet(i), T::Text | T::Varchar(_) | T::Char(_) | T::Name) => {
            cast(Value::Text(i.text()), to)?
        }
        (v, T::Text | T::Varchar(_) | T::Char(_) | T::Name) => {
            let s = to_text(&v);
            // char(n) output of another type is not padded; bool to text is "true"/"false".
            let s = match v {
                Value::Bool(b) => {
                    if b {
                        "true".to_string()
                    } else {
                        "false".to_string()
                    }
                }
                _ => s,
            };
            cast(Value::Text(s), to)?
        }
        // In UTC (see cast_in for other zones) these are the same instant.
        (Value::Timestamp(t), T::TimestampTz) => Value::TimestampTz(t),
        (Value::TimestampTz(t), T::Timestamp) => Value::Timestamp(t),
        (Value::Timestamp(t) | Value::TimestampTz(t), T::Date) => {
            Value::Date(datetime::timestamp_to_date(t))
        }
        (Value::Date(d), T::Timestamp) => Value::Timestamp(datetime::date_to_timestamp(d)?),
        (Value::Date(d), T::TimestampTz) => Value::TimestampTz(datetime::date_to_timestamp(d)?),
        // inet to cidr keeps the network; cidr to inet the whole value.
        (Value::Inet(i), T::Cidr) => Value::Inet(i.network()),
        (Value::Inet(i), T::Inet) => Value::Inet(crate::inet::Inet { cidr: false, ..i }),
        (
            v @ (Value::Timestamp(_)
            | Value::TimestampTz(_)
            | Value::Date(_)
            | Value::Bool(_)
            | Value::Bytea(_)
            | Value::Time(_)
            | Value::TimeTz(..)
            | Value::Uuid(_)
            | Value::Json(_)
            | Value::Jsonb(_)
            | Value::Record(_)),
            t,
        ) if v.data_type().map(|d| d.oid() == t.oid()).unwrap_or(false) => v,
        (v, t) => {
            let from = v.data_type().map(|d| d.to_string()).unwrap_or_default();
            return Err(err!(CannotCoerce, "cannot cast type {from} to {t}"));
        }
    })
}

/// True if converting `from` to `to` depends on the session time zone
/// (so it must not be folded into a constant when a statement is planned).
pub fn zone_sensitive(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    let zoneless =
        |t: &DataType| matches!(t, T::Timestamp | T::Date | T::Time | T::Unknown) || t.is_string();
    (holds_tz(to) && (zoneless(from) || holds_tz(from)) && from != to)
        || (holds_tz(from) && (zoneless(to) || matches!(to, T::TimeTz)))
        || (*from == T::Time && *to == T::TimeTz)
}

/// True for types whose text form may hold a timestamptz: timestamptz,
/// records, tstzrange, and arrays of them.
fn holds_tz(t: &DataType) -> bool {
    match t {
        DataType::TimestampTz | DataType::Record(_) | DataType::Range(RangeKind::TsTz) => true,
        DataType::Array(e) => holds_tz(e),
        _ => false,
    }
}

/// [`cast`] in a session time zone: timestamptz converts to and from
/// timestamp, date, time, timetz and text through local time in `zone`.
pub fn cast_in(v: Value, to: &DataType, zone: &crate::Zone) -> Result<Value> {
    use DataType as T;
    if zone.is_utc() || v.is_null() {
        return cast(v, to);
    }
    let value_holds_tz = match &v {
        Value::TimestampTz(_) | Value::Record(_) => true,
        Value::Range(r) => r.kind == RangeKind::TsTz,
        Value::Array(a) => holds_tz(&a.elem),
        _ => false,
    };
    Ok(match (v, to) {
        (Value::Timestamp(t), T::TimestampTz) => Value::TimestampTz(zone.local_to_utc(t)),
        (Value::Date(d), T::TimestampTz) => {
            Value::TimestampTz(zone.local_to_utc(datetime::date_to_timestamp(d)?))
        }
        (Value::TimestampTz(t), T::Timestamp | T::Date | T::Time) => {
            cast(Value::Timestamp(zone.utc_to_local(t)), to)?
        }
        (Value::TimestampTz(t), T::TimeTz) if datetime::timestamp_is_finite(t) => {
            let local = zone.utc_to_local(t);
            Value::TimeTz(local.rem_euclid(datetime::USECS_PER_DAY), zone.offset_at(t))
        }
        (Value::Time(t), T::TimeTz) => Value::TimeTz(t, zone.offset_at(datetime::now_micros())),
        (Value::Text(s), t) if holds_tz(t) => crate::text::parse_text_in(t, &s, zone)?,
        (v, T::Text | T::Varchar(_) | T::Char(_) | T::Name) if value_holds_tz => {
            cast(Value::Text(crate::text::to_text_in(&v, zone)), to)?
        }
        (v, _) => cast(v, to)?,
    })
}

/// float8 to float4 with float4's overflow and underflow errors.
fn to_float4(f: f64) -> Result<Value> {
    let r = f as f32;
    if r.is_infinite() && f.is_finite() {
        return Err(err!(NumericValueOutOfRange, "value out of range: overflow"));
    }
    if r == 0.0 && f != 0.0 {
        return Err(err!(NumericValueOutOfRange, "value out of range: underflow"));
    }
    Ok(Value::Float4(r))
}

/// PostgreSQL's error for casting a non-number jsonb to a number type.
fn jsonb_cast_error(j: &crate::Json, to: &DataType) -> crate::ErrorReport {
    let kind = match j {
        crate::Json::Null => "null",
        crate::Json::Bool(_) => "boolean",
        crate::Json::Number(_) => "numeric",
        crate::Json::String(_) => "string",
        crate::Json::Array(_) => "array",
        crate::Json::Object(_) => "object",
    };
    err!(InvalidParameterValue, "cannot cast jsonb {kind} to type {to}")
}

fn numeric(n: Numeric, m: &Option<(u32, u32)>) -> Result<Value> {
    Ok(Value::Numeric(match m {
        Some((p, s)) => n.apply_typmod(*p, *s)?,
        None => n,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::to_text;

    /// `'input'::from::to` as PostgreSQL 15 prints it (or its error).
    fn pg(from: DataType, input: &str, to: DataType) -> String {
        match parse_text(&from, input).and_then(|v| cast(v, &to)) {
            Ok(v) => to_text(&v),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn int_casts_check_range() {
        use DataType::*;
        assert_eq!(pg(Int8, "5", Int2), "5");
        assert_eq!(pg(Int8, "5000000000", Int4), "22003 integer out of range");
        assert_eq!(pg(Int4, "100000", Int2), "22003 smallint out of range");
        assert_eq!(pg(Float8, "9.3e18", Int8), "22003 bigint out of range");
        assert_eq!(pg(Float8, "NaN", Int4), "22003 integer out of range");
        assert_eq!(pg(Float8, "Infinity", Int2), "22003 smallint out of range");
        // float -> int rounds half to even (rint), numeric -> int half away from zero.
        for (f, want) in [("2.5", "2"), ("3.5", "4"), ("-2.5", "-2"), ("0.5", "0"), ("1.5", "2")] {
            assert_eq!(pg(Float8, f, Int4), want, "{f}");
        }
        for (n, want) in [("2.5", "3"), ("-2.5", "-3"), ("0.5", "1"), ("1.49999", "1")] {
            assert_eq!(pg(Numeric(None), n, Int4), want, "{n}");
        }
        assert_eq!(pg(Float8, "32767.4", Int2), "32767");
        assert_eq!(pg(Float8, "32767.5", Int2), "22003 smallint out of range");
        assert_eq!(pg(Numeric(None), "NaN", Int4), "0A000 cannot convert NaN to integer");
        assert_eq!(pg(Numeric(None), "Infinity", Int8), "0A000 cannot convert infinity to bigint");
    }

    #[test]
    fn numeric_and_float_casts() {
        use DataType::*;
        assert_eq!(pg(Float8, "0.1", Numeric(None)), "0.1");
        assert_eq!(pg(Float8, "9.2233720368547758e18", Numeric(None)), "9223372036854780000");
        assert_eq!(pg(Float8, "-Infinity", Numeric(None)), "-Infinity");
        assert_eq!(pg(Float8, "123.456", Numeric(Some((5, 1)))), "123.5");
        assert_eq!(pg(Float8, "Infinity", Numeric(Some((5, 2)))), "22003 numeric field overflow");
        assert_eq!(pg(Numeric(None), "1e400", Float8).split(' ').next(), Some("22003"));
        assert_eq!(
            pg(Numeric(None), "3.14159265358979323846264338327950288", Float8),
            "3.141592653589793"
        );
        assert_eq!(pg(Int4, "7", Numeric(Some((5, 2)))), "7.00");
        assert_eq!(pg(Int8, "9223372036854775807", Float8), "9.223372036854776e+18");
    }

    #[test]
    fn text_casts() {
        use DataType::*;
        assert_eq!(pg(Text, "12", Int4), "12");
        assert_eq!(pg(Text, "  12  ", Int4), "12");
        assert_eq!(pg(Int4, "12", Text), "12");
        assert_eq!(pg(Bool, "true", Text), "true");
        assert_eq!(pg(Bool, "false", Varchar(Some(3))), "fal");
        assert_eq!(pg(Bool, "true", Char(5)), "true ");
        assert_eq!(pg(Text, "abcd", Varchar(Some(2))), "ab");
        assert_eq!(pg(Text, "héllo", Char(2)), "hé");
        assert_eq!(pg(Text, "a", Char(3)), "a  ");
        assert_eq!(pg(Text, "\\x01", Bytea), "\\x01");
        assert_eq!(pg(Text, "ab", Bytea), "\\x6162");
        assert_eq!(pg(Bytea, "\\x0102", Text), "\\x0102");
        assert_eq!(pg(Numeric(None), "1.50", Varchar(Some(3))), "1.5");
        assert_eq!(pg(Text, "abc", Int4), "22P02 invalid input syntax for type integer: \"abc\"");
        assert_eq!(pg(Int4, "-5", Bool), "t");
        assert_eq!(pg(Int4, "0", Bool), "f");
    }

    #[test]
    fn datetime_casts() {
        use DataType::*;
        assert_eq!(pg(Timestamp, "2024-01-02 03:04:05.5", Date), "2024-01-02");
        assert_eq!(pg(Timestamp, "1969-06-01 12:00:00", Date), "1969-06-01");
        assert_eq!(pg(Timestamp, "2024-01-02 03:04:05.5", TimestampTz), "2024-01-02 03:04:05.5+00");
        assert_eq!(pg(TimestampTz, "2024-01-02 03:04:05+05", Timestamp), "2024-01-01 22:04:05");
        assert_eq!(pg(Date, "2024-01-02", Timestamp), "2024-01-02 00:00:00");
        assert_eq!(pg(Date, "infinity", TimestampTz), "infinity");
        assert_eq!(pg(Timestamp, "-infinity", Date), "-infinity");
        assert_eq!(pg(Date, "294277-01-01", Timestamp), "22008 date out of range for timestamp");
        assert_eq!(pg(Date, "2024-01-02", Int4), "42846 cannot cast type date to integer");
        assert_eq!(pg(Timestamp, "infinity", Varchar(Some(5))), "infin");
    }

    #[test]
    fn common_types() {
        use DataType::*;
        assert_eq!(common_type(&Int4, &Int8), Some(Int8));
        assert_eq!(common_type(&Int2, &Int4), Some(Int4));
        assert_eq!(common_type(&Int8, &Float8), Some(Float8));
        assert_eq!(common_type(&Numeric(None), &Float8), Some(Float8));
        assert_eq!(common_type(&Int4, &Numeric(Some((5, 2)))), Some(Numeric(None)));
        assert_eq!(common_type(&Unknown, &Date), Some(Date));
        assert_eq!(common_type(&Varchar(Some(3)), &Char(2)), Some(Text));
        assert_eq!(common_type(&Date, &Timestamp), Some(Timestamp));
        assert_eq!(common_type(&Timestamp, &TimestampTz), Some(TimestampTz));
        assert_eq!(common_type(&Int4, &Text), None);
        assert_eq!(common_type(&Bool, &Int4), None);
    }

    #[test]
    fn implicit_casts() {
        use DataType::*;
        assert!(can_implicit_cast(&Int2, &Int8));
        assert!(can_implicit_cast(&Int8, &Numeric(None)));
        assert!(can_implicit_cast(&Numeric(None), &Float8));
        assert!(!can_implicit_cast(&Float8, &Numeric(None)));
        assert!(!can_implicit_cast(&Int8, &Int4));
        assert!(can_implicit_cast(&Unknown, &Bool));
        assert!(can_implicit_cast(&Char(3), &Text));
        assert!(can_implicit_cast(&Date, &TimestampTz));
        assert!(!can_implicit_cast(&Timestamp, &Date));
        assert!(!can_implicit_cast(&Int4, &Text));
        assert!(can_assign(&Int8, &Int2));
        assert!(can_assign(&Int4, &Text));
        assert!(!can_assign(&Text, &Int4));
    }
}
