//! Encoding of backend (server to client) messages.
//!
//! Every function appends one complete message to a buffer; the connection
//! flushes the buffer at ReadyForQuery, Flush, or when it grows large.

use bytes::{BufMut, BytesMut};
use sqlstate::ErrorReport;

use crate::backend::{FieldDesc, Format, Oid, TxnStatus};

/// Starts a message of type `tag`; returns the offset of its length field.
fn begin(buf: &mut BytesMut, tag: u8) -> usize {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_u32(0);
    at
}

/// Patches the length of the message started at `at`.
fn end(buf: &mut BytesMut, at: usize) {
    let len = (buf.len() - at) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

fn cstr(buf: &mut BytesMut, s: &str) {
    // A NUL inside would end the string early on the client; drop it.
    for b in s.bytes().filter(|&b| b != 0) {
        buf.put_u8(b);
    }
    buf.put_u8(0);
}

/// AuthenticationOk.
pub fn auth_ok(buf: &mut BytesMut) {
    let at = begin(buf, b'R');
    buf.put_i32(0);
    end(buf, at);
}

/// AuthenticationSASL offering SCRAM-SHA-256.
pub fn auth_sasl(buf: &mut BytesMut, mechanisms: &[&str]) {
    let at = begin(buf, b'R');
    buf.put_i32(10);
    for m in mechanisms {
        cstr(buf, m);
    }
    buf.put_u8(0);
    end(buf, at);
}

/// AuthenticationSASLContinue (11) or AuthenticationSASLFinal (12).
pub fn auth_sasl_data(buf: &mut BytesMut, code: i32, data: &[u8]) {
    let at = begin(buf, b'R');
    buf.put_i32(code);
    buf.put_slice(data);
    end(buf, at);
}

/// ParameterStatus.
pub fn parameter_status(buf: &mut BytesMut, name: &str, value: &str) {
    let at = begin(buf, b'S');
    cstr(buf, name);
    cstr(buf, value);
    end(buf, at);
}

/// BackendKeyData.
pub fn backend_key(buf: &mut BytesMut, pid: i32, secret: i32) {
    let at = begin(buf, b'K');
    buf.put_i32(pid);
    buf.put_i32(secret);
    end(buf, at);
}

/// NotificationResponse.
pub fn notification(buf: &mut BytesMut, n: &crate::backend::Notification) {
    let at = begin(buf, b'A');
    buf.put_i32(n.pid);
    cstr(buf, &n.channel);
    cstr(buf, &n.payload);
    end(buf, at);
}

/// ReadyForQuery.
pub fn ready(buf: &mut BytesMut, status: TxnStatus) {
    let at = begin(buf, b'Z');
    buf.put_u8(match status {
        TxnStatus::Idle => b'I',
        TxnStatus::InBlock => b'T',
        TxnStatus::Failed => b'E',
    });
    end(buf, at);
}

/// RowDescription.
pub fn row_description(buf: &mut BytesMut, fields: &[FieldDesc]) {
    let at = begin(buf, b'T');
    buf.put_i16(fields.len() as i16);
    for f in fields {
        cstr(buf, &f.name);
        buf.put_u32(f.table_oid);
        buf.put_i16(f.column_id);
        buf.put_u32(f.type_oid);
        buf.put_i16(f.type_size);
        buf.put_i32(f.type_modifier);
        buf.put_i16(match f.format {
            Format::Text => 0,
            Format::Binary => 1,
        });
    }
    end(buf, at);
}

/// ParameterDescription.
pub fn parameter_description(buf: &mut BytesMut, types: &[Oid]) {
    let at = begin(buf, b't');
    buf.put_i16(types.len() as i16);
    for t in types {
        buf.put_u32(*t);
    }
    end(buf, at);
}

/// A message with no body: ParseComplete '1', BindComplete '2',
/// CloseComplete '3', NoData 'n', PortalSuspended 's', EmptyQuery 'I',
/// CopyDone 'c'.
pub fn empty(buf: &mut BytesMut, tag: u8) {
    let at = begin(buf, tag);
    end(buf, at);
}

/// CommandComplete.
pub fn command_complete(buf: &mut BytesMut, tag: &str) {
    let at = begin(buf, b'C');
    cstr(buf, tag);
    end(buf, at);
}

/// CopyInResponse: the overall format and the same format for each column
/// (PostgreSQL's COPY uses one format for all columns).
pub fn copy_in_response(buf: &mut BytesMut, format: Format, columns: usize) {
    let code = match format {
        Format::Text => 0,
        Format::Binary => 1,
    };
    let at = begin(buf, b'G');
    buf.put_u8(code as u8);
    buf.put_i16(columns as i16);
    for _ in 0..columns {
        buf.put_i16(code);
    }
    end(buf, at);
}

/// NegotiateProtocolVersion: the client asked for a newer 3.x minor version
/// or for `_pq_.` protocol options; we answer with 3.0 and list the options
/// we did not recognize, and the connection continues at 3.0.
pub fn negotiate_protocol_version(buf: &mut BytesMut, newest: u32, unrecognized: &[String]) {
    let at = begin(buf, b'v');
    buf.put_u32(newest);
    buf.put_i32(unrecognized.len() as i32);
    for o in unrecognized {
        cstr(buf, o);
    }
    end(buf, at);
}

/// ErrorResponse (ERROR/FATAL) or NoticeResponse (WARNING/NOTICE).
pub fn error(buf: &mut BytesMut, e: &ErrorReport) {
    let tag = match e.severity {
        sqlstate::Severity::Error | sqlstate::Severity::Fatal => b'E',
        _ => b'N',
    };
    let at = begin(buf, tag);
    let sev = e.severity.as_str();
    buf.put_u8(b'S');
    cstr(buf, sev);
    buf.put_u8(b'V');
    cstr(buf, sev);
    buf.put_u8(b'C');
    cstr(buf, e.code.code());
    buf.put_u8(b'M');
    cstr(buf, &e.message);
    let opt = [
        (b'D', e.detail.as_deref()),
        (b'H', e.hint.as_deref()),
        (b's', e.schema.as_deref()),
        (b't', e.table.as_deref()),
        (b'c', e.column.as_deref()),
        (b'n', e.constraint.as_deref()),
        (b'W', e.context.as_deref()),
    ];
    if let Some(p) = e.position {
        buf.put_u8(b'P');
        cstr(buf, &p.to_string());
    }
    if let Some(p) = e.internal_position {
        buf.put_u8(b'p');
        cstr(buf, &p.to_string());
    }
    if let Some(q) = &e.internal_query {
        buf.put_u8(b'q');
        cstr(buf, q);
    }
    for (code, v) in opt {
        if let Some(v) = v {
            buf.put_u8(code);
            cstr(buf, v);
        }
    }
    buf.put_u8(0);
    end(buf, at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlstate::SqlState;

    #[test]
    fn error_response_fields() {
        let mut b = BytesMut::new();
        let e = ErrorReport::new(SqlState::UniqueViolation, "dup")
            .with_detail("d")
            .with_hint("h")
            .with_position(7);
        error(&mut b, &e);
        assert_eq!(b[0], b'E');
        assert_eq!(u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize, b.len() - 1);
        let body = &b[5..];
        assert_eq!(body, b"SERROR\0VERROR\0C23505\0Mdup\0P7\0Dd\0Hh\0\0".as_slice());
    }

    #[test]
    fn notice_uses_n_and_strips_nul() {
        let mut b = BytesMut::new();
        error(&mut b, &ErrorReport::warning(SqlState::Warning, "a\0b"));
        assert_eq!(b[0], b'N');
        assert!(b.windows(4).any(|w| w == b"Mab\0"));
    }

    #[test]
    fn fixed_messages() {
        let mut b = BytesMut::new();
        ready(&mut b, TxnStatus::InBlock);
        empty(&mut b, b'1');
        backend_key(&mut b, 1, 2);
        assert_eq!(&b[..], b"Z\0\0\0\x05T1\0\0\0\x04K\0\0\0\x0c\0\0\0\x01\0\0\0\x02".as_slice());
    }
}
