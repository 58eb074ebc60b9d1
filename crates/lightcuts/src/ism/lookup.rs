//! Stage 4, lookups: how visible a receiver is from a VPL, read from the VPL's map. The CPU
//! twin of the WGSL module `lightcuts/ism_lookup.wgsl`, which the shading kernels import
//! and `lightcuts/ism_lookup_queries.wgsl` runs on its own ([`IsmLookup`], `gpu/ism/lookup.rs`).

use glam::Vec3;
use lumbre_gpu::{Error, Result};

use crate::ism::atlas::IsmAtlas;
use crate::ism::options::check_vpls;
use crate::ism::paraboloid::{frame, project};
use crate::vpls::Vpl;

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
    /// fraction of the [`taps`](crate::ism::Lookup::taps) around the receiver's texel whose
    /// depth plus the [`margin`](crate::ism::Lookup::margin) reaches the receiver's distance, 1
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

/// Visibility queries: an atlas, the VPLs it was built for, and (VPL index, receiver) pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct IsmQueries {
    /// The atlas.
    pub atlas: IsmAtlas,
    /// The VPLs of the atlas's maps.
    pub vpls: Vec<Vpl>,
    /// (VPL index, receiver) per query.
    pub queries: Vec<(u32, Vec3)>,
}

/// Lookups: [`IsmAtlas::visibility`] for each query on the CPU, the WGSL module
/// `lightcuts/ism_lookup` (through the kernel `lightcuts/ism_lookup_queries`) on the GPU.
///
/// ```
/// use glam::Vec3;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{Vpl, ism::{IsmAtlas, IsmLookup, IsmQueries}};
/// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
/// let q = IsmQueries { atlas: IsmAtlas::empty(32, 1), vpls, queries: vec![(0, Vec3::ZERO)] };
/// assert_eq!(IsmLookup.run(&Backend::Cpu, &q)?, vec![1.0]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IsmLookup;

impl IsmLookup {
    /// Checks the VPLs and that every query names one of them and a finite receiver.
    pub(crate) fn check(q: &IsmQueries) -> Result<()> {
        check_vpls(&q.vpls)?;
        if let Some((i, (v, p))) =
            q.queries.iter().enumerate().find(|(_, (v, p))| *v as usize >= q.vpls.len() || !p.is_finite())
        {
            return Err(Error::Input(format!(
                "query {i}: VPL {v} of {} and receiver {p} (needed: a VPL index in range and a finite receiver)",
                q.vpls.len()
            )));
        }
        Ok(())
    }

    /// The CPU path: every query's visibility, after the checks.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{Vpl, ism::{IsmAtlas, IsmLookup, IsmQueries}};
    /// let vpls = vec![Vpl { position: Vec3::Y, normal: -Vec3::Y, intensity: Vec3::ONE }];
    /// let q = IsmQueries { atlas: IsmAtlas::empty(32, 1), vpls, queries: vec![(0, Vec3::ZERO)] };
    /// assert_eq!(IsmLookup.cpu(&q)?, vec![1.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, q: &IsmQueries) -> Result<Vec<f32>> {
        IsmLookup::check(q)?;
        Ok(q.queries.iter().map(|&(v, p)| q.atlas.visibility(v, &q.vpls[v as usize], p)).collect())
    }
}
