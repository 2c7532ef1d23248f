//! The preprocessor proper: directives, conditional groups, `#include`, and macro expansion
//! with hide sets (Prosser's algorithm, as in the C standard's examples).
//!
//! Pending input is one stack of tokens (the next on top): the main source's, a header's pushed
//! over the rest at its `#include`, an expansion's pushed over what follows the macro's name,
//! so that the rescan of an expansion sees the tokens after it as the standard says. Every
//! step counts against a budget proportional to the input, and recursion (the arguments of a
//! macro expanded before they are substituted, nested `#include`s) is bounded, so that any
//! input ends, in linear time, without exhausting the stack.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::config::{Header, Preprocess};
use super::expr;
use super::token::{lex_file, HideSet, Interner, PKind, PTok, Sym, BOL, NOEXPAND, NO_ORIGIN, SPACE};

/// Macro arguments expanded inside macro arguments deeper than this are left unexpanded (and the
/// result marked incomplete).
const MAX_NESTING: u32 = 64;
/// Headers included from headers deeper than this are not read (GCC stops at 200).
const MAX_INCLUDE_DEPTH: usize = 64;
/// The most `#include`s read for one source.
const MAX_INCLUDES: usize = 4096;
/// Work allowed per token of input, and in any case: twice what the heaviest real macro use
/// seen needs (candle's binary.cu, kernels of 400 tokens stamped out line by line: 34 per
/// token, 180 000 in all), far below what a quadratic or exponential blow-up needs.
const WORK_PER_TOKEN: u64 = 64;
const WORK_BASE: u64 = 1 << 20;

/// A macro's definition.
#[derive(Clone)]
struct Macro {
    /// `None` for an object-like macro, else the number of parameters (`__VA_ARGS__` counted).
    params: Option<u16>,
    variadic: bool,
    body: Rc<[PTok]>,
}

/// An open `#if`, `#ifdef` or `#ifndef`.
struct Cond {
    /// A group of it was taken: later `#elif`s and `#else` are skipped.
    taken: bool,
    /// Its line in the output, for messages about what it left out.
    line: u32,
}

/// A file being read.
struct FileCtx {
    /// Its name as the header source knows it (`None` for the main source).
    id: Option<Rc<str>>,
    /// The conditional groups open when it started.
    cond_base: usize,
}

/// What the preprocessor found, beside the tokens.
#[derive(Default)]
pub(crate) struct Report {
    /// A fatal lexical error of the main source: line and message.
    pub error: Option<(usize, String)>,
    /// The budget ran out: the tokens are not the whole expansion.
    pub over_budget: bool,
    /// Something was left unexpanded (nesting too deep).
    pub incomplete: bool,
    /// The names of the macros invoked in a file whose expansion holds `__global__`.
    pub kernel_macros: Vec<String>,
    /// For each name met in a group of an `#if` not taken: the line where it is, and the line
    /// of the directive that left it out (first occurrence).
    pub left_out: HashMap<String, (usize, usize)>,
    /// Headers included with `"..."` that the header source did not have.
    pub unopened: Vec<String>,
}

pub(super) struct Engine<'c> {
    cfg: &'c Preprocess<'c>,
    pub syms: Interner,
    macros: HashMap<Sym, Macro>,
    conds: Vec<Cond>,
    files: Vec<FileCtx>,
    work: u64,
    budget: u64,
    counter: u64,
    includes: usize,
    seen_files: HashSet<Rc<str>>,
    once: HashSet<Rc<str>>,
    left_out: HashMap<Sym, (u32, u32)>,
    kernel_macros: Vec<Sym>,
    pub report: Report,
    n: Names,
}

/// Declares `Names`, the names the engine looks for, interned once.
macro_rules! names {
    ($($field:ident = $text:literal,)*) => {
        struct Names {
            $($field: Sym,)*
        }

        impl Names {
            fn new(syms: &mut Interner) -> Names {
                Names { $($field: syms.intern($text),)* }
            }
        }
    };
}

names! {
    defined = "defined",
    va_args = "__VA_ARGS__",
    va_opt = "__VA_OPT__",
    global = "__global__",
    line = "__LINE__",
    file = "__FILE__",
    counter = "__COUNTER__",
    pragma_op = "_Pragma",
    has_include = "__has_include",
    has_include_next = "__has_include_next",
    lparen = "(",
    rparen = ")",
    comma = ",",
    hash = "#",
}

fn directive_start(t: &PTok, syms: &Interner) -> bool {
    t.kind == PKind::Punct && t.has(BOL) && syms.text(t.sym) == "#"
}

impl<'c> Engine<'c> {
    pub fn new(cfg: &'c Preprocess<'c>) -> Engine<'c> {
        let mut syms = Interner::default();
        let n = Names::new(&mut syms);
        Engine {
            cfg,
            syms,
            macros: HashMap::new(),
            conds: Vec::new(),
            files: Vec::new(),
            work: 0,
            budget: WORK_BASE,
            counter: 0,
            includes: 0,
            seen_files: HashSet::new(),
            once: HashSet::new(),
            left_out: HashMap::new(),
            kernel_macros: Vec::new(),
            report: Report::default(),
            n,
        }
    }

    /// Counts `n` steps of work; false once the budget is spent.
    fn tick(&mut self, n: u64) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > self.budget {
            self.report.over_budget = true;
        }
        !self.report.over_budget
    }

    fn text(&self, t: &PTok) -> &str {
        self.syms.text(t.sym)
    }

    fn is_punct(&self, t: &PTok, p: &str) -> bool {
        t.kind == PKind::Punct && self.text(t) == p
    }

    /// Defines a macro from `NAME` or `NAME=VALUE` (`NAME(args)=VALUE` for a function-like
    /// one), as `-D` does.
    pub fn define_option(&mut self, def: &str) {
        let (head, body) = match def.split_once('=') {
            Some((h, b)) => (h, b),
            None => (def, "1"),
        };
        let (toks, _) = lex_file(&format!("{head} {body}"), &mut self.syms, Some(0));
        // `NAME(x) body`: the parameter list follows the name with no space, as in `#define`.
        let mut toks = toks;
        if let Some(t) = toks.get_mut(1) {
            if head.contains('(') && self.syms.text(t.sym) == "(" {
                t.set(SPACE, false);
            }
        }
        self.define(&toks);
    }

    pub fn undefine_option(&mut self, name: &str) {
        let sym = self.syms.intern(name.trim());
        self.macros.remove(&sym);
    }

    /// Runs the main source: its tokens after preprocessing, in order.
    pub fn run(&mut self, source: &str) -> Vec<PTok> {
        let (toks, error) = lex_file(source, &mut self.syms, None);
        self.report.error = error;
        self.budget = self
            .budget
            .saturating_add(WORK_PER_TOKEN.saturating_mul(toks.len() as u64));
        let mut stack: Vec<PTok> = Vec::with_capacity(toks.len() + 1);
        stack.push(PTok::new(PKind::FileEnd, 0, 0, 0));
        stack.extend(toks.into_iter().rev());
        self.files.push(FileCtx {
            id: None,
            cond_base: 0,
        });
        let mut out = Vec::new();
        while let Some(t) = stack.pop() {
            if !self.tick(1) {
                break;
            }
            match t.kind {
                PKind::FileEnd => self.end_file(),
                PKind::Punct if directive_start(&t, &self.syms) => self.directive(&t, &mut stack),
                _ => {
                    if let Some(t) = self.expand_one(t, &mut stack, 0, true) {
                        out.push(t);
                    }
                }
            }
        }
        self.finish();
        out
    }

    fn finish(&mut self) {
        let mut seen = HashSet::new();
        self.report.kernel_macros = self
            .kernel_macros
            .iter()
            .filter(|s| seen.insert(**s))
            .map(|s| self.syms.text(*s).to_owned())
            .collect();
        self.report.left_out = self
            .left_out
            .iter()
            .map(|(s, (l, d))| (self.syms.text(*s).to_owned(), (*l as usize, *d as usize)))
            .collect();
    }

    fn end_file(&mut self) {
        if let Some(f) = self.files.pop() {
            // An `#if` a file leaves open ends with it.
            self.conds.truncate(f.cond_base);
        }
    }

    /// The rest of a directive's line: the tokens up to the next line's first (or the end of
    /// the file), taken off the stack.
    fn directive_line(&mut self, stack: &mut Vec<PTok>) -> Vec<PTok> {
        let mut line = Vec::new();
        while let Some(t) = stack.last() {
            if t.has(BOL) || t.kind == PKind::FileEnd {
                break;
            }
            if !self.tick(1) {
                break;
            }
            if let Some(t) = stack.pop() {
                line.push(t);
            }
        }
        line
    }

    fn directive(&mut self, hash: &PTok, stack: &mut Vec<PTok>) {
        let line = self.directive_line(stack);
        let Some(name) = line.first() else { return };
        let name = self.text(name).to_owned();
        let rest = &line[1..];
        match name.as_str() {
            "define" => self.define(rest),
            "undef" => {
                if let Some(n) = rest.first().filter(|t| t.kind == PKind::Ident) {
                    self.macros.remove(&n.sym);
                }
            }
            "include" | "include_next" | "import" => self.include(hash, rest, stack),
            "if" => {
                let v = self.condition(rest);
                self.open_group(v, hash.line, stack);
            }
            "ifdef" | "ifndef" => {
                let defined = rest.first().is_some_and(|t| self.is_defined(t.sym));
                self.open_group(defined == (name == "ifdef"), hash.line, stack);
            }
            // An `#elif` or `#else` with no `#if` open in this file is a compiler's error; here
            // it is ignored.
            "elif" | "elifdef" | "elifndef" | "else" if !self.in_group() => {}
            "elif" | "elifdef" | "elifndef" => {
                let taken = self.conds.last().is_none_or(|c| c.taken);
                if taken {
                    // The group before was taken: this one and the rest are skipped.
                    self.skip_group(stack);
                    return;
                }
                let v = match name.as_str() {
                    "elif" => self.condition(rest),
                    n => rest.first().is_some_and(|t| self.is_defined(t.sym)) == (n == "elifdef"),
                };
                if let Some(c) = self.conds.last_mut() {
                    c.taken = v;
                    c.line = hash.line;
                }
                if !v {
                    self.skip_group(stack);
                }
            }
            "else" => {
                let taken = self.conds.last().is_none_or(|c| c.taken);
                if let Some(c) = self.conds.last_mut() {
                    c.taken = true;
                    c.line = hash.line;
                }
                if taken {
                    self.skip_group(stack);
                }
            }
            "endif" if self.in_group() => {
                self.conds.pop();
            }
            "pragma" => {
                let once = rest.first().is_some_and(|t| self.text(t) == "once");
                if let (true, Some(Some(id))) = (once, self.files.last().map(|f| f.id.clone())) {
                    self.once.insert(id);
                }
            }
            // #error, #warning, #line and anything else: nothing a declaration depends on.
            _ => {}
        }
    }

    /// Whether an `#if` of the current file is open.
    fn in_group(&self) -> bool {
        self.conds.len() > self.files.last().map_or(0, |f| f.cond_base)
    }

    fn open_group(&mut self, taken: bool, line: u32, stack: &mut Vec<PTok>) {
        self.conds.push(Cond { taken, line });
        if !taken {
            self.skip_group(stack);
        }
    }

    /// Skips the tokens of a group not taken, up to the `#elif`, `#else` or `#endif` that ends
    /// it (left on the stack, for `directive` to read), past nested conditionals. Names met
    /// are remembered for "left out by `#if`" hints.
    fn skip_group(&mut self, stack: &mut Vec<PTok>) {
        let dir_line = self.conds.last().map_or(0, |c| c.line);
        let mut depth = 0usize;
        while let Some(t) = stack.last() {
            if t.kind == PKind::FileEnd || !self.tick(1) {
                return;
            }
            if directive_start(t, &self.syms) {
                let word = stack
                    .len()
                    .checked_sub(2)
                    .and_then(|k| stack.get(k))
                    .filter(|n| !n.has(BOL))
                    .map(|n| self.syms.text(n.sym));
                match word {
                    Some("if" | "ifdef" | "ifndef") => depth += 1,
                    Some("elif" | "elifdef" | "elifndef" | "else") if depth == 0 => return,
                    Some("endif") if depth == 0 => return,
                    Some("endif") => depth -= 1,
                    _ => {}
                }
            } else if t.kind == PKind::Ident {
                self.left_out.entry(t.sym).or_insert((t.line, dir_line));
            }
            stack.pop();
        }
    }

    fn is_defined(&self, sym: Sym) -> bool {
        self.macros.contains_key(&sym)
            || [
                self.n.line,
                self.n.file,
                self.n.counter,
                self.n.has_include,
                self.n.has_include_next,
            ]
            .contains(&sym)
    }

    /// Reads `#define NAME body` or `#define NAME(params) body`; a malformed one is ignored.
    fn define(&mut self, toks: &[PTok]) {
        let Some(name) = toks.first().filter(|t| t.kind == PKind::Ident) else {
            return;
        };
        if name.sym == self.n.defined {
            return;
        }
        let mut i = 1;
        let mut params: Vec<Sym> = Vec::new();
        let mut variadic = false;
        let function = toks
            .get(1)
            .is_some_and(|t| self.is_punct(t, "(") && !t.has(SPACE));
        if function {
            i = 2;
            let mut expect_name = true;
            loop {
                let Some(t) = toks.get(i) else { return };
                i += 1;
                match (t.kind, self.text(t)) {
                    (PKind::Punct, ")") if !expect_name || params.is_empty() => break,
                    (PKind::Punct, "...") if expect_name => {
                        params.push(self.n.va_args);
                        variadic = true;
                        expect_name = false;
                    }
                    (PKind::Punct, "...") if !variadic => {
                        // GNU's named variadic parameter, `args...`.
                        variadic = true;
                    }
                    (PKind::Punct, ",") if !expect_name && !variadic => expect_name = true,
                    (PKind::Ident, _) if expect_name => {
                        params.push(t.sym);
                        expect_name = false;
                    }
                    _ => return,
                }
            }
            if params.len() > u16::MAX as usize {
                return;
            }
        }
        let mut body: Vec<PTok> = toks[i.min(toks.len())..].to_vec();
        for (k, t) in body.iter_mut().enumerate() {
            t.set(BOL, false);
            if k == 0 {
                t.set(SPACE, false);
            }
            if t.kind == PKind::Ident {
                if let Some(p) = params.iter().position(|p| *p == t.sym) {
                    t.kind = PKind::Param(p as u16);
                }
            }
        }
        self.macros.insert(
            name.sym,
            Macro {
                params: function.then_some(params.len() as u16),
                variadic,
                body: body.into(),
            },
        );
    }

    /// The value of an `#if` line: `defined` and `__has_include` first, then the macros, then
    /// the arithmetic.
    fn condition(&mut self, toks: &[PTok]) -> bool {
        let mut pre: Vec<PTok> = Vec::with_capacity(toks.len());
        let mut i = 0;
        let one = |e: &mut Engine<'_>, v: bool, like: &PTok| {
            let mut t = like.clone();
            t.kind = PKind::Number;
            t.sym = e.syms.intern(if v { "1" } else { "0" });
            t
        };
        while let Some(t) = toks.get(i) {
            if t.kind == PKind::Ident && t.sym == self.n.defined {
                // `defined X` or `defined ( X )`.
                let (name, next) = match toks.get(i + 1) {
                    Some(p) if self.is_punct(p, "(") => match (toks.get(i + 2), toks.get(i + 3)) {
                        (Some(n), Some(c)) if self.is_punct(c, ")") => (Some(n.sym), i + 4),
                        _ => (None, toks.len()),
                    },
                    Some(n) => (Some(n.sym), i + 2),
                    None => (None, toks.len()),
                };
                let v = name.is_some_and(|n| self.is_defined(n));
                pre.push(one(self, v, t));
                i = next;
                continue;
            }
            if t.kind == PKind::Ident && (t.sym == self.n.has_include || t.sym == self.n.has_include_next) {
                let close = toks[i..]
                    .iter()
                    .position(|u| self.is_punct(u, ")"))
                    .map_or(toks.len(), |p| i + p);
                let inner = &toks[(i + 2).min(close)..close];
                let v = self.has_include(inner);
                pre.push(one(self, v, t));
                i = close + 1;
                continue;
            }
            pre.push(t.clone());
            i += 1;
        }
        let expanded = self.expand_list(pre, 0);
        // `__has_builtin(x)` and the like, which NVRTC answers and this reader cannot: 0.
        let mut fin: Vec<PTok> = Vec::with_capacity(expanded.len());
        let mut k = 0;
        while let Some(t) = expanded.get(k) {
            let feature = t.kind == PKind::Ident
                && self.text(t).starts_with("__has_")
                && expanded.get(k + 1).is_some_and(|p| self.is_punct(p, "("));
            if feature {
                let close = expanded[k..]
                    .iter()
                    .position(|u| self.is_punct(u, ")"))
                    .map_or(expanded.len(), |p| k + p);
                fin.push(one(self, false, t));
                k = close + 1;
                continue;
            }
            fin.push(t.clone());
            k += 1;
        }
        expr::evaluate(&fin, &self.syms).unwrap_or(false)
    }

    /// `__has_include("x.h")` / `(<x.h>)`: whether the header source has it, or it is one of
    /// the headers NVRTC compiles with (the CUDA headers, the built-in standard ones).
    fn has_include(&mut self, inner: &[PTok]) -> bool {
        let Some((name, quoted)) = self.header_name(inner) else {
            return false;
        };
        let includer = self.files.last().and_then(|f| f.id.clone());
        if self.cfg.find_header(&name, quoted, includer.as_deref()).is_some() {
            return true;
        }
        known_header(&name)
    }

    /// The header an `#include` names: `"x.h"` or `<x.h>` as written, else after expanding its
    /// macros.
    fn header_name(&mut self, toks: &[PTok]) -> Option<(String, bool)> {
        let direct = |e: &Engine<'_>, toks: &[PTok]| -> Option<(String, bool)> {
            let first = toks.first()?;
            let text = e.text(first);
            if first.kind == PKind::Str && text.starts_with('"') && text.len() >= 2 {
                return Some((text[1..text.len() - 1].to_owned(), true));
            }
            if e.is_punct(first, "<") {
                let mut name = String::new();
                for (k, t) in toks[1..].iter().enumerate() {
                    if e.is_punct(t, ">") {
                        return Some((name, false));
                    }
                    if k > 0 && t.has(SPACE) {
                        name.push(' ');
                    }
                    name.push_str(e.text(t));
                }
            }
            None
        };
        let found = match direct(self, toks) {
            Some(n) => Some(n),
            None => {
                let expanded = self.expand_list(toks.to_vec(), 0);
                direct(self, &expanded)
            }
        };
        // Line splices go before anything else is read; a name across lines is no header's.
        found
            .map(|(n, q)| (n.replace("\\\r\n", "").replace("\\\n", ""), q))
            .filter(|(n, _)| !n.is_empty() && !n.contains(['\n', '\r']))
    }

    fn include(&mut self, hash: &PTok, rest: &[PTok], stack: &mut Vec<PTok>) {
        let Some((name, quoted)) = self.header_name(rest) else {
            return;
        };
        let includer = self.files.last().and_then(|f| f.id.clone());
        let Some(Header { id, text }) = self.cfg.find_header(&name, quoted, includer.as_deref()) else {
            if quoted && !known_header(&name) && !self.report.unopened.contains(&name) {
                self.report.unopened.push(name);
            }
            return;
        };
        let id: Rc<str> = Rc::from(id.as_str());
        if self.once.contains(&id) || self.files.len() > MAX_INCLUDE_DEPTH || self.includes >= MAX_INCLUDES {
            return;
        }
        self.includes += 1;
        let (toks, _) = lex_file(&text, &mut self.syms, Some(hash.line));
        // Only a header's first reading adds to the budget: reading one header again and again
        // is work the input does not pay for.
        if self.seen_files.insert(id.clone()) {
            self.budget = self
                .budget
                .saturating_add(WORK_PER_TOKEN.saturating_mul(toks.len() as u64));
        }
        if !self.tick(toks.len() as u64) {
            return;
        }
        stack.push(PTok::new(PKind::FileEnd, 0, hash.line, 0));
        stack.extend(toks.into_iter().rev());
        self.files.push(FileCtx {
            id: Some(id),
            cond_base: self.conds.len(),
        });
    }

    /// Expands the tokens of a list (a macro's argument, an `#if` line) on their own.
    fn expand_list(&mut self, toks: Vec<PTok>, nesting: u32) -> Vec<PTok> {
        if nesting > MAX_NESTING {
            self.report.incomplete = true;
            return toks;
        }
        let mut input: Vec<PTok> = toks.into_iter().rev().collect();
        let mut out = Vec::with_capacity(input.len());
        while let Some(t) = input.pop() {
            if !self.tick(1) {
                // Out of budget: what is left, unexpanded.
                out.push(t);
                out.extend(input.into_iter().rev());
                break;
            }
            if let Some(t) = self.expand_one(t, &mut input, nesting, false) {
                out.push(t);
            }
        }
        out
    }

    /// If `t` names a macro to expand here, pushes its expansion onto `input` (which holds
    /// what follows `t`, the next token on top) and returns `None`; else returns `t`, to be
    /// output. `top` is the main stream, where directives are read between a function-like
    /// macro's arguments.
    fn expand_one(&mut self, mut t: PTok, input: &mut Vec<PTok>, nesting: u32, top: bool) -> Option<PTok> {
        if t.kind != PKind::Ident || t.has(NOEXPAND) {
            return self.note_output(t);
        }
        let Some(m) = self.macros.get(&t.sym).cloned() else {
            return self.builtin(t);
        };
        let mut work = 0;
        let hidden = t.hide.contains(t.sym, &mut work);
        self.tick(work);
        if hidden {
            t.set(NOEXPAND, true);
            return self.note_output(t);
        }
        let origin = if t.origin == NO_ORIGIN { t.sym } else { t.origin };
        let Some(nparams) = m.params else {
            let mut work = 0;
            let hide = t.hide.with(t.sym, &mut work);
            self.tick(work);
            let body = self.substitute(&m, &[], nesting);
            self.push_expansion(body, &t, hide, origin, input);
            return None;
        };
        // A function-like macro's name not followed by `(` is an ordinary name.
        let opens = input
            .last()
            .is_some_and(|n| self.is_punct(n, "(") && !(top && directive_start(n, &self.syms)));
        if !opens {
            return self.note_output(t);
        }
        let Some((args, rparen, taken)) = self.collect_args(input, top) else {
            // No closing parenthesis before the end of the file: as written.
            return self.note_output(t);
        };
        let args = match self.fit_args(args, nparams, m.variadic) {
            Some(a) => a,
            None => {
                // The wrong number of arguments: an error for a compiler; here the tokens are
                // left as written.
                input.extend(taken.into_iter().rev());
                t.set(NOEXPAND, true);
                return self.note_output(t);
            }
        };
        let mut work = 0;
        let hide = t.hide.intersect(&rparen.hide, &mut work).with(t.sym, &mut work);
        self.tick(work);
        let body = self.substitute(&m, &args, nesting);
        self.push_expansion(body, &t, hide, origin, input);
        None
    }

    /// A token about to be output: `__global__` from a macro records the macro.
    fn note_output(&mut self, t: PTok) -> Option<PTok> {
        if t.sym == self.n.global && t.origin != NO_ORIGIN && !self.kernel_macros.contains(&t.origin) {
            self.kernel_macros.push(t.origin);
        }
        Some(t)
    }

    /// `__LINE__`, `__FILE__`, `__COUNTER__` and `_Pragma("...")`.
    fn builtin(&mut self, mut t: PTok) -> Option<PTok> {
        if t.sym == self.n.line {
            t.kind = PKind::Number;
            t.sym = self.syms.intern(&t.src_line.to_string());
        } else if t.sym == self.n.file {
            let name = self
                .files
                .last()
                .and_then(|f| f.id.clone())
                .map_or_else(|| "\"source.cu\"".to_owned(), |id| format!("{:?}", &*id));
            t.kind = PKind::Str;
            t.sym = self.syms.intern(&name);
        } else if t.sym == self.n.counter {
            t.kind = PKind::Number;
            t.sym = self.syms.intern(&self.counter.to_string());
            self.counter += 1;
        } else if t.sym == self.n.pragma_op {
            // Left for the scanner, which ignores it: `_Pragma("unroll")` declares nothing.
        }
        self.note_output(t)
    }

    /// Takes `( a, b, ... )` off `input`: the arguments, split at top-level commas, the `)`,
    /// and every token taken (to put back when the call is not one). `None`, with `input` as it
    /// was, when the file ends first.
    #[allow(clippy::type_complexity)]
    fn collect_args(
        &mut self,
        input: &mut Vec<PTok>,
        top: bool,
    ) -> Option<(Vec<Vec<PTok>>, PTok, Vec<PTok>)> {
        // First a scan that takes nothing: where the `)` is, or that the file ends first (then
        // the name is left as it is, at the cost of the scan alone). A directive among the
        // arguments takes the way below, which reads it.
        let mut depth = 0usize;
        let mut k = input.len().checked_sub(1)?;
        let mut close = None;
        let mut directive = false;
        let mut work = 0;
        while k > 0 {
            k -= 1;
            work += 1;
            let t = &input[k];
            if t.kind == PKind::FileEnd {
                break;
            }
            if t.kind != PKind::Punct {
                continue;
            }
            if top && t.sym == self.n.hash && t.has(BOL) {
                directive = true;
                break;
            }
            if t.sym == self.n.lparen {
                depth += 1;
            } else if t.sym == self.n.rparen {
                if depth == 0 {
                    close = Some(k);
                    break;
                }
                depth -= 1;
            }
        }
        if !self.tick(work) {
            return None;
        }
        if let Some(k) = close.filter(|_| !directive) {
            let mut taken = input.split_off(k);
            taken.reverse();
            let rparen = taken.last()?.clone();
            let mut args: Vec<Vec<PTok>> = vec![Vec::new()];
            let mut depth = 0usize;
            for t in &taken[1..taken.len() - 1] {
                // No `)` closes the call before `rparen`.
                self.arg_token(&mut args, &mut depth, t.clone());
            }
            return Some((args, rparen, taken));
        }
        if !directive {
            return None;
        }
        let mut taken: Vec<PTok> = Vec::new();
        let open = input.pop()?;
        taken.push(open);
        let mut args: Vec<Vec<PTok>> = vec![Vec::new()];
        let mut depth = 0usize;
        loop {
            let Some(t) = input.pop() else {
                input.extend(taken.into_iter().rev());
                return None;
            };
            if t.kind == PKind::FileEnd || !self.tick(1) {
                input.push(t);
                input.extend(taken.into_iter().rev());
                return None;
            }
            if top && directive_start(&t, &self.syms) {
                // A directive between the arguments (`#if` around some of them): read as GCC
                // reads it.
                self.directive(&t, input);
                continue;
            }
            taken.push(t.clone());
            if let Some(rparen) = self.arg_token(&mut args, &mut depth, t) {
                return Some((args, rparen, taken));
            }
        }
    }

    /// Adds `t` to the arguments being collected at parenthesis depth `depth`: a comma at
    /// depth 0 starts the next argument; the `)` at depth 0, which closes the call, is
    /// returned.
    fn arg_token(&self, args: &mut Vec<Vec<PTok>>, depth: &mut usize, t: PTok) -> Option<PTok> {
        if t.kind == PKind::Punct {
            if t.sym == self.n.lparen {
                *depth += 1;
            } else if t.sym == self.n.rparen {
                if *depth == 0 {
                    return Some(t);
                }
                *depth -= 1;
            } else if t.sym == self.n.comma && *depth == 0 {
                args.push(Vec::new());
                return None;
            }
        }
        if let Some(a) = args.last_mut() {
            a.push(t);
        }
        None
    }

    /// The arguments matched to `n` parameters: `f()` is no argument for `n == 0` and one empty
    /// argument for `n == 1`; a variadic macro gets the extra arguments, commas and all, as its
    /// last. `None` for a count that does not fit.
    fn fit_args(&mut self, mut args: Vec<Vec<PTok>>, n: u16, variadic: bool) -> Option<Vec<Vec<PTok>>> {
        let n = usize::from(n);
        if n == 0 {
            return (args.len() == 1 && args[0].is_empty()).then(Vec::new);
        }
        if variadic {
            if args.len() > n {
                let comma_sym = self.syms.intern(",");
                let extra = args.split_off(n - 1);
                let mut joined = Vec::new();
                for (k, mut a) in extra.into_iter().enumerate() {
                    if k > 0 {
                        joined.push(PTok::new(
                            PKind::Punct,
                            comma_sym,
                            a.first().map_or(0, |t| t.line),
                            0,
                        ));
                    }
                    joined.append(&mut a);
                }
                args.push(joined);
            } else if args.len() == n - 1 {
                args.push(Vec::new());
            }
        }
        (args.len() == n).then_some(args)
    }

    /// Marks an expansion's tokens (hide set, output line, the macro it comes from) and puts it
    /// on `input`, to be read again with what follows.
    fn push_expansion(
        &mut self,
        body: Vec<PTok>,
        name: &PTok,
        hide: HideSet,
        origin: Sym,
        input: &mut Vec<PTok>,
    ) {
        self.tick(body.len() as u64);
        let (base, n) = (input.len(), body.len());
        let mut work = 0;
        for mut t in body.into_iter().rev() {
            // Tokens of an argument keep their own hide set, with this macro's added.
            t.hide = if t.hide.is_empty() {
                hide.clone()
            } else {
                hide.union(&t.hide, &mut work)
            };
            t.line = name.line;
            t.src_line = name.src_line;
            t.origin = origin;
            t.set(BOL, false);
            input.push(t);
        }
        self.tick(work);
        // The expansion takes the place of the name, and its spacing.
        if n > 0 {
            if let Some(t) = input.get_mut(base + n - 1) {
                t.set(SPACE, name.has(SPACE));
            }
        }
    }

    /// A macro's body with its parameters replaced: `#x` by the spelling of argument `x`,
    /// `a ## b` pasted into one token, `__VA_OPT__(...)` kept when the variable arguments are
    /// not empty, any other parameter by its argument, macros expanded.
    fn substitute(&mut self, m: &Macro, args: &[Vec<PTok>], nesting: u32) -> Vec<PTok> {
        let function = m.params.is_some();
        let va = if m.variadic {
            args.len().checked_sub(1)
        } else {
            None
        };
        let body = self.va_opt(&m.body, args, va, nesting);
        let mut expanded: Vec<Option<Vec<PTok>>> = vec![None; args.len()];
        let mut out: Vec<PTok> = Vec::with_capacity(body.len());
        let param_of = |t: Option<&PTok>| match t.map(|t| t.kind) {
            Some(PKind::Param(p)) => Some(usize::from(p)),
            _ => None,
        };
        let mut i = 0;
        while let Some(t) = body.get(i) {
            if !self.tick(1) {
                break;
            }
            let next_is_paste = body.get(i + 1).is_some_and(|n| self.is_punct(n, "##"));
            // `#x`: the argument's spelling as a string.
            if function && self.is_punct(t, "#") {
                if let Some(p) = param_of(body.get(i + 1)) {
                    let s = self.stringify(args.get(p).map_or(&[][..], |a| a), t);
                    out.push(s);
                    i += 2;
                    continue;
                }
            }
            // GNU's `, ## __VA_ARGS__`: the comma goes when there are no variable arguments.
            if self.is_punct(t, ",") && next_is_paste {
                if let (Some(p), Some(v)) = (param_of(body.get(i + 2)), va) {
                    if p == v {
                        let arg = args.get(p).cloned().unwrap_or_default();
                        if !arg.is_empty() {
                            out.push(t.clone());
                            out.extend(arg);
                        }
                        i += 3;
                        continue;
                    }
                }
            }
            if self.is_punct(t, "##") && !out.is_empty() && i + 1 < body.len() {
                // The right operand: a stringified parameter, a parameter's tokens as written
                // (a placemarker when empty), or the token itself.
                let (rhs, used) = match (body.get(i + 1), param_of(body.get(i + 2))) {
                    (Some(h), Some(p)) if function && self.is_punct(h, "#") => {
                        let s = self.stringify(args.get(p).map_or(&[][..], |a| a), h);
                        (vec![s], 3)
                    }
                    _ => match param_of(body.get(i + 1)) {
                        Some(p) => (self.raw_arg(args, p, &body[i + 1]), 2),
                        None => (vec![body[i + 1].clone()], 2),
                    },
                };
                if let Some(lhs) = out.pop() {
                    let mut rhs = rhs.into_iter();
                    if let Some(first) = rhs.next() {
                        let pasted = self.paste(lhs, first);
                        out.extend(pasted);
                    }
                    out.extend(rhs);
                }
                i += used;
                continue;
            }
            if let PKind::Param(p) = t.kind {
                let p = usize::from(p);
                let after_paste = i > 0 && self.is_punct(&body[i - 1], "##");
                let mut arg = if next_is_paste || after_paste {
                    self.raw_arg(args, p, t)
                } else {
                    match expanded.get(p).cloned().flatten() {
                        Some(e) => e,
                        None => {
                            let e = self.expand_list(args.get(p).cloned().unwrap_or_default(), nesting + 1);
                            if let Some(slot) = expanded.get_mut(p) {
                                *slot = Some(e.clone());
                            }
                            e
                        }
                    }
                };
                if let Some(f) = arg.first_mut() {
                    f.set(SPACE, t.has(SPACE));
                }
                out.extend(arg);
                i += 1;
                continue;
            }
            out.push(t.clone());
            i += 1;
        }
        out.retain(|t| t.kind != PKind::Placemarker);
        out
    }

    /// Argument `p` as written, or a placemarker when it is empty (an operand of `##`).
    fn raw_arg(&self, args: &[Vec<PTok>], p: usize, at: &PTok) -> Vec<PTok> {
        match args.get(p) {
            Some(a) if !a.is_empty() => a.clone(),
            _ => vec![PTok::new(PKind::Placemarker, 0, at.line, 0)],
        }
    }

    /// The body with each `__VA_OPT__( content )` replaced by its content when the variable
    /// arguments expand to something, and removed when not.
    fn va_opt(
        &mut self,
        body: &Rc<[PTok]>,
        args: &[Vec<PTok>],
        va: Option<usize>,
        nesting: u32,
    ) -> Vec<PTok> {
        let has_opt = va.is_some() && body.iter().any(|t| t.sym == self.n.va_opt);
        if !has_opt {
            return body.to_vec();
        }
        let present = match va.and_then(|v| args.get(v)) {
            Some(a) if !a.is_empty() => !self.expand_list(a.clone(), nesting + 1).is_empty(),
            _ => false,
        };
        let mut out = Vec::with_capacity(body.len());
        let mut i = 0;
        while let Some(t) = body.get(i) {
            let opens = body.get(i + 1).is_some_and(|n| self.is_punct(n, "("));
            if t.sym == self.n.va_opt && t.kind == PKind::Ident && opens {
                let mut depth = 0usize;
                let mut j = i + 2;
                while let Some(u) = body.get(j) {
                    if self.is_punct(u, "(") {
                        depth += 1;
                    } else if self.is_punct(u, ")") {
                        if depth == 0 {
                            break;
                        }
                        depth -= 1;
                    }
                    j += 1;
                }
                if present {
                    out.extend_from_slice(&body[(i + 2).min(j)..j.min(body.len())]);
                }
                i = j + 1;
                continue;
            }
            out.push(t.clone());
            i += 1;
        }
        out
    }

    /// The tokens as a string literal, as `#x` spells them: one space where there was
    /// whitespace, `"` and `\` escaped inside string and character literals.
    fn stringify(&mut self, toks: &[PTok], at: &PTok) -> PTok {
        let mut s = String::from("\"");
        for (k, t) in toks.iter().enumerate() {
            if k > 0 && t.has(SPACE) {
                s.push(' ');
            }
            let text = self.syms.text(t.sym);
            if matches!(t.kind, PKind::Str | PKind::Char | PKind::BadLit) {
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        s.push('\\');
                    }
                    s.push(c);
                }
            } else {
                s.push_str(text);
            }
        }
        s.push('"');
        self.tick(s.len() as u64);
        let mut t = PTok::new(PKind::Str, self.syms.intern(&s), at.line, at.flags & SPACE);
        t.src_line = at.src_line;
        t
    }

    /// `lhs ## rhs`: one token when their texts together are one; else both, as they are (a
    /// compiler's error).
    fn paste(&mut self, lhs: PTok, rhs: PTok) -> Vec<PTok> {
        if lhs.kind == PKind::Placemarker {
            return vec![rhs];
        }
        if rhs.kind == PKind::Placemarker {
            return vec![lhs];
        }
        let text = format!("{}{}", self.syms.text(lhs.sym), self.syms.text(rhs.sym));
        self.tick(text.len() as u64);
        let (toks, error) = lex_file(&text, &mut self.syms, Some(lhs.line));
        match (toks.len(), error) {
            (1, None) => {
                let mut t = lhs.clone();
                t.kind = toks[0].kind;
                t.sym = toks[0].sym;
                vec![t]
            }
            _ => vec![lhs, rhs],
        }
    }
}

/// Headers NVRTC compiles with that no header source has: CUDA's and the standard ones the
/// crate provides. `__has_include` says they are there, and their `#include` is not reported as
/// one the preprocessor could not open.
fn known_header(name: &str) -> bool {
    crate::BUILTIN_HEADERS.iter().any(|(n, _)| *n == name)
        || name.starts_with("cuda")
        || name.starts_with("cooperative_groups")
        || name.starts_with("crt/")
        || name.starts_with("cub/")
        || name.starts_with("thrust/")
        || name.starts_with("nv/")
        || name.starts_with("gpu_runtime/")
        || matches!(
            name,
            "mma.h"
                | "vector_types.h"
                | "vector_functions.h"
                | "device_launch_parameters.h"
                | "math_constants.h"
        )
        || name.starts_with("sm_")
        || name.starts_with("curand")
}
