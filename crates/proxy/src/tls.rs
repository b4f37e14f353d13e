//! TLS for the proxy's clients: the server configuration, from a given
//! certificate and key or from a self-signed pair made on first start.
//!
//! The self-signed certificate names `localhost`, every `*.localhost` (so a
//! client can name its tenant in the host name it verifies, `acme.localhost`)
//! and 127.0.0.1; a client that verifies it (`sslmode=verify-full`) gives
//! the certificate file as its root (`sslrootcert`). The key is written
//! readable by its owner only.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

/// The certificate and key files in `dir` a first start makes.
pub fn default_paths(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("server.crt"), dir.join("server.key"))
}

/// The server configuration from PEM files `cert` and `key`.
pub fn load(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("reading the certificate {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("reading the key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
    Ok(Arc::new(config))
}

/// The configuration from `DIR/server.crt` and `DIR/server.key`, making a
/// self-signed pair there first if there is none.
pub fn load_or_create(dir: &Path) -> Result<Arc<ServerConfig>, String> {
    let (cert, key) = default_paths(dir);
    if !cert.exists() || !key.exists() {
        create(dir, &cert, &key)?;
    }
    load(&cert, &key)
}

fn create(dir: &Path, cert: &Path, key: &Path) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let names = vec!["localhost".to_string(), "*.localhost".to_string(), "127.0.0.1".to_string()];
    let made = rcgen::generate_simple_self_signed(names).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("making {}: {e}", dir.display()))?;
    // Key first, then the certificate: a certificate file means both exist.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(key)
        .map_err(|e| format!("writing {}: {e}", key.display()))?;
    f.write_all(made.key_pair.serialize_pem().as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("writing {}: {e}", key.display()))?;
    std::fs::write(cert, made.cert.pem())
        .map_err(|e| format!("writing {}: {e}", cert.display()))?;
    tracing::info!(cert = %cert.display(), "made a self-signed TLS certificate");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_start_makes_a_certificate_and_reuses_it() {
        let dir = tempfile_dir();
        load_or_create(&dir).expect("made and loaded");
        let (cert, key) = default_paths(&dir);
        let first = std::fs::read(&cert).expect("certificate");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key).expect("key").permissions().mode() & 0o777, 0o600);
        load_or_create(&dir).expect("loaded again");
        assert_eq!(
            std::fs::read(&cert).expect("certificate"),
            first,
            "a second start made another"
        );
        std::fs::write(&key, "not a key").expect("spoil the key");
        assert!(load(&cert, &key).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "strata-tls-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }
}
