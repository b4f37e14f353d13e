//! Parsing: splits a query string into statements and parses each one.
//!
//! sqlparser's PostgreSQL dialect parses most statements. A few utility
//! statements that clients send verbatim and sqlparser does not accept in
//! PostgreSQL's form (COPY with a parenthesized option list, VACUUM with
//! options and tables) are recognized here from the token stream. Splitting
//! on the tokenizer's semicolons keeps string literals intact and lets each
//! statement fail or succeed on its own, as PostgreSQL does.
//!
//! CREATE and ALTER SEQUENCE and the OWNER TO forms of ALTER VIEW, SEQUENCE
//! and INDEX are read by Strata's own loops over sqlparser's primitives
//! (submodules `sequence` and `owner`), because sqlparser fixes the order of
//! sequence options and lacks the rest; so are ATTACH / DETACH PARTITION
//! (submodule `partition`). `ONLY` before a table name in FROM,
//! JOIN and UPDATE is dropped from the tokens: Strata has no table
//! inheritance, so `ONLY t` and `t` are the same relation (for a
//! partitioned table PostgreSQL's `ONLY` finds no rows; a known deviation),
//! and `CREATE INDEX ... ON ONLY t` leaves a marker ([`is_on_only`]).
//!
//! Error positions are 1-based character offsets into the whole query string,
//! which is what psql uses to draw its caret.

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};

use crate::error::{Error, Result};
use crate::{bail, err};

/// ALTER VIEW | SEQUENCE | INDEX ... OWNER TO.
mod domain;
mod grant;
mod owner;
/// ALTER TABLE ... ATTACH / DETACH PARTITION, ALTER INDEX ... ATTACH PARTITION.
mod partition;
/// CREATE SEQUENCE and ALTER SEQUENCE options in any order.
mod sequence;

pub use domain::{AlterDomain, CreateDomain, DomainAction, DomainConstraint, DropDomain};
pub use grant::{AlterDefaultPrivileges, GrantOnType, GrantRole, Owned, PrivilegeChange};
pub use owner::{AlterName, AlterOwner, NameChange, RelationKind};
pub use partition::{PartitionAction, PartitionCmd};
pub use sequence::{AlterIdentity, AlterSequence, IdentityAction, SequenceOptions};

/// Maximum query length accepted (PostgreSQL's limit is 1 GB; ours is lower
/// because every statement is parsed in memory at once).
pub const MAX_QUERY_BYTES: usize = 256 << 20;

/// Maximum parser recursion depth (bounds stack use on hostile input).
const MAX_RECURSION: usize = 200;

/// Longest run of binary operators without a separator. sqlparser builds
/// such chains as left-deep trees, and every later pass over the tree
/// recurses, so the depth is bounded here, before parsing.
const MAX_OPERATOR_RUN: usize = 1000;

/// Rejects statements whose expression trees would be too deep to walk.
fn check_depth(piece: &[TokenWithSpan]) -> Result<()> {
    let mut runs: Vec<usize> = vec![0];
    for t in piece {
        match &t.token {
            Token::LParen | Token::LBracket => runs.push(0),
            Token::RParen | Token::RBracket => {
                if runs.len() > 1 {
                    runs.pop();
                }
            }
            Token::Comma => {
                if let Some(r) = runs.last_mut() {
                    *r = 0;
                }
            }
            Token::Whitespace(_)
            | Token::Word(_)
            | Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::Placeholder(_) => {
                if let Token::Word(w) = &t.token {
                    let op = matches!(
                        w.value.to_ascii_lowercase().as_str(),
                        "and" | "or" | "not" | "is" | "like" | "in" | "between"
                    );
                    if op {
                        if let Some(r) = runs.last_mut() {
                            *r += 1;
                        }
                    }
                }
            }
            _ => {
                if let Some(r) = runs.last_mut() {
                    *r += 1;
                }
            }
        }
        if runs.last().copied().unwrap_or(0) > MAX_OPERATOR_RUN {
            return Err(err!(StatementTooComplex, "stack depth limit exceeded")
                .with_hint("The expression nests too deeply; split it into smaller parts."));
        }
    }
    Ok(())
}

/// A parsed statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// Anything sqlparser parsed.
    Sql(Box<ast::Statement>),
    /// COPY ... FROM STDIN / TO STDOUT.
    Copy(CopyStmt),
    /// VACUUM / ANALYZE with whatever options (no-ops for storage).
    Maintenance(&'static str),
    /// ALTER SEQUENCE (sqlparser has no such statement).
    AlterSequence(Box<AlterSequence>),
    /// ALTER TABLE ... ALTER COLUMN's identity actions.
    AlterIdentity(Box<AlterIdentity>),
    /// ALTER VIEW | SEQUENCE | INDEX name OWNER TO role.
    AlterOwner(AlterOwner),
    /// ALTER TABLE | VIEW | SEQUENCE | TYPE name SET SCHEMA, ALTER VIEW
    /// name RENAME TO.
    AlterName(AlterName),
    /// ALTER VIEW name ALTER COLUMN ... SET/DROP DEFAULT, RENAME COLUMN:
    /// ALTER TABLE's actions, under ALTER VIEW's name.
    AlterView(Box<ast::AlterTable>),
    /// CREATE MATERIALIZED VIEW (sqlparser's view), and whether WITH DATA
    /// (the default) rather than WITH NO DATA.
    CreateMatView(Box<ast::CreateView>, bool),
    /// REFRESH MATERIALIZED VIEW \[CONCURRENTLY\] name \[WITH \[NO\] DATA\].
    RefreshMatView(RefreshMatView),
    /// GRANT role TO role, REVOKE role FROM role.
    GrantRole(grant::GrantRole),
    /// ALTER DEFAULT PRIVILEGES.
    AlterDefaultPrivileges(grant::AlterDefaultPrivileges),
    /// GRANT / REVOKE ... ON TYPE | DOMAIN.
    GrantOnType(grant::GrantOnType),
    /// REASSIGN OWNED, DROP OWNED.
    Owned(grant::Owned),
    /// SET CONSTRAINTS { ALL | name \[, ...\] } { DEFERRED | IMMEDIATE }:
    /// the names (None for ALL) and DEFERRED.
    SetConstraints(Option<Vec<crate::catalog::ObjName>>, bool),
    /// DO: a PL/pgSQL block's code.
    Do(String),
    /// CREATE TRIGGER and the arguments of its function call.
    CreateTrigger(Box<ast::CreateTrigger>, Vec<String>),
    /// CREATE \[OR REPLACE\] PROCEDURE, read as the CREATE FUNCTION it
    /// spells but for its keyword and RETURNS.
    CreateProcedure(Box<ast::CreateFunction>),
    /// ALTER TRIGGER name ON table RENAME TO new_name.
    RenameTrigger(RenameTrigger),
    /// COMMENT ON FUNCTION | PROCEDURE (true) name\[(types)\] IS text
    /// (None for NULL).
    CommentOnFunction(Box<ast::FunctionDesc>, bool, Option<String>),
    /// FETCH or MOVE (sqlparser reads only some of their forms).
    Fetch(FetchStmt),
    /// CREATE DOMAIN.
    CreateDomain(Box<CreateDomain>),
    /// ALTER DOMAIN's actions on the domain itself (OWNER TO, RENAME TO
    /// and SET SCHEMA are [`Stmt::AlterOwner`] and [`Stmt::AlterName`]).
    AlterDomain(Box<AlterDomain>),
    /// DROP DOMAIN.
    DropDomain(DropDomain),
    /// ALTER TABLE ... ATTACH / DETACH PARTITION, ALTER INDEX ... ATTACH
    /// PARTITION.
    Partition(Box<PartitionCmd>),
    /// Only whitespace and comments.
    Empty,
}

impl Stmt {
    /// The name a `DEALLOCATE` drops (`all` for DEALLOCATE ALL), if it
    /// is one.
    pub fn deallocates(&self) -> Option<String> {
        match self {
            Stmt::Sql(s) => match s.as_ref() {
                ast::Statement::Deallocate { name, .. } => Some(crate::bind::ident(name)),
                _ => None,
            },
            _ => None,
        }
    }

    /// Where the name of the object a CREATE statement makes starts, for
    /// errors about the schema it goes to.
    pub fn created_name(&self) -> Option<sqlparser::tokenizer::Span> {
        let Stmt::Sql(s) = self else { return None };
        let name = match s.as_ref() {
            ast::Statement::CreateTable(ct) => &ct.name,
            ast::Statement::CreateView(cv) => &cv.name,
            ast::Statement::CreateSequence { name, .. }
            | ast::Statement::CreateType { name, .. } => name,
            _ => return None,
        };
        name.0.first().and_then(|p| p.as_ident()).map(|i| i.span)
    }

    /// The command a statement Strata parses itself (DDL, all of it)
    /// runs, as a read-only transaction's refusal names it; None for the
    /// others.
    pub fn own_command(&self) -> Option<&'static str> {
        Some(match self {
            Stmt::AlterSequence(_) => "ALTER SEQUENCE",
            Stmt::AlterIdentity(_) => "ALTER TABLE",
            Stmt::AlterOwner(a) => a.kind.tag(),
            Stmt::AlterName(a) => a.kind.tag(),
            Stmt::AlterView(_) => "ALTER VIEW",
            Stmt::CreateMatView(..) => "CREATE MATERIALIZED VIEW",
            Stmt::RefreshMatView(_) => "REFRESH MATERIALIZED VIEW",
            Stmt::GrantRole(g) if g.grant => "GRANT ROLE",
            Stmt::GrantRole(_) => "REVOKE ROLE",
            Stmt::AlterDefaultPrivileges(_) => "ALTER DEFAULT PRIVILEGES",
            Stmt::GrantOnType(g) if g.change.grant => "GRANT",
            Stmt::GrantOnType(_) => "REVOKE",
            Stmt::Owned(o) if o.to.is_some() => "REASSIGN OWNED",
            Stmt::Owned(_) => "DROP OWNED",
            Stmt::CreateTrigger(..) => "CREATE TRIGGER",
            Stmt::CreateProcedure(_) => "CREATE PROCEDURE",
            Stmt::CommentOnFunction(..) => "COMMENT",
            Stmt::RenameTrigger(_) => "ALTER TRIGGER",
            Stmt::CreateDomain(_) => "CREATE DOMAIN",
            Stmt::AlterDomain(_) => "ALTER DOMAIN",
            Stmt::DropDomain(_) => "DROP DOMAIN",
            Stmt::Partition(c) => c.tag(),
            Stmt::Sql(_)
            | Stmt::Copy(_)
            | Stmt::Maintenance(_)
            | Stmt::SetConstraints(..)
            | Stmt::Do(_)
            | Stmt::Fetch(_)
            | Stmt::Empty => return None,
        })
    }
}

/// FETCH \[direction\] \[FROM | IN\] cursor, or MOVE.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchStmt {
    /// Which rows.
    pub direction: crate::cursor::Direction,
    /// The cursor's name.
    pub cursor: String,
    /// MOVE: the cursor moves, no rows come back.
    pub moving: bool,
}

/// ALTER TRIGGER name ON table RENAME TO new_name.
#[derive(Debug, Clone, PartialEq)]
pub struct RenameTrigger {
    /// The trigger.
    pub name: String,
    /// Its table.
    pub table: ast::ObjectName,
    /// Its new name.
    pub new_name: String,
}

/// REFRESH MATERIALIZED VIEW.
#[derive(Debug, Clone, PartialEq)]
pub struct RefreshMatView {
    /// The materialized view.
    pub name: ast::ObjectName,
    /// CONCURRENTLY.
    pub concurrently: bool,
    /// WITH DATA (the default) rather than WITH NO DATA.
    pub data: bool,
}

/// Data format of a COPY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// PostgreSQL's text format (tab separated, `\N` for NULL).
    Text,
    /// CSV.
    Csv,
    /// PostgreSQL's binary format (signature, tuples of length-prefixed
    /// binary values, trailer).
    Binary,
}

/// A COPY statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyStmt {
    /// COPY (query) TO STDOUT: the query (then `table` is empty).
    pub query: Option<Box<ast::Statement>>,
    /// Table name.
    pub table: crate::catalog::ObjName,
    /// Column list (empty: all columns).
    pub columns: Vec<String>,
    /// FROM STDIN (true) or TO STDOUT (false).
    pub from: bool,
    /// Format.
    pub format: CopyFormat,
    /// Field delimiter.
    pub delimiter: char,
    /// NULL marker.
    pub null: String,
    /// CSV HEADER.
    pub header: bool,
}

/// One statement with its source text and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The statement's text.
    pub text: std::sync::Arc<str>,
    /// The whole query string it came from (pg_stat_activity's query).
    pub source: std::sync::Arc<str>,
    /// 0-based character offset of the text in the whole query string.
    pub offset: usize,
    /// The parsed form.
    pub stmt: Stmt,
}

/// One expression from SQL text Strata stored or generated (a default, a
/// CHECK, an index key), without statement splitting or positions.
pub fn expr_text(text: &str) -> std::result::Result<ast::Expr, ParserError> {
    Parser::new(&PostgreSqlDialect {}).try_with_sql(text)?.parse_expr()
}

/// One query from stored SQL text (a view's).
pub fn query_text(text: &str) -> std::result::Result<ast::Query, ParserError> {
    Ok(*Parser::new(&PostgreSqlDialect {}).try_with_sql(text)?.parse_query()?)
}

/// `INSERT INTO table query`, as CREATE TABLE ... AS fills its table.
pub fn insert_select(table: &ast::ObjectName, query: &ast::Query) -> Result<Stmt> {
    let Ok(ast::Statement::Insert(mut insert)) = statement_text("INSERT INTO t SELECT 1") else {
        bail!(InternalError, "the INSERT template did not parse");
    };
    insert.table = ast::TableObject::TableName(table.clone());
    insert.source = Some(Box::new(query.clone()));
    Ok(Stmt::Sql(Box::new(ast::Statement::Insert(insert))))
}

/// `SELECT ... INTO [TEMP] t FROM ...` is CREATE [TEMP] TABLE t AS SELECT
/// ... FROM ...: the statement rewritten so, or None for any other.
fn select_into(stmt: &ast::Statement) -> Result<Option<ast::Statement>> {
    let ast::Statement::Query(q) = stmt else { return Ok(None) };
    let ast::SetExpr::Select(sel) = q.body.as_ref() else { return Ok(None) };
    let Some(into) = sel.into.as_ref() else { return Ok(None) };
    let name = match into.targets.as_slice() {
        [ast::Expr::Identifier(i)] => ast::ObjectName::from(vec![i.clone()]),
        [ast::Expr::CompoundIdentifier(parts)] => ast::ObjectName::from(parts.clone()),
        _ => bail!(SyntaxError, "SELECT ... INTO takes one table name"),
    };
    let mut query = q.clone();
    if let ast::SetExpr::Select(sel) = query.body.as_mut() {
        sel.into = None;
    }
    let Ok(ast::Statement::CreateTable(mut ct)) = statement_text("CREATE TABLE t AS SELECT 1")
    else {
        bail!(InternalError, "the CREATE TABLE AS template did not parse");
    };
    ct.name = name;
    ct.temporary = into.temporary;
    ct.query = Some(query);
    Ok(Some(ast::Statement::CreateTable(ct)))
}

/// One statement from SQL text Strata generates (a template it fills in).
fn statement_text(text: &str) -> std::result::Result<ast::Statement, ParserError> {
    Parser::new(&PostgreSqlDialect {}).try_with_sql(text)?.parse_statement()
}

/// One type name from SQL text.
pub fn type_text(text: &str) -> std::result::Result<ast::DataType, ParserError> {
    Parser::new(&PostgreSqlDialect {}).try_with_sql(text)?.parse_data_type()
}

/// Splits and parses a query string.
pub fn parse(sql: &str) -> Result<Vec<Parsed>> {
    if sql.len() > MAX_QUERY_BYTES {
        bail!(ProgramLimitExceeded, "query string is too long");
    }
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql).tokenize_with_location().map_err(|e| {
        let mut er = err!(SyntaxError, "{}", e.message);
        if let Some(pos) = char_pos(sql, e.location.line, e.location.column) {
            er = er.with_position(pos as u32 + 1);
        }
        er
    })?;
    let line_starts = line_starts(sql);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        if t.token == Token::SemiColon || i == tokens.len() - 1 {
            let end = if t.token == Token::SemiColon { i } else { i + 1 };
            let piece = &tokens[start..end];
            let semi = if t.token == Token::SemiColon { Some(t) } else { None };
            if let Some(p) = parse_piece(sql, &line_starts, piece, semi)? {
                out.push(p);
            }
            start = i + 1;
        }
    }
    if out.is_empty() {
        out.push(Parsed { text: "".into(), source: "".into(), offset: 0, stmt: Stmt::Empty });
    }
    let source: std::sync::Arc<str> = sql.into();
    for p in &mut out {
        p.source = source.clone();
    }
    Ok(out)
}

fn line_starts(sql: &str) -> Vec<usize> {
    let mut v = vec![0];
    for (i, c) in sql.char_indices() {
        if c == '\n' {
            v.push(i + 1);
        }
    }
    v
}

/// Byte offset of a 1-based (line, column) location, columns counting chars.
fn byte_pos(sql: &str, starts: &[usize], line: u64, col: u64) -> Option<usize> {
    let ls = *starts.get((line as usize).checked_sub(1)?)?;
    let rest = sql.get(ls..)?;
    match rest.char_indices().nth((col as usize).checked_sub(1)?) {
        Some((i, _)) => Some(ls + i),
        None => Some(sql.len()),
    }
}

pub(crate) fn char_pos(sql: &str, line: u64, col: u64) -> Option<usize> {
    let starts = line_starts(sql);
    let b = byte_pos(sql, &starts, line, col)?;
    Some(sql.get(..b)?.chars().count())
}

fn parse_piece(
    sql: &str,
    starts: &[usize],
    piece: &[TokenWithSpan],
    semi: Option<&TokenWithSpan>,
) -> Result<Option<Parsed>> {
    let words: Vec<&TokenWithSpan> =
        piece.iter().filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF)).collect();
    let (Some(first), Some(last)) = (words.first(), words.last()) else { return Ok(None) };
    let b0 = byte_pos(sql, starts, first.span.start.line, first.span.start.column).unwrap_or(0);
    let b1 = byte_pos(sql, starts, last.span.end.line, last.span.end.column).unwrap_or(sql.len());
    let text: std::sync::Arc<str> = sql.get(b0..b1.max(b0)).unwrap_or("").into();
    // `source` is set to the whole string by the caller.
    let offset = sql.get(..b0).map(|s| s.chars().count()).unwrap_or(0);
    check_depth(piece)?;
    if let Some(rewritten) = create_user_as_role(sql, starts, &words) {
        let end =
            byte_pos(sql, starts, last.span.end.line, last.span.end.column).unwrap_or(sql.len());
        let body = rewritten
            .get(..rewritten.len() - (sql.len() - end).min(rewritten.len()))
            .unwrap_or(&rewritten)
            .to_string();
        let dialect = PostgreSqlDialect {};
        let stmt = Parser::new(&dialect)
            .try_with_sql(&body)
            .and_then(|mut p| p.parse_statement())
            .map_err(|e| syntax_error(&body, e, None))?;
        let stmt = Stmt::Sql(Box::new(stmt));
        return Ok(Some(Parsed { source: text.clone(), text, offset, stmt }));
    }
    let own = match utility(sql, starts, &words)? {
        Some(s) => Some(s),
        None => own_syntax(sql, piece, &words, semi)?,
    };
    let stmt = match own {
        Some(s) => s,
        None => {
            clause_after_from(sql, &words)?;
            let dialect = PostgreSqlDialect {};
            let mut parser = Parser::new(&dialect).with_recursion_limit(MAX_RECURSION);
            let tokens = top_level_lock_clause(sql_tokens(piece))?;
            let tokens = drop_expression(conflict_inference(current_of(tokens)));
            let tokens = variadic_arguments(catalog_operators(tokens));
            let tokens = merge_default_values(merge_join_source(overriding(tokens)));
            let tokens = table_queries(identity_options(tokens));
            let tokens = typed_literals(without_only(lock_clauses(tokens)));
            let tokens = trim_without_characters(substring_similar(tokens));
            let tokens = collation_for(between_symmetric(tokens));
            let tokens = subscripted_targets(sql, starts, tokens);
            let tokens = group_quantifier(type_references(field_wildcards(tokens)));
            let tokens = create_table_like(sql, drop_index_concurrently(tokens))?;
            let (tokens, check_option) = view_check_option(tokens);
            let (tokens, on_only) = index_on_only(tokens);
            parser = parser.with_tokens_with_locations(tokens);
            let mut stmt = parser.parse_statement().map_err(|e| syntax_error(sql, e, semi))?;
            if let (true, ast::Statement::CreateIndex(ci)) = (on_only, &mut stmt) {
                ci.with.push(quoted_call(ON_ONLY, vec![]));
            }
            if let (Some(option), ast::Statement::CreateView(cv)) = (check_option, &mut stmt) {
                let kv = ast::SqlOption::KeyValue {
                    key: ast::Ident::new("check_option"),
                    value: ast::Expr::value(ast::Value::SingleQuotedString(option.into())),
                };
                match &mut cv.options {
                    ast::CreateTableOptions::With(v) => v.push(kv),
                    other => *other = ast::CreateTableOptions::With(vec![kv]),
                }
            }
            // Anything left over (other than EOF) is a syntax error.
            let next = parser.peek_token();
            if next.token != Token::EOF {
                let mut e = err!(SyntaxError, "syntax error at or near \"{}\"", next.token);
                if let Some(p) = char_pos(sql, next.span.start.line, next.span.start.column) {
                    e = e.with_position(p as u32 + 1);
                }
                return Err(e);
            }
            if let Some(create) = select_into(&stmt)? {
                stmt = create;
            }
            spread_tuple_sets(&mut stmt)?;
            // CREATE TABLE t (a int) AS ...: PostgreSQL takes only names
            // there (table_as_with_names); sqlparser also reads types.
            if let ast::Statement::CreateTable(ct) = &stmt {
                if ct.query.is_some() && !ct.columns.is_empty() {
                    let at = words.iter().find(|t| keyword(t, Keyword::AS));
                    let mut e = err!(SyntaxError, "syntax error at or near \"as\"");
                    let pos =
                        at.and_then(|t| char_pos(sql, t.span.start.line, t.span.start.column));
                    if let Some(p) = pos {
                        e = e.with_position(p as u32 + 1);
                    }
                    return Err(e);
                }
            }
            Stmt::Sql(Box::new(stmt))
        }
    };
    Ok(Some(Parsed { source: text.clone(), text, offset, stmt }))
}

/// The tokens sqlparser reads: single-line comments dropped, and `top` an
/// ordinary name (sqlparser reads `SELECT top ...` as SQL Server's TOP
/// clause in every dialect, so `select top.x from t top` failed;
/// PostgreSQL has no such key word).
fn sql_tokens(piece: &[TokenWithSpan]) -> Vec<TokenWithSpan> {
    piece
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(Whitespace::SingleLineComment { .. })))
        .map(|t| {
            let mut t = t.clone();
            if let Token::Word(w) = &mut t.token {
                if w.keyword == Keyword::TOP && w.quote_style.is_none() {
                    w.keyword = Keyword::NoKeyword;
                }
            }
            t
        })
        .collect()
}

/// Rewrites `inet '...'`, `cidr '...'` and `name '...'` for a name that
/// is no keyword (a user-defined type's) as `'...'::inet`: sqlparser reads
/// a type name before a string literal only for the types it knows. A
/// name right after another name is left alone (an alias or an option).
fn typed_literals(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid = |t: &TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        let prev = out.iter().rev().find(|t| solid(t));
        let after_name = prev
            .is_some_and(|p| matches!(&p.token, Token::Word(w) if w.keyword == Keyword::NoKeyword));
        let is_type = matches!(&t.token, Token::Word(w) if (w.quote_style.is_none()
            && (["inet", "cidr", "name"].iter().any(|k| w.value.eq_ignore_ascii_case(k))
                || (w.keyword == Keyword::NoKeyword && !after_name)))
            || (w.quote_style == Some('"') && w.value == "char"));
        // Not a name after `::`, `.` or AS (a cast or an alias).
        let after_name_context = prev.is_some_and(|p| {
            matches!(p.token, Token::DoubleColon | Token::Period)
                || matches!(&p.token, Token::Word(w) if w.keyword == Keyword::AS)
        });
        let next = tokens[i + 1..].iter().position(solid).map(|j| i + 1 + j);
        let literal = next.filter(|&j| matches!(tokens[j].token, Token::SingleQuotedString(_)));
        match literal {
            Some(j) if is_type && !after_name_context => {
                out.push(tokens[j].clone());
                out.push(TokenWithSpan { token: Token::DoubleColon, span: t.span });
                out.push(t.clone());
                i = j + 1;
            }
            _ => {
                out.push(t.clone());
                i += 1;
            }
        }
    }
    out
}

/// The position of the `)` that closes the `(` at `open`.
fn closing_paren(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0;
    (open..tokens.len()).find(|&i| {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        depth == 0
    })
}

/// The position of the `(` that the `)` at `close` closes.
fn opening_paren(tokens: &[TokenWithSpan], close: usize) -> Option<usize> {
    let mut depth = 0;
    (0..=close).rev().find(|&i| {
        match tokens[i].token {
            Token::RParen => depth += 1,
            Token::LParen => depth -= 1,
            _ => {}
        }
        depth == 0
    })
}

/// True if the statement's first token (after whitespace and comments) is
/// the unquoted word `w`: a cheap test before a rewrite that needs more.
fn starts_with_word(tokens: &[TokenWithSpan], w: &str) -> bool {
    tokens.iter().find(|t| !matches!(t.token, Token::Whitespace(_))).is_some_and(|t| {
        matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    })
}

/// The positions of the tokens that are not whitespace.
fn solid(tokens: &[TokenWithSpan]) -> Vec<usize> {
    (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect()
}

/// The function call `WHERE CURRENT OF cursor` is read as (sqlparser has
/// no such clause): the planner makes it a scan of the cursor's row.
pub const CURRENT_OF: &str = "pg_current_of";

/// Rewrites `WHERE CURRENT OF name` as `WHERE "pg_current_of"(name)`: the
/// name stays a name, which PL/pgSQL replaces by its variable's value
/// when it is one.
fn current_of(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    // Most statements have no CURRENT: nothing to index then.
    if !tokens.iter().any(|t| keyword(t, Keyword::CURRENT)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let kw = |i: usize, k: Keyword| tokens.get(i).is_some_and(|t| keyword(t, k));
    let mut at = None;
    for w in solid.windows(4) {
        if kw(w[0], Keyword::WHERE) && kw(w[1], Keyword::CURRENT) && kw(w[2], Keyword::OF) {
            at = Some((w[1], w[3]));
            break;
        }
    }
    let Some((from, name)) = at else { return tokens };
    let mut out = tokens;
    let span = out[from].span;
    let call = vec![
        TokenWithSpan { token: Token::make_word(CURRENT_OF, Some('"')), span },
        TokenWithSpan { token: Token::LParen, span },
        out[name].clone(),
        TokenWithSpan { token: Token::RParen, span },
    ];
    out.splice(from..=name, call);
    out
}

/// The arguments of a call of parser marker `name` (a function name the
/// rewrites here write quoted, as [`VARIADIC`] or [`CURRENT_OF`]); None
/// for any other expression.
pub fn marker_args<'e>(e: &'e ast::Expr, name: &str) -> Option<&'e [ast::FunctionArg]> {
    let ast::Expr::Function(f) = e else { return None };
    let [part] = f.name.0.as_slice() else { return None };
    let ident = part.as_ident()?;
    if ident.value != name || ident.quote_style != Some('"') {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) => Some(&l.args),
        _ => None,
    }
}

/// The function `ALTER COLUMN c DROP EXPRESSION [IF EXISTS]` is read as a
/// default of (sqlparser has no such operation), its argument true with
/// IF EXISTS.
pub const DROP_EXPRESSION: &str = "pg_drop_expression";

/// Rewrites `DROP EXPRESSION [IF EXISTS]` (of ALTER TABLE ... ALTER
/// COLUMN) as `SET DEFAULT "pg_drop_expression"(if_exists)`.
fn drop_expression(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let word = |t: &TokenWithSpan, w: &str| matches!(&t.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w));
    if !tokens.iter().any(|t| word(t, "expression")) {
        return tokens;
    }
    let mut out = tokens;
    loop {
        let solid = solid(&out);
        let Some(k) = solid
            .windows(2)
            .position(|w| word(&out[w[0]], "drop") && word(&out[w[1]], "expression"))
        else {
            return out;
        };
        let (from, mut to) = (solid[k], solid[k + 1]);
        let if_exists = matches!(
            (solid.get(k + 2), solid.get(k + 3)),
            (Some(&a), Some(&b)) if word(&out[a], "if") && word(&out[b], "exists")
        );
        if if_exists {
            to = solid[k + 3];
        }
        let span = out[from].span;
        let t = |token: Token| TokenWithSpan { token, span };
        let call = vec![
            t(Token::make_keyword("SET")),
            t(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            t(Token::make_keyword("DEFAULT")),
            t(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            t(Token::make_word(DROP_EXPRESSION, Some('"'))),
            t(Token::LParen),
            t(Token::make_keyword(if if_exists { "TRUE" } else { "FALSE" })),
            t(Token::RParen),
        ];
        out.splice(from..=to, call);
    }
}

/// The column list a MERGE's `INSERT DEFAULT VALUES` is read as
/// (sqlparser has no such action), with `VALUES (DEFAULT)`.
pub const DEFAULT_VALUES: &str = "pg_default_values";

/// Rewrites a MERGE's `INSERT DEFAULT VALUES` as `INSERT
/// ("pg_default_values") VALUES (DEFAULT)`.
fn merge_default_values(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !is_merge(&tokens) {
        return tokens;
    }
    let solid = solid(&tokens);
    let kw = |i: usize, k: Keyword| keyword(&tokens[i], k);
    let found: Vec<(usize, usize)> = solid
        .windows(3)
        .filter(|w| {
            kw(w[0], Keyword::INSERT) && kw(w[1], Keyword::DEFAULT) && kw(w[2], Keyword::VALUES)
        })
        .map(|w| (w[1], w[2]))
        .collect();
    let mut out = tokens;
    // From the last, so the earlier positions stay put.
    for (from, to) in found.into_iter().rev() {
        let span = out[from].span;
        let t = |token: Token| TokenWithSpan { token, span };
        let list = vec![
            t(Token::LParen),
            t(Token::make_word(DEFAULT_VALUES, Some('"'))),
            t(Token::RParen),
            t(Token::Whitespace(Whitespace::Space)),
            t(Token::make_keyword("VALUES")),
            t(Token::LParen),
            t(Token::make_keyword("DEFAULT")),
            t(Token::RParen),
        ];
        out.splice(from..=to, list);
    }
    out
}

/// The column-list markers `OVERRIDING SYSTEM VALUE` and `OVERRIDING USER
/// VALUE` of INSERT (also MERGE's) are read as (sqlparser has no such
/// clause): the first name of the list.
pub const OVERRIDING_SYSTEM: &str = "pg_overriding_system_value";
pub const OVERRIDING_USER: &str = "pg_overriding_user_value";

/// Rewrites an INSERT's `[(cols)] OVERRIDING {SYSTEM | USER} VALUE` as
/// `("pg_overriding_..._value", cols)`: the planner takes the marker off
/// the list again.
fn overriding(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    // Not a key word of sqlparser's.
    let is_overriding = |t: &TokenWithSpan| {
        matches!(&t.token, Token::Word(w)
            if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("overriding"))
    };
    // Only in an INSERT (also MERGE's).
    if !tokens.iter().any(|t| keyword(t, Keyword::INSERT)) || !tokens.iter().any(is_overriding) {
        return tokens;
    }
    let solid = solid(&tokens);
    let kw = |i: usize, k: Keyword| keyword(&tokens[i], k);
    let found: Vec<(usize, usize, &str)> = solid
        .windows(4)
        .filter(|w| is_overriding(&tokens[w[1]]) && kw(w[3], Keyword::VALUE))
        .filter_map(|w| {
            let marker = match () {
                _ if kw(w[2], Keyword::SYSTEM) => OVERRIDING_SYSTEM,
                _ if kw(w[2], Keyword::USER) => OVERRIDING_USER,
                _ => return None,
            };
            Some((w[0], w[1], marker))
        })
        .collect();
    let mut out = tokens;
    // From the last, so the earlier positions stay put.
    for (before, at, marker) in found.into_iter().rev() {
        let span = out[at].span;
        let t = |token: Token| TokenWithSpan { token, span };
        let name = t(Token::make_word(marker, Some('"')));
        let end = solid.iter().position(|&i| i == at).map_or(at, |k| solid[k + 2]);
        out.drain(at..=end);
        if !matches!(out[before].token, Token::RParen) {
            out.splice(at..at, [t(Token::LParen), name, t(Token::RParen)]);
            continue;
        }
        // The column list's opening parenthesis.
        if let Some(open) = opening_paren(&out, before) {
            out.splice(open + 1..open + 1, [name, t(Token::Comma)]);
        }
    }
    out
}

/// Puts the options of `AS IDENTITY (options)` in the one order sqlparser
/// reads them in (INCREMENT, MINVALUE, MAXVALUE, START, CACHE, CYCLE);
/// PostgreSQL takes any order.
fn identity_options(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::IDENTITY)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let lists: Vec<(usize, usize)> = solid
        .windows(3)
        .filter(|w| {
            keyword(&tokens[w[0]], Keyword::AS)
                && keyword(&tokens[w[1]], Keyword::IDENTITY)
                && tokens[w[2]].token == Token::LParen
        })
        .filter_map(|w| Some((w[2] + 1, closing_paren(&tokens, w[2])?)))
        .collect();
    let mut out = tokens;
    for (from, to) in lists.into_iter().rev() {
        let rank = |i: usize, list: &[TokenWithSpan]| {
            let next = list[i + 1..].iter().find(|t| !matches!(t.token, Token::Whitespace(_)));
            let k = match (&list[i], next) {
                (t, Some(n)) if keyword(t, Keyword::NO) => n,
                (t, _) => t,
            };
            [
                Keyword::INCREMENT,
                Keyword::MINVALUE,
                Keyword::MAXVALUE,
                Keyword::START,
                Keyword::CACHE,
                Keyword::CYCLE,
            ]
            .iter()
            .position(|&w| keyword(k, w))
        };
        let list = &out[from..to];
        // Each option runs from its key word (NO's, for NO MINVALUE and
        // the like) to the next option's; a list whose first word is no
        // option's stays as written.
        let mut groups: Vec<(usize, Vec<TokenWithSpan>)> = Vec::new();
        let mut after_no = false;
        let mut unknown = false;
        for (i, t) in list.iter().enumerate() {
            let space = matches!(t.token, Token::Whitespace(_));
            match (rank(i, list).filter(|_| !after_no), groups.last_mut()) {
                (Some(r), _) => groups.push((r, vec![t.clone()])),
                (None, Some(g)) => g.1.push(t.clone()),
                (None, None) => unknown |= !space,
            }
            if !space {
                after_no = keyword(t, Keyword::NO);
            }
        }
        if unknown {
            continue;
        }
        groups.sort_by_key(|g| g.0);
        let span = out[from].span;
        let mut sorted = Vec::new();
        for (_, g) in groups {
            sorted.push(TokenWithSpan { token: Token::Whitespace(Whitespace::Space), span });
            sorted.extend(g);
        }
        out.splice(from..to, sorted);
    }
    out
}

/// Rewrites the query `TABLE name` as `SELECT * FROM name`: sqlparser
/// reads it only in a few places, and there takes three tokens whatever
/// follows. TABLE is a query where a query starts: at the start of the
/// statement, after `(`, AS, FOR, EXPLAIN, a set operator (or its ALL /
/// DISTINCT), after a WITH list's `)`, and anywhere in an INSERT (TABLE
/// is a reserved word, so there it starts the inserted query).
fn table_queries(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::TABLE)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let first = solid.first().map(|&i| &tokens[i]);
    let with = first.is_some_and(|t| keyword(t, Keyword::WITH));
    let insert = first.is_some_and(|t| keyword(t, Keyword::INSERT));
    let at: Vec<usize> = solid
        .iter()
        .enumerate()
        .filter(|&(k, &i)| {
            keyword(&tokens[i], Keyword::TABLE)
                && solid.get(k + 1).is_some_and(|&n| matches!(tokens[n].token, Token::Word(_)))
                && match k.checked_sub(1).map(|p| &tokens[solid[p]]) {
                    None => true,
                    Some(_) if insert => true,
                    Some(p) => {
                        matches!(p.token, Token::LParen)
                            || (with && matches!(p.token, Token::RParen))
                            || [
                                Keyword::AS,
                                Keyword::FOR,
                                Keyword::EXPLAIN,
                                Keyword::UNION,
                                Keyword::INTERSECT,
                                Keyword::EXCEPT,
                                Keyword::ALL,
                                Keyword::DISTINCT,
                            ]
                            .iter()
                            .any(|&k| keyword(p, k))
                    }
                }
        })
        .map(|(_, &i)| i)
        .collect();
    let mut out = tokens;
    for i in at.into_iter().rev() {
        let span = out[i].span;
        let t = |token: Token| TokenWithSpan { token, span };
        let select = [
            t(Token::make_keyword("SELECT")),
            t(Token::Whitespace(Whitespace::Space)),
            t(Token::Mul),
            t(Token::Whitespace(Whitespace::Space)),
            t(Token::make_keyword("FROM")),
        ];
        out.splice(i..=i, select);
    }
    out
}

/// True if the statement's tokens start with MERGE (checked before any
/// other work of the MERGE rewrites, which every statement passes).
fn is_merge(tokens: &[TokenWithSpan]) -> bool {
    let first = tokens.iter().find(|t| !matches!(t.token, Token::Whitespace(_)));
    first.is_some_and(|t| keyword(t, Keyword::MERGE))
}

/// Parenthesizes a MERGE's source when it is a join (`USING a JOIN b ON
/// ... ON cond`): sqlparser reads one table factor there. The merge's
/// condition is the last ON at the top level before the first WHEN.
fn merge_join_source(mut tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !is_merge(&tokens) {
        return tokens;
    }
    let solid = solid(&tokens);
    let (mut depth, mut using, mut on, mut join) = (0i32, None, None, false);
    for &i in &solid {
        let t = &tokens[i];
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth != 0 => {}
            _ if using.is_none() && keyword(t, Keyword::USING) => using = Some(i),
            _ if using.is_none() => {}
            _ if keyword(t, Keyword::WHEN) => break,
            _ if keyword(t, Keyword::ON) => on = Some(i),
            _ if keyword(t, Keyword::JOIN) && on.is_none() => join = true,
            _ => {}
        }
    }
    let (Some(using), Some(on), true) = (using, on, join) else { return tokens };
    let span = tokens[using].span;
    tokens.insert(on, TokenWithSpan { token: Token::RParen, span });
    tokens.insert(using + 1, TokenWithSpan { token: Token::LParen, span });
    tokens
}

/// Rewrites `OPERATOR(pg_catalog.op)` (and `OPERATOR(op)`), as psql and
/// pg_dump write operators, as plain `op`: Strata's operators are all
/// pg_catalog's, and sqlparser reads ANY/ALL only after a plain one.
fn catalog_operators(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let operator = |t: &TokenWithSpan| keyword(t, Keyword::OPERATOR);
    if !tokens.iter().any(operator) {
        return tokens;
    }
    let mut out = tokens;
    let mut from = 0;
    while let Some(at) = out.iter().skip(from).position(operator) {
        let at = at + from;
        from = at + 1;
        let solid = solid(&out[at..]);
        let tok = |k: usize| solid.get(k).map(|&i| &out[at + i].token);
        if tok(1) != Some(&Token::LParen) {
            continue;
        }
        let mut k = 2;
        if let (Some(Token::Word(w)), Some(Token::Period)) = (tok(2), tok(3)) {
            if !w.value.eq_ignore_ascii_case("pg_catalog") {
                continue;
            }
            k = 4;
        }
        let start = k;
        while tok(k).is_some_and(|t| !matches!(t, Token::RParen | Token::Word(_) | Token::LParen)) {
            k += 1;
        }
        if k == start || tok(k) != Some(&Token::RParen) {
            continue;
        }
        let ops: Vec<TokenWithSpan> =
            solid[start..k].iter().map(|&i| out[at + i].clone()).collect();
        let end = at + solid[k];
        out.splice(at..=end, ops);
    }
    out
}

/// The function `VARIADIC array` in a call's argument list is read as
/// (sqlparser has no such argument): the binder passes its array as the
/// variadic parameter's whole value.
pub const VARIADIC: &str = "pg_variadic";

/// Rewrites a call's `VARIADIC expr` argument as `"pg_variadic"(expr)`,
/// leaving alone the VARIADIC of a parameter list (after FUNCTION,
/// PROCEDURE, AGGREGATE or ROUTINE and the routine's name).
fn variadic_arguments(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::VARIADIC)) {
        return tokens;
    }
    let mut out = tokens;
    let mut from = 0;
    while let Some(at) = out.iter().skip(from).position(|t| keyword(t, Keyword::VARIADIC)) {
        let at = at + from;
        from = at + 1;
        let solid = solid(&out[..at]);
        let prev = solid.last().map(|&i| &out[i].token);
        if !matches!(prev, Some(Token::LParen | Token::Comma | Token::RArrow)) {
            continue;
        }
        // The call's opening parenthesis, and the name before it.
        let mut depth = 0;
        let mut open = None;
        for &i in solid.iter().rev() {
            match out[i].token {
                Token::RParen => depth += 1,
                Token::LParen if depth == 0 => {
                    open = Some(i);
                    break;
                }
                Token::LParen => depth -= 1,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let before: Vec<&Token> = solid
            .iter()
            .rev()
            .filter(|&&i| i < open)
            .map(|&i| &out[i].token)
            .take_while(|t| matches!(t, Token::Word(_) | Token::Period))
            .collect();
        let routine = before.iter().any(|t| {
            matches!(t, Token::Word(w) if w.quote_style.is_none()
                && (matches!(w.keyword, Keyword::FUNCTION | Keyword::PROCEDURE | Keyword::AGGREGATE)
                    || w.value.eq_ignore_ascii_case("routine")))
        });
        if routine || before.is_empty() {
            continue;
        }
        // The argument runs to the call's closing parenthesis or a comma.
        let mut depth = 0;
        let mut end = None;
        for (i, t) in out.iter().enumerate().skip(at + 1) {
            match t.token {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket if depth > 0 => depth -= 1,
                Token::RParen | Token::Comma if depth == 0 => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let Some(end) = end else { continue };
        wrap_in_marker(&mut out, at, end, VARIADIC);
    }
    out
}

/// What starts the constraint name an ON CONFLICT inference sqlparser
/// cannot read is carried in (see `conflict_inference`).
pub const INFERENCE: char = '\u{1}';

/// Rewrites an ON CONFLICT target sqlparser reads only as column names,
/// `(expression, ...) [WHERE predicate]`, as `ON CONSTRAINT "<INFERENCE>
/// elements <INFERENCE> predicate"`: the planner reads the text back.
fn conflict_inference(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::CONFLICT)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let kw = |i: usize, k: Keyword| tokens.get(i).is_some_and(|t| keyword(t, k));
    let Some(at) = solid.windows(3).position(|w| {
        kw(w[0], Keyword::ON) && kw(w[1], Keyword::CONFLICT) && tokens[w[2]].token == Token::LParen
    }) else {
        return tokens;
    };
    let open = solid[at + 2];
    let Some(close) = closing_paren(&tokens, open) else { return tokens };
    let text = |r: std::ops::Range<usize>| {
        tokens[r].iter().map(|t| t.token.to_string()).collect::<String>()
    };
    let elements = text(open + 1..close);
    let next = solid.iter().copied().find(|&i| i > close);
    let (predicate, end) = match next {
        Some(w) if kw(w, Keyword::WHERE) => {
            let mut depth = 0;
            let mut end = tokens.len();
            for (i, t) in tokens.iter().enumerate().skip(w + 1) {
                match t.token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth -= 1,
                    _ if depth == 0 && keyword(t, Keyword::DO) => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            (Some(text(w + 1..end)), end)
        }
        _ => (None, close + 1),
    };
    let plain = tokens[open + 1..close]
        .iter()
        .all(|t| matches!(t.token, Token::Word(_) | Token::Comma | Token::Whitespace(_)));
    // (An empty WHERE is left to sqlparser's syntax error.)
    if (plain && predicate.is_none()) || predicate.as_ref().is_some_and(|p| p.trim().is_empty()) {
        return tokens;
    }
    let name = format!("{INFERENCE}{elements}{INFERENCE}{}", predicate.unwrap_or_default());
    let span = tokens[open].span;
    let mut out = tokens;
    let target = vec![
        TokenWithSpan { token: Token::make_keyword("ON"), span },
        TokenWithSpan { token: Token::Whitespace(Whitespace::Space), span },
        TokenWithSpan { token: Token::make_keyword("CONSTRAINT"), span },
        TokenWithSpan { token: Token::Whitespace(Whitespace::Space), span },
        TokenWithSpan { token: Token::make_word(&name, Some('"')), span },
        TokenWithSpan { token: Token::Whitespace(Whitespace::Space), span },
    ];
    out.splice(open..end, target);
    out
}

/// Drops `ONLY` where it precedes a table name after FROM, JOIN or UPDATE.
/// ONLY keeps a query off a table's inheritance children; Strata has no
/// inheritance, so the word changes nothing. (ONLY is reserved in
/// PostgreSQL, so unquoted it can never be the table's own name.)
fn without_only(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        let prev = out.iter().rev().find(|t| !matches!(t.token, Token::Whitespace(_)));
        let after_from = prev.is_some_and(|p| {
            matches!(&p.token, Token::Word(w) if w.quote_style.is_none()
                && matches!(w.keyword, Keyword::FROM | Keyword::JOIN | Keyword::UPDATE))
        });
        let next = tokens[i + 1..].iter().find(|t| !matches!(t.token, Token::Whitespace(_)));
        let before_name = next.is_some_and(|n| matches!(n.token, Token::Word(_)));
        let only = matches!(&t.token, Token::Word(w) if w.quote_style.is_none()
            && w.keyword == Keyword::ONLY);
        if !(only && after_from && before_name) {
            out.push(t.clone());
        }
    }
    out
}

/// Rewrites `GROUP BY ALL` as `GROUP BY` (ALL is the default) and `GROUP
/// BY DISTINCT` as `GROUP BY "pg_group_distinct"(), ...`: sqlparser reads
/// neither quantifier (its GROUP BY ALL is another dialect's clause).
fn group_quantifier(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::GROUP)) {
        return tokens;
    }
    let quantifier = |t: &TokenWithSpan| keyword(t, Keyword::ALL) || keyword(t, Keyword::DISTINCT);
    let mut out = tokens;
    let mut from = 0;
    loop {
        let solid = solid(&out);
        let Some(w) = (from..solid.len().saturating_sub(2)).find(|&i| {
            keyword(&out[solid[i]], Keyword::GROUP)
                && keyword(&out[solid[i + 1]], Keyword::BY)
                && quantifier(&out[solid[i + 2]])
        }) else {
            return out;
        };
        from = w + 1;
        let q = solid[w + 2];
        let span = out[q].span;
        let t = |token: Token| TokenWithSpan { token, span };
        let with = if keyword(&out[q], Keyword::ALL) {
            vec![]
        } else {
            let marker = crate::select::grouping::GROUP_DISTINCT;
            vec![
                t(Token::make_word(marker, Some('"'))),
                t(Token::LParen),
                t(Token::RParen),
                t(Token::Comma),
            ]
        };
        out.splice(q..=q, with);
    }
}

/// Takes `CREATE TABLE t (LIKE s INCLUDING x EXCLUDING y ...)`'s options
/// out of the parentheses, which sqlparser does not read, and passes them
/// as `WITH ("pg_like_options" = 'n')` (see ddl/like.rs).
fn create_table_like(sql: &str, tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>> {
    if !starts_with_word(&tokens, "create") {
        return Ok(tokens);
    }
    let solid = solid(&tokens);
    let word_at = |k: usize| match solid.get(k).map(|&i| &tokens[i].token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    if word_at(0).as_deref() != Some("create") {
        return Ok(tokens);
    }
    let Some(table) = (1..4).find(|&k| word_at(k).as_deref() == Some("table")) else {
        return Ok(tokens);
    };
    let Some(open) = (table + 1..solid.len()).find(|&k| tokens[solid[k]].token == Token::LParen)
    else {
        return Ok(tokens);
    };
    if word_at(open + 1).as_deref() != Some("like") {
        return Ok(tokens);
    }
    let Some(first) = (open + 2..solid.len())
        .find(|&k| matches!(word_at(k).as_deref(), Some("including" | "excluding")))
    else {
        return Ok(tokens);
    };
    let (mut bits, mut k) = (0u8, first);
    while let Some(sign) = word_at(k).filter(|w| w == "including" || w == "excluding") {
        let opt = word_at(k + 1).unwrap_or_default();
        let Some(b) = crate::ddl::like::option_bits(&opt) else {
            let at = solid.get(k + 1).map(|&i| &tokens[i]);
            let near = at.map(|t| t.token.to_string()).unwrap_or_default();
            let mut e = err!(SyntaxError, "syntax error at or near \"{near}\"");
            if let Some(p) = at.and_then(|t| char_pos(sql, t.span.start.line, t.span.start.column))
            {
                e = e.with_position(p as u32 + 1);
            }
            return Err(e);
        };
        bits = if sign == "including" { bits | b } else { bits & !b };
        k += 2;
    }
    if solid.get(k).map(|&i| &tokens[i].token) != Some(&Token::RParen) {
        return Ok(tokens);
    }
    let (from, close) = (solid[first], solid[k]);
    let span = tokens[close].span;
    let t = |token: Token| TokenWithSpan { token, span };
    let marker = [
        t(Token::Whitespace(Whitespace::Space)),
        t(Token::make_keyword("WITH")),
        t(Token::LParen),
        t(Token::make_word(crate::ddl::like::MARKER, Some('"'))),
        t(Token::Eq),
        t(Token::SingleQuotedString(bits.to_string())),
        t(Token::RParen),
    ];
    let mut out = tokens;
    out.splice(close + 1..close + 1, marker);
    out.drain(from..close);
    Ok(out)
}

/// Drops CONCURRENTLY from `DROP INDEX CONCURRENTLY ...`, which sqlparser
/// does not read (the session refuses it inside a transaction block, see
/// [`concurrently`]).
fn drop_index_concurrently(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !starts_with_word(&tokens, "drop") {
        return tokens;
    }
    let solid = solid(&tokens);
    let word = |k: usize, w: &str| {
        solid.get(k).is_some_and(|&i| {
            matches!(&tokens[i].token, Token::Word(x)
            if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
        })
    };
    if !(word(0, "drop") && word(1, "index") && word(2, "concurrently")) {
        return tokens;
    }
    let at = solid[2];
    let mut out = tokens;
    out.remove(at);
    out
}

/// `CREATE INDEX CONCURRENTLY` or `DROP INDEX CONCURRENTLY`: the statement
/// PostgreSQL refuses inside a transaction block, if `p` is one.
pub fn concurrently(p: &Parsed) -> Option<&'static str> {
    if let Stmt::Partition(c) = &p.stmt {
        let concurrent = c.action == PartitionAction::Detach(Some(true));
        return concurrent.then_some("ALTER TABLE ... DETACH CONCURRENTLY");
    }
    let Stmt::Sql(s) = &p.stmt else { return None };
    match s.as_ref() {
        ast::Statement::CreateIndex(c) if c.concurrently => Some("CREATE INDEX CONCURRENTLY"),
        ast::Statement::Drop { object_type: ast::ObjectType::Index, .. } => {
            let mut words = p.text.split_whitespace().skip(2);
            words
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("concurrently"))
                .then_some("DROP INDEX CONCURRENTLY")
        }
        _ => None,
    }
}

/// Rewrites `substring(s SIMILAR p ESCAPE e)` as `substring(s,
/// similar_to_escape(p, e))`, which is how PostgreSQL defines it: the
/// regular expression form returns the part between the escape-double-
/// quotes. sqlparser does not read the SIMILAR form.
fn substring_similar(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::SIMILAR)) {
        return tokens;
    }
    let mut out = tokens;
    let mut from = 0;
    while let Some(at) = (from..out.len()).find(|&i| keyword(&out[i], Keyword::SUBSTRING)) {
        from = at + 1;
        let Some(&open) = solid(&out[at + 1..]).first().map(|i| i + at + 1).as_ref() else { break };
        if out[open].token != Token::LParen {
            continue;
        }
        let Some(close) = closing_paren(&out, open) else { break };
        let mut depth = 0;
        let (mut similar, mut escape) = (None, None);
        for (i, t) in out.iter().enumerate().take(close).skip(open + 1) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth > 0 => {}
                _ if similar.is_none() && keyword(t, Keyword::SIMILAR) => similar = Some(i),
                _ if similar.is_some() && keyword(t, Keyword::ESCAPE) => escape = Some(i),
                _ => {}
            }
        }
        let (Some(similar), Some(escape)) = (similar, escape) else { continue };
        let t = |token: Token, at: usize| TokenWithSpan { token, span: out[at].span };
        let (closing, comma) = (t(Token::RParen, close), t(Token::Comma, escape));
        let call = [
            t(Token::Comma, similar),
            t(Token::make_word("similar_to_escape", None), similar),
            t(Token::LParen, similar),
        ];
        out.insert(close, closing);
        out[escape] = comma;
        out.splice(similar..=similar, call);
    }
    out
}

/// `TRIM(BOTH FROM x)` (and LEADING, TRAILING), as PostgreSQL prints a
/// trim of spaces, read as `TRIM(BOTH x)`, which sqlparser parses.
fn trim_without_characters(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::TRIM)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let mut drop = Vec::new();
    for w in solid.windows(4) {
        let [trim, open, side, from] = [w[0], w[1], w[2], w[3]];
        let sided = [Keyword::BOTH, Keyword::LEADING, Keyword::TRAILING]
            .iter()
            .any(|&k| keyword(&tokens[side], k));
        if keyword(&tokens[trim], Keyword::TRIM)
            && tokens[open].token == Token::LParen
            && sided
            && keyword(&tokens[from], Keyword::FROM)
        {
            drop.push(from);
        }
    }
    tokens.into_iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, t)| t).collect()
}

/// The function the low bound of `BETWEEN SYMMETRIC low AND high` is
/// wrapped in (sqlparser has no SYMMETRIC): the binder reads it back.
pub const SYMMETRIC: &str = "pg_between_symmetric";

/// Rewrites `BETWEEN SYMMETRIC low AND` as `BETWEEN "pg_between_symmetric"
/// (low) AND`, and drops the ASYMMETRIC of `BETWEEN ASYMMETRIC` (the
/// default). The low bound runs to the first AND outside parentheses, as
/// PostgreSQL's grammar (b_expr) reads it.
fn between_symmetric(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let marked =
        |t: &TokenWithSpan| keyword(t, Keyword::SYMMETRIC) || keyword(t, Keyword::ASYMMETRIC);
    if !tokens.iter().any(marked) {
        return tokens;
    }
    let mut out = tokens;
    let mut from = 0;
    while let Some(at) = (from..out.len()).find(|&i| marked(&out[i])) {
        from = at + 1;
        let before = solid(&out[..at]).last().copied();
        if !before.is_some_and(|b| keyword(&out[b], Keyword::BETWEEN)) {
            continue;
        }
        if keyword(&out[at], Keyword::ASYMMETRIC) {
            out.remove(at);
            continue;
        }
        let mut depth = 0;
        let and = (at + 1..out.len()).find(|&i| {
            match out[i].token {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket => depth -= 1,
                _ => {}
            }
            depth == 0 && keyword(&out[i], Keyword::AND)
        });
        let Some(and) = and else { continue };
        wrap_in_marker(&mut out, at, and, SYMMETRIC);
    }
    out
}

/// The function `(x).*` is read as (sqlparser does not read it): the
/// select list expands it into x's fields.
pub const FIELDS: &str = "pg_record_fields";

/// Rewrites `(x).*` as `"pg_record_fields"(x)`.
fn field_wildcards(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| t.token == Token::Mul) {
        return tokens;
    }
    let mut out = tokens;
    let mut from = 0;
    while let Some(star) = (from..out.len()).find(|&i| out[i].token == Token::Mul) {
        from = star + 1;
        let before = solid(&out[..star]);
        let [.., close, dot] = before.as_slice() else { continue };
        let (close, dot) = (*close, *dot);
        if out[dot].token != Token::Period || out[close].token != Token::RParen {
            continue;
        }
        let Some(open) = opening_paren(&out, close) else { continue };
        out.drain(close + 1..=star);
        // x's own parentheses become the call's.
        let span = out[open].span;
        out.insert(open, TokenWithSpan { token: Token::make_word(FIELDS, Some('"')), span });
        from = close + 2;
    }
    out
}

/// Replaces the token at `at` with `"marker"(` and closes the call before
/// the token at `end`: the tokens between become its argument.
fn wrap_in_marker(out: &mut Vec<TokenWithSpan>, at: usize, end: usize, marker: &str) {
    let span = out[at].span;
    out.insert(end, TokenWithSpan { token: Token::RParen, span });
    out.splice(
        at..=at,
        [
            TokenWithSpan { token: Token::make_word(marker, Some('"')), span },
            TokenWithSpan { token: Token::LParen, span },
        ],
    );
}

/// Rewrites `COLLATION FOR (x)` as `pg_collation_for(x)`, the function
/// PostgreSQL's grammar makes of it (sqlparser does not read it).
fn collation_for(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::COLLATION)) {
        return tokens;
    }
    let solid = solid(&tokens);
    let mut calls = Vec::new();
    for (n, w) in solid.windows(3).enumerate() {
        let [collation, r#for, open] = [w[0], w[1], w[2]];
        // Not CREATE/DROP/ALTER COLLATION, nor COMMENT ON COLLATION.
        let named = n > 0
            && [Keyword::CREATE, Keyword::DROP, Keyword::ALTER, Keyword::ON, Keyword::EXISTS]
                .iter()
                .any(|&k| keyword(&tokens[solid[n - 1]], k));
        if keyword(&tokens[collation], Keyword::COLLATION)
            && keyword(&tokens[r#for], Keyword::FOR)
            && tokens[open].token == Token::LParen
            && !named
        {
            calls.push((collation, r#for));
        }
    }
    let mut out = tokens;
    for &(collation, r#for) in calls.iter().rev() {
        let span = out[collation].span;
        out.splice(
            collation..=r#for,
            [TokenWithSpan { token: Token::make_word("pg_collation_for", None), span }],
        );
    }
    out
}

/// What starts the name part a SET target's subscripts are carried in
/// (see `subscripted_targets`).
pub const SUBSCRIPTS: char = '\u{2}';

/// The function a subscripted SET target's value becomes:
/// `"pg_subscript_assign"(column, value, column[subscripts])`, the
/// column's value with the element the subscripts name replaced.
pub const SUBSCRIPT_ASSIGN: &str = "pg_subscript_assign";

/// Rewrites a subscripted target in a SET list (`SET a[2] = x`, `SET
/// j['k']['l'] = x`), which sqlparser does not read, as the qualified
/// name `a."<SUBSCRIPTS>[2]"`: the subscripts' text in a quoted name
/// part, which `spread_tuple_sets` turns into a value for the whole
/// column.
fn subscripted_targets(
    sql: &str,
    starts: &[usize],
    tokens: Vec<TokenWithSpan>,
) -> Vec<TokenWithSpan> {
    if !tokens.iter().any(|t| keyword(t, Keyword::SET))
        || !tokens.iter().any(|t| t.token == Token::LBracket)
    {
        return tokens;
    }
    let solid = solid(&tokens);
    // Per nesting level: whether its tokens are in a SET list.
    let mut in_set = vec![false];
    let mut found = Vec::new();
    for (n, &i) in solid.iter().enumerate() {
        let t = &tokens[i];
        match &t.token {
            Token::LParen | Token::LBracket => in_set.push(false),
            Token::RParen | Token::RBracket if in_set.len() > 1 => {
                in_set.pop();
            }
            _ if keyword(t, Keyword::SET) => *in_set.last_mut().unwrap_or(&mut false) = true,
            Token::Word(w)
                if w.quote_style.is_none()
                    && matches!(
                        w.keyword,
                        Keyword::WHERE
                            | Keyword::FROM
                            | Keyword::RETURNING
                            | Keyword::WHEN
                            | Keyword::SELECT
                            | Keyword::VALUES
                    ) =>
            {
                *in_set.last_mut().unwrap_or(&mut false) = false
            }
            Token::Word(_) if in_set.last() == Some(&true) => {
                let after_list = n > 0
                    && (matches!(tokens[solid[n - 1]].token, Token::Comma)
                        || keyword(&tokens[solid[n - 1]], Keyword::SET));
                if !after_list
                    || solid.get(n + 1).map(|&j| &tokens[j].token) != Some(&Token::LBracket)
                {
                    continue;
                }
                // The run of [...] groups, then `=`.
                let (mut k, mut depth, mut last) = (n + 1, 0, None);
                while let Some(&j) = solid.get(k) {
                    match tokens[j].token {
                        Token::LBracket => depth += 1,
                        Token::RBracket => {
                            depth -= 1;
                            if depth == 0 {
                                last = Some(k);
                                if solid.get(k + 1).map(|&x| &tokens[x].token)
                                    != Some(&Token::LBracket)
                                {
                                    break;
                                }
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
                let Some(last) = last else { continue };
                if solid.get(last + 1).map(|&j| &tokens[j].token) != Some(&Token::Eq) {
                    continue;
                }
                found.push((solid[n + 1], solid[last]));
            }
            _ => {}
        }
    }
    let mut out = tokens;
    for &(open, close) in found.iter().rev() {
        let (a, b) = (&out[open].span, &out[close].span);
        let from = byte_pos(sql, starts, a.start.line, a.start.column);
        let to = byte_pos(sql, starts, b.end.line, b.end.column);
        let Some(text) = from.zip(to).and_then(|(f, t)| sql.get(f..t)) else { continue };
        let span = out[open].span;
        let part = Token::make_word(&format!("{SUBSCRIPTS}{text}"), Some('"'));
        out.splice(
            open..=close,
            [TokenWithSpan { token: Token::Period, span }, TokenWithSpan { token: part, span }],
        );
    }
    out
}

/// True if `t` is keyword `k`, unquoted.
fn keyword(t: &TokenWithSpan, k: Keyword) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.keyword == k)
}

/// A row-locking clause at the top level of a SELECT: after UNION,
/// INTERSECT or EXCEPT it is 0A000, as in PostgreSQL; in a query without
/// FROM it locks nothing, and is dropped (sqlparser would read its FOR as
/// a column alias). Other statements come back as they are.
fn top_level_lock_clause(tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>> {
    let kw = keyword;
    let first = tokens.iter().find(|t| !matches!(t.token, Token::Whitespace(_)));
    if !first.is_some_and(|t| kw(t, Keyword::SELECT) || kw(t, Keyword::WITH)) {
        return Ok(tokens);
    }
    let solid = solid(&tokens);
    let (mut depth, mut from, mut set_op, mut lock) = (0i32, false, false, None);
    for (n, &i) in solid.iter().enumerate() {
        let t = &tokens[i];
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth != 0 => {}
            _ if kw(t, Keyword::FROM) => from = true,
            _ if kw(t, Keyword::UNION) || kw(t, Keyword::INTERSECT) || kw(t, Keyword::EXCEPT) => {
                set_op = true
            }
            _ if kw(t, Keyword::FOR) && lock.is_none() => {
                let next = solid.get(n + 1).map(|&j| &tokens[j]);
                let strength = next.and_then(|t| {
                    [
                        (Keyword::UPDATE, "UPDATE"),
                        (Keyword::SHARE, "SHARE"),
                        (Keyword::NO, "NO KEY UPDATE"),
                        (Keyword::KEY, "KEY SHARE"),
                    ]
                    .into_iter()
                    .find(|(k, _)| kw(t, *k))
                    .map(|(_, s)| s)
                });
                if let Some(s) = strength {
                    lock = Some((i, s));
                }
            }
            _ => {}
        }
    }
    let Some((at, strength)) = lock else { return Ok(tokens) };
    if set_op {
        bail!(FeatureNotSupported, "FOR {strength} is not allowed with UNION/INTERSECT/EXCEPT");
    }
    if from {
        return Ok(tokens);
    }
    // The clause runs to a LIMIT, OFFSET or FETCH, or to the end.
    let end = solid
        .iter()
        .copied()
        .filter(|&j| j > at)
        .find(|&j| {
            let t = &tokens[j];
            kw(t, Keyword::LIMIT) || kw(t, Keyword::OFFSET) || kw(t, Keyword::FETCH)
        })
        .unwrap_or(tokens.len());
    Ok(tokens[..at].iter().chain(&tokens[end..]).cloned().collect())
}

/// The row-locking clauses as sqlparser reads them; tokens of a statement
/// without `FOR` come back untouched. `FOR NO KEY UPDATE` becomes
/// `FOR UPDATE` and `FOR KEY SHARE` `FOR SHARE`: Strata's row locks are
/// exclusive or shared, so the weaker strengths lock at least as much as
/// PostgreSQL's (they never allow more; they may wait where PostgreSQL
/// would not, docs/compatibility.md). Then `OF` lists are split.
fn lock_clauses(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let kw = keyword;
    if !tokens.iter().any(|t| kw(t, Keyword::FOR)) {
        return tokens;
    }
    let words = solid(&tokens);
    let at = |n: usize, k: Keyword| words.get(n).is_some_and(|&i| kw(&tokens[i], k));
    let mut skip = std::collections::HashSet::new();
    for n in (0..words.len()).filter(|&n| at(n, Keyword::FOR)) {
        if at(n + 1, Keyword::NO) && at(n + 2, Keyword::KEY) && at(n + 3, Keyword::UPDATE) {
            skip.extend([words[n + 1], words[n + 2]]);
        } else if at(n + 1, Keyword::KEY) && at(n + 2, Keyword::SHARE) {
            skip.insert(words[n + 1]);
        }
    }
    let kept = tokens.into_iter().enumerate().filter(|(i, _)| !skip.contains(i));
    split_lock_lists(kept.map(|(_, t)| t).collect())
}

/// Splits a locking clause's table list, which sqlparser reads only one
/// name of: `FOR UPDATE OF a, b NOWAIT` becomes `FOR UPDATE OF a NOWAIT
/// FOR UPDATE OF b NOWAIT` (what Django's select_for_update(of=...) sends).
fn split_lock_lists(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let is_kw = keyword;
    let solid = |i: usize| !matches!(tokens[i].token, Token::Whitespace(_));
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if !is_kw(&tokens[i], Keyword::FOR) {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        }
        // FOR, the strength words, OF: the clause's head, repeated per name.
        let words: Vec<usize> = (i..tokens.len()).filter(|&j| solid(j)).collect();
        let of = words.iter().take(5).position(|&j| is_kw(&tokens[j], Keyword::OF));
        let strength_ok = of.is_some_and(|n| {
            n >= 2
                && words[1..n].iter().all(|&j| {
                    is_kw(&tokens[j], Keyword::UPDATE) || is_kw(&tokens[j], Keyword::SHARE)
                })
        });
        let Some(of) = of.filter(|_| strength_ok) else {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        };
        let head: Vec<TokenWithSpan> = tokens[i..=words[of]].to_vec();
        // The names: words, dots and commas.
        let mut end = of + 1;
        while end < words.len()
            && matches!(tokens[words[end]].token, Token::Word(_) | Token::Period | Token::Comma)
            && !is_kw(&tokens[words[end]], Keyword::NOWAIT)
            && !is_kw(&tokens[words[end]], Keyword::SKIP)
            && !is_kw(&tokens[words[end]], Keyword::FOR)
        {
            end += 1;
        }
        let tail: Vec<TokenWithSpan> = match words.get(end).map(|&j| &tokens[j]) {
            Some(t) if is_kw(t, Keyword::NOWAIT) => vec![t.clone()],
            Some(t) if is_kw(t, Keyword::SKIP) => {
                words.get(end + 1).map(|&j| vec![t.clone(), tokens[j].clone()]).unwrap_or_default()
            }
            _ => vec![],
        };
        let last = words.get(end).copied().unwrap_or(tokens.len());
        let space = |t: &TokenWithSpan| TokenWithSpan {
            token: Token::Whitespace(Whitespace::Space),
            span: t.span,
        };
        out.extend(head.iter().cloned());
        for t in &tokens[words[of] + 1..last] {
            if t.token != Token::Comma {
                out.push(t.clone());
                continue;
            }
            for x in tail.iter().chain(head.iter()) {
                out.push(space(t));
                out.push(TokenWithSpan { token: x.token.clone(), span: t.span });
            }
            out.push(space(t));
        }
        i = last;
    }
    out
}

/// Runs Strata's reader `read` over `tokens`, errors in PostgreSQL's form.
fn read_own<T>(
    sql: &str,
    tokens: Vec<TokenWithSpan>,
    semi: Option<&TokenWithSpan>,
    read: impl FnOnce(&mut Parser) -> std::result::Result<T, ParserError>,
) -> Result<T> {
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(MAX_RECURSION)
        .with_tokens_with_locations(tokens);
    read(&mut p).map_err(|e| syntax_error(sql, e, semi))
}

/// The statements read by Strata's own code rather than sqlparser's
/// (module doc); `Ok(None)` for everything else.
fn own_syntax(
    sql: &str,
    piece: &[TokenWithSpan],
    words: &[&TokenWithSpan],
    semi: Option<&TokenWithSpan>,
) -> Result<Option<Stmt>> {
    let kw = |i: usize| unquoted_word(words, i);
    let (w0, w1, w2) = (kw(0), kw(1), kw(2));
    if (w0.as_deref(), w1.as_deref(), w2.as_deref())
        == (Some("create"), Some("materialized"), Some("view"))
        || (w0.as_deref(), w1.as_deref(), w2.as_deref())
            == (Some("refresh"), Some("materialized"), Some("view"))
    {
        return materialized_view(sql, piece, words, semi).map(Some);
    }
    if (w0.as_deref(), w1.as_deref(), w2.as_deref())
        == (Some("alter"), Some("default"), Some("privileges"))
    {
        let a = read_own(sql, sql_tokens(piece), semi, grant::alter_default_privileges)?;
        return Ok(Some(Stmt::AlterDefaultPrivileges(a)));
    }
    if matches!((w0.as_deref(), w1.as_deref()), (Some("reassign" | "drop"), Some("owned"))) {
        let o = read_own(sql, sql_tokens(piece), semi, grant::owned)?;
        return Ok(Some(Stmt::Owned(o)));
    }
    if w1.as_deref() == Some("domain") {
        let read = match w0.as_deref() {
            Some("create") => domain::create,
            Some("alter") => domain::alter,
            Some("drop") => domain::drop,
            _ => return Ok(None),
        };
        let stmt = read_own(sql, sql_tokens(piece), semi, |p| {
            p.next_token();
            p.next_token();
            read(p)
        })?;
        return Ok(Some(stmt));
    }
    if let Some(stmt) = table_as_with_names(sql, piece, words, semi)? {
        return Ok(Some(stmt));
    }
    // A role GRANT or REVOKE names no object (no ON).
    if matches!(w0.as_deref(), Some("grant" | "revoke"))
        && !(1..words.len()).any(|i| kw(i).as_deref() == Some("on"))
    {
        let g = read_own(sql, sql_tokens(piece), semi, grant::role_grant)?;
        return Ok(Some(Stmt::GrantRole(g)));
    }
    // GRANT TEMP ON DATABASE: sqlparser knows only TEMPORARY.
    if matches!(w0.as_deref(), Some("grant" | "revoke")) {
        let on = (1..words.len()).find(|&i| kw(i).as_deref() == Some("on")).unwrap_or(0);
        if matches!(kw(on + 1).as_deref(), Some("type" | "domain")) {
            let g = read_own(sql, sql_tokens(piece), semi, grant::grant_on_type)?;
            return Ok(Some(Stmt::GrantOnType(g)));
        }
        if let Some(temp) = (1..on).find(|&i| kw(i).as_deref() == Some("temp")) {
            let span = words[temp].span;
            let mut tokens = sql_tokens(piece);
            for t in tokens.iter_mut().filter(|t| t.span == span) {
                t.token = Token::make_keyword("TEMPORARY");
            }
            let stmt = read_own(sql, tokens, semi, |p| p.parse_statement())?;
            return Ok(Some(Stmt::Sql(Box::new(stmt))));
        }
    }
    if partition::is_partition_cmd(&(0..words.len().min(12)).map(kw).collect::<Vec<_>>()) {
        let tokens = sql_tokens(piece);
        let c = read_own(sql, tokens.clone(), semi, |p| partition::read(p, &tokens))?;
        return Ok(Some(Stmt::Partition(Box::new(c))));
    }
    if (w0.as_deref(), w1.as_deref()) == (Some("create"), Some("extension")) {
        let stmt = read_own(sql, sql_tokens(piece), semi, create_extension)?;
        return Ok(Some(Stmt::Sql(Box::new(stmt))));
    }
    if (w0.as_deref(), w1.as_deref()) == (Some("alter"), Some("table")) {
        // The column's ALTER, and the words after its name.
        if let Some(at) = (2..words.len()).find(|&i| kw(i).as_deref() == Some("alter")) {
            let name = at + 1 + usize::from(kw(at + 1).as_deref() == Some("column"));
            let next: Vec<Option<String>> =
                (name + 1..(name + 3).min(words.len())).map(kw).collect();
            if sequence::is_identity_action(&next) {
                if words.iter().any(|t| t.token == Token::Comma) {
                    bail!(
                        FeatureNotSupported,
                        "identity actions beside other ALTER TABLE actions are not supported yet"
                    );
                }
                let dialect = PostgreSqlDialect {};
                let mut p = Parser::new(&dialect)
                    .with_recursion_limit(MAX_RECURSION)
                    .with_tokens_with_locations(sql_tokens(piece));
                return match sequence::alter_identity(&mut p) {
                    Ok(a) => Ok(Some(Stmt::AlterIdentity(Box::new(a)))),
                    Err(e) => Err(option_error(sql, semi, e)),
                };
            }
        }
    }
    let create = w0.as_deref() == Some("create")
        && (w1.as_deref() == Some("sequence")
            || (matches!(w1.as_deref(), Some("temp" | "temporary"))
                && w2.as_deref() == Some("sequence")));
    let kind = match (w0.as_deref(), w1.as_deref()) {
        (Some("alter"), Some("sequence")) => Some(RelationKind::Sequence),
        (Some("alter"), Some("view")) => Some(RelationKind::View),
        (Some("alter"), Some("index")) => Some(RelationKind::Index),
        (Some("alter"), Some("type")) => Some(RelationKind::Type),
        // ALTER TABLE is sqlparser's, but for SET SCHEMA.
        (Some("alter"), Some("table"))
            if (3..words.len()).any(|i| {
                kw(i - 1).as_deref() == Some("set") && kw(i).as_deref() == Some("schema")
            }) =>
        {
            Some(RelationKind::Table)
        }
        _ => None,
    };
    if !create && kind.is_none() {
        return Ok(None);
    }
    let dialect = PostgreSqlDialect {};
    let mut p = Parser::new(&dialect)
        .with_recursion_limit(MAX_RECURSION)
        .with_tokens_with_locations(sql_tokens(piece));
    let r = match kind {
        None => sequence::create(&mut p).map(|s| Some(Stmt::Sql(Box::new(s)))),
        Some(k) => {
            p.next_token();
            p.next_token();
            owner::alter(&mut p, k)
        }
    };
    r.map_err(|e| option_error(sql, semi, e))
}

/// The error of a sequence option list that did not parse.
fn option_error(sql: &str, semi: Option<&TokenWithSpan>, e: sequence::OptionError) -> Error {
    match e {
        sequence::OptionError::Syntax(e) => syntax_error(sql, e, semi),
        sequence::OptionError::Conflict(span) => sequence::conflict(sql, span),
        sequence::OptionError::Unsupported(m) => err!(FeatureNotSupported, "{m}"),
        sequence::OptionError::Invalid(m) => err!(SyntaxError, "{m}"),
    }
}

/// CREATE MATERIALIZED VIEW ... AS query \[WITH \[NO\] DATA\], which
/// sqlparser reads without its last clause, and REFRESH MATERIALIZED VIEW
/// \[CONCURRENTLY\] name \[WITH \[NO\] DATA\], which it does not read.
fn materialized_view(
    sql: &str,
    piece: &[TokenWithSpan],
    words: &[&TokenWithSpan],
    semi: Option<&TokenWithSpan>,
) -> Result<Stmt> {
    let kw = |i: usize| unquoted_word(words, i);
    let n = words.len();
    // A trailing WITH [NO] DATA.
    let (data, cut) = match (
        n.checked_sub(3).and_then(kw),
        n.checked_sub(2).and_then(kw),
        n.checked_sub(1).and_then(kw),
    ) {
        (Some(w), Some(no), Some(d)) if w == "with" && no == "no" && d == "data" => (false, 3),
        (_, Some(w), Some(d)) if w == "with" && d == "data" => (true, 2),
        _ => (true, 0),
    };
    let tokens = sql_tokens(piece);
    let keep = match cut {
        0 => tokens,
        _ => {
            let first_cut = words[n - cut];
            let stop =
                tokens.iter().position(|t| t.span == first_cut.span && t.token == first_cut.token);
            tokens[..stop.unwrap_or(tokens.len())].to_vec()
        }
    };
    let dialect = PostgreSqlDialect {};
    let mut p =
        Parser::new(&dialect).with_recursion_limit(MAX_RECURSION).with_tokens_with_locations(keep);
    if kw(0).as_deref() == Some("refresh") {
        let r = (|| {
            p.expect_keywords(&[Keyword::REFRESH, Keyword::MATERIALIZED, Keyword::VIEW])?;
            let concurrently = p.parse_keyword(Keyword::CONCURRENTLY);
            let name = p.parse_object_name(false)?;
            if p.peek_token().token != Token::EOF {
                return p.expected("end of statement", p.peek_token());
            }
            Ok(RefreshMatView { name, concurrently, data })
        })();
        return r.map(Stmt::RefreshMatView).map_err(|e| syntax_error(sql, e, semi));
    }
    let stmt = p.parse_statement().map_err(|e| syntax_error(sql, e, semi))?;
    if p.peek_token().token != Token::EOF {
        let next = p.peek_token();
        return Err(err!(SyntaxError, "syntax error at or near \"{}\"", next.token));
    }
    match stmt {
        ast::Statement::CreateView(cv) if cv.materialized => {
            Ok(Stmt::CreateMatView(Box::new(cv), data))
        }
        _ => bail!(SyntaxError, "syntax error at or near \"MATERIALIZED\""),
    }
}

/// CREATE \[TEMP\] TABLE name (a, b, ...) AS query: column names without
/// types, which sqlparser does not read. The list is taken out, the rest
/// parsed, and the names put back as columns of no type (the session
/// names the query's columns with them).
fn table_as_with_names(
    sql: &str,
    piece: &[TokenWithSpan],
    words: &[&TokenWithSpan],
    semi: Option<&TokenWithSpan>,
) -> Result<Option<Stmt>> {
    let kw = |i: usize| unquoted_word(words, i);
    if kw(0).as_deref() != Some("create") {
        return Ok(None);
    }
    let mut i = 1;
    while matches!(kw(i).as_deref(), Some("temp" | "temporary" | "unlogged" | "global" | "local")) {
        i += 1;
    }
    if kw(i).as_deref() != Some("table") {
        return Ok(None);
    }
    i += 1;
    if (kw(i).as_deref(), kw(i + 1).as_deref(), kw(i + 2).as_deref())
        == (Some("if"), Some("not"), Some("exists"))
    {
        i += 3;
    }
    // The (possibly qualified) name.
    while words.get(i).is_some_and(|t| matches!(t.token, Token::Word(_)))
        && words.get(i + 1).is_some_and(|t| t.token == Token::Period)
    {
        i += 2;
    }
    i += 1;
    if words.get(i).map(|t| &t.token) != Some(&Token::LParen) {
        return Ok(None);
    }
    let open = i;
    let mut names = Vec::new();
    loop {
        i += 1;
        let Some(Token::Word(w)) = words.get(i).map(|t| &t.token) else { return Ok(None) };
        names.push(ast::Ident {
            value: w.value.clone(),
            quote_style: w.quote_style,
            span: words[i].span,
        });
        i += 1;
        match words.get(i).map(|t| &t.token) {
            Some(Token::Comma) => continue,
            Some(Token::RParen) => break,
            _ => return Ok(None),
        }
    }
    if kw(i + 1).as_deref() != Some("as") {
        return Ok(None);
    }
    let (from, to) = (words[open].span, words[i].span);
    let tokens: Vec<TokenWithSpan> = sql_tokens(piece)
        .into_iter()
        .filter(|t| t.span.start < from.start || t.span.end > to.end)
        .collect();
    let stmt = read_own(sql, tokens, semi, |p| {
        let stmt = p.parse_statement()?;
        match p.peek_token().token {
            Token::EOF => Ok(stmt),
            _ => p.expected("end of statement", p.peek_token()),
        }
    })?;
    let ast::Statement::CreateTable(mut ct) = stmt else { return Ok(None) };
    if ct.query.is_none() {
        return Ok(None);
    }
    ct.columns = names
        .into_iter()
        .map(|name| ast::ColumnDef { name, data_type: ast::DataType::Unspecified, options: vec![] })
        .collect();
    Ok(Some(Stmt::Sql(Box::new(ast::Statement::CreateTable(ct)))))
}

/// CREATE EXTENSION \[IF NOT EXISTS\] name \[WITH\] \[SCHEMA s\] \[VERSION v\]
/// \[CASCADE\], the options in any order and without WITH, the version a
/// name or a string (sqlparser wants WITH and a name).
fn create_extension(p: &mut Parser) -> std::result::Result<ast::Statement, ParserError> {
    p.expect_keywords(&[Keyword::CREATE, Keyword::EXTENSION])?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_identifier()?;
    let _ = p.parse_keyword(Keyword::WITH);
    let (mut schema, mut version, mut cascade) = (None, None, false);
    loop {
        if p.parse_keyword(Keyword::SCHEMA) {
            schema = Some(p.parse_identifier()?);
        } else if p.parse_keyword(Keyword::VERSION) {
            version = Some(match p.peek_token().token {
                Token::SingleQuotedString(s) => {
                    p.next_token();
                    ast::Ident::with_quote('\'', s)
                }
                _ => p.parse_identifier()?,
            });
        } else if p.parse_keyword(Keyword::CASCADE) {
            cascade = true;
        } else {
            break;
        }
    }
    if p.peek_token().token != Token::EOF {
        return p.expected("end of statement", p.peek_token());
    }
    Ok(ast::Statement::CreateExtension(ast::CreateExtension {
        name,
        if_not_exists,
        cascade,
        schema,
        version,
    }))
}

/// The `i`-th word, lower-cased, when it is an unquoted word (a keyword
/// can be); None otherwise.
fn unquoted_word(words: &[&TokenWithSpan], i: usize) -> Option<String> {
    words.get(i).and_then(|t| word(t)).filter(|_| t_quote(words, i).is_none())
}

fn t_quote(words: &[&TokenWithSpan], i: usize) -> Option<char> {
    words.get(i).and_then(|t| t_token_quote(t))
}

/// Converts sqlparser's error into PostgreSQL's wording and position.
fn syntax_error(sql: &str, e: ParserError, semi: Option<&TokenWithSpan>) -> Error {
    let msg = match &e {
        ParserError::TokenizerError(m) | ParserError::ParserError(m) => m.clone(),
        ParserError::RecursionLimitExceeded => {
            return err!(StatementTooComplex, "stack depth limit exceeded")
                .with_hint("Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.")
        }
    };
    let (body, loc) = match msg.rfind(" at Line: ") {
        Some(i) => (&msg[..i], Some(&msg[i + 10..])),
        None => (msg.as_str(), None),
    };
    let found = body.rsplit_once("found: ").map(|(_, f)| f.trim().to_string());
    // A statement cut short by its semicolon fails "at or near ;", as in PostgreSQL.
    if let (Some("EOF"), Some(t)) = (found.as_deref(), semi) {
        let mut er = err!(SyntaxError, "syntax error at or near \";\"");
        if let Some(p) = char_pos(sql, t.span.start.line, t.span.start.column) {
            er = er.with_position(p as u32 + 1);
        }
        return er;
    }
    let message = match found.as_deref() {
        Some("EOF") => "syntax error at end of input".to_string(),
        Some(tok) => format!("syntax error at or near \"{}\"", tok.trim_matches('\'')),
        None => format!("syntax error: {body}"),
    };
    let mut er = err!(SyntaxError, "{message}");
    let pos = loc.and_then(|l| {
        let (line, col) = l.split_once(", Column: ")?;
        char_pos(sql, line.trim().parse().ok()?, col.trim().parse().ok()?)
    });
    match (pos, found.as_deref()) {
        (_, Some("EOF")) => er = er.with_position(sql.chars().count() as u32 + 1),
        (Some(p), _) => er = er.with_position(p as u32 + 1),
        _ => {}
    }
    er
}

fn word(t: &TokenWithSpan) -> Option<String> {
    match &t.token {
        Token::Word(w) => {
            Some(if w.quote_style.is_some() { w.value.clone() } else { w.value.to_lowercase() })
        }
        _ => None,
    }
}

fn is_kw(t: Option<&&TokenWithSpan>, kw: &str) -> bool {
    match t {
        Some(t) => t_token_quote(t).is_none() && word(t).as_deref() == Some(kw),
        None => false,
    }
}

fn t_token_quote(t: &TokenWithSpan) -> Option<char> {
    match &t.token {
        Token::Word(w) => w.quote_style,
        _ => None,
    }
}

/// `FETCH [FROM | IN] cursor` without a direction means NEXT; sqlparser
/// needs it spelled out.
/// Recognizes the utility statements handled outside sqlparser.
/// `CREATE USER name [WITH] options` is `CREATE ROLE name LOGIN options`;
/// sqlparser reads CREATE USER in another dialect's form, so it is rewritten.
fn create_user_as_role(sql: &str, starts: &[usize], words: &[&TokenWithSpan]) -> Option<String> {
    if !(is_kw(words.first(), "create") && is_kw(words.get(1), "user")) {
        return None;
    }
    let name_end = words.get(2)?;
    let after_name = byte_pos(sql, starts, name_end.span.end.line, name_end.span.end.column)?;
    let name_start = byte_pos(sql, starts, name_end.span.start.line, name_end.span.start.column)?;
    let mut rest = sql.get(after_name..)?.to_string();
    if is_kw(words.get(3), "with") {
        let w = words.get(3)?;
        let ws = byte_pos(sql, starts, w.span.start.line, w.span.start.column)?;
        let we = byte_pos(sql, starts, w.span.end.line, w.span.end.column)?;
        rest = format!("{}{}", sql.get(after_name..ws)?, sql.get(we..)?);
    }
    Some(format!("CREATE ROLE {} LOGIN{}", sql.get(name_start..after_name)?, rest))
}

fn utility(sql: &str, starts: &[usize], words: &[&TokenWithSpan]) -> Result<Option<Stmt>> {
    if is_kw(words.first(), "vacuum") {
        return Ok(Some(Stmt::Maintenance("VACUUM")));
    }
    if is_kw(words.first(), "analyze") || is_kw(words.first(), "analyse") {
        return Ok(Some(Stmt::Maintenance("ANALYZE")));
    }
    // Strata's storage keeps no physical row order and its indexes need
    // no rebuilding: CLUSTER and REINDEX have nothing to do.
    if is_kw(words.first(), "cluster") {
        return Ok(Some(Stmt::Maintenance("CLUSTER")));
    }
    if is_kw(words.first(), "reindex") {
        return Ok(Some(Stmt::Maintenance("REINDEX")));
    }
    if is_kw(words.first(), "copy") {
        return copy(sql, starts, words).map(Some);
    }
    if is_kw(words.first(), "set") && is_kw(words.get(1), "constraints") {
        return set_constraints(sql, words).map(Some);
    }
    if is_kw(words.first(), "do") {
        return do_block(words).map(Some);
    }
    if is_kw(words.first(), "fetch") || is_kw(words.first(), "move") {
        return fetch(sql, words).map(Some);
    }
    if is_kw(words.first(), "create") && words.iter().take(5).any(|w| is_kw(Some(w), "trigger")) {
        return create_trigger(sql, starts, words).map(Some);
    }
    let or_replace = is_kw(words.get(1), "or") && is_kw(words.get(2), "replace");
    let at = if or_replace { 3 } else { 1 };
    if is_kw(words.first(), "create") && is_kw(words.get(at), "procedure") {
        return create_procedure(sql, starts, words, at).map(Some);
    }
    if is_kw(words.first(), "alter") && is_kw(words.get(1), "trigger") {
        return rename_trigger(sql, starts, words).map(Some);
    }
    // ALTER and COMMENT ON a procedure act as on a function.
    if is_kw(words.first(), "alter") && is_kw(words.get(1), "procedure") {
        return Ok(Some(Stmt::Sql(Box::new(as_function(sql, starts, words, 1)?))));
    }
    if is_kw(words.first(), "comment")
        && is_kw(words.get(1), "on")
        && (is_kw(words.get(2), "procedure") || is_kw(words.get(2), "function"))
    {
        return comment_on_function(sql, starts, words).map(Some);
    }
    Ok(None)
}

/// CREATE TRIGGER: sqlparser's statement, with the arguments of EXECUTE
/// FUNCTION name(args) taken out first (sqlparser reads them as parameter
/// declarations, which string and number arguments are not).
fn create_trigger(sql: &str, starts: &[usize], words: &[&TokenWithSpan]) -> Result<Stmt> {
    let pos = |t: &TokenWithSpan, end: bool| token_pos(sql, starts, t, end);
    let (Some(first), Some(last)) = (words.first(), words.last()) else {
        bail!(SyntaxError, "syntax error at end of input");
    };
    let (start, end) = (pos(first, false).unwrap_or(0), pos(last, true).unwrap_or(sql.len()));
    let execute = words.iter().rposition(|w| is_kw(Some(w), "execute"));
    let open = execute
        .and_then(|e| words.iter().skip(e).position(|w| w.token == Token::LParen).map(|i| i + e));
    let close = open
        .and_then(|o| words.iter().skip(o).position(|w| w.token == Token::RParen).map(|i| i + o));
    let (Some(open), Some(close)) = (open, close) else {
        return plain_trigger(sql.get(start..end).unwrap_or_default(), Vec::new());
    };
    let mut args = Vec::new();
    for (i, t) in words[open + 1..close].iter().enumerate() {
        if i % 2 == 1 {
            if t.token != Token::Comma {
                bail!(SyntaxError, "syntax error at or near \"{}\"", t.token);
            }
            continue;
        }
        args.push(match &t.token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => s.clone(),
            Token::Number(n, _) => n.clone(),
            Token::Word(_) => word(t).unwrap_or_default(),
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        });
    }
    let (Some(o), Some(c)) = (pos(words[open], true), pos(words[close], false)) else {
        bail!(SyntaxError, "syntax error at or near \"(\"");
    };
    let text =
        format!("{}{}", sql.get(start..o).unwrap_or_default(), sql.get(c..end).unwrap_or_default());
    plain_trigger(&text, args)
}

fn plain_trigger(text: &str, args: Vec<String>) -> Result<Stmt> {
    let stmt = rewritten_statement(text)?;
    match stmt {
        ast::Statement::CreateTrigger(ct) => Ok(Stmt::CreateTrigger(Box::new(ct), args)),
        _ => bail!(SyntaxError, "syntax error at or near \"TRIGGER\""),
    }
}

/// Where token `t` starts (or ends) in `sql`, as a byte offset.
fn token_pos(sql: &str, starts: &[usize], t: &TokenWithSpan, end: bool) -> Option<usize> {
    let at = if end { t.span.end } else { t.span.start };
    byte_pos(sql, starts, at.line, at.column)
}

/// One statement of text Strata put together from a statement it reads
/// itself, parsed by sqlparser; a syntax error points into that text.
fn rewritten_statement(text: &str) -> Result<ast::Statement> {
    let parse = || {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location()?;
        Parser::new(&PostgreSqlDialect {})
            .with_tokens_with_locations(type_references(tokens))
            .parse_statement()
    };
    parse().map_err(|e| syntax_error(text, e, None))
}

/// Rewrites `table.column%TYPE` (the table maybe schema-qualified) in
/// CREATE FUNCTION and CREATE PROCEDURE as one quoted name of the column,
/// case-folded and ending in `%TYPE`, which ddl/functions.rs resolves to
/// the column's type: sqlparser reads no %TYPE.
fn type_references(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_) | Token::EOF))
        .collect();
    let word = |k: usize| match solid.get(k).map(|&i| &tokens[i].token) {
        Some(Token::Word(w)) => Some(w),
        _ => None,
    };
    let is = |k: usize, kw: &str| {
        word(k).is_some_and(|w| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
    };
    let mut first = 1 + usize::from(is(1, "or") && is(2, "replace")) * 2;
    if !is(0, "create") || !(is(first, "function") || is(first, "procedure")) {
        return tokens;
    }
    first += 1;
    let mut out = Vec::with_capacity(tokens.len());
    let (mut i, mut k) = (0, 0);
    while i < tokens.len() {
        let at_solid = solid.get(k) == Some(&i);
        // name (. name){1,2} % TYPE, from solid token k.
        let mut parts = Vec::new();
        let mut m = k;
        while at_solid && k >= first && parts.len() < 3 {
            let Some(w) = word(m) else { break };
            parts.push(match w.quote_style {
                Some(_) => w.value.clone(),
                None => w.value.to_lowercase(),
            });
            if solid.get(m + 1).map(|&j| &tokens[j].token) != Some(&Token::Period) {
                break;
            }
            m += 2;
        }
        let percent = solid.get(m + 1).map(|&j| &tokens[j].token) == Some(&Token::Mod);
        if parts.len() >= 2 && percent && is(m + 2, "type") {
            let (start, end) = (tokens[i].span.start, tokens[solid[m + 2]].span.end);
            let name = format!("{}%TYPE", parts.join("."));
            out.push(TokenWithSpan {
                token: Token::Word(sqlparser::tokenizer::Word {
                    value: name,
                    quote_style: Some('"'),
                    keyword: Keyword::NoKeyword,
                }),
                span: sqlparser::tokenizer::Span::new(start, end),
            });
            k = m + 3;
            i = solid[m + 2] + 1;
            continue;
        }
        out.push(tokens[i].clone());
        if at_solid {
            k += 1;
        }
        i += 1;
    }
    out
}

/// Takes a trailing `WITH [CASCADED | LOCAL] CHECK OPTION` off CREATE
/// VIEW, which sqlparser does not read; the caller puts it among the
/// view's options as `check_option`, where PostgreSQL keeps it too.
/// The marker the parser leaves in a CREATE INDEX's WITH list for `ON ONLY`.
pub const ON_ONLY: &str = "pg_index_on_only";

/// True if CREATE INDEX `ci` said `ON ONLY table`: a partitioned table's
/// index made on that table alone.
pub fn is_on_only(ci: &ast::CreateIndex) -> bool {
    ci.with.iter().any(|e| marker_args(e, ON_ONLY).is_some())
}

/// Drops the ONLY of `CREATE [UNIQUE] INDEX ... ON ONLY table` (which
/// sqlparser does not read) and says whether it was there.
fn index_on_only(mut tokens: Vec<TokenWithSpan>) -> (Vec<TokenWithSpan>, bool) {
    let solid = solid(&tokens);
    let is = |k: usize, kw: Keyword| solid.get(k).is_some_and(|&i| keyword(&tokens[i], kw));
    if !is(0, Keyword::CREATE) || !(is(1, Keyword::INDEX) || is(2, Keyword::INDEX)) {
        return (tokens, false);
    }
    let Some(k) = (2..solid.len()).find(|&k| is(k - 1, Keyword::ON) && is(k, Keyword::ONLY)) else {
        return (tokens, false);
    };
    tokens.remove(solid[k]);
    (tokens, true)
}

fn view_check_option(mut tokens: Vec<TokenWithSpan>) -> (Vec<TokenWithSpan>, Option<&'static str>) {
    let solid: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_) | Token::EOF))
        .collect();
    let is = |k: usize, kw: &str| {
        matches!(solid.get(k).map(|&i| &tokens[i].token),
            Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
    };
    let view = (1..5).any(|k| is(k, "view"));
    let n = solid.len();
    if !is(0, "create") || !view || n < 4 || !is(n - 1, "option") || !is(n - 2, "check") {
        return (tokens, None);
    }
    let (with, option) = match () {
        _ if is(n - 3, "with") => (n - 3, "cascaded"),
        _ if is(n - 4, "with") && is(n - 3, "cascaded") => (n - 4, "cascaded"),
        _ if is(n - 4, "with") && is(n - 3, "local") => (n - 4, "local"),
        _ => return (tokens, None),
    };
    tokens.truncate(solid[with]);
    (tokens, Some(option))
}

/// The statement's text with the key word at `words[at]` replaced by
/// FUNCTION, parsed (PROCEDURE statements are FUNCTION ones to sqlparser).
fn as_function(
    sql: &str,
    starts: &[usize],
    words: &[&TokenWithSpan],
    at: usize,
) -> Result<ast::Statement> {
    let pos = |t: &TokenWithSpan, end: bool| token_pos(sql, starts, t, end);
    let (Some(first), Some(last), Some(kw)) = (words.first(), words.last(), words.get(at)) else {
        bail!(SyntaxError, "syntax error at end of input");
    };
    let (Some(start), Some(end), Some(ks), Some(ke)) =
        (pos(first, false), pos(last, true), pos(kw, false), pos(kw, true))
    else {
        bail!(SyntaxError, "syntax error at or near \"PROCEDURE\"");
    };
    let text = format!(
        "{}FUNCTION{}",
        sql.get(start..ks).unwrap_or_default(),
        sql.get(ke..end).unwrap_or_default()
    );
    rewritten_statement(&text)
}

/// ALTER TRIGGER name ON table RENAME TO new_name (PostgreSQL's only
/// ALTER TRIGGER but for DEPENDS ON EXTENSION).
fn rename_trigger(sql: &str, starts: &[usize], words: &[&TokenWithSpan]) -> Result<Stmt> {
    let n = words.len();
    let near = |i: usize| match words.get(i) {
        Some(t) => err!(SyntaxError, "syntax error at or near \"{}\"", t.token),
        None => err!(SyntaxError, "syntax error at end of input"),
    };
    if !is_kw(words.get(3), "on") {
        return Err(near(3));
    }
    if n < 8 || !is_kw(words.get(n - 3), "rename") || !is_kw(words.get(n - 2), "to") {
        return Err(near(n.saturating_sub(3)));
    }
    let (Some(name), Some(new_name)) = (word(words[2]), word(words[n - 1])) else {
        return Err(near(2));
    };
    let pos = |t: &TokenWithSpan, end: bool| token_pos(sql, starts, t, end);
    let (Some(from), Some(to)) = (pos(words[3], true), pos(words[n - 3], false)) else {
        return Err(near(4));
    };
    let text = sql.get(from..to).unwrap_or_default();
    let table = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_object_name(false))
        .map_err(|e| syntax_error(text, e, None))?;
    Ok(Stmt::RenameTrigger(RenameTrigger { name, table, new_name }))
}

/// COMMENT ON FUNCTION | PROCEDURE name\[(types)\] IS text: the routine
/// is read as DROP FUNCTION would read it.
fn comment_on_function(sql: &str, starts: &[usize], words: &[&TokenWithSpan]) -> Result<Stmt> {
    let procedure = is_kw(words.get(2), "procedure");
    let n = words.len();
    let (Some(is), Some(value)) = (n.checked_sub(2), words.last()) else {
        bail!(SyntaxError, "syntax error at end of input");
    };
    if n < 5 || !is_kw(words.get(is), "is") {
        bail!(SyntaxError, "syntax error at or near \"{}\"", value.token);
    }
    let text = match &value.token {
        Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) => Some(s.clone()),
        Token::DollarQuotedString(d) => Some(d.value.clone()),
        Token::Word(w) if w.value.eq_ignore_ascii_case("null") => None,
        other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    };
    let pos = |t: &TokenWithSpan, end: bool| token_pos(sql, starts, t, end);
    let (Some(from), Some(to)) = (pos(words[2], true), pos(words[is], false)) else {
        bail!(SyntaxError, "syntax error at or near \"IS\"");
    };
    let desc = format!("DROP FUNCTION {}", sql.get(from..to).unwrap_or_default());
    let stmt = rewritten_statement(&desc)?;
    match stmt {
        ast::Statement::DropFunction(df) if df.func_desc.len() == 1 => {
            let Some(d) = df.func_desc.into_iter().next() else {
                bail!(SyntaxError, "syntax error at or near \"IS\"");
            };
            Ok(Stmt::CommentOnFunction(Box::new(d), procedure, text))
        }
        _ => bail!(SyntaxError, "syntax error at or near \",\""),
    }
}

/// CREATE PROCEDURE: parsed as the CREATE FUNCTION it spells but for its
/// key word and the RETURNS it lacks.
fn create_procedure(
    sql: &str,
    starts: &[usize],
    words: &[&TokenWithSpan],
    at: usize,
) -> Result<Stmt> {
    match as_function(sql, starts, words, at)? {
        ast::Statement::CreateFunction(cf) if cf.return_type.is_none() => {
            Ok(Stmt::CreateProcedure(Box::new(cf)))
        }
        ast::Statement::CreateFunction(_) => {
            bail!(SyntaxError, "syntax error at or near \"RETURNS\"")
        }
        _ => bail!(SyntaxError, "syntax error at or near \"PROCEDURE\""),
    }
}

/// DO \[LANGUAGE name\] code \[LANGUAGE name\]: the code of a PL/pgSQL
/// block.
fn do_block(words: &[&TokenWithSpan]) -> Result<Stmt> {
    let mut code = None;
    let mut language = None;
    let mut i = 1;
    while let Some(t) = words.get(i) {
        match &t.token {
            Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s) if code.is_none() => {
                code = Some(s.clone())
            }
            Token::DollarQuotedString(d) if code.is_none() => code = Some(d.value.clone()),
            _ if is_kw(Some(t), "language") && language.is_none() => {
                i += 1;
                let name = words.get(i).and_then(|t| match &t.token {
                    Token::SingleQuotedString(s) => Some(s.to_lowercase()),
                    _ => word(t),
                });
                match name {
                    Some(n) => language = Some(n),
                    None => bail!(SyntaxError, "syntax error at or near \"{}\"", t.token),
                }
            }
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        }
        i += 1;
    }
    let Some(code) = code else {
        bail!(SyntaxError, "no inline code specified");
    };
    match language.as_deref().unwrap_or("plpgsql") {
        "plpgsql" => Ok(Stmt::Do(code)),
        l @ ("sql" | "internal" | "c") => {
            bail!(FeatureNotSupported, "language \"{l}\" does not support inline code execution")
        }
        l => bail!(UndefinedObject, "language \"{l}\" does not exist"),
    }
}

/// SET CONSTRAINTS { ALL | name \[, ...\] } { DEFERRED | IMMEDIATE }.
/// A syntax error at token `t` of `sql` (None: at its end).
/// A reserved word that starts a clause right after FROM (`SELECT FROM
/// FROM t`, `... FROM WHERE`) is a syntax error there, as in PostgreSQL,
/// where it can be neither a table nor an expression; sqlparser would
/// read it as a table's name. (Not GROUP: `REVOKE ... FROM GROUP r`.)
fn clause_after_from(sql: &str, words: &[&TokenWithSpan]) -> Result<()> {
    const CLAUSES: &[Keyword] = &[
        Keyword::FROM,
        Keyword::WHERE,
        Keyword::HAVING,
        Keyword::ORDER,
        Keyword::LIMIT,
        Keyword::OFFSET,
        Keyword::UNION,
        Keyword::INTERSECT,
        Keyword::EXCEPT,
        Keyword::WINDOW,
        Keyword::SELECT,
        Keyword::INTO,
    ];
    for w in words.windows(2) {
        if keyword(w[0], Keyword::FROM) && CLAUSES.iter().any(|&k| keyword(w[1], k)) {
            return Err(syntax_at(sql, Some(&w[1])));
        }
    }
    Ok(())
}

fn syntax_at(sql: &str, t: Option<&&TokenWithSpan>) -> Error {
    let mut e = match t {
        Some(t) => err!(SyntaxError, "syntax error at or near \"{}\"", t.token),
        None => err!(SyntaxError, "syntax error at end of input"),
    };
    if let Some(p) = t.and_then(|t| char_pos(sql, t.span.start.line, t.span.start.column)) {
        e = e.with_position(p as u32 + 1);
    }
    e
}

/// FETCH and MOVE, in all of PostgreSQL's forms: `FETCH [direction]
/// [FROM | IN] cursor`, where a direction is NEXT, PRIOR, FIRST, LAST,
/// ABSOLUTE n, RELATIVE n, n, ALL, FORWARD \[n | ALL\] or BACKWARD \[n |
/// ALL\] (n a signed integer).
fn fetch(sql: &str, words: &[&TokenWithSpan]) -> Result<Stmt> {
    use crate::cursor::{Direction, ALL};
    let syntax = |i: usize| syntax_at(sql, words.get(i));
    let moving = is_kw(words.first(), "move");
    let mut i = 1;
    // A signed integer at `i`, if one is there.
    let number = |i: &mut usize| -> Result<Option<i64>> {
        let (sign, at) = match words.get(*i).map(|t| &t.token) {
            Some(Token::Minus) => (-1, *i + 1),
            Some(Token::Plus) => (1, *i + 1),
            _ => (1, *i),
        };
        let Some(Token::Number(n, _)) = words.get(at).map(|t| &t.token) else {
            return Ok(None);
        };
        let Ok(n) = n.parse::<i64>() else { return Err(syntax(at)) };
        *i = at + 1;
        Ok(Some(sign * n))
    };
    let kw = |i: usize, w: &str| is_kw(words.get(i), w);
    let direction = if kw(i, "next") {
        i += 1;
        Direction::Forward(1)
    } else if kw(i, "prior") {
        i += 1;
        Direction::Backward(1)
    } else if kw(i, "first") {
        i += 1;
        Direction::Absolute(1)
    } else if kw(i, "last") {
        i += 1;
        Direction::Absolute(-1)
    } else if kw(i, "absolute") || kw(i, "relative") {
        let absolute = kw(i, "absolute");
        i += 1;
        let Some(n) = number(&mut i)? else { return Err(syntax(i)) };
        if absolute {
            Direction::Absolute(n)
        } else {
            Direction::Relative(n)
        }
    } else if kw(i, "all") {
        i += 1;
        Direction::Forward(ALL)
    } else if kw(i, "forward") || kw(i, "backward") {
        let forward = kw(i, "forward");
        i += 1;
        let n = if kw(i, "all") {
            i += 1;
            ALL
        } else {
            number(&mut i)?.unwrap_or(1)
        };
        if forward {
            Direction::Forward(n)
        } else {
            Direction::Backward(n)
        }
    } else {
        Direction::Forward(number(&mut i)?.unwrap_or(1))
    };
    if kw(i, "from") || kw(i, "in") {
        i += 1;
    }
    let Some(cursor) =
        words.get(i).filter(|t| matches!(t.token, Token::Word(_))).and_then(|t| word(t))
    else {
        return Err(syntax(i));
    };
    if words.len() > i + 1 {
        return Err(syntax(i + 1));
    }
    Ok(Stmt::Fetch(FetchStmt { direction, cursor, moving }))
}

fn set_constraints(sql: &str, words: &[&TokenWithSpan]) -> Result<Stmt> {
    let syntax = |t: Option<&&TokenWithSpan>| syntax_at(sql, t);
    let deferred = match words.last() {
        Some(t) if is_kw(Some(t), "deferred") => true,
        Some(t) if is_kw(Some(t), "immediate") => false,
        last => return Err(syntax(if words.len() > 2 { last } else { None })),
    };
    let list = &words[2..words.len() - 1];
    if list.len() == 1 && is_kw(list.first(), "all") {
        return Ok(Stmt::SetConstraints(None, deferred));
    }
    let mut names = Vec::new();
    let mut i = 0;
    loop {
        let mut parts = Vec::new();
        loop {
            match list.get(i).and_then(|t| word(t)) {
                Some(w) => parts.push(w),
                None => return Err(syntax(list.get(i).or(words.last()))),
            }
            i += 1;
            match list.get(i).map(|t| &t.token) {
                Some(Token::Period) => i += 1,
                _ => break,
            }
        }
        let name = parts.pop().unwrap_or_default();
        match parts.len() {
            0 => names.push(crate::catalog::ObjName { schema: None, name }),
            1 => names.push(crate::catalog::ObjName { schema: parts.pop(), name }),
            _ => return Err(syntax(list.get(i.saturating_sub(1)))),
        }
        match list.get(i).map(|t| &t.token) {
            None => break,
            Some(Token::Comma) => i += 1,
            Some(_) => return Err(syntax(list.get(i))),
        }
    }
    Ok(Stmt::SetConstraints(Some(names), deferred))
}

fn copy(sql: &str, starts: &[usize], w: &[&TokenWithSpan]) -> Result<Stmt> {
    let mut i = 1;
    let next = |i: &mut usize| -> Option<&TokenWithSpan> {
        let t = w.get(*i).copied();
        *i += 1;
        t
    };
    // COPY (query) TO STDOUT: the query is the text between the parentheses.
    let mut query = None;
    if w.get(1).is_some_and(|t| t.token == Token::LParen) {
        let mut depth = 0;
        let close = w.iter().enumerate().skip(1).find_map(|(k, t)| {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(k);
                    }
                }
                _ => {}
            }
            None
        });
        let Some(close) = close else { bail!(SyntaxError, "syntax error at end of input") };
        let (open, end) = (w[1], w[close]);
        let text = byte_pos(sql, starts, open.span.end.line, open.span.end.column)
            .zip(byte_pos(sql, starts, end.span.start.line, end.span.start.column))
            .and_then(|(a, b)| sql.get(a..b))
            .unwrap_or("");
        let dialect = PostgreSqlDialect {};
        let stmt = Parser::new(&dialect)
            .with_recursion_limit(MAX_RECURSION)
            .try_with_sql(text)
            .and_then(|mut p| p.parse_statement())
            .map_err(|e| syntax_error(text, e, None))?;
        if !matches!(stmt, ast::Statement::Query(_)) {
            bail!(FeatureNotSupported, "COPY (statement) supports only queries yet");
        }
        query = Some(Box::new(stmt));
        i = close + 1;
    }
    let mut table = crate::catalog::ObjName::bare("");
    if query.is_none() {
        let Some(name) = next(&mut i).and_then(word) else {
            bail!(SyntaxError, "syntax error at or near \"COPY\"")
        };
        table.name = name;
    }
    // schema-qualified name
    if query.is_none() && w.get(i).map(|t| t.token == Token::Period).unwrap_or(false) {
        i += 1;
        let name = match next(&mut i).and_then(word) {
            Some(n) => n,
            None => bail!(SyntaxError, "syntax error in COPY table name"),
        };
        table.schema = Some(std::mem::replace(&mut table.name, name));
    }
    let mut columns = Vec::new();
    if query.is_none() && w.get(i).map(|t| t.token == Token::LParen).unwrap_or(false) {
        i += 1;
        loop {
            match next(&mut i) {
                Some(t) if t.token == Token::RParen => break,
                Some(t) if t.token == Token::Comma => continue,
                Some(t) => match word(t) {
                    Some(c) => columns.push(c),
                    None => bail!(SyntaxError, "syntax error at or near \"{}\"", t.token),
                },
                None => bail!(SyntaxError, "syntax error at end of input"),
            }
        }
    }
    let dir = w.get(i).copied();
    let from = match next(&mut i).and_then(word).as_deref() {
        Some("from") if query.is_some() => {
            let t = dir.expect("a word was read");
            let mut e = err!(SyntaxError, "syntax error at or near \"{}\"", t.token);
            if let Some(p) = char_pos(sql, t.span.start.line, t.span.start.column) {
                e = e.with_position(p as u32 + 1);
            }
            return Err(e);
        }
        Some("from") => true,
        Some("to") => false,
        _ => bail!(SyntaxError, "syntax error in COPY: expected FROM or TO"),
    };
    match next(&mut i).and_then(word).as_deref() {
        Some("stdin") if from => {}
        Some("stdout") if !from => {}
        Some(other) => bail!(
            FeatureNotSupported,
            "COPY {} a file (\"{other}\") is not supported; use STDIN/STDOUT",
            if from { "from" } else { "to" }
        ),
        None => bail!(SyntaxError, "syntax error at end of input"),
    }
    let mut stmt = CopyStmt {
        query,
        table,
        columns,
        from,
        format: CopyFormat::Text,
        delimiter: '\t',
        null: "\\N".into(),
        header: false,
    };
    let mut opts: Vec<(String, Option<String>)> = Vec::new();
    let rest: Vec<&TokenWithSpan> = w[i..].to_vec();
    let mut j = 0;
    if is_kw(rest.get(j), "with") {
        j += 1;
    }
    if rest.get(j).map(|t| t.token == Token::LParen).unwrap_or(false) {
        j += 1;
        while j < rest.len() && rest[j].token != Token::RParen {
            if rest[j].token == Token::Comma {
                j += 1;
                continue;
            }
            let Some(name) = word(rest[j]) else {
                bail!(SyntaxError, "syntax error at or near \"{}\"", rest[j].token)
            };
            j += 1;
            let val = match rest.get(j).map(|t| &t.token) {
                Some(Token::Comma) | Some(Token::RParen) | None => None,
                Some(Token::SingleQuotedString(s)) => {
                    j += 1;
                    Some(s.clone())
                }
                Some(Token::Word(wd)) => {
                    j += 1;
                    Some(wd.value.to_lowercase())
                }
                Some(Token::Number(n, _)) => {
                    j += 1;
                    Some(n.clone())
                }
                Some(other) => bail!(SyntaxError, "syntax error at or near \"{other}\""),
            };
            opts.push((name, val));
        }
    } else {
        // Old-style options: CSV, HEADER, DELIMITER 'x', NULL 'x', BINARY.
        while j < rest.len() {
            let Some(name) = word(rest[j]) else {
                bail!(SyntaxError, "syntax error at or near \"{}\"", rest[j].token)
            };
            j += 1;
            match name.as_str() {
                "csv" => opts.push(("format".into(), Some("csv".into()))),
                "binary" => opts.push(("format".into(), Some("binary".into()))),
                "header" => opts.push(("header".into(), None)),
                "delimiter" | "null" => {
                    let v = match rest.get(j).map(|t| &t.token) {
                        Some(Token::SingleQuotedString(s)) => s.clone(),
                        _ => bail!(SyntaxError, "syntax error in COPY option {name}"),
                    };
                    j += 1;
                    if is_kw(rest.get(j), "as") {
                        j += 1;
                    }
                    opts.push((name, Some(v)));
                }
                "as" => {}
                other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
            }
        }
    }
    for (name, val) in opts {
        match (name.as_str(), val.as_deref()) {
            ("format", Some("csv")) => {
                stmt.format = CopyFormat::Csv;
                if stmt.delimiter == '\t' {
                    stmt.delimiter = ',';
                }
                if stmt.null == "\\N" {
                    stmt.null = String::new();
                }
            }
            ("format", Some("text")) => stmt.format = CopyFormat::Text,
            ("format", Some("binary")) => stmt.format = CopyFormat::Binary,
            ("format", Some(f)) => {
                bail!(FeatureNotSupported, "COPY format \"{f}\" is not supported yet")
            }
            ("delimiter", Some(d)) => {
                let mut cs = d.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => stmt.delimiter = c,
                    _ => bail!(
                        FeatureNotSupported,
                        "COPY delimiter must be a single one-byte character"
                    ),
                }
            }
            ("null", Some(n)) => stmt.null = n.to_string(),
            ("header", v) => stmt.header = !matches!(v, Some("false" | "off" | "0")),
            (
                "freeze" | "encoding" | "quote" | "escape" | "force_not_null" | "force_null"
                | "force_quote",
                _,
            ) => {}
            (other, _) => bail!(SyntaxError, "option \"{other}\" not recognized"),
        }
    }
    Ok(Stmt::Copy(stmt))
}

/// The statement a query expression is when it writes (INSERT, UPDATE,
/// DELETE or MERGE, which sqlparser reads as a query's body under WITH).
pub fn written(body: &ast::SetExpr) -> Option<&ast::Statement> {
    match body {
        ast::SetExpr::Insert(s)
        | ast::SetExpr::Update(s)
        | ast::SetExpr::Delete(s)
        | ast::SetExpr::Merge(s) => Some(s),
        _ => None,
    }
}

/// The call each column of `SET (a, b) = (SELECT ...)` is assigned
/// (sqlparser keeps the list whole): `"pg_multiassign"(id, k, n,
/// (SELECT ...))` reads field `k` (from 0) of the subquery's row, which
/// has to have `n` columns; the calls of one SET share the subquery, run
/// once per row (`id` numbers the SETs of the statement), which only the
/// first call carries (the others NULL).
pub const MULTI_ASSIGN: &str = "pg_multiassign";

/// Rewrites `SET (a, b) = (x, y)` (or `= ROW(x, y)`) in UPDATE, ON
/// CONFLICT DO UPDATE and MERGE as `SET a = x, b = y`, and `SET (a, b) =
/// (SELECT ...)` as [`MULTI_ASSIGN`] calls.
fn spread_tuple_sets(stmt: &mut ast::Statement) -> Result<()> {
    // Only statements that may hold a SET are walked (a long INSERT's
    // VALUES is not); also in statements inside others: PREPARE,
    // EXPLAIN, WITH.
    let sets = match &*stmt {
        ast::Statement::Insert(i) => i.on.is_some(),
        ast::Statement::Query(q) => q.with.is_some() || written(&q.body).is_some(),
        ast::Statement::Update(_)
        | ast::Statement::Merge(_)
        | ast::Statement::Prepare { .. }
        | ast::Statement::Explain { .. } => true,
        _ => false,
    };
    if !sets {
        return Ok(());
    }
    let mut subqueries = 0;
    let r = ast::visit_statements_mut(stmt, |s| match spread_sets(s, &mut subqueries) {
        Ok(()) => std::ops::ControlFlow::Continue(()),
        Err(e) => std::ops::ControlFlow::Break(e),
    });
    match r {
        std::ops::ControlFlow::Break(e) => Err(e),
        std::ops::ControlFlow::Continue(()) => Ok(()),
    }
}

/// The call `"name"(args)`: a function with a quoted name, as the
/// rewrites here mark what the binder reads back.
pub(crate) fn quoted_call(name: &str, args: Vec<ast::Expr>) -> ast::Expr {
    let arg = |e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e));
    ast::Expr::Function(ast::Function {
        name: ast::ObjectName::from(vec![ast::Ident::with_quote('"', name)]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args.into_iter().map(arg).collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// The column and subscripts of a target `subscripted_targets` rewrote.
fn subscripted_target(a: &ast::Assignment) -> Option<(&ast::Ident, &str)> {
    let ast::AssignmentTarget::ColumnName(n) = &a.target else { return None };
    let [column, subs] = n.0.as_slice() else { return None };
    let subs = subs.as_ident()?;
    let text = subs.value.strip_prefix(SUBSCRIPTS).filter(|_| subs.quote_style == Some('"'))?;
    Some((column.as_ident()?, text))
}

/// Makes each subscripted SET target (`a[2] = x`) an assignment of the
/// whole column: `a = "pg_subscript_assign"(t.a, x, a[2])`, where `t` is
/// `table`, the name the target table goes by. Assignments to elements of
/// one column join into one, each applied to the value the ones before it
/// made (`a[1] = x, a[2] = y`).
fn subscripted_sets(list: &mut Vec<ast::Assignment>, table: Option<&ast::Ident>) -> Result<()> {
    if !list.iter().any(|a| subscripted_target(a).is_some()) {
        return Ok(());
    }
    let mut out: Vec<ast::Assignment> = Vec::with_capacity(list.len());
    // Where in `out` each column's joined element assignments are.
    let mut joined: Vec<(String, usize)> = Vec::new();
    for a in list.drain(..) {
        let Some((column, subs)) = subscripted_target(&a) else {
            out.push(a);
            continue;
        };
        let (column, subs) = (column.clone(), subs.to_string());
        let name = crate::bind::ident(&column);
        let element = match expr_text(&format!("{column}{subs}")) {
            Ok(e @ ast::Expr::CompoundFieldAccess { .. }) => e,
            _ => bail!(SyntaxError, "syntax error at or near \"[\""),
        };
        let at = joined.iter().find(|(n, _)| *n == name).map(|&(_, i)| i);
        let base = match at {
            Some(i) => out[i].value.clone(),
            None => match table {
                Some(t) => ast::Expr::CompoundIdentifier(vec![t.clone(), column.clone()]),
                None => ast::Expr::Identifier(column.clone()),
            },
        };
        let value = quoted_call(SUBSCRIPT_ASSIGN, vec![base, a.value, element]);
        match at {
            Some(i) => out[i].value = value,
            None => {
                joined.push((name, out.len()));
                let target = ast::ObjectName::from(vec![column.clone()]);
                out.push(ast::Assignment {
                    target: ast::AssignmentTarget::ColumnName(target),
                    value,
                });
            }
        }
    }
    *list = out;
    Ok(())
}

/// [`spread_tuple_sets`] of one statement; `subqueries` counts the
/// sub-SELECT sources so far.
fn spread_sets(stmt: &mut ast::Statement, subqueries: &mut usize) -> Result<()> {
    // The name the target table goes by, which qualifies the column a
    // subscripted target reads.
    let factor_name = |f: &ast::TableFactor| match f {
        ast::TableFactor::Table { alias: Some(a), .. } => Some(a.name.clone()),
        ast::TableFactor::Table { name, .. } => name.0.last().and_then(|p| p.as_ident()).cloned(),
        _ => None,
    };
    let (lists, target): (Vec<&mut Vec<ast::Assignment>>, _) = match stmt {
        ast::Statement::Update(u) => (vec![&mut u.assignments], factor_name(&u.table.relation)),
        ast::Statement::Insert(i) => {
            let name = match (&i.table_alias, &i.table) {
                (Some(a), _) => Some(a.alias.clone()),
                (None, ast::TableObject::TableName(n)) => {
                    n.0.last().and_then(|p| p.as_ident()).cloned()
                }
                _ => None,
            };
            match &mut i.on {
                Some(ast::OnInsert::OnConflict(ast::OnConflict {
                    action: ast::OnConflictAction::DoUpdate(du),
                    ..
                })) => (vec![&mut du.assignments], name),
                _ => (vec![], None),
            }
        }
        ast::Statement::Merge(m) => {
            let name = factor_name(&m.table);
            let lists = m
                .clauses
                .iter_mut()
                .filter_map(|c| match &mut c.action {
                    ast::MergeAction::Update(ast::MergeUpdateExpr {
                        kind: ast::MergeUpdateKind::Set(a),
                        ..
                    }) => Some(a),
                    _ => None,
                })
                .collect();
            (lists, name)
        }
        _ => (vec![], None),
    };
    for list in lists {
        subscripted_sets(list, target.as_ref())?;
        if !list.iter().any(|a| matches!(a.target, ast::AssignmentTarget::Tuple(_))) {
            continue;
        }
        let mut out = Vec::with_capacity(list.len());
        for a in list.drain(..) {
            let ast::AssignmentTarget::Tuple(names) = &a.target else {
                out.push(a);
                continue;
            };
            let values = match &a.value {
                ast::Expr::Tuple(v) => v.clone(),
                ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => {
                    match &f.args {
                        ast::FunctionArguments::List(l) => l
                            .args
                            .iter()
                            .map(|x| match x {
                                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                                    Ok(e.clone())
                                }
                                other => Err(err!(SyntaxError, "syntax error at or near \"{other}\"")),
                            })
                            .collect::<Result<Vec<_>>>()?,
                        _ => Vec::new(),
                    }
                }
                ast::Expr::Subquery(_) => {
                    *subqueries += 1;
                    let n = names.len();
                    for (k, name) in names.iter().enumerate() {
                        let int = |i: usize| ast::Expr::value(ast::Value::Number(i.to_string(), false));
                        // Only the first call carries the sub-SELECT.
                        let query = match k {
                            0 => a.value.clone(),
                            _ => ast::Expr::value(ast::Value::Null),
                        };
                        let args = vec![int(*subqueries), int(k), int(n), query];
                        out.push(ast::Assignment {
                            target: ast::AssignmentTarget::ColumnName(name.clone()),
                            value: quoted_call(MULTI_ASSIGN, args),
                        });
                    }
                    continue;
                }
                _ => bail!(
                    FeatureNotSupported,
                    "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression"
                ),
            };
            if values.len() != names.len() {
                bail!(SyntaxError, "number of columns does not match number of values");
            }
            for (n, v) in names.iter().zip(values) {
                out.push(ast::Assignment {
                    target: ast::AssignmentTarget::ColumnName(n.clone()),
                    value: v,
                });
            }
        }
        *list = out;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_statements_and_keeps_strings() {
        let p = parse("select 'a;b'; select 2;").expect("parses");
        assert_eq!(p.len(), 2);
        assert_eq!(&*p[0].text, "select 'a;b'");
        assert_eq!(p[1].offset, 14);
    }

    #[test]
    fn empty_query() {
        let p = parse("  -- nothing\n").expect("parses");
        assert_eq!(p[0].stmt, Stmt::Empty);
    }

    #[test]
    fn copy_with_options() {
        let p = parse("copy pgbench_accounts from stdin with (freeze on)").expect("parses");
        match &p[0].stmt {
            Stmt::Copy(c) => {
                assert_eq!(c.table.name, "pgbench_accounts");
                assert!(c.from);
                assert_eq!(c.format, CopyFormat::Text);
            }
            other => panic!("unexpected {other:?}"),
        }
        let p = parse("COPY t (a, b) TO STDOUT WITH (FORMAT csv, HEADER)").expect("parses");
        match &p[0].stmt {
            Stmt::Copy(c) => {
                assert_eq!(c.columns, vec!["a", "b"]);
                assert!(!c.from && c.header && c.format == CopyFormat::Csv);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn syntax_error_has_position() {
        let e = parse("select * fron t").expect_err("fails");
        assert_eq!(e.code, crate::error::SqlState::SyntaxError);
        assert!(e.position.is_some(), "{e:?}");
        let e = parse("select (").expect_err("fails");
        assert_eq!(e.message, "syntax error at end of input");
    }

    #[test]
    fn sequence_options_in_any_order() {
        let q = "create sequence s as integer start with 1 increment by 1 no minvalue cache 1";
        let Stmt::Sql(s) = &parse(q).expect("parses")[0].stmt else { panic!("not sql") };
        let ast::Statement::CreateSequence { sequence_options, data_type, .. } = s.as_ref() else {
            panic!("not create sequence: {s:?}")
        };
        assert!(data_type.is_some());
        assert_eq!(sequence_options.len(), 4);
        let e = parse("create sequence s cycle no cycle").expect_err("fails");
        assert_eq!(e.message, "conflicting or redundant options");
        assert_eq!(e.position, Some(25));
    }

    #[test]
    fn lock_clauses_read_as_sqlparser_can() {
        let p = parse("select * from a, b for no key update of a, b nowait for key share of c")
            .expect("parses");
        let Stmt::Sql(s) = &p[0].stmt else { panic!("not SQL") };
        let ast::Statement::Query(q) = s.as_ref() else { panic!("not a query") };
        let shown: Vec<String> = q.locks.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            shown,
            ["FOR UPDATE OF a NOWAIT", "FOR UPDATE OF b NOWAIT", "FOR SHARE OF c"]
                .map(String::from)
        );
    }

    #[test]
    fn partition_commands() {
        let one = |sql: &str| parse(sql).expect("parses").remove(0).stmt;
        let Stmt::Partition(c) =
            one("alter table only p attach partition s.c for values in (1, 2)")
        else {
            panic!("not a partition command");
        };
        assert_eq!((c.parent.to_string(), c.partition.to_string()), ("p".into(), "s.c".into()));
        assert!(
            matches!(&c.action, PartitionAction::Attach(ast::ForValues::In(v)) if v.len() == 2)
        );
        let Stmt::Partition(c) = one("ALTER TABLE p DETACH PARTITION c FINALIZE") else {
            panic!("not a partition command");
        };
        assert_eq!(c.action, PartitionAction::Detach(Some(false)));
        let Stmt::Partition(c) = one("alter index if exists p_idx attach partition c_idx") else {
            panic!("not a partition command");
        };
        assert!(c.if_exists && c.action == PartitionAction::AttachIndex);
        let Stmt::Sql(s) = one("create unique index i on only p (a)") else {
            panic!("not CREATE INDEX");
        };
        assert!(matches!(s.as_ref(), ast::Statement::CreateIndex(ci) if is_on_only(ci)));
        let e = parse("alter table p attach partition c;").expect_err("no bound");
        assert_eq!(e.message, "syntax error at or near \";\"");
    }

    #[test]
    fn only_before_a_table_is_dropped() {
        let a = parse("select * from only t join only u on true").expect("parses");
        let b = parse("select * from t join u on true").expect("parses");
        assert_eq!(a[0].stmt, b[0].stmt);
    }

    #[test]
    fn vacuum_variants() {
        for q in ["vacuum", "vacuum analyze pgbench_branches", "VACUUM (ANALYZE) t"] {
            assert_eq!(parse(q).expect("parses")[0].stmt, Stmt::Maintenance("VACUUM"));
        }
    }
}
