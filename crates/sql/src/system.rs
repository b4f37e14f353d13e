//! System catalog views (pg_catalog, information_schema) computed from the
//! Strata catalog at query time.
//!
//! These are not stored tables: each scan builds its rows from the current
//! [`Catalog`] snapshot, so they are always consistent with it after DDL.
//! Only the tables and columns that clients read today are present; OIDs are
//! reported as bigint until the `oid` type exists.

use sqltypes::{DataType, Value};

use crate::catalog::{Catalog, PUBLIC_NAMESPACE_OID};

/// A system catalog view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemTable {
    /// pg_catalog.pg_namespace
    PgNamespace,
    /// pg_catalog.pg_class
    PgClass,
    /// pg_catalog.pg_attribute
    PgAttribute,
    /// pg_catalog.pg_type
    PgType,
    /// pg_catalog.pg_database
    PgDatabase,
    /// pg_catalog.pg_roles
    PgRoles,
    /// pg_catalog.pg_partitioned_table (always empty: no partitioning)
    PgPartitionedTable,
    /// pg_catalog.pg_inherits (always empty: no inheritance)
    PgInherits,
    /// pg_catalog.pg_index
    PgIndex,
    /// pg_catalog.pg_tables
    PgTables,
    /// information_schema.tables
    InfoTables,
    /// information_schema.columns
    InfoColumns,
}

const PG_CATALOG_OID: i64 = 11;
const INFO_SCHEMA_OID: i64 = 13000;

impl SystemTable {
    /// Finds a system view by (optional schema and) name.
    pub fn lookup(schema: Option<&str>, name: &str) -> Option<SystemTable> {
        use SystemTable::*;
        let info = schema == Some("information_schema");
        Some(match (info, name) {
            (false, "pg_namespace") => PgNamespace,
            (false, "pg_class") => PgClass,
            (false, "pg_attribute") => PgAttribute,
            (false, "pg_type") => PgType,
            (false, "pg_database") => PgDatabase,
            (false, "pg_roles" | "pg_user") => PgRoles,
            (false, "pg_partitioned_table") => PgPartitionedTable,
            (false, "pg_inherits") => PgInherits,
            (false, "pg_index") => PgIndex,
            (false, "pg_tables") => PgTables,
            (true, "tables") => InfoTables,
            (true, "columns") => InfoColumns,
            _ => return None,
        })
    }

    /// The view's name.
    pub fn name(&self) -> &'static str {
        use SystemTable::*;
        match self {
            PgNamespace => "pg_namespace",
            PgClass => "pg_class",
            PgAttribute => "pg_attribute",
            PgType => "pg_type",
            PgDatabase => "pg_database",
            PgRoles => "pg_roles",
            PgPartitionedTable => "pg_partitioned_table",
            PgInherits => "pg_inherits",
            PgIndex => "pg_index",
            PgTables => "pg_tables",
            InfoTables => "tables",
            InfoColumns => "columns",
        }
    }

    /// Column names and types.
    pub fn columns(&self) -> Vec<(&'static str, DataType)> {
        use DataType::{Bool, Int2, Int4, Int8, Text};
        use SystemTable::*;
        match self {
            PgNamespace => vec![("oid", Int8), ("nspname", Text), ("nspowner", Int8)],
            PgClass => vec![
                ("oid", Int8),
                ("relname", Text),
                ("relnamespace", Int8),
                ("relkind", Text),
                ("relowner", Int8),
                ("reltuples", DataType::Float8),
                ("relhasindex", Bool),
                ("relpersistence", Text),
                ("relispartition", Bool),
            ],
            PgAttribute => vec![
                ("attrelid", Int8),
                ("attname", Text),
                ("atttypid", Int8),
                ("attnum", Int2),
                ("atttypmod", Int4),
                ("attnotnull", Bool),
                ("attisdropped", Bool),
                ("atthasdef", Bool),
            ],
            PgType => vec![
                ("oid", Int8),
                ("typname", Text),
                ("typnamespace", Int8),
                ("typlen", Int2),
                ("typtype", Text),
            ],
            PgDatabase => {
                vec![("oid", Int8), ("datname", Text), ("encoding", Int4), ("datallowconn", Bool)]
            }
            PgRoles => {
                vec![("oid", Int8), ("rolname", Text), ("rolsuper", Bool), ("rolcanlogin", Bool)]
            }
            PgPartitionedTable => {
                vec![("partrelid", Int8), ("partstrat", Text), ("partnatts", Int2)]
            }
            PgInherits => vec![("inhrelid", Int8), ("inhparent", Int8), ("inhseqno", Int4)],
            PgIndex => vec![
                ("indexrelid", Int8),
                ("indrelid", Int8),
                ("indisunique", Bool),
                ("indisprimary", Bool),
                ("indnatts", Int2),
            ],
            PgTables => vec![
                ("schemaname", Text),
                ("tablename", Text),
                ("tableowner", Text),
                ("hasindexes", Bool),
            ],
            InfoTables => vec![
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("table_type", Text),
            ],
            InfoColumns => vec![
                ("table_catalog", Text),
                ("table_schema", Text),
                ("table_name", Text),
                ("column_name", Text),
                ("ordinal_position", Int4),
                ("is_nullable", Text),
                ("data_type", Text),
                ("column_default", Text),
            ],
        }
    }

    /// Builds the rows from `catalog`.
    pub fn rows(&self, catalog: &Catalog) -> Vec<Vec<Value>> {
        use SystemTable::*;
        let t = |s: &str| Value::Text(s.to_string());
        let i8 = |v: i64| Value::Int8(v);
        let mut rows = Vec::new();
        match self {
            PgNamespace => {
                rows.push(vec![i8(PG_CATALOG_OID), t("pg_catalog"), i8(10)]);
                rows.push(vec![i8(PUBLIC_NAMESPACE_OID as i64), t("public"), i8(10)]);
                rows.push(vec![i8(INFO_SCHEMA_OID), t("information_schema"), i8(10)]);
            }
            PgClass => {
                for tb in catalog.tables.values() {
                    let has_index = !tb.primary_key.is_empty() || !tb.indexes.is_empty();
                    rows.push(class_row(tb.oid, &tb.name, "r", has_index));
                    if let Some(pk) = &tb.pkey_name {
                        rows.push(class_row(tb.pkey_oid, pk, "i", false));
                    }
                    for idx in &tb.indexes {
                        rows.push(class_row(idx.oid, &idx.name, "i", false));
                    }
                }
            }
            PgAttribute => {
                for tb in catalog.tables.values() {
                    for (i, c) in tb.columns.iter().enumerate() {
                        rows.push(vec![
                            i8(tb.oid as i64),
                            t(&c.name),
                            i8(c.ty.oid as i64),
                            Value::Int2(i as i16 + 1),
                            Value::Int4(c.ty.typmod),
                            Value::Bool(!c.nullable),
                            Value::Bool(false),
                            Value::Bool(c.default.is_some()),
                        ]);
                    }
                }
            }
            PgType => {
                for ty in [
                    DataType::Bool,
                    DataType::Bytea,
                    DataType::Int8,
                    DataType::Int2,
                    DataType::Int4,
                    DataType::Text,
                    DataType::Float8,
                    DataType::Unknown,
                    DataType::Char(1),
                    DataType::Varchar(None),
                    DataType::Date,
                    DataType::Timestamp,
                    DataType::TimestampTz,
                    DataType::Numeric(None),
                ] {
                    rows.push(vec![
                        i8(ty.oid() as i64),
                        t(ty.typname()),
                        i8(PG_CATALOG_OID),
                        Value::Int2(ty.typlen()),
                        t("b"),
                    ]);
                }
            }
            PgDatabase => rows.push(vec![i8(5), t("postgres"), Value::Int4(6), Value::Bool(true)]),
            PgRoles => {
                for (i, r) in catalog.all_roles().into_iter().enumerate() {
                    let oid = if r.name == "postgres" { 10 } else { 16384 + i as i64 };
                    rows.push(vec![
                        i8(oid),
                        t(&r.name),
                        Value::Bool(r.superuser),
                        Value::Bool(r.login),
                    ]);
                }
            }
            PgPartitionedTable | PgInherits => {}
            PgIndex => {
                for tb in catalog.tables.values() {
                    if tb.pkey_name.is_some() {
                        rows.push(vec![
                            i8(tb.pkey_oid as i64),
                            i8(tb.oid as i64),
                            Value::Bool(true),
                            Value::Bool(true),
                            Value::Int2(tb.primary_key.len() as i16),
                        ]);
                    }
                    for idx in &tb.indexes {
                        rows.push(vec![
                            i8(idx.oid as i64),
                            i8(tb.oid as i64),
                            Value::Bool(idx.unique),
                            Value::Bool(false),
                            Value::Int2(idx.columns.len() as i16),
                        ]);
                    }
                }
            }
            PgTables => {
                for tb in catalog.tables.values() {
                    let has_index = !tb.primary_key.is_empty() || !tb.indexes.is_empty();
                    rows.push(vec![
                        t("public"),
                        t(&tb.name),
                        t("postgres"),
                        Value::Bool(has_index),
                    ]);
                }
            }
            InfoTables => {
                for tb in catalog.tables.values() {
                    rows.push(vec![t("postgres"), t("public"), t(&tb.name), t("BASE TABLE")]);
                }
            }
            InfoColumns => {
                for tb in catalog.tables.values() {
                    for (i, c) in tb.columns.iter().enumerate() {
                        rows.push(vec![
                            t("postgres"),
                            t("public"),
                            t(&tb.name),
                            t(&c.name),
                            Value::Int4(i as i32 + 1),
                            t(if c.nullable { "YES" } else { "NO" }),
                            t(&c.ty.to_type().to_string()),
                            c.default.as_deref().map(t).unwrap_or(Value::Null),
                        ]);
                    }
                }
            }
        }
        rows
    }
}

fn class_row(oid: u32, name: &str, kind: &str, has_index: bool) -> Vec<Value> {
    vec![
        Value::Int8(oid as i64),
        Value::Text(name.to_string()),
        Value::Int8(PUBLIC_NAMESPACE_OID as i64),
        Value::Text(kind.to_string()),
        Value::Int8(10),
        Value::Float8(-1.0),
        Value::Bool(has_index),
        Value::Text("p".to_string()),
        Value::Bool(false),
    ]
}
