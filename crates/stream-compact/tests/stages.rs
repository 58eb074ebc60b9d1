//! CPU twins of the GPU stages: each pipeline, run with one stage at a time as its twin,
//! gives what the GPU pipeline gives; run with every stage as its twin, what the CPU path
//! gives. Exact throughout (the f32 inputs are small integers, whose sums are exact).

mod common;

use common::{describe, gpus};
use lumbre_compact::{
    COMPACT_TILE, Compact, Emit, HistoPyramid, Predicate, RadixSort, RadixSortPairs, SORT_TILE, Scan, ScanKind,
    ScanMethod, Select, SortMethod, Stream, record_sort_with,
};
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Compute, Gpu, Result};
use lumbre_shaders::Shader;
use lumbre_shaders::compact::{
    HPYRAMID, SCAN_F32_PLAIN, SCAN_U32_PLAIN, SORT_COUNTS, SORT_HIST, SORT_OFFSETS, SORT_SCATTER_PLAIN, SORT_SWEEP,
};
use proptest::prelude::*;

/// A stage: its shader (without the variant) and entry point.
type Stage = (&'static str, &'static str);

/// Every entry point of `shaders`, as the shader crate lists them.
fn stages_of(shaders: &[&'static Shader]) -> Vec<Stage> {
    let base = |s: &'static Shader| s.name.split(':').next().unwrap_or(s.name);
    shaders.iter().flat_map(|&s| s.entry_points.iter().map(move |&e| (base(s), e))).collect()
}

const SCAN: Stage = ("compact/scan_u32", "scan");
const COMPACT: Stage = ("compact/compact", "compact");
const COUNT: Stage = ("compact/compact", "count");
const COMPACT_FROM_PREFIXES: Stage = ("compact/compact", "compact_from_prefixes");

fn is(stage: Stage, shader: &str, entry: &str) -> bool {
    shader.split(':').next() == Some(stage.0) && entry == stage.1
}

/// Runs `pipeline` on `gpu` once with every stage on the GPU and once with each of `stages`
/// that it runs on the CPU instead, checking that every run returns `want` and that the
/// stage ran on the CPU (and no other). Returns the stages it replaced.
fn each_stage_on_the_cpu<T: PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    stages: &[Stage],
    what: &str,
    want: &T,
    pipeline: impl Fn(&mut Stages<'_>) -> Result<T>,
) -> Vec<Stage> {
    let run = |stage: Stage| {
        let mut r = Stages::staged(gpu, move |s, e| is(stage, s, e));
        let got = pipeline(&mut r).unwrap_or_else(|e| panic!("{} {what} {stage:?}: {e}", describe(gpu)));
        assert_eq!(&got, want, "{} {what}, {stage:?} on the CPU", describe(gpu));
        r
    };
    let on_gpu = run(("", ""));
    assert!(on_gpu.history().iter().all(|s| !s.on_cpu));
    // Short inputs skip some stages (a pyramid of one level has no reduction).
    let present: Vec<Stage> =
        stages.iter().copied().filter(|&st| on_gpu.history().iter().any(|s| is(st, s.shader, s.entry))).collect();
    for &stage in &present {
        let r = run(stage);
        let on_cpu: Vec<_> = r.history().iter().filter(|s| s.on_cpu).collect();
        assert!(!on_cpu.is_empty() && on_cpu.iter().all(|s| is(stage, s.shader, s.entry)), "{what}: {on_cpu:?}");
    }
    present
}

/// Asserts that every stage of `all` was replaced in some run.
fn all_replaced(all: &[Stage], replaced: &[Stage]) {
    for stage in all {
        assert!(replaced.contains(stage), "{stage:?} never ran on the CPU");
    }
}

fn scan_staged(r: &mut Stages<'_>, input: &[u32], kind: ScanKind, method: ScanMethod) -> Result<Vec<u32>> {
    let (src, dst) = (r.upload(input)?, r.zeroed(input.len())?);
    Scan::<u32>::with_method(kind, method).record_stages(r, src, dst)?;
    r.read(dst)
}

fn scan_f32_staged(r: &mut Stages<'_>, input: &[f32], method: ScanMethod) -> Result<Vec<f32>> {
    let (src, dst) = (r.upload(input)?, r.zeroed(input.len())?);
    Scan::<f32>::with_method(ScanKind::Inclusive, method).record_stages(r, src, dst)?;
    r.read(dst)
}

/// The stream's buffers as `Compact::upload` makes them: an empty array is one zero.
fn stream_bufs(r: &mut Stages<'_>, s: &Stream) -> Result<(Buf<u32>, Buf<u32>)> {
    let buf = |r: &mut Stages<'_>, v: &[u32]| if v.is_empty() { r.zeroed(1) } else { r.upload(v) };
    Ok((buf(r, &s.values)?, buf(r, &s.flags)?))
}

fn compact_staged(r: &mut Stages<'_>, c: &Compact, s: &Stream) -> Result<Vec<u32>> {
    let (values, flags) = stream_bufs(r, s)?;
    let (out, count) = c.record_stages(r, values, flags, s.len())?;
    let count = r.read(count)?[0] as usize;
    r.read_range(out, 0..count)
}

fn histo_pyramid_staged(r: &mut Stages<'_>, hp: &HistoPyramid, s: &Stream) -> Result<Vec<u32>> {
    let (values, flags) = stream_bufs(r, s)?;
    let (out, count) = hp.record_stages(r, values, flags, s.len())?;
    let count = r.read(count)?[0] as usize;
    r.read_range(out, 0..count)
}

fn sort_pairs_staged(
    r: &mut Stages<'_>,
    keys: &[u32],
    vals: &[u32],
    method: SortMethod,
) -> Result<(Vec<u32>, Vec<u32>)> {
    let (k, v) = (r.upload(keys)?, r.upload(vals)?);
    record_sort_with(r, k, Some(v), 32, method)?;
    Ok((r.read(k)?, r.read(v)?))
}

fn sort_u64_staged(r: &mut Stages<'_>, keys: &[u64], method: SortMethod) -> Result<Vec<u64>> {
    let k = r.upload(keys)?;
    record_sort_with(r, k, None, 64, method)?;
    r.read(k)
}

/// Both ways of sorting: one sweep per digit (where the keys fit) and several passes.
const SORTS: [SortMethod; 2] = [
    SortMethod::OneSweep(lumbre_compact::Lookback { spin_limit: 256, walk_to_tile_zero: false }),
    SortMethod::MultiPass,
];

/// Whether `method` can sort `n` keys of `bytes` each on `r`.
fn sortable(r: &Stages<'_>, method: SortMethod, n: usize, bytes: usize) -> bool {
    method == SortMethod::MultiPass || (n * bytes) as u64 <= r.max_binding()
}

fn words(n: usize, seed: u32) -> Vec<u32> {
    (0..n as u32).map(|i| (i ^ seed).wrapping_mul(0x9e37_79b9).rotate_left(7)).collect()
}

fn stream(n: usize) -> Stream {
    let values = words(n, 1);
    Stream { flags: values.iter().map(|v| (v >> 9) % 3).collect(), values }
}

/// Compactions of every kind: by flag to values, by predicate to indices and to values.
fn compactions(method: ScanMethod) -> [Compact; 3] {
    let c = |select, emit| Compact { select, emit, method, ..Default::default() };
    [
        c(Select::Flags, Emit::Values),
        c(Select::Where(Predicate::Lt(1 << 30)), Emit::Indices),
        c(Select::Where(Predicate::AnyBits(0x10)), Emit::Values),
    ]
}

const METHODS: [ScanMethod; 2] = [ScanMethod::SinglePass, ScanMethod::ReduceThenScan];

/// The stages of a scan by `shader` (`compact/scan_u32` or `compact/scan_f32`): all its
/// entry points in two passes, its `scan` in one.
fn scan_stages(shader: &'static Shader, method: ScanMethod) -> Vec<Stage> {
    let all = stages_of(&[shader]);
    match method {
        ScanMethod::ReduceThenScan => all,
        _ => all.into_iter().filter(|s| s.1 == "scan").collect(),
    }
}

fn compact_stages(method: ScanMethod) -> &'static [Stage] {
    match method {
        ScanMethod::ReduceThenScan => &[COUNT, SCAN, COMPACT_FROM_PREFIXES],
        _ => &[COMPACT],
    }
}

#[test]
fn scans_with_any_stage_on_the_cpu_equal_the_gpu_scan() {
    // On the 64 KiB context, 40 000 elements are three pieces (carries between them).
    let mut replaced = Vec::new();
    for gpu in gpus() {
        for n in [0, 1, 3 * 4096 + 17, 40_000] {
            let input = words(n, 3);
            for (kind, method) in
                [ScanKind::Exclusive, ScanKind::Inclusive].into_iter().flat_map(|k| METHODS.map(|m| (k, m)))
            {
                let want = Scan::<u32>::with_method(kind, method).gpu(&gpu, &input).unwrap();
                let what = format!("scan n={n} {kind:?} {method:?}");
                replaced.extend(each_stage_on_the_cpu(
                    &gpu,
                    &scan_stages(&SCAN_U32_PLAIN, method),
                    &what,
                    &want,
                    |r| scan_staged(r, &input, kind, method),
                ));
            }
            let small: Vec<f32> = input.iter().map(|&x| (x % 16) as f32).collect();
            for method in METHODS {
                let want = Scan::<f32>::with_method(ScanKind::Inclusive, method).gpu(&gpu, &small).unwrap();
                let stages = scan_stages(&SCAN_F32_PLAIN, method);
                replaced.extend(each_stage_on_the_cpu(
                    &gpu,
                    &stages,
                    &format!("f32 scan n={n} {method:?}"),
                    &want,
                    |r| scan_f32_staged(r, &small, method),
                ));
            }
        }
    }
    for shader in [&SCAN_U32_PLAIN, &SCAN_F32_PLAIN] {
        all_replaced(&scan_stages(shader, ScanMethod::ReduceThenScan), &replaced);
    }
}

#[test]
fn compactions_with_any_stage_on_the_cpu_equal_the_gpu_compaction() {
    // On the 64 KiB context, 40 000 elements are three pieces, each placed by the count so far.
    let mut replaced = Vec::new();
    for gpu in gpus() {
        for n in [0, 1, COMPACT_TILE + 5, 40_000] {
            let s = stream(n);
            for method in METHODS {
                for c in compactions(method) {
                    let want = c.gpu(&gpu, &s).unwrap();
                    let what = format!("compaction n={n} {:?} {:?} {method:?}", c.select, c.emit);
                    replaced.extend(each_stage_on_the_cpu(&gpu, compact_stages(method), &what, &want, |r| {
                        compact_staged(r, &c, &s)
                    }));
                }
            }
        }
    }
    all_replaced(&[METHODS[0], METHODS[1]].map(compact_stages).concat(), &replaced);
}

#[test]
fn sorts_with_any_stage_on_the_cpu_equal_the_gpu_sort() {
    // The sorts' own kernels, and the scan of the multi-pass sort's digit counts.
    let stages =
        [stages_of(&[&SORT_HIST, &SORT_OFFSETS, &SORT_SCATTER_PLAIN, &SORT_COUNTS, &SORT_SWEEP]), vec![SCAN]].concat();
    let mut replaced = Vec::new();
    for gpu in gpus() {
        // 33 tiles make two chunks of tiles; on the 64 KiB context, 40 000 keys are three pieces
        // (and 40 000 u64 keys five), each scattered once per output window.
        for n in [2, 33 * SORT_TILE, 40_000] {
            for method in SORTS {
                let r = Stages::staged(&gpu, |_, _| false);
                if !sortable(&r, method, n, 8) || (method != SortMethod::MultiPass && !gpu.has_subgroups()) {
                    continue;
                }
                let keys = words(n, 5);
                let vals: Vec<u32> = (0..n as u32).collect();
                let want = RadixSortPairs::<u32>::new().cpu(&(keys.clone(), vals.clone())).unwrap();
                let what = format!("u32 pairs n={n} {method:?}");
                replaced.extend(each_stage_on_the_cpu(&gpu, &stages, &what, &want, |r| {
                    sort_pairs_staged(r, &keys, &vals, method)
                }));
                if n != 33 * SORT_TILE {
                    let wide: Vec<u64> =
                        keys.iter().zip(words(n, 9)).map(|(&a, b)| (a as u64) << 32 | b as u64).collect();
                    let want = RadixSort::<u64>::new().cpu(&wide).unwrap();
                    replaced.extend(each_stage_on_the_cpu(
                        &gpu,
                        &stages,
                        &format!("u64 n={n} {method:?}"),
                        &want,
                        |r| sort_u64_staged(r, &wide, method),
                    ));
                }
            }
        }
    }
    all_replaced(&stages, &replaced);
}

#[test]
fn histogram_pyramids_with_any_stage_on_the_cpu_equal_the_gpu_pyramid() {
    let Some(gpu) = gpus().into_iter().next() else { return };
    let stages = stages_of(&[&HPYRAMID]);
    let mut replaced = Vec::new();
    for n in [1, 1000, 70_000] {
        let s = stream(n);
        for (select, emit) in [(Select::Flags, Emit::Values), (Select::Where(Predicate::NonZero), Emit::Indices)] {
            let hp = HistoPyramid { select, emit, index_base: 3 };
            let want = hp.gpu(&gpu, &s).unwrap();
            let what = format!("pyramid n={n} {select:?} {emit:?}");
            replaced.extend(each_stage_on_the_cpu(&gpu, &stages, &what, &want, |r| histo_pyramid_staged(r, &hp, &s)));
        }
    }
    all_replaced(&stages, &replaced);
}

/// CPU runs: one piece, and pieces as on a device with 64 KiB bindings.
fn cpu_runners() -> [Stages<'static>; 2] {
    [Stages::cpu(), Stages::cpu_with_binding_limit(64 << 10)]
}

#[test]
fn every_stage_on_the_cpu_equals_the_cpu_path() {
    for n in [0, 1, 4097, 40_000] {
        let input = words(n, 11);
        let s = stream(n);
        let small: Vec<f32> = input.iter().map(|&x| (x % 16) as f32).collect();
        for mut r in cpu_runners() {
            for method in METHODS {
                for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                    let want = Scan::<u32>::new(kind).cpu(&input).unwrap();
                    assert_eq!(scan_staged(&mut r, &input, kind, method).unwrap(), want, "n={n} {kind:?} {method:?}");
                }
                let want = Scan::<f32>::new(ScanKind::Inclusive).cpu(&small).unwrap();
                assert_eq!(scan_f32_staged(&mut r, &small, method).unwrap(), want, "f32 n={n} {method:?}");
                for c in compactions(method) {
                    assert_eq!(compact_staged(&mut r, &c, &s).unwrap(), c.cpu(&s).unwrap(), "n={n} {c:?}");
                }
            }
            // The pyramid takes inputs of one binding (longer ones are cut up on the host).
            let hp = HistoPyramid { select: Select::Flags, emit: Emit::Indices, index_base: 0 };
            if 4 * n as u64 <= r.max_binding() {
                assert_eq!(histo_pyramid_staged(&mut r, &hp, &s).unwrap(), hp.cpu(&s).unwrap(), "n={n}");
            }
            let vals: Vec<u32> = (0..n as u32).rev().collect();
            let want = RadixSortPairs::<u32>::new().cpu(&(input.clone(), vals.clone())).unwrap();
            let wide: Vec<u64> = input.iter().map(|&k| (k as u64) << 29 ^ k as u64).collect();
            let methods: Vec<_> = SORTS.into_iter().filter(|&m| sortable(&r, m, n, 8)).collect();
            for method in methods {
                assert_eq!(sort_pairs_staged(&mut r, &input, &vals, method).unwrap(), want, "n={n} {method:?}");
                let want = RadixSort::<u64>::new().cpu(&wide).unwrap();
                assert_eq!(sort_u64_staged(&mut r, &wide, method).unwrap(), want, "n={n} {method:?}");
            }
            assert!(r.history().iter().all(|s| s.on_cpu));
        }
    }
}

#[test]
fn a_stage_bound_to_the_wrong_buffers_is_an_error() {
    let mut r = Stages::cpu();
    let keys = r.upload(&[1u32, 2]).unwrap();
    let shader = lumbre_shaders::compact::SORT_HIST;
    let hist_tiles = r.stage(&shader, "hist_tiles").unwrap();
    let p = r.uniform(&[0u32; 9]).unwrap();
    let err = r.dispatch("sort histogram", &hist_tiles, &p, &[keys.all()], 1, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("hist_tiles"), "{err}");
    let err = r.stage(&shader, "no_such_entry").unwrap_err();
    assert!(err.to_string().contains("no_such_entry"), "{err}");
    // A twin that grows a binding is refused rather than silently truncated.
    let hist = r.zeroed::<u32>(256).unwrap();
    let err = r.dispatch("sort histogram", &hist_tiles, &p, &[keys.all(), hist.all()], 1, |_, b| b[1].push(0));
    assert!(err.is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Generated inputs through the chain of twins, against the CPU paths.
    #[test]
    fn generated_inputs_through_the_twins_equal_the_cpu_paths(
        keys in prop_oneof![
            proptest::collection::vec(any::<u32>(), 0..12_000),
            proptest::collection::vec(0u32..4, 0..12_000),
        ],
        method in prop_oneof![Just(ScanMethod::SinglePass), Just(ScanMethod::ReduceThenScan)],
    ) {
        let mut r = Stages::cpu_with_binding_limit(64 << 10);
        let vals: Vec<u32> = (0..keys.len() as u32).collect();
        let want = RadixSortPairs::<u32>::new().cpu(&(keys.clone(), vals.clone())).unwrap();
        let sorts: Vec<_> = SORTS.into_iter().filter(|&m| sortable(&r, m, keys.len(), 4)).collect();
        for sort in sorts {
            prop_assert_eq!(sort_pairs_staged(&mut r, &keys, &vals, sort).unwrap(), want.clone());
        }
        let s = Stream { flags: keys.iter().map(|k| k & 1).collect(), values: keys.clone() };
        for c in compactions(method) {
            prop_assert_eq!(compact_staged(&mut r, &c, &s).unwrap(), c.cpu(&s).unwrap());
        }
        let want = Scan::<u32>::new(ScanKind::Exclusive).cpu(&keys).unwrap();
        prop_assert_eq!(scan_staged(&mut r, &keys, ScanKind::Exclusive, method).unwrap(), want);
    }
}
