//! The partition commands in PostgreSQL's form, which pg_dump writes for
//! every partition: `ALTER TABLE [IF EXISTS] [ONLY] parent ATTACH
//! PARTITION name FOR VALUES ... | DEFAULT`, `ALTER TABLE ... DETACH
//! PARTITION name [CONCURRENTLY | FINALIZE]` and `ALTER INDEX [IF EXISTS]
//! parent ATTACH PARTITION name`. sqlparser reads ATTACH and DETACH only
//! in ClickHouse's form; the bound is read by sqlparser's own PARTITION OF
//! reader, over the statement's tokens put behind a `CREATE TABLE ...
//! PARTITION OF` of our own.

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// One of the partition commands.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionCmd {
    /// The partitioned table (or, for [`PartitionAction::AttachIndex`],
    /// the partitioned table's index).
    pub parent: ast::ObjectName,
    /// IF EXISTS: a missing parent is a notice, not an error.
    pub if_exists: bool,
    /// The partition (or the partition's index).
    pub partition: ast::ObjectName,
    /// What is done.
    pub action: PartitionAction,
}

/// What a [`PartitionCmd`] does.
#[derive(Debug, Clone, PartialEq)]
pub enum PartitionAction {
    /// ALTER TABLE ... ATTACH PARTITION with its bound.
    Attach(ast::ForValues),
    /// ALTER TABLE ... DETACH PARTITION; Some(true) for CONCURRENTLY,
    /// Some(false) for FINALIZE.
    Detach(Option<bool>),
    /// ALTER INDEX ... ATTACH PARTITION.
    AttachIndex,
}

impl PartitionCmd {
    /// The command tag.
    pub fn tag(&self) -> &'static str {
        match self.action {
            PartitionAction::AttachIndex => "ALTER INDEX",
            _ => "ALTER TABLE",
        }
    }
}

/// True if `words` (the statement's words, lower case) start an ALTER
/// TABLE or ALTER INDEX whose action is ATTACH or DETACH PARTITION.
pub(super) fn is_partition_cmd(words: &[Option<String>]) -> bool {
    let w = |i: usize| words.get(i).and_then(|w| w.as_deref());
    w(0) == Some("alter")
        && matches!(w(1), Some("table" | "index"))
        && (3..words.len().min(12))
            .any(|i| matches!(w(i - 1), Some("attach" | "detach")) && w(i) == Some("partition"))
}

/// Reads the command from `p`, positioned at its ALTER.
pub(super) fn read(p: &mut Parser, tokens: &[TokenWithSpan]) -> Result<PartitionCmd, ParserError> {
    p.expect_keyword(Keyword::ALTER)?;
    let index = p.expect_one_of_keywords(&[Keyword::TABLE, Keyword::INDEX])? == Keyword::INDEX;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    // ONLY changes nothing here, as in PostgreSQL.
    if !index {
        let _only = p.parse_keyword(Keyword::ONLY);
    }
    let parent = p.parse_object_name(false)?;
    let attach = p.expect_one_of_keywords(&[Keyword::ATTACH, Keyword::DETACH])? == Keyword::ATTACH;
    p.expect_keyword(Keyword::PARTITION)?;
    let partition = p.parse_object_name(false)?;
    let action = match (index, attach) {
        (true, false) => return p.expected("ATTACH PARTITION", p.peek_token()),
        (true, true) => PartitionAction::AttachIndex,
        (false, true) => PartitionAction::Attach(bound(p, tokens)?),
        (false, false) => {
            let mode = match p.parse_keyword(Keyword::CONCURRENTLY) {
                true => Some(true),
                false => finalize(p).then_some(false),
            };
            PartitionAction::Detach(mode)
        }
    };
    if p.peek_token().token != Token::EOF {
        return p.expected("end of statement", p.peek_token());
    }
    Ok(PartitionCmd { parent, if_exists, partition, action })
}

/// FINALIZE, which sqlparser has no keyword for.
fn finalize(p: &mut Parser) -> bool {
    let is = matches!(&p.peek_token().token, Token::Word(w)
        if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("finalize"));
    if is {
        p.next_token();
    }
    is
}

/// The bound `FOR VALUES ... | DEFAULT` where `p` stands: the rest of the
/// statement's tokens read as the bound of a `CREATE TABLE ... PARTITION
/// OF` (whose reader sqlparser keeps private). Errors point into the
/// statement, since the tokens keep their places.
fn bound(p: &mut Parser, tokens: &[TokenWithSpan]) -> Result<ast::ForValues, ParserError> {
    if p.peek_token().token == Token::EOF {
        return p.expected("FOR VALUES or DEFAULT", p.peek_token());
    }
    let at = p.peek_token().span.start;
    let dialect = PostgreSqlDialect {};
    let lead = "CREATE TABLE partition_bound PARTITION OF partition_parent ";
    let mut lead = Tokenizer::new(&dialect, lead)
        .tokenize_with_location()
        .map_err(|e| ParserError::TokenizerError(e.message))?;
    lead.extend(tokens.iter().filter(|t| t.span.start >= at).cloned());
    let mut q = Parser::new(&dialect).with_tokens_with_locations(lead);
    let ast::Statement::CreateTable(ct) = q.parse_statement()? else {
        return Err(ParserError::ParserError("expected a partition bound".into()));
    };
    if ct.partition_by.is_some() {
        return Err(ParserError::ParserError("expected end of statement, found: partition".into()));
    }
    // The bound was the last thing: leave `p` at the end too.
    while p.peek_token().token != Token::EOF {
        p.next_token();
    }
    if q.peek_token().token != Token::EOF {
        return q.expected("end of statement", q.peek_token());
    }
    match ct.for_values {
        Some(fv) => Ok(fv),
        None => q.expected("FOR VALUES or DEFAULT", q.peek_token()),
    }
}
