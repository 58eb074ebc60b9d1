//! The tables of `lumbre bench radiosity`: the paper's Table 3 on the generated box (solves
//! per second on the GPU and the CPU, the GPU against the copy kernel over Y's bytes,
//! precompute times), and the error of the low-rank solution against the full solve (2MF and
//! 2MCE at equal k).

use std::time::{Duration, Instant};

use lumbre_gpu::{Agree, Backend, Compute, Error, Gpu, Progress, Result, busy_median_time, copy_time, median_time};

use lumbre_radiosity::{
    Coherence, Factorization, Form, FormFactors, FullSystem, GpuLowRank, GpuMesh, Jacobi, LowRank, Matrix, Precompute,
    Radiosity, Solve, Storage, TwoMesh, solve_cpu, solve_tolerance, twin::padded_k,
};

use super::Effort;

/// The paper's sizes: elements per wall side s (n = 6 s^2: 3456, 13824, 55296, 221184).
pub const ELEMENT_SIDES: [u32; 4] = [24, 48, 96, 192];
/// The paper's sizes: patches per wall side t (k = 6 t^2: 216, 864, 3456).
pub const PATCH_SIDES: [u32; 3] = [6, 12, 24];

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
            effort: Effort { warmup: 2, repeats: 7 },
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
    /// Y = -U (I - V^T U)^-1 (the dense form only; the factored form needs no product).
    pub y: Duration,
}

/// The solve's figures for one storage form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FormTimes {
    /// Bytes a solve reads from the factorisation in f32 (Y, or F and W; rows padded to a
    /// multiple of 8).
    pub bytes: u64,
    /// One RGB solve on the CPU (median wall time).
    pub cpu: Option<Duration>,
    /// One RGB solve on the GPU in f32 (median GPU time).
    pub gpu: Option<Duration>,
    /// One RGB solve on the GPU with Y (or F) in f16.
    pub gpu_f16: Option<Duration>,
    /// The copy kernel moving `bytes` (reading half, writing half): the roofline of a
    /// kernel that reads them once.
    pub copy: Option<Duration>,
    /// Largest |B(f16) - B(f32)| over the largest |B|.
    pub f16_error: Option<f64>,
}

impl FormTimes {
    /// The GPU solve's bandwidth over the factorisation's bytes, as a fraction of the copy
    /// kernel's.
    pub fn copy_fraction(&self) -> Option<f64> {
        Some(self.copy?.as_secs_f64() / self.gpu?.as_secs_f64())
    }
}

/// One row of the solve table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveRow {
    /// Elements.
    pub n: usize,
    /// Patches.
    pub k: usize,
    /// Precompute times; `None` for a synthetic factorisation.
    pub precompute: Option<PrecomputeTimes>,
    /// The paper's form: Y (n x 3k).
    pub dense: FormTimes,
    /// The factored form: F (n x k) and W (3 x k x k).
    pub factored: FormTimes,
}

/// Synthetic factorisations of the box's sizes, dense and factored, with values of the size
/// of real ones (timing only).
pub fn synthetic_factors(mesh: &TwoMesh) -> (Factorization, Factorization) {
    use rayon::prelude::*;
    let (n, k) = (mesh.n(), mesh.k());
    let pattern = |len: usize, width: usize, scale: f32| {
        let mut data = vec![0.0f32; len];
        data.par_chunks_mut(width.max(1)).enumerate().for_each(|(e, row)| {
            for (i, v) in row.iter_mut().enumerate() {
                *v = scale * (1.0 + ((e * 31 + i * 17) % 97) as f32 / 97.0) / k as f32;
            }
        });
        data
    };
    let dense = Factorization {
        n,
        k,
        patch_start: mesh.patch_start.clone(),
        form: Form::Dense { y: Matrix { rows: n, cols: 3 * k, data: pattern(n * 3 * k, 3 * k, -1e-3) } },
        fingerprint: 0,
    };
    let factored = Factorization {
        n,
        k,
        patch_start: mesh.patch_start.clone(),
        form: Form::Factored {
            f: Matrix { rows: n, cols: k, data: pattern(n * k, k, 0.5) },
            w: pattern(3 * k * k, k, 1e-2),
            rho: mesh.rho.clone(),
        },
        fingerprint: 0,
    };
    (dense, factored)
}

/// The whole pipeline on the GPU: form factors, U, `V^T U`, the inverses and Y, with stage
/// times; both forms are downloaded (the factored one from F and the inverses).
pub fn gpu_factors(
    gpu: &Gpu,
    mesh: &TwoMesh,
    samples: u32,
    progress: &dyn Progress,
) -> Result<(Factorization, Factorization, PrecomputeTimes)> {
    let stage = |what: &str| progress.update(&format!("{} x {}: {what}", mesh.n(), mesh.k()), 0, 0);
    stage("form factors");
    let pc = Precompute::default();
    let rows = pc.block_rows(gpu, mesh.k())?;
    let ff = FormFactors { samples, block_rows: Some(rows), ..FormFactors::default() };
    let on_gpu = GpuMesh::upload(gpu, mesh, false)?;
    let mut rec = gpu.recorder();
    let f = ff.record(&mut rec, &on_gpu)?;
    let ff_time = rec.submit()?.gpu();
    let system = GpuLowRank {
        f,
        rho: gpu.upload(&mesh.rho.iter().flatten().copied().collect::<Vec<f32>>())?,
        inv_size: gpu.upload(&mesh.patch_sizes().iter().map(|&c| 1.0 / c as f32).collect::<Vec<f32>>())?,
        patch_start: gpu.upload(&mesh.patch_start)?,
        k: mesh.k(),
    };
    stage("U, V^T U, inverse, Y");
    let mut rec = gpu.recorder();
    let out = pc.record_all(&mut rec, &system, &mesh.patch_start)?;
    let t = rec.submit()?;
    Precompute::check_pivots(gpu, &out)?;
    let gpu_time = |label: &str| t.by_label().iter().filter(|(l, _)| l == label).map(|(_, d)| *d).sum::<Duration>();
    let times = PrecomputeTimes {
        on: "gpu",
        form_factors: ff_time,
        u: gpu_time("U") + gpu_time("V^T U"),
        inverse: gpu_time("invert"),
        y: gpu_time("Y"),
    };
    stage("download of Y, F and the inverse");
    let y = out.y.as_ref().ok_or_else(|| Error::Input("the precompute made no Y".into()))?.download(gpu)?;
    let dense = Factorization::new(mesh.patch_start.clone(), y)?.with_fingerprint(mesh.fingerprint());
    let lr = LowRank { patch_start: mesh.patch_start.clone(), rho: mesh.rho.clone(), f: out.f.download(gpu)? };
    let factored = Factorization::factored(&lr, &gpu.download(&out.inverse)?)?.with_fingerprint(mesh.fingerprint());
    Ok((dense, factored, times))
}

/// The whole pipeline on the CPU, with stage times: both forms.
pub fn cpu_factors(
    mesh: &TwoMesh,
    samples: u32,
    progress: &dyn Progress,
) -> Result<(Factorization, Factorization, PrecomputeTimes)> {
    let t = Instant::now();
    let f = FormFactors { samples, ..FormFactors::default() }.cpu_reported(mesh, progress)?.0;
    let ff_time = t.elapsed();
    let lr = LowRank::of_mesh(mesh, f)?;
    let (p, report) = Precompute::default().run_cpu(&lr, progress)?;
    let stage = |s: &str| report.stage(s).unwrap_or_default();
    let times = PrecomputeTimes {
        on: "cpu",
        form_factors: ff_time,
        u: stage("U") + stage("V^T U"),
        inverse: stage("inverse"),
        y: stage("Y"),
    };
    let factored = Factorization::factored(&lr, &p.inverse)?.with_fingerprint(mesh.fingerprint());
    Ok((p.factor.with_fingerprint(mesh.fingerprint()), factored, times))
}

/// Times one solve on the GPU (median GPU time of the solve's passes, on a GPU kept busy),
/// after checking its result against the CPU's.
fn time_gpu_solve(
    gpu: &Gpu,
    factor: &Factorization,
    storage: Storage,
    light: &[[f32; 3]],
    effort: Effort,
    progress: &dyn Progress,
) -> Result<(Duration, Radiosity, u64)> {
    let stage = |what: &str| {
        let form = if matches!(factor.form, Form::Dense { .. }) { "Y" } else { "F, W" };
        progress.update(&format!("{} x {}: {form} {storage:?}: {what}", factor.n, factor.k), 0, 0)
    };
    stage("upload");
    let solve = Solve { lights: vec![light.to_vec()], storage, block_rows: None };
    let y = solve.upload(gpu, factor)?;
    stage("check against the CPU");
    let mut rec = gpu.recorder();
    let out = solve.record(&mut rec, &y)?;
    rec.submit()?;
    let b = solve.download(gpu, &out)?;
    let reference = solve.cpu(factor)?;
    if let Some(d) = reference.disagreement(&b, solve_tolerance(factor, &solve.lights)) {
        return Err(Error::Input(format!("GPU solve ({storage:?}) disagrees with the CPU: {d}")));
    }
    stage("timing");
    let t = busy_median_time(gpu, effort.warmup, effort.repeats, || {
        let mut rec = gpu.recorder();
        solve.record(&mut rec, &y)?;
        Ok(rec.submit()?.gpu())
    })?;
    Ok((t, b, y.bytes()))
}

/// The copy kernel's time for moving `bytes` (reading half, writing half). Above what two
/// buffers can hold, the copy of the largest size that fits, scaled linearly (a copy that
/// large runs at the bandwidth of any larger one).
fn roofline(gpu: &Gpu, bytes: u64, effort: Effort) -> Result<Duration> {
    let half = bytes / 2;
    let cap = (gpu.limits().max_buffer_size / 2).clamp(16, 1 << 31);
    if half <= cap {
        return copy_time(gpu, half, effort.warmup, effort.repeats);
    }
    let t = copy_time(gpu, cap, effort.warmup, effort.repeats)?;
    Ok(t.mul_f64(half as f64 / cap as f64))
}

/// The solve figures of one form.
fn form_times(
    backend: &Backend,
    factor: &Factorization,
    light: &[[f32; 3]],
    opts: &TableOptions,
    progress: &dyn Progress,
) -> Result<FormTimes> {
    let pk = padded_k(factor.k) as u64;
    let mut t = FormTimes {
        bytes: 4 * match &factor.form {
            Form::Dense { .. } => 3 * factor.n as u64 * pk,
            Form::Factored { .. } => factor.n as u64 * pk + 3 * factor.k as u64 * pk,
        },
        ..FormTimes::default()
    };
    if opts.cpu {
        let lights = vec![light.to_vec()];
        t.cpu = Some(median_time(1, opts.effort.repeats, || {
            let start = Instant::now();
            solve_cpu(factor, &lights)?;
            Ok(start.elapsed())
        })?);
    }
    if let Some(gpu) = backend.gpu() {
        let (t32, b32, bytes) = time_gpu_solve(gpu, factor, Storage::F32, light, opts.effort, progress)?;
        t.gpu = Some(t32);
        t.bytes = bytes;
        t.copy = Some(roofline(gpu, bytes, opts.effort)?);
        if opts.f16 {
            let (t16, b16, _) = time_gpu_solve(gpu, factor, Storage::F16, light, opts.effort, progress)?;
            t.gpu_f16 = Some(t16);
            let bmax = max_abs(b32[0].as_flattened()) as f64;
            let err = b32[0]
                .iter()
                .flatten()
                .zip(b16[0].iter().flatten())
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs() as f64));
            t.f16_error = Some(err / bmax.max(1e-30));
        }
    }
    Ok(t)
}

/// The paper's Table 3 on the generated box for `sizes` (elements and patches per wall
/// side): solves per second on the GPU (f32 and f16) and the CPU for both storage forms, the
/// GPU against the copy kernel, and the precompute's stage times. Every GPU solve is checked
/// against the CPU's.
pub fn solve_table(
    backend: &Backend,
    sizes: &[(u32, u32)],
    opts: &TableOptions,
    progress: &dyn Progress,
    on_row: &mut dyn FnMut(&SolveRow),
) -> Result<Vec<SolveRow>> {
    let mut rows = Vec::new();
    for (i, &(s, t)) in sizes.iter().enumerate() {
        progress.update("radiosity table", i as u64, sizes.len() as u64);
        let mesh = TwoMesh::closed_box(s, t)?;
        let (n, k) = (mesh.n(), mesh.k());
        let (dense, factored, precompute) = match (opts.factors, backend.gpu()) {
            (Factors::Synthetic, _) => {
                let (d, f) = synthetic_factors(&mesh);
                (d, f, None)
            }
            (Factors::Auto { .. }, Some(gpu)) => {
                let (d, f, t) = gpu_factors(gpu, &mesh, opts.samples, progress)?;
                (d, f, Some(t))
            }
            (Factors::Auto { cpu_pairs }, None) if n * k <= cpu_pairs => {
                let (d, f, t) = cpu_factors(&mesh, opts.samples, progress)?;
                (d, f, Some(t))
            }
            (Factors::Auto { .. }, None) => {
                let (d, f) = synthetic_factors(&mesh);
                (d, f, None)
            }
        };
        let light = mesh.emission.clone();
        let dense_times = form_times(backend, &dense, &light, opts, progress)?;
        drop(dense);
        let factored_times = form_times(backend, &factored, &light, opts, progress)?;
        rows.push(SolveRow { n, k, precompute, dense: dense_times, factored: factored_times });
        on_row(&rows[rows.len() - 1]);
    }
    progress.update("radiosity table", sizes.len() as u64, sizes.len() as u64);
    Ok(rows)
}

/// One row of the error table.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorRow {
    /// `"2MF"`, `"2MCE"` or `"2MCE (views only)"` (the dispersion not weighed by size).
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

/// The index in `reference` of element `e` of `mesh` (same faces and cells, one cell per
/// element).
fn to_reference(mesh: &TwoMesh, reference: &TwoMesh, e: usize) -> usize {
    let cell = mesh.piece_cell[mesh.piece_start[e] as usize];
    reference.element_of_piece[reference.piece_of_cell[cell as usize] as usize] as usize
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
/// for each t of `patch_sides` that divides s, and 2MCE (from 3 x 3 patches per wall, with
/// and without the size weight) at the nearest k.
/// On the GPU when there is one. Returns n and the rows.
pub fn error_table(
    backend: &Backend,
    s: u32,
    patch_sides: &[u32],
    samples: u32,
    progress: &dyn Progress,
) -> Result<(usize, Vec<ErrorRow>)> {
    let gpu = backend.gpu();
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
        if t < s && s.is_multiple_of(3) && (s / 3).is_power_of_two() {
            let opts = Coherence { target: Some(target), ..Coherence::default() };
            meshes.push(("2MCE", TwoMesh::coherent_box(s, 3, &opts, progress)?.0));
            let opts = Coherence { size_weighted: false, ..opts };
            meshes.push(("2MCE (views only)", TwoMesh::coherent_box(s, 3, &opts, progress)?.0));
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

/// The largest |v| in `data`.
fn max_abs(data: &[f32]) -> f32 {
    data.iter().fold(0.0f32, |m, v| m.max(v.abs()))
}
