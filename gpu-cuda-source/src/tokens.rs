//! The tokens of a piece of C code that is not a whole file (the operation of an
//! `#[elementwise]` kernel: `z[i] = a * x[i] + y[i]`), by this crate's lexer.
//!
//! The macro checks an operation's names and assignments on these tokens; reading them with the
//! lexer that reads declarations means one set of rules for comments, literals, numbers and
//! line splices, fuzzed with the rest of the crate. Operators are joined by maximal munch
//! (`>>=` is one token), as a C compiler reads them: the declaration parser wants `>` `>` apart
//! for templates, so the joining is done here, not in the lexer.

use std::fmt;

use crate::lexer::{self, Kind};

/// What kind of token this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A name or keyword (`x`, `float`, `for`). May contain `$` and non-ASCII letters, as the
    /// compilers accept; a caller that wants plain C checks the text.
    Ident,
    /// A number, with its suffix and digit separators (`1.5e-3f`, `0x1F`, `1'000`).
    Number,
    /// An operator or punctuator, joined by maximal munch (`<<=`, `->`, `(`), or any other
    /// single character that is neither of the above (`@`).
    Punct,
    /// A string literal, prefixed and raw ones included.
    Str,
    /// A character literal.
    Char,
}

/// One token, borrowing its text from the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    /// Its kind.
    pub kind: TokenKind,
    /// Its text, exactly as in the source.
    pub text: &'a str,
    /// 1-based line.
    pub line: usize,
}

/// Why text cannot be tokenized as a piece of C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    /// A `/*` comment that is never closed.
    UnclosedComment {
        /// The line it opens on.
        line: usize,
    },
    /// A raw string (`R"x(...)x"`) that is never closed.
    UnclosedRawString {
        /// The line it opens on.
        line: usize,
    },
    /// A string or character literal not closed on its line.
    UnclosedLiteral {
        /// Its line.
        line: usize,
    },
    /// A preprocessor line (`#define ...`), which a piece of code cannot hold.
    Directive {
        /// Its line.
        line: usize,
    },
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::UnclosedComment { .. } => f.write_str("a `/*` comment is not closed"),
            TokenError::UnclosedRawString { .. } => f.write_str("a raw string literal is not closed"),
            TokenError::UnclosedLiteral { .. } => f.write_str("a string or character literal is not closed"),
            TokenError::Directive { .. } => f.write_str("a preprocessor line (`#...`) cannot appear here"),
        }
    }
}

impl std::error::Error for TokenError {}

/// C's operators of more than one character. The lexer makes `::`, `->`, `&&` and `...` whole;
/// the rest are joined from its one-character tokens.
const OPERATORS: [&str; 23] = [
    "<<=", ">>=", "...", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "<<", ">>", "->", "::",
];

/// The tokens of `src`, without comments, or the first reason it is not C code: an unclosed
/// comment or literal, or a preprocessor line. Linear in the length of `src`; never panics.
///
/// ```
/// use gpu_cuda_source::tokens::{tokenize, TokenKind};
/// let t = tokenize("z >>= 'a' /* note */ + 1.5e-3f").unwrap();
/// let texts: Vec<&str> = t.iter().map(|t| t.text).collect();
/// assert_eq!(texts, [("z"), ">>=", "'a'", "+", "1.5e-3f"]);
/// assert_eq!(t[2].kind, TokenKind::Char);
/// ```
pub fn tokenize(src: &str) -> Result<Vec<Token<'_>>, TokenError> {
    let lexed = lexer::lex(src);
    let directive = lexed.first_directive.map(|line| TokenError::Directive { line });
    if let Some((line, message)) = &lexed.error {
        // The lexer's fatal errors are its two unclosed constructs; the earlier of a directive
        // and the error is reported.
        let e = if message.contains("comment") {
            TokenError::UnclosedComment { line: *line }
        } else {
            TokenError::UnclosedRawString { line: *line }
        };
        return Err(match directive {
            Some(d @ TokenError::Directive { line: l }) if l < *line => d,
            _ => e,
        });
    }
    let toks = &lexed.toks;
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while let Some(t) = toks.get(i) {
        let kind = match t.kind {
            Kind::Ident => TokenKind::Ident,
            Kind::Number => TokenKind::Number,
            Kind::Punct => TokenKind::Punct,
            Kind::Str => TokenKind::Str,
            Kind::Char => TokenKind::Char,
            Kind::BadLit => {
                // The earlier of the two problems is the one to fix first.
                return Err(match directive {
                    Some(d @ TokenError::Directive { line }) if line < t.line => d,
                    _ => TokenError::UnclosedLiteral { line: t.line },
                });
            }
        };
        let (end, next) = if kind == TokenKind::Punct {
            lexer::join_operator(src, toks, i, &OPERATORS)
        } else {
            (t.end, i + 1)
        };
        out.push(Token {
            kind,
            text: src.get(t.start..end).unwrap_or(t.text),
            line: t.line,
        });
        i = next;
    }
    match directive {
        Some(d) => Err(d),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        tokenize(src)
            .unwrap_or_else(|e| panic!("{src:?}: {e}"))
            .iter()
            .map(|t| t.text)
            .collect()
    }

    #[test]
    fn operators_are_joined_by_maximal_munch() {
        assert_eq!(texts("a<<=b>>=c"), ["a", "<<=", "b", ">>=", "c"]);
        assert_eq!(texts("a+++b"), ["a", "++", "+", "b"]);
        assert_eq!(
            texts("a||b&&c!=d->e::f"),
            ["a", "||", "b", "&&", "c", "!=", "d", "->", "e", "::", "f"]
        );
        // Apart in the source, apart in the tokens.
        assert_eq!(texts("a < < b"), ["a", "<", "<", "b"]);
        assert_eq!(texts("a </**/= b"), ["a", "<", "=", "b"]);
        assert_eq!(texts("x @ y"), ["x", "@", "y"]);
    }

    #[test]
    fn comments_go_and_literals_stay_whole() {
        let t =
            tokenize("z[i] += 1.5e-3f * x /* c */ >>= 'a' // tail\n+ \"s\\\"t\" + 1'000").expect("tokens");
        let texts: Vec<&str> = t.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            [
                "z",
                "[",
                "i",
                "]",
                "+=",
                "1.5e-3f",
                "*",
                "x",
                ">>=",
                "'a'",
                "+",
                "\"s\\\"t\"",
                "+",
                "1'000"
            ]
        );
        assert_eq!(t[9].kind, TokenKind::Char);
        assert_eq!(t[11].kind, TokenKind::Str);
        assert_eq!((t[13].kind, t[13].line), (TokenKind::Number, 2));
    }

    #[test]
    fn what_is_not_c_code() {
        assert_eq!(tokenize("a /* b"), Err(TokenError::UnclosedComment { line: 1 }));
        assert_eq!(
            tokenize("a\ns = \"ab"),
            Err(TokenError::UnclosedLiteral { line: 2 })
        );
        assert_eq!(tokenize("s = \"\\"), Err(TokenError::UnclosedLiteral { line: 1 }));
        assert_eq!(
            tokenize("s = R\"x(ab"),
            Err(TokenError::UnclosedRawString { line: 1 })
        );
        assert_eq!(
            tokenize("a\n#define b c\nd"),
            Err(TokenError::Directive { line: 2 })
        );
        assert_eq!(tokenize("#x\n/*"), Err(TokenError::Directive { line: 1 }));
        // A `#` within a line is punctuation, for the caller to judge.
        assert_eq!(texts("a # b"), ["a", "#", "b"]);
        assert_eq!(
            TokenError::UnclosedComment { line: 1 }.to_string(),
            "a `/*` comment is not closed"
        );
    }
}
