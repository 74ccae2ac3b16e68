//! The one error type of the library.
//!
//! A format error carries the file (when known), the structure being read
//! (outermost first, e.g. `export map > entry 3 > serial size`), the absolute
//! byte offset, what was wrong, and a hint saying what the user can do.

use std::fmt;
use std::path::{Path, PathBuf};

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in zenpak's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file's bytes do not match the format being read.
    #[error("{0}")]
    Format(Box<FormatError>),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The user asked for something that cannot be done (bad argument, bad manifest value).
    #[error("{0}")]
    Usage(String),
    /// Anything else, with a full message.
    #[error("{0}")]
    Other(String),
}

/// Details of a format error.
#[derive(Debug, Clone)]
pub struct FormatError {
    pub file: Option<PathBuf>,
    /// Structures being read, outermost first.
    pub structure: Vec<String>,
    /// Absolute offset in the file of the byte where reading failed.
    pub offset: u64,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        if !self.structure.is_empty() {
            write!(f, "{}: ", self.structure.join(" > "))?;
        }
        write!(
            f,
            "at byte offset {} (0x{:x}): {}",
            self.offset, self.offset, self.message
        )?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl Error {
    /// A format error at `offset`.
    pub fn format(offset: u64, message: impl Into<String>) -> Self {
        Error::Format(Box::new(FormatError {
            file: None,
            structure: Vec::new(),
            offset,
            message: message.into(),
            hint: None,
        }))
    }

    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    pub fn other(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }

    /// Names the structure that was being read (prepended: callers wrap inner reads).
    pub fn within(mut self, structure: impl Into<String>) -> Self {
        if let Error::Format(f) = &mut self {
            f.structure.insert(0, structure.into());
        }
        self
    }

    /// Names the file the error happened in (kept if already set).
    pub fn in_file(mut self, path: impl AsRef<Path>) -> Self {
        match &mut self {
            Error::Format(f) if f.file.is_none() => f.file = Some(path.as_ref().to_path_buf()),
            Error::Other(m) | Error::Usage(m) if !m.contains(&*path.as_ref().to_string_lossy()) => {
                *m = format!("{}: {m}", path.as_ref().display())
            }
            _ => {}
        }
        self
    }

    /// Adds a hint saying what the user can do.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        if let Error::Format(f) = &mut self {
            f.hint = Some(hint.into());
        }
        self
    }

    /// The format details, if this is a format error.
    pub fn as_format(&self) -> Option<&FormatError> {
        match self {
            Error::Format(f) => Some(f),
            _ => None,
        }
    }
}

/// `.context("export map")` on results: names the structure being read.
pub trait Context<T> {
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
