//! Deep-read: fetch one web page safely and extract its readable text (Research mode).
//!
//! Server-side fetching is an SSRF risk, so every hop is checked: only http(s); the host is
//! resolved first and every address must be public (no loopback, private, link-local,
//! CGNAT, metadata, multicast or reserved ranges, IPv4-mapped or NAT64 forms included); the
//! connection is pinned to the checked address, so DNS cannot change its answer between the
//! check and the connect; redirects are followed by hand and checked again. At most 2 MB
//! are read, within a timeout, and only text/html and text/plain are accepted. The text is
//! extracted with `dom_smoothie` (a Readability port) and capped at 15,000 characters.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use url::Url;

#[derive(Debug, Clone)]
pub struct FetchPolicy {
    pub timeout: Duration,
    pub max_bytes: usize,
    pub max_chars: usize,
    pub max_redirects: usize,
    /// Addresses treated as public although they are not: for tests against local servers.
    pub allow: HashSet<SocketAddr>,
    /// Reads at once across the app (`CITED_MAX_PAGE_READS`); none: unlimited.
    pub readers: Option<std::sync::Arc<tokio::sync::Semaphore>>,
}

impl Default for FetchPolicy {
    fn default() -> FetchPolicy {
        FetchPolicy {
            timeout: Duration::from_secs(10),
            max_bytes: 2 * 1024 * 1024,
            max_chars: 15_000,
            max_redirects: 5,
            allow: HashSet::new(),
            readers: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("only http and https pages can be read: {url}")]
    NotHttp { url: String },
    #[error("{host} is a private or reserved address ({addr}); cited does not fetch those")]
    Blocked { host: String, addr: IpAddr },
    #[error("cannot resolve {host}")]
    Resolve { host: String },
    #[error("reading {url} took longer than {} s", after.as_secs())]
    Timeout { url: String, after: Duration },
    #[error("{url} answered {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is {content_type}, not a kind cited reads here")]
    ContentType { url: String, content_type: String },
    #[error("more than {0} redirects")]
    TooManyRedirects(usize),
    #[error("no readable text in {url}")]
    NoText { url: String },
    #[error("request to {url} failed")]
    Transport {
        url: String,
        #[source]
        source: reqwest::Error,
    },
}

/// A page's readable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where the text came from, after redirects.
    pub url: String,
    pub title: String,
    pub text: String,
}

/// True for addresses on the public internet: public IPv4, and IPv6 global unicast
/// (2000::/3) outside the documentation and IETF-assignment blocks. An IPv6 address that
/// carries an IPv4 one (mapped, compatible, 6to4, NAT64) is judged by the IPv4 address;
/// everything else (site-local, discard, local-use NAT64, Teredo, unique local, …) is not
/// public.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return is_public_v4(v4);
            }
            let segments = v6.segments();
            (segments[0] & 0xe000) == 0x2000 // global unicast 2000::/3
                && !(segments[0] == 0x2001 && segments[1] < 0x0200) // 2001::/23: Teredo, benchmarking, ORCHID…
                && !(segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
                && !(segments[0] == 0x3fff && segments[1] < 0x1000) // documentation 3fff::/20
        }
    }
}

/// The IPv4 address an IPv6 address carries by a standard encoding: IPv4-mapped
/// (::ffff:0:0/96), IPv4-compatible (::/96), 6to4 (2002::/16) and NAT64 (64:ff9b::/96).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, high, low] | [0, 0, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        [0x2002, high, low, ..] => Some(v4(high, low)),
        _ => None,
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16, incl. the cloud metadata address
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10 (incl. 100.100.100.200)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

/// The public address `url` may be fetched from, or why not.
async fn checked_address(
    url: &Url,
    policy: &FetchPolicy,
    deadline: tokio::time::Instant,
) -> Result<SocketAddr, FetchError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::NotHttp {
            url: url.to_string(),
        });
    }
    let host = url.host_str().ok_or_else(|| FetchError::NotHttp {
        url: url.to_string(),
    })?;
    let port = url.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        // The lookup counts against the page's deadline like the rest of the read (and is
        // not started past it).
        Err(_) if tokio::time::Instant::now() >= deadline => {
            return Err(FetchError::Timeout {
                url: url.to_string(),
                after: policy.timeout,
            })
        }
        Err(_) => {
            match tokio::time::timeout_at(deadline, tokio::net::lookup_host((bare, port))).await {
                Err(_) => {
                    return Err(FetchError::Timeout {
                        url: url.to_string(),
                        after: policy.timeout,
                    })
                }
                Ok(Err(_)) => {
                    return Err(FetchError::Resolve {
                        host: host.to_string(),
                    })
                }
                Ok(Ok(addrs)) => addrs.collect(),
            }
        }
    };
    if addrs.is_empty() {
        return Err(FetchError::Resolve {
            host: host.to_string(),
        });
    }
    // Every address must be public: a name with one private answer is refused outright.
    for addr in &addrs {
        if !is_public(addr.ip()) && !policy.allow.contains(addr) {
            return Err(FetchError::Blocked {
                host: host.to_string(),
                addr: addr.ip(),
            });
        }
    }
    Ok(addrs[0])
}

/// A response body as fetched: where it ended up after redirects, its type and at most
/// `max_bytes` of it.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub url: String,
    /// Lowercase, parameters included (`text/html; charset=utf-8`).
    pub content_type: String,
    pub body: Vec<u8>,
    /// The body went on past `max_bytes` and was cut there.
    pub cut: bool,
}

/// Fetches `url` under `policy`: public addresses only (checked on every redirect, the
/// connection pinned to the checked address), within the deadline, at most `max_bytes`.
/// A response whose content type `accepts` refuses is not read.
pub async fn fetch(
    url: &str,
    policy: &FetchPolicy,
    accept: &str,
    accepts: impl Fn(&str) -> bool,
) -> Result<Fetched, FetchError> {
    crate::ssr::net::install_crypto_provider();
    let mut current = Url::parse(url).map_err(|_| FetchError::NotHttp {
        url: url.to_string(),
    })?;
    let deadline = tokio::time::Instant::now() + policy.timeout;
    // Waiting for a turn counts against the deadline too.
    let _turn = match &policy.readers {
        Some(readers) => {
            match tokio::time::timeout_at(deadline, std::sync::Arc::clone(readers).acquire_owned())
                .await
            {
                Ok(permit) => permit.ok(),
                Err(_) => {
                    return Err(FetchError::Timeout {
                        url: current.to_string(),
                        after: policy.timeout,
                    })
                }
            }
        }
        None => None,
    };
    for _hop in 0..=policy.max_redirects {
        let response = request(&current, policy, accept, deadline).await?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .unwrap_or("");
            current = current.join(location).map_err(|_| FetchError::NotHttp {
                url: location.to_string(),
            })?;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::Status {
                url: current.to_string(),
                status: status.as_u16(),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !accepts(&content_type) {
            return Err(FetchError::ContentType {
                url: current.to_string(),
                content_type,
            });
        }
        let (body, cut) = read_body(response, &current, policy, deadline).await?;
        return Ok(Fetched {
            url: current.to_string(),
            content_type,
            body,
            cut,
        });
    }
    Err(FetchError::TooManyRedirects(policy.max_redirects))
}

/// One GET of `url`, redirects not followed, on a connection pinned to the address
/// checked for it, by the deadline.
async fn request(
    url: &Url,
    policy: &FetchPolicy,
    accept: &str,
    deadline: tokio::time::Instant,
) -> Result<reqwest::Response, FetchError> {
    let addr = checked_address(url, policy, deadline).await?;
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, around the pinned, checked address.
        .no_proxy()
        .resolve(&host, addr)
        .user_agent(crate::ssr::net::USER_AGENT_VALUE)
        .build()
        .map_err(|source| FetchError::Transport {
            url: url.to_string(),
            source,
        })?;
    let send = client.get(url.clone()).header("accept", accept).send();
    match tokio::time::timeout_at(deadline, send).await {
        Err(_) => Err(FetchError::Timeout {
            url: url.to_string(),
            after: policy.timeout,
        }),
        Ok(Err(source)) => Err(FetchError::Transport {
            url: url.to_string(),
            source,
        }),
        Ok(Ok(response)) => Ok(response),
    }
}

/// The response's body, at most `max_bytes` of it (the rest is never downloaded; true
/// when it was cut), by the deadline.
async fn read_body(
    response: reqwest::Response,
    url: &Url,
    policy: &FetchPolicy,
    deadline: tokio::time::Instant,
) -> Result<(Vec<u8>, bool), FetchError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    loop {
        let next = tokio::time::timeout_at(deadline, chunks.next())
            .await
            .map_err(|_| FetchError::Timeout {
                url: url.to_string(),
                after: policy.timeout,
            })?;
        match next {
            None => return Ok((body, false)),
            Some(Ok(chunk)) => {
                let room = policy.max_bytes - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() >= policy.max_bytes {
                    return Ok((body, chunk.len() > room));
                }
            }
            Some(Err(source)) => {
                return Err(FetchError::Transport {
                    url: url.to_string(),
                    source,
                })
            }
        }
    }
}

/// A page's bytes as text in its own encoding (GBK, Big5, Shift-JIS…): the `charset` of its
/// Content-Type, else a `<meta charset>` or `http-equiv` one in its first 1024 bytes, else
/// UTF-8 (a byte-order mark wins over all). Bytes the encoding cannot map become U+FFFD.
pub fn decode(body: &[u8], content_type: &str) -> String {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let declared = charset(content_type).or_else(|| charset(&head));
    let encoding = declared
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0.into_owned()
}

/// The value after `charset=` in `text`, without quotes.
fn charset(text: &str) -> Option<&str> {
    let at = text.find("charset=")? + "charset=".len();
    let value = text[at..].trim_start_matches(['"', '\'', ' ']);
    let end = value
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')))
        .unwrap_or(value.len());
    (end > 0).then(|| &value[..end])
}

/// Fetches `url` and returns its readable text.
pub async fn deep_read(url: &str, policy: &FetchPolicy) -> Result<Page, FetchError> {
    let is_html = |content_type: &str| {
        content_type.starts_with("text/html") || content_type.starts_with("application/xhtml")
    };
    let fetched = fetch(url, policy, "text/html,text/plain;q=0.9", |content_type| {
        is_html(content_type) || content_type.starts_with("text/plain")
    })
    .await?;
    let raw = decode(&fetched.body, &fetched.content_type);
    let (title, text) = if is_html(&fetched.content_type) {
        // Up to 2 MB of HTML: parsed off the async workers.
        let url = fetched.url.clone();
        crate::ssr::blocking::run(move || readable(&raw, &url))
            .await
            .unwrap_or_default()
    } else {
        (String::new(), raw)
    };
    let text: String = text.trim().chars().take(policy.max_chars).collect();
    if text.is_empty() {
        return Err(FetchError::NoText { url: fetched.url });
    }
    Ok(Page {
        url: fetched.url,
        title,
        text,
    })
}

/// Title and readable text of an HTML page, by Readability. Short pages count too (the
/// default threshold of 500 characters would drop encyclopedia stubs).
fn readable(html: &str, url: &str) -> (String, String) {
    let config = dom_smoothie::Config {
        char_threshold: 100,
        ..dom_smoothie::Config::default()
    };
    match dom_smoothie::Readability::new(html, Some(url), Some(config)).and_then(|mut r| r.parse())
    {
        Ok(article) => (article.title, collapse(&article.text_content)),
        Err(error) => {
            tracing::debug!(%error, url, "no readable article");
            (String::new(), String::new())
        }
    }
}

/// Collapses runs of blank lines and spaces.
fn collapse(text: &str) -> String {
    text.lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn pages_are_decoded_in_the_encoding_they_declare() {
        let text = "长城是中国古代的军事防御工程。";
        let (gbk, _, _) = encoding_rs::GBK.encode(text);
        // From the header, from a meta tag (either form), and UTF-8 when nothing says.
        assert_eq!(decode(&gbk, "text/html; charset=gbk"), text);
        let page = [
            b"<html><head><meta charset=\"GB2312\"></head><body>".as_slice(),
            &gbk,
        ]
        .concat();
        assert!(decode(&page, "text/html").ends_with(text));
        let page = [
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb18030\">".as_slice(),
            &gbk,
        ]
        .concat();
        assert!(decode(&page, "text/html").ends_with(text));
        let (big5, _, _) = encoding_rs::BIG5.encode("台北的捷運");
        assert_eq!(decode(&big5, "text/html;charset=big5"), "台北的捷運");
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("東京の地下鉄");
        assert_eq!(
            decode(&sjis, "text/plain; charset=\"Shift_JIS\""),
            "東京の地下鉄"
        );
        assert_eq!(decode(text.as_bytes(), "text/html"), text);
        // Before this, a GBK page was read as UTF-8: nothing of it survived.
        assert!(!String::from_utf8_lossy(&gbk).contains("长城"));
    }
}
