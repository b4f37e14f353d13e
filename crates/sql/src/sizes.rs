//! Relation and database sizes for pg_relation_size, pg_table_size,
//! pg_indexes_size, pg_total_relation_size and pg_database_size.
//!
//! A size is read from storage (`kvapi::Txn::stored_size`), which
//! expressions, evaluated synchronously, cannot reach. They use the
//! statement retry scheme (`Session::execute_with_retries`): the first
//! size function a statement calls finds no sizes, asks for them and
//! fails; the session measures every relation of the catalog and the
//! database once, and runs the statement again, which then reads them.
//! One retry serves every size call of the statement (psql's `\dt+` asks
//! for each table's).
//!
//! A size is what the rows take in the KV store: keys and values of every
//! stored version not yet collected. PostgreSQL counts 8 kB pages, so the
//! numbers differ (a table PostgreSQL shows as `8192 bytes` may be a few
//! hundred bytes here).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kvapi::{KeyRange, TenantId, Txn};
use parking_lot::Mutex;

use crate::catalog::{keys, Catalog};
use crate::error::{from_kv, Result};

/// The measured sizes: each relation's own storage, by OID.
#[derive(Debug, Default)]
pub struct Sizes {
    /// Table, index and sequence OID -> bytes (views and the primary key
    /// index, which is the table's own storage, are 0).
    pub relations: HashMap<u32, u64>,
    /// The whole database (the tenant's keyspace, catalog included).
    pub database: u64,
}

impl Sizes {
    /// pg_relation_size / pg_table_size: the relation's own storage.
    pub fn relation(&self, oid: u32) -> Option<u64> {
        self.relations.get(&oid).copied()
    }

    /// pg_indexes_size: the table's indexes together.
    pub fn indexes(&self, cat: &Catalog, oid: u32) -> Option<u64> {
        self.relation(oid)?;
        let t = cat.table_by_oid(oid);
        let of = t.iter().flat_map(|t| t.indexes.iter()).map(|i| self.relation(i.oid).unwrap_or(0));
        Some(of.sum())
    }

    /// pg_total_relation_size: the table and its indexes.
    pub fn total(&self, cat: &Catalog, oid: u32) -> Option<u64> {
        Some(self.relation(oid)? + self.indexes(cat, oid)?)
    }
}

/// A statement's sizes: measured once when a call first asks. Every
/// statement starts with a check of one flag: statements that call no
/// size function take no lock here.
#[derive(Debug, Default)]
pub struct StatementSizes {
    sizes: Mutex<Option<Arc<Sizes>>>,
    /// A call asked and found no sizes.
    wanted: AtomicBool,
    /// `sizes` holds the running (or last) statement's.
    measured: AtomicBool,
}

impl StatementSizes {
    /// Forgets the last statement's sizes.
    pub fn start_statement(&self) {
        self.wanted.store(false, Ordering::Relaxed);
        if self.measured.swap(false, Ordering::Relaxed) {
            *self.sizes.lock() = None;
        }
    }

    /// The sizes, or (the first time) a request for them and the error
    /// that ends the attempt.
    pub fn get(&self) -> Result<Arc<Sizes>> {
        if let Some(sizes) = &*self.sizes.lock() {
            return Ok(sizes.clone());
        }
        self.wanted.store(true, Ordering::Relaxed);
        Err(crate::err!(ObjectNotInPrerequisiteState, "relation sizes are not measured yet"))
    }

    /// True (once) if a call asked for the sizes.
    pub fn take_pending(&self) -> bool {
        self.wanted.swap(false, Ordering::Relaxed)
    }

    /// Measures every relation of `cat` and the database.
    pub async fn measure<T: Txn>(&self, txn: &T, tenant: TenantId, cat: &Catalog) -> Result<()> {
        let mut sizes = Sizes::default();
        for t in cat.tables.values() {
            let table = keys::storage(tenant, t.storage);
            sizes.relations.insert(t.oid, txn.stored_size(&table).await.map_err(from_kv)?);
            if t.pkey_name.is_some() {
                sizes.relations.insert(t.pkey_oid, 0);
            }
            for i in &t.indexes {
                let index = keys::storage(tenant, i.storage);
                sizes.relations.insert(i.oid, txn.stored_size(&index).await.map_err(from_kv)?);
            }
        }
        for s in cat.sequences.values() {
            let state = keys::sequence_state(tenant, s.oid);
            let range = KeyRange { start: state.clone(), end: crate::exec::after(&state) };
            sizes.relations.insert(s.oid, txn.stored_size(&range).await.map_err(from_kv)?);
        }
        for v in cat.views.values() {
            sizes.relations.insert(v.oid, 0);
        }
        let all = KeyRange::prefix(tenant, &[]);
        sizes.database = txn.stored_size(&all).await.map_err(from_kv)?;
        *self.sizes.lock() = Some(Arc::new(sizes));
        self.measured.store(true, Ordering::Relaxed);
        Ok(())
    }
}

/// The units above bytes, each 1024 times the one before.
const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];

/// pg_size_pretty: bytes in the largest unit that keeps the number at or
/// above 10 (bytes) or 20 (kB and up) of it, rounded half away from zero,
/// as PostgreSQL 15 prints it.
pub fn pretty(size: i128) -> String {
    if size.abs() < 10 * 1024 {
        return format!("{size} bytes");
    }
    let half_rounded = |x: i128| (x + if x < 0 { -1 } else { 1 }) / 2;
    // One extra bit is kept for the rounding.
    let mut size = size / (1 << 9);
    for (i, unit) in UNITS.iter().enumerate() {
        if size.abs() < 20 * 1024 - 1 || i == UNITS.len() - 1 {
            return format!("{} {unit}", half_rounded(size));
        }
        size /= 1 << 10;
    }
    unreachable!("the last unit returns")
}

/// pg_size_bytes: a number (sign, fraction and exponent allowed) and an
/// optional unit among bytes, kB, MB, GB, TB and PB (any case), in bytes
/// rounded to an integer; 22023 for anything else, 22003 beyond bigint.
pub fn bytes(text: &str) -> Result<i64> {
    let invalid = || crate::err!(InvalidParameterValue, "invalid size: \"{text}\"");
    let s = text.trim_start();
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut end = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits(end);
    let mut seen = int_end > end;
    end = int_end;
    if b.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        seen |= frac_end > end + 1;
        end = frac_end;
    }
    if !seen {
        return Err(invalid());
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits(end + 1 + sign);
        if exp_end > end + 1 + sign {
            end = exp_end;
        }
    }
    let number = sqltypes::Numeric::parse(&s[..end]).map_err(|_| invalid())?;
    let unit = s[end..].trim();
    let shift = match UNITS.iter().position(|u| u.eq_ignore_ascii_case(unit)) {
        Some(i) => 10 * (i + 1),
        None if unit.is_empty() || unit.eq_ignore_ascii_case("bytes") => 0,
        None => {
            return Err(invalid().with_detail(format!("Invalid size unit: \"{unit}\".")).with_hint(
                "Valid units are \"bytes\", \"kB\", \"MB\", \"GB\", \"TB\", and \"PB\".",
            ))
        }
    };
    let value = number.mul(&sqltypes::Numeric::from_i64(1 << shift));
    value.to_i64_round().ok_or_else(|| crate::err!(NumericValueOutOfRange, "bigint out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL 15's pg_size_pretty for the same values.
    #[test]
    fn sizes_print_as_postgres_prints_them() {
        let cases = [
            (0, "0 bytes"),
            (10239, "10239 bytes"),
            (10240, "10 kB"),
            (-10240, "-10 kB"),
            (20971519, "20 MB"),
            (10485759, "10 MB"),
            (20971520, "20 MB"),
            (1_000_000_000, "954 MB"),
            (1_000_000_000_000, "931 GB"),
            (1_000_000_000_000_000, "909 TB"),
            (i64::MAX as i128, "8192 PB"),
        ];
        for (n, want) in cases {
            assert_eq!(pretty(n), want, "{n}");
        }
    }
}
