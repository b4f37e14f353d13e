//! The PL/pgSQL block parser: turns a function body or DO block into a
//! tree of [`Stmt`]s. Only the procedural structure is parsed here; the
//! SQL expressions and statements inside it are kept as text fragments
//! ([`Sql`]) for the SQL parser, as PostgreSQL's own PL/pgSQL grammar
//! hands them to the main parser.

use sqlstate::ErrorReport;

use crate::error::Result;

/// A SQL expression or statement inside the body, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Sql {
    /// Its text.
    pub text: String,
    /// The body line it starts on (1-based).
    pub line: usize,
}

/// `[<<label>>] [DECLARE ...] BEGIN ... [EXCEPTION ...] END [label]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The block's label.
    pub label: Option<String>,
    /// Its variable declarations.
    pub decls: Vec<Decl>,
    /// Its statements.
    pub body: Vec<Stmt>,
    /// Its EXCEPTION clauses (None without EXCEPTION: no subtransaction).
    pub handlers: Option<Vec<Handler>>,
}

/// One variable declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Decl {
    /// Variable name (lower-cased unless quoted).
    pub name: String,
    /// Its type, or what it aliases.
    pub kind: DeclKind,
    /// CONSTANT.
    pub constant: bool,
    /// NOT NULL.
    pub not_null: bool,
    /// Its DEFAULT / := initial value.
    pub default: Option<Sql>,
}

/// What a declaration declares.
#[derive(Debug, Clone, PartialEq)]
pub enum DeclKind {
    /// A variable of the type written here (`integer`, `t%ROWTYPE`,
    /// `t.c%TYPE`, `record`).
    Type(String),
    /// `name ALIAS FOR $n | other`.
    Alias(String),
    /// A bound cursor: `name [[NO] SCROLL] CURSOR [(args)] FOR query`.
    Cursor(std::sync::Arc<CursorDecl>),
}

/// A bound cursor's declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorDecl {
    /// SCROLL (true), NO SCROLL (false), or neither.
    pub scroll: Option<bool>,
    /// Its arguments' names and types.
    pub args: Vec<(String, String)>,
    /// Its query (which reads the arguments as variables).
    pub query: Sql,
}

/// `OPEN cursor ...`.
#[derive(Debug, Clone, PartialEq)]
pub enum Open {
    /// A bound cursor, with its arguments in declared order.
    Bound(Vec<Sql>),
    /// `[[NO] SCROLL] FOR query | FOR EXECUTE ...` on a refcursor.
    Query(Option<bool>, Source),
}

/// `FETCH [direction FROM] cursor INTO target`, or MOVE (no INTO).
#[derive(Debug, Clone, PartialEq)]
pub struct Fetch {
    /// The cursor variable.
    pub cursor: String,
    /// The direction, with its count unless `count` gives it.
    pub direction: crate::cursor::Direction,
    /// The count, when an expression gives it.
    pub count: Option<Sql>,
    /// FETCH's targets; None for MOVE.
    pub into: Option<Into>,
}

/// `FOR record IN cursor[(args)] LOOP ... END LOOP` over a bound cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct ForCursor {
    /// The loop's label.
    pub label: Option<String>,
    /// The loop's record variable (declared by the loop).
    pub var: String,
    /// The cursor variable.
    pub cursor: String,
    /// Its arguments, in declared order.
    pub args: Vec<Sql>,
    /// The loop body.
    pub body: Vec<Stmt>,
}

/// What the parser knows of a cursor variable in scope.
#[derive(Debug, Clone)]
enum CursorVar {
    /// A bound cursor's argument names.
    Bound(Vec<String>),
    /// A refcursor variable.
    Unbound,
}

/// `WHEN condition [OR ...] THEN statements`.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// The conditions it catches.
    pub conditions: Vec<Condition>,
    /// What runs when one is caught.
    pub body: Vec<Stmt>,
}

/// An error condition: a name from PostgreSQL's list or an SQLSTATE.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `division_by_zero`, `others`, ...
    Name(String),
    /// `SQLSTATE '22012'`.
    Sqlstate(String),
}

/// An assignment or INTO target: a variable, or a field of a record
/// variable (`new.updated_at`).
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The name's parts, lower-cased unless quoted.
    pub parts: Vec<String>,
}

/// `INTO [STRICT] target [, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Into {
    /// STRICT: exactly one row.
    pub strict: bool,
    /// Where the row's columns go.
    pub targets: Vec<Target>,
}

/// Where a FOR loop or RETURN QUERY reads rows from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A query written in the body.
    Query(Sql),
    /// `EXECUTE command [USING args]`.
    Execute(Dynamic),
}

/// `EXECUTE command [USING arg, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dynamic {
    /// The expression giving the command's text.
    pub command: Sql,
    /// The values of its `$n` parameters.
    pub using: Vec<Sql>,
}

/// RAISE's severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// DEBUG
    Debug,
    /// LOG
    Log,
    /// INFO
    Info,
    /// NOTICE
    Notice,
    /// WARNING
    Warning,
    /// EXCEPTION (the default)
    Exception,
}

/// A RAISE statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Raise {
    /// Its level.
    pub level: Level,
    /// `RAISE [level] condition` or `SQLSTATE '...'`.
    pub condition: Option<Condition>,
    /// The format string (`%` takes the next argument).
    pub format: Option<String>,
    /// The format's arguments.
    pub args: Vec<Sql>,
    /// `USING option = expr` (lower-case option names).
    pub options: Vec<(String, Sql)>,
}

/// A PL/pgSQL statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// A nested block.
    Block(Block),
    /// `target := expr`.
    Assign(Target, Sql),
    /// `target[i][j] := expr`: the subscripts and the value.
    AssignElement(Target, Vec<Sql>, Sql),
    /// `IF c THEN ... ELSIF c THEN ... ELSE ... END IF`.
    If(Vec<(Sql, Vec<Stmt>)>, Option<Vec<Stmt>>),
    /// `CASE [subject] WHEN v[, v] THEN ... ELSE ... END CASE`: the
    /// subject, each arm's value list (or condition), the ELSE.
    Case(Option<Sql>, Vec<(Sql, Vec<Stmt>)>, Option<Vec<Stmt>>),
    /// `[<<label>>] LOOP ... END LOOP`.
    Loop(Option<String>, Vec<Stmt>),
    /// `WHILE cond LOOP ... END LOOP`.
    While(Option<String>, Sql, Vec<Stmt>),
    /// `FOR i IN [REVERSE] lo .. hi [BY step] LOOP`.
    ForRange(Box<ForRange>),
    /// `FOR target IN query | EXECUTE ... LOOP`.
    ForQuery(Option<String>, Vec<Target>, Source, Vec<Stmt>),
    /// `FOREACH target [SLICE n] IN ARRAY expr LOOP`.
    Foreach(Option<String>, Target, u32, Sql, Vec<Stmt>),
    /// `EXIT [label] [WHEN cond]`, or CONTINUE (true).
    Exit(Option<String>, Option<Sql>, bool),
    /// `RETURN [expr]`.
    Return(Option<Sql>),
    /// `RETURN NEXT [expr]`.
    ReturnNext(Option<Sql>),
    /// `RETURN QUERY ...`.
    ReturnQuery(Source),
    /// `RAISE ...` (None: `RAISE;`, re-raise the caught error).
    Raise(Option<Box<Raise>>),
    /// `PERFORM query` (its text with PERFORM replaced by SELECT).
    Perform(Sql),
    /// A SQL statement, maybe with INTO.
    Sql(Sql, Option<Into>),
    /// `EXECUTE command [INTO ...] [USING ...]`.
    Execute(Dynamic, Option<Into>),
    /// `GET [CURRENT | STACKED] DIAGNOSTICS target = item, ...`.
    GetDiagnostics(bool, Vec<(Target, String)>),
    /// `ASSERT cond [, message]`.
    Assert(Sql, Option<Sql>),
    /// `NULL;`.
    Null,
    /// `COMMIT;` (true) or `ROLLBACK;`, each optionally `AND [NO] CHAIN`
    /// (a procedure's or DO block's own transaction control).
    EndTransaction(bool),
    /// `OPEN cursor ...`.
    Open(String, Box<Open>),
    /// FETCH or MOVE.
    Fetch(Box<Fetch>),
    /// `CLOSE cursor`.
    Close(String),
    /// A FOR loop over a bound cursor.
    ForCursor(Box<ForCursor>),
}

/// The parts of an integer FOR loop.
#[derive(Debug, Clone, PartialEq)]
pub struct ForRange {
    /// Its label.
    pub label: Option<String>,
    /// The loop variable (declared by the loop, integer).
    pub var: String,
    /// REVERSE.
    pub reverse: bool,
    /// Lower (or with REVERSE, upper) bound.
    pub from: Sql,
    /// The other bound.
    pub to: Sql,
    /// BY step.
    pub step: Option<Sql>,
    /// The loop body.
    pub body: Vec<Stmt>,
}

/// Calls `f` for each statement of a list and of every list nested in it
/// (blocks, branches, loop bodies, handlers), parents first.
pub fn walk(stmts: &[Stmt], f: &mut impl FnMut(&Stmt) -> Result<()>) -> Result<()> {
    for s in stmts {
        f(s)?;
        match s {
            Stmt::Block(b) => walk_block(b, f)?,
            Stmt::If(arms, otherwise) | Stmt::Case(_, arms, otherwise) => {
                for (_, body) in arms {
                    walk(body, f)?;
                }
                walk(otherwise.as_deref().unwrap_or_default(), f)?;
            }
            Stmt::Loop(_, body)
            | Stmt::While(_, _, body)
            | Stmt::ForQuery(_, _, _, body)
            | Stmt::Foreach(_, _, _, _, body) => walk(body, f)?,
            Stmt::ForRange(r) => walk(&r.body, f)?,
            Stmt::ForCursor(c) => walk(&c.body, f)?,
            _ => {}
        }
    }
    Ok(())
}

/// [`walk`] over a block's statements and its handlers'.
pub fn walk_block(b: &Block, f: &mut impl FnMut(&Stmt) -> Result<()>) -> Result<()> {
    walk(&b.body, f)?;
    for h in b.handlers.iter().flatten() {
        walk(&h.body, f)?;
    }
    Ok(())
}

/// Parses a function body or DO block: one block, optionally followed by
/// a semicolon.
pub fn parse(src: &str) -> Result<Block> {
    parse_with_places(src).map(|(b, _)| b)
}

/// Where a statement is in the body: its 1-based line and its text
/// (without the semicolon), for error CONTEXT lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// The line it starts on.
    pub line: u32,
    /// Its text.
    pub text: String,
}

/// How a bare name that is both a variable and a column of a statement
/// is read: PostgreSQL's `#variable_conflict` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conflict {
    /// 42702, column reference is ambiguous (the default).
    #[default]
    Error,
    /// The variable.
    UseVariable,
    /// The column.
    UseColumn,
}

/// The `#option value` lines at the head of a body (`#variable_conflict`,
/// `#print_strict_params`, which is accepted and has no effect), and the
/// body with them blanked out (lines and columns keep their places).
pub fn options(src: &str) -> Result<(std::borrow::Cow<'_, str>, Conflict)> {
    let mut conflict = Conflict::default();
    let mut blank: Vec<std::ops::Range<usize>> = Vec::new();
    let mut at = 0;
    loop {
        let rest = &src[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if trimmed.starts_with("--") {
            at += trimmed.find('\n').unwrap_or(trimmed.len());
            continue;
        }
        if !trimmed.starts_with('#') {
            break;
        }
        let end = trimmed.find('\n').unwrap_or(trimmed.len());
        let line = &trimmed[..end];
        let words: Vec<String> = line.split_whitespace().map(str::to_lowercase).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        conflict = match words.as_slice() {
            ["#variable_conflict", "error"] => Conflict::Error,
            ["#variable_conflict", "use_variable"] => Conflict::UseVariable,
            ["#variable_conflict", "use_column"] => Conflict::UseColumn,
            ["#print_strict_params", "on" | "off"] => conflict,
            // The option's value if the option is known.
            [first, rest @ ..] => {
                let known = matches!(*first, "#variable_conflict" | "#print_strict_params");
                let near = rest.first().filter(|_| known).unwrap_or(first);
                crate::bail!(SyntaxError, "syntax error at or near \"{near}\"")
            }
            [] => crate::bail!(SyntaxError, "syntax error at or near \"#\""),
        };
        blank.push(at..at + end);
        at += end;
    }
    if blank.is_empty() {
        return Ok((std::borrow::Cow::Borrowed(src), conflict));
    }
    let mut out = src.to_string();
    for r in blank {
        let spaces = " ".repeat(r.len());
        out.replace_range(r, &spaces);
    }
    Ok((std::borrow::Cow::Owned(out), conflict))
}

/// [`parse`], with the place of the outermost block followed by each
/// statement's in [`walk_block`] order.
pub fn parse_with_places(src: &str) -> Result<(Block, Vec<Place>)> {
    let tokens = lex(src)?;
    let mut p = Parser { src, tokens, pos: 0, places: Vec::new(), cursors: Vec::new() };
    let at = p.place_start();
    let label = p.label()?;
    let block = p.block(label)?;
    p.place_end(at);
    p.eat_sym(";");
    if let Some(t) = p.peek() {
        return Err(p.syntax(Some(t)));
    }
    Ok((block, p.places))
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// An identifier or key word: lower-cased unless quoted (true).
    Word(String, bool),
    /// A string constant, dollar-quoted or not: its value.
    Str(String),
    /// A number.
    Num,
    /// `$n`.
    Param,
    /// An operator or punctuation.
    Sym(String),
}

#[derive(Debug, Clone)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

impl Token {
    fn is_word(&self, w: &str) -> bool {
        matches!(&self.kind, Kind::Word(s, false) if s == w)
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(&self.kind, Kind::Sym(x) if x == s)
    }
}

fn syntax_at(src: &str, t: Option<&Token>) -> ErrorReport {
    match t {
        Some(t) => crate::err!(
            SyntaxError,
            "syntax error at or near \"{}\"",
            src.get(t.start..t.end).unwrap_or_default()
        ),
        None => crate::err!(SyntaxError, "syntax error at end of input"),
    }
}

/// Splits the body into tokens (comments and white space dropped).
fn lex(src: &str) -> Result<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    while i < b.len() {
        let c = at(i);
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'-' && at(i + 1) == b'-' {
            while i < b.len() && at(i) != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && at(i + 1) == b'*' {
            let mut depth = 0;
            while i < b.len() {
                if at(i) == b'/' && at(i + 1) == b'*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == b'*' && at(i + 1) == b'/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            if depth != 0 {
                return Err(crate::err!(SyntaxError, "unterminated /* comment"));
            }
            continue;
        }
        let kind = if c == b'\'' || ((c == b'e' || c == b'E') && at(i + 1) == b'\'') {
            let escapes = c != b'\'';
            i += if escapes { 2 } else { 1 };
            Kind::Str(quoted(src, start, &mut i, '\'', escapes, "quoted string")?)
        } else if c == b'$' && at(i + 1).is_ascii_digit() {
            i += 1;
            while at(i).is_ascii_digit() {
                i += 1;
            }
            Kind::Param
        } else if c == b'$' {
            // A dollar quote: $tag$ ... $tag$.
            let mut j = i + 1;
            while at(j).is_ascii_alphanumeric() || at(j) == b'_' {
                j += 1;
            }
            if at(j) != b'$' {
                return Err(crate::err!(SyntaxError, "syntax error at or near \"$\""));
            }
            let tag = src.get(i..=j).unwrap_or_default();
            let body_start = j + 1;
            let Some(len) = src.get(body_start..).and_then(|s| s.find(tag)) else {
                return Err(crate::err!(
                    SyntaxError,
                    "unterminated dollar-quoted string at or near \"{}\"",
                    src.get(start..).unwrap_or_default()
                ));
            };
            i = body_start + len + tag.len();
            Kind::Str(src.get(body_start..body_start + len).unwrap_or_default().to_string())
        } else if c == b'"' {
            i += 1;
            let name = quoted(src, start, &mut i, '"', false, "quoted identifier")?;
            Kind::Word(name, true)
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < b.len() && (at(i).is_ascii_alphanumeric() || at(i) == b'_' || at(i) == b'$')
                || at(i) >= 0x80
            {
                i += 1;
            }
            Kind::Word(src.get(start..i).unwrap_or_default().to_lowercase(), false)
        } else if c.is_ascii_digit() || (c == b'.' && at(i + 1).is_ascii_digit()) {
            while at(i).is_ascii_digit() {
                i += 1;
            }
            if at(i) == b'.' && at(i + 1) != b'.' {
                i += 1;
                while at(i).is_ascii_digit() {
                    i += 1;
                }
            }
            if (at(i) == b'e' || at(i) == b'E')
                && (at(i + 1).is_ascii_digit()
                    || ((at(i + 1) == b'+' || at(i + 1) == b'-') && at(i + 2).is_ascii_digit()))
            {
                i += 2;
                while at(i).is_ascii_digit() {
                    i += 1;
                }
            }
            Kind::Num
        } else {
            const TWO: [&str; 11] =
                [":=", "..", "<<", ">>", "::", "<=", ">=", "<>", "!=", "||", "=>"];
            let two = src.get(i..i + 2).filter(|s| TWO.contains(s));
            match two {
                Some(s) => {
                    i += 2;
                    Kind::Sym(s.to_string())
                }
                None => {
                    let ch = src.get(i..).and_then(|s| s.chars().next()).unwrap_or(' ');
                    i += ch.len_utf8();
                    Kind::Sym(ch.to_string())
                }
            }
        };
        out.push(Token { kind, start, end: i });
    }
    Ok(out)
}

/// The rest of a quoted token from `*i` (after its opening quote) to its
/// closing `quote`, a doubled quote standing for one; with `escapes` (an
/// E'' string) backslash escapes too. `what` names the token in the
/// error when the body ends first.
fn quoted(
    src: &str,
    start: usize,
    i: &mut usize,
    quote: char,
    escapes: bool,
    what: &str,
) -> Result<String> {
    let mut value = String::new();
    let next = |i: usize| src.get(i..).and_then(|s| s.chars().next());
    loop {
        let Some(ch) = next(*i) else {
            return Err(crate::err!(
                SyntaxError,
                "unterminated {what} at or near \"{}\"",
                src.get(start..).unwrap_or_default()
            ));
        };
        *i += ch.len_utf8();
        if ch == quote {
            if next(*i) == Some(quote) {
                value.push(quote);
                *i += 1;
                continue;
            }
            return Ok(value);
        }
        if ch == '\\' && escapes {
            if let Some(n) = next(*i) {
                *i += n.len_utf8();
                value.push(match n {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    other => other,
                });
            }
            continue;
        }
        value.push(ch);
    }
}

struct Parser<'a> {
    src: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    /// Each statement's place, in the order statements start.
    places: Vec<Place>,
    /// The cursor variables each enclosing block declares, innermost
    /// last: OPEN, FETCH and FOR loops read differently for them.
    cursors: Vec<Vec<(String, CursorVar)>>,
}

/// Words that end a statement list.
const LIST_ENDS: &[&str] = &["end", "else", "elsif", "elseif", "when", "exception"];

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&Token> {
        self.tokens.get(self.pos + n)
    }

    fn syntax(&self, t: Option<&Token>) -> ErrorReport {
        syntax_at(self.src, t)
    }

    fn error_here(&self) -> ErrorReport {
        self.syntax(self.peek())
    }

    fn at_word(&self, w: &str) -> bool {
        self.peek().is_some_and(|t| t.is_word(w))
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = self.at_word(w);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn eat_sym(&mut self, s: &str) -> bool {
        let yes = self.peek().is_some_and(|t| t.is_sym(s));
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.eat_word(w) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    fn expect_sym(&mut self, s: &str) -> Result<()> {
        if self.eat_sym(s) {
            Ok(())
        } else {
            Err(self.error_here())
        }
    }

    /// An identifier (any word, quoted or not).
    fn name(&mut self) -> Result<String> {
        match self.peek().map(|t| &t.kind) {
            Some(Kind::Word(w, _)) => {
                let w = w.clone();
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error_here()),
        }
    }

    fn line_of(&self, offset: usize) -> usize {
        1 + self.src.get(..offset).unwrap_or_default().matches('\n').count()
    }

    /// `<<label>>` if one comes next.
    fn label(&mut self) -> Result<Option<String>> {
        if !self.eat_sym("<<") {
            return Ok(None);
        }
        let l = self.name()?;
        self.expect_sym(">>")?;
        Ok(Some(l))
    }

    /// The text of the tokens from here up to (not including) the first
    /// one, outside parentheses, brackets and CASE ... END, that `stop`
    /// accepts; an error if that is empty or the body ends first.
    fn fragment(&mut self, stop: impl Fn(&Token) -> bool) -> Result<Sql> {
        let first = self.pos;
        let mut depth = 0i32;
        let mut cases = 0i32;
        loop {
            let Some(t) = self.peek() else {
                return Err(self.syntax(None));
            };
            if depth == 0 && cases == 0 && stop(t) {
                break;
            }
            match &t.kind {
                Kind::Sym(s) if s == "(" || s == "[" => depth += 1,
                Kind::Sym(s) if s == ")" || s == "]" => depth -= 1,
                Kind::Word(w, false) if w == "case" => cases += 1,
                Kind::Word(w, false) if w == "end" && cases > 0 => cases -= 1,
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == first {
            return Err(self.error_here());
        }
        Ok(self.text(first, self.pos))
    }

    /// The source text of tokens `from..to`.
    fn text(&self, from: usize, to: usize) -> Sql {
        let start = self.tokens.get(from).map_or(0, |t| t.start);
        let end = to.checked_sub(1).and_then(|i| self.tokens.get(i)).map_or(start, |t| t.end);
        Sql {
            text: self.src.get(start..end).unwrap_or_default().to_string(),
            line: self.line_of(start),
        }
    }

    /// An expression up to `;`.
    fn expr_to_semi(&mut self) -> Result<Sql> {
        let e = self.fragment(|t| t.is_sym(";"))?;
        self.expect_sym(";")?;
        Ok(e)
    }

    /// An expression up to one of the key words.
    fn expr_to(&mut self, words: &[&str]) -> Result<Sql> {
        self.fragment(|t| words.iter().any(|w| t.is_word(w)))
    }

    fn block(&mut self, label: Option<String>) -> Result<Block> {
        self.cursors.push(Vec::new());
        let b = self.block_inner(label);
        self.cursors.pop();
        b
    }

    fn block_inner(&mut self, label: Option<String>) -> Result<Block> {
        let mut decls = Vec::new();
        while self.eat_word("declare") {
            while !self.at_word("begin") && !self.at_word("declare") {
                let d = self.decl()?;
                let var = match &d.kind {
                    DeclKind::Cursor(c) => {
                        Some(CursorVar::Bound(c.args.iter().map(|a| a.0.clone()).collect()))
                    }
                    DeclKind::Type(t) if t.trim().eq_ignore_ascii_case("refcursor") => {
                        Some(CursorVar::Unbound)
                    }
                    _ => None,
                };
                if let (Some(v), Some(scope)) = (var, self.cursors.last_mut()) {
                    scope.push((d.name.clone(), v));
                }
                decls.push(d);
            }
        }
        self.expect_word("begin")?;
        let body = self.stmts()?;
        let handlers = if self.eat_word("exception") {
            let mut hs = Vec::new();
            while self.eat_word("when") {
                let mut conditions = vec![self.condition()?];
                while self.eat_word("or") {
                    conditions.push(self.condition()?);
                }
                self.expect_word("then")?;
                hs.push(Handler { conditions, body: self.stmts()? });
            }
            if hs.is_empty() {
                return Err(self.error_here());
            }
            Some(hs)
        } else {
            None
        };
        self.expect_word("end")?;
        self.end_label(&label)?;
        Ok(Block { label, decls, body, handlers })
    }

    /// The optional label after END / END LOOP, which must match.
    fn end_label(&mut self, label: &Option<String>) -> Result<()> {
        if let Some(Kind::Word(w, _)) = self.peek().map(|t| &t.kind) {
            if !LIST_ENDS.contains(&w.as_str()) || label.as_deref() == Some(w.as_str()) {
                let w = w.clone();
                if label.as_deref() != Some(w.as_str()) {
                    return Err(crate::err!(
                        SyntaxError,
                        "end label \"{w}\" differs from block's label \"{}\"",
                        label.as_deref().unwrap_or_default()
                    ));
                }
                self.pos += 1;
            }
        }
        Ok(())
    }

    fn condition(&mut self) -> Result<Condition> {
        if self.eat_word("sqlstate") {
            return match self.peek().map(|t| &t.kind) {
                Some(Kind::Str(s)) => {
                    let s = s.clone();
                    self.pos += 1;
                    Ok(Condition::Sqlstate(s))
                }
                _ => Err(self.error_here()),
            };
        }
        Ok(Condition::Name(self.name()?))
    }

    fn decl(&mut self) -> Result<Decl> {
        let name = self.name()?;
        if self.eat_word("alias") {
            self.expect_word("for")?;
            let target = match self.peek() {
                Some(t) if matches!(t.kind, Kind::Param | Kind::Word(..)) => {
                    let s = match &t.kind {
                        Kind::Word(w, _) => w.clone(),
                        _ => self.src.get(t.start..t.end).unwrap_or_default().to_string(),
                    };
                    self.pos += 1;
                    s
                }
                _ => return Err(self.error_here()),
            };
            self.expect_sym(";")?;
            return Ok(Decl {
                name,
                kind: DeclKind::Alias(target),
                constant: false,
                not_null: false,
                default: None,
            });
        }
        let constant = self.eat_word("constant");
        if self.at_word("cursor") || self.at_word("no") || self.at_word("scroll") {
            return self.cursor_decl(name);
        }
        let ty = self.fragment(|t| {
            t.is_sym(";")
                || t.is_sym(":=")
                || t.is_sym("=")
                || t.is_word("default")
                || t.is_word("not")
                || t.is_word("collate")
        })?;
        if self.eat_word("collate") {
            self.name()?;
        }
        let not_null = if self.eat_word("not") {
            self.expect_word("null")?;
            true
        } else {
            false
        };
        let default = if self.eat_sym(":=") || self.eat_sym("=") || self.eat_word("default") {
            Some(self.fragment(|t| t.is_sym(";"))?)
        } else {
            None
        };
        self.expect_sym(";")?;
        Ok(Decl { name, kind: DeclKind::Type(ty.text), constant, not_null, default })
    }

    /// Statements up to one of [`LIST_ENDS`].
    fn stmts(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.syntax(None)),
                Some(t) if LIST_ENDS.iter().any(|w| t.is_word(w)) => {
                    // `END IF`/`END LOOP`/`END CASE`/`END;` end the list;
                    // so does a `WHEN` of CASE or EXCEPTION.
                    return Ok(out);
                }
                Some(_) => {
                    let at = self.place_start();
                    out.push(self.stmt()?);
                    self.place_end(at);
                }
            }
        }
    }

    /// Records where the statement starting at the next token is; its
    /// text is filled in by [`Self::place_end`] with what this returns.
    fn place_start(&mut self) -> (usize, usize) {
        let start = self.peek().map_or(self.src.len(), |t| t.start).min(self.src.len());
        let line = self.line_of(start) as u32;
        self.places.push(Place { line, text: String::new() });
        (self.places.len() - 1, start)
    }

    /// Completes a statement's text: up to the last token it read, less a
    /// final semicolon.
    fn place_end(&mut self, (at, start): (usize, usize)) {
        let mut end = self.pos;
        if end > 0 && self.tokens.get(end - 1).is_some_and(|t| t.is_sym(";")) {
            end -= 1;
        }
        let stop = end.checked_sub(1).and_then(|i| self.tokens.get(i)).map_or(start, |t| t.end);
        let Some(place) = self.places.get_mut(at) else { return };
        place.text = self.src.get(start..stop.max(start)).unwrap_or_default().to_string();
    }

    fn stmt(&mut self) -> Result<Stmt> {
        let label = self.label()?;
        let Some(first) = self.peek().cloned() else {
            return Err(self.syntax(None));
        };
        let word = match &first.kind {
            Kind::Word(w, false) => w.clone(),
            Kind::Word(..) => String::new(),
            Kind::Sym(s) if s == ";" => {
                // An empty statement is a syntax error in PL/pgSQL.
                return Err(self.error_here());
            }
            _ => return Err(self.error_here()),
        };
        let looping = matches!(word.as_str(), "loop" | "while" | "for" | "foreach");
        if label.is_some() && !looping && word != "begin" && word != "declare" {
            return Err(self.error_here());
        }
        // `x := ...` / `x.f = ...`: an assignment whatever x is called.
        if matches!(self.peek_at(1).map(|t| &t.kind), Some(Kind::Sym(s)) if s == ":=" || s == "=" || s == "." || s == "[")
            && !matches!(word.as_str(), "select" | "perform")
        {
            return self.assignment();
        }
        match word.as_str() {
            "begin" | "declare" => {
                let b = self.block(label)?;
                self.expect_sym(";")?;
                Ok(Stmt::Block(b))
            }
            "if" => self.if_stmt(),
            "case" => self.case_stmt(),
            "loop" => {
                self.pos += 1;
                let body = self.loop_body(&label)?;
                Ok(Stmt::Loop(label, body))
            }
            "while" => {
                self.pos += 1;
                let cond = self.expr_to(&["loop"])?;
                self.expect_word("loop")?;
                let body = self.loop_body(&label)?;
                Ok(Stmt::While(label, cond, body))
            }
            "for" => self.for_stmt(label),
            "foreach" => {
                self.pos += 1;
                let target = self.target()?;
                let slice = if self.eat_word("slice") {
                    let t = self.peek().cloned();
                    self.pos += 1;
                    t.and_then(|t| self.src.get(t.start..t.end)?.parse().ok())
                        .ok_or_else(|| self.syntax(self.tokens.get(self.pos - 1)))?
                } else {
                    0
                };
                self.expect_word("in")?;
                self.expect_word("array")?;
                let array = self.expr_to(&["loop"])?;
                self.expect_word("loop")?;
                let body = self.loop_body(&label)?;
                Ok(Stmt::Foreach(label, target, slice, array, body))
            }
            "exit" | "continue" => {
                self.pos += 1;
                let name = match self.peek().map(|t| &t.kind) {
                    Some(Kind::Word(w, q)) if *q || w != "when" => {
                        let w = w.clone();
                        self.pos += 1;
                        Some(w)
                    }
                    _ => None,
                };
                let cond = if self.eat_word("when") {
                    Some(self.expr_to_semi()?)
                } else {
                    self.expect_sym(";")?;
                    None
                };
                Ok(Stmt::Exit(name, cond, word == "continue"))
            }
            "return" => self.return_stmt(),
            "raise" => self.raise(),
            "perform" => {
                self.pos += 1;
                let rest = self.expr_to_semi()?;
                Ok(Stmt::Perform(Sql { text: format!("SELECT {}", rest.text), line: rest.line }))
            }
            "execute" => {
                self.pos += 1;
                let command =
                    self.fragment(|t| t.is_sym(";") || t.is_word("into") || t.is_word("using"))?;
                let mut into = None;
                let mut using = Vec::new();
                loop {
                    if self.eat_word("into") {
                        into = Some(self.targets_of_into()?);
                    } else if self.eat_word("using") {
                        using = self.expr_list(&["into"])?;
                    } else {
                        break;
                    }
                }
                self.expect_sym(";")?;
                Ok(Stmt::Execute(Dynamic { command, using }, into))
            }
            "get" => {
                self.pos += 1;
                let stacked = if self.eat_word("stacked") {
                    true
                } else {
                    self.eat_word("current");
                    false
                };
                self.expect_word("diagnostics")?;
                let mut items = Vec::new();
                loop {
                    let target = self.target()?;
                    if !self.eat_sym("=") {
                        self.expect_sym(":=")?;
                    }
                    items.push((target, self.name()?));
                    if !self.eat_sym(",") {
                        break;
                    }
                }
                self.expect_sym(";")?;
                Ok(Stmt::GetDiagnostics(stacked, items))
            }
            "assert" => {
                self.pos += 1;
                let cond = self.fragment(|t| t.is_sym(";") || t.is_sym(","))?;
                let message = if self.eat_sym(",") {
                    Some(self.expr_to_semi()?)
                } else {
                    self.expect_sym(";")?;
                    None
                };
                Ok(Stmt::Assert(cond, message))
            }
            "null" => {
                self.pos += 1;
                self.expect_sym(";")?;
                Ok(Stmt::Null)
            }
            "open" => self.open(),
            "fetch" | "move" => self.fetch(word == "fetch"),
            "close" => {
                self.pos += 1;
                let cursor = self.name()?;
                self.expect_sym(";")?;
                Ok(Stmt::Close(cursor))
            }
            "commit" | "rollback" => {
                self.pos += 1;
                if self.eat_word("and") {
                    self.eat_word("no");
                    self.expect_word("chain")?;
                }
                self.expect_sym(";")?;
                Ok(Stmt::EndTransaction(word == "commit"))
            }
            _ => self.sql_stmt(),
        }
    }

    fn assignment(&mut self) -> Result<Stmt> {
        let target = self.target()?;
        let mut subscripts = Vec::new();
        while self.eat_sym("[") {
            let i = self.fragment(|t| t.is_sym("]") || t.is_sym(":"))?;
            if self.at_sym(":") {
                return Err(crate::err!(
                    FeatureNotSupported,
                    "assignment to array slices in PL/pgSQL is not supported yet"
                ));
            }
            self.expect_sym("]")?;
            subscripts.push(i);
        }
        if !self.eat_sym(":=") {
            self.expect_sym("=")?;
        }
        let value = self.expr_to_semi()?;
        Ok(match subscripts.is_empty() {
            true => Stmt::Assign(target, value),
            false => Stmt::AssignElement(target, subscripts, value),
        })
    }

    fn at_sym(&self, s: &str) -> bool {
        self.peek().is_some_and(|t| t.is_sym(s))
    }

    /// `name[.name...]`.
    fn target(&mut self) -> Result<Target> {
        let mut parts = vec![self.name()?];
        while self.eat_sym(".") {
            parts.push(self.name()?);
        }
        Ok(Target { parts })
    }

    fn targets_of_into(&mut self) -> Result<Into> {
        let strict = self.eat_word("strict");
        let mut targets = vec![self.target()?];
        while self.eat_sym(",") {
            targets.push(self.target()?);
        }
        Ok(Into { strict, targets })
    }

    /// `e1, e2, ...` up to `;` or one of `words`.
    fn expr_list(&mut self, words: &[&str]) -> Result<Vec<Sql>> {
        let mut out = Vec::new();
        loop {
            out.push(self.fragment(|t| {
                t.is_sym(";") || t.is_sym(",") || words.iter().any(|w| t.is_word(w))
            })?);
            if !self.eat_sym(",") {
                return Ok(out);
            }
        }
    }

    fn loop_body(&mut self, label: &Option<String>) -> Result<Vec<Stmt>> {
        let body = self.stmts()?;
        self.expect_word("end")?;
        self.expect_word("loop")?;
        self.end_label(label)?;
        self.expect_sym(";")?;
        Ok(body)
    }

    fn if_stmt(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let mut arms = Vec::new();
        let mut otherwise = None;
        loop {
            let cond = self.expr_to(&["then"])?;
            self.expect_word("then")?;
            arms.push((cond, self.stmts()?));
            if self.eat_word("elsif") || self.eat_word("elseif") {
                continue;
            }
            if self.eat_word("else") {
                otherwise = Some(self.stmts()?);
            }
            break;
        }
        self.expect_word("end")?;
        self.expect_word("if")?;
        self.expect_sym(";")?;
        Ok(Stmt::If(arms, otherwise))
    }

    fn case_stmt(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let subject = if self.at_word("when") { None } else { Some(self.expr_to(&["when"])?) };
        let mut arms = Vec::new();
        while self.eat_word("when") {
            let v = self.expr_to(&["then"])?;
            self.expect_word("then")?;
            arms.push((v, self.stmts()?));
        }
        if arms.is_empty() {
            return Err(self.error_here());
        }
        let otherwise = if self.eat_word("else") { Some(self.stmts()?) } else { None };
        self.expect_word("end")?;
        self.expect_word("case")?;
        self.expect_sym(";")?;
        Ok(Stmt::Case(subject, arms, otherwise))
    }

    fn for_stmt(&mut self, label: Option<String>) -> Result<Stmt> {
        self.pos += 1;
        let mut targets = vec![self.target()?];
        while self.eat_sym(",") {
            targets.push(self.target()?);
        }
        self.expect_word("in")?;
        if self.eat_word("execute") {
            let command = self.fragment(|t| t.is_word("loop") || t.is_word("using"))?;
            let using =
                if self.eat_word("using") { self.expr_list(&["loop"])? } else { Vec::new() };
            self.expect_word("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(Stmt::ForQuery(
                label,
                targets,
                Source::Execute(Dynamic { command, using }),
                body,
            ));
        }
        let reverse = self.eat_word("reverse");
        let start = self.pos;
        // An integer range has `..` before LOOP, outside parentheses.
        let mut depth = 0;
        let mut range = false;
        for t in &self.tokens[self.pos..] {
            match &t.kind {
                Kind::Sym(s) if s == "(" || s == "[" => depth += 1,
                Kind::Sym(s) if s == ")" || s == "]" => depth -= 1,
                Kind::Sym(s) if s == ".." && depth == 0 => {
                    range = true;
                    break;
                }
                Kind::Word(w, false) if w == "loop" && depth == 0 => break,
                _ => {}
            }
        }
        self.pos = start;
        if range {
            let [target] = targets.as_slice() else { return Err(self.error_here()) };
            let [var] = target.parts.as_slice() else { return Err(self.error_here()) };
            let var = var.clone();
            let from = self.fragment(|t| t.is_sym(".."))?;
            self.expect_sym("..")?;
            let to = self.expr_to(&["loop", "by"])?;
            let step = if self.eat_word("by") { Some(self.expr_to(&["loop"])?) } else { None };
            self.expect_word("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(Stmt::ForRange(Box::new(ForRange {
                label,
                var,
                reverse,
                from,
                to,
                step,
                body,
            })));
        }
        if reverse {
            return Err(self.error_here());
        }
        let cursor = match self.peek().map(|t| &t.kind) {
            Some(Kind::Word(w, _)) => self.cursor_var(w).map(|v| (w.clone(), v)),
            _ => None,
        };
        if let Some((cursor, var)) = cursor {
            let CursorVar::Bound(names) = var else {
                return Err(crate::err!(
                    SyntaxError,
                    "cursor FOR loop must use a bound cursor variable"
                ));
            };
            let [target] = targets.as_slice() else {
                return Err(crate::err!(
                    SyntaxError,
                    "cursor FOR loop must have only one target variable"
                ));
            };
            let [var] = target.parts.as_slice() else { return Err(self.error_here()) };
            let var = var.clone();
            self.pos += 1;
            let args = self.cursor_args(&cursor, &names)?;
            self.expect_word("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(Stmt::ForCursor(Box::new(ForCursor { label, var, cursor, args, body })));
        }
        let query = self.expr_to(&["loop"])?;
        self.expect_word("loop")?;
        let body = self.loop_body(&label)?;
        Ok(Stmt::ForQuery(label, targets, Source::Query(query), body))
    }

    fn return_stmt(&mut self) -> Result<Stmt> {
        self.pos += 1;
        if self.eat_word("next") {
            if self.eat_sym(";") {
                return Ok(Stmt::ReturnNext(None));
            }
            return Ok(Stmt::ReturnNext(Some(self.expr_to_semi()?)));
        }
        if self.eat_word("query") {
            if self.eat_word("execute") {
                let command = self.fragment(|t| t.is_sym(";") || t.is_word("using"))?;
                let using = if self.eat_word("using") { self.expr_list(&[])? } else { Vec::new() };
                self.expect_sym(";")?;
                return Ok(Stmt::ReturnQuery(Source::Execute(Dynamic { command, using })));
            }
            return Ok(Stmt::ReturnQuery(Source::Query(self.expr_to_semi()?)));
        }
        if self.eat_sym(";") {
            return Ok(Stmt::Return(None));
        }
        Ok(Stmt::Return(Some(self.expr_to_semi()?)))
    }

    fn raise(&mut self) -> Result<Stmt> {
        self.pos += 1;
        if self.eat_sym(";") {
            return Ok(Stmt::Raise(None));
        }
        let levels = [
            ("debug", Level::Debug),
            ("log", Level::Log),
            ("info", Level::Info),
            ("notice", Level::Notice),
            ("warning", Level::Warning),
            ("exception", Level::Exception),
        ];
        let mut level = Level::Exception;
        for (w, l) in levels {
            if self.eat_word(w) {
                level = l;
                break;
            }
        }
        let mut r =
            Raise { level, condition: None, format: None, args: Vec::new(), options: Vec::new() };
        match self.peek().map(|t| t.kind.clone()) {
            Some(Kind::Str(s)) => {
                self.pos += 1;
                r.format = Some(s);
                while self.eat_sym(",") {
                    r.args.push(
                        self.fragment(|t| t.is_sym(";") || t.is_sym(",") || t.is_word("using"))?,
                    );
                }
            }
            Some(Kind::Word(w, _)) if w != "using" => {
                r.condition = Some(self.condition()?);
            }
            _ => {}
        }
        if self.eat_word("using") {
            loop {
                let opt = self.name()?;
                if !self.eat_sym("=") {
                    self.expect_sym(":=")?;
                }
                let v = self.fragment(|t| t.is_sym(";") || t.is_sym(","))?;
                r.options.push((opt, v));
                if !self.eat_sym(",") {
                    break;
                }
            }
        }
        self.expect_sym(";")?;
        Ok(Stmt::Raise(Some(Box::new(r))))
    }

    /// The cursor variable `name` in scope, if it is one.
    fn cursor_var(&self, name: &str) -> Option<CursorVar> {
        for scope in self.cursors.iter().rev() {
            if let Some((_, v)) = scope.iter().rev().find(|(n, _)| n == name) {
                return Some(v.clone());
            }
        }
        None
    }

    /// `SCROLL` (true), `NO SCROLL` (false), or neither.
    fn scroll_option(&mut self) -> Result<Option<bool>> {
        Ok(if self.eat_word("no") {
            self.expect_word("scroll")?;
            Some(false)
        } else if self.eat_word("scroll") {
            Some(true)
        } else {
            None
        })
    }

    /// The rest of `name [[NO] SCROLL] CURSOR [(arg type, ...)] FOR | IS
    /// query;`.
    fn cursor_decl(&mut self, name: String) -> Result<Decl> {
        let scroll = self.scroll_option()?;
        self.expect_word("cursor")?;
        let mut args = Vec::new();
        if self.eat_sym("(") {
            loop {
                let arg = self.name()?;
                let ty = self.fragment(|t| t.is_sym(",") || t.is_sym(")"))?;
                args.push((arg, ty.text));
                if !self.eat_sym(",") {
                    break;
                }
            }
            self.expect_sym(")")?;
        }
        if !self.eat_word("for") {
            self.expect_word("is")?;
        }
        let query = self.expr_to_semi()?;
        let decl = CursorDecl { scroll, args, query };
        Ok(Decl {
            name,
            kind: DeclKind::Cursor(std::sync::Arc::new(decl)),
            constant: false,
            not_null: false,
            default: None,
        })
    }

    /// A bound cursor's arguments after its name (`(a, name := b)`), in
    /// declared order, checked against its argument `names`.
    fn cursor_args(&mut self, cursor: &str, names: &[String]) -> Result<Vec<Sql>> {
        let syntax = |m: String| crate::err!(SyntaxError, "{m}");
        if !self.at_sym("(") {
            if !names.is_empty() {
                return Err(syntax(format!("cursor \"{cursor}\" has arguments")));
            }
            return Ok(Vec::new());
        }
        if names.is_empty() {
            return Err(syntax(format!("cursor \"{cursor}\" has no arguments")));
        }
        self.pos += 1;
        let mut slots: Vec<Option<Sql>> = vec![None; names.len()];
        let mut next = 0;
        loop {
            let named = match (self.peek().map(|t| &t.kind), self.peek_at(1)) {
                (Some(Kind::Word(w, _)), Some(t)) if t.is_sym(":=") => Some(w.clone()),
                (Some(Kind::Word(..)), Some(t)) if t.is_sym("=>") => {
                    return Err(self.syntax(Some(t)));
                }
                _ => None,
            };
            let at = match named {
                Some(n) => {
                    self.pos += 2;
                    match names.iter().position(|a| *a == n) {
                        Some(i) => i,
                        None => {
                            return Err(syntax(format!(
                                "cursor \"{cursor}\" has no argument named \"{n}\""
                            )))
                        }
                    }
                }
                None => {
                    next += 1;
                    next - 1
                }
            };
            let value = self.fragment(|t| t.is_sym(",") || t.is_sym(")"))?;
            match slots.get_mut(at) {
                Some(slot @ None) => *slot = Some(value),
                Some(Some(_)) => {
                    return Err(syntax(format!(
                    "value for parameter \"{}\" of cursor \"{cursor}\" specified more than once",
                    names[at]
                )))
                }
                None => return Err(syntax(format!("too many arguments for cursor \"{cursor}\""))),
            }
            if !self.eat_sym(",") {
                break;
            }
        }
        self.expect_sym(")")?;
        slots
            .into_iter()
            .map(|s| {
                s.ok_or_else(|| syntax(format!("not enough arguments for cursor \"{cursor}\"")))
            })
            .collect()
    }

    /// `OPEN cursor [(args)]` for a bound cursor, else `OPEN cursor [[NO]
    /// SCROLL] FOR query | FOR EXECUTE command [USING ...]`.
    fn open(&mut self) -> Result<Stmt> {
        self.pos += 1;
        let cursor = self.name()?;
        if let Some(CursorVar::Bound(names)) = self.cursor_var(&cursor) {
            let args = self.cursor_args(&cursor, &names)?;
            self.expect_sym(";")?;
            return Ok(Stmt::Open(cursor, Box::new(Open::Bound(args))));
        }
        let scroll = self.scroll_option()?;
        self.expect_word("for")?;
        let source = if self.eat_word("execute") {
            let command = self.fragment(|t| t.is_sym(";") || t.is_word("using"))?;
            let using = if self.eat_word("using") { self.expr_list(&[])? } else { Vec::new() };
            Source::Execute(Dynamic { command, using })
        } else {
            Source::Query(self.fragment(|t| t.is_sym(";"))?)
        };
        self.expect_sym(";")?;
        Ok(Stmt::Open(cursor, Box::new(Open::Query(scroll, source))))
    }

    /// FETCH (`fetch`) or MOVE: `[direction {FROM | IN}] cursor [INTO
    /// targets]`.
    fn fetch(&mut self, fetch: bool) -> Result<Stmt> {
        use crate::cursor::{Direction, ALL};
        self.pos += 1;
        let mut count = None;
        let mut multiple = false;
        let from = |p: &Self| p.at_word("from") || p.at_word("in");
        let mut expect_from = true;
        let direction = if from(self) || self.eat_word("next") {
            Direction::Forward(1)
        } else if self.eat_word("prior") {
            Direction::Backward(1)
        } else if self.eat_word("first") {
            Direction::Absolute(1)
        } else if self.eat_word("last") {
            Direction::Absolute(-1)
        } else if self.at_word("absolute") || self.at_word("relative") {
            let absolute = self.eat_word("absolute");
            if !absolute {
                self.pos += 1;
            }
            count = Some(self.expr_to(&["from", "in"])?);
            if absolute {
                Direction::Absolute(0)
            } else {
                Direction::Relative(0)
            }
        } else if self.eat_word("all") {
            multiple = true;
            Direction::Forward(ALL)
        } else if self.at_word("forward") || self.at_word("backward") {
            let forward = self.eat_word("forward");
            if !forward {
                self.pos += 1;
            }
            let n = if self.eat_word("all") {
                multiple = true;
                ALL
            } else if from(self) {
                1
            } else {
                multiple = true;
                count = Some(self.expr_to(&["from", "in"])?);
                0
            };
            match forward {
                true => Direction::Forward(n),
                false => Direction::Backward(n),
            }
        } else if matches!(self.peek_at(1), Some(t) if t.is_sym(";") || t.is_word("into")) {
            // No direction: the cursor's name comes next.
            expect_from = false;
            Direction::Forward(1)
        } else {
            multiple = true;
            count = Some(self.expr_to(&["from", "in"])?);
            Direction::Forward(0)
        };
        if expect_from && !(self.eat_word("from") || self.eat_word("in")) {
            return Err(self.error_here());
        }
        let cursor = self.name()?;
        let into = match fetch {
            true => {
                self.expect_word("into")?;
                Some(self.targets_of_into()?)
            }
            false => None,
        };
        self.expect_sym(";")?;
        if fetch && multiple {
            return Err(crate::err!(
                FeatureNotSupported,
                "FETCH statement cannot return multiple rows"
            ));
        }
        Ok(Stmt::Fetch(Box::new(Fetch { cursor, direction, count, into })))
    }

    /// A SQL statement up to `;`, with its INTO clause taken out.
    fn sql_stmt(&mut self) -> Result<Stmt> {
        let first = self.pos;
        let lead = match self.peek().map(|t| &t.kind) {
            Some(Kind::Word(w, false)) => w.clone(),
            _ => String::new(),
        };
        let mut depth = 0i32;
        let mut into_at = None;
        let mut i = self.pos;
        let reads =
            matches!(lead.as_str(), "select" | "with" | "insert" | "update" | "delete" | "merge");
        loop {
            let Some(t) = self.tokens.get(i) else { return Err(self.syntax(None)) };
            match &t.kind {
                Kind::Sym(s) if s == "(" || s == "[" => depth += 1,
                Kind::Sym(s) if s == ")" || s == "]" => depth -= 1,
                Kind::Sym(s) if s == ";" && depth == 0 => break,
                Kind::Word(w, false) if depth == 0 && w == "into" && into_at.is_none() && reads => {
                    // INSERT INTO / MERGE INTO name the target table (also
                    // under WITH); any other INTO is the statement's.
                    let prev = i.checked_sub(1).and_then(|p| self.tokens.get(p));
                    let table = prev.is_some_and(|p| p.is_word("insert") || p.is_word("merge"));
                    if !table {
                        into_at = Some(i);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let end = i;
        let Some(at) = into_at else {
            let sql = self.text(first, end);
            self.pos = end + 1;
            return Ok(Stmt::Sql(sql, None));
        };
        self.pos = at + 1;
        let into = self.targets_of_into()?;
        let after = self.pos;
        // The INTO clause is blanked out, as PostgreSQL does, so the text
        // keeps its length and its other words their places.
        let mut sql = self.text(first, end);
        let base = self.tokens.get(first).map_or(0, |t| t.start);
        let from = self.tokens.get(at).map_or(base, |t| t.start) - base;
        let to =
            after.checked_sub(1).and_then(|i| self.tokens.get(i)).map_or(base, |t| t.end) - base;
        if let Some(clause) = sql.text.get(from..to) {
            let blank = " ".repeat(clause.chars().count());
            sql.text.replace_range(from..to, &blank);
        }
        self.pos = end + 1;
        Ok(Stmt::Sql(sql, Some(into)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(src: &str) -> Vec<Stmt> {
        match parse(src) {
            Ok(b) => b.body,
            Err(e) => panic!("{src}: {}", e.message),
        }
    }

    #[test]
    fn declarations_and_assignments() {
        let b = parse(
            "declare a int := 1; b constant text = 'x'; c t%rowtype; d int not null default 2;
             begin a := a + 1; new.x = lower(new.x); end",
        )
        .map_err(|e| e.message)
        .expect("parses");
        assert_eq!(b.decls.len(), 4);
        assert_eq!(b.decls[0].default.as_ref().map(|s| s.text.as_str()), Some("1"));
        assert!(b.decls[1].constant);
        assert_eq!(b.decls[2].kind, DeclKind::Type("t%rowtype".into()));
        assert!(b.decls[3].not_null);
        assert_eq!(
            b.body[1],
            Stmt::Assign(
                Target { parts: vec!["new".into(), "x".into()] },
                Sql { text: "lower(new.x)".into(), line: 2 }
            )
        );
    }

    #[test]
    fn control_structures() {
        let s = body(
            "begin
               if a > 1 then null; elsif a = 0 then return 1; else return case when a then 1 end; end if;
               <<outer>> for i in reverse 10 .. 1 by 2 loop exit outer when i < 3; end loop outer;
               for r in select * from t loop continue; end loop;
               while x loop x := false; end loop;
               case a when 1, 2 then null; else null; end case;
               foreach v in array arr loop null; end loop;
             end;",
        );
        assert_eq!(s.len(), 6);
        assert!(matches!(&s[0], Stmt::If(arms, Some(_)) if arms.len() == 2));
        let Stmt::ForRange(f) = &s[1] else { panic!("{:?}", s[1]) };
        assert!(f.reverse && f.label.as_deref() == Some("outer"));
        assert_eq!((f.from.text.as_str(), f.to.text.as_str()), ("10", "1"));
        assert!(
            matches!(&s[2], Stmt::ForQuery(None, _, Source::Query(q), _) if q.text == "select * from t")
        );
    }

    #[test]
    fn places_follow_walk_order() {
        let src = "\ndeclare v int;\nbegin\n  v := 1;\n  if v > 0 then\n    raise notice 'x';\n  end if;\n  begin\n    null;\n  exception when others then\n    perform 1;\n  end;\nend";
        let (b, places) = parse_with_places(src).expect("parses");
        let mut kinds = Vec::new();
        walk_block(&b, &mut |s| {
            kinds.push(std::mem::discriminant(s));
            Ok(())
        })
        .expect("walks");
        // The outermost block, then each statement as walk_block visits it.
        assert_eq!(places.len(), kinds.len() + 1);
        let lines: Vec<(u32, &str)> = places.iter().map(|p| (p.line, p.text.as_str())).collect();
        assert_eq!(lines[0].0, 2);
        assert_eq!(
            &lines[1..],
            &[
                (4, "v := 1"),
                (5, "if v > 0 then\n    raise notice 'x';\n  end if"),
                (6, "raise notice 'x'"),
                (8, "begin\n    null;\n  exception when others then\n    perform 1;\n  end"),
                (9, "null"),
                (11, "perform 1"),
            ]
        );
    }

    #[test]
    fn sql_with_into() {
        let s = body(
            "begin select a, b into strict x, y from t where id = 1;
             insert into t values (1) returning id into z;
             insert into t select 1; perform f(1);
             execute 'select $1' into v using 3; end",
        );
        assert_eq!(
            s[0],
            Stmt::Sql(
                // The INTO clause is blanked out, keeping the length.
                Sql {
                    text: format!("select a, b {} from t where id = 1", " ".repeat(16)),
                    line: 1
                },
                Some(Into {
                    strict: true,
                    targets: vec![
                        Target { parts: vec!["x".into()] },
                        Target { parts: vec!["y".into()] }
                    ]
                })
            )
        );
        assert!(
            matches!(&s[1], Stmt::Sql(q, Some(_)) if q.text == format!("insert into t values (1) returning id {}", " ".repeat(6)))
        );
        assert!(matches!(&s[2], Stmt::Sql(q, None) if q.text == "insert into t select 1"));
        assert!(matches!(&s[3], Stmt::Perform(q) if q.text == "SELECT f(1)"));
        assert!(matches!(&s[4], Stmt::Execute(d, Some(_)) if d.using.len() == 1));
    }

    #[test]
    fn raise_and_handlers() {
        let b = parse(
            "begin raise notice 'x % y', 1, 2; raise exception using errcode = '22012', message = 'm';
             raise unique_violation; raise;
             exception when division_by_zero or sqlstate '23505' then null; when others then raise; end",
        )
        .map_err(|e| e.message)
        .expect("parses");
        let Stmt::Raise(Some(r)) = &b.body[0] else { panic!() };
        assert_eq!((r.level, r.args.len()), (Level::Notice, 2));
        let Stmt::Raise(Some(r)) = &b.body[1] else { panic!() };
        assert_eq!(r.options.len(), 2);
        assert_eq!(b.handlers.as_ref().map(Vec::len), Some(2));
    }

    #[test]
    fn syntax_errors() {
        for (src, near) in [
            ("begin x := ; end", "\";\""),
            ("begin if x then null; end", "end of input"),
            ("begin select 1 end", "end of input"),
            ("begin null; end; x", "\"x\""),
        ] {
            match parse(src) {
                Ok(_) => panic!("{src} parsed"),
                Err(e) => assert!(e.message.contains(near), "{src}: {}", e.message),
            }
        }
    }
}
