//! `lumbre demo`: runs every capability on the bundled data, writes outputs and a report.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use lumbre_gpu::{Gpu, GpuOptions};

use crate::bench::{Effort, roofline};
use crate::info::{adapter_table, chosen_table};
use crate::table::Table;

pub fn run(opts: &GpuOptions, out: &Path, use_gpu: bool) -> Result<(), String> {
    let start = Instant::now();
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
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

    // Small sizes: the demo shows the shape of the curve, `lumbre bench` measures properly.
    let effort = Effort { warmup: 1, repeats: 3 };
    eprintln!("roofline ...");
    tables.push(roofline(gpu.as_ref(), 16, 24, effort)?);
    eprintln!("primitives ...");
    tables.extend(crate::primitives::primitives(gpu.as_ref(), 20, effort)?);

    eprintln!("renders ...");
    tables.push(renders(gpu.as_ref(), out)?);

    for t in &tables {
        report += &t.markdown();
        report.push('\n');
    }
    let _ = writeln!(report, "Total demo time: {:.2} s", start.elapsed().as_secs_f64());
    let path = out.join("report.md");
    std::fs::write(&path, &report).map_err(|e| format!("{}: {e}", path.display()))?;
    for t in &tables {
        println!("{}", t.text());
    }
    println!("report written to {}", path.display());
    Ok(())
}

/// The bundled scenes through the Whitted ray tracer, CPU and GPU, written as PNGs.
fn renders(gpu: Option<&Gpu>, out: &Path) -> Result<Table, String> {
    use lumbre_raytrace::{Camera, GpuRenderer, Prepared, RenderOptions, Scene, add_default_light, diff_stats};
    let mut t = Table::new(
        "Whitted ray tracer on the bundled scenes (256x256, 4 samples per pixel)",
        &[
            "scene",
            "triangles",
            "build ms",
            "CPU ms",
            "CPU Mrays/s",
            "GPU ms",
            "GPU Mrays/s",
            "GPU vs CPU RMSE",
            "images",
        ],
    );
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scenes");
    for name in ["CornellBox-Original", "CornellBox-Diffuse", "suzanne", "teapot"] {
        let (mut scene, _) = Scene::load_obj(&dir.join(format!("{name}.obj"))).map_err(|e| e.to_string())?;
        let camera = Camera::frame(scene.bounds, 1.0);
        add_default_light(&mut scene, &camera);
        let t0 = Instant::now();
        let prepared = Prepared::new(scene, &Default::default());
        let build = t0.elapsed();
        let o = RenderOptions { width: 256, height: 256, spp: 4, ..Default::default() };
        let t1 = Instant::now();
        let (cpu_img, cpu_stats) = prepared.render_cpu(&camera, &o, &|_| {});
        let cpu_t = t1.elapsed();
        let cpu_path = out.join(format!("{name}-cpu.png"));
        cpu_img.save_png(&cpu_path).map_err(|e| e.to_string())?;
        let mut row = vec![
            name.to_string(),
            prepared.tris.len().to_string(),
            format!("{:.1}", build.as_secs_f64() * 1e3),
            format!("{:.1}", cpu_t.as_secs_f64() * 1e3),
            format!("{:.2}", cpu_stats.rays as f64 / cpu_t.as_secs_f64() / 1e6),
        ];
        match gpu {
            Some(g) => {
                let r = GpuRenderer::new(g, &prepared).map_err(|e| e.to_string())?;
                r.render(&camera, &o).map_err(|e| e.to_string())?; // compiles the pipeline
                let (img, stats, time) = r.render_timed(&camera, &o).map_err(|e| e.to_string())?;
                img.save_png(&out.join(format!("{name}-gpu.png"))).map_err(|e| e.to_string())?;
                let rmse = diff_stats(&cpu_img, &img).map_err(|e| e.to_string())?.rmse;
                row.push(format!("{:.2}", time.as_secs_f64() * 1e3));
                row.push(format!("{:.2}", stats.rays as f64 / time.as_secs_f64() / 1e6));
                row.push(format!("{rmse:.5}"));
                row.push(format!("{name}-cpu.png, {name}-gpu.png"));
            }
            None => {
                row.extend(["-".into(), "-".into(), "-".into(), format!("{name}-cpu.png")]);
            }
        }
        t.row(row);
    }
    Ok(t)
}
