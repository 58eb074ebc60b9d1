//! Prints the paper's Table 1 measured here: `cargo run --release -p lumbre-density --example
//! table1 -- [rows] [cpu|gpu|both] [methods...]` (rows: how many of TABLE1's workloads, from
//! the first; methods: brute, octree, octree-hp, bvh). `stats` instead of the backend prints the
//! CPU path's report for row `rows`.

use lumbre_density::{BenchOptions, Density, Method, TABLE1, table1};
use lumbre_gpu::Gpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `n`: the first n workloads; `a..b`: workloads a to b - 1.
    let rows_arg = args.first().cloned().unwrap_or_else(|| "4".into());
    let (first, rows): (usize, usize) = match rows_arg.split_once("..") {
        Some((a, b)) => (a.parse()?, b.parse()?),
        None => (0, rows_arg.parse()?),
    };
    let which = args.get(1).map(String::as_str).unwrap_or("cpu");
    let mut methods = Vec::new();
    for a in args.iter().skip(2) {
        let mut alg = Density::default();
        match a.as_str() {
            "brute" => alg.method = Method::BruteForce,
            "octree" => alg.method = Method::Octree,
            "octree-hp" => {
                alg.method = Method::Octree;
                alg.octree.filter = lumbre_density::Filter::HistoPyramid;
            }
            "bvh" => alg.method = Method::Bvh,
            other => return Err(format!("unknown method {other}").into()),
        }
        methods.push(alg);
    }
    let mut opts = BenchOptions::default();
    if !methods.is_empty() {
        opts.methods = methods;
    }
    opts.cpu = which != "gpu";
    if which == "gpu" || which == "both" {
        opts.gpu = Some(Gpu::new()?);
    }
    if which == "stats" {
        use lumbre_gpu::Compute;
        let p = lumbre_density::uniform_workload(TABLE1[first], lumbre_density::TABLE1_RADIUS, 1);
        for alg in &opts.methods {
            let (_, report) = alg.cpu_reported(&p, &())?;
            println!("{:?}: {report}", alg.method);
        }
        return Ok(());
    }
    if let Some(gpu) = &opts.gpu {
        println!("{}", gpu.adapter_name());
    }
    let progress = |stage: &str, done: u64, total: u64| eprint!("\r{stage} {done}/{total}   ");
    for row in table1(&TABLE1[first..rows.min(TABLE1.len())], &opts, &progress)? {
        println!("{row}");
    }
    Ok(())
}
