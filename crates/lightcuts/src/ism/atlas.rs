//! The atlas of depth maps, one square map per VPL, and how its maps are laid out (on the
//! GPU: `gpu/ism/atlas.rs`).

use lumbre_gpu::{Agree, Tolerance, compare_slices};

/// One depth map per VPL, each `size` x `size` texels holding the distance from the VPL to
/// the nearest point seen through that texel (`f32::INFINITY`: a hole, nothing seen).
///
/// The maps are stored one after another (map `v` at `v * size²`, rows of `size` texels),
/// so any range of VPLs is one contiguous range of the buffer; [`IsmAtlas::grid`] places
/// them in a square-ish 2D atlas for viewing and for the atlas size.
///
/// ```
/// use lumbre_lightcuts::ism::IsmAtlas;
/// let atlas = IsmAtlas::empty(32, 961);
/// assert_eq!(atlas.grid(), (31, 31));
/// assert_eq!(atlas.atlas_size(), (992, 992));
/// assert_eq!(atlas.holes(), 961 * 32 * 32);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct IsmAtlas {
    /// Side of each map in texels.
    pub size: u32,
    /// Number of maps (VPLs).
    pub vpls: u32,
    /// The depths, map after map.
    pub depth: Vec<f32>,
    /// How lookups compare depths.
    pub lookup: Lookup,
}

/// How a lookup compares a receiver's distance `d` with a tap's depth: the tap counts as
/// lit while `d <= depth + bias + d * slope_bias * 4 / size`.
///
/// The last term stands for the depth a surface spans across one texel (a texel of a
/// paraboloid map covers at most `4 / size` radians, and a surface seen at incidence `a`
/// changes distance by `d * tan(a)` per radian): `slope_bias` is the `tan(a)` up to which
/// a receiver does not shadow itself, counting the taps' reach.
///
/// ```
/// use lumbre_lightcuts::ism::Lookup;
/// let l = Lookup { taps: 5, bias: 0.01, slope_bias: 2.0 };
/// assert_eq!(l.per_distance(64), 0.125);
/// assert_eq!(l.margin(2.0, 64), 0.01 + 2.0 * 0.125);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookup {
    /// Taps per lookup: 1, 5 or 9 ([`TAPS`](crate::ism::TAPS)).
    pub taps: u32,
    /// Constant depth bias in scene units.
    pub bias: f32,
    /// Depth bias per unit of distance, in texels of slope (see above).
    pub slope_bias: f32,
}

impl Default for Lookup {
    /// One tap, no bias.
    fn default() -> Self {
        Lookup { taps: 1, bias: 0.0, slope_bias: 0.0 }
    }
}

impl Lookup {
    /// The bias per unit of distance in maps of side `size`: `slope_bias * 4 / size`.
    pub fn per_distance(&self, size: u32) -> f32 {
        self.slope_bias * 4.0 / size as f32
    }

    /// The whole bias at distance `d` in maps of side `size`.
    pub fn margin(&self, d: f32, size: u32) -> f32 {
        self.bias + d * self.per_distance(size)
    }
}

impl IsmAtlas {
    /// An atlas of `vpls` maps of side `size` with nothing in them, looked up with one tap
    /// and no bias.
    pub fn empty(size: u32, vpls: u32) -> IsmAtlas {
        IsmAtlas {
            size,
            vpls,
            depth: vec![f32::INFINITY; vpls as usize * (size * size) as usize],
            lookup: Lookup::default(),
        }
    }

    /// Texels of one map.
    pub fn texels(&self) -> usize {
        (self.size * self.size) as usize
    }

    /// VPL `v`'s map (rows of `size` texels).
    pub fn map(&self, v: u32) -> &[f32] {
        let n = self.texels();
        &self.depth[v as usize * n..(v as usize + 1) * n]
    }

    /// The depth at texel `(x, y)` of VPL `v`'s map.
    pub fn texel(&self, v: u32, x: u32, y: u32) -> f32 {
        self.map(v)[(y * self.size + x) as usize]
    }

    /// Texels that are holes, over all maps.
    pub fn holes(&self) -> usize {
        self.depth.iter().filter(|d| **d == f32::INFINITY).count()
    }

    /// Maps per row and rows of maps in the 2D atlas: `ceil(sqrt(vpls))` columns.
    pub fn grid(&self) -> (u32, u32) {
        grid(self.vpls)
    }

    /// Width and height of the 2D atlas in texels.
    pub fn atlas_size(&self) -> (u32, u32) {
        let (c, r) = self.grid();
        (c * self.size, r * self.size)
    }

    /// The maps laid out in the 2D atlas, rows of [`IsmAtlas::atlas_size`]`.0` texels
    /// (cells without a map are holes).
    pub fn to_atlas(&self) -> Vec<f32> {
        let (w, h) = self.atlas_size();
        let (cols, s) = (self.grid().0, self.size);
        let mut out = vec![f32::INFINITY; (w * h) as usize];
        for v in 0..self.vpls {
            let (ox, oy) = ((v % cols) * s, (v / cols) * s);
            for y in 0..s {
                let row = &self.map(v)[(y * s) as usize..((y + 1) * s) as usize];
                let at = ((oy + y) * w + ox) as usize;
                out[at..at + s as usize].copy_from_slice(row);
            }
        }
        out
    }

    /// Texels that differ from `other`'s beyond `rel` (relative to this atlas's depth), a
    /// hole in one and not the other included; every texel when the shapes differ.
    ///
    /// ```
    /// use lumbre_lightcuts::ism::IsmAtlas;
    /// let a = IsmAtlas::empty(32, 1);
    /// let mut b = a.clone();
    /// b.depth[0] = 1.0;
    /// assert_eq!(a.differing_texels(&b, 1e-5), 1);
    /// ```
    pub fn differing_texels(&self, other: &IsmAtlas, rel: f32) -> usize {
        if (self.size, self.vpls, self.depth.len()) != (other.size, other.vpls, other.depth.len()) {
            return self.depth.len().max(other.depth.len());
        }
        self.depth
            .iter()
            .zip(&other.depth)
            .filter(|&(&a, &b)| {
                let holes = (a == f32::INFINITY, b == f32::INFINITY);
                let diff = (a - b).abs();
                holes.0 != holes.1 || (!holes.0 && (diff.is_nan() || diff > rel * a.abs()))
            })
            .count()
    }

    /// Bytes of the depths.
    pub fn bytes(&self) -> u64 {
        self.depth.len() as u64 * 4
    }
}

/// Relative difference of depths up to which a GPU texel counts as equal to the CPU's
/// (for [`IsmAtlas::differing_texels`]): a driver may fuse and reassociate the f32
/// operations (SPIR-V allows both), which moves depths by a few ulps.
///
/// ```
/// use lumbre_lightcuts::ism::{IsmAtlas, SAME_DEPTH_REL};
/// let mut a = IsmAtlas::empty(32, 1);
/// a.depth[0] = 1.0;
/// let mut b = a.clone();
/// b.depth[0] = 1.0 + SAME_DEPTH_REL / 2.0;
/// assert_eq!(a.differing_texels(&b, SAME_DEPTH_REL), 0);
/// ```
pub const SAME_DEPTH_REL: f32 = 1e-5;

/// The largest fraction of an atlas's texels whose GPU depth may differ from the CPU's by
/// more than [`SAME_DEPTH_REL`] on a driver that fuses or reassociates f32 operations (a
/// point within rounding of a texel border lands in the neighbour there); on lavapipe the
/// two agree exactly.
///
/// ```
/// use lumbre_lightcuts::ism::MAX_DIFFERING;
/// assert!(MAX_DIFFERING > 0.0 && MAX_DIFFERING < 0.01);
/// ```
pub const MAX_DIFFERING: f64 = 5e-3;

/// Columns and rows of a square-ish grid of `n` cells.
pub(crate) fn grid(n: u32) -> (u32, u32) {
    let cols = (n as f64).sqrt().ceil().max(1.0) as u32;
    (cols, n.div_ceil(cols).max(1))
}

impl Agree for IsmAtlas {
    /// Same shape, and depths within `tol` (holes only where the reference has holes).
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if (self.size, self.vpls, self.lookup) != (gpu.size, gpu.vpls, gpu.lookup) {
            return Some(format!(
                "shapes differ: cpu {} maps of {} ({:?}) vs gpu {} maps of {} ({:?})",
                self.vpls, self.size, self.lookup, gpu.vpls, gpu.size, gpu.lookup
            ));
        }
        // Holes must match exactly: a relative tolerance would accept anything next to +inf.
        let holes = |a: &[f32]| a.iter().map(|d| *d == f32::INFINITY).collect::<Vec<bool>>();
        if self.depth.len() == gpu.depth.len()
            && let Some(d) = compare_slices(&holes(&self.depth), &holes(&gpu.depth), Tolerance::EXACT)
        {
            return Some(format!("holes differ: {d}"));
        }
        compare_slices(&self.depth, &gpu.depth, tol)
    }
}
