//! `lumbre bench radiosity --gpus LIST`: the form factors and precompute of the generated box
//! on one GPU against the same spread over several (each the rows of whole patches), stage by
//! stage, the slowest GPU's time and the wall time, and whether the radiosity is the same bits.

use std::time::{Duration, Instant};

use lumbre_gpu::{Backend, Compute, Gpu, Placed};
use lumbre_radiosity::{FormFactors, GpuFactor, GpuFactored, Precompute, Solve, Storage, TwoMesh};

use crate::error::Result;
use crate::table::{Table, sig};

/// A factorisation made on `gpus` (one part each), timed: the parts and the wall time.
fn made_on(gpus: &[Gpu], mesh: &TwoMesh, ff: &FormFactors) -> Result<(Vec<GpuFactored>, Duration)> {
    let t = Instant::now();
    let parts =
        GpuFactor::compute_parts(gpus, mesh, ff, &Precompute::default(), Storage::F32, false, &|_, _, _, _| {})?;
    Ok((parts, t.elapsed()))
}

/// The radiosity of the mesh's own lighting from the parts, each part's rows in place.
fn radiosity(gpus: &[Gpu], parts: &[GpuFactored], mesh: &TwoMesh) -> Result<Vec<[f32; 3]>> {
    let solve = Solve::new(vec![mesh.emission.clone()]);
    let mut b = vec![[0.0; 3]; mesh.n()];
    for (gpu, part) in gpus.iter().zip(parts) {
        let (rows, _) = solve.run_placed(&Placed::Gpu(gpu.clone(), part.factor.clone()), &())?;
        part.factor.scatter(&rows.0[0], &mut b);
    }
    Ok(b)
}

fn ms(d: Duration) -> String {
    sig(d.as_secs_f64() * 1e3)
}

/// The table for the box sizes `sizes` on one GPU (the first of `devices`) and on all of them.
pub fn spread_table(devices: &[Backend], sizes: &[(u32, u32)], samples: u32) -> Result<Table> {
    let gpus: Vec<Gpu> = devices.iter().filter_map(|d| d.gpu().cloned()).collect();
    let mut t = Table::new(
        format!("Radiosity form factors and precompute on 1 and {} GPUs (the generated box)", gpus.len()),
        &[
            "n x k",
            "GPUs",
            "form factors ms",
            "U, V^T U ms",
            "inverse ms",
            "Y ms",
            "layout ms",
            "GPU ms (slowest)",
            "wall ms",
            "GPU speed-up",
            "wall speed-up",
            "same bits",
        ],
    );
    let ff = FormFactors { samples, ..FormFactors::default() };
    for &(s, p) in sizes {
        let mesh = TwoMesh::closed_box(s, p)?;
        let mut one: Option<(Duration, Duration, Vec<[f32; 3]>)> = None;
        for count in [1, gpus.len()] {
            let on = &gpus[..count];
            // Once to compile the pipelines on every device, then timed.
            made_on(on, &mesh, &ff)?;
            let (parts, wall) = made_on(on, &mesh, &ff)?;
            let slowest = |f: &dyn Fn(&GpuFactored) -> Duration| parts.iter().map(f).max().unwrap_or_default();
            let stage =
                |names: &'static [&'static str]| slowest(&|p| names.iter().filter_map(|n| p.report.stage(n)).sum());
            let gpu = slowest(&|p| p.gpu_time());
            let b = radiosity(on, &parts, &mesh)?;
            let (speed, wall_speed, same) = match &one {
                None => ("1".to_string(), "1".to_string(), "-".to_string()),
                Some((g1, w1, b1)) => (
                    sig(g1.as_secs_f64() / gpu.as_secs_f64().max(1e-12)),
                    sig(w1.as_secs_f64() / wall.as_secs_f64().max(1e-12)),
                    if *b1 == b { "yes" } else { "NO" }.to_string(),
                ),
            };
            t.row(vec![
                format!("{} x {}", mesh.n(), mesh.k()),
                count.to_string(),
                ms(stage(&["form factors"])),
                ms(stage(&["U", "V^T U"])),
                ms(stage(&["invert"])),
                ms(stage(&["Y"])),
                ms(stage(&["layout"])),
                ms(gpu),
                ms(wall),
                speed,
                wall_speed,
                same,
            ]);
            if one.is_none() {
                one = Some((gpu, wall, b));
            }
            if gpus.len() == 1 {
                break;
            }
        }
    }
    t.note(format!(
        "{samples} samples per element-patch pair; each GPU makes the element rows of whole patches, in chunks (eight \
         a GPU) taken as it frees up, inverts the whole I - V^T U after the parts exchange their rows of it, and lays its rows of Y out for the \
         solve; stage columns: the slowest GPU's; wall: from the first upload to every part laid out, after a run \
         that compiled the pipelines"
    ));
    t.note("same bits: the radiosity of the box's lighting solved from the parts against the one-GPU run's");
    if let Some(g) = gpus.first() {
        t.note(format!("adapters: {} x {}", gpus.len(), g.adapter_name()));
    }
    Ok(t)
}
