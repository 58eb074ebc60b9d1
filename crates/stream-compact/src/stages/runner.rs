//! Runs a pipeline stage by stage, each stage on the GPU or as its CPU twin, with every
//! buffer kept where it was last written and moved only when a stage on the other side
//! needs it.

use std::ops::Range;

use bytemuck::Pod;
use lumbre_gpu::{Buffer, Error, Fit, Gpu, Result};
use lumbre_shaders::Shader;

/// A buffer of a [`StageRunner`], in 32-bit words.
///
/// ```
/// let mut runner = lumbre_compact::stages::StageRunner::cpu();
/// let b = runner.zeroed(3);
/// assert_eq!(runner.len(b), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Buf(usize);

impl Buf {
    /// The whole buffer, as a stage binds it.
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.zeroed(8);
    /// assert_eq!(b.all(), b.range(0..usize::MAX));
    /// ```
    pub fn all(self) -> Bind {
        self.range(0..usize::MAX)
    }

    /// Words `range` of the buffer (clipped to its length), as a stage binds a piece of a
    /// longer buffer; on the GPU the start must keep the binding alignment.
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.zeroed(8);
    /// let piece = b.range(4..8);
    /// # let _ = piece;
    /// ```
    pub fn range(self, range: Range<usize>) -> Bind {
        Bind { buf: self, range }
    }
}

/// A buffer bound to a stage: the whole of it or a range of its words.
///
/// ```
/// let mut runner = lumbre_compact::stages::StageRunner::cpu();
/// let bind = runner.zeroed(4).all();
/// # let _ = bind;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bind {
    buf: Buf,
    range: Range<usize>,
}

/// One stage a [`StageRunner`] ran: the shader's name, the entry point, and the side.
///
/// ```
/// let run = lumbre_compact::stages::StageRun { shader: "compact/radix_hist", entry: "hist_tiles", on_cpu: true };
/// assert!(run.on_cpu);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageRun {
    /// The shader's name (`compact/radix_hist`; variants add `:variant`).
    pub shader: &'static str,
    /// The entry point.
    pub entry: &'static str,
    /// Whether its CPU twin ran.
    pub on_cpu: bool,
}

/// Where a buffer's current contents are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fresh {
    Both,
    Host,
    Device,
}

struct Slot {
    host: Vec<u32>,
    device: Option<Buffer<u32>>,
    fresh: Fresh,
}

/// Which stages run on the CPU.
type Placement = Box<dyn Fn(&Shader, &str) -> bool>;

/// Runs a pipeline one stage at a time, each stage either as a GPU dispatch or as its CPU
/// twin (see [`crate::stages`]). Buffers live where the last stage that bound them ran, and
/// move (whole) when a stage on the other side binds them; a GPU stage is submitted and
/// waited for before the next one, so the runner is for finding a wrong stage, not for
/// speed.
///
/// ```
/// use lumbre_compact::stages::{ScanParams, StageRunner, scan_tile};
/// use lumbre_shaders::compact::SCAN_U32_PLAIN;
/// let mut runner = StageRunner::cpu();
/// let src = runner.upload(&[1u32, 2, 3]);
/// let totals = runner.zeroed(1);
/// let p = ScanParams { n: 3, num_tiles: 1, ..Default::default() };
/// runner.stage(&SCAN_U32_PLAIN, "reduce", &p, &[src.all(), totals.all()], 1, |p, b| {
///     let [src, totals] = b else { unreachable!() };
///     scan_tile::reduce::<u32>(p, src, totals);
/// })?;
/// assert_eq!(runner.read(totals)?, vec![6]);
/// assert!(runner.history()[0].on_cpu);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub struct StageRunner {
    gpu: Option<Gpu>,
    on_cpu: Placement,
    slots: Vec<Slot>,
    history: Vec<StageRun>,
    /// Binding size and offset alignment (bytes) that cut buffers into pieces on the CPU.
    cpu_binding: (u64, u64),
}

impl StageRunner {
    /// A runner without a GPU: every stage runs its CPU twin, and buffers are never cut
    /// into pieces.
    ///
    /// ```
    /// let runner = lumbre_compact::stages::StageRunner::cpu();
    /// assert_eq!(runner.piece_len(4, 256), 1 << 32);
    /// ```
    pub fn cpu() -> Self {
        StageRunner::cpu_with_binding_limit(1 << 34)
    }

    /// A runner without a GPU that cuts buffers into pieces as a device whose storage
    /// bindings hold at most `bytes` would (with a 256-byte offset alignment), so the
    /// pipelines' piece-by-piece paths run on the CPU too.
    ///
    /// ```
    /// let runner = lumbre_compact::stages::StageRunner::cpu_with_binding_limit(64 << 10);
    /// assert_eq!(runner.piece_len(4, 4096), 16384);
    /// ```
    pub fn cpu_with_binding_limit(bytes: u64) -> Self {
        StageRunner {
            gpu: None,
            on_cpu: Box::new(|_, _| true),
            slots: Vec::new(),
            history: Vec::new(),
            cpu_binding: (bytes, 256),
        }
    }

    /// A runner on `gpu` that runs on the CPU the stages for which `on_cpu(shader, entry)`
    /// holds, and every other stage on the GPU.
    ///
    /// ```no_run
    /// use lumbre_compact::stages::StageRunner;
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let runner = StageRunner::gpu(&gpu, |_, entry| entry == "scatter");
    /// # let _ = runner;
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn gpu(gpu: &Gpu, on_cpu: impl Fn(&Shader, &str) -> bool + 'static) -> Self {
        StageRunner { gpu: Some(gpu.clone()), on_cpu: Box::new(on_cpu), ..StageRunner::cpu() }
    }

    /// A new buffer holding `data` (as words; its bytes are padded to a whole word).
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.upload(&[1u64 << 32]);
    /// assert_eq!(runner.read(b)?, vec![0, 1]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload<T: Pod>(&mut self, data: &[T]) -> Buf {
        self.slots.push(Slot { host: bytemuck::pod_collect_to_vec(data), device: None, fresh: Fresh::Host });
        Buf(self.slots.len() - 1)
    }

    /// A new buffer of `words` zeros.
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.zeroed(2);
    /// assert_eq!(runner.read(b)?, vec![0, 0]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn zeroed(&mut self, words: usize) -> Buf {
        self.upload(&vec![0u32; words])
    }

    /// The buffer's length in words.
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.upload(&[0u16; 3]);
    /// assert_eq!(runner.len(b), 2);
    /// ```
    pub fn len(&self, b: Buf) -> usize {
        self.slots[b.0].host.len()
    }

    /// The buffer's contents (downloaded if a GPU stage wrote them last).
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.upload(&[7u32]);
    /// assert_eq!(runner.read(b)?, vec![7]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn read(&mut self, b: Buf) -> Result<Vec<u32>> {
        self.sync_host(b)?;
        Ok(self.slots[b.0].host.clone())
    }

    /// The buffer's contents as values of `T`.
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.upload(&[1.5f32]);
    /// assert_eq!(runner.read_as::<f32>(b)?, vec![1.5]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn read_as<T: Pod>(&mut self, b: Buf) -> Result<Vec<T>> {
        self.sync_host(b)?;
        Ok(bytemuck::pod_collect_to_vec(&self.slots[b.0].host))
    }

    /// Sets every word of the buffer to zero (what the pipelines' clears do).
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let b = runner.upload(&[7u32]);
    /// runner.clear(b);
    /// assert_eq!(runner.read(b)?, vec![0]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn clear(&mut self, b: Buf) {
        let slot = &mut self.slots[b.0];
        slot.host.fill(0);
        slot.fresh = Fresh::Host;
    }

    /// Copies `words` words of `src` from `src_at` into `dst` at `dst_at` (what the
    /// pipelines' buffer copies do).
    ///
    /// ```
    /// let mut runner = lumbre_compact::stages::StageRunner::cpu();
    /// let (a, b) = (runner.upload(&[1u32, 2, 3]), runner.zeroed(2));
    /// runner.copy(a, 1, b, 0, 2)?;
    /// assert_eq!(runner.read(b)?, vec![2, 3]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn copy(&mut self, src: Buf, src_at: usize, dst: Buf, dst_at: usize, words: usize) -> Result<()> {
        let (from, to) = (src_at..src_at + words, dst_at..dst_at + words);
        if from.end > self.len(src) || to.end > self.len(dst) {
            return Err(Error::Input(format!(
                "copy of words {from:?} of a buffer of {} into words {to:?} of one of {}",
                self.len(src),
                self.len(dst)
            )));
        }
        self.sync_host(src)?;
        self.sync_host(dst)?;
        let data = self.slots[src.0].host[from].to_vec();
        let slot = &mut self.slots[dst.0];
        slot.host[to].copy_from_slice(&data);
        slot.fresh = Fresh::Host;
        Ok(())
    }

    /// The piece length (in elements of `elem_bytes`) of buffers longer than one binding, for
    /// kernels that process `tile` elements per workgroup: the GPU's
    /// [`Gpu::piece_len`], or on the CPU the same for its binding limit.
    ///
    /// ```
    /// let runner = lumbre_compact::stages::StageRunner::cpu_with_binding_limit(1 << 20);
    /// assert_eq!(runner.piece_len(8, 2048), 1 << 17);
    /// ```
    pub fn piece_len(&self, elem_bytes: usize, tile: usize) -> usize {
        if let Some(gpu) = &self.gpu {
            return gpu.piece_len(elem_bytes, tile);
        }
        let (max, align) = (self.cpu_binding.0 as usize / elem_bytes, self.cpu_binding.1 as usize);
        let step = align / gcd(align, elem_bytes);
        let unit = tile / gcd(tile, step) * step;
        (max / unit * unit).max(unit)
    }

    /// The offset alignment of bindings, in bytes.
    ///
    /// ```
    /// assert_eq!(lumbre_compact::stages::StageRunner::cpu().binding_alignment(), 256);
    /// ```
    pub fn binding_alignment(&self) -> u64 {
        match &self.gpu {
            Some(gpu) => gpu.limits().min_storage_buffer_offset_alignment as u64,
            None => self.cpu_binding.1,
        }
    }

    /// The largest binding, in bytes.
    ///
    /// ```
    /// assert_eq!(lumbre_compact::stages::StageRunner::cpu_with_binding_limit(4096).max_binding(), 4096);
    /// ```
    pub fn max_binding(&self) -> u64 {
        match &self.gpu {
            Some(gpu) => gpu.limits().max_storage_buffer_binding_size,
            None => self.cpu_binding.0,
        }
    }

    /// Whether the GPU can run `shader` (a subgroup variant, say); `false` without a GPU,
    /// where the pipelines then pick their plain variants (whose twins are the same).
    ///
    /// ```
    /// let runner = lumbre_compact::stages::StageRunner::cpu();
    /// assert!(!runner.supports(&lumbre_shaders::compact::COMPACT_SUBGROUPS));
    /// ```
    pub fn supports(&self, shader: &Shader) -> bool {
        self.gpu.as_ref().is_some_and(|g| g.supports(shader))
    }

    /// Whether the GPU has subgroups (`false` without a GPU).
    ///
    /// ```
    /// assert!(!lumbre_compact::stages::StageRunner::cpu().has_subgroups());
    /// ```
    pub fn has_subgroups(&self) -> bool {
        self.gpu.as_ref().is_some_and(Gpu::has_subgroups)
    }

    /// The stages run so far, in order.
    ///
    /// ```
    /// assert!(lumbre_compact::stages::StageRunner::cpu().history().is_empty());
    /// ```
    pub fn history(&self) -> &[StageRun] {
        &self.history
    }

    /// Runs one stage: entry point `entry` of `shader` with uniform `params`, binding `binds`
    /// (the buffers the entry point uses after its uniform, in binding order), either as a
    /// dispatch of `workgroups` workgroups or, where this runner places it on the CPU, as
    /// `twin`, which gets the bound words (a copy) and whatever it changes is kept.
    ///
    /// An entry point the shader lacks, or a number of buffers other than the entry point
    /// binds, is an error.
    ///
    /// ```
    /// use lumbre_compact::stages::StageRunner;
    /// let mut runner = StageRunner::cpu();
    /// let b = runner.zeroed(1);
    /// let shader = lumbre_shaders::compact::RADIX_HIST;
    /// let err = runner.stage(&shader, "hist_tiles", &[0u32; 9], &[b.all()], 1, |_, _| {});
    /// assert!(err.is_err()); // hist_tiles binds the keys and the histograms
    /// ```
    pub fn stage<P: Pod>(
        &mut self,
        shader: &Shader,
        entry: &'static str,
        params: &P,
        binds: &[Bind],
        workgroups: u64,
        twin: impl FnOnce(&P, &mut [Vec<u32>]),
    ) -> Result<()> {
        let used = shader
            .bindings_of(entry)
            .ok_or_else(|| Error::Input(format!("shader {} has no entry point {entry}", shader.name)))?;
        if used.first() != Some(&0) || used.len() != binds.len() + 1 {
            return Err(Error::Input(format!(
                "{}:{entry} binds {:?} (its uniform first), given a uniform and {} buffers",
                shader.name,
                used,
                binds.len()
            )));
        }
        if let Some(b) = binds.iter().find(|b| b.buf.0 >= self.slots.len()) {
            return Err(Error::Input(format!("buffer {:?} is not this runner's", b.buf)));
        }
        let on_cpu = self.gpu.is_none() || (self.on_cpu)(shader, entry);
        self.history.push(StageRun { shader: shader.name, entry, on_cpu });
        match self.gpu.clone() {
            Some(gpu) if !on_cpu => self.dispatch(&gpu, shader, entry, params, used, binds, workgroups),
            _ => self.run_twin(params, binds, twin),
        }
    }

    /// Words `range` of `b`, clipped to its length.
    fn clip(&self, bind: &Bind) -> Range<usize> {
        let len = self.len(bind.buf);
        bind.range.start.min(len)..bind.range.end.min(len)
    }

    fn run_twin<P: Pod>(&mut self, params: &P, binds: &[Bind], twin: impl FnOnce(&P, &mut [Vec<u32>])) -> Result<()> {
        let mut views = Vec::with_capacity(binds.len());
        for b in binds {
            self.sync_host(b.buf)?;
            views.push(self.slots[b.buf.0].host[self.clip(b)].to_vec());
        }
        twin(params, &mut views);
        for (b, v) in binds.iter().zip(views) {
            let r = self.clip(b);
            let slot = &mut self.slots[b.buf.0];
            if v.len() != r.len() {
                return Err(Error::Input(format!("a twin changed the length of a binding of {} words", r.len())));
            }
            if slot.host[r.clone()] != v[..] {
                slot.host[r].copy_from_slice(&v);
                slot.fresh = Fresh::Host;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn dispatch<P: Pod>(
        &mut self,
        gpu: &Gpu,
        shader: &Shader,
        entry: &'static str,
        params: &P,
        used: &[u32],
        binds: &[Bind],
        workgroups: u64,
    ) -> Result<()> {
        let mut bound = Vec::with_capacity(binds.len());
        for b in binds {
            bound.push((self.sync_device(gpu, b.buf)?, self.clip(b)));
        }
        let uniform = gpu.uniform(params)?;
        // Every binding number up to the last used one; `Gpu::bind` keeps the used ones.
        let last = *used.last().unwrap_or(&0) as usize;
        let mut resources = vec![uniform.as_entire_binding(); last + 1];
        for (&at, (buf, range)) in used[1..].iter().zip(&bound) {
            resources[at as usize] = buf.binding_range(range.clone());
        }
        let kernel = gpu.kernel(shader, entry)?;
        let mut rec = gpu.recorder();
        rec.dispatch(entry, &kernel, &resources, workgroups)?;
        rec.submit()?;
        // The runner does not know which bindings the kernel writes: all may have changed.
        for b in binds {
            self.slots[b.buf.0].fresh = Fresh::Device;
        }
        Ok(())
    }

    /// Makes the host copy of `b` current.
    fn sync_host(&mut self, b: Buf) -> Result<()> {
        let slot = &mut self.slots[b.0];
        if slot.fresh == Fresh::Device {
            let (Some(gpu), Some(dev)) = (&self.gpu, &slot.device) else {
                return Err(Error::Input("a buffer written on the GPU of a runner without one".into()));
            };
            slot.host = gpu.download(dev)?;
            slot.fresh = Fresh::Both;
        }
        Ok(())
    }

    /// Makes the GPU copy of `b` current; returns it.
    fn sync_device(&mut self, gpu: &Gpu, b: Buf) -> Result<Buffer<u32>> {
        let slot = &mut self.slots[b.0];
        let dev = match slot.device.take() {
            Some(dev) => dev,
            None => gpu.zeroed_fit::<u32>(slot.host.len(), Fit::Pieces)?,
        };
        if slot.fresh == Fresh::Host && !slot.host.is_empty() {
            gpu.write(&dev, 0, &slot.host)?;
        }
        if slot.fresh == Fresh::Host {
            slot.fresh = Fresh::Both;
        }
        slot.device = Some(dev.clone());
        Ok(dev)
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
