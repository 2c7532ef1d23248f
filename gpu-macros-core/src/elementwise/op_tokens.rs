//! The operation's tokens, read with gpu-cuda-source's lexer, and what cannot be in a C operation.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Ident,
    Number,
    /// A string or character literal.
    Literal,
    Punct,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Tok<'a> {
    pub(super) kind: Kind,
    pub(super) text: &'a str,
}

/// Splits a C operation into tokens, without comments, with gpu-cuda-source's lexer (the one that
/// reads declarations, fuzzed). Errors name what cannot be C, or cannot be in an operation:
/// the lexer takes `$` and non-ASCII letters in names and any character as punctuation, which
/// the run-time kernel would hand to NVRTC as they are.
pub(super) fn tokenize(src: &str) -> Result<Vec<Tok<'_>>, String> {
    use gpu_cuda_source::tokens::{TokenError, TokenKind};
    let toks = gpu_cuda_source::tokens::tokenize(src).map_err(|e| match e {
        TokenError::Directive { .. } => {
            "a preprocessor line (`#...`) cannot appear in a C operation".to_owned()
        }
        e => e.to_string(),
    })?;
    let not_c = |ch: char| format!("`{ch}` cannot appear in a C operation");
    toks.into_iter()
        .map(|t| {
            let kind = match t.kind {
                TokenKind::Ident => {
                    if let Some(ch) = t.text.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_')) {
                        return Err(not_c(ch));
                    }
                    Kind::Ident
                }
                TokenKind::Number => Kind::Number,
                TokenKind::Str | TokenKind::Char => Kind::Literal,
                // Joined operators are C's; a single character must be one of C's.
                TokenKind::Punct if t.text.len() > 1 => Kind::Punct,
                TokenKind::Punct => match t.text.chars().next() {
                    Some(ch) if "+-*/%=<>!&|^~?:;,.()[]{}".contains(ch) => Kind::Punct,
                    ch => return Err(not_c(ch.unwrap_or('?'))),
                },
            };
            Ok(Tok { kind, text: t.text })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_tokenized_without_comments() {
        let toks = tokenize("z[i] += 1.5e-3f * x /* c */ >>= 'a' // tail").expect("tokens");
        let texts: Vec<&str> = toks.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            ["z", "[", "i", "]", "+=", "1.5e-3f", "*", "x", ">>=", "'a'"]
        );
        let kinds: Vec<Kind> = toks.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds[..6],
            [
                Kind::Ident,
                Kind::Punct,
                Kind::Ident,
                Kind::Punct,
                Kind::Punct,
                Kind::Number
            ]
        );
        assert_eq!(kinds[9], Kind::Literal);
        // Non-ASCII text inside a literal is read past, not cut.
        assert_eq!(tokenize("s = \"é\\\"\"").expect("tokens").len(), 3);
    }

    #[test]
    fn what_cannot_be_tokenized() {
        assert_eq!(
            tokenize("a /* b").map(|_| ()),
            Err("a `/*` comment is not closed".to_owned())
        );
        assert_eq!(
            tokenize("s = \"ab").map(|_| ()),
            Err("a string or character literal is not closed".to_owned())
        );
        assert_eq!(
            tokenize("s = \"\\").map(|_| ()),
            Err("a string or character literal is not closed".to_owned())
        );
        assert_eq!(
            tokenize("a = b @ c").map(|_| ()),
            Err("`@` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = é").map(|_| ()),
            Err("`é` cannot appear in a C operation".to_owned())
        );
        // gpu-cuda-source's lexer takes these into names, or as punctuation.
        assert_eq!(
            tokenize("a = b$c").map(|_| ()),
            Err("`$` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = b # c").map(|_| ()),
            Err("`#` cannot appear in a C operation".to_owned())
        );
        assert_eq!(
            tokenize("a = b\n#define c d").map(|_| ()),
            Err("a preprocessor line (`#...`) cannot appear in a C operation".to_owned())
        );
    }
}
