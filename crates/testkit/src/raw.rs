//! A minimal PostgreSQL v3 protocol client over a blocking `TcpStream`, for
//! tests that need exact control of the bytes on the wire: cancel requests,
//! malformed messages, portal row limits. It panics on unexpected failures
//! (it is test code), and every read has a timeout.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long a raw read waits before the test fails.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A raw protocol connection logged in as `postgres` to database `postgres`.
pub struct RawClient {
    /// The socket; tests may write arbitrary bytes to it.
    pub stream: TcpStream,
    /// BackendKeyData (pid, secret) received at startup, for CancelRequest.
    pub key: (i32, i32),
}

/// The startup parameters of a plain login: `postgres`/`postgres`.
const DEFAULT_LOGIN: [(&str, &str); 2] = [("user", "postgres"), ("database", "postgres")];

/// Builds a StartupMessage (protocol 3.0) for `postgres`/`postgres`.
pub(crate) fn startup_message() -> Vec<u8> {
    startup_message_with(&DEFAULT_LOGIN)
}

/// Builds a StartupMessage (protocol 3.0) with `params`.
pub(crate) fn startup_message_with(params: &[(&str, &str)]) -> Vec<u8> {
    let mut body = 196608u32.to_be_bytes().to_vec();
    for (k, v) in params {
        body.extend_from_slice(k.as_bytes());
        body.push(0);
        body.extend_from_slice(v.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut msg = (body.len() as u32 + 4).to_be_bytes().to_vec();
    msg.extend_from_slice(&body);
    msg
}

/// Reads one backend message (type, body), or an I/O error.
pub(crate) fn read_message(stream: &mut TcpStream) -> std::io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    stream.read_exact(&mut head)?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if !(4..=(64 << 20)).contains(&len) {
        return Err(std::io::Error::other(format!("bad message length {len}")));
    }
    let mut body = vec![0u8; len - 4];
    stream.read_exact(&mut body)?;
    Ok((head[0], body))
}

/// The SQLSTATE (`C` field) of an ErrorResponse body.
pub(crate) fn error_code(body: &[u8]) -> Option<String> {
    body.split(|&b| b == 0)
        .find(|f| f.first() == Some(&b'C'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
}

/// A NotificationResponse body as (pid, channel, payload).
fn notification(body: &[u8]) -> (i32, String, String) {
    let pid = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
    let mut parts = body[4..].split(|&b| b == 0).map(|p| String::from_utf8_lossy(p).into_owned());
    let channel = parts.next().unwrap_or_default();
    (pid, channel, parts.next().unwrap_or_default())
}

impl RawClient {
    /// Connects and completes startup as `postgres` (trust auth).
    pub fn connect(port: u16) -> RawClient {
        RawClient::connect_with_params(port, &DEFAULT_LOGIN)
    }

    /// Connects to 127.0.0.1:`port` with the given startup parameters
    /// (e.g. `options` naming a tenant) and completes the trusted login;
    /// panics on an ErrorResponse.
    pub fn connect_with_params(port: u16, params: &[(&str, &str)]) -> RawClient {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(READ_TIMEOUT)).expect("set read timeout");
        stream.write_all(&startup_message_with(params)).expect("startup");
        let mut c = RawClient { stream, key: (0, 0) };
        loop {
            let (tag, body) = c.read_message();
            if tag == b'K' && body.len() == 8 {
                c.key = (
                    i32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                    i32::from_be_bytes([body[4], body[5], body[6], body[7]]),
                );
            }
            if tag == b'Z' {
                return c;
            }
            assert_ne!(tag, b'E', "startup {params:?} failed: {}", String::from_utf8_lossy(&body));
        }
    }

    /// Sends one message with a correct length header.
    pub fn send(&mut self, tag: u8, body: &[u8]) {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        self.stream.write_all(&m).expect("send");
    }

    /// The pid the server sent in BackendKeyData.
    pub fn pid(&self) -> i32 {
        self.key.0
    }

    /// Sends a simple Query.
    pub fn query(&mut self, sql: &str) {
        let mut b = sql.as_bytes().to_vec();
        b.push(0);
        self.send(b'Q', &b);
    }

    /// Reads one message (type, body); panics on timeout or close.
    pub fn read_message(&mut self) -> (u8, Vec<u8>) {
        read_message(&mut self.stream).expect("reading a backend message")
    }

    /// Reads until ReadyForQuery; returns the SQLSTATEs of any errors seen.
    pub fn until_ready(&mut self) -> Vec<String> {
        let mut codes = Vec::new();
        loop {
            let (tag, body) = self.read_message();
            if tag == b'E' {
                codes.extend(error_code(&body));
            }
            if tag == b'Z' {
                return codes;
            }
        }
    }

    /// Reads until ReadyForQuery like [`RawClient::until_ready`], but returns
    /// `Err` instead of panicking if the server closes the connection (or
    /// goes quiet past the read timeout): for inputs where a clean close is
    /// an acceptable answer.
    pub fn try_until_ready(&mut self) -> std::io::Result<Vec<String>> {
        let mut codes = Vec::new();
        loop {
            let (tag, body) = read_message(&mut self.stream)?;
            if tag == b'E' {
                codes.extend(error_code(&body));
            }
            if tag == b'Z' {
                return Ok(codes);
            }
        }
    }

    /// Reads until ReadyForQuery; returns the SQLSTATEs of any errors and
    /// the NotificationResponses seen, as (pid, channel, payload).
    pub fn until_ready_notified(&mut self) -> (Vec<String>, Vec<(i32, String, String)>) {
        let (mut codes, mut notes) = (Vec::new(), Vec::new());
        loop {
            let (tag, body) = self.read_message();
            match tag {
                b'E' => codes.extend(error_code(&body)),
                b'A' => notes.push(notification(&body)),
                b'Z' => return (codes, notes),
                _ => {}
            }
        }
    }

    /// Reads until the server closes the connection; returns the
    /// SQLSTATEs of the errors seen before (a FATAL one, usually). Panics
    /// if ReadyForQuery comes first.
    pub fn until_closed(&mut self) -> Vec<String> {
        let mut codes = Vec::new();
        while let Ok((tag, body)) = read_message(&mut self.stream) {
            assert_ne!(tag, b'Z', "the connection stayed open; errors so far: {codes:?}");
            if tag == b'E' {
                codes.extend(error_code(&body));
            }
        }
        codes
    }

    /// Waits, without sending anything, for the next message, which must
    /// be a NotificationResponse: (pid, channel, payload).
    pub fn next_notification(&mut self) -> (i32, String, String) {
        let (tag, body) = self.read_message();
        assert_eq!(tag, b'A', "expected a notification: {}", String::from_utf8_lossy(&body));
        notification(&body)
    }

    /// Sends a CancelRequest for this client's session on a new connection.
    pub fn cancel(&self, port: u16) {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let mut m = 16u32.to_be_bytes().to_vec();
        m.extend_from_slice(&80877102u32.to_be_bytes());
        m.extend_from_slice(&self.key.0.to_be_bytes());
        m.extend_from_slice(&self.key.1.to_be_bytes());
        c.write_all(&m).expect("cancel");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_message_has_its_length_first() {
        let m = startup_message();
        assert_eq!(u32::from_be_bytes([m[0], m[1], m[2], m[3]]) as usize, m.len());
        assert_eq!(&m[4..8], &196608u32.to_be_bytes());
        assert_eq!(m.last(), Some(&0));
    }

    #[test]
    fn error_code_finds_the_c_field() {
        let body = b"SERROR\0VERROR\0C42P01\0Mrelation \"x\" does not exist\0\0";
        assert_eq!(error_code(body).as_deref(), Some("42P01"));
        assert_eq!(error_code(b"Mno code\0\0"), None);
    }
}
