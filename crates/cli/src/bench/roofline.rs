//! `lumbre bench roofline`: the copy kernel's bandwidth over sizes, beside CPU copies.

use std::time::{Duration, Instant};

use lumbre_gpu::{Backend, Gpu, copy_time, median_time};
use rayon::prelude::*;

use super::Effort;
use crate::error::Result;
use crate::progress::progress;
use crate::table::Table;

fn gbps(bytes: u64, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

fn cpu_copy(bytes: usize, effort: Effort, parallel: bool) -> Duration {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let chunk = (bytes / rayon::current_num_threads().max(1)).max(1 << 16);
    median_time(effort.warmup, effort.repeats, || {
        let t = Instant::now();
        if parallel {
            dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
        } else {
            dst.copy_from_slice(&src);
        }
        Ok(t.elapsed())
    })
    .unwrap_or_default()
}

/// Copy bandwidth over sizes `2^min_log2 ..= 2^max_log2` bytes (step x4), GB/s counting read
/// plus write, beside CPU memcpy (one thread) and a parallel CPU copy.
pub fn roofline(backend: &Backend, min_log2: u32, max_log2: u32, effort: Effort) -> Result<Table> {
    let gpu = backend.gpu();
    let mut t = Table::new(
        "Roofline: copy kernel (vec4<u32>, and one u32 per thread) vs CPU copy, GB/s counting read + write",
        &["bytes", "GPU ms", "GPU GB/s", "GPU u32/thread GB/s", "CPU memcpy GB/s", "CPU parallel GB/s"],
    );
    let sizes: Vec<u32> = (min_log2..=max_log2).step_by(2).collect();
    let bar = progress(sizes.len() as u64, "roofline");
    for log2 in sizes {
        let bytes = 1u64 << log2;
        let gpu_cells = match gpu {
            Some(gpu) => {
                let t = copy_time(gpu, bytes, effort.warmup, effort.repeats)?;
                let s = lumbre_gpu::copy_time_u32(gpu, bytes, effort.warmup, effort.repeats)?;
                vec![
                    format!("{:.4}", t.as_secs_f64() * 1e3),
                    format!("{:.1}", gbps(2 * bytes, t)),
                    format!("{:.1}", gbps(2 * bytes, s)),
                ]
            }
            None => vec!["-".into(), "-".into(), "-".into()],
        };
        let mem = cpu_copy(bytes as usize, effort, false);
        let par = cpu_copy(bytes as usize, effort, true);
        let mut row = vec![bytes.to_string()];
        row.extend(gpu_cells);
        row.push(format!("{:.1}", gbps(2 * bytes, mem)));
        row.push(format!("{:.1}", gbps(2 * bytes, par)));
        t.row(row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    match gpu {
        Some(gpu) => t.note(format!(
            "adapter: {}; median of {} runs after {} warm-up; GPU time from {}",
            gpu.adapter_name(),
            effort.repeats,
            effort.warmup,
            if gpu.has(lumbre_gpu::wgpu::Features::TIMESTAMP_QUERY) { "timestamp queries" } else { "wall clock" }
        )),
        None => t.note("no GPU: CPU columns only"),
    }
    t.note(format!("CPU: {} rayon threads", rayon::current_num_threads()));
    Ok(t)
}

/// The copy variants at one size: which kernel feature costs bandwidth.
pub fn copy_variants(gpu: &Gpu, bytes: u64, effort: Effort) -> Result<Table> {
    let mut t =
        Table::new(format!("One-u32-per-thread copy variants, {bytes} bytes each way"), &["variant", "GPU ms", "GB/s"]);
    let base = lumbre_gpu::copy_time_u32(gpu, bytes, effort.warmup, effort.repeats)?;
    t.row(vec![
        "arrayLength bound (copy_u32)".into(),
        format!("{:.4}", base.as_secs_f64() * 1e3),
        format!("{:.1}", gbps(2 * bytes, base)),
    ]);
    let vec4 = copy_time(gpu, bytes, effort.warmup, effort.repeats)?;
    t.row(vec![
        "vec4 per thread (copy)".into(),
        format!("{:.4}", vec4.as_secs_f64() * 1e3),
        format!("{:.1}", gbps(2 * bytes, vec4)),
    ]);
    for (name, d) in lumbre_gpu::copy_variant_times(gpu, bytes, effort.warmup, effort.repeats)? {
        t.row(vec![name.into(), format!("{:.4}", d.as_secs_f64() * 1e3), format!("{:.1}", gbps(2 * bytes, d))]);
    }
    t.note(format!("adapter: {}", gpu.adapter_name()));
    Ok(t)
}
