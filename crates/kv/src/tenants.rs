//! The tenant registry: which tenants exist, their ids, creation times and
//! settings.
//!
//! It is ordinary MVCC data under the system tenant's keys
//! ([`TenantId::SYSTEM`]), so it is as durable as any commit:
//!
//! ```text
//!   tenant/next          next id to hand out (8 bytes, big-endian)
//!   tenant/name/<name>   postcard(Record { id, created_micros, max_sql_processes })
//!   tenant/active/<id>   last activity, microseconds (8 bytes, big-endian)
//! ```
//!
//! The `default` tenant (id 2) is made when a server first opens its data,
//! so a client that names no tenant always finds one. Dropping a tenant
//! deletes its entry and schedules a range delete of its whole key space,
//! which runs once no snapshot can see the data any more (the same path as
//! DROP TABLE's storage). Names are `[a-z0-9-]`, 1 to 63 bytes (a DNS
//! label, so a name can later be a TLS SNI host name).

use kvapi::{Error, IsolationLevel, Key, KeyRange, Result, TenantId, Txn};
use serde::{Deserialize, Serialize};

use crate::mvcc;
use crate::node::Shared;
use crate::txn::EmbeddedTxn;

/// The tenant every connection that names none reaches.
pub const DEFAULT: &str = "default";

/// The default tenant's id (id 1 is the system tenant itself).
pub const DEFAULT_ID: TenantId = TenantId(2);

/// A tenant's stored entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The tenant's id: the key prefix of its data.
    pub id: u64,
    /// When it was created, microseconds since the Unix epoch.
    pub created_micros: i64,
    /// How many SQL processes may serve it at once (at least 1).
    pub max_sql_processes: u32,
}

/// A record as stored before it had `max_sql_processes` (postcard has no
/// optional trailing fields, so an old entry is read with this shape).
#[derive(Deserialize)]
struct RecordV1 {
    id: u64,
    created_micros: i64,
}

/// The settings `tenant set` may change; None leaves one as it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    /// [`Record::max_sql_processes`].
    pub max_sql_processes: Option<u32>,
}

/// The most SQL processes one tenant may be given.
pub const MAX_SQL_PROCESSES: u32 = 64;

const NEXT: &[u8] = b"tenant/next";

fn name_key(name: &str) -> Key {
    Key::new(TenantId::SYSTEM, format!("tenant/name/{name}").as_bytes())
}

fn active_key(id: u64) -> Key {
    Key::new(TenantId::SYSTEM, format!("tenant/active/{id}").as_bytes())
}

/// Now, in microseconds since the Unix epoch.
pub(crate) fn now_micros() -> i64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_micros().min(i64::MAX as u128) as i64
}

/// Checks a new tenant name: a DNS label of lower-case letters, digits and
/// hyphens, and not a reserved name.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::InvalidInput("tenant name must not be empty".into()));
    }
    if name.len() > 63 {
        return Err(Error::InvalidInput(format!(
            "tenant name \"{name}\" is too long ({} bytes; at most 63)",
            name.len()
        )));
    }
    if let Some(c) = name.chars().find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '-')) {
        return Err(Error::InvalidInput(format!(
            "tenant name \"{name}\" contains {c:?}: only a-z, 0-9 and - are allowed"
        )));
    }
    if name == "system" {
        return Err(Error::InvalidInput("tenant name \"system\" is reserved".into()));
    }
    Ok(())
}

fn decode_record(bytes: &[u8]) -> Result<Record> {
    if let Ok(r) = postcard::from_bytes::<Record>(bytes) {
        return Ok(r);
    }
    let old: RecordV1 =
        postcard::from_bytes(bytes).map_err(|e| Error::Corrupt(format!("tenant record: {e}")))?;
    Ok(Record { id: old.id, created_micros: old.created_micros, max_sql_processes: 1 })
}

fn encode_record(r: &Record) -> Result<Vec<u8>> {
    postcard::to_stdvec(r).map_err(|e| Error::Corrupt(e.to_string()))
}

fn system_txn(shared: &std::sync::Arc<Shared>) -> EmbeddedTxn {
    EmbeddedTxn::new(shared.clone(), TenantId::SYSTEM, IsolationLevel::ReadCommitted)
}

/// Looks a tenant up by name.
pub(crate) async fn lookup(shared: &std::sync::Arc<Shared>, name: &str) -> Result<Option<Record>> {
    let txn = system_txn(shared);
    txn.get(&name_key(name)).await?.map(|b| decode_record(&b)).transpose()
}

/// Every tenant, by name.
pub(crate) async fn list(shared: &std::sync::Arc<Shared>) -> Result<Vec<(String, Record)>> {
    let txn = system_txn(shared);
    let range = KeyRange::prefix(TenantId::SYSTEM, b"tenant/name/");
    let rows = txn.scan(&range, usize::MAX).await?;
    rows.into_iter()
        .map(|(k, v)| {
            let name = String::from_utf8_lossy(&k.rest()[b"tenant/name/".len()..]).into_owned();
            Ok((name, decode_record(&v)?))
        })
        .collect()
}

/// Creates tenant `name` (with id `id` if given, else the next free one).
async fn insert(shared: &std::sync::Arc<Shared>, name: &str, id: Option<u64>) -> Result<Record> {
    let mut txn = system_txn(shared);
    let next_key = Key::new(TenantId::SYSTEM, NEXT);
    let key = name_key(name);
    let locked = txn.lock(&[next_key.clone(), key.clone()]).await?;
    if locked[1].latest.is_some() {
        return Err(Error::InvalidInput(format!("tenant \"{name}\" already exists")));
    }
    let next = match &locked[0].latest {
        Some(b) => u64::from_be_bytes(
            b.as_slice().try_into().map_err(|_| Error::Corrupt("bad tenant counter".into()))?,
        ),
        None => DEFAULT_ID.0 + 1,
    };
    let id = id.unwrap_or(next);
    let record = Record { id, created_micros: now_micros(), max_sql_processes: 1 };
    txn.put(key, encode_record(&record)?, kvapi::LockMode::Locked)?;
    txn.put(next_key, next.max(id + 1).to_be_bytes().to_vec(), kvapi::LockMode::Locked)?;
    txn.commit().await?;
    Ok(record)
}

/// Creates tenant `name`.
pub(crate) async fn create(shared: &std::sync::Arc<Shared>, name: &str) -> Result<Record> {
    check_name(name)?;
    insert(shared, name, None).await
}

/// Changes tenant `name`'s settings; its record as it is now.
pub(crate) async fn set(
    shared: &std::sync::Arc<Shared>,
    name: &str,
    settings: Settings,
) -> Result<Record> {
    if let Some(n) = settings.max_sql_processes {
        if !(1..=MAX_SQL_PROCESSES).contains(&n) {
            return Err(Error::InvalidInput(format!(
                "max_sql_processes must be between 1 and {MAX_SQL_PROCESSES} (not {n})"
            )));
        }
    }
    let mut txn = system_txn(shared);
    let key = name_key(name);
    let locked = txn.lock(std::slice::from_ref(&key)).await?;
    let Some(bytes) = &locked[0].latest else {
        return Err(Error::InvalidInput(format!("tenant \"{name}\" does not exist")));
    };
    let mut record = decode_record(bytes)?;
    if let Some(n) = settings.max_sql_processes {
        record.max_sql_processes = n;
    }
    txn.put(key, encode_record(&record)?, kvapi::LockMode::Locked)?;
    txn.commit().await?;
    Ok(record)
}

/// Makes the `default` tenant if the registry has none yet.
pub(crate) async fn ensure_default(shared: &std::sync::Arc<Shared>) -> Result<()> {
    if lookup(shared, DEFAULT).await?.is_some() {
        return Ok(());
    }
    match insert(shared, DEFAULT, Some(DEFAULT_ID.0)).await {
        Ok(_) => Ok(()),
        // Another opener made it first.
        Err(Error::InvalidInput(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// When tenant `id` last had a client session, as last stored (0: never).
pub(crate) async fn last_active(shared: &std::sync::Arc<Shared>, id: u64) -> Result<i64> {
    let txn = system_txn(shared);
    Ok(match txn.get(&active_key(id)).await? {
        Some(b) => i64::from_be_bytes(b.as_slice().try_into().unwrap_or_default()),
        None => 0,
    })
}

/// Stores when tenant `id` last had a client session (written when one of
/// its SQL processes goes, so `tenant list` still knows after a restart).
pub(crate) async fn set_last_active(
    shared: &std::sync::Arc<Shared>,
    id: u64,
    micros: i64,
) -> Result<()> {
    let mut txn = system_txn(shared);
    let key = active_key(id);
    txn.lock(std::slice::from_ref(&key)).await?;
    txn.put(key, micros.to_be_bytes().to_vec(), kvapi::LockMode::Locked)?;
    txn.commit().await?;
    Ok(())
}

/// Removes tenant `name`'s entry and schedules the deletion of its data.
pub(crate) async fn drop(shared: &std::sync::Arc<Shared>, name: &str) -> Result<Record> {
    if name == DEFAULT {
        return Err(Error::InvalidInput("the default tenant cannot be dropped".into()));
    }
    let mut txn = system_txn(shared);
    let key = name_key(name);
    let locked = txn.lock(std::slice::from_ref(&key)).await?;
    let Some(bytes) = &locked[0].latest else {
        return Err(Error::InvalidInput(format!("tenant \"{name}\" does not exist")));
    };
    let record = decode_record(bytes)?;
    txn.delete(key, kvapi::LockMode::Locked)?;
    let active = active_key(record.id);
    txn.lock(std::slice::from_ref(&active)).await?;
    txn.delete(active, kvapi::LockMode::Locked)?;
    let ts = txn.commit().await?.0;
    let data = KeyRange::prefix(TenantId(record.id), b"");
    // Purge the newest-version cache through an empty commit, then delete
    // every stored version once no snapshot predates the drop.
    let (start, end) = (data.start.as_bytes().to_vec(), data.end.as_bytes().to_vec());
    shared.commit(vec![], vec![(start.clone(), end.clone())]).await?;
    shared.schedule_delete(ts, start, end);
    shared.collect_garbage();
    Ok(record)
}

/// The bytes tenant `id`'s keys take in storage.
pub(crate) fn stored_bytes(shared: &Shared, id: u64) -> Result<u64> {
    let data = KeyRange::prefix(TenantId(id), b"");
    let (s, e) = mvcc::range(data.start.as_bytes(), data.end.as_bytes());
    shared.engine.size(&s, &e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("acme").is_ok());
        assert!(check_name("a-1").is_ok());
        assert!(check_name(&"a".repeat(63)).is_ok());
        assert!(check_name(&"a".repeat(64)).is_err());
        assert!(check_name("").is_err());
        assert!(check_name("Acme").is_err());
        assert!(check_name("a.b").is_err());
        assert!(check_name("system").is_err());
    }

    #[test]
    fn records_from_before_settings_read_with_defaults() {
        #[derive(Serialize)]
        struct Old {
            id: u64,
            created_micros: i64,
        }
        let old = postcard::to_stdvec(&Old { id: 7, created_micros: 42 }).expect("encode");
        let r = decode_record(&old).expect("an old record decodes");
        assert_eq!(r, Record { id: 7, created_micros: 42, max_sql_processes: 1 });
        let new = Record { id: 8, created_micros: 43, max_sql_processes: 3 };
        assert_eq!(decode_record(&encode_record(&new).expect("encode")).expect("decode"), new);
    }
}
