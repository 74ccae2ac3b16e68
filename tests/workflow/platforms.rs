//! `zenpak package --for nexus|modio|thunderstore` (issue 31): each
//! platform's archive layout and metadata from one `mod.toml`, checked
//! against the platform's published rules, through the real binary.
//!
//! Thunderstore's package format (its documentation and the upload page's
//! manifest validator): `manifest.json` with `name` of `[A-Za-z0-9_]`,
//! `version_number` `Major.Minor.Patch`, `website_url`, `description` of at
//! most 250 characters and `dependencies` as `Namespace-Name-Version`;
//! `icon.png` 256×256; `README.md`. Nexus Mods and mod.io take a plain zip
//! per file, with the upload metadata (ids, version) given beside it.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::common::{command, files_under, run, run_command, temp_dir, Run};

/// A real PNG of `size`×`size` grey pixels.
fn png(size: u32) -> Vec<u8> {
    use std::io::Write;
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&size.to_be_bytes());
    ihdr.extend_from_slice(&size.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit greyscale
    chunk(&mut out, b"IHDR", &ihdr);
    let mut rows = Vec::new();
    for _ in 0..size {
        rows.push(0u8);
        rows.extend(std::iter::repeat_n(0x80u8, size as usize));
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&rows).unwrap();
    chunk(&mut out, b"IDAT", &z.finish().unwrap());
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The example mod's cooked files in place, under `name`, with `release`
/// as the `[release]` table's body.
fn write_mod(dir: &Path, name: &str, release: &str) {
    let cooked = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/hello-mod/Cooked");
    let root = cooked.to_string_lossy().replace('\\', "/");
    std::fs::write(
        dir.join("mod.toml"),
        format!(
            "[mod]\nname = \"{name}\"\nversion = \"1.2.0\"\nauthors = [\"someone\"]\n\
             description = \"A string table and its settings.\"\n\n\
             [game]\nengine = \"5.6\"\nproject = \"HelloGame\"\n\n\
             [content]\nroot = \"{root}\"\n\n[output]\ndir = \"target\"\ncompression = \"none\"\n\n\
             [release]\n{release}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("icon.png"), png(256)).unwrap();
    std::fs::write(dir.join("CHANGELOG.md"), "## 1.2.0\n- first\n").unwrap();
    std::fs::write(dir.join("README.md"), "# Hello\n").unwrap();
}

const RELEASE: &str = "icon = \"icon.png\"\nchangelog = \"CHANGELOG.md\"\n\
    nexus = { game = \"hellogame\", mod-id = 12, file-group = 34 }\n\
    modio = { game-id = 5, mod-id = 6 }\n\
    thunderstore = { namespace = \"Team\", website = \"https://example.org\", dependencies = [\"UE4SS-RE-3.0.1\"] }";

/// `zenpak package --for <platform>`.
fn package(dir: &Path, platform: &str) -> Run {
    run(
        Some(dir),
        &["package", "--for", platform, "--message-format", "json"],
    )
}

/// The archive of a successful [`package`] and its event.
fn archive_of(packaged: &Run) -> (PathBuf, serde_json::Value) {
    let event = packaged.ok().line_of("release-archive");
    (PathBuf::from(event["path"].as_str().unwrap()), event)
}

/// Names and contents of every entry of a zip.
fn entries(zip: &Path) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::fs::File::open(zip).unwrap()).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().to_string(), bytes)
        })
        .collect()
}

fn error_codes_and_lines(packaged: &Run) -> Vec<(String, Option<u64>)> {
    packaged
        .diagnostics("error")
        .iter()
        .map(|l| {
            (
                l["code"].as_str().unwrap_or("").to_string(),
                l["line"].as_u64(),
            )
        })
        .collect()
}

#[test]
fn thunderstore_gets_its_layout_and_a_manifest_that_follows_its_rules() {
    let dir = temp_dir("platform-thunderstore");
    write_mod(&dir, "HelloMod", RELEASE);
    let (zip, event) = archive_of(&package(&dir, "thunderstore"));
    assert_eq!(event["platform"], "thunderstore");
    let files = entries(&zip);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "pak/HelloMod_P.utoc",
            "pak/HelloMod_P.ucas",
            "pak/HelloMod_P.pak",
            "icon.png",
            "README.md",
            "manifest.json",
            "CHANGELOG.md",
            "SHA256SUMS",
        ]
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&files.iter().find(|(n, _)| n == "manifest.json").unwrap().1)
            .unwrap();
    let name = manifest["name"].as_str().unwrap();
    assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    assert_eq!(name, "HelloMod");
    let version: Vec<&str> = manifest["version_number"]
        .as_str()
        .unwrap()
        .split('.')
        .collect();
    assert_eq!(version.len(), 3);
    assert!(version.iter().all(|p| p.parse::<u32>().is_ok()));
    assert!(manifest["description"].as_str().unwrap().chars().count() <= 250);
    assert_eq!(manifest["website_url"], "https://example.org");
    assert_eq!(
        manifest["dependencies"],
        serde_json::json!(["UE4SS-RE-3.0.1"])
    );
    let icon = &files.iter().find(|(n, _)| n == "icon.png").unwrap().1;
    assert_eq!(&icon[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(icon[16..20].try_into().unwrap()), 256);
    assert_eq!(u32::from_be_bytes(icon[20..24].try_into().unwrap()), 256);

    // Two runs give the same archive.
    let first = std::fs::read(&zip).unwrap();
    std::fs::remove_dir_all(dir.join("target")).unwrap();
    let again = archive_of(&package(&dir, "thunderstore"));
    assert_eq!(std::fs::read(again.0).unwrap(), first);
}

#[test]
fn a_value_thunderstore_refuses_is_an_error_naming_its_key() {
    let dir = temp_dir("platform-thunderstore-bad");
    // A name the file system takes but Thunderstore does not.
    write_mod(&dir, "Hello-Mod", RELEASE);
    let refused = package(&dir, "thunderstore");
    let errors = error_codes_and_lines(refused.assert_code(2));
    assert_eq!(errors, [("usage".to_string(), Some(2))], "line 2: `name`");
    // A 512×512 icon.
    write_mod(&dir, "HelloMod", RELEASE);
    std::fs::write(dir.join("icon.png"), png(512)).unwrap();
    let refused = package(&dir, "thunderstore");
    refused.assert_code(2);
    let icon_line = std::fs::read_to_string(dir.join("mod.toml"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("icon"))
        .unwrap() as u64
        + 1;
    assert_eq!(
        error_codes_and_lines(&refused),
        [("usage".to_string(), Some(icon_line))]
    );
    assert!(!dir
        .join("target/package")
        .read_dir()
        .is_ok_and(|mut d| d.any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".zip"))));
}

#[test]
fn nexus_and_modio_get_their_layout_and_upload_metadata_beside_the_archive() {
    let dir = temp_dir("platform-nexus-modio");
    write_mod(&dir, "HelloMod", RELEASE);
    for (platform, folder, beside) in [
        ("nexus", "HelloGame/Content/Paks/~mods/", "nexus.json"),
        ("modio", "~mods/", "modio.json"),
    ] {
        let (zip, event) = archive_of(&package(&dir, platform));
        let names: Vec<String> = entries(&zip).into_iter().map(|(n, _)| n).collect();
        for ext in ["pak", "ucas", "utoc"] {
            assert!(
                names.contains(&format!("{folder}HelloMod_P.{ext}")),
                "{names:?}"
            );
        }
        assert!(names.contains(&"SHA256SUMS".to_string()));
        let metadata = PathBuf::from(event["metadata_file"].as_str().unwrap());
        assert!(metadata.to_string_lossy().ends_with(beside));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&metadata).unwrap()).unwrap();
        assert_eq!(json["version"], "1.2.0");
        assert_eq!(json["file"], zip.file_name().unwrap().to_str().unwrap());
        if platform == "nexus" {
            assert_eq!(json["game_domain"], "hellogame");
            assert_eq!(json["mod_id"], 12);
            assert_eq!(json["file_group_id"], 34);
        } else {
            assert_eq!(json["game_id"], 5);
            assert_eq!(json["mod_id"], 6);
            assert_eq!(json["changelog"], "## 1.2.0\n- first\n");
        }
    }
}

#[test]
fn dry_run_prints_the_plan_and_writes_no_archive() {
    let dir = temp_dir("platform-dry-run");
    write_mod(&dir, "HelloMod", RELEASE);
    let plan = run(
        Some(&dir),
        &[
            "package",
            "--for",
            "thunderstore",
            "--dry-run",
            "--message-format",
            "json",
        ],
    )
    .ok()
    .line_of("release-plan");
    assert_eq!(plan["platform"], "thunderstore");
    assert_eq!(plan["manifest"]["name"], "HelloMod");
    assert!(plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "pak/HelloMod_P.utoc"));
    assert!(
        !dir.join("target/package").exists()
            || std::fs::read_dir(dir.join("target/package"))
                .unwrap()
                .next()
                .is_none()
    );
    // A platform without its `[release]` entry is a usage error naming it.
    write_mod(&dir, "HelloMod", "icon = \"icon.png\"");
    package(&dir, "nexus").assert_code(2);
}

/// Issue 51: a file `[release]` names obeys the content rules. `..`, an
/// absolute path, `/proc/self/environ`, a link leaving the mod, a FIFO and
/// a 1 GiB (sparse) changelog are each refused with exit 2 (the manifest
/// names a file the release may not ship: the user's to fix in `mod.toml`
/// or the file), at the key's line, before anything is written; the
/// secret they would have carried is in no file of the mod's folder.
#[test]
fn a_release_file_outside_the_mod_or_not_a_regular_file_is_refused() {
    const SECRET: &str = "zenpak-test-secret-5f1c2e";
    let outside = temp_dir("platform-release-outside");
    let secret_file = outside.join("id_rsa");
    std::fs::write(&secret_file, SECRET).unwrap();
    let dir = temp_dir("platform-release-files");
    let up = format!(
        "../{}/id_rsa",
        outside.file_name().unwrap().to_string_lossy()
    );
    let absolute = secret_file.to_string_lossy().replace('\\', "/");
    // What the case is, the `changelog` value, and what makes the file.
    type Case = (&'static str, String, Option<fn(&Path)>);
    let mut cases: Vec<Case> = vec![
        ("a path climbing out with ..", up, None),
        ("an absolute path", absolute, None),
    ];
    #[cfg(unix)]
    {
        cases.push(("/proc/self/environ", "/proc/self/environ".into(), None));
        cases.push((
            "a link leaving the mod",
            "CHANGES.md".into(),
            Some(|dir: &Path| {
                let outside = dir.join("../outside-link-target");
                std::fs::write(&outside, SECRET).unwrap();
                std::os::unix::fs::symlink(&outside, dir.join("CHANGES.md")).unwrap();
            }),
        ));
        cases.push((
            "a FIFO",
            "CHANGES.md".into(),
            Some(|dir: &Path| {
                let path =
                    std::ffi::CString::new(dir.join("CHANGES.md").to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            }),
        ));
    }
    cases.push((
        "a 1 GiB changelog",
        "CHANGES.md".into(),
        Some(|dir: &Path| {
            let file = std::fs::File::create(dir.join("CHANGES.md")).unwrap();
            file.set_len(1 << 30).unwrap();
        }),
    ));
    for (what, changelog, prepare) in cases {
        let _ = std::fs::remove_file(dir.join("CHANGES.md"));
        let release = format!("changelog = \"{changelog}\"\nmodio = {{ game-id = 5, mod-id = 6 }}");
        write_mod(&dir, "HelloMod", &release);
        if let Some(prepare) = prepare {
            prepare(&dir);
        }
        let refused = run_command(
            command(
                Some(&dir),
                &["package", "--for", "modio", "--message-format", "json"],
            )
            .env("ZENPAK_TEST_SECRET", SECRET),
        );
        refused.assert_code_for(2, what);
        let changelog_line = std::fs::read_to_string(dir.join("mod.toml"))
            .unwrap()
            .lines()
            .position(|l| l.starts_with("changelog"))
            .unwrap() as u64
            + 1;
        assert_eq!(
            error_codes_and_lines(&refused),
            [("usage".to_string(), Some(changelog_line))],
            "{what}"
        );
        let written = files_under(&dir);
        assert!(
            !written
                .keys()
                .any(|name| name.starts_with("target/package/")
                    && (name.ends_with(".zip") || name.ends_with(".json"))),
            "{what}: {:?}",
            written.keys()
        );
        for (name, bytes) in &written {
            assert!(
                !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
                "{what}: the secret is in {name}"
            );
        }
    }
}

/// The README Thunderstore ships by default (`README.md`) obeys the same
/// rules; a link that stays inside the mod is taken, and one that leaves
/// it is taken with `[content] follow-links = true`, as under the content root.
#[cfg(unix)]
#[test]
fn the_default_readme_follows_the_content_rules_for_links() {
    let outside = temp_dir("platform-readme-outside");
    std::fs::write(outside.join("README.md"), "# outside\n").unwrap();
    let dir = temp_dir("platform-readme-link");
    write_mod(&dir, "HelloMod", RELEASE);
    std::fs::remove_file(dir.join("README.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("README.md"), dir.join("README.md")).unwrap();
    let refused = package(&dir, "thunderstore");
    refused.assert_code(2);
    assert_eq!(refused.error()["code"], "usage");
    assert!(
        !dir.join("target/package").exists()
            || !std::fs::read_dir(dir.join("target/package"))
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".zip"))
    );
    // A link inside the mod is what it points to.
    std::fs::remove_file(dir.join("README.md")).unwrap();
    std::fs::create_dir(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/README.md"), "# inside\n").unwrap();
    std::os::unix::fs::symlink("docs/README.md", dir.join("README.md")).unwrap();
    let (zip, _) = archive_of(&package(&dir, "thunderstore"));
    let readme = entries(&zip)
        .into_iter()
        .find(|(n, _)| n == "README.md")
        .unwrap();
    assert_eq!(readme.1, b"# inside\n");
    // With follow-links, the link leaving the mod is taken.
    std::fs::remove_file(dir.join("README.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("README.md"), dir.join("README.md")).unwrap();
    let text = std::fs::read_to_string(dir.join("mod.toml")).unwrap();
    std::fs::write(
        dir.join("mod.toml"),
        text.replace("[content]\n", "[content]\nfollow-links = true\n"),
    )
    .unwrap();
    let (zip, _) = archive_of(&package(&dir, "thunderstore"));
    let readme = entries(&zip)
        .into_iter()
        .find(|(n, _)| n == "README.md")
        .unwrap();
    assert_eq!(readme.1, b"# outside\n");
}
