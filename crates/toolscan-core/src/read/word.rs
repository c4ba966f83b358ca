//! What a tool name, an in-text call id or a parameter's name may hold.
//!
//! A name is a word no tool would be refused for: no whitespace, control
//! characters, quotes, brackets or other markup punctuation, and no `$` (a
//! placeholder such as `$FUNCTION_NAME` in a prompt's example is no tool),
//! and no `/` at its end: that is the slash of a self-closing tag
//! (`<function=get_time/>`), which no template writes for a call.
//! A block whose name breaks the rule is not a call: its bytes are text
//! (with a diagnostic where the markup is definite).

use crate::lang::format::Field;
use crate::options::Limits;
use crate::read::reason::Reason;

/// Checks a tool name or id: non-empty, bounded, no whitespace, control
/// characters, markup punctuation or `$`, no `/` at its end, UTF-8.
pub(crate) fn check_word<'a>(word: &'a [u8], limits: &Limits) -> Result<&'a str, Reason> {
    let s = check(word, limits, is_word_byte)?;
    if s.ends_with('/') {
        return Err(Reason::SelfClosing);
    }
    Ok(s)
}

/// Checks a captured word of kind `field`: a parameter's name
/// ([`Field::Key`]) may hold a `$`, and its faults are worded as a
/// parameter's; any other word is checked as a name ([`check_word`]).
pub(crate) fn check_field<'a>(
    word: &'a [u8],
    field: Field,
    limits: &Limits,
) -> Result<&'a str, Reason> {
    match field {
        Field::Key => check(word, limits, is_key_byte).map_err(as_key),
        _ => check_word(word, limits),
    }
}

fn check<'a>(word: &'a [u8], limits: &Limits, allowed: fn(u8) -> bool) -> Result<&'a str, Reason> {
    if word.is_empty() {
        return Err(Reason::EmptyName);
    }
    if word.len() > limits.max_name_bytes {
        return Err(Reason::NameTooLong {
            limit: limits.max_name_bytes,
        });
    }
    if let Some(&b) = word.iter().find(|&&b| !allowed(b)) {
        return Err(Reason::NameByte { found: b });
    }
    let s = std::str::from_utf8(word).map_err(|_| Reason::NameNotUtf8)?;
    // A name has a letter or digit in it (`…` in prose is no name).
    if !s.chars().any(char::is_alphanumeric) {
        return Err(Reason::NameByte { found: word[0] });
    }
    Ok(s)
}

/// A fault of a captured word of kind `field`, worded for that kind (a
/// parameter's name is not a tool name).
pub(crate) fn fault_of(field: Field, r: Reason) -> Reason {
    match field {
        Field::Key => as_key(r),
        _ => r,
    }
}

fn as_key(r: Reason) -> Reason {
    match r {
        Reason::EmptyName => Reason::EmptyKey,
        Reason::NameByte { found } => Reason::KeyByte { found },
        Reason::NameSpace => Reason::KeySpace,
        r => r,
    }
}

/// Bytes allowed in names and ids (any non-ASCII byte is).
pub(crate) fn is_word_byte(b: u8) -> bool {
    b >= 0x80 || (b.is_ascii_graphic() && !b"\"'<>{}[]()`;,|\\=$".contains(&b))
}

/// Bytes allowed in a parameter's name: a name's, and `$`.
pub(crate) fn is_key_byte(b: u8) -> bool {
    is_word_byte(b) || b == b'$'
}

/// Bytes a captured word of kind `field` may hold.
pub(crate) fn may_hold(field: Field, b: u8) -> bool {
    match field {
        Field::Key => is_key_byte(b),
        _ => is_word_byte(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        let l = Limits::default();
        assert_eq!(check_word(b"my-tool.v2", &l), Ok("my-tool.v2"));
        assert_eq!(check_word(b"", &l), Err(Reason::EmptyName));
        assert_eq!(
            check_word(b"a b", &l),
            Err(Reason::NameByte { found: b' ' })
        );
        assert!(check_word(b"a<b", &l).is_err());
        assert!(check_word("café".as_bytes(), &l).is_ok());
        assert_eq!(check_word(&[0xC3], &l), Err(Reason::NameNotUtf8));
        assert!(check_word(&[b'a'; 300], &l).is_err());
        assert!(check_word("…".as_bytes(), &l).is_err());
        assert!(check_word(b"-_.", &l).is_err());
        // A self-closing tag's slash is no part of a name; inside, `/` is.
        assert_eq!(check_word(b"get_time/", &l), Err(Reason::SelfClosing));
        assert_eq!(check_word(b"ns/tool", &l), Ok("ns/tool"));
    }

    #[test]
    fn placeholders_are_no_names_but_may_be_keys() {
        let l = Limits::default();
        for bad in [
            &b"$FUNCTION_NAME"[..],
            b"get weather",
            b"\"f\"",
            b"f(x)",
            b"[f]",
        ] {
            assert!(check_word(bad, &l).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_word(b"$FUNCTION_NAME", &l),
            Err(Reason::NameByte { found: b'$' })
        );
        assert_eq!(check_field(b"$ref", Field::Key, &l), Ok("$ref"));
        assert_eq!(
            check_field(b"x>y", Field::Key, &l),
            Err(Reason::KeyByte { found: b'>' })
        );
        assert_eq!(check_field(b"", Field::Key, &l), Err(Reason::EmptyKey));
    }
}
