//! `lumbre radiosity`: low-rank radiosity of a triangle scene. Two meshes (2MF or 2MCE), the
//! memory and time they will take stated (and refused when they cannot fit), form factors
//! with visibility and the precompute (or a factor file), then the solve for one lighting or
//! an animation of the emitters' intensity. On the GPU the factorisation is made and kept
//! there (`--gpus`: in parts of whole patches, one a GPU); `--shard` writes a part's form
//! factors for `lumbre merge`. The picture casts primary rays to the elements and shows their
//! radiance `B / pi`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{MultiProgress, ProgressBar};
use lumbre_gpu::{Backend, Compute, Gpu, Placed};
use lumbre_radiosity::{
    Coherence, Factorization, FormFactors, GpuFactor, GpuFactored, LowRank, Precompute, Radiosity, Resources, Shading,
    Solve, Storage, Surfaces, TwoMesh, render_radiosity,
};

use crate::backend::{BackendArgs, BackendChoice, OnBackend};
use crate::error::Result;
use crate::gpus::GpuList;
use crate::limits::{MAX_FRAMES, available_memory, distinct_outputs, folder_exists, human, in_range};
use crate::out::out;
use crate::progress::{bar_progress, progress};
use crate::shard::{Shard, ShardSpec};
use crate::view::View;

/// How the two meshes are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MeshMethod {
    /// Regular patches on large faces, grouped ones elsewhere, to the counts asked for.
    #[value(name = "2mf")]
    Fixed,
    /// Patches split where the view of the scene changes (the paper's Algorithm 1), to the
    /// number of patches asked for.
    #[value(name = "2mce")]
    Coherent,
}

/// Low-rank radiosity of a scene: two meshes (2MF or 2MCE), form factors with
/// visibility, the precompute (or a factor file), then the solve for one lighting or an
/// animation of the emitters' intensity; the picture shows each element's radiance.
#[derive(Args)]
pub struct RadiosityArgs {
    /// The scene: OBJ (MTL next to it), glTF (.gltf, .glb) or set:NAME (`lumbre scenes`).
    scene: PathBuf,
    #[command(flatten)]
    view: View,
    /// Fine elements, about (n); default 24000 on a GPU, 4000 on the CPU and lavapipe. Mean relative
    /// error against the path-traced references (256x256, smooth): 1.7-2.3% at 24000 on
    /// set:cornell, set:bunny-room and set:two-lights, 6.3% on set:open-ground (its ground
    /// is meshed finer near the objects), 4.2-5.6% at 4000 (H100, H200).
    #[arg(long)]
    elements: Option<usize>,
    /// Coarse patches, about (k); default 1500 on a GPU, 250 on the CPU and lavapipe.
    #[arg(long)]
    patches: Option<usize>,
    /// 2mf (regular patches) or 2mce (patches split where the view changes).
    #[arg(long, value_enum, default_value_t = MeshMethod::Fixed)]
    method: MeshMethod,
    /// Form factor samples per element-patch pair (each with a shadow ray), 1..=4096.
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
    /// Spread the form factors, the precompute and the solves over these GPUs (`all`, a count
    /// N, or adapter indices #I or I,J as `lumbre info` lists them): each makes and keeps the
    /// rows of whole patches, about as many on each; the radiosity is the same bits as on one
    /// of them.
    #[arg(long, value_name = "all|N|#I|I,J", conflicts_with = "load")]
    gpus: Option<GpuList>,
    /// Make the form factors of the I-th (from 0) of N parts of the element rows (whole
    /// patches, about n / N rows) and write them as a partial result (`-o NAME.lpart`);
    /// `lumbre merge` makes the factorisation (.lrr) of the N parts, which `--load` renders.
    /// `auto/N` reads I from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["load", "save", "gpus", "relight"])]
    shard: Option<ShardSpec>,
}

/// The image `lumbre radiosity` writes without `-o`.
const OUT: &str = "radiosity.png";
/// Most `--samples` per element-patch pair.
const MAX_SAMPLES: u32 = 4096;

impl OnBackend for RadiosityArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.view.backend
    }

    fn check(&self) -> Result<()> {
        in_range("--spp", self.spp, 1, lumbre_raytrace::MAX_SPP)?;
        in_range("--relight", self.relight, 0, MAX_FRAMES)?;
        in_range("--samples", self.samples, 1, MAX_SAMPLES)?;
        if self.gpus.is_some() && self.view.backend.backend != BackendChoice::Gpu {
            return Err("--gpus needs --backend gpu".into());
        }
        if let Some(save) = &self.save {
            folder_exists("--save", save)?;
            distinct_outputs(("-o", self.view.out.as_deref().unwrap_or(Path::new(OUT))), ("--save", save))?;
        }
        if let Some(spec) = self.shard {
            spec.resolve_env()?;
        }
        self.view.check_sharded(OUT, self.shard.is_some())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let shard = self.shard.map(|s| s.resolve_env()).transpose()?;
        let out = self.view.out_sharded(OUT, backend, shard.is_some())?;
        let (elements, patches) = default_counts(backend);
        let counts = Counts { elements: self.elements.unwrap_or(elements), patches: self.patches.unwrap_or(patches) };
        self.radiosity(&out, counts, backend, shard)
    }
}

/// `--elements` and `--patches`, or their defaults on the backend.
#[derive(Clone, Copy)]
struct Counts {
    elements: usize,
    patches: usize,
}

/// Pair samples per second of the form factors on a GPU, for the time estimate: an H100
/// made 3.2e7 in the bunny room and 1.3e9 in the Cornell box (benches/RESULTS.md); the
/// estimate takes the slower.
const GPU_PAIR_SAMPLES: f64 = 3.0e7;
/// How much slower lavapipe makes the form factors than the CPU path on the same cores
/// (4000 x 249 in the Cornell box on 2 cores: 30.5 s against 7.1 s, whole runs).
const LAVAPIPE_SLOWDOWN: f64 = 6.0;
/// Element-patch pairs timed on the CPU to estimate the form factors' time.
const CPU_PROBE_PAIRS: usize = 256;
/// Host memory of the process before the run's own data: the program, the scene's file
/// buffers and, on the GPU, the driver (lavapipe's compiler the largest seen).
const PROCESS_BASE_CPU: u64 = 96 << 20;
const PROCESS_BASE_GPU: u64 = 512 << 20;

/// The default `--elements` and `--patches`: what reaches about 2-3% error on the GPU in
/// well under a second, and what the CPU makes within a minute on 2 cores (about 5%);
/// lavapipe, a GPU made of the CPU's cores, gets the CPU's.
pub fn default_counts(backend: &Backend) -> (usize, usize) {
    match backend {
        Backend::Gpu(_) if !crate::lightcuts::is_lavapipe(backend) => (24_000, 1500),
        _ => (4000, 250),
    }
}

/// A time estimate in the unit a reader takes in at once: seconds, minutes or hours.
fn duration_words(seconds: f64) -> String {
    match seconds {
        s if s < 90.0 => format!("{s:.1} s"),
        s if s < 5400.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// `out.png` for one picture, `out_007.png` for frame 7 of an animation.
fn frame_path(out: &Path, frame: Option<u32>) -> PathBuf {
    match frame {
        None => out.to_path_buf(),
        Some(i) => {
            let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("radiosity");
            let ext = out.extension().and_then(|s| s.to_str()).unwrap_or("png");
            out.with_file_name(format!("{stem}_{i:03}.{ext}"))
        }
    }
}

/// The meshes of `args` over `surfaces`.
fn meshes(args: &RadiosityArgs, counts: Counts, surfaces: Surfaces) -> Result<TwoMesh> {
    let (mesh, note) = match args.method {
        MeshMethod::Fixed => {
            let (mesh, report) = TwoMesh::fixed(surfaces, counts.elements, counts.patches)?;
            (mesh, report.note)
        }
        MeshMethod::Coherent => {
            let bar = progress(0, "2MCE patches measured");
            let opts = Coherence { target: Some(counts.patches), ..Coherence::default() };
            let base = (counts.patches / 16).max(1);
            let (mesh, report) = TwoMesh::coherent(surfaces, counts.elements, base, &opts, &bar_progress(&bar))?;
            bar.finish_and_clear();
            eprintln!(
                "2MCE: {} patches from {base} ({} splits, {} measured, threshold {:.4})",
                report.patches, report.splits, report.evaluated, report.threshold
            );
            (mesh, report.counts.note)
        }
    };
    if let Some(note) = note {
        eprintln!("warning: {note}");
    }
    Ok(mesh)
}

/// The resources of the run, stated on one line, or an error naming the flags to change
/// when the host cannot hold them.
fn check_resources(args: &RadiosityArgs, counts: Counts, triangles: usize, backend: &Backend) -> Result<(u64, String)> {
    let storage = if args.f16 { Storage::F16 } else { Storage::F32 };
    // The cells: at least one per triangle, and about one per element.
    let cells = triangles.max(counts.elements);
    let r =
        Resources::estimate(counts.elements, counts.patches, cells, triangles, args.samples, args.factored, storage);
    let host = match backend {
        Backend::Cpu => r.cpu_host + PROCESS_BASE_CPU,
        Backend::Gpu(_) => r.gpu_host + PROCESS_BASE_GPU,
    };
    let available = available_memory();
    let flags = format!("--elements {} --patches {}", counts.elements, counts.patches);
    if host > available {
        let hint = if matches!(backend, Backend::Cpu) { ", or use --backend gpu" } else { "" };
        return Err(format!(
            "{flags}: the run needs about {} of host memory, more than the {} available: lower --elements or \
             --patches{hint}",
            human(host),
            human(available)
        )
        .into());
    }
    let mut line = format!("resources for {flags}: host memory about {}", human(host));
    if let Backend::Gpu(_) = backend {
        line += &format!(", GPU memory about {}", human(r.gpu));
    }
    Ok((host, line))
}

/// The form factors' time on `backend`: on the CPU, [`CPU_PROBE_PAIRS`] pairs spread over
/// the matrix timed on one thread and scaled to all pairs and threads; on a GPU, the pairs at
/// [`GPU_PAIR_SAMPLES`].
fn form_factor_seconds(ff: &FormFactors, mesh: &TwoMesh, backend: &Backend) -> f64 {
    let (n, k) = (mesh.n(), mesh.k());
    let pair_samples = (n * k) as f64 * ff.samples.max(1) as f64;
    let lavapipe = crate::lightcuts::is_lavapipe(backend);
    if backend.gpu().is_some() && !lavapipe {
        return pair_samples / GPU_PAIR_SAMPLES;
    }
    let clusters = mesh.clusters();
    let occ = lumbre_radiosity::Occluders::of(mesh);
    let probes = CPU_PROBE_PAIRS.min(n * k);
    let t = Instant::now();
    for i in 0..probes {
        let h = lumbre_raytrace::sampling::hash_u32(i as u32 ^ 0x9e37_79b9) as usize;
        let (e, p) = ((i * n / probes + h % (n / probes).max(1)) % n, h % k);
        std::hint::black_box(ff.pair(&occ, &clusters, e as u32, p as u32));
    }
    let cpu = t.elapsed().as_secs_f64() * (n * k) as f64 / probes.max(1) as f64 / rayon::current_num_threads() as f64;
    if lavapipe { cpu * LAVAPIPE_SLOWDOWN } else { cpu }
}

/// The factorisation placed for the solves: on one backend, or in parts on several GPUs
/// (each the rows of whole patches, in row order).
enum Factor<'a> {
    One(Box<Placed<'a, Solve>>),
    Parts(Vec<(Gpu, GpuFactor)>),
}

impl Factor<'_> {
    /// The radiosity of every element for each lighting of `solve`, and the GPU time (on
    /// several GPUs, the slowest one's; none on the CPU).
    fn solve(&self, solve: &Solve) -> Result<(Radiosity, Option<Duration>)> {
        match self {
            Factor::One(placed) => {
                let (b, report) = solve.run_placed(placed, &())?;
                Ok((b, report.gpu))
            }
            Factor::Parts(parts) => {
                let solved: Vec<Result<(Radiosity, lumbre_gpu::Report)>> = std::thread::scope(|scope| {
                    let handles: Vec<_> = parts
                        .iter()
                        .map(|(gpu, part)| {
                            scope.spawn(move || Ok(solve.run_placed(&Placed::Gpu(gpu.clone(), part.clone()), &())?))
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|_| Err("a GPU's solve failed".into())))
                        .collect()
                });
                let n = parts.first().map_or(0, |(_, p)| p.n);
                let mut all = vec![vec![[0.0; 3]; n]; solve.lights.len()];
                let mut slowest = Duration::ZERO;
                for ((_, factor), part) in parts.iter().zip(solved) {
                    let (b, report) = part?;
                    slowest = slowest.max(report.gpu.unwrap_or_default());
                    all.iter_mut().zip(&b.0).for_each(|(a, rows)| factor.scatter(rows, a));
                }
                Ok((Radiosity(all), Some(slowest)))
            }
        }
    }
}

/// The factorisation made in parts on the GPUs of `--gpus`, one bar a GPU: the parts, a line
/// on each GPU's rows and time, and the slowest GPU's time.
fn factor_parts(
    args: &RadiosityArgs,
    list: &GpuList,
    mesh: &TwoMesh,
    backend: &Backend,
) -> Result<(Factor<'static>, String, Option<Duration>)> {
    let storage = if args.f16 { Storage::F16 } else { Storage::F32 };
    let ff = FormFactors { samples: args.samples, ..FormFactors::default() };
    let pc = Precompute { factored: args.factored, ..Precompute::default() };
    let devices = list.open(backend)?;
    let gpus: Vec<Gpu> = devices.iter().filter_map(|d| d.gpu().cloned()).collect();
    let bars = MultiProgress::new();
    let device_bars: Vec<ProgressBar> =
        devices.iter().map(|d| bars.add(progress(mesh.n() as u64, &d.describe()))).collect();
    let t = Instant::now();
    let made = GpuFactor::compute_parts(&gpus, mesh, &ff, &pc, storage, args.save.is_some(), &|i, stage, done, _| {
        device_bars[i].set_message(format!("{} {stage}", devices[i].describe()));
        device_bars[i].set_position(done.min(mesh.n() as u64));
    })?;
    device_bars.iter().for_each(ProgressBar::finish_and_clear);
    let slowest = made.iter().map(GpuFactored::gpu_time).max().unwrap_or_default();
    let mut how = format!(
        "form factors, precompute and layout on {} GPUs: {} GPU (the slowest), {} wall ({} samples per pair)",
        gpus.len(),
        ms(slowest),
        ms(t.elapsed()),
        args.samples
    );
    for (d, part) in devices.iter().zip(&made) {
        let rows = &part.factor.rows;
        how += &format!(
            "\n  {}: {} elements in {} chunks, {} ({})",
            d.describe(),
            rows.iter().map(|r| r.len()).sum::<usize>(),
            rows.len(),
            ms(part.gpu_time()),
            part.report
        );
    }
    if let Some(path) = &args.save {
        let pairs: Vec<(&Gpu, &GpuFactored)> = gpus.iter().zip(&made).collect();
        GpuFactored::download_parts(&pairs, mesh)?.save(path)?;
        how += &format!("\n  saved to {}", path.display());
    }
    let parts = gpus.into_iter().zip(made.into_iter().map(|m| m.factor)).collect();
    Ok((Factor::Parts(parts), how, Some(slowest)))
}

/// The factorisation placed for the solve: loaded from `--load`, made on the CPU, or made
/// and kept on the GPU (and written to `--save`), or on the GPUs of `--gpus`. Returns it and a
/// line on how it was made.
fn factor<'a>(
    args: &RadiosityArgs,
    mesh: &TwoMesh,
    backend: &Backend,
    loaded: &'a mut Option<Factorization>,
) -> Result<(Factor<'a>, String, Option<Duration>)> {
    let storage = if args.f16 { Storage::F16 } else { Storage::F32 };
    if let Some(path) = &args.load {
        let t = Instant::now();
        let f = loaded.insert(Factorization::load(path, Some(mesh.fingerprint()))?);
        let how = format!("loaded {} in {}", path.display(), ms(t.elapsed()));
        return Ok((Factor::One(Box::new(backend.place(&Solve { storage, ..Solve::default() }, f)?)), how, None));
    }
    if let Some(list) = &args.gpus {
        return factor_parts(args, list, mesh, backend);
    }
    let ff = FormFactors { samples: args.samples, ..FormFactors::default() };
    let pc = Precompute { factored: args.factored, ..Precompute::default() };
    let bar = progress(mesh.n() as u64, "form factors");
    match backend {
        Backend::Gpu(gpu) => {
            let t = Instant::now();
            let made = GpuFactor::compute(gpu, mesh, &ff, &pc, storage, args.save.is_some(), &bar_progress(&bar))?;
            bar.finish_and_clear();
            let mut how = format!(
                "form factors, precompute and layout on the GPU: {} GPU, {} wall ({} samples per pair; {})",
                ms(made.gpu_time()),
                ms(t.elapsed()),
                args.samples,
                made.report
            );
            if let Some(path) = &args.save {
                made.download(gpu, mesh)?.save(path)?;
                how += &format!("; saved to {}", path.display());
            }
            let time = made.gpu_time();
            Ok((Factor::One(Box::new(Placed::Gpu(gpu.clone(), made.factor))), how, Some(time)))
        }
        Backend::Cpu => {
            let t = Instant::now();
            let (f, _) = ff.cpu_reported(mesh, &bar_progress(&bar))?;
            let ff_time = t.elapsed();
            let lr = LowRank::of_mesh(mesh, f)?;
            let t = Instant::now();
            let (p, report) = pc.run_cpu(&lr, &bar_progress(&bar))?;
            bar.finish_and_clear();
            let factor = loaded.insert(p.factor.with_fingerprint(mesh.fingerprint()));
            let mut how = format!(
                "form factors {} ({} samples per pair), precompute {} ({report})",
                ms(ff_time),
                args.samples,
                ms(t.elapsed())
            );
            if let Some(path) = &args.save {
                factor.save(path)?;
                how += &format!("; saved to {}", path.display());
            }
            Ok((Factor::One(Box::new(Placed::Cpu(factor))), how, None))
        }
    }
}

/// The process's peak resident memory (Linux), for the summary.
pub fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

impl RadiosityArgs {
    /// The form factors of `shard`'s element rows of `mesh`, written as its part to `out`.
    fn form_factor_part(
        &self,
        mesh: &TwoMesh,
        backend: &Backend,
        shard: Shard,
        out: &Path,
        wall: Instant,
    ) -> Result<()> {
        let rows =
            lumbre_radiosity::rows_in_parts(&mesh.patch_start, shard.count as usize)[shard.index as usize].clone();
        let ff = FormFactors { samples: self.samples, ..FormFactors::default() };
        let bar = progress(rows.len() as u64, "form factors");
        let t = Instant::now();
        let f = match backend {
            Backend::Gpu(gpu) => {
                let pc = Precompute::default();
                lumbre_radiosity::FactorPart::begin(gpu, mesh, &ff, &pc, rows.clone(), &bar_progress(&bar))?
                    .form_factors()?
            }
            Backend::Cpu => {
                let clusters = mesh.clusters();
                ff.matrix_rows(&lumbre_radiosity::Occluders::of(mesh), &clusters, rows.clone(), &bar_progress(&bar))
            }
        };
        bar.finish_and_clear();
        let description = format!(
            "radiosity {} elements {} patches {} method {:?} samples {} factored {} fingerprint {:016x} backend {}",
            crate::part::scene_id(&self.scene)?,
            mesh.n(),
            mesh.k(),
            self.method,
            self.samples,
            self.factored,
            mesh.fingerprint(),
            backend.name()
        );
        crate::radiosity_part::radiosity_part(mesh, &f, self.factored, shard, &description).save(out)?;
        out!(
            "form factors of elements {}..{} of {} (shard {shard}) in {} on {} -> {} (wall {:.2} s)",
            rows.start,
            rows.end,
            mesh.n(),
            ms(t.elapsed()),
            backend.describe(),
            out.display(),
            wall.elapsed().as_secs_f64()
        )?;
        Ok(())
    }

    /// The meshes, the factorisation and the solve; the picture (or the frames of `--relight`)
    /// into `out`.
    fn radiosity(&self, out: &Path, counts: Counts, backend: &Backend, shard: Option<Shard>) -> Result<()> {
        if !(self.light_scale.is_finite() && self.light_scale >= 0.0) {
            return Err(format!("--light-scale must be a finite number >= 0, got {}", self.light_scale).into());
        }
        lumbre_radiosity::TwoMesh::check_request(counts.elements, counts.patches)?;
        let t = Instant::now();
        let (scene, camera, loaded) =
            crate::render::load_scene_counted(&self.scene, self.view.camera.as_deref(), self.view.aspect())?;
        let load = t.elapsed();
        // Wall time from the loaded scene to the written image, as the other commands count it.
        let wall = Instant::now();
        if scene.emissive_triangles().is_empty() {
            return Err(format!(
                "{}: no emitting triangles (a material with Ke > 0): radiosity lights a scene by its emitters",
                self.scene.display()
            )
            .into());
        }
        let (announced, line) = check_resources(self, counts, scene.triangles.len(), backend)?;
        out!("{line}")?;
        let t = Instant::now();
        let mesh = meshes(self, counts, Surfaces::from_scene(scene)?)?;
        let a = mesh.area_stats();
        out!(
            "{}: {loaded}, load {}; n = {} elements (area {:.3e} .. {:.3e}, spread {:.1}%), k = {} patches ({:?}, {} \
         pieces), kd-tree and meshes in {}",
            self.scene.display(),
            ms(load),
            mesh.n(),
            a.min,
            a.max,
            100.0 * a.cv,
            mesh.k(),
            self.method,
            mesh.pieces.len(),
            ms(t.elapsed())
        )?;
        if self.load.is_none() {
            let ff = FormFactors { samples: self.samples, ..FormFactors::default() };
            out!(
                "form factors: {} x {} pairs, {} samples each, about {} on {}",
                mesh.n(),
                mesh.k(),
                self.samples,
                duration_words(form_factor_seconds(&ff, &mesh, backend)),
                backend.name()
            )?;
        }
        if let Some(shard) = shard {
            return self.form_factor_part(&mesh, backend, shard, out, wall);
        }
        let mut held = None;
        let (placed, how, factor_gpu) = factor(self, &mesh, backend, &mut held)?;
        match placed {
            Factor::One(_) => out!("{how} on {}", backend.describe())?,
            Factor::Parts(_) => out!("{how}")?,
        }

        // One lighting, or a ramp of the emitters' intensity over the frames.
        let frames = self.relight.max(1);
        let lights: Vec<Vec<[f32; 3]>> = (0..frames)
            .map(|i| {
                let s =
                    if self.relight > 0 { self.light_scale * (i + 1) as f32 / frames as f32 } else { self.light_scale };
                mesh.emission_scaled(s)
            })
            .collect();
        let storage = if self.f16 { Storage::F16 } else { Storage::F32 };
        // Each frame as its own solve (what an interactive relighting does), then all at once.
        let mut solutions = Vec::with_capacity(lights.len());
        let (mut kernel, mut solve_wall) = (Duration::ZERO, Duration::ZERO);
        for light in &lights {
            let solve = Solve { lights: vec![light.clone()], storage, block_rows: None };
            let t = Instant::now();
            let (b, gpu) = placed.solve(&solve)?;
            let w = t.elapsed();
            solve_wall += w;
            kernel += gpu.unwrap_or(w);
            solutions.push(b.0.into_iter().next().unwrap_or_default());
        }
        let per = |d: Duration| d.as_secs_f64() / frames as f64;
        out!(
            "solve ({storage:?}): {:.3} ms per lighting ({:.0} solves/s), {:.3} ms wall",
            per(kernel) * 1e3,
            1.0 / per(kernel).max(1e-12),
            per(solve_wall) * 1e3
        )?;
        if frames > 1 {
            let solve = Solve { lights: lights.clone(), storage, block_rows: None };
            let t = Instant::now();
            let (_, gpu) = placed.solve(&solve)?;
            let all = gpu.unwrap_or_else(|| t.elapsed());
            out!(
                "relighting: {frames} lightings in one pass over Y: {} ({:.0} solves/s)",
                ms(all),
                frames as f64 / all.as_secs_f64().max(1e-12)
            )?;
        }
        let shading = if self.smooth { Shading::Smooth } else { Shading::Flat };
        let bar = progress(solutions.len() as u64, "images");
        for (i, b) in solutions.iter().enumerate() {
            let image = render_radiosity(&mesh, b, &camera, self.view.width, self.view.height, self.spp, shading);
            let path = frame_path(out, (self.relight > 0).then_some(i as u32));
            image.save(&path)?;
            bar.inc(1);
        }
        bar.finish_and_clear();
        let peak = peak_memory().map(|p| format!("peak host memory {} of {} announced, ", human(p), human(announced)));
        // GPU time: the factorisation and every solve (none on the CPU).
        let gpu = match backend {
            Backend::Gpu(_) => format!("GPU {}, ", ms(factor_gpu.unwrap_or_default() + kernel)),
            Backend::Cpu => String::new(),
        };
        out!(
            "-> {} ({gpu}{}wall {:.2} s)",
            frame_path(out, (self.relight > 0).then_some(0)).display(),
            peak.unwrap_or_default(),
            wall.elapsed().as_secs_f64()
        )?;
        Ok(())
    }
}

/// Radiosity of `scene` at `elements` x `patches` (2MF, 16 samples per pair, f32 Y) on
/// `backend`, seen from `camera` with smooth shading: the image, the GPU time of form factors,
/// precompute and solve (on a GPU; `None` on the CPU) and a line on the meshes.
pub fn render_scene(
    scene: lumbre_raytrace::Scene,
    camera: &lumbre_raytrace::Camera,
    size: (u32, u32),
    counts: (usize, usize),
    backend: &Backend,
) -> Result<(lumbre_raytrace::Image, Option<Duration>, String)> {
    let surfaces = Surfaces::from_scene(scene)?;
    let (mesh, _) = TwoMesh::fixed(surfaces, counts.0, counts.1)?;
    let ff = FormFactors::default();
    let solve = Solve::new(vec![mesh.emission.clone()]);
    let (b, gpu) = match backend {
        Backend::Gpu(gpu) => {
            let made = GpuFactor::compute(gpu, &mesh, &ff, &Precompute::default(), Storage::F32, false, &())?;
            let (b, report) = solve.run_placed(&Placed::Gpu(gpu.clone(), made.factor.clone()), &())?;
            (b, Some(made.gpu_time() + report.gpu.unwrap_or_default()))
        }
        Backend::Cpu => {
            let lr = LowRank::of_mesh(&mesh, ff.cpu(&mesh)?)?;
            let factor = Precompute::default().cpu(&lr)?.factor;
            (solve.cpu(&factor)?, None)
        }
    };
    let b = b.0.into_iter().next().unwrap_or_default();
    let image = render_radiosity(&mesh, &b, camera, size.0, size.1, 4, Shading::Smooth);
    Ok((
        image,
        gpu,
        format!("n = {}, k = {} ({} pieces), 16 samples per pair, smooth", mesh.n(), mesh.k(), mesh.pieces.len()),
    ))
}

#[cfg(test)]
mod tests {
    use super::duration_words;

    #[test]
    fn estimates_read_in_seconds_minutes_or_hours() {
        assert_eq!(duration_words(19.24), "19.2 s");
        assert_eq!(duration_words(1163.6), "19 min");
        assert_eq!(duration_words(19157.3), "5.3 h");
    }
}
