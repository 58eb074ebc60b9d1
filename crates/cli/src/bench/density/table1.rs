//! The paper's Table 1 timed: every method on the CPU and the GPU over the uniform
//! workloads of `lumbre_density::workloads`, each GPU result checked against the CPU's
//! first.

use std::time::{Duration, Instant};

use lumbre_density::workloads::{Workload, uniform};
use lumbre_density::{Density, Estimate, MAX_FLIP_RATE, Method};
use lumbre_gpu::{Agree, BUSY_SPAN, Backend, Compute, Error, KeepBusy, Progress, Report, Result, Tolerance};

use crate::bench::median;

/// The paper's Table 1 (disks x segments), then 1e6 x 1e7.
pub const WORKLOADS: [Workload; 5] = [
    Workload { disks: 10_000, segments: 10_000 },
    Workload { disks: 100_000, segments: 100_000 },
    Workload { disks: 100_000, segments: 500_000 },
    Workload { disks: 100_000, segments: 1_000_000 },
    Workload { disks: 1_000_000, segments: 10_000_000 },
];

/// The disks' radius in Table 1.
pub const RADIUS: f32 = 0.01;

/// One measured row: a workload, a method on a backend.
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

/// What [`measure`] runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The methods (with their options) to time.
    pub methods: Vec<Density>,
    /// Whether to time the CPU path.
    pub cpu: bool,
    /// Where the GPU rows run: none on the CPU.
    pub backend: Backend,
    /// Unmeasured runs before the GPU's measured ones.
    pub warmup: usize,
    /// Measured GPU runs (the median is reported).
    pub repeats: usize,
    /// Methods whose tests (segments x disks, brute force) exceed this are skipped on the
    /// CPU (the check of the GPU then uses the fastest CPU method).
    pub max_cpu_brute_pairs: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            methods: Density::METHODS.iter().map(|&method| Density { method, ..Default::default() }).collect(),
            cpu: true,
            backend: Backend::Cpu,
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

/// The report's time split into (index build, gather).
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

/// Times every method of `opts` on every workload: rows for the CPU path and the GPU path.
/// Each GPU result must equal the CPU's (counts and power, bit for bit), up to
/// [`MAX_FLIP_RATE`] of the crossings decided differently, before its row is reported; a
/// mismatch is an error.
pub fn measure(workloads: &[Workload], opts: &Options, progress: &dyn Progress) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let busy = match opts.backend.gpu() {
        Some(gpu) => Some(KeepBusy::new(gpu)?),
        None => None,
    };
    for (wi, &w) in workloads.iter().enumerate() {
        progress.update("table 1", wi as u64, workloads.len() as u64);
        let problem = uniform(w, RADIUS, 1);
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
        let (Some(gpu), Some(busy)) = (opts.backend.gpu(), &busy) else { continue };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workloads_are_the_papers() {
        assert_eq!(WORKLOADS.len(), 5);
        assert_eq!(WORKLOADS[3].segments, 1_000_000);
        assert_eq!(RADIUS, 0.01);
        let o = Options::default();
        assert!(o.cpu && o.backend.gpu().is_none() && o.methods.len() == 3);
    }

    /// A small workload through the harness: a row per method and backend, every method
    /// finding the same crossings.
    #[test]
    fn every_method_gives_a_checked_row() {
        let gpu = lumbre_gpu::testing::test_gpu(lumbre_gpu::wgpu::Features::empty());
        let backend = gpu.clone().map_or(Backend::Cpu, Backend::Gpu);
        let opts = Options { backend, warmup: 0, repeats: 1, ..Default::default() };
        let w = Workload { disks: 300, segments: 2000 };
        let rows = measure(&[w], &opts, &()).unwrap();
        assert_eq!(rows.len(), if gpu.is_some() { 6 } else { 3 });
        assert!(rows[0].pairs > 0);
        for r in &rows {
            assert_eq!(r.workload, w);
            assert!(r.pairs.abs_diff(rows[0].pairs) <= r.flips, "{r:?}");
            assert!(r.tested >= r.pairs as f64, "{r:?}");
        }
    }
}
