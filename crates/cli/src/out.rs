//! Standard output that never panics: `out!` is `println!` returning an error when the text
//! cannot be written (a full device, a closed file or pipe), so the command ends with
//! `error: cannot write to standard output: <why>` and status 1 instead of a panic.
//!
//! A closed pipe (`lumbre info | head -1`) is an error too: the output was cut short, and
//! the exit status says so (Rust ignores SIGPIPE, so the process is not killed silently).

use std::fmt;
use std::io::Write;

use crate::error::{Error, Result};

/// Like `println!`, returning `Result` (use with `?`): writes the line to standard output
/// and flushes it, so a failure is seen here rather than lost at exit.
macro_rules! out {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}
pub(crate) use out;

/// Writes `args` and a newline to standard output and flushes it.
pub fn line(args: fmt::Arguments<'_>) -> Result {
    let mut stdout = std::io::stdout().lock();
    stdout.write_fmt(args).and_then(|()| stdout.write_all(b"\n")).and_then(|()| stdout.flush()).map_err(failed)
}

/// Writes `text` to standard output as it is (no newline added) and flushes it.
pub fn text(text: &str) -> Result {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).map_err(failed)
}

/// The CLI error of a failed write to standard output.
fn failed(e: std::io::Error) -> Error {
    Error::Message(format!("cannot write to standard output: {e}"))
}
