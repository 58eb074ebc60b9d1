//! The two meshes over any triangle scene: n fine elements of near-uniform area and k
//! coarse patches, every element in exactly one patch, elements numbered patch by patch.
//!
//! Every face is cut into `m x m` congruent cells (pieces) near the element area. A face
//! of at least the patch area keeps today's regular meshing: its `q x q` coarse cells
//! are patches and its cells are elements (`m = q r`). The cells of smaller faces (the
//! triangles of a scanned mesh, say) are grouped instead: they are cut into cells no larger
//! than the element area (a small face is one cell), and cells merge with neighbours of the same
//! material within 30 degrees into elements of about the element area (a cell as large
//! stays alone), and elements grow into connected patches within 60 degrees of
//! about the patch area (see the `cluster` module). The element and patch areas are then
//! corrected until n and k are within a few percent of the request where the scene allows.

use std::collections::HashMap;
use std::f32::consts::PI;

use glam::Vec3;
use lumbre_gpu::{Error, Result};

use crate::cluster::{Graph, Items, corner_ids, grow, morton_order, shape_stats};
use crate::outline::Clusters;
use crate::shape::{Cell, Shape};
use crate::surfaces::Surfaces;

/// Faces of this fraction of the patch area or more are meshed regularly.
const REGULAR_FACE: f64 = 1.0;
/// Cells merged into one element are within this angle of its mean normal (30 degrees).
const ELEMENT_COS: f32 = 0.866;
/// Elements grouped into one patch are within this angle of its mean normal (60 degrees).
const PATCH_COS: f32 = 0.5;
/// Rounds of correcting the element and patch areas towards the counts asked for.
const ROUNDS: usize = 12;
/// Good enough: n and k within this fraction of the request.
const CLOSE: f64 = 0.03;

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

/// How the counts came out against the request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshReport {
    /// Elements asked for.
    pub elements: usize,
    /// Patches asked for.
    pub patches: usize,
    /// Faces meshed regularly (patches cut from them).
    pub regular_faces: usize,
    /// Faces whose cells were grouped into elements and patches.
    pub clustered_faces: usize,
    /// Why n or k is more than 10% from the request, when it is.
    pub note: Option<String>,
}

/// A planned patch: its elements (each a list of global cells), and where it lies when it
/// is a coarse cell of a regularly meshed face.
#[derive(Clone, Debug)]
pub(crate) struct PlannedPatch {
    pub cell: Option<PatchCell>,
    pub elements: Vec<Vec<u32>>,
}

/// The meshes before assembly: each face's cut and the patches.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub fine: Vec<u32>,
    pub first: Vec<u32>,
    pub corners: Vec<[u32; 4]>,
    pub patches: Vec<PlannedPatch>,
    pub regular: usize,
}

impl Plan {
    pub(crate) fn n(&self) -> usize {
        self.patches.iter().map(|p| p.elements.len()).sum()
    }
}

/// The global cell `g` as (face, local cell) given the faces' first cells.
pub(crate) fn face_of_cell(first: &[u32], g: u32) -> (usize, u32) {
    let f = first.partition_point(|&s| s <= g) - 1;
    (f, g - first[f])
}

/// Of the two integers `x >= 1` around `sqrt(want)`, the one whose square brings `carry +
/// want - x^2` nearest 0 (error diffusion that never strays from the nearest sizes).
fn diffused_root(want: f64, carry: &mut f64) -> u32 {
    let r = want.max(0.0).sqrt();
    let (lo, hi) = ((r.floor() as u32).max(1), (r.ceil() as u32).max(1));
    let err = |x: u32| *carry + want - (x as f64).powi(2);
    let x = if err(lo).abs() <= err(hi).abs() { lo } else { hi };
    *carry = err(x);
    x
}

/// How each face is cut: `(m, q)`, `q = 0` for faces whose cells are grouped. A regular
/// face's `q^2` patches and `m^2` cells are rounded up or down with error diffusion over
/// the faces, so the totals stay within one face's step of the request. With `pow2`,
/// regular faces have `m = q 2^d` (2MCE splits their patches in four).
fn cuts(surfaces: &Surfaces, a_e: f64, a_p: f64, pow2: bool) -> Vec<(u32, u32)> {
    let (mut carry_p, mut carry_e) = (0.0f64, 0.0f64);
    surfaces
        .faces
        .iter()
        .enumerate()
        .map(|(index, f)| {
            // Faces near other geometry in a scene with a dominant face count larger, so their
            // elements and patches come out smaller (weight 1 elsewhere).
            let area = f.shape.area() as f64 / surfaces.weight(index, a_e);
            let (cells, side) = (area / a_e, (area / a_e).sqrt());
            if area < REGULAR_FACE * a_p {
                // Cells no larger than the element area (the grouping merges them as the
                // count needs); a small face is one cell.
                return ((side.ceil() as u32).clamp(1, 1 << 14), 0);
            }
            if !pow2 {
                let q = diffused_root(area / a_p, &mut carry_p).min(1 << 14);
                let q2 = (q as f64).powi(2);
                let mut per_patch = carry_e / q2;
                let r = diffused_root(cells / q2, &mut per_patch).min((1 << 14) / q);
                carry_e = per_patch * q2;
                return (q * r, q);
            }
            // The finest m = q 2^d near `side` with q at least q0.
            let q0 = ((area / a_p).sqrt().round() as u32).max(1);
            let target = (side.round() as u32).clamp(1, 1 << 14).max(q0);
            let mut d = 0;
            while q0 << (d + 1) <= target {
                d += 1;
            }
            let q = ((target as f64 / (1u32 << d) as f64).round() as u32).max(1);
            (q << d, q)
        })
        .collect()
}

/// What a cut of the faces fixes: its cells, their corners, and the grouped faces' cells
/// with their shapes and adjacency (reused while the element and patch areas are searched).
struct Geometry {
    cut: Vec<(u32, u32)>,
    fine: Vec<u32>,
    first: Vec<u32>,
    corners: Vec<[u32; 4]>,
    /// Cells of the grouped faces (global numbers), their areas, normals, centroids and
    /// materials, and which of them share a corner.
    loose: Vec<u32>,
    /// The face of each grouped cell.
    loose_face: Vec<u32>,
    area: Vec<f64>,
    normal: Vec<Vec3>,
    centroid: Vec<Vec3>,
    material: Vec<u32>,
    graph: Graph,
    /// The cells in Morton order (the grouping's seeds), and the last grouping made.
    order: Vec<u32>,
    last: std::cell::RefCell<Option<(f64, Vec<Vec<u32>>)>>,
}

impl Geometry {
    fn new(surfaces: &Surfaces, cut: Vec<(u32, u32)>) -> Geometry {
        let fine: Vec<u32> = cut.iter().map(|c| c.0).collect();
        let mut first = Vec::with_capacity(fine.len() + 1);
        let mut total = 0u32;
        for &m in &fine {
            first.push(total);
            total += m * m;
        }
        first.push(total);
        let corners = corner_ids(&surfaces.faces, &fine, &first);
        let loose: Vec<u32> =
            (0..surfaces.faces.len()).filter(|&f| cut[f].1 == 0).flat_map(|f| first[f]..first[f + 1]).collect();
        let shapes: Vec<Shape> = loose.iter().map(|&g| cell_shape(surfaces, &fine, &first, g)).collect();
        let (area, normal, centroid) = shape_stats(&shapes);
        let loose_face: Vec<u32> = loose.iter().map(|&g| face_of_cell(&first, g).0 as u32).collect();
        let material = loose.iter().map(|&g| surfaces.faces[face_of_cell(&first, g).0].material).collect();
        let graph = Graph::sharing(loose.len(), |i| &corners[loose[i] as usize][..]);
        let order = morton_order(&centroid);
        let last = std::cell::RefCell::new(None);
        Geometry { cut, fine, first, corners, loose, loose_face, area, normal, centroid, material, graph, order, last }
    }

    /// The grouped cells merged into elements of about `a_e` (in area over the faces'
    /// weights).
    fn grouped_elements(&self, surfaces: &Surfaces, a_e: f64) -> Vec<Vec<u32>> {
        if self.loose.is_empty() {
            return Vec::new();
        }
        if let Some((_, elements)) = self.last.borrow().as_ref().filter(|(a, _)| *a == a_e) {
            return elements.clone();
        }
        let area: Vec<f64> =
            self.area.iter().zip(&self.loose_face).map(|(a, &f)| a / surfaces.weight(f as usize, a_e)).collect();
        let items = Items {
            area: &area,
            normal: &self.normal,
            centroid: &self.centroid,
            group: &self.material,
            order: Some(&self.order),
        };
        let (of, count) = grow(&self.graph, &items, a_e, ELEMENT_COS);
        let mut merged = vec![Vec::new(); count];
        for (i, &c) in of.iter().enumerate() {
            merged[c as usize].push(self.loose[i]);
        }
        *self.last.borrow_mut() = Some((a_e, merged.clone()));
        merged
    }
}

/// Cell `g` (global number) as a shape.
fn cell_shape(surfaces: &Surfaces, fine: &[u32], first: &[u32], g: u32) -> Shape {
    let (f, l) = face_of_cell(first, g);
    let face = &surfaces.faces[f];
    face.shape.cell(fine[f], Cell::from_local(l, fine[f], face.shape.triangle))
}

/// Plans meshes for many element and patch areas, keeping what a cut fixes.
struct Planner<'a> {
    surfaces: &'a Surfaces,
    pow2: bool,
    geometry: Option<Geometry>,
}

impl Planner<'_> {
    /// The geometry of the cut for these areas (rebuilt only when the cut changes).
    fn geometry(&mut self, a_e: f64, a_p: f64) -> &Geometry {
        let cut = cuts(self.surfaces, a_e, a_p, self.pow2);
        let same = self.geometry.as_ref().is_some_and(|g| g.cut == cut);
        if !same {
            self.geometry = Some(Geometry::new(self.surfaces, cut));
        }
        self.geometry.as_ref().expect("made above")
    }

    /// The number of elements these areas give (without grouping patches).
    fn elements(&mut self, a_e: f64, a_p: f64) -> usize {
        let surfaces = self.surfaces;
        let g = self.geometry(a_e, a_p);
        let regular: usize = g.cut.iter().filter(|c| c.1 > 0).map(|c| (c.0 * c.0) as usize).sum();
        regular + g.grouped_elements(surfaces, a_e).len()
    }

    /// The plan for element area `a_e` and patch area `a_p`.
    fn plan(&mut self, a_e: f64, a_p: f64) -> Plan {
        let surfaces = self.surfaces;
        let g = self.geometry(a_e, a_p);
        // Regular faces: a patch per coarse cell, an element per cell.
        let mut patches = Vec::new();
        let mut regular = 0;
        for (f, face) in surfaces.faces.iter().enumerate() {
            let (m, q) = g.cut[f];
            if q == 0 {
                continue;
            }
            regular += 1;
            let tri = face.shape.triangle;
            let start = patches.len();
            for l in 0..q * q {
                let cell = Cell::from_local(l, q, tri);
                patches.push(PlannedPatch { cell: Some(PatchCell { face: f as u32, q, cell }), elements: Vec::new() });
            }
            for l in 0..m * m {
                let coarse = Cell::from_local(l, m, tri).coarsen(m, q, tri);
                patches[start + coarse.local(q, tri) as usize].elements.push(vec![g.first[f] + l]);
            }
        }
        // Grouped faces: cells merge into elements, elements grow into patches.
        let elements = g.grouped_elements(surfaces, a_e);
        if !elements.is_empty() {
            let stats: Vec<(f64, Vec3, Vec3)> = elements
                .iter()
                .map(|cells| {
                    let (mut a, mut n, mut c) = (0.0f64, glam::DVec3::ZERO, glam::DVec3::ZERO);
                    for &cell in cells {
                        let s = cell_shape(surfaces, &g.fine, &g.first, cell);
                        let w = s.area() as f64 / surfaces.weight(face_of_cell(&g.first, cell).0, a_e);
                        a += w;
                        n += s.normal().as_dvec3() * w;
                        c += s.centroid().as_dvec3() * w;
                    }
                    (a, n.normalize_or_zero().as_vec3(), (c / a.max(1e-300)).as_vec3())
                })
                .collect();
            let ea: Vec<f64> = stats.iter().map(|s| s.0).collect();
            let en: Vec<Vec3> = stats.iter().map(|s| s.1).collect();
            let ec: Vec<Vec3> = stats.iter().map(|s| s.2).collect();
            let group = vec![0u32; elements.len()];
            let element_corners: Vec<Vec<u32>> =
                elements.iter().map(|e| e.iter().flat_map(|&cell| g.corners[cell as usize]).collect()).collect();
            let graph = Graph::sharing(elements.len(), |i| &element_corners[i][..]);
            let items = Items { area: &ea, normal: &en, centroid: &ec, group: &group, order: None };
            let (of, count) = grow(&graph, &items, a_p, PATCH_COS);
            let start = patches.len();
            patches.extend((0..count).map(|_| PlannedPatch { cell: None, elements: Vec::new() }));
            for (e, cells) in elements.into_iter().enumerate() {
                patches[start + of[e] as usize].elements.push(cells);
            }
        }
        Plan { fine: g.fine.clone(), first: g.first.clone(), corners: g.corners.clone(), patches, regular }
    }
}

/// One area being corrected towards a count: the next guess scales it by got/want (counts
/// fall as areas grow), kept inside the bracket of areas seen to give too many and too few
/// (their geometric mean when it would leave it).
struct Search {
    area: f64,
    want: f64,
    too_many: f64,
    too_few: f64,
}

impl Search {
    fn new(area: f64, want: usize) -> Search {
        Search { area, want: want as f64, too_many: 0.0, too_few: f64::INFINITY }
    }

    fn next(&mut self, got: usize) -> f64 {
        let got = got as f64;
        if got > self.want {
            self.too_many = self.too_many.max(self.area);
        } else if got < self.want {
            self.too_few = self.too_few.min(self.area);
        }
        let guess = self.area * got / self.want;
        self.area = if guess > self.too_many && guess < self.too_few {
            guess
        } else if self.too_few.is_finite() && self.too_many > 0.0 {
            (self.too_many * self.too_few).sqrt()
        } else {
            guess
        };
        self.area
    }
}

/// Plans with the element and patch areas corrected until n and k are near the request:
/// first the element area (counting elements only), then the patch area.
pub(crate) fn plan_counts(surfaces: &Surfaces, elements: usize, patches: usize, pow2: bool) -> (Plan, MeshReport) {
    let total = surfaces.area();
    let mut planner = Planner { surfaces, pow2, geometry: None };
    let near = |got: usize, want: usize| (got as f64 / want as f64).ln().abs() < CLOSE.ln_1p();
    let mut sp = Search::new(total / patches as f64, patches);
    let mut se = Search::new(total / elements as f64, elements);
    let (mut a_e, mut best_miss) = (se.area, f64::INFINITY);
    for _ in 0..ROUNDS {
        let n = planner.elements(se.area, sp.area);
        let miss = (n as f64 / elements as f64).ln().abs();
        if miss < best_miss {
            (a_e, best_miss) = (se.area, miss);
        }
        if near(n, elements) {
            break;
        }
        se.next(n);
    }
    let miss = |p: &Plan| {
        let n = p.n() as f64 / elements as f64;
        let k = p.patches.len() as f64 / patches as f64;
        (n.ln().abs()).max(k.ln().abs())
    };
    let mut best = planner.plan(a_e, sp.area);
    let mut current = best.clone();
    for _ in 1..ROUNDS {
        if near(best.patches.len(), patches) || near(current.patches.len(), patches) && miss(&best) < CLOSE.ln_1p() {
            break;
        }
        let a_p = sp.next(current.patches.len());
        current = planner.plan(a_e, a_p);
        if miss(&current) < miss(&best) {
            best = current.clone();
        }
    }
    let (n, k) = (best.n(), best.patches.len());
    let far = |got: usize, want: usize| (got as f64 / want as f64 - 1.0).abs() > 0.1 + 1e-9;
    let note = (far(n, elements) || far(k, patches)).then(|| {
        let cells = *best.first.last().unwrap_or(&0) as usize;
        format!(
            "n = {n} and k = {k} for {elements} elements and {patches} patches asked: the scene has {} faces \
             ({} meshed regularly) and {cells} cells; cells merge only with neighbours of their material \
             within 30 degrees, and elements into patches within 60 degrees",
            surfaces.faces.len(),
            best.regular
        )
    });
    let report = MeshReport {
        elements,
        patches,
        regular_faces: best.regular,
        clustered_faces: surfaces.faces.len() - best.regular,
        note,
    };
    (best, report)
}

/// The two meshes over a scene: n elements (the unknowns) ordered by patch, and k patches.
///
/// An element is a set of pieces (cells of the scene's faces: a whole small triangle, or a
/// cell of a larger face cut into congruent cells), and a patch a set of elements.
/// `piece_start` ranges the pieces of each element, and `patch_start`, the paper's index
/// vector I (0-based, length k + 1), the elements of each patch: patch `p` is elements
/// `patch_start[p]..patch_start[p + 1]`. It *is* the sparse matrix V (a CSC matrix with all
/// values 1 has exactly these column pointers and row indices `0..n`), which is why the
/// solve keeps this vector rather than a general sparse matrix: `V^T E` is k contiguous
/// sums and needs no row indices at all (see [`Self::v_matrix`] for the `sprs` form).
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
    /// Each face is cut into `fine[f] x fine[f]` cells.
    pub fine: Vec<u32>,
    /// Face f's cells are numbered from `face_first[f]` (in [`Cell::local`] order); the last
    /// entry is the number of cells.
    pub face_first: Vec<u32>,
    /// The pieces, in element order.
    pub pieces: Vec<Shape>,
    /// The cell of each piece (`face_first[f] + local`).
    pub piece_cell: Vec<u32>,
    /// Ids of each piece's corners ([`Shape::corners`] order; equal where pieces meet;
    /// `u32::MAX` for a triangle's fourth).
    pub piece_corners: Vec<[u32; 4]>,
    /// Element e's pieces are `piece_start[e]..piece_start[e + 1]` (length n + 1).
    pub piece_start: Vec<u32>,
    /// Diffuse reflectance per element, RGB.
    pub rho: Vec<[f32; 3]>,
    /// Emitted radiosity per element, RGB: `pi * Ke` for emitters, 0 elsewhere.
    pub emission: Vec<[f32; 3]>,
    /// The paper's I: element ranges of the patches (length k + 1).
    pub patch_start: Vec<u32>,
    /// The piece of every cell.
    pub piece_of_cell: Vec<u32>,
    /// The element of every piece.
    pub element_of_piece: Vec<u32>,
}

impl TwoMesh {
    /// Assembles the meshes of `plan`: elements in patch order, pieces in element order.
    pub(crate) fn assemble(surfaces: Surfaces, plan: Plan) -> Result<TwoMesh> {
        let cells = *plan.first.last().unwrap_or(&0) as usize;
        if cells > u32::MAX as usize / 2 {
            return Err(Error::Input(format!("{cells} cells: more than {}", u32::MAX / 2)));
        }
        let mut mesh = TwoMesh {
            fine: plan.fine,
            face_first: plan.first,
            pieces: Vec::with_capacity(cells),
            piece_cell: Vec::with_capacity(cells),
            piece_corners: Vec::with_capacity(cells),
            piece_start: vec![0],
            rho: Vec::new(),
            emission: Vec::new(),
            patch_start: vec![0],
            piece_of_cell: vec![u32::MAX; cells],
            element_of_piece: Vec::with_capacity(cells),
            surfaces,
        };
        for patch in plan.patches {
            for element in patch.elements {
                let e = mesh.rho.len() as u32;
                let (mut area, mut ke) = (0.0f64, glam::DVec3::ZERO);
                let mut kd = Vec3::ZERO;
                for g in element {
                    let (f, l) = face_of_cell(&mesh.face_first, g);
                    let face = &mesh.surfaces.faces[f];
                    let shape = face.shape.cell(mesh.fine[f], Cell::from_local(l, mesh.fine[f], face.shape.triangle));
                    let (u, v) = face.shape.param(shape.centroid());
                    let a = shape.area() as f64;
                    area += a;
                    ke += mesh.surfaces.ke_at(f, u, v).as_dvec3() * a;
                    kd = face.kd;
                    mesh.piece_of_cell[g as usize] = mesh.pieces.len() as u32;
                    mesh.pieces.push(shape);
                    mesh.piece_cell.push(g);
                    mesh.piece_corners.push(plan.corners[g as usize]);
                    mesh.element_of_piece.push(e);
                }
                mesh.piece_start.push(mesh.pieces.len() as u32);
                mesh.rho.push(kd.to_array());
                mesh.emission.push(((ke / area.max(1e-300)).as_vec3() * PI).to_array());
            }
            mesh.patch_start.push(mesh.rho.len() as u32);
        }
        if let Some(w) = mesh.patch_start.windows(2).position(|w| w[1] == w[0]) {
            return Err(Error::Input(format!("patch {w} has no elements")));
        }
        Ok(mesh)
    }

    /// 2MF: near `elements` elements of near-uniform area and near `patches` patches, on any
    /// triangle scene (see the module notes: faces of at least the patch area are cut
    /// regularly, the cells of smaller ones grouped). The returned report says how the
    /// counts came out and, when they are more than 10% from the request, why.
    ///
    /// ```
    /// use lumbre_radiosity::{Surfaces, TwoMesh};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (mesh, report) = TwoMesh::fixed(Surfaces::load(path.as_ref()).unwrap(), 2000, 200).unwrap();
    /// assert!(mesh.n().abs_diff(2000) <= 200 && mesh.k().abs_diff(200) <= 20, "{} {}", mesh.n(), mesh.k());
    /// assert!(report.note.is_none());
    /// ```
    pub fn fixed(surfaces: Surfaces, elements: usize, patches: usize) -> Result<(TwoMesh, MeshReport)> {
        check_counts(elements, patches)?;
        let (plan, report) = plan_counts(&surfaces, elements, patches, false);
        Ok((Self::assemble(surfaces, plan)?, report))
    }

    /// Checks a request before any work: both counts positive, no more patches than
    /// elements.
    ///
    /// ```
    /// use lumbre_radiosity::TwoMesh;
    /// assert!(TwoMesh::check_request(4000, 250).is_ok());
    /// assert!(TwoMesh::check_request(10, 20).is_err());
    /// ```
    pub fn check_request(elements: usize, patches: usize) -> Result<()> {
        check_counts(elements, patches)
    }

    /// 2MF on the generated box ([`Surfaces::closed_box`]): `s x s` elements and `t x t`
    /// patches per wall (`t` divides `s`), so n = 6 s^2 and k = 6 t^2 (the paper's sizes:
    /// s = 24, 48, 96, 192 and t = 6, 12, 24).
    pub fn closed_box(s: u32, t: u32) -> Result<TwoMesh> {
        Self::assemble(Surfaces::closed_box(), box_plan(s, t)?)
    }

    /// The same elements grouped into other patches: `patch_start` ranges them (in this
    /// mesh's element order).
    pub(crate) fn with_patches(mut self, patch_start: Vec<u32>) -> TwoMesh {
        self.patch_start = patch_start;
        self
    }

    /// Number of elements, n.
    pub fn n(&self) -> usize {
        self.rho.len()
    }

    /// Number of patches, k.
    pub fn k(&self) -> usize {
        self.patch_start.len() - 1
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

    /// The pieces of element `e`.
    pub fn element_pieces(&self, e: usize) -> &[Shape] {
        &self.pieces[self.piece_start[e] as usize..self.piece_start[e + 1] as usize]
    }

    /// The pieces of patch `p`.
    pub fn patch_pieces(&self, p: usize) -> &[Shape] {
        let (a, b) = (self.patch_start[p] as usize, self.patch_start[p + 1] as usize);
        &self.pieces[self.piece_start[a] as usize..self.piece_start[b] as usize]
    }

    /// Element areas.
    pub fn areas(&self) -> Vec<f32> {
        (0..self.n()).map(|e| self.element_pieces(e).iter().map(|s| s.area() as f64).sum::<f64>() as f32).collect()
    }

    /// The area-weighted centroid of a set of pieces.
    pub fn centroid(pieces: &[Shape]) -> Vec3 {
        let (mut c, mut a) = (glam::DVec3::ZERO, 0.0f64);
        for s in pieces {
            c += s.centroid().as_dvec3() * s.area() as f64;
            a += s.area() as f64;
        }
        (c / a.max(1e-300)).as_vec3()
    }

    /// The spread of element areas (min, max, mean, coefficient of variation).
    pub fn area_stats(&self) -> AreaStats {
        area_stats(&self.areas())
    }

    /// The spread of patch areas.
    pub fn patch_area_stats(&self) -> AreaStats {
        let a = self.areas();
        area_stats(
            &self.patch_start.windows(2).map(|w| a[w[0] as usize..w[1] as usize].iter().sum()).collect::<Vec<_>>(),
        )
    }

    /// The piece a ray hit: `tri` is the scene triangle, `point` the hit point.
    pub fn piece_at(&self, tri: u32, point: Vec3) -> Option<u32> {
        let f = self.surfaces.face_at(tri, point)?;
        let face = &self.surfaces.faces[f];
        let (u, v) = face.shape.param(point);
        let m = self.fine[f];
        let cell = face.shape.cell_at(u, v, m);
        self.piece_of_cell.get((self.face_first[f] + cell.local(m, face.shape.triangle)) as usize).copied()
    }

    /// The element a ray hit: `tri` is the scene triangle, `point` the hit point.
    pub fn element_at(&self, tri: u32, point: Vec3) -> Option<u32> {
        self.piece_at(tri, point).map(|p| self.element_of_piece[p as usize])
    }

    /// The emission scaled by `s` per channel (relighting).
    pub fn emission_scaled(&self, s: f32) -> Vec<[f32; 3]> {
        self.emission.iter().map(|e| e.map(|v| v * s)).collect()
    }

    /// The geometry the form factors read: pieces, elements and patches with their
    /// outlines.
    pub fn clusters(&self) -> Clusters {
        Clusters::new(self.pieces.clone(), &self.piece_corners, self.piece_start.clone(), self.patch_start.clone())
    }
}

/// The plan of the generated box: `s x s` cells and `t x t` patches per wall.
pub(crate) fn box_plan(s: u32, t: u32) -> Result<Plan> {
    if s == 0 || t == 0 {
        return Err(Error::Input(format!("elements per side {s} and patches per side {t} must be positive")));
    }
    if !s.is_multiple_of(t) {
        return Err(Error::Input(format!("patches per side {t} must divide elements per side {s}")));
    }
    let surfaces = Surfaces::closed_box();
    let fine = vec![s; 6];
    let first: Vec<u32> = (0..=6).map(|f| f * s * s).collect();
    let corners = corner_ids(&surfaces.faces, &fine, &first);
    let mut patches = Vec::new();
    for f in 0..6u32 {
        let mut by_cell: HashMap<Cell, usize> = HashMap::new();
        for l in 0..s * s {
            let coarse = Cell::from_local(l, s, false).coarsen(s, t, false);
            let i = *by_cell.entry(coarse).or_insert_with(|| {
                patches
                    .push(PlannedPatch { cell: Some(PatchCell { face: f, q: t, cell: coarse }), elements: Vec::new() });
                patches.len() - 1
            });
            patches[i].elements.push(vec![first[f as usize] + l]);
        }
    }
    Ok(Plan { fine, first, corners, patches, regular: 6 })
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

/// Element rows of `patch_start`'s mesh in `parts` parts of about equal size, each of whole
/// patches (so that each part makes whole rows of `V^T U`): each cut is the patch start
/// nearest an even share. Parts may be empty.
///
/// ```
/// use lumbre_radiosity::rows_in_parts;
/// // Patches of 4, 4, 2 and 6 elements in 2 parts: the cut nearest row 8 is a patch start.
/// assert_eq!(rows_in_parts(&[0, 4, 8, 10, 16], 2), [0..8, 8..16]);
/// assert_eq!(rows_in_parts(&[0, 16], 3), [0..0, 0..16, 16..16]); // one patch cannot split
/// ```
pub fn rows_in_parts(patch_start: &[u32], parts: usize) -> Vec<std::ops::Range<usize>> {
    let n = *patch_start.last().unwrap_or(&0) as usize;
    let parts = parts.max(1);
    let cut = |j: usize| {
        let want = (n * j / parts) as u32;
        let i = patch_start.partition_point(|&s| s < want).min(patch_start.len().saturating_sub(1));
        let (below, above) = (patch_start[i.saturating_sub(1)], patch_start[i]);
        (if want.saturating_sub(below) < above.saturating_sub(want) { below } else { above }) as usize
    };
    let cuts: Vec<usize> =
        (0..parts).map(|j| if j == 0 || patch_start.len() < 2 { 0 } else { cut(j) }).chain([n]).collect();
    cuts.windows(2).map(|w| w[0]..w[1].max(w[0])).collect()
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
    fn hits_find_their_element() {
        let m = TwoMesh::closed_box(6, 3).unwrap();
        for (i, s) in m.pieces.iter().enumerate() {
            let (f, _) = face_of_cell(&m.face_first, m.piece_cell[i]);
            let tri = m.surfaces.face_of_triangle.iter().position(|&x| x as usize == f).unwrap() as u32;
            assert_eq!(m.piece_at(tri, s.centroid()), Some(i as u32));
            assert_eq!(m.element_at(tri, s.centroid()), Some(m.element_of_piece[i]));
        }
    }

    #[test]
    fn box_corners_are_shared_along_edges() {
        // Neighbouring cells of one wall and of two walls meeting at an edge share corners.
        let m = TwoMesh::closed_box(4, 2).unwrap();
        let mut count: HashMap<u32, usize> = HashMap::new();
        for c in &m.piece_corners {
            for &id in c {
                *count.entry(id).or_default() += 1;
            }
        }
        // 8 box corners (3 walls, one cell each), 12 edges x 3 inner points (4 cells), and
        // 6 walls x 9 inner points (4 cells).
        let mut hist: HashMap<usize, usize> = HashMap::new();
        for (_, c) in count {
            *hist.entry(c).or_default() += 1;
        }
        assert_eq!(hist.get(&3), Some(&8));
        assert_eq!(hist.get(&4), Some(&(12 * 3 + 6 * 9)));
    }
}
