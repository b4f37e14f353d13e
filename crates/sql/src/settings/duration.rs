//! Settings that hold a time in milliseconds (statement_timeout,
//! lock_timeout and the idle timeouts): PostgreSQL's syntax for an integer
//! with an optional unit, and its display in the largest unit that divides
//! the value evenly (`1500ms`, `1min`, `0`).

use crate::error::Result;
use crate::{bail, err};

/// The settings measured in milliseconds; 0 means no timeout.
pub const MILLISECOND_SETTINGS: &[&str] = &[
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
    "idle_session_timeout",
];

/// The largest value a millisecond setting takes (a C int, as in
/// PostgreSQL).
pub const MAX: i64 = i32::MAX as i64;

/// The units a time is written in, with their length in milliseconds.
const UNITS: &[(&str, f64)] = &[
    ("d", 86_400_000.0),
    ("h", 3_600_000.0),
    ("min", 60_000.0),
    ("s", 1_000.0),
    ("ms", 1.0),
    ("us", 0.001),
];

const UNITS_HINT: &str =
    "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".";

/// Where `key` (lower case) stands in [`MILLISECOND_SETTINGS`]: Some for
/// the settings measured in milliseconds.
pub fn slot(key: &str) -> Option<usize> {
    MILLISECOND_SETTINGS.iter().position(|k| *k == key)
}

/// Reads a value of setting `name`: a number (C syntax: `0x` hex, a
/// leading 0 for octal, a fraction or an exponent) with an optional unit,
/// milliseconds by default, rounded to a whole millisecond. 22023 when it is
/// not a number, has an unknown unit, or is outside 0 .. [`MAX`].
pub fn parse(name: &str, text: &str) -> Result<i64> {
    let invalid =
        || err!(InvalidParameterValue, "invalid value for parameter \"{name}\": \"{text}\"");
    let Some((number, rest)) = leading_number(text) else { return Err(invalid()) };
    let rest = rest.trim_start();
    let millis = if rest.is_empty() {
        number
    } else {
        let unit = rest.trim_end();
        match UNITS.iter().position(|(u, _)| *u == unit) {
            // A fraction is rounded to the next smaller unit first, as
            // PostgreSQL does ('0.01min' is 1s).
            Some(i) => match UNITS.get(i + 1) {
                Some((_, smaller)) => (number * UNITS[i].1 / smaller).round_ties_even() * smaller,
                None => number * UNITS[i].1,
            },
            None => return Err(invalid().with_hint(UNITS_HINT)),
        }
    };
    let millis = millis.round_ties_even();
    if millis.is_nan() {
        return Err(invalid());
    }
    if !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(&millis) {
        return Err(invalid().with_hint("Value exceeds integer range."));
    }
    let millis = millis as i64;
    if millis < 0 {
        bail!(
            InvalidParameterValue,
            "{millis} ms is outside the valid range for parameter \"{name}\" (0 .. {MAX})"
        );
    }
    Ok(millis)
}

/// A value of setting `name` as SHOW prints it; errors as [`parse`].
pub fn canonical(name: &str, text: &str) -> Result<String> {
    Ok(show(parse(name, text)?))
}

/// A value as SHOW prints it: in the largest unit that divides it.
pub fn show(millis: i64) -> String {
    if millis == 0 {
        return "0".into();
    }
    let (unit, scale) = UNITS
        .iter()
        .find(|(_, scale)| *scale >= 1.0 && millis % (*scale as i64) == 0)
        .copied()
        .unwrap_or(("ms", 1.0));
    format!("{}{unit}", millis / scale as i64)
}

/// The number at the start of `text` (after spaces) and what follows it,
/// read as C's strtol reads an integer, or as strtod when a fraction or an
/// exponent follows.
fn leading_number(text: &str) -> Option<(f64, &str)> {
    let s = text.trim_start();
    let bytes = s.as_bytes();
    let sign_len = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let negative = bytes.first() == Some(&b'-');
    let body = &s[sign_len..];
    let (radix, digits_at) = match body.as_bytes() {
        [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit() => (16, 2),
        [b'0', ..] => (8, 0),
        _ => (10, 0),
    };
    let digits = &body[digits_at..];
    let len = digits.find(|c: char| !c.is_digit(radix)).unwrap_or(digits.len());
    if len == 0 {
        return float_prefix(s);
    }
    let rest = &digits[len..];
    if radix != 16 && matches!(rest.as_bytes().first(), Some(b'.' | b'e' | b'E')) {
        return float_prefix(s);
    }
    // Leading zeros do not count toward the digits that fit.
    let significant = digits[..len].trim_start_matches('0');
    let magnitude = match significant.len() {
        0 => 0.0,
        n if n > 30 => f64::INFINITY,
        _ => i128::from_str_radix(significant, radix).ok()? as f64,
    };
    Some((if negative { -magnitude } else { magnitude }, rest))
}

/// The longest decimal floating-point number at the start of `s` (sign,
/// digits, a point, digits, an exponent) and what follows it.
fn float_prefix(s: &str) -> Option<(f64, &str)> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let whole = digits(i);
    i += whole;
    let mut fraction = 0;
    if b.get(i) == Some(&b'.') {
        fraction = digits(i + 1);
        i += 1 + fraction;
    }
    if whole + fraction == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let exponent = digits(i + 1 + sign);
        if exponent > 0 {
            i += 1 + sign + exponent;
        }
    }
    Some((s[..i].parse().ok()?, &s[i..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_postgresql_reads_them() {
        let ms = |t: &str| parse("statement_timeout", t).ok();
        assert_eq!(ms("1500"), Some(1500));
        assert_eq!(ms("1.5s"), Some(1500));
        assert_eq!(ms("1.5"), Some(2));
        assert_eq!(ms("2.5"), Some(2));
        assert_eq!(ms(" 7s "), Some(7000));
        assert_eq!(ms("2 h"), Some(7_200_000));
        assert_eq!(ms("100us"), Some(0));
        assert_eq!(ms("1000us"), Some(1));
        assert_eq!(ms("1e3"), Some(1000));
        assert_eq!(ms("-0.4"), Some(0));
        assert_eq!(ms("0x10"), Some(16));
        assert_eq!(ms("010"), Some(8));
        assert_eq!(ms("5 sec"), None);
        assert_eq!(ms("abc"), None);
        assert_eq!(ms("-1"), None);
        assert_eq!(ms("30d"), None);
        assert_eq!(ms("08"), None);
        assert_eq!(ms("0.01min"), Some(1000));
        assert_eq!(ms("0.0001h"), Some(0));
        assert_eq!(ms("0000000000000000000000000000000100"), Some(64));
        assert_eq!(ms("99999999999999999999999999999999999"), None);
    }

    #[test]
    fn values_show_in_the_largest_even_unit() {
        assert_eq!(show(0), "0");
        assert_eq!(show(1500), "1500ms");
        assert_eq!(show(60_000), "1min");
        assert_eq!(show(3_600_000), "1h");
        assert_eq!(show(86_400_000), "1d");
        assert_eq!(show(7_000), "7s");
    }

    #[test]
    fn errors_carry_postgresql_hints() {
        let e = parse("statement_timeout", "5 sec").err().map(|e| e.hint);
        assert_eq!(e, Some(Some(UNITS_HINT.to_string())));
        let e = parse("statement_timeout", "-1").err().map(|e| e.message);
        let want = "-1 ms is outside the valid range for parameter \"statement_timeout\" (0 .. 2147483647)";
        assert_eq!(e.as_deref(), Some(want));
    }
}
