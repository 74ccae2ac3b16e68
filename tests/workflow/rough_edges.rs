//! A newcomer's rough edges (issue 27): the release archive's checksum file,
//! OS errors on files zenpak needs, a mod inside the game's `Paks` folder,
//! Git LFS pointer files, and the smaller ones of `unpack`/`uninstall`/`get`.
//! Each runs the real binary on a copy of the example mod.

use std::path::{Path, PathBuf};

use crate::common::{temp_dir, zenpak_in};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of the example mod in `parent/name`.
fn example_mod(parent: &Path, name: &str) -> PathBuf {
    let from = repo().join("examples/hello-mod");
    let to = parent.join(name);
    for entry in walkdir::WalkDir::new(&from) {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(&from).unwrap();
        if relative.starts_with("target") {
            continue;
        }
        let target = to.join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
    to
}

/// The JSON lines of a `--message-format json` run.
fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The first JSON line with `reason`.
fn event<'a>(lines: &'a [serde_json::Value], reason: &str) -> &'a serde_json::Value {
    lines
        .iter()
        .find(|l| l["reason"] == reason)
        .unwrap_or_else(|| panic!("no {reason} line in {lines:#?}"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn package_writes_a_sha256_file_beside_the_zip() {
    let dir = temp_dir("sha256-beside");
    let m = example_mod(dir.as_ref(), "Sums");
    let (code, stdout, stderr) = zenpak_in(&m, &["package", "--message-format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let lines = json_lines(&stdout);
    let archive = event(&lines, "release-archive");
    let zip = PathBuf::from(archive["path"].as_str().unwrap());
    let sums = PathBuf::from(archive["checksum_file"].as_str().unwrap());
    assert_eq!(sums.parent(), zip.parent(), "beside the zip");
    let zip_bytes = std::fs::read(&zip).unwrap();
    let digest = sha256_hex(&zip_bytes);
    assert_eq!(archive["sha256"], digest.as_str());
    // `sha256sum -c` format: hex, two spaces, the file name relative to its folder.
    let text = std::fs::read_to_string(&sums).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{text}");
    let (hash, name) = lines[0].split_once("  ").expect("`<hex>  <name>`");
    assert_eq!(hash, digest);
    assert_eq!(name, zip.file_name().unwrap().to_str().unwrap());
    assert!(text.ends_with('\n'));
    // The build's own JSON gives BLAKE3 per artifact (as the README says).
    let finished = event(&json_lines(&stdout), "build-finished").clone();
    for artifact in finished["artifacts"].as_array().unwrap() {
        let bytes = std::fs::read(artifact["path"].as_str().unwrap()).unwrap();
        assert_eq!(
            artifact["blake3"],
            blake3::hash(&bytes).to_hex().as_str(),
            "{artifact}"
        );
    }
    // `clean` removes both (they are recorded as written by zenpak).
    let (code, _, stderr) = zenpak_in(&m, &["clean"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!zip.exists() && !sums.exists());
}
