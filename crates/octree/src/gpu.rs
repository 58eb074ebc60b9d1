//! The GPU build: Morton encode, radix sort of (code, point) pairs, then one compaction and
//! one reduction per level, deepest first, and the packing into a [`PackedOctree`]. Every
//! stage stays on the GPU; the result equals [`Octree::build`] then [`Octree::pack`] bit
//! for bit.

use lumbre_compact::{Compact, Emit, Scan, ScanKind, Select, record_sort_stages};
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result, iota_cpu, record_iota};
use lumbre_morton::{GpuPoints, Keys, MortonEncode, NodeKey32};
use lumbre_shaders::octree::{BUILD_KEY32, BUILD_KEY64};

use crate::build::{check, finite_points, quantizer};
use crate::stages::{BuildParams, GatherParams, build, gather};
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

/// The finite points of a cloud: positions, packed attributes ([`Attrs::packed`]), and the
/// root cube.
struct FiniteCloud {
    xyz: Vec<[f32; 3]>,
    attrs: Vec<[u32; 2]>,
    root: Root,
}

/// A cloud's buffers as the build's stages take them (see [`GpuCloud`]).
struct CloudBufs {
    xyz: Buf<f32>,
    attrs: Buf<[u32; 2]>,
    len: usize,
    root: Root,
}

/// The packed tree's buffers as the build's stages leave them (see [`GpuOctree`]).
struct TreeBufs {
    nodes: Buf<Inner>,
    payloads: Buf<Payload>,
    levels: Buf<u32>,
}

fn groups(k: usize) -> u64 {
    (k as u64).div_ceil(256)
}

impl GpuBuild {
    /// Records the build of an uploaded cloud.
    pub fn record_build(&self, rec: &mut Recorder, cloud: &GpuCloud) -> Result<GpuOctree> {
        let mut s = Stages::record(rec);
        let input =
            CloudBufs { xyz: s.adopt(&cloud.xyz)?, attrs: s.adopt(&cloud.attrs)?, len: cloud.len, root: cloud.root };
        let tree = self.stages(&mut s, &input)?;
        Ok(GpuOctree {
            nodes: s.buffer(tree.nodes)?,
            payloads: s.buffer(tree.payloads)?,
            levels: s.buffer(tree.levels)?,
            root: cloud.root,
            depth: self.depth,
            empty: false,
        })
    }

    /// The build of `cloud` on `s`, from the upload of its finite points to the download of
    /// the tree, as [`Compute::gpu`] runs it. Run stage by stage with any stage on the CPU,
    /// it builds what the GPU builds; with every stage on the CPU, what [`Compute::cpu`]
    /// builds.
    ///
    /// ```
    /// use lumbre_gpu::{Compute, stages::Stages};
    /// use lumbre_octree::{Attrs, GpuBuild, Points};
    /// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3], [0.9; 3]], attrs: vec![Attrs::default(); 3] };
    /// let tree = GpuBuild::new(12).run_stages(&mut Stages::cpu(), &cloud)?;
    /// assert_eq!(tree, GpuBuild::new(12).cpu(&cloud)?);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn run_stages(&self, s: &mut Stages<'_>, cloud: &Points) -> Result<PackedOctree> {
        let FiniteCloud { xyz, attrs, root } = self.finite_cloud(cloud)?;
        let input =
            CloudBufs { xyz: s.upload(bytemuck::cast_slice(&xyz))?, attrs: s.upload(&attrs)?, len: xyz.len(), root };
        let tree = self.stages(s, &input)?;
        let (levels, interior, payloads) = split_levels(s.read(tree.levels)?);
        if interior > tree.nodes.len() || payloads > tree.payloads.len() {
            return Err(Error::Input(format!(
                "the build counted {interior} nodes and {payloads} payloads, room for {} and {}",
                tree.nodes.len(),
                tree.payloads.len()
            )));
        }
        let nodes = s.read_range(tree.nodes, 0..interior)?;
        let payloads = s.read_range(tree.payloads, 0..payloads)?;
        Ok(PackedOctree { root, depth: self.depth, nodes, levels, payloads })
    }

    /// The finite points of `cloud` as the build takes them, and the root.
    fn finite_cloud(&self, cloud: &Points) -> Result<FiniteCloud> {
        check(cloud.positions.len(), cloud.attrs.len(), self.depth).map_err(err)?;
        let root = self.root_for(&cloud.positions)?;
        let (keep, _) = finite_points(&cloud.positions);
        let xyz = keep.iter().map(|&i| cloud.positions[i as usize]).collect();
        let attrs = keep.iter().map(|&i| cloud.attrs[i as usize].packed()).collect();
        Ok(FiniteCloud { xyz, attrs, root })
    }

    /// The build's stages: Morton codes, the sort of (code, point) pairs, per level the
    /// flags, a compaction and the nodes, deepest first, then the packing.
    fn stages(&self, s: &mut Stages<'_>, cloud: &CloudBufs) -> Result<TreeBufs> {
        let (n, depth) = (cloud.len, self.depth);
        check(n, n, depth).map_err(err)?;
        if n == 0 {
            return Err(err(crate::OctreeError::Empty));
        }
        let caps = capacities(n, depth);
        let (key_words, words) = plane_words(depth);
        let shader = if key_words == 2 { BUILD_KEY64 } else { BUILD_KEY32 };
        // 1. Leaf codes and the sort of (code, point) pairs.
        let codes = match quantizer(cloud.root, depth) {
            Some(quantizer) => {
                let enc = MortonEncode { quantizer, clamp: true };
                let entry = if key_words == 2 { "encode64" } else { "encode32" };
                s.recorded(
                    (lumbre_shaders::morton::ENCODE.name, entry),
                    &[cloud.xyz.all()],
                    |rec, xyz| Ok(enc.record_keys(rec, &GpuPoints { xyz: xyz[0].clone().cast()? })?.words),
                    |xyz| match enc.cpu(bytemuck::cast_slice(&xyz[0]))? {
                        Keys::U32(k) => Ok(k),
                        Keys::U64(k) => Ok(bytemuck::cast_slice(&k).to_vec()),
                    },
                )?
            }
            None => s.zeroed::<u32>(n)?,
        };
        let order = s.recorded(
            (lumbre_shaders::runtime::IOTA.name, "main"),
            &[],
            |rec, _| {
                let order = rec.gpu().zeroed::<u32>(n)?;
                record_iota(rec, &order, 0)?;
                Ok(order)
            },
            |_| {
                let mut order = vec![0; n];
                iota_cpu(&mut order, 0);
                Ok(order)
            },
        )?;
        if key_words == 2 {
            record_sort_stages(s, codes.cast::<u64>()?, Some(order), 3 * depth)?;
        } else {
            record_sort_stages(s, codes, Some(order), 3 * depth)?;
        }
        // The compactions keep flagged indices: their values are a one-word stand-in.
        let no_values = s.zeroed::<u32>(1)?;
        let flags = s.zeroed::<u32>(n)?;
        let counts = s.zeroed::<u32>(depth as usize + 1)?;
        let params =
            |n: usize, level: u32| BuildParams { n: n as u32, depth, level, out_cap: caps[level as usize] as u32 };
        let runs = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
        let [leaf_flags, leaf_nodes, parent_flags, parent_nodes] =
            ["leaf_flags", "leaf_nodes", "parent_flags", "parent_nodes"].map(|entry| s.stage(&shader, entry));
        let (leaf_flags, leaf_nodes, parent_flags, parent_nodes) =
            (leaf_flags?, leaf_nodes?, parent_flags?, parent_nodes?);
        // 2. Leaves: runs of equal codes.
        let p = s.uniform(&params(n, depth))?;
        s.dispatch("octree leaves", &leaf_flags, &p, &[codes.all(), flags.all()], groups(n), |p, b| {
            let [codes, flags] = b else { unreachable!() };
            build::leaf_flags(p, codes, flags);
        })?;
        let (starts, count) = runs.record_stages(s, no_values, flags, n)?;
        let leaves = s.zeroed::<u32>(caps[depth as usize] * words)?;
        let binds = [codes.all(), order.all(), cloud.attrs.all(), starts.all(), count.all(), leaves.all()];
        s.dispatch("octree leaves", &leaf_nodes, &p, &binds, groups(caps[depth as usize]), |p, b| {
            let [codes, order, attrs, starts, count, nodes] = b else { unreachable!() };
            build::leaf_nodes(p, codes, order, bytemuck::cast_slice(attrs), starts, count, nodes);
        })?;
        s.copy(count, 0, counts, depth as usize, 1)?;
        // 3. Parents, level by level up to the root.
        let mut levels = vec![leaves];
        let mut child_count = count;
        for level in (0..depth).rev() {
            let children = *levels.last().expect("the leaves");
            let cap_children = caps[level as usize + 1];
            let p = s.uniform(&params(cap_children, level))?;
            let binds = [children.all(), child_count.all(), flags.all()];
            s.dispatch("octree parents", &parent_flags, &p, &binds, groups(cap_children), |p, b| {
                let [children, child_count, flags] = b else { unreachable!() };
                build::parent_flags(p, children, child_count, flags);
            })?;
            let (starts, count) = runs.record_stages(s, no_values, flags, cap_children)?;
            let parents = s.zeroed::<u32>(caps[level as usize] * words)?;
            let binds = [starts.all(), count.all(), children.all(), child_count.all(), parents.all()];
            s.dispatch("octree parents", &parent_nodes, &p, &binds, groups(caps[level as usize]), |p, b| {
                let [starts, count, children, child_count, nodes] = b else { unreachable!() };
                build::parent_nodes(p, starts, count, children, child_count, nodes);
            })?;
            s.copy(count, 0, counts, level as usize, 1)?;
            child_count = count;
            levels.push(parents);
        }
        levels.reverse();
        pack(s, &caps, depth, key_words, counts, &levels)
    }
}

/// The packing's stages (`octree/gather.wgsl`): which nodes own a payload (segments per
/// level, leaves first), their numbers by a scan, each chain's shared index, then the
/// gathers into the packed arrays.
fn pack(
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
            .map(|entry| s.stage(&lumbre_shaders::octree::GATHER, entry));
    let params = |s: &mut Stages<'_>, l: usize| {
        s.uniform(&GatherParams {
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
            gather::owner_flags(p, counts, level, owner);
        })?;
    }
    Scan::<u32>::new(ScanKind::Exclusive).record_stages(s, owner, payload_of)?;
    let p = params(s, 0)?;
    let binds = [counts.all(), offsets.all(), owner.all(), payload_of.all()];
    s.dispatch(label, &level_offsets?, &p, &binds, 1, |p, b| {
        let [counts, offsets, owner, payload_of] = b else { unreachable!() };
        gather::level_offsets(p, counts, offsets, owner, payload_of);
    })?;
    let payload_index = payload_index?;
    for l in (0..d).rev() {
        let p = params(s, l)?;
        let binds = [counts.all(), levels[l].all(), owner.all(), payload_of.all()];
        s.dispatch(label, &payload_index, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, level, owner, payload_of] = b else { unreachable!() };
            gather::payload_index(p, counts, level, owner, payload_of);
        })?;
    }
    let gather_nodes = gather_nodes?;
    for l in 0..d {
        let p = params(s, l)?;
        let binds = [counts.all(), offsets.all(), levels[l].all(), nodes.all(), payload_of.all()];
        s.dispatch(label, &gather_nodes, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, offsets, level, nodes, payload_of] = b else { unreachable!() };
            gather::gather_nodes(p, counts, offsets, level, bytemuck::cast_slice_mut(nodes), payload_of);
        })?;
    }
    let gather_payloads = gather_payloads?;
    for l in 0..=d {
        let p = params(s, l)?;
        let binds = [counts.all(), levels[l].all(), owner.all(), payload_of.all(), payloads.all()];
        s.dispatch(label, &gather_payloads, &p, &binds, groups(caps[l]), |p, b| {
            let [counts, level, owner, payload_of, payloads] = b else { unreachable!() };
            gather::gather_payloads(p, counts, level, owner, payload_of, bytemuck::cast_slice_mut(payloads));
        })?;
    }
    Ok(TreeBufs { nodes, payloads, levels: offsets })
}

/// The level offsets of a packed tree without the payload count that ends them on the GPU,
/// the interior node count (the last offset) and the payload count.
fn split_levels(mut levels: Vec<u32>) -> (Vec<u32>, usize, usize) {
    let payloads = levels.pop().unwrap_or(0) as usize;
    let interior = *levels.last().unwrap_or(&0) as usize;
    (levels, interior, payloads)
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
        let FiniteCloud { xyz, attrs, root } = self.finite_cloud(cloud)?;
        Ok(GpuCloud { xyz: gpu.upload(bytemuck::cast_slice(&xyz))?, attrs: gpu.upload(&attrs)?, len: xyz.len(), root })
    }

    fn record(&self, rec: &mut Recorder, cloud: &GpuCloud) -> Result<GpuOctree> {
        self.record_build(rec, cloud)
    }

    fn download(&self, gpu: &Gpu, tree: &GpuOctree) -> Result<PackedOctree> {
        let (levels, interior, payloads) = split_levels(gpu.download(&tree.levels)?);
        let nodes = gpu.download_range(&tree.nodes, 0..interior)?;
        let payloads = gpu.download_range(&tree.payloads, 0..payloads)?;
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
