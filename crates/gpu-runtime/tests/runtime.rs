//! GPU runtime tests. They run on whatever adapter `Gpu::new` picks (lavapipe in CI) and
//! fail instead of skipping when `LUMBRE_REQUIRE_GPU=1` and there is none.

use lumbre_gpu::testing::{test_gpu, try_test_gpu};
use lumbre_gpu::{
    Buffer, Compute, CopyKernel, Error, Gpu, GpuOptions, Mismatch, Progress, Recorder, Report, Result, Tolerance,
    conformance, iota_cpu, record_iota,
};
use proptest::prelude::*;

const NO_FEATURES: wgpu::Features = wgpu::Features::empty();

fn vec4s(n: usize) -> Vec<[u32; 4]> {
    (0..n as u32).map(|i| [i, i.wrapping_mul(2654435761), !i, i ^ 0xdead_beef]).collect()
}

#[test]
fn buffer_round_trips_at_awkward_sizes() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    for n in [0usize, 1, 3, 255, 256, 257, 1000, 4096, 65_537] {
        let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let buf = gpu.upload(&data).unwrap();
        assert_eq!(buf.len(), n);
        assert_eq!(gpu.download(&buf).unwrap(), data, "u32 round trip of {n}");
        let zero = gpu.zeroed::<u32>(n).unwrap();
        assert_eq!(gpu.download(&zero).unwrap(), vec![0; n]);
    }
    // Sizes that are not multiples of 4 bytes, and partial reads and writes.
    for n in [1usize, 3, 5, 4097] {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 7 + 1) as u8).collect();
        let buf = gpu.upload(&bytes).unwrap();
        assert_eq!(gpu.download(&buf).unwrap(), bytes);
        if n > 2 {
            gpu.write(&buf, 1, &[0xAA]).unwrap();
            assert_eq!(gpu.download_range(&buf, 0..3).unwrap(), vec![bytes[0], 0xAA, bytes[2]]);
        }
    }
}

#[test]
fn writes_and_reads_out_of_range_are_errors() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let buf = gpu.zeroed::<u32>(4).unwrap();
    assert!(matches!(gpu.write(&buf, 3, &[1, 2]), Err(Error::Input(_))));
    assert!(matches!(gpu.download_range(&buf, 2..5), Err(Error::Input(_))));
}

#[test]
fn copy_kernel_agrees_with_its_cpu_twin() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    for n in [0usize, 1, 3, 255, 256, 257, 4096, 10_001] {
        let out = conformance(&CopyKernel, &gpu, &vec4s(n), Tolerance::EXACT).unwrap();
        assert_eq!(out, vec4s(n));
    }
}

#[test]
fn dispatch_folds_into_2d_beyond_65535_workgroups() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let max = gpu.limits().max_compute_workgroups_per_dimension as usize;
    // iota runs 64 threads per workgroup: this needs max + 2 workgroups.
    let n = max * 64 + 100;
    let (x, y, _) = gpu.grid(n.div_ceil(64) as u64).unwrap();
    assert!(y > 1, "the test must exercise folding");
    assert!(x as usize * y as usize * 64 >= n);
    let buf = gpu.zeroed::<u32>(n).unwrap();
    let mut rec = gpu.recorder();
    record_iota(&mut rec, &buf, 5).unwrap();
    rec.submit().unwrap();
    let mut want = vec![0; n];
    iota_cpu(&mut want, 5);
    assert_eq!(gpu.download(&buf).unwrap(), want);
}

#[test]
fn requests_over_the_binding_limit_fail_before_gpu_work() {
    let opts = GpuOptions { max_binding_size: Some(4096), ..GpuOptions::from_env() };
    let Some(gpu) = try_test_gpu(&opts, NO_FEATURES, lumbre_gpu::testing::gpu_required()).unwrap() else { return };
    assert_eq!(gpu.limits().max_storage_buffer_binding_size, 4096);
    let err = gpu.zeroed::<u32>(1025).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded { limit: "max_storage_buffer_binding_size", requested: 4100, max: 4096, .. }
        ),
        "{err}"
    );
    assert!(gpu.upload(&[0u32; 1025]).is_err());
    assert!(gpu.zeroed::<u32>(1024).is_ok());
    let huge = gpu.limits().max_buffer_size / 4 + 1;
    assert!(matches!(
        gpu.zeroed_fit::<u32>(huge as usize, lumbre_gpu::Fit::Pieces),
        Err(Error::LimitExceeded { limit: "max_buffer_size", .. })
    ));
    assert_eq!(gpu.compiled_pipelines(), 0, "no kernel was compiled");
    // Data bound in pieces still works: the copy kernel splits by the binding limit.
    let out = conformance(&CopyKernel, &gpu, &vec4s(1000), Tolerance::EXACT).unwrap();
    assert_eq!(out.len(), 1000);
}

#[test]
fn pipeline_cache_compiles_once_per_context() {
    let Some(_) = test_gpu(NO_FEATURES) else { return };
    let gpu = Gpu::new().unwrap(); // a fresh context, so the count starts at zero
    assert_eq!(gpu.compiled_pipelines(), 0);
    let data = vec4s(300);
    for _ in 0..3 {
        assert_eq!(CopyKernel.gpu(&gpu, &data).unwrap(), data);
    }
    gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main").unwrap();
    assert_eq!(gpu.compiled_pipelines(), 1);
    gpu.kernel(&lumbre_shaders::runtime::IOTA, "main").unwrap();
    assert_eq!(gpu.compiled_pipelines(), 2);
    let other = Gpu::new().unwrap();
    other.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main").unwrap();
    assert_eq!(other.compiled_pipelines(), 1, "the cache is per context");
}

/// A deliberately wrong algorithm: its CPU path adds one, its GPU path only copies.
struct OffByOne;

impl Compute for OffByOne {
    type Input = [[u32; 4]];
    type Output = Vec<[u32; 4]>;
    type GpuInput = Buffer<[u32; 4]>;
    type GpuOutput = Buffer<[u32; 4]>;
    fn name(&self) -> &'static str {
        "off-by-one"
    }
    fn cpu_reported(&self, input: &[[u32; 4]], _: &dyn Progress) -> Result<(Vec<[u32; 4]>, Report)> {
        Report::timed(self.name(), || Ok(input.iter().map(|v| [v[0] + 1, v[1], v[2], v[3]]).collect()))
    }
    fn upload(&self, gpu: &Gpu, input: &[[u32; 4]]) -> Result<Buffer<[u32; 4]>> {
        CopyKernel.upload(gpu, input)
    }
    fn record(&self, rec: &mut Recorder, input: &Buffer<[u32; 4]>) -> Result<Buffer<[u32; 4]>> {
        CopyKernel.record(rec, input)
    }
    fn download(&self, gpu: &Gpu, out: &Buffer<[u32; 4]>) -> Result<Vec<[u32; 4]>> {
        gpu.download(out)
    }
}

#[test]
fn conformance_fails_on_a_wrong_path() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let err = conformance(&OffByOne, &gpu, &vec4s(100), Tolerance::EXACT).unwrap_err();
    match err {
        Mismatch::Differ { algorithm, detail } => {
            assert_eq!(algorithm, "off-by-one");
            assert!(detail.starts_with("100 of 100 values differ"), "{detail}");
        }
        other => panic!("expected a difference, got {other}"),
    }
    // Empty input: both paths agree trivially, and must not fail.
    assert!(conformance(&OffByOne, &gpu, &[], Tolerance::EXACT).is_ok());
}

#[test]
fn validation_errors_come_back_as_err() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let gpu =
        Gpu::with_options(&GpuOptions { adapter: Some(gpu.adapter_choice().to_string()), ..GpuOptions::default() })
            .unwrap();
    let copy = gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main").unwrap();
    let src = gpu.upload(&vec4s(4)).unwrap();
    let mut rec = gpu.recorder();
    // The copy kernel has two bindings; giving one is a validation error, not a panic.
    rec.dispatch("broken", &copy, &[src.binding()], 1).unwrap();
    assert!(matches!(rec.submit(), Err(Error::Validation(_))));
    // The context stays usable afterwards.
    assert_eq!(CopyKernel.gpu(&gpu, &vec4s(4)).unwrap(), vec4s(4));
}

#[test]
fn a_destroyed_device_is_an_error_not_a_panic() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let gpu =
        Gpu::with_options(&GpuOptions { adapter: Some(gpu.adapter_choice().to_string()), ..GpuOptions::default() })
            .unwrap();
    gpu.device().destroy();
    let _ = gpu.wait();
    assert!(CopyKernel.gpu(&gpu, &vec4s(16)).is_err());
}

#[test]
fn missing_adapter_fails_when_a_gpu_is_required() {
    let nothing = GpuOptions { adapter: Some("no adapter is called this".into()), ..GpuOptions::default() };
    let err = try_test_gpu(&nothing, NO_FEATURES, true).unwrap_err();
    assert!(err.contains("LUMBRE_REQUIRE_GPU=1"), "{err}");
    assert!(err.contains("no adapter name contains"), "{err}");
    assert!(try_test_gpu(&nothing, NO_FEATURES, false).unwrap().is_none());
    match Gpu::with_options(&nothing) {
        Err(Error::AdapterNotFound { filter, .. }) => assert_eq!(filter, "no adapter is called this"),
        Err(Error::NoAdapter { .. }) => {}
        other => panic!("expected an adapter error, got {other:?}"),
    }
}

#[test]
fn an_adapter_index_opens_that_adapter_and_one_past_the_end_lists_them() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let present = lumbre_gpu::adapters();
    let index = gpu.adapter_index().expect("a context of Gpu::new knows its index");
    assert_eq!(present[index].name, gpu.adapter_name());
    for written in ["0", "#0"] {
        let first = Gpu::with_options(&GpuOptions { adapter: Some(written.into()), ..GpuOptions::default() }).unwrap();
        assert_eq!(first.adapter_index(), Some(0), "{written}");
        assert_eq!(first.adapter_name(), present[0].name, "{written}");
    }
    let past = present.len().max(5);
    let asked = GpuOptions { adapter: Some(format!("#{past}")), ..GpuOptions::default() };
    let err = Gpu::with_options(&asked).unwrap_err();
    let names: Vec<String> = present.iter().map(|a| a.name.clone()).collect();
    assert_eq!(err, Error::AdapterIndexOutOfRange { index: past, available: names });
    let text = err.to_string();
    assert!(
        text.contains(&format!("no adapter #{past}")) && text.contains(&format!("#0 {}", present[0].name)),
        "{text}"
    );
}

#[test]
fn timings_report_every_pass() {
    let Some(gpu) = test_gpu(NO_FEATURES) else { return };
    let src = gpu.upload(&vec4s(1024)).unwrap();
    let dst = gpu.zeroed::<[u32; 4]>(1024).unwrap();
    let mut rec = gpu.recorder();
    CopyKernel::record_into(&mut rec, &src, &dst).unwrap();
    CopyKernel::record_into(&mut rec, &dst, &src).unwrap();
    let t = rec.submit().unwrap();
    if t.source == lumbre_gpu::TimingSource::Timestamps {
        assert_eq!(t.passes.len(), 2);
        assert_eq!(t.by_label().len(), 1);
    }
    assert!(t.wall > std::time::Duration::ZERO);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn copy_conforms_for_generated_inputs(data in proptest::collection::vec(any::<[u32; 4]>(), 0..3000)) {
        let Some(gpu) = test_gpu(NO_FEATURES) else { return Ok(()) };
        let out = conformance(&CopyKernel, &gpu, &data, Tolerance::EXACT).unwrap();
        prop_assert_eq!(out, data);
    }
}
