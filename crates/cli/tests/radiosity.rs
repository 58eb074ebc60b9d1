//! `lumbre radiosity` as a program: it states its memory and time before the work, refuses
//! what cannot fit naming the flags to change, and never uses more host memory than it
//! announced, on both backends.

use std::process::Command;

use lumbre_gpu::testing::gpu_required;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::TempDir;

fn scene(name: &str) -> String {
    format!("{}/../../testdata/scenes/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn lumbre(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lumbre")).args(args).output().expect("run lumbre");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(!stderr.contains("panicked"), "{args:?} panicked:\n{stderr}");
    (out.status.success(), stdout, stderr)
}

/// "12.3 MiB" or "1.2 GiB" in bytes.
fn bytes(text: &str) -> f64 {
    let (value, unit) = text.trim().split_once(' ').expect("a value and a unit");
    let v: f64 = value.parse().expect("a number");
    v * if unit.starts_with("GiB") { (1u64 << 30) as f64 } else { (1u64 << 20) as f64 }
}

/// The peak and the announcement of the summary line `peak host memory A of B announced`.
fn peak_and_announced(stdout: &str) -> (f64, f64) {
    let at = stdout.find("peak host memory ").expect("the summary gives the peak") + "peak host memory ".len();
    let rest = &stdout[at..];
    let (peak, rest) = rest.split_once(" of ").expect("peak of announced");
    let announced = rest.split(" announced").next().expect("announced");
    (bytes(peak), bytes(announced))
}

#[test]
fn memory_is_announced_and_kept() {
    let dir = TempDir::new("radiosity-memory");
    let mut backends = vec!["cpu"];
    if gpu_required() || lumbre_gpu::Gpu::new().is_ok() {
        backends.push("gpu");
    }
    for backend in backends {
        let out = dir.join(format!("{backend}.png"));
        let (ok, stdout, stderr) = lumbre(&[
            "radiosity",
            &scene("CornellBox-Diffuse.obj"),
            "--elements",
            "1500",
            "--patches",
            "120",
            "--samples",
            "4",
            "--width",
            "32",
            "--height",
            "32",
            "--backend",
            backend,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(ok, "{backend}: {stderr}");
        assert!(stdout.contains("resources for --elements 1500 --patches 120: host memory about"), "{stdout}");
        if cfg!(target_os = "linux") {
            let (peak, announced) = peak_and_announced(&stdout);
            assert!(peak <= announced, "{backend}: peak {peak} above the announced {announced}\n{stdout}");
        }
        assert!(out.exists());
    }
}

#[test]
fn runs_that_cannot_fit_are_refused_before_any_work() {
    let dir = TempDir::new("radiosity-refused");
    let out = dir.join("x.png");
    let (ok, _, stderr) = lumbre(&[
        "radiosity",
        &scene("CornellBox-Diffuse.obj"),
        "--elements",
        "40000000",
        "--patches",
        "2000000",
        "--backend",
        "cpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("--elements 40000000 --patches 2000000") && stderr.contains("lower --elements"),
        "{stderr}"
    );
    assert!(!out.exists());
    // A scene without emitters has nothing to light it.
    let (ok, _, stderr) = lumbre(&["radiosity", &scene("teapot.obj"), "-o", out.to_str().unwrap()]);
    assert!(!ok && stderr.contains("no emitting triangles"), "{stderr}");
}
