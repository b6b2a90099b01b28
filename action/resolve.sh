#!/usr/bin/env bash
# Gets the tracegate binary for the Action (action.yml, install/action.yml):
# the release that matches the ref the Action is pinned at, downloaded and
# checked against its SHA-256; or, when there is none, the decision to build
# the Action's own source (action/build.sh does that, after the cache step).
#
# Which release: `github.action_ref` is unreliable inside composite actions
# (actions/runner#2473), so the version comes from the pinned source itself.
# The runner unpacks `uses: OWNER/REPO@REF` into `.../_actions/OWNER/REPO/REF`
# (a plain copy, not a git checkout); its Cargo.toml states the version, and
# the release workflow refuses a tag that does not match it. So:
#
#  - `version:` given: that release, or an error (never another version);
#  - REF a version tag (`v1`, `v1.2`, `v1.2.3`; `v0.1` before 1.0): the
#    release of the Cargo.toml version (the release workflow moves `v1` to
#    each 1.x.y, `v0.1` to each 0.1.z);
#  - REF a commit SHA: the same, when the release's recorded commit
#    (`tracegate-VERSION.commit`) is that SHA; else the source is built;
#  - REF a branch, or a local `uses: ./`: the source is built.
#
# Inputs, all through the environment (never pasted into this script):
#   ACTION_ROOT        the Action's repository copy (required)
#   TRACEGATE_VERSION  the `version` input; may be empty
#   ACTION_REF, ACTION_REPOSITORY  github.action_ref / action_repository
#                      (may be empty; then read from ACTION_ROOT's path)
#   RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_SERVER_URL, GITHUB_OUTPUT,
#   GITHUB_PATH        as GitHub sets them
# Outputs (GITHUB_OUTPUT): version, target, ref, repository, build
# (true/false), and cache-key when build is true. Downloads with `curl` from
# PATH; when the release lacks the archive, installs the same version's
# wheel from PyPI with `python3 -m pip` (when python3 is on PATH) before
# deciding to build.
set -euo pipefail

fail() {
    echo "::error title=tracegate::$*"
    exit 1
}

sha256_of() {
    if command -v sha256sum > /dev/null; then
        sha256sum "$1" | cut -d' ' -f1
    else
        shasum -a 256 "$1" | cut -d' ' -f1
    fi
}

download() {
    curl --proto '=https' -fsSL --retry 3 --retry-delay 2 -o "$2" "$1"
}

# Installs tracegate $1's wheel from PyPI into a venv under RUNNER_TEMP and
# copies its binary to $bin (the venv's python stays off PATH). Binary
# wheels only (never a source build here); fails quietly without python3.
pypi_install() {
    command -v python3 > /dev/null || return 1
    local venv="$RUNNER_TEMP/tracegate-venv"
    rm -rf "$venv"
    python3 -m venv "$venv" > /dev/null 2>&1 || return 1
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        --only-binary :all: "tracegate==$1" > /dev/null 2>&1 || return 1
    [ "$("$venv/bin/tracegate" --version 2> /dev/null)" = "tracegate $1" ] || return 1
    rm -rf "$bin"
    mkdir -p "$bin"
    cp "$venv/bin/tracegate" "$bin/tracegate"
}

root=${ACTION_ROOT:?ACTION_ROOT must name the Action repository copy}
ref=${ACTION_REF:-}
repository=${ACTION_REPOSITORY:-}
server=${GITHUB_SERVER_URL:-https://github.com}

# The runner's layout: .../_actions/OWNER/REPO/REF (REF may hold slashes).
case "$root" in
    */_actions/*/*/*)
        rest=${root##*/_actions/}
        owner=${rest%%/*}
        rest=${rest#*/}
        if [ -z "$repository" ]; then repository="$owner/${rest%%/*}"; fi
        if [ -z "$ref" ]; then ref=${rest#*/}; fi
        ;;
esac
if [ -z "$repository" ]; then
    repository=$(sed -n 's|^repository = "https://github.com/\(.*\)"$|\1|p' "$root/Cargo.toml" | head -n 1)
fi
source_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
[ -n "$source_version" ] || fail "$root/Cargo.toml has no version: is ACTION_ROOT the tracegate repository?"

case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64) target=aarch64-unknown-linux-musl ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    *) target="" ;;
esac

requested=${TRACEGATE_VERSION:-}
requested=${requested#v}
version=""
commit=""
why=""
if [ -n "$requested" ]; then
    version=$requested
elif [[ "$ref" =~ ^v[0-9]+(\.[0-9]+)?(\.[0-9]+)?$ ]]; then
    version=$source_version
    case "$source_version." in
        "${ref#v}".*) ;;
        *) echo "::warning title=tracegate::the Action is pinned at $ref but its Cargo.toml says $source_version: using release v$source_version" ;;
    esac
elif [[ "$ref" =~ ^[0-9a-f]{40}$ ]]; then
    version=$source_version
    commit=$ref
elif [ -z "$ref" ]; then
    why="the Action is not pinned to a release (a local \`uses: ./\`)"
else
    why="the Action is pinned to '$ref', not to a release tag or a release's commit"
fi

{
    echo "ref=$ref"
    echo "repository=$repository"
    echo "target=$target"
} >> "$GITHUB_OUTPUT"

bin="$RUNNER_TEMP/tracegate-bin"
if [ -n "$version" ] && [ -z "$target" ]; then
    if [ -n "$requested" ]; then
        fail "no tracegate release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} (there are Linux X64, Linux ARM64 and macOS ARM64); remove \`version:\` to build the Action's source instead"
    fi
    why="there is no release binary for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
    version=""
fi

if [ -n "$version" ]; then
    base="$server/$repository/releases/download/v$version"
    archive="tracegate-$version-$target.tar.gz"
    downloads="$RUNNER_TEMP/tracegate-download"
    rm -rf "$downloads"
    mkdir -p "$downloads"
    if [ -n "$commit" ]; then
        if download "$base/tracegate-$version.commit" "$downloads/commit"; then
            released=$(tr -d '[:space:]' < "$downloads/commit")
            if [ "$released" != "$commit" ]; then
                why="commit $commit is not release v$version's ($released)"
                version=""
            fi
        else
            why="release v$version does not record its commit (or does not exist)"
            version=""
        fi
    fi
fi

if [ -n "$version" ]; then
    if download "$base/$archive" "$downloads/$archive" && download "$base/$archive.sha256" "$downloads/$archive.sha256"; then
        # A release that does not match its checksum is an error, never a fallback.
        expected=$(cut -d' ' -f1 < "$downloads/$archive.sha256")
        actual=$(sha256_of "$downloads/$archive")
        if [ "$expected" != "$actual" ]; then
            fail "$archive: SHA-256 $actual does not match the release's $archive.sha256 ($expected): not installed"
        fi
        rm -rf "$bin"
        mkdir -p "$bin"
        tar -xzf "$downloads/$archive" -C "$bin" tracegate
        reported=$("$bin/tracegate" --version)
        if [ "$reported" != "tracegate $version" ]; then
            fail "$archive holds '$reported', not tracegate $version"
        fi
        echo "tracegate $version ($target) from $base, SHA-256 $actual"
        {
            echo "version=$version"
            echo "build=false"
        } >> "$GITHUB_OUTPUT"
        echo "$bin" >> "$GITHUB_PATH"
        exit 0
    fi
    # The same binary from PyPI (`pip install tracegate==VERSION`), when
    # python3 is on the runner: a release whose archives are not attached
    # (yet), or a repository that mirrors the Action without its releases.
    if pypi_install "$version"; then
        echo "tracegate $version from PyPI (pip install tracegate==$version): release v$version has no $archive"
        {
            echo "version=$version"
            echo "build=false"
        } >> "$GITHUB_OUTPUT"
        echo "$bin" >> "$GITHUB_PATH"
        exit 0
    fi
    if [ -n "$requested" ]; then
        fail "no tracegate release v$version for $target at $base/$archive, nor on PyPI: check \`version:\` against the releases page ($server/$repository/releases)"
    fi
    why="release v$version has no $archive (yet), and PyPI no tracegate $version wheel for this runner"
fi

# Building from source: the cache key hashes everything the build reads.
hash_files=$(
    cd "$root"
    for path in Cargo.toml Cargo.lock build.rs src templates policies; do
        if [ -e "$path" ]; then find "$path" -type f -print0; fi
    done | LC_ALL=C sort -z | xargs -0 cat > "$RUNNER_TEMP/tracegate-source-files"
    sha256_of "$RUNNER_TEMP/tracegate-source-files" | cut -c1-16
)
rm -f "$RUNNER_TEMP/tracegate-source-files"
# The moving tag the release workflow keeps: vMAJOR, or v0.MINOR before 1.0.
major=${source_version%%.*}
if [ "$major" = 0 ]; then
    minor=${source_version#0.}
    moving="v0.${minor%%.*}"
else
    moving="v$major"
fi
echo "::notice title=tracegate::building tracegate $source_version from the Action's source: $why. Pin a release (uses: $repository@$moving) to download a binary in seconds."
{
    echo "version=$source_version"
    echo "build=true"
    echo "cache-key=tracegate-${RUNNER_OS:-unknown}-${RUNNER_ARCH:-unknown}-$source_version-$hash_files"
} >> "$GITHUB_OUTPUT"
echo "$RUNNER_TEMP/tracegate-install/bin" >> "$GITHUB_PATH"
