//! Contexts for the GPU tests: the default one, one without subgroups (the shared-memory
//! fallback paths), and one with a tiny binding limit (the multi-piece paths).

use std::sync::OnceLock;

use lumbre_gpu::testing::{gpu_required, test_gpu, try_test_gpu};
use lumbre_gpu::wgpu::Features;
use lumbre_gpu::{Gpu, GpuOptions};

/// Every context a primitive must agree on: default, no subgroups, 64 KiB bindings.
pub fn gpus() -> Vec<Gpu> {
    static ALL: OnceLock<Vec<Gpu>> = OnceLock::new();
    ALL.get_or_init(|| {
        let Some(gpu) = test_gpu(Features::empty()) else { return Vec::new() };
        let base = GpuOptions { adapter: Some(gpu.adapter_choice().to_string()), ..GpuOptions::from_env() };
        let plain = GpuOptions { disable_features: Features::SUBGROUP | Features::SUBGROUP_BARRIER, ..base.clone() };
        let small = GpuOptions { max_binding_size: Some(64 << 10), ..base };
        let mut all = vec![gpu];
        for opts in [plain, small] {
            if let Some(g) = try_test_gpu(&opts, Features::empty(), gpu_required()).unwrap_or_else(|e| panic!("{e}")) {
                all.push(g);
            }
        }
        all
    })
    .clone()
}

/// A short description of a context for assertion messages.
pub fn describe(gpu: &Gpu) -> String {
    format!(
        "{} (subgroups: {}, binding limit: {})",
        gpu.adapter_name(),
        gpu.has_subgroups(),
        gpu.limits().max_storage_buffer_binding_size
    )
}
