//! Pictures of a radiosity solution: a primary ray per sample finds the element it hits, and
//! the pixel shows the radiance `B / pi` of that element (flat), or interpolated from the
//! radiosity at the element's corners (smooth).

use std::collections::HashMap;
use std::f32::consts::PI;

use glam::Vec3;
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::sampling::{pixel_seed, stratified};
use lumbre_raytrace::{Camera, Image};
use rayon::prelude::*;

use crate::mesh::TwoMesh;

/// A corner: its id among the mesh's corners, and the normal of the piece there in 64ths.
type CornerKey = (u32, [i32; 3]);

/// The radiosity at each piece's corners (three for a triangle, four for a parallelogram,
/// in [`crate::Shape::corners`] order): the area-weighted mean of the pieces' elements that
/// meet at the corner and face the same way (so creases stay sharp).
pub fn corner_radiosity(mesh: &TwoMesh, b: &[[f32; 3]]) -> Vec<[[f32; 3]; 4]> {
    let key = |id: u32, n: Vec3| -> CornerKey {
        let r = |v: f32| (v * 64.0).round() as i32;
        (id, [r(n.x), r(n.y), r(n.z)])
    };
    let mut sums: HashMap<CornerKey, ([f64; 3], f64)> = HashMap::new();
    for (i, s) in mesh.pieces.iter().enumerate() {
        let (n, a) = (s.normal(), s.area() as f64);
        let v = b[mesh.element_of_piece[i] as usize];
        for &id in mesh.piece_corners[i].iter().filter(|&&id| id != u32::MAX) {
            let e = sums.entry(key(id, n)).or_insert(([0.0; 3], 0.0));
            for (sum, &x) in e.0.iter_mut().zip(&v) {
                *sum += a * x as f64;
            }
            e.1 += a;
        }
    }
    mesh.pieces
        .iter()
        .zip(&mesh.piece_corners)
        .map(|(s, ids)| {
            let n = s.normal();
            let mut out = [[0.0f32; 3]; 4];
            for (i, &id) in ids.iter().enumerate().filter(|(_, id)| **id != u32::MAX) {
                if let Some((sum, w)) = sums.get(&key(id, n)) {
                    out[i] = sum.map(|x| (x / w.max(1e-30)) as f32);
                }
            }
            out
        })
        .collect()
}

/// How a picture shades elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shading {
    /// Each element in its own radiance.
    #[default]
    Flat,
    /// Radiance interpolated from the piece's corners ([`corner_radiosity`]).
    Smooth,
}

/// Renders the radiance `B / pi` of the solution `b` (one RGB radiosity per element of
/// `mesh`) from `camera`, `spp` stratified samples per pixel, on the CPU. Rays that leave
/// the scene or reach a surface's back (which radiosity does not model) are black.
///
/// ```
/// use lumbre_raytrace::Camera;
/// use lumbre_radiosity::{render_radiosity, Shading, TwoMesh};
/// let mesh = TwoMesh::closed_box(4, 2).unwrap();
/// let b = vec![[1.0f32, 2.0, 3.0]; mesh.n()];
/// let camera = Camera::parse("0,1,0.9,0,1,0,0,1,0,60").unwrap(); // inside the box
/// let image = render_radiosity(&mesh, &b, &camera, 8, 8, 1, Shading::Smooth);
/// let p = image.get(4, 4);
/// assert!((p.x - 1.0 / std::f32::consts::PI).abs() < 1e-5);
/// ```
pub fn render_radiosity(
    mesh: &TwoMesh,
    b: &[[f32; 3]],
    camera: &Camera,
    width: u32,
    height: u32,
    spp: u32,
    shading: Shading,
) -> Image {
    let corners = match shading {
        Shading::Smooth => Some(corner_radiosity(mesh, b)),
        Shading::Flat => None,
    };
    let p = &mesh.surfaces.prepared;
    let spp = spp.max(1);
    let opts = QueryOptions::default();
    let mut image = Image::new(width, height);
    image.pixels.par_chunks_mut(width.max(1) as usize).enumerate().for_each(|(y, row)| {
        for (x, px) in row.iter_mut().enumerate() {
            let mut sum = Vec3::ZERO;
            for s in 0..spp {
                let (dx, dy) = stratified(spp, s, pixel_seed(x as u32, y as u32, width));
                let (o, d) = camera.ray(x as f32 + dx, y as f32 + dy, width, height);
                let Some(hit) = p.closest_hit(&Ray::new(o, d), f32::INFINITY, &opts) else {
                    continue;
                };
                let point = o + d * hit.t;
                let Some(piece) = mesh.piece_at(hit.tri, point).map(|p| p as usize) else { continue };
                let e = mesh.element_of_piece[piece] as usize;
                let shape = &mesh.pieces[piece];
                if d.dot(shape.normal()) >= 0.0 {
                    continue;
                }
                let v = match &corners {
                    None => Vec3::from(b[e]),
                    Some(c) => {
                        let (u, w) = shape.param(point);
                        let c = c[piece].map(Vec3::from);
                        if shape.triangle {
                            c[0] * (1.0 - u - w) + c[1] * u + c[2] * w
                        } else {
                            c[0] * ((1.0 - u) * (1.0 - w))
                                + c[1] * (u * (1.0 - w))
                                + c[2] * (u * w)
                                + c[3] * ((1.0 - u) * w)
                        }
                    }
                };
                sum += v / PI;
            }
            *px = sum / spp as f32;
        }
    });
    image
}
