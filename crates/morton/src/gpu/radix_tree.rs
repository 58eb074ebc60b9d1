//! Karras's radix tree on the GPU (`morton/radix_tree.wgsl`), the twin of `radix_tree.rs`
//! with the same buffers, and its [`Compute`] impl.

use lumbre_gpu::{Agree, Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result, Tolerance};

use crate::radix_tree::{RadixNode, RadixTree, RadixTreeBuild, check_sorted};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    n: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::morton::RADIX_TREE_PARAMS_SIZE);

/// Threads per workgroup of `morton/radix_tree.wgsl`.
const WG: u64 = 256;

/// A [`RadixTree`] on the GPU.
#[derive(Clone, Debug)]
pub struct GpuRadixTree {
    /// The `n - 1` internal nodes, the root first.
    pub nodes: Buffer<RadixNode>,
    /// The parent of each of the `n` leaves.
    pub leaf_parents: Buffer<u32>,
}

impl RadixTreeBuild {
    /// Records the tree over the sorted `codes` already on the GPU (a sort's keys).
    pub fn record_tree(&self, rec: &mut Recorder, codes: &Buffer<u32>) -> Result<GpuRadixTree> {
        let gpu = rec.gpu().clone();
        let n = codes.len();
        let count = u32::try_from(n)
            .ok()
            .filter(|&c| c < i32::MAX as u32)
            .ok_or_else(|| Error::Input(format!("a radix tree over {n} codes: at most 2^31 - 1")))?;
        let nodes = gpu.zeroed::<RadixNode>(n.saturating_sub(1))?;
        let leaf_parents = gpu.zeroed::<u32>(n)?;
        if n > 0 {
            let params = gpu.uniform(&Params { n: count, _pad: [0; 3] })?;
            let kernel = gpu.kernel(&lumbre_shaders::morton::RADIX_TREE, "main")?;
            let bind = [params.as_entire_binding(), codes.binding(), nodes.binding(), leaf_parents.binding()];
            // One thread per internal node; a tree of one code still needs one, for its leaf.
            rec.dispatch("radix tree", &kernel, &bind, ((n - 1).max(1) as u64).div_ceil(WG))?;
        }
        Ok(GpuRadixTree { nodes, leaf_parents })
    }
}

impl Compute for RadixTreeBuild {
    type Input = [u32];
    type Output = RadixTree;
    type GpuInput = Buffer<u32>;
    type GpuOutput = GpuRadixTree;

    fn name(&self) -> &'static str {
        "radix tree"
    }

    fn cpu_reported(&self, codes: &[u32], _: &dyn Progress) -> Result<(RadixTree, Report)> {
        Report::timed(self.name(), || self.cpu(codes))
    }

    fn upload(&self, gpu: &Gpu, codes: &[u32]) -> Result<Buffer<u32>> {
        check_sorted(codes)?;
        gpu.upload(codes)
    }

    fn record(&self, rec: &mut Recorder, codes: &Buffer<u32>) -> Result<GpuRadixTree> {
        self.record_tree(rec, codes)
    }

    fn download(&self, gpu: &Gpu, tree: &GpuRadixTree) -> Result<RadixTree> {
        Ok(RadixTree { nodes: gpu.download(&tree.nodes)?, leaf_parents: gpu.download(&tree.leaf_parents)? })
    }
}

impl Agree for RadixTree {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        let words = |t: &RadixTree| t.nodes.iter().map(|n| [n.left, n.right, n.prefix, n.parent]).collect::<Vec<_>>();
        match (words(self).disagreement(&words(gpu), tol), self.leaf_parents.disagreement(&gpu.leaf_parents, tol)) {
            (None, None) => None,
            (nodes, leaves) => Some(format!(
                "nodes (left, right, prefix, parent): {}; leaf parents: {}",
                nodes.unwrap_or_else(|| "agree".into()),
                leaves.unwrap_or_else(|| "agree".into())
            )),
        }
    }
}
