//! What a tool name or an in-text call id may hold.

use crate::options::Limits;
use crate::reason::Reason;

/// Checks a tool name or id: non-empty, bounded, no whitespace, control
/// characters or markup punctuation, UTF-8.
pub(crate) fn check_word<'a>(word: &'a [u8], limits: &Limits) -> Result<&'a str, Reason> {
    if word.is_empty() {
        return Err(Reason::EmptyName);
    }
    if word.len() > limits.max_name_bytes {
        return Err(Reason::NameTooLong {
            limit: limits.max_name_bytes,
        });
    }
    if let Some(&b) = word.iter().find(|&&b| !is_word_byte(b)) {
        return Err(Reason::NameByte { found: b });
    }
    let s = std::str::from_utf8(word).map_err(|_| Reason::NameNotUtf8)?;
    // A name has a letter or digit in it (`…` in prose is no name).
    if !s.chars().any(char::is_alphanumeric) {
        return Err(Reason::NameByte { found: word[0] });
    }
    Ok(s)
}

/// Bytes allowed in names and ids (any non-ASCII byte is).
pub(crate) fn is_word_byte(b: u8) -> bool {
    b >= 0x80 || (b.is_ascii_graphic() && !b"\"'<>{}[]()`;,|\\=".contains(&b))
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
    }
}
