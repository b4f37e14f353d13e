//! SCRAM-SHA-256 authentication (RFC 5802 / RFC 7677), server side, as
//! PostgreSQL implements it: no channel binding, the user name in the
//! client-first message is ignored (the startup packet's user counts).

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

/// One SCRAM exchange in progress.
pub struct ScramServer {
    verifier: ScramVerifier,
    user: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

impl ScramServer {
    /// Handles the client-first message; returns the server-first message.
    pub fn start(
        verifier: ScramVerifier,
        user: &str,
        client_first: &[u8],
        server_nonce: &str,
    ) -> Result<(ScramServer, String), ErrorReport> {
        let msg = std::str::from_utf8(client_first).map_err(|_| malformed())?;
        let bare = match msg.strip_prefix("n,,").or_else(|| msg.strip_prefix("y,,")) {
            Some(b) => b,
            None if msg.starts_with("p=") => {
                return Err(ErrorReport::fatal(
                    SqlState::ProtocolViolation,
                    "channel binding is not supported",
                ));
            }
            None => return Err(malformed()),
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
        };
        Ok((s, server_first))
    }

    /// Checks the client-final message; returns the server-final message.
    pub fn finish(&self, client_final: &[u8]) -> Result<String, ErrorReport> {
        let msg = std::str::from_utf8(client_final).map_err(|_| malformed())?;
        let (without_proof, proof) = msg.rsplit_once(",p=").ok_or_else(malformed)?;
        let nonce =
            without_proof.split(',').find_map(|p| p.strip_prefix("r=")).ok_or_else(malformed)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7677_example() {
        let salt = B64.decode("W22ZaJ0SNY7soEsUEjb6gQ==").expect("salt");
        let v = verifier_with("pencil", &salt, 4096);
        let (s, first) = ScramServer::start(
            v,
            "user",
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
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

    #[test]
    fn verifier_text_round_trip() {
        let v = scram_verifier("secret");
        assert_eq!(parse_verifier(&format_verifier(&v)), Some(v));
    }
}
