//! Files are parsed in a child process (`cited extract`), so a hostile file costs one child,
//! never the server. The child limits itself before it reads a byte: its address space
//! (`RLIMIT_AS`, `CITED_FILE_MEMORY_MB`), its CPU time (`RLIMIT_CPU`) and no core dumps; the server kills it past a wall-clock limit (`CITED_FILE_SECS`). A
//! decompression bomb runs the child out of memory, a self-drawing PDF out of stack or
//! time: the server sees a child that failed and tells the person who added the file.
//!
//! The file goes to the child on stdin; the passages come back as one line of JSON, the
//! last line of its stdout (a parser that prints is harmless). At most one child per core
//! runs at once; the others wait.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::{extract, FileError};
use crate::ssr::knowledge::Passage;

/// What one file's extraction may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sandbox {
    /// The child's address space.
    pub memory_bytes: u64,
    /// Its CPU time and its wall-clock time.
    pub time: Duration,
    /// The largest file it reads.
    pub file_bytes: usize,
}

/// Where files are parsed.
#[derive(Debug, Clone)]
pub enum Extractor {
    /// In a child process running `exe extract` (the server's and `cited ask`'s way).
    Child { exe: PathBuf, sandbox: Sandbox },
    /// In this process, on a blocking thread: library tests, whose binary is not cited.
    InProcess,
}

/// The most JSON a child may write: 2,000,000 characters of passages take far less.
const MAX_OUTPUT: u64 = 64 << 20;

/// Children at once.
static CHILDREN: LazyLock<Semaphore> = LazyLock::new(|| {
    Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
});

impl Extractor {
    /// This binary as the child.
    pub fn this_binary(sandbox: Sandbox) -> Extractor {
        match crate::ssr::config::Config::this_binary() {
            Ok(exe) => Extractor::Child { exe, sandbox },
            Err(error) => {
                tracing::warn!(%error, "cited cannot find its own binary: files are parsed in its own process");
                Extractor::InProcess
            }
        }
    }

    /// The passages of the file called `name`.
    pub async fn extract(&self, name: &str, bytes: Bytes) -> Result<Vec<Passage>, FileError> {
        match self {
            Extractor::InProcess => {
                let name = name.to_string();
                crate::ssr::blocking::run(move || extract(&name, &bytes))
                    .await
                    .unwrap_or_else(|| Err(FileError::Unreadable("the parser gave up".into())))
            }
            Extractor::Child { exe, sandbox } => {
                let _slot = CHILDREN.acquire().await;
                in_child(exe, name, bytes, sandbox).await
            }
        }
    }
}

async fn in_child(
    exe: &Path,
    name: &str,
    bytes: Bytes,
    sandbox: &Sandbox,
) -> Result<Vec<Passage>, FileError> {
    let mut child = tokio::process::Command::new(exe)
        .arg("extract")
        .arg("--name")
        .arg(name)
        .arg("--memory-mb")
        .arg((sandbox.memory_bytes >> 20).to_string())
        .arg("--secs")
        .arg(sandbox.time.as_secs().max(1).to_string())
        .arg("--max-bytes")
        .arg(sandbox.file_bytes.to_string())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| {
            tracing::error!(%error, exe = %exe.display(), "cannot start the file reader");
            FileError::Unreadable(error.to_string())
        })?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(FileError::Unreadable("no pipe to the file reader".into()));
    };
    let run = async {
        let write = async move {
            // A child that died early closes its end: what it says is in its status.
            let _ = stdin.write_all(&bytes).await;
        };
        let read = async move {
            let mut out = Vec::new();
            let _ = stdout.take(MAX_OUTPUT + 1).read_to_end(&mut out).await;
            out
        };
        let ((), out) = tokio::join!(write, read);
        (out, child.wait().await)
    };
    // The wall clock: a child that sleeps or waits uses no CPU time.
    let outcome = tokio::time::timeout(sandbox.time + Duration::from_secs(1), run).await;
    let Ok((out, status)) = outcome else {
        let _ = child.kill().await;
        tracing::warn!(
            file = name,
            "a file took longer than CITED_FILE_SECS to read: its reader was stopped"
        );
        return Err(FileError::TooCostly);
    };
    let status = status.map_err(|error| FileError::Unreadable(error.to_string()))?;
    if !status.success() {
        tracing::warn!(file = name, %status, "a file's reader ran out of memory or time, or crashed");
        return Err(FileError::TooCostly);
    }
    if out.len() as u64 > MAX_OUTPUT {
        return Err(FileError::TooCostly);
    }
    let last = out
        .split(|b| *b == b'\n')
        .rev()
        .find(|line| !line.is_empty())
        .unwrap_or_default();
    serde_json::from_slice::<Result<Vec<Passage>, FileError>>(last)
        .unwrap_or_else(|_| Err(FileError::Unreadable("the file reader's answer".into())))
}

/// `cited extract`: the child's side. Limits itself, reads the file on stdin, writes
/// `{"Ok":[passages]}` or `{"Err":…}` as the last line of stdout.
pub fn child_main(name: &str, memory_mb: u64, secs: u64, max_bytes: usize) -> ExitCode {
    if let Err(error) = limit(memory_mb << 20, secs) {
        // Unlimited, a bomb could take the server's memory: refuse rather than read.
        let _ = writeln!(std::io::stderr(), "cannot limit the file reader: {error}");
        return ExitCode::FAILURE;
    }
    let mut bytes = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes);
    let outcome = match read {
        Err(error) => Err(FileError::Unreadable(error.to_string())),
        Ok(_) if bytes.len() > max_bytes => Err(FileError::TooLarge {
            max_mb: max_bytes >> 20,
        }),
        Ok(_) => extract(name, &bytes),
    };
    let Ok(mut json) = serde_json::to_vec(&outcome) else {
        return ExitCode::FAILURE;
    };
    json.insert(0, b'\n');
    json.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(&json)
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The child's own limits: address space, CPU seconds, no core file.
fn limit(memory_bytes: u64, secs: u64) -> std::io::Result<()> {
    use rlimit::Resource;
    Resource::AS.set(memory_bytes, memory_bytes)?;
    // The soft limit sends SIGXCPU, which ends the process; the hard one a second later.
    Resource::CPU.set(secs, secs + 1)?;
    Resource::CORE.set(0, 0)?;
    Ok(())
}
