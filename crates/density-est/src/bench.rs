//! The paper's Table 1 workloads, generated deterministically, and a benchmark that times
//! every method on the CPU and the GPU (each GPU result checked against the CPU's first).

use std::fmt;
use std::time::{Duration, Instant};

use glam::Vec3;
use lumbre_gpu::{Agree, BUSY_SPAN, Compute, Error, Gpu, KeepBusy, Progress, Report, Result, Tolerance};
use lumbre_raytrace::{hash_f32, hash_u32};

use crate::density::{Density, Method};
use crate::estimate::Estimate;
use crate::problem::{Disk, Problem, Segment};

/// One workload: `disks` disks and `segments` segments.
///
/// ```
/// assert_eq!(lumbre_density::TABLE1[3].segments, 1_000_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Number of disks.
    pub disks: usize,
    /// Number of segments.
    pub segments: usize,
}

/// The paper's Table 1 (disks x segments), then 1e6 x 1e7.
///
/// ```
/// assert_eq!(lumbre_density::TABLE1.len(), 5);
/// ```
pub const TABLE1: [Workload; 5] = [
    Workload { disks: 10_000, segments: 10_000 },
    Workload { disks: 100_000, segments: 100_000 },
    Workload { disks: 100_000, segments: 500_000 },
    Workload { disks: 100_000, segments: 1_000_000 },
    Workload { disks: 1_000_000, segments: 10_000_000 },
];

/// The disks' radius in Table 1.
///
/// ```
/// assert_eq!(lumbre_density::TABLE1_RADIUS, 0.01);
/// ```
pub const TABLE1_RADIUS: f32 = 0.01;

/// Number `k` of the stream of uniform numbers of `item` (of `stream`, under `seed`).
fn uniform(seed: u32, stream: u32, item: usize, k: u32) -> f32 {
    hash_f32(hash_u32(seed ^ hash_u32(stream)).wrapping_add((item as u32).wrapping_mul(8).wrapping_add(k)))
}

/// A Table 1 workload: segments with both ends uniform in the unit cube (independently),
/// power 1 in every channel, bounce 0; disks with centres uniform in the unit cube, normals
/// uniform on the sphere (`z = 2u - 1`, azimuth `2 pi v`) and radius `radius`. Numbers
/// come from the integer hash ([`hash_u32`]): segment `i` draws `hash_f32(hash_u32(seed ^
/// hash_u32(0)) + 8i + k)` for its coordinates `k = 0..6` (start xyz, end xyz), disk `j`
/// the same with stream 1 and `k = 0..5` (centre xyz, u, v).
///
/// ```
/// let p = lumbre_density::uniform_workload(lumbre_density::Workload { disks: 3, segments: 5 }, 0.01, 7);
/// assert_eq!((p.disks.len(), p.segments.len()), (3, 5));
/// assert_eq!(p, lumbre_density::uniform_workload(lumbre_density::Workload { disks: 3, segments: 5 }, 0.01, 7));
/// ```
pub fn uniform_workload(w: Workload, radius: f32, seed: u32) -> Problem {
    use rayon::prelude::*;
    let segments = (0..w.segments)
        .into_par_iter()
        .map(|i| {
            let u = |k| uniform(seed, 0, i, k);
            Segment { start: Vec3::new(u(0), u(1), u(2)), end: Vec3::new(u(3), u(4), u(5)), power: [1.0; 3], bounce: 0 }
        })
        .collect();
    let disks = (0..w.disks)
        .into_par_iter()
        .map(|j| {
            let u = |k| uniform(seed, 1, j, k);
            let z = 2.0 * u(3) - 1.0;
            let phi = std::f32::consts::TAU * u(4);
            let s = (1.0 - z * z).max(0.0).sqrt();
            Disk { centre: Vec3::new(u(0), u(1), u(2)), normal: Vec3::new(s * phi.cos(), s * phi.sin(), z), radius }
        })
        .collect();
    Problem { segments, disks }
}

/// One measured row: a workload, a method on a backend (printed by its `Display`, see
/// [`table1`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The workload.
    pub workload: Workload,
    /// The method, with its options.
    pub density: Density,
    /// `"cpu"` or `"gpu"`.
    pub backend: &'static str,
    /// Crossings found.
    pub pairs: u64,
    /// Crossings decided differently from the CPU's (see [`Estimate::flips`]; 0 on the CPU).
    pub flips: u64,
    /// Segment-disk tests made.
    pub tested: f64,
    /// Index build (CPU: with the preparation of the input).
    pub build: Duration,
    /// Gather (leaves, traversal, or brute force).
    pub gather: Duration,
    /// Build and gather (GPU: their passes, by timestamps where the adapter has them; CPU:
    /// the wall clock of the whole run).
    pub total: Duration,
}

/// What [`table1`] runs.
///
/// ```
/// let o = lumbre_density::BenchOptions::default();
/// assert!(o.cpu && o.gpu.is_none() && o.methods.len() == 3);
/// ```
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The methods (with their options) to time.
    pub methods: Vec<Density>,
    /// Whether to time the CPU path.
    pub cpu: bool,
    /// The GPU to time, if any.
    pub gpu: Option<Gpu>,
    /// Unmeasured runs before the GPU's measured ones.
    pub warmup: usize,
    /// Measured GPU runs (the median is reported).
    pub repeats: usize,
    /// Methods whose tests (segments x disks, brute force) exceed this are skipped on the
    /// CPU (the check of the GPU then uses the fastest CPU method).
    pub max_cpu_brute_pairs: f64,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            methods: Density::METHODS.iter().map(|&method| Density { method, ..Default::default() }).collect(),
            cpu: true,
            gpu: None,
            warmup: 1,
            repeats: 5,
            max_cpu_brute_pairs: 2e10,
        }
    }
}

/// Stages that are the gather; every other stage (but the download) is the index build.
fn is_gather(stage: &str) -> bool {
    matches!(stage, "brute force" | "octree leaves" | "bvh traverse")
}

fn split(report: &Report) -> (Duration, Duration) {
    let mut build = Duration::ZERO;
    let mut gather = Duration::ZERO;
    for (s, d) in &report.stages {
        if is_gather(s) {
            gather += *d;
        } else if s != "download" && s != "upload" {
            build += *d;
        }
    }
    (build, gather)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Times every method of `opts` on every workload: rows for the CPU path and the GPU path.
/// Each GPU result must equal the CPU's (counts and power, bit for bit), up to
/// [`MAX_FLIP_RATE`] of the crossings decided differently, before its row is reported; a
/// mismatch is an error.
///
/// ```no_run
/// use lumbre_density::{BenchOptions, TABLE1, table1};
/// let opts = BenchOptions { gpu: Some(lumbre_gpu::Gpu::new()?), ..Default::default() };
/// for row in table1(&TABLE1[..2], &opts, &())? {
///     println!("{row}");
/// }
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn table1(workloads: &[Workload], opts: &BenchOptions, progress: &dyn Progress) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let busy = match &opts.gpu {
        Some(gpu) => Some(KeepBusy::new(gpu)?),
        None => None,
    };
    for (wi, &w) in workloads.iter().enumerate() {
        progress.update("table 1", wi as u64, workloads.len() as u64);
        let problem = uniform_workload(w, TABLE1_RADIUS, 1);
        let brute_pairs = w.disks as f64 * w.segments as f64;
        let mut reference: Option<Estimate> = None;
        for alg in &opts.methods {
            if !opts.cpu || (alg.method == Method::BruteForce && brute_pairs > opts.max_cpu_brute_pairs) {
                continue;
            }
            let start = Instant::now();
            let (est, report) = alg.cpu_reported(&problem, progress)?;
            let total = start.elapsed();
            let (build, gather) = split(&report);
            rows.push(Row {
                workload: w,
                density: *alg,
                backend: "cpu",
                pairs: est.pairs(),
                flips: 0,
                tested: report.get("pairs tested").unwrap_or(0.0),
                build,
                gather,
                total,
            });
            check(&mut reference, est, "cpu", alg.method)?;
        }
        let (Some(gpu), Some(busy)) = (&opts.gpu, &busy) else { continue };
        if reference.is_none() {
            let fastest = Density { method: Method::Bvh, ..Default::default() };
            reference = Some(fastest.cpu(&problem)?);
        }
        for alg in &opts.methods {
            let on_gpu = alg.upload(gpu, &problem)?;
            let mut runs = Vec::new();
            let mut last = None;
            for k in 0..opts.warmup + opts.repeats.max(1) {
                busy.queue(gpu, BUSY_SPAN)?;
                let (est, report) = alg.gpu_reported(gpu, &on_gpu)?;
                if k >= opts.warmup {
                    runs.push(split(&report));
                }
                last = Some((est, report));
            }
            let (est, report) = last.expect("at least one run");
            let flips = reference.as_ref().map_or(0, |r| r.flips(&est));
            check(&mut reference, est.clone(), "gpu", alg.method)?;
            let build = median(runs.iter().map(|r| r.0).collect());
            let gather = median(runs.iter().map(|r| r.1).collect());
            let total = median(runs.iter().map(|r| r.0 + r.1).collect());
            rows.push(Row {
                workload: w,
                density: *alg,
                backend: "gpu",
                pairs: est.pairs(),
                flips,
                tested: report.get("pairs tested").unwrap_or(0.0),
                build,
                gather,
                total,
            });
        }
    }
    progress.update("table 1", workloads.len() as u64, workloads.len() as u64);
    Ok(rows)
}

/// The share of crossings a GPU result may decide differently from the CPU's (a test
/// within a few ulps of its threshold, on a GPU that fuses multiply-adds): 1e-4, at least
/// one.
///
/// ```
/// assert_eq!(lumbre_density::MAX_FLIP_RATE, 1e-4);
/// ```
pub const MAX_FLIP_RATE: f64 = 1e-4;

/// Keeps the first result as the reference; later ones must agree with it (CPU results
/// exactly, GPU results up to [`MAX_FLIP_RATE`] of the crossings flipped).
fn check(reference: &mut Option<Estimate>, est: Estimate, backend: &str, method: Method) -> Result<()> {
    let Some(r) = reference else {
        *reference = Some(est);
        return Ok(());
    };
    let allowed = if backend == "cpu" { 0 } else { ((MAX_FLIP_RATE * r.pairs() as f64) as u64).max(1) };
    if r.agrees_up_to_flips(&est, allowed) {
        return Ok(());
    }
    let d = r.disagreement(&est, Tolerance::EXACT).unwrap_or_default();
    Err(Error::Validation(format!(
        "{method:?} on the {backend} disagrees with the reference ({} pairs against {}, {} flipped, {allowed} allowed): {d}",
        est.pairs(),
        r.pairs(),
        r.flips(&est)
    )))
}

impl fmt::Display for Row {
    /// `disks x segments  method  backend  pairs  flipped  tested  build  gather  total`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{:>8} x {:<9} {:<11} {:<4} pairs {:>11} flipped {:>3} tested {:>14.0} build {:>10.2} ms gather {:>10.2} ms total {:>10.2} ms",
            self.workload.disks,
            self.workload.segments,
            match (self.density.method, self.density.octree.filter) {
                (Method::Octree, crate::octree::Filter::HistoPyramid) => "Octree-HP".to_string(),
                (m, _) => format!("{m:?}"),
            },
            self.backend,
            self.pairs,
            self.flips,
            self.tested,
            ms(self.build),
            ms(self.gather),
            ms(self.total)
        )
    }
}
