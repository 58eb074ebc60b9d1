//! Planar triangles and parallelograms, their regular subdivision into cells, and the
//! uniform sampling that the form factors use (shared bit for bit with the GPU's layout).

use glam::{DVec3, Vec3};

/// A planar triangle or parallelogram: the points `origin + u * edge_u + v * edge_v` with
/// `u, v >= 0` and `u + v <= 1` (triangle) or `u, v <= 1` (parallelogram). Its front side is
/// the side of `edge_u x edge_v` (counter-clockwise winding), the side that emits and
/// receives light.
///
/// ```
/// use glam::Vec3;
/// use lumbre_radiosity::Shape;
/// let quad = Shape { origin: Vec3::ZERO, edge_u: Vec3::X, edge_v: Vec3::Y, triangle: false };
/// assert_eq!(quad.area(), 1.0);
/// assert_eq!(quad.normal(), Vec3::Z);
/// let tri = Shape { triangle: true, ..quad };
/// assert_eq!(tri.area(), 0.5);
/// assert_eq!(tri.point(0.75, 0.75), Vec3::new(0.25, 0.25, 0.0)); // folded into the triangle
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    /// The corner at `u = v = 0`.
    pub origin: Vec3,
    /// The first edge from `origin`.
    pub edge_u: Vec3,
    /// The second edge from `origin`.
    pub edge_v: Vec3,
    /// A triangle (else a parallelogram).
    pub triangle: bool,
}

/// A cell of the regular `m x m` subdivision of a face: `m^2` congruent cells in both
/// cases. A parallelogram has cells `(i, j)` for `i, j < m`. A triangle has upright cells
/// `(i, j)` with `i + j <= m - 1` (corner at `(i, j) / m`, edges `edge_u / m`, `edge_v / m`)
/// and flipped cells with `i + j <= m - 2` (corner at `(i + 1, j + 1) / m`, edges negated,
/// so they face the same way).
///
/// ```
/// use lumbre_radiosity::Cell;
/// // The cells of a triangle cut in 3 per side, numbered row by row.
/// let cells: Vec<Cell> = (0..9).map(|l| Cell::from_local(l, 3, true)).collect();
/// assert!(cells.iter().enumerate().all(|(l, c)| c.local(3, true) == l as u32));
/// assert_eq!(cells.iter().filter(|c| c.flip).count(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// Column (along `edge_u`).
    pub i: u32,
    /// Row (along `edge_v`).
    pub j: u32,
    /// A flipped cell of a triangle.
    pub flip: bool,
}

impl Cell {
    /// The cell's index among the `m^2` cells of its face: `j * m + i` for parallelograms;
    /// for triangles row by row, `j * (2m - j) + 2i + flip` (row `j` has `2(m - j) - 1` cells).
    pub fn local(&self, m: u32, triangle: bool) -> u32 {
        if triangle { self.j * (2 * m - self.j) + 2 * self.i + self.flip as u32 } else { self.j * m + self.i }
    }

    /// The cell with index `local` (inverse of [`Cell::local`]); `local < m^2`.
    pub fn from_local(local: u32, m: u32, triangle: bool) -> Cell {
        if !triangle {
            return Cell { i: local % m, j: local / m, flip: false };
        }
        // Largest j with j * (2m - j) <= local.
        let mut j = 0;
        while j + 1 < m && (j + 1) * (2 * m - j - 1) <= local {
            j += 1;
        }
        let r = local - j * (2 * m - j);
        Cell { i: r / 2, j, flip: r % 2 == 1 }
    }

    /// The cell of the `q x q` subdivision that contains this cell of the `m x m` one
    /// (`m` a multiple of `q`), by integer arithmetic: a cell's centroid never lies on a
    /// coarse edge.
    ///
    /// ```
    /// use lumbre_radiosity::Cell;
    /// let fine = Cell { i: 1, j: 0, flip: true };
    /// assert_eq!(fine.coarsen(4, 2, true), Cell { i: 0, j: 0, flip: true });
    /// assert_eq!(Cell { i: 3, j: 0, flip: false }.coarsen(4, 2, true), Cell { i: 1, j: 0, flip: false });
    /// ```
    pub fn coarsen(&self, m: u32, q: u32, triangle: bool) -> Cell {
        let r = m / q;
        let (ci, cj) = (self.i / r, self.j / r);
        if !triangle {
            return Cell { i: ci, j: cj, flip: false };
        }
        let (a, b) = (self.i % r, self.j % r);
        // Centroid of the fine cell in the coarse cell's r-grid: (a + 1/3, b + 1/3) upright,
        // (a + 2/3, b + 2/3) flipped; the coarse cell is flipped where the sum exceeds r.
        let flip = if self.flip { a + b + 1 >= r } else { a + b >= r };
        Cell { i: ci, j: cj, flip }
    }
}

impl Shape {
    /// `edge_u x edge_v` in f64.
    fn cross(&self) -> DVec3 {
        self.edge_u.as_dvec3().cross(self.edge_v.as_dvec3())
    }

    /// The area.
    pub fn area(&self) -> f32 {
        let a = self.cross().length();
        (if self.triangle { 0.5 * a } else { a }) as f32
    }

    /// The unit normal of the front side, `normalize(edge_u x edge_v)`.
    pub fn normal(&self) -> Vec3 {
        self.cross().normalize_or_zero().as_vec3()
    }

    /// The point at `(u, v)` in `[0, 1)^2`: a uniform map onto the shape (a triangle folds
    /// `u + v > 1` back onto itself with `(1 - u, 1 - v)`). The GPU evaluates the same formula.
    pub fn point(&self, u: f32, v: f32) -> Vec3 {
        let (u, v) = if self.triangle && u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
        self.origin + self.edge_u * u + self.edge_v * v
    }

    /// The centroid.
    pub fn centroid(&self) -> Vec3 {
        let w = if self.triangle { 1.0 / 3.0 } else { 0.5 };
        (self.origin.as_dvec3() + (self.edge_u.as_dvec3() + self.edge_v.as_dvec3()) * w).as_vec3()
    }

    /// The corners: three for a triangle, four (counter-clockwise) for a parallelogram.
    pub fn corners(&self) -> Vec<Vec3> {
        let (o, u, v) = (self.origin, self.edge_u, self.edge_v);
        if self.triangle { vec![o, o + u, o + v] } else { vec![o, o + u, o + u + v, o + v] }
    }

    /// The cell `c` of the `m x m` subdivision, as a shape (computed in f64 from the face, so
    /// every cell of a face is exact to f32 rounding whatever `m`).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_radiosity::{Cell, Shape};
    /// let tri = Shape { origin: Vec3::ZERO, edge_u: Vec3::X, edge_v: Vec3::Y, triangle: true };
    /// let flipped = tri.cell(2, Cell { i: 0, j: 0, flip: true });
    /// assert_eq!(flipped.origin, Vec3::new(0.5, 0.5, 0.0));
    /// assert_eq!(flipped.normal(), Vec3::Z);
    /// assert_eq!(flipped.area(), 0.125);
    /// ```
    pub fn cell(&self, m: u32, c: Cell) -> Shape {
        let (o, u, v) = (self.origin.as_dvec3(), self.edge_u.as_dvec3(), self.edge_v.as_dvec3());
        let s = 1.0 / m as f64;
        let (ci, cj, sign) = if c.flip { (c.i + 1, c.j + 1, -1.0) } else { (c.i, c.j, 1.0) };
        Shape {
            origin: (o + u * (ci as f64 * s) + v * (cj as f64 * s)).as_vec3(),
            edge_u: (u * (sign * s)).as_vec3(),
            edge_v: (v * (sign * s)).as_vec3(),
            triangle: self.triangle,
        }
    }

    /// The coordinates `(u, v)` of the point of the shape's plane nearest `p`.
    pub fn param(&self, p: Vec3) -> (f32, f32) {
        let (u, v) = (self.edge_u.as_dvec3(), self.edge_v.as_dvec3());
        let d = p.as_dvec3() - self.origin.as_dvec3();
        let (uu, uv, vv) = (u.dot(u), u.dot(v), v.dot(v));
        let det = uu * vv - uv * uv;
        if det <= 0.0 {
            return (0.0, 0.0);
        }
        let (du, dv) = (d.dot(u), d.dot(v));
        (((vv * du - uv * dv) / det) as f32, ((uu * dv - uv * du) / det) as f32)
    }

    /// The cell of the `m x m` subdivision that contains the point at `(u, v)` (clamped
    /// into the shape).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_radiosity::{Cell, Shape};
    /// let tri = Shape { origin: Vec3::ZERO, edge_u: Vec3::X, edge_v: Vec3::Y, triangle: true };
    /// assert_eq!(tri.cell_at(0.4, 0.4, 2), Cell { i: 0, j: 0, flip: true });
    /// assert_eq!(tri.cell_at(0.9, 0.05, 2), Cell { i: 1, j: 0, flip: false });
    /// ```
    pub fn cell_at(&self, u: f32, v: f32, m: u32) -> Cell {
        let (x, y) = (u.clamp(0.0, 1.0) * m as f32, v.clamp(0.0, 1.0) * m as f32);
        let i = (x.floor() as u32).min(m - 1);
        let j = (y.floor() as u32).min(m - 1);
        if !self.triangle {
            return Cell { i, j, flip: false };
        }
        if i + j > m - 1 {
            // Outside the triangle: the upright cell on the diagonal nearest the point.
            let j = j.min(m - 1);
            return Cell { i: m - 1 - j, j, flip: false };
        }
        let flip = (x - i as f32) + (y - j as f32) > 1.0 && i + j < m - 1;
        Cell { i, j, flip }
    }

    /// The layout the GPU reads: four `vec4<f32>` (origin and 1 for a triangle else 0;
    /// `edge_u` and the area; `edge_v`; the unit normal).
    pub fn to_gpu(&self) -> [[f32; 4]; 4] {
        let (o, u, v, n) = (self.origin, self.edge_u, self.edge_v, self.normal());
        [
            [o.x, o.y, o.z, if self.triangle { 1.0 } else { 0.0 }],
            [u.x, u.y, u.z, self.area()],
            [v.x, v.y, v.z, 0.0],
            [n.x, n.y, n.z, 0.0],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> Shape {
        Shape {
            origin: Vec3::new(1.0, 2.0, 3.0),
            edge_u: Vec3::new(2.0, 0.0, 0.5),
            edge_v: Vec3::new(0.3, 1.5, 0.0),
            triangle: true,
        }
    }

    #[test]
    fn cells_tile_the_face() {
        for triangle in [true, false] {
            let face = Shape { triangle, ..tri() };
            for m in 1..7 {
                let cells: Vec<Cell> = (0..m * m).map(|l| Cell::from_local(l, m, triangle)).collect();
                let total: f64 = cells.iter().map(|&c| face.cell(m, c).area() as f64).sum();
                assert!((total - face.area() as f64).abs() < 1e-4 * total, "m {m}");
                for (l, c) in cells.iter().enumerate() {
                    assert_eq!(c.local(m, triangle), l as u32);
                    let s = face.cell(m, *c);
                    assert!((s.normal() - face.normal()).length() < 1e-5);
                    // The centroid of each cell maps back to it.
                    let (u, v) = face.param(s.centroid());
                    assert_eq!(face.cell_at(u, v, m), *c, "m {m} cell {c:?}");
                }
            }
        }
    }

    #[test]
    fn coarsening_agrees_with_geometry() {
        for triangle in [true, false] {
            let face = Shape { triangle, ..tri() };
            for (m, q) in [(4, 2), (6, 3), (6, 2), (8, 1), (9, 3)] {
                for l in 0..m * m {
                    let c = Cell::from_local(l, m, triangle);
                    let (u, v) = face.param(face.cell(m, c).centroid());
                    assert_eq!(c.coarsen(m, q, triangle), face.cell_at(u, v, q), "m {m} q {q} {c:?}");
                }
            }
        }
    }

    #[test]
    fn points_stay_on_the_shape() {
        let t = tri();
        for k in 0..100 {
            let (u, v) = ((k % 10) as f32 / 10.0 + 0.05, (k / 10) as f32 / 10.0 + 0.05);
            let (pu, pv) = t.param(t.point(u, v));
            assert!(pu >= -1e-5 && pv >= -1e-5 && pu + pv <= 1.0 + 1e-5);
        }
    }
}
