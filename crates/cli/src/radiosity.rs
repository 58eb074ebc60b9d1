//! `lumbre radiosity`: low-rank radiosity of an OBJ scene. Two meshes (2MF or 2MCE), form
//! factors with visibility and the precompute (or a factor file), then the solve for one
//! lighting or an animation of the emitters' intensity, all on the chosen backend; the
//! picture casts primary rays to the elements and shows their radiance `B / pi`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lumbre_gpu::{Backend, Compute};
use lumbre_radiosity::{
    Coherence, Factorization, FormFactors, LowRank, Precompute, Shading, Solve, Storage, Surfaces, TwoMesh,
    render_radiosity,
};
use lumbre_raytrace::Camera;

use crate::progress::{bar_progress, progress};

/// How the two meshes are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MeshMethod {
    /// Both meshes by regular subdivision.
    #[value(name = "2mf")]
    Fixed,
    /// Patches split where the view of the scene changes (the paper's Algorithm 1), to the
    /// number of patches asked for.
    #[value(name = "2mce")]
    Coherent,
}

/// What `lumbre radiosity` was asked for.
pub struct RadiosityArgs {
    pub scene: PathBuf,
    pub elements: usize,
    pub patches: usize,
    pub method: MeshMethod,
    pub samples: u32,
    pub factored: bool,
    pub f16: bool,
    pub save: Option<PathBuf>,
    pub load: Option<PathBuf>,
    pub light_scale: f32,
    pub relight: u32,
    pub smooth: bool,
    pub spp: u32,
    pub width: u32,
    pub height: u32,
    pub camera: Option<String>,
    pub out: PathBuf,
}

fn err(e: lumbre_gpu::Error) -> String {
    e.to_string()
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

/// The meshes of `args`.
fn meshes(args: &RadiosityArgs) -> Result<TwoMesh, String> {
    let surfaces = Surfaces::load(&args.scene).map_err(err)?;
    match args.method {
        MeshMethod::Fixed => {
            let (mesh, report) = TwoMesh::fixed(surfaces, args.elements, args.patches).map_err(err)?;
            if let Some(note) = report.note {
                eprintln!("warning: {note}");
            }
            Ok(mesh)
        }
        MeshMethod::Coherent => {
            let bar = progress(0, "2MCE patches measured");
            let opts = Coherence { target: Some(args.patches), ..Coherence::default() };
            let base = (args.patches / 16).max(1);
            let (mesh, report) =
                TwoMesh::coherent(surfaces, args.elements, base, &opts, &bar_progress(&bar)).map_err(err)?;
            bar.finish_and_clear();
            eprintln!(
                "2MCE: {} patches from {base} ({} splits, {} measured, threshold {:.4})",
                report.patches, report.splits, report.evaluated, report.threshold
            );
            Ok(mesh)
        }
    }
}

/// The factorisation: loaded from `--load`, else computed on `backend` (and written to
/// `--save`). Returns it and a line on how it was made.
fn factor(args: &RadiosityArgs, mesh: &TwoMesh, backend: &Backend) -> Result<(Factorization, String), String> {
    if let Some(path) = &args.load {
        let t = Instant::now();
        let f = Factorization::load(path, Some(mesh.fingerprint())).map_err(err)?;
        return Ok((f, format!("loaded {} in {}", path.display(), ms(t.elapsed()))));
    }
    let ff = FormFactors { samples: args.samples, ..FormFactors::default() };
    let bar = progress(mesh.n() as u64, "form factors");
    let t = Instant::now();
    let placed = backend.place(&ff, mesh).map_err(err)?;
    let (f, ff_report) = ff.run_placed(&placed, &bar_progress(&bar)).map_err(err)?;
    let ff_time = ff_report.gpu.unwrap_or_else(|| t.elapsed());
    bar.finish_and_clear();
    drop(placed);
    let pc = Precompute { factored: args.factored, ..Precompute::default() };
    let lr = LowRank::of_mesh(mesh, f).map_err(err)?;
    let t = Instant::now();
    let placed = backend.place(&pc, &lr).map_err(err)?;
    let (p, report) = pc.run_placed(&placed, &()).map_err(err)?;
    let pc_time = report.gpu.unwrap_or_else(|| t.elapsed());
    let factor = p.factor.with_fingerprint(mesh.fingerprint());
    let mut how = format!(
        "form factors {} ({} samples per pair), precompute {} ({report})",
        ms(ff_time),
        args.samples,
        ms(pc_time)
    );
    if let Some(path) = &args.save {
        factor.save(path).map_err(err)?;
        how += &format!("; saved to {}", path.display());
    }
    Ok((factor, how))
}

pub fn run(args: &RadiosityArgs, backend: &Backend) -> Result<(), String> {
    if !(args.light_scale.is_finite() && args.light_scale >= 0.0) {
        return Err(format!("--light-scale must be a finite number >= 0, got {}", args.light_scale));
    }
    if args.samples == 0 {
        return Err("--samples must be at least 1".into());
    }
    let camera = match &args.camera {
        Some(c) => Camera::parse(c)?,
        None => Camera::frame(
            Surfaces::load(&args.scene).map_err(err)?.prepared.scene.bounds,
            args.width as f32 / args.height as f32,
        ),
    };
    let t = Instant::now();
    let mesh = meshes(args)?;
    let a = mesh.area_stats();
    println!(
        "{}: n = {} elements (area {:.3e} .. {:.3e}, spread {:.1}%), k = {} patches ({:?}), meshed in {}",
        args.scene.display(),
        mesh.n(),
        a.min,
        a.max,
        100.0 * a.cv,
        mesh.k(),
        args.method,
        ms(t.elapsed())
    );
    let (factor, how) = factor(args, &mesh, backend)?;
    println!("{how} on {}", backend.describe());

    // One lighting, or a ramp of the emitters' intensity over the frames.
    let frames = args.relight.max(1);
    let lights: Vec<Vec<[f32; 3]>> = (0..frames)
        .map(|i| {
            let s = if args.relight > 0 { args.light_scale * (i + 1) as f32 / frames as f32 } else { args.light_scale };
            mesh.emission_scaled(s)
        })
        .collect();
    let storage = if args.f16 { Storage::F16 } else { Storage::F32 };
    let t = Instant::now();
    let placed = backend.place(&Solve { storage, ..Solve::default() }, &factor).map_err(err)?;
    let upload = t.elapsed();
    // Each frame as its own solve (what an interactive relighting does), then all at once.
    let mut solutions = Vec::with_capacity(lights.len());
    let (mut kernel, mut wall) = (Duration::ZERO, Duration::ZERO);
    for light in &lights {
        let solve = Solve { lights: vec![light.clone()], storage, block_rows: None };
        let t = Instant::now();
        let (b, report) = solve.run_placed(&placed, &()).map_err(err)?;
        let w = t.elapsed();
        wall += w;
        kernel += report.gpu.unwrap_or(w);
        solutions.push(b.0.into_iter().next().unwrap_or_default());
    }
    let per = |d: Duration| d.as_secs_f64() / frames as f64;
    println!(
        "solve ({storage:?}, {} values of Y or its factors, placed in {}): {:.3} ms per lighting ({:.0} solves/s), {:.3} ms wall",
        factor.values(),
        ms(upload),
        per(kernel) * 1e3,
        1.0 / per(kernel).max(1e-12),
        per(wall) * 1e3
    );
    if frames > 1 {
        let solve = Solve { lights: lights.clone(), storage, block_rows: None };
        let t = Instant::now();
        let (_, report) = solve.run_placed(&placed, &()).map_err(err)?;
        let all = report.gpu.unwrap_or_else(|| t.elapsed());
        println!(
            "relighting: {frames} lightings in one pass over Y: {} ({:.0} solves/s)",
            ms(all),
            frames as f64 / all.as_secs_f64().max(1e-12)
        );
    }
    let shading = if args.smooth { Shading::Smooth } else { Shading::Flat };
    let bar = progress(solutions.len() as u64, "images");
    for (i, b) in solutions.iter().enumerate() {
        let image = render_radiosity(&mesh, b, &camera, args.width, args.height, args.spp, shading);
        let path = frame_path(&args.out, (args.relight > 0).then_some(i as u32));
        image.save(&path).map_err(|e| e.to_string())?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!("-> {}", frame_path(&args.out, (args.relight > 0).then_some(0)).display());
    Ok(())
}
