//! The Morton light tree on the GPU: `lightcuts/morton_tree_keys.wgsl`, the radix sort of
//! `lumbre_compact`, the radix tree of `lumbre_morton` and `lightcuts/morton_tree_bounds.wgsl`,
//! the stages of `morton_tree.rs` with their buffers in the same order.

use glam::Vec3;
use lumbre_compact::record_sort_bits;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_morton::RadixTreeBuild;

use crate::gpu::tree::GpuLights;
use crate::gpu::vpls::GpuVpl;
use crate::morton_tree::{KeyParams, MortonTree};
use crate::tree::{LightNode, LightTree};
use crate::vpls::{Vpl, validate_vpls};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct KeysParams {
    min: [f32; 3],
    n: u32,
    scale: [f32; 3],
    pos_bits: u32,
    dir_bits: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<KeysParams>() == lumbre_shaders::lightcuts::MORTON_TREE_KEYS_PARAMS_SIZE);

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct BoundsParams {
    n: u32,
    seed: u32,
    level: u32,
    _pad: u32,
}
const _: () = assert!(size_of::<BoundsParams>() == lumbre_shaders::lightcuts::MORTON_TREE_BOUNDS_PARAMS_SIZE);

/// Lights on the GPU with the box their keys are quantised in: the input of the GPU build.
#[derive(Clone, Debug)]
pub struct GpuLightTree {
    /// The lights.
    pub vpls: Buffer<GpuVpl>,
    /// Number of lights.
    pub count: u32,
    /// The quantisation box.
    pub bounds: (Vec3, Vec3),
}

/// Threads per workgroup of the tree kernels.
const WG: u64 = 256;

impl MortonTree {
    /// Records the build over `count` lights already on the GPU, quantised in `bounds`: the
    /// nodes and the lights (the same buffer) of the tree.
    pub fn record_build(
        &self,
        rec: &mut Recorder,
        vpls: &Buffer<GpuVpl>,
        count: u32,
        bounds: (Vec3, Vec3),
    ) -> Result<GpuLights> {
        let gpu = rec.gpu().clone();
        let n = count as usize;
        if n == 0 || vpls.len() < n {
            return Err(Error::Input(format!("Morton light tree of {n} lights from a buffer of {}", vpls.len())));
        }
        let tree = MortonTree { bounds: Some(bounds), ..*self };
        let KeyParams { quantizer: q, direction_bits } = tree.key_params(&[])?;
        let nodes = gpu.zeroed::<LightNode>(2 * n - 1)?;
        let keys = gpu.zeroed::<u32>(n)?;
        let order = gpu.zeroed::<u32>(n)?;
        let groups = |threads: usize| (threads as u64).div_ceil(WG);
        let params = gpu.uniform(&KeysParams {
            min: q.min,
            n: count,
            scale: q.scale,
            pos_bits: q.bits,
            dir_bits: direction_bits,
            _pad: [0; 3],
        })?;
        let k = gpu.kernel(&lumbre_shaders::lightcuts::MORTON_TREE_KEYS, "main")?;
        let bind = [params.as_entire_binding(), vpls.binding(), keys.binding(), order.binding()];
        rec.dispatch("morton keys", &k, &bind, groups(n))?;
        let key_bits = 3 * q.bits + 2 * direction_bits;
        record_sort_bits(rec, &keys, Some(&order), key_bits)?;
        let topology = RadixTreeBuild.record_tree(rec, &keys)?.nodes;
        let leaves = gpu.kernel(&lumbre_shaders::lightcuts::MORTON_TREE_BOUNDS, "leaves")?;
        let level = gpu.kernel(&lumbre_shaders::lightcuts::MORTON_TREE_BOUNDS, "level")?;
        let bounds_params = |level: u32| gpu.uniform(&BoundsParams { n: count, seed: self.seed, level, _pad: 0 });
        let p = bounds_params(0)?;
        let bind = [p.as_entire_binding(), vpls.binding(), order.binding(), topology.binding(), nodes.binding()];
        rec.dispatch("tree leaves", &leaves, &bind, groups(n))?;
        // Prefix lengths of distinct keys are at least 32 - key_bits; equal keys add 32.
        if n > 1 {
            for l in (32 - key_bits..64).rev() {
                let p = bounds_params(l)?;
                let bind =
                    [p.as_entire_binding(), vpls.binding(), order.binding(), topology.binding(), nodes.binding()];
                rec.dispatch("tree bounds", &level, &bind, groups(n - 1))?;
            }
        }
        Ok(GpuLights { nodes, vpls: vpls.clone(), count })
    }
}

impl Compute for MortonTree {
    type Input = [Vpl];
    type Output = LightTree;
    type GpuInput = GpuLightTree;
    type GpuOutput = GpuLights;

    fn name(&self) -> &'static str {
        "morton light tree"
    }

    fn cpu_reported(&self, vpls: &[Vpl], _: &dyn Progress) -> Result<(LightTree, Report)> {
        Report::timed(self.name(), || self.build(vpls))
    }

    fn upload(&self, gpu: &Gpu, vpls: &[Vpl]) -> Result<GpuLightTree> {
        validate_vpls(vpls)?;
        let bounds = match self.bounds {
            Some(b) => b,
            None => vpls
                .iter()
                .fold((vpls[0].position, vpls[0].position), |(lo, hi), v| (lo.min(v.position), hi.max(v.position))),
        };
        let gpu_vpls: Vec<GpuVpl> = vpls.iter().map(|v| v.to_gpu()).collect();
        Ok(GpuLightTree { vpls: gpu.upload(&gpu_vpls)?, count: vpls.len() as u32, bounds })
    }

    fn record(&self, rec: &mut Recorder, input: &GpuLightTree) -> Result<GpuLights> {
        self.record_build(rec, &input.vpls, input.count, input.bounds)
    }

    fn download(&self, gpu: &Gpu, out: &GpuLights) -> Result<LightTree> {
        let vpls: Vec<Vpl> = gpu.download_range(&out.vpls, 0..out.count as usize)?.iter().map(Vpl::from_gpu).collect();
        Ok(LightTree { nodes: gpu.download(&out.nodes)?, vpls })
    }
}
