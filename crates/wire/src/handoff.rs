//! Handing a client's socket from the Strata proxy to a SQL process on the
//! same machine, so the proxy leaves the data path.
//!
//! The proxy reads the client's startup packet, picks the tenant and
//! connects to that tenant's SQL process on its proxy-facing unix socket,
//! as when it forwards. Then, instead of copying bytes both ways for the
//! life of the session, it writes what the SQL process must read first
//! (the PROXY header, the rewritten StartupMessage and any client bytes it
//! already holds) with the client's file descriptor attached (SCM_RIGHTS),
//! and closes its side. The SQL process reads that prefix, then talks to
//! the client directly over the descriptor it was given.
//!
//! [`accept`](crate::handoff::accept) serves both kinds of connection the SQL process gets from
//! the proxy: the first read shows whether a descriptor came with it. A
//! forwarded connection (across machines, or with `--forward`) goes on as
//! the stream itself. Either way the caller gets one stream that yields the
//! prefix first ([`Prefixed`](crate::handoff::Prefixed)), so the PROXY header and the startup are
//! read the same way.
//!
//! A SQL process hands a client on the same way when it moves the session
//! to another process of its tenant ([`crate::migrate`]); the stream the
//! descriptor came over is kept, because that sender waits for an answer
//! on it.

use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use nix::sys::socket::{
    getsockname, recvmsg, sendmsg, AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags,
    SockaddrLike, SockaddrStorage,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, Interest, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

/// The most that may come ahead of a handed-off socket: from the proxy the
/// PROXY header and a StartupMessage (limited to 10 kB by the codec) and
/// bytes the client sent early; from a SQL process moving a session, the
/// session's state ([`crate::migrate`]).
pub const MAX_PREFIX: usize = 16 << 20;

/// Sends `client` (its descriptor) and `prefix` to a SQL process over
/// `to`, then shuts `to` down. The caller drops its copy of the client
/// socket afterwards; the SQL process holds the other.
pub async fn send(to: &mut UnixStream, client: BorrowedFd<'_>, prefix: &[u8]) -> io::Result<()> {
    let fds = [client.as_raw_fd()];
    let sent = loop {
        to.writable().await?;
        let r = to.try_io(Interest::WRITABLE, || {
            let cmsg = [ControlMessage::ScmRights(&fds)];
            sendmsg::<()>(to.as_raw_fd(), &[IoSlice::new(prefix)], &cmsg, MsgFlags::empty(), None)
                .map_err(io::Error::from)
        });
        match r {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    // The descriptor went with the first bytes; the rest is plain data.
    to.write_all(&prefix[sent..]).await?;
    to.shutdown().await
}

/// A client connection as the SQL process received it from the proxy.
pub enum Accepted {
    /// The proxy forwards the client's bytes over this stream.
    Forwarded(Prefixed<UnixStream>),
    /// A TCP client was handed over, over the second stream.
    Tcp(Prefixed<TcpStream>, UnixStream),
    /// A unix-socket client was handed over, over the second stream.
    Unix(Prefixed<UnixStream>, UnixStream),
}

/// Reads the start of a connection from the proxy and, if it brought a
/// client's descriptor, the whole prefix (to the proxy's shutdown).
pub async fn accept(mut from: UnixStream) -> io::Result<Accepted> {
    let mut buf = vec![0u8; 16 * 1024];
    let (n, fd) = loop {
        from.readable().await?;
        let r = from.try_io(Interest::READABLE, || recv(from.as_raw_fd(), &mut buf));
        match r {
            Ok(got) => break got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    buf.truncate(n);
    let Some(fd) = fd else {
        return Ok(Accepted::Forwarded(Prefixed::new(buf, from)));
    };
    let mut rest = Vec::new();
    (&mut from).take((MAX_PREFIX - buf.len()) as u64 + 1).read_to_end(&mut rest).await?;
    buf.extend_from_slice(&rest);
    if buf.len() > MAX_PREFIX {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "handed-off prefix too long"));
    }
    let family = getsockname::<SockaddrStorage>(fd.as_raw_fd()).map_err(io::Error::from)?.family();
    if family == Some(AddressFamily::Unix) {
        let s = std::os::unix::net::UnixStream::from(fd);
        s.set_nonblocking(true)?;
        Ok(Accepted::Unix(Prefixed::new(buf, UnixStream::from_std(s)?), from))
    } else {
        let s = std::net::TcpStream::from(fd);
        s.set_nonblocking(true)?;
        let s = TcpStream::from_std(s)?;
        let _ = s.set_nodelay(true);
        Ok(Accepted::Tcp(Prefixed::new(buf, s), from))
    }
}

/// One recvmsg: the bytes read and the descriptor that came with them.
pub fn recv(sock: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<OwnedFd>)> {
    let (n, fds) = recv_fds(sock, buf)?;
    // Extra descriptors (a confused sender) are closed by their OwnedFd.
    Ok((n, fds.into_iter().next()))
}

/// One recvmsg on `sock` (close-on-exec set on what it brings): the bytes
/// read and the descriptors that came with them, at most two.
pub fn recv_fds(sock: RawFd, buf: &mut [u8]) -> io::Result<(usize, Vec<OwnedFd>)> {
    let mut space = nix::cmsg_space!([RawFd; 2]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(sock, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)
        .map_err(io::Error::from)?;
    let mut fds = Vec::new();
    for c in msg.cmsgs().map_err(io::Error::from)? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            // SAFETY: the kernel just installed these descriptors in this
            // process for us; nothing else owns them.
            fds.extend(raw.into_iter().map(|r| unsafe { OwnedFd::from_raw_fd(r) }));
        }
    }
    if msg.flags.contains(MsgFlags::MSG_CTRUNC) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "truncated control message"));
    }
    Ok((msg.bytes, fds))
}

/// A stream that yields `prefix` before its own bytes; writes go straight
/// to the stream.
pub struct Prefixed<IO> {
    prefix: Vec<u8>,
    at: usize,
    io: IO,
}

impl<IO> Prefixed<IO> {
    /// `io`, read after `prefix`.
    pub fn new(prefix: Vec<u8>, io: IO) -> Prefixed<IO> {
        Prefixed { prefix, at: 0, io }
    }
}

impl<IO> Prefixed<IO> {
    /// The prefix bytes not yet read.
    pub fn unread(&self) -> &[u8] {
        &self.prefix[self.at..]
    }

    /// Takes the prefix bytes not yet read: reads go straight to the
    /// stream after this.
    pub fn take_unread(&mut self) -> Vec<u8> {
        let mut p = std::mem::take(&mut self.prefix);
        p.drain(..self.at);
        self.at = 0;
        p
    }
}

impl<IO: AsFd> AsFd for Prefixed<IO> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.io.as_fd()
    }
}

/// A client connection's stream, and whether it can be handed to another
/// process (a live session migration, [`crate::migrate`]).
pub trait Socket: AsyncRead + AsyncWrite + Unpin + Send {
    /// The socket's descriptor and the bytes the stream holds that it has
    /// not yielded yet; None if it cannot be handed over. The default:
    /// cannot.
    fn handle(&self) -> Option<(BorrowedFd<'_>, &[u8])> {
        None
    }
}

impl Socket for TcpStream {
    fn handle(&self) -> Option<(BorrowedFd<'_>, &[u8])> {
        Some((self.as_fd(), &[]))
    }
}

impl Socket for UnixStream {
    fn handle(&self) -> Option<(BorrowedFd<'_>, &[u8])> {
        Some((self.as_fd(), &[]))
    }
}

impl<IO: AsFd + AsyncRead + AsyncWrite + Unpin + Send> Socket for Prefixed<IO> {
    fn handle(&self) -> Option<(BorrowedFd<'_>, &[u8])> {
        Some((self.io.as_fd(), self.unread()))
    }
}

impl Socket for tokio::io::DuplexStream {}

impl<IO: AsyncRead + Unpin> AsyncRead for Prefixed<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        if me.at < me.prefix.len() {
            let n = (me.prefix.len() - me.at).min(buf.remaining());
            buf.put_slice(&me.prefix[me.at..me.at + n]);
            me.at += n;
            if me.at == me.prefix.len() {
                me.prefix = Vec::new();
                me.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut me.io).poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Prefixed<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A descriptor and its prefix cross a socket pair; the receiver reads
    /// the prefix, then the handed-over socket's own bytes.
    #[tokio::test]
    async fn a_socket_and_its_prefix_cross_over() {
        let (mut proxy_side, sql_side) = UnixStream::pair().expect("pair");
        let (client, mut client_peer) = UnixStream::pair().expect("pair");
        send(&mut proxy_side, client.as_fd(), b"PROXY UNKNOWN\r\nhello").await.expect("send");
        drop(client);
        let Accepted::Unix(mut got, _) = accept(sql_side).await.expect("accept") else {
            panic!("expected a handed-over unix socket");
        };
        client_peer.write_all(b" world").await.expect("client writes");
        let mut buf = [0u8; 26];
        got.read_exact(&mut buf).await.expect("read");
        assert_eq!(&buf, b"PROXY UNKNOWN\r\nhello world");
        got.write_all(b"back").await.expect("reply");
        let mut back = [0u8; 4];
        client_peer.read_exact(&mut back).await.expect("client reads");
        assert_eq!(&back, b"back");
    }

    /// Without a descriptor the connection is the forwarded stream itself.
    #[tokio::test]
    async fn a_plain_connection_is_forwarded() {
        let (mut proxy_side, sql_side) = UnixStream::pair().expect("pair");
        proxy_side.write_all(b"PROXY UNKNOWN\r\n").await.expect("write");
        let Accepted::Forwarded(mut got) = accept(sql_side).await.expect("accept") else {
            panic!("expected a forwarded stream");
        };
        proxy_side.write_all(b"more").await.expect("write");
        let mut buf = [0u8; 19];
        got.read_exact(&mut buf).await.expect("read");
        assert_eq!(&buf, b"PROXY UNKNOWN\r\nmore");
    }
}
