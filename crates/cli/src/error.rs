//! The one error of every command: `main` prints it after `error: ` and exits with status 1.
//! Each message names what the user can act on: the flag, its value and what is allowed, or
//! the file and line.

use std::fmt;
use std::path::Path;

use lumbre_raytrace::LoadError;

/// Why a command failed.
#[derive(Debug)]
pub enum Error {
    /// A flag or an input refused, in words: the flag (or file), the value, what is allowed.
    Message(String),
    /// The GPU runtime, or an algorithm refusing its input or failing on a backend.
    Gpu(lumbre_gpu::Error),
    /// A file read or written: its path, its line where it has one, and the reason.
    File(LoadError),
    /// Reading or writing failed where no path is known.
    Io(std::io::Error),
}

/// Short for `Result<T, Error>`.
pub type Result<T = (), E = Error> = std::result::Result<T, E>;

impl Error {
    /// `dir` could not be created: the folder and the reason.
    pub fn folder(dir: &Path, e: std::io::Error) -> Error {
        Error::File(LoadError::new(dir, format!("cannot create the folder: {e}")))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Message(m) => f.write_str(m),
            Error::Gpu(e) => e.fmt(f),
            Error::File(e) => e.fmt(f),
            Error::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Message(_) => None,
            Error::Gpu(e) => Some(e),
            Error::File(e) => Some(e),
            Error::Io(e) => Some(e),
        }
    }
}

impl From<String> for Error {
    fn from(m: String) -> Self {
        Error::Message(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Self {
        Error::Message(m.to_owned())
    }
}

impl From<lumbre_gpu::Error> for Error {
    fn from(e: lumbre_gpu::Error) -> Self {
        Error::Gpu(e)
    }
}

impl From<LoadError> for Error {
    fn from(e: LoadError) -> Self {
        Error::File(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// Errors of the libraries that are a message and nothing more to the user.
macro_rules! from_display {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Self {
                Error::Message(e.to_string())
            }
        }
    )*};
}

from_display!(
    lumbre_raytrace::metrics::CompareError,
    lumbre_raytrace::SizeMismatch,
    lumbre_octree::OctreeError,
    lumbre_morton::QuantizeError,
);
