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
mod density_part;
mod error;
mod gpus;
mod info;
mod lightcuts;
mod limits;
mod merge;
mod out;
mod part;
mod progress;
mod radiosity;
mod radiosity_part;
mod render;
mod scenes;
mod shard;
mod spread;
mod table;
mod view;
mod volume;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use lumbre_gpu::{AdapterChoice, GpuOptions};

/// The command line: the global `--adapter`, then a command.
#[derive(Parser)]
#[command(name = "lumbre", version, about = "GPU and CPU rendering algorithms: demo, benchmarks and tools")]
struct Cli {
    /// The adapter to use (overrides LUMBRE_ADAPTER): its index as `lumbre info` lists it
    /// (`1` or `#1`; a value of digits only is always an index), or a part of its name, e.g.
    /// llvmpipe (the first adapter whose name contains it).
    #[arg(long, global = true, value_name = "INDEX|NAME")]
    adapter: Option<AdapterChoice>,
    #[command(subcommand)]
    command: Command,
}

/// The commands, each an Args struct in its own module (its help text is that struct's).
#[derive(Subcommand)]
enum Command {
    Info(info::InfoArgs),
    /// Run benchmarks and print one table per benchmark.
    Bench {
        #[command(subcommand)]
        which: bench::BenchCommand,
    },
    Render(render::RenderArgs),
    Density(density::DensityArgs),
    Lightcuts(lightcuts::LightcutsArgs),
    Volume(volume::VolumeArgs),
    Radiosity(radiosity::RadiosityArgs),
    Scenes(scenes::ScenesArgs),
    Compare(compare::CompareArgs),
    Merge(merge::MergeArgs),
    Demo(demo::DemoArgs),
}

/// Runs the command; an error is printed after `error: ` and exits with status 1.
fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut opts = GpuOptions::from_env();
    if let Some(choice) = cli.adapter {
        opts.adapter = Some(choice.to_string());
    } else if let Err(e) = opts.adapter_choice() {
        // Checked before any work, like a flag.
        eprintln!("error: LUMBRE_ADAPTER: {e}");
        return ExitCode::FAILURE;
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
        Command::Merge(c) => backend::run(c, &opts),
        Command::Demo(c) => c.run(&opts),
        Command::Bench { which } => which.run(&opts),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
