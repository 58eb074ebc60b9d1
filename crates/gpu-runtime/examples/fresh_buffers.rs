//! Experiment: does a kernel writing into a freshly allocated buffer time slower than one
//! writing into a buffer that was used before? Copies 16 MiB to 1 GiB into (a) a new buffer each
//! run, (b) the same buffer each run, (c) a new buffer cleared first in its own submission.
//! Run: `cargo run --release -p lumbre-gpu --example fresh_buffers`.

use lumbre_gpu::{CopyKernel, Fit, Gpu};

fn main() -> lumbre_gpu::Result<()> {
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_name());
    for log2 in [20usize, 24, 26] {
        let n = 1usize << log2; // vec4s
        let src = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
        let kept = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
        let time = |dst: &lumbre_gpu::Buffer<[u32; 4]>| -> lumbre_gpu::Result<f64> {
            let mut rec = gpu.recorder();
            CopyKernel::record_into(&mut rec, &src, dst)?;
            let t = rec.submit()?;
            Ok(t.gpu().as_secs_f64() * 1e3)
        };
        time(&kept)?;
        for run in 0..4 {
            let fresh = time(&gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?)?;
            let reused = time(&kept)?;
            let cleared = {
                let b = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
                let mut rec = gpu.recorder();
                rec.clear(&b);
                rec.submit()?;
                time(&b)?
            };
            println!(
                "{} MiB run {run}: fresh {fresh:.3} ms, reused {reused:.3} ms, fresh after a clear {cleared:.3} ms",
                (n * 16) >> 20
            );
        }
    }
    Ok(())
}
