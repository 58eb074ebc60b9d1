//! Getting a GPU in tests, so that CI fails rather than skips when it has none.
//!
//! With `LUMBRE_REQUIRE_GPU=1` (set by `cargo xtask test` and CI), a test that asks for a
//! GPU and cannot get one panics; without it, the test prints why and skips its GPU part.
//! Tests that depend on how a device computes ask [`capabilities`], never its name. [`Rng`]
//! and [`TempDir`] are the tests' random inputs and scratch folders.

use std::path::{Path, PathBuf};
#[cfg(feature = "wgpu")]
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Transfers;
#[cfg(feature = "wgpu")]
use crate::{Gpu, GpuOptions};

/// Whether `LUMBRE_REQUIRE_GPU=1` is set.
pub fn gpu_required() -> bool {
    std::env::var("LUMBRE_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Opens a context with `opts` for a test needing `features`. `Ok(Some)` to run,
/// `Ok(None)` to skip (GPU not required), `Err` with the reason when it is required.
///
/// ```
/// use lumbre_gpu::{GpuOptions, testing::try_test_gpu};
/// let nothing = GpuOptions { adapter: Some("matches no adapter".into()), ..Default::default() };
/// assert!(try_test_gpu(&nothing, wgpu::Features::empty(), true).is_err());
/// assert!(try_test_gpu(&nothing, wgpu::Features::empty(), false).unwrap().is_none());
/// ```
#[cfg(feature = "wgpu")]
pub fn try_test_gpu(opts: &GpuOptions, features: wgpu::Features, required: bool) -> Result<Option<Gpu>, String> {
    let why = match Gpu::with_options(opts) {
        Ok(gpu) if gpu.has(features) => return Ok(Some(gpu)),
        Ok(gpu) => format!("adapter {} lacks {:?}", gpu.adapter_name(), features - gpu.features()),
        Err(e) => e.to_string(),
    };
    if required {
        Err(format!("LUMBRE_REQUIRE_GPU=1 but no usable GPU: {why}"))
    } else {
        eprintln!("skipping GPU part: {why} (set LUMBRE_REQUIRE_GPU=1 to make this a failure)");
        Ok(None)
    }
}

/// The shared test context (one device per test binary), or `None` to skip. Panics when
/// `LUMBRE_REQUIRE_GPU=1` and there is no adapter or it lacks `features`.
///
/// ```no_run
/// // in a test: names the features it needs
/// let Some(gpu) = lumbre_gpu::testing::test_gpu(wgpu::Features::empty()) else { return };
/// # let _ = gpu;
/// ```
#[cfg(feature = "wgpu")]
pub fn test_gpu(features: wgpu::Features) -> Option<Gpu> {
    static SHARED: OnceLock<Result<Gpu, String>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| Gpu::new().map_err(|e| e.to_string()));
    let outcome = match shared {
        Ok(gpu) if gpu.has(features) => return Some(gpu.clone()),
        Ok(gpu) => {
            let opts = GpuOptions { adapter: Some(gpu.adapter_choice().to_string()), ..GpuOptions::from_env() };
            try_test_gpu(&opts, features, gpu_required())
        }
        Err(_) => try_test_gpu(&GpuOptions::from_env(), features, gpu_required()),
    };
    match outcome {
        Ok(gpu) => gpu,
        Err(why) => panic!("{why}"),
    }
}

/// A context of its own for a test that counts transfers (the shared context's counters
/// move with every other test of the binary), or `None` to skip; panics like [`test_gpu`].
///
/// ```no_run
/// let Some(gpu) = lumbre_gpu::testing::own_gpu(wgpu::Features::empty()) else { return };
/// assert_eq!(gpu.transfers(), lumbre_gpu::Transfers::default());
/// ```
#[cfg(feature = "wgpu")]
pub fn own_gpu(features: wgpu::Features) -> Option<Gpu> {
    let opts = GpuOptions { pipeline_cache: None, ..GpuOptions::from_env() };
    try_test_gpu(&opts, features, gpu_required()).unwrap_or_else(|why| panic!("{why}"))
}

/// The largest upload that counts as a kernel's parameters (a uniform) rather than data.
///
/// ```
/// assert_eq!(lumbre_gpu::testing::PARAMS_BYTES, 256);
/// ```
pub const PARAMS_BYTES: u64 = 256;

/// Checks the transfers `moved` between a pipeline's first upload of its inputs and its
/// final download for a round trip: data read back and sent up again. Passes when at most
/// `reads` read-backs of data of at most `read_bytes` bytes in all happened (the few
/// scalars a pipeline may read to size its next stage) and every upload was no larger on
/// average than kernel parameters ([`PARAMS_BYTES`]). Timestamp read-backs are timing, not
/// data, and do not count. The error says what moved.
///
/// ```
/// use lumbre_gpu::{Traffic, Transfers, testing::between_stages};
/// let params_only = Transfers { uploads: Traffic { calls: 12, bytes: 12 * 48 }, ..Default::default() };
/// assert!(between_stages(&params_only, 0, 0).is_ok());
/// let sizes = Transfers { downloads: Traffic { calls: 2, bytes: 16 }, ..params_only };
/// assert!(between_stages(&sizes, 2, 16).is_ok());
/// // A buffer read back and sent up again.
/// let round_trip = Transfers {
///     uploads: Traffic { calls: 13, bytes: 12 * 48 + 40_000 },
///     downloads: Traffic { calls: 1, bytes: 40_000 },
///     ..Default::default()
/// };
/// assert!(between_stages(&round_trip, 2, 16).is_err());
/// ```
pub fn between_stages(moved: &Transfers, reads: u64, read_bytes: u64) -> Result<(), String> {
    let mut wrong = Vec::new();
    if moved.downloads.calls > reads || moved.downloads.bytes > read_bytes {
        wrong.push(format!(
            "{} read back between stages, more than {reads} reads of {read_bytes} bytes in all",
            moved.downloads
        ));
    }
    if moved.uploads.bytes > moved.uploads.calls * PARAMS_BYTES {
        wrong.push(format!("{} sent up between stages: more than kernel parameters", moved.uploads));
    }
    if wrong.is_empty() { Ok(()) } else { Err(format!("{}; all transfers: {moved}", wrong.join("; "))) }
}

/// How a device computes, as far as tests comparing it with the CPU care; found by running
/// the `runtime/probe` kernels once per context ([`capabilities`]).
#[cfg(feature = "wgpu")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// f32 operations round one by one as IEEE 754 says: no multiply and add fused into one
    /// rounding, no subnormal flushed to zero. Kernels written as their CPU twins then give
    /// the CPU's results bit for bit (lavapipe does; SPIR-V lets other drivers fuse, and
    /// NVIDIA's do).
    pub exact_f32: bool,
    /// The iterations after which the driver silently ends an invocation's loops (lavapipe:
    /// 65535, against runaway shaders), or `None` if a loop of [`PROBE_LOOP`] ran to the end.
    pub loop_limit: Option<u32>,
}

/// The iterations of the loop that [`Capabilities::loop_limit`] is probed with.
///
/// ```
/// assert!(lumbre_gpu::testing::PROBE_LOOP > 65535);
/// ```
#[cfg(feature = "wgpu")]
pub const PROBE_LOOP: u32 = 1 << 18;

/// What `gpu` computes like: probed on its first call for a context, then cached. Panics
/// if the probe kernels cannot run (a test's GPU must).
///
/// ```no_run
/// use lumbre_gpu::{Tolerance, testing::{capabilities, test_gpu}};
/// let Some(gpu) = test_gpu(wgpu::Features::empty()) else { return };
/// let tol = if capabilities(&gpu).exact_f32 { Tolerance::EXACT } else { Tolerance::relative(1e-5) };
/// # let _ = tol;
/// ```
#[cfg(feature = "wgpu")]
pub fn capabilities(gpu: &Gpu) -> Capabilities {
    *gpu.0.capabilities.get_or_init(|| probe(gpu).unwrap_or_else(|e| panic!("the capability probe failed: {e}")))
}

/// Runs the probe kernels: `a * b + c` with `a = b = 1 + 2^-12` and `c = -(1 + 2^-11)`
/// (0 rounded step by step, 2^-24 fused), `2^-126 * 0.5` (a subnormal unless flushed), and
/// a loop of [`PROBE_LOOP`] iterations.
#[cfg(feature = "wgpu")]
fn probe(gpu: &Gpu) -> crate::Result<Capabilities> {
    let a = 1.0 + 2f32.powi(-12);
    let inputs = gpu.upload(&[a, a, -(1.0 + 2f32.powi(-11)), f32::MIN_POSITIVE, 0.5, PROBE_LOOP as f32])?;
    let results = gpu.zeroed::<u32>(4)?;
    let mut rec = gpu.recorder().without_timestamps();
    for entry in ["arithmetic", "loop_limit"] {
        let kernel = gpu.kernel(&crate::shaders::runtime::PROBE, entry)?;
        rec.dispatch(entry, &kernel, &[inputs.binding(), results.binding()], 1)?;
    }
    rec.submit()?;
    let r = gpu.download(&results)?;
    let unfused = r[0] == 0.0f32.to_bits();
    let subnormal = r[1] == (f32::MIN_POSITIVE * 0.5).to_bits();
    let ran_to_the_end = r[2] == PROBE_LOOP && r[3] == 1;
    Ok(Capabilities { exact_f32: unfused && subnormal, loop_limit: (!ran_to_the_end).then_some(r[2]) })
}

/// A small xorshift generator: reproducible test inputs without a dependency.
///
/// ```
/// use lumbre_gpu::testing::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// let x = a.f32();
/// assert!((0.0..1.0).contains(&x) && x == b.f32());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u32);

impl Rng {
    /// A generator for `seed` (any value, 0 included: the state is kept odd).
    pub fn new(seed: u32) -> Rng {
        Rng(seed.wrapping_mul(2_654_435_761) | 1)
    }

    /// The next 32 random bits.
    pub fn u32(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    /// Uniform in [0, 1), in steps of 2^-24.
    pub fn f32(&mut self) -> f32 {
        (self.u32() >> 8) as f32 / (1u32 << 24) as f32
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    /// Uniform in 0..n (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.f32() * n as f32) as usize).min(n - 1)
    }
}

/// A fresh, empty folder under the system's temporary folder, removed with what it holds
/// when dropped.
///
/// ```
/// let dir = lumbre_gpu::testing::TempDir::new("doc");
/// let file = dir.write("a.txt", "hello");
/// assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello");
/// assert_eq!(dir.files(), vec!["a.txt".to_string()]);
/// let path = dir.path().to_path_buf();
/// drop(dir);
/// assert!(!path.exists());
/// ```
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new folder named `lumbre-<tag>-<process>-<n>`, unique within the process.
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("lumbre-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        TempDir(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` inside the folder.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }

    /// `name` inside the folder, written with `contents`.
    pub fn write(&self, name: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// The names of the files in the folder, sorted.
    pub fn files(&self) -> Vec<String> {
        let entries = std::fs::read_dir(&self.0).unwrap_or_else(|e| panic!("read {}: {e}", self.0.display()));
        let mut names: Vec<String> =
            entries.map(|e| e.expect("a folder entry").file_name().to_string_lossy().into()).collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
