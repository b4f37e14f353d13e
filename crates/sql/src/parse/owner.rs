//! `ALTER VIEW | SEQUENCE | INDEX | TYPE name OWNER TO role`, which pg_dump
//! writes after every relation and type it creates. sqlparser parses OWNER
//! TO only after ALTER TABLE (which PostgreSQL accepts for any kind of
//! relation); the other four, and all of ALTER SEQUENCE, are read here.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::sequence::{self, OptionError};
use super::Stmt;

/// The kind of relation an ALTER statement names. ALTER TABLE accepts any
/// relation for OWNER TO; the others only their own kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelationKind {
    /// ALTER TABLE.
    Table,
    /// ALTER VIEW.
    View,
    /// ALTER SEQUENCE.
    Sequence,
    /// ALTER INDEX.
    Index,
    /// ALTER TYPE (read here for OWNER TO only; not a relation, but
    /// pg_dump writes the same line after CREATE TYPE).
    Type,
    /// ALTER DOMAIN (OWNER TO, RENAME TO, SET SCHEMA; a type that must
    /// be a domain).
    Domain,
}

impl RelationKind {
    /// True for ALTER TYPE and ALTER DOMAIN, which name a type.
    pub fn is_type(self) -> bool {
        matches!(self, RelationKind::Type | RelationKind::Domain)
    }

    /// The statement's command tag.
    pub fn tag(self) -> &'static str {
        match self {
            RelationKind::Table => "ALTER TABLE",
            RelationKind::View => "ALTER VIEW",
            RelationKind::Sequence => "ALTER SEQUENCE",
            RelationKind::Index => "ALTER INDEX",
            RelationKind::Type => "ALTER TYPE",
            RelationKind::Domain => "ALTER DOMAIN",
        }
    }
}

/// `ALTER kind [IF EXISTS] name OWNER TO role`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterOwner {
    /// Which ALTER statement it was.
    pub kind: RelationKind,
    /// The relation.
    pub name: ast::ObjectName,
    /// IF EXISTS: a missing relation is a notice, not an error.
    pub if_exists: bool,
    /// The new owner.
    pub owner: ast::Owner,
}

/// `ALTER kind [IF EXISTS] name SET SCHEMA schema` (TABLE, VIEW, SEQUENCE,
/// TYPE) and `ALTER VIEW | INDEX [IF EXISTS] name RENAME TO new`.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterName {
    /// Which ALTER statement it was.
    pub kind: RelationKind,
    /// The object.
    pub name: ast::ObjectName,
    /// IF EXISTS: a missing object is a notice, not an error.
    pub if_exists: bool,
    /// The new schema or name.
    pub change: NameChange,
}

/// What [`AlterName`] changes.
#[derive(Debug, Clone, PartialEq)]
pub enum NameChange {
    /// SET SCHEMA.
    Schema(ast::Ident),
    /// RENAME TO.
    Rename(ast::Ident),
}

/// ALTER TABLE/VIEW/INDEX/SEQUENCE/TYPE statements read here: OWNER TO,
/// SET SCHEMA, ALTER VIEW | INDEX ... RENAME TO, ALTER VIEW's column actions
/// (ALTER \[COLUMN\] ... SET/DROP DEFAULT, RENAME \[COLUMN\], read as
/// ALTER TABLE's), and any ALTER SEQUENCE. `Ok(None)`
/// leaves the statement to sqlparser (ALTER VIEW ... AS, ALTER TYPE ...
/// ADD VALUE).
pub(super) fn alter(p: &mut Parser, kind: RelationKind) -> Result<Option<Stmt>, OptionError> {
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = p.parse_object_name(false)?;
    let end = |p: &mut Parser| match p.peek_token().token {
        Token::EOF => Ok(()),
        _ => p.expected("end of statement", p.peek_token()),
    };
    if p.parse_keywords(&[Keyword::OWNER, Keyword::TO]) {
        let owner = p.parse_owner()?;
        end(p)?;
        return Ok(Some(Stmt::AlterOwner(AlterOwner { kind, name, if_exists, owner })));
    }
    let change = if p.parse_keywords(&[Keyword::SET, Keyword::SCHEMA]) {
        Some(NameChange::Schema(p.parse_identifier()?))
    } else if matches!(kind, RelationKind::View | RelationKind::Index)
        && p.parse_keywords(&[Keyword::RENAME, Keyword::TO])
    {
        Some(NameChange::Rename(p.parse_identifier()?))
    } else {
        None
    };
    if let Some(change) = change {
        end(p)?;
        return Ok(Some(Stmt::AlterName(AlterName { kind, name, if_exists, change })));
    }
    let column_action = matches!(p.peek_token().token, Token::Word(w)
            if matches!(w.keyword, Keyword::ALTER | Keyword::RENAME));
    if kind == RelationKind::View && column_action {
        let mut operations = vec![p.parse_alter_table_operation()?];
        while p.consume_token(&Token::Comma) {
            operations.push(p.parse_alter_table_operation()?);
        }
        end(p)?;
        return Ok(Some(Stmt::AlterView(Box::new(ast::AlterTable {
            name,
            if_exists,
            only: false,
            operations,
            location: None,
            on_cluster: None,
            table_type: None,
            end_token: ast::helpers::attached_token::AttachedToken::empty(),
        }))));
    }
    match kind {
        RelationKind::Sequence => {
            Ok(Some(Stmt::AlterSequence(Box::new(sequence::alter(p, name, if_exists)?))))
        }
        _ => Ok(None),
    }
}
