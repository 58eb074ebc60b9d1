//! Voxel rendering of point clouds through the sparse octree (the volumetric thesis's
//! renderer): one camera ray per pixel, the first voxel at the render level, shaded by
//! mean colour, by depth, or with Phong lighting, shadow rays and mirror reflection by the
//! voxel's mean reflection factor. The CPU path here is the reference for
//! `raytrace/volume.wgsl`; the GPU path is in `gpu/volume.rs`.

use glam::Vec3;
use lumbre_octree::{Attrs, Octree, Points, Root};
use rayon::prelude::*;

use crate::camera::Camera;
use crate::image::Image;
use crate::points::{PointCloud, SHEPP_LOGAN_3D, phantom_value};
use crate::scene::SCENE_SIZE_RANGE;
use crate::whitted::{MAX_TRACE_DEPTH, check_image_size};

/// How voxels are shaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VolumeMode {
    /// The voxel's mean colour.
    #[default]
    Colour,
    /// Grey by distance: white at the front of the root's bounding sphere, black at its back.
    Depth,
    /// Phong with point lights and shadow rays, and mirror reflection by the voxel's mean
    /// reflection factor, up to `max_depth` bounces.
    Phong,
}

impl VolumeMode {
    /// The code the GPU kernel reads.
    pub fn code(self) -> u32 {
        match self {
            VolumeMode::Colour => 0,
            VolumeMode::Depth => 1,
            VolumeMode::Phong => 2,
        }
    }
}

/// Settings of a volume render. [`VolumeOptions::check`] says which values are allowed;
/// both paths refuse the others.
///
/// ```
/// let o = lumbre_raytrace::VolumeOptions::default();
/// assert_eq!((o.width, o.height, o.max_depth), (640, 480, 3));
/// assert!(o.check().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeOptions {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Shading.
    pub mode: VolumeMode,
    /// Octree level whose voxels are drawn (clamped to the tree's depth).
    pub level: u32,
    /// Longest chain of reflections in Phong mode (1: no reflection), at most
    /// [`MAX_TRACE_DEPTH`].
    pub max_depth: u32,
    /// Point lights: position and intensity. Empty: one light at the camera, raised.
    pub lights: Vec<(Vec3, Vec3)>,
    /// Ambient term.
    pub ambient: f32,
    /// Radiance of rays that miss.
    pub background: Vec3,
}

impl Default for VolumeOptions {
    fn default() -> Self {
        VolumeOptions {
            width: 640,
            height: 480,
            mode: VolumeMode::Colour,
            level: u32::MAX,
            max_depth: 3,
            lights: Vec::new(),
            ambient: 0.15,
            background: Vec3::splat(0.05),
        }
    }
}

/// Specular reflectance and exponent of voxels in Phong mode.
pub const VOXEL_SPECULAR: (f32, f32) = (0.25, 32.0);

impl VolumeOptions {
    /// An error naming the value and its allowed range, for: a width or height of 0 or more
    /// than [`MAX_PIXELS`](crate::MAX_PIXELS) pixels in all, `max_depth` outside
    /// `1..=MAX_TRACE_DEPTH`, a light, ambient term or background that is negative or not
    /// finite. (`level` beyond the tree's depth draws the deepest level.)
    ///
    /// ```
    /// use lumbre_raytrace::VolumeOptions;
    /// assert!(VolumeOptions { width: u32::MAX, height: 2, ..Default::default() }.check().is_err());
    /// assert!(VolumeOptions { max_depth: 0, ..Default::default() }.check().unwrap_err().contains("max_depth 0"));
    /// ```
    pub fn check(&self) -> Result<(), String> {
        check_image_size(self.width, self.height)?;
        if !(1..=MAX_TRACE_DEPTH).contains(&self.max_depth) {
            return Err(format!("max_depth {}: must be 1..={MAX_TRACE_DEPTH}", self.max_depth));
        }
        for (i, (p, e)) in self.lights.iter().enumerate() {
            if !(p.is_finite() && e.is_finite() && e.min_element() >= 0.0) {
                return Err(format!("light {i} at {p} with intensity {e}: both must be finite, intensity >= 0"));
            }
        }
        if !(self.ambient.is_finite() && self.ambient >= 0.0) {
            return Err(format!("ambient {}: must be finite and >= 0", self.ambient));
        }
        if !(self.background.is_finite() && self.background.min_element() >= 0.0) {
            return Err(format!("background {}: must be finite and >= 0", self.background));
        }
        Ok(())
    }

    /// The lights to use for `tree` seen by `camera` (the given ones, or one default light).
    pub fn lights_for(&self, tree: &Octree, camera: &Camera) -> Vec<(Vec3, Vec3)> {
        if !self.lights.is_empty() {
            return self.lights.clone();
        }
        let size = tree.root.size * 3f32.sqrt();
        vec![(camera.eye + camera.up.normalize_or_zero() * size, Vec3::splat(size * size * 1.2))]
    }
}

/// Near and far distances of the root's bounding sphere from the eye (depth mode's range).
pub fn depth_range(tree: &Octree, eye: Vec3) -> (f32, f32) {
    let half = tree.root.size * 0.5;
    let centre = Vec3::from(tree.root.min) + Vec3::splat(half);
    let r = half * 3f32.sqrt();
    let d = (centre - eye).length();
    ((d - r).max(0.0), d + r)
}

fn reflect(d: Vec3, n: Vec3) -> Vec3 {
    d - 2.0 * d.dot(n) * n
}

/// Radiance along one camera ray.
pub fn voxel_radiance(
    tree: &Octree,
    origin: Vec3,
    dir: Vec3,
    o: &VolumeOptions,
    lights: &[(Vec3, Vec3)],
    eps: f32,
) -> Vec3 {
    let level = o.level.min(tree.depth);
    match o.mode {
        VolumeMode::Colour => match tree.trace(origin.into(), dir.into(), 0.0, f32::INFINITY, level) {
            Some(h) => Vec3::from(tree.nodes[h.node as usize].mean_color()),
            None => o.background,
        },
        VolumeMode::Depth => match tree.trace(origin.into(), dir.into(), 0.0, f32::INFINITY, level) {
            Some(h) => {
                let (near, far) = depth_range(tree, origin);
                Vec3::splat((1.0 - (h.t - near) / (far - near)).clamp(0.0, 1.0))
            }
            None => o.background,
        },
        VolumeMode::Phong => {
            let (ks, ns) = VOXEL_SPECULAR;
            let mut color = Vec3::ZERO;
            let mut weight = 1.0f32;
            let (mut ro, mut rd) = (origin, dir);
            for _ in 0..o.max_depth.max(1) {
                let Some(h) = tree.trace(ro.into(), rd.into(), 0.0, f32::INFINITY, level) else {
                    color += weight * o.background;
                    break;
                };
                let node = &tree.nodes[h.node as usize];
                let albedo = Vec3::from(node.mean_color());
                let refl = node.mean_factors()[0];
                let n = Vec3::from(h.normal);
                let p = ro + rd * h.t;
                let above = p + n * eps;
                let mut local = o.ambient * albedo;
                for &(lp, intensity) in lights {
                    let to = lp - above;
                    let d2 = to.length_squared();
                    let d = d2.sqrt();
                    let l = to / d;
                    let cos = n.dot(l);
                    if cos <= 0.0 || tree.trace(above.into(), l.into(), 0.0, d, level).is_some() {
                        continue;
                    }
                    let spec = ks * reflect(-l, n).dot(-rd).max(0.0).powf(ns);
                    local += (albedo * cos + Vec3::splat(spec)) * intensity / d2;
                }
                color += weight * (1.0 - refl) * local;
                weight *= refl;
                if weight < 1e-3 {
                    break;
                }
                ro = above;
                rd = reflect(rd, n);
            }
            color
        }
    }
}

/// Offset of secondary rays from voxel faces: a thousandth of the smallest rendered voxel.
pub fn voxel_eps(tree: &Octree, level: u32) -> f32 {
    tree.root.size / (1u64 << level.min(tree.depth)) as f32 * 1e-3
}

/// Renders `tree` on the CPU; an error for options [`VolumeOptions::check`] refuses.
///
/// ```
/// use lumbre_octree::{Attrs, Octree};
/// use lumbre_raytrace::{Camera, VolumeOptions, render_volume_cpu};
/// let pts = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]];
/// let (tree, _) = Octree::build(&pts, &[Attrs::from_unit([1.0, 0.0, 0.0], 0.0, 0.0); 2], 2).unwrap();
/// let camera = Camera::frame((glam::Vec3::ZERO, glam::Vec3::ONE), 1.0);
/// let image = render_volume_cpu(&tree, &camera, &VolumeOptions { width: 16, height: 16, ..Default::default() });
/// assert_eq!(image.unwrap().pixels.len(), 256);
/// ```
pub fn render_volume_cpu(tree: &Octree, camera: &Camera, o: &VolumeOptions) -> Result<Image, String> {
    o.check()?;
    let g = camera.to_gpu(o.width, o.height);
    let lights = o.lights_for(tree, camera);
    let eps = voxel_eps(tree, o.level);
    let width = o.width as usize;
    let pixels: Vec<Vec3> = (0..width * o.height as usize)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % width, i / width);
            let (origin, dir) = g.ray(x as f32 + 0.5, y as f32 + 0.5);
            voxel_radiance(tree, origin, dir, o, &lights, eps)
        })
        .collect();
    Image::from_pixels(o.width, o.height, pixels)
}

/// Most points in a cloud's coordinates per unit of its size: a cloud farther from the
/// origin than `2^20` times its size has positions too coarse in f32 for its voxels and for
/// a camera around it.
pub const MAX_CLOUD_OFFSET: f32 = 1_048_576.0;

/// The octree root for a cloud's finite `positions` drawn at octree level `level`, and the
/// box a default camera frames ([`Camera::frame`]): the cube around the points
/// ([`Root::around`]) and its bounds.
///
/// A cloud whose points all coincide (one point, or copies of one) has no size: its root is a
/// cube of side `max(1, |p|)` (the point's largest coordinate magnitude, so that f32 still
/// resolves it) placed so that the point is at the centre of its voxel at `level`, and the
/// framed box is that voxel, which then fills the view.
///
/// Errors: no finite point; a root size outside [`SCENE_SIZE_RANGE`] (the renderer squares
/// distances and light intensities in f32); points farther from the origin than
/// [`MAX_CLOUD_OFFSET`] times the root size.
///
/// ```
/// use lumbre_raytrace::cloud_root;
/// let (root, frame) = cloud_root(&[[0.0, 0.0, 0.0], [2.0, 1.0, 0.5]], 8).unwrap();
/// assert_eq!((root.min, root.size), ([0.0; 3], 2.0));
/// assert_eq!(frame.1.x, 2.0);
/// let (root, frame) = cloud_root(&[[5.0, 5.0, 5.0]; 3], 2).unwrap();
/// assert_eq!(root.size, 5.0);
/// assert_eq!((frame.1 - frame.0).x, 5.0 / 4.0); // one voxel at level 2
/// assert!(cloud_root(&[[0.0; 3], [1e38, 0.0, 0.0]], 8).unwrap_err().contains("too large"));
/// ```
pub fn cloud_root(positions: &[[f32; 3]], level: u32) -> Result<(Root, (Vec3, Vec3)), String> {
    let finite = || positions.iter().filter(|p| p.iter().all(|c| c.is_finite()));
    let first = *finite().next().ok_or("no finite points")?;
    let (lo, hi) = finite()
        .fold((Vec3::from(first), Vec3::from(first)), |(lo, hi), p| (lo.min(Vec3::from(*p)), hi.max(Vec3::from(*p))));
    let magnitude = lo.abs().max(hi.abs()).max_element();
    let (root, frame) = if lo == hi {
        let size = magnitude.max(1.0);
        let voxel = size / (1u64 << level.min(lumbre_octree::MAX_DEPTH)) as f32;
        let min = lo - Vec3::splat(voxel * 0.5);
        (Root { min: min.to_array(), size }, (min, min + Vec3::splat(voxel)))
    } else {
        let root = Root::around(&[lo.to_array(), hi.to_array()]).ok_or("no finite points")?;
        (root, (Vec3::from(root.min), Vec3::from(root.max())))
    };
    let (small, large) = SCENE_SIZE_RANGE;
    if !(root.size >= small && root.size <= large) {
        let what = if root.size < small { "small" } else { "large" };
        return Err(format!(
            "the cloud's size {:e} (its bounding cube's side) is too {what}: the renderer handles {small:e} to \
             {large:e} (it squares distances in f32); scale the cloud",
            root.size
        ));
    }
    if magnitude > root.size * MAX_CLOUD_OFFSET {
        return Err(format!(
            "the cloud (size {:e}) lies {magnitude:e} from the origin, more than {MAX_CLOUD_OFFSET} times its size: \
             f32 cannot resolve its voxels there; move it closer to the origin",
            root.size
        ));
    }
    Ok((root, frame))
}

/// A point cloud's positions and 8-bit attributes, as the octree takes them.
pub fn cloud_points(cloud: &PointCloud) -> Points {
    let attrs = (0..cloud.len())
        .map(|i| {
            let c = cloud.colors.get(i).copied().unwrap_or([1.0; 3]);
            let refl = cloud.reflection.get(i).copied().unwrap_or(0.0);
            let refr = cloud.refraction.get(i).copied().unwrap_or(0.0);
            Attrs::from_unit(c, refl, refr)
        })
        .collect();
    Points { positions: cloud.positions.clone(), attrs }
}

/// Largest `n` for which [`phantom_cloud`] fits an octree: the octree holds at most
/// [`lumbre_octree::MAX_POINTS`] points (its node sums of 8-bit values are 32-bit), and the
/// phantom has about `0.2557 n³` points above zero (16734837 at `n = 403`, 16859640 at 404).
pub const MAX_PHANTOM_N: u32 = 403;

/// The 3D Shepp-Logan phantom on an `n`³ grid as a point cloud in `[-1, 1]`³: one point per
/// voxel above zero intensity (the voxels of [`shepp_logan_phantom`](crate::shepp_logan_phantom)),
/// coloured along a blue-to-orange ramp of the intensity, with the skull (intensity >= 0.9)
/// a partial mirror. Computed slice by slice: memory grows with the points, not with `n`³.
///
/// ```
/// let cloud = lumbre_raytrace::phantom_cloud(16);
/// assert!(cloud.len() > 100 && cloud.len() < 16 * 16 * 16);
/// ```
pub fn phantom_cloud(n: u32) -> PointCloud {
    let ellipsoids = SHEPP_LOGAN_3D.map(|row| crate::points::Ellipsoid::new(&row));
    let s = 2.0 / n as f32;
    let slices: Vec<PointCloud> = (0..n)
        .into_par_iter()
        .map(|z| {
            let mut cloud = PointCloud::default();
            for y in 0..n {
                for x in 0..n {
                    let v = phantom_value(&ellipsoids, n, x, y, z);
                    if v <= 0.0 {
                        continue;
                    }
                    cloud.positions.push([
                        (x as f32 + 0.5) * s - 1.0,
                        1.0 - (y as f32 + 0.5) * s,
                        (z as f32 + 0.5) * s - 1.0,
                    ]);
                    let t = v.clamp(0.0, 1.0);
                    cloud.colors.push([0.2 + 0.8 * t, 0.3 + 0.4 * t, 0.9 - 0.7 * t]);
                    cloud.reflection.push(if v >= 0.9 { 0.35 } else { 0.0 });
                    cloud.refraction.push(0.0);
                }
            }
            cloud
        })
        .collect();
    let mut cloud = PointCloud::default();
    for part in slices {
        cloud.positions.extend(part.positions);
        cloud.colors.extend(part.colors);
        cloud.reflection.extend(part.reflection);
        cloud.refraction.extend(part.refraction);
    }
    cloud
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of the `n`³ phantom, counted without storing them.
    fn phantom_count(n: u32) -> usize {
        let e = SHEPP_LOGAN_3D.map(|row| crate::points::Ellipsoid::new(&row));
        (0..n)
            .into_par_iter()
            .map(|k| (0..n * n).filter(|&i| phantom_value(&e, n, i % n, i / n, k) > 0.0).count())
            .sum()
    }

    #[test]
    fn the_phantom_range_is_what_the_octree_holds() {
        assert!(phantom_count(MAX_PHANTOM_N) <= lumbre_octree::MAX_POINTS);
        assert!(phantom_count(MAX_PHANTOM_N + 1) > lumbre_octree::MAX_POINTS);
        assert_eq!(phantom_count(24), phantom_cloud(24).len());
    }
}

/// A voxel render through the [`Compute`](lumbre_gpu::Compute) trait. Its input is what the
/// octree build ([`GpuBuild`](lumbre_octree::GpuBuild)) outputs, a
/// [`PackedOctree`](lumbre_octree::PackedOctree) on the host or a
/// [`GpuOctree`](lumbre_octree::GpuOctree) on the GPU, so the build's output, kept where it
/// was built ([`Backend::run_kept`](lumbre_gpu::Backend::run_kept)), is placed for the
/// render on either backend, and a GPU build followed by this render never leaves the
/// device. The CPU path unpacks the tree and renders it with [`render_volume_cpu`]
/// ([`VolumeRender::cpu`] renders an [`Octree`] as it is).
///
/// ```no_run
/// use lumbre_gpu::{Compute, Gpu};
/// use lumbre_octree::GpuBuild;
/// use lumbre_raytrace::{Camera, VolumeOptions, VolumeRender, cloud_points, phantom_cloud};
/// let gpu = Gpu::new()?;
/// let points = cloud_points(&phantom_cloud(64));
/// let build = GpuBuild::new(6);
/// let mut rec = gpu.recorder();
/// let tree = build.record(&mut rec, &build.upload(&gpu, &points)?)?;
/// let camera = Camera::frame((glam::Vec3::splat(-1.0), glam::Vec3::ONE), 1.0);
/// let render = VolumeRender { camera, options: VolumeOptions::default(), tree_depth: 6 };
/// let image = render.record(&mut rec, &tree)?; // build and render in one submission
/// rec.submit()?;
/// let _ = render.download(&gpu, &image)?;
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
///
/// The build's output rendered where it was built, on either backend:
///
/// ```
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_octree::GpuBuild;
/// use lumbre_raytrace::{Camera, VolumeOptions, VolumeRender, cloud_points, phantom_cloud};
/// let backend = Backend::Cpu; // or Backend::Gpu(Gpu::new()?)
/// let (tree, _) = backend.run_kept(&GpuBuild::new(4), &cloud_points(&phantom_cloud(16)), &())?;
/// let camera = Camera::frame((glam::Vec3::splat(-1.0), glam::Vec3::ONE), 1.0);
/// let options = VolumeOptions { width: 8, height: 8, ..Default::default() };
/// let (image, _) = VolumeRender { camera, options, tree_depth: 4 }.run_placed(&tree.placed(), &())?;
/// assert_eq!(image.width, 8);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct VolumeRender {
    /// The camera.
    pub camera: Camera,
    /// Size, mode, level, lights.
    pub options: VolumeOptions,
    /// Depth of the tree being rendered (the render level is clamped to it).
    pub tree_depth: u32,
}

impl VolumeRender {
    /// The CPU render of `tree` ([`render_volume_cpu`]).
    ///
    /// ```
    /// use lumbre_octree::Octree;
    /// use lumbre_raytrace::{Camera, VolumeOptions, VolumeRender, cloud_points, phantom_cloud};
    /// let points = cloud_points(&phantom_cloud(16));
    /// let (tree, _) = Octree::build(&points.positions, &points.attrs, 4)?;
    /// let camera = Camera::frame((glam::Vec3::splat(-1.0), glam::Vec3::ONE), 1.0);
    /// let options = VolumeOptions { width: 16, height: 16, ..Default::default() };
    /// let image = VolumeRender { camera, options, tree_depth: 4 }.cpu(&tree)?;
    /// assert_eq!(image.width, 16);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, tree: &Octree) -> lumbre_gpu::Result<Image> {
        render_volume_cpu(tree, &self.camera, &self.options).map_err(lumbre_gpu::Error::Input)
    }
}
