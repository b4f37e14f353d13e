//! SQL data types and values (the `sqltypes` crate, used by `sql`).
//!
//! [`DataType`] is a column's declared type (with its modifier, such as the
//! length of `varchar(n)`), and [`Value`] is one datum. Everything type-specific
//! lives under this module: text and binary I/O in PostgreSQL's exact formats,
//! casts, operators, the order-preserving key encoding used for primary and
//! index keys, and the compact row encoding used for stored rows.
//!
//! Representation choices (mirroring PostgreSQL's internal ones so binary I/O
//! is a plain conversion):
//! - timestamps and timestamptz are microseconds since 2000-01-01 00:00:00 UTC;
//! - dates are days since 2000-01-01;
//! - `char(n)` values are stored blank-padded to n characters and compared with
//!   trailing blanks ignored; `varchar(n)` and `text` are stored as given.

use std::fmt;

// Test-only value generators for property tests.
#[cfg(test)]
mod arb;
// Arrays: text and binary forms, comparison.
pub mod array;
// Binary-format input and output.
pub mod binary;
// Casts between types.
pub mod cast;
// Date and time parsing, formatting and arithmetic.
pub mod datetime;
// Enum types defined by CREATE TYPE ... AS ENUM.
pub mod enums;
// The interval type and timestamp arithmetic with intervals.
pub mod interval;
// inet and cidr.
pub mod inet;
// json and jsonb.
pub mod json;
// Order-preserving encoding of values into key bytes.
pub mod keycode;
// Numeric (arbitrary precision decimal) values.
pub mod numeric;
// Operators: comparison, arithmetic, concatenation.
pub mod ops;
// Anonymous composite values (record).
pub mod record;
// The built-in range types (int4range, tstzrange, ...).
pub mod range;
// Compact encoding of a row's values for storage.
pub mod rowcodec;
// Text-format input and output.
pub mod text;
// time and timetz.
pub mod timeofday;
// The uuid type.
pub mod uuid;
// Time zones (the TimeZone setting).
pub mod zone;

pub use enums::{EnumType, EnumValue};
pub use interval::Interval;
pub use json::Json;
pub use numeric::Numeric;
pub use range::{RangeKind, RangeValue};
pub use record::{NamedRowType, RecordType, RecordValue};
pub use sqlstate::{ErrorReport, SqlState};
pub use zone::Zone;

/// A result whose error is a PostgreSQL error report.
pub type Result<T> = std::result::Result<T, ErrorReport>;

/// Builds an [`ErrorReport`] from a [`SqlState`] variant name and a message.
#[macro_export]
macro_rules! err {
    ($state:ident, $($arg:tt)*) => {
        $crate::ErrorReport::new($crate::SqlState::$state, format!($($arg)*))
    };
}

/// A column or expression type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DataType {
    /// boolean (oid 16)
    Bool,
    /// smallint (oid 21)
    Int2,
    /// integer (oid 23)
    Int4,
    /// bigint (oid 20)
    Int8,
    /// real (oid 700)
    Float4,
    /// double precision (oid 701)
    Float8,
    /// numeric, with optional (precision, scale) (oid 1700)
    Numeric(Option<(u32, u32)>),
    /// text (oid 25)
    Text,
    /// character varying, with optional maximum length (oid 1043)
    Varchar(Option<u32>),
    /// character(n), blank-padded (oid 1042); `Char(0)` is bpchar without
    /// a length, as `::bpchar` writes it, which keeps a value as it is
    Char(u32),
    /// timestamp without time zone (oid 1114)
    Timestamp,
    /// timestamp with time zone (oid 1184)
    TimestampTz,
    /// date (oid 1082)
    Date,
    /// bytea (oid 17)
    Bytea,
    /// "char" (oid 18): one byte, the type of pg_catalog's code columns
    /// (relkind, typtype, contype, ...); values are text of one character.
    QChar,
    /// The type of an untyped literal or parameter whose type is not yet
    /// inferred (oid 705, "unknown"); resolved during binding.
    Unknown,
    /// An array of the element type (never itself an array); the element
    /// type keeps its modifier (`varchar(10)[]`).
    Array(Box<DataType>),
    /// oid (26): an unsigned 32-bit object identifier
    Oid,
    /// regproc (24), regprocedure (2202), regclass (2205), regtype (2206),
    /// regnamespace (4089), regrole (4096): an object's OID, shown as its
    /// name
    Reg(RegKind),
    /// int2vector (22): a one-dimensional int2 array with lower bound 0,
    /// shown space-separated (pg_index.indkey)
    Int2Vector,
    /// oidvector (30): the same for OIDs (pg_index.indclass)
    OidVector,
    /// time without time zone (1083)
    Time,
    /// time with time zone (1266)
    TimeTz,
    /// interval (1186)
    Interval,
    /// uuid (2950)
    Uuid,
    /// inet (869): a host address with an optional netmask length
    Inet,
    /// cidr (650): a network address
    Cidr,
    /// json (114): the text as given, validated
    Json,
    /// jsonb (3802): a parsed, canonical document
    Jsonb,
    /// An enum type made by CREATE TYPE (its OID is the catalog's)
    Enum(std::sync::Arc<EnumType>),
    /// record (2249): an anonymous row type with these fields
    Record(std::sync::Arc<RecordType>),
    /// name (19): an identifier as the catalogs store it, at most 63 bytes
    /// (longer input is cut); values are text
    Name,
    /// refcursor (1790): a cursor's (portal's) name, as PL/pgSQL's cursor
    /// variables hold it; values are text
    Refcursor,
    /// A built-in range type (int4range, numrange, tstzrange, ...)
    Range(RangeKind),
    /// void (2278): what a function that returns nothing returns
    /// (pg_advisory_lock); its one value is written as an empty string in
    /// both formats, so it is carried as `Value::Text("")`.
    Void,
}

/// The OIDs of the scalar types Strata has (each also has an array type),
/// in OID order: what pg_type lists besides `unknown` and the arrays.
pub const SCALAR_TYPE_OIDS: &[u32] = &[
    16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 114, 700, 701, 1042, 1043, 1082, 1083, 1114, 1184,
    1186, 1266, 1700, 2202, 2205, 2206, 2950, 3802, 4089, 4096, 869, 650, 1790, 3904, 3906, 3908,
    3910, 3912, 3926,
];

static INT2: DataType = DataType::Int2;
static OID: DataType = DataType::Oid;

/// Which object an OID alias type (regclass, regtype, regnamespace) names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegKind {
    /// regclass: a relation
    Class,
    /// regtype: a type
    Type,
    /// regnamespace: a schema
    Namespace,
    /// regproc: a function (by name alone)
    Proc,
    /// regprocedure: a function with its argument types
    Procedure,
    /// regrole: a role
    Role,
}

/// A regclass/regtype value: the OID and the name it was shown as when the
/// value was made (names come from the catalog, which this crate cannot
/// see, so whoever builds the value looks the name up).
#[derive(Debug, Clone, PartialEq)]
pub struct RegValue {
    /// Which kind of object.
    pub kind: RegKind,
    /// The object's OID.
    pub oid: u32,
    /// Its name (the OID's digits if it names nothing).
    pub name: String,
}

/// One SQL datum.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL (of any type).
    Null,
    /// boolean
    Bool(bool),
    /// smallint
    Int2(i16),
    /// integer
    Int4(i32),
    /// bigint
    Int8(i64),
    /// real
    Float4(f32),
    /// double precision
    Float8(f64),
    /// numeric
    Numeric(Numeric),
    /// text, varchar and char (char already padded)
    Text(String),
    /// timestamp: microseconds since 2000-01-01 00:00:00
    Timestamp(i64),
    /// timestamptz: microseconds since 2000-01-01 00:00:00 UTC
    TimestampTz(i64),
    /// date: days since 2000-01-01
    Date(i32),
    /// bytea
    Bytea(Vec<u8>),
    /// an array (boxed: arrays are rare and large)
    Array(Box<array::ArrayValue>),
    /// oid
    Oid(u32),
    /// regclass or regtype (boxed: rare)
    Reg(Box<RegValue>),
    /// time: microseconds since midnight
    Time(i64),
    /// timetz: microseconds since midnight and the offset in seconds east of UTC
    TimeTz(i64, i32),
    /// interval
    Interval(Interval),
    /// uuid
    Uuid([u8; 16]),
    /// inet or cidr (the value says which)
    Inet(inet::Inet),
    /// json: the text as given
    Json(String),
    /// jsonb (boxed: a tree)
    Jsonb(Box<Json>),
    /// an enum label (boxed: rare)
    Enum(Box<EnumValue>),
    /// a record (boxed: rare)
    Record(Box<RecordValue>),
    /// a range (boxed: rare)
    Range(Box<RangeValue>),
}

impl DataType {
    /// The PostgreSQL type OID.
    pub fn oid(&self) -> u32 {
        match self {
            DataType::Bool => 16,
            DataType::Int2 => 21,
            DataType::Int4 => 23,
            DataType::Int8 => 20,
            DataType::Float4 => 700,
            DataType::Float8 => 701,
            DataType::Numeric(_) => 1700,
            DataType::Text => 25,
            DataType::Varchar(_) => 1043,
            DataType::Char(_) => 1042,
            DataType::Timestamp => 1114,
            DataType::TimestampTz => 1184,
            DataType::Date => 1082,
            DataType::Bytea => 17,
            DataType::QChar => 18,
            DataType::Unknown => 705,
            DataType::Array(e) => match &**e {
                DataType::Enum(t) => t.array_oid,
                e => match e.named_row() {
                    Some(n) => n.array_oid,
                    None => array::array_oid(e.oid()).unwrap_or(0),
                },
            },
            DataType::Oid => 26,
            DataType::Reg(RegKind::Class) => 2205,
            DataType::Reg(RegKind::Type) => 2206,
            DataType::Reg(RegKind::Namespace) => 4089,
            DataType::Reg(RegKind::Procedure) => 2202,
            DataType::Reg(RegKind::Role) => 4096,
            DataType::Reg(RegKind::Proc) => 24,
            DataType::Int2Vector => 22,
            DataType::OidVector => 30,
            DataType::Time => 1083,
            DataType::TimeTz => 1266,
            DataType::Interval => 1186,
            DataType::Uuid => 2950,
            DataType::Inet => 869,
            DataType::Cidr => 650,
            DataType::Json => 114,
            DataType::Jsonb => 3802,
            DataType::Enum(t) => t.oid,
            DataType::Record(t) => t.named.as_ref().map_or(2249, |n| n.oid),
            DataType::Range(k) => k.oid(),
            DataType::Void => 2278,
            DataType::Refcursor => 1790,
            DataType::Name => 19,
        }
    }

    /// The array type whose elements are of this type.
    pub fn array_of(&self) -> DataType {
        match self {
            DataType::Array(_) => self.clone(),
            other => DataType::Array(Box::new(other.clone())),
        }
    }

    /// The element type of an array type, int2vector or oidvector (None
    /// for other types).
    pub fn elem(&self) -> Option<&DataType> {
        match self {
            DataType::Array(e) => Some(e),
            DataType::Int2Vector => Some(&INT2),
            DataType::OidVector => Some(&OID),
            _ => None,
        }
    }

    /// The type for a type OID sent by a client (Parse parameter types).
    pub fn from_oid(oid: u32) -> Option<DataType> {
        Some(match oid {
            16 => DataType::Bool,
            21 => DataType::Int2,
            23 => DataType::Int4,
            20 => DataType::Int8,
            700 => DataType::Float4,
            701 => DataType::Float8,
            1700 => DataType::Numeric(None),
            25 => DataType::Text,
            1043 => DataType::Varchar(None),
            1042 => DataType::Char(0),
            1114 => DataType::Timestamp,
            1184 => DataType::TimestampTz,
            1082 => DataType::Date,
            17 => DataType::Bytea,
            18 => DataType::QChar,
            26 => DataType::Oid,
            2205 => DataType::Reg(RegKind::Class),
            2206 => DataType::Reg(RegKind::Type),
            4089 => DataType::Reg(RegKind::Namespace),
            2202 => DataType::Reg(RegKind::Procedure),
            4096 => DataType::Reg(RegKind::Role),
            24 => DataType::Reg(RegKind::Proc),
            22 => DataType::Int2Vector,
            30 => DataType::OidVector,
            1083 => DataType::Time,
            1266 => DataType::TimeTz,
            1186 => DataType::Interval,
            2950 => DataType::Uuid,
            869 => DataType::Inet,
            650 => DataType::Cidr,
            114 => DataType::Json,
            3802 => DataType::Jsonb,
            2249 => DataType::Record(RecordType::anonymous(vec![])),
            0 | 705 => DataType::Unknown,
            2278 => DataType::Void,
            1790 => DataType::Refcursor,
            19 => DataType::Name,
            _ => {
                if let Some(k) = RangeKind::from_oid(oid) {
                    return Some(DataType::Range(k));
                }
                let elem = array::elem_oid(oid).and_then(DataType::from_oid)?;
                DataType::Array(Box::new(elem))
            }
        })
    }

    /// pg_type.typlen: the fixed size in bytes, or -1 for variable length.
    pub fn typlen(&self) -> i16 {
        match self {
            DataType::Bool | DataType::QChar => 1,
            DataType::Int2 => 2,
            DataType::Int4
            | DataType::Float4
            | DataType::Date
            | DataType::Oid
            | DataType::Reg(_)
            | DataType::Enum(_) => 4,
            DataType::Int8
            | DataType::Float8
            | DataType::Timestamp
            | DataType::TimestampTz
            | DataType::Time => 8,
            DataType::TimeTz => 12,
            DataType::Interval | DataType::Uuid => 16,
            DataType::Name => 64,
            DataType::Unknown => -2,
            DataType::Void => 4,
            _ => -1,
        }
    }

    /// The type modifier shown in RowDescription and pg_attribute.atttypmod
    /// (-1 when none): varchar/char length + 4, numeric ((p << 16) | s) + 4.
    pub fn typmod(&self) -> i32 {
        match self {
            DataType::Char(0) => -1,
            DataType::Varchar(Some(n)) | DataType::Char(n) => *n as i32 + 4,
            DataType::Numeric(Some((p, s))) => ((*p as i32) << 16 | *s as i32) + 4,
            DataType::Array(e) => e.typmod(),
            _ => -1,
        }
    }

    /// The type's name as pg_type.typname spells it (a built-in type's;
    /// an enum's name is [`DataType::name`]).
    pub fn typname(&self) -> &'static str {
        match self {
            DataType::Enum(_) => "???",
            DataType::Record(_) => "record",
            DataType::Range(k) => k.name(),
            DataType::Bool => "bool",
            DataType::Int2 => "int2",
            DataType::Int4 => "int4",
            DataType::Int8 => "int8",
            DataType::Float4 => "float4",
            DataType::Float8 => "float8",
            DataType::Numeric(_) => "numeric",
            DataType::Text => "text",
            DataType::Varchar(_) => "varchar",
            DataType::Char(_) => "bpchar",
            DataType::Timestamp => "timestamp",
            DataType::TimestampTz => "timestamptz",
            DataType::Date => "date",
            DataType::Bytea => "bytea",
            DataType::QChar => "char",
            DataType::Unknown => "unknown",
            DataType::Void => "void",
            DataType::Refcursor => "refcursor",
            DataType::Name => "name",
            DataType::Oid => "oid",
            DataType::Reg(RegKind::Class) => "regclass",
            DataType::Reg(RegKind::Type) => "regtype",
            DataType::Reg(RegKind::Namespace) => "regnamespace",
            DataType::Reg(RegKind::Procedure) => "regprocedure",
            DataType::Reg(RegKind::Role) => "regrole",
            DataType::Reg(RegKind::Proc) => "regproc",
            DataType::Int2Vector => "int2vector",
            DataType::OidVector => "oidvector",
            DataType::Time => "time",
            DataType::TimeTz => "timetz",
            DataType::Interval => "interval",
            DataType::Uuid => "uuid",
            DataType::Inet => "inet",
            DataType::Cidr => "cidr",
            DataType::Json => "json",
            DataType::Jsonb => "jsonb",
            DataType::Array(e) if matches!(**e, DataType::Range(_)) => match **e {
                DataType::Range(k) => k.array_name(),
                _ => "???",
            },
            DataType::Array(e) => match e.typname() {
                "bool" => "_bool",
                "int2" => "_int2",
                "int4" => "_int4",
                "int8" => "_int8",
                "float4" => "_float4",
                "float8" => "_float8",
                "time" => "_time",
                "timetz" => "_timetz",
                "interval" => "_interval",
                "uuid" => "_uuid",
                "inet" => "_inet",
                "cidr" => "_cidr",
                "json" => "_json",
                "jsonb" => "_jsonb",
                "numeric" => "_numeric",
                "text" => "_text",
                "varchar" => "_varchar",
                "bpchar" => "_bpchar",
                "timestamp" => "_timestamp",
                "timestamptz" => "_timestamptz",
                "date" => "_date",
                "bytea" => "_bytea",
                "char" => "_char",
                "name" => "_name",
                "oid" => "_oid",
                "regclass" => "_regclass",
                "regtype" => "_regtype",
                "regnamespace" => "_regnamespace",
                "regprocedure" => "_regprocedure",
                "regrole" => "_regrole",
                "regproc" => "_regproc",
                "record" => "_record",
                "refcursor" => "_refcursor",
                _ => "???",
            },
        }
    }

    /// pg_type.typname of any type, enums and their arrays included.
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        match self {
            DataType::Enum(t) => t.name.clone().into(),
            DataType::Record(t) => match &t.named {
                Some(n) => n.name.clone().into(),
                None => self.typname().into(),
            },
            DataType::Array(e) if e.is_user_defined() => format!("_{}", e.name()).into(),
            _ => self.typname().into(),
        }
    }

    /// True for the integer, float and numeric types.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            DataType::Int2
                | DataType::Int4
                | DataType::Int8
                | DataType::Float4
                | DataType::Float8
                | DataType::Numeric(_)
        )
    }

    /// True for the types CREATE TYPE makes: enums and named composites.
    pub fn is_user_defined(&self) -> bool {
        matches!(self, DataType::Enum(_)) || self.named_row().is_some()
    }

    /// A named composite type's catalog identity (None for any other
    /// type, an anonymous record included).
    pub fn named_row(&self) -> Option<&NamedRowType> {
        match self {
            DataType::Record(t) => t.named.as_ref(),
            _ => None,
        }
    }

    /// True for text, varchar and char.
    pub fn is_string(&self) -> bool {
        matches!(
            self,
            DataType::Text
                | DataType::Varchar(_)
                | DataType::Char(_)
                | DataType::QChar
                | DataType::Refcursor
                | DataType::Name
        )
    }
}

impl fmt::Display for DataType {
    /// Formats as PostgreSQL's format_type() does (`character varying(10)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Bool => write!(f, "boolean"),
            DataType::Int2 => write!(f, "smallint"),
            DataType::Int4 => write!(f, "integer"),
            DataType::Int8 => write!(f, "bigint"),
            DataType::Float4 => write!(f, "real"),
            DataType::Float8 => write!(f, "double precision"),
            DataType::Numeric(None) => write!(f, "numeric"),
            DataType::Numeric(Some((p, s))) => write!(f, "numeric({p},{s})"),
            DataType::Text => write!(f, "text"),
            DataType::Varchar(None) => write!(f, "character varying"),
            DataType::Varchar(Some(n)) => write!(f, "character varying({n})"),
            DataType::Char(0) => write!(f, "bpchar"),
            DataType::Char(n) => write!(f, "character({n})"),
            DataType::Timestamp => write!(f, "timestamp without time zone"),
            DataType::TimestampTz => write!(f, "timestamp with time zone"),
            DataType::Date => write!(f, "date"),
            DataType::Bytea => write!(f, "bytea"),
            DataType::QChar => write!(f, "\"char\""),
            DataType::Unknown => write!(f, "unknown"),
            DataType::Array(e) => write!(f, "{e}[]"),
            DataType::Oid => write!(f, "oid"),
            DataType::Reg(RegKind::Class) => write!(f, "regclass"),
            DataType::Reg(RegKind::Type) => write!(f, "regtype"),
            DataType::Reg(RegKind::Namespace) => write!(f, "regnamespace"),
            DataType::Reg(RegKind::Procedure) => write!(f, "regprocedure"),
            DataType::Reg(RegKind::Role) => write!(f, "regrole"),
            DataType::Reg(RegKind::Proc) => write!(f, "regproc"),
            DataType::Int2Vector => write!(f, "int2vector"),
            DataType::OidVector => write!(f, "oidvector"),
            DataType::Time => write!(f, "time without time zone"),
            DataType::TimeTz => write!(f, "time with time zone"),
            DataType::Interval => write!(f, "interval"),
            DataType::Uuid => write!(f, "uuid"),
            DataType::Inet => write!(f, "inet"),
            DataType::Cidr => write!(f, "cidr"),
            DataType::Json => write!(f, "json"),
            DataType::Jsonb => write!(f, "jsonb"),
            DataType::Enum(t) => write!(f, "{}", t.name),
            DataType::Record(t) => match &t.named {
                Some(n) => write!(f, "{}", n.name),
                None => write!(f, "record"),
            },
            DataType::Range(k) => write!(f, "{}", k.name()),
            DataType::Void => write!(f, "void"),
            DataType::Refcursor => write!(f, "refcursor"),
            DataType::Name => write!(f, "name"),
        }
    }
}

impl Value {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The natural type of a non-null value (None for NULL). Text values report
    /// `text`; callers that know the column type use that instead.
    pub fn data_type(&self) -> Option<DataType> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(_) => DataType::Bool,
            Value::Int2(_) => DataType::Int2,
            Value::Int4(_) => DataType::Int4,
            Value::Int8(_) => DataType::Int8,
            Value::Float4(_) => DataType::Float4,
            Value::Float8(_) => DataType::Float8,
            Value::Numeric(_) => DataType::Numeric(None),
            Value::Text(_) => DataType::Text,
            Value::Timestamp(_) => DataType::Timestamp,
            Value::TimestampTz(_) => DataType::TimestampTz,
            Value::Date(_) => DataType::Date,
            Value::Bytea(_) => DataType::Bytea,
            Value::Array(a) if a.vector => match a.elem {
                DataType::Oid => DataType::OidVector,
                _ => DataType::Int2Vector,
            },
            Value::Array(a) => DataType::Array(Box::new(a.elem.clone())),
            Value::Oid(_) => DataType::Oid,
            Value::Reg(r) => DataType::Reg(r.kind),
            Value::Time(_) => DataType::Time,
            Value::TimeTz(..) => DataType::TimeTz,
            Value::Interval(_) => DataType::Interval,
            Value::Uuid(_) => DataType::Uuid,
            Value::Inet(i) if i.cidr => DataType::Cidr,
            Value::Inet(_) => DataType::Inet,
            Value::Json(_) => DataType::Json,
            Value::Jsonb(_) => DataType::Jsonb,
            Value::Enum(e) => enums::data_type(e),
            Value::Record(r) => DataType::Record(r.ty.clone()),
            Value::Range(r) => DataType::Range(r.kind),
        })
    }

    /// The object id of an oid, regclass or regtype value (or a
    /// non-negative integer).
    pub fn as_oid(&self) -> Option<u32> {
        match self {
            Value::Oid(o) => Some(*o),
            Value::Reg(r) => Some(r.oid),
            Value::Int2(x) => u32::try_from(*x).ok(),
            Value::Int4(x) => Some(*x as u32),
            Value::Int8(x) => u32::try_from(*x).ok(),
            _ => None,
        }
    }
}
