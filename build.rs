//! Build script: tells the tests whether the shared trace corpus lies beside
//! the checkout (`../shared/corpus`, fetched by `scripts/fetch-corpus`).
//!
//! With it, the cfg `tracegate_corpus` is set and the corpus tests run;
//! without it they are compiled as ignored, so `cargo test` counts them as
//! ignored rather than passed. The always-run test
//! `corpus::the_corpus_is_present_where_required` fails when `CI=true` or
//! `TRACEGATE_REQUIRE_CORPUS=1` and the corpus is missing.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tracegate_corpus)");
    println!("cargo::rerun-if-changed=build.rs");
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let corpus = Path::new(&manifest_dir).join("../shared/corpus");
    if corpus.is_dir() {
        // A watched path that vanishes re-runs this script; a missing one
        // would re-run it (and rebuild the crate) on every build, so the
        // corpus is watched only while it exists. scripts/fetch-corpus
        // touches build.rs after a fetch.
        println!("cargo::rerun-if-changed={}", corpus.display());
        println!("cargo::rustc-cfg=tracegate_corpus");
    }
}
