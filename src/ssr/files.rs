//! Files attached to a conversation: PDF (by page), Markdown, text, HTML and DOCX. Their
//! text is extracted once, on upload, into passages (the knowledge base's), kept in the
//! store with the conversation, indexed per answer with the knowledge base's tantivy +
//! jieba stack, and searched alongside the web. A passage is cited with the file's name
//! (and page) and opens highlighted at `/knowledge/~files/<conversation>/<file>`.

pub mod child;
mod pdf;

use async_trait::async_trait;

use crate::ssr::knowledge::{
    build_index, html_passages, markdown_passages, passage_results, plain_passages, Document,
    Passage, Searcher,
};
use crate::ssr::search::{ProviderKind, SearchError, SearchOptions, SearchProvider, SearchResults};

/// Where a conversation's files are served: `/knowledge/~files/<conversation>/<file>`.
pub const FILES_PREFIX: &str = "~files/";
/// The most files one conversation holds.
pub const MAX_FILES: usize = 20;
/// The most characters kept of one file's text.
const MAX_TEXT_CHARS: usize = 2_000_000;
/// The most pages kept of one PDF.
const MAX_PAGES: usize = 2_000;

/// The kinds of file accepted, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Pdf,
    Markdown,
    Text,
    Html,
    Docx,
}

impl FileKind {
    pub fn of(name: &str) -> Option<FileKind> {
        let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match extension.as_str() {
            "pdf" => Some(FileKind::Pdf),
            "md" | "markdown" => Some(FileKind::Markdown),
            "txt" | "text" => Some(FileKind::Text),
            "html" | "htm" => Some(FileKind::Html),
            "docx" => Some(FileKind::Docx),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum FileError {
    #[error("unsupported file type")]
    Unsupported,
    #[error("the file is larger than {max_mb} MB")]
    TooLarge { max_mb: usize },
    #[error("no readable text in the file")]
    NoText,
    #[error("the file cannot be read: {0}")]
    Unreadable(String),
    #[error("a conversation holds at most {max} files")]
    TooMany { max: usize },
    /// Its reader ran out of memory or time (`child`): damaged, or made to.
    #[error("reading the file takes more memory or time than one file may have")]
    TooCostly,
}

/// What went wrong with a file, for the person who added it.
pub fn message(lang: crate::model::Lang, error: &FileError) -> String {
    let t = lang.texts();
    match error {
        FileError::Unsupported => t.file_unsupported.to_string(),
        FileError::TooLarge { max_mb } => t.file_too_large.replace("{max}", &max_mb.to_string()),
        FileError::NoText => t.file_no_text.to_string(),
        FileError::Unreadable(reason) => t.file_unreadable.replace("{reason}", reason),
        FileError::TooMany { max } => t.file_too_many.replace("{max}", &max.to_string()),
        FileError::TooCostly => t.file_too_costly.to_string(),
    }
}

/// A file's name as kept and shown: its last path segment, without control characters,
/// at most 120 characters.
pub fn clean_name(raw: &str) -> String {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    last.chars()
        .filter(|c| !c.is_control())
        .take(120)
        .collect::<String>()
        .trim()
        .to_string()
}

/// The passages of a file called `name`. Runs the parsers; call it off the async workers
/// (`ssr::blocking`). A parser that panics on a malformed file is an `Unreadable` file.
pub fn extract(name: &str, bytes: &[u8]) -> Result<Vec<Passage>, FileError> {
    let kind = FileKind::of(name).ok_or(FileError::Unsupported)?;
    let passages = std::panic::catch_unwind(|| passages_of(kind, bytes))
        .map_err(|_| FileError::Unreadable("the parser gave up".to_string()))??;
    let passages: Vec<Passage> = passages
        .into_iter()
        .filter(|p| p.text.chars().any(char::is_alphanumeric))
        .collect();
    if passages.is_empty() {
        return Err(FileError::NoText);
    }
    Ok(passages)
}

fn text_of(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.chars().take(MAX_TEXT_CHARS).collect()
}

fn passages_of(kind: FileKind, bytes: &[u8]) -> Result<Vec<Passage>, FileError> {
    Ok(match kind {
        FileKind::Markdown => markdown_passages(&text_of(bytes)).1,
        FileKind::Text => plain_passages(&text_of(bytes), None),
        FileKind::Html => html_passages(&text_of(bytes)).1,
        FileKind::Pdf => pdf_passages(bytes)?,
        FileKind::Docx => plain_passages(&docx_text(bytes)?, None),
    })
}

/// How many bytes any one stream of a PDF may inflate to (a page's content, an object
/// stream, a font's encoding): past it, lopdf stops with an error instead of inflating a
/// bomb. A real page's content is well under a megabyte.
const MAX_PDF_STREAM_BYTES: usize = 32 << 20;

/// A PDF's text, page by page, through lopdf with its decompression limits on: the
/// document loaded with `max_decompressed_size`, each page's content and fonts decoded
/// within [`MAX_PDF_STREAM_BYTES`] (`pdf::page_text`). As many pages and characters as any
/// other file may give.
fn pdf_passages(bytes: &[u8]) -> Result<Vec<Passage>, FileError> {
    if !bytes.starts_with(b"%PDF") {
        return Err(FileError::Unreadable("not a PDF".to_string()));
    }
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(MAX_PDF_STREAM_BYTES),
        ..lopdf::LoadOptions::default()
    };
    let document = lopdf::Document::load_mem_with_options(bytes, options).map_err(pdf_error)?;
    let mut passages = Vec::new();
    let mut chars = 0;
    let mut costly = false;
    for (number, id) in document.get_pages().into_iter().take(MAX_PAGES) {
        let page = match pdf::page_text(&document, id, MAX_PDF_STREAM_BYTES) {
            Ok(text) => text,
            Err(error) => {
                // One page that cannot be read leaves the others.
                costly |= matches!(pdf_error(error), FileError::TooCostly);
                continue;
            }
        };
        chars += page.chars().count();
        if chars > MAX_TEXT_CHARS {
            break;
        }
        // PDF text comes in short lines: a blank line still ends a paragraph.
        for mut passage in plain_passages(&page, None) {
            passage.page = Some(number);
            passages.push(passage);
        }
    }
    if passages.is_empty() && costly {
        return Err(FileError::TooCostly);
    }
    Ok(passages)
}

/// A stream past its limit is a file too costly to read; anything else, unreadable.
fn pdf_error(error: lopdf::Error) -> FileError {
    match error {
        lopdf::Error::Decompress(_) => FileError::TooCostly,
        error => FileError::Unreadable(error.to_string()),
    }
}

/// The text of a DOCX file's `word/document.xml`: paragraphs separated by blank lines.
fn docx_text(bytes: &[u8]) -> Result<String, FileError> {
    use std::io::Read;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|error| FileError::Unreadable(error.to_string()))?;
    let mut xml = String::new();
    archive
        .by_name("word/document.xml")
        .map_err(|error| FileError::Unreadable(error.to_string()))?
        .take(50 * 1024 * 1024)
        .read_to_string(&mut xml)
        .map_err(|error| FileError::Unreadable(error.to_string()))?;
    Ok(word_text(&xml))
}

/// Text runs (`<w:t>`) of WordprocessingML, a blank line after each paragraph (`</w:p>`),
/// tabs and breaks kept as spaces and newlines, entities decoded.
pub fn word_text(xml: &str) -> String {
    let mut out = String::new();
    let mut rest = xml;
    let mut in_text = false;
    while let Some(open) = rest.find('<') {
        if in_text {
            out.push_str(&unescape(&rest[..open]));
        }
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '/', '\t', '\n'])
            .next()
            .unwrap_or("");
        let closing = tag.starts_with('/');
        let empty = tag.ends_with('/');
        match name {
            "w:t" => in_text = !closing && !empty,
            "w:p" if closing => out.push_str("\n\n"),
            "w:tab" => out.push(' '),
            "w:br" | "w:cr" => out.push('\n'),
            _ => {}
        }
        rest = &rest[open + close + 1..];
        if out.len() > MAX_TEXT_CHARS {
            break;
        }
    }
    out
}

fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let Some(semi) = after.find(';').filter(|semi| *semi <= 10) else {
            out.push('&');
            rest = after;
            continue;
        };
        let entity = &after[..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A conversation's file as the index sees it: `path` is where it is served.
pub fn document(conversation: &str, id: &str, name: &str, passages: Vec<Passage>) -> Document {
    Document {
        path: format!("{FILES_PREFIX}{conversation}/{id}"),
        title: name.to_string(),
        passages,
        shown: Some(name.to_string()),
    }
}

/// Conversations' file indexes, each built once for its set of files: the answers of a
/// conversation reuse it until a file is added or removed (or the conversation goes), instead of
/// reading and indexing every file again for every question.
pub struct FileIndexes {
    cache: std::sync::Mutex<lru::LruCache<IndexKey, std::sync::Arc<ConversationFiles>>>,
    built: std::sync::atomic::AtomicU64,
}

/// A conversation and the ids of its files.
type IndexKey = (String, Vec<String>);

/// Indexes kept at once (the most recently used conversations').
const INDEXES_KEPT: usize = 32;

impl Default for FileIndexes {
    fn default() -> FileIndexes {
        FileIndexes {
            cache: std::sync::Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(INDEXES_KEPT).unwrap_or(std::num::NonZeroUsize::MIN),
            )),
            built: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl FileIndexes {
    /// The index of `conversation`'s files `ids`, if built.
    pub fn get(
        &self,
        conversation: &str,
        ids: &[String],
    ) -> Option<std::sync::Arc<ConversationFiles>> {
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .get(&(conversation.to_string(), ids.to_vec()))
            .cloned()
    }

    /// Keeps a newly built index.
    pub fn put(
        &self,
        conversation: &str,
        ids: Vec<String>,
        index: std::sync::Arc<ConversationFiles>,
    ) {
        self.built
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache.put((conversation.to_string(), ids), index);
    }

    /// How many indexes were built.
    pub fn built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A conversation's files, searchable like the knowledge base.
pub struct ConversationFiles {
    documents: Vec<Document>,
    searcher: Option<Searcher>,
    snippet_chars: usize,
}

impl ConversationFiles {
    /// Indexes `documents` (in memory; run it off the async workers).
    pub fn new(documents: Vec<Document>, snippet_chars: usize) -> ConversationFiles {
        let searcher = match build_index(&documents) {
            Ok(searcher) => Some(searcher),
            Err(error) => {
                tracing::warn!(%error, "cannot index the conversation's files");
                None
            }
        };
        ConversationFiles {
            documents,
            searcher,
            snippet_chars,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// A file by the path its passages are served under.
    pub fn document(&self, path: &str) -> Option<&Document> {
        self.documents.iter().find(|d| d.path == path)
    }
}

#[async_trait]
impl SearchProvider for ConversationFiles {
    async fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let limit = options.max_results.unwrap_or(3).clamp(1, 20);
        Ok(passage_results(
            self.searcher.as_ref(),
            &self.documents,
            query,
            limit,
            self.snippet_chars,
        ))
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Knowledge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_paragraphs_runs_and_entities() {
        let xml = r#"<?xml version="1.0"?><w:document><w:body><w:p><w:r><w:t>Tokio &amp; async</w:t></w:r><w:r><w:t xml:space="preserve"> runtimes</w:t></w:r></w:p><w:p><w:r><w:t>第二段&#x4E00;</w:t><w:tab/><w:t>tab</w:t></w:r></w:p></w:body></w:document>"#;
        assert_eq!(word_text(xml), "Tokio & async runtimes\n\n第二段一 tab\n\n");
        assert_eq!(unescape("a &lt;b&gt; &bogus; & c"), "a <b> &bogus; & c");
    }

    #[test]
    fn names_and_kinds() {
        assert_eq!(clean_name("C:\\Users\\me\\Notes.PDF"), "Notes.PDF");
        assert_eq!(clean_name("../../etc/passwd"), "passwd");
        assert_eq!(FileKind::of("Notes.PDF"), Some(FileKind::Pdf));
        assert_eq!(FileKind::of("a.docx"), Some(FileKind::Docx));
        assert_eq!(FileKind::of("a.exe"), None);
        assert_eq!(FileKind::of("noextension"), None);
        assert_eq!(extract("a.exe", b"MZ"), Err(FileError::Unsupported));
        assert_eq!(extract("a.txt", b"   \n\n  "), Err(FileError::NoText));
        assert!(matches!(
            extract("a.pdf", b"not a pdf"),
            Err(FileError::Unreadable(_))
        ));
        assert!(matches!(
            extract("a.docx", b"PK not a zip"),
            Err(FileError::Unreadable(_))
        ));
    }
}
