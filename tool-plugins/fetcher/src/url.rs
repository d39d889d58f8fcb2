//! URLs split the way `wasi:http` takes them, redirect targets, and bodies cut to a size: no
//! WASI here, so it is tested natively.

/// A body is cut here when the caller gives no `max-bytes`.
pub const DEFAULT_LIMIT: usize = 256 << 10;
/// Nor is more kept when the caller asks for more.
pub const MAX_LIMIT: usize = 16 << 20;

pub fn body_limit(max_bytes: Option<u32>) -> usize {
    max_bytes.map_or(DEFAULT_LIMIT, |n| (n as usize).min(MAX_LIMIT))
}

/// Where a request goes: what `outgoing-request`'s setters take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub https: bool,
    pub authority: String,
    pub path_and_query: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target, String> {
        let url = url.trim();
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!("not an absolute http:// or https:// URL: {url}"));
        };
        let https = match scheme.to_ascii_lowercase().as_str() {
            "http" => false,
            "https" => true,
            other => {
                return Err(format!(
                    "only http and https URLs can be fetched, not {other}: {url}"
                ));
            }
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        check_authority(authority, url)?;
        Ok(Target {
            https,
            authority: authority.to_string(),
            path_and_query: normalized(&rest[end..]),
        })
    }

    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path_and_query)
    }

    /// The target of a redirect to `location`: an absolute URL, `//host/path`, `/path`,
    /// `?query` or a path relative to this one.
    pub fn join(&self, location: &str) -> Result<Target, String> {
        let location = location.trim();
        if has_scheme(location) {
            return Target::parse(location);
        }
        if let Some(rest) = location.strip_prefix("//") {
            let scheme = if self.https { "https" } else { "http" };
            return Target::parse(&format!("{scheme}://{rest}"));
        }
        let path = self.path_and_query.split('?').next().unwrap_or("/");
        let location = location.split('#').next().unwrap_or_default();
        let joined = if location.is_empty() {
            self.path_and_query.clone()
        } else if location.starts_with('/') {
            location.to_string()
        } else if location.starts_with('?') {
            format!("{path}{location}")
        } else {
            let directory = &path[..path.rfind('/').map_or(0, |at| at + 1)];
            format!("{directory}{location}")
        };
        Ok(Target {
            https: self.https,
            authority: self.authority.clone(),
            path_and_query: normalized(&joined),
        })
    }
}

pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// `scheme:` before any `/`, `?` or `#`.
fn has_scheme(reference: &str) -> bool {
    let Some(colon) = reference.find(':') else {
        return false;
    };
    let scheme = &reference[..colon];
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn check_authority(authority: &str, url: &str) -> Result<(), String> {
    if authority.contains('@') {
        return Err(format!(
            "user names and passwords in URLs are not supported: {url}"
        ));
    }
    let (host, port) = if let Some(inner) = authority.strip_prefix('[') {
        let Some((address, after)) = inner.split_once(']') else {
            return Err(format!("unclosed [ in the host of {url}"));
        };
        match after.strip_prefix(':') {
            Some(port) => (address, Some(port)),
            None if after.is_empty() => (address, None),
            None => return Err(format!("unexpected text after ] in {url}")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("no valid host in {url}"));
    }
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u16>().is_err())
    {
        return Err(format!("invalid port {port:?} in {url}"));
    }
    Ok(())
}

/// A path with its query as a request line carries it: the fragment dropped, a leading `/`,
/// dot segments resolved, and bytes a URI cannot hold percent-encoded.
fn normalized(reference: &str) -> String {
    let reference = reference.split('#').next().unwrap_or_default();
    let (path, query) = match reference.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (reference, None),
    };
    let path = if path.starts_with('/') {
        remove_dot_segments(path)
    } else {
        remove_dot_segments(&format!("/{path}"))
    };
    let mut out = encoded(&path);
    if let Some(query) = query {
        out.push('?');
        out.push_str(&encoded(query));
    }
    out
}

fn remove_dot_segments(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut segments = path.split('/').skip(1).peekable();
    while let Some(segment) = segments.next() {
        let last = segments.peek().is_none();
        match segment {
            "." | ".." => {
                if segment == ".." {
                    kept.pop();
                }
                // `/a/b/..` names the directory `/a/`, so the slash stays.
                if last {
                    kept.push("");
                }
            }
            _ => kept.push(segment),
        }
    }
    format!("/{}", kept.join("/"))
}

fn encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte <= b' ' || byte >= 0x7f || b"\"<>\\^`{|}".contains(&byte) {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(char::from(byte));
        }
    }
    out
}

/// The body as the caller sees it: at most `limit` bytes, not ending in half a character,
/// and whether it was cut. A body with NUL bytes is binary and shown only by its size.
pub fn body_text(mut bytes: Vec<u8>, limit: usize) -> (String, bool) {
    let truncated = bytes.len() > limit;
    if truncated {
        bytes.truncate(limit);
        drop_partial_character(&mut bytes);
    }
    if bytes.contains(&0) {
        let size = if truncated {
            format!("more than {limit} bytes")
        } else {
            format!("{} bytes", bytes.len())
        };
        return (format!("[binary content, {size}, not shown]"), truncated);
    }
    (String::from_utf8_lossy(&bytes).into_owned(), truncated)
}

/// Removes a UTF-8 sequence left incomplete at the end by a cut.
fn drop_partial_character(bytes: &mut Vec<u8>) {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let byte = bytes[len - back];
        if byte & 0xc0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => 1,
        };
        if needed > back {
            bytes.truncate(len - back);
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(https: bool, authority: &str, path_and_query: &str) -> Target {
        Target {
            https,
            authority: authority.to_string(),
            path_and_query: path_and_query.to_string(),
        }
    }

    #[test]
    fn urls_split_into_scheme_authority_and_path() {
        assert_eq!(
            Target::parse("http://127.0.0.1:8080/a/b?x=1#top"),
            Ok(target(false, "127.0.0.1:8080", "/a/b?x=1"))
        );
        assert_eq!(
            Target::parse(" HTTPS://example.org "),
            Ok(target(true, "example.org", "/"))
        );
        assert_eq!(
            Target::parse("http://[::1]:3000?q"),
            Ok(target(false, "[::1]:3000", "/?q"))
        );
        assert_eq!(
            Target::parse("http://h/a b/ü?q=\"x\"").map(|t| t.path_and_query),
            Ok("/a%20b/%C3%BC?q=%22x%22".to_string())
        );
        assert_eq!(
            Target::parse("http://h/a/./b/../c").map(|t| t.url()),
            Ok("http://h/a/c".to_string())
        );
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        for (url, reason) in [
            ("ftp://example.org/", "only http and https"),
            ("example.org/page", "absolute"),
            ("file:///etc/passwd", "only http and https"),
            ("http:///path", "no valid host"),
            ("http://user:pw@host/", "passwords"),
            ("http://host:99999/", "invalid port"),
            ("http://host:/", "invalid port"),
            ("http://[::1/", "unclosed"),
        ] {
            let error = Target::parse(url).unwrap_err();
            assert!(error.contains(reason), "{url}: {error}");
        }
    }

    #[test]
    fn redirect_locations_resolve_against_the_current_url() {
        let base = target(false, "h:1", "/docs/guide/intro.html?v=2");
        let cases = [
            ("https://other.example/x", "https://other.example/x"),
            ("//cdn.example/lib.js", "http://cdn.example/lib.js"),
            ("/login?next=%2F", "http://h:1/login?next=%2F"),
            ("?v=3", "http://h:1/docs/guide/intro.html?v=3"),
            ("setup.html", "http://h:1/docs/guide/setup.html"),
            ("../api/", "http://h:1/docs/api/"),
            ("../../../../x", "http://h:1/x"),
            ("#part", "http://h:1/docs/guide/intro.html?v=2"),
        ];
        for (location, expected) in cases {
            assert_eq!(
                base.join(location).map(|t| t.url()),
                Ok(expected.to_string()),
                "{location}"
            );
        }
        assert!(base.join("mailto:a@b").is_err());
        assert!(is_redirect(302) && is_redirect(308) && !is_redirect(304) && !is_redirect(200));
    }

    #[test]
    fn bodies_are_cut_on_character_boundaries() {
        assert_eq!(body_text(b"hello".to_vec(), 10), ("hello".to_string(), false));
        assert_eq!(body_text(b"hello".to_vec(), 5), ("hello".to_string(), false));
        assert_eq!(body_text(b"hello!".to_vec(), 5), ("hello".to_string(), true));
        // "aé€😀" is 1 + 2 + 3 + 4 bytes: a cut inside any of them drops it whole.
        let text = "aé€😀".as_bytes().to_vec();
        let cut = |limit| body_text(text.clone(), limit).0;
        assert_eq!(cut(2), "a");
        assert_eq!(cut(3), "aé");
        assert_eq!(cut(5), "aé");
        assert_eq!(cut(6), "aé€");
        assert_eq!(cut(9), "aé€");
        assert_eq!(body_text(text.clone(), 10), ("aé€😀".to_string(), false));
        assert_eq!(body_text(vec![0xff, b'a'], 10).0, "\u{fffd}a");
    }

    #[test]
    fn binary_bodies_are_shown_by_size() {
        assert_eq!(
            body_text(vec![0x89, b'P', 0, 0], 100),
            ("[binary content, 4 bytes, not shown]".to_string(), false)
        );
        assert_eq!(
            body_text(vec![0; 8], 4).0,
            "[binary content, more than 4 bytes, not shown]"
        );
    }

    #[test]
    fn limits_default_and_cap() {
        assert_eq!(body_limit(None), DEFAULT_LIMIT);
        assert_eq!(body_limit(Some(10)), 10);
        assert_eq!(body_limit(Some(u32::MAX)), MAX_LIMIT);
    }
}
