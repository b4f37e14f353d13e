//! The text Strata keeps for an expression it stores (column defaults and
//! CHECK conditions), written the way PostgreSQL deparses it so that
//! pg_get_expr, pg_get_constraintdef and pg_dump print what PostgreSQL
//! prints, and a dumped script restores to the same text again.
//!
//! sqlparser renders a cast's type in its own upper-case spelling
//! (`'x'::REGCLASS`, `CAST(a AS INT)`); PostgreSQL prints the type's
//! format_type name after `::` (`'x'::regclass`, `(a)::integer`). A condition
//! read back from a dump carries the parentheses pg_get_constraintdef put
//! around it; they are dropped so that text does not grow on every round.
//!
//! NAMES. PostgreSQL stores an expression with OIDs, so its meaning never
//! depends on the search_path of the session that reads it. Strata stores
//! text, so it writes every user object the text names schema-qualified, as
//! the creating session's search path found it: casts to enum types
//! (`::public.mood`), regclass constants and the sequence names of
//! nextval/currval/setval (`'public.t_id_seq'::regclass`), a view's
//! relations (`FROM public.t`), and calls of extension functions
//! (`public.uuid_generate_v4()`). [`display_expr`] and [`display_query`] drop
//! the schema again wherever the reading session's search path finds the
//! object, as PostgreSQL's deparser prints a name.

use std::ops::ControlFlow;

use sqlparser::ast::{self, CastKind, Expr, ObjectName};
use sqltypes::DataType;

use crate::catalog::{Catalog, ObjName, TableDef, TypeDef};
use crate::func::catalog_info::{qualified_name, quote_ident, split_name};

/// PostgreSQL's parse analysis of a stored expression.
mod analyze;
/// PostgreSQL's printing of an analysed expression.
mod print;

/// What a stored expression is to its table, which decides the coercion
/// PostgreSQL put at its top.
#[derive(Debug, Clone, Copy)]
pub enum Role<'a> {
    /// A CHECK condition or index predicate: converted to boolean.
    Condition,
    /// A column's default or generation expression: assigned to the
    /// column's type.
    Value(&'a TypeDef),
    /// An index key expression: as it is.
    Plain,
}

/// A stored expression over table `t`'s columns as PostgreSQL's
/// pg_get_expr, pg_get_constraintdef and pg_get_indexdef print the tree
/// PostgreSQL stores for the same text: operators in parentheses (or, with
/// `pretty`, where precedence needs them), implicit casts shown on
/// operands (`price >= (0)::numeric`), IN lists as `= ANY (ARRAY[...])`.
/// None for an expression outside what the analysis models, which callers
/// print as [`display_expr`] does.
pub fn pg_expr(
    cat: &Catalog,
    t: &TableDef,
    text: &str,
    role: Role<'_>,
    pretty: bool,
) -> Option<String> {
    let columns: Vec<(String, analyze::Ty)> = t
        .columns
        .iter()
        .map(|c| (c.name.clone(), analyze::Ty { oid: c.ty.oid, typmod: c.ty.typmod }))
        .collect();
    analysed(cat, &columns, text, role, pretty)
}

/// [`pg_expr`] over table `t` (None: not a table's), or else the stored
/// text as [`display_expr`] shows it.
pub fn shown_expr(
    cat: &Catalog,
    t: Option<&TableDef>,
    text: &str,
    role: Role<'_>,
    pretty: bool,
) -> String {
    t.and_then(|t| pg_expr(cat, t, text, role, pretty)).unwrap_or_else(|| display_expr(cat, text))
}

fn analysed(
    cat: &Catalog,
    columns: &[(String, analyze::Ty)],
    text: &str,
    role: Role<'_>,
    pretty: bool,
) -> Option<String> {
    let e = crate::parse::expr_text(text).ok()?;
    let a = analyze::Analyzer::new(cat, columns);
    let n = match role {
        Role::Condition => a.boolean(&e)?,
        Role::Plain => a.expr(&e)?,
        Role::Value(ty) => {
            let to = analyze::Ty { oid: ty.oid, typmod: ty.typmod };
            a.coerce(a.expr(&e)?, to, analyze::Ctx::Assignment, false)?
        }
    };
    Some(print::print(cat, &n, pretty))
}

/// What stored text `text` is to table `t` (a column's default or
/// generation expression, a CHECK condition or index predicate, or else
/// an index key), for pg_get_expr, which is given only the text.
pub fn role_of<'a>(t: &'a TableDef, text: &str) -> Role<'a> {
    if let Some(c) = t.columns.iter().find(|c| c.default.as_deref() == Some(text)) {
        return Role::Value(&c.ty);
    }
    let check = t.checks.iter().any(|c| c.expr == text);
    let predicate = t.indexes.iter().any(|i| i.predicate.as_deref() == Some(text));
    match check || predicate {
        true => Role::Condition,
        false => Role::Plain,
    }
}

/// The text to store for `e`.
pub fn stored_text(cat: &Catalog, e: &Expr) -> String {
    let mut e = e.clone();
    while let Expr::Nested(inner) = e {
        e = *inner;
    }
    qualify_types(cat, &mut e);
    normalize_casts(&mut e);
    qualify_regclass(cat, &mut e);
    qualify_functions(cat, &mut e);
    e.to_string()
}

/// The text to store for a column default of type `ty`. A string literal
/// gets a cast to the column's type, as PostgreSQL shows the constant it
/// coerced the literal to (`'ok'::mood`, `'{}'::text[]`); numbers, booleans
/// and blank-padded char, whose casts PostgreSQL prints otherwise, do not.
pub fn stored_default(cat: &Catalog, e: &Expr, ty: &DataType) -> String {
    let text = stored_text(cat, e);
    let literal = matches!(
        e,
        Expr::Value(v) if matches!(v.value, ast::Value::SingleQuotedString(_))
    );
    let plain = ty.is_numeric() || matches!(ty, DataType::Bool | DataType::Char(_));
    if !literal || plain {
        return text;
    }
    format!("{text}::{}", type_sql(cat, &unmodified(ty)))
}

/// Whether a column of type `ty` keeps default `e`: not when it is a NULL
/// constant, which PostgreSQL does not store, as the column's default is
/// NULL anyway; a domain's column keeps it, as it overrides the domain's
/// default.
pub fn keeps_default(e: &Expr, ty: &TypeDef) -> bool {
    let mut e = e;
    loop {
        match e {
            Expr::Nested(x) | Expr::Cast { expr: x, .. } => e = x,
            Expr::Value(v) if v.value == ast::Value::Null => return ty.domain.is_some(),
            _ => return true,
        }
    }
}

/// `ty` as SQL text that names it under any search path: an enum or
/// composite type schema-qualified (`public.mood[]`), the others as
/// format_type writes them (`integer`, `character varying(10)`).
pub fn type_sql(cat: &Catalog, ty: &DataType) -> String {
    let elem = ty.elem().unwrap_or(ty);
    if elem.is_user_defined() {
        if let Some(d) = cat.user_type(elem.oid()) {
            let array = if ty.elem().is_some() { "[]" } else { "" };
            return format!("{}{array}", qualified_name(cat, d.namespace, &d.name));
        }
    }
    ty.to_string()
}

/// `ty` without its modifier (`character varying`, not `(10)`), as a
/// coerced constant's type prints.
pub(crate) fn unmodified(ty: &DataType) -> DataType {
    match ty {
        DataType::Varchar(_) => DataType::Varchar(None),
        DataType::Numeric(_) => DataType::Numeric(None),
        DataType::Array(e) => unmodified(e).array_of(),
        other => other.clone(),
    }
}

/// The text to store for a view's query.
pub fn stored_query(cat: &Catalog, q: &ast::Query) -> String {
    let mut q = q.clone();
    qualify_types(cat, &mut q);
    normalize_casts(&mut q);
    qualify_regclass(cat, &mut q);
    qualify_functions(cat, &mut q);
    let ctes = cte_names(&q);
    let _ = ast::visit_relations_mut(&mut q, |name| {
        if let Ok(n) = crate::bind::obj_name(name) {
            if n.schema.is_some() || !ctes.contains(&n.name) {
                if let Ok(Some(r)) = cat.relation(&n) {
                    *name = name_of(cat, r.namespace(), &n.name);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    qualify_from_functions(cat, &mut q);
    q.to_string()
}

/// Writes SQL functions called in FROM (`FROM pairs(1)`) schema-qualified.
fn qualify_from_functions(cat: &Catalog, q: &mut ast::Query) {
    if cat.functions.is_empty() {
        return;
    }
    struct V<'a>(&'a Catalog);
    impl ast::VisitorMut for V<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &mut ast::TableFactor) -> ControlFlow<()> {
            let name = match f {
                ast::TableFactor::Table { name, args: Some(_), .. }
                | ast::TableFactor::Function { name, .. } => name,
                _ => return ControlFlow::Continue(()),
            };
            if let (1, Ok(n)) = (name.0.len(), crate::bind::object_name(name)) {
                if let Some(ns) = call_schema(self.0, &n) {
                    *name = name_of(self.0, ns, &n);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::VisitMut::visit(q, &mut V(cat));
}

/// The names of the CTEs a query defines (at any level): its relations of
/// those names are not catalog relations.
fn cte_names(q: &ast::Query) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(q: &ast::Query, out: &mut Vec<String>) {
        if let Some(w) = &q.with {
            for c in &w.cte_tables {
                out.push(crate::bind::ident(&c.alias.name));
                walk(&c.query, out);
            }
        }
    }
    walk(q, &mut out);
    out
}

/// An object name `schema.name` as sqlparser identifiers.
fn name_of(cat: &Catalog, ns: u32, name: &str) -> ObjectName {
    let schema = cat.namespace_name(ns).unwrap_or("???");
    ObjectName::from(vec![ident_of(schema), ident_of(name)])
}

/// An identifier printed as quote_ident prints `name`.
pub(crate) fn ident_of(name: &str) -> ast::Ident {
    match quote_ident(name) == name {
        true => ast::Ident::new(name),
        false => ast::Ident::with_quote('"', name),
    }
}

/// The enum type a cast names, if it names one: (its type name, whether
/// the cast is to an array of it).
fn enum_cast_target(dt: &mut ast::DataType) -> Option<&mut ObjectName> {
    match dt {
        ast::DataType::Custom(n, _) => Some(n),
        ast::DataType::Array(ast::ArrayElemTypeDef::SquareBracket(inner, _))
        | ast::DataType::Array(ast::ArrayElemTypeDef::AngleBracket(inner)) => {
            enum_cast_target(inner)
        }
        _ => None,
    }
}

/// Writes casts to enum types with the type's schema.
fn qualify_types<V: ast::VisitMut>(cat: &Catalog, node: &mut V) {
    if cat.user_types.is_empty() {
        return;
    }
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::Cast { data_type, .. } = x {
            if crate::bind::data_type(data_type).is_err() {
                if let Some(n) = enum_cast_target(data_type) {
                    if let Ok(on) = crate::bind::obj_name(n) {
                        if let Ok(Some((d, _))) = cat.user_type_named(&on) {
                            *n = name_of(cat, d.namespace, &d.name);
                        }
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Writes calls of installed extensions' functions with their schema.
fn qualify_functions<V: ast::VisitMut>(cat: &Catalog, node: &mut V) {
    if cat.extensions.is_empty() && cat.functions.is_empty() {
        return;
    }
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::Function(f) = x {
            if let (1, Ok(name)) = (f.name.0.len(), crate::bind::object_name(&f.name)) {
                if let Some(ns) = call_schema(cat, &name) {
                    f.name = name_of(cat, ns, &name);
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// The schema an unqualified call of `name` finds: an installed
/// extension's function, else a SQL function's (built-ins come first, and
/// are never qualified).
fn call_schema(cat: &Catalog, name: &str) -> Option<u32> {
    crate::extensions::call_schema(cat, name).or_else(|| {
        if crate::builtins::procs().iter().any(|p| p.name == name) {
            return None;
        }
        cat.path
            .relations
            .iter()
            .copied()
            .find(|ns| cat.functions.contains_key(&(*ns, name.to_string())))
    })
}

/// Writes regclass constants, and the sequence names nextval, currval and
/// setval are given as text, as `'schema.name'::regclass`.
fn qualify_regclass<V: ast::VisitMut>(cat: &Catalog, node: &mut V) {
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::Function(f) = x {
            let seq_fn = crate::bind::object_name(&f.name)
                .is_ok_and(|n| matches!(n.as_str(), "nextval" | "currval" | "setval"));
            if let (true, ast::FunctionArguments::List(list)) = (seq_fn, &mut f.args) {
                if let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))) =
                    list.args.first_mut()
                {
                    if string_literal(a).is_some() {
                        let lit = a.clone();
                        *a = Expr::Cast {
                            kind: CastKind::DoubleColon,
                            expr: Box::new(lit),
                            data_type: ast::DataType::Custom(
                                ObjectName::from(vec![ast::Ident::new("regclass")]),
                                vec![],
                            ),
                            format: None,
                        };
                    }
                }
            }
        }
        if let Some(lit) = regclass_literal(x) {
            let (schema, name) = split_name(lit);
            let n = ObjName { schema, name };
            if let Ok(Some(r)) = cat.relation(&n) {
                *lit = qualified_name(cat, r.namespace(), &n.name);
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

fn string_literal(e: &Expr) -> Option<&String> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// The text of a `'...'::regclass` constant.
fn regclass_literal(e: &mut Expr) -> Option<&mut String> {
    let Expr::Cast { expr, data_type, .. } = e else { return None };
    let regclass = match data_type {
        ast::DataType::Regclass => true,
        ast::DataType::Custom(n, _) => {
            n.0.len() == 1 && n.to_string().eq_ignore_ascii_case("regclass")
        }
        _ => false,
    };
    if !regclass {
        return None;
    }
    match &mut **expr {
        Expr::Value(v) => match &mut v.value {
            ast::Value::SingleQuotedString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// A stored expression as PostgreSQL's deparser prints it to this session:
/// the schema dropped from names the search path finds.
pub fn display_expr(cat: &Catalog, text: &str) -> String {
    let Ok(mut e) = crate::parse::expr_text(text) else { return text.to_string() };
    match unqualify(cat, &mut e) {
        true => {
            normalize_casts(&mut e);
            e.to_string()
        }
        false => text.to_string(),
    }
}

/// A stored view query as pg_get_viewdef prints it to this session.
pub fn display_query(cat: &Catalog, text: &str) -> String {
    let Ok(mut q) = crate::parse::query_text(text) else { return text.to_string() };
    let mut changed = unqualify(cat, &mut q);
    let _ = ast::visit_relations_mut(&mut q, |name| {
        if let Ok(ObjName { schema: Some(s), name: n }) = crate::bind::obj_name(name) {
            let visible = |ns: u32| {
                cat.relation_visible(ns, &n)
                    || (cat.functions.contains_key(&(ns, n.clone()))
                        && call_schema(cat, &n) == Some(ns))
            };
            if cat.namespace_oid(&s).is_some_and(visible) {
                *name = ObjectName::from(vec![ident_of(&n)]);
                changed = true;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let out = match changed {
        true => {
            normalize_casts(&mut q);
            q.to_string()
        }
        false => text.to_string(),
    };
    // GROUP BY DISTINCT is kept as a marker call sqlparser can print.
    let marker = format!("GROUP BY \"{}\"(), ", crate::select::grouping::GROUP_DISTINCT);
    out.replace(&marker, "GROUP BY DISTINCT ")
}

/// Drops the schema from enum casts, regclass constants and extension
/// function calls the search path finds; true if anything changed.
fn unqualify<V: ast::VisitMut>(cat: &Catalog, node: &mut V) -> bool {
    let mut changed = false;
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::Function(f) = x {
            if let Ok(ObjName { schema: Some(s), name }) = crate::bind::obj_name(&f.name) {
                let found = call_schema(cat, &name);
                if found.is_some() && found == cat.namespace_oid(&s) {
                    f.name = ObjectName::from(vec![ident_of(&name)]);
                    changed = true;
                }
            }
        }
        if let Some(lit) = regclass_literal(x) {
            if let (Some(s), name) = split_name(lit) {
                if cat.namespace_oid(&s).is_some_and(|ns| cat.relation_visible(ns, &name)) {
                    *lit = quote_ident(&name);
                    changed = true;
                }
            }
        }
        if let Expr::Cast { data_type, .. } = x {
            if let Some(n) = enum_cast_target(data_type) {
                if let Ok(ObjName { schema: Some(s), name }) = crate::bind::obj_name(n) {
                    if cat.namespace_oid(&s).is_some_and(|ns| cat.type_visible(ns, &name)) {
                        *n = ObjectName::from(vec![ident_of(&name)]);
                        changed = true;
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
    changed
}

/// A new (schema, name) for a schema-qualified relation or type name, or
/// None to keep it.
pub type Renaming<'a> = &'a (dyn Fn(&ObjName) -> Option<(String, String)> + Sync);

/// Renames what stored text names with its schema (module doc): relations
/// in FROM, regclass constants and enum casts, and with `functions` (a
/// schema renamed) the calls of extension functions. A relation whose own
/// name changes keeps the old one as its alias, so the qualified column
/// names of the query still find it. True if anything changed.
pub fn rename_names<V: ast::VisitMut>(node: &mut V, to: Renaming<'_>, functions: bool) -> bool {
    struct Renamer<'a> {
        to: Renaming<'a>,
        functions: bool,
        changed: bool,
    }
    impl ast::VisitorMut for Renamer<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &mut ast::TableFactor) -> ControlFlow<()> {
            let ast::TableFactor::Table { name, alias, args: None, .. } = f else {
                return ControlFlow::Continue(());
            };
            // An unqualified name in a stored query is a CTE's.
            let Ok(old @ ObjName { schema: Some(_), .. }) = crate::bind::obj_name(name) else {
                return ControlFlow::Continue(());
            };
            if let Some((schema, rel)) = (self.to)(&old) {
                *name = ObjectName::from(vec![ident_of(&schema), ident_of(&rel)]);
                if alias.is_none() && rel != old.name {
                    *alias = Some(ast::TableAlias {
                        explicit: false,
                        name: ident_of(&old.name),
                        columns: vec![],
                        at: None,
                    });
                }
                self.changed = true;
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, x: &mut Expr) -> ControlFlow<()> {
            if let (Expr::Function(f), true) = (&mut *x, self.functions) {
                if let Ok(old @ ObjName { schema: Some(_), .. }) = crate::bind::obj_name(&f.name) {
                    if let Some((s, n)) = (self.to)(&old) {
                        f.name = ObjectName::from(vec![ident_of(&s), ident_of(&n)]);
                        self.changed = true;
                    }
                }
            }
            if let Some(lit) = regclass_literal(x) {
                if let (schema @ Some(_), name) = split_name(lit) {
                    if let Some((s, n)) = (self.to)(&ObjName { schema, name }) {
                        *lit = format!("{}.{}", quote_ident(&s), quote_ident(&n));
                        self.changed = true;
                    }
                }
            }
            if let Expr::Cast { data_type, .. } = x {
                if let Some(n) = enum_cast_target(data_type) {
                    if let Ok(old @ ObjName { schema: Some(_), .. }) = crate::bind::obj_name(n) {
                        if let Some((s, t)) = (self.to)(&old) {
                            *n = ObjectName::from(vec![ident_of(&s), ident_of(&t)]);
                            self.changed = true;
                        }
                    }
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut r = Renamer { to, functions, changed: false };
    let _ = node.visit(&mut r);
    if r.changed {
        normalize_casts(node);
    }
    r.changed
}

/// Stored expression text with [`rename_names`] applied, if it changed.
pub fn rename_in_expr(text: &str, to: Renaming<'_>, functions: bool) -> Option<String> {
    let mut e = crate::parse::expr_text(text).ok()?;
    rename_names(&mut e, to, functions).then(|| e.to_string())
}

/// Rewrites every cast in `node` to `operand::typename`, and puts the
/// operand of a prefix operator that is itself one in parentheses (`- -1`
/// would print as `--1`, a comment).
pub(crate) fn normalize_casts<V: ast::VisitMut>(node: &mut V) {
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::UnaryOp { expr, .. } = x {
            if matches!(**expr, Expr::UnaryOp { .. }) {
                **expr = Expr::Nested(expr.clone());
            }
        }
        if let Expr::Cast { kind, expr, data_type, format: None } = x {
            if matches!(kind, CastKind::Cast | CastKind::DoubleColon) {
                if let Ok(ty) = crate::bind::data_type(data_type) {
                    *data_type = ast::DataType::Custom(
                        ObjectName::from(vec![ast::Ident::new(ty.to_string())]),
                        vec![],
                    );
                    if !is_operand(expr) {
                        **expr = Expr::Nested(expr.clone());
                    }
                    *kind = CastKind::DoubleColon;
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Whether `e` can stand before `::` without parentheses.
fn is_operand(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Value(_)
            | Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::Function(_)
            | Expr::Array(_)
            | Expr::Nested(_)
            | Expr::Cast { kind: CastKind::DoubleColon, .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(sql: &str) -> String {
        let e = crate::parse::expr_text(sql).expect("expression");
        stored_text(&Catalog::default(), &e)
    }

    #[test]
    fn casts_print_postgres_type_names() {
        assert_eq!(text("nextval('s'::REGCLASS)"), "nextval('s'::regclass)");
        assert_eq!(text("'a'::varchar(10)"), "'a'::character varying(10)");
        assert_eq!(text("CAST(a + 1 AS int)"), "(a + 1)::integer");
        assert_eq!(text("'{}'::text[]"), "'{}'::text[]");
        assert_eq!(text("'1'::int8::numeric(12,2)"), "'1'::bigint::numeric(12,2)");
    }

    #[test]
    fn outer_parentheses_are_dropped_once_stored() {
        assert_eq!(text("((amount >= 0))"), "amount >= 0");
        assert_eq!(text("(a > 0) AND (b > 0)"), "(a > 0) AND (b > 0)");
        // Stored text reads back to itself.
        for s in ["nextval('s'::regclass)", "(a + 1)::integer", "amount >= 0"] {
            assert_eq!(text(s), s);
        }
    }
}
