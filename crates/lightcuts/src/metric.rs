//! Cluster metrics: how "large" the cluster of two clusters would be, the quantity the
//! greedy builder minimises at every merge.

use glam::Vec3;

use lumbre_raytrace::metrics::{Lab, delta_e94_chroma_hue};

use crate::bounds::Cone;
use crate::bounds::dot;
use crate::tree::LightNode;

/// The chromaticity of an intensity as a Lab colour: the intensity scaled to a largest
/// channel of 1 (so the colour term does not depend on how bright a light is); black for
/// zero.
pub(crate) fn chromaticity(intensity: Vec3) -> Lab {
    let m = intensity.max_element();
    if m > 0.0 { Lab::from_linear_srgb(intensity / m) } else { Lab { l: 0.0, a: 0.0, b: 0.0 } }
}

/// The colour difference of the paper's metric: CIE94 without its lightness term
/// ([`delta_e94_chroma_hue`]), made symmetric (CIE94 weighs by the first colour's chroma,
/// a distance between clusters must not depend on their order) by averaging both orders.
pub(crate) fn color_difference(p: Lab, q: Lab) -> f32 {
    (0.5 * (delta_e94_chroma_hue(p, q) + delta_e94_chroma_hue(q, p))) as f32
}

/// The largest [`color_difference`] between the chromaticities of the sRGB primaries,
/// secondaries and white: the scale that maps the colour term into `[0, 1]` (larger
/// differences are clamped to 1).
pub(crate) fn max_color_difference() -> f32 {
    let corners = [
        Vec3::X,
        Vec3::Y,
        Vec3::Z,
        Vec3::new(1.0, 1.0, 0.0),
        Vec3::new(0.0, 1.0, 1.0),
        Vec3::new(1.0, 0.0, 1.0),
        Vec3::ONE,
    ];
    let labs: Vec<Lab> = corners.iter().map(|&c| chromaticity(c)).collect();
    labs.iter().flat_map(|&p| labs.iter().map(move |&q| color_difference(p, q))).fold(0.0, f32::max)
}

/// Which cluster metric the greedy builder minimises.
///
/// ```
/// use lumbre_lightcuts::ClusterMetric;
/// assert_eq!(ClusterMetric::PAPER, ClusterMetric::Similarity { color: true, direction: true });
/// assert_eq!(ClusterMetric::default(), ClusterMetric::Walter);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClusterMetric {
    /// Walter et al. 2005: `I_C (alpha_C^2 + c^2 (1 - cos beta_C)^2)`, with `I_C` the summed
    /// intensity (sum of channels), `alpha_C` the diagonal of the merged box, `beta_C` the
    /// half-angle of the merged cone of normals and `c` the scene's diagonal (their choice
    /// for oriented lights).
    #[default]
    Walter,
    /// The paper's intensity-independent metric (its eq. 3 and the variants of its Tables 2
    /// and 3): the mean of the spatial term `alpha_C / alpha_S` (merged box diagonal over
    /// the scene's) and, when enabled, the colour term (CIE94 without lightness between
    /// the two clusters' chromaticities, made symmetric by averaging both orders, scaled
    /// into `[0, 1]` by the largest such difference among the sRGB primaries, secondaries
    /// and white) and the direction term
    /// `0.5 - 0.5 dir_A . dir_B` (the axes of their cones).
    Similarity {
        /// Include the colour term.
        color: bool,
        /// Include the direction term.
        direction: bool,
    },
}

impl ClusterMetric {
    /// The paper's eq. 3: all three terms.
    pub const PAPER: ClusterMetric = ClusterMetric::Similarity { color: true, direction: true };

    /// A short name for tables: `walter`, `spatial`, `spatial+color`, `spatial+dir`,
    /// `paper`.
    pub fn name(&self) -> &'static str {
        match self {
            ClusterMetric::Walter => "walter",
            ClusterMetric::Similarity { color: false, direction: false } => "spatial",
            ClusterMetric::Similarity { color: true, direction: false } => "spatial+color",
            ClusterMetric::Similarity { color: false, direction: true } => "spatial+dir",
            ClusterMetric::Similarity { color: true, direction: true } => "paper",
        }
    }
}

/// What the metric needs of a cluster, computed once per cluster.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Summary {
    pub lo: Vec3,
    pub hi: Vec3,
    pub cone: Cone,
    pub weight: f32,
    pub lab: Lab,
}

impl Summary {
    pub fn of(node: &LightNode, color: bool) -> Summary {
        Summary {
            lo: node.lo,
            hi: node.hi,
            cone: node.cone(),
            weight: node.weight(),
            lab: if color { chromaticity(node.intensity) } else { Lab { l: 0.0, a: 0.0, b: 0.0 } },
        }
    }
}

/// A metric prepared for one scene: its constants.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prepared {
    pub metric: ClusterMetric,
    /// Scene diagonal (`alpha_S`, and Walter's `c`).
    pub diagonal: f32,
    /// 1 / the number of terms of a similarity metric.
    inv_terms: f32,
    /// 1 / the colour term's scale.
    inv_color: f32,
}

impl Prepared {
    pub fn new(metric: ClusterMetric, diagonal: f32) -> Prepared {
        let terms = match metric {
            ClusterMetric::Walter => 1,
            ClusterMetric::Similarity { color, direction } => 1 + color as u32 + direction as u32,
        };
        Prepared { metric, diagonal, inv_terms: 1.0 / terms as f32, inv_color: 1.0 / max_color_difference() }
    }

    pub fn needs_color(&self) -> bool {
        matches!(self.metric, ClusterMetric::Similarity { color: true, .. })
    }

    /// A lower bound of [`size`](Prepared::size) for every partner of `a` whose merged box
    /// with `a` has a diagonal of at least `alpha` and whose weight is at least
    /// `min_weight`: the spatial term, and for Walter's metric the cone term of `a`'s own
    /// cone (a merged cone is never narrower); the other terms at their smallest.
    pub fn lower_bound(&self, a: &Summary, alpha: f32, min_weight: f32) -> f32 {
        match self.metric {
            ClusterMetric::Walter => {
                let k = self.diagonal * (1.0 - a.cone.cos);
                (a.weight + min_weight) * (alpha * alpha + k * k)
            }
            ClusterMetric::Similarity { .. } => alpha / self.diagonal * self.inv_terms,
        }
    }

    /// The metric of merging `a` and `b`.
    pub fn size(&self, a: &Summary, b: &Summary) -> f32 {
        let alpha = (a.hi.max(b.hi) - a.lo.min(b.lo)).length();
        match self.metric {
            ClusterMetric::Walter => {
                let cone = Cone::union(a.cone, b.cone);
                let k = self.diagonal * (1.0 - cone.cos);
                (a.weight + b.weight) * (alpha * alpha + k * k)
            }
            ClusterMetric::Similarity { color, direction } => {
                let mut s = alpha / self.diagonal;
                if color {
                    s += (color_difference(a.lab, b.lab) * self.inv_color).min(1.0);
                }
                if direction {
                    s += 0.5 - 0.5 * dot(a.cone.axis, b.cone.axis);
                }
                s * self.inv_terms
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chromaticity_ignores_brightness() {
        assert_eq!(chromaticity(Vec3::new(2.0, 1.0, 0.5)), chromaticity(Vec3::new(4.0, 2.0, 1.0)));
    }

    #[test]
    fn color_difference_is_symmetric() {
        let (red, grey) = (chromaticity(Vec3::new(1.0, 0.1, 0.1)), chromaticity(Vec3::ONE));
        assert_eq!(color_difference(red, grey), color_difference(grey, red));
        assert_eq!(color_difference(grey, grey), 0.0);
    }

    #[test]
    fn the_largest_color_difference_is_large() {
        assert!(max_color_difference() > 50.0);
    }
}
