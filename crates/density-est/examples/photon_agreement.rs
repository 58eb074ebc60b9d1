//! Traces photons on the CPU and the GPU and counts the photons whose paths differ:
//! `cargo run --release -p lumbre-density --example photon_agreement -- SCENE.obj [photons]`.

use lumbre_density::{PhotonOptions, PhotonTracer, Photons};
use lumbre_gpu::{Agree, Compute, Gpu, Tolerance};
use lumbre_raytrace::{Prepared, Scene};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().ok_or("usage: photon_agreement SCENE.obj [photons]")?;
    let photons: u32 = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(100_000);
    let (scene, _) = Scene::load_obj(path.as_ref())?;
    let p = Prepared::new(scene, &Default::default());
    let gpu = Gpu::new()?;
    let t = PhotonTracer { options: PhotonOptions { photons, ..Default::default() } };
    let start = std::time::Instant::now();
    let cpu = t.cpu(&p)?;
    let cpu_time = start.elapsed();
    let (on_gpu, report) = t.run_reported(&lumbre_gpu::Backend::Gpu(gpu.clone()), &p, &())?;
    println!(
        "{}: {} photons, {} flights on the CPU ({:.1} ms), {} on the GPU ({report})",
        gpu.adapter_name(),
        photons,
        cpu.segments.len(),
        cpu_time.as_secs_f64() * 1e3,
        on_gpu.segments.len()
    );
    let (x, y) = (by_photon(&cpu), by_photon(&on_gpu));
    let mut shown = 0;
    for (i, a) in &x {
        let b = y.get(i).cloned().unwrap_or_default();
        let same = a.segments.len() == b.segments.len()
            && a.segments
                .iter()
                .zip(&b.segments)
                .all(|(s, t)| s.bounce == t.bounce && (s.end - t.end).abs().max_element() < 1e-4);
        if !same && shown < 3 {
            println!("photon {i}:\n  cpu {:?}\n  gpu {:?}", a.segments, b.segments);
            shown += 1;
        }
    }
    for tol in [1e-5, 1e-4, 1e-3] {
        let differ = differing(&cpu, &on_gpu, Tolerance::within(tol, tol));
        println!(
            "tolerance {tol:e}: {differ} of {photons} photon paths differ ({:.4} %)",
            100.0 * differ as f64 / photons as f64
        );
    }
    Ok(())
}

fn by_photon(p: &Photons) -> std::collections::BTreeMap<u32, Photons> {
    let mut m = std::collections::BTreeMap::<u32, Photons>::new();
    for (s, &i) in p.segments.iter().zip(&p.photon) {
        let e = m.entry(i).or_default();
        e.segments.push(*s);
        e.photon.push(i);
    }
    m
}

fn differing(a: &Photons, b: &Photons, tol: Tolerance) -> usize {
    let (x, y) = (by_photon(a), by_photon(b));
    let keys: std::collections::BTreeSet<u32> = x.keys().chain(y.keys()).copied().collect();
    keys.iter()
        .filter(|k| {
            let (p, q) = (x.get(k).cloned().unwrap_or_default(), y.get(k).cloned().unwrap_or_default());
            p.disagreement(&q, tol).is_some()
        })
        .count()
}
