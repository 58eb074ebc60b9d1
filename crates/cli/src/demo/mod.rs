//! `lumbre demo`: runs every capability on the bundled data, writes outputs and a report:
//! every scene of the set by every global-illumination method beside its reference
//! ([`gi`]), then the primitives, the ray tracer and the volume engine ([`gallery`]).

mod gallery;
mod gi;
mod sheet;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use lumbre_gpu::{Gpu, GpuOptions};

use crate::bench::Effort;
use crate::bench::roofline::roofline;
use crate::error::{Error, Result};
use crate::info::{adapter_table, chosen_table};
use crate::table::Table;

pub fn run(opts: &GpuOptions, out: &Path, use_gpu: bool) -> Result<()> {
    let start = Instant::now();
    std::fs::create_dir_all(out).map_err(|e| Error::folder(out, e))?;
    let mut report = String::from("# Lumbre demo report\n\n");
    let mut tables: Vec<Table> = vec![adapter_table()];

    let gpu = if use_gpu {
        match Gpu::with_options(opts) {
            Ok(gpu) => {
                tables.push(chosen_table(&gpu));
                Some(gpu)
            }
            Err(e) => {
                let _ = writeln!(report, "**No GPU: running the CPU paths only.** ({e})\n");
                eprintln!("no GPU ({e}); running the CPU paths only");
                None
            }
        }
    } else {
        let _ = writeln!(report, "GPU paths skipped (`--backend cpu`).\n");
        None
    };
    match &gpu {
        Some(g) => {
            let _ = writeln!(report, "GPU paths ran on **{}** ({:?}).\n", g.adapter_name(), g.adapter().backend);
        }
        None => {
            let _ = writeln!(report, "GPU paths did not run.\n");
        }
    }

    tables.push(gi::pages(gpu.as_ref(), out)?);

    // Small sizes: the demo shows the shape of the curve, `lumbre bench` measures properly.
    let effort = Effort { warmup: 1, repeats: 3 };
    eprintln!("roofline ...");
    tables.push(roofline(gpu.as_ref(), 16, 24, effort)?);
    eprintln!("primitives ...");
    tables.extend(crate::bench::primitives::primitives(gpu.as_ref(), 20, effort, Default::default(), None)?);

    eprintln!("renders ...");
    tables.push(gallery::renders(gpu.as_ref(), out)?);
    eprintln!("volumes ...");
    tables.extend(gallery::volumes(gpu.as_ref(), out)?);

    for t in &tables {
        report += &t.markdown();
        report.push('\n');
    }
    let _ = writeln!(report, "Total demo time: {:.2} s", start.elapsed().as_secs_f64());
    let path = out.join("report.md");
    lumbre_raytrace::write_file(&path, report.as_bytes())?;
    for t in &tables {
        println!("{}", t.text());
    }
    println!("report written to {}", path.display());
    Ok(())
}
