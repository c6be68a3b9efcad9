//! The one-way order of modules (ARCHITECTURE.md, "Layers"), kept by reading the source:
//! every `crate::…` path in a module (and `cited::…` in `main.rs`) must name a module of a
//! lower layer, or the module itself. Two modules of the same layer never use each other,
//! so no cycle can form. Tests (`src/tests/`, `#[cfg(test)] mod tests`) are not checked.

use std::path::Path;

/// Lowest first. A module belongs to the longest entry that prefixes its path.
const LAYERS: &[&[&str]] = &[
    &["text"],
    &["model"],
    &["citation", "error"],
    &["i18n"],
    &[
        "ssr::net",
        "ssr::metrics",
        "ssr::tolerant",
        "ssr::blocking",
        "ssr::passwords",
    ],
    &["ssr::config"],
    &[
        "ssr::search",
        "ssr::llm",
        "ssr::fetch",
        "ssr::store",
        "ssr::limits",
    ],
    &[
        "ssr::knowledge",
        "ssr::media",
        "ssr::shared",
        "ssr::align",
        "ssr::prompts",
        "ssr::messages",
        "ssr::testing",
    ],
    &["ssr::doctor", "ssr::files", "ssr::live"],
    &["ssr::session"],
    &["ssr::state"],
    &["ssr::pipeline", "ssr::request", "ssr::framing"],
    &["ssr::chat"],
    &["ssr::agent", "ssr::research"],
    &["ssr::answer"],
    &["server_fns"],
    &["components"],
    &["app"],
    &["ssr::mcp"],
    &["ssr::web", "ssr::eval"],
    &["ssr::cli"],
    &["main"],
];

/// Module roots that only declare their children (`lib.rs`, `ssr.rs`): not checked.
const FACADES: &[&str] = &["", "ssr"];

/// The layer entry of a module path: (layer index, entry).
fn layer_of(path: &str) -> Option<(usize, &'static str)> {
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(index, entries)| entries.iter().map(move |entry| (index, *entry)))
        .filter(|(_, entry)| path == *entry || path.starts_with(&format!("{entry}::")))
        .max_by_key(|(_, entry)| entry.len())
}

/// `src/ssr/research/branch.rs` → `ssr::research::branch`.
fn module_path(relative: &Path) -> String {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_string();
    }
    if parts.last().is_some_and(|last| last == "lib") {
        parts.pop();
    }
    parts.join("::")
}

/// At a raw string literal's start (`r`, or `br`, then `#`s and `"`, not inside an
/// identifier): the length of its opening and its number of `#`.
fn raw_string_at(chars: &[char], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|c| **c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((j + hashes + 1 - i, hashes))
}

/// The code with comments, string and char literals blanked out, and `#[cfg(test)]`
/// modules (braced blocks) left out.
fn checked_code(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let starts = |i: usize, s: &str| chars[i..].iter().take(s.len()).copied().eq(s.chars());
    while i < chars.len() {
        if starts(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if starts(i, "/*") {
            let mut depth = 0;
            while i < chars.len() {
                if starts(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if starts(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if let Some(hashes) = raw_string_at(&chars, i) {
            // `r"…"`, `r#"…"#`, `br##"…"##`: ends at a quote followed by as many `#`.
            i += hashes.0;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes.1))
                .collect();
            while i < chars.len() && !chars[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if chars[i] == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            out.push_str("' '");
        } else if chars[i] == '\'' && chars.get(i + 1) == Some(&'\\') {
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    // Leave out `#[cfg(test)] … mod name { … }` blocks (an out-of-line `mod tests;` stays).
    let mut code = out;
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let at = from + found;
        let after = &code[at..];
        let open = after
            .find(['{', ';'])
            .filter(|open| after.as_bytes()[*open] == b'{' && after[..*open].contains("mod "));
        let Some(open) = open else {
            from = at + "#[cfg(test)]".len();
            continue;
        };
        let mut depth = 0;
        let mut end = after.len();
        for (offset, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + offset + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        code.replace_range(at..at + end, " ");
        from = at;
    }
    code
}

/// Rust tokens, as far as paths need them: identifiers, `::`, and single characters.
fn tokens(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_string());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

fn is_ident(token: &str) -> bool {
    token.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Reads a use-tree (or a plain path) at `tokens[i..]` under `prefix`; pushes every path
/// it names and returns the index after it (always past `i`).
fn read_tree(tokens: &[String], mut i: usize, prefix: &[String], out: &mut Vec<String>) -> usize {
    let start = i;
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i).map(String::as_str) {
            Some("{") => {
                i += 1;
                while let Some(token) = tokens.get(i) {
                    match token.as_str() {
                        "}" => return i + 1,
                        "," => i += 1,
                        _ => i = read_tree(tokens, i, &path, out),
                    }
                }
                return i;
            }
            Some("*") | Some("self") => {
                out.push(path.join("::"));
                return i + 1;
            }
            Some(ident) if is_ident(ident) => {
                path.push(ident.to_string());
                i += 1;
                if tokens.get(i).map(String::as_str) == Some("::") {
                    i += 1;
                    continue;
                }
                if tokens.get(i).map(String::as_str) == Some("as") {
                    i += 2;
                }
                out.push(path.join("::"));
                return i;
            }
            _ => {
                if path.len() > prefix.len() {
                    out.push(path.join("::"));
                }
                return i.max(start + 1);
            }
        }
    }
}

/// Every module path `code` names from `root` (`crate`, or `cited` in `main.rs`) and
/// through `super::` (resolved against `module`), with `{a, b::c}` groups expanded.
fn paths_named(code: &str, root: &str, module: &str) -> Vec<String> {
    let tokens = tokens(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let after_path = i > 0 && tokens[i - 1] == "::";
        let base: Option<Vec<String>> = match tokens[i].as_str() {
            _ if after_path => None,
            t if t == root => Some(Vec::new()),
            "super" => {
                let mut parent: Vec<String> = module.split("::").map(String::from).collect();
                parent.pop();
                Some(parent)
            }
            _ => None,
        };
        match base {
            Some(mut base) if tokens.get(i + 1).map(String::as_str) == Some("::") => {
                i += 2;
                while tokens.get(i).map(String::as_str) == Some("super")
                    && tokens.get(i + 1).map(String::as_str) == Some("::")
                {
                    base.pop();
                    i += 2;
                }
                i = read_tree(&tokens, i, &base, &mut out);
            }
            _ => i += 1,
        }
    }
    out.retain(|path| !path.is_empty());
    out
}

/// The edges of one module that break the order, as `from -> to` lines.
fn violations(module: &str, source: &str) -> Vec<String> {
    let Some((own_layer, own_entry)) = layer_of(module) else {
        return vec![format!("{module}: not in the layer list")];
    };
    let code = checked_code(source);
    let root = if module == "main" { "cited" } else { "crate" };
    let mut found = Vec::new();
    for target in paths_named(&code, root, module) {
        let problem = match layer_of(&target) {
            // `use crate::ssr;`, `crate::ssr::{self, …}` or `crate::ssr::*`: an alias or a
            // glob through which later paths name modules this test cannot see.
            None if FACADES.contains(&target.as_str()) => {
                Some("names a facade: name the modules themselves")
            }
            None => Some("names no listed module"),
            Some((_, entry)) if entry == own_entry => None,
            Some((layer, _)) if layer < own_layer => None,
            Some((layer, _)) if layer == own_layer => Some("same layer"),
            Some(_) => Some("higher layer"),
        };
        if let Some(problem) = problem {
            let line = format!("{module} -> {target} ({problem})");
            if !found.contains(&line) {
                found.push(line);
            }
        }
    }
    found
}

/// Token sequences only some modules may write (or, for `cfg(feature`, some may not).
struct Ban {
    patterns: &'static [&'static [&'static str]],
    allowed: fn(&str) -> bool,
    why: &'static str,
}

fn under(module: &str, roots: &[&str]) -> bool {
    roots
        .iter()
        .any(|root| module == *root || module.starts_with(&format!("{root}::")))
}

/// The invariants ARCHITECTURE.md states that a token can show.
const BANS: &[Ban] = &[
    Ban {
        patterns: &[
            &["axum", "::"],
            &["leptos_axum", "::"],
            &["http", "::"],
            &["hyper", "::"],
        ],
        allowed: |m| under(m, &["ssr::web", "ssr::request", "server_fns", "main"]),
        why: "HTTP types only in the web layer",
    },
    Ban {
        patterns: &[
            &["std", "::", "env"],
            &["env", "::", "var"],
            &["env", "::", "var_os"],
        ],
        allowed: |m| under(m, &["ssr::config", "main"]),
        why: "the environment is read only by the configuration",
    },
    Ban {
        patterns: &[&["Client", "::", "builder"], &["Client", "::", "new"]],
        allowed: |m| {
            under(
                m,
                &[
                    "ssr::fetch",
                    "ssr::search::searxng",
                    "ssr::llm::openai",
                    "ssr::llm::models",
                    "ssr::doctor",
                ],
            )
        },
        why: "outbound HTTP clients only in fetch, searxng, openai, models and doctor",
    },
    Ban {
        patterns: &[
            &["cfg", "(", "feature"],
            &["cfg", "(", "not", "(", "feature"],
        ],
        allowed: |m| !under(m, SHARED),
        why: "no cfg(feature) in the modules both builds share",
    },
];

/// The modules the server and the browser both build, alike.
const SHARED: &[&str] = &[
    "text",
    "model",
    "citation",
    "i18n",
    "error",
    "components",
    "app",
];

/// The bans `source` (of `module`) breaks, as `module: pattern (why)` lines.
fn banned(module: &str, source: &str) -> Vec<String> {
    let tokens = tokens(&checked_code(source));
    let mut found = Vec::new();
    for ban in BANS.iter().filter(|ban| !(ban.allowed)(module)) {
        for pattern in ban.patterns {
            let hit = tokens
                .windows(pattern.len())
                .any(|window| window.iter().zip(*pattern).all(|(t, p)| t == p));
            if hit {
                found.push(format!("{module}: {} ({})", pattern.join(""), ban.why));
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let module = module_path(relative);
        if module == "tests" || module.starts_with("tests::") || module.ends_with("::tests") {
            continue;
        }
        if FACADES.contains(&module.as_str()) {
            continue;
        }
        let source = std::fs::read_to_string(&file).unwrap();
        problems.extend(violations(&module, &source));
        problems.extend(banned(&module, &source));
        checked += 1;
    }
    assert!(checked > 50, "only {checked} modules found under {src:?}");
    assert!(
        problems.is_empty(),
        "edges against the order:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_back_edge_is_caught() {
    // search must not know sessions (the old six-module cycle), and a peer is no better.
    let search = "use crate::ssr::session::Session;\nfn f() {}";
    assert_eq!(
        violations("ssr::search", search),
        vec!["ssr::search -> ssr::session::Session (higher layer)"]
    );
    let agent = "use crate::ssr::research::result_json;";
    assert_eq!(
        violations("ssr::agent", agent),
        vec!["ssr::agent -> ssr::research::result_json (same layer)"]
    );
    // Groups are expanded; comments, strings and the module's own tests do not count.
    let answer = "// crate::ssr::web is mentioned\nuse crate::ssr::{\n\tagent as a, self, web::{router, *}};\nlet s = \"crate::ssr::cli\"; /* crate::app */\n#[cfg(test)]\npub(crate) mod tests { use crate::ssr::cli; }\nfn after_tests() { crate::ssr::cli::ask(); }";
    assert_eq!(
        violations("ssr::answer", answer),
        vec![
            "ssr::answer -> ssr (names a facade: name the modules themselves)",
            "ssr::answer -> ssr::web::router (higher layer)",
            "ssr::answer -> ssr::web (higher layer)",
            "ssr::answer -> ssr::cli::ask (higher layer)",
        ]
    );
    // `super::` is resolved against the module, however often it climbs.
    assert_eq!(
        violations(
            "ssr::chat",
            "use super::agent::run; use super::super::ssr::pipeline::Turn;"
        ),
        vec!["ssr::chat -> ssr::agent::run (higher layer)"]
    );
    assert!(violations("ssr::chat", "use crate::ssr::pipeline::{Halted, Turn};").is_empty());
    assert_eq!(
        violations("ssr::brand_new", ""),
        vec!["ssr::brand_new: not in the layer list"]
    );
}

#[test]
fn an_alias_a_glob_or_a_raw_string_hides_no_edge() {
    // Through the facade, later paths (`ssr::web::run()`) cannot be followed: refused.
    let facade = "(names a facade: name the modules themselves)";
    for code in [
        "use crate::ssr;\nfn f() { ssr::web::run(); }",
        "use crate::ssr::*;\nfn f() { web::router(); }",
        "use crate::ssr::{self, llm};\nfn f() { ssr::answer::run(); }",
    ] {
        assert!(
            violations("ssr::chat", code).contains(&format!("ssr::chat -> ssr {facade}")),
            "{code}"
        );
    }
    // A raw string with an odd number of quotes does not hide the code after it.
    let raw = "let s = r#\"say \"hi\"#; use crate::ssr::web::router;";
    assert_eq!(
        violations("ssr::search", raw),
        vec!["ssr::search -> ssr::web::router (higher layer)"]
    );
    let raw_bytes = "let s = br##\"a \"# b\"##; use crate::ssr::web::router;";
    assert_eq!(violations("ssr::search", raw_bytes).len(), 1);
    // But a raw string's own text is not code, and `r` ending a name starts none.
    assert!(violations("ssr::search", "let s = r\"crate::ssr::web\";").is_empty());
    assert!(violations("ssr::search", "let bar = 1; let s = \"x\";").is_empty());
}

#[test]
fn the_invariants_a_token_shows_are_kept() {
    let http = "use axum::http::HeaderName;";
    assert_eq!(
        banned("ssr::config", http),
        vec![
            "ssr::config: axum:: (HTTP types only in the web layer)",
            "ssr::config: http:: (HTTP types only in the web layer)",
        ]
    );
    assert!(banned("ssr::web::guard", http).is_empty());
    assert_eq!(banned("ssr::llm", "let v = std::env::var(\"X\");").len(), 2);
    assert!(banned("ssr::config", "let v = std::env::var(\"X\");").is_empty());
    assert_eq!(
        banned("ssr::media", "let c = reqwest::Client::builder().build();"),
        vec!["ssr::media: Client::builder (outbound HTTP clients only in fetch, searxng, openai, models and doctor)"]
    );
    assert_eq!(
        banned("model", "#[cfg(feature = \"ssr\")]\nfn f() {}"),
        vec!["model: cfg(feature (no cfg(feature) in the modules both builds share)"]
    );
    assert!(banned("ssr::state", "#[cfg(feature = \"ssr\")]\nfn f() {}").is_empty());
    // Comments and strings do not count.
    assert!(banned("model", "// cfg(feature)\nlet s = \"std::env::var\";").is_empty());
}

/// What erases a view outside `components::erase`, which would bring the asynchronous
/// hydration of its whole subtree back into the wasm (see that module).
fn erasures(source: &str) -> Vec<&'static str> {
    let code = checked_code(source);
    [
        ".into_any()",
        "<Show",
        "Children",
        "ChildrenFn",
        "<Transition",
    ]
    .into_iter()
    .filter(|pattern| {
        code.match_indices(pattern).any(|(at, _)| {
            // `Children` must be the whole word (not `TypedChildren`).
            let before = code[..at].chars().next_back();
            !pattern.starts_with(char::is_alphabetic)
                || !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
    .collect()
}

#[test]
fn views_are_erased_only_through_components_erase() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![src.join("app.rs")];
    rust_files(&src.join("components"), &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        if file.ends_with("components/erase.rs") {
            continue;
        }
        let found = erasures(&std::fs::read_to_string(file).unwrap());
        if !found.is_empty() {
            problems.push(format!("{}: {}", file.display(), found.join(", ")));
        }
    }
    assert!(files.len() > 8, "only {} view files found", files.len());
    assert!(
        problems.is_empty(),
        "use `.erased()`, `shown` or `shown_or`:\n{}",
        problems.join("\n")
    );
    // The check itself finds each form, and not the words in comments or strings.
    assert_eq!(
        erasures("fn f() { view! { <Show when=x>\"a\"</Show> }.into_any() }\nfn g(children: Children) {}"),
        vec![".into_any()", "<Show", "Children"]
    );
    assert!(
        erasures("// .into_any() and <Show>\nlet s = \"<Show\"; fn h(c: TypedChildren<V>) {}")
            .is_empty()
    );
}

/// The layers ARCHITECTURE.md draws: the module names at the start of each line of the
/// fenced block under "## Layers" (`a, b` share a layer, `a → b` are two; a line indented
/// by two spaces goes on with the layer of a line that ended in a comma; description lines
/// are indented further).
fn documented_layers(doc: &str) -> Vec<Vec<String>> {
    let section = doc.split("## Layers").nth(1).unwrap_or_default();
    let block = section.split("```").nth(1).unwrap_or_default();
    let ident = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':';
    let mut layers: Vec<Vec<String>> = Vec::new();
    let mut open = false;
    for line in block.lines() {
        let indent = line.len() - line.trim_start().len();
        let continues = indent == 2 && open;
        if indent > 0 && !continues {
            continue;
        }
        let mut rest = line.trim_start();
        let mut names = Vec::new();
        let mut layer_breaks = Vec::new();
        open = false;
        loop {
            let end = rest.find(|c: char| !ident(c)).unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            names.push(rest[..end].to_string());
            rest = &rest[end..];
            if let Some(after) = rest.strip_prefix(',') {
                let after = after.strip_prefix(' ').unwrap_or(after);
                if !after.starts_with(|c: char| c.is_ascii_lowercase()) {
                    // The line's list ends with a comma: the next goes on with it.
                    open = true;
                    break;
                }
                rest = after;
            } else if let Some(after) = rest.strip_prefix(" → ") {
                layer_breaks.push(names.len());
                rest = after;
            } else {
                break;
            }
        }
        if names.is_empty() {
            continue;
        }
        let mut groups = Vec::new();
        let mut start = 0;
        for end in layer_breaks.into_iter().chain([names.len()]) {
            groups.push(names[start..end].to_vec());
            start = end;
        }
        for (i, group) in groups.into_iter().enumerate() {
            match layers.last_mut() {
                Some(last) if continues && i == 0 => last.extend(group),
                _ => layers.push(group),
            }
        }
    }
    layers
}

#[test]
fn architecture_md_draws_the_layers_the_code_keeps() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let drawn = documented_layers(&doc);
    let kept: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|layer| layer.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        drawn, kept,
        "ARCHITECTURE.md's \"Layers\" block and LAYERS differ"
    );
    let parsed = documented_layers(
        "## Layers\n```\na, b      x y\n  c        not a layer\nf, g, Text\n  h          more\n             words\nd → e     z\n```\n",
    );
    assert_eq!(
        parsed,
        [vec!["a", "b"], vec!["f", "g", "h"], vec!["d"], vec!["e"]]
    );
}
