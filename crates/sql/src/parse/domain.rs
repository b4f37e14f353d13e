//! CREATE DOMAIN, ALTER DOMAIN and DROP DOMAIN, read here: sqlparser
//! needs `AS`, reads no NOT NULL among the constraints, only one name in
//! DROP DOMAIN and no ALTER DOMAIN at all.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::owner::{AlterName, AlterOwner, NameChange, RelationKind};
use super::Stmt;

/// `CREATE DOMAIN name [AS] type [COLLATE c] [DEFAULT expr] [constraint ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateDomain {
    /// The domain's name.
    pub name: ast::ObjectName,
    /// The type it is over.
    pub data_type: ast::DataType,
    /// COLLATE.
    pub collation: Option<ast::ObjectName>,
    /// DEFAULT.
    pub default: Option<ast::Expr>,
    /// NOT NULL, NULL and CHECK constraints, in order.
    pub constraints: Vec<DomainConstraint>,
}

/// One of a domain's constraints.
#[derive(Debug, Clone, PartialEq)]
pub enum DomainConstraint {
    /// `[CONSTRAINT name] NOT NULL`.
    NotNull,
    /// `NULL`: the default, said aloud.
    Null,
    /// `[CONSTRAINT name] CHECK (expr) [NOT VALID]`.
    Check {
        /// The constraint's name.
        name: Option<ast::Ident>,
        /// The condition, reading the value as VALUE.
        expr: Box<ast::Expr>,
        /// NOT VALID (ALTER DOMAIN ADD only): existing values go unchecked.
        not_valid: bool,
    },
}

/// `ALTER DOMAIN name action`, for the actions that change the domain itself.
#[derive(Debug, Clone, PartialEq)]
pub struct AlterDomain {
    /// The domain.
    pub name: ast::ObjectName,
    /// What changes.
    pub action: DomainAction,
}

/// What ALTER DOMAIN does.
#[derive(Debug, Clone, PartialEq)]
pub enum DomainAction {
    /// SET DEFAULT expr.
    SetDefault(ast::Expr),
    /// DROP DEFAULT.
    DropDefault,
    /// SET NOT NULL (true) or DROP NOT NULL.
    NotNull(bool),
    /// ADD constraint.
    Add(DomainConstraint),
    /// DROP CONSTRAINT [IF EXISTS] name [RESTRICT | CASCADE].
    DropConstraint {
        /// The constraint.
        name: ast::Ident,
        /// IF EXISTS.
        if_exists: bool,
    },
    /// RENAME CONSTRAINT old TO new.
    RenameConstraint(ast::Ident, ast::Ident),
    /// VALIDATE CONSTRAINT name.
    Validate(ast::Ident),
}

/// `DROP DOMAIN [IF EXISTS] name [, ...] [CASCADE | RESTRICT]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DropDomain {
    /// The domains.
    pub names: Vec<ast::ObjectName>,
    /// IF EXISTS.
    pub if_exists: bool,
    /// CASCADE.
    pub cascade: bool,
}

fn end(p: &mut Parser) -> Result<(), ParserError> {
    match p.peek_token().token {
        Token::EOF | Token::SemiColon => Ok(()),
        _ => p.expected("end of statement", p.peek_token()),
    }
}

/// Reads CREATE DOMAIN after its first two words.
pub(super) fn create(p: &mut Parser) -> Result<Stmt, ParserError> {
    let name = p.parse_object_name(false)?;
    let _ = p.parse_keyword(Keyword::AS);
    let data_type = p.parse_data_type()?;
    let mut d =
        CreateDomain { name, data_type, collation: None, default: None, constraints: vec![] };
    loop {
        if p.parse_keyword(Keyword::COLLATE) {
            d.collation = Some(p.parse_object_name(false)?);
        } else if p.parse_keyword(Keyword::DEFAULT) {
            if d.default.is_some() {
                return Err(ParserError::ParserError("multiple default expressions".to_string()));
            }
            d.default = Some(p.parse_expr()?);
        } else if let Some(c) = constraint(p)? {
            if let DomainConstraint::Check { not_valid: true, .. } = c {
                return Err(ParserError::ParserError(
                    "CHECK constraints cannot be marked NOT VALID".to_string(),
                ));
            }
            d.constraints.push(c);
        } else {
            end(p)?;
            return Ok(Stmt::CreateDomain(Box::new(d)));
        }
    }
}

/// `[CONSTRAINT name] { NOT NULL | NULL | CHECK (expr) [NOT VALID] }`, if next.
fn constraint(p: &mut Parser) -> Result<Option<DomainConstraint>, ParserError> {
    let name = match p.parse_keyword(Keyword::CONSTRAINT) {
        true => Some(p.parse_identifier()?),
        false => None,
    };
    if p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
        return Ok(Some(DomainConstraint::NotNull));
    }
    if p.parse_keyword(Keyword::NULL) {
        return Ok(Some(DomainConstraint::Null));
    }
    if p.parse_keyword(Keyword::CHECK) {
        p.expect_token(&Token::LParen)?;
        let expr = Box::new(p.parse_expr()?);
        p.expect_token(&Token::RParen)?;
        let not_valid = p.parse_keywords(&[Keyword::NOT, Keyword::VALID]);
        return Ok(Some(DomainConstraint::Check { name, expr, not_valid }));
    }
    match name {
        Some(_) => p.expected("NOT NULL, NULL or CHECK", p.peek_token()),
        None => Ok(None),
    }
}

/// Reads ALTER DOMAIN after its first two words.
pub(super) fn alter(p: &mut Parser) -> Result<Stmt, ParserError> {
    let name = p.parse_object_name(false)?;
    let kind = RelationKind::Domain;
    let action = if p.parse_keywords(&[Keyword::OWNER, Keyword::TO]) {
        let owner = p.parse_owner()?;
        end(p)?;
        return Ok(Stmt::AlterOwner(AlterOwner { kind, name, if_exists: false, owner }));
    } else if p.parse_keywords(&[Keyword::SET, Keyword::SCHEMA]) {
        let change = NameChange::Schema(p.parse_identifier()?);
        end(p)?;
        return Ok(Stmt::AlterName(AlterName { kind, name, if_exists: false, change }));
    } else if p.parse_keywords(&[Keyword::RENAME, Keyword::TO]) {
        let change = NameChange::Rename(p.parse_identifier()?);
        end(p)?;
        return Ok(Stmt::AlterName(AlterName { kind, name, if_exists: false, change }));
    } else if p.parse_keywords(&[Keyword::SET, Keyword::DEFAULT]) {
        DomainAction::SetDefault(p.parse_expr()?)
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::DEFAULT]) {
        DomainAction::DropDefault
    } else if p.parse_keywords(&[Keyword::SET, Keyword::NOT, Keyword::NULL]) {
        DomainAction::NotNull(true)
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::NOT, Keyword::NULL]) {
        DomainAction::NotNull(false)
    } else if p.parse_keyword(Keyword::ADD) {
        // PostgreSQL 15 adds only CHECK constraints.
        let next = p.peek_token();
        match constraint(p)? {
            Some(c @ DomainConstraint::Check { .. }) => DomainAction::Add(c),
            _ => return p.expected("CHECK", next),
        }
    } else if p.parse_keywords(&[Keyword::DROP, Keyword::CONSTRAINT]) {
        let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let name = p.parse_identifier()?;
        let _ = p.parse_one_of_keywords(&[Keyword::RESTRICT, Keyword::CASCADE]);
        DomainAction::DropConstraint { name, if_exists }
    } else if p.parse_keywords(&[Keyword::RENAME, Keyword::CONSTRAINT]) {
        let old = p.parse_identifier()?;
        p.expect_keyword_is(Keyword::TO)?;
        DomainAction::RenameConstraint(old, p.parse_identifier()?)
    } else if p.parse_keywords(&[Keyword::VALIDATE, Keyword::CONSTRAINT]) {
        DomainAction::Validate(p.parse_identifier()?)
    } else {
        return p.expected("an ALTER DOMAIN action", p.peek_token());
    };
    end(p)?;
    Ok(Stmt::AlterDomain(Box::new(AlterDomain { name, action })))
}

/// Reads DROP DOMAIN after its first two words.
pub(super) fn drop(p: &mut Parser) -> Result<Stmt, ParserError> {
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let names = p.parse_comma_separated(|p| p.parse_object_name(false))?;
    let cascade =
        p.parse_one_of_keywords(&[Keyword::RESTRICT, Keyword::CASCADE]) == Some(Keyword::CASCADE);
    end(p)?;
    Ok(Stmt::DropDomain(DropDomain { names, if_exists, cascade }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;

    fn read(sql: &str, f: fn(&mut Parser) -> Result<Stmt, ParserError>) -> Stmt {
        let dialect = PostgreSqlDialect {};
        let mut p = Parser::new(&dialect).try_with_sql(sql).expect("tokenizes");
        f(&mut p).expect("parses")
    }

    #[test]
    fn create_reads_constraints_in_any_order() {
        let Stmt::CreateDomain(d) = read(
            "email text not null constraint at check (value like '%@%') default 'a@b' null",
            create,
        ) else {
            panic!("not CREATE DOMAIN")
        };
        assert_eq!(d.data_type.to_string(), "TEXT");
        assert_eq!(d.default.map(|e| e.to_string()).as_deref(), Some("'a@b'"));
        assert_eq!(d.constraints.len(), 3);
        assert_eq!(d.constraints[0], DomainConstraint::NotNull);
        assert!(matches!(&d.constraints[1],
            DomainConstraint::Check { name: Some(n), not_valid: false, .. } if n.value == "at"));
    }

    #[test]
    fn alter_actions() {
        let Stmt::AlterDomain(a) = read("d add check (value > 0) not valid", alter) else {
            panic!("not ALTER DOMAIN")
        };
        assert!(matches!(
            a.action,
            DomainAction::Add(DomainConstraint::Check { not_valid: true, .. })
        ));
        assert!(matches!(read("d owner to bob", alter), Stmt::AlterOwner(_)));
        assert!(matches!(read("d rename to e", alter), Stmt::AlterName(_)));
        let Stmt::DropDomain(d) = read("if exists a, s.b cascade", drop) else {
            panic!("not DROP DOMAIN")
        };
        assert!(d.if_exists && d.cascade && d.names.len() == 2);
    }
}
