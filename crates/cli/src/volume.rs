//! `lumbre volume`: point clouds through the sparse octree, as voxels.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use glam::Vec3;
use lumbre_gpu::{Compute, Gpu, GpuOptions};
use lumbre_octree::{GpuBuild, Octree, Points};
use lumbre_raytrace::{Camera, PointCloud, VolumeMode, VolumeOptions, VolumeRender, cloud_points, phantom_cloud};

use crate::progress::progress;

/// What `lumbre volume` was asked for.
pub struct VolumeArgs {
    pub cloud: String,
    pub depth: u32,
    pub options: VolumeOptions,
    pub camera: Option<String>,
    pub gpu: bool,
    pub out: PathBuf,
    pub orbit: u32,
    pub moving: u32,
    pub background_threshold: f32,
}

/// Loads a cloud: a `.txt` file in the volumetric thesis's format, a `.ply` file, a folder
/// of image slices, or `phantom:N` (the Shepp-Logan head phantom on an N³ grid).
pub fn load_cloud(spec: &str, background: f32) -> Result<PointCloud, String> {
    if let Some(n) = spec.strip_prefix("phantom:") {
        let n: u32 = n.parse().map_err(|_| format!("phantom:N needs a number, got {n:?}"))?;
        if !(4..=1024).contains(&n) {
            return Err(format!("phantom:{n}: N must be 4..=1024"));
        }
        return Ok(phantom_cloud(n));
    }
    let path = Path::new(spec);
    let (cloud, report) = if path.is_dir() {
        lumbre_raytrace::load_slice_dir(path, [1.0; 3], background)
    } else {
        match path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).as_deref() {
            Some("ply") => PointCloud::load_ply(path),
            _ => PointCloud::load_text(path),
        }
    }
    .map_err(|e| e.to_string())?;
    if report.dropped_non_finite > 0 || !report.warnings.is_empty() {
        eprintln!(
            "warning: {}: {} points kept, {} dropped (NaN/inf){}",
            spec,
            report.points,
            report.dropped_non_finite,
            report.warnings.iter().map(|w| format!("; {w}")).collect::<String>()
        );
    }
    if cloud.is_empty() {
        return Err(format!("{spec}: no points"));
    }
    Ok(cloud)
}

/// The animation's velocity field: a rotation about the vertical axis through the cloud's
/// centre plus a vertical swirl, `dt` per frame.
pub fn advect(points: &[[f32; 3]], centre: Vec3, dt: f32) -> Vec<[f32; 3]> {
    points
        .iter()
        .map(|p| {
            let q = Vec3::from(*p) - centre;
            let v = Vec3::new(-q.z, 0.3 * (q.x * 3.0).sin(), q.x);
            (centre + q + v * dt).to_array()
        })
        .collect()
}

fn frame_path(out: &Path, i: u32) -> PathBuf {
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("volume");
    let ext = out.extension().and_then(|s| s.to_str()).unwrap_or("png");
    out.with_file_name(format!("{stem}_{i:03}.{ext}"))
}

enum Backend {
    Cpu,
    Gpu(Gpu),
}

/// Renders `tree` on the chosen backend; returns the image and the time of the render alone.
fn render_once(
    backend: &Backend,
    tree: &Octree,
    depth: u32,
    camera: &Camera,
    o: &VolumeOptions,
) -> Result<(lumbre_raytrace::Image, Duration), String> {
    let r = VolumeRender { camera: *camera, options: o.clone(), tree_depth: depth };
    match backend {
        Backend::Cpu => {
            let t = Instant::now();
            let img = r.cpu(tree).map_err(|e| e.to_string())?;
            Ok((img, t.elapsed()))
        }
        Backend::Gpu(gpu) => {
            let on_gpu = r.upload(gpu, tree).map_err(|e| e.to_string())?;
            r.render_timed(gpu, &on_gpu).map_err(|e| e.to_string())
        }
    }
}

pub fn run(args: &VolumeArgs, opts: &GpuOptions) -> Result<(), String> {
    let t0 = Instant::now();
    let cloud = load_cloud(&args.cloud, args.background_threshold)?;
    let mut points = cloud_points(&cloud);
    let load = t0.elapsed();
    let backend =
        if args.gpu { Backend::Gpu(Gpu::with_options(opts).map_err(|e| e.to_string())?) } else { Backend::Cpu };
    let t1 = Instant::now();
    // Animations get a root with room to move: the cube around the points, 1.5 times as large.
    let root = lumbre_octree::Root::around(&points.positions).ok_or("no finite points")?;
    let root = if args.moving > 0 {
        let pad = root.size * 0.25;
        lumbre_octree::Root { min: root.min.map(|m| m - pad), size: root.size * 1.5 }
    } else {
        root
    };
    let (mut tree, report) =
        Octree::build_in(&points.positions, &points.attrs, args.depth, root).map_err(|e| e.to_string())?;
    let build_cpu = t1.elapsed();
    let build_gpu = match &backend {
        Backend::Gpu(gpu) => {
            let b = GpuBuild { depth: args.depth, root: Some(root) };
            let (on_gpu, t) = b.gpu_timed(gpu, &points).map_err(|e| e.to_string())?;
            if on_gpu != tree.pack() {
                return Err("GPU and CPU octrees differ (please report this)".into());
            }
            Some(t.gpu())
        }
        Backend::Cpu => None,
    };
    let bounds = (Vec3::from(tree.root.min), Vec3::from(tree.root.max()));
    let aspect = args.options.width as f32 / args.options.height as f32;
    let camera = match &args.camera {
        Some(c) => Camera::parse(c)?,
        None => Camera::frame(bounds, aspect),
    };
    println!(
        "{}: {} points ({} dropped), depth {}: {} nodes, {:.1} bytes/point packed; load {:.1} ms, CPU build {:.1} ms{}",
        args.cloud,
        report.points,
        report.dropped_non_finite,
        args.depth,
        tree.nodes.len(),
        tree.pack().bytes() as f64 / report.points.max(1) as f64,
        load.as_secs_f64() * 1e3,
        build_cpu.as_secs_f64() * 1e3,
        build_gpu.map(|t| format!(", GPU build {:.2} ms", t.as_secs_f64() * 1e3)).unwrap_or_default()
    );
    let where_ = if args.gpu { "gpu" } else { "cpu" };
    if args.moving > 0 {
        let centre = (bounds.0 + bounds.1) * 0.5;
        let bar = progress(args.moving as u64, "animate");
        let mut root = tree.root;
        for i in 0..args.moving {
            let next = advect(&points.positions, centre, 0.05);
            let (img, update, render, nodes) = match &backend {
                Backend::Cpu => {
                    let t = Instant::now();
                    tree.update(&points.positions, &next, &points.attrs).map_err(|e| e.to_string())?;
                    let update = t.elapsed();
                    let (img, render) = render_once(&backend, &tree, args.depth, &camera, &args.options)?;
                    (img, update, render, format!("{} nodes", tree.nodes.len()))
                }
                Backend::Gpu(gpu) => {
                    // On the GPU the update is a rebuild in the previous (grown) root, and the
                    // render reads the rebuilt tree in the same submission.
                    root = root.grown_to_fit(&next).0;
                    let b = GpuBuild { depth: args.depth, root: Some(root) };
                    let moved = Points { positions: next.clone(), attrs: points.attrs.clone() };
                    let cloud = b.upload(gpu, &moved).map_err(|e| e.to_string())?;
                    let r = VolumeRender { camera, options: args.options.clone(), tree_depth: args.depth };
                    let mut rec = gpu.recorder();
                    let on_gpu = b.record_build(&mut rec, &cloud).map_err(|e| e.to_string())?;
                    let image = r.record_render(&mut rec, &on_gpu).map_err(|e| e.to_string())?;
                    let timings = rec.submit().map_err(|e| e.to_string())?;
                    let stage = |prefix: &str| -> Duration {
                        timings.passes.iter().filter(|(l, _)| l.starts_with(prefix)).map(|(_, d)| *d).sum()
                    };
                    let render = stage("volume");
                    let update = timings.gpu().saturating_sub(render);
                    let img = r.download(gpu, &image).map_err(|e| e.to_string())?;
                    // Interior level offsets, then the payload count.
                    let sizes = gpu.download(&on_gpu.levels).map_err(|e| e.to_string())?;
                    let (interior, payloads) = (sizes[sizes.len() - 2], sizes[sizes.len() - 1]);
                    (img, update, render, format!("{interior} interior nodes and {payloads} payloads (packed)"))
                }
            };
            points.positions = next;
            let path = frame_path(&args.out, i);
            img.save_png(&path).map_err(|e| e.to_string())?;
            bar.suspend(|| {
                println!(
                    "frame {i}: update {:.2} ms ({where_}), render {:.2} ms, {nodes} -> {}",
                    update.as_secs_f64() * 1e3,
                    render.as_secs_f64() * 1e3,
                    path.display()
                )
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        return Ok(());
    }
    if args.orbit > 0 {
        let bar = progress(args.orbit as u64, "orbit");
        let mut total = Duration::ZERO;
        for i in 0..args.orbit {
            let cam = Camera::orbit(bounds, aspect, i, args.orbit);
            let (img, rt) = render_once(&backend, &tree, args.depth, &cam, &args.options)?;
            total += rt;
            let path = frame_path(&args.out, i);
            img.save_png(&path).map_err(|e| e.to_string())?;
            bar.suspend(|| {
                println!("frame {i}: render {:.2} ms ({where_}) -> {}", rt.as_secs_f64() * 1e3, path.display())
            });
            bar.inc(1);
        }
        bar.finish_and_clear();
        println!("mean frame: {:.2} ms", total.as_secs_f64() * 1e3 / args.orbit as f64);
        return Ok(());
    }
    let (img, rt) = render_once(&backend, &tree, args.depth, &camera, &args.options)?;
    img.save_png(&args.out).map_err(|e| e.to_string())?;
    println!("render {:.2} ms ({where_}) -> {}", rt.as_secs_f64() * 1e3, args.out.display());
    Ok(())
}

/// Parses `--mode`.
pub fn mode(s: &str) -> Result<VolumeMode, String> {
    match s {
        "colour" | "color" => Ok(VolumeMode::Colour),
        "depth" => Ok(VolumeMode::Depth),
        "phong" => Ok(VolumeMode::Phong),
        _ => Err(format!("--mode must be colour, depth or phong, not {s:?}")),
    }
}
