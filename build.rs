#![allow(
    clippy::print_stdout,
    reason = "cargo reads a build script's instructions from its stdout"
)]

//! Puts the Chinese–English dictionary table (`scripts/cedict.sh` makes it, from CC-CEDICT)
//! where the server embeds it: `$OUT_DIR/cedict.tsv.gz`. From `CITED_CEDICT_TABLE`, else
//! `~/.cache/cited-cedict/glosses.tsv.gz`. Without one the server is built with an empty
//! dictionary (a warning says so): the citation checker then reads across languages by
//! numbers and names only, and `cited doctor` reports it.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=CITED_CEDICT_TABLE");
    println!("cargo:rerun-if-env-changed=HOME");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target = out.join("cedict.tsv.gz");
    let source = std::env::var_os("CITED_CEDICT_TABLE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(".cache/cited-cedict/glosses.tsv.gz"))
        });
    let wanted = std::env::var_os("CARGO_FEATURE_SSR").is_some();
    if let Some(source) = &source {
        println!("cargo:rerun-if-changed={}", source.display());
    }
    match source.filter(|path| wanted && path.is_file()) {
        Some(path) => {
            std::fs::copy(&path, &target).expect("the dictionary table can be copied");
        }
        None => {
            if wanted {
                println!(
                    "cargo:warning=no CC-CEDICT table (run scripts/cedict.sh or set CITED_CEDICT_TABLE): the citation checker is built without its Chinese–English dictionary"
                );
            }
            std::fs::write(&target, b"").expect("OUT_DIR is writable");
        }
    }
}
