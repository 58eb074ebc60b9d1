//! `lumbre`: run Lumbre's algorithms on the CPU or the GPU, the demo, and the benchmarks.
//!
//! Every flag is checked before any work, by the rule of the README's "Bad input" section:
//! a value outside its range or contradicting another flag is an error naming the flag, the
//! value and what is allowed.

mod backend;
mod bench;
mod compare;
mod data;
mod demo;
mod density;
mod error;
mod info;
mod lightcuts;
mod limits;
mod progress;
mod radiosity;
mod render;
mod scenes;
mod table;
mod volume;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use lumbre_gpu::{Backend, GpuOptions};

use crate::backend::{BackendArgs, gpu_by_default};
use crate::error::Result;

#[derive(Parser)]
#[command(name = "lumbre", version, about = "GPU and CPU rendering algorithms: demo, benchmarks and tools")]
struct Cli {
    /// Use the first adapter whose name contains this (overrides LUMBRE_ADAPTER), e.g. llvmpipe.
    #[arg(long, global = true)]
    adapter: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// The flags every rendering command shares.
#[derive(Args, Clone, Debug)]
pub struct View {
    /// Image width in pixels.
    #[arg(long, default_value_t = 640)]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 480)]
    pub height: u32,
    /// `eye_x,eye_y,eye_z,target_x,target_y,target_z,up_x,up_y,up_z,fov_y_degrees`;
    /// default: framing the scene.
    #[arg(long)]
    pub camera: Option<String>,
    #[command(flatten)]
    backend: BackendArgs,
    /// Output image: .png (8-bit sRGB) or .exr (linear f32).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

impl View {
    /// The output path, or `default` when `-o` was not given; refuses unknown extensions and
    /// missing folders.
    pub fn out_or(&self, default: &str) -> Result<PathBuf> {
        let out = self.out.clone().unwrap_or_else(|| PathBuf::from(default));
        match out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("png" | "exr") => {}
            _ => return Err(format!("-o {}: the file name must end in .png or .exr", out.display()).into()),
        }
        match out.parent() {
            Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
                Err(format!("-o {}: the folder {} does not exist", out.display(), dir.display()).into())
            }
            _ => Ok(out),
        }
    }

    /// Checks the image size against the renderers' pixel indices, this machine's free
    /// memory and, on the GPU, its largest buffer.
    pub fn check(&self, backend: &Backend) -> Result<()> {
        limits::check_image(self.width, self.height, backend, limits::available_memory())
    }

    /// Every check of the shared flags, before any work: the output path (`default` without
    /// `-o`), the camera's form, the backend (an error if `gpu` finds no adapter) and the
    /// image size on it. Returns the output path and the backend.
    pub fn resolve(&self, default: &str, opts: &GpuOptions) -> Result<(PathBuf, Backend)> {
        let out = self.out_or(default)?;
        if let Some(c) = &self.camera {
            lumbre_raytrace::Camera::parse(c).map_err(|e| format!("--camera {c}: {e}"))?;
        }
        // The size against memory first, so that a refusal needs no GPU.
        self.check(&Backend::Cpu)?;
        let backend = self.backend.backend(opts)?;
        self.check(&backend)?;
        Ok((out, backend))
    }
}

#[derive(Subcommand)]
enum Command {
    /// List adapters and show the chosen one's features and limits.
    Info {
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Run benchmarks and print one table per benchmark.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    /// Render a scene with the Whitted ray tracer or the path tracer.
    Render {
        /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`).
        scene: PathBuf,
        #[command(flatten)]
        view: View,
        /// whitted (direct light, mirrors, glass) or path (global illumination, progressive).
        #[arg(long, value_enum, default_value_t = render::Method::Whitted)]
        method: render::Method,
        /// Samples per pixel, 1..=16777216 (Whitted: stratified; both render in batches).
        #[arg(long, default_value_t = 1)]
        spp: u32,
        /// Whitted: longest chain of reflections and refractions, 1..=12.
        #[arg(long, default_value_t = 5)]
        max_depth: u32,
        /// Path: longest path in bounces, 0..=1024 (1: direct light only, 0: emitters only).
        #[arg(long, default_value_t = lumbre_raytrace::PathOptions::default().max_bounces)]
        max_bounces: u32,
        /// Path: Russian roulette from this bounce on (beyond --max-bounces: none).
        #[arg(long, default_value_t = lumbre_raytrace::PathOptions::default().rr_depth)]
        rr_depth: u32,
        /// Write the image with the samples so far every this many seconds (> 0).
        #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
        write_every: f64,
        /// Kd-tree leaves: nodes with at most this many triangles (>= 1) are not split (the SAH
        /// may stop earlier). Default: lumbre_kdtree's `BuildOptions::default().max_leaf_size`.
        #[arg(long, default_value_t = lumbre_kdtree::BuildOptions::default().max_leaf_size)]
        leaf_size: u32,
    },
    /// Render a scene by ray-based density estimation: photon flights crossing a disk at
    /// each pixel's first hit give its irradiance; the image is direct light (the path
    /// tracer's next-event estimation) plus Kd / pi times the estimated indirect irradiance.
    Density {
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
        /// Disk radius (scene units); with --k, the largest radius.
        #[arg(long, default_value_t = 0.05)]
        radius: f32,
        /// Radius from the k-th nearest photon hit, clamped to [radius / 16, radius].
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
        /// shrinks (Hachisuka's progressive photon mapping), so the estimate converges.
        #[arg(long, default_value_t = 1)]
        passes: u32,
        /// The fraction of a pass's crossings a progressive disk keeps, in (0, 1].
        #[arg(long, default_value_t = 0.7)]
        alpha: f32,
    },
    /// Render a scene by lightcuts: virtual point lights (VPLs) from its emitters (a quarter
    /// on the emitters: direct light; the rest at every diffuse bounce of light paths until
    /// Russian roulette ends them: indirect light of every order), a light tree, and per
    /// pixel a cut of it whose clusters' error bounds are under --error of the pixel's
    /// estimate; or instant radiosity (every VPL). Visibility by shadow rays or imperfect
    /// shadow maps.
    ///
    /// What the defaults reach: full global illumination, at a mean relative error (as
    /// `lumbre compare` gives it) against the path tracer's 256x256 references of 2.74% on
    /// the Cornell box (set:cornell), 2.65% on set:bunny-room and 2.76% on set:two-lights
    /// with shadow rays (80000 VPLs; on an H100, 68-85 ms a frame); with --visibility ism
    /// (12000 VPLs, 128x128 maps) 3.97%, 4.59% and 5.72% (on the CPU; the GPU path computes
    /// the same, bit for bit on lavapipe, within 0.1 points on an H100). The paper's one
    /// bounce (--bounces 1, shadow rays) misses the later bounces: 19.67%, 35.16% and
    /// 36.44%. On set:open-ground (a 200 x 200 ground) 3.90% with shadow rays (CPU): the
    /// 1/d^2 clamp follows the view where the scene is far larger than it.
    Lightcuts {
        /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`);
        /// it needs an emitter (Ke > 0).
        scene: PathBuf,
        #[command(flatten)]
        view: View,
        /// VPLs, about (a quarter on the emitters, the rest at the bounces of light paths);
        /// default: 80000 with shadow rays, 12000 with --visibility ism.
        #[arg(long)]
        vpls: Option<u32>,
        /// The most diffuse bounces of a light path, each leaving a VPL, 1..=64 (1: the
        /// paper's one bounce of indirect light). With the default, paths run until Russian
        /// roulette ends them: full global illumination.
        #[arg(long, default_value_t = lumbre_lightcuts::MAX_BOUNCES)]
        bounces: u32,
        /// Russian roulette from this bounce on (0-based, as the path tracer's --rr-depth),
        /// 0..=64; at or beyond --bounces, every path runs --bounces bounces.
        #[arg(long, default_value_t = lumbre_lightcuts::RR_DEPTH)]
        rr_depth: u32,
        /// Relative error threshold of a cut, in [0, 1].
        #[arg(long, default_value_t = lumbre_lightcuts::CutOptions::default().error)]
        error: f32,
        /// Largest cut, in clusters.
        #[arg(long, default_value_t = lumbre_lightcuts::CutOptions::default().max_cut)]
        max_cut: u32,
        /// rays (exact shadow rays) or ism (imperfect shadow maps: on a GPU cheaper than
        /// shadow rays as scenes grow, 1 to 3 points further from the path tracer).
        #[arg(long, value_enum, default_value_t = lightcuts::VisibilityChoice::Rays)]
        visibility: lightcuts::VisibilityChoice,
        /// Side of each VPL's imperfect shadow map in texels: 32, 64 or 128.
        #[arg(long, default_value_t = lumbre_lightcuts::ism::IsmOptions::default().size)]
        ism_size: u32,
        /// lightcuts, or instant (every VPL for every pixel).
        #[arg(long, value_enum, default_value_t = lightcuts::MethodChoice::Lightcuts)]
        method: lightcuts::MethodChoice,
        /// Light tree: morton (on the backend) or greedy (the paper's, on the CPU).
        #[arg(long, value_enum, default_value_t = lightcuts::TreeChoice::Morton)]
        tree: lightcuts::TreeChoice,
        /// Also write each pixel's cut size as a false-colour image (.png or .exr).
        #[arg(long)]
        heatmap: Option<PathBuf>,
    },
    /// Render a point cloud as voxels through the sparse octree.
    Volume {
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
    },
    /// Low-rank radiosity of a scene: two meshes (2MF or 2MCE), form factors with
    /// visibility, the precompute (or a factor file), then the solve for one lighting or an
    /// animation of the emitters' intensity; the picture shows each element's radiance.
    Radiosity {
        /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`).
        scene: PathBuf,
        #[command(flatten)]
        view: View,
        /// Fine elements, about (n); default 24000 on the GPU, 4000 on the CPU. Mean relative
        /// error against the path-traced references (256x256, smooth): 1.7-2.3% at 24000 on
        /// set:cornell, set:bunny-room and set:two-lights, 6.3% on set:open-ground (its ground
        /// is meshed finer near the objects), 4.2-5.6% at 4000 (H100, H200).
        #[arg(long)]
        elements: Option<usize>,
        /// Coarse patches, about (k); default 1500 on the GPU, 250 on the CPU.
        #[arg(long)]
        patches: Option<usize>,
        /// 2mf (regular patches) or 2mce (patches split where the view changes).
        #[arg(long, value_enum, default_value_t = radiosity::MeshMethod::Fixed)]
        method: radiosity::MeshMethod,
        /// Form factor samples per element-patch pair (each with a shadow ray).
        #[arg(long, default_value_t = 16)]
        samples: u32,
        /// Store Y as its factors F and W (a third of the bytes per solve, no n k^2 product).
        #[arg(long)]
        factored: bool,
        /// Store Y (or F) in f16 on the GPU.
        #[arg(long)]
        f16: bool,
        /// Write the factorisation to this file (.lrr).
        #[arg(long, conflicts_with = "load")]
        save: Option<PathBuf>,
        /// Read the factorisation from this file instead of computing it (made for this
        /// scene and these meshes, else an error).
        #[arg(long)]
        load: Option<PathBuf>,
        /// Multiply the emitters' radiance by this.
        #[arg(long, default_value_t = 1.0)]
        light_scale: f32,
        /// Animate the emitters' intensity over this many frames (`out_000.png`, ...), 0..=3600,
        /// and print solves per second.
        #[arg(long, default_value_t = 0)]
        relight: u32,
        /// Interpolate the radiosity from the elements' corners instead of flat elements.
        #[arg(long)]
        smooth: bool,
        /// Primary rays per pixel (stratified), 1..=16777216.
        #[arg(long, default_value_t = 4)]
        spp: u32,
    },
    /// The scene set: list the named scenes (`set:NAME`, accepted wherever a scene file goes)
    /// with their triangles, lights, bounds, camera and reference image; optionally write them
    /// as OBJ + MTL or render their small CPU references.
    Scenes {
        /// Only these scenes of the set (default: all).
        names: Vec<String>,
        /// Write each scene as DIR/NAME.obj and DIR/NAME.mtl (the folder is created).
        #[arg(long, value_name = "DIR")]
        write: Option<PathBuf>,
        /// Render each scene's small reference (the path tracer on the CPU, 32x32 or 16x16 at
        /// 16 samples per pixel, one batch: the same bits on every run) as DIR/NAME.exr.
        #[arg(long, value_name = "DIR")]
        small: Option<PathBuf>,
    },
    /// Compare a rendering with a reference: RMSE, relative error (overall and per region)
    /// and CIE94 ΔE, with an optional false-colour difference image.
    Compare(compare::CompareArgs),
    /// Run every capability on the bundled data; write outputs and a report.
    #[command(mut_arg(
        "backend",
        |a| gpu_by_default(a).help("`cpu` runs only the CPU paths; `gpu` (default) runs both, GPU where available")
    ))]
    Demo {
        /// Folder for the outputs and report.md.
        #[arg(short, long, default_value = "lumbre-demo")]
        out: PathBuf,
        #[command(flatten)]
        backend: BackendArgs,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Every global-illumination method (path tracer, density estimation, low-rank
    /// radiosity, lightcuts, instant radiosity) at its defaults on every scene of the set
    /// (`lumbre scenes`), against the path-traced references: GPU time, wall time, mean
    /// relative error, and the path tracer's error at the same GPU time.
    #[command(mut_arg("backend", gpu_by_default))]
    Gi {
        /// Scenes of the set to run (default: every one with a reference).
        scenes: Vec<String>,
        /// Write every image and its error map into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Scan, compaction, radix sort, Morton encoding and the histogram pyramid, GPU vs copy
    /// kernel vs CPU.
    #[command(mut_arg("backend", |a| gpu_by_default(a).help("`cpu` skips the GPU columns")))]
    Primitives {
        /// Cap every size at 2^this elements, 16..=28 (the defaults are the issue's: scan and
        /// compaction 2^28, sort and Morton 2^26).
        #[arg(long, default_value_t = 28)]
        max_log2: u32,
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
        /// Polls of an unpublished predecessor before a scan or compaction tile reduces its
        /// input itself (the look-back fallback).
        #[arg(long, default_value_t = lumbre_compact::Lookback::default().spin_limit)]
        lookback_spins: u32,
        /// Run only the rows whose operation contains this (e.g. `compact`, `Morton`,
        /// `histogram pyramid`), to measure a row quickly or in a process of its own.
        #[arg(long)]
        only: Option<String>,
    },
    /// The kd-tree ray tracer on suzanne, teapot, the bunny and 1M generated triangles.
    #[command(mut_arg("backend", gpu_by_default))]
    Raytrace {
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
        /// Kd-tree leaves: nodes with at most this many triangles are not split (the SAH may
        /// stop earlier). Default: lumbre_kdtree's `BuildOptions::default().max_leaf_size`.
        #[arg(long, default_value_t = lumbre_kdtree::BuildOptions::default().max_leaf_size)]
        leaf_size: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// The sparse octree on phantom clouds of the thesis's sizes: keys, build, update, ray
    /// tracing, and memory against depth.
    #[command(mut_arg("backend", gpu_by_default))]
    Octree {
        /// Largest point count to include (the thesis's go up to 3283639).
        #[arg(long, default_value_t = 3_283_639)]
        max_points: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Low-rank radiosity on the generated box at the paper's sizes (n = 3456 .. 221184,
    /// k = 216 .. 3456): solves per second (Y and its factors, f32 and f16) against the copy
    /// kernel and the CPU, precompute times, and the low-rank error against the full solve.
    #[command(mut_arg("backend", gpu_by_default))]
    Radiosity {
        /// `s:t` pairs (s x s elements and t x t patches per wall); default: the paper's 12.
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<String>,
        /// Form factor samples per element-patch pair.
        #[arg(long, default_value_t = 16)]
        samples: u32,
        /// Time solves on synthetic factorisations (no form factors or precompute).
        #[arg(long)]
        synthetic: bool,
        /// Largest n k whose precompute runs on the CPU when there is no GPU (larger sizes are
        /// timed on synthetic factorisations).
        #[arg(long, default_value_t = 4_000_000)]
        cpu_pairs: usize,
        /// Skip the CPU solve column.
        #[arg(long)]
        no_cpu: bool,
        /// Elements per wall side of the error table (n = 6 s^2; 0 skips it).
        #[arg(long, default_value_t = 48)]
        error_side: u32,
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Density estimation: the paper's Table 1 workloads by every method, CPU and GPU.
    #[command(mut_arg("backend", gpu_by_default))]
    Density {
        /// How many of Table 1's rows (1e4x1e4, 1e5x1e5, 1e5x5e5, 1e5x1e6, 1e6x1e7).
        #[arg(long, default_value_t = 4)]
        rows: usize,
        /// Comma-separated: brute, octree, octree-hp, bvh.
        #[arg(long, default_value = "brute,octree,octree-hp,bvh")]
        methods: String,
        /// Skip the CPU rows (the GPU results are still checked against the CPU's BVH).
        #[arg(long)]
        no_cpu: bool,
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Lightcuts on the diffuse Cornell box: frames by stage for lightcuts and instant
    /// radiosity (the paper's Table 5 and beyond), lightcuts' error against instant
    /// radiosity, cut sizes per cluster metric and builder, the greedy build's time.
    #[command(mut_arg("backend", gpu_by_default))]
    Lightcuts {
        /// VPL counts of the frame table (the paper's Table 5: 110,420,930,2550; beyond:
        /// 10000,100000,1000000).
        #[arg(long, value_delimiter = ',', default_values_t = [110, 420, 930])]
        vpls: Vec<u32>,
        /// Side of the frame table's square image (the paper's: 1000).
        #[arg(long, default_value_t = 128)]
        size: u32,
        /// Visibility of the frame table: rays, ism or both (comma-separated).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [lightcuts::VisibilityChoice::Rays, lightcuts::VisibilityChoice::Ism])]
        visibility: Vec<lightcuts::VisibilityChoice>,
        /// Side of each VPL's imperfect shadow map: 32, 64 or 128.
        #[arg(long, default_value_t = lumbre_lightcuts::ism::IsmOptions::default().size)]
        ism_size: u32,
        /// Instant radiosity, and lightcuts' error against it, up to this many VPLs.
        #[arg(long, default_value_t = 2550)]
        instant_max: u32,
        /// Entries of each pixel's heap of refinable clusters (GPU: 32, 64 or 128).
        #[arg(long, default_value_t = lumbre_lightcuts::CutOptions::default().heap)]
        heap: u32,
        /// VPL counts of the cut-size table (the paper's Tables 2 and 3); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [110, 930])]
        cut_vpls: Vec<u32>,
        /// Side of the cut-size table's square image.
        #[arg(long, default_value_t = 64)]
        cut_size: u32,
        /// VPL counts of the greedy build's timing (CPU); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000])]
        greedy: Vec<u32>,
        /// VPL counts of the ISM build table (GPU: splat and pull-push of 64x64 maps, then
        /// pull-push of the paper's 3968x3968 atlas); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000, 100000])]
        ism_vpls: Vec<u32>,
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        #[arg(long, default_value_t = 3)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Copy-kernel bandwidth over a size sweep beside a CPU memcpy.
    #[command(mut_arg("backend", |a| gpu_by_default(a).help("Skip the GPU columns")))]
    Roofline {
        /// Smallest size, as log2 of bytes (at least 4).
        #[arg(long, default_value_t = 20)]
        min_log2: u32,
        /// Largest size, as log2 of bytes, at least --min-log2 (default: 30, or the device's
        /// max_buffer_size when smaller; a larger value given here is an error).
        #[arg(long)]
        max_log2: Option<u32>,
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
        /// Also time copy kernels that each add one feature (uniform length, barrier, shared
        /// memory, atomics, strided loads) at the largest size.
        #[arg(long)]
        variants: bool,
    },
}

/// Longest path `--max-bounces` allows: far beyond any visible contribution, and short
/// enough that a closed box of mirrors without Russian roulette still ends.
const MAX_BOUNCES: u32 = 1024;

/// `--warmup` and `--repeats` of the benchmarks: at least one timed run.
fn check_effort(warmup: usize, repeats: usize) -> Result<bench::Effort> {
    if repeats == 0 {
        return Err("--repeats 0: must be at least 1".into());
    }
    Ok(bench::Effort { warmup, repeats })
}

fn print_tables(tables: &[table::Table], json: bool) {
    if json {
        let all: Vec<String> = tables.iter().map(|t| t.json()).collect();
        println!("[{}]", all.join(", "));
    } else {
        for t in tables {
            println!("{}", t.text());
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut opts = GpuOptions::from_env();
    if cli.adapter.is_some() {
        opts.adapter = cli.adapter.clone();
    }
    let result = match cli.command {
        Command::Info { json } => info::run(&opts, json),
        Command::Volume { cloud, view, depth, level, mode, max_depth, orbit, moving, background } => (|| {
            let mode = volume::mode(&mode)?;
            limits::in_range("--depth", depth, 1, lumbre_octree::MAX_DEPTH)?;
            let level = level.unwrap_or(depth);
            if level > depth {
                return Err(format!("--level {level} is deeper than --depth {depth}: must be 0..={depth}").into());
            }
            limits::in_range("--max-depth", max_depth, 1, lumbre_raytrace::MAX_TRACE_DEPTH)?;
            limits::in_range("--orbit", orbit, 0, limits::MAX_FRAMES)?;
            limits::in_range("--move", moving, 0, limits::MAX_FRAMES)?;
            if orbit > 0 && moving > 0 {
                return Err(format!(
                    "--orbit {orbit} and --move {moving}: choose one (an orbit of a moving cloud is not supported)"
                )
                .into());
            }
            // A luminance of 1 or more would drop every pixel.
            if !(0.0..1.0).contains(&background) {
                return Err(format!("--background {background}: must be in [0, 1)").into());
            }
            let (out, backend) = view.resolve("volume.png", &opts)?;
            let options = lumbre_raytrace::VolumeOptions {
                width: view.width,
                height: view.height,
                mode,
                level,
                max_depth,
                ..Default::default()
            };
            let args = volume::VolumeArgs {
                cloud,
                depth,
                options,
                camera: view.camera.clone(),
                out,
                orbit,
                moving,
                background_threshold: background,
            };
            volume::run(&args, &backend)
        })(),
        Command::Render { scene, view, method, spp, max_depth, max_bounces, rr_depth, write_every, leaf_size } => {
            (|| {
                limits::in_range("--spp", spp, 1, lumbre_raytrace::MAX_SPP)?;
                if method == render::Method::Whitted {
                    limits::in_range("--max-depth", max_depth, 1, lumbre_raytrace::MAX_TRACE_DEPTH)?;
                } else {
                    limits::in_range("--max-bounces", max_bounces, 0, MAX_BOUNCES)?;
                }
                if !(write_every.is_finite() && write_every > 0.0) {
                    return Err(format!("--write-every {write_every}: must be a positive number of seconds").into());
                }
                if leaf_size == 0 {
                    return Err("--leaf-size 0: must be at least 1".into());
                }
                let (out, backend) = view.resolve("render.png", &opts)?;
                let options = lumbre_raytrace::RenderOptions {
                    width: view.width,
                    height: view.height,
                    spp,
                    max_depth,
                    ..Default::default()
                };
                let build = lumbre_kdtree::BuildOptions { max_leaf_size: leaf_size, ..Default::default() };
                let args = render::RenderArgs {
                    scene,
                    out,
                    method,
                    options,
                    path: render::PathArgs { max_bounces, rr_depth },
                    write_every,
                    build,
                    camera: view.camera.clone(),
                };
                render::run(&args, &backend)
            })()
        }
        Command::Radiosity {
            scene,
            view,
            elements,
            patches,
            method,
            samples,
            factored,
            f16,
            save,
            load,
            light_scale,
            relight,
            smooth,
            spp,
        } => (|| {
            limits::in_range("--spp", spp, 1, lumbre_raytrace::MAX_SPP)?;
            limits::in_range("--relight", relight, 0, limits::MAX_FRAMES)?;
            let (out, backend) = view.resolve("radiosity.png", &opts)?;
            let (default_elements, default_patches) = radiosity::default_counts(&backend);
            let args = radiosity::RadiosityArgs {
                scene,
                elements: elements.unwrap_or(default_elements),
                patches: patches.unwrap_or(default_patches),
                method,
                samples,
                factored,
                f16,
                save,
                load,
                light_scale,
                relight,
                smooth,
                spp,
                width: view.width,
                height: view.height,
                camera: view.camera.clone(),
                out,
            };
            radiosity::run(&args, &backend)
        })(),
        Command::Density { scene, view, photons, radius, k, irradiance, indirect_only, spp, seed, passes, alpha } => {
            (|| {
                limits::in_range("--passes", passes, 1, 100_000)?;
                let (out, backend) = view.resolve("density.exr", &opts)?;
                let spp = spp.unwrap_or_else(|| density::default_spp(&backend));
                limits::in_range("--spp", spp, 1, lumbre_raytrace::MAX_SPP)?;
                let args = density::DensityArgs {
                    scene,
                    out,
                    camera: view.camera.clone(),
                    width: view.width,
                    height: view.height,
                    options: density::DensityOptions {
                        photons: photons.unwrap_or_else(|| density::default_photons(&backend)),
                        radius,
                        k,
                        irradiance,
                        indirect_only,
                        spp,
                        seed,
                        passes,
                        alpha,
                    },
                };
                density::run(&args, &backend)
            })()
        }
        Command::Lightcuts {
            scene,
            view,
            vpls,
            bounces,
            rr_depth,
            error,
            max_cut,
            visibility,
            ism_size,
            method,
            tree,
            heatmap,
        } => (|| {
            let options = lightcuts::LightcutsOptions {
                vpls: vpls.unwrap_or(lightcuts::default_vpls(visibility)),
                bounces,
                rr_depth,
                error,
                max_cut,
                visibility,
                ism_size,
                method,
                tree,
            };
            options.check()?;
            let heatmap = match heatmap {
                Some(h) => Some(View { out: Some(h), ..view.clone() }.out_or("")?),
                None => None,
            };
            let (out, backend) = view.resolve("lightcuts.exr", &opts)?;
            let args = lightcuts::LightcutsArgs {
                scene,
                out,
                heatmap,
                camera: view.camera.clone(),
                width: view.width,
                height: view.height,
                options,
            };
            lightcuts::run(&args, &backend)
        })(),
        Command::Scenes { names, write, small } => scenes::run(&names, write.as_deref(), small.as_deref()),
        Command::Compare(args) => compare::run(&args),
        Command::Demo { out, backend } => demo::run(&opts, &out, &backend),
        Command::Bench { which } => match which {
            BenchCommand::Octree { max_points, depth, warmup, repeats, json, backend } => (|| {
                limits::in_range("--depth", depth, 1, lumbre_octree::MAX_DEPTH)?;
                let effort = check_effort(warmup, repeats)?;
                let counts: Vec<usize> = bench::octree::COUNTS.iter().copied().filter(|&c| c <= max_points).collect();
                if counts.is_empty() {
                    return Err(format!(
                        "--max-points {max_points} is below the smallest point count, {}",
                        bench::octree::COUNTS[0]
                    )
                    .into());
                }
                let backend = backend.backend(&opts)?;
                let tables = bench::octree::octree(&backend, &counts, depth, effort)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Raytrace { scenes, frames, cpu_frames, no_generated, leaf_size, json, backend } => (|| {
                if frames == 0 {
                    return Err("--frames 0: must be at least 1".into());
                }
                if leaf_size == 0 {
                    return Err("--leaf-size 0: must be at least 1".into());
                }
                let mut list = bench::raytrace::standard(scenes.as_deref());
                if no_generated {
                    list.retain(|s| !matches!(s, bench::raytrace::BenchScene::Generated(_)));
                }
                if let Some(dir) = &scenes {
                    bench::raytrace::check_scene_dir(dir, &list)?;
                }
                let backend = backend.backend(&opts)?;
                let build = lumbre_kdtree::BuildOptions { max_leaf_size: leaf_size, ..Default::default() };
                let t = bench::raytrace::raytrace(&backend, &list, &build, frames, cpu_frames)?;
                print_tables(&[t], json);
                Ok(())
            })(
            ),
            BenchCommand::Primitives { max_log2, warmup, repeats, json, backend, lookback_spins, only } => (|| {
                limits::in_range("--max-log2", max_log2, 16, 28)?;
                let effort = check_effort(warmup, repeats)?;
                // Inputs, outputs and the CPU's copies: about 16 bytes per element at the largest size.
                let (need, available) = (16u64 << max_log2, limits::available_memory());
                if need > available {
                    return Err(format!(
                        "--max-log2 {max_log2}: about {} of memory needed, more than the {} available: lower it",
                        limits::human(need),
                        limits::human(available)
                    )
                    .into());
                }
                let backend = backend.backend(&opts)?;
                let lookback = lumbre_compact::Lookback { spin_limit: lookback_spins, ..Default::default() };
                let tables = bench::primitives::primitives(&backend, max_log2, effort, lookback, only.as_deref())?;
                print_tables(&tables, json);
                Ok(())
            })(
            ),
            BenchCommand::Radiosity {
                sizes,
                samples,
                synthetic,
                cpu_pairs,
                no_cpu,
                error_side,
                warmup,
                repeats,
                json,
                backend,
            } => (|| {
                let sizes = bench::radiosity::parse_sizes(&sizes)?;
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.backend(&opts)?;
                let options =
                    bench::radiosity::Options { samples, synthetic, cpu_pairs, cpu: !no_cpu, error_side, effort };
                let tables = bench::radiosity::radiosity(&backend, &sizes, &options)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Gi { scenes, out, json, backend } => (|| {
                let backend = backend.backend(&opts)?;
                let table = bench::gi::run(&scenes, &backend, out.as_deref())?;
                print_tables(&[table], json);
                Ok(())
            })(),
            BenchCommand::Density { rows, methods, no_cpu, warmup, repeats, json, backend } => (|| {
                let methods = bench::density::parse_methods(&methods)?;
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.backend(&opts)?;
                let tables = bench::density::density(&backend, rows, methods, !no_cpu, effort)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Lightcuts {
                vpls,
                size,
                visibility,
                ism_size,
                instant_max,
                heap,
                cut_vpls,
                cut_size,
                greedy,
                ism_vpls,
                warmup,
                repeats,
                json,
                backend,
            } => (|| {
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.backend(&opts)?;
                let skip_zero = |v: Vec<u32>| -> Vec<u32> { if v == [0] { Vec::new() } else { v } };
                let options = bench::lightcuts::Options {
                    size,
                    vpls,
                    visibility,
                    ism_size,
                    instant_max,
                    heap,
                    cut_vpls: skip_zero(cut_vpls),
                    cut_size,
                    greedy: skip_zero(greedy),
                    ism_vpls: skip_zero(ism_vpls),
                    effort,
                };
                let tables = bench::lightcuts::lightcuts(&backend, &options)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Roofline { min_log2, max_log2, warmup, repeats, json, backend, variants } => (|| {
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.backend(&opts)?;
                let cap = backend.gpu().map_or(63, |g| 63 - g.limits().max_buffer_size.leading_zeros());
                // The CPU copies hold a source and a destination of the largest size.
                let memory = 63 - (limits::available_memory() / 2).max(1).leading_zeros();
                let most = cap.min(memory);
                let max = match max_log2 {
                    Some(m) => {
                        limits::in_range("--max-log2", m, min_log2, most).map_err(|e| match backend.gpu() {
                            Some(_) => format!(
                                "{e} (the GPU's max_buffer_size is 2^{cap} bytes; free memory holds twice 2^{memory})"
                            ),
                            None => format!("{e} (free memory holds twice 2^{memory} bytes)"),
                        })?;
                        m
                    }
                    None => 30.min(most),
                };
                limits::in_range("--min-log2", min_log2, 4, max)?;
                let mut tables = vec![bench::roofline::roofline(&backend, min_log2, max, effort)?];
                if let (true, Some(g)) = (variants, backend.gpu()) {
                    tables.push(bench::roofline::copy_variants(g, 1 << max.min(30), effort)?);
                }
                print_tables(&tables, json);
                Ok(())
            })(),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
