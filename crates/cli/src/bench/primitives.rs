//! `lumbre bench primitives`: Morton encoding, scan, compaction, radix sort and the histogram
//! pyramid, on the GPU against the copy kernel moving the same bytes, and on the CPU.

use std::time::{Duration, Instant};

use clap::Args;
use lumbre_compact::{
    Compact, Emit, GpuCompacted, HistoPyramid, Lookback, Predicate, Scan, ScanKind, ScanMethod, Select, SortMethod,
    Stream, compact_cpu, radix_sort_cpu, record_scan_with, record_sort_with, scan_cpu,
};
use lumbre_gpu::stages::Stages;
use lumbre_gpu::{
    Agree, BUSY_SPAN, Backend, Compute, Fit, Gpu, KeepBusy, Tolerance, compare_slices, copy_time, copy_time_between,
    median_time,
};
use lumbre_morton::{Keys, MortonEncode, Quantizer};

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::limits::{available_memory, human, in_range};
use crate::progress::progress;
use crate::table::Table;

/// Scan, compaction, radix sort, Morton encoding and the histogram pyramid, GPU vs copy
/// kernel vs CPU.
#[derive(Args)]
#[command(mut_arg("backend", |a| gpu_by_default(a).help("`cpu` skips the GPU columns")))]
pub struct PrimitivesArgs {
    /// Cap every size at 2^this elements, 16..=28 (uncapped: scan and compaction 2^28, sort
    /// and Morton 2^26).
    #[arg(long, default_value_t = 28)]
    max_log2: u32,
    /// Sort 2^this keys in the sort rows, 16..=28 (capped by --max-log2).
    #[arg(long, default_value_t = 26)]
    sort_log2: u32,
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
    /// Polls of an unpublished predecessor before a scan or compaction tile reduces its
    /// input itself (the look-back fallback).
    #[arg(long, default_value_t = Lookback::default().spin_limit)]
    lookback_spins: u32,
    /// Run only the rows whose operation contains this (e.g. `compact`, `Morton`,
    /// `histogram pyramid`), to measure a row quickly or in a process of its own.
    #[arg(long)]
    only: Option<String>,
}

impl OnBackend for PrimitivesArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        let max_log2 = self.max_log2;
        in_range("--max-log2", max_log2, 16, 28)?;
        in_range("--sort-log2", self.sort_log2, 16, 28)?;
        Effort::new(self.warmup, self.repeats)?;
        // Inputs, outputs and the CPU's copies: about 16 bytes per element at the largest size,
        // and 48 per key of the sorts (u64 keys, their copies, u32 keys and values).
        let sort_log2 = self.sort_log2.min(max_log2);
        let (need, available) = ((16u64 << max_log2).max(48 << sort_log2), available_memory());
        if need > available {
            return Err(format!(
                "--max-log2 {max_log2}, --sort-log2 {sort_log2}: about {} of memory needed, more than the {} available: lower them",
                human(need),
                human(available)
            )
            .into());
        }
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let effort = Effort::new(self.warmup, self.repeats)?;
        let lookback = Lookback { spin_limit: self.lookback_spins, ..Default::default() };
        let sizes = (self.max_log2, self.sort_log2);
        let tables = primitives(backend, sizes, effort, lookback, self.only.as_deref())?;
        super::print(&tables, self.json)?;
        Ok(())
    }
}

fn ms(t: Duration) -> String {
    format!("{:.4}", t.as_secs_f64() * 1e3)
}

fn wall(effort: Effort, mut f: impl FnMut()) -> Duration {
    median_time(effort.warmup.min(1), effort.repeats.min(5), || {
        let t = Instant::now();
        f();
        Ok(t.elapsed())
    })
    .unwrap_or_default()
}

/// Deterministic pseudo-random u32s.
pub fn random_u32(n: usize, seed: u32) -> Vec<u32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s
        })
        .collect()
}

fn random_points(n: usize) -> Vec<[f32; 3]> {
    let r = random_u32(3 * n, 0xC0FFEE);
    r.chunks_exact(3).map(|c| std::array::from_fn(|a| (c[a] >> 8) as f32 / (1 << 24) as f32)).collect()
}

struct Row {
    op: String,
    n: usize,
    gpu: Option<Duration>,
    copy: Option<Duration>,
    /// The copy kernel between the operation's own input and output buffers.
    own: Option<Duration>,
    cpu: Duration,
    rate_unit: &'static str,
    rate_per: f64,
}

fn push(t: &mut Table, r: Row) {
    let rate = |d: Duration| crate::table::sig(r.rate_per / d.as_secs_f64() / 1e9);
    let (g, c, ratio, gr) = match (r.gpu, r.copy) {
        (Some(g), Some(c)) => (ms(g), ms(c), format!("{:.2}", g.as_secs_f64() / c.as_secs_f64()), rate(g)),
        _ => ("-".into(), "-".into(), "-".into(), "-".into()),
    };
    let (own, own_ratio) = match (r.gpu, r.own) {
        (Some(g), Some(o)) => (ms(o), format!("{:.2}", g.as_secs_f64() / o.as_secs_f64())),
        _ => ("-".into(), "-".into()),
    };
    t.row(vec![
        r.op,
        format!("2^{}", r.n.trailing_zeros()),
        g,
        c,
        ratio,
        own,
        own_ratio,
        gr,
        ms(r.cpu),
        rate(r.cpu),
        r.rate_unit.into(),
    ]);
}

/// Median GPU time of what `record` records, with the per-stage times of that median run.
fn gpu_time_stages(
    gpu: &Gpu,
    effort: Effort,
    mut record: impl FnMut(&mut lumbre_gpu::Recorder) -> lumbre_gpu::Result<()>,
) -> Result<(Duration, Vec<(String, Duration)>)> {
    // Each run starts on a busy GPU (see lumbre_gpu::KeepBusy).
    let busy = KeepBusy::new(gpu)?;
    for _ in 0..effort.warmup {
        busy.queue(gpu, BUSY_SPAN)?;
        let mut rec = gpu.recorder();
        record(&mut rec)?;
        rec.submit()?;
    }
    let mut runs = Vec::new();
    for _ in 0..effort.repeats.max(1) {
        busy.queue(gpu, BUSY_SPAN)?;
        let mut rec = gpu.recorder();
        record(&mut rec)?;
        runs.push(rec.submit()?);
    }
    runs.sort_by_key(|t| t.gpu());
    let median = &runs[runs.len() / 2];
    Ok((median.gpu(), median.by_label()))
}

/// Median GPU time of what `record` records.
fn gpu_time(
    gpu: &Gpu,
    effort: Effort,
    record: impl FnMut(&mut lumbre_gpu::Recorder) -> lumbre_gpu::Result<()>,
) -> Result<Duration> {
    gpu_time_stages(gpu, effort, record).map(|(t, _)| t)
}

/// A benchmark of a wrong result is worthless: every GPU result is checked against the CPU's
/// (exact for integers; f32 scans within 1e-3 relative, summation orders differ).
fn check<S: lumbre_gpu::Scalar>(name: &str, cpu: &[S], gpu: &[S], tol: Tolerance) -> Result<()> {
    match compare_slices(cpu, gpu, tol) {
        Some(d) => Err(format!("{name}: the GPU result disagrees with the CPU's: {d}").into()),
        None => Ok(()),
    }
}

fn stages_note(name: &str, stages: &[(String, Duration)]) -> String {
    let parts: Vec<String> = stages.iter().map(|(l, d)| format!("{l} {}", ms(*d))).collect();
    format!("{name} stages (ms): {}", parts.join(", "))
}

/// A scan's row; a note with its stages if it took several passes.
fn scan_row<T: lumbre_compact::ScanElem + lumbre_gpu::Scalar>(
    name: &str,
    input: &[T],
    scan: Scan<T>,
    tol: Tolerance,
    backend: &Backend,
    effort: Effort,
    notes: &mut Vec<String>,
) -> Result<Row> {
    let n = input.len();
    let mut out = vec![T::default(); n];
    let cpu = wall(effort, || {
        scan_cpu(input, &mut out, scan.kind);
    });
    let (g, c, own) = match backend.gpu() {
        Some(gpu) => {
            let src = gpu.upload_fit(input, Fit::Pieces)?;
            let dst = gpu.zeroed_fit::<T>(n, Fit::Pieces)?;
            let (g, stages) = gpu_time_stages(gpu, effort, |rec| {
                record_scan_with(rec, &src, &dst, scan.kind, scan.method, scan.lookback).map(|_| ())
            })?;
            if stages.len() > 1 {
                notes.push(stages_note(name, &stages));
            }
            check(name, &out, &gpu.download(&dst)?, tol)?;
            let own = copy_time_between(gpu, &src, &dst, effort.warmup, effort.repeats)?;
            (Some(g), Some(copy_time(gpu, 4 * n as u64, effort.warmup, effort.repeats)?), Some(own))
        }
        None => (None, None, None),
    };
    Ok(Row { op: name.into(), n, gpu: g, copy: c, own, cpu, rate_unit: "G elem/s", rate_per: n as f64 })
}

/// Every row of the table, for `--only`.
const ROWS: &[&str] = &[
    "scan u32 exclusive",
    "scan u32 exclusive, single pass",
    "scan f32 inclusive",
    "compact by flag, half kept",
    "compact by flag, half kept, single pass",
    "compact by predicate, half kept",
    "compact by predicate, half kept, single pass",
    "sort u32 keys",
    "sort u32 keys, one sweep",
    "sort 30-bit keys",
    "sort u32 keys + u32 values",
    "sort u64 keys",
    "Morton encode, 30 bit keys",
    "Morton encode, 63 bit keys",
    "histogram pyramid",
];

/// `(max_log2, sort_log2)` cap every size and set the sorts'; `lookback` sets the scan's and
/// the compaction's look-back (how long a tile waits for a predecessor before reducing its
/// input itself); `only` keeps the rows whose operation contains it (`histogram pyramid`
/// names the pyramid table).
pub fn primitives(
    backend: &Backend,
    (max_log2, sort_log2): (u32, u32),
    effort: Effort,
    lookback: Lookback,
    only: Option<&str>,
) -> Result<Vec<Table>> {
    let gpu = backend.gpu();
    let wanted = |name: &str| only.is_none_or(|o| name.contains(o));
    // Refuse an unknown --only before allocating the inputs.
    if !ROWS.iter().any(|r| wanted(r)) {
        return Err(format!(
            "no primitives row matches --only {:?}; the rows: {}",
            only.unwrap_or_default(),
            ROWS.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>().join("; ")
        )
        .into());
    }
    let any = |group: &str| ROWS.iter().any(|r| r.starts_with(group) && wanted(r));
    let mut t = Table::new(
        "Primitives: GPU time vs the copy kernel moving the same bytes, and the CPU path",
        &[
            "operation",
            "n",
            "GPU ms",
            "copy ms",
            "GPU/copy",
            "own copy ms",
            "GPU/own copy",
            "GPU rate",
            "CPU ms",
            "CPU rate",
            "rate unit",
        ],
    );
    let mut stage_notes = Vec::new();
    let scan_n = 1usize << 28.min(max_log2);
    let sort_n = 1usize << sort_log2.min(max_log2);
    let morton_n = 1usize << 26.min(max_log2);
    let bar = progress(12, "primitives");

    // Scans of u32 and f32 (4 bytes read, 4 written per element).
    let input = if any("scan") || any("compact") || any("histogram") { random_u32(scan_n, 1) } else { Vec::new() };
    fn scan<T>(kind: ScanKind, method: ScanMethod, lookback: Lookback) -> Scan<T> {
        let mut scan = Scan::with_method(kind, method);
        scan.lookback = lookback;
        scan
    }
    // The default method, and the single pass it replaces at this size.
    for (name, method) in
        [("scan u32 exclusive", ScanMethod::Auto), ("scan u32 exclusive, single pass", ScanMethod::SinglePass)]
    {
        if wanted(name) {
            push(
                &mut t,
                scan_row(
                    name,
                    &input,
                    scan(ScanKind::Exclusive, method, lookback),
                    Tolerance::EXACT,
                    backend,
                    effort,
                    &mut stage_notes,
                )?,
            );
        }
        bar.inc(1);
    }
    if wanted("scan f32 inclusive") {
        let inputf: Vec<f32> = input.iter().map(|&x| (x >> 20) as f32).collect();
        let tol = Tolerance::relative(1e-3);
        let row = scan_row(
            "scan f32 inclusive",
            &inputf,
            scan(ScanKind::Inclusive, ScanMethod::Auto, lookback),
            tol,
            backend,
            effort,
            &mut stage_notes,
        );
        push(&mut t, row?);
    }
    bar.inc(1);

    // Compaction, half the flags set: reads values and flags (8 B), writes half (2 B).
    let flags: Vec<u32> = input.iter().map(|&x| x & 1).collect();
    let stream = Stream { values: input.clone(), flags };
    // The default method (two passes at this size), and the single pass.
    let (by_flag, by_predicate) = (Select::Flags, Select::Where(Predicate::AnyBits(1)));
    let compaction_rows = [
        ("compact by flag, half kept", by_flag, 10u64, ScanMethod::Auto),
        ("compact by flag, half kept, single pass", by_flag, 10, ScanMethod::SinglePass),
        ("compact by predicate, half kept", by_predicate, 6, ScanMethod::Auto),
        ("compact by predicate, half kept, single pass", by_predicate, 6, ScanMethod::SinglePass),
    ];
    for (name, select, bytes_per, method) in compaction_rows {
        bar.inc(1);
        if !wanted(name) {
            continue;
        }
        let c = Compact { select, emit: Emit::Values, method, lookback };
        let mut kept = Vec::new();
        let cpu = wall(effort, || {
            kept = compact_cpu(&stream.values, &stream.flags, select, Emit::Values);
        });
        let (g, cp, own) = match gpu {
            Some(gpu) if scan_n * 4 <= gpu.limits().max_storage_buffer_binding_size as usize => {
                let on_gpu = c.upload(gpu, &stream)?;
                let out = GpuCompacted::new(gpu, scan_n)?;
                let (g, stages) = gpu_time_stages(gpu, effort, |rec| c.record_compact_into(rec, &on_gpu, &out))?;
                if stages.len() > 1 {
                    stage_notes.push(stages_note(name, &stages));
                }
                check(name, &kept, &c.download(gpu, &out)?, Tolerance::EXACT)?;
                let own = copy_time_between(gpu, &on_gpu.values, &out.out, effort.warmup, effort.repeats)?;
                let copy = copy_time(gpu, bytes_per * scan_n as u64 / 2, effort.warmup, effort.repeats)?;
                (Some(g), Some(copy), Some(own))
            }
            _ => (None, None, None),
        };
        push(
            &mut t,
            Row {
                op: name.into(),
                n: scan_n,
                gpu: g,
                copy: cp,
                own,
                cpu,
                rate_unit: "G elem/s",
                rate_per: scan_n as f64,
            },
        );
    }

    // Radix sorts (copy column: the bytes of one read and one write of the keys).
    let sort_n = if any("sort") { sort_n } else { 0 };
    let all_keys = random_u32(sort_n, 7);
    let keys64: Vec<u64> =
        random_u32(2 * sort_n, 9).chunks_exact(2).map(|c| (c[0] as u64) << 32 | c[1] as u64).collect();
    let vals: Vec<u32> = (0..sort_n as u32).collect();
    let (auto, sweep) = (SortMethod::Auto, SortMethod::OneSweep(Lookback::default()));
    // The one sweep needs subgroups of 8 to 128 lanes.
    let sweeps = gpu.is_none_or(|g| g.has_subgroups() && (8..=128).contains(&g.subgroup_size_range().0));
    for (name, words, with_values, bits, method) in [
        ("sort u32 keys", 1, false, 32, auto),
        ("sort u32 keys, one sweep", 1, false, 32, sweep),
        ("sort 30-bit keys", 1, false, 30, auto),
        ("sort u32 keys + u32 values", 1, true, 32, auto),
        ("sort u64 keys", 2, false, 64, auto),
    ] {
        bar.inc(1);
        if !wanted(name) || (method == sweep && !sweeps) {
            continue;
        }
        let keys: Vec<u32> = all_keys.iter().map(|&k| k & (u32::MAX >> (32 - bits.min(32)))).collect();
        // The copies of the unsorted input are made outside the timed part.
        let (mut sorted, mut sorted64, mut sorted_vals) = (Vec::new(), Vec::new(), Vec::new());
        let cpu = median_time(effort.warmup.min(1), effort.repeats.min(5), || {
            if words == 2 {
                let mut k = keys64.clone();
                let t = Instant::now();
                radix_sort_cpu(&mut k, None);
                let e = t.elapsed();
                sorted64 = k;
                Ok(e)
            } else {
                let mut k = keys.clone();
                let mut v = if with_values { vals.clone() } else { Vec::new() };
                let t = Instant::now();
                radix_sort_cpu(&mut k, with_values.then_some(&mut v[..]));
                let e = t.elapsed();
                (sorted, sorted_vals) = (k, v);
                Ok(e)
            }
        })
        .unwrap_or_default();
        let (g, cp, own) = match gpu {
            Some(gpu) => {
                let ((g, stages), own) = if words == 2 {
                    let pristine = gpu.upload_fit(&keys64, Fit::Pieces)?;
                    let work = gpu.zeroed_fit::<u64>(sort_n, Fit::Pieces)?;
                    let timed = gpu_time_stages(gpu, effort, |rec| {
                        rec.copy(&pristine, &work)?;
                        let mut s = Stages::record(rec);
                        let k = s.adopt(&work)?;
                        record_sort_with(&mut s, k, None, bits, method)
                    })?;
                    check(name, &sorted64, &gpu.download(&work)?, Tolerance::EXACT)?;
                    let own = copy_time_between(gpu, &pristine, &work, effort.warmup, effort.repeats)?;
                    (timed, own)
                } else {
                    let pristine = gpu.upload_fit(&keys, Fit::Pieces)?;
                    let work = gpu.zeroed_fit::<u32>(sort_n, Fit::Pieces)?;
                    let v = gpu.upload_fit(&vals, Fit::Pieces)?;
                    let pristine_vals = gpu.upload_fit(&vals, Fit::Pieces)?;
                    let timed = gpu_time_stages(gpu, effort, |rec| {
                        rec.copy(&pristine, &work)?;
                        rec.copy(&pristine_vals, &v)?;
                        let mut s = Stages::record(rec);
                        let k = s.adopt(&work)?;
                        let v = with_values.then(|| s.adopt(&v)).transpose()?;
                        record_sort_with(&mut s, k, v, bits, method)
                    })?;
                    check(name, &sorted, &gpu.download(&work)?, Tolerance::EXACT)?;
                    if with_values {
                        check(name, &sorted_vals, &gpu.download(&v)?, Tolerance::EXACT)?;
                    }
                    let own = copy_time_between(gpu, &pristine, &work, effort.warmup, effort.repeats)?;
                    (timed, own)
                };
                stage_notes.push(stages_note(name, &stages));
                let bytes = (4 * words + 4 * with_values as usize) * sort_n;
                (Some(g), Some(copy_time(gpu, bytes as u64, effort.warmup, effort.repeats)?), Some(own))
            }
            None => (None, None, None),
        };
        push(
            &mut t,
            Row {
                op: name.into(),
                n: sort_n,
                gpu: g,
                copy: cp,
                own,
                cpu,
                rate_unit: "G keys/s",
                rate_per: sort_n as f64,
            },
        );
    }

    // Morton encoding: 12 B read, 4 (or 8) B written per point.
    let points = random_points(if any("Morton") { morton_n } else { 0 });
    for bits in [10u32, 21] {
        let enc = MortonEncode { quantizer: Quantizer::new([0.0; 3], [1.0; 3], bits)?, clamp: false };
        let name = format!("Morton encode, {} bit keys", if bits > 10 { 63 } else { 30 });
        bar.inc(1);
        if !wanted(&name) {
            continue;
        }
        // Into one reused buffer, as the other rows' CPU paths write into one output: a fresh
        // 64-128 MiB output would time the page faults of its first writes.
        let mut codes = Some(Keys::U32(Vec::new()));
        let cpu = wall(effort, || {
            if let Some(k) = codes.as_mut()
                && enc.encode_into(&points, k).is_err()
            {
                codes = None;
            }
        });
        let (g, cp) = match gpu {
            Some(gpu) => {
                let on_gpu = enc.upload(gpu, &points)?;
                let g = gpu_time(gpu, effort, |rec| enc.record_keys(rec, &on_gpu).map(|_| ()))?;
                let mut rec = gpu.recorder();
                let keys = enc.record_keys(&mut rec, &on_gpu)?;
                rec.submit()?;
                if let Some(cpu) = &codes
                    && let Some(d) = cpu.disagreement(&enc.download(gpu, &keys)?, Tolerance::EXACT)
                {
                    return Err(format!("{name}: the GPU result disagrees with the CPU's: {d}").into());
                }
                let out_bytes = if bits > 10 { 8 } else { 4 };
                let copy = copy_time(gpu, (12 + out_bytes) * morton_n as u64 / 2, effort.warmup, effort.repeats)?;
                (Some(g), Some(copy))
            }
            None => (None, None),
        };
        push(
            &mut t,
            Row {
                op: name,
                n: morton_n,
                gpu: g,
                copy: cp,
                own: None,
                cpu,
                rate_unit: "G keys/s",
                rate_per: morton_n as f64,
            },
        );
    }
    bar.finish_and_clear();
    let pyramid = wanted("histogram pyramid");
    let who = gpu.map_or("no GPU".to_string(), |g| g.adapter_name().to_string());
    t.note(format!(
        "adapter: {who}; GPU times from {}; median of {} runs after {} warm-up (CPU: median of up to 5); CPU: {} rayon threads",
        gpu.map_or("-", |g| if g.has(lumbre_gpu::wgpu::Features::TIMESTAMP_QUERY) { "timestamp queries" } else { "wall clock" }),
        effort.repeats,
        effort.warmup,
        rayon::current_num_threads()
    ));
    t.note("copy ms: the copy kernel reading and writing (bytes read + bytes written) / 2 each way");
    t.note(
        "own copy ms: the copy kernel between the operation's own buffers: scans input -> output (the same \
         bytes), compaction values -> output (8 of its 10 bytes per element), sorts unsorted keys -> work keys (the \
         keys' bytes)",
    );
    if gpu.is_some() {
        t.note("every GPU result was checked against the CPU's (exact; the f32 scan within 1e-3 relative)");
    }
    for n in stage_notes {
        t.note(n);
    }
    let mut tables = if t.rows.is_empty() { Vec::new() } else { vec![t] };
    if let (Some(gpu), true) = (gpu, pyramid) {
        tables.push(pyramid_vs_compaction(gpu, max_log2.min(28), effort)?);
    }
    Ok(tables)
}

/// The density paper's Figure 10 as a table: histogram pyramid against both methods of the
/// modern compaction.
fn pyramid_vs_compaction(gpu: &Gpu, max_log2: u32, effort: Effort) -> Result<Table> {
    let mut t = Table::new(
        "Histogram pyramid vs compaction in one pass and in two (flags, half kept, values out)",
        &["n", "pyramid ms", "one pass ms", "two passes ms", "pyramid/faster", "default"],
    );
    let bar = progress(((max_log2.max(16) - 16) / 2 + 1) as u64, "pyramid vs compaction");
    for log2 in (16..=max_log2.max(16)).step_by(2) {
        let n = 1usize << log2;
        let values = random_u32(n, log2);
        let flags = values.iter().map(|v| v >> 31).collect();
        let stream = Stream { values, flags };
        let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
        let [one, two] = [ScanMethod::SinglePass, ScanMethod::ReduceThenScan].map(|method| Compact {
            select: Select::Flags,
            emit: Emit::Values,
            method,
            ..Default::default()
        });
        let on_gpu = one.upload(gpu, &stream)?;
        let pyramid = gpu_time(gpu, effort, |rec| hp.record(rec, &on_gpu).map(|_| ()))?;
        let [b, c] = [one, two].map(|m| gpu_time(gpu, effort, |rec| m.record_compact(rec, &on_gpu).map(|_| ())));
        let (b, c) = (b?, c?);
        let mut rec = gpu.recorder();
        let pyr = hp.record(&mut rec, &on_gpu)?;
        let outs = [one.record(&mut rec, &on_gpu)?, two.record(&mut rec, &on_gpu)?];
        rec.submit()?;
        let want = hp.download(gpu, &pyr)?;
        for (m, out) in [one, two].iter().zip(&outs) {
            let name = format!("histogram pyramid against {:?} at 2^{log2}", m.method);
            check(&name, &m.download(gpu, out)?, &want, Tolerance::EXACT)?;
        }
        let default =
            if Compact::default().method_for(n) == ScanMethod::SinglePass { "one pass" } else { "two passes" };
        t.row(vec![
            format!("2^{log2}"),
            ms(pyramid),
            ms(b),
            ms(c),
            format!("{:.2}", pyramid.as_secs_f64() / b.min(c).as_secs_f64()),
            default.into(),
        ]);
        bar.inc(1);
    }
    bar.finish_and_clear();
    t.note(format!("adapter: {}", gpu.adapter_name()));
    Ok(t)
}
