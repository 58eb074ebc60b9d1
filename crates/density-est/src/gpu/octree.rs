//! The paper's octree on the GPU (`density/octree.wgsl`), the stages of `octree.rs` in the
//! same order: per level, `classify`, a scan of the split flags (`list_splits`), `leaves`,
//! then per kind (segments, disks) `child_flags` and a stream compaction, and for the next
//! level `children`, `gather` and `ranges`. A whole level runs in one dispatch per stage;
//! the sizes of the next level (split nodes, kept entries) are read back between levels, so
//! the recording flushes the recorder once per level (work recorded before it runs first).

use lumbre_compact::{Compact, Emit, GpuCompacted, GpuStream, HistoPyramid, ScanKind, Select, record_scan};
use lumbre_gpu::{Buffer, Compute, Fit, Recorder, Report, Result, record_iota};
use lumbre_shaders::density::OCTREE;

use crate::fixed::pow2;
use crate::gpu::estimate::{GpuEstimate, accumulators};
use crate::gpu::problem::GpuProblem;
use crate::octree::{Filter, Grid, Node, OctreeOptions, check_entries};

#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    lo: [f32; 3],
    depth: u32,
    inv_finest: [f32; 3],
    level: u32,
    step: [f32; 3],
    pad: f32,
    count: u32,
    entries: u32,
    splits: u32,
    leaf_pairs: u32,
    kind: u32,
    scale: f32,
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::OCTREE_PARAMS_SIZE);

const WG: usize = 256;

/// One level's buffers on the GPU, with their lengths on the host.
struct Level {
    nodes: Buffer<Node>,
    seg_items: Buffer<u32>,
    seg_node: Buffer<u32>,
    disk_items: Buffer<u32>,
    disk_node: Buffer<u32>,
    node_count: usize,
    segs: usize,
    disks: usize,
}

/// Every binding of the shader, in order; `None` entries get the stand-in.
struct Bindings<'a> {
    input: &'a GpuProblem,
    stand_in: &'a Buffer<u32>,
    acc: &'a Buffer<u32>,
    counters: &'a Buffer<u32>,
}

#[derive(Default)]
struct Slots<'a> {
    nodes: Option<&'a Buffer<Node>>,
    seg_items: Option<&'a Buffer<u32>>,
    disk_items: Option<&'a Buffer<u32>>,
    disk_node: Option<&'a Buffer<u32>>,
    items: Option<&'a Buffer<u32>>,
    item_node: Option<&'a Buffer<u32>>,
    split: Option<&'a Buffer<u32>>,
    rank: Option<&'a Buffer<u32>>,
    split_list: Option<&'a Buffer<u32>>,
    flags: Option<&'a Buffer<u32>>,
    kept: Option<&'a Buffer<u32>>,
    next_items: Option<&'a Buffer<u32>>,
    next_node: Option<&'a Buffer<u32>>,
    next_nodes: Option<&'a Buffer<Node>>,
}

impl Bindings<'_> {
    fn dispatch<'s>(
        &'s self,
        rec: &mut Recorder,
        label: &'static str,
        entry: &'static str,
        params: &Params,
        s: Slots<'s>,
    ) -> Result<()> {
        let gpu = rec.gpu().clone();
        let kernel = gpu.kernel(&OCTREE, entry)?;
        let uniform = gpu.uniform(params)?;
        let u = |b: Option<&'s Buffer<u32>>| b.unwrap_or(self.stand_in).binding();
        let nodes_or = |b: Option<&'s Buffer<Node>>| match b {
            Some(b) => b.binding(),
            None => self.stand_in.binding(),
        };
        let res = [
            uniform.as_entire_binding(),
            self.input.seg_geom.binding(),
            self.input.seg_power.binding(),
            self.input.disks.binding(),
            self.input.disk_boxes.binding(),
            nodes_or(s.nodes),
            u(s.seg_items),
            u(s.disk_items),
            u(s.disk_node),
            u(s.items),
            u(s.item_node),
            u(s.split),
            u(s.rank),
            u(s.split_list),
            u(s.flags),
            u(s.kept),
            u(s.next_items),
            u(s.next_node),
            nodes_or(s.next_nodes),
            self.acc.binding(),
            self.counters.binding(),
        ];
        rec.dispatch(label, &kernel, &res, (params.count as u64).div_ceil(WG as u64))
    }
}

/// The compaction of `flags` (length `n`), emitting kept positions.
fn compact(
    rec: &mut Recorder,
    flags: &Buffer<u32>,
    n: usize,
    filter: Filter,
    stand_in: &Buffer<u32>,
) -> Result<GpuCompacted> {
    let stream = GpuStream { values: stand_in.clone(), flags: flags.clone(), len: n };
    match filter {
        Filter::Compact => {
            Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() }.record_compact(rec, &stream)
        }
        Filter::HistoPyramid => {
            HistoPyramid { select: Select::Flags, emit: Emit::Indices, index_base: 0 }.record(rec, &stream)
        }
    }
}

/// Records the octree: all levels but the last are submitted (their sizes are read back);
/// the last level's leaves stay in `rec`.
pub(crate) fn record(rec: &mut Recorder, input: &GpuProblem, opts: &OctreeOptions) -> Result<GpuEstimate> {
    opts.check()?;
    let gpu = rec.gpu().clone();
    gpu.check_size(
        "segments (the octree binds them whole; Method::Bvh takes them in pieces)",
        input.seg_geom.size_bytes(),
        Fit::Binding,
    )?;
    let mut report = Report::default();
    let acc = accumulators(&gpu, input)?;
    let counters = gpu.zeroed::<u32>(4)?;
    // Stands in for unused bindings: 32 bytes, one node.
    let stand_in = gpu.zeroed::<u32>(8)?;
    let b = Bindings { input, stand_in: &stand_in, acc: &acc, counters: &counters };
    let frame = &input.layout.frame;
    let grid = Grid::of_root(&frame.root, frame.pad, opts.max_depth);
    let base = Params {
        lo: grid.lo.into(),
        depth: opts.max_depth,
        inv_finest: grid.inv_finest.into(),
        pad: grid.pad,
        leaf_pairs: opts.leaf_pairs,
        scale: input.scale(),
        ..Params::default()
    };
    let (segs, disks) = (input.segments, input.disks());
    let root = Node { cell: [0; 3], state: 0, seg: [0, segs as u32], disk: [0, disks as u32] };
    let mut level = Level {
        nodes: gpu.upload(&[root])?,
        seg_items: gpu.zeroed(segs)?,
        seg_node: gpu.zeroed(segs)?,
        disk_items: gpu.zeroed(disks)?,
        disk_node: gpu.zeroed(disks)?,
        node_count: 1,
        segs,
        disks,
    };
    record_iota(rec, &level.seg_items, 0)?;
    record_iota(rec, &level.disk_items, 0)?;
    let mut leaf_levels = 0;
    for depth in 0..=opts.max_depth {
        let m = level.node_count;
        report.stat(&format!("octree level {depth} nodes"), m as f64);
        report.stat(&format!("octree level {depth} segment entries"), level.segs as f64);
        report.stat(&format!("octree level {depth} disk entries"), level.disks as f64);
        leaf_levels = depth;
        let at = Params { level: depth, step: (grid.size * pow2(-(depth as i32 + 1))).into(), ..base };
        let split = gpu.zeroed::<u32>(m)?;
        let rank = gpu.zeroed::<u32>(m)?;
        let split_list = gpu.zeroed::<u32>(m)?;
        let with_nodes = || Slots {
            nodes: Some(&level.nodes),
            split: Some(&split),
            rank: Some(&rank),
            split_list: Some(&split_list),
            ..Default::default()
        };
        b.dispatch(rec, "octree build", "classify", &Params { count: m as u32, ..at }, with_nodes())?;
        let scan = record_scan(rec, &split, &rank, ScanKind::Exclusive)?;
        b.dispatch(rec, "octree build", "list_splits", &Params { count: m as u32, ..at }, with_nodes())?;
        let leaf_slots = Slots {
            nodes: Some(&level.nodes),
            seg_items: Some(&level.seg_items),
            disk_items: Some(&level.disk_items),
            disk_node: Some(&level.disk_node),
            ..Default::default()
        };
        b.dispatch(rec, "octree leaves", "leaves", &Params { count: level.disks as u32, ..at }, leaf_slots)?;
        if depth == opts.max_depth {
            break;
        }
        // Child flags and their compaction, per kind.
        let mut kept = Vec::new();
        for (kind, items, item_node, n) in [
            (0u32, &level.seg_items, &level.seg_node, level.segs),
            (1, &level.disk_items, &level.disk_node, level.disks),
        ] {
            let expanded = 8 * n;
            gpu.check_size(
                &format!("octree level {depth}: child flags of {n} entries (lower max_depth or leaf_pairs' reach, or use Method::Bvh)"),
                4 * expanded as u64,
                Fit::Binding,
            )?;
            if u32::try_from(expanded).is_err() {
                return Err(lumbre_gpu::Error::Input(format!("octree level {depth}: 8 x {n} child flags exceed 2^32")));
            }
            let flags = gpu.zeroed::<u32>(expanded)?;
            let slots = Slots {
                nodes: Some(&level.nodes),
                items: Some(items),
                item_node: Some(item_node),
                flags: Some(&flags),
                ..Default::default()
            };
            b.dispatch(
                rec,
                "octree build",
                "child_flags",
                &Params { count: expanded as u32, entries: n as u32, kind, ..at },
                slots,
            )?;
            kept.push(compact(rec, &flags, expanded, opts.filter, &stand_in)?);
        }
        let sizes = gpu.zeroed::<u32>(4)?;
        rec.copy_range(scan.carry(), scan.carry().len() - 1, &sizes, 0, 1)?;
        rec.copy_range(&kept[0].count, 0, &sizes, 1, 1)?;
        rec.copy_range(&kept[1].count, 0, &sizes, 2, 1)?;
        crate::gpu::flush(rec, "octree", &mut report)?;
        let got = gpu.download(&sizes)?;
        let (s, next_segs, next_disks) = (got[0] as usize, got[1] as usize, got[2] as usize);
        if s == 0 {
            break;
        }
        check_entries(depth + 1, next_segs, next_disks)?;
        let next = Level {
            nodes: gpu.zeroed(8 * s)?,
            seg_items: gpu.zeroed(next_segs)?,
            seg_node: gpu.zeroed(next_segs)?,
            disk_items: gpu.zeroed(next_disks)?,
            disk_node: gpu.zeroed(next_disks)?,
            node_count: 8 * s,
            segs: next_segs,
            disks: next_disks,
        };
        let at = Params { splits: s as u32, ..at };
        let slots = Slots {
            nodes: Some(&level.nodes),
            split_list: Some(&split_list),
            next_nodes: Some(&next.nodes),
            ..Default::default()
        };
        b.dispatch(rec, "octree build", "children", &Params { count: 8 * s as u32, ..at }, slots)?;
        for (kind, items, item_node, n, kept, next_items, next_node, next_n) in [
            (0u32, &level.seg_items, &level.seg_node, level.segs, &kept[0], &next.seg_items, &next.seg_node, next_segs),
            (
                1,
                &level.disk_items,
                &level.disk_node,
                level.disks,
                &kept[1],
                &next.disk_items,
                &next.disk_node,
                next_disks,
            ),
        ] {
            let p = Params { count: next_n as u32, entries: n as u32, kind, ..at };
            let slots = Slots {
                items: Some(items),
                item_node: Some(item_node),
                rank: Some(&rank),
                kept: Some(&kept.out),
                next_items: Some(next_items),
                next_node: Some(next_node),
                ..Default::default()
            };
            b.dispatch(rec, "octree build", "gather", &p, slots)?;
            let slots = Slots { next_node: Some(next_node), next_nodes: Some(&next.nodes), ..Default::default() };
            b.dispatch(rec, "octree build", "ranges", &p, slots)?;
        }
        level = next;
    }
    report.stat("octree depth reached", leaf_levels as f64);
    Ok(GpuEstimate::new(input, acc, report, Some(counters)))
}
