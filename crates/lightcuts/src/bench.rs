//! Benchmark figures: the paper's Table 5 (instant radiosity and lightcuts at 1000x1000 for
//! 110, 420, 930 and 2550 VPLs) and beyond it (1e4, 1e5, 1e6 VPLs), frame times by stage
//! (VPLs, tree, G-buffer, ISM, pull-push, shading), average cut sizes and the error of
//! lightcuts against instant radiosity with the same lights and visibility; the cut sizes of
//! the paper's Tables 2 and 3 per cluster metric and builder; and the greedy build's time.

use std::fmt;
use std::time::{Duration, Instant};

use lumbre_gpu::{Backend, Compute, Report, Result};
use lumbre_raytrace::metrics::{compare, relative_error};
use lumbre_raytrace::{Image, Prepared};

use crate::{
    ClusterMetric, CutOptions, GreedyTree, Method, MortonTree, Render, Rendering, TreeBuilder, View, Visibility,
    VplOptions, vpls_cpu,
};

/// Warm-up runs and measured repeats of every figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    /// Unmeasured runs first.
    pub warmup: usize,
    /// Measured runs (the median is reported).
    pub repeats: usize,
}

/// The stages a frame's time is split into, in order.
pub const STAGES: [&str; 6] = ["vpls", "tree", "gbuffer", "ism", "pull-push", "shading"];

/// The stage of a pass label of the GPU path (or a stage name of the CPU path).
pub fn stage_of(label: &str) -> &'static str {
    match label {
        "vpls" => "vpls",
        "gbuffer" => "gbuffer",
        "ism points" | "ism splat" => "ism",
        "ism pull-push" => "pull-push",
        "lightcuts" | "instant radiosity" => "shading",
        _ => "tree",
    }
}

/// One frame measured: median times per stage, the frame's total, and what it made.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRow {
    /// `lightcuts` or `instant`.
    pub method: &'static str,
    /// Visibility's name.
    pub visibility: &'static str,
    /// VPLs asked for.
    pub asked: u32,
    /// VPLs made.
    pub vpls: u32,
    /// Median time of each of [`STAGES`] (zero where a stage does not run).
    pub stages: [Duration; 6],
    /// Median time of the whole frame (the sum of its stages' passes).
    pub frame: Duration,
    /// Average cut size over the lit pixels (lightcuts).
    pub average_cut: Option<f64>,
    /// Error against instant radiosity with the same lights and visibility, when it ran.
    pub error: Option<ErrorFigures>,
}

/// How far lightcuts are from instant radiosity (relative error on luminance as
/// `lumbre_raytrace::metrics` defines it, and CIE94).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorFigures {
    /// Mean relative error.
    pub rel_mean: f64,
    /// 99th percentile of the relative error.
    pub rel_p99: f64,
    /// Fraction of the pixels more than 2% off.
    pub over_2pct: f64,
    /// Mean CIE94 ΔE.
    pub de94_mean: f64,
}

impl ErrorFigures {
    /// The figures of `test` against `reference`.
    pub fn of(test: &Image, reference: &Image) -> Result<ErrorFigures> {
        let m = compare(test, reference, &[]).map_err(|e| lumbre_gpu::Error::Input(e.to_string()))?;
        let over = test.pixels.iter().zip(&reference.pixels).filter(|(t, r)| relative_error(**t, **r) > 0.02).count();
        Ok(ErrorFigures {
            rel_mean: m.rel_mean,
            rel_p99: m.rel_p99,
            over_2pct: over as f64 / test.pixels.len().max(1) as f64,
            de94_mean: m.de94_mean,
        })
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// The time of each of [`STAGES`] in `report` (the download of the image and cuts, and an
/// upload, are no part of a frame).
///
/// ```
/// use lumbre_gpu::Report;
/// use lumbre_lightcuts::bench::stage_times;
/// use std::time::Duration;
/// let mut r = Report::default();
/// r.add_stage("ism splat", Duration::from_millis(2));
/// r.add_stage("ism points", Duration::from_millis(1));
/// r.add_stage("lightcuts", Duration::from_millis(5));
/// r.add_stage("download", Duration::from_millis(9));
/// let t = stage_times(&r);
/// assert_eq!((t[3], t[5]), (Duration::from_millis(3), Duration::from_millis(5)));
/// assert_eq!(t.iter().sum::<Duration>(), Duration::from_millis(8));
/// ```
pub fn stage_times(report: &Report) -> [Duration; 6] {
    let mut s = [Duration::ZERO; 6];
    for (label, d) in report.stages.iter().filter(|(l, _)| l != "download" && l != "upload") {
        let k = STAGES.iter().position(|&x| x == stage_of(label)).unwrap_or(1);
        s[k] += *d;
    }
    s
}

/// The median of each stage and of the frame over `reports`.
fn medians(reports: &[Report]) -> ([Duration; 6], Duration) {
    let all: Vec<[Duration; 6]> = reports.iter().map(stage_times).collect();
    let stages = std::array::from_fn(|k| median(all.iter().map(|s| s[k]).collect()));
    (stages, median(all.iter().map(|s| s.iter().sum()).collect()))
}

/// Runs `render` on `backend` (`effort.warmup` times unmeasured, then `effort.repeats`
/// times, on a scene placed there once) and reports the medians with the last run's
/// output. GPU stages are timed by the device, CPU stages by the wall clock.
pub fn frame(backend: &Backend, prepared: &Prepared, render: &Render, effort: Effort) -> Result<(FrameRow, Rendering)> {
    let placed = backend.place(render, prepared)?;
    let mut last = None;
    let mut reports = Vec::new();
    for k in 0..effort.warmup + effort.repeats.max(1) {
        let (out, report) = render.run_placed(&placed, &())?;
        if k >= effort.warmup {
            reports.push(report);
        }
        last = Some(out);
    }
    let out = last.expect("at least one run");
    let (stages, frame) = medians(&reports);
    let row = FrameRow {
        method: render.method.name(),
        visibility: render.visibility.name(),
        asked: render.vpls.slots() as u32,
        vpls: out.vpls,
        stages,
        frame,
        average_cut: reports.last().and_then(|r| r.get("average cut")),
        error: None,
    };
    Ok((row, out))
}

/// Lightcuts and, for up to `instant_max` VPLs, instant radiosity with the same VPLs and
/// visibility, for each count: the rows, and lightcuts' error against instant radiosity
/// where both ran.
pub fn scaling(
    backend: &Backend,
    prepared: &Prepared,
    base: &Render,
    counts: &[u32],
    instant_max: u32,
    effort: Effort,
) -> Result<Vec<FrameRow>> {
    let mut rows = Vec::new();
    for &n in counts {
        let render = Render { vpls: VplOptions { seed: base.vpls.seed, ..VplOptions::one_bounce(n) }, ..*base };
        let (mut lc, lc_out) = frame(backend, prepared, &render, effort)?;
        if n <= instant_max {
            let ir = Render { method: Method::Instant, ..render };
            let (ir_row, ir_out) = frame(backend, prepared, &ir, effort)?;
            lc.error = Some(ErrorFigures::of(&lc_out.image, &ir_out.image)?);
            rows.push(lc);
            rows.push(ir_row);
        } else {
            rows.push(lc);
        }
    }
    Ok(rows)
}

impl fmt::Display for FrameRow {
    /// One line: method, visibility, VPLs, stage times in ms, frame, cut, error.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| format!("{:9.3}", d.as_secs_f64() * 1e3);
        write!(f, "{:9} {:10} {:8}", self.method, self.visibility, self.vpls)?;
        for s in self.stages {
            write!(f, " {}", ms(s))?;
        }
        write!(f, " {}", ms(self.frame))?;
        match self.average_cut {
            Some(c) => write!(f, " {c:8.1}")?,
            None => write!(f, " {:>8}", "-")?,
        }
        match self.error {
            Some(e) => write!(
                f,
                " {:7.3}% {:7.3}% {:6.2}% {:6.3}",
                e.rel_mean * 100.0,
                e.rel_p99 * 100.0,
                e.over_2pct * 100.0,
                e.de94_mean
            ),
            None => write!(f, " {:>8} {:>8} {:>7} {:>6}", "-", "-", "-", "-"),
        }
    }
}

/// The header line of [`FrameRow`]'s lines.
pub fn frame_header() -> String {
    let mut h = format!("{:9} {:10} {:>8}", "method", "visibility", "vpls");
    for s in STAGES {
        h.push_str(&format!(" {s:>9}"));
    }
    h.push_str(&format!(
        " {:>9} {:>8} {:>8} {:>8} {:>7} {:>6}",
        "frame ms", "avg cut", "rel mean", "rel p99", ">2%", "dE94"
    ));
    h
}

/// The average cut size of one tree builder and metric at one VPL count.
#[derive(Clone, Debug, PartialEq)]
pub struct CutSizeRow {
    /// `greedy` or `morton`.
    pub builder: &'static str,
    /// The metric's name (greedy), or `position` / `position+normal` (Morton keys).
    pub metric: &'static str,
    /// VPLs made.
    pub vpls: u32,
    /// Average cut size over the lit pixels.
    pub average_cut: f64,
    /// Time to build the tree (CPU for greedy; the GPU path's tree stage for Morton on a
    /// GPU backend).
    pub build: Duration,
}

/// The paper's Tables 2 and 3: the average cut size at 2% for each cluster metric (greedy
/// build) and for the Morton build, for each VPL count, rendering `view` of `prepared` on
/// `backend`.
pub fn cut_sizes(backend: &Backend, prepared: &Prepared, view: View, counts: &[u32]) -> Result<Vec<CutSizeRow>> {
    let metrics = [
        ClusterMetric::Walter,
        ClusterMetric::Similarity { color: false, direction: false },
        ClusterMetric::Similarity { color: true, direction: false },
        ClusterMetric::Similarity { color: false, direction: true },
        ClusterMetric::PAPER,
    ];
    let mut builders: Vec<(&'static str, &'static str, TreeBuilder)> = metrics
        .iter()
        .map(|&metric| ("greedy", metric.name(), TreeBuilder::Greedy(GreedyTree { metric, ..Default::default() })))
        .collect();
    builders.push(("morton", "position", TreeBuilder::Morton(MortonTree { direction_bits: 0, ..Default::default() })));
    builders.push(("morton", "position+normal", TreeBuilder::Morton(MortonTree::default())));
    let mut rows = Vec::new();
    for &n in counts {
        for &(builder, metric, tree) in &builders {
            let render = Render {
                view,
                vpls: VplOptions::one_bounce(n),
                tree,
                method: Method::Lightcuts(CutOptions::default()),
                ..Default::default()
            };
            let (out, report) = render.run_reported(backend, prepared, &())?;
            let build = report.stages.iter().filter(|(l, _)| stage_of(l) == "tree").map(|(_, d)| *d).sum();
            rows.push(CutSizeRow {
                builder,
                metric,
                vpls: out.vpls,
                average_cut: report.get("average cut").unwrap_or(0.0),
                build,
            });
        }
    }
    Ok(rows)
}

/// The CPU time of the greedy build over `n` VPLs of `prepared` (made on the CPU) with
/// `metric`: the median of `repeats` builds.
pub fn greedy_build_time(
    prepared: &Prepared,
    n: u32,
    metric: ClusterMetric,
    repeats: usize,
) -> Result<(u32, Duration)> {
    let vpls = vpls_cpu(prepared, &VplOptions::one_bounce(n), &Default::default())?;
    let diagonal = Some((prepared.scene.bounds.1 - prepared.scene.bounds.0).length());
    let times = (0..repeats.max(1))
        .map(|_| {
            let t = Instant::now();
            GreedyTree { metric, diagonal, ..Default::default() }.build(&vpls).map(|_| t.elapsed())
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((vpls.len() as u32, median(times)))
}

/// The paper's Table 5 and beyond on `backend`: 1000x1000 pixels of the Cornell box's
/// reference view, 110, 420, 930 and 2550 VPLs, then 1e4, 1e5 and 1e6, lightcuts (Morton
/// tree, 2%) with `visibility`, and instant radiosity up to `instant_max` VPLs.
///
/// ```no_run
/// use lumbre_lightcuts::bench::{Effort, frame_header, table5};
/// use lumbre_lightcuts::Visibility;
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let gpu = lumbre_gpu::Backend::Gpu(lumbre_gpu::Gpu::new()?);
/// println!("{}", frame_header());
/// for row in table5(&gpu, &prepared, Visibility::Rays, 2550, Effort { warmup: 1, repeats: 5 })? {
///     println!("{row}");
/// }
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn table5(
    backend: &Backend,
    prepared: &Prepared,
    visibility: Visibility,
    instant_max: u32,
    effort: Effort,
) -> Result<Vec<FrameRow>> {
    let base = Render { view: View::cornell(1000, 1000), visibility, ..Default::default() };
    scaling(backend, prepared, &base, &[110, 420, 930, 2550, 10_000, 100_000, 1_000_000], instant_max, effort)
}
