//! `lumbre volume`: point clouds through the sparse octree, as voxels.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use glam::Vec3;
use lumbre_gpu::{Backend, Compute, Kept, Placed};
use lumbre_octree::{GpuBuild, Points, Root};
use lumbre_raytrace::{
    Camera, MAX_PHANTOM_N, PointCloud, VolumeMode, VolumeOptions, VolumeRender, cloud_points, cloud_root, phantom_cloud,
};

use crate::backend::{BackendArgs, BackendChoice, OnBackend};
use crate::error::Result;
use crate::gpus::GpuList;
use crate::limits::{MAX_FRAMES, available_memory, human, in_range};
use crate::out::out;
use crate::progress::progress;
use crate::shard::ShardSpec;
use crate::spread::spread_frames;
use crate::view::View;

/// Render a point cloud as voxels through the sparse octree.
#[derive(Args)]
pub struct VolumeArgs {
    /// A `.txt` cloud (`x y z r g b reflection refraction` per line), a `.ply` file, a
    /// folder of image slices, or `phantom:N` (the Shepp-Logan head on an N³ grid,
    /// N 4..=403).
    cloud: String,
    #[command(flatten)]
    view: View,
    /// Depth of the octree (1..=21).
    #[arg(long, default_value_t = 8)]
    depth: u32,
    /// Level drawn, 0..=--depth (default: the depth).
    #[arg(long)]
    level: Option<u32>,
    /// colour, depth or phong.
    #[arg(long, default_value = "phong")]
    mode: String,
    /// Reflection bounces in phong mode, 1..=12.
    #[arg(long, default_value_t = 3)]
    max_depth: u32,
    /// Write N frames around the cloud (`out_000.png`, ...) with per-frame timing, N
    /// 0..=3600; not with --move.
    #[arg(long, default_value_t = 0)]
    orbit: u32,
    /// Animate the points for N frames and update the octree in place each frame, N
    /// 0..=3600; not with --orbit.
    #[arg(long = "move", default_value_t = 0)]
    moving: u32,
    /// Slice stacks: pixels at or below this luminance, in [0, 1), are dropped.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    background: f32,
    /// With --orbit: spread the frames over these GPUs (`all`, a count N, or adapter indices
    /// #I or I,J as `lumbre info` lists them), each building the octree once and taking frames
    /// as it frees up.
    #[arg(long, value_name = "all|N|#I|I,J")]
    gpus: Option<GpuList>,
    /// With --orbit: write only the I-th (from 0) of N parts of the frames (the frame files
    /// of all N parts make the orbit); `auto/N` reads I from JOB_COMPLETION_INDEX or
    /// SLURM_ARRAY_TASK_ID.
    #[arg(long, value_name = "I/N")]
    shard: Option<ShardSpec>,
}

/// The image `lumbre volume` writes without `-o`.
const OUT: &str = "volume.png";

impl OnBackend for VolumeArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        mode(&self.mode)?;
        let depth = self.depth;
        in_range("--depth", depth, 1, lumbre_octree::MAX_DEPTH)?;
        let level = self.level.unwrap_or(depth);
        if level > depth {
            return Err(format!("--level {level} is deeper than --depth {depth}: must be 0..={depth}").into());
        }
        in_range("--max-depth", self.max_depth, 1, lumbre_raytrace::MAX_TRACE_DEPTH)?;
        in_range("--orbit", self.orbit, 0, MAX_FRAMES)?;
        in_range("--move", self.moving, 0, MAX_FRAMES)?;
        if self.orbit > 0 && self.moving > 0 {
            return Err(format!(
                "--orbit {} and --move {}: choose one (an orbit of a moving cloud is not supported)",
                self.orbit, self.moving
            )
            .into());
        }
        if self.orbit == 0 && (self.gpus.is_some() || self.shard.is_some()) {
            let flag = if self.gpus.is_some() { "--gpus" } else { "--shard" };
            return Err(format!("{flag}: spreads the frames of --orbit; give --orbit N").into());
        }
        if self.gpus.is_some() && self.view.backend.backend != BackendChoice::Gpu {
            return Err("--gpus needs --backend gpu".into());
        }
        if let Some(spec) = self.shard {
            let shard = spec.resolve_env()?;
            if shard.count > self.orbit {
                return Err(format!("--shard {shard}: more parts than --orbit {} frames", self.orbit).into());
            }
        }
        // A luminance of 1 or more would drop every pixel.
        if !(0.0..1.0).contains(&self.background) {
            return Err(format!("--background {}: must be in [0, 1)", self.background).into());
        }
        self.view.check(OUT)
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let out = self.view.out_on(OUT, backend)?;
        let options = VolumeOptions {
            width: self.view.width,
            height: self.view.height,
            mode: mode(&self.mode)?,
            level: self.level.unwrap_or(self.depth),
            max_depth: self.max_depth,
            ..Default::default()
        };
        self.render(&out, &options, backend)
    }
}

/// Host bytes per point of a cloud on its way to an octree: the cloud (32), the octree's
/// input (17), its keys and sort, rounded up.
const BYTES_PER_POINT: u64 = 160;

/// Host bytes per octree node at the peak of the CPU build and its packing: while building,
/// each level's keys (8) and nodes (32) and their concatenation (32); while packing, the
/// tree (32), its interior nodes per level and concatenated (12 + 12) and a payload (24) at
/// most. On lavapipe the GPU build's word planes and packed tree are as large, in host memory.
const BYTES_PER_NODE: u64 = 80;

/// Host memory of the process before the cloud: the program and, on the GPU, the driver.
const PROCESS_BASE_CPU: u64 = 96 << 20;
const PROCESS_BASE_GPU: u64 = 512 << 20;

/// The most nodes an octree of `points` at `depth` can have: no level holds more nodes than
/// points, nor more than 8^level.
fn max_nodes(points: u64, depth: u32) -> u64 {
    (0..=depth).map(|l| if 3 * l >= 63 { points } else { points.min(1 << (3 * l)) }.max(1)).sum()
}

/// Host bytes of the octree of `points` at `depth` built on `backend`, with the process's
/// base; a discrete GPU keeps the nodes in its own memory.
fn tree_bytes(points: u64, depth: u32, backend: &Backend) -> u64 {
    let nodes = max_nodes(points, depth) * BYTES_PER_NODE;
    points * BYTES_PER_POINT
        + match backend {
            Backend::Cpu => PROCESS_BASE_CPU + nodes,
            Backend::Gpu(_) if crate::lightcuts::is_lavapipe(backend) => PROCESS_BASE_GPU + nodes,
            Backend::Gpu(_) => PROCESS_BASE_GPU,
        }
}

/// An error naming `--depth` (and the cloud) when the octree of `points` at `depth` needs more
/// host memory than `available`; else the bytes it needs.
fn check_tree_memory(cloud: &str, points: u64, depth: u32, backend: &Backend, available: u64) -> Result<u64> {
    let need = tree_bytes(points, depth, backend);
    if need <= available {
        return Ok(need);
    }
    // The deepest depth that fits, if any.
    let fits = (1..depth).rev().find(|&d| tree_bytes(points, d, backend) <= available);
    let hint = match fits {
        Some(d) => format!("lower --depth (--depth {d} fits) or use fewer points"),
        None => "use fewer points".to_owned(),
    };
    Err(format!(
        "--depth {depth}: the octree of {cloud} ({points} points, at most {} nodes) needs about {} of host memory, \
         more than the {} available: {hint}",
        max_nodes(points, depth),
        human(need),
        human(available)
    )
    .into())
}

/// The largest buffer of the GPU build of an octree of `points` at `depth`: its interior
/// nodes (12 bytes each, levels 0 to depth - 1), a word per node of all levels (the
/// packing's flags), a level's word plane (4 bytes per word of a key and a node), the
/// payloads (24 bytes, two per leaf at most) or the positions (12 bytes a point).
fn largest_gpu_buffer(points: u64, depth: u32) -> u64 {
    let key_words = if depth > lumbre_morton::NodeKey32::MAX_LEVEL { 2 } else { 1 };
    let node_words = (key_words + size_of::<lumbre_octree::Node>() / 4) as u64;
    let interior = max_nodes(points, depth.saturating_sub(1)) * 12;
    [interior, 4 * max_nodes(points, depth), 4 * node_words * points, 48 * points, 12 * points]
        .into_iter()
        .max()
        .unwrap_or(0)
}

/// An error naming `--depth` when the GPU build's largest buffer for `points` at `depth`
/// is beyond `most` bytes, the largest storage buffer of `adapter`.
fn check_tree_gpu(cloud: &str, points: u64, depth: u32, adapter: &str, most: u64) -> Result<()> {
    let need = largest_gpu_buffer(points, depth);
    if need <= most {
        return Ok(());
    }
    let hint = match (1..depth).rev().find(|&d| largest_gpu_buffer(points, d) <= most) {
        Some(d) => format!("lower --depth (--depth {d} fits), use fewer points or --backend cpu"),
        None => "use fewer points or --backend cpu".to_owned(),
    };
    Err(format!(
        "--depth {depth}: the GPU build of the octree of {cloud} ({points} points, at most {} nodes) needs a buffer \
         of {}, more than {adapter}'s largest storage buffer of {}: {hint}",
        max_nodes(points, depth),
        human(need),
        human(most)
    )
    .into())
}

/// The points of `phantom:N` before it is made (about 0.26 N³); `None` for other clouds and
/// for N out of range (which [`load_cloud`] refuses, naming the range).
fn phantom_points(spec: &str) -> Option<u64> {
    let n: u32 = spec.strip_prefix("phantom:")?.parse().ok()?;
    (4..=MAX_PHANTOM_N).contains(&n).then(|| (0.2557 * f64::from(n).powi(3)) as u64)
}

/// Loads a cloud: a `.txt` file in the volumetric thesis's format, a `.ply` file, a folder
/// of image slices, or `phantom:N` (the Shepp-Logan head phantom on an N³ grid). Dropped
/// points and warnings go to stderr; returns the cloud and a summary of what was kept and
/// dropped for the command's own summary line.
pub fn load_cloud(spec: &str, background: f32) -> Result<(PointCloud, String)> {
    if let Some(n) = spec.strip_prefix("phantom:") {
        let n: u32 = n.parse().map_err(|_| format!("phantom:N needs a number, got {n:?}"))?;
        if !(4..=MAX_PHANTOM_N).contains(&n) {
            return Err(format!(
                "phantom:{n}: N must be 4..={MAX_PHANTOM_N} (the head has about 0.26 N³ points and an octree holds \
                 at most {} of them)",
                lumbre_octree::MAX_POINTS
            )
            .into());
        }
        let points = (0.2557 * f64::from(n).powi(3)) as u64;
        let (need, available) = (points * BYTES_PER_POINT, available_memory());
        if need > available {
            return Err(format!(
                "phantom:{n}: about {points} points need {} of memory, more than the {} available: use a smaller N",
                human(need),
                human(available)
            )
            .into());
        }
        let cloud = phantom_cloud(n);
        let summary = format!("{} points", cloud.len());
        return Ok((cloud, summary));
    }
    let path = Path::new(spec);
    let (cloud, report) = if path.is_dir() {
        lumbre_raytrace::load_slice_dir(path, [1.0; 3], background)
    } else {
        match path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).as_deref() {
            Some("ply") => PointCloud::load_ply(path),
            _ => PointCloud::load_text(path),
        }
    }?;
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
        return Err(format!("{spec}: no points").into());
    }
    let summary = format!("{} points ({} dropped: NaN/inf)", report.points, report.dropped_non_finite);
    Ok((cloud, summary))
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

/// `out_007.png`: frame `i` of `frames`, numbered with as many digits as the last frame
/// needs (at least three), so names sort in frame order.
fn frame_path(out: &Path, i: u32, frames: u32) -> PathBuf {
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("volume");
    let ext = out.extension().and_then(|s| s.to_str()).unwrap_or("png");
    let digits = frames.saturating_sub(1).max(1).ilog10() as usize + 1;
    out.with_file_name(format!("{stem}_{i:0width$}.{ext}", width = digits.max(3)))
}

/// Builds the octree of `points` in `root` on `backend` and keeps it there (on the GPU it is
/// not read back): the volume render's input on either backend. Returns it with the build
/// time (GPU time on the GPU) and a description of its size.
fn build_tree(
    backend: &Backend,
    points: &Points,
    depth: u32,
    root: Root,
) -> Result<(Kept<GpuBuild>, Duration, String)> {
    let (tree, report) = backend.run_kept(&GpuBuild { depth, root: Some(root) }, points, &())?;
    let size = match &tree {
        Kept::Cpu(packed) => format!(
            "{} nodes, {:.1} bytes/point packed",
            packed.nodes.len() + packed.leaf_count(),
            packed.bytes() as f64 / points.positions.len().max(1) as f64
        ),
        Kept::Gpu(gpu, tree) => {
            // Interior level offsets, then the payload count.
            let sizes = gpu.download(&tree.levels)?;
            format!("{} interior nodes and {} payloads (packed)", sizes[sizes.len() - 2], sizes[sizes.len() - 1])
        }
    };
    Ok((tree, report.gpu.unwrap_or_else(|| report.total()), size))
}

/// The root cube of a built tree.
fn root_of(tree: &Kept<GpuBuild>) -> Root {
    match tree {
        Kept::Cpu(tree) => tree.root,
        Kept::Gpu(_, tree) => tree.root,
    }
}

/// Renders the placed tree; returns the image and the render's time (GPU time on the GPU).
fn render_once(
    placed: &Placed<'_, VolumeRender>,
    depth: u32,
    camera: &Camera,
    o: &VolumeOptions,
) -> Result<(lumbre_raytrace::Image, Duration)> {
    let r = VolumeRender { camera: *camera, options: o.clone(), tree_depth: depth };
    let (image, report) = r.run_placed(placed, &())?;
    Ok((image, report.gpu.unwrap_or_else(|| report.total())))
}

impl VolumeArgs {
    /// Builds the octree of the cloud on `backend` and renders it into `out`: one image, an
    /// orbit or an animation.
    fn render(&self, out: &Path, options: &VolumeOptions, backend: &Backend) -> Result<()> {
        let t0 = Instant::now();
        // A phantom's tree is checked before the phantom is made, any cloud's once loaded.
        let check = |points: u64| {
            if let Backend::Gpu(gpu) = backend {
                let l = gpu.limits();
                let most = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
                check_tree_gpu(&self.cloud, points, self.depth, gpu.adapter_name(), most)?;
            }
            check_tree_memory(&self.cloud, points, self.depth, backend, available_memory())
        };
        if let Some(points) = phantom_points(&self.cloud) {
            check(points)?;
        }
        let (cloud, loaded) = load_cloud(&self.cloud, self.background)?;
        let mut points = cloud_points(&cloud);
        drop(cloud);
        let need = check(points.positions.len() as u64)?;
        let load = t0.elapsed();
        let (root, framed) = cloud_root(&points.positions, options.level.min(self.depth))?;
        // Animations get a root with room to move: the cube around the points, 1.5 times as large.
        let root = if self.moving > 0 {
            let pad = root.size * 0.25;
            Root { min: root.min.map(|m| m - pad), size: root.size * 1.5 }
        } else {
            root
        };
        let (mut tree, build, size) = build_tree(backend, &points, self.depth, root)?;
        // The camera frames the cloud's box, or the padded root of an animation.
        let bounds =
            if self.moving > 0 { (Vec3::from(root_of(&tree).min), Vec3::from(root_of(&tree).max())) } else { framed };
        let aspect = options.width as f32 / options.height as f32;
        let camera = match &self.view.camera {
            Some(c) => Camera::parse(c)?,
            None => Camera::frame(bounds, aspect),
        };
        out!(
            "{}: {loaded}, depth {}: {size}; host memory about {}; load {:.1} ms, build {:.2} ms on {}",
            self.cloud,
            self.depth,
            human(need),
            load.as_secs_f64() * 1e3,
            build.as_secs_f64() * 1e3,
            backend.describe(),
        )?;
        if self.moving > 0 {
            let centre = (bounds.0 + bounds.1) * 0.5;
            let bar = progress(self.moving as u64, "animate");
            for i in 0..self.moving {
                let next = advect(&points.positions, centre, 0.05);
                let (update, nodes) = match &mut tree {
                    Kept::Cpu(packed) => {
                        // The CPU updates the tree in place, unpacked, and packs it again for
                        // the render.
                        let mut t = packed.unpack();
                        let start = Instant::now();
                        t.update(&points.positions, &next, &points.attrs)?;
                        let time = start.elapsed();
                        *packed = t.pack();
                        (time, format!("{} nodes", t.nodes.len()))
                    }
                    Kept::Gpu(..) => {
                        // On the GPU the update is a rebuild in the previous (grown) root.
                        let moved = Points { positions: next.clone(), attrs: points.attrs.clone() };
                        let grown = root_of(&tree).grown_to_fit(&next).0;
                        let (t, time, size) = build_tree(backend, &moved, self.depth, grown)?;
                        tree = t;
                        (time, size)
                    }
                };
                points.positions = next;
                let (img, render) = render_once(&tree.placed(), self.depth, &camera, options)?;
                let path = frame_path(out, i, self.moving);
                img.save(&path)?;
                bar.suspend(|| {
                    out!(
                        "frame {i}: update {:.2} ms, render {:.2} ms, {nodes} -> {}",
                        update.as_secs_f64() * 1e3,
                        render.as_secs_f64() * 1e3,
                        path.display()
                    )
                })?;
                bar.inc(1);
            }
            bar.finish_and_clear();
            return Ok(());
        }
        if self.orbit > 0 {
            return self.orbit(out, options, backend, tree, &points, bounds);
        }
        let placed = tree.placed();
        let (img, rt) = render_once(&placed, self.depth, &camera, options)?;
        img.save(out)?;
        let peak = crate::radiosity::peak_memory()
            .map(|p| format!(", peak host memory {} of {} announced", human(p), human(need)))
            .unwrap_or_default();
        out!("render {:.2} ms -> {}{peak}", rt.as_secs_f64() * 1e3, out.display())?;
        Ok(())
    }
}

impl VolumeArgs {
    /// The frames of `--orbit` (a shard's part of them with `--shard`) on `backend`, or spread
    /// over the `--gpus` devices, each building its own octree (the first reuses `tree`).
    fn orbit(
        &self,
        out: &Path,
        options: &VolumeOptions,
        backend: &Backend,
        tree: Kept<GpuBuild>,
        points: &Points,
        bounds: (Vec3, Vec3),
    ) -> Result<()> {
        let shard = self.shard.map(|s| s.resolve_env()).transpose()?;
        let frames = shard.map_or(0..self.orbit, |s| s.range(self.orbit));
        let devices = match &self.gpus {
            Some(list) => list.open(backend)?,
            None => vec![backend.clone()],
        };
        let aspect = options.width as f32 / options.height as f32;
        let first = std::sync::Mutex::new(Some(tree));
        let root = root_of(first.lock().map_err(|_| "octree lock")?.as_ref().ok_or("no octree")?);
        let bar = progress(frames.len() as u64, "orbit");
        let setup = |device: &Backend| -> Result<Kept<GpuBuild>> {
            // The primary device's octree is the one already built; others build their own.
            if std::ptr::eq(device, &devices[0]) {
                if let Some(t) = first.lock().map_err(|_| "octree lock")?.take() {
                    return Ok(t);
                }
            }
            Ok(build_tree(device, points, self.depth, root)?.0)
        };
        let frame = |tree: &Kept<GpuBuild>, i: u32| -> Result<Duration> {
            let cam = Camera::orbit(bounds, aspect, i, self.orbit);
            let (img, rt) = render_once(&tree.placed(), self.depth, &cam, options)?;
            let path = frame_path(out, i, self.orbit);
            img.save(&path)?;
            bar.suspend(|| out!("frame {i}: render {:.2} ms -> {}", rt.as_secs_f64() * 1e3, path.display()))?;
            Ok(rt)
        };
        let shares = spread_frames(&devices, frames.clone(), &bar, setup, frame)?;
        bar.finish_and_clear();
        let total: Duration = shares.iter().map(|s| s.render).sum();
        let part = shard.map_or(String::new(), |s| format!(" (shard {s}: frames {frames:?})"));
        out!(
            "{} frames{part}, mean frame: {:.2} ms",
            frames.len(),
            total.as_secs_f64() * 1e3 / frames.len().max(1) as f64
        )?;
        if devices.len() > 1 {
            for s in &shares {
                out!("  {}: {} frames in {:.1} ms rendering", s.name, s.done, s.render.as_secs_f64() * 1e3)?;
            }
        }
        Ok(())
    }
}

/// Parses `--mode`.
fn mode(s: &str) -> Result<VolumeMode> {
    match s {
        "colour" | "color" => Ok(VolumeMode::Colour),
        "depth" => Ok(VolumeMode::Depth),
        "phong" => Ok(VolumeMode::Phong),
        _ => Err(format!("--mode must be colour, depth or phong, not {s:?}").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn octree_memory_names_the_depth() {
        // Levels of a phantom: 8^l until the points run out, then one node per point.
        assert_eq!(max_nodes(100, 2), 1 + 8 + 64);
        assert_eq!(max_nodes(100, 4), 1 + 8 + 64 + 100 + 100);
        assert_eq!(max_nodes(5, 21), 1 + 5 * 21);
        let points = phantom_points("phantom:403").unwrap();
        let need = tree_bytes(points, 21, &Backend::Cpu);
        assert!(need > 15 << 30, "{need}");
        let e = check_tree_memory("phantom:403", points, 21, &Backend::Cpu, 9 << 30).unwrap_err().to_string();
        assert!(e.contains("--depth 21") && e.contains("more than the 9.0 GiB available"), "{e}");
        assert!(e.contains("--depth 11 fits"), "{e}");
        let e = check_tree_memory("c.ply", points, 21, &Backend::Cpu, 1 << 20).unwrap_err().to_string();
        assert!(e.ends_with("use fewer points"), "{e}");
        assert_eq!(
            check_tree_memory("c.ply", points, 8, &Backend::Cpu, 9 << 30).unwrap(),
            tree_bytes(points, 8, &Backend::Cpu)
        );
        // The GPU build of phantom:200 (2,045,822 points) at depth 21: 28.9 million interior
        // nodes, 347 MB (what lavapipe refused).
        let points = 2_045_822;
        assert_eq!(largest_gpu_buffer(points, 21), 28_941_101 * 12);
        let e = check_tree_gpu("phantom:200", points, 21, "llvmpipe", 128 << 20).unwrap_err().to_string();
        assert!(e.contains("--depth 21") && e.contains("llvmpipe's largest storage buffer of 128.0 MiB"), "{e}");
        assert!(e.contains("(--depth 12 fits)"), "{e}");
        assert!(check_tree_gpu("phantom:200", points, 8, "llvmpipe", 128 << 20).is_ok());
    }
}
