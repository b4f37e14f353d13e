//! Index access methods and operator classes as CREATE INDEX names them:
//! `USING btree | hash | gist | gin | spgist | brin`, a key's operator
//! class (`name varchar_pattern_ops`, `doc jsonb_path_ops`).
//!
//! Every Strata index keeps its entries in key order, as a btree does; the
//! method and the operator classes are recorded for the catalog
//! (pg_class.relam, pg_am, pg_get_indexdef, `\d`, pg_dump), after the
//! checks PostgreSQL makes: the method exists and can be unique or
//! multicolumn, and each key's type has an operator class for it.

use sqlparser::ast;
use sqltypes::DataType;

use crate::bind;
use crate::error::Result;
use crate::{bail, err};

/// One access method: its name, pg_am OID and handler function's OID, and
/// whether it can be unique and have several keys.
pub struct Method {
    /// pg_am.amname
    pub name: &'static str,
    /// pg_am.oid
    pub oid: u32,
    /// pg_am.amhandler
    pub handler: u32,
    unique: bool,
    multicolumn: bool,
}

/// PostgreSQL 15's index access methods, in OID order.
pub const METHODS: &[Method] = &[
    Method { name: "btree", oid: 403, handler: 330, unique: true, multicolumn: true },
    Method { name: "hash", oid: 405, handler: 331, unique: false, multicolumn: false },
    Method { name: "gist", oid: 783, handler: 332, unique: false, multicolumn: true },
    Method { name: "gin", oid: 2742, handler: 333, unique: false, multicolumn: true },
    Method { name: "brin", oid: 3580, handler: 335, unique: false, multicolumn: true },
    Method { name: "spgist", oid: 4000, handler: 334, unique: false, multicolumn: false },
];

/// The pg_am OID of the method an index records (None: btree).
pub fn method_oid(method: Option<&str>) -> u32 {
    let name = method.unwrap_or("btree");
    METHODS.iter().find(|m| m.name == name).map_or(403, |m| m.oid)
}

/// The method `USING` names, checked for an index of `keys` keys (unique
/// or not): None for btree, the default.
pub fn method(using: Option<&ast::IndexType>, unique: bool, keys: usize) -> Result<Option<String>> {
    use ast::IndexType as I;
    let name = match using {
        None | Some(I::BTree) => return Ok(None),
        Some(I::Hash) => "hash".to_string(),
        Some(I::GIN) => "gin".to_string(),
        Some(I::GiST) => "gist".to_string(),
        Some(I::SPGiST) => "spgist".to_string(),
        Some(I::BRIN) => "brin".to_string(),
        Some(I::Bloom) => "bloom".to_string(),
        Some(I::Custom(i)) => bind::ident(i),
    };
    let Some(m) = METHODS.iter().find(|m| m.name == name) else {
        bail!(UndefinedObject, "access method \"{name}\" does not exist");
    };
    if unique && !m.unique {
        bail!(FeatureNotSupported, "access method \"{name}\" does not support unique indexes");
    }
    if keys > 1 && !m.multicolumn {
        bail!(FeatureNotSupported, "access method \"{name}\" does not support multicolumn indexes");
    }
    Ok((m.name != "btree").then_some(name))
}

/// Whether `ty` has a default operator class for `method`.
fn has_default(method: &str, ty: &DataType) -> bool {
    use DataType as T;
    let string = matches!(ty, T::Text | T::Varchar(_) | T::Char(_) | T::Name);
    match method {
        // json has no comparison or hashing operators.
        "btree" | "hash" => !matches!(ty, T::Json),
        "gin" => matches!(ty, T::Array(_) | T::Jsonb),
        "spgist" => string || matches!(ty, T::Inet | T::Cidr | T::Range(_)),
        "gist" => matches!(ty, T::Range(_)),
        "brin" => {
            string
                || matches!(
                    ty,
                    T::Int2
                        | T::Int4
                        | T::Int8
                        | T::Float4
                        | T::Float8
                        | T::Numeric(_)
                        | T::Oid
                        | T::QChar
                        | T::Bytea
                        | T::Date
                        | T::Time
                        | T::TimeTz
                        | T::Timestamp
                        | T::TimestampTz
                        | T::Interval
                        | T::Uuid
                        | T::Inet
                        | T::Cidr
                        | T::Range(_)
                )
        }
        // gist's other classes are for types Strata does not have
        // (geometry, tsvector); inet's is not the default.
        _ => false,
    }
}

/// The name of `ty`'s default operator class for `method` (which has
/// one: see `has_default`).
fn default_name(method: &str, ty: &DataType) -> String {
    use DataType as T;
    let base = match ty {
        T::Varchar(_) => "text",
        T::Array(_) => "array",
        T::Cidr => "inet",
        T::Reg(_) => "oid",
        T::Range(_) => "range",
        t => t.typname(),
    };
    match method {
        "brin" if matches!(ty, T::Range(_)) => "range_inclusion_ops".to_string(),
        "brin" => format!("{base}_minmax_ops"),
        _ => format!("{base}_ops"),
    }
}

/// The operator classes besides the defaults, with the method and the
/// types they take.
fn other_class(method: &str, class: &str, ty: &DataType) -> Option<bool> {
    use DataType as T;
    let accepts = match (method, class) {
        ("btree" | "hash", "text_pattern_ops" | "varchar_pattern_ops") => {
            matches!(ty, T::Text | T::Varchar(_))
        }
        ("btree" | "hash", "bpchar_pattern_ops") => matches!(ty, T::Char(_)),
        ("gin", "jsonb_path_ops") => matches!(ty, T::Jsonb),
        ("gist", "inet_ops") => matches!(ty, T::Inet | T::Cidr),
        _ => return None,
    };
    Some(accepts)
}

/// The operator class a key of type `ty` has in an index of `method`
/// (None: btree) when CREATE INDEX names `class` (None: the default).
/// None when it is the type's default, which pg_get_indexdef leaves out.
pub fn opclass(
    method: Option<&str>,
    ty: &DataType,
    class: Option<&ast::ObjectName>,
) -> Result<Option<String>> {
    let m = method.unwrap_or("btree");
    let named =
        class.map(|c| c.0.last().and_then(|p| p.as_ident()).map(bind::ident).unwrap_or_default());
    let Some(named) = named else {
        if has_default(m, ty) {
            return Ok(None);
        }
        return Err(err!(
            UndefinedObject,
            "data type {ty} has no default operator class for access method \"{m}\""
        )
        .with_hint(
            "You must specify an operator class for the index or define a default operator class for the data type.",
        ));
    };
    if has_default(m, ty) && default_name(m, ty) == named {
        return Ok(None);
    }
    match other_class(m, &named, ty) {
        Some(true) => Ok(Some(named)),
        Some(false) => {
            bail!(DatatypeMismatch, "operator class \"{named}\" does not accept data type {ty}")
        }
        None => {
            bail!(
                UndefinedObject,
                "operator class \"{named}\" does not exist for access method \"{m}\""
            )
        }
    }
}
