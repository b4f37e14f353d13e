//! Decoding of frontend (client to server) messages.
//!
//! Decoding is pure (bytes in, message or error out) so it can be fuzzed
//! without a socket. Every length is checked against the bytes present;
//! nothing is allocated from a length the client claims before the bytes
//! arrive, and malformed input yields a 08P01 protocol violation (or 22021
//! for invalid UTF-8), never a panic.

use bytes::{Buf, Bytes, BytesMut};
use sqlstate::{ErrorReport, SqlState};

use crate::backend::{Format, Oid};

/// Largest message body accepted (PostgreSQL's limit is 1 GB).
pub const MAX_MESSAGE: usize = 1 << 30;

/// Largest startup packet accepted (PostgreSQL uses 10000 bytes).
pub const MAX_STARTUP: usize = 10_000;

/// Protocol version 3.0, the newest this server speaks.
pub const PROTOCOL_3: u32 = 196_608;
/// SSLRequest code.
pub const SSL_REQUEST: u32 = 80_877_103;
/// GSSENCRequest code.
pub const GSS_REQUEST: u32 = 80_877_104;
/// CancelRequest code.
pub const CANCEL_REQUEST: u32 = 80_877_102;

/// The first packet of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Startup {
    /// SSLRequest: answered 'N'.
    Ssl,
    /// GSSENCRequest: answered 'N'.
    Gss,
    /// CancelRequest for (pid, secret).
    Cancel(i32, i32),
    /// StartupMessage for protocol 3.`minor` with its parameters (minor
    /// versions above 0 are answered with NegotiateProtocolVersion).
    Start {
        /// The requested minor protocol version.
        minor: u16,
        /// Parameter name/value pairs in the order sent.
        params: Vec<(String, String)>,
    },
}

/// A frontend message after startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frontend {
    /// 'Q' simple query.
    Query(String),
    /// 'P' Parse: statement name, query, parameter type OIDs.
    Parse(String, String, Vec<Oid>),
    /// 'B' Bind.
    Bind(Bind),
    /// 'D' Describe: true for a statement ('S'), false for a portal ('P').
    Describe(bool, String),
    /// 'E' Execute: portal, row limit (0 = all).
    Execute(String, usize),
    /// 'C' Close: true for a statement, false for a portal.
    Close(bool, String),
    /// 'H' Flush.
    Flush,
    /// 'S' Sync.
    Sync,
    /// 'X' Terminate.
    Terminate,
    /// 'd' CopyData.
    CopyData(Vec<u8>),
    /// 'c' CopyDone.
    CopyDone,
    /// 'f' CopyFail with message.
    CopyFail(String),
    /// 'p' password / SASL response (raw bytes).
    Password(Vec<u8>),
}

/// A Bind message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// Portal name.
    pub portal: String,
    /// Statement name.
    pub statement: String,
    /// Parameter formats as sent (0, 1 or N entries).
    pub param_formats: Vec<Format>,
    /// Parameter values (None = NULL).
    pub params: Vec<Option<Vec<u8>>>,
    /// Result formats as sent (0, 1 or N entries).
    pub result_formats: Vec<Format>,
}

fn violation(msg: impl Into<String>) -> ErrorReport {
    ErrorReport::new(SqlState::ProtocolViolation, msg)
}

/// A cursor over a message body.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ErrorReport> {
        if n > self.b.len() {
            return Err(violation("invalid message format"));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }

    fn u8(&mut self) -> Result<u8, ErrorReport> {
        Ok(self.take(1)?[0])
    }

    fn i16(&mut self) -> Result<i16, ErrorReport> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, ErrorReport> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn count(&mut self) -> Result<usize, ErrorReport> {
        let n = self.i16()?;
        if n < 0 {
            return Err(violation("invalid message format"));
        }
        Ok(n as usize)
    }

    fn cstr(&mut self) -> Result<String, ErrorReport> {
        let Some(nul) = self.b.iter().position(|&c| c == 0) else {
            return Err(violation("invalid string in message"));
        };
        let s = self.take(nul)?;
        self.take(1)?;
        match std::str::from_utf8(s) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(ErrorReport::new(
                SqlState::CharacterNotInRepertoire,
                "invalid byte sequence for encoding \"UTF8\"",
            )),
        }
    }

    fn formats(&mut self) -> Result<Vec<Format>, ErrorReport> {
        let n = self.count()?;
        let mut v = Vec::with_capacity(n.min(self.b.len() / 2));
        for _ in 0..n {
            v.push(match self.i16()? {
                0 => Format::Text,
                1 => Format::Binary,
                f => return Err(violation(format!("unsupported format code: {f}"))),
            });
        }
        Ok(v)
    }

    fn done(&self) -> Result<(), ErrorReport> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(violation("invalid message format"))
        }
    }
}

/// Decodes the body of a startup-phase packet (after its length).
pub fn decode_startup(body: &[u8]) -> Result<Startup, ErrorReport> {
    let mut r = Reader { b: body };
    let code = r.i32()? as u32;
    match code {
        SSL_REQUEST => Ok(Startup::Ssl),
        GSS_REQUEST => Ok(Startup::Gss),
        CANCEL_REQUEST => Ok(Startup::Cancel(r.i32()?, r.i32()?)),
        _ if code >> 16 == 3 => {
            let mut params = Vec::new();
            loop {
                let k = r.cstr()?;
                if k.is_empty() {
                    break;
                }
                let v = r.cstr()?;
                params.push((k, v));
            }
            Ok(Startup::Start { minor: (code & 0xffff) as u16, params })
        }
        // PostgreSQL reports an unknown major version as 0A000, not 08P01.
        other => Err(ErrorReport::fatal(
            SqlState::FeatureNotSupported,
            format!(
                "unsupported frontend protocol {}.{}: server supports 3.0 to 3.0",
                other >> 16,
                other & 0xffff
            ),
        )),
    }
}

/// Writes a StartupMessage for protocol 3.`minor` with `params`, length
/// included (what a client sends; the Strata proxy forwards a rewritten one).
pub fn encode_startup(buf: &mut BytesMut, minor: u16, params: &[(String, String)]) {
    use bytes::BufMut;
    let start = buf.len();
    buf.put_u32(0);
    buf.put_u32(PROTOCOL_3 | u32::from(minor));
    for (k, v) in params {
        buf.put_slice(k.as_bytes());
        buf.put_u8(0);
        buf.put_slice(v.as_bytes());
        buf.put_u8(0);
    }
    buf.put_u8(0);
    let len = (buf.len() - start) as u32;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Cuts one startup-phase packet (length-prefixed, no type byte) from the
/// front of `buf`. Returns None until the whole packet has arrived; a length
/// outside 8..=[`MAX_STARTUP`] is a FATAL 08P01 before any body is read.
pub fn decode_startup_frame(buf: &mut BytesMut) -> Result<Option<Bytes>, ErrorReport> {
    let Some(len) = be_u32(buf, 0) else { return Ok(None) };
    let len = len as usize;
    if !(8..=MAX_STARTUP).contains(&len) {
        return Err(ErrorReport::fatal(
            SqlState::ProtocolViolation,
            "invalid length of startup packet",
        ));
    }
    if buf.len() < len {
        return Ok(None);
    }
    let mut frame = buf.split_to(len);
    frame.advance(4);
    Ok(Some(frame.freeze()))
}

/// Cuts one regular message (type byte, length, body) from the front of
/// `buf`, without copying the body. Returns None until the whole message has
/// arrived; a length below 4 or above [`MAX_MESSAGE`] is a FATAL 08P01,
/// detected from the five header bytes alone.
pub fn decode_frame(buf: &mut BytesMut) -> Result<Option<(u8, Bytes)>, ErrorReport> {
    let Some(len) = frame_len(buf)? else { return Ok(None) };
    if buf.len() < len + 1 {
        return Ok(None);
    }
    let tag = buf[0];
    let mut frame = buf.split_to(len + 1);
    frame.advance(5);
    Ok(Some((tag, frame.freeze())))
}

/// The type byte of the first message in `buf` if all of it has arrived.
/// Used to batch consecutive CopyData messages without waiting for more.
pub fn peek_complete(buf: &[u8]) -> Option<u8> {
    let len = frame_len(buf).ok()??;
    (buf.len() > len).then(|| buf[0])
}

/// The declared length of the message at the front of `buf` (which counts
/// itself but not the type byte), once its header has arrived.
fn frame_len(buf: &[u8]) -> Result<Option<usize>, ErrorReport> {
    let Some(len) = be_u32(buf, 1) else { return Ok(None) };
    let len = len as usize;
    if !(4..=MAX_MESSAGE).contains(&len) {
        return Err(ErrorReport::fatal(
            SqlState::ProtocolViolation,
            format!("invalid message length {len}"),
        ));
    }
    Ok(Some(len))
}

fn be_u32(buf: &[u8], at: usize) -> Option<u32> {
    let b = buf.get(at..at + 4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Frames and decodes the next message in `buf`: the whole decoder in one
/// call, as the fuzz target drives it. Returns None until a whole message
/// has arrived; the message's bytes are consumed even when it fails to
/// decode, so the caller can report the error and go on.
pub fn decode(buf: &mut BytesMut) -> Result<Option<Frontend>, ErrorReport> {
    let Some((tag, body)) = decode_frame(buf)? else { return Ok(None) };
    decode_message(tag, &body).map(Some)
}

/// Decodes one message body of type `tag`.
pub fn decode_message(tag: u8, body: &[u8]) -> Result<Frontend, ErrorReport> {
    let mut r = Reader { b: body };
    let msg = match tag {
        b'Q' => Frontend::Query(r.cstr()?),
        b'P' => {
            let name = r.cstr()?;
            let query = r.cstr()?;
            let n = r.count()?;
            let mut types = Vec::with_capacity(n.min(body.len() / 4));
            for _ in 0..n {
                types.push(r.i32()? as u32);
            }
            Frontend::Parse(name, query, types)
        }
        b'B' => {
            let portal = r.cstr()?;
            let statement = r.cstr()?;
            let param_formats = r.formats()?;
            let n = r.count()?;
            let mut params = Vec::with_capacity(n.min(body.len() / 4));
            for _ in 0..n {
                let len = r.i32()?;
                params.push(if len < 0 { None } else { Some(r.take(len as usize)?.to_vec()) });
            }
            let result_formats = r.formats()?;
            Frontend::Bind(Bind { portal, statement, param_formats, params, result_formats })
        }
        b'D' | b'C' => {
            let kind = r.u8()?;
            let name = r.cstr()?;
            let stmt = match kind {
                b'S' => true,
                b'P' => false,
                _ => {
                    return Err(violation(format!(
                        "invalid {} message subtype {kind}",
                        if tag == b'D' { "DESCRIBE" } else { "CLOSE" }
                    )))
                }
            };
            if tag == b'D' {
                Frontend::Describe(stmt, name)
            } else {
                Frontend::Close(stmt, name)
            }
        }
        b'E' => {
            let portal = r.cstr()?;
            let max = r.i32()?;
            Frontend::Execute(portal, if max <= 0 { 0 } else { max as usize })
        }
        b'H' => Frontend::Flush,
        b'S' => Frontend::Sync,
        b'X' => Frontend::Terminate,
        b'd' => return Ok(Frontend::CopyData(body.to_vec())),
        b'c' => Frontend::CopyDone,
        b'f' => Frontend::CopyFail(r.cstr()?),
        b'p' => return Ok(Frontend::Password(body.to_vec())),
        other => {
            return Err(ErrorReport::fatal(
                SqlState::ProtocolViolation,
                format!("invalid frontend message type {other}"),
            ))
        }
    };
    r.done()?;
    Ok(msg)
}

/// Decodes a SASLInitialResponse body: the chosen mechanism and the
/// client-first message (empty if the client sent length -1).
pub fn decode_sasl_initial(body: &[u8]) -> Result<(String, &[u8]), ErrorReport> {
    let mut r = Reader { b: body };
    let mechanism = r.cstr()?;
    let len = r.i32()?;
    let data = if len < 0 { &[][..] } else { r.take(len as usize)? };
    r.done()?;
    Ok((mechanism, data))
}

/// Expands Bind's parameter format codes (0 entries = all text, 1 = that
/// format for all, N = one each) to one per parameter.
pub fn expand_param_formats(codes: &[Format], n: usize) -> Result<Vec<Format>, ErrorReport> {
    expand(codes, n).ok_or_else(|| {
        violation(format!("bind message has {} parameter formats but {n} parameters", codes.len()))
    })
}

/// Expands Bind's result format codes to one per result column, with the
/// same 0/1/N rule as parameters.
pub fn expand_result_formats(codes: &[Format], columns: usize) -> Result<Vec<Format>, ErrorReport> {
    expand(codes, columns).ok_or_else(|| {
        violation(format!(
            "bind message has {} result formats but query has {columns} columns",
            codes.len()
        ))
    })
}

fn expand(codes: &[Format], n: usize) -> Option<Vec<Format>> {
    match codes {
        [] => Some(vec![Format::Text; n]),
        [one] => Some(vec![*one; n]),
        many if many.len() == n => Some(many.to_vec()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn startup_body(params: &[(&str, &str)]) -> Vec<u8> {
        let mut b = PROTOCOL_3.to_be_bytes().to_vec();
        for (k, v) in params {
            b.extend_from_slice(k.as_bytes());
            b.push(0);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }

    #[test]
    fn startup_variants() {
        assert_eq!(decode_startup(&SSL_REQUEST.to_be_bytes()).ok(), Some(Startup::Ssl));
        let mut c = CANCEL_REQUEST.to_be_bytes().to_vec();
        c.extend_from_slice(&7i32.to_be_bytes());
        c.extend_from_slice(&9i32.to_be_bytes());
        assert_eq!(decode_startup(&c).ok(), Some(Startup::Cancel(7, 9)));
        let s = decode_startup(&startup_body(&[("user", "postgres")])).expect("startup");
        assert_eq!(
            s,
            Startup::Start { minor: 0, params: vec![("user".into(), "postgres".into())] }
        );
        assert!(decode_startup(&[0, 2, 0, 0]).is_err());
        assert!(decode_startup(&startup_body(&[("user", "x")])[..10]).is_err());
    }

    #[test]
    fn bind_message() {
        let mut b = Vec::new();
        b.extend_from_slice(b"p\0s\0");
        b.extend_from_slice(&1i16.to_be_bytes());
        b.extend_from_slice(&1i16.to_be_bytes());
        b.extend_from_slice(&2i16.to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes());
        b.extend_from_slice(&2i32.to_be_bytes());
        b.extend_from_slice(b"hi");
        b.extend_from_slice(&0i16.to_be_bytes());
        let Frontend::Bind(bind) = decode_message(b'B', &b).expect("bind") else {
            panic!("not a bind")
        };
        assert_eq!(bind.params, vec![None, Some(b"hi".to_vec())]);
        assert_eq!(bind.param_formats, vec![Format::Binary]);
        // A parameter length beyond the message is an error, not an allocation.
        let mut bad = b"p\0s\0".to_vec();
        bad.extend_from_slice(&0i16.to_be_bytes());
        bad.extend_from_slice(&1i16.to_be_bytes());
        bad.extend_from_slice(&i32::MAX.to_be_bytes());
        assert!(decode_message(b'B', &bad).is_err());
    }

    #[test]
    fn malformed_messages() {
        assert!(decode_message(b'Q', b"no terminator").is_err());
        assert_eq!(
            decode_message(b'Q', b"\xff\0").expect_err("utf8").code,
            SqlState::CharacterNotInRepertoire
        );
        assert!(decode_message(b'?', b"").is_err());
        assert!(decode_message(b'E', b"p\0").is_err());
        assert!(decode_message(b'S', b"extra").is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(tag in proptest::prelude::any::<u8>(), body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64)) {
            let _ = decode_message(tag, &body);
            let _ = decode_startup(&body);
        }
    }
}
