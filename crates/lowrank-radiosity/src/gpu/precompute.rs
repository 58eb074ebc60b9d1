//! The precompute on the GPU: `radiosity/precompute_u.wgsl`, `precompute_vtu.wgsl`,
//! `precompute_invert.wgsl` (Gauss–Jordan in blocks) and `precompute_gemm.wgsl`, in the order of the CPU stages, over row blocks of the element rows.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};

use crate::factor::{Factorization, Form};
use crate::lowrank::LowRank;
use crate::matrix::{BlockMatrix, block_rows};
use crate::precompute::{Precompute, Precomputed, singular};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct UParams {
    rows: u32,
    e0: u32,
    k: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<UParams>() == lumbre_shaders::radiosity::PRECOMPUTE_U_PARAMS_SIZE);

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VtuParams {
    k: u32,
    e0: u32,
    e1: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<VtuParams>() == lumbre_shaders::radiosity::PRECOMPUTE_VTU_PARAMS_SIZE);

/// Pivots per block step of the Gauss–Jordan elimination (`BS` of
/// `radiosity/precompute_invert.wgsl`).
const INVERT_BLOCK: usize = 32;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct InvertParams {
    k: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<InvertParams>() == lumbre_shaders::radiosity::PRECOMPUTE_INVERT_PARAMS_SIZE);

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct GemmParams {
    rows: u32,
    k: u32,
    ch: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<GemmParams>() == lumbre_shaders::radiosity::PRECOMPUTE_GEMM_PARAMS_SIZE);

/// A low-rank system on the GPU: F in row blocks (the blocks of U and Y), reflectances,
/// `1 / c_p` and the patch ranges.
#[derive(Clone, Debug)]
pub struct GpuLowRank {
    /// F (n x k) in the row blocks of U and Y ([`Precompute::block_rows`]).
    pub f: BlockMatrix,
    /// n x 3 reflectances.
    pub rho: Buffer<f32>,
    /// `1 / c_p`.
    pub inv_size: Buffer<f32>,
    /// The paper's I.
    pub patch_start: Buffer<u32>,
    /// Number of patches.
    pub k: usize,
}

/// Everything the GPU precompute leaves on the device.
#[derive(Clone, Debug)]
pub struct GpuPrecomputed {
    /// U (n x 3k) in row blocks.
    pub u: BlockMatrix,
    /// `V^T U` (3 x k x k).
    pub vtu: Buffer<f32>,
    /// The inverses (3 x k x k).
    pub inverse: Buffer<f32>,
    /// Gauss–Jordan's state: next step, current step, first bad pivot.
    pub state: Buffer<u32>,
    /// Y (n x 3k) in the row blocks of U; `None` for the factored form.
    pub y: Option<BlockMatrix>,
    /// F, as uploaded (the factored form keeps it).
    pub f: BlockMatrix,
    /// n x 3 reflectances.
    pub rho: Buffer<f32>,
    /// The paper's I (on the host).
    pub patch_start: Vec<u32>,
}

impl Precompute {
    /// Element rows per block of U and Y (and of F, when F is made on the GPU for them).
    pub fn block_rows(&self, gpu: &Gpu, k: usize) -> Result<usize> {
        block_rows(gpu, 12 * k.max(1) as u64, 1, self.block_rows)
    }

    /// Uploads a system.
    pub fn upload_system(&self, gpu: &Gpu, lr: &LowRank) -> Result<GpuLowRank> {
        let rows = self.block_rows(gpu, lr.k())?;
        let rho: Vec<f32> = lr.rho.iter().flatten().copied().collect();
        Ok(GpuLowRank {
            f: BlockMatrix::upload(gpu, &lr.f, rows)?,
            rho: gpu.upload(&rho)?,
            inv_size: gpu.upload(&lr.inv_sizes())?,
            patch_start: gpu.upload(&lr.patch_start)?,
            k: lr.k(),
        })
    }

    /// Records U, `V^T U`, the inverses and Y.
    pub fn record_all(&self, rec: &mut Recorder, s: &GpuLowRank, patch_start: &[u32]) -> Result<GpuPrecomputed> {
        let (u, vtu) = self.record_u_vtu(rec, s)?;
        self.record_from_vtu(rec, s, u, vtu, patch_start)
    }

    /// Records U and `V^T U` of the system's element rows (`s.f.row_range()`): the rows of
    /// `V^T U` of the patches whose elements all lie there (a part of the rows cut at patch
    /// starts), zero elsewhere.
    pub fn record_u_vtu(&self, rec: &mut Recorder, s: &GpuLowRank) -> Result<(BlockMatrix, Buffer<f32>)> {
        let gpu = rec.gpu().clone();
        let k = s.k;
        let u = BlockMatrix::zeroed_like(&gpu, &s.f, 3 * k)?;
        let kk = 3 * k * k;
        gpu.check_size("3 k^2 values of V^T U", 4 * kk as u64, lumbre_gpu::Fit::Binding)?;
        let vtu = gpu.zeroed::<f32>(kk)?;

        // U, then V^T U summed block after block.
        let uk = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_U, "main")?;
        let vk = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_VTU, "main")?;
        for b in 0..u.blocks.len() {
            let (e0, rows) = u.block_range(b);
            let p = gpu.uniform(&UParams { rows: rows as u32, e0: e0 as u32, k: k as u32, _pad: 0 })?;
            let res = [
                p.as_entire_binding(),
                s.f.blocks[b].binding(),
                s.rho.binding(),
                s.inv_size.binding(),
                u.blocks[b].binding(),
            ];
            rec.dispatch("U", &uk, &res, (rows as u64 * 3 * k as u64).div_ceil(256))?;
        }
        for b in 0..u.blocks.len() {
            let (e0, rows) = u.block_range(b);
            let p = gpu.uniform(&VtuParams { k: k as u32, e0: e0 as u32, e1: (e0 + rows) as u32, _pad: 0 })?;
            let res = [p.as_entire_binding(), s.patch_start.binding(), u.blocks[b].binding(), vtu.binding()];
            rec.dispatch("V^T U", &vk, &res, (kk as u64).div_ceil(256))?;
        }
        Ok((u, vtu))
    }

    /// Records the inverses of `I - V^T U` (`vtu`: the whole of it) and Y's rows of `u`.
    pub fn record_from_vtu(
        &self,
        rec: &mut Recorder,
        s: &GpuLowRank,
        u: BlockMatrix,
        vtu: Buffer<f32>,
        patch_start: &[u32],
    ) -> Result<GpuPrecomputed> {
        let gpu = rec.gpu().clone();
        let k = s.k;
        let kk = 3 * k * k;
        let inverse = gpu.zeroed::<f32>(kk)?;
        let state = gpu.zeroed::<u32>(4)?;

        // Gauss–Jordan in block steps of INVERT_BLOCK pivots: one bind group per entry point
        // serves every step.
        let params = gpu.uniform(&InvertParams { k: k as u32, _pad: [0; 3] })?;
        let rows_buf = gpu.zeroed::<f32>(3 * INVERT_BLOCK * k)?;
        let cols_buf = gpu.zeroed::<f32>(3 * k * INVERT_BLOCK)?;
        let res = [
            params.as_entire_binding(),
            vtu.binding(),
            inverse.binding(),
            rows_buf.binding(),
            cols_buf.binding(),
            state.binding(),
        ];
        let init = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_INVERT, "init")?;
        rec.dispatch("invert", &init, &res, (kk as u64).div_ceil(256))?;
        let pivot = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_INVERT, "pivot")?;
        let panels = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_INVERT, "panels")?;
        let update = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_INVERT, "update")?;
        let (pb, nb, ub) = (gpu.bind(&pivot, &res), gpu.bind(&panels, &res), gpu.bind(&update, &res));
        let np = gpu.grid((3 * INVERT_BLOCK as u64 * k as u64).div_ceil(256))?;
        let tiles = k.div_ceil(64) as u64;
        let nu = gpu.grid(3 * tiles * tiles)?;
        rec.pass("invert", |pass| {
            for _ in 0..k.div_ceil(INVERT_BLOCK) {
                pass.set_pipeline(&pivot.pipeline);
                pass.set_bind_group(0, &pb, &[]);
                pass.dispatch_workgroups(1, 1, 1);
                pass.set_pipeline(&panels.pipeline);
                pass.set_bind_group(0, &nb, &[]);
                pass.dispatch_workgroups(np.0, np.1, np.2);
                pass.set_pipeline(&update.pipeline);
                pass.set_bind_group(0, &ub, &[]);
                pass.dispatch_workgroups(nu.0, nu.1, nu.2);
            }
        });

        if self.factored {
            return Ok(GpuPrecomputed {
                u,
                vtu,
                inverse,
                state,
                y: None,
                f: s.f.clone(),
                rho: s.rho.clone(),
                patch_start: patch_start.to_vec(),
            });
        }
        // Y = -U M, per block and channel.
        let y = BlockMatrix::zeroed_like(&gpu, &u, 3 * k)?;
        let gk = gpu.kernel(&lumbre_shaders::radiosity::PRECOMPUTE_GEMM, "main")?;
        for b in 0..u.blocks.len() {
            let (_, rows) = u.block_range(b);
            for ch in 0..3u32 {
                let p = gpu.uniform(&GemmParams { rows: rows as u32, k: k as u32, ch, _pad: 0 })?;
                let res = [p.as_entire_binding(), u.blocks[b].binding(), inverse.binding(), y.blocks[b].binding()];
                let groups = rows.div_ceil(64) as u64 * k.div_ceil(64) as u64;
                rec.dispatch("Y", &gk, &res, groups)?;
            }
        }
        Ok(GpuPrecomputed {
            u,
            vtu,
            inverse,
            state,
            y: Some(y),
            f: s.f.clone(),
            rho: s.rho.clone(),
            patch_start: patch_start.to_vec(),
        })
    }

    /// Fails if Gauss–Jordan met a bad pivot.
    pub fn check_pivots(gpu: &Gpu, out: &GpuPrecomputed) -> Result<()> {
        let state = gpu.download(&out.state)?;
        if state[2] != 0 {
            return Err(singular((state[2] >> 24) as usize));
        }
        Ok(())
    }
}

/// The system and its patch ranges, uploaded.
#[derive(Clone, Debug)]
pub struct GpuSystem {
    /// The system's buffers.
    pub system: GpuLowRank,
    /// The patch ranges on the host.
    pub patch_start: Vec<u32>,
}

impl Compute for Precompute {
    type Input = LowRank;
    type Output = Precomputed;
    type GpuInput = GpuSystem;
    type GpuOutput = GpuPrecomputed;

    fn name(&self) -> &'static str {
        "precompute"
    }

    fn cpu_reported(&self, lr: &LowRank, progress: &dyn Progress) -> Result<(Precomputed, Report)> {
        self.run_cpu(lr, progress)
    }

    fn upload(&self, gpu: &Gpu, lr: &LowRank) -> Result<GpuSystem> {
        Ok(GpuSystem { system: self.upload_system(gpu, lr)?, patch_start: lr.patch_start.clone() })
    }

    fn record(&self, rec: &mut Recorder, s: &GpuSystem) -> Result<GpuPrecomputed> {
        self.record_all(rec, &s.system, &s.patch_start)
    }

    fn download(&self, gpu: &Gpu, out: &GpuPrecomputed) -> Result<Precomputed> {
        Self::check_pivots(gpu, out)?;
        let inverse = gpu.download(&out.inverse)?;
        let factor = match &out.y {
            Some(y) => Factorization::new(out.patch_start.clone(), y.download(gpu)?)?,
            None => {
                let rho = gpu.download(&out.rho)?.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
                let lr = LowRank { patch_start: out.patch_start.clone(), rho, f: out.f.download(gpu)? };
                Factorization::factored(&lr, &inverse)?
            }
        };
        Ok(Precomputed { u: out.u.download(gpu)?, vtu: gpu.download(&out.vtu)?, inverse, factor })
    }
}

impl lumbre_gpu::Agree for Precomputed {
    /// U and `V^T U` are the same products and sums in the same order on both paths: equal
    /// bit for bit where the device evaluates f32 operations one by one as IEEE 754 does
    /// (lavapipe), and within a few ulps (U) or the largest patch's element count in ulps
    /// (`V^T U`, sums of non-negative terms) where SPIR-V lets the driver fuse and
    /// reassociate. The inverses and Y (or W) agree within `tol` of the largest value of
    /// each (elimination orders and GEMM orders differ).
    fn disagreement(&self, gpu: &Self, tol: lumbre_gpu::Tolerance) -> Option<String> {
        use lumbre_gpu::{Tolerance, compare_slices};
        let eps = f32::EPSILON as f64;
        if let Some(d) = compare_slices(&self.u.data, &gpu.u.data, Tolerance::relative(2.0 * eps)) {
            return Some(format!("U: {d}"));
        }
        let c_max = self.factor.patch_start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(1) as f64;
        if let Some(d) = compare_slices(&self.vtu, &gpu.vtu, Tolerance::relative((c_max + 1.0) * eps)) {
            return Some(format!("V^T U: {d}"));
        }
        let scaled = |v: &[f32]| {
            let m = v.iter().fold(0.0f64, |m, &x| m.max(x.abs() as f64));
            Tolerance { abs: tol.abs * m, ..tol }
        };
        if let Some(d) = compare_slices(&self.inverse, &gpu.inverse, scaled(&self.inverse)) {
            return Some(format!("inverse: {d}"));
        }
        if self.factor.patch_start != gpu.factor.patch_start {
            return Some("patch ranges differ".into());
        }
        match (&self.factor.form, &gpu.factor.form) {
            (Form::Dense { y: a }, Form::Dense { y: b }) => {
                compare_slices(&a.data, &b.data, scaled(&a.data)).map(|d| format!("Y: {d}"))
            }
            (Form::Factored { f: fa, w: wa, rho: ra }, Form::Factored { f: fb, w: wb, rho: rb }) => {
                if fa != fb || ra != rb {
                    return Some("F or rho differ".into());
                }
                compare_slices(wa, wb, scaled(wa)).map(|d| format!("W: {d}"))
            }
            _ => Some("the forms differ".into()),
        }
    }
}
