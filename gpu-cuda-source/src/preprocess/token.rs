//! The preprocessor's tokens: interned text, a kind, where the token shows in the output, and
//! what macro expansion needs (whether whitespace precedes it, its hide set).

use std::collections::HashMap;
use std::rc::Rc;

use crate::lexer::{self, Kind};

/// An interned token text.
pub(super) type Sym = u32;

/// Token texts, each stored once: tokens are small and cheap to copy, and comparing two names
/// is comparing two numbers.
#[derive(Default)]
pub(super) struct Interner {
    ids: HashMap<Rc<str>, Sym>,
    texts: Vec<Rc<str>>,
}

impl Interner {
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.texts.len() as Sym;
        let rc: Rc<str> = Rc::from(text);
        self.texts.push(rc.clone());
        self.ids.insert(rc, id);
        id
    }

    pub fn text(&self, sym: Sym) -> &str {
        self.texts.get(sym as usize).map_or("", |t| t)
    }
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PKind {
    Ident,
    Number,
    /// An operator or punctuator, joined by maximal munch (`##`, `<<=`, `::`).
    Punct,
    Str,
    Char,
    /// A literal not closed on its line.
    BadLit,
    /// The `n`th parameter, in a function-like macro's body.
    Param(u16),
    /// The empty argument of a `##` operand, gone once the pasting is done.
    Placemarker,
    /// The end of a file's tokens (the main source's or an included header's).
    FileEnd,
}

/// Whitespace (or a comment) before the token.
pub(super) const SPACE: u8 = 1;
/// The first token of a line of a file: a `#` there starts a directive.
pub(super) const BOL: u8 = 2;
/// A name painted blue: it named a macro being expanded when it was met, and is never
/// expanded again.
pub(super) const NOEXPAND: u8 = 4;

/// A set of macro names, shared between tokens: a token is not expanded by a macro in its
/// set (the set of macros whose expansion produced it).
#[derive(Clone, Default)]
pub(super) struct HideSet(Option<Rc<HideNode>>);

struct HideNode {
    name: Sym,
    next: HideSet,
}

impl HideSet {
    /// Whether `name` is in the set; `work` counts the nodes looked at.
    pub fn contains(&self, name: Sym, work: &mut u64) -> bool {
        let mut at = &self.0;
        while let Some(n) = at {
            *work += 1;
            if n.name == name {
                return true;
            }
            at = &n.next.0;
        }
        false
    }

    /// The set with `name` added.
    pub fn with(&self, name: Sym, work: &mut u64) -> HideSet {
        if self.contains(name, work) {
            return self.clone();
        }
        HideSet(Some(Rc::new(HideNode {
            name,
            next: self.clone(),
        })))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The names in either set.
    pub fn union(&self, other: &HideSet, work: &mut u64) -> HideSet {
        let mut out = self.clone();
        let mut at = &other.0;
        while let Some(n) = at {
            *work += 1;
            out = out.with(n.name, work);
            at = &n.next.0;
        }
        out
    }

    /// The names in both sets.
    pub fn intersect(&self, other: &HideSet, work: &mut u64) -> HideSet {
        let mut out = HideSet::default();
        let mut at = &self.0;
        while let Some(n) = at {
            *work += 1;
            if other.contains(n.name, work) {
                out = out.with(n.name, work);
            }
            at = &n.next.0;
        }
        out
    }
}

impl Drop for HideSet {
    /// Unlinks the chain node by node: a long chain dropped recursively could overflow the
    /// stack.
    fn drop(&mut self) {
        let mut next = self.0.take();
        while let Some(rc) = next {
            match Rc::try_unwrap(rc) {
                Ok(mut node) => next = node.next.0.take(),
                Err(_) => break,
            }
        }
    }
}

/// No macro: the token comes from a file as written.
pub(super) const NO_ORIGIN: Sym = Sym::MAX;

/// One token.
#[derive(Clone)]
pub(super) struct PTok {
    pub kind: PKind,
    pub sym: Sym,
    /// Its line in the output: its own line in the main source; the line of the `#include` in
    /// the main source for a token of a header; the line of the macro's name for a token of an
    /// expansion.
    pub line: u32,
    /// Its line in its own file (`__LINE__`).
    pub src_line: u32,
    pub flags: u8,
    pub hide: HideSet,
    /// The macro named in a file whose expansion made this token (`UNARY_OP` for the tokens of
    /// `UNARY_OP(float, uexp_f32, expg(x))`), or [`NO_ORIGIN`].
    pub origin: Sym,
}

impl PTok {
    pub fn new(kind: PKind, sym: Sym, line: u32, flags: u8) -> PTok {
        PTok {
            kind,
            sym,
            line,
            src_line: line,
            flags,
            hide: HideSet::default(),
            origin: NO_ORIGIN,
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }
}

/// C's operators and punctuators of more than one character, longest first where one starts
/// another; `##` is the preprocessor's.
const OPERATORS: [&str; 24] = [
    "<<=", ">>=", "...", "##", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=",
    "&=", "|=", "^=", "<<", ">>", "->", "::",
];

/// The tokens of one file, each with its own line as `src_line` and `line` (or `out_line`, for a
/// header: where its `#include` is in the main source). A fatal lexical error (an unclosed
/// comment or raw string) ends the tokens, and is returned beside them.
pub(super) fn lex_file(
    src: &str,
    syms: &mut Interner,
    out_line: Option<u32>,
) -> (Vec<PTok>, Option<(usize, String)>) {
    let lexed = lexer::lex_pp(src);
    let toks = &lexed.toks;
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    let mut prev_end = 0;
    while let Some(t) = toks.get(i) {
        let kind = match t.kind {
            Kind::Ident => PKind::Ident,
            Kind::Number => PKind::Number,
            Kind::Punct => PKind::Punct,
            Kind::Str => PKind::Str,
            Kind::Char => PKind::Char,
            Kind::BadLit => PKind::BadLit,
        };
        let (end, next) = if kind == PKind::Punct {
            lexer::join_operator(src, toks, i, &OPERATORS)
        } else {
            (t.end, i + 1)
        };
        let text = src.get(t.start..end).unwrap_or(t.text);
        let mut flags = 0;
        if t.start > prev_end || i == 0 {
            flags |= SPACE;
        }
        if lexed.line_starts.get(i).copied().unwrap_or(false) {
            flags |= BOL;
        }
        let own = u32::try_from(t.line).unwrap_or(u32::MAX);
        let mut tok = PTok::new(kind, syms.intern(text), out_line.unwrap_or(own), flags);
        tok.src_line = own;
        out.push(tok);
        prev_end = end;
        i = next;
    }
    (out, lexed.error)
}
