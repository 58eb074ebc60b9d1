//! Brute force: every disk against every segment (one task per disk, segments in order).

use rayon::prelude::*;

use crate::crossing::crossing;
use crate::fixed::{Acc, pow2, quantize3};
use crate::problem::{Prepared, Segment};

/// Each disk's crossings and power, testing every segment (CPU twin of
/// `density/brute.wgsl`).
pub(crate) fn brute_force(segments: &[Segment], prep: &Prepared) -> Vec<Acc> {
    let scale = pow2(prep.scale_exp);
    prep.disks
        .par_iter()
        .map(|d| {
            let mut acc = Acc::default();
            for s in segments {
                if crossing(s.start, s.end, d).is_some() {
                    acc.add(quantize3(s.power, scale));
                }
            }
            acc
        })
        .collect()
}
