//! The scene set every global-illumination method runs on, and `lumbre scenes`.
//!
//! Each scene is built from the meshes bundled in the binary ([`crate::data::FILES`]) by
//! `lumbre_raytrace::SceneBuilder`, has a fixed camera, a reference image by the path tracer
//! at 256x256 (`testdata/reference/`, rendered on a GPU; bundled when it exists) and a small
//! CPU reference (`testdata/reference/small/NAME.exr`) that the tests re-render bit for bit.
//! Every command that reads a triangle scene takes `set:NAME` in place of a file
//! ([`crate::render::load_scene_counted`]). All materials are diffuse (Kd < 1); lights are
//! emissive quads facing into the scene.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use glam::Vec3;
use lumbre_raytrace::{
    Camera, Image, LoadReport, Material, MaterialKind, PathOptions, PathRender, Prepared, Scene, SceneBuilder, stand_on,
};

use crate::error::{Error, Result};
use crate::out::out;
use crate::table::Table;

/// The scene set: list the named scenes (`set:NAME`, accepted wherever a scene file goes)
/// with their triangles, lights, bounds, camera and reference image; optionally write them
/// as OBJ + MTL or render their small CPU references.
#[derive(Args)]
pub struct ScenesArgs {
    /// Only these scenes of the set (default: all).
    names: Vec<String>,
    /// Write each scene as DIR/NAME.obj and DIR/NAME.mtl (the folder is created).
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
    /// Render each scene's small reference (the path tracer on the CPU, 32x32 or 16x16 at
    /// 16 samples per pixel, one batch: the same bits on every run) as DIR/NAME.exr.
    #[arg(long, value_name = "DIR")]
    small: Option<PathBuf>,
}

/// The prefix that names a scene of the set where a scene file is expected.
pub const PREFIX: &str = "set:";

/// Samples per pixel of the small CPU references.
pub const SMALL_SPP: u32 = 16;

/// Samples per pixel of the 256x256 references (on a GPU).
pub const REFERENCE_SPP: u32 = 16384;

/// Side of the 256x256 references.
pub const REFERENCE_SIZE: u32 = 256;

/// One scene of the set.
pub struct SetScene {
    /// What `set:NAME` names.
    pub name: &'static str,
    /// One line: what the scene tests.
    pub description: &'static str,
    /// The view of the references (and of `set:NAME` without `--camera`), in the form of
    /// `--camera` (`Camera::parse`).
    pub camera: &'static str,
    /// The 256x256 reference's file name in `testdata/reference`.
    pub reference: &'static str,
    /// Side of the small CPU reference in pixels.
    pub small_size: u32,
    /// Builds the scene.
    pub build: fn() -> Result<(Scene, LoadReport)>,
}

/// The set, in the order `lumbre scenes` lists it.
pub const SET: &[SetScene] = &[
    SetScene {
        name: "cornell",
        description: "the diffuse Cornell box (CornellBox-Diffuse.obj): one ceiling light, red and green walls, two boxes",
        camera: "0,1,3.9,0,1,0,0,1,0,40",
        reference: "CornellBox-Diffuse-256.exr",
        small_size: 32,
        build: cornell,
    },
    SetScene {
        name: "bunny-room",
        description: "the Stanford bunny in a closed room lit by one small off-centre ceiling light (1/40 of the ceiling)",
        camera: "0,1.3,1.4,0,0.5,-0.4,0,1,0,60",
        reference: "bunny-room-256.exr",
        small_size: 32,
        build: bunny_room,
    },
    SetScene {
        name: "two-lights",
        description: "a closed room with a large warm ceiling light and a small cool wall light; suzanne, the teapot, two boxes",
        camera: "0,1.5,1.9,0,0.45,-0.6,0,1,0,62",
        reference: "two-lights-256.exr",
        small_size: 32,
        build: two_lights,
    },
    SetScene {
        name: "million",
        description: "a 4 x 4 grid of Stanford bunnies (1.11M triangles) in a closed room with a ceiling light",
        camera: "0,2.1,1.95,0,0.2,-0.35,0,1,0,62",
        reference: "million-256.exr",
        small_size: 16,
        build: million,
    },
    SetScene {
        name: "open-ground",
        description: "an open scene: the teapot and suzanne on a 200 x 200 ground under an area light; light escapes",
        camera: "0,2.2,5,0,0.5,0,0,1,0,40",
        reference: "open-ground-256.exr",
        small_size: 32,
        build: open_ground,
    },
];

/// The names of the set, comma-separated.
pub fn names() -> String {
    SET.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// The scene of the set named `name`; an unknown name is an error listing the set.
pub fn find(name: &str) -> Result<&'static SetScene> {
    let found = SET.iter().find(|s| s.name == name);
    Ok(found.ok_or_else(|| {
        format!("no scene named \"{name}\" in the set; the set is: {} (`lumbre scenes` lists them)", names())
    })?)
}

/// The name after `set:` when `arg` names a scene of the set rather than a file.
pub fn set_name(arg: &Path) -> Option<&str> {
    arg.to_str()?.strip_prefix(PREFIX)
}

/// The scene `set:NAME` and its camera: `spec` (the `--camera` form) when given, else the
/// set's; with the load summary (triangles kept and dropped) of `load_scene_counted`.
pub fn load(name: &str, spec: Option<&str>) -> Result<(Scene, Camera, String)> {
    let entry = find(name)?;
    let (scene, report) = (entry.build)().map_err(|e| format!("{PREFIX}{name}: {e}"))?;
    if report.dropped() > 0 || !report.warnings.is_empty() {
        eprintln!("warning: {PREFIX}{name}: {report}");
    }
    let camera = Camera::parse(spec.unwrap_or(entry.camera))?;
    let summary = format!("{} triangles ({} dropped)", report.triangles, report.dropped());
    Ok((scene, camera, summary))
}

/// The small CPU reference of `entry`, whose built scene is `scene`: the path tracer with its
/// default settings (full global illumination) from the set's camera, `small_size` pixels
/// square at [`SMALL_SPP`] samples, in one batch, so that it is the same bits on every run.
pub fn small_reference(entry: &SetScene, scene: Scene) -> Result<Image> {
    let camera = Camera::parse(entry.camera)?;
    let prepared = Prepared::new(scene, &Default::default());
    let size = entry.small_size;
    let options = PathOptions { width: size, height: size, spp: SMALL_SPP, ..Default::default() };
    let (image, _) = PathRender { camera, options }.render_cpu(&prepared, &|| {})?;
    Ok(image)
}

/// The command that renders `entry`'s 256x256 reference into `testdata/reference`.
pub fn reference_command(entry: &SetScene) -> String {
    format!(
        "lumbre render {PREFIX}{} --method path --spp {REFERENCE_SPP} --width {REFERENCE_SIZE} --height \
         {REFERENCE_SIZE} --backend gpu -o testdata/reference/{}",
        entry.name, entry.reference
    )
}

impl ScenesArgs {
    /// The table of the scenes named (all when none), and with `--write` each as
    /// `DIR/NAME.obj` + `.mtl`, with `--small` each small CPU reference as `DIR/NAME.exr`.
    pub fn run(self) -> Result<()> {
        scenes(&self.names, self.write.as_deref(), self.small.as_deref())
    }
}

/// `lumbre scenes`: the table of the scenes `only` (all when empty), and with `write` each
/// as `DIR/NAME.obj` + `.mtl`, with `small` each small CPU reference as `DIR/NAME.exr`.
fn scenes(only: &[String], write: Option<&Path>, small: Option<&Path>) -> Result<()> {
    let entries: Vec<&SetScene> =
        if only.is_empty() { SET.iter().collect() } else { only.iter().map(|n| find(n)).collect::<Result<_, _>>()? };
    for dir in [write, small].into_iter().flatten() {
        std::fs::create_dir_all(dir).map_err(|e| Error::folder(dir, e))?;
    }
    let mut table = Table::new(
        "The scene set (set:NAME wherever a scene file goes)",
        &["name", "triangles", "lights", "bounds", "camera", "reference", "build ms", "description"],
    );
    let mut missing = Vec::new();
    for entry in &entries {
        let t = Instant::now();
        let (scene, _) = (entry.build)().map_err(|e| format!("{PREFIX}{}: {e}", entry.name))?;
        let build = t.elapsed();
        let reference = match crate::data::reference(entry.reference) {
            Some(Ok(_)) => entry.reference.to_owned(),
            Some(Err(e)) => return Err(e),
            None => {
                missing.push(reference_command(entry));
                "(not rendered yet)".to_owned()
            }
        };
        let (lo, hi) = scene.bounds;
        table.row(vec![
            entry.name.to_owned(),
            scene.triangles.len().to_string(),
            scene.lights.len().to_string(),
            format!("{}..{}", short(lo), short(hi)),
            entry.camera.to_owned(),
            reference,
            format!("{:.1}", build.as_secs_f64() * 1e3),
            entry.description.to_owned(),
        ]);
        if let Some(dir) = write {
            let path = dir.join(format!("{}.obj", entry.name));
            scene.write_obj(&path)?;
            eprintln!("wrote {} and its .mtl", path.display());
        }
        if let Some(dir) = small {
            let path = dir.join(format!("{}.exr", entry.name));
            small_reference(entry, scene)?.save(&path)?;
            eprintln!(
                "wrote {} ({size}x{size} at {SMALL_SPP} spp on the CPU)",
                path.display(),
                size = entry.small_size
            );
        }
    }
    table.note("lights: area-light triangles; build: this run's time to build the scene");
    for command in missing {
        table.note(format!("to make a missing reference (see testdata/reference/README.md): {command}"));
    }
    out!("{}", table.text())?;
    Ok(())
}

/// `x,y,z` with at most three decimals.
fn short(v: Vec3) -> String {
    let f = |x: f32| {
        let s = format!("{x:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".to_owned() } else { s.to_owned() }
    };
    format!("{},{},{}", f(v.x), f(v.y), f(v.z))
}

/// A diffuse material.
fn diffuse(name: &str, kd: [f32; 3]) -> Material {
    Material { name: name.to_owned(), kd: Vec3::from(kd), ..Default::default() }
}

/// An emitting material of radiance `ke` (that reflects little itself).
fn emitter(name: &str, ke: [f32; 3]) -> Material {
    Material {
        name: name.to_owned(),
        kd: Vec3::splat(0.5),
        ke: Vec3::from(ke),
        kind: MaterialKind::Emitter,
        ..Default::default()
    }
}

/// A bundled mesh (`"suzanne"`, `"teapot"`, `"stanford-bunny"`).
fn mesh(name: &str) -> Result<Scene> {
    crate::data::scene(name, None)
}

/// White of the rooms' walls.
const WHITE: [f32; 3] = [0.73, 0.71, 0.68];

/// A light of size `size_x` by `size_z` centred at `centre` (just below a ceiling), facing
/// down.
fn ceiling_light(builder: &mut SceneBuilder, centre: Vec3, size_x: f32, size_z: f32, material: Material) {
    let corner = centre - Vec3::new(0.5 * size_x, 0.0, 0.5 * size_z);
    // edge_u = X, edge_v = Z: X x Z = -Y, facing down.
    builder.add_quad(corner, Vec3::X * size_x, Vec3::Z * size_z, material);
}

/// Distance of a light quad from the wall it hangs on: off the wall so that the two do not
/// overlap, close enough that almost no light leaks behind it.
const LIGHT_GAP: f32 = 0.005;

fn cornell() -> Result<(Scene, LoadReport)> {
    let (_, obj) = crate::data::FILES
        .iter()
        .find(|(f, _)| *f == "CornellBox-Diffuse.obj")
        .ok_or("CornellBox-Diffuse.obj is not bundled")?;
    Ok(Scene::load_obj_bytes(Path::new("CornellBox-Diffuse.obj"), obj, crate::data::FILES)?)
}

fn bunny_room() -> Result<(Scene, LoadReport)> {
    let bunny = mesh("stanford-bunny")?;
    let (lo, hi) = (Vec3::new(-1.5, 0.0, -1.5), Vec3::new(1.5, 2.5, 1.5));
    let white = diffuse("white", WHITE);
    let mut b = SceneBuilder::new();
    // Walls in the order of BOX_FACES: -x, +x, floor, ceiling, back (-z), front (+z).
    let walls = [
        diffuse("red", [0.65, 0.12, 0.08]),
        diffuse("teal", [0.12, 0.42, 0.45]),
        white.clone(),
        white.clone(),
        white.clone(),
        white,
    ];
    b.add_box_faces(lo, hi, walls, true); // a closed room, faces inward
    b.add_mesh(
        &bunny,
        stand_on(bunny.bounds, Vec3::new(-0.15, 0.0, -0.45), 1.0, 20.0),
        Some(diffuse("bunny", [0.7, 0.62, 0.5])),
    );
    // 1/40 of the 3 x 3 ceiling (0.45 x 0.5 = 0.225), its centre 1.2 from the ceiling's.
    ceiling_light(&mut b, Vec3::new(0.85, hi.y - LIGHT_GAP, -0.85), 0.45, 0.5, emitter("light", [40.0, 36.0, 30.0]));
    Ok(b.build_report())
}

fn two_lights() -> Result<(Scene, LoadReport)> {
    let (suzanne, teapot) = (mesh("suzanne")?, mesh("teapot")?);
    let (lo, hi) = (Vec3::new(-2.0, 0.0, -2.0), Vec3::new(2.0, 2.5, 2.0));
    let white = diffuse("white", WHITE);
    let mut b = SceneBuilder::new();
    // Walls in the order of BOX_FACES: -x, +x, floor, ceiling, back (-z), front (+z).
    let walls =
        [white.clone(), white.clone(), diffuse("floor", [0.55, 0.5, 0.45]), white.clone(), white.clone(), white];
    b.add_box_faces(lo, hi, walls, true); // a closed room, faces inward
    b.add_mesh(
        &suzanne,
        stand_on(suzanne.bounds, Vec3::new(-0.9, 0.0, -0.7), 0.8, 15.0),
        Some(diffuse("suzanne", [0.8, 0.62, 0.18])),
    );
    b.add_mesh(
        &teapot,
        stand_on(teapot.bounds, Vec3::new(0.55, 0.0, -0.2), 0.7, -30.0),
        Some(diffuse("teapot", [0.2, 0.4, 0.75])),
    );
    b.add_box(Vec3::new(-0.35, 0.0, -1.6), Vec3::new(0.35, 0.7, -0.9), diffuse("box", [0.75, 0.75, 0.75]), false);
    b.add_box(Vec3::new(1.0, 0.0, -1.5), Vec3::new(1.4, 1.2, -1.1), diffuse("tall-box", [0.25, 0.6, 0.3]), false);
    // Warm: 0.8 x 0.5 on the ceiling, left of centre. Cool: 0.3 x 0.3 on the right wall,
    // facing -x (edge_u = Z, edge_v = Y: Z x Y = -X).
    ceiling_light(&mut b, Vec3::new(-0.8, hi.y - LIGHT_GAP, -0.3), 0.8, 0.5, emitter("warm-light", [18.0, 12.0, 6.0]));
    let cool_centre = Vec3::new(hi.x - LIGHT_GAP, 1.6, 0.2);
    b.add_quad(
        cool_centre - Vec3::new(0.0, 0.15, 0.15),
        Vec3::Z * 0.3,
        Vec3::Y * 0.3,
        emitter("cool-light", [12.0, 28.0, 70.0]),
    );
    Ok(b.build_report())
}

fn million() -> Result<(Scene, LoadReport)> {
    let bunny = mesh("stanford-bunny")?;
    let (lo, hi) = (Vec3::new(-2.0, 0.0, -2.0), Vec3::new(2.0, 2.5, 2.0));
    let white = diffuse("white", WHITE);
    let mut b = SceneBuilder::new();
    // Walls in the order of BOX_FACES: -x, +x, floor, ceiling, back (-z), front (+z).
    let walls = [
        diffuse("red", [0.65, 0.12, 0.08]),
        diffuse("green", [0.14, 0.45, 0.09]),
        white.clone(),
        white.clone(),
        white.clone(),
        white,
    ];
    b.add_box_faces(lo, hi, walls, true); // a closed room, faces inward
    let albedos = [[0.75, 0.75, 0.75], [0.75, 0.55, 0.3], [0.3, 0.5, 0.75], [0.6, 0.7, 0.35]];
    for i in 0..4 {
        for j in 0..4 {
            let base = Vec3::new(-1.35 + 0.9 * i as f32, 0.0, -1.35 + 0.9 * j as f32);
            let material = diffuse(&format!("bunny-{}", (i + j) % 4), albedos[(i + j) % 4]);
            // Each bunny turned by its own multiple of 22.5 degrees.
            b.add_mesh(&bunny, stand_on(bunny.bounds, base, 0.6, 22.5 * (i * 4 + j) as f32), Some(material));
        }
    }
    ceiling_light(&mut b, Vec3::new(0.0, hi.y - LIGHT_GAP, 0.0), 0.8, 0.8, emitter("light", [12.0, 11.0, 10.0]));
    Ok(b.build_report())
}

fn open_ground() -> Result<(Scene, LoadReport)> {
    let (suzanne, teapot) = (mesh("suzanne")?, mesh("teapot")?);
    let mut b = SceneBuilder::new();
    // 200 x 200, facing up (edge_u = Z, edge_v = X: Z x X = +Y).
    let half = 100.0;
    b.add_quad(
        Vec3::new(-half, 0.0, -half),
        Vec3::Z * 2.0 * half,
        Vec3::X * 2.0 * half,
        diffuse("ground", [0.5, 0.5, 0.5]),
    );
    b.add_mesh(
        &teapot,
        stand_on(teapot.bounds, Vec3::new(-0.9, 0.0, 0.0), 1.0, 30.0),
        Some(diffuse("teapot", [0.7, 0.3, 0.2])),
    );
    b.add_mesh(
        &suzanne,
        stand_on(suzanne.bounds, Vec3::new(1.0, 0.0, 0.2), 1.0, -20.0),
        Some(diffuse("suzanne", [0.3, 0.6, 0.7])),
    );
    ceiling_light(&mut b, Vec3::new(0.0, 4.0, 0.5), 1.5, 1.5, emitter("light", [30.0, 28.0, 26.0]));
    Ok(b.build_report())
}
