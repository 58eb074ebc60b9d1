//! `lumbre bench octree`: the volumetric thesis's tables. For each point count: keying,
//! building, updating after every point moves, ray tracing 480K rays and a 1920x1080 Phong
//! frame with shadows, on the GPU and the CPU; then memory against depth.

use std::time::{Duration, Instant};

use clap::Args;
use glam::Vec3;
use lumbre_gpu::{Agree, BUSY_SPAN, Backend, Compute, Gpu, KeepBusy, Tolerance, busy_median_time};
use lumbre_morton::MortonEncode;
use lumbre_octree::{GpuBuild, Octree, Points, Root, dense_bytes};
use lumbre_raytrace::{
    Camera, VolumeMode, VolumeOptions, VolumeRender, cloud_points, phantom_cloud, render_volume_cpu,
};

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::limits::in_range;
use crate::progress::progress;
use crate::table::Table;
use crate::volume::advect;

/// The sparse octree on phantom clouds of the thesis's sizes: keys, build, update, ray
/// tracing, and memory against depth.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct OctreeArgs {
    /// Largest point count to include (the thesis's go up to 3283639).
    #[arg(long, default_value_t = 3_283_639)]
    max_points: usize,
    #[arg(long, default_value_t = 10)]
    depth: u32,
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

impl OctreeArgs {
    /// The thesis's point counts up to `--max-points`; an error when none is.
    fn counts(&self) -> Result<Vec<usize>> {
        let counts: Vec<usize> = COUNTS.iter().copied().filter(|&c| c <= self.max_points).collect();
        if counts.is_empty() {
            let (max, least) = (self.max_points, COUNTS[0]);
            return Err(format!("--max-points {max} is below the smallest point count, {least}").into());
        }
        Ok(counts)
    }
}

impl OnBackend for OctreeArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        in_range("--depth", self.depth, 1, lumbre_octree::MAX_DEPTH)?;
        Effort::new(self.warmup, self.repeats)?;
        self.counts()?;
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let effort = Effort::new(self.warmup, self.repeats)?;
        let tables = octree(backend, &self.counts()?, self.depth, effort)?;
        super::print(&tables, self.json)?;
        Ok(())
    }
}

/// The thesis's point counts.
const COUNTS: [usize; 5] = [30_641, 303_374, 951_879, 1_076_596, 3_283_639];

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// The first `n` points of the phantom in a fixed shuffled order (an n³ grid large enough).
pub fn phantom_points(max: usize) -> Points {
    let mut grid = 32;
    let mut cloud = phantom_cloud(grid);
    while cloud.len() < max && grid < 512 {
        grid *= 2;
        cloud = phantom_cloud(grid);
    }
    let points = cloud_points(&cloud);
    // Deterministic shuffle: sort by a hash of the index.
    let mut order: Vec<u32> = (0..points.positions.len() as u32).collect();
    order.sort_by_key(|&i| lumbre_raytrace::sampling::hash_u32(i));
    Points {
        positions: order.iter().map(|&i| points.positions[i as usize]).collect(),
        attrs: order.iter().map(|&i| points.attrs[i as usize]).collect(),
    }
}

fn prefix(p: &Points, n: usize) -> Points {
    let n = n.min(p.positions.len());
    Points { positions: p.positions[..n].to_vec(), attrs: p.attrs[..n].to_vec() }
}

/// Median GPU time of `f`, each run submitted behind work that keeps the GPU busy.
fn gpu_median(gpu: &Gpu, effort: Effort, f: impl FnMut() -> lumbre_gpu::Result<Duration>) -> Result<Duration> {
    Ok(busy_median_time(gpu, effort.warmup, effort.repeats, f)?)
}

fn wall<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

fn octree(backend: &Backend, counts: &[usize], depth: u32, effort: Effort) -> Result<Vec<Table>> {
    let gpu = backend.gpu();
    let mut t = Table::new(
        format!("Octree at depth {depth}: keys, build, update after every point moves, ray tracing"),
        &[
            "points",
            "nodes",
            "bytes/point (packed)",
            "GPU key ms",
            "GPU build ms",
            "GPU update ms",
            "GPU 480K rays ms",
            "GPU 1080p Phong ms",
            "CPU key ms",
            "CPU build ms",
            "CPU update ms",
            "CPU 480K rays ms",
        ],
    );
    let all = phantom_points(*counts.iter().max().unwrap_or(&0));
    let bar = progress(counts.len() as u64, "octree");
    let mut stages = Vec::new();
    for &n in counts {
        let pts = prefix(&all, n);
        let root = Root::around(&pts.positions).ok_or("empty cloud")?;
        let padded = Root { min: root.min.map(|m| m - root.size * 0.25), size: root.size * 1.5 };
        let (tree, _) = Octree::build_in(&pts.positions, &pts.attrs, depth, padded)?;
        let centre = Vec3::from(padded.min) + Vec3::splat(padded.size * 0.5);
        let moved = Points { positions: advect(&pts.positions, centre, 0.01), attrs: pts.attrs.clone() };
        let bounds = (Vec3::from(padded.min), Vec3::from(padded.max()));
        let cam = Camera::frame(bounds, 4.0 / 3.0);
        let small = VolumeOptions { width: 800, height: 600, mode: VolumeMode::Colour, ..Default::default() };
        let full =
            VolumeOptions { width: 1920, height: 1080, mode: VolumeMode::Phong, max_depth: 1, ..Default::default() };
        let q = lumbre_octree::quantizer_of(padded, depth);
        let enc = MortonEncode { quantizer: q, clamp: true };
        let mut row =
            vec![n.to_string(), tree.nodes.len().to_string(), format!("{:.1}", tree.pack().bytes() as f64 / n as f64)];
        match gpu {
            Some(gpu) => {
                let on_gpu_pts = enc.upload(gpu, &pts.positions)?;
                let key = gpu_median(gpu, effort, || {
                    let mut rec = gpu.recorder();
                    enc.record_keys(&mut rec, &on_gpu_pts)?;
                    Ok(rec.submit()?.gpu())
                })?;
                let b = GpuBuild { depth, root: Some(padded) };
                let cloud = b.upload(gpu, &pts)?;
                let build = gpu_median(gpu, effort, || {
                    let mut rec = gpu.recorder();
                    b.record_build(&mut rec, &cloud)?;
                    Ok(rec.submit()?.gpu())
                })?;
                // Update: the moved points rebuilt in the same root (the GPU path's update).
                let moved_cloud = b.upload(gpu, &moved)?;
                let update = gpu_median(gpu, effort, || {
                    let mut rec = gpu.recorder();
                    b.record_build(&mut rec, &moved_cloud)?;
                    Ok(rec.submit()?.gpu())
                })?;
                KeepBusy::new(gpu).and_then(|b| b.queue(gpu, BUSY_SPAN))?;
                let mut rec = gpu.recorder();
                let gtree = b.record_build(&mut rec, &cloud)?;
                stages.push(format!("GPU build of {n} points: {}", rec.submit()?));
                // A benchmark of a wrong result is worthless: check against the CPU build.
                let got = b.download(gpu, &gtree)?;
                if let Some(d) = tree.pack().disagreement(&got, Tolerance::EXACT) {
                    return Err(format!("the GPU build of {n} points disagrees with the CPU build: {d}").into());
                }
                let rs = VolumeRender { camera: cam, options: small.clone(), tree_depth: depth };
                let rf = VolumeRender { camera: cam, options: full.clone(), tree_depth: depth };
                let time = |r: &VolumeRender| -> lumbre_gpu::Result<Duration> {
                    Ok(r.gpu_reported(gpu, &gtree)?.1.gpu.unwrap_or_default())
                };
                let trace = gpu_median(gpu, effort, || time(&rs))?;
                let frame = gpu_median(gpu, effort, || time(&rf))?;
                row.extend([ms(key), ms(build), ms(update), ms(trace), ms(frame)]);
            }
            None => row.extend(std::iter::repeat_n("-".to_string(), 5)),
        }
        let (_, key) = wall(|| enc.cpu(&pts.positions));
        let (_, build) = wall(|| Octree::build_in(&pts.positions, &pts.attrs, depth, padded));
        let mut patched = tree.clone();
        let (_, update) = wall(|| patched.update_in_place(&pts.positions, &moved.positions, &pts.attrs));
        let (image, trace) = wall(|| render_volume_cpu(&tree, &cam, &small));
        image?;
        row.extend([ms(key), ms(build), ms(update), ms(trace)]);
        t.row(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note(format!(
        "points: the Shepp-Logan phantom in a fixed shuffled order; root: the cube around them, 1.5x; update: every point advected (rotation + swirl); GPU update = rebuild in the same root; CPU update = the thesis's in-place update; GPU: {}; CPU: one run each on {} threads",
        gpu.map_or("none".to_string(), |g| g.adapter_name().to_string()),
        rayon::current_num_threads()
    ));
    for s in stages {
        t.note(s);
    }
    // Memory against depth for the largest cloud.
    let n = *counts.iter().max().unwrap_or(&0);
    let pts = prefix(&all, n);
    let mut m = Table::new(
        format!("Octree memory against depth ({n} points)"),
        &["depth", "nodes", "packed MB", "bytes/point", "unpacked MB (CPU tree)", "dense counters MB (thesis layout)"],
    );
    for d in 5..=10 {
        let (tree, _) = Octree::build(&pts.positions, &pts.attrs, d)?;
        m.row(vec![
            d.to_string(),
            tree.nodes.len().to_string(),
            format!("{:.1}", tree.pack().bytes() as f64 / 1e6),
            format!("{:.1}", tree.pack().bytes() as f64 / n as f64),
            format!("{:.1}", tree.bytes() as f64 / 1e6),
            format!("{:.1}", dense_bytes(d) as f64 / 1e6),
        ]);
    }
    m.note("packed: interior nodes of 12 bytes and payloads of 24 shared along chains of single children (what the GPU holds); unpacked: the CPU tree of 32-byte nodes that the in-place update edits");
    m.note("dense: 4 bytes per possible node of every level; the thesis's skeleton took 18 MB at depth 7, 146 MB at depth 8 and over 1 GB at depth 9");
    Ok(vec![t, m])
}
