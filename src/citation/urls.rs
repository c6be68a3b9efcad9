//! Small, dependency-free URL helpers for the citation core: which URLs may become links,
//! the domain shown beside a source, and the normalised form used to spot duplicates.

/// Where the knowledge base's documents are served, same-origin.
pub const KNOWLEDGE_PREFIX: &str = "/knowledge/";

/// True for the links cited renders: absolute web URLs ([`is_web_link`]) and this
/// server's own knowledge-base pages ([`is_knowledge_link`]). Everything else
/// (`javascript:`, `data:`, `vbscript:`, protocol-relative `//host`, other relative paths,
/// URLs with spaces or control characters) is refused, so it can never become a link.
pub fn is_safe_link(url: &str) -> bool {
    is_web_link(url) || is_knowledge_link(url)
}

/// True for absolute `http://` and `https://` URLs with a host and no whitespace, control
/// characters or backslashes. Search results and links the model writes must be these.
pub fn is_web_link(url: &str) -> bool {
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return false;
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    !host_of(rest).is_empty()
}

/// True for exactly what the knowledge base links to: `/knowledge/<path>[?p=<n>][#passage]`
/// with the path percent-encoded, no empty, `.` or `..` segment (encoded dots included) and
/// no encoded slash or backslash.
pub fn is_knowledge_link(url: &str) -> bool {
    let Some(rest) = url.strip_prefix(KNOWLEDGE_PREFIX) else {
        return false;
    };
    let rest = rest.strip_suffix("#passage").unwrap_or(rest);
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    if let Some(query) = query {
        let Some(number) = query.strip_prefix("p=") else {
            return false;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    let allowed =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/' | b'%');
    if path.is_empty() || !path.bytes().all(allowed) {
        return false;
    }
    let lower = path.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") || lower.contains("%00") {
        return false;
    }
    lower
        .replace("%2e", ".")
        .split('/')
        .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// The lowercase host of an http(s) URL without `www.` and port: `example.org` for
/// `https://WWW.Example.org:8443/a`. Empty when there is none.
pub fn domain(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = host_of(rest).to_ascii_lowercase();
    host.strip_prefix("www.")
        .map(str::to_string)
        .unwrap_or(host)
}

/// Where cited serves the favicon of `url`'s site, on its own origin:
/// `/media/icon?site=<scheme://host[:port]>`. Web links only.
pub fn icon_path(url: &str) -> Option<String> {
    if !is_web_link(url) {
        return None;
    }
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let origin = format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host_port.to_ascii_lowercase()
    );
    let encoded: String = origin
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    Some(format!("/media/icon?site={encoded}"))
}

/// The authority's host: between `//` (already removed) and the first `/`, `?` or `#`,
/// without user info or port.
fn host_of(rest: &str) -> &str {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if let Some(bracketed) = host_port.strip_prefix('[') {
        // An IPv6 literal: keep the brackets.
        return match bracketed.find(']') {
            Some(end) => &host_port[..end + 2],
            None => "",
        };
    }
    host_port.split(':').next().unwrap_or("")
}

/// The form two URLs share when they are "the same page" for deduplication: scheme
/// dropped, host lowercased without `www.`, fragment and `utm_*` parameters removed, and no
/// trailing slash on the path.
pub fn normalise(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let rest = rest.split('#').next().unwrap_or("");
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match before_query.find('/') {
        Some(idx) => before_query.split_at(idx),
        None => (before_query, ""),
    };
    let authority = authority.to_ascii_lowercase();
    let authority = authority.strip_prefix("www.").unwrap_or(&authority);
    let path = path.trim_end_matches('/');
    let mut normalised = format!("{authority}{path}");
    if let Some(query) = query {
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.is_empty() && !pair.to_ascii_lowercase().starts_with("utm_"))
            .collect();
        if !kept.is_empty() {
            normalised.push('?');
            normalised.push_str(&kept.join("&"));
        }
    }
    normalised
}

/// `url` opened at `passage`: a text fragment (`#:~:text=start,end`, with the first and
/// last words of a long passage) that browsers supporting it scroll to and highlight; the
/// others open the page. `None` for anything but a web link.
pub fn text_fragment(url: &str, passage: &str) -> Option<String> {
    if !is_web_link(url) || passage.trim().is_empty() {
        return None;
    }
    let base = url.split('#').next().unwrap_or(url);
    // Words: spaced words, or single characters of unspaced (Chinese) text.
    let spaced = passage.split_whitespace().count() > 1;
    let units: Vec<&str> = if spaced {
        passage.split_whitespace().collect()
    } else {
        passage
            .char_indices()
            .map(|(idx, c)| &passage[idx..idx + c.len_utf8()])
            .collect()
    };
    let take = if spaced { 4 } else { 8 };
    let join = |words: &[&str]| words.join(if spaced { " " } else { "" });
    let directive = if units.len() <= take * 2 {
        fragment_encode(&join(&units))
    } else {
        format!(
            "{},{}",
            fragment_encode(&join(&units[..take])),
            fragment_encode(&join(&units[units.len() - take..]))
        )
    };
    Some(format!("{base}#:~:text={directive}"))
}

/// Percent-encodes all but unreserved characters, so `,` `-` and `&` (which text fragments
/// use as syntax) stay text.
fn fragment_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn favicons_come_from_cited_for_web_links_only() {
        assert_eq!(
            icon_path("https://Docs.RS/tokio?x=1#y").as_deref(),
            Some("/media/icon?site=https%3A%2F%2Fdocs.rs")
        );
        assert_eq!(
            icon_path("http://user:pw@127.0.0.1:8080/a").as_deref(),
            Some("/media/icon?site=http%3A%2F%2F127.0.0.1%3A8080")
        );
        for refused in [
            "javascript:alert(1)",
            "/knowledge/docs/faq.md",
            "data:image/png;base64,xx",
            "https://exa mple.org/",
        ] {
            assert_eq!(icon_path(refused), None, "{refused}");
        }
    }

    #[test]
    fn safe_links() {
        for url in [
            "https://example.org",
            "http://example.org/a?b=c#d",
            "HTTPS://Example.org/path",
            "https://user@example.org:8443/",
            "http://[::1]:8080/x",
            "/knowledge/docs/faq.zh-CN.md?p=1#passage",
            "/knowledge/notes/%E6%8C%87%E5%8D%97.md",
        ] {
            assert!(is_safe_link(url), "{url}");
        }
        for url in [
            "javascript:alert(1)",
            "JavaScript://%0aalert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox(1)",
            "//evil.example/x",
            "/relative",
            "/knowledge/",
            "/knowledge//evil.example/x",
            "/knowledge/../secret",
            "/knowledge/%2e%2e/secret",
            "/knowledge/docs/%2E%2e",
            "/knowledge/docs%2f..%2fsecret",
            "/knowledge/a b",
            "/knowledge/a?q=1",
            "/knowledge/a?p=1&x=2",
            "/knowledge/a#elsewhere",
            "/knowledge/a/<script>",
            "https://",
            "https:///path",
            "ftp://example.org",
            "https://exa mple.org",
            "https://example.org/\u{0}",
            "http:\\\\evil.example",
            "",
        ] {
            assert!(!is_safe_link(url), "{url:?}");
        }
        // Search results and model-written links must be on the web.
        assert!(!is_web_link("/knowledge/docs/faq.zh-CN.md"));
        assert!(is_web_link("https://example.org/"));
    }

    #[test]
    fn domains() {
        assert_eq!(domain("https://WWW.Example.org:8443/a"), "example.org");
        assert_eq!(
            domain("https://docs.example.org/tokio/"),
            "docs.example.org"
        );
        assert_eq!(domain("https://user:pw@example.org"), "example.org");
        assert_eq!(domain("http://[::1]:80/"), "[::1]");
        assert_eq!(domain("not a url"), "not a url");
    }

    #[test]
    fn normalised_duplicates() {
        let same = [
            "https://www.example.com/blog/post/",
            "http://example.com/blog/post",
            "https://EXAMPLE.com/blog/post#section",
            "https://example.com/blog/post?utm_source=x&utm_medium=y",
        ];
        for url in same {
            assert_eq!(normalise(url), "example.com/blog/post", "{url}");
        }
        assert_eq!(
            normalise("https://example.com/p?id=3&utm_campaign=z"),
            "example.com/p?id=3"
        );
        assert_ne!(
            normalise("https://example.com/p?id=3"),
            normalise("https://example.com/p?id=4")
        );
        // The path keeps its case: only the host is case-insensitive.
        assert_ne!(
            normalise("https://example.com/A"),
            normalise("https://example.com/a")
        );
    }

    #[test]
    fn text_fragments_quote_the_ends_of_a_passage_and_escape_their_syntax() {
        assert_eq!(
            text_fragment(
                "https://example.org/a#top",
                "Tokio 1.50, a fast-paced release"
            ),
            Some(
                "https://example.org/a#:~:text=Tokio%201.50%2C%20a%20fast%2Dpaced%20release"
                    .to_string()
            )
        );
        assert_eq!(
            text_fragment(
                "https://example.org/b",
                "one two three four five six seven eight nine ten"
            ),
            Some(
                "https://example.org/b#:~:text=one%20two%20three%20four,seven%20eight%20nine%20ten"
                    .to_string()
            )
        );
        let chinese = text_fragment(
            "https://example.cn/c",
            "埃菲尔铁塔建于1887年至1889年，高度约330米。",
        )
        .unwrap_or_default();
        assert!(
            chinese.starts_with("https://example.cn/c#:~:text=%E5%9F%83"),
            "{chinese}"
        );
        assert!(chinese.contains(','), "{chinese}");
        assert_eq!(text_fragment("/knowledge/README.md#p3", "text"), None);
        assert_eq!(text_fragment("javascript:alert(1)", "text"), None);
    }
}
