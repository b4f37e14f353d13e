//! SCRAM-SHA-256 authentication (RFC 5802 / RFC 7677), server side, as
//! PostgreSQL implements it: the user name in the client-first message is
//! ignored (the startup packet's user counts), and over TLS the client may
//! choose SCRAM-SHA-256-PLUS, binding the exchange to the server's
//! certificate (`tls-server-end-point`, RFC 5929): its proof then covers
//! the hash of the certificate it saw, so a man in the middle with another
//! certificate cannot relay it. A client that supports channel binding but
//! thinks the server does not (`y` while PLUS was offered) is refused: that
//! is a downgrade.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use sqlstate::{ErrorReport, SqlState};

use crate::backend::ScramVerifier;

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC accepts keys of any length");
    m.update(data);
    m.finalize().into_bytes().into()
}

fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Builds the verifier PostgreSQL would store for `password`.
pub fn scram_verifier(password: &str) -> ScramVerifier {
    let salt: [u8; 16] = rand::random();
    verifier_with(password, &salt, 4096)
}

/// Builds a verifier with a given salt and iteration count.
pub fn verifier_with(password: &str, salt: &[u8], iterations: u32) -> ScramVerifier {
    let mut salted = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut salted);
    let client_key = hmac(&salted, b"Client Key");
    ScramVerifier {
        iterations,
        salt: salt.to_vec(),
        stored_key: sha256(&client_key),
        server_key: hmac(&salted, b"Server Key"),
    }
}

/// Formats a verifier as `SCRAM-SHA-256$iter:salt$StoredKey:ServerKey`.
pub fn format_verifier(v: &ScramVerifier) -> String {
    format!(
        "SCRAM-SHA-256${}:{}${}:{}",
        v.iterations,
        B64.encode(&v.salt),
        B64.encode(v.stored_key),
        B64.encode(v.server_key)
    )
}

/// Parses the stored form written by [`format_verifier`].
pub fn parse_verifier(s: &str) -> Option<ScramVerifier> {
    let rest = s.strip_prefix("SCRAM-SHA-256$")?;
    let (iter_salt, keys) = rest.split_once('$')?;
    let (iter, salt) = iter_salt.split_once(':')?;
    let (stored, server) = keys.split_once(':')?;
    Some(ScramVerifier {
        iterations: iter.parse().ok()?,
        salt: B64.decode(salt).ok()?,
        stored_key: B64.decode(stored).ok()?.try_into().ok()?,
        server_key: B64.decode(server).ok()?.try_into().ok()?,
    })
}

fn auth_failed(user: &str) -> ErrorReport {
    ErrorReport::fatal(
        SqlState::InvalidPassword,
        format!("password authentication failed for user \"{user}\""),
    )
}

fn malformed() -> ErrorReport {
    ErrorReport::fatal(SqlState::ProtocolViolation, "malformed SCRAM message")
}

/// Channel binding as the server offered it and the client chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding<'a> {
    /// Not offered (no TLS, or no certificate hash to bind to).
    NotOffered,
    /// SCRAM-SHA-256-PLUS was offered; the client chose SCRAM-SHA-256.
    Declined,
    /// The client chose SCRAM-SHA-256-PLUS: the `tls-server-end-point`
    /// data it must bind to.
    Chosen(&'a [u8]),
}

/// One SCRAM exchange in progress.
pub struct ScramServer {
    verifier: ScramVerifier,
    user: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    /// The `c=` attribute the client-final message must carry: the GS2
    /// header and any channel-binding data, in base64.
    channel: String,
}

fn binding_error(message: &str) -> ErrorReport {
    ErrorReport::fatal(SqlState::ProtocolViolation, message)
}

impl ScramServer {
    /// Handles the client-first message with channel binding as `binding`
    /// says; returns the server-first message.
    pub fn start(
        verifier: ScramVerifier,
        user: &str,
        client_first: &[u8],
        server_nonce: &str,
        binding: Binding<'_>,
    ) -> Result<(ScramServer, String), ErrorReport> {
        let msg = std::str::from_utf8(client_first).map_err(|_| malformed())?;
        // gs2-header: cbind-flag "," [authzid] ","
        let (flag, rest) = msg.split_once(',').ok_or_else(malformed)?;
        let (authzid, bare) = rest.split_once(',').ok_or_else(malformed)?;
        if !authzid.is_empty() {
            return Err(binding_error(
                "client uses authorization identity, but it is not supported",
            ));
        }
        let header = &msg[..flag.len() + authzid.len() + 2];
        let channel = match (flag, binding) {
            ("n", Binding::Chosen(_)) | ("y", Binding::Chosen(_)) => {
                return Err(binding_error("The client selected SCRAM-SHA-256-PLUS, but the SCRAM message does not include channel binding data."));
            }
            ("y", Binding::Declined) => {
                return Err(binding_error("SCRAM channel binding negotiation error"));
            }
            ("n" | "y", _) => B64.encode(header),
            ("p=tls-server-end-point", Binding::Chosen(data)) => {
                let mut c = header.as_bytes().to_vec();
                c.extend_from_slice(data);
                B64.encode(c)
            }
            (f, Binding::Chosen(_)) if f.starts_with("p=") => {
                let name = &f[2..];
                return Err(binding_error(&format!(
                    "unsupported SCRAM channel-binding type \"{name}\""
                )));
            }
            (f, _) if f.starts_with("p=") => {
                return Err(binding_error("The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data."));
            }
            _ => return Err(malformed()),
        };
        let cnonce = bare.split(',').find_map(|p| p.strip_prefix("r=")).ok_or_else(malformed)?;
        let nonce = format!("{cnonce}{server_nonce}");
        let server_first =
            format!("r={nonce},s={},i={}", B64.encode(&verifier.salt), verifier.iterations);
        let s = ScramServer {
            verifier,
            user: user.to_string(),
            client_first_bare: bare.to_string(),
            server_first: server_first.clone(),
            nonce,
            channel,
        };
        Ok((s, server_first))
    }

    /// Checks the client-final message; returns the server-final message.
    pub fn finish(&self, client_final: &[u8]) -> Result<String, ErrorReport> {
        let msg = std::str::from_utf8(client_final).map_err(|_| malformed())?;
        let (without_proof, proof) = msg.rsplit_once(",p=").ok_or_else(malformed)?;
        let attr = |name: &str| without_proof.split(',').find_map(|p| p.strip_prefix(name));
        let nonce = attr("r=").ok_or_else(malformed)?;
        if attr("c=").ok_or_else(malformed)? != self.channel {
            return Err(binding_error("SCRAM channel binding check failed"));
        }
        if nonce != self.nonce {
            return Err(auth_failed(&self.user));
        }
        let proof = B64.decode(proof).map_err(|_| malformed())?;
        if proof.len() != 32 {
            return Err(auth_failed(&self.user));
        }
        let auth_message =
            format!("{},{},{}", self.client_first_bare, self.server_first, without_proof);
        let client_sig = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let client_key: Vec<u8> = proof.iter().zip(client_sig.iter()).map(|(a, b)| a ^ b).collect();
        if sha256(&client_key) != self.verifier.stored_key {
            return Err(auth_failed(&self.user));
        }
        let server_sig = hmac(&self.verifier.server_key, auth_message.as_bytes());
        Ok(format!("v={}", B64.encode(server_sig)))
    }
}

/// The ClientProof for `auth_message` and the ServerSignature to expect,
/// in base64, for `password` salted as the server-first message says.
fn client_proof(
    password: &str,
    salt: &[u8],
    iterations: u32,
    auth_message: &str,
) -> (String, String) {
    let mut salted = [0u8; 32];
    pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut salted);
    let client_key = hmac(&salted, b"Client Key");
    let sig = hmac(&sha256(&client_key), auth_message.as_bytes());
    let proof: Vec<u8> = client_key.iter().zip(sig).map(|(a, b)| a ^ b).collect();
    let server_sig = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
    (B64.encode(proof), B64.encode(server_sig))
}

/// The client side of a SCRAM-SHA-256 exchange without channel binding
/// (the Strata proxy logs in to a SQL process with it for a client that
/// gave its password to the proxy).
pub struct ScramClient {
    password: String,
    bare: String,
    nonce: String,
    /// The ServerSignature the server-final message must carry.
    expected: Option<String>,
}

impl ScramClient {
    /// Starts an exchange: the client-first message to send.
    pub fn start(password: &str) -> (ScramClient, String) {
        let nonce = B64.encode(rand::random::<[u8; 18]>());
        let bare = format!("n=,r={nonce}");
        let first = format!("n,,{bare}");
        (ScramClient { password: password.to_string(), bare, nonce, expected: None }, first)
    }

    /// The client-final message answering `server_first`.
    pub fn answer(&mut self, server_first: &str) -> Result<String, String> {
        let attr = |name: &str| server_first.split(',').find_map(|p| p.strip_prefix(name));
        let bad = || format!("bad SCRAM server-first message {server_first:?}");
        let nonce = attr("r=").filter(|r| r.starts_with(&self.nonce)).ok_or_else(bad)?;
        let salt = attr("s=").and_then(|s| B64.decode(s).ok()).ok_or_else(bad)?;
        let iterations: u32 = attr("i=").and_then(|i| i.parse().ok()).ok_or_else(bad)?;
        if !(1..=10_000_000).contains(&iterations) {
            return Err(bad());
        }
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.bare);
        let (proof, server_sig) = client_proof(&self.password, &salt, iterations, &auth_message);
        self.expected = Some(format!("v={server_sig}"));
        Ok(format!("{without_proof},p={proof}"))
    }

    /// Whether `server_final` proves the server knew the password too.
    pub fn verify(&self, server_final: &str) -> bool {
        self.expected.as_deref() == Some(server_final)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_side_logs_in_and_checks_the_server() {
        let v = verifier_with("pw", b"salt", 4096);
        let (mut c, first) = ScramClient::start("pw");
        let (s, server_first) =
            ScramServer::start(v, "u", first.as_bytes(), "SN", Binding::NotOffered).expect("start");
        let fin = c.answer(&server_first).expect("answer");
        let server_final = s.finish(fin.as_bytes()).expect("the right password");
        assert!(c.verify(&server_final));
        assert!(!c.verify("v=AAAA"));
        let (mut wrong, first) = ScramClient::start("nope");
        let v = verifier_with("pw", b"salt", 4096);
        let (s, server_first) =
            ScramServer::start(v, "u", first.as_bytes(), "SN", Binding::NotOffered).expect("start");
        let fin = wrong.answer(&server_first).expect("answer");
        assert_eq!(s.finish(fin.as_bytes()).expect_err("wrong").code, SqlState::InvalidPassword);
        assert!(c.answer("r=other,s=c2FsdA==,i=4096").is_err(), "a nonce not extending ours");
    }

    #[test]
    fn rfc7677_example() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").expect("salt");
        let v = verifier_with("pencil", &salt, 4096);
        let (s, first) = ScramServer::start(
            v,
            "user",
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
            Binding::NotOffered,
        )
        .expect("start");
        assert_eq!(first, "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        let fin = s
            .finish(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
            .expect("proof accepted");
        assert_eq!(fin, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        let bad = s.finish(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
        assert_eq!(bad.expect_err("wrong proof").code, SqlState::InvalidPassword);
    }

    /// One exchange with `first` (the client-first message) and `c` (the
    /// client-final's channel attribute): the server's verdict.
    fn exchange(first: &str, c: &str, binding: Binding<'_>) -> Result<String, ErrorReport> {
        let v = verifier_with("pw", b"salt", 4096);
        let (s, server_first) =
            ScramServer::start(v.clone(), "u", first.as_bytes(), "SN", binding)?;
        let bare = first.splitn(3, ',').nth(2).expect("bare");
        let without_proof = format!("c={c},r=CNSN");
        let auth = format!("{bare},{server_first},{without_proof}");
        let (p, _) = client_proof("pw", &v.salt, v.iterations, &auth);
        s.finish(format!("{without_proof},p={p}").as_bytes())
    }

    #[test]
    fn channel_binding_to_the_certificate() {
        let cert_hash = [7u8; 32];
        let bound = {
            let mut c = b"p=tls-server-end-point,,".to_vec();
            c.extend_from_slice(&cert_hash);
            B64.encode(c)
        };
        let plus = "p=tls-server-end-point,,n=,r=CN";
        assert!(exchange(plus, &bound, Binding::Chosen(&cert_hash)).is_ok());
        // Another certificate's hash (a relaying man in the middle): refused.
        let e = exchange(plus, &bound, Binding::Chosen(&[8u8; 32])).expect_err("other cert");
        assert_eq!(e.message, "SCRAM channel binding check failed");
        // Plain SCRAM still works with and without PLUS on offer.
        assert!(exchange("n,,n=,r=CN", "biws", Binding::Declined).is_ok());
        assert!(exchange("n,,n=,r=CN", "biws", Binding::NotOffered).is_ok());
        assert!(exchange("y,,n=,r=CN", "eSws", Binding::NotOffered).is_ok());
        // A header that does not match c=, a downgrade, binding data where
        // none was offered, an unknown binding type, an authzid.
        assert!(exchange("n,,n=,r=CN", "eSws", Binding::NotOffered).is_err());
        let e = exchange("y,,n=,r=CN", "eSws", Binding::Declined).expect_err("downgrade");
        assert_eq!(e.message, "SCRAM channel binding negotiation error");
        assert!(exchange(plus, &bound, Binding::NotOffered).is_err());
        assert!(exchange("p=tls-unique,,n=,r=CN", "x", Binding::Chosen(&cert_hash)).is_err());
        assert!(exchange("n,a=x,n=,r=CN", "biws", Binding::NotOffered).is_err());
        assert!(exchange("n,,n=,r=CN", "biws", Binding::Chosen(&cert_hash)).is_err());
    }

    #[test]
    fn verifier_text_round_trip() {
        let v = scram_verifier("secret");
        assert_eq!(parse_verifier(&format_verifier(&v)), Some(v));
    }
}
