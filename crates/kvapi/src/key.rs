//! Tenant-prefixed keys.
//!
//! A key is `tenant prefix ++ rest`, where the prefix is the byte `b't'`
//! followed by the tenant id as 8 big-endian bytes, so all of a tenant's keys
//! are contiguous and sort by `rest`. [`Key::new`] is the only constructor that
//! applies the prefix; no other code in Strata builds raw keys. The KV node
//! checks [`Key::tenant`] against the tenant a transaction was opened for.

use std::fmt;

use crate::{Error, Result};

/// Identifies a tenant; every stored byte belongs to exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TenantId(pub u64);

impl TenantId {
    /// The built-in tenant that owns the single-node database today.
    pub const SYSTEM: TenantId = TenantId(1);
}

const TENANT_TAG: u8 = b't';
const PREFIX_LEN: usize = 9;

/// A complete storage key: tenant prefix plus the tenant-relative part.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(Vec<u8>);

impl Key {
    /// Builds the key for `rest` inside `tenant`'s keyspace.
    pub fn new(tenant: TenantId, rest: &[u8]) -> Key {
        let mut bytes = Vec::with_capacity(PREFIX_LEN + rest.len());
        bytes.push(TENANT_TAG);
        bytes.extend_from_slice(&tenant.0.to_be_bytes());
        bytes.extend_from_slice(rest);
        Key(bytes)
    }

    /// Re-reads a key from its full encoding (as stored, or as sent over RPC),
    /// checking that it carries a well-formed tenant prefix.
    pub fn decode(bytes: Vec<u8>) -> Result<Key> {
        if bytes.len() < PREFIX_LEN || bytes[0] != TENANT_TAG {
            return Err(Error::Corrupt(format!("key without tenant prefix: {bytes:x?}")));
        }
        Ok(Key(bytes))
    }

    /// The smallest key of `tenant`'s keyspace.
    pub fn tenant_start(tenant: TenantId) -> Key {
        Key::new(tenant, &[])
    }

    /// The tenant this key belongs to.
    pub fn tenant(&self) -> TenantId {
        let mut id = [0u8; 8];
        id.copy_from_slice(&self.0[1..PREFIX_LEN]);
        TenantId(u64::from_be_bytes(id))
    }

    /// Fails with [`Error::TenantViolation`] unless the key belongs to
    /// `tenant` (every transaction checks each key it is given).
    pub fn check_tenant(&self, tenant: TenantId) -> Result<()> {
        if self.tenant() != tenant {
            return Err(Error::TenantViolation(format!(
                "key of tenant {} in a transaction of tenant {}",
                self.tenant().0,
                tenant.0
            )));
        }
        Ok(())
    }

    /// The tenant-relative part (what the SQL layer encoded).
    pub fn rest(&self) -> &[u8] {
        &self.0[PREFIX_LEN..]
    }

    /// The full encoding, prefix included.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Consumes the key, returning its full encoding.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}:", self.tenant().0)?;
        for b in self.rest() {
            if b.is_ascii_graphic() {
                write!(f, "{}", *b as char)?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        write!(f, ")")
    }
}

/// A half-open range `[start, end)` of keys inside one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRange {
    /// First key included.
    pub start: Key,
    /// First key excluded.
    pub end: Key,
}

impl KeyRange {
    /// The range of every key of `tenant` whose rest starts with `prefix`.
    pub fn prefix(tenant: TenantId, prefix: &[u8]) -> KeyRange {
        let start = Key::new(tenant, prefix);
        let end = match prefix_successor(prefix) {
            Some(next) => Key::new(tenant, &next),
            None => Key::new(TenantId(tenant.0 + 1), &[]),
        };
        KeyRange { start, end }
    }

    /// True if `key` lies inside the range.
    pub fn contains(&self, key: &Key) -> bool {
        &self.start <= key && key < &self.end
    }
}

/// The smallest byte string greater than every string starting with `prefix`,
/// or `None` if `prefix` is all 0xff (or empty).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut next = prefix.to_vec();
    while let Some(last) = next.pop() {
        if last != 0xff {
            next.push(last + 1);
            return Some(next);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_keeps_tenants_apart_and_order_within() {
        let a = Key::new(TenantId(1), b"zzz");
        let b = Key::new(TenantId(2), b"aaa");
        assert!(a < b);
        assert!(Key::new(TenantId(1), b"a") < Key::new(TenantId(1), b"b"));
        assert_eq!(a.tenant(), TenantId(1));
        assert_eq!(a.rest(), b"zzz");
    }

    #[test]
    fn prefix_range() {
        let r = KeyRange::prefix(TenantId(3), b"ab");
        assert!(r.contains(&Key::new(TenantId(3), b"ab")));
        assert!(r.contains(&Key::new(TenantId(3), b"ab\xff\xff")));
        assert!(!r.contains(&Key::new(TenantId(3), b"ac")));
        let all = KeyRange::prefix(TenantId(3), b"");
        assert!(all.contains(&Key::new(TenantId(3), b"\xff")));
        assert!(!all.contains(&Key::new(TenantId(4), b"")));
    }

    #[test]
    fn decode_rejects_missing_prefix() {
        assert!(Key::decode(vec![1, 2]).is_err());
        let k = Key::new(TenantId(7), b"x");
        assert_eq!(Key::decode(k.as_bytes().to_vec()), Ok(k));
    }
}
