//! The built-in functions and types as PostgreSQL 15's catalog describes
//! them: pg_proc rows for the functions Strata has (plus the type I/O
//! functions and access method handlers that pg_type and pg_am name), and
//! each type's I/O functions, alignment and storage for pg_type; the SQL
//! keywords (pg_get_keywords, identifier quoting); and, in [`pgcat`], the
//! operators, casts and type categories type resolution reads.
//!
//! The data lives in `catalog_data/*.tsv`, exported from a real PostgreSQL
//! 15 with `COPY ... TO STDOUT` (text format, NULL as the empty string) and
//! parsed once, on first use. pg_proc, pg_language, regproc and the
//! pg_get_function_* functions read it.

use std::collections::HashMap;
use std::sync::OnceLock;

/// PostgreSQL's operators, casts, type categories and function
/// signatures, for type resolution.
pub mod pgcat;

const PROC_TSV: &str = include_str!("catalog_data/pg_proc.tsv");
const KEYWORDS_TSV: &str = include_str!("catalog_data/keywords.tsv");
const TYPE_TSV: &str = include_str!("catalog_data/pg_type.tsv");

/// One pg_proc row. Array-valued columns keep PostgreSQL's text form
/// (`{v}`, `{from_json,key}`); the system table parses them.
#[derive(Debug)]
pub struct Proc {
    /// oid
    pub oid: u32,
    /// proname
    pub name: String,
    /// prokind: f function, a aggregate, w window
    pub kind: String,
    /// proretset
    pub retset: bool,
    /// provolatile: i, s or v
    pub volatile: String,
    /// proisstrict
    pub strict: bool,
    /// pronargs
    pub nargs: i16,
    /// pronargdefaults
    pub nargdefaults: i16,
    /// prorettype
    pub rettype: u32,
    /// proargtypes
    pub argtypes: Vec<u32>,
    /// proallargtypes (text form)
    pub allargtypes: Option<String>,
    /// proargmodes (text form)
    pub argmodes: Option<String>,
    /// proargnames (text form)
    pub argnames: Option<String>,
    /// prosrc
    pub src: String,
    /// pg_get_function_result
    pub result: String,
    /// pg_get_function_arguments
    pub arguments: String,
    /// pg_get_function_identity_arguments
    pub identity_arguments: String,
    /// obj_description(oid, 'pg_proc')
    pub description: Option<String>,
    /// prolang
    pub lang: u32,
    /// proparallel
    pub parallel: String,
    /// prosecdef
    pub secdef: bool,
    /// proconfig: the SET clauses' settings, by name
    pub config: Vec<(String, String)>,
    /// proleakproof
    pub leakproof: bool,
    /// provariadic
    pub variadic: u32,
    /// procost
    pub cost: f32,
    /// prorows
    pub rows: f32,
}

/// pg_type's I/O columns for one type (OIDs of pg_proc rows; 0 for none).
#[derive(Debug)]
pub struct TypeIo {
    /// The type's OID.
    pub oid: u32,
    /// typinput, typoutput, typreceive, typsend, typmodin, typmodout,
    /// typanalyze, typsubscript
    pub funcs: [u32; 8],
    /// typalign
    pub align: String,
    /// typstorage
    pub storage: String,
}

/// The languages of pg_language: the three built-in functions are written
/// in, and plpgsql, which every database has (it comes with the plpgsql
/// extension; Strata does not run it yet). OID, name, procedural, trusted,
/// and the OIDs of the call handler, inline handler and validator.
pub const LANGUAGES: &[(u32, &str, bool, bool, [u32; 3])] = &[
    (12, "internal", false, false, [0, 0, 2246]),
    (13, "c", false, false, [0, 0, 2247]),
    (14, "sql", false, true, [0, 0, 2248]),
    (13563, "plpgsql", true, true, [13560, 13561, 13562]),
];

/// The pg_proc rows, ordered by name and OID, and their positions by OID
/// (pg_type's rows look up eight functions each).
struct ProcTable {
    rows: Vec<Proc>,
    by_oid: HashMap<u32, usize>,
}

fn proc_table() -> &'static ProcTable {
    static TABLE: OnceLock<ProcTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let rows = parse_procs(PROC_TSV);
        let by_oid = rows.iter().enumerate().map(|(i, p)| (p.oid, i)).collect();
        ProcTable { rows, by_oid }
    })
}

/// The pg_proc rows of a data file in `pg_proc.tsv`'s columns.
pub(crate) fn parse_procs(tsv: &'static str) -> Vec<Proc> {
    rows(tsv).map(parse_proc).collect()
}

/// Every pg_proc row, ordered by name and OID.
pub fn procs() -> &'static [Proc] {
    &proc_table().rows
}

/// The pg_proc row with this OID.
pub fn proc_by_oid(oid: u32) -> Option<&'static Proc> {
    let t = proc_table();
    t.by_oid.get(&oid).map(|&i| &t.rows[i])
}

/// One row of pg_get_keywords: word, catcode (`U` unreserved, `C` column
/// name, `T` type or function name, `R` reserved), barelabel, catdesc,
/// baredesc, from `catalog_data/keywords.tsv`.
pub type Keyword = [&'static str; 5];

/// PostgreSQL 15's SQL keywords, in pg_get_keywords' order.
pub fn keywords() -> &'static [Keyword] {
    static WORDS: OnceLock<Vec<Keyword>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let lines = KEYWORDS_TSV.lines().skip(1);
        lines.filter_map(|l| l.split('\t').collect::<Vec<&str>>().try_into().ok()).collect()
    })
}

/// An identifier as PostgreSQL's quote_identifier writes it (quote_ident,
/// regclass, the deparsed SQL): in double quotes unless it is lower case
/// letters, digits and underscores and not a keyword (unreserved keywords
/// excepted).
pub fn quote_identifier(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && keyword_category(name).is_none_or(|c| c == b'U');
    match plain {
        true => name.to_string(),
        false => format!("\"{}\"", name.replace('"', "\"\"")),
    }
}

/// The category code of `word` if it is a keyword (see [`Keyword`]).
pub fn keyword_category(word: &str) -> Option<u8> {
    static CODES: OnceLock<HashMap<&'static str, u8>> = OnceLock::new();
    let codes = CODES.get_or_init(|| {
        keywords().iter().map(|[w, code, ..]| (*w, code.bytes().next().unwrap_or(b'U'))).collect()
    });
    codes.get(word).copied()
}

/// pg_type's I/O columns of the type with this OID.
pub fn type_io(oid: u32) -> Option<&'static TypeIo> {
    static TYPES: OnceLock<Vec<TypeIo>> = OnceLock::new();
    let all = TYPES.get_or_init(|| rows(TYPE_TSV).map(parse_type).collect());
    all.iter().find(|t| t.oid == oid)
}

/// pg_type's typalign and typstorage for a type (int4's, `i` and `p`, for
/// a type the data does not list); pg_attribute copies them per column.
pub fn align_storage(oid: u32) -> (&'static str, &'static str) {
    type_io(oid).map(|io| (io.align.as_str(), io.storage.as_str())).unwrap_or(("i", "p"))
}

/// The data lines of a tsv file (after its header), split into fields as
/// COPY's text format reads them, the empty string being NULL.
fn rows(tsv: &'static str) -> impl Iterator<Item = Vec<Option<String>>> {
    tsv.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| crate::copy::split_text(l, '\t', "").unwrap_or_default())
}

/// Field readers over one row; the data files are fixed and checked by
/// the tests, so a malformed field reads as empty or zero.
struct Fields(Vec<Option<String>>);

impl Fields {
    fn opt(&self, i: usize) -> Option<String> {
        self.0.get(i).cloned().flatten()
    }
    fn text(&self, i: usize) -> String {
        self.opt(i).unwrap_or_default()
    }
    fn num<T: std::str::FromStr + Default>(&self, i: usize) -> T {
        self.opt(i).and_then(|s| s.parse().ok()).unwrap_or_default()
    }
    fn flag(&self, i: usize) -> bool {
        self.opt(i).as_deref() == Some("t")
    }
}

fn parse_proc(f: Vec<Option<String>>) -> Proc {
    let f = Fields(f);
    Proc {
        oid: f.num(0),
        name: f.text(1),
        kind: f.text(2),
        retset: f.flag(3),
        volatile: f.text(4),
        strict: f.flag(5),
        nargs: f.num(6),
        nargdefaults: f.num(7),
        rettype: f.num(8),
        argtypes: f.text(9).split_whitespace().filter_map(|o| o.parse().ok()).collect(),
        allargtypes: f.opt(10),
        argmodes: f.opt(11),
        argnames: f.opt(12),
        src: f.text(13),
        result: f.text(14),
        arguments: f.text(15),
        identity_arguments: f.text(16),
        description: f.opt(17),
        lang: f.num(18),
        parallel: f.text(20),
        secdef: f.flag(21),
        config: Vec::new(),
        leakproof: f.flag(22),
        variadic: f.num(23),
        cost: f.num(24),
        rows: f.num(25),
    }
}

fn parse_type(f: Vec<Option<String>>) -> TypeIo {
    let f = Fields(f);
    TypeIo {
        oid: f.num(0),
        funcs: std::array::from_fn(|i| f.num(2 + i)),
        align: f.text(10),
        storage: f.text(11),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_files_parse() {
        assert!(procs().len() > 400);
        let abs = procs().iter().filter(|p| p.name == "abs").count();
        assert_eq!(abs, 6);
        let concat = procs().iter().find(|p| p.name == "concat").expect("concat");
        assert_eq!(concat.arguments, "VARIADIC \"any\"");
        assert_eq!(concat.allargtypes.as_deref(), Some("{2276}"));
        assert_eq!(concat.variadic, 2276);
        assert!(procs().iter().all(|p| p.oid != 0 && !p.name.is_empty() && p.lang != 0));
        assert_eq!(proc_by_oid(750).map(|p| p.name.as_str()), Some("array_in"));
        let int4 = type_io(23).expect("int4");
        assert_eq!(int4.funcs[0], 42);
        assert_eq!((int4.align.as_str(), int4.storage.as_str()), ("i", "p"));
        // Every function pg_type names has a row.
        for &oid in sqltypes::SCALAR_TYPE_OIDS.iter().chain(&[2249, 2287, 2278]) {
            let io = type_io(oid).unwrap_or_else(|| panic!("no pg_type data for {oid}"));
            for f in io.funcs.iter().filter(|&&f| f != 0) {
                assert!(proc_by_oid(*f).is_some(), "type {oid}: no pg_proc row {f}");
            }
        }
    }
}
