//! The interval type: months, days and microseconds kept apart, as in
//! PostgreSQL (a month is not a fixed number of days, nor a day a fixed
//! number of hours across a DST change), with its text forms, arithmetic
//! and the timestamp arithmetic that takes intervals.
//!
//! Output is PostgreSQL's default `IntervalStyle = postgres`
//! (`1 year 2 mons 3 days 04:05:06.5`, `-1 days +02:00:00`). Input takes
//! the same words with their abbreviations and plurals, `@ ... ago`,
//! `H:M[:S]` clock fields, fractional units that cascade into smaller ones
//! (`1.5 days` is `1 day 12:00:00`) and ISO 8601 durations (`P1Y2M3DT4H`).
//! Comparison treats a month as 30 days and a day as 24 hours, so
//! `'1 mon' = '30 days'`, as PostgreSQL does.

use crate::datetime::{self, push_num, push_seconds, USECS_PER_DAY, USECS_PER_SEC};
use crate::text::TextOut;
use crate::{err, Result};

/// Microseconds per hour and per minute.
const USECS_PER_HOUR: i64 = 3_600_000_000;
const USECS_PER_MINUTE: i64 = 60_000_000;

/// An interval value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    /// Whole months (years are 12 months).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// Microseconds.
    pub micros: i64,
}

fn out_of_range() -> crate::ErrorReport {
    err!(DatetimeFieldOverflow, "interval out of range")
}

impl Interval {
    /// The span used for comparison, hashing and ordering: months of 30
    /// days and days of 24 hours, in microseconds.
    pub fn span(&self) -> i128 {
        (self.months as i128 * 30 + self.days as i128) * USECS_PER_DAY as i128 + self.micros as i128
    }

    /// `a + b`, field by field.
    pub fn add(&self, o: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_add(o.months).ok_or_else(out_of_range)?,
            days: self.days.checked_add(o.days).ok_or_else(out_of_range)?,
            micros: self.micros.checked_add(o.micros).ok_or_else(out_of_range)?,
        })
    }

    /// `-a`.
    pub fn neg(&self) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(out_of_range)?,
            days: self.days.checked_neg().ok_or_else(out_of_range)?,
            micros: self.micros.checked_neg().ok_or_else(out_of_range)?,
        })
    }

    /// `a - b`.
    pub fn sub(&self, o: &Interval) -> Result<Interval> {
        self.add(&o.neg()?)
    }

    /// `interval * factor` (and `/ factor` via its reciprocal's terms):
    /// fractions of months cascade into days (30 per month) and fractions
    /// of days into microseconds, as interval_mul does.
    pub fn mul(&self, factor: f64) -> Result<Interval> {
        self.scale(|x| x * factor)
    }

    /// `interval / divisor` (22012 for zero).
    pub fn div(&self, divisor: f64) -> Result<Interval> {
        if divisor == 0.0 {
            return Err(err!(DivisionByZero, "division by zero"));
        }
        self.scale(|x| x / divisor)
    }

    fn scale(&self, f: impl Fn(f64) -> f64) -> Result<Interval> {
        let months_f = f(self.months as f64);
        let days_f = f(self.days as f64);
        let to_i32 = |x: f64| {
            if x.is_nan() || !(i32::MIN as f64..=i32::MAX as f64).contains(&x.trunc()) {
                Err(out_of_range())
            } else {
                Ok(x.trunc() as i32)
            }
        };
        let months = to_i32(months_f)?;
        let mut days = to_i32(days_f)?;
        let month_rem_days = round_micro((months_f - months as f64) * 30.0);
        let mut sec_rem =
            round_micro((days_f - days as f64 + month_rem_days - month_rem_days.trunc()) * 86400.0);
        if sec_rem.abs() >= 86400.0 {
            let whole = (sec_rem / 86400.0).trunc();
            days = days.checked_add(whole as i32).ok_or_else(out_of_range)?;
            sec_rem -= whole * 86400.0;
        }
        days = days.checked_add(month_rem_days.trunc() as i32).ok_or_else(out_of_range)?;
        let micros = (f(self.micros as f64) + sec_rem * USECS_PER_SEC as f64).round_ties_even();
        if micros.is_nan() || !(i64::MIN as f64..i64::MAX as f64).contains(&micros) {
            return Err(out_of_range());
        }
        Ok(Interval { months, days, micros: micros as i64 })
    }

    /// justify_hours: whole days out of the microseconds, signs made to agree.
    pub fn justify_hours(&self) -> Result<Interval> {
        let mut r = *self;
        r.carry_days()?;
        r.align_days_micros();
        Ok(r)
    }

    /// justify_days: whole 30-day months out of the days, signs made to agree.
    pub fn justify_days(&self) -> Result<Interval> {
        let mut r = *self;
        r.carry_months()?;
        r.align_months(false);
        Ok(r)
    }

    /// justify_interval: both of the above, with one sign throughout.
    pub fn justify_interval(&self) -> Result<Interval> {
        let mut r = *self;
        r.carry_days()?;
        r.carry_months()?;
        r.align_months(true);
        r.align_days_micros();
        Ok(r)
    }

    /// Moves whole days out of the microseconds.
    fn carry_days(&mut self) -> Result<()> {
        let whole = self.micros / USECS_PER_DAY;
        self.micros -= whole * USECS_PER_DAY;
        self.days = self.days.checked_add(whole as i32).ok_or_else(out_of_range)?;
        Ok(())
    }

    /// Moves whole 30-day months out of the days.
    fn carry_months(&mut self) -> Result<()> {
        let whole = self.days / 30;
        self.days -= whole * 30;
        self.months = self.months.checked_add(whole).ok_or_else(out_of_range)?;
        Ok(())
    }

    /// Borrows a day so days and microseconds have the same sign.
    fn align_days_micros(&mut self) {
        if self.days > 0 && self.micros < 0 {
            self.micros += USECS_PER_DAY;
            self.days -= 1;
        } else if self.days < 0 && self.micros > 0 {
            self.micros -= USECS_PER_DAY;
            self.days += 1;
        }
    }

    /// Borrows a month so months and days (and, with `micros`, the time
    /// when there are no days) have the same sign.
    fn align_months(&mut self, micros: bool) {
        let below = self.days < 0 || (micros && self.days == 0 && self.micros < 0);
        let above = self.days > 0 || (micros && self.days == 0 && self.micros > 0);
        if self.months > 0 && below {
            self.days += 30;
            self.months -= 1;
        } else if self.months < 0 && above {
            self.days -= 30;
            self.months += 1;
        }
    }
}

/// Rounds to microsecond precision in seconds-like units, as TSROUND does.
fn round_micro(x: f64) -> f64 {
    (x * 1e6).round_ties_even() / 1e6
}

/// Writes an interval in PostgreSQL's `postgres` IntervalStyle.
pub fn write_interval<O: TextOut + ?Sized>(iv: &Interval, out: &mut O) {
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |out: &mut O, value: i64, unit: &str| {
        if value == 0 {
            return;
        }
        let text = format!(
            "{}{}{} {}{}",
            if is_zero { "" } else { " " },
            if is_before && value > 0 { "+" } else { "" },
            value,
            unit,
            if value != 1 { "s" } else { "" }
        );
        out.put(text.as_bytes());
        is_before = value < 0;
        is_zero = false;
    };
    part(out, (iv.months / 12) as i64, "year");
    part(out, (iv.months % 12) as i64, "mon");
    part(out, iv.days as i64, "day");
    let t = iv.micros;
    if is_zero || t != 0 {
        if !is_zero {
            out.put(b" ");
        }
        if t < 0 {
            out.put(b"-");
        } else if is_before {
            out.put(b"+");
        }
        let a = t.unsigned_abs();
        let hours = a / USECS_PER_HOUR as u64;
        push_num(out, hours, 2);
        out.put(b":");
        push_num(out, a / USECS_PER_MINUTE as u64 % 60, 2);
        out.put(b":");
        push_seconds(out, a % USECS_PER_MINUTE as u64);
    }
}

/// The interval's text form.
pub fn format_interval(iv: &Interval) -> String {
    let mut out = Vec::new();
    write_interval(iv, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// A unit an interval field may carry.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Unit {
    Micro,
    Milli,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
    Decade,
    Century,
    Millennium,
}

fn unit(word: &str) -> Option<Unit> {
    Some(match word {
        "microsecond" | "microseconds" | "microsecon" | "us" | "usec" | "usecs" | "useconds" => {
            Unit::Micro
        }
        "millisecond" | "milliseconds" | "millisecon" | "ms" | "msec" | "msecs" | "mseconds" => {
            Unit::Milli
        }
        "second" | "seconds" | "s" | "sec" | "secs" => Unit::Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Unit::Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Unit::Hour,
        "day" | "days" | "d" => Unit::Day,
        "week" | "weeks" | "w" => Unit::Week,
        "month" | "months" | "mon" | "mons" => Unit::Month,
        "year" | "years" | "y" | "yr" | "yrs" => Unit::Year,
        "decade" | "decades" | "dec" | "decs" => Unit::Decade,
        "century" | "centuries" | "c" | "cent" => Unit::Century,
        "millennium" | "millennia" | "mil" | "mils" => Unit::Millennium,
        _ => return None,
    })
}

/// Accumulates fields, cascading fractions downward as DecodeInterval does.
#[derive(Default)]
struct Acc {
    months: f64,
    days: f64,
    micros: f64,
    /// Whole microseconds from integer fields, kept exact (beyond 2^53 a
    /// float would round them).
    exact: i128,
}

impl Acc {
    /// Adds an integer-valued token exactly where the unit is a time unit.
    fn add_token(&mut self, tok: &str, u: Unit) -> std::result::Result<(), Bad> {
        let per = match u {
            Unit::Micro => 1,
            Unit::Milli => 1000,
            Unit::Second => USECS_PER_SEC,
            Unit::Minute => USECS_PER_MINUTE,
            Unit::Hour => USECS_PER_HOUR,
            _ => 0,
        };
        match tok.parse::<i64>() {
            Ok(n) if per != 0 => self.exact += n as i128 * per as i128,
            _ => self.add(number(tok)?, u),
        }
        Ok(())
    }

    fn add(&mut self, value: f64, u: Unit) {
        match u {
            Unit::Micro => self.micros += value,
            Unit::Milli => self.micros += value * 1000.0,
            Unit::Second => self.micros += value * USECS_PER_SEC as f64,
            Unit::Minute => self.micros += value * USECS_PER_MINUTE as f64,
            Unit::Hour => self.micros += value * USECS_PER_HOUR as f64,
            Unit::Day => self.add_days(value),
            Unit::Week => self.add_days(value * 7.0),
            Unit::Month => self.add_months(value),
            Unit::Year => self.add_months(value * 12.0),
            Unit::Decade => self.add_months(value * 120.0),
            Unit::Century => self.add_months(value * 1200.0),
            Unit::Millennium => self.add_months(value * 12000.0),
        }
    }

    fn add_days(&mut self, d: f64) {
        let whole = d.trunc();
        self.days += whole;
        self.micros += (d - whole) * USECS_PER_DAY as f64;
    }

    fn add_months(&mut self, m: f64) {
        let whole = m.trunc();
        self.months += whole;
        self.add_days((m - whole) * 30.0);
    }

    fn finish(self, negate: bool) -> Option<Interval> {
        let sign = if negate { -1.0 } else { 1.0 };
        let fits32 = |x: f64| (i32::MIN as f64..=i32::MAX as f64).contains(&x);
        let months = (self.months * sign).round();
        let days = (self.days * sign).round();
        let micros = self.exact * sign as i128 + (self.micros * sign).round() as i128;
        if !fits32(months) || !fits32(days) {
            return None;
        }
        Some(Interval {
            months: months as i32,
            days: days as i32,
            micros: i64::try_from(micros).ok()?,
        })
    }
}

/// Why interval input was rejected.
enum Bad {
    Syntax,
    Range,
}

/// Parses interval input (see the module docs).
pub fn parse_interval(s: &str) -> Result<Interval> {
    let lower = s.trim().to_ascii_lowercase();
    let parsed = if lower.starts_with('p') { parse_iso(&lower) } else { parse_words(&lower) };
    parsed.map_err(|b| match b {
        Bad::Syntax => {
            err!(InvalidDatetimeFormat, "invalid input syntax for type interval: \"{s}\"")
        }
        Bad::Range => err!(IntervalFieldOverflow, "interval field value out of range: \"{s}\""),
    })
}

/// Splits interval input into tokens: numbers (with sign, fraction and
/// clock colons) and words.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b',' {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() {
            while i < b.len() && b[i].is_ascii_alphabetic() {
                i += 1;
            }
        } else if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' {
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b':') {
                i += 1;
            }
        } else {
            i += s[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        }
        out.push(&s[start..i]);
    }
    out
}

fn number(t: &str) -> std::result::Result<f64, Bad> {
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if body.is_empty() || body == "." || !body.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(Bad::Syntax);
    }
    t.parse::<f64>().map_err(|_| Bad::Syntax)
}

/// `[-]H:M[:S[.f]]` in microseconds, exactly.
fn clock(t: &str) -> std::result::Result<i128, Bad> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let parts: Vec<&str> = body.split(':').collect();
    if parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return Err(Bad::Syntax);
    }
    let int = |p: &str| -> std::result::Result<i128, Bad> {
        if !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Bad::Syntax);
        }
        p.parse::<i128>().map_err(|_| Bad::Range)
    };
    let h = int(parts[0])?;
    let m = int(parts[1])?;
    let (sec, frac) = match parts.get(2) {
        Some(p) => p.split_once('.').unwrap_or((p, "")),
        None => ("0", ""),
    };
    let sec = int(sec)?;
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Bad::Syntax);
    }
    // The fraction rounded to microseconds.
    let mut us: i128 = 0;
    for (i, b) in frac.bytes().chain(std::iter::repeat(b'0')).take(7).enumerate() {
        let d = (b - b'0') as i128;
        if i < 6 {
            us = us * 10 + d;
        } else if d >= 5 {
            us += 1;
        }
    }
    if m >= 60 || sec >= 60 {
        return Err(Bad::Range);
    }
    let total = h * USECS_PER_HOUR as i128
        + m * USECS_PER_MINUTE as i128
        + sec * USECS_PER_SEC as i128
        + us;
    Ok(if neg { -total } else { total })
}

fn parse_words(s: &str) -> std::result::Result<Interval, Bad> {
    let s = s.strip_prefix('@').unwrap_or(s);
    let toks = tokens(s);
    if toks.is_empty() {
        return Err(Bad::Syntax);
    }
    let mut acc = Acc::default();
    let mut ago = false;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        if ago {
            // Nothing may follow "ago".
            return Err(Bad::Syntax);
        }
        if t == "ago" {
            ago = true;
            i += 1;
            continue;
        }
        if t.contains(':') {
            acc.exact += clock(t)?;
            i += 1;
            continue;
        }
        number(t)?;
        match toks.get(i + 1).and_then(|w| unit(w)) {
            Some(u) => {
                acc.add_token(t, u)?;
                i += 2;
            }
            None if toks.get(i + 1).is_some_and(|w| w.bytes().all(|b| b.is_ascii_alphabetic())) => {
                return Err(Bad::Syntax)
            }
            // A bare number counts seconds.
            None => {
                acc.add_token(t, Unit::Second)?;
                i += 1;
            }
        }
    }
    acc.finish(ago).ok_or(Bad::Range)
}

/// ISO 8601 durations: `P[nY][nM][nW][nD][T[nH][nM][nS]]`.
fn parse_iso(s: &str) -> std::result::Result<Interval, Bad> {
    let body = &s[1..];
    if body.is_empty() {
        return Err(Bad::Syntax);
    }
    let mut acc = Acc::default();
    let mut in_time = false;
    let mut num = String::new();
    for c in body.chars() {
        match c {
            't' if !in_time && num.is_empty() => in_time = true,
            '0'..='9' | '.' | '-' | '+' => num.push(c),
            _ => {
                let u = match (c, in_time) {
                    ('y', false) => Unit::Year,
                    ('m', false) => Unit::Month,
                    ('w', false) => Unit::Week,
                    ('d', false) => Unit::Day,
                    ('h', true) => Unit::Hour,
                    ('m', true) => Unit::Minute,
                    ('s', true) => Unit::Second,
                    _ => return Err(Bad::Syntax),
                };
                acc.add_token(&num, u)?;
                num.clear();
            }
        }
    }
    if !num.is_empty() {
        return Err(Bad::Syntax);
    }
    acc.finish(false).ok_or(Bad::Range)
}

/// Splits microseconds since 2000 into (days, time of day).
fn split_ts(t: i64) -> (i64, i64) {
    (t.div_euclid(USECS_PER_DAY), t.rem_euclid(USECS_PER_DAY))
}

fn ts_out_of_range() -> crate::ErrorReport {
    err!(DatetimeFieldOverflow, "timestamp out of range")
}

/// `timestamp + interval`: months first (the day clamped to the new
/// month's length), then days, then microseconds, as timestamp_pl_interval
/// does. Infinite timestamps stay infinite.
pub fn timestamp_add(t: i64, iv: &Interval) -> Result<i64> {
    if !datetime::timestamp_is_finite(t) {
        return Ok(t);
    }
    let mut t = t;
    if iv.months != 0 {
        let (days, tod) = split_ts(t);
        let (y, m, d) = datetime::civil_from_days(days);
        let total = y * 12 + (m as i64 - 1) + iv.months as i64;
        let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) as u32 + 1);
        let nd = d.min(datetime::days_in_month(ny, nm));
        let days = datetime::days_from_civil(ny, nm, nd);
        t = days.checked_mul(USECS_PER_DAY).ok_or_else(ts_out_of_range)? + tod;
    }
    if iv.days != 0 {
        t = t.checked_add(iv.days as i64 * USECS_PER_DAY).ok_or_else(ts_out_of_range)?;
    }
    t = t.checked_add(iv.micros).ok_or_else(ts_out_of_range)?;
    if !(datetime::MIN_TIMESTAMP..datetime::END_TIMESTAMP).contains(&t) {
        return Err(ts_out_of_range());
    }
    Ok(t)
}

/// `timestamptz + interval` in a time zone: months and days move the
/// wall-clock time (so a day across a daylight-saving change is 23 or 25
/// hours), the time part moves the instant.
pub fn timestamptz_add(t: i64, iv: &Interval, zone: &crate::Zone) -> Result<i64> {
    if zone.is_utc() || (iv.months == 0 && iv.days == 0) || !datetime::timestamp_is_finite(t) {
        return timestamp_add(t, iv);
    }
    let calendar = Interval { months: iv.months, days: iv.days, micros: 0 };
    let local = timestamp_add(zone.utc_to_local(t), &calendar)?;
    let moved = zone.local_to_utc(local);
    timestamp_add(moved, &Interval { months: 0, days: 0, micros: iv.micros })
}

/// `timestamp - timestamp`: the difference in days and microseconds
/// (justify_hours of the plain difference).
pub fn timestamp_diff(a: i64, b: i64) -> Result<Interval> {
    if !datetime::timestamp_is_finite(a) || !datetime::timestamp_is_finite(b) {
        return Err(err!(DatetimeFieldOverflow, "cannot subtract infinite timestamps"));
    }
    let micros = a.checked_sub(b).ok_or_else(out_of_range)?;
    Interval { months: 0, days: 0, micros }.justify_hours()
}

/// The broken-down fields of a timestamp: year, month, day, hour, minute,
/// second, microsecond.
pub fn fields(t: i64) -> [i64; 7] {
    let (days, tod) = split_ts(t);
    let (y, m, d) = datetime::civil_from_days(days);
    let secs = tod / USECS_PER_SEC;
    [y, m as i64, d as i64, secs / 3600, secs / 60 % 60, secs % 60, tod % USECS_PER_SEC]
}

/// age(a, b): the symbolic difference in years, months, days and time,
/// borrowing from the larger fields as PostgreSQL's timestamp_age does.
pub fn age(a: i64, b: i64) -> Result<Interval> {
    if !datetime::timestamp_is_finite(a) || !datetime::timestamp_is_finite(b) {
        return Err(err!(DatetimeFieldOverflow, "cannot subtract infinite timestamps"));
    }
    let (f1, f2) = (fields(a), fields(b));
    let mut d: [i64; 7] = std::array::from_fn(|i| f1[i] - f2[i]);
    let flip = a < b;
    if flip {
        d.iter_mut().for_each(|x| *x = -*x);
    }
    // [year, month, day, hour, minute, second, usec]
    while d[6] < 0 {
        d[6] += USECS_PER_SEC;
        d[5] -= 1;
    }
    while d[5] < 0 {
        d[5] += 60;
        d[4] -= 1;
    }
    while d[4] < 0 {
        d[4] += 60;
        d[3] -= 1;
    }
    while d[3] < 0 {
        d[3] += 24;
        d[2] -= 1;
    }
    while d[2] < 0 {
        let (y, m) = if flip { (f1[0], f1[1]) } else { (f2[0], f2[1]) };
        d[2] += datetime::days_in_month(y, m as u32) as i64;
        d[1] -= 1;
    }
    while d[1] < 0 {
        d[1] += 12;
        d[0] -= 1;
    }
    if flip {
        d.iter_mut().for_each(|x| *x = -*x);
    }
    let months = d[0] * 12 + d[1];
    let micros = ((d[3] * 60 + d[4]) * 60 + d[5]) * USECS_PER_SEC + d[6];
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| out_of_range())?,
        days: d[2] as i32,
        micros,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        match parse_interval(s) {
            Ok(iv) => format_interval(&iv),
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn text_like_postgres() {
        let cases = [
            (
                "1 year 2 months 3 days 4 hours 5 minutes 6.5 seconds",
                "1 year 2 mons 3 days 04:05:06.5",
            ),
            ("-1 day +2 hours", "-1 days +02:00:00"),
            ("-1 day -2 hours", "-1 days -02:00:00"),
            ("1 day -2 hours", "1 day -02:00:00"),
            ("0", "00:00:00"),
            ("-00:00:01", "-00:00:01"),
            ("1.5 days", "1 day 12:00:00"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("1 week", "7 days"),
            ("@ 2 days ago", "-2 days"),
            ("1:30", "01:30:00"),
            ("100:00:00", "100:00:00"),
            ("1.5 years", "1 year 6 mons"),
            ("2 mons", "2 mons"),
            ("1 mon", "1 mon"),
            ("3 decades", "30 years"),
            ("1 day 02:03:04.000005", "1 day 02:03:04.000005"),
            ("10 ms", "00:00:00.01"),
        ];
        for (input, want) in cases {
            assert_eq!(rt(input), want, "{input}");
        }
        assert!(rt("1 fortnight").starts_with("22007"));
        assert!(rt("").starts_with("22007"));
        assert!(rt("abc").starts_with("22007"));
    }

    #[test]
    fn arithmetic() {
        let iv = |s: &str| parse_interval(s).expect("interval");
        assert_eq!(format_interval(&iv("2 hours").mul(1.5).expect("mul")), "03:00:00");
        assert_eq!(format_interval(&iv("1 mon").div(3.0).expect("div")), "10 days");
        assert_eq!(format_interval(&iv("1 mon 1 day").mul(0.5).expect("mul")), "15 days 12:00:00");
        assert_eq!(iv("1 mon").span(), iv("30 days").span());
        let ts = crate::datetime::parse_timestamp("2024-01-31 10:00", false).expect("ts");
        let r = timestamp_add(ts, &iv("1 mon")).expect("add");
        assert_eq!(crate::datetime::format_timestamp(r, false), "2024-02-29 10:00:00");
        let b = crate::datetime::parse_timestamp("2023-03-15 12:00", false).expect("ts");
        assert_eq!(format_interval(&age(ts, b).expect("age")), "10 mons 15 days 22:00:00");
        assert_eq!(format_interval(&age(b, ts).expect("age")), "-10 mons -15 days -22:00:00");
        let (m1, j31) = (
            crate::datetime::parse_timestamp("2024-03-01", false).expect("ts"),
            crate::datetime::parse_timestamp("2024-01-31", false).expect("ts"),
        );
        assert_eq!(format_interval(&age(m1, j31).expect("age")), "1 mon 1 day");
        assert_eq!(format_interval(&timestamp_diff(ts, b).expect("diff")), "321 days 22:00:00");
        assert_eq!(
            format_interval(&iv("35 days 30 hours").justify_interval().expect("j")),
            "1 mon 6 days 06:00:00"
        );
    }
}
