//! The factorisation made on the GPU and kept there for the solve: form factors
//! (`radiosity/formfactor.wgsl`), the precompute, then the solve's layout of Y
//! (`radiosity/layout.wgsl`), or of F and W (`radiosity/factor.wgsl`) for the factored form. Only
//! the elimination's pivot check (16 bytes) and, in f16, the matrix's largest value (4 bytes)
//! come back to the host; the CPU twin is [`FormFactors`], [`Precompute`] and
//! [`GpuFactor::upload`]'s host layout.

use std::time::Duration;

use lumbre_gpu::{Buffer, Gpu, Progress, Recorder, Report, Result};

use crate::factor::Factorization;
use crate::formfactor::FormFactors;
use crate::gpu::formfactor::GpuMesh;
use crate::gpu::precompute::{GpuLowRank, GpuPrecomputed};
use crate::gpu::solve::{GpuFactor, GpuForm, GpuRows, LayoutParams};
use crate::layout::{Storage, f16_scale};
use crate::lowrank::LowRank;
use crate::matrix::{BlockMatrix, block_rows};
use crate::mesh::TwoMesh;
use crate::precompute::Precompute;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WParams {
    rows: u32,
    p0: u32,
    k: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<WParams>() == lumbre_shaders::radiosity::FACTOR_PARAMS_SIZE);

/// A factorisation made on the GPU: ready for any number of solves, and the precompute's
/// row-major output where it was kept for [`GpuFactored::download`].
#[derive(Clone, Debug)]
pub struct GpuFactored {
    /// What the solve reads.
    pub factor: GpuFactor,
    /// Y (or F and the inverses) row-major, when asked to keep it.
    pub kept: Option<GpuPrecomputed>,
    /// GPU time of the stages: form factors, U, `V^T U`, the inverse, Y (or W), layout.
    pub report: Report,
}

/// The largest |value| of `m` on the GPU (4 bytes read back).
fn max_abs(gpu: &Gpu, m: &BlockMatrix) -> Result<f32> {
    let largest = gpu.zeroed::<u32>(1)?;
    let kernel = gpu.kernel(&lumbre_shaders::radiosity::LAYOUT, "max_abs")?;
    let mut rec = gpu.recorder();
    for (b, block) in m.blocks.iter().enumerate() {
        let (_, rows) = m.block_range(b);
        let p = gpu.uniform(&LayoutParams {
            rows: rows as u32,
            k: m.cols as u32,
            qw: 0,
            half: 0,
            scale: 1.0,
            channels: 1,
            _p1: 0,
            _p2: 0,
        })?;
        // Resources by binding number: 2 (the layout's output) is not bound here.
        let res = [p.as_entire_binding(), block.binding(), block.binding(), largest.binding()];
        rec.dispatch("max |Y|", &kernel, &res, ((rows * m.cols) as u64).div_ceil(256))?;
    }
    rec.submit()?;
    Ok(f32::from_bits(gpu.download(&largest)?[0]))
}

/// The scale a matrix is stored with (f16: from its largest value; f32: 1).
fn scale_of(gpu: &Gpu, m: &BlockMatrix, storage: Storage) -> Result<f32> {
    Ok(match storage {
        Storage::F32 => 1.0,
        Storage::F16 => f16_scale(max_abs(gpu, m)?),
    })
}

/// W's rows (k rows of 3 channels) from the inverses and `1 / c_p`.
fn record_w(rec: &mut Recorder, inverse: &Buffer<f32>, inv_size: &Buffer<f32>, k: usize) -> Result<BlockMatrix> {
    let gpu = rec.gpu().clone();
    let rows = block_rows(&gpu, 12 * k.max(1) as u64, 1, None)?;
    let w = BlockMatrix::zeroed(&gpu, k, 3 * k, rows)?;
    let kernel = gpu.kernel(&lumbre_shaders::radiosity::FACTOR, "main")?;
    for (b, block) in w.blocks.iter().enumerate() {
        let (p0, rows) = w.block_range(b);
        let p = gpu.uniform(&WParams { rows: rows as u32, p0: p0 as u32, k: k as u32, _pad: 0 })?;
        let res = [p.as_entire_binding(), inverse.binding(), inv_size.binding(), block.binding()];
        rec.dispatch("W", &kernel, &res, ((rows * 3 * k) as u64).div_ceil(256))?;
    }
    Ok(w)
}

impl GpuFactor {
    /// Makes the factorisation of `mesh` on the GPU and leaves it there: form factors by
    /// `ff`, the precompute by `pc` (dense Y, or its factors with `pc.factored`), laid out
    /// for the solve in `storage`. With `keep`, the precompute's row-major output stays too,
    /// for [`GpuFactored::download`] (a saved factorisation); else it is freed once laid out.
    /// `progress` hears of the form factors' rows.
    pub fn compute(
        gpu: &Gpu,
        mesh: &TwoMesh,
        ff: &FormFactors,
        pc: &Precompute,
        storage: Storage,
        keep: bool,
        progress: &dyn Progress,
    ) -> Result<GpuFactored> {
        let (n, k) = (mesh.n(), mesh.k());
        let mut report = Report::default();
        let rows = pc.block_rows(gpu, k)?;
        let ff = FormFactors { full: false, block_rows: Some(ff.block_rows.map_or(rows, |r| r.min(rows))), ..*ff };
        let on_gpu = report.time("upload", || GpuMesh::upload(gpu, mesh, false))?;
        let f = ff.output(gpu, &on_gpu)?;
        let ff_time = ff.run_into(gpu, &on_gpu, &f, progress)?;
        report.merge(Report { stages: vec![("form factors".into(), ff_time)], stats: Vec::new(), gpu: Some(ff_time) });
        drop(on_gpu);
        let inv_size: Vec<f32> = mesh.patch_sizes().iter().map(|&c| 1.0 / c as f32).collect();
        let system = GpuLowRank {
            f,
            rho: gpu.upload(&mesh.rho.iter().flatten().copied().collect::<Vec<f32>>())?,
            inv_size: gpu.upload(&inv_size)?,
            patch_start: gpu.upload(&mesh.patch_start)?,
            k,
        };
        progress.update("precompute", 0, 1);
        let mut rec = gpu.recorder();
        let out = pc.record_all(&mut rec, &system, &mesh.patch_start)?;
        report.merge(Report::from_timings("layout", &rec.submit()?));
        Precompute::check_pivots(gpu, &out)?;
        progress.update("precompute", 1, 1);

        let form = match &out.y {
            Some(y) => {
                let scale = scale_of(gpu, y, storage)?;
                let mut rec = gpu.recorder();
                let y = GpuRows::record_layout(&mut rec, y, 3, storage, scale)?;
                report.merge(Report::from_timings("layout", &rec.submit()?));
                GpuForm::Dense { y }
            }
            None => {
                let scale = scale_of(gpu, &out.f, storage)?;
                let mut rec = gpu.recorder();
                let w = record_w(&mut rec, &out.inverse, &system.inv_size, k)?;
                let f = GpuRows::record_layout(&mut rec, &out.f, 1, storage, scale)?;
                let w = GpuRows::record_layout(&mut rec, &w, 3, Storage::F32, 1.0)?;
                report.merge(Report::from_timings("layout", &rec.submit()?));
                GpuForm::Factored { f, w, rho: system.rho.clone() }
            }
        };
        let factor = GpuFactor { n, k, form, patch_start: system.patch_start.clone() };
        Ok(GpuFactored { factor, kept: keep.then_some(out), report })
    }
}

impl GpuFactored {
    /// Reads the factorisation back (to save it): Y, or F and the inverses (then W on the
    /// host, as [`Factorization::factored`] makes it). Needs the precompute's output kept.
    pub fn download(&self, gpu: &Gpu, mesh: &TwoMesh) -> Result<Factorization> {
        let out = self.kept.as_ref().ok_or_else(|| {
            lumbre_gpu::Error::Input("the precompute's output was not kept: compute with keep = true".into())
        })?;
        let factor = match &out.y {
            Some(y) => Factorization::new(out.patch_start.clone(), y.download(gpu)?)?,
            None => {
                let lr =
                    LowRank { patch_start: out.patch_start.clone(), rho: mesh.rho.clone(), f: out.f.download(gpu)? };
                Factorization::factored(&lr, &gpu.download(&out.inverse)?)?
            }
        };
        Ok(factor.with_fingerprint(mesh.fingerprint()))
    }

    /// The GPU time of the whole factorisation.
    pub fn gpu_time(&self) -> Duration {
        self.report.gpu.unwrap_or_default()
    }
}
