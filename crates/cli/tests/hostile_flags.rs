//! Hostile flags of `density`, `radiosity`, `lightcuts`, `volume` and the benchmarks, run as
//! a program: counts out of range, requests larger than the host, scenes without light and
//! two outputs on one path are refused before any work, naming the flag; never a panic.

use std::path::Path;
use std::process::Command;

use lumbre_gpu::GpuOptions;
use lumbre_gpu::testing::{gpu_required, try_test_gpu};

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{TempDir, refused, succeeds};

const CB: &str = "../../testdata/scenes/CornellBox-Diffuse.obj";
const SZ: [&str; 4] = ["--width", "8", "--height", "8"];

/// Whether a GPU is there (always with `LUMBRE_REQUIRE_GPU=1`).
fn has_gpu() -> bool {
    match try_test_gpu(&GpuOptions::from_env(), lumbre_gpu::wgpu::Features::empty(), gpu_required()) {
        Ok(gpu) => gpu.is_some(),
        Err(why) => panic!("{why}"),
    }
}

/// `command scene --width 8 --height 8` followed by `rest`.
fn on_cb<'a>(command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![command, CB];
    args.extend(SZ);
    args.extend(rest);
    args
}

#[test]
fn count_flags_are_bounded_before_work() {
    refused(&on_cb("radiosity", &["--elements", "4294967296"]), &["--elements 4294967296", "lower --elements"]);
    refused(&on_cb("radiosity", &["--samples", "0"]), &["--samples 0", "1..=4096"]);
    refused(&on_cb("radiosity", &["--samples", "4294967295"]), &["--samples 4294967295"]);
    refused(&on_cb("density", &["--passes", "100000"]), &["--passes 100000", "1..=1000"]);
    refused(&on_cb("density", &["--k", "0"]), &["--k 0"]);
    refused(&on_cb("density", &["--radius", "1e30"]), &["--radius 1e30", "diagonal"]);
    // A disk too small for f32 gave infinite and NaN estimates.
    refused(&on_cb("density", &["--radius", "1e-30"]), &["--radius 1e-30", "diagonal"]);
    refused(&on_cb("density", &["--photons", "0"]), &["--photons 0"]);
    let cpu = ["--backend", "cpu"];
    let bench = |rest: &[&'static str]| [&["bench"], rest, &cpu[..]].concat();
    refused(&bench(&["radiosity", "--samples", "0"]), &["--samples 0"]);
    refused(&bench(&["radiosity", "--error-side", "100000"]), &["--error-side 100000"]);
    refused(&bench(&["radiosity", "--error-side", "192"]), &["--error-side 192", "matrix"]);
    refused(&bench(&["density", "--rows", "6"]), &["--rows 6", "1..=5"]);
    refused(&bench(&["density", "--rows", "0"]), &["--rows 0"]);
    for b in ["density", "radiosity", "lightcuts", "octree", "primitives"] {
        refused(&bench(&[b, "--warmup", "4294967296"]), &["--warmup 4294967296", "at most 1000"]);
        refused(&bench(&[b, "--repeats", "100000"]), &["--repeats 100000", "at most 1000"]);
    }
}

#[test]
fn too_few_patches_are_clamped_with_a_note() {
    let dir = TempDir::new("hostile-patches");
    let out = dir.path().join("r.png");
    let run = succeeds(&on_cb("radiosity", &["--elements", "100", "--patches", "1", "-o", out.to_str().unwrap()]));
    assert!(run.stderr.contains("warning: n = ") && run.stderr.contains("1 patches asked"), "{}", run.stderr);
    assert!(out.is_file());
}

/// A fan of `n` triangles under one emitter, as OBJ and MTL in `dir`.
fn fan(dir: &Path, n: usize) -> String {
    let mut obj = String::from("mtllib fan.mtl\nusemtl white\nv 0 0 0\n");
    for i in 0..=n {
        let a = std::f32::consts::PI * i as f32 / n as f32;
        obj += &format!("v {} {} 0\n", a.cos(), a.sin());
    }
    for i in 0..n {
        obj += &format!("f 1 {} {}\n", i + 2, i + 3);
    }
    obj += &format!("usemtl light\nv -0.2 0.3 1\nv 0.2 0.3 1\nv 0 0.6 1\nf {} {} {}\n", n + 3, n + 5, n + 4);
    std::fs::write(dir.join("fan.mtl"), "newmtl white\nKd 0.7 0.7 0.7\nnewmtl light\nKd 0 0 0\nKe 5 5 5\n").unwrap();
    let path = dir.join("fan.obj");
    std::fs::write(&path, obj).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn memory_is_checked_before_work() {
    // Many triangles with few elements: the per-triangle data stays within its estimate.
    let dir = TempDir::new("hostile-memory");
    let scene = fan(dir.path(), 20_000);
    let out = dir.path().join("fan.png");
    let mut args = vec!["radiosity", &scene, "-o", out.to_str().unwrap(), "--elements", "500", "--patches", "50"];
    args.extend(SZ);
    let run = succeeds(&args);
    assert!(run.stdout.contains("resources for --elements 500 --patches 50"), "{}", run.stdout);
    refused(&on_cb("radiosity", &["--elements", "100000000"]), &["--elements 100000000", "host memory"]);
    refused(&on_cb("density", &["--photons", "4294967295", "--backend", "cpu"]), &["--photons 4294967295", "GiB"]);
    if has_gpu() {
        // Flights of more than the largest buffer (or, on lavapipe, the host's memory).
        refused(&on_cb("density", &["--photons", "4000000000", "--backend", "gpu"]), &["--photons 4000000000"]);
        refused(&["bench", "lightcuts", "--ism-vpls", "100000000", "--backend", "gpu"], &["--ism-vpls 100000000"]);
    }
}

#[test]
fn radiosity_refuses_a_dark_scene_and_shows_the_loaders_warnings() {
    let dir = TempDir::new("hostile-dark");
    let scene = dir.path().join("dark.obj");
    // One triangle without an emitter, and one dropped for its NaN corner.
    std::fs::write(&scene, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nf 1 2 3\nf 1 2 4\n").unwrap();
    let mut args = vec!["radiosity", scene.to_str().unwrap()];
    args.extend(SZ);
    let e = refused(&args, &["no emitting triangles", "Ke > 0"]);
    assert!(e.contains("warning:") && e.contains("1 non-finite"), "{e}");
}

#[test]
fn two_outputs_on_one_path_are_refused() {
    let dir = TempDir::new("hostile-same");
    let out = dir.path().join("o.png");
    let o = out.to_str().unwrap();
    // The same file by another name is the same file.
    let again = format!("{}/./o.png", dir.path().display());
    refused(
        &on_cb("lightcuts", &["--vpls", "16", "--heatmap", &again, "-o", o]),
        &["-o", "--heatmap", "one file for two outputs"],
    );
    refused(&on_cb("radiosity", &["--save", o, "-o", o]), &["--save", "one file for two outputs"]);
    let missing = dir.path().join("missing/f.lrr");
    refused(&on_cb("radiosity", &["--save", missing.to_str().unwrap(), "-o", o]), &["--save", "does not exist"]);
    assert!(!out.exists(), "nothing is written before the refusal");
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else { return };
    let dir = TempDir::new("hostile-full");
    for (command, name, rest) in [
        ("density", "d.exr", &["--photons", "1000", "--spp", "1"][..]),
        ("radiosity", "r.png", &["--elements", "100", "--patches", "10"][..]),
        ("lightcuts", "l.png", &["--vpls", "16"][..]),
    ] {
        let out = dir.path().join(name);
        let mut args = on_cb(command, rest);
        args.extend(["-o", out.to_str().unwrap()]);
        let run = Command::new(env!("CARGO_BIN_EXE_lumbre"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(full.try_clone().unwrap())
            .output()
            .expect("run lumbre");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}\n{stderr}");
        assert!(stderr.contains("cannot write to standard output") && !stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn cpu_photons_are_checked_against_memory() {
    // 5e7 photons in the box keep about 6e7 flights: about 5.4 GB at their peak, over a 4 GB
    // address-space limit (1e8 under 9 GB aborted after 50 s when only the photons counted).
    if !cfg!(target_os = "linux") {
        return;
    }
    let dir = TempDir::new("hostile-photons");
    let out = dir.path().join("d.exr");
    let (scene, o) = ("../../testdata/scenes/CornellBox-Diffuse.obj", out.to_str().unwrap());
    let args =
        ["density", scene, "--width", "16", "--height", "16", "--photons", "50000000", "--backend", "cpu", "-o", o];
    refused_within_4gb(&args, &["--photons 50000000", "flights kept", "GiB of memory", "--passes"]);
    assert!(!out.exists());
}

/// Runs `lumbre args` under a 4 GB address-space limit, whatever the host has free, and
/// asserts that it is refused (exit 1) with every one of `words` in its message.
fn refused_within_4gb(args: &[&str], words: &[&str]) {
    let run = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_lumbre"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run lumbre");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    for w in words {
        assert!(stderr.contains(w), "{w:?} not in\n{stderr}");
    }
}

#[test]
fn deep_octrees_are_checked_against_memory() {
    let dir = TempDir::new("hostile-volume");
    let out = dir.path().join("v.png");
    let o = out.to_str().unwrap();
    // Within the ranges, but about 20 GiB of nodes (it allocated 8.3 GB, then panicked).
    let deep = ["volume", "phantom:403", "--depth", "21", "--width", "48", "--height", "48", "-o", o];
    if cfg!(target_os = "linux") {
        refused_within_4gb(&deep, &["--depth 21", "phantom:403", "GiB of host memory", "lower --depth"]);
        assert!(!out.exists());
    }
    // On a GPU the build's buffers are checked against its largest binding first: phantom:200
    // at depth 21 has 347 MB of interior nodes (lavapipe failed in the build's allocation).
    let gpu = try_test_gpu(&GpuOptions::from_env(), lumbre_gpu::wgpu::Features::empty(), gpu_required());
    if let Some(gpu) = gpu.unwrap_or_else(|why| panic!("{why}")) {
        let l = gpu.limits();
        let args =
            ["volume", "phantom:200", "--depth", "21", "--width", "16", "--height", "16", "--backend", "gpu", "-o", o];
        if l.max_storage_buffer_binding_size.min(l.max_buffer_size) < 347_293_212 {
            refused(&args, &["--depth 21", "largest storage buffer", "fits)"]);
        } else {
            succeeds(&args);
        }
    }
    // A small phantom at the deepest depth: its peak stays within what it announced.
    let run = succeeds(&["volume", "phantom:48", "--depth", "21", "--width", "16", "--height", "16", "-o", o]);
    assert!(run.stdout.contains("host memory about"), "{}", run.stdout);
    if cfg!(target_os = "linux") {
        let at = run.stdout.find("peak host memory ").expect("a peak") + "peak host memory ".len();
        let (peak, rest) = run.stdout[at..].split_once(" of ").expect("peak of announced");
        let announced = rest.split(" announced").next().unwrap();
        let bytes = |t: &str| {
            let (v, unit) = t.trim().split_once(' ').unwrap();
            v.parse::<f64>().unwrap() * if unit.starts_with("GiB") { 1024.0 * 1024.0 * 1024.0 } else { 1024.0 * 1024.0 }
        };
        assert!(bytes(peak) <= bytes(announced), "{}", run.stdout);
    }
}

#[test]
fn schedule_flags_need_the_wavefront_and_the_path_tracer() {
    let path = |rest: &[&'static str]| on_cb("render", &[&["--method", "path"], rest].concat());
    refused(&path(&["--pool", "64"]), &["--pool and --reorder", "add --wavefront"]);
    refused(&path(&["--reorder"]), &["add --wavefront"]);
    refused(&path(&["--wavefront", "--pool", "0"]), &["--pool 0"]);
    refused(&on_cb("render", &["--wavefront"]), &["--wavefront", "--method path"]);
    if !has_gpu() {
        return;
    }
    // Every schedule writes the same bytes (a pool smaller than the image's 64 pixels included).
    let dir = TempDir::new("schedules");
    let image = |name: &str, rest: &[&'static str]| {
        let out = dir.path().join(name);
        let o = out.to_str().unwrap().to_string();
        let mut args = path(&["--spp", "3", "--backend", "gpu"]);
        args.extend(rest);
        args.extend(["-o", o.as_str()]);
        succeeds(&args);
        std::fs::read(out).unwrap()
    };
    refused(
        &path(&["--wavefront", "--pool", "4000000000", "--backend", "gpu"]),
        &["--pool 4000000000", "lower --pool"],
    );
    let mega = image("mega.exr", &[]);
    assert_eq!(image("wave.exr", &["--wavefront"]), mega);
    assert_eq!(image("sorted.exr", &["--wavefront", "--reorder", "--pool", "40"]), mega);
}
