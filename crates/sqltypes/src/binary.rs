//! Binary-format input and output (PostgreSQL's `*send`/`*recv` formats).
//!
//! Integers and floats are big-endian, timestamps are int64 microseconds
//! since 2000-01-01, dates int32 days, text is raw UTF-8, and numeric is
//! PostgreSQL's base-10000 digit array with weight, sign and display scale.

use bytes::{BufMut, BytesMut};
use num_bigint::Sign;

use crate::numeric::Numeric;
use crate::text::fit_string;
use crate::{err, DataType, Result, Value};

const NUMERIC_POS: u16 = 0x0000;
const NUMERIC_NEG: u16 = 0x4000;
const NUMERIC_NAN: u16 = 0xC000;

fn fixed<const N: usize>(b: &[u8]) -> Result<[u8; N]> {
    <[u8; N]>::try_from(b)
        .map_err(|_| err!(InvalidBinaryRepresentation, "incorrect binary data format"))
}

/// Decodes a binary-format parameter of type `ty`.
pub fn decode_binary(ty: &DataType, b: &[u8]) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => match b {
            [0] => Value::Bool(false),
            [1] => Value::Bool(true),
            _ => return Err(err!(InvalidBinaryRepresentation, "incorrect binary data format")),
        },
        DataType::Int2 => Value::Int2(i16::from_be_bytes(fixed(b)?)),
        DataType::Int4 => Value::Int4(i32::from_be_bytes(fixed(b)?)),
        DataType::Int8 => Value::Int8(i64::from_be_bytes(fixed(b)?)),
        DataType::Float8 => Value::Float8(f64::from_be_bytes(fixed(b)?)),
        DataType::Timestamp => Value::Timestamp(i64::from_be_bytes(fixed(b)?)),
        DataType::TimestampTz => Value::TimestampTz(i64::from_be_bytes(fixed(b)?)),
        DataType::Date => Value::Date(i32::from_be_bytes(fixed(b)?)),
        DataType::Bytea => Value::Bytea(b.to_vec()),
        DataType::Text | DataType::Unknown | DataType::Varchar(_) | DataType::Char(_) => {
            let s = std::str::from_utf8(b).map_err(|_| {
                err!(CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
            })?;
            Value::Text(fit_string(s, ty)?)
        }
        DataType::Numeric(m) => {
            let n = decode_numeric(b)?;
            Value::Numeric(match m {
                Some((p, s)) => n.apply_typmod(*p, *s)?,
                None => n,
            })
        }
    })
}

fn decode_numeric(b: &[u8]) -> Result<Numeric> {
    let bad = || err!(InvalidBinaryRepresentation, "invalid numeric binary data");
    if b.len() < 8 {
        return Err(bad());
    }
    let ndigits = u16::from_be_bytes([b[0], b[1]]) as usize;
    let weight = i16::from_be_bytes([b[2], b[3]]) as i64;
    let sign = u16::from_be_bytes([b[4], b[5]]);
    let dscale = u16::from_be_bytes([b[6], b[7]]) as i64;
    if sign == NUMERIC_NAN {
        return Ok(Numeric::NaN);
    }
    if b.len() != 8 + 2 * ndigits || (sign != NUMERIC_POS && sign != NUMERIC_NEG) || dscale > 1000 {
        return Err(bad());
    }
    let mut s = String::new();
    if sign == NUMERIC_NEG {
        s.push('-');
    }
    let mut digits = String::new();
    for i in 0..ndigits {
        let d = u16::from_be_bytes([b[8 + 2 * i], b[9 + 2 * i]]);
        if d >= 10000 {
            return Err(bad());
        }
        digits.push_str(&format!("{d:04}"));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    // value = 0.digits * 10000^(weight+1)
    let exp10 = (weight + 1) * 4 - digits.len() as i64;
    s.push_str(&digits);
    s.push_str(&format!("e{exp10}"));
    let n = Numeric::parse(&s)?;
    Ok(n.round(dscale))
}

/// Appends the binary form of a non-NULL value.
pub fn write_binary(v: &Value, buf: &mut BytesMut) {
    match v {
        Value::Null => {}
        Value::Bool(b) => buf.put_u8(*b as u8),
        Value::Int2(i) => buf.put_i16(*i),
        Value::Int4(i) => buf.put_i32(*i),
        Value::Int8(i) => buf.put_i64(*i),
        Value::Float8(f) => buf.put_f64(*f),
        Value::Timestamp(t) | Value::TimestampTz(t) => buf.put_i64(*t),
        Value::Date(d) => buf.put_i32(*d),
        Value::Bytea(b) => buf.put_slice(b),
        Value::Text(s) => buf.put_slice(s.as_bytes()),
        Value::Numeric(n) => write_numeric(n, buf),
    }
}

fn write_numeric(n: &Numeric, buf: &mut BytesMut) {
    let dscale = n.scale().clamp(0, 1000) as u16;
    let Some((sign, digits, exp)) = n.sign_digits_exponent() else {
        buf.put_u16(0);
        buf.put_i16(0);
        buf.put_u16(NUMERIC_NAN);
        buf.put_u16(0);
        return;
    };
    if digits.is_empty() {
        buf.put_u16(0);
        buf.put_i16(0);
        buf.put_u16(NUMERIC_POS);
        buf.put_u16(dscale);
        return;
    }
    // value = 0.d1d2... * 10^exp. Align to base-10000 groups: the integer part
    // has `exp` digits; pad on the left so it is a multiple of 4.
    let pad_left = ((4 - exp.rem_euclid(4)) % 4) as usize;
    let mut all = vec![0u8; pad_left];
    all.extend_from_slice(&digits);
    while !all.len().is_multiple_of(4) {
        all.push(0);
    }
    let weight = (exp + pad_left as i64) / 4 - 1;
    let mut groups: Vec<u16> =
        all.chunks(4).map(|c| c.iter().fold(0u16, |a, &d| a * 10 + d as u16)).collect();
    while groups.last() == Some(&0) {
        groups.pop();
    }
    buf.put_u16(groups.len() as u16);
    buf.put_i16(weight as i16);
    buf.put_u16(if sign == Sign::Minus { NUMERIC_NEG } else { NUMERIC_POS });
    buf.put_u16(dscale);
    for g in groups {
        buf.put_u16(g);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ty: DataType, v: Value) {
        let mut b = BytesMut::new();
        write_binary(&v, &mut b);
        assert_eq!(decode_binary(&ty, &b).expect("decodes"), v);
    }

    #[test]
    fn numeric_wire_format() {
        // 12345.678 -> ndigits 3, weight 1, digits [1, 2345, 6780], dscale 3
        let n = Numeric::parse("12345.678").expect("numeric");
        let mut b = BytesMut::new();
        write_binary(&Value::Numeric(n.clone()), &mut b);
        assert_eq!(&b[..], &[0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]);
        round_trip(DataType::Numeric(None), Value::Numeric(n));
        round_trip(DataType::Numeric(None), Value::Numeric(Numeric::parse("-0.0001").expect("n")));
        round_trip(DataType::Numeric(None), Value::Numeric(Numeric::parse("0").expect("n")));
        round_trip(DataType::Numeric(None), Value::Numeric(Numeric::parse("100000").expect("n")));
    }

    #[test]
    fn scalars() {
        round_trip(DataType::Int8, Value::Int8(-5));
        round_trip(DataType::Float8, Value::Float8(1.25));
        round_trip(DataType::Text, Value::Text("héllo".into()));
        round_trip(DataType::Date, Value::Date(-3));
        assert!(decode_binary(&DataType::Int4, &[1, 2]).is_err());
        assert!(decode_binary(&DataType::Text, &[0xff]).is_err());
    }
}
