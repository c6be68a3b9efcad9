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
    &["ssr::net", "ssr::tolerant"],
    &["ssr::config"],
    &["ssr::search", "ssr::llm", "ssr::fetch"],
    &["ssr::knowledge", "ssr::prompts", "ssr::messages"],
    &["ssr::doctor"],
    &["ssr::session"],
    &["ssr::state"],
    &["ssr::pipeline", "ssr::request"],
    &["ssr::chat"],
    &["ssr::agent", "ssr::research"],
    &["ssr::answer"],
    &["server_fns"],
    &["components"],
    &["app"],
    &["ssr::web"],
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

/// Every module path named after `root::` in `code`, with `{a, b::c}` groups expanded.
fn paths_after(code: &str, root: &str) -> Vec<String> {
    fn read_tree(rest: &str, prefix: &str, out: &mut Vec<String>) -> usize {
        let mut path = prefix.to_string();
        let mut i = 0;
        let bytes = rest.as_bytes();
        loop {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i > start {
                if !path.is_empty() {
                    path.push_str("::");
                }
                path.push_str(&rest[start..i]);
            }
            if rest[i..].starts_with("::{") {
                i += 3;
                loop {
                    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\n') {
                        i += 1;
                    }
                    if i >= bytes.len() || bytes[i] == b'}' {
                        return i + 1;
                    }
                    i += read_tree(&rest[i..], &path, out);
                    while i < bytes.len() && matches!(bytes[i], b',' | b' ' | b'\n') {
                        i += 1;
                    }
                }
            } else if rest[i..].starts_with("::") {
                i += 2;
            } else {
                out.push(path);
                return i;
            }
        }
    }
    let needle = format!("{root}::");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find(&needle) {
        let at = from + found;
        let boundary = code[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let start = at + needle.len();
        from = start;
        if boundary {
            from += read_tree(&code[start..], "", &mut out);
        }
    }
    out
}

/// The code of a file without its comments and its `#[cfg(test)] mod tests`.
fn checked_code(source: &str) -> String {
    let code = match source.find("#[cfg(test)]\nmod tests") {
        Some(at) => &source[..at],
        None => source,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The edges of one module that break the order, as `from -> to` lines.
fn violations(module: &str, source: &str) -> Vec<String> {
    let Some((own_layer, own_entry)) = layer_of(module) else {
        return vec![format!("{module}: not in the layer list")];
    };
    let code = checked_code(source);
    let root = if module == "main" { "cited" } else { "crate" };
    let mut found = Vec::new();
    for target in paths_after(&code, root) {
        let problem = match layer_of(&target) {
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
    // Groups are expanded; comments and the module's own tests do not count.
    let answer = "// crate::ssr::web is mentioned\nuse crate::ssr::{agent, web::router};\n#[cfg(test)]\nmod tests { use crate::ssr::cli; }";
    assert_eq!(
        violations("ssr::answer", answer),
        vec!["ssr::answer -> ssr::web::router (higher layer)"]
    );
    assert!(violations("ssr::chat", "use crate::ssr::pipeline::{Halted, Turn};").is_empty());
    assert_eq!(
        violations("ssr::brand_new", ""),
        vec!["ssr::brand_new: not in the layer list"]
    );
}
