//! Elements and patches as unions of pieces (planar triangles and parallelograms), seen
//! from a point: the exact unoccluded form factor to a union, and uniform points on it.
//!
//! The unoccluded factor from `x` to a union is the sum of [`point_to_shape`] over its
//! pieces. Lambert's formula is a sum over edges, and an edge that two pieces share appears
//! once in each direction and cancels; so when every piece faces `x` and lies wholly in
//! front of it, the sum over the union's *boundary* edges alone is the same number. An
//! [`Outline`] keeps those edges and a bound (a sphere and a cone of normals) that says
//! when this holds; elsewhere (near `x`) the pieces are summed one by one. Patches nest
//! elements, so a patch near `x` falls back to its elements' outlines, not its pieces.
//!
//! A union of many pieces (more than [`FEW_PIECES`]) that is not clear but lies farther
//! than [`FAR`] times its radius from `x` counts as one differential area, its vector area
//! `Σ A_i n_i` at its centre: the factor's first-order term, within about `(1/FAR)^2` of the
//! sum (a curved cluster seen at a grazing angle, whose pieces are not all clear, is what
//! this is for). Unions of a few pieces and single pieces are always summed exactly.

use std::f32::consts::PI;

use glam::Vec3;

use crate::formfactor::point_to_shape;
use crate::shape::Shape;

/// A bound of a union of pieces: a sphere holding every corner and a cone holding every
/// normal (`|n - axis| <= spread` for each piece's normal n).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bound {
    /// Centre of the sphere.
    pub center: Vec3,
    /// Its radius.
    pub radius: f32,
    /// Mean normal (unit length).
    pub axis: Vec3,
    /// The largest distance of a piece's normal from `axis` (2 or more: no bound).
    pub spread: f32,
    /// The vector area `Σ A_i n_i`.
    pub area: Vec3,
    /// Number of pieces.
    pub pieces: u32,
}

/// Distance, in bound radii, beyond which a union of many pieces counts as one area.
pub const FAR: f32 = 8.0;
/// Unions of at most this many pieces are always summed exactly.
pub const FEW_PIECES: u32 = 8;

impl Bound {
    /// Whether every piece inside lies in the closed half-space in front of `x` (normal
    /// `n`) and faces `x`: then the union's factor is the sum over its boundary edges.
    ///
    /// For a piece with normal m and a point y of it, `m·(x - y) >= axis·(x - c) - r -
    /// |m - axis| (|x - c| + r)`, which the test keeps above 0.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_radiosity::Bound;
    /// let b = Bound { center: Vec3::new(0.0, 0.0, 2.0), radius: 0.5, axis: -Vec3::Z, spread: 0.0, area: -Vec3::Z, pieces: 1 };
    /// assert!(b.clear(Vec3::ZERO, Vec3::Z)); // facing it, in front
    /// assert!(!b.clear(Vec3::new(0.0, 0.0, 2.2), Vec3::Z)); // inside the sphere
    /// ```
    pub fn clear(&self, x: Vec3, n: Vec3) -> bool {
        let d = x - self.center;
        let dist = d.length();
        -n.dot(d) >= self.radius && self.axis.dot(d) - self.radius - self.spread * (dist + self.radius) > 0.0
    }

    /// The bound of `pieces`.
    pub fn of(pieces: &[Shape]) -> Bound {
        let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        let mut sum = glam::DVec3::ZERO;
        for s in pieces {
            for c in s.corners() {
                lo = lo.min(c);
                hi = hi.max(c);
            }
            sum += s.normal().as_dvec3() * s.area() as f64;
        }
        let center = (lo + hi) * 0.5;
        let radius = pieces
            .iter()
            .flat_map(|s| s.corners())
            .map(|c| (c - center).length())
            .fold(0.0f32, f32::max)
            // Room for the rounding of the corners and of the test.
            * (1.0 + 1e-5);
        let axis = sum.normalize_or_zero().as_vec3();
        let spread = if axis == Vec3::ZERO {
            2.0
        } else {
            pieces.iter().map(|s| (s.normal() - axis).length()).fold(0.0f32, f32::max) * (1.0 + 1e-5) + 1e-6
        };
        Bound { center, radius, axis, spread, area: sum.as_vec3(), pieces: pieces.len() as u32 }
    }

    /// Whether the union is made of many pieces and lies farther than [`FAR`] radii from
    /// `x`: then [`Bound::far_factor`] stands for it.
    pub fn far(&self, x: Vec3) -> bool {
        self.pieces > FEW_PIECES && (x - self.center).length_squared() > (FAR * self.radius).powi(2)
    }

    /// The factor from `x` (normal `n`) to the vector area at the centre:
    /// `max(0, n·d) max(0, -area·d) / (π |d|^4)` with `d` from `x` to the centre.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_radiosity::Bound;
    /// // A unit area facing a point 10 away along its normal: 1 / (100 π).
    /// let b = Bound { center: Vec3::Z * 10.0, radius: 0.5, axis: -Vec3::Z, spread: 0.0, area: -Vec3::Z, pieces: 9 };
    /// assert!((b.far_factor(Vec3::ZERO, Vec3::Z) - 1.0 / (100.0 * std::f32::consts::PI)).abs() < 1e-7);
    /// ```
    pub fn far_factor(&self, x: Vec3, n: Vec3) -> f32 {
        let d = self.center - x;
        let r2 = d.length_squared();
        (n.dot(d).max(0.0) * (-self.area.dot(d)).max(0.0)) / (PI * r2 * r2)
    }
}

/// Lambert's contour sum over directed edges seen from `x` with normal `n`:
/// `-1/(2π) Σ n · (a × b) / |a × b| · angle(a, b)`, `a` and `b` the ends relative to x,
/// clamped at 0. For a closed boundary wholly in front of x it is the projected solid angle.
pub fn contour(x: Vec3, n: Vec3, edges: &[[Vec3; 2]]) -> f32 {
    let mut sum = 0.0f32;
    for [p, q] in edges {
        let (a, b) = (*p - x, *q - x);
        let c = a.cross(b);
        let l = c.length();
        if l > 0.0 {
            sum += n.dot(c) / l * l.atan2(a.dot(b));
        }
    }
    (-sum / (2.0 * PI)).max(0.0)
}

/// The outlines of consecutive ranges of pieces: a bound and the boundary edges of each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outlines {
    /// Each range's bound.
    pub bound: Vec<Bound>,
    /// Range `r`'s boundary edges are `edges[edge_start[r]..edge_start[r + 1]]`.
    pub edge_start: Vec<u32>,
    /// Directed boundary edges (counter-clockwise seen from the front).
    pub edges: Vec<[Vec3; 2]>,
    /// The corner ids of each edge's ends (edges cancel by them).
    pub edge_ids: Vec<[u32; 2]>,
}

/// A directed edge: its ends' corner ids and positions.
type Edge = ([u32; 2], [Vec3; 2]);

/// The directed edges of `pieces` (corner ids from `corners`) that no other edge of the
/// list runs against: the boundary of their union.
fn boundary(edges: &mut Vec<Edge>) {
    edges.sort_by_key(|(id, _)| (id[0].min(id[1]), id[0].max(id[1]), id[0] > id[1]));
    let mut out = Vec::with_capacity(edges.len());
    let mut i = 0;
    while i < edges.len() {
        let key = |k: usize| (edges[k].0[0].min(edges[k].0[1]), edges[k].0[0].max(edges[k].0[1]));
        let mut j = i;
        while j < edges.len() && key(j) == key(i) {
            j += 1;
        }
        // Within [i, j): first the edges running from the smaller id, then the others.
        let fwd = (i..j).filter(|&k| edges[k].0[0] < edges[k].0[1]).count();
        let bwd = j - i - fwd;
        let cancel = fwd.min(bwd);
        out.extend_from_slice(&edges[i + cancel..i + fwd]);
        out.extend_from_slice(&edges[i + fwd + cancel..j]);
        i = j;
    }
    *edges = out;
}

impl Outlines {
    /// Outlines of `pieces[start[r]..start[r + 1]]` for every r; `corners` names each
    /// piece's corners (three for a triangle, four for a parallelogram, in
    /// [`Shape::corners`] order; equal ids for equal corners).
    pub fn of_pieces(pieces: &[Shape], corners: &[[u32; 4]], start: &[u32]) -> Outlines {
        use rayon::prelude::*;
        let per: Vec<(Bound, Vec<Edge>)> = start
            .par_windows(2)
            .map(|w| {
                let range = w[0] as usize..w[1] as usize;
                let mut edges = Vec::new();
                for (s, ids) in pieces[range.clone()].iter().zip(&corners[range.clone()]) {
                    let c = s.corners();
                    for i in 0..c.len() {
                        let j = (i + 1) % c.len();
                        edges.push(([ids[i], ids[j]], [c[i], c[j]]));
                    }
                }
                boundary(&mut edges);
                (Bound::of(&pieces[range]), edges)
            })
            .collect();
        Self::collect(per)
    }

    /// Outlines of unions of consecutive ranges of `inner`'s (`groups[g]..groups[g + 1]`),
    /// whose pieces are `pieces[piece_range(g)]`: patches from their elements.
    pub fn of_groups(&self, groups: &[u32], pieces: &[Shape], piece_start: &[u32]) -> Outlines {
        use rayon::prelude::*;
        let per: Vec<(Bound, Vec<Edge>)> = groups
            .par_windows(2)
            .map(|w| {
                let (a, b) = (self.edge_start[w[0] as usize] as usize, self.edge_start[w[1] as usize] as usize);
                let mut edges: Vec<Edge> = (a..b).map(|i| (self.edge_ids[i], self.edges[i])).collect();
                boundary(&mut edges);
                let range = piece_start[w[0] as usize] as usize..piece_start[w[1] as usize] as usize;
                (Bound::of(&pieces[range]), edges)
            })
            .collect();
        Self::collect(per)
    }

    fn collect(per: Vec<(Bound, Vec<Edge>)>) -> Outlines {
        let mut out = Outlines { edge_start: vec![0], ..Outlines::default() };
        for (bound, edges) in per {
            out.bound.push(bound);
            for (id, e) in edges {
                out.edge_ids.push(id);
                out.edges.push(e);
            }
            out.edge_start.push(out.edges.len() as u32);
        }
        out
    }

    /// The edges of range `r`.
    pub fn edges_of(&self, r: usize) -> &[[Vec3; 2]] {
        &self.edges[self.edge_start[r] as usize..self.edge_start[r + 1] as usize]
    }
}

/// Cumulative area fractions of the pieces within each range of `start` (the last of each
/// range exactly 1): the table [`sample`] picks a piece from.
pub fn area_cdf(pieces: &[Shape], start: &[u32], out: &mut [f32]) {
    for w in start.windows(2) {
        let range = w[0] as usize..w[1] as usize;
        let total: f64 = pieces[range.clone()].iter().map(|s| s.area() as f64).sum();
        let mut acc = 0.0f64;
        for i in range.clone() {
            acc += pieces[i].area() as f64;
            out[i] = if total > 0.0 { (acc / total) as f32 } else { (i + 1 - range.start) as f32 / range.len() as f32 };
        }
        if let Some(last) = range.last() {
            out[last] = 1.0;
        }
    }
}

/// A point of the union `pieces[range]` from `(u, v)` in `[0, 1)^2`, uniform in area: `u`
/// picks the piece by the cumulative fractions `cdf` and is stretched back to `[0, 1)`
/// inside it. Returns the point and the piece's normal. The GPU does the same.
pub fn sample(pieces: &[Shape], cdf: &[f32], range: std::ops::Range<usize>, u: f32, v: f32) -> (Vec3, Vec3) {
    let (mut lo, mut hi) = (range.start, range.end - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if cdf[mid] > u { hi = mid } else { lo = mid + 1 }
    }
    let below = if lo == range.start { 0.0 } else { cdf[lo - 1] };
    let w = cdf[lo] - below;
    let u = if w > 0.0 { ((u - below) / w).clamp(0.0, lumbre_raytrace::sampling::ONE_MINUS_EPSILON) } else { 0.0 };
    let s = &pieces[lo];
    (s.point(u, v), s.normal())
}

/// The geometry form factors read: the pieces in element order, elements as piece ranges
/// and patches as element ranges, each with its outline and its area table.
#[derive(Clone, Debug, Default)]
pub struct Clusters {
    /// The pieces, in element order.
    pub pieces: Vec<Shape>,
    /// Element e's pieces are `piece_start[e]..piece_start[e + 1]`.
    pub piece_start: Vec<u32>,
    /// Patch p's elements are `patch_start[p]..patch_start[p + 1]`.
    pub patch_start: Vec<u32>,
    /// Cumulative area fractions of the pieces within their element.
    pub element_cdf: Vec<f32>,
    /// ... and within their patch.
    pub patch_cdf: Vec<f32>,
    /// The elements' outlines.
    pub elements: Outlines,
    /// The patches' outlines.
    pub patches: Outlines,
}

impl Clusters {
    /// The clusters of pieces with corner ids `corners`, element ranges `piece_start` and
    /// patch ranges `patch_start`.
    pub fn new(pieces: Vec<Shape>, corners: &[[u32; 4]], piece_start: Vec<u32>, patch_start: Vec<u32>) -> Clusters {
        let elements = Outlines::of_pieces(&pieces, corners, &piece_start);
        let patches = elements.of_groups(&patch_start, &pieces, &piece_start);
        let mut element_cdf = vec![0.0; pieces.len()];
        area_cdf(&pieces, &piece_start, &mut element_cdf);
        let patch_pieces: Vec<u32> = patch_start.iter().map(|&e| piece_start[e as usize]).collect();
        let mut patch_cdf = vec![0.0; pieces.len()];
        area_cdf(&pieces, &patch_pieces, &mut patch_cdf);
        Clusters { pieces, piece_start, patch_start, element_cdf, patch_cdf, elements, patches }
    }

    /// Number of elements.
    pub fn n(&self) -> usize {
        self.piece_start.len() - 1
    }

    /// Number of patches.
    pub fn k(&self) -> usize {
        self.patch_start.len() - 1
    }

    fn pieces_of(&self, e: usize) -> std::ops::Range<usize> {
        self.piece_start[e] as usize..self.piece_start[e + 1] as usize
    }

    fn patch_pieces(&self, p: usize) -> std::ops::Range<usize> {
        self.piece_start[self.patch_start[p] as usize] as usize
            ..self.piece_start[self.patch_start[p + 1] as usize] as usize
    }

    /// The unoccluded form factor from `x` (normal `n`) to element `e` (see the module
    /// notes: exact but where a union of many pieces is far).
    pub fn to_element(&self, x: Vec3, n: Vec3, e: usize) -> f32 {
        let b = &self.elements.bound[e];
        if b.clear(x, n) {
            return contour(x, n, self.elements.edges_of(e));
        }
        if b.far(x) {
            return b.far_factor(x, n);
        }
        self.pieces[self.pieces_of(e)].iter().map(|s| point_to_shape(x, n, s)).sum()
    }

    /// The unoccluded form factor from `x` (normal `n`) to patch `p`.
    pub fn to_patch(&self, x: Vec3, n: Vec3, p: usize) -> f32 {
        let b = &self.patches.bound[p];
        if b.clear(x, n) {
            return contour(x, n, self.patches.edges_of(p));
        }
        if b.far(x) {
            return b.far_factor(x, n);
        }
        (self.patch_start[p] as usize..self.patch_start[p + 1] as usize).map(|e| self.to_element(x, n, e)).sum()
    }

    /// A uniform point of element `e` and its normal.
    pub fn sample_element(&self, e: usize, u: f32, v: f32) -> (Vec3, Vec3) {
        sample(&self.pieces, &self.element_cdf, self.pieces_of(e), u, v)
    }

    /// A uniform point of patch `p` and its normal.
    pub fn sample_patch(&self, p: usize, u: f32, v: f32) -> (Vec3, Vec3) {
        sample(&self.pieces, &self.patch_cdf, self.patch_pieces(p), u, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bumpy grid of 2 x side x side triangles over [0, 1]^2 at height `z`, facing +z,
    /// with corner ids from the grid.
    fn grid(side: u32, z: f32, bump: f32) -> (Vec<Shape>, Vec<[u32; 4]>) {
        let at = |i: u32, j: u32| {
            let h = if i % 2 == 1 && j % 2 == 1 { bump } else { 0.0 };
            Vec3::new(i as f32 / side as f32, j as f32 / side as f32, z + h)
        };
        let id = |i: u32, j: u32| j * (side + 1) + i;
        let (mut pieces, mut corners) = (Vec::new(), Vec::new());
        for j in 0..side {
            for i in 0..side {
                for t in [[(i, j), (i + 1, j), (i + 1, j + 1)], [(i, j), (i + 1, j + 1), (i, j + 1)]] {
                    let p = t.map(|(a, b)| at(a, b));
                    pieces.push(Shape { origin: p[0], edge_u: p[1] - p[0], edge_v: p[2] - p[0], triangle: true });
                    corners.push([id(t[0].0, t[0].1), id(t[1].0, t[1].1), id(t[2].0, t[2].1), u32::MAX]);
                }
            }
        }
        (pieces, corners)
    }

    #[test]
    fn boundary_edges_give_the_sum_over_pieces() {
        for bump in [0.0f32, 0.05] {
            let (pieces, corners) = grid(6, 0.0, bump);
            let o = Outlines::of_pieces(&pieces, &corners, &[0, pieces.len() as u32]);
            assert_eq!(o.edges_of(0).len(), 24, "the square's boundary: 4 sides of 6 edges");
            for x in [Vec3::new(0.3, 0.6, 2.0), Vec3::new(-1.0, 2.0, 3.0), Vec3::new(0.5, 0.5, 3.0)] {
                let n = (Vec3::new(0.5, 0.5, 0.0) - x).normalize();
                let sum: f32 = pieces.iter().map(|s| point_to_shape(x, n, s)).sum();
                assert!(o.bound[0].clear(x, n), "{x}");
                let c = contour(x, n, o.edges_of(0));
                assert!((c - sum).abs() < 1e-5 + 1e-4 * sum, "bump {bump} x {x}: {c} against {sum}");
            }
        }
    }

    #[test]
    fn patches_fall_back_to_elements_near_the_point() {
        let (pieces, corners) = grid(4, 0.0, 0.1);
        let m = pieces.len() as u32;
        // Elements of two triangles, two patches.
        let piece_start: Vec<u32> = (0..=m / 2).map(|e| 2 * e).collect();
        let c = Clusters::new(pieces.clone(), &corners, piece_start, vec![0, 4, m / 2]);
        for x in [Vec3::new(0.5, 0.5, 0.05), Vec3::new(0.1, 0.9, 1.0), Vec3::new(3.0, -2.0, 0.2)] {
            let n = Vec3::new(0.2, -0.1, -1.0).normalize() * if x.z > 0.5 { 1.0 } else { -1.0 };
            let n = if x.x > 2.0 { Vec3::new(-1.0, 0.5, 0.1).normalize() } else { n };
            for p in 0..2 {
                let r = c.patch_pieces(p);
                let want: f32 = pieces[r].iter().map(|s| point_to_shape(x, n, s)).sum();
                let got = c.to_patch(x, n, p);
                // Exact, but where the patch is far and counts as its vector area.
                let rel = if c.patches.bound[p].far(x) { 2.0 / (FAR * FAR) } else { 1e-4 };
                assert!((got - want).abs() < 1e-5 + rel * want, "x {x} patch {p}: {got} against {want}");
            }
        }
    }

    #[test]
    fn samples_are_uniform_over_a_union() {
        // Two pieces of areas 1 and 3: a quarter of the points on the first.
        let a = Shape { origin: Vec3::ZERO, edge_u: Vec3::X, edge_v: Vec3::Y, triangle: false };
        let b = Shape { origin: Vec3::new(2.0, 0.0, 0.0), edge_u: Vec3::X * 3.0, edge_v: Vec3::Y, triangle: false };
        let pieces = [a, b];
        let mut cdf = [0.0; 2];
        area_cdf(&pieces, &[0, 2], &mut cdf);
        assert_eq!(cdf, [0.25, 1.0]);
        let n = 64;
        let first = (0..n).filter(|&i| sample(&pieces, &cdf, 0..2, (i as f32 + 0.5) / n as f32, 0.5).0.x < 1.5).count();
        assert_eq!(first, n / 4);
        // One piece: the point is the piece's own.
        let (p, normal) = sample(&pieces, &[1.0], 0..1, 0.3, 0.7);
        assert_eq!((p, normal), (a.point(0.3, 0.7), Vec3::Z));
    }
}
