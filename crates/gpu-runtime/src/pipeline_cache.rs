//! The on-disk pipeline cache: the driver's compiled pipelines kept in a file between runs,
//! so a second run skips most of the shader compilation of its cold start.
//!
//! One file per adapter and driver, in a folder the application chooses
//! ([`GpuOptions::pipeline_cache`](crate::GpuOptions::pipeline_cache)). The file holds our
//! header (magic, format version, the adapter key, the data's length and checksum) and then
//! wgpu's data as [`wgpu::PipelineCache::get_data`] returned it. It is read once when the
//! context is made and written (a temporary file renamed over the old one) when the context
//! is dropped after compiling new pipelines, or on [`Gpu::save_pipeline_cache`]. Failing to
//! read or write it is a warning on stderr, never an error: the run goes on without it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::{Error, Gpu, Result};

/// The magic bytes that start a Lumbre pipeline cache file.
const MAGIC: &[u8; 8] = b"LUMBREPC";

/// Version of the file layout below.
const FORMAT: u32 = 1;

/// Fixed part of the header: magic, format, key length, data length, checksum.
const FIXED_HEADER: usize = 8 + 4 + 4 + 8 + 8;

/// Longest adapter key accepted in a file (a longer one is a corrupt file).
const MAX_KEY: usize = 4096;

/// What became of the pipeline cache of a context.
///
/// ```
/// let state = lumbre_gpu::PipelineCacheState::Off;
/// assert_eq!(state.to_string(), "off");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PipelineCacheState {
    /// No folder was given (or `LUMBRE_PIPELINE_CACHE=off`).
    Off,
    /// The adapter or its backend cannot keep pipeline caches (only Vulkan can), or the
    /// cache could not be made.
    Unsupported {
        /// Why.
        reason: String,
    },
    /// Pipelines are compiled through a cache tied to `file`.
    On {
        /// The cache file (it may not exist yet).
        file: PathBuf,
        /// Bytes of cached data read from it at start (0: a cold start).
        loaded: u64,
    },
}

impl std::fmt::Display for PipelineCacheState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineCacheState::Off => write!(f, "off"),
            PipelineCacheState::Unsupported { reason } => write!(f, "unsupported ({reason})"),
            PipelineCacheState::On { file, loaded: 0 } => write!(f, "{} (cold: nothing cached yet)", file.display()),
            PipelineCacheState::On { file, loaded } => write!(f, "{} ({loaded} bytes loaded)", file.display()),
        }
    }
}

/// A live pipeline cache and the file it came from and goes back to.
pub(crate) struct DiskCache {
    pub(crate) cache: wgpu::PipelineCache,
    file: PathBuf,
    key: String,
    /// Whether pipelines were compiled since the file was read or last written.
    dirty: AtomicBool,
    /// Saves made, for unique temporary names.
    saves: AtomicU64,
}

/// FNV-1a, 64 bits: a checksum that catches a damaged file (not a defence against a
/// deliberate forgery; the file lives in the user's own cache folder).
fn fnv1a(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The adapter and driver a cache belongs to: everything that, changed, makes the driver's
/// compiled code useless or wrong.
pub(crate) fn adapter_key(info: &wgpu::AdapterInfo) -> String {
    format!(
        "backend={:?};vendor={:#06x};device={:#06x};name={};driver={};driver_info={};wgpu=30",
        info.backend, info.vendor, info.device, info.name, info.driver, info.driver_info
    )
}

/// The file name for `key`: readable ids, and a hash of the whole key.
pub(crate) fn file_name(info: &wgpu::AdapterInfo, key: &str) -> String {
    format!(
        "pipelines-{}-{:04x}-{:04x}-{:016x}.bin",
        format!("{:?}", info.backend).to_lowercase(),
        info.vendor,
        info.device,
        fnv1a(key.as_bytes())
    )
}

/// Our file: header, then wgpu's data.
pub(crate) fn encode(key: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FIXED_HEADER + key.len() + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(data).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(data);
    out
}

/// wgpu's data from our file, if the file is whole and made for `key`; else why not.
pub(crate) fn decode<'a>(key: &str, file: &'a [u8]) -> std::result::Result<&'a [u8], String> {
    if file.len() < FIXED_HEADER {
        return Err(format!("{} bytes, shorter than the header", file.len()));
    }
    if &file[..8] != MAGIC {
        return Err("not a Lumbre pipeline cache (wrong magic bytes)".into());
    }
    let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().expect("8 bytes"));
    if u32_at(8) != FORMAT {
        return Err(format!("format {} (this build writes {FORMAT})", u32_at(8)));
    }
    let key_len = u32_at(12) as usize;
    if key_len > MAX_KEY {
        return Err(format!("adapter key of {key_len} bytes"));
    }
    let (data_len, checksum) = (u64_at(16), u64_at(24));
    let rest = &file[FIXED_HEADER..];
    if (rest.len() as u64) != key_len as u64 + data_len {
        return Err(format!("{} bytes after the header, the header says {}", rest.len(), key_len as u64 + data_len));
    }
    let (file_key, data) = rest.split_at(key_len);
    if file_key != key.as_bytes() {
        return Err("made for another adapter or driver".into());
    }
    if fnv1a(data) != checksum {
        return Err("checksum mismatch (the file is damaged)".into());
    }
    Ok(data)
}

/// Prints a pipeline cache warning (never fatal).
fn warn(file: &Path, what: &str) {
    eprintln!("warning: pipeline cache {}: {what}; continuing without it", file.display());
}

/// Creates the wgpu pipeline cache, seeded with `data` when there is some.
///
/// wgpu's `create_pipeline_cache` is `unsafe` because wgpu cannot prove that `data` came
/// from `PipelineCache::get_data` on a compatible adapter: a forged or damaged cache reaches
/// the driver.
#[allow(unsafe_code)]
fn create_cache(device: &wgpu::Device, data: Option<&[u8]>) -> wgpu::PipelineCache {
    let desc = wgpu::PipelineCacheDescriptor { label: Some("lumbre pipelines"), data, fallback: true };
    // SAFETY: `data` is `None`, or it is the payload of a file that this module wrote from
    // `PipelineCache::get_data` and that `decode` accepted: our magic and format, the exact
    // adapter key (backend, vendor and device ids, adapter name, driver name and version, the
    // wgpu major version), the exact length and an FNV-1a checksum of the payload, so a
    // truncated, extended, damaged or foreign file never gets here (files are written
    // whole to a temporary name and renamed, so a torn write is never read). wgpu then
    // checks its own header (magic, header version, pointer width, backend, vendor and
    // device ids, driver version, exact data length), and with `fallback: true` it drops data
    // it cannot use instead of failing; the Vulkan driver checks its header (vendor, device
    // and pipeline cache UUID) last and ignores data that is not its own. What stays
    // trusted is that nobody forged a file with a valid checksum in the user's own cache
    // folder, the same trust the driver places in its own shader cache there.
    unsafe { device.create_pipeline_cache(&desc) }
}

impl DiskCache {
    /// Opens the cache of the adapter in `dir` (reading the file if there is one); the state
    /// says what happened. Never fails: problems are warnings and leave no cache.
    pub(crate) fn open(
        device: &wgpu::Device,
        info: &wgpu::AdapterInfo,
        dir: &Path,
    ) -> (Option<DiskCache>, PipelineCacheState) {
        if wgpu::util::pipeline_cache_key(info).is_none() {
            let reason = format!("the {:?} backend keeps no pipeline cache (Vulkan does)", info.backend);
            return (None, PipelineCacheState::Unsupported { reason });
        }
        if !device.features().contains(wgpu::Features::PIPELINE_CACHE) {
            let reason = "the device lacks the PIPELINE_CACHE feature".to_string();
            return (None, PipelineCacheState::Unsupported { reason });
        }
        let key = adapter_key(info);
        let file = dir.join(file_name(info, &key));
        let bytes = match std::fs::read(&file) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                warn(&file, &format!("cannot be read: {e}"));
                None
            }
        };
        let data = bytes.as_deref().and_then(|b| match decode(&key, b) {
            Ok(d) => Some(d),
            Err(why) => {
                warn(&file, &format!("ignored: {why}"));
                None
            }
        });
        let cache = match Self::create(device, data) {
            Ok(c) => c,
            Err(e) => {
                warn(&file, &format!("its data was refused ({e})"));
                match Self::create(device, None) {
                    Ok(c) => c,
                    Err(e) => {
                        let reason = format!("the device could not make a pipeline cache: {e}");
                        return (None, PipelineCacheState::Unsupported { reason });
                    }
                }
            }
        };
        let loaded = data.map_or(0, |d| d.len() as u64);
        let state = PipelineCacheState::On { file: file.clone(), loaded };
        let disk = DiskCache { cache, file, key, dirty: AtomicBool::new(false), saves: AtomicU64::new(0) };
        (Some(disk), state)
    }

    /// The cache, or the validation or memory error its creation raised.
    fn create(device: &wgpu::Device, data: Option<&[u8]>) -> Result<wgpu::PipelineCache> {
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let cache = create_cache(device, data);
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match v.or(o) {
            Some(e) => Err(Error::from(e)),
            None => Ok(cache),
        }
    }

    /// Notes that a pipeline was compiled through the cache.
    pub(crate) fn touch(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Writes the cache's data to its file (a temporary file renamed over it) if pipelines
    /// were compiled since it was read or last written. `Ok(false)`: nothing to write.
    pub(crate) fn save(&self) -> std::io::Result<bool> {
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(false);
        }
        let Some(data) = self.cache.get_data() else { return Ok(false) };
        let result = self.write(&encode(&self.key, &data));
        if result.is_err() {
            // Try again at the next save.
            self.dirty.store(true, Ordering::Relaxed);
        }
        result.map(|()| true)
    }

    fn write(&self, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // A name no other process or save uses, in the same folder (so the rename is atomic).
        let n = self.saves.fetch_add(1, Ordering::Relaxed);
        let tmp = self.file.with_extension(format!("tmp-{}-{n}", std::process::id()));
        let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &self.file));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Saves, turning a failure into a warning (for drop).
    pub(crate) fn save_or_warn(&self) {
        if let Err(e) = self.save() {
            warn(&self.file, &format!("cannot be written: {e}"));
        }
    }
}

impl Gpu {
    /// What became of this context's pipeline cache (see
    /// [`GpuOptions::pipeline_cache`](crate::GpuOptions::pipeline_cache)).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// println!("pipeline cache: {}", gpu.pipeline_cache_state());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn pipeline_cache_state(&self) -> &PipelineCacheState {
        &self.0.cache_state
    }

    /// Writes the pipeline cache to its file now, if pipelines were compiled since it was
    /// read or last written (the context also does this when its last clone is dropped).
    /// Returns whether it wrote; `Ok(false)` also when there is no cache. A failure to write
    /// is an `Err` here (and only a warning on drop).
    ///
    /// ```no_run
    /// let opts = lumbre_gpu::GpuOptions { pipeline_cache: Some(std::env::temp_dir().join("lumbre-doc")), ..Default::default() };
    /// let gpu = lumbre_gpu::Gpu::with_options(&opts)?;
    /// gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main")?;
    /// let wrote = gpu.save_pipeline_cache()?;
    /// println!("wrote the cache: {wrote}");
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn save_pipeline_cache(&self) -> Result<bool> {
        match &self.0.disk_cache {
            None => Ok(false),
            Some(c) => c.save().map_err(|e| Error::Input(format!("pipeline cache {}: {e}", c.file.display()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_round_trip_and_damage_is_refused() {
        let key = "backend=Vulkan;vendor=0x10de";
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let file = encode(key, &data);
        assert_eq!(decode(key, &file).unwrap(), &data[..]);
        // Every kind of damage is refused with a reason, never passed on.
        assert!(decode("another adapter", &file).unwrap_err().contains("another adapter"));
        assert!(decode(key, &file[..file.len() - 1]).is_err(), "truncated");
        assert!(decode(key, &file[..10]).is_err(), "shorter than the header");
        let mut longer = file.clone();
        longer.push(0);
        assert!(decode(key, &longer).is_err(), "extended");
        let mut flipped = file.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(decode(key, &flipped).unwrap_err().contains("checksum"));
        let mut magic = file.clone();
        magic[0] = b'X';
        assert!(decode(key, &magic).unwrap_err().contains("magic"));
        let mut format = file;
        format[8] = 9;
        assert!(decode(key, &format).unwrap_err().contains("format"));
    }

    #[test]
    fn keys_and_names_tell_adapters_and_drivers_apart() {
        let info = |driver_info: &str| wgpu::AdapterInfo {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: 0x10005,
            driver: "llvmpipe".into(),
            driver_info: driver_info.into(),
            ..wgpu::AdapterInfo::new(wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan)
        };
        let (a, b) = (info("Mesa 22.3.6"), info("Mesa 23.0.0"));
        assert_ne!(adapter_key(&a), adapter_key(&b));
        assert_ne!(file_name(&a, &adapter_key(&a)), file_name(&b, &adapter_key(&b)));
        assert!(file_name(&a, &adapter_key(&a)).starts_with("pipelines-vulkan-10005-0000-"));
    }
}
