//! GRANT role TO role and REVOKE role FROM role (role membership), which
//! sqlparser does not read; GRANT and REVOKE of privileges ON objects are
//! sqlparser's.

use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// GRANT role, ... TO member, ... \[WITH ADMIN OPTION\] \[GRANTED BY r\] or
/// REVOKE \[ADMIN OPTION FOR\] role, ... FROM member, ... \[GRANTED BY r\]
/// \[CASCADE | RESTRICT\].
#[derive(Debug, Clone, PartialEq)]
pub struct GrantRole {
    /// GRANT (else REVOKE).
    pub grant: bool,
    /// The roles granted or revoked.
    pub roles: Vec<ast::Ident>,
    /// The roles that become (or stop being) their members.
    pub members: Vec<ast::Ident>,
    /// WITH ADMIN OPTION, or REVOKE ADMIN OPTION FOR.
    pub admin: bool,
}

/// Reads a role GRANT or REVOKE (the parser is at GRANT or REVOKE).
pub(super) fn role_grant(p: &mut Parser) -> Result<GrantRole, ParserError> {
    let grant = p.parse_keyword(Keyword::GRANT);
    if !grant {
        p.expect_keyword(Keyword::REVOKE)?;
    }
    let mut admin = !grant && p.parse_keywords(&[Keyword::ADMIN, Keyword::OPTION, Keyword::FOR]);
    let roles = p.parse_comma_separated(|p| p.parse_identifier())?;
    p.expect_keyword(if grant { Keyword::TO } else { Keyword::FROM })?;
    let members = p.parse_comma_separated(|p| {
        let _ = p.parse_keyword(Keyword::GROUP);
        p.parse_identifier()
    })?;
    if grant && p.parse_keywords(&[Keyword::WITH, Keyword::ADMIN, Keyword::OPTION]) {
        admin = true;
    }
    if p.parse_keywords(&[Keyword::GRANTED, Keyword::BY]) {
        p.parse_identifier()?;
    }
    if !grant {
        let _ = p.parse_one_of_keywords(&[Keyword::CASCADE, Keyword::RESTRICT]);
    }
    if p.peek_token().token != Token::EOF {
        return p.expected("end of statement", p.peek_token());
    }
    Ok(GrantRole { grant, roles, members, admin })
}

/// A GRANT or REVOKE of privileges read here rather than by sqlparser
/// (PostgreSQL's abbreviated_grant_or_revoke, and GRANT ON TYPE).
#[derive(Debug, Clone, PartialEq)]
pub struct PrivilegeChange {
    /// GRANT (else REVOKE).
    pub grant: bool,
    /// The privileges named, lower case; None for ALL.
    pub privileges: Option<Vec<String>>,
    /// The roles granted to or revoked from; None for PUBLIC.
    pub grantees: Vec<Option<ast::Ident>>,
    /// WITH GRANT OPTION, or GRANT OPTION FOR.
    pub option: bool,
    /// REVOKE ... CASCADE.
    pub cascade: bool,
}

/// ALTER DEFAULT PRIVILEGES \[FOR ROLE r, ...\] \[IN SCHEMA s, ...\] GRANT
/// privileges ON kind TO roles \[WITH GRANT OPTION\], or REVOKE \[GRANT
/// OPTION FOR\] privileges ON kind FROM roles \[CASCADE | RESTRICT\].
#[derive(Debug, Clone, PartialEq)]
pub struct AlterDefaultPrivileges {
    /// FOR ROLE: whose new objects (none: the current user's).
    pub roles: Vec<ast::Ident>,
    /// IN SCHEMA: new objects in these schemas (none: in any).
    pub schemas: Vec<ast::Ident>,
    /// The kind: `r` (TABLES), `S` (SEQUENCES), `f` (FUNCTIONS, ROUTINES),
    /// `T` (TYPES), `n` (SCHEMAS).
    pub objtype: char,
    /// What is granted or revoked.
    pub change: PrivilegeChange,
}

/// GRANT privileges ON TYPE | DOMAIN name, ... TO roles, or REVOKE ...
/// (sqlparser has no GRANT ON TYPE).
#[derive(Debug, Clone, PartialEq)]
pub struct GrantOnType {
    /// ON DOMAIN (else ON TYPE).
    pub domain: bool,
    /// The types.
    pub types: Vec<ast::ObjectName>,
    /// What is granted or revoked.
    pub change: PrivilegeChange,
}

/// Reads ALTER DEFAULT PRIVILEGES (the parser is at ALTER).
pub(super) fn alter_default_privileges(
    p: &mut Parser,
) -> Result<AlterDefaultPrivileges, ParserError> {
    p.expect_keywords(&[Keyword::ALTER, Keyword::DEFAULT, Keyword::PRIVILEGES])?;
    let (mut roles, mut schemas) = (Vec::new(), Vec::new());
    loop {
        if p.parse_keyword(Keyword::FOR) {
            p.expect_one_of_keywords(&[Keyword::ROLE, Keyword::USER])?;
            roles.extend(p.parse_comma_separated(|p| p.parse_identifier())?);
        } else if p.parse_keywords(&[Keyword::IN, Keyword::SCHEMA]) {
            schemas.extend(p.parse_comma_separated(|p| p.parse_identifier())?);
        } else {
            break;
        }
    }
    let (change, objtype) = privilege_change(p, |p| {
        let kind = p.parse_identifier()?.value.to_lowercase();
        Ok(match kind.as_str() {
            "tables" => 'r',
            "sequences" => 'S',
            "functions" | "routines" => 'f',
            "types" => 'T',
            "schemas" => 'n',
            _ => {
                return p.expected(
                    "TABLES, SEQUENCES, FUNCTIONS, ROUTINES, TYPES or SCHEMAS",
                    p.peek_token(),
                )
            }
        })
    })?;
    Ok(AlterDefaultPrivileges { roles, schemas, objtype, change })
}

/// Reads GRANT or REVOKE ... ON TYPE | DOMAIN (the parser is at GRANT or
/// REVOKE).
pub(super) fn grant_on_type(p: &mut Parser) -> Result<GrantOnType, ParserError> {
    let (change, (domain, types)) = privilege_change(p, |p| {
        let domain =
            p.expect_one_of_keywords(&[Keyword::TYPE, Keyword::DOMAIN])? == Keyword::DOMAIN;
        Ok((domain, p.parse_comma_separated(|p| p.parse_object_name(false))?))
    })?;
    Ok(GrantOnType { domain, types, change })
}

/// GRANT privileges ON <objects> TO roles \[WITH GRANT OPTION\] or REVOKE
/// \[GRANT OPTION FOR\] privileges ON <objects> FROM roles \[CASCADE |
/// RESTRICT\], to the end; `objects` reads what follows ON.
fn privilege_change<T>(
    p: &mut Parser,
    objects: impl FnOnce(&mut Parser) -> Result<T, ParserError>,
) -> Result<(PrivilegeChange, T), ParserError> {
    let grant = p.parse_keyword(Keyword::GRANT);
    if !grant {
        p.expect_keyword(Keyword::REVOKE)?;
    }
    let mut option = !grant && p.parse_keywords(&[Keyword::GRANT, Keyword::OPTION, Keyword::FOR]);
    let privileges = if p.parse_keyword(Keyword::ALL) {
        let _ = p.parse_keyword(Keyword::PRIVILEGES);
        None
    } else {
        Some(p.parse_comma_separated(|p| Ok(p.parse_identifier()?.value.to_lowercase()))?)
    };
    p.expect_keyword(Keyword::ON)?;
    let on = objects(p)?;
    p.expect_keyword(if grant { Keyword::TO } else { Keyword::FROM })?;
    let grantees = p.parse_comma_separated(|p| {
        if p.parse_keyword(Keyword::PUBLIC) {
            return Ok(None);
        }
        let _ = p.parse_keyword(Keyword::GROUP);
        p.parse_identifier().map(Some)
    })?;
    if grant && p.parse_keywords(&[Keyword::WITH, Keyword::GRANT, Keyword::OPTION]) {
        option = true;
    }
    let mut cascade = false;
    if !grant {
        cascade = p.parse_keyword(Keyword::CASCADE);
        if !cascade {
            let _ = p.parse_keyword(Keyword::RESTRICT);
        }
    }
    if p.peek_token().token != Token::EOF {
        return p.expected("end of statement", p.peek_token());
    }
    Ok((PrivilegeChange { grant, privileges, grantees, option, cascade }, on))
}

/// REASSIGN OWNED BY role, ... TO role, or DROP OWNED BY role, ...
/// \[CASCADE | RESTRICT\].
#[derive(Debug, Clone, PartialEq)]
pub struct Owned {
    /// The roles whose objects (and privileges) are meant.
    pub roles: Vec<ast::Ident>,
    /// REASSIGN's new owner; None for DROP OWNED.
    pub to: Option<ast::Ident>,
    /// DROP OWNED ... CASCADE.
    pub cascade: bool,
}

/// Reads REASSIGN OWNED or DROP OWNED (the parser is at its first word).
pub(super) fn owned(p: &mut Parser) -> Result<Owned, ParserError> {
    // REASSIGN is no sqlparser keyword.
    let reassign = matches!(&p.peek_token().token,
        Token::Word(w) if w.value.eq_ignore_ascii_case("reassign"));
    if reassign {
        p.next_token();
    } else {
        p.expect_keyword(Keyword::DROP)?;
    }
    p.expect_keywords(&[Keyword::OWNED, Keyword::BY])?;
    let roles = p.parse_comma_separated(|p| p.parse_identifier())?;
    let (mut to, mut cascade) = (None, false);
    if reassign {
        p.expect_keyword(Keyword::TO)?;
        to = Some(p.parse_identifier()?);
    } else {
        cascade = p.parse_keyword(Keyword::CASCADE);
        if !cascade {
            let _ = p.parse_keyword(Keyword::RESTRICT);
        }
    }
    if p.peek_token().token != Token::EOF {
        return p.expected("end of statement", p.peek_token());
    }
    Ok(Owned { roles, to, cascade })
}
