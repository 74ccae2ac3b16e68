//! ARCHITECTURE.md's layer list is the truth about module dependencies:
//! every module of the library is listed, and its code (outside test
//! modules and comments) names only modules of lower layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, from the fenced block after "## Layers".
fn layers(architecture: &str) -> Vec<Vec<String>> {
    let section = architecture
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the Layers section has a ```text block");
    block
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect())
        .filter(|layer: &Vec<String>| !layer.is_empty())
        .collect()
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    if !path.exists() {
        return Vec::new();
    }
    walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect()
}

/// The code of a file without comments and without its test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]" {
            if let Some(next) = lines.peek() {
                if next.trim_start().starts_with("mod ") {
                    break;
                }
            }
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" // ").next().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// The library modules each module's code names (`crate::x`, or `x::` inside `use crate::{…}`).
fn dependencies(src: &Path, modules: &BTreeSet<String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for module in modules {
        let path = if src.join(module).is_dir() {
            src.join(module)
        } else {
            src.join(format!("{module}.rs"))
        };
        let mut used = BTreeSet::new();
        for file in rust_files(&path) {
            let text = code(&std::fs::read_to_string(&file).unwrap());
            for (i, _) in text.match_indices("crate::") {
                let rest = &text[i + "crate::".len()..];
                if let Some(group) = rest.strip_prefix('{') {
                    let group = &group[..group.find('}').unwrap_or(group.len())];
                    for item in group.split(',') {
                        let name = item.trim().split("::").next().unwrap_or("");
                        if modules.contains(name) && item.contains("::") {
                            used.insert(name.to_string());
                        }
                    }
                    continue;
                }
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if modules.contains(&name) {
                    used.insert(name);
                }
            }
        }
        used.remove(module);
        out.insert(module.clone(), used);
    }
    out
}

#[test]
fn module_dependencies_point_down() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let layers = layers(&std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap());
    let src = root.join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let modules: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    assert!(
        modules.len() > 10,
        "lib.rs declares its modules: {modules:?}"
    );

    let mut layer_of = BTreeMap::new();
    for (i, layer) in layers.iter().enumerate() {
        for module in layer {
            assert!(
                layer_of.insert(module.clone(), i).is_none(),
                "`{module}` is listed twice in ARCHITECTURE.md's layers"
            );
        }
    }
    let listed: BTreeSet<String> = layer_of.keys().cloned().collect();
    assert_eq!(
        listed, modules,
        "ARCHITECTURE.md's layers list exactly the modules of src/lib.rs"
    );

    let mut wrong = Vec::new();
    for (module, used) in dependencies(&src, &modules) {
        for dependency in used {
            if layer_of[&dependency] >= layer_of[&module] {
                wrong.push(format!(
                    "`{module}` (layer {}) uses `{dependency}` (layer {})",
                    layer_of[&module] + 1,
                    layer_of[&dependency] + 1
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies must point down:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_uses_and_ignores_comments_and_tests() {
    let text = "use crate::{binary::Reader, error::Result};\n\
                // crate::build in a comment\n\
                fn f() { crate::hash::x(); } // crate::zen trailing\n\
                #[cfg(test)]\nmod tests { use crate::release; }\n";
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("a.rs"), text).unwrap();
    let modules: BTreeSet<String> = ["a", "binary", "error", "hash", "build", "zen", "release"]
        .map(String::from)
        .into();
    let deps = dependencies(src, &modules);
    let expected: BTreeSet<String> = ["binary", "error", "hash"].map(String::from).into();
    assert_eq!(deps["a"], expected);
}
