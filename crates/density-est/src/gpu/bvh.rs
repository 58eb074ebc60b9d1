//! The BVH over the disks on the GPU (`density/bvh.wgsl`), the stages of `bvh/build.rs` and `bvh/traverse.rs` in the
//! same order: `morton`, the radix sort of (code, disk) pairs, the radix tree of
//! `lumbre_morton`, `empty_boxes` and `refit`, `gather`, `pack`; then per piece of the segments (pieces when they are longer than one
//! storage binding) `segment_keys`, their radix sort and `traverse`; then `unsort`.
//! Everything is recorded on the caller's recorder: no host round trip.

use lumbre_compact::record_sort_bits;
use lumbre_gpu::{Buffer, Fit, Recorder, Report, Result, pieces, record_iota, wgpu::BindingResource};
use lumbre_morton::{RadixNode, RadixTreeBuild};
use lumbre_shaders::density::BVH;

use crate::bvh::node::{MAX_DISKS, QuantGrid};
use crate::gpu::estimate::{ACC_WORDS, GpuEstimate, accumulators};
use crate::gpu::problem::GpuProblem;
use crate::problem::DiskData;

#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    lo: [f32; 3],
    disks: u32,
    inv: [f32; 3],
    count: u32,
    root_lo: [f32; 3],
    tau: f32,
    step: [f32; 3],
    scale: f32,
    qinv: [f32; 3],
    _p0: u32,
    seg_inv: [f32; 3],
    _p1: u32,
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::BVH_PARAMS_SIZE);

const WG: usize = 256;

/// The built tree on the GPU: nodes (two vec4<u32> each), the disks in tree order, and
/// `order` (sorted position -> disk).
pub(crate) struct GpuBvh {
    nodes: Buffer<[u32; 4]>,
    sorted_disks: Buffer<DiskData>,
    order: Buffer<u32>,
}

/// Every binding of the shader; unused ones get `stand_in`.
#[derive(Default)]
struct Slots<'a> {
    seg_geom: Option<BindingResource<'a>>,
    seg_power: Option<BindingResource<'a>>,
    codes: Option<&'a Buffer<u32>>,
    order: Option<&'a Buffer<u32>>,
    tree: Option<&'a Buffer<RadixNode>>,
    leaf_parents: Option<&'a Buffer<u32>>,
    boxes: Option<&'a Buffer<u32>>,
    nodes: Option<&'a Buffer<[u32; 4]>>,
    sorted_disks: Option<&'a Buffer<DiskData>>,
    acc_sorted: Option<&'a Buffer<u32>>,
    counters: Option<&'a Buffer<u32>>,
    seg_keys: Option<&'a Buffer<u32>>,
    seg_order: Option<&'a Buffer<u32>>,
    acc: Option<&'a Buffer<u32>>,
}

fn bind_or<'x>(b: Option<&'x Buffer<u32>>, stand_in: &'x Buffer<u32>) -> BindingResource<'x> {
    b.unwrap_or(stand_in).binding()
}

fn dispatch(
    rec: &mut Recorder,
    input: &GpuProblem,
    label: &'static str,
    entry: &'static str,
    params: &Params,
    s: Slots<'_>,
) -> Result<()> {
    let gpu = rec.gpu().clone();
    let stand_in = gpu.zeroed::<u32>(16)?;
    let uniform = gpu.uniform(params)?;
    let or = |b| bind_or(b, &stand_in);
    let res = [
        uniform.as_entire_binding(),
        s.seg_geom.unwrap_or_else(|| stand_in.binding()),
        s.seg_power.unwrap_or_else(|| stand_in.binding()),
        input.disks.binding(),
        input.disk_boxes.binding(),
        or(s.codes),
        or(s.order),
        s.tree.map_or_else(|| stand_in.binding(), |b| b.binding()),
        or(s.leaf_parents),
        or(s.boxes),
        s.nodes.map_or_else(|| stand_in.binding(), |b| b.binding()),
        s.sorted_disks.map_or_else(|| stand_in.binding(), |b| b.binding()),
        or(s.acc_sorted),
        or(s.counters),
        or(s.seg_keys),
        or(s.seg_order),
        or(s.acc),
    ];
    let groups = (params.count as u64).div_ceil(WG as u64);
    rec.dispatch(label, &gpu.kernel(&BVH, entry)?, &res, groups)
}

fn base_params(input: &GpuProblem) -> Params {
    let frame = &input.layout.frame;
    let (lo, inv) = input.layout.centre_grid;
    let grid = QuantGrid::of_root(&frame.root);
    let size = frame.root.max - frame.root.min;
    Params {
        lo: lo.into(),
        disks: input.disks() as u32,
        inv: inv.into(),
        root_lo: grid.lo.into(),
        tau: 0.5 * frame.pad,
        step: grid.step.into(),
        scale: input.scale(),
        qinv: grid.inv.into(),
        seg_inv: (glam::Vec3::splat(1024.0) / size).into(),
        ..Params::default()
    }
}

/// Records the build of the tree over the problem's disks.
pub(crate) fn record_build(rec: &mut Recorder, input: &GpuProblem) -> Result<GpuBvh> {
    let gpu = rec.gpu().clone();
    let n = input.disks();
    if n > MAX_DISKS {
        return Err(lumbre_gpu::Error::Input(format!("{n} disks: the BVH takes at most {MAX_DISKS}")));
    }
    let inner = n.saturating_sub(1).max(1);
    gpu.check_size("BVH nodes (32 bytes per disk)", (inner * 32) as u64, Fit::Binding)?;
    let base = base_params(input);
    let codes = gpu.zeroed::<u32>(n)?;
    let order = gpu.zeroed::<u32>(n)?;
    let boxes = gpu.zeroed::<u32>(6 * inner)?;
    let nodes = gpu.zeroed::<[u32; 4]>(2 * inner)?;
    let sorted_disks = gpu.zeroed::<DiskData>(n.max(1))?;
    if n == 0 {
        return Ok(GpuBvh { nodes, sorted_disks, order });
    }
    let with = |count: usize| Params { count: count as u32, ..base };
    let keys = Slots { codes: Some(&codes), ..Slots::default() };
    dispatch(rec, input, "bvh build", "morton", &with(n), keys)?;
    record_iota(rec, &order, 0)?;
    record_sort_bits(rec, &codes, Some(&order), 30)?;
    let tree = RadixTreeBuild.record_tree(rec, &codes)?;
    let slots = || Slots {
        codes: Some(&codes),
        order: Some(&order),
        tree: Some(&tree.nodes),
        leaf_parents: Some(&tree.leaf_parents),
        boxes: Some(&boxes),
        nodes: Some(&nodes),
        sorted_disks: Some(&sorted_disks),
        ..Slots::default()
    };
    if n > 1 {
        dispatch(rec, input, "bvh build", "empty_boxes", &with(n - 1), slots())?;
        dispatch(rec, input, "bvh build", "refit", &with(n), slots())?;
    }
    dispatch(rec, input, "bvh build", "gather", &with(n), slots())?;
    dispatch(rec, input, "bvh build", "pack", &with(inner), slots())?;
    Ok(GpuBvh { nodes, sorted_disks, order })
}

/// Records the traversal of every segment through `bvh` (piece by piece), then the sums
/// back in the disks' order into `acc`; `counters` gets node visits and disks tested.
pub(crate) fn record_traverse(
    rec: &mut Recorder,
    input: &GpuProblem,
    bvh: &GpuBvh,
    acc: &Buffer<u32>,
    counters: &Buffer<u32>,
) -> Result<()> {
    let gpu = rec.gpu().clone();
    let n = input.disks();
    if n == 0 || input.segments == 0 {
        return Ok(());
    }
    let base = base_params(input);
    let acc_sorted = gpu.zeroed::<u32>(ACC_WORDS * n)?;
    let piece = gpu.piece_len(32, WG);
    let longest = input.segments.min(piece);
    let keys = gpu.zeroed::<u32>(longest)?;
    let seg_order = gpu.zeroed::<u32>(longest)?;
    for (start, len) in pieces(input.segments, piece) {
        // The sort takes its length from the buffers: the last, shorter piece gets its own.
        let (k, o) =
            if len == longest { (keys.clone(), seg_order.clone()) } else { (gpu.zeroed(len)?, gpu.zeroed(len)?) };
        let with = || Slots {
            seg_geom: Some(input.seg_geom.binding_range(2 * start..2 * (start + len))),
            seg_power: Some(input.seg_power.binding_range(start..start + len)),
            nodes: Some(&bvh.nodes),
            sorted_disks: Some(&bvh.sorted_disks),
            acc_sorted: Some(&acc_sorted),
            counters: Some(counters),
            seg_keys: Some(&k),
            seg_order: Some(&o),
            ..Slots::default()
        };
        let p = Params { count: len as u32, ..base };
        dispatch(rec, input, "bvh traverse", "segment_keys", &p, with())?;
        record_iota(rec, &o, 0)?;
        record_sort_bits(rec, &k, Some(&o), 30)?;
        dispatch(rec, input, "bvh traverse", "traverse", &p, with())?;
    }
    let slots = Slots { order: Some(&bvh.order), acc_sorted: Some(&acc_sorted), acc: Some(acc), ..Slots::default() };
    dispatch(rec, input, "bvh traverse", "unsort", &Params { count: n as u32, ..base }, slots)
}

/// Records build and traversal.
pub(crate) fn record(rec: &mut Recorder, input: &GpuProblem) -> Result<GpuEstimate> {
    let gpu = rec.gpu().clone();
    let acc = accumulators(&gpu, input)?;
    let counters = gpu.zeroed::<u32>(4)?;
    let bvh = record_build(rec, input)?;
    record_traverse(rec, input, &bvh, &acc, &counters)?;
    let mut report = Report::default();
    report.stat("bvh nodes", input.disks().saturating_sub(1).max(1) as f64);
    Ok(GpuEstimate { counts_visits: true, ..GpuEstimate::new(input, acc, report, Some(counters)) })
}
