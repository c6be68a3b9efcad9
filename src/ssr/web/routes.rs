//! What the middleware needs to know of each path, declared once: who may reach it without
//! signing in, which rate it counts against, whether it may change what is stored of a
//! browser, and how large its body may be. `guard` and `session_layer` ask [`of`]; the
//! router in [`super`] serves the paths (a test checks that every exact path here is
//! routed).

/// What kind of request a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A page of the app (`/`, `/c/<id>`, `/new`): without a session when one is needed,
    /// the sign-in page.
    Page,
    /// A server function or another JSON endpoint of the app.
    Api,
    /// Health probes and metrics: any host name, no rate limit, no session.
    Probe,
    /// Built assets: no rate limit, no session, no sign-in.
    Asset,
    /// Signing in and out: reached without a session.
    SignIn,
    /// A shared conversation: anyone with its link, without signing in, at a rate of its own.
    Share,
    /// Thumbnails and favicons fetched through cited: a rate of their own.
    Media,
    /// The OpenAI-compatible API and MCP: an API key (`Authorization: Bearer cited_…`)
    /// stands for its user, and refusals come in the API's shape.
    KeyApi,
    /// The API's description: public.
    Description,
    /// The browser's icon requests: no session, no sign-in, but the request rate.
    Icon,
}

/// A path's properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub kind: Kind,
    /// A POST to it may change what is stored of the browser (settings, its current
    /// conversation, its sign-in): other instances read the browser again.
    pub changes_browser: bool,
    /// Its body may be as large as a file (`CITED_FILE_MAX_MB`), not `CITED_MAX_BODY_KB`.
    pub upload: bool,
}

impl Route {
    /// Reached without signing in.
    pub fn public(self) -> bool {
        matches!(
            self.kind,
            Kind::Probe | Kind::Asset | Kind::Icon | Kind::SignIn | Kind::Share | Kind::Description
        )
    }

    /// Needs no session at all (the session layer lets it through untouched).
    pub fn sessionless(self) -> bool {
        matches!(self.kind, Kind::Probe | Kind::Asset | Kind::Icon)
    }

    /// Never rate-limited (probes and the sealed assets).
    pub fn unlimited(self) -> bool {
        matches!(self.kind, Kind::Probe | Kind::Asset)
    }

    /// Answers whatever host name it is asked by, and is never rate-limited.
    pub fn probe(self) -> bool {
        self.kind == Kind::Probe
    }
}

#[derive(Debug, Clone, Copy)]
enum Match {
    Exact(&'static str),
    Prefix(&'static str),
}

const fn route(kind: Kind) -> Route {
    Route {
        kind,
        changes_browser: false,
        upload: false,
    }
}

const fn changes(kind: Kind) -> Route {
    Route {
        kind,
        changes_browser: true,
        upload: false,
    }
}

/// Every path with properties of its own; anything else is [`Kind::Api`] (a server
/// function, the file list, exports: signed in, the request rate).
#[rustfmt::skip]
static ROUTES: &[(Match, Route)] = &[
    (Match::Exact("/"), route(Kind::Page)),
    (Match::Prefix("/c/"), route(Kind::Page)),
    (Match::Exact("/new"), changes(Kind::Page)),
    (Match::Exact("/login"), changes(Kind::SignIn)),
    (Match::Exact("/logout"), changes(Kind::SignIn)),
    (Match::Exact("/healthz"), route(Kind::Probe)),
    (Match::Exact("/readyz"), route(Kind::Probe)),
    (Match::Exact("/metrics"), route(Kind::Probe)),
    (Match::Prefix("/pkg/"), route(Kind::Asset)),
    (Match::Prefix("/favicon"), route(Kind::Icon)),
    (Match::Prefix("/s/"), route(Kind::Share)),
    (Match::Exact("/api/shared"), route(Kind::Share)),
    // A page of a shared conversation's earlier questions, by its token (or the owner's id).
    (Match::Exact("/api/earlier"), route(Kind::Share)),
    (Match::Prefix("/media/"), route(Kind::Media)),
    (Match::Prefix("/v1/"), route(Kind::KeyApi)),
    (Match::Exact("/mcp"), route(Kind::KeyApi)),
    (Match::Exact("/openapi.json"), route(Kind::Description)),
    (Match::Exact("/api/files"), Route { kind: Kind::Api, changes_browser: true, upload: true }),
    (Match::Exact("/api/files/remove"), changes(Kind::Api)),
    (Match::Exact("/api/ask"), changes(Kind::Api)),
    (Match::Exact("/api/update_settings"), changes(Kind::Api)),
    (Match::Exact("/api/open_conversation"), changes(Kind::Api)),
    (Match::Exact("/api/delete_conversation"), changes(Kind::Api)),
    (Match::Exact("/api/rename_conversation"), changes(Kind::Api)),
    (Match::Exact("/api/share_conversation"), changes(Kind::Api)),
];

/// The properties of `path`.
pub fn of(path: &str) -> Route {
    ROUTES
        .iter()
        .find(|(pattern, _)| match pattern {
            Match::Exact(exact) => path == *exact,
            Match::Prefix(prefix) => path.starts_with(prefix),
        })
        .map_or(route(Kind::Api), |(_, route)| *route)
}

/// The exact paths declared here (for the test that the router serves each).
pub fn exact_paths() -> impl Iterator<Item = &'static str> {
    ROUTES.iter().filter_map(|(pattern, _)| match pattern {
        Match::Exact(path) => Some(*path),
        Match::Prefix(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_take_their_declared_properties() {
        assert!(of("/healthz").probe() && of("/healthz").public());
        assert!(of("/pkg/cited.wasm").sessionless() && !of("/pkg/cited.wasm").probe());
        // Icons are public but count against the request rate, whatever comes after the name.
        assert!(of("/favicon-x").public() && !of("/favicon-x").unlimited());
        assert!(of("/pkg/cited.wasm").unlimited() && of("/healthz").unlimited());
        assert_eq!(of("/s/abc").kind, Kind::Share);
        assert_eq!(of("/api/earlier").kind, Kind::Share);
        assert!(of("/api/files").upload && of("/api/files").changes_browser);
        assert!(!of("/api/files/list").upload && !of("/api/files/list").changes_browser);
        assert_eq!(of("/c/123/export.md").kind, Kind::Page);
        assert!(!of("/api/history").public() && !of("/").public());
        assert_eq!(of("/v1/chat/completions").kind, Kind::KeyApi);
        // A prefix is a prefix of the path, not of a longer name.
        assert_eq!(of("/newer").kind, Kind::Api);
    }

    #[test]
    fn each_path_is_declared_once() {
        for (i, (pattern, _)) in ROUTES.iter().enumerate() {
            let shadowed = ROUTES[..i]
                .iter()
                .any(|(earlier, _)| match (earlier, pattern) {
                    (Match::Prefix(p), Match::Exact(e) | Match::Prefix(e)) => e.starts_with(p),
                    (Match::Exact(a), Match::Exact(b)) => a == b,
                    (Match::Exact(_), Match::Prefix(_)) => false,
                });
            assert!(!shadowed, "{pattern:?} is shadowed by an earlier entry");
        }
    }
}
