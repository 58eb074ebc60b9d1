//! The factorisation made on the GPU and kept there for the solve: form factors
//! (`radiosity/formfactor.wgsl`), the precompute, then the solve's layout of Y
//! (`radiosity/layout.wgsl`), or of F and W (`radiosity/factor.wgsl`) for the factored form. Only
//! the elimination's pivot check (16 bytes) and, in f16, the matrix's largest value (4 bytes)
//! come back to the host; the CPU twin is [`FormFactors`], [`Precompute`] and
//! [`GpuFactor::upload`]'s host layout.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use lumbre_gpu::{Buffer, Gpu, Progress, Recorder, Report, Result};

use crate::factor::Factorization;
use crate::formfactor::FormFactors;
use crate::gpu::formfactor::GpuMesh;
use crate::gpu::precompute::{GpuLowRank, GpuPrecomputed};
use crate::gpu::solve::{GpuFactor, GpuForm, GpuRows, LayoutParams};
use crate::layout::{Storage, f16_scale};
use crate::lowrank::LowRank;
use crate::matrix::{BlockMatrix, Matrix, block_rows};
use crate::mesh::{TwoMesh, rows_in_parts};
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
        let parts = Self::compute_parts(std::slice::from_ref(gpu), mesh, ff, pc, storage, keep, &|_, s, d, t| {
            progress.update(s, d, t)
        })?;
        Ok(parts.into_iter().next().expect("one part"))
    }

    /// Makes the factorisation of `mesh` on several GPUs at once, as [`GpuFactor::compute`]
    /// does on one: the element rows are cut into chunks of whole patches (eight a GPU), which
    /// the GPUs take as each frees up, so a faster GPU, or one given cheaper rows, takes more;
    /// each GPU keeps the rows it took, the same bits as one GPU of the kind makes of them, and
    /// each part's solve gives those rows' radiosity ([`GpuFactor::scatter`] puts them in
    /// place). `progress` hears of each GPU's rows of form factors by its index. One part a
    /// GPU that took rows, in the order of `gpus`.
    ///
    /// ```no_run
    /// use lumbre_radiosity::{FormFactors, GpuFactor, Precompute, Solve, Storage, TwoMesh};
    /// use lumbre_gpu::{Compute, Gpu, GpuOptions, Placed};
    ///
    /// let gpus = [0, 1].map(|i| Gpu::with_options(&GpuOptions { adapter: Some(format!("#{i}")), ..GpuOptions::from_env() }));
    /// let gpus = gpus.into_iter().collect::<Result<Vec<_>, _>>()?;
    /// let mesh = TwoMesh::closed_box(64, 8)?;
    /// let (ff, pc) = (FormFactors::default(), Precompute::default());
    /// let parts = GpuFactor::compute_parts(&gpus, &mesh, &ff, &pc, Storage::F32, false, &|_, _, _, _| {})?;
    /// let mut b = vec![[0.0; 3]; mesh.n()];
    /// for (gpu, part) in gpus.iter().zip(parts) {
    ///     let solve = Solve::new(vec![mesh.emission.clone()]);
    ///     let (rows, _) = solve.run_placed(&Placed::Gpu(gpu.clone(), part.factor.clone()), &())?;
    ///     part.factor.scatter(&rows.0[0], &mut b);
    /// }
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn compute_parts(
        gpus: &[Gpu],
        mesh: &TwoMesh,
        ff: &FormFactors,
        pc: &Precompute,
        storage: Storage,
        keep: bool,
        progress: &(dyn Fn(usize, &str, u64, u64) + Sync),
    ) -> Result<Vec<GpuFactored>> {
        // One GPU makes every row in one piece (each chunk costs its own dispatches, in the
        // solve too).
        let chunks: Vec<Range<usize>> = match gpus.len() {
            1 => std::iter::once(0..mesh.n()).collect(),
            g => rows_in_parts(&mesh.patch_start, CHUNKS_PER_GPU * g).into_iter().filter(|r| !r.is_empty()).collect(),
        };
        let gpus = &gpus[..gpus.len().min(chunks.len())];
        let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
        let mut parts = in_parallel(gpus, |i, gpu| {
            let take = || -> Result<FactorPart> {
                let mut report = Report::default();
                let on_gpu = report.time("upload", || GpuMesh::upload(gpu, mesh, false))?;
                let ff = part_form_factors(ff, pc, gpu, mesh.k())?;
                let (mut taken, mut rows, mut time) = (Vec::new(), Vec::new(), Duration::ZERO);
                // Each GPU's first chunk is its own, so that every GPU holds rows.
                let mut c = i;
                while c < chunks.len() && !stop.load(Ordering::Relaxed) {
                    let done: usize = rows.iter().map(Range::len).sum();
                    let out = ff.output_rows(gpu, &on_gpu, std::slice::from_ref(&chunks[c]))?;
                    time += ff.run_into(gpu, &on_gpu, &out, &|s: &str, d, _| {
                        progress(i, s, done as u64 + d, mesh.n() as u64)
                    })?;
                    taken.push(out);
                    rows.push(chunks[c].clone());
                    c = gpus.len() + next.fetch_add(1, Ordering::Relaxed);
                }
                report.merge(Report {
                    stages: vec![("form factors".into(), time)],
                    stats: Vec::new(),
                    gpu: Some(time),
                });
                FactorPart::of_form_factors(gpu, mesh, BlockMatrix::join(taken)?, rows, report, pc)
            };
            take().inspect_err(|_| stop.store(true, Ordering::Relaxed))
        })?;
        // Every part's rows of V^T U to every other part.
        if parts.len() > 1 {
            let vtus = in_parallel(&parts, |_, p| p.vtu_rows())?;
            in_parallel(&parts, |i, p| {
                vtus.iter().enumerate().filter(|&(j, _)| j != i).try_for_each(|(_, v)| p.add_vtu_rows(v))
            })?;
        }
        in_parallel(parts.iter_mut(), |i, p| {
            progress(i, "precompute", 0, 1);
            p.precompute(pc, mesh)?;
            progress(i, "precompute", 1, 1);
            Ok(())
        })?;
        let scale = match storage {
            Storage::F32 => 1.0,
            Storage::F16 => f16_scale(in_parallel(&parts, |_, p| p.largest())?.into_iter().fold(0.0, f32::max)),
        };
        in_parallel(parts, |_, p| p.finish(mesh, storage, scale, keep))
    }

    /// Puts a part's radiosity (`part`: this factorisation's rows, as its solve gives them)
    /// in place among every element's (`whole`); see [`GpuFactor::compute_parts`].
    pub fn scatter(&self, part: &[[f32; 3]], whole: &mut [[f32; 3]]) {
        let mut at = 0;
        for r in &self.rows {
            whole[r.clone()].copy_from_slice(&part[at..at + r.len()]);
            at += r.len();
        }
    }
}

/// Chunks of rows a GPU of [`GpuFactor::compute_parts`] may take: more balance the GPUs
/// finer, each costs a few dispatches more.
const CHUNKS_PER_GPU: usize = 8;

/// The form factors' settings of a part: blocks of rows that U and Y can share.
fn part_form_factors(ff: &FormFactors, pc: &Precompute, gpu: &Gpu, k: usize) -> Result<FormFactors> {
    let block = pc.block_rows(gpu, k)?;
    Ok(FormFactors { full: false, block_rows: Some(ff.block_rows.map_or(block, |r| r.min(block))), ..*ff })
}

/// `f` on each item, each in a thread of its own (inline for one item), the results in order
/// (the first error, if any).
fn in_parallel<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    f: impl Fn(usize, T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let items: Vec<T> = items.into_iter().collect();
    if items.len() == 1 {
        return items.into_iter().map(|t| f(0, t)).collect();
    }
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = items.into_iter().enumerate().map(|(i, t)| scope.spawn(move || f(i, t))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(lumbre_gpu::Error::Input("a GPU's thread panicked".into()))))
            .collect()
    })
}

/// One GPU's part of a factorisation made on several: the element rows of whole patches
/// ([`rows_in_parts`]). Each part makes its rows of F, U and `V^T U`; the parts exchange their
/// rows of `V^T U` ([`FactorPart::vtu_rows`], [`FactorPart::add_vtu_rows`]); each inverts the
/// whole (the same bits on every device of a kind) and makes its rows of Y, bit for bit the
/// rows one GPU makes of the whole. [`GpuFactor::compute_parts`] runs the parts on several
/// GPUs; a shard runs one and keeps its form factors.
///
/// ```no_run
/// use lumbre_radiosity::{FactorPart, FormFactors, Precompute, TwoMesh, rows_in_parts};
/// let (gpu, mesh) = (lumbre_gpu::Gpu::new()?, TwoMesh::closed_box(16, 4)?);
/// let rows = rows_in_parts(&mesh.patch_start, 4)[1].clone(); // the second of 4 shards
/// let part = FactorPart::begin(&gpu, &mesh, &FormFactors::default(), &Precompute::default(), rows.clone(), &())?;
/// assert_eq!(part.form_factors()?.rows, rows.len());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Debug)]
pub struct FactorPart {
    gpu: Gpu,
    system: GpuLowRank,
    u: BlockMatrix,
    vtu: Buffer<f32>,
    out: Option<GpuPrecomputed>,
    /// The element rows this part holds, in order, and their patches.
    rows: Vec<Range<usize>>,
    patches: Vec<Range<usize>>,
    /// GPU time of the stages so far (and the mesh's upload, wall time).
    pub report: Report,
}

impl FactorPart {
    /// Form factors, U and `V^T U` of element rows `rows` (whole patches) of `mesh` on `gpu`.
    pub fn begin(
        gpu: &Gpu,
        mesh: &TwoMesh,
        ff: &FormFactors,
        pc: &Precompute,
        rows: Range<usize>,
        progress: &dyn Progress,
    ) -> Result<FactorPart> {
        let mut report = Report::default();
        let on_gpu = report.time("upload", || GpuMesh::upload(gpu, mesh, false))?;
        let ff = part_form_factors(ff, pc, gpu, mesh.k())?;
        let f = ff.output_rows(gpu, &on_gpu, std::slice::from_ref(&rows))?;
        let time = ff.run_into(gpu, &on_gpu, &f, progress)?;
        report.merge(Report { stages: vec![("form factors".into(), time)], stats: Vec::new(), gpu: Some(time) });
        Self::of_form_factors(gpu, mesh, f, vec![rows], report, pc)
    }

    /// U and `V^T U` of the form factors `f` of element rows `rows` (ranges of whole patches,
    /// in the order of `f`'s blocks).
    fn of_form_factors(
        gpu: &Gpu,
        mesh: &TwoMesh,
        f: BlockMatrix,
        rows: Vec<Range<usize>>,
        mut report: Report,
        pc: &Precompute,
    ) -> Result<FactorPart> {
        let at = |e: usize| mesh.patch_start.binary_search(&(e as u32)).ok();
        let patches = rows
            .iter()
            .map(|r| match (at(r.start), at(r.end)) {
                (Some(p0), Some(p1)) if p0 <= p1 => Ok(p0..p1),
                _ => Err(lumbre_gpu::Error::Input(format!(
                    "element rows {r:?} are not whole patches of the mesh (n = {})",
                    mesh.n()
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        let inv_size: Vec<f32> = mesh.patch_sizes().iter().map(|&c| 1.0 / c as f32).collect();
        let system = GpuLowRank {
            f,
            rho: gpu.upload(&mesh.rho.iter().flatten().copied().collect::<Vec<f32>>())?,
            inv_size: gpu.upload(&inv_size)?,
            patch_start: gpu.upload(&mesh.patch_start)?,
            k: mesh.k(),
        };
        let mut rec = gpu.recorder();
        let (u, vtu) = pc.record_u_vtu(&mut rec, &system)?;
        report.merge(Report::from_timings("U, V^T U", &rec.submit()?));
        Ok(FactorPart { gpu: gpu.clone(), system, u, vtu, out: None, rows, patches, report })
    }

    /// This part's form factors, read back (a shard's result): its rows, in order.
    pub fn form_factors(&self) -> Result<Matrix> {
        self.system.f.download(&self.gpu)
    }

    /// This part's rows of `V^T U` (its patches' rows of each channel), read back.
    pub fn vtu_rows(&self) -> Result<Vec<(Range<usize>, Vec<f32>)>> {
        let k = self.system.k;
        let mut all = Vec::with_capacity(self.patches.len());
        for patches in &self.patches {
            let mut rows = Vec::with_capacity(3 * patches.len() * k);
            for ch in 0..3 {
                let base = ch * k * k;
                rows.extend(self.gpu.download_range(&self.vtu, base + patches.start * k..base + patches.end * k)?);
            }
            all.push((patches.clone(), rows));
        }
        Ok(all)
    }

    /// Writes another part's rows of `V^T U` ([`FactorPart::vtu_rows`]) into this one's.
    pub fn add_vtu_rows(&self, rows: &[(Range<usize>, Vec<f32>)]) -> Result<()> {
        let k = self.system.k;
        for (patches, values) in rows {
            for (ch, chunk) in values.chunks((patches.len() * k).max(1)).take(3).enumerate() {
                self.gpu.write(&self.vtu, ch * k * k + patches.start * k, chunk)?;
            }
        }
        Ok(())
    }

    /// The inverses of `I - V^T U` (once every part's rows of `V^T U` are in) and this part's
    /// rows of Y (or W for the factored form).
    pub fn precompute(&mut self, pc: &Precompute, mesh: &TwoMesh) -> Result<()> {
        let mut rec = self.gpu.recorder();
        let out = pc.record_from_vtu(&mut rec, &self.system, self.u.clone(), self.vtu.clone(), &mesh.patch_start)?;
        self.report.merge(Report::from_timings("precompute", &rec.submit()?));
        Precompute::check_pivots(&self.gpu, &out)?;
        self.out = Some(out);
        Ok(())
    }

    /// The largest |value| of what the solve reads (Y, or F for the factored form): the f16
    /// scale of the parts is the one of their largest.
    pub fn largest(&self) -> Result<f32> {
        let out = self.precomputed()?;
        max_abs(&self.gpu, out.y.as_ref().unwrap_or(&out.f))
    }

    fn precomputed(&self) -> Result<&GpuPrecomputed> {
        self.out.as_ref().ok_or_else(|| lumbre_gpu::Error::Input("a factor part's precompute has not run".into()))
    }

    /// Lays the part out for the solve in `storage` (`scale`: [`f16_scale`] of the parts'
    /// largest value, for f16); `keep` as in [`GpuFactor::compute`].
    pub fn finish(mut self, mesh: &TwoMesh, storage: Storage, scale: f32, keep: bool) -> Result<GpuFactored> {
        let out = self.precomputed()?.clone();
        let gpu = self.gpu.clone();
        let k = self.system.k;
        let rows = self.rows.clone();
        let scale = if storage == Storage::F16 { scale } else { 1.0 };
        let mut rec = gpu.recorder();
        let form = match &out.y {
            Some(y) => GpuForm::Dense { y: GpuRows::record_layout(&mut rec, y, 3, storage, scale)? },
            None => {
                let w = record_w(&mut rec, &out.inverse, &self.system.inv_size, k)?;
                let f = GpuRows::record_layout(&mut rec, &out.f, 1, storage, scale)?;
                let w = GpuRows::record_layout(&mut rec, &w, 3, Storage::F32, 1.0)?;
                // The solve's last step reads the reflectances of the rows it holds.
                let rho: Vec<f32> = rows.iter().flat_map(|r| mesh.rho[r.clone()].iter().flatten()).copied().collect();
                GpuForm::Factored { f, w, rho: gpu.upload(&rho)? }
            }
        };
        self.report.merge(Report::from_timings("layout", &rec.submit()?));
        let factor = GpuFactor { n: mesh.n(), rows, k, form, patch_start: self.system.patch_start.clone() };
        Ok(GpuFactored { factor, kept: keep.then_some(out), report: self.report })
    }
}

impl GpuFactored {
    /// Reads the factorisation back (to save it): Y, or F and the inverses (then W on the
    /// host, as [`Factorization::factored`] makes it). Needs the precompute's output kept.
    pub fn download(&self, gpu: &Gpu, mesh: &TwoMesh) -> Result<Factorization> {
        Self::download_parts(&[(gpu, self)], mesh)
    }

    /// Reads a factorisation made in parts back, as [`GpuFactored::download`], each part's
    /// rows put in place.
    pub fn download_parts(parts: &[(&Gpu, &GpuFactored)], mesh: &TwoMesh) -> Result<Factorization> {
        let kept = |part: &'_ GpuFactored| -> Result<GpuPrecomputed> {
            part.kept.clone().ok_or_else(|| {
                lumbre_gpu::Error::Input("the precompute's output was not kept: compute with keep = true".into())
            })
        };
        let (&(gpu0, first), k) = (parts.first().ok_or_else(|| lumbre_gpu::Error::Input("no parts".into()))?, mesh.k());
        let dense = kept(first)?.y.is_some();
        let cols = if dense { 3 * k } else { k };
        let mut data = vec![0.0f32; mesh.n() * cols];
        for &(gpu, part) in parts {
            let out = kept(part)?;
            let rows = out.y.as_ref().unwrap_or(&out.f).download(gpu)?.data;
            let mut at = 0;
            for r in &part.factor.rows {
                data[r.start * cols..r.end * cols].copy_from_slice(&rows[at..at + r.len() * cols]);
                at += r.len() * cols;
            }
        }
        let factor = if dense {
            Factorization::new(mesh.patch_start.clone(), Matrix::new(mesh.n(), 3 * k, data)?)?
        } else {
            let f = Matrix::new(mesh.n(), k, data)?;
            let lr = LowRank { patch_start: mesh.patch_start.clone(), rho: mesh.rho.clone(), f };
            Factorization::factored(&lr, &gpu0.download(&kept(first)?.inverse)?)?
        };
        Ok(factor.with_fingerprint(mesh.fingerprint()))
    }

    /// The GPU time of the whole factorisation.
    pub fn gpu_time(&self) -> Duration {
        self.report.gpu.unwrap_or_default()
    }
}
