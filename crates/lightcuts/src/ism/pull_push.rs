//! Stage 3, pull-push hole filling (Grossman and Dally 1998, Marroquim et al. 2007, as in
//! the source work's section 3.3), map by map. The CPU twin of
//! `lightcuts/ism_pull_push.wgsl` (`gpu/ism/pull_push.rs`).
//!
//! - Pull: level `l` is level `l - 1` halved, each texel the mean of the valid texels of
//!   its 2x2 block (a hole if it has none), for `l = 1..=levels`.
//! - Push: from the top down, each hole of level `l - 1` is filled by bilinear
//!   interpolation of level `l` at the hole's centre: the nearest coarse texel weighs 9/16,
//!   its neighbours towards the hole 3/16 each and the diagonal one 1/16. Taps outside the
//!   map (no bleeding into the neighbouring VPL's map) and holes left at the top level are
//!   dropped and the weights renormalised. Valid texels are never changed.
//!
//! For a depth that is linear in the texel position, the mean of a 2x2 block whose valid
//! texels are symmetric about its centre (all four, a diagonal pair, or none) is the
//! depth at the centre, and bilinear interpolation of a linear function is exact: holes
//! whose blocks keep that symmetry at every level, away from the map's border, are filled
//! with the exact ramp. Products are by powers of two or table reciprocals and weights 9
//! and 3 are `8v + v` and `2v + v`, so contracting them into fused multiply-adds changes
//! nothing; a driver that reassociates the sums still may (see the module notes).

use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::ism::atlas::IsmAtlas;
use crate::ism::options::SIZES;

/// Stage 3: pull-push hole filling of every map of an atlas over `levels` levels; the GPU
/// path fills a copy.
///
/// - Pull: level `l` is level `l - 1` halved, each texel the mean of the valid texels of
///   its 2x2 block (a hole if it has none), for `l = 1..=levels`.
/// - Push: from the top down, each hole of level `l - 1` is filled by bilinear
///   interpolation of level `l` at the hole's centre: the nearest coarse texel weighs 9/16,
///   its neighbours towards the hole 3/16 each and the diagonal one 1/16. Taps outside the
///   map (no bleeding into the neighbouring VPL's map) and holes left at the top level are
///   dropped and the weights renormalised. Valid texels never change, so a map without
///   holes comes out as it went in.
///
/// A depth linear in the texel position comes out exact wherever each 2x2 block at each
/// level has all, none or a diagonal pair of its texels valid (their mean is then the
/// block's centre value), away from the map's border.
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::ism::{IsmAtlas, PullPush};
/// let mut atlas = IsmAtlas::empty(32, 1);
/// atlas.depth[33] = 2.0; // one texel seen
/// let filled = PullPush { levels: 5 }.run(&Backend::Cpu, &atlas)?;
/// assert_eq!(filled.holes(), 0);
/// assert!(filled.depth.iter().all(|&d| d == 2.0));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PullPush {
    /// Levels of the pyramid: 0 ..= log2(size).
    pub levels: u32,
}

impl PullPush {
    /// Checks the levels against maps of side `size`.
    pub(crate) fn check(&self, size: u32) -> Result<()> {
        let max = size.trailing_zeros();
        if !SIZES.contains(&size) || self.levels > max {
            return Err(Error::Input(format!(
                "pull-push over {} levels of maps of side {size}: sides {SIZES:?}, levels at most log2(side)",
                self.levels
            )));
        }
        Ok(())
    }

    /// The CPU path: the filled copy of `atlas`, after checking the levels and the depths.
    ///
    /// ```
    /// use lumbre_lightcuts::ism::{IsmAtlas, PullPush};
    /// let mut atlas = IsmAtlas::empty(32, 1);
    /// atlas.depth[33] = 2.0;
    /// assert_eq!(PullPush { levels: 5 }.cpu(&atlas)?.holes(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, atlas: &IsmAtlas) -> Result<IsmAtlas> {
        self.check(atlas.size)?;
        if atlas.depth.len() != atlas.vpls as usize * atlas.texels() {
            return Err(Error::Input(format!(
                "{} depths for {} maps of side {}",
                atlas.depth.len(),
                atlas.vpls,
                atlas.size
            )));
        }
        if let Some(i) = atlas.depth.iter().position(|d| d.is_nan() || *d < 0.0) {
            return Err(Error::Input(format!("depth {i} is {}: depths are >= 0 or +inf", atlas.depth[i])));
        }
        let mut out = atlas.clone();
        pull_push_cpu(&mut out.depth, out.size, self.levels);
        Ok(out)
    }
}

/// `1 / w` as f32 for `w = 0..=16` (0 unused), the table `ism_pull_push.wgsl` holds as bits.
const RECIP: [u32; 17] = [
    0,
    0x3f80_0000,
    0x3f00_0000,
    0x3eaa_aaab,
    0x3e80_0000,
    0x3e4c_cccd,
    0x3e2a_aaab,
    0x3e12_4925,
    0x3e00_0000,
    0x3de3_8e39,
    0x3dcc_cccd,
    0x3dba_2e8c,
    0x3daa_aaab,
    0x3d9d_89d9,
    0x3d92_4925,
    0x3d88_8889,
    0x3d80_0000,
];

fn recip(w: u32) -> f32 {
    f32::from_bits(RECIP[w as usize])
}

/// Texels of levels `1..=levels` of a map of side `size`: the scratch each map needs.
pub(crate) fn scratch_texels(size: u32, levels: u32) -> usize {
    (1..=levels).map(|l| ((size >> l) * (size >> l)) as usize).sum()
}

/// Level 1 halves `fine` (side `2s`) into `coarse` (side `s`).
fn pull(fine: &[f32], coarse: &mut [f32], s: usize) {
    for y in 0..s {
        for x in 0..s {
            let row = 2 * y * (2 * s) + 2 * x;
            let (mut sum, mut n) = (0.0f32, 0u32);
            for k in 0..4 {
                let v = fine[row + (k >> 1) * (2 * s) + (k & 1)];
                if v != f32::INFINITY {
                    sum += v;
                    n += 1;
                }
            }
            coarse[y * s + x] = if n > 0 { sum * recip(n) } else { f32::INFINITY };
        }
    }
}

/// Fills the holes of `fine` (side `2s`) from `coarse` (side `s`).
fn push(coarse: &[f32], fine: &mut [f32], s: usize) {
    let sf = 2 * s;
    for y in 0..sf {
        for x in 0..sf {
            if fine[y * sf + x] != f32::INFINITY {
                continue;
            }
            let (nx, ny) = ((x >> 1) as i64, (y >> 1) as i64);
            let fx = nx + if x & 1 == 1 { 1 } else { -1 };
            let fy = ny + if y & 1 == 1 { 1 } else { -1 };
            let (mut acc, mut weight) = (0.0f32, 0u32);
            for (tx, ty, w) in [(nx, ny, 9), (fx, ny, 3), (nx, fy, 3), (fx, fy, 1)] {
                if tx < 0 || ty < 0 || tx >= s as i64 || ty >= s as i64 {
                    continue;
                }
                let v = coarse[ty as usize * s + tx as usize];
                if v == f32::INFINITY {
                    continue;
                }
                acc += match w {
                    9 => v * 8.0 + v,
                    3 => v * 2.0 + v,
                    _ => v,
                };
                weight += w;
            }
            if weight > 0 {
                fine[y * sf + x] = acc * recip(weight);
            }
        }
    }
}

/// Pull-push of one map of side `size` over `levels` levels, with `scratch` of
/// [`scratch_texels`] texels for levels `1..=levels`.
pub(crate) fn pull_push_map(map: &mut [f32], size: u32, levels: u32, scratch: &mut [f32]) {
    let size = size as usize;
    // Split the scratch into its levels.
    let mut rest = scratch;
    let mut coarse: Vec<&mut [f32]> = Vec::new();
    for l in 1..=levels {
        let s = size >> l;
        let (level, tail) = rest.split_at_mut(s * s);
        coarse.push(level);
        rest = tail;
    }
    for l in 1..=levels as usize {
        let s = size >> l;
        if l == 1 {
            pull(map, coarse[0], s);
        } else {
            let (lower, upper) = coarse.split_at_mut(l - 1);
            pull(lower[l - 2], upper[0], s);
        }
    }
    for l in (1..=levels as usize).rev() {
        let s = size >> l;
        if l == 1 {
            push(coarse[0], map, s);
        } else {
            let (lower, upper) = coarse.split_at_mut(l - 1);
            push(upper[0], lower[l - 2], s);
        }
    }
}

/// Pull-push of every map of side `size` in `maps`, in place.
pub(crate) fn pull_push_cpu(maps: &mut [f32], size: u32, levels: u32) {
    if levels == 0 {
        return;
    }
    let texels = (size * size) as usize;
    let need = scratch_texels(size, levels);
    maps.par_chunks_mut(texels)
        .for_each_init(|| vec![0.0f32; need], |scratch, map| pull_push_map(map, size, levels, scratch));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds_the_reciprocals() {
        for w in 1..=16u32 {
            assert_eq!(recip(w), 1.0 / w as f32, "1/{w}");
        }
    }

    #[test]
    fn one_point_fills_the_map() {
        let mut map = vec![f32::INFINITY; 64];
        map[27] = 2.5;
        let mut scratch = vec![0.0; scratch_texels(8, 3)];
        pull_push_map(&mut map, 8, 3, &mut scratch);
        assert!(map.iter().all(|&d| d == 2.5), "{map:?}");
        // With one level only the point's neighbourhood is reached.
        let mut map = vec![f32::INFINITY; 64];
        map[0] = 1.0;
        pull_push_map(&mut map, 8, 1, &mut scratch);
        assert_eq!(map.iter().filter(|d| d.is_finite()).count(), 9);
    }
}
