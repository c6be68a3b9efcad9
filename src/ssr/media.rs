//! Images through cited: the answer's image strip and the sources' favicons are fetched by
//! the server, never by the browser from third parties. Fetching goes through the SSRF
//! guard of [`crate::ssr::fetch`]; only raster images recognised by their first bytes are
//! served (never SVG or HTML), under a size cap, and kept on disk under an LRU bound.
//!
//! An image address is signed (HMAC-SHA-256 with a key every instance reads from the
//! database), so `/media/image` fetches only what an answer listed; a favicon is always
//! `/favicon.ico` of a site's origin.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tokio::sync::{OnceCell, Semaphore};

use crate::ssr::config::MediaConfig;
use crate::ssr::fetch::{FetchError, FetchPolicy};
use crate::ssr::store::Store;

/// What is fetched: an image of the strip, or a site's favicon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Image,
    Icon,
}

impl Kind {
    fn max_bytes(self) -> usize {
        match self {
            Kind::Image => 1024 * 1024,
            Kind::Icon => 100 * 1024,
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Icon => "icon",
        }
    }
}

/// An image ready to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// Known from the bytes, never from the remote's header.
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
}

/// How long a failed fetch is not tried again.
const FAILURE_TTL: Duration = Duration::from_secs(600);
/// Fetches at once across the app.
const MAX_FETCHES: usize = 8;
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Media {
    allow: std::collections::HashSet<std::net::SocketAddr>,
    cache: DiskCache,
    key: OnceCell<Vec<u8>>,
    failures: Mutex<HashMap<String, Instant>>,
    fetches: Arc<Semaphore>,
    pub images: bool,
    pub favicons: bool,
}

/// The type of a raster image, from its first bytes; `None` for anything else (SVG,
/// HTML, text).
pub fn sniff(bytes: &[u8]) -> Option<&'static str> {
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    if starts(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if starts(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && starts(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else if bytes.len() >= 12
        && &bytes[4..8] == b"ftyp"
        && matches!(&bytes[8..12], b"avif" | b"avis")
    {
        Some("image/avif")
    } else if starts(&[0, 0, 1, 0]) {
        Some("image/x-icon")
    } else if starts(b"BM") && bytes.len() > 14 {
        Some("image/bmp")
    } else {
        None
    }
}

/// HMAC-SHA-256 (RFC 2104).
pub fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let inner = inner.finalize();
    let mut outer = Sha256::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner);
    outer.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Equal strings, compared in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// `scheme://host[:port]` of an http(s) URL.
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return None;
    }
    Some(parsed.origin().ascii_serialization())
}

fn encode(raw: &str) -> String {
    url::form_urlencoded::byte_serialize(raw.as_bytes()).collect()
}

impl Media {
    pub fn new(config: &MediaConfig) -> Media {
        Media {
            allow: config.allow.iter().copied().collect(),
            cache: DiskCache::new(config.dir.clone(), config.cache_bytes),
            key: OnceCell::new(),
            failures: Mutex::new(HashMap::new()),
            fetches: Arc::new(Semaphore::new(MAX_FETCHES)),
            images: config.images,
            favicons: config.favicons,
        }
    }

    /// The signing key: the database's (shared by every instance), made by the first
    /// instance that needs it. Without a database, this process's own.
    async fn key(&self, store: &Store) -> &[u8] {
        self.key
            .get_or_init(|| async {
                let mut fresh = [0u8; 32];
                getrandom::fill(&mut fresh).expect("the operating system provides randomness");
                let fresh = hex(&fresh);
                match store.secret("media", &fresh).await {
                    Ok(key) => key.into_bytes(),
                    Err(error) => {
                        tracing::warn!(%error, "cannot read the media key from the database; image addresses last until this process stops");
                        fresh.into_bytes()
                    }
                }
            })
            .await
    }

    fn signature(key: &[u8], url: &str) -> String {
        hex(&hmac(key, url.as_bytes())[..16])
    }

    /// `/media/image?u=…&k=…` for an http(s) image URL; `None` for anything else.
    pub async fn image_path(&self, store: &Store, url: &str) -> Option<String> {
        origin_of(url)?;
        let key = self.key(store).await;
        Some(format!(
            "/media/image?u={}&k={}",
            encode(url),
            Self::signature(key, url)
        ))
    }

    /// Whether `signature` is the one [`Media::image_path`] gave `url`.
    pub async fn verify(&self, store: &Store, url: &str, signature: &str) -> bool {
        let key = self.key(store).await;
        same(&Self::signature(key, url), signature)
    }

    /// The image at `url` (for an icon: the site's origin), from the disk cache or fetched.
    /// `None` when it cannot be had, is no raster image or is too large; a failure is
    /// remembered for ten minutes.
    pub async fn get(&self, kind: Kind, url: &str) -> Option<Picture> {
        let target = match kind {
            Kind::Image => {
                origin_of(url)?;
                url.to_string()
            }
            Kind::Icon => format!("{}/favicon.ico", origin_of(url)?),
        };
        let name = hex(&Sha256::digest(
            format!("{}:{target}", kind.tag()).as_bytes(),
        ));
        if let Some(picture) = self.cache.get(&name).await {
            return Some(picture);
        }
        {
            let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
            failures.retain(|_, at| at.elapsed() < FAILURE_TTL);
            if failures.contains_key(&name) {
                return None;
            }
        }
        let fetched = self.fetch(kind, &target).await;
        match fetched {
            Ok(picture) => {
                self.cache.put(&name, &picture).await;
                Some(picture)
            }
            Err(reason) => {
                tracing::debug!(kind = kind.tag(), %reason, "no image");
                let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
                // Bounded: a flood of bad addresses forgets the oldest.
                if failures.len() >= 10_000 {
                    failures.clear();
                }
                failures.insert(name, Instant::now());
                None
            }
        }
    }

    async fn fetch(&self, kind: Kind, url: &str) -> Result<Picture, String> {
        let _turn = self
            .fetches
            .acquire()
            .await
            .map_err(|error| error.to_string())?;
        let policy = FetchPolicy {
            timeout: FETCH_TIMEOUT,
            max_bytes: kind.max_bytes(),
            max_redirects: 3,
            allow: self.allow.clone(),
            ..FetchPolicy::default()
        };
        // The header is not trusted (favicons come as anything); the bytes decide.
        let fetched = crate::ssr::fetch::fetch(url, &policy, "image/*", |content_type| {
            !content_type.starts_with("text/") && !content_type.contains("svg")
        })
        .await
        .map_err(|error: FetchError| error.to_string())?;
        if fetched.cut {
            return Err(format!("larger than {} bytes", kind.max_bytes()));
        }
        let content_type = sniff(&fetched.body).ok_or("not a raster image")?;
        Ok(Picture {
            content_type,
            bytes: fetched.body,
        })
    }
}

/// Files under a folder, the least recently used removed first once they pass `bound`
/// bytes. Each file is its content type, a newline, then the image.
struct DiskCache {
    dir: PathBuf,
    bound: u64,
    index: Mutex<Option<Index>>,
}

#[derive(Default)]
struct Index {
    /// Name → (bytes, last use).
    entries: HashMap<String, (u64, u64)>,
    total: u64,
    clock: u64,
}

impl DiskCache {
    fn new(dir: PathBuf, bound: u64) -> DiskCache {
        DiskCache {
            dir,
            bound,
            index: Mutex::new(None),
        }
    }

    /// What the folder already holds, oldest first, read once.
    fn scan(dir: &Path) -> Index {
        let mut files: Vec<(String, u64, std::time::SystemTime)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                if name.len() != 64 || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let meta = entry.metadata().ok()?;
                Some((name, meta.len(), meta.modified().ok()?))
            })
            .collect();
        files.sort_by_key(|(_, _, modified)| *modified);
        let mut index = Index::default();
        for (name, size, _) in files {
            index.clock += 1;
            index.total += size;
            index.entries.insert(name, (size, index.clock));
        }
        index
    }

    fn with_index<T>(&self, f: impl FnOnce(&mut Index) -> T) -> T {
        let mut guard = self.index.lock().unwrap_or_else(|e| e.into_inner());
        let index = guard.get_or_insert_with(|| Self::scan(&self.dir));
        f(index)
    }

    async fn get(&self, name: &str) -> Option<Picture> {
        let known = self.with_index(|index| {
            index.clock += 1;
            let clock = index.clock;
            index.entries.get_mut(name).map(|entry| entry.1 = clock)
        });
        known?;
        let raw = tokio::fs::read(self.dir.join(name)).await.ok()?;
        let split = raw.iter().position(|b| *b == b'\n')?;
        let bytes = raw[split + 1..].to_vec();
        let content_type = sniff(&bytes)?;
        Some(Picture {
            content_type,
            bytes,
        })
    }

    async fn put(&self, name: &str, picture: &Picture) {
        let size = (picture.bytes.len() + picture.content_type.len() + 1) as u64;
        if size > self.bound {
            return;
        }
        if let Err(error) = tokio::fs::create_dir_all(&self.dir).await {
            tracing::warn!(%error, dir = %self.dir.display(), "cannot create the media folder");
            return;
        }
        let mut raw = Vec::with_capacity(size as usize);
        raw.extend_from_slice(picture.content_type.as_bytes());
        raw.push(b'\n');
        raw.extend_from_slice(&picture.bytes);
        let temporary = self.dir.join(format!("{name}.part"));
        if tokio::fs::write(&temporary, &raw).await.is_err()
            || tokio::fs::rename(&temporary, self.dir.join(name))
                .await
                .is_err()
        {
            let _ = tokio::fs::remove_file(&temporary).await;
            return;
        }
        let evicted = self.with_index(|index| {
            index.clock += 1;
            let clock = index.clock;
            if let Some((old, _)) = index.entries.insert(name.to_string(), (size, clock)) {
                index.total -= old;
            }
            index.total += size;
            let mut evicted = Vec::new();
            while index.total > self.bound {
                let Some(oldest) = index
                    .entries
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(name, _)| name.clone())
                else {
                    break;
                };
                if let Some((size, _)) = index.entries.remove(&oldest) {
                    index.total -= size;
                }
                evicted.push(oldest);
            }
            evicted
        });
        for name in evicted {
            let _ = tokio::fs::remove_file(self.dir.join(name)).await;
        }
    }

    #[cfg(test)]
    fn total(&self) -> u64 {
        self.with_index(|index| index.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex(&hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than a block.
        assert_eq!(
            hex(&hmac(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn only_raster_images_are_recognised() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n...."), Some("image/png"));
        assert_eq!(sniff(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(sniff(b"GIF89a.."), Some("image/gif"));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff(&[0, 0, 1, 0, 1, 0]), Some("image/x-icon"));
        for refused in [
            &b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>"[..],
            b"<!DOCTYPE html><html>",
            b"",
            b"BM",
        ] {
            assert_eq!(sniff(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn origins_are_http_only() {
        assert_eq!(
            origin_of("https://Docs.rs:443/tokio?x=1").as_deref(),
            Some("https://docs.rs")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080/a").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:image/png,xx",
            "nope",
        ] {
            assert_eq!(origin_of(bad), None, "{bad}");
        }
    }

    fn png(fill: u8, len: usize) -> Picture {
        let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
        bytes.resize(len, fill);
        Picture {
            content_type: "image/png",
            bytes,
        }
    }

    #[tokio::test]
    async fn the_disk_cache_keeps_under_its_bound_least_recently_used_out() {
        let dir = std::env::temp_dir().join(format!("cited-media-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let name = |i: u8| hex(&Sha256::digest([i]));
        // Room for three 1000-byte entries.
        let cache = DiskCache::new(dir.clone(), 3100);
        for i in 0..3 {
            cache.put(&name(i), &png(i, 990)).await;
        }
        // Using the first makes the second the oldest.
        assert_eq!(cache.get(&name(0)).await, Some(png(0, 990)));
        cache.put(&name(3), &png(3, 990)).await;
        assert!(cache.total() <= 3100, "{}", cache.total());
        assert!(
            cache.get(&name(1)).await.is_none(),
            "the least recently used went"
        );
        assert!(!dir.join(name(1)).exists());
        for kept in [0, 2, 3] {
            assert_eq!(cache.get(&name(kept)).await, Some(png(kept, 990)));
        }
        // A new process finds what the folder holds.
        let reopened = DiskCache::new(dir.clone(), 3100);
        assert_eq!(reopened.get(&name(3)).await, Some(png(3, 990)));
        assert_eq!(reopened.total(), cache.total());
        // An entry larger than the whole bound is not kept.
        cache.put(&name(9), &png(9, 5000)).await;
        assert!(cache.get(&name(9)).await.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
