//! The on-disk pipeline cache: written when a context that compiled pipelines goes away,
//! read by the next context on the same adapter, and any trouble with the file (damage,
//! a folder that cannot be written) a warning that leaves the run without a cache.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use lumbre_gpu::testing::{TempDir, gpu_required, try_test_gpu};
use lumbre_gpu::{CopyKernel, Gpu, GpuOptions, PipelineCacheState};

/// The tests take turns: run at once on NVIDIA's driver (contexts loading and saving caches
/// while another test destroys its device), the process crashed or hung.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// A context with its pipeline cache in `dir`, or `None` to skip (no GPU, not required).
fn gpu_with_cache(dir: &std::path::Path) -> Option<Gpu> {
    let opts = GpuOptions { pipeline_cache: Some(dir.to_path_buf()), ..GpuOptions::from_env() };
    try_test_gpu(&opts, wgpu::Features::empty(), gpu_required()).unwrap()
}

/// The cache file a context uses, if its adapter keeps a cache (Vulkan).
fn cache_file(gpu: &Gpu) -> Option<PathBuf> {
    match gpu.pipeline_cache_state() {
        PipelineCacheState::On { file, .. } => Some(file.clone()),
        PipelineCacheState::Unsupported { reason } => {
            assert!(gpu.adapter().backend != wgpu::Backend::Vulkan, "Vulkan keeps caches, yet: {reason}");
            None
        }
        PipelineCacheState::Off => panic!("a folder was given, the cache must not be off"),
    }
}

fn loaded(gpu: &Gpu) -> u64 {
    match gpu.pipeline_cache_state() {
        PipelineCacheState::On { loaded, .. } => *loaded,
        other => panic!("expected a cache, got {other}"),
    }
}

fn compile_some(gpu: &Gpu) {
    gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main").unwrap();
    gpu.kernel(&lumbre_shaders::runtime::IOTA, "main").unwrap();
    let data = vec![[5u32; 4]; 300];
    assert_eq!(lumbre_gpu::Compute::gpu(&CopyKernel, gpu, &data).unwrap(), data);
}

#[test]
fn a_second_context_starts_from_the_first_ones_pipelines() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("cache-warm");
    let Some(gpu) = gpu_with_cache(dir.path()) else { return };
    let Some(file) = cache_file(&gpu) else { return };
    assert!(file.starts_with(dir.path()), "{} outside {}", file.display(), dir.path().display());
    assert_eq!(loaded(&gpu), 0, "a cold start");
    assert!(!file.exists());
    compile_some(&gpu);
    drop(gpu);
    let written = std::fs::metadata(&file).expect("the last clone's drop writes the file").len();
    assert!(written > 0);
    // No temporary file is left behind.
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let Some(warm) = gpu_with_cache(dir.path()) else { return };
    assert_eq!(cache_file(&warm).as_ref(), Some(&file));
    assert!(loaded(&warm) > 0 && loaded(&warm) < written, "the payload of the {written}-byte file");
    compile_some(&warm);
    // Nothing new to save once saved.
    warm.save_pipeline_cache().unwrap();
    assert!(!warm.save_pipeline_cache().unwrap());
}

#[test]
fn a_damaged_file_is_a_warning_and_a_cold_start() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("cache-damaged");
    let Some(gpu) = gpu_with_cache(dir.path()) else { return };
    let Some(file) = cache_file(&gpu) else { return };
    compile_some(&gpu);
    assert!(gpu.save_pipeline_cache().unwrap());
    drop(gpu);
    let good = std::fs::read(&file).unwrap();
    let mut damaged = good.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x5a;
    for bad in [damaged, good[..good.len() / 3].to_vec(), b"not a cache at all".to_vec(), Vec::new()] {
        std::fs::write(&file, &bad).unwrap();
        let Some(gpu) = gpu_with_cache(dir.path()) else { return };
        assert_eq!(loaded(&gpu), 0, "a damaged file of {} bytes must not be used", bad.len());
        compile_some(&gpu);
        drop(gpu);
        // The run wrote a good file over the damaged one.
        let Some(again) = gpu_with_cache(dir.path()) else { return };
        assert!(loaded(&again) > 0);
    }
}

#[test]
fn a_folder_that_cannot_be_written_leaves_the_run_working() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("cache-unwritable");
    // A file where the folder should be: the cache cannot be read from or written to it.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let Some(gpu) = gpu_with_cache(&blocker) else { return };
    if cache_file(&gpu).is_none() {
        return;
    }
    compile_some(&gpu);
    let err = gpu.save_pipeline_cache().unwrap_err();
    assert!(err.to_string().contains("pipeline cache"), "{err}");
    compile_some(&gpu);
    drop(gpu); // a warning, not a panic
}

#[test]
fn no_folder_means_no_cache() {
    let _turn = one_at_a_time();
    let opts = GpuOptions { pipeline_cache: None, ..GpuOptions::from_env() };
    let Some(gpu) = try_test_gpu(&opts, wgpu::Features::empty(), gpu_required()).unwrap() else { return };
    assert_eq!(gpu.pipeline_cache_state(), &PipelineCacheState::Off);
    compile_some(&gpu);
    assert!(!gpu.save_pipeline_cache().unwrap());
}

#[test]
fn a_lost_device_with_a_cache_drops_quietly() {
    let _turn = one_at_a_time();
    let dir = TempDir::new("cache-lost");
    let Some(gpu) = gpu_with_cache(dir.path()) else { return };
    compile_some(&gpu);
    gpu.device().destroy();
    let _ = gpu.wait();
    drop(gpu);
}
