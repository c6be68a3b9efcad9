//! The image strip and favicons through cited: pictures from SearXNG's images category
//! (the real SearXNG, a fixture engine), fetched and kept by the server, served from its
//! own origin with a signature, never SVG, never from a private address it was not told
//! to reach.

use std::sync::Arc;

use reqwest::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};

use super::searxng::{self, PICTURE_HITS, PNG};
use super::{browser, TestServer};
use crate::model::{AnswerEvent, Mode};
use crate::ssr::llm::extractive::Extractive;
use crate::ssr::pipeline::TurnInput;
use crate::ssr::state::AppState;

fn vars() -> Vec<(&'static str, String)> {
    vec![
        ("CITED_IMAGES", "on".into()),
        ("CITED_FETCH_ALLOW", searxng::fixture_server().to_string()),
    ]
}

fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test]
async fn the_strip_shows_up_to_six_pictures_that_load() {
    let vars = vars();
    let mut state = AppState::new(super::pipeline_config(
        &searxng::shared().url,
        &borrowed(&vars),
    ));
    state.llm = Arc::new(Extractive);
    let (exchange, events) = super::answer_collecting(
        &state,
        TurnInput::standalone("rust async runtime".into(), Mode::Chat),
    )
    .await;
    let pages: Vec<&str> = exchange.images.iter().map(|i| i.page.as_str()).collect();
    // The SVG and the javascript: thumbnail are left out; six of the seven PNGs stay.
    assert_eq!(
        pages,
        (1..=6)
            .map(|i| format!("https://img.example.org/rust/{i}"))
            .collect::<Vec<_>>()
    );
    for image in &exchange.images {
        assert!(
            image
                .thumbnail
                .starts_with("/media/image?u=http%3A%2F%2F127.0.0.1"),
            "{}",
            image.thumbnail
        );
        assert_eq!(image.domain, "img.example.org");
    }
    // The strip comes before the answer's first words.
    let strip = events
        .iter()
        .position(|e| matches!(e, AnswerEvent::Images { images } if images.len() == 6));
    let first_token = events
        .iter()
        .position(|e| matches!(e, AnswerEvent::Token { .. }));
    assert!(strip.is_some() && strip < first_token, "{events:?}");
    // The web sources are the usual ones: pictures are not sources.
    assert!(exchange
        .sources
        .iter()
        .all(|s| !s.url.contains("img.example.org")));

    // Off: no images search at all.
    let off = AppState::new(super::pipeline_config(&searxng::shared().url, &[]));
    let (exchange, _) = super::answer_collecting(
        &off,
        TurnInput::standalone("rust async runtime".into(), Mode::Chat),
    )
    .await;
    assert!(exchange.images.is_empty());
}

fn hits(name: &str) -> usize {
    PICTURE_HITS
        .lock()
        .unwrap()
        .iter()
        .filter(|hit| *hit == name)
        .count()
}

#[tokio::test]
async fn pictures_and_favicons_are_served_from_cited_signed_checked_and_kept() {
    let vars = vars();
    let server = TestServer::start(&borrowed(&vars)).await;
    let client = browser();
    let fixture = searxng::fixture_server();
    let store = &server.state.store;
    let media = &server.state.media;

    let src = format!("http://{fixture}/pic/5.png");
    let path = media.image_path(store, &src).await.unwrap();
    let before = hits("5.png");
    for _ in 0..2 {
        let response = client.get(server.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let headers = response.headers().clone();
        assert_eq!(
            headers[CONTENT_TYPE], "image/png",
            "from the bytes, not the header"
        );
        assert_eq!(headers[X_CONTENT_TYPE_OPTIONS], "nosniff");
        // The media's own sandbox, not the page's policy laid over it.
        assert_eq!(
            headers[CONTENT_SECURITY_POLICY],
            "default-src 'none'; sandbox"
        );
        assert_eq!(response.bytes().await.unwrap().as_ref(), PNG);
    }
    assert_eq!(
        hits("5.png"),
        before + 1,
        "the second came from the disk cache"
    );

    // A signature for another address, or none, is refused before anything is fetched.
    let forged = path.replace("5.png", "6.png");
    let response = client.get(server.url(&forged)).send().await.unwrap();
    assert_eq!(response.status(), 403);
    let unsigned = format!("/media/image?u={}", urlencode(&src));
    assert_eq!(
        client
            .get(server.url(&unsigned))
            .send()
            .await
            .unwrap()
            .status(),
        403
    );

    // An SVG (scripts) and a picture past the size cap are never served.
    for name in ["evil.svg", "big.png"] {
        let path = media
            .image_path(store, &format!("http://{fixture}/pic/{name}"))
            .await
            .unwrap();
        let response = client.get(server.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), 404, "{name}");
    }

    // A private address nobody allowed: signed, but the SSRF guard refuses it.
    let private = media
        .image_path(store, "http://10.255.255.1/a.png")
        .await
        .unwrap();
    assert_eq!(
        client
            .get(server.url(&private))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );

    // Favicons: `/favicon.ico` of the site's origin.
    let icon = crate::citation::urls::icon_path(&format!("http://{fixture}/some/page")).unwrap();
    let response = client.get(server.url(&icon)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "image/x-icon");
    let private_icon = crate::citation::urls::icon_path("http://192.168.1.1/").unwrap();
    assert_eq!(
        client
            .get(server.url(&private_icon))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
}

fn urlencode(raw: &str) -> String {
    url::form_urlencoded::byte_serialize(raw.as_bytes()).collect()
}
