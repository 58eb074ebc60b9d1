//! `lumbre render`: an OBJ scene through the Whitted ray tracer, on the CPU or the GPU.

use std::path::{Path, PathBuf};
use std::time::Instant;

use lumbre_gpu::{Gpu, GpuOptions};
use lumbre_kdtree::BuildOptions;
use lumbre_raytrace::{Camera, Prepared, RenderOptions, Scene};

use crate::progress::progress;

/// What `lumbre render` was asked for.
pub struct RenderArgs {
    pub scene: PathBuf,
    pub out: PathBuf,
    pub options: RenderOptions,
    pub build: BuildOptions,
    pub camera: Option<String>,
    pub gpu: bool,
}

fn save(image: &lumbre_raytrace::Image, out: &Path) -> Result<(), String> {
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "exr" => image.save_exr(out),
        _ => image.save_png(out),
    }
    .map_err(|e| e.to_string())
}

pub fn run(args: &RenderArgs, opts: &GpuOptions) -> Result<(), String> {
    let t0 = Instant::now();
    let (mut scene, report) = Scene::load_obj(&args.scene).map_err(|e| e.to_string())?;
    if report.dropped() > 0 || !report.warnings.is_empty() {
        eprintln!("warning: {report}");
    }
    let load = t0.elapsed();
    let o = &args.options;
    let camera = match &args.camera {
        Some(c) => Camera::parse(c)?,
        None => Camera::frame(scene.bounds, o.width as f32 / o.height as f32),
    };
    lumbre_raytrace::add_default_light(&mut scene, &camera);
    let t1 = Instant::now();
    let prepared = Prepared::new(scene, &args.build);
    let build = t1.elapsed();
    let t2 = Instant::now();
    let (image, stats, backend) = if args.gpu {
        let gpu = Gpu::with_options(opts).map_err(|e| e.to_string())?;
        let renderer = lumbre_raytrace::GpuRenderer::new(&gpu, &prepared).map_err(|e| e.to_string())?;
        let (image, stats) = renderer.render(&camera, o).map_err(|e| e.to_string())?;
        (image, stats, format!("gpu ({})", gpu.adapter_name()))
    } else {
        let bar = progress(o.height as u64, "render");
        let (image, stats) = prepared.render_cpu(&camera, o, &|_| bar.inc(1));
        bar.finish_and_clear();
        (image, stats, format!("cpu ({} threads)", rayon::current_num_threads()))
    };
    let render = t2.elapsed();
    save(&image, &args.out)?;
    println!(
        "{}: {} triangles on {backend}; load {:.1} ms, build {:.1} ms, render {:.1} ms, {} rays, {:.2} Mrays/s -> {}",
        args.scene.display(),
        prepared.tris.len(),
        load.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e3,
        render.as_secs_f64() * 1e3,
        stats.rays,
        stats.rays as f64 / render.as_secs_f64() / 1e6,
        args.out.display()
    );
    Ok(())
}
