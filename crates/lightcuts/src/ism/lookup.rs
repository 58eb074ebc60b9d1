//! Stage 4, lookups: how visible a receiver is from a VPL, read from the VPL's map. The CPU
//! twin of the WGSL module `lightcuts/ism_lookup.wgsl`.

use glam::Vec3;

use super::IsmAtlas;
use super::paraboloid::{frame, project};
use crate::Vpl;

/// Offset of tap `k` of `taps`: the texel, then its four neighbours (5 taps), or the 3x3
/// block row by row (9 taps).
fn tap_offset(taps: u32, k: u32) -> (i32, i32) {
    if taps == 9 {
        return ((k % 3) as i32 - 1, (k / 3) as i32 - 1);
    }
    match k {
        1 => (-1, 0),
        2 => (1, 0),
        3 => (0, -1),
        4 => (0, 1),
        _ => (0, 0),
    }
}

impl IsmAtlas {
    /// The visibility of `receiver` from VPL `vpl_index` (whose light is `vpl`): the
    /// fraction of the [`taps`](super::Lookup::taps) around the receiver's texel whose
    /// depth plus the [`margin`](super::Lookup::margin) reaches the receiver's distance, 1
    /// lit, 0 shadowed. Receivers behind the VPL (at a cosine to its normal of at most
    /// 2^-12, where it emits next to nothing) and indices past the atlas give 0.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{Vpl, ism::{IsmAtlas, Lookup}};
    /// let vpl = Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE };
    /// let mut atlas = IsmAtlas::empty(32, 1);
    /// atlas.lookup = Lookup { taps: 5, bias: 0.01, slope_bias: 0.0 };
    /// assert_eq!(atlas.visibility(0, &vpl, Vec3::ZERO), 1.0); // an empty map: lit
    /// atlas.depth.fill(0.5); // something half way down, everywhere
    /// assert_eq!(atlas.visibility(0, &vpl, Vec3::ZERO), 0.0);
    /// assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.0, 0.6, 0.0)), 1.0);
    /// assert_eq!(atlas.visibility(0, &vpl, Vec3::new(0.0, 2.0, 0.0)), 0.0); // behind
    /// ```
    pub fn visibility(&self, vpl_index: u32, vpl: &Vpl, receiver: Vec3) -> f32 {
        if vpl_index >= self.vpls {
            return 0.0;
        }
        let Some(t) = project(vpl.position, &frame(vpl.normal), receiver, self.size) else {
            return 0.0;
        };
        let map = self.map(vpl_index);
        let s = self.size as i32;
        let taps = self.lookup.taps;
        let reach = t.dist - self.lookup.margin(t.dist, self.size);
        let mut lit = 0u32;
        for k in 0..taps {
            let (ox, oy) = tap_offset(taps, k);
            let x = (t.x as i32 + ox).clamp(0, s - 1) as u32;
            let y = (t.y as i32 + oy).clamp(0, s - 1) as u32;
            if reach <= map[(y * self.size + x) as usize] {
                lit += 1;
            }
        }
        lit as f32 / taps as f32
    }
}
