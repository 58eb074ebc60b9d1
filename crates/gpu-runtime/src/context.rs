//! The headless GPU context: adapter choice, device creation, error capture.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::pipeline_cache::{DiskCache, PipelineCacheState};
use crate::testing::Capabilities;
use crate::transfers::Counters;
use crate::{Error, Kernel, Result};

/// Optional features Lumbre uses when the adapter has them. Every code path that uses one
/// has a fallback without it.
pub const OPTIONAL_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SUBGROUP_BARRIER)
    .union(wgpu::Features::SHADER_INT64)
    .union(wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX)
    .union(wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS)
    .union(wgpu::Features::PIPELINE_CACHE);

/// Features a device must have for Lumbre: none, since every feature it uses is optional
/// ([`OPTIONAL_FEATURES`]) and has a fallback. [`Gpu::from_wgpu`] checks a caller's device
/// against it.
///
/// ```
/// assert!(lumbre_gpu::REQUIRED_FEATURES.is_empty());
/// ```
pub const REQUIRED_FEATURES: wgpu::Features = wgpu::Features::empty();

/// The compute limits every Lumbre kernel fits (a test compiles each on a device with exactly
/// these): WebGPU's defaults, with room for the 14 storage buffers of the widest kernel (the path tracer). Limits a compute kernel never meets (textures, vertices,
/// colour attachments) are left at their lowest. [`Gpu::from_wgpu`] checks a caller's device
/// against it.
///
/// ```
/// let needed = lumbre_gpu::REQUIRED_LIMITS;
/// assert_eq!(needed.max_compute_invocations_per_workgroup, 256);
/// // GLES-class limits (4 storage buffers per stage) are too low.
/// assert!(!needed.check_limits(&wgpu::Limits::downlevel_defaults()));
/// ```
pub const REQUIRED_LIMITS: wgpu::Limits = {
    let webgpu = wgpu::Limits::defaults();
    wgpu::Limits {
        max_bind_groups: 1,
        max_storage_buffers_per_shader_stage: 14,
        max_uniform_buffers_per_shader_stage: webgpu.max_uniform_buffers_per_shader_stage,
        max_uniform_buffer_binding_size: webgpu.max_uniform_buffer_binding_size,
        max_storage_buffer_binding_size: webgpu.max_storage_buffer_binding_size,
        max_buffer_size: webgpu.max_buffer_size,
        min_uniform_buffer_offset_alignment: webgpu.min_uniform_buffer_offset_alignment,
        min_storage_buffer_offset_alignment: webgpu.min_storage_buffer_offset_alignment,
        max_compute_workgroup_storage_size: webgpu.max_compute_workgroup_storage_size,
        max_compute_invocations_per_workgroup: webgpu.max_compute_invocations_per_workgroup,
        max_compute_workgroup_size_x: webgpu.max_compute_workgroup_size_x,
        max_compute_workgroup_size_y: webgpu.max_compute_workgroup_size_y,
        max_compute_workgroup_size_z: webgpu.max_compute_workgroup_size_z,
        max_compute_workgroups_per_dimension: webgpu.max_compute_workgroups_per_dimension,
        ..wgpu::Limits::downlevel_webgl2_defaults()
    }
};

/// How to build a [`Gpu`]. [`GpuOptions::from_env`] is what [`Gpu::new`] uses.
///
/// ```
/// let opts = lumbre_gpu::GpuOptions { adapter: Some("llvmpipe".into()), ..Default::default() };
/// assert_eq!(opts.adapter.as_deref(), Some("llvmpipe"));
/// ```
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Which adapter to open, read as [`AdapterChoice`] reads it: `#N` or a bare number `N`
    /// is the adapter at position `N` (from 0) of [`adapters`]; anything else picks the
    /// first adapter whose name contains it (case-insensitive). `None`: prefer a discrete
    /// GPU, then integrated, virtual, and CPU adapters.
    pub adapter: Option<String>,
    /// Lower `max_storage_buffer_binding_size` to this many bytes (tests use it to force the
    /// paths that split large buffers). `None`: the adapter's own limit.
    pub max_binding_size: Option<u64>,
    /// Features to leave off even if the adapter has them (tests use it to force fallbacks).
    pub disable_features: wgpu::Features,
    /// How long to wait for GPU work before giving up with [`Error::Timeout`].
    pub timeout: Duration,
    /// The folder of the on-disk pipeline cache: the driver's compiled pipelines are kept
    /// there between runs (one file per adapter and driver), which shortens a cold start.
    /// `None`: no cache. Only Vulkan keeps one; elsewhere this is ignored (see
    /// [`Gpu::pipeline_cache_state`]). Reading or writing the file never fails a run: a
    /// problem is a warning on stderr and the run goes on without the cache.
    pub pipeline_cache: Option<PathBuf>,
}

impl Default for GpuOptions {
    fn default() -> Self {
        Self {
            adapter: None,
            max_binding_size: None,
            disable_features: wgpu::Features::empty(),
            timeout: Duration::from_secs(600),
            pipeline_cache: None,
        }
    }
}

/// The environment variable that places the pipeline cache: a folder, or `off`.
///
/// ```
/// assert_eq!(lumbre_gpu::PIPELINE_CACHE_ENV, "LUMBRE_PIPELINE_CACHE");
/// ```
pub const PIPELINE_CACHE_ENV: &str = "LUMBRE_PIPELINE_CACHE";

impl GpuOptions {
    /// What an application gets ([`Gpu::new`] and the `lumbre` tool use it): the defaults,
    /// with `adapter` from `LUMBRE_ADAPTER`, and the pipeline cache in the folder
    /// `LUMBRE_PIPELINE_CACHE` names, none if it is `off`, and the user's cache folder
    /// ([`user_cache_dir`]) if it is unset.
    ///
    /// ```
    /// let opts = lumbre_gpu::GpuOptions::from_env();
    /// assert!(opts.max_binding_size.is_none());
    /// if std::env::var("LUMBRE_PIPELINE_CACHE").is_ok_and(|v| v == "off") {
    ///     assert!(opts.pipeline_cache.is_none());
    /// }
    /// ```
    pub fn from_env() -> Self {
        let adapter = std::env::var("LUMBRE_ADAPTER").ok().filter(|s| !s.is_empty());
        let pipeline_cache = cache_setting(std::env::var_os(PIPELINE_CACHE_ENV), user_cache_dir());
        Self { adapter, pipeline_cache, ..Self::default() }
    }

    /// [`adapter`](GpuOptions::adapter) read as an [`AdapterChoice`]: `None` when unset, an
    /// error ([`Error::InvalidAdapterChoice`]) when it is empty or `#` is followed by
    /// anything but an index.
    ///
    /// ```
    /// use lumbre_gpu::{AdapterChoice, GpuOptions};
    /// let second = GpuOptions { adapter: Some("#1".into()), ..Default::default() };
    /// assert_eq!(second.adapter_choice()?, Some(AdapterChoice::Index(1)));
    /// assert_eq!(GpuOptions::default().adapter_choice()?, None);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn adapter_choice(&self) -> Result<Option<AdapterChoice>> {
        self.adapter.as_deref().map(str::parse).transpose()
    }
}

/// Which adapter to open, as `LUMBRE_ADAPTER`, [`GpuOptions::adapter`] and the `lumbre`
/// tool's `--adapter` give it: `#N` or a bare number `N` is the adapter at position `N`
/// (from 0) of [`adapters`], the order `lumbre info` lists them in; anything else is a part
/// of the adapter's name. Two identical GPUs share a name, so only an index tells them
/// apart; a value of digits only is therefore always an index, never a name.
///
/// ```
/// use lumbre_gpu::AdapterChoice;
/// assert_eq!("1".parse::<AdapterChoice>()?, AdapterChoice::Index(1));
/// assert_eq!("#1".parse::<AdapterChoice>()?, AdapterChoice::Index(1));
/// assert_eq!("llvmpipe".parse::<AdapterChoice>()?, AdapterChoice::Name("llvmpipe".into()));
/// assert!("#x".parse::<AdapterChoice>().is_err());
/// // Displayed as it is written, so it fits back into `GpuOptions::adapter`.
/// assert_eq!(AdapterChoice::Index(1).to_string(), "#1");
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AdapterChoice {
    /// The adapter at this position (from 0) of [`adapters`].
    Index(usize),
    /// The first adapter whose name contains this (case-insensitive).
    Name(String),
}

impl std::str::FromStr for AdapterChoice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let invalid = |reason: &str| Error::InvalidAdapterChoice { value: s.to_string(), reason: reason.to_string() };
        let is_number = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        let index = |n: &str| n.parse().map(AdapterChoice::Index).map_err(|_| invalid("the index is too large"));
        match s.strip_prefix('#') {
            Some(n) if is_number(n) => index(n),
            Some(_) => Err(invalid("`#` must be followed by an adapter's index, a whole number from 0")),
            None if s.is_empty() => Err(invalid("it is empty; give an adapter's index or a part of its name")),
            None if is_number(s) => index(s),
            None => Ok(AdapterChoice::Name(s.to_string())),
        }
    }
}

impl std::fmt::Display for AdapterChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdapterChoice::Index(i) => write!(f, "#{i}"),
            AdapterChoice::Name(name) => f.write_str(name),
        }
    }
}

impl AdapterChoice {
    /// The position in `names` (every adapter's name, in [`adapters`]' order) of the adapter
    /// this choice picks; an error listing the adapters with their indices when it picks
    /// none.
    ///
    /// ```
    /// use lumbre_gpu::AdapterChoice;
    /// let names = ["NVIDIA H100".to_string(), "NVIDIA H100".to_string()];
    /// assert_eq!(AdapterChoice::Index(1).position(&names)?, 1);
    /// assert_eq!(AdapterChoice::Name("h100".into()).position(&names)?, 0);
    /// let past = AdapterChoice::Index(2).position(&names).unwrap_err();
    /// assert!(past.to_string().contains("#0 NVIDIA H100, #1 NVIDIA H100"), "{past}");
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn position(&self, names: &[String]) -> Result<usize> {
        let available = || names.to_vec();
        match self {
            AdapterChoice::Index(i) if *i < names.len() => Ok(*i),
            AdapterChoice::Index(i) => Err(Error::AdapterIndexOutOfRange { index: *i, available: available() }),
            AdapterChoice::Name(part) => {
                let needle = part.to_lowercase();
                names
                    .iter()
                    .position(|n| n.to_lowercase().contains(&needle))
                    .ok_or_else(|| Error::AdapterNotFound { filter: part.clone(), available: available() })
            }
        }
    }
}

/// The pipeline cache folder for a value of `LUMBRE_PIPELINE_CACHE`: `off` none, a folder
/// itself, unset or empty `default`.
fn cache_setting(value: Option<std::ffi::OsString>, default: Option<PathBuf>) -> Option<PathBuf> {
    match value.filter(|v| !v.is_empty()) {
        Some(v) if v.eq_ignore_ascii_case("off") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => default,
    }
}

/// The user's cache folder for Lumbre: `$XDG_CACHE_HOME/lumbre`, else `$HOME/.cache/lumbre`
/// (`None` when neither variable holds an absolute path).
///
/// ```
/// if let Some(dir) = lumbre_gpu::user_cache_dir() {
///     assert!(dir.is_absolute() && dir.ends_with("lumbre"));
/// }
/// ```
pub fn user_cache_dir() -> Option<PathBuf> {
    let absolute = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute());
    absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache"))).map(|d| d.join("lumbre"))
}

/// One adapter as the system reports it.
///
/// ```no_run
/// for a in lumbre_gpu::adapters() {
///     println!("{} ({:?}, {:?})", a.name, a.device_type, a.backend);
/// }
/// ```
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    /// Adapter name, e.g. "NVIDIA H200" or "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// Discrete, integrated, virtual, CPU or other.
    pub device_type: wgpu::DeviceType,
    /// Vulkan, Metal, DX12.
    pub backend: wgpu::Backend,
    /// Driver name and version.
    pub driver: String,
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    desc.flags = wgpu::InstanceFlags::from_env_or_default();
    wgpu::Instance::new(desc)
}

fn summary(info: &wgpu::AdapterInfo) -> AdapterSummary {
    AdapterSummary {
        name: info.name.clone(),
        device_type: info.device_type,
        backend: info.backend,
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
    }
}

/// Every adapter wgpu can see, in the order it reports them: an adapter's position here is
/// its index for [`AdapterChoice::Index`] (`LUMBRE_ADAPTER=#1`).
///
/// ```no_run
/// for (i, a) in lumbre_gpu::adapters().iter().enumerate() {
///     println!("#{i} {}", a.name);
/// }
/// ```
pub fn adapters() -> Vec<AdapterSummary> {
    let adapters = pollster::block_on(instance().enumerate_adapters(wgpu::Backends::all()));
    adapters.iter().map(|a| summary(&a.get_info())).collect()
}

fn rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

/// The hint printed when no adapter exists.
pub const NO_ADAPTER_HINT: &str = "install a Vulkan driver (on Debian/Ubuntu without a GPU: \
    `apt-get install mesa-vulkan-drivers libvulkan1` gives lavapipe, a Vulkan device on the CPU), \
    or run the CPU path with `--backend cpu`";

pub(crate) struct Inner {
    pub(crate) adapter: wgpu::Adapter,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: wgpu::AdapterInfo,
    /// The adapter's position in [`adapters`]; `None` for an application's own device.
    pub(crate) index: Option<usize>,
    pub(crate) limits: wgpu::Limits,
    /// The device's features less those the options turned off.
    pub(crate) features: wgpu::Features,
    pub(crate) timeout: Duration,
    pub(crate) kernels: Mutex<HashMap<(&'static str, &'static str), Kernel>>,
    pub(crate) compiles: AtomicUsize,
    pub(crate) transfers: Counters,
    pub(crate) disk_cache: Option<DiskCache>,
    pub(crate) cache_state: PipelineCacheState,
    /// What the test probes found, once asked ([`crate::testing::capabilities`]).
    pub(crate) capabilities: OnceLock<Capabilities>,
    lost: Arc<Mutex<Option<String>>>,
    uncaptured: Arc<Mutex<Vec<String>>>,
}

impl Drop for Inner {
    /// Keeps the pipelines compiled by this context for the next run, unless the device was
    /// lost: it has nothing to give, and drivers may crash when asked for its cache's data.
    fn drop(&mut self) {
        let lost = self.lost.lock().map_or(true, |l| l.is_some());
        if let Some(c) = &self.disk_cache
            && !lost
        {
            c.save_or_warn();
        }
    }
}

/// A headless GPU context: adapter, device, queue and the kernel cache.
///
/// Cheap to clone (an `Arc`). Which path an algorithm runs is chosen per call with
/// [`Backend`](crate::Backend); this type only says which adapter the GPU path uses.
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// println!("running on {}", gpu.adapter_name());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone)]
pub struct Gpu(pub(crate) Arc<Inner>);

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("adapter", &self.0.info.name).finish()
    }
}

impl Gpu {
    /// Opens the adapter chosen by `LUMBRE_ADAPTER` (an index, `#1`, or a part of a name;
    /// see [`AdapterChoice`]), else the best one present.
    pub fn new() -> Result<Self> {
        Self::with_options(&GpuOptions::from_env())
    }

    /// Opens an adapter with explicit options. A [`GpuOptions::adapter`] that is not a
    /// valid [`AdapterChoice`] is an error naming the value, and one that picks no adapter
    /// an error listing the adapters with their indices.
    ///
    /// ```
    /// let opts = lumbre_gpu::GpuOptions { adapter: Some("no such adapter".into()), ..Default::default() };
    /// assert!(lumbre_gpu::Gpu::with_options(&opts).is_err());
    /// let past_the_end = lumbre_gpu::GpuOptions { adapter: Some("#999".into()), ..Default::default() };
    /// assert!(lumbre_gpu::Gpu::with_options(&past_the_end).is_err());
    /// ```
    pub fn with_options(opts: &GpuOptions) -> Result<Self> {
        let choice = opts.adapter_choice()?;
        let instance = instance();
        let mut found = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        if found.is_empty() {
            return Err(Error::NoAdapter { hint: NO_ADAPTER_HINT.to_string() });
        }
        let index = match choice {
            Some(choice) => choice.position(&found.iter().map(|a| a.get_info().name).collect::<Vec<_>>())?,
            // The first of the best kind present, in enumeration order.
            None => (0..found.len()).min_by_key(|&i| rank(found[i].get_info().device_type)).unwrap_or(0),
        };
        let adapter = found.swap_remove(index);
        let info = adapter.get_info();
        let features = adapter.features() & OPTIONAL_FEATURES & !opts.disable_features;
        let desc = wgpu::DeviceDescriptor {
            label: Some("lumbre"),
            required_features: features,
            required_limits: adapter.limits(),
            memory_hints: wgpu::MemoryHints::Performance,
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::RequestDevice(format!("{}: {e}", info.name)))?;
        // wgpu panics on errors nobody captured; a device of our own records them instead.
        let (lost, uncaptured) = capture_errors(&device);
        Ok(Self::assemble(adapter, Some(index), device, queue, opts, lost, uncaptured))
    }

    /// A context on a device the application made itself (a game engine's or an editor's),
    /// with [`GpuOptions::from_env`]'s timeout and pipeline cache; see
    /// [`from_wgpu_with_options`](Gpu::from_wgpu_with_options).
    ///
    /// ```no_run
    /// let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    /// let adapter = pollster::block_on(instance.request_adapter(&Default::default())).unwrap();
    /// let desc = wgpu::DeviceDescriptor { required_limits: adapter.limits(), ..Default::default() };
    /// let (device, queue) = pollster::block_on(adapter.request_device(&desc)).unwrap();
    /// let gpu = lumbre_gpu::Gpu::from_wgpu(adapter, device, queue)?;
    /// let values = gpu.upload(&[1u32, 2, 3])?;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn from_wgpu(adapter: wgpu::Adapter, device: wgpu::Device, queue: wgpu::Queue) -> Result<Self> {
        Self::from_wgpu_with_options(adapter, device, queue, &GpuOptions::from_env())
    }

    /// A context on the application's own `device` and `queue` (made from `adapter`), with
    /// `opts` (its `adapter` is ignored). Fails with [`Error::UnsuitableDevice`] naming every
    /// feature of [`REQUIRED_FEATURES`] the device lacks and every limit below
    /// [`REQUIRED_LIMITS`], with the value needed and the device's. Lumbre uses the
    /// [`OPTIONAL_FEATURES`] the application enabled, and leaves the device's error and
    /// device-lost callbacks to the application: its own work runs inside error scopes.
    ///
    /// ```
    /// # let Some(mine) = lumbre_gpu::testing::test_gpu(wgpu::Features::empty()) else { return Ok(()) };
    /// # let (adapter, device, queue) = (mine.wgpu_adapter().clone(), mine.device().clone(), mine.queue().clone());
    /// let opts = lumbre_gpu::GpuOptions { pipeline_cache: None, ..Default::default() };
    /// let gpu = lumbre_gpu::Gpu::from_wgpu_with_options(adapter, device, queue, &opts)?;
    /// assert_eq!(gpu.download(&gpu.upload(&[1u32, 2, 3])?)?, vec![1, 2, 3]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn from_wgpu_with_options(
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        opts: &GpuOptions,
    ) -> Result<Self> {
        let missing = shortfalls(device.features(), &device.limits(), REQUIRED_FEATURES, &REQUIRED_LIMITS);
        if !missing.is_empty() {
            return Err(Error::UnsuitableDevice { adapter: adapter.get_info().name, missing });
        }
        let (lost, uncaptured) = (Arc::default(), Arc::default());
        Ok(Self::assemble(adapter, None, device, queue, opts, lost, uncaptured))
    }

    /// The context around a device, whoever made it: limits lowered as `opts` asks, the
    /// pipeline cache opened, the kernel cache and transfer counters empty.
    fn assemble(
        adapter: wgpu::Adapter,
        index: Option<usize>,
        device: wgpu::Device,
        queue: wgpu::Queue,
        opts: &GpuOptions,
        lost: Arc<Mutex<Option<String>>>,
        uncaptured: Arc<Mutex<Vec<String>>>,
    ) -> Self {
        let info = adapter.get_info();
        let mut limits = device.limits();
        if let Some(max) = opts.max_binding_size {
            limits.max_storage_buffer_binding_size = limits.max_storage_buffer_binding_size.min(max);
        }
        let features = device.features() & !opts.disable_features;
        let (disk_cache, cache_state) = match &opts.pipeline_cache {
            Some(dir) => DiskCache::open(&device, &info, dir),
            None => (None, PipelineCacheState::Off),
        };
        Gpu(Arc::new(Inner {
            adapter,
            device,
            queue,
            info,
            index,
            limits,
            features,
            timeout: opts.timeout,
            kernels: Mutex::new(HashMap::new()),
            compiles: AtomicUsize::new(0),
            transfers: Counters::default(),
            disk_cache,
            cache_state,
            capabilities: OnceLock::new(),
            lost,
            uncaptured,
        }))
    }

    /// The wgpu adapter the device was made from.
    pub fn wgpu_adapter(&self) -> &wgpu::Adapter {
        &self.0.adapter
    }

    /// The wgpu device.
    pub fn device(&self) -> &wgpu::Device {
        &self.0.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.0.queue
    }

    /// The adapter's name.
    pub fn adapter_name(&self) -> &str {
        &self.0.info.name
    }

    /// The adapter's position in [`adapters`] (its index for `LUMBRE_ADAPTER=#N`); `None`
    /// for a context on an application's own device ([`Gpu::from_wgpu`]).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let i = gpu.adapter_index().expect("Gpu::new enumerates the adapters");
    /// assert_eq!(lumbre_gpu::adapters()[i].name, gpu.adapter_name());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn adapter_index(&self) -> Option<usize> {
        self.0.index
    }

    /// The choice that opens this adapter again: its index when known (the only way to
    /// tell identical GPUs apart), else its name.
    ///
    /// ```
    /// # let Some(gpu) = lumbre_gpu::testing::test_gpu(wgpu::Features::empty()) else { return Ok(()) };
    /// let opts = lumbre_gpu::GpuOptions { adapter: Some(gpu.adapter_choice().to_string()), ..Default::default() };
    /// let again = lumbre_gpu::Gpu::with_options(&opts)?;
    /// assert_eq!(again.adapter_index(), gpu.adapter_index());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn adapter_choice(&self) -> AdapterChoice {
        match self.0.index {
            Some(i) => AdapterChoice::Index(i),
            None => AdapterChoice::Name(self.0.info.name.clone()),
        }
    }

    /// Name, type, backend and driver of the adapter in use.
    pub fn adapter(&self) -> AdapterSummary {
        summary(&self.0.info)
    }

    /// Full wgpu adapter info.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.0.info
    }

    /// Limits in force (the adapter's own, possibly lowered by [`GpuOptions::max_binding_size`]).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.0.limits
    }

    /// The optional features enabled on this device (and not turned off by the options).
    pub fn features(&self) -> wgpu::Features {
        self.0.features
    }

    /// Whether all of `f` are enabled.
    pub fn has(&self, f: wgpu::Features) -> bool {
        self.features().contains(f)
    }

    /// Whether subgroup operations are available (and not disabled).
    pub fn has_subgroups(&self) -> bool {
        self.has(wgpu::Features::SUBGROUP)
    }

    /// The adapter's subgroup size range (min, max); meaningful only with subgroups.
    pub fn subgroup_size_range(&self) -> (u32, u32) {
        let a = self.0.adapter.get_info();
        (a.subgroup_min_size, a.subgroup_max_size)
    }

    /// How many shader pipelines this context has compiled (the cache makes this one per
    /// shader entry point).
    pub fn compiled_pipelines(&self) -> usize {
        self.0.compiles.load(Ordering::Relaxed)
    }

    /// Fails if the device was lost or an error escaped every error scope.
    pub fn check_health(&self) -> Result<()> {
        if let Ok(l) = self.0.lost.lock()
            && let Some(msg) = l.as_ref()
        {
            return Err(Error::DeviceLost(msg.clone()));
        }
        if let Ok(mut v) = self.0.uncaptured.lock()
            && !v.is_empty()
        {
            let all = v.join("; ");
            v.clear();
            return Err(Error::Validation(all));
        }
        Ok(())
    }

    /// Runs `f` inside validation and out-of-memory error scopes; a captured error wins over
    /// `f`'s own result.
    pub fn scoped<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        self.check_health()?;
        let oom = self.0.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.0.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out = f();
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        if let Some(e) = v.or(o) {
            return Err(e.into());
        }
        self.check_health()?;
        out
    }

    /// Blocks until all submitted work is done, or the context's timeout passes.
    pub fn wait(&self) -> Result<()> {
        let poll = wgpu::PollType::Wait { submission_index: None, timeout: Some(self.0.timeout) };
        match self.0.device.poll(poll) {
            Ok(_) => self.check_health(),
            Err(wgpu::PollError::Timeout) => Err(Error::Timeout(self.0.timeout)),
            Err(e) => {
                self.check_health()?;
                Err(Error::DeviceLost(e.to_string()))
            }
        }
    }
}

/// Records the device's loss and the errors no error scope captured, which wgpu would
/// otherwise panic on; [`Gpu::check_health`] reports them.
#[allow(clippy::type_complexity)]
fn capture_errors(device: &wgpu::Device) -> (Arc<Mutex<Option<String>>>, Arc<Mutex<Vec<String>>>) {
    let lost = Arc::new(Mutex::new(None));
    let lost_cb = lost.clone();
    device.set_device_lost_callback(move |reason, msg| {
        if let Ok(mut l) = lost_cb.lock() {
            *l = Some(format!("{reason:?}: {msg}"));
        }
    });
    let uncaptured = Arc::new(Mutex::new(Vec::new()));
    let sink = uncaptured.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        if let Ok(mut v) = sink.lock() {
            v.push(e.to_string());
        }
    }));
    (lost, uncaptured)
}

/// Each of `features` a device with `has` lacks and each of `limits` its `allows` falls
/// short of, as "what: needed, has" lines.
fn shortfalls(
    has: wgpu::Features,
    allows: &wgpu::Limits,
    features: wgpu::Features,
    limits: &wgpu::Limits,
) -> Vec<String> {
    let mut missing: Vec<String> =
        (features - has).iter().map(|f| format!("feature {f:?}: needed, the device lacks it")).collect();
    limits.check_limits_with_fail_fn(allows, false, |name, needed, has| {
        missing.push(format!("limit {name}: needs {needed}, the device has {has}"));
    });
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_variable_names_a_folder_or_turns_the_cache_off() {
        let home = Some(PathBuf::from("/home/u/.cache/lumbre"));
        assert_eq!(cache_setting(None, home.clone()), home);
        assert_eq!(cache_setting(Some("".into()), home.clone()), home);
        assert_eq!(cache_setting(Some("off".into()), home.clone()), None);
        assert_eq!(cache_setting(Some("OFF".into()), home.clone()), None);
        assert_eq!(cache_setting(Some("/tmp/pc".into()), home), Some(PathBuf::from("/tmp/pc")));
        assert_eq!(cache_setting(None, None), None);
    }

    fn choice(s: &str) -> Result<AdapterChoice> {
        s.parse()
    }

    #[test]
    fn an_adapter_choice_is_an_index_with_or_without_hash_else_a_name() {
        assert_eq!(choice("1"), Ok(AdapterChoice::Index(1)));
        assert_eq!(choice("#1"), Ok(AdapterChoice::Index(1)));
        assert_eq!(choice("0"), Ok(AdapterChoice::Index(0)));
        assert_eq!(choice("#007"), Ok(AdapterChoice::Index(7)));
        assert_eq!(choice("llvmpipe"), Ok(AdapterChoice::Name("llvmpipe".into())));
        // Digits inside a name, or a sign, keep it a name.
        assert_eq!(choice("H100"), Ok(AdapterChoice::Name("H100".into())));
        assert_eq!(choice("+1"), Ok(AdapterChoice::Name("+1".into())));
        assert_eq!(choice(" 1"), Ok(AdapterChoice::Name(" 1".into())));
        for shown in [AdapterChoice::Index(3), AdapterChoice::Name("llvmpipe".into())] {
            assert_eq!(choice(&shown.to_string()), Ok(shown));
        }
    }

    #[test]
    fn a_malformed_adapter_choice_is_an_error_naming_the_value() {
        for bad in ["#x", "#", "#-1", "#1x", "# 1", ""] {
            match choice(bad) {
                Err(Error::InvalidAdapterChoice { value, .. }) => assert_eq!(value, bad),
                other => panic!("{bad:?}: expected an invalid choice, got {other:?}"),
            }
        }
        let e = choice("#x").unwrap_err().to_string();
        assert!(e.contains("\"#x\"") && e.contains("`#` must be followed by"), "{e}");
        let huge = choice("99999999999999999999999").unwrap_err().to_string();
        assert!(huge.contains("too large"), "{huge}");
    }

    #[test]
    fn an_index_picks_among_adapters_of_one_name() {
        let names = vec!["NVIDIA H100".to_string(), "NVIDIA H100".to_string(), "llvmpipe".to_string()];
        assert_eq!(AdapterChoice::Index(1).position(&names), Ok(1));
        assert_eq!(AdapterChoice::Name("h100".into()).position(&names), Ok(0));
        assert_eq!(AdapterChoice::Name("LLVM".into()).position(&names), Ok(2));
        let past = AdapterChoice::Index(5).position(&names).unwrap_err();
        assert_eq!(past, Error::AdapterIndexOutOfRange { index: 5, available: names.clone() });
        assert_eq!(past.to_string(), "no adapter #5; adapters present: #0 NVIDIA H100, #1 NVIDIA H100, #2 llvmpipe");
        let unknown = AdapterChoice::Name("radeon".into()).position(&names).unwrap_err().to_string();
        assert!(unknown.contains("\"radeon\"") && unknown.contains("#2 llvmpipe"), "{unknown}");
        assert!(AdapterChoice::Index(0).position(&[]).unwrap_err().to_string().ends_with("present: none"));
    }

    #[test]
    fn options_read_their_adapter_as_a_choice() {
        let opts = |a: Option<&str>| GpuOptions { adapter: a.map(String::from), ..GpuOptions::default() };
        assert_eq!(opts(None).adapter_choice(), Ok(None));
        assert_eq!(opts(Some("#2")).adapter_choice(), Ok(Some(AdapterChoice::Index(2))));
        assert_eq!(opts(Some("2")).adapter_choice(), Ok(Some(AdapterChoice::Index(2))));
        assert!(opts(Some("#x")).adapter_choice().is_err());
        // A malformed choice is refused before any adapter is looked at.
        assert!(matches!(Gpu::with_options(&opts(Some("#x"))), Err(Error::InvalidAdapterChoice { .. })));
    }

    #[test]
    fn a_shortfall_names_the_feature_or_limit_and_both_values() {
        let needed = wgpu::Limits { max_storage_buffers_per_shader_stage: 10, ..wgpu::Limits::downlevel_defaults() };
        let has = wgpu::Limits { max_storage_buffers_per_shader_stage: 4, ..needed.clone() };
        let features = wgpu::Features::SUBGROUP | wgpu::Features::SHADER_INT64;
        let missing = shortfalls(wgpu::Features::SHADER_INT64, &has, features, &needed);
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].contains("SUBGROUP"), "{missing:?}");
        assert_eq!(missing[1], "limit max_storage_buffers_per_shader_stage: needs 10, the device has 4");
        assert!(shortfalls(features, &needed, features, &needed).is_empty());
    }
}
