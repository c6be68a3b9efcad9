use reqwest::header::{CONTENT_TYPE, SET_COOKIE};

use super::{browser, TestServer};
use crate::model::{Mode, Settings};

#[tokio::test]
async fn healthz_answers() {
    let server = TestServer::start(&[]).await;
    let response = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers().get(SET_COOKIE).is_none(),
        "health checks make no sessions"
    );
    assert_eq!(response.text().await.unwrap(), "ok");
}

#[tokio::test]
async fn page_is_server_rendered_with_the_ui_contract() {
    let server = TestServer::start(&[]).await;
    let client = browser();
    let response = client.get(server.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    // Sessions are minted lazily: looking costs nothing, the first change mints one.
    assert!(response.headers().get(SET_COOKIE).is_none());
    let html = response.text().await.unwrap();
    let minted = server
        .send(
            &client,
            "/api/update_settings",
            &[("search_enabled", "true")],
        )
        .await;
    let cookie = minted
        .headers()
        .get(SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(cookie.starts_with("cited_session="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Lax")
            && cookie.contains("Max-Age=31536000"),
        "{cookie}"
    );
    let id = cookie
        .trim_start_matches("cited_session=")
        .split(';')
        .next()
        .unwrap();
    assert_eq!(id.len(), 32, "128 random bits as hex: {id}");
    for needle in [
        r#"aria-label="提问""#,
        ">发送<",
        r#"role="radiogroup""#,
        ">模式<",
        ">对话<",
        ">智能体<",
        ">深度研究<",
        r#"role="switch""#,
        "联网搜索",
        "启用后将使用SearXNG搜索实时信息",
        r#"aria-label="设置""#,
        r#"role="status""#,
    ] {
        assert!(html.contains(needle), "page lacks {needle}:\n{html}");
    }
    // The assets carry the built site's name (hashed once `make site-*` sealed it).
    let name = crate::ssr::state::site_name(std::path::Path::new("target/site"));
    for ext in ["js", "wasm", "css"] {
        let needle = format!("/pkg/{name}.{ext}");
        assert!(html.contains(&needle), "page lacks {needle}:\n{html}");
    }
}

async fn update(client: &reqwest::Client, server: &TestServer, form: &[(&str, &str)]) -> Settings {
    server.call(client, "/api/update_settings", form).await
}

async fn fetch(client: &reqwest::Client, server: &TestServer) -> Settings {
    let response = server.send(client, "/api/get_settings", &[]).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()[CONTENT_TYPE]
        .to_str()
        .unwrap()
        .contains("json"));
    response.json().await.unwrap()
}

/// Settings as the server reports them: sources and language resolved to the defaults.
fn effective(mode: Mode, search_enabled: bool) -> Settings {
    Settings {
        mode,
        search_enabled,
        sources: Some(crate::model::Sources::Auto),
        lang: Some(crate::model::Lang::ZhCn),
        ..Settings::default()
    }
}

#[tokio::test]
async fn the_ui_language_follows_accept_language_until_the_user_picks_one() {
    let server = TestServer::start(&[]).await;
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .default_headers(
            [(
                reqwest::header::ACCEPT_LANGUAGE,
                reqwest::header::HeaderValue::from_static("en-GB,en;q=0.9,zh-CN;q=0.5"),
            )]
            .into_iter()
            .collect(),
        )
        .build()
        .unwrap();
    let html = server.page(&client).await;
    assert!(html.contains(r#"<html lang="en""#), "{html}");
    assert!(html.contains(r#"aria-label="Ask""#), "{html}");
    assert!(html.contains(">Send<"), "{html}");
    assert_eq!(
        fetch(&client, &server).await.lang,
        Some(crate::model::Lang::En)
    );
    // The switch wins over the header, and is remembered.
    let saved = update(&client, &server, &[("lang", "zh-CN")]).await;
    assert_eq!(saved.lang, Some(crate::model::Lang::ZhCn));
    let html = server.page(&client).await;
    assert!(html.contains(r#"<html lang="zh-CN""#), "{html}");
    assert!(html.contains(r#"aria-label="提问""#), "{html}");
    let response = server
        .send(&client, "/api/update_settings", &[("lang", "klingon")])
        .await;
    assert_eq!(response.status(), 400);
    assert!(response.text().await.unwrap().contains("klingon"));
    let saved = update(&client, &server, &[("sources", "knowledge")]).await;
    assert_eq!(saved.sources, Some(crate::model::Sources::Knowledge));
}

#[tokio::test]
async fn settings_round_trip_through_server_functions() {
    let server = TestServer::start(&[]).await;
    let client = browser();
    assert_eq!(fetch(&client, &server).await, effective(Mode::Chat, true));
    let saved = update(&client, &server, &[("mode", "agent")]).await;
    assert_eq!(saved.mode, Mode::Agent);
    assert!(saved.search_enabled, "unchanged fields stay");
    let saved = update(&client, &server, &[("search_enabled", "false")]).await;
    assert_eq!(saved, effective(Mode::Agent, false));
    assert_eq!(fetch(&client, &server).await, saved);

    // A reload renders the saved state into the HTML.
    let html = server.page(&client).await;
    assert!(html.contains(r#"value="agent" checked"#), "{html}");
    assert!(html.contains("Agent 模式下由 AI 自动决策搜索"), "{html}");
}

#[tokio::test]
async fn bad_input_gets_a_clear_error() {
    let server = TestServer::start(&[]).await;
    let response = browser()
        .post(server.url("/api/update_settings"))
        .form(&[("mode", "turbo")])
        .send()
        .await
        .unwrap();
    assert!(response.status().is_client_error() || response.status().is_server_error());
    let body = response.text().await.unwrap();
    assert!(body.contains("turbo") || body.contains("mode"), "{body}");
}

#[tokio::test]
async fn two_cookie_jars_see_separate_sessions() {
    let server = TestServer::start(&[]).await;
    let alice = browser();
    let bob = browser();
    update(
        &alice,
        &server,
        &[("mode", "research"), ("search_enabled", "false")],
    )
    .await;
    update(&bob, &server, &[("mode", "agent")]).await;
    assert_eq!(
        fetch(&alice, &server).await,
        effective(Mode::Research, false)
    );
    assert_eq!(fetch(&bob, &server).await, effective(Mode::Agent, true));
    // No cookie at all: a brand-new session with the defaults.
    let stranger = reqwest::Client::new();
    let response = server.send(&stranger, "/api/get_settings", &[]).await;
    let settings: Settings = response.json().await.unwrap();
    assert_eq!(settings, effective(Mode::Chat, true));
}

#[tokio::test]
async fn forged_session_ids_are_replaced() {
    let server = TestServer::start(&[]).await;
    let forged = "0123456789abcdef0123456789abcdef";
    let response = reqwest::Client::new()
        .post(server.url("/api/update_settings"))
        .header("cookie", format!("cited_session={forged}"))
        .form(&[("search_enabled", "false")])
        .send()
        .await
        .unwrap();
    let cookie = response
        .headers()
        .get(SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        !cookie.contains(forged),
        "the server mints its own ids: {cookie}"
    );
}

#[tokio::test]
async fn search_status_reports_searxng_health_with_the_fix() {
    let good = TestServer::start(&[("CITED_SEARXNG_URL", &super::searxng::shared().url)]).await;
    let response = browser()
        .post(good.url("/api/search_status"))
        .send()
        .await
        .unwrap();
    let status: crate::model::ServiceStatus = response.json().await.unwrap();
    assert!(status.ok, "{status:?}");
    assert!(status.message.is_empty());

    let port = super::searxng::free_port();
    let down =
        TestServer::start(&[("CITED_SEARXNG_URL", &format!("http://127.0.0.1:{port}"))]).await;
    let response = browser()
        .post(down.url("/api/search_status"))
        .form(&[("refresh", "true")])
        .send()
        .await
        .unwrap();
    let status: crate::model::ServiceStatus = response.json().await.unwrap();
    assert!(!status.ok);
    assert!(
        status
            .message
            .contains("docker compose -f searxng/docker-compose.yml up -d"),
        "{status:?}"
    );
}

/// A sealed site as `scripts/seal-site.sh` leaves it: hashed names, `NAME`, `.br`/`.gz`.
fn sealed_site() -> super::searxng::TempDir {
    let dir = super::searxng::TempDir::new("site");
    let pkg = dir.0.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let name = "cited.0123456789abcdef";
    std::fs::write(pkg.join("NAME"), format!("{name}\n")).unwrap();
    for (ext, body) in [
        ("js", "export default 1;"),
        ("wasm", "\0asm"),
        ("css", "body{}"),
    ] {
        std::fs::write(pkg.join(format!("{name}.{ext}")), body).unwrap();
        std::fs::write(pkg.join(format!("{name}.{ext}.br")), format!("br:{body}")).unwrap();
        std::fs::write(pkg.join(format!("{name}.{ext}.gz")), format!("gz:{body}")).unwrap();
    }
    dir
}

#[tokio::test]
async fn assets_are_hashed_precompressed_and_cached_for_a_year_pages_are_not() {
    let site = sealed_site();
    let root = site.0.to_string_lossy().into_owned();
    let server = TestServer::start(&[("CITED_SITE_ROOT", root.as_str())]).await;
    let client = reqwest::Client::builder().no_gzip().build().unwrap();
    let get = |path: &str, encoding: &'static str| {
        client
            .get(server.url(path))
            .header(reqwest::header::ACCEPT_ENCODING, encoding)
            .send()
    };
    let page = get("/", "identity").await.unwrap();
    assert_eq!(page.headers()[reqwest::header::CACHE_CONTROL], "no-cache");
    let html = page.text().await.unwrap();
    for asset in [
        "/pkg/cited.0123456789abcdef.css",
        "/pkg/cited.0123456789abcdef.js",
        "/pkg/cited.0123456789abcdef.wasm",
    ] {
        assert!(html.contains(asset), "the page names {asset}:\n{html}");
    }
    let wasm = get("/pkg/cited.0123456789abcdef.wasm", "gzip, deflate, br")
        .await
        .unwrap();
    assert_eq!(wasm.status(), 200);
    assert_eq!(wasm.headers()[reqwest::header::CONTENT_ENCODING], "br");
    assert_eq!(
        wasm.headers()[reqwest::header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(wasm.text().await.unwrap(), "br:\0asm");
    let css = get("/pkg/cited.0123456789abcdef.css", "gzip")
        .await
        .unwrap();
    assert_eq!(css.headers()[reqwest::header::CONTENT_ENCODING], "gzip");
    assert_eq!(css.text().await.unwrap(), "gz:body{}");
    let plain = get("/pkg/cited.0123456789abcdef.js", "identity")
        .await
        .unwrap();
    assert!(plain
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .is_none());
    assert_eq!(plain.text().await.unwrap(), "export default 1;");
    // The page itself is compressed on the fly for a browser that accepts it.
    let compressed = get("/", "br").await.unwrap();
    assert_eq!(
        compressed.headers()[reqwest::header::CONTENT_ENCODING],
        "br"
    );
}

#[tokio::test]
async fn paths_pick_their_page_and_others_are_not_found() {
    let server = TestServer::start(&[]).await;
    let client = browser();
    // A session of its own (minted by its first change), whose history can be searched.
    update(&client, &server, &[("search_enabled", "true")]).await;
    // The history search reads its query back, decoded as the form encoded it.
    let searched = client
        .get(server.url("/?q=tokio+%E8%BF%90%E8%A1%8C%E6%97%B6%20%3C%2Fb%3E"))
        .send()
        .await
        .unwrap();
    assert_eq!(searched.status(), 200);
    let html = searched.text().await.unwrap();
    assert!(
        html.contains(r#"value="tokio 运行时 &lt;/b&gt;""#),
        "{html}"
    );
    assert!(!html.contains(r#"class="not-found""#));
    // Paths no page names: 404, and the page says so (the server and the browser pick
    // the same page, so it hydrates as rendered).
    for path in ["/nowhere", "/c", "/c/a/b", "/s/", "//"] {
        let response = client.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
        let html = response.text().await.unwrap();
        assert!(
            html.contains(r#"<p class="not-found">404</p>"#),
            "{path}: {html}"
        );
    }
    // A conversation that is not this browser's: the page renders, saying it is not found.
    let unknown = client.get(server.url("/c/0000")).send().await.unwrap();
    assert_eq!(unknown.status(), 200);
    assert!(unknown
        .text()
        .await
        .unwrap()
        .contains(r#"class="not-found""#));
}

/// Every exact path `web::routes` gives properties to is served by the router: the table
/// and the routes cannot drift apart unnoticed.
#[tokio::test]
async fn every_declared_path_is_routed() {
    let server = TestServer::start(&[]).await;
    let client = browser();
    let served = |path: String| {
        let client = client.clone();
        let url = server.url(&path);
        async move {
            let get = client.get(&url).send().await.unwrap().status();
            let post = client.post(&url).body("").send().await.unwrap().status();
            (get, post)
        }
    };
    // The check itself: a path nobody serves is told apart.
    let (get, post) = served("/api/not_a_route".into()).await;
    assert_eq!((get.as_u16(), post.as_u16()), (404, 404));
    for path in crate::ssr::web::routes::exact_paths() {
        let (get, post) = served(path.to_string()).await;
        assert!(
            get != 404 || post != 404,
            "{path} is declared in web::routes but not routed ({get}, {post})"
        );
    }
}
