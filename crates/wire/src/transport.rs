//! [`Transport`](crate::transport::Transport): one client socket with its reusable read buffer.
//!
//! Reads go into a single `BytesMut` that is reused for the life of the
//! connection; frames are cut from its front without copying (see
//! [`crate::codec::decode_frame`]). The buffer grows only as bytes arrive,
//! a few KiB at a time, so a client that claims a 1 GiB message makes us
//! allocate only what it actually sends.

use bytes::{Bytes, BytesMut};
use sqlstate::{ErrorReport, Severity};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::codec;
use crate::messages as msg;

/// How much free space to make before each read.
const READ_RESERVE: usize = 8 << 10;

/// Why a connection ended early (for logs; the socket is gone either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// The client closed the socket, possibly in the middle of a message.
    Eof,
    /// A FATAL error was sent to the client.
    Fatal,
    /// Reading or writing the socket failed.
    Io,
    /// The session moved to another process, which holds the socket now.
    Moved,
}

/// A client socket and its read buffer.
pub struct Transport<IO> {
    /// The socket.
    pub io: IO,
    /// Bytes read but not yet consumed as frames.
    pub rbuf: BytesMut,
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Transport<IO> {
    /// Wraps a freshly accepted socket.
    pub fn new(io: IO) -> Transport<IO> {
        Transport { io, rbuf: BytesMut::with_capacity(READ_RESERVE) }
    }

    /// Reads more bytes into the buffer; Err(Eof) when the client closed.
    pub async fn fill(&mut self) -> Result<(), Closed> {
        self.rbuf.reserve(READ_RESERVE);
        match self.io.read_buf(&mut self.rbuf).await {
            Ok(0) => Err(Closed::Eof),
            Ok(_) => Ok(()),
            Err(_) => Err(Closed::Io),
        }
    }

    /// The next startup-phase packet body. A bad length is answered with a
    /// FATAL error before the body is read.
    pub async fn startup_frame(&mut self) -> Result<Bytes, Closed> {
        loop {
            match codec::decode_startup_frame(&mut self.rbuf) {
                Ok(Some(body)) => return Ok(body),
                Ok(None) => self.fill().await?,
                Err(e) => return Err(self.fatal(&e).await),
            }
        }
    }

    /// The next regular message as (type, body).
    pub async fn frame(&mut self) -> Result<(u8, Bytes), Closed> {
        loop {
            if let Some(f) = self.buffered_frame().await? {
                return Ok(f);
            }
            self.fill().await?;
        }
    }

    /// A message already complete in the buffer, if any. A bad length is
    /// answered with a FATAL error.
    pub async fn buffered_frame(&mut self) -> Result<Option<(u8, Bytes)>, Closed> {
        match codec::decode_frame(&mut self.rbuf) {
            Ok(f) => Ok(f),
            Err(e) => Err(self.fatal(&e).await),
        }
    }

    /// Writes out `buf` and empties it (keeping its capacity for reuse).
    pub async fn send(&mut self, buf: &mut BytesMut) -> Result<(), Closed> {
        if buf.is_empty() {
            return Ok(());
        }
        self.io.write_all(buf).await.map_err(|_| Closed::Io)?;
        buf.clear();
        Ok(())
    }

    /// Sends `e` as a FATAL ErrorResponse after whatever `pending` holds,
    /// and returns the reason the caller closes with.
    pub async fn fatal_after(&mut self, pending: &mut BytesMut, e: &ErrorReport) -> Closed {
        let e = ErrorReport { severity: Severity::Fatal, ..e.clone() };
        msg::error(pending, &e);
        tracing::debug!(error = %e, "closing connection");
        let _ = self.send(pending).await;
        let _ = self.io.flush().await;
        let _ = self.io.shutdown().await;
        Closed::Fatal
    }

    /// Sends `e` as a FATAL ErrorResponse; see [`Transport::fatal_after`].
    pub async fn fatal(&mut self, e: &ErrorReport) -> Closed {
        self.fatal_after(&mut BytesMut::new(), e).await
    }
}
