//! The solve on the GPU: `radiosity/solve_vte.wgsl` (`V^T E`, segmented sums), then
//! `radiosity/solve.wgsl` (partial dot products over row blocks, then B from their sums), in
//! the order of the CPU stages. The factorisation is uploaded once
//! ([`lumbre_gpu::Backend::place`]) in the layout of `radiosity/layout.wgsl`, f32 or f16.

use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, wgpu};

use crate::factor::{Factorization, Form};
use crate::layout::{Storage, f16_scale, layout_cpu, padded_k};
use crate::matrix::BlockMatrix;
use crate::solve::{Radiosity, Solve, Vte, check_emission};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VteParams {
    n: u32,
    k: u32,
    ks: u32,
    lights: u32,
}
const _: () = assert!(size_of::<VteParams>() == lumbre_shaders::radiosity::SOLVE_VTE_PARAMS_SIZE);

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SolveParams {
    n: u32,
    e0: u32,
    rows: u32,
    qw: u32,
    xq: u32,
    chunks: u32,
    chunk: u32,
    lights: u32,
    light0: u32,
    inv_scale: f32,
    k: u32,
    ks: u32,
}
const _: () = assert!(size_of::<SolveParams>() == lumbre_shaders::radiosity::SOLVE_F32_PARAMS_SIZE);

/// The uniform of `radiosity/layout.wgsl` (its `main` and `max_abs` entries).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct LayoutParams {
    pub rows: u32,
    pub k: u32,
    pub qw: u32,
    pub half: u32,
    pub scale: f32,
    pub channels: u32,
    pub _p1: u32,
    pub _p2: u32,
}
const _: () = assert!(size_of::<LayoutParams>() == lumbre_shaders::radiosity::LAYOUT_PARAMS_SIZE);

/// Lighting vectors per pass of `radiosity/solve.wgsl`'s `_many` variants.
pub const RHS_PER_PASS: usize = 8;

/// Threads the partial products aim for: rows are cut into enough chunks that even a small
/// n keeps the GPU's memory system busy.
const TARGET_THREADS: usize = 1 << 20;

/// The most words one thread of the partial products reads: long rows are cut finer, so
/// the last wave of threads is short.
const MAX_CHUNK: usize = 64;

/// Rows of `channels` channels of k values on the GPU in the solve's layout, in row blocks.
#[derive(Clone, Debug)]
pub struct GpuRows {
    /// Number of rows.
    pub rows: usize,
    /// Values per channel row.
    pub k: usize,
    /// Channels per row (Y: 3, F: 1).
    pub channels: usize,
    /// f32 or f16.
    pub storage: Storage,
    /// What the stored values were multiplied by (f16), else 1.
    pub scale: f32,
    /// Most rows per block.
    pub block_rows: usize,
    /// The blocks (see the layout module).
    pub blocks: Vec<Buffer<[u32; 4]>>,
}

impl GpuRows {
    /// 16-byte words per channel row.
    pub fn words_per_row(&self) -> usize {
        padded_k(self.k) / self.storage.per_word()
    }

    /// Bytes as stored.
    pub fn bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.size_bytes()).sum()
    }

    /// Rows per block, as many as fit one binding (capped by `cap`).
    pub fn block_rows(gpu: &Gpu, k: usize, channels: usize, storage: Storage, cap: Option<usize>) -> Result<usize> {
        crate::matrix::block_rows(gpu, (channels * padded_k(k) * storage.bytes_per_value()) as u64, 1, cap)
    }

    /// Lays `data` (rows x channels k, row-major) out on the host and uploads it.
    pub fn upload(
        gpu: &Gpu,
        data: &[f32],
        k: usize,
        channels: usize,
        storage: Storage,
        cap: Option<usize>,
    ) -> Result<GpuRows> {
        let per_row = channels * k;
        let rows = data.len() / per_row.max(1);
        let block_rows = Self::block_rows(gpu, k, channels, storage, cap)?;
        let scale = match storage {
            Storage::F32 => 1.0,
            Storage::F16 => f16_scale(crate::layout::max_abs(data)),
        };
        let blocks = data
            .chunks(block_rows * per_row)
            .map(|c| gpu.upload(&layout_cpu(c, c.len() / per_row, k, channels, storage, scale)))
            .collect::<Result<Vec<_>>>()?;
        Ok(GpuRows { rows, k, channels, storage, scale, block_rows, blocks })
    }

    /// Records the layout of rows already on the GPU (row-major blocks, as the precompute
    /// leaves Y) into a new set of blocks; `scale` for f16 (see [`f16_scale`]).
    pub fn record_layout(
        rec: &mut Recorder,
        m: &BlockMatrix,
        channels: usize,
        storage: Storage,
        scale: f32,
    ) -> Result<GpuRows> {
        let gpu = rec.gpu().clone();
        let k = m.cols / channels;
        let qw = padded_k(k) / storage.per_word();
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::LAYOUT, "main")?;
        let mut blocks = Vec::with_capacity(m.blocks.len());
        for (b, src) in m.blocks.iter().enumerate() {
            let (_, rows) = m.block_range(b);
            let words = channels * qw * rows;
            let out = gpu.zeroed::<[u32; 4]>(words)?;
            let p = gpu.uniform(&LayoutParams {
                rows: rows as u32,
                k: k as u32,
                qw: qw as u32,
                half: (storage == Storage::F16) as u32,
                scale,
                channels: channels as u32,
                _p1: 0,
                _p2: 0,
            })?;
            let res = [p.as_entire_binding(), src.binding(), out.binding()];
            rec.dispatch("layout", &kernel, &res, (words as u64).div_ceil(256))?;
            blocks.push(out);
        }
        let scale = if storage == Storage::F16 { scale } else { 1.0 };
        Ok(GpuRows { rows: m.rows, k, channels, storage, scale, block_rows: m.block_rows, blocks })
    }

    /// The first row (counted from the first held) and row count of block `b`.
    fn block_range(&self, b: usize) -> (usize, usize) {
        let rows_of = |block: &Buffer<[u32; 4]>| block.len() / (self.channels * self.words_per_row()).max(1);
        (self.blocks[..b].iter().map(rows_of).sum(), rows_of(&self.blocks[b]))
    }
}

/// The factorisation's matrices on the GPU.
#[derive(Clone, Debug)]
pub enum GpuForm {
    /// Y (n rows of 3 channels).
    Dense {
        /// Y.
        y: GpuRows,
    },
    /// F (n rows of one channel, f32 or f16), W (k rows of 3 channels, f32) and rho.
    Factored {
        /// F.
        f: GpuRows,
        /// W, row p holding `W_ch[p][..]` for each channel.
        w: GpuRows,
        /// n x 3 reflectances.
        rho: Buffer<f32>,
    },
}

/// A factorisation on the GPU, ready for any number of solves.
#[derive(Clone, Debug)]
pub struct GpuFactor {
    /// Number of elements.
    pub n: usize,
    /// The element rows held, in order (`[0..n]`, or a part's: its solve gives those rows'
    /// radiosity).
    pub rows: Vec<std::ops::Range<usize>>,
    /// Number of patches.
    pub k: usize,
    /// The matrices.
    pub form: GpuForm,
    /// The paper's I.
    pub patch_start: Buffer<u32>,
}

impl GpuFactor {
    /// Lays the factorisation out and uploads it (on the host: [`layout_cpu`]); `storage` is
    /// Y's (dense) or F's (factored; W stays f32).
    pub fn upload(gpu: &Gpu, f: &Factorization, storage: Storage, cap: Option<usize>) -> Result<GpuFactor> {
        let form = match &f.form {
            Form::Dense { y } => GpuForm::Dense { y: GpuRows::upload(gpu, &y.data, f.k, 3, storage, cap)? },
            Form::Factored { f: fm, w, rho } => {
                let k = f.k;
                // W as k rows of 3 channels: row p = (W_r[p][..], W_g[p][..], W_b[p][..]).
                let rows: Vec<f32> = (0..k)
                    .flat_map(|p| (0..3).flat_map(move |ch| &w[(ch * k + p) * k..(ch * k + p + 1) * k]))
                    .copied()
                    .collect();
                GpuForm::Factored {
                    f: GpuRows::upload(gpu, &fm.data, k, 1, storage, cap)?,
                    w: GpuRows::upload(gpu, &rows, k, 3, Storage::F32, cap)?,
                    rho: gpu.upload(&rho.iter().flatten().copied().collect::<Vec<f32>>())?,
                }
            }
        };
        Ok(GpuFactor {
            n: f.n,
            rows: std::iter::once(0..f.n).collect(),
            k: f.k,
            form,
            patch_start: gpu.upload(&f.patch_start)?,
        })
    }

    /// Bytes a solve reads from the factorisation (Y, or F and W).
    pub fn bytes(&self) -> u64 {
        match &self.form {
            GpuForm::Dense { y } => y.bytes(),
            GpuForm::Factored { f, w, .. } => f.bytes() + w.bytes(),
        }
    }
}

/// Chunks per channel row and words per chunk, for `qw` words per row and `rows` rows of
/// `channels` threads each.
pub(crate) fn chunking(qw: usize, rows: usize, channels: usize) -> (usize, usize) {
    let want = TARGET_THREADS.div_ceil(channels * rows.max(1)).max(qw.div_ceil(MAX_CHUNK)).clamp(1, qw.max(1));
    let chunk = qw.max(1).div_ceil(want);
    (qw.max(1).div_ceil(chunk), chunk)
}

struct Pass<'a> {
    gpu: Gpu,
    shader: lumbre_shaders::Shader,
    rhs: usize,
    lights: usize,
    ks: usize,
    x: &'a Buffer<f32>,
    emission: &'a Buffer<f32>,
    radiosity: &'a Buffer<f32>,
}

impl Pass<'_> {
    fn params(
        &self,
        m: &GpuRows,
        n: usize,
        chunks: (usize, usize),
        e0: usize,
        rows: usize,
        light0: usize,
    ) -> SolveParams {
        SolveParams {
            n: n as u32,
            e0: e0 as u32,
            rows: rows as u32,
            qw: m.words_per_row() as u32,
            xq: (self.ks / 4) as u32,
            chunks: chunks.0 as u32,
            chunk: chunks.1 as u32,
            lights: self.lights as u32,
            light0: light0 as u32,
            inv_scale: 1.0 / m.scale,
            k: m.k as u32,
            ks: self.ks as u32,
        }
    }

    /// Records `entry` over every block of `m` for every group of lights, reading `x` and
    /// writing `partial`; rows are cut into chunks as for `whole` rows (a part of a matrix as
    /// the whole is, so that its sums are the whole's).
    fn partials(
        &self,
        rec: &mut Recorder,
        entry: &'static str,
        (m, whole): (&GpuRows, usize),
        x: &Buffer<f32>,
        partial: &Buffer<f32>,
    ) -> Result<(usize, usize)> {
        let kernel = self.gpu.kernel(&self.shader, entry)?;
        let threads = if entry == "partial_rows" { 1 } else { 3 };
        let chunks = chunking(m.words_per_row(), whole, threads);
        for light0 in (0..self.lights).step_by(self.rhs) {
            for (b, words) in m.blocks.iter().enumerate() {
                let (e0, rows) = m.block_range(b);
                let p = self.gpu.uniform(&self.params(m, m.rows, chunks, e0, rows, light0))?;
                rec.dispatch(
                    "Y x",
                    &kernel,
                    &self.resources(&p, words, x, partial, self.radiosity),
                    ((threads * rows * chunks.0) as u64).div_ceil(256),
                )?;
            }
        }
        Ok(chunks)
    }

    fn resources<'b>(
        &'b self,
        p: &'b wgpu::Buffer,
        words: &'b Buffer<[u32; 4]>,
        x: &'b Buffer<f32>,
        partial: &'b Buffer<f32>,
        out: &'b Buffer<f32>,
    ) -> [wgpu::BindingResource<'b>; 8] {
        [
            p.as_entire_binding(),
            words.binding(),
            x.binding(),
            partial.binding(),
            self.emission.binding(),
            self.radiosity.binding(),
            out.binding(),
            out.binding(),
        ]
    }
}

impl Solve {
    /// Records the solve of `lights` (each n RGB values) against `y`: the radiosity of `y`'s
    /// rows, lights x rows x 3, one buffer per batch of lights that fits a binding.
    pub fn record_lights(
        &self,
        rec: &mut Recorder,
        y: &GpuFactor,
        lights: &[Vec<[f32; 3]>],
    ) -> Result<Vec<Buffer<f32>>> {
        let gpu = rec.gpu().clone();
        let (n, k) = (y.n, y.k);
        let local: usize = y.rows.iter().map(|r| r.len()).sum();
        let ks = padded_k(k);
        let (main, storage) = match &y.form {
            GpuForm::Dense { y } => (y, y.storage),
            GpuForm::Factored { f, .. } => (f, f.storage),
        };
        let threads = if main.channels == 1 { 1 } else { 3 };
        let (chunks, _) = chunking(main.words_per_row(), n, threads);
        let max = gpu.limits().max_storage_buffer_binding_size as usize / 4;
        let w_partials = match &y.form {
            GpuForm::Dense { .. } => 0,
            GpuForm::Factored { w, .. } => 3 * k * chunking(w.words_per_row(), k, 3).0,
        };
        // Sized as for every row, so that a part batches its lights as the whole does.
        let per_light = (3 * n * chunks).max(w_partials).max(3 * ks).max(3 * n);
        if per_light > max {
            return Err(Error::LimitExceeded {
                what: format!("partial sums of one lighting ({per_light} values)"),
                limit: "max_storage_buffer_binding_size",
                requested: 4 * per_light as u64,
                max: 4 * max as u64,
            });
        }
        let batch = (max / per_light).clamp(1, lights.len().max(1));
        let vte = gpu.kernel(&lumbre_shaders::radiosity::SOLVE_VTE, "main")?;
        let mut out = Vec::new();
        for group in lights.chunks(batch) {
            let m = group.len();
            let flat: Vec<f32> = group.iter().flat_map(|e| e.iter().flatten().copied()).collect();
            let emission = gpu.upload(&flat)?;
            // V^T E reads every element's emission, the rest only the rows held.
            let held = match local == n {
                true => emission.clone(),
                false => {
                    let part: Vec<f32> = group
                        .iter()
                        .flat_map(|e| y.rows.iter().flat_map(move |r| e[r.clone()].iter().flatten().copied()))
                        .collect();
                    gpu.upload(&part)?
                }
            };
            let x = gpu.zeroed::<f32>(m * 3 * ks)?;
            let radiosity = gpu.zeroed::<f32>(m * local * 3)?;
            let p = gpu.uniform(&VteParams { n: n as u32, k: k as u32, ks: ks as u32, lights: m as u32 })?;
            rec.dispatch(
                "V^T E",
                &vte,
                &[p.as_entire_binding(), y.patch_start.binding(), emission.binding(), x.binding()],
                (k * m) as u64,
            )?;
            let shader = match (storage, m > 1) {
                (Storage::F32, false) => lumbre_shaders::radiosity::SOLVE_F32,
                (Storage::F16, false) => lumbre_shaders::radiosity::SOLVE_F16,
                (Storage::F32, true) => lumbre_shaders::radiosity::SOLVE_F32_MANY,
                (Storage::F16, true) => lumbre_shaders::radiosity::SOLVE_F16_MANY,
            };
            let pass = Pass {
                gpu: gpu.clone(),
                shader,
                rhs: if m > 1 { RHS_PER_PASS } else { 1 },
                lights: m,
                ks,
                x: &x,
                emission: &held,
                radiosity: &radiosity,
            };
            let partial = gpu.zeroed::<f32>(m * chunks * 3 * local)?;
            let (finish, chunks_used, main) = match &y.form {
                GpuForm::Dense { y } => ("finish", pass.partials(rec, "partial_sums", (y, n), &x, &partial)?, y),
                GpuForm::Factored { f, w, rho } => {
                    // z = W x with W's own rows and chunks (W is in f32, read by the f32
                    // variant of the same lighting count).
                    let wshader = if m > 1 {
                        lumbre_shaders::radiosity::SOLVE_F32_MANY
                    } else {
                        lumbre_shaders::radiosity::SOLVE_F32
                    };
                    let wpass = Pass { shader: wshader, ..pass_clone(&pass) };
                    let (wc, _) = chunking(w.words_per_row(), k, 3);
                    let wpartial = gpu.zeroed::<f32>(m * wc * 3 * k)?;
                    let wchunks = wpass.partials(rec, "partial_sums", (w, k), &x, &wpartial)?;
                    let z = gpu.zeroed::<f32>(m * 3 * ks)?;
                    let zk = gpu.kernel(&wshader, "finish_z")?;
                    let p = gpu.uniform(&wpass.params(w, k, wchunks, 0, 0, 0))?;
                    let mut res = wpass.resources(&p, &w.blocks[0], &x, &wpartial, &z);
                    res[6] = rho.binding();
                    rec.dispatch("W x", &zk, &res, ((m * 3 * ks) as u64).div_ceil(256))?;
                    ("finish_rho", pass.partials(rec, "partial_rows", (f, n), &z, &partial)?, f)
                }
            };
            let kernel = gpu.kernel(&shader, finish)?;
            let p = gpu.uniform(&pass.params(main, local, chunks_used, 0, 0, 0))?;
            let mut res = pass.resources(&p, &main.blocks[0], &x, &partial, &radiosity);
            if let GpuForm::Factored { rho, .. } = &y.form {
                res[6] = rho.binding();
            }
            rec.dispatch("E - Y x", &kernel, &res, ((m * local * 3) as u64).div_ceil(256))?;
            out.push(radiosity);
        }
        Ok(out)
    }
}

fn pass_clone<'a>(p: &Pass<'a>) -> Pass<'a> {
    Pass {
        gpu: p.gpu.clone(),
        shader: p.shader,
        rhs: p.rhs,
        lights: p.lights,
        ks: p.ks,
        x: p.x,
        emission: p.emission,
        radiosity: p.radiosity,
    }
}

/// The solve's device-resident output: radiosity per batch of lights, and its rows.
#[derive(Clone, Debug)]
pub struct GpuRadiosity {
    /// lights x n x 3 per batch.
    pub batches: Vec<Buffer<f32>>,
    /// Number of elements (rows of the factorisation) solved.
    pub n: usize,
}

impl Compute for Solve {
    type Input = Factorization;
    type Output = Radiosity;
    type GpuInput = GpuFactor;
    type GpuOutput = GpuRadiosity;

    fn name(&self) -> &'static str {
        "low-rank solve"
    }

    fn cpu_reported(&self, f: &Factorization, _: &dyn Progress) -> Result<(Radiosity, Report)> {
        Report::timed(self.name(), || self.cpu(f))
    }

    fn upload(&self, gpu: &Gpu, f: &Factorization) -> Result<GpuFactor> {
        GpuFactor::upload(gpu, f, self.storage, self.block_rows)
    }

    fn record(&self, rec: &mut Recorder, y: &GpuFactor) -> Result<GpuRadiosity> {
        for (m, e) in self.lights.iter().enumerate() {
            check_emission(e, y.n, m)?;
        }
        Ok(GpuRadiosity { batches: self.record_lights(rec, y, &self.lights)?, n: y.rows.iter().map(|r| r.len()).sum() })
    }

    fn download(&self, gpu: &Gpu, out: &GpuRadiosity) -> Result<Radiosity> {
        let mut all = Vec::new();
        for b in &out.batches {
            let flat = gpu.download(b)?;
            for light in flat.chunks(3 * out.n) {
                all.push(light.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
            }
        }
        Ok(Radiosity(all))
    }
}

impl Compute for Vte {
    type Input = [u32];
    type Output = Vec<f32>;
    type GpuInput = (Buffer<u32>, usize);
    type GpuOutput = (Buffer<f32>, usize);

    fn name(&self) -> &'static str {
        "V^T E"
    }

    fn cpu_reported(&self, patch_start: &[u32], _: &dyn Progress) -> Result<(Vec<f32>, Report)> {
        Report::timed(self.name(), || self.cpu(patch_start))
    }

    fn upload(&self, gpu: &Gpu, patch_start: &[u32]) -> Result<(Buffer<u32>, usize)> {
        crate::lowrank::check_patches(patch_start, self.emission.len())?;
        Ok((gpu.upload(patch_start)?, patch_start.len() - 1))
    }

    fn record(&self, rec: &mut Recorder, input: &(Buffer<u32>, usize)) -> Result<(Buffer<f32>, usize)> {
        let gpu = rec.gpu().clone();
        let (n, k) = (self.emission.len(), input.1);
        check_emission(&self.emission, n, 0)?;
        let ks = padded_k(k);
        let flat: Vec<f32> = self.emission.iter().flatten().copied().collect();
        let emission = gpu.upload(&flat)?;
        let x = gpu.zeroed::<f32>(3 * ks)?;
        let p = gpu.uniform(&VteParams { n: n as u32, k: k as u32, ks: ks as u32, lights: 1 })?;
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::SOLVE_VTE, "main")?;
        let res = [p.as_entire_binding(), input.0.binding(), emission.binding(), x.binding()];
        rec.dispatch("V^T E", &kernel, &res, k as u64)?;
        Ok((x, k))
    }

    fn download(&self, gpu: &Gpu, out: &(Buffer<f32>, usize)) -> Result<Vec<f32>> {
        let (x, k) = (gpu.download(&out.0)?, out.1);
        let ks = padded_k(k);
        Ok((0..3).flat_map(|ch| x[ch * ks..ch * ks + k].to_vec()).collect())
    }
}
