//! TLS for the proxy's clients (and for `strata sql --tls`): the server
//! configuration, from a given certificate and key, from a self-signed
//! pair made on first start, or from one made in memory ([`ephemeral`]).
//!
//! The self-signed certificate names `localhost`, every `*.localhost` (so a
//! client can name its tenant in the host name it verifies, `acme.localhost`)
//! and 127.0.0.1; a client that verifies it (`sslmode=verify-full`) gives
//! the certificate file as its root (`sslrootcert`). The key is written
//! readable by its owner only.
//!
//! [`end_point`] is the certificate's `tls-server-end-point` channel-binding
//! data (RFC 5929): its hash with the hash function of its signature
//! (SHA-256 for MD5, SHA-1 and SHA-256 signatures, as PostgreSQL does),
//! which SCRAM-SHA-256-PLUS binds a login to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

/// The proxy's TLS (and a SQL process's, `strata sql --tls`): the server
/// configuration and its certificate's channel-binding data.
pub use wire::tls::ServerTls as Tls;

/// The certificate and key files in `dir` a first start makes.
pub fn default_paths(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("server.crt"), dir.join("server.key"))
}

/// The TLS from PEM files `cert` and `key`.
pub fn load(cert: &Path, key: &Path) -> Result<Tls, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("reading the certificate {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("reading the key {}: {e}", key.display()))?;
    from_der(certs, key)
}

/// A self-signed certificate for `localhost`, `*.localhost` and
/// 127.0.0.1, made now and kept in memory only (a process with no data
/// directory; its clients can encrypt but not verify).
pub fn ephemeral() -> Result<Tls, String> {
    let made =
        rcgen::generate_simple_self_signed(self_signed_names()).map_err(|e| e.to_string())?;
    let key = PrivateKeyDer::Pkcs8(made.key_pair.serialize_der().into());
    from_der(vec![made.cert.der().clone()], key)
}

fn self_signed_names() -> Vec<String> {
    vec!["localhost".to_string(), "*.localhost".to_string(), "127.0.0.1".to_string()]
}

fn from_der(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Tls, String> {
    let end_point = end_point(&certs[0]).into();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
    Ok(Tls { config: Arc::new(config), end_point })
}

/// The TLS from `DIR/server.crt` and `DIR/server.key`, making a
/// self-signed pair there first if there is none.
pub fn load_or_create(dir: &Path) -> Result<Tls, String> {
    let (cert, key) = default_paths(dir);
    if !cert.exists() || !key.exists() {
        create(dir, &cert, &key)?;
    }
    load(&cert, &key)
}

fn create(dir: &Path, cert: &Path, key: &Path) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let made =
        rcgen::generate_simple_self_signed(self_signed_names()).map_err(|e| e.to_string())?;
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

/// The `tls-server-end-point` data of the certificate `der` (see the
/// module docs).
pub fn end_point(der: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    // Object identifiers (DER contents) of the signatures that hash with
    // SHA-384 or SHA-512: sha384/512WithRSAEncryption, ecdsa-with-SHA384/512.
    const SHA384: [&[u8]; 2] = [
        &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0c],
        &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03],
    ];
    const SHA512: [&[u8]; 2] = [
        &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d],
        &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04],
    ];
    match signature_oid(der) {
        Some(oid) if SHA384.contains(&oid) => sha2::Sha384::digest(der).to_vec(),
        Some(oid) if SHA512.contains(&oid) => sha2::Sha512::digest(der).to_vec(),
        _ => sha2::Sha256::digest(der).to_vec(),
    }
}

/// The signature algorithm's object identifier of an X.509 certificate:
/// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm
/// SEQUENCE { algorithm OID, .. }, signature }.
fn signature_oid(der: &[u8]) -> Option<&[u8]> {
    /// One DER element at the start of `b`: (tag, contents, the rest).
    fn element(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, b) = b.split_first()?;
        let (&first, mut b) = b.split_first()?;
        let len = if first < 0x80 {
            first as usize
        } else {
            let n = (first & 0x7f) as usize;
            if n == 0 || n > 4 || b.len() < n {
                return None;
            }
            let len = b[..n].iter().fold(0usize, |a, x| a << 8 | *x as usize);
            b = &b[n..];
            len
        };
        (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
    }
    let (0x30, cert, _) = element(der)? else { return None };
    let (0x30, _tbs, rest) = element(cert)? else { return None };
    let (0x30, alg, _) = element(rest)? else { return None };
    let (0x06, oid, _) = element(alg)? else { return None };
    Some(oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_point_hash_follows_the_signature() {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).expect("cert");
        let der = made.cert.der().to_vec();
        // rcgen signs with ECDSA P-256 and SHA-256.
        assert_eq!(
            signature_oid(&der),
            Some(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02][..])
        );
        use sha2::Digest;
        assert_eq!(end_point(&der), sha2::Sha256::digest(&der).to_vec());
        assert_eq!(signature_oid(b"\x30\x05garbage"), None);
        assert_eq!(end_point(b"").len(), 32);
    }

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
