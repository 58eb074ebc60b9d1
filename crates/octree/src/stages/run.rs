//! The GPU octree build on a [`StageRunner`]: the stages of `GpuBuild`'s upload, record and
//! download in their order, each of which may run as its CPU twin.

use lumbre_compact::stages::{Buf, StageRunner, run_compact, run_scan, run_sort};
use lumbre_compact::{Compact, Emit, Lookback, ScanKind, ScanMethod, Select};
use lumbre_gpu::{Compute, Result};
use lumbre_morton::{Keys, MortonEncode};
use lumbre_shaders::Shader;

use super::{BuildParams, GatherParams, build, gather};
use crate::build::{check, finite_points, quantizer};
use crate::gpu::{capacities, err, plane_words};
use crate::{GpuBuild, Inner, PackedOctree, Payload, Points};

fn groups(k: usize) -> u64 {
    (k as u64).div_ceil(256)
}

/// The build of `cloud` as [`GpuBuild`] runs it on the GPU, stage by stage on `r`: the codes
/// (by the Morton encoder's CPU path, which equals its kernel), the identity order
/// (`runtime/iota`), the sort ([`run_sort`]), per level the flags, the compaction
/// ([`run_compact`]) and the nodes, then the packing. Returns the tree as
/// [`Compute::gpu`](lumbre_gpu::Compute::gpu) does.
///
/// ```
/// use lumbre_compact::stages::StageRunner;
/// use lumbre_octree::{Attrs, GpuBuild, Points};
/// let cloud = Points { positions: vec![[0.0; 3], [1.0; 3]], attrs: vec![Attrs::default(); 2] };
/// let tree = lumbre_octree::stages::run_build(&mut StageRunner::cpu(), &GpuBuild::new(12), &cloud)?;
/// assert_eq!((tree.points(), tree.leaf_count()), (2, 2));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn run_build(r: &mut StageRunner, b: &GpuBuild, cloud: &Points) -> Result<PackedOctree> {
    // The upload: finite points and their root.
    check(cloud.positions.len(), cloud.attrs.len(), b.depth).map_err(err)?;
    let root = b.root_for(&cloud.positions)?;
    let (keep, _) = finite_points(&cloud.positions);
    let xyz: Vec<[f32; 3]> = keep.iter().map(|&i| cloud.positions[i as usize]).collect();
    let attrs: Vec<[u32; 2]> = keep.iter().map(|&i| cloud.attrs[i as usize].packed()).collect();
    let (n, depth) = (xyz.len(), b.depth);
    check(n, n, depth).map_err(err)?;
    if n == 0 {
        return Err(err(crate::OctreeError::Empty));
    }
    let attrs = r.upload(&attrs);
    let caps = capacities(n, depth);
    let (key_words, words) = plane_words(depth);
    let shader = if key_words == 2 { lumbre_shaders::octree::BUILD_KEY64 } else { lumbre_shaders::octree::BUILD_KEY32 };
    // 1. Leaf codes and the sort of (code, point) pairs.
    let codes = match quantizer(root, depth) {
        Some(quantizer) => match (MortonEncode { quantizer, clamp: true }).cpu(&xyz)? {
            Keys::U32(k) => r.upload(&k),
            Keys::U64(k) => r.upload(&k),
        },
        None => r.zeroed(n),
    };
    let order = r.zeroed(n);
    r.stage(
        &lumbre_shaders::runtime::IOTA,
        "main",
        &[n as u32, 0],
        &[order.all()],
        (n as u64).div_ceil(64),
        |p, b| {
            lumbre_gpu::iota_cpu(&mut b[0], p[1]);
        },
    )?;
    run_sort(r, codes, Some(order), n, key_words as u32, 3 * depth)?;
    let flags = r.zeroed(n);
    let counts = r.zeroed(depth as usize + 1);
    let params = |n: usize, level: u32| BuildParams { n: n as u32, depth, level, out_cap: caps[level as usize] as u32 };
    let runs = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
    let no_values = r.zeroed(1);
    // 2. Leaves: runs of equal codes.
    let p = params(n, depth);
    r.stage(&shader, "leaf_flags", &p, &[codes.all(), flags.all()], groups(n), |p, b| {
        let [codes, flags] = b else { unreachable!() };
        build::leaf_flags(p, codes, flags);
    })?;
    let (starts, count) = run_compact(r, &runs, no_values, flags, n)?;
    let leaves = r.zeroed(caps[depth as usize] * words);
    let binds = [codes.all(), order.all(), attrs.all(), starts.all(), count.all(), leaves.all()];
    r.stage(&shader, "leaf_nodes", &p, &binds, groups(caps[depth as usize]), |p, b| {
        let [codes, order, attrs, starts, count, nodes] = b else { unreachable!() };
        build::leaf_nodes(p, codes, order, bytemuck::cast_slice(attrs), starts, count, nodes);
    })?;
    r.copy(count, 0, counts, depth as usize, 1)?;
    // 3. Parents, level by level up to the root.
    let mut levels = vec![leaves];
    let mut child_count = count;
    for level in (0..depth).rev() {
        let children = *levels.last().expect("the leaves");
        let cap_children = caps[level as usize + 1];
        let p = params(cap_children, level);
        r.stage(
            &shader,
            "parent_flags",
            &p,
            &[children.all(), child_count.all(), flags.all()],
            groups(cap_children),
            |p, b| {
                let [children, child_count, flags] = b else { unreachable!() };
                build::parent_flags(p, children, child_count, flags);
            },
        )?;
        let (starts, count) = run_compact(r, &runs, no_values, flags, cap_children)?;
        let parents = r.zeroed(caps[level as usize] * words);
        let binds = [starts.all(), count.all(), children.all(), child_count.all(), parents.all()];
        r.stage(&shader, "parent_nodes", &p, &binds, groups(caps[level as usize]), |p, b| {
            let [starts, count, children, child_count, nodes] = b else { unreachable!() };
            build::parent_nodes(p, starts, count, children, child_count, nodes);
        })?;
        r.copy(count, 0, counts, level as usize, 1)?;
        child_count = count;
        levels.push(parents);
    }
    levels.reverse();
    // 4. The packed form.
    let pack = Packing::new(r, &caps, depth, key_words, counts, levels);
    pack.run(r)?;
    let mut offsets = r.read(pack.offsets)?;
    let payload_count = offsets.pop().unwrap_or(0) as usize;
    let interior = *offsets.last().unwrap_or(&0) as usize;
    let mut nodes: Vec<Inner> = r.read_as(pack.nodes)?;
    let mut payloads: Vec<Payload> = r.read_as(pack.payloads)?;
    if interior > nodes.len() || payload_count > payloads.len() {
        return Err(lumbre_gpu::Error::Input(format!(
            "the build counted {interior} nodes and {payload_count} payloads, room for {} and {}",
            nodes.len(),
            payloads.len()
        )));
    }
    nodes.truncate(interior);
    payloads.truncate(payload_count);
    Ok(PackedOctree { root, depth, nodes, levels: offsets, payloads })
}

/// The buffers of the packing (`octree/gather.wgsl`).
struct Packing {
    caps: Vec<usize>,
    depth: u32,
    key_words: usize,
    /// Where each level's flags start in `owner` (leaves first), one more for the end.
    seg: Vec<usize>,
    counts: Buf,
    offsets: Buf,
    levels: Vec<Buf>,
    nodes: Buf,
    owner: Buf,
    payload_of: Buf,
    payloads: Buf,
}

impl Packing {
    fn new(r: &mut StageRunner, caps: &[usize], depth: u32, key_words: usize, counts: Buf, levels: Vec<Buf>) -> Self {
        let mut seg = vec![0usize; depth as usize + 2];
        for l in (0..depth as usize).rev() {
            seg[l] = seg[l + 1] + caps[l + 1];
        }
        let flags_len = seg[0] + caps[0];
        let interior: usize = caps[..depth as usize].iter().sum();
        let payloads = (2 * caps[depth as usize]).min(caps.iter().sum());
        let words = |n: usize, bytes: usize| n * bytes / 4;
        Packing {
            caps: caps.to_vec(),
            depth,
            key_words,
            counts,
            offsets: r.zeroed(depth as usize + 2),
            levels,
            nodes: r.zeroed(words(interior.max(1), size_of::<Inner>())),
            owner: r.zeroed(flags_len),
            payload_of: r.zeroed(flags_len),
            payloads: r.zeroed(words(payloads, size_of::<Payload>())),
            seg,
        }
    }

    fn params(&self, l: usize) -> GatherParams {
        GatherParams {
            n: self.caps[l] as u32,
            depth: self.depth,
            level: l as u32,
            key_words: self.key_words as u32,
            seg: self.seg[l] as u32,
            seg_below: self.seg[l + 1] as u32,
            _pad: [0; 2],
        }
    }

    /// Runs entry `entry` for level `l`, one thread per node slot of the level.
    fn stage(
        &self,
        r: &mut StageRunner,
        entry: &'static str,
        l: usize,
        binds: &[Buf],
        twin: impl FnOnce(&GatherParams, &mut [Vec<u32>]),
    ) -> Result<()> {
        const GATHER: Shader = lumbre_shaders::octree::GATHER;
        let groups = if entry == "level_offsets" { 1 } else { groups(self.caps[l]) };
        let binds: Vec<_> = binds.iter().map(|b| b.all()).collect();
        r.stage(&GATHER, entry, &self.params(l), &binds, groups, twin)
    }

    fn run(&self, r: &mut StageRunner) -> Result<()> {
        let d = self.depth as usize;
        let (counts, offsets, owner, payload_of) = (self.counts, self.offsets, self.owner, self.payload_of);
        for l in 0..=d {
            self.stage(r, "owner_flags", l, &[counts, self.levels[l], owner], |p, b| {
                let [counts, level, owner] = b else { unreachable!() };
                gather::owner_flags(p, counts, level, owner);
            })?;
        }
        let flags_len = r.len(owner);
        run_scan::<u32>(r, owner, payload_of, flags_len, ScanKind::Exclusive, ScanMethod::Auto, Lookback::default())?;
        self.stage(r, "level_offsets", 0, &[counts, offsets, owner, payload_of], |p, b| {
            let [counts, offsets, owner, payload_of] = b else { unreachable!() };
            gather::level_offsets(p, counts, offsets, owner, payload_of);
        })?;
        for l in (0..d).rev() {
            self.stage(r, "payload_index", l, &[counts, self.levels[l], owner, payload_of], |p, b| {
                let [counts, level, owner, payload_of] = b else { unreachable!() };
                gather::payload_index(p, counts, level, owner, payload_of);
            })?;
        }
        for l in 0..d {
            self.stage(r, "gather_nodes", l, &[counts, offsets, self.levels[l], self.nodes, payload_of], |p, b| {
                let [counts, offsets, level, nodes, payload_of] = b else { unreachable!() };
                gather::gather_nodes(p, counts, offsets, level, bytemuck::cast_slice_mut(nodes), payload_of);
            })?;
        }
        for l in 0..=d {
            self.stage(
                r,
                "gather_payloads",
                l,
                &[counts, self.levels[l], owner, payload_of, self.payloads],
                |p, b| {
                    let [counts, level, owner, payload_of, payloads] = b else { unreachable!() };
                    gather::gather_payloads(p, counts, level, owner, payload_of, bytemuck::cast_slice_mut(payloads));
                },
            )?;
        }
        Ok(())
    }
}
