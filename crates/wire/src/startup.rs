//! The startup phase: from the first byte to an authenticated user.
//!
//! ```text
//!   client                         server
//!   SSLRequest / GSSENCRequest ->  <- 'N' (no encryption; the client goes on in clear)
//!   CancelRequest(pid, secret) ->  (signal that connection; close, no answer)
//!   StartupMessage(3.x, params) -> [NegotiateProtocolVersion if 3.x > 3.0 or _pq_.* options]
//!                                  trust: nothing more here
//!                                  SCRAM: <- AuthenticationSASL("SCRAM-SHA-256"; over the
//!                                         proxy's TLS "SCRAM-SHA-256-PLUS" first)
//!   SASLInitialResponse        ->  <- AuthenticationSASLContinue(server-first)
//!   SASLResponse(client-final) ->  <- AuthenticationSASLFinal(server-final)
//! ```
//!
//! AuthenticationOk and the rest of the greeting are sent by
//! [`crate::conn`] once the backend has opened a session, so a failure to
//! open (say, an unknown database) still reaches the client as one FATAL
//! error. Every error here is FATAL and closes the connection.

use base64::Engine as _;
use bytes::BytesMut;
use sqlstate::{ErrorReport, SqlState};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::backend::{AuthMethod, Backend, ScramVerifier, StartupInfo};
use crate::cancel::{BackendKey, CancelRegistry};
use crate::codec::{self, Startup, PROTOCOL_3};
use crate::messages as msg;
use crate::scram::{Binding, ScramServer};
use crate::transport::{Closed, Transport};

/// Protocol options (`_pq_.name`) are an extension point of the StartupMessage.
const PROTOCOL_OPTION_PREFIX: &str = "_pq_.";

/// Runs the startup phase. Returns the client's parameters once it is
/// authenticated, with any messages to send before AuthenticationOk left in
/// `out`; Err when the connection must close (a CancelRequest ends here too).
/// `client` is the client's address (for [`Backend::auth_outcome`]);
/// `tls_binding` is the channel-binding data of the TLS the client came
/// over (the proxy's), which lets it choose SCRAM-SHA-256-PLUS.
pub async fn login<B: Backend, IO: AsyncRead + AsyncWrite + Unpin>(
    backend: &B,
    registry: &CancelRegistry,
    t: &mut Transport<IO>,
    (local, client): (bool, Option<std::net::IpAddr>),
    tls_binding: Option<&[u8]>,
    out: &mut BytesMut,
) -> Result<StartupInfo, Closed> {
    let (minor, params) = loop {
        let body = t.startup_frame().await?;
        match codec::decode_startup(&body) {
            Ok(Startup::Ssl) | Ok(Startup::Gss) => t.send(&mut BytesMut::from(&b"N"[..])).await?,
            Ok(Startup::Cancel(pid, secret)) => {
                registry.cancel(BackendKey { pid, secret });
                return Err(Closed::Eof);
            }
            Ok(Startup::Start { minor, params }) => break (minor, params),
            Err(e) => return Err(t.fatal(&e).await),
        }
    };
    let info = match startup_info(minor, params, out) {
        Ok(info) => info,
        Err(e) => return Err(t.fatal_after(out, &e).await),
    };
    match backend.auth_method(&info, local) {
        Ok(AuthMethod::Trust) => {}
        Ok(AuthMethod::ScramSha256(v)) => {
            let outcome = |ok| backend.auth_outcome(client, ok);
            scram(t, v, &info.user, out, tls_binding, outcome).await?
        }
        Err(e) => return Err(t.fatal_after(out, &e).await),
    }
    Ok(info)
}

/// Sorts the StartupMessage parameters into [`StartupInfo`], and queues
/// NegotiateProtocolVersion if the client asked for more than 3.0.
fn startup_info(
    minor: u16,
    params: Vec<(String, String)>,
    out: &mut BytesMut,
) -> Result<StartupInfo, ErrorReport> {
    let mut info = StartupInfo::default();
    let mut unrecognized = Vec::new();
    for (k, v) in params {
        match k.as_str() {
            "user" => info.user = v,
            "database" => info.database = v,
            _ if k.starts_with(PROTOCOL_OPTION_PREFIX) => unrecognized.push(k),
            _ => info.params.push((k, v)),
        }
    }
    if minor > 0 || !unrecognized.is_empty() {
        msg::negotiate_protocol_version(out, PROTOCOL_3, &unrecognized);
    }
    if info.user.is_empty() {
        return Err(ErrorReport::fatal(
            SqlState::InvalidAuthorizationSpecification,
            "no PostgreSQL user name specified in startup packet",
        ));
    }
    if info.database.is_empty() {
        info.database = info.user.clone();
    }
    Ok(info)
}

/// The SCRAM-SHA-256 exchange (RFC 5802 / RFC 7677), with
/// SCRAM-SHA-256-PLUS on offer when there is `tls_binding` data.
/// `outcome` hears whether the proof was right, once the client sent one.
async fn scram<IO: AsyncRead + AsyncWrite + Unpin>(
    t: &mut Transport<IO>,
    verifier: ScramVerifier,
    user: &str,
    out: &mut BytesMut,
    tls_binding: Option<&[u8]>,
    outcome: impl FnOnce(bool),
) -> Result<(), Closed> {
    match tls_binding {
        Some(_) => msg::auth_sasl(out, &["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]),
        None => msg::auth_sasl(out, &["SCRAM-SHA-256"]),
    }
    t.send(out).await?;
    // psql closes here to prompt for a password, then reconnects.
    let body = sasl_response(t).await?;
    let (mechanism, first) = match codec::decode_sasl_initial(&body) {
        Ok(x) => x,
        Err(e) => return Err(t.fatal(&e).await),
    };
    let binding = match (mechanism.as_str(), tls_binding) {
        ("SCRAM-SHA-256-PLUS", Some(data)) => Binding::Chosen(data),
        ("SCRAM-SHA-256", Some(_)) => Binding::Declined,
        ("SCRAM-SHA-256", None) => Binding::NotOffered,
        _ => {
            let e = ErrorReport::fatal(
                SqlState::ProtocolViolation,
                "client selected an invalid SASL authentication mechanism",
            );
            return Err(t.fatal(&e).await);
        }
    };
    let nonce = base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 18]>());
    let started = ScramServer::start(verifier, user, first, &nonce, binding);
    let (server, server_first) = match started {
        Ok(x) => x,
        Err(e) => return Err(t.fatal(&e).await),
    };
    msg::auth_sasl_data(out, 11, server_first.as_bytes());
    t.send(out).await?;
    let body = sasl_response(t).await?;
    match server.finish(&body) {
        Ok(server_final) => {
            outcome(true);
            msg::auth_sasl_data(out, 12, server_final.as_bytes());
            Ok(())
        }
        Err(e) => {
            if e.code == SqlState::InvalidPassword {
                outcome(false);
            }
            Err(t.fatal(&e).await)
        }
    }
}

/// Reads the client's next SASL message, which must be a 'p' message.
async fn sasl_response<IO: AsyncRead + AsyncWrite + Unpin>(
    t: &mut Transport<IO>,
) -> Result<bytes::Bytes, Closed> {
    let (tag, body) = t.frame().await?;
    if tag != b'p' {
        let e = ErrorReport::fatal(
            SqlState::ProtocolViolation,
            format!("expected SASL response, got message type {tag}"),
        );
        return Err(t.fatal(&e).await);
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_parameters() {
        let mut out = BytesMut::new();
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        let info = startup_info(0, vec![p("user", "u"), p("application_name", "a")], &mut out)
            .expect("valid");
        assert_eq!(info.database, "u");
        assert_eq!(info.params, vec![p("application_name", "a")]);
        assert!(out.is_empty());

        let e = startup_info(0, vec![p("database", "d")], &mut out).expect_err("no user");
        assert_eq!(e.code, SqlState::InvalidAuthorizationSpecification);

        let info =
            startup_info(2, vec![p("user", "u"), p("_pq_.x", "1")], &mut out).expect("valid");
        assert!(info.params.is_empty());
        assert_eq!(out[0], b'v');
        assert!(out.ends_with(b"_pq_.x\0"));
    }
}
