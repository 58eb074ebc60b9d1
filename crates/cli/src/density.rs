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
use lumbre_density::{Bounces, CameraDensity, PhotonOptions, PhotonRange, PhotonTracer};
use lumbre_gpu::{Backend, Compute, Progress, Report};
use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared, SampleSums};

use crate::backend::{BackendArgs, BackendChoice, OnBackend};
use crate::density_part::DensityPart;
use crate::error::Result;
use crate::gpus::GpuList;
use crate::limits::{available_memory, human, in_range};
use crate::out::out;
use crate::progress::{bar_progress, progress};
use crate::shard::{Shard, ShardSpec};
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
    #[command(flatten)]
    structure: crate::view::Structure,
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
    /// Trace the I-th (from 0) of N parts of the photons and of the direct light's samples
    /// and write a partial result (`-o NAME.lpart`) for `lumbre merge`; `auto/N` reads I from
    /// JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID. One pass, without --k.
    #[arg(long, value_name = "I/N")]
    shard: Option<ShardSpec>,
    /// Spread the photons and direct-light samples over these GPUs (`all`, a count N, or
    /// adapter indices #I or I,J as `lumbre info` lists them), four chunks a GPU taken as each frees up; the
    /// image is the same bits as on one of them. One pass, without --k.
    #[arg(long, value_name = "all|N|#I|I,J")]
    gpus: Option<GpuList>,
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
    /// The part of the photons and of the direct light's samples to run (one pass, no `k`).
    pub shard: Option<Shard>,
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
    /// A one-pass run's sums, in the form parts merge in.
    pub part: Option<DensityPart>,
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
    // The photons of a shard: its part of the run's photon indices.
    let range = o.shard.and_then(|s| PhotonRange::part(s.index, s.count, o.photons).ok());
    PhotonOptions { photons: o.photons, seed: o.seed, bounces, range, ..Default::default() }
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
    // Direct light by the path tracer (one bounce: emission and next-event estimation), its
    // samples summed in fixed point so that shards add up; a shard renders its part of them.
    let mut direct_time = Duration::ZERO;
    let has_direct = !(o.irradiance || o.indirect_only);
    let direct = if !has_direct {
        None
    } else {
        let spp = o.spp.max(1);
        let samples = o.shard.map_or(0..spp, |s| s.range(spp));
        let options = PathOptions {
            width,
            height,
            spp: samples.len() as u32,
            first_sample: samples.start,
            max_bounces: 1,
            ..Default::default()
        };
        let render = PathRender { camera, options };
        if samples.is_empty() {
            let scale = SampleSums::scale_log2_for(&prepared.scene, options.background);
            Some(SampleSums::new(width, height, samples.start, scale))
        } else {
            let t = Instant::now();
            let placed = backend.place(&render, prepared)?;
            let (sums, r) = render.sums_placed(&placed, &())?;
            direct_time = time_of(&r, t.elapsed());
            report.merge(r);
            Some(sums)
        }
    };
    let (image, part) = match out.sums.clone() {
        Some(sums) => {
            let disks = &out.disks;
            let mut radius = vec![0.0; (width * height) as usize];
            let mut kd = vec![Vec3::ZERO; (width * height) as usize];
            for (pixel, &d) in disks.pixel_disk.iter().enumerate() {
                if d != lumbre_density::NO_DISK {
                    radius[pixel] = disks.disks[d as usize].radius;
                    kd[pixel] = prepared.scene.materials[disks.material[d as usize] as usize].kd;
                }
            }
            let part = DensityPart { width, height, radius, kd, sums, direct, irradiance: o.irradiance, unit: 1.0 };
            // A shard's image is of its photons and samples only: parts are merged first.
            let image = if o.shard.is_some() { Image::new(width, height) } else { part.compose()? };
            (image, Some(part))
        }
        None => (progressive_image(prepared, &out, direct.as_ref(), width, height, o.irradiance)?, None),
    };
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
        if has_direct { format!(", direct light {:.1} ms", ms(direct_time)) } else { String::new() },
        if backend.gpu().is_some() { "GPU" } else { "CPU" },
        ms(gpu_time),
        ms(wall),
    );
    if let (Some(gpu), Some(before)) = (backend.gpu(), moved) {
        summary += &format!("; transfers {}", gpu.transfers() - before);
    }
    Ok(Estimated { image, part, report, summary })
}

/// The image of a progressive run (its disks' radii change between passes, so it does not
/// merge): direct light plus each disk's estimate, by the rule of [`DensityPart::compose`].
fn progressive_image(
    prepared: &Prepared,
    out: &lumbre_density::CameraEstimate,
    direct: Option<&SampleSums>,
    width: u32,
    height: u32,
    irradiance_only: bool,
) -> Result<Image> {
    let direct = direct.map(|d| d.mean()).transpose()?;
    let irradiance = out.per_pixel();
    let disks = &out.disks;
    let mut image = Image::new(width, height);
    for (pixel, &d) in disks.pixel_disk.iter().enumerate() {
        let (x, y) = (pixel as u32 % width, pixel as u32 / width);
        let mut value = direct.as_ref().map_or(Vec3::ZERO, |img| img.get(x, y));
        if d != lumbre_density::NO_DISK {
            let e = irradiance[pixel];
            value += if irradiance_only {
                e
            } else {
                let kd = prepared.scene.materials[disks.material[d as usize] as usize].kd;
                kd / std::f32::consts::PI * e
            };
        }
        image.set(x, y, value);
    }
    Ok(image)
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
    let options = PhotonOptions { photons: PILOT_PHOTONS.min(o.photons), range: None, ..photon_options(o) };
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

impl DensityArgs {
    /// The run (or its shard) spread over the `--gpus` devices, then written as the image or
    /// the shard's part.
    #[allow(clippy::too_many_arguments)]
    fn spread(
        &self,
        list: &GpuList,
        backend: &Backend,
        prepared: &Prepared,
        camera: Camera,
        options: &DensityOptions,
        unit: f32,
        out: &std::path::Path,
        load: Duration,
    ) -> Result<()> {
        let devices = list.open(backend)?;
        let t = Instant::now();
        let size = (self.view.width, self.view.height);
        let (mut part, shares) = crate::spread::spread_density(&devices, prepared, camera, size, options)?;
        part.unit = unit;
        match options.shard {
            Some(shard) => {
                let description = self.run_description(&camera, options, backend)?;
                part.to_part(shard, &description, options.spp).save(out)?;
            }
            None => part.compose()?.save(out)?,
        }
        let wall = t.elapsed();
        let slowest = shares.iter().map(|s| s.render).max().unwrap_or_default();
        out!(
            "{}: {} triangles, load and kd-tree {:.1} ms; {} photons and {} direct-light samples per pixel on {} devices: \
             {:.1} ms on the slowest device, wall {:.1} ms -> {}",
            self.scene.display(),
            prepared.tris.len(),
            load.as_secs_f64() * 1e3,
            part.sums.traced,
            part.direct.as_ref().map_or(0, |d| d.samples),
            devices.len(),
            slowest.as_secs_f64() * 1e3,
            wall.as_secs_f64() * 1e3,
            out.display()
        )?;
        for s in &shares {
            out!("  {}: {} photon chunks in {:.1} ms", s.name, s.done, s.render.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }

    /// What decides a density run's bits except the shard: the run hash of its parts.
    fn run_description(&self, camera: &Camera, o: &DensityOptions, backend: &Backend) -> Result<String> {
        let scene = crate::part::scene_id(&self.scene)?;
        Ok(format!(
            "density {scene} camera {camera:?} {}x{} photons {} radius {:08x} irradiance {} indirect {} spp {} seed {} {} backend {}",
            self.view.width,
            self.view.height,
            o.photons,
            o.radius.to_bits(),
            o.irradiance,
            o.indirect_only,
            o.spp,
            o.seed,
            self.structure.name(),
            backend.name()
        ))
    }
}

impl OnBackend for DensityArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        self.structure.check()?;
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
        if self.gpus.is_some() && self.view.backend.backend != BackendChoice::Gpu {
            return Err("--gpus needs --backend gpu".into());
        }
        let split = match (self.shard, &self.gpus) {
            (Some(spec), _) => Some(format!("--shard {}", spec.resolve_env()?)),
            (None, Some(_)) => Some("--gpus".to_string()),
            (None, None) => None,
        };
        if let Some(split) = &split
            && (self.passes > 1 || self.k.is_some())
        {
            let flag = if self.k.is_some() { "--k" } else { "--passes" };
            return Err(format!(
                "{split} with {flag}: the disks' radii then depend on every photon; split one pass without --k"
            )
            .into());
        }
        self.view.check_sharded(OUT, self.shard.is_some())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let shard = self.shard.map(|s| s.resolve_env()).transpose()?;
        let out = self.view.out_sharded(OUT, backend, shard.is_some())?;
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
            shard,
        };
        let (width, height) = (self.view.width, self.view.height);
        let t = Instant::now();
        let (mut scene, camera) =
            crate::render::load_scene(&self.scene, self.view.camera.as_deref(), self.view.aspect())?;
        // Traced with the emission normalised, scaled back in the image: a dim scene's light
        // would underflow in the photons' f32 powers and fixed-point sums.
        let unit = scene.normalize_emission();
        check_radius(self.radius, &scene)?;
        let prepared = Prepared::new(scene, &self.structure.options());
        // Memory is checked for the photons one device traces at once: a shard's, or a chunk's
        // of it with --gpus.
        let devices = match &self.gpus {
            Some(list) => {
                let kinds: Vec<_> = lumbre_gpu::adapters().iter().map(|a| a.device_type).collect();
                list.indices(&kinds)?.len() as u32
            }
            None => 0,
        };
        let parts = shard.map_or(1, |s| s.count) * if devices > 0 { 4 * devices } else { 1 };
        let at_once = DensityOptions { photons: options.photons.div_ceil(parts), shard: None, ..options };
        match backend {
            Backend::Gpu(gpu) => check_gpu_flights(&prepared, &at_once, gpu, crate::lightcuts::is_lavapipe(backend))?,
            Backend::Cpu => check_cpu_flights(&prepared, &at_once)?,
        }
        let load = t.elapsed();
        if let Some(list) = &self.gpus {
            return self.spread(list, backend, &prepared, camera, &options, unit, &out, load);
        }
        let bar = progress(options.photons as u64, "density");
        let mut est = estimate(&prepared, camera, width, height, &options, backend, &bar_progress(&bar))?;
        bar.finish_and_clear();
        match (shard, est.part.as_mut()) {
            (Some(shard), Some(part)) => {
                part.unit = unit;
                let description = self.run_description(&camera, &options, backend)?;
                part.to_part(shard, &description, options.spp).save(&out)?;
            }
            _ => {
                est.image.pixels.iter_mut().for_each(|p| *p *= unit);
                est.image.save(&out)?;
            }
        }
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
