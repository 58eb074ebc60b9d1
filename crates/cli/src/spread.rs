//! Work spread over devices: every device takes the next batch as it frees up, so a faster
//! GPU takes more (balance by measured throughput, not equal shares), and the fixed-point
//! sums of the batches add up to the bits of one device's run whatever the split: the
//! samples of a path or Whitted render ([`SampledRender`], [`SampleSums`]) and a density
//! estimate's photons ([`DensityPart`]); and the frames of an animation, each written by the
//! device that rendered it.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar};
use lumbre_gpu::{Backend, Compute, Placed, Progress, Report};
use lumbre_raytrace::{Camera, Image, PathRender, Prepared, SampleSums, WhittedRender};

use crate::density::DensityOptions;
use crate::density_part::DensityPart;
use crate::error::{Error, Result};
use crate::progress::progress;
use crate::shard::Shard;

/// Longest a batch of samples should take, so that the bars move, the image can be written
/// on time and the devices finish together.
const BATCH_TARGET: Duration = Duration::from_millis(500);

/// What one device did.
pub struct DeviceShare {
    /// The device (`backend.describe()`).
    pub name: String,
    /// What it did: samples per pixel (path), photons (density).
    pub done: u64,
    /// Its rendering time (GPU time on a GPU).
    pub render: Duration,
}

/// A render whose samples split into batches that any device renders, and whose fixed-point
/// sums add up to the bits of the render in one piece: the path tracer and the Whitted
/// renderer.
pub trait SampledRender: Compute<Input = Prepared, Output = Image> + Sync + Sized {
    /// Width and height of the image.
    fn size(&self) -> (u32, u32);

    /// The same render of samples `first .. first + count` only.
    fn batch(&self, first: u32, count: u32) -> Self;

    /// The sums of the render's samples on an input placed on either backend, and the report
    /// of the run (its statistics: rays, paths).
    fn sums_placed(
        &self,
        placed: &Placed<'_, Self>,
        progress: &dyn Progress,
    ) -> lumbre_gpu::Result<(SampleSums, Report)>;
}

impl SampledRender for PathRender {
    fn size(&self) -> (u32, u32) {
        (self.options.width, self.options.height)
    }

    fn batch(&self, first: u32, count: u32) -> Self {
        let mut r = *self;
        r.options.first_sample = first;
        r.options.spp = count;
        r
    }

    fn sums_placed(
        &self,
        placed: &Placed<'_, Self>,
        progress: &dyn Progress,
    ) -> lumbre_gpu::Result<(SampleSums, Report)> {
        PathRender::sums_placed(self, placed, progress)
    }
}

impl SampledRender for WhittedRender {
    fn size(&self) -> (u32, u32) {
        (self.options.width, self.options.height)
    }

    /// Samples `first .. first + count` of the render's `spp` strata.
    fn batch(&self, first: u32, count: u32) -> Self {
        let mut r = *self;
        r.options.batch = Some((first, count));
        r
    }

    fn sums_placed(
        &self,
        placed: &Placed<'_, Self>,
        progress: &dyn Progress,
    ) -> lumbre_gpu::Result<(SampleSums, Report)> {
        WhittedRender::sums_placed(self, placed, progress)
    }
}

/// A spread render's result.
pub struct Spread {
    /// The sums of all samples.
    pub sums: SampleSums,
    /// The render's statistics (paths, rays) summed over batches.
    pub totals: Report,
    /// Wall-clock time from the first batch to the last.
    pub wall: Duration,
    /// The longest a device took to place the scene (its upload, on a GPU).
    pub upload: Duration,
    /// Images written before the end.
    pub writes: u32,
    /// Per device, in the order given.
    pub devices: Vec<DeviceShare>,
}

/// A device's scene placed (and how long that took), a finished batch, or a device's failure.
enum Msg {
    Placed(Duration),
    Batch { device: usize, sums: SampleSums, report: Report, took: Duration },
    Failed(Error),
}

/// Renders samples `samples` of `render` on `devices` (each places the scene itself), calling
/// `write` with the sums so far every `write_every` seconds. The sums take the unit of the
/// first batch to arrive; every batch of a render has the same.
pub fn spread<R: SampledRender>(
    devices: &[Backend],
    render: &R,
    prepared: &Prepared,
    samples: Range<u32>,
    write_every: f64,
    mut write: impl FnMut(&SampleSums) -> Result<()>,
) -> Result<Spread> {
    let (width, height) = render.size();
    let mut sums: Option<SampleSums> = None;
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
        devices.iter().map(|d| DeviceShare { name: d.describe(), done: 0, render: Duration::ZERO }).collect();
    let mut totals = Report::default();
    let mut writes = 0;
    let mut upload = Duration::ZERO;
    let mut failure = None;
    std::thread::scope(|scope| {
        for (device, backend) in devices.iter().enumerate() {
            let tx = tx.clone();
            let (next, stop, dbar) = (&next, &stop, device_bars[device].clone());
            let parts = devices.len() as u64;
            scope.spawn(move || {
                let run = || -> Result<()> {
                    let t = Instant::now();
                    let placed = backend.place(render, prepared)?;
                    let _ = tx.send(Msg::Placed(t.elapsed()));
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
                        let r = render.batch(first as u32, count as u32);
                        let rows = |_: &str, row: u64, _: u64| dbar.set_position(done + count * row / height as u64);
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
                Msg::Placed(took) => upload = upload.max(took),
                Msg::Batch { device, sums: part, report, took } if failure.is_none() => {
                    let mut step = || -> Result<()> {
                        let sums =
                            sums.get_or_insert_with(|| SampleSums::new(width, height, samples.start, part.scale_log2));
                        sums.merge(&part)?;
                        let share = &mut shares[device];
                        share.done += part.samples as u64;
                        share.render += report.gpu.unwrap_or_else(|| report.stage("render").unwrap_or(took));
                        for (name, v) in &report.stats {
                            totals.stat(name, totals.get(name).unwrap_or(0.0) + v);
                        }
                        if devices.len() > 1 {
                            device_bars[device].set_position(share.done);
                        }
                        bar.set_position(sums.samples as u64);
                        if (sums.samples as u64) < total && last_write.elapsed().as_secs_f64() >= write_every {
                            write(sums)?;
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
    let sums = sums.ok_or("no samples to render")?;
    Ok(Spread { sums, totals, wall: started.elapsed(), upload, writes, devices: shares })
}

/// A one-pass density estimate (shard `o.shard` of a run, or all of it) spread over
/// `devices` in four chunks a device, each a finer shard of the run that a device takes as it
/// frees up ([`spread_frames`]); the chunks' parts merge into the shard's part.
pub fn spread_density(
    devices: &[Backend],
    prepared: &Prepared,
    camera: Camera,
    (width, height): (u32, u32),
    o: &DensityOptions,
) -> Result<(DensityPart, Vec<DeviceShare>)> {
    let outer = o.shard.unwrap_or(Shard { index: 0, count: 1 });
    let chunks = 4 * devices.len() as u32;
    let done = std::sync::Mutex::new(Vec::new());
    let bar = progress(chunks as u64, "photon chunks");
    let shares = spread_frames(
        devices,
        0..chunks,
        &bar,
        |device| Ok(device.clone()),
        |device, j| {
            let shard = Shard { index: outer.index * chunks + j, count: outer.count * chunks };
            let chunk = DensityOptions { shard: Some(shard), ..*o };
            let est = crate::density::estimate(prepared, camera, width, height, &chunk, device, &())?;
            let part = est.part.ok_or("a one-pass density run without sums")?;
            done.lock().map_err(|_| "a device's thread failed")?.push((j, part));
            Ok(est.report.gpu.unwrap_or_else(|| est.report.total()))
        },
    )?;
    bar.finish_and_clear();
    let mut parts = done.into_inner().map_err(|_| "a device's thread failed")?;
    parts.sort_by_key(|(j, _)| *j);
    let mut parts = parts.into_iter().map(|(_, p)| p);
    let mut merged = parts.next().ok_or("no photon chunks ran")?;
    for p in parts {
        merged.merge(&p)?;
    }
    Ok((merged, shares))
}

/// Frames `frames` spread over `devices`: each device makes its state once (`setup`: the
/// scene on it), then renders and writes frames as it frees up (`frame` returns the frame's
/// rendering time). `bar` counts frames.
pub fn spread_frames<S>(
    devices: &[Backend],
    frames: Range<u32>,
    bar: &ProgressBar,
    setup: impl Fn(&Backend) -> Result<S> + Sync,
    frame: impl Fn(&S, u32) -> Result<Duration> + Sync,
) -> Result<Vec<DeviceShare>> {
    let next = AtomicU64::new(frames.start as u64);
    let stop = AtomicBool::new(false);
    // One bar a device beside the caller's, where there are several.
    let bars = MultiProgress::new();
    let bar = bars.add(bar.clone());
    let device_bars: Vec<Option<ProgressBar>> = devices
        .iter()
        .map(|d| (devices.len() > 1).then(|| bars.add(progress(frames.len() as u64, &d.describe()))))
        .collect();
    let results: Vec<Result<DeviceShare>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devices
            .iter()
            .zip(&device_bars)
            .map(|(backend, dbar)| {
                let (next, stop, setup, frame, end, bar) = (&next, &stop, &setup, &frame, frames.end as u64, &bar);
                scope.spawn(move || -> Result<DeviceShare> {
                    let mut share = DeviceShare { name: backend.describe(), done: 0, render: Duration::ZERO };
                    let mut run = || -> Result<()> {
                        let state = setup(backend)?;
                        while !stop.load(Ordering::Relaxed) {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= end {
                                break;
                            }
                            share.render += frame(&state, i as u32)?;
                            share.done += 1;
                            bar.inc(1);
                            if let Some(b) = dbar {
                                b.inc(1);
                            }
                        }
                        Ok(())
                    };
                    run().inspect_err(|_| stop.store(true, Ordering::Relaxed))?;
                    Ok(share)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a device's thread failed".to_string().into())))
            .collect()
    });
    device_bars.iter().flatten().for_each(ProgressBar::finish_and_clear);
    results.into_iter().collect()
}
