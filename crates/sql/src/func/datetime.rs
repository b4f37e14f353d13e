//! Date and time functions: EXTRACT and date_part, date_trunc, age, the
//! justify_* functions, make_date/make_time/make_timestamp/make_interval,
//! to_timestamp(epoch), isfinite. EXTRACT returns numeric and date_part
//! float8, as in PostgreSQL 14+.

use sqltypes::datetime::{self, USECS_PER_DAY, USECS_PER_SEC};
use sqltypes::interval::{self, Interval};
use sqltypes::{DataType, Numeric, Value, Zone};

use super::{float, int};
use crate::error::Result;
use crate::{bail, err};

/// A resolved date/time function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateFunc {
    /// EXTRACT(field FROM x) (numeric) or date_part(field, x) (float8):
    /// arguments are the field name and the source.
    Part(bool),
    /// date_trunc(field, x)
    Trunc,
    /// age(a, b) or age(a) (from midnight today)
    Age,
    /// justify_days(i)
    JustifyDays,
    /// justify_hours(i)
    JustifyHours,
    /// justify_interval(i)
    JustifyInterval,
    /// make_date(y, m, d)
    MakeDate,
    /// make_time(h, m, s)
    MakeTime,
    /// make_timestamp(y, mo, d, h, mi, s)
    MakeTimestamp,
    /// make_timestamptz(y, mo, d, h, mi, s [, zone]): local time in the
    /// zone (the session's when none is given)
    MakeTimestampTz,
    /// make_interval(years, months, weeks, days, hours, mins, secs), any prefix
    MakeInterval,
    /// to_timestamp(epoch seconds)
    ToTimestamp,
    /// isfinite(date | timestamp | interval)
    IsFinite,
    /// to_char(timestamp | timestamptz | interval, format)
    ToChar,
    /// to_char(number, format) (formatting.rs)
    NumberToChar,
    /// to_number(text, format) (formatting.rs)
    ToNumber,
    /// to_date(text, format)
    ToDate,
    /// to_timestamp(text, format)
    ParseTimestamp,
    /// date_bin(stride, source, origin)
    Bin,
}

/// A resolution: function, result type, argument coercions.
pub type Resolved = (DateFunc, DataType, Vec<Option<DataType>>);

/// Resolves a date/time function by name, or None if `name` is not one.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType as T;
    use DateFunc as F;
    let n = args.len();
    let first = args.first().cloned().unwrap_or(T::Unknown);
    let second = args.get(1).cloned().unwrap_or(T::Unknown);
    let text = || Some(T::Text);
    let int = || Some(T::Int4);
    let float = || Some(T::Float8);
    let source = |t: &DataType| match t {
        T::Unknown => T::TimestampTz,
        T::Date => T::Date,
        other => other.clone(),
    };
    Some(Ok(match (name, n) {
        ("date_part" | "extract", 2) => {
            let numeric = name == "extract";
            let src = source(&second);
            // date_part(text, date) goes through timestamp, as in PostgreSQL.
            let src = if !numeric && src == T::Date { T::Timestamp } else { src };
            if !matches!(
                src,
                T::Timestamp | T::TimestampTz | T::Date | T::Time | T::TimeTz | T::Interval
            ) {
                return Some(Err(super::no_such_function(name, args)));
            }
            let ty = if numeric { T::Numeric(None) } else { T::Float8 };
            (F::Part(numeric), ty, vec![text(), Some(src)])
        }
        ("date_trunc", 2) => {
            let src = match source(&second) {
                T::Date => T::TimestampTz,
                t @ (T::Timestamp | T::TimestampTz | T::Interval) => t,
                _ => return Some(Err(super::no_such_function(name, args))),
            };
            (F::Trunc, src.clone(), vec![text(), Some(src)])
        }
        ("age", 1 | 2) => {
            let ty = match (&first, &second) {
                (T::TimestampTz, _) | (_, T::TimestampTz) => T::TimestampTz,
                (T::Unknown, T::Unknown) if n == 1 => T::TimestampTz,
                _ => T::Timestamp,
            };
            (F::Age, T::Interval, vec![Some(ty.clone()), Some(ty)])
        }
        ("justify_days" | "justify_hours" | "justify_interval", 1) => {
            let f = match name {
                "justify_days" => F::JustifyDays,
                "justify_hours" => F::JustifyHours,
                _ => F::JustifyInterval,
            };
            (f, T::Interval, vec![Some(T::Interval)])
        }
        ("make_date", 3) => (F::MakeDate, T::Date, vec![int(); 3]),
        ("make_time", 3) => (F::MakeTime, T::Time, vec![int(), int(), float()]),
        ("make_timestamp", 6) => {
            (F::MakeTimestamp, T::Timestamp, vec![int(), int(), int(), int(), int(), float()])
        }
        ("make_timestamptz", 6 | 7) => {
            let mut args = vec![int(), int(), int(), int(), int(), float()];
            if n == 7 {
                args.push(Some(T::Text));
            }
            (F::MakeTimestampTz, T::TimestampTz, args)
        }
        ("make_interval", 0..=7) => {
            let mut targets = vec![int(); 6];
            targets.push(float());
            (F::MakeInterval, T::Interval, targets)
        }
        ("to_char", 2)
            if matches!(first, T::Timestamp | T::TimestampTz | T::Date | T::Interval) =>
        {
            let src = if first == T::Date { T::Timestamp } else { first.clone() };
            (F::ToChar, T::Text, vec![Some(src), text()])
        }
        ("to_char", 2)
            if matches!(
                first,
                T::Int2 | T::Int4 | T::Int8 | T::Float4 | T::Float8 | T::Numeric(_)
            ) =>
        {
            (F::NumberToChar, T::Text, vec![Some(T::Numeric(None)), text()])
        }
        ("date_bin", 3) => {
            let third = args.get(2).cloned().unwrap_or(T::Unknown);
            let ty = match (&second, &third) {
                (T::Timestamp, _) | (T::Unknown, T::Timestamp) => T::Timestamp,
                _ => T::TimestampTz,
            };
            (F::Bin, ty.clone(), vec![Some(T::Interval), Some(ty.clone()), Some(ty)])
        }
        ("to_timestamp", 1) => (F::ToTimestamp, T::TimestampTz, vec![float()]),
        ("to_timestamp", 2) => (F::ParseTimestamp, T::TimestampTz, vec![text(), text()]),
        ("to_date", 2) => (F::ToDate, T::Date, vec![text(), text()]),
        ("to_number", 2) => (F::ToNumber, T::Numeric(None), vec![text(), text()]),
        ("isfinite", 1) => {
            let t = match first {
                T::Unknown => T::TimestampTz,
                t @ (T::Date | T::Timestamp | T::TimestampTz | T::Interval) => t,
                _ => return Some(Err(super::no_such_function(name, args))),
            };
            (F::IsFinite, T::Bool, vec![Some(t)])
        }
        _ => return None,
    }))
}

/// Evaluates a date/time function (strict: NULL in, NULL out).
pub fn call(f: DateFunc, args: Vec<Value>, txn_time: i64, zone: &Zone) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    let iv = |v: Value| match v {
        Value::Interval(iv) => iv,
        _ => Interval::default(),
    };
    Ok(match f {
        DateFunc::Part(numeric) => {
            let Value::Text(field) = arg(0) else { bail!(DatatypeMismatch, "field must be text") };
            let n = part(&field.to_ascii_lowercase(), &arg(1), zone)?;
            if numeric {
                Value::Numeric(n)
            } else {
                Value::Float8(n.to_f64())
            }
        }
        DateFunc::Trunc => {
            let Value::Text(field) = arg(0) else { bail!(DatatypeMismatch, "field must be text") };
            trunc(&field.to_ascii_lowercase(), arg(1), zone)?
        }
        DateFunc::Age => {
            // timestamptz values count on the session's clock.
            let ts = |v: &Value| match v {
                Value::Timestamp(t) => *t,
                Value::TimestampTz(t) => zone.utc_to_local(*t),
                _ => 0,
            };
            let b = ts(&arg(args.len() - 1));
            let a = if args.len() == 2 {
                ts(&arg(0))
            } else {
                zone.utc_to_local(txn_time).div_euclid(USECS_PER_DAY) * USECS_PER_DAY
            };
            Value::Interval(interval::age(a, b)?)
        }
        DateFunc::JustifyDays => Value::Interval(iv(arg(0)).justify_days()?),
        DateFunc::JustifyHours => Value::Interval(iv(arg(0)).justify_hours()?),
        DateFunc::JustifyInterval => Value::Interval(iv(arg(0)).justify_interval()?),
        DateFunc::MakeDate => Value::Date(make_days(int(&arg(0))?, int(&arg(1))?, int(&arg(2))?)?),
        DateFunc::MakeTime => {
            Value::Time(make_time(int(&arg(0))?, int(&arg(1))?, float(&arg(2))?)?)
        }
        DateFunc::MakeTimestamp | DateFunc::MakeTimestampTz => {
            let days = make_days(int(&arg(0))?, int(&arg(1))?, int(&arg(2))?)? as i64;
            let time = make_time(int(&arg(3))?, int(&arg(4))?, float(&arg(5))?)?;
            let t = days * USECS_PER_DAY + time;
            if !(datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP).contains(&t) {
                bail!(DatetimeFieldOverflow, "timestamp out of range");
            }
            match (f, arg(6)) {
                (DateFunc::MakeTimestamp, _) => Value::Timestamp(t),
                (_, Value::Text(z)) => {
                    Value::TimestampTz(Zone::lookup_or_abbreviation(&z)?.local_to_utc(t))
                }
                _ => Value::TimestampTz(zone.local_to_utc(t)),
            }
        }
        DateFunc::MakeInterval => {
            let mut f = [0i64; 6];
            for (slot, v) in f.iter_mut().zip(&args) {
                *slot = int(v)?;
            }
            let secs = args.get(6).map(float).transpose()?.unwrap_or(0.0);
            let range = || err!(DatetimeFieldOverflow, "interval out of range");
            let months =
                f[0].checked_mul(12).and_then(|m| m.checked_add(f[1])).ok_or_else(range)?;
            let days = f[2].checked_mul(7).and_then(|d| d.checked_add(f[3])).ok_or_else(range)?;
            let micros = (f[4] as f64 * 3600.0 + f[5] as f64 * 60.0 + secs) * 1e6;
            if !micros.is_finite() || micros.abs() >= 9.2e18 {
                return Err(range());
            }
            Value::Interval(Interval {
                months: i32::try_from(months).map_err(|_| range())?,
                days: i32::try_from(days).map_err(|_| range())?,
                micros: micros.round() as i64,
            })
        }
        DateFunc::ToTimestamp => {
            let secs = float(&arg(0))?;
            if secs.is_nan() {
                bail!(InvalidParameterValue, "timestamp cannot be NaN");
            }
            if secs.is_infinite() {
                return Ok(Value::TimestampTz(if secs > 0.0 {
                    datetime::TS_POS_INFINITY
                } else {
                    datetime::TS_NEG_INFINITY
                }));
            }
            let unix_offset = 10_957.0 * 86_400.0;
            let micros = ((secs - unix_offset) * 1e6).round();
            if !(datetime::MIN_TIMESTAMP as f64..datetime::END_TIMESTAMP as f64).contains(&micros) {
                bail!(DatetimeFieldOverflow, "timestamp out of range: \"{secs}\"");
            }
            Value::TimestampTz(micros as i64)
        }
        DateFunc::Bin => {
            let stride = iv(arg(0));
            let (source, origin) = match (arg(1), arg(2)) {
                (Value::Timestamp(s), Value::Timestamp(o)) => (s, o),
                (Value::TimestampTz(s), Value::TimestampTz(o)) => (s, o),
                _ => bail!(DatatypeMismatch, "date_bin takes two timestamps"),
            };
            if stride.months != 0 {
                bail!(
                    FeatureNotSupported,
                    "timestamps cannot be binned into intervals containing months or years"
                );
            }
            let step = stride.days as i128 * USECS_PER_DAY as i128 + stride.micros as i128;
            if step <= 0 {
                bail!(DatetimeFieldOverflow, "stride must be greater than zero");
            }
            if !datetime::timestamp_is_finite(source) || !datetime::timestamp_is_finite(origin) {
                bail!(DatetimeFieldOverflow, "timestamp out of range");
            }
            // The start of the stride-wide bin, counted from origin, that
            // holds source.
            let diff = source as i128 - origin as i128;
            let t = origin as i128 + diff.div_euclid(step) * step;
            let t = i64::try_from(t)
                .ok()
                .filter(|t| (datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP).contains(t))
                .ok_or_else(|| err!(DatetimeFieldOverflow, "timestamp out of range"))?;
            match arg(1) {
                Value::Timestamp(_) => Value::Timestamp(t),
                _ => Value::TimestampTz(t),
            }
        }
        DateFunc::NumberToChar => {
            let (Value::Numeric(n), Value::Text(fmt)) = (arg(0), arg(1)) else {
                bail!(DatatypeMismatch, "to_char takes a number and a format")
            };
            Value::Text(super::formatting::number_to_char(&n, &fmt)?)
        }
        DateFunc::ToNumber => {
            let (Value::Text(input), Value::Text(fmt)) = (arg(0), arg(1)) else {
                bail!(DatatypeMismatch, "to_number takes text and a format")
            };
            super::formatting::to_number(&input, &fmt)?.map_or(Value::Null, Value::Numeric)
        }
        DateFunc::ToDate | DateFunc::ParseTimestamp => {
            let (Value::Text(input), Value::Text(fmt)) = (arg(0), arg(1)) else {
                bail!(DatatypeMismatch, "{f:?} takes text and a format")
            };
            match f {
                DateFunc::ToDate => Value::Date(super::formatting::to_date(&input, &fmt)?),
                _ => Value::TimestampTz(super::formatting::to_timestamp(&input, &fmt, zone)?),
            }
        }
        DateFunc::ToChar => {
            let Value::Text(fmt) = arg(1) else { bail!(DatatypeMismatch, "format must be text") };
            match arg(0) {
                Value::Timestamp(t) | Value::TimestampTz(t)
                    if !datetime::timestamp_is_finite(t) =>
                {
                    Value::Null
                }
                Value::Timestamp(t) => Value::Text(to_char(&Fields::of_timestamp(t, None), &fmt)),
                Value::TimestampTz(t) => {
                    Value::Text(to_char(&Fields::of_timestamp(t, Some(zone)), &fmt))
                }
                Value::Interval(iv) => Value::Text(to_char(&Fields::of_interval(&iv), &fmt)),
                _ => Value::Null,
            }
        }
        DateFunc::IsFinite => Value::Bool(match arg(0) {
            Value::Date(d) => datetime::date_is_finite(d),
            Value::Timestamp(t) | Value::TimestampTz(t) => datetime::timestamp_is_finite(t),
            _ => true,
        }),
    })
}

fn make_days(y: i64, m: i64, d: i64) -> Result<i32> {
    // Negative years are BC (year -1 is 1 BC, astronomical year 0).
    let year = if y < 0 { y + 1 } else { y };
    let valid = y != 0
        && (1..=12).contains(&m)
        && d >= 1
        && d <= datetime::days_in_month(year, m as u32) as i64;
    if !valid {
        bail!(DatetimeFieldOverflow, "date field value out of range: {y}-{m:02}-{d:02}");
    }
    let days = datetime::days_from_civil(year, m as u32, d as u32);
    i32::try_from(days).map_err(|_| err!(DatetimeFieldOverflow, "date out of range"))
}

fn make_time(h: i64, m: i64, s: f64) -> Result<i64> {
    let micros = (s * 1e6).round();
    let ok = (0..=24).contains(&h)
        && (0..60).contains(&m)
        && (0.0..=60e6).contains(&micros)
        && (h * 3600 + m * 60) as f64 * 1e6 + micros <= USECS_PER_DAY as f64;
    if !ok {
        bail!(DatetimeFieldOverflow, "time field value out of range: {h}:{m:02}:{s}");
    }
    Ok((h * 3600 + m * 60) * USECS_PER_SEC + micros as i64)
}

fn num(i: i64) -> Numeric {
    Numeric::from_i64(i)
}

/// Microseconds as seconds (scale 6) or milliseconds (scale 3), keeping
/// every digit as EXTRACT does.
fn scaled(micros: i128, scale: i64) -> Numeric {
    Numeric::from_scaled(micros, scale)
}

fn unsupported(field: &str, ty: &str) -> crate::error::Error {
    err!(FeatureNotSupported, "unit \"{field}\" not supported for type {ty}")
}

/// The ISO 8601 (year, week, weekday 1..7) of a day count.
fn iso_week(days: i64) -> (i64, i64, i64) {
    // 2000-01-01 was a Saturday (ISO weekday 6).
    let isodow = (days + 5).rem_euclid(7) + 1;
    let thursday = days - isodow + 4;
    let (y, _, _) = datetime::civil_from_days(thursday);
    let jan1 = datetime::days_from_civil(y, 1, 1);
    (y, (thursday - jan1) / 7 + 1, isodow)
}

/// One field of a value, as EXTRACT computes it.
fn part(field: &str, v: &Value, zone: &Zone) -> Result<Numeric> {
    let field = match field {
        "years" => "year",
        "months" | "mon" | "mons" => "month",
        "days" => "day",
        "hours" => "hour",
        "minutes" | "min" | "mins" => "minute",
        "seconds" | "sec" | "secs" => "second",
        "us" | "usec" | "usecs" | "microsecond" => "microseconds",
        "ms" | "msec" | "msecs" | "millisecond" => "milliseconds",
        other => other,
    };
    match v {
        Value::Timestamp(t) | Value::TimestampTz(t) => {
            let tz = matches!(v, Value::TimestampTz(_));
            if !datetime::timestamp_is_finite(*t) {
                let inf = if *t > 0 { Numeric::PosInf } else { Numeric::NegInf };
                return Ok(match field {
                    "epoch" | "year" | "isoyear" | "decade" | "century" | "millennium"
                    | "julian" => inf,
                    _ => Numeric::NaN,
                });
            }
            // A timestamptz's fields are those of the session's clock.
            let local = if tz { zone.utc_to_local(*t) } else { *t };
            let east = if tz { zone.offset_at(*t) as i64 } else { 0 };
            let days = local.div_euclid(USECS_PER_DAY);
            let tod = local.rem_euclid(USECS_PER_DAY);
            if let Some(n) = clock_part(field, tod) {
                return Ok(n);
            }
            Ok(match field {
                "epoch" => scaled(*t as i128 + 10_957 * USECS_PER_DAY as i128, 6),
                "julian" => {
                    let jd = days + 2_451_545;
                    num(jd * USECS_PER_DAY + tod).div(&num(USECS_PER_DAY))?
                }
                "timezone" if tz => num(east),
                "timezone_hour" if tz => num(east / 3600),
                "timezone_minute" if tz => num(east / 60 % 60),
                _ => date_part(
                    field,
                    days,
                    if tz { "timestamp with time zone" } else { "timestamp without time zone" },
                )?,
            })
        }
        Value::Date(d) => {
            if !datetime::date_is_finite(*d) {
                let inf = if *d > 0 { Numeric::PosInf } else { Numeric::NegInf };
                return Ok(inf);
            }
            match field {
                "epoch" => Ok(num((*d as i64 + 10_957) * 86_400)),
                "julian" => Ok(num(*d as i64 + 2_451_545)),
                _ => date_part(field, *d as i64, "date"),
            }
        }
        Value::Time(t) | Value::TimeTz(t, _) => {
            let ty = if matches!(v, Value::Time(_)) {
                "time without time zone"
            } else {
                "time with time zone"
            };
            if let Some(n) = clock_part(field, *t) {
                return Ok(n);
            }
            Ok(match field {
                "epoch" => {
                    let offset = match v {
                        Value::TimeTz(_, east) => *east as i128 * 1_000_000,
                        _ => 0,
                    };
                    scaled(*t as i128 - offset, 6)
                }
                "timezone" => match v {
                    Value::TimeTz(_, east) => num(*east as i64),
                    _ => return Err(unsupported(field, ty)),
                },
                "timezone_hour" => match v {
                    Value::TimeTz(_, east) => num(*east as i64 / 3600),
                    _ => return Err(unsupported(field, ty)),
                },
                "timezone_minute" => match v {
                    Value::TimeTz(_, east) => num(*east as i64 / 60 % 60),
                    _ => return Err(unsupported(field, ty)),
                },
                _ => return Err(unsupported(field, ty)),
            })
        }
        Value::Interval(iv) => {
            let t = iv.micros;
            if let Some(n) = clock_part(field, t) {
                return Ok(n);
            }
            Ok(match field {
                "day" => num(iv.days as i64),
                "month" => num(iv.months as i64 % 12),
                "quarter" => num((iv.months as i64 % 12) / 3 + 1),
                "year" => num(iv.months as i64 / 12),
                "decade" => num(iv.months as i64 / 120),
                "century" => num(iv.months as i64 / 1200),
                "millennium" => num(iv.months as i64 / 12000),
                "epoch" => {
                    let years = iv.months as i128 / 12;
                    let months = iv.months as i128 % 12;
                    // 365.25 days a year, 30 a month, in microseconds.
                    let micros = years * 36_525 * USECS_PER_DAY as i128 / 100
                        + months * 30 * USECS_PER_DAY as i128
                        + iv.days as i128 * USECS_PER_DAY as i128
                        + t as i128;
                    scaled(micros, 6)
                }
                _ => return Err(unsupported(field, "interval")),
            })
        }
        other => bail!(
            UndefinedFunction,
            "function extract(unknown, {}) does not exist",
            other.data_type().map(|t| t.to_string()).unwrap_or_default()
        ),
    }
}

/// The clock fields (hour through microseconds) of a time of day or an
/// interval's microseconds.
fn clock_part(field: &str, micros: i64) -> Option<Numeric> {
    Some(match field {
        "hour" => num(micros / 3_600_000_000),
        "minute" => num(micros / 60_000_000 % 60),
        "second" => scaled((micros % 60_000_000) as i128, 6),
        "milliseconds" => scaled((micros % 60_000_000) as i128, 3),
        "microseconds" => num(micros % 60_000_000),
        _ => return None,
    })
}

/// The calendar fields of a day count (for timestamps and dates).
fn date_part(field: &str, days: i64, ty: &str) -> Result<Numeric> {
    let (y, m, d) = datetime::civil_from_days(days);
    // Years before 1 are shown BC: astronomical 0 is 1 BC.
    let shown_year = if y > 0 { y } else { y - 1 };
    Ok(match field {
        "year" => num(shown_year),
        "month" => num(m as i64),
        "day" => num(d as i64),
        "quarter" => num((m as i64 - 1) / 3 + 1),
        "dow" => num((days + 6).rem_euclid(7)),
        "isodow" => num(iso_week(days).2),
        "doy" => num(days - datetime::days_from_civil(y, 1, 1) + 1),
        "week" => num(iso_week(days).1),
        "isoyear" => {
            let iy = iso_week(days).0;
            num(if iy > 0 { iy } else { iy - 1 })
        }
        "decade" => num(if y >= 0 { y / 10 } else { -((8 - (y - 1)) / 10) }),
        "century" => num(if y > 0 { (y + 99) / 100 } else { -((99 - (y - 1)) / 100) }),
        "millennium" => num(if y > 0 { (y + 999) / 1000 } else { -((999 - (y - 1)) / 1000) }),
        _ => return Err(unsupported(field, ty)),
    })
}

/// date_trunc(field, x); a timestamptz truncates on the session's clock.
fn trunc(field: &str, v: Value, zone: &Zone) -> Result<Value> {
    match v {
        Value::Timestamp(t) | Value::TimestampTz(t) => {
            let tz = matches!(v, Value::TimestampTz(_));
            if !datetime::timestamp_is_finite(t) {
                return Ok(v);
            }
            let t = if tz { zone.utc_to_local(t) } else { t };
            let days = t.div_euclid(USECS_PER_DAY);
            let tod = t.rem_euclid(USECS_PER_DAY);
            let (y, m, _) = datetime::civil_from_days(days);
            let at = |days: i64, tod: i64| days * USECS_PER_DAY + tod;
            let r = match field {
                "microseconds" => t,
                "milliseconds" => at(days, tod - tod % 1000),
                "second" => at(days, tod - tod % USECS_PER_SEC),
                "minute" => at(days, tod - tod % 60_000_000),
                "hour" => at(days, tod - tod % 3_600_000_000),
                "day" => at(days, 0),
                "week" => at(days - (iso_week(days).2 - 1), 0),
                "month" => at(datetime::days_from_civil(y, m, 1), 0),
                "quarter" => at(datetime::days_from_civil(y, (m - 1) / 3 * 3 + 1, 1), 0),
                "year" => at(datetime::days_from_civil(y, 1, 1), 0),
                "decade" => at(datetime::days_from_civil(y.div_euclid(10) * 10, 1, 1), 0),
                "century" => {
                    let c =
                        if y > 0 { (y - 1) / 100 * 100 + 1 } else { -((99 - y) / 100) * 100 + 1 };
                    at(datetime::days_from_civil(c, 1, 1), 0)
                }
                "millennium" => {
                    let c = if y > 0 {
                        (y - 1) / 1000 * 1000 + 1
                    } else {
                        -((999 - y) / 1000) * 1000 + 1
                    };
                    at(datetime::days_from_civil(c, 1, 1), 0)
                }
                _ => {
                    let ty =
                        if tz { "timestamp with time zone" } else { "timestamp without time zone" };
                    return Err(unsupported(field, ty));
                }
            };
            Ok(if tz { Value::TimestampTz(zone.local_to_utc(r)) } else { Value::Timestamp(r) })
        }
        Value::Interval(iv) => {
            let t = iv.micros;
            let mut r = iv;
            match field {
                "microseconds" => {}
                "milliseconds" => r.micros = t - t % 1000,
                "second" => r.micros = t - t % USECS_PER_SEC,
                "minute" => r.micros = t - t % 60_000_000,
                "hour" => r.micros = t - t % 3_600_000_000,
                "day" => r.micros = 0,
                "month" => (r.micros, r.days) = (0, 0),
                "quarter" => (r.micros, r.days, r.months) = (0, 0, iv.months - iv.months % 3),
                "year" => (r.micros, r.days, r.months) = (0, 0, iv.months - iv.months % 12),
                "decade" => (r.micros, r.days, r.months) = (0, 0, iv.months - iv.months % 120),
                "century" => (r.micros, r.days, r.months) = (0, 0, iv.months - iv.months % 1200),
                "millennium" => {
                    (r.micros, r.days, r.months) = (0, 0, iv.months - iv.months % 12000)
                }
                _ => return Err(unsupported(field, "interval")),
            }
            Ok(Value::Interval(r))
        }
        other => Ok(other),
    }
}

/// The fields to_char formats.
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
    /// Days since 2000-01-01 (None for intervals: no weekday or week).
    days: Option<i64>,
    /// A timestamptz's zone abbreviation and offset (seconds east).
    tz: Option<(String, i32)>,
}

impl Fields {
    /// A timestamp's fields; with a zone, a timestamptz's in that zone.
    fn of_timestamp(t: i64, zone: Option<&Zone>) -> Fields {
        let tz = zone.map(|z| (z.abbrev_at(t), z.offset_at(t)));
        let t = zone.map_or(t, |z| z.utc_to_local(t));
        let f = interval::fields(t);
        Fields {
            year: f[0],
            month: f[1],
            day: f[2],
            hour: f[3],
            minute: f[4],
            second: f[5],
            micros: f[6],
            days: Some(t.div_euclid(USECS_PER_DAY)),
            tz,
        }
    }

    fn of_interval(iv: &Interval) -> Fields {
        let t = iv.micros;
        Fields {
            year: iv.months as i64 / 12,
            month: iv.months as i64 % 12,
            day: iv.days as i64,
            hour: t / 3_600_000_000,
            minute: t / 60_000_000 % 60,
            second: t / 1_000_000 % 60,
            micros: t % 1_000_000,
            days: None,
            tz: None,
        }
    }
}

/// The ordinal suffix of `n` (`st`, `nd`, `rd`, `th`), upper-case with
/// `upper`.
pub(super) fn ordinal(n: i64, upper: bool) -> &'static str {
    let s = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    match (upper, s) {
        (false, s) => s,
        (true, "st") => "ST",
        (true, "nd") => "ND",
        (true, "rd") => "RD",
        _ => "TH",
    }
}

/// Cases a lower-case name as the pattern is cased: `MONTH` upper,
/// `Month` capitalized, `month` lower.
fn cased(name: &str, pat: &str) -> String {
    let mut chars = pat.chars();
    let (a, b) = (chars.next().unwrap_or('M'), chars.next().unwrap_or('m'));
    if a.is_ascii_uppercase() && b.is_ascii_uppercase() {
        name.to_uppercase()
    } else if a.is_ascii_uppercase() {
        let mut c = name.chars();
        c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
    } else {
        name.to_string()
    }
}

/// to_char for dates, timestamps and intervals: the template patterns of
/// PostgreSQL's formatting.c that apps use (see the match below), with the
/// FM prefix, TH/th suffixes, quoted text and backslash escapes.
fn to_char(f: &Fields, fmt: &str) -> String {
    const PATTERNS: &[&str] = &[
        "HH24", "HH12", "HH", "MI", "SSSSS", "SSSS", "SS", "MS", "US", "A.M.", "P.M.", "a.m.",
        "p.m.", "AM", "PM", "am", "pm", "IYYY", "YYYY", "Y,YYY", "YYY", "YY", "Y", "MONTH",
        "Month", "month", "MON", "Mon", "mon", "MM", "DAY", "Day", "day", "DY", "Dy", "dy", "IDDD",
        "DDD", "DD", "ID", "D", "IW", "WW", "W", "Q", "J", "TZ", "tz", "OF", "CC",
    ];
    let mut out = String::new();
    let mut rest = fmt;
    while !rest.is_empty() {
        if let Some(q) = rest.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            out.push_str(&q[..end]);
            rest = q.get(end + 1..).unwrap_or("");
            continue;
        }
        if let Some(e) = rest.strip_prefix('\\') {
            let c = e.chars().next().map(char::len_utf8).unwrap_or(0);
            out.push_str(&e[..c]);
            rest = &e[c..];
            continue;
        }
        let (fm, body) = match rest.strip_prefix("FM").or_else(|| rest.strip_prefix("fm")) {
            Some(b) => (true, b),
            None => (false, rest),
        };
        // Number patterns match in any case (`dd`, `yyyy`); names and
        // meridian markers only as cased.
        let numeric = |p: &str| {
            !matches!(p.as_bytes()[0], b'A' | b'P' | b'a' | b'p' | b'T' | b't' | b'O')
                && p.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                && !p.starts_with("MON")
                && !p.starts_with("DAY")
                && !p.starts_with("DY")
        };
        let found = PATTERNS.iter().find(|p| {
            body.starts_with(*p)
                || (numeric(p) && body.get(..p.len()).is_some_and(|b| b.eq_ignore_ascii_case(p)))
        });
        let Some(pat) = found else {
            let c = rest.chars().next().map(char::len_utf8).unwrap_or(1);
            out.push_str(&rest[..c]);
            rest = &rest[c..];
            continue;
        };
        let mut after = &body[pat.len()..];
        let num = |n: i64, width: usize| {
            if fm {
                n.to_string()
            } else if n < 0 {
                format!("-{:0width$}", -n, width = width)
            } else {
                format!("{:0width$}", n, width = width)
            }
        };
        let name = |n: &str| if fm { n.to_string() } else { format!("{n:<9}") };
        let hour12 = if f.hour % 12 == 0 { 12 } else { f.hour % 12 };
        let pm = f.hour >= 12;
        let iso = f.days.map(iso_week);
        let dow = f.days.map(|d| (d + 6).rem_euclid(7)).unwrap_or(0);
        let doy = f.days.map(|d| d - datetime::days_from_civil(f.year, 1, 1) + 1).unwrap_or(0);
        let year = if f.year > 0 || f.days.is_none() { f.year } else { 1 - f.year };
        let mut value: Option<i64> = None;
        let text = match *pat {
            "HH24" => {
                value = Some(f.hour);
                num(f.hour, 2)
            }
            "HH12" | "HH" => {
                value = Some(hour12);
                num(hour12, 2)
            }
            "MI" => num(f.minute, 2),
            "SS" => num(f.second, 2),
            "SSSS" | "SSSSS" => (f.hour * 3600 + f.minute * 60 + f.second).to_string(),
            "MS" => num(f.micros / 1000, 3),
            "US" => num(f.micros, 6),
            "AM" | "PM" => (if pm { "PM" } else { "AM" }).to_string(),
            "am" | "pm" => (if pm { "pm" } else { "am" }).to_string(),
            "A.M." | "P.M." => (if pm { "P.M." } else { "A.M." }).to_string(),
            "a.m." | "p.m." => (if pm { "p.m." } else { "a.m." }).to_string(),
            "YYYY" => {
                value = Some(year);
                num(year, 4)
            }
            "IYYY" => num(iso.map(|i| i.0).unwrap_or(year), 4),
            "Y,YYY" => format!("{},{:03}", year / 1000, year % 1000),
            "YYY" => num(year % 1000, 3),
            "YY" => num(year % 100, 2),
            "Y" => num(year % 10, 1),
            "MONTH" | "Month" | "month" => {
                name(&cased(datetime::MONTHS[(f.month.clamp(1, 12) - 1) as usize], pat))
            }
            "MON" | "Mon" | "mon" => {
                cased(&datetime::MONTHS[(f.month.clamp(1, 12) - 1) as usize][..3], pat)
            }
            "MM" => {
                value = Some(f.month);
                num(f.month, 2)
            }
            "DAY" | "Day" | "day" => name(&cased(datetime::WEEKDAYS[dow as usize], pat)),
            "DY" | "Dy" | "dy" => cased(&datetime::WEEKDAYS[dow as usize][..3], pat),
            "DDD" => {
                value = Some(doy);
                num(doy, 3)
            }
            "IDDD" => num(iso.map(|i| (i.1 - 1) * 7 + i.2).unwrap_or(0), 3),
            "DD" => {
                value = Some(f.day);
                num(f.day, 2)
            }
            "ID" => iso.map(|i| i.2).unwrap_or(0).to_string(),
            "D" => {
                value = Some(dow + 1);
                (dow + 1).to_string()
            }
            "IW" => num(iso.map(|i| i.1).unwrap_or(0), 2),
            "WW" => num((doy - 1) / 7 + 1, 2),
            "W" => ((f.day - 1) / 7 + 1).to_string(),
            "Q" => ((f.month - 1) / 3 + 1).to_string(),
            "J" => f.days.map(|d| d + 2_451_545).unwrap_or(0).to_string(),
            "CC" => num(if year > 0 { (year + 99) / 100 } else { -((99 - year) / 100) }, 2),
            "TZ" => f.tz.as_ref().map(|(a, _)| a.to_uppercase()).unwrap_or_default(),
            "tz" => f.tz.as_ref().map(|(a, _)| a.to_lowercase()).unwrap_or_default(),
            "OF" => {
                f.tz.as_ref()
                    .map(|(_, east)| {
                        let mut o = String::new();
                        sqltypes::zone::write_offset(*east, &mut o);
                        o
                    })
                    .unwrap_or_default()
            }
            _ => String::new(),
        };
        out.push_str(&text);
        for (suffix, upper) in [("TH", true), ("th", false)] {
            if let Some(a) = after.strip_prefix(suffix) {
                out.push_str(ordinal(value.unwrap_or(0), upper));
                after = a;
            }
        }
        rest = after;
    }
    out
}
