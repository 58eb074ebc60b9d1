//! Bad input to `lumbre`, run as a program: every case is an error naming the flag, value,
//! file or line and what is allowed, or a documented clamp with a warning; never a panic, a
//! wrong image with exit 0, or a partial output file (the README's "Bad input" rule).
//! Images are tiny so that the GPU cases stay fast on lavapipe.

use std::path::Path;
use std::sync::OnceLock;

use glam::Vec3;
use lumbre_gpu::GpuOptions;
use lumbre_gpu::testing::{capabilities, gpu_required, test_gpu, try_test_gpu};
use lumbre_raytrace::Image;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{TempDir, refused, succeeds};

/// The backends to try: the CPU, and the GPU where there is one (always with
/// `LUMBRE_REQUIRE_GPU=1`).
fn backends() -> &'static [&'static str] {
    static GPU: OnceLock<bool> = OnceLock::new();
    let gpu = *GPU.get_or_init(|| {
        match try_test_gpu(&GpuOptions::from_env(), lumbre_gpu::wgpu::Features::empty(), gpu_required()) {
            Ok(gpu) => gpu.is_some(),
            Err(why) => panic!("{why}"),
        }
    });
    if gpu { &["cpu", "gpu"] } else { &["cpu"] }
}

/// A repository file, as a string.
fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).to_str().expect("UTF-8 path").to_owned()
}

/// One triangle with corners scaled by `s`, seen from the front.
fn triangle(s: f32) -> String {
    format!("v 0 0 0\nv {s:e} 0 0\nv 0 {s:e} 0\nf 1 2 3\n")
}

fn load(path: &Path) -> Image {
    match path.extension().and_then(|e| e.to_str()) {
        Some("exr") => Image::load_exr(path),
        _ => Image::load_png(path),
    }
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Pixels of `image` that differ from its most common value (the background).
fn covered(image: &Image) -> usize {
    let key = |p: &Vec3| p.to_array().map(f32::to_bits);
    let mut counts = std::collections::HashMap::new();
    for p in &image.pixels {
        *counts.entry(key(p)).or_insert(0usize) += 1;
    }
    let background = counts.into_values().max().unwrap_or(0);
    image.pixels.len() - background
}

// ------------------------------------------------------------------ wrong images

#[test]
fn whitted_on_the_gpu_renders_many_samples_in_batches_like_the_cpu() {
    let dir = TempDir::new("batches");
    let scene = repo("testdata/scenes/CornellBox-Original.obj");
    let mut images = Vec::new();
    for b in backends() {
        let out = dir.join(format!("{b}.exr"));
        let args = ["render", &scene, "--backend", b, "--width", "8", "--height", "8", "--spp", "40"];
        let run = succeeds(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
        assert!(run.stdout.contains("40 samples per pixel"), "{}", run.stdout);
        images.push(load(&out));
    }
    let mean = |i: &Image| i.pixels.iter().sum::<Vec3>() / i.pixels.len() as f32;
    assert!(mean(&images[0]).max_element() > 0.05, "the Cornell box renders, not black");
    if let [cpu, gpu] = &images[..] {
        // 40 samples are three GPU batches (16, 16, 8) kept as a running mean in f32.
        let worst = cpu.pixels.iter().zip(&gpu.pixels).map(|(a, b)| (*a - *b).abs().max_element()).fold(0.0, f32::max);
        assert!(worst < 1e-3 * mean(cpu).max_element().max(1.0), "GPU differs from the CPU by {worst}");
    }
}

#[test]
fn samples_per_pixel_outside_the_range_are_refused_by_every_command() {
    let scene = repo("testdata/scenes/CornellBox-Original.obj");
    for spp in ["0", "16777217", "4294967295"] {
        let message = format!("--spp {spp}: must be 1..=16777216");
        for command in ["render", "density", "radiosity"] {
            refused(&[command, &scene, "--spp", spp, "-o", "x.exr"], &[&message]);
        }
    }
}

#[test]
fn the_gpu_loop_limit_is_an_error_never_a_dark_image() {
    if !backends().contains(&"gpu") {
        return;
    }
    // 20000 small emitters above a floor: each light is a shadow ray per sample, more loop
    // iterations than a driver that ends long loops (lavapipe) runs in one invocation.
    let dir = TempDir::new("loops");
    let mut obj =
        String::from("mtllib l.mtl\nv -9 0 -9\nv 9 0 -9\nv 9 0 9\nv -9 0 9\nusemtl floor\nf 1 3 2\nf 1 4 3\n");
    obj.push_str("usemtl light\n");
    for i in 0..20000 {
        let (x, z) = ((i % 160) as f32 * 0.05 - 4.0, (i / 160) as f32 * 0.05 - 4.0);
        obj.push_str(&format!("v {x} 2 {z}\nv {} 2 {z}\nv {x} 2 {}\nf -3 -2 -1\n", x + 0.03, z + 0.03));
    }
    let scene = dir.write("l.obj", obj).display().to_string();
    dir.write("l.mtl", "newmtl floor\nKd 0.5 0.5 0.5\nnewmtl light\nKd 0 0 0\nKe 1 1 1\n");
    let out = dir.join("l.png");
    let camera = "0,5,5,0,0,0,0,1,0,40";
    let args = ["render", &scene, "--backend", "gpu", "--width", "4", "--height", "4", "--camera", camera];
    let args = [&args[..], &["-o", out.to_str().unwrap()]].concat();
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty()).expect("the GPU the program uses");
    if capabilities(&gpu).loop_limit.is_some() {
        let err = refused(&args, &["stopped short", "65535"]);
        assert!(!out.exists(), "no image after {err}");
    } else {
        // Loops run to the end: the floor is lit.
        succeeds(&args);
        let image = Image::load_png(&out).unwrap();
        assert!(image.pixels.iter().any(|p| p.max_element() > 0.0), "a dark image");
    }
}

#[test]
fn a_triangle_renders_alike_at_any_scale_a_float_holds() {
    let dir = TempDir::new("scale");
    for b in backends() {
        let mut images = Vec::new();
        for s in [1.0, 1e-6, 1e7, 1e9] {
            let scene = dir.write(format!("t{s:e}.obj"), triangle(s)).display().to_string();
            let out = dir.join(format!("{b}{s:e}.png"));
            succeeds(&[
                "render",
                &scene,
                "--backend",
                b,
                "--width",
                "16",
                "--height",
                "16",
                "-o",
                out.to_str().unwrap(),
            ]);
            images.push((s, load(&out)));
        }
        let reference = &images[0].1;
        assert!(covered(reference) > 30, "{b}: the triangle covers {} pixels", covered(reference));
        for (s, image) in &images[1..] {
            let off =
                reference.pixels.iter().zip(&image.pixels).filter(|(a, b)| (**a - **b).abs().max_element() > 0.02);
            let off = off.count();
            assert!(off <= 2, "{b}: at scale {s:e}, {off} pixels differ from scale 1");
        }
    }
}

#[test]
fn scenes_too_small_or_too_large_for_f32_are_refused() {
    let dir = TempDir::new("extreme");
    let tiny = dir.write("tiny.obj", triangle(1e-20)).display().to_string();
    refused(&["render", &tiny, "-o", "x.png"], &["tiny.obj", "scene size", "too small", "scale the model up"]);
    let huge = dir.write("huge.obj", triangle(1e20)).display().to_string();
    refused(&["render", &huge, "-o", "x.png"], &["huge.obj", "too large", "scale the model down"]);
}

#[test]
fn clouds_of_one_point_or_identical_points_are_drawn() {
    let dir = TempDir::new("one-point");
    let one = dir.write("one.txt", "0 0 0 1 0 0 0 0\n").display().to_string();
    let same = dir.write("same.txt", "2 3 4 0 1 0 0 0\n".repeat(1000)).display().to_string();
    for b in backends() {
        for cloud in [&one, &same] {
            let out = dir.join("v.png");
            let args = ["volume", cloud, "--backend", b, "--width", "16", "--height", "16", "--depth", "4"];
            succeeds(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
            let image = load(&out);
            assert!(covered(&image) > 64, "{b} {cloud}: {} pixels drawn", covered(&image));
        }
    }
}

#[test]
fn clouds_too_large_for_f32_are_refused() {
    let dir = TempDir::new("far-point");
    let far = dir.write("far.txt", "0 0 0 1 0 0 0 0\n1e38 0 0 0 1 0 0 0\n").display().to_string();
    refused(&["volume", &far, "-o", "x.png"], &["size 1e38", "too large", "scale the cloud"]);
    let offset = dir.write("offset.txt", "1e9 0 0 1 0 0 0 0\n1e9 1 0 0 1 0 0 0\n").display().to_string();
    refused(&["volume", &offset, "-o", "x.png"], &["from the origin", "move it closer"]);
}

#[test]
fn point_coefficients_out_of_range_are_clamped_with_a_warning() {
    let dir = TempDir::new("coefficients");
    let cloud = dir.write("c.txt", "0 0 0 1 0 0 -0.5 0\n1 1 1 0 1 0 0 5\n").display().to_string();
    let clamped = dir.write("clamped.txt", "0 0 0 1 0 0 0 0\n1 1 1 0 1 0 0 1\n").display().to_string();
    let render = |cloud: &str, name: &str| {
        let out = dir.join(name);
        let args = ["volume", cloud, "--width", "16", "--height", "16", "--depth", "2"];
        let run = succeeds(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
        (run, load(&out))
    };
    let (run, image) = render(&cloud, "c.exr");
    assert!(
        run.stderr.contains("2 point(s) had reflection or refraction outside [0, 1], clamped (the first at line 1)"),
        "{}",
        run.stderr
    );
    let (run, expected) = render(&clamped, "clamped.exr");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    assert!(covered(&image) > 0, "both points are drawn");
    assert_eq!(image.pixels, expected.pixels, "drawn as with the clamped values");
}

// ------------------------------------------------------------------ failed writes

#[test]
fn a_failed_write_is_an_error_and_leaves_no_file() {
    let dir = TempDir::new("full");
    let scene = dir.write("t.obj", triangle(1.0)).display().to_string();
    refused(&["render", &scene, "-o", "/dev/full"], &["-o /dev/full", ".png or .exr"]);
    // A PNG name for the full device: the write itself fails.
    let link = dir.join("full.png");
    std::os::unix::fs::symlink("/dev/full", &link).expect("symlink");
    refused(&["render", &scene, "--width", "8", "--height", "8", "-o", link.to_str().unwrap()], &["full.png"]);
    assert_eq!(dir.files(), ["full.png", "t.obj"], "no temporary file left behind");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
}

#[test]
fn unknown_formats_and_missing_folders_are_refused_before_any_work() {
    let dir = TempDir::new("formats");
    let scene = dir.write("t.obj", triangle(1.0)).display().to_string();
    for out in ["out.jpg", "out.bmp", "out"] {
        let path = dir.join(out);
        refused(&["render", &scene, "-o", path.to_str().unwrap()], &[".png or .exr"]);
    }
    let missing = dir.join("no-such-folder/out.png");
    refused(&["render", &scene, "-o", missing.to_str().unwrap()], &["does not exist"]);
    assert_eq!(dir.files(), ["t.obj"]);
}

#[test]
fn orbit_frames_are_written_whole_and_a_failed_frame_is_an_error() {
    let dir = TempDir::new("orbit");
    let cloud = dir.write("c.txt", "0 0 0 1 0 0 0 0\n1 1 1 0 1 0 0 0\n").display().to_string();
    let out = dir.join("o.png");
    let args = ["volume", &cloud, "--width", "8", "--height", "8", "--depth", "3", "--orbit", "3"];
    succeeds(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
    assert_eq!(dir.files(), ["c.txt", "o_000.png", "o_001.png", "o_002.png"]);
    for f in ["o_000.png", "o_001.png", "o_002.png"] {
        load(&dir.join(f));
    }
    // The second frame cannot be written: the command fails naming it.
    std::fs::remove_file(dir.join("o_001.png")).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("o_001.png")).expect("symlink");
    refused(&[&args[..], &["-o", out.to_str().unwrap()]].concat(), &["o_001.png"]);
}

// ------------------------------------------------------------------ crashes and runaways

#[test]
fn images_too_large_are_refused_naming_the_flags() {
    let dir = TempDir::new("sizes");
    let scene = dir.write("t.obj", triangle(1.0)).display().to_string();
    let cloud = dir.write("c.txt", "0 0 0 1 0 0 0 0\n").display().to_string();
    let max = u32::MAX.to_string();
    refused(
        &["render", &scene, "--width", &max, "--height", &max, "-o", "x.png"],
        &["at most 4294967295", "lower --width"],
    );
    refused(&["volume", &cloud, "--width", &max, "-o", "x.png"], &["--width 4294967295 --height 480", "lower --width"]);
    // Within 32-bit pixel indices, but more memory than any test machine has.
    refused(
        &["render", &scene, "--width", "60000", "--height", "60000", "-o", "x.png"],
        &["of memory", "lower --width"],
    );
    refused(&["render", &scene, "--width", "0", "-o", "x.png"], &["--width 0", "at least 1"]);
    if let Some(gpu) = try_test_gpu(&GpuOptions::from_env(), lumbre_gpu::wgpu::Features::empty(), false).unwrap() {
        // One row more than the device's largest storage buffer holds at 16 bytes a pixel
        // (4000 x 3000 on lavapipe's 128 MiB): the host may hold it, the GPU cannot.
        let l = gpu.limits();
        let most = l.max_storage_buffer_binding_size.min(l.max_buffer_size) / 16;
        let height = (most / 4000 + 1).max(3000).to_string();
        let err = refused(
            &["render", &scene, "--backend", "gpu", "--width", "4000", "--height", &height, "-o", "x.png"],
            &[&format!("--width 4000 --height {height}")],
        );
        assert!(err.contains("--backend cpu") || err.contains("of memory"), "{err}");
    }
    assert_eq!(dir.files(), ["c.txt", "t.obj"]);
}

#[test]
fn many_samples_render_in_batches_to_the_count_asked() {
    let dir = TempDir::new("many-samples");
    let scene = dir.write("t.obj", triangle(1.0)).display().to_string();
    let out = dir.join("t.png");
    let args = ["render", &scene, "--width", "2", "--height", "2", "--spp", "5000", "--write-every", "0.01"];
    let run = succeeds(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
    assert!(run.stdout.contains("5000 samples per pixel"), "{}", run.stdout);
    assert!(out.exists());
}

#[test]
fn phantoms_beyond_what_an_octree_holds_are_refused_with_the_range() {
    for n in ["1024", "512", "404"] {
        refused(&["volume", &format!("phantom:{n}"), "-o", "x.png"], &["N must be 4..=403", "octree holds at most"]);
    }
    refused(&["volume", "phantom:3", "-o", "x.png"], &["N must be 4..=403"]);
}

#[test]
fn frame_counts_are_bounded() {
    let dir = TempDir::new("frames");
    let cloud = dir.write("c.txt", "0 0 0 1 0 0 0 0\n").display().to_string();
    refused(&["volume", &cloud, "--orbit", "100000", "-o", "x.png"], &["--orbit 100000: must be 0..=3600"]);
    refused(&["volume", &cloud, "--move", "3601", "-o", "x.png"], &["--move 3601: must be 0..=3600"]);
    let scene = repo("testdata/scenes/CornellBox-Original.obj");
    refused(&["radiosity", &scene, "--relight", "100000", "-o", "x.png"], &["--relight 100000: must be 0..=3600"]);
    assert_eq!(dir.files(), ["c.txt"]);
}

// ------------------------------------------------------------------ silent acceptance

#[test]
fn mtl_values_out_of_range_are_clamped_or_ignored_with_a_warning() {
    let dir = TempDir::new("mtl");
    let scene = dir.write("t.obj", format!("mtllib t.mtl\nusemtl odd\n{}", triangle(1.0))).display().to_string();
    dir.write("t.mtl", "newmtl odd\nKd 1000 -5 3\nNi 0\nNs -5\nd -3\n");
    let out = dir.join("t.png");
    let run = succeeds(&["render", &scene, "--width", "8", "--height", "8", "-o", out.to_str().unwrap()]);
    for w in [
        "t.mtl:2: Kd 1000 -5 3 is out of range (allowed: 0 to 1); clamped to 1 0 1",
        "t.mtl:3: Ni 0 is out of range (allowed: at least 1); ignored, the default is used",
        "t.mtl:4: Ns -5 is out of range (allowed: at least 0); clamped to 0",
        "t.mtl:5: d -3 is out of range (allowed: 0 to 1); clamped to 0",
    ] {
        assert!(run.stderr.contains(w), "{w:?} not in\n{}", run.stderr);
    }
}

#[test]
fn contradicting_or_out_of_range_flags_are_refused() {
    let dir = TempDir::new("flags");
    let cloud = dir.write("c.txt", "0 0 0 1 0 0 0 0\n").display().to_string();
    let scene = dir.write("t.obj", triangle(1.0)).display().to_string();
    let cases: [(&[&str], &str); 9] = [
        (&["volume", &cloud, "--depth", "4", "--level", "6"], "--level 6 is deeper than --depth 4: must be 0..=4"),
        (&["volume", &cloud, "--background", "-1"], "--background -1: must be in [0, 1)"),
        (&["volume", &cloud, "--orbit", "2", "--move", "2"], "--orbit 2 and --move 2: choose one"),
        (&["volume", &cloud, "--depth", "22"], "--depth 22: must be 1..=21"),
        (&["volume", &cloud, "--max-depth", "0"], "--max-depth 0: must be 1..=12"),
        (&["render", &scene, "--max-depth", "13"], "--max-depth 13: must be 1..=12"),
        (&["render", &scene, "--write-every", "0"], "--write-every 0: must be a positive number of seconds"),
        (&["render", &scene, "--leaf-size", "0"], "--leaf-size 0: must be at least 1"),
        (&["render", &scene, "--camera", "0,0,1,0,0,0,0,1,0,200"], "--camera 0,0,1,0,0,0,0,1,0,200: camera: fov"),
    ];
    for (args, message) in cases {
        refused(&[args, &["-o", "x.png"]].concat(), &[message]);
    }
    assert_eq!(dir.files(), ["c.txt", "t.obj"]);
}

// ------------------------------------------------------------------ unclear messages

#[test]
fn a_face_index_out_of_range_is_named_with_its_line() {
    let dir = TempDir::new("face-index");
    let scene = dir.write("f.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n").display().to_string();
    let run = succeeds(&["render", &scene, "--width", "8", "--height", "8", "-o", dir.join("f.png").to_str().unwrap()]);
    assert!(run.stderr.contains("f.obj:5: face index out of range (the file has 3 vertices"), "{}", run.stderr);
    let only_bad = dir.write("g.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n").display().to_string();
    refused(&["render", &only_bad, "-o", "x.png"], &["no valid triangles", "g.obj:4: face index out of range"]);
}

#[test]
fn a_utf8_byte_order_mark_is_accepted() {
    let dir = TempDir::new("bom");
    let scene = dir.write("b.obj", [&b"\xef\xbb\xbf"[..], triangle(1.0).as_bytes()].concat()).display().to_string();
    succeeds(&["render", &scene, "--width", "8", "--height", "8", "-o", dir.join("b.png").to_str().unwrap()]);
    let cloud = dir.write("b.txt", b"\xef\xbb\xbf0 0 0 1 0 0 0 0\n").display().to_string();
    succeeds(&["volume", &cloud, "--width", "8", "--height", "8", "-o", dir.join("v.png").to_str().unwrap()]);
    let ply = dir.write("b.ply", b"\xef\xbb\xbfply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n0 0 0\n").display().to_string();
    succeeds(&["volume", &ply, "--width", "8", "--height", "8", "-o", dir.join("p.png").to_str().unwrap()]);
}

#[test]
fn dropped_points_are_counted_alike_on_stdout_and_stderr() {
    let dir = TempDir::new("nan-points");
    let cloud = dir
        .write("n.txt", "0 0 0 1 0 0 0 0\nnan 0 0 1 1 1 0 0\n1 inf 0 1 1 1 0 0\n1 1 1 0 1 0 0 0\n")
        .display()
        .to_string();
    let run = succeeds(&["volume", &cloud, "--width", "8", "--height", "8", "-o", dir.join("n.png").to_str().unwrap()]);
    assert!(run.stderr.contains("2 points kept, 2 dropped (NaN/inf)"), "{}", run.stderr);
    assert!(run.stdout.contains("2 points (2 dropped: NaN/inf)"), "{}", run.stdout);
}

#[test]
fn bench_raytrace_needs_the_scenes_it_is_pointed_at() {
    let dir = TempDir::new("bench-scenes");
    let missing = dir.join("nowhere");
    refused(&["bench", "raytrace", "--scenes", missing.to_str().unwrap()], &["not a folder"]);
    dir.write("suzanne.obj", triangle(1.0));
    refused(
        &["bench", "raytrace", "--scenes", dir.path().to_str().unwrap()],
        &["missing teapot.obj, stanford-bunny.obj"],
    );
    refused(&["bench", "raytrace", "--frames", "0"], &["--frames 0: must be at least 1"]);
    refused(&["bench", "octree", "--repeats", "0"], &["--repeats 0: must be at least 1"]);
}

#[test]
fn progressive_density_agrees_on_both_backends_and_bad_passes_are_refused() {
    let scene = repo("testdata/scenes/CornellBox-Diffuse.obj");
    let dir = TempDir::new("progressive");
    let camera = "0,1,3.9,0,1,0,0,1,0,40";
    let base = ["density", &scene, "--camera", camera, "--width", "24", "--height", "24", "--photons", "20000"];
    let mean = |image: &Image| image.pixels.iter().map(|p| p.element_sum()).sum::<f32>() / image.pixels.len() as f32;
    let mut means = Vec::new();
    for backend in backends() {
        for passes in ["1", "3"] {
            let out = dir.join(format!("d-{backend}-{passes}.exr"));
            let out = out.to_str().expect("UTF-8 path");
            let run = succeeds(
                &[&base[..], &["--backend", backend, "--passes", passes, "--radius", "0.1", "-o", out]].concat(),
            );
            assert_eq!(run.stdout.contains("3 progressive passes"), passes == "3", "{}", run.stdout);
            means.push(mean(&load(Path::new(out))));
        }
    }
    // Shrinking radii change the estimate a little, never its scale; both backends agree.
    for pair in means.chunks(2) {
        assert!((pair[1] / pair[0] - 1.0).abs() < 0.1, "{means:?}");
    }
    assert!(means.iter().all(|m| (m / means[0] - 1.0).abs() < 0.1), "{means:?}");
    refused(&[&base[..], &["--passes", "0", "-o", "x.exr"]].concat(), &["--passes 0"]);
    for alpha in ["0", "1.5", "NaN"] {
        refused(&[&base[..], &["--alpha", alpha, "-o", "x.exr"]].concat(), &["--alpha", alpha]);
    }
}
