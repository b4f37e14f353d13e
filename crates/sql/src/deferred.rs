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

/// A check waiting for COMMIT. `fk` is the foreign key's constraint OID,
/// `table` the OID of the table that has it.
#[derive(Debug, Clone)]
pub enum Pending {
    /// Row `key` of `table` (None for a table without a primary key: then
    /// only the values are checked) references its parent through `fk`
    /// with `values` (its referencing columns').
    Reference { table: u32, fk: u32, key: Option<Key>, values: Vec<Value> },
    /// A statement removed key `old` (a row of `parent` before the
    /// change) that rows of `table` may reference through `fk`.
    Removed { table: u32, fk: u32, parent: u32, old: Row },
}

impl Pending {
    /// The constraint the check belongs to: (table OID, constraint OID).
    fn constraint(&self) -> (u32, u32) {
        match self {
            Pending::Reference { table, fk, .. } | Pending::Removed { table, fk, .. } => {
                (*table, *fk)
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
    /// `SET CONSTRAINTS name`, by constraint OID; wins over `all` when set
    /// later (setting `all` clears it).
    named: HashMap<u32, bool>,
    /// The queued checks, in the order they were queued.
    pending: Vec<Pending>,
}

impl Deferred {
    /// Whether foreign key `fk` is checked at COMMIT now.
    pub fn is_deferred(&self, fk: &ForeignKeyDef) -> bool {
        if !fk.deferrable {
            return false;
        }
        let s = self.state.lock();
        match s.named.get(&fk.oid) {
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

    /// `SET CONSTRAINTS name DEFERRED | IMMEDIATE` for the constraint with
    /// OID `fk`.
    pub fn set_one(&self, fk: u32, deferred: bool) {
        self.state.lock().named.insert(fk, deferred);
    }

    /// Takes the queued checks of the constraints `which` selects (by OID)
    /// out of the queue, grouped by constraint in the order first queued.
    fn take(&self, which: &dyn Fn(u32) -> bool) -> Vec<Vec<Pending>> {
        let mut s = self.state.lock();
        let mut groups: Vec<Vec<Pending>> = Vec::new();
        let mut kept = Vec::new();
        for p in std::mem::take(&mut s.pending) {
            let c = p.constraint();
            if !which(c.1) {
                kept.push(p);
                continue;
            }
            match groups.iter_mut().find(|g| g[0].constraint() == c) {
                Some(g) => g.push(p),
                None => groups.push(vec![p]),
            }
        }
        s.pending = kept;
        groups
    }

    /// Runs the queued checks of the constraints `which` selects (all at
    /// COMMIT), one batch per constraint; the first violation is the
    /// error.
    pub async fn run<T: Txn>(
        &self,
        txn: &mut T,
        tenant: TenantId,
        cat: &Catalog,
        which: &(dyn Fn(u32) -> bool + Sync),
    ) -> Result<()> {
        for group in self.take(which) {
            let (table, fk) = group[0].constraint();
            let Some((child, fk)) = constraint(cat, table, fk) else { continue };
            let mut refs = Vec::new();
            let mut removed: HashMap<u32, Vec<Row>> = HashMap::new();
            for p in group {
                match p {
                    Pending::Reference { key, values, .. } => refs.push((key, values)),
                    Pending::Removed { parent, old, .. } => {
                        removed.entry(parent).or_default().push(old)
                    }
                }
            }
            let rows = current_rows(txn, &child, &fk, refs).await?;
            crate::fk::check_one(txn, tenant, cat, &child, &fk, &rows, None).await?;
            for (parent, olds) in removed {
                let Some(parent) = cat.table_by_oid(parent) else { continue };
                crate::fk::removed_keys(txn, tenant, cat, &parent, &child, &fk, &olds).await?;
            }
        }
        Ok(())
    }
}

/// The rows whose references `refs` queued, as they are now: a row read
/// again by its key is left out when it is gone or its referencing
/// columns changed (a newer version queued its own check); without a key,
/// a row of just the queued values.
async fn current_rows<T: Txn>(
    txn: &T,
    child: &TableDef,
    fk: &ForeignKeyDef,
    refs: Vec<(Option<Key>, Vec<Value>)>,
) -> Result<Vec<Row>> {
    let keys: Vec<Key> = refs.iter().filter_map(|(k, _)| k.clone()).collect();
    let mut fetched = txn.multi_get(&keys).await.map_err(from_kv)?.into_iter();
    let types = child.types();
    let mut rows = Vec::with_capacity(refs.len());
    for (key, values) in refs {
        if key.is_none() {
            let mut row = vec![Value::Null; child.columns.len()];
            for (&c, v) in fk.columns.iter().zip(values) {
                row[c] = v;
            }
            rows.push(row);
            continue;
        }
        let Some(bytes) = fetched.next().flatten() else { continue };
        let row = rowcodec::decode_row(&bytes, &types)?;
        let same = fk.columns.iter().zip(&values).all(|(&c, v)| crate::dml::same_value(&row[c], v));
        if same {
            rows.push(row);
        }
    }
    Ok(rows)
}

/// Foreign key `fk` (a constraint OID) of the table with OID `table`, if
/// both still exist.
fn constraint(
    cat: &Catalog,
    table: u32,
    fk: u32,
) -> Option<(std::sync::Arc<TableDef>, ForeignKeyDef)> {
    let t = cat.table_by_oid(table)?;
    let fk = t.foreign_keys.iter().find(|f| f.oid == fk)?.clone();
    Some((t, fk))
}
