//! The Action's install scripts, `action/resolve.sh` and `action/build.sh`,
//! run as the runner runs them: the Action's copy under a fake
//! `_actions/OWNER/REPO/REF` directory, a fake `curl` first on PATH serving
//! a fake release from a directory (and logging every URL asked for), and
//! only the ordinary tools besides, so no real `cargo` is found unless a
//! test puts a fake one there. Each test says which way of pinning the
//! Action it checks and which URL, version or message it must give.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use flate2::Compression;
use flate2::write::GzEncoder;
use tempfile::TempDir;
use tracegate::gate::snapshot::sha256_hex;

const VERSION: &str = "1.2.3";
const RELEASE_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const LINUX_X64: &str = "x86_64-unknown-linux-musl";
const RELEASES: &str = "https://github.com/tracegate/tracegate/releases/download";

/// The real tools the scripts use, linked into one directory for PATH.
const TOOLS: [&str; 22] = [
    "bash",
    "sh",
    "sed",
    "head",
    "cut",
    "tr",
    "rm",
    "mkdir",
    "cp",
    "tar",
    "gzip",
    "find",
    "sort",
    "xargs",
    "cat",
    "sha256sum",
    "shasum",
    "perl",
    "env",
    "chmod",
    "dirname",
    "ls",
];

/// `curl -o FILE URL`: copies `$FAKE_SERVER/<URL without https://>` to FILE,
/// or fails as `curl -f` does on a 404.
const FAKE_CURL: &str = r#"#!/bin/bash
out="" url=""
while [ $# -gt 0 ]; do
    case "$1" in
        -o | --proto | --retry | --retry-delay) [ "$1" = -o ] && out=$2; shift 2 ;;
        -*) shift ;;
        *) url=$1; shift ;;
    esac
done
echo "$url" >> "$FAKE_CURL_LOG"
file="$FAKE_SERVER/${url#https://}"
[ -f "$file" ] || exit 22
cp "$file" "$out"
"#;

/// A fake `python3`: `-m venv DIR` makes DIR/bin/python (this script);
/// that python's `-m pip install … tracegate==V` logs its arguments and
/// installs a `tracegate` printing `tracegate V` when `$FAKE_PYPI/V`
/// exists, as PyPI holding that version's wheel.
const FAKE_PYTHON: &str = r#"#!/bin/bash
if [ "$1 $2" = "-m venv" ]; then
    mkdir -p "$3/bin"
    cp "$0" "$3/bin/python"
    exit 0
fi
if [ "$1 $2 $3" = "-m pip install" ]; then
    echo "$@" >> "$FAKE_PIP_LOG"
    for arg in "$@"; do
        case "$arg" in
            tracegate==*) version=${arg#tracegate==} ;;
        esac
    done
    [ -e "$FAKE_PYPI/$version" ] || exit 1
    printf '#!/bin/sh\necho "tracegate %s"\n' "$version" > "$(dirname "$0")/tracegate"
    chmod +x "$(dirname "$0")/tracegate"
    exit 0
fi
exit 2
"#;

/// A fake `cargo` that logs its arguments.
const FAKE_CARGO: &str = "#!/bin/sh\necho \"$@\" >> \"$FAKE_CARGO_LOG\"\n";

fn write_executable(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, text).expect("write");
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A runner's directories, a copy of the Action pinned at a ref, and the
/// fake release server.
struct Runner {
    dir: TempDir,
    root: PathBuf,
    env: Vec<(String, String)>,
}

impl Runner {
    /// The Action as `uses: tracegate/tracegate@REF` unpacks it.
    fn pinned(reference: &str) -> Runner {
        let dir = TempDir::new().expect("tempdir");
        let root = dir
            .path()
            .join("_actions/tracegate/tracegate")
            .join(reference);
        Runner::at(dir, root)
    }

    fn at(dir: TempDir, root: PathBuf) -> Runner {
        for (file, text) in [
            (
                "Cargo.toml",
                format!(
                    "[package]\nname = \"tracegate\"\nversion = \"{VERSION}\"\n\
                     repository = \"https://github.com/tracegate/tracegate\"\n"
                ),
            ),
            ("Cargo.lock", "version = 4\n".to_string()),
            ("build.rs", "fn main() {}\n".to_string()),
            ("src/main.rs", "fn main() {}\n".to_string()),
            ("templates/comment.md.j2", "{{ headline }}\n".to_string()),
            ("policies/default.yaml", "version: 1\n".to_string()),
        ] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, text).expect("write");
        }
        let p = |name: &str| dir.path().join(name).display().to_string();
        write_executable(&dir.path().join("bin/curl"), FAKE_CURL);
        let tools = dir.path().join("tools");
        fs::create_dir_all(&tools).expect("mkdir");
        let path = std::env::var_os("PATH").expect("PATH");
        for tool in TOOLS {
            if let Some(found) = std::env::split_paths(&path)
                .map(|d| d.join(tool))
                .find(|f| f.is_file())
            {
                symlink(found, tools.join(tool)).expect("symlink");
            }
        }
        fs::create_dir_all(dir.path().join("temp")).expect("mkdir");
        let env = vec![
            ("ACTION_ROOT".into(), root.display().to_string()),
            ("RUNNER_OS".into(), "Linux".into()),
            ("RUNNER_ARCH".into(), "X64".into()),
            ("RUNNER_TEMP".into(), p("temp")),
            ("GITHUB_SERVER_URL".into(), "https://github.com".into()),
            ("GITHUB_OUTPUT".into(), p("output")),
            ("GITHUB_PATH".into(), p("path")),
            ("HOME".into(), p("home")),
            ("PATH".into(), format!("{}:{}", p("bin"), p("tools"))),
            ("FAKE_SERVER".into(), p("server")),
            ("FAKE_CURL_LOG".into(), p("curl.log")),
            ("FAKE_CARGO_LOG".into(), p("cargo.log")),
            ("FAKE_PYPI".into(), p("pypi")),
            ("FAKE_PIP_LOG".into(), p("pip.log")),
        ];
        Runner { dir, root, env }
    }

    fn set(mut self, name: &str, value: &str) -> Runner {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Serves `text` at `url`.
    fn serve(&self, url: &str, bytes: &[u8]) {
        let path = self
            .dir
            .path()
            .join("server")
            .join(url.trim_start_matches("https://"));
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, bytes).expect("write");
    }

    /// Publishes release `version` for `target` as the release workflow
    /// does: the archive, its `.sha256`, and the `.commit` file.
    fn publish(&self, version: &str, target: &str) -> String {
        self.publish_at(RELEASES, version, target)
    }

    /// [`Runner::publish`] under another `.../releases/download`.
    fn publish_at(&self, releases: &str, version: &str, target: &str) -> String {
        let binary = format!("#!/bin/sh\necho \"tracegate {version}\"\n");
        let mut header = tar::Header::new_gnu();
        header.set_size(binary.len() as u64);
        header.set_mode(0o755);
        header.set_cksum();
        let mut archive = tar::Builder::new(GzEncoder::new(Vec::new(), Compression::fast()));
        archive
            .append_data(&mut header, "tracegate", binary.as_bytes())
            .expect("tar");
        let bytes = archive.into_inner().expect("tar").finish().expect("gzip");
        let name = format!("tracegate-{version}-{target}.tar.gz");
        let url = format!("{releases}/v{version}/{name}");
        self.serve(&url, &bytes);
        self.serve(
            &format!("{url}.sha256"),
            format!("{}  {name}\n", sha256_hex(&bytes)).as_bytes(),
        );
        self.serve(
            &format!("{releases}/v{version}/tracegate-{version}.commit"),
            format!("{RELEASE_COMMIT}\n").as_bytes(),
        );
        url
    }

    fn run(&self, script: &str) -> Output {
        // As action.yml runs them: `bash SCRIPT`.
        Command::new(self.dir.path().join("tools/bash"))
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(script))
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("run the script")
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn urls(&self) -> Vec<String> {
        self.read("curl.log").lines().map(String::from).collect()
    }

    fn output(&self, key: &str) -> Option<String> {
        self.read("output")
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")).map(String::from))
    }

    fn temp(&self) -> PathBuf {
        self.dir.path().join("temp")
    }
}

/// stdout and stderr, for messages and assertion output.
fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Asserts the run installed release `version` from `url` onto PATH.
fn assert_installed(runner: &Runner, output: &Output, version: &str, url: &str) {
    assert_on_path(runner, output, version);
    let urls = runner.urls();
    assert_eq!(
        urls[urls.len() - 2..],
        [url.to_string(), format!("{url}.sha256")]
    );
}

/// Asserts the run put a `tracegate` of `version` on PATH, built nothing.
fn assert_on_path(runner: &Runner, output: &Output, version: &str) {
    let text = said(output);
    assert!(output.status.success(), "{text}");
    assert_eq!(runner.output("build").as_deref(), Some("false"), "{text}");
    assert_eq!(runner.output("version").as_deref(), Some(version));
    let bin = runner.temp().join("tracegate-bin");
    assert_eq!(runner.read("path").trim(), bin.display().to_string());
    let reported = Command::new(bin.join("tracegate"))
        .arg("--version")
        .output()
        .expect("run the installed binary");
    assert_eq!(
        String::from_utf8_lossy(&reported.stdout).trim(),
        format!("tracegate {version}")
    );
}

/// Asserts the run chose to build the source, saying `why`, and installed
/// no release binary.
fn assert_builds_source(runner: &Runner, output: &Output, why: &str) {
    let text = said(output);
    assert!(output.status.success(), "{text}");
    assert_eq!(runner.output("build").as_deref(), Some("true"), "{text}");
    assert_eq!(runner.output("version").as_deref(), Some(VERSION));
    let key = runner.output("cache-key").expect("cache-key");
    assert!(
        key.starts_with(&format!("tracegate-Linux-X64-{VERSION}-")) && key.len() > 30,
        "{key}"
    );
    assert!(
        text.contains("::notice title=tracegate::building tracegate"),
        "{text}"
    );
    assert!(text.contains(why), "{text}");
    assert!(text.contains("uses: tracegate/tracegate@v1"), "{text}");
    assert!(!runner.temp().join("tracegate-bin/tracegate").exists());
    let install = runner.temp().join("tracegate-install/bin");
    assert_eq!(runner.read("path").trim(), install.display().to_string());
}

#[test]
fn pinned_at_a_moving_major_tag_downloads_the_release_its_source_states() {
    let runner = Runner::pinned("v1");
    let url = runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
    assert_eq!(runner.output("ref").as_deref(), Some("v1"));
    assert_eq!(
        runner.urls().len(),
        2,
        "no other download: {:?}",
        runner.urls()
    );
}

#[test]
fn pinned_at_an_exact_version_tag_downloads_that_release() {
    let runner = Runner::pinned("v1.2.3");
    let url = runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
    assert!(!said(&output).contains("::warning"), "{}", said(&output));
}

#[test]
fn a_tag_that_disagrees_with_cargo_toml_warns_and_uses_cargo_toml() {
    let runner = Runner::pinned("v2");
    let url = runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
    assert!(
        said(&output).contains("pinned at v2 but its Cargo.toml says 1.2.3"),
        "{}",
        said(&output)
    );
}

#[test]
fn pinned_at_the_release_commit_sha_downloads_the_release() {
    let runner = Runner::pinned(RELEASE_COMMIT);
    let url = runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
    assert_eq!(
        runner.urls()[0],
        format!("{RELEASES}/v{VERSION}/tracegate-{VERSION}.commit")
    );
}

#[test]
fn pinned_at_another_commit_sha_builds_the_source() {
    let other = "fedcba9876543210fedcba9876543210fedcba98";
    let runner = Runner::pinned(other);
    runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_builds_source(
        &runner,
        &output,
        &format!("commit {other} is not release v{VERSION}'s ({RELEASE_COMMIT})"),
    );
}

#[test]
fn pinned_at_a_branch_builds_the_source_and_says_how_to_pin() {
    let runner = Runner::pinned("main");
    runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_builds_source(&runner, &output, "pinned to 'main', not to a release tag");
    assert!(runner.urls().is_empty(), "{:?}", runner.urls());
}

#[test]
fn a_tag_whose_release_has_no_binaries_yet_builds_the_source() {
    let runner = Runner::pinned("v1");
    let output = runner.run("action/resolve.sh");
    assert_builds_source(
        &runner,
        &output,
        "has no tracegate-1.2.3-x86_64-unknown-linux-musl.tar.gz",
    );
}

/// Puts the fake `python3` on PATH and `version`'s wheel on the fake PyPI.
fn with_pypi(runner: &Runner, version: Option<&str>) {
    write_executable(&runner.dir.path().join("bin/python3"), FAKE_PYTHON);
    fs::create_dir_all(runner.dir.path().join("pypi")).expect("mkdir");
    if let Some(version) = version {
        fs::write(runner.dir.path().join("pypi").join(version), "").expect("write");
    }
}

#[test]
fn a_release_without_the_archive_installs_the_wheel_from_pypi() {
    let runner = Runner::pinned("v1");
    with_pypi(&runner, Some(VERSION));
    let output = runner.run("action/resolve.sh");
    assert_on_path(&runner, &output, VERSION);
    let text = said(&output);
    assert!(
        text.contains(&format!("tracegate {VERSION} from PyPI")),
        "{text}"
    );
    // Binary wheels only, the exact version; the venv's python stays off PATH.
    let pip = runner.read("pip.log");
    assert!(
        pip.contains("--only-binary :all: tracegate==1.2.3"),
        "{pip}"
    );
    assert!(!runner.read("path").contains("tracegate-venv"));
}

#[test]
fn without_the_version_on_pypi_either_the_source_is_built() {
    let runner = Runner::pinned("v1");
    with_pypi(&runner, Some("1.2.2"));
    let output = runner.run("action/resolve.sh");
    assert_builds_source(&runner, &output, "and PyPI no tracegate 1.2.3 wheel");
    assert!(runner.read("pip.log").contains("tracegate==1.2.3"));
}

#[test]
fn a_requested_version_neither_place_has_is_an_error() {
    let runner = Runner::pinned("main").set("TRACEGATE_VERSION", "1.2.4");
    with_pypi(&runner, None);
    let output = runner.run("action/resolve.sh");
    let text = said(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("nor on PyPI"), "{text}");
}

#[test]
fn the_version_input_picks_the_release_whatever_the_ref() {
    let runner = Runner::pinned("main").set("TRACEGATE_VERSION", "v1.0.0");
    let url = runner.publish("1.0.0", LINUX_X64);
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, "1.0.0", &url);
}

#[test]
fn a_requested_version_without_a_release_is_an_error_not_another_version() {
    let runner = Runner::pinned("v1").set("TRACEGATE_VERSION", "9.9.9");
    runner.publish(VERSION, LINUX_X64);
    let output = runner.run("action/resolve.sh");
    let text = said(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "::error title=tracegate::no tracegate release v9.9.9 for x86_64-unknown-linux-musl"
        ),
        "{text}"
    );
    assert_eq!(runner.output("build"), None);
}

#[test]
fn a_checksum_mismatch_is_an_error_never_a_fallback() {
    let runner = Runner::pinned("v1.2.3");
    let url = runner.publish(VERSION, LINUX_X64);
    runner.serve(
        &format!("{url}.sha256"),
        format!("{}  tracegate.tar.gz\n", "0".repeat(64)).as_bytes(),
    );
    let output = runner.run("action/resolve.sh");
    let text = said(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("does not match the release's"), "{text}");
    assert_eq!(runner.output("build"), None, "no build either");
    assert!(!runner.temp().join("tracegate-bin/tracegate").exists());
    assert!(runner.read("path").is_empty());
}

#[test]
fn macos_arm64_downloads_the_darwin_binary() {
    let runner = Runner::pinned("v1")
        .set("RUNNER_OS", "macOS")
        .set("RUNNER_ARCH", "ARM64");
    let url = runner.publish(VERSION, "aarch64-apple-darwin");
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
    assert_eq!(
        runner.output("target").as_deref(),
        Some("aarch64-apple-darwin")
    );
}

#[test]
fn linux_arm64_downloads_the_aarch64_musl_binary() {
    let runner = Runner::pinned("v1").set("RUNNER_ARCH", "ARM64");
    let url = runner.publish(VERSION, "aarch64-unknown-linux-musl");
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
}

#[test]
fn a_platform_without_release_binaries_builds_the_source() {
    let runner = Runner::pinned("v1")
        .set("RUNNER_OS", "Linux")
        .set("RUNNER_ARCH", "ARM");
    let output = runner.run("action/resolve.sh");
    let text = said(&output);
    assert!(output.status.success(), "{text}");
    assert_eq!(runner.output("build").as_deref(), Some("true"), "{text}");
    assert!(text.contains("no release binary for Linux/ARM"), "{text}");
    assert!(runner.urls().is_empty());
}

#[test]
fn outside_the_runners_layout_action_ref_and_repository_are_used() {
    let dir = TempDir::new().expect("tempdir");
    let root = dir.path().join("checkout");
    let runner = Runner::at(dir, root)
        .set("ACTION_REF", "v1.2.3")
        .set("ACTION_REPOSITORY", "someone/fork");
    let url = runner.publish_at(
        "https://github.com/someone/fork/releases/download",
        VERSION,
        LINUX_X64,
    );
    let output = runner.run("action/resolve.sh");
    assert_installed(&runner, &output, VERSION, &url);
}

#[test]
fn a_local_action_builds_the_source() {
    let dir = TempDir::new().expect("tempdir");
    let root = dir.path().join("workspace");
    let runner = Runner::at(dir, root);
    let output = runner.run("action/resolve.sh");
    assert_builds_source(
        &runner,
        &output,
        "not pinned to a release (a local `uses: ./`)",
    );
}

#[test]
fn the_build_runs_cargo_install_locked_on_the_actions_source() {
    let runner = Runner::pinned("main");
    write_executable(&runner.dir.path().join("bin/cargo"), FAKE_CARGO);
    let output = runner.run("action/build.sh");
    assert!(output.status.success(), "{}", said(&output));
    assert_eq!(
        runner.read("cargo.log").trim(),
        format!(
            "install --locked --path {} --root {}",
            runner.root.display(),
            runner.temp().join("tracegate-install").display()
        )
    );
    assert!(runner.urls().is_empty(), "no rustup: {:?}", runner.urls());
}

#[test]
fn without_cargo_the_build_installs_rust_with_rustup_first() {
    let runner = Runner::pinned("main");
    runner.serve(
        "https://sh.rustup.rs",
        format!(
            "mkdir -p \"$CARGO_HOME/bin\"\nprintf '%s' '{}' > \"$CARGO_HOME/bin/cargo\"\n\
             chmod +x \"$CARGO_HOME/bin/cargo\"\necho \"rustup-init $*\" >> \"$FAKE_CARGO_LOG\"\n",
            FAKE_CARGO
        )
        .as_bytes(),
    );
    let output = runner.run("action/build.sh");
    let text = said(&output);
    assert!(output.status.success(), "{text}");
    let log = runner.read("cargo.log");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines,
        [
            "rustup-init -y --no-modify-path --profile minimal --default-toolchain stable",
            &format!(
                "install --locked --path {} --root {}",
                runner.root.display(),
                runner.temp().join("tracegate-install").display()
            ),
        ],
        "{text}"
    );
    assert!(runner.temp().join("tracegate-cargo/bin/cargo").is_file());
}

#[test]
fn without_cargo_or_rustup_the_build_fails_saying_how_to_pin() {
    let runner = Runner::pinned("main");
    let output = runner.run("action/build.sh");
    let text = said(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("::error title=tracegate::cannot build tracegate from the Action's source"),
        "{text}"
    );
    assert!(text.contains("rustup could not be downloaded"), "{text}");
    assert!(
        text.contains("Pin the Action to a release so that it downloads a binary (uses: tracegate/tracegate@v1"),
        "{text}"
    );
    assert!(!text.contains("command not found"), "{text}");
}

/// `action/accepts.sh` in a repository whose head commit has `trailers`,
/// with a pull-request event labelled `labels`: what it prints.
fn accepts(trailers: &str, labels: &[&str]) -> String {
    let dir = TempDir::new().expect("temp dir");
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("git");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).expect("UTF-8")
    };
    git(&["init", "-q"]);
    let message = format!("a change\n\n{trailers}");
    git(&["commit", "-q", "--allow-empty", "-m", &message]);
    let head = git(&["rev-parse", "HEAD"]).trim().to_string();
    let names: Vec<String> = labels
        .iter()
        .map(|name| format!("{{\"name\": {}}}", serde_json::Value::from(*name)))
        .collect();
    let event = dir.path().join("event.json");
    fs::write(
        &event,
        format!(
            "{{\"pull_request\": {{\"labels\": [{}]}}}}",
            names.join(", ")
        ),
    )
    .expect("write event");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("action/accepts.sh");
    let output = Command::new("bash")
        .arg(script)
        .current_dir(dir.path())
        .env("ACCEPT_TRAILERS", "true")
        .env("ACCEPT_LABEL", "tracegate-accept")
        .env("HEAD_SHA", &head)
        .env("GITHUB_EVENT_PATH", &event)
        .output()
        .expect("bash");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .replace(&head[..12], "HEAD")
}

#[test]
fn trailers_and_labels_become_accept_entries() {
    assert_eq!(accepts("Signed-off-by: t <t@t>", &["bug"]), "");
    assert_eq!(
        accepts(
            "Tracegate-Accept: aten::mm\nTracegate-Accept: rule:timeline.*",
            &["bug", "tracegate-accept:aten::bmm", "tracegate-accept"]
        ),
        "reason=Tracegate-Accept trailer of HEAD; PR label tracegate-accept:aten::bmm; \
         PR label tracegate-accept\n\
         accept=aten::mm\naccept=rule:timeline.*\naccept=aten::bmm\naccept=rule:*\n"
    );
    // Whatever a trailer holds is one argument, never shell code.
    assert_eq!(
        accepts("Tracegate-Accept: $(touch pwned) `id`; x", &[]),
        "reason=Tracegate-Accept trailer of HEAD\naccept=$(touch pwned) `id`; x\n"
    );
}

/// The fork-safe example: the fork's run reads no trailer or label, and
/// phase 2 posts only a verdict it computed itself (never the
/// `tracegate-report` the fork's run uploaded).
#[test]
fn fork_safe_example_reads_no_trailers_or_labels_and_posts_only_a_verified_verdict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/examples");
    let read = |name: &str| -> serde_yaml::Value {
        serde_yaml::from_str(&fs::read_to_string(root.join(name)).expect("example")).expect("YAML")
    };
    let check = read("fork-safe-check.yml");
    let gate = check["jobs"]["gate"]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("tracegate/tracegate@"))
        })
        .expect("the Action");
    assert_eq!(gate["with"]["accept-trailers"].as_str(), Some("false"));
    assert_eq!(gate["with"]["accept-label"].as_str(), Some(""));
    let comment = read("fork-safe-comment.yml");
    let steps = comment["jobs"]["comment"]["steps"]
        .as_sequence()
        .expect("steps");
    for step in steps {
        let pattern = step["with"]["pattern"].as_str().unwrap_or("");
        assert!(
            !pattern.contains("report"),
            "phase 2 downloads phase 1's report: {pattern}"
        );
    }
    let script: String = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let check_at = script
        .find("tracegate check")
        .expect("phase 2 recomputes the verdict");
    let comment_at = script.find("tracegate comment").expect("phase 2 comments");
    assert!(check_at < comment_at);
    assert!(!script.contains("trailers"), "{script}");
}
