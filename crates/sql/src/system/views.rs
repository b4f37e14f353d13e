//! pg_catalog's views that are queries over other catalogs, defined in SQL
//! as PostgreSQL defines them (system_views.sql), and planned where read
//! like a user's view.

use crate::catalog::{ViewDef, PG_CATALOG_NAMESPACE_OID};

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
