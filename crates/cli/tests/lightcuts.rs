//! `lumbre lightcuts` and `lumbre bench lightcuts` run as programs on tiny images of the
//! Cornell box, on the CPU and the GPU, and refusing bad flags.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lumbre_gpu::testing::{capabilities, test_gpu};
use lumbre_gpu::wgpu;
use lumbre_raytrace::Image;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::TempDir;

fn cornell() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scenes/CornellBox-Diffuse.obj")
}

/// The reference view.
const CAMERA: &str = "0,1,3.9,0,1,0,0,1,0,40";

/// `lumbre lightcuts` on the Cornell box at 16x12 with `extra` flags.
fn lightcuts(out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lumbre"))
        .arg("lightcuts")
        .arg(cornell())
        .args(["--camera", CAMERA, "--width", "16", "--height", "12", "-o"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run lumbre")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn ok(out: &Output) -> String {
    let (stdout, stderr) = text(out);
    assert!(out.status.success(), "lumbre failed:\n{stdout}\n{stderr}");
    stdout
}

/// The VPL count of a summary line (`... ; 171 VPLs (200 asked), ...`).
fn vpls(stdout: &str) -> u32 {
    let words: Vec<&str> = stdout.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "VPLs").expect("a VPL count");
    words[at - 1].parse().expect("a number before VPLs")
}

#[test]
fn lightcuts_on_cpu_and_gpu_agree() {
    let dir = TempDir::new("lightcuts-both");
    let (cpu, gpu) = (dir.join("cpu.exr"), dir.join("gpu.exr"));
    let heat = dir.join("cuts.png");
    let flags = ["--vpls", "200", "--bounces", "2", "--visibility", "ism", "--ism-size", "32"];
    let cpu_out =
        ok(&lightcuts(&cpu, &[&flags[..], &["--backend", "cpu", "--heatmap", heat.to_str().unwrap()]].concat()));
    let gpu_out = ok(&lightcuts(&gpu, &[&flags[..], &["--backend", "gpu"]].concat()));
    for stdout in [&cpu_out, &gpu_out] {
        for part in ["VPLs", "tree", "G-buffer", "ISMs", "pull-push", "cuts and shading", "average cut", "frame"] {
            assert!(stdout.contains(part), "no {part} in the summary: {stdout}");
        }
    }
    assert!(cpu_out.contains("on cpu") && gpu_out.contains("on gpu"), "{cpu_out}\n{gpu_out}");
    let (a, b) = (Image::load_exr(&cpu).unwrap(), Image::load_exr(&gpu).unwrap());
    assert_eq!((a.width, a.height), (16, 12));
    assert!(a.pixels.iter().all(|p| p.is_finite()) && a.pixels.iter().any(|p| p.x > 0.0));
    let map = Image::load_png(&heat).unwrap();
    assert_eq!((map.width, map.height), (16, 12));
    assert!(map.pixels.iter().any(|p| p.length() > 0.0), "an empty heat map");
    // The program opens the adapter the test would (LUMBRE_ADAPTER, else the best one).
    if test_gpu(wgpu::Features::empty()).is_some_and(|gpu| capabilities(&gpu).exact_f32) {
        // A device rounding f32 operations one by one (lavapipe) repeats the CPU's exactly:
        // the same VPLs, cuts and image.
        assert_eq!(vpls(&cpu_out), vpls(&gpu_out));
        assert_eq!(a.pixels, b.pixels);
    } else {
        // Fused multiply-adds move VPLs by ulps and may change a few cuts (of 2% error each); a
        // light path grazing an edge may go on or end, taking its later VPLs with it: with 200
        // VPLs on 16 x 12 pixels the images may differ by a few percent.
        let (x, y) = (vpls(&cpu_out) as f64, vpls(&gpu_out) as f64);
        assert!((x - y).abs() <= 0.01 * x, "{x} vs {y} VPLs");
        let sum = |i: &Image| i.pixels.iter().map(|p| p.element_sum() as f64).sum::<f64>();
        let diff: f64 = a.pixels.iter().zip(&b.pixels).map(|(p, q)| (*p - *q).abs().element_sum() as f64).sum();
        assert!(diff <= 0.05 * sum(&a), "images differ by {diff} of {}", sum(&a));
    }
}

#[test]
fn instant_radiosity_with_shadow_rays() {
    let dir = TempDir::new("lightcuts-instant");
    let out = dir.join("instant.png");
    let stdout = ok(&lightcuts(&out, &["--vpls", "100", "--method", "instant", "--visibility", "rays"]));
    assert!(stdout.contains("instant radiosity") && !stdout.contains("average cut"), "{stdout}");
    let img = Image::load_png(&out).unwrap();
    assert!(img.pixels.iter().any(|p| p.x > 0.0));
}

#[test]
fn bad_flags_are_refused_naming_the_flag_and_range() {
    let dir = TempDir::new("lightcuts-bad");
    let out = dir.join("never.exr");
    let heat = dir.join("never.png");
    let cases: [(&[&str], &[&str]); 7] = [
        (&["--vpls", "0"], &["--vpls", "1..="]),
        (&["--vpls", "100", "--bounces", "0"], &["--bounces", "1..=64"]),
        (&["--vpls", "100", "--error", "1.5"], &["--error", "[0, 1]"]),
        (&["--vpls", "100", "--error", "NaN"], &["--error", "[0, 1]"]),
        (&["--vpls", "100", "--max-cut", "0"], &["--max-cut", "1 or more"]),
        (&["--vpls", "100", "--ism-size", "48"], &["--ism-size", "[32, 64, 128]"]),
        (&["--vpls", "100", "--method", "instant", "--heatmap", heat.to_str().unwrap()], &["--heatmap", "lightcuts"]),
    ];
    for (flags, words) in cases {
        let o = lightcuts(&out, flags);
        let (_, stderr) = text(&o);
        assert!(!o.status.success(), "{flags:?} accepted");
        for w in words {
            assert!(stderr.contains(w), "{flags:?}: {w} not in {stderr}");
        }
        assert!(!out.exists() && !heat.exists(), "{flags:?} wrote an image");
    }
    // Shadow maps too large for the CPU (6.5 TB) are refused before anything is allocated.
    let o = lightcuts(&out, &["--vpls", "100000000", "--visibility", "ism", "--ism-size", "128"]);
    assert!(!o.status.success() && text(&o).1.contains("GiB"), "{}", text(&o).1);
}

#[test]
fn bench_lightcuts_tiny_on_both_backends() {
    for backend in ["cpu", "gpu"] {
        let o = Command::new(env!("CARGO_BIN_EXE_lumbre"))
            .args(["bench", "lightcuts", "--backend", backend, "--vpls", "40", "--size", "8", "--cut-vpls", "40"])
            .args(["--cut-size", "8", "--greedy", "0", "--warmup", "0", "--repeats", "1", "--ism-size", "32", "--json"])
            .args(["--ism-vpls", "20"])
            .output()
            .expect("run lumbre");
        let stdout = ok(&o);
        assert!(stdout.trim_start().starts_with('[') && stdout.trim_end().ends_with(']'), "{stdout}");
        for part in ["frames by stage", "instant", "ism", "rays", "Tables 2 and 3", "morton"] {
            assert!(stdout.contains(part), "{backend}: no {part} in {stdout}");
        }
        // The ISM tables need a GPU; every texel agrees with the CPU's.
        let ism = ["Imperfect shadow maps", "3968x3968"];
        assert_eq!(ism.map(|p| stdout.contains(p)), [backend == "gpu"; 2], "{backend}: {stdout}");
        assert!(!stdout.contains("Greedy light tree build"), "--greedy 0 should skip the greedy table");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_lumbre"))
        .args(["bench", "lightcuts", "--backend", "gpu", "--heap", "48", "--vpls", "40", "--size", "8"])
        .output()
        .expect("run lumbre");
    assert!(!o.status.success() && text(&o).1.contains("--heap"), "{}", text(&o).1);
}
