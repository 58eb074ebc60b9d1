//! The segments' walk through the BVH on the CPU: segments in the Morton order of their
//! midpoints (stage `segment_keys`), each through the four-wide nodes (stage `traverse`),
//! crossings added to per-disk sums in tree order, then the sums back in the disks' order
//! (stage `unsort`).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use glam::Vec3;
use lumbre_compact::radix_sort_cpu;
use lumbre_gpu::Progress;
use lumbre_morton::encode_u32;
use rayon::prelude::*;

use crate::boxes::SegRay;
use crate::bvh::node::{Bvh, LEAF_BIT};
use crate::bvh::wide::{WideNode, hit_lanes, widen};
use crate::crossing::crossing;
use crate::fixed::{Acc, pow2, quantize3};
use crate::problem::{Prepared, Segment};

/// The traversal stack's size: radix trees of 30-bit codes with index tie-breaks are at
/// most 62 deep.
pub(crate) const STACK: usize = 64;

/// Per-disk sums shared by the traversal's threads.
pub(crate) struct AtomicAccs {
    count: Vec<AtomicU32>,
    power: Vec<[AtomicU64; 3]>,
}

impl AtomicAccs {
    pub fn new(n: usize) -> Self {
        AtomicAccs {
            count: (0..n).map(|_| AtomicU32::new(0)).collect(),
            power: (0..n).map(|_| [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]).collect(),
        }
    }

    fn add(&self, d: usize, q: [u64; 3]) {
        self.count[d].fetch_add(1, Ordering::Relaxed);
        for (s, v) in self.power[d].iter().zip(q) {
            if v != 0 {
                s.fetch_add(v, Ordering::Relaxed);
            }
        }
    }

    pub fn into_accs(self) -> Vec<Acc> {
        self.count
            .into_iter()
            .zip(self.power)
            .map(|(c, p)| Acc { count: c.into_inner(), power: p.map(|s| s.into_inner()) })
            .collect()
    }
}

/// One segment through the tree: every disk it crosses gets its power (at its sorted
/// position). Returns (inner nodes visited, disks tested).
#[inline]
pub(crate) fn traverse_one(
    bvh: &Bvh,
    nodes: &[WideNode],
    tau: f32,
    s: &Segment,
    scale: f32,
    out: &AtomicAccs,
) -> (u64, u64) {
    let ray = SegRay::new(s.start, s.end, tau);
    // Four-wide nodes are at most 31 deep and leave at most 3 siblings pending per level.
    let mut stack = [0u32; 3 * STACK / 2];
    let mut sp = 1usize;
    let (mut visited, mut tested) = (0u64, 0u64);
    while sp > 0 {
        sp -= 1;
        let node = &nodes[stack[sp] as usize];
        visited += 1;
        let mut lanes = hit_lanes(&ray, node);
        while lanes != 0 {
            let c = node.child[lanes.trailing_zeros() as usize];
            lanes &= lanes - 1;
            if c & LEAF_BIT != 0 {
                let p = (c & !LEAF_BIT) as usize;
                tested += 1;
                if crossing(s.start, s.end, &bvh.disks[p]).is_some() {
                    out.add(p, quantize3(s.power, scale));
                }
            } else {
                stack[sp] = c;
                sp += 1;
            }
        }
    }
    (visited, tested)
}

/// Stage `segment_keys`: the Morton code of each segment's midpoint in the root box (10
/// bits per axis); the traversal takes segments in the order of these codes.
pub(crate) fn segment_keys(segments: &[Segment], prep: &Prepared) -> Vec<u32> {
    let lo = prep.root.min;
    let inv = Vec3::splat(1024.0) / (prep.root.max - prep.root.min);
    segments
        .par_iter()
        .map(|s| {
            let m = (s.start + s.end) * 0.5;
            encode_u32(((m - lo) * inv).floor().clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3().to_array())
        })
        .collect()
}

/// Stage `traverse`: every segment through the tree, in the order of [`segment_keys`]
/// (rayon over chunks of that order; sums by atomic integer addition), then stage
/// `unsort`: the sums back in the disks' order. Returns the sums, node visits and disks
/// tested.
pub(crate) fn traverse(
    bvh: &Bvh,
    segments: &[Segment],
    prep: &Prepared,
    progress: &dyn Progress,
) -> (Vec<Acc>, u64, u64) {
    let scale = pow2(prep.scale_exp);
    let Some(grid) = bvh.grid else {
        return (vec![Acc::default(); prep.disks.len()], 0, 0);
    };
    let out = AtomicAccs::new(prep.disks.len());
    let nodes = widen(&bvh.nodes, &grid);
    let done = AtomicU64::new(0);
    let mut keys = segment_keys(segments, prep);
    let mut order: Vec<u32> = (0..segments.len() as u32).collect();
    radix_sort_cpu(&mut keys, Some(&mut order));
    const CHUNK: usize = 4096;
    let tau = prep.pad * 0.5;
    let (visited, tested) = order
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut sum = (0, 0);
            for &i in chunk {
                let (v, t) = traverse_one(bvh, &nodes, tau, &segments[i as usize], scale, &out);
                sum = (sum.0 + v, sum.1 + t);
            }
            let d = done.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
            progress.update("gather", d, segments.len() as u64);
            sum
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (unsort(&out.into_accs(), &bvh.order), visited, tested)
}

/// Stage `unsort`: sums at sorted positions back at their disks.
pub(crate) fn unsort(sorted: &[Acc], order: &[u32]) -> Vec<Acc> {
    let mut out = vec![Acc::default(); sorted.len()];
    for (a, &d) in sorted.iter().zip(order) {
        out[d as usize] = *a;
    }
    out
}
