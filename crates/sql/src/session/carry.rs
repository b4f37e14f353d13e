//! Live session migration, the session's part: what a session takes to
//! another SQL process of its tenant, and how it is put back there.
//!
//! A session moves only between transactions, and only if nothing it holds
//! is tied to this process: temporary tables (their rows are this
//! session's), open cursors (WITH HOLD ones outlive transactions), advisory
//! locks. What it takes: every setting (search_path, the role, timeouts,
//! custom settings), its SQL-level prepared statements (prepared again from
//! their text with the same parameter types), its LISTEN channels, and
//! currval/lastval. The protocol-level prepared statements and the client's
//! identity are the wire layer's ([`wire::migrate`]'s envelope); the new
//! process opens the session as at login (startup parameters, role checks)
//! and then [`Session::adopt`]s this.

use std::sync::Arc;

use kvapi::KvClient;
use serde::{Deserialize, Serialize};
use sqltypes::DataType;

use super::{Session, TxnState};
use crate::err;
use crate::error::Result;

/// A session's state as it moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carried {
    /// Every setting's value, by lower-case name.
    pub settings: Vec<(String, String)>,
    /// SQL-level prepared statements: name, statement text, parameter
    /// type OIDs.
    pub prepared: Vec<(String, String, Vec<u32>)>,
    /// LISTEN channels, in the order they were listened to.
    pub listening: Vec<String>,
    /// currval by sequence OID.
    pub currval: Vec<(u32, i64)>,
    /// The sequence lastval reads.
    pub lastval: Option<u32>,
}

impl<K: KvClient> Session<K> {
    /// The state to take to another process, or why the session cannot
    /// move now.
    pub fn carry(&self) -> std::result::Result<Carried, &'static str> {
        if self.state != TxnState::Idle || self.txn.is_some() || self.copy.is_some() {
            return Err("a transaction is open");
        }
        if !self.temp.is_empty() {
            return Err("it has temporary tables");
        }
        if !self.cursors.infos().is_empty() {
            return Err("it has open cursors");
        }
        if self.advisory.holds_any() {
            return Err("it holds advisory locks");
        }
        let mut prepared = Vec::with_capacity(self.sql_prepared.len());
        for (name, p) in &self.sql_prepared {
            let types = p.param_types.iter().map(DataType::oid).collect();
            prepared.push((name.clone(), p.parsed.text.to_string(), types));
        }
        let (currval, lastval) = self.seqs.lock().carried();
        Ok(Carried {
            settings: self.settings.all().map(|(k, v)| (k.clone(), v.clone())).collect(),
            prepared,
            listening: self.listener.channels(),
            currval,
            lastval,
        })
    }

    /// Puts a moved session's state into this freshly opened one (see the
    /// module docs). Settings are set as they were, without reporting them
    /// to the client again (it has them).
    pub async fn adopt(&mut self, c: Carried) -> Result<()> {
        for (name, value) in &c.settings {
            if self.settings.value(name) != Some(value.as_str()) {
                self.settings.set(name, value)?;
            }
        }
        self.settings.take_changed();
        self.settings_generation += 1;
        for (name, text, oids) in c.prepared {
            let types = self.declared_types(&oids)?;
            let mut stmts = self.prepare(&text, &types).await?;
            let (Some(p), true) = (stmts.pop(), stmts.is_empty()) else {
                return Err(err!(
                    InternalError,
                    "prepared statement \"{name}\" is not one statement"
                ));
            };
            self.sql_prepared.insert(name, Arc::clone(&p));
        }
        for channel in &c.listening {
            self.listener.listen(channel)?;
        }
        self.listener.commit();
        self.seqs.lock().restore(&c.currval, c.lastval);
        Ok(())
    }
}
