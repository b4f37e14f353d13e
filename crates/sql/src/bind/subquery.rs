//! Binding subqueries: uncorrelated ones become init plans run once per
//! statement; ones that read the enclosing row become correlated subqueries
//! run per row by `Plan::Apply`.

use super::*;

impl Binder<'_> {
    /// Plans a subquery. An uncorrelated one becomes an init plan of the
    /// current query level; one that reads the enclosing row becomes a
    /// correlated subquery of the current [`CorrCtx`] (only where one is set,
    /// and never under aggregation, whose rows are not the scope's). For IN,
    /// `probe` is the left operand (bound, its type, NOT): it is coerced to
    /// the common type with the subquery's column.
    pub(super) fn subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        kind: SubqKind,
        in_aggregate: bool,
        probe: Option<(Expr, DataType, bool)>,
    ) -> Result<(Expr, Vec<Column>)> {
        self.outer.push(scope.clone());
        let r = self.query(q);
        self.outer.pop();
        let (plan, cols) = r?;
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
        if !plan_reads_outer(&plan) {
            let mark = self.subq_marks.last().copied().unwrap_or(0);
            self.subqueries.push((plan, kind));
            let i = self.subqueries.len() - 1 - mark;
            let x = match probe {
                Some((x, negated)) => Expr::InSubquery(Box::new(x), i, negated),
                None => Expr::Subquery(i),
            };
            return Ok((x, cols));
        }
        let Some(ctx) = self.corr.filter(|_| !in_aggregate) else {
            bail!(
                FeatureNotSupported,
                "correlated subqueries are supported only in WHERE and in the select list of queries without aggregates"
            );
        };
        let column = ctx.width + self.correlated.len() - ctx.mark;
        self.correlated.push(Correlated { plan, kind, probe });
        Ok((Expr::Column(column), cols))
    }
}

/// True if any expression in the plan refers to an enclosing query's row.
fn plan_reads_outer(p: &Plan) -> bool {
    let mut found = false;
    let mut check = |e: &Expr| {
        e.walk(&mut |x| {
            if matches!(x, Expr::Outer(_)) {
                found = true;
            }
        })
    };
    match p {
        Plan::Values(rows) => rows.iter().flatten().for_each(&mut check),
        Plan::Scan(s) => {
            if let Some(f) = &s.filter {
                check(f);
            }
            match &s.access {
                crate::plan::Access::Point(v) => v.iter().for_each(&mut check),
                crate::plan::Access::Range { eq, lo, hi, .. } => {
                    eq.iter().for_each(&mut check);
                    lo.iter().chain(hi.iter()).for_each(|b| check(&b.value));
                }
                crate::plan::Access::Full => {}
            }
        }
        Plan::Series(args, _) => args.iter().for_each(&mut check),
        Plan::System(_) => {}
        Plan::Filter(i, e) => {
            check(e);
            found |= plan_reads_outer(i);
        }
        Plan::Project(i, es) => {
            es.iter().for_each(&mut check);
            found |= plan_reads_outer(i);
        }
        Plan::Join(l, r, _, on, _) => {
            if let Some(on) = on {
                check(on);
            }
            found |= plan_reads_outer(l) || plan_reads_outer(r);
        }
        Plan::Lateral(l, r, _, _) | Plan::SetOp(_, _, l, r) => {
            found |= plan_reads_outer(l) || plan_reads_outer(r)
        }
        Plan::Aggregate(i, g, aggs) => {
            g.iter().for_each(&mut check);
            aggs.iter().flat_map(|a| a.arg.iter().chain(a.filter.iter())).for_each(&mut check);
            found |= plan_reads_outer(i);
        }
        Plan::Sort(i, keys) => {
            keys.iter().for_each(|k| check(&k.expr));
            found |= plan_reads_outer(i);
        }
        Plan::Limit(i, l, o) => {
            l.iter().chain(o.iter()).for_each(&mut check);
            found |= plan_reads_outer(i);
        }
        Plan::Distinct(i) => found |= plan_reads_outer(i),
        Plan::WorkTable(_) => {}
        Plan::Recursive { base, step, .. } => {
            found |= plan_reads_outer(base) || plan_reads_outer(step)
        }
        Plan::DistinctOn(i, on) => {
            on.iter().for_each(&mut check);
            found |= plan_reads_outer(i);
        }
        Plan::Window(i, calls) => {
            for c in calls {
                c.args.iter().chain(&c.partition).for_each(&mut check);
                c.order.iter().for_each(|k| check(&k.expr));
                if let crate::window::WinFunc::Agg(a) = &c.func {
                    a.arg.iter().chain(a.filter.iter()).for_each(&mut check);
                }
            }
            found |= plan_reads_outer(i);
        }
        Plan::Apply(i, subs) => {
            // A nested correlated subquery reads *its* outer row (ours are
            // Outer references only if it is ours that it reads: over-
            // approximated here, which only costs a per-row run).
            subs.iter().filter_map(|c| c.probe.as_ref()).for_each(|(x, _)| check(x));
            found |= subs.iter().any(|c| plan_reads_outer(&c.plan)) || plan_reads_outer(i);
        }
        Plan::Init(list, i) => {
            found |= list.iter().any(|(p, _)| plan_reads_outer(p)) || plan_reads_outer(i)
        }
    }
    found
}
