//! GROUP BY's grouping sets: ROLLUP, CUBE, GROUPING SETS and `()`,
//! expanded into the list of sets the Aggregate node groups by, as
//! PostgreSQL expands them. The clause's items combine as a cross
//! product: `GROUP BY a, ROLLUP (b, c)` is the sets (a, b, c), (a, b) and
//! (a). Inside GROUPING SETS the items' sets are listed one after another;
//! ROLLUP (e1, ..., en) is (e1..en), (e1..en-1), ..., (); CUBE is every
//! subset. A parenthesized list inside them is one unit, and an implicit
//! row `(a, b)` at the top of the clause is its columns.
//!
//! sqlparser reads ROLLUP and CUBE inside GROUPING SETS as calls of
//! functions named so; they are taken as the constructs here, as
//! PostgreSQL's grammar does.

use sqlparser::ast;

use crate::bail;
use crate::bind::{function_args, object_name};
use crate::error::Result;

/// PostgreSQL's limit on the sets one GROUP BY expands to.
const MAX_SETS: usize = 4096;

/// The parser marker `GROUP BY DISTINCT` is read as (the clause's first
/// item; sqlparser has no such quantifier).
pub const GROUP_DISTINCT: &str = "pg_group_distinct";

/// An expanded GROUP BY clause.
#[derive(Debug, Default)]
pub struct GroupBy {
    /// Every expression the clause names, each once (as written), in
    /// order of first appearance.
    pub exprs: Vec<ast::Expr>,
    /// The grouping sets, as sorted positions in `exprs`; None for a plain
    /// GROUP BY (one set of all of `exprs`).
    pub sets: Option<Vec<Vec<usize>>>,
}

/// The expressions named so far while a clause expands.
#[derive(Default)]
struct Named {
    exprs: Vec<ast::Expr>,
    /// Where each expression is in `exprs`.
    index: std::collections::HashMap<ast::Expr, usize>,
}

/// Expands the items of a GROUP BY clause.
pub fn expand(items: &[ast::Expr]) -> Result<GroupBy> {
    let (distinct, items) = match items.split_first() {
        Some((first, rest)) if crate::parse::marker_args(first, GROUP_DISTINCT).is_some() => {
            (true, rest)
        }
        _ => (false, items),
    };
    let mut named = Named::default();
    let mut sets: Vec<Vec<usize>> = vec![Vec::new()];
    for item in items {
        let item_sets = named.item(item)?;
        if sets.len() * item_sets.len() > MAX_SETS {
            too_many()?;
        }
        sets = sets.iter().flat_map(|a| item_sets.iter().map(move |b| union(a, b))).collect();
    }
    if distinct {
        let mut seen = std::collections::HashSet::new();
        sets.retain(|s| seen.insert(s.clone()));
    }
    // One set is a plain GROUP BY of its expressions.
    Ok(match sets.as_slice() {
        [only] => {
            GroupBy { exprs: only.iter().map(|&i| named.exprs[i].clone()).collect(), sets: None }
        }
        _ => GroupBy { exprs: named.exprs, sets: Some(sets) },
    })
}

impl Named {
    /// The sets of one top-level item.
    fn item(&mut self, e: &ast::Expr) -> Result<Vec<Vec<usize>>> {
        Ok(match e {
            ast::Expr::Rollup(units) => self.rollup(units)?,
            ast::Expr::Cube(units) => self.cube(units)?,
            ast::Expr::GroupingSets(list) => {
                let mut sets = Vec::new();
                for unit in list {
                    sets.extend(self.set_item(unit)?);
                    if sets.len() > MAX_SETS {
                        too_many()?;
                    }
                }
                sets
            }
            // An implicit row: its columns, as one set.
            ast::Expr::Tuple(items) => vec![self.unit(items)],
            other => vec![vec![self.position(other)]],
        })
    }

    /// The sets of one item of GROUPING SETS: a parenthesized list is
    /// one set; ROLLUP and CUBE expand.
    fn set_item(&mut self, unit: &[ast::Expr]) -> Result<Vec<Vec<usize>>> {
        if let [ast::Expr::Function(f)] = unit {
            let name = object_name(&f.name).unwrap_or_default();
            let quoted =
                f.name.0.iter().any(|p| p.as_ident().is_some_and(|i| i.quote_style.is_some()));
            if matches!(name.as_str(), "rollup" | "cube") && !quoted {
                let mut units: Vec<Vec<ast::Expr>> = Vec::new();
                for a in function_args(f)? {
                    let Some(a) = a else { bail!(SyntaxError, "syntax error at or near \"*\"") };
                    units.push(match a {
                        ast::Expr::Tuple(items) => items.clone(),
                        other => vec![other.clone()],
                    });
                }
                return if name == "rollup" { self.rollup(&units) } else { self.cube(&units) };
            }
        }
        Ok(vec![self.unit(unit)])
    }

    /// ROLLUP's sets: every prefix of its units, longest first.
    fn rollup(&mut self, units: &[Vec<ast::Expr>]) -> Result<Vec<Vec<usize>>> {
        if units.len() >= MAX_SETS {
            too_many()?;
        }
        let units: Vec<Vec<usize>> = units.iter().map(|u| self.unit(u)).collect();
        Ok((0..=units.len()).rev().map(|n| units[..n].concat()).map(sorted).collect())
    }

    /// CUBE's sets: every subset of its units, the full set first.
    fn cube(&mut self, units: &[Vec<ast::Expr>]) -> Result<Vec<Vec<usize>>> {
        if units.len() > 12 {
            bail!(TooManyColumns, "CUBE is limited to 12 elements");
        }
        let units: Vec<Vec<usize>> = units.iter().map(|u| self.unit(u)).collect();
        let n = units.len();
        Ok((0..1usize << n)
            .rev()
            .map(|mask| {
                let picked = (0..n).filter(|i| mask & (1 << (n - 1 - i)) != 0);
                sorted(picked.flat_map(|i| units[i].clone()).collect())
            })
            .collect())
    }

    /// The positions of a parenthesized list's expressions, as one set.
    fn unit(&mut self, items: &[ast::Expr]) -> Vec<usize> {
        sorted(items.iter().map(|e| self.position(e)).collect())
    }

    /// The position of `e` in `exprs`, added if new.
    fn position(&mut self, e: &ast::Expr) -> usize {
        if let Some(&i) = self.index.get(e) {
            return i;
        }
        self.exprs.push(e.clone());
        self.index.insert(e.clone(), self.exprs.len() - 1);
        self.exprs.len() - 1
    }
}

/// The union of two sets.
fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    sorted(a.iter().chain(b).copied().collect())
}

/// A set in its canonical form: sorted, each position once.
pub(crate) fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

fn too_many() -> Result<()> {
    bail!(StatementTooComplex, "too many grouping sets present (maximum {MAX_SETS})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GROUP BY items of `select 1 from t group by <sql>`, parsed as
    /// a statement is (with the quantifier rewrite).
    fn items(sql: &str) -> Vec<ast::Expr> {
        let mut parsed =
            crate::parse::parse(&format!("select 1 from t group by {sql}")).expect("parses");
        let crate::parse::Stmt::Sql(stmt) = parsed.remove(0).stmt else { panic!("not sql") };
        let ast::Statement::Query(q) = *stmt else { panic!("not a query") };
        let ast::SetExpr::Select(s) = *q.body else { panic!("not a select") };
        let ast::GroupByExpr::Expressions(items, _) = s.group_by else { panic!("no list") };
        items
    }

    fn group_by(sql: &str) -> GroupBy {
        expand(&items(sql)).expect("expands")
    }

    fn sets(sql: &str) -> Vec<Vec<usize>> {
        group_by(sql).sets.expect("grouping sets")
    }

    #[test]
    fn rollup_is_every_prefix_and_cube_every_subset() {
        assert_eq!(sets("rollup (a, b)"), vec![vec![0, 1], vec![0], vec![]]);
        assert_eq!(sets("cube (a, b)"), vec![vec![0, 1], vec![0], vec![1], vec![]]);
        assert_eq!(sets("rollup ((a, b), c)"), vec![vec![0, 1, 2], vec![0, 1], vec![]]);
    }

    #[test]
    fn items_combine_as_a_cross_product() {
        assert_eq!(sets("a, rollup (b)"), vec![vec![0, 1], vec![0]]);
        assert_eq!(
            sets("rollup (a), grouping sets (b, c)"),
            vec![vec![0, 1], vec![0, 2], vec![1], vec![2]]
        );
        assert_eq!(
            sets("grouping sets (a, rollup (a, b))"),
            vec![vec![0], vec![0, 1], vec![0], vec![]]
        );
    }

    #[test]
    fn one_set_is_a_plain_group_by() {
        let g = group_by("grouping sets ((b, a))");
        assert!(g.sets.is_none());
        assert_eq!(g.exprs.len(), 2);
        let g = group_by("()");
        assert!(g.sets.is_none() && g.exprs.is_empty());
        let g = group_by("(a, b), a");
        assert!(g.sets.is_none());
        assert_eq!(g.exprs.len(), 2);
    }

    #[test]
    fn distinct_drops_repeated_sets_and_all_is_the_default() {
        assert_eq!(sets("distinct rollup (a), rollup (a)"), vec![vec![0], vec![]]);
        assert_eq!(sets("all rollup (a), rollup (a)"), vec![vec![0], vec![0], vec![0], vec![]]);
    }

    #[test]
    fn too_many_sets_are_refused() {
        let e = expand(&items("cube (a,b,c,d,e,f,g,h,i,j,k,l), rollup (m)")).expect_err("limit");
        assert_eq!(e.code, sqlstate::SqlState::StatementTooComplex);
        let e = expand(&items("cube (a,b,c,d,e,f,g,h,i,j,k,l,m)")).expect_err("limit");
        assert_eq!(e.code, sqlstate::SqlState::TooManyColumns);
    }
}
