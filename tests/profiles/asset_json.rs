//! `zenpak to-json` then `zenpak from-json` on every corpus package, through
//! the binary: the files written are the package's files, byte for byte;
//! the share of exports decoded is the codec's own
//! (`properties_codec.rs`), reported per game.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    packages: usize,
    exports: usize,
    decoded: usize,
    identical: usize,
}

/// The package's files: the header, the `.uexp` and whichever companions exist.
fn package_files(path: &Path) -> Vec<(String, Vec<u8>)> {
    ["uexp", "ubulk", "uptnl", "m.ubulk"]
        .into_iter()
        .map(|ext| path.with_extension(ext))
        .chain([path.to_path_buf()])
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// One package through both commands; its counts (`identical` 1 or 0).
fn round_trip(path: &Path, engine: &str, mappings: Option<&Path>, dir: &Path) -> Counts {
    let json = dir.join("package.json");
    let mut args: Vec<String> = vec![
        "to-json".into(),
        path.display().to_string(),
        "--engine".into(),
        engine.into(),
        "-o".into(),
        json.display().to_string(),
        "--message-format".into(),
        "json".into(),
    ];
    if let Some(m) = mappings {
        args.extend(["--mappings".into(), m.display().to_string()]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::run(None, &argv);
    assert_eq!(run.code, 0, "to-json {}: {}", path.display(), run.stdout);
    let lines = run.json();
    let report = lines
        .iter()
        .find(|l| l["reason"] == "to-json")
        .expect("a to-json line");
    let out = dir.join("out").join(path.file_name().unwrap());
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut args: Vec<String> = vec![
        "from-json".into(),
        json.display().to_string(),
        "-o".into(),
        out.display().to_string(),
        "--message-format".into(),
        "json".into(),
    ];
    if let Some(m) = mappings {
        args.extend(["--mappings".into(), m.display().to_string()]);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = common::run(None, &argv);
    assert_eq!(run.code, 0, "from-json {}: {}", path.display(), run.stdout);
    let identical = package_files(path) == package_files(&out);
    Counts {
        packages: 1,
        exports: report["exports"].as_u64().unwrap() as usize,
        decoded: report["decoded"].as_u64().unwrap() as usize,
        identical: identical as usize,
    }
}

#[test]
fn every_corpus_package_comes_back_byte_identical_through_to_json_and_from_json() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let mut cache = BTreeMap::new();
    let jobs: Vec<(String, PathBuf, String, Option<PathBuf>)> =
        crate::properties_codec::packages(&corpus)
            .into_iter()
            .map(|(game, path, engine)| {
                let mappings = common::mappings_for(&path, &mut cache);
                (game, path, engine.as_str().to_string(), mappings)
            })
            .collect();
    let table: Mutex<BTreeMap<String, Counts>> = Mutex::new(BTreeMap::new());
    let different: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let next = Mutex::new(jobs.iter());
    std::thread::scope(|s| {
        for worker in 0..2 {
            let (table, different, next) = (&table, &different, &next);
            let corpus = &corpus;
            s.spawn(move || {
                let dir = common::temp_dir(&format!("asset-json-{worker}"));
                loop {
                    let Some((game, path, engine, mappings)) = next.lock().unwrap().next() else {
                        break;
                    };
                    let c = round_trip(path, engine, mappings.as_deref(), &dir);
                    if c.identical == 0 {
                        let rel = path.strip_prefix(corpus).unwrap_or(path);
                        different.lock().unwrap().push(rel.display().to_string());
                    }
                    let mut table = table.lock().unwrap();
                    let t = table.entry(game.clone()).or_default();
                    t.packages += 1;
                    t.exports += c.exports;
                    t.decoded += c.decoded;
                    t.identical += c.identical;
                }
            });
        }
    });
    let table = table.into_inner().unwrap();
    let mut total = Counts::default();
    eprintln!(
        "{:<36} {:>8} {:>8} {:>8} {:>9}",
        "game", "packages", "exports", "decoded", "identical"
    );
    for (game, c) in &table {
        eprintln!(
            "{game:<36} {:>8} {:>8} {:>8} {:>9}",
            c.packages, c.exports, c.decoded, c.identical
        );
        total.packages += c.packages;
        total.exports += c.exports;
        total.decoded += c.decoded;
        total.identical += c.identical;
    }
    eprintln!(
        "{:<36} {:>8} {:>8} {:>8} {:>9}",
        "all", total.packages, total.exports, total.decoded, total.identical
    );
    let different = different.into_inner().unwrap();
    assert!(
        different.is_empty(),
        "not byte-identical after to-json + from-json: {different:#?}"
    );
    assert!(total.packages > 0);
    // The codec's own figures (`properties_codec.rs`): what the command
    // decodes is what the library decodes.
    assert_eq!(
        (total.exports, total.decoded),
        (2454, 2194),
        "exports, decoded"
    );
}
