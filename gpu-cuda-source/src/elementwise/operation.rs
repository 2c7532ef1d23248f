//! What the generator reads from an operation's text: whether it names an identifier (`i`
//! makes the contiguous path count in C order), and whether it may read an output before
//! writing it (then the vectorized path loads that output first).

/// True when `name` is a C identifier.
pub fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The spans of `name` in `code` where it stands as a whole word (no identifier byte just
/// before or after it).
fn whole_words<'a>(code: &'a str, name: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
    let bytes = code.as_bytes();
    let is_id = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    std::iter::from_fn(move || {
        let pos = code[from..].find(name)?;
        let (start, end) = (from + pos, from + pos + name.len());
        from = end;
        Some((start, end))
    })
    .filter(move |&(start, end)| {
        (start == 0 || !is_id(bytes[start - 1])) && (end == bytes.len() || !is_id(bytes[end]))
    })
}

/// Whether the word ending just before `start` begins with a digit (`1e5` or `0x1f`: not an
/// identifier).
fn in_number(code: &str, start: usize) -> bool {
    let word_start = code[..start]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |k| k + 1);
    code.as_bytes()
        .get(word_start)
        .is_some_and(|b| b.is_ascii_digit())
}

/// Whether the C text `code` names the identifier `name` anywhere (as a whole word; a member
/// such as `a.i` counts too, which errs on the safe side).
pub fn mentions(code: &str, name: &str) -> bool {
    whole_words(code, name).any(|(start, _)| !in_number(code, start))
}

/// True when the C text `code` indexes the identifier `name` (`name[`, spaces allowed before
/// the bracket, not as a member `a.name[`): PyCUDA's indexed form of an operation.
pub fn indexes(code: &str, name: &str) -> bool {
    whole_words(code, name).any(|(start, end)| {
        let member = code[..start].trim_end().ends_with(['.', '>']);
        !member && !in_number(code, start) && code[end..].trim_start().starts_with('[')
    })
}

/// True when `op` may read `name`, or may leave it unwritten: then the contiguous fast path
/// loads that output before running `op` (it stores the whole chunk back). Only an operation
/// whose first statement is `name = ...`, and that uses `name` nowhere else but in such plain
/// assignments, is known to write it without reading it.
pub fn may_read(op: &str, name: &str) -> bool {
    let first = op.trim_start();
    let unconditional = first.strip_prefix(name).is_some_and(|rest| {
        let rest = rest.trim_start();
        rest.starts_with('=') && !rest.starts_with("==")
    });
    if !unconditional {
        return true;
    }
    whole_words(op, name).any(|(start, end)| {
        let before = op[..start].trim_end();
        let after = op[end..].trim_start();
        let statement_start = before.is_empty() || before.ends_with([';', '{', '}', ')']);
        let plain_assign = after.starts_with('=') && !after.starts_with("==");
        !(statement_start && plain_assign)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_finds_whole_identifiers_only() {
        assert!(mentions("z = x * i", "i"));
        assert!(mentions("z = x[i]+1", "i"));
        assert!(
            mentions("z = a.i", "i"),
            "a member counts, erring on the safe side"
        );
        assert!(!mentions("z = idx + xi + i_2", "i"));
        assert!(!mentions("z = 1e5 * x + 0xi", "i"));
        assert!(!mentions("z = sin(x)", "i"));
    }

    #[test]
    fn reads_are_found() {
        assert!(!may_read("z = a * x + y", "z"));
        assert!(may_read("z += x", "z"));
        assert!(may_read("z = z * 2", "z"));
        assert!(may_read("w = z", "z"));
        // A conditional write keeps the old value where it does not write.
        assert!(may_read("if (x > 0) z = 1;", "z"));
        assert!(!may_read("z = 1; if (x > 0) z = 2;", "z"));
        assert!(may_read("z == 1", "z"));
        // Not written at all: the old value stays.
        assert!(may_read("zz = 1", "z"));
        assert!(!may_read("z = zz", "z"));
    }

    #[test]
    fn indexing_is_found() {
        assert!(indexes("z[i] = a*x[i] + b*y[i]", "x"));
        assert!(indexes("z [i] = 1", "z"));
        assert!(!indexes("z = x", "x"));
        assert!(!indexes("z = xx[i]", "x"));
        assert!(!indexes("z = s.x[0]", "x"));
        assert!(!indexes("z = p->x[0]", "x"));
        assert!(!indexes("z = x + y[0]", "x"));
    }

    #[test]
    fn identifiers() {
        assert!(is_ident("x_1") && is_ident("_x"));
        assert!(!is_ident("1x") && !is_ident("a-b") && !is_ident("") && !is_ident("é"));
    }
}
