//! Hashes and binary encodings: md5, sha224, sha256, sha384, sha512,
//! encode and decode (hex, base64, escape), convert_from and convert_to
//! (UTF8, the only server encoding), as PostgreSQL 15 has them.

use base64::Engine as _;
use sha2::Digest as _;
use sqltypes::{DataType, Value};

use crate::error::Result;
use crate::{bail, err};

/// One function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestFunc {
    /// md5(text | bytea): the digest as 32 hex digits.
    Md5,
    /// sha224/sha256/sha384/sha512(bytea): the digest as bytea.
    Sha(u16),
    /// encode(bytea, format)
    Encode,
    /// decode(text, format)
    Decode,
    /// convert_from(bytea, encoding): text from bytes in that encoding
    ConvertFrom,
    /// convert_to(text, encoding): the text's bytes in that encoding
    ConvertTo,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (DigestFunc, DataType, Vec<Option<DataType>>);

/// The function `name` names with these arguments; None if `name` is not
/// one of them.
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType::{Bytea, Text};
    let bytes = |t: &DataType| matches!(t, Bytea | DataType::Unknown);
    let text = |t: &DataType| {
        matches!(t, Text | DataType::Varchar(_) | DataType::Char(_) | DataType::Unknown)
    };
    let r = match (name, args) {
        ("md5", [t]) if *t == Bytea => (DigestFunc::Md5, Text, vec![Some(Bytea)]),
        ("md5", [t]) if text(t) => (DigestFunc::Md5, Text, vec![Some(Text)]),
        ("sha224" | "sha256" | "sha384" | "sha512", [t]) if bytes(t) => {
            let bits = name[3..].parse().unwrap_or(256);
            (DigestFunc::Sha(bits), Bytea, vec![Some(Bytea)])
        }
        ("encode", [t, _]) if bytes(t) => (DigestFunc::Encode, Text, vec![Some(Bytea), Some(Text)]),
        ("decode", [t, f]) if text(t) && text(f) => {
            (DigestFunc::Decode, Bytea, vec![Some(Text), Some(Text)])
        }
        ("convert_from", [t, f]) if bytes(t) && text(f) => {
            (DigestFunc::ConvertFrom, Text, vec![Some(Bytea), Some(Text)])
        }
        ("convert_to", [t, f]) if text(t) && text(f) => {
            (DigestFunc::ConvertTo, Bytea, vec![Some(Text), Some(Text)])
        }
        (
            "md5" | "sha224" | "sha256" | "sha384" | "sha512" | "encode" | "decode"
            | "convert_from" | "convert_to",
            _,
        ) => return Some(Err(super::no_such_function(name, args))),
        _ => return None,
    };
    Some(Ok(r))
}

/// Evaluates `f` (strict).
pub fn call(f: DigestFunc, args: Vec<Value>) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let data = |v: &Value| -> Vec<u8> {
        match v {
            Value::Bytea(b) => b.clone(),
            Value::Text(s) => s.as_bytes().to_vec(),
            _ => Vec::new(),
        }
    };
    let text = |v: &Value| match v {
        Value::Text(s) => s.clone(),
        _ => String::new(),
    };
    Ok(match f {
        DigestFunc::Md5 => Value::Text(hex(&md5::Md5::digest(data(&args[0])))),
        DigestFunc::Sha(bits) => {
            let d = data(&args[0]);
            Value::Bytea(match bits {
                224 => sha2::Sha224::digest(&d).to_vec(),
                384 => sha2::Sha384::digest(&d).to_vec(),
                512 => sha2::Sha512::digest(&d).to_vec(),
                _ => sha2::Sha256::digest(&d).to_vec(),
            })
        }
        DigestFunc::Encode => Value::Text(encode(&data(&args[0]), &text(&args[1]))?),
        DigestFunc::Decode => Value::Bytea(decode(&text(&args[0]), &text(&args[1]))?),
        DigestFunc::ConvertFrom => {
            utf8(&text(&args[1]), "source")?;
            Value::Text(sqltypes::binary::validate_utf8(&data(&args[0]))?.to_string())
        }
        DigestFunc::ConvertTo => {
            utf8(&text(&args[1]), "destination")?;
            Value::Bytea(data(&args[0]))
        }
    })
}

/// Checks an encoding name: UTF8 (however spelled) is the one Strata
/// converts; PostgreSQL's other encodings are not supported.
fn utf8(name: &str, which: &str) -> Result<()> {
    let key: String =
        name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_lowercase();
    match key.as_str() {
        "utf8" | "unicode" => Ok(()),
        "sqlascii" | "latin1" | "latin2" | "latin9" | "win1252" | "win1251" | "euckr" | "eucjp"
        | "sjis" | "big5" | "gbk" | "koi8r" | "iso88591" => {
            bail!(FeatureNotSupported, "conversion from or to encoding \"{name}\" is not supported")
        }
        _ => bail!(InvalidParameterValue, "invalid {which} encoding name \"{name}\""),
    }
}

/// Lower-case hex digits.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    sqltypes::text::put_hex_digits(bytes, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

fn unrecognized(format: &str) -> crate::error::Error {
    err!(InvalidParameterValue, "unrecognized encoding: \"{format}\"")
}

/// encode(): base64 in lines of 76 characters, as PostgreSQL writes it.
fn encode(data: &[u8], format: &str) -> Result<String> {
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => hex(data),
        "base64" => {
            let flat = base64::engine::general_purpose::STANDARD.encode(data);
            let lines: Vec<&str> = flat
                .as_bytes()
                .chunks(76)
                .map(|c| std::str::from_utf8(c).unwrap_or_default())
                .collect();
            lines.join("\n")
        }
        "escape" => {
            let mut out = String::with_capacity(data.len());
            for &b in data {
                match b {
                    b'\\' => out.push_str("\\\\"),
                    0 | 0x80..=0xff => out.push_str(&format!("\\{b:03o}")),
                    _ => out.push(b as char),
                }
            }
            out
        }
        _ => return Err(unrecognized(format)),
    })
}

/// decode(): whitespace between hex digit pairs and in base64 is skipped.
fn decode(s: &str, format: &str) -> Result<Vec<u8>> {
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => sqltypes::text::parse_hex(s)?,
        "base64" => {
            let compact: Vec<u8> = s.bytes().filter(|c| !blank(c)).collect();
            if let Some(&c) = compact
                .iter()
                .find(|&&c| !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=')))
            {
                bail!(
                    InvalidParameterValue,
                    "invalid symbol \"{}\" found while decoding base64 sequence",
                    c as char
                );
            }
            match base64::engine::general_purpose::STANDARD.decode(&compact) {
                Ok(b) => b,
                Err(_) => {
                    return Err(err!(InvalidParameterValue, "invalid base64 end sequence")
                        .with_hint(
                        "Input data is missing padding, is truncated, or is otherwise corrupted.",
                    ))
                }
            }
        }
        "escape" => sqltypes::text::parse_bytea_escape(s)?,
        _ => return Err(unrecognized(format)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        let md5 = call(DigestFunc::Md5, vec![Value::Text("abc".into())]).expect("md5");
        assert_eq!(md5, Value::Text("900150983cd24fb0d6963f7d28e17f72".into()));
        let Value::Bytea(d) =
            call(DigestFunc::Sha(256), vec![Value::Bytea(b"abc".to_vec())]).expect("sha256")
        else {
            panic!("bytea")
        };
        assert_eq!(hex(&d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn encodings_round_trip() {
        let data: Vec<u8> = (0..=255).collect();
        for format in ["hex", "base64", "escape"] {
            let text = encode(&data, format).expect("encodes");
            assert_eq!(decode(&text, format).expect("decodes"), data, "{format}");
        }
        assert!(encode(&data, "base64").expect("encodes").lines().all(|l| l.len() <= 76));
        assert_eq!(decode("de ad\nbe ef", "hex").expect("hex"), [0xde, 0xad, 0xbe, 0xef]);
        assert!(decode("abc", "hex").is_err());
        assert!(decode("zz", "hex").is_err());
        assert!(decode("a*", "base64").is_err());
        assert!(decode("\\9", "escape").is_err());
        assert!(encode(b"", "rot13").is_err());
    }
}
