//! `lumbre bench raytrace --tables incoherent`: incoherent rays on the scene set (`lumbre
//! scenes`). Per scene, from its reference camera: the diffuse bounces of one primary ray
//! per pixel traced by closest hit on the GPU beside the primary rays themselves (the
//! coherent rate on the same scene), the same on the CPU on a subsample, and path-traced
//! frames (every bounce, the path tracer's defaults) at two sizes. `--export-rays DIR` writes
//! each scene's triangles and the CPU's rays and hits for a peer to trace (see `export.rs`).

mod export;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use lumbre_gpu::{Agree, BUSY_SPAN, Backend, Compute, Gpu, KeepBusy, Tolerance, median_time};
use lumbre_kdtree::{BvhQuery, GpuStructure, Hit, Hits, QueryOptions, Ray, RayQuery};

use crate::view::{Structure, schedule_name};
use lumbre_raytrace::{Camera, MAX_SPP, PathOptions, PathRender, PathSchedule, Prepared};
use rayon::prelude::*;

use super::bounce::{bounce_rays, primary_rays, spread};
use crate::error::Result;
use crate::limits::in_range;
use crate::progress::progress;
use crate::scenes::{SET, SetScene};
use crate::table::{Table, sig};

/// Scenes of more than this many triangles are left out by `--no-large` (`million`).
pub const LARGE_TRIANGLES: usize = 500_000;

/// Largest `--width`, `--height` and `--small-size`.
pub const MAX_SIDE: u32 = 16384;

/// Most rays of `--cpu-rays`.
pub const MAX_CPU_RAYS: u32 = 1 << 24;

/// How far the GPU's hit distances may be from the CPU's in a scene whose secondary rays
/// leave surfaces `eps` off ([`Prepared::eps`]): 1e-4 relative (the kd-tree crate's GPU
/// tests), or up to `eps` (at least 1e-6) absolute. A short ray meeting a large triangle
/// computes its `t` from coordinates far larger than `t`, where fused and unfused arithmetic
/// differ by an ulp of the coordinates (open-ground's 200-wide ground on an H100: t 0.083862
/// against 0.083874); a difference below the ray offset is below what the renderers resolve.
/// [`Hits`] allows a triangle to differ only on such a tie, and one ray in a thousand to
/// graze an edge differently.
fn hit_tolerance(eps: f32) -> Tolerance {
    Tolerance::within(f64::from(eps).max(1e-6), 1e-4)
}

/// The flags of the incoherent tables.
#[derive(Args, Clone, Debug)]
pub struct IncoherentArgs {
    /// Incoherent tables: scenes of the set to run, comma-separated (default: all of
    /// `lumbre scenes`).
    #[arg(long = "set", value_name = "NAME", value_delimiter = ',')]
    pub set: Vec<String>,
    /// Incoherent tables: leave out the scenes of more than 500,000 triangles (`million`).
    #[arg(long)]
    pub no_large: bool,
    /// Incoherent tables: width of the image of primary rays (one per pixel) and of the large
    /// path-traced frame.
    #[arg(long, default_value_t = 1920)]
    pub width: u32,
    /// Incoherent tables: height of the image of primary rays and of the large frame.
    #[arg(long, default_value_t = 1080)]
    pub height: u32,
    /// Side of the small (square) path-traced frame.
    #[arg(long, default_value_t = 256)]
    pub small_size: u32,
    /// Samples per pixel of the small path-traced frame (0 leaves it out).
    #[arg(long, default_value_t = 256)]
    pub small_spp: u32,
    /// Samples per pixel of the large path-traced frame, --width x --height (0 leaves it out).
    #[arg(long, default_value_t = 16)]
    pub large_spp: u32,
    /// Rays the CPU traces, primary and bounce each: evenly spaced over the image's rays.
    /// The GPU's bounce hits are checked against the CPU's on these.
    #[arg(long, default_value_t = 1 << 18)]
    pub cpu_rays: u32,
    /// Incoherent tables: unmeasured GPU ray batches before the timed ones.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Incoherent tables: timed GPU ray batches (the median is reported).
    #[arg(long, default_value_t = 15)]
    pub repeats: usize,
    /// Path-traced frames: the GPU schedules to time, comma-separated (a row each).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "megakernel")]
    pub schedules: Vec<ScheduleChoice>,
    /// Timed path-traced frames per size (the median is reported), after one unmeasured.
    #[arg(long, default_value_t = 3)]
    pub path_repeats: usize,
    /// Seed of the bounce directions' generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    /// Incoherent tables: write into this existing folder, per scene, the triangles, the
    /// primary and bounce rays the CPU traced, its hit distances and its rays/s (raw
    /// little-endian f32 files named by `rays.json`), for a peer such as
    /// `benches/peers/embree_rays.py` to trace the same rays. Written after the scene's timings.
    #[arg(long, value_name = "DIR")]
    pub export_rays: Option<PathBuf>,
}

impl IncoherentArgs {
    /// Every check that needs no backend: each count in its range, each scene in the set.
    pub fn check(&self) -> Result<()> {
        in_range("--width", self.width, 1, MAX_SIDE)?;
        in_range("--height", self.height, 1, MAX_SIDE)?;
        in_range("--small-size", self.small_size, 1, MAX_SIDE)?;
        in_range("--small-spp", self.small_spp, 0, MAX_SPP)?;
        in_range("--large-spp", self.large_spp, 0, MAX_SPP)?;
        in_range("--cpu-rays", self.cpu_rays, 1, MAX_CPU_RAYS)?;
        super::Effort::new(self.warmup, self.repeats)?;
        super::count("--path-repeats", self.path_repeats, 1, super::MAX_RUNS)?;
        if let Some(dir) = &self.export_rays {
            export::check_folder(dir)?;
        }
        self.scenes()?;
        Ok(())
    }

    /// The checks that depend on the backend: the frames' memory, and on a GPU the rays in
    /// its largest buffer (two `vec4<f32>` each).
    pub fn check_on(&self, backend: &Backend) -> Result<()> {
        if backend.gpu().is_none() && self.schedules.iter().any(|s| *s != ScheduleChoice::Megakernel) {
            return Err(
                "--schedules: the CPU traces each path alone; the wavefront schedules need --backend gpu".into()
            );
        }
        let available = crate::limits::available_memory();
        crate::limits::check_image(self.width, self.height, backend, available)?;
        if self.small_spp > 0 {
            crate::limits::check_image(self.small_size, self.small_size, backend, available)
                .map_err(|e| format!("--small-size {}: {e}", self.small_size))?;
        }
        if let Some(gpu) = backend.gpu() {
            let l = gpu.limits();
            let largest = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
            let rays = u64::from(self.width) * u64::from(self.height);
            if rays * 32 > largest {
                return Err(format!(
                    "--width {} --height {}: {rays} rays; {} holds at most {} in one buffer (32 bytes each in its \
                     largest storage buffer of {}): lower --width or --height",
                    self.width,
                    self.height,
                    gpu.adapter_name(),
                    largest / 32,
                    crate::limits::human(largest)
                )
                .into());
            }
        }
        Ok(())
    }

    /// The scenes of `--set` (all when none), in the set's order.
    fn scenes(&self) -> Result<Vec<&'static SetScene>> {
        for name in &self.set {
            crate::scenes::find(name).map_err(|e| format!("--set: {e}"))?;
        }
        Ok(SET.iter().filter(|s| self.set.is_empty() || self.set.iter().any(|n| n == s.name)).collect())
    }
}

/// A schedule of the path tracer (`--schedules`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleChoice {
    /// One kernel per batch of samples.
    Megakernel,
    /// The wavefront of a million paths in flight.
    Wavefront,
    /// The wavefront with its rays sorted by origin and direction before each trace.
    Reorder,
}

impl ScheduleChoice {
    fn schedule(self) -> PathSchedule {
        match self {
            ScheduleChoice::Megakernel => PathSchedule::Megakernel,
            ScheduleChoice::Wavefront => PathSchedule::wavefront(),
            ScheduleChoice::Reorder => PathSchedule::Wavefront { pool: PathSchedule::POOL, reorder: true },
        }
    }
}

/// One scene's rays: counts and rates.
struct RayRow {
    primary: usize,
    bounce: usize,
    /// GPU seconds (median) of the primary and the bounce rays.
    gpu: Option<(Duration, Duration)>,
    cpu_rays: usize,
    /// The `cpu_rays` primary and `cpu_rays` bounce rays the CPU traced, its hits and times.
    cpu: [export::Traced; 2],
    /// `None` when the GPU's bounce hits agree with the CPU's, else what differs.
    disagreement: Option<String>,
}

/// The two incoherent tables (rays, path-traced frames) on `backend`.
pub fn tables(backend: &Backend, args: &IncoherentArgs, structure: &Structure) -> Result<Vec<Table>> {
    args.check_on(backend)?;
    let gpu = backend.gpu();
    let (w, h) = (args.width, args.height);
    let mut rays = Table::new(
        format!(
            "Incoherent rays: one diffuse bounce per primary hit, {w}x{h} primary rays, closest hit, {}",
            structure.name()
        ),
        &[
            "scene",
            "triangles",
            "primary rays",
            "bounce rays",
            "GPU primary Grays/s",
            "GPU bounce Grays/s",
            "bounce/primary",
            "CPU rays",
            "CPU primary Mrays/s",
            "CPU bounce Mrays/s",
            "GPU/CPU bounce",
            "GPU = CPU",
        ],
    );
    let mut frames = Table::new(
        format!(
            "Path-traced frames: the path tracer's defaults (every bounce), {}, on {}",
            structure.name(),
            backend.describe()
        ),
        &[
            "scene",
            "triangles",
            "frame",
            "spp",
            "schedule",
            "Mpaths",
            "GPU ms",
            "wall ms",
            "Mpaths/s",
            "Grays/s",
            "mean path length",
        ],
    );
    let busy = gpu.map(KeepBusy::new).transpose()?;
    let mut export = args.export_rays.as_deref().map(export::Export::new).transpose()?;
    let scenes = args.scenes()?;
    let mut skipped = Vec::new();
    let bar = progress(scenes.len() as u64, "incoherent");
    for entry in scenes {
        let (scene, _) = (entry.build)().map_err(|e| format!("{}{}: {e}", crate::scenes::PREFIX, entry.name))?;
        if args.no_large && scene.triangles.len() > LARGE_TRIANGLES {
            skipped.push(format!("{} ({} triangles)", entry.name, scene.triangles.len()));
            bar.inc(1);
            continue;
        }
        let camera = Camera::parse(entry.camera)?;
        let prepared = Prepared::new(scene, &structure.options());
        let tris = prepared.tris.len().to_string();
        let r = ray_row(gpu.zip(busy.as_ref()), &prepared, &camera, args)?;
        let rate = |n: usize, d: Duration, unit: f64| sig(n as f64 / d.as_secs_f64().max(1e-12) / unit);
        let (gp, gb, ratio) = match r.gpu {
            Some((p, b)) => {
                let ratio = (r.bounce as f64 / b.as_secs_f64()) / (r.primary as f64 / p.as_secs_f64());
                (rate(r.primary, p, 1e9), rate(r.bounce, b, 1e9), sig(ratio))
            }
            None => ("-".into(), "-".into(), "-".into()),
        };
        let vs_cpu = r.gpu.map_or("-".into(), |(_, b)| {
            sig((r.bounce as f64 / b.as_secs_f64()) / (r.cpu_rays as f64 / r.cpu[1].time.as_secs_f64().max(1e-12)))
        });
        let agree = match (&r.disagreement, r.gpu) {
            (_, None) => "-".to_string(),
            (None, Some(_)) => "yes".to_string(),
            (Some(d), Some(_)) => {
                rays.note(format!("{}: the GPU's bounce hits differ from the CPU's: {d}", entry.name));
                "NO".to_string()
            }
        };
        rays.row(vec![
            entry.name.to_string(),
            tris.clone(),
            r.primary.to_string(),
            r.bounce.to_string(),
            gp,
            gb,
            ratio,
            r.cpu_rays.to_string(),
            rate(r.cpu_rays, r.cpu[0].time, 1e6),
            rate(r.cpu_rays, r.cpu[1].time, 1e6),
            vs_cpu,
            agree,
        ]);
        let sizes = [(args.small_size, args.small_size, args.small_spp), (w, h, args.large_spp)];
        for (fw, fh, spp) in sizes.into_iter().filter(|s| s.2 > 0) {
            for choice in &args.schedules {
                let schedule = choice.schedule();
                let options = PathOptions { width: fw, height: fh, spp, schedule, ..Default::default() };
                let f = frame(gpu.zip(busy.as_ref()), &prepared, &PathRender { camera, options }, args.path_repeats)?;
                let paths = fw as f64 * fh as f64 * spp as f64;
                let time = f.gpu.unwrap_or(f.wall).as_secs_f64().max(1e-12);
                let ms = |d: Duration| sig(d.as_secs_f64() * 1e3);
                frames.row(vec![
                    entry.name.to_string(),
                    tris.clone(),
                    format!("{fw}x{fh}"),
                    spp.to_string(),
                    schedule_name(schedule),
                    sig(paths / 1e6),
                    f.gpu.map_or("-".into(), ms),
                    ms(f.wall),
                    sig(paths / time / 1e6),
                    sig(f.rays / time / 1e9),
                    sig(f.rays_extension / paths),
                ]);
                if schedule != PathSchedule::Megakernel && f.stages.len() > 2 {
                    // The GPU passes' shares of the GPU time (the report's last stage is the
                    // host's download).
                    let passes: Vec<_> = f.stages.iter().filter(|(s, _)| s != "download").collect();
                    let all: f64 = passes.iter().map(|(_, d)| d.as_secs_f64()).sum();
                    let shares: Vec<String> = passes
                        .iter()
                        .map(|(s, d)| format!("{s} {:.0}%", 100.0 * d.as_secs_f64() / all.max(1e-12)))
                        .collect();
                    frames.note(format!(
                        "{} {fw}x{fh} {}, GPU time by stage: {}",
                        entry.name,
                        schedule_name(schedule),
                        shares.join(", ")
                    ));
                }
            }
        }
        if let Some(export) = &mut export {
            let kinds = [("primary", &r.cpu[0]), ("bounce", &r.cpu[1])];
            export.scene(entry.name, &prepared.tris, prepared.eps, &kinds)?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(export) = export {
        let made = format!(
            "\"width\": {w}, \"height\": {h}, \"seed\": {}, \"cpu_rays\": {}, \"structure\": \"{}\"",
            args.seed,
            args.cpu_rays,
            structure.name()
        );
        export.finish(&made, CPU_PASSES)?;
    }
    let clock = gpu.map_or("-", |g| {
        if g.has(lumbre_gpu::wgpu::Features::TIMESTAMP_QUERY) { "timestamp queries" } else { "wall clock" }
    });
    rays.note(format!(
        "primary rays: one through each pixel's centre from the scene's reference camera; bounce rays: from each \
         primary hit one ray in a cosine-distributed direction about the shading normal (turned to the ray's \
         side), leaving from the hit lifted by the scene's ray offset along the geometric normal, as the path \
         tracer does (misses, and directions below the geometric surface, where the path tracer ends the path, \
         make no bounce ray); generator seed {}",
        args.seed
    ));
    if let Some(g) = gpu {
        rays.note(format!(
            "GPU: {}; closest hit ({:?} traversal, {:?} test) of all the rays in one dispatch, median GPU time of \
             {} after {} warm-up ({clock}, the GPU kept busy between runs); Grays/s = rays / GPU seconds; \
             bounce/primary = bounce rate over primary rate",
            g.adapter_name(),
            QueryOptions::default().traversal,
            QueryOptions::default().test,
            args.repeats,
            args.warmup
        ));
    }
    rays.note(format!(
        "CPU: {} threads; \"CPU rays\" primary and as many bounce rays, spread evenly over the image's, the \
         median of {CPU_PASSES} passes; Mrays/s = rays / wall seconds{}",
        rayon::current_num_threads(),
        if gpu.is_some() {
            "; GPU/CPU bounce = GPU bounce rate over CPU bounce rate; GPU = CPU: the GPU's hits of those bounce rays \
             against the CPU's (t within 1e-4 relative or the scene's ray offset, a tie's triangle may differ, one \
             ray in 1000 may graze an edge differently)"
        } else {
            ""
        }
    ));
    let timing = match gpu {
        Some(_) => format!(
            "GPU ms: the frame's GPU time ({clock}), median of {} after one warm-up, the GPU kept busy between \
             frames; wall ms: submit to image on the host, median of as many frames back to back; Mpaths/s = \
             paths / GPU seconds",
            args.path_repeats
        ),
        None => format!("wall ms: the CPU render, median of {}; Mpaths/s = paths / wall seconds", args.path_repeats),
    };
    frames.note(format!(
        "a frame: every sample of every pixel, every bounce (at most 64, Russian roulette from bounce 3), \
         next-event estimation; Mpaths = pixels x spp / 1e6; {timing}; Grays/s = extension and shadow rays / the \
         same seconds; mean path length: extension rays per path"
    ));
    if !skipped.is_empty() {
        let skipped = skipped.join(", ");
        rays.note(format!("--no-large left out {skipped}"));
        frames.note(format!("--no-large left out {skipped}"));
    }
    Ok(vec![rays, frames])
}

/// Traces `rays` by closest hit on the GPU: the hits, and the median GPU time of
/// `args.repeats` dispatches after `args.warmup`, each behind [`BUSY_SPAN`] of `busy` work.
fn gpu_trace(
    (gpu, busy): (&Gpu, &KeepBusy),
    structure: &GpuStructure,
    rays: &[Ray],
    args: &IncoherentArgs,
) -> Result<(Vec<Option<Hit>>, Duration)> {
    if rays.is_empty() {
        return Ok((Vec::new(), Duration::ZERO));
    }
    let data: Vec<[f32; 4]> =
        rays.iter().flat_map(|r| [r.origin.extend(0.0).to_array(), r.dir.extend(f32::INFINITY).to_array()]).collect();
    let buffer = gpu.upload(&data)?;
    let hits = gpu.zeroed::<[u32; 4]>(rays.len())?;
    let time = median_time(args.warmup, args.repeats, || {
        busy.queue(gpu, BUSY_SPAN)?;
        let mut rec = gpu.recorder();
        match structure {
            GpuStructure::KdTree(tree) => RayQuery::default().record_into(&mut rec, tree, &buffer, &hits)?,
            GpuStructure::Bvh(bvh) => BvhQuery::default().record_into(&mut rec, bvh, &buffer, &hits)?,
        }
        Ok(rec.submit()?.gpu())
    })?;
    Ok((RayQuery::default().download(gpu, &hits)?.0, time))
}

/// The closest hits of `rays` through the prepared scene's structure, in parallel.
fn closest_hits(p: &Prepared, rays: &[Ray]) -> Vec<Option<Hit>> {
    rays.par_iter().with_min_len(64).map(|r| p.closest_hit(r, f32::INFINITY, &QueryOptions::default())).collect()
}

/// Passes of the CPU over its rays; the median's wall time is reported (one pass of a few
/// milliseconds varied by half between runs on 16 cores).
const CPU_PASSES: usize = 3;

/// The closest hits of `rays` on the CPU, and the median wall time of [`CPU_PASSES`] passes
/// (the structure is built beforehand: its build is not timed).
fn cpu_trace(p: &Prepared, rays: Vec<Ray>) -> export::Traced {
    let mut hits = Vec::new();
    let mut times = Vec::new();
    for _ in 0..CPU_PASSES {
        let start = Instant::now();
        hits = closest_hits(p, &rays);
        times.push(start.elapsed());
    }
    export::Traced { rays, hits, time: super::median(times) }
}

/// The primary and bounce rays of one scene, traced on the GPU (when given) and on the CPU.
fn ray_row(gpu: Option<(&Gpu, &KeepBusy)>, p: &Prepared, camera: &Camera, args: &IncoherentArgs) -> Result<RayRow> {
    let primary = primary_rays(camera, args.width, args.height);
    let on_gpu = gpu.map(|(g, _)| GpuStructure::upload(g, &p.structure, &p.tris)).transpose()?;
    // The primary hits: from the GPU's timed trace, else (untimed) from the CPU.
    let (primary_hits, primary_time) = match (gpu, &on_gpu) {
        (Some(g), Some(tree)) => {
            let (hits, t) = gpu_trace(g, tree, &primary, args)?;
            (hits, Some(t))
        }
        _ => (closest_hits(p, &primary), None),
    };
    let bounce = bounce_rays(p, &primary, &primary_hits, args.seed);
    let bounce_gpu = match (gpu, &on_gpu) {
        (Some(g), Some(tree)) => Some(gpu_trace(g, tree, &bounce, args)?),
        _ => None,
    };
    // The CPU on evenly spaced subsamples of both sets of rays.
    let pick = |rays: &[Ray]| -> (Vec<usize>, Vec<Ray>) {
        let idx = spread(rays.len(), args.cpu_rays as usize);
        let picked = idx.iter().map(|&i| rays[i]).collect();
        (idx, picked)
    };
    let (_, mut primary_sample) = pick(&primary);
    let (bounce_idx, mut bounce_sample) = pick(&bounce);
    let cpu_rays = primary_sample.len().min(bounce_sample.len());
    primary_sample.truncate(cpu_rays);
    bounce_sample.truncate(cpu_rays);
    let cpu_primary = cpu_trace(p, primary_sample);
    let cpu_bounce = cpu_trace(p, bounce_sample);
    let disagreement = bounce_gpu.as_ref().and_then(|(gpu_hits, _)| {
        let theirs = Hits(bounce_idx[..cpu_rays].iter().map(|&i| gpu_hits[i]).collect());
        Hits(cpu_bounce.hits.clone()).disagreement(&theirs, hit_tolerance(p.eps))
    });
    Ok(RayRow {
        primary: primary.len(),
        bounce: bounce.len(),
        gpu: primary_time.zip(bounce_gpu.map(|(_, t)| t)),
        cpu_rays,
        cpu: [cpu_primary, cpu_bounce],
        disagreement,
    })
}

/// One path-traced frame's figures.
struct Frame {
    /// Median GPU time (GPU backend).
    gpu: Option<Duration>,
    /// Median wall time.
    wall: Duration,
    /// Extension and shadow rays of one frame.
    rays: f64,
    /// Extension rays of one frame.
    rays_extension: f64,
    /// The last frame's stages and their times.
    stages: Vec<(String, Duration)>,
}

/// `render` of `p` on the GPU (`repeats` frames timed behind `busy` work after one warm-up,
/// then `repeats` back to back for the wall time) or on the CPU (`repeats` frames).
fn frame(gpu: Option<(&Gpu, &KeepBusy)>, p: &Prepared, render: &PathRender, repeats: usize) -> Result<Frame> {
    let mut gpu_times = Vec::new();
    let mut walls = Vec::new();
    let mut last = lumbre_gpu::Report::default();
    match gpu {
        Some((g, busy)) => {
            let scene = render.upload(g, p)?;
            render.gpu_reported(g, &scene)?; // warm-up
            for _ in 0..repeats {
                busy.queue(g, BUSY_SPAN)?;
                let (_, report) = render.gpu_reported(g, &scene)?;
                gpu_times.push(report.gpu.unwrap_or_default());
                last = report;
            }
            for _ in 0..repeats {
                let start = Instant::now();
                render.gpu_reported(g, &scene)?;
                walls.push(start.elapsed());
            }
        }
        None => {
            for _ in 0..repeats {
                let start = Instant::now();
                let (_, report) = render.cpu_reported(p, &())?;
                walls.push(start.elapsed());
                last = report;
            }
        }
    }
    Ok(Frame {
        gpu: gpu.map(|_| super::median(gpu_times)),
        wall: super::median(walls),
        rays: last.get("rays").unwrap_or(0.0),
        rays_extension: last.get("extension rays").unwrap_or(0.0),
        stages: last.stages,
    })
}

#[cfg(test)]
mod tests {
    use glam::Vec3;
    use lumbre_raytrace::twin::ray_offset;

    use super::*;

    #[test]
    fn hit_distances_agree_within_the_ray_offset() {
        let hits = |t: f32| Hits(vec![Some(Hit { t, tri: 0, u: 0.25, v: 0.5 })]);
        // open-ground's bounds: the pair an H100 gave on its 200-wide ground agrees.
        let ground = hit_tolerance(ray_offset((Vec3::new(-100.0, 0.0, -100.0), Vec3::new(100.0, 4.0, 100.0))));
        assert!(hits(0.083_862_24).disagreement(&hits(0.083_874_2), ground).is_none());
        assert!(hits(0.083_862_24).disagreement(&hits(0.2), ground).is_some());
        // In the Cornell box (about 2 wide) the offset is 100 times tighter.
        let cornell = hit_tolerance(ray_offset((Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 2.0, 1.0))));
        assert!(hits(0.5).disagreement(&hits(0.5001), cornell).is_none());
        assert!(hits(0.5).disagreement(&hits(0.502), cornell).is_some());
    }
}
