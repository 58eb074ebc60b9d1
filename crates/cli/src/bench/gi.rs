//! `lumbre bench gi`: every global-illumination method at its command's defaults on every
//! scene of the set, against the scene's path-traced reference: GPU time, wall time and
//! mean relative error, and the error of the path tracer given the same GPU time (the
//! equal-time comparison that says when a method is worth it).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use lumbre_gpu::{Backend, Compute};
use lumbre_raytrace::metrics::{DiffMap, compare, false_colour};
use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared, Scene};

use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::{Error, Result};
use crate::scenes::SetScene;
use crate::table::{Table, sig};

/// Every global-illumination method (path tracer, density estimation, low-rank
/// radiosity, lightcuts, instant radiosity) at its defaults on every scene of the set
/// (`lumbre scenes`), against the path-traced references: GPU time, wall time, mean
/// relative error, and the path tracer's error at the same GPU time.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct GiArgs {
    /// Scenes of the set to run (default: every one with a reference).
    scenes: Vec<String>,
    /// Write every image and its error map into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

impl OnBackend for GiArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let table = gi(&self.scenes, backend, self.out.as_deref())?;
        super::print(&[table], self.json)?;
        Ok(())
    }
}

/// Side of every image: the references' size.
pub const SIZE: u32 = crate::scenes::REFERENCE_SIZE;
/// Samples per pixel of the path tracer's own row.
const PATH_SPP: u32 = 64;

/// A scene ready for every method.
pub struct Setup {
    /// The scene as loaded (radiosity meshes it anew).
    pub scene: Scene,
    /// Its kd-tree.
    pub prepared: Prepared,
    pub camera: Camera,
    pub size: u32,
}

/// One method's rendering: the image, its GPU time (on a GPU), a line on how it was made,
/// and a per-pixel heat map where the method has one (cut sizes).
pub struct Rendered {
    pub image: Image,
    pub gpu: Option<Duration>,
    pub note: String,
    pub heatmap: Option<Image>,
}

/// A method of the table.
pub struct Method {
    pub name: &'static str,
    pub render: fn(&Setup, &Backend) -> Result<Rendered>,
}

/// The methods, in the table's order.
pub fn methods() -> Vec<Method> {
    vec![
        Method { name: "path tracer", render: path },
        Method { name: "density estimation", render: density },
        Method { name: "low-rank radiosity", render: radiosity },
        Method { name: "lightcuts", render: lightcuts },
        Method { name: "instant radiosity", render: instant_radiosity },
    ]
}

/// The path tracer at `spp`.
fn path_at(setup: &Setup, backend: &Backend, spp: u32) -> Result<Rendered> {
    let options = PathOptions { width: setup.size, height: setup.size, spp, ..Default::default() };
    let render = PathRender { camera: setup.camera, options };
    let placed = backend.place(&render, &setup.prepared)?;
    let (image, report) = render.run_placed(&placed, &())?;
    Ok(Rendered { image, gpu: report.gpu, note: format!("{spp} spp, next-event estimation and MIS"), heatmap: None })
}

fn path(setup: &Setup, backend: &Backend) -> Result<Rendered> {
    path_at(setup, backend, PATH_SPP)
}

/// Density estimation at the `density` command's defaults (1e7 photons on a GPU, 1e6 on the
/// CPU).
fn density(setup: &Setup, backend: &Backend) -> Result<Rendered> {
    let photons = crate::density::default_photons(backend);
    let o = crate::density::DensityOptions {
        photons,
        radius: 0.05,
        k: None,
        irradiance: false,
        indirect_only: false,
        spp: crate::density::default_spp(backend),
        seed: 0,
        passes: 1,
        alpha: 0.7,
        shard: None,
    };
    let est = crate::density::estimate(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let note = format!("{photons} photons, disks r = 0.05, direct light {} spp", o.spp);
    Ok(Rendered { image: est.image, gpu: est.report.gpu, note, heatmap: None })
}

/// Low-rank radiosity at the `radiosity` command's defaults for the backend.
fn radiosity(setup: &Setup, backend: &Backend) -> Result<Rendered> {
    let counts = crate::radiosity::default_counts(backend);
    let (image, gpu, note) =
        crate::radiosity::render_scene(setup.scene.clone(), &setup.camera, (setup.size, setup.size), counts, backend)?;
    Ok(Rendered { image, gpu, note, heatmap: None })
}

/// Lightcuts at the `lightcuts` command's defaults.
fn lightcuts(setup: &Setup, backend: &Backend) -> Result<Rendered> {
    let o = crate::lightcuts::LightcutsOptions::default();
    let lit = crate::lightcuts::render(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let heatmap = lumbre_lightcuts::cut_heatmap(&lit.cuts, setup.size, setup.size, o.max_cut)?;
    let note = format!(
        "{} VPLs, average cut {:.0} (heat map: blue 1 .. red {})",
        lit.vpls,
        lit.report.get("average cut").unwrap_or(0.0),
        o.max_cut
    );
    Ok(Rendered { image: lit.image, gpu: lit.report.gpu, note, heatmap: Some(heatmap) })
}

/// Instant radiosity (every VPL for every pixel) with the imperfect shadow maps' default
/// VPL count: the baseline lightcuts is measured against.
fn instant_radiosity(setup: &Setup, backend: &Backend) -> Result<Rendered> {
    let o = crate::lightcuts::LightcutsOptions {
        method: crate::lightcuts::MethodChoice::Instant,
        visibility: crate::lightcuts::VisibilityChoice::Ism,
        vpls: lumbre_lightcuts::ISM_VPLS,
        ..Default::default()
    };
    let lit = crate::lightcuts::render(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let note = format!("{} VPLs, every one for every pixel, ISM {}x{}", lit.vpls, o.ism_size, o.ism_size);
    Ok(Rendered { image: lit.image, gpu: lit.report.gpu, note, heatmap: None })
}

/// A method's images: its name, the rendering, its relative error map, its heat map.
pub type Images = (String, Image, Image, Option<Image>);

/// One row of the table.
pub struct Row {
    pub scene: &'static str,
    pub method: &'static str,
    pub gpu: Option<Duration>,
    pub wall: Duration,
    pub error: f64,
    /// The path tracer's samples per pixel and error at the same GPU time (GPU runs).
    pub path_equal: Option<(u32, f64)>,
    pub note: String,
}

/// Every method on `entry` against `reference`; images to `out` when given (`NAME-METHOD.png`
/// and its error map). Returns the rows and, per method, its image, error map and heat map.
pub fn scene(
    entry: &SetScene,
    reference: &Image,
    backend: &Backend,
    size: u32,
    out: Option<&Path>,
) -> Result<(Vec<Row>, Vec<Images>)> {
    let (scene, _) = (entry.build)()?;
    let camera = Camera::parse(entry.camera)?;
    let prepared = Prepared::new(scene.clone(), &Default::default());
    let setup = Setup { scene, prepared, camera, size };
    let mut rows = Vec::new();
    let mut images = Vec::new();
    let mut per_spp: Option<Duration> = None;
    for m in methods() {
        eprintln!("  {} on {} ({}) ...", m.name, entry.name, backend.name());
        let start = Instant::now();
        let r = (m.render)(&setup, backend)?;
        let wall = start.elapsed();
        let error = compare(&r.image, reference, &[])?.rel_mean;
        let time = r.gpu.unwrap_or(wall);
        if m.name == "path tracer" {
            per_spp = Some(time / PATH_SPP);
        }
        // The path tracer given the same GPU time.
        let path_equal = match (backend, per_spp, m.name) {
            (Backend::Gpu(_), Some(unit), name) if name != "path tracer" => {
                let spp = (time.as_secs_f64() / unit.as_secs_f64().max(1e-9)).round().clamp(1.0, 65536.0) as u32;
                let p = path_at(&setup, backend, spp)?;
                Some((spp, compare(&p.image, reference, &[])?.rel_mean))
            }
            _ => None,
        };
        let diff = false_colour(&r.image, reference, DiffMap::Relative)?;
        if let Some(dir) = out {
            let file = format!("{}-{}-{}.png", entry.name, slug(m.name), backend.name());
            r.image.save(&dir.join(&file))?;
            diff.save(&dir.join(format!("{}-{}-{}-error.png", entry.name, slug(m.name), backend.name())))?;
        }
        rows.push(Row { scene: entry.name, method: m.name, gpu: r.gpu, wall, error, path_equal, note: r.note });
        images.push((m.name.to_string(), r.image, diff, r.heatmap));
    }
    Ok((rows, images))
}

/// The table of `rows`.
pub fn table(rows: &[Row], backend: &Backend) -> Table {
    let mut t = Table::new(
        format!(
            "Every method on every scene ({SIZE}x{SIZE}, against the path-traced references) on {}",
            backend.describe()
        ),
        &["scene", "method", "GPU ms", "wall ms", "mean rel. error", "path tracer at equal GPU time", "how"],
    );
    for r in rows {
        let ms = |d: Duration| sig(d.as_secs_f64() * 1e3);
        t.row(vec![
            r.scene.to_string(),
            r.method.to_string(),
            r.gpu.map_or("-".into(), ms),
            ms(r.wall),
            format!("{}%", sig(100.0 * r.error)),
            r.path_equal.map_or("-".into(), |(spp, e)| format!("{}% ({spp} spp)", sig(100.0 * e))),
            r.note.clone(),
        ]);
    }
    t.note("mean relative error on luminance, |test - reference| / (reference + 0.01), as `lumbre compare` gives it");
    t.note(
        "wall: the whole method from the loaded scene to the image (meshing, trees, uploads and downloads included)",
    );
    t
}

/// A file-name form of a method's name.
pub fn slug(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

/// `lumbre bench gi`: the scenes named in `only` (all when empty) on `backend`.
fn gi(only: &[String], backend: &Backend, out: Option<&Path>) -> Result<Table> {
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| Error::folder(dir, e))?;
    }
    let mut rows = Vec::new();
    for entry in crate::scenes::SET.iter().filter(|e| only.is_empty() || only.iter().any(|n| n == e.name)) {
        let Some(reference) = crate::data::reference(entry.reference) else {
            eprintln!("{}: no reference ({}), left out", entry.name, entry.reference);
            continue;
        };
        let (r, _) = scene(entry, &reference?, backend, SIZE, out)?;
        rows.extend(r);
    }
    Ok(table(&rows, backend))
}
