//! PostgreSQL 15's built-in operators, casts, types and function
//! signatures, as the parser's type resolution reads them: which operator
//! `a >= b` names for the operands' types, which implicit casts exist, each
//! type's category and whether it is the preferred type of it.
//!
//! The data lives in `catalog_data/pg_operator.tsv`, `pg_cast.tsv`,
//! `pg_type_all.tsv` and `pg_proc_sig.tsv`, exported from a real
//! PostgreSQL 15 (functions taking `internal` or `cstring` left out) and
//! parsed once, on first use. The deparser resolves stored expressions
//! against it so that they print as PostgreSQL prints them, and pg_type
//! takes its categories from it.

use std::collections::HashMap;
use std::sync::OnceLock;

const OPERATORS: &str = include_str!("../catalog_data/pg_operator.tsv");
const CASTS: &str = include_str!("../catalog_data/pg_cast.tsv");
const TYPES: &str = include_str!("../catalog_data/pg_type_all.tsv");
const FUNCTIONS: &str = include_str!("../catalog_data/pg_proc_sig.tsv");

/// `unknown`, the type of a string literal before context gives it one.
pub const UNKNOWN: u32 = 705;
/// `text`
pub const TEXT: u32 = 25;
/// `boolean`
pub const BOOL: u32 = 16;
/// `jsonb`
pub const JSONB: u32 = 3802;
/// `"any"`
pub const ANY: u32 = 2276;

/// One operator: `name` taking `left` (0 for a prefix operator) and `right`.
#[derive(Debug, Clone)]
pub struct Oper {
    /// oprleft (0 for a prefix operator)
    pub left: u32,
    /// oprright
    pub right: u32,
    /// oprresult
    pub result: u32,
}

/// One function signature.
#[derive(Debug, Clone)]
pub struct FuncSig {
    /// proargtypes
    pub args: Vec<u32>,
    /// prorettype
    pub result: u32,
    /// provariadic: the element type of a VARIADIC last argument (0: none)
    pub variadic: u32,
    /// pronargdefaults
    pub defaults: usize,
}

/// How a cast is done and where it may apply.
#[derive(Debug, Clone, Copy)]
pub struct Cast {
    /// castcontext: `i` implicit, `a` assignment, `e` explicit only
    pub context: u8,
    /// castmethod: `f` function, `b` binary coercible, `i` I/O
    pub method: u8,
}

/// A type's category, preference and shape.
#[derive(Debug, Clone, Copy)]
pub struct TypeInfo {
    /// typcategory
    pub category: u8,
    /// typispreferred
    pub preferred: bool,
    /// typtype: `b` base, `p` pseudo, `e` enum, `d` domain, `c` composite, `r` range
    pub kind: u8,
    /// typelem for an array type (0 otherwise)
    pub elem: u32,
    /// typarray (0 for none)
    pub array: u32,
}

/// The tables, parsed.
pub struct PgCat {
    opers: HashMap<&'static str, Vec<Oper>>,
    casts: HashMap<(u32, u32), Cast>,
    types: HashMap<u32, TypeInfo>,
    funcs: HashMap<&'static str, Vec<FuncSig>>,
}

/// The data rows of a TSV (its header line skipped), split into fields.
fn rows(tsv: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    tsv.lines().skip(1).filter(|l| !l.is_empty()).map(|l| l.split('\t').collect())
}

fn num(s: &str) -> u32 {
    s.parse().unwrap_or(0)
}

fn byte(s: &str) -> u8 {
    s.bytes().next().unwrap_or(b' ')
}

/// The tables, parsed on first use.
pub fn pgcat() -> &'static PgCat {
    static CAT: OnceLock<PgCat> = OnceLock::new();
    CAT.get_or_init(|| {
        let mut opers: HashMap<&str, Vec<Oper>> = HashMap::new();
        for r in rows(OPERATORS).filter(|r| r.len() >= 6) {
            let o = Oper { left: num(r[3]), right: num(r[4]), result: num(r[5]) };
            opers.entry(r[1]).or_default().push(o);
        }
        let casts = rows(CASTS)
            .filter(|r| r.len() >= 5)
            .map(|r| ((num(r[0]), num(r[1])), Cast { context: byte(r[3]), method: byte(r[4]) }))
            .collect();
        let types = rows(TYPES)
            .filter(|r| r.len() >= 7)
            .map(|r| {
                let t = TypeInfo {
                    category: byte(r[2]),
                    preferred: r[3] == "t",
                    kind: byte(r[4]),
                    elem: num(r[5]),
                    array: num(r[6]),
                };
                (num(r[0]), t)
            })
            .collect();
        let mut funcs: HashMap<&str, Vec<FuncSig>> = HashMap::new();
        for r in rows(FUNCTIONS).filter(|r| r.len() >= 7 && r[2] == "f") {
            let sig = FuncSig {
                args: r[6].split(' ').filter(|a| !a.is_empty()).map(num).collect(),
                result: num(r[4]),
                variadic: num(r[5]),
                defaults: num(r[3]) as usize,
            };
            funcs.entry(r[1]).or_default().push(sig);
        }
        PgCat { opers, casts, types, funcs }
    })
}

impl PgCat {
    /// The operators named `name`: binary ones, or prefix ones.
    pub fn operators(&self, name: &str, prefix: bool) -> impl Iterator<Item = &Oper> {
        let all = self.opers.get(name).map(|v| v.as_slice()).unwrap_or(&[]);
        all.iter().filter(move |o| (o.left == 0) == prefix)
    }

    /// The built-in functions named `name`.
    pub fn functions(&self, name: &str) -> &[FuncSig] {
        self.funcs.get(name).map(|v| v.as_slice()).unwrap_or(&[])
    }

    /// The pg_cast row from `source` to `target`.
    pub fn cast(&self, source: u32, target: u32) -> Option<Cast> {
        self.casts.get(&(source, target)).copied()
    }

    /// A built-in type's category and shape.
    pub fn type_info(&self, oid: u32) -> Option<TypeInfo> {
        self.types.get(&oid).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse() {
        let c = pgcat();
        assert!(c.operators(">=", false).any(|o| o.left == 1700 && o.right == 1700));
        assert!(c.operators("-", true).any(|o| o.right == 23));
        assert_eq!(c.cast(23, 1700).map(|c| c.context), Some(b'i'));
        assert_eq!(c.cast(1043, 25).map(|c| c.method), Some(b'b'));
        let f8 = c.type_info(701).expect("float8");
        assert!(f8.preferred && f8.category == b'N');
        assert!(c.functions("length").iter().any(|f| f.args == [1042]));
    }
}
