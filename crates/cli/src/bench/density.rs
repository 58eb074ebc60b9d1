//! `lumbre bench density`: the density-estimation paper's Table 1 (disks and segments
//! uniform in the unit cube, disks of radius 0.01), every method on the CPU and the GPU,
//! each GPU result checked against the CPU's before its time is reported.

mod table1;

use clap::Args;
use lumbre_density::{Density, Filter, Method};
use lumbre_gpu::Backend;

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::limits::in_range;
use crate::progress::{bar_progress, progress};
use crate::table::{Table, sig};

/// Density estimation: the paper's Table 1 workloads by every method, CPU and GPU.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct DensityArgs {
    /// How many of Table 1's rows (1e4x1e4, 1e5x1e5, 1e5x5e5, 1e5x1e6, 1e6x1e7), 1..=5.
    #[arg(long, default_value_t = 4)]
    rows: usize,
    /// Comma-separated: brute, octree, octree-hp, bvh.
    #[arg(long, default_value = "brute,octree,octree-hp,bvh")]
    methods: String,
    /// Skip the CPU rows (the GPU results are still checked against the CPU's BVH).
    #[arg(long)]
    no_cpu: bool,
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

impl OnBackend for DensityArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        parse_methods(&self.methods)?;
        in_range("--rows", self.rows, 1, table1::WORKLOADS.len())?;
        Effort::new(self.warmup, self.repeats)?;
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let methods = parse_methods(&self.methods)?;
        let effort = Effort::new(self.warmup, self.repeats)?;
        let tables = density(backend, self.rows, methods, !self.no_cpu, effort)?;
        super::print(&tables, self.json)?;
        Ok(())
    }
}

/// The methods `--methods` names: `brute`, `octree` (compaction by look-back), `octree-hp`
/// (the paper's histogram pyramid), `bvh`.
fn parse_methods(list: &str) -> Result<Vec<Density>> {
    list.split(',')
        .map(|m| {
            let mut d = Density::default();
            match m.trim() {
                "brute" => d.method = Method::BruteForce,
                "octree" => d.method = Method::Octree,
                "octree-hp" => {
                    d.method = Method::Octree;
                    d.octree.filter = Filter::HistoPyramid;
                }
                "bvh" => d.method = Method::Bvh,
                other => {
                    return Err(format!("--methods: unknown method {other} (brute, octree, octree-hp, bvh)").into());
                }
            }
            Ok(d)
        })
        .collect()
}

fn name(d: &Density) -> String {
    match (d.method, d.octree.filter) {
        (Method::Octree, Filter::HistoPyramid) => "octree (histogram pyramid)".into(),
        (Method::Octree, Filter::Compact) => "octree (look-back compaction)".into(),
        (Method::Bvh, _) => "BVH".into(),
        (Method::BruteForce, _) => "brute force".into(),
    }
}

/// Table 1's first `rows` workloads by `methods`, on the CPU (`cpu`) and `gpu`.
fn density(backend: &Backend, rows: usize, methods: Vec<Density>, cpu: bool, effort: Effort) -> Result<Vec<Table>> {
    let opts = table1::Options {
        methods,
        cpu,
        backend: backend.clone(),
        warmup: effort.warmup,
        repeats: effort.repeats,
        ..Default::default()
    };
    let bar = progress(rows as u64, "table 1");
    let workloads = &table1::WORKLOADS[..rows.min(table1::WORKLOADS.len())];
    let measured = table1::measure(workloads, &opts, &bar_progress(&bar))?;
    bar.finish_and_clear();
    let mut t = Table::new(
        "Density estimation, the paper's Table 1: disks x segments uniform in the unit cube, radius 0.01",
        &["disks", "segments", "method", "backend", "pairs", "flipped", "tested", "build ms", "gather ms", "total ms"],
    );
    for r in &measured {
        let m = name(&r.density);
        t.row(vec![
            r.workload.disks.to_string(),
            r.workload.segments.to_string(),
            m,
            r.backend.to_string(),
            r.pairs.to_string(),
            r.flips.to_string(),
            sig(r.tested),
            sig(r.build.as_secs_f64() * 1e3),
            sig(r.gather.as_secs_f64() * 1e3),
            sig(r.total.as_secs_f64() * 1e3),
        ]);
    }
    t.note("segments: both ends uniform in the cube (independently), power 1; disks: centres uniform, normals uniform on the sphere");
    t.note("GPU: median of the runs, passes timed by timestamps behind queued copies (sustained clocks); CPU: one run, wall clock");
    t.note("flipped: crossings the GPU decided differently from the CPU (a test within a few ulps of its threshold; at most 1e-4 of them)");
    t.note("paper (Nvidia 8800 GTX, 2007): 0.82 s, 1.9 s, 7.3 s, 13.2 s for the first four rows");
    Ok(vec![t])
}
