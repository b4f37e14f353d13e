//! The text Strata keeps for an expression it stores (column defaults and
//! CHECK conditions), written the way PostgreSQL deparses it so that
//! pg_get_expr, pg_get_constraintdef and pg_dump print what PostgreSQL
//! prints, and a dumped script restores to the same text again.
//!
//! sqlparser renders a cast's type in its own upper-case spelling
//! (`'x'::REGCLASS`, `CAST(a AS INT)`); PostgreSQL prints the type's
//! format_type name after `::` (`'x'::regclass`, `(a)::integer`). A condition
//! read back from a dump carries the parentheses pg_get_constraintdef put
//! around it; they are dropped so that text does not grow on every round.

use std::ops::ControlFlow;

use sqlparser::ast::{self, CastKind, Expr, ObjectName};
use sqltypes::DataType;

/// The text to store for `e`.
pub fn stored_text(e: &Expr) -> String {
    let mut e = e.clone();
    while let Expr::Nested(inner) = e {
        e = *inner;
    }
    normalize_casts(&mut e);
    e.to_string()
}

/// The text to store for a column default of type `ty`. A string literal
/// gets a cast to the column's type, as PostgreSQL shows the constant it
/// coerced the literal to (`'ok'::mood`, `'{}'::text[]`); numbers, booleans
/// and blank-padded char, whose casts PostgreSQL prints otherwise, do not.
pub fn stored_default(e: &Expr, ty: &DataType) -> String {
    let text = stored_text(e);
    let literal = matches!(
        e,
        Expr::Value(v) if matches!(v.value, ast::Value::SingleQuotedString(_))
    );
    let plain = ty.is_numeric() || matches!(ty, DataType::Bool | DataType::Char(_));
    match literal && !plain {
        true => format!("{text}::{}", unmodified(ty)),
        false => text,
    }
}

/// `ty` without its modifier (`character varying`, not `(10)`), as a
/// coerced constant's type prints.
fn unmodified(ty: &DataType) -> DataType {
    match ty {
        DataType::Varchar(_) => DataType::Varchar(None),
        DataType::Array(e) => unmodified(e).array_of(),
        other => other.clone(),
    }
}

/// The text to store for a view's query.
pub fn stored_query(q: &ast::Query) -> String {
    let mut q = q.clone();
    normalize_casts(&mut q);
    q.to_string()
}

/// Rewrites every cast in `node` to `operand::typename`.
fn normalize_casts<V: ast::VisitMut>(node: &mut V) {
    let _ = ast::visit_expressions_mut(node, |x| {
        if let Expr::Cast { kind, expr, data_type, format: None } = x {
            if matches!(kind, CastKind::Cast | CastKind::DoubleColon) {
                if let Ok(ty) = crate::bind::data_type(data_type) {
                    *data_type = ast::DataType::Custom(
                        ObjectName::from(vec![ast::Ident::new(ty.to_string())]),
                        vec![],
                    );
                    if !is_operand(expr) {
                        **expr = Expr::Nested(expr.clone());
                    }
                    *kind = CastKind::DoubleColon;
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Whether `e` can stand before `::` without parentheses.
fn is_operand(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Value(_)
            | Expr::Identifier(_)
            | Expr::CompoundIdentifier(_)
            | Expr::Function(_)
            | Expr::Nested(_)
            | Expr::Cast { kind: CastKind::DoubleColon, .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(sql: &str) -> String {
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let e = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_expr())
            .expect("expression");
        stored_text(&e)
    }

    #[test]
    fn casts_print_postgres_type_names() {
        assert_eq!(text("nextval('s'::REGCLASS)"), "nextval('s'::regclass)");
        assert_eq!(text("'a'::varchar(10)"), "'a'::character varying(10)");
        assert_eq!(text("CAST(a + 1 AS int)"), "(a + 1)::integer");
        assert_eq!(text("'{}'::text[]"), "'{}'::text[]");
        assert_eq!(text("'1'::int8::numeric(12,2)"), "'1'::bigint::numeric(12,2)");
    }

    #[test]
    fn outer_parentheses_are_dropped_once_stored() {
        assert_eq!(text("((amount >= 0))"), "amount >= 0");
        assert_eq!(text("(a > 0) AND (b > 0)"), "(a > 0) AND (b > 0)");
        // Stored text reads back to itself.
        for s in ["nextval('s'::regclass)", "(a + 1)::integer", "amount >= 0"] {
            assert_eq!(text(s), s);
        }
    }
}
