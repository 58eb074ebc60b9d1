//! The lightcuts benchmark tables from the command line (until the CLI has
//! `lumbre bench lightcuts`):
//!
//! ```text
//! lightcuts_bench table5 SCENE.obj [rays|ism] [INSTANT_MAX] [REPEATS] [COUNT ...]
//!     (the environment variable LIGHTCUTS_HEAP picks the GPU heap size, 32, 64 or 128)
//! lightcuts_bench cuts SCENE.obj cpu|gpu SIZE
//! lightcuts_bench greedy SCENE.obj N
//! ```

use lumbre_gpu::{Backend, Gpu};
use lumbre_lightcuts::bench::{Effort, cut_sizes, frame_header, greedy_build_time, scaling};
use lumbre_lightcuts::ism::IsmOptions;
use lumbre_lightcuts::{ClusterMetric, CutOptions, Method, Render, View, Visibility};
use lumbre_raytrace::{Prepared, Scene};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: lightcuts_bench table5|cuts|greedy SCENE.obj ...";
    let (what, scene) = (args.first().ok_or(usage)?, args.get(1).ok_or(usage)?);
    let (scene, _) = Scene::load_obj(scene.as_ref())?;
    let prepared = Prepared::new(scene, &Default::default());
    match what.as_str() {
        "table5" => {
            let gpu = Gpu::new()?;
            println!("adapter: {}", gpu.adapter_name());
            let visibility = match args.get(2).map(String::as_str) {
                Some("ism") => Visibility::Ism(IsmOptions::default()),
                _ => Visibility::Rays,
            };
            let instant_max: u32 = args.get(3).map_or(Ok(2550), |s| s.parse())?;
            let repeats: usize = args.get(4).map_or(Ok(5), |s| s.parse())?;
            let counts: Vec<u32> = if args.len() > 5 {
                args[5..].iter().map(|s| s.parse()).collect::<Result<_, _>>()?
            } else {
                vec![110, 420, 930, 2550, 10_000, 100_000, 1_000_000]
            };
            let heap: u32 = std::env::var("LIGHTCUTS_HEAP").map_or(Ok(CutOptions::default().heap), |s| s.parse())?;
            let method = Method::Lightcuts(CutOptions { heap, ..Default::default() });
            let base = Render { view: View::cornell(1000, 1000), visibility, method, ..Default::default() };
            println!("heap {heap}");
            println!("{}", frame_header());
            for n in counts {
                let rows = scaling(
                    &Backend::Gpu(gpu.clone()),
                    &prepared,
                    &base,
                    &[n],
                    instant_max,
                    Effort { warmup: 1, repeats },
                )?;
                for row in rows {
                    println!("{row}");
                }
            }
        }
        "cuts" => {
            let backend = match args.get(2).map(String::as_str) {
                Some("gpu") => Backend::Gpu(Gpu::new()?),
                _ => Backend::Cpu,
            };
            let size: u32 = args.get(3).map_or(Ok(128), |s| s.parse())?;
            println!("{:8} {:16} {:>7} {:>9} {:>10}", "builder", "metric", "vpls", "avg cut", "build ms");
            for row in cut_sizes(&backend, &prepared, View::cornell(size, size), &[110, 930])? {
                println!(
                    "{:8} {:16} {:7} {:9.1} {:10.3}",
                    row.builder,
                    row.metric,
                    row.vpls,
                    row.average_cut,
                    row.build.as_secs_f64() * 1e3
                );
            }
        }
        "greedy" => {
            let n: u32 = args.get(2).ok_or(usage)?.parse()?;
            for metric in [ClusterMetric::Walter, ClusterMetric::PAPER] {
                let (vpls, t) = greedy_build_time(&prepared, n, metric, 3)?;
                println!("greedy {} over {vpls} VPLs: {:.3} s", metric.name(), t.as_secs_f64());
            }
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
