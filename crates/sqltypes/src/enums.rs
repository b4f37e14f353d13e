//! Enum types (`CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')`).
//!
//! An enum type is defined in the catalog, which this crate cannot see, so
//! [`DataType::Enum`] carries the whole definition: its OIDs, name and labels.
//! A value is its label's OID together with the type, so it prints, sorts
//! and encodes without a catalog lookup. Labels sort by their sort order
//! (pg_enum.enumsortorder), not by name; a label added later between two
//! others gets a sort order between theirs, so stored values and index keys
//! never need rewriting.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::{err, DataType, Result, Value};

/// One enum type's definition.
#[derive(Debug, Clone)]
pub struct EnumType {
    /// pg_type OID of the enum.
    pub oid: u32,
    /// pg_type OID of its array type.
    pub array_oid: u32,
    /// The type's name.
    pub name: String,
    /// The labels, in sort order.
    pub labels: Vec<EnumLabel>,
}

/// One label of an enum type (a pg_enum row).
#[derive(Debug, Clone, PartialEq)]
pub struct EnumLabel {
    /// pg_enum OID: what a stored value holds.
    pub oid: u32,
    /// pg_enum.enumsortorder.
    pub sort: f32,
    /// The label text.
    pub label: String,
}

/// Two definitions are the same type when their OIDs are (a type that
/// gained a label is still the same type).
impl PartialEq for EnumType {
    fn eq(&self, other: &Self) -> bool {
        self.oid == other.oid
    }
}

impl Eq for EnumType {}

impl Hash for EnumType {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.oid.hash(h)
    }
}

impl EnumType {
    /// The label with this OID.
    pub fn by_oid(&self, oid: u32) -> Option<&EnumLabel> {
        self.labels.iter().find(|l| l.oid == oid)
    }

    /// The label with this sort order (how index keys store a value).
    pub fn by_sort(&self, sort: f32) -> Option<&EnumLabel> {
        self.labels.iter().find(|l| l.sort == sort)
    }
}

/// An enum value: a label of a type.
#[derive(Debug, Clone)]
pub struct EnumValue {
    /// The value's type.
    pub ty: Arc<EnumType>,
    /// The label's OID.
    pub oid: u32,
}

impl PartialEq for EnumValue {
    fn eq(&self, other: &Self) -> bool {
        self.oid == other.oid
    }
}

impl EnumValue {
    /// The label (empty if the type lost it, which the catalog prevents).
    pub fn label(&self) -> &str {
        self.ty.by_oid(self.oid).map(|l| l.label.as_str()).unwrap_or("")
    }

    /// The label's sort order.
    pub fn sort(&self) -> f32 {
        self.ty.by_oid(self.oid).map(|l| l.sort).unwrap_or(f32::NAN)
    }
}

/// enum_in: the value of `ty` labelled `text` (22P02 if there is none).
pub fn parse_enum(ty: &Arc<EnumType>, text: &str) -> Result<Value> {
    match ty.labels.iter().find(|l| l.label == text) {
        Some(l) => Ok(Value::Enum(Box::new(EnumValue { ty: ty.clone(), oid: l.oid }))),
        None => Err(err!(
            InvalidTextRepresentation,
            "invalid input value for enum {}: \"{text}\"",
            ty.name
        )),
    }
}

/// A stored value back from its label OID.
pub fn from_label_oid(ty: &Arc<EnumType>, oid: u32) -> Option<Value> {
    ty.by_oid(oid)?;
    Some(Value::Enum(Box::new(EnumValue { ty: ty.clone(), oid })))
}

/// The type of an enum value.
pub fn data_type(v: &EnumValue) -> DataType {
    DataType::Enum(v.ty.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn mood() -> Arc<EnumType> {
        let label = |oid, sort, label: &str| EnumLabel { oid, sort, label: label.into() };
        Arc::new(EnumType {
            oid: 16500,
            array_oid: 16499,
            name: "mood".into(),
            labels: vec![
                label(16502, 1.0, "sad"),
                label(16504, 1.5, "meh"),
                label(16503, 2.0, "ok"),
            ],
        })
    }

    #[test]
    fn labels_parse_and_sort_by_sort_order() {
        let t = mood();
        let v = |s| parse_enum(&t, s).expect("label");
        assert_eq!(crate::text::to_text(&v("meh")), "meh");
        let ord = crate::ops::compare(&v("meh"), &v("ok")).expect("comparable");
        assert_eq!(ord, Some(std::cmp::Ordering::Less));
        let ord = crate::ops::compare(&v("sad"), &v("meh")).expect("comparable");
        assert_eq!(ord, Some(std::cmp::Ordering::Less));
        let e = parse_enum(&t, "glad").expect_err("no such label");
        assert_eq!(e.message, "invalid input value for enum mood: \"glad\"");
    }

    #[test]
    fn values_survive_row_and_key_encoding() {
        let t = mood();
        let ty = DataType::Enum(t.clone());
        for label in ["sad", "meh", "ok"] {
            let v = parse_enum(&t, label).expect("label");
            let mut row = Vec::new();
            crate::rowcodec::encode_row(std::slice::from_ref(&v), &mut row);
            let back = crate::rowcodec::decode_row(&row, std::slice::from_ref(&ty)).expect("row");
            assert_eq!(back, vec![v.clone()]);
            let mut key = Vec::new();
            crate::keycode::encode_key(
                std::slice::from_ref(&v),
                std::slice::from_ref(&ty),
                &mut key,
            );
            let back = crate::keycode::decode_key(&mut key.as_slice(), std::slice::from_ref(&ty))
                .expect("key");
            assert_eq!(back, vec![v]);
        }
        // Keys order by sort order: sad < meh < ok.
        let key = |s| {
            let mut k = Vec::new();
            let v = parse_enum(&t, s).expect("label");
            crate::keycode::encode_key(&[v], std::slice::from_ref(&ty), &mut k);
            k
        };
        assert!(key("sad") < key("meh") && key("meh") < key("ok"));
    }
}
