//! Benchmarks: the paper's Table 3 on the generated box (solves per second on the GPU and
//! the CPU, the GPU against the copy kernel over Y's bytes, precompute times), and the error
//! of the low-rank solution against the full solve (2MF and 2MCE at equal k).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use lumbre_gpu::{Agree, Compute, Error, Gpu, Progress, Result, busy_median_time, copy_time, median_time};

use crate::coherent::Coherence;
use crate::factor::Factorization;
use crate::formfactor::FormFactors;
use crate::gpu::{GpuFactor, GpuMesh};
use crate::jacobi::{FullSystem, Jacobi};
use crate::layout::Storage;
use crate::lowrank::LowRank;
use crate::matrix::Matrix;
use crate::mesh::TwoMesh;
use crate::precompute::Precompute;
use crate::solve::{Solve, solve_cpu, solve_tolerance};

/// The paper's sizes: elements per wall side s (n = 6 s^2: 3456, 13824, 55296, 221184).
pub const ELEMENT_SIDES: [u32; 4] = [24, 48, 96, 192];
/// The paper's sizes: patches per wall side t (k = 6 t^2: 216, 864, 3456).
pub const PATCH_SIDES: [u32; 3] = [6, 12, 24];

/// How many runs a measurement takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    /// Unmeasured runs first.
    pub warmup: usize,
    /// Measured runs (the median is reported).
    pub repeats: usize,
}

impl Default for Effort {
    fn default() -> Self {
        Effort { warmup: 2, repeats: 7 }
    }
}

/// Where Y comes from in [`solve_table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factors {
    /// The whole pipeline (form factors, precompute) on the GPU when there is one, else on
    /// the CPU for sizes within `cpu_pairs` element-patch pairs, else synthetic.
    Auto {
        /// Largest n k the CPU computes form factors for.
        cpu_pairs: usize,
    },
    /// A synthetic Y of the right size (timing only: solves are still checked GPU against
    /// CPU on it).
    Synthetic,
}

/// Options of [`solve_table`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableOptions {
    /// Form factor samples per pair.
    pub samples: u32,
    /// Runs per measurement.
    pub effort: Effort,
    /// Where Y comes from.
    pub factors: Factors,
    /// Time the CPU solve.
    pub cpu: bool,
    /// Also time the GPU solve with Y in f16.
    pub f16: bool,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            samples: 16,
            effort: Effort::default(),
            factors: Factors::Auto { cpu_pairs: 4_000_000 },
            cpu: true,
            f16: true,
        }
    }
}

/// Precompute stage times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrecomputeTimes {
    /// `"gpu"` or `"cpu"`.
    pub on: &'static str,
    /// Form factors with visibility (n x k).
    pub form_factors: Duration,
    /// U and `V^T U`.
    pub u: Duration,
    /// `(I - V^T U)^-1`, three channels.
    pub inverse: Duration,
    /// Y = -U (I - V^T U)^-1.
    pub y: Duration,
}

/// One row of the solve table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveRow {
    /// Elements.
    pub n: usize,
    /// Patches.
    pub k: usize,
    /// Bytes of Y as the GPU stores it in f32 (rows padded to a multiple of 8).
    pub y_bytes: u64,
    /// Precompute times; `None` for a synthetic Y.
    pub precompute: Option<PrecomputeTimes>,
    /// One RGB solve on the CPU (median wall time).
    pub cpu: Option<Duration>,
    /// One RGB solve on the GPU, Y in f32 (median GPU time).
    pub gpu: Option<Duration>,
    /// One RGB solve on the GPU, Y in f16.
    pub gpu_f16: Option<Duration>,
    /// The copy kernel moving Y's bytes (reading half, writing half): the roofline of a
    /// kernel that reads Y once.
    pub copy: Option<Duration>,
    /// Largest |B(f16) - B(f32)| over the largest |B|.
    pub f16_error: Option<f64>,
}

impl SolveRow {
    /// The GPU solve's bandwidth as a fraction of the copy kernel's, over Y's bytes.
    pub fn copy_fraction(&self) -> Option<f64> {
        Some(self.copy?.as_secs_f64() / self.gpu?.as_secs_f64())
    }
}

fn per_second(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.0}", 1.0 / d.as_secs_f64().max(1e-12)))
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// The solve table as Markdown.
pub fn solve_markdown(rows: &[SolveRow]) -> String {
    let mut s = String::from(
        "| n x k | Y MB (f32) | CPU solves/s | GPU solves/s | GPU f16 solves/s | GPU / copy | f16 error | precompute (form factors, U, inverse, Y) ms |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let pre = r.precompute.as_ref().map_or("synthetic Y".into(), |p| {
            format!("{}: {}, {}, {}, {}", p.on, ms(p.form_factors), ms(p.u), ms(p.inverse), ms(p.y))
        });
        let _ = writeln!(
            s,
            "| {} x {} | {:.0} | {} | {} | {} | {} | {} | {} |",
            r.n,
            r.k,
            r.y_bytes as f64 / 1e6,
            per_second(r.cpu),
            per_second(r.gpu),
            per_second(r.gpu_f16),
            r.copy_fraction().map_or("-".into(), |f| format!("{:.0}%", 100.0 * f)),
            r.f16_error.map_or("-".into(), |e| format!("{e:.1e}")),
            pre
        );
    }
    s
}

/// A synthetic factorisation of the box's sizes: Y's values follow a smooth pattern of the
/// size of real ones (timing only).
pub fn synthetic_factor(mesh: &TwoMesh) -> Factorization {
    let (n, k) = (mesh.n(), mesh.k());
    let mut data = vec![0.0f32; n * 3 * k];
    use rayon::prelude::*;
    data.par_chunks_mut(3 * k).enumerate().for_each(|(e, row)| {
        for (i, v) in row.iter_mut().enumerate() {
            *v = -1e-3 * (1.0 + ((e * 31 + i * 17) % 97) as f32 / 97.0) / k as f32;
        }
    });
    Factorization {
        n,
        k,
        patch_start: mesh.patch_start.clone(),
        y: Matrix { rows: n, cols: 3 * k, data },
        fingerprint: 0,
    }
}

/// The whole pipeline on the GPU: form factors, U, `V^T U`, the inverses and Y, with stage
/// times; Y is downloaded.
pub fn gpu_factor(gpu: &Gpu, mesh: &TwoMesh, samples: u32) -> Result<(Factorization, PrecomputeTimes)> {
    let pc = Precompute::default();
    let rows = pc.block_rows(gpu, mesh.k())?;
    let ff = FormFactors { samples, block_rows: Some(rows), ..FormFactors::default() };
    let on_gpu = GpuMesh::upload(gpu, mesh, false)?;
    let mut rec = gpu.recorder();
    let f = ff.record(&mut rec, &on_gpu)?;
    let ff_time = rec.submit()?.gpu();
    let system = crate::gpu::GpuLowRank {
        f,
        rho: gpu.upload(&mesh.rho.iter().flatten().copied().collect::<Vec<f32>>())?,
        inv_size: gpu.upload(&mesh.patch_sizes().iter().map(|&c| 1.0 / c as f32).collect::<Vec<f32>>())?,
        patch_start: gpu.upload(&mesh.patch_start)?,
        k: mesh.k(),
    };
    let mut rec = gpu.recorder();
    let out = pc.record_all(&mut rec, &system, &mesh.patch_start)?;
    let t = rec.submit()?;
    Precompute::check_pivots(gpu, &out)?;
    let stage = |label: &str| t.by_label().iter().filter(|(l, _)| l == label).map(|(_, d)| *d).sum::<Duration>();
    let times = PrecomputeTimes {
        on: "gpu",
        form_factors: ff_time,
        u: stage("U") + stage("V^T U"),
        inverse: stage("invert"),
        y: stage("Y"),
    };
    let y = out.y.download(gpu)?;
    Ok((Factorization::new(mesh.patch_start.clone(), y)?.with_fingerprint(mesh.fingerprint()), times))
}

/// The whole pipeline on the CPU, with stage times.
pub fn cpu_factor(mesh: &TwoMesh, samples: u32, progress: &dyn Progress) -> Result<(Factorization, PrecomputeTimes)> {
    let t = Instant::now();
    let f = FormFactors { samples, ..FormFactors::default() }.cpu_reported(mesh, progress)?.0;
    let ff_time = t.elapsed();
    let (p, report) = Precompute::default().run_cpu(&LowRank::of_mesh(mesh, f)?, progress)?;
    let stage = |s: &str| report.stage(s).unwrap_or_default();
    let times = PrecomputeTimes {
        on: "cpu",
        form_factors: ff_time,
        u: stage("U") + stage("V^T U"),
        inverse: stage("inverse"),
        y: stage("Y"),
    };
    Ok((p.factor.with_fingerprint(mesh.fingerprint()), times))
}

/// Times one solve on the GPU (median GPU time of the solve's passes, on a GPU kept busy),
/// after checking its result against the CPU's.
fn time_gpu_solve(
    gpu: &Gpu,
    y: &GpuFactor,
    factor: &Factorization,
    light: &[[f32; 3]],
    effort: Effort,
) -> Result<(Duration, crate::Radiosity)> {
    let solve = Solve::new(vec![light.to_vec()]);
    let mut rec = gpu.recorder();
    let out = solve.record(&mut rec, y)?;
    rec.submit()?;
    let b = solve.download(gpu, &out)?;
    let reference = match y.storage {
        Storage::F32 => solve_cpu(factor, &solve.lights)?,
        Storage::F16 => solve_cpu(&factor.rounded_to_f16(), &solve.lights)?,
    };
    if let Some(d) = reference.disagreement(&b, solve_tolerance(factor, &solve.lights)) {
        return Err(Error::Input(format!("GPU solve ({:?}) disagrees with the CPU: {d}", y.storage)));
    }
    let t = busy_median_time(gpu, effort.warmup, effort.repeats, || {
        let mut rec = gpu.recorder();
        solve.record(&mut rec, y)?;
        Ok(rec.submit()?.gpu())
    })?;
    Ok((t, b))
}

/// The paper's Table 3 on the generated box for `sizes` (elements and patches per wall
/// side): solves per second on the GPU (f32 and f16 Y) and the CPU, the GPU against the copy
/// kernel, and the precompute's stage times. Every GPU solve is checked against the CPU's.
pub fn solve_table(
    gpu: Option<&Gpu>,
    sizes: &[(u32, u32)],
    opts: &TableOptions,
    progress: &dyn Progress,
) -> Result<Vec<SolveRow>> {
    let mut rows = Vec::new();
    for (i, &(s, t)) in sizes.iter().enumerate() {
        progress.update("radiosity table", i as u64, sizes.len() as u64);
        let mesh = TwoMesh::closed_box(s, t)?;
        let (n, k) = (mesh.n(), mesh.k());
        let (factor, precompute) = match (opts.factors, gpu) {
            (Factors::Synthetic, _) => (synthetic_factor(&mesh), None),
            (Factors::Auto { .. }, Some(gpu)) => {
                let (f, t) = gpu_factor(gpu, &mesh, opts.samples)?;
                (f, Some(t))
            }
            (Factors::Auto { cpu_pairs }, None) if n * k <= cpu_pairs => {
                let (f, t) = cpu_factor(&mesh, opts.samples, progress)?;
                (f, Some(t))
            }
            (Factors::Auto { .. }, None) => (synthetic_factor(&mesh), None),
        };
        let light = mesh.emission.clone();
        let mut row = SolveRow {
            n,
            k,
            precompute,
            y_bytes: (n * 3 * crate::layout::padded_k(k) * 4) as u64,
            ..SolveRow::default()
        };
        if opts.cpu {
            let lights = vec![light.clone()];
            row.cpu = Some(median_time(1, opts.effort.repeats, || {
                let t = Instant::now();
                solve_cpu(&factor, &lights)?;
                Ok(t.elapsed())
            })?);
        }
        if let Some(gpu) = gpu {
            let y = GpuFactor::upload(gpu, &factor, Storage::F32, None)?;
            row.y_bytes = y.bytes();
            let (t32, b32) = time_gpu_solve(gpu, &y, &factor, &light, opts.effort)?;
            row.gpu = Some(t32);
            drop(y);
            row.copy = Some(copy_time(gpu, row.y_bytes / 2, opts.effort.warmup, opts.effort.repeats)?);
            if opts.f16 {
                let y16 = GpuFactor::upload(gpu, &factor, Storage::F16, None)?;
                let (t16, b16) = time_gpu_solve(gpu, &y16, &factor, &light, opts.effort)?;
                row.gpu_f16 = Some(t16);
                let bmax = b32[0].iter().flatten().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
                let err = b32[0]
                    .iter()
                    .flatten()
                    .zip(b16[0].iter().flatten())
                    .fold(0.0f64, |m, (a, b)| m.max((a - b).abs() as f64));
                row.f16_error = Some(err / bmax.max(1e-30));
            }
        }
        rows.push(row);
    }
    progress.update("radiosity table", sizes.len() as u64, sizes.len() as u64);
    Ok(rows)
}

/// One row of the error table.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorRow {
    /// `"2MF"` or `"2MCE"`.
    pub method: &'static str,
    /// Patches.
    pub k: usize,
    /// Mean over elements of `|B - B_ref|_1 / |B_ref|_1` (RGB), with the method's own form
    /// factors (their Monte Carlo noise included).
    pub mean_relative: f64,
    /// The largest such per-element error.
    pub max_relative: f64,
    /// The mean error with F to patches summed from the reference's F to elements: the
    /// low-rank approximation's own error, without a second Monte Carlo estimate.
    pub mean_relative_aggregated: f64,
}

/// The error table as Markdown.
pub fn error_markdown(n: usize, rows: &[ErrorRow]) -> String {
    let mut s = format!(
        "| method | n x k | mean relative error | max relative error | mean relative error (F summed from the reference) |\n|---|---|---|---|---|\n"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {n} x {} | {:.2}% | {:.1}% | {:.2}% |",
            r.method,
            r.k,
            100.0 * r.mean_relative,
            100.0 * r.max_relative,
            100.0 * r.mean_relative_aggregated
        );
    }
    s
}

/// Per-element relative errors (RGB L1) of `b` (in `mesh`'s order) against `reference`
/// (in `reference_mesh`'s order): (mean, max).
fn errors(mesh: &TwoMesh, b: &[[f32; 3]], reference_mesh: &TwoMesh, reference: &[[f32; 3]]) -> (f64, f64) {
    let (mut sum, mut max) = (0.0f64, 0.0f64);
    for (e, v) in b.iter().enumerate() {
        let r = reference[to_reference(mesh, reference_mesh, e)];
        let d: f64 = (0..3).map(|c| (v[c] - r[c]).abs() as f64).sum();
        let m: f64 = (0..3).map(|c| r[c].abs() as f64).sum();
        let rel = d / m.max(1e-30);
        sum += rel;
        max = max.max(rel);
    }
    (sum / b.len() as f64, max)
}

/// The index in `reference` of element `e` of `mesh` (same faces and fine subdivision).
fn to_reference(mesh: &TwoMesh, reference: &TwoMesh, e: usize) -> usize {
    let f = mesh.element_face[e] as usize;
    reference.element_of_cell[(reference.face_first[f] + mesh.element_cell[e]) as usize] as usize
}

/// F to `mesh`'s patches summed from the reference's element-to-element F.
fn aggregated(mesh: &TwoMesh, reference: &TwoMesh, full: &Matrix) -> Matrix {
    let (n, k) = (mesh.n(), mesh.k());
    let map: Vec<usize> = (0..n).map(|e| to_reference(mesh, reference, e)).collect();
    let mut out = Matrix::zeros(n, k);
    use rayon::prelude::*;
    out.data.par_chunks_mut(k).enumerate().for_each(|(e, row)| {
        let src = full.row(map[e]);
        for (p, w) in mesh.patch_start.windows(2).enumerate() {
            row[p] = (w[0]..w[1]).map(|j| src[map[j as usize]]).sum();
        }
    });
    out
}

/// The low-rank error on the box with `s x s` elements per wall against the full solve
/// (element-to-element form factors, Jacobi to 1e-6), for 2MF with `t x t` patches per wall
/// for each t of `patch_sides` that divides s, and 2MCE (from 3 x 3 patches per wall) at the nearest k.
/// On the GPU when there is one. Returns n and the rows.
pub fn error_table(
    gpu: Option<&Gpu>,
    s: u32,
    patch_sides: &[u32],
    samples: u32,
    progress: &dyn Progress,
) -> Result<(usize, Vec<ErrorRow>)> {
    let reference_mesh = TwoMesh::closed_box(s, s)?;
    let full_ff = FormFactors { samples, full: true, ..FormFactors::default() };
    let full = match gpu {
        Some(gpu) => full_ff.gpu(gpu, &reference_mesh)?,
        None => full_ff.cpu_reported(&reference_mesh, progress)?.0,
    };
    let system = FullSystem { f: full, rho: reference_mesh.rho.clone(), emission: reference_mesh.emission.clone() };
    let reference = match gpu {
        Some(gpu) => Jacobi::default().gpu(gpu, &system)?,
        None => Jacobi::default().cpu_reported(&system, progress)?.0,
    };
    let mut rows = Vec::new();
    let mut meshes: Vec<(&'static str, TwoMesh)> = Vec::new();
    for &t in patch_sides.iter().filter(|&&t| t > 0 && s.is_multiple_of(t)) {
        let fixed = TwoMesh::closed_box(s, t)?;
        let target = fixed.k();
        meshes.push(("2MF", fixed));
        if t < s && s % 3 == 0 && (s / 3).is_power_of_two() {
            let opts = Coherence { target: Some(target), ..Coherence::default() };
            meshes.push(("2MCE", TwoMesh::coherent_box(s, 3, &opts, progress)?.0));
        }
    }
    for (method, mesh) in &meshes {
        let solve_with = |f: Matrix| -> Result<Vec<[f32; 3]>> {
            let lr = LowRank::of_mesh(mesh, f)?;
            let factor = match gpu {
                Some(gpu) => Precompute::default().gpu(gpu, &lr)?.factor,
                None => Precompute::default().run_cpu(&lr, progress)?.0.factor,
            };
            Ok(solve_cpu(&factor, std::slice::from_ref(&mesh.emission))?.0.remove(0))
        };
        let ff = FormFactors { samples, ..FormFactors::default() };
        let own = match gpu {
            Some(gpu) => ff.gpu(gpu, mesh)?,
            None => ff.cpu_reported(mesh, progress)?.0,
        };
        let (mean, max) = errors(mesh, &solve_with(own)?, &reference_mesh, &reference);
        let agg = solve_with(aggregated(mesh, &reference_mesh, &system.f))?;
        let (mean_agg, _) = errors(mesh, &agg, &reference_mesh, &reference);
        rows.push(ErrorRow {
            method,
            k: mesh.k(),
            mean_relative: mean,
            max_relative: max,
            mean_relative_aggregated: mean_agg,
        });
    }
    Ok((reference_mesh.n(), rows))
}
