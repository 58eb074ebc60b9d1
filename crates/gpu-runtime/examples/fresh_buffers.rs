//! Experiment: what moves the copy kernel's time for the same bytes? Copies 256 MiB and
//! 1 GiB each way (a) from zeros into a new buffer, (b) from zeros into a buffer used
//! before, (c) from pseudo-random data into a new buffer, (d) from pseudo-random data
//! into a buffer that already holds such data. Zeros compress on GPUs that compress
//! memory; random data does not.
//! Run: `cargo run --release -p lumbre-gpu --example fresh_buffers`.

use lumbre_gpu::{Buffer, CopyKernel, Fit, Gpu, Result};

fn random(n: usize) -> Vec<[u32; 4]> {
    let mut s = 0x9E37_79B9u32;
    (0..n)
        .map(|_| {
            std::array::from_fn(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                s
            })
        })
        .collect()
}

fn main() -> Result<()> {
    let gpu = Gpu::new()?;
    println!("adapter: {}", gpu.adapter_name());
    for log2 in [24usize, 26] {
        let n = 1usize << log2; // vec4s
        let time = |src: &Buffer<[u32; 4]>, dst: &Buffer<[u32; 4]>| -> Result<f64> {
            let mut t = Vec::new();
            for _ in 0..5 {
                let mut rec = gpu.recorder();
                CopyKernel::record_into(&mut rec, src, dst)?;
                t.push(rec.submit()?.gpu().as_secs_f64() * 1e3);
            }
            t.sort_by(f64::total_cmp);
            Ok(t[2])
        };
        let zeros = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
        let noise = gpu.upload_fit(&random(n), Fit::Pieces)?;
        let kept = gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?;
        time(&zeros, &kept)?;
        let mib = (n * 16) >> 20;
        for run in 0..3 {
            let z_fresh = time(&zeros, &gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?)?;
            let z_kept = time(&zeros, &kept)?;
            let r_fresh = time(&noise, &gpu.zeroed_fit::<[u32; 4]>(n, Fit::Pieces)?)?;
            let r_kept = time(&noise, &kept)?;
            println!(
                "{mib} MiB run {run}: zeros -> new {z_fresh:.3} ms, zeros -> kept {z_kept:.3} ms, random -> new {r_fresh:.3} ms, random -> kept (now random) {r_kept:.3} ms"
            );
        }
    }
    Ok(())
}
