//! `/media/image` and `/media/icon`: the image strip's thumbnails and the sources'
//! favicons, served from cited's own origin ([`crate::ssr::media`]).

use axum::extract::{Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::ssr::media::{Kind, Picture};
use crate::ssr::state::AppState;

#[derive(serde::Deserialize)]
pub struct ImageQuery {
    #[serde(default)]
    u: String,
    #[serde(default)]
    k: String,
}

#[derive(serde::Deserialize)]
pub struct IconQuery {
    #[serde(default)]
    site: String,
}

/// An image an answer listed: its signature must match, so nobody can make cited fetch
/// anything else.
pub async fn image(State(state): State<AppState>, Query(query): Query<ImageQuery>) -> Response {
    if !state.media.images {
        return StatusCode::NOT_FOUND.into_response();
    }
    if !state.media.verify(&state.store, &query.u, &query.k).await {
        return StatusCode::FORBIDDEN.into_response();
    }
    served(state.media.get(Kind::Image, &query.u).await)
}

/// `/favicon.ico` of a site (`site=https://docs.rs`).
pub async fn icon(State(state): State<AppState>, Query(query): Query<IconQuery>) -> Response {
    if !state.media.favicons {
        return StatusCode::NOT_FOUND.into_response();
    }
    served(state.media.get(Kind::Icon, &query.site).await)
}

fn served(picture: Option<Picture>) -> Response {
    let Some(picture) = picture else {
        // The page shows the letter badge instead.
        return (
            StatusCode::NOT_FOUND,
            [(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=600"),
            )],
        )
            .into_response();
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(picture.content_type),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=86400"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("default-src 'none'; sandbox"),
            ),
        ],
        picture.bytes,
    )
        .into_response()
}
