//! CREATE SEQUENCE and ALTER SEQUENCE, parsed here from sqlparser's tokens.
//!
//! PostgreSQL takes the sequence options in any order, each at most once
//! (pg_dump writes `AS integer START WITH 1 INCREMENT BY 1 NO MINVALUE ...`).
//! sqlparser 0.63 accepts them only in one fixed order and has no ALTER
//! SEQUENCE, so both statements read their options with the loop below,
//! built on sqlparser's own primitives (keywords, numbers, names, types).
//! CREATE SEQUENCE still becomes sqlparser's `Statement::CreateSequence`, so
//! the DDL code sees one form whichever order the client wrote.

use std::collections::HashSet;

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::err;
use crate::error::Error;

/// The options of a CREATE or ALTER SEQUENCE, in the order written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceOptions {
    /// AS type.
    pub data_type: Option<ast::DataType>,
    /// INCREMENT, (NO) MINVALUE, (NO) MAXVALUE, START, CACHE, (NO) CYCLE, in
    /// sqlparser's form (its `Cycle(true)` means NO CYCLE).
    pub options: Vec<ast::SequenceOptions>,
    /// RESTART: `Some(None)` restarts at the START value, `Some(Some(n))` at n.
    pub restart: Option<Option<ast::Expr>>,
    /// OWNED BY table.column, or the one-part name `none`.
    pub owned_by: Option<ast::ObjectName>,
}

/// ALTER SEQUENCE [IF EXISTS] name options.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterSequence {
    /// The sequence.
    pub name: ast::ObjectName,
    /// IF EXISTS: a missing sequence is a notice, not an error.
    pub if_exists: bool,
    /// What to change (at least one option).
    pub options: SequenceOptions,
}

/// Why an option list did not parse: sqlparser's error, an option given
/// twice (with the position of the second one), or an option Strata lacks.
pub(super) enum OptionError {
    Syntax(ParserError),
    Conflict(sqlparser::tokenizer::Span),
    Unsupported(&'static str),
}

impl From<ParserError> for OptionError {
    fn from(e: ParserError) -> Self {
        OptionError::Syntax(e)
    }
}

/// `CREATE [TEMP] SEQUENCE [IF NOT EXISTS] name options`, as sqlparser's
/// statement. The caller has checked the leading words.
pub(super) fn create(p: &mut Parser) -> Result<ast::Statement, OptionError> {
    p.expect_keyword(Keyword::CREATE)?;
    let temporary = p.parse_keyword(Keyword::TEMP) || p.parse_keyword(Keyword::TEMPORARY);
    p.expect_keyword(Keyword::SEQUENCE)?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    let o = options(p, true)?;
    if o.restart.is_some() {
        return Err(OptionError::Unsupported("RESTART in CREATE SEQUENCE is not supported yet"));
    }
    Ok(ast::Statement::CreateSequence {
        temporary,
        if_not_exists,
        name,
        data_type: o.data_type,
        sequence_options: o.options,
        owned_by: o.owned_by,
    })
}

/// The options of `ALTER SEQUENCE [IF EXISTS] name options`; the caller has
/// read the name (and seen that OWNER TO does not follow).
pub(super) fn alter(
    p: &mut Parser,
    name: ast::ObjectName,
    if_exists: bool,
) -> Result<AlterSequence, OptionError> {
    let options = options(p, false)?;
    Ok(AlterSequence { name, if_exists, options })
}

/// Reads options until the end of the statement; an empty list is allowed
/// only for CREATE.
fn options(p: &mut Parser, allow_empty: bool) -> Result<SequenceOptions, OptionError> {
    let mut o = SequenceOptions::default();
    let mut seen = HashSet::new();
    loop {
        let at = p.peek_token();
        if at.token == Token::EOF && (allow_empty || !seen.is_empty()) {
            return Ok(o);
        }
        let key = option(p, &mut o)?;
        if !seen.insert(key) {
            return Err(OptionError::Conflict(at.span));
        }
    }
}

/// Reads one option into `o` and names it (for the duplicate check).
fn option(p: &mut Parser, o: &mut SequenceOptions) -> Result<&'static str, ParserError> {
    use ast::SequenceOptions as S;
    if p.parse_keyword(Keyword::AS) {
        o.data_type = Some(p.parse_data_type()?);
        return Ok("as");
    }
    let (key, opt) = if p.parse_keyword(Keyword::INCREMENT) {
        let by = p.parse_keyword(Keyword::BY);
        ("increment", S::IncrementBy(p.parse_number()?, by))
    } else if p.parse_keywords(&[Keyword::NO, Keyword::MINVALUE]) {
        ("minvalue", S::MinValue(None))
    } else if p.parse_keyword(Keyword::MINVALUE) {
        ("minvalue", S::MinValue(Some(p.parse_number()?)))
    } else if p.parse_keywords(&[Keyword::NO, Keyword::MAXVALUE]) {
        ("maxvalue", S::MaxValue(None))
    } else if p.parse_keyword(Keyword::MAXVALUE) {
        ("maxvalue", S::MaxValue(Some(p.parse_number()?)))
    } else if p.parse_keyword(Keyword::START) {
        let with = p.parse_keyword(Keyword::WITH);
        ("start", S::StartWith(p.parse_number()?, with))
    } else if p.parse_keyword(Keyword::CACHE) {
        ("cache", S::Cache(p.parse_number()?))
    } else if p.parse_keywords(&[Keyword::NO, Keyword::CYCLE]) {
        ("cycle", S::Cycle(true))
    } else if p.parse_keyword(Keyword::CYCLE) {
        ("cycle", S::Cycle(false))
    } else if p.parse_keyword(Keyword::RESTART) {
        let with = p.parse_keyword(Keyword::WITH);
        let number = matches!(p.peek_token().token, Token::Number(..) | Token::Minus | Token::Plus);
        o.restart = Some(if with || number { Some(p.parse_number()?) } else { None });
        return Ok("restart");
    } else if p.parse_keywords(&[Keyword::OWNED, Keyword::BY]) {
        o.owned_by = Some(p.parse_object_name(false)?);
        return Ok("owned by");
    } else {
        return p.expected("a sequence option", p.peek_token());
    };
    o.options.push(opt);
    Ok(key)
}

/// The 42601 error for an option given twice, pointing at the second.
pub(super) fn conflict(sql: &str, span: sqlparser::tokenizer::Span) -> Error {
    let e = err!(SyntaxError, "conflicting or redundant options");
    match super::char_pos(sql, span.start.line, span.start.column) {
        Some(p) => e.with_position(p as u32 + 1),
        None => e,
    }
}
