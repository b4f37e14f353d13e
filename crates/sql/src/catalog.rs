//! The catalog: table, column and index definitions, stored in KV.
//!
//! Each table definition is one KV row (JSON) under the tenant's catalog
//! prefix, read and written inside ordinary transactions, so DDL is
//! transactional like in PostgreSQL: a CREATE TABLE that rolls back leaves
//! nothing behind. A version counter key changes with every DDL commit; each
//! statement compares it with the cached [`Catalog`] and reloads only when it
//! moved. DDL transactions lock the version key, so DDL is serialized.
//!
//! A table's rows live under its *storage id* (PostgreSQL's relfilenode):
//! TRUNCATE and ALTER TABLE ADD PRIMARY KEY write a fresh storage and switch
//! the definition to it, and the old storage is range-deleted once no snapshot
//! can see it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use kvapi::{Key, KeyRange, TenantId};
use serde::{Deserialize, Serialize};
use sqltypes::enums::{EnumLabel, EnumType};
use sqltypes::{DataType, RecordType, Value};

use crate::acl::{self, Ownership};
use crate::error::Result;
use crate::{bail, err};

/// First OID handed to user objects (PostgreSQL's FirstNormalObjectId).
pub const FIRST_USER_OID: u32 = 16384;

/// OID of the `public` schema (as in PostgreSQL).
pub const PUBLIC_NAMESPACE_OID: u32 = 2200;

/// OID of the tenant's one database, `postgres` (pg_database, pg_locks).
pub const DATABASE_OID: u32 = 5;

/// OID of `pg_catalog` (as in PostgreSQL).
pub const PG_CATALOG_NAMESPACE_OID: u32 = 11;

/// OID of `information_schema`.
pub const INFO_SCHEMA_NAMESPACE_OID: u32 = 13000;

/// OID of the session's temporary schema. Each session sees only its own
/// temporary tables, so one OID serves them all.
pub const TEMP_NAMESPACE_OID: u32 = 16383;

/// The temporary schema's name in pg_namespace (`pg_temp` also names it).
pub const TEMP_NAMESPACE_NAME: &str = "pg_temp_1";

/// The search_path setting's default.
pub const DEFAULT_SEARCH_PATH: &str = "\"$user\", public";

/// Where a named object lives: (namespace OID, name). Relation names are
/// unique within a namespace, type names too.
pub type QualName = (u32, String);

fn default_namespace() -> u32 {
    PUBLIC_NAMESPACE_OID
}

/// A name as written in SQL, folded: `s.t` or `t`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjName {
    /// The schema, if the name was qualified.
    pub schema: Option<String>,
    /// The object's own name.
    pub name: String,
}

impl ObjName {
    /// An unqualified name.
    pub fn bare(name: &str) -> ObjName {
        ObjName { schema: None, name: name.to_string() }
    }
}

impl std::fmt::Display for ObjName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.schema {
            Some(s) => write!(f, "{s}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// An extension installed by CREATE EXTENSION (plpgsql, built in, has no
/// entry; see `extensions.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtensionDef {
    /// pg_extension OID. Its member functions take the OIDs after it.
    pub oid: u32,
    /// Extension name (`uuid-ossp`).
    pub name: String,
    /// The schema its functions live in.
    pub namespace: u32,
    /// Owning role's name.
    pub owner: String,
    /// The installed version.
    pub version: String,
    /// How many of the extension's functions this installation has (OIDs
    /// `oid + 1 ..= oid + members`, in the order `extensions.rs` lists
    /// them; a later Strata that lists more leaves these as they are).
    pub members: u32,
    /// COMMENT ON EXTENSION text (the extension's own comment to start).
    #[serde(default)]
    pub comment: Option<String>,
}

/// A function made by CREATE FUNCTION ... LANGUAGE sql (one JSON row). A
/// call is planned by putting the body in the caller's query (see
/// bind/user_functions.rs), so the body is kept as SQL text and read with
/// the caller's search path, as PostgreSQL reads a SQL function's body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    /// pg_proc OID.
    pub oid: u32,
    /// Its schema's OID.
    pub namespace: u32,
    /// Function name.
    pub name: String,
    /// The input parameters (IN and INOUT).
    pub args: Vec<FunctionArg>,
    /// The OUT parameters, each with its place among all the parameters
    /// as declared (INOUT ones are in `args`; both kinds are outputs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outs: Vec<(usize, FunctionArg)>,
    /// What a call returns.
    pub returns: FunctionReturns,
    /// The body as given (pg_proc.prosrc): the query text of `AS '...'`,
    /// or the expression of `RETURN expr`.
    pub body: String,
    /// True when the body is `RETURN expr` (`body` is the expression).
    pub returns_expr: bool,
    /// LANGUAGE plpgsql (else sql).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plpgsql: bool,
    /// A procedure (CREATE PROCEDURE, run by CALL): its OUT parameters
    /// are in `args` too, as CALL passes them, and it returns nothing or
    /// one row of its outputs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub procedure: bool,
    /// A SQL function whose body is not one query to inline (several
    /// statements, INSERT/UPDATE/DELETE, or a void result): it runs as a
    /// PL/pgSQL block of its statements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub block: bool,
    /// pg_proc.provolatile: `i`, `s` or `v`.
    pub volatility: char,
    /// STRICT (RETURNS NULL ON NULL INPUT).
    pub strict: bool,
    /// SECURITY DEFINER: the body runs as the function's owner
    /// (pg_proc.prosecdef).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub security_definer: bool,
    /// The settings a call runs under, from its SET clauses, by canonical
    /// name (pg_proc.proconfig).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<(String, String)>,
    /// Owner and ACL.
    #[serde(flatten)]
    pub access: Ownership,
    /// COMMENT ON FUNCTION text.
    #[serde(default)]
    pub comment: Option<String>,
}

/// The OID of the pseudo-type `trigger`, which trigger functions return.
pub const TRIGGER_TYPE_OID: u32 = 2279;

/// An input parameter of a [`FunctionDef`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionArg {
    /// Its name, if it has one.
    pub name: Option<String>,
    /// Its type.
    pub ty: TypeDef,
    /// Its type as SQL text that names it under any search path
    /// (`integer`, `public.mood`).
    pub type_sql: String,
    /// Its DEFAULT expression as SQL text.
    pub default: Option<String>,
    /// IN, OUT or INOUT.
    #[serde(default, skip_serializing_if = "ParamMode::is_plain")]
    pub mode: ParamMode,
}

/// How a [`FunctionArg`] passes its value (pg_proc.proargmodes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamMode {
    /// IN: an input.
    #[default]
    In,
    /// OUT: an output, not part of the call's arguments.
    Out,
    /// INOUT: both.
    InOut,
    /// VARIADIC: an input array that takes the call's last arguments.
    Variadic,
}

impl ParamMode {
    /// True for an input only (IN or VARIADIC).
    pub fn is_in(&self) -> bool {
        matches!(self, ParamMode::In | ParamMode::Variadic)
    }

    /// True for plain IN, the mode a parameter has unless it says.
    pub fn is_plain(&self) -> bool {
        *self == ParamMode::In
    }

    /// The keyword before the parameter's name, if any, and its
    /// proargmodes letter.
    pub fn keyword(&self) -> (&'static str, &'static str) {
        match self {
            ParamMode::In => ("", "i"),
            ParamMode::Out => ("OUT ", "o"),
            ParamMode::InOut => ("INOUT ", "b"),
            ParamMode::Variadic => ("VARIADIC ", "v"),
        }
    }
}

/// What a [`FunctionDef`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FunctionReturns {
    /// One value of a type (its SQL text beside it).
    Value(TypeDef, String),
    /// Rows of one column (SETOF type).
    SetOf(TypeDef, String),
    /// Rows of named columns: RETURNS TABLE (...), or SETOF a table's row
    /// type (`row_type` is that table's OID).
    Rows {
        /// (name, type, type as SQL text) per column.
        columns: Vec<(String, TypeDef, String)>,
        /// The table whose row type this is, for SETOF table.
        row_type: Option<u32>,
        /// One row, not a set: a function with several OUT parameters and
        /// no SETOF.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        single: bool,
    },
}

impl FunctionReturns {
    /// True for RETURNS void.
    pub fn is_void(&self) -> bool {
        matches!(self, FunctionReturns::Value(t, _) if t.oid == DataType::Void.oid())
    }
}

impl FunctionDef {
    /// The parameter types, in order.
    pub fn arg_types(&self) -> Vec<DataType> {
        self.args.iter().map(|a| a.ty.to_type()).collect()
    }

    /// True for a trigger function (RETURNS trigger).
    pub fn returns_trigger(&self) -> bool {
        matches!(&self.returns, FunctionReturns::Value(t, _) if t.oid == TRIGGER_TYPE_OID)
    }

    /// True if a call yields rows (SETOF or TABLE).
    pub fn returns_set(&self) -> bool {
        !matches!(
            self.returns,
            FunctionReturns::Value(..) | FunctionReturns::Rows { single: true, .. }
        )
    }

    /// True if a call must run apart from its caller, under its own user
    /// or settings (SECURITY DEFINER or SET clauses): a SQL function's
    /// body is then not inlined.
    pub fn runs_apart(&self) -> bool {
        self.security_definer || !self.config.is_empty()
    }

    /// The element type of the VARIADIC parameter, which takes the call's
    /// last arguments as one array; None if the function has none.
    pub fn variadic(&self) -> Option<DataType> {
        match self.args.last() {
            Some(a) if a.mode == ParamMode::Variadic => match a.ty.to_type() {
                DataType::Array(e) => Some(*e),
                _ => None,
            },
            _ => None,
        }
    }

    /// True if a call runs the body through the PL/pgSQL interpreter, not
    /// inlined into the calling query.
    pub fn interpreted(&self) -> bool {
        self.plpgsql || self.block || self.runs_apart()
    }

    /// True if the function returns void.
    pub fn returns_void(&self) -> bool {
        self.returns.is_void()
    }

    /// True if a call yields one row of several columns (OUT
    /// parameters without SETOF).
    pub fn returns_row(&self) -> bool {
        matches!(self.returns, FunctionReturns::Rows { single: true, .. })
    }

    /// Every parameter in declared order: the inputs with the OUT ones
    /// in their places.
    pub fn all_params(&self) -> impl Iterator<Item = &FunctionArg> {
        let mut inputs = self.args.iter();
        let mut outs = self.outs.iter().peekable();
        let mut at = 0;
        std::iter::from_fn(move || {
            let next = match outs.next_if(|(p, _)| *p == at) {
                Some((_, a)) => Some(a),
                None => inputs.next().or_else(|| outs.next().map(|(_, a)| a)),
            };
            at += 1;
            next
        })
    }

    /// The output parameters (OUT and INOUT) in declared order.
    pub fn outputs(&self) -> impl Iterator<Item = &FunctionArg> {
        self.all_params().filter(|a| !a.mode.is_in())
    }
}

/// ALTER DEFAULT PRIVILEGES: the privileges objects of one kind get when
/// `role` creates them (in one schema, or in any).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefaultAclDef {
    /// pg_default_acl OID.
    pub oid: u32,
    /// The role whose new objects this applies to.
    pub role: String,
    /// The schema, or 0 for every schema.
    pub namespace: u32,
    /// The kind: `r` tables (and views), `S` sequences, `f` functions, `T`
    /// types, `n` schemas.
    pub objtype: char,
    /// The ACL: for every schema, the one new objects get in place of the
    /// default; for one schema, entries added to it.
    pub acl: Vec<acl::AclItem>,
}

/// A schema made by CREATE SCHEMA (`public` exists without one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaDef {
    /// pg_namespace OID.
    pub oid: u32,
    /// Schema name.
    pub name: String,
    /// Owner and ACL.
    #[serde(flatten)]
    pub access: Ownership,
    /// COMMENT ON SCHEMA text.
    #[serde(default)]
    pub comment: Option<String>,
}

/// A session's search_path, resolved against the catalog's schemas.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchPath {
    /// The setting's schemas that exist, in order (`$user` expanded):
    /// current_schemas(false). The first is where unqualified names are
    /// created.
    pub explicit: Vec<u32>,
    /// Where an unqualified relation name is looked for: the temporary
    /// schema (when the session has temporary tables) and pg_catalog first
    /// unless the setting places them, then `explicit`.
    pub relations: Vec<u32>,
    /// Where an unqualified type name is looked for: `relations` without
    /// the temporary schema.
    pub types: Vec<u32>,
}

/// The schema names a search_path setting lists, in order: identifiers
/// separated by commas, double-quoted ones kept as written, `$user`
/// replaced by `user`.
pub fn search_path_names(setting: &str, user: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in split_path(setting) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let name = match part.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
            Some(q) => q.replace("\"\"", "\""),
            None => part.to_lowercase(),
        };
        out.push(if name == "$user" { user.to_string() } else { name });
    }
    out
}

/// Splits at commas outside double quotes.
fn split_path(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A relation found by name.
#[derive(Debug, Clone)]
pub enum Relation {
    /// A table.
    Table(Arc<TableDef>),
    /// A view.
    View(Arc<ViewDef>),
    /// A sequence.
    Sequence(Arc<crate::sequence::SequenceDef>),
    /// An index of a table: its primary key's (None) or `indexes[i]`.
    Index(Arc<TableDef>, Option<usize>),
}

impl Relation {
    /// pg_class OID.
    pub fn oid(&self) -> u32 {
        match self {
            Relation::Table(t) => t.oid,
            Relation::View(v) => v.oid,
            Relation::Sequence(s) => s.oid,
            Relation::Index(t, None) => t.pkey_oid,
            Relation::Index(t, Some(i)) => t.indexes[*i].oid,
        }
    }

    /// Its owner and ACL (an index's are its table's).
    pub fn access(&self) -> &Ownership {
        match self {
            Relation::Table(t) | Relation::Index(t, _) => &t.access,
            Relation::View(v) => &v.access,
            Relation::Sequence(s) => &s.access,
        }
    }

    /// Its kind of object, for privileges and messages.
    pub fn kind(&self) -> acl::ObjKind {
        match self {
            Relation::Table(t) if t.matview.is_some() => acl::ObjKind::MatView,
            Relation::Table(_) => acl::ObjKind::Table,
            Relation::View(_) => acl::ObjKind::View,
            Relation::Sequence(_) => acl::ObjKind::Sequence,
            Relation::Index(..) => acl::ObjKind::Index,
        }
    }

    /// Its name (an index's own).
    pub fn name(&self) -> &str {
        match self {
            Relation::Table(t) => &t.name,
            Relation::View(v) => &v.name,
            Relation::Sequence(s) => &s.name,
            Relation::Index(t, None) => t.pkey_name.as_deref().unwrap_or(&t.name),
            Relation::Index(t, Some(i)) => &t.indexes[*i].name,
        }
    }

    /// Its schema's OID (an index's is its table's).
    pub fn namespace(&self) -> u32 {
        match self {
            Relation::Table(t) | Relation::Index(t, _) => t.namespace,
            Relation::View(v) => v.namespace,
            Relation::Sequence(s) => s.namespace,
        }
    }
}

/// A column of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    /// Column name (already case-folded).
    pub name: String,
    /// Declared type.
    pub ty: TypeDef,
    /// False if NOT NULL (or part of the primary key).
    pub nullable: bool,
    /// DEFAULT expression as SQL text, evaluated at insert time.
    pub default: Option<String>,
    /// IDENTITY column: 'a' (GENERATED ALWAYS) or 'd' (BY DEFAULT), as
    /// pg_attribute.attidentity.
    #[serde(default)]
    pub identity: Option<char>,
    /// GENERATED ALWAYS AS (expr) STORED: `default` holds the expression,
    /// computed from the row's other columns on every write
    /// (pg_attribute.attgenerated 's'; see [`TableDef::bound_generated`]).
    #[serde(default)]
    pub generated: bool,
    /// COMMENT ON COLUMN text.
    #[serde(default)]
    pub comment: Option<String>,
    /// The column's collation when it is not its type's (COLLATE "C"):
    /// pg_collation's OID, as pg_attribute.attcollation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<u32>,
}

impl ColumnDef {
    /// A nullable column of type `ty` without default, identity, comment
    /// or collation of its own.
    pub fn new(name: String, ty: TypeDef) -> ColumnDef {
        ColumnDef {
            name,
            ty,
            nullable: true,
            default: None,
            identity: None,
            generated: false,
            comment: None,
            collation: None,
        }
    }
}

/// A serializable mirror of [`DataType`] for catalog storage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeDef {
    /// Type OID.
    pub oid: u32,
    /// Type modifier (-1 if none).
    pub typmod: i32,
    /// The enum type's definition when `oid` is an enum or an array of one:
    /// not stored, filled in as the catalog is read ([`Catalog::resolve`]).
    #[serde(skip)]
    pub enum_type: Option<Arc<EnumType>>,
    /// The domain when `oid` is one (filled in the same way); the values
    /// are of its base type.
    #[serde(skip)]
    pub domain: Option<Arc<Domain>>,
    /// The composite type's fields when `oid` is a composite type made by
    /// CREATE TYPE, or an array of one (filled in the same way).
    #[serde(skip)]
    pub composite: Option<Arc<RecordType>>,
}

impl TypeDef {
    /// Records `ty`.
    pub fn from_type(ty: &DataType) -> TypeDef {
        let (enum_type, composite) = match ty.elem().unwrap_or(ty) {
            DataType::Enum(t) => (Some(t.clone()), None),
            DataType::Record(r) if r.named.is_some() => (None, Some(r.clone())),
            _ => (None, None),
        };
        TypeDef { oid: ty.oid(), typmod: ty.typmod(), enum_type, domain: None, composite }
    }

    /// A domain type (the modifier is the domain's, not the column's).
    pub fn of_domain(d: &Arc<Domain>) -> TypeDef {
        TypeDef { domain: Some(d.clone()), ..TypeDef::builtin(d.def.oid, -1) }
    }

    /// A built-in type by OID and modifier.
    pub fn builtin(oid: u32, typmod: i32) -> TypeDef {
        TypeDef { oid, typmod, enum_type: None, domain: None, composite: None }
    }

    /// The fractional-second digits of a `timestamp(p)`, `timestamptz(p)`,
    /// `time(p)`, `timetz(p)` or `interval(p)` type: None when unlimited
    /// or not such a type.
    pub fn time_precision(&self) -> Option<u8> {
        match self.oid {
            1114 | 1184 | 1083 | 1266 if self.typmod >= 0 => Some(self.typmod.min(6) as u8),
            1186 if self.typmod >= 0 && self.typmod & 0xffff != 0xffff => {
                Some((self.typmod & 0xffff).min(6) as u8)
            }
            _ => None,
        }
    }

    /// This type with `precision` fractional-second digits (the type
    /// modifier PostgreSQL gives `timestamp(p)` ... and `interval(p)`).
    pub fn with_time_precision(mut self, precision: u8) -> TypeDef {
        self.typmod = match self.oid {
            1186 => (0x7fff << 16) | i32::from(precision),
            _ => i32::from(precision),
        };
        self
    }

    /// The type's name as format_type writes it with a precision
    /// (`timestamp(3) without time zone`, `interval(1)`); None without one.
    pub fn precise_name(&self) -> Option<String> {
        let p = self.time_precision()?;
        Some(match self.oid {
            1114 => format!("timestamp({p}) without time zone"),
            1184 => format!("timestamp({p}) with time zone"),
            1083 => format!("time({p}) without time zone"),
            1266 => format!("time({p}) with time zone"),
            _ => format!("interval({p})"),
        })
    }

    /// Rebuilds the data type (a domain's values are of its base type).
    pub fn to_type(&self) -> DataType {
        if let Some(d) = &self.domain {
            return d.ty.clone();
        }
        if let Some(t) = &self.enum_type {
            let e = DataType::Enum(t.clone());
            return if self.oid == t.array_oid { e.array_of() } else { e };
        }
        if let Some(r) = &self.composite {
            let c = DataType::Record(r.clone());
            return if self.oid == c.array_of().oid() { c.array_of() } else { c };
        }
        with_typmod(DataType::from_oid(self.oid).unwrap_or(DataType::Text), self.typmod)
    }
}

/// A user-defined type as stored in the catalog (one KV row, JSON): an
/// enum type, a domain when `domain` is set or a composite type when
/// `composite` is (then `labels` is empty).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserTypeDef {
    /// pg_type OID.
    pub oid: u32,
    /// Its schema's OID.
    #[serde(default = "default_namespace")]
    pub namespace: u32,
    /// Its array type's OID.
    pub array_oid: u32,
    /// Type name.
    pub name: String,
    /// (pg_enum OID, sort order, label), in sort order.
    pub labels: Vec<(u32, f32, String)>,
    /// Owner and ACL.
    #[serde(flatten)]
    pub access: Ownership,
    /// COMMENT ON TYPE text.
    #[serde(default)]
    pub comment: Option<String>,
    /// What makes it a domain (CREATE DOMAIN).
    #[serde(default)]
    pub domain: Option<DomainSpec>,
    /// What makes it a composite type (CREATE TYPE ... AS (...)).
    #[serde(default)]
    pub composite: Option<CompositeSpec>,
}

/// A composite type's definition: its attributes, which pg_class and
/// pg_attribute list under a relation of kind `c`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompositeSpec {
    /// The OID of its pg_class row.
    pub relid: u32,
    /// The attributes, in order.
    pub attributes: Vec<CompositeAttribute>,
}

/// One attribute of a composite type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompositeAttribute {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: TypeDef,
    /// Its COLLATE clause's collation, when not its type's.
    #[serde(default)]
    pub collation: Option<u32>,
}

impl CompositeSpec {
    /// The attributes as pg_attribute lists them, their types resolved in
    /// `cat`.
    pub fn columns(&self, cat: &Catalog) -> Vec<ColumnDef> {
        let column = |a: &CompositeAttribute| {
            let mut t = a.ty.clone();
            cat.resolve(&mut t);
            ColumnDef { collation: a.collation, ..ColumnDef::new(a.name.clone(), t) }
        };
        self.attributes.iter().map(column).collect()
    }

    /// The row type `def` (a composite type) makes, its attributes' types
    /// resolved in `cat`.
    pub fn row_type(&self, cat: &Catalog, def: &UserTypeDef) -> Arc<RecordType> {
        let fields = self.columns(cat).into_iter().map(|c| (c.name, c.ty.to_type()));
        Arc::new(RecordType {
            fields: fields.collect(),
            named: Some(sqltypes::NamedRowType {
                oid: def.oid,
                array_oid: def.array_oid,
                name: def.name.clone(),
            }),
        })
    }
}

/// A domain's definition: the type it is over and its constraints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainSpec {
    /// The type it is over: a built-in type, an enum or another domain
    /// (then `base.oid` is that domain's).
    pub base: TypeDef,
    /// NOT NULL.
    pub not_null: bool,
    /// DEFAULT expression as SQL text, as a column's.
    pub default: Option<String>,
    /// CHECK constraints, in the order they were added.
    pub checks: Vec<DomainCheck>,
}

impl DomainSpec {
    /// The type it is over as `cat` knows it (an enum's labels, a
    /// domain's constraints); its `to_type()` is the domain's values' type.
    pub fn base_in(&self, cat: &Catalog) -> TypeDef {
        let mut base = self.base.clone();
        cat.resolve(&mut base);
        base
    }
}

/// A domain's CHECK constraint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainCheck {
    /// pg_constraint OID.
    pub oid: u32,
    /// Constraint name.
    pub name: String,
    /// The condition as SQL text; `VALUE` is the value checked.
    pub expr: String,
    /// False while NOT VALID (existing values were not checked).
    pub validated: bool,
}

/// What a user-defined type makes.
#[derive(Debug, Clone)]
pub enum UserTypeKind {
    /// An enum type.
    Enum(Arc<EnumType>),
    /// A domain.
    Domain(Arc<Domain>),
    /// A composite type.
    Composite(Arc<RecordType>),
}

/// A domain ready for use: its values' type and its CHECK constraints
/// bound, over the domain it is over, if any. A domain's values are values
/// of its base type; columns and casts of the domain type check them.
#[derive(Debug)]
pub struct Domain {
    /// The stored definition (`domain` is set).
    pub def: Arc<UserTypeDef>,
    /// The type of its values: the base type at the bottom of the chain.
    pub ty: DataType,
    /// The domain this one is over.
    pub base: Option<Arc<Domain>>,
    /// The definition's checks, bound over a one-column row (the value).
    checks: Vec<crate::expr::Expr>,
    /// Its name as errors show it: schema-qualified unless `public` (the
    /// path the catalog is bound with) finds it.
    shown: String,
}

impl PartialEq for Domain {
    fn eq(&self, other: &Domain) -> bool {
        self.def.oid == other.def.oid
    }
}

impl Domain {
    /// Binds domain `def`'s constraints over its values' type; the domain
    /// it is over, if any, must be in `cat` already.
    pub fn bind(cat: &Catalog, def: Arc<UserTypeDef>) -> Result<Domain> {
        let Some(spec) = &def.domain else {
            bail!(InternalError, "type \"{}\" is not a domain", def.name)
        };
        let base = spec.base_in(cat);
        let ty = base.to_type();
        let scope = Self::value_scope(&ty);
        let checks = spec
            .checks
            .iter()
            .map(|c| check_expr(cat, &parse_stored(&c.expr, "CHECK")?, &scope))
            .collect::<Result<Vec<_>>>()?;
        let base = base.domain;
        // Not yet among `cat`'s types: is it the first of its name on the path?
        let name = def.name.clone();
        let first = cat
            .path
            .types
            .iter()
            .find(|&&n| n == def.namespace || cat.user_types.contains_key(&(n, name.clone())));
        let shown = match first == Some(&def.namespace) {
            true => crate::func::catalog_info::quote_ident(&name),
            false => crate::func::catalog_info::qualified_name(cat, def.namespace, &name),
        };
        Ok(Domain { def, ty, base, checks, shown })
    }

    /// The scope a domain's CHECK is bound in: one column, `value`.
    pub fn value_scope(ty: &DataType) -> crate::bind::Scope {
        let mut t = TableDef::new(String::new());
        t.columns.push(ColumnDef::new("value".into(), TypeDef::from_type(ty)));
        crate::select::table_scope(&t, "", &None)
    }

    /// The stored definition's domain part.
    pub fn spec(&self) -> &DomainSpec {
        self.def.domain.as_ref().expect("a domain's definition has its spec")
    }

    /// The default of a column of this domain that has none of its own:
    /// this domain's, else the one it is over's.
    pub fn default(&self) -> Option<&str> {
        self.spec().default.as_deref().or_else(|| self.base.as_ref()?.default())
    }

    /// Checks `v` against the constraints of the domains it is over, then
    /// this one's (NOT NULL, then the CHECKs in order), as PostgreSQL
    /// does when a value becomes the domain's.
    pub fn check(&self, v: &Value) -> Result<()> {
        self.check_as(v, &self.shown)
    }

    /// [`Domain::check`], naming domain `name` (the one the value becomes)
    /// in errors.
    fn check_as(&self, v: &Value, name: &str) -> Result<()> {
        if let Some(b) = &self.base {
            b.check_as(v, name)?;
        }
        if self.spec().not_null && v.is_null() {
            bail!(NotNullViolation, "domain {name} does not allow null values");
        }
        if self.checks.is_empty() {
            return Ok(());
        }
        let ctx = crate::expr::EvalContext::default();
        for (c, e) in self.spec().checks.iter().zip(&self.checks) {
            if let Value::Bool(false) = e.eval(std::slice::from_ref(v), &ctx)? {
                return Err(err!(
                    CheckViolation,
                    "value for domain {name} violates check constraint \"{}\"",
                    c.name
                )
                .with_constraint(&c.name));
            }
        }
        Ok(())
    }
}

impl UserTypeDef {
    /// A new type `name` in schema `namespace`, owned by `owner`, with
    /// OID `oid` and its array type `oid + 1`: an enum without labels
    /// until its maker sets them, or the domain or composite type it sets.
    pub fn new(cat: &Catalog, oid: u32, namespace: u32, name: String, owner: &str) -> UserTypeDef {
        UserTypeDef {
            oid,
            namespace,
            array_oid: oid + 1,
            name,
            labels: Vec::new(),
            access: Ownership::created(cat, owner, acl::ObjKind::Type, namespace),
            comment: None,
            domain: None,
            composite: None,
        }
    }

    /// The enum type this definition makes.
    pub fn to_type(&self) -> EnumType {
        EnumType {
            oid: self.oid,
            array_oid: self.array_oid,
            name: self.name.clone(),
            labels: self
                .labels
                .iter()
                .map(|(oid, sort, label)| EnumLabel {
                    oid: *oid,
                    sort: *sort,
                    label: label.clone(),
                })
                .collect(),
        }
    }
}

/// Applies a stored type modifier to a type (an array's to its elements).
fn with_typmod(base: DataType, typmod: i32) -> DataType {
    match base {
        DataType::Varchar(_) if typmod >= 4 => DataType::Varchar(Some((typmod - 4) as u32)),
        DataType::Char(_) if typmod >= 4 => DataType::Char((typmod - 4) as u32),
        DataType::Numeric(_) if typmod >= 4 => {
            let m = typmod - 4;
            DataType::Numeric(Some(((m >> 16) as u32, (m & 0xffff) as u32)))
        }
        DataType::Array(e) => with_typmod(*e, typmod).array_of(),
        other => other,
    }
}

/// What a temporary table's rows or definition do at COMMIT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCommit {
    /// ON COMMIT DELETE ROWS: the rows go.
    DeleteRows,
    /// ON COMMIT DROP: the table goes.
    Drop,
}

/// A secondary index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    /// Index OID.
    pub oid: u32,
    /// Index name.
    pub name: String,
    /// Indexed column positions; [`EXPRESSION_KEY`] where a key is an
    /// expression (the next of `exprs`), as pg_index.indkey's 0.
    pub columns: Vec<usize>,
    /// The key expressions as SQL text, in key order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exprs: Vec<String>,
    /// A partial index's WHERE condition as SQL text: only rows it holds
    /// for have entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<String>,
    /// `exprs` and `predicate` bound over the table's row; filled with the
    /// CHECKs ([`bind_checks`]), never stored. None for a plain index.
    #[serde(skip)]
    pub bound: Option<Arc<BoundIndex>>,
    /// Per key, pg_index.indoption's bits: 1 = DESC, 2 = NULLS FIRST
    /// (empty: all 0). Only described: entries are stored in ascending
    /// key order whatever it says, and read either way (select/order.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<i16>,
    /// True for UNIQUE indexes.
    pub unique: bool,
    /// True if the index implements a UNIQUE constraint (declared in
    /// CREATE TABLE) rather than coming from CREATE UNIQUE INDEX.
    #[serde(default)]
    pub constraint: bool,
    /// Where the index entries are stored.
    pub storage: u64,
    /// A DEFERRABLE UNIQUE constraint's: Some(initially deferred). Its
    /// uniqueness holds at the end of each statement, not row by row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferral: Option<bool>,
    /// COMMENT ON INDEX text.
    #[serde(default)]
    pub comment: Option<String>,
    /// The access method CREATE INDEX named when not btree (`gin`,
    /// `hash`, ...): described only, the entries are kept as a btree's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Per key, the operator class named when not the type's default
    /// (`varchar_pattern_ops`; empty: all defaults). Described only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opclasses: Vec<Option<String>>,
    /// The INCLUDE columns' positions (stored in no entry).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<usize>,
    /// On a partition: the OID of the partitioned table's index this one
    /// is attached to (pg_inherits), which it serves for the partition's
    /// rows. None for an index of the partition's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
}

/// The `columns` entry of an index key that is an expression.
pub const EXPRESSION_KEY: usize = usize::MAX;

/// An expression or partial index's keys and condition, bound.
#[derive(Debug, PartialEq)]
pub struct BoundIndex {
    /// One expression per key (a column reference for a plain column).
    pub keys: Vec<crate::expr::Expr>,
    /// Each key's type.
    pub types: Vec<DataType>,
    /// The WHERE condition of a partial index.
    pub predicate: Option<crate::expr::Expr>,
}

impl IndexDef {
    /// A btree index on `columns` stored (and numbered) at `id`, without
    /// expressions, condition or options.
    pub fn new(id: u64, name: String, columns: Vec<usize>, unique: bool) -> IndexDef {
        IndexDef {
            oid: id as u32,
            name,
            columns,
            exprs: vec![],
            predicate: None,
            bound: None,
            options: vec![],
            unique,
            constraint: false,
            storage: id,
            deferral: None,
            comment: None,
            method: None,
            opclasses: vec![],
            include: vec![],
            parent: None,
        }
    }

    /// True if the index has the same definition as `other` (keys,
    /// expressions, condition, uniqueness, method, operator classes,
    /// orderings, INCLUDE columns), whatever their names and storage: a
    /// partition's index that may be attached to its parent's.
    pub fn same_definition(&self, other: &IndexDef) -> bool {
        self.columns == other.columns
            && self.exprs == other.exprs
            && self.predicate == other.predicate
            && self.unique == other.unique
            && self.method == other.method
            && self.opclasses == other.opclasses
            && self.options == other.options
            && self.include == other.include
    }

    /// A plain index: every key a column, no WHERE.
    pub fn is_plain(&self) -> bool {
        self.exprs.is_empty() && self.predicate.is_none()
    }

    /// The index's key values for `row` (None if a partial index leaves
    /// the row out).
    pub fn key_values(&self, row: &[Value]) -> Result<Option<Vec<Value>>> {
        let Some(b) = &self.bound else {
            return Ok(Some(self.columns.iter().map(|&c| row[c].clone()).collect()));
        };
        let ctx = crate::expr::EvalContext::default();
        if let Some(p) = &b.predicate {
            if !p.eval_pred(row, &ctx)? {
                return Ok(None);
            }
        }
        b.keys.iter().map(|k| k.eval(row, &ctx)).collect::<Result<Vec<_>>>().map(Some)
    }

    /// Each key's type.
    pub fn key_types(&self, t: &TableDef) -> std::borrow::Cow<'_, [DataType]> {
        match &self.bound {
            Some(b) => std::borrow::Cow::Borrowed(&b.types),
            None => self.columns.iter().map(|&c| t.columns[c].ty.to_type()).collect(),
        }
    }

    /// Each key as PostgreSQL names it in messages: the column's name or
    /// the expression's text.
    pub fn key_names<'a>(&'a self, t: &'a TableDef) -> Vec<&'a str> {
        let mut exprs = self.exprs.iter();
        self.columns
            .iter()
            .map(|&c| match c {
                EXPRESSION_KEY => exprs.next().map_or("?", String::as_str),
                c => t.columns[c].name.as_str(),
            })
            .collect()
    }

    /// The table columns the index reads, in its keys or its condition.
    pub fn used_columns(&self) -> Vec<usize> {
        let mut out: Vec<usize> =
            self.columns.iter().copied().filter(|&c| c != EXPRESSION_KEY).collect();
        if let Some(b) = &self.bound {
            for e in b.keys.iter().chain(&b.predicate) {
                e.walk(&mut |x| out.extend(x.as_column()));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A table definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    /// Table OID (pg_class.oid).
    pub oid: u32,
    /// Its schema's OID (indexes live there too).
    #[serde(default = "default_namespace")]
    pub namespace: u32,
    /// Table name.
    pub name: String,
    /// Columns in order.
    pub columns: Vec<ColumnDef>,
    /// Primary key column positions; empty means rows are keyed by a hidden
    /// unique row id.
    pub primary_key: Vec<usize>,
    /// Name of the primary key constraint (`<table>_pkey`).
    pub pkey_name: Option<String>,
    /// OID of the primary key's index (0 if none).
    #[serde(default)]
    pub pkey_oid: u32,
    /// A DEFERRABLE primary key's: Some(initially deferred), as
    /// [`IndexDef::deferral`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pkey_deferral: Option<bool>,
    /// On a partition: the OID of the partitioned table's primary key
    /// index that this table's primary key is attached to (pg_inherits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pkey_parent: Option<u32>,
    /// Secondary indexes.
    pub indexes: Vec<IndexDef>,
    /// Where the rows are stored (changes on TRUNCATE and key rewrites).
    pub storage: u64,
    /// CHECK constraints, sorted by name (PostgreSQL checks them in that order).
    #[serde(default)]
    pub checks: Vec<CheckDef>,
    /// The CHECK expressions bound over the table's row, in `checks` order;
    /// filled when the catalog is loaded ([`bind_checks`]), never stored.
    #[serde(skip)]
    pub bound_checks: Vec<crate::expr::Expr>,
    /// The generated columns' expressions bound over the table's row, as
    /// (column, expression); filled with `bound_checks`, never stored.
    #[serde(skip)]
    pub bound_generated: Vec<(usize, crate::expr::Expr)>,
    /// FOREIGN KEY constraints of this (referencing) table, sorted by name.
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The foreign keys of other tables (or this one) that reference this
    /// table: (referencing table, index into its `foreign_keys`).
    /// Filled when the catalog is loaded, never stored.
    #[serde(skip)]
    pub referenced_by: Vec<(QualName, usize)>,
    /// A temporary table: its definition lives only in the session that
    /// created it (never in the stored catalog), its rows under a storage
    /// id of its own, removed when the session ends.
    #[serde(default)]
    pub temporary: bool,
    /// A temporary table's ON COMMIT action (None: PRESERVE ROWS). Not
    /// stored: temporary tables live in the session.
    #[serde(skip)]
    pub on_commit: Option<OnCommit>,
    /// COMMENT ON TABLE text.
    #[serde(default)]
    pub comment: Option<String>,
    /// Set for a materialized view: a table whose rows its query made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matview: Option<MatViewDef>,
    /// Its triggers, in name order (the order they fire in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerDef>,
    /// PARTITION BY: set on a partitioned table, which holds no rows of
    /// its own (see partition.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_key: Option<crate::partition::PartitionKey>,
    /// PARTITION OF: set on a partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<crate::partition::PartitionOf>,
    /// A partition's constraint in values; filled when the catalog is
    /// loaded ([`crate::partition::bind`]), never stored.
    #[serde(skip)]
    pub partition_check: Option<Arc<crate::partition::Constraint>>,
    /// Owner and ACL (its indexes are the owner's too).
    #[serde(flatten)]
    pub access: Ownership,
}

/// A trigger (CREATE TRIGGER), stored on its table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerDef {
    /// pg_trigger OID.
    pub oid: u32,
    /// Trigger name (unique per table).
    pub name: String,
    /// pg_trigger.tgtype: the bits [`TriggerDef::ROW`], `BEFORE`, `INSERT`,
    /// `DELETE`, `UPDATE`, `TRUNCATE` and `INSTEAD`.
    pub tgtype: i16,
    /// UPDATE OF: the columns (positions) whose assignment fires it
    /// (empty: any UPDATE).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<usize>,
    /// The WHEN condition as SQL text (reading NEW and OLD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The trigger function's OID.
    pub function: u32,
    /// The arguments given to it (TG_ARGV).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// pg_trigger.tgenabled: `O` (fires) or `D` (disabled).
    pub enabled: char,
}

impl TriggerDef {
    /// Fires once per row (else once per statement).
    pub const ROW: i16 = 1;
    /// Fires before the event (else after).
    pub const BEFORE: i16 = 2;
    /// Fires on INSERT.
    pub const INSERT: i16 = 4;
    /// Fires on DELETE.
    pub const DELETE: i16 = 8;
    /// Fires on UPDATE.
    pub const UPDATE: i16 = 16;
    /// Fires on TRUNCATE.
    pub const TRUNCATE: i16 = 32;
    /// Fires instead of the event (views).
    pub const INSTEAD: i16 = 64;

    /// True if every bit of `bits` is set.
    pub fn has(&self, bits: i16) -> bool {
        self.tgtype & bits == bits
    }

    /// When it fires: BEFORE, AFTER or INSTEAD OF (TG_WHEN, and
    /// pg_get_triggerdef's and information_schema's spelling).
    pub fn timing(&self) -> &'static str {
        match () {
            _ if self.has(Self::INSTEAD) => "INSTEAD OF",
            _ if self.has(Self::BEFORE) => "BEFORE",
            _ => "AFTER",
        }
    }
}

/// What makes a table a materialized view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatViewDef {
    /// The query as SQL text (names schema-qualified, as a view's).
    pub query: String,
    /// False after WITH NO DATA: reading it is an error until REFRESH.
    pub populated: bool,
}

/// A FOREIGN KEY constraint, stored on the referencing table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    /// Constraint name.
    pub name: String,
    /// Constraint OID (pg_constraint.oid).
    pub oid: u32,
    /// Referencing column positions.
    pub columns: Vec<usize>,
    /// OID of the referenced table.
    pub ref_table: u32,
    /// Referenced column positions, pairwise with `columns`; together they
    /// are the referenced table's primary key or one of its unique indexes.
    pub ref_columns: Vec<usize>,
    /// Action when a referenced row is deleted.
    pub on_delete: FkAction,
    /// Action when a referenced key is changed.
    pub on_update: FkAction,
    /// MATCH FULL (else MATCH SIMPLE).
    #[serde(default)]
    pub match_full: bool,
    /// DEFERRABLE: SET CONSTRAINTS may move its checks to COMMIT.
    #[serde(default)]
    pub deferrable: bool,
    /// INITIALLY DEFERRED: its checks wait for COMMIT unless SET
    /// CONSTRAINTS says otherwise (see deferred.rs).
    #[serde(default)]
    pub initially_deferred: bool,
    /// Added NOT VALID: the rows already there were not checked (new
    /// rows are); VALIDATE CONSTRAINT checks them.
    #[serde(default)]
    pub not_valid: bool,
    /// On a partition: the OID of the partitioned table's foreign key this
    /// one is the partition's copy of (pg_constraint.conparentid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
}

impl ForeignKeyDef {
    /// True if `other` constrains the same way: same columns, referenced
    /// table and columns, actions, MATCH and deferral, whatever its name.
    /// A partition's foreign key that may stand for its parent's.
    pub fn same_definition(&self, other: &ForeignKeyDef) -> bool {
        self.columns == other.columns
            && self.ref_table == other.ref_table
            && self.ref_columns == other.ref_columns
            && self.on_delete == other.on_delete
            && self.on_update == other.on_update
            && self.match_full == other.match_full
            && self.deferral() == other.deferral()
    }

    /// Some(initially deferred) when DEFERRABLE, as [`IndexDef::deferral`].
    pub fn deferral(&self) -> Option<bool> {
        self.deferrable.then_some(self.initially_deferred)
    }
}

/// What happens to referencing rows when the referenced key goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    /// Error at the end of the statement if references remain (the default).
    NoAction,
    /// Error if references exist, even if the key reappears in the statement.
    Restrict,
    /// Delete (or re-key) the referencing rows.
    Cascade,
    /// Set the referencing columns to NULL.
    SetNull,
    /// Set the referencing columns to their defaults.
    SetDefault,
}

impl FkAction {
    /// pg_constraint.confdeltype / confupdtype code.
    pub fn code(self) -> &'static str {
        match self {
            FkAction::NoAction => "a",
            FkAction::Restrict => "r",
            FkAction::Cascade => "c",
            FkAction::SetNull => "n",
            FkAction::SetDefault => "d",
        }
    }

    /// The SQL spelling (information_schema.referential_constraints).
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::SetDefault => "SET DEFAULT",
        }
    }
}

/// A CHECK constraint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckDef {
    /// Constraint name.
    pub name: String,
    /// The condition as SQL text.
    pub expr: String,
    /// Added NOT VALID: the rows already there were not checked (new
    /// rows are); VALIDATE CONSTRAINT checks them.
    #[serde(default)]
    pub not_valid: bool,
}

impl CheckDef {
    /// The constraint's pg_constraint OID. CHECK constraints get no OID
    /// from the allocator; this one is derived from the table's OID and the
    /// name (FNV-1a into 3e9..4e9, above the OIDs the allocator hands out
    /// in practice), so it is stable across restarts and renames of other
    /// constraints.
    pub fn oid(&self, table_oid: u32) -> u32 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in table_oid.to_be_bytes().iter().chain(self.name.as_bytes()) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        3_000_000_000 + (h % 1_000_000_000) as u32
    }
}

/// Binds `t`'s CHECK expressions over its row (see [`TableDef::bound_checks`]),
/// and the keys and conditions of its expression and partial indexes (see
/// [`IndexDef::bound`]).
pub fn bind_checks(cat: &Catalog, t: &mut TableDef) -> Result<()> {
    let scope = crate::select::table_scope(t, &t.name, &None);
    let mut bound = Vec::with_capacity(t.checks.len());
    for c in &t.checks {
        bound.push(check_expr(cat, &parse_stored(&c.expr, "CHECK")?, &scope)?);
    }
    t.bound_checks = bound;
    let mut generated = Vec::new();
    for (i, c) in t.columns.iter().enumerate().filter(|(_, c)| c.generated) {
        let text = c.default.as_deref().unwrap_or("NULL");
        generated
            .push((i, generation_expr(cat, t, i, &parse_stored(text, "generation")?, &scope)?));
    }
    t.bound_generated = generated;
    let mut indexes = std::mem::take(&mut t.indexes);
    for idx in indexes.iter_mut().filter(|i| !i.is_plain()) {
        idx.bound = Some(Arc::new(bind_index(cat, t, idx, &scope)?));
    }
    t.indexes = indexes;
    Ok(())
}

/// A stored expression (`what` says whose, for the error), parsed.
pub fn parse_stored(text: &str, what: &str) -> Result<sqlparser::ast::Expr> {
    crate::parse::expr_text(text)
        .map_err(|e| err!(DataCorrupted, "stored {what} expression does not parse: {e}"))
}

/// Binds an expression or partial index's keys and condition over `t`'s row.
fn bind_index(
    cat: &Catalog,
    t: &TableDef,
    idx: &IndexDef,
    scope: &crate::bind::Scope,
) -> Result<BoundIndex> {
    let mut exprs = idx.exprs.iter();
    let (mut keys, mut types) = (Vec::new(), Vec::new());
    for &c in &idx.columns {
        if c != EXPRESSION_KEY {
            keys.push(crate::expr::Expr::Column(c));
            types.push(t.columns[c].ty.to_type());
            continue;
        }
        let text =
            exprs.next().ok_or_else(|| err!(DataCorrupted, "index key without expression"))?;
        let (x, ty) = index_expr(cat, &parse_stored(text, "index")?, scope, false)?;
        keys.push(x);
        types.push(ty);
    }
    let predicate = match &idx.predicate {
        Some(p) => Some(index_expr(cat, &parse_stored(p, "index")?, scope, true)?.0),
        None => None,
    };
    Ok(BoundIndex { keys, types, predicate })
}

/// Binds generated column `i`'s expression `e` over `t`'s row, as the
/// column's type, refusing what PostgreSQL refuses there: other generated
/// columns, the whole row, functions that are not immutable, aggregates
/// and subqueries.
fn generation_expr(
    cat: &Catalog,
    t: &TableDef,
    i: usize,
    e: &sqlparser::ast::Expr,
    scope: &crate::bind::Scope,
) -> Result<crate::expr::Expr> {
    use sqlparser::ast::Expr as A;
    let mut whole_row = false;
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        if let A::Identifier(id) = x {
            let n = crate::bind::ident(id);
            whole_row |= n == t.name && t.column_index(&n).is_none();
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    if whole_row {
        bail!(
            InvalidObjectDefinition,
            "cannot use whole-row variable in column generation expression"
        );
    }
    if !immutable(cat, e) {
        bail!(InvalidObjectDefinition, "generation expression is not immutable");
    }
    let ty = t.columns[i].ty.to_type();
    bind_row_expr(cat, e, "column generation expression", |b| {
        let x = b.assign(e, scope, &ty)?;
        let mut other = None;
        x.walk(&mut |y| {
            if let Some(j) =
                y.as_column().filter(|&j| t.columns.get(j).is_some_and(|c| c.generated))
            {
                other = Some(j);
            }
        });
        if let Some(j) = other {
            return Err(err!(
                InvalidObjectDefinition,
                "cannot use generated column \"{}\" in column generation expression",
                t.columns[j].name
            )
            .with_detail("A generated column cannot reference another generated column."));
        }
        Ok(x)
    })
}

/// False if `e` calls a function whose result may change between calls
/// or with the session's settings.
fn immutable(cat: &Catalog, e: &sqlparser::ast::Expr) -> bool {
    let mut volatile = false;
    let _ = sqlparser::ast::visit_expressions(e, |x| {
        if let sqlparser::ast::Expr::Function(f) = x {
            let name = f.name.to_string().to_ascii_lowercase();
            let last = name.rsplit('.').next().unwrap_or_default();
            volatile |= VOLATILE_OR_STABLE.contains(&last)
                || crate::extensions::members(cat)
                    .any(|m| m.proc.name == last && m.proc.volatile != "i");
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    !volatile
}

/// Binds an index key expression (or, with `predicate`, its WHERE
/// condition) over a table's row, refusing what PostgreSQL refuses there.
pub fn index_expr(
    cat: &Catalog,
    e: &sqlparser::ast::Expr,
    scope: &crate::bind::Scope,
    predicate: bool,
) -> Result<(crate::expr::Expr, DataType)> {
    let place = if predicate { "index predicate" } else { "index expression" };
    bind_row_expr(cat, e, place, |b| {
        if !immutable(cat, e) {
            bail!(InvalidObjectDefinition, "functions in {place} must be marked IMMUTABLE");
        }
        let (x, t) = b.expr(e, scope)?;
        match predicate {
            true => Ok((condition(b, x, &t, "WHERE")?, DataType::Bool)),
            false => Ok((x, t)),
        }
    })
}

/// Binds `e` where PostgreSQL allows neither an aggregate nor a subquery
/// (over a table's row), `bind` doing the binding; `place` names the spot
/// in the errors ("check constraint", "transform expression").
pub fn bind_row_expr<R>(
    cat: &Catalog,
    e: &sqlparser::ast::Expr,
    place: &str,
    bind: impl FnOnce(&mut crate::bind::Binder<'_>) -> Result<R>,
) -> Result<R> {
    if crate::bind::contains_aggregate(e) {
        bail!(GroupingError, "aggregate functions are not allowed in {place}s");
    }
    let mut b = crate::bind::Binder::new(cat, vec![]);
    b.stored = true;
    let r = bind(&mut b)?;
    if !b.subqueries.is_empty() || !b.correlated.is_empty() {
        bail!(FeatureNotSupported, "cannot use subquery in {place}");
    }
    Ok(r)
}

/// `x` of type `t` as the boolean condition `what` (CHECK, WHERE) needs.
fn condition(
    b: &mut crate::bind::Binder<'_>,
    x: crate::expr::Expr,
    t: &DataType,
    what: &str,
) -> Result<crate::expr::Expr> {
    if !matches!(t, DataType::Bool | DataType::Unknown) {
        bail!(DatatypeMismatch, "argument of {what} must be type boolean, not type {t}");
    }
    b.coerce(x, t, &DataType::Bool)
}

/// Built-in functions whose result may change between calls or with the
/// session's settings: PostgreSQL refuses them in index expressions.
const VOLATILE_OR_STABLE: &[&str] = &[
    "now",
    "random",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "nextval",
    "currval",
    "lastval",
    "setval",
    "gen_random_uuid",
    "current_setting",
    "set_config",
    "to_char",
    "to_timestamp",
    "to_date",
    "age",
    "pg_backend_pid",
    "current_database",
    "current_schema",
    "current_user",
    "version",
];

/// Binds one CHECK condition over a table's row scope.
pub fn check_expr(
    cat: &Catalog,
    e: &sqlparser::ast::Expr,
    scope: &crate::bind::Scope,
) -> Result<crate::expr::Expr> {
    bind_row_expr(cat, e, "check constraint", |b| {
        let (x, t) = b.expr(e, scope)?;
        condition(b, x, &t, "CHECK")
    })
}

/// A view's WITH CHECK OPTION.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckOption {
    /// LOCAL: this view's condition, and those of the views below that
    /// have a check option of their own.
    Local,
    /// CASCADED (the default): the conditions of this view and of every
    /// view below it.
    Cascaded,
}

impl CheckOption {
    /// The reloption value and information_schema's spelling, lower case.
    pub fn name(self) -> &'static str {
        match self {
            CheckOption::Local => "local",
            CheckOption::Cascaded => "cascaded",
        }
    }
}

/// A relation with triggers: a table or a view.
pub struct TriggerHost<'a> {
    /// Its pg_class OID.
    pub oid: u32,
    /// Its schema.
    pub namespace: u32,
    /// Its name.
    pub name: &'a str,
    /// Its column names (what UPDATE OF positions index).
    pub columns: Vec<&'a str>,
    /// Its triggers, in name order.
    pub triggers: &'a [TriggerDef],
}

impl Catalog {
    /// Every table and view that has triggers.
    pub fn trigger_hosts(&self) -> impl Iterator<Item = TriggerHost<'_>> {
        let tables = self.tables.values().map(|t| TriggerHost {
            oid: t.oid,
            namespace: t.namespace,
            name: &t.name,
            columns: t.columns.iter().map(|c| c.name.as_str()).collect(),
            triggers: &t.triggers,
        });
        let views = self.views.values().map(|v| TriggerHost {
            oid: v.oid,
            namespace: v.namespace,
            name: &v.name,
            columns: v.columns.iter().map(String::as_str).collect(),
            triggers: &v.triggers,
        });
        tables.chain(views).filter(|h| !h.triggers.is_empty())
    }
}

impl ViewDef {
    /// The view as a table with its columns and triggers and no storage:
    /// what its triggers fire on.
    pub fn trigger_shell(&self, cat: &Catalog) -> TableDef {
        TableDef {
            oid: self.oid,
            namespace: self.namespace,
            columns: cat.view_columns(self),
            triggers: self.triggers.clone(),
            ..TableDef::new(self.name.clone())
        }
    }

    /// True if it has an INSTEAD OF trigger for `event` (a
    /// [`TriggerDef`] event bit), enabled or not.
    pub fn has_instead(&self, event: i16) -> bool {
        self.triggers.iter().any(|t| t.has(TriggerDef::INSTEAD | event))
    }

    /// The stored query, parsed.
    pub fn parse(&self) -> Result<sqlparser::ast::Query> {
        crate::parse::query_text(&self.query).map_err(|e| {
            err!(DataCorrupted, "stored query of view \"{}\" does not parse: {e}", self.name)
        })
    }
}

/// One column's DEFAULT, of a table or a view ([`Catalog::column_defaults`]).
#[derive(Debug, Clone, Copy)]
pub struct ColumnDefault<'a> {
    /// The relation's pg_class OID.
    pub relation: u32,
    /// "table" or "view", as PostgreSQL names the relation's kind.
    pub kind: &'static str,
    /// The relation's name.
    pub relation_name: &'a str,
    /// The column's name.
    pub column: &'a str,
    /// The column's position (0-based).
    pub position: usize,
    /// The DEFAULT expression as SQL text.
    pub text: &'a str,
}

impl Catalog {
    /// The sequence owned by column `column` of table `table` (a SERIAL's
    /// or an identity column's), if any.
    pub fn owned_sequence(
        &self,
        table: u32,
        column: &str,
    ) -> Option<&Arc<crate::sequence::SequenceDef>> {
        self.sequences
            .values()
            .find(|s| s.owned_by.as_ref().is_some_and(|(o, c)| *o == table && c == column))
    }

    /// Every column DEFAULT of the tables and views, as stored (a view's
    /// query is not bound for them); an identity column's nextval is none.
    pub fn column_defaults(&self) -> impl Iterator<Item = ColumnDefault<'_>> + '_ {
        // An identity column's nextval is no default of PostgreSQL's.
        let tables = self.tables.values().flat_map(|t| {
            t.columns.iter().enumerate().filter(|(_, c)| c.identity.is_none()).filter_map(
                move |(i, c)| {
                    Some(ColumnDefault {
                        relation: t.oid,
                        kind: "table",
                        relation_name: &t.name,
                        column: &c.name,
                        position: i,
                        text: c.default.as_deref()?,
                    })
                },
            )
        });
        let views = self.views.values().flat_map(|v| {
            v.columns.iter().zip(&v.defaults).enumerate().filter_map(move |(i, (c, d))| {
                Some(ColumnDefault {
                    relation: v.oid,
                    kind: "view",
                    relation_name: &v.name,
                    column: c,
                    position: i,
                    text: d.as_deref()?,
                })
            })
        });
        tables.chain(views)
    }

    /// The COMMENT of every relation that has one (tables, views,
    /// sequences, indexes), by pg_class OID.
    pub fn relation_comments(&self) -> impl Iterator<Item = (u32, &str)> + '_ {
        let tables = self.tables.values().flat_map(|t| {
            let indexes = t.indexes.iter().map(|i| (i.oid, i.comment.as_deref()));
            std::iter::once((t.oid, t.comment.as_deref())).chain(indexes)
        });
        let views = self.views.values().map(|v| (v.oid, v.comment.as_deref()));
        let sequences = self.sequences.values().map(|s| (s.oid, s.comment.as_deref()));
        tables.chain(views).chain(sequences).filter_map(|(o, c)| Some((o, c?)))
    }

    /// The columns of view `v` as its query yields them now: nullable,
    /// with the view's defaults. (A view whose query no longer binds shows
    /// text columns.)
    pub fn view_columns(&self, v: &ViewDef) -> Vec<ColumnDef> {
        let cols = v
            .parse()
            .and_then(|q| crate::bind::Binder::new(self, vec![]).query(&q))
            .map(|(_, cols)| cols)
            .unwrap_or_default();
        let ty = |i: usize| cols.get(i).map(|c| c.ty.clone()).unwrap_or(DataType::Text);
        v.columns
            .iter()
            .enumerate()
            .map(|(i, name)| ColumnDef {
                default: v.defaults.get(i).cloned().flatten(),
                ..ColumnDef::new(name.clone(), TypeDef::from_type(&ty(i)))
            })
            .collect()
    }
}

impl TableDef {
    /// True if a UNIQUE or PRIMARY KEY constraint of the table is named
    /// `name`.
    pub fn has_key_constraint(&self, name: &str) -> bool {
        self.indexes.iter().any(|i| i.constraint && i.name == name)
            || (!self.primary_key.is_empty() && self.pkey_name.as_deref() == Some(name))
    }

    /// True if a constraint of the table (CHECK, FOREIGN KEY, UNIQUE or
    /// PRIMARY KEY) is named `name`.
    pub fn has_constraint(&self, name: &str) -> bool {
        self.checks.iter().any(|c| c.name == name)
            || self.foreign_keys.iter().any(|f| f.name == name)
            || self.has_key_constraint(name)
    }

    /// Position of column `name`, if any.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The declared types of all columns.
    pub fn types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.ty.to_type()).collect()
    }

    /// The table's row type (NEW, OLD, `t%ROWTYPE`, the type `t`).
    pub fn row_type(&self) -> std::sync::Arc<sqltypes::RecordType> {
        sqltypes::RecordType::new(
            self.columns.iter().map(|c| (c.name.clone(), c.ty.to_type())).collect(),
        )
    }

    /// An empty definition named `name` (OIDs and storage not yet assigned).
    pub fn new(name: String) -> TableDef {
        TableDef {
            oid: 0,
            namespace: PUBLIC_NAMESPACE_OID,
            name,
            columns: vec![],
            primary_key: vec![],
            pkey_name: None,
            pkey_oid: 0,
            pkey_deferral: None,
            pkey_parent: None,
            indexes: vec![],
            storage: 0,
            checks: vec![],
            bound_checks: vec![],
            bound_generated: vec![],
            foreign_keys: vec![],
            referenced_by: vec![],
            temporary: false,
            on_commit: None,
            comment: None,
            matview: None,
            triggers: vec![],
            partition_key: None,
            partition_of: None,
            partition_check: None,
            access: Ownership::default(),
        }
    }

    /// True for a partitioned table (PARTITION BY), which holds no rows.
    pub fn is_partitioned(&self) -> bool {
        self.partition_key.is_some()
    }

    /// True if a UNIQUE or PRIMARY KEY constraint of the table is
    /// DEFERRABLE: an UPDATE then checks uniqueness at its end.
    pub fn has_deferrable_unique(&self) -> bool {
        self.pkey_deferral.is_some() || self.indexes.iter().any(|i| i.deferral.is_some())
    }

    /// True if writes to this table take part in foreign keys, either side.
    pub fn has_foreign_keys(&self) -> bool {
        !self.foreign_keys.is_empty() || !self.referenced_by.is_empty()
    }

    /// Types of the primary-key columns.
    pub fn pk_types(&self) -> Vec<DataType> {
        self.primary_key.iter().map(|&i| self.columns[i].ty.to_type()).collect()
    }

    /// Its key in [`Catalog::tables`].
    pub fn qual_name(&self) -> QualName {
        (self.namespace, self.name.clone())
    }
}

/// A role (user). The built-in superuser `postgres` exists implicitly until
/// a stored definition overrides it (for example to give it a password).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleDef {
    /// Role name.
    pub name: String,
    /// rolsuper.
    pub superuser: bool,
    /// rolcanlogin.
    pub login: bool,
    /// Stored password verifier (`SCRAM-SHA-256$...`), if any.
    pub password: Option<String>,
    /// rolinherit: the role has the privileges of the roles it is a
    /// member of.
    #[serde(default = "yes")]
    pub inherit: bool,
    /// rolcreaterole.
    #[serde(default)]
    pub createrole: bool,
    /// rolcreatedb.
    #[serde(default)]
    pub createdb: bool,
    /// The roles this one is a member of (pg_auth_members), in the order
    /// granted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_of: Vec<Membership>,
}

fn yes() -> bool {
    true
}

/// A role's membership in another (GRANT role TO member).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Membership {
    /// The role granted.
    pub role: String,
    /// Who granted it.
    pub grantor: String,
    /// WITH ADMIN OPTION: the member may grant the role on.
    pub admin: bool,
}

impl RoleDef {
    /// The built-in superuser.
    pub fn bootstrap() -> RoleDef {
        RoleDef { superuser: true, login: true, ..RoleDef::new(acl::BOOTSTRAP) }
    }

    /// A role with PostgreSQL's defaults (NOLOGIN, INHERIT).
    pub fn new(name: &str) -> RoleDef {
        RoleDef {
            name: name.into(),
            superuser: false,
            login: false,
            password: None,
            inherit: true,
            createrole: false,
            createdb: false,
            member_of: Vec::new(),
        }
    }
}

/// All table definitions of one tenant, as of one catalog version.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The version counter value this catalog was read at.
    pub version: u64,
    /// Schemas made by CREATE SCHEMA, by name.
    pub schemas: BTreeMap<String, Arc<SchemaDef>>,
    /// Tables by schema and name.
    pub tables: BTreeMap<QualName, Arc<TableDef>>,
    /// Roles stored in the catalog (see [`Catalog::role`] for the bootstrap role).
    pub roles: BTreeMap<String, RoleDef>,
    /// Sequences by schema and name.
    pub sequences: BTreeMap<QualName, Arc<crate::sequence::SequenceDef>>,
    /// Views by schema and name.
    pub views: BTreeMap<QualName, Arc<ViewDef>>,
    /// User-defined types (enums and domains) by schema and name: the
    /// stored definition and what it makes.
    pub user_types: BTreeMap<QualName, (Arc<UserTypeDef>, UserTypeKind)>,
    /// Extensions installed by CREATE EXTENSION, by name.
    pub extensions: BTreeMap<String, Arc<ExtensionDef>>,
    /// The search_path names are resolved with. The shared catalog carries
    /// the default setting's; a session lays its own over it.
    pub path: SearchPath,
    /// True once the built-in `public` schema was dropped. A `public` made
    /// again by CREATE SCHEMA is an ordinary entry of `schemas`.
    pub public_dropped: bool,
    /// The built-in `public` schema's owner and ACL once GRANT, REVOKE or
    /// OWNER TO changed them (None: PostgreSQL 15's, see
    /// [`Catalog::public_access`]).
    pub public_access: Option<Ownership>,
    /// The database's owner and ACL (datacl).
    pub database_access: Ownership,
    /// ALTER DEFAULT PRIVILEGES entries, by OID.
    pub default_acls: Vec<Arc<DefaultAclDef>>,
    /// SQL functions by schema and name (the overloads of one name).
    pub functions: BTreeMap<QualName, Vec<Arc<FunctionDef>>>,
    /// The partitions of each partitioned table (by OID), in bound order.
    pub partitions: BTreeMap<u32, Vec<Arc<TableDef>>>,
}

/// A view: a stored query planned again wherever the view is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    /// pg_class OID.
    pub oid: u32,
    /// Its schema's OID.
    #[serde(default = "default_namespace")]
    pub namespace: u32,
    /// View name.
    pub name: String,
    /// The query as SQL text.
    pub query: String,
    /// Output column names (the query's, or the view's column list).
    pub columns: Vec<String>,
    /// COMMENT ON VIEW text.
    #[serde(default)]
    pub comment: Option<String>,
    /// WITH \[LOCAL | CASCADED\] CHECK OPTION: rows written through the view
    /// must be visible in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_option: Option<CheckOption>,
    /// Its triggers (INSTEAD OF row triggers, BEFORE/AFTER statement
    /// triggers), in name order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<TriggerDef>,
    /// Column DEFAULTs (ALTER VIEW ... ALTER COLUMN ... SET DEFAULT) as SQL
    /// text, by column position (shorter than the columns when the last
    /// have none). INSERT and UPDATE through the view use them before the
    /// table's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defaults: Vec<Option<String>>,
    /// Owner and ACL. The tables the view reads are read with its owner's
    /// privileges.
    #[serde(flatten)]
    pub access: Ownership,
}

impl Catalog {
    /// The SQL function with this OID.
    pub fn function_by_oid(&self, oid: u32) -> Option<&Arc<FunctionDef>> {
        self.functions.values().flatten().find(|f| f.oid == oid)
    }

    /// True if an unqualified call finds SQL function `f`'s schema first.
    pub fn function_visible(&self, f: &FunctionDef) -> bool {
        let has = |ns: &&u32| self.functions.contains_key(&(**ns, f.name.clone()));
        self.path.relations.iter().find(has) == Some(&f.namespace)
    }

    /// Looks a role up, including the implicit bootstrap superuser.
    pub fn role(&self, name: &str) -> Option<RoleDef> {
        match self.roles.get(name) {
            Some(r) => Some(r.clone()),
            None if name == "postgres" => Some(RoleDef::bootstrap()),
            None => None,
        }
    }

    /// True for a superuser (a role that is gone is none).
    pub fn is_superuser(&self, name: &str) -> bool {
        match self.roles.get(name) {
            Some(r) => r.superuser,
            None => name == acl::BOOTSTRAP,
        }
    }

    /// `user` and the roles it is a member of, directly or not; with
    /// `inheriting`, only through roles that inherit (whose privileges
    /// pass on). The bootstrap superuser belongs to no role.
    fn member_closure(&self, user: &str, inheriting: bool) -> Vec<String> {
        let mut out = vec![user.to_string()];
        let mut i = 0;
        while i < out.len() {
            let role = self.roles.get(&out[i]).filter(|r| r.inherit || !inheriting);
            for m in role.iter().flat_map(|r| &r.member_of) {
                if !out.contains(&m.role) {
                    out.push(m.role.clone());
                }
            }
            i += 1;
        }
        out
    }

    /// Every role whose privileges `user` has: itself and, through
    /// memberships of inheriting roles, the roles it belongs to
    /// (`pg_database_owner` for the database's owner).
    pub fn roles_of(&self, user: &str) -> Vec<String> {
        let mut out = self.member_closure(user, true);
        if out.contains(&self.database_access.owner) {
            out.push(acl::DATABASE_OWNER.into());
        }
        // pg_monitor is a member of three predefined roles.
        if out.iter().any(|r| r == "pg_monitor") {
            out.extend(
                ["pg_read_all_settings", "pg_read_all_stats", "pg_stat_scan_tables"]
                    .map(String::from),
            );
        }
        out
    }

    /// True when `user` has the privileges of `role`: it is the role, a
    /// superuser, or an inheriting member of it.
    pub fn has_privs_of(&self, user: &str, role: &str) -> bool {
        user == role || self.is_superuser(user) || self.roles_of(user).iter().any(|r| r == role)
    }

    /// True when `user` is `role` or a member of it, directly or not,
    /// whether or not it inherits (SET ROLE needs no more; superusers may
    /// become anyone).
    pub fn is_member_of(&self, user: &str, role: &str) -> bool {
        self.member_closure(user, false).iter().any(|r| r == role)
    }

    /// True when `user` may SET ROLE to `role` or give it objects: a
    /// superuser or a member.
    pub fn may_become(&self, user: &str, role: &str) -> bool {
        self.is_superuser(user) || self.is_member_of(user, role)
    }

    /// The owner and ACL of the schema with this OID (the system schemas
    /// belong to the bootstrap superuser; their ACL lets everyone use them).
    pub fn schema_access(&self, oid: u32) -> Option<Cow<'_, Ownership>> {
        match oid {
            PUBLIC_NAMESPACE_OID if !self.public_dropped => Some(self.public_access()),
            PG_CATALOG_NAMESPACE_OID | INFO_SCHEMA_NAMESPACE_OID | TEMP_NAMESPACE_OID => {
                let mut o = Ownership::default();
                let mut items = acl::default_acl(acl::ObjKind::Schema, acl::BOOTSTRAP);
                items.push(acl::AclItem {
                    grantee: String::new(),
                    grantor: acl::BOOTSTRAP.into(),
                    privs: acl::USAGE,
                    grantable: 0,
                });
                o.acl = Some(items);
                Some(Cow::Owned(o))
            }
            _ => self.schemas.values().find(|s| s.oid == oid).map(|s| Cow::Borrowed(&s.access)),
        }
    }

    /// The built-in `public` schema's owner and ACL: PostgreSQL 15's
    /// (owned by pg_database_owner, which may create; everyone may use it)
    /// until changed.
    pub fn public_access(&self) -> Cow<'_, Ownership> {
        if let Some(a) = &self.public_access {
            return Cow::Borrowed(a);
        }
        let owner = acl::DATABASE_OWNER;
        let mut o = Ownership::new(owner);
        let mut items = acl::default_acl(acl::ObjKind::Schema, owner);
        items.push(acl::AclItem {
            grantee: String::new(),
            grantor: owner.into(),
            privs: acl::USAGE,
            grantable: 0,
        });
        o.acl = Some(items);
        Cow::Owned(o)
    }

    /// Every role, bootstrap included, by name.
    pub fn all_roles(&self) -> Vec<RoleDef> {
        let mut v: Vec<RoleDef> = self.roles.values().cloned().collect();
        if !self.roles.contains_key("postgres") {
            v.push(RoleDef::bootstrap());
        }
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// The enum type whose own or array OID is `oid`.
    fn enum_of(&self, oid: u32) -> Option<&Arc<EnumType>> {
        self.user_types.values().find_map(|(_, k)| match k {
            UserTypeKind::Enum(t) if t.oid == oid || t.array_oid == oid => Some(t),
            _ => None,
        })
    }

    /// The composite type whose own or array OID is `oid`.
    fn composite_of(&self, oid: u32) -> Option<&Arc<RecordType>> {
        self.user_types.values().find_map(|(d, k)| match k {
            UserTypeKind::Composite(t) if d.oid == oid || d.array_oid == oid => Some(t),
            _ => None,
        })
    }

    /// The domain whose OID is `oid`.
    pub fn domain_of(&self, oid: u32) -> Option<Arc<Domain>> {
        self.user_types.values().find_map(|(_, k)| match k {
            UserTypeKind::Domain(d) if d.def.oid == oid => Some(d.clone()),
            _ => None,
        })
    }

    /// The domain `n` names, if it names one.
    pub fn domain_named(&self, n: &ObjName) -> Result<Option<Arc<Domain>>> {
        Ok(match self.user_type_named(n)? {
            Some((_, UserTypeKind::Domain(d))) => Some(d.clone()),
            _ => None,
        })
    }

    /// The stored definition of the user-defined type whose own or array
    /// OID is `oid`.
    pub fn user_type_of(&self, oid: u32) -> Option<&Arc<UserTypeDef>> {
        self.user_types.values().map(|(d, _)| d).find(|d| d.oid == oid || d.array_oid == oid)
    }

    /// The stored definition of the user-defined type with this OID.
    pub fn user_type(&self, oid: u32) -> Option<&Arc<UserTypeDef>> {
        self.user_types.values().map(|(d, _)| d).find(|d| d.oid == oid)
    }

    /// The type with this OID: a built-in, an enum or an enum's array (a
    /// domain or a domain's array: its values' type).
    pub fn type_by_oid(&self, oid: u32) -> Option<DataType> {
        if let Some(t) = DataType::from_oid(oid) {
            return Some(t);
        }
        if let Some((d, UserTypeKind::Domain(dom))) =
            self.user_types.values().find(|(d, _)| d.oid == oid || d.array_oid == oid)
        {
            return Some(if oid == d.array_oid { dom.ty.array_of() } else { dom.ty.clone() });
        }
        if let Some(r) = self.composite_of(oid) {
            let c = DataType::Record(r.clone());
            return Some(if oid == c.oid() { c } else { c.array_of() });
        }
        let t = self.enum_of(oid)?;
        let e = DataType::Enum(t.clone());
        Some(if oid == t.array_oid { e.array_of() } else { e })
    }

    /// Gives `ty` the definition of the enum type, domain or composite
    /// type it names, if it does.
    pub fn resolve(&self, ty: &mut TypeDef) {
        ty.enum_type = self.enum_of(ty.oid).cloned();
        ty.domain = self.domain_of(ty.oid);
        ty.composite = self.composite_of(ty.oid).cloned();
    }

    /// pg_index.indisvalid of table `t`'s index `oid` (its primary key's
    /// or a secondary one): an index of a partitioned table is valid once
    /// each partition has a valid index attached to it; any other index
    /// always is.
    pub fn index_valid(&self, t: &TableDef, oid: u32) -> bool {
        if !t.is_partitioned() {
            return true;
        }
        self.partitions.get(&t.oid).into_iter().flatten().all(|p| {
            let attached = match t.pkey_oid == oid {
                true => p.pkey_parent.filter(|&o| o == oid).map(|_| p.pkey_oid),
                false => p.indexes.iter().find(|i| i.parent == Some(oid)).map(|i| i.oid),
            };
            attached.is_some_and(|a| self.index_valid(p, a))
        })
    }

    /// Looks a table up by OID.
    pub fn table_by_oid(&self, oid: u32) -> Option<Arc<TableDef>> {
        self.tables.values().find(|t| t.oid == oid).cloned()
    }

    /// Every relation as pg_class lists it: (OID, namespace, name, relkind)
    /// for the tables (`r`), their primary key and secondary indexes (`i`),
    /// views (`v`) and sequences (`S`).
    pub fn relations(&self) -> impl Iterator<Item = (u32, u32, &str, &'static str)> + '_ {
        let tables = self.tables.values().flat_map(|tb| {
            let ns = tb.namespace;
            // A partitioned table ("p") and its indexes ("I") hold no rows.
            let ik = if tb.is_partitioned() { "I" } else { "i" };
            let pk = tb.pkey_name.as_deref().map(|pk| (tb.pkey_oid, ns, pk, ik));
            let indexes = tb.indexes.iter().map(move |i| (i.oid, ns, i.name.as_str(), ik));
            let kind = match () {
                _ if tb.matview.is_some() => "m",
                _ if tb.is_partitioned() => "p",
                _ => "r",
            };
            std::iter::once((tb.oid, ns, tb.name.as_str(), kind)).chain(pk).chain(indexes)
        });
        let views = self.views.values().map(|v| (v.oid, v.namespace, v.name.as_str(), "v"));
        let seqs = self.sequences.values().map(|s| (s.oid, s.namespace, s.name.as_str(), "S"));
        let composites = self.user_types.values().filter_map(|(d, _)| {
            Some((d.composite.as_ref()?.relid, d.namespace, d.name.as_str(), "c"))
        });
        tables.chain(views).chain(seqs).chain(composites)
    }

    /// The OID of the schema named `name` (`pg_temp` is the session's
    /// temporary schema).
    pub fn namespace_oid(&self, name: &str) -> Option<u32> {
        match name {
            "pg_catalog" => Some(PG_CATALOG_NAMESPACE_OID),
            "information_schema" => Some(INFO_SCHEMA_NAMESPACE_OID),
            "public" if !self.public_dropped => Some(PUBLIC_NAMESPACE_OID),
            "pg_temp" | TEMP_NAMESPACE_NAME => Some(TEMP_NAMESPACE_OID),
            _ => self.schemas.get(name).map(|s| s.oid),
        }
    }

    /// The name of the schema with this OID.
    pub fn namespace_name(&self, oid: u32) -> Option<&str> {
        match oid {
            PG_CATALOG_NAMESPACE_OID => Some("pg_catalog"),
            INFO_SCHEMA_NAMESPACE_OID => Some("information_schema"),
            PUBLIC_NAMESPACE_OID if !self.public_dropped => Some("public"),
            TEMP_NAMESPACE_OID => Some(TEMP_NAMESPACE_NAME),
            _ => self.schemas.values().find(|s| s.oid == oid).map(|s| s.name.as_str()),
        }
    }

    /// Resolves search_path `setting` for `user` against this catalog's
    /// schemas (PostgreSQL's recomputeNamespacePath).
    pub fn resolve_path(&self, setting: &str, user: &str) -> SearchPath {
        let names = search_path_names(setting, user);
        let mut explicit = Vec::new();
        for n in &names {
            // `$user` naming no schema is skipped, as are missing schemas;
            // pg_temp counts only once the session has temporary tables.
            let Some(oid) = self.namespace_oid(n) else { continue };
            if oid == TEMP_NAMESPACE_OID && !self.has_temp() || explicit.contains(&oid) {
                continue;
            }
            explicit.push(oid);
        }
        // pg_temp, then pg_catalog, come first unless the setting places them.
        let mut relations = explicit.clone();
        if !relations.contains(&PG_CATALOG_NAMESPACE_OID) {
            relations.insert(0, PG_CATALOG_NAMESPACE_OID);
        }
        if self.has_temp() && !relations.contains(&TEMP_NAMESPACE_OID) {
            relations.insert(0, TEMP_NAMESPACE_OID);
        }
        let types: Vec<u32> =
            relations.iter().copied().filter(|&o| o != TEMP_NAMESPACE_OID).collect();
        explicit.retain(|&o| o != TEMP_NAMESPACE_OID);
        SearchPath { explicit, relations, types }
    }

    /// True if the session has temporary tables (laid over this catalog).
    fn has_temp(&self) -> bool {
        let temp = (TEMP_NAMESPACE_OID, String::new())..(TEMP_NAMESPACE_OID + 1, String::new());
        self.tables.range(temp).next().is_some()
    }

    /// The namespaces `n` is looked for in, in order: its schema's (3F000
    /// if there is none), or the search path's for relations or types.
    pub fn lookup_path(&self, n: &ObjName, types: bool) -> Result<std::borrow::Cow<'_, [u32]>> {
        match &n.schema {
            Some(s) => match self.namespace_oid(s) {
                Some(oid) => Ok(std::borrow::Cow::Owned(vec![oid])),
                None => bail!(InvalidSchemaName, "schema \"{s}\" does not exist"),
            },
            None if types => Ok(std::borrow::Cow::Borrowed(&self.path.types)),
            None => Ok(std::borrow::Cow::Borrowed(&self.path.relations)),
        }
    }

    /// The relation named `name` in namespace `ns`, of any kind.
    pub fn relation_in(&self, ns: u32, name: &str) -> Option<Relation> {
        let key = (ns, name.to_string());
        if let Some(t) = self.tables.get(&key) {
            return Some(Relation::Table(t.clone()));
        }
        if let Some(v) = self.views.get(&key) {
            return Some(Relation::View(v.clone()));
        }
        if let Some(s) = self.sequences.get(&key) {
            return Some(Relation::Sequence(s.clone()));
        }
        self.tables.range((ns, String::new())..).take_while(|((n, _), _)| *n == ns).find_map(
            |(_, t)| {
                if t.pkey_name.as_deref() == Some(name) {
                    return Some(Relation::Index(t.clone(), None));
                }
                let i = t.indexes.iter().position(|i| i.name == name)?;
                Some(Relation::Index(t.clone(), Some(i)))
            },
        )
    }

    /// The relation `n` names: in its schema, or the first on the search
    /// path that has one of that name.
    pub fn relation(&self, n: &ObjName) -> Result<Option<Relation>> {
        Ok(self.lookup_path(n, false)?.iter().find_map(|&ns| self.relation_in(ns, &n.name)))
    }

    /// The table `n` names, if it names one.
    pub fn table(&self, n: &ObjName) -> Result<Option<Arc<TableDef>>> {
        Ok(match self.relation(n)? {
            Some(Relation::Table(t)) => Some(t),
            _ => None,
        })
    }

    /// The table `n` names; 42P01 if there is none.
    pub fn must_table(&self, n: &ObjName) -> Result<Arc<TableDef>> {
        match self.table(n)? {
            Some(t) => Ok(t),
            None => bail!(UndefinedTable, "relation \"{n}\" does not exist"),
        }
    }

    /// The table a query reads or writes: as [`Catalog::must_table`], but
    /// a schema that does not exist is 42P01 for the relation, as
    /// PostgreSQL's parser reports it.
    pub fn query_table(&self, n: &ObjName) -> Result<Arc<TableDef>> {
        if n.schema.as_deref().is_some_and(|s| self.namespace_oid(s).is_none()) {
            bail!(UndefinedTable, "relation \"{n}\" does not exist");
        }
        self.must_table(n)
    }

    /// The table stored under `q` (a name taken from the catalog itself).
    pub fn table_at(&self, q: &QualName) -> Result<Arc<TableDef>> {
        match self.tables.get(q) {
            Some(t) => Ok(t.clone()),
            None => bail!(UndefinedTable, "relation \"{}\" does not exist", q.1),
        }
    }

    /// True if namespace `ns` has a relation named `name`.
    pub fn relation_exists(&self, ns: u32, name: &str) -> bool {
        self.relation_in(ns, name).is_some()
            || matches!(
                self.user_types.get(&(ns, name.to_string())),
                Some((_, UserTypeKind::Composite(_)))
            )
    }

    /// The namespace a new object named `n` goes to: its schema, or the
    /// first schema of the search path (3F000 if there is none).
    pub fn creation_namespace(&self, n: &ObjName) -> Result<u32> {
        let ns = match &n.schema {
            Some(_) => self.lookup_path(n, false)?[0],
            None => match self.path.explicit.first() {
                Some(&ns) => ns,
                None => bail!(InvalidSchemaName, "no schema has been selected to create in"),
            },
        };
        if matches!(ns, PG_CATALOG_NAMESPACE_OID | INFO_SCHEMA_NAMESPACE_OID) {
            let schema = self.namespace_name(ns).unwrap_or_default();
            return Err(err!(
                InsufficientPrivilege,
                "permission denied to create \"{schema}.{}\"",
                n.name
            )
            .with_detail("System catalog modifications are currently disallowed."));
        }
        Ok(ns)
    }

    /// The user-defined type `n` names: in its schema or on the search path.
    pub fn user_type_named(
        &self,
        n: &ObjName,
    ) -> Result<Option<&(Arc<UserTypeDef>, UserTypeKind)>> {
        let path = self.lookup_path(n, true)?;
        Ok(path.iter().find_map(|&ns| self.user_types.get(&(ns, n.name.clone()))))
    }

    /// True if an unqualified `name` finds the relation in `ns` (pg_table_is_visible).
    pub fn relation_visible(&self, ns: u32, name: &str) -> bool {
        self.path.relations.iter().find(|&&n| self.relation_exists(n, name)) == Some(&ns)
    }

    /// True if an unqualified `name` finds the type in `ns` (pg_type_is_visible).
    pub fn type_visible(&self, ns: u32, name: &str) -> bool {
        ns == PG_CATALOG_NAMESPACE_OID
            || self
                .path
                .types
                .iter()
                .find(|&&n| self.user_types.contains_key(&(n, name.to_string())))
                == Some(&ns)
    }
}

/// The tenant-relative key layout. This is the only place that decides where
/// catalog entries and rows live.
pub mod keys {
    use super::*;

    const CATALOG: u8 = b'c';
    const DATA: u8 = b'd';
    const UNIQUE: u8 = b'u';
    const SEQUENCE_STATE: u8 = b's';

    /// The catalog entry of kind `kind` for object `oid`.
    fn entry(tenant: TenantId, kind: u8, oid: u32) -> Key {
        let [a, b, c, d] = oid.to_be_bytes();
        Key::new(tenant, &[CATALOG, kind, a, b, c, d])
    }

    /// The catalog version counter.
    pub fn version(tenant: TenantId) -> Key {
        Key::new(tenant, &[CATALOG, b'v'])
    }

    /// The OID / storage id allocator.
    pub fn next_oid(tenant: TenantId) -> Key {
        Key::new(tenant, &[CATALOG, b'o'])
    }

    /// One table definition.
    pub fn table(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b't', oid)
    }

    /// All table definitions.
    pub fn tables(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b't'])
    }

    /// One sequence definition.
    pub fn sequence(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'q', oid)
    }

    /// One view definition.
    pub fn view(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'w', oid)
    }

    /// All view definitions.
    pub fn views(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'w'])
    }

    /// One installed extension.
    pub fn extension(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'x', oid)
    }

    /// All installed extensions.
    pub fn extensions(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'x'])
    }

    /// One schema definition.
    pub fn schema(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'n', oid)
    }

    /// All schema definitions.
    pub fn schemas(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'n'])
    }

    /// One ALTER DEFAULT PRIVILEGES entry.
    pub fn default_acl(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'a', oid)
    }

    /// All ALTER DEFAULT PRIVILEGES entries.
    pub fn default_acls(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'a'])
    }

    /// One SQL function.
    pub fn function(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'f', oid)
    }

    /// All SQL functions.
    pub fn functions(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'f'])
    }

    /// The database's owner and ACL (absent until GRANT ... ON DATABASE).
    pub fn database(tenant: TenantId) -> Key {
        Key::new(tenant, &[CATALOG, b'd'])
    }

    /// Present once the built-in `public` schema was dropped.
    pub fn public_dropped(tenant: TenantId) -> Key {
        Key::new(tenant, &[CATALOG, b'p'])
    }

    /// One user-defined type's definition (an enum or a domain).
    pub fn user_type(tenant: TenantId, oid: u32) -> Key {
        entry(tenant, b'e', oid)
    }

    /// All user-defined types' definitions.
    pub fn user_types(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'e'])
    }

    /// All sequence definitions.
    pub fn sequences(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'q'])
    }

    /// A sequence's position, written only by autonomous transactions
    /// (sequence.rs), outside the catalog so DDL never touches it.
    pub fn sequence_state(tenant: TenantId, oid: u32) -> Key {
        let mut k = vec![SEQUENCE_STATE];
        k.extend_from_slice(&oid.to_be_bytes());
        Key::new(tenant, &k)
    }

    /// One role definition.
    pub fn role(tenant: TenantId, name: &str) -> Key {
        let mut k = vec![CATALOG, b'r'];
        k.extend_from_slice(name.as_bytes());
        Key::new(tenant, &k)
    }

    /// All role definitions.
    pub fn roles(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'r'])
    }

    /// The prefix of rows in `storage`.
    pub fn storage_prefix(storage: u64) -> Vec<u8> {
        let mut k = Vec::with_capacity(24);
        k.push(DATA);
        k.extend_from_slice(&storage.to_be_bytes());
        k
    }

    /// All rows of `storage`.
    pub fn storage(tenant: TenantId, storage: u64) -> KeyRange {
        KeyRange::prefix(tenant, &storage_prefix(storage))
    }

    /// The lock key guarding uniqueness of `encoded` values in a unique index.
    pub fn unique_lock(tenant: TenantId, storage: u64, encoded: &[u8]) -> Key {
        let mut k = vec![UNIQUE];
        k.extend_from_slice(&storage.to_be_bytes());
        k.extend_from_slice(encoded);
        Key::new(tenant, &k)
    }
}

/// Serializes a table definition for storage.
pub fn encode_table(t: &TableDef) -> Vec<u8> {
    serde_json::to_vec(t).expect("table definitions always serialize")
}

/// Reads a stored table definition.
pub fn decode_table(bytes: &[u8]) -> Result<TableDef> {
    serde_json::from_slice(bytes).map_err(|e| err!(DataCorrupted, "corrupt catalog entry: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typedef_round_trips_modifiers() {
        for ty in [
            DataType::Varchar(Some(10)),
            DataType::Char(84),
            DataType::Numeric(Some((10, 2))),
            DataType::Int4,
            DataType::Text,
            DataType::Varchar(None),
        ] {
            assert_eq!(TypeDef::from_type(&ty).to_type(), ty);
        }
    }
}
