//! Scratch timing probe (not committed).
use lumbre_gpu::Compute;
use lumbre_radiosity::*;
fn main() {
    let mesh = TwoMesh::closed_box(24, 6).unwrap();
    for samples in [4u32, 16] {
        let t = std::time::Instant::now();
        let f = FormFactors { samples, ..Default::default() }.cpu(&mesh).unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!(
            "ff {}x{} samples {samples}: {:.2} s, {:.0} kpairs/s",
            f.rows,
            f.cols,
            dt,
            (f.rows * f.cols) as f64 / dt / 1e3
        );
    }
    let f = FormFactors::default().cpu(&mesh).unwrap();
    let lr = LowRank::of_mesh(&mesh, f).unwrap();
    let (p, r) = Precompute::default().run_cpu(&lr, &()).unwrap();
    println!("precompute {r}");
    let ls = vec![mesh.emission.clone()];
    let t = std::time::Instant::now();
    for _ in 0..100 {
        solve_cpu(&p.factor, &ls).unwrap();
    }
    println!("solve {:.3} ms", t.elapsed().as_secs_f64() * 10.0);
    let k = 864;
    let a: Vec<f32> = (0..3 * k * k).map(|i| if i % (k + 1) == 0 { 0.0 } else { 0.3 / k as f32 }).collect();
    let t = std::time::Instant::now();
    inverse_cpu(&a, k).unwrap();
    println!("inverse k=864 x3: {:.2} s", t.elapsed().as_secs_f64());
}
