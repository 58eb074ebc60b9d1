//! The packed form on the GPU: `octree/packed.wgsl`'s stages that pack the build's levels,
//! the tree as the GPU keeps it, and its upload, the twin of `packed.rs`.

use lumbre_compact::{Scan, ScanKind};
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Gpu, Result};
use lumbre_shaders::octree::PACKED;

use crate::node::Root;
use crate::packed::twin::{self, PackedParams};
use crate::packed::{Inner, PackedOctree, Payload};

/// A [`PackedOctree`] on the GPU: interior nodes and payloads (with spare capacity at the
/// end) and the sizes, all only on the GPU.
#[derive(Clone, Debug)]
pub struct GpuOctree {
    /// Interior nodes, level by level, root first.
    pub nodes: Buffer<Inner>,
    /// Payloads: the leaves', then the branching interior nodes'.
    pub payloads: Buffer<Payload>,
    /// `depth + 2` words: the `depth + 1` interior level offsets into `nodes` (the last is
    /// the interior node count), then the payload count.
    pub levels: Buffer<u32>,
    /// The root cube.
    pub root: Root,
    /// Depth of the leaves.
    pub depth: u32,
    /// Whether the tree holds no point (the GPU build never makes one; an upload can).
    pub empty: bool,
}

/// The packed tree's buffers as the build's stages leave them (see [`GpuOctree`]).
pub(crate) struct TreeBufs {
    pub nodes: Buf<Inner>,
    pub payloads: Buf<Payload>,
    pub levels: Buf<u32>,
}

/// Workgroups of 256 threads for `k` items.
pub(crate) fn groups(k: usize) -> u64 {
    (k as u64).div_ceil(256)
}

/// The packing's stages (`octree/packed.wgsl`): which nodes own a payload (segments per
/// level, leaves first), their numbers by a scan, each chain's shared index, then the
/// gathers into the packed arrays.
pub(crate) fn pack(
    s: &mut Stages<'_>,
    caps: &[usize],
    depth: u32,
    key_words: usize,
    counts: Buf<u32>,
    levels: &[Buf<u32>],
) -> Result<TreeBufs> {
    let d = depth as usize;
    let mut seg = vec![0usize; d + 2];
    for l in (0..d).rev() {
        seg[l] = seg[l + 1] + caps[l + 1];
    }
    let flags_len = seg[0] + caps[0];
    let owner = s.zeroed::<u32>(flags_len)?;
    let payload_of = s.zeroed::<u32>(flags_len)?;
    let interior: usize = caps[..d].iter().sum();
    let nodes = s.zeroed::<Inner>(interior.max(1))?;
    // Leaves, plus at most one per node with two or more children: under twice the leaves.
    let payloads = s.zeroed::<Payload>((2 * caps[d]).min(caps.iter().sum()))?;
    let offsets = s.zeroed::<u32>(d + 2)?;
    let [owner_flags, level_offsets, payload_index, gather_nodes, gather_payloads] =
        ["owner_flags", "level_offsets", "payload_index", "gather_nodes", "gather_payloads"]
            .map(|entry| s.stage(&PACKED, entry));
    let params = |s: &mut Stages<'_>, l: usize| {
        s.uniform(&PackedParams {
            n: caps[l] as u32,
            depth,
            level: l as u32,
            key_words: key_words as u32,
            seg: seg[l] as u32,
            seg_below: seg[l + 1] as u32,
            _pad: [0; 2],
        })
    };
    // One thread per node slot of the level.
    let label = "octree pack";
    let owner_flags = owner_flags?;
    for l in 0..=d {
        let p = params(s, l)?;
        s.dispatch(label, &owner_flags, &p, &[counts.all(), levels[l].all(), owner.all()], groups(caps[l]), |p, b| {
            let [counts, level, owner] = b else { unreachable!() };
            twin::owner_flags(p, counts, level, owner);
        })?;
    }
    Scan::<u32>::new(ScanKind::Exclusive).record_stages(s, owner, payload_of)?;
    let p = params(s, 0)?;
    let binds = [counts.all(), offsets.all(), owner.all(), payload_of.all()];
    s.dispatch(label, &level_offsets?, &p, &binds, 1, |p, b| {
        let [counts, offsets, owner, payload_of] = b else { unreachable!() };
        twin::level_offsets(p, counts, offsets, owner, payload_of);
    })?;
    let payload_index = payload_index?;
    for l in (0..d).rev() {
        let p = params(s, l)?;
        let binds = [counts.all(), levels[l].all(), owner.all(), payload_of.all()];
        s.dispatch(label, &payload_index, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, level, owner, payload_of] = b else { unreachable!() };
            twin::payload_index(p, counts, level, owner, payload_of);
        })?;
    }
    let gather_nodes = gather_nodes?;
    for l in 0..d {
        let p = params(s, l)?;
        let binds = [counts.all(), offsets.all(), levels[l].all(), nodes.all(), payload_of.all()];
        s.dispatch(label, &gather_nodes, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, offsets, level, nodes, payload_of] = b else { unreachable!() };
            twin::gather_nodes(p, counts, offsets, level, bytemuck::cast_slice_mut(nodes), payload_of);
        })?;
    }
    let gather_payloads = gather_payloads?;
    for l in 0..=d {
        let p = params(s, l)?;
        let binds = [counts.all(), levels[l].all(), owner.all(), payload_of.all(), payloads.all()];
        s.dispatch(label, &gather_payloads, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, level, owner, payload_of, payloads] = b else { unreachable!() };
            twin::gather_payloads(p, counts, level, owner, payload_of, bytemuck::cast_slice_mut(payloads));
        })?;
    }
    Ok(TreeBufs { nodes, payloads, levels: offsets })
}

/// The level offsets of a packed tree without the payload count that ends them on the GPU,
/// the interior node count (the last offset) and the payload count.
pub(crate) fn split_levels(mut levels: Vec<u32>) -> (Vec<u32>, usize, usize) {
    let payloads = levels.pop().unwrap_or(0) as usize;
    let interior = *levels.last().unwrap_or(&0) as usize;
    (levels, interior, payloads)
}

impl PackedOctree {
    /// Uploads the tree for rendering (as [`GpuBuild`](crate::GpuBuild) leaves it on the GPU).
    pub fn upload(&self, gpu: &Gpu) -> Result<GpuOctree> {
        // Bindings cannot be empty: a lone zero node or payload stands in; `empty` says so.
        let nodes = gpu.zeroed::<Inner>(self.nodes.len().max(1))?;
        let payloads = gpu.zeroed::<Payload>(self.payloads.len().max(1))?;
        gpu.write(&nodes, 0, &self.nodes)?;
        gpu.write(&payloads, 0, &self.payloads)?;
        let mut levels = self.levels.clone();
        levels.push(self.payloads.len() as u32);
        Ok(GpuOctree {
            nodes,
            payloads,
            levels: gpu.upload(&levels)?,
            root: self.root,
            depth: self.depth,
            empty: self.payloads.is_empty(),
        })
    }
}

impl lumbre_gpu::Agree for PackedOctree {
    fn disagreement(&self, gpu: &Self, _: lumbre_gpu::Tolerance) -> Option<String> {
        if self.root != gpu.root || self.depth != gpu.depth || self.levels != gpu.levels {
            return Some(format!(
                "shape differs: cpu root {:?} depth {} levels {:?}; gpu root {:?} depth {} levels {:?}",
                self.root, self.depth, self.levels, gpu.root, gpu.depth, gpu.levels
            ));
        }
        if self.payloads.len() != gpu.payloads.len() {
            return Some(format!("cpu has {} payloads, gpu {}", self.payloads.len(), gpu.payloads.len()));
        }
        if let Some(bad) = self.nodes.iter().zip(&gpu.nodes).position(|(a, b)| a != b) {
            return Some(format!("interior node {bad} differs: cpu {:?} gpu {:?}", self.nodes[bad], gpu.nodes[bad]));
        }
        let bad = self.payloads.iter().zip(&gpu.payloads).position(|(a, b)| a != b)?;
        Some(format!("payload {bad} differs: cpu {:?} gpu {:?}", self.payloads[bad], gpu.payloads[bad]))
    }
}
