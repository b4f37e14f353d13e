//! Prints an analysed expression ([`super::analyze::Node`]) as PostgreSQL
//! 15's ruleutils.c prints the same tree: every operator, AND, OR, NOT and
//! test in its own parentheses, or (pretty) parentheses only where
//! precedence needs them; implicit coercions shown on operator and
//! function arguments (`(qty)::numeric`) but not at the top; constants
//! labelled with their type unless the literal reads back as that type;
//! CASE laid out on lines of its own.

use super::analyze::{Coercion, Node, Syntax, Ty};
use crate::builtins::pgcat::{BOOL, UNKNOWN};
use crate::builtins::quote_identifier;
use crate::catalog::Catalog;

/// Spaces a CASE indents its WHEN and ELSE lines by (PRETTYINDENT_VAR).
const INDENT_VAR: i32 = 4;
/// Indentation past which nesting indents by less (PRETTYINDENT_LIMIT).
const INDENT_LIMIT: i32 = 40;
/// The standard indentation step (PRETTYINDENT_STD).
const INDENT_STD: i32 = 8;

/// The printer's state: the text so far and the current indentation.
pub struct Printer<'a> {
    cat: &'a Catalog,
    pretty: bool,
    buf: String,
    indent: i32,
}

/// Prints `n` as a top-level expression (implicit coercions hidden).
pub fn print(cat: &Catalog, n: &Node, pretty: bool) -> String {
    let mut p = Printer { cat, pretty, buf: String::new(), indent: 0 };
    p.expr(n, false);
    p.buf
}

/// The binary operator of an arithmetic node: `+`/`-` (low) or `*`, `/`,
/// `%` (high) precedence, None for others.
fn arithmetic(n: &Node) -> Option<(bool, &Node)> {
    match n {
        Node::Op(op, args, _) if args.len() == 2 => match op.as_str() {
            "+" | "-" => Some((false, n)),
            "*" | "/" | "%" => Some((true, n)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a node prints as a function call does, its arguments in its
/// own parentheses (a FuncExpr that is not a cast or SQL syntax, and the
/// other function-like nodes).
fn own_parentheses(parent: &Node) -> bool {
    matches!(
        parent,
        Node::Call(..)
            | Node::Subscript(..)
            | Node::Array(..)
            | Node::Coalesce(..)
            | Node::MinMax(..)
            | Node::NullIf(..)
            | Node::Case { .. }
    )
}

/// isSimpleNode: whether `n` needs no parentheses under `parent` in the
/// pretty form.
fn simple(n: &Node, parent: &Node) -> bool {
    match n {
        Node::Var(..)
        | Node::Const(..)
        | Node::CaseTest(_)
        | Node::Subscript(..)
        | Node::Array(..)
        | Node::Coalesce(..)
        | Node::MinMax(..)
        | Node::SqlValue(..)
        | Node::NullIf(..)
        | Node::Call(..)
        | Node::Syntax(..)
        | Node::Case { .. }
        | Node::Coerce { kind: Coercion::Func, .. } => true,
        Node::Coerce { arg, .. } => simple(arg, n),
        Node::Op(..) if matches!(parent, Node::Op(..)) => {
            let (Some((high, _)), Some((parent_high, _))) = (arithmetic(n), arithmetic(parent))
            else {
                return false;
            };
            match (high, parent_high) {
                (true, false) => true,
                (false, true) => false,
                _ => match parent {
                    Node::Op(_, args, _) => std::ptr::eq(&args[0], n),
                    _ => false,
                },
            }
        }
        Node::AnyAll { .. } | Node::Collate(..) => false,
        Node::Op(..) | Node::NullTest(..) | Node::BoolTest(..) | Node::Distinct(..) => match parent
        {
            Node::Coerce { kind: Coercion::Func, .. } | Node::Syntax(..) => false,
            Node::And(_) | Node::Or(_) | Node::Not(_) => true,
            p => own_parentheses(p),
        },
        Node::And(_) | Node::Or(_) | Node::Not(_) => match parent {
            Node::And(_) | Node::Or(_) | Node::Not(_) => matches!(
                (n, parent),
                (Node::Not(_) | Node::And(_), Node::And(_) | Node::Or(_))
                    | (Node::Or(_), Node::Or(_))
            ),
            Node::Coerce { kind: Coercion::Func, .. } | Node::Syntax(..) => false,
            p => own_parentheses(p),
        },
    }
}

/// A node under implicit coercions.
fn strip_implicit(n: &Node) -> &Node {
    match n {
        Node::Coerce { arg, explicit: false, .. } => strip_implicit(arg),
        n => n,
    }
}

impl Printer<'_> {
    fn open(&mut self) {
        if !self.pretty {
            self.buf.push('(');
        }
    }

    fn close(&mut self) {
        if !self.pretty {
            self.buf.push(')');
        }
    }

    /// get_rule_expr_paren: `n`, in parentheses when the pretty form needs
    /// them under `parent`.
    fn paren(&mut self, n: &Node, show_implicit: bool, parent: &Node) {
        let need = self.pretty && !simple(n, parent);
        if need {
            self.buf.push('(');
        }
        self.expr(n, show_implicit);
        if need {
            self.buf.push(')');
        }
    }

    /// A keyword on a new line at the current indentation
    /// (appendContextKeyword).
    fn keyword(&mut self, word: &str, before: i32, after: i32) {
        self.indent += before;
        let kept = self.buf.trim_end_matches(' ').len();
        self.buf.truncate(kept);
        self.buf.push('\n');
        let amount = if self.indent < INDENT_LIMIT {
            self.indent.max(0)
        } else {
            (INDENT_LIMIT + (self.indent - INDENT_LIMIT) / (INDENT_STD / 2)) % INDENT_LIMIT
        };
        self.buf.extend(std::iter::repeat_n(' ', amount as usize));
        self.buf.push_str(word);
        self.indent = (self.indent + after).max(0);
    }

    /// `::type` (format_type's name) after what is printed.
    fn label(&mut self, t: Ty) {
        let name = crate::func::catalog_info::format_type(Some(self.cat), t.oid, Some(t.typmod));
        self.buf.push_str("::");
        self.buf.push_str(&name);
    }

    /// get_const_expr: `show_type` -1 never labels the constant, 0 labels
    /// it unless it reads back as its type, 1 always does.
    fn constant(&mut self, value: Option<&str>, t: Ty, show_type: i8) {
        let Some(v) = value else {
            self.buf.push_str("NULL");
            if show_type >= 0 {
                self.label(t);
            }
            return;
        };
        let mut label = match t.oid {
            23 if !v.starts_with('-') => {
                self.buf.push_str(v);
                false
            }
            1700 if v.starts_with(|c: char| c.is_ascii_digit()) && v.contains(['e', 'E', '.']) => {
                self.buf.push_str(v);
                t.typmod >= 0
            }
            BOOL => {
                self.buf.push_str(if v == "t" { "true" } else { "false" });
                false
            }
            _ => {
                self.buf.push('\'');
                self.buf.push_str(&v.replace('\'', "''"));
                self.buf.push('\'');
                true
            }
        };
        if t.oid == UNKNOWN {
            label = false;
        }
        if show_type < 0 {
            return;
        }
        if label || show_type > 0 {
            self.label(t);
        }
    }

    /// get_coercion_expr: `arg::type`, the argument parenthesized in the
    /// plain form; a constant of the type itself shows without its label.
    fn coercion(&mut self, arg: &Node, t: Ty, parent: &Node) {
        match arg {
            Node::Const(v, ct) if ct.oid == t.oid && ct.typmod < 0 => {
                self.constant(v.as_deref(), *ct, -1)
            }
            _ => {
                self.open();
                self.paren(arg, false, parent);
                self.close();
            }
        }
        self.label(t);
    }

    /// Arguments each after its word (`SUBSTRING(x FROM a FOR b)`).
    fn words(&mut self, args: &[Node], words: &[&str]) {
        for (a, w) in args.iter().zip(words) {
            self.buf.push_str(w);
            self.expr(a, false);
        }
    }

    fn list(&mut self, args: &[Node]) {
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                self.buf.push_str(", ");
            }
            self.expr(a, true);
        }
    }

    /// get_rule_expr.
    fn expr(&mut self, n: &Node, show_implicit: bool) {
        match n {
            Node::Var(name, _) => self.buf.push_str(&quote_identifier(name)),
            Node::Const(v, t) => self.constant(v.as_deref(), *t, 0),
            Node::Op(op, args, _) => {
                self.open();
                match args.as_slice() {
                    [l, r] => {
                        self.paren(l, true, n);
                        self.buf.push(' ');
                        self.buf.push_str(op);
                        self.buf.push(' ');
                        self.paren(r, true, n);
                    }
                    [x] => {
                        self.buf.push_str(op);
                        self.buf.push(' ');
                        self.paren(x, true, n);
                    }
                    _ => {}
                }
                self.close();
            }
            Node::And(args) | Node::Or(args) => {
                let word = if matches!(n, Node::And(_)) { " AND " } else { " OR " };
                self.open();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        self.buf.push_str(word);
                    }
                    self.paren(a, false, n);
                }
                self.close();
            }
            Node::Not(x) => {
                self.open();
                self.buf.push_str("NOT ");
                self.paren(x, false, n);
                self.close();
            }
            Node::Call(name, args, _) => {
                self.buf.push_str(&quote_identifier(name));
                self.buf.push('(');
                self.list(args);
                self.buf.push(')');
            }
            Node::Syntax(Syntax::Extract(field), args, _) => {
                self.buf.push_str("EXTRACT(");
                self.buf.push_str(field);
                self.buf.push_str(" FROM ");
                if let Some(x) = args.get(1) {
                    self.expr(x, false);
                }
                self.buf.push(')');
            }
            Node::Syntax(Syntax::Substring, args, _) => {
                self.buf.push_str("SUBSTRING(");
                self.words(args, &["", " FROM ", " FOR "]);
                self.buf.push(')');
            }
            Node::Syntax(Syntax::Overlay, args, _) => {
                self.buf.push_str("OVERLAY(");
                self.words(args, &["", " PLACING ", " FROM ", " FOR "]);
                self.buf.push(')');
            }
            Node::Syntax(Syntax::Trim(word), args, _) => {
                self.buf.push_str("TRIM(");
                self.buf.push_str(word);
                if let Some(chars) = args.get(1) {
                    self.buf.push(' ');
                    self.expr(chars, false);
                }
                self.buf.push_str(" FROM ");
                if let Some(x) = args.first() {
                    self.expr(x, false);
                }
                self.buf.push(')');
            }
            Node::Syntax(Syntax::Position, args, _) => {
                if let [within, what] = args.as_slice() {
                    self.buf.push_str("POSITION((");
                    self.expr(what, false);
                    self.buf.push_str(") IN (");
                    self.expr(within, false);
                    self.buf.push_str("))");
                }
            }
            Node::Collate(x, name) => {
                self.open();
                self.paren(x, show_implicit, n);
                self.buf.push_str(" COLLATE ");
                self.buf.push_str(name);
                self.close();
            }
            Node::Syntax(Syntax::AtTimeZone, args, _) => {
                self.buf.push('(');
                if let [zone, x] = args.as_slice() {
                    self.paren(x, false, n);
                    self.buf.push_str(" AT TIME ZONE ");
                    self.paren(zone, false, n);
                }
                self.buf.push(')');
            }
            Node::Coerce { arg, ty, explicit, .. } => {
                if !explicit && !show_implicit {
                    self.paren(arg, false, n);
                } else {
                    self.coercion(arg, *ty, n);
                }
            }
            Node::AnyAll { op, any, args } => {
                self.open();
                if let [l, r] = args.as_slice() {
                    self.paren(l, true, n);
                    self.buf.push(' ');
                    self.buf.push_str(op);
                    self.buf.push_str(if *any { " ANY (" } else { " ALL (" });
                    self.paren(r, true, n);
                    self.buf.push(')');
                }
                self.close();
            }
            Node::Array(elems, t) => {
                self.buf.push_str("ARRAY[");
                self.list(elems);
                self.buf.push(']');
                if elems.is_empty() {
                    self.label(*t);
                }
            }
            Node::Subscript(base, subs, _) => {
                let parens = !matches!(**base, Node::Var(..));
                if parens {
                    self.buf.push('(');
                }
                self.expr(base, show_implicit);
                if parens {
                    self.buf.push(')');
                }
                for (lower, upper, slice) in subs {
                    self.buf.push('[');
                    if let Some(l) = lower {
                        self.expr(l, false);
                    }
                    if *slice {
                        self.buf.push(':');
                    }
                    if let Some(u) = upper {
                        self.expr(u, false);
                    }
                    self.buf.push(']');
                }
            }
            Node::NullTest(x, not) => {
                self.open();
                self.paren(x, true, n);
                self.buf.push_str(if *not { " IS NOT NULL" } else { " IS NULL" });
                self.close();
            }
            Node::BoolTest(x, words) => {
                self.open();
                self.paren(x, false, n);
                self.buf.push_str(" IS ");
                self.buf.push_str(words);
                self.close();
            }
            Node::Distinct(a, b) => {
                self.open();
                self.paren(a, true, n);
                self.buf.push_str(" IS DISTINCT FROM ");
                self.paren(b, true, n);
                self.close();
            }
            Node::NullIf(a, b, _) => {
                self.buf.push_str("NULLIF(");
                self.expr(a, true);
                self.buf.push_str(", ");
                self.expr(b, true);
                self.buf.push(')');
            }
            Node::Coalesce(args, _) => {
                self.buf.push_str("COALESCE(");
                self.list(args);
                self.buf.push(')');
            }
            Node::MinMax(word, args, _) => {
                self.buf.push_str(word);
                self.buf.push('(');
                self.list(args);
                self.buf.push(')');
            }
            Node::Case { operand, whens, default, .. } => {
                self.keyword("CASE", 0, INDENT_VAR);
                if let Some(o) = operand {
                    self.buf.push(' ');
                    self.expr(o, true);
                }
                for (cond, result) in whens {
                    let shown = match (operand, cond) {
                        (Some(_), Node::Op(_, args, _))
                            if args.len() == 2
                                && matches!(strip_implicit(&args[0]), Node::CaseTest(_)) =>
                        {
                            &args[1]
                        }
                        _ => cond,
                    };
                    self.keyword("WHEN ", 0, 0);
                    self.expr(shown, false);
                    self.buf.push_str(" THEN ");
                    self.expr(result, true);
                }
                self.keyword("ELSE ", 0, 0);
                self.expr(default, true);
                self.keyword("END", -INDENT_VAR, 0);
            }
            Node::CaseTest(_) => self.buf.push_str("CASE_TEST_EXPR"),
            Node::SqlValue(text, _) => self.buf.push_str(text),
        }
    }
}
