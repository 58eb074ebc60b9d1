//! Options of an imperfect shadow map build and of its lookups, with their validation and
//! the checks of a build's inputs.

use lumbre_gpu::{Error, Result};

use crate::ism::atlas::Lookup;
use crate::vpls::Vpl;

/// Sides of a VPL's depth map that the build accepts.
pub const SIZES: [u32; 3] = [32, 64, 128];

/// Taps per lookup that the build accepts: the texel, the texel and its four neighbours,
/// or the 3x3 block.
pub const TAPS: [u32; 3] = [1, 5, 9];

/// Most points in the scene's pool (2^28: 4 GiB of positions on the GPU).
pub const MAX_POINTS: u32 = 1 << 28;

/// How imperfect shadow maps are built and looked up.
///
/// ```
/// use lumbre_lightcuts::ism::IsmOptions;
/// let opts = IsmOptions::default();
/// assert!(opts.validate().is_ok());
/// let bad = IsmOptions { size: 48, ..opts };
/// assert!(bad.validate().unwrap_err().to_string().contains("size 48"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsmOptions {
    /// Side of each VPL's depth map in texels: 32, 64 or 128.
    pub size: u32,
    /// Points in the scene's shared pool (1 ..= [`MAX_POINTS`]).
    pub points: u32,
    /// Points each VPL splats: a window of the shuffled pool from the VPL's own start
    /// (1 ..= `points`).
    pub points_per_vpl: u32,
    /// Pull-push levels: 0 leaves the holes, at most log2(`size`).
    pub pull_push_levels: u32,
    /// Taps averaged per lookup: 1, 5 or 9 ([`TAPS`]).
    pub taps: u32,
    /// Constant depth bias of a lookup as a fraction of the scene's bounding-box diagonal
    /// (see [`Lookup`]).
    pub bias: f32,
    /// Depth bias per unit of distance, in texels of slope: the `tan` of the steepest
    /// incidence at which a receiver does not shadow itself, counting the taps' reach (see
    /// [`Lookup`]).
    pub slope_bias: f32,
    /// Seed of the point pool, its order and the VPLs' windows.
    pub seed: u32,
}

impl Default for IsmOptions {
    /// Maps that keep lightcuts within 5% of the path tracer on the standard scenes (see
    /// [`ISM_VPLS`](crate::vpls::ISM_VPLS)): 128x128 maps, 2^20 pool points, 65536 per VPL, 2 pull-push
    /// levels, one tap, a bias of 2% of the scene's diagonal plus 4 texels of slope. Against
    /// the source work's maps ([`IsmOptions::paper`]) this fills the maps densely enough
    /// that one tap beats averaging five, and the slope bias stops receivers shadowing
    /// themselves: on the Cornell box at 256x256 with paths until roulette, 7.9% mean
    /// relative error from the path tracer with the source work's maps (10000 VPLs), 4.6%
    /// with these (12000 VPLs). The slope bias is tuned for 128x128: it counts in texels,
    /// so smaller maps let more light through (5 texels at 64x64 lit the box's shadows).
    ///
    /// ```
    /// use lumbre_lightcuts::ism::IsmOptions;
    /// let o = IsmOptions::default();
    /// assert_eq!((o.size, o.points_per_vpl, o.taps), (128, 65536, 1));
    /// assert!(o.validate().is_ok());
    /// ```
    fn default() -> Self {
        IsmOptions {
            size: 128,
            points: 1 << 20,
            points_per_vpl: 1 << 16,
            pull_push_levels: 2,
            taps: 1,
            bias: 0.02,
            slope_bias: 4.0,
            seed: 0,
        }
    }
}

impl IsmOptions {
    /// The source work's maps: 64x64, 2^18 pool points, 2048 per VPL, 2 pull-push levels
    /// (as its figure), 5 taps (as its lookups), a bias of 1% of the scene's diagonal plus
    /// 2 texels of slope. Cheap, and about 8% from the path tracer on the Cornell box.
    ///
    /// ```
    /// use lumbre_lightcuts::ism::IsmOptions;
    /// let o = IsmOptions::paper();
    /// assert_eq!((o.size, o.points_per_vpl, o.taps), (64, 2048, 5));
    /// assert!(o.validate().is_ok());
    /// ```
    pub fn paper() -> Self {
        IsmOptions {
            size: 64,
            points: 1 << 18,
            points_per_vpl: 2048,
            pull_push_levels: 2,
            taps: 5,
            bias: 0.01,
            slope_bias: 2.0,
            seed: 0,
        }
    }
}

impl IsmOptions {
    /// Checks every field, naming the first bad one, its value and what is allowed.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: String| Err(Error::Input(format!("ISM options: {what}")));
        if !SIZES.contains(&self.size) {
            return bad(format!("size {} is not one of {SIZES:?}", self.size));
        }
        if self.points == 0 || self.points > MAX_POINTS {
            return bad(format!("points {} is not in 1..={MAX_POINTS}", self.points));
        }
        if self.points_per_vpl == 0 || self.points_per_vpl > self.points {
            return bad(format!("points_per_vpl {} is not in 1..={} (points)", self.points_per_vpl, self.points));
        }
        let max_levels = self.size.trailing_zeros();
        if self.pull_push_levels > max_levels {
            return bad(format!(
                "pull_push_levels {} is more than log2(size {}) = {max_levels}",
                self.pull_push_levels, self.size
            ));
        }
        if !TAPS.contains(&self.taps) {
            return bad(format!("taps {} is not one of {TAPS:?}", self.taps));
        }
        if !(self.bias.is_finite() && self.bias >= 0.0) {
            return bad(format!("bias {} is not a finite number >= 0", self.bias));
        }
        if !(self.slope_bias.is_finite() && self.slope_bias >= 0.0) {
            return bad(format!("slope_bias {} is not a finite number >= 0", self.slope_bias));
        }
        Ok(())
    }

    /// The lookup these options give in a scene whose bounds have diagonal `diagonal`.
    ///
    /// ```
    /// use lumbre_lightcuts::ism::IsmOptions;
    /// let l = IsmOptions { bias: 0.01, ..Default::default() }.lookup(3.0);
    /// assert_eq!(l.bias, 0.03);
    /// ```
    pub fn lookup(&self, diagonal: f32) -> Lookup {
        Lookup { taps: self.taps, bias: self.bias * diagonal, slope_bias: self.slope_bias }
    }

    /// Texels of one map.
    pub fn texels(&self) -> usize {
        (self.size * self.size) as usize
    }
}

/// Checks a pool against the options: not empty, at least `points_per_vpl` points.
pub(crate) fn check_pool(len: usize, opts: &IsmOptions) -> Result<()> {
    if len == 0 || len > MAX_POINTS as usize || opts.points_per_vpl as usize > len {
        return Err(Error::Input(format!(
            "a pool of {len} points for points_per_vpl {}: needed {}..={MAX_POINTS} points",
            opts.points_per_vpl,
            opts.points_per_vpl.max(1)
        )));
    }
    Ok(())
}

/// Checks that every VPL has a finite position and a finite unit normal (within 1e-3).
pub(crate) fn check_vpls(vpls: &[Vpl]) -> Result<()> {
    if vpls.len() > u32::MAX as usize / 16 {
        return Err(Error::Input(format!("{} VPLs: at most {}", vpls.len(), u32::MAX / 16)));
    }
    for (i, v) in vpls.iter().enumerate() {
        if !(v.position.is_finite() && v.normal.is_finite() && (v.normal.length() - 1.0).abs() <= 1e-3) {
            return Err(Error::Input(format!(
                "VPL {i}: position {} and normal {} (needed: finite, and a unit normal)",
                v.position, v.normal
            )));
        }
    }
    Ok(())
}
