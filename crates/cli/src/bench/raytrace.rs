//! `lumbre bench raytrace`: the kd-tree ray tracing thesis's table, through the BVH (or the
//! kd-tree with `--kd-tree`). Per scene (the models and generated inputs, among them two of
//! long thin overlapping triangles that test the SAH builds): load and build time, then the
//! mean frame time over 20 camera positions around the model with one primary and one shadow
//! ray per pixel, at 800x600 and 1920x1080, on the GPU (the kd-tree with both traversals), and
//! the CPU's Mrays/s for comparison. `--tables incoherent` adds the
//! incoherent rays' tables on the scene set (see `incoherent.rs`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use glam::Vec3;
use lumbre_gpu::Compute;
use lumbre_gpu::{BUSY_SPAN, Backend, KeepBusy};
use lumbre_kdtree::{QueryOptions, StructureOptions, Traversal, scenes};
use lumbre_raytrace::{Camera, GpuScene, Prepared, RenderOptions, Scene, WhittedRender};

use super::incoherent::IncoherentArgs;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::progress::progress;
use crate::table::Table;

/// A table of `lumbre bench raytrace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableChoice {
    /// One primary and one shadow ray per pixel on the models and generated scenes.
    Coherent,
    /// Diffuse-bounce rays and path-traced frames on the scene set.
    Incoherent,
}

/// The ray tracer (BVH or kd-tree) on suzanne, teapot, the bunny and 1M generated triangles
/// (coherent rays), and with `--tables incoherent` diffuse bounces and path-traced frames on
/// the scene set.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct RaytraceArgs {
    /// The tables to print, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "coherent")]
    tables: Vec<TableChoice>,
    /// Folder with suzanne.obj, teapot.obj and stanford-bunny.obj (default: the copies
    /// bundled in this binary).
    #[arg(long)]
    scenes: Option<PathBuf>,
    /// Camera positions around each model on the GPU (at least 1).
    #[arg(long, default_value_t = 20)]
    frames: u32,
    /// Camera positions for the CPU (800x600 only); 0 skips the CPU.
    #[arg(long, default_value_t = 2)]
    cpu_frames: u32,
    /// Skip the generated 1M-triangle scene.
    #[arg(long)]
    no_generated: bool,
    #[command(flatten)]
    structure: crate::view::Structure,
    #[command(flatten)]
    incoherent: IncoherentArgs,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

impl RaytraceArgs {
    /// The scenes to run: the standard ones, from `--scenes` when given, which must hold
    /// every model.
    fn scenes(&self) -> Result<Vec<BenchScene>> {
        let mut list = standard(self.scenes.as_deref());
        if self.no_generated {
            list.retain(|s| !matches!(s, BenchScene::Generated(_)));
        }
        if let Some(dir) = &self.scenes {
            check_scene_dir(dir, &list)?;
        }
        Ok(list)
    }
}

impl OnBackend for RaytraceArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        super::count("--frames", self.frames as usize, 1, super::MAX_RUNS)?;
        super::count("--cpu-frames", self.cpu_frames as usize, 0, super::MAX_RUNS)?;
        self.structure.check()?;
        self.scenes()?;
        self.incoherent.check()?;
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let build = self.structure;
        let incoherent = self.tables.contains(&TableChoice::Incoherent);
        if incoherent {
            self.incoherent.check_on(backend)?;
        }
        let mut tables = Vec::new();
        if self.tables.contains(&TableChoice::Coherent) {
            tables.push(raytrace(backend, &self.scenes()?, &build, self.frames, self.cpu_frames)?);
        }
        if incoherent {
            tables.extend(super::incoherent::tables(backend, &self.incoherent, &build)?);
        }
        super::print(&tables, self.json)?;
        Ok(())
    }
}

/// One benchmark scene: a model (bundled, or from a folder), or generated triangles.
enum BenchScene {
    Model { name: &'static str, dir: Option<PathBuf> },
    Generated(Generated),
}

/// The generated inputs of `lumbre_kdtree::scenes`, with their size.
enum Generated {
    /// `generated_scene(n)`: a bumpy sphere of `n` triangles.
    Sphere(usize),
    /// `fan(n)`: a disc of `n` long thin triangles meeting at its centre.
    Fan(usize),
    /// `star_polygon(n)`: a star polygon of `n` vertices, its `n - 2` triangles crossing.
    StarPolygon(usize),
}

impl BenchScene {
    fn name(&self) -> String {
        match self {
            BenchScene::Model { name, .. } => name.to_string(),
            BenchScene::Generated(Generated::Sphere(n)) => format!("generated {n}"),
            BenchScene::Generated(Generated::Fan(n)) => format!("fan {n}"),
            BenchScene::Generated(Generated::StarPolygon(n)) => format!("star polygon {n}"),
        }
    }

    fn load(&self) -> Result<Scene> {
        let tris = match self {
            BenchScene::Model { name, dir } => return crate::data::scene(name, dir.as_deref()),
            BenchScene::Generated(Generated::Sphere(n)) => scenes::generated_scene(*n),
            BenchScene::Generated(Generated::Fan(n)) => scenes::fan(*n),
            BenchScene::Generated(Generated::StarPolygon(n)) => scenes::star_polygon(*n),
        };
        Ok(Scene::from_triangles(&tris))
    }
}

/// The standard scenes: suzanne, teapot and the bunny (from `dir`, else the bundled copies),
/// 1M generated triangles, and two inputs of long thin overlapping triangles on which the
/// SAH build once blew up (a 20k-triangle fan and a 5k-vertex star polygon).
fn standard(dir: Option<&Path>) -> Vec<BenchScene> {
    let mut v: Vec<BenchScene> = ["suzanne", "teapot", "stanford-bunny"]
        .into_iter()
        .map(|name| BenchScene::Model { name, dir: dir.map(Path::to_path_buf) })
        .collect();
    v.push(BenchScene::Generated(Generated::Sphere(1_000_000)));
    v.push(BenchScene::Generated(Generated::Fan(20_000)));
    v.push(BenchScene::Generated(Generated::StarPolygon(5000)));
    v
}

/// An error, before any work, when `dir` is not a folder or lacks one of the models of
/// `scenes`, naming every missing file.
fn check_scene_dir(dir: &Path, scenes: &[BenchScene]) -> Result<()> {
    if !dir.is_dir() {
        return Err(format!("--scenes {}: not a folder", dir.display()).into());
    }
    let missing: Vec<String> = scenes
        .iter()
        .filter_map(|s| match s {
            BenchScene::Model { name, .. } => Some(format!("{name}.obj")),
            BenchScene::Generated(_) => None,
        })
        .filter(|file| !dir.join(file).is_file())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "--scenes {}: missing {} (leave out --scenes to use the bundled copies)",
            dir.display(),
            missing.join(", ")
        )
        .into());
    }
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// A light for the primary + shadow ray measurement: above the first camera.
fn light_for(scene: &mut Scene, camera: &Camera) {
    scene.lights.clear();
    let size = (scene.bounds.1 - scene.bounds.0).length();
    scene.add_point_light(camera.eye + camera.up * size, Vec3::splat(size * size));
}

fn raytrace(
    backend: &Backend,
    scenes: &[BenchScene],
    structure: &crate::view::Structure,
    frames: u32,
    cpu_frames: u32,
) -> Result<Table> {
    let gpu = backend.gpu();
    let mut t = Table::new(
        format!(
            "Ray tracing through the {}: one primary and one shadow ray per pixel, mean over camera positions around the model",
            structure.name()
        ),
        &[
            "scene",
            "triangles",
            "load ms",
            "build ms",
            "resolution",
            "traversal",
            "GPU frame ms",
            "GPU Grays/s",
            "CPU frame ms",
            "CPU Mrays/s",
        ],
    );
    let bar = progress(scenes.len() as u64, "raytrace");
    for s in scenes {
        let t0 = Instant::now();
        let mut scene = s.load()?;
        let load = t0.elapsed();
        let aspect = 4.0 / 3.0;
        let first = Camera::orbit(scene.bounds, aspect, 0, frames.max(1));
        light_for(&mut scene, &first);
        let t1 = Instant::now();
        let prepared = Prepared::new(scene, &structure.options());
        let build = t1.elapsed();
        let on_gpu = match gpu {
            Some(g) => Some(GpuScene::upload(g, &prepared)?),
            None => None,
        };
        for (w, h) in [(800u32, 600u32), (1920, 1080)] {
            // The kd-tree's two traversals; the BVH has one.
            let traversals: &[Traversal] = match structure.options() {
                StructureOptions::KdTree(_) => &[Traversal::Stack, Traversal::Restart],
                StructureOptions::Bvh(_) => &[Traversal::Stack],
            };
            for &traversal in traversals {
                let o = RenderOptions {
                    width: w,
                    height: h,
                    spp: 1,
                    max_depth: 1,
                    query: QueryOptions { traversal, ..Default::default() },
                    ..Default::default()
                };
                let cam = |i| Camera::orbit(prepared.scene.bounds, w as f32 / h as f32, i, frames.max(1));
                let render = |i| WhittedRender { camera: cam(i), options: o };
                let (gpu_ms, gpu_rate) = match (&on_gpu, gpu) {
                    (Some(scene), Some(g)) => {
                        // Each frame starts on a busy GPU (see lumbre_gpu::KeepBusy).
                        let busy = KeepBusy::new(g)?;
                        render(0).gpu_reported(g, scene)?; // warm-up
                        let mut time = Duration::ZERO;
                        let mut rays = 0.0;
                        for i in 0..frames {
                            busy.queue(g, BUSY_SPAN)?;
                            let (_, report) = render(i).gpu_reported(g, scene)?;
                            time += report.gpu.unwrap_or_default();
                            rays += report.get("rays").unwrap_or(0.0);
                        }
                        let mean = time / frames.max(1);
                        (ms(mean), crate::table::sig(rays / time.as_secs_f64() / 1e9))
                    }
                    _ => ("-".into(), "-".into()),
                };
                // CPU: fewer frames, at 800x600 only (it is slow at full HD on few cores).
                let (cpu_ms, cpu_rate) = if w == 800 && cpu_frames > 0 {
                    let start = Instant::now();
                    let mut rays = 0.0;
                    for i in 0..cpu_frames {
                        let (_, report) = render(i * frames.max(1) / cpu_frames).cpu_reported(&prepared, &())?;
                        rays += report.get("rays").unwrap_or(0.0);
                    }
                    let el = start.elapsed();
                    (ms(el / cpu_frames), crate::table::sig(rays / el.as_secs_f64() / 1e6))
                } else {
                    ("-".into(), "-".into())
                };
                t.row(vec![
                    s.name(),
                    prepared.tris.len().to_string(),
                    ms(load),
                    ms(build),
                    format!("{w}x{h}"),
                    match structure.options() {
                        StructureOptions::KdTree(_) => format!("{traversal:?}"),
                        StructureOptions::Bvh(_) => "BVH".into(),
                    },
                    gpu_ms,
                    gpu_rate,
                    cpu_ms,
                    cpu_rate,
                ]);
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note(format!(
        "GPU: {}; {frames} camera positions (GPU time from {}), CPU: {cpu_frames} positions at 800x600 on {} threads; rays = camera + shadow rays actually cast",
        gpu.map_or("none".to_string(), |g| g.adapter_name().to_string()),
        gpu.map_or("-", |g| if g.has(lumbre_gpu::wgpu::Features::TIMESTAMP_QUERY) { "timestamp queries" } else { "wall clock" }),
        rayon::current_num_threads()
    ));
    Ok(t)
}
