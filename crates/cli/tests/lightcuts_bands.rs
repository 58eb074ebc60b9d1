//! Lightcuts by bands of rows, run as programs: the image spread over two devices
//! (`--gpus 0,0`), or rendered in 1, 2 and 5 shards (`--shard I/N`) and merged by `lumbre
//! merge`, is the one-piece image byte for byte, on the CPU and on the GPU.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::wgpu;

#[allow(dead_code)] // each test program uses part of it
mod common;
use common::{TempDir, refused, succeeds};

/// A small lightcuts render of the Cornell box (shadow maps, or shadow rays).
fn args<'a>(backend: &'a str, visibility: &'a str, out: &'a str) -> Vec<&'a str> {
    let mut a = vec!["lightcuts", "set:cornell", "--width", "24", "--height", "19", "--vpls", "1500"];
    a.extend(["--visibility", visibility, "--backend", backend, "-o", out]);
    a
}

fn bands_merge(backend: &str, visibility: &str) {
    let dir = TempDir::new("bands");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    succeeds(&args(backend, visibility, &p("one.exr")));
    let want = std::fs::read(p("one.exr")).unwrap();
    for n in [1u32, 2, 5] {
        let mut merge = vec!["merge".to_string()];
        for i in 0..n {
            let part = p(&format!("{n}-{i}.lpart"));
            succeeds(&[&args(backend, visibility, &part)[..], &["--shard", &format!("{i}/{n}")]].concat());
            merge.push(part);
        }
        merge.extend(["-o".to_string(), p("merged.exr")]);
        let merge: Vec<&str> = merge.iter().map(String::as_str).collect();
        let out = succeeds(&merge).stdout;
        assert!(out.contains(&format!("merged {n} parts")), "{out}");
        let got = std::fs::read(p("merged.exr")).unwrap();
        assert!(got == want, "{visibility} on {backend}: {n} bands merged differ from one run");
    }
}

#[test]
fn cpu_bands_merge_bit_for_bit() {
    bands_merge("cpu", "ism");
}

#[test]
fn gpu_bands_and_two_devices_give_the_one_piece_image() {
    if test_gpu(wgpu::Features::empty()).is_none() {
        return;
    }
    bands_merge("gpu", "ism");
    let dir = TempDir::new("bands-gpus");
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    succeeds(&args("gpu", "rays", &p("one.exr")));
    let out = succeeds(&[&args("gpu", "rays", &p("two.exr"))[..], &["--gpus", "0,0"]].concat()).stdout;
    assert!(out.matches("bands of rows in").count() == 2, "{out}");
    assert!(std::fs::read(p("one.exr")).unwrap() == std::fs::read(p("two.exr")).unwrap(), "two devices differ");
}

#[test]
fn bands_refuse_what_cannot_split() {
    refused(&[&args("cpu", "ism", "x.lpart")[..], &["--shard", "0/20"]].concat(), &["--shard 0/20", "19 rows"]);
    refused(&[&args("cpu", "ism", "x.lpart")[..], &["--shard", "0/2", "--heatmap", "h.png"]].concat(), &["--heatmap"]);
    refused(&[&args("cpu", "ism", "x.exr")[..], &["--gpus", "1"]].concat(), &["--gpus needs --backend gpu"]);
}
