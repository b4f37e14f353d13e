//! The uuid type: 16 bytes, written as 8-4-4-4-12 lowercase hex digits.
//! Input takes what uuid_in takes: upper or lower case, optional braces, and
//! hyphens after any group of four digits.

use crate::text::TextOut;
use crate::{err, Result};

/// Parses uuid input.
pub fn parse_uuid(s: &str) -> Result<[u8; 16]> {
    let bad = || err!(InvalidTextRepresentation, "invalid input syntax for type uuid: \"{s}\"");
    let body = match s.strip_prefix('{') {
        Some(inner) => inner.strip_suffix('}').ok_or_else(bad)?,
        None => s,
    };
    let b = body.as_bytes();
    let mut out = [0u8; 16];
    let mut i = 0;
    for (n, byte) in out.iter_mut().enumerate() {
        // A hyphen may follow any group of four hex digits (never first or last).
        if n > 0 && n % 2 == 0 && b.get(i) == Some(&b'-') {
            i += 1;
        }
        let hi = b.get(i).and_then(|c| (*c as char).to_digit(16)).ok_or_else(bad)?;
        let lo = b.get(i + 1).and_then(|c| (*c as char).to_digit(16)).ok_or_else(bad)?;
        *byte = (hi << 4 | lo) as u8;
        i += 2;
    }
    if i != b.len() {
        return Err(bad());
    }
    Ok(out)
}

/// Appends the canonical text form.
pub fn write_uuid<O: TextOut + ?Sized>(u: &[u8; 16], out: &mut O) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 36];
    let mut j = 0;
    for (i, x) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            buf[j] = b'-';
            j += 1;
        }
        buf[j] = HEX[(x >> 4) as usize];
        buf[j + 1] = HEX[(x & 15) as usize];
        j += 2;
    }
    out.put(&buf);
}

/// A version 4 (random) UUID from 16 random bytes.
pub fn v4(mut bytes: [u8; 16]) -> [u8; 16] {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        match parse_uuid(s) {
            Ok(u) => {
                let mut out = Vec::new();
                write_uuid(&u, &mut out);
                String::from_utf8(out).expect("ascii")
            }
            Err(e) => format!("{} {}", e.code.code(), e.message),
        }
    }

    #[test]
    fn text_like_postgres() {
        let canon = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        for s in [
            "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(rt(s), canon, "{s}");
        }
        for s in [
            "",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "-a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
            "{a0eebc999c0b4ef8bb6d6bb9bd380a11",
            "g0eebc999c0b4ef8bb6d6bb9bd380a11",
        ] {
            assert!(rt(s).starts_with("22P02"), "{s}");
        }
    }
}
