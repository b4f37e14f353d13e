//! System information functions that read the catalog, as psql, drivers and
//! ORMs call them: pg_get_constraintdef, pg_get_indexdef,
//! pg_get_serial_sequence, pg_get_userbyid, pg_table_is_visible, format_type,
//! obj_description and col_description. Object ids arrive as integers
//! (OID columns are bigint until the `oid` type exists).

use sqltypes::Value;

use crate::catalog::{Catalog, FkAction, TableDef, TypeDef};

/// An object id argument.
pub fn oid(v: &Value) -> Option<u32> {
    match v {
        Value::Int2(x) => u32::try_from(*x).ok(),
        Value::Int4(x) => Some(*x as u32),
        Value::Int8(x) => u32::try_from(*x).ok(),
        _ => None,
    }
}

/// PostgreSQL's quote_ident: names that are lower-case identifiers and not
/// reserved words print bare, others in double quotes.
pub fn quote_ident(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "all",
        "analyse",
        "analyze",
        "and",
        "any",
        "array",
        "as",
        "asc",
        "both",
        "case",
        "cast",
        "check",
        "collate",
        "column",
        "constraint",
        "create",
        "default",
        "desc",
        "distinct",
        "do",
        "else",
        "end",
        "except",
        "false",
        "for",
        "foreign",
        "from",
        "grant",
        "group",
        "having",
        "in",
        "initially",
        "intersect",
        "into",
        "leading",
        "limit",
        "not",
        "null",
        "offset",
        "on",
        "only",
        "or",
        "order",
        "primary",
        "references",
        "select",
        "table",
        "then",
        "to",
        "trailing",
        "true",
        "union",
        "unique",
        "user",
        "using",
        "when",
        "where",
        "window",
        "with",
    ];
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$')
        && !RESERVED.contains(&name);
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

fn column_list(t: &TableDef, cols: &[usize]) -> String {
    let names: Vec<String> = cols.iter().map(|&c| quote_ident(&t.columns[c].name)).collect();
    names.join(", ")
}

/// pg_get_constraintdef(oid): the constraint's definition as written after
/// ADD CONSTRAINT (primary key, unique and foreign key constraints).
pub fn constraint_def(cat: &Catalog, oid: u32) -> Option<String> {
    for t in cat.tables.values() {
        if t.pkey_name.is_some() && t.pkey_oid == oid {
            return Some(format!("PRIMARY KEY ({})", column_list(t, &t.primary_key)));
        }
        if let Some(i) = t.indexes.iter().find(|i| i.constraint && i.oid == oid) {
            return Some(format!("UNIQUE ({})", column_list(t, &i.columns)));
        }
        if let Some(f) = t.foreign_keys.iter().find(|f| f.oid == oid) {
            let parent = cat.table_by_oid(f.ref_table)?;
            let mut s = format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                column_list(t, &f.columns),
                quote_ident(&parent.name),
                column_list(&parent, &f.ref_columns)
            );
            if f.match_full {
                s.push_str(" MATCH FULL");
            }
            if f.on_update != FkAction::NoAction {
                s.push_str(&format!(" ON UPDATE {}", f.on_update.sql()));
            }
            if f.on_delete != FkAction::NoAction {
                s.push_str(&format!(" ON DELETE {}", f.on_delete.sql()));
            }
            return Some(s);
        }
    }
    None
}

/// pg_get_indexdef(oid): the CREATE INDEX statement of an index.
pub fn index_def(cat: &Catalog, oid: u32) -> Option<String> {
    for t in cat.tables.values() {
        let (name, unique, cols) = if t.pkey_name.is_some() && t.pkey_oid == oid {
            (t.pkey_name.clone()?, true, t.primary_key.clone())
        } else if let Some(i) = t.indexes.iter().find(|i| i.oid == oid) {
            (i.name.clone(), i.unique, i.columns.clone())
        } else {
            continue;
        };
        return Some(format!(
            "CREATE {}INDEX {} ON public.{} USING btree ({})",
            if unique { "UNIQUE " } else { "" },
            quote_ident(&name),
            quote_ident(&t.name),
            column_list(t, &cols)
        ));
    }
    None
}

/// Strips an optional `public.` and double quotes from a relation name the
/// way regclass input reads it; unquoted names fold to lower case.
fn relation_name(text: &str) -> String {
    let text = text.strip_prefix("public.").unwrap_or(text);
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => text.to_lowercase(),
    }
}

/// pg_get_serial_sequence(table, column): the sequence a SERIAL or IDENTITY
/// column draws from, schema-qualified.
pub fn serial_sequence(cat: &Catalog, table: &str, column: &str) -> Option<String> {
    let t = cat.get_table(&relation_name(table))?;
    let col = column.to_string();
    cat.sequences
        .values()
        .find(|s| s.owned_by.as_ref().is_some_and(|(o, c)| *o == t.oid && *c == col))
        .map(|s| format!("public.{}", quote_ident(&s.name)))
}

/// pg_table_is_visible(oid): every relation lives in `public`, which is on
/// the search path; NULL for an OID that names no relation.
pub fn table_is_visible(cat: &Catalog, oid: u32) -> Value {
    let exists = cat.tables.values().any(|t| {
        t.oid == oid
            || (t.pkey_name.is_some() && t.pkey_oid == oid)
            || t.indexes.iter().any(|i| i.oid == oid)
    }) || cat.views.values().any(|v| v.oid == oid)
        || cat.sequences.values().any(|s| s.oid == oid);
    if exists {
        Value::Bool(true)
    } else {
        Value::Null
    }
}

/// format_type(type oid, typmod): the SQL name of a type (`???` if unknown).
pub fn format_type(oid: u32, typmod: Option<i32>) -> String {
    match sqltypes::DataType::from_oid(oid) {
        Some(_) => TypeDef { oid, typmod: typmod.unwrap_or(-1) }.to_type().to_string(),
        None => "???".to_string(),
    }
}

/// pg_get_userbyid(oid): the role's name, or `unknown (OID=n)`.
pub fn user_by_id(cat: &Catalog, oid: u32) -> String {
    if oid == crate::system::DATABASE_OWNER_OID as u32 {
        return "pg_database_owner".into();
    }
    crate::system::roles_with_oids(cat)
        .into_iter()
        .find(|(o, _)| *o == oid as i64)
        .map(|(_, r)| r.name)
        .unwrap_or_else(|| format!("unknown (OID={oid})"))
}

/// obj_description(oid, 'pg_class'): the table's comment.
pub fn table_comment(cat: &Catalog, oid: u32) -> Option<String> {
    cat.tables.values().find(|t| t.oid == oid).and_then(|t| t.comment.clone())
}

/// col_description(table oid, column number): the column's comment.
pub fn column_comment(cat: &Catalog, oid: u32, attnum: i32) -> Option<String> {
    let t = cat.tables.values().find(|t| t.oid == oid)?;
    let i = usize::try_from(attnum).ok()?.checked_sub(1)?;
    t.columns.get(i)?.comment.clone()
}
