//! `CREATE TABLE name (LIKE source [INCLUDING | EXCLUDING option] ...)`:
//! the new table takes the source's columns (names, types, NOT NULL) and,
//! with the options, its defaults, identity and generated columns, CHECK
//! constraints, indexes (the primary key and unique constraints among
//! them) and column comments.
//!
//! The copy is made as SQL: the source's definition is written out as a
//! column and constraint list, parsed, and put in place of the LIKE
//! clause, so the new table is created as if those definitions had been
//! written; its other indexes become CREATE INDEX statements run after.
//! sqlparser reads `(LIKE source)` but not the options, so the parser
//! passes them in a `WITH ("pg_like_options" = 'n')` marker (`MARKER`).

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

use crate::bind;
use crate::catalog::{Catalog, TableDef, EXPRESSION_KEY};
use crate::error::Result;
use crate::func::catalog_info::{column_list, deferral_clause, format_type, quote_ident};
use crate::{bail, err};

/// The WITH option the parser carries LIKE's options in.
pub const MARKER: &str = "pg_like_options";

/// INCLUDING DEFAULTS.
pub const DEFAULTS: u8 = 1;
/// INCLUDING CONSTRAINTS (CHECK constraints).
pub const CONSTRAINTS: u8 = 2;
/// INCLUDING INDEXES (with the primary key and unique constraints).
pub const INDEXES: u8 = 4;
/// INCLUDING IDENTITY.
pub const IDENTITY: u8 = 8;
/// INCLUDING GENERATED.
pub const GENERATED: u8 = 16;
/// INCLUDING COMMENTS (of the columns).
pub const COMMENTS: u8 = 32;

/// The bits of one LIKE option (COMPRESSION, STATISTICS and STORAGE have
/// nothing to copy); None if `word` is not one.
pub fn option_bits(word: &str) -> Option<u8> {
    Some(match word.to_ascii_lowercase().as_str() {
        "defaults" => DEFAULTS,
        "constraints" => CONSTRAINTS,
        "indexes" => INDEXES,
        "identity" => IDENTITY,
        "generated" => GENERATED,
        "comments" => COMMENTS,
        "compression" | "statistics" | "storage" => 0,
        "all" => DEFAULTS | CONSTRAINTS | INDEXES | IDENTITY | GENERATED | COMMENTS,
        _ => return None,
    })
}

/// What a LIKE clause becomes.
pub struct Expanded {
    /// The statement with the source's definitions in place of LIKE.
    pub create: ast::CreateTable,
    /// The source's other indexes, to create on the new table.
    pub indexes: Vec<ast::CreateIndex>,
    /// Column comments to copy: (column, comment).
    pub comments: Vec<(String, String)>,
}

/// Expands `ct`'s LIKE clause, if it has one.
pub fn expand(cat: &Catalog, ct: &ast::CreateTable) -> Result<Option<Expanded>> {
    let like = match &ct.like {
        Some(ast::CreateTableLikeKind::Parenthesized(l) | ast::CreateTableLikeKind::Plain(l)) => l,
        None => return Ok(None),
    };
    let mut create = ct.clone();
    create.like = None;
    let opts = take_marker(&mut create)?;
    let src = cat.must_table(&bind::obj_name(&like.name)?)?;
    let mut items = Vec::new();
    let mut comments = Vec::new();
    for c in &src.columns {
        let mut item = format!("{} {}", quote_ident(&c.name), column_type(cat, c));
        if let Some(name) = c.collation.and_then(crate::system::collation_name) {
            item.push_str(&format!(" COLLATE {}", crate::builtins::quote_identifier(name)));
        }
        if !c.nullable {
            item.push_str(" NOT NULL");
        }
        match (&c.default, c.identity, c.generated) {
            (_, Some(kind), _) if opts & IDENTITY != 0 => {
                let kind = if kind == 'a' { "ALWAYS" } else { "BY DEFAULT" };
                item.push_str(&format!(" GENERATED {kind} AS IDENTITY"));
            }
            (Some(e), None, true) if opts & GENERATED != 0 => {
                item.push_str(&format!(" GENERATED ALWAYS AS ({e}) STORED"));
            }
            (Some(e), None, false) if opts & DEFAULTS != 0 => {
                item.push_str(&format!(" DEFAULT {e}"));
            }
            _ => {}
        }
        items.push(item);
        if let (Some(comment), true) = (&c.comment, opts & COMMENTS != 0) {
            comments.push((c.name.clone(), comment.clone()));
        }
    }
    if opts & CONSTRAINTS != 0 {
        for ch in &src.checks {
            items.push(format!("CONSTRAINT {} CHECK ({})", quote_ident(&ch.name), ch.expr));
        }
    }
    let mut indexes = Vec::new();
    if opts & INDEXES != 0 {
        if !src.primary_key.is_empty() {
            let deferral = deferral_clause(src.pkey_deferral);
            items.push(format!("PRIMARY KEY ({}){deferral}", column_list(&src, &src.primary_key)));
        }
        for i in &src.indexes {
            if i.constraint {
                let deferral = deferral_clause(i.deferral);
                items.push(format!("UNIQUE ({}){deferral}", column_list(&src, &i.columns)));
            } else {
                indexes.push(index_statement(&src, i, &ct.name)?);
            }
        }
    }
    let sql = format!("CREATE TABLE x ({})", items.join(", "));
    let parsed = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_statement())
        .map_err(|e| err!(InternalError, "LIKE {} does not copy: {e}", src.name))?;
    let ast::Statement::CreateTable(copy) = parsed else {
        bail!(InternalError, "LIKE {} does not copy", src.name);
    };
    let mut columns = copy.columns;
    columns.extend(std::mem::take(&mut create.columns));
    create.columns = columns;
    let mut constraints = copy.constraints;
    constraints.extend(std::mem::take(&mut create.constraints));
    create.constraints = constraints;
    Ok(Some(Expanded { create, indexes, comments }))
}

/// The LIKE options the parser's marker carries (0 without one), which is
/// taken out of the statement's WITH options.
fn take_marker(ct: &mut ast::CreateTable) -> Result<u8> {
    let ast::CreateTableOptions::With(options) = &mut ct.table_options else { return Ok(0) };
    let is_marker = |o: &ast::SqlOption| matches!(o, ast::SqlOption::KeyValue { key, .. } if key.value == MARKER);
    let Some(at) = options.iter().position(is_marker) else { return Ok(0) };
    let ast::SqlOption::KeyValue { value, .. } = options.remove(at) else { return Ok(0) };
    if options.is_empty() {
        ct.table_options = ast::CreateTableOptions::None;
    }
    let text = match value {
        ast::Expr::Value(v) => match v.value {
            ast::Value::SingleQuotedString(s) => s,
            _ => String::new(),
        },
        _ => String::new(),
    };
    text.parse().map_err(|_| err!(InternalError, "malformed LIKE options"))
}

/// A column's type as format_type writes it (a domain or enum by name).
fn column_type(cat: &Catalog, c: &crate::catalog::ColumnDef) -> String {
    match &c.ty.domain {
        Some(d) => crate::func::catalog_info::qualified_name(cat, d.def.namespace, &d.def.name),
        None => format_type(Some(cat), c.ty.oid, Some(c.ty.typmod)),
    }
}

/// `CREATE [UNIQUE] INDEX ON table USING method (keys) [INCLUDE (...)]
/// [WHERE ...]` for index `i` of
/// `src` on the new table `table` (named as CREATE INDEX names it).
fn index_statement(
    src: &TableDef,
    i: &crate::catalog::IndexDef,
    table: &ast::ObjectName,
) -> Result<ast::CreateIndex> {
    let mut exprs = i.exprs.iter();
    let mut keys = Vec::with_capacity(i.columns.len());
    for (k, &c) in i.columns.iter().enumerate() {
        let mut key = match c {
            EXPRESSION_KEY => format!("({})", exprs.next().map(String::as_str).unwrap_or("NULL")),
            c => quote_ident(&src.columns[c].name),
        };
        if let Some(Some(class)) = i.opclasses.get(k) {
            key.push(' ');
            key.push_str(class);
        }
        let option = i.options.get(k).copied().unwrap_or(0);
        if option & 1 != 0 {
            key.push_str(" DESC");
        }
        match (option & 2 != 0, option & 1 != 0) {
            (true, false) => key.push_str(" NULLS FIRST"),
            (false, true) => key.push_str(" NULLS LAST"),
            _ => {}
        }
        keys.push(key);
    }
    let unique = if i.unique { "UNIQUE " } else { "" };
    let method = i.method.as_deref().unwrap_or("btree");
    let mut sql = format!("CREATE {unique}INDEX ON {table} USING {method} ({})", keys.join(", "));
    if !i.include.is_empty() {
        let names: Vec<String> =
            i.include.iter().map(|&c| quote_ident(&src.columns[c].name)).collect();
        sql.push_str(&format!(" INCLUDE ({})", names.join(", ")));
    }
    if let Some(p) = &i.predicate {
        sql.push_str(&format!(" WHERE {p}"));
    }
    match Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_statement())
    {
        Ok(ast::Statement::CreateIndex(ci)) => Ok(ci),
        _ => bail!(InternalError, "index {} does not copy", i.name),
    }
}
