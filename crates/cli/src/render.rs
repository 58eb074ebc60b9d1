//! `lumbre render`: a scene through the Whitted ray tracer or the path tracer, on either
//! backend. Both render progressively through the same machinery ([`spread`]): batches of
//! samples on one device or several (`--gpus`), their fixed-point sums merged exactly, the
//! progress bar counting samples, the mean written every few seconds and at the end; or one
//! shard's sums (`--shard`) for `lumbre merge`. The image's bits do not depend on the batches,
//! the devices or the shards.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use lumbre_gpu::Backend;
use lumbre_raytrace::{Camera, PathOptions, PathRender, Prepared, RenderOptions, SampleSums, Scene, WhittedRender};

use crate::backend::{BackendArgs, BackendChoice, OnBackend};
use crate::error::Result;
use crate::gpus::GpuList;
use crate::limits::in_range;
use crate::merge::sums_part;
use crate::out::out;
use crate::shard::ShardSpec;
use crate::spread::{SampledRender, Spread, spread};
use crate::view::View;

/// Render a scene with the Whitted ray tracer or the path tracer.
#[derive(Args)]
pub struct RenderArgs {
    /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`).
    scene: PathBuf,
    #[command(flatten)]
    view: View,
    /// whitted (direct light, mirrors, glass) or path (global illumination, progressive).
    #[arg(long, value_enum, default_value_t = Method::Whitted)]
    method: Method,
    /// Samples per pixel, 1..=16777216 (Whitted: stratified; both render in batches).
    #[arg(long, default_value_t = 1)]
    spp: u32,
    /// Whitted: longest chain of reflections and refractions, 1..=12.
    #[arg(long, default_value_t = 5)]
    max_depth: u32,
    /// Path: longest path in bounces, 0..=1024 (1: direct light only, 0: emitters only).
    #[arg(long, default_value_t = PathOptions::default().max_bounces)]
    max_bounces: u32,
    /// Path: Russian roulette from this bounce on (beyond --max-bounces: none).
    #[arg(long, default_value_t = PathOptions::default().rr_depth)]
    rr_depth: u32,
    /// Write the image with the samples so far every this many seconds (> 0).
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    write_every: f64,
    #[command(flatten)]
    structure: crate::view::Structure,
    #[command(flatten)]
    schedule: crate::view::Schedule,
    /// Spread the samples over these GPUs (`all`, a count N, or adapter indices #I or I,J as
    /// `lumbre info` lists them); each takes batches as it frees up. The image is the same,
    /// bit for bit, as on one of them.
    #[arg(long, value_name = "all|N|#I|I,J")]
    gpus: Option<GpuList>,
    /// Render the I-th (from 0) of N parts of the samples and write a partial result
    /// (`-o NAME.lpart`) for `lumbre merge`; `auto/N` reads I from JOB_COMPLETION_INDEX
    /// (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm). Merged, the parts give the bits of one
    /// run.
    #[arg(long, value_name = "I/N")]
    shard: Option<ShardSpec>,
}

/// Longest path `--max-bounces` allows: far beyond any visible contribution, and short
/// enough that a closed box of mirrors without Russian roulette still ends.
const MAX_BOUNCES: u32 = 1024;

/// The image `lumbre render` writes without `-o`.
const OUT: &str = "render.png";

/// The integrator of `lumbre render`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Whitted ray tracing: direct light, mirrors and glass.
    Whitted,
    /// Path tracing: global illumination, the project's reference.
    Path,
}

/// Loads a scene file (OBJ or glTF), reporting dropped input on stderr; the camera is `spec`,
/// else the file's first camera, else one framing the scene, and scenes without lights get
/// the default light.
pub fn load_scene(path: &Path, spec: Option<&str>, aspect: f32) -> Result<(Scene, Camera)> {
    load_scene_counted(path, spec, aspect).map(|(scene, camera, _)| (scene, camera))
}

/// [`load_scene`], also returning the load report's summary (triangles kept and dropped) for
/// the command's own summary line. The one way the CLI loads a scene by argument: `set:NAME`
/// names a scene of the set ([`crate::scenes`]), seen by default from the set's camera.
pub fn load_scene_counted(path: &Path, spec: Option<&str>, aspect: f32) -> Result<(Scene, Camera, String)> {
    if let Some(name) = crate::scenes::set_name(path) {
        let (mut scene, camera, summary) = crate::scenes::load(name, spec)?;
        lumbre_raytrace::add_default_light(&mut scene, &camera);
        return Ok((scene, camera, summary));
    }
    // Rendered near the origin: far from it f32 keeps too few bits for hits and offsets. OBJ
    // positions are moved in f64, before rounding; `--camera` is given in the file's
    // coordinates and moved by the same shift.
    let (mut scene, report, shift) = Scene::load_recentred(path)?;
    if report.dropped() > 0 || !report.warnings.is_empty() {
        eprintln!("warning: {}: {report}", path.display());
    }
    let camera = match spec {
        Some(c) => Camera::parse_moved(c, shift)?,
        None => scene.default_camera(aspect),
    };
    lumbre_raytrace::add_default_light(&mut scene, &camera);
    let summary = format!("{} triangles ({} dropped)", report.triangles, report.dropped());
    Ok((scene, camera, summary))
}

impl OnBackend for RenderArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        in_range("--spp", self.spp, 1, lumbre_raytrace::MAX_SPP)?;
        if self.method == Method::Whitted {
            in_range("--max-depth", self.max_depth, 1, lumbre_raytrace::MAX_TRACE_DEPTH)?;
        } else {
            in_range("--max-bounces", self.max_bounces, 0, MAX_BOUNCES)?;
        }
        if !(self.write_every.is_finite() && self.write_every > 0.0) {
            return Err(format!("--write-every {}: must be a positive number of seconds", self.write_every).into());
        }
        self.structure.check()?;
        self.schedule.check()?;
        if self.method == Method::Whitted && self.schedule.wavefront {
            return Err("--wavefront schedules the path tracer: add --method path".into());
        }
        if self.gpus.is_some() && self.view.backend.backend != BackendChoice::Gpu {
            return Err("--gpus needs --backend gpu".into());
        }
        if let Some(spec) = self.shard {
            let shard = spec.resolve_env()?;
            if shard.count > self.spp {
                return Err(format!("--shard {shard}: more parts than --spp {} samples per pixel", self.spp).into());
            }
        }
        self.view.check_sharded(OUT, self.shard.is_some())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let out = self.view.out_sharded(OUT, backend, self.shard.is_some())?;
        self.schedule.check_on(backend)?;
        let t0 = Instant::now();
        let (scene, camera, loaded) = load_scene_counted(&self.scene, self.view.camera.as_deref(), self.view.aspect())?;
        let load = t0.elapsed();
        let t1 = Instant::now();
        let prepared = Prepared::new(scene, &self.structure.options());
        let build = t1.elapsed();
        let header = format!(
            "{}: {loaded} on {}; load {:.1} ms, build {:.1} ms",
            self.scene.display(),
            backend.describe(),
            load.as_secs_f64() * 1e3,
            build.as_secs_f64() * 1e3,
        );
        match self.method {
            Method::Whitted => self.whitted(&out, backend, &prepared, camera, &header),
            Method::Path => self.path(&out, backend, &prepared, camera, &header),
        }
    }
}

impl RenderArgs {
    /// Whitted's options; the path tracer takes its size and samples from them.
    fn options(&self) -> RenderOptions {
        let (width, height) = (self.view.width, self.view.height);
        RenderOptions { width, height, spp: self.spp, max_depth: self.max_depth, ..Default::default() }
    }

    /// The progressive Whitted render through [`sampled`](RenderArgs::sampled).
    fn whitted(&self, out: &Path, backend: &Backend, prepared: &Prepared, camera: Camera, header: &str) -> Result<()> {
        let o = self.options();
        o.check()?;
        let render = WhittedRender { camera, options: o };
        let description = self.run_description(backend, "whitted", &format!("depth {}", o.max_depth), camera)?;
        let (done, part) = self.sampled(out, backend, prepared, &render, "whitted", &description)?;
        let rays = done.totals.get("rays").unwrap_or(0.0);
        let render_time = done.devices.iter().map(|d| d.render).max().unwrap_or_default();
        out!(
            "{header}, upload {:.1} ms; Whitted: {} samples per pixel{part}, {rays:.0} rays in {:.3} s rendering, \
             {:.3} s in all: {}/s; {} intermediate writes -> {}",
            done.upload.as_secs_f64() * 1e3,
            done.sums.samples,
            render_time.as_secs_f64(),
            done.wall.as_secs_f64(),
            rate(rays, render_time.as_secs_f64(), "rays"),
            done.writes,
            out.display()
        )?;
        self.per_device(&done, "samples")
    }

    /// The progressive path render through [`sampled`](RenderArgs::sampled).
    fn path(&self, out: &Path, backend: &Backend, prepared: &Prepared, camera: Camera, header: &str) -> Result<()> {
        let o = self.options();
        let options = PathOptions {
            width: o.width,
            height: o.height,
            spp: o.spp,
            first_sample: 0,
            max_bounces: self.max_bounces,
            rr_depth: self.rr_depth,
            background: glam::Vec3::ZERO,
            query: o.query,
            schedule: self.schedule.schedule(),
        };
        options.check()?;
        let render = PathRender { camera, options };
        let settings = format!("bounces {} rr {}", options.max_bounces, options.rr_depth);
        let description = self.run_description(backend, "path", &settings, camera)?;
        let (done, part) = self.sampled(out, backend, prepared, &render, "path", &description)?;
        let totals = &done.totals;
        let rays = totals.get("rays").unwrap_or(0.0);
        let paths = totals.get("paths").unwrap_or(0.0);
        let length = totals.get("extension rays").unwrap_or(0.0) / paths.max(1.0);
        let render_time = done.devices.iter().map(|d| d.render).max().unwrap_or_default();
        out!(
            "{header}; path tracing: {} samples per pixel{part}, {paths:.0} paths, {rays:.0} rays (mean path length \
         {length:.3}) in {:.3} s rendering, {:.3} s in all: {}/s; {} intermediate writes -> {}",
            done.sums.samples,
            render_time.as_secs_f64(),
            done.wall.as_secs_f64(),
            rate(rays, render_time.as_secs_f64(), "rays"),
            done.writes,
            out.display()
        )?;
        self.per_device(&done, "paths")
    }

    /// A render's samples in batches over one device or several (`--gpus`), all of them or a
    /// shard's (`--shard`), through [`spread`]: the mean written every `--write-every`
    /// seconds and at the end, or a shard's sums written at the end as a part of kind `kind`.
    /// Returns what the render did and, for a shard, the words saying which part it was.
    fn sampled<R: SampledRender>(
        &self,
        out: &Path,
        backend: &Backend,
        prepared: &Prepared,
        render: &R,
        kind: &str,
        description: &str,
    ) -> Result<(Spread, String)> {
        let spp = self.spp;
        let devices = match &self.gpus {
            Some(list) => list.open(backend)?,
            None => vec![backend.clone()],
        };
        let shard = self.shard.map(|s| s.resolve_env()).transpose()?;
        let samples = shard.map_or(0..spp, |s| s.range(spp));
        let write = |sums: &SampleSums| -> Result<()> {
            if shard.is_none() {
                sums.mean()?.save(out)?;
            }
            Ok(())
        };
        let done = spread(&devices, render, prepared, samples, self.write_every, write)?;
        match shard {
            Some(shard) => sums_part(kind, &done.sums, shard, description, spp).save(out)?,
            None => done.sums.mean()?.save(out)?,
        }
        if done.sums.saturated() > 0 {
            eprintln!(
                "warning: {} pixels' sums saturated (radiance past 2^32 times the scene's brightest)",
                done.sums.saturated()
            );
        }
        let part = shard.map_or(String::new(), |s| format!(" (shard {s}: samples {:?})", s.range(spp)));
        Ok((done, part))
    }

    /// With several devices, a line each: its samples per pixel, its rendering time and its
    /// rate in `unit` (pixel samples: `paths` or `samples`).
    fn per_device(&self, done: &Spread, unit: &str) -> Result<()> {
        if done.devices.len() > 1 {
            for d in &done.devices {
                let n = d.done as f64 * self.view.width as f64 * self.view.height as f64;
                out!(
                    "  {}: {} samples per pixel in {:.3} s rendering: {}/s",
                    d.name,
                    d.done,
                    d.render.as_secs_f64(),
                    rate(n, d.render.as_secs_f64(), unit)
                )?;
            }
        }
        Ok(())
    }

    /// What decides a render's bits except the shard, the run hash of its parts: the method,
    /// the scene, the camera, the image size, the samples, the method's `settings`, the
    /// kd-tree's leaves and the backend.
    fn run_description(&self, backend: &Backend, method: &str, settings: &str, camera: Camera) -> Result<String> {
        let scene = crate::part::scene_id(&self.scene)?;
        Ok(format!(
            "{method} {scene} camera {camera:?} {}x{} spp {} {settings} {} backend {}",
            self.view.width,
            self.view.height,
            self.spp,
            self.structure.name(),
            backend.name()
        ))
    }
}

/// `n` per second with a unit prefix: `3.52 Grays`, `812 Krays`.
pub fn rate(n: f64, seconds: f64, unit: &str) -> String {
    let r = if seconds > 0.0 { n / seconds } else { 0.0 };
    for (scale, prefix) in [(1e9, "G"), (1e6, "M"), (1e3, "K")] {
        if r >= scale {
            return format!("{:.3} {prefix}{unit}", r / scale);
        }
    }
    format!("{r:.1} {unit}")
}
