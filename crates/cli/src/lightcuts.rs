//! `lumbre lightcuts`: a scene lit by virtual point lights (VPLs) made from its
//! emitters (direct light by VPLs on the emitters themselves, indirect light by VPLs at
//! the diffuse bounces of light paths), each pixel shaded by a lightcut over a light tree
//! or by instant radiosity (every VPL), with visibility by shadow rays or imperfect shadow
//! maps.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use lumbre_gpu::{Backend, Compute, Progress, Report};
use lumbre_lightcuts::ism::{IsmOptions, SIZES};
use lumbre_lightcuts::{
    CutOptions, CutPixel, DIRECT_SHARE, GreedyTree, ISM_VPLS, MAX_BOUNCES, Method, MortonTree, RAYS_VPLS, RR_DEPTH,
    Render, Rendering, Rows, TreeBuilder, View, Visibility, VplOptions, cut_heatmap,
};
use lumbre_raytrace::{Camera, Image, Prepared};

use crate::backend::{BackendArgs, BackendChoice, OnBackend};
use crate::error::{Error, Result};
use crate::gpus::GpuList;
use crate::limits::distinct_outputs;
use crate::out::out;
use crate::part::{Part, run_hash};
use crate::progress::{bar_progress, progress};
use crate::shard::{Shard, ShardSpec};
use crate::spread::{DeviceShare, spread_frames};
use crate::view::image_path;

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
#[derive(Args)]
pub struct LightcutsArgs {
    /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`);
    /// it needs an emitter (Ke > 0).
    scene: PathBuf,
    #[command(flatten)]
    view: crate::view::View,
    #[command(flatten)]
    structure: crate::view::Structure,
    /// VPLs, about (a quarter on the emitters, the rest at the bounces of light paths);
    /// default: 80000 with shadow rays, 12000 with --visibility ism.
    #[arg(long)]
    vpls: Option<u32>,
    /// The most diffuse bounces of a light path, each leaving a VPL, 1..=64 (1: the
    /// paper's one bounce of indirect light). With the default, paths run until Russian
    /// roulette ends them: full global illumination.
    #[arg(long, default_value_t = MAX_BOUNCES)]
    bounces: u32,
    /// Russian roulette from this bounce on (0-based, as the path tracer's --rr-depth),
    /// 0..=64; at or beyond --bounces, every path runs --bounces bounces.
    #[arg(long, default_value_t = RR_DEPTH)]
    rr_depth: u32,
    /// Relative error threshold of a cut, in [0, 1].
    #[arg(long, default_value_t = CutOptions::default().error)]
    error: f32,
    /// Largest cut, in clusters.
    #[arg(long, default_value_t = CutOptions::default().max_cut)]
    max_cut: u32,
    /// rays (exact shadow rays) or ism (imperfect shadow maps: on a GPU cheaper than
    /// shadow rays as scenes grow, 1 to 3 points further from the path tracer).
    #[arg(long, value_enum, default_value_t = VisibilityChoice::Rays)]
    visibility: VisibilityChoice,
    /// Side of each VPL's imperfect shadow map in texels: 32, 64 or 128.
    #[arg(long, default_value_t = IsmOptions::default().size)]
    ism_size: u32,
    /// lightcuts, or instant (every VPL for every pixel).
    #[arg(long, value_enum, default_value_t = MethodChoice::Lightcuts)]
    method: MethodChoice,
    /// Light tree: morton (on the backend) or greedy (the paper's, on the CPU).
    #[arg(long, value_enum, default_value_t = TreeChoice::Morton)]
    tree: TreeChoice,
    /// Also write each pixel's cut size as a false-colour image (.png or .exr).
    #[arg(long)]
    heatmap: Option<PathBuf>,
    /// Spread the image's rows over these GPUs (`all`, a count N, or adapter indices #I or
    /// I,J as `lumbre info` lists them): bands of rows, four a GPU, taken as each frees up; the
    /// image is the same bits as on one of them.
    #[arg(long, value_name = "all|N|#I|I,J")]
    gpus: Option<GpuList>,
    /// Render the I-th (from 0) of N bands of the image's rows and write it as a partial
    /// result (`-o NAME.lpart`) for `lumbre merge`; `auto/N` reads I from
    /// JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.
    #[arg(long, value_name = "I/N")]
    shard: Option<ShardSpec>,
}

/// The image `lumbre lightcuts` writes without `-o`.
const OUT: &str = "lightcuts.exr";

/// `--visibility`: how a VPL's visibility from a point is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VisibilityChoice {
    /// Imperfect shadow maps: one small depth map per VPL, splatted from points on the scene.
    Ism,
    /// Exact: a shadow ray through the kd-tree.
    Rays,
}

/// `--method`: how the pixels are shaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodChoice {
    /// A cut of the light tree per pixel, refined until each cluster's error bound is under
    /// `--error` times the pixel's estimate.
    Lightcuts,
    /// Instant radiosity: every VPL for every pixel (the reference of lightcuts).
    Instant,
}

/// `--tree`: how the light tree is built (lightcuts only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TreeChoice {
    /// Greedy agglomerative clustering (the paper's; on the CPU, also for the GPU backend).
    Greedy,
    /// Morton order and a radix tree (on the backend).
    Morton,
}

/// How `lumbre lightcuts` renders.
#[derive(Clone, Copy, Debug)]
pub struct LightcutsOptions {
    /// VPLs asked for: a quarter on the emitters, the rest at the diffuse bounces of light
    /// paths (about: paths that leave the scene leave none).
    pub vpls: u32,
    /// The most diffuse bounces of a light path, each leaving a VPL.
    pub bounces: u32,
    /// Russian roulette decides whether a path goes on after each bounce from this one on
    /// (0-based); at or beyond `bounces`, every path runs `bounces` bounces.
    pub rr_depth: u32,
    /// Relative error threshold of a cut.
    pub error: f32,
    /// Largest cut.
    pub max_cut: u32,
    pub visibility: VisibilityChoice,
    /// Side of each imperfect shadow map in texels.
    pub ism_size: u32,
    pub method: MethodChoice,
    pub tree: TreeChoice,
}

/// VPLs of `lumbre lightcuts` without `--vpls`: as many as `visibility` needs to come within
/// its stated error of the path tracer on the Cornell box (`ISM_VPLS`, `RAYS_VPLS`).
pub fn default_vpls(visibility: VisibilityChoice) -> u32 {
    match visibility {
        VisibilityChoice::Ism => ISM_VPLS,
        VisibilityChoice::Rays => RAYS_VPLS,
    }
}

impl Default for LightcutsOptions {
    /// Full global illumination (light paths until Russian roulette ends them) with shadow
    /// rays and as many VPLs as they need to come within 3.5% of the path tracer on the
    /// Cornell box (the `Lightcuts` command's help gives the errors measured).
    fn default() -> Self {
        let cut = CutOptions::default();
        LightcutsOptions {
            vpls: RAYS_VPLS,
            bounces: MAX_BOUNCES,
            rr_depth: RR_DEPTH,
            error: cut.error,
            max_cut: cut.max_cut,
            visibility: VisibilityChoice::Rays,
            ism_size: IsmOptions::default().size,
            method: MethodChoice::Lightcuts,
            tree: TreeChoice::Morton,
        }
    }
}

/// Host bytes per VPL of a render on the CPU, stages together: the paths' VPLs as traced
/// (about 70) and as one list (36), the tree's Morton keys and order (32), its nodes (two of
/// 64 per VPL) and the list in the GPU layout (48), rounded up.
const HOST_BYTES_PER_VPL: u64 = 320;

/// Most bytes the imperfect shadow maps may take on the CPU (one f32 per texel per VPL); on
/// a GPU the device's limits decide.
const MAX_CPU_ATLAS_BYTES: u64 = 4 << 30;

impl LightcutsOptions {
    /// Checks every value, naming the flag and its allowed range.
    pub fn check(&self) -> Result<()> {
        let max_vpls = (1u32 << 31) - 1;
        if self.vpls == 0 || self.vpls > max_vpls {
            return Err(format!("--vpls must be in 1..={max_vpls}, got {}", self.vpls).into());
        }
        if self.bounces == 0 || self.bounces > MAX_BOUNCES {
            return Err(format!("--bounces must be in 1..={MAX_BOUNCES}, got {}", self.bounces).into());
        }
        if self.rr_depth > MAX_BOUNCES {
            return Err(format!("--rr-depth must be in 0..={MAX_BOUNCES}, got {}", self.rr_depth).into());
        }
        if !(self.error.is_finite() && (0.0..=1.0).contains(&self.error)) {
            return Err(
                format!("--error must be a number in [0, 1] (a fraction: 0.02 is 2%), got {}", self.error).into()
            );
        }
        if self.max_cut == 0 {
            return Err("--max-cut must be 1 or more (a cut holds at least the root), got 0".into());
        }
        // Checked with shadow rays too: a bad value is refused even where it is not used.
        if !SIZES.contains(&self.ism_size) {
            return Err(format!("--ism-size must be one of {SIZES:?}, got {}", self.ism_size).into());
        }
        Ok(())
    }

    /// Refuses, naming the flags: on the CPU, VPLs and their light tree larger than the memory
    /// free ([`HOST_BYTES_PER_VPL`]) and imperfect shadow maps larger than
    /// [`MAX_CPU_ATLAS_BYTES`]; on a GPU, maps larger than its largest buffer.
    pub fn check_memory(&self, backend: &Backend) -> Result<()> {
        let bytes = self.vpls as u64 * (self.ism_size as u64).pow(2) * 4;
        if self.visibility == VisibilityChoice::Ism && backend.gpu().is_none() && bytes > MAX_CPU_ATLAS_BYTES {
            return Err(format!(
                "--vpls {} with --ism-size {}: the shadow maps would take {:.1} GiB, at most {} GiB on the CPU \
                 (fewer VPLs, a smaller --ism-size, or --visibility rays)",
                self.vpls,
                self.ism_size,
                bytes as f64 / (1u64 << 30) as f64,
                MAX_CPU_ATLAS_BYTES >> 30
            )
            .into());
        }
        let host = self.vpls as u64 * HOST_BYTES_PER_VPL;
        let available = crate::limits::available_memory();
        if backend.gpu().is_none() && host > available {
            return Err(format!(
                "--vpls {}: the VPLs and their light tree would take {}, more than the {} available (fewer VPLs)",
                self.vpls,
                crate::limits::human(host),
                crate::limits::human(available)
            )
            .into());
        }
        if let (VisibilityChoice::Ism, Some(gpu)) = (self.visibility, backend.gpu()) {
            // Lookups bind the whole atlas at once.
            let limits = gpu.limits();
            let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
            if bytes > most {
                return Err(format!(
                    "--vpls {} with --ism-size {}: the shadow maps would take {:.1} GiB, more than {}'s largest \
                     binding of {:.1} GiB (fewer VPLs, a smaller --ism-size, or --visibility rays)",
                    self.vpls,
                    self.ism_size,
                    bytes as f64 / (1u64 << 30) as f64,
                    gpu.adapter_name(),
                    most as f64 / (1u64 << 30) as f64
                )
                .into());
            }
        }
        Ok(())
    }

    /// About `vpls` VPLs in `prepared`: a quarter on the emitters, the rest from light paths
    /// leaving one at each diffuse bounce. Paths that run until roulette ends them are
    /// counted by a pilot of a few thousand paths on the CPU; paths of a fixed length by
    /// dividing by `bounces`.
    pub fn vpl_options(&self, prepared: &Prepared) -> Result<VplOptions> {
        let base = VplOptions { bounces: self.bounces, rr_depth: self.rr_depth, ..VplOptions::default() };
        if base.until_roulette() {
            return base.with_count(prepared, self.vpls, DIRECT_SHARE).map_err(Error::from);
        }
        let direct = self.vpls / 4;
        let paths = ((self.vpls - direct) / self.bounces.max(1)).max(1);
        Ok(VplOptions { direct, paths, ..base })
    }

    /// `lightcuts` or `instant`.
    pub fn method_name(&self) -> &'static str {
        match self.method {
            MethodChoice::Lightcuts => "lightcuts",
            MethodChoice::Instant => "instant",
        }
    }

    /// The crate's renderer for `view` of `prepared`.
    pub fn render(&self, view: View, prepared: &Prepared) -> Result<Render> {
        let method = match self.method {
            MethodChoice::Lightcuts => {
                Method::Lightcuts(CutOptions { error: self.error, max_cut: self.max_cut, ..CutOptions::default() })
            }
            MethodChoice::Instant => Method::Instant,
        };
        let visibility = match self.visibility {
            VisibilityChoice::Ism => Visibility::Ism(IsmOptions { size: self.ism_size, ..IsmOptions::default() }),
            VisibilityChoice::Rays => Visibility::Rays,
        };
        let tree = match self.tree {
            TreeChoice::Greedy => TreeBuilder::Greedy(GreedyTree::default()),
            TreeChoice::Morton => TreeBuilder::Morton(MortonTree::default()),
        };
        Ok(Render { view, vpls: self.vpl_options(prepared)?, tree, method, visibility, ..Render::default() })
    }
}

/// The image and what it took.
pub struct Lit {
    pub image: Image,
    /// Per pixel, its cut (empty for instant radiosity).
    pub cuts: Vec<CutPixel>,
    /// VPLs made.
    pub vpls: u32,
    /// The image's first row in the whole image (a band's; 0 for a whole render).
    pub first_row: u32,
    /// Every stage's time and the statistics (VPLs, average and largest cut, queries).
    pub report: Report,
    /// One line: VPLs, the time of each stage, the cut sizes.
    pub summary: String,
}

/// Renders `prepared` from `camera` at `width` x `height` with `o` on `backend`.
pub fn render(
    prepared: &Prepared,
    camera: Camera,
    width: u32,
    height: u32,
    o: &LightcutsOptions,
    backend: &Backend,
    progress: &dyn Progress,
) -> Result<Lit> {
    render_band(prepared, View { camera, width, height }, None, o, backend, progress)
}

/// [`render`] of the band `rows` of the view's image (all rows for `None`): its pixels are
/// those of the whole image's render, bit for bit.
pub fn render_band(
    prepared: &Prepared,
    view: View,
    rows: Option<Rows>,
    o: &LightcutsOptions,
    backend: &Backend,
    progress: &dyn Progress,
) -> Result<Lit> {
    o.check()?;
    o.check_memory(backend)?;
    let render = Render { rows, ..o.render(view, prepared)? };
    let t = Instant::now();
    let placed = backend.place(&render, prepared)?;
    let upload = t.elapsed();
    let t = Instant::now();
    let (out, mut report) = render.run_placed(&placed, progress)?;
    let wall = t.elapsed();
    // The GPU time of the whole frame: the VPLs' submission (and a greedy tree, built on the
    // host) beside the last submission's passes; the download is no part of it.
    if report.gpu.is_some() {
        report.gpu = Some(stage_times(&report).iter().sum());
    }
    let summary = summary(&render, &report, (out.vpls, o.vpls), upload, wall);
    Ok(Lit { image: out.image, cuts: out.cuts, vpls: out.vpls, first_row: out.first_row, report, summary })
}

/// The stages a frame's time is split into, in order.
pub const STAGES: [&str; 6] = ["vpls", "tree", "gbuffer", "ism", "pull-push", "shading"];

/// The stage of a pass label of the GPU path (or a stage name of the CPU path).
pub fn stage_of(label: &str) -> &'static str {
    match label {
        "vpls" => "vpls",
        "gbuffer" => "gbuffer",
        "ism points" | "ism splat" => "ism",
        "ism pull-push" => "pull-push",
        "lightcuts" | "instant radiosity" => "shading",
        _ => "tree",
    }
}

/// The time of each of [`STAGES`] in `report` (the download of the image and cuts, and an
/// upload, are no part of a frame).
pub fn stage_times(report: &Report) -> [Duration; 6] {
    let mut s = [Duration::ZERO; 6];
    for (label, d) in report.stages.iter().filter(|(l, _)| l != "download" && l != "upload") {
        let k = STAGES.iter().position(|&x| x == stage_of(label)).unwrap_or(1);
        s[k] += *d;
    }
    s
}

/// `2450 VPLs (2500 asked, 2 bounces), ism visibility; VPLs 1.2 ms, tree 3.4 ms, ...;
/// frame 9.9 ms (wall 12 ms, upload 3 ms); average cut 61.2 (largest 210)`.
fn summary(render: &Render, report: &Report, (vpls, asked): (u32, u32), upload: Duration, wall: Duration) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let times = stage_times(report);
    let shading = match render.method {
        Method::Lightcuts(_) => "cuts and shading",
        Method::Instant => "instant radiosity",
    };
    let stages: Vec<String> = STAGES
        .iter()
        .zip(times)
        .filter(|(s, d)| !d.is_zero() || !matches!(**s, "ism" | "pull-push" | "tree"))
        .map(|(s, d)| {
            let name = match *s {
                "ism" => "ISMs",
                "vpls" => "VPLs",
                "gbuffer" => "G-buffer",
                "shading" => shading,
                other => other,
            };
            format!("{name} {:.1} ms", ms(d))
        })
        .collect();
    let mut line = format!(
        "{vpls} VPLs ({asked} asked, {}), {} visibility; {}; frame {:.1} ms (wall {:.1} ms, upload {:.1} ms)",
        bounces_text(&render.vpls),
        render.visibility.name(),
        stages.join(", "),
        ms(times.iter().sum()),
        ms(wall),
        ms(upload),
    );
    if let (Some(avg), Some(max)) = (report.get("average cut"), report.get("largest cut")) {
        line += &format!("; average cut {avg:.1} (largest {max:.0}");
        for flag in ["inexact pixels", "max-cut pixels"] {
            if let Some(n) = report.get(flag).filter(|&n| n > 0.0) {
                line += &format!(", {n:.0} {flag}");
            }
        }
        line.push(')');
    }
    if let Some(q) = report.get("visibility queries") {
        line += &format!("; {q:.0} visibility queries");
    }
    line
}

/// How the light paths ran: `bounces until roulette (from 3, at most 64)` or `2 bounces`.
fn bounces_text(o: &VplOptions) -> String {
    if o.until_roulette() {
        format!("bounces until roulette (from {}, at most {})", o.rr_depth, o.bounces)
    } else {
        format!("{} bounce{}", o.bounces, if o.bounces == 1 { "" } else { "s" })
    }
}

/// Whether `backend` is lavapipe (llvmpipe).
pub fn is_lavapipe(backend: &Backend) -> bool {
    backend.gpu().is_some_and(|g| g.adapter_name().contains("llvmpipe"))
}

/// What lavapipe's loop limit does to lightcuts with shadow rays.
pub const LAVAPIPE_LOOPS: &str = "lavapipe ends a shader's loop nest after 65535 iterations: with shadow rays, a pixel \
    whose cut takes more kd-tree steps than that stops early, so its cut and radiance can differ from the CPU's";

impl LightcutsArgs {
    /// The options the flags ask for (`--vpls` by default as many as `--visibility` needs).
    fn options(&self) -> LightcutsOptions {
        LightcutsOptions {
            vpls: self.vpls.unwrap_or(default_vpls(self.visibility)),
            bounces: self.bounces,
            rr_depth: self.rr_depth,
            error: self.error,
            max_cut: self.max_cut,
            visibility: self.visibility,
            ism_size: self.ism_size,
            method: self.method,
            tree: self.tree,
        }
    }
}

impl OnBackend for LightcutsArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        self.structure.check()?;
        self.options().check()?;
        if let Some(path) = &self.heatmap {
            if self.method != MethodChoice::Lightcuts {
                return Err("--heatmap shows cut sizes: it needs --method lightcuts".into());
            }
            image_path("--heatmap", path)?;
            let out = self.view.out.as_deref().unwrap_or(Path::new(OUT));
            distinct_outputs(("-o", out), ("--heatmap", path))?;
        }
        if self.gpus.is_some() && self.view.backend.backend != BackendChoice::Gpu {
            return Err("--gpus needs --backend gpu".into());
        }
        if let Some(spec) = self.shard {
            let shard = spec.resolve_env()?;
            if shard.count > self.view.height {
                return Err(format!("--shard {shard}: more parts than the image's {} rows", self.view.height).into());
            }
            if self.heatmap.is_some() {
                return Err(
                    format!("--shard {shard} with --heatmap: merge the parts, then render the heatmap whole").into()
                );
            }
        }
        self.view.check_sharded(OUT, self.shard.is_some())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let shard = self.shard.map(|s| s.resolve_env()).transpose()?;
        let out = self.view.out_sharded(OUT, backend, shard.is_some())?;
        let o = &self.options();
        o.check_memory(backend)?;
        if is_lavapipe(backend) && o.visibility == VisibilityChoice::Rays && o.method == MethodChoice::Lightcuts {
            eprintln!("warning: {LAVAPIPE_LOOPS}");
        }
        let (width, height) = (self.view.width, self.view.height);
        let t = Instant::now();
        let (mut scene, camera) =
            crate::render::load_scene(&self.scene, self.view.camera.as_deref(), self.view.aspect())?;
        // Traced with the emission normalised, scaled back in the image: a dim scene's light
        // would underflow in the VPLs' f32 intensities.
        let unit = scene.normalize_emission();
        let prepared = Prepared::new(scene, &self.structure.options());
        let load = t.elapsed();
        let view = View { camera, width, height };
        let rows = shard.map(|s| Rows::from(s.range(height)));
        let (mut lit, devices) = match &self.gpus {
            Some(list) => {
                let devices = list.open(backend)?;
                let (lit, shares) = spread_bands(&devices, &prepared, view, rows, o)?;
                (lit, Some(shares))
            }
            None => {
                let bar = progress(0, "lightcuts");
                let lit = render_band(&prepared, view, rows, o, backend, &bar_progress(&bar))?;
                bar.finish_and_clear();
                (lit, None)
            }
        };
        if let Some(shard) = shard {
            let description = self.run_description(&camera, o, backend)?;
            lightcuts_part(&lit, (width, height), unit, shard, &description).save(&out)?;
        } else {
            lit.image.pixels.iter_mut().for_each(|p| *p *= unit);
            lit.image.save(&out)?;
        }
        let mut written = out.display().to_string();
        if let Some(path) = &self.heatmap {
            // Red at the largest cut allowed: the ramp spans every size a cut can have.
            let map = cut_heatmap(&lit.cuts, width, height, o.max_cut)?;
            map.save(path)?;
            written += &format!(", cut sizes (blue 1 .. red {}) -> {}", o.max_cut, path.display());
        }
        out!(
            "{}: {} triangles on {}, load and kd-tree {:.1} ms; {}: {} -> {written}",
            self.scene.display(),
            prepared.tris.len(),
            backend.describe(),
            load.as_secs_f64() * 1e3,
            o.method_name(),
            lit.summary,
        )?;
        for d in devices.iter().flatten() {
            out!("  {}: {} bands of rows in {:.1} ms", d.name, d.done, d.render.as_secs_f64() * 1e3)?;
        }
        Ok(())
    }
}

impl LightcutsArgs {
    /// What decides a lightcuts run's bits except the shard: the run hash of its parts.
    fn run_description(&self, camera: &Camera, o: &LightcutsOptions, backend: &Backend) -> Result<String> {
        let scene = crate::part::scene_id(&self.scene)?;
        Ok(format!(
            "lightcuts {scene} camera {camera:?} {}x{} {o:?} {} backend {}",
            self.view.width,
            self.view.height,
            self.structure.name(),
            backend.name()
        ))
    }
}

/// The band `rows` (all rows for `None`) spread over `devices` in four bands a device, taken as
/// each frees up, and put back together: the band's pixels and cuts as one device renders them.
fn spread_bands(
    devices: &[Backend],
    prepared: &Prepared,
    view: View,
    rows: Option<Rows>,
    o: &LightcutsOptions,
) -> Result<(Lit, Vec<DeviceShare>)> {
    let band = rows.unwrap_or(Rows { start: 0, end: view.height });
    let count = (4 * devices.len() as u32).min(band.len());
    let bands: Vec<Rows> = (0..count)
        .map(|j| {
            let at = |j: u32| band.start + (band.len() as u64 * j as u64 / count as u64) as u32;
            Rows { start: at(j), end: at(j + 1) }
        })
        .collect();
    let done = std::sync::Mutex::new(Vec::new());
    let bar = progress(count as u64, "bands");
    let shares = spread_frames(
        devices,
        0..count,
        &bar,
        |device| Ok(device.clone()),
        |device, j| {
            let b = bands[j as usize];
            let lit = render_band(prepared, view, Some(b), o, device, &())?;
            let time = lit.report.gpu.unwrap_or_else(|| lit.report.total());
            done.lock().map_err(|_| "a device's thread failed")?.push(lit);
            Ok(time)
        },
    )?;
    bar.finish_and_clear();
    let parts = done.into_inner().map_err(|_| "a device's thread failed")?;
    let renderings = parts.into_iter().map(|p| Rendering {
        image: p.image,
        cuts: p.cuts,
        vpls: p.vpls,
        queries: p.report.get("queries").unwrap_or(0.0) as u64,
        first_row: p.first_row,
    });
    let whole = Rendering::assemble(renderings, view.height)?;
    let lit_pixels = whole.cuts.iter().filter(|c| c.size > 0).count().max(1);
    let summary = format!(
        "{} VPLs; {count} bands of rows over {} devices; average cut {:.1} (largest {}); {} visibility queries",
        whole.vpls,
        devices.len(),
        whole.cuts.iter().map(|c| c.size as f64).sum::<f64>() / lit_pixels as f64,
        whole.cuts.iter().map(|c| c.size).max().unwrap_or(0),
        whole.queries
    );
    let lit = Lit {
        image: whole.image,
        cuts: whole.cuts,
        vpls: whole.vpls,
        first_row: whole.first_row,
        report: Report::default(),
        summary,
    };
    Ok((lit, shares))
}

/// A band's part file: per pixel its radiance (f32 bits, red and green in one word, blue in
/// the next), before the emission unit, which the merge applies as the whole run does.
fn lightcuts_part(lit: &Lit, (width, height): (u32, u32), unit: f32, shard: Shard, description: &str) -> Part {
    let mut fields = BTreeMap::new();
    for (k, v) in [
        ("width", width.to_string()),
        ("image_height", height.to_string()),
        ("height", lit.image.height.to_string()),
        ("first_row", lit.first_row.to_string()),
        ("vpls", lit.vpls.to_string()),
        ("unit", format!("{:08x}", unit.to_bits())),
    ] {
        fields.insert(k.to_string(), v);
    }
    let data = lit
        .image
        .pixels
        .iter()
        .flat_map(|p| [(p.x.to_bits() as u64) << 32 | p.y.to_bits() as u64, p.z.to_bits() as u64])
        .collect();
    Part { kind: "lightcuts".into(), run: run_hash(description.as_bytes()), shard, fields, data }
}

/// The image of a lightcuts run's parts (bands of rows), checked to cover every row once.
pub fn merge_lightcuts(parts: &[(&Path, Part)]) -> Result<Image> {
    let mut bands = Vec::new();
    let (path0, first) = &parts[0];
    let (width, height): (u32, u32) = (first.field(path0, "width")?, first.field(path0, "image_height")?);
    let unit_text: String = first.field(path0, "unit")?;
    let unit = u32::from_str_radix(&unit_text, 16)
        .map(f32::from_bits)
        .map_err(|_| format!("{}: unit {unit_text}: not f32 bits in hex", path0.display()))?;
    for (path, part) in parts {
        let (w, rows, first_row, vpls): (u32, u32, u32, u32) = (
            part.field(path, "width")?,
            part.field(path, "height")?,
            part.field(path, "first_row")?,
            part.field(path, "vpls")?,
        );
        let same = |k: &str| part.fields.get(k) == first.fields.get(k);
        if w != width || !same("unit") || !same("image_height") {
            return Err(
                format!("{}: another image width or emission unit than {}", path.display(), path0.display()).into()
            );
        }
        part.expect_pixels(path, 2, w, rows)?;
        let f = |bits: u64| f32::from_bits(bits as u32);
        let pixels = part.data.chunks_exact(2).map(|d| glam::Vec3::new(f(d[0] >> 32), f(d[0]), f(d[1]))).collect();
        let image = Image::from_pixels(w, rows, pixels)?;
        let cuts = vec![CutPixel::default(); image.pixels.len()];
        bands.push(Rendering { image, cuts, vpls, queries: 0, first_row });
    }
    let mut whole = Rendering::assemble(bands, height)?;
    whole.image.pixels.iter_mut().for_each(|p| *p *= unit);
    Ok(whole.image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_times_sum_the_passes_of_each_stage() {
        let mut r = Report::default();
        r.add_stage("ism splat", Duration::from_millis(2));
        r.add_stage("ism points", Duration::from_millis(1));
        r.add_stage("lightcuts", Duration::from_millis(5));
        r.add_stage("download", Duration::from_millis(9));
        let t = stage_times(&r);
        assert_eq!((t[3], t[5]), (Duration::from_millis(3), Duration::from_millis(5)));
        assert_eq!(t.iter().sum::<Duration>(), Duration::from_millis(8));
    }
}
