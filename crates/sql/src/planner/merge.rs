//! Planning MERGE: the target table's scan, the source rows, the join
//! condition between them, and the WHEN clauses in order.
//!
//! Every expression reads the merge row: the target row's columns, then
//! the source row's. A NOT MATCHED clause has no target row: it reads only
//! the source's columns (PostgreSQL refuses the target's there), and the
//! target's are NULL when it runs.

use sqlparser::ast;
use sqltypes::DataType;

use super::{
    check_not_generated_always, default_value, insert_columns, is_default, overriding, set_column,
    table_defaults, takes_default,
};
use crate::bind::{self, Binder};
use crate::dml::merge::{Action, MergePlan, When};
use crate::expr::Expr;
use crate::plan::Scan;
use crate::select;
use crate::{bail, err};

/// Plans a MERGE statement.
pub(super) fn plan_merge(b: &mut Binder<'_>, m: &ast::Merge) -> Result<MergePlan> {
    if let Some(output) = &m.output {
        // (PostgreSQL 17's RETURNING; sqlparser reads SQL Server's OUTPUT.)
        let word = output.to_string();
        let word = word.split_whitespace().next().unwrap_or("RETURNING");
        bail!(SyntaxError, "syntax error at or near \"{word}\"");
    }
    let (name, alias) = match &m.table {
        ast::TableFactor::Table { name, alias, args: None, .. } => (bind::obj_name(name)?, alias),
        other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
    };
    if let Some(v) = super::views::named_view(b, &name) {
        return Err(err!(FeatureNotSupported, "cannot execute MERGE on relation \"{}\"", v.name)
            .with_detail("This operation is not supported for views."));
    }
    let table = b.catalog.query_table(&name)?;
    if table.is_partitioned() {
        bail!(FeatureNotSupported, "MERGE into partitioned tables is not supported yet");
    }
    if table.matview.is_some() {
        return Err(err!(WrongObjectType, "cannot execute MERGE on relation \"{}\"", table.name)
            .with_detail("This operation is not supported for materialized views."));
    }
    let mut privs = crate::acl::SELECT;
    for c in &m.clauses {
        privs |= match c.action {
            ast::MergeAction::Insert(_) => crate::acl::INSERT,
            ast::MergeAction::Update(_) => crate::acl::UPDATE,
            ast::MergeAction::Delete { .. } => crate::acl::DELETE,
            ast::MergeAction::DoNothing { .. } => 0,
        };
    }
    b.require(crate::catalog::Relation::Table(table.clone()), privs);
    let qualifier =
        alias.as_ref().map(|a| bind::ident(&a.name)).unwrap_or_else(|| table.name.clone());
    let target_scope = select::table_scope(&table, &qualifier, alias);
    let source = ast::TableWithJoins { relation: m.source.clone(), joins: Vec::new() };
    let (source, source_scope) = select::plan_from(b, std::slice::from_ref(&source))?;
    if source_scope.cols.iter().any(|c| c.qualifier.as_deref() == Some(qualifier.as_str())) {
        return Err(err!(DuplicateAlias, "name \"{qualifier}\" specified more than once")
            .with_detail("The name is used both as MERGE target table and data source."));
    }
    let width = target_scope.cols.len();
    // NOT MATCHED clauses see the target's columns under no name.
    let mut unmatched = target_scope.clone();
    for c in &mut unmatched.cols {
        c.qualifier = Some(String::new());
        c.name = String::new();
        c.reach = bind::Reach::Qualified;
    }
    unmatched.cols.extend(source_scope.cols.iter().cloned());
    let mut scope = target_scope;
    scope.cols.extend(source_scope.cols);
    let types: Vec<DataType> = scope.cols.iter().map(|c| c.ty.clone()).collect();
    // Correlated subqueries' values follow the merge row.
    let mark = b.correlated.len();
    b.corr = Some(bind::CorrCtx { mark, width: scope.cols.len() });

    // The join condition: conjuncts reading only the target filter its
    // scan (a target row failing them matches no source row).
    let (on, t) = b.expr(&m.on, &scope)?;
    let on = b.coerce(on, &t, &DataType::Bool)?;
    let mut parts = Vec::new();
    crate::expr::conjuncts(on, &mut parts);
    let (target_only, on): (Vec<Expr>, Vec<Expr>) = parts.into_iter().partition(|p| {
        let mut source = false;
        p.walk(&mut |x| source |= x.as_column().is_some_and(|c| c >= width));
        !source
    });
    let mut scan = Scan::full(table.clone(), false);
    if let Some(pred) = crate::expr::and_all(target_only) {
        if let crate::plan::Plan::Scan(s) = select::push_filter(crate::plan::Plan::Scan(scan), pred)
        {
            scan = s;
        } else {
            unreachable!("push_filter keeps a scan a scan");
        }
    }
    // (Keys read the merge row itself, not the subqueries' values.)
    let plain: Vec<Expr> = on
        .iter()
        .filter(|p| {
            let mut sub = false;
            p.walk(&mut |x| sub |= x.as_column().is_some_and(|c| c >= types.len()));
            !sub
        })
        .cloned()
        .collect();
    let hash = select::hash_keys(&plain, width, &types);
    let on = crate::expr::and_all(on);

    let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
    let mut clauses = Vec::with_capacity(m.clauses.len());
    let mut unconditional = [false; 2];
    for c in &m.clauses {
        let matched = match c.clause_kind {
            ast::MergeClauseKind::Matched => true,
            ast::MergeClauseKind::NotMatched | ast::MergeClauseKind::NotMatchedByTarget => false,
            ast::MergeClauseKind::NotMatchedBySource => {
                bail!(FeatureNotSupported, "WHEN NOT MATCHED BY SOURCE is not supported")
            }
        };
        if unconditional[matched as usize] {
            bail!(SyntaxError, "unreachable WHEN clause specified after unconditional WHEN clause");
        }
        unconditional[matched as usize] = c.predicate.is_none();
        // A NOT MATCHED clause reads the source row only.
        let read =
            |b: &mut Binder<'_>, e: &ast::Expr, ty: Option<(&str, &DataType)>| -> Result<Expr> {
                let over = if matched { &scope } else { &unmatched };
                let x = match ty {
                    Some(column) => b.assign_column(e, over, column),
                    None => b.expr(e, over).and_then(|(x, t)| match t {
                        DataType::Bool | DataType::Unknown => b.coerce(x, &t, &DataType::Bool),
                        t => Err(err!(
                            DatatypeMismatch,
                            "argument of WHEN must be type boolean, not type {t}"
                        )),
                    }),
                };
                x.map_err(|e| match matched {
                    true => e,
                    false => unreachable_target(e, &qualifier),
                })
            };
        let cond = match &c.predicate {
            Some(p) => Some(read(b, p, None)?),
            None => None,
        };
        let action = match &c.action {
            ast::MergeAction::DoNothing { .. } => Action::Nothing,
            ast::MergeAction::Delete { .. } if matched => Action::Delete,
            ast::MergeAction::Update(u) if matched => {
                let ast::MergeUpdateKind::Set(assignments) = &u.kind else {
                    bail!(SyntaxError, "syntax error at or near \"*\"");
                };
                if u.update_predicate.is_some() || u.delete_predicate.is_some() {
                    bail!(SyntaxError, "syntax error at or near \"WHERE\"");
                }
                let mut sets = Vec::with_capacity(assignments.len());
                for a in assignments {
                    let (cn, i, fields) = set_column(&table, None, a, Some(&sets))?;
                    if !fields.is_empty() {
                        bail!(
                            FeatureNotSupported,
                            "MERGE assignment to a field of a composite column is not supported"
                        );
                    }
                    let e = match is_default(&a.value) {
                        true => default_value(b.catalog, &table, None, i)?,
                        false => read(b, &a.value, Some((&cn, &types[i])))?,
                    };
                    sets.push((i, e));
                }
                Action::Update(sets)
            }
            ast::MergeAction::Insert(ins) if !matched => {
                if ins.insert_predicate.is_some() {
                    bail!(SyntaxError, "syntax error at or near \"WHERE\"");
                }
                let default_values = matches!(ins.columns.as_slice(),
                    [c] if bind::object_name(c).is_ok_and(|n| n == crate::parse::DEFAULT_VALUES));
                let (overriding, columns) = overriding(&ins.columns);
                let mut targets = match default_values {
                    true => Vec::new(),
                    false => insert_columns(&names, columns, &table.name)?,
                };
                let values: Vec<&ast::Expr> = match &ins.kind {
                    _ if default_values => Vec::new(),
                    ast::MergeInsertKind::Values(v) => match v.rows.as_slice() {
                        [row] => row.content.iter().collect(),
                        _ => bail!(SyntaxError, "syntax error at or near \",\""),
                    },
                    ast::MergeInsertKind::Wildcard => {
                        bail!(SyntaxError, "syntax error at or near \"*\"")
                    }
                    ast::MergeInsertKind::Row => {
                        bail!(SyntaxError, "syntax error at or near \"ROW\"")
                    }
                };
                if values.len() > targets.len() {
                    bail!(SyntaxError, "INSERT has more expressions than target columns");
                }
                if values.len() < targets.len() && !columns.is_empty() {
                    bail!(SyntaxError, "INSERT has more target columns than expressions");
                }
                targets.truncate(values.len());
                let mut exprs = Vec::with_capacity(values.len());
                for (e, &t) in values.into_iter().zip(&targets) {
                    exprs.push(match takes_default(e, &table, t, overriding) {
                        true => default_value(b.catalog, &table, None, t)?,
                        false => {
                            check_not_generated_always(&table, t, overriding)?;
                            read(b, e, Some((&table.columns[t].name, &types[t])))?
                        }
                    });
                }
                Action::Insert(targets, exprs)
            }
            ast::MergeAction::Insert(_) => {
                bail!(SyntaxError, "syntax error at or near \"INSERT\"")
            }
            _ => bail!(
                SyntaxError,
                "syntax error at or near \"{}\"",
                if matches!(c.action, ast::MergeAction::Delete { .. }) {
                    "DELETE"
                } else {
                    "UPDATE"
                }
            ),
        };
        clauses.push(When { matched, cond, action });
    }
    let defaults = table_defaults(b.catalog, &table)?;
    b.corr = None;
    let subs = b.correlated.split_off(mark);
    let init = b.subqueries.drain(..).collect();
    Ok(MergePlan { scan, source, on, hash, clauses, defaults, init, subs })
}

use crate::error::Result;

/// A NOT MATCHED clause's error for naming the target table, which it
/// cannot read, as PostgreSQL words it.
fn unreachable_target(e: crate::error::Error, qualifier: &str) -> crate::error::Error {
    if e.message != format!("missing FROM-clause entry for table \"{qualifier}\"") {
        return e;
    }
    let mut out = err!(
        UndefinedTable,
        "invalid reference to FROM-clause entry for table \"{qualifier}\""
    )
    .with_hint(format!(
        "There is an entry for table \"{qualifier}\", but it cannot be referenced from this part of the query."
    ));
    out.position = e.position;
    out
}
