//! Linear RGB images: PNG and EXR files, sRGB conversion, and image comparison.

use std::fmt;
use std::io::{Cursor, Write as _};
use std::path::Path;

use ::image::{DynamicImage, ImageBuffer, ImageFormat, ImageReader, Rgb, RgbImage};
use glam::Vec3;
use rayon::prelude::*;

use crate::error::LoadError;

/// A linear-RGB floating-point image, row-major, top row first.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::Image;
/// let mut img = Image::new(4, 2);
/// img.set(3, 1, Vec3::new(1.0, 0.5, 0.0));
/// assert_eq!(img.get(3, 1), Vec3::new(1.0, 0.5, 0.0));
/// assert_eq!(img.to_srgb8()[7], [255, 188, 0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` linear RGB values, row-major, top row first.
    pub pixels: Vec<Vec3>,
}

/// sRGB encoding of one linear value (the exact IEC 61966-2-1 transfer function, evaluated in
/// f64), clamped to `[0, 1]`; NaN gives 0.
///
/// ```
/// use lumbre_raytrace::linear_to_srgb;
/// assert_eq!(linear_to_srgb(0.0), 0.0);
/// assert_eq!(linear_to_srgb(1.0), 1.0);
/// assert!((linear_to_srgb(0.5) - 0.735_357).abs() < 1e-5);
/// ```
pub fn linear_to_srgb(x: f32) -> f32 {
    let x = if x.is_nan() { 0.0 } else { f64::from(x.clamp(0.0, 1.0)) };
    (if x <= 0.003_130_8 { 12.92 * x } else { 1.055 * x.powf(1.0 / 2.4) - 0.055 }) as f32
}

/// The inverse of [`linear_to_srgb`] on `[0, 1]` (inputs are clamped; NaN gives 0).
pub fn srgb_to_linear(x: f32) -> f32 {
    let x = if x.is_nan() { 0.0 } else { f64::from(x.clamp(0.0, 1.0)) };
    (if x <= 0.040_45 { x / 12.92 } else { ((x + 0.055) / 1.055).powf(2.4) }) as f32
}

/// An 8-bit value of `x` in `[0, 1]`, rounded to nearest.
fn quantize(x: f32) -> u8 {
    (x * 255.0 + 0.5) as u8
}

impl Image {
    /// A black image.
    pub fn new(width: u32, height: u32) -> Image {
        Image { width, height, pixels: vec![Vec3::ZERO; width as usize * height as usize] }
    }

    /// An image from its pixels; an error if `pixels.len() != width * height`.
    pub fn from_pixels(width: u32, height: u32, pixels: Vec<Vec3>) -> Result<Image, String> {
        if pixels.len() as u64 != u64::from(width) * u64::from(height) {
            let needed = u64::from(width) * u64::from(height);
            return Err(format!("{width}x{height} image needs {needed} pixels, got {}", pixels.len()));
        }
        Ok(Image { width, height, pixels })
    }

    fn index(&self, x: u32, y: u32) -> usize {
        assert!(x < self.width && y < self.height, "pixel ({x}, {y}) outside a {}x{} image", self.width, self.height);
        y as usize * self.width as usize + x as usize
    }

    /// The pixel at column `x`, row `y` (row 0 at the top).
    ///
    /// # Panics
    ///
    /// When `(x, y)` is outside the image, like slice indexing.
    pub fn get(&self, x: u32, y: u32) -> Vec3 {
        self.pixels[self.index(x, y)]
    }

    /// Sets the pixel at column `x`, row `y`.
    ///
    /// # Panics
    ///
    /// When `(x, y)` is outside the image, like slice indexing.
    pub fn set(&mut self, x: u32, y: u32, value: Vec3) {
        let i = self.index(x, y);
        self.pixels[i] = value;
    }

    /// 8-bit sRGB pixels: each channel clamped to `[0, 1]`, encoded by [`linear_to_srgb`] and
    /// rounded to nearest.
    pub fn to_srgb8(&self) -> Vec<[u8; 3]> {
        self.pixels.par_iter().map(|p| p.to_array().map(|c| quantize(linear_to_srgb(c)))).collect()
    }

    /// Writes the image in the format its extension names: `.png` (8-bit sRGB) or `.exr`
    /// (linear f32); any other extension is an error. See [`write_file`] for how the file is
    /// written.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("lumbre-save-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let img = lumbre_raytrace::Image::new(2, 2);
    /// img.save(&dir.join("a.exr")).unwrap();
    /// assert!(img.save(&dir.join("a.jpg")).unwrap_err().to_string().contains(".png or .exr"));
    /// assert!(!dir.join("a.jpg").exists());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn save(&self, path: &Path) -> Result<(), LoadError> {
        match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("png") => self.save_png(path),
            Some("exr") => self.save_exr(path),
            _ => Err(LoadError::new(path, "unknown image format: the file name must end in .png or .exr")),
        }
    }

    /// Writes an 8-bit sRGB PNG (see [`Image::to_srgb8`]) through [`write_file`].
    pub fn save_png(&self, path: &Path) -> Result<(), LoadError> {
        let bytes: Vec<u8> = self.to_srgb8().into_iter().flatten().collect();
        let buf = RgbImage::from_raw(self.width, self.height, bytes)
            .ok_or_else(|| LoadError::new(path, "image size does not match its pixel count"))?;
        write_file(path, &encode(DynamicImage::ImageRgb8(buf), ImageFormat::Png, path)?)
    }

    /// Writes a linear f32 RGB OpenEXR file (values as they are, NaN and infinities
    /// included) through [`write_file`].
    pub fn save_exr(&self, path: &Path) -> Result<(), LoadError> {
        let floats: Vec<f32> = self.pixels.iter().flat_map(|p| p.to_array()).collect();
        let buf: ImageBuffer<Rgb<f32>, Vec<f32>> = ImageBuffer::from_raw(self.width, self.height, floats)
            .ok_or_else(|| LoadError::new(path, "image size does not match its pixel count"))?;
        write_file(path, &encode(DynamicImage::ImageRgb32F(buf), ImageFormat::OpenExr, path)?)
    }

    /// Reads a PNG (8 or 16 bits, grey or RGB, alpha ignored) as sRGB-encoded and returns it
    /// in linear RGB.
    pub fn load_png(path: &Path) -> Result<Image, LoadError> {
        let img = decode(path, ImageFormat::Png)?;
        let pixels = stored_rgb(&img).into_iter().map(|p| Vec3::from(p.map(srgb_to_linear))).collect();
        Ok(Image { width: img.width(), height: img.height(), pixels })
    }

    /// Reads an OpenEXR file's RGB channels (alpha ignored) as linear values, unchanged.
    pub fn load_exr(path: &Path) -> Result<Image, LoadError> {
        let img = decode(path, ImageFormat::OpenExr)?;
        let rgb = img.to_rgb32f();
        let pixels = rgb.pixels().map(|p| Vec3::from(p.0)).collect();
        Ok(Image { width: rgb.width(), height: rgb.height(), pixels })
    }
}

/// The RGB values of a decoded image as stored, in `[0, 1]` for integer formats: 8-bit `v`
/// is exactly `v / 255.0` and 16-bit `v` is `v / 65535.0` (divided, not multiplied by a
/// reciprocal); float formats are unchanged. Grey images give `r = g = b`; alpha is ignored.
pub(crate) fn stored_rgb(img: &DynamicImage) -> Vec<[f32; 3]> {
    let color = img.color();
    match color.bits_per_pixel() / u16::from(color.channel_count()) {
        8 => img.to_rgb8().pixels().map(|p| p.0.map(|c| f32::from(c) / 255.0)).collect(),
        16 => img.to_rgb16().pixels().map(|p| p.0.map(|c| f32::from(c) / 65535.0)).collect(),
        _ => img.to_rgb32f().pixels().map(|p| p.0).collect(),
    }
}

/// Opens and decodes an image file that must be in `format`.
pub(crate) fn decode(path: &Path, format: ImageFormat) -> Result<DynamicImage, LoadError> {
    let reader = ImageReader::open(path).map_err(|e| LoadError::read(path, &e))?;
    let reader = reader.with_guessed_format().map_err(|e| LoadError::read(path, &e))?;
    match reader.format() {
        Some(f) if f == format => {}
        other => {
            let found = other.map_or("an unknown format".to_owned(), |f| format!("{f:?}"));
            return Err(LoadError::new(path, format!("expected a {format:?} file, found {found}")));
        }
    }
    reader.decode().map_err(|e| LoadError::new(path, format!("cannot decode {format:?}: {e}")))
}

/// Two images of different sizes were compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeMismatch {
    /// `(width, height)` of the first image.
    pub a: (u32, u32),
    /// `(width, height)` of the second image.
    pub b: (u32, u32),
}

impl fmt::Display for SizeMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot compare a {}x{} image with a {}x{} one", self.a.0, self.a.1, self.b.0, self.b.1)
    }
}

impl std::error::Error for SizeMismatch {}

/// How two images differ, measured on sRGB-encoded values in `[0, 1]` (each linear channel
/// clamped to `[0, 1]` and encoded by [`linear_to_srgb`], not quantized), so differences weigh
/// as they look. A channel that is NaN or infinite in exactly one of the images counts as the
/// largest difference, 1; in both, as 0 only when both are the same value.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffStats {
    /// Root mean square of the per-channel differences.
    pub rmse: f32,
    /// Mean of the absolute per-channel differences.
    pub mean_abs: f32,
    /// Largest absolute per-channel difference.
    pub max_abs: f32,
    /// Peak signal-to-noise ratio in dB, `-20 log10(rmse)` (infinite when identical).
    pub psnr: f32,
    /// Number of pixels compared.
    pub pixels: usize,
    /// Per-pixel error (the largest of its three channel differences), sorted ascending.
    sorted_errors: Vec<f32>,
}

impl DiffStats {
    /// The fraction of pixels whose error (largest channel difference) is greater than
    /// `threshold`: 0 for identical images; in `[0, 1]`. An empty image gives 0.
    pub fn fraction_over(&self, threshold: f32) -> f32 {
        if self.pixels == 0 {
            return 0.0;
        }
        let at_or_below = self.sorted_errors.partition_point(|&e| e <= threshold);
        (self.pixels - at_or_below) as f32 / self.pixels as f32
    }

    /// The per-pixel error at quantile `q` in `[0, 1]` (0: smallest, 1: largest; nearest rank).
    pub fn percentile(&self, q: f32) -> f32 {
        if self.sorted_errors.is_empty() {
            return 0.0;
        }
        let q = if q.is_nan() { 1.0 } else { q.clamp(0.0, 1.0) };
        let i = (q * (self.sorted_errors.len() - 1) as f32).round() as usize;
        self.sorted_errors[i.min(self.sorted_errors.len() - 1)]
    }

    /// Per-pixel errors (largest channel difference of each pixel), sorted ascending.
    pub fn pixel_errors(&self) -> &[f32] {
        &self.sorted_errors
    }
}

fn channel_diff(a: f32, b: f32) -> f32 {
    match (a.is_finite(), b.is_finite()) {
        (true, true) => (linear_to_srgb(a) - linear_to_srgb(b)).abs(),
        (false, false) if a.to_bits() == b.to_bits() => 0.0,
        _ => 1.0,
    }
}

/// Compares two images (see [`DiffStats`]).
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::{Image, diff_stats};
/// let a = Image::new(8, 8);
/// let mut b = a.clone();
/// b.set(0, 0, Vec3::ONE);
/// let d = diff_stats(&a, &b).unwrap();
/// assert_eq!(d.max_abs, 1.0);
/// assert_eq!(d.fraction_over(0.5), 1.0 / 64.0);
/// assert!(diff_stats(&a, &Image::new(8, 9)).is_err());
/// ```
pub fn diff_stats(a: &Image, b: &Image) -> Result<DiffStats, SizeMismatch> {
    if (a.width, a.height) != (b.width, b.height) || a.pixels.len() != b.pixels.len() {
        return Err(SizeMismatch { a: (a.width, a.height), b: (b.width, b.height) });
    }
    let per_pixel: Vec<[f32; 3]> = a
        .pixels
        .par_iter()
        .zip(&b.pixels)
        .map(|(p, q)| [channel_diff(p.x, q.x), channel_diff(p.y, q.y), channel_diff(p.z, q.z)])
        .collect();
    let pixels = per_pixel.len();
    let (mut sum, mut sum_sq, mut max_abs) = (0.0f64, 0.0f64, 0.0f32);
    for d in per_pixel.iter().flatten() {
        sum += f64::from(*d);
        sum_sq += f64::from(*d) * f64::from(*d);
        max_abs = max_abs.max(*d);
    }
    let n = (3 * pixels).max(1) as f64;
    let rmse = (sum_sq / n).sqrt() as f32;
    let mut sorted_errors: Vec<f32> = per_pixel.iter().map(|d| d[0].max(d[1]).max(d[2])).collect();
    sorted_errors.sort_unstable_by(f32::total_cmp);
    Ok(DiffStats {
        rmse,
        mean_abs: (sum / n) as f32,
        max_abs,
        psnr: if rmse > 0.0 { -20.0 * rmse.log10() } else { f32::INFINITY },
        pixels,
        sorted_errors,
    })
}

/// Root mean square difference of two images on sRGB values in `[0, 1]` (see [`DiffStats`]).
///
/// ```
/// use lumbre_raytrace::{Image, rmse};
/// let a = Image::new(4, 4);
/// assert_eq!(rmse(&a, &a), Ok(0.0));
/// ```
pub fn rmse(a: &Image, b: &Image) -> Result<f32, SizeMismatch> {
    diff_stats(a, b).map(|d| d.rmse)
}

fn encode(image: DynamicImage, format: ImageFormat, path: &Path) -> Result<Vec<u8>, LoadError> {
    let mut bytes = Cursor::new(Vec::new());
    image.write_to(&mut bytes, format).map_err(|e| LoadError::new(path, format!("cannot encode {format:?}: {e}")))?;
    Ok(bytes.into_inner())
}

/// Writes `bytes` to `path` whole or not at all: a regular file (or a new one) is written
/// to a temporary file in the same folder, synced and renamed into place, so a failed
/// write (a full disk) leaves the old file, or nothing, behind; anything else (a device
/// such as `/dev/null`) is written directly. Errors name the path.
///
/// ```
/// let path = std::env::temp_dir().join(format!("lumbre-write-doc-{}.txt", std::process::id()));
/// lumbre_raytrace::write_file(&path, b"whole").unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"whole");
/// assert!(lumbre_raytrace::write_file("/nonexistent-folder/x.png".as_ref(), b"").is_err());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), LoadError> {
    let fail = |e: std::io::Error| LoadError::new(path, format!("cannot write: {e}"));
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(fail)?;
            return f.write_all(bytes).and_then(|_| f.flush()).map_err(fail);
        }
        _ => {}
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srgb_round_trip_and_continuity() {
        for i in 0..=255u8 {
            let s = f32::from(i) / 255.0;
            assert_eq!(quantize(linear_to_srgb(srgb_to_linear(s))), i);
        }
        // The two pieces meet at the threshold.
        let t = 0.003_130_8f64;
        assert!((12.92 * t - (1.055 * t.powf(1.0 / 2.4) - 0.055)).abs() < 1e-6);
        assert_eq!(linear_to_srgb(f32::NAN), 0.0);
        assert_eq!(linear_to_srgb(7.0), 1.0);
        assert_eq!(linear_to_srgb(-1.0), 0.0);
    }

    #[test]
    fn non_finite_channels_count_as_full_difference() {
        assert_eq!(channel_diff(f32::NAN, 0.0), 1.0);
        assert_eq!(channel_diff(f32::INFINITY, f32::INFINITY), 0.0);
        assert_eq!(channel_diff(0.2, 0.2), 0.0);
    }

    #[test]
    fn from_pixels_checks_the_count() {
        assert!(Image::from_pixels(2, 2, vec![Vec3::ZERO; 3]).is_err());
        assert!(Image::from_pixels(2, 2, vec![Vec3::ZERO; 4]).is_ok());
    }
}
