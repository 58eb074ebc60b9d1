//! The one write rule for every output file (images, scenes, point clouds, factor files,
//! reports): whole or nothing, and never through a symbolic link.

use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::error::LoadError;

/// Writes `bytes` to `path` by the rule of [`write_with`].
///
/// ```
/// let path = std::env::temp_dir().join(format!("lumbre-write-doc-{}.txt", std::process::id()));
/// lumbre_raytrace::write_file(&path, b"whole").unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"whole");
/// assert!(lumbre_raytrace::write_file("/nonexistent-folder/x.png".as_ref(), b"").is_err());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), LoadError> {
    write_with(path, |w| w.write_all(bytes))
}

/// Writes `path` whole or not at all through `fill`, which streams the contents: a regular
/// file (or a new one) is written to a temporary file in the same folder, synced and renamed
/// into place, so a failed write (a full disk, an error from `fill`) leaves the old file, or
/// nothing, behind. A path that is a symbolic link is refused (the write would land outside
/// the place asked for); a device such as `/dev/null` is written directly. Errors name the
/// path.
///
/// ```
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("lumbre-write-with-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.txt");
/// let failed = lumbre_raytrace::write_with(&path, |w| {
///     w.write_all(b"half")?;
///     Err(std::io::Error::other("disk full"))
/// });
/// assert!(failed.unwrap_err().to_string().contains("disk full"));
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0); // no partial or temporary file
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_with(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), LoadError> {
    let fail = |e: io::Error| LoadError::write(path, &e);
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(LoadError::new(
                path,
                "is a symbolic link: refusing to write through it; remove the link or give another path",
            ));
        }
        Ok(m) if !m.is_file() && !m.is_dir() => {
            // A device or a pipe: there is nothing to replace, so write in place.
            let mut w = BufWriter::new(OpenOptions::new().write(true).open(path).map_err(fail)?);
            return fill(&mut w).and_then(|()| w.flush()).map_err(fail);
        }
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // `create_new` neither follows nor reuses a file planted at the temporary name.
    let file = OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(fail)?;
    let written = (|| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("lumbre-write-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_refused_and_its_target_untouched() {
        let d = dir("link");
        let target = d.join("target.txt");
        fs::write(&target, b"keep").unwrap();
        std::os::unix::fs::symlink(&target, d.join("out.png")).unwrap();
        let e = write_file(&d.join("out.png"), b"new").unwrap_err().to_string();
        assert!(e.contains("out.png") && e.contains("symbolic link"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        // A link planted at the temporary name is not followed either.
        let planted = d.join(format!(".b.txt.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        assert!(write_file(&d.join("b.txt"), b"new").is_err());
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let d = dir("old");
        let path = d.join("a.lrr");
        fs::write(&path, b"old").unwrap();
        let e = write_with(&path, |w| {
            w.write_all(&[7; 3 << 20])?;
            Err(io::Error::other("no space left"))
        });
        assert!(e.unwrap_err().to_string().contains("no space left"));
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1);
        // A parent that is a file: an error naming the path, nothing written.
        assert!(write_file(&path.join("x.lrr"), b"x").unwrap_err().to_string().contains("a.lrr"));
        fs::remove_dir_all(&d).unwrap();
    }
}
