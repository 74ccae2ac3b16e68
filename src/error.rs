//! The one error type of the library.
//!
//! An [`Error`] is a [`ErrorKind`] (what went wrong, with its data) plus an
//! [`ErrorContext`] (where: the file, the structure being read outermost
//! first, e.g. `export map > entry 3 > serial size`, the absolute byte offset
//! or the line and column of a text file, and a hint saying what the user can
//! do). Context is structural for every kind: callers wrap inner errors with
//! [`Error::within`], [`Error::in_file`], [`Error::at`] and
//! [`Error::with_hint`], and nothing ever searches message text. The
//! command line prints the same fields as text or as a JSON diagnostic
//! ([`crate::diagnostic::Diagnostic`]).

use std::fmt;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in zenpak's library: a kind and where it happened.
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: ErrorKind,
    context: ErrorContext,
}

/// Where an error happened. Every field is optional; [`Error`]'s `Display`
/// prints what is known as `file: structure > path: at byte offset N (0xN): message`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorContext {
    pub(crate) file: Option<PathBuf>,
    /// Structures being read, outermost first.
    pub structure: Vec<String>,
    /// Absolute offset in the file of the byte where reading failed.
    pub(crate) offset: Option<u64>,
    /// 1-based line and column, for text files (the manifest).
    pub(crate) line_column: Option<(usize, usize)>,
    /// What the user can do about it.
    pub(crate) hint: Option<String>,
    /// Where in an export's data, when the property codec failed there
    /// (outermost first; each step is in `structure` too, as text).
    pub data_path: Vec<DataStep>,
}

/// One step into an export's data: what the property codec was reading
/// when it failed ([`Error::within_data`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataStep {
    /// A DataTable row, by name.
    Row(String),
    /// A property as the mappings describe it: the struct or class that
    /// has it, its name and its type (`FloatProperty`, `StructProperty<X>`).
    Property {
        owner: String,
        name: String,
        ty: String,
    },
    /// Element `i` of an array or set.
    Element(usize),
    /// The key, or the value, of entry `i` of a map.
    MapKey(usize),
    MapValue(usize),
}

impl fmt::Display for DataStep {
    /// As the step reads in an error's `structure`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataStep::Row(name) => write!(f, "row `{name}`"),
            DataStep::Property { owner, name, ty } => write!(f, "property {owner}.{name} ({ty})"),
            DataStep::Element(i) => write!(f, "element {i}"),
            DataStep::MapKey(i) => write!(f, "key {i}"),
            DataStep::MapValue(i) => write!(f, "value {i}"),
        }
    }
}

/// A data path as one string in the patch files' syntax: rows and
/// properties joined by `.`, elements as `[i]`, a map entry's key or value
/// as `[i].key` / `[i].value` (`Default.TextStyle.Font.Size`, `Tags[0]`).
pub fn data_path_text(steps: &[DataStep]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            DataStep::Row(name) | DataStep::Property { name, .. } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            DataStep::Element(i) => out.push_str(&format!("[{i}]")),
            DataStep::MapKey(i) => out.push_str(&format!("[{i}].key")),
            DataStep::MapValue(i) => out.push_str(&format!("[{i}].value")),
        }
    }
    out
}

/// What went wrong. Each kind carries its data; the message says it in words.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file's bytes do not match the format being read, or contradict each other.
    #[error("{0}")]
    Format(String),
    /// Reading or writing a file failed (the file is in the context).
    #[error("{0}")]
    Io(#[source] std::io::Error),
    /// The user asked for something that cannot be done (bad argument or manifest value).
    #[error("{0}")]
    Usage(String),
    /// The input uses something zenpak does not handle (a codec, a format
    /// version, an engine feature); the message names it.
    #[error("{0}")]
    Unsupported(String),
    /// A compressed block does not decompress to what its record says.
    #[error("{method} block does not decompress: {detail}")]
    Decompress { method: String, detail: String },
    /// Data does not hash to the value recorded for it.
    #[error("{algorithm} mismatch: recorded {expected}, data hashes to {actual}")]
    HashMismatch {
        algorithm: &'static str,
        expected: String,
        actual: String,
    },
    /// A declared size or count is larger than zenpak accepts for this structure.
    #[error("{what} is {requested}, over the limit of {limit}")]
    Limit {
        what: String,
        requested: u64,
        limit: u64,
    },
    /// Encrypted data and no key, or a key that does not fit.
    #[error("{0}")]
    Key(String),
    /// Another zenpak holds what this one needs (the output folder's lock).
    #[error("{0}")]
    Busy(String),
    /// A file zenpak would replace or remove is not one it wrote for this
    /// mod (another mod's, or nobody's): left alone unless forced.
    #[error("{0}")]
    NotOwned(String),
    /// A file zenpak would write or lock is a link, another name of a file
    /// (a hard link), a reparse point or not a regular file, which zenpak
    /// did not make: nothing is written through it.
    #[error("{0}")]
    UnsafeOutput(String),
    /// The mod has no packages and no loose files: `package` and `install`
    /// refuse to ship it (a mistyped `include` or content root).
    #[error("{0}")]
    EmptyMod(String),
    /// A file of the mod's content cannot ship as it is; `code` says why
    /// (`never-ship`: a file a mod must never contain, `crate::build::never_ship`;
    /// `case-clash`: two paths that differ only in case).
    #[error("{message}")]
    Content { code: &'static str, message: String },
    /// The user stopped the command (Ctrl-C); nothing half-written was left behind.
    #[error("interrupted; nothing was left half-written (a build keeps its previous output; unpack, extract and get keep the files they finished)")]
    Interrupted,
    /// Several inputs failed (packages of a build, findings of `verify`); each
    /// failure is an error of its own with its own context.
    #[error("{} of {total} {what} failed", failures.len())]
    Many {
        what: &'static str,
        total: usize,
        failures: Vec<Error>,
    },
    /// An edited document refers to an object the package neither imports
    /// nor exports (its path given); `patch` adds the import when the game
    /// or the mod has the object.
    #[error("no import or export of the package has the path `{0}`")]
    UnknownObject(String),
    /// Encoding a report as JSON failed.
    #[error("cannot encode JSON: {0}")]
    Json(String),
    /// A library function was called in a way it does not allow: a bug in zenpak.
    #[error("internal error (please report it): {0}")]
    Internal(String),
}

impl ErrorKind {
    /// Short stable name of the kind, for JSON diagnostics and tests.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            ErrorKind::Format(_) => "format",
            ErrorKind::Io(e) => Refusal::of(e).map_or("io", Refusal::code),
            ErrorKind::Usage(_) => "usage",
            ErrorKind::Unsupported(_) => "unsupported",
            ErrorKind::Decompress { .. } => "decompress",
            ErrorKind::HashMismatch { .. } => "hash-mismatch",
            ErrorKind::Limit { .. } => "limit",
            ErrorKind::Key(_) => "key",
            ErrorKind::Busy(_) => "busy",
            ErrorKind::NotOwned(_) => "not-owned",
            ErrorKind::UnsafeOutput(_) => "unsafe-output",
            ErrorKind::EmptyMod(_) => "empty-mod",
            ErrorKind::Content { code, .. } => code,
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Many { .. } => "many",
            ErrorKind::UnknownObject(_) => "unknown-object",
            ErrorKind::Json(_) => "json",
            ErrorKind::Internal(_) => "internal",
        }
    }
}

/// The system refused a file zenpak needs for a reason that is the user's
/// environment, not the work: exit code 2 with a code of its own, and a hint
/// saying what to do (callers that know what zenpak was doing replace it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No permission (Unix EACCES/EPERM, Windows ERROR_ACCESS_DENIED).
    PermissionDenied,
    /// The file system is mounted read-only.
    ReadOnly,
    /// Another program has the file open (Windows sharing or lock violation).
    InUse,
    /// No space left, or over a quota.
    DiskFull,
    /// Larger than a file may be: a file-size limit (`ulimit -f`, whose
    /// signal the binary ignores so that the write fails instead) or the
    /// file system's largest file (4 GiB on FAT32).
    FileTooLarge,
}

impl Refusal {
    pub(crate) fn of(e: &std::io::Error) -> Option<Refusal> {
        // ERROR_SHARING_VIOLATION (32), ERROR_LOCK_VIOLATION (33); elsewhere
        // these numbers are other errors.
        if cfg!(windows) && matches!(e.raw_os_error(), Some(32 | 33)) {
            return Some(Refusal::InUse);
        }
        match e.kind() {
            std::io::ErrorKind::PermissionDenied => Some(Refusal::PermissionDenied),
            std::io::ErrorKind::ReadOnlyFilesystem => Some(Refusal::ReadOnly),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                Some(Refusal::DiskFull)
            }
            std::io::ErrorKind::FileTooLarge => Some(Refusal::FileTooLarge),
            _ => None,
        }
    }

    /// The diagnostic code.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Refusal::PermissionDenied => "permission-denied",
            Refusal::ReadOnly => "read-only",
            Refusal::InUse => "file-in-use",
            Refusal::DiskFull => "disk-full",
            Refusal::FileTooLarge => "file-too-large",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Refusal::PermissionDenied => {
                "your user may not read or write this file: give it access to the folder \
                 (a folder under Program Files is not writable by default), or use a folder you own"
            }
            Refusal::ReadOnly => "the file system is read-only: use a folder on a writable drive",
            Refusal::InUse => {
                "another program has the file open: close it (a game holds its .pak files open \
                 while it runs), then run zenpak again"
            }
            Refusal::DiskFull => "the drive is full: free some space, then run zenpak again",
            Refusal::FileTooLarge => {
                "the file would be larger than this system lets a file be: raise the file-size \
                 limit (`ulimit -f`), or write to a drive whose file system takes larger files \
                 (FAT32 stops at 4 GiB), then run zenpak again"
            }
        }
    }
}

impl Error {
    /// An error of `kind` with no context yet.
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error {
            inner: Box::new(Inner {
                kind,
                context: ErrorContext::default(),
            }),
        }
    }

    /// A format error at `offset`.
    pub(crate) fn format(offset: u64, message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Format(message.into())).at(offset)
    }

    /// A format error whose position is not a byte offset (a relation between records).
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Format(message.into()))
    }

    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        let refusal = Refusal::of(&source);
        let error = Error::new(ErrorKind::Io(source)).in_file(path);
        match refusal {
            Some(r) => error.with_hint(r.hint()),
            None => error,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Usage(message.into()))
    }

    /// `Ok` when `failures` is empty, else one error holding them all
    /// (`what` names what failed: `content files`).
    pub(crate) fn many(what: &'static str, failures: Vec<Error>) -> Result<()> {
        if failures.is_empty() {
            return Ok(());
        }
        Err(Error::new(ErrorKind::Many {
            what,
            total: failures.len(),
            failures,
        }))
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Unsupported(message.into()))
    }

    pub(crate) fn decompress(method: impl Into<String>, detail: impl fmt::Display) -> Self {
        Error::new(ErrorKind::Decompress {
            method: method.into(),
            detail: detail.to_string(),
        })
    }

    pub(crate) fn limit(what: impl Into<String>, requested: u64, limit: u64) -> Self {
        Error::new(ErrorKind::Limit {
            what: what.into(),
            requested,
            limit,
        })
    }

    pub(crate) fn key(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Key(message.into()))
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Internal(message.into()))
    }

    pub fn json(source: serde_json::Error) -> Self {
        Error::new(ErrorKind::Json(source.to_string()))
    }

    /// Names the structure that was being read (prepended: callers wrap inner reads).
    pub(crate) fn within(mut self, structure: impl Into<String>) -> Self {
        self.inner.context.structure.insert(0, structure.into());
        self
    }

    /// Names the step into export data that was being read (prepended,
    /// to [`ErrorContext::data_path`] and, as text, to the structure).
    pub(crate) fn within_data(mut self, step: DataStep) -> Self {
        self.inner.context.structure.insert(0, step.to_string());
        self.inner.context.data_path.insert(0, step);
        self
    }

    /// Names the file the error happened in (kept if already set: the innermost file wins).
    pub fn in_file(mut self, path: impl AsRef<Path>) -> Self {
        if self.inner.context.file.is_none() {
            self.inner.context.file = Some(path.as_ref().to_path_buf());
        }
        self
    }

    /// Sets the byte offset (kept if already set: the innermost position wins).
    pub(crate) fn at(mut self, offset: u64) -> Self {
        if self.inner.context.offset.is_none() {
            self.inner.context.offset = Some(offset);
        }
        self
    }

    /// Sets the line and column in a text file (kept if already set).
    pub(crate) fn at_line(mut self, line: usize, column: usize) -> Self {
        if self.inner.context.line_column.is_none() {
            self.inner.context.line_column = Some((line, column));
        }
        self
    }

    /// Adds a hint saying what the user can do (kept if already set: the
    /// innermost hint knows most).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        if self.inner.context.hint.is_none() {
            self.inner.context.hint = Some(hint.into());
        }
        self
    }

    /// Replaces the hint, for a caller that knows better than the inner code.
    pub(crate) fn replace_hint(mut self, hint: impl Into<String>) -> Self {
        self.inner.context.hint = Some(hint.into());
        self
    }

    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    pub(crate) fn into_kind(self) -> ErrorKind {
        self.inner.kind
    }

    pub fn context(&self) -> &ErrorContext {
        &self.inner.context
    }

    pub fn code(&self) -> &'static str {
        self.inner.kind.code()
    }

    pub fn file(&self) -> Option<&Path> {
        self.inner.context.file.as_deref()
    }

    pub fn offset(&self) -> Option<u64> {
        self.inner.context.offset
    }

    pub fn hint(&self) -> Option<&str> {
        self.inner.context.hint.as_deref()
    }

    /// Where it happened and what: the display without the hint.
    pub fn summary(&self) -> String {
        let location = self.location();
        if location.is_empty() {
            self.message()
        } else {
            format!("{location}: {}", self.message())
        }
    }

    /// The kind's message alone, without file, structure, offset or hint.
    pub fn message(&self) -> String {
        self.inner.kind.to_string()
    }

    pub fn is_format(&self) -> bool {
        matches!(self.inner.kind, ErrorKind::Format(_))
    }

    /// True when the error is the user's to fix in the command line or the
    /// manifest (exit code 2) rather than a failure of the work (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(self.inner.kind, ErrorKind::Usage(_))
    }

    /// The failures of a [`ErrorKind::Many`], or this error alone.
    pub fn failures(&self) -> &[Error] {
        match &self.inner.kind {
            ErrorKind::Many { failures, .. } => failures,
            _ => std::slice::from_ref(self),
        }
    }

    /// Why the system refused the file, when it did ([`Refusal`]).
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        match &self.inner.kind {
            ErrorKind::Io(e) => Refusal::of(e),
            _ => None,
        }
    }

    /// The process exit code this error means: 2 for usage and for a file
    /// the system refused ([`Refusal`]: the user's setup to fix), 130 for an
    /// interrupt (as the Ctrl-C handler exits), 1 for the rest.
    pub fn exit_code(&self) -> u8 {
        if matches!(self.kind(), ErrorKind::Interrupted) {
            // As the interrupt handler exits: whichever of the two threads
            // gets there first, Ctrl-C is 130.
            130
        } else if self.is_usage() || self.refusal().is_some() {
            2
        } else {
            1
        }
    }

    /// The location prefix (`file: structure > path: at byte offset N (0xN)`)
    /// without the message, empty when nothing is known.
    pub(crate) fn location(&self) -> String {
        let c = &self.inner.context;
        let mut out = String::new();
        if let Some(file) = &c.file {
            out.push_str(&file.display().to_string());
            if let Some((line, column)) = c.line_column {
                out.push_str(&format!(":{line}:{column}"));
            }
        }
        if !c.structure.is_empty() {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&c.structure.join(" > "));
        }
        if let Some(offset) = c.offset {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&format!("at byte offset {offset} (0x{offset:x})"));
        }
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let location = self.location();
        if !location.is_empty() {
            write!(f, "{location}: ")?;
        }
        write!(f, "{}", self.inner.kind)?;
        if let ErrorKind::Many { failures, .. } = &self.inner.kind {
            for failure in failures {
                write!(f, "\n  {}", failure.to_string().replace('\n', "\n  "))?;
            }
        }
        if let Some(hint) = &self.inner.context.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("context", &self.inner.context)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl Clone for ErrorKind {
    fn clone(&self) -> Self {
        match self {
            ErrorKind::Format(m) => ErrorKind::Format(m.clone()),
            // io::Error is not Clone: keep its kind and message.
            ErrorKind::Io(e) => ErrorKind::Io(std::io::Error::new(e.kind(), e.to_string())),
            ErrorKind::Usage(m) => ErrorKind::Usage(m.clone()),
            ErrorKind::Unsupported(m) => ErrorKind::Unsupported(m.clone()),
            ErrorKind::UnknownObject(p) => ErrorKind::UnknownObject(p.clone()),
            ErrorKind::Decompress { method, detail } => ErrorKind::Decompress {
                method: method.clone(),
                detail: detail.clone(),
            },
            ErrorKind::HashMismatch {
                algorithm,
                expected,
                actual,
            } => ErrorKind::HashMismatch {
                algorithm,
                expected: expected.clone(),
                actual: actual.clone(),
            },
            ErrorKind::Limit {
                what,
                requested,
                limit,
            } => ErrorKind::Limit {
                what: what.clone(),
                requested: *requested,
                limit: *limit,
            },
            ErrorKind::Key(m) => ErrorKind::Key(m.clone()),
            ErrorKind::Busy(m) => ErrorKind::Busy(m.clone()),
            ErrorKind::NotOwned(m) => ErrorKind::NotOwned(m.clone()),
            ErrorKind::UnsafeOutput(m) => ErrorKind::UnsafeOutput(m.clone()),
            ErrorKind::EmptyMod(m) => ErrorKind::EmptyMod(m.clone()),
            ErrorKind::Content { code, message } => ErrorKind::Content {
                code,
                message: message.clone(),
            },
            ErrorKind::Interrupted => ErrorKind::Interrupted,
            ErrorKind::Many {
                what,
                total,
                failures,
            } => ErrorKind::Many {
                what,
                total: *total,
                failures: failures.clone(),
            },
            ErrorKind::Json(m) => ErrorKind::Json(m.clone()),
            ErrorKind::Internal(m) => ErrorKind::Internal(m.clone()),
        }
    }
}

impl Clone for Error {
    fn clone(&self) -> Self {
        Error {
            inner: Box::new(Inner {
                kind: self.inner.kind.clone(),
                context: self.inner.context.clone(),
            }),
        }
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error::new(kind)
    }
}

/// `.context("export map")` on results: names the structure being read.
pub(crate) trait Context<T> {
    fn context(self, structure: impl Into<String>) -> Result<T>;
    fn with_context<S: Into<String>>(self, structure: impl FnOnce() -> S) -> Result<T>;
}

impl<T> Context<T> for Result<T> {
    fn context(self, structure: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.within(structure))
    }
    fn with_context<S: Into<String>>(self, structure: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| e.within(structure()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_kept_on_every_kind() {
        let e = Error::decompress("zlib", "bad header")
            .within("block 3")
            .within("chunk 7")
            .in_file("a.ucas")
            .at(4096)
            .with_hint("rebuild the container");
        assert_eq!(e.context().structure, ["chunk 7", "block 3"]);
        assert_eq!(e.file(), Some(Path::new("a.ucas")));
        assert_eq!(e.offset(), Some(4096));
        assert_eq!(e.code(), "decompress");
        assert_eq!(
            e.to_string(),
            "a.ucas: chunk 7 > block 3: at byte offset 4096 (0x1000): zlib block does not \
             decompress: bad header\n  hint: rebuild the container"
        );
    }

    #[test]
    fn innermost_file_offset_and_hint_win() {
        let e = Error::format(10, "bad")
            .in_file("inner")
            .in_file("outer")
            .at(99)
            .with_hint("inner hint")
            .with_hint("outer hint");
        assert_eq!(e.file(), Some(Path::new("inner")));
        assert_eq!(e.offset(), Some(10));
        assert_eq!(e.hint(), Some("inner hint"));
        assert_eq!(e.replace_hint("x").hint(), Some("x"));
    }

    #[test]
    fn usage_exits_2_an_interrupt_130_and_the_rest_1() {
        assert_eq!(Error::usage("x").exit_code(), 2);
        assert_eq!(Error::invalid("x").exit_code(), 1);
        assert_eq!(Error::new(ErrorKind::Interrupted).exit_code(), 130);
    }

    #[test]
    fn refused_files_are_exit_code_2_with_their_own_codes() {
        use std::io::ErrorKind as K;
        for (kind, code) in [
            (K::PermissionDenied, "permission-denied"),
            (K::ReadOnlyFilesystem, "read-only"),
            (K::StorageFull, "disk-full"),
            (K::FileTooLarge, "file-too-large"),
        ] {
            let e = Error::io("f", std::io::Error::from(kind));
            assert_eq!((e.code(), e.exit_code()), (code, 2));
            assert!(e.hint().is_some());
        }
        let e = Error::io("f", std::io::Error::from(K::UnexpectedEof));
        assert_eq!((e.code(), e.exit_code(), e.hint()), ("io", 1, None));
        // Windows' sharing (32) and lock (33) violations; other numbers elsewhere.
        let in_use = Error::io("f", std::io::Error::from_raw_os_error(32));
        assert_eq!(in_use.code() == "file-in-use", cfg!(windows));
    }
}
