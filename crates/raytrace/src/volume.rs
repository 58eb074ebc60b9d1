//! Voxel rendering of point clouds through the sparse octree (the volumetric thesis's
//! renderer): one camera ray per pixel, the first voxel at the render level, shaded by
//! mean colour, by depth, or with Phong lighting, shadow rays and mirror reflection by the
//! voxel's mean reflection factor. The CPU path here is the reference for
//! `raytrace/volume.wgsl`.

use glam::Vec3;
use lumbre_octree::{Attrs, Octree, Points};
use rayon::prelude::*;

use crate::{Camera, Image, PointCloud, shepp_logan_phantom};

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

/// Settings of a volume render.
///
/// ```
/// let o = lumbre_raytrace::VolumeOptions::default();
/// assert_eq!((o.width, o.height, o.max_depth), (640, 480, 3));
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
    /// Longest chain of reflections in Phong mode (1: no reflection).
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

/// Renders `tree` on the CPU.
///
/// ```
/// use lumbre_octree::{Attrs, Octree};
/// use lumbre_raytrace::{Camera, VolumeOptions, render_volume_cpu};
/// let pts = [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]];
/// let (tree, _) = Octree::build(&pts, &[Attrs::from_unit([1.0, 0.0, 0.0], 0.0, 0.0); 2], 2).unwrap();
/// let camera = Camera::frame((glam::Vec3::ZERO, glam::Vec3::ONE), 1.0);
/// let image = render_volume_cpu(&tree, &camera, &VolumeOptions { width: 16, height: 16, ..Default::default() });
/// assert_eq!(image.pixels.len(), 256);
/// ```
pub fn render_volume_cpu(tree: &Octree, camera: &Camera, o: &VolumeOptions) -> Image {
    let g = camera.to_gpu(o.width, o.height);
    let lights = o.lights_for(tree, camera);
    let eps = voxel_eps(tree, o.level);
    let pixels: Vec<Vec3> = (0..o.width * o.height)
        .into_par_iter()
        .map(|i| {
            let (x, y) = (i % o.width, i / o.width);
            let (origin, dir) = g.ray(x as f32 + 0.5, y as f32 + 0.5);
            voxel_radiance(tree, origin, dir, o, &lights, eps)
        })
        .collect();
    Image::from_pixels(o.width, o.height, pixels).expect("width x height pixels")
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

/// The 3D Shepp-Logan phantom on an `n`³ grid as a point cloud in `[-1, 1]`³: one point per
/// voxel above zero intensity, coloured along a blue-to-orange ramp of the intensity, with
/// the skull (intensity >= 0.9) a partial mirror.
///
/// ```
/// let cloud = lumbre_raytrace::phantom_cloud(16);
/// assert!(cloud.len() > 100 && cloud.len() < 16 * 16 * 16);
/// ```
pub fn phantom_cloud(n: u32) -> PointCloud {
    let slices = shepp_logan_phantom(n);
    let mut cloud = PointCloud::default();
    let s = 2.0 / n as f32;
    for (z, img) in slices.iter().enumerate() {
        for y in 0..img.height {
            for x in 0..img.width {
                let v = img.get(x, y).x;
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
    }
    cloud
}

mod gpu {

    use glam::Vec3;
    use lumbre_gpu::{Buffer, Compute, Error, Gpu, Recorder, Result};
    use lumbre_octree::{GpuOctree, Octree};

    use super::{VOXEL_SPECULAR, VolumeOptions, depth_range, render_volume_cpu, voxel_eps};
    use crate::{Camera, GpuCamera, Image};

    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct Params {
        cam: GpuCamera,
        root_min: [f32; 3],
        root_size: f32,
        background: [f32; 3],
        width: u32,
        height: u32,
        mode: u32,
        level: u32,
        max_depth: u32,
        n_lights: u32,
        ambient: f32,
        eps: f32,
        near: f32,
        far: f32,
        ks: f32,
        ns: f32,
        pixel_base: u32,
        tree_depth: u32,
        empty: u32,
        _pad: [u32; 2],
    }
    const _: () = assert!(
        size_of::<Params>() == lumbre_shaders::raytrace::VOLUME_SHALLOW_PARAMS_SIZE
            && size_of::<Params>() == lumbre_shaders::raytrace::VOLUME_DEEP_PARAMS_SIZE
    );

    /// A voxel render through the [`Compute`] trait: the CPU path is
    /// [`render_volume_cpu`]; the GPU path reads an octree already on the GPU, so a GPU
    /// build followed by this render never leaves the device.
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
    #[derive(Clone, Debug)]
    pub struct VolumeRender {
        /// The camera.
        pub camera: Camera,
        /// Size, mode, level, lights.
        pub options: VolumeOptions,
        /// Depth of the tree being rendered (the render level is clamped to it).
        pub tree_depth: u32,
    }

    /// Pixels of a volume render on the GPU.
    #[derive(Clone, Debug)]
    pub struct GpuVolumeImage {
        /// Linear RGB (and 1) per pixel.
        pub pixels: Buffer<[f32; 4]>,
        /// Width.
        pub width: u32,
        /// Height.
        pub height: u32,
    }

    const TILES_PER_DISPATCH: u32 = 1 << 14;

    /// Deepest tree the `shallow` variant of `raytrace/volume.wgsl` takes (its stack holds
    /// 88 entries); deeper trees take `deep`.
    const SHALLOW_DEPTH: u32 = 10;

    impl VolumeRender {
        fn shell(&self, root: lumbre_octree::Root) -> Octree {
            // Enough of a tree for the helpers that only look at the root and depth.
            Octree { root, depth: self.tree_depth, nodes: Vec::new(), levels: Vec::new() }
        }

        /// Records the render of `tree` (on the GPU) into a new pixel buffer.
        pub fn record_render(&self, rec: &mut Recorder, tree: &GpuOctree) -> Result<GpuVolumeImage> {
            let gpu = rec.gpu().clone();
            let o = &self.options;
            if o.width == 0 || o.height == 0 {
                return Err(Error::Input("empty image".into()));
            }
            let shell = self.shell(tree.root);
            let lights = o.lights_for(&shell, &self.camera);
            let flat: Vec<[f32; 4]> =
                lights.iter().flat_map(|(p, i)| [p.extend(0.0).to_array(), i.extend(0.0).to_array()]).collect();
            let lights_buf = if flat.is_empty() { gpu.zeroed(2)? } else { gpu.upload(&flat)? };
            let (near, far) = depth_range(&shell, self.camera.eye);
            let pixels = gpu.zeroed::<[f32; 4]>(o.width as usize * o.height as usize)?;
            let shader = if tree.depth <= SHALLOW_DEPTH {
                lumbre_shaders::raytrace::VOLUME_SHALLOW
            } else {
                lumbre_shaders::raytrace::VOLUME_DEEP
            };
            let kernel = gpu.kernel(&shader, "render")?;
            let tiles = o.width.div_ceil(8) * o.height.div_ceil(8);
            let mut base = 0;
            while base < tiles {
                let count = TILES_PER_DISPATCH.min(tiles - base);
                let params = gpu.uniform(&Params {
                    cam: self.camera.to_gpu(o.width, o.height),
                    root_min: tree.root.min,
                    root_size: tree.root.size,
                    background: o.background.to_array(),
                    width: o.width,
                    height: o.height,
                    mode: o.mode.code(),
                    level: o.level.min(tree.depth),
                    max_depth: o.max_depth,
                    n_lights: lights.len() as u32,
                    ambient: o.ambient,
                    eps: voxel_eps(&shell, o.level),
                    near,
                    far,
                    ks: VOXEL_SPECULAR.0,
                    ns: VOXEL_SPECULAR.1,
                    pixel_base: base,
                    tree_depth: tree.depth,
                    empty: tree.empty as u32,
                    _pad: [0; 2],
                })?;
                let res = [
                    params.as_entire_binding(),
                    tree.nodes.binding(),
                    lights_buf.binding(),
                    pixels.binding(),
                    tree.payloads.binding(),
                ];
                rec.dispatch("volume", &kernel, &res, count as u64)?;
                base += count;
            }
            Ok(GpuVolumeImage { pixels, width: o.width, height: o.height })
        }
    }

    impl Compute for VolumeRender {
        type Input = Octree;
        type Output = Image;
        type GpuInput = GpuOctree;
        type GpuOutput = GpuVolumeImage;

        fn name(&self) -> &'static str {
            "volume render"
        }

        fn cpu(&self, tree: &Octree) -> Result<Image> {
            Ok(render_volume_cpu(tree, &self.camera, &self.options))
        }

        fn upload(&self, gpu: &Gpu, tree: &Octree) -> Result<GpuOctree> {
            tree.pack().upload(gpu)
        }

        fn record(&self, rec: &mut Recorder, tree: &GpuOctree) -> Result<GpuVolumeImage> {
            self.record_render(rec, tree)
        }

        fn download(&self, gpu: &Gpu, out: &GpuVolumeImage) -> Result<Image> {
            let px = gpu.download(&out.pixels)?;
            Image::from_pixels(out.width, out.height, px.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect())
                .map_err(Error::Input)
        }
    }
}

pub use gpu::{GpuVolumeImage, VolumeRender};
