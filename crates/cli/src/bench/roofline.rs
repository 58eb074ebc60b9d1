//! `lumbre bench roofline`: the copy kernel's bandwidth over sizes, beside CPU copies.

use std::time::{Duration, Instant};

use clap::Args;
use lumbre_gpu::{Backend, Gpu, copy_time, median_time};
use rayon::prelude::*;

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::limits::{available_memory, in_range};
use crate::progress::progress;
use crate::table::Table;

/// Copy-kernel bandwidth over a size sweep beside a CPU memcpy.
#[derive(Args)]
#[command(mut_arg("backend", |a| gpu_by_default(a).help("Skip the GPU columns")))]
pub struct RooflineArgs {
    /// Smallest size, as log2 of bytes (at least 4).
    #[arg(long, default_value_t = 20)]
    min_log2: u32,
    /// Largest size, as log2 of bytes, at least --min-log2 (default: 30, or the device's
    /// max_buffer_size when smaller; a larger value given here is an error).
    #[arg(long)]
    max_log2: Option<u32>,
    /// Untimed runs per size, 0..=1000.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Timed runs per size (the median is reported), 1..=1000.
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    /// Also time copy kernels that each add one feature (uniform length, barrier, shared
    /// memory, atomics, strided loads) at the largest size.
    #[arg(long)]
    variants: bool,
}

impl OnBackend for RooflineArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        Effort::new(self.warmup, self.repeats)?;
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let effort = Effort::new(self.warmup, self.repeats)?;
        let min_log2 = self.min_log2;
        let cap = backend.gpu().map_or(63, |g| 63 - g.limits().max_buffer_size.leading_zeros());
        // The CPU copies hold a source and a destination of the largest size.
        let memory = 63 - (available_memory() / 2).max(1).leading_zeros();
        let most = cap.min(memory);
        let limit = |e: crate::error::Error| match backend.gpu() {
            Some(_) => format!("{e} (the GPU's max_buffer_size is 2^{cap} bytes; free memory holds twice 2^{memory})"),
            None => format!("{e} (free memory holds twice 2^{memory} bytes)"),
        };
        // The smallest size first, against the real range, so that its error names it.
        in_range("--min-log2", min_log2, 4, most).map_err(limit)?;
        let max = match self.max_log2 {
            Some(m) => {
                in_range("--max-log2", m, min_log2, most).map_err(limit)?;
                m
            }
            None => 30.min(most).max(min_log2),
        };
        let mut tables = vec![roofline(backend, min_log2, max, effort)?];
        if let (true, Some(g)) = (self.variants, backend.gpu()) {
            tables.push(copy_variants(g, 1 << max.min(30), effort)?);
        }
        super::print(&tables, self.json)?;
        Ok(())
    }
}

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
fn copy_variants(gpu: &Gpu, bytes: u64, effort: Effort) -> Result<Table> {
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
