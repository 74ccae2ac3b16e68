//! `--message-format json` against its documented schema
//! (`docs/message-format.schema.json`): every JSON line the policy tests
//! of `cli_output` see is validated here ([`validate`]); the schema's code
//! list is `zenpak::codes::ALL`; a build's events come in the same order on
//! every run; usage errors keep clap's argument and suggestion.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use super::cli_output::json;
use crate::common::Run;

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/message-format.schema.json");
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read the schema"))
            .expect("the schema is JSON")
    })
}

/// Panics with every violation when `line` does not match the schema.
pub(crate) fn validate(line: &Value) {
    let mut errors = Vec::new();
    check(schema(), schema(), line, "$", &mut errors);
    // `message` is the finding alone: what to do is `hint`.
    if let Some(message) = line["message"].as_str() {
        if message.contains("\n  hint:") {
            errors.push("`message` carries hint text".to_string());
        }
    }
    assert!(
        errors.is_empty(),
        "a JSON line does not match docs/message-format.schema.json: {errors:?}\n{line}"
    );
}

/// The subset of JSON Schema (2020-12) the schema file uses: `type`,
/// `enum`, `const`, `required`, `properties`, `additionalProperties`
/// (boolean), `items`, `minimum`, `minLength`, `allOf`, `if`/`then` and
/// local `$ref`s. A keyword outside it fails the check, so the file cannot
/// grow past what is checked.
fn check(root: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        errors.push(format!("{at}: schema is not an object"));
        return;
    };
    for (keyword, rule) in schema {
        match keyword.as_str() {
            "$schema" | "$id" | "title" | "description" | "$defs" => {}
            "$ref" => {
                let name = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/$defs/"))
                    .expect("local $ref");
                check(root, &root["$defs"][name], value, at, errors);
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => panic!("bad type rule"),
                };
                let fits = types.iter().any(|t| match *t {
                    "object" => value.is_object(),
                    "array" => value.is_array(),
                    "string" => value.is_string(),
                    "integer" => value.is_i64() || value.is_u64(),
                    "number" => value.is_number(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    other => panic!("unknown type {other}"),
                });
                if !fits {
                    errors.push(format!("{at}: {value} is not of type {types:?}"));
                }
            }
            "enum" => {
                if !rule.as_array().unwrap().contains(value) {
                    errors.push(format!("{at}: {value} is not one of the listed values"));
                }
            }
            "const" => {
                if rule != value {
                    errors.push(format!("{at}: {value} is not {rule}"));
                }
            }
            "minimum" => {
                if let Some(n) = value.as_f64() {
                    if n < rule.as_f64().unwrap() {
                        errors.push(format!("{at}: {n} is below {rule}"));
                    }
                }
            }
            "minLength" => {
                if let Some(s) = value.as_str() {
                    if (s.chars().count() as u64) < rule.as_u64().unwrap() {
                        errors.push(format!("{at}: `{s}` is too short"));
                    }
                }
            }
            "required" => {
                if let Some(object) = value.as_object() {
                    for key in rule.as_array().unwrap() {
                        if !object.contains_key(key.as_str().unwrap()) {
                            errors.push(format!("{at}: `{key}` is missing"));
                        }
                    }
                }
            }
            "properties" => {
                if let Some(object) = value.as_object() {
                    for (key, sub) in rule.as_object().unwrap() {
                        if let Some(v) = object.get(key) {
                            check(root, sub, v, &format!("{at}.{key}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                let allowed = rule
                    .as_bool()
                    .expect("additionalProperties is a boolean here");
                if let (false, Some(object)) = (allowed, value.as_object()) {
                    let known = schema.get("properties").and_then(Value::as_object);
                    for key in object.keys() {
                        if !known.is_some_and(|k| k.contains_key(key)) {
                            errors.push(format!("{at}: `{key}` is not a documented field"));
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        check(root, rule, item, &format!("{at}[{i}]"), errors);
                    }
                }
            }
            "allOf" => {
                for sub in rule.as_array().unwrap() {
                    check(root, sub, value, at, errors);
                }
            }
            "if" => {
                let mut probe = Vec::new();
                check(root, rule, value, at, &mut probe);
                if probe.is_empty() {
                    if let Some(then) = schema.get("then") {
                        check(root, then, value, at, errors);
                    }
                }
            }
            "then" => {}
            other => panic!("the schema uses `{other}`, which this checker does not know"),
        }
    }
}

#[test]
fn the_schema_lists_exactly_the_codes_of_zenpak_codes() {
    let listed: Vec<&str> = schema()["$defs"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let codes: Vec<&str> = zenpak::codes::ALL.iter().map(|c| c.name).collect();
    assert_eq!(listed, codes);
}

#[test]
fn the_checker_rejects_what_the_schema_forbids() {
    let good = serde_json::json!({
        "reason": "diagnostic", "level": "warning", "code": "stray-file", "message": "m",
        "file": null, "structure": [], "offset": null, "line": null, "column": null, "hint": null
    });
    validate(&good);
    for (key, bad) in [
        ("code", serde_json::json!("no-such-code")),
        ("level", serde_json::json!("fatal")),
        ("offset", serde_json::json!("12")),
        ("undocumented", serde_json::json!(1)),
    ] {
        let mut line = good.clone();
        line[key] = bad;
        let mut errors = Vec::new();
        check(schema(), schema(), &line, "$", &mut errors);
        assert!(!errors.is_empty(), "{key}: accepted {line}");
    }
    let mut errors = Vec::new();
    check(
        schema(),
        schema(),
        &serde_json::json!({"reason": "no-such-reason"}),
        "$",
        &mut errors,
    );
    assert!(!errors.is_empty());
}

/// A 5.6 mod of the corpus's 36 SN2 packages (more than one batch of the
/// build's pool on any machine here).
fn sn2_mod(corpus: &Path, dir: &Path) -> std::path::PathBuf {
    let repo = dir.join("sn2");
    super::cli_output::copy_dir(
        &corpus.join("uassetapi/TestManyAssets/SN2"),
        &repo.join("Cooked/SN2"),
    );
    std::fs::write(
        repo.join("mod.toml"),
        "[mod]\nname = \"Many\"\nversion = \"0.1.0\"\n\n[game]\nengine = \"5.6\"\nproject = \"SN2\"\n\n[content]\nroot = \"Cooked\"\nexclude = [\"**/*.usmap\"]\n",
    )
    .unwrap();
    repo
}

#[test]
fn build_events_come_in_package_path_order_on_every_run() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = sn2_mod(&corpus, tmp.path());
    let events = |run: &Run| -> Vec<String> {
        run.json()
            .iter()
            .filter(|l| l["reason"] != "build-finished" && l["reason"] != "finished")
            .map(|l| format!("{}|{}|{}", l["reason"], l["path"], l["code"]))
            .collect()
    };
    let first = json(&repo, &["build", "--force"], 0);
    let packages = first.lines_of("package");
    let paths: Vec<&str> = packages
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert!(paths.len() > 32, "{} packages", paths.len());
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "package lines in package-path order");
    for _ in 0..2 {
        let again = json(&repo, &["build", "--force"], 0);
        assert_eq!(
            events(&first),
            events(&again),
            "the same events in the same order"
        );
    }
    // Up to date: the chunks it holds, not 0.
    let built = |run: &Run| run.line_of("build-finished");
    let fresh = json(&repo, &["build"], 0);
    assert_eq!(built(&fresh)["up_to_date"], true);
    assert_eq!(built(&fresh)["chunks"], built(&first)["chunks"]);
    assert!(built(&fresh)["chunks"].as_u64().unwrap() > 32);
}

#[test]
fn usage_errors_keep_the_argument_and_the_suggestion() {
    let tmp = tempfile::tempdir().unwrap();
    let lines = json(tmp.path(), &["biuld"], 2).json();
    let d = &lines[0];
    assert_eq!(d["code"], "usage");
    assert_eq!(d["argument"], "biuld");
    assert_eq!(d["suggestion"], "build");
    let lines = json(tmp.path(), &["build", "--frce"], 2).json();
    assert_eq!(lines[0]["argument"], "--frce");
    assert_eq!(lines[0]["suggestion"], "--force");
    assert!(lines[0]["usage"]
        .as_str()
        .is_some_and(|u| u.starts_with("zenpak build")));
    let lines = json(tmp.path(), &["completions", "tcsh"], 2).json();
    let valid: Vec<&str> = lines[0]["valid_values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        valid.contains(&"bash") && valid.contains(&"zsh"),
        "{valid:?}"
    );
}

/// A 5.1 package among 5.6 ones: a `foreign-package` error on that file
/// (exit 1, the work failed), from `build` and `check` alike, not a manifest
/// error telling the modder to change `[game] engine` (exit 2).
#[test]
fn a_foreign_package_is_named_on_its_file() {
    let Some(corpus) = crate::common::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let repo = sn2_mod(&corpus, tmp.path());
    let clay = corpus.join("uassetapi/TestManyAssets/Clay/Clay/Content/FirstPerson/Blueprints");
    let release = |p: &Path| crate::common::engine_of(&corpus, p).map(|v| v.as_str());
    assert_eq!(release(&clay.join("Boomerang.uasset")), Some("5.1"));
    let foreign = repo.join("Cooked/SN2/Content/Foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    for ext in ["uasset", "uexp"] {
        std::fs::copy(
            clay.join(format!("Boomerang.{ext}")),
            foreign.join(format!("Boomerang.{ext}")),
        )
        .unwrap();
    }
    for command in ["build", "check"] {
        let errors = json(&repo, &[command], 1).diagnostics("error");
        let named: Vec<&Value> = errors
            .iter()
            .filter(|l| l["code"] == "foreign-package")
            .collect();
        assert_eq!(named.len(), 1, "{command}: {errors:?}");
        assert!(named[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("Foreign/Boomerang.uasset"));
        assert!(named[0]["hint"].is_string());
        // No manifest error, and no raw parse error on a file.
        let raw =
            |l: &Value| l["code"] == "usage" || (l["code"] == "format" && l["file"].is_string());
        assert!(!errors.iter().any(raw), "{command}: {errors:?}");
    }
}
