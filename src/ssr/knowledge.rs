//! The local knowledge base: a second [`SearchProvider`] over a folder of Markdown, text and
//! HTML files (PRODUCT.md "Out of the box"; seed 001's `knowledge` citation type).
//!
//! Documents are split into passages (a heading and the paragraphs under it, up to about
//! 600 characters) and indexed in memory with tantivy; Chinese is segmented by jieba, and
//! every token is lower-cased and kept only when it is a word (punctuation dropped). A
//! search returns the best passages, at most two per document, each as a `Source` of kind
//! `Knowledge` whose URL is this server's `/knowledge/<path>?p=<n>` page, where the passage
//! is highlighted. The files are indexed at startup and again whenever their names, sizes
//! or modification times change ([`KnowledgeBase::refresh`], polled by `serve`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use async_trait::async_trait;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::{LowerCaser, TextAnalyzer};
use tantivy::{doc, Index, IndexReader, TantivyDocument, Term};

use crate::model::{Source, SourceKind};
use crate::ssr::search::{ProviderKind, SearchError, SearchOptions, SearchProvider, SearchResults};

/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Files indexed at most.
const MAX_FILES: usize = 5000;
/// A passage grows to about this many characters before a new one starts.
const PASSAGE_CHARS: usize = 600;
const TOKENIZER: &str = "cited_jieba";
/// Snippets of knowledge passages are longer than web snippets: they are the whole text the
/// offline answerer quotes from.
const MAX_SNIPPET_CHARS: usize = 900;

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The path shown and used in its URL: relative to its root, `/`-separated.
    pub path: String,
    pub title: String,
    pub passages: Vec<Passage>,
    /// What is shown beside it instead of `path` (a conversation's file: its name).
    pub shown: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Passage {
    /// The heading the passage sits under, if any.
    pub heading: Option<String>,
    pub text: String,
    /// The page it is on, for a PDF.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// Which files, with their sizes and times: a change means re-indexing.
type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

struct Snapshot {
    fingerprint: Fingerprint,
    documents: Vec<Document>,
    searcher: Option<Searcher>,
}

/// A tantivy index over documents' passages, in memory.
pub struct Searcher {
    reader: IndexReader,
    analyzer: TextAnalyzer,
    path: Field,
    passage: Field,
    title: Field,
    body: Field,
}

impl Searcher {
    /// Any of the query's words, in the body or (weighted more) the title. Built from the
    /// analyzer's tokens rather than a query language, so no input is a syntax error and
    /// unspaced Chinese is not turned into one long phrase.
    fn query(&self, text: &str) -> BooleanQuery {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        let mut words = std::collections::BTreeSet::new();
        while stream.advance() {
            let word = &stream.token().text;
            if word.chars().any(char::is_alphanumeric) {
                words.insert(word.clone());
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for word in words {
            let body = TermQuery::new(
                Term::from_field_text(self.body, &word),
                IndexRecordOption::WithFreqs,
            );
            let title = TermQuery::new(
                Term::from_field_text(self.title, &word),
                IndexRecordOption::WithFreqs,
            );
            clauses.push((Occur::Should, Box::new(body)));
            clauses.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(title), 1.5)),
            ));
        }
        BooleanQuery::new(clauses)
    }
}

pub struct KnowledgeBase {
    roots: Vec<PathBuf>,
    snippet_chars: usize,
    /// Results per search when the caller names no count (`CITED_SEARCH_RESULTS`).
    results: usize,
    current: RwLock<Arc<Snapshot>>,
}

impl KnowledgeBase {
    /// Indexes the files under `roots` (files or folders) now.
    pub fn open(roots: Vec<PathBuf>, snippet_chars: usize) -> KnowledgeBase {
        let base = KnowledgeBase {
            roots,
            snippet_chars,
            results: 5,
            current: RwLock::new(Arc::new(Snapshot {
                fingerprint: Vec::new(),
                documents: Vec::new(),
                searcher: None,
            })),
        };
        base.refresh();
        base
    }

    /// Keeps `results` per search, as `CITED_SEARCH_RESULTS` does for SearXNG.
    pub fn with_results(mut self, results: usize) -> KnowledgeBase {
        self.results = results;
        self
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(guard) => Arc::clone(&guard),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Re-indexes when the files changed; returns whether it did.
    pub fn refresh(&self) -> bool {
        let files = collect_files(&self.roots);
        let fingerprint: Fingerprint = files
            .iter()
            .map(|(path, _)| {
                let meta = std::fs::metadata(path).ok();
                (
                    path.clone(),
                    meta.as_ref().map_or(0, |m| m.len()),
                    meta.and_then(|m| m.modified().ok()),
                )
            })
            .collect();
        if fingerprint == self.snapshot().fingerprint {
            return false;
        }
        let documents: Vec<Document> = files
            .iter()
            .filter_map(|(path, shown)| read_document(path, shown))
            .collect();
        let searcher = match build_index(&documents) {
            Ok(searcher) => Some(searcher),
            Err(error) => {
                tracing::error!(%error, "knowledge base: indexing failed");
                None
            }
        };
        tracing::info!(
            documents = documents.len(),
            passages = documents.iter().map(|d| d.passages.len()).sum::<usize>(),
            "knowledge base indexed"
        );
        let snapshot = Arc::new(Snapshot {
            fingerprint,
            documents,
            searcher,
        });
        match self.current.write() {
            Ok(mut guard) => *guard = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
        true
    }

    /// The number of indexed documents.
    pub fn len(&self) -> usize {
        self.snapshot().documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An indexed document by its shown path. Only indexed files are ever served.
    pub fn document(&self, path: &str) -> Option<Document> {
        self.snapshot()
            .documents
            .iter()
            .find(|d| d.path == path)
            .cloned()
    }
}

/// The best passages of `documents` for `query`: (document index, passage index), at most
/// two per document, `limit` in all.
pub fn hits(
    searcher: &Searcher,
    documents: &[Document],
    query: &str,
    limit: usize,
) -> Vec<(usize, usize)> {
    {
        let parsed = searcher.query(query);
        let found = match searcher
            .reader
            .searcher()
            .search(&parsed, &TopDocs::with_limit(limit * 4).order_by_score())
        {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(%error, "knowledge base: search failed");
                return Vec::new();
            }
        };
        let index_searcher = searcher.reader.searcher();
        let mut hits: Vec<(usize, usize)> = Vec::new();
        for (_score, address) in found {
            let Ok(stored) = index_searcher.doc::<TantivyDocument>(address) else {
                continue;
            };
            let path = stored
                .get_first(searcher.path)
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let passage = stored
                .get_first(searcher.passage)
                .and_then(|v| v.as_u64())
                .unwrap_or(0) as usize;
            let Some(document) = documents.iter().position(|d| d.path == path) else {
                continue;
            };
            if hits.iter().filter(|(d, _)| *d == document).count() >= 2 {
                continue;
            }
            hits.push((document, passage));
            if hits.len() == limit {
                break;
            }
        }
        hits
    }
}

#[async_trait]
impl SearchProvider for KnowledgeBase {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let snapshot = self.snapshot();
        let limit = options.max_results.unwrap_or(self.results).clamp(1, 20);
        Ok(passage_results(
            snapshot.searcher.as_ref(),
            &snapshot.documents,
            query,
            limit,
            self.snippet_chars,
        ))
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Knowledge
    }
}

/// The best passages of `documents` for `query` as search results.
pub fn passage_results(
    searcher: Option<&Searcher>,
    documents: &[Document],
    query: &str,
    limit: usize,
    snippet_chars: usize,
) -> SearchResults {
    let sources = match searcher {
        Some(searcher) => hits(searcher, documents, query, limit)
            .into_iter()
            .filter_map(|(d, p)| passage_source(&documents[d], p, snippet_chars))
            .collect(),
        None => Vec::new(),
    };
    SearchResults {
        query: query.to_string(),
        sources,
        ..SearchResults::default()
    }
}

/// Passage `p` of `document` as a source: its title (with the heading, or the page for a
/// PDF), the page that opens it highlighted, its text as the snippet.
pub fn passage_source(document: &Document, p: usize, snippet_chars: usize) -> Option<Source> {
    let passage = document.passages.get(p)?;
    let title = match (&passage.heading, passage.page) {
        (_, Some(page)) => format!("{}, p. {page}", document.title),
        (Some(heading), None) if *heading != document.title => {
            format!("{} › {heading}", document.title)
        }
        _ => document.title.clone(),
    };
    Some(Source {
        image: None,
        url: knowledge_url(&document.path, p),
        title,
        domain: document
            .shown
            .clone()
            .unwrap_or_else(|| document.path.clone()),
        snippet: whole_sentences(&passage.text, snippet_chars.max(MAX_SNIPPET_CHARS)),
        engines: vec!["knowledge".to_string()],
        published: None,
        kind: SourceKind::Knowledge,
    })
}

/// A passage as a snippet: whole, or cut after the last full sentence that fits (a cut
/// word would be quoted by the offline answerer).
fn whole_sentences(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let cut: String = text.chars().take(max_chars).collect();
    match cut.rfind(['。', '！', '？', '.', '!', '?', '\n']) {
        Some(end) if end > 0 => {
            let end = end + cut[end..].chars().next().map_or(1, char::len_utf8);
            cut[..end].trim_end().to_string()
        }
        _ => cut,
    }
}

/// `/knowledge/<path>?p=<n>#passage`, each path segment percent-encoded.
pub fn knowledge_url(path: &str, passage: usize) -> String {
    // (`knowledge_target` reads it back.)
    let mut url = String::from("/knowledge/");
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                url.push(byte as char)
            }
            _ => url.push_str(&format!("%{byte:02X}")),
        }
    }
    url.push_str(&format!("?p={passage}#passage"));
    url
}

/// The document path and passage number a [`knowledge_url`] names (`None` for anything
/// else).
pub fn knowledge_target(url: &str) -> Option<(String, usize)> {
    let rest = url.strip_prefix("/knowledge/")?;
    let rest = rest.strip_suffix("#passage").unwrap_or(rest);
    let (path, passage) = rest.split_once("?p=")?;
    let passage = passage.parse().ok()?;
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    Some((String::from_utf8(decoded).ok()?, passage))
}

/// The text a citation of passage `p` of `document` is checked against: the passage with
/// its neighbours (a claim may rest on the sentence before a heading's cut).
pub fn passage_context(document: &Document, p: usize) -> Option<String> {
    document.passages.get(p)?;
    let from = p.saturating_sub(1);
    let to = (p + 1).min(document.passages.len() - 1);
    Some(
        document.passages[from..=to]
            .iter()
            .map(|passage| passage.text.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// The files under `roots` that can be indexed, with the path each is shown as.
fn collect_files(roots: &[PathBuf]) -> Vec<(PathBuf, String)> {
    fn indexable(path: &Path) -> bool {
        matches!(
            path.extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase)
                .as_deref(),
            Some("md" | "markdown" | "txt" | "html" | "htm")
        )
    }
    /// `real_root` is the root with its symlinks resolved: a link is followed only when its
    /// target stays inside it, so a `notes.md` pointing at a credentials file is skipped.
    fn walk(
        dir: &Path,
        root: &Path,
        real_root: &Path,
        depth: usize,
        out: &mut Vec<(PathBuf, String)>,
    ) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            if out.len() >= MAX_FILES {
                return;
            }
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "node_modules" || name == "target" {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let real = if meta.file_type().is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(target) if target.starts_with(real_root) => target,
                    _ => {
                        tracing::info!(
                            path = %path.display(),
                            "knowledge base: a link that leaves the folder; skipped"
                        );
                        continue;
                    }
                }
            } else {
                path.clone()
            };
            if real.is_dir() {
                if depth < 6 {
                    walk(&path, root, real_root, depth + 1, out);
                }
            } else if indexable(&path) && real.is_file() {
                let shown = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((real, shown));
            }
        }
    }
    let mut files = Vec::new();
    for root in roots {
        if root.is_dir() {
            let shown_root = root.file_name().map(|n| n.to_string_lossy().into_owned());
            let mut found = Vec::new();
            let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            walk(root, root, &real_root, 0, &mut found);
            for (path, shown) in found {
                // Keep the folder's name so two roots cannot shadow each other.
                let shown = match &shown_root {
                    Some(name) => format!("{name}/{shown}"),
                    None => shown,
                };
                files.push((path, shown));
            }
        } else if root.is_file() && indexable(root) {
            let shown = root
                .components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            files.push((root.clone(), shown));
        }
    }
    files.sort_by(|a, b| a.1.cmp(&b.1));
    files.dedup_by(|a, b| a.1 == b.1);
    files
}

fn read_document(path: &Path, shown: &str) -> Option<Document> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        tracing::info!(path = %path.display(), "knowledge base: file too large; skipped");
        return None;
    }
    let raw = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string());
    let (title, passages) = match extension.as_str() {
        "md" | "markdown" => markdown_passages(&text),
        "html" | "htm" => html_passages(&text),
        _ => (None, plain_passages(&text, None)),
    };
    let passages: Vec<Passage> = passages
        .into_iter()
        .filter(|p| p.text.chars().any(char::is_alphanumeric))
        .collect();
    if passages.is_empty() {
        return None;
    }
    Some(Document {
        path: shown.to_string(),
        title: title.filter(|t| !t.trim().is_empty()).unwrap_or(file_name),
        passages,
        shown: None,
    })
}

/// Blocks of text under their headings, merged into passages of about [`PASSAGE_CHARS`].
pub fn markdown_passages(text: &str) -> (Option<String>, Vec<Passage>) {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut title: Option<String> = None;
    let mut heading: Option<String> = None;
    let mut in_heading = false;
    let mut heading_text = String::new();
    let mut block = String::new();
    let mut in_code = false;
    let mut blocks: Vec<(Option<String>, String)> = Vec::new();
    for event in Parser::new(text) {
        match event {
            // A code block stays code: its lines as written, fenced (the offline answerer
            // quotes it as a block, not as a run-on sentence).
            Event::Start(Tag::CodeBlock(_)) => {
                let prose = block.split_whitespace().collect::<Vec<_>>().join(" ");
                if !prose.is_empty() {
                    blocks.push((heading.clone(), prose));
                }
                in_code = true;
                block.clear();
            }
            Event::Text(t) if in_code => block.push_str(&t),
            Event::End(TagEnd::CodeBlock) => {
                in_code = false;
                let code = block.trim_end_matches('\n');
                if !code.trim().is_empty() {
                    blocks.push((heading.clone(), crate::text::fenced(code)));
                }
                block.clear();
            }
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                heading_text.clear();
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
                let text = heading_text.trim().to_string();
                if title.is_none() {
                    title = Some(text.clone());
                }
                heading = Some(text);
            }
            Event::Text(t) | Event::Code(t) => {
                if in_heading {
                    heading_text.push_str(&t);
                } else {
                    block.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => block.push(' '),
            Event::End(TagEnd::Paragraph | TagEnd::Item | TagEnd::TableRow | TagEnd::TableHead) => {
                let text = block.split_whitespace().collect::<Vec<_>>().join(" ");
                if !text.is_empty() {
                    blocks.push((heading.clone(), text));
                }
                block.clear();
            }
            Event::End(TagEnd::TableCell) => block.push_str(" | "),
            _ => {}
        }
    }
    (title, merge(blocks))
}

pub fn html_passages(html: &str) -> (Option<String>, Vec<Passage>) {
    let Ok(mut readability) = dom_smoothie::Readability::new(html, None, None) else {
        return (None, Vec::new());
    };
    match readability.parse() {
        Ok(article) => {
            let title = Some(article.title.to_string()).filter(|t| !t.trim().is_empty());
            (title, plain_passages(&article.text_content, None))
        }
        Err(_) => (None, Vec::new()),
    }
}

pub fn plain_passages(text: &str, heading: Option<String>) -> Vec<Passage> {
    let blocks = text
        .split("\n\n")
        .map(|b| b.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|b| !b.is_empty())
        .map(|b| (heading.clone(), b))
        .collect();
    merge(blocks)
}

/// Consecutive blocks under the same heading become one passage until it is long enough.
fn merge(blocks: Vec<(Option<String>, String)>) -> Vec<Passage> {
    let mut passages: Vec<Passage> = Vec::new();
    for (heading, text) in blocks {
        match passages.last_mut() {
            Some(last)
                if last.heading == heading
                    && last.text.chars().count() + text.chars().count() < PASSAGE_CHARS =>
            {
                last.text.push('\n');
                last.text.push_str(&text);
            }
            _ => passages.push(Passage {
                heading,
                text,
                page: None,
            }),
        }
    }
    passages
}

pub fn build_index(documents: &[Document]) -> tantivy::Result<Searcher> {
    let mut builder = Schema::builder();
    let indexed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let path = builder.add_text_field("path", STRING | STORED);
    let passage = builder.add_u64_field("passage", STORED);
    let title = builder.add_text_field("title", indexed.clone());
    let body = builder.add_text_field("body", indexed);
    let index = Index::create_in_ram(builder.build());
    let analyzer = TextAnalyzer::builder(tantivy_jieba::JiebaTokenizer::with_search_mode(true))
        .filter(LowerCaser)
        .build();
    index.tokenizers().register(TOKENIZER, analyzer.clone());
    let mut writer = index.writer_with_num_threads(1, 15_000_000)?;
    for document in documents {
        for (n, item) in document.passages.iter().enumerate() {
            let heading = item.heading.as_deref().unwrap_or_default();
            writer.add_document(doc!(
                path => document.path.clone(),
                passage => n as u64,
                title => format!("{} {heading}", document.title),
                body => item.text.clone(),
            ))?;
        }
    }
    writer.commit()?;
    Ok(Searcher {
        reader: index.reader()?,
        analyzer,
        path,
        passage,
        title,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passage_link_reads_back_and_its_context_has_its_neighbours() {
        let url = knowledge_url("docs/配置 guide.md", 2);
        assert_eq!(
            knowledge_target(&url),
            Some(("docs/配置 guide.md".to_string(), 2))
        );
        assert_eq!(knowledge_target("/knowledge/a.md"), None);
        assert_eq!(knowledge_target("/knowledge/a%zz.md?p=1"), None);
        assert_eq!(knowledge_target("https://example.org/?p=1"), None);
        let passage = |text: &str| Passage {
            heading: None,
            text: text.to_string(),
            page: None,
        };
        let document = Document {
            path: "a.md".into(),
            title: "A".into(),
            passages: vec![
                passage("one"),
                passage("two"),
                passage("three"),
                passage("four"),
            ],
            shown: None,
        };
        assert_eq!(passage_context(&document, 0).as_deref(), Some("one\ntwo"));
        assert_eq!(
            passage_context(&document, 2).as_deref(),
            Some("two\nthree\nfour")
        );
        assert_eq!(passage_context(&document, 9), None);
    }
}
