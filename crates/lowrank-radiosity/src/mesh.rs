//! The two meshes: a scene cut into n fine elements of near-uniform area and k coarse
//! patches, every element in exactly one patch, elements numbered patch by patch.

use std::collections::HashMap;
use std::f32::consts::PI;
use std::path::Path;

use glam::Vec3;
use lumbre_gpu::{Error, Result};
use lumbre_kdtree::BuildOptions;
use lumbre_raytrace::{Material, Prepared, Scene, Triangle};

use crate::shape::{Cell, Shape};

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

/// A base surface that elements and patches are cut from: a scene triangle, or a square
/// wall of the generated box.
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
    /// The face's elements are the cells of its `fine x fine` subdivision.
    pub fine: u32,
}

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

impl Surfaces {
    /// Every triangle of `scene` is a face, with its material's `Kd` and `Ke` (other
    /// material kinds are treated as diffuse with their `Kd`).
    ///
    /// ```
    /// use glam::Vec3;
    /// let scene = lumbre_raytrace::Scene::from_triangles(&[[Vec3::ZERO, Vec3::X, Vec3::Y]]);
    /// let s = lumbre_radiosity::Surfaces::from_scene(scene).unwrap();
    /// assert_eq!(s.faces.len(), 1);
    /// ```
    pub fn from_scene(scene: Scene) -> Result<Surfaces> {
        if scene.triangles.is_empty() {
            return Err(Error::Input("the scene has no triangles".into()));
        }
        let faces = scene
            .triangles
            .iter()
            .map(|t| {
                let p = t.v.map(|i| scene.positions[i as usize]);
                let m = &scene.materials[t.material as usize];
                Face {
                    shape: Shape { origin: p[0], edge_u: p[1] - p[0], edge_v: p[2] - p[0], triangle: true },
                    kd: m.kd,
                    ke: m.ke,
                    light: None,
                    fine: 1,
                }
            })
            .collect();
        let face_of_triangle = (0..scene.triangles.len() as u32).collect();
        Ok(Surfaces { prepared: Prepared::new(scene, &BuildOptions::default()), faces, face_of_triangle })
    }

    /// Loads an OBJ/MTL scene ([`Scene::load_obj`]); errors name the file and line.
    pub fn load_obj(path: &Path) -> Result<Surfaces> {
        let (scene, _) = Scene::load_obj(path).map_err(|e| Error::Input(e.to_string()))?;
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
                fine: 1,
            });
            materials.push(Material { name: names[w].into(), kd, ..Material::default() });
        }
        let mut scene = Scene::from_triangles(&tris);
        scene.materials = materials;
        scene.triangles =
            scene.triangles.iter().enumerate().map(|(i, t)| Triangle { material: i as u32 / 2, ..*t }).collect();
        let face_of_triangle = (0..12).map(|i| i / 2).collect();
        Surfaces { prepared: Prepared::new(scene, &BuildOptions::default()), faces, face_of_triangle }
    }

    /// The total area of the faces.
    pub fn area(&self) -> f64 {
        self.faces.iter().map(|f| f.shape.area() as f64).sum()
    }
}

/// A patch of the coarse mesh: cell `cell` of the `q x q` subdivision of face `face`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PatchCell {
    /// The face.
    pub face: u32,
    /// Subdivision of the face at the patch's level (divides the face's `fine`).
    pub q: u32,
    /// The cell.
    pub cell: Cell,
}

/// The spread of element areas.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AreaStats {
    /// Smallest element area.
    pub min: f64,
    /// Largest element area.
    pub max: f64,
    /// Mean element area.
    pub mean: f64,
    /// Standard deviation over the mean.
    pub cv: f64,
}

/// The two meshes over a scene: n elements (the unknowns) ordered by patch, and k patches.
///
/// `patch_start` is the paper's index vector I (0-based, length k + 1): the elements of
/// patch `p` are `patch_start[p]..patch_start[p + 1]`. It *is* the sparse matrix V (a CSC
/// matrix with all values 1 has exactly these column pointers and row indices
/// `0..n`), which is why the solve keeps this vector rather than a general sparse matrix:
/// `V^T E` is k contiguous sums and needs no row indices at all (see [`Self::v_matrix`] for
/// the `sprs` form).
///
/// ```
/// let mesh = lumbre_radiosity::TwoMesh::closed_box(6, 3).unwrap();
/// assert_eq!((mesh.n(), mesh.k()), (216, 54));
/// assert!(mesh.patch_start.windows(2).all(|w| w[1] - w[0] == 4));
/// ```
#[derive(Clone, Debug)]
pub struct TwoMesh {
    /// The scene, faces and kd-tree.
    pub surfaces: Surfaces,
    /// The fine elements, ordered by patch.
    pub elements: Vec<Shape>,
    /// Each element's face.
    pub element_face: Vec<u32>,
    /// Each element's cell index in its face (see [`Cell::local`]).
    pub element_cell: Vec<u32>,
    /// Diffuse reflectance per element, RGB.
    pub rho: Vec<[f32; 3]>,
    /// Emitted radiosity per element, RGB: `pi * Ke` for emitters, 0 elsewhere.
    pub emission: Vec<[f32; 3]>,
    /// The coarse patches.
    pub patches: Vec<Shape>,
    /// Where each patch lies in its face.
    pub patch_cells: Vec<PatchCell>,
    /// The paper's I: element ranges of the patches (length k + 1).
    pub patch_start: Vec<u32>,
    /// `face_first[f] + local cell` indexes `element_of_cell`.
    pub face_first: Vec<u32>,
    /// The element of every face cell.
    pub element_of_cell: Vec<u32>,
}

impl TwoMesh {
    /// Builds the meshes: every face is cut into `fine x fine` elements, and `patch_of`
    /// names the patch of each element cell. Elements are ordered by patch (first
    /// appearance of the patches in face order), then by cell.
    pub(crate) fn build(mut surfaces: Surfaces, patch_of: impl Fn(u32, Cell) -> PatchCell) -> Result<TwoMesh> {
        let mut ids: HashMap<PatchCell, u32> = HashMap::new();
        let mut patch_cells: Vec<PatchCell> = Vec::new();
        let mut members: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut face_first = Vec::with_capacity(surfaces.faces.len() + 1);
        let mut total = 0u64;
        for (f, face) in surfaces.faces.iter().enumerate() {
            face_first.push(total as u32);
            let m = face.fine;
            if m == 0 {
                return Err(Error::Input(format!("face {f} has a subdivision of 0")));
            }
            total += m as u64 * m as u64;
            if total > u32::MAX as u64 / 2 {
                return Err(Error::Input(format!("more than {} elements", u32::MAX / 2)));
            }
            for l in 0..m * m {
                let cell = Cell::from_local(l, m, face.shape.triangle);
                let pc = patch_of(f as u32, cell);
                let id = *ids.entry(pc).or_insert_with(|| {
                    patch_cells.push(pc);
                    members.push(Vec::new());
                    (patch_cells.len() - 1) as u32
                });
                members[id as usize].push((f as u32, l));
            }
        }
        face_first.push(total as u32);
        let n = total as usize;
        let mut elements = Vec::with_capacity(n);
        let mut element_face = Vec::with_capacity(n);
        let mut element_cell = Vec::with_capacity(n);
        let mut rho = Vec::with_capacity(n);
        let mut emission = Vec::with_capacity(n);
        let mut element_of_cell = vec![u32::MAX; n];
        let mut patch_start = vec![0u32];
        for list in &members {
            for &(f, l) in list {
                let face = &surfaces.faces[f as usize];
                let shape = face.shape.cell(face.fine, Cell::from_local(l, face.fine, face.shape.triangle));
                let ke = match face.light {
                    Some(rect) => {
                        let (u, v) = face.shape.param(shape.centroid());
                        let inside = u > rect.min[0] && u < rect.max[0] && v > rect.min[1] && v < rect.max[1];
                        if inside { rect.ke } else { face.ke }
                    }
                    None => face.ke,
                };
                element_of_cell[(face_first[f as usize] + l) as usize] = elements.len() as u32;
                elements.push(shape);
                element_face.push(f);
                element_cell.push(l);
                rho.push(face.kd.to_array());
                emission.push((ke * PI).to_array());
            }
            patch_start.push(elements.len() as u32);
        }
        let patches = patch_cells.iter().map(|pc| surfaces.faces[pc.face as usize].shape.cell(pc.q, pc.cell)).collect();
        surfaces.faces.shrink_to_fit();
        Ok(TwoMesh {
            surfaces,
            elements,
            element_face,
            element_cell,
            rho,
            emission,
            patches,
            patch_cells,
            patch_start,
            face_first,
            element_of_cell,
        })
    }

    /// 2MF: both meshes by regular subdivision. Each face is cut into `q^2` patches with
    /// `q = max(1, round(sqrt(face area / (total area / patches))))`, and each patch into
    /// `r^2` elements with `r = max(1, round(sqrt(elements / patches)))`. So n = r^2 k
    /// exactly, and k is near `patches` (faces of very different areas make it differ).
    ///
    /// ```
    /// use lumbre_radiosity::{Surfaces, TwoMesh};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let mesh = TwoMesh::fixed(Surfaces::load_obj(path.as_ref()).unwrap(), 2000, 200).unwrap();
    /// let c = mesh.patch_sizes()[0]; // r^2 elements in every patch
    /// assert!(mesh.patch_sizes().iter().all(|&s| s == c));
    /// assert_eq!(mesh.n(), c as usize * mesh.k());
    /// assert!(mesh.k() > 100 && mesh.k() < 400, "{}", mesh.k());
    /// ```
    pub fn fixed(mut surfaces: Surfaces, elements: usize, patches: usize) -> Result<TwoMesh> {
        check_counts(elements, patches)?;
        let target = surfaces.area() / patches as f64;
        let r = ((elements as f64 / patches as f64).sqrt().round() as u32).max(1);
        let qs: Vec<u32> =
            surfaces.faces.iter().map(|f| ((f.shape.area() as f64 / target).sqrt().round() as u32).max(1)).collect();
        for (f, &q) in surfaces.faces.iter_mut().zip(&qs) {
            f.fine = q * r;
        }
        let tri: Vec<bool> = surfaces.faces.iter().map(|f| f.shape.triangle).collect();
        Self::build(surfaces, |face, cell| {
            let q = qs[face as usize];
            PatchCell { face, q, cell: cell.coarsen(q * r, q, tri[face as usize]) }
        })
    }

    /// 2MF on the generated box ([`Surfaces::closed_box`]): `s x s` elements and `t x t`
    /// patches per wall (`t` divides `s`), so n = 6 s^2 and k = 6 t^2 (the paper's sizes:
    /// s = 24, 48, 96, 192 and t = 6, 12, 24).
    pub fn closed_box(s: u32, t: u32) -> Result<TwoMesh> {
        if s == 0 || t == 0 {
            return Err(Error::Input(format!("elements per side {s} and patches per side {t} must be positive")));
        }
        if !s.is_multiple_of(t) {
            return Err(Error::Input(format!("patches per side {t} must divide elements per side {s}")));
        }
        let mut surfaces = Surfaces::closed_box();
        for f in &mut surfaces.faces {
            f.fine = s;
        }
        Self::build(surfaces, |face, cell| PatchCell { face, q: t, cell: cell.coarsen(s, t, false) })
    }

    /// Number of elements, n.
    pub fn n(&self) -> usize {
        self.elements.len()
    }

    /// Number of patches, k.
    pub fn k(&self) -> usize {
        self.patches.len()
    }

    /// The elements of each patch: `c_p`.
    pub fn patch_sizes(&self) -> Vec<u32> {
        self.patch_start.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The patch of each element (the paper's function P).
    pub fn patch_of_element(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.n());
        for (p, w) in self.patch_start.windows(2).enumerate() {
            out.extend(std::iter::repeat_n(p as u32, (w[1] - w[0]) as usize));
        }
        out
    }

    /// V as an `sprs` CSC matrix (n x k, one 1 per row).
    ///
    /// ```
    /// let mesh = lumbre_radiosity::TwoMesh::closed_box(2, 1).unwrap();
    /// let v = mesh.v_matrix();
    /// assert_eq!((v.rows(), v.cols(), v.nnz()), (24, 6, 24));
    /// ```
    pub fn v_matrix(&self) -> sprs::CsMat<f32> {
        let n = self.n();
        sprs::CsMat::new_csc(
            (n, self.k()),
            self.patch_start.iter().map(|&s| s as usize).collect(),
            (0..n).collect(),
            vec![1.0; n],
        )
    }

    /// Element areas.
    pub fn areas(&self) -> Vec<f32> {
        self.elements.iter().map(Shape::area).collect()
    }

    /// The spread of element areas (min, max, mean, coefficient of variation).
    pub fn area_stats(&self) -> AreaStats {
        area_stats(&self.areas())
    }

    /// The spread of patch areas.
    pub fn patch_area_stats(&self) -> AreaStats {
        area_stats(&self.patches.iter().map(Shape::area).collect::<Vec<_>>())
    }

    /// The element a ray hit: `tri` is the scene triangle, `point` the hit point.
    pub fn element_at(&self, tri: u32, point: Vec3) -> Option<u32> {
        let f = *self.surfaces.face_of_triangle.get(tri as usize)? as usize;
        let face = &self.surfaces.faces[f];
        let (u, v) = face.shape.param(point);
        let cell = face.shape.cell_at(u, v, face.fine);
        self.element_of_cell.get((self.face_first[f] + cell.local(face.fine, face.shape.triangle)) as usize).copied()
    }

    /// The emission scaled by `s` per channel (relighting).
    pub fn emission_scaled(&self, s: f32) -> Vec<[f32; 3]> {
        self.emission.iter().map(|e| e.map(|v| v * s)).collect()
    }
}

pub(crate) fn check_counts(elements: usize, patches: usize) -> Result<()> {
    if elements == 0 || patches == 0 {
        return Err(Error::Input(format!("elements ({elements}) and patches ({patches}) must be positive")));
    }
    if patches > elements {
        return Err(Error::Input(format!("patches ({patches}) cannot outnumber elements ({elements})")));
    }
    Ok(())
}

fn area_stats(a: &[f32]) -> AreaStats {
    let n = a.len().max(1) as f64;
    let mean = a.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = a.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    AreaStats {
        min: a.iter().fold(f64::INFINITY, |m, &x| m.min(x as f64)),
        max: a.iter().fold(0.0, |m, &x| m.max(x as f64)),
        mean,
        cv: if mean > 0.0 { var.sqrt() / mean } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_sizes_match_the_paper() {
        for (s, t) in [(24, 6), (24, 12), (24, 24), (48, 6)] {
            let m = TwoMesh::closed_box(s, t).unwrap();
            assert_eq!((m.n(), m.k()), (6 * (s * s) as usize, 6 * (t * t) as usize));
            let r = (s / t) * (s / t);
            assert!(m.patch_sizes().iter().all(|&c| c == r));
            let st = m.area_stats();
            assert!(st.cv < 1e-5 && (st.mean - 4.0 / (s * s) as f64).abs() < 1e-7);
            // The light: the middle quarter of the ceiling.
            let lit = m.emission.iter().filter(|e| e[0] > 0.0).count();
            assert_eq!(lit, (s as usize / 4) * (s as usize / 4));
        }
        assert!(TwoMesh::closed_box(6, 4).is_err());
        assert!(TwoMesh::closed_box(0, 1).is_err());
    }

    #[test]
    fn elements_lie_in_their_patch() {
        let m = TwoMesh::closed_box(8, 2).unwrap();
        for (p, w) in m.patch_start.windows(2).enumerate() {
            for e in w[0]..w[1] {
                let patch = m.patches[p];
                let (u, v) = patch.param(m.elements[e as usize].centroid());
                assert!((0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&v), "element {e} patch {p}");
            }
        }
    }

    #[test]
    fn hits_find_their_element() {
        let m = TwoMesh::closed_box(6, 3).unwrap();
        for (e, s) in m.elements.iter().enumerate() {
            let f = m.element_face[e] as usize;
            let tri = m.surfaces.face_of_triangle.iter().position(|&x| x as usize == f).unwrap() as u32;
            assert_eq!(m.element_at(tri, s.centroid()), Some(e as u32));
        }
    }
}
