//! Pipelines written once on `stages::Stages`: recorded for the GPU, run stage by stage with
//! any stage as its CPU twin, or all on the CPU, they compute the same.

use lumbre_gpu::shaders::runtime::{COPY_VARIANTS, IOTA};
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::testing::{own_gpu, test_gpu};
use lumbre_gpu::{Result, TimingSource, Traffic, iota_cpu, record_iota};

const NO_FEATURES: wgpu::Features = wgpu::Features::empty();

/// `dst[i] = start + i`.
fn iota(s: &mut Stages<'_>, dst: Buf<u32>, start: u32) -> Result<()> {
    let stage = s.stage(&IOTA, "main")?;
    let p = s.uniform(&[dst.len() as u32, start])?;
    s.dispatch("iota", &stage, &p, &[dst.all()], dst.len().div_ceil(64) as u64, |p, b| iota_cpu(&mut b[0], p[1]))
}

/// Copies `src[from..from + n]` to `dst[to..to + n]` by binding those ranges.
fn copy_range(s: &mut Stages<'_>, src: Buf<u32>, from: usize, dst: Buf<u32>, to: usize, n: usize) -> Result<()> {
    let stage = s.stage(&COPY_VARIANTS, "uniform_n")?;
    let p = s.uniform(&(n as u32))?;
    let binds = [src.range(from..from + n), dst.range(to..to + n)];
    s.dispatch("copy", &stage, &p, &binds, n.div_ceil(256) as u64, |p, b| {
        let [src, dst] = b else { unreachable!() };
        dst[..*p as usize].copy_from_slice(&src[..*p as usize]);
    })
}

/// A small pipeline: an iota, two copies of parts of it, a clear and a buffer copy.
/// Returns the buffers to read.
fn pipeline(s: &mut Stages<'_>, n: usize) -> Result<[Buf<u32>; 2]> {
    let (a, b) = (s.zeroed::<u32>(n)?, s.zeroed::<u32>(n)?);
    iota(s, a, 100)?;
    // 256 words keep the second range's start aligned on every device.
    copy_range(s, a, 0, b, 256, n - 256)?;
    copy_range(s, b, 256, a, 0, 256)?;
    let c = s.zeroed::<u32>(4)?;
    s.copy(a, 1, c, 0, 4)?;
    s.clear(b);
    Ok([a, c])
}

fn want(n: usize) -> [Vec<u32>; 2] {
    let mut a: Vec<u32> = (100..100 + n as u32).collect();
    a[..256].copy_from_slice(&(100..356).collect::<Vec<_>>());
    [a.clone(), a[1..5].to_vec()]
}

#[test]
fn every_stage_on_the_cpu_computes_the_pipeline() {
    let mut s = Stages::cpu();
    let [a, c] = pipeline(&mut s, 1000).unwrap();
    assert_eq!([s.read(a).unwrap(), s.read(c).unwrap()], want(1000));
    let entries: Vec<_> = s.history().iter().map(|r| (r.shader, r.entry, r.on_cpu)).collect();
    assert_eq!(
        entries,
        [
            ("runtime/iota", "main", true),
            ("runtime/copy_variants", "uniform_n", true),
            ("runtime/copy_variants", "uniform_n", true)
        ]
    );
}

#[test]
fn recorded_and_staged_runs_equal_the_cpu_run() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let n = 70_000;
    let mut rec = gpu.recorder();
    let mut s = Stages::record(&mut rec);
    let [a, c] = pipeline(&mut s, n).unwrap();
    assert!(s.history().is_empty());
    let (a, c) = (s.buffer(a).unwrap(), s.buffer(c).unwrap());
    rec.submit().unwrap();
    assert_eq!([gpu.download(&a).unwrap(), gpu.download(&c).unwrap()], want(n));
    for on_cpu in [None, Some("runtime/iota"), Some("runtime/copy_variants")] {
        let mut s = Stages::staged(&gpu, move |shader, _| Some(shader) == on_cpu);
        let [a, c] = pipeline(&mut s, n).unwrap();
        assert_eq!([s.read(a).unwrap(), s.read(c).unwrap()], want(n), "{on_cpu:?} on the CPU");
        for run in s.history() {
            assert_eq!(run.on_cpu, Some(run.shader) == on_cpu, "{run:?}");
        }
    }
}

#[test]
fn staged_buffers_move_only_when_the_other_side_binds_them() {
    let Some(gpu) = own_gpu(NO_FEATURES) else { return };
    let n = 4096;
    let bytes = 4 * n as u64;
    // Both stages on the GPU: each buffer goes up once (its zeros) with each stage's
    // uniform (16 bytes), and nothing comes back.
    let mut s = Stages::staged(&gpu, |_, _| false);
    let (a, b) = (s.zeroed::<u32>(n).unwrap(), s.zeroed::<u32>(n).unwrap());
    let before = gpu.transfers();
    iota(&mut s, a, 0).unwrap();
    copy_range(&mut s, a, 0, b, 0, n).unwrap();
    let moved = gpu.transfers() - before;
    assert_eq!((moved.uploads, moved.downloads), (Traffic { calls: 4, bytes: 2 * bytes + 32 }, Traffic::default()));
    // The copy on the CPU: what the GPU's iota wrote comes back once; nothing goes up again.
    let mut s = Stages::staged(&gpu, |shader, _| shader == "runtime/copy_variants");
    let (a, b) = (s.zeroed::<u32>(n).unwrap(), s.zeroed::<u32>(n).unwrap());
    let before = gpu.transfers();
    iota(&mut s, a, 0).unwrap();
    copy_range(&mut s, a, 0, b, 0, n).unwrap();
    assert_eq!(s.read(b).unwrap(), (0..n as u32).collect::<Vec<_>>());
    let moved = gpu.transfers() - before;
    assert_eq!(
        (moved.uploads, moved.downloads),
        (Traffic { calls: 2, bytes: bytes + 16 }, Traffic { calls: 1, bytes })
    );
}

#[test]
fn reading_on_the_gpu_path_submits_and_recording_goes_on() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let mut rec = gpu.recorder();
    let mut s = Stages::record(&mut rec);
    let a = s.zeroed::<u32>(300).unwrap();
    iota(&mut s, a, 1).unwrap();
    assert_eq!(s.read_range(a, 299..300).unwrap(), vec![300]);
    let b = s.zeroed::<u32>(300).unwrap();
    copy_range(&mut s, a, 0, b, 0, 300).unwrap();
    let b = s.buffer(b).unwrap();
    let timings = rec.submit().unwrap();
    assert_eq!(gpu.download(&b).unwrap(), (1..301).collect::<Vec<u32>>());
    if timings.source == TimingSource::Timestamps {
        let labels: Vec<&str> = timings.passes.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(labels, ["iota", "copy"], "both submissions' passes");
    }
}

#[test]
fn recorded_stages_run_on_either_side() {
    let order = |s: &mut Stages<'_>, n: usize| -> Result<Vec<u32>> {
        let from = s.upload(&[3u32])?;
        let b = s.recorded(
            ("runtime/iota", "main"),
            &[from.all()],
            |rec, inputs| {
                assert_eq!(inputs[0].len(), 1);
                let out = rec.gpu().zeroed::<u32>(n)?;
                record_iota(rec, &out, 3)?;
                Ok(out)
            },
            |inputs| {
                let mut out = vec![0; n];
                iota_cpu(&mut out, inputs[0][0]);
                Ok(out)
            },
        )?;
        s.read(b)
    };
    let want: Vec<u32> = (3..13).collect();
    assert_eq!(order(&mut Stages::cpu(), 10).unwrap(), want);
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    assert_eq!(order(&mut Stages::staged(&gpu, |_, _| false), 10).unwrap(), want);
    let mut rec = gpu.recorder();
    assert_eq!(order(&mut Stages::record(&mut rec), 10).unwrap(), want);
    // A recorded stage takes whole buffers.
    let mut s = Stages::cpu();
    let from = s.zeroed::<u32>(4).unwrap();
    let part = s.recorded(("x", "y"), &[from.range(1..4)], |_, _| unreachable!(), |_| Ok(vec![0u32]));
    assert!(part.is_err());
}

#[test]
fn stages_check_what_they_are_given() {
    let mut s = Stages::cpu();
    let a = s.zeroed::<u32>(4).unwrap();
    let stage = s.stage(&IOTA, "main").unwrap();
    let p = s.uniform(&[4u32, 0]).unwrap();
    // iota binds its uniform and one buffer.
    let err = s.dispatch("iota", &stage, &p, &[a.all(), a.all()], 1, |_, _| {}).unwrap_err();
    assert!(err.to_string().contains("runtime/iota:main"), "{err}");
    let err = s.stage(&IOTA, "no_such_entry").unwrap_err();
    assert!(err.to_string().contains("no_such_entry"), "{err}");
    // A twin that grows a binding is refused rather than silently truncated.
    assert!(s.dispatch("iota", &stage, &p, &[a.all()], 1, |_, b| b[0].push(0)).is_err());
    // Another Stages' buffer.
    let mut other = Stages::cpu();
    let _ = other.zeroed::<u32>(1).unwrap();
    let foreign = other.zeroed::<u32>(1).unwrap();
    assert!(s.dispatch("iota", &stage, &p, &[foreign.all()], 1, |_, _| {}).is_err());
    // Values that are not whole words, and casts that do not divide.
    assert!(s.zeroed::<u16>(2).is_err());
    assert!(s.zeroed::<[u32; 3]>(1).unwrap().cast::<u64>().is_err());
    // Without a GPU there are no GPU buffers.
    assert!(s.buffer(a).is_err());
}

#[test]
fn stages_without_a_gpu_cut_pieces_as_a_small_device_would() {
    let s = Stages::cpu_with_binding_limit(64 << 10);
    assert_eq!((s.max_binding(), s.binding_alignment()), (64 << 10, 256));
    assert_eq!(s.piece_len(4, 4096), 16384);
    assert_eq!(s.piece_len(12, 256), 5376); // whole workgroups, 256-byte aligned starts
    assert!(s.check_size("histograms", (64 << 10) + 1, lumbre_gpu::Fit::Binding).is_err());
    assert!(!s.has_subgroups() && s.gpu().is_none());
}
