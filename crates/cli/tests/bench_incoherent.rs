//! `lumbre bench raytrace --tables incoherent` run as a program at tiny sizes on the Cornell
//! box, on the CPU and the GPU: the rows exist with positive rates, the GPU's bounce hits agree
//! with the CPU's, and its flags are refused out of range before any work.

use lumbre_gpu::testing::test_gpu;

#[allow(dead_code, unused_imports)] // each test program uses part of it
mod common;
use common::{refused, succeeds};

/// The incoherent tables on the Cornell box at 32x24 (frames 8x8 at 2 spp and 32x24 at 1),
/// the frames on the path tracer's `schedules`.
fn incoherent(backend: &str, schedules: &str) -> String {
    let args = [
        "bench",
        "raytrace",
        "--tables",
        "incoherent",
        "--set",
        "cornell",
        "--width",
        "32",
        "--height",
        "24",
        "--small-size",
        "8",
        "--small-spp",
        "2",
        "--large-spp",
        "1",
        "--cpu-rays",
        "300",
        "--warmup",
        "0",
        "--repeats",
        "2",
        "--path-repeats",
        "1",
        "--json",
        "--schedules",
        schedules,
        "--backend",
        backend,
    ];
    succeeds(&args).stdout
}

/// The JSON of each table (its text after `"title": `), in order.
fn tables(json: &str) -> Vec<&str> {
    json.split("{\"title\": ").skip(1).collect()
}

/// The rows of one table's JSON, each as its text between braces.
fn rows(table: &str) -> Vec<&str> {
    table.split("{\"scene\": ").skip(1).map(|r| r.split('}').next().unwrap()).collect()
}

/// The value of `key` in a row: a number, or the text of a string.
fn field<'a>(row: &'a str, key: &str) -> &'a str {
    let at = row.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {row}"));
    let rest = &row[at + key.len() + 4..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim_matches('"')
}

/// `key` of `row` as a number above zero.
fn positive(row: &str, key: &str) -> f64 {
    let v: f64 = field(row, key).parse().unwrap_or_else(|_| panic!("{key} is {} in {row}", field(row, key)));
    assert!(v > 0.0 && v.is_finite(), "{key} = {v} in {row}");
    v
}

/// Checks both tables of one run, whose frames ran on `schedules` (a row each); returns the
/// bounce rays' count.
fn check(json: &str, on_gpu: bool, schedules: &[&str]) -> f64 {
    let t = tables(json);
    assert_eq!(t.len(), 2, "{json}");
    assert!(t[0].starts_with("\"Incoherent rays") && t[1].starts_with("\"Path-traced frames"), "{json}");
    let r = rows(t[0]);
    assert_eq!(r.len(), 1, "{json}");
    let row = r[0];
    assert!(row.starts_with("\"cornell\""), "{row}");
    assert_eq!(positive(row, "primary rays"), 768.0);
    let bounce = positive(row, "bounce rays");
    // The box fills most of the view: most primary rays hit and bounce.
    assert!(bounce > 0.5 * 768.0 && bounce < 768.0, "{row}");
    assert_eq!(positive(row, "CPU rays"), 300.0);
    positive(row, "CPU primary Mrays/s");
    positive(row, "CPU bounce Mrays/s");
    for key in ["GPU primary Grays/s", "GPU bounce Grays/s", "bounce/primary", "GPU/CPU bounce"] {
        if on_gpu {
            positive(row, key);
        } else {
            assert_eq!(field(row, key), "-", "{row}");
        }
    }
    assert_eq!(field(row, "GPU = CPU"), if on_gpu { "yes" } else { "-" }, "{row}");
    let frames = rows(t[1]);
    assert_eq!(frames.len(), 2 * schedules.len(), "{json}");
    let sizes = [("8x8", 2.0), ("32x24", 1.0)].into_iter().flat_map(|s| schedules.iter().map(move |k| (s, k)));
    for (row, ((frame, spp), schedule)) in frames.iter().zip(sizes) {
        assert_eq!(field(row, "frame"), frame, "{row}");
        assert!(row.contains(&format!("\"schedule\": \"{schedule}\"")), "{row}");
        assert_eq!(positive(row, "spp"), spp);
        let pixels: f64 = frame.split('x').map(|s| s.parse::<f64>().unwrap()).product();
        assert!((positive(row, "Mpaths") - pixels * spp / 1e6).abs() < 1e-9, "{row}");
        positive(row, "wall ms");
        positive(row, "Mpaths/s");
        positive(row, "Grays/s");
        // Every path has its camera ray; in the closed-on-five-sides box most go on.
        assert!(positive(row, "mean path length") > 1.0, "{row}");
        if on_gpu {
            positive(row, "GPU ms");
        } else {
            assert_eq!(field(row, "GPU ms"), "-", "{row}");
        }
    }
    // Every schedule traces the same paths: the same mean path length a frame.
    for size in frames.chunks(schedules.len()) {
        let lengths: Vec<&str> = size.iter().map(|r| field(r, "mean path length")).collect();
        assert!(lengths.iter().all(|l| *l == lengths[0]), "{lengths:?}");
    }
    bounce
}

#[test]
fn incoherent_tables_on_the_cpu_and_the_gpu() {
    let cpu = check(&incoherent("cpu", "megakernel"), false, &["megakernel"]);
    let Some(_gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let all = ["megakernel", "wavefront (1048576 paths)", "wavefront (1048576 paths), reordered"];
    let gpu = check(&incoherent("gpu", "megakernel,wavefront,reorder"), true, &all);
    // The same seed and camera: the same bounce rays but for primary rays that graze an edge
    // differently (the GPU's primary hits feed its bounces).
    assert!((gpu - cpu).abs() <= 0.01 * cpu, "bounce rays: {cpu} on the CPU, {gpu} on the GPU");
}

#[test]
fn incoherent_flags_are_refused_out_of_range() {
    let bench = |rest: &[&'static str]| {
        [&["bench", "raytrace", "--tables", "incoherent"], rest, &["--backend", "cpu"]].concat()
    };
    refused(&bench(&["--width", "0"]), &["--width 0: must be 1..=16384"]);
    refused(&bench(&["--height", "20000"]), &["--height 20000: must be 1..=16384"]);
    refused(&bench(&["--small-size", "0"]), &["--small-size 0"]);
    refused(&bench(&["--large-spp", "100000000"]), &["--large-spp 100000000", "0..=16777216"]);
    refused(&bench(&["--cpu-rays", "0"]), &["--cpu-rays 0: must be 1..="]);
    refused(&bench(&["--warmup", "4294967296"]), &["--warmup 4294967296", "at most 1000"]);
    refused(&bench(&["--repeats", "0"]), &["--repeats 0: must be at least 1"]);
    refused(&bench(&["--path-repeats", "100000"]), &["--path-repeats 100000", "at most 1000"]);
    refused(&bench(&["--set", "cornell,attic"]), &["--set", "\"attic\"", "cornell, bunny-room"]);
    refused(&["bench", "raytrace", "--tables", "coherent,fast"], &["'fast'", "coherent, incoherent"]);
    refused(&bench(&["--schedules", "fast"]), &["'fast'", "megakernel, wavefront, reorder"]);
    refused(&bench(&["--schedules", "wavefront"]), &["--schedules", "--backend gpu"]);
}
