//! The scene set run as a program: `lumbre scenes` lists it, `set:NAME` loads it wherever a
//! scene file goes, `--write` makes OBJ files that load back to the same scene, and each
//! scene's small CPU reference (`lumbre scenes NAME --small DIR`) has the same bits as the
//! image committed in `testdata/reference/small/`.
//!
//! The comparison is bit for bit: the CPU path tracer draws fixed random numbers, sums each
//! pixel's samples in one order, and Rust does not contract or reorder floating-point
//! arithmetic, so a render is the same bits at any optimisation level and thread count. A
//! platform whose libm rounds `powf`, `sin` or `cos` differently would differ in a few last
//! bits; `LUMBRE_BLESS=1` rewrites the images from this platform's renders (review them with
//! `lumbre compare` before committing).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lumbre_raytrace::{Camera, Image, PathOptions, PathRender, Prepared, Scene};

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::TempDir;

/// The set, in the order `lumbre scenes` lists it.
const SET: [&str; 5] = ["cornell", "bunny-room", "two-lights", "million", "open-ground"];

fn lumbre(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lumbre")).args(args).output().expect("run lumbre")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn small_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/reference/small")
}

/// `Ok` when the two images have the same size and the same bits in every channel, else the
/// first difference.
fn same_bits(want: &Image, got: &Image) -> Result<(), String> {
    if (want.width, want.height) != (got.width, got.height) {
        return Err(format!("size {}x{} instead of {}x{}", got.width, got.height, want.width, want.height));
    }
    for (i, (w, g)) in want.pixels.iter().zip(&got.pixels).enumerate() {
        let (wb, gb) = (w.to_array().map(f32::to_bits), g.to_array().map(f32::to_bits));
        if wb != gb {
            let (x, y) = (i as u32 % want.width, i as u32 / want.width);
            return Err(format!("pixel ({x}, {y}) is {g} instead of {w}"));
        }
    }
    Ok(())
}

/// Renders `name`'s small reference through the program and compares it with the committed
/// one (rewriting that first with `LUMBRE_BLESS=1`).
fn check_small(name: &str) {
    let dir = TempDir::new(&format!("small-{name}"));
    let out = lumbre(&["scenes", name, "--small", dir.path().to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let got = Image::load_exr(&dir.join(format!("{name}.exr"))).unwrap();
    let path = small_dir().join(format!("{name}.exr"));
    if std::env::var("LUMBRE_BLESS").is_ok_and(|v| v == "1") {
        got.save_exr(&path).unwrap();
        eprintln!("blessed {}", path.display());
    }
    let want = Image::load_exr(&path).unwrap_or_else(|e| panic!("{e} (make it with `lumbre scenes --small`)"));
    same_bits(&want, &got).unwrap_or_else(|e| panic!("{name}: the CPU render differs from {}: {e}", path.display()));
    // A reference worth the name: lit, finite, no pixel brighter than the lights.
    let mean: f32 = got.pixels.iter().map(|p| p.element_sum() / 3.0).sum::<f32>() / got.pixels.len() as f32;
    assert!(mean > 0.02 && mean < 2.0, "{name}: mean radiance {mean}");
    assert!(got.pixels.iter().all(|p| p.is_finite() && p.min_element() >= 0.0), "{name}");
}

#[test]
fn small_cornell() {
    check_small("cornell");
}

#[test]
fn small_bunny_room() {
    check_small("bunny-room");
}

#[test]
fn small_two_lights() {
    check_small("two-lights");
}

#[test]
fn small_million() {
    check_small("million");
}

#[test]
fn small_open_ground() {
    check_small("open-ground");
}

#[test]
fn a_wrong_image_fails_the_comparison() {
    let load = |name: &str| Image::load_exr(&small_dir().join(format!("{name}.exr"))).unwrap();
    let (cornell, bunny) = (load("cornell"), load("bunny-room"));
    assert_eq!(same_bits(&cornell, &cornell.clone()), Ok(()));
    let e = same_bits(&cornell, &bunny).unwrap_err();
    assert!(e.starts_with("pixel ("), "{e}");
    // One channel of one pixel one ulp off.
    let mut off = cornell.clone();
    let p = off.get(17, 9);
    off.set(17, 9, glam::Vec3::new(p.x, f32::from_bits(p.y.to_bits() + 1), p.z));
    let e = same_bits(&cornell, &off).unwrap_err();
    assert!(e.starts_with("pixel (17, 9)"), "{e}");
    // Another size.
    let e = same_bits(&cornell, &load("million")).unwrap_err();
    assert_eq!(e, "size 16x16 instead of 32x32");
}

/// The table's row of `name`, split on runs of two spaces or more.
fn row<'a>(table: &'a str, name: &str) -> Vec<&'a str> {
    let line = table.lines().find(|l| l.starts_with(&format!("{name} "))).unwrap_or_else(|| panic!("{name}:\n{table}"));
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

#[test]
fn lists_the_set() {
    let out = lumbre(&["scenes"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let count = |name: &str, column: usize| -> usize { row(&stdout, name)[column].parse().unwrap() };
    let bunny = 69451;
    // (name, triangles, area-light triangles)
    let want = [
        ("cornell", 36, 2),
        ("bunny-room", bunny + 12 + 2, 2),
        ("two-lights", 968 + 6320 + 12 + 24 + 4, 4),
        ("open-ground", 2 + 968 + 6320 + 2, 2),
    ];
    for (name, triangles, lights) in want {
        assert_eq!((count(name, 1), count(name, 2)), (triangles, lights), "{name}");
    }
    // Scaled copies of the bunny may lose a few triangles that round to no area.
    let million = count("million", 1);
    assert!((1_000_000..=16 * bunny + 14).contains(&million) && million > 16 * bunny - 100, "{million}");
    let cornell = row(&stdout, "cornell");
    assert_eq!(cornell[4], "0,1,3.9,0,1,0,0,1,0,40");
    assert_eq!(cornell[5], "CornellBox-Diffuse-256.exr");
    for name in SET {
        let r = row(&stdout, name);
        Camera::parse(r[4]).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // A subset, in the order asked.
    let out = lumbre(&["scenes", "open-ground", "cornell"]);
    let (stdout, _) = text(&out);
    let names: Vec<&str> =
        stdout.lines().skip(2).filter_map(|l| l.split(' ').next()).filter(|n| SET.contains(n)).collect();
    assert_eq!(names, ["open-ground", "cornell"]);
}

#[test]
fn unknown_names_list_the_set() {
    let dir = TempDir::new("scenes-unknown");
    let image = dir.join("x.exr");
    for args in [
        vec!["scenes", "cornell", "nope"],
        vec!["render", "set:nope", "--width", "8", "--height", "8", "-o", image.to_str().unwrap()],
    ] {
        let out = lumbre(&args);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?}: {stdout}");
        assert!(stderr.contains("no scene named \"nope\""), "{stderr}");
        for name in SET {
            assert!(stderr.contains(name), "{args:?}: {name} missing in {stderr}");
        }
    }
    assert!(!image.exists());
}

#[test]
fn render_takes_set_names_and_their_cameras() {
    let dir = TempDir::new("scenes-render");
    let render = |out: &Path, extra: &[&str]| {
        let mut args = vec!["render", "set:two-lights", "--method", "path", "--spp", "2", "--width", "12"];
        args.extend(["--height", "10", "-o", out.to_str().unwrap()]);
        args.extend(extra);
        let o = lumbre(&args);
        let (stdout, stderr) = text(&o);
        assert!(o.status.success(), "{stdout}\n{stderr}");
        assert!(stdout.contains("set:two-lights: 7328 triangles (0 dropped)"), "{stdout}");
        Image::load_exr(out).unwrap()
    };
    let default = render(&dir.join("default.exr"), &[]);
    let same = render(&dir.join("same.exr"), &["--camera", "0,1.5,1.9,0,0.45,-0.6,0,1,0,62"]);
    let other = render(&dir.join("other.exr"), &["--camera", "1.5,2,1.5,0,0.5,0,0,1,0,50"]);
    assert_eq!((default.width, default.height), (12, 10));
    assert_eq!(same_bits(&default, &same), Ok(()));
    assert!(same_bits(&default, &other).is_err());
}

#[test]
fn written_scenes_load_back_as_the_same_scene() {
    let dir = TempDir::new("scenes-write");
    let out = lumbre(&["scenes", "bunny-room", "cornell", "--write", dir.join("objs").to_str().unwrap()]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let mut files = std::fs::read_dir(dir.join("objs")).unwrap().map(|e| e.unwrap().file_name()).collect::<Vec<_>>();
    files.sort();
    assert_eq!(files, ["bunny-room.mtl", "bunny-room.obj", "cornell.mtl", "cornell.obj"]);
    // The bunny room has no shading normals, so the loaded scene renders to the same bits
    // as the set's: its small reference.
    let (scene, report) = Scene::load_obj(&dir.join("objs/bunny-room.obj")).unwrap();
    assert_eq!((report.dropped(), report.warnings.len()), (0, 0), "{report}");
    assert_eq!((scene.triangles.len(), scene.lights.len(), scene.materials.len()), (69465, 2, 5));
    let camera = Camera::parse(row(&text(&lumbre(&["scenes", "bunny-room"])).0, "bunny-room")[4]).unwrap();
    let options = PathOptions { width: 32, height: 32, spp: 16, ..Default::default() };
    let prepared = Prepared::new(scene, &Default::default());
    let (image, _) = PathRender { camera, options }.render_cpu(&prepared, &|| {}).unwrap();
    let want = Image::load_exr(&small_dir().join("bunny-room.exr")).unwrap();
    assert_eq!(same_bits(&want, &image), Ok(()));
}
