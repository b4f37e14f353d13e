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
        self.outer.push(OuterScope::new(scope.clone()));
        let r = self.query(q);
        let seen = self.outer.pop().unwrap_or_default();
        let (mut plan, cols) = r?;
        // A volatile call runs per row where a correlated subquery may be.
        let per_row = per_row && self.corr.is_some();
        let probe = match probe {
            Some((Expr::Row(_, fields), DataType::Record(rt), negated))
                if cols.len() > 1 || fields.len() > 1 =>
            {
                // `(a, b) IN (SELECT x, y ...)`: the subquery's rows become
                // records to compare with the left row.
                if fields.len() != cols.len() {
                    let few = if fields.len() > cols.len() { "few" } else { "many" };
                    bail!(SyntaxError, "subquery has too {few} columns");
                }
                let (mut left, mut right, mut types) = (Vec::new(), Vec::new(), Vec::new());
                for (i, (x, (_, xt))) in fields.into_iter().zip(&rt.fields).enumerate() {
                    let t = self.unify(xt, &cols[i].ty)?;
                    left.push(self.coerce(x, xt, &t)?);
                    right.push(self.coerce(Expr::Column(i), &cols[i].ty, &t)?);
                    types.push(t);
                }
                let ty = sqltypes::RecordType::anonymous(types);
                plan = Plan::Project(Box::new(plan), vec![Expr::Row(ty.clone(), right)]);
                Some((Expr::Row(ty, left), negated))
            }
            Some((x, xt, negated)) => {
                if cols.len() != 1 {
                    bail!(SyntaxError, "subquery has too many columns");
                }
                let t = self.unify(&xt, &cols[0].ty)?;
                Some((self.coerce(x, &xt, &t)?, negated))
            }
            None => None,
        };
        if !seen.read() && !per_row {
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
            for &i in &seen.used {
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
            SubqKind::Row => DataType::Record(sqltypes::RecordType::anonymous(
                cols.iter().map(|c| c.ty.clone()).collect(),
            )),
            SubqKind::Scalar => cols.first().map(|c| c.ty.clone()).unwrap_or(DataType::Text),
            SubqKind::Array => {
                cols.first().map(|c| strip_mod(&c.ty).array_of()).unwrap_or(DataType::Text)
            }
            _ => DataType::Bool,
        };
        self.correlated.push(Correlated { plan, kind, probe, ty: ty.clone(), reads: seen.used });
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

    /// A column of `SET (a, b, ...) = (SELECT ...)`: `args` are the
    /// parser's [`crate::parse::MULTI_ASSIGN`] call's (the SET's number,
    /// the column's position, how many columns, the sub-SELECT). The
    /// columns of one SET read one subquery, bound once.
    pub(super) fn multi_assign(
        &mut self,
        args: &[Option<&ast::Expr>],
        scope: &Scope,
        agg: &mut Option<&mut AggState>,
    ) -> Result<(Expr, DataType)> {
        let arg = |i: usize| args.get(i).copied().flatten();
        let number = |e: Option<&ast::Expr>| match e {
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::Number(n, _) => n.parse::<i64>().ok(),
                _ => None,
            },
            _ => None,
        };
        let malformed = || err!(InternalError, "malformed multiple-column assignment");
        let (Some(id), Some(k), Some(n)) = (number(arg(0)), number(arg(1)), number(arg(2))) else {
            return Err(malformed());
        };
        let at = match self.multi_assign.iter().position(|(i, _, _)| *i == id) {
            Some(at) => at,
            None => {
                // The first column's call carries the sub-SELECT.
                let Some(ast::Expr::Subquery(q)) = arg(3) else { return Err(malformed()) };
                let (row, cols) = self.subquery(q, scope, SubqKind::Row, agg, None)?;
                self.multi_assign.push((id, row, cols.into_iter().map(|c| c.ty).collect()));
                self.multi_assign.len() - 1
            }
        };
        let (_, row, types) = &self.multi_assign[at];
        if types.len() as i64 != n {
            bail!(SyntaxError, "number of columns does not match number of values");
        }
        let k = usize::try_from(k).map_err(|_| malformed())?;
        let ty = types.get(k).cloned().ok_or_else(malformed)?;
        Ok((Expr::Field(Box::new(row.clone()), k), ty))
    }
}
