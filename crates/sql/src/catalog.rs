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

use std::collections::BTreeMap;
use std::sync::Arc;

use kvapi::{Key, KeyRange, TenantId};
use serde::{Deserialize, Serialize};
use sqltypes::enums::{EnumLabel, EnumType};
use sqltypes::DataType;

use crate::error::Result;
use crate::{bail, err};

/// First OID handed to user objects (PostgreSQL's FirstNormalObjectId).
pub const FIRST_USER_OID: u32 = 16384;

/// OID of the `public` schema (as in PostgreSQL).
pub const PUBLIC_NAMESPACE_OID: u32 = 2200;

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
    /// COMMENT ON COLUMN text.
    #[serde(default)]
    pub comment: Option<String>,
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
}

impl TypeDef {
    /// Records `ty`.
    pub fn from_type(ty: &DataType) -> TypeDef {
        let enum_type = match ty.elem().unwrap_or(ty) {
            DataType::Enum(t) => Some(t.clone()),
            _ => None,
        };
        TypeDef { oid: ty.oid(), typmod: ty.typmod(), enum_type }
    }

    /// A built-in type by OID and modifier.
    pub fn builtin(oid: u32, typmod: i32) -> TypeDef {
        TypeDef { oid, typmod, enum_type: None }
    }

    /// Rebuilds the data type.
    pub fn to_type(&self) -> DataType {
        if let Some(t) = &self.enum_type {
            let e = DataType::Enum(t.clone());
            return if self.oid == t.array_oid { e.array_of() } else { e };
        }
        with_typmod(DataType::from_oid(self.oid).unwrap_or(DataType::Text), self.typmod)
    }
}

/// An enum type as stored in the catalog (one KV row, JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnumDef {
    /// pg_type OID.
    pub oid: u32,
    /// Its array type's OID.
    pub array_oid: u32,
    /// Type name.
    pub name: String,
    /// (pg_enum OID, sort order, label), in sort order.
    pub labels: Vec<(u32, f32, String)>,
    /// COMMENT ON TYPE text.
    #[serde(default)]
    pub comment: Option<String>,
}

impl EnumDef {
    /// The type this definition makes.
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

/// A secondary index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    /// Index OID.
    pub oid: u32,
    /// Index name.
    pub name: String,
    /// Indexed column positions.
    pub columns: Vec<usize>,
    /// True for UNIQUE indexes.
    pub unique: bool,
    /// True if the index implements a UNIQUE constraint (declared in
    /// CREATE TABLE) rather than coming from CREATE UNIQUE INDEX.
    #[serde(default)]
    pub constraint: bool,
    /// Where the index entries are stored.
    pub storage: u64,
}

/// A table definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    /// Table OID (pg_class.oid).
    pub oid: u32,
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
    /// FOREIGN KEY constraints of this (referencing) table, sorted by name.
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The foreign keys of other tables (or this one) that reference this
    /// table: (referencing table name, index into its `foreign_keys`).
    /// Filled when the catalog is loaded, never stored.
    #[serde(skip)]
    pub referenced_by: Vec<(String, usize)>,
    /// A temporary table: its definition lives only in the session that
    /// created it (never in the stored catalog), its rows under a storage
    /// id of its own, removed when the session ends.
    #[serde(default)]
    pub temporary: bool,
    /// COMMENT ON TABLE text.
    #[serde(default)]
    pub comment: Option<String>,
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

/// Binds `t`'s CHECK expressions over its row (see [`TableDef::bound_checks`]).
pub fn bind_checks(cat: &Catalog, t: &mut TableDef) -> Result<()> {
    let scope = crate::select::table_scope(t, &t.name, &None);
    let mut bound = Vec::with_capacity(t.checks.len());
    for c in &t.checks {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let e = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(&c.expr)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| err!(DataCorrupted, "stored CHECK expression does not parse: {e}"))?;
        bound.push(check_expr(cat, &e, &scope)?);
    }
    t.bound_checks = bound;
    Ok(())
}

/// Binds one CHECK condition over a table's row scope.
pub fn check_expr(
    cat: &Catalog,
    e: &sqlparser::ast::Expr,
    scope: &crate::bind::Scope,
) -> Result<crate::expr::Expr> {
    if crate::bind::contains_aggregate(e) {
        bail!(GroupingError, "aggregate functions are not allowed in check constraints");
    }
    let mut b = crate::bind::Binder::new(cat, vec![]);
    let (x, t) = b.expr(e, scope)?;
    if !b.subqueries.is_empty() || !b.correlated.is_empty() {
        bail!(FeatureNotSupported, "cannot use subquery in check constraint");
    }
    if !matches!(t, DataType::Bool | DataType::Unknown) {
        bail!(DatatypeMismatch, "argument of CHECK must be type boolean, not type {t}");
    }
    b.coerce(x, &t, &DataType::Bool)
}

impl TableDef {
    /// Position of column `name`, if any.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The declared types of all columns.
    pub fn types(&self) -> Vec<DataType> {
        self.columns.iter().map(|c| c.ty.to_type()).collect()
    }

    /// An empty definition named `name` (OIDs and storage not yet assigned).
    pub fn new(name: String) -> TableDef {
        TableDef {
            oid: 0,
            name,
            columns: vec![],
            primary_key: vec![],
            pkey_name: None,
            pkey_oid: 0,
            indexes: vec![],
            storage: 0,
            checks: vec![],
            bound_checks: vec![],
            foreign_keys: vec![],
            referenced_by: vec![],
            temporary: false,
            comment: None,
        }
    }

    /// True if writes to this table take part in foreign keys, either side.
    pub fn has_foreign_keys(&self) -> bool {
        !self.foreign_keys.is_empty() || !self.referenced_by.is_empty()
    }

    /// Types of the primary-key columns.
    pub fn pk_types(&self) -> Vec<DataType> {
        self.primary_key.iter().map(|&i| self.columns[i].ty.to_type()).collect()
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
}

impl RoleDef {
    /// The built-in superuser.
    pub fn bootstrap() -> RoleDef {
        RoleDef { name: "postgres".into(), superuser: true, login: true, password: None }
    }
}

/// All table definitions of one tenant, as of one catalog version.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The version counter value this catalog was read at.
    pub version: u64,
    /// Tables by name.
    pub tables: BTreeMap<String, Arc<TableDef>>,
    /// Roles stored in the catalog (see [`Catalog::role`] for the bootstrap role).
    pub roles: BTreeMap<String, RoleDef>,
    /// Sequences by name.
    pub sequences: BTreeMap<String, Arc<crate::sequence::SequenceDef>>,
    /// Views by name.
    pub views: BTreeMap<String, Arc<ViewDef>>,
    /// Enum types by name: the stored definition and the type it makes.
    pub enums: BTreeMap<String, (Arc<EnumDef>, Arc<EnumType>)>,
}

/// A view: a stored query planned again wherever the view is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    /// pg_class OID.
    pub oid: u32,
    /// View name.
    pub name: String,
    /// The query as SQL text.
    pub query: String,
    /// Output column names (the query's, or the view's column list).
    pub columns: Vec<String>,
}

impl Catalog {
    /// Looks a role up, including the implicit bootstrap superuser.
    pub fn role(&self, name: &str) -> Option<RoleDef> {
        match self.roles.get(name) {
            Some(r) => Some(r.clone()),
            None if name == "postgres" => Some(RoleDef::bootstrap()),
            None => None,
        }
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

    /// The enum type named `name`.
    pub fn enum_type(&self, name: &str) -> Option<&Arc<EnumType>> {
        self.enums.get(name).map(|(_, t)| t)
    }

    /// The enum type whose own or array OID is `oid`.
    fn enum_of(&self, oid: u32) -> Option<&Arc<EnumType>> {
        self.enums.values().map(|(_, t)| t).find(|t| t.oid == oid || t.array_oid == oid)
    }

    /// The stored definition of the enum type with this OID.
    pub fn enum_def(&self, oid: u32) -> Option<&Arc<EnumDef>> {
        self.enums.values().map(|(d, _)| d).find(|d| d.oid == oid)
    }

    /// The type with this OID: a built-in, an enum or an enum's array.
    pub fn type_by_oid(&self, oid: u32) -> Option<DataType> {
        if let Some(t) = DataType::from_oid(oid) {
            return Some(t);
        }
        let t = self.enum_of(oid)?;
        let e = DataType::Enum(t.clone());
        Some(if oid == t.array_oid { e.array_of() } else { e })
    }

    /// Gives `ty` the definition of the enum type it names, if it does.
    pub fn resolve(&self, ty: &mut TypeDef) {
        ty.enum_type = self.enum_of(ty.oid).cloned();
    }

    /// Looks a table up by name.
    pub fn get_table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.tables.get(name).cloned()
    }

    /// Looks a table up by name; 42P01 if it does not exist.
    pub fn must_get_table(&self, name: &str) -> Result<Arc<TableDef>> {
        match self.tables.get(name) {
            Some(t) => Ok(t.clone()),
            None => bail!(UndefinedTable, "relation \"{name}\" does not exist"),
        }
    }

    /// Every relation as pg_class lists it: (OID, name, relkind) for the
    /// tables (`r`), their primary key and secondary indexes (`i`), views
    /// (`v`) and sequences (`S`).
    pub fn relations(&self) -> Vec<(u32, &str, &'static str)> {
        let mut out = Vec::new();
        for tb in self.tables.values() {
            out.push((tb.oid, tb.name.as_str(), "r"));
            if let Some(pk) = &tb.pkey_name {
                out.push((tb.pkey_oid, pk.as_str(), "i"));
            }
            out.extend(tb.indexes.iter().map(|i| (i.oid, i.name.as_str(), "i")));
        }
        out.extend(self.views.values().map(|v| (v.oid, v.name.as_str(), "v")));
        out.extend(self.sequences.values().map(|s| (s.oid, s.name.as_str(), "S")));
        out
    }

    /// Looks a table up by OID.
    pub fn table_by_oid(&self, oid: u32) -> Option<Arc<TableDef>> {
        self.tables.values().find(|t| t.oid == oid).cloned()
    }

    /// Finds the table owning index `name`.
    pub fn table_of_index(&self, name: &str) -> Option<(Arc<TableDef>, usize)> {
        self.tables
            .values()
            .find_map(|t| t.indexes.iter().position(|i| i.name == name).map(|pos| (t.clone(), pos)))
    }

    /// True if a relation (table or index) named `name` exists.
    pub fn relation_exists(&self, name: &str) -> bool {
        self.tables.contains_key(name)
            || self.sequences.contains_key(name)
            || self.views.contains_key(name)
            || self.table_of_index(name).is_some()
            || self.tables.values().any(|t| t.pkey_name.as_deref() == Some(name))
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
        let mut k = vec![CATALOG, b't'];
        k.extend_from_slice(&oid.to_be_bytes());
        Key::new(tenant, &k)
    }

    /// All table definitions.
    pub fn tables(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b't'])
    }

    /// One sequence definition.
    pub fn sequence(tenant: TenantId, oid: u32) -> Key {
        let mut k = vec![CATALOG, b'q'];
        k.extend_from_slice(&oid.to_be_bytes());
        Key::new(tenant, &k)
    }

    /// One view definition.
    pub fn view(tenant: TenantId, oid: u32) -> Key {
        let mut k = vec![CATALOG, b'w'];
        k.extend_from_slice(&oid.to_be_bytes());
        Key::new(tenant, &k)
    }

    /// All view definitions.
    pub fn views(tenant: TenantId) -> KeyRange {
        KeyRange::prefix(tenant, &[CATALOG, b'w'])
    }

    /// One enum type definition.
    pub fn enum_type(tenant: TenantId, oid: u32) -> Key {
        let mut k = vec![CATALOG, b'e'];
        k.extend_from_slice(&oid.to_be_bytes());
        Key::new(tenant, &k)
    }

    /// All enum type definitions.
    pub fn enum_types(tenant: TenantId) -> KeyRange {
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
