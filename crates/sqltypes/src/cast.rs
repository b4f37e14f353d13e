//! Casts between types, and the implicit-conversion rules used to type
//! operators and assignments.
//!
//! Numeric types form PostgreSQL's promotion chain int2 < int4 < int8 <
//! numeric < float8; string types meet at text; an `unknown` literal adopts
//! the other side's type.

use crate::numeric::Numeric;
use crate::text::{parse_text, to_text};
use crate::{datetime, err, DataType, Result, Value};

fn rank(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int2 => 1,
        DataType::Int4 => 2,
        DataType::Int8 => 3,
        DataType::Numeric(_) => 4,
        DataType::Float8 => 5,
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
        _ if a.is_string() && b.is_string() => Some(T::Text),
        _ => match (rank(a), rank(b)) {
            (Some(x), Some(y)) => Some(if x >= y { strip(a) } else { strip(b) }),
            _ => match (a, b) {
                (T::Date, T::Timestamp) | (T::Timestamp, T::Date) => Some(T::Timestamp),
                (T::Date | T::Timestamp, T::TimestampTz)
                | (T::TimestampTz, T::Date | T::Timestamp) => Some(T::TimestampTz),
                _ if a.oid() == b.oid() => Some(strip(a)),
                _ => None,
            },
        },
    }
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
    match (rank(from), rank(to)) {
        (Some(a), Some(b)) => a <= b,
        _ => from == to || *from == DataType::Unknown || (from.is_string() && to.is_string()),
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
        (Value::Text(s), T::Char(n)) => {
            let mut t: String = s.chars().take(*n as usize).collect();
            let len = t.chars().count();
            t.extend(std::iter::repeat_n(' ', *n as usize - len));
            Value::Text(t)
        }
        (Value::Text(s), _) => parse_text(to, &s)?,
        (v, T::Text | T::Varchar(_) | T::Char(_)) => {
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
        // The session time zone is UTC, so these are the same instant.
        (Value::Timestamp(t), T::TimestampTz) => Value::TimestampTz(t),
        (Value::TimestampTz(t), T::Timestamp) => Value::Timestamp(t),
        (Value::Timestamp(t) | Value::TimestampTz(t), T::Date) => {
            Value::Date(datetime::timestamp_to_date(t))
        }
        (Value::Date(d), T::Timestamp) => Value::Timestamp(datetime::date_to_timestamp(d)?),
        (Value::Date(d), T::TimestampTz) => Value::TimestampTz(datetime::date_to_timestamp(d)?),
        (
            v @ (Value::Timestamp(_)
            | Value::TimestampTz(_)
            | Value::Date(_)
            | Value::Bool(_)
            | Value::Bytea(_)),
            t,
        ) if v.data_type().map(|d| d.oid() == t.oid()).unwrap_or(false) => v,
        (v, t) => {
            let from = v.data_type().map(|d| d.to_string()).unwrap_or_default();
            return Err(err!(CannotCoerce, "cannot cast type {from} to {t}"));
        }
    })
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

    #[test]
    fn int_casts_check_range() {
        assert_eq!(cast(Value::Int8(5), &DataType::Int2).ok(), Some(Value::Int2(5)));
        let e = cast(Value::Int8(1 << 40), &DataType::Int4).expect_err("range");
        assert_eq!(e.message, "integer out of range");
        assert_eq!(cast(Value::Float8(2.5), &DataType::Int4).ok(), Some(Value::Int4(2)));
        assert_eq!(
            cast(Value::Numeric(Numeric::parse("2.5").expect("n")), &DataType::Int4).ok(),
            Some(Value::Int4(3))
        );
    }

    #[test]
    fn text_casts() {
        assert_eq!(cast(Value::Text("12".into()), &DataType::Int4).ok(), Some(Value::Int4(12)));
        assert_eq!(cast(Value::Int4(12), &DataType::Text).ok(), Some(Value::Text("12".into())));
        assert_eq!(cast(Value::Bool(true), &DataType::Text).ok(), Some(Value::Text("true".into())));
        assert_eq!(
            cast(Value::Text("abcd".into()), &DataType::Varchar(Some(2))).ok(),
            Some(Value::Text("ab".into()))
        );
    }

    #[test]
    fn common_types() {
        assert_eq!(common_type(&DataType::Int4, &DataType::Int8), Some(DataType::Int8));
        assert_eq!(
            common_type(&DataType::Int4, &DataType::Numeric(Some((5, 2)))),
            Some(DataType::Numeric(None))
        );
        assert_eq!(common_type(&DataType::Unknown, &DataType::Date), Some(DataType::Date));
        assert_eq!(common_type(&DataType::Int4, &DataType::Text), None);
    }
}
