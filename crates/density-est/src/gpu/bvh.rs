//! The BVH over the disks on the GPU (`density/bvh.wgsl`), the stages of `bvh.rs` in the
//! same order: `morton`, the radix sort of (code, disk) pairs, `hierarchy`, `refit`, `pack`,
//! then `traverse` over the segments, piece by piece when they are longer than one storage
//! binding. Everything is recorded on the caller's recorder: no host round trip.

use lumbre_compact::record_sort_bits;
use lumbre_gpu::{Buffer, Fit, Recorder, Report, Result, pieces, record_iota};
use lumbre_shaders::density::BVH;

use super::{GpuEstimate, GpuProblem, accumulators, scale};
use crate::bvh::{BvhNode, centre_grid};

#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    lo: [f32; 3],
    disks: u32,
    inv: [f32; 3],
    count: u32,
    tau: f32,
    scale: f32,
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::BVH_PARAMS_SIZE);

const WG: usize = 256;

/// The built tree on the GPU.
pub(crate) struct GpuBvh {
    pub nodes: Buffer<BvhNode>,
}

/// Records the build of the tree over the problem's disks.
pub(crate) fn record_build(rec: &mut Recorder, input: &GpuProblem) -> Result<GpuBvh> {
    let gpu = rec.gpu().clone();
    let n = input.disks();
    let inner = n.saturating_sub(1).max(1);
    gpu.check_size("BVH nodes (64 bytes per disk)", (inner * size_of::<BvhNode>()) as u64, Fit::Binding)?;
    let (lo, inv) = centre_grid(&input.prep);
    let base = Params { lo: lo.into(), disks: n as u32, inv: inv.into(), ..Params::default() };
    let codes = gpu.zeroed::<u32>(n)?;
    let order = gpu.zeroed::<u32>(n)?;
    let children = gpu.zeroed::<[u32; 2]>(inner)?;
    let inner_parent = gpu.zeroed::<u32>(inner)?;
    let leaf_parent = gpu.zeroed::<u32>(n)?;
    let boxes = gpu.zeroed::<u32>(6 * inner)?;
    let nodes = gpu.zeroed::<BvhNode>(inner)?;
    let stand_in = gpu.zeroed::<u32>(16)?;
    let run = |rec: &mut Recorder, entry: &'static str, count: usize| -> Result<()> {
        let params = gpu.uniform(&Params { count: count as u32, ..base })?;
        let res = [
            params.as_entire_binding(),
            stand_in.binding(),
            stand_in.binding(),
            input.disks.binding(),
            input.disk_boxes.binding(),
            codes.binding(),
            order.binding(),
            children.binding(),
            inner_parent.binding(),
            leaf_parent.binding(),
            boxes.binding(),
            nodes.binding(),
            stand_in.binding(),
            stand_in.binding(),
        ];
        rec.dispatch("bvh build", &gpu.kernel(&BVH, entry)?, &res, (count as u64).div_ceil(WG as u64))
    };
    if n == 0 {
        return Ok(GpuBvh { nodes });
    }
    run(rec, "morton", n)?;
    record_iota(rec, &order, 0)?;
    record_sort_bits(rec, &codes, Some(&order), 30)?;
    if n > 1 {
        run(rec, "hierarchy", n - 1)?;
        run(rec, "refit", n)?;
    }
    run(rec, "pack", inner)?;
    Ok(GpuBvh { nodes })
}

/// Records the traversal of every segment through `bvh`, adding into `acc`; `counters`
/// gets node visits and disks tested.
pub(crate) fn record_traverse(
    rec: &mut Recorder,
    input: &GpuProblem,
    bvh: &GpuBvh,
    acc: &Buffer<u32>,
    counters: &Buffer<u32>,
) -> Result<()> {
    let gpu = rec.gpu().clone();
    let kernel = gpu.kernel(&BVH, "traverse")?;
    let stand_in = gpu.zeroed::<u32>(16)?;
    let piece = gpu.piece_len(32, WG);
    for (start, len) in pieces(input.segments, piece) {
        let params = gpu.uniform(&Params {
            disks: input.disks() as u32,
            count: len as u32,
            tau: 0.5 * input.prep.pad,
            scale: scale(input),
            ..Params::default()
        })?;
        let res = [
            params.as_entire_binding(),
            input.seg_geom.binding_range(2 * start..2 * (start + len)),
            input.seg_power.binding_range(start..start + len),
            input.disks.binding(),
            input.disk_boxes.binding(),
            stand_in.binding(),
            stand_in.binding(),
            stand_in.binding(),
            stand_in.binding(),
            stand_in.binding(),
            stand_in.binding(),
            bvh.nodes.binding(),
            acc.binding(),
            counters.binding(),
        ];
        rec.dispatch("bvh traverse", &kernel, &res, len.div_ceil(WG) as u64)?;
    }
    Ok(())
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
    Ok(GpuEstimate { acc, prep: input.prep.clone(), report, counters: Some(counters), counts_visits: true })
}
