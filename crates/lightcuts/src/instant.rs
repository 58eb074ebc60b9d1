//! Instant radiosity (Keller 1997): every pixel lit by every VPL, each with its own
//! visibility. The baseline lightcuts must match and beat. The GPU twin is
//! `lightcuts/instant.wgsl` (`gpu/instant.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::QueryOptions;
use lumbre_raytrace::Image;
use rayon::prelude::*;

use crate::gbuffer::GPixel;
use crate::shading::{
    DEFAULT_CLAMP, INV_PI, Lit, Shading, ShadingRef, Vis, Visibility, check_shading, geometry, ism_cpu, min_distance2,
    vis_for,
};
use crate::vpls::Vpl;

/// Instant radiosity: every pixel of a G-buffer lit by every light of a tree (only its
/// lights are used), with the clamped geometric term and the chosen visibility.
///
/// ```no_run
/// use glam::Vec3;
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_lightcuts::{GBufferPass, InstantRadiosity, LightTree, Shading, View, Vpl};
/// use lumbre_raytrace::{Prepared, Scene};
/// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
/// let prepared = Prepared::new(scene, &Default::default());
/// let gbuffer = GBufferPass { view: View::cornell(64, 64), query: Default::default() }.cpu(&prepared)?;
/// let light = Vpl { position: Vec3::new(0.0, 1.9, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
/// let input = Shading { prepared, tree: LightTree::single(vec![light])?, gbuffer };
/// let lit = InstantRadiosity::default().gpu(&Gpu::new()?, &input)?;
/// assert_eq!(lit.image.pixels.len(), 64 * 64);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstantRadiosity {
    /// The `1 / d^2` clamp distance as a fraction of the scene's diagonal.
    pub clamp: f32,
    /// Shadow rays, imperfect shadow maps or none.
    pub visibility: Visibility,
    /// Traversal and triangle test of the shadow rays.
    pub query: QueryOptions,
}

impl Default for InstantRadiosity {
    fn default() -> Self {
        InstantRadiosity { clamp: DEFAULT_CLAMP, visibility: Visibility::Rays, query: QueryOptions::default() }
    }
}

/// The radiance of one G-buffer pixel lit by every light (the CPU twin of
/// `instant.wgsl`'s `main`): `emission + kd * ((sum_j I_j G_j V_j) / pi)`, summed in light
/// order; also returns the visibility queries made.
pub(crate) fn instant_pixel(px: &GPixel, vpls: &[Vpl], min_d2: f32, vis: &Vis<'_>) -> (Vec3, u32) {
    if !px.shaded() {
        return (px.emission, 0);
    }
    let mut sum = Vec3::ZERO;
    let mut queries = 0;
    for (j, v) in vpls.iter().enumerate() {
        let g = geometry(px.position, px.normal, v, min_d2);
        if g <= 0.0 {
            continue;
        }
        let (visible, queried) = vis.of(j as u32, v, px.position);
        queries += queried as u32;
        let gv = g * visible;
        if gv > 0.0 {
            sum += v.intensity * gv;
        }
    }
    (px.emission + px.albedo * (sum * INV_PI), queries)
}

/// Instant radiosity over a G-buffer's pixels, in parallel: the radiances and the
/// visibility queries made.
pub(crate) fn instant_cpu(
    pixels: &[GPixel],
    vpls: &[Vpl],
    min_d2: f32,
    vis: &Vis<'_>,
    progress: &(dyn Fn(usize) + Sync),
) -> (Vec<Vec3>, u64) {
    let rows: Vec<(Vec<Vec3>, u64)> = pixels
        .par_chunks(256)
        .map(|chunk| {
            let mut rays = 0u64;
            let out = chunk
                .iter()
                .map(|px| {
                    let (c, r) = instant_pixel(px, vpls, min_d2, vis);
                    rays += r as u64;
                    c
                })
                .collect();
            progress(chunk.len());
            (out, rays)
        })
        .collect();
    let rays = rows.iter().map(|r| r.1).sum();
    (rows.into_iter().flat_map(|r| r.0).collect(), rays)
}

impl InstantRadiosity {
    /// The CPU path: the shaded image.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::{GBufferPass, InstantRadiosity, LightTree, Shading, View, Vpl};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let gbuffer = GBufferPass { view: View::cornell(8, 8), query: Default::default() }.cpu(&prepared)?;
    /// let light = Vpl { position: Vec3::new(0.0, 1.9, 0.0), normal: -Vec3::Y, intensity: Vec3::ONE };
    /// let input = Shading { prepared, tree: LightTree::single(vec![light])?, gbuffer };
    /// assert_eq!(InstantRadiosity::default().cpu(&input)?.image.pixels.len(), 64);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &Shading) -> Result<Lit> {
        self.shade_cpu(input.by_ref(), &()).map(|(lit, _)| lit)
    }

    /// [`cpu`](InstantRadiosity::cpu) with progress (pixels) and a report, on borrowed input.
    pub fn shade_cpu(&self, input: ShadingRef<'_>, progress: &dyn Progress) -> Result<(Lit, Report)> {
        check_shading(input)?;
        let min_d2 = min_distance2(input.prepared, self.clamp)?;
        let mut report = Report::default();
        let atlas = ism_cpu(&self.visibility, input, progress)?.map(|(atlas, r)| {
            report.merge(r);
            atlas
        });
        let vis = vis_for(&self.visibility, input, self.query, atlas.as_ref());
        let g = input.gbuffer;
        let total = g.pixels.len() as u64;
        let done = AtomicU64::new(0);
        let (pixels, queries) = report.time("instant radiosity", || {
            instant_cpu(&g.pixels, &input.tree.vpls, min_d2, &vis, &|k| {
                progress.update("instant radiosity", done.fetch_add(k as u64, Ordering::Relaxed) + k as u64, total)
            })
        });
        report.stat("visibility queries", queries as f64);
        let image = Image::from_pixels(g.width, g.height, pixels).map_err(Error::Input)?;
        Ok((Lit { image, cuts: Vec::new(), queries }, report))
    }
}
