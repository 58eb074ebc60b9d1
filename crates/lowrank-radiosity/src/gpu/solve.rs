//! The solve on the GPU: `radiosity/vte.wgsl` (`V^T E`, segmented sums), then
//! `radiosity/solve.wgsl` (partial dot products over Y's row blocks, then B = E - their sum),
//! in the order of the CPU stages. Y is uploaded once ([`lumbre_gpu::Backend::place`]) in the
//! layout of `radiosity/layout.wgsl`, f32 or f16.

use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result};

use crate::factor::Factorization;
use crate::layout::{Storage, f16_scale, layout_cpu, padded_k};
use crate::matrix::BlockMatrix;
use crate::solve::{Radiosity, Solve, check_emission, solve_cpu};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VteParams {
    n: u32,
    k: u32,
    ks: u32,
    lights: u32,
}
const _: () = assert!(size_of::<VteParams>() == lumbre_shaders::radiosity::VTE_PARAMS_SIZE);

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
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<SolveParams>() == lumbre_shaders::radiosity::SOLVE_F32_PARAMS_SIZE);

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LayoutParams {
    rows: u32,
    k: u32,
    qw: u32,
    half: u32,
    scale: f32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<LayoutParams>() == lumbre_shaders::radiosity::LAYOUT_PARAMS_SIZE);

/// Lighting vectors per pass of `radiosity/solve.wgsl`'s `_many` variants.
pub const RHS_PER_PASS: usize = 8;

/// Threads the partial products aim for: Y's rows are cut into enough chunks that even a
/// small n keeps the GPU's memory system busy.
const TARGET_THREADS: usize = 1 << 20;

/// Y on the GPU in the solve's layout, and the patch ranges.
#[derive(Clone, Debug)]
pub struct GpuFactor {
    /// Number of elements.
    pub n: usize,
    /// Number of patches.
    pub k: usize,
    /// f32 or f16.
    pub storage: Storage,
    /// What the stored values were multiplied by (f16), else 1.
    pub scale: f32,
    /// Element rows per block (the last may have fewer).
    pub block_rows: usize,
    /// The blocks (see the layout module).
    pub blocks: Vec<Buffer<[u32; 4]>>,
    /// The paper's I.
    pub patch_start: Buffer<u32>,
}

impl GpuFactor {
    /// 16-byte words per channel row.
    pub fn words_per_row(&self) -> usize {
        padded_k(self.k) / self.storage.per_word()
    }

    /// Bytes of Y as stored.
    pub fn bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.size_bytes()).sum()
    }

    /// Element rows per block for `k` patches and `storage`, as many as fit one binding
    /// (capped by `cap`).
    pub fn block_rows(gpu: &Gpu, k: usize, storage: Storage, cap: Option<usize>) -> Result<usize> {
        crate::matrix::block_rows(gpu, 3 * (padded_k(k) * storage.bytes_per_value()) as u64, 1, cap)
    }

    /// Lays Y out and uploads it (on the host: [`layout_cpu`]).
    pub fn upload(gpu: &Gpu, f: &Factorization, storage: Storage, cap: Option<usize>) -> Result<GpuFactor> {
        let rows = Self::block_rows(gpu, f.k, storage, cap)?;
        let scale = match storage {
            Storage::F32 => 1.0,
            Storage::F16 => f16_scale(f.y.data.iter().fold(0.0f32, |m, v| m.max(v.abs()))),
        };
        let blocks =
            f.y.data
                .chunks(rows * 3 * f.k)
                .map(|c| gpu.upload(&layout_cpu(c, c.len() / (3 * f.k), f.k, storage, scale)))
                .collect::<Result<Vec<_>>>()?;
        Ok(GpuFactor {
            n: f.n,
            k: f.k,
            storage,
            scale,
            block_rows: rows,
            blocks,
            patch_start: gpu.upload(&f.patch_start)?,
        })
    }

    /// Records the layout of Y already on the GPU (row-major blocks, as the precompute leaves
    /// it) into a new factor; `scale` for f16 (see [`f16_scale`]).
    pub fn record_layout(
        rec: &mut Recorder,
        y: &BlockMatrix,
        patch_start: &[u32],
        storage: Storage,
        scale: f32,
    ) -> Result<GpuFactor> {
        let gpu = rec.gpu().clone();
        let k = y.cols / 3;
        let qw = padded_k(k) / storage.per_word();
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::LAYOUT, "main")?;
        let mut blocks = Vec::with_capacity(y.blocks.len());
        for (b, src) in y.blocks.iter().enumerate() {
            let (_, rows) = y.block_range(b);
            let words = 3 * qw * rows;
            let out = gpu.zeroed::<[u32; 4]>(words)?;
            let p = gpu.uniform(&LayoutParams {
                rows: rows as u32,
                k: k as u32,
                qw: qw as u32,
                half: (storage == Storage::F16) as u32,
                scale,
                _pad: [0; 3],
            })?;
            rec.dispatch(
                "layout",
                &kernel,
                &[p.as_entire_binding(), src.binding(), out.binding()],
                (words as u64).div_ceil(256),
            )?;
            blocks.push(out);
        }
        let scale = if storage == Storage::F16 { scale } else { 1.0 };
        Ok(GpuFactor {
            n: y.rows,
            k,
            storage,
            scale,
            block_rows: y.block_rows,
            blocks,
            patch_start: gpu.upload(patch_start)?,
        })
    }

    /// The first element and element count of block `b`.
    fn block_range(&self, b: usize) -> (usize, usize) {
        let e0 = b * self.block_rows;
        (e0, self.block_rows.min(self.n - e0))
    }
}

/// Chunks per channel row and words per chunk, for `qw` words per row and n elements.
pub(crate) fn chunking(qw: usize, n: usize) -> (usize, usize) {
    let want = TARGET_THREADS.div_ceil(3 * n.max(1)).clamp(1, qw.max(1));
    let chunk = qw.max(1).div_ceil(want);
    (qw.max(1).div_ceil(chunk), chunk)
}

impl Solve {
    /// Records the solve of `lights` (each n RGB values, validated) against `y`: the
    /// radiosity, lights x n x 3, one buffer per batch of lights that fits a binding.
    pub fn record_lights(
        &self,
        rec: &mut Recorder,
        y: &GpuFactor,
        lights: &[Vec<[f32; 3]>],
    ) -> Result<Vec<Buffer<f32>>> {
        let gpu = rec.gpu().clone();
        let (n, k) = (y.n, y.k);
        let ks = padded_k(k);
        let qw = y.words_per_row();
        let (chunks, chunk) = chunking(qw, n);
        let max = gpu.limits().max_storage_buffer_binding_size as usize / 4;
        let per_light = (3 * n * chunks).max(3 * n).max(3 * ks);
        let batch = (max / per_light).clamp(1, lights.len().max(1));
        if per_light > max {
            return Err(Error::LimitExceeded {
                what: format!("partial sums of one lighting ({per_light} values)"),
                limit: "max_storage_buffer_binding_size",
                requested: 4 * per_light as u64,
                max: 4 * max as u64,
            });
        }
        let vte = gpu.kernel(&lumbre_shaders::radiosity::VTE, "main")?;
        let mut out = Vec::new();
        for group in lights.chunks(batch) {
            let m = group.len();
            let flat: Vec<f32> = group.iter().flat_map(|e| e.iter().flatten().copied()).collect();
            let emission = gpu.upload(&flat)?;
            let x = gpu.zeroed::<f32>(m * 3 * ks)?;
            let partial = gpu.zeroed::<f32>(m * chunks * 3 * n)?;
            let radiosity = gpu.zeroed::<f32>(m * n * 3)?;
            let p = gpu.uniform(&VteParams { n: n as u32, k: k as u32, ks: ks as u32, lights: m as u32 })?;
            let res = [p.as_entire_binding(), y.patch_start.binding(), emission.binding(), x.binding()];
            rec.dispatch("V^T E", &vte, &res, (k * m) as u64)?;
            let shader = match (y.storage, m > 1) {
                (Storage::F32, false) => lumbre_shaders::radiosity::SOLVE_F32,
                (Storage::F16, false) => lumbre_shaders::radiosity::SOLVE_F16,
                (Storage::F32, true) => lumbre_shaders::radiosity::SOLVE_F32_MANY,
                (Storage::F16, true) => lumbre_shaders::radiosity::SOLVE_F16_MANY,
            };
            let rhs = if m > 1 { RHS_PER_PASS } else { 1 };
            let partial_k = gpu.kernel(&shader, "partial_sums")?;
            let finish_k = gpu.kernel(&shader, "finish")?;
            let params = |e0: usize, rows: usize, light0: usize| SolveParams {
                n: n as u32,
                e0: e0 as u32,
                rows: rows as u32,
                qw: qw as u32,
                xq: (ks / 4) as u32,
                chunks: chunks as u32,
                chunk: chunk as u32,
                lights: m as u32,
                light0: light0 as u32,
                inv_scale: 1.0 / y.scale,
                _pad: [0; 2],
            };
            for light0 in (0..m).step_by(rhs) {
                for (b, words) in y.blocks.iter().enumerate() {
                    let (e0, rows) = y.block_range(b);
                    let p = gpu.uniform(&params(e0, rows, light0))?;
                    let res = [
                        p.as_entire_binding(),
                        words.binding(),
                        x.binding(),
                        partial.binding(),
                        emission.binding(),
                        radiosity.binding(),
                    ];
                    rec.dispatch("Y x", &partial_k, &res, ((3 * rows * chunks) as u64).div_ceil(256))?;
                }
            }
            let p = gpu.uniform(&params(0, 0, 0))?;
            let res = [
                p.as_entire_binding(),
                y.blocks[0].binding(),
                x.binding(),
                partial.binding(),
                emission.binding(),
                radiosity.binding(),
            ];
            rec.dispatch("E - Y x", &finish_k, &res, ((m * n * 3) as u64).div_ceil(256))?;
            out.push(radiosity);
        }
        Ok(out)
    }
}

/// The solve's device-resident output: radiosity per batch of lights, and n.
#[derive(Clone, Debug)]
pub struct GpuRadiosity {
    /// lights x n x 3 per batch.
    pub batches: Vec<Buffer<f32>>,
    /// Number of elements.
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

    fn cpu(&self, f: &Factorization) -> Result<Radiosity> {
        match self.storage {
            Storage::F32 => solve_cpu(f, &self.lights),
            Storage::F16 => solve_cpu(&f.rounded_to_f16(), &self.lights),
        }
    }

    fn upload(&self, gpu: &Gpu, f: &Factorization) -> Result<GpuFactor> {
        GpuFactor::upload(gpu, f, self.storage, self.block_rows)
    }

    fn record(&self, rec: &mut Recorder, y: &GpuFactor) -> Result<GpuRadiosity> {
        for (m, e) in self.lights.iter().enumerate() {
            check_emission(e, y.n, m)?;
        }
        Ok(GpuRadiosity { batches: self.record_lights(rec, y, &self.lights)?, n: y.n })
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

impl Compute for crate::solve::Vte {
    type Input = [u32];
    type Output = Vec<f32>;
    type GpuInput = (Buffer<u32>, usize);
    type GpuOutput = (Buffer<f32>, usize);

    fn name(&self) -> &'static str {
        "V^T E"
    }

    fn cpu(&self, patch_start: &[u32]) -> Result<Vec<f32>> {
        crate::lowrank::check_patches(patch_start, self.emission.len())?;
        check_emission(&self.emission, self.emission.len(), 0)?;
        Ok(crate::solve::vte_cpu(patch_start, &self.emission).concat())
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
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::VTE, "main")?;
        rec.dispatch(
            "V^T E",
            &kernel,
            &[p.as_entire_binding(), input.0.binding(), emission.binding(), x.binding()],
            k as u64,
        )?;
        Ok((x, k))
    }

    fn download(&self, gpu: &Gpu, out: &(Buffer<f32>, usize)) -> Result<Vec<f32>> {
        let (x, k) = (gpu.download(&out.0)?, out.1);
        let ks = padded_k(k);
        Ok((0..3).flat_map(|ch| x[ch * ks..ch * ks + k].to_vec()).collect())
    }
}
