//! Set-returning functions in the select list (`SELECT unnest(a),
//! generate_subscripts(a, 1) FROM t`): the calls are taken out of the
//! select list and run as one zipped function after the FROM items
//! (lateral to them), and the select list reads their hidden columns. That
//! is PostgreSQL's ProjectSet: calls in one select list advance in
//! lockstep, and the shorter ones give NULL once they run out.

use std::ops::ControlFlow;

use sqlparser::ast::{self, VisitMut, VisitorMut};

use crate::bind;

/// The qualifier of the hidden columns: no SQL identifier can spell it.
pub const QUALIFIER: &str = "\u{0}srf";

/// A set-returning call taken out of a select list: name and arguments.
pub type SrfCall = (String, Vec<ast::Expr>);

struct Extract<'a> {
    depth: usize,
    calls: Vec<SrfCall>,
    /// True for a user-defined set-returning function's name.
    user: &'a dyn Fn(&ast::ObjectName) -> bool,
}

impl VisitorMut for Extract<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let ast::Expr::Function(f) = e else { return ControlFlow::Continue(()) };
        let Ok(name) = bind::object_name(&f.name) else { return ControlFlow::Continue(()) };
        if f.over.is_some() || !(super::functions::is_set_returning(&name) || (self.user)(&f.name))
        {
            return ControlFlow::Continue(());
        }
        let ast::FunctionArguments::List(list) = &f.args else {
            return ControlFlow::Continue(());
        };
        let args = list
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x.clone()),
                _ => None,
            })
            .collect();
        let column = format!("c{}", self.calls.len());
        self.calls.push((name, args));
        *e = ast::Expr::CompoundIdentifier(vec![
            ast::Ident::new(QUALIFIER),
            ast::Ident::new(column),
        ]);
        ControlFlow::Continue(())
    }
}

/// Takes the set-returning calls out of a select list: the rewritten list
/// (unaliased items that had such calls keep the name they would have had)
/// and the calls, in order. None if there are none.
pub fn extract(
    projection: &[ast::SelectItem],
    user: &dyn Fn(&ast::ObjectName) -> bool,
) -> Option<(Vec<ast::SelectItem>, Vec<SrfCall>)> {
    let mut v = Extract { depth: 0, calls: Vec::new(), user };
    let mut out = Vec::with_capacity(projection.len());
    for item in projection {
        let before = v.calls.len();
        let mut item = item.clone();
        match &mut item {
            ast::SelectItem::UnnamedExpr(e) => {
                let name = super::derive_name(e);
                let _ = e.visit(&mut v);
                if v.calls.len() > before {
                    item = ast::SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: ast::Ident::with_quote('"', name),
                    };
                }
            }
            ast::SelectItem::ExprWithAlias { expr, .. } => {
                let _ = expr.visit(&mut v);
            }
            _ => {}
        }
        out.push(item);
    }
    (!v.calls.is_empty()).then_some((out, v.calls))
}
