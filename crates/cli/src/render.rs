//! `lumbre render`: an OBJ scene through the Whitted ray tracer or the path tracer, on either
//! backend. The path tracer renders progressively: batches of samples, the running mean
//! written every few seconds and at the end.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use glam::DVec3;
use lumbre_gpu::{Backend, Compute, Report};
use lumbre_kdtree::BuildOptions;
use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared, RenderOptions, Scene, WhittedRender};

use crate::progress::{bar_progress, progress};

/// The integrator of `lumbre render`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Whitted ray tracing: direct light, mirrors and glass.
    Whitted,
    /// Path tracing: global illumination, the project's reference.
    Path,
}

/// The path tracer's settings beyond the image size.
pub struct PathArgs {
    pub max_bounces: u32,
    pub rr_depth: u32,
    /// Seconds between writes of the image in progress.
    pub write_every: f64,
}

/// What `lumbre render` was asked for.
pub struct RenderArgs {
    pub scene: PathBuf,
    pub out: PathBuf,
    pub method: Method,
    /// Whitted's options; the path tracer takes its size and samples from them.
    pub options: RenderOptions,
    pub path: PathArgs,
    pub build: BuildOptions,
    pub camera: Option<String>,
}

/// Loads an OBJ scene, reporting dropped input on stderr; the camera is `spec` or one
/// framing the scene, and scenes without lights get the default light.
pub fn load_scene(path: &std::path::Path, spec: Option<&str>, aspect: f32) -> Result<(Scene, Camera), String> {
    let (mut scene, report) = Scene::load_obj(path).map_err(|e| e.to_string())?;
    if report.dropped() > 0 || !report.warnings.is_empty() {
        eprintln!("warning: {report}");
    }
    let camera = match spec {
        Some(c) => Camera::parse(c)?,
        None => Camera::frame(scene.bounds, aspect),
    };
    lumbre_raytrace::add_default_light(&mut scene, &camera);
    Ok((scene, camera))
}

pub fn run(args: &RenderArgs, backend: &Backend) -> Result<(), String> {
    let o = &args.options;
    let t0 = Instant::now();
    let (scene, camera) = load_scene(&args.scene, args.camera.as_deref(), o.width as f32 / o.height as f32)?;
    let load = t0.elapsed();
    let t1 = Instant::now();
    let prepared = Prepared::new(scene, &args.build);
    let build = t1.elapsed();
    let header = format!(
        "{}: {} triangles on {}; load {:.1} ms, build {:.1} ms",
        args.scene.display(),
        prepared.tris.len(),
        backend.describe(),
        load.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
    );
    match args.method {
        Method::Whitted => whitted(args, backend, &prepared, camera, &header),
        Method::Path => path(args, backend, &prepared, camera, &header),
    }
}

fn whitted(
    args: &RenderArgs,
    backend: &Backend,
    prepared: &Prepared,
    camera: Camera,
    header: &str,
) -> Result<(), String> {
    let err = |e: lumbre_gpu::Error| e.to_string();
    let o = &args.options;
    let render = WhittedRender { camera, options: *o };
    let t2 = Instant::now();
    let placed = backend.place(&render, prepared).map_err(err)?;
    let upload = t2.elapsed();
    let bar = progress(o.height as u64, "render");
    let t3 = Instant::now();
    let (image, report) = render.run_placed(&placed, &bar_progress(&bar)).map_err(err)?;
    // Wall clock of the run: on the GPU, pipeline compilation (first run) and submission
    // beside the kernels' time.
    let run = t3.elapsed();
    bar.finish_and_clear();
    image.save(&args.out).map_err(|e| e.to_string())?;
    let rays = report.get("rays").unwrap_or(0.0);
    let time = report.gpu.unwrap_or_else(|| report.stage("render").unwrap_or_default());
    println!(
        "{header}, upload {:.1} ms, run {:.1} ms (wall); {report}; {}/s -> {}",
        upload.as_secs_f64() * 1e3,
        run.as_secs_f64() * 1e3,
        rate(rays, time.as_secs_f64(), "rays"),
        args.out.display()
    );
    Ok(())
}

/// Longest a batch of samples should take, so that the progress bar moves and the image can
/// be written on time.
const BATCH_TARGET: Duration = Duration::from_millis(500);

/// The progressive path render: batches of samples `[done, done + batch)` through
/// `run_placed` on the scene placed once, the running mean kept in f64, the image written
/// every `write_every` seconds and at the end.
fn path(args: &RenderArgs, backend: &Backend, prepared: &Prepared, camera: Camera, header: &str) -> Result<(), String> {
    let err = |e: lumbre_gpu::Error| e.to_string();
    let o = &args.options;
    let p = &args.path;
    if !(p.write_every.is_finite() && p.write_every > 0.0) {
        return Err(format!("--write-every must be a positive number of seconds, got {}", p.write_every));
    }
    let spp = o.spp;
    let options = PathOptions {
        width: o.width,
        height: o.height,
        spp,
        first_sample: 0,
        max_bounces: p.max_bounces,
        rr_depth: p.rr_depth,
        background: glam::Vec3::ZERO,
        query: o.query,
    };
    options.check().map_err(err)?;
    let mut render = PathRender { camera, options };
    let t2 = Instant::now();
    let placed = backend.place(&render, prepared).map_err(err)?;
    let upload = t2.elapsed();
    let pixels = o.width as usize * o.height as usize;
    let mut sum = vec![DVec3::ZERO; pixels];
    let bar = progress(spp as u64, "samples");
    let started = Instant::now();
    let mut last_write = Instant::now();
    let mut writes = 0u32;
    let (mut done, mut batch) = (0u32, 1u32);
    let mut totals = Report::default();
    let mut render_time = Duration::ZERO;
    while done < spp {
        batch = batch.min(spp - done);
        render.options.first_sample = done;
        render.options.spp = batch;
        let height = o.height as u64;
        let row_progress = |_: &str, rows: u64, _: u64| bar.set_position(done as u64 + batch as u64 * rows / height);
        let t = Instant::now();
        let (image, report) = render.run_placed(&placed, &row_progress).map_err(err)?;
        let took = t.elapsed();
        render_time += report.gpu.unwrap_or_else(|| report.stage("render").unwrap_or(took));
        for (s, px) in sum.iter_mut().zip(&image.pixels) {
            *s += px.as_dvec3() * batch as f64;
        }
        for stat in ["paths", "rays", "extension rays", "shadow rays"] {
            let v = totals.get(stat).unwrap_or(0.0) + report.get(stat).unwrap_or(0.0);
            totals.stat(stat, v);
        }
        done += batch;
        bar.set_position(done as u64);
        // The next batch: as many samples as fit in the target time at this batch's pace.
        let per_sample = took.as_secs_f64() / batch as f64;
        let target = BATCH_TARGET.as_secs_f64().min(p.write_every);
        batch = ((target / per_sample.max(1e-9)) as u32).clamp(1, batch.saturating_mul(4).max(1));
        if done < spp && last_write.elapsed().as_secs_f64() >= p.write_every {
            mean_image(&sum, done, o.width, o.height)?.save(&args.out).map_err(|e| e.to_string())?;
            last_write = Instant::now();
            writes += 1;
        }
    }
    bar.finish_and_clear();
    mean_image(&sum, done, o.width, o.height)?.save(&args.out).map_err(|e| e.to_string())?;
    let rays = totals.get("rays").unwrap_or(0.0);
    let paths = totals.get("paths").unwrap_or(0.0);
    let length = totals.get("extension rays").unwrap_or(0.0) / paths.max(1.0);
    println!(
        "{header}, upload {:.1} ms; path tracing: {done} samples per pixel, {paths:.0} paths, {rays:.0} rays \
         (mean path length {length:.3}) in {:.3} s rendering, {:.3} s in all: {}/s; {} intermediate writes -> {}",
        upload.as_secs_f64() * 1e3,
        render_time.as_secs_f64(),
        started.elapsed().as_secs_f64(),
        rate(rays, render_time.as_secs_f64(), "rays"),
        writes,
        args.out.display()
    );
    Ok(())
}

/// The mean of `n` samples whose per-pixel sums are `sum`.
fn mean_image(sum: &[DVec3], n: u32, width: u32, height: u32) -> Result<Image, String> {
    let pixels = sum.iter().map(|s| (*s / n.max(1) as f64).as_vec3()).collect();
    Image::from_pixels(width, height, pixels)
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
