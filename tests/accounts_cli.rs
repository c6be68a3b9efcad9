//! `cited user …` and `cited key …` as an operator runs them: the real binary on a fresh
//! SQLite database, the password piped in; and `cited serve` refusing to listen beyond
//! loopback with nobody signing in.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn cited(database: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cited"))
        .args(args)
        .env("CITED_DATABASE_URL", database)
        .env("CITED_AUTH", "accounts")
        .env("CITED_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn accounts_and_keys_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("cited-accounts-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let database = format!("sqlite:{}", dir.join("cited.db").display());
    let db = database.as_str();

    let short = cited(db, &["user", "add", "alice"], "short\n");
    assert!(!short.status.success());
    assert!(
        text(&short.stderr).contains("at least 8"),
        "{}",
        text(&short.stderr)
    );
    let added = cited(db, &["user", "add", "alice"], "alice's password\n");
    assert!(added.status.success(), "{}", text(&added.stderr));
    let again = cited(db, &["user", "add", "alice"], "another password\n");
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("exists"));
    let bad_name = cited(db, &["user", "add", "a b"], "a fine password\n");
    assert!(!bad_name.status.success());
    let listed = cited(db, &["user", "list"], "");
    assert_eq!(text(&listed.stdout), "alice\n");

    let added = cited(db, &["key", "add", "alice", "--label", "laptop"], "");
    assert!(added.status.success(), "{}", text(&added.stderr));
    let key = text(&added.stdout);
    assert!(key.starts_with("cited_") && key.trim().len() == 38, "{key}");
    // Its id, said once on stderr, is listed; it is not a piece of the key.
    let said = text(&added.stderr);
    let id = said
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert_eq!(id.len(), 8, "{said}");
    assert!(!key.contains(&id), "{id} {key}");
    let keys = text(&cited(db, &["key", "list", "alice"], "").stdout);
    assert_eq!(keys.lines().count(), 1);
    assert!(keys.contains("laptop") && keys.starts_with(&id), "{keys}");
    assert!(
        !keys.contains(key.trim()),
        "the key itself is never shown again"
    );
    let nobody = cited(db, &["key", "add", "nobody"], "");
    assert!(
        !nobody.status.success(),
        "keys only for accounts that exist"
    );

    let passwd = cited(db, &["user", "passwd", "bob"], "bob's password\n");
    assert!(!passwd.status.success());
    assert!(text(&passwd.stderr).contains("no user bob"));
    let passwd = cited(db, &["user", "passwd", "alice"], "a new password\n");
    assert!(passwd.status.success(), "{}", text(&passwd.stderr));
    // A new password is what one sets after a leak: the old keys stop working.
    assert!(
        text(&passwd.stderr).contains("API keys revoked"),
        "{}",
        text(&passwd.stderr)
    );
    assert_eq!(
        text(&cited(db, &["key", "list", "alice"], "").stdout),
        "",
        "keys revoked with the old password"
    );

    let removed = cited(db, &["user", "remove", "alice"], "");
    assert!(removed.status.success());
    assert_eq!(text(&cited(db, &["user", "list"], "").stdout), "");
    assert_eq!(
        text(&cited(db, &["key", "list", "alice"], "").stdout),
        "",
        "keys go too"
    );
}

#[test]
fn serving_beyond_loopback_needs_sign_in() {
    let output = Command::new(env!("CARGO_BIN_EXE_cited"))
        .arg("serve")
        .env("CITED_ADDR", "0.0.0.0:0")
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env_remove("CITED_AUTH")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = text(&output.stderr);
    assert!(said.contains("CITED_AUTH=accounts"), "{said}");
}
