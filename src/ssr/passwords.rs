//! Account passwords: argon2id (the crate's defaults: 19 MiB, 2 passes), as PHC strings
//! that carry their own salt and parameters. Both calls are slow on purpose: run them on a
//! blocking thread (`ssr::blocking`).

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::Argon2;

/// The shortest password `cited user add` accepts.
pub const MIN_LENGTH: usize = 8;

/// A PHC string (`$argon2id$v=19$…`) for `password`, with a fresh random salt.
pub fn hash(password: &str) -> Result<String, String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|error| error.to_string())
}

/// Whether `password` matches `phc`. A malformed hash matches nothing.
pub fn verify(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

/// A hash to check against when the user does not exist, so an unknown name takes as long
/// to refuse as a wrong password.
pub fn decoy() -> &'static str {
    static DECOY: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| hash("decoy password").unwrap_or_default());
    &DECOY
}

/// A new API key (`cited_` and 128 random bits in hex) and its id (32 random bits of its
/// own, in hex, shown in listings: the id tells nothing of the key).
pub fn new_api_key() -> Result<(String, String), String> {
    let mut bytes = [0u8; 20];
    getrandom::fill(&mut bytes).map_err(|error| error.to_string())?;
    let hex = |bytes: &[u8]| -> String { bytes.iter().map(|b| format!("{b:02x}")).collect() };
    Ok((format!("cited_{}", hex(&bytes[..16])), hex(&bytes[16..])))
}

/// What is stored of an API key: its SHA-256 in hex. Keys are random and long, so a fast
/// hash is enough (and checking one per request stays cheap).
pub fn api_key_hash(key: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A user name: 1–64 letters, digits, `.`, `-`, `_`, `+` or `@` (an e-mail address from
/// a sign-in proxy fits).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '+' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let phc = hash("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$"), "{phc}");
        assert!(verify("correct horse", &phc));
        assert!(!verify("correct horsf", &phc));
        assert!(!verify("correct horse", "not a hash"));
        assert_ne!(
            hash("correct horse").unwrap(),
            phc,
            "a fresh salt each time"
        );
        assert!(!verify("anything", decoy()));
    }

    #[test]
    fn api_keys_are_random_and_stored_hashed() {
        let (key, id) = new_api_key().unwrap();
        assert!(key.starts_with("cited_") && key.len() == 38, "{key}");
        // The id is its own: 8 hex digits found nowhere in the key.
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        let others: Vec<(String, String)> = (0..50).map(|_| new_api_key().unwrap()).collect();
        assert!(
            others.iter().all(|(key, id)| !key.contains(id.as_str())),
            "an id repeats its key"
        );
        assert_ne!(new_api_key().unwrap().0, key);
        let hash = api_key_hash(&key);
        assert_eq!(hash.len(), 64);
        assert!(!hash.contains(&key[6..]));
        assert_eq!(hash, api_key_hash(&key));
    }

    #[test]
    fn names() {
        assert!(valid_name("alice"));
        assert!(valid_name("bob.smith@example.org"));
        assert!(valid_name("bob+cited@example.org"));
        assert!(valid_name("张三"));
        assert!(!valid_name(""));
        assert!(!valid_name("a b"));
        assert!(!valid_name("a:b"));
        assert!(!valid_name(&"x".repeat(65)));
    }
}
