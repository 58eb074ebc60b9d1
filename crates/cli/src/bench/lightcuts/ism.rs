//! Imperfect shadow maps on the GPU: splatting and pull-push for many VPLs at 64x64, and
//! pull-push of a 3968x3968 atlas (31x31 maps of 128x128, the source work's Table 4). Every
//! GPU result timed is first checked against the CPU's.

use std::time::Duration;

use glam::Vec3;
use lumbre_gpu::{Compute, Gpu, Result, TimingSource, Timings, busy_median_time, copy_time};
use lumbre_lightcuts::ism::{
    GpuIsmAtlas, GpuScenePoints, Ism, IsmAtlas, IsmOptions, MAX_DIFFERING, PullPush, SAME_DEPTH_REL, ScenePoints,
    upload_vpls,
};
use lumbre_lightcuts::workloads::vpls_on;

use crate::bench::{Effort, median};

/// One build measured: medians of GPU times per stage.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildRow {
    /// VPLs (maps).
    pub vpls: u32,
    /// Options of the build.
    pub options: IsmOptions,
    /// Width and height of the 2D atlas.
    pub atlas: (u32, u32),
    /// Bytes of the depths.
    pub bytes: u64,
    /// Splatting.
    pub splat: Duration,
    /// Pull-push.
    pub pull_push: Duration,
    /// The whole submission (splat, pull-push and the gaps between passes).
    pub build: Duration,
    /// Texels whose GPU depth differs from the CPU's by more than [`SAME_DEPTH_REL`].
    pub differing_texels: usize,
}

/// Pull-push of one atlas measured, beside a copy of the same bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct PullPushRow {
    /// Width and height of the 2D atlas.
    pub atlas: (u32, u32),
    /// Side of its maps.
    pub size: u32,
    /// Levels.
    pub levels: u32,
    /// Holes before pull-push.
    pub holes: usize,
    /// Median GPU time of pull-push.
    pub time: Duration,
    /// Median GPU time of a copy kernel over the atlas's bytes (read once, written once).
    pub copy: Duration,
    /// Texels whose GPU result differs from the CPU's by more than [`SAME_DEPTH_REL`].
    pub differing_texels: usize,
}

/// The texels of `gpu` that differ from `cpu`'s; an error, refusing the figure, when more
/// than [`MAX_DIFFERING`] of them do.
fn check(what: &str, cpu: &IsmAtlas, gpu: &IsmAtlas) -> Result<usize> {
    let d = cpu.differing_texels(gpu, SAME_DEPTH_REL);
    if d as f64 > MAX_DIFFERING * cpu.depth.len().max(1) as f64 {
        return Err(lumbre_gpu::Error::Input(format!(
            "{what}: the GPU result differs from the CPU's in {d} of {} texels",
            cpu.depth.len()
        )));
    }
    Ok(d)
}

/// The sum of the passes labelled `label` (or the whole submission without timestamps).
fn stage(t: &Timings, label: &str) -> Duration {
    match t.source {
        TimingSource::Timestamps => {
            t.by_label().into_iter().find(|(l, _)| l == label).map(|(_, d)| d).unwrap_or_default()
        }
        TimingSource::WallClock => t.gpu(),
    }
}

/// Times the GPU build (splat and pull-push) of `vpls` VPLs with `opts` on `triangles`,
/// after checking it against the CPU build.
pub fn build(gpu: &Gpu, triangles: &[[Vec3; 3]], vpls: u32, opts: &IsmOptions, effort: Effort) -> Result<BuildRow> {
    let points = ScenePoints::sample(triangles, opts.points, opts.seed)?;
    let lights = vpls_on(triangles, vpls, opts.seed)?;
    let cpu = Ism::build_cpu(&points, &lights, opts)?;
    let on_gpu = GpuScenePoints::upload(gpu, &points)?;
    let on_gpu_vpls = upload_vpls(gpu, &lights)?;
    let ism = Ism { options: *opts };
    let mut rec = gpu.recorder();
    let atlas = ism.record_build(&mut rec, &on_gpu, &on_gpu_vpls)?;
    rec.submit()?;
    let differing_texels = check("ISM build", &cpu, &atlas.download(gpu)?)?;
    drop(atlas);
    let (mut splat, mut pp) = (Vec::new(), Vec::new());
    let total = busy_median_time(gpu, effort.warmup, effort.repeats, || {
        let mut rec = gpu.recorder();
        ism.record_build(&mut rec, &on_gpu, &on_gpu_vpls)?;
        let t = rec.submit()?;
        splat.push(stage(&t, "ism splat"));
        pp.push(stage(&t, "ism pull-push"));
        Ok(t.gpu())
    })?;
    // The measured runs are the last `repeats`: the warm-up runs come first.
    let measured = |mut v: Vec<Duration>| median(v.split_off(v.len().saturating_sub(effort.repeats.max(1))));
    Ok(BuildRow {
        vpls,
        options: *opts,
        atlas: cpu.atlas_size(),
        bytes: cpu.bytes(),
        splat: measured(splat),
        pull_push: measured(pp),
        build: total,
        differing_texels,
    })
}

/// Times pull-push over `levels` levels of the atlas that splatting `vpls` VPLs with
/// `opts` on `triangles` gives (each run fills a fresh copy of it), beside a copy of its
/// bytes.
pub fn pull_push_atlas(
    gpu: &Gpu,
    triangles: &[[Vec3; 3]],
    vpls: u32,
    opts: &IsmOptions,
    levels: u32,
    effort: Effort,
) -> Result<PullPushRow> {
    let points = ScenePoints::sample(triangles, opts.points, opts.seed)?;
    let lights = vpls_on(triangles, vpls, opts.seed)?;
    let holes_opts = IsmOptions { pull_push_levels: 0, ..*opts };
    let splatted = Ism::build_cpu(&points, &lights, &holes_opts)?;
    let pull_push = PullPush { levels };
    let cpu = pull_push.cpu(&splatted)?;
    let source = GpuIsmAtlas::upload(gpu, &splatted)?;
    let mut rec = gpu.recorder();
    let filled = pull_push.record(&mut rec, &source)?;
    rec.submit()?;
    let differing_texels = check("pull-push", &cpu, &filled.download(gpu)?)?;
    drop(filled);
    let time = busy_median_time(gpu, effort.warmup, effort.repeats, || {
        let mut rec = gpu.recorder();
        pull_push.record(&mut rec, &source)?;
        Ok(stage(&rec.submit()?, "ism pull-push"))
    })?;
    let copy = copy_time(gpu, splatted.bytes(), effort.warmup, effort.repeats)?;
    Ok(PullPushRow {
        atlas: splatted.atlas_size(),
        size: splatted.size,
        levels,
        holes: splatted.holes(),
        time,
        copy,
        differing_texels,
    })
}

/// The standard figures: builds of `vpl_counts` VPLs at 64x64 (default options otherwise),
/// and pull-push (2 levels, as the source work's figure, and all 7) of a 3968x3968 atlas of
/// 961 maps of 128x128.
pub fn standard(
    gpu: &Gpu,
    triangles: &[[Vec3; 3]],
    vpl_counts: &[u32],
    effort: Effort,
) -> Result<(Vec<BuildRow>, Vec<PullPushRow>)> {
    let opts = IsmOptions { size: 64, ..IsmOptions::default() };
    let builds = vpl_counts.iter().map(|&n| build(gpu, triangles, n, &opts, effort)).collect::<Result<Vec<_>>>()?;
    let big = IsmOptions { size: 128, ..IsmOptions::default() };
    let pp = [2, 7]
        .into_iter()
        .map(|levels| pull_push_atlas(gpu, triangles, 31 * 31, &big, levels, effort))
        .collect::<Result<Vec<_>>>()?;
    Ok((builds, pp))
}
