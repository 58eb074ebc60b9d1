//! Runs cut into shards and spread over devices, run as programs: a path render, a Whitted
//! render and a density estimate in 1, 2, 4 and 7 shards merged by `lumbre merge` are the
//! one-piece run bit for bit, on the CPU and on the GPU; an orbit's frames spread over devices
//! or shards are the same files; `--gpus` with two devices gives the one-device image (and
//! radiosity's factorisation);
//! `--shard auto/N` reads the schedulers' index variables; parts that do not make one run are
//! refused by name.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::wgpu;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{TempDir, lumbre_command, refused, run, succeeds};

/// A small path render of the generated bunny room (69K triangles) or the Cornell box.
fn render_args<'a>(scene: &'a str, backend: &'a str, out: &'a str) -> Vec<&'a str> {
    method_args("path", scene, backend, out)
}

/// A small render by `method` (path: at most 6 bounces; whitted: the default depth 5, with
/// mirrors in the bunny room), samples at index 5.
fn method_args<'a>(method: &'a str, scene: &'a str, backend: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut a = vec!["render", scene, "--method", method, "--spp", "14", "--width", "24", "--height", "18"];
    if method == "path" {
        a.extend(["--max-bounces", "6"]);
    }
    a.extend(["--backend", backend, "-o", out]);
    a
}

/// Renders `scene` in one piece and in `counts` shards, merging each set of parts in a
/// scrambled order: every merge equals the one-piece image, byte for byte.
fn shards_merge_to_the_one_piece_render(scene: &str, backend: &str) {
    shards_merge_by("path", scene, backend);
}

/// [`shards_merge_to_the_one_piece_render`] for the renderer `method`.
fn shards_merge_by(method: &str, scene: &str, backend: &str) {
    let dir = TempDir::new("shards");
    let one = dir.path().join("one.exr");
    succeeds(&method_args(method, scene, backend, one.to_str().unwrap()));
    let want = std::fs::read(&one).unwrap();
    for n in [1u32, 2, 4, 7] {
        let mut parts = Vec::new();
        for i in (0..n).rev() {
            let part = dir.path().join(format!("{n}-{i}.lpart"));
            let shard = format!("{i}/{n}");
            let mut args = method_args(method, scene, backend, part.to_str().unwrap());
            args.extend(["--shard", &shard]);
            let out = succeeds(&args).stdout;
            assert!(out.contains(&format!("(shard {shard}: samples ")), "{out}");
            parts.push(part.to_str().unwrap().to_string());
        }
        let merged = dir.path().join(format!("merged-{n}.exr"));
        let mut args = vec!["merge"];
        args.extend(parts.iter().map(String::as_str));
        args.extend(["-o", merged.to_str().unwrap()]);
        let out = succeeds(&args).stdout;
        let what = if method == "path" { "path" } else { "Whitted" };
        assert!(out.contains(&format!("merged {n} parts of a {what} render: 14 samples per pixel")), "{out}");
        let why = format!("{method} {scene} on {backend}: {n} shards merged differ from one run");
        assert!(std::fs::read(&merged).unwrap() == want, "{why}");
    }
}

#[test]
fn cpu_shards_merge_bit_for_bit() {
    shards_merge_to_the_one_piece_render("set:cornell", "cpu");
}

/// The original Cornell box with a glass short box and a mirror tall box, written into `dir`:
/// the Whitted renderer's chains of reflections and refractions.
fn mirror_box(dir: &TempDir) -> String {
    let testdata = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original");
    let obj = std::fs::read_to_string(format!("{testdata}.obj")).unwrap();
    let mtl = std::fs::read_to_string(format!("{testdata}.mtl")).unwrap();
    let (short, tall) = (mtl.find("newmtl shortBox").unwrap(), mtl.find("newmtl tallBox").unwrap());
    assert!(short < tall, "shortBox before tallBox");
    let mtl = format!(
        "{}{}{}",
        &mtl[..short],
        mtl[short..tall].replacen("illum 2", "illum 7", 1),
        mtl[tall..].replacen("illum 2", "illum 3", 1)
    );
    dir.write("CornellBox-Original.mtl", mtl);
    dir.write("mirror-box.obj", obj).to_str().unwrap().to_string()
}

#[test]
fn cpu_whitted_shards_merge_bit_for_bit() {
    let dir = TempDir::new("mirror-box");
    shards_merge_by("whitted", &mirror_box(&dir), "cpu");
    shards_merge_by("whitted", "set:cornell", "cpu");
}

/// The Whitted renderer on the GPU: shards merged, two devices, and two devices within a
/// shard give the one-device image bit for bit.
#[test]
fn gpu_whitted_shards_and_two_devices_give_the_one_piece_image() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    let scene = TempDir::new("mirror-box");
    shards_merge_by("whitted", &mirror_box(&scene), "gpu");
    let dir = TempDir::new("whitted-gpus");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let args = |out: &str| method_args("whitted", "set:bunny-room", "gpu", out).iter().map(|a| a.to_string()).collect();
    let run = |out: &str, extra: &[&str]| {
        let mut a: Vec<String> = args(out);
        a.extend(extra.iter().map(|e| e.to_string()));
        succeeds(&a.iter().map(String::as_str).collect::<Vec<_>>()).stdout
    };
    run(&p("one.exr"), &[]);
    let out = run(&p("two.exr"), &["--gpus", "0,0"]);
    let per_device = out.lines().filter(|l| l.contains("samples per pixel in")).count();
    assert!(per_device == 2 && out.contains("Whitted: 14 samples per pixel"), "one line per device expected:\n{out}");
    assert!(std::fs::read(p("one.exr")).unwrap() == std::fs::read(p("two.exr")).unwrap(), "two devices differ");
    for i in ["0/2", "1/2"] {
        run(&p(&format!("part-{}.lpart", &i[..1])), &["--gpus", "0,0", "--shard", i]);
    }
    succeeds(&["merge", &p("part-0.lpart"), &p("part-1.lpart"), "-o", &p("merged.exr")]);
    assert!(
        std::fs::read(p("one.exr")).unwrap() == std::fs::read(p("merged.exr")).unwrap(),
        "shards on two devices differ"
    );
}

#[test]
fn gpu_shards_and_two_devices_give_the_one_piece_image() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    shards_merge_to_the_one_piece_render("set:bunny-room", "gpu");
    // Two devices on the first adapter: the samples split between them, the same bits.
    let dir = TempDir::new("gpus");
    let (one, two) = (dir.path().join("one.exr"), dir.path().join("two.exr"));
    succeeds(&render_args("set:bunny-room", "gpu", one.to_str().unwrap()));
    let mut args = render_args("set:bunny-room", "gpu", two.to_str().unwrap());
    args.extend(["--gpus", "0,0"]);
    let out = succeeds(&args).stdout;
    let per_device = out.lines().filter(|l| l.contains("samples per pixel in")).count();
    assert_eq!(per_device, 2, "one line per device expected:\n{out}");
    assert!(std::fs::read(&one).unwrap() == std::fs::read(&two).unwrap(), "two devices differ from one");
}

/// A small density estimate of the Cornell box (radiance, or irradiance of all flights).
fn density_args<'a>(backend: &'a str, irradiance: bool, out: &'a str) -> Vec<&'a str> {
    let mut a = vec!["density", "set:cornell", "--photons", "30000", "--spp", "9", "--width", "20", "--height", "16"];
    a.extend(["--backend", backend, "-o", out]);
    if irradiance {
        a.push("--irradiance");
    }
    a
}

/// A density estimate in `counts` shards, merged: the one-piece image byte for byte.
fn density_shards_merge(backend: &str, irradiance: bool, counts: &[u32]) {
    let dir = TempDir::new("density-shards");
    let one = dir.path().join("one.exr");
    succeeds(&density_args(backend, irradiance, one.to_str().unwrap()));
    let want = std::fs::read(&one).unwrap();
    for &n in counts {
        let mut parts = Vec::new();
        for i in 0..n {
            let part = dir.path().join(format!("{n}-{i}.lpart"));
            let shard = format!("{i}/{n}");
            let mut args = density_args(backend, irradiance, part.to_str().unwrap());
            args.extend(["--shard", &shard]);
            succeeds(&args);
            parts.push(part.to_str().unwrap().to_string());
        }
        parts.reverse();
        let merged = dir.path().join(format!("merged-{n}.exr"));
        let mut args = vec!["merge"];
        args.extend(parts.iter().map(String::as_str));
        args.extend(["-o", merged.to_str().unwrap()]);
        let out = succeeds(&args).stdout;
        assert!(out.contains(&format!("merged {n} parts of a density estimate: 30000 photons")), "{out}");
        let what = format!("density on {backend} (irradiance {irradiance}): {n} shards");
        assert!(std::fs::read(&merged).unwrap() == want, "{what} merged differ from one run");
    }
}

#[test]
fn cpu_density_shards_merge_bit_for_bit() {
    density_shards_merge("cpu", false, &[1, 2, 4, 7]);
    density_shards_merge("cpu", true, &[3]);
}

#[test]
fn gpu_density_shards_merge_bit_for_bit() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    density_shards_merge("gpu", false, &[2, 7]);
    // Two devices on the first adapter, alone and within a shard: the one-device bits.
    let dir = TempDir::new("density-gpus");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    succeeds(&density_args("gpu", false, &p("one.exr")));
    let out = succeeds(&[&density_args("gpu", false, &p("two.exr"))[..], &["--gpus", "0,0"]].concat()).stdout;
    assert!(out.contains("on 2 devices") && out.matches("photon chunks in").count() == 2, "{out}");
    assert!(std::fs::read(p("one.exr")).unwrap() == std::fs::read(p("two.exr")).unwrap(), "two devices differ");
    for i in ["0/2", "1/2"] {
        let part = p(&format!("part-{}.lpart", &i[..1]));
        succeeds(&[&density_args("gpu", false, &part)[..], &["--gpus", "0,0", "--shard", i]].concat());
    }
    succeeds(&["merge", &p("part-0.lpart"), &p("part-1.lpart"), "-o", &p("merged.exr")]);
    assert!(
        std::fs::read(p("one.exr")).unwrap() == std::fs::read(p("merged.exr")).unwrap(),
        "shards on two devices differ"
    );
}

/// Radiosity on two devices (each the rows of whole patches): the same picture, relit frames
/// and saved factorisation as on one, dense and factored.
#[test]
fn radiosity_spread_over_devices_is_the_one_device_run() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    let dir = TempDir::new("radiosity-gpus");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for factored in [false, true] {
        let run = |stem: &str, extra: &[&str]| {
            // The bunny room: deep kd-tree queries, where lavapipe's form factors once depended on
            // the split.
            let mut args =
                vec!["radiosity", "set:bunny-room", "--elements", "1000", "--patches", "100", "--samples", "4"];
            let (out, save) = (p(&format!("{stem}.png")), p(&format!("{stem}.lrr")));
            args.extend(["--width", "32", "--height", "24", "--relight", "2", "--backend", "gpu"]);
            args.extend(["-o", &out, "--save", &save]);
            if factored {
                args.push("--factored");
            }
            args.extend(extra);
            succeeds(&args).stdout
        };
        run("one", &[]);
        let two = run("two", &["--gpus", "0,0"]);
        assert!(two.contains("on 2 GPUs") && two.matches(" chunks, ").count() == 2, "{two}");
        for file in ["_000.png", "_001.png", ".lrr"] {
            let read = |stem: &str| std::fs::read(p(&format!("{stem}{file}"))).unwrap();
            assert!(read("one") == read("two"), "factored {factored}: {file} differs on two devices");
        }
    }
    refused(&["radiosity", "set:cornell", "--gpus", "2"], &["--gpus needs --backend gpu"]);
}

/// A small radiosity run of the Cornell box with `extra` flags.
fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["radiosity", "set:cornell", "--elements", "400", "--patches", "40", "--samples", "4"];
    a.extend_from_slice(extra);
    a
}

/// Radiosity's form factors in 1, 2 and 3 shards (rows of whole patches) merged by `lumbre
/// merge` into the factorisation that the run in one piece saves, byte for byte (CPU, dense
/// and factored); GPU shards merge into a factorisation that renders the scene.
#[test]
fn radiosity_shards_merge_into_the_one_piece_factorisation() {
    let dir = TempDir::new("radiosity-shards");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    for factored in [false, true] {
        let form: &[&str] = if factored { &["--factored"] } else { &[] };
        let one = p(&format!("one-{factored}.lrr"));
        succeeds(&[&with(&["--backend", "cpu", "-o", &p("one.png"), "--save", &one])[..], form].concat());
        for n in [1u32, 2, 3] {
            let mut args = vec!["merge".to_string()];
            for i in (0..n).rev() {
                let part = p(&format!("{factored}-{n}-{i}.lpart"));
                let shard = format!("{i}/{n}");
                let out =
                    succeeds(&[&with(&["--backend", "cpu", "--shard", &shard, "-o", &part])[..], form].concat()).stdout;
                assert!(out.contains(&format!("(shard {shard})")), "{out}");
                args.push(part);
            }
            let merged = p(&format!("merged-{factored}-{n}.lrr"));
            args.extend(["-o".to_string(), merged.clone()]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert!(succeeds(&args).stdout.contains(&format!("merged {n} parts of radiosity form factors")));
            assert!(std::fs::read(&one).unwrap() == std::fs::read(&merged).unwrap(), "factored {factored}, {n} shards");
        }
    }
    // Shards of another mesh, a missing shard and an image output are refused by name.
    let other = p("other.lpart");
    let other_args = ["radiosity", "set:cornell", "--elements", "300", "--patches", "40", "--samples", "4"];
    succeeds(&[&other_args[..], &["--backend", "cpu", "--shard", "1/2", "-o", &other]].concat());
    let a0 = p("false-2-0.lpart");
    refused(&["merge", &a0, &other, "-o", &p("x.lrr")], &["other.lpart", "another run"]);
    refused(&["merge", &a0, "-o", &p("x.lrr")], &["shards 1 of 2 are missing"]);
    // A forged patch count or element count is refused by name before anything is allocated.
    let bytes = std::fs::read(&a0).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    for (key, forged, why) in [("k", "4000000000", "cut short"), ("n", "4000000000", "patch ranges")] {
        let line = text.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap().to_string();
        let at = text.find(&format!("\n{line}\n")).unwrap() + 1;
        let mut b = bytes[..at].to_vec();
        b.extend_from_slice(format!("{key} {forged}").as_bytes());
        b.extend_from_slice(&bytes[at + line.len()..]);
        let path = p(&format!("forged-{key}.lpart"));
        std::fs::write(&path, b).unwrap();
        refused(&["merge", &path, &p("false-2-1.lpart"), "-o", &p("x.lrr")], &[&format!("forged-{key}.lpart"), why]);
    }
    refused(&["merge", &a0, &p("false-2-1.lpart"), "-o", &p("x.png")], &["-o", ".lrr"]);
    refused(&[&with(&["--shard", "0/2", "-o", &p("x.lpart")])[..], &["--gpus", "0,0"]].concat(), &["--gpus"]);
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    // GPU shards merged with the precompute on the GPU: the one-piece GPU run's file.
    let one = p("gpu-one.lrr");
    succeeds(&with(&["--backend", "gpu", "-o", &p("gpu-one.png"), "--save", &one]));
    let mut args = vec!["merge".to_string()];
    for i in 0..2 {
        let part = p(&format!("gpu-{i}.lpart"));
        succeeds(&with(&["--backend", "gpu", "--shard", &format!("{i}/2"), "-o", &part]));
        args.push(part);
    }
    args.extend(["-o".to_string(), p("gpu.lrr"), "--backend".to_string(), "gpu".to_string()]);
    succeeds(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(std::fs::read(&one).unwrap() == std::fs::read(p("gpu.lrr")).unwrap(), "GPU shards merged on the GPU");
    let out = succeeds(&with(&["--backend", "gpu", "--load", &p("gpu.lrr"), "-o", &p("gpu.png")])).stdout;
    assert!(out.contains("loaded"), "{out}");
}

/// An orbit's frames spread over two devices, or written in three shards, are the frames of
/// the orbit on one device, file for file.
#[test]
fn orbit_frames_spread_over_devices_and_shards() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    let dir = TempDir::new("orbit");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["volume", "phantom:24", "--orbit", "5", "--width", "40", "--height", "30"];
        args.extend(["--backend", "gpu", "-o", out.to_str().unwrap()]);
        args.extend(extra);
        succeeds(&args).stdout
    };
    run("one.png", &[]);
    let two = run("two.png", &["--gpus", "0,0"]);
    assert!(two.contains("5 frames") && two.matches("frames in").count() == 2, "{two}");
    for i in 0..3 {
        let shard = format!("{i}/3");
        assert!(run("shard.png", &["--shard", &shard]).contains(&format!("shard {shard}")));
    }
    for f in 0..5 {
        let read = |stem: &str| std::fs::read(dir.path().join(format!("{stem}_{f:03}.png"))).unwrap();
        assert!(read("one") == read("two") && read("one") == read("shard"), "frame {f} differs");
    }
    refused(&["volume", "phantom:24", "--shard", "0/2"], &["--shard", "--orbit"]);
    refused(&["volume", "phantom:24", "--orbit", "2", "--shard", "0/3"], &["--shard 0/3", "--orbit 2"]);
}

#[test]
fn auto_shards_read_the_schedulers_index() {
    let dir = TempDir::new("auto");
    for (var, index) in [("JOB_COMPLETION_INDEX", "2"), ("SLURM_ARRAY_TASK_ID", "0")] {
        let part = dir.path().join(format!("{var}.lpart"));
        let mut args = render_args("set:cornell", "cpu", part.to_str().unwrap());
        args.extend(["--shard", "auto/3"]);
        let mut cmd = lumbre_command(&args);
        cmd.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID").env(var, index);
        let r = run(cmd, &args);
        assert!(r.ok, "{var}: {}", r.stderr);
        assert!(r.stdout.contains(&format!("shard {index}/3")), "{var}: {}", r.stdout);
    }
    let part = dir.path().join("none.lpart");
    let mut args = render_args("set:cornell", "cpu", part.to_str().unwrap());
    args.extend(["--shard", "auto/3"]);
    let mut cmd = lumbre_command(&args);
    cmd.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
    let r = run(cmd, &args);
    assert!(!r.ok && r.stderr.contains("JOB_COMPLETION_INDEX"), "{}", r.stderr);
}

#[test]
fn parts_that_do_not_make_one_run_are_refused() {
    let dir = TempDir::new("refused");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let shard = |out: &str, shard: &str, spp: &str| {
        let mut args = render_args("set:cornell", "cpu", out);
        args.extend(["--shard", shard]);
        args[5] = spp;
        succeeds(&args);
    };
    shard(&p("a0.lpart"), "0/3", "14");
    shard(&p("a1.lpart"), "1/3", "14");
    shard(&p("b2.lpart"), "2/3", "15");
    let out = p("m.exr");
    refused(&["merge", &p("a0.lpart"), &p("a1.lpart"), "-o", &out], &["shards 2 of 3 are missing"]);
    refused(
        &["merge", &p("a0.lpart"), &p("a0.lpart"), &p("a1.lpart"), "-o", &out],
        &["a0.lpart", "both are shard 0/3"],
    );
    refused(&["merge", &p("a0.lpart"), &p("a1.lpart"), &p("b2.lpart"), "-o", &out], &["b2.lpart", "another run"]);
    let bytes = std::fs::read(p("a1.lpart")).unwrap();
    std::fs::write(p("cut.lpart"), &bytes[..bytes.len() - 5]).unwrap();
    refused(&["merge", &p("a0.lpart"), &p("cut.lpart"), "-o", &out], &["cut.lpart:", "cut or damaged"]);
    assert!(!std::path::Path::new(&out).exists(), "a refused merge wrote its output");
    // Forged headers: a vast image or value count is refused before anything is allocated.
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let header_end = text.find("data u64le").unwrap();
    let forged = |from: &str, to: &str, name: &str| {
        let mut b = bytes[..header_end].to_vec();
        b = String::from_utf8(b).unwrap().replace(from, to).into_bytes();
        b.extend_from_slice(&bytes[header_end..]);
        std::fs::write(p(name), b).unwrap();
        p(name)
    };
    shard(&p("a2.lpart"), "2/3", "14");
    let wide = forged("width 24", "width 4000000000", "wide.lpart");
    refused(&["merge", &p("a0.lpart"), &wide, &p("a2.lpart"), "-o", &out], &["wide.lpart", "values for 4000000000x18"]);
    let count = String::from_utf8_lossy(&bytes[header_end..header_end + 40]).lines().next().unwrap().to_string();
    let mut b = bytes[..header_end].to_vec();
    b.extend_from_slice(b"data u64le 18446744073709551615\n");
    b.extend_from_slice(&bytes[header_end + count.len() + 1..]);
    std::fs::write(p("count.lpart"), b).unwrap();
    refused(&["merge", &p("count.lpart"), "-o", &out], &["count.lpart", "cut or damaged"]);
    refused(&["merge", &p("a0.lpart"), "-o", &p("m.ppm")], &["-o", ".png or .exr"]);
    let args = render_args("set:cornell", "cpu", "x.exr");
    refused(&[&args[..], &["--shard", "0/2"]].concat(), &["-o x.exr", ".lpart"]);
    refused(&[&args[..], &["--shard", "2/2"]].concat(), &["--shard", "below N"]);
    refused(&[&args[..], &["--shard", "0/15"]].concat(), &["--shard 0/15", "--spp 14"]);
    refused(&[&args[..], &["--gpus", "0"]].concat(), &["--gpus", "at least one"]);
    refused(&[&args[..], &["--gpus", "1"]].concat(), &["--gpus", "--backend gpu"]);
    refused(&["render", "set:cornell", "--gpus", "1"], &["--gpus needs --backend gpu"]);
    let d = density_args("cpu", false, "x.lpart");
    refused(&[&d[..], &["--shard", "0/2", "--k", "4"]].concat(), &["--shard 0/2 with --k"]);
    refused(&[&d[..], &["--shard", "0/2", "--passes", "2"]].concat(), &["--shard 0/2 with --passes"]);
    refused(&[&d[..], &["--gpus", "1"]].concat(), &["--gpus needs --backend gpu"]);

    let d2 = p("d2.lpart");
    succeeds(&[&density_args("cpu", false, &d2)[..], &["--shard", "2/3"]].concat());
    refused(&["merge", &p("a0.lpart"), &p("a1.lpart"), &d2, "-o", &out], &["d2.lpart", "another run"]);
    // A Whitted part of the same scene, size and samples is another run too.
    let w2 = p("w2.lpart");
    succeeds(&[&method_args("whitted", "set:cornell", "cpu", &w2)[..], &["--shard", "2/3"]].concat());
    refused(
        &["merge", &p("a0.lpart"), &p("a1.lpart"), &w2, "-o", &out],
        &["w2.lpart", "whitted shard 2/3", "another run"],
    );
    succeeds(&["merge", &p("a0.lpart"), &p("a1.lpart"), &p("a2.lpart"), "-o", &out]);
}
