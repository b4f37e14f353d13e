//! Anonymous composite values (PostgreSQL's `record`, oid 2249): what
//! `ROW(1, 'a')`, a whole-row reference (`SELECT t FROM t`) and a
//! set-returning function with OUT columns in a select list produce.
//!
//! A record value carries its row type (field names and types), so text
//! and binary output need nothing else: `(1,a)` in text (`record_out`) and
//! PostgreSQL's `record_send` layout in binary. Records compare field by
//! field as `record_cmp` does (a NULL field equals a NULL and sorts after
//! any value); SQL's row-constructor comparison, where a NULL field makes
//! the result unknown, is the binder's business.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::{BufMut, BytesMut};

use crate::{err, DataType, ErrorReport, Result, Value};

/// A row type: the fields' names and types, in order, and the composite
/// type's catalog identity when it is a named one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordType {
    /// (name, type) per field.
    pub fields: Vec<(String, DataType)>,
    /// Set for a composite type made by CREATE TYPE ... AS (...): values
    /// of it carry its OID on the wire and its name in pg_typeof.
    pub named: Option<NamedRowType>,
}

/// A named composite type's identity in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedRowType {
    /// pg_type OID.
    pub oid: u32,
    /// Its array type's OID.
    pub array_oid: u32,
    /// Type name (unqualified).
    pub name: String,
}

impl RecordType {
    /// An anonymous row type with these fields.
    pub fn new(fields: Vec<(String, DataType)>) -> Arc<RecordType> {
        Arc::new(RecordType { fields, named: None })
    }

    /// True for the pseudo-type record (no fields, no name): it takes any
    /// record as it is.
    pub fn is_pseudo(&self) -> bool {
        self.fields.is_empty() && self.named.is_none()
    }

    /// A row type with fields named `f1`, `f2`, ... (ROW(...)'s).
    pub fn anonymous(types: Vec<DataType>) -> Arc<RecordType> {
        let fields = types.into_iter().enumerate().map(|(i, t)| (format!("f{}", i + 1), t));
        RecordType::new(fields.collect())
    }

    /// The position of the field with this name.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|(n, _)| n == name)
    }
}

/// One record: its type and one value per field.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordValue {
    /// The row type.
    pub ty: Arc<RecordType>,
    /// The field values (as many as the type has fields).
    pub values: Vec<Value>,
}

impl RecordValue {
    /// Wraps field values as a record value of `ty`.
    pub fn value(ty: Arc<RecordType>, values: Vec<Value>) -> Value {
        Value::Record(Box::new(RecordValue { ty, values }))
    }
}

/// Record `r` as a record of row type `to`: each field cast to `to`'s
/// field type (42846 when the numbers of fields differ).
pub fn convert(r: RecordValue, to: &Arc<RecordType>) -> Result<Value> {
    if r.values.len() != to.fields.len() {
        let how = if r.values.len() < to.fields.len() { "few" } else { "many" };
        let from = DataType::Record(r.ty.clone());
        let t = DataType::Record(to.clone());
        return Err(err!(CannotCoerce, "cannot cast type {from} to {t}")
            .with_detail(format!("Input has too {how} columns.")));
    }
    let values = r.values.into_iter().zip(&to.fields).map(|(v, (_, t))| crate::cast::cast(v, t));
    Ok(RecordValue::value(to.clone(), values.collect::<Result<Vec<_>>>()?))
}

fn malformed(input: &str, detail: &str) -> ErrorReport {
    err!(InvalidTextRepresentation, "malformed record literal: \"{input}\"").with_detail(detail)
}

/// Parses the text form of a record of `ty` (PostgreSQL's `record_in`):
/// `(1,,"a b")`, where an empty unquoted field is NULL, `""` inside quotes
/// is a quote and a backslash escapes the next character.
pub fn parse_record(ty: &Arc<RecordType>, input: &str) -> Result<Value> {
    parse_record_in(ty, input, crate::Zone::utc_ref())
}

/// Parses record input, timestamptz fields read in `zone`.
pub fn parse_record_in(ty: &Arc<RecordType>, input: &str, zone: &crate::Zone) -> Result<Value> {
    let mut chars = input.trim_start().chars().peekable();
    if chars.next() != Some('(') {
        return Err(malformed(input, "Missing left parenthesis."));
    }
    let mut values = Vec::with_capacity(ty.fields.len());
    for (i, (_, fty)) in ty.fields.iter().enumerate() {
        if i > 0 && chars.next() != Some(',') {
            return Err(malformed(input, "Too few columns."));
        }
        if matches!(chars.peek(), Some(',' | ')')) {
            values.push(Value::Null);
            continue;
        }
        let mut text = String::new();
        let mut quoted = false;
        loop {
            match chars.peek().copied() {
                None => return Err(malformed(input, "Unexpected end of input.")),
                Some(',' | ')') if !quoted => break,
                Some('"') => {
                    chars.next();
                    if quoted && chars.peek() == Some(&'"') {
                        chars.next();
                        text.push('"');
                    } else {
                        quoted = !quoted;
                    }
                }
                Some('\\') => {
                    chars.next();
                    match chars.next() {
                        Some(c) => text.push(c),
                        None => return Err(malformed(input, "Unexpected end of input.")),
                    }
                }
                Some(c) => {
                    chars.next();
                    text.push(c);
                }
            }
        }
        values.push(crate::text::parse_text_in(fty, &text, zone)?);
    }
    match chars.next() {
        Some(')') => {}
        Some(',') => return Err(malformed(input, "Too many columns.")),
        _ => return Err(malformed(input, "Too few columns.")),
    }
    if chars.any(|c| !c.is_whitespace()) {
        return Err(malformed(input, "Junk after right parenthesis."));
    }
    Ok(RecordValue::value(ty.clone(), values))
}

/// Decodes the binary form of a record of `ty` (PostgreSQL's
/// `record_recv`): each field's OID must be the field type's.
pub fn decode_record(ty: &Arc<RecordType>, mut b: &[u8]) -> Result<Value> {
    let bad = || err!(InvalidBinaryRepresentation, "insufficient data left in message");
    let mut take = |n: usize| -> Result<&[u8]> {
        if b.len() < n {
            return Err(bad());
        }
        let (head, rest) = b.split_at(n);
        b = rest;
        Ok(head)
    };
    let int = |x: &[u8]| i32::from_be_bytes([x[0], x[1], x[2], x[3]]);
    let n = int(take(4)?);
    if n != ty.fields.len() as i32 {
        let want = ty.fields.len();
        return Err(err!(DatatypeMismatch, "wrong number of columns: {n}, expected {want}"));
    }
    let mut values = Vec::with_capacity(ty.fields.len());
    for (_, fty) in &ty.fields {
        let oid = int(take(4)?) as u32;
        if oid != fty.oid() {
            return Err(err!(DatatypeMismatch, "wrong data type: {oid}, expected {}", fty.oid()));
        }
        let len = int(take(4)?);
        values.push(match usize::try_from(len) {
            Ok(len) => crate::binary::decode_binary(fty, take(len)?)?,
            Err(_) => Value::Null,
        });
    }
    if !b.is_empty() {
        return Err(err!(InvalidBinaryRepresentation, "incorrect binary data format in record"));
    }
    Ok(RecordValue::value(ty.clone(), values))
}

/// Appends the text form of a record (PostgreSQL's `record_out`): fields
/// comma-separated in parentheses, NULL as nothing, and a field quoted
/// when empty or holding a delimiter, with `"` and `\` doubled inside.
pub fn write_record(r: &RecordValue, out: &mut Vec<u8>) {
    write_record_in(r, crate::Zone::utc_ref(), out)
}

/// Appends the text form of a record, timestamptz fields shown in `zone`.
pub fn write_record_in(r: &RecordValue, zone: &crate::Zone, out: &mut Vec<u8>) {
    out.push(b'(');
    for (i, v) in r.values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        if v.is_null() {
            continue;
        }
        let mut text = Vec::new();
        crate::text::write_value_in(v, zone, &mut text);
        if crate::array::quoted_between(&text, b'(', b')') {
            crate::array::push_quoted_doubling(&text, out);
        } else {
            out.extend_from_slice(&text);
        }
    }
    out.push(b')');
}

/// Appends the binary form of a record (PostgreSQL's `record_send`): the
/// field count, then per field its type OID and its length-prefixed binary
/// value (-1 for NULL).
pub fn write_record_binary(r: &RecordValue, buf: &mut BytesMut) {
    buf.put_i32(r.values.len() as i32);
    for (v, (_, ty)) in r.values.iter().zip(&r.ty.fields) {
        buf.put_u32(ty.oid());
        crate::binary::write_field(v, buf);
    }
}

/// Compares two records as `record_cmp` does: field by field, a NULL
/// field equal to a NULL and greater than any value, then the shorter
/// record first. None if a pair of fields cannot be compared.
pub fn compare_records(a: &RecordValue, b: &RecordValue) -> Option<Ordering> {
    let common = crate::ops::compare_elements(&a.values, &b.values)?;
    Some(common.then(a.values.len().cmp(&b.values.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::to_text;

    #[test]
    fn text_output_quotes_like_record_out() {
        let ty = RecordType::anonymous(vec![DataType::Int4; 6]);
        let r = RecordValue::value(
            ty,
            vec![
                Value::Int4(1),
                Value::Null,
                Value::Text(String::new()),
                Value::Text("a b".into()),
                Value::Text("say \"hi\" \\o/".into()),
                Value::Text("(x,y)".into()),
            ],
        );
        assert_eq!(to_text(&r), r#"(1,,"","a b","say ""hi"" \\o/","(x,y)")"#);
    }

    #[test]
    fn binary_output_is_record_send() {
        let ty = RecordType::anonymous(vec![DataType::Int4, DataType::Text]);
        let r = RecordValue { ty, values: vec![Value::Int4(7), Value::Null] };
        let mut buf = BytesMut::new();
        write_record_binary(&r, &mut buf);
        let want: Vec<u8> = [
            &2i32.to_be_bytes()[..],
            &23u32.to_be_bytes(),
            &4i32.to_be_bytes(),
            &7i32.to_be_bytes(),
            &25u32.to_be_bytes(),
            &(-1i32).to_be_bytes(),
        ]
        .concat();
        assert_eq!(&buf[..], &want[..]);
    }

    #[test]
    fn text_input_reads_what_output_writes() {
        let ty = RecordType::anonymous(vec![DataType::Int4, DataType::Text, DataType::Text]);
        let v = parse_record(&ty, r#" (1,,"say ""hi"" \\o/")"#).expect("parses");
        assert_eq!(to_text(&v), r#"(1,,"say ""hi"" \\o/")"#);
        let bad = |s: &str| parse_record(&ty, s).expect_err(s).detail.unwrap_or_default();
        assert_eq!(bad("1,2,3"), "Missing left parenthesis.");
        assert_eq!(bad("(1,2)"), "Too few columns.");
        assert_eq!(bad("(1,2,3,4)"), "Too many columns.");
        assert_eq!(bad("(1,2,3) x"), "Junk after right parenthesis.");
        assert_eq!(bad("(1,\"2"), "Unexpected end of input.");
    }

    #[test]
    fn binary_input_reads_what_output_writes() {
        let ty = RecordType::anonymous(vec![DataType::Int4, DataType::Text]);
        let r = RecordValue { ty: ty.clone(), values: vec![Value::Int4(7), Value::Null] };
        let mut buf = BytesMut::new();
        write_record_binary(&r, &mut buf);
        assert_eq!(decode_record(&ty, &buf).expect("decodes"), Value::Record(Box::new(r)));
        assert!(decode_record(&ty, &buf[..buf.len() - 1]).is_err());
    }

    #[test]
    fn comparison_puts_null_fields_last() {
        let ty = RecordType::anonymous(vec![DataType::Int4, DataType::Int4]);
        let rec = |a: Value, b: Value| RecordValue { ty: ty.clone(), values: vec![a, b] };
        let one_null = rec(Value::Int4(1), Value::Null);
        let one_two = rec(Value::Int4(1), Value::Int4(2));
        assert_eq!(compare_records(&one_two, &one_null), Some(Ordering::Less));
        assert_eq!(compare_records(&one_null, &one_null), Some(Ordering::Equal));
        let two = rec(Value::Int4(2), Value::Int4(0));
        assert_eq!(compare_records(&one_null, &two), Some(Ordering::Less));
    }
}
