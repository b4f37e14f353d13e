//! Compact encoding of a row's values for storage.
//!
//! A row is a varint column count followed by one tagged field per column:
//! a tag byte (NULL, or the value's kind) and a fixed-width or
//! length-prefixed payload. The column types come from the catalog at read
//! time; a row written before `ALTER TABLE ADD COLUMN` simply has fewer
//! fields, and the missing trailing columns decode as NULL. Decoding checks
//! every length and never panics on corrupt bytes (XX001 instead).

use crate::numeric::Numeric;
use crate::{err, DataType, Result, Value};

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT: u8 = 3;
const T_FLOAT: u8 = 4;
const T_NUMERIC: u8 = 5;
const T_TEXT: u8 = 6;
const T_BYTES: u8 = 7;

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_zigzag(v: i64, out: &mut Vec<u8>) {
    put_varint(((v << 1) ^ (v >> 63)) as u64, out);
}

/// Appends the encoding of `values` to `out`.
pub fn encode_row(values: &[Value], out: &mut Vec<u8>) {
    put_varint(values.len() as u64, out);
    for v in values {
        match v {
            Value::Null => out.push(T_NULL),
            Value::Bool(false) => out.push(T_FALSE),
            Value::Bool(true) => out.push(T_TRUE),
            Value::Int2(i) => {
                out.push(T_INT);
                put_zigzag(*i as i64, out);
            }
            Value::Int4(i) => {
                out.push(T_INT);
                put_zigzag(*i as i64, out);
            }
            Value::Int8(i) | Value::Timestamp(i) | Value::TimestampTz(i) => {
                out.push(T_INT);
                put_zigzag(*i, out);
            }
            Value::Date(d) => {
                out.push(T_INT);
                put_zigzag(*d as i64, out);
            }
            Value::Float8(f) => {
                out.push(T_FLOAT);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Numeric(n) => {
                out.push(T_NUMERIC);
                let s = n.to_string();
                put_varint(s.len() as u64, out);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Text(s) => {
                out.push(T_TEXT);
                put_varint(s.len() as u64, out);
                out.extend_from_slice(s.as_bytes());
            }
            Value::Bytea(b) => {
                out.push(T_BYTES);
                put_varint(b.len() as u64, out);
                out.extend_from_slice(b);
            }
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
}

fn corrupt() -> crate::ErrorReport {
    err!(DataCorrupted, "corrupt row encoding")
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8> {
        let (&x, rest) = self.b.split_first().ok_or_else(corrupt)?;
        self.b = rest;
        Ok(x)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let x = self.byte()?;
            v |= ((x & 0x7f) as u64) << shift;
            if x & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt())
    }

    fn zigzag(&mut self) -> Result<i64> {
        let u = self.varint()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = usize::try_from(self.varint()?).map_err(|_| corrupt())?;
        if n > self.b.len() {
            return Err(corrupt());
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(head)
    }

    fn value(&mut self, ty: &DataType) -> Result<Value> {
        let tag = self.byte()?;
        Ok(match (tag, ty) {
            (T_NULL, _) => Value::Null,
            (T_FALSE, DataType::Bool) => Value::Bool(false),
            (T_TRUE, DataType::Bool) => Value::Bool(true),
            (T_INT, DataType::Int2) => {
                Value::Int2(i16::try_from(self.zigzag()?).map_err(|_| corrupt())?)
            }
            (T_INT, DataType::Int4) => {
                Value::Int4(i32::try_from(self.zigzag()?).map_err(|_| corrupt())?)
            }
            (T_INT, DataType::Int8) => Value::Int8(self.zigzag()?),
            (T_INT, DataType::Timestamp) => Value::Timestamp(self.zigzag()?),
            (T_INT, DataType::TimestampTz) => Value::TimestampTz(self.zigzag()?),
            (T_INT, DataType::Date) => {
                Value::Date(i32::try_from(self.zigzag()?).map_err(|_| corrupt())?)
            }
            (T_FLOAT, DataType::Float8) => {
                let raw = self.b.get(..8).ok_or_else(corrupt)?;
                let v = f64::from_bits(u64::from_le_bytes(
                    <[u8; 8]>::try_from(raw).map_err(|_| corrupt())?,
                ));
                self.b = &self.b[8..];
                Value::Float8(v)
            }
            (T_NUMERIC, DataType::Numeric(_)) => {
                let s = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?;
                Value::Numeric(Numeric::parse(s).map_err(|_| corrupt())?)
            }
            (
                T_TEXT,
                DataType::Text | DataType::Varchar(_) | DataType::Char(_) | DataType::Unknown,
            ) => {
                Value::Text(std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?.to_string())
            }
            (T_BYTES, DataType::Bytea) => Value::Bytea(self.bytes()?.to_vec()),
            _ => return Err(corrupt()),
        })
    }
}

/// Decodes a row of `types`; missing trailing columns are NULL.
pub fn decode_row(bytes: &[u8], types: &[DataType]) -> Result<Vec<Value>> {
    let mut r = Reader { b: bytes };
    let n = usize::try_from(r.varint()?).map_err(|_| corrupt())?;
    if n > types.len() {
        return Err(corrupt());
    }
    let mut out = Vec::with_capacity(types.len());
    for ty in &types[..n] {
        out.push(r.value(ty)?);
    }
    out.resize(types.len(), Value::Null);
    Ok(out)
}

/// Decodes only column `idx` (skipping the fields before it).
pub fn decode_column(bytes: &[u8], types: &[DataType], idx: usize) -> Result<Value> {
    let mut r = Reader { b: bytes };
    let n = usize::try_from(r.varint()?).map_err(|_| corrupt())?;
    if idx >= n {
        return Ok(Value::Null);
    }
    for ty in types.iter().take(idx) {
        r.value(ty)?;
    }
    r.value(types.get(idx).ok_or_else(corrupt)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_all_types() {
        let types = vec![
            DataType::Bool,
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float8,
            DataType::Numeric(None),
            DataType::Text,
            DataType::Timestamp,
            DataType::Date,
            DataType::Bytea,
            DataType::Int4,
        ];
        let row = vec![
            Value::Bool(true),
            Value::Int2(-3),
            Value::Int4(i32::MIN),
            Value::Int8(i64::MAX),
            Value::Float8(-1.5),
            Value::Numeric(Numeric::parse("12.340").expect("n")),
            Value::Text("héllo".into()),
            Value::Timestamp(123),
            Value::Date(-7),
            Value::Bytea(vec![0, 1, 2]),
            Value::Null,
        ];
        let mut b = Vec::new();
        encode_row(&row, &mut b);
        assert_eq!(decode_row(&b, &types).expect("decodes"), row);
        assert_eq!(decode_column(&b, &types, 6).expect("decodes"), Value::Text("héllo".into()));
    }

    #[test]
    fn missing_trailing_columns_are_null() {
        let mut b = Vec::new();
        encode_row(&[Value::Int4(1)], &mut b);
        let row = decode_row(&b, &[DataType::Int4, DataType::Text]).expect("decodes");
        assert_eq!(row, vec![Value::Int4(1), Value::Null]);
    }

    proptest! {
        #[test]
        fn ints_and_text_round_trip(a in any::<i64>(), s in ".{0,20}", n in proptest::option::of(any::<i32>())) {
            let row = vec![Value::Int8(a), Value::Text(s), n.map(Value::Int4).unwrap_or(Value::Null)];
            let mut b = Vec::new();
            encode_row(&row, &mut b);
            prop_assert_eq!(decode_row(&b, &[DataType::Int8, DataType::Text, DataType::Int4]).expect("decodes"), row);
        }

        #[test]
        fn corrupt_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_row(&bytes, &[DataType::Int4, DataType::Text, DataType::Numeric(None), DataType::Float8]);
        }
    }
}
