//! Reading input files: only regular files (after following links) of a bounded size, checked
//! before a byte is read, so a device (`/dev/zero`), a pipe or a folder is refused at once.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use crate::error::LoadError;

/// The largest input file read (2 GiB): far beyond any scene, cloud or image these loaders
/// can hold in memory once parsed.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// The size of `path`, or an error naming it unless it is a regular file (after following
/// links) of at most [`MAX_INPUT_BYTES`].
///
/// ```
/// use lumbre_raytrace::check_input;
/// let dir = std::env::temp_dir();
/// assert!(check_input(&dir).unwrap_err().to_string().contains("not a regular file"));
/// ```
pub fn check_input(path: &Path) -> Result<u64, LoadError> {
    check_input_io(path).map_err(|e| LoadError::read(path, &e))
}

/// Reads `path` whole after [`check_input`].
///
/// ```
/// let path = std::env::temp_dir().join(format!("lumbre-read-doc-{}.txt", std::process::id()));
/// std::fs::write(&path, b"v 0 0 0").unwrap();
/// assert_eq!(lumbre_raytrace::read_input(&path).unwrap(), b"v 0 0 0");
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn read_input(path: &Path) -> Result<Vec<u8>, LoadError> {
    read_input_io(path).map_err(|e| LoadError::read(path, &e))
}

/// [`read_input`] as an I/O result, for the loaders' companion files (MTL libraries, glTF
/// buffers and images), whose errors the loader wraps with the file's name.
pub(crate) fn read_input_io(path: &Path) -> io::Result<Vec<u8>> {
    let size = check_input_io(path)?;
    let mut bytes = Vec::with_capacity(size as usize);
    // The bound holds even if the file grows after the check.
    File::open(path)?.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

fn check_input_io(path: &Path) -> io::Result<u64> {
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a folder" } else { "a device, pipe or socket" };
        return Err(io::Error::other(format!("not a regular file ({what}); give a scene, cloud or image file")));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_large(meta.len()));
    }
    Ok(meta.len())
}

fn too_large(len: u64) -> io::Error {
    io::Error::other(format!("{len} bytes, more than the {MAX_INPUT_BYTES} bytes (2 GiB) an input file may have"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn devices_and_folders_are_refused_before_reading() {
        let e = read_input(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("not a regular file"), "{e}");
        let e = read_input(&std::env::temp_dir()).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
    }
}
