//! Named queries read like tables: views (stored query text, planned where
//! read) and WITH RECURSIVE (a base query, then a step run over a work table
//! until it adds no rows).

use super::*;

/// Plans a read of view `v`: its stored query, with the view's column names.
pub(super) fn plan_view(
    b: &mut Binder<'_>,
    v: &crate::catalog::ViewDef,
    qualifier: &str,
    alias: &Option<ast::TableAlias>,
) -> Result<(Plan, Scope)> {
    if b.view_depth > 32 {
        bail!(
            InvalidObjectDefinition,
            "infinite recursion detected in rules for relation \"{}\"",
            v.name
        );
    }
    let q = v.parse()?;
    // The view's query sees no enclosing scopes or CTEs of the reader.
    let outer = std::mem::take(&mut b.outer);
    let ctes = std::mem::take(&mut b.ctes);
    let trace = b.trace.take();
    // The view reads its tables with its owner's privileges.
    let check_as = b.check_as.replace(v.access.owner.clone());
    b.view_depth += 1;
    let planned = plan_query(b, &q);
    b.view_depth -= 1;
    b.check_as = check_as;
    b.outer = outer;
    b.ctes = ctes;
    b.trace = trace;
    let (plan, cols) = planned?;
    Ok((plan, derived_scope(cols, &v.columns, qualifier, alias)))
}

/// Plans `name AS (base UNION [ALL] step)` of WITH RECURSIVE, where `step`
/// reads `name` as the work table. None if `step` does not read `name`
/// (then it is an ordinary CTE).
pub(super) fn plan_recursive(
    b: &mut Binder<'_>,
    name: &str,
    aliases: &[ast::TableAliasColumnDef],
    q: &ast::Query,
) -> Result<Option<(Plan, Vec<Column>)>> {
    let ast::SetExpr::SetOperation { left, right, set_quantifier, .. } = q.body.as_ref() else {
        return Ok(None);
    };
    if q.order_by.is_some() || q.limit_clause.is_some() {
        bail!(FeatureNotSupported, "ORDER BY/LIMIT in a recursive query is not supported yet");
    }
    let all = match set_quantifier {
        ast::SetQuantifier::All => true,
        ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
        other => bail!(FeatureNotSupported, "set quantifier {other} is not supported"),
    };
    let (base, mut cols) = plan_set_expr(b, left)?;
    for c in &mut cols {
        if c.ty == DataType::Unknown {
            c.ty = DataType::Text;
        }
    }
    name_cte_columns(name, &mut cols, aliases)?;
    let id = b.work_tables;
    b.work_tables += 1;
    b.ctes.push((name.to_string(), Plan::WorkTable(id), cols.clone()));
    let step = plan_set_expr(b, right);
    b.ctes.pop();
    let (step, step_cols) = step?;
    if !step.any(&|p| matches!(p, Plan::WorkTable(w) if *w == id)) {
        return Ok(None);
    }
    if step_cols.len() != cols.len() {
        bail!(SyntaxError, "each UNION query must have the same number of columns");
    }
    // The step's rows take the base's column types.
    let mut exprs = Vec::with_capacity(cols.len());
    for (i, (c, s)) in cols.iter().zip(&step_cols).enumerate() {
        if sqltypes::cast::common_type(&c.ty, &s.ty).is_none() {
            bail!(
                DatatypeMismatch,
                "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                i + 1,
                c.ty,
                s.ty
            );
        }
        exprs.push(b.coerce(Expr::Column(i), &s.ty, &c.ty)?);
    }
    let step = Plan::Project(Box::new(step), exprs);
    let plan = Plan::Recursive { id, base: Box::new(base), step: Box::new(step), all };
    Ok(Some((plan, cols)))
}
