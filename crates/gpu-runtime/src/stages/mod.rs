//! Pipelines written once, for the GPU and for finding a wrong stage.
//!
//! A pipeline records its stages into [`Stages`]: buffers ([`Buf`]), uniforms ([`Uniform`]),
//! entry points ([`Stage`]), clears, copies, and dispatches, each dispatch with its CPU twin
//! (a function that computes what one dispatch computes, from the entry point's uniform and
//! the words of the buffers it binds, in binding order; [`get`], [`put`] and [`threads`]
//! help write them). The same pipeline function then runs two ways:
//!
//! - [`Stages::record`]: straight into a [`Recorder`], the GPU path; twins are ignored and
//!   nothing is copied, synchronised or allocated beyond what the dispatches need;
//! - [`Stages::staged`] and [`Stages::cpu`]: one stage at a time, each chosen stage as its
//!   twin and the others on the GPU (every stage as its twin without a GPU), buffers kept
//!   where they were last written and moved only when a stage on the other side binds
//!   them. A stage that gives a wrong result is found by moving stages to the CPU one at a
//!   time.
//!
//! ```
//! use lumbre_gpu::stages::Stages;
//! // dst[i] = 10 + i, the GPU's runtime/iota kernel or its twin.
//! fn iota(s: &mut Stages<'_>, n: usize) -> lumbre_gpu::Result<Vec<u32>> {
//!     let dst = s.zeroed::<u32>(n)?;
//!     let iota = s.stage(&lumbre_gpu::shaders::runtime::IOTA, "main")?;
//!     let params = s.uniform(&[n as u32, 10])?;
//!     s.dispatch("iota", &iota, &params, &[dst.all()], n.div_ceil(64) as u64, |p, b| {
//!         lumbre_gpu::iota_cpu(&mut b[0], p[1]);
//!     })?;
//!     s.read(dst)
//! }
//! let mut on_cpu = Stages::cpu();
//! assert_eq!(iota(&mut on_cpu, 3)?, vec![10, 11, 12]);
//! assert!(on_cpu.history()[0].on_cpu);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

#[cfg(feature = "wgpu")]
mod runner;
mod twin;

#[cfg(feature = "wgpu")]
use std::marker::PhantomData;
#[cfg(feature = "wgpu")]
use std::ops::Range;

#[cfg(feature = "wgpu")]
use bytemuck::Pod;
#[cfg(feature = "wgpu")]
use lumbre_shaders::Shader;

#[cfg(feature = "wgpu")]
use crate::{Buffer, Error, Fit, Gpu, Kernel, Recorder, Result};
#[cfg(feature = "wgpu")]
use runner::Runner;
pub use twin::{get, put, threads};

/// A buffer of [`Stages`]: `len` values of `T` (whose size is a whole number of 32-bit
/// words), on the GPU, on the host, or both. A handle: cheap to copy, and only meaningful to
/// the `Stages` that made it.
///
/// ```
/// let mut s = lumbre_gpu::stages::Stages::cpu();
/// let b = s.zeroed::<u64>(3)?;
/// assert_eq!(b.len(), 3);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
pub struct Buf<T> {
    id: usize,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

#[cfg(feature = "wgpu")]
impl<T> Clone for Buf<T> {
    fn clone(&self) -> Self {
        *self
    }
}

#[cfg(feature = "wgpu")]
impl<T> Copy for Buf<T> {}

#[cfg(feature = "wgpu")]
impl<T> std::fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buf<{}>#{}[{}]", std::any::type_name::<T>(), self.id, self.len)
    }
}

#[cfg(feature = "wgpu")]
impl<T> PartialEq for Buf<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.id, self.len) == (o.id, o.len)
    }
}

#[cfg(feature = "wgpu")]
impl<T> Eq for Buf<T> {}

/// 32-bit words per value of `T`, or an error if `T` is not a whole number of words.
#[cfg(feature = "wgpu")]
fn words_per<T>() -> Result<usize> {
    let bytes = size_of::<T>();
    if bytes == 0 || !bytes.is_multiple_of(4) {
        return Err(Error::Input(format!(
            "stage buffers hold whole 32-bit words; {} is {bytes} bytes",
            std::any::type_name::<T>()
        )));
    }
    Ok(bytes / 4)
}

#[cfg(feature = "wgpu")]
impl<T: Pod> Buf<T> {
    fn new(id: usize, len: usize) -> Self {
        Buf { id, len, _t: PhantomData }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole buffer, as a stage binds it.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.zeroed::<u32>(8)?;
    /// assert_eq!(b.all(), b.range(0..8));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn all(self) -> Bind {
        self.range(0..self.len)
    }

    /// Values `range` of the buffer (clipped to its length), as a stage binds a piece of a
    /// longer buffer; on the GPU the start must keep the binding offset alignment.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.zeroed::<[u32; 2]>(8)?;
    /// let second_half = b.range(4..8);
    /// # let _ = second_half;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn range(self, range: Range<usize>) -> Bind {
        let w = size_of::<T>() / 4;
        let end = range.end.min(self.len);
        Bind { id: self.id, words: range.start.min(end) * w..end * w }
    }

    /// The same buffer seen as values of `U` (the same bytes).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let wide = s.upload(&[1u64 << 32])?;
    /// assert_eq!(s.read(wide.cast::<u32>()?)?, vec![0, 1]);
    /// assert!(s.zeroed::<u32>(3)?.cast::<u64>().is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn cast<U: Pod>(self) -> Result<Buf<U>> {
        let bytes = self.len * size_of::<T>();
        words_per::<U>()?;
        if !bytes.is_multiple_of(size_of::<U>()) {
            return Err(Error::Input(format!("cannot view {bytes} bytes as values of {} bytes", size_of::<U>())));
        }
        Ok(Buf::new(self.id, bytes / size_of::<U>()))
    }
}

/// A buffer bound to a stage: the whole of it ([`Buf::all`]) or a range ([`Buf::range`]).
///
/// ```
/// let mut s = lumbre_gpu::stages::Stages::cpu();
/// let bind = s.zeroed::<u32>(4)?.all();
/// # let _ = bind;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    id: usize,
    words: Range<usize>,
}

/// A stage's uniform: its value, and on the GPU path the buffer holding it, so that stages
/// sharing parameters share one buffer.
///
/// ```
/// let mut s = lumbre_gpu::stages::Stages::cpu();
/// let p = s.uniform(&[3u32, 0])?;
/// assert_eq!(p.value(), &[3, 0]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
pub struct Uniform<P> {
    value: P,
    buffer: Option<wgpu::Buffer>,
}

#[cfg(feature = "wgpu")]
impl<P> Uniform<P> {
    /// The parameters, as the CPU twin receives them.
    pub fn value(&self) -> &P {
        &self.value
    }
}

/// An entry point of a shader that a pipeline dispatches, compiled on the GPU path.
///
/// ```
/// let s = lumbre_gpu::stages::Stages::cpu();
/// let iota = s.stage(&lumbre_gpu::shaders::runtime::IOTA, "main")?;
/// assert_eq!((iota.shader().name, iota.entry()), ("runtime/iota", "main"));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
#[derive(Clone, Debug)]
pub struct Stage {
    shader: Shader,
    entry: &'static str,
    bindings: &'static [u32],
    kernel: Option<Kernel>,
}

#[cfg(feature = "wgpu")]
impl Stage {
    /// The shader.
    pub fn shader(&self) -> &Shader {
        &self.shader
    }

    /// The entry point.
    pub fn entry(&self) -> &'static str {
        self.entry
    }
}

/// One stage that [`Stages`] ran one at a time: the shader's name, the entry point, and the
/// side it ran on.
///
/// ```
/// let run = lumbre_gpu::stages::StageRun { shader: "runtime/iota", entry: "main", on_cpu: true };
/// assert!(run.on_cpu);
/// ```
#[cfg(feature = "wgpu")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageRun {
    /// The shader's name (`compact/sort_hist`; variants add `:variant`).
    pub shader: &'static str,
    /// The entry point.
    pub entry: &'static str,
    /// Whether its CPU twin ran.
    pub on_cpu: bool,
}

/// Where a pipeline's stages go: recorded into a [`Recorder`] (the GPU path), or run one at a
/// time with chosen stages as their CPU twins (see the [module docs](self)).
///
/// ```no_run
/// use lumbre_gpu::stages::Stages;
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let mut rec = gpu.recorder();
/// let mut s = Stages::record(&mut rec);
/// let dst = s.zeroed::<u32>(1000)?;
/// let iota = s.stage(&lumbre_gpu::shaders::runtime::IOTA, "main")?;
/// let params = s.uniform(&[1000u32, 0])?;
/// s.dispatch("iota", &iota, &params, &[dst.all()], 16, |p, b| lumbre_gpu::iota_cpu(&mut b[0], p[1]))?;
/// let dst = s.buffer(dst)?;
/// rec.submit()?;
/// assert_eq!(gpu.download(&dst)?[999], 999);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[cfg(feature = "wgpu")]
pub struct Stages<'r> {
    mode: Mode<'r>,
}

#[cfg(feature = "wgpu")]
enum Mode<'r> {
    /// The GPU path: straight into the recorder; `bufs` are the buffers handed out, as words.
    Record { rec: &'r mut Recorder, bufs: Vec<Buffer<u32>> },
    /// One stage at a time.
    Run(Runner),
}

/// Checks that `binds` are a uniform's worth short of what `stage` binds, and of `stages`'s
/// `bufs` buffers.
#[cfg(feature = "wgpu")]
fn check_binds(stage: &Stage, binds: &[Bind], bufs: usize) -> Result<()> {
    let (shader, entry, used) = (stage.shader.name, stage.entry, stage.bindings);
    if used.first() != Some(&0) || used.len() != binds.len() + 1 {
        return Err(Error::Input(format!(
            "{shader}:{entry} binds {used:?} (its uniform first), given a uniform and {} buffers",
            binds.len()
        )));
    }
    if let Some(b) = binds.iter().find(|b| b.id >= bufs) {
        return Err(Error::Input(format!("buffer #{} bound to {shader}:{entry} is not of these stages", b.id)));
    }
    Ok(())
}

/// Checks that every bind of a recorded stage's `inputs` is a whole buffer (`words(id)` long).
#[cfg(feature = "wgpu")]
fn check_whole(inputs: &[Bind], bufs: usize, words: impl Fn(usize) -> usize) -> Result<()> {
    match inputs.iter().find(|b| b.id >= bufs || b.words != (0..words(b.id))) {
        Some(b) => Err(Error::Input(format!("a recorded stage takes whole buffers, not words {:?}", b.words))),
        None => Ok(()),
    }
}

/// The bind group of `kernel` with `uniform` at binding 0 and `buffers` at the bindings it
/// uses after it, in order.
#[cfg(feature = "wgpu")]
fn bind_group<'a>(
    gpu: &Gpu,
    kernel: &Kernel,
    uniform: &'a wgpu::Buffer,
    buffers: impl Iterator<Item = wgpu::BindingResource<'a>>,
) -> wgpu::BindGroup {
    let mut entries = Vec::with_capacity(kernel.bindings.len());
    entries.push(wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() });
    entries.extend(
        kernel.bindings[1..].iter().zip(buffers).map(|(&binding, resource)| wgpu::BindGroupEntry { binding, resource }),
    );
    gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(kernel.name),
        layout: &kernel.layout,
        entries: &entries,
    })
}

#[cfg(feature = "wgpu")]
impl<'r> Stages<'r> {
    /// The GPU path: every stage is recorded into `rec` as its dispatch, every buffer is a
    /// GPU buffer, and twins are never called.
    pub fn record(rec: &'r mut Recorder) -> Self {
        Stages { mode: Mode::Record { rec, bufs: Vec::new() } }
    }
}

#[cfg(feature = "wgpu")]
impl Stages<'static> {
    /// Every stage as its CPU twin, without a GPU; buffers are never cut into pieces.
    ///
    /// ```
    /// let s = lumbre_gpu::stages::Stages::cpu();
    /// assert_eq!(s.piece_len(4, 256), 1 << 32);
    /// ```
    pub fn cpu() -> Self {
        Stages::cpu_with_binding_limit(1 << 34)
    }

    /// Every stage as its CPU twin, with buffers cut into pieces as on a device whose storage
    /// bindings hold at most `bytes` (and whose binding offsets align to 256 bytes), so that
    /// the pipelines' piece-by-piece paths run on the CPU too.
    ///
    /// ```
    /// let s = lumbre_gpu::stages::Stages::cpu_with_binding_limit(64 << 10);
    /// assert_eq!(s.piece_len(4, 4096), 16384);
    /// ```
    pub fn cpu_with_binding_limit(bytes: u64) -> Self {
        Stages { mode: Mode::Run(Runner::cpu(bytes)) }
    }

    /// One stage at a time on `gpu`: the stages for which `on_cpu(shader name, entry point)`
    /// holds as their CPU twins, the others each submitted and waited for on their own.
    ///
    /// ```no_run
    /// use lumbre_gpu::stages::Stages;
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let s = Stages::staged(&gpu, |shader, entry| shader.starts_with("compact/sort") && entry == "scatter");
    /// # let _ = s;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn staged(gpu: &Gpu, on_cpu: impl Fn(&str, &str) -> bool + 'static) -> Self {
        Stages { mode: Mode::Run(Runner::gpu(gpu, Box::new(on_cpu))) }
    }
}

#[cfg(feature = "wgpu")]
impl Stages<'_> {
    /// The GPU, if any stage can run there.
    ///
    /// ```
    /// assert!(lumbre_gpu::stages::Stages::cpu().gpu().is_none());
    /// ```
    pub fn gpu(&self) -> Option<&Gpu> {
        match &self.mode {
            Mode::Record { rec, .. } => Some(rec.gpu()),
            Mode::Run(r) => r.gpu_ref(),
        }
    }

    /// The stages run one at a time so far, in order (none on the GPU path).
    ///
    /// ```
    /// assert!(lumbre_gpu::stages::Stages::cpu().history().is_empty());
    /// ```
    pub fn history(&self) -> &[StageRun] {
        match &self.mode {
            Mode::Record { .. } => &[],
            Mode::Run(r) => r.history(),
        }
    }

    /// A zero-filled buffer of `len` values that fits one binding (on the GPU path).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.zeroed::<f32>(2)?;
    /// assert_eq!(s.read(b)?, vec![0.0, 0.0]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn zeroed<T: Pod>(&mut self, len: usize) -> Result<Buf<T>> {
        self.zeroed_fit(len, Fit::Binding)
    }

    /// A zero-filled buffer checked against `fit` on the GPU path (stage by stage, buffers
    /// are checked only where a stage binds them).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.zeroed_fit::<u32>(5, lumbre_gpu::Fit::Pieces)?;
    /// assert_eq!(b.len(), 5);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn zeroed_fit<T: Pod>(&mut self, len: usize, fit: Fit) -> Result<Buf<T>> {
        let words = words_per::<T>()? * len;
        match &mut self.mode {
            Mode::Record { rec, bufs } => register(bufs, rec.gpu().zeroed_fit::<T>(len, fit)?),
            Mode::Run(r) => Ok(Buf::new(r.push(vec![0; words]), len)),
        }
    }

    /// A new buffer holding `data`, fitting one binding (on the GPU path).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.upload(&[1.5f32, 2.5])?;
    /// assert_eq!(s.read(b)?, vec![1.5, 2.5]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload<T: Pod>(&mut self, data: &[T]) -> Result<Buf<T>> {
        self.upload_fit(data, Fit::Binding)
    }

    /// A new buffer holding `data`, checked against `fit` on the GPU path.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.upload_fit(&[[1u32, 2]], lumbre_gpu::Fit::Pieces)?;
    /// assert_eq!(s.read(b.cast::<u32>()?)?, vec![1, 2]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload_fit<T: Pod>(&mut self, data: &[T], fit: Fit) -> Result<Buf<T>> {
        words_per::<T>()?;
        match &mut self.mode {
            Mode::Record { rec, bufs } => register(bufs, rec.gpu().upload_fit(data, fit)?),
            Mode::Run(r) => Ok(Buf::new(r.push(bytemuck::cast_slice(data).to_vec()), data.len())),
        }
    }

    /// A GPU buffer of the caller's, as a buffer of these stages (the same memory: what the
    /// stages write, the caller sees). Needs a GPU.
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let mine = gpu.upload(&[5u32, 6])?;
    /// let mut rec = gpu.recorder();
    /// let mut s = lumbre_gpu::stages::Stages::record(&mut rec);
    /// let b = s.adopt(&mine)?;
    /// s.clear(b);
    /// drop(s);
    /// rec.submit()?;
    /// assert_eq!(gpu.download(&mine)?, vec![0, 0]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn adopt<T: Pod>(&mut self, buffer: &Buffer<T>) -> Result<Buf<T>> {
        words_per::<T>()?;
        match &mut self.mode {
            Mode::Record { bufs, .. } => register(bufs, buffer.clone()),
            Mode::Run(r) => Ok(Buf::new(r.adopt(buffer.clone().cast()?)?, buffer.len())),
        }
    }

    /// The GPU buffer behind `b` (made current from the host where a CPU stage wrote it
    /// last). Needs a GPU.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.zeroed::<u32>(1)?;
    /// assert!(s.buffer(b).is_err()); // no GPU
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn buffer<T: Pod>(&mut self, b: Buf<T>) -> Result<Buffer<T>> {
        match &mut self.mode {
            Mode::Record { bufs, .. } => bufs.get(b.id).ok_or_else(|| not_ours(b.id))?.clone().cast(),
            Mode::Run(r) => r.device(b.id)?.cast(),
        }
    }

    /// The contents of `b`. On the GPU path this submits what was recorded so far and waits
    /// for it (recording then goes on, and [`Recorder::submit`] reports every pass): a
    /// pipeline reads back only the few values that place its next stage.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.upload(&[7u32, 8])?;
    /// assert_eq!(s.read(b)?, vec![7, 8]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn read<T: Pod>(&mut self, b: Buf<T>) -> Result<Vec<T>> {
        self.read_range(b, 0..b.len)
    }

    /// Values `range` of `b` (see [`Stages::read`]).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.upload(&[7u32, 8, 9])?;
    /// assert_eq!(s.read_range(b, 1..2)?, vec![8]);
    /// assert!(s.read_range(b, 2..4).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn read_range<T: Pod>(&mut self, b: Buf<T>, range: Range<usize>) -> Result<Vec<T>> {
        if range.start > range.end || range.end > b.len {
            return Err(Error::Input(format!("read of {range:?} from a buffer of {}", b.len)));
        }
        let w = words_per::<T>()?;
        let words = range.start * w..range.end * w;
        let words = match &mut self.mode {
            Mode::Record { rec, bufs } => {
                let buf = bufs.get(b.id).ok_or_else(|| not_ours(b.id))?;
                rec.flush()?;
                rec.gpu().download_range(buf, words)?
            }
            Mode::Run(r) => r.read(b.id, words)?,
        };
        Ok(bytemuck::pod_collect_to_vec(&words))
    }

    /// Sets every value of `b` to zero.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let b = s.upload(&[7u32])?;
    /// s.clear(b);
    /// assert_eq!(s.read(b)?, vec![0]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn clear<T: Pod>(&mut self, b: Buf<T>) {
        match &mut self.mode {
            Mode::Record { rec, bufs } => {
                if let Some(buf) = bufs.get(b.id) {
                    rec.clear(buf);
                }
            }
            Mode::Run(r) => r.clear(b.id),
        }
    }

    /// Copies `len` values of `src` from `src_at` into `dst` at `dst_at`.
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// let (a, b) = (s.upload(&[1u32, 2, 3])?, s.zeroed::<u32>(2)?);
    /// s.copy(a, 1, b, 0, 2)?;
    /// assert_eq!(s.read(b)?, vec![2, 3]);
    /// assert!(s.copy(a, 2, b, 0, 2).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn copy<T: Pod>(&mut self, src: Buf<T>, src_at: usize, dst: Buf<T>, dst_at: usize, len: usize) -> Result<()> {
        if src_at + len > src.len || dst_at + len > dst.len {
            return Err(Error::Input(format!(
                "copy of {len} values from {src_at} (of {}) to {dst_at} (of {})",
                src.len, dst.len
            )));
        }
        let w = words_per::<T>()?;
        match &mut self.mode {
            Mode::Record { rec, bufs } => {
                let (s, d) = (bufs.get(src.id), bufs.get(dst.id));
                let (s, d) = s.zip(d).ok_or_else(|| not_ours(src.id.max(dst.id)))?;
                rec.copy_range(s, src_at * w, d, dst_at * w, len * w)
            }
            Mode::Run(r) => r.copy(src.id, src_at * w, dst.id, dst_at * w, len * w),
        }
    }

    /// A stage's uniform holding `value` (made once, bound by every dispatch given it).
    ///
    /// ```
    /// let mut s = lumbre_gpu::stages::Stages::cpu();
    /// assert_eq!(s.uniform(&7u32)?.value(), &7);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn uniform<P: Pod>(&mut self, value: &P) -> Result<Uniform<P>> {
        let buffer = match &self.mode {
            Mode::Record { rec, .. } => Some(rec.gpu().uniform(value)?),
            Mode::Run(_) => None,
        };
        Ok(Uniform { value: *value, buffer })
    }

    /// Entry point `entry` of `shader`, compiled on the GPU path.
    ///
    /// ```
    /// let s = lumbre_gpu::stages::Stages::cpu();
    /// assert!(s.stage(&lumbre_gpu::shaders::runtime::IOTA, "no_such_entry").is_err());
    /// ```
    pub fn stage(&self, shader: &Shader, entry: &'static str) -> Result<Stage> {
        let kernel = match &self.mode {
            Mode::Record { rec, .. } => Some(rec.gpu().kernel(shader, entry)?),
            Mode::Run(_) => None,
        };
        let bindings = shader
            .bindings_of(entry)
            .ok_or_else(|| Error::Input(format!("shader {} has no entry point {entry}", shader.name)))?;
        Ok(Stage { shader: *shader, entry, bindings, kernel })
    }

    /// One dispatch of `stage` over `workgroups` workgroups (folded to 2D when needed), with
    /// `params` at binding 0 and `binds` at the bindings the entry point uses after it, in
    /// order; or, where this stage runs on the CPU, its `twin`, which receives the parameters
    /// and the bound words (a copy; what it changes is kept, its lengths must stay).
    ///
    /// Binding other than the entry point's buffers is an error.
    ///
    /// ```
    /// use lumbre_gpu::stages::Stages;
    /// let mut s = Stages::cpu();
    /// let iota = s.stage(&lumbre_gpu::shaders::runtime::IOTA, "main")?;
    /// let p = s.uniform(&[2u32, 0])?;
    /// let (a, b) = (s.zeroed::<u32>(2)?, s.zeroed::<u32>(2)?);
    /// assert!(s.dispatch("iota", &iota, &p, &[a.all(), b.all()], 1, |_, _| {}).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn dispatch<P: Pod>(
        &mut self,
        label: &'static str,
        stage: &Stage,
        params: &Uniform<P>,
        binds: &[Bind],
        workgroups: u64,
        twin: impl FnOnce(&P, &mut [Vec<u32>]),
    ) -> Result<()> {
        match &mut self.mode {
            Mode::Record { rec, bufs } => {
                check_binds(stage, binds, bufs.len())?;
                if workgroups == 0 {
                    return Ok(());
                }
                // A stage or uniform made stage by stage has no kernel or buffer yet.
                let (compiled, made);
                let gpu = rec.gpu();
                let kernel = match &stage.kernel {
                    Some(k) => k,
                    None => {
                        compiled = gpu.kernel(&stage.shader, stage.entry)?;
                        &compiled
                    }
                };
                let uniform = match &params.buffer {
                    Some(u) => u,
                    None => {
                        made = gpu.uniform(&params.value)?;
                        &made
                    }
                };
                let grid = gpu.grid(workgroups)?;
                let buffers = binds.iter().map(|b| bufs[b.id].binding_range(b.words.clone()));
                let bind = bind_group(gpu, kernel, uniform, buffers);
                rec.dispatch_bound(label, kernel, &bind, grid);
                Ok(())
            }
            Mode::Run(r) => r.dispatch(label, stage, &params.value, binds, workgroups, twin),
        }
    }

    /// A stage that a recording function records (another crate's kernel, say), whose
    /// output is a new buffer: on the GPU `record` records it into a recorder, given the
    /// `inputs` (whole buffers) as GPU buffers of words; on the CPU `twin` computes the
    /// output from their words. `(shader, entry)` names the stage in the history and for
    /// the choice of side.
    ///
    /// ```
    /// use lumbre_gpu::stages::Stages;
    /// let mut s = Stages::cpu();
    /// let n = 4;
    /// let order = s.recorded(
    ///     ("runtime/iota", "main"),
    ///     &[],
    ///     |rec, _| {
    ///         let order = rec.gpu().zeroed::<u32>(n)?;
    ///         lumbre_gpu::record_iota(rec, &order, 0)?;
    ///         Ok(order)
    ///     },
    ///     |_| Ok((0..n as u32).collect()),
    /// )?;
    /// assert_eq!(s.read(order)?, vec![0, 1, 2, 3]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn recorded<T: Pod>(
        &mut self,
        (shader, entry): (&'static str, &'static str),
        inputs: &[Bind],
        record: impl FnOnce(&mut Recorder, &[Buffer<u32>]) -> Result<Buffer<T>>,
        twin: impl FnOnce(&[Vec<u32>]) -> Result<Vec<T>>,
    ) -> Result<Buf<T>> {
        words_per::<T>()?;
        match &mut self.mode {
            Mode::Record { rec, bufs } => {
                check_whole(inputs, bufs.len(), |id| bufs[id].len())?;
                let inputs: Vec<Buffer<u32>> = inputs.iter().map(|b| bufs[b.id].clone()).collect();
                let out = record(rec, &inputs)?;
                register(bufs, out)
            }
            Mode::Run(r) => {
                check_whole(inputs, r.slots(), |id| r.len(id))?;
                let (id, len) = r.recorded((shader, entry), inputs, record, twin)?;
                Ok(Buf::new(id, len))
            }
        }
    }

    /// The piece length, in elements of `elem_bytes`, of buffers longer than one binding,
    /// for kernels that take `tile` elements per workgroup: the GPU's [`Gpu::piece_len`], or
    /// without a GPU the same for the binding limit of [`Stages::cpu_with_binding_limit`].
    ///
    /// ```
    /// let s = lumbre_gpu::stages::Stages::cpu_with_binding_limit(1 << 20);
    /// assert_eq!(s.piece_len(8, 2048), 1 << 17);
    /// ```
    pub fn piece_len(&self, elem_bytes: usize, tile: usize) -> usize {
        match &self.mode {
            Mode::Record { rec, .. } => rec.gpu().piece_len(elem_bytes, tile),
            Mode::Run(r) => r.piece_len(elem_bytes, tile),
        }
    }

    /// The offset alignment of bindings, in bytes.
    ///
    /// ```
    /// assert_eq!(lumbre_gpu::stages::Stages::cpu().binding_alignment(), 256);
    /// ```
    pub fn binding_alignment(&self) -> u64 {
        match &self.mode {
            Mode::Record { rec, .. } => rec.gpu().limits().min_storage_buffer_offset_alignment as u64,
            Mode::Run(r) => r.binding_alignment(),
        }
    }

    /// The largest binding, in bytes.
    ///
    /// ```
    /// assert_eq!(lumbre_gpu::stages::Stages::cpu_with_binding_limit(4096).max_binding(), 4096);
    /// ```
    pub fn max_binding(&self) -> u64 {
        match &self.mode {
            Mode::Record { rec, .. } => rec.gpu().limits().max_storage_buffer_binding_size,
            Mode::Run(r) => r.max_binding(),
        }
    }

    /// Checks that `bytes` fit the limit for `fit` ([`Gpu::check_size`]; without a GPU, the
    /// binding limit for [`Fit::Binding`]).
    ///
    /// ```
    /// use lumbre_gpu::{Fit, stages::Stages};
    /// let s = Stages::cpu_with_binding_limit(4096);
    /// assert!(s.check_size("histograms", 8192, Fit::Binding).is_err());
    /// assert!(s.check_size("keys", 8192, Fit::Pieces).is_ok());
    /// ```
    pub fn check_size(&self, what: &str, bytes: u64, fit: Fit) -> Result<()> {
        match &self.mode {
            Mode::Record { rec, .. } => rec.gpu().check_size(what, bytes, fit),
            Mode::Run(r) => r.check_size(what, bytes, fit),
        }
    }

    /// Whether the GPU can run `shader` (a subgroup variant, say); `false` without a GPU,
    /// where pipelines then take their plain variants (whose twins are the same).
    ///
    /// ```
    /// assert!(!lumbre_gpu::stages::Stages::cpu().supports(&lumbre_gpu::shaders::runtime::IOTA));
    /// ```
    pub fn supports(&self, shader: &Shader) -> bool {
        self.gpu().is_some_and(|g| g.supports(shader))
    }

    /// Whether the GPU has subgroups (`false` without a GPU).
    ///
    /// ```
    /// assert!(!lumbre_gpu::stages::Stages::cpu().has_subgroups());
    /// ```
    pub fn has_subgroups(&self) -> bool {
        self.gpu().is_some_and(Gpu::has_subgroups)
    }
}

/// Adds a GPU buffer to the GPU path's buffers.
#[cfg(feature = "wgpu")]
fn register<T: Pod>(bufs: &mut Vec<Buffer<u32>>, buffer: Buffer<T>) -> Result<Buf<T>> {
    let len = buffer.len();
    bufs.push(buffer.cast()?);
    Ok(Buf::new(bufs.len() - 1, len))
}

#[cfg(feature = "wgpu")]
fn not_ours(id: usize) -> Error {
    Error::Input(format!("buffer #{id} is not of these stages"))
}
