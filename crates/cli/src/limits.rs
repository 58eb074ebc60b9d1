//! Sizes checked before any work: images against the memory this machine has free and
//! against the GPU's largest buffer, and the flags' allowed ranges (see the README's "Bad
//! input" section for the rule every command follows).

use std::path::{Path, PathBuf};

use lumbre_gpu::Backend;

use crate::error::Result;

/// Memory assumed free where `/proc/meminfo` cannot be read (not Linux).
const FALLBACK_AVAILABLE: u64 = 4 << 30;

/// Host bytes per pixel of a render, all buffers together: the image (12), the running
/// fixed-point sums of a progressive render (24), a batch's sums and their read-back (48), the
/// mean written out (12), the 8-bit copy and the encoded file (6), rounded up for the
/// encoders' own buffers.
pub const BYTES_PER_PIXEL: u64 = 128;

/// GPU bytes per pixel in the largest per-pixel buffer of a renderer: the path tracer's
/// fixed-point sums (three 64-bit sums).
const GPU_BYTES_PER_PIXEL: u64 = 24;

/// Most frames of `--orbit` and `--move`: a minute at 60 frames per second.
pub const MAX_FRAMES: u32 = 3600;

/// Bytes of memory available to this process: the least of `MemAvailable` of
/// `/proc/meminfo` (4 GiB where that cannot be read) and the room left under the process's
/// address-space limit (`ulimit -v`), where it has one.
pub fn available_memory() -> u64 {
    let free = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(FALLBACK_AVAILABLE);
    free.min(address_space_left().unwrap_or(u64::MAX))
}

/// Bytes the process may still map under its address-space limit (`Max address space` of
/// `/proc/self/limits` less `VmSize` of `/proc/self/status`); `None` without a limit.
fn address_space_left() -> Option<u64> {
    const NAME: &str = "Max address space";
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with(NAME))?;
    // "unlimited" does not parse: no limit.
    let limit: u64 = line[NAME.len()..].split_whitespace().next()?.parse().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let size_kib: u64 = status.lines().find(|l| l.starts_with("VmSize:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(limit.saturating_sub(size_kib * 1024))
}

/// `bytes` in GiB with one decimal, or MiB below a GiB.
pub fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// An error naming `--width` and `--height` when a `width` x `height` image cannot be made:
/// more pixels than the renderers index ([`lumbre_raytrace::MAX_PIXELS`]), more memory than
/// `available` bytes at [`BYTES_PER_PIXEL`], or, on the GPU, more pixels than its largest
/// storage buffer holds at [`GPU_BYTES_PER_PIXEL`] each.
pub fn check_image(width: u32, height: u32, backend: &Backend, available: u64) -> Result<()> {
    let pixels = u64::from(width) * u64::from(height);
    let flags = format!("--width {width} --height {height}");
    if width == 0 || height == 0 {
        return Err(format!("{flags}: both must be at least 1").into());
    }
    if pixels > lumbre_raytrace::MAX_PIXELS {
        return Err(format!(
            "{flags}: {pixels} pixels; an image has at most {} (32-bit pixel indices): lower --width or --height",
            lumbre_raytrace::MAX_PIXELS
        )
        .into());
    }
    let bytes = pixels * BYTES_PER_PIXEL;
    if bytes > available {
        return Err(format!(
            "{flags}: {pixels} pixels need about {} of memory ({BYTES_PER_PIXEL} bytes each), more than the {} \
             available: lower --width or --height",
            human(bytes),
            human(available)
        )
        .into());
    }
    if let Backend::Gpu(gpu) = backend {
        let l = gpu.limits();
        let largest = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        let most = largest / GPU_BYTES_PER_PIXEL;
        if pixels > most {
            return Err(format!(
                "{flags}: {pixels} pixels; {} holds at most {most} in one image ({GPU_BYTES_PER_PIXEL} bytes each in \
                 its largest storage buffer of {}): lower --width or --height, or use --backend cpu",
                gpu.adapter_name(),
                human(largest)
            )
            .into());
        }
    }
    Ok(())
}

/// An error naming `flag` unless `value` is in `lo..=hi`.
pub fn in_range<T: PartialOrd + Copy + std::fmt::Display>(flag: &str, value: T, lo: T, hi: T) -> Result<()> {
    // `contains` is false for NaN.
    if !(lo..=hi).contains(&value) {
        return Err(format!("{flag} {value}: must be {lo}..={hi}").into());
    }
    Ok(())
}

/// `path` as the file system names it: canonical where it exists, else its folder's
/// canonical path joined with its name, else as given.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// An error naming both flags when two outputs of one run are the same file (one would
/// silently replace the other).
pub fn distinct_outputs(a: (&str, &Path), b: (&str, &Path)) -> Result<()> {
    if resolved(a.1) == resolved(b.1) {
        return Err(format!(
            "{} {} and {} {}: one file for two outputs; give them different paths",
            a.0,
            a.1.display(),
            b.0,
            b.1.display()
        )
        .into());
    }
    Ok(())
}

/// An error naming `flag` unless the folder `path` is written into exists.
pub fn folder_exists(flag: &str, path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(format!("{flag} {}: the folder {} does not exist", path.display(), dir.display()).into())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_checked_against_pixels_and_memory() {
        let cpu = Backend::Cpu;
        assert!(check_image(640, 480, &cpu, 1 << 30).is_ok());
        let e = check_image(0, 480, &cpu, 1 << 30).unwrap_err().to_string();
        assert!(e.contains("--width 0"), "{e}");
        let e = check_image(u32::MAX, u32::MAX, &cpu, u64::MAX).unwrap_err().to_string();
        assert!(e.contains("at most 4294967295"), "{e}");
        let e = check_image(100_000, 30_000, &cpu, 16 << 30).unwrap_err().to_string();
        assert!(e.contains("more than the 16.0 GiB available") && e.contains("lower --width"), "{e}");
        assert!(available_memory() > 0);
    }

    #[test]
    fn two_outputs_on_one_path_are_refused() {
        let (a, b) = (Path::new("same.png"), Path::new("./same.png"));
        let e = distinct_outputs(("-o", a), ("--heatmap", b)).unwrap_err().to_string();
        assert!(e.contains("-o same.png and --heatmap ./same.png"), "{e}");
        assert!(distinct_outputs(("-o", a), ("--save", Path::new("same.lrr"))).is_ok());
        assert!(folder_exists("--save", Path::new("no-such-folder/f.lrr")).is_err());
        assert!(folder_exists("--save", Path::new("f.lrr")).is_ok());
    }

    #[test]
    fn ranges_name_the_flag() {
        assert!(in_range("--spp", 1u32, 1, 4).is_ok());
        assert_eq!(in_range("--spp", 0u32, 1, 4).unwrap_err().to_string(), "--spp 0: must be 1..=4");
        assert!(in_range("--background", -1.0f32, 0.0, 1.0).is_err());
        assert!(in_range("--background", f32::NAN, 0.0, 1.0).is_err());
    }
}
