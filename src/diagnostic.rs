//! Diagnostics: errors and warnings as data, the way the command line prints
//! them (as text, or as one JSON object each with `--message-format json`).
//!
//! The library never prints. A build or a check hands its warnings to the
//! caller as [`Diagnostic`]s; an [`Error`] becomes one (or, for
//! [`ErrorKind::Many`], one per failure) through [`Diagnostic::from_error`].
//! Every diagnostic has the same fields, so one JSON schema covers errors
//! and warnings alike.

use serde::Serialize;

use crate::error::{Error, ErrorKind};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Something was not done or is wrong: the command fails.
    Error,
    /// Something that still builds but is probably not what the modder wants.
    Warning,
    /// Information only.
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One error, warning or note with where it applies and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub level: Level,
    /// Stable short name (`format`, `io`, `include-matched-nothing`, …).
    pub code: String,
    /// What is wrong, without the location.
    pub message: String,
    pub file: Option<String>,
    /// Structures being read, outermost first.
    pub(crate) structure: Vec<String>,
    pub(crate) offset: Option<u64>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub hint: Option<String>,
    /// The export of a package it is about, and where in its data
    /// (`export-does-not-decode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub export: Option<Box<ExportSubject>>,
}

/// An export a diagnostic is about: its package, the export, and the
/// property its data failed at as the mappings describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportSubject {
    /// `/Game/Data/DT_Weapons`.
    pub package: String,
    /// The export's index in the export map (0-based) and its object path.
    pub export_index: usize,
    pub export: String,
    /// Its class as an object path.
    pub class: String,
    /// Where in the data, in the patch files' path syntax
    /// (`Default.TextStyle.Font.Size`); `None` outside any property.
    pub property_path: Option<String>,
    /// The innermost property on that path as the mappings describe it:
    /// the struct or class that has it, its name and type.
    pub owner: Option<String>,
    pub property: Option<String>,
    pub property_type: Option<String>,
}

impl Diagnostic {
    /// A warning with a stable code.
    pub fn warning(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: Level::Warning,
            code: code.to_string(),
            message: message.into(),
            file: None,
            structure: Vec::new(),
            offset: None,
            line: None,
            column: None,
            hint: None,
            export: None,
        }
    }

    /// A note with a stable code.
    pub fn note(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: Level::Note,
            ..Diagnostic::warning(code, message)
        }
    }

    /// An error diagnostic that is not (yet) an [`Error`] value, such as a
    /// problem `check` found.
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            level: Level::Error,
            ..Diagnostic::warning(code, message)
        }
    }

    pub fn with_file(mut self, file: impl AsRef<std::path::Path>) -> Self {
        self.file = Some(path_text(file.as_ref()));
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The diagnostics of an error: one, or one per failure of an
    /// [`ErrorKind::Many`] (nested ones flattened).
    pub fn from_error(error: &Error) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        collect(error, &mut out);
        out
    }

    /// The diagnostic of this one error, without expanding failures.
    pub(crate) fn of(error: &Error) -> Diagnostic {
        let context = error.context();
        Diagnostic {
            level: Level::Error,
            code: error.code().to_string(),
            message: error.message(),
            file: context.file.as_deref().map(path_text),
            structure: context.structure.clone(),
            offset: context.offset,
            line: context.line_column.map(|(l, _)| l),
            column: context.line_column.map(|(_, c)| c),
            hint: context.hint.clone(),
            export: None,
        }
    }

    /// An error that says what this diagnostic says, with its context (for
    /// reports kept as data that end a command as a failure).
    pub(crate) fn to_error(&self) -> Error {
        let mut error = Error::invalid(self.message.clone());
        for structure in self.structure.iter().rev() {
            error = error.within(structure.clone());
        }
        if let Some(file) = &self.file {
            error = error.in_file(file);
        }
        if let Some(offset) = self.offset {
            error = error.at(offset);
        }
        if let Some(hint) = &self.hint {
            error = error.with_hint(hint.clone());
        }
        error
    }

    /// `file:line:col: structure > path: at byte offset N (0xN)`, empty when nothing is known.
    pub fn location(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(file);
            if let (Some(line), Some(column)) = (self.line, self.column) {
                out.push_str(&format!(":{line}:{column}"));
            }
        }
        if !self.structure.is_empty() {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&self.structure.join(" > "));
        }
        if let Some(offset) = self.offset {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&format!("at byte offset {offset} (0x{offset:x})"));
        }
        out
    }
}

fn collect(error: &Error, out: &mut Vec<Diagnostic>) {
    match error.kind() {
        ErrorKind::Many { failures, .. } => {
            for failure in failures {
                collect(failure, out);
            }
        }
        _ => out.push(Diagnostic::of(error)),
    }
}

impl std::fmt::Display for Diagnostic {
    /// `location: message` then `  hint: …` on its own line (no level prefix:
    /// the printer adds it, coloured).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let location = self.location();
        if !location.is_empty() {
            write!(f, "{location}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

/// `text` as it may reach a terminal: every control character (escape,
/// carriage return, newline, bell, …) and every bidirectional override is
/// written as a `\u{…}` escape, so that a name read from a container or a
/// pak cannot move the cursor, recolour, retitle or reorder what is
/// printed. Text with none of them is returned as it is.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    escape_unprintable(text, false)
}

/// A path as it is named in messages: its bytes as they are, a byte that
/// is not UTF-8 written `\xNN` (a name such as `Bad\xff_P.pak` stays
/// that name, not a lossy `U+FFFD` that names no file).
pub fn path_text(path: &std::path::Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in path.as_os_str().as_bytes().utf8_chunks() {
            out.push_str(chunk.valid());
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        path.display().to_string()
    }
}

/// `items` joined with `, `, at most `shown` of them, then `and N more`:
/// a list that may be as long as a game has paks, on one line.
pub fn bounded_list(items: &[String], shown: usize) -> String {
    let mut text = items
        .iter()
        .take(shown)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > shown {
        text.push_str(&format!(" and {} more", items.len() - shown));
    }
    text
}

/// Whether a terminal would act on `c` instead of showing it: a control
/// character or a bidirectional override / isolate.
pub fn is_unprintable(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// [`printable`], keeping line feeds when `keep_newlines` (for whole
/// reports, whose lines are their own).
fn escape_unprintable(text: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| is_unprintable(c) && !(keep_newlines && c == '\n');
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A writer for human text made of names read from files (a command's
/// report): everything written passes through [`printable`], line feeds
/// excepted, so no name can reach the terminal raw however the report is
/// put together. Bytes that are not UTF-8 are written as U+FFFD; a
/// character split across two writes is joined first.
pub struct PrintableWriter<W: std::io::Write> {
    inner: W,
    /// The start of a UTF-8 sequence that the next write completes.
    pending: Vec<u8>,
}

impl<W: std::io::Write> PrintableWriter<W> {
    pub fn new(inner: W) -> Self {
        PrintableWriter {
            inner,
            pending: Vec::new(),
        }
    }

    fn put(&mut self, text: &str) -> std::io::Result<()> {
        self.inner
            .write_all(escape_unprintable(text, true).as_bytes())
    }
}

impl<W: std::io::Write> std::io::Write for PrintableWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            buf
        } else {
            let mut j = std::mem::take(&mut self.pending);
            j.extend_from_slice(buf);
            joined = j;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.put(text)?;
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    self.put(std::str::from_utf8(good).unwrap_or_default())?;
                    match e.error_len() {
                        Some(n) => {
                            self.put("\u{fffd}")?;
                            rest = &bad[n..];
                        }
                        None => {
                            // An incomplete character at the end: kept for the next write.
                            self.pending = bad.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Diagnostics of one kind shown before the rest of that kind are only
/// counted (a TOC whose 364,000 chunks share one id, a pak of 100,000 `..`
/// names): the first of each are enough to act on.
pub(crate) const SHOWN_PER_KIND: usize = 20;

/// Caps diagnostics per kind ([`SHOWN_PER_KIND`] each): a kind is the
/// level, code, file and the message's shape (its numbers, hex ids and
/// quoted or parenthesized parts left out, so "chunk 5 (…)" and
/// "chunk 6 (…)" are one kind). What is not shown is summed up by
/// [`PerKind::summaries`] in one `more-of-kind` diagnostic per kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct PerKind {
    /// Per kind: how many were seen, and the first one's message.
    seen: std::collections::BTreeMap<KindKey, (usize, String)>,
}

/// A kind of finding: level, code, file and message shape.
type KindKey = (Level, String, Option<String>, String);

impl PerKind {
    /// Counts `d`; whether it is among the first of its kind (to be kept).
    pub(crate) fn admit(&mut self, d: &Diagnostic) -> bool {
        let key = (
            d.level,
            d.code.clone(),
            d.file.clone(),
            message_shape(&d.message),
        );
        let seen = self
            .seen
            .entry(key)
            .or_insert_with(|| (0, d.message.clone()));
        seen.0 += 1;
        seen.0 <= SHOWN_PER_KIND
    }

    /// Takes in another count's diagnostics that were not shown (those it
    /// kept are admitted one by one by the caller).
    pub(crate) fn absorb_hidden(&mut self, other: &PerKind) {
        for (key, (n, first)) in &other.seen {
            let hidden = n.saturating_sub(SHOWN_PER_KIND);
            if hidden > 0 {
                let seen = self
                    .seen
                    .entry(key.clone())
                    .or_insert_with(|| (0, first.clone()));
                seen.0 += hidden;
            }
        }
    }

    /// One `more-of-kind` diagnostic per kind with more than
    /// [`SHOWN_PER_KIND`], at that kind's level; the counts are cleared.
    pub(crate) fn summaries(&mut self) -> Vec<Diagnostic> {
        let seen = std::mem::take(&mut self.seen);
        seen.into_iter()
            .filter(|(_, (n, _))| *n > SHOWN_PER_KIND)
            .map(|((level, code, file, _), (n, first))| {
                let mut d = Diagnostic::warning(
                    "more-of-kind",
                    format!(
                        "and {} more {}s of this kind (`{code}`, like: {first}), not shown",
                        n - SHOWN_PER_KIND,
                        level.as_str()
                    ),
                );
                d.level = level;
                d.file = file;
                d
            })
            .collect()
    }
}

/// A message with what varies between findings of one kind left out:
/// digits, `0x…` ids, and what is between backticks or parentheses.
fn message_shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut depth = 0usize;
    let mut quoted = false;
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth = depth.saturating_sub(1),
            _ if quoted || depth > 0 => {}
            '0' if chars.peek() == Some(&'x') => {
                chars.next();
                while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    chars.next();
                }
                out.push('#');
            }
            c if c.is_ascii_digit() => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_becomes_one_diagnostic_per_failure() {
        let many = Error::new(ErrorKind::Many {
            what: "packages",
            total: 3,
            failures: vec![
                Error::format(12, "bad")
                    .in_file("a.uasset")
                    .within("name map"),
                Error::usage("no").with_hint("do this"),
            ],
        });
        let diagnostics = Diagnostic::from_error(&many);
        assert_eq!(diagnostics.len(), 2);
        assert_eq!(diagnostics[0].file.as_deref(), Some("a.uasset"));
        assert_eq!(diagnostics[0].offset, Some(12));
        assert_eq!(diagnostics[0].structure, ["name map"]);
        assert_eq!(diagnostics[0].code, "format");
        assert_eq!(diagnostics[1].hint.as_deref(), Some("do this"));
        let json = serde_json::to_value(&diagnostics[0]).unwrap();
        for key in [
            "level",
            "code",
            "message",
            "file",
            "structure",
            "offset",
            "line",
            "column",
            "hint",
        ] {
            assert!(json.get(key).is_some(), "{key} missing from {json}");
        }
    }

    #[test]
    fn the_printable_writer_escapes_names_and_keeps_lines() {
        use std::io::Write;
        let mut w = PrintableWriter::new(Vec::new());
        let name = "a\u{1b}[2J\r\u{7}\u{202e}b";
        writeln!(w, "name {name}").unwrap();
        // A character cut between two writes, then a byte that is not UTF-8.
        let e_acute = "é".as_bytes();
        w.write_all(&e_acute[..1]).unwrap();
        w.write_all(&e_acute[1..]).unwrap();
        w.write_all(b"\xff\n").unwrap();
        let text = String::from_utf8(w.inner).unwrap();
        assert_eq!(text, "name a\\u{1b}[2J\\u{d}\\u{7}\\u{202e}b\né\u{fffd}\n");
    }
}
