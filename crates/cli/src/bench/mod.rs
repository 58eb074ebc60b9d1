//! `lumbre bench`: the standard measurements, one table each; one file per benchmark, each
//! with its flags and its `run`.

pub mod bounce;
pub mod density;
pub mod gi;
pub mod incoherent;
pub mod lightcuts;
pub mod octree;
pub mod primitives;
pub mod radiosity;
pub mod radiosity_gpus;
pub mod radiosity_tables;
pub mod raytrace;
pub mod roofline;

use clap::Subcommand;
use lumbre_gpu::GpuOptions;

use crate::backend;
use crate::error::Result;
use crate::out::out;
use crate::table::Table;

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    Gi(gi::GiArgs),
    Primitives(primitives::PrimitivesArgs),
    Raytrace(raytrace::RaytraceArgs),
    Octree(octree::OctreeArgs),
    Radiosity(radiosity::RadiosityArgs),
    Density(density::DensityArgs),
    Lightcuts(lightcuts::LightcutsArgs),
    Roofline(roofline::RooflineArgs),
}

impl BenchCommand {
    /// Runs the benchmark on the backend its `--backend` names (`opts` choosing the adapter).
    pub fn run(self, opts: &GpuOptions) -> Result<()> {
        match self {
            BenchCommand::Gi(c) => backend::run(c, opts),
            BenchCommand::Primitives(c) => backend::run(c, opts),
            BenchCommand::Raytrace(c) => backend::run(c, opts),
            BenchCommand::Octree(c) => backend::run(c, opts),
            BenchCommand::Radiosity(c) => backend::run(c, opts),
            BenchCommand::Density(c) => backend::run(c, opts),
            BenchCommand::Lightcuts(c) => backend::run(c, opts),
            BenchCommand::Roofline(c) => backend::run(c, opts),
        }
    }
}

/// The most warm-up runs, repeats or frames a benchmark flag asks for: enough for any
/// median, and a bound on the time a mistyped count costs.
pub const MAX_RUNS: usize = 1000;

/// An error naming `flag` unless `lo <= value <= hi`.
pub fn count(flag: &str, value: usize, lo: usize, hi: usize) -> Result<()> {
    if value < lo {
        return Err(format!("{flag} {value}: must be at least {lo} (and at most {hi})").into());
    }
    if value > hi {
        return Err(format!("{flag} {value}: must be at most {hi}").into());
    }
    Ok(())
}

/// Warm-up runs and measured repeats for every figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    pub warmup: usize,
    pub repeats: usize,
}

impl Effort {
    /// `--warmup` and `--repeats`: an error unless at least one run is timed and each count
    /// is at most [`MAX_RUNS`].
    pub fn new(warmup: usize, repeats: usize) -> Result<Effort> {
        count("--warmup", warmup, 0, MAX_RUNS)?;
        count("--repeats", repeats, 1, MAX_RUNS)?;
        Ok(Effort { warmup, repeats })
    }
}

/// The median of `times` (the upper one of an even count; zero for none).
pub fn median(mut times: Vec<std::time::Duration>) -> std::time::Duration {
    times.sort_unstable();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Prints `tables` as text, or with `json` as one JSON array.
pub fn print(tables: &[Table], json: bool) -> Result {
    if json {
        let all: Vec<String> = tables.iter().map(|t| t.json()).collect();
        out!("[{}]", all.join(", "))?;
    } else {
        for t in tables {
            out!("{}", t.text())?;
        }
    }
    Ok(())
}
