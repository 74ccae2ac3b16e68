//! Every command the README's command table, the README's `zenpak ...`
//! snippets and the `--help` texts (their backticked `zenpak ...` and their
//! examples) name exists: `zenpak <command> --help` exits 0 (issue 27, item 6).

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::run;

/// The command words at the start of `text` (after `zenpak `): the
/// lowercase words before the first placeholder, option or file name
/// (`classic consolidate MAP` gives `classic consolidate`).
fn command_words(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .take_while(|w| {
            !w.is_empty()
                && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                && !w.starts_with('-')
        })
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The commands named as `` `zenpak X` `` in `text`.
fn backticked(text: &str, found: &mut BTreeSet<String>) {
    for piece in text.split("`zenpak ").skip(1) {
        let span = piece.split('`').next().unwrap_or("");
        found.extend(command_words(span));
    }
}

fn help(args: &[&str]) -> String {
    let help = run(None, args);
    help.assert_code_for(0, format_args!("zenpak {args:?}"));
    help.stdout
}

#[test]
fn every_command_the_readme_and_help_name_exists() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut named = BTreeSet::new();
    // The command table: its first column's backticked spans.
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|l| !l.starts_with("| command |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(table.len() > 10, "README has its command table");
    for row in table {
        let first = row.split('|').nth(1).unwrap();
        for span in first.split('`').skip(1).step_by(2) {
            named.extend(command_words(span));
        }
    }
    backticked(&readme, &mut named);

    // The help texts: the top level's and every command's.
    let top = help(&["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() > 10, "{top}");
    let mut texts = vec![top];
    for command in &commands {
        texts.push(help(&[command, "--help"]));
    }
    for text in &texts {
        backticked(text, &mut named);
        // Examples: every `zenpak ...` on the lines after `Examples:`.
        for line in text
            .lines()
            .skip_while(|l| !l.starts_with("Examples:"))
            .skip(1)
        {
            for piece in line.split(" zenpak ").skip(1) {
                named.extend(command_words(piece));
            }
            if let Some(rest) = line.trim_start().strip_prefix("zenpak ") {
                named.extend(command_words(rest));
            }
        }
    }
    assert!(
        named.contains("config-path") && named.contains("classic consolidate"),
        "{named:?}"
    );
    for command in &named {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        help(&args);
    }
}
