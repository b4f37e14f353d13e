//! Tenant tokens: how a SQL process proves to the KV server which tenant it
//! serves.
//!
//! The KV server keeps one random secret (a file in its data directory,
//! readable only by its owner). A tenant's token is
//! `hex(HMAC-SHA256(secret, "tenant:" ++ id))`; the admin token is
//! `hex(HMAC-SHA256(secret, "admin"))`. Whoever holds the secret (the
//! supervisor and the proxy) can mint a token for the tenant it starts a SQL
//! process for and hands it over in the process's environment; the SQL
//! process itself never sees the secret, so a compromised SQL process can
//! only ever speak for its own tenant. The pool token
//! (`hex(HMAC-SHA256(secret, "pool"))`) is given to pooled SQL processes:
//! it opens a connection bound to no tenant, which can do nothing until it
//! is bound with a tenant's token. Tokens do not expire: rotating the
//! secret file revokes all of them.

use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The KV server's secret.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret(..)")
    }
}

impl Secret {
    /// Reads the secret file (hex text).
    pub fn load(path: &Path) -> std::io::Result<Secret> {
        let text = std::fs::read_to_string(path)?;
        let bytes = unhex(text.trim()).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "secret file is not hex")
        })?;
        if bytes.len() < 16 {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "secret too short"));
        }
        Ok(Secret(bytes))
    }

    /// Reads the secret file, creating it (32 random bytes, mode 0600)
    /// first if it does not exist.
    pub fn load_or_create(path: &Path) -> std::io::Result<Secret> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        if !path.exists() {
            let bytes: [u8; 32] = rand::random();
            let tmp = path.with_extension("tmp");
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            f.write_all(hex(&bytes).as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)?;
        }
        Secret::load(path)
    }

    /// A secret from raw bytes (tests).
    pub fn from_bytes(bytes: &[u8]) -> Secret {
        Secret(bytes.to_vec())
    }

    fn mac(&self, what: &str) -> String {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes keys of any size");
        m.update(what.as_bytes());
        hex(&m.finalize().into_bytes())
    }

    /// The token of tenant `id`.
    pub fn tenant_token(&self, id: u64) -> String {
        self.mac(&format!("tenant:{id}"))
    }

    /// The admin token (tenant management, tenant lookup by the proxy).
    pub fn admin_token(&self) -> String {
        self.mac("admin")
    }

    /// The pool token (a connection of no tenant, until bound to one).
    pub fn pool_token(&self) -> String {
        self.mac("pool")
    }

    /// The token a proxy shows a SQL process of tenant `id` on another
    /// machine (`strata sql --proxy-listen`): it vouches for the PROXY
    /// header that follows, and opens no door to the KV server.
    pub fn proxy_token(&self, id: u64) -> String {
        self.mac(&format!("proxy:{id}"))
    }

    /// Checks a pool token in constant time.
    pub fn verify_pool(&self, token: &str) -> bool {
        same(&self.pool_token(), token)
    }

    /// Checks `token` against tenant `id`'s in constant time.
    pub fn verify_tenant(&self, id: u64, token: &str) -> bool {
        same(&self.tenant_token(id), token)
    }

    /// Checks an admin token in constant time.
    pub fn verify_admin(&self, token: &str) -> bool {
        same(&self.admin_token(), token)
    }
}

/// Compares without an early exit, so timing tells nothing about how much
/// of a guessed token was right.
pub fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_bind_one_tenant() {
        let s = Secret::from_bytes(b"0123456789abcdef0123456789abcdef");
        let t = s.tenant_token(5);
        assert!(s.verify_tenant(5, &t));
        assert!(!s.verify_tenant(6, &t));
        assert!(!s.verify_admin(&t));
        assert!(s.verify_admin(&s.admin_token()));
        assert!(s.verify_pool(&s.pool_token()));
        assert!(!s.verify_pool(&t) && !s.verify_pool(&s.admin_token()));
        assert!(!s.verify_tenant(5, &s.pool_token()) && !s.verify_admin(&s.pool_token()));
        let other = Secret::from_bytes(b"fedcba9876543210fedcba9876543210");
        assert!(!other.verify_tenant(5, &t));
    }

    #[test]
    fn secret_file_round_trip() {
        let dir = std::env::temp_dir().join(format!("kvrpc-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("secret");
        let a = Secret::load_or_create(&path).expect("create");
        let b = Secret::load_or_create(&path).expect("load");
        assert_eq!(a.admin_token(), b.admin_token());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
