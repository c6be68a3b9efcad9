//! Deep-read: refused addresses, redirects checked on every hop, limits, extraction.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::ssr::fetch::{deep_read, is_public, FetchError, FetchPolicy};

async fn server() -> SocketAddr {
    let article = format!(
        "<html><head><title>Tokio guide</title></head><body><nav>menu menu menu</nav><article><h1>Tokio guide</h1>{}</article>\
         <footer>footer text</footer></body></html>",
        "<p>Tokio is an asynchronous runtime for Rust. It schedules tasks on a thread pool and drives network IO.</p>".repeat(8)
    );
    let app = Router::new()
        .route(
            "/article",
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                    article.clone(),
                )
            }),
        )
        .route(
            "/plain",
            get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "just text") }),
        )
        .route(
            "/pdf",
            get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], "%PDF") }),
        )
        .route(
            "/huge",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/plain")],
                    "x".repeat(5 * 1024 * 1024),
                )
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }),
        )
        .route(
            "/to-private",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://10.0.0.1/secret")],
                )
                    .into_response()
            }),
        )
        .route(
            "/to-loopback",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://127.0.0.1:9/admin")],
                )
                    .into_response()
            }),
        )
        .route(
            "/to-article",
            get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/article")]).into_response() }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// Lets the test server (on loopback) stand in for a public site, and nothing else.
fn policy(addr: SocketAddr) -> FetchPolicy {
    FetchPolicy {
        allow: HashSet::from([addr]),
        timeout: Duration::from_secs(2),
        ..FetchPolicy::default()
    }
}

#[tokio::test]
async fn private_addresses_are_refused() {
    let policy = FetchPolicy::default();
    for url in [
        "http://127.0.0.1/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://100.100.100.200/",
        "http://localhost:8080/", // a hostname resolving to a private address
    ] {
        let error = deep_read(url, &policy).await.unwrap_err();
        assert!(
            matches!(error, FetchError::Blocked { .. }),
            "{url}: {error:?}"
        );
    }
    for url in [
        "file:///etc/passwd",
        "ftp://example.org/",
        "javascript:alert(1)",
    ] {
        assert!(
            matches!(
                deep_read(url, &policy).await,
                Err(FetchError::NotHttp { .. })
            ),
            "{url}"
        );
    }
}

#[test]
fn address_classes() {
    for ip in [
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700:4700::1111",
        "93.184.216.34",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
        "64:ff9b::808:808",
    ] {
        assert!(is_public(ip.parse().unwrap()), "{ip}");
    }
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00:ec2::254",
        "fc00::1",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",
        "2001:db8::1",
        // IPv4-compatible, 6to4 and NAT64 forms of private addresses.
        "::a00:1",
        "::7f00:1",
        "2002:a00:1::1",
        "2002:7f00:1::",
        "2002:a9fe:a9fe::",
        // Local-use NAT64, site-local, discard, Teredo, benchmarking, documentation.
        "64:ff9b:1::a00:1",
        "64:ff9b:1::808:808",
        "fec0::1",
        "100::1",
        "2001::1",
        "2001:2::1",
        "3fff::1",
        "ff02::1",
    ] {
        assert!(!is_public(ip.parse().unwrap()), "{ip}");
    }
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused() {
    let addr = server().await;
    let policy = policy(addr);
    for path in ["to-private", "to-loopback"] {
        let error = deep_read(&format!("http://{addr}/{path}"), &policy)
            .await
            .unwrap_err();
        assert!(
            matches!(error, FetchError::Blocked { .. }),
            "{path}: {error:?}"
        );
    }
}

#[tokio::test]
async fn readable_text_is_extracted_and_capped() {
    let addr = server().await;
    let policy = policy(addr);
    let page = deep_read(&format!("http://{addr}/to-article"), &policy)
        .await
        .unwrap();
    assert!(
        page.url.ends_with("/article"),
        "redirects are followed: {}",
        page.url
    );
    assert_eq!(page.title, "Tokio guide");
    assert!(
        page.text
            .contains("Tokio is an asynchronous runtime for Rust."),
        "{}",
        page.text
    );
    assert!(
        !page.text.contains("menu menu") && !page.text.contains("footer text"),
        "{}",
        page.text
    );
    let capped = deep_read(
        &format!("http://{addr}/article"),
        &FetchPolicy {
            max_chars: 50,
            ..policy.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(capped.text.chars().count(), 50);
    assert_eq!(
        deep_read(&format!("http://{addr}/plain"), &policy)
            .await
            .unwrap()
            .text,
        "just text"
    );
}

#[tokio::test]
async fn limits_hold() {
    let addr = server().await;
    let policy = policy(addr);
    let huge = deep_read(
        &format!("http://{addr}/huge"),
        &FetchPolicy {
            max_chars: usize::MAX,
            ..policy.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(huge.text.len(), 2 * 1024 * 1024, "at most 2 MB are read");
    assert!(matches!(
        deep_read(&format!("http://{addr}/pdf"), &policy).await,
        Err(FetchError::ContentType { .. })
    ));
    assert!(matches!(
        deep_read(&format!("http://{addr}/slow"), &policy).await,
        Err(FetchError::Timeout { .. })
    ));
}

#[tokio::test]
async fn the_name_lookup_counts_against_the_deadline() {
    // With no time at all, the lookup of a name is cut by the deadline before its answer
    // (loopback, which would be refused) is seen.
    let policy = FetchPolicy {
        timeout: Duration::ZERO,
        ..FetchPolicy::default()
    };
    let error = deep_read("http://localhost:1/", &policy).await.unwrap_err();
    assert!(matches!(error, FetchError::Timeout { .. }), "{error:?}");
}

/// A proxy named in the environment would resolve the page's name itself, around the
/// checked, pinned address, so the reader never uses one. The proxy variables are read when
/// a client is built, so this runs in a child process of its own (the test binary again,
/// this test only) where they are set, leaving the other tests' clients alone.
#[test]
fn proxy_variables_are_ignored() {
    const CHILD: &str = "CITED_TEST_PROXY_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy_addr = proxy.local_addr().unwrap();
        proxy.set_nonblocking(true).unwrap();
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tests::fetch::proxy_variables_are_ignored",
                "--nocapture",
            ])
            .env(CHILD, "1")
            .env("HTTP_PROXY", format!("http://{proxy_addr}"))
            .env("http_proxy", format!("http://{proxy_addr}"))
            .env("ALL_PROXY", format!("http://{proxy_addr}"))
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && printed.contains("1 passed"),
            "{printed}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            proxy.accept().is_err(),
            "nothing ever connected to the proxy"
        );
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let addr = server().await;
        let page = deep_read(&format!("http://{addr}/plain"), &policy(addr))
            .await
            .expect("read directly, not through the proxy");
        assert_eq!(page.text, "just text");
    });
}
