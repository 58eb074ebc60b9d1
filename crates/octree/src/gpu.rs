//! The GPU build: Morton encode, radix sort of (code, point) pairs, then one compaction and
//! one reduction per level, deepest first, and the packing into a [`PackedOctree`]. Every
//! stage stays on the GPU; the result equals [`Octree::build`] then [`Octree::pack`] bit
//! for bit.

use lumbre_compact::{Compact, Emit, GpuStream, ScanKind, Select, record_scan, record_sort_bits};
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result, record_iota};
use lumbre_morton::{GpuPoints, MortonEncode, NodeKey32};

use crate::build::{check, finite_points, quantizer};
use crate::stages::{BuildParams, GatherParams};
use crate::{Attrs, Inner, Node, Octree, PackedOctree, Payload, Root};

/// A point cloud: positions and their attributes (same length).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Points {
    /// Positions.
    pub positions: Vec<[f32; 3]>,
    /// Attributes, one per position.
    pub attrs: Vec<Attrs>,
}

/// The finite points of a cloud on the GPU, with the root cube around them.
#[derive(Clone, Debug)]
pub struct GpuCloud {
    /// Positions, x y z per point.
    pub xyz: Buffer<f32>,
    /// Packed attributes ([`Attrs::packed`]).
    pub attrs: Buffer<[u32; 2]>,
    /// Number of points.
    pub len: usize,
    /// The root cube.
    pub root: Root,
}

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

/// Builds a [`PackedOctree`] on the GPU (or, through [`Compute::cpu`], with
/// [`Octree::build`] and [`Octree::pack`]).
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_octree::{Attrs, GpuBuild, Points};
/// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
/// let tree = GpuBuild::new(8).gpu(&Gpu::new()?, &cloud)?;
/// assert_eq!(tree.points(), 2);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct GpuBuild {
    /// Depth of the leaves (at most [`crate::MAX_DEPTH`]).
    pub depth: u32,
    /// The root cube; `None`: the smallest cube around the points. A given root grows
    /// (doubling, as [`Octree::update`] does) until it holds every point, so rebuilding
    /// moved points in the previous root equals the in-place update.
    pub root: Option<Root>,
}

impl GpuBuild {
    /// A build at `depth` in the cube around the points.
    pub fn new(depth: u32) -> Self {
        GpuBuild { depth, root: None }
    }

    pub(crate) fn root_for(&self, positions: &[[f32; 3]]) -> Result<Root> {
        match self.root {
            Some(r) => Ok(r.grown_to_fit(positions).0),
            None => Root::around(positions).ok_or_else(|| err(crate::OctreeError::Empty)),
        }
    }
}

/// Words of a node in the build's word planes: the key's (one word up to depth 10, two
/// beyond), then the [`Node`]'s.
pub(crate) fn plane_words(depth: u32) -> (usize, usize) {
    let key_words = if depth > NodeKey32::MAX_LEVEL { 2 } else { 1 };
    (key_words, key_words + size_of::<Node>() / 4)
}

/// Worst-case node count of each level: no more than the points, nor than 8^level.
pub(crate) fn capacities(points: usize, depth: u32) -> Vec<usize> {
    (0..=depth).map(|l| if 3 * l >= 63 { points } else { points.min(1usize << (3 * l)) }.max(1)).collect()
}

pub(crate) fn err(e: crate::OctreeError) -> Error {
    Error::Input(e.to_string())
}

impl GpuBuild {
    /// Records the build of an uploaded cloud.
    pub fn record_build(&self, rec: &mut Recorder, cloud: &GpuCloud) -> Result<GpuOctree> {
        let gpu = rec.gpu().clone();
        let (n, depth) = (cloud.len, self.depth);
        check(n, n, depth).map_err(err)?;
        if n == 0 {
            return Err(err(crate::OctreeError::Empty));
        }
        let caps = capacities(n, depth);
        let (key_words, words) = plane_words(depth);
        let build =
            if key_words == 2 { lumbre_shaders::octree::BUILD_KEY64 } else { lumbre_shaders::octree::BUILD_KEY32 };
        let kernel = |e| gpu.kernel(&build, e);
        let groups = |k: usize| (k as u64).div_ceil(256);
        // 1. Leaf codes and the sort of (code, point) pairs.
        let codes = match quantizer(cloud.root, depth) {
            Some(quantizer) => {
                let enc = MortonEncode { quantizer, clamp: true };
                enc.record_keys(rec, &GpuPoints { xyz: cloud.xyz.clone() })?.words
            }
            None => gpu.zeroed::<u32>(n)?,
        };
        let order = gpu.zeroed::<u32>(n)?;
        record_iota(rec, &order, 0)?;
        if key_words == 2 {
            record_sort_bits(rec, &codes.clone().cast::<u64>()?, Some(&order), 3 * depth)?;
        } else {
            record_sort_bits(rec, &codes, Some(&order), 3 * depth)?;
        }
        // Buffers the stages do not use are bound to stand-ins.
        let dummy_u32 = gpu.zeroed::<u32>(1)?;
        let dummy_nodes = gpu.zeroed::<u32>(words)?;
        let flags = gpu.zeroed::<u32>(n)?;
        let counts = gpu.zeroed::<u32>(depth as usize + 1)?;
        let params = |n: usize, level: u32| {
            gpu.uniform(&BuildParams { n: n as u32, depth, level, out_cap: caps[level as usize] as u32 })
        };
        let runs = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
        // 2. Leaves: runs of equal codes.
        let p = params(n, depth)?;
        let bind_leaf = |rec: &mut Recorder, entry, starts: &Buffer<u32>, count: &Buffer<u32>, out: &Buffer<u32>, k| {
            let res = [
                p.as_entire_binding(),
                codes.binding(),
                order.binding(),
                cloud.attrs.binding(),
                starts.binding(),
                count.binding(),
                dummy_nodes.binding(),
                dummy_u32.binding(),
                flags.binding(),
                out.binding(),
            ];
            rec.dispatch("octree leaves", &kernel(entry)?, &res, groups(k))
        };
        bind_leaf(rec, "leaf_flags", &dummy_u32, &dummy_u32, &dummy_nodes, n)?;
        let leaf_runs =
            runs.record_compact(rec, &GpuStream { values: dummy_u32.clone(), flags: flags.clone(), len: n })?;
        let leaves = gpu.zeroed::<u32>(caps[depth as usize] * words)?;
        bind_leaf(rec, "leaf_nodes", &leaf_runs.out, &leaf_runs.count, &leaves, caps[depth as usize])?;
        rec.copy_range(&leaf_runs.count, 0, &counts, depth as usize, 1)?;
        // 3. Parents, level by level up to the root.
        let mut levels: Vec<Buffer<u32>> = vec![leaves];
        let mut child_count = leaf_runs.count;
        for level in (0..depth).rev() {
            let children = levels.last().expect("leaves").clone();
            let cap_children = caps[level as usize + 1];
            let p = params(cap_children, level)?;
            let flag_res = [
                p.as_entire_binding(),
                dummy_u32.binding(),
                dummy_u32.binding(),
                cloud.attrs.binding(),
                dummy_u32.binding(),
                dummy_u32.binding(),
                children.binding(),
                child_count.binding(),
                flags.binding(),
                dummy_nodes.binding(),
            ];
            rec.dispatch("octree parents", &kernel("parent_flags")?, &flag_res, groups(cap_children))?;
            let parent_runs = runs.record_compact(
                rec,
                &GpuStream { values: dummy_u32.clone(), flags: flags.clone(), len: cap_children },
            )?;
            let parents = gpu.zeroed::<u32>(caps[level as usize] * words)?;
            let node_res = [
                p.as_entire_binding(),
                dummy_u32.binding(),
                dummy_u32.binding(),
                cloud.attrs.binding(),
                parent_runs.out.binding(),
                parent_runs.count.binding(),
                children.binding(),
                child_count.binding(),
                flags.binding(),
                parents.binding(),
            ];
            rec.dispatch("octree parents", &kernel("parent_nodes")?, &node_res, groups(caps[level as usize]))?;
            rec.copy_range(&parent_runs.count, 0, &counts, level as usize, 1)?;
            child_count = parent_runs.count;
            levels.push(parents);
        }
        levels.reverse();
        // 4. The packed form: which nodes own a payload (segments per level, leaves first),
        // their numbers by a scan, each chain's shared index, then the gathers.
        let gather = lumbre_shaders::octree::GATHER;
        let mut seg = vec![0usize; depth as usize + 2];
        for l in (0..depth as usize).rev() {
            seg[l] = seg[l + 1] + caps[l + 1];
        }
        let flags_len = seg[0] + caps[0];
        let owner = gpu.zeroed::<u32>(flags_len)?;
        let payload_of = gpu.zeroed::<u32>(flags_len)?;
        let interior: usize = caps[..depth as usize].iter().sum();
        let nodes = gpu.zeroed::<Inner>(interior.max(1))?;
        // Leaves, plus at most one per node with two or more children: under twice the leaves.
        let payloads = gpu.zeroed::<Payload>((2 * caps[depth as usize]).min(caps.iter().sum()))?;
        let offsets = gpu.zeroed::<u32>(depth as usize + 2)?;
        let stage = |rec: &mut Recorder, entry: &'static str, l: usize| -> Result<()> {
            let p = gpu.uniform(&GatherParams {
                n: caps[l] as u32,
                depth,
                level: l as u32,
                key_words: key_words as u32,
                seg: seg[l] as u32,
                seg_below: seg[l + 1] as u32,
                _pad: [0; 2],
            })?;
            let res = [
                p.as_entire_binding(),
                counts.binding(),
                offsets.binding(),
                levels[l].binding(),
                nodes.binding(),
                owner.binding(),
                payload_of.binding(),
                payloads.binding(),
            ];
            // One thread per node slot of the level.
            let groups = if entry == "level_offsets" { 1 } else { groups(caps[l]) };
            rec.dispatch("octree pack", &gpu.kernel(&gather, entry)?, &res, groups)
        };
        for l in 0..=depth as usize {
            stage(rec, "owner_flags", l)?;
        }
        record_scan(rec, &owner, &payload_of, ScanKind::Exclusive)?;
        stage(rec, "level_offsets", 0)?;
        for l in (0..depth as usize).rev() {
            stage(rec, "payload_index", l)?;
        }
        for l in 0..depth as usize {
            stage(rec, "gather_nodes", l)?;
        }
        for l in 0..=depth as usize {
            stage(rec, "gather_payloads", l)?;
        }
        Ok(GpuOctree { nodes, payloads, levels: offsets, root: cloud.root, depth, empty: false })
    }
}

impl PackedOctree {
    /// Uploads the tree for rendering (as [`GpuBuild`] leaves it on the GPU).
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

impl Compute for GpuBuild {
    type Input = Points;
    type Output = PackedOctree;
    type GpuInput = GpuCloud;
    type GpuOutput = GpuOctree;

    fn name(&self) -> &'static str {
        "octree build"
    }

    fn cpu(&self, cloud: &Points) -> Result<PackedOctree> {
        let root = self.root_for(&cloud.positions)?;
        Octree::build_in(&cloud.positions, &cloud.attrs, self.depth, root).map(|(t, _)| t.pack()).map_err(err)
    }

    fn upload(&self, gpu: &Gpu, cloud: &Points) -> Result<GpuCloud> {
        check(cloud.positions.len(), cloud.attrs.len(), self.depth).map_err(err)?;
        let root = self.root_for(&cloud.positions)?;
        let (keep, _) = finite_points(&cloud.positions);
        let xyz: Vec<[f32; 3]> = keep.iter().map(|&i| cloud.positions[i as usize]).collect();
        let attrs: Vec<[u32; 2]> = keep.iter().map(|&i| cloud.attrs[i as usize].packed()).collect();
        Ok(GpuCloud { xyz: gpu.upload(bytemuck::cast_slice(&xyz))?, attrs: gpu.upload(&attrs)?, len: keep.len(), root })
    }

    fn record(&self, rec: &mut Recorder, cloud: &GpuCloud) -> Result<GpuOctree> {
        self.record_build(rec, cloud)
    }

    fn download(&self, gpu: &Gpu, tree: &GpuOctree) -> Result<PackedOctree> {
        let mut levels = gpu.download(&tree.levels)?;
        let payload_count = levels.pop().unwrap_or(0) as usize;
        let interior = *levels.last().unwrap_or(&0) as usize;
        let nodes = gpu.download_range(&tree.nodes, 0..interior)?;
        let payloads = gpu.download_range(&tree.payloads, 0..payload_count)?;
        Ok(PackedOctree { root: tree.root, depth: tree.depth, nodes, levels, payloads })
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
