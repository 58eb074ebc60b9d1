//! Prints the paper's Table 1 measured here: `cargo run --release -p lumbre-density --example
//! table1 -- [rows] [cpu|gpu|both] [methods...]` (rows: how many of TABLE1's workloads, from
//! the first; methods: brute, octree, bvh).

use lumbre_density::{BenchOptions, Density, Method, TABLE1, table1};
use lumbre_gpu::Gpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rows: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(4);
    let which = args.get(1).map(String::as_str).unwrap_or("cpu");
    let mut methods = Vec::new();
    for a in args.iter().skip(2) {
        let method = match a.as_str() {
            "brute" => Method::BruteForce,
            "octree" => Method::Octree,
            "bvh" => Method::Bvh,
            other => return Err(format!("unknown method {other}").into()),
        };
        methods.push(Density { method, ..Default::default() });
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
        let p = lumbre_density::uniform_workload(TABLE1[rows], lumbre_density::TABLE1_RADIUS, 1);
        for alg in &opts.methods {
            let (_, report) = alg.cpu_reported(&p, &())?;
            println!("{:?}: {report}", alg.method);
        }
        return Ok(());
    }
    let progress = |stage: &str, done: u64, total: u64| eprint!("\r{stage} {done}/{total}   ");
    for row in table1(&TABLE1[..rows.min(TABLE1.len())], &opts, &progress)? {
        println!("{row}");
    }
    Ok(())
}
