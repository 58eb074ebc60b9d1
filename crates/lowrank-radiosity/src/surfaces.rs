//! The surfaces radiosity meshes: a scene's triangles, with the pairs that form a
//! parallelogram (a quad of the file) joined into one face, or the generated closed box.

use std::path::Path;

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_raytrace::{Material, Prepared, Scene, Triangle};

use crate::shape::Shape;

/// A rectangle of a face, in its `(u, v)` coordinates, whose elements emit `ke` (the
/// generated box's light is part of its ceiling, so the ceiling stays one square face).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LightRect {
    /// Lower `(u, v)` corner.
    pub min: [f32; 2],
    /// Upper `(u, v)` corner.
    pub max: [f32; 2],
    /// Emitted radiance of the elements whose centroid lies inside.
    pub ke: Vec3,
}

/// A base surface that elements and patches are cut from: a scene triangle, a quad of the
/// scene (two triangles forming a parallelogram), or a square wall of the generated box.
#[derive(Clone, Debug, PartialEq)]
pub struct Face {
    /// The surface.
    pub shape: Shape,
    /// Diffuse reflectance (the material's `Kd`).
    pub kd: Vec3,
    /// Emitted radiance (the material's `Ke`).
    pub ke: Vec3,
    /// Elements inside this rectangle emit its radiance instead of `ke`.
    pub light: Option<LightRect>,
    /// The scene material (faces of one material may merge into one element).
    pub material: u32,
    /// The corners as the scene has them (exactly: faces that share a vertex share these
    /// values), in [`Shape::corners`] order; a triangle repeats its third.
    pub vertices: [Vec3; 4],
    /// Where this face is one cell of a dominant face's grid: that face and the grid.
    pub split: Option<Split>,
    /// Distance to the other geometry, which bounds the element size near it in scenes with
    /// a dominant face ([`Surfaces::weight`]); infinite elsewhere.
    pub clearance: f32,
}

/// A dominant face cut into `side x side` sub-faces, numbered row by row from `first`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// The whole face.
    pub root: Shape,
    /// Sub-faces per side.
    pub side: u32,
    /// The first sub-face's index.
    pub first: u32,
}

/// A parallelogram face holding more than this share of the scene's area is dominant: a
/// ground plane far larger than what stands on it.
pub const DOMINANT: f64 = 0.25;
/// Sub-faces per side of a dominant face.
const SPLIT_SIDE: u32 = 64;
/// Near other geometry, elements are at most this fraction of the distance to it across.
const CLEARANCE_SIDE: f32 = 0.5;
/// Elements shrink near other geometry to at least this fraction of the element area.
const MIN_WEIGHT: f64 = 1.0 / 1024.0;

/// A scene as radiosity sees it: the ray-casting geometry and the faces elements are cut
/// from, before the two meshes are chosen.
#[derive(Clone, Debug)]
pub struct Surfaces {
    /// The scene and its kd-tree (shadow rays).
    pub prepared: Prepared,
    /// The faces.
    pub faces: Vec<Face>,
    /// For each scene triangle, the face it belongs to.
    pub face_of_triangle: Vec<u32>,
}

/// The Cornell box's colours (`CornellBox-Diffuse.mtl`).
pub const WHITE: Vec3 = Vec3::new(0.725, 0.71, 0.68);
/// Left wall.
pub const RED: Vec3 = Vec3::new(0.63, 0.065, 0.05);
/// Right wall.
pub const GREEN: Vec3 = Vec3::new(0.14, 0.45, 0.091);
/// The light's reflectance.
pub const LIGHT_KD: Vec3 = Vec3::splat(0.78);
/// The light's emitted radiance.
pub const LIGHT_KE: Vec3 = Vec3::new(17.0, 12.0, 4.0);

/// Relative tolerance of the parallelogram test (against the quad's size).
const QUAD_TOLERANCE: f32 = 1e-5;

/// The parallelogram that triangles `a` and `b` form when they share an edge, lie in one
/// plane and their far corners are opposite corners of a parallelogram (the two halves of
/// a quad, however it was split); `None` otherwise. The parallelogram keeps `a`'s winding.
fn quad_of(a: [Vec3; 3], b: [Vec3; 3]) -> Option<(Shape, [Vec3; 4])> {
    for i in 0..3 {
        // a's edge (s0 -> s1) must be b's edge (s1 -> s0).
        let (s0, s1, o1) = (a[i], a[(i + 1) % 3], a[(i + 2) % 3]);
        for j in 0..3 {
            if b[j] != s1 || b[(j + 1) % 3] != s0 {
                continue;
            }
            let o2 = b[(j + 2) % 3];
            let size = (s1 - s0).length().max((o2 - o1).length());
            if ((s0 + s1) - (o1 + o2)).length() > QUAD_TOLERANCE * size {
                return None;
            }
            // Corners o1, s0, o2, s1 counter-clockwise: origin o1, edges to s0 and s1.
            let shape = Shape { origin: o1, edge_u: s0 - o1, edge_v: s1 - o1, triangle: false };
            return Some((shape, [o1, s0, o2, s1]));
        }
    }
    None
}

impl Surfaces {
    /// The faces of `scene`: each triangle, except that two consecutive triangles of one
    /// material that form a parallelogram (a quad of the file, split in two) are one
    /// parallelogram face, which meshes into a regular grid. Faces take their material's
    /// `Kd` and `Ke` (other material kinds are treated as diffuse with their `Kd`).
    ///
    /// ```
    /// use glam::Vec3;
    /// let (o, x, y) = (Vec3::ZERO, Vec3::X, Vec3::Y);
    /// // A unit square as two triangles: one parallelogram face.
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[o, x, x + y], [o, x + y, y]]);
    /// let s = lumbre_radiosity::Surfaces::from_scene(scene).unwrap();
    /// assert_eq!(s.faces.len(), 1);
    /// assert!(!s.faces[0].shape.triangle && s.faces[0].shape.area() == 1.0);
    /// assert_eq!(s.face_of_triangle, vec![0, 0]);
    /// ```
    pub fn from_scene(scene: Scene) -> Result<Surfaces> {
        if scene.triangles.is_empty() {
            return Err(Error::Input("the scene has no triangles".into()));
        }
        let corners = |t: &Triangle| t.v.map(|i| scene.positions[i as usize]);
        let mut faces = Vec::with_capacity(scene.triangles.len());
        let mut face_of_triangle = Vec::with_capacity(scene.triangles.len());
        let mut i = 0;
        while i < scene.triangles.len() {
            let t = &scene.triangles[i];
            let m = &scene.materials[t.material as usize];
            let face = |(shape, vertices)| Face {
                shape,
                kd: m.kd,
                ke: m.ke,
                light: None,
                material: t.material,
                vertices,
                split: None,
                clearance: f32::INFINITY,
            };
            let next = scene.triangles.get(i + 1).filter(|n| n.material == t.material);
            if let Some(quad) = next.and_then(|n| quad_of(corners(t), corners(n))) {
                face_of_triangle.extend([faces.len() as u32; 2]);
                faces.push(face(quad));
                i += 2;
                continue;
            }
            let p = corners(t);
            let shape = Shape { origin: p[0], edge_u: p[1] - p[0], edge_v: p[2] - p[0], triangle: true };
            face_of_triangle.push(faces.len() as u32);
            faces.push(face((shape, [p[0], p[1], p[2], p[2]])));
            i += 1;
        }
        let mut s = Surfaces { prepared: Prepared::new(scene, &Default::default()), faces, face_of_triangle };
        s.split_dominant();
        Ok(s)
    }

    /// Cuts every dominant parallelogram face (more than [`DOMINANT`] of the area) into a
    /// grid of sub-faces, and gives every face its clearance: a sub-face's distance to the
    /// nearest corner or centroid of the other faces, another face's distance to the
    /// dominant faces. Elements then shrink near the other geometry ([`Surfaces::weight`]):
    /// a ground plane keeps detail around what stands on it instead of spreading the
    /// elements over its whole area. Scenes without a dominant face are left as they are.
    fn split_dominant(&mut self) {
        let total = self.area();
        let dominant: Vec<bool> = self
            .faces
            .iter()
            .map(|f| self.faces.len() > 1 && !f.shape.triangle && f.shape.area() as f64 > DOMINANT * total)
            .collect();
        if !dominant.contains(&true) {
            return;
        }
        let others: Vec<Vec3> = self
            .faces
            .iter()
            .zip(&dominant)
            .filter(|(_, d)| !**d)
            .flat_map(|(f, _)| f.shape.corners().into_iter().chain([f.shape.centroid()]))
            .collect();
        let near = lumbre_kdtree::PointKdTree::build(&others);
        let roots: Vec<Shape> = self.faces.iter().zip(&dominant).filter(|(_, d)| **d).map(|(f, _)| f.shape).collect();
        let mut faces = Vec::with_capacity(self.faces.len() + roots.len() * (SPLIT_SIDE * SPLIT_SIDE) as usize);
        let mut new_index = Vec::with_capacity(self.faces.len());
        for (face, &d) in std::mem::take(&mut self.faces).into_iter().zip(&dominant) {
            new_index.push(faces.len() as u32);
            if !d {
                let c = face.shape.centroid();
                let clearance = roots.iter().map(|r| distance_to(r, c)).fold(f32::INFINITY, f32::min);
                faces.push(Face { clearance, ..face });
                continue;
            }
            let (n, root) = (SPLIT_SIDE, face.shape);
            let split = Split { root, side: n, first: faces.len() as u32 };
            // Grid points computed once, so that neighbouring sub-faces share them bit for bit.
            let point = |i: u32, j: u32| {
                let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                (root.origin.as_dvec3() + root.edge_u.as_dvec3() * u + root.edge_v.as_dvec3() * v).as_vec3()
            };
            let grid: Vec<Vec3> =
                (0..=n).flat_map(|j| (0..=n).map(move |i| (i, j))).map(|(i, j)| point(i, j)).collect();
            let at = |i: u32, j: u32| grid[(j * (n + 1) + i) as usize];
            for j in 0..n {
                for i in 0..n {
                    let v = [at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)];
                    let shape = Shape { origin: v[0], edge_u: v[1] - v[0], edge_v: v[3] - v[0], triangle: false };
                    let half = 0.5 * (v[2] - v[0]).length().max((v[3] - v[1]).length());
                    let clearance =
                        near.nearest(shape.centroid()).map_or(f32::INFINITY, |(_, d2)| (d2.sqrt() - half).max(0.0));
                    faces.push(Face { shape, vertices: v, split: Some(split), clearance, ..face.clone() });
                }
            }
        }
        for f in &mut self.face_of_triangle {
            *f = new_index[*f as usize];
        }
        self.faces = faces;
    }

    /// The face holding `point` of scene triangle `tri` (a sub-face of a split face).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_radiosity::Surfaces;
    /// // A 64 x 64 ground under a small triangle: the ground is a dominant face, split.
    /// let (g, t) = (Vec3::new(-32.0, 0.0, -32.0), Vec3::new(0.0, 0.1, 0.0));
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[
    ///     [g, g + Vec3::Z * 64.0, g + Vec3::new(64.0, 0.0, 64.0)],
    ///     [g, g + Vec3::new(64.0, 0.0, 64.0), g + Vec3::X * 64.0],
    ///     [t, t + Vec3::X, t + Vec3::Y],
    /// ]);
    /// let s = Surfaces::from_scene(scene).unwrap();
    /// let f = s.face_at(0, Vec3::new(0.5, 0.0, 0.5)).unwrap();
    /// assert!(s.faces[f].split.is_some());
    /// let (u, v) = s.faces[f].shape.param(Vec3::new(0.5, 0.0, 0.5));
    /// assert!((0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v));
    /// // Near the triangle the ground's elements shrink; far away they do not.
    /// let far = s.face_at(0, Vec3::new(-31.0, 0.0, 31.0)).unwrap();
    /// assert!(s.weight(f, 1.0) < 0.01 && s.weight(far, 1.0) == 1.0);
    /// ```
    pub fn face_at(&self, tri: u32, point: Vec3) -> Option<usize> {
        let f = *self.face_of_triangle.get(tri as usize)? as usize;
        let Some(s) = self.faces.get(f)?.split else { return Some(f) };
        let (u, v) = s.root.param(point);
        let cell = |t: f32| ((t.clamp(0.0, 1.0) * s.side as f32) as u32).min(s.side - 1);
        Some((s.first + cell(v) * s.side + cell(u)) as usize)
    }

    /// How much smaller than the element area face `f`'s elements are: 1, but near other
    /// geometry in a scene with a dominant face, `(clearance / 2)^2 / a_e` down to 1/1024
    /// (see [`Surfaces::face_at`]'s example).
    pub fn weight(&self, f: usize, a_e: f64) -> f64 {
        let side = (self.faces[f].clearance * CLEARANCE_SIDE) as f64;
        if side.is_finite() { (side * side / a_e).clamp(MIN_WEIGHT, 1.0) } else { 1.0 }
    }

    /// Loads a scene file ([`Scene::load`]: OBJ/MTL or glTF); errors name the file and line.
    pub fn load(path: &Path) -> Result<Surfaces> {
        let (scene, _) = Scene::load(path).map_err(|e| Error::Input(e.to_string()))?;
        Surfaces::from_scene(scene)
    }

    /// The benchmark scene: a closed box `[-1, 1] x [0, 2] x [-1, 1]` of six square walls
    /// facing inwards, with the Cornell box's colours (left red, right green, the others
    /// white) and a square light of side 0.5 in the middle of the ceiling (part of the
    /// ceiling face: its elements emit [`LIGHT_KE`]).
    ///
    /// ```
    /// let s = lumbre_radiosity::Surfaces::closed_box();
    /// assert_eq!((s.faces.len(), s.prepared.tris.len()), (6, 12));
    /// ```
    pub fn closed_box() -> Surfaces {
        let (x, y, z) = (Vec3::X * 2.0, Vec3::Y * 2.0, Vec3::Z * 2.0);
        let walls = [
            (Vec3::new(-1.0, 0.0, -1.0), z, x, WHITE), // floor, +y
            (Vec3::new(-1.0, 2.0, -1.0), x, z, WHITE), // ceiling, -y
            (Vec3::new(-1.0, 0.0, -1.0), x, y, WHITE), // back, +z
            (Vec3::new(-1.0, 0.0, 1.0), y, x, WHITE),  // front, -z
            (Vec3::new(-1.0, 0.0, -1.0), y, z, RED),   // left, +x
            (Vec3::new(1.0, 0.0, -1.0), z, y, GREEN),  // right, -x
        ];
        let names = ["floor", "ceiling", "backWall", "frontWall", "leftWall", "rightWall"];
        let mut tris = Vec::new();
        let mut faces = Vec::new();
        let mut materials = Vec::new();
        for (w, &(o, u, v, kd)) in walls.iter().enumerate() {
            tris.push([o, o + u, o + u + v]);
            tris.push([o, o + u + v, o + v]);
            let light = (w == 1).then_some(LightRect { min: [0.375; 2], max: [0.625; 2], ke: LIGHT_KE });
            faces.push(Face {
                shape: Shape { origin: o, edge_u: u, edge_v: v, triangle: false },
                kd,
                ke: Vec3::ZERO,
                light,
                material: w as u32,
                vertices: [o, o + u, o + u + v, o + v],
                split: None,
                clearance: f32::INFINITY,
            });
            materials.push(Material { name: names[w].into(), kd, ..Material::default() });
        }
        let mut scene = Scene::from_triangles(&tris);
        scene.materials = materials;
        scene.triangles =
            scene.triangles.iter().enumerate().map(|(i, t)| Triangle { material: i as u32 / 2, ..*t }).collect();
        let face_of_triangle = (0..12).map(|i| i / 2).collect();
        Surfaces { prepared: Prepared::new(scene, &Default::default()), faces, face_of_triangle }
    }

    /// The total area of the faces.
    pub fn area(&self) -> f64 {
        self.faces.iter().map(|f| f.shape.area() as f64).sum()
    }

    /// The emitted radiance at the point `(u, v)` of face `f` (its light rectangle's where
    /// the point lies inside it).
    pub(crate) fn ke_at(&self, f: usize, u: f32, v: f32) -> Vec3 {
        let face = &self.faces[f];
        match face.light {
            Some(r) if u > r.min[0] && u < r.max[0] && v > r.min[1] && v < r.max[1] => r.ke,
            _ => face.ke,
        }
    }
}

/// The distance from `p` to the parallelogram or triangle `s` (to its plane's nearest point,
/// clamped into the shape's parameter range).
fn distance_to(s: &Shape, p: Vec3) -> f32 {
    let (u, v) = s.param(p);
    let (u, v) = (u.clamp(0.0, 1.0), v.clamp(0.0, 1.0));
    let (u, v) = if s.triangle && u + v > 1.0 { (u / (u + v), v / (u + v)) } else { (u, v) };
    (s.origin + s.edge_u * u + s.edge_v * v - p).length()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_join_whichever_diagonal_splits_them() {
        let (o, x, y) = (Vec3::new(1.0, 2.0, 3.0), Vec3::new(2.0, 0.0, 0.5), Vec3::new(0.0, 1.0, 0.0));
        let c = [o, o + x, o + x + y, o + y];
        for split in [[[0, 1, 2], [0, 2, 3]], [[0, 1, 3], [1, 2, 3]], [[1, 2, 3], [0, 1, 3]]] {
            let a = split[0].map(|i| c[i]);
            let b = split[1].map(|i| c[i]);
            let (q, v) = quad_of(a, b).expect("a quad");
            assert_eq!(q.corners()[0], v[0]);
            assert!((q.area() - x.cross(y).length()).abs() < 1e-5);
            let n = (a[1] - a[0]).cross(a[2] - a[0]).normalize();
            assert!((q.normal() - n).length() < 1e-5, "winding kept");
            let mut corners = q.corners();
            corners.sort_by(|p, q| p.to_array().partial_cmp(&q.to_array()).unwrap());
            let mut want = c.to_vec();
            want.sort_by(|p, q| p.to_array().partial_cmp(&q.to_array()).unwrap());
            for (p, w) in corners.iter().zip(&want) {
                assert!((*p - *w).length() < 1e-5);
            }
        }
        // A kite (not a parallelogram) and triangles without a common edge stay apart.
        assert!(quad_of([o, o + x, o + y], [o + x, o + x + y * 3.0, o + y]).is_none());
        assert!(quad_of([o, o + x, o + y], [o + x * 5.0, o + x * 6.0, o + y * 5.0]).is_none());
    }

    #[test]
    fn the_cornell_boxs_parallelograms_are_faces() {
        // Its walls are not all parallelograms (the real box is not a cube): the floor, back
        // and left walls stay two triangles each.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
        let s = Surfaces::load(path.as_ref()).unwrap();
        let quads = s.faces.iter().filter(|f| !f.shape.triangle).count();
        assert_eq!(s.faces.len(), 36 - quads);
        assert!((12..=15).contains(&quads), "{quads} parallelograms");
        let total: f64 = s.prepared.tris.iter().map(|t| 0.5 * (t[1] - t[0]).cross(t[2] - t[0]).length() as f64).sum();
        assert!((s.area() - total).abs() < 1e-4 * total);
    }
}
