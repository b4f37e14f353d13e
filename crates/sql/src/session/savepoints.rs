//! SAVEPOINT, RELEASE and ROLLBACK TO: named positions in the KV
//! transaction's write buffer, and the failed-block recovery they allow.

use super::*;

/// A named point in a transaction block that ROLLBACK TO returns to.
pub(super) struct SavepointMark {
    name: String,
    /// The KV transaction's write-buffer position.
    at: Savepoint,
    /// How far LISTEN, UNLISTEN and NOTIFY had queued.
    notify: crate::notify::Mark,
    /// How many deferred constraint checks were queued.
    deferred: usize,
    /// How many cursors had opened.
    cursors: u64,
}

impl<K: KvClient> Session<K> {
    /// SAVEPOINT name: marks the write buffer (a name may be reused; the
    /// newest one with a name wins).
    pub(super) async fn savepoint(&mut self, name: String) -> Result<Outcome> {
        if self.state != TxnState::Block {
            bail!(NoActiveSqlTransaction, "SAVEPOINT can only be used in transaction blocks");
        }
        self.begin_txn().await?;
        let txn = self.txn.as_mut().expect("begin_txn opened a transaction");
        let notify = self.listener.mark();
        let deferred = self.deferred.mark();
        let cursors = self.cursors.mark();
        let at = txn.savepoint();
        self.savepoints.push(SavepointMark { name, at, notify, deferred, cursors });
        Ok(Outcome::Command("SAVEPOINT".into()))
    }

    /// Index of the newest savepoint called `name`.
    pub(super) fn find_savepoint(&self, name: &str) -> Result<usize> {
        match self.savepoints.iter().rposition(|s| s.name == name) {
            Some(i) => Ok(i),
            None => bail!(InvalidSavepointSpecification, "savepoint \"{name}\" does not exist"),
        }
    }

    /// RELEASE [SAVEPOINT] name: forgets it and every later savepoint, keeping
    /// their writes.
    pub(super) fn release_savepoint(&mut self, name: &str) -> Result<Outcome> {
        if self.state == TxnState::Idle || self.state == TxnState::Implicit {
            bail!(
                NoActiveSqlTransaction,
                "RELEASE SAVEPOINT can only be used in transaction blocks"
            );
        }
        let i = self.find_savepoint(name)?;
        self.savepoints.truncate(i);
        Ok(Outcome::Command("RELEASE".into()))
    }

    /// ROLLBACK TO [SAVEPOINT] name: undoes every write since the savepoint
    /// (which stays open) and leaves a failed block usable again. Row and
    /// table locks taken since then stay held until the transaction ends,
    /// where PostgreSQL would release them.
    pub(super) async fn rollback_to_savepoint(&mut self, name: &str) -> Result<Outcome> {
        if self.state == TxnState::Idle || self.state == TxnState::Implicit {
            bail!(
                NoActiveSqlTransaction,
                "ROLLBACK TO SAVEPOINT can only be used in transaction blocks"
            );
        }
        let i = self.find_savepoint(name)?;
        self.savepoints.truncate(i + 1);
        let at = self.savepoints[i].at;
        self.listener.rollback_to(self.savepoints[i].notify);
        self.deferred.rollback_to(self.savepoints[i].deferred);
        self.cursors.rollback_to(self.savepoints[i].cursors);
        let tenant = self.db.tenant;
        let txn = self.txn.as_mut().expect("a block with savepoints has a transaction");
        txn.rollback_to(at);
        if self.ddl {
            // DDL since the savepoint is undone with its catalog writes.
            // (Temporary tables created or dropped since the savepoint are
            // not restored: only a whole-transaction rollback does that.)
            let cat = Arc::new(ddl::load_catalog(&*txn, tenant).await?);
            self.set_catalog(cat);
        }
        self.state = TxnState::Block;
        Ok(Outcome::Command("ROLLBACK".into()))
    }
}
