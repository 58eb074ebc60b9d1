//! The GPU build: Morton codes, the radix sort of (code, point) pairs, then per level
//! (deepest first) `octree/build.wgsl`'s flags, a compaction and the nodes, and the packing
//! (`gpu/packed.rs`), the twin of `build.rs`. Every stage stays on the GPU; the result
//! equals [`Octree::build`] then [`Octree::pack`] bit for bit.

use lumbre_compact::{Compact, Emit, Select, record_sort_stages};
use lumbre_gpu::stages::{Buf, Stages};
use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result, iota_cpu, record_iota};
use lumbre_morton::{GpuPoints, Keys, MortonEncode, NodeKey32};
use lumbre_shaders::octree::{BUILD_KEY32, BUILD_KEY64};

use crate::build::twin::{self, BuildParams};
use crate::build::{GpuBuild, OctreeError, Points, check, err, finite_points, quantizer};
use crate::gpu::packed::{GpuOctree, TreeBufs, groups, pack, split_levels};
use crate::node::{Node, Root};
use crate::packed::PackedOctree;

/// The finite points of a cloud on the GPU, with the root cube around them.
#[derive(Clone, Debug)]
pub struct GpuCloud {
    /// Positions, x y z per point.
    pub xyz: Buffer<f32>,
    /// Packed attributes ([`Attrs::packed`](crate::Attrs::packed)).
    pub attrs: Buffer<[u32; 2]>,
    /// Number of points.
    pub len: usize,
    /// The root cube.
    pub root: Root,
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
    /// it builds what the GPU builds; with every stage on the CPU, what [`GpuBuild::cpu`]
    /// builds.
    ///
    /// ```
    /// use lumbre_gpu::stages::Stages;
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
            return Err(lumbre_gpu::Error::Input(format!(
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
            return Err(err(OctreeError::Empty));
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
            twin::leaf_flags(p, codes, flags);
        })?;
        let (starts, count) = runs.record_stages(s, no_values, flags, n)?;
        let leaves = s.zeroed::<u32>(caps[depth as usize] * words)?;
        let binds = [codes.all(), order.all(), cloud.attrs.all(), starts.all(), count.all(), leaves.all()];
        s.dispatch("octree leaves", &leaf_nodes, &p, &binds, groups(caps[depth as usize]), |p, b| {
            let [codes, order, attrs, starts, count, nodes] = b else { unreachable!() };
            twin::leaf_nodes(p, codes, order, bytemuck::cast_slice(attrs), starts, count, nodes);
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
                twin::parent_flags(p, children, child_count, flags);
            })?;
            let (starts, count) = runs.record_stages(s, no_values, flags, cap_children)?;
            let parents = s.zeroed::<u32>(caps[level as usize] * words)?;
            let binds = [starts.all(), count.all(), children.all(), child_count.all(), parents.all()];
            s.dispatch("octree parents", &parent_nodes, &p, &binds, groups(caps[level as usize]), |p, b| {
                let [starts, count, children, child_count, nodes] = b else { unreachable!() };
                twin::parent_nodes(p, starts, count, children, child_count, nodes);
            })?;
            s.copy(count, 0, counts, level as usize, 1)?;
            child_count = count;
            levels.push(parents);
        }
        levels.reverse();
        pack(s, &caps, depth, key_words, counts, &levels)
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

    fn cpu_reported(&self, cloud: &Points, _: &dyn Progress) -> Result<(PackedOctree, Report)> {
        Report::timed(self.name(), || self.cpu(cloud))
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
