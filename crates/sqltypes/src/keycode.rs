//! Order-preserving, self-delimiting encoding of values into key bytes.
//!
//! For any two tuples, comparing their encodings byte by byte gives the same
//! order as comparing the values (NULL first). Each value starts with a
//! marker byte, NULL = 0x00 and non-NULL = 0x01, followed by:
//!
//! - integers (all widths, so int2/int4/int8 keys agree): 8 bytes big-endian
//!   with the sign bit flipped;
//! - float8: IEEE bits, sign bit flipped for positives and all bits flipped
//!   for negatives (NaN normalized to the greatest);
//! - numeric: a class byte (negative / zero / positive / NaN), then the
//!   decimal exponent and digits, inverted for negatives;
//! - text, varchar, char and bytea: bytes with 0x00 escaped as 0x00 0xFF and a
//!   0x00 0x01 terminator, so a string sorts before its extensions;
//! - bool one byte; dates and timestamps as integers.

use num_bigint::Sign;

use crate::numeric::Numeric;
use crate::{err, DataType, Result, Value};

const NULL: u8 = 0x00;
const NOT_NULL: u8 = 0x01;

fn put_i64(i: i64, out: &mut Vec<u8>) {
    out.extend_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes());
}

fn put_bytes(b: &[u8], out: &mut Vec<u8>) {
    for &x in b {
        if x == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(x);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

fn put_f64(f: f64, out: &mut Vec<u8>) {
    let f = if f.is_nan() {
        f64::NAN
    } else if f == 0.0 {
        0.0
    } else {
        f
    };
    let bits = f.to_bits();
    let key = if f.is_nan() {
        u64::MAX
    } else if bits >> 63 == 0 {
        bits ^ (1 << 63)
    } else {
        !bits
    };
    out.extend_from_slice(&key.to_be_bytes());
}

fn put_numeric(n: &Numeric, out: &mut Vec<u8>) {
    let Some((sign, digits, exp)) = n.sign_digits_exponent() else {
        out.push(0x04); // NaN: greatest
        return;
    };
    match sign {
        Sign::NoSign => out.push(0x02),
        Sign::Plus => {
            out.push(0x03);
            put_i64(exp, out);
            for d in &digits {
                out.push(d + 1);
            }
            out.push(0x00);
        }
        Sign::Minus => {
            out.push(0x01);
            put_i64(-exp, out);
            for d in &digits {
                out.push(!(d + 1));
            }
            out.push(0xFF);
        }
    }
}

/// Appends the encoding of `values` (typed by `types`) to `out`.
pub fn encode_key(values: &[Value], _types: &[DataType], out: &mut Vec<u8>) {
    for v in values {
        encode_value(v, out);
    }
}

/// Appends the encoding of one value.
pub fn encode_value(v: &Value, out: &mut Vec<u8>) {
    if v.is_null() {
        out.push(NULL);
        return;
    }
    out.push(NOT_NULL);
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(*b as u8),
        Value::Int2(i) => put_i64(*i as i64, out),
        Value::Int4(i) => put_i64(*i as i64, out),
        Value::Int8(i) => put_i64(*i, out),
        Value::Date(d) => put_i64(*d as i64, out),
        Value::Timestamp(t) | Value::TimestampTz(t) => put_i64(*t, out),
        Value::Float8(f) => put_f64(*f, out),
        Value::Numeric(n) => put_numeric(n, out),
        Value::Text(s) => put_bytes(s.as_bytes(), out),
        Value::Bytea(b) => put_bytes(b, out),
    }
}

fn corrupt() -> crate::ErrorReport {
    err!(DataCorrupted, "corrupt key encoding")
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    if b.len() < n {
        return Err(corrupt());
    }
    let (head, rest) = b.split_at(n);
    *b = rest;
    Ok(head)
}

fn get_i64(b: &mut &[u8]) -> Result<i64> {
    let raw = <[u8; 8]>::try_from(take(b, 8)?).map_err(|_| corrupt())?;
    Ok((u64::from_be_bytes(raw) ^ (1 << 63)) as i64)
}

fn get_bytes(b: &mut &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let x = take(b, 1)?[0];
        if x != 0 {
            out.push(x);
            continue;
        }
        match take(b, 1)?[0] {
            0xFF => out.push(0),
            0x01 => return Ok(out),
            _ => return Err(corrupt()),
        }
    }
}

fn get_numeric(b: &mut &[u8]) -> Result<Numeric> {
    let class = take(b, 1)?[0];
    let (neg, exp) = match class {
        0x04 => return Ok(Numeric::NaN),
        0x02 => return Ok(Numeric::from_i64(0)),
        0x03 => (false, get_i64(b)?),
        0x01 => (true, -get_i64(b)?),
        _ => return Err(corrupt()),
    };
    let mut digits = String::new();
    loop {
        let x = take(b, 1)?[0];
        let d = if neg { !x } else { x };
        if d == 0 {
            break;
        }
        if !(1..=10).contains(&d) {
            return Err(corrupt());
        }
        digits.push((b'0' + d - 1) as char);
    }
    let shift = exp - digits.len() as i64;
    let text = format!("{}{}e{}", if neg { "-" } else { "" }, digits, shift);
    Numeric::parse(&text).map_err(|_| corrupt())
}

/// Decodes values of `types` from the front of `b`, advancing it.
pub fn decode_key(b: &mut &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(types.len());
    for ty in types {
        if take(b, 1)?[0] == NULL {
            out.push(Value::Null);
            continue;
        }
        out.push(match ty {
            DataType::Bool => Value::Bool(take(b, 1)?[0] != 0),
            DataType::Int2 => Value::Int2(i16::try_from(get_i64(b)?).map_err(|_| corrupt())?),
            DataType::Int4 => Value::Int4(i32::try_from(get_i64(b)?).map_err(|_| corrupt())?),
            DataType::Int8 => Value::Int8(get_i64(b)?),
            DataType::Date => Value::Date(i32::try_from(get_i64(b)?).map_err(|_| corrupt())?),
            DataType::Timestamp => Value::Timestamp(get_i64(b)?),
            DataType::TimestampTz => Value::TimestampTz(get_i64(b)?),
            DataType::Float8 => {
                let raw =
                    u64::from_be_bytes(<[u8; 8]>::try_from(take(b, 8)?).map_err(|_| corrupt())?);
                let bits = if raw >> 63 == 1 { raw ^ (1 << 63) } else { !raw };
                Value::Float8(if raw == u64::MAX { f64::NAN } else { f64::from_bits(bits) })
            }
            DataType::Numeric(_) => Value::Numeric(get_numeric(b)?),
            DataType::Bytea => Value::Bytea(get_bytes(b)?),
            DataType::Text | DataType::Varchar(_) | DataType::Char(_) | DataType::Unknown => {
                Value::Text(String::from_utf8(get_bytes(b)?).map_err(|_| corrupt())?)
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::sort_cmp;
    use proptest::prelude::*;

    fn enc(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(v, &mut out);
        out
    }

    fn key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
        // Key order puts NULL first; sort_cmp puts it last.
        match (a.is_null(), b.is_null()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            _ => sort_cmp(a, b),
        }
    }

    fn numeric_strategy() -> impl Strategy<Value = Value> {
        (any::<i64>(), 0u32..8).prop_map(|(m, s)| {
            let text = format!("{m}e-{s}");
            Value::Numeric(Numeric::parse(&text).expect("valid numeric"))
        })
    }

    proptest! {
        #[test]
        fn ints_order(a in any::<i64>(), b in any::<i64>()) {
            let (x, y) = (Value::Int8(a), Value::Int8(b));
            prop_assert_eq!(enc(&x).cmp(&enc(&y)), key_order(&x, &y));
        }

        #[test]
        fn floats_order(a in any::<f64>(), b in any::<f64>()) {
            let (x, y) = (Value::Float8(a), Value::Float8(b));
            prop_assert_eq!(enc(&x).cmp(&enc(&y)), key_order(&x, &y));
        }

        #[test]
        fn strings_order(a in ".{0,8}", b in ".{0,8}") {
            let (x, y) = (Value::Text(a), Value::Text(b));
            prop_assert_eq!(enc(&x).cmp(&enc(&y)), key_order(&x, &y));
        }

        #[test]
        fn bytes_order(a in proptest::collection::vec(any::<u8>(), 0..6), b in proptest::collection::vec(any::<u8>(), 0..6)) {
            let (x, y) = (Value::Bytea(a), Value::Bytea(b));
            prop_assert_eq!(enc(&x).cmp(&enc(&y)), key_order(&x, &y));
        }

        #[test]
        fn numerics_order_and_round_trip(x in numeric_strategy(), y in numeric_strategy()) {
            prop_assert_eq!(enc(&x).cmp(&enc(&y)), key_order(&x, &y));
            let e = enc(&x);
            let back = decode_key(&mut e.as_slice(), &[DataType::Numeric(None)]).expect("decodes");
            prop_assert_eq!(sort_cmp(&back[0], &x), std::cmp::Ordering::Equal);
        }

        #[test]
        fn tuples_round_trip_and_order(a in proptest::option::of(any::<i32>()), s in ".{0,6}", b in proptest::option::of(any::<i32>()), t in ".{0,6}") {
            let types = [DataType::Int4, DataType::Text];
            let x = vec![a.map(Value::Int4).unwrap_or(Value::Null), Value::Text(s)];
            let y = vec![b.map(Value::Int4).unwrap_or(Value::Null), Value::Text(t)];
            let (mut ex, mut ey) = (Vec::new(), Vec::new());
            encode_key(&x, &types, &mut ex);
            encode_key(&y, &types, &mut ey);
            let expect = key_order(&x[0], &y[0]).then_with(|| key_order(&x[1], &y[1]));
            prop_assert_eq!(ex.cmp(&ey), expect);
            prop_assert_eq!(decode_key(&mut ex.as_slice(), &types).expect("decodes"), x);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = decode_key(&mut bytes.as_slice(), &[DataType::Numeric(None), DataType::Text, DataType::Int8]);
        }
    }

    #[test]
    fn int_widths_agree() {
        assert_eq!(enc(&Value::Int2(7)), enc(&Value::Int8(7)));
        assert!(enc(&Value::Null) < enc(&Value::Int8(i64::MIN)));
    }
}
