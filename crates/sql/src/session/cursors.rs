//! SQL-level cursors and prepared statements: DECLARE, FETCH, MOVE, CLOSE;
//! PREPARE, EXECUTE, DEALLOCATE.
//!
//! A cursor's rows are computed when it is declared (its snapshot is the
//! DECLARE's, as in PostgreSQL) and handed out by FETCH; a cursor lives
//! until CLOSE or the end of its transaction (WITH HOLD: of the session).
//! SQL prepared statements are the session's named [`Prepared`] statements;
//! EXECUTE binds its arguments to one and runs it like any portal.

use super::*;
use crate::cursor::{self as portal, NewCursor};

impl<K: KvClient> Session<K> {
    /// The columns of the open cursor `name` (a cursor is also a portal:
    /// drivers Describe it by name).
    pub fn cursor_columns_named(&self, name: &str) -> Option<Vec<Column>> {
        self.cursors.columns(name)
    }

    /// FETCH or MOVE.
    pub(super) fn fetch(&mut self, f: &crate::parse::FetchStmt) -> Result<Outcome> {
        let done = self.cursors.fetch(&f.cursor, f.direction, !f.moving)?;
        Ok(match f.moving {
            true => Outcome::Command(format!("MOVE {}", done.count)),
            false => Outcome::Rows(done.rows, format!("FETCH {}", done.count)),
        })
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
            S::Close { cursor } => {
                match cursor {
                    ast::CloseCursor::All => self.cursors.close_all(),
                    ast::CloseCursor::Specific { name } => {
                        self.cursors.close(&crate::bind::ident(name))?
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
                // A protocol-level statement of that name (psycopg drops
                // those in SQL) is the wire layer's, dropped before here.
                if self.sql_prepared.remove(&key).is_none() {
                    bail!(InvalidSqlStatementName, "prepared statement \"{key}\" does not exist");
                }
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
        let stmt = Stmt::Sql(Box::new(ast::Statement::Query(query.clone())));
        let (bound, _) =
            planner::plan(&self.catalog, &stmt, &portal.prepared.param_types, self.current_user())?;
        let Bound::Query(plan, columns) = bound.as_ref() else {
            bail!(FeatureNotSupported, "DECLARE CURSOR supports only queries");
        };
        let locking = !portal::scrollable(plan);
        let lock = match query.locks.first().map(|l| &l.lock_type) {
            Some(ast::LockType::Share) => "FOR SHARE",
            _ => "FOR UPDATE",
        };
        if d.scroll == Some(true) && locking {
            bail!(FeatureNotSupported, "DECLARE SCROLL CURSOR ... {lock} is not supported");
        }
        if hold && locking {
            bail!(FeatureNotSupported, "DECLARE CURSOR WITH HOLD ... {lock} is not supported");
        }
        let ctx = self.eval_ctx(&portal.params);
        let (plan, source) = match portal::keyed(plan) {
            Some((p, s)) => (std::borrow::Cow::Owned(p), Some(s)),
            None => (std::borrow::Cow::Borrowed(plan), None),
        };
        let txn = self.txn.as_ref().expect("statement has a transaction");
        let cx = ExecCtx { txn, tenant: self.db.tenant, eval: &ctx, catalog: &self.catalog };
        let rows = exec::run(&plan, &cx).await?;
        for name in &d.names {
            let key = crate::bind::ident(name);
            let c = NewCursor {
                columns: columns.clone(),
                rows: rows.clone(),
                scroll: d.scroll.unwrap_or(!locking),
                hold,
                statement: d.to_string(),
                created: ctx.stmt_time,
                source: source.clone(),
            };
            self.cursors.open(&key, c)?;
        }
        Ok(())
    }
}
