#!/usr/bin/env bash
# Builds tracegate from the Action's own source, when action/resolve.sh found
# no release to download and the cache had no earlier build: `cargo install
# --locked` into $RUNNER_TEMP/tracegate-install (the path the cache step
# saves). Without `cargo` on PATH it first installs a minimal Rust toolchain
# with rustup, under $RUNNER_TEMP (a self-hosted runner's own Rust setup is
# left alone); when that is impossible it fails saying how to pin a release.
#
# Inputs, through the environment: ACTION_ROOT (the Action's repository
# copy), TRACEGATE_REPOSITORY (OWNER/REPO, for the message), RUNNER_TEMP.
# Downloads with `curl` from PATH.
set -euo pipefail

root=${ACTION_ROOT:?ACTION_ROOT must name the Action repository copy}
repository=${TRACEGATE_REPOSITORY:-tracegate/tracegate}

# The tag the release workflow moves for this version: vMAJOR, or v0.MINOR
# before 1.0 (as action/resolve.sh and release.yml compute it).
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
case "$version" in
    0.*) minor=${version#0.}; moving="v0.${minor%%.*}" ;;
    *) moving="v${version%%.*}" ;;
esac

cannot_build() {
    echo "::error title=tracegate::cannot build tracegate from the Action's source: $*." \
        "Pin the Action to a release so that it downloads a binary (uses: $repository@$moving, an exact @v$version, or that release's commit SHA)," \
        "or install Rust before this step (for example with dtolnay/rust-toolchain@stable)."
    exit 1
}

# A self-hosted runner's rustup install may not be on a non-login PATH.
if ! command -v cargo > /dev/null && [ -x "${HOME:-}/.cargo/bin/cargo" ]; then
    PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo > /dev/null; then
    export RUSTUP_HOME="$RUNNER_TEMP/tracegate-rustup" CARGO_HOME="$RUNNER_TEMP/tracegate-cargo"
    echo "No cargo on this runner: installing a minimal Rust toolchain under $RUNNER_TEMP with rustup."
    command -v curl > /dev/null || cannot_build "there is no cargo on this runner, and no curl to install Rust with"
    if ! curl --proto '=https' --tlsv1.2 -fsSL --retry 3 -o "$RUNNER_TEMP/rustup-init.sh" https://sh.rustup.rs; then
        cannot_build "there is no cargo on this runner, and rustup could not be downloaded from https://sh.rustup.rs"
    fi
    if ! sh "$RUNNER_TEMP/rustup-init.sh" -y --no-modify-path --profile minimal --default-toolchain stable; then
        cannot_build "there is no cargo on this runner, and installing Rust with rustup failed"
    fi
    PATH="$CARGO_HOME/bin:$PATH"
    command -v cargo > /dev/null || cannot_build "rustup ran, but installed no cargo"
fi

cargo install --locked --path "$root" --root "$RUNNER_TEMP/tracegate-install"
