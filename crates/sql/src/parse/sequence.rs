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
    /// SEQUENCE NAME (an identity column's options only).
    pub name: Option<ast::ObjectName>,
}

/// `ALTER TABLE [IF EXISTS] [ONLY] table ALTER [COLUMN] column` and an
/// identity action (sqlparser reads only ADD GENERATED, without SEQUENCE
/// NAME, which pg_dump writes).
#[derive(Debug, Clone, PartialEq)]
pub struct AlterIdentity {
    /// The table.
    pub table: ast::ObjectName,
    /// IF EXISTS: a missing table is a notice, not an error.
    pub if_exists: bool,
    /// The column.
    pub column: ast::Ident,
    /// What to do.
    pub action: IdentityAction,
}

/// An identity action of ALTER TABLE ... ALTER COLUMN.
#[derive(Debug, Clone, PartialEq)]
pub enum IdentityAction {
    /// `ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(options)]`:
    /// ALWAYS, and the sequence's options.
    Add(bool, SequenceOptions),
    /// `SET GENERATED {ALWAYS | BY DEFAULT}` (Some(ALWAYS)), `SET option`
    /// and `RESTART [[WITH] n]`, in any number.
    Set(Option<bool>, SequenceOptions),
    /// `DROP IDENTITY [IF EXISTS]`: IF EXISTS.
    Drop(bool),
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
    /// A 42601 error with this message.
    Invalid(&'static str),
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
    if o.name.is_some() {
        return Err(OptionError::Invalid("invalid sequence option SEQUENCE NAME"));
    }
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
    if options.name.is_some() {
        return Err(OptionError::Invalid("invalid sequence option SEQUENCE NAME"));
    }
    Ok(AlterSequence { name, if_exists, options })
}

/// True if the words after `ALTER [COLUMN] column` of an ALTER TABLE
/// (`next`, lower case, unquoted ones) start an identity action.
pub(super) fn is_identity_action(next: &[Option<String>]) -> bool {
    let w = |i: usize| next.get(i).cloned().flatten();
    match (w(0).as_deref(), w(1).as_deref()) {
        (Some("add" | "set"), Some("generated")) | (Some("drop"), Some("identity")) => true,
        (Some("restart"), _) => true,
        (Some("set"), Some(o)) => {
            matches!(o, "increment" | "minvalue" | "maxvalue" | "start" | "cache" | "cycle" | "no")
        }
        _ => false,
    }
}

/// Reads `ALTER TABLE ... ALTER [COLUMN] column` and an identity action
/// (the caller has checked [`is_identity_action`]).
pub(super) fn alter_identity(p: &mut Parser) -> Result<AlterIdentity, OptionError> {
    p.expect_keywords(&[Keyword::ALTER, Keyword::TABLE])?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let _ = p.parse_keyword(Keyword::ONLY);
    let table = p.parse_object_name(false)?;
    p.expect_keyword(Keyword::ALTER)?;
    let _ = p.parse_keyword(Keyword::COLUMN);
    let column = p.parse_identifier()?;
    let generated = |p: &mut Parser| -> Result<bool, ParserError> {
        if p.parse_keyword(Keyword::ALWAYS) {
            return Ok(true);
        }
        p.expect_keywords(&[Keyword::BY, Keyword::DEFAULT])?;
        Ok(false)
    };
    let action = if p.parse_keywords(&[Keyword::ADD, Keyword::GENERATED]) {
        let always = generated(p)?;
        p.expect_keywords(&[Keyword::AS, Keyword::IDENTITY])?;
        let mut o = SequenceOptions::default();
        if p.consume_token(&Token::LParen) {
            o = options_until(p, true, &Token::RParen)?;
            p.expect_token(&Token::RParen)?;
        }
        IdentityAction::Add(always, o)
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::IDENTITY]) {
        IdentityAction::Drop(p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]))
    } else {
        let mut always = None;
        let mut o = SequenceOptions::default();
        let mut seen = HashSet::new();
        while p.peek_token().token != Token::EOF {
            let at = p.peek_token();
            let key = if p.parse_keywords(&[Keyword::SET, Keyword::GENERATED]) {
                always = Some(generated(p)?);
                "generated"
            } else if p.peek_keyword(Keyword::RESTART) {
                option(p, &mut o)?
            } else {
                p.expect_keyword(Keyword::SET)?;
                option(p, &mut o)?
            };
            if !seen.insert(key) {
                return Err(OptionError::Conflict(at.span));
            }
        }
        IdentityAction::Set(always, o)
    };
    if p.peek_token().token != Token::EOF {
        return Ok(p.expected("end of statement", p.peek_token())?);
    }
    Ok(AlterIdentity { table, if_exists, column, action })
}

/// Reads options until the end of the statement; an empty list is allowed
/// only for CREATE.
fn options(p: &mut Parser, allow_empty: bool) -> Result<SequenceOptions, OptionError> {
    options_until(p, allow_empty, &Token::EOF)
}

/// Reads options up to token `end` (not read).
fn options_until(
    p: &mut Parser,
    allow_empty: bool,
    end: &Token,
) -> Result<SequenceOptions, OptionError> {
    let mut o = SequenceOptions::default();
    let mut seen = HashSet::new();
    loop {
        let at = p.peek_token();
        if at.token == *end && (allow_empty || !seen.is_empty()) {
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
    } else if p.parse_keywords(&[Keyword::SEQUENCE, Keyword::NAME]) {
        o.name = Some(p.parse_object_name(false)?);
        return Ok("sequence name");
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
