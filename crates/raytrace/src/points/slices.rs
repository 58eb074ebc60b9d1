//! Image slice stacks (one image per z, as in medical volumes) and the 3D Shepp–Logan phantom.

use std::fs;
use std::path::{Path, PathBuf};

use ::image::{DynamicImage, GrayImage, ImageFormat, ImageReader, RgbImage};
use glam::{DMat3, DVec3, Vec3};
use rayon::prelude::*;

use super::{PointCloud, PointReport};
use crate::error::LoadError;
use crate::image::{Image, stored_rgb};

/// One decoded slice: `(width, height, stored RGB values in [0, 1])`.
fn read_slice(path: &Path) -> Result<(u32, u32, Vec<[f32; 3]>), LoadError> {
    crate::read::check_input(path)?;
    let reader = ImageReader::open(path).map_err(|e| LoadError::read(path, &e))?;
    let reader = reader.with_guessed_format().map_err(|e| LoadError::read(path, &e))?;
    let img = reader.decode().map_err(|e| LoadError::new(path, format!("cannot decode image: {e}")))?;
    Ok((img.width(), img.height(), stored_rgb(&img)))
}

/// The luminance of a stored pixel value: the grey value itself when `r = g = b`, else
/// Rec. 709 weights `0.2126 r + 0.7152 g + 0.0722 b`.
fn luminance(c: [f32; 3]) -> f32 {
    if c[0] == c[1] && c[1] == c[2] { c[0] } else { 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] }
}

/// Loads a stack of image slices as a point cloud.
///
/// Slice `i` (in the order given) is the plane `z = i * spacing[2]`; its pixel in column `x`
/// and row `y` (row 0 at the top) becomes the point `(x * spacing[0], y * spacing[1], z)`.
/// Images may be grey or RGB (8 or 16 bits, any format the `image` crate was built with: PNG
/// and OpenEXR). Values are used as stored, scaled to `[0, 1]` (slices are data: no sRGB
/// decoding). A pixel whose luminance (the grey value, or Rec. 709 luminance for colour) is
/// `<= background` is dropped; the others become points with the pixel's colour and zero
/// reflection and refraction. Slices of different sizes are allowed (a warning).
///
/// Errors: a slice that cannot be read or decoded (named), a non-finite spacing or background.
/// No paths give an empty cloud.
pub fn load_slices(
    paths: &[PathBuf],
    spacing: [f32; 3],
    background: f32,
) -> Result<(PointCloud, PointReport), LoadError> {
    let mut report = PointReport::default();
    let Some(first) = paths.first() else {
        report.finish(&PointCloud::default());
        return Ok((PointCloud::default(), report));
    };
    if !spacing.iter().all(|s| s.is_finite()) || !background.is_finite() {
        return Err(LoadError::new(
            first,
            format!("slice spacing {spacing:?} and background {background} must be finite"),
        ));
    }
    let slices: Vec<(u32, u32, Vec<[f32; 3]>)> = paths.par_iter().map(|p| read_slice(p)).collect::<Result<_, _>>()?;
    let mut cloud = PointCloud::default();
    let (w0, h0) = (slices[0].0, slices[0].1);
    for (i, (w, h, pixels)) in slices.iter().enumerate() {
        if (*w, *h) != (w0, h0) {
            report.warnings.push(format!("slice {} is {w}x{h}, the first is {w0}x{h0}", paths[i].display()));
        }
        let z = i as f32 * spacing[2];
        for (k, &c) in pixels.iter().enumerate() {
            if luminance(c) > background {
                let (x, y) = ((k % *w as usize) as f32, (k / *w as usize) as f32);
                cloud.push([x * spacing[0], y * spacing[1], z], c, 0.0, 0.0);
            }
        }
    }
    report.finish(&cloud);
    Ok((cloud, report))
}

/// [`load_slices`] on every `.png` file of `dir` (case-insensitive extension), sorted by file
/// name (so `slice_0000.png`, `slice_0001.png`, ... load in order).
pub fn load_slice_dir(dir: &Path, spacing: [f32; 3], background: f32) -> Result<(PointCloud, PointReport), LoadError> {
    let entries = fs::read_dir(dir).map_err(|e| LoadError::read(dir, &e))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| LoadError::read(dir, &e))?.path();
        if path.is_file() && path.extension().is_some_and(|x| x.eq_ignore_ascii_case("png")) {
            paths.push(path);
        }
    }
    paths.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    let (cloud, mut report) = load_slices(&paths, spacing, background)?;
    if paths.is_empty() {
        report.warnings.push(format!("no PNG files in {}", dir.display()));
    }
    Ok((cloud, report))
}

/// Writes slices as `dir/slice_0000.png`, `dir/slice_0001.png`, ... (creating `dir`), and
/// returns the paths.
///
/// Slices are data, not pictures: each channel is clamped to `[0, 1]` and quantized linearly
/// to 8 bits (`round(v * 255)`, no sRGB encoding), written as 8-bit grey when every pixel has
/// `r = g = b`, else as 8-bit RGB. So [`load_slices`] reads back `round(v * 255) / 255`.
pub fn write_slices(dir: &Path, slices: &[Image]) -> Result<Vec<PathBuf>, LoadError> {
    fs::create_dir_all(dir).map_err(|e| LoadError::write(dir, &e))?;
    let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
    slices
        .par_iter()
        .enumerate()
        .map(|(i, img)| {
            let path = dir.join(format!("slice_{i:04}.png"));
            let size_err = || LoadError::new(&path, "image size does not match its pixel count");
            let grey = img.pixels.iter().all(|p| p.x == p.y && p.y == p.z);
            let image = if grey {
                let bytes = img.pixels.iter().map(|p| q(p.x)).collect();
                DynamicImage::ImageLuma8(GrayImage::from_raw(img.width, img.height, bytes).ok_or_else(size_err)?)
            } else {
                let bytes = img.pixels.iter().flat_map(|p| p.to_array().map(q)).collect();
                DynamicImage::ImageRgb8(RgbImage::from_raw(img.width, img.height, bytes).ok_or_else(size_err)?)
            };
            let mut png = std::io::Cursor::new(Vec::new());
            image
                .write_to(&mut png, ImageFormat::Png)
                .map_err(|e| LoadError::new(&path, format!("cannot encode PNG: {e}")))?;
            crate::write::write_file(&path, png.get_ref())?;
            Ok(path)
        })
        .collect()
}

/// The ten ellipsoids of the 3D modified Shepp–Logan head phantom:
/// `[A, a, b, c, x0, y0, z0, phi, theta, psi]` = intensity added inside, semi-axes, centre (in
/// `[-1, 1]³`), and z-x-z Euler angles in degrees.
///
/// The geometry is Kak and Slaney's 3D phantom (Principles of Computerized Tomographic Imaging,
/// 1988, p. 102); the intensities are Toft's higher-contrast "modified" values (The Radon
/// Transform, 1996, pp. 199–200), as tabulated by M. Schabel's `phantom3d` (MATLAB Central
/// File Exchange 9416).
pub(crate) const SHEPP_LOGAN_3D: [[f64; 10]; 10] = [
    [1.0, 0.6900, 0.920, 0.810, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [-0.8, 0.6624, 0.874, 0.780, 0.0, -0.0184, 0.0, 0.0, 0.0, 0.0],
    [-0.2, 0.1100, 0.310, 0.220, 0.22, 0.0, 0.0, -18.0, 0.0, 10.0],
    [-0.2, 0.1600, 0.410, 0.280, -0.22, 0.0, 0.0, 18.0, 0.0, 10.0],
    [0.1, 0.2100, 0.250, 0.410, 0.0, 0.35, -0.15, 0.0, 0.0, 0.0],
    [0.1, 0.0460, 0.046, 0.050, 0.0, 0.1, 0.25, 0.0, 0.0, 0.0],
    [0.1, 0.0460, 0.046, 0.050, 0.0, -0.1, 0.25, 0.0, 0.0, 0.0],
    [0.1, 0.0460, 0.023, 0.050, -0.08, -0.605, 0.0, 0.0, 0.0, 0.0],
    [0.1, 0.0230, 0.023, 0.020, 0.0, -0.606, 0.0, 0.0, 0.0, 0.0],
    [0.1, 0.0230, 0.046, 0.020, 0.06, -0.605, 0.0, 0.0, 0.0, 0.0],
];

/// One ellipsoid, ready to test points against.
pub(crate) struct Ellipsoid {
    intensity: f64,
    inv_axes: DVec3,
    centre: DVec3,
    rotation: DMat3,
}

impl Ellipsoid {
    pub(crate) fn new(row: &[f64; 10]) -> Ellipsoid {
        let [a, ax, ay, az, x0, y0, z0, phi, theta, psi] = *row;
        let (sp, cp) = phi.to_radians().sin_cos();
        let (st, ct) = theta.to_radians().sin_cos();
        let (ss, cs) = psi.to_radians().sin_cos();
        // The z-x-z Euler rotation of phantom3d, applied to the sample point before the centre
        // is subtracted (rows of the matrix given as columns of the transpose).
        let rotation = DMat3::from_cols(
            DVec3::new(cs * cp - ct * sp * ss, -ss * cp - ct * sp * cs, st * sp),
            DVec3::new(cs * sp + ct * cp * ss, -ss * sp + ct * cp * cs, -st * cp),
            DVec3::new(ss * st, cs * st, ct),
        );
        Ellipsoid {
            intensity: a,
            inv_axes: DVec3::new(1.0 / ax, 1.0 / ay, 1.0 / az),
            centre: DVec3::new(x0, y0, z0),
            rotation,
        }
    }

    fn contains(&self, p: DVec3) -> bool {
        let q = (self.rotation * p - self.centre) * self.inv_axes;
        q.length_squared() <= 1.0
    }
}

/// The 3D modified Shepp–Logan head phantom sampled on an `n`×`n`×`n` grid, as `n` grey
/// `n`×`n` slices (slice `k` is z index `k`).
///
/// Voxel `(i, j, k)` (column, row, slice) is sampled at its centre in `[-1, 1]³`:
/// `x = -1 + (2i + 1) / n`, `y = 1 - (2j + 1) / n` (row 0 at the top, +y up),
/// `z = -1 + (2k + 1) / n`. Its value is the sum of the intensities of the ellipsoids
/// containing it (see the table in the source), clamped to `[0, 1]`: 1 for the skull, 0.2 for
/// brain, 0 outside and in the ventricles, 0.3 and 0.4 for the small features. Every pixel is
/// that grey value.
///
/// ```
/// use lumbre_raytrace::shepp_logan_phantom;
/// let slices = shepp_logan_phantom(16);
/// assert_eq!(slices.len(), 16);
/// let centre = slices[8].get(8, 8).x;
/// assert!(centre > 0.0 && centre < 0.5);
/// assert_eq!(slices[0].get(0, 0).x, 0.0);
/// ```
pub fn shepp_logan_phantom(n: u32) -> Vec<Image> {
    let ellipsoids = SHEPP_LOGAN_3D.map(|row| Ellipsoid::new(&row));
    (0..n)
        .into_par_iter()
        .map(|k| {
            let mut img = Image::new(n, n);
            for j in 0..n {
                for i in 0..n {
                    img.pixels[(j * n + i) as usize] = Vec3::splat(phantom_value(&ellipsoids, n, i, j, k));
                }
            }
            img
        })
        .collect()
}

/// The value of voxel `(i, j, k)` of the `n`³ phantom (see [`shepp_logan_phantom`]).
pub(crate) fn phantom_value(ellipsoids: &[Ellipsoid], n: u32, i: u32, j: u32, k: u32) -> f32 {
    let coord = |i: u32| -1.0 + (2.0 * f64::from(i) + 1.0) / f64::from(n);
    let p = DVec3::new(coord(i), -coord(j), coord(k));
    let v: f64 = ellipsoids.iter().filter(|e| e.contains(p)).map(|e| e.intensity).sum();
    v.clamp(0.0, 1.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phantom_values() {
        let n = 64;
        let s = shepp_logan_phantom(n);
        let at = |x: f64, y: f64, z: f64| {
            let idx = |c: f64| (((c + 1.0) * 0.5 * f64::from(n)) as u32).min(n - 1);
            s[idx(z) as usize].get(idx(x), idx(-y)).x
        };
        assert_eq!(at(0.0, 0.0, 0.95), 0.0); // outside the head
        assert!((at(0.0, 0.9, 0.0) - 1.0).abs() < 1e-6); // skull (between the two outer ellipsoids)
        assert!((at(0.5, 0.0, 0.0) - 0.2).abs() < 1e-6); // brain
        assert!((at(0.0, 0.0, 0.5) - 0.2).abs() < 1e-6); // brain
        assert!((at(0.22, 0.0, 0.0) - 0.0).abs() < 1e-6); // right ventricle
        assert!((at(0.0, 0.35, -0.15) - 0.3).abs() < 1e-6); // the large upper ellipsoid
        let values: std::collections::BTreeSet<u32> =
            s.iter().flat_map(|img| img.pixels.iter().map(|p| (p.x * 10.0).round() as u32)).collect();
        assert!(values.contains(&0) && values.contains(&2) && values.contains(&10), "{values:?}");
    }
}
