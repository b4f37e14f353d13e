//! Dates and timestamps: parsing, formatting and the clock.
//!
//! Values are counted from PostgreSQL's epoch, 2000-01-01 00:00:00 UTC:
//! timestamps in microseconds, dates in days. The session time zone is UTC,
//! so timestamptz prints with `+00`.

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::{err, Result};

/// Microseconds per day.
pub const USECS_PER_DAY: i64 = 86_400_000_000;

/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_DAYS: i64 = 10_957;

fn pg_epoch() -> NaiveDate {
    NaiveDate::from_ymd_opt(2000, 1, 1).expect("2000-01-01 is a valid date")
}

/// Now, in microseconds since 2000-01-01 UTC.
pub fn now_micros() -> i64 {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    unix - UNIX_TO_PG_DAYS * USECS_PER_DAY
}

/// Parses `YYYY-MM-DD` (with optional ` BC`-less forms only) into days.
pub fn parse_date(s: &str) -> Result<i32> {
    let t = s.trim();
    let d = NaiveDate::parse_from_str(t, "%Y-%m-%d").map_err(|_| {
        // Well-formed digits that name no real day are out of range, as in PostgreSQL.
        let shaped = t.len() >= 8
            && t.split('-').count() == 3
            && t.split('-').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if shaped {
            err!(DatetimeFieldOverflow, "date/time field value out of range: \"{s}\"")
        } else {
            err!(InvalidDatetimeFormat, "invalid input syntax for type date: \"{s}\"")
        }
    })?;
    Ok((d - pg_epoch()).num_days() as i32)
}

/// Formats days since 2000-01-01 as `YYYY-MM-DD`.
pub fn format_date(days: i32) -> String {
    match pg_epoch().checked_add_signed(chrono::Duration::days(days as i64)) {
        Some(d) => format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day()),
        None => "infinity".into(),
    }
}

/// Parses a timestamp; with `tz` an optional zone offset is applied (and
/// required semantics are UTC otherwise).
pub fn parse_timestamp(s: &str, tz: bool) -> Result<i64> {
    let bad = || {
        let ty = if tz { "timestamp with time zone" } else { "timestamp" };
        err!(InvalidDatetimeFormat, "invalid input syntax for type {ty}: \"{s}\"")
    };
    let t = s.trim();
    let (body, offset_secs) = split_zone(t).ok_or_else(bad)?;
    let body = body.replace('T', " ");
    let dt = NaiveDateTime::parse_from_str(&body, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(&body, "%Y-%m-%d %H:%M"))
        .or_else(|_| {
            NaiveDate::parse_from_str(&body, "%Y-%m-%d").map(|d| d.and_time(NaiveTime::MIN))
        })
        .map_err(|_| bad())?;
    let micros = (dt - pg_epoch().and_time(NaiveTime::MIN))
        .num_microseconds()
        .ok_or_else(|| err!(DatetimeFieldOverflow, "timestamp out of range: \"{s}\""))?;
    Ok(if tz { micros - offset_secs * 1_000_000 } else { micros })
}

/// Splits a trailing zone (`Z`, `UTC`, `+01`, `-05:30`, `+0100`) off.
fn split_zone(t: &str) -> Option<(String, i64)> {
    let upper = t.to_uppercase();
    for suffix in [" UTC", " GMT", "Z", "UTC"] {
        if upper.ends_with(suffix) && t.len() > suffix.len() + 8 {
            return Some((t[..t.len() - suffix.len()].trim().to_string(), 0));
        }
    }
    // An offset sign after the time part (position > 10 skips the date's dashes).
    if let Some(pos) = t.rfind(['+', '-']).filter(|&p| p > 10) {
        let (body, zone) = t.split_at(pos);
        let sign = if zone.starts_with('-') { -1 } else { 1 };
        let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) || digits.len() > 6 {
            return None;
        }
        let (h, m, s) = match digits.len() {
            1 | 2 => (digits.parse::<i64>().ok()?, 0, 0),
            3 | 4 => (
                digits[..digits.len() - 2].parse::<i64>().ok()?,
                digits[digits.len() - 2..].parse::<i64>().ok()?,
                0,
            ),
            _ => (
                digits[..2].parse::<i64>().ok()?,
                digits[2..4].parse::<i64>().ok()?,
                digits[4..].parse::<i64>().ok()?,
            ),
        };
        return Some((body.trim().to_string(), sign * (h * 3600 + m * 60 + s)));
    }
    Some((t.to_string(), 0))
}

/// Formats microseconds since 2000 as `YYYY-MM-DD HH:MM:SS[.ffffff]`
/// (trailing zeros of the fraction trimmed), plus `+00` for timestamptz.
pub fn format_timestamp(micros: i64, tz: bool) -> String {
    let base = pg_epoch().and_time(NaiveTime::MIN);
    let Some(dt) = base.checked_add_signed(chrono::Duration::microseconds(micros)) else {
        return if micros < 0 { "-infinity".into() } else { "infinity".into() };
    };
    let mut s = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        dt.year(),
        dt.month(),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second()
    );
    let frac = micros.rem_euclid(1_000_000);
    if frac != 0 {
        let f = format!("{frac:06}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    if tz {
        s.push_str("+00");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(parse_date("2000-01-02").expect("date"), 1);
        assert_eq!(format_date(-1), "1999-12-31");
        let t = parse_timestamp("2024-01-02 03:04:05.12", false).expect("ts");
        assert_eq!(format_timestamp(t, false), "2024-01-02 03:04:05.12");
        let z = parse_timestamp("2024-01-02 03:04:05+01", true).expect("tstz");
        assert_eq!(format_timestamp(z, true), "2024-01-02 02:04:05+00");
        let z = parse_timestamp("2024-01-02T03:04:05Z", true).expect("tstz");
        assert_eq!(format_timestamp(z, true), "2024-01-02 03:04:05+00");
        assert!(parse_timestamp("nope", false).is_err());
    }
}
