//! Benchmark figures of the GPU build: splatting and pull-push for many VPLs at 64x64, and
//! pull-push of a 3968x3968 atlas (31x31 maps of 128x128, the source work's Table 4). Every
//! GPU result timed is first checked against the CPU's.

use std::time::Duration;

use glam::Vec3;
use lumbre_gpu::{Gpu, Result, Timings, busy_median_time, copy_time};

use super::{GpuScenePoints, Ism, IsmAtlas, IsmOptions, ScenePoints, gpu, pull_push, upload_vpls};
use crate::Vpl;

pub use crate::bench::Effort;

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
    /// Texels whose GPU depth differs from the CPU's by more than [`REL`].
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
    /// Texels whose GPU result differs from the CPU's by more than [`REL`].
    pub differing_texels: usize,
}

/// Relative difference of depths up to which a GPU texel counts as equal to the CPU's: a
/// driver may fuse and reassociate the f32 operations (SPIR-V allows both), which moves
/// depths by a few ulps.
pub const REL: f32 = 1e-5;

/// At most this fraction of texels may differ between the GPU and the CPU by more than
/// [`REL`] (points within rounding of a texel border, landing in the neighbour) before a
/// figure is refused.
pub const MAX_DIFFERING: f64 = 5e-3;

fn check(what: &str, cpu: &IsmAtlas, gpu: &IsmAtlas) -> Result<usize> {
    let d = cpu.differing_texels(gpu, REL);
    if d as f64 > MAX_DIFFERING * cpu.depth.len().max(1) as f64 {
        return Err(lumbre_gpu::Error::Input(format!(
            "{what}: the GPU result differs from the CPU's in {d} of {} texels",
            cpu.depth.len()
        )));
    }
    Ok(d)
}

/// `n` VPLs on the surfaces of `triangles`: area-uniform points of a pool, each facing
/// along its triangle's geometric normal, white.
///
/// ```
/// use glam::Vec3;
/// let vpls = lumbre_lightcuts::ism::bench::vpls_on(&[[Vec3::ZERO, Vec3::X, Vec3::Z]], 10, 0).unwrap();
/// assert_eq!(vpls.len(), 10);
/// assert!(vpls.iter().all(|v| v.normal == -Vec3::Y));
/// ```
pub fn vpls_on(triangles: &[[Vec3; 3]], n: u32, seed: u32) -> Result<Vec<Vpl>> {
    let pool = ScenePoints::sample(triangles, n, seed ^ 0x5eed)?;
    Ok(pool
        .positions
        .iter()
        .zip(&pool.triangles)
        .map(|(&position, &t)| {
            let [a, b, c] = triangles[t as usize];
            Vpl { position, normal: (b - a).cross(c - a).normalize(), intensity: Vec3::ONE }
        })
        .collect())
}

/// The sum of the passes labelled `label` (or the whole submission without timestamps).
fn stage(t: &Timings, label: &str) -> Duration {
    match t.source {
        lumbre_gpu::TimingSource::Timestamps => {
            t.by_label().into_iter().find(|(l, _)| l == label).map(|(_, d)| d).unwrap_or_default()
        }
        lumbre_gpu::TimingSource::WallClock => t.gpu(),
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
    let median = |mut v: Vec<Duration>| {
        let skip = v.len().saturating_sub(effort.repeats.max(1));
        let mut kept = v.split_off(skip);
        kept.sort();
        kept.get(kept.len() / 2).copied().unwrap_or_default()
    };
    Ok(BuildRow {
        vpls,
        options: *opts,
        atlas: cpu.atlas_size(),
        bytes: cpu.bytes(),
        splat: median(splat),
        pull_push: median(pp),
        build: total,
        differing_texels,
    })
}

/// Times pull-push over `levels` levels of the atlas that splatting `vpls` VPLs with
/// `opts` on `triangles` gives (each run on a fresh copy of it), beside a copy of its bytes.
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
    let mut cpu = splatted.clone();
    pull_push::pull_push_cpu(&mut cpu.depth, cpu.size, levels);
    let source = super::GpuIsmAtlas::upload(gpu, &splatted)?;
    let work = super::GpuIsmAtlas::upload(gpu, &splatted)?;
    let mut rec = gpu.recorder();
    gpu::record_pull_push(&mut rec, &work, levels)?;
    rec.submit()?;
    let differing_texels = check("pull-push", &cpu, &work.download(gpu)?)?;
    let time = busy_median_time(gpu, effort.warmup, effort.repeats, || {
        let mut rec = gpu.recorder();
        rec.copy(&source.depth, &work.depth)?;
        gpu::record_pull_push(&mut rec, &work, levels)?;
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
///
/// ```no_run
/// use lumbre_lightcuts::ism::bench::{Effort, standard, vpls_on};
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let (scene, _) = lumbre_raytrace::Scene::load_obj("testdata/scenes/CornellBox-Original.obj".as_ref()).unwrap();
/// let (builds, pull_push) = standard(&gpu, &scene.triangle_positions(), &[1_000, 10_000, 100_000], Effort { warmup: 2, repeats: 10 })?;
/// for row in builds {
///     println!("{} VPLs: splat {:?}, pull-push {:?}", row.vpls, row.splat, row.pull_push);
/// }
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
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
