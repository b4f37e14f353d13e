//! pg_depend: the dependencies pg_dump orders its output by and ORMs read
//! to find a serial column's sequence. Rows are derived from the catalog:
//! an owned sequence on its column (`a`, or `i` for identity), a column
//! default on each sequence its nextval() names (`n`), and a view on each
//! relation its query reads (`n`; PostgreSQL records that through the
//! view's rewrite rule, which Strata does not have), and what belongs to
//! an extension (`e`).

use std::ops::ControlFlow;

use sqltypes::{DataType, Value};

use crate::catalog::Catalog;

/// pg_attrdef's OID.
const PG_ATTRDEF: u32 = 2604;

/// pg_depend's columns.
pub fn columns() -> Vec<(&'static str, DataType)> {
    use DataType::{Int4, Oid, QChar};
    vec![
        ("classid", Oid),
        ("objid", Oid),
        ("objsubid", Int4),
        ("refclassid", Oid),
        ("refobjid", Oid),
        ("refobjsubid", Int4),
        ("deptype", QChar),
    ]
}

/// The OID pg_attrdef gives column `index` (0-based) of table `table`:
/// defaults have no OIDs of their own, so it is derived from both.
pub fn attrdef_oid(table: u32, index: usize) -> u32 {
    (table << 16) | (index as u32 + 1)
}

/// One pg_depend row: the object (class, OID) depends on the referenced
/// one (class, OID, column number or 0).
fn dep(object: (u32, u32), referenced: (u32, u32, i32), deptype: &str) -> Vec<Value> {
    vec![
        Value::Oid(object.0),
        Value::Oid(object.1),
        Value::Int4(0),
        Value::Oid(referenced.0),
        Value::Oid(referenced.1),
        Value::Int4(referenced.2),
        Value::Text(deptype.into()),
    ]
}

/// pg_depend's rows.
pub fn rows(cat: &Catalog) -> Vec<Vec<Value>> {
    let class = super::PG_CLASS_OID as u32;
    // Dependencies on relations (or their columns).
    let row = |classid: u32, objid: u32, refobjid: u32, refsub: i32, deptype: &str| {
        dep((classid, objid), (class, refobjid, refsub), deptype)
    };
    let mut rows = Vec::new();
    for seq in cat.sequences.values() {
        let Some((table, column)) = &seq.owned_by else { continue };
        let Some(t) = cat.table_by_oid(*table) else { continue };
        let Some(i) = t.columns.iter().position(|c| c.name == *column) else { continue };
        let deptype = if t.columns[i].identity.is_some() { "i" } else { "a" };
        rows.push(row(class, seq.oid, t.oid, i as i32 + 1, deptype));
    }
    for d in cat.column_defaults() {
        for (_, name) in nextval_names(d.text) {
            if let Some(seq) = crate::func::catalog_info::class_oid(cat, &name) {
                rows.push(row(PG_ATTRDEF, attrdef_oid(d.relation, d.position), seq, 0, "n"));
            }
        }
    }
    let matviews = cat.tables.values().filter_map(|t| Some((t.oid, &t.matview.as_ref()?.query)));
    for (oid, query) in cat.views.values().map(|v| (v.oid, &v.query)).chain(matviews) {
        let mut refs = view_relations(cat, query);
        refs.sort_unstable();
        refs.dedup();
        rows.extend(refs.into_iter().map(|r| row(class, oid, r, 0, "n")));
    }
    rows.extend(extension_rows(cat));
    rows.extend(type_rows(cat));
    rows
}

/// A domain over another domain depends on it (`n`), which tells pg_dump
/// to create that one first; a domain's CHECK constraints on the domain
/// (`a`); a composite type's relation on the type (`i`) and on its
/// attributes' types (`n`).
fn type_rows(cat: &Catalog) -> Vec<Vec<Value>> {
    const PG_TYPE: u32 = 1247;
    const PG_CONSTRAINT: u32 = 2606;
    let mut rows = Vec::new();
    for d in cat.user_types.values().map(|(d, _)| d) {
        // A composite type's relation is internal to it (which pg_dump
        // reverses), and depends on its attributes' user-defined types.
        if let Some(c) = &d.composite {
            let class = super::PG_CLASS_OID as u32;
            rows.push(dep((class, c.relid), (PG_TYPE, d.oid, 0), "i"));
            for a in &c.attributes {
                let ty = cat.type_by_oid(a.ty.oid).unwrap_or(DataType::Unknown);
                let elem = ty.elem().unwrap_or(&ty);
                if elem.is_user_defined() {
                    rows.push(dep((class, c.relid), (PG_TYPE, elem.oid(), 0), "n"));
                }
            }
        }
        let Some(spec) = &d.domain else { continue };
        if cat.domain_of(spec.base.oid).is_some() {
            rows.push(dep((PG_TYPE, d.oid), (PG_TYPE, spec.base.oid, 0), "n"));
        }
        for c in &spec.checks {
            rows.push(dep((PG_CONSTRAINT, c.oid), (PG_TYPE, d.oid, 0), "a"));
        }
    }
    rows
}

/// Extension membership (`e`), which tells pg_dump to dump an extension's
/// functions as CREATE EXTENSION: plpgsql's handlers and language, and
/// each installed extension's functions; and each extension on its schema
/// (`n`).
fn extension_rows(cat: &Catalog) -> Vec<Vec<Value>> {
    const PG_PROC: u32 = 1255;
    const PG_LANGUAGE: u32 = 2612;
    const PG_NAMESPACE: u32 = 2615;
    const PG_EXTENSION: u32 = 3079;
    let row = |classid: u32, objid: u32, refclassid: u32, refobjid: u32, deptype: &str| {
        dep((classid, objid), (refclassid, refobjid, 0), deptype)
    };
    let plpgsql = crate::extensions::PLPGSQL_OID;
    let mut rows = Vec::new();
    for &(oid, name, _, _, handlers) in crate::builtins::LANGUAGES {
        if name == "plpgsql" {
            rows.extend(handlers.map(|h| row(PG_PROC, h, PG_EXTENSION, plpgsql, "e")));
            rows.push(row(PG_LANGUAGE, oid, PG_EXTENSION, plpgsql, "e"));
        }
    }
    for x in cat.extensions.values() {
        rows.push(row(PG_EXTENSION, x.oid, PG_NAMESPACE, x.namespace, "n"));
    }
    for m in crate::extensions::members(cat) {
        rows.push(row(PG_PROC, m.oid, PG_EXTENSION, m.ext.oid, "e"));
    }
    rows
}

/// The sequence names in the `nextval('name'...)` calls of a default's
/// text, each with the byte offset where it starts (quotes undoubled).
pub fn nextval_names(expr: &str) -> Vec<(usize, String)> {
    const CALL: &str = "nextval('";
    let lower = expr.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find(CALL) {
        let start = at + i + CALL.len();
        let mut name = String::new();
        let mut chars = expr[start..].char_indices().peekable();
        at = expr.len();
        while let Some((j, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|(_, n)| *n) == Some('\'') {
                    name.push('\'');
                    chars.next();
                    continue;
                }
                at = start + j;
                break;
            }
            name.push(c);
        }
        out.push((start, name));
    }
    out
}

/// The OIDs of the tables, views and sequences a view's query names.
fn view_relations(cat: &Catalog, query: &str) -> Vec<u32> {
    let Ok(q) = crate::parse::query_text(query) else { return vec![] };
    let mut out = Vec::new();
    let _ = sqlparser::ast::visit_relations(&q, |name| {
        // User relations only: pg_catalog's are not dependencies pg_dump orders by.
        let user = crate::bind::obj_name(name).ok().and_then(|n| cat.relation(&n).ok().flatten());
        out.extend(user.map(|r| r.oid()));
        ControlFlow::<()>::Continue(())
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextval_names_are_read_from_default_text() {
        let names = |e: &str| nextval_names(e).into_iter().map(|(_, n)| n).collect::<Vec<_>>();
        assert_eq!(names("nextval('s'::regclass)"), vec!["s"]);
        assert_eq!(names("NEXTVAL('a''b') + nextval('public.c')"), vec!["a'b", "public.c"]);
        assert!(names("now()").is_empty());
        assert_eq!(names("nextval('unterminated"), vec!["unterminated"]);
        assert_eq!(nextval_names("x + nextval('s')"), vec![(13, "s".to_string())]);
    }
}
