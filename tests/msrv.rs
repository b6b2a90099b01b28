//! The declared minimum Rust version is true: `rust-version` in Cargo.toml is
//! at least the `rust-version` of every locked package (normal, build and
//! dev dependencies, every platform), as `cargo metadata` reports them. A
//! package may need more than it declares (comfy-table 7.2.2 uses let
//! chains, Rust 1.88, and declares nothing; hence 7.2.1 in Cargo.lock): the
//! CI job `msrv` builds with exactly the declared toolchain, which catches
//! those and the crate's own code.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `1.86` or `1.86.0` as (major, minor, patch).
fn version(text: &str) -> (u64, u64, u64) {
    let mut parts = text.split('.').map(|p| {
        p.parse::<u64>()
            .unwrap_or_else(|e| panic!("rust-version {text:?}: {e}"))
    });
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(&manifest)
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["name"] == "tracegate" && p["source"].is_null())
        .expect("the tracegate package");
    let declared = ours["rust_version"]
        .as_str()
        .expect("Cargo.toml declares rust-version");
    let mut needed: Vec<(String, &str)> = packages
        .iter()
        .filter_map(|p| {
            let rust_version = p["rust_version"].as_str()?;
            let name = format!(
                "{} {}",
                p["name"].as_str().unwrap_or("?"),
                p["version"].as_str().unwrap_or("?")
            );
            (version(rust_version) > version(declared)).then_some((name, rust_version))
        })
        .collect();
    needed.sort_by_key(|(_, v)| std::cmp::Reverse(version(v)));
    assert!(
        needed.is_empty(),
        "Cargo.toml says rust-version = \"{declared}\", but these locked packages need more \
         (raise it to the first one's): {needed:?}"
    );
    assert!(
        packages.len() > 50,
        "{} packages: not the lock file?",
        packages.len()
    );
}
