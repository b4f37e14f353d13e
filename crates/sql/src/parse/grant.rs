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
