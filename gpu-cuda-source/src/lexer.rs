//! A small C/C++ tokenizer: just enough to find declarations, never a full
//! preprocessor. Comments and preprocessor lines vanish here so that nothing
//! downstream can mistake text inside them for code.

/// What kind of token this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    Punct,
    Str,
    Char,
    /// A string or character literal that hit the end of its line. Kept as a
    /// token rather than an error because text like `don't` inside `#if 0`
    /// blocks is common and harmless; it only matters inside a kernel
    /// declaration.
    BadLit,
}

/// One token, borrowing its text from the source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
    pub line: usize,
}

impl Tok<'_> {
    pub fn is(&self, text: &str) -> bool {
        self.text == text
    }
    pub fn is_ident(&self) -> bool {
        self.kind == Kind::Ident
    }
}

/// The tokens of a source, and the first fatal lexical error if any (the
/// tokens then stop at that error).
pub(crate) struct Lexed<'a> {
    pub toks: Vec<Tok<'a>>,
    pub error: Option<(usize, String)>,
    /// The line of the first preprocessor directive skipped, for callers whose text is not a
    /// whole file and may not have one (an elementwise operation, see `tokens.rs`).
    pub first_directive: Option<usize>,
    /// For [`lex_pp`] only (empty otherwise): whether each token is the first of its line, which
    /// makes a `#` the start of a directive and ends the directive before it.
    pub line_starts: Vec<bool>,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_ident_continue(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit()
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: usize,
}

impl<'a> Lexer<'a> {
    fn peek(&self, off: usize) -> u8 {
        self.b.get(self.i + off).copied().unwrap_or(0)
    }

    /// Moves to `to`, counting the newlines passed over. Every byte is passed
    /// over once, so line tracking stays linear.
    fn advance_to(&mut self, to: usize) {
        let to = to.min(self.b.len());
        if to > self.i {
            self.line += self.b[self.i..to].iter().filter(|&&c| c == b'\n').count();
            self.i = to;
        }
    }

    fn text(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or("")
    }

    /// Skips a `/* */` comment starting at `self.i`; false if it never ends.
    fn skip_block_comment(&mut self) -> bool {
        let from = self.i + 2;
        match self.src.get(from..).and_then(|rest| rest.find("*/")) {
            Some(off) => {
                self.advance_to(from + off + 2);
                true
            }
            None => false,
        }
    }

    /// Skips a `//` comment up to (not including) its newline; a backslash
    /// before the newline continues the comment, as in C.
    fn skip_line_comment(&mut self) {
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\n' => return,
                b'\\' => self.skip_backslash(),
                _ => self.i += 1,
            }
        }
    }

    /// Where a line splice (a backslash at `self.i`, then a newline) ends, if it is one.
    fn splice_end(&self) -> Option<usize> {
        let j = self.i + 1 + usize::from(self.b.get(self.i + 1) == Some(&b'\r'));
        (self.b.get(j) == Some(&b'\n')).then_some(j + 1)
    }

    /// Skips a backslash, and the newline after it when it is a line splice.
    fn skip_backslash(&mut self) {
        match self.splice_end() {
            Some(to) => self.advance_to(to),
            None => self.i += 1,
        }
    }

    /// Skips a quoted literal whose opening quote is at `self.i`. Returns
    /// whether it was terminated; an unterminated one stops before the newline.
    fn skip_quoted(&mut self) -> bool {
        let q = self.b[self.i];
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == q {
                self.i += 1;
                return true;
            }
            match c {
                b'\n' => return false,
                b'\\' => match self.splice_end() {
                    Some(to) => self.advance_to(to),
                    // Skip the escaped byte; landing inside a multi-byte
                    // char is fine because we only ever slice at ASCII
                    // delimiters.
                    None => self.i = (self.i + 2).min(self.b.len()),
                },
                _ => self.i += 1,
            }
        }
        false
    }

    /// Skips a preprocessor directive from its `#` to the end of its logical
    /// line. Comments inside it are honoured because a `/*` there can run over
    /// several lines; quotes are honoured so `"/*"` does not start one.
    fn skip_directive(&mut self) -> Result<(), String> {
        self.i += 1;
        let mut in_line_comment = false;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\n' => return Ok(()),
                b'\\' => self.skip_backslash(),
                b'/' if !in_line_comment && self.peek(1) == b'*' => {
                    if !self.skip_block_comment() {
                        return Err("unterminated /* comment".to_string());
                    }
                }
                b'/' if self.peek(1) == b'/' => {
                    in_line_comment = true;
                    self.i += 2;
                }
                b'"' | b'\'' if !in_line_comment => {
                    self.skip_quoted();
                }
                _ => self.i += 1,
            }
        }
        Ok(())
    }

    /// Tries to lex a C++11 raw string `R"delim( ... )delim"` whose `"` is at
    /// `self.i`. Ok(false) when the delimiter is invalid (then it is lexed as
    /// an ordinary string), Err when it never ends.
    fn try_raw_string(&mut self) -> Result<bool, String> {
        let open = self.i + 1;
        let mut k = open;
        while k < self.b.len() && k - open <= 16 {
            match self.b[k] {
                b'(' => break,
                b' ' | b')' | b'\\' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c | b'"' => return Ok(false),
                _ => k += 1,
            }
        }
        if k >= self.b.len() || self.b[k] != b'(' {
            return Ok(false);
        }
        let delim = self.text(open, k);
        let closing = format!("){delim}\"");
        match self.src.get(k + 1..).and_then(|rest| rest.find(&closing)) {
            Some(off) => {
                self.advance_to(k + 1 + off + closing.len());
                Ok(true)
            }
            None => Err("unterminated raw string literal".to_string()),
        }
    }

    fn skip_number(&mut self) {
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            let prev = self.b[self.i - 1];
            let exponent_sign = (c == b'+' || c == b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P');
            // `'` followed by a digit is a C++14 digit separator, as in 1'000.
            let separator = c == b'\'' && self.peek(1).is_ascii_alphanumeric();
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exponent_sign || separator {
                self.i += 1;
            } else {
                break;
            }
        }
    }
}

/// Tokenizes `src`. Never fails outright: a fatal error (an unterminated
/// comment or raw string) is reported alongside the tokens before it.
pub(crate) fn lex(src: &str) -> Lexed<'_> {
    lex_mode(src, false)
}

/// Tokenizes `src` for the preprocessor: as [`lex`], but a directive's `#` and the rest of its
/// line are tokens like any other (with [`Lexed::line_starts`] saying where lines begin), and a
/// backslash before a newline (a line splice) is whitespace.
pub(crate) fn lex_pp(src: &str) -> Lexed<'_> {
    lex_mode(src, true)
}

fn lex_mode(src: &str, pp: bool) -> Lexed<'_> {
    let mut lx = Lexer {
        src,
        b: src.as_bytes(),
        i: 0,
        line: 1,
    };
    let mut toks = Vec::new();
    let mut at_line_start = true;
    let mut error = None;
    let mut first_directive = None;
    let mut line_starts = Vec::new();
    while lx.i < lx.b.len() {
        let c = lx.b[lx.i];
        let start = lx.i;
        let line = lx.line;
        let kind = match c {
            b'\n' => {
                lx.line += 1;
                lx.i += 1;
                at_line_start = true;
                continue;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                lx.i += 1;
                continue;
            }
            b'/' if lx.peek(1) == b'/' => {
                lx.skip_line_comment();
                continue;
            }
            b'/' if lx.peek(1) == b'*' => {
                if !lx.skip_block_comment() {
                    error = Some((line, "unterminated /* comment".to_string()));
                    break;
                }
                continue;
            }
            b'\\' if pp && matches!((lx.peek(1), lx.peek(2)), (b'\n', _) | (b'\r', b'\n')) => {
                lx.skip_backslash();
                continue;
            }
            b'#' if at_line_start && !pp => {
                first_directive = first_directive.or(Some(line));
                if let Err(msg) = lx.skip_directive() {
                    error = Some((line, msg));
                    break;
                }
                continue;
            }
            b'"' | b'\'' => {
                let ok = lx.skip_quoted();
                quoted_kind(ok, c)
            }
            _ if is_ident_start(c) => {
                lx.i += 1;
                while lx.i < lx.b.len() && is_ident_continue(lx.b[lx.i]) {
                    lx.i += 1;
                }
                let word = lx.text(start, lx.i);
                let next = lx.peek(0);
                if next == b'"' && matches!(word, "R" | "LR" | "uR" | "UR" | "u8R") {
                    match lx.try_raw_string() {
                        Ok(true) => Kind::Str,
                        Ok(false) => quoted_kind(lx.skip_quoted(), b'"'),
                        Err(msg) => {
                            error = Some((line, msg));
                            break;
                        }
                    }
                } else if (next == b'"' || next == b'\'') && matches!(word, "L" | "u" | "U" | "u8") {
                    quoted_kind(lx.skip_quoted(), next)
                } else {
                    Kind::Ident
                }
            }
            _ if c.is_ascii_digit() || (c == b'.' && lx.peek(1).is_ascii_digit()) => {
                lx.skip_number();
                Kind::Number
            }
            _ => {
                let two = (c, lx.peek(1));
                let len = if c == b'.' && lx.peek(1) == b'.' && lx.peek(2) == b'.' {
                    3
                } else if matches!(two, (b':', b':') | (b'-', b'>') | (b'&', b'&')) {
                    2
                } else {
                    1
                };
                lx.i += len;
                Kind::Punct
            }
        };
        if pp {
            line_starts.push(at_line_start);
        }
        at_line_start = false;
        toks.push(Tok {
            kind,
            text: lx.text(start, lx.i),
            start,
            end: lx.i,
            line,
        });
    }
    Lexed {
        toks,
        error,
        first_directive,
        line_starts,
    }
}

fn quoted_kind(terminated: bool, quote: u8) -> Kind {
    match (terminated, quote) {
        (false, _) => Kind::BadLit,
        (true, b'"') => Kind::Str,
        (true, _) => Kind::Char,
    }
}

/// Joins tokens back into text, with one space wherever the source had
/// whitespace or comments between two tokens, which is how parameters are
/// shown to users.
pub(crate) fn join(toks: &[Tok<'_>]) -> String {
    let mut out = String::new();
    let mut prev_end = None;
    for t in toks {
        if let Some(end) = prev_end {
            if t.start > end {
                out.push(' ');
            }
        }
        push_one_line(&mut out, t.text);
        prev_end = Some(t.end);
    }
    out
}

/// Appends a token's text with its line splices (`\\` + newline) removed and any other line
/// break (a raw string's) shown as a space, so that error messages stay on one line.
fn push_one_line(out: &mut String, text: &str) {
    if !text.contains(['\n', '\r']) {
        out.push_str(text);
        return;
    }
    let spliced = text.replace("\\\r\n", "").replace("\\\n", "");
    out.extend(
        spliced
            .chars()
            .map(|c| if c == '\n' || c == '\r' { ' ' } else { c }),
    );
}

/// The longest of `operators` that starts at token `i` and is made of whole, adjacent
/// punctuation tokens, as a C compiler reads it (maximal munch: `>>=` is one operator): its end
/// in `src` and the index of the token after it; token `i` alone when none is. At most three
/// tokens are looked at, so a caller's loop stays linear. The lexer itself keeps `>` `>` apart
/// for templates; its two users (the elementwise operation's tokens and the preprocessor, whose
/// list adds `##`) join here.
pub(crate) fn join_operator(src: &str, toks: &[Tok<'_>], i: usize, operators: &[&str]) -> (usize, usize) {
    let Some(t) = toks.get(i) else {
        return (src.len(), toks.len());
    };
    for op in operators.iter().filter(|op| op.len() > t.text.len()) {
        if src.get(t.start..t.start + op.len()) != Some(op) {
            continue;
        }
        let stop = t.start + op.len();
        let (mut j, mut at) = (i + 1, t.end);
        while let Some(u) = toks
            .get(j)
            .filter(|u| u.kind == Kind::Punct && u.start == at && u.end <= stop)
        {
            at = u.end;
            j += 1;
        }
        if at == stop {
            return (stop, j);
        }
    }
    (t.end, i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        lex(src).toks.iter().map(|t| t.text).collect()
    }

    #[test]
    fn skips_comments_and_directives() {
        let src = "a // x __global__\n/* __global__\n */ b\n#define K __global__ \\\n  more\n c";
        assert_eq!(texts(src), vec!["a", "b", "c"]);
        let l = lex(src);
        assert_eq!(l.toks[2].line, 6);
        assert!(l.error.is_none());
    }

    #[test]
    fn directive_with_comment_spanning_lines() {
        let src = "#define X 1 /* a\n b */ y\nz";
        assert_eq!(texts(src), vec!["z"]);
        assert_eq!(lex(src).toks[0].line, 3);
    }

    #[test]
    fn hash_not_at_line_start_is_punct() {
        assert_eq!(texts("a # b"), vec!["a", "#", "b"]);
        assert_eq!(texts("  # b\nc"), vec!["c"]);
    }

    #[test]
    fn strings_and_chars() {
        let l = lex(r#"f("__global__ \" x", '\'', L"w", u8"z") g"#);
        let kinds: Vec<Kind> = l.toks.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            vec![
                Kind::Ident,
                Kind::Punct,
                Kind::Str,
                Kind::Punct,
                Kind::Char,
                Kind::Punct,
                Kind::Str,
                Kind::Punct,
                Kind::Str,
                Kind::Punct,
                Kind::Ident
            ]
        );
    }

    #[test]
    fn raw_strings() {
        let l = lex("a R\"xy(__global__ )\" )xy\" b");
        assert_eq!(l.toks.len(), 3);
        assert_eq!(l.toks[1].kind, Kind::Str);
        assert!(lex("R\"x(never").error.is_some());
    }

    #[test]
    fn unterminated_things() {
        let l = lex("a\n/* never");
        assert_eq!(l.error.as_ref().map(|e| e.0), Some(2));
        let l = lex("don't\nx");
        assert!(l.error.is_none());
        assert_eq!(l.toks[1].kind, Kind::BadLit);
        assert_eq!(l.toks[2].text, "x");
        assert_eq!(l.toks[2].line, 2);
    }

    #[test]
    fn numbers_and_puncts() {
        assert_eq!(
            texts("1'000 1.5e-3f 0x1p+4 a::b ... -> && >>"),
            vec!["1'000", "1.5e-3f", "0x1p+4", "a", "::", "b", "...", "->", "&&", ">", ">"]
        );
    }

    #[test]
    fn join_collapses_gaps() {
        let l = lex("const  float /* c */ *__restrict__\n x");
        assert_eq!(join(&l.toks), "const float *__restrict__ x");
    }

    #[test]
    fn join_keeps_one_line_across_splices_in_literals() {
        // Found by the fuzzer (fuzz/): a line splice inside a quoted literal put a newline
        // into the parameter text shown in error messages.
        let l = lex("\"a\\\nb\" R\"(x\ny)\" c");
        assert_eq!(join(&l.toks), "\"ab\" R\"(x y)\" c");
    }

    #[test]
    fn non_ascii() {
        let l = lex("é \"ü\\é\" ∑x");
        assert_eq!(l.toks.len(), 3);
    }
}
