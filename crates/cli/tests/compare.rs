//! `lumbre compare` run as a program on small images written by the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use glam::Vec3;
use lumbre_raytrace::Image;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::TempDir;

fn lumbre(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lumbre")).arg("compare").args(args).output().expect("run lumbre")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A reference of grey 0.49 (luminance + eps = 0.5) and a test whose left half is 0.99 (100%
/// relative error) and right half matches; written as EXR, the test also as PNG.
fn write_pair(dir: &TempDir, width: u32, height: u32) -> (PathBuf, PathBuf) {
    let reference = Image::from_pixels(width, height, vec![Vec3::splat(0.49); (width * height) as usize]).unwrap();
    let mut test = reference.clone();
    for y in 0..height {
        for x in 0..width / 2 {
            test.set(x, y, Vec3::splat(0.99));
        }
    }
    let (t, r) = (dir.join("test.exr"), dir.join("reference.exr"));
    test.save(&t).unwrap();
    reference.save(&r).unwrap();
    test.save(&dir.join("test.png")).unwrap();
    (t, r)
}

#[test]
fn prints_the_table_and_writes_the_diff_image() {
    let dir = TempDir::new("compare-ok");
    let (test, reference) = write_pair(&dir, 8, 6);
    let diff = dir.join("diff.png");
    let out = lumbre(&[
        &test,
        &reference,
        "--regions".as_ref(),
        "left=0,0,4,6;right=4,0,4,6".as_ref(),
        "--diff".as_ref(),
        &diff,
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Half the pixels at 100%, half at 0: mean 50%, p50 at index round(0.5 * 47) = 24 (100%).
    for want in ["RMSE, linear RGB", "0.353553", "relative error, mean", "50.00%", "ΔE94, p95", "left", "right"] {
        assert!(stdout.contains(want), "missing {want:?} in\n{stdout}");
    }
    let left = stdout.lines().find(|l| l.starts_with("left ")).unwrap();
    let right = stdout.lines().find(|l| l.starts_with("right ")).unwrap();
    assert!(left.contains("24") && left.contains("100.00%"), "{left}");
    assert!(right.contains("0.00%") && !right.contains("100.00%"), "{right}");
    // The diff image: red (the top of the 0..100% ramp) on the left half, black on the right.
    let img = Image::load_png(&diff).unwrap();
    let px = img.to_srgb8();
    assert_eq!((img.width, img.height), (8, 6));
    assert_eq!((px[0], px[7]), ([255, 0, 0], [0, 0, 0]));
    assert!(stdout.contains("100% and more red"), "{stdout}");

    // The PNG of the test image against the EXR reference, the Cornell regions (which need
    // 48 rows), a ΔE map.
    let dir = TempDir::new("compare-cornell");
    let (_, reference) = write_pair(&dir, 64, 48);
    let de = dir.join("de.exr");
    let out = lumbre(&[
        &dir.join("test.png"),
        &reference,
        "--regions".as_ref(),
        "cornell".as_ref(),
        "--diff".as_ref(),
        &de,
        "--diff-of".as_ref(),
        "delta-e94".as_ref(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for name in ["left wall", "right wall", "back wall", "ceiling", "floor", "tall box", "short box"] {
        assert!(stdout.contains(name), "missing {name:?} in\n{stdout}");
    }
    assert_eq!(Image::load_exr(&de).unwrap().width, 64);
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = TempDir::new("compare-errors");
    let (test, reference) = write_pair(&dir, 8, 6);
    let fails = |args: &[&Path], want: &str| {
        let out = lumbre(args);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded:\n{stdout}");
        assert!(stderr.contains(want), "{args:?}: {want:?} not in\n{stderr}");
    };
    let missing = dir.join("missing.exr");
    fails(&[&missing, &reference], "missing.exr: cannot read file: not found");
    fails(&[&test, &dir.join("reference.jpg")], "reference.jpg: unknown image format");
    let small = dir.join("small.exr");
    Image::new(8, 5).save(&small).unwrap();
    fails(&[&test, &small], "test.exr is 8x6 but the reference");
    fails(&[&test, &small], "small.exr is 8x5");
    fails(&[&test, &reference, "--regions".as_ref(), "wall=1,2,3".as_ref()], "\"wall=1,2,3\": expected 4 numbers");
    fails(&[&test, &reference, "--regions".as_ref(), "wall=a,2,3,4".as_ref()], "\"a\" is not a whole number");
    fails(
        &[&test, &reference, "--regions".as_ref(), "wall=4,0,5,1".as_ref()],
        "region \"wall\" (columns 4..9, rows 0..1) reaches outside the 8x6 image",
    );
    fails(&[&test, &reference, "--diff".as_ref(), &dir.join("diff.jpg")], "diff.jpg: unknown image format");
    // A failed run writes no diff image.
    assert!(!dir.join("diff.jpg").exists());
}
