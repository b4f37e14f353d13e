//! Routing by password, for clients that can name their tenant neither in
//! `options`, nor by SNI, nor in the database name ([`Config::password_routing`](crate::Config::password_routing)).
//!
//! Such a client is asked for its password by the proxy itself
//! (AuthenticationCleartextPassword, as Neon's proxy does); the field may
//! name the tenant, `endpoint=NAME;PASSWORD` ([`route::password_tenant`]).
//! The proxy then routes to that tenant and logs in to its SQL process on
//! the client's behalf with SCRAM-SHA-256 and the rest of the field
//! ([`wire::scram::ScramClient`]): the SQL process checks the password as
//! for any client, reports the outcome for throttling, and an error it
//! sends (a wrong password, an unknown role) reaches the client as it is.
//! From AuthenticationOk on, the proxy forwards the session's bytes.

use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use sqlstate::{ErrorReport, SqlState};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use wire::proxy_header::Origin;
use wire::scram::ScramClient;
use wire::transport::Transport;

use crate::{route, Io, Proxy, STARTUP_TIMEOUT};

/// How a login to the SQL process on a client's behalf ended.
enum Upstream {
    /// AuthenticationOk came (and was consumed).
    Ok,
    /// The SQL process refused: its ErrorResponse, framed, for the client.
    Refused(BytesMut),
    /// The SQL process went away or spoke out of turn.
    Broken(String),
}

impl Proxy {
    /// Serves a client whose tenant its password names (see the module
    /// docs); `minor` and `params` are its StartupMessage's.
    pub(crate) async fn password_login<IO: Io>(
        self: Arc<Self>,
        mut t: Transport<IO>,
        origin: Origin,
        minor: u16,
        params: Vec<(String, String)>,
    ) {
        let mut out = BytesMut::new();
        out.put_u8(b'R');
        out.put_u32(8);
        out.put_u32(3); // AuthenticationCleartextPassword
        if t.send(&mut out).await.is_err() {
            return;
        }
        let Ok(Ok((tag, body))) = tokio::time::timeout(STARTUP_TIMEOUT, t.frame()).await else {
            return;
        };
        let field = body.strip_suffix(&[0]).map(|b| String::from_utf8_lossy(b).into_owned());
        let (b'p', Some(field)) = (tag, field) else {
            let e = ErrorReport::fatal(SqlState::ProtocolViolation, "expected a password message");
            t.fatal(&e).await;
            return;
        };
        let (tenant, password) = route::password_tenant(&field);
        let Some((routing, sql, head)) =
            self.connect_client(&mut t, &origin, minor, params, Some(tenant), None).await
        else {
            return;
        };
        let mut sql = sql.into_io();
        let sent = sql.write_all(&head).await;
        drop(routing);
        if sent.is_err() {
            return crate::sql_process_closed(&mut t).await;
        }
        let mut up = Transport::new(sql);
        match log_in(&mut up, &password).await {
            Upstream::Ok => {}
            Upstream::Refused(mut e) => {
                let _ = t.send(&mut e).await;
                return;
            }
            Upstream::Broken(why) => {
                tracing::warn!(why, "logging in to a SQL process for a client failed");
                return crate::sql_process_closed(&mut t).await;
            }
        }
        // AuthenticationOk and whatever followed it, to the client; what the
        // client sent early, to the SQL process.
        let mut ok = BytesMut::new();
        wire::messages::auth_ok(&mut ok);
        ok.extend_from_slice(&up.rbuf);
        up.rbuf.clear();
        if t.send(&mut ok).await.is_err() || up.send(&mut t.rbuf).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut t.io, &mut up.io).await;
    }
}

/// Logs in to the SQL process on `up` with `password` (trust needs none).
async fn log_in<IO: AsyncRead + AsyncWrite + Unpin>(
    up: &mut Transport<IO>,
    password: &str,
) -> Upstream {
    let mut scram: Option<ScramClient> = None;
    loop {
        let Ok(Ok((tag, body))) = tokio::time::timeout(STARTUP_TIMEOUT, up.frame()).await else {
            return Upstream::Broken("no answer".into());
        };
        let code = body.get(..4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
        let data = body.get(4..).unwrap_or_default();
        let mut reply = BytesMut::new();
        match (tag, code) {
            (b'E', _) => {
                let mut e = BytesMut::new();
                e.put_u8(b'E');
                e.put_u32(body.len() as u32 + 4);
                e.extend_from_slice(&body);
                return Upstream::Refused(e);
            }
            (b'R', Some(0)) => return Upstream::Ok,
            (b'R', Some(10)) => {
                let offered = data.split(|b| *b == 0).any(|m| m == b"SCRAM-SHA-256");
                if !offered {
                    return Upstream::Broken("no SCRAM-SHA-256 on offer".into());
                }
                let (client, first) = ScramClient::start(password);
                scram = Some(client);
                reply.put_u8(b'p');
                reply.put_u32((4 + 14 + 4 + first.len()) as u32);
                reply.put_slice(b"SCRAM-SHA-256\0");
                reply.put_u32(first.len() as u32);
                reply.put_slice(first.as_bytes());
            }
            (b'R', Some(11)) => {
                let Some(client) = scram.as_mut() else {
                    return Upstream::Broken("SCRAM data before SCRAM began".into());
                };
                let answer = client.answer(&String::from_utf8_lossy(data));
                let Ok(fin) = answer else { return Upstream::Broken("bad SCRAM data".into()) };
                reply.put_u8(b'p');
                reply.put_u32(4 + fin.len() as u32);
                reply.put_slice(fin.as_bytes());
            }
            (b'R', Some(12)) => {
                let proven =
                    scram.as_ref().is_some_and(|c| c.verify(&String::from_utf8_lossy(data)));
                if !proven {
                    return Upstream::Broken("the SQL process did not prove the password".into());
                }
                continue;
            }
            _ => return Upstream::Broken(format!("unexpected message type {tag}")),
        }
        if up.send(&mut reply).await.is_err() {
            return Upstream::Broken("the SQL process closed".into());
        }
    }
}
