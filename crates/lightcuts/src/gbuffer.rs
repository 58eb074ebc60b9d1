//! The G-buffer: what the primary ray of each pixel finds (receiver point, normal, albedo,
//! emission), the input of instant radiosity and lightcuts. The GPU twin is
//! `lightcuts/gbuffer.wgsl` (`gpu/gbuffer.rs`).

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use lumbre_gpu::{Agree, Error, Result, Tolerance};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::{Camera, MaterialKind, Prepared};
use rayon::prelude::*;

use crate::bounds::dot;
use crate::rows::Rows;

/// `GPixel::flags` bit: the pixel is a surface lit by the VPLs.
pub const SHADED: u32 = 1;

/// One pixel of a [`GBuffer`]: 64 bytes, as `lightcuts/gbuffer.wgsl` writes it.
///
/// ```
/// assert_eq!(std::mem::size_of::<lumbre_lightcuts::GPixel>(), 64);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GPixel {
    /// The receiver: the hit point lifted off its surface by the scene's `eps` along the
    /// geometric normal (shadow rays start there).
    pub position: Vec3,
    /// [`SHADED`](crate::twin::SHADED) when the VPLs light this pixel (see [`GPixel::shaded`]).
    pub flags: u32,
    /// Unit shading normal on the side the camera sees.
    pub normal: Vec3,
    /// Zero.
    pub _pad0: u32,
    /// Diffuse reflectance (0 on mirrors and glass, which the VPLs do not light).
    pub albedo: Vec3,
    /// Zero.
    pub _pad1: u32,
    /// Radiance emitted towards the camera (an emitter's `Ke`, seen from its front side).
    pub emission: Vec3,
    /// Zero.
    pub _pad2: u32,
}

impl GPixel {
    /// Whether the VPLs light this pixel.
    pub fn shaded(&self) -> bool {
        self.flags & SHADED != 0
    }
}

/// The primary hits of an image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GBuffer {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major pixels.
    pub pixels: Vec<GPixel>,
}

/// `v / |v|` as `v * (1 / sqrt(v . v))` (the WGSL twin's `unit`); 0 for 0.
#[inline]
pub(crate) fn unit(v: Vec3) -> Vec3 {
    let l2 = dot(v, v);
    if l2 > 0.0 { v * (1.0 / l2.sqrt()) } else { Vec3::ZERO }
}

/// The view of one image: camera and size.
///
/// ```
/// use lumbre_lightcuts::View;
/// let v = View::cornell(64, 48);
/// assert_eq!((v.width, v.height), (64, 48));
/// assert_eq!(v.camera.fov_y_deg, 40.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// The camera.
    pub camera: Camera,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl View {
    /// The project's reference view of the Cornell box (`0,1,3.9, 0,1,0, 0,1,0, 40`).
    pub fn cornell(width: u32, height: u32) -> View {
        let camera =
            Camera { eye: Vec3::new(0.0, 1.0, 3.9), target: Vec3::new(0.0, 1.0, 0.0), up: Vec3::Y, fov_y_deg: 40.0 };
        View { camera, width, height }
    }

    /// Checks the size (at least 1 x 1, at most 2^31 pixels) and the camera.
    pub fn validate(&self) -> Result<()> {
        let n = self.width as u64 * self.height as u64;
        if n == 0 || n > (1 << 31) {
            return Err(Error::Input(format!("image of {}x{} pixels: need 1 to 2^31", self.width, self.height)));
        }
        self.camera.validate().map_err(|e| Error::Input(format!("camera: {e}")))
    }
}

/// The G-buffer of a view: one primary ray through each pixel's centre ([`gbuffer_cpu`] on
/// the CPU, `lightcuts/gbuffer.wgsl` on the GPU, through [`Compute`](lumbre_gpu::Compute)).
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_lightcuts::{GBufferPass, View};
/// use lumbre_raytrace::{Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let prepared = Prepared::new(Scene::load_obj(path.as_ref()).unwrap().0, &Default::default());
/// let pass = GBufferPass { view: View::cornell(16, 16), query: Default::default() };
/// let g = pass.run(&Backend::Cpu, &prepared)?; // or Backend::Gpu: the same pixels
/// assert_eq!(g.pixels.len(), 16 * 16);
/// assert!(g.pixels.iter().any(|p| p.shaded()));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GBufferPass {
    /// Camera and size.
    pub view: View,
    /// Traversal and triangle test of the primary rays.
    pub query: QueryOptions,
}

impl GBufferPass {
    /// The CPU path: [`gbuffer_cpu`].
    ///
    /// ```
    /// use lumbre_lightcuts::{GBufferPass, View};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let g = GBufferPass { view: View::cornell(4, 4), query: Default::default() }.cpu(&prepared)?;
    /// assert_eq!(g.pixels.len(), 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<GBuffer> {
        gbuffer_cpu(p, &self.view, &self.query)
    }
}

/// The G-buffer pixel of the primary ray `(origin, dir)` (the CPU twin of
/// `gbuffer.wgsl`'s `primary`).
pub(crate) fn primary(p: &Prepared, origin: Vec3, dir: Vec3, query: &QueryOptions) -> GPixel {
    let Some(hit) = p.closest_hit(&Ray::new(origin, dir), f32::INFINITY, query) else {
        return GPixel::default();
    };
    let [a, b, c] = p.tris[hit.tri as usize];
    let point = origin + dir * hit.t;
    let ng = unit((b - a).cross(c - a));
    let front = dot(ng, dir) < 0.0;
    let ng = if front { ng } else { -ng };
    let t = p.scene.triangles[hit.tri as usize];
    let mut n = ng;
    if t.has_normals() {
        let [na, nb, nc] = t.n.map(|i| p.scene.normals[i as usize]);
        let s = unit(na * (1.0 - hit.u - hit.v) + nb * hit.u + nc * hit.v);
        if s != Vec3::ZERO {
            n = if dot(s, ng) < 0.0 { -s } else { s };
        }
    }
    let m = &p.scene.materials[t.material as usize];
    let albedo = match m.kind {
        MaterialKind::Diffuse | MaterialKind::Phong | MaterialKind::Emitter => m.kd,
        MaterialKind::Mirror | MaterialKind::Glass => Vec3::ZERO,
    };
    let emission = if m.kind == MaterialKind::Emitter && front { m.ke } else { Vec3::ZERO };
    GPixel {
        position: point + ng * p.eps,
        flags: if albedo != Vec3::ZERO { SHADED } else { 0 },
        normal: n,
        albedo,
        emission,
        ..Default::default()
    }
}

/// The G-buffer of `view` on the CPU, rows in parallel, one ray through each pixel's centre.
pub fn gbuffer_cpu(p: &Prepared, view: &View, query: &QueryOptions) -> Result<GBuffer> {
    gbuffer_rows_cpu(p, view, Rows::all(view.height), query)
}

/// The G-buffer of the band `rows` of `view` (`view.width` x `rows.len()` pixels), each
/// pixel's ray that of the whole image's pixel (the camera sized to the whole view).
pub(crate) fn gbuffer_rows_cpu(p: &Prepared, view: &View, rows: Rows, query: &QueryOptions) -> Result<GBuffer> {
    view.validate()?;
    rows.check(view.height)?;
    let cam = view.camera.to_gpu(view.width, view.height);
    let pixels = rows
        .range()
        .into_par_iter()
        .flat_map_iter(|y| {
            (0..view.width).map(move |x| {
                let (o, d) = cam.ray(x as f32 + 0.5, y as f32 + 0.5);
                primary(p, o, d, query)
            })
        })
        .collect();
    Ok(GBuffer { width: view.width, height: rows.len(), pixels })
}

impl Agree for GBuffer {
    /// Flags exactly, vectors within `tol`; up to one pixel in a thousand (at least one), or
    /// the fraction `tol.beyond` if larger, may see another triangle (a primary ray grazing
    /// an edge, see `lumbre_kdtree::Hits`).
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if (self.width, self.height) != (gpu.width, gpu.height) || self.pixels.len() != gpu.pixels.len() {
            return Some(format!("{}x{} vs {}x{}", self.width, self.height, gpu.width, gpu.height));
        }
        let close = |a: Vec3, b: Vec3| (0..3).all(|k| tol.accepts(a[k] as f64, b[k] as f64));
        let bad: Vec<usize> = (0..self.pixels.len())
            .filter(|&i| {
                let (a, b) = (&self.pixels[i], &gpu.pixels[i]);
                a.flags != b.flags
                    || !close(a.position, b.position)
                    || !close(a.normal, b.normal)
                    || !close(a.albedo, b.albedo)
                    || !close(a.emission, b.emission)
            })
            .collect();
        let allowed = (self.pixels.len() / 1000).max(1).max((tol.beyond * self.pixels.len() as f64) as usize);
        (bad.len() > allowed).then(|| {
            let i = bad[0];
            format!(
                "{} pixels differ (allowed {allowed}); pixel {i}: cpu {:?} gpu {:?}",
                bad.len(),
                self.pixels[i],
                gpu.pixels[i]
            )
        })
    }
}
