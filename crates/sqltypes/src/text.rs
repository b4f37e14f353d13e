//! Text-format input and output, exactly as PostgreSQL spells values.
//!
//! Input follows each type's `*in` function (whitespace around integers is
//! allowed, `bool` accepts t/true/yes/on/1 and unique prefixes, floats accept
//! NaN and Infinity, bytea takes hex or escape format). Output follows the
//! `*out` functions with PostgreSQL 12+ defaults (shortest round-trip floats,
//! ISO dates, `bytea_output = hex`).

use bytes::{BufMut, BytesMut};

use crate::datetime;
use crate::numeric::Numeric;
use crate::{err, DataType, Result, Value};

fn int_err(ty: &str, s: &str) -> crate::ErrorReport {
    err!(InvalidTextRepresentation, "invalid input syntax for type {ty}: \"{s}\"")
}

fn parse_int(s: &str, ty: &str, min: i64, max: i64) -> Result<i64> {
    let t = s.trim();
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        || digits.starts_with('_')
        || digits.ends_with('_')
    {
        return Err(int_err(ty, s));
    }
    let clean: String = t.chars().filter(|&c| c != '_').collect();
    match clean.parse::<i128>() {
        Ok(v) if v >= min as i128 && v <= max as i128 => Ok(v as i64),
        _ => Err(err!(NumericValueOutOfRange, "value \"{s}\" is out of range for type {ty}")),
    }
}

fn parse_bool(s: &str) -> Result<bool> {
    let t = s.trim().to_lowercase();
    let bad = || err!(InvalidTextRepresentation, "invalid input syntax for type boolean: \"{s}\"");
    if t.is_empty() {
        return Err(bad());
    }
    let is_prefix = |word: &str| word.starts_with(t.as_str());
    Ok(match t.as_str() {
        "1" => true,
        "0" => false,
        "on" => true,
        "of" | "off" => false,
        "o" => return Err(bad()),
        _ if is_prefix("true") || is_prefix("yes") => true,
        _ if is_prefix("false") || is_prefix("no") => false,
        _ => return Err(bad()),
    })
}

fn parse_float(s: &str) -> Result<f64> {
    let t = s.trim();
    let lower = t.to_lowercase();
    let v = match lower.as_str() {
        "nan" => f64::NAN,
        "infinity" | "+infinity" | "inf" | "+inf" => f64::INFINITY,
        "-infinity" | "-inf" => f64::NEG_INFINITY,
        _ => {
            if t.is_empty()
                || !t
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
            {
                return Err(err!(
                    InvalidTextRepresentation,
                    "invalid input syntax for type double precision: \"{s}\""
                ));
            }
            let v: f64 = t.parse().map_err(|_| {
                err!(
                    InvalidTextRepresentation,
                    "invalid input syntax for type double precision: \"{s}\""
                )
            })?;
            if v.is_infinite() {
                return Err(err!(
                    NumericValueOutOfRange,
                    "\"{s}\" is out of range for type double precision"
                ));
            }
            v
        }
    };
    Ok(v)
}

fn parse_bytea(s: &str) -> Result<Vec<u8>> {
    if let Some(hex) = s.strip_prefix("\\x") {
        let clean: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        if !clean.len().is_multiple_of(2) {
            return Err(err!(
                InvalidTextRepresentation,
                "invalid hexadecimal data: odd number of digits"
            ));
        }
        let mut out = Vec::with_capacity(clean.len() / 2);
        for pair in clean.chunks(2) {
            let hi = (pair[0] as char).to_digit(16);
            let lo = (pair[1] as char).to_digit(16);
            match (hi, lo) {
                (Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                _ => {
                    return Err(err!(
                        InvalidParameterValue,
                        "invalid hexadecimal digit: \"{}\"",
                        pair[0] as char
                    ))
                }
            }
        }
        return Ok(out);
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            return Err(err!(InvalidTextRepresentation, "invalid input syntax for type bytea"));
        }
    }
    Ok(out)
}

/// Checks length limits and pads for varchar(n)/char(n) input.
pub fn fit_string(s: &str, ty: &DataType) -> Result<String> {
    let n = match ty {
        DataType::Varchar(Some(n)) | DataType::Char(n) => *n as usize,
        _ => return Ok(s.to_string()),
    };
    let len = s.chars().count();
    if len > n {
        let tail_spaces = s.chars().skip(n).all(|c| c == ' ');
        if !tail_spaces {
            return Err(err!(StringDataRightTruncation, "value too long for type {ty}"));
        }
        return Ok(s.chars().take(n).collect());
    }
    if matches!(ty, DataType::Char(_)) && len < n {
        let mut out = s.to_string();
        out.extend(std::iter::repeat_n(' ', n - len));
        return Ok(out);
    }
    Ok(s.to_string())
}

/// Parses text-format input for `ty`.
pub fn parse_text(ty: &DataType, s: &str) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(parse_bool(s)?),
        DataType::Int2 => {
            Value::Int2(parse_int(s, "smallint", i16::MIN as i64, i16::MAX as i64)? as i16)
        }
        DataType::Int4 => {
            Value::Int4(parse_int(s, "integer", i32::MIN as i64, i32::MAX as i64)? as i32)
        }
        DataType::Int8 => Value::Int8(parse_int(s, "bigint", i64::MIN, i64::MAX)?),
        DataType::Float8 => Value::Float8(parse_float(s)?),
        DataType::Numeric(m) => {
            let n = Numeric::parse(s)?;
            Value::Numeric(match m {
                Some((p, sc)) => n.apply_typmod(*p, *sc)?,
                None => n,
            })
        }
        DataType::Text | DataType::Unknown => Value::Text(s.to_string()),
        DataType::Varchar(_) | DataType::Char(_) => Value::Text(fit_string(s, ty)?),
        DataType::Date => Value::Date(datetime::parse_date(s)?),
        DataType::Timestamp => Value::Timestamp(datetime::parse_timestamp(s, false)?),
        DataType::TimestampTz => Value::TimestampTz(datetime::parse_timestamp(s, true)?),
        DataType::Bytea => Value::Bytea(parse_bytea(s)?),
    })
}

/// Formats a float as PostgreSQL 12+ does with extra_float_digits = 1:
/// the shortest text that reads back to the same value.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // Rust's `{:e}` gives the shortest round-trip digits in scientific form.
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..15).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

fn hex_bytes(b: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\x");
    for &x in b {
        out.push(HEX[(x >> 4) as usize]);
        out.push(HEX[(x & 15) as usize]);
    }
}

/// Appends the text form of a non-NULL value (NULL appends nothing).
pub fn format_text(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(if *b { b't' } else { b'f' }),
        Value::Int2(i) => out.extend_from_slice(itoa_buf(*i as i64).as_bytes()),
        Value::Int4(i) => out.extend_from_slice(itoa_buf(*i as i64).as_bytes()),
        Value::Int8(i) => out.extend_from_slice(itoa_buf(*i).as_bytes()),
        Value::Float8(f) => out.extend_from_slice(format_float(*f).as_bytes()),
        Value::Numeric(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Value::Text(s) => out.extend_from_slice(s.as_bytes()),
        Value::Timestamp(t) => {
            out.extend_from_slice(datetime::format_timestamp(*t, false).as_bytes())
        }
        Value::TimestampTz(t) => {
            out.extend_from_slice(datetime::format_timestamp(*t, true).as_bytes())
        }
        Value::Date(d) => out.extend_from_slice(datetime::format_date(*d).as_bytes()),
        Value::Bytea(b) => hex_bytes(b, out),
    }
}

fn itoa_buf(i: i64) -> String {
    i.to_string()
}

/// Appends the text form to a wire buffer; integers avoid allocation.
pub fn write_text(v: &Value, buf: &mut BytesMut) {
    match v {
        Value::Int2(i) => write_int(*i as i64, buf),
        Value::Int4(i) => write_int(*i as i64, buf),
        Value::Int8(i) => write_int(*i, buf),
        Value::Text(s) => buf.put_slice(s.as_bytes()),
        other => {
            let mut tmp = Vec::new();
            format_text(other, &mut tmp);
            buf.put_slice(&tmp);
        }
    }
}

fn write_int(i: i64, buf: &mut BytesMut) {
    let mut tmp = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut pos = tmp.len();
    loop {
        pos -= 1;
        tmp[pos] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        buf.put_u8(b'-');
    }
    buf.put_slice(&tmp[pos..]);
}

/// The text form as a String (for messages and casts).
pub fn to_text(v: &Value) -> String {
    let mut out = Vec::new();
    format_text(v, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txt(v: Value) -> String {
        to_text(&v)
    }

    #[test]
    fn floats_like_postgres() {
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(1e20), "1e+20");
        assert_eq!(format_float(1.5e-7), "1.5e-07");
        assert_eq!(format_float(123456789012345.0), "123456789012345");
        assert_eq!(format_float(1e15), "1e+15");
        assert_eq!(format_float(-0.0), "-0");
        assert_eq!(format_float(0.0001), "0.0001");
    }

    #[test]
    fn ints_and_errors() {
        assert_eq!(parse_text(&DataType::Int4, " 42 ").ok(), Some(Value::Int4(42)));
        let e = parse_text(&DataType::Int4, "abc").expect_err("bad");
        assert_eq!(e.message, "invalid input syntax for type integer: \"abc\"");
        let e = parse_text(&DataType::Int2, "40000").expect_err("range");
        assert_eq!(e.code, crate::SqlState::NumericValueOutOfRange);
        let mut b = BytesMut::new();
        write_text(&Value::Int8(i64::MIN), &mut b);
        assert_eq!(&b[..], i64::MIN.to_string().as_bytes());
    }

    #[test]
    fn bools_and_strings() {
        assert_eq!(parse_text(&DataType::Bool, "Y").ok(), Some(Value::Bool(true)));
        assert_eq!(parse_text(&DataType::Bool, "off").ok(), Some(Value::Bool(false)));
        assert!(parse_text(&DataType::Bool, "maybe").is_err());
        assert_eq!(parse_text(&DataType::Char(3), "a").ok(), Some(Value::Text("a  ".into())));
        assert!(parse_text(&DataType::Varchar(Some(2)), "abc").is_err());
        assert_eq!(
            parse_text(&DataType::Varchar(Some(2)), "ab  ").ok(),
            Some(Value::Text("ab".into()))
        );
        assert_eq!(txt(Value::Bytea(vec![1, 0xab])), "\\x01ab");
        assert_eq!(parse_text(&DataType::Bytea, "\\x01AB").ok(), Some(Value::Bytea(vec![1, 0xab])));
    }
}
