//! Order-preserving, self-delimiting encoding of values into key bytes.
//!
//! For any two tuples, comparing their encodings byte by byte gives the same
//! order as comparing the values with NULL first (the reverse of
//! [`crate::ops::sort_cmp`]'s NULLS LAST, so callers scanning ascending keys
//! for `ORDER BY ... NULLS LAST` must handle NULL themselves). Values that
//! compare equal encode identically (1.0 and 1.00, -0.0 and 0.0, 'a' and
//! 'a  ' in a char(n) column), which is what unique indexes need. Each value
//! starts with a marker byte, NULL = 0x00 and non-NULL = 0x01, followed by:
//!
//! - integers (all widths, so int2/int4/int8 keys agree): 8 bytes big-endian
//!   with the sign bit flipped;
//! - float8: IEEE bits, sign bit flipped for positives and all bits flipped
//!   for negatives (-0 normalized to 0, NaN to the greatest);
//! - numeric: a class byte (-Infinity 0x00, negative 0x01, zero 0x02,
//!   positive 0x03, NaN 0x04), then for nonzero values the decimal exponent
//!   and the significant digits (each + 1, 0x00 terminated), all inverted
//!   for negatives; Infinity is a positive with exponent `i64::MAX`. The
//!   display scale is not kept;
//! - text, varchar, char and bytea: bytes with 0x00 escaped as 0x00 0xFF and a
//!   0x00 0x01 terminator, so a string sorts before its extensions; char(n)
//!   drops its trailing blanks (and decoding pads them back);
//! - bool one byte; dates and timestamps as integers (infinities are the
//!   extreme integers, so they sort at the ends);
//! - arrays: each element as 0x01 and its encoding, or 0x02 for a NULL
//!   element (NULL elements sort after the others, as in `array_cmp`),
//!   then 0x00 (so a prefix sorts first), the dimension count and each
//!   dimension's length and lower bound;
//! - records: each field as an array element is, without the trailer;
//! - ranges: 0x00 for empty, else 0x01, the lower bound (0x00 infinite, or
//!   0x01, the value and 0x00 inclusive / 0x01 exclusive) and the upper
//!   bound (0x01, the value and 0x00 exclusive / 0x01 inclusive, or 0x02
//!   infinite), which is `range_cmp`'s order.

use num_bigint::Sign;

use crate::numeric::Numeric;
use crate::{err, DataType, Result, Value};

const NULL: u8 = 0x00;
const NOT_NULL: u8 = 0x01;
const ELEMS_END: u8 = 0x00;
const ELEM: u8 = 0x01;
const ELEM_NULL: u8 = 0x02;

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
        match n {
            Numeric::NegInf => out.push(0x00),
            // Infinity: a positive number with an exponent no finite value has.
            Numeric::PosInf => {
                out.push(0x03);
                put_i64(i64::MAX, out);
                out.push(0x00);
            }
            _ => out.push(0x04), // NaN: greatest
        }
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

/// Appends the ascending encoding of `values` (typed by `types`) to `out`.
/// A value without a matching type is encoded by its own kind.
pub fn encode_key(values: &[Value], types: &[DataType], out: &mut Vec<u8>) {
    for (i, v) in values.iter().enumerate() {
        encode_typed(v, types.get(i), out);
    }
}

/// Appends the encoding of `values` with a direction per column: a `true`
/// in `desc` encodes that column descending by inverting its bytes (the
/// encoding is prefix-free, so this reverses its order). NULL then sorts
/// after every value of that column, i.e. `DESC NULLS LAST`.
pub fn encode_key_dirs(values: &[Value], types: &[DataType], desc: &[bool], out: &mut Vec<u8>) {
    for (i, v) in values.iter().enumerate() {
        let start = out.len();
        encode_typed(v, types.get(i), out);
        if desc.get(i).copied().unwrap_or(false) {
            for b in &mut out[start..] {
                *b = !*b;
            }
        }
    }
}

fn encode_typed(v: &Value, ty: Option<&DataType>, out: &mut Vec<u8>) {
    match (v, ty) {
        // char(n) compares with trailing blanks ignored, so encode without them.
        (Value::Text(s), Some(DataType::Char(_))) => {
            out.push(NOT_NULL);
            put_bytes(s.trim_end_matches(' ').as_bytes(), out);
        }
        _ => encode_value(v, out),
    }
}

/// Appends the encoding of one value by its own kind (no char(n) handling).
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
        Value::Oid(_) | Value::Reg(_) => put_i64(v.as_oid().unwrap_or(0) as i64, out),
        Value::Timestamp(t) | Value::TimestampTz(t) => put_i64(*t, out),
        Value::Float8(f) => put_f64(*f, out),
        Value::Float4(f) => put_f64(*f as f64, out),
        Value::Enum(e) => put_f64(e.sort() as f64, out),
        Value::Time(t) => put_i64(*t, out),
        Value::TimeTz(t, east) => {
            // timetz order: the UTC instant, then the zone (west ascending).
            put_i64(t - *east as i64 * 1_000_000, out);
            put_i64(-(*east as i64), out);
        }
        Value::Interval(iv) => {
            // Only the comparison span (months of 30 days), so intervals
            // PostgreSQL calls equal ('1 day', '24 hours') share a key.
            let span = iv.span();
            put_i64((span >> 64) as i64, out);
            out.extend_from_slice(&(span as u64).to_be_bytes());
        }
        Value::Uuid(u) => out.extend_from_slice(u),
        Value::Inet(i) => i.key(out),
        Value::Json(s) => put_bytes(s.as_bytes(), out),
        Value::Jsonb(j) => put_json(j, out),
        Value::Numeric(n) => put_numeric(n, out),
        Value::Text(s) => put_bytes(s.as_bytes(), out),
        Value::Bytea(b) => put_bytes(b, out),
        Value::Array(a) => {
            for item in &a.items {
                if item.is_null() {
                    out.push(ELEM_NULL);
                } else {
                    // Elements keep char(n) padding: arrays compare them as stored.
                    out.push(ELEM);
                    encode_value(item, out);
                }
            }
            out.push(ELEMS_END);
            out.push(a.dims.len() as u8);
            for d in &a.dims {
                put_i64(d.len as i64, out);
            }
            for d in &a.dims {
                put_i64(d.lower as i64, out);
            }
        }
        // Fields as array elements are (NULL fields after the others, as
        // in `record_cmp`); a record type fixes the field count.
        Value::Record(r) => {
            for v in &r.values {
                if v.is_null() {
                    out.push(ELEM_NULL);
                } else {
                    out.push(ELEM);
                    encode_value(v, out);
                }
            }
        }
        Value::Range(r) => {
            let Some((l, u)) = &r.bounds else {
                out.push(0x00);
                return;
            };
            out.push(0x01);
            match &l.value {
                None => out.push(0x00),
                Some(v) => {
                    out.push(0x01);
                    encode_value(v, out);
                    out.push(!l.inclusive as u8);
                }
            }
            match &u.value {
                None => out.push(0x02),
                Some(v) => {
                    out.push(0x01);
                    encode_value(v, out);
                    out.push(u.inclusive as u8);
                }
            }
        }
    }
}

/// jsonb in key order: a kind byte in [`crate::Json::compare`]'s rank
/// order, then containers' member counts before their members, so byte
/// order is jsonb order.
fn put_json(j: &crate::Json, out: &mut Vec<u8>) {
    use crate::Json;
    match j {
        Json::Null => out.push(0),
        Json::String(s) => {
            out.push(1);
            put_bytes(s.as_bytes(), out);
        }
        Json::Number(n) => {
            out.push(2);
            put_numeric(n, out);
        }
        Json::Bool(b) => out.extend_from_slice(&[3, *b as u8]),
        Json::Array(items) => {
            out.push(4);
            put_i64(items.len() as i64, out);
            for v in items {
                put_json(v, out);
            }
        }
        Json::Object(pairs) => {
            out.push(5);
            put_i64(pairs.len() as i64, out);
            for (k, v) in pairs {
                put_bytes(k.as_bytes(), out);
                put_json(v, out);
            }
        }
    }
}

fn get_json(b: &mut &[u8], depth: usize) -> Result<crate::Json> {
    use crate::Json;
    if depth > 10_000 {
        return Err(corrupt());
    }
    let text = |b: &mut &[u8]| String::from_utf8(get_bytes(b)?).map_err(|_| corrupt());
    Ok(match take(b, 1)?[0] {
        0 => Json::Null,
        1 => Json::String(text(b)?),
        2 => Json::Number(get_numeric(b)?),
        3 => Json::Bool(take(b, 1)?[0] != 0),
        4 => {
            let n = usize::try_from(get_i64(b)?).map_err(|_| corrupt())?;
            if n > b.len() {
                return Err(corrupt());
            }
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(get_json(b, depth + 1)?);
            }
            Json::Array(items)
        }
        5 => {
            let n = usize::try_from(get_i64(b)?).map_err(|_| corrupt())?;
            if n > b.len() {
                return Err(corrupt());
            }
            let mut pairs = Vec::with_capacity(n);
            for _ in 0..n {
                let k = text(b)?;
                pairs.push((k, get_json(b, depth + 1)?));
            }
            Json::Object(pairs)
        }
        _ => return Err(corrupt()),
    })
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
        0x00 => return Ok(Numeric::NegInf),
        0x02 => return Ok(Numeric::from_i64(0)),
        0x03 => match get_i64(b)? {
            i64::MAX if take(b, 1)? == [0x00] => return Ok(Numeric::PosInf),
            i64::MAX => return Err(corrupt()),
            exp => (false, exp),
        },
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

/// Decodes ascending-encoded values of `types` from the front of `b`,
/// advancing it. Numerics come back without their display scale (1.50
/// decodes as 1.5, an equal value) because equal values must encode alike.
/// Corrupt bytes are an XX001 error, never a panic.
pub fn decode_key(b: &mut &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    types.iter().map(|ty| decode_one(b, ty)).collect()
}

/// Decodes values encoded by [`encode_key_dirs`] with the same directions.
pub fn decode_key_dirs(b: &mut &[u8], types: &[DataType], desc: &[bool]) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(types.len());
    for (i, ty) in types.iter().enumerate() {
        if !desc.get(i).copied().unwrap_or(false) {
            out.push(decode_one(b, ty)?);
            continue;
        }
        // Undo the inversion on a copy of the rest; values are
        // self-delimiting, so the consumed length tells how far to advance.
        let flipped: Vec<u8> = b.iter().map(|x| !x).collect();
        let mut cur = flipped.as_slice();
        out.push(decode_one(&mut cur, ty)?);
        let used = flipped.len() - cur.len();
        *b = &b[used..];
    }
    Ok(out)
}

fn decode_one(b: &mut &[u8], ty: &DataType) -> Result<Value> {
    if take(b, 1)?[0] == NULL {
        return Ok(Value::Null);
    }
    decode_body(b, ty)
}

/// Decodes a non-NULL value after its marker byte.
fn decode_body(b: &mut &[u8], ty: &DataType) -> Result<Value> {
    Ok(match ty {
        DataType::Bool => Value::Bool(take(b, 1)?[0] != 0),
        DataType::Int2 => Value::Int2(i16::try_from(get_i64(b)?).map_err(|_| corrupt())?),
        DataType::Int4 => Value::Int4(i32::try_from(get_i64(b)?).map_err(|_| corrupt())?),
        DataType::Int8 => Value::Int8(get_i64(b)?),
        DataType::Date => Value::Date(i32::try_from(get_i64(b)?).map_err(|_| corrupt())?),
        DataType::Oid | DataType::Reg(_) => {
            let oid = u32::try_from(get_i64(b)?).map_err(|_| corrupt())?;
            crate::cast::cast(Value::Oid(oid), ty).map_err(|_| corrupt())?
        }
        DataType::Timestamp => Value::Timestamp(get_i64(b)?),
        DataType::TimestampTz => Value::TimestampTz(get_i64(b)?),
        DataType::Float8 => {
            let raw = u64::from_be_bytes(<[u8; 8]>::try_from(take(b, 8)?).map_err(|_| corrupt())?);
            let bits = if raw >> 63 == 1 { raw ^ (1 << 63) } else { !raw };
            Value::Float8(if raw == u64::MAX { f64::NAN } else { f64::from_bits(bits) })
        }
        DataType::Numeric(_) => Value::Numeric(get_numeric(b)?),
        DataType::Enum(t) => match decode_body(b, &DataType::Float8)? {
            Value::Float8(f) => {
                let l = t.by_sort(f as f32).ok_or_else(corrupt)?;
                crate::enums::from_label_oid(t, l.oid).ok_or_else(corrupt)?
            }
            _ => return Err(corrupt()),
        },
        DataType::Float4 => match decode_body(b, &DataType::Float8)? {
            Value::Float8(f) => Value::Float4(f as f32),
            _ => return Err(corrupt()),
        },
        DataType::Time => Value::Time(get_i64(b)?),
        DataType::TimeTz => {
            let utc = get_i64(b)?;
            let east = -i32::try_from(get_i64(b)?).map_err(|_| corrupt())?;
            Value::TimeTz(utc + east as i64 * 1_000_000, east)
        }
        DataType::Interval => {
            // Keys keep only the span; it decodes justified into months,
            // days and microseconds (an equal interval).
            let hi = get_i64(b)? as i128;
            let lo = u64::from_be_bytes(<[u8; 8]>::try_from(take(b, 8)?).map_err(|_| corrupt())?);
            let span = (hi << 64) | lo as i128;
            let day = crate::datetime::USECS_PER_DAY as i128;
            let total_days = span.div_euclid(day);
            let fit = |x: i128| x.clamp(i32::MIN as i128, i32::MAX as i128);
            let months = fit(total_days / 30);
            let days = fit(total_days - months * 30);
            let micros = i64::try_from(span - (months * 30 + days) * day).map_err(|_| corrupt())?;
            Value::Interval(crate::Interval { months: months as i32, days: days as i32, micros })
        }
        DataType::Uuid => Value::Uuid(<[u8; 16]>::try_from(take(b, 16)?).map_err(|_| corrupt())?),
        DataType::Inet | DataType::Cidr => {
            // family, masked address, bits, address (Inet::key).
            let len = match take(b, 1)?[0] {
                4 => 4,
                6 => 16,
                _ => return Err(corrupt()),
            };
            take(b, len)?;
            let bits = take(b, 1)?[0];
            let bytes = take(b, len)?;
            let addr = match len {
                4 => std::net::IpAddr::from(<[u8; 4]>::try_from(bytes).map_err(|_| corrupt())?),
                _ => std::net::IpAddr::from(<[u8; 16]>::try_from(bytes).map_err(|_| corrupt())?),
            };
            Value::Inet(crate::inet::Inet { addr, bits, cidr: *ty == DataType::Cidr })
        }
        DataType::Json => Value::Json(String::from_utf8(get_bytes(b)?).map_err(|_| corrupt())?),
        DataType::Range(k) => {
            if take(b, 1)?[0] == 0x00 {
                return Ok(crate::range::RangeValue::empty(*k).into_value());
            }
            let sub = k.subtype();
            let bound = |b: &mut &[u8], lower: bool| -> Result<crate::range::Bound> {
                if take(b, 1)?[0] != 0x01 {
                    return Ok(crate::range::Bound::infinite());
                }
                let value = Some(decode_one(b, &sub)?);
                let flag = take(b, 1)?[0] != 0;
                Ok(crate::range::Bound { value, inclusive: flag != lower })
            };
            let lower = bound(b, true)?;
            let upper = bound(b, false)?;
            let range = crate::range::make(*k, lower, upper, false).map_err(|_| corrupt())?;
            range.into_value()
        }
        DataType::Jsonb => Value::Jsonb(Box::new(get_json(b, 0)?)),
        DataType::Bytea => Value::Bytea(get_bytes(b)?),
        DataType::Char(n) => {
            let mut s = String::from_utf8(get_bytes(b)?).map_err(|_| corrupt())?;
            let len = s.chars().count();
            s.extend(std::iter::repeat_n(' ', (*n as usize).saturating_sub(len)));
            Value::Text(s)
        }
        DataType::Text
        | DataType::Varchar(_)
        | DataType::Unknown
        | DataType::QChar
        | DataType::Refcursor
        | DataType::Name
        | DataType::Void => Value::Text(String::from_utf8(get_bytes(b)?).map_err(|_| corrupt())?),
        DataType::Int2Vector | DataType::OidVector => {
            let array = ty.elem().unwrap_or(&DataType::Int2).array_of();
            crate::cast::cast(decode_body(b, &array)?, ty).map_err(|_| corrupt())?
        }
        DataType::Record(t) => {
            let mut values = Vec::with_capacity(t.fields.len());
            for (_, f) in &t.fields {
                values.push(match take(b, 1)?[0] {
                    ELEM_NULL => Value::Null,
                    ELEM => decode_one(b, f)?,
                    _ => return Err(corrupt()),
                });
            }
            crate::RecordValue::value(t.clone(), values)
        }
        DataType::Array(elem) => {
            let mut items = Vec::new();
            loop {
                match take(b, 1)?[0] {
                    ELEMS_END => break,
                    ELEM_NULL => items.push(Value::Null),
                    ELEM => items.push(decode_one(b, elem)?),
                    _ => return Err(corrupt()),
                }
            }
            let ndims = take(b, 1)?[0] as usize;
            if ndims > crate::array::MAXDIM {
                return Err(corrupt());
            }
            let mut dims = Vec::with_capacity(ndims);
            for _ in 0..ndims {
                let len = i32::try_from(get_i64(b)?).map_err(|_| corrupt())?;
                dims.push(crate::array::Dim { len, lower: 1 });
            }
            for d in &mut dims {
                d.lower = i32::try_from(get_i64(b)?).map_err(|_| corrupt())?;
            }
            let count: i64 = if dims.is_empty() {
                0
            } else {
                dims.iter().fold(1i64, |n, d| n.saturating_mul(d.len as i64))
            };
            if count != items.len() as i64 {
                return Err(corrupt());
            }
            Value::Array(Box::new(crate::array::ArrayValue {
                elem: (**elem).clone(),
                dims,
                items,
                vector: false,
            }))
        }
    })
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;
    use crate::arb;
    use crate::ops::sort_cmp;
    use proptest::prelude::*;

    fn enc(v: &Value, ty: &DataType) -> Vec<u8> {
        let mut out = Vec::new();
        encode_key(std::slice::from_ref(v), std::slice::from_ref(ty), &mut out);
        out
    }

    /// The order keys must have: NULL first, char(n) without its padding,
    /// everything else as ORDER BY sorts it.
    fn key_order(a: &Value, b: &Value, ty: &DataType) -> Ordering {
        match (a, b, ty) {
            (Value::Null, Value::Null, _) => Ordering::Equal,
            (Value::Null, _, _) => Ordering::Less,
            (_, Value::Null, _) => Ordering::Greater,
            (Value::Text(x), Value::Text(y), DataType::Char(_)) => {
                x.trim_end_matches(' ').cmp(y.trim_end_matches(' '))
            }
            _ => sort_cmp(a, b),
        }
    }

    fn tuple_order(a: &[Value], b: &[Value], types: &[DataType], desc: &[bool]) -> Ordering {
        for (i, ty) in types.iter().enumerate() {
            let o = key_order(&a[i], &b[i], ty);
            let o = if desc[i] { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Decoded keys equal the originals as SQL values (numerics lose only
    /// their display scale, -0.0 becomes 0.0).
    fn equivalent(a: &Value, b: &Value, ty: &DataType) -> bool {
        match (a, b) {
            (Value::Null, Value::Null) => true,
            (Value::Null, _) | (_, Value::Null) => false,
            (Value::Text(x), Value::Text(y)) if matches!(ty, DataType::Char(_)) => x == y,
            _ => std::mem::discriminant(a) == std::mem::discriminant(b) && sort_cmp(a, b).is_eq(),
        }
    }

    proptest! {
        #[test]
        fn pairs_order_and_round_trip((ty, a, b) in arb::typed_pair()) {
            let (ea, eb) = (enc(&a, &ty), enc(&b, &ty));
            prop_assert_eq!(ea.cmp(&eb), key_order(&a, &b, &ty), "{:?} vs {:?}", a, b);
            let back = decode_key(&mut ea.as_slice(), std::slice::from_ref(&ty)).expect("decodes");
            prop_assert!(equivalent(&back[0], &a, &ty), "{:?} -> {:?}", a, back[0]);
        }

        #[test]
        fn tuples_order_and_round_trip(
            (types, a, b) in arb::row_pair(),
            dirs in prop::collection::vec(any::<bool>(), 4),
        ) {
            let asc = vec![false; types.len()];
            for desc in [&asc[..], &dirs[..types.len()]] {
                let (mut ea, mut eb) = (Vec::new(), Vec::new());
                encode_key_dirs(&a, &types, desc, &mut ea);
                encode_key_dirs(&b, &types, desc, &mut eb);
                prop_assert_eq!(ea.cmp(&eb), tuple_order(&a, &b, &types, desc));
                let mut rest = ea.as_slice();
                let back = decode_key_dirs(&mut rest, &types, desc).expect("decodes");
                prop_assert!(rest.is_empty());
                for ((x, y), ty) in back.iter().zip(&a).zip(&types) {
                    prop_assert!(equivalent(x, y, ty), "{:?} -> {:?}", y, x);
                }
            }
            let (mut plain, mut dirs_none) = (Vec::new(), Vec::new());
            encode_key(&a, &types, &mut plain);
            encode_key_dirs(&a, &types, &asc, &mut dirs_none);
            prop_assert_eq!(plain, dirs_none);
        }

        #[test]
        fn decode_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..40), types in prop::collection::vec(arb::data_type(), 1..4)) {
            let _ = decode_key(&mut bytes.as_slice(), &types);
            let _ = decode_key_dirs(&mut bytes.as_slice(), &types, &[true, false, true]);
        }
    }

    #[test]
    fn int_widths_agree() {
        assert_eq!(enc(&Value::Int2(7), &DataType::Int2), enc(&Value::Int8(7), &DataType::Int8));
        assert!(enc(&Value::Null, &DataType::Int8) < enc(&Value::Int8(i64::MIN), &DataType::Int8));
    }

    #[test]
    fn equal_values_encode_alike() {
        let n = |s: &str| Value::Numeric(Numeric::parse(s).expect("numeric"));
        let num = DataType::Numeric(None);
        assert_eq!(enc(&n("1.50"), &num), enc(&n("1.5"), &num));
        assert_eq!(enc(&n("0.00"), &num), enc(&n("0"), &num));
        assert_eq!(
            enc(&Value::Float8(-0.0), &DataType::Float8),
            enc(&Value::Float8(0.0), &DataType::Float8)
        );
        let c = DataType::Char(3);
        assert_eq!(enc(&Value::Text("a  ".into()), &c), enc(&Value::Text("a".into()), &c));
        assert!(enc(&n("-Infinity"), &num) < enc(&n("-1e100"), &num));
        assert!(enc(&n("1e100"), &num) < enc(&n("Infinity"), &num));
        assert!(enc(&n("Infinity"), &num) < enc(&n("NaN"), &num));
    }
}
