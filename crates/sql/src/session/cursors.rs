//! SQL-level cursors and prepared statements: DECLARE, FETCH, MOVE, CLOSE;
//! PREPARE, EXECUTE, DEALLOCATE.
//!
//! A cursor's rows are computed when it is declared (its snapshot is the
//! DECLARE's, as in PostgreSQL) and handed out by FETCH; a cursor lives
//! until CLOSE or the end of its transaction (WITH HOLD: of the session).
//! SQL prepared statements are the session's named [`Prepared`] statements;
//! EXECUTE binds its arguments to one and runs it like any portal.

use std::collections::VecDeque;

use super::*;
use crate::expr::CursorInfo;

/// An open cursor.
pub(super) struct Cursor {
    columns: Vec<Column>,
    rows: VecDeque<Row>,
    hold: bool,
    info: CursorInfo,
}

/// The rows FETCH asks for (None: all that remain).
fn fetch_count(direction: &ast::FetchDirection) -> Result<Option<u64>> {
    use ast::FetchDirection as D;
    let count = |v: &ast::ValueWithSpan| -> Result<u64> {
        match &v.value {
            ast::Value::Number(n, _) => n.parse::<u64>().map_err(|_| {
                err!(FeatureNotSupported, "FETCH with a negative count is not supported yet")
            }),
            other => bail!(SyntaxError, "syntax error at or near \"{other}\""),
        }
    };
    Ok(match direction {
        D::Next | D::Forward { limit: None } => Some(1),
        D::Count { limit } | D::Forward { limit: Some(limit) } => Some(count(limit)?),
        D::All | D::ForwardAll => None,
        other => {
            bail!(FeatureNotSupported, "FETCH {other} is not supported yet (cursors are NO SCROLL)")
        }
    })
}

impl<K: KvClient> Session<K> {
    /// The result columns of FETCH from `name` (empty if no such cursor:
    /// executing it reports that).
    pub(super) fn cursor_columns(&self, name: &ast::Ident) -> Vec<Column> {
        self.cursor_columns_named(&crate::bind::ident(name)).unwrap_or_default()
    }

    /// The columns of the open cursor `name` (a cursor is also a portal:
    /// drivers Describe it by name).
    pub fn cursor_columns_named(&self, name: &str) -> Option<Vec<Column>> {
        self.cursors.get(name).map(|c| c.columns.clone())
    }

    /// The open cursors, for pg_cursors.
    pub(super) fn cursor_infos(&self) -> Option<Arc<Vec<CursorInfo>>> {
        if self.cursors.is_empty() {
            return None;
        }
        Some(Arc::new(self.cursors.values().map(|c| c.info.clone()).collect()))
    }

    /// Binds EXECUTE name(args): the named statement with the arguments
    /// evaluated and coerced to its parameter types.
    pub(super) fn bind_execute(
        &mut self,
        name: &Option<ast::ObjectName>,
        args: &[ast::Expr],
    ) -> Result<Portal> {
        let name = name.as_ref().map(|n| n.to_string().to_lowercase()).unwrap_or_default();
        let Some(p) = self.sql_prepared.get(&name).cloned() else {
            bail!(InvalidSqlStatementName, "prepared statement \"{name}\" does not exist");
        };
        if args.len() != p.param_types.len() {
            bail!(SyntaxError, "wrong number of parameters for prepared statement \"{name}\"");
        }
        let ctx = self.eval_ctx(&[]);
        let mut values = Vec::with_capacity(args.len());
        for (a, ty) in args.iter().zip(&p.param_types) {
            let mut b = crate::bind::Binder::new(&self.catalog, vec![]);
            let e = b.assign(a, &crate::bind::Scope::default(), ty)?;
            values.push(e.eval(&[], &ctx)?);
        }
        self.bind(&p, values)
    }

    /// Runs the cursor and prepared-statement commands; None for others.
    pub(super) async fn cursor_statement(
        &mut self,
        stmt: &ast::Statement,
        portal: &Portal,
    ) -> Result<Option<Outcome>> {
        use ast::Statement as S;
        Ok(Some(match stmt {
            S::Declare { stmts } => {
                for d in stmts {
                    self.declare(d, portal).await?;
                }
                Outcome::Command("DECLARE CURSOR".into())
            }
            S::Fetch { name, direction, .. } => {
                let n = fetch_count(direction)?;
                let key = crate::bind::ident(name);
                let Some(c) = self.cursors.get_mut(&key) else {
                    bail!(InvalidCursorName, "cursor \"{key}\" does not exist");
                };
                let take = n.map(|n| (n as usize).min(c.rows.len())).unwrap_or(c.rows.len());
                let rows: Vec<Row> = c.rows.drain(..take).collect();
                let tag = format!("FETCH {}", rows.len());
                Outcome::Rows(rows, tag)
            }
            S::Close { cursor } => {
                match cursor {
                    ast::CloseCursor::All => self.cursors.clear(),
                    ast::CloseCursor::Specific { name } => {
                        let key = crate::bind::ident(name);
                        if self.cursors.remove(&key).is_none() {
                            bail!(InvalidCursorName, "cursor \"{key}\" does not exist");
                        }
                    }
                }
                Outcome::Command("CLOSE CURSOR".into())
            }
            S::Prepare { name, data_types, statement } => {
                let key = crate::bind::ident(name);
                if self.sql_prepared.contains_key(&key) {
                    bail!(
                        DuplicatePreparedStatement,
                        "prepared statement \"{key}\" already exists"
                    );
                }
                let declared: Vec<DataType> =
                    data_types.iter().map(crate::bind::data_type).collect::<Result<_>>()?;
                let stmt = Stmt::Sql(statement.clone());
                let (bound, params) =
                    planner::plan(&self.catalog, &stmt, &declared, self.current_user())?;
                let text: Arc<str> = statement.to_string().into();
                let parsed = Parsed { source: text.clone(), text, offset: 0, stmt };
                let prepared = Prepared {
                    columns: statement_columns(&parsed.stmt, &bound),
                    parsed,
                    declared: params.clone(),
                    param_types: params,
                    plan: Mutex::new(Some((self.plan_key(), bound))),
                };
                self.sql_prepared.insert(key, Arc::new(prepared));
                Outcome::Command("PREPARE".into())
            }
            S::Deallocate { name, .. } => {
                let key = crate::bind::ident(name);
                if key == "all" {
                    self.sql_prepared.clear();
                    return Ok(Some(Outcome::Command("DEALLOCATE ALL".into())));
                }
                // An unknown name may be a protocol-level statement (psycopg
                // deallocates those in SQL), which the wire layer keeps
                // until the connection closes: accepted, as PostgreSQL does.
                self.sql_prepared.remove(&key);
                Outcome::Command("DEALLOCATE".into())
            }
            _ => return Ok(None),
        }))
    }

    /// DECLARE: runs the query with the portal's parameters.
    async fn declare(&mut self, d: &ast::Declare, portal: &Portal) -> Result<()> {
        let Some(query) = &d.for_query else {
            bail!(FeatureNotSupported, "DECLARE without a cursor query is not supported");
        };
        let hold = d.hold.unwrap_or(false);
        if self.state != TxnState::Block && !hold {
            bail!(NoActiveSqlTransaction, "DECLARE CURSOR can only be used in transaction blocks");
        }
        if d.scroll == Some(true) {
            bail!(FeatureNotSupported, "SCROLL cursors are not supported yet");
        }
        let stmt = Stmt::Sql(Box::new(ast::Statement::Query(query.clone())));
        let (bound, _) =
            planner::plan(&self.catalog, &stmt, &portal.prepared.param_types, self.current_user())?;
        let Bound::Query(plan, columns) = bound.as_ref() else {
            bail!(FeatureNotSupported, "DECLARE CURSOR supports only queries");
        };
        let ctx = self.eval_ctx(&portal.params);
        let txn = self.txn.as_ref().expect("statement has a transaction");
        let cx = ExecCtx { txn, tenant: self.db.tenant, eval: &ctx, catalog: &self.catalog };
        let rows = exec::run(plan, &cx).await?;
        for name in &d.names {
            let key = crate::bind::ident(name);
            if self.cursors.contains_key(&key) {
                bail!(DuplicateCursor, "cursor \"{key}\" already exists");
            }
            let info = CursorInfo {
                name: key.clone(),
                statement: d.to_string(),
                holdable: hold,
                created: ctx.stmt_time,
            };
            let c = Cursor { columns: columns.clone(), rows: rows.clone().into(), hold, info };
            self.cursors.insert(key, c);
        }
        Ok(())
    }

    /// Closes the cursors that end with the transaction.
    pub(super) fn close_transaction_cursors(&mut self) {
        self.cursors.retain(|_, c| c.hold);
    }
}
