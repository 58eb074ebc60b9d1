//! Runs the radiosity benchmarks: `cargo run --release -p lumbre-radiosity --example bench --
//! [table|error] [--gpu] [--synthetic] [--sizes s:t,...] [--samples N] [--repeats N]`.

use lumbre_gpu::Gpu;
use lumbre_radiosity::bench::{
    ELEMENT_SIDES, Effort, Factors, PATCH_SIDES, SOLVE_HEADER, TableOptions, error_markdown, error_table,
    solve_markdown_rows, solve_table,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |f: &str| args.iter().any(|a| a == f);
    let value = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1)).cloned();
    let gpu = if has("--gpu") { Some(Gpu::new().expect("a GPU")) } else { None };
    if let Some(g) = &gpu {
        println!("adapter: {}", g.adapter_name());
    }
    println!("cpu: {} rayon threads", rayon::current_num_threads());
    let samples = value("--samples").map_or(16, |v| v.parse().expect("--samples N"));
    let progress = |stage: &str, done: u64, total: u64| eprint!("\r{stage} {done}/{total}        ");
    if has("error") {
        let s = value("--side").map_or(48, |v| v.parse().expect("--side S"));
        let t0 = std::time::Instant::now();
        let (n, rows) = error_table(gpu.as_ref(), s, &PATCH_SIDES, samples, &progress).expect("error table");
        eprintln!();
        println!("{}", error_markdown(n, &rows));
        println!("({:.1} s, {samples} samples per pair)", t0.elapsed().as_secs_f64());
        return;
    }
    let sizes: Vec<(u32, u32)> = match value("--sizes") {
        Some(list) => list
            .split(',')
            .map(|p| {
                let (s, t) = p.split_once(':').expect("s:t");
                (s.parse().expect("s"), t.parse().expect("t"))
            })
            .collect(),
        None => ELEMENT_SIDES.iter().flat_map(|&s| PATCH_SIDES.iter().map(move |&t| (s, t))).collect(),
    };
    let repeats = value("--repeats").map_or(7, |v| v.parse().expect("--repeats N"));
    let opts = TableOptions {
        samples,
        effort: Effort { warmup: 2, repeats },
        factors: if has("--synthetic") { Factors::Synthetic } else { Factors::Auto { cpu_pairs: 4_000_000 } },
        cpu: !has("--no-cpu"),
        f16: true,
    };
    print!("{SOLVE_HEADER}");
    let mut print_row = |r: &lumbre_radiosity::bench::SolveRow| {
        print!("{}", solve_markdown_rows(std::slice::from_ref(r)));
        use std::io::Write;
        let _ = std::io::stdout().flush();
    };
    solve_table(gpu.as_ref(), &sizes, &opts, &progress, &mut print_row).expect("solve table");
    eprintln!();
}
