//! Compact encoding of a row's values for storage.
//!
//! A row is a varint column count followed by one tagged field per column:
//!
//! | tag | value                    | payload                                 |
//! |-----|--------------------------|-----------------------------------------|
//! | 0   | NULL                     | none                                    |
//! | 1/2 | false / true             | none                                    |
//! | 3   | int2/4/8, date, timestamp| zigzag varint                           |
//! | 4   | float8                   | 8 bytes, IEEE bits little-endian        |
//! | 5   | numeric (any)            | varint length + its text form           |
//! | 6   | text, varchar, char      | varint length + UTF-8 bytes             |
//! | 7   | bytea                    | varint length + bytes                   |
//! | 8   | numeric fitting i64      | varint scale + zigzag unscaled value    |
//! | 9   | array                    | varint ndims, zigzag length and lower   |
//! |     |                          | bound per dimension, tagged elements    |
//! | 13  | record                   | varint field count, tagged fields       |
//! | 14  | range                    | flags byte (as range_send's), tagged    |
//! |     |                          | finite bounds                           |
//!
//! The column types come from the catalog at read time, so the tags only
//! say how to read the payload (an int written as int2 reads back as int8
//! after a widening ALTER). A row written before `ALTER TABLE ADD COLUMN`
//! simply has fewer fields, and the missing trailing columns decode as NULL
//! (the caller fills in defaults). Decoding checks every length and tag
//! against the expected type and never panics on corrupt bytes: it fails
//! with XX001. Small values stay small: an int4 column holding 5 takes two
//! bytes, and decoding allocates nothing beyond the values themselves.

use num_traits::ToPrimitive;

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
/// A finite numeric whose unscaled value fits i64: varint scale, zigzag value.
const T_NUM_SMALL: u8 = 8;
const T_ARRAY: u8 = 9;
const T_FLOAT4: u8 = 10;
const T_TIMETZ: u8 = 11;
const T_INTERVAL: u8 = 12;
const T_RECORD: u8 = 13;
const T_RANGE: u8 = 14;

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

fn put_numeric(n: &Numeric, out: &mut Vec<u8>) {
    if let Some((unscaled, scale)) = n.value().map(|d| d.as_bigint_and_exponent()) {
        if let Some(i) = unscaled.to_i64() {
            out.push(T_NUM_SMALL);
            put_varint(scale as u64, out);
            put_zigzag(i, out);
            return;
        }
    }
    // Specials and big values as their text form (which keeps the scale).
    out.push(T_NUMERIC);
    let s = n.to_string();
    put_varint(s.len() as u64, out);
    out.extend_from_slice(s.as_bytes());
}

/// Appends the encoding of `values` to `out`.
pub fn encode_row(values: &[Value], out: &mut Vec<u8>) {
    put_varint(values.len() as u64, out);
    for v in values {
        put_value(v, out);
    }
}

fn put_value(v: &Value, out: &mut Vec<u8>) {
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
        Value::Int8(i) | Value::Timestamp(i) | Value::TimestampTz(i) | Value::Time(i) => {
            out.push(T_INT);
            put_zigzag(*i, out);
        }
        Value::Date(d) => {
            out.push(T_INT);
            put_zigzag(*d as i64, out);
        }
        Value::Oid(_) | Value::Reg(_) => {
            out.push(T_INT);
            put_zigzag(v.as_oid().unwrap_or(0) as i64, out);
        }
        Value::Enum(e) => {
            out.push(T_INT);
            put_zigzag(e.oid as i64, out);
        }
        Value::Float8(f) => {
            out.push(T_FLOAT);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::Float4(f) => {
            out.push(T_FLOAT4);
            out.extend_from_slice(&f.to_bits().to_le_bytes());
        }
        Value::TimeTz(t, z) => {
            out.push(T_TIMETZ);
            put_zigzag(*t, out);
            put_zigzag(*z as i64, out);
        }
        Value::Interval(iv) => {
            out.push(T_INTERVAL);
            put_zigzag(iv.months as i64, out);
            put_zigzag(iv.days as i64, out);
            put_zigzag(iv.micros, out);
        }
        Value::Uuid(u) => {
            out.push(T_BYTES);
            put_varint(16, out);
            out.extend_from_slice(u);
        }
        Value::Inet(i) => {
            let mut b = Vec::with_capacity(20);
            i.to_binary(&mut b);
            out.push(T_BYTES);
            put_varint(b.len() as u64, out);
            out.extend_from_slice(&b);
        }
        Value::Json(s) => {
            out.push(T_TEXT);
            put_varint(s.len() as u64, out);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Jsonb(j) => {
            let s = j.to_text();
            out.push(T_TEXT);
            put_varint(s.len() as u64, out);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Numeric(n) => put_numeric(n, out),
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
        Value::Array(a) => {
            out.push(T_ARRAY);
            put_varint(a.dims.len() as u64, out);
            for d in &a.dims {
                put_zigzag(d.len as i64, out);
                put_zigzag(d.lower as i64, out);
            }
            for item in &a.items {
                put_value(item, out);
            }
        }
        Value::Record(r) => {
            out.push(T_RECORD);
            encode_row(&r.values, out);
        }
        Value::Range(r) => {
            out.push(T_RANGE);
            out.push(r.flags());
            for b in [r.lower(), r.upper()].into_iter().flatten() {
                if let Some(v) = &b.value {
                    put_value(v, out);
                }
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
            (T_INT, DataType::Time) => Value::Time(self.zigzag()?),
            (T_TIMETZ, DataType::TimeTz) => {
                let t = self.zigzag()?;
                Value::TimeTz(t, i32::try_from(self.zigzag()?).map_err(|_| corrupt())?)
            }
            (T_INTERVAL, DataType::Interval) => {
                let months = i32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
                let days = i32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
                Value::Interval(crate::Interval { months, days, micros: self.zigzag()? })
            }
            (T_FLOAT4, DataType::Float4) => {
                let raw = self.b.get(..4).ok_or_else(corrupt)?;
                let v = f32::from_bits(u32::from_le_bytes(
                    <[u8; 4]>::try_from(raw).map_err(|_| corrupt())?,
                ));
                self.b = &self.b[4..];
                Value::Float4(v)
            }
            (T_BYTES, DataType::Uuid) => {
                Value::Uuid(<[u8; 16]>::try_from(self.bytes()?).map_err(|_| corrupt())?)
            }
            (T_BYTES, DataType::Inet | DataType::Cidr) => {
                let cidr = *ty == DataType::Cidr;
                Value::Inet(
                    crate::inet::Inet::from_binary(self.bytes()?, cidr).map_err(|_| corrupt())?,
                )
            }
            (T_TEXT, DataType::Json) => {
                Value::Json(std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?.to_string())
            }
            (T_TEXT, DataType::Jsonb) => {
                let s = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?;
                Value::Jsonb(Box::new(crate::json::parse_jsonb(s).map_err(|_| corrupt())?))
            }
            (T_INT, DataType::Enum(t)) => {
                let oid = u32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
                crate::enums::from_label_oid(t, oid).ok_or_else(corrupt)?
            }
            (T_INT, DataType::Oid) => {
                Value::Oid(u32::try_from(self.zigzag()?).map_err(|_| corrupt())?)
            }
            (T_INT, DataType::Reg(_)) => {
                let oid = u32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
                crate::cast::cast(Value::Oid(oid), ty).map_err(|_| corrupt())?
            }
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
            (T_NUM_SMALL, DataType::Numeric(_)) => {
                let scale = self.varint()?;
                if scale > 16383 {
                    return Err(corrupt());
                }
                Value::Numeric(Numeric::from_parts(self.zigzag()?.into(), scale as i64))
            }
            (T_NUMERIC, DataType::Numeric(_)) => {
                let s = std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?;
                Value::Numeric(Numeric::parse(s).map_err(|_| corrupt())?)
            }
            (
                T_TEXT,
                DataType::Text
                | DataType::Varchar(_)
                | DataType::Char(_)
                | DataType::Unknown
                | DataType::Name,
            ) => {
                Value::Text(std::str::from_utf8(self.bytes()?).map_err(|_| corrupt())?.to_string())
            }
            (T_BYTES, DataType::Bytea) => Value::Bytea(self.bytes()?.to_vec()),
            (T_ARRAY, DataType::Array(elem)) => self.array(elem)?,
            (T_RECORD, DataType::Record(t)) => {
                if self.varint()? != t.fields.len() as u64 {
                    return Err(corrupt());
                }
                let mut values = Vec::with_capacity(t.fields.len());
                for (_, f) in &t.fields {
                    values.push(self.value(f)?);
                }
                crate::RecordValue::value(t.clone(), values)
            }
            (T_RANGE, DataType::Range(k)) => {
                let flags = self.byte()?;
                let sub = k.subtype();
                let range = crate::range::from_flags(*k, flags, || self.value(&sub));
                range.map_err(|_| corrupt())?.into_value()
            }
            (T_ARRAY, DataType::Int2Vector | DataType::OidVector) => {
                let a = self.array(ty.elem().unwrap_or(&DataType::Int2))?;
                crate::cast::cast(a, ty).map_err(|_| corrupt())?
            }
            _ => return Err(corrupt()),
        })
    }
}

impl Reader<'_> {
    fn array(&mut self, elem: &DataType) -> Result<Value> {
        let ndims = self.varint()?;
        if ndims > crate::array::MAXDIM as u64 {
            return Err(corrupt());
        }
        let mut dims = Vec::with_capacity(ndims as usize);
        let mut count: u64 = if ndims == 0 { 0 } else { 1 };
        for _ in 0..ndims {
            let len = i32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
            let lower = i32::try_from(self.zigzag()?).map_err(|_| corrupt())?;
            count = count.saturating_mul(u64::try_from(len).map_err(|_| corrupt())?);
            dims.push(crate::array::Dim { len, lower });
        }
        // Every element takes at least its tag byte.
        if count > self.b.len() as u64 {
            return Err(corrupt());
        }
        let mut items = Vec::with_capacity(count as usize);
        for _ in 0..count {
            items.push(self.value(elem)?);
        }
        Ok(Value::Array(Box::new(crate::array::ArrayValue {
            elem: elem.clone(),
            dims,
            items,
            vector: false,
        })))
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
    use crate::arb;
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
            DataType::Numeric(None),
            DataType::Numeric(None),
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
            Value::Numeric(Numeric::parse("123456789012345678901234567890.5").expect("n")),
            Value::Numeric(Numeric::NaN),
        ];
        let mut b = Vec::new();
        encode_row(&row, &mut b);
        let back = decode_row(&b, &types).expect("decodes");
        for (x, y) in back.iter().zip(&row) {
            assert!(arb::same(x, y), "{x:?} != {y:?}");
        }
        assert_eq!(decode_column(&b, &types, 6).expect("decodes"), Value::Text("héllo".into()));
        assert_eq!(decode_column(&b, &types, 12).expect("decodes"), Value::Numeric(Numeric::NaN));
    }

    #[test]
    fn compact() {
        let mut b = Vec::new();
        encode_row(
            &[Value::Int4(5), Value::Null, Value::Numeric(Numeric::parse("1.50").expect("n"))],
            &mut b,
        );
        assert_eq!(b, [3, T_INT, 10, T_NULL, T_NUM_SMALL, 2, 0x80 | 44, 2]);
    }

    #[test]
    fn missing_trailing_columns_are_null() {
        let mut b = Vec::new();
        encode_row(&[Value::Int4(1)], &mut b);
        let row = decode_row(&b, &[DataType::Int4, DataType::Text]).expect("decodes");
        assert_eq!(row, vec![Value::Int4(1), Value::Null]);
        assert_eq!(
            decode_column(&b, &[DataType::Int4, DataType::Text], 1).expect("null"),
            Value::Null
        );
    }

    #[test]
    fn corrupt_rows_are_xx001() {
        let types = [DataType::Int4, DataType::Text];
        for bad in
            [&[][..], &[2, T_INT], &[2, T_TEXT, 5, b'a'], &[1, T_TEXT], &[3, 0, 0, 0], &[1, 99]]
        {
            let e = decode_row(bad, &types).expect_err("corrupt");
            assert_eq!(e.code, crate::SqlState::DataCorrupted, "{bad:?}");
        }
        // A value that does not fit the column's type is corrupt too.
        let mut b = Vec::new();
        encode_row(&[Value::Int8(1 << 40)], &mut b);
        assert!(decode_row(&b, &[DataType::Int4]).is_err());
    }

    proptest! {
        #[test]
        fn rows_round_trip((types, row) in arb::row()) {
            let mut b = Vec::new();
            encode_row(&row, &mut b);
            let back = decode_row(&b, &types).expect("decodes");
            prop_assert_eq!(back.len(), row.len());
            for (i, (x, y)) in back.iter().zip(&row).enumerate() {
                prop_assert!(arb::same(x, y), "{:?} != {:?}", x, y);
                let col = decode_column(&b, &types, i).expect("decodes");
                prop_assert!(arb::same(&col, y));
            }
            // Columns added later read as NULL.
            let mut wider = types.clone();
            wider.push(DataType::Text);
            let wide = decode_row(&b, &wider).expect("decodes");
            prop_assert_eq!(wide.last(), Some(&Value::Null));
        }

        #[test]
        fn corrupt_input_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64), types in prop::collection::vec(arb::data_type(), 0..6)) {
            let _ = decode_row(&bytes, &types);
            let _ = decode_column(&bytes, &types, 2);
        }
    }
}
