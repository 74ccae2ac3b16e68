//! What a build takes in is what it ships: an edit that keeps a file's size
//! and time, a cache entry swapped or edited, a symlink out of the content
//! folder, a loose file larger than memory should hold. Every test drives
//! the real binary.

use crate::build_incremental::corpus_mod;
use crate::common::cache_pack::{cache_entries, write_cache_entries, Key};
use crate::common::{self, run, Run};

use std::path::{Path, PathBuf};

/// Runs `args` with `--message-format json`, expecting exit code `code`.
fn json(dir: &Path, args: &[&str], code: i32) -> Run {
    let mut all = vec!["--message-format", "json"];
    all.extend_from_slice(args);
    let out = run(Some(dir), &all);
    out.assert_code_for(code, format_args!("zenpak {}", args.join(" ")));
    out
}

/// The `.utoc`, `.ucas` and `.pak` of the mod `stem` in `repo/target`.
fn triplet(repo: &Path, stem: &str) -> Vec<Vec<u8>> {
    ["utoc", "ucas", "pak"]
        .iter()
        .map(|ext| std::fs::read(repo.join(format!("target/{stem}.{ext}"))).unwrap())
        .collect()
}

/// Rewrites `path` in place with `edit` applied to its bytes, keeping its
/// size and modification time (as `cp -p` or an archive that keeps times
/// would leave it).
fn edit_keeping_size_and_time(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let before = std::fs::metadata(path).unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    let original = bytes.clone();
    edit(&mut bytes);
    assert_eq!(bytes.len(), original.len(), "the edit keeps the size");
    assert_ne!(bytes, original, "the edit changes the bytes");
    std::fs::write(path, &bytes).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    let after = std::fs::metadata(path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
}

/// Every file of a container or pak, unpacked by the binary (relative path → bytes).
fn unpacked(
    repo: &Path,
    container: &str,
    to: &Path,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    json(repo, &["unpack", container, to.to_str().unwrap()], 0);
    common::files_under(to)
}

const INI: &str = "Cooked/Proj/Config/DefaultGame.ini";
const UEXP: &str = "Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp";

/// [`corpus_mod`] with a config file holding `ini`.
fn corpus_mod_with_ini(corpus: &Path, dir: &Path, ini: &str) -> PathBuf {
    let repo = corpus_mod(corpus, dir);
    std::fs::create_dir_all(repo.join("Cooked/Proj/Config")).unwrap();
    std::fs::write(repo.join(INI), ini).unwrap();
    repo
}

#[test]
fn an_edit_that_keeps_size_and_time_is_built() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("stale");
    let repo = corpus_mod_with_ini(&corpus, &dir, "[x]\ny=1\n");
    let flip_last = |bytes: &mut Vec<u8>| {
        let at = bytes.len() - 5;
        bytes[at] ^= 0x01;
    };
    let set_ini = |value: u8| {
        let ini = repo.join(INI);
        let mut bytes = std::fs::read(&ini).unwrap();
        let at = bytes.len() - 2;
        bytes[at] = value;
        edit_keeping_size_and_time(&ini, |b| *b = bytes);
    };

    // A development build sees the edit: the package is converted again
    // and the pak holds the new bytes.
    json(&repo, &["build"], 0);
    set_ini(b'2');
    edit_keeping_size_and_time(&repo.join(UEXP), flip_last);
    let dev = json(&repo, &["build"], 0);
    assert_eq!(
        dev.line_of("build-finished")["converted"],
        1,
        "{}",
        dev.line_of("build-finished")
    );
    let files = unpacked(&repo, "target/Repro_P.pak", &dir.join("dev-pak"));
    assert_eq!(files["Proj/Config/DefaultGame.ini"], b"[x]\ny=2\n");

    // A release build over a release build: what a forced one writes.
    json(&repo, &["build", "--release"], 0);
    set_ini(b'3');
    edit_keeping_size_and_time(&repo.join(UEXP), flip_last);
    let release = json(&repo, &["build", "--release"], 0);
    assert_eq!(release.line_of("build-finished")["up_to_date"], false);
    let released = triplet(&repo, "Repro_P");
    json(&repo, &["build", "--release", "--force"], 0);
    assert!(
        released == triplet(&repo, "Repro_P"),
        "`build --release` after an edit writes what `--release --force` writes"
    );

    // `package` over a release build ships the edited bytes.
    set_ini(b'4');
    edit_keeping_size_and_time(&repo.join(UEXP), flip_last);
    let package = json(&repo, &["package"], 0);
    let archive = package.line_of("release-archive");
    let mut zip =
        zip::ZipArchive::new(std::fs::File::open(archive["path"].as_str().unwrap()).unwrap())
            .unwrap();
    let shipped: Vec<Vec<u8>> = ["utoc", "ucas", "pak"]
        .iter()
        .map(|ext| {
            let mut entry = zip.by_name(&format!("~mods/Repro_P.{ext}")).unwrap();
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            bytes
        })
        .collect();
    json(&repo, &["build", "--release", "--force"], 0);
    assert!(
        shipped == triplet(&repo, "Repro_P"),
        "the zip holds what `build --release --force` writes"
    );
    let files = unpacked(&repo, "target/Repro_P.pak", &dir.join("package-pak"));
    assert_eq!(files["Proj/Config/DefaultGame.ini"], b"[x]\ny=4\n");
}

/// The cache of `Repro_P`.
fn cache_dir(repo: &Path) -> PathBuf {
    repo.join("target/.zenpak-cache/Repro_P")
}

/// The keys of the package entries of the cache of `Repro_P`, sorted.
fn cache_keys(repo: &Path) -> Vec<Key> {
    let mut keys: Vec<Key> = cache_entries(&cache_dir(repo))
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    keys.sort();
    keys
}

/// Flips one bit near the end of `file` (of a `.uexp`: in its export data),
/// in place: a change every time.
fn flip_near_end(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let last = bytes.len() - 5;
    bytes[last] ^= 0x01;
    std::fs::write(file, &bytes).unwrap();
}

/// The cache holds one build's worth: a package changed or removed leaves
/// no entry behind, in a development build and in a forced one.
#[test]
fn the_cache_keeps_only_the_last_build_s_packages() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("one-worth");
    let repo = corpus_mod(&corpus, &dir);
    json(&repo, &["build"], 0);
    let first = cache_keys(&repo);
    assert_eq!(first.len(), 3, "{first:?}");

    let meshes = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes");
    flip_near_end(&meshes.join("SM_Cube.uexp"));
    json(&repo, &["build"], 0);
    let changed = cache_keys(&repo);
    assert_eq!(changed.len(), 3, "{changed:?}");
    assert_eq!(changed.iter().filter(|e| first.contains(e)).count(), 2);

    std::fs::remove_dir_all(&meshes).unwrap();
    json(&repo, &["build", "--force"], 0);
    let removed = cache_keys(&repo);
    assert_eq!(removed.len(), 2, "{removed:?}");
    assert!(removed.iter().all(|e| changed.contains(e)), "{removed:?}");
}

/// A cache of the layout before the entry pack (`packages/<key>.zpc`, one
/// file per package): the next build removes those entries, and only them
/// (another file in that folder stays, and so does the folder then).
#[test]
fn entries_of_the_one_file_per_package_layout_are_removed_by_the_next_build() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("old-layout");
    let repo = corpus_mod(&corpus, &dir);
    json(&repo, &["build"], 0);
    let old = cache_dir(&repo).join("packages");
    std::fs::create_dir_all(&old).unwrap();
    let entry = old.join(format!("{}.zpc", "ab".repeat(32)));
    std::fs::write(&entry, b"ZPKGC an entry of the old layout").unwrap();
    std::fs::write(old.join("notes.txt"), b"not zenpak's").unwrap();
    let uexp = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp");
    flip_near_end(&uexp);
    json(&repo, &["build"], 0);
    assert!(!entry.exists(), "the old entry is removed");
    assert!(old.join("notes.txt").is_file(), "another file stays");
    assert_eq!(cache_keys(&repo).len(), 3);

    // Alone in its folder, the old entry goes with the folder.
    std::fs::remove_file(old.join("notes.txt")).unwrap();
    std::fs::write(&entry, b"ZPKGC").unwrap();
    flip_near_end(&uexp);
    json(&repo, &["build"], 0);
    assert!(!old.exists(), "the emptied folder is removed");
}

#[test]
fn swapped_cache_entries_are_converted_again() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("swapped");
    let repo = corpus_mod(&corpus, &dir);
    json(&repo, &["build", "--release"], 0);
    let clean = triplet(&repo, "Repro_P");

    // Two entries' bytes exchanged (each whole, checksum and all), and a
    // third replaced by a copy of the first.
    let entries = cache_entries(&cache_dir(&repo));
    assert_eq!(entries.len(), 3);
    let (a, b) = (entries[0].1.clone(), entries[1].1.clone());
    let swapped = [
        (entries[0].0, b.clone()),
        (entries[1].0, a),
        (entries[2].0, b),
    ];
    write_cache_entries(&cache_dir(&repo), &swapped);
    std::fs::remove_file(repo.join("target/Repro_P.utoc")).unwrap();

    let rebuilt = json(&repo, &["build", "--release"], 0);
    assert_eq!(rebuilt.line_of("build-finished")["converted"], 3);
    assert_eq!(rebuilt.coded("warning", "cache-damaged").len(), 3);
    assert!(
        triplet(&repo, "Repro_P") == clean,
        "the clean release build's bytes"
    );
    // The entries were written again under their keys: used as they are now.
    let again = json(&repo, &["build", "--release", "--force"], 0);
    assert!(again.coded("warning", "cache-damaged").is_empty());
    assert!(triplet(&repo, "Repro_P") == clean);
}

/// A forced build does not read the cache's entries back: one whose head
/// (magic and checksum) and length are those of the entry it would write
/// is left as it is; one of another length or head is written again. A
/// damaged body under an intact head is caught by its checksum when the
/// entry is next loaded, converted again and written anew.
#[test]
fn forced_builds_keep_entries_holding_their_bytes_and_replace_damaged_ones() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("forced-entries");
    let repo = corpus_mod(&corpus, &dir);
    json(&repo, &["build", "--release"], 0);
    let clean = triplet(&repo, "Repro_P");
    let cache = cache_dir(&repo);
    let entries = cache_entries(&cache);
    assert_eq!(entries.len(), 3);
    let files = [cache.join("packages.zpk"), cache.join("packages.zpi")];
    let modified = |e: &PathBuf| std::fs::metadata(e).unwrap().modified().unwrap();
    let times: Vec<_> = files.iter().map(modified).collect();
    let inodes: Vec<u64> = files.iter().map(|f| inode(f)).collect();
    let entry = |key: &Key| {
        cache_entries(&cache)
            .into_iter()
            .find(|(k, _)| k == key)
            .unwrap()
            .1
    };

    // Over an intact cache: the same bytes, and the pack and its index
    // left as they were (nothing appended, nothing written anew).
    let forced = json(&repo, &["build", "--release", "--force"], 0);
    assert_eq!(forced.line_of("build-finished")["converted"], 3);
    assert!(triplet(&repo, "Repro_P") == clean, "the same bytes");
    assert!(cache_entries(&cache) == entries);
    for ((file, time), ino) in files.iter().zip(&times).zip(&inodes) {
        assert_eq!(modified(file), *time, "{file:?} kept, not written again");
        if cfg!(unix) {
            assert_eq!(inode(file), *ino, "{file:?} kept, not written again");
        }
    }

    // Damage keeping the length: one byte of the body, one of the
    // checksum; and an entry one byte longer.
    let mut damaged = entries.clone();
    let at = damaged[0].1.len() - 3;
    damaged[0].1[at] ^= 0x20;
    damaged[1].1[12] ^= 0x01;
    damaged[2].1.push(0);
    write_cache_entries(&cache, &damaged);
    let forced = json(&repo, &["build", "--release", "--force"], 0);
    assert_eq!(forced.line_of("build-finished")["converted"], 3);
    assert!(forced.coded("warning", "cache-damaged").is_empty());
    assert!(triplet(&repo, "Repro_P") == clean, "nothing from the cache");
    assert!(entry(&entries[1].0) == entries[1].1, "rewritten");
    assert!(entry(&entries[2].0) == entries[2].1, "rewritten");
    let body_damaged = entry(&entries[0].0);
    assert_eq!(body_damaged.len(), entries[0].1.len());
    assert!(body_damaged != entries[0].1, "not read by a forced build");

    // The next build that loads it finds it damaged, converts that one
    // package again and writes its entry anew; the one after trusts it.
    std::fs::remove_file(repo.join("target/Repro_P.utoc")).unwrap();
    let loaded = json(&repo, &["build", "--release"], 0);
    assert_eq!(loaded.coded("warning", "cache-damaged").len(), 1);
    assert_eq!(loaded.line_of("build-finished")["converted"], 1);
    assert!(triplet(&repo, "Repro_P") == clean);
    assert!(entry(&entries[0].0) == entries[0].1, "rewritten");
    std::fs::remove_file(repo.join("target/Repro_P.utoc")).unwrap();
    let again = json(&repo, &["build", "--release"], 0);
    assert!(again.coded("warning", "cache-damaged").is_empty());
    assert_eq!(again.line_of("build-finished")["converted"], 0);
    assert!(triplet(&repo, "Repro_P") == clean);
}

/// A mod whose `[content] paks` holds the corpus's SM_Cube and a config
/// file; returns the repository.
fn pak_mod(corpus: &Path, dir: &Path) -> PathBuf {
    let repo = corpus_mod(corpus, dir);
    let cube = repo.join("Cooked/Proj/Content/LevelPrototyping/Meshes");
    let mut in_pak = Vec::new();
    for ext in ["uasset", "uexp", "ubulk"] {
        let file = cube.join(format!("SM_Cube.{ext}"));
        in_pak.push((
            format!("Proj/Content/LevelPrototyping/Meshes/SM_Cube.{ext}"),
            std::fs::read(&file).unwrap(),
        ));
        std::fs::remove_file(file).unwrap();
    }
    in_pak.push((
        "Proj/Config/FromPak.ini".to_string(),
        b"[Mod]\nFromPak=1\n".to_vec(),
    ));
    crate::build_pak_input::write_pak(&repo.join("Legacy/Old_P.pak"), &in_pak);
    crate::build_pak_input::add_paks(&repo.join("mod.toml"), &["Legacy/Old_P.pak"]);
    repo
}

/// The folder the build unpacked `Legacy/Old_P.pak` into.
fn unpacked_pak_dir(repo: &Path) -> PathBuf {
    let paks = repo.join("target/.zenpak-cache/Repro_P/paks");
    std::fs::read_dir(&paks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("an unpacked pak")
}

#[test]
fn a_tampered_unpacked_pak_is_unpacked_again() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("pak-cache");
    let repo = pak_mod(&corpus, &dir);
    json(&repo, &["build", "--release"], 0);
    let clean = triplet(&repo, "Repro_P");
    let unpacked_ini = || unpacked_pak_dir(&repo).join("Proj/Config/FromPak.ini");
    let unpacked_uexp =
        || unpacked_pak_dir(&repo).join("Proj/Content/LevelPrototyping/Meshes/SM_Cube.uexp");
    let flip = |bytes: &mut Vec<u8>| {
        let at = bytes.len() - 3;
        bytes[at] ^= 0x01;
    };

    // `--force` trusts nothing cached.
    edit_keeping_size_and_time(&unpacked_ini(), flip);
    edit_keeping_size_and_time(&unpacked_uexp(), flip);
    json(&repo, &["build", "--release", "--force"], 0);
    assert!(triplet(&repo, "Repro_P") == clean, "--release --force");

    // A release build checks the folder's hashes.
    edit_keeping_size_and_time(&unpacked_ini(), flip);
    edit_keeping_size_and_time(&unpacked_uexp(), flip);
    std::fs::remove_file(repo.join("target/Repro_P.utoc")).unwrap();
    json(&repo, &["build", "--release"], 0);
    assert!(triplet(&repo, "Repro_P") == clean, "--release");

    // A file planted in the folder is not packed.
    std::fs::write(
        unpacked_pak_dir(&repo).join("Proj/Config/Planted.ini"),
        "[x]\n",
    )
    .unwrap();
    std::fs::remove_file(repo.join("target/Repro_P.utoc")).unwrap();
    json(&repo, &["build", "--release"], 0);
    assert!(
        triplet(&repo, "Repro_P") == clean,
        "nothing planted is packed"
    );

    // A development build checks the stamps: the pak's own bytes go in.
    edit_keeping_size_and_time(&unpacked_ini(), flip);
    json(&repo, &["build"], 0);
    let files = unpacked(&repo, "target/Repro_P.pak", &dir.join("dev-pak"));
    assert_eq!(files["Proj/Config/FromPak.ini"], b"[Mod]\nFromPak=1\n");
    json(&repo, &["build", "--release", "--force"], 0);
    assert!(triplet(&repo, "Repro_P") == clean);
}

/// Rewrites the pak at `path` (written by zenpak, version 11, index not
/// encrypted) so that its directory index lists the entry named `from` as
/// `to` (same length): the SHA-1s of the directory index and of the primary
/// index that name it are updated, so the pak reads as well-formed.
pub(crate) fn rename_in_directory_index(path: &Path, from: &str, to: &str) {
    use sha1::Digest;
    use zenpak::pak::index::{PakFooter, PrimaryIndex};
    assert_eq!(from.len(), to.len());
    let mut pak = std::fs::read(path).unwrap();
    let sha1 = |bytes: &[u8]| -> [u8; 20] { sha1::Sha1::digest(bytes).into() };
    let replace_once = |bytes: &mut [u8], old: &[u8], new: &[u8]| {
        let hits: Vec<usize> = bytes
            .windows(old.len())
            .enumerate()
            .filter(|(_, w)| *w == old)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(hits.len(), 1, "exactly one occurrence");
        bytes[hits[0]..hits[0] + new.len()].copy_from_slice(new);
    };
    let tail_start = pak.len() - 256;
    let footer = PakFooter::find(&pak[tail_start..], tail_start as u64).unwrap();
    let primary_range =
        footer.index_offset as usize..(footer.index_offset + footer.index_size) as usize;
    let primary = PrimaryIndex::read(
        &mut zenpak::binary::Reader::with_base(&pak[primary_range.clone()], footer.index_offset),
        footer.version,
    )
    .unwrap();
    let fdi = primary.full_directory_index.unwrap();
    let fdi_range = fdi.offset as usize..(fdi.offset + fdi.size) as usize;
    assert_eq!(sha1(&pak[fdi_range.clone()]), fdi.hash);
    replace_once(&mut pak[fdi_range.clone()], from.as_bytes(), to.as_bytes());
    let new_fdi_hash = sha1(&pak[fdi_range]);
    replace_once(&mut pak[primary_range.clone()], &fdi.hash, &new_fdi_hash);
    let new_primary_hash = sha1(&pak[primary_range]);
    replace_once(
        &mut pak[tail_start..],
        &footer.index_hash,
        &new_primary_hash,
    );
    std::fs::write(path, pak).unwrap();
}

#[test]
fn a_pak_that_lists_a_path_twice_is_refused() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("pak-twice");
    let repo = corpus_mod(&corpus, &dir);
    let pak = repo.join("Legacy/Old_P.pak");
    crate::build_pak_input::write_pak(
        &pak,
        &[
            ("Proj/Config/A.ini".to_string(), b"[A]\n".to_vec()),
            ("Proj/Config/B.ini".to_string(), b"[B]\n".to_vec()),
        ],
    );
    rename_in_directory_index(&pak, "B.ini", "A.ini");
    // The pak reads as well-formed, with the one path listed twice.
    json(&repo, &["list", pak.to_str().unwrap()], 0);
    crate::build_pak_input::add_paks(&repo.join("mod.toml"), &["Legacy/Old_P.pak"]);
    let failed = json(&repo, &["build"], 1);
    let errors = failed.diagnostics("error");
    assert_eq!(errors.len(), 1, "{failed:?}");
    assert_eq!(errors[0]["code"], "format", "{}", errors[0]);
    assert!(
        errors[0]["file"].as_str().unwrap().ends_with("Old_P.pak"),
        "{}",
        errors[0]
    );
    assert!(!repo.join("target/Repro_P.pak").exists());
}

#[cfg(unix)]
mod links {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A secret outside the mod, and a mod (a few loose files, no packages
    /// needed) whose content root is `Cooked`.
    fn linked_mod(dir: &Path) -> (PathBuf, PathBuf) {
        let secret = dir.join("home/.ssh/id_rsa");
        std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
        std::fs::write(&secret, "-----BEGIN PRIVATE KEY-----\n").unwrap();
        let out = run(
            Some(dir),
            &["new", "Linked", "--engine", "5.6", "--project", "Proj"],
        );
        out.ok();
        let repo = dir.join("Linked");
        std::fs::create_dir_all(repo.join("Cooked/Proj/Config")).unwrap();
        std::fs::write(repo.join("Cooked/Proj/Config/DefaultGame.ini"), "[x]\n").unwrap();
        (repo, secret)
    }

    #[test]
    fn a_link_out_of_the_content_root_is_refused() {
        let dir = common::temp_dir("link-out");
        let (repo, secret) = linked_mod(&dir);
        let link = repo.join("Cooked/Proj/Config/id_rsa");
        symlink(&secret, &link).unwrap();
        for command in ["build", "package"] {
            let refused = json(&repo, &[command], 2);
            let errors = refused.diagnostics("error");
            assert_eq!(errors.len(), 1, "{command}: {refused:?}");
            assert_eq!(errors[0]["code"], "usage");
            assert_eq!(errors[0]["file"], link.to_str().unwrap(), "{}", errors[0]);
            let real_secret = secret.canonicalize().unwrap();
            assert!(
                errors[0]["message"]
                    .as_str()
                    .unwrap()
                    .contains(real_secret.to_str().unwrap()),
                "names the target: {}",
                errors[0]
            );
        }
        assert!(!repo.join("target/Linked_P.pak").exists());
        assert!(!repo.join("target/package").exists());

        // A link to a folder outside is refused the same way.
        std::fs::remove_file(&link).unwrap();
        let folder_link = repo.join("Cooked/Proj/Keys");
        symlink(secret.parent().unwrap(), &folder_link).unwrap();
        let refused = json(&repo, &["build"], 2);
        assert_eq!(refused.error()["file"], folder_link.to_str().unwrap());
        std::fs::remove_file(&folder_link).unwrap();

        // The manifest opts in: the link is followed.
        symlink(&secret, &link).unwrap();
        let manifest = repo.join("mod.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replacen("[content]\n", "[content]\nfollow-links = true\n", 1),
        )
        .unwrap();
        json(&repo, &["build"], 0);
        let files = unpacked(&repo, "target/Linked_P.pak", &dir.join("followed"));
        assert_eq!(files["Proj/Config/id_rsa"], std::fs::read(&secret).unwrap());

        // A value of the wrong type names its line.
        std::fs::write(
            &manifest,
            text.replacen("[content]\n", "[content]\nfollow-links = \"yes\"\n", 1),
        )
        .unwrap();
        let error = json(&repo, &["build"], 2).error();
        let line = text.lines().position(|l| l == "[content]").unwrap() + 2;
        assert_eq!(error["line"], line as u64, "{error}");
    }

    #[test]
    fn links_inside_the_content_root_and_a_linked_root_build() {
        let dir = common::temp_dir("link-in");
        let (repo, _) = linked_mod(&dir);
        // A link inside the root to a file inside it.
        symlink(
            repo.join("Cooked/Proj/Config/DefaultGame.ini"),
            repo.join("Cooked/Proj/Config/Alias.ini"),
        )
        .unwrap();
        json(&repo, &["build"], 0);
        let files = unpacked(&repo, "target/Linked_P.pak", &dir.join("inside"));
        assert_eq!(files["Proj/Config/Alias.ini"], b"[x]\n");

        // The content root itself a link to a cooked folder elsewhere.
        let cooked = dir.join("Editor/Saved/Cooked/Windows");
        std::fs::create_dir_all(cooked.parent().unwrap()).unwrap();
        std::fs::rename(repo.join("Cooked"), &cooked).unwrap();
        symlink(&cooked, repo.join("Cooked")).unwrap();
        let built = json(&repo, &["build", "--release"], 0);
        assert_eq!(built.line_of("build-finished")["loose_files"], 2);
    }

    #[test]
    fn unpack_and_extract_create_nothing_through_a_planted_link() {
        let Some(corpus) = common::corpus() else {
            return;
        };
        let dir = common::temp_dir("planted");
        let repo = corpus_mod_with_ini(&corpus, &dir, "[x]\n");
        json(&repo, &["build"], 0);
        let elsewhere = dir.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let runs: [(&str, Vec<&str>); 3] = [
            ("pak", vec!["unpack", "target/Repro_P.pak", "--force"]),
            ("utoc", vec!["unpack", "target/Repro_P.utoc", "--force"]),
            (
                "extract",
                vec![
                    "extract",
                    "target/Repro_P.utoc",
                    "--engine",
                    "5.6",
                    "--force",
                    "-o",
                ],
            ),
        ];
        for (name, args) in runs {
            let out = dir.join(format!("out-{name}"));
            std::fs::create_dir_all(&out).unwrap();
            symlink(&elsewhere, out.join("Proj")).unwrap();
            let mut args = args.clone();
            let out_arg = out.to_str().unwrap().to_string();
            args.push(&out_arg);
            let refused = json(&repo, &args, 1);
            assert!(
                !refused.diagnostics("error").is_empty(),
                "{name}: {refused:?}"
            );
            assert_eq!(
                std::fs::read_dir(&elsewhere).unwrap().count(),
                0,
                "{name}: nothing created through the link"
            );
        }
    }
}

/// A writer that only hashes.
struct HashingSink(blake3::Hasher);

impl std::io::Write for HashingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_large_loose_file_streams_into_the_pak() {
    const SIZE: u64 = 256 << 20;
    let dir = common::temp_dir("large-loose");
    let out = run(
        Some(&dir),
        &["new", "Big", "--engine", "5.6", "--project", "Proj"],
    );
    out.ok();
    let repo = dir.join("Big");
    let movie = repo.join("Cooked/Proj/Content/Movies/Intro.bk2");
    std::fs::create_dir_all(movie.parent().unwrap()).unwrap();
    // Sparse, with a few bytes written so it is not all zeros.
    let file = std::fs::File::create(&movie).unwrap();
    file.set_len(SIZE).unwrap();
    for at in [0, SIZE / 3, SIZE - 7] {
        std::os::unix::fs::FileExt::write_all_at(&file, b"zenpak!", at).unwrap();
    }
    drop(file);
    let manifest = repo.join("mod.toml");
    let (built, peak) = common::run_measured(&[
        "build",
        "--quiet",
        "--manifest-path",
        manifest.to_str().unwrap(),
    ]);
    built.ok();
    eprintln!("peak RSS building a 256 MiB loose file: {} MiB", peak >> 20);
    assert!(peak < 128 << 20, "peak RSS {} MiB", peak >> 20);

    let pak = zenpak::pak::reader::PakReader::open(&repo.join("target/Big_P.pak"), None).unwrap();
    let entry = pak
        .entry("Proj/Content/Movies/Intro.bk2")
        .expect("the entry");
    let mut sink = HashingSink(blake3::Hasher::new());
    assert_eq!(pak.read_to(entry, &mut sink).unwrap(), SIZE);
    let mut expected = blake3::Hasher::new();
    expected
        .update_reader(std::fs::File::open(&movie).unwrap())
        .unwrap();
    assert_eq!(sink.0.finalize(), expected.finalize());
}

/// The inode of `path` (0 where there is none): a file written anew gets another.
fn inode(path: &Path) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().ino()
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0
    }
}

/// A development build with nothing changed checks the last scan's record
/// of folders and files instead of scanning again (it leaves the record
/// as it is); an edit that keeps size and time, a file added, and a damaged
/// record are all seen.
#[test]
fn the_no_change_check_sees_edits_new_files_and_damaged_records() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("tree");
    let repo = corpus_mod_with_ini(&corpus, &dir, "[x]\ny=1\n");
    // Folders changed within the last moments are not trusted (their
    // times may not have ticked yet): let the new ones settle.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let first = json(&repo, &["build"], 0);
    assert_eq!(first.line_of("build-finished")["up_to_date"], false);
    let tree = repo.join("target/.zenpak-cache/Repro_P/tree.bin");
    assert!(tree.is_file(), "a clean scan is recorded");
    let recorded = inode(&tree);
    let again = json(&repo, &["build"], 0);
    assert_eq!(again.line_of("build-finished")["up_to_date"], true);
    assert_eq!(
        again.line_of("build-finished")["packages"],
        first.line_of("build-finished")["packages"]
    );
    assert_eq!(
        again.line_of("build-finished")["bytes_in"],
        first.line_of("build-finished")["bytes_in"]
    );
    if cfg!(unix) {
        assert_eq!(inode(&tree), recorded, "checked, not scanned again");
    }

    // A damaged record: a warning, and the content is scanned again.
    let mut bytes = std::fs::read(&tree).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(&tree, &bytes).unwrap();
    let damaged = json(&repo, &["build"], 0);
    assert_eq!(
        damaged.coded("warning", "cache-damaged").len(),
        1,
        "{damaged:?}"
    );
    assert_eq!(damaged.line_of("build-finished")["up_to_date"], true);
    assert_ne!(std::fs::read(&tree).unwrap(), bytes, "recorded anew");

    // An edit in place keeping size and time (no folder changes).
    let before = triplet(&repo, "Repro_P");
    edit_keeping_size_and_time(&repo.join(UEXP), |b| {
        let at = b.len() - 5;
        b[at] ^= 0x01;
    });
    let edited = json(&repo, &["build"], 0);
    assert_eq!(edited.line_of("build-finished")["up_to_date"], false);
    assert_eq!(
        edited.line_of("build-finished")["converted"],
        1,
        "{}",
        edited.line_of("build-finished")
    );
    assert_ne!(triplet(&repo, "Repro_P"), before);

    // A file added to a folder the record holds.
    std::fs::write(repo.join("Cooked/Proj/Config/Added.ini"), "[a]\n").unwrap();
    let added = json(&repo, &["build"], 0);
    assert_eq!(added.line_of("build-finished")["up_to_date"], false);
    let files = unpacked(&repo, "target/Repro_P.pak", &dir.join("added-pak"));
    assert_eq!(files["Proj/Config/Added.ini"], b"[a]\n");
}

/// When no folder changed since the last scan, a development build takes
/// the files that scan found from its record instead of listing every
/// folder: what it builds after edits in place is what a release build
/// of the same files holds; a pattern that selected only an excluded file
/// is not taken for one that matched nothing; and a file that became a
/// Git LFS pointer is still refused.
#[test]
fn edits_in_place_under_unchanged_folders_build_what_a_scan_builds() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("listed");
    let repo = corpus_mod_with_ini(&corpus, &dir, "[x]\ny=1\n");
    std::fs::write(repo.join("Cooked/Proj/Config/Skip.ini"), "[s]\n").unwrap();
    let manifest = repo.join("mod.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replace(
        "root = \"Cooked\"",
        "root = \"Cooked\"\ninclude = [\"Proj/**\", \"**/Skip.ini\"]\nexclude = [\"**/Skip.ini\"]",
    );
    std::fs::write(&manifest, text).unwrap();
    // Folders changed within the last moments are not trusted: let the
    // new ones settle, so that the next builds find every folder unchanged.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let first = json(&repo, &["build"], 0);
    assert!(first.codes("warning").is_empty(), "{}", first.stdout);
    assert!(repo.join("target/.zenpak-cache/Repro_P/tree.bin").is_file());

    edit_keeping_size_and_time(&repo.join(UEXP), |b| {
        let at = b.len() - 5;
        b[at] ^= 0x01;
    });
    edit_keeping_size_and_time(&repo.join(INI), |b| b[6] = b'2');
    let edited = json(&repo, &["build"], 0);
    let done = edited.line_of("build-finished");
    assert_eq!(done["up_to_date"], false, "{done}");
    assert_eq!(done["converted"], 1, "{done}");
    assert_eq!(done["layout"], "extended", "{done}");
    assert_eq!(
        done["packages"],
        first.line_of("build-finished")["packages"]
    );
    assert!(edited.codes("warning").is_empty(), "{}", edited.stdout);
    json(&repo, &["verify", "target/Repro_P.utoc"], 0);
    let container = unpacked(&repo, "target/Repro_P.utoc", &dir.join("listed-utoc"));
    let pak = unpacked(&repo, "target/Repro_P.pak", &dir.join("listed-pak"));
    assert_eq!(pak["Proj/Config/DefaultGame.ini"], b"[x]\ny=2\n");
    assert!(!pak.contains_key("Proj/Config/Skip.ini"));

    // The same files, scanned and written anew.
    json(&repo, &["build", "--release"], 0);
    assert_eq!(
        unpacked(&repo, "target/Repro_P.utoc", &dir.join("release-utoc")),
        container
    );
    assert_eq!(
        unpacked(&repo, "target/Repro_P.pak", &dir.join("release-pak")),
        pak
    );

    // An output removed, no input changed: written again from the same files.
    json(&repo, &["build"], 0);
    std::fs::remove_file(repo.join("target/Repro_P.pak")).unwrap();
    let rewritten = json(&repo, &["build"], 0);
    assert_eq!(rewritten.line_of("build-finished")["up_to_date"], false);
    assert!(
        rewritten.codes("warning").is_empty(),
        "{}",
        rewritten.stdout
    );
    assert_eq!(
        unpacked(&repo, "target/Repro_P.pak", &dir.join("rewritten-pak")),
        pak
    );

    // A file rewritten in place as a Git LFS pointer (its folder unchanged).
    let uexp = repo.join(UEXP);
    let pointer = crate::rough_edges::lfs_pointer_text(&std::fs::read(&uexp).unwrap());
    std::fs::write(&uexp, pointer).unwrap();
    let refused = json(&repo, &["build"], 1);
    assert_eq!(
        refused.coded("error", "lfs-pointer").len(),
        1,
        "{}",
        refused.stdout
    );
}
