//! `lumbre demo`: runs every capability on the bundled data, writes outputs and a report:
//! every scene of the set by every global-illumination method beside its reference
//! ([`gi`]), then the primitives, the ray tracer and the volume engine ([`gallery`]).

mod gallery;
mod gi;
mod sheet;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use lumbre_gpu::{Backend, GpuOptions};
use lumbre_raytrace::LoadError;

use crate::backend::{BackendArgs, BackendChoice, gpu_by_default};
use crate::bench::Effort;
use crate::bench::roofline::roofline;
use crate::error::{Error, Result};
use crate::info::{adapter_table, chosen_table};
use crate::out::out;
use crate::table::Table;

/// Run every capability on the bundled data; write outputs and a report.
#[derive(Args)]
#[command(mut_arg(
    "backend",
    |a| gpu_by_default(a).help("`cpu` runs only the CPU paths; `gpu` (default) runs both, GPU where available")
))]
pub struct DemoArgs {
    /// Folder for the outputs and report.md.
    #[arg(short, long, default_value = "lumbre-demo")]
    out: PathBuf,
    #[command(flatten)]
    backend: BackendArgs,
}

impl DemoArgs {
    /// The demo on the backend `--backend` names (`opts` choosing the adapter); with `gpu`,
    /// on the CPU when there is no GPU, the report saying why.
    pub fn run(self, opts: &GpuOptions) -> Result<()> {
        demo(opts, &self.out, &self.backend)
    }
}

/// An error, before any work, when the output folder holds a symbolic link: a report or
/// image written there would land outside the folder.
fn refuse_links(out: &Path) -> Result<()> {
    let entries = std::fs::read_dir(out).map_err(|e| Error::File(LoadError::read(out, &e)))?;
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            return Err(format!(
                "-o {}: {} is a symbolic link; remove it or choose another folder (the demo never writes through links)",
                out.display(),
                entry.path().display()
            )
            .into());
        }
    }
    Ok(())
}

fn demo(opts: &GpuOptions, out: &Path, backend: &BackendArgs) -> Result<()> {
    let start = Instant::now();
    std::fs::create_dir_all(out).map_err(|e| Error::folder(out, e))?;
    refuse_links(out)?;
    let mut report = String::from("# Lumbre demo report\n\n");
    let mut tables: Vec<Table> = vec![adapter_table()];

    let backend = match backend.backend {
        BackendChoice::Gpu => backend.resolve(opts).unwrap_or_else(|e| {
            let _ = writeln!(report, "**No GPU: running the CPU paths only.** ({e})\n");
            eprintln!("no GPU ({e}); running the CPU paths only");
            Backend::Cpu
        }),
        BackendChoice::Cpu => {
            let _ = writeln!(report, "GPU paths skipped (`--backend cpu`).\n");
            Backend::Cpu
        }
    };
    match backend.gpu() {
        Some(g) => {
            tables.push(chosen_table(g));
            let _ = writeln!(report, "GPU paths ran on **{}** ({:?}).\n", g.adapter_name(), g.adapter().backend);
        }
        None => {
            let _ = writeln!(report, "GPU paths did not run.\n");
        }
    }

    tables.push(gi::pages(&backend, out)?);

    // Small sizes: the demo shows the shape of the curve, `lumbre bench` measures properly.
    let effort = Effort { warmup: 1, repeats: 3 };
    eprintln!("roofline ...");
    tables.push(roofline(&backend, 16, 24, effort)?);
    eprintln!("primitives ...");
    tables.extend(crate::bench::primitives::primitives(&backend, (20, 20), effort, Default::default(), None)?);

    eprintln!("renders ...");
    tables.push(gallery::renders(&backend, out)?);
    eprintln!("volumes ...");
    tables.extend(gallery::volumes(&backend, out)?);

    for t in &tables {
        report += &t.markdown();
        report.push('\n');
    }
    let _ = writeln!(report, "Total demo time: {:.2} s", start.elapsed().as_secs_f64());
    let path = out.join("report.md");
    lumbre_raytrace::write_file(&path, report.as_bytes())?;
    for t in &tables {
        out!("{}", t.text())?;
    }
    out!("report written to {}", path.display())?;
    Ok(())
}
