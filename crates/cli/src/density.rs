//! `lumbre density`: a scene rendered by ray-based density estimation. Photons leave
//! the emitters (their indirect flights, or all of them), one disk sits at each pixel's
//! first hit, and the irradiance of every disk is estimated from the flights crossing it.
//! The image is direct light by the path tracer's next-event estimation (one bounce) plus
//! `Kd / pi` times the estimated indirect irradiance; or, with `--irradiance`, the
//! irradiance itself.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use glam::Vec3;
use lumbre_density::{Bounces, CameraDensity, PhotonOptions, PhotonTracer};
use lumbre_gpu::{Backend, Compute, Progress, Report};
use lumbre_kdtree::BuildOptions;
use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared};

use crate::backend::{BackendArgs, OnBackend};
use crate::error::Result;
use crate::limits::{available_memory, human, in_range};
use crate::out::out;
use crate::progress::{bar_progress, progress};
use crate::view::View;

/// Render a scene by ray-based density estimation: photon flights crossing a disk at
/// each pixel's first hit give its irradiance; the image is direct light (the path
/// tracer's next-event estimation) plus Kd / pi times the estimated indirect irradiance.
#[derive(Args)]
pub struct DensityArgs {
    /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`);
    /// it needs an emitter (Ke > 0).
    scene: PathBuf,
    #[command(flatten)]
    view: View,
    /// Photons leaving the emitters; default 1e7 on the GPU (with the default --spp, mean
    /// relative error against the path tracer's 256x256 references: 2.1% on set:cornell,
    /// 4.0% on set:bunny-room, 3.2% on set:two-lights, 2.4% on set:open-ground; H200),
    /// 1e6 on the CPU.
    #[arg(long)]
    photons: Option<u32>,
    /// Disk radius (scene units); with --k, the largest radius. At least 1e-6 and at most 1
    /// times the scene's diagonal.
    #[arg(long, default_value_t = 0.05)]
    radius: f32,
    /// Radius from the k-th nearest photon hit, clamped to [radius / 16, radius]; 1..=4096.
    #[arg(long)]
    k: Option<usize>,
    /// Write the estimated irradiance instead of radiance.
    #[arg(long)]
    irradiance: bool,
    /// Leave direct light out: indirect light only.
    #[arg(long)]
    indirect_only: bool,
    /// Samples per pixel of the direct light, 1..=16777216; default 256 on the GPU, 64 on
    /// the CPU (at 16 the direct light's noise was most of the error).
    #[arg(long)]
    spp: Option<u32>,
    /// Seed of the photons' random numbers.
    #[arg(long, default_value_t = 0)]
    seed: u32,
    /// Progressive passes of --photons new photons each; after each, every disk's radius
    /// shrinks (Hachisuka's progressive photon mapping), so the estimate converges; 1..=1000.
    #[arg(long, default_value_t = 1)]
    passes: u32,
    /// The fraction of a pass's crossings a progressive disk keeps, in (0, 1].
    #[arg(long, default_value_t = 0.7)]
    alpha: f32,
}

/// The image `lumbre density` writes without `-o`.
const OUT: &str = "density.exr";

/// How the estimate is made.
#[derive(Clone, Copy, Debug)]
pub struct DensityOptions {
    /// Photons leaving the emitters.
    pub photons: u32,
    /// Disk radius; with `k`, the largest radius.
    pub radius: f32,
    /// Radius from the k-th nearest photon hit, in `[radius / 16, radius]`.
    pub k: Option<usize>,
    /// Write the irradiance instead of radiance.
    pub irradiance: bool,
    /// Leave the direct light out (radiance: indirect light only; irradiance: of the
    /// indirect flights only).
    pub indirect_only: bool,
    /// Samples per pixel of the direct light.
    pub spp: u32,
    /// Seed of the photons' random numbers (pass `i` uses `seed + i`).
    pub seed: u32,
    /// Passes of `photons` photons; more than one is progressive.
    pub passes: u32,
    /// The fraction of a pass's crossings a progressive disk keeps.
    pub alpha: f32,
}

/// The default photon count: 1e7 on a GPU (about 70 ms on an H100), 1e6 on the CPU.
pub fn default_photons(backend: &Backend) -> u32 {
    match backend {
        Backend::Gpu(_) => 10_000_000,
        Backend::Cpu => 1_000_000,
    }
}

/// The default samples per pixel of the direct light: 256 on a GPU, 64 on the CPU.
pub fn default_spp(backend: &Backend) -> u32 {
    match backend {
        Backend::Gpu(_) => 256,
        Backend::Cpu => 64,
    }
}

/// The image and what it took.
pub struct Estimated {
    pub image: Image,
    /// Every stage's time and statistics: photons, segments, disks, pairs, index, gather.
    pub report: Report,
    /// One line: photons traced, segments, disks, pairs found, the stage times, GPU (or CPU)
    /// time beside wall time, and on the GPU the transfers between host and device.
    pub summary: String,
}

/// The GPU time of a run where the backend reported one, else `wall`.
fn time_of(report: &Report, wall: Duration) -> Duration {
    report.gpu.unwrap_or(wall)
}

/// The photons of these options: the indirect flights, unless the irradiance of all of
/// them is wanted.
fn photon_options(o: &DensityOptions) -> PhotonOptions {
    let bounces = if o.irradiance && !o.indirect_only { Bounces::All } else { Bounces::IndirectOnly };
    PhotonOptions { photons: o.photons, seed: o.seed, bounces, ..Default::default() }
}

/// The library's algorithm for these options.
fn camera_density(camera: Camera, width: u32, height: u32, o: &DensityOptions) -> CameraDensity {
    CameraDensity {
        k: o.k,
        photons: photon_options(o),
        passes: o.passes,
        alpha: o.alpha,
        ..CameraDensity::new(camera, width, height, o.radius)
    }
}

/// Renders `prepared` from `camera` at `width` x `height` by density estimation on
/// `backend`: photons, disks at the camera's first hits and the estimate
/// ([`CameraDensity`]: on the GPU they stay there from the photons to the sums), then the
/// direct light by the path tracer.
pub fn estimate(
    prepared: &Prepared,
    camera: Camera,
    width: u32,
    height: u32,
    o: &DensityOptions,
    backend: &Backend,
    progress: &dyn Progress,
) -> Result<Estimated> {
    if o.photons == 0 {
        return Err("--photons must be at least 1".into());
    }
    if !(o.radius.is_finite() && o.radius > 0.0) {
        return Err(format!("--radius must be positive, got {}", o.radius).into());
    }
    if o.passes == 0 {
        return Err("--passes must be at least 1".into());
    }
    if !(o.alpha > 0.0 && o.alpha <= 1.0) {
        return Err(format!("--alpha must be in (0, 1], got {}", o.alpha).into());
    }
    let started = Instant::now();
    let moved = backend.gpu().map(|g| g.transfers());
    let alg = camera_density(camera, width, height, o);
    let t = Instant::now();
    let placed = backend.place(&alg, prepared)?;
    let upload = t.elapsed();
    let t = Instant::now();
    let (out, mut report) = alg.run_placed(&placed, progress)?;
    let density_wall = t.elapsed();
    let density_time = time_of(&report, density_wall);
    let (trace, disk_time, build, gather) = split(&report);
    let stats = ["photons", "segments", "disks", "pairs found"].map(|s| report.get(s).unwrap_or(0.0));
    // Direct light by the path tracer (one bounce: emission and next-event estimation).
    let mut direct_time = Duration::ZERO;
    let direct = if o.irradiance || o.indirect_only {
        None
    } else {
        let options = PathOptions { width, height, spp: o.spp.max(1), max_bounces: 1, ..Default::default() };
        let render = PathRender { camera, options };
        let t = Instant::now();
        let placed = backend.place(&render, prepared)?;
        let (image, r) = render.run_placed(&placed, &())?;
        direct_time = time_of(&r, t.elapsed());
        report.merge(r);
        Some(image)
    };
    let irradiance = out.per_pixel();
    let disks = &out.disks;
    let mut image = Image::new(width, height);
    for (pixel, &d) in disks.pixel_disk.iter().enumerate() {
        let (x, y) = (pixel as u32 % width, pixel as u32 / width);
        let mut value = direct.as_ref().map_or(Vec3::ZERO, |img| img.get(x, y));
        if d != lumbre_density::NO_DISK {
            let e = irradiance[pixel];
            value += if o.irradiance {
                e
            } else {
                let kd = prepared.scene.materials[disks.material[d as usize] as usize].kd;
                kd / std::f32::consts::PI * e
            };
        }
        image.set(x, y, value);
    }
    let wall = started.elapsed();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let passes =
        if o.passes > 1 { format!(" in {} progressive passes (alpha {})", o.passes, o.alpha) } else { String::new() };
    let gpu_time = density_time + direct_time;
    let mut summary = format!(
        "{} photons traced{passes} ({:.1} ms), {} segments, {} disks ({:.1} ms), {} pairs found; index build {:.2} ms, \
         gather {:.2} ms; density {:.2} ms (wall {:.1} ms, upload {:.1} ms){}; {} {:.1} ms, wall {:.1} ms",
        stats[0],
        ms(trace),
        stats[1],
        stats[2],
        ms(disk_time),
        stats[3],
        ms(build),
        ms(gather),
        ms(density_time),
        ms(density_wall),
        ms(upload),
        if direct.is_some() { format!(", direct light {:.1} ms", ms(direct_time)) } else { String::new() },
        if backend.gpu().is_some() { "GPU" } else { "CPU" },
        ms(gpu_time),
        ms(wall),
    );
    if let (Some(gpu), Some(before)) = (backend.gpu(), moved) {
        summary += &format!("; transfers {}", gpu.transfers() - before);
    }
    Ok(Estimated { image, report, summary })
}

/// Photon tracing, disk, index build and gather times of a density report: the stages
/// named after the gather (`bvh traverse`, `octree leaves`, `brute force`), those of the
/// tracing and of the disks, and the others (but transfers) as the build.
fn split(r: &Report) -> (Duration, Duration, Duration, Duration) {
    let (mut trace, mut disks, mut build, mut gather) = Default::default();
    for (s, d) in &r.stages {
        match s.as_str() {
            "bvh traverse" | "octree leaves" | "brute force" => gather += *d,
            "trace photons" | "photons" => trace += *d,
            "camera disks" | "nearest radii" => disks += *d,
            "download" | "upload" | "prepare" | "progressive" | "camera density" => {}
            _ => build += *d,
        }
    }
    (trace, disks, build, gather)
}

/// Most `--passes`: each pass traces all of `--photons` again and prints its progress.
const MAX_PASSES: u32 = 1000;
/// Most `--k`: the nearest-photon search keeps k hits per disk.
const MAX_K: usize = 4096;
/// `--radius` relative to the scene's diagonal: below the smallest, a disk's area
/// (`pi r^2` in f32) loses its precision and the estimate becomes infinite; above the
/// largest, one disk covers the whole scene.
const RADIUS_RANGE: (f32, f32) = (1e-6, 1.0);
/// Host bytes per photon on the CPU besides its flights, and per kept flight (its geometry,
/// power, index and the gather's lists): 107 bytes a photon measured at 1.43 flights a
/// photon in the Cornell box (peak resident memory from 5e6 to 1e7 photons).
const CPU_BYTES_PER_PHOTON: u64 = 16;
const CPU_BYTES_PER_FLIGHT: u64 = 64;

/// An error naming `--radius` unless it is within [`RADIUS_RANGE`] of the scene's diagonal.
fn check_radius(radius: f32, scene: &lumbre_raytrace::Scene) -> Result<()> {
    let diagonal = (scene.bounds.1 - scene.bounds.0).length();
    let (lo, hi) = (RADIUS_RANGE.0 * diagonal, RADIUS_RANGE.1 * diagonal);
    if diagonal.is_finite() && diagonal > 0.0 && !(lo..=hi).contains(&radius) {
        return Err(format!(
            "--radius {radius:e}: must be {lo:e}..={hi:e} for this scene ({}..={} times its diagonal of {diagonal:e})",
            RADIUS_RANGE.0, RADIUS_RANGE.1
        )
        .into());
    }
    Ok(())
}

/// An error naming `--photons` when, on the CPU, they and the flights they keep (counted by
/// the pilot of [`flights_per_photon`]) cannot fit the host's free memory.
fn check_cpu_flights(prepared: &Prepared, o: &DensityOptions) -> Result<()> {
    let per_photon = flights_per_photon(prepared, o)?;
    let flights = (f64::from(o.photons) * per_photon).ceil() as u64;
    let bytes = u64::from(o.photons) * CPU_BYTES_PER_PHOTON + flights * CPU_BYTES_PER_FLIGHT;
    let available = available_memory();
    if bytes > available {
        return Err(format!(
            "--photons {}: about {} of memory ({flights} flights kept, {per_photon:.2} a photon), more than the {} \
             available: fewer --photons (more --passes give the same light in pieces), or --backend gpu",
            o.photons,
            human(bytes),
            human(available)
        )
        .into());
    }
    Ok(())
}

/// Photons of the pilot that measures the flights kept per photon before a run.
const PILOT_PHOTONS: u32 = 4096;
/// GPU bytes per photon besides its flights: its count, offset, kept count and kept offset.
const GPU_BYTES_PER_PHOTON: u64 = 16;
/// GPU bytes per kept flight: its geometry (32) and power (16).
const GPU_BYTES_PER_FLIGHT: u64 = 48;

/// Flights kept per photon, counted by a pilot of [`PILOT_PHOTONS`] on the CPU, with a fifth
/// more for the noise.
fn flights_per_photon(prepared: &Prepared, o: &DensityOptions) -> Result<f64> {
    let options = PhotonOptions { photons: PILOT_PHOTONS.min(o.photons), ..photon_options(o) };
    let kept = PhotonTracer { options }.cpu(prepared)?.segments.len();
    Ok(kept as f64 / f64::from(options.photons) * 1.2)
}

/// An error naming `--photons` when the flights they keep ([`flights_per_photon`]) cannot
/// fit the GPU's largest buffer (32 bytes of geometry each), or, on lavapipe (whose memory
/// is the host's), the host's free memory.
fn check_gpu_flights(prepared: &Prepared, o: &DensityOptions, gpu: &lumbre_gpu::Gpu, host: bool) -> Result<()> {
    let per_photon = flights_per_photon(prepared, o)?;
    let flights = (f64::from(o.photons) * per_photon).ceil() as u64;
    let refuse = |what: String| {
        format!(
            "--photons {}: about {flights} flights kept ({per_photon:.2} a photon), {what}: fewer --photons (more \
             --passes give the same light in pieces)",
            o.photons
        )
    };
    let largest = gpu.limits().max_buffer_size;
    if 32 * flights > largest {
        return Err(refuse(format!(
            "{} of geometry, more than {}'s largest buffer of {} (at most about {} --photons)",
            human(32 * flights),
            gpu.adapter_name(),
            human(largest),
            (largest as f64 / 32.0 / per_photon.max(1e-9)) as u64
        ))
        .into());
    }
    let bytes = u64::from(o.photons) * GPU_BYTES_PER_PHOTON + flights * GPU_BYTES_PER_FLIGHT;
    let available = available_memory();
    if host && bytes > available {
        return Err(refuse(format!(
            "about {} of {}'s memory (the host's), more than the {} available",
            human(bytes),
            gpu.adapter_name(),
            human(available)
        ))
        .into());
    }
    Ok(())
}

impl OnBackend for DensityArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        in_range("--passes", self.passes, 1, MAX_PASSES)?;
        if let Some(k) = self.k {
            in_range("--k", k, 1, MAX_K)?;
        }
        if let Some(photons) = self.photons {
            in_range("--photons", photons, 1, u32::MAX)?;
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(format!("--radius {:e}: must be a positive number (scene units)", self.radius).into());
        }
        if let Some(spp) = self.spp {
            in_range("--spp", spp, 1, lumbre_raytrace::MAX_SPP)?;
        }
        self.view.check(OUT)
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let out = self.view.out_on(OUT, backend)?;
        let options = DensityOptions {
            photons: self.photons.unwrap_or_else(|| default_photons(backend)),
            radius: self.radius,
            k: self.k,
            irradiance: self.irradiance,
            indirect_only: self.indirect_only,
            spp: self.spp.unwrap_or_else(|| default_spp(backend)),
            seed: self.seed,
            passes: self.passes,
            alpha: self.alpha,
        };
        let (width, height) = (self.view.width, self.view.height);
        let t = Instant::now();
        let (mut scene, camera) =
            crate::render::load_scene(&self.scene, self.view.camera.as_deref(), self.view.aspect())?;
        // Traced with the emission normalised, scaled back in the image: a dim scene's light
        // would underflow in the photons' f32 powers and fixed-point sums.
        let unit = scene.normalize_emission();
        check_radius(self.radius, &scene)?;
        let prepared = Prepared::new(scene, &BuildOptions::default());
        match backend {
            Backend::Gpu(gpu) => check_gpu_flights(&prepared, &options, gpu, crate::lightcuts::is_lavapipe(backend))?,
            Backend::Cpu => check_cpu_flights(&prepared, &options)?,
        }
        let load = t.elapsed();
        let bar = progress(options.photons as u64, "density");
        let mut est = estimate(&prepared, camera, width, height, &options, backend, &bar_progress(&bar))?;
        bar.finish_and_clear();
        est.image.pixels.iter_mut().for_each(|p| *p *= unit);
        est.image.save(&out)?;
        out!(
            "{}: {} triangles on {}, load and kd-tree {:.1} ms; {} -> {}",
            self.scene.display(),
            prepared.tris.len(),
            backend.describe(),
            load.as_secs_f64() * 1e3,
            est.summary,
            out.display()
        )?;
        Ok(())
    }
}
