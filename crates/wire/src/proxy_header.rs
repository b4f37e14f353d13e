//! The PROXY protocol v1 header (HAProxy's text form), which tells a SQL
//! process behind the Strata proxy who the client really is.
//!
//! The proxy opens a connection to the SQL process for each client and
//! writes one line before the client's bytes:
//!
//! ```text
//!   PROXY TCP4 <client ip> <proxy ip> <client port> <proxy port>\r\n
//!   PROXY TCP6 ...\r\n
//!   PROXY UNKNOWN\r\n          (the client came over a unix socket)
//! ```
//!
//! The SQL process reads it only on its proxy-facing unix socket (in a
//! directory only the proxy can reach), or on its TCP socket for proxies
//! on other machines after the tenant's proxy token ([`crate::proxy_header::encode_token`]), so
//! a client can never forge it; it decides `local` (trust) and what
//! pg_stat_activity shows as client_addr.
//!
//! For a client the proxy serves over TLS, Strata adds one field of its own
//! at the end of a TCP line: `TLS=<base64>`, the `tls-server-end-point`
//! channel-binding data of the proxy's certificate, so the SQL process can
//! offer SCRAM-SHA-256-PLUS ([`crate::scram`]).

use std::net::SocketAddr;

/// The longest line the format allows (107 bytes plus CRLF), with room for
/// Strata's TLS field (a SHA-512 hash in base64 at most).
pub const MAX_LEN: usize = 108 + 96;

/// A header: the client's origin, and the channel-binding data of the TLS
/// it reached the proxy over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Who the client is.
    pub origin: Origin,
    /// `tls-server-end-point` data, for a TLS client.
    pub tls_binding: Option<Vec<u8>>,
}

/// Who the client is, as the header tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A TCP client at `client`, which reached the proxy at `proxy`.
    Tcp { client: SocketAddr, proxy: SocketAddr },
    /// A client on a unix socket (or one the proxy cannot name).
    Unknown,
}

impl Origin {
    /// Trusted as a local connection: a unix socket or a loopback address.
    pub fn is_local(&self) -> bool {
        match self {
            Origin::Tcp { client, .. } => client.ip().is_loopback(),
            Origin::Unknown => true,
        }
    }

    /// The (client, server) addresses for the session, if TCP.
    pub fn addrs(&self) -> Option<(SocketAddr, SocketAddr)> {
        match self {
            Origin::Tcp { client, proxy } => Some((*client, *proxy)),
            Origin::Unknown => None,
        }
    }
}

/// The header line for `origin`.
pub fn encode(origin: &Origin) -> String {
    match origin {
        Origin::Tcp { client, proxy } => {
            let family = if client.is_ipv4() && proxy.is_ipv4() { "TCP4" } else { "TCP6" };
            format!(
                "PROXY {family} {} {} {} {}\r\n",
                client.ip(),
                proxy.ip(),
                client.port(),
                proxy.port()
            )
        }
        Origin::Unknown => "PROXY UNKNOWN\r\n".to_string(),
    }
}

/// The header line for `origin`, with a TLS client's `binding` data.
pub fn encode_tls(origin: &Origin, binding: &[u8]) -> String {
    use base64::Engine as _;
    let line = encode(origin);
    match origin {
        Origin::Tcp { .. } => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(binding);
            format!("{} TLS={b64}\r\n", line.trim_end())
        }
        Origin::Unknown => line,
    }
}

/// Parses a header line (CRLF included), Strata's TLS field too.
pub fn decode_header(line: &[u8]) -> Result<Header, String> {
    use base64::Engine as _;
    let text = std::str::from_utf8(line).map_err(|_| "PROXY header is not text".to_string())?;
    let Some(text) = text.strip_suffix("\r\n") else {
        return Err("PROXY header does not end in CRLF".into());
    };
    let mut parts: Vec<&str> = text.split(' ').collect();
    let mut tls_binding = None;
    if parts.len() == 7 && parts[1] != "UNKNOWN" {
        let field = parts.pop().unwrap_or_default();
        let b64 = field.strip_prefix("TLS=").ok_or_else(|| format!("bad PROXY field {field:?}"))?;
        let data = base64::engine::general_purpose::STANDARD.decode(b64);
        tls_binding = Some(data.map_err(|_| "bad TLS field in the PROXY header".to_string())?);
    }
    let origin = match parts.as_slice() {
        ["PROXY", "UNKNOWN", ..] => Origin::Unknown,
        ["PROXY", "TCP4" | "TCP6", src, dst, sport, dport] => {
            let addr = |ip: &str, port: &str| -> Result<SocketAddr, String> {
                let ip: std::net::IpAddr = ip.parse().map_err(|_| format!("bad address {ip:?}"))?;
                let port: u16 = port.parse().map_err(|_| format!("bad port {port:?}"))?;
                Ok(SocketAddr::new(ip, port))
            };
            Origin::Tcp { client: addr(src, sport)?, proxy: addr(dst, dport)? }
        }
        _ => return Err(format!("bad PROXY header {text:?}")),
    };
    Ok(Header { origin, tls_binding })
}

/// Reads the header (Strata's TLS field too) from `io` byte by byte, so
/// nothing after it is taken.
pub async fn read_header<IO: tokio::io::AsyncRead + Unpin>(io: &mut IO) -> Result<Header, String> {
    decode_header(&read_line(io, "PROXY header").await?)
}

/// The line a proxy on another machine writes first on a SQL process's
/// TCP socket for proxies (`strata sql --proxy-listen`), before the
/// header: `STRATA-PROXY <token>`, the tenant's proxy token, without which
/// a stranger could write a header that claims a trusted address.
pub fn encode_token(token: &str) -> String {
    format!("STRATA-PROXY {token}\r\n")
}

/// Reads the token line [`encode_token`] writes and returns the token.
pub async fn read_token<IO: tokio::io::AsyncRead + Unpin>(io: &mut IO) -> Result<String, String> {
    let line = read_line(io, "proxy token").await?;
    let text = std::str::from_utf8(&line).ok().and_then(|t| t.strip_suffix("\r\n"));
    match text.and_then(|t| t.strip_prefix("STRATA-PROXY ")) {
        Some(token) => Ok(token.to_string()),
        None => Err("the connection did not start with a proxy token".into()),
    }
}

/// Reads one CRLF-terminated line of at most [`MAX_LEN`] bytes, byte by
/// byte so nothing after it is taken.
async fn read_line<IO: tokio::io::AsyncRead + Unpin>(
    io: &mut IO,
    what: &str,
) -> Result<Vec<u8>, String> {
    use tokio::io::AsyncReadExt;
    let mut line = Vec::with_capacity(MAX_LEN);
    while !line.ends_with(b"\r\n") {
        if line.len() >= MAX_LEN {
            return Err(format!("{what} too long"));
        }
        let b = io.read_u8().await.map_err(|e| format!("reading the {what}: {e}"))?;
        line.push(b);
    }
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(line: &[u8]) -> Result<Origin, String> {
        decode_header(line).map(|h| h.origin)
    }

    #[test]
    fn round_trip() {
        let o = Origin::Tcp {
            client: "10.1.2.3:5555".parse().expect("addr"),
            proxy: "127.0.0.1:5433".parse().expect("addr"),
        };
        assert_eq!(decode(encode(&o).as_bytes()), Ok(o));
        assert!(!o.is_local());
        assert_eq!(decode(b"PROXY UNKNOWN\r\n"), Ok(Origin::Unknown));
        let v6 = Origin::Tcp {
            client: "[::1]:1".parse().expect("addr"),
            proxy: "[::1]:2".parse().expect("addr"),
        };
        assert_eq!(decode(encode(&v6).as_bytes()), Ok(v6));
        assert!(v6.is_local());
    }

    #[test]
    fn the_tls_field_round_trips() {
        let o = Origin::Tcp {
            client: "10.1.2.3:5555".parse().expect("addr"),
            proxy: "127.0.0.1:5433".parse().expect("addr"),
        };
        let line = encode_tls(&o, &[0xAB; 64]);
        assert!(line.len() <= MAX_LEN, "{} bytes", line.len());
        let h = decode_header(line.as_bytes()).expect("decodes");
        assert_eq!(h, Header { origin: o, tls_binding: Some(vec![0xAB; 64]) });
        assert_eq!(decode(line.as_bytes()), Ok(o));
        assert_eq!(decode_header(encode(&o).as_bytes()).expect("plain").tls_binding, None);
        assert!(decode_header(b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 X=1\r\n").is_err());
        assert!(decode_header(b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 TLS=!!\r\n").is_err());
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode(b"PROXY TCP4 1.2.3.4\r\n").is_err());
        assert!(decode(b"GET / HTTP/1.1\r\n").is_err());
        assert!(decode(b"PROXY UNKNOWN").is_err());
        assert!(decode(b"PROXY TCP4 x y 1 2\r\n").is_err());
    }

    #[tokio::test]
    async fn the_token_line_is_read_alone() {
        let mut bytes = format!("{}PROXY UNKNOWN\r\n", encode_token("ab12")).into_bytes();
        bytes.extend_from_slice(b"rest");
        let mut io = &bytes[..];
        assert_eq!(read_token(&mut io).await, Ok("ab12".to_string()));
        assert_eq!(read_header(&mut io).await.map(|h| h.origin), Ok(Origin::Unknown));
        assert_eq!(io, b"rest");
        assert!(read_token(&mut &b"PROXY UNKNOWN\r\n"[..]).await.is_err());
        assert!(read_token(&mut &[b'x'; 400][..]).await.is_err());
        assert!(read_token(&mut &b"STRATA-PROXY ab"[..]).await.is_err());
    }
}
