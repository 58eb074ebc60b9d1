//! Hostile output and input files for `lumbre`, run as a program: standard output on a full
//! device, output paths that are links, partial files, and input files that are not files.
//! Never a panic; every refusal names the file or the flag.

use std::fs::File;
use std::path::Path;
use std::process::Command;

use lumbre_raytrace::Image;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{TempDir, lumbre_to, refused, succeeds};

const CB: &str = "../../testdata/scenes/CornellBox-Diffuse.obj";

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
}

/// Output paths that are symbolic links are refused, their targets untouched: an image
/// (`render -o`), a factor file (`radiosity --save`), and a link planted in `demo -o DIR`
/// (refused before any work).
#[cfg(unix)]
#[test]
fn links_are_never_written_through() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new("links");
    let target = dir.write("target.txt", "keep");
    let link = dir.join("link.png");
    symlink(&target, &link).unwrap();
    let link_s = link.display().to_string();
    let tiny = ["--width", "8", "--height", "8", "--backend", "cpu"];
    let render = [&["render", CB, "--spp", "1", "-o", &link_s][..], &tiny].concat();
    refused(&render, &["link.png", "symbolic link"]);
    let lrr = dir.join("f.lrr");
    symlink(&target, &lrr).unwrap();
    let (lrr_s, png) = (lrr.display().to_string(), dir.join("r.png").display().to_string());
    let save =
        [&["radiosity", CB, "--elements", "100", "--patches", "10", "--save", &lrr_s, "-o", &png][..], &tiny].concat();
    refused(&save, &["f.lrr", "symbolic link"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");

    let demo = TempDir::new("demo-link");
    symlink(&target, demo.join("report.md")).unwrap();
    let out = demo.path().display().to_string();
    refused(&["demo", "-o", &out, "--backend", "cpu"], &["report.md", "symbolic link", "-o"]);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

/// A factor file that cannot be written leaves nothing behind: a folder that is a file, and
/// (where permissions hold, not as root) a read-only folder.
#[test]
fn failed_factor_file_leaves_nothing() {
    let dir = TempDir::new("lrr-fail");
    let file = dir.write("plain", "x");
    let png = dir.join("r.png").display().to_string();
    let tiny = ["--width", "8", "--height", "8", "--backend", "cpu", "--elements", "100", "--patches", "10"];
    let inside = file.join("f.lrr").display().to_string();
    refused(&[&["radiosity", CB, "--save", &inside, "-o", &png][..], &tiny].concat(), &["f.lrr"]);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "only the plain file is left");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = TempDir::new("lrr-readonly");
        std::fs::set_permissions(ro.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = std::fs::File::create(ro.join("probe")).is_err();
        if probe {
            let lrr = ro.join("f.lrr").display().to_string();
            refused(&[&["radiosity", CB, "--save", &lrr, "-o", &png][..], &tiny].concat(), &["f.lrr"]);
            assert_eq!(std::fs::read_dir(ro.path()).unwrap().count(), 0);
        }
        std::fs::set_permissions(ro.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = succeeds;
}

/// Input that is not a regular file, or is larger than any scene, is refused at once naming
/// the file: a device, a FIFO, a folder, a link to a device, and a 3 GiB (sparse) file.
#[cfg(unix)]
#[test]
fn non_regular_and_huge_inputs_are_refused_before_reading() {
    let dir = TempDir::new("inputs");
    let tiny = ["--width", "8", "--height", "8", "--backend", "cpu"];
    let render = |scene: &str, words: &[&str]| {
        let start = std::time::Instant::now();
        refused(&[&["render", scene][..], &tiny].concat(), words);
        assert!(start.elapsed().as_secs() < 10, "render {scene} was not refused at once");
    };
    render("/dev/zero", &["/dev/zero"]);
    let fifo = dir.join("pipe.obj");
    if Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        render(&fifo.display().to_string(), &["pipe.obj", "not a regular file"]);
    }
    let folder = dir.join("folder.obj");
    std::fs::create_dir(&folder).unwrap();
    render(&folder.display().to_string(), &["folder.obj", "a folder"]);
    let link = dir.join("zero.obj");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    render(&link.display().to_string(), &["zero.obj", "not a regular file"]);
    let huge = dir.join("huge.obj");
    File::create(&huge).unwrap().set_len(3 << 30).unwrap();
    render(&huge.display().to_string(), &["huge.obj", "2 GiB"]);
    let vol = dir.join("v.png").display().to_string();
    refused(&[&["volume", "/dev/zero", "-o", &vol][..], &tiny].concat(), &["/dev/zero", "not a regular file"]);
}

/// `compare`: non-finite pixels are counted and fail the comparison (never RMSE 0 and exit 0),
/// and the Cornell regions are refused on an image too small for them, naming its size.
#[test]
fn compare_refuses_non_finite_pixels_and_misfit_regions() {
    let dir = TempDir::new("compare-nan");
    let grey = Image::from_pixels(8, 8, vec![glam::Vec3::splat(0.5); 64]).unwrap();
    let mut half = grey.clone();
    for i in 0..32 {
        half.pixels[i] = glam::Vec3::NAN;
    }
    let (g, h) = (dir.join("grey.exr"), dir.join("half.exr"));
    grey.save(&g).unwrap();
    half.save(&h).unwrap();
    let (g, h) = (g.display().to_string(), h.display().to_string());
    let e = refused(&["compare", &h, &g], &["32 of 64 pixels are NaN or infinite", "half.exr", "left out"]);
    assert!(e.contains("32 in"), "{e}");
    refused(&["compare", &g, &g, "--regions", "cornell"], &["--regions cornell", "8x8", "48 rows"]);
    succeeds(&["compare", &g, &g]);
}

/// Camera coordinates beyond f32 ray arithmetic name the value; benchmark counts are bounded
/// and their ranges are the real ones.
#[test]
fn camera_and_benchmark_counts_name_the_value() {
    let tiny = ["--width", "8", "--height", "8", "--backend", "cpu"];
    let camera = [&["render", CB, "--camera", "0,1,1e30,0,1,0,0,1,0,40"][..], &tiny].concat();
    refused(&camera, &["eye z 1e30", "beyond"]);
    let roofline = |extra: &[&str], words: &[&str]| {
        refused(&[&["bench", "roofline", "--backend", "cpu"][..], extra].concat(), words);
    };
    // Beyond any host's memory: the error gives the real range, not "70..=33".
    let e = refused(&["bench", "roofline", "--backend", "cpu", "--min-log2", "70"], &["--min-log2 70: must be 4..="]);
    assert!(!e.contains("70..="), "{e}");
    roofline(&["--warmup", "4294967296"], &["--warmup 4294967296", "at most 1000"]);
    roofline(&["--repeats", "1001"], &["--repeats 1001", "at most 1000"]);
    roofline(&["--repeats", "0"], &["--repeats 0: must be at least 1"]);
    refused(&["bench", "raytrace", "--frames", "100000"], &["--frames 100000", "at most 1000"]);
    refused(&["bench", "raytrace", "--cpu-frames", "100000"], &["--cpu-frames 100000", "at most 1000"]);
}
