//! pg_catalog's views that are queries over other catalogs, defined in SQL
//! as PostgreSQL defines them (system_views.sql), and planned where read
//! like a user's view.
//!
//! The statistics views (pg_stat_*_tables, pg_statio_*_tables, their
//! index counterparts, pg_stat_database) list the real relations and
//! databases, but Strata keeps no access counters: the counters are 0 (the
//! index ones NULL where PostgreSQL's would be NULL too, the TOAST ones
//! NULL as for a table without TOAST), the times NULL; numbackends counts
//! the database's sessions.

use crate::catalog::{ViewDef, PG_CATALOG_NAMESPACE_OID};

/// The `_user_` statistics views' filter: the user's schemas only.
macro_rules! USER_SCHEMAS {
    () => {
        " AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_toast'"
    };
}

/// pg_stat(io)_*_tables: the counters `counters` after the table's oid,
/// schema and name, over the tables that pass `filter`.
macro_rules! tables {
    ($counters:expr, $filter:expr) => {
        concat!(
            "SELECT c.oid, n.nspname, c.relname, ",
            $counters,
            " FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 't', 'm', 'p')",
            $filter
        )
    };
}

/// pg_stat_*_tables' counters: the index ones NULL without indexes.
macro_rules! TABLE_COUNTERS {
    () => {
        "0::int8, 0::int8, \
         CASE WHEN c.relhasindex THEN 0::int8 END, CASE WHEN c.relhasindex THEN 0::int8 END, \
         0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, \
         NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, \
         0::int8, 0::int8, 0::int8, 0::int8"
    };
}

/// pg_statio_*_tables' counters: the index ones NULL without indexes, the
/// TOAST ones NULL.
macro_rules! TABLE_BLOCKS {
    () => {
        "0::int8, 0::int8, \
         CASE WHEN c.relhasindex THEN 0::int8 END, CASE WHEN c.relhasindex THEN 0::int8 END, \
         NULL::int8, NULL::int8, NULL::int8, NULL::int8"
    };
}

/// pg_stat(io)_*_indexes: the counters `counters`, over the indexes of the
/// tables that pass `filter`.
macro_rules! indexes {
    ($counters:expr, $filter:expr) => {
        concat!(
            "SELECT c.oid, i.oid, n.nspname, c.relname, i.relname, ",
            $counters,
            " FROM pg_class c JOIN pg_index x ON c.oid = x.indrelid \
             JOIN pg_class i ON i.oid = x.indexrelid \
             LEFT JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 't', 'm')",
            $filter
        )
    };
}

/// pg_stat_*_tables' columns.
const STAT_TABLES: &[&str] = &[
    "relid",
    "schemaname",
    "relname",
    "seq_scan",
    "seq_tup_read",
    "idx_scan",
    "idx_tup_fetch",
    "n_tup_ins",
    "n_tup_upd",
    "n_tup_del",
    "n_tup_hot_upd",
    "n_live_tup",
    "n_dead_tup",
    "n_mod_since_analyze",
    "n_ins_since_vacuum",
    "last_vacuum",
    "last_autovacuum",
    "last_analyze",
    "last_autoanalyze",
    "vacuum_count",
    "autovacuum_count",
    "analyze_count",
    "autoanalyze_count",
];

/// pg_statio_*_tables' columns.
const STATIO_TABLES: &[&str] = &[
    "relid",
    "schemaname",
    "relname",
    "heap_blks_read",
    "heap_blks_hit",
    "idx_blks_read",
    "idx_blks_hit",
    "toast_blks_read",
    "toast_blks_hit",
    "tidx_blks_read",
    "tidx_blks_hit",
];

/// pg_stat_*_indexes' columns.
const STAT_INDEXES: &[&str] = &[
    "relid",
    "indexrelid",
    "schemaname",
    "relname",
    "indexrelname",
    "idx_scan",
    "idx_tup_read",
    "idx_tup_fetch",
];

/// pg_statio_*_indexes' columns.
const STATIO_INDEXES: &[&str] = &[
    "relid",
    "indexrelid",
    "schemaname",
    "relname",
    "indexrelname",
    "idx_blks_read",
    "idx_blks_hit",
];

/// (name, OID, column names, query).
const VIEWS: &[(&str, u32, &[&str], &str)] = &[
    (
        "pg_indexes",
        12043,
        &["schemaname", "tablename", "indexname", "tablespace", "indexdef"],
        "SELECT n.nspname, c.relname, i.relname, t.spcname, pg_get_indexdef(i.oid) \
         FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid \
         JOIN pg_class i ON i.oid = x.indexrelid \
         LEFT JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_tablespace t ON t.oid = i.reltablespace \
         WHERE c.relkind IN ('r', 'm', 'p') AND i.relkind IN ('i', 'I')",
    ),
    (
        "pg_views",
        12028,
        &["schemaname", "viewname", "viewowner", "definition"],
        "SELECT n.nspname, c.relname, pg_get_userbyid(c.relowner), pg_get_viewdef(c.oid) \
         FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relkind = 'v'",
    ),
    (
        "pg_matviews",
        12038,
        &[
            "schemaname",
            "matviewname",
            "matviewowner",
            "tablespace",
            "hasindexes",
            "ispopulated",
            "definition",
        ],
        "SELECT n.nspname, c.relname, pg_get_userbyid(c.relowner), t.spcname, c.relhasindex, \
         c.relispopulated, pg_get_viewdef(c.oid) \
         FROM pg_class c LEFT JOIN pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace \
         WHERE c.relkind = 'm'",
    ),
    ("pg_stat_all_tables", 12142, STAT_TABLES, tables!(TABLE_COUNTERS!(), "")),
    ("pg_stat_user_tables", 12161, STAT_TABLES, tables!(TABLE_COUNTERS!(), USER_SCHEMAS!())),
    ("pg_statio_all_tables", 12170, STATIO_TABLES, tables!(TABLE_BLOCKS!(), "")),
    ("pg_statio_user_tables", 12179, STATIO_TABLES, tables!(TABLE_BLOCKS!(), USER_SCHEMAS!())),
    ("pg_stat_all_indexes", 12183, STAT_INDEXES, indexes!("0::int8, 0::int8, 0::int8", "")),
    (
        "pg_stat_user_indexes",
        12192,
        STAT_INDEXES,
        indexes!("0::int8, 0::int8, 0::int8", USER_SCHEMAS!()),
    ),
    ("pg_statio_all_indexes", 12196, STATIO_INDEXES, indexes!("0::int8, 0::int8", "")),
    (
        "pg_statio_user_indexes",
        12205,
        STATIO_INDEXES,
        indexes!("0::int8, 0::int8", USER_SCHEMAS!()),
    ),
    (
        "pg_stat_database",
        12266,
        &[
            "datid",
            "datname",
            "numbackends",
            "xact_commit",
            "xact_rollback",
            "blks_read",
            "blks_hit",
            "tup_returned",
            "tup_fetched",
            "tup_inserted",
            "tup_updated",
            "tup_deleted",
            "conflicts",
            "temp_files",
            "temp_bytes",
            "deadlocks",
            "checksum_failures",
            "checksum_last_failure",
            "blk_read_time",
            "blk_write_time",
            "session_time",
            "active_time",
            "idle_in_transaction_time",
            "sessions",
            "sessions_abandoned",
            "sessions_fatal",
            "sessions_killed",
            "stats_reset",
        ],
        "SELECT d.oid, d.datname, \
         (SELECT count(*)::int4 FROM pg_stat_activity a WHERE a.datid = d.oid), \
         0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, 0::int8, \
         0::int8, 0::int8, 0::int8, 0::int8, NULL::int8, NULL::timestamptz, \
         0::float8, 0::float8, 0::float8, 0::float8, 0::float8, \
         0::int8, 0::int8, 0::int8, 0::int8, NULL::timestamptz \
         FROM pg_database d",
    ),
];

/// The pg_catalog view `name`, if it is one of these.
pub fn lookup(name: &str) -> Option<ViewDef> {
    let (name, oid, columns, query) = VIEWS.iter().find(|v| v.0 == name)?;
    Some(ViewDef {
        oid: *oid,
        namespace: PG_CATALOG_NAMESPACE_OID,
        name: name.to_string(),
        query: query.to_string(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        comment: None,
        check_option: None,
        triggers: Vec::new(),
        defaults: Vec::new(),
        access: Default::default(),
    })
}
