//! An upstream URL as it may be printed: in logs, errors and `Debug`.

/// `url` as it may be printed: a user and password in it
/// (`http://admin:S3CRET@host`) become `***` (`http://***@host`).
pub(crate) fn redact(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(at) => url.split_at(at + 3),
        None => ("", url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn userinfo_is_redacted() {
        assert_eq!(redact("http://admin:S3CRET@h:8/v1"), "http://***@h:8/v1");
        assert_eq!(redact("https://tok@h"), "https://***@h");
        assert_eq!(redact("http://h:8/a@b"), "http://h:8/a@b");
        assert_eq!(redact("ftp://a:b@c@h"), "ftp://***@h");
        assert_eq!(redact("a:b@h"), "***@h");
    }
}
