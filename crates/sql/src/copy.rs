//! COPY data formats: PostgreSQL's text format and CSV, in both directions.
//!
//! Incoming data arrives in arbitrary chunks (CopyData messages need not
//! align with lines), so [`CopyParser`] buffers a partial line between calls.
//! Text format: fields separated by the delimiter, `\N` for NULL, backslash
//! escapes (`\t`, `\n`, `\\`, octal, `\x` hex), an optional `\.` end marker.
//! CSV: quoted fields with doubled quotes, an unquoted empty field is NULL.
//! Binary: the `PGCOPY` signature, flags and header extension, then tuples
//! of length-prefixed values in each type's binary form, then a -1 trailer.

use bytes::BytesMut;
use sqltypes::{binary, text, DataType, Value};

use crate::error::Result;
use crate::parse::{CopyFormat, CopyStmt};
use crate::{bail, err};

/// Incremental parser for COPY FROM STDIN data.
#[derive(Debug)]
pub struct CopyParser {
    opts: CopyStmt,
    types: Vec<DataType>,
    names: Vec<String>,
    pending: Vec<u8>,
    line_no: u64,
    header_skipped: bool,
    done: bool,
    /// The session's time zone, for timestamptz fields without an offset.
    zone: std::sync::Arc<sqltypes::Zone>,
    /// The domains of the columns that have one, whose constraints each
    /// field meets as it is read (so errors name the line).
    domains: Vec<Option<std::sync::Arc<crate::catalog::Domain>>>,
}

impl CopyParser {
    /// A parser for rows of `types` (the target columns, in COPY order, named
    /// `names` for error messages).
    pub fn new(opts: CopyStmt, types: Vec<DataType>, names: Vec<String>) -> CopyParser {
        CopyParser {
            opts,
            types,
            names,
            pending: Vec::new(),
            line_no: 0,
            header_skipped: false,
            done: false,
            zone: sqltypes::Zone::utc(),
            domains: Vec::new(),
        }
    }

    /// Checks each column's fields against its domain, if it has one.
    pub fn with_domains(
        mut self,
        domains: Vec<Option<std::sync::Arc<crate::catalog::Domain>>>,
    ) -> CopyParser {
        self.domains = domains;
        self
    }

    /// Reads timestamptz fields without an offset in `zone`.
    pub fn in_zone(mut self, zone: std::sync::Arc<sqltypes::Zone>) -> CopyParser {
        self.zone = zone;
        self
    }

    /// Feeds a chunk; appends every complete row to `out`.
    pub fn feed(&mut self, data: &[u8], out: &mut Vec<Vec<Value>>) -> Result<()> {
        self.pending.extend_from_slice(data);
        if self.opts.format == CopyFormat::Binary {
            return self.feed_binary(out);
        }
        let mut start = 0;
        let mut in_quotes = false;
        let mut i = 0;
        let buf = std::mem::take(&mut self.pending);
        while i < buf.len() {
            let c = buf[i];
            if self.opts.format == CopyFormat::Csv && c == b'"' {
                in_quotes = !in_quotes;
            } else if c == b'\n' && !in_quotes {
                let mut line = &buf[start..i];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                self.line(line, out)?;
                start = i + 1;
            }
            i += 1;
        }
        self.pending = buf[start..].to_vec();
        Ok(())
    }

    /// Finishes: a final line without a newline is still a row.
    pub fn finish(&mut self, out: &mut Vec<Vec<Value>>) -> Result<()> {
        if self.opts.format == CopyFormat::Binary {
            if !self.pending.is_empty() && !self.done {
                bail!(BadCopyFileFormat, "unexpected EOF in COPY data");
            }
            if !self.header_skipped {
                bail!(BadCopyFileFormat, "COPY file signature not recognized");
            }
            return Ok(());
        }
        let rest = std::mem::take(&mut self.pending);
        if !rest.is_empty() {
            self.line(&rest, out)?;
        }
        Ok(())
    }

    /// Consumes the header and every complete tuple in `pending`.
    fn feed_binary(&mut self, out: &mut Vec<Vec<Value>>) -> Result<()> {
        let buf = std::mem::take(&mut self.pending);
        let mut pos = 0;
        if !self.header_skipped {
            // Signature, flags, header extension length and extension.
            if buf.len() < BINARY_SIGNATURE.len() + 8 {
                self.pending = buf;
                return Ok(());
            }
            if !buf.starts_with(BINARY_SIGNATURE) {
                bail!(BadCopyFileFormat, "COPY file signature not recognized");
            }
            let at = BINARY_SIGNATURE.len();
            let flags = u32::from_be_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
            if flags & (1 << 16) != 0 {
                bail!(BadCopyFileFormat, "COPY file has OIDs, which are not supported");
            }
            if flags & 0xffff_0000 & !(1 << 16) != 0 {
                bail!(BadCopyFileFormat, "unrecognized critical flags in COPY file header");
            }
            let ext = u32::from_be_bytes(buf[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
            if buf.len() < at + 8 + ext {
                self.pending = buf;
                return Ok(());
            }
            pos = at + 8 + ext;
            self.header_skipped = true;
        }
        while !self.done {
            match self.binary_tuple(&buf[pos..])? {
                Some((used, row)) => {
                    pos += used;
                    if let Some(row) = row {
                        out.push(row);
                    }
                }
                None => break,
            }
        }
        if self.done {
            pos = buf.len(); // anything after the trailer is ignored
        }
        self.pending = buf[pos..].to_vec();
        Ok(())
    }

    /// Decodes one tuple from the start of `b`: (bytes used, the row, or
    /// None for the trailer), or None if `b` holds no complete tuple yet.
    #[allow(clippy::type_complexity)]
    fn binary_tuple(&mut self, b: &[u8]) -> Result<Option<(usize, Option<Vec<Value>>)>> {
        if b.len() < 2 {
            return Ok(None);
        }
        let n = i16::from_be_bytes([b[0], b[1]]);
        if n == -1 {
            self.done = true;
            return Ok(Some((2, None)));
        }
        self.line_no += 1;
        if n as usize != self.types.len() || n < 0 {
            return Err(self.binary_context(err!(
                BadCopyFileFormat,
                "row field count is {n}, expected {}",
                self.types.len()
            )));
        }
        let mut pos = 2;
        let mut row = Vec::with_capacity(self.types.len());
        for (i, ty) in self.types.iter().enumerate() {
            if b.len() < pos + 4 {
                return Ok(None);
            }
            let len = i32::from_be_bytes(b[pos..pos + 4].try_into().expect("4 bytes"));
            pos += 4;
            if len == -1 {
                row.push(Value::Null);
                continue;
            }
            if len < 0 {
                return Err(self.binary_context(err!(BadCopyFileFormat, "invalid field size")));
            }
            let len = len as usize;
            if b.len() < pos + len {
                return Ok(None);
            }
            let v = binary::decode_binary(ty, &b[pos..pos + len]).map_err(|e| {
                // A fixed-width value cut short fails as PostgreSQL's
                // message reader does (too long is 22P03, as decoded).
                let short = fixed_width(ty).is_some_and(|w| len < w);
                let e = if short {
                    err!(ProtocolViolation, "insufficient data left in message")
                } else {
                    e
                };
                let mut e = self.binary_context(e);
                let name = self.names.get(i).map(String::as_str).unwrap_or("?");
                e.context =
                    Some(format!("COPY {}, line {}, column {name}", self.opts.table, self.line_no));
                e
            })?;
            row.push(v);
            pos += len;
        }
        Ok(Some((pos, Some(row))))
    }

    fn binary_context(&self, mut e: crate::error::Error) -> crate::error::Error {
        e.context = Some(format!("COPY {}, line {}", self.opts.table, self.line_no));
        e
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<Vec<Value>>) -> Result<()> {
        self.line_no += 1;
        if self.done {
            return Ok(());
        }
        if line == b"\\." {
            self.done = true;
            return Ok(());
        }
        if self.opts.header && !self.header_skipped {
            self.header_skipped = true;
            return Ok(());
        }
        let line = match std::str::from_utf8(line) {
            Ok(l) => l,
            Err(_) => {
                bail!(CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
            }
        };
        let context = |e: crate::error::Error, col: Option<(&str, &str)>| {
            let mut e = e;
            e.context = Some(match col {
                Some((name, v)) => format!(
                    "COPY {}, line {}, column {name}: \"{v}\"",
                    self.opts.table, self.line_no
                ),
                None => format!("COPY {}, line {}: \"{line}\"", self.opts.table, self.line_no),
            });
            e
        };
        let fields = match self.opts.format {
            CopyFormat::Csv => split_csv(line, self.opts.delimiter, &self.opts.null),
            _ => split_text(line, self.opts.delimiter, &self.opts.null),
        }
        .map_err(|e| context(e, None))?;
        if fields.len() != self.types.len() {
            let e = if fields.len() < self.types.len() {
                err!(
                    BadCopyFileFormat,
                    "missing data for column \"{}\"",
                    self.names.get(fields.len()).map(String::as_str).unwrap_or("?")
                )
            } else {
                err!(BadCopyFileFormat, "extra data after last expected column")
            };
            return Err(context(e, None));
        }
        let mut row = Vec::with_capacity(fields.len());
        for (i, (f, ty)) in fields.into_iter().zip(&self.types).enumerate() {
            let name = self.names.get(i).map(String::as_str).unwrap_or("?");
            let v = match &f {
                None => Value::Null,
                Some(s) => text::parse_text_in(ty, s, &self.zone)
                    .map_err(|e| context(e, Some((name, s))))?,
            };
            if let Some(Some(d)) = self.domains.get(i) {
                d.check(&v).map_err(|e| match &f {
                    Some(s) => context(e, Some((name, s))),
                    None => crate::error::Error {
                        context: Some(format!(
                            "COPY {}, line {}, column {name}: null input",
                            self.opts.table, self.line_no
                        )),
                        ..e
                    },
                })?;
            }
            row.push(v);
        }
        out.push(row);
        Ok(())
    }
}

pub(crate) fn split_text(line: &str, delim: char, null: &str) -> Result<Vec<Option<String>>> {
    let mut fields = Vec::new();
    for raw in line.split(delim) {
        if raw == null {
            fields.push(None);
            continue;
        }
        if !raw.contains('\\') {
            fields.push(Some(raw.to_string()));
            continue;
        }
        let mut s = String::with_capacity(raw.len());
        let mut bytes: Vec<u8> = Vec::new();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '\\' {
                s.push(c);
                continue;
            }
            match chars.next() {
                Some('b') => s.push('\u{8}'),
                Some('f') => s.push('\u{c}'),
                Some('n') => s.push('\n'),
                Some('r') => s.push('\r'),
                Some('t') => s.push('\t'),
                Some('v') => s.push('\u{b}'),
                Some('x') => {
                    let mut v = 0u32;
                    for _ in 0..2 {
                        match chars.peek().and_then(|c| c.to_digit(16)) {
                            Some(d) => {
                                v = v * 16 + d;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    bytes.clear();
                    bytes.push(v as u8);
                    s.push_str(&String::from_utf8_lossy(&bytes));
                }
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match chars.peek().and_then(|c| c.to_digit(8)) {
                            Some(d) => {
                                v = v * 8 + d;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                }
                Some(other) => s.push(other),
                None => {}
            }
        }
        fields.push(Some(s));
    }
    Ok(fields)
}

fn split_csv(line: &str, delim: char, null: &str) -> Result<Vec<Option<String>>> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut was_quoted = false;
    let mut chars = line.chars().peekable();
    loop {
        match chars.next() {
            Some('"') if quoted => {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                }
            }
            Some('"') => {
                quoted = true;
                was_quoted = true;
            }
            Some(c) if c == delim && !quoted => {
                fields.push(csv_field(std::mem::take(&mut cur), was_quoted, null));
                was_quoted = false;
            }
            Some(c) => cur.push(c),
            None => {
                if quoted {
                    bail!(BadCopyFileFormat, "unterminated CSV quoted field");
                }
                fields.push(csv_field(cur, was_quoted, null));
                return Ok(fields);
            }
        }
    }
}

fn csv_field(s: String, quoted: bool, null: &str) -> Option<String> {
    if !quoted && s == null {
        None
    } else {
        Some(s)
    }
}

/// The length of a fixed-width type's binary form.
fn fixed_width(ty: &DataType) -> Option<usize> {
    Some(match ty {
        DataType::Bool => 1,
        DataType::Int2 => 2,
        DataType::Int4 | DataType::Date => 4,
        DataType::Int8 | DataType::Float8 | DataType::Timestamp | DataType::TimestampTz => 8,
        _ => return None,
    })
}

/// The first bytes of binary COPY data.
const BINARY_SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";

/// The header of binary COPY TO output: signature, no flags, no extension.
pub fn binary_header() -> Vec<u8> {
    let mut h = BINARY_SIGNATURE.to_vec();
    h.extend_from_slice(&0u32.to_be_bytes());
    h.extend_from_slice(&0u32.to_be_bytes());
    h
}

/// The trailer of binary COPY TO output.
pub const BINARY_TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// Formats one row for COPY TO STDOUT (newline included for text and CSV),
/// timestamptz shown in `zone`.
pub fn format_row(row: &[Value], opts: &CopyStmt, zone: &sqltypes::Zone, out: &mut Vec<u8>) {
    if opts.format == CopyFormat::Binary {
        out.extend_from_slice(&(row.len() as i16).to_be_bytes());
        let mut b = BytesMut::new();
        for v in row {
            if v.is_null() {
                out.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            b.clear();
            binary::write_binary(v, &mut b);
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(&b);
        }
        return;
    }
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            let mut b = [0u8; 4];
            out.extend_from_slice(opts.delimiter.encode_utf8(&mut b).as_bytes());
        }
        if v.is_null() {
            out.extend_from_slice(opts.null.as_bytes());
            continue;
        }
        let mut s = Vec::new();
        text::write_value_in(v, zone, &mut s);
        match opts.format {
            CopyFormat::Text => {
                for &b in &s {
                    match b {
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        b'\n' => out.extend_from_slice(b"\\n"),
                        b'\r' => out.extend_from_slice(b"\\r"),
                        b'\t' => out.extend_from_slice(b"\\t"),
                        _ if b as char == opts.delimiter => {
                            out.push(b'\\');
                            out.push(b);
                        }
                        _ => out.push(b),
                    }
                }
            }
            CopyFormat::Csv => {
                let needs = s.is_empty() && opts.null.is_empty()
                    || s.iter().any(|&b| {
                        b == b'"' || b == b'\n' || b == b'\r' || b as char == opts.delimiter
                    });
                if needs {
                    out.push(b'"');
                    for &b in &s {
                        if b == b'"' {
                            out.push(b'"');
                        }
                        out.push(b);
                    }
                    out.push(b'"');
                } else {
                    out.extend_from_slice(&s);
                }
            }
            CopyFormat::Binary => unreachable!("handled above"),
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(format: CopyFormat) -> CopyStmt {
        let csv = format == CopyFormat::Csv;
        CopyStmt {
            query: None,
            table: crate::catalog::ObjName::bare("t"),
            columns: vec![],
            from: true,
            format,
            delimiter: if csv { ',' } else { '\t' },
            null: if csv { String::new() } else { "\\N".into() },
            header: false,
        }
    }

    #[test]
    fn binary_round_trip_fed_byte_by_byte() {
        let o = opts(CopyFormat::Binary);
        let rows = vec![
            vec![Value::Int4(7), Value::Text("seven".into())],
            vec![Value::Null, Value::Text(String::new())],
        ];
        let mut data = binary_header();
        for r in &rows {
            format_row(r, &o, sqltypes::Zone::utc_ref(), &mut data);
        }
        data.extend_from_slice(&BINARY_TRAILER);
        let mut p = CopyParser::new(o, vec![DataType::Int4, DataType::Text], vec![]);
        let mut got = Vec::new();
        for b in &data {
            p.feed(std::slice::from_ref(b), &mut got).expect("feed");
        }
        p.finish(&mut got).expect("finish");
        assert_eq!(got, rows);
    }

    #[test]
    fn binary_rejects_truncation_and_bad_signatures() {
        let types = vec![DataType::Int4];
        let mut p = CopyParser::new(opts(CopyFormat::Binary), types.clone(), vec![]);
        let mut out = Vec::new();
        assert!(p.feed(b"PGCOPY\nXXXXXXXXXXXXXXXX", &mut out).is_err());
        let mut p = CopyParser::new(opts(CopyFormat::Binary), types, vec![]);
        let mut data = binary_header();
        data.extend_from_slice(&[0, 1, 0, 0, 0, 4, 0]);
        p.feed(&data, &mut out).expect("header and partial tuple");
        let e = p.finish(&mut out).expect_err("truncated tuple");
        assert_eq!(e.code, sqlstate::SqlState::BadCopyFileFormat);
        assert!(out.is_empty());
    }

    #[test]
    fn text_split_and_escapes() {
        let f = split_text("1\t\\N\ta\\tb\t", '\t', "\\N").expect("ok");
        assert_eq!(f, vec![Some("1".into()), None, Some("a\tb".into()), Some("".into())]);
    }

    #[test]
    fn csv_quotes() {
        let f = split_csv("1,,\"a,\"\"b\",\"\"", ',', "").expect("ok");
        assert_eq!(f, vec![Some("1".into()), None, Some("a,\"b".into()), Some("".into())]);
    }

    #[test]
    fn chunked_feed() {
        let mut p = CopyParser::new(
            opts(CopyFormat::Text),
            vec![DataType::Int4, DataType::Text],
            vec!["a".into(), "b".into()],
        );
        let mut out = Vec::new();
        p.feed(b"1\tab", &mut out).expect("ok");
        assert!(out.is_empty());
        p.feed(b"c\n2\t\\N\n\\.\n", &mut out).expect("ok");
        p.finish(&mut out).expect("ok");
        assert_eq!(
            out,
            vec![
                vec![Value::Int4(1), Value::Text("abc".into())],
                vec![Value::Int4(2), Value::Null]
            ]
        );
    }

    #[test]
    fn wrong_field_count() {
        let mut p = CopyParser::new(
            opts(CopyFormat::Text),
            vec![DataType::Int4, DataType::Text],
            vec!["a".into(), "b".into()],
        );
        let mut out = Vec::new();
        let e = p.feed(b"1\n", &mut out).expect_err("short line");
        assert_eq!(e.code, sqlstate::SqlState::BadCopyFileFormat);
    }
}
