//! The side-by-side page: the diffuse Cornell box by every rendering method, each beside the
//! reference path tracer with its time and its error, in one table and one contact sheet.

use std::path::Path;
use std::time::Instant;

use glam::Vec3;
use lumbre_gpu::{Backend, Compute, Report};
use lumbre_raytrace::metrics::{DiffMap, Metrics, Region, compare, false_colour};
use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared, RenderOptions, WhittedRender};

use super::sheet::Sheet;
use crate::table::{Table, sig};

/// The page's scene, camera and size: radiance in the units of the file's `Ke`.
pub const SCENE: &str = "CornellBox-Diffuse";
/// `eye, target, up, fov_y` of the reference view.
pub const CAMERA: &str = "0,1,3.9,0,1,0,0,1,0,40";
/// Width and height of every image of the page.
pub const SIZE: u32 = 256;

/// What every method renders: the scene with its kd-tree, the camera, the size.
pub struct Setup {
    pub prepared: Prepared,
    pub camera: Camera,
    pub size: u32,
    /// Samples per pixel for the methods that take samples.
    pub spp: u32,
}

/// One rendering: the image, the run's report, a line on how it was made, and the
/// per-pixel cut sizes where the method has them.
pub struct Rendered {
    pub image: Image,
    pub report: Report,
    pub note: String,
    pub heatmap: Option<Image>,
}

/// A method of the page: its name and how it renders the setup on a backend.
pub struct Method {
    pub name: &'static str,
    pub render: fn(&Setup, &Backend) -> Result<Rendered, String>,
}

/// Every method on the page, in its order.
pub fn methods() -> Vec<Method> {
    vec![
        Method { name: "Whitted (direct light)", render: whitted },
        Method { name: "path tracer", render: path },
        Method { name: "low-rank radiosity", render: radiosity },
        Method { name: "density estimation", render: density },
        Method { name: "lightcuts", render: lightcuts },
        Method { name: "instant radiosity", render: instant_radiosity },
    ]
}

fn err(e: lumbre_gpu::Error) -> String {
    e.to_string()
}

/// Whitted with no ambient term and a black background: direct light only, the same
/// radiance as the path tracer's first bounce.
fn whitted(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    let options = RenderOptions {
        width: setup.size,
        height: setup.size,
        spp: setup.spp,
        max_depth: 1,
        ambient: 0.0,
        background: Vec3::ZERO,
        ..Default::default()
    };
    let render = WhittedRender { camera: setup.camera, options };
    let placed = backend.place(&render, &setup.prepared).map_err(err)?;
    let (image, report) = render.run_placed(&placed, &()).map_err(err)?;
    Ok(Rendered { image, report, note: format!("{} spp, one bounce of shadow rays", setup.spp), heatmap: None })
}

/// The path tracer at the page's samples per pixel.
fn path(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    let options = PathOptions { width: setup.size, height: setup.size, spp: setup.spp, ..Default::default() };
    let render = PathRender { camera: setup.camera, options };
    let placed = backend.place(&render, &setup.prepared).map_err(err)?;
    let (image, report) = render.run_placed(&placed, &()).map_err(err)?;
    Ok(Rendered { image, report, note: format!("{} spp, next-event estimation and MIS", setup.spp), heatmap: None })
}

/// Elements and patches of the radiosity row: enough for smooth walls, few enough for a
/// demo on two CPU cores.
const RADIOSITY_MESH: (usize, usize) = (6000, 400);

/// Low-rank radiosity (2MF, Y stored as its factors): form factors, precompute and solve on
/// the backend, then primary rays to the elements on the CPU, radiance interpolated from
/// their corners.
fn radiosity(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    use lumbre_radiosity::{FormFactors, LowRank, Precompute, Shading, Solve, Surfaces, TwoMesh, render_radiosity};
    let surfaces = Surfaces::from_scene(setup.prepared.scene.clone()).map_err(err)?;
    let (mesh, _) = TwoMesh::fixed(surfaces, RADIOSITY_MESH.0, RADIOSITY_MESH.1).map_err(err)?;
    let ff = FormFactors { samples: 4, ..FormFactors::default() };
    let placed = backend.place(&ff, &mesh).map_err(err)?;
    let (f, mut report) = ff.run_placed(&placed, &()).map_err(err)?;
    let pc = Precompute { factored: true, ..Precompute::default() };
    let lr = LowRank::of_mesh(&mesh, f).map_err(err)?;
    let placed = backend.place(&pc, &lr).map_err(err)?;
    let (p, r) = pc.run_placed(&placed, &()).map_err(err)?;
    report.merge(r);
    let solve = Solve::new(vec![mesh.emission.clone()]);
    let placed = backend.place(&solve, &p.factor).map_err(err)?;
    let (b, r) = solve.run_placed(&placed, &()).map_err(err)?;
    report.merge(r);
    let b = b.0.into_iter().next().unwrap_or_default();
    let image =
        render_radiosity(&mesh, &b, &setup.camera, setup.size, setup.size, setup.spp.clamp(1, 16), Shading::Smooth);
    let note = format!(
        "n = {}, k = {}, 4 samples per pair, smooth; time: form factors, precompute and one solve",
        mesh.n(),
        mesh.k()
    );
    Ok(Rendered { image, report, note, heatmap: None })
}

/// Ray-based density estimation: indirect light from the flights of 500K photons crossing a
/// disk of radius 0.04 at each pixel's first hit, direct light by the path tracer's
/// next-event estimation at the page's samples per pixel.
fn density(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    let o = crate::density::DensityOptions {
        photons: 500_000,
        radius: 0.04,
        k: None,
        irradiance: false,
        indirect_only: false,
        spp: setup.spp,
        seed: 0,
        passes: 1,
        alpha: 0.7,
    };
    let est = crate::density::estimate(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let pairs = est.report.get("pairs found").unwrap_or(0.0);
    let note = format!(
        "500K photons' indirect flights, disks r = 0.04, BVH ({pairs:.0} crossings); direct light {} spp NEE",
        setup.spp
    );
    Ok(Rendered { image: est.image, report: est.report, note, heatmap: None })
}

/// VPLs of the lightcuts row and the diffuse bounces of their light paths: enough for the
/// box's multiple bounces, few enough for a demo on two CPU cores.
const LIGHTCUTS_VPLS: (u32, u32) = (4000, 3);

/// Lightcuts over a Morton light tree at 2% error with imperfect shadow maps (64x64 per VPL,
/// the source work's visibility; on lavapipe, shadow rays would meet its loop limit): about
/// 4000 VPLs, a quarter on the light, the rest at the first three bounces of light paths.
fn lightcuts(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    let o =
        crate::lightcuts::LightcutsOptions { vpls: LIGHTCUTS_VPLS.0, bounces: LIGHTCUTS_VPLS.1, ..Default::default() };
    let lit = crate::lightcuts::render(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let note = format!(
        "{} VPLs (direct and {} bounces), Morton tree, 2% error, average cut {:.0} (heat map: blue 1 .. red {}), ISM {}x{}",
        lit.vpls,
        LIGHTCUTS_VPLS.1,
        lit.report.get("average cut").unwrap_or(0.0),
        o.max_cut,
        o.ism_size,
        o.ism_size
    );
    let heatmap = lumbre_lightcuts::cut_heatmap(&lit.cuts, setup.size, setup.size, o.max_cut).map_err(err)?;
    Ok(Rendered { image: lit.image, report: lit.report, note, heatmap: Some(heatmap) })
}

/// Instant radiosity, the baseline lightcuts must match: every pixel shaded by every one of
/// the lightcuts row's VPLs, with the same imperfect shadow maps.
fn instant_radiosity(setup: &Setup, backend: &Backend) -> Result<Rendered, String> {
    let o = crate::lightcuts::LightcutsOptions {
        vpls: LIGHTCUTS_VPLS.0,
        bounces: LIGHTCUTS_VPLS.1,
        method: crate::lightcuts::MethodChoice::Instant,
        ..Default::default()
    };
    let lit = crate::lightcuts::render(&setup.prepared, setup.camera, setup.size, setup.size, &o, backend, &())?;
    let note =
        format!("the lightcuts row's {} VPLs, every one for every pixel, ISM {}x{}", lit.vpls, o.ism_size, o.ism_size);
    Ok(Rendered { image: lit.image, report: lit.report, note, heatmap: None })
}

/// The page: every method on every backend against the reference, written to `out` as
/// `cornell-<method>-<backend>.png`, false-colour error maps, cut-size heat maps
/// (`-cuts.png`) and `cornell-sheet.png`, a labelled [`Sheet`] (columns: the reference, then
/// each method on each backend, captioned with its mean relative error and time; rows: the
/// image, its error map, the heat map of the methods that have one).
pub fn page(setup: &Setup, backends: &[&Backend], reference: &Image, out: &Path) -> Result<Table, String> {
    let regions = Region::cornell(setup.size, setup.size);
    let mut t = Table::new(
        format!("{SCENE} ({}x{}, camera {CAMERA}) by every method, against the reference", setup.size, setup.size),
        &["method", "backend", "ms", "mean rel. error", "p90 rel. error", "mean ΔE94", "worst region", "image", "how"],
    );
    let methods = methods();
    let columns = std::iter::once("reference".to_string())
        .chain(methods.iter().flat_map(|m| backends.iter().map(move |b| format!("{} on {}", m.name, b.name()))))
        .collect();
    let rows = ["image", "relative error", "cut sizes"].map(String::from).to_vec();
    let mut sheet = Sheet::new(setup.size, columns, rows);
    sheet.set(0, 0, reference)?;
    let mut column = 0;
    for m in &methods {
        for backend in backends {
            column += 1;
            eprintln!("  {} on {} ...", m.name, backend.name());
            let start = Instant::now();
            let r = (m.render)(setup, backend)?;
            let time = r.report.gpu.unwrap_or_else(|| start.elapsed());
            let metrics = compare(&r.image, reference, &regions).map_err(|e| e.to_string())?;
            let file = format!("cornell-{}-{}.png", slug(m.name), backend.name());
            r.image.save(&out.join(&file)).map_err(|e| e.to_string())?;
            let diff = false_colour(&r.image, reference, DiffMap::Relative).map_err(|e| e.to_string())?;
            diff.save(&out.join(format!("cornell-{}-{}-error.png", slug(m.name), backend.name())))
                .map_err(|e| e.to_string())?;
            let mut note = r.note;
            if let Some(map) = &r.heatmap {
                let name = format!("cornell-{}-{}-cuts.png", slug(m.name), backend.name());
                map.save(&out.join(&name)).map_err(|e| e.to_string())?;
                note += &format!("; cut sizes in {name}");
            }
            t.row(vec![
                m.name.to_string(),
                backend.describe(),
                sig(time.as_secs_f64() * 1e3),
                percent(metrics.rel_mean),
                percent(metrics.rel_p90),
                sig(metrics.de94_mean),
                worst_region(&metrics),
                file,
                note,
            ]);
            sheet.set(0, column, &r.image)?;
            sheet.set(1, column, &diff)?;
            if let Some(map) = &r.heatmap {
                sheet.set(2, column, map)?;
            }
            sheet.note(0, column, &format!("{} {} ms", percent(metrics.rel_mean), sig(time.as_secs_f64() * 1e3)))?;
        }
    }
    sheet.image().save(&out.join("cornell-sheet.png")).map_err(|e| e.to_string())?;
    t.note(
        "relative error per pixel on luminance, |test - reference| / (reference + 0.01); ΔE94: CIE94 on CIELAB (D65)",
    );
    t.note("cornell-sheet.png: columns the reference then each row of this table in order, captioned with mean relative error and time; rows the image, its relative error (black 0%, red 100%) and the cut sizes of lightcuts");
    Ok(t)
}

fn percent(x: f64) -> String {
    format!("{}%", sig(100.0 * x))
}

fn slug(name: &str) -> String {
    let s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

fn worst_region(m: &Metrics) -> String {
    m.regions
        .iter()
        .filter_map(|r| r.mean.map(|e| (e, r.region.name.as_str())))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map_or("-".into(), |(e, name)| format!("{name} {}", percent(e)))
}
