//! A path render's samples spread over devices: every device renders batches of samples as
//! it frees up, so a faster GPU takes more of them (balance by measured throughput, not
//! equal shares), and the fixed-point sums ([`SampleSums`]) add up to the bits of one
//! device's render whatever the split.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar};
use lumbre_gpu::{Backend, Report};
use lumbre_raytrace::{PathRender, Prepared, SampleSums};

use crate::error::{Error, Result};
use crate::progress::progress;

/// Longest a batch of samples should take, so that the bars move, the image can be written
/// on time and the devices finish together.
const BATCH_TARGET: Duration = Duration::from_millis(500);

/// What one device did.
pub struct DeviceShare {
    /// The device (`backend.describe()`).
    pub name: String,
    /// Samples per pixel it rendered.
    pub samples: u64,
    /// Its rendering time (GPU time on a GPU).
    pub render: Duration,
}

/// A spread render's result.
pub struct Spread {
    /// The sums of all samples.
    pub sums: SampleSums,
    /// The render's statistics (paths, rays) summed over batches.
    pub totals: Report,
    /// Wall-clock time from the first batch to the last.
    pub wall: Duration,
    /// Images written before the end.
    pub writes: u32,
    /// Per device, in the order given.
    pub devices: Vec<DeviceShare>,
}

/// A finished batch, or a device's failure.
enum Msg {
    Batch { device: usize, sums: SampleSums, report: Report, took: Duration },
    Failed(Error),
}

/// Renders samples `samples` of `render` on `devices` (each places the scene itself), calling
/// `write` with the sums so far every `write_every` seconds.
pub fn spread(
    devices: &[Backend],
    render: &PathRender,
    prepared: &Prepared,
    samples: Range<u32>,
    write_every: f64,
    mut write: impl FnMut(&SampleSums) -> Result<()>,
) -> Result<Spread> {
    let o = render.options;
    let scale = SampleSums::scale_log2_for(&prepared.scene, o.background);
    let mut sums = SampleSums::new(o.width, o.height, samples.start, scale);
    let total = (samples.end - samples.start) as u64;
    let bars = MultiProgress::new();
    let bar = bars.add(progress(total, "samples"));
    let device_bars: Vec<ProgressBar> = if devices.len() > 1 {
        devices.iter().map(|d| bars.add(progress(total, &d.describe()))).collect()
    } else {
        vec![bar.clone()]
    };
    let next = AtomicU64::new(samples.start as u64);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let started = Instant::now();
    let mut shares: Vec<DeviceShare> =
        devices.iter().map(|d| DeviceShare { name: d.describe(), samples: 0, render: Duration::ZERO }).collect();
    let mut totals = Report::default();
    let mut writes = 0;
    let mut failure = None;
    std::thread::scope(|scope| {
        for (device, backend) in devices.iter().enumerate() {
            let tx = tx.clone();
            let (next, stop, dbar) = (&next, &stop, device_bars[device].clone());
            let parts = devices.len() as u64;
            scope.spawn(move || {
                let run = || -> Result<()> {
                    let placed = backend.place(render, prepared)?;
                    let mut r = *render;
                    let mut batch = 1u64;
                    let mut done = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        // Near the end, batches shrink so that the devices finish together: a
                        // batch takes at most a quarter of a device's share of what is left.
                        let left = (samples.end as u64).saturating_sub(next.load(Ordering::Relaxed));
                        let want = batch.min(left.div_ceil(4 * parts)).max(1);
                        let first = next.fetch_add(want, Ordering::Relaxed);
                        if first >= samples.end as u64 {
                            break;
                        }
                        let count = want.min(samples.end as u64 - first);
                        r.options.first_sample = first as u32;
                        r.options.spp = count as u32;
                        let height = o.height as u64;
                        let rows = |_: &str, row: u64, _: u64| dbar.set_position(done + count * row / height);
                        let t = Instant::now();
                        let (sums, report) = r.sums_placed(&placed, &rows)?;
                        let took = t.elapsed();
                        done += count;
                        if tx.send(Msg::Batch { device, sums, report, took }).is_err() {
                            break;
                        }
                        let per_sample = took.as_secs_f64() / count as f64;
                        let target = BATCH_TARGET.as_secs_f64().min(write_every);
                        batch = ((target / per_sample.max(1e-9)) as u64).clamp(1, count.saturating_mul(4));
                    }
                    Ok(())
                };
                if let Err(e) = run() {
                    stop.store(true, Ordering::Relaxed);
                    let _ = tx.send(Msg::Failed(e));
                }
            });
        }
        drop(tx);
        let mut last_write = Instant::now();
        for msg in rx {
            match msg {
                Msg::Failed(e) => {
                    failure.get_or_insert(e);
                }
                Msg::Batch { device, sums: part, report, took } if failure.is_none() => {
                    let mut step = || -> Result<()> {
                        sums.merge(&part)?;
                        let share = &mut shares[device];
                        share.samples += part.samples as u64;
                        share.render += report.gpu.unwrap_or_else(|| report.stage("render").unwrap_or(took));
                        for (name, v) in &report.stats {
                            totals.stat(name, totals.get(name).unwrap_or(0.0) + v);
                        }
                        if devices.len() > 1 {
                            device_bars[device].set_position(share.samples);
                        }
                        bar.set_position(sums.samples as u64);
                        if (sums.samples as u64) < total && last_write.elapsed().as_secs_f64() >= write_every {
                            write(&sums)?;
                            last_write = Instant::now();
                            writes += 1;
                        }
                        Ok(())
                    };
                    if let Err(e) = step() {
                        stop.store(true, Ordering::Relaxed);
                        failure = Some(e);
                    }
                }
                Msg::Batch { .. } => {}
            }
        }
    });
    for b in device_bars.iter().chain([&bar]) {
        b.finish_and_clear();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(Spread { sums, totals, wall: started.elapsed(), writes, devices: shares })
}
