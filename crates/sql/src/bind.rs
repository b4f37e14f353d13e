//! The binder: resolves names and types in a parsed query and builds a [`Plan`].
//!
//! Binding works against one catalog snapshot. Column names resolve through a
//! [`Scope`] (the columns the current FROM clause produces); literals without
//! a type (`'abc'`, `$1` with no declared type) start as `unknown` and take the
//! type of what they are compared with, assigned to, or passed to, as
//! PostgreSQL's type resolution does. Parameters whose type stays unknown
//! become text.

use sqlparser::ast;
use sqltypes::{cast, DataType, Value};

use crate::catalog::{Catalog, ObjName};
use crate::error::Result;
use crate::expr::{BinOp, Expr};
use crate::plan::{AggCall, AggFunc, Column, Correlated, Plan, Spread, SubqKind};
use crate::{bail, err, func};

/// Function calls, aggregates and window calls.
mod functions;
/// Operators, coercions and casts.
mod operators;
/// Uncorrelated and correlated subqueries.
mod subquery;
// ARRAY[...], subscripts, ANY/ALL, array operators.
mod arrays;
/// Calls of SQL functions (CREATE FUNCTION ... LANGUAGE sql).
pub(crate) mod user_functions;

pub use functions::{contains_aggregate, contains_grouping, function_args, is_aggregate};

/// Nesting limit for expressions, so hostile input cannot overflow the stack.
pub const MAX_DEPTH: usize = 1500;

/// What binding a query named, recorded while [`Binder::trace`] is set: a
/// view's dependencies, and where in its text each name sits so DDL can
/// rewrite the stored query (see `ddl/view_deps.rs`).
#[derive(Debug, Default)]
pub struct Trace {
    /// Table columns named: where the name is (its last part), the table's
    /// OID and the column's number (1-based). Columns a `*` expanded to are
    /// recorded with an empty span.
    pub columns: Vec<(sqlparser::tokenizer::Span, u32, i16)>,
    /// Relations (tables, views, sequences) read, by OID.
    pub relations: Vec<u32>,
    /// Each `*` and `t.*` of a select list.
    pub wildcards: Vec<Wildcard>,
}

/// Where a `*` of a select list is, and the columns it stood for, as
/// (qualifier, name).
pub type Wildcard = (sqlparser::tokenizer::Span, Vec<(Option<String>, String)>);

/// One column visible to expressions.
#[derive(Debug, Clone)]
pub struct ScopeCol {
    /// Table name or alias qualifying the column.
    pub qualifier: Option<String>,
    /// Column name.
    pub name: String,
    /// Type.
    pub ty: DataType,
    /// Source table OID (0 if computed).
    pub table_oid: u32,
    /// Source column number (1-based; 0 if computed).
    pub column_id: i16,
    /// How the column can be named.
    pub reach: Reach,
}

/// How a scope column can be named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// By name, qualified or not, and by `*`.
    Full,
    /// Merged away by `JOIN ... USING` or NATURAL JOIN: only qualified, and
    /// not by `*` (the merged column stands for it).
    Qualified,
    /// A system column (a catalog's tableoid): by name, not by `*` or `t.*`.
    System,
}

/// An enclosing query's row as a subquery or LATERAL item sees it, and
/// what the expressions bound inside read of it and of the rows around it.
#[derive(Debug, Clone, Default)]
pub struct OuterScope {
    /// The row's columns.
    pub scope: Scope,
    /// The columns references resolved to (repeats possible).
    pub used: Vec<usize>,
    /// Set when a reference resolved to a row further out: what is bound
    /// inside reads it too.
    pub reads_further: bool,
}

impl OuterScope {
    /// A scope whose references are yet to be seen.
    pub fn new(scope: Scope) -> Self {
        OuterScope { scope, used: Vec::new(), reads_further: false }
    }

    /// True if what was bound inside reads this row or one further out.
    pub fn read(&self) -> bool {
        !self.used.is_empty() || self.reads_further
    }
}

/// The columns of the row an expression is evaluated against.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Columns in row order.
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    /// The columns' types, in row order.
    pub fn types(&self) -> Vec<DataType> {
        self.cols.iter().map(|c| c.ty.clone()).collect()
    }

    fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<usize> {
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            let q_ok = match qualifier {
                Some(q) => c.qualifier.as_deref() == Some(q),
                None => c.reach != Reach::Qualified,
            };
            if q_ok && c.name == name {
                if found.is_some() {
                    bail!(AmbiguousColumn, "column reference \"{name}\" is ambiguous");
                }
                found = Some(i);
            }
        }
        match (found, qualifier) {
            (Some(i), _) => Ok(i),
            (None, Some(q)) if !self.cols.iter().any(|c| c.qualifier.as_deref() == Some(q)) => {
                bail!(UndefinedTable, "missing FROM-clause entry for table \"{q}\"")
            }
            (None, Some(q)) => bail!(UndefinedColumn, "column {q}.{name} does not exist"),
            (None, None) => bail!(UndefinedColumn, "column \"{name}\" does not exist"),
        }
    }
}

/// The (zone, value) arguments of a timezone(zone, value) call.
fn timezone_call(e: &ast::Expr) -> Option<[&ast::Expr; 2]> {
    let ast::Expr::Function(f) = e else { return None };
    if f.name.0.len() != 1 || object_name(&f.name).ok()? != "timezone" {
        return None;
    }
    let ast::FunctionArguments::List(l) = &f.args else { return None };
    match l.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(z)), ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(v))] => {
            Some([z, v])
        }
        _ => None,
    }
}

/// The items of a row constructor, `ROW(a, b)` or `(a, b)`; None for
/// any other expression.
pub fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Function(f)
            if f.name.0.len() == 1 && object_name(&f.name).is_ok_and(|n| n == "row") =>
        {
            match &f.args {
                ast::FunctionArguments::List(l) => l
                    .args
                    .iter()
                    .map(|a| match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
                        _ => None,
                    })
                    .collect(),
                ast::FunctionArguments::None => Some(vec![]),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The whole-row reference `name` (a FROM item's name used as a value):
/// a record of the item's columns, each read through `read`. None if no
/// FROM item has that name.
fn whole_row(scope: &Scope, name: &str, read: impl Fn(usize) -> Expr) -> Option<(Expr, DataType)> {
    let cols: Vec<(usize, &ScopeCol)> = scope
        .cols
        .iter()
        .enumerate()
        .filter(|(_, c)| c.qualifier.as_deref() == Some(name) && c.reach != Reach::System)
        .collect();
    if cols.is_empty() {
        return None;
    }
    let fields = cols.iter().map(|(_, c)| (c.name.clone(), c.ty.clone())).collect();
    let ty = sqltypes::RecordType::new(fields);
    let values = cols.iter().map(|(i, _)| read(*i)).collect();
    Some((Expr::Row(ty.clone(), values), DataType::Record(ty)))
}

/// How the marker standing for a functionally dependent group column in
/// [`AggState::group_asts`] begins (no written expression matches it).
const DEPENDENT: &str = "\u{0}dependent column ";

/// State for aggregate binding: grouping expressions and collected aggregates.
#[derive(Debug, Default)]
pub struct AggState {
    /// GROUP BY syntax trees, to match select-list expressions against.
    pub group_asts: Vec<ast::Expr>,
    /// Bound GROUP BY expressions and types.
    pub group: Vec<(Expr, DataType)>,
    /// Aggregates found so far.
    pub aggs: Vec<AggCall>,
    agg_asts: Vec<ast::Expr>,
    /// The grouping sets, as positions in `group`; None for a plain GROUP
    /// BY.
    pub sets: Option<Vec<Vec<usize>>>,
    /// Where among `aggs` the hidden aggregate yielding each row's
    /// grouping set sits, once GROUPING needs it.
    set_slot: Option<usize>,
}

impl AggState {
    /// Groups also by the columns that grouping by a table's primary key
    /// determines (PostgreSQL's functional dependency): every column of a
    /// FROM item over a table whose primary key columns are all grouped
    /// may appear outside an aggregate. They become extra group keys,
    /// which split no group.
    ///
    /// With grouping sets only the expressions every set groups by count,
    /// and the dependent columns join every set.
    pub fn add_dependent_columns(&mut self, catalog: &Catalog, scope: &Scope) {
        let in_every_set =
            |k: usize| self.sets.as_ref().is_none_or(|sets| sets.iter().all(|s| s.contains(&k)));
        let grouped = |i: usize| {
            self.group
                .iter()
                .enumerate()
                .any(|(k, (g, _))| *g == Expr::Column(i) && in_every_set(k))
        };
        let mut extra = Vec::new();
        for (i, col) in scope.cols.iter().enumerate() {
            if col.table_oid == 0 || grouped(i) {
                continue;
            }
            let Some(t) = catalog.table_by_oid(col.table_oid) else { continue };
            let same = |c: &ScopeCol| c.table_oid == col.table_oid && c.qualifier == col.qualifier;
            let pk_grouped = !t.primary_key.is_empty()
                && t.primary_key.iter().all(|&pk| {
                    scope
                        .cols
                        .iter()
                        .enumerate()
                        .any(|(j, c)| same(c) && c.column_id as usize == pk + 1 && grouped(j))
                });
            if pk_grouped {
                extra.push((Expr::Column(i), col.ty.clone()));
            }
        }
        for (x, ty) in extra {
            let position = self.group.len();
            let marker = format!("{DEPENDENT}{position}");
            self.group_asts.push(ast::Expr::Identifier(ast::Ident::with_quote('"', marker)));
            self.group.push((x, ty));
            for set in self.sets.iter_mut().flatten() {
                set.push(position);
            }
        }
    }

    /// True if group expression `p` is a column grouped only because the
    /// primary key is (no GROUP BY names it).
    pub fn is_dependent(&self, p: usize) -> bool {
        matches!(&self.group_asts[p], ast::Expr::Identifier(i) if i.value.starts_with(DEPENDENT))
    }

    /// The position among the aggregates of the hidden one that yields
    /// each row's grouping set, added on first use.
    pub fn set_position(&mut self) -> usize {
        if let Some(p) = self.set_slot {
            return p;
        }
        let p = self.add_hidden(AggCall {
            func: AggFunc::GroupingSet,
            arg: None,
            distinct: false,
            filter: None,
            extra: None,
            order: Vec::new(),
            ty: DataType::Int4,
        });
        self.set_slot = Some(p);
        p
    }

    /// Adds an aggregate that no SQL text names (it never matches a
    /// written aggregate); returns its position among the aggregates.
    pub fn add_hidden(&mut self, call: AggCall) -> usize {
        let n = self.aggs.len();
        self.aggs.push(call);
        let marker = ast::Ident::with_quote('"', format!("\u{0}hidden aggregate {n}"));
        self.agg_asts.push(ast::Expr::Identifier(marker));
        n
    }
}

/// Binds expressions and queries against a catalog.
pub struct Binder<'a> {
    /// The catalog snapshot.
    pub catalog: &'a Catalog,
    /// Parameter types; grows as `$n` are seen, `Unknown` until inferred.
    pub params: Vec<DataType>,
    /// Scopes of enclosing queries, innermost last (LATERAL and correlated
    /// references resolve here when the local scope has no match).
    pub outer: Vec<OuterScope>,
    /// Uncorrelated subqueries found so far; each query level drains its own
    /// (from its mark on) into a `Plan::Init`.
    pub subqueries: Vec<(Plan, crate::plan::SubqKind)>,
    /// Where the current query level's subqueries start in `subqueries`.
    pub subq_marks: Vec<usize>,
    /// WITH queries in scope, innermost last: name -> (plan, columns).
    pub ctes: Vec<(String, Plan, Vec<Column>)>,
    /// Set while planning a SELECT that is one side of a set operation: its
    /// untyped outputs (a bare NULL or string literal) stay unknown so the
    /// set operation can give them the other side's type, as in PostgreSQL.
    /// The SELECT clears it first, so its own subqueries are unaffected.
    pub set_op_leaf: bool,
    /// Where correlated subqueries may appear now (the WHERE clause or the
    /// select list of a query without aggregates), else None.
    pub corr: Option<CorrCtx>,
    /// Correlated subqueries found so far; each query level drains its own
    /// (from `CorrCtx::mark` on) into a `Plan::Apply`.
    pub correlated: Vec<Correlated>,
    /// The sub-SELECTs of `SET (a, b) = (SELECT ...)` bound so far, by the
    /// parser's number (see [`crate::parse::MULTI_ASSIGN`]): their row's
    /// expression and column types.
    pub multi_assign: Vec<(i64, Expr, Vec<DataType>)>,
    /// Where window functions may appear now: the index in `windows` where
    /// the current query level's calls start (see `window.rs`), else None.
    pub win: Option<usize>,
    /// Window calls found so far; each query level drains its own.
    pub windows: Vec<crate::window::WindowCall>,
    /// The current query level's WINDOW clause (`WINDOW w AS (...)`).
    pub named_windows: Vec<(String, ast::WindowSpec)>,
    /// True while a window call's arguments, PARTITION BY and ORDER BY are
    /// bound (window calls cannot nest).
    pub in_window: bool,
    /// Work-table ids handed out so far (to recursive CTEs, and to WITH
    /// queries that write).
    pub work_tables: usize,
    /// The work tables the statement reads: a writing WITH query nothing
    /// reads runs after the main statement.
    pub work_read: Vec<usize>,
    /// Views being expanded inside one another (bounded).
    pub view_depth: usize,
    /// Set to record what the query names (a view's own query only: a view
    /// it reads is planned with the trace put aside).
    pub trace: Option<Trace>,
    /// The locking clauses (FOR UPDATE ...) of the query whose select is
    /// planned next (set by the query, taken by its select).
    pub row_locks: Vec<ast::LockClause>,
    /// While a locking select plans its FROM: which tables scan keyed.
    pub keyed: Option<crate::select::KeyedScans>,
    /// The privileges the statement needs, checked once it is planned.
    pub checks: Vec<crate::acl::Check>,
    /// Whose privileges the relations read now are checked with: the
    /// owner of the view being expanded, else None (the current user).
    pub check_as: Option<String>,
    /// Binding an expression the catalog stores (a default, CHECK or index
    /// key), which may not call SQL functions: it is bound again at every
    /// catalog load, and a function changed or dropped later would break
    /// that.
    pub stored: bool,
    /// SQL function calls being expanded, one inside another.
    pub fn_depth: usize,
    /// Set while a VOLATILE function's call is bound as a subquery: that
    /// subquery runs for every row of the enclosing query, as the call
    /// would, even when its arguments read no column.
    pub per_row_call: bool,
    depth: usize,
}

/// Where the current query level's correlated subqueries go: their results
/// are appended to rows of `width` columns, starting at `correlated[mark]`.
#[derive(Debug, Clone, Copy)]
pub struct CorrCtx {
    /// Index in [`Binder::correlated`] of this level's first subquery.
    pub mark: usize,
    /// Columns of the rows the subqueries are applied to.
    pub width: usize,
}

/// What a `$n` parameter written for a variable's bare name says of it.
#[derive(Debug, Clone, Copy)]
pub enum Variable<'a> {
    /// A PL/pgSQL variable (`$n?name`): a column of the same name makes
    /// the reference ambiguous.
    Ambiguous(&'a str),
    /// A SQL function's parameter (`$n!name`): a column of the same name
    /// wins.
    Shadowed(&'a str),
}

/// A parameter placeholder's number, and the variable name PL/pgSQL
/// wrote after it (`$3?id`) if any.
pub fn placeholder(p: &str) -> Option<(usize, Option<Variable<'_>>)> {
    let rest = p.strip_prefix('$')?;
    let end = rest.find(['?', '!']).unwrap_or(rest.len());
    let n = rest[..end].parse().ok()?;
    let var = match rest[end..].chars().next() {
        Some('?') => Some(Variable::Ambiguous(&rest[end + 1..])),
        Some('!') => Some(Variable::Shadowed(&rest[end + 1..])),
        _ => None,
    };
    Some((n, var))
}

/// Lower-cases an unquoted identifier (quoted ones keep their case).
pub fn ident(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// The last part of an object name (`pg_catalog.count` -> `count`), folded.
pub fn object_name(n: &ast::ObjectName) -> Result<String> {
    match n.0.last().and_then(|p| p.as_ident()) {
        Some(i) => Ok(ident(i)),
        None => bail!(SyntaxError, "invalid name {n}"),
    }
}

/// A possibly qualified object name, folded (`db.s.t` keeps `s.t`).
pub fn obj_name(n: &ast::ObjectName) -> Result<ObjName> {
    if n.0.len() > 3 {
        bail!(SyntaxError, "improper qualified name (too many dotted names): {n}");
    }
    Ok(ObjName { schema: object_schema(n), name: object_name(n)? })
}

/// The schema part of a qualified name, if any.
pub fn object_schema(n: &ast::ObjectName) -> Option<String> {
    if n.0.len() >= 2 {
        n.0[n.0.len() - 2].as_ident().map(ident)
    } else {
        None
    }
}

/// The SQL value functions: key words PostgreSQL's grammar reads as calls
/// without parentheses (sqlparser reads some as names).
pub(crate) const SQL_VALUE_FUNCTIONS: &[&str] = &[
    "current_user",
    "current_role",
    "session_user",
    "user",
    "current_schema",
    "current_catalog",
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
];

/// Checks a COLLATE clause's collation and gives its pg_collation OID:
/// text compares bytewise, which is what the C collation (and "default"
/// on a C-locale database) means; others are refused.
pub fn collation(c: &ast::ObjectName) -> Result<u32> {
    let written = c.to_string().replace('"', "");
    let name = match written.get(..11) {
        Some(p) if p.eq_ignore_ascii_case("pg_catalog.") => &written[11..],
        _ => &written,
    };
    match crate::system::collation_oid(name) {
        Some(oid) => Ok(oid),
        None => bail!(FeatureNotSupported, "collation \"{written}\" is not supported yet"),
    }
}

/// The collation a column of type `ty` declared `COLLATE c` has, when it
/// is not the type's own: pg_collation's OID of "C" or "POSIX" (None for
/// "default"). 42804 for a type without collations.
pub fn column_collation(c: &ast::ObjectName, ty: &DataType) -> Result<Option<u32>> {
    let oid = collation(c)?;
    if crate::system::collation(ty) == 0 {
        bail!(DatatypeMismatch, "collations are not supported by type {ty}");
    }
    Ok((oid != 100).then_some(oid))
}

/// Converts a built-in SQL type name to a [`DataType`].
pub fn data_type(t: &ast::DataType) -> Result<DataType> {
    resolve_type(t, None)
}

/// Converts a SQL type name to a [`DataType`], the catalog's enum types
/// included.
pub fn catalog_type(cat: &Catalog, t: &ast::DataType) -> Result<DataType> {
    resolve_type(t, Some(cat))
}

/// The type of a table column being defined: a catalog type a row can
/// store (not yet a row type), or a domain.
pub fn column_type(cat: &Catalog, t: &ast::DataType) -> Result<crate::catalog::TypeDef> {
    if let Some(d) = domain_of(cat, t)? {
        return Ok(crate::catalog::TypeDef::of_domain(&d));
    }
    let ty = catalog_type(cat, t)?;
    if matches!(ty.elem().unwrap_or(&ty), DataType::Record(r) if r.named.is_none()) {
        bail!(FeatureNotSupported, "columns of composite type {t} are not supported yet");
    }
    let def = crate::catalog::TypeDef::from_type(&ty);
    Ok(match time_precision(t) {
        Some(p) => def.with_time_precision(p),
        None => def,
    })
}

/// The precision `timestamp(p)`, `time(p)` or `interval(p)` gives (at
/// most 6, as PostgreSQL reduces it).
pub fn time_precision(t: &ast::DataType) -> Option<u8> {
    match t {
        ast::DataType::Timestamp(Some(p), _)
        | ast::DataType::Time(Some(p), _)
        | ast::DataType::Interval { precision: Some(p), .. } => Some((*p).min(6) as u8),
        _ => None,
    }
}

/// The domain a type name names, if it names one (a built-in type's name
/// finds the built-in first, as pg_catalog comes first on the path).
pub fn domain_of(
    cat: &Catalog,
    t: &ast::DataType,
) -> Result<Option<std::sync::Arc<crate::catalog::Domain>>> {
    let ast::DataType::Custom(name, _) = t else { return Ok(None) };
    // Every cast asks: most catalogs have no user types at all.
    if cat.user_types.is_empty() {
        return Ok(None);
    }
    let n = obj_name(name)?;
    if n.schema.is_none() && data_type(t).is_ok() {
        return Ok(None);
    }
    cat.domain_named(&n)
}

/// `ALL (x)`, `ANY (x)` or `SOME (x)` as a LIKE pattern (which sqlparser
/// reads as a call): x and whether it is ALL.
fn like_quantifier(pattern: &ast::Expr) -> Option<(&ast::Expr, bool)> {
    let ast::Expr::Function(f) = pattern else { return None };
    let name = f.name.0.last()?.as_ident()?.value.to_lowercase();
    let ast::FunctionArguments::List(list) = &f.args else { return None };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] = list.args.as_slice() else {
        return None;
    };
    match name.as_str() {
        "all" if f.name.0.len() == 1 => Some((x, true)),
        "any" | "some" if f.name.0.len() == 1 => Some((x, false)),
        _ => None,
    }
}

fn resolve_type(t: &ast::DataType, cat: Option<&Catalog>) -> Result<DataType> {
    use ast::DataType as A;
    let len = |l: &Option<ast::CharacterLength>| match l {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => Some(*length as u32),
        _ => None,
    };
    Ok(match t {
        A::Bool | A::Boolean => DataType::Bool,
        A::SmallInt(_) | A::Int2(_) => DataType::Int2,
        A::Int(_) | A::Integer(_) | A::Int4(_) => DataType::Int4,
        A::BigInt(_) | A::Int8(_) => DataType::Int8,
        A::Float8 | A::DoublePrecision | A::Double(_) => DataType::Float8,
        A::Float(ast::ExactNumberInfo::Precision(p)) if *p <= 24 => DataType::Float4,
        A::Real | A::Float4 => DataType::Float4,
        A::Float(_) => DataType::Float8,
        A::Time(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => DataType::TimeTz,
        A::Time(..) => DataType::Time,
        A::Interval { .. } => DataType::Interval,
        A::Uuid => DataType::Uuid,
        A::JSON => DataType::Json,
        A::JSONB => DataType::Jsonb,
        A::Numeric(info) | A::Decimal(info) | A::Dec(info) => match info {
            ast::ExactNumberInfo::None => DataType::Numeric(None),
            ast::ExactNumberInfo::Precision(p) => DataType::Numeric(Some((*p as u32, 0))),
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => {
                DataType::Numeric(Some((*p as u32, (*s).max(0) as u32)))
            }
        },
        A::Text | A::String(_) => DataType::Text,
        A::Varchar(l) | A::CharacterVarying(l) | A::CharVarying(l) => DataType::Varchar(len(l)),
        A::Char(l) | A::Character(l) => DataType::Char(len(l).unwrap_or(1)),
        A::Timestamp(_, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            DataType::TimestampTz
        }
        A::Timestamp(..) => DataType::Timestamp,
        A::Date => DataType::Date,
        A::Bytea => DataType::Bytea,
        A::Regclass => DataType::Reg(sqltypes::RegKind::Class),
        A::Array(
            ast::ArrayElemTypeDef::SquareBracket(inner, _)
            | ast::ArrayElemTypeDef::Qualified(inner, _)
            | ast::ArrayElemTypeDef::AngleBracket(inner),
        ) => {
            let elem = resolve_type(inner, cat)?;
            if elem == DataType::Unknown {
                bail!(UndefinedObject, "type \"unknown[]\" does not exist");
            }
            elem.array_of()
        }
        A::Custom(name, _) => {
            let n = obj_name(name)?;
            // pg_catalog's types need no schema or `pg_catalog.`.
            let system = n.schema.as_deref().is_none_or(|s| s == "pg_catalog");
            match n.name.as_str() {
                "int" if system => DataType::Int4,
                // pg_type's names (`timestamptz`, `bpchar`, `regclass`,
                // quoted `"char"`, `_int4` for int4[]).
                other => {
                    let (base, array) = match other.strip_prefix('_') {
                        Some(b) => (b, true),
                        None => (other, false),
                    };
                    // pg_catalog comes first on the search path, then the
                    // schemas with enum types (`mood`, or `_mood` for mood[]).
                    let builtin = match system {
                        true => sqltypes::SCALAR_TYPE_OIDS
                            .iter()
                            .filter_map(|&o| DataType::from_oid(o))
                            .find(|t| t.typname() == base),
                        false => None,
                    };
                    let found = match (builtin, cat) {
                        (Some(t), _) => Some((t, array)),
                        (None, Some(c)) => {
                            let lookup = |x: &str| -> Result<Option<DataType>> {
                                let q = ObjName { schema: n.schema.clone(), name: x.to_string() };
                                Ok(c.user_type_named(&q)?.map(|(_, k)| match k {
                                    crate::catalog::UserTypeKind::Enum(t) => {
                                        DataType::Enum(t.clone())
                                    }
                                    crate::catalog::UserTypeKind::Domain(d) => d.ty.clone(),
                                    crate::catalog::UserTypeKind::Composite(r) => {
                                        DataType::Record(r.clone())
                                    }
                                }))
                            };
                            // Then a table's row type.
                            let row = |x: &str| -> Result<Option<DataType>> {
                                let q = ObjName { schema: n.schema.clone(), name: x.to_string() };
                                Ok(c.table(&q)?.map(|t| DataType::Record(t.row_type())))
                            };
                            let enum_array = || if array { lookup(base) } else { Ok(None) };
                            match lookup(other)? {
                                Some(e) => Some((e, false)),
                                None => match enum_array()? {
                                    Some(e) => Some((e, true)),
                                    None => row(other)?.map(|r| (r, false)),
                                },
                            }
                        }
                        (None, None) => None,
                    };
                    let Some((t, array)) = found else {
                        bail!(UndefinedObject, "type \"{n}\" does not exist");
                    };
                    if array {
                        t.array_of()
                    } else {
                        t
                    }
                }
            }
        }
        other => bail!(FeatureNotSupported, "type {other} is not supported yet"),
    })
}

impl<'a> Binder<'a> {
    /// A binder with `params` as the client-declared parameter types.
    pub fn new(catalog: &'a Catalog, params: Vec<DataType>) -> Binder<'a> {
        Binder {
            catalog,
            params,
            outer: Vec::new(),
            subqueries: Vec::new(),
            subq_marks: Vec::new(),
            ctes: Vec::new(),
            set_op_leaf: false,
            corr: None,
            correlated: Vec::new(),
            win: None,
            windows: Vec::new(),
            named_windows: Vec::new(),
            in_window: false,
            work_tables: 0,
            work_read: Vec::new(),
            multi_assign: Vec::new(),
            view_depth: 0,
            per_row_call: false,
            trace: None,
            row_locks: Vec::new(),
            keyed: None,
            checks: Vec::new(),
            check_as: None,
            stored: false,
            fn_depth: 0,
            depth: 0,
        }
    }

    /// `x`, cast to the type `dt` names, checked against that type's
    /// constraints when it is a domain.
    fn to_domain(&self, x: Expr, dt: &ast::DataType) -> Result<Expr> {
        Ok(match domain_of(self.catalog, dt)? {
            Some(d) => Expr::Domain(Box::new(x), d),
            None => x,
        })
    }

    /// Records that the statement needs `privs` on `rel`.
    pub fn require(&mut self, rel: crate::catalog::Relation, privs: u16) {
        self.checks.push(crate::acl::Check { rel, privs, as_user: self.check_as.clone() });
    }

    /// The parameter types, with unknown ones defaulted to text.
    pub fn final_params(&self) -> Vec<DataType> {
        self.params
            .iter()
            .map(|t| if *t == DataType::Unknown { DataType::Text } else { t.clone() })
            .collect()
    }

    /// Binds a scalar expression (no aggregates allowed).
    pub fn expr(&mut self, e: &ast::Expr, scope: &Scope) -> Result<(Expr, DataType)> {
        self.expr_in(e, scope, &mut None)
    }

    /// Binds an expression that may contain aggregates (select list, HAVING,
    /// ORDER BY of a grouped query). With `agg` set, group-by expressions
    /// become references to the Aggregate node's output.
    pub fn expr_in(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth = 0;
            bail!(StatementTooComplex, "stack depth limit exceeded");
        }
        let r = self.expr_inner(e, scope, agg);
        self.depth = self.depth.saturating_sub(1);
        r
    }

    fn expr_inner(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        use ast::Expr as E;
        if let Some(state) = agg.as_deref_mut() {
            if let Some(i) = state.group_asts.iter().position(|g| g == e) {
                return Ok((Expr::Column(i), state.group[i].1.clone()));
            }
            if let E::Function(f) = e {
                if let Some(found) = self.aggregate(f, scope, state)? {
                    return Ok(found);
                }
            }
        }
        if let Some(items) = row_items(e) {
            return self.row_constructor(&items, scope, agg);
        }
        if let Some([zone, ts]) = timezone_call(e) {
            return self.at_time_zone(ts, zone, scope, agg);
        }
        match e {
            // INSERT's VALUES and UPDATE's SET read DEFAULT before here.
            E::Identifier(i)
                if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default") =>
            {
                bail!(SyntaxError, "DEFAULT is not allowed in this context")
            }
            E::Identifier(i) => self.column(None, &ident(i), i.span, scope, agg),
            E::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident).collect();
                let span =
                    parts.last().map(|p| p.span).unwrap_or(sqlparser::tokenizer::Span::empty());
                match names.as_slice() {
                    [q, c] => self.column(Some(q), c, span, scope, agg),
                    [_, q, c] => self.column(Some(q), c, span, scope, agg),
                    _ => bail!(SyntaxError, "improper qualified name: {e}"),
                }
            }
            E::Value(v) => match &v.value {
                ast::Value::Placeholder(p) => match placeholder(p) {
                    Some((_, Some(var))) => self.variable(p, var, scope),
                    _ => self.literal(&v.value),
                },
                other => self.literal(other),
            },
            E::Nested(inner) => self.expr_in(inner, scope, agg),
            E::Collate { expr, collation: c } => {
                collation(c)?;
                self.expr_in(expr, scope, agg)
            }
            E::BinaryOp { left, op, right } => self.binary(left, op, right, scope, agg),
            E::UnaryOp { op, expr } => {
                let (x, ty) = self.expr_in(expr, scope, agg)?;
                match op {
                    ast::UnaryOperator::Not => Ok((
                        Expr::Not(Box::new(self.coerce(x, &ty, &DataType::Bool)?)),
                        DataType::Bool,
                    )),
                    ast::UnaryOperator::Minus => {
                        if let Expr::Const(Value::Int4(i)) = &x {
                            return Ok((Expr::Const(Value::Int4(-i)), ty));
                        }
                        let ty = if ty == DataType::Unknown { DataType::Numeric(None) } else { ty };
                        Ok((Expr::Neg(Box::new(x)), ty))
                    }
                    ast::UnaryOperator::Plus => Ok((x, ty)),
                    // ~x is x # -1.
                    ast::UnaryOperator::BitwiseNot => {
                        let (to, ones) = match &ty {
                            DataType::Int2 => (DataType::Int2, Value::Int2(-1)),
                            DataType::Int8 => (DataType::Int8, Value::Int8(-1)),
                            DataType::Int4 | DataType::Unknown => (DataType::Int4, Value::Int4(-1)),
                            other => bail!(UndefinedFunction, "operator does not exist: ~ {other}"),
                        };
                        let x = self.coerce(x, &ty, &to)?;
                        let ty = to;
                        let op = crate::expr::BinOp::Bit(sqltypes::ops::BitOp::Xor);
                        Ok((Expr::Binary(op, Box::new(x), Box::new(Expr::Const(ones))), ty))
                    }
                    // `@ x`, `|/ x`, `||/ x`: abs, and the square and cube
                    // roots of a float8.
                    ast::UnaryOperator::PGAbs => self.call("abs", vec![(x, ty)]),
                    ast::UnaryOperator::PGSquareRoot | ast::UnaryOperator::PGCubeRoot => {
                        let x = self.coerce(x, &ty, &DataType::Float8)?;
                        let name = match op {
                            ast::UnaryOperator::PGSquareRoot => "sqrt",
                            _ => "cbrt",
                        };
                        self.call(name, vec![(x, DataType::Float8)])
                    }
                    other => bail!(FeatureNotSupported, "operator {other} is not supported"),
                }
            }
            // x IS [NOT] [form] NORMALIZED: is_normalized(x, form).
            E::IsNormalized { expr, form, negated } => {
                let (x, ty) = self.expr_in(expr, scope, agg)?;
                let x = self.coerce(x, &ty, &DataType::Text)?;
                let form = form.map_or_else(|| "NFC".to_string(), |f| f.to_string());
                let f = func::Func::Str(func::strings::StringFunc::IsNormalized);
                let test = Expr::Func(f, vec![x, Expr::Const(Value::Text(form))]);
                let test = if *negated { Expr::Not(Box::new(test)) } else { test };
                Ok((test, DataType::Bool))
            }
            // IS [NOT] UNKNOWN: a boolean's IS [NOT] NULL.
            E::IsUnknown(x) | E::IsNotUnknown(x) => {
                let (x, ty) = self.expr_in(x, scope, agg)?;
                if !matches!(ty, DataType::Bool | DataType::Unknown) {
                    let not = if matches!(e, E::IsNotUnknown(_)) { "NOT " } else { "" };
                    bail!(
                        DatatypeMismatch,
                        "argument of IS {not}UNKNOWN must be type boolean, not type {ty}"
                    );
                }
                let x = self.coerce(x, &ty, &DataType::Bool)?;
                Ok((Expr::IsNull(Box::new(x), matches!(e, E::IsNotUnknown(_))), DataType::Bool))
            }
            E::IsNull(x) | E::IsNotNull(x) => {
                let (x, _) = self.expr_in(x, scope, agg)?;
                Ok((Expr::IsNull(Box::new(x), matches!(e, E::IsNotNull(_))), DataType::Bool))
            }
            E::Ceil { expr, field } | E::Floor { expr, field } => {
                let name = if matches!(e, E::Ceil { .. }) { "ceil" } else { "floor" };
                let ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) = field
                else {
                    bail!(SyntaxError, "syntax error in {name}(): {e}");
                };
                let arg = self.expr_in(expr, scope, agg)?;
                self.call(name, vec![arg])
            }
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let distinct = matches!(e, E::IsDistinctFrom(..));
                self.is_distinct(a, b, distinct, scope, agg)
            }
            E::IsTrue(x) | E::IsFalse(x) | E::IsNotTrue(x) | E::IsNotFalse(x) => {
                let (x, ty) = self.expr_in(x, scope, agg)?;
                let x = self.coerce(x, &ty, &DataType::Bool)?;
                let want = matches!(e, E::IsTrue(_) | E::IsNotTrue(_));
                let negated = matches!(e, E::IsNotTrue(_) | E::IsNotFalse(_));
                Ok((Expr::IsBool(Box::new(x), want, negated), DataType::Bool))
            }
            E::Between { expr, negated, low, high } => {
                let mut within = |lo: &ast::Expr, hi: &ast::Expr| -> Result<Expr> {
                    let ge = self.compare(expr, BinOp::GtEq, lo, scope, agg)?;
                    let le = self.compare(expr, BinOp::LtEq, hi, scope, agg)?;
                    Ok(Expr::Binary(BinOp::And, Box::new(ge), Box::new(le)))
                };
                // BETWEEN SYMMETRIC: within the bounds in either order.
                let test = match marker_arg(low, crate::parse::SYMMETRIC) {
                    Some(lo) => {
                        let (a, b) = (within(lo, high)?, within(high, lo)?);
                        Expr::Binary(BinOp::Or, Box::new(a), Box::new(b))
                    }
                    None => within(low, high)?,
                };
                Ok((if *negated { Expr::Not(Box::new(test)) } else { test }, DataType::Bool))
            }
            E::InList { expr, list, negated }
                if row_items(expr).is_some() && list.iter().all(|i| row_items(i).is_some()) =>
            {
                // `(a, b) IN ((1, 2), (3, 4))`: the OR of row equalities.
                let mut any = None;
                for item in list {
                    let eq = self.compare(expr, BinOp::Eq, item, scope, agg)?;
                    any = Some(match any {
                        None => eq,
                        Some(prev) => Expr::Binary(BinOp::Or, Box::new(prev), Box::new(eq)),
                    });
                }
                let any = any.unwrap_or(Expr::Const(Value::Bool(false)));
                Ok((if *negated { Expr::Not(Box::new(any)) } else { any }, DataType::Bool))
            }
            E::InList { expr, list, negated } => {
                let (x, xt) = self.expr_in(expr, scope, agg)?;
                let mut items = Vec::with_capacity(list.len());
                let mut ty = xt.clone();
                let mut bound = Vec::new();
                for item in list {
                    let (b, bt) = self.expr_in(item, scope, agg)?;
                    ty = self.unify(&ty, &bt)?;
                    bound.push((b, bt));
                }
                let x = self.coerce(x, &xt, &ty)?;
                for (b, bt) in bound {
                    items.push(self.coerce(b, &bt, &ty)?);
                }
                Ok((Expr::InList(Box::new(x), items, *negated), DataType::Bool))
            }
            // `x [NOT] LIKE ANY (array)`, `LIKE ALL (...)`, `LIKE SOME (...)`.
            E::Like { negated, any, expr, pattern, escape_char: None }
            | E::ILike { negated, any, expr, pattern, escape_char: None }
                if *any || like_quantifier(pattern).is_some() =>
            {
                let (patterns, all) = match like_quantifier(pattern) {
                    Some(q) if !*any => q,
                    _ => (pattern.as_ref(), false),
                };
                let ci = matches!(e, E::ILike { .. });
                let op = func::arrays::PatternOp { regex: false, negated: *negated, ci };
                self.match_any_all(expr, op, patterns, all, scope, agg)
            }
            E::Like { negated, expr, pattern, escape_char, .. }
            | E::ILike { negated, expr, pattern, escape_char, .. }
            | E::SimilarTo { negated, expr, pattern, escape_char } => {
                let (x, xt) = self.expr_in(expr, scope, agg)?;
                let (p, pt) = self.expr_in(pattern, scope, agg)?;
                let x = self.coerce(x, &xt, &DataType::Text)?;
                let mut args = vec![self.coerce(p, &pt, &DataType::Text)?];
                if let Some(esc) = escape_char {
                    let (e, et) = self.expr_in(esc, scope, agg)?;
                    args.push(self.coerce(e, &et, &DataType::Text)?);
                }
                // `LIKE p ESCAPE e` is `LIKE like_escape(p, e)` and `SIMILAR
                // TO p` is `~ similar_to_escape(p)`, as in PostgreSQL.
                use func::strings::StringFunc as S;
                let escaped = |f: S, args: Vec<Expr>| Box::new(escaped_pattern(f, args));
                let (x, ci) = (Box::new(x), matches!(e, E::ILike { .. }));
                Ok((
                    match e {
                        E::SimilarTo { .. } => {
                            Expr::Regex(x, escaped(S::SimilarEscape, args), *negated, false)
                        }
                        _ if args.len() == 1 => {
                            Expr::Like(x, Box::new(args.remove(0)), *negated, ci)
                        }
                        _ => Expr::Like(x, escaped(S::LikeEscape, args), *negated, ci),
                    },
                    DataType::Bool,
                ))
            }
            E::Cast { expr, data_type: dt, .. } => {
                let to = catalog_type(self.catalog, dt)?;
                // `ARRAY[]::int[]`: an empty array takes the cast's type.
                let mut inner = expr.as_ref();
                while let E::Nested(x) = inner {
                    inner = x;
                }
                if let (E::Array(a), DataType::Array(_)) = (inner, &to) {
                    if a.elem.is_empty() {
                        let elem = to.elem().cloned().unwrap_or(DataType::Text);
                        let empty = sqltypes::array::ArrayValue::new(elem, Vec::new());
                        return Ok((Expr::Const(empty.into_value()), to));
                    }
                }
                let (x, ty) = self.expr_in(expr, scope, agg)?;
                let mut x = self.explicit_cast(x, &ty, &to)?;
                if let Some(p) = time_precision(dt) {
                    let p = Expr::Const(Value::Int4(i32::from(p)));
                    x = Expr::Func(func::Func::TimePrecision, vec![x, p]);
                }
                Ok((self.to_domain(x, dt)?, to))
            }
            E::TypedString(ts) => {
                let to = catalog_type(self.catalog, &ts.data_type)?;
                let s = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
                };
                let x = self.explicit_cast(Expr::Const(Value::Text(s)), &DataType::Unknown, &to)?;
                Ok((self.to_domain(x, &ts.data_type)?, to))
            }
            E::AtTimeZone { timestamp, time_zone } => {
                self.at_time_zone(timestamp, time_zone, scope, agg)
            }
            E::Function(f) => self.function(f, scope, agg),
            E::Position { expr, r#in } => {
                let (s, st) = self.expr_in(r#in, scope, agg)?;
                let (sub, subt) = self.expr_in(expr, scope, agg)?;
                let args = vec![
                    self.coerce(s, &st, &DataType::Text)?,
                    self.coerce(sub, &subt, &DataType::Text)?,
                ];
                Ok((Expr::Func(func::Func::StrPos, args), DataType::Int4))
            }
            E::Trim { expr, trim_where, trim_what, .. } => {
                let (x, xt) = self.expr_in(expr, scope, agg)?;
                let mut args = vec![self.coerce(x, &xt, &DataType::Text)?];
                if let Some(w) = trim_what {
                    let (c, ct) = self.expr_in(w, scope, agg)?;
                    args.push(self.coerce(c, &ct, &DataType::Text)?);
                } else {
                    args.push(Expr::Const(Value::Text(" ".into())));
                }
                let f = match trim_where {
                    Some(ast::TrimWhereField::Leading) => func::Func::LTrim,
                    Some(ast::TrimWhereField::Trailing) => func::Func::RTrim,
                    _ => func::Func::BTrimChars,
                };
                Ok((Expr::Func(f, args), DataType::Text))
            }
            E::Substring { expr, substring_from, substring_for, .. } => {
                let (x, xt) = self.expr_in(expr, scope, agg)?;
                let mut args = vec![self.coerce(x, &xt, &DataType::Text)?];
                let from = match substring_from {
                    Some(f) => self.expr_in(f, scope, agg)?,
                    None => (Expr::Const(Value::Int4(1)), DataType::Int4),
                };
                // A text pattern (an unknown literal too, as string types
                // are preferred) makes it the regular expression form.
                let textual =
                    matches!(from.1, DataType::Text | DataType::Varchar(_) | DataType::Unknown);
                let escape = match substring_for {
                    Some(n) if textual => Some(self.expr_in(n, scope, agg)?),
                    _ => None,
                };
                let textual = textual
                    && escape.as_ref().is_none_or(|(_, t)| {
                        matches!(t, DataType::Text | DataType::Varchar(_) | DataType::Unknown)
                    });
                if textual {
                    let mut pattern = self.coerce(from.0, &from.1, &DataType::Text)?;
                    // `substring(s FROM p FOR e)`: a SIMILAR TO pattern
                    // with escape e (PostgreSQL's substring(text, text, text)).
                    if let Some((e, et)) = escape {
                        let e = self.coerce(e, &et, &DataType::Text)?;
                        let f = func::strings::StringFunc::SimilarEscape;
                        pattern = escaped_pattern(f, vec![pattern, e]);
                    }
                    args.push(pattern);
                    let f = func::Func::Regex(func::regex::RegexFunc::Substring);
                    return Ok((Expr::Func(f, args), DataType::Text));
                }
                args.push(self.coerce(from.0, &from.1, &DataType::Int4)?);
                if let Some(n) = substring_for {
                    let (nx, nt) = self.expr_in(n, scope, agg)?;
                    args.push(self.coerce(nx, &nt, &DataType::Int4)?);
                }
                Ok((Expr::Func(func::Func::Substr, args), DataType::Text))
            }
            E::Subquery(q) => {
                let (x, cols) = self.subquery(q, scope, SubqKind::Scalar, agg, None)?;
                if cols.len() != 1 {
                    bail!(SyntaxError, "subquery must return only one column");
                }
                Ok((x, cols[0].ty.clone()))
            }
            E::Exists { subquery, negated } => {
                let (x, _) = self.subquery(subquery, scope, SubqKind::Exists, agg, None)?;
                Ok((if *negated { Expr::Not(Box::new(x)) } else { x }, DataType::Bool))
            }
            E::InSubquery { expr, subquery, negated } => {
                let (x, xt) = self.expr_in(expr, scope, agg)?;
                let probe = Some((x, xt, *negated));
                let (x, _) = self.subquery(subquery, scope, SubqKind::List, agg, probe)?;
                Ok((x, DataType::Bool))
            }
            E::Case { operand, conditions, else_result, .. } => {
                self.case(operand, conditions, else_result, scope, agg)
            }
            E::Array(arr) => self.array_constructor(arr, scope, agg),
            E::CompoundFieldAccess { root, access_chain } => {
                self.subscript(root, access_chain, scope, agg)
            }
            E::AnyOp { left, compare_op, right, .. } => {
                self.any_all(left, compare_op, right, false, scope, agg)
            }
            E::AllOp { left, compare_op, right } => {
                self.any_all(left, compare_op, right, true, scope, agg)
            }
            E::Interval(iv) => self.interval_literal(iv, scope, agg),
            E::Extract { field, expr, .. } => {
                let name = match field {
                    ast::DateTimeField::Custom(id) => id.value.to_lowercase(),
                    other => other.to_string().to_lowercase(),
                };
                let src = self.expr_in(expr, scope, agg)?;
                let field = (Expr::Const(Value::Text(name)), DataType::Text);
                self.call("extract", vec![field, src])
            }
            E::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
                let mut args = vec![
                    self.expr_in(expr, scope, agg)?,
                    self.expr_in(overlay_what, scope, agg)?,
                    self.expr_in(overlay_from, scope, agg)?,
                ];
                if let Some(n) = overlay_for {
                    args.push(self.expr_in(n, scope, agg)?);
                }
                self.call("overlay", args)
            }
            other => bail!(FeatureNotSupported, "expression not supported yet: {other}"),
        }
    }

    /// `INTERVAL '1 day'`, `INTERVAL '3' HOUR`: a bare number takes the
    /// leading field as its unit.
    fn interval_literal(
        &mut self,
        iv: &ast::Interval,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let Some(value) = interval_constant(iv) else {
            let (x, t) = self.expr_in(&iv.value, scope, agg)?;
            return Ok((self.explicit_cast(x, &t, &DataType::Interval)?, DataType::Interval));
        };
        Ok((Expr::Const(value?), DataType::Interval))
    }

    fn column(
        &mut self,
        q: Option<&str>,
        name: &str,
        span: sqlparser::tokenizer::Span,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        // Keywords that sqlparser leaves as identifiers.
        let keyword_fn = SQL_VALUE_FUNCTIONS.contains(&name);
        if q.is_none() && keyword_fn && scope.resolve(None, name).is_err() {
            let (f, ty) = func::resolve(name, &[])?;
            return Ok((Expr::Func(f, vec![]), ty));
        }
        let i = match scope.resolve(q, name) {
            Ok(i) => i,
            Err(e) if e.code == sqlstate::SqlState::AmbiguousColumn => return Err(e),
            Err(e) => {
                // Fall back to the enclosing queries' columns, nearest first.
                if let Some((k, col)) = self.outer_column(q, name)? {
                    let ty = col.ty.clone();
                    Self::traced(&mut self.trace, span, &col);
                    return Ok((Expr::Outer(k), ty));
                }
                // A FROM item's name alone is its whole row.
                if q.is_none() {
                    if let Some(found) = whole_row(scope, name, Expr::Column) {
                        if agg.is_some() {
                            return Err(err!(
                                GroupingError,
                                "column \"{name}.*\" must appear in the GROUP BY clause or be used in an aggregate function"
                            ));
                        }
                        return Ok(found);
                    }
                    let mut from_end = 0;
                    for level in (0..self.outer.len()).rev() {
                        let o = &self.outer[level].scope;
                        let w = o.cols.len();
                        if let Some(found) =
                            whole_row(o, name, |i| Expr::Outer(from_end + w - 1 - i))
                        {
                            self.note_outer(level, None);
                            return Ok(found);
                        }
                        from_end += w;
                    }
                }
                return Err(e);
            }
        };
        Self::traced(&mut self.trace, span, &scope.cols[i]);
        if let Some(state) = agg.as_deref() {
            // A grouped column, however it was spelled in GROUP BY.
            if let Some(k) = state.group.iter().position(|(g, _)| *g == Expr::Column(i)) {
                return Ok((Expr::Column(k), state.group[k].1.clone()));
            }
        }
        if agg.is_some() {
            // PostgreSQL names the column with its relation (`m.t`).
            let shown = match q.or(scope.cols[i].qualifier.as_deref()) {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            return Err(err!(
                GroupingError,
                "column \"{shown}\" must appear in the GROUP BY clause or be used in an aggregate function"
            ));
        }
        Ok((Expr::Column(i), scope.cols[i].ty.clone()))
    }

    /// The column of an enclosing query that `q.name` names, nearest query
    /// first, as its [`Expr::Outer`] index (counted from the end of the
    /// enclosing rows) and the column; an ambiguous name is an error.
    fn outer_column(&mut self, q: Option<&str>, name: &str) -> Result<Option<(usize, ScopeCol)>> {
        let mut from_end = 0;
        for level in (0..self.outer.len()).rev() {
            let o = &self.outer[level].scope;
            let w = o.cols.len();
            match o.resolve(q, name) {
                Ok(i) => {
                    let col = o.cols[i].clone();
                    self.note_outer(level, Some(i));
                    return Ok(Some((from_end + w - 1 - i, col)));
                }
                Err(e) if e.code == sqlstate::SqlState::AmbiguousColumn => return Err(e),
                Err(_) => from_end += w,
            }
        }
        Ok(None)
    }

    /// Notes a reference to enclosing row `level` (column `col`, None for
    /// the whole row): the levels inside it read further out.
    fn note_outer(&mut self, level: usize, col: Option<usize>) {
        let o = &mut self.outer[level];
        match col {
            Some(i) => o.used.push(i),
            None => o.used.extend(0..o.scope.cols.len()),
        }
        for inner in &mut self.outer[level + 1..] {
            inner.reads_further = true;
        }
    }

    /// A PL/pgSQL variable named by a bare name (`$n?name`, see
    /// [`placeholder`]): PostgreSQL's 42702 if a column has the name too,
    /// or that column for a SQL function's parameter (`$n!name`).
    fn variable(&mut self, p: &str, var: Variable<'_>, scope: &Scope) -> Result<(Expr, DataType)> {
        let (name, prefer_column) = match var {
            Variable::Ambiguous(n) => (n, false),
            Variable::Shadowed(n) => (n, true),
        };
        let local = match scope.resolve(None, name) {
            Ok(_) => true,
            Err(e) => e.code == sqlstate::SqlState::AmbiguousColumn,
        };
        let column = local || !matches!(self.outer_column(None, name), Ok(None));
        match (column, prefer_column) {
            (false, _) => {
                let n = p.split(['?', '!']).next().unwrap_or(p);
                self.literal(&ast::Value::Placeholder(n.to_string()))
            }
            (true, true) => {
                let span = sqlparser::tokenizer::Span::empty();
                self.column(None, name, span, scope, &mut None)
            }
            (true, false) => Err(err!(AmbiguousColumn, "column reference \"{name}\" is ambiguous")
                .with_detail("It could refer to either a PL/pgSQL variable or a table column.")),
        }
    }

    /// Records that the name at `span` stands for `col` (see [`Trace`]).
    pub(crate) fn traced(
        trace: &mut Option<Trace>,
        span: sqlparser::tokenizer::Span,
        col: &ScopeCol,
    ) {
        if let Some(t) = trace {
            if col.table_oid != 0 {
                t.columns.push((span, col.table_oid, col.column_id));
            }
        }
    }

    /// `x AT TIME ZONE zone` (and timezone(zone, x)): timestamptz to the
    /// zone's timestamp, timestamp (or date) to timestamptz.
    fn at_time_zone(
        &mut self,
        x: &ast::Expr,
        zone: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let (z, zt) = self.expr_in(zone, scope, agg)?;
        let z = match zt {
            DataType::Interval => z,
            _ => self.coerce(z, &zt, &DataType::Text)?,
        };
        let (v, vt) = self.expr_in(x, scope, agg)?;
        let (from, to) = match vt {
            DataType::Timestamp => (DataType::Timestamp, DataType::TimestampTz),
            DataType::TimestampTz | DataType::Date | DataType::Unknown => {
                (DataType::TimestampTz, DataType::Timestamp)
            }
            other => bail!(UndefinedFunction, "function timezone({zt}, {other}) does not exist"),
        };
        let v = self.coerce(v, &vt, &from)?;
        Ok((Expr::Func(func::Func::Timezone, vec![z, v]), to))
    }

    /// `ROW(a, b)` or `(a, b)`: a record with fields f1, f2, ...; unknown
    /// literals become text, as PostgreSQL resolves them.
    fn row_constructor(
        &mut self,
        items: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let mut values = Vec::with_capacity(items.len());
        let mut types = Vec::with_capacity(items.len());
        for item in items {
            // `ROW((x).*)`: x's fields, one by one.
            if let Some(x) = marker_arg(item, crate::parse::FIELDS) {
                let (x, t) = self.expr_in(x, scope, agg)?;
                let DataType::Record(rt) = t else {
                    bail!(WrongObjectType, "type {t} is not composite");
                };
                for (i, (_, ft)) in rt.fields.iter().enumerate() {
                    values.push(Expr::Field(Box::new(x.clone()), i));
                    types.push(ft.clone());
                }
                continue;
            }
            let (x, t) = self.expr_in(item, scope, agg)?;
            let t = if t == DataType::Unknown { DataType::Text } else { t };
            values.push(x);
            types.push(t);
        }
        let ty = sqltypes::RecordType::anonymous(types);
        Ok((Expr::Row(ty.clone(), values), DataType::Record(ty)))
    }

    /// Binds a literal; strings stay `unknown` until context gives a type.
    pub fn literal(&mut self, v: &ast::Value) -> Result<(Expr, DataType)> {
        use ast::Value as V;
        Ok(match v {
            V::Number(n, _) => number(n)?,
            V::SingleQuotedString(s) | V::EscapedStringLiteral(s) | V::UnicodeStringLiteral(s) => {
                (Expr::Const(Value::Text(s.clone())), DataType::Unknown)
            }
            V::DollarQuotedString(s) => {
                (Expr::Const(Value::Text(s.value.clone())), DataType::Unknown)
            }
            V::Boolean(b) => (Expr::Const(Value::Bool(*b)), DataType::Bool),
            V::Null => (Expr::Const(Value::Null), DataType::Unknown),
            V::Placeholder(p) => {
                let n: usize = match placeholder(p) {
                    Some((n, _)) if (1..=65535).contains(&n) => n,
                    _ => bail!(SyntaxError, "syntax error at or near \"{p}\""),
                };
                if self.params.len() < n {
                    self.params.resize(n, DataType::Unknown);
                }
                (Expr::Param(n - 1), self.params[n - 1].clone())
            }
            V::HexStringLiteral(h) => (
                Expr::Const(sqltypes::text::parse_text(&DataType::Bytea, &format!("\\x{h}"))?),
                DataType::Bytea,
            ),
            other => bail!(FeatureNotSupported, "literal not supported: {other}"),
        })
    }

    fn case(
        &mut self,
        operand: &Option<Box<ast::Expr>>,
        conditions: &[ast::CaseWhen],
        else_result: &Option<Box<ast::Expr>>,
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let op = match operand {
            Some(o) => Some(self.expr_in(o, scope, agg)?),
            None => None,
        };
        let mut whens = Vec::new();
        let mut results = Vec::new();
        let mut ty = DataType::Unknown;
        for cw in conditions {
            let (w, wt) = self.expr_in(&cw.condition, scope, agg)?;
            let w = match &op {
                Some((_, ot)) => {
                    let t = self.unify(ot, &wt)?;
                    self.coerce(w, &wt, &t)?
                }
                None => self.coerce(w, &wt, &DataType::Bool)?,
            };
            let (r, rt) = self.expr_in(&cw.result, scope, agg)?;
            ty = self.unify(&ty, &rt)?;
            whens.push(w);
            results.push((r, rt));
        }
        let else_ = match else_result {
            Some(e) => {
                let (x, t) = self.expr_in(e, scope, agg)?;
                ty = self.unify(&ty, &t)?;
                Some((x, t))
            }
            None => None,
        };
        if ty == DataType::Unknown {
            ty = DataType::Text;
        }
        let mut pairs = Vec::new();
        for (w, (r, rt)) in whens.into_iter().zip(results) {
            pairs.push((w, self.coerce(r, &rt, &ty)?));
        }
        let else_ = match else_ {
            Some((x, t)) => Some(Box::new(self.coerce(x, &t, &ty)?)),
            None => None,
        };
        Ok((Expr::Case(op.map(|(o, _)| Box::new(o)), pairs, else_), ty))
    }

    /// Binds and coerces an expression assigned to column `name` of type
    /// `to` (INSERT values, UPDATE SET), failing as PostgreSQL does.
    pub fn assign_column(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        (name, to): (&str, &DataType),
    ) -> Result<Expr> {
        self.assign_with(e, scope, to, |t| mismatched_column(name, to, t))
    }

    /// Binds and coerces an expression assigned to a column of type `to`.
    pub fn assign(&mut self, e: &ast::Expr, scope: &Scope, to: &DataType) -> Result<Expr> {
        self.assign_with(e, scope, to, |t| {
            err!(DatatypeMismatch, "column is of type {to} but expression is of type {t}")
        })
    }

    /// [`Binder::assign`] with the error for a type that cannot be assigned
    /// built by `mismatch` from the expression's type.
    pub fn assign_with(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        to: &DataType,
        mismatch: impl FnOnce(&DataType) -> crate::error::Error,
    ) -> Result<Expr> {
        if let ast::Expr::Value(v) = e {
            if let ast::Value::SingleQuotedString(s) = &v.value {
                return self.coerce(Expr::Const(Value::Text(s.clone())), &DataType::Unknown, to);
            }
        }
        let (x, t) = self.expr(e, scope)?;
        if t == *to {
            return Ok(x);
        }
        if t != DataType::Unknown && !cast::can_assign(&t, to) {
            return Err(mismatch(&t));
        }
        self.coerce_assigned(x, &t, to)
    }

    /// [`Binder::coerce`] for a value stored into a column of type `to`.
    /// A length modifier is left to the row check
    /// ([`crate::dml::enforce_type`]): as in PostgreSQL, assigning a value too
    /// long for varchar(n) or char(n) fails, where an explicit cast would
    /// truncate it.
    pub fn coerce_assigned(&mut self, x: Expr, from: &DataType, to: &DataType) -> Result<Expr> {
        let unlimited = match to {
            DataType::Varchar(Some(_)) => DataType::Varchar(None),
            DataType::Char(_) if !matches!(from, DataType::Unknown) => DataType::Text,
            other => other.clone(),
        };
        self.coerce(x, from, &unlimited)
    }

    /// Plans a SELECT statement or other query expression.
    pub fn query(&mut self, q: &ast::Query) -> Result<(Plan, Vec<Column>)> {
        crate::select::plan_query(self, q)
    }

    /// Output column names for a plan whose output is a table's columns.
    pub fn table_columns(t: &crate::catalog::TableDef) -> Vec<Column> {
        t.columns
            .iter()
            .enumerate()
            .map(|(i, c)| Column {
                name: c.name.clone(),
                ty: c.ty.to_type(),
                table_oid: t.oid,
                column_id: i as i16 + 1,
            })
            .collect()
    }
}

/// 42804 for a value of type `t` assigned to column `name` of type `to`.
pub fn mismatched_column(name: &str, to: &DataType, t: &DataType) -> crate::error::Error {
    err!(DatatypeMismatch, "column \"{name}\" is of type {to} but expression is of type {t}")
        .with_hint("You will need to rewrite or cast the expression.")
}

fn rt_or(t: &DataType, fallback: &DataType) -> DataType {
    if *t == DataType::Unknown {
        fallback.clone()
    } else {
        t.clone()
    }
}

/// The type without its length/precision modifier.
pub fn strip_mod(t: &DataType) -> DataType {
    match t {
        DataType::Varchar(_) | DataType::Char(_) => DataType::Text,
        DataType::Numeric(_) => DataType::Numeric(None),
        other => other.clone(),
    }
}

fn number(n: &str) -> Result<(Expr, DataType)> {
    if let Ok(i) = n.parse::<i32>() {
        return Ok((Expr::Const(Value::Int4(i)), DataType::Int4));
    }
    if let Ok(i) = n.parse::<i64>() {
        return Ok((Expr::Const(Value::Int8(i)), DataType::Int8));
    }
    let v = sqltypes::text::parse_text(&DataType::Numeric(None), n)?;
    Ok((Expr::Const(v), DataType::Numeric(None)))
}

/// The array of a call's `VARIADIC array` argument (read as
/// [`crate::parse::VARIADIC`]'s call), None for any other argument.
pub(crate) fn variadic_argument(e: &ast::Expr) -> Option<&ast::Expr> {
    marker_arg(e, crate::parse::VARIADIC)
}

/// The expression a parser rewrite wrapped in the one-argument marker
/// call `"name"(x)`.
pub(crate) fn marker_arg<'e>(e: &'e ast::Expr, name: &str) -> Option<&'e ast::Expr> {
    match crate::parse::marker_args(e, name)? {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => Some(x),
        _ => None,
    }
}

/// The value of `INTERVAL 'text' [fields]` written with a string literal
/// (None for another operand): a bare number takes the leading field as
/// its unit (`INTERVAL '3' HOUR`).
pub fn interval_constant(iv: &ast::Interval) -> Option<Result<Value>> {
    let ast::Expr::Value(v) = iv.value.as_ref() else { return None };
    let ast::Value::SingleQuotedString(text) = &v.value else { return None };
    let bare_number = text.trim().parse::<f64>().is_ok();
    let text = match &iv.leading_field {
        Some(f) if bare_number => format!("{text} {}", f.to_string().to_lowercase()),
        _ => text.clone(),
    };
    Some(sqltypes::text::parse_text(&DataType::Interval, &text))
}

/// The pattern `f(args)` makes of a LIKE ... ESCAPE or SIMILAR TO pattern:
/// computed once here when the pattern and escape are constants, else per
/// row (an error is left for the rows to raise, as before).
fn escaped_pattern(f: func::strings::StringFunc, args: Vec<Expr>) -> Expr {
    let constants: Option<Vec<Value>> = args
        .iter()
        .map(|a| match a {
            Expr::Const(v) => Some(v.clone()),
            _ => None,
        })
        .collect();
    let folded = constants.and_then(|values| {
        func::strings::call(f, values, &crate::expr::EvalContext::default()).ok()
    });
    match folded {
        Some(v) => Expr::Const(v),
        None => Expr::Func(func::Func::Str(f), args),
    }
}
