//! Query disks: from a camera's first hits (one per pixel), and from given points and
//! normals, all of one radius (radii from the nearest photon hits are `nearest.rs`).

use glam::Vec3;
use lumbre_gpu::{Error, Progress, Report, Result};
use lumbre_kdtree::{QueryOptions, Ray};
use lumbre_raytrace::{Camera, Prepared};
use rayon::prelude::*;

use crate::problem::Disk;

/// `pixel_disk` entry of a pixel whose ray leaves the scene.
///
/// ```
/// assert_eq!(lumbre_density::NO_DISK, u32::MAX);
/// ```
pub const NO_DISK: u32 = u32::MAX;

/// The disks at a camera's first hits and the pixel each belongs to.
///
/// ```
/// let d = lumbre_density::CameraDisks::default();
/// assert!(d.disks.is_empty() && d.pixel_disk.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CameraDisks {
    /// One disk per pixel that sees the scene, in pixel order (rows from the top).
    pub disks: Vec<Disk>,
    /// Per pixel (`y * width + x`): its disk, or [`NO_DISK`].
    pub pixel_disk: Vec<u32>,
    /// Per disk: its material (index into the scene's materials).
    pub material: Vec<u32>,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
}

/// The disk at each pixel's first hit: the ray through the pixel's centre, the disk centred
/// at the hit with the shading normal turned towards the camera, of radius `radius`.
///
/// ```
/// use lumbre_density::camera_disks;
/// use lumbre_raytrace::{Camera, Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let p = Prepared::new(scene, &Default::default());
/// let camera = Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap();
/// let d = camera_disks(&p, &camera, 16, 12, 0.05)?;
/// assert_eq!(d.pixel_disk.len(), 16 * 12);
/// assert!(d.disks.iter().all(|disk| disk.normal.dot(camera.eye - disk.centre) > 0.0));
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn camera_disks(p: &Prepared, camera: &Camera, width: u32, height: u32, radius: f32) -> Result<CameraDisks> {
    camera.validate().map_err(Error::Input)?;
    check_radius(radius)?;
    let g = camera.to_gpu(width, height);
    let query = QueryOptions::default();
    let hits: Vec<Option<(Disk, u32)>> = (0..width as usize * height as usize)
        .into_par_iter()
        .map(|i| {
            let (x, y) = ((i % width as usize) as f32, (i / width as usize) as f32);
            let (o, d) = g.ray(x + 0.5, y + 0.5);
            let hit = p.closest_hit(&Ray::new(o, d), f32::INFINITY, &query)?;
            let t = p.tris[hit.tri as usize];
            let ng = (t[1] - t[0]).cross(t[2] - t[0]).normalize_or_zero();
            let tri = p.scene.triangles[hit.tri as usize];
            let mut n = ng;
            if tri.has_normals() {
                let [a, b, c] = tri.n.map(|k| p.scene.normals[k as usize]);
                let s = a * (1.0 - hit.u - hit.v) + b * hit.u + c * hit.v;
                if s.length() > 0.0 {
                    n = s.normalize();
                }
            }
            if n.dot(d) > 0.0 {
                n = -n;
            }
            (n != Vec3::ZERO).then_some((Disk { centre: o + d * hit.t, normal: n, radius }, tri.material))
        })
        .collect();
    let mut out = CameraDisks { width, height, ..Default::default() };
    for h in hits {
        match h {
            Some((disk, m)) => {
                out.pixel_disk.push(out.disks.len() as u32);
                out.disks.push(disk);
                out.material.push(m);
            }
            None => out.pixel_disk.push(NO_DISK),
        }
    }
    Ok(out)
}

/// The disks at a camera's first hits through [`Compute`](lumbre_gpu::Compute): the CPU path is
/// [`camera_disks`], the GPU path `density/disks.wgsl`, which leaves the disks on the GPU
/// for the estimate ([`GpuProblem::resident`](crate::GpuProblem::resident)). The GPU reads
/// the scene as photon tracing does (one upload serves both:
/// [`GpuPhotonScene`](crate::GpuPhotonScene)).
///
/// ```
/// use lumbre_density::CameraDiskPass;
/// use lumbre_gpu::{Backend, Compute};
/// use lumbre_raytrace::{Camera, Prepared, Scene};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
/// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
/// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 16, height: 12, radius: 0.05 };
/// let disks = pass.run(&Backend::Cpu, &Prepared::new(scene, &Default::default()))?;
/// assert_eq!(disks.pixel_disk.len(), 16 * 12);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraDiskPass {
    /// The camera.
    pub camera: Camera,
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// The radius of every disk.
    pub radius: f32,
}

impl CameraDiskPass {
    /// The CPU path: [`camera_disks`].
    ///
    /// ```
    /// use lumbre_density::CameraDiskPass;
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref())?;
    /// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40")?, width: 16, height: 12, radius: 0.05 };
    /// assert_eq!(pass.cpu(&Prepared::new(scene, &Default::default()))?.pixel_disk.len(), 16 * 12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, p: &Prepared) -> Result<CameraDisks> {
        camera_disks(p, &self.camera, self.width, self.height, self.radius)
    }

    /// [`cpu`](CameraDiskPass::cpu), reported: stage `camera disks`; stat `disks`.
    pub fn run_cpu(&self, p: &Prepared, _: &dyn Progress) -> Result<(CameraDisks, Report)> {
        let mut report = Report::default();
        let out =
            report.time("camera disks", || camera_disks(p, &self.camera, self.width, self.height, self.radius))?;
        report.stat("disks", out.disks.len() as f64);
        Ok((out, report))
    }
}

/// An error unless `r` is a positive finite radius.
pub(crate) fn check_radius(r: f32) -> Result<()> {
    if r.is_finite() && r > 0.0 {
        Ok(())
    } else {
        Err(Error::Input(format!("disk radius {r} must be positive and finite")))
    }
}

/// Disks at given points with given normals, all of radius `radius`.
///
/// ```
/// use glam::Vec3;
/// let d = lumbre_density::disks_at(&[Vec3::ZERO], &[Vec3::Y], 0.1)?;
/// assert_eq!(d[0].radius, 0.1);
/// assert!(lumbre_density::disks_at(&[Vec3::ZERO], &[], 0.1).is_err());
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub fn disks_at(points: &[Vec3], normals: &[Vec3], radius: f32) -> Result<Vec<Disk>> {
    check_radius(radius)?;
    if points.len() != normals.len() {
        return Err(Error::Input(format!("{} points but {} normals", points.len(), normals.len())));
    }
    Ok(points.iter().zip(normals).map(|(&centre, &normal)| Disk { centre, normal, radius }).collect())
}
