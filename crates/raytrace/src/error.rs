//! The one error type of every loader and writer in this crate.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Bad input or a failed read or write: which file, which line (when there is one), and why.
///
/// Displayed as `path:line: reason`, or `path: reason` when the problem has no line (a missing
/// file, a truncated binary block, an unsupported format).
///
/// ```
/// use lumbre_raytrace::LoadError;
/// let e = LoadError::at_line("scene.obj", 12, "malformed number \"1.2.3\" in vertex");
/// assert_eq!(e.to_string(), "scene.obj:12: malformed number \"1.2.3\" in vertex");
/// let e = LoadError::new("missing.obj", "cannot open file: not found");
/// assert_eq!(e.to_string(), "missing.obj: cannot open file: not found");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file that was being read or written.
    pub path: PathBuf,
    /// The 1-based line of a text file where the problem is, if it has one.
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub reason: String,
}

impl LoadError {
    /// An error about a whole file (no line).
    pub fn new(path: impl Into<PathBuf>, reason: impl Into<String>) -> LoadError {
        LoadError { path: path.into(), line: None, reason: reason.into() }
    }

    /// An error at a 1-based line of a text file.
    pub fn at_line(path: impl Into<PathBuf>, line: usize, reason: impl Into<String>) -> LoadError {
        LoadError { path: path.into(), line: Some(line), reason: reason.into() }
    }

    /// An I/O error while opening or reading `path`.
    pub fn read(path: &Path, err: &io::Error) -> LoadError {
        LoadError::new(path, format!("cannot read file: {}", io_reason(err)))
    }

    /// An I/O error while creating or writing `path`.
    pub fn write(path: &Path, err: &io::Error) -> LoadError {
        LoadError::new(path, format!("cannot write file: {}", io_reason(err)))
    }
}

/// `not found` rather than `No such file or directory (os error 2)` for the common cases.
fn io_reason(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "not found".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => err.to_string(),
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

impl std::error::Error for LoadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_error_names_the_path() {
        let err = io::Error::new(io::ErrorKind::NotFound, "gone");
        let e = LoadError::read(Path::new("dir/a.ply"), &err);
        assert_eq!(e.to_string(), "dir/a.ply: cannot read file: not found");
        assert_eq!(e.line, None);
    }
}
