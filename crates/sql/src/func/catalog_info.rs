//! System information functions that read the catalog, as psql, drivers and
//! ORMs call them: pg_get_constraintdef, pg_get_indexdef,
//! pg_get_serial_sequence, pg_get_userbyid, pg_table_is_visible, format_type,
//! obj_description and col_description. Object ids arrive as integers
//! (OID columns are bigint until the `oid` type exists).

use sqltypes::{RegKind, RegValue, Value};

use crate::catalog::{Catalog, FkAction, TableDef, TypeDef};

/// A cast to regclass/regtype (`lenient`: to_regclass/to_regtype, NULL
/// instead of an error for a name that names nothing). Text is a name (or
/// digits); an integer or OID is looked up for its name.
pub fn to_reg(
    cat: &Catalog,
    kind: RegKind,
    lenient: bool,
    v: Value,
) -> crate::error::Result<Value> {
    let oid = match &v {
        // `-` is the input form of OID 0, as the output is.
        Value::Text(s) if s.trim() == "-" => 0,
        Value::Text(s) => {
            let found = match kind {
                RegKind::Class => class_oid(cat, s),
                RegKind::Type => type_oid(cat, s),
                RegKind::Namespace => namespace_oid(s),
                RegKind::Proc => proc_oid(s)?,
            };
            match (found, lenient) {
                (Some(o), _) => o,
                (None, true) => return Ok(Value::Null),
                (None, false) => {
                    return Err(match kind {
                        RegKind::Class => {
                            crate::err!(UndefinedTable, "relation \"{s}\" does not exist")
                        }
                        RegKind::Type => {
                            crate::err!(UndefinedObject, "type \"{s}\" does not exist")
                        }
                        RegKind::Namespace => {
                            crate::err!(InvalidSchemaName, "schema \"{s}\" does not exist")
                        }
                        RegKind::Proc => {
                            crate::err!(UndefinedFunction, "function \"{s}\" does not exist")
                        }
                    })
                }
            }
        }
        Value::Null => return Ok(Value::Null),
        other => match other.as_oid() {
            Some(o) => o,
            None => crate::bail!(
                CannotCoerce,
                "cannot cast type {:?} to an OID type",
                other.data_type()
            ),
        },
    };
    let name = match kind {
        _ if oid == 0 => "-".into(),
        RegKind::Proc => crate::system::builtin_rows::regproc_name(oid),
        RegKind::Class => class_name(cat, oid),
        RegKind::Type => type_name(Some(cat), oid),
        RegKind::Namespace => NAMESPACES
            .iter()
            .find(|(_, o)| *o == oid)
            .map(|(n, _)| n.to_string())
            .unwrap_or_else(|| oid.to_string()),
    };
    Ok(Value::Reg(Box::new(RegValue { kind, oid, name })))
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
pub fn constraint_def(cat: &Catalog, oid: u32, pretty: bool, qualify: bool) -> Option<String> {
    for t in cat.tables.values() {
        if t.pkey_name.is_some() && t.pkey_oid == oid {
            return Some(format!("PRIMARY KEY ({})", column_list(t, &t.primary_key)));
        }
        if let Some(i) = t.indexes.iter().find(|i| i.constraint && i.oid == oid) {
            return Some(format!("UNIQUE ({})", column_list(t, &i.columns)));
        }
        if let Some(c) = t.checks.iter().find(|c| c.oid(t.oid) == oid) {
            let expr = match qualify {
                true => qualify_enum_casts(cat, c.expr.clone()),
                false => c.expr.clone(),
            };
            // The pretty form drops the condition's own parentheses.
            return Some(if pretty {
                format!("CHECK ({expr})")
            } else {
                format!("CHECK (({expr}))")
            });
        }
        if let Some(f) = t.foreign_keys.iter().find(|f| f.oid == oid) {
            let parent = cat.table_by_oid(f.ref_table)?;
            let mut s = format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                column_list(t, &f.columns),
                qualified(&parent.name, qualify),
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

/// format_type(type oid, typmod): the SQL name of a type (`???` if
/// unknown); an enum type's `public.`-qualified if `qualify` (public is not
/// on the search path).
pub fn format_type(cat: Option<&Catalog>, oid: u32, typmod: Option<i32>, qualify: bool) -> String {
    match sqltypes::DataType::from_oid(oid) {
        _ if oid == 0 => "-".to_string(),
        Some(_) => TypeDef::builtin(oid, typmod.unwrap_or(-1)).to_type().to_string(),
        None => match cat.and_then(|c| c.type_by_oid(oid)) {
            Some(t) if qualify => format!("public.{t}"),
            Some(t) => t.to_string(),
            None => "???".to_string(),
        },
    }
}

/// What a pg_proc-reading function returns of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcInfo {
    /// pg_get_function_result: `integer`, `SETOF record`, ...
    Result,
    /// pg_get_function_arguments: names, modes and defaults included
    Arguments,
    /// pg_get_function_identity_arguments: without defaults
    IdentityArguments,
    /// pg_get_function_sqlbody: NULL (no built-in has a SQL body)
    SqlBody,
    /// pg_function_is_visible: true for every function (all are in
    /// pg_catalog, always on the search path)
    Visible,
}

/// `which` of the function with this OID (NULL if there is none).
pub fn proc_info(which: ProcInfo, oid: u32) -> Value {
    let Some(p) = crate::builtins::proc_by_oid(oid) else { return Value::Null };
    let t = |s: &str| Value::Text(s.to_string());
    match which {
        ProcInfo::Result => t(&p.result),
        ProcInfo::Arguments => t(&p.arguments),
        ProcInfo::IdentityArguments => t(&p.identity_arguments),
        ProcInfo::SqlBody => Value::Null,
        ProcInfo::Visible => Value::Bool(true),
    }
}

/// acldefault(kind, owner): the owner's default privileges on an object of
/// that kind (PostgreSQL's one-letter codes), plus PUBLIC's where it has
/// some by default, as aclitem[] text.
pub fn acl_default(cat: &Catalog, kind: &str, owner: u32) -> crate::error::Result<Value> {
    let (own, public) = match kind {
        "r" => ("arwdDxt", ""),
        "s" => ("rwU", ""),
        "d" => ("CTc", "Tc"),
        "f" => ("X", "X"),
        "l" | "T" => ("U", "U"),
        "F" | "S" => ("U", ""),
        "L" => ("rw", ""),
        "n" => ("UC", ""),
        "t" => ("C", ""),
        "p" => ("sA", ""),
        other => crate::bail!(InternalError, "unrecognized object type abbreviation: {other}"),
    };
    let name = quote_ident(&user_by_id(cat, owner));
    let mut items = Vec::new();
    if !public.is_empty() {
        items.push(Value::Text(format!("={public}/{name}")));
    }
    items.push(Value::Text(format!("{name}={own}/{name}")));
    Ok(sqltypes::array::ArrayValue::new(sqltypes::DataType::Text, items).into_value())
}

/// pg_get_userbyid(oid): the role's name, or `unknown (OID=n)`.
pub fn user_by_id(cat: &Catalog, oid: u32) -> String {
    if let Some((name, _)) = crate::system::PREDEFINED_ROLES.iter().find(|(_, o)| *o == oid) {
        return name.to_string();
    }
    crate::system::roles_with_oids(cat)
        .into_iter()
        .find(|(o, _)| *o == oid as i64)
        .map(|(_, r)| r.name)
        .unwrap_or_else(|| format!("unknown (OID={oid})"))
}

/// A relation's name for deparsed SQL: quoted where needed, and
/// `public.`-qualified if `qualify` (public is not on the search_path).
fn qualified(name: &str, qualify: bool) -> String {
    match qualify {
        true => format!("public.{}", quote_ident(name)),
        false => quote_ident(name),
    }
}

/// pg_get_expr: a column default's text, its nextval() sequence names and
/// the enum types it casts to `public.`-qualified if `qualify`.
pub fn expr_def(cat: &Catalog, text: String, qualify: bool) -> String {
    if !qualify {
        return text;
    }
    let text = qualify_enum_casts(cat, text);
    let mut out = text.clone();
    // From the last call back, so earlier offsets stay valid.
    for (at, name) in crate::system::depend::nextval_names(&text).into_iter().rev() {
        if !name.contains('.') && !text[at..].starts_with('"') {
            out.insert_str(at, "public.");
        }
    }
    out
}

/// `text` with its casts to enum types written `::public.name`, as
/// PostgreSQL prints a type that is not on the search path.
fn qualify_enum_casts(cat: &Catalog, text: String) -> String {
    if cat.enums.is_empty() {
        return text;
    }
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let parsed = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(&text)
        .and_then(|mut p| p.parse_expr());
    let Ok(mut e) = parsed else { return text };
    let mut changed = false;
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |x| {
        if let sqlparser::ast::Expr::Cast {
            data_type: sqlparser::ast::DataType::Custom(n, _),
            ..
        } = x
        {
            let user = n.0.len() == 1
                && crate::bind::object_name(n).is_ok_and(|n| {
                    let base = n.strip_suffix("[]").unwrap_or(&n);
                    cat.enum_type(base).is_some()
                });
            if user {
                n.0.insert(0, sqlparser::ast::ObjectNamePart::Identifier("public".into()));
                changed = true;
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    if changed {
        e.to_string()
    } else {
        text
    }
}

/// pg_get_viewdef: the view's query as PostgreSQL prints it (a leading
/// space, a trailing `;`), relation names qualified with `public.` if
/// `qualify`.
pub fn view_def(cat: &Catalog, oid: u32, qualify: bool) -> Option<String> {
    let v = cat.views.values().find(|v| v.oid == oid)?;
    let mut text = v.query.clone();
    if qualify {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let parsed = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(&v.query)
            .and_then(|mut p| p.parse_query());
        if let Ok(mut q) = parsed {
            let _ = sqlparser::ast::visit_relations_mut(&mut q, |name| {
                let user = cat.relations().into_iter().any(|(_, n, _)| name.to_string() == n);
                if name.0.len() == 1 && user {
                    name.0.insert(0, sqlparser::ast::ObjectNamePart::Identifier("public".into()));
                }
                std::ops::ControlFlow::<()>::Continue(())
            });
            text = q.to_string();
        }
    }
    Some(format!(" {text};"))
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

/// The schemas, with their OIDs (as pg_namespace lists them).
const NAMESPACES: &[(&str, u32)] = &[
    ("pg_catalog", 11),
    ("public", crate::catalog::PUBLIC_NAMESPACE_OID),
    ("information_schema", 13000),
];

/// regproc input: the OID of the one function named `text` (optionally
/// `pg_catalog.`-qualified); an error if several functions have the name.
fn proc_oid(text: &str) -> crate::error::Result<Option<u32>> {
    if let Ok(oid) = text.trim().parse::<u32>() {
        return Ok(Some(oid));
    }
    let (schema, name) = split_name(text);
    if schema.as_deref().is_some_and(|s| s != "pg_catalog") {
        return Ok(None);
    }
    let mut found = crate::builtins::procs().iter().filter(|p| p.name == name);
    match (found.next(), found.next()) {
        (Some(_), Some(_)) => {
            crate::bail!(AmbiguousFunction, "more than one function named \"{}\"", text.trim())
        }
        (one, _) => Ok(one.map(|p| p.oid)),
    }
}

/// regnamespace input.
fn namespace_oid(text: &str) -> Option<u32> {
    let (_, name) = split_name(text);
    NAMESPACES.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
}

/// Splits an optionally schema-qualified, optionally quoted name as
/// regclass input reads it: (schema, name), unquoted parts folded to lower
/// case.
fn split_name(text: &str) -> (Option<String>, String) {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut cur)),
            c if quoted => cur.push(c),
            c => cur.extend(c.to_lowercase()),
        }
    }
    parts.push(cur);
    let name = parts.pop().unwrap_or_default();
    (parts.pop(), name)
}

/// regclass input: the OID of relation `text` (None if there is none).
pub fn class_oid(cat: &Catalog, text: &str) -> Option<u32> {
    if let Ok(oid) = text.trim().parse::<u32>() {
        return Some(oid);
    }
    let (schema, name) = split_name(text);
    let system =
        || crate::system::CATALOG_RELATIONS.iter().find(|(n, _)| *n == name).map(|(_, o)| *o);
    let user = || cat.relations().into_iter().find(|(_, n, _)| *n == name).map(|(o, _, _)| o);
    match schema.as_deref() {
        Some("pg_catalog") => system(),
        Some("public") => user(),
        Some(_) => None,
        None => system().or_else(user),
    }
}

/// regclass output: the relation's name, quoted where needed (its OID's
/// digits if it names nothing).
pub fn class_name(cat: &Catalog, oid: u32) -> String {
    if let Some((n, _)) = crate::system::CATALOG_RELATIONS.iter().find(|(_, o)| *o == oid) {
        return n.to_string();
    }
    cat.relations()
        .into_iter()
        .find(|(o, _, _)| *o == oid)
        .map(|(_, n, _)| quote_ident(n))
        .unwrap_or_else(|| oid.to_string())
}

/// regtype input: the OID of type `text` (None if there is none).
pub fn type_oid(cat: &Catalog, text: &str) -> Option<u32> {
    if let Ok(oid) = text.trim().parse::<u32>() {
        return Some(oid);
    }
    let text = text.trim();
    let text = text.strip_prefix("pg_catalog.").unwrap_or(text);
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let mut parser = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).ok()?;
    let ast = parser.parse_data_type().ok()?;
    if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    let ty = crate::bind::catalog_type(cat, &ast).ok()?;
    Some(ty.oid()).filter(|o| *o != 0)
}

/// regtype output: the type's name as format_type prints it without a
/// modifier (its OID's digits if it names nothing).
pub fn type_name(cat: Option<&Catalog>, oid: u32) -> String {
    match cat.and_then(|c| c.type_by_oid(oid)).or_else(|| sqltypes::DataType::from_oid(oid)) {
        Some(_) => format_type(cat, oid, None, false),
        None => oid.to_string(),
    }
}
