//! TLS on a server's own TCP listener (`strata sql --tls`: a SQL process
//! that serves clients, or a proxy, on another machine directly).
//!
//! Before the startup phase proper, [`accept`](crate::tls::accept) reads the first startup
//! packet itself: an SSLRequest is answered 'S' and the TLS handshake
//! follows (the client's StartupMessage then comes inside TLS); a
//! GSSENCRequest is answered 'N' and the next packet read; anything else
//! is handed back in front of the stream for [`crate::startup`] to read, so
//! a client that does not ask for TLS is served in clear, as PostgreSQL
//! with `ssl = on` does. Exactly the packet is read, never more: bytes a
//! client sends after its SSLRequest before the handshake would otherwise
//! be taken as if they had come encrypted (CVE-2021-23214).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::server::TlsStream;

use crate::codec::{GSS_REQUEST, SSL_REQUEST};
use crate::handoff::{Prefixed, Socket};

/// How long a client may take to ask for TLS and finish the handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// A server's TLS: the configuration, and its certificate's
/// `tls-server-end-point` channel-binding data (for SCRAM-SHA-256-PLUS).
#[derive(Clone)]
pub struct ServerTls {
    /// For the handshakes.
    pub config: Arc<ServerConfig>,
    /// The `tls-server-end-point` data of the certificate presented.
    pub end_point: Arc<[u8]>,
}

/// A client's stream after [`accept`].
pub enum Accepted<IO> {
    /// It asked for TLS: the stream inside it.
    Tls(Box<TlsStream<IO>>),
    /// It did not: the stream, with the packet read here in front.
    Plain(Prefixed<IO>),
}

/// Reads the client's first startup packets (see the module docs). Err:
/// the client left, stalled, or failed the handshake.
pub async fn accept<IO>(mut io: IO, tls: &ServerTls) -> std::io::Result<Accepted<IO>>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let first = async {
        loop {
            let mut head = [0u8; 8];
            // A startup packet is at least 8 bytes: length and code.
            io.read_exact(&mut head).await?;
            let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            let code = u32::from_be_bytes([head[4], head[5], head[6], head[7]]);
            match (len, code) {
                (8, SSL_REQUEST) => {
                    io.write_all(b"S").await?;
                    return Ok::<_, std::io::Error>(None);
                }
                (8, GSS_REQUEST) => io.write_all(b"N").await?,
                _ => return Ok(Some(head.to_vec())),
            }
        }
    };
    let timed_out = || std::io::Error::new(std::io::ErrorKind::TimedOut, "no startup packet");
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, first).await.map_err(|_| timed_out())?? {
        Some(read) => Ok(Accepted::Plain(Prefixed::new(read, io))),
        None => {
            let handshake = tokio_rustls::TlsAcceptor::from(tls.config.clone()).accept(io);
            let stream = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake)
                .await
                .map_err(|_| timed_out())??;
            Ok(Accepted::Tls(Box::new(stream)))
        }
    }
}

/// A TLS session cannot be handed to another process (no migration).
impl<IO: AsyncRead + AsyncWrite + Unpin + Send> Socket for Box<TlsStream<IO>> {}
