//! `zenpak to-json` then `zenpak from-json` on every corpus package, through
//! the binary: the files written are the package's files, byte for byte;
//! the share of exports decoded is the codec's own
//! (`properties_codec.rs`), reported per game.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};

use common::Run;
use zenpak::properties::document::AssetDocument;
use zenpak::properties::SchemaSources;

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

/// `zenpak to-json INPUT -o OUTPUT` (with `engine`) or `zenpak from-json
/// INPUT -o OUTPUT` (without), with `--mappings` when given and JSON
/// messages.
fn json_command(input: &Path, output: &Path, engine: Option<&str>, mappings: Option<&Path>) -> Run {
    json_command_with(input, output, engine, mappings, &[])
}

/// [`json_command`] with `extra` arguments.
fn json_command_with(
    input: &Path,
    output: &Path,
    engine: Option<&str>,
    mappings: Option<&Path>,
    extra: &[&str],
) -> Run {
    let mut args = vec![
        if engine.is_some() {
            "to-json"
        } else {
            "from-json"
        },
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
        "--message-format",
        "json",
    ];
    if let Some(engine) = engine {
        args.extend(["--engine", engine]);
    }
    if let Some(m) = mappings {
        args.extend(["--mappings", m.to_str().unwrap()]);
    }
    args.extend(extra);
    common::run(None, &args)
}

/// One package through both commands; its counts (`identical` 1 or 0).
fn round_trip(path: &Path, engine: &str, mappings: Option<&Path>, dir: &Path) -> Counts {
    let json = dir.join("package.json");
    let run = json_command(path, &json, Some(engine), mappings);
    assert_eq!(run.code, 0, "to-json {}: {}", path.display(), run.stdout);
    let lines = run.json();
    let report = lines
        .iter()
        .find(|l| l["reason"] == "to-json")
        .expect("a to-json line");
    let out = dir.join("out").join(path.file_name().unwrap());
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    // Written elsewhere, the document's schemas from content (a blueprint
    // parent, a component's class, a user-defined struct) are in the
    // game's folder (the one holding its mappings).
    let folder = mappings
        .and_then(Path::parent)
        .unwrap_or(path.parent().unwrap())
        .to_str()
        .unwrap();
    let run = json_command_with(&json, &out, None, mappings, &["--schemas", folder]);
    assert_eq!(run.code, 0, "from-json {}: {}", path.display(), run.stdout);
    let identical = package_files(path) == package_files(&out);
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    check_against_schema(&doc, path);
    Counts {
        packages: 1,
        exports: report["exports"].as_u64().unwrap() as usize,
        decoded: report["decoded"].as_u64().unwrap() as usize,
        identical: identical as usize,
    }
}

/// `docs/asset-json.schema.json`.
fn schema() -> &'static Value {
    static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/asset-json.schema.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    })
}

/// Every key the document uses is one the schema declares where it is
/// used: the document's, an export's, an export tree's, each tagged
/// property's, and every `$` key (zenpak's own) anywhere in the data.
fn check_against_schema(doc: &Value, path: &Path) {
    let schema = schema();
    let declared = |at: &Value| -> Vec<String> {
        at["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let keys_in = |v: &Value, allowed: &[String], what: &str| {
        for k in v.as_object().unwrap().keys() {
            assert!(
                allowed.contains(k),
                "{}: {what} key `{k}` is not in the schema",
                path.display()
            );
        }
    };
    assert_eq!(doc["format"], schema["properties"]["format"]["const"]);
    keys_in(doc, &declared(schema), "document");
    let defs = &schema["$defs"];
    let mut reserved = declared(&defs["Block"]);
    reserved.extend(declared(&defs["Value"]["oneOf"][1]));
    reserved.retain(|k| k.starts_with('$'));
    let tagged = declared(&defs["TaggedProperty"]);
    fn walk(v: &Value, reserved: &[String], tagged: &[String], path: &Path) {
        match v {
            Value::Object(map) => {
                let is_tagged = map.contains_key("type")
                    && (map.contains_key("value") || map.contains_key("opaque"));
                for (k, inner) in map {
                    assert!(
                        !k.starts_with('$') || reserved.contains(k),
                        "{}: key `{k}` is not one the schema declares",
                        path.display()
                    );
                    assert!(
                        !is_tagged || tagged.contains(k),
                        "{}: tagged property key `{k}` is not in the schema",
                        path.display()
                    );
                    walk(inner, reserved, tagged, path);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, reserved, tagged, path)),
            _ => {}
        }
    }
    for export in doc["exports"].as_array().unwrap() {
        keys_in(export, &declared(&defs["Export"]), "export");
        if let Some(data) = export.get("data") {
            keys_in(data, &declared(&defs["ExportTree"]), "export data");
            walk(data, &reserved, &tagged, path);
        }
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
        (2454, 2207),
        "exports, decoded"
    );
}

// ---- known values and edits ------------------------------------------------
//
// serde_json's `Value` keeps object keys sorted (this crate does not turn on
// its `preserve_order`), and a row's or an entry's order is part of the
// bytes. So the edits are made as a modder makes them, on the document's
// text, and orders are read through the library's typed document.

const NANOS: &str = "uassetapi/TestUE5_7/NanosWorld";
const SN2: &str = "uassetapi/TestManyAssets/SN2";

fn usmap(game: &Path) -> PathBuf {
    common::files_with_ext(game, &["usmap"]).remove(0)
}

/// `to-json` of `package` (mappings: the game's); the document's text.
fn to_json_text(package: &Path, engine: &str, game: &Path, dir: &Path) -> String {
    let out = dir.join("document.json");
    let run = json_command(package, &out, Some(engine), Some(&usmap(game)));
    assert_eq!(run.code, 0, "{}", run.stdout);
    std::fs::read_to_string(&out).unwrap()
}

/// `from-json` of the document `text` into `dir/out/<name>`; the run and
/// the written `.uasset`.
fn from_json_text(text: &str, game: &Path, dir: &Path, name: &str) -> (Run, PathBuf) {
    let json = dir.join(format!("{name}.edited.json"));
    std::fs::write(&json, text).unwrap();
    let out = dir.join("out").join(name);
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    (json_command(&json, &out, None, Some(&usmap(game))), out)
}

fn value(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The row (or entry) names of export 0, in their order (`game`: whose
/// mappings type the document).
fn row_names(text: &str, game: &Path) -> Vec<String> {
    let mappings = zenpak::mappings::Mappings::load(usmap(game)).unwrap();
    let doc =
        AssetDocument::from_json(text.as_bytes(), Some(&mappings), &SchemaSources::none()).unwrap();
    let tree = doc.exports[0].data.as_ref().expect("decoded");
    tree.rows
        .as_ref()
        .expect("rows")
        .0
        .iter()
        .map(|(k, _)| k.clone())
        .collect()
}

/// The value of the property `name` of a block (or struct).
fn prop<'a>(block: &'a Value, name: &str) -> &'a Value {
    block
        .get(name)
        .unwrap_or_else(|| panic!("no property {name} in {block}"))
}

/// Row `row`'s `TextStyle.Font` struct of DT_ChatEntry.
fn font_of<'a>(doc: &'a Value, row: &str) -> &'a Value {
    let row = &doc["exports"][0]["data"]["rows"][row];
    prop(prop(row, "TextStyle"), "Font")
}

/// The byte range of the JSON value that follows `"key": ` at or after
/// The brackets, commas and line ends of `text[range]` that lie outside
/// JSON strings, with their positions.
fn structure(text: &str, range: std::ops::Range<usize>) -> Vec<(usize, u8)> {
    let (mut in_string, mut escaped) = (false, false);
    let mut out = Vec::new();
    for i in range {
        let b = text.as_bytes()[i];
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b"{}[],\n".contains(&b) {
            out.push((i, b));
        }
    }
    out
}

/// The byte range of the JSON value that follows `"key": ` at or after
/// `from` in pretty-printed `text`.
fn value_span(text: &str, key: &str, from: usize) -> std::ops::Range<usize> {
    let pattern = format!("\"{key}\": ");
    let start = from
        + text[from..]
            .find(&pattern)
            .unwrap_or_else(|| panic!("no {pattern} after {from}"))
        + pattern.len();
    let mut depth = 0;
    for (i, b) in structure(text, start..text.len()) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return start..i + 1;
                }
            }
            _ if depth == 0 => return start..i,
            _ => {}
        }
    }
    panic!("unterminated value of {key}")
}

/// The byte ranges of the elements of the JSON array at `span` in `text`.
fn array_items(text: &str, span: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let inside = span.start + 1..span.end - 1;
    let mut cuts = vec![inside.start];
    let mut depth = 0;
    for (i, b) in structure(text, inside.clone()) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => cuts.push(i + 1),
            _ => {}
        }
    }
    cuts.push(inside.end + 1);
    cuts.windows(2)
        .map(|w| {
            let piece = &text[w[0]..w[1] - 1];
            let lead = piece.len() - piece.trim_start().len();
            w[0] + lead..w[0] + piece.trim_end().len()
        })
        .filter(|r| !r.is_empty())
        .collect()
}

/// Known values, read from the packages' bytes by hand (offsets in the
/// `.uexp`), found in the JSON where they belong.
#[test]
fn to_json_shows_what_the_bytes_say() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("asset-json-known");
    let (nanos, sn2) = (corpus.join(NANOS), corpus.join(SN2));
    // DT_ChatEntry: at 0x02 the RowStruct reference -7 (import 6,
    // /Script/UMG.RichTextStyleRow), at 0x0a 13 rows; the first row's name
    // at 0x0e is name 3 (`Default`), the second's at 0x110 name 10
    // (`PlayerName`); the first row's font size at 0x3f is 00 00 60 41
    // (14.0) and its FontObject -3 (import 2, Font_Roboto).
    let text = to_json_text(
        &nanos.join("Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset"),
        "5.7",
        &nanos,
        &dir,
    );
    let dt = value(&text);
    let export = &dt["exports"][0];
    assert_eq!(export["class"], "/Script/Engine.DataTable");
    assert_eq!(
        prop(&export["data"]["properties"], "RowStruct"),
        &json!("/Script/UMG.RichTextStyleRow")
    );
    let rows = row_names(&text, &nanos);
    assert_eq!(rows.len(), 13);
    assert_eq!(rows[..2], ["Default", "PlayerName"]);
    // The other row names are the name map's first 14 names less `Light`
    // (a font's typeface name).
    let mut expected: Vec<&str> = dt["names"].as_array().unwrap()[..14]
        .iter()
        .map(|n| n.as_str().unwrap())
        .filter(|n| *n != "Light")
        .collect();
    let mut sorted: Vec<&str> = rows.iter().map(String::as_str).collect();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    let font = font_of(&dt, "Default");
    assert_eq!(prop(font, "Size"), &json!(14.0));
    assert_eq!(
        prop(font, "FontObject"),
        &json!("/Game/NanosWorld/UI/Fonts/Roboto/Font_Roboto.Font_Roboto")
    );
    // ST_Attributes: namespace `ST_Attributes` at 0x06, one entry at 0x1a:
    // `PlayerHasDied` → `Player {0} has died`, no metadata.
    let st = value(&to_json_text(
        &sn2.join("Content/StringTables/ST_Attributes.uasset"),
        "5.6",
        &sn2,
        &dir,
    ));
    assert_eq!(
        st["exports"][0]["data"]["string_table"],
        json!({"namespace": "ST_Attributes", "entries": {"PlayerHasDied": "Player {0} has died"}})
    );
    // CF_MAccelerationConversionCurve: 3 keys at 0x04; the second at 0x23:
    // modes 02 01 00, time cd cc cc 3d (0.1), value cd cc 4c 3f (0.8),
    // tangents 5b 50 1c 3f (0.6106011) in and out; the third at time and
    // value 1.0 (0000803f).
    let curve = value(&to_json_text(
        &sn2.join("Content/Blueprints/Character/CF_MAccelerationConversionCurve.uasset"),
        "5.6",
        &sn2,
        &dir,
    ));
    let float_curve = prop(&curve["exports"][0]["data"]["properties"], "FloatCurve");
    let keys = prop(float_curve, "Keys").as_array().unwrap();
    assert_eq!(keys.len(), 3);
    assert_eq!(
        keys[1],
        json!({"InterpMode": 2, "TangentMode": 1, "TangentWeightMode": 0, "Time": 0.1,
               "Value": 0.8, "ArriveTangent": 0.6106011, "ArriveTangentWeight": 0.0,
               "LeaveTangent": 0.6106011, "LeaveTangentWeight": 0.0})
    );
    assert_eq!(keys[2]["Time"], json!(1.0));
    assert_eq!(keys[2]["Value"], json!(1.0));
    // E_AnimSyncMethodOptions: 3 entries, names 1, 2, 0 of the name map
    // with values 0, 1, 2, then CppForm 1 (namespaced).
    let e = value(&to_json_text(
        &sn2.join("Content/Blueprints/Character/E_AnimSyncMethodOptions.uasset"),
        "5.6",
        &sn2,
        &dir,
    ));
    assert_eq!(
        e["exports"][0]["data"]["enum"],
        json!({"names": {
            "E_AnimSyncMethodOptions::NewEnumerator0": 0,
            "E_AnimSyncMethodOptions::NewEnumerator1": 1,
            "E_AnimSyncMethodOptions::E_MAX": 2}, "cpp_form": 1})
    );
}

/// The offsets where two buffers of one length differ.
fn differing(a: &[u8], b: &[u8]) -> Vec<usize> {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, _)| i)
        .collect()
}

/// The document less what moves with any edit (the header's bytes, the
/// .uexp runs' offsets) and the name map, for comparing what an edit changed.
fn content(text: &str) -> Value {
    let mut doc = value(text);
    for key in ["header", "uexp_runs", "names"] {
        doc.as_object_mut().unwrap().remove(key);
    }
    doc
}

#[test]
fn from_json_writes_exactly_what_an_edit_implies() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("asset-json-edits");
    let (nanos, sn2) = (corpus.join(NANOS), corpus.join(SN2));
    let source = nanos.join("Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset");
    let original = to_json_text(&source, "5.7", &nanos, &dir);
    let (header, uexp) = (
        std::fs::read(&source).unwrap(),
        std::fs::read(source.with_extension("uexp")).unwrap(),
    );

    // A number in a row (the first `Size` is the first row's): of the float
    // at 0x3f (00 00 60 41, 14.0; 20.0 is 00 00 a0 41) one byte changes,
    // nothing else.
    let at = original.find("\"Size\": ").unwrap();
    let size = value_span(&original, "Size", at);
    assert_eq!(&original[size.clone()], "14.0");
    let mut edited = original.clone();
    edited.replace_range(size, "20.0");
    let (run, out) = from_json_text(&edited, &nanos, &dir, "DT_ChatEntry.uasset");
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(std::fs::read(&out).unwrap(), header);
    let new_uexp = std::fs::read(out.with_extension("uexp")).unwrap();
    assert_eq!(differing(&uexp, &new_uexp), [0x41]);
    assert_eq!(new_uexp[0x3f..0x43], 20.0f32.to_le_bytes());
    let reread = to_json_text(&out, "5.7", &nanos, &dir);
    assert_eq!(
        reread, edited,
        "to-json of the written package is the edited document"
    );
    // Set back: the original bytes.
    let (run, out) = from_json_text(&original, &nanos, &dir, "DT_ChatEntry.uasset");
    assert_eq!(run.code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), header);
    assert_eq!(std::fs::read(out.with_extension("uexp")).unwrap(), uexp);

    // A row renamed to a name the package lacks (`Cyan` → `Teal`), a row
    // removed (`Grey`), a row added (a copy of `Red` as `Maroon`, last).
    let mut edited = original.clone();
    let red = value_span(&edited, "Red", value_span(&edited, "rows", 0).start);
    let red_text = edited[red].to_string();
    let grey = value_span(&edited, "Grey", 0);
    // The removed row with its key and the comma before it.
    let grey_start = edited[..grey.start].rfind(",").unwrap();
    edited.replace_range(grey_start..grey.end, "");
    edited = edited.replacen("\"Cyan\": {", "\"Teal\": {", 1);
    let rows = value_span(&edited, "rows", 0);
    let last = edited[..rows.end - 1].trim_end().len();
    edited.insert_str(last, &format!(",\n        \"Maroon\": {red_text}"));
    let (run, out) = from_json_text(&edited, &nanos, &dir, "DT_ChatEntry.uasset");
    assert_eq!(run.code, 0, "{}", run.stdout);
    let reread = to_json_text(&out, "5.7", &nanos, &dir);
    let mut expected_rows = row_names(&original, &nanos);
    expected_rows.retain(|r| r != "Grey");
    for r in &mut expected_rows {
        if r == "Cyan" {
            *r = "Teal".into();
        }
    }
    expected_rows.push("Maroon".into());
    assert_eq!(row_names(&reread, &nanos), expected_rows);
    // The new names follow the 14 the export data referred to; the
    // header-only names come after them.
    let names = |t: &str| -> Vec<String> {
        value(t)["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let (old_names, new_names) = (names(&original), names(&reread));
    assert_eq!(new_names[..14], old_names[..14]);
    assert_eq!(new_names[14..16], ["Teal", "Maroon"]);
    assert_eq!(new_names[16..], old_names[14..]);
    assert_eq!(content(&reread), content(&edited));
    // The package reads back: every export within the .uexp, the .uexp's
    // end where the header's bulk data starts.
    let run = common::run(
        None,
        &[
            "inspect",
            out.to_str().unwrap(),
            "--engine",
            "5.7",
            "--json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    build_and_read_back(&out, &dir, &nanos, &expected_rows);

    // A string made longer: the export grows by the 4 bytes added.
    let st_source = sn2.join("Content/StringTables/ST_Attributes.uasset");
    let st = to_json_text(&st_source, "5.6", &sn2, &dir);
    let edited = st.replacen("Player {0} has died", "Player {0} was defeated", 1);
    let (run, out) = from_json_text(&edited, &sn2, &dir, "ST_Attributes.uasset");
    assert_eq!(run.code, 0, "{}", run.stdout);
    let old = std::fs::read(st_source.with_extension("uexp")).unwrap();
    let new = std::fs::read(out.with_extension("uexp")).unwrap();
    assert_eq!(new.len(), old.len() + 4);
    assert_eq!(
        content(&to_json_text(&out, "5.6", &sn2, &dir)),
        content(&edited)
    );

    // An array element added: a fourth key of the curve, at time 2.0.
    let cf_source = sn2.join("Content/Blueprints/Character/CF_MAccelerationConversionCurve.uasset");
    let cf = to_json_text(&cf_source, "5.6", &sn2, &dir);
    let keys = value_span(&cf, "Keys", 0);
    let items = array_items(&cf, keys);
    let third = items[2].clone();
    let copy = cf[third.clone()].replacen("\"Time\": 1.0", "\"Time\": 2.0", 1);
    let mut edited = cf.clone();
    edited.insert_str(third.end, &format!(", {copy}"));
    let (run, out) = from_json_text(&edited, &sn2, &dir, "CF_Curve.uasset");
    assert_eq!(run.code, 0, "{}", run.stdout);
    let reread = value(&to_json_text(&out, "5.6", &sn2, &dir));
    let float_curve = prop(&reread["exports"][0]["data"]["properties"], "FloatCurve");
    let keys = prop(float_curve, "Keys").as_array().unwrap();
    assert_eq!(keys.len(), 4);
    assert_eq!(keys[3]["Time"], json!(2.0));
    let old = std::fs::read(cf_source.with_extension("uexp")).unwrap();
    let new = std::fs::read(out.with_extension("uexp")).unwrap();
    assert_eq!(new.len(), old.len() + 27, "a RichCurveKey is 27 bytes");
}

/// A mod holding the edited DataTable builds; `verify` passes the
/// container, and `extract` gives back the edited export data byte for
/// byte, with the added names (its imports are placeholders: the corpus has
/// no 5.7 script objects, so the class cannot be named and the rows are not
/// decoded from the extracted package).
fn build_and_read_back(package: &Path, dir: &Path, game: &Path, rows: &[String]) {
    let repo = dir.join("EditedMod");
    let run = common::run(
        Some(dir),
        &[
            "new",
            "EditedMod",
            "--engine",
            "5.7",
            "--project",
            "NanosWorld",
            "--vcs",
            "none",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let chat = repo.join("Cooked/NanosWorld/Content/NanosWorld/Core/Chat");
    std::fs::create_dir_all(&chat).unwrap();
    for ext in ["uasset", "uexp"] {
        std::fs::copy(
            package.with_extension(ext),
            chat.join(format!("DT_ChatEntry.{ext}")),
        )
        .unwrap();
    }
    let run = common::run(Some(&repo), &["build", "--message-format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let utoc = common::files_with_ext(&repo.join("target"), &["utoc"]).remove(0);
    let run = common::run(None, &["verify", utoc.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let extracted = dir.join("extracted");
    let run = common::run(
        None,
        &[
            "extract",
            utoc.to_str().unwrap(),
            "-o",
            extracted.to_str().unwrap(),
            "--engine",
            "5.7",
            "--allow-unresolved",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let back = common::files_with_ext(&extracted, &["uasset"])
        .into_iter()
        .find(|p| p.file_stem().is_some_and(|s| s == "DT_ChatEntry"))
        .expect("extract wrote DT_ChatEntry");
    assert_eq!(
        std::fs::read(back.with_extension("uexp")).unwrap(),
        std::fs::read(package.with_extension("uexp")).unwrap()
    );
    let names = value(&to_json_text(&back, "5.7", game, dir))["names"].clone();
    for row in rows {
        assert!(names.as_array().unwrap().contains(&json!(row)), "{row}");
    }
}

/// The `error` diagnostic of a failed run (`--message-format json`).
fn error_of(run: &Run) -> Value {
    run.json()
        .into_iter()
        .find(|l| l["reason"] == "diagnostic" && l["level"] == "error")
        .unwrap_or_else(|| panic!("no error in {}", run.stdout))
}

/// Nothing but the inputs in `dir/out` (no output, no temporary).
fn assert_nothing_written(out: &Path) {
    let dir = out.parent().unwrap();
    let left: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "written: {left:?}");
}

#[test]
fn damaged_input_is_an_error_naming_where_and_writes_nothing() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("asset-json-damaged");
    let (nanos, sn2) = (corpus.join(NANOS), corpus.join(SN2));
    let source = nanos.join("Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset");
    let original = to_json_text(&source, "5.7", &nanos, &dir);

    // Another game's mappings: to-json keeps what does not decode as
    // bytes and warns (a DataTable's rows: `table-not-decoded`; a package
    // of which nothing decodes: `mappings-mismatch`); from-json of a
    // decoded document refuses them.
    let to_json_with = |package: &Path, engine: &str, mappings: &Path| {
        let run = json_command(
            package,
            &dir.join("wrong.json"),
            Some(engine),
            Some(mappings),
        );
        assert_eq!(run.code, 0, "{}", run.stdout);
        run.json()
            .into_iter()
            .filter(|l| l["level"] == "warning")
            .map(|l| l["code"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let enum_types = corpus.join("uassetapi/TestUE5_1/UnderlyingEnumTypes");
    assert_eq!(
        to_json_with(&enum_types.join("NewDataTable.uasset"), "5.1", &usmap(&sn2)),
        ["table-not-decoded"]
    );
    assert_eq!(
        to_json_with(
            &nanos.join("Content/NanosWorld/Core/A_EmptySound.uasset"),
            "5.7",
            &usmap(&enum_types)
        ),
        ["mappings-mismatch"]
    );
    let wrong = usmap(&enum_types);
    let json = dir.join("original.json");
    std::fs::write(&json, &original).unwrap();
    let target = dir.join("out/DT_ChatEntry.uasset");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let run = json_command(&json, &target, None, Some(&wrong));
    assert_eq!(run.code, 1, "{}", run.stdout);
    let error = error_of(&run);
    assert!(error["structure"][0]
        .as_str()
        .unwrap()
        .starts_with("exports[0].data"));
    assert_nothing_written(&target);
    // No mappings for an unversioned package: a usage error saying to give them.
    let run = json_command(&json, &target, None, None);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(error_of(&run)["code"], "usage");
    assert_nothing_written(&target);

    // Truncated property data: the .uexp cut in half.
    let cut = dir.join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    std::fs::copy(&source, cut.join("DT_ChatEntry.uasset")).unwrap();
    let uexp = std::fs::read(source.with_extension("uexp")).unwrap();
    std::fs::write(cut.join("DT_ChatEntry.uexp"), &uexp[..uexp.len() / 2]).unwrap();
    let cut_json = dir.join("out/cut.json");
    let run = json_command(
        &cut.join("DT_ChatEntry.uasset"),
        &cut_json,
        Some("5.7"),
        Some(&usmap(&nanos)),
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(error_of(&run)["file"]
        .as_str()
        .unwrap()
        .contains("DT_ChatEntry"));
    assert_nothing_written(&cut_json);

    // A Zen package (as a container stores it) is not read as legacy: a
    // usage error that says to extract it first.
    let zen_json = dir.join("out/zen.json");
    let run = json_command(
        &corpus.join("retoc/UE5.6/SM_Cube.uzenasset"),
        &zen_json,
        Some("5.6"),
        None,
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert_eq!(error_of(&run)["code"], "usage");
    assert_nothing_written(&zen_json);

    // A wrong type at each level: (the edit, the JSON path the error names).
    let size_at = original.find("\"Size\": ").unwrap();
    let float = value_span(&original, "Size", size_at);
    let size_value = float.clone();
    let properties = value_span(&original, "properties", 0);
    let cases: Vec<(String, &str)> = vec![
        (
            original.replacen("\"format\": 1", "\"format\": \"one\"", 1),
            "format",
        ),
        (
            original.replacen("\"format\": 1", "\"format\": 99", 1),
            "format",
        ),
        (
            format!(
                "{}5{}",
                &original[..properties.start],
                &original[properties.end..]
            ),
            "exports[0].data.properties",
        ),
        (
            format!(
                "{}\"abc\"{}",
                &original[..float.start],
                &original[float.end..]
            ),
            "exports[0].data.rows.Default.TextStyle.Font.Size",
        ),
        (
            format!(
                "{}{{\"Int\": 14}}{}",
                &original[..size_value.start],
                &original[size_value.end..]
            ),
            "exports[0].data.rows.Default.TextStyle.Font.Size",
        ),
        (
            original.replacen("\"Size\": ", "\"Sise\": ", 1),
            "exports[0].data.rows.Default.TextStyle.Font",
        ),
        (
            original.replacen(
                "\"class\": \"/Script/Engine.DataTable\"",
                "\"class\": \"/Script/Engine.CurveTable\"",
                1,
            ),
            "imports[1].class",
        ),
        (
            original.replacen(
                "\"class\": \"/Script/Engine.DataTable\",\n      \"data\"",
                "\"class\": \"/Script/Engine.CurveTable\",\n      \"data\"",
                1,
            ),
            "exports[0].class",
        ),
        (
            original.replacen("\"offset\": 3355", "\"offset\": 1000000000000000", 1),
            "uexp_runs[0].offset",
        ),
    ];
    for (i, (text, path)) in cases.iter().enumerate() {
        assert!(text != &original, "case {i} edits the document");
        let (run, out) = from_json_text(text, &nanos, &dir, "DT_ChatEntry.uasset");
        assert_eq!(run.code, 1, "case {i}: {}", run.stdout);
        let error = error_of(&run);
        let structure: Vec<&str> = error["structure"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(
            structure.iter().any(|s| s.starts_with(path)),
            "case {i}: {path} not in {structure:?}"
        );
        assert_nothing_written(&out);
    }
}

/// A reference to an asset the package does not import: without an entry
/// in `imports`, an error naming where, nothing written; with the entry
/// appended (path and class), the import and its package's are added after
/// the package's imports and the reference is written as the new import,
/// the only bytes of the `.uexp` that change.
#[test]
fn from_json_adds_the_imports_an_edit_refers_to() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = common::temp_dir("asset-json-imports");
    let nanos = corpus.join(NANOS);
    let source = nanos.join("Content/NanosWorld/Core/Chat/DT_ChatEntry.uasset");
    let original = to_json_text(&source, "5.7", &nanos, &dir);
    let roboto = "\"/Game/NanosWorld/UI/Fonts/Roboto/Font_Roboto.Font_Roboto\"";
    let mono = "/Game/NanosWorld/UI/Fonts/Mono/Font_Mono.Font_Mono";
    // The first row's font (the first reference after `rows`).
    let rows_at = value_span(&original, "rows", 0).start;
    let at = rows_at + original[rows_at..].find(roboto).unwrap();
    let mut edited = original.clone();
    edited.replace_range(at..at + roboto.len(), &format!("\"{mono}\""));

    let (run, out) = from_json_text(&edited, &nanos, &dir, "DT_ChatEntry.uasset");
    assert_eq!(run.code, 1, "{}", run.stdout);
    let error = error_of(&run);
    assert!(
        error["structure"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("exports[0].data")),
        "{error}"
    );
    assert_nothing_written(&out);

    let imports = value_span(&edited, "imports", 0);
    let last = edited[..imports.end - 1].trim_end().len();
    edited.insert_str(
        last,
        &format!(",\n    {{\n      \"path\": \"{mono}\",\n      \"class\": \"/Script/Engine.Font\"\n    }}"),
    );
    let (run, out) = from_json_text(&edited, &nanos, &dir, "DT_ChatEntry.uasset");
    assert_eq!(run.code, 0, "{}", run.stdout);
    let (old, new) = (
        value(&original),
        value(&to_json_text(&out, "5.7", &nanos, &dir)),
    );
    let (old_imports, new_imports) = (
        old["imports"].as_array().unwrap(),
        new["imports"].as_array().unwrap(),
    );
    let n = old_imports.len();
    assert_eq!(new_imports[..n], old_imports[..]);
    assert_eq!(
        new_imports[n..],
        [
            json!({"path": "/Game/NanosWorld/UI/Fonts/Mono/Font_Mono", "class": "/Script/CoreUObject.Package"}),
            json!({"path": mono, "class": "/Script/Engine.Font"}),
        ]
    );
    let rows = row_names(&original, &nanos);
    assert_eq!(font_of(&new, &rows[0])["FontObject"], json!(mono));
    for row in &rows[1..] {
        assert_eq!(font_of(&new, row), font_of(&old, row), "{row}");
    }
    // The reference (-3, import 2) becomes the new import's index.
    let old_uexp = std::fs::read(source.with_extension("uexp")).unwrap();
    let new_uexp = std::fs::read(out.with_extension("uexp")).unwrap();
    let changed = differing(&old_uexp, &new_uexp);
    let first = *changed.first().expect("the reference changes");
    let at = (first.saturating_sub(3)..=first)
        .find(|&p| old_uexp[p..p + 4] == (-3i32).to_le_bytes())
        .expect("the old reference");
    assert!(
        changed.iter().all(|&p| (at..at + 4).contains(&p)),
        "{changed:?}"
    );
    assert_eq!(new_uexp[at..at + 4], (-(n as i32) - 2).to_le_bytes());
    build_and_read_back(&out, &dir, &nanos, &rows);
}
