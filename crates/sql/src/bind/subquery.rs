//! Binding subqueries: uncorrelated ones become init plans run once per
//! statement; ones that read the enclosing row become correlated subqueries
//! run per row by `Plan::Apply`.

use super::*;

impl Binder<'_> {
    /// Plans a subquery. An uncorrelated one becomes an init plan of the
    /// current query level; one that reads the enclosing row becomes a
    /// correlated subquery of the current [`CorrCtx`] (only where one is set).
    /// In a grouped query's select list, HAVING or ORDER BY (`agg` given) it
    /// may read grouped columns only; it then runs on the input rows and its
    /// value, the same for a whole group, is carried through the aggregation
    /// as a hidden aggregate. For IN,
    /// `probe` is the left operand (bound, its type, NOT): it is coerced to
    /// the common type with the subquery's column.
    pub(super) fn subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        kind: SubqKind,
        agg: &mut Option<&mut AggState>,
        probe: Option<(Expr, DataType, bool)>,
    ) -> Result<(Expr, Vec<Column>)> {
        let per_row = std::mem::take(&mut self.per_row_call);
        self.outer.push(scope.clone());
        let r = self.query(q);
        self.outer.pop();
        let (plan, cols) = r?;
        // A volatile call runs per row where a correlated subquery may be.
        let per_row = per_row && self.corr.is_some();
        let probe = match probe {
            Some((x, xt, negated)) => {
                if cols.len() != 1 {
                    bail!(SyntaxError, "subquery has too many columns");
                }
                let t = self.unify(&xt, &cols[0].ty)?;
                Some((self.coerce(x, &xt, &t)?, negated))
            }
            None => None,
        };
        if !plan_reads_outer(&plan) && !per_row {
            let mark = self.subq_marks.last().copied().unwrap_or(0);
            self.subqueries.push((plan, kind));
            let i = self.subqueries.len() - 1 - mark;
            let x = match probe {
                Some((x, negated)) => Expr::InSubquery(Box::new(x), i, negated),
                None => Expr::Subquery(i),
            };
            return Ok((x, cols));
        }
        let Some(ctx) = self.corr else {
            bail!(
                FeatureNotSupported,
                "correlated subqueries are supported only in WHERE, the select list, HAVING, ORDER BY and SET"
            );
        };
        if let Some(state) = agg.as_deref() {
            for i in outer_columns(&plan) {
                if !state.group.iter().any(|(g, _)| *g == Expr::Column(i)) {
                    let name = match scope.cols.get(i) {
                        Some(c) => match &c.qualifier {
                            Some(q) => format!("{q}.{}", c.name),
                            None => c.name.clone(),
                        },
                        None => "?".into(),
                    };
                    bail!(
                        GroupingError,
                        "subquery uses ungrouped column \"{name}\" from outer query"
                    );
                }
            }
        }
        let column = ctx.width + self.correlated.len() - ctx.mark;
        let ty = match kind {
            SubqKind::Scalar => cols.first().map(|c| c.ty.clone()).unwrap_or(DataType::Text),
            SubqKind::Array => {
                cols.first().map(|c| strip_mod(&c.ty).array_of()).unwrap_or(DataType::Text)
            }
            _ => DataType::Bool,
        };
        self.correlated.push(Correlated { plan, kind, probe });
        let Some(state) = agg.as_deref_mut() else { return Ok((Expr::Column(column), cols)) };
        let n = state.add_hidden(crate::plan::AggCall {
            func: crate::plan::AggFunc::AnyValue,
            arg: Some(Expr::Column(column)),
            distinct: false,
            filter: None,
            extra: None,
            order: Vec::new(),
            ty,
        });
        Ok((Expr::Column(state.group.len() + n), cols))
    }
}

/// The enclosing row's columns the plan reads (`Expr::Outer`).
fn outer_columns(p: &Plan) -> Vec<usize> {
    let mut found = Vec::new();
    visit_exprs(p, &mut |e: &Expr| {
        e.walk(&mut |x| {
            if let Expr::Outer(i) = x {
                found.push(*i);
            }
        })
    });
    found
}

/// True if any expression in the plan refers to an enclosing query's row.
fn plan_reads_outer(p: &Plan) -> bool {
    !outer_columns(p).is_empty()
}

/// Calls `check` on every expression of the plan, subplans included (a
/// nested correlated subquery's expressions too, over-approximating which
/// enclosing row they read).
fn visit_exprs(p: &Plan, check: &mut dyn FnMut(&Expr)) {
    match p {
        Plan::Values(rows) => rows.iter().flatten().for_each(&mut *check),
        Plan::Scan(s) => {
            if let Some(f) = &s.filter {
                check(f);
            }
            match &s.access {
                crate::plan::Access::Point(v) => v.iter().for_each(&mut *check),
                crate::plan::Access::Current(e) => check(e),
                crate::plan::Access::Range { eq, lo, hi, .. } => {
                    eq.iter().for_each(&mut *check);
                    lo.iter().chain(hi.iter()).for_each(|b| check(&b.value));
                }
                crate::plan::Access::In { values, .. } => values.iter().for_each(&mut *check),
                crate::plan::Access::Full => {}
            }
        }
        Plan::Function(f) => f.calls.iter().flat_map(|c| &c.args).for_each(&mut *check),
        Plan::PlCall(c) => c.args.iter().for_each(&mut *check),
        Plan::System(_) | Plan::Sequence(_) => {}
        Plan::Filter(i, e) => {
            check(e);
            visit_exprs(i, check);
        }
        Plan::Project(i, es) => {
            es.iter().for_each(&mut *check);
            visit_exprs(i, check);
        }
        Plan::Join(j) => {
            j.on.iter().for_each(&mut *check);
            if let Some(h) = &j.hash {
                h.left.iter().chain(&h.right).for_each(&mut *check);
            }
            visit_exprs(&j.left, check);
            visit_exprs(&j.right, check);
        }
        Plan::Lateral(l, r, _, _) | Plan::SetOp(_, _, l, r) => {
            visit_exprs(l, check);
            visit_exprs(r, check);
        }
        Plan::Aggregate(i, g, aggs) => {
            g.iter().for_each(&mut *check);
            aggs.iter().flat_map(|a| a.arg.iter().chain(a.filter.iter())).for_each(&mut *check);
            visit_exprs(i, check);
        }
        Plan::Sort(i, keys) => {
            keys.iter().for_each(|k| check(&k.expr));
            visit_exprs(i, check);
        }
        Plan::Limit(i, l, o) => {
            l.iter().chain(o.iter()).for_each(&mut *check);
            visit_exprs(i, check);
        }
        Plan::Distinct(i) => visit_exprs(i, check),
        Plan::LockRows(i, spec) => {
            spec.limit.iter().chain(spec.offset.iter()).for_each(&mut *check);
            visit_exprs(i, check);
        }
        Plan::WorkTable(_) => {}
        Plan::Recursive { base, step, .. } => {
            visit_exprs(base, check);
            visit_exprs(step, check);
        }
        Plan::DistinctOn(i, on) => {
            on.iter().for_each(&mut *check);
            visit_exprs(i, check);
        }
        Plan::Window(i, calls) => {
            for c in calls {
                c.args.iter().chain(&c.partition).for_each(&mut *check);
                c.order.iter().for_each(|k| check(&k.expr));
                if let crate::window::WinFunc::Agg(a) = &c.func {
                    a.arg.iter().chain(a.filter.iter()).for_each(&mut *check);
                }
            }
            visit_exprs(i, check);
        }
        Plan::Apply(i, subs) => {
            // A nested correlated subquery reads *its* outer row (ours are
            // Outer references only if it is ours that it reads: over-
            // approximated here, which only costs a per-row run).
            subs.iter().filter_map(|c| c.probe.as_ref()).for_each(|(x, _)| check(x));
            subs.iter().for_each(|c| visit_exprs(&c.plan, check));
            visit_exprs(i, check);
        }
        Plan::Init(list, i) => {
            list.iter().for_each(|(p, _)| visit_exprs(p, check));
            visit_exprs(i, check);
        }
    }
}
