//! DO blocks: PL/pgSQL run by the session, whose statements take the
//! session's own path (so DDL, SET and table locks work as at top level).

use super::*;
use crate::plpgsql::{self, BoxFut, Done, Spi, Statement};

/// A subtransaction's start inside a DO block.
struct Mark {
    at: Savepoint,
    notify: crate::notify::Mark,
    deferred: usize,
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
        Box::pin(async move {
            let text: Arc<str> = st.ast.to_string().into();
            let dml = matches!(*st.bound, Bound::Insert(_) | Bound::Update(_) | Bound::Delete(_));
            let prepared = Arc::new(Prepared {
                parsed: Parsed {
                    text: text.clone(),
                    source: text,
                    offset: 0,
                    stmt: Stmt::Sql(Box::new(st.ast.clone())),
                },
                declared: st.types.to_vec(),
                param_types: st.types.to_vec(),
                columns: None,
                plan: Mutex::new(Some((self.s.plan_key(), st.bound.clone()))),
            });
            let portal = Portal { prepared, bound: st.bound, params: st.params };
            // A CALL or DO this statement runs may end the transaction only
            // if this body may, outside its subtransactions.
            let outer =
                std::mem::replace(&mut self.s.pl_atomic, self.atomic || !self.marks.is_empty());
            let r = self.s.execute_inner(&portal).await;
            self.s.pl_atomic = outer;
            let warnings: Vec<_> = self.s.warnings.lock().drain(..).collect();
            self.s.notices.extend(warnings);
            Ok(match r? {
                Outcome::Rows(rows, tag) => Done { count: tag_count(&tag), rows, dml },
                Outcome::Command(tag) => Done { count: tag_count(&tag), rows: Vec::new(), dml },
                _ => Done { count: 0, rows: Vec::new(), dml },
            })
        })
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
            self.marks.push(Mark { at, notify, deferred });
            Ok(self.marks.len() - 1)
        })
    }

    fn rollback_subtransaction(&mut self, mark: usize) -> BoxFut<'_, ()> {
        Box::pin(async move {
            let Some(m) = self.marks.get(mark) else { return Ok(()) };
            self.s.listener.rollback_to(m.notify);
            self.s.deferred.rollback_to(m.deferred);
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

impl<K: KvClient> Session<K> {
    /// DO: runs a PL/pgSQL block.
    pub(super) async fn run_do(&mut self, code: &str) -> Result<Outcome> {
        let compiled = Arc::new(plpgsql::run::Compiled::new(code)?);
        let ctx = self.eval_ctx(&[]);
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
        let ctx = plpgsql::deeper(&ctx)?;
        let code = plpgsql::body(&ctx, &call.def)?;
        let mut spi = SessionSpi::new(self, ctx);
        let run = plpgsql::run::Call::Function(&call.def, args);
        Ok(match plpgsql::run::run(&mut spi, code, run).await? {
            plpgsql::run::Returned::Rows(rows) => Outcome::Rows(rows, "CALL".into()),
            plpgsql::run::Returned::Value(_) => Outcome::Command("CALL".into()),
        })
    }
}
