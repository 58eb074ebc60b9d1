//! Linear RGB images: PNG and EXR files and sRGB conversion (comparisons are in `metrics`).

use std::io::Cursor;
use std::path::Path;

use ::image::{DynamicImage, ImageBuffer, ImageFormat, ImageReader, Rgb, RgbImage};
use glam::Vec3;
use rayon::prelude::*;

use crate::error::LoadError;
use crate::write::write_file;

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
        Ok(Self::from_rgb32f(decode(path, ImageFormat::OpenExr)?))
    }

    /// Decodes an OpenEXR file held in memory (an image bundled in a program); `name` stands
    /// for its path in errors.
    ///
    /// ```
    /// use lumbre_raytrace::Image;
    /// let path = std::env::temp_dir().join(format!("lumbre-exr-doc-{}.exr", std::process::id()));
    /// let mut img = Image::new(2, 1);
    /// img.set(1, 0, glam::Vec3::new(2.5, 0.0, 1.0));
    /// img.save_exr(&path).unwrap();
    /// let back = Image::exr_from_bytes("bundled.exr".as_ref(), &std::fs::read(&path).unwrap()).unwrap();
    /// assert_eq!(back, img);
    /// # std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn exr_from_bytes(name: &Path, bytes: &[u8]) -> Result<Image, LoadError> {
        let img = ::image::load_from_memory_with_format(bytes, ImageFormat::OpenExr)
            .map_err(|e| LoadError::new(name, format!("cannot decode OpenExr: {e}")))?;
        Ok(Self::from_rgb32f(img))
    }

    fn from_rgb32f(img: DynamicImage) -> Image {
        let rgb = img.to_rgb32f();
        let pixels = rgb.pixels().map(|p| Vec3::from(p.0)).collect();
        Image { width: rgb.width(), height: rgb.height(), pixels }
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
    crate::read::check_input(path)?;
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

fn encode(image: DynamicImage, format: ImageFormat, path: &Path) -> Result<Vec<u8>, LoadError> {
    let mut bytes = Cursor::new(Vec::new());
    image.write_to(&mut bytes, format).map_err(|e| LoadError::new(path, format!("cannot encode {format:?}: {e}")))?;
    Ok(bytes.into_inner())
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
    fn from_pixels_checks_the_count() {
        assert!(Image::from_pixels(2, 2, vec![Vec3::ZERO; 3]).is_err());
        assert!(Image::from_pixels(2, 2, vec![Vec3::ZERO; 4]).is_ok());
    }
}
