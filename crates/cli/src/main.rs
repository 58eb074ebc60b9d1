//! `lumbre`: run Lumbre's algorithms on the CPU or the GPU, the demo, and the benchmarks.
//!
//! Every flag is checked before any work, by the rule of the README's "Bad input" section:
//! a value outside its range or contradicting another flag is an error naming the flag, the
//! value and what is allowed.

mod backend;
mod bench;
mod compare;
mod data;
mod demo;
mod density;
mod error;
mod info;
mod lightcuts;
mod limits;
mod progress;
mod radiosity;
mod render;
mod scenes;
mod table;
mod view;
mod volume;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use lumbre_gpu::GpuOptions;

use crate::backend::{BackendArgs, gpu_by_default};
use crate::error::Result;

#[derive(Parser)]
#[command(name = "lumbre", version, about = "GPU and CPU rendering algorithms: demo, benchmarks and tools")]
struct Cli {
    /// Use the first adapter whose name contains this (overrides LUMBRE_ADAPTER), e.g. llvmpipe.
    #[arg(long, global = true)]
    adapter: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Info(info::InfoArgs),
    /// Run benchmarks and print one table per benchmark.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    Render(render::RenderArgs),
    Density(density::DensityArgs),
    Lightcuts(lightcuts::LightcutsArgs),
    Volume(volume::VolumeArgs),
    Radiosity(radiosity::RadiosityArgs),
    Scenes(scenes::ScenesArgs),
    Compare(compare::CompareArgs),
    Demo(demo::DemoArgs),
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Every global-illumination method (path tracer, density estimation, low-rank
    /// radiosity, lightcuts, instant radiosity) at its defaults on every scene of the set
    /// (`lumbre scenes`), against the path-traced references: GPU time, wall time, mean
    /// relative error, and the path tracer's error at the same GPU time.
    #[command(mut_arg("backend", gpu_by_default))]
    Gi {
        /// Scenes of the set to run (default: every one with a reference).
        scenes: Vec<String>,
        /// Write every image and its error map into this folder.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Scan, compaction, radix sort, Morton encoding and the histogram pyramid, GPU vs copy
    /// kernel vs CPU.
    #[command(mut_arg("backend", |a| gpu_by_default(a).help("`cpu` skips the GPU columns")))]
    Primitives {
        /// Cap every size at 2^this elements, 16..=28 (the defaults are the issue's: scan and
        /// compaction 2^28, sort and Morton 2^26).
        #[arg(long, default_value_t = 28)]
        max_log2: u32,
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
        /// Polls of an unpublished predecessor before a scan or compaction tile reduces its
        /// input itself (the look-back fallback).
        #[arg(long, default_value_t = lumbre_compact::Lookback::default().spin_limit)]
        lookback_spins: u32,
        /// Run only the rows whose operation contains this (e.g. `compact`, `Morton`,
        /// `histogram pyramid`), to measure a row quickly or in a process of its own.
        #[arg(long)]
        only: Option<String>,
    },
    /// The kd-tree ray tracer on suzanne, teapot, the bunny and 1M generated triangles.
    #[command(mut_arg("backend", gpu_by_default))]
    Raytrace {
        /// Folder with suzanne.obj, teapot.obj and stanford-bunny.obj (default: the copies
        /// bundled in this binary).
        #[arg(long)]
        scenes: Option<PathBuf>,
        /// Camera positions around each model on the GPU (at least 1).
        #[arg(long, default_value_t = 20)]
        frames: u32,
        /// Camera positions for the CPU (800x600 only); 0 skips the CPU.
        #[arg(long, default_value_t = 2)]
        cpu_frames: u32,
        /// Skip the generated 1M-triangle scene.
        #[arg(long)]
        no_generated: bool,
        /// Kd-tree leaves: nodes with at most this many triangles are not split (the SAH may
        /// stop earlier). Default: lumbre_kdtree's `BuildOptions::default().max_leaf_size`.
        #[arg(long, default_value_t = lumbre_kdtree::BuildOptions::default().max_leaf_size)]
        leaf_size: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// The sparse octree on phantom clouds of the thesis's sizes: keys, build, update, ray
    /// tracing, and memory against depth.
    #[command(mut_arg("backend", gpu_by_default))]
    Octree {
        /// Largest point count to include (the thesis's go up to 3283639).
        #[arg(long, default_value_t = 3_283_639)]
        max_points: usize,
        #[arg(long, default_value_t = 10)]
        depth: u32,
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Low-rank radiosity on the generated box at the paper's sizes (n = 3456 .. 221184,
    /// k = 216 .. 3456): solves per second (Y and its factors, f32 and f16) against the copy
    /// kernel and the CPU, precompute times, and the low-rank error against the full solve.
    #[command(mut_arg("backend", gpu_by_default))]
    Radiosity {
        /// `s:t` pairs (s x s elements and t x t patches per wall); default: the paper's 12.
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<String>,
        /// Form factor samples per element-patch pair.
        #[arg(long, default_value_t = 16)]
        samples: u32,
        /// Time solves on synthetic factorisations (no form factors or precompute).
        #[arg(long)]
        synthetic: bool,
        /// Largest n k whose precompute runs on the CPU when there is no GPU (larger sizes are
        /// timed on synthetic factorisations).
        #[arg(long, default_value_t = 4_000_000)]
        cpu_pairs: usize,
        /// Skip the CPU solve column.
        #[arg(long)]
        no_cpu: bool,
        /// Elements per wall side of the error table (n = 6 s^2; 0 skips it).
        #[arg(long, default_value_t = 48)]
        error_side: u32,
        #[arg(long, default_value_t = 2)]
        warmup: usize,
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Density estimation: the paper's Table 1 workloads by every method, CPU and GPU.
    #[command(mut_arg("backend", gpu_by_default))]
    Density {
        /// How many of Table 1's rows (1e4x1e4, 1e5x1e5, 1e5x5e5, 1e5x1e6, 1e6x1e7).
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
    },
    /// Lightcuts on the diffuse Cornell box: frames by stage for lightcuts and instant
    /// radiosity (the paper's Table 5 and beyond), lightcuts' error against instant
    /// radiosity, cut sizes per cluster metric and builder, the greedy build's time.
    #[command(mut_arg("backend", gpu_by_default))]
    Lightcuts {
        /// VPL counts of the frame table (the paper's Table 5: 110,420,930,2550; beyond:
        /// 10000,100000,1000000).
        #[arg(long, value_delimiter = ',', default_values_t = [110, 420, 930])]
        vpls: Vec<u32>,
        /// Side of the frame table's square image (the paper's: 1000).
        #[arg(long, default_value_t = 128)]
        size: u32,
        /// Visibility of the frame table: rays, ism or both (comma-separated).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [lightcuts::VisibilityChoice::Rays, lightcuts::VisibilityChoice::Ism])]
        visibility: Vec<lightcuts::VisibilityChoice>,
        /// Side of each VPL's imperfect shadow map: 32, 64 or 128.
        #[arg(long, default_value_t = lumbre_lightcuts::ism::IsmOptions::default().size)]
        ism_size: u32,
        /// Instant radiosity, and lightcuts' error against it, up to this many VPLs.
        #[arg(long, default_value_t = 2550)]
        instant_max: u32,
        /// Entries of each pixel's heap of refinable clusters (GPU: 32, 64 or 128).
        #[arg(long, default_value_t = lumbre_lightcuts::CutOptions::default().heap)]
        heap: u32,
        /// VPL counts of the cut-size table (the paper's Tables 2 and 3); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [110, 930])]
        cut_vpls: Vec<u32>,
        /// Side of the cut-size table's square image.
        #[arg(long, default_value_t = 64)]
        cut_size: u32,
        /// VPL counts of the greedy build's timing (CPU); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000])]
        greedy: Vec<u32>,
        /// VPL counts of the ISM build table (GPU: splat and pull-push of 64x64 maps, then
        /// pull-push of the paper's 3968x3968 atlas); 0 skips it.
        #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000, 100000])]
        ism_vpls: Vec<u32>,
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        #[arg(long, default_value_t = 3)]
        repeats: usize,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
    },
    /// Copy-kernel bandwidth over a size sweep beside a CPU memcpy.
    #[command(mut_arg("backend", |a| gpu_by_default(a).help("Skip the GPU columns")))]
    Roofline {
        /// Smallest size, as log2 of bytes (at least 4).
        #[arg(long, default_value_t = 20)]
        min_log2: u32,
        /// Largest size, as log2 of bytes, at least --min-log2 (default: 30, or the device's
        /// max_buffer_size when smaller; a larger value given here is an error).
        #[arg(long)]
        max_log2: Option<u32>,
        #[arg(long, default_value_t = 3)]
        warmup: usize,
        #[arg(long, default_value_t = 10)]
        repeats: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        backend: BackendArgs,
        /// Also time copy kernels that each add one feature (uniform length, barrier, shared
        /// memory, atomics, strided loads) at the largest size.
        #[arg(long)]
        variants: bool,
    },
}

/// `--warmup` and `--repeats` of the benchmarks: at least one timed run.
fn check_effort(warmup: usize, repeats: usize) -> Result<bench::Effort> {
    if repeats == 0 {
        return Err("--repeats 0: must be at least 1".into());
    }
    Ok(bench::Effort { warmup, repeats })
}

fn print_tables(tables: &[table::Table], json: bool) {
    if json {
        let all: Vec<String> = tables.iter().map(|t| t.json()).collect();
        println!("[{}]", all.join(", "));
    } else {
        for t in tables {
            println!("{}", t.text());
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut opts = GpuOptions::from_env();
    if cli.adapter.is_some() {
        opts.adapter = cli.adapter.clone();
    }
    let result = match cli.command {
        Command::Info(c) => c.run(&opts),
        Command::Render(c) => backend::run(c, &opts),
        Command::Density(c) => backend::run(c, &opts),
        Command::Lightcuts(c) => backend::run(c, &opts),
        Command::Volume(c) => backend::run(c, &opts),
        Command::Radiosity(c) => backend::run(c, &opts),
        Command::Scenes(c) => c.run(),
        Command::Compare(c) => c.run(),
        Command::Demo(c) => c.run(&opts),
        Command::Bench { which } => match which {
            BenchCommand::Octree { max_points, depth, warmup, repeats, json, backend } => (|| {
                limits::in_range("--depth", depth, 1, lumbre_octree::MAX_DEPTH)?;
                let effort = check_effort(warmup, repeats)?;
                let counts: Vec<usize> = bench::octree::COUNTS.iter().copied().filter(|&c| c <= max_points).collect();
                if counts.is_empty() {
                    return Err(format!(
                        "--max-points {max_points} is below the smallest point count, {}",
                        bench::octree::COUNTS[0]
                    )
                    .into());
                }
                let backend = backend.resolve(&opts)?;
                let tables = bench::octree::octree(&backend, &counts, depth, effort)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Raytrace { scenes, frames, cpu_frames, no_generated, leaf_size, json, backend } => (|| {
                if frames == 0 {
                    return Err("--frames 0: must be at least 1".into());
                }
                if leaf_size == 0 {
                    return Err("--leaf-size 0: must be at least 1".into());
                }
                let mut list = bench::raytrace::standard(scenes.as_deref());
                if no_generated {
                    list.retain(|s| !matches!(s, bench::raytrace::BenchScene::Generated(_)));
                }
                if let Some(dir) = &scenes {
                    bench::raytrace::check_scene_dir(dir, &list)?;
                }
                let backend = backend.resolve(&opts)?;
                let build = lumbre_kdtree::BuildOptions { max_leaf_size: leaf_size, ..Default::default() };
                let t = bench::raytrace::raytrace(&backend, &list, &build, frames, cpu_frames)?;
                print_tables(&[t], json);
                Ok(())
            })(
            ),
            BenchCommand::Primitives { max_log2, warmup, repeats, json, backend, lookback_spins, only } => (|| {
                limits::in_range("--max-log2", max_log2, 16, 28)?;
                let effort = check_effort(warmup, repeats)?;
                // Inputs, outputs and the CPU's copies: about 16 bytes per element at the largest size.
                let (need, available) = (16u64 << max_log2, limits::available_memory());
                if need > available {
                    return Err(format!(
                        "--max-log2 {max_log2}: about {} of memory needed, more than the {} available: lower it",
                        limits::human(need),
                        limits::human(available)
                    )
                    .into());
                }
                let backend = backend.resolve(&opts)?;
                let lookback = lumbre_compact::Lookback { spin_limit: lookback_spins, ..Default::default() };
                let tables = bench::primitives::primitives(&backend, max_log2, effort, lookback, only.as_deref())?;
                print_tables(&tables, json);
                Ok(())
            })(
            ),
            BenchCommand::Radiosity {
                sizes,
                samples,
                synthetic,
                cpu_pairs,
                no_cpu,
                error_side,
                warmup,
                repeats,
                json,
                backend,
            } => (|| {
                let sizes = bench::radiosity::parse_sizes(&sizes)?;
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.resolve(&opts)?;
                let options =
                    bench::radiosity::Options { samples, synthetic, cpu_pairs, cpu: !no_cpu, error_side, effort };
                let tables = bench::radiosity::radiosity(&backend, &sizes, &options)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Gi { scenes, out, json, backend } => (|| {
                let backend = backend.resolve(&opts)?;
                let table = bench::gi::run(&scenes, &backend, out.as_deref())?;
                print_tables(&[table], json);
                Ok(())
            })(),
            BenchCommand::Density { rows, methods, no_cpu, warmup, repeats, json, backend } => (|| {
                let methods = bench::density::parse_methods(&methods)?;
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.resolve(&opts)?;
                let tables = bench::density::density(&backend, rows, methods, !no_cpu, effort)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Lightcuts {
                vpls,
                size,
                visibility,
                ism_size,
                instant_max,
                heap,
                cut_vpls,
                cut_size,
                greedy,
                ism_vpls,
                warmup,
                repeats,
                json,
                backend,
            } => (|| {
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.resolve(&opts)?;
                let skip_zero = |v: Vec<u32>| -> Vec<u32> { if v == [0] { Vec::new() } else { v } };
                let options = bench::lightcuts::Options {
                    size,
                    vpls,
                    visibility,
                    ism_size,
                    instant_max,
                    heap,
                    cut_vpls: skip_zero(cut_vpls),
                    cut_size,
                    greedy: skip_zero(greedy),
                    ism_vpls: skip_zero(ism_vpls),
                    effort,
                };
                let tables = bench::lightcuts::lightcuts(&backend, &options)?;
                print_tables(&tables, json);
                Ok(())
            })(),
            BenchCommand::Roofline { min_log2, max_log2, warmup, repeats, json, backend, variants } => (|| {
                let effort = check_effort(warmup, repeats)?;
                let backend = backend.resolve(&opts)?;
                let cap = backend.gpu().map_or(63, |g| 63 - g.limits().max_buffer_size.leading_zeros());
                // The CPU copies hold a source and a destination of the largest size.
                let memory = 63 - (limits::available_memory() / 2).max(1).leading_zeros();
                let most = cap.min(memory);
                let max = match max_log2 {
                    Some(m) => {
                        limits::in_range("--max-log2", m, min_log2, most).map_err(|e| match backend.gpu() {
                            Some(_) => format!(
                                "{e} (the GPU's max_buffer_size is 2^{cap} bytes; free memory holds twice 2^{memory})"
                            ),
                            None => format!("{e} (free memory holds twice 2^{memory} bytes)"),
                        })?;
                        m
                    }
                    None => 30.min(most),
                };
                limits::in_range("--min-log2", min_log2, 4, max)?;
                let mut tables = vec![bench::roofline::roofline(&backend, min_log2, max, effort)?];
                if let (true, Some(g)) = (variants, backend.gpu()) {
                    tables.push(bench::roofline::copy_variants(g, 1 << max.min(30), effort)?);
                }
                print_tables(&tables, json);
                Ok(())
            })(),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
