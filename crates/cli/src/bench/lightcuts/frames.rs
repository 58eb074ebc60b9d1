//! Frames timed by stage (the lightcuts paper's Table 5 and beyond), lightcuts' error against
//! instant radiosity with the same lights and visibility, the cut sizes of its Tables 2 and
//! 3 per cluster metric and tree builder, and the greedy build's time.

use std::time::{Duration, Instant};

use lumbre_gpu::{Backend, Compute, Report, Result};
use lumbre_lightcuts::{
    ClusterMetric, CutOptions, GreedyTree, Method, MortonTree, Render, Rendering, TreeBuilder, View, VplOptions,
    vpls_cpu,
};
use lumbre_raytrace::metrics::{compare, relative_error};
use lumbre_raytrace::{Image, Prepared};

use crate::bench::{Effort, median};
use crate::lightcuts::{stage_of, stage_times};

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
    /// Median time of each of [`STAGES`](crate::lightcuts::STAGES) (zero where a stage does not run).
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
