//! Hostile output and input files for `lumbre`, run as a program: standard output on a full
//! device, output paths that are links, partial files, and input files that are not files.
//! Never a panic; every refusal names the file or the flag.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};

use lumbre_raytrace::Image;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::TempDir;

const CB: &str = "../../testdata/scenes/CornellBox-Diffuse.obj";

/// What a run of `lumbre` did.
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `args` with standard output going to `stdout` (captured when `None`); never a
/// panic or a kill by a signal.
fn lumbre_to(args: &[&str], stdout: Option<File>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lumbre"));
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR")).stderr(Stdio::piped());
    cmd.stdout(stdout.map_or_else(Stdio::piped, Stdio::from));
    let out = cmd.output().expect("run lumbre");
    let run = Run {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(out.status.code().is_some(), "killed by a signal: {args:?}\n{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{args:?} panicked:\n{}", run.stderr);
    run
}

/// Runs `args` and expects an error whose message contains every one of `words`.
fn refused(args: &[&str], words: &[&str]) -> String {
    let run = lumbre_to(args, None);
    assert!(!run.ok, "{args:?} succeeded:\n{}", run.stdout);
    for w in words {
        assert!(run.stderr.contains(w), "{args:?}: {w:?} not in\n{}", run.stderr);
    }
    run.stderr
}

/// Runs `args` and expects success.
fn succeeds(args: &[&str]) -> Run {
    let run = lumbre_to(args, None);
    assert!(run.ok, "{args:?} failed:\n{}", run.stderr);
    run
}

/// A command whose standard output is a full device fails with a message naming standard
/// output, never a panic.
#[test]
fn full_standard_output_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = TempDir::new("full-stdout");
    let grey = dir.join("grey.exr");
    let mut img = Image::new(8, 8);
    img.set(1, 1, glam::Vec3::splat(0.5));
    img.save(&grey).unwrap();
    let png = dir.join("r.png").display().to_string();
    let vol = dir.join("v.png").display().to_string();
    let grey = grey.display().to_string();
    let cases: [&[&str]; 5] = [
        &["info"],
        &["compare", &grey, &grey],
        &["render", CB, "--width", "8", "--height", "8", "--spp", "1", "--backend", "cpu", "-o", &png],
        &["volume", "phantom:8", "--depth", "3", "--width", "8", "--height", "8", "-o", &vol],
        &[
            "bench",
            "roofline",
            "--backend",
            "cpu",
            "--min-log2",
            "10",
            "--max-log2",
            "11",
            "--warmup",
            "0",
            "--repeats",
            "1",
        ],
    ];
    for args in cases {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let run = lumbre_to(args, Some(full));
        assert!(!run.ok, "{args:?} succeeded on a full standard output");
        assert!(run.stderr.contains("cannot write to standard output"), "{args:?}:\n{}", run.stderr);
    }
    let _ = (refused, succeeds);
}
