//! Deferred constraint checks: `DEFERRABLE INITIALLY DEFERRED` foreign keys
//! and `SET CONSTRAINTS`.
//!
//! A foreign key check that is deferred in the current transaction is not
//! run at the end of the statement but queued here ([`Pending`]), and run at
//! COMMIT (or when `SET CONSTRAINTS ... IMMEDIATE` names the constraint). A
//! failing check at COMMIT fails the COMMIT, and the transaction rolls back.
//! Two kinds of checks wait:
//!
//! - a referencing row that was written: at COMMIT the row is read again,
//!   and if it is gone or its referencing columns changed since, the check
//!   is dropped (the newer version queued its own); otherwise its parent
//!   must exist, as for an immediate check (fk.rs);
//! - a referenced key that a statement removed under NO ACTION: at COMMIT
//!   no row may reference it, unless the key exists again.
//!
//! Only NO ACTION is deferred on the referenced side: RESTRICT, CASCADE,
//! SET NULL and SET DEFAULT act at once, as in PostgreSQL. Checks queued
//! after a savepoint are dropped when the transaction rolls back to it.

use std::collections::HashMap;

use kvapi::{Key, TenantId, Txn};
use parking_lot::Mutex;
use sqltypes::{rowcodec, Value};

use crate::catalog::{Catalog, ForeignKeyDef, TableDef};
use crate::error::{from_kv, Result};
use crate::exec::Row;

/// A check waiting for COMMIT.
#[derive(Debug, Clone)]
pub enum Pending {
    /// Row `key` of table `table` (None for a table without a primary
    /// key: then only the values are checked) references its parent
    /// through foreign key `fk` with `values` (its referencing columns').
    Reference { table: u32, fk: String, key: Option<Key>, values: Vec<Value> },
    /// A statement removed key `old` (a row of `parent` before the
    /// change) that rows of `table` may reference through `fk`.
    Removed { table: u32, fk: String, parent: u32, old: Row },
}

impl Pending {
    /// The constraint the check belongs to: (table OID, name).
    fn constraint(&self) -> (u32, &str) {
        match self {
            Pending::Reference { table, fk, .. } | Pending::Removed { table, fk, .. } => {
                (*table, fk)
            }
        }
    }
}

/// One transaction's deferral modes and queued checks.
#[derive(Debug, Default)]
pub struct Deferred {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// `SET CONSTRAINTS ALL`: every deferrable constraint deferred (true)
    /// or immediate (false); None: each as declared.
    all: Option<bool>,
    /// `SET CONSTRAINTS name`, by (table OID, constraint name); wins over
    /// `all` when set later (setting `all` clears it).
    named: HashMap<(u32, String), bool>,
    /// The queued checks, in the order they were queued.
    pending: Vec<Pending>,
}

impl Deferred {
    /// Whether foreign key `fk` of `table` is checked at COMMIT now.
    pub fn is_deferred(&self, table: &TableDef, fk: &ForeignKeyDef) -> bool {
        if !fk.deferrable {
            return false;
        }
        let s = self.state.lock();
        match s.named.get(&(table.oid, fk.name.clone())) {
            Some(&d) => d,
            None => s.all.unwrap_or(fk.initially_deferred),
        }
    }

    /// Queues a check.
    pub fn push(&self, p: Pending) {
        self.state.lock().pending.push(p);
    }

    /// How many checks are queued (a savepoint's mark).
    pub fn mark(&self) -> usize {
        self.state.lock().pending.len()
    }

    /// Drops the checks queued after `mark` (ROLLBACK TO SAVEPOINT).
    pub fn rollback_to(&self, mark: usize) {
        self.state.lock().pending.truncate(mark);
    }

    /// Forgets everything (the transaction ended).
    pub fn reset(&self) {
        *self.state.lock() = State::default();
    }

    /// `SET CONSTRAINTS ALL DEFERRED | IMMEDIATE`.
    pub fn set_all(&self, deferred: bool) {
        let mut s = self.state.lock();
        s.all = Some(deferred);
        s.named.clear();
    }

    /// `SET CONSTRAINTS name DEFERRED | IMMEDIATE` for constraint `name`
    /// of table `table`.
    pub fn set_one(&self, table: u32, name: &str, deferred: bool) {
        self.state.lock().named.insert((table, name.to_string()), deferred);
    }

    /// Takes the queued checks `which` selects out of the queue.
    fn take(&self, which: &dyn Fn(u32, &str) -> bool) -> Vec<Pending> {
        let mut s = self.state.lock();
        let (taken, kept) = std::mem::take(&mut s.pending).into_iter().partition(|p| {
            let (t, n) = p.constraint();
            which(t, n)
        });
        s.pending = kept;
        taken
    }

    /// Runs the queued checks of the constraints `which` selects (all at
    /// COMMIT), in queue order; the first violation is the error.
    pub async fn run<T: Txn>(
        &self,
        txn: &mut T,
        tenant: TenantId,
        cat: &Catalog,
        which: &(dyn Fn(u32, &str) -> bool + Sync),
    ) -> Result<()> {
        for p in self.take(which) {
            match p {
                Pending::Reference { table, fk, key, values } => {
                    let Some((child, fk)) = constraint(cat, table, &fk) else { continue };
                    let mut row = vec![Value::Null; child.columns.len()];
                    if let Some(key) = key {
                        // The row as it is now; a newer version queued its own check.
                        let Some(bytes) = txn.get(&key).await.map_err(from_kv)? else { continue };
                        row = rowcodec::decode_row(&bytes, &child.types())?;
                        let same = fk
                            .columns
                            .iter()
                            .zip(&values)
                            .all(|(&c, v)| crate::dml::same_value(&row[c], v));
                        if !same {
                            continue;
                        }
                    } else {
                        for (&c, v) in fk.columns.iter().zip(values) {
                            row[c] = v;
                        }
                    }
                    crate::fk::check_one(txn, tenant, cat, &child, &fk, &[row], None).await?;
                }
                Pending::Removed { table, fk, parent, old } => {
                    let Some((child, fk)) = constraint(cat, table, &fk) else { continue };
                    let Some(parent) = cat.table_by_oid(parent) else { continue };
                    crate::fk::removed_keys(txn, tenant, cat, &parent, &child, &fk, &[old]).await?;
                }
            }
        }
        Ok(())
    }
}

/// Foreign key `name` of the table with OID `table`, if both still exist.
fn constraint(
    cat: &Catalog,
    table: u32,
    name: &str,
) -> Option<(std::sync::Arc<TableDef>, ForeignKeyDef)> {
    let t = cat.table_by_oid(table)?;
    let fk = t.foreign_keys.iter().find(|f| f.name == name)?.clone();
    Some((t, fk))
}
