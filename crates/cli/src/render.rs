//! `lumbre render`: an OBJ scene through the Whitted ray tracer, on either backend.

use std::path::PathBuf;
use std::time::Instant;

use lumbre_gpu::{Backend, Compute};
use lumbre_kdtree::BuildOptions;
use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene, WhittedRender};

use crate::progress::{bar_progress, progress};

/// What `lumbre render` was asked for.
pub struct RenderArgs {
    pub scene: PathBuf,
    pub out: PathBuf,
    pub options: RenderOptions,
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
    let err = |e: lumbre_gpu::Error| e.to_string();
    let o = &args.options;
    let t0 = Instant::now();
    let (scene, camera) = load_scene(&args.scene, args.camera.as_deref(), o.width as f32 / o.height as f32)?;
    let load = t0.elapsed();
    let t1 = Instant::now();
    let prepared = Prepared::new(scene, &args.build);
    let build = t1.elapsed();
    let render = WhittedRender { camera, options: *o };
    let t2 = Instant::now();
    let placed = backend.place(&render, &prepared).map_err(err)?;
    let upload = t2.elapsed();
    let bar = progress(o.height as u64, "render");
    let (image, report) = render.run_placed(&placed, &bar_progress(&bar)).map_err(err)?;
    bar.finish_and_clear();
    image.save(&args.out).map_err(|e| e.to_string())?;
    let rays = report.get("rays").unwrap_or(0.0);
    let time = report.gpu.unwrap_or_else(|| report.stage("render").unwrap_or_default());
    println!(
        "{}: {} triangles on {}; load {:.1} ms, build {:.1} ms, upload {:.1} ms; {report}; {}/s -> {}",
        args.scene.display(),
        prepared.tris.len(),
        backend.describe(),
        load.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        upload.as_secs_f64() * 1e3,
        rate(rays, time.as_secs_f64(), "rays"),
        args.out.display()
    );
    Ok(())
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
