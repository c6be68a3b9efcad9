//! Hostile files against the real binary: decompression bombs (a nested filter chain, an
//! object stream, a DOCX), a self-drawing PDF form, 10,000 nested arrays and an HTML file
//! of one 20 MB line. The bombs and the self-drawing form are refused with a clear message
//! in the page's language; a file whose readable text survives (the page beside an object
//! stream its reader could not inflate, the arrays, the long line within the characters one
//! file may hold) is read. The server answers `/healthz` throughout and its own memory
//! never holds a bomb's contents: the files are parsed in a child process
//! (`ssr::files::child`) that runs out of memory or time instead.

#![allow(
    clippy::unwrap_used,
    clippy::print_stderr,
    reason = "a test, whose figures go to its output"
)]

mod common;

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{free_port, start_cited};

/// A zlib stream of `1 + copies × 258` zero bytes, written by hand (compressing gigabytes
/// would take the test minutes): one fixed-Huffman block, a literal zero, then copies of
/// 258 bytes at distance 1, 13 bits each.
fn zeros_zlib(copies: usize) -> Vec<u8> {
    let mut bits = Bits::default();
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    bits.code(0x30, 8); // literal 0
    for _ in 0..copies {
        bits.code(0b1100_0101, 8); // length symbol 285: 258 bytes
        bits.code(0, 5); // distance code 0: 1 byte back
    }
    bits.code(0, 7); // end of block (256)
    let mut out = vec![0x78, 0x01];
    out.extend(bits.finish());
    let n = (1 + copies as u64 * 258) % 65_521;
    let adler = (n << 16) | 1;
    out.extend((adler as u32).to_be_bytes());
    out
}

#[derive(Default)]
struct Bits {
    out: Vec<u8>,
    acc: u64,
    used: u32,
}

impl Bits {
    /// `count` bits of `value`, least significant first (headers, extra bits).
    fn put(&mut self, value: u64, count: u32) {
        self.acc |= value << self.used;
        self.used += count;
        while self.used >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.used -= 8;
        }
    }

    /// A Huffman code of `len` bits, most significant first.
    fn code(&mut self, code: u64, len: u32) {
        let mut reversed = 0;
        for i in 0..len {
            reversed |= ((code >> i) & 1) << (len - 1 - i);
        }
        self.put(reversed, len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// The objects of a PDF of one page whose content is object 4, with `more` objects from 6
/// on (object 5 is its font); `resources` are the page's.
fn page_objects(content: Vec<u8>, resources: &str, more: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
             /Resources << /Font << /F1 5 0 R >> {resources} >> >>"
        )
        .into_bytes(),
        content,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    objects.extend(more);
    objects
}

/// The objects written out with their offsets; the offsets.
fn write_objects(objects: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let mut out = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend(body);
        out.extend(b"\nendobj\n");
    }
    (out, offsets)
}

/// A PDF with a classic cross-reference table.
fn pdf(content: Vec<u8>, resources: &str, more: Vec<Vec<u8>>) -> Vec<u8> {
    let objects = page_objects(content, resources, more);
    let (mut out, offsets) = write_objects(&objects);
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A PDF 1.5 whose cross-reference stream puts one more object in the object stream that
/// is object 6, so a reader must inflate that stream to load the document.
fn pdf_with_object_stream(object_stream: Vec<u8>) -> Vec<u8> {
    let objects = page_objects(
        stream("", b"BT /F1 12 Tf 72 720 Td (The keeper logs ships.) Tj ET"),
        "",
        vec![object_stream],
    );
    let (mut out, offsets) = write_objects(&objects);
    let xref_number = objects.len() + 1;
    let xref_offset = out.len();
    let entry = |kind: u8, field: u32, index: u16| {
        let mut e = vec![kind];
        e.extend(field.to_be_bytes());
        e.extend(index.to_be_bytes());
        e
    };
    let mut entries = entry(0, 0, 65_535);
    for offset in &offsets {
        entries.extend(entry(1, *offset as u32, 0));
    }
    entries.extend(entry(1, xref_offset as u32, 0));
    entries.extend(entry(2, 6, 0));
    out.extend(format!("{xref_number} 0 obj\n").as_bytes());
    out.extend(stream(
        &format!(
            "/Type /XRef /Size {} /W [1 4 2] /Root 1 0 R",
            xref_number + 2
        ),
        &entries,
    ));
    out.extend(format!("\nendobj\nstartxref\n{xref_offset}\n%%EOF\n").as_bytes());
    out
}

fn text_content() -> Vec<u8> {
    stream("", b"BT /F1 12 Tf 72 720 Td (The keeper logs ships.) Tj ET")
}

/// A DOCX whose `word/document.xml` inflates to about 2 GB of zeros (the CRC is not
/// computed: no reader gets that far).
fn docx_bomb() -> Vec<u8> {
    let zlib = zeros_zlib(8_000_000);
    let deflate = &zlib[2..zlib.len() - 4];
    let name = b"word/document.xml";
    let size = 1 + 8_000_000u32 * 258;
    let mut out = Vec::new();
    let header = |out: &mut Vec<u8>, central: bool| {
        if central {
            out.extend(0x0201_4b50u32.to_le_bytes());
            out.extend(20u16.to_le_bytes());
        } else {
            out.extend(0x0403_4b50u32.to_le_bytes());
        }
        out.extend(20u16.to_le_bytes()); // version needed
        out.extend(0u16.to_le_bytes()); // flags
        out.extend(8u16.to_le_bytes()); // deflate
        out.extend([0u8; 4]); // time, date
        out.extend(0u32.to_le_bytes()); // crc
        out.extend((deflate.len() as u32).to_le_bytes());
        out.extend(size.to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend(0u16.to_le_bytes()); // extra
        if central {
            out.extend([0u8; 6]); // comment length, disk, internal attributes
            out.extend(0u32.to_le_bytes()); // external attributes
            out.extend(0u32.to_le_bytes()); // the local header's offset
        }
        out.extend(name);
    };
    header(&mut out, false);
    out.extend(deflate);
    let directory = out.len();
    header(&mut out, true);
    let directory_size = out.len() - directory;
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend(1u16.to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend((directory_size as u32).to_le_bytes());
    out.extend((directory as u32).to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// The server's peak resident memory, from the kernel.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_files_cost_one_child_never_the_server() {
    cited::ssr::net::install_crypto_provider();
    let port = free_port();
    let mut server = start_cited(
        port,
        &[
            ("CITED_SEARXNG_URL", "http://127.0.0.1:9"),
            ("CITED_FILE_MAX_MB", "30"),
            ("CITED_FILE_MEMORY_MB", "256"),
            ("CITED_FILE_SECS", "10"),
            // Eight files in a few seconds: above the upload rate a person needs.
            ("CITED_RATE_ASKS_PER_MIN", "600"),
            ("CITED_DATABASE_URL", "sqlite::memory:"),
        ],
        Stdio::null(),
    )
    .await;
    let base = format!("http://127.0.0.1:{port}");

    // /healthz, polled all along: every answer must come, and soon.
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(AtomicUsize::new(0));
    let polls = Arc::new(AtomicUsize::new(0));
    let poller = {
        let (stop, failures, polls) = (stop.clone(), failures.clone(), polls.clone());
        let url = format!("{base}/healthz");
        tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_secs(3))
                .build()
                .unwrap();
            while !stop.load(Ordering::SeqCst) {
                let ok = client
                    .get(&url)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if !ok {
                    failures.fetch_add(1, Ordering::SeqCst);
                }
                polls.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };

    // About 2 GB of zeros behind two filters (13.6 MB of zlib, a few KB after the second).
    let nested = pdf(
        stream(
            "/Filter [/FlateDecode /FlateDecode]",
            &zlib(&zeros_zlib(8_000_000)),
        ),
        "",
        Vec::new(),
    );
    // About 2 GB of zeros in an object stream, inflated while the PDF loads.
    let object_stream = pdf_with_object_stream(stream(
        "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode",
        &zeros_zlib(8_000_000),
    ));
    // A form that draws itself.
    let self_drawing = pdf(
        stream("", b"q /X1 Do Q"),
        "/XObject << /X1 6 0 R >>",
        vec![stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X1 6 0 R >> >>",
            b"/X1 Do",
        )],
    );
    let nested_arrays = pdf(
        text_content(),
        "",
        vec![format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes()],
    );
    let one_line = format!(
        "<html><body><p>{}</p></body></html>",
        "keeper ".repeat(20 * 1024 * 1024 / 7)
    )
    .into_bytes();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("nested.pdf", nested),
        ("object-stream.pdf", object_stream),
        ("self-drawing.pdf", self_drawing),
        ("nested-arrays.pdf", nested_arrays),
        ("bomb.docx", docx_bomb()),
        ("one-line.html", one_line),
    ];
    let client = reqwest::Client::builder()
        .cookie_store(true)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let clear = [
        "Reading this file takes more memory or time than one file may have",
        "This file cannot be read",
        "The file has no readable text",
    ];
    for (name, body) in files {
        let response = client
            .post(format!("{base}/api/files"))
            .query(&[("name", name)])
            .header("accept-language", "en")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        let status = response.status().as_u16();
        let reply: serde_json::Value = response.json().await.unwrap_or_default();
        eprintln!("{name}: {status} {reply}");
        if matches!(
            name,
            "one-line.html" | "object-stream.pdf" | "nested-arrays.pdf"
        ) {
            // The text a reader can use (kept within the characters one file may hold; a
            // bomb its reader could not inflate left out), or a clear refusal.
            assert!(status == 200 || status == 400, "{name}: {status} {reply}");
        } else {
            assert_eq!(status, 400, "{name}: {reply}");
        }
        if status == 400 {
            let message = reply["error"].as_str().unwrap_or_default();
            assert!(
                clear.iter().any(|c| message.starts_with(c)),
                "{name}: {message}"
            );
        }
        assert!(
            server.try_wait().unwrap().is_none(),
            "the server survived {name}"
        );
    }
    // In the page's language.
    let response = client
        .post(format!("{base}/api/files"))
        .query(&[("name", "again.pdf")])
        .header("accept-language", "zh-CN")
        .body(pdf(
            stream(
                "/Filter [/FlateDecode /FlateDecode]",
                &zlib(&zeros_zlib(8_000_000)),
            ),
            "",
            Vec::new(),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let reply: serde_json::Value = response.json().await.unwrap();
    assert!(
        reply["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("读取这个文件所需的内存或时间超出了单个文件的限制"),
        "{reply}"
    );
    // An honest file still goes in.
    let response = client
        .post(format!("{base}/api/files"))
        .query(&[("name", "keeper.pdf")])
        .body(pdf(text_content(), "", Vec::new()))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let reply: serde_json::Value = response.json().await.unwrap_or_default();
    assert_eq!(status, 200, "{reply}");

    stop.store(true, Ordering::SeqCst);
    poller.await.unwrap();
    assert!(polls.load(Ordering::SeqCst) > 5);
    assert_eq!(
        failures.load(Ordering::SeqCst),
        0,
        "/healthz answered throughout"
    );
    // The bombs' gigabytes were never in the server's own memory.
    let peak = peak_rss_kb(server.id());
    eprintln!("the server's peak resident memory: {} MB", peak / 1024);
    assert!(
        peak > 0 && peak < 512 * 1024,
        "the server's peak memory: {peak} kB"
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn the_handmade_zlib_stream_is_the_zeros_it_claims() {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&zeros_zlib(1000)[..])
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(out.len(), 1 + 1000 * 258);
    assert!(out.iter().all(|b| *b == 0));
}
