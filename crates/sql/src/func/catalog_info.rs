//! System information functions that read the catalog, as psql, drivers and
//! ORMs call them: pg_get_constraintdef, pg_get_indexdef,
//! pg_get_serial_sequence, pg_get_userbyid, pg_table_is_visible, format_type,
//! obj_description and col_description. Object ids arrive as integers
//! (OID columns are bigint until the `oid` type exists).

use sqltypes::{RegKind, RegValue, Value};

use crate::catalog::{Catalog, FkAction, TableDef, TypeDef};
use crate::deparse::Role;

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
                RegKind::Namespace => cat.namespace_oid(&split_name(s).1),
                RegKind::Proc => proc_oid(cat, s)?,
                RegKind::Procedure => procedure_oid(cat, s)?,
                RegKind::Role => {
                    let name = split_name(s).1;
                    let roles = crate::system::roles_with_oids(cat);
                    roles.into_iter().find(|(_, r)| r.name == name).map(|(o, _)| o as u32)
                }
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
                        RegKind::Proc | RegKind::Procedure => {
                            crate::err!(UndefinedFunction, "function \"{s}\" does not exist")
                        }
                        RegKind::Role => {
                            crate::err!(
                                UndefinedObject,
                                "role \"{}\" does not exist",
                                split_name(s).1
                            )
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
        RegKind::Proc => crate::system::builtin_rows::regproc_name(Some(cat), oid),
        RegKind::Class => class_name(cat, oid),
        RegKind::Type => type_name(Some(cat), oid),
        RegKind::Namespace => {
            cat.namespace_name(oid).map(quote_ident).unwrap_or_else(|| oid.to_string())
        }
        RegKind::Procedure => procedure_name(cat, oid),
        RegKind::Role => {
            match crate::system::roles_with_oids(cat).into_iter().find(|(o, _)| *o == oid as i64) {
                Some((_, r)) => quote_ident(&r.name),
                None => oid.to_string(),
            }
        }
    };
    Ok(Value::Reg(Box::new(RegValue { kind, oid, name })))
}

pub use crate::builtins::quote_identifier as quote_ident;

/// The columns `cols` of `t` by name, quoted where needed, comma-separated.
pub(crate) fn column_list(t: &TableDef, cols: &[usize]) -> String {
    let names: Vec<String> = cols.iter().map(|&c| quote_ident(&t.columns[c].name)).collect();
    names.join(", ")
}

/// A constraint definition's DEFERRABLE clause, as pg_get_constraintdef
/// ends one (`deferral` is Some(initially deferred) when deferrable).
pub(crate) fn deferral_clause(deferral: Option<bool>) -> &'static str {
    match deferral {
        None => "",
        Some(false) => " DEFERRABLE",
        Some(true) => " DEFERRABLE INITIALLY DEFERRED",
    }
}

/// pg_get_constraintdef(oid): the constraint's definition as written after
/// ADD CONSTRAINT (primary key, unique and foreign key constraints).
pub fn constraint_def(cat: &Catalog, oid: u32, pretty: bool) -> Option<String> {
    for t in cat.tables.values() {
        if t.pkey_name.is_some() && t.pkey_oid == oid {
            let def = format!("PRIMARY KEY ({})", column_list(t, &t.primary_key));
            return Some(def + deferral_clause(t.pkey_deferral));
        }
        if let Some(i) = t.indexes.iter().find(|i| i.constraint && i.oid == oid) {
            let def = format!("UNIQUE ({})", column_list(t, &i.columns));
            return Some(def + deferral_clause(i.deferral));
        }
        if let Some(c) = t.checks.iter().find(|c| c.oid(t.oid) == oid) {
            return Some(check_clause(cat, Some(t), &c.expr, pretty) + not_valid(c.not_valid));
        }
        if let Some(f) = t.foreign_keys.iter().find(|f| f.oid == oid) {
            let parent = cat.table_by_oid(f.ref_table)?;
            let mut s = format!(
                "FOREIGN KEY ({}) REFERENCES {}({})",
                column_list(t, &f.columns),
                relation_display_name(cat, parent.namespace, &parent.name),
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
            s.push_str(deferral_clause(f.deferral()));
            s.push_str(not_valid(f.not_valid));
            return Some(s);
        }
    }
    let domains = cat.user_types.values().filter_map(|(d, _)| d.domain.as_ref());
    let c = domains.flat_map(|s| &s.checks).find(|c| c.oid == oid)?;
    Some(check_clause(cat, None, &c.expr, pretty) + not_valid(!c.validated))
}

/// The ` NOT VALID` a constraint definition ends with when it applies.
fn not_valid(not_valid: bool) -> &'static str {
    if not_valid {
        " NOT VALID"
    } else {
        ""
    }
}

/// `CHECK (expr)` of a table's (or, `t` None, a domain's) condition. The
/// plain form of a condition PostgreSQL's printing was not modelled for
/// gets the parentheses an operator would bring.
fn check_clause(cat: &Catalog, t: Option<&TableDef>, expr: &str, pretty: bool) -> String {
    let shown = t.and_then(|t| crate::deparse::pg_expr(cat, t, expr, Role::Condition, pretty));
    match (shown, pretty) {
        (Some(e), _) => format!("CHECK ({e})"),
        (None, true) => format!("CHECK ({})", crate::deparse::display_expr(cat, expr)),
        (None, false) => format!("CHECK (({}))", crate::deparse::display_expr(cat, expr)),
    }
}

/// pg_get_indexdef(oid [, column, pretty]): the CREATE INDEX statement of
/// an index, or (column > 0) that key alone. An expression key is
/// parenthesized unless it is a function call, as PostgreSQL prints it.
pub fn index_def(cat: &Catalog, oid: u32, column: usize, pretty: bool) -> Option<String> {
    for t in cat.tables.values() {
        let pk = t.pkey_name.is_some() && t.pkey_oid == oid;
        let idx = t.indexes.iter().find(|i| i.oid == oid);
        let (name, unique, cols) = match (pk, idx) {
            (true, _) => (t.pkey_name.clone()?, true, t.primary_key.clone()),
            (false, Some(i)) => (i.name.clone(), i.unique, i.columns.clone()),
            (false, None) => continue,
        };
        let mut exprs = idx.map(|i| i.exprs.iter()).into_iter().flatten();
        let mut keys = Vec::new();
        for c in cols {
            keys.push(match c {
                crate::catalog::EXPRESSION_KEY => {
                    // PostgreSQL adds one pair of parentheses; the text
                    // printed as written lacks those of its operators.
                    let text = exprs.next()?;
                    let (e, analysed) =
                        match crate::deparse::pg_expr(cat, t, text, Role::Plain, pretty) {
                            Some(e) => (e, true),
                            None => (crate::deparse::display_expr(cat, text), false),
                        };
                    match (looks_like_call(&e), pretty || analysed) {
                        (true, _) => e,
                        (false, true) => format!("({e})"),
                        (false, false) => format!("(({e}))"),
                    }
                }
                c => quote_ident(&t.columns[c].name),
            });
            let k = keys.len() - 1;
            let last = keys.last_mut()?;
            // An operator class other than the type's default.
            let class = idx.and_then(|i| i.opclasses.get(k)).and_then(Option::as_deref);
            if let (0, Some(class)) = (column, class) {
                last.push(' ');
                last.push_str(class);
            }
            // ASC NULLS LAST and DESC NULLS FIRST are the defaults; a
            // single key is shown without them.
            let option = match column {
                0 => idx.and_then(|i| i.options.get(k)).copied().unwrap_or(0),
                _ => 0,
            };
            match (option & 1 != 0, option & 2 != 0) {
                (true, true) => last.push_str(" DESC"),
                (true, false) => last.push_str(" DESC NULLS LAST"),
                (false, true) => last.push_str(" NULLS FIRST"),
                (false, false) => {}
            }
        }
        let include: Vec<String> = idx
            .map(|i| i.include.iter().map(|&c| quote_ident(&t.columns[c].name)).collect())
            .unwrap_or_default();
        if column > 0 {
            return keys.into_iter().chain(include).nth(column - 1);
        }
        let mut def = format!(
            "CREATE {}INDEX {} ON {}{} USING {} ({})",
            if unique { "UNIQUE " } else { "" },
            quote_ident(&name),
            // A partitioned table's index is its own (attach.rs).
            if t.is_partitioned() { "ONLY " } else { "" },
            // The pretty form names the table as the search path finds it.
            match pretty && cat.relation_visible(t.namespace, &t.name) {
                true => quote_ident(&t.name),
                false => qualified_name(cat, t.namespace, &t.name),
            },
            idx.and_then(|i| i.method.as_deref()).unwrap_or("btree"),
            keys.join(", ")
        );
        if !include.is_empty() {
            def.push_str(&format!(" INCLUDE ({})", include.join(", ")));
        }
        if let Some(p) = idx.and_then(|i| i.predicate.as_deref()) {
            let shown = crate::deparse::pg_expr(cat, t, p, Role::Condition, pretty);
            def.push_str(&match (shown, pretty) {
                (Some(p), _) => format!(" WHERE {p}"),
                (None, true) => format!(" WHERE {}", crate::deparse::display_expr(cat, p)),
                (None, false) => format!(" WHERE ({})", crate::deparse::display_expr(cat, p)),
            });
        }
        return Some(def);
    }
    None
}

/// True if `e` is one function call (`lower(email)`), which an index
/// definition prints without parentheses of its own.
pub(crate) fn looks_like_call(e: &str) -> bool {
    let Some(open) = e.find('(') else { return false };
    let name = &e[..open];
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
        return false;
    }
    // The parenthesis opened after the name closes at the very end.
    let mut depth = 0;
    for (i, c) in e.char_indices().skip_while(|&(i, _)| i < open) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i == e.len() - 1;
                }
            }
            _ => {}
        }
    }
    false
}

/// pg_get_serial_sequence(table, column): the sequence a SERIAL or IDENTITY
/// column draws from, schema-qualified.
pub fn serial_sequence(cat: &Catalog, table: &str, column: &str) -> Option<String> {
    let oid = class_oid(cat, table)?;
    let col = column.to_string();
    cat.sequences
        .values()
        .find(|s| s.owned_by.as_ref().is_some_and(|(o, c)| *o == oid && *c == col))
        .map(|s| qualified_name(cat, s.namespace, &s.name))
}

/// pg_table_is_visible(oid): whether the relation's unqualified name finds
/// it on the search path; NULL for an OID that names no relation.
pub fn table_is_visible(cat: &Catalog, oid: u32) -> Value {
    if crate::system::CATALOG_RELATIONS.iter().any(|(_, o)| *o == oid) {
        return Value::Bool(true);
    }
    match cat.relations().find(|(o, ..)| *o == oid) {
        Some((_, ns, name, _)) => Value::Bool(cat.relation_visible(ns, name)),
        None => Value::Null,
    }
}

/// `schema.name`, each part quoted where needed.
pub fn qualified_name(cat: &Catalog, ns: u32, name: &str) -> String {
    let schema = cat.namespace_name(ns).unwrap_or("???");
    format!("{}.{}", quote_ident(schema), quote_ident(name))
}

/// A relation's name as PostgreSQL prints it in deparsed SQL: bare if the
/// search path finds it, else schema-qualified.
pub fn relation_display_name(cat: &Catalog, ns: u32, name: &str) -> String {
    match cat.relation_visible(ns, name) {
        true => quote_ident(name),
        false => qualified_name(cat, ns, name),
    }
}

/// format_type(type oid, typmod): the SQL name of a type (`???` if
/// unknown); an enum type's schema-qualified unless the search path finds
/// it.
pub fn format_type(cat: Option<&Catalog>, oid: u32, typmod: Option<i32>) -> String {
    match sqltypes::DataType::from_oid(oid) {
        _ if oid == 0 => "-".to_string(),
        Some(_) => {
            let def = TypeDef::builtin(oid, typmod.unwrap_or(-1));
            def.precise_name().unwrap_or_else(|| def.to_type().to_string())
        }
        None => match cat.and_then(|c| c.user_type_of(oid).map(|d| (c, d))) {
            Some((c, d)) => {
                let base = match c.type_visible(d.namespace, &d.name) {
                    true => quote_ident(&d.name),
                    false => qualified_name(c, d.namespace, &d.name),
                };
                if oid == d.array_oid {
                    format!("{base}[]")
                } else {
                    base
                }
            }
            None => match PSEUDO_TYPES.iter().find(|(o, _)| *o == oid) {
                Some((_, name)) => name.to_string(),
                None => "???".to_string(),
            },
        },
    }
}

/// Pseudo-types that functions in pg_proc take or return, which regtype
/// and format_type know by name: (OID, name).
const PSEUDO_TYPES: &[(u32, &str)] = &[
    (2249, "record"),
    (2287, "record[]"),
    (2275, "cstring"),
    (2276, "\"any\""),
    (2277, "anyarray"),
    (2279, "trigger"),
    (3838, "event_trigger"),
    (2280, "language_handler"),
    (2281, "internal"),
    (2283, "anyelement"),
];

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
    /// pg_function_is_visible: true for the built-ins (in pg_catalog) and
    /// for extension functions an unqualified call finds
    Visible,
}

/// `which` of the function with this OID (NULL if there is none): a
/// built-in, or with the catalog an extension's.
pub fn proc_info(cat: Option<&Catalog>, which: ProcInfo, oid: u32) -> Value {
    let member = cat.and_then(|c| crate::extensions::member(c, oid));
    let user;
    let (p, visible) = match (crate::builtins::proc_by_oid(oid), member) {
        (Some(p), _) => (p, true),
        (None, Some(m)) => {
            let found = cat.and_then(|c| crate::extensions::call_schema(c, &m.proc.name));
            (m.proc, found == Some(m.ext.namespace))
        }
        (None, None) => match cat.and_then(|c| Some((c, c.function_by_oid(oid)?))) {
            Some((c, f)) => {
                user = crate::system::builtin_rows::sql_function_proc(c, f);
                (&user, c.function_visible(f))
            }
            None => return Value::Null,
        },
    };
    let t = |s: &str| Value::Text(s.to_string());
    match which {
        ProcInfo::Result if p.kind == "p" => Value::Null,
        ProcInfo::Result => t(&p.result),
        ProcInfo::Arguments => t(&p.arguments),
        ProcInfo::IdentityArguments => t(&p.identity_arguments),
        ProcInfo::SqlBody => Value::Null,
        ProcInfo::Visible => Value::Bool(visible),
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
    let name = crate::acl::quote_name(&user_by_id(cat, owner));
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

/// pg_get_viewdef: the query of a view or materialized view as PostgreSQL
/// prints it (a leading space, a trailing `;`), names schema-qualified
/// where the search path does not find them.
pub fn view_def(cat: &Catalog, oid: u32) -> Option<String> {
    // A materialized view's query too.
    let table = cat.table_by_oid(oid);
    let query = match cat.views.values().find(|v| v.oid == oid) {
        Some(v) => v.query.as_str(),
        None => table.as_ref()?.matview.as_ref()?.query.as_str(),
    };
    Some(format!(" {};", crate::deparse::display_query(cat, query)))
}

/// obj_description(oid, 'pg_class'): the table's comment.
pub fn table_comment(cat: &Catalog, oid: u32) -> Option<String> {
    cat.relation_comments().find(|(o, _)| *o == oid).map(|(_, c)| c.to_string())
}

/// col_description(table oid, column number): the column's comment.
pub fn column_comment(cat: &Catalog, oid: u32, attnum: i32) -> Option<String> {
    let t = cat.table_by_oid(oid)?;
    let i = usize::try_from(attnum).ok()?.checked_sub(1)?;
    t.columns.get(i)?.comment.clone()
}

/// regproc input: the OID of the one function named `text` (optionally
/// schema-qualified; an installed extension's where the search path or
/// the schema finds one); an error if several functions have the name.
fn proc_oid(cat: &Catalog, text: &str) -> crate::error::Result<Option<u32>> {
    if let Ok(oid) = text.trim().parse::<u32>() {
        return Ok(Some(oid));
    }
    let (schema, name) = split_name(text);
    let name = name.as_str();
    let ns = match schema.as_deref() {
        Some("pg_catalog") => Some(crate::catalog::PG_CATALOG_NAMESPACE_OID),
        Some(s) => Some(cat.namespace_oid(s).unwrap_or(0)),
        None => None,
    };
    let builtins = crate::builtins::procs().iter().filter(|p| p.name == name).map(|p| p.oid);
    let in_ext = |ns: u32| {
        let members = crate::extensions::members(cat);
        members.filter(move |m| m.ext.namespace == ns && m.proc.name == name).map(|m| m.oid)
    };
    let mut found: Vec<u32> = match ns {
        Some(crate::catalog::PG_CATALOG_NAMESPACE_OID) => builtins.collect(),
        Some(ns) => in_ext(ns).collect(),
        None => {
            let first: Vec<u32> = builtins.collect();
            match (first.is_empty(), crate::extensions::call_schema(cat, name)) {
                (true, Some(ns)) => in_ext(ns).collect(),
                _ => first,
            }
        }
    };
    if found.is_empty() && ns != Some(crate::catalog::PG_CATALOG_NAMESPACE_OID) {
        found = sql_functions_named(cat, schema.as_deref(), name).map(|f| f.oid).collect();
    }
    if found.len() > 1 {
        crate::bail!(AmbiguousFunction, "more than one function named \"{}\"", text.trim());
    }
    Ok(found.pop())
}

/// The SQL functions named `name` in `schema`, or in the first schema on
/// the search path that has some.
fn sql_functions_named<'a>(
    cat: &'a Catalog,
    schema: Option<&str>,
    name: &str,
) -> impl Iterator<Item = &'a std::sync::Arc<crate::catalog::FunctionDef>> {
    let namespaces: Vec<u32> = match schema {
        Some(s) => cat.namespace_oid(s).into_iter().collect(),
        None => cat.path.relations.clone(),
    };
    namespaces
        .into_iter()
        .find_map(|ns| cat.functions.get(&(ns, name.to_string())))
        .into_iter()
        .flatten()
}

/// regprocedure input: `name(type, ...)`, optionally schema-qualified; the
/// function with exactly those argument types.
fn procedure_oid(cat: &Catalog, text: &str) -> crate::error::Result<Option<u32>> {
    let text = text.trim();
    if let Ok(oid) = text.parse::<u32>() {
        return Ok(Some(oid));
    }
    let Some((name, args)) = text.split_once('(') else {
        crate::bail!(InvalidTextRepresentation, "expected a left parenthesis");
    };
    let Some(args) = args.trim_end().strip_suffix(')') else {
        crate::bail!(InvalidTextRepresentation, "expected a right parenthesis");
    };
    let mut types = Vec::new();
    for a in args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        match type_oid(cat, a) {
            Some(t) => types.push(t),
            None => crate::bail!(UndefinedObject, "type \"{a}\" does not exist"),
        }
    }
    let (schema, name) = split_name(name);
    let builtin = schema.as_deref().is_none_or(|s| s == "pg_catalog");
    let found = crate::builtins::procs()
        .iter()
        .filter(|p| builtin && p.name == name && p.argtypes == types)
        .map(|p| p.oid)
        .chain(crate::extensions::members(cat).filter_map(|m| {
            let in_schema = match schema.as_deref() {
                Some(s) => cat.namespace_oid(s) == Some(m.ext.namespace),
                None => crate::extensions::call_schema(cat, &name) == Some(m.ext.namespace),
            };
            (in_schema && m.proc.name == name && m.proc.argtypes == types).then_some(m.oid)
        }))
        .chain(
            sql_functions_named(cat, schema.as_deref(), &name)
                .filter(|f| f.args.iter().map(|a| a.ty.oid).eq(types.iter().copied()))
                .map(|f| f.oid),
        )
        .next();
    Ok(found)
}

/// regprocedure output: `name(type,type)` (digits for an OID that names
/// no function).
fn procedure_name(cat: &Catalog, oid: u32) -> String {
    let user =
        cat.function_by_oid(oid).map(|f| crate::system::builtin_rows::sql_function_proc(cat, f));
    let proc = crate::builtins::proc_by_oid(oid)
        .or_else(|| crate::extensions::member(cat, oid).map(|m| m.proc))
        .or(user.as_ref());
    let Some(p) = proc else { return oid.to_string() };
    let name = crate::system::builtin_rows::regproc_name(Some(cat), oid);
    let args: Vec<String> = p.argtypes.iter().map(|&t| format_type(Some(cat), t, None)).collect();
    format!("{name}({})", args.join(","))
}

/// Splits an optionally schema-qualified, optionally quoted name as
/// regclass input reads it: (schema, name), unquoted parts folded to lower
/// case.
pub fn split_name(text: &str) -> (Option<String>, String) {
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
    let path =
        cat.lookup_path(&crate::catalog::ObjName { schema, name: name.clone() }, false).ok()?;
    path.iter().find_map(|&ns| match ns {
        crate::catalog::PG_CATALOG_NAMESPACE_OID => {
            crate::system::CATALOG_RELATIONS.iter().find(|(n, _)| *n == name).map(|(_, o)| *o)
        }
        _ => cat.relation_in(ns, &name).map(|r| r.oid()).or_else(|| {
            let (d, _) = cat.user_types.get(&(ns, name.clone()))?;
            Some(d.composite.as_ref()?.relid)
        }),
    })
}

/// regclass output: the relation's name, quoted where needed and
/// schema-qualified unless the search path finds it (its OID's digits if
/// it names nothing).
pub fn class_name(cat: &Catalog, oid: u32) -> String {
    if let Some((n, _)) = crate::system::CATALOG_RELATIONS.iter().find(|(_, o)| *o == oid) {
        return n.to_string();
    }
    cat.relations()
        .find(|(o, ..)| *o == oid)
        .map(|(_, ns, n, _)| relation_display_name(cat, ns, n))
        .unwrap_or_else(|| oid.to_string())
}

/// pg_describe_object(classid, objid, objsubid): what PostgreSQL calls
/// the object in messages (`function uuid_nil()`, `table t`, `column a of
/// table t`, `language plpgsql`), names qualified where the search path
/// does not find them; None for an object Strata does not know.
pub fn describe_object(cat: &Catalog, classid: u32, oid: u32, sub: i32) -> Option<String> {
    const PG_TYPE: u32 = 1247;
    const PG_PROC: u32 = 1255;
    const PG_CLASS: u32 = 1259;
    const PG_LANGUAGE: u32 = 2612;
    const PG_NAMESPACE: u32 = 2615;
    const PG_EXTENSION: u32 = 3079;
    Some(match classid {
        PG_PROC => {
            let user;
            let (p, ns, visible) = match crate::builtins::proc_by_oid(oid) {
                Some(p) => (p, crate::catalog::PG_CATALOG_NAMESPACE_OID, true),
                None => match crate::extensions::member(cat, oid) {
                    Some(m) => {
                        let ns = m.ext.namespace;
                        (m.proc, ns, crate::extensions::call_schema(cat, &m.proc.name) == Some(ns))
                    }
                    None => {
                        let f = cat.function_by_oid(oid)?;
                        user = crate::system::builtin_rows::sql_function_proc(cat, f);
                        (&user, f.namespace, cat.function_visible(f))
                    }
                },
            };
            let schema = match visible {
                true => String::new(),
                false => format!("{}.", quote_ident(cat.namespace_name(ns)?)),
            };
            let args: Vec<String> =
                p.argtypes.iter().map(|&t| format_type(Some(cat), t, None)).collect();
            format!("function {schema}{}({})", quote_ident(&p.name), args.join(","))
        }
        PG_CLASS => {
            let (.., kind) = cat.relations().find(|(o, ..)| *o == oid)?;
            let what = match kind {
                "i" | "I" => "index",
                "v" => "view",
                "S" => "sequence",
                "c" => "composite type",
                _ => "table",
            };
            let rel = format!("{what} {}", class_name(cat, oid));
            if sub == 0 {
                rel
            } else {
                let t = cat.table_by_oid(oid)?;
                let c = t.columns.get(usize::try_from(sub).ok()?.checked_sub(1)?)?;
                format!("column {} of {rel}", c.name)
            }
        }
        PG_TYPE => format!("type {}", type_name(Some(cat), oid)),
        PG_NAMESPACE => format!("schema {}", quote_ident(cat.namespace_name(oid)?)),
        PG_LANGUAGE => {
            let (_, name, ..) = crate::builtins::LANGUAGES.iter().find(|l| l.0 == oid)?;
            format!("language {name}")
        }
        PG_EXTENSION => match oid {
            crate::extensions::PLPGSQL_OID => "extension plpgsql".to_string(),
            _ => format!("extension {}", cat.extensions.values().find(|x| x.oid == oid)?.name),
        },
        _ => return None,
    })
}

/// A function setting's value as pg_get_functiondef prints it: a list of
/// names as one literal per name, any other value as one literal.
fn setting_literal(name: &str, value: &str) -> String {
    if !crate::settings::is_name_list(&name.to_lowercase()) {
        return crate::func::quote_literal(value);
    }
    let names = crate::catalog::search_path_names(value, "$user");
    match names.is_empty() {
        true => "''".into(),
        false => names.iter().map(|n| crate::func::quote_literal(n)).collect::<Vec<_>>().join(", "),
    }
}

/// pg_get_functiondef: the CREATE OR REPLACE FUNCTION statement of a
/// built-in or extension function, as PostgreSQL prints it.
pub fn function_def(cat: &Catalog, oid: u32) -> Option<String> {
    let user;
    let (p, ns, probin) = match crate::builtins::proc_by_oid(oid) {
        Some(p) => (p, crate::catalog::PG_CATALOG_NAMESPACE_OID, None),
        None => match crate::extensions::member(cat, oid) {
            Some(m) => (m.proc, m.ext.namespace, Some(format!("$libdir/{}", m.ext.name))),
            None => {
                let f = cat.function_by_oid(oid)?;
                user = crate::system::builtin_rows::sql_function_proc(cat, f);
                (&user, f.namespace, None)
            }
        },
    };
    let schema = cat.namespace_name(ns)?;
    let lang =
        crate::builtins::LANGUAGES.iter().find(|l| l.0 == p.lang).map_or("internal", |l| l.1);
    let procedure = p.kind == "p";
    let mut out = format!(
        "CREATE OR REPLACE {} {}.{}({})\n",
        if procedure { "PROCEDURE" } else { "FUNCTION" },
        quote_ident(schema),
        quote_ident(&p.name),
        p.arguments,
    );
    if !procedure {
        out.push_str(&format!(" RETURNS {}\n", p.result));
    }
    out.push_str(&format!(" LANGUAGE {}\n", quote_ident(lang)));
    let mut options = String::new();
    if p.kind == "w" {
        options.push_str(" WINDOW");
    }
    match p.volatile.as_str() {
        "i" => options.push_str(" IMMUTABLE"),
        "s" => options.push_str(" STABLE"),
        _ => {}
    }
    match p.parallel.as_str() {
        "s" => options.push_str(" PARALLEL SAFE"),
        "r" => options.push_str(" PARALLEL RESTRICTED"),
        _ => {}
    }
    if p.strict {
        options.push_str(" STRICT");
    }
    if p.secdef {
        options.push_str(" SECURITY DEFINER");
    }
    if p.leakproof {
        options.push_str(" LEAKPROOF");
    }
    let default_cost = if matches!(p.lang, 12 | 13) { 1.0 } else { 100.0 };
    if p.cost != default_cost {
        options.push_str(&format!(" COST {}", p.cost));
    }
    if p.rows > 0.0 && p.rows != 1000.0 {
        options.push_str(&format!(" ROWS {}", p.rows));
    }
    if !options.is_empty() {
        out.push_str(&options);
        out.push('\n');
    }
    for (name, value) in &p.config {
        out.push_str(&format!(" SET {} TO {}\n", quote_ident(name), setting_literal(name, value)));
    }
    out.push_str("AS ");
    if let Some(bin) = probin {
        out.push_str(&crate::func::quote_literal(&bin));
        out.push_str(", ");
    }
    let mut tag = if procedure { "$procedure$" } else { "$function$" }.to_string();
    while p.src.contains(&tag) {
        tag.insert(tag.len() - 1, 'x');
    }
    out.push_str(&format!("{tag}{}{tag}\n", p.src));
    Some(out)
}

/// regtype input: the OID of type `text` (None if there is none).
pub fn type_oid(cat: &Catalog, text: &str) -> Option<u32> {
    if let Ok(oid) = text.trim().parse::<u32>() {
        return Some(oid);
    }
    let text = text.trim();
    // Pseudo-types have no DataType of their own to name them.
    let lower = text.to_ascii_lowercase();
    let bare = lower.trim_start_matches("pg_catalog.");
    if let Some((oid, _)) = PSEUDO_TYPES.iter().find(|(_, n)| *n == bare) {
        return Some(*oid);
    }
    if bare == "_record" {
        return Some(2287);
    }
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let mut parser = sqlparser::parser::Parser::new(&dialect).try_with_sql(text).ok()?;
    let ast = parser.parse_data_type().ok()?;
    if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    // A domain (or an array of one) has its own OID.
    let (elem, array) = match &ast {
        sqlparser::ast::DataType::Array(sqlparser::ast::ArrayElemTypeDef::SquareBracket(e, _)) => {
            (e.as_ref(), true)
        }
        other => (other, false),
    };
    if let Ok(Some(d)) = crate::bind::domain_of(cat, elem) {
        return Some(if array { d.def.array_oid } else { d.def.oid });
    }
    let ty = crate::bind::catalog_type(cat, &ast).ok()?;
    // A table's row type has no OID of its own (no pg_type row) yet.
    if matches!(ty.elem().unwrap_or(&ty), sqltypes::DataType::Record(r) if r.named.is_none()) {
        return None;
    }
    Some(ty.oid()).filter(|o| *o != 0)
}

/// regtype output: the type's name as format_type prints it without a
/// modifier (its OID's digits if it names nothing).
pub fn type_name(cat: Option<&Catalog>, oid: u32) -> String {
    match cat.and_then(|c| c.type_by_oid(oid)).or_else(|| sqltypes::DataType::from_oid(oid)) {
        Some(_) => format_type(cat, oid, None),
        None if PSEUDO_TYPES.iter().any(|(o, _)| *o == oid) => format_type(cat, oid, None),
        None => oid.to_string(),
    }
}

/// The events of a trigger type (bit, name), in PostgreSQL's order.
fn trigger_events(tgtype: i16) -> impl Iterator<Item = (i16, &'static str)> {
    use crate::catalog::TriggerDef as T;
    [(T::INSERT, "INSERT"), (T::DELETE, "DELETE"), (T::UPDATE, "UPDATE"), (T::TRUNCATE, "TRUNCATE")]
        .into_iter()
        .filter(move |(bit, _)| tgtype & bit != 0)
}

/// `EXECUTE FUNCTION f('arg', ...)`.
fn trigger_action(cat: &Catalog, tr: &crate::catalog::TriggerDef) -> String {
    let name = match cat.function_by_oid(tr.function) {
        Some(f) if cat.function_visible(f) => quote_ident(&f.name),
        Some(f) => qualified_name(cat, f.namespace, &f.name),
        None => tr.function.to_string(),
    };
    let args: Vec<String> =
        tr.args.iter().map(|a| format!("'{}'", a.replace('\'', "''"))).collect();
    format!("EXECUTE FUNCTION {name}({})", args.join(", "))
}

/// pg_get_triggerdef(oid [, pretty]): the CREATE TRIGGER statement.
pub fn trigger_def(cat: &Catalog, oid: u32, pretty: bool) -> Option<String> {
    use crate::catalog::TriggerDef as T;
    let (table, tr) = cat
        .trigger_hosts()
        .find_map(|t| t.triggers.iter().find(|tr| tr.oid == oid).map(|tr| (t, tr)))?;
    let events: Vec<String> = trigger_events(tr.tgtype)
        .map(|(_, e)| match (e, tr.columns.is_empty()) {
            ("UPDATE", false) => {
                let cols: Vec<String> = tr
                    .columns
                    .iter()
                    .filter_map(|&c| table.columns.get(c))
                    .map(|c| quote_ident(c))
                    .collect();
                format!("UPDATE OF {}", cols.join(", "))
            }
            (e, _) => e.to_string(),
        })
        .collect();
    let timing = tr.timing();
    let level = if tr.has(T::ROW) { "ROW" } else { "STATEMENT" };
    let on = match pretty && cat.relation_visible(table.namespace, table.name) {
        true => quote_ident(table.name),
        false => qualified_name(cat, table.namespace, table.name),
    };
    let when = match &tr.when {
        Some(w) if pretty => format!(" WHEN ({w})"),
        Some(w) => format!(" WHEN (({w}))"),
        None => String::new(),
    };
    Some(format!(
        "CREATE TRIGGER {} {timing} {} ON {on} FOR EACH {level}{when} {}",
        quote_ident(&tr.name),
        events.join(" OR "),
        trigger_action(cat, tr)
    ))
}

/// information_schema.triggers rows (one per trigger and event), or
/// triggered_update_columns rows (`triggers` false).
pub fn trigger_rows(cat: &Catalog, triggers: bool) -> Vec<Vec<Value>> {
    use crate::catalog::TriggerDef as T;
    let t = |s: &str| Value::Text(s.to_string());
    let mut rows = Vec::new();
    for table in cat.trigger_hosts() {
        let schema = cat.namespace_name(table.namespace).unwrap_or_default();
        for tr in table.triggers {
            let head = [t("postgres"), t(schema), t(&tr.name)];
            let object = [t("postgres"), t(schema), t(table.name)];
            if !triggers {
                for c in tr.columns.iter().filter_map(|&c| table.columns.get(c)) {
                    let mut row = head.to_vec();
                    row.extend(object.iter().cloned());
                    row.push(t(c));
                    rows.push(row);
                }
                continue;
            }
            // (The SQL standard has no TRUNCATE triggers: not listed.)
            for (bit, e) in trigger_events(tr.tgtype & !T::TRUNCATE) {
                // The trigger's place among those that fire with it.
                let timing = T::ROW | T::BEFORE | T::INSTEAD;
                let same = |o: &&T| o.has(bit) && (o.tgtype & timing) == (tr.tgtype & timing);
                let order =
                    table.triggers.iter().filter(same).take_while(|o| o.name <= tr.name).count();
                let row_level = tr.has(T::ROW);
                let mut row = head.to_vec();
                row.push(t(e));
                row.extend(object.iter().cloned());
                row.push(Value::Int4(order as i32));
                row.push(tr.when.as_ref().map_or(Value::Null, |w| t(&format!("({w})"))));
                row.push(t(&trigger_action(cat, tr)));
                row.push(t(if row_level { "ROW" } else { "STATEMENT" }));
                row.push(t(tr.timing()));
                row.extend([Value::Null, Value::Null]);
                row.push(if row_level { t("OLD") } else { Value::Null });
                row.push(if row_level { t("NEW") } else { Value::Null });
                row.push(Value::Null);
                rows.push(row);
            }
        }
    }
    rows
}
