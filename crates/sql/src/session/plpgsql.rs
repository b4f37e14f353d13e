//! DO blocks: PL/pgSQL run by the session, whose statements take the
//! session's own path (so DDL, SET and table locks work as at top level).

use super::*;
use crate::plpgsql::{self, BoxFut, Done, Spi, Statement};

/// A subtransaction's start inside a DO block.
struct Mark {
    at: Savepoint,
    notify: crate::notify::Mark,
    deferred: usize,
    cursors: u64,
}

/// The interpreter's way to the session.
struct SessionSpi<'s, K: KvClient> {
    s: &'s mut Session<K>,
    ctx: EvalContext,
    /// The open subtransactions, innermost last.
    marks: Vec<Mark>,
    /// True when the body may not end its transaction: it runs inside a
    /// transaction block, or inside a subtransaction of an outer body.
    atomic: bool,
}

impl<'s, K: KvClient> SessionSpi<'s, K> {
    fn new(s: &'s mut Session<K>, ctx: EvalContext) -> Self {
        let atomic = s.state == TxnState::Block || s.pl_atomic;
        SessionSpi { s, ctx, marks: Vec::new(), atomic }
    }
}

impl<K: KvClient> SessionSpi<'_, K> {
    /// Runs `stmt` (planned as `bound` for parameters of `types`) on the
    /// session's own path.
    async fn run(
        &mut self,
        stmt: Stmt,
        bound: Arc<Bound>,
        types: Vec<DataType>,
        params: Vec<Value>,
    ) -> Result<Done> {
        // The session's path reads only the statement; its text places
        // errors, which this body's interpreter does itself.
        let text: Arc<str> = Arc::from("");
        let dml = bound.writes();
        let prepared = Arc::new(Prepared {
            parsed: Parsed { text: text.clone(), source: text, offset: 0, stmt },
            declared: types.clone(),
            param_types: types,
            columns: None,
            plan: Mutex::new(Some((self.s.plan_key(), bound.clone()))),
        });
        let portal = Portal { prepared, bound, params };
        // A CALL or DO this statement runs may end the transaction only
        // if this body may, outside its subtransactions.
        let outer = std::mem::replace(&mut self.s.pl_atomic, self.atomic || !self.marks.is_empty());
        let depth = std::mem::replace(&mut self.s.pl_depth, self.ctx.depth);
        let r = self.s.execute_inner(&portal).await;
        self.s.pl_atomic = outer;
        self.s.pl_depth = depth;
        let warnings: Vec<_> = self.s.warnings.lock().drain(..).collect();
        self.s.notices.extend(warnings);
        Ok(match r? {
            Outcome::Rows(rows, tag) => Done { count: tag_count(&tag), rows, dml },
            Outcome::Command(tag) => Done { count: tag_count(&tag), rows: Vec::new(), dml },
            _ => Done { count: 0, rows: Vec::new(), dml },
        })
    }
}

/// The row count a command tag ends with (`INSERT 0 5`, `UPDATE 2`).
fn tag_count(tag: &str) -> u64 {
    tag.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl<K: KvClient> Spi for SessionSpi<'_, K> {
    fn catalog(&self) -> Arc<Catalog> {
        self.s.catalog.clone()
    }

    fn context(&self) -> &EvalContext {
        &self.ctx
    }

    fn execute<'a>(&'a mut self, st: Statement<'a>) -> BoxFut<'a, Done> {
        let stmt = Stmt::Sql(Box::new(st.ast.clone()));
        Box::pin(self.run(stmt, st.bound, st.types.to_vec(), st.params))
    }

    fn execute_own(&mut self, stmt: Stmt) -> Option<BoxFut<'_, Done>> {
        Some(Box::pin(self.run(stmt, Arc::new(Bound::Utility), Vec::new(), Vec::new())))
    }

    fn subtransaction(&mut self) -> BoxFut<'_, usize> {
        Box::pin(async move {
            self.s.begin_txn().await?;
            let Some(txn) = self.s.txn.as_mut() else {
                bail!(InternalError, "DO block without a transaction");
            };
            let at = txn.savepoint();
            let notify = self.s.listener.mark();
            let deferred = self.s.deferred.mark();
            let cursors = self.s.cursors.mark();
            self.marks.push(Mark { at, notify, deferred, cursors });
            Ok(self.marks.len() - 1)
        })
    }

    fn rollback_subtransaction(&mut self, mark: usize) -> BoxFut<'_, ()> {
        Box::pin(async move {
            let Some(m) = self.marks.get(mark) else { return Ok(()) };
            self.s.listener.rollback_to(m.notify);
            self.s.deferred.rollback_to(m.deferred);
            self.s.cursors.rollback_to(m.cursors);
            let at = m.at;
            self.marks.truncate(mark);
            let tenant = self.s.db.tenant;
            let Some(txn) = self.s.txn.as_mut() else { return Ok(()) };
            txn.rollback_to(at);
            if self.s.ddl {
                // DDL since the mark is undone with its catalog writes.
                let cat = Arc::new(ddl::load_catalog(&*txn, tenant).await?);
                self.s.set_catalog(cat);
            }
            Ok(())
        })
    }

    fn notice(&mut self, report: ErrorReport) {
        self.s.notices.push(report);
    }

    fn release_subtransaction(&mut self, mark: usize) {
        self.marks.truncate(mark);
    }

    fn end_transaction(&mut self, commit: bool) -> BoxFut<'_, ()> {
        Box::pin(async move {
            if self.atomic {
                return Err(plpgsql::invalid_termination());
            }
            if !self.marks.is_empty() {
                let what = if commit { "commit" } else { "roll back" };
                bail!(
                    InvalidTransactionTermination,
                    "cannot {what} while a subtransaction is active"
                );
            }
            self.s.end_txn(commit).await?;
            // The body goes on in a new transaction, which the statement's
            // end commits.
            self.s.begin_txn().await
        })
    }
}

/// Runs a query's once-per-statement PL/pgSQL calls through the session.
struct SessionCalls<'s, K: KvClient> {
    s: &'s mut Session<K>,
}

impl<K: KvClient> plpgsql::RunCall for SessionCalls<'_, K> {
    type Txn = K::Txn;

    fn run_call<'a>(
        &'a mut self,
        c: &'a crate::plan::PlCall,
        ctx: &'a EvalContext,
    ) -> BoxFut<'a, Vec<Vec<Value>>> {
        Box::pin(async move {
            let s = &mut *self.s;
            let apart = s.enter_function(&c.def)?;
            let r = plpgsql::invoke(c, ctx, |ctx| {
                let mut spi = SessionSpi::new(s, ctx);
                // A function may not end the transaction of the query
                // that calls it.
                spi.atomic = true;
                spi
            })
            .await;
            self.s.leave_function(apart);
            r
        })
    }

    fn reads<'c>(&'c self, eval: &'c EvalContext) -> Result<ExecCtx<'c, K::Txn>> {
        let s = &*self.s;
        let Some(txn) = s.txn.as_ref() else {
            bail!(InternalError, "a query's calls run without a transaction");
        };
        Ok(ExecCtx { txn, tenant: s.db.tenant, eval, catalog: &s.catalog })
    }
}

/// What a call of a function that runs apart changed in the session, to
/// be put back when it returns: the settings its SET clauses changed, with
/// their values before and their SET LOCAL entries before (see
/// `Session::local_settings`), the SECURITY DEFINER owner before, and
/// where the plain SETs made while it runs start in `plain_sets`.
pub(super) struct Apart {
    settings: Vec<(String, String, Option<String>)>,
    definer: Option<Arc<str>>,
    plain_mark: usize,
}

impl<K: KvClient> Session<K> {
    /// Makes the session run `def`'s statements as PostgreSQL runs a
    /// SECURITY DEFINER function or one with SET clauses: as its owner,
    /// under its settings (and the search path they name). None when
    /// `def` runs in its caller's state.
    pub(super) fn enter_function(
        &mut self,
        def: &crate::catalog::FunctionDef,
    ) -> Result<Option<Apart>> {
        if !def.runs_apart() {
            return Ok(None);
        }
        let plain_mark = self.plain_sets.len();
        let mut apart = Apart { settings: Vec::new(), definer: self.definer.clone(), plain_mark };
        self.apart_depth += 1;
        if def.security_definer {
            self.definer = Some(Arc::from(def.access.owner.as_str()));
        }
        for (name, value) in &def.config {
            let name = name.to_lowercase();
            let before = self.settings.get(&name).unwrap_or_default();
            let local = self.local_settings.iter().find(|(n, _)| *n == name).map(|e| e.1.clone());
            if let Err(e) = self.settings.set(&name, value) {
                self.leave_function(Some(apart));
                return Err(e);
            }
            apart.settings.push((name, before, local));
        }
        self.settings_generation += 1;
        self.sync_search_path();
        Ok(Some(apart))
    }

    /// Puts back what [`Session::enter_function`] changed.
    pub(super) fn leave_function(&mut self, apart: Option<Apart>) {
        let Some(apart) = apart else { return };
        for (name, value, local) in apart.settings.iter().rev() {
            // A plain SET in the function outlives it, as in PostgreSQL.
            if self.plain_sets.get(apart.plain_mark..).is_some_and(|s| s.contains(name)) {
                continue;
            }
            // The value was accepted before; it is accepted again.
            let _ = self.settings.set(name, value);
            // A SET LOCAL in the function ends with it.
            let entry = self.local_settings.iter().position(|(n, _)| n == name);
            match (entry, local) {
                (Some(i), None) => {
                    self.local_settings.remove(i);
                }
                (Some(i), Some(v)) => self.local_settings[i].1.clone_from(v),
                (None, Some(v)) => self.local_settings.push((name.clone(), v.clone())),
                (None, None) => {}
            }
        }
        self.apart_depth = self.apart_depth.saturating_sub(1);
        if self.apart_depth == 0 {
            self.plain_sets.clear();
        }
        self.definer = apart.definer;
        self.settings_generation += 1;
        self.sync_search_path();
    }

    /// Runs the PL/pgSQL calls of a query's plan that run once per
    /// statement, before the rest of it, and returns the plan with their
    /// rows in their place (see [`plpgsql::run_calls`]). Their statements
    /// take the session's path, so DDL, SET and table locks work in them.
    pub(super) async fn run_calls(
        &mut self,
        plan: &crate::plan::Plan,
        ctx: &EvalContext,
    ) -> Result<Option<crate::plan::Plan>> {
        plpgsql::run_calls(plan, ctx, &mut SessionCalls { s: self }).await
    }

    /// DO: runs a PL/pgSQL block.
    pub(super) async fn run_do(&mut self, code: &str) -> Result<Outcome> {
        let compiled = Arc::new(plpgsql::run::Compiled::new(code)?);
        let ctx = plpgsql::deeper(&self.eval_ctx(&[]))?;
        let mut spi = SessionSpi::new(self, ctx);
        plpgsql::run::run(&mut spi, compiled, plpgsql::run::Call::Do).await?;
        Ok(Outcome::Command("DO".into()))
    }

    /// CALL: runs a procedure, whose statements take the session's path
    /// as a DO block's do; its output parameters come back as one row.
    pub(super) async fn run_call(
        &mut self,
        call: &crate::plan::PlCall,
        params: &[Value],
    ) -> Result<Outcome> {
        let ctx = self.eval_ctx(params);
        let args = call.args.iter().map(|e| e.eval(&[], &ctx)).collect::<Result<Vec<_>>>()?;
        let ctx = plpgsql::function_context(plpgsql::deeper(&ctx)?, &call.def)?;
        let code = plpgsql::body(&ctx, &call.def)?;
        let apart = self.enter_function(&call.def)?;
        let mut spi = SessionSpi::new(self, ctx);
        let run = plpgsql::run::Call::Function(&call.def, args);
        let r = plpgsql::run::run(&mut spi, code, run).await;
        self.leave_function(apart);
        Ok(match r? {
            plpgsql::run::Returned::Rows(rows) => Outcome::Rows(rows, "CALL".into()),
            plpgsql::run::Returned::Value(_) => Outcome::Command("CALL".into()),
        })
    }
}
