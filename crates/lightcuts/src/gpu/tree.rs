//! A light tree on the GPU, as the shading kernels read it (`LightNode` in
//! `lightcuts/light.wgsl`): the twin of `tree.rs`.

use lumbre_gpu::{Buffer, Gpu, Result};

use crate::gpu::vpls::GpuVpl;
use crate::tree::{LightNode, LightTree};

/// A light tree on the GPU: its nodes and its lights.
#[derive(Clone, Debug)]
pub struct GpuLights {
    /// The nodes ([`LightNode`] layout).
    pub nodes: Buffer<LightNode>,
    /// The lights ([`GpuVpl`] layout).
    pub vpls: Buffer<GpuVpl>,
    /// Number of lights.
    pub count: u32,
}

impl GpuLights {
    /// Uploads a tree.
    pub fn upload(gpu: &Gpu, tree: &LightTree) -> Result<GpuLights> {
        let vpls: Vec<GpuVpl> = tree.vpls.iter().map(|v| v.to_gpu()).collect();
        Ok(GpuLights { nodes: gpu.upload(&tree.nodes)?, vpls: gpu.upload(&vpls)?, count: tree.vpls.len() as u32 })
    }
}
