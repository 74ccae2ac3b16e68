//! ARCHITECTURE.md's layer list is the truth about module dependencies:
//! every module of the library is listed, and its code (outside test
//! modules and comments) names only modules of lower layers. Inside a
//! folder, its modules do not use each other in a circle. Unsafe code sits
//! only in the files listed for it, each block under a `// SAFETY:` note.
//! Every backticked module path and file path of ARCHITECTURE.md exists.

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
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("pub(crate) mod "))
        })
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

/// Circles inside a folder that are known and not yet removed, one entry
/// per circle as `folder: member, member, ...` (members sorted). A circle
/// not listed here fails the test, and so does an entry whose circle is
/// gone (take it off the list): the list only shrinks.
/// Issue 54 names all but the last two.
const KNOWN_CIRCLES: &[&str] = &[
    "extract: classes, imports",
    "fixups/marvel_rivals: carrier, lod_info, skeletal",
    "iostore: shader_library, writer",
    "legacy: bulk_data, files",
];

/// The modules a module file declares (`mod x;`, `pub mod x;`,
/// `pub(crate) mod x;`, ...), test modules left out.
fn declared_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_cfg_test = false;
    for line in text.lines() {
        let trimmed = line.trim();
        let declared = trimmed
            .strip_prefix("pub ")
            .or_else(|| trimmed.strip_prefix("pub(crate) "))
            .or_else(|| trimmed.strip_prefix("pub(super) "))
            .unwrap_or(trimmed)
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declared.filter(|_| !after_cfg_test) {
            out.push(name.trim().to_string());
        }
        after_cfg_test = trimmed == "#[cfg(test)]";
    }
    out
}

/// Every whole path a text starting just after `crate`, `super` or `self`
/// (whose word `head` is) names, `use` groups expanded:
/// `super::{a::X, b::{Y, Z}}` gives `super a X`, `super b Y`, `super b Z`.
fn paths_at(head: &str, text: &str) -> Vec<Vec<String>> {
    fn tree(s: &[u8], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let skip_space = |i: &mut usize| {
            while *i < s.len() && s[*i].is_ascii_whitespace() {
                *i += 1;
            }
        };
        loop {
            skip_space(i);
            if s.get(*i) == Some(&b'{') {
                *i += 1;
                loop {
                    skip_space(i);
                    if *i >= s.len() || s[*i] == b'}' {
                        *i += 1;
                        return;
                    }
                    tree(s, i, path.clone(), out);
                    // Past an `as` rename to the next item or the end.
                    while *i < s.len() && s[*i] != b',' && s[*i] != b'}' {
                        *i += 1;
                    }
                    if s.get(*i) == Some(&b',') {
                        *i += 1;
                    }
                }
            }
            let start = *i;
            while *i < s.len() && (s[*i].is_ascii_alphanumeric() || s[*i] == b'_') {
                *i += 1;
            }
            let ident = String::from_utf8_lossy(&s[start..*i]).into_owned();
            // `self` in a group is the group's own path.
            if !ident.is_empty() && ident != "self" {
                path.push(ident.clone());
            }
            if ident.is_empty() || !s[*i..].starts_with(b"::") {
                out.push(path);
                return;
            }
            *i += 2;
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    tree(text.as_bytes(), &mut i, vec![head.to_string()], &mut out);
    out
}

/// The absolute module paths (below `crate`) that the code of a file whose
/// own module is `module` names through `crate::`, `super::` and `self::`.
fn named_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for head in ["crate", "super", "self"] {
        let marker = format!("{head}::");
        for (at, _) in code.match_indices(&marker) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            for path in paths_at(head, &code[at + marker.len()..]) {
                let mut resolved: Vec<String> = match head {
                    "crate" => Vec::new(),
                    _ => module.to_vec(),
                };
                let mut rest = path.into_iter().skip(1).peekable();
                if head == "super" {
                    resolved.pop();
                }
                while rest.peek().is_some_and(|s| s == "super") {
                    rest.next();
                    resolved.pop();
                }
                resolved.extend(rest);
                out.push(resolved);
            }
        }
    }
    out
}

/// A source file's module path below `crate` (`build/cache/index.rs` →
/// `build cache index`; `mod.rs`, `lib.rs` and `main.rs` are their folder's).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The `use` circles between the modules of each folder under `src` (its
/// `mod.rs` or `<folder>.rs` declares them; that file itself is the folder's
/// face, which may use its modules and be used by them): one line per
/// circle, `folder: member, member, ...`.
fn folder_circles(src: &Path) -> Vec<String> {
    let mut circles = Vec::new();
    let folders = walkdir::WalkDir::new(src)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.is_dir());
    for folder in folders {
        let owner = [folder.join("mod.rs"), folder.with_extension("rs")]
            .into_iter()
            .find(|p| p.is_file());
        let Some(owner) = owner else { continue };
        let members = declared_modules(&std::fs::read_to_string(&owner).unwrap());
        let base = module_of(src, &owner);
        let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for member in &members {
            let mut files = rust_files(&folder.join(format!("{member}.rs")));
            files.extend(rust_files(&folder.join(member)));
            for file in files {
                let text = code(&std::fs::read_to_string(&file).unwrap());
                for path in named_paths(&text, &module_of(src, &file)) {
                    if !path.starts_with(&base) {
                        continue;
                    }
                    if let Some(to) = path
                        .get(base.len())
                        .and_then(|n| members.iter().find(|m| *m == n))
                    {
                        if to != member {
                            edges.entry(member).or_default().insert(to);
                        }
                    }
                }
            }
        }
        let reach = |from: &str| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from];
            while let Some(at) = stack.pop() {
                for next in edges.get(at).into_iter().flatten() {
                    if seen.insert(*next) {
                        stack.push(next);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&str, BTreeSet<&str>> =
            members.iter().map(|m| (m.as_str(), reach(m))).collect();
        let mut placed = BTreeSet::new();
        for member in &members {
            if placed.contains(member.as_str())
                || !reaches[member.as_str()].contains(member.as_str())
            {
                continue;
            }
            let circle: BTreeSet<&str> = reaches[member.as_str()]
                .iter()
                .copied()
                .filter(|other| reaches[other].contains(member.as_str()))
                .collect();
            placed.extend(circle.iter().copied());
            let folder_name = folder
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            circles.push(format!(
                "{folder_name}: {}",
                circle.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    circles.sort();
    circles
}

#[test]
fn no_use_circle_inside_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = folder_circles(&src);
    let new: Vec<&String> = found
        .iter()
        .filter(|c| !KNOWN_CIRCLES.contains(&c.as_str()))
        .collect();
    let gone: Vec<&&str> = KNOWN_CIRCLES
        .iter()
        .filter(|k| !found.iter().any(|c| c == **k))
        .collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "modules of one folder must not use each other in a circle: move what they share \
         into a module both use.\nnew circles:\n{}\nknown circles that are gone (take them off \
         KNOWN_CIRCLES):\n{}",
        new.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter().map(|c| **c).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_circle_finder_reads_nested_groups_and_every_declaration() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let folder = src.join("f");
    std::fs::create_dir_all(folder.join("d")).unwrap();
    let files = [
        (
            "f/mod.rs",
            "pub(crate) mod a;\nmod b;\npub mod c;\npub(crate) mod d;\n#[cfg(test)]\nmod tests;\n",
        ),
        ("f/a.rs", "use super::{c::X, b::{self as bee, Y}};\n"),
        ("f/b.rs", "fn f() { crate::f::a::g(); }\n"),
        (
            "f/c.rs",
            "// super::a in a comment\nuse super::super::f::d::Z;\n",
        ),
        ("f/d/mod.rs", "mod e;\n"),
        (
            "f/d/e.rs",
            "use super::super::c::W;\n#[cfg(test)]\nmod tests { use crate::f::a; }\n",
        ),
    ];
    for (path, text) in files {
        std::fs::write(src.join(path), text).unwrap();
    }
    assert_eq!(
        paths_at("super", "{c::X, b::{self as bee, Y}};"),
        [
            vec!["super", "c", "X"],
            vec!["super", "b"],
            vec!["super", "b", "Y"]
        ]
    );
    assert_eq!(folder_circles(src), ["f: a, b", "f: c, d"]);
}

/// The files that may hold `unsafe` code, each with what its unsafe code
/// is about: one family of system calls (or one unchecked conversion) per
/// file, so that a reader checking them reads one contract at a time. A
/// file with unsafe code missing here fails the test, and so does an entry
/// whose file has none left.
const UNSAFE_FILES: &[(&str, &str)] = &[
    (
        "arena.rs",
        "paths kept as their encoded bytes (from_encoded_bytes_unchecked)",
    ),
    (
        "build/mod.rs",
        "the allocator's tuning (malloc_trim, mallopt)",
    ),
    (
        "iostore/directory_index.rs",
        "names kept as UTF-8 bytes (from_utf8_unchecked)",
    ),
    ("main.rs", "signal dispositions (signal)"),
    (
        "publish/page_cache.rs",
        "page-cache hints (sync_file_range, posix_fadvise)",
    ),
    ("publish/stamp.rs", "file status (fstatat)"),
    (
        "publish/unnamed_folder.rs",
        "files without a name (openat O_TMPFILE, linkat, from_raw_fd)",
    ),
];

/// The 1-based lines of a file's code (outside comments and its test
/// module) that open unsafe code (`unsafe {`, `unsafe fn`, `unsafe impl`,
/// `unsafe extern`), each with whether a `// SAFETY:` note is among the
/// comments of its statement: the lines above it back to the previous
/// statement, block or blank line.
fn unsafe_blocks(text: &str) -> Vec<(usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = line.split(" // ").next().unwrap_or(line);
        let opens = code.match_indices("unsafe").any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + "unsafe".len()..].trim_start();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '"')
                && ["{", "fn ", "impl", "extern"]
                    .iter()
                    .any(|opening| after.starts_with(opening))
        });
        if !opens {
            continue;
        }
        let mut noted = false;
        for above in lines[..i].iter().rev().map(|l| l.trim()) {
            if above.starts_with("//") {
                noted |= above.starts_with("// SAFETY:");
                continue;
            }
            if above.is_empty()
                || above.ends_with(';')
                || above.ends_with('{')
                || above.ends_with('}')
            {
                break;
            }
        }
        out.push((i + 1, noted));
    }
    out
}

/// Every file under `src` with unsafe code, as its path below `src`, with
/// the lines of its unsafe code that have no `// SAFETY:` note.
fn unsafe_files(src: &Path) -> BTreeMap<String, Vec<usize>> {
    let mut out = BTreeMap::new();
    for file in rust_files(src) {
        let found = unsafe_blocks(&std::fs::read_to_string(&file).unwrap());
        if found.is_empty() {
            continue;
        }
        let name = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let unnoted = found
            .into_iter()
            .filter(|(_, noted)| !noted)
            .map(|(line, _)| line)
            .collect();
        out.insert(name, unnoted);
    }
    out
}

#[test]
fn unsafe_code_sits_in_its_own_files_each_with_a_safety_note() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = unsafe_files(&src);
    let listed: BTreeSet<&str> = UNSAFE_FILES.iter().map(|(file, _)| *file).collect();
    let unlisted: Vec<&String> = found
        .keys()
        .filter(|f| !listed.contains(f.as_str()))
        .collect();
    let gone: Vec<&&str> = listed.iter().filter(|f| !found.contains_key(**f)).collect();
    let unnoted: Vec<String> = found
        .iter()
        .flat_map(|(file, lines)| lines.iter().map(move |line| format!("src/{file}:{line}")))
        .collect();
    assert!(
        unlisted.is_empty() && gone.is_empty() && unnoted.is_empty(),
        "unsafe code goes in a file about one family of system calls, listed in UNSAFE_FILES, \
         each block under a `// SAFETY:` note saying why it holds.\nfiles with unsafe code not \
         listed (move it into the file of its family, or list a new one):\n{}\nlisted files \
         without unsafe code (take them off the list):\n{}\nunsafe code without a SAFETY note:\n{}",
        unlisted
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter().map(|f| **f).collect::<Vec<_>>().join("\n"),
        unnoted.join("\n")
    );
}

#[test]
fn the_unsafe_finder_sees_blocks_and_their_notes_only_in_code() {
    let text = "fn a() {\n\
                \x20   // SAFETY: noted.\n\
                \x20   unsafe { f() };\n\
                \x20   let x = g();\n\
                \x20   unsafe { h() };\n\
                \x20   // SAFETY: a note above a chained call.\n\
                \x20   v.iter()\n\
                \x20       .map(|b| unsafe { k(b) })\n\
                \x20   // unsafe { in a comment }\n\
                \x20   let s = \"unsafe-output\"; // unsafe { trailing }\n\
                }\n\
                unsafe fn raw() {}\n\
                #[cfg(test)]\nmod tests { fn t() { unsafe { z() } } }\n";
    assert_eq!(
        unsafe_blocks(text),
        [(3, true), (5, false), (8, true), (12, false)]
    );
}

/// The file of module `segments` under `src` (`a/b.rs` or `a/b/mod.rs`).
fn module_file(src: &Path, segments: &[&str]) -> Option<PathBuf> {
    let base = segments
        .iter()
        .fold(src.to_path_buf(), |path, segment| path.join(segment));
    [base.with_extension("rs"), base.join("mod.rs")]
        .into_iter()
        .find(|p| p.is_file())
}

/// Whether `name` is declared in `text` (an item, a variant or field at a
/// line's start) or re-exported by one of its `pub use` statements.
fn declares(text: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let words = |s: &str| -> bool { s.split(|c: char| !is_word(c)).any(|w| w == name) };
    let kinds = [
        "fn", "struct", "enum", "trait", "const", "type", "static", "mod", "union",
    ];
    text.lines().any(|line| {
        let mut tokens = line.split(|c: char| !is_word(c)).filter(|t| !t.is_empty());
        let first_real = tokens.find(|t| !["pub", "crate", "super", "async", "unsafe"].contains(t));
        match first_real {
            Some(kind) if kinds.contains(&kind) => tokens.next() == Some(name),
            Some(word) => word == name && line.trim_start().starts_with(name),
            None => false,
        }
    }) || text
        .split("pub use ")
        .skip(1)
        .filter_map(|rest| rest.split(';').next())
        .any(words)
}

/// The backticked paths of `text` (ARCHITECTURE.md) that name nothing: a
/// module path (`patch::merge`, `crate::zen::convert::import_reference`,
/// `publish::output_dir::OutputDir`) whose modules do not exist or whose
/// item is not declared there, or a file path (`src/…`, `tests/…`,
/// `docs/…`) that is not in the repository. A path that does not start at
/// one of the library's modules (`serde::Serialize`) is not checked.
fn stale_paths(root: &Path, text: &str, modules: &BTreeSet<String>) -> Vec<String> {
    let src = root.join("src");
    let mut stale = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        let path = quoted.trim().trim_end_matches("()");
        let is_file_path = [
            "src/",
            "tests/",
            "docs/",
            "templates/",
            "benches/",
            "examples/",
            ".ci/",
        ]
        .iter()
        .any(|p| path.starts_with(p))
            && !path.contains(['*', ' ', '<', '…']);
        if is_file_path {
            if !root.join(path.trim_end_matches('/')).exists() {
                stale.push(format!("`{path}`: no such file or folder"));
            }
            continue;
        }
        let path = path.strip_prefix("crate::").unwrap_or(path);
        let segments: Vec<&str> = path.split("::").collect();
        let is_module_path = segments.len() > 1
            && modules.contains(segments[0])
            && segments
                .iter()
                .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if !is_module_path {
            continue;
        }
        let mut depth = segments.len();
        while depth > 0 && module_file(&src, &segments[..depth]).is_none() {
            depth -= 1;
        }
        let items = &segments[depth..];
        let Some(file) = module_file(&src, &segments[..depth]).filter(|_| items.len() <= 2) else {
            stale.push(format!("`{path}`: no such module"));
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        if let Some(item) = items.first() {
            if !declares(&text, item) {
                stale.push(format!(
                    "`{path}`: `{item}` is not declared in {}",
                    file.display()
                ));
                continue;
            }
        }
        if let Some(member) = items.get(1) {
            // A variant, field or method: somewhere in the module's folder.
            let folder = file.parent().unwrap();
            let found = rust_files(folder)
                .iter()
                .any(|f| declares(&std::fs::read_to_string(f).unwrap(), member));
            if !found {
                stale.push(format!(
                    "`{path}`: `{member}` is declared nowhere in {}",
                    folder.display()
                ));
            }
        }
    }
    stale
}

fn library_modules(root: &Path) -> BTreeSet<String> {
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    declared_modules(&lib).into_iter().collect()
}

#[test]
fn every_path_the_map_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let stale = stale_paths(root, &text, &library_modules(root));
    assert!(
        stale.is_empty(),
        "ARCHITECTURE.md names what the tree does not have:\n  {}",
        stale.join("\n  ")
    );
}

#[test]
fn the_path_checker_sees_a_stale_module_item_and_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = library_modules(root);
    let fine = "`patch::merge`, `crate::patch::changes::ModCopies`, `zen::ExportData::Unread`, \
                `src/build/staged.rs`, `serde::Serialize`, `patches/**/*.toml`";
    assert_eq!(stale_paths(root, fine, &modules), Vec::<String>::new());
    let planted = "`patch::nothing_here`, `patch::changes::NoSuchType`, \
                   `patch::changes::ModCopies::no_such_method`, `src/no_such_file.rs`";
    assert_eq!(stale_paths(root, planted, &modules).len(), 4);
}
