//! Per-pixel sums of a path render's samples in 64-bit fixed point. Every sample is rounded
//! to a multiple of `2^-scale_log2` and added as an integer, so sums do not depend on how the
//! samples were grouped: batches, devices and shards of a render add up to the bits of one
//! render of all its samples. `raytrace/path.wgsl` quantizes and adds the same way.

use glam::{DVec3, Vec3};

use crate::image::Image;
use crate::scene::{Light, Scene};

/// Per-pixel sums of samples `[first_sample, first_sample + samples)` of a path render.
///
/// ```
/// use glam::Vec3;
/// use lumbre_raytrace::SampleSums;
/// let mut a = SampleSums::new(1, 1, 0, 20);
/// a.add_sample(0, Vec3::new(0.25, 0.5, 1.0));
/// let mut b = SampleSums::new(1, 1, 1, 20);
/// b.add_sample(0, Vec3::new(0.75, 0.5, 0.0));
/// a.samples = 1;
/// b.samples = 1;
/// a.merge(&b)?;
/// assert_eq!(a.samples, 2);
/// assert_eq!(a.mean()?.pixels[0], Vec3::new(0.5, 0.5, 0.5));
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleSums {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Index of the first sample the sums hold.
    pub first_sample: u32,
    /// Samples per pixel the sums hold.
    pub samples: u32,
    /// Samples are added in units of `2^-scale_log2` ([`SampleSums::scale_log2_for`]).
    pub scale_log2: i32,
    /// Per pixel, row-major: the red, green and blue sums (`u64::MAX`: saturated).
    pub sums: Vec<[u64; 3]>,
}

/// Bits of headroom above the brightest emitter: a pixel's sum saturates only past
/// `2^32` times its radiance, e.g. 256 times the brightest emitter at 2^24 samples.
const HEADROOM_BITS: i32 = 32;

impl SampleSums {
    /// Empty sums (no samples yet) of a `width` x `height` image.
    ///
    /// ```
    /// let s = lumbre_raytrace::SampleSums::new(4, 2, 0, 32);
    /// assert_eq!(s.sums.len(), 8);
    /// ```
    pub fn new(width: u32, height: u32, first_sample: u32, scale_log2: i32) -> SampleSums {
        let n = width as usize * height as usize;
        SampleSums { width, height, first_sample, samples: 0, scale_log2, sums: vec![[0; 3]; n] }
    }

    /// The unit exponent for a scene: the brightest emitter, point light ([`brightest`](SampleSums::brightest)) or the background
    /// is below `2^e`, and samples are kept in units of `2^(e - 32)`, so a sample of the
    /// brightest radiance keeps 32 bits and a pixel's sum has 32 bits of headroom.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{SampleSums, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    /// // The light's Ke is (17, 12, 4): below 2^5.
    /// assert_eq!(SampleSums::scale_log2_for(&scene, Vec3::ZERO), 32 - 5);
    /// ```
    pub fn scale_log2_for(scene: &Scene, background: Vec3) -> i32 {
        Self::scale_log2_below(Self::brightest(scene).max(background.max_element()))
    }

    /// The largest channel of any emitter's `Ke` or area light's emission of `scene`, and of
    /// any point light's intensity times `1 / (pi D^2)` (the radiance it gives a white
    /// surface facing it at the distance `D` of the scene's diagonal: the default light of a
    /// scene of any size gives a reference of order 1); 0 without any.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_raytrace::{Camera, SampleSums, Scene, add_default_light};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Original.obj");
    /// let (scene, _) = Scene::load_obj(path.as_ref()).unwrap();
    /// assert_eq!(SampleSums::brightest(&scene), 17.0);
    /// // A scene a million units across lit by the default light: a reference of order 1.
    /// let mut big = Scene::from_triangles(&[[Vec3::ZERO, Vec3::X * 1e6, Vec3::Y * 1e6]]);
    /// let camera = Camera::frame(big.bounds, 1.0);
    /// add_default_light(&mut big, &camera);
    /// assert!((0.01..100.0).contains(&SampleSums::brightest(&big)));
    /// ```
    pub fn brightest(scene: &Scene) -> f32 {
        let weight = crate::whitted::point_light_weight(scene.bounds.0, scene.bounds.1);
        let ke = scene.materials.iter().map(|m| m.ke.max_element());
        let lights = scene.lights.iter().map(|l| match l {
            Light::Point { intensity, .. } => intensity.max_element() * weight,
            Light::Area { emission, .. } => emission.max_element(),
        });
        ke.chain(lights).filter(|k| k.is_finite()).fold(0.0f32, f32::max)
    }

    /// The unit exponent for radiance below `max` ([`scale_log2_for`](SampleSums::scale_log2_for)).
    ///
    /// ```
    /// assert_eq!(lumbre_raytrace::SampleSums::scale_log2_below(1.0), 32);
    /// assert_eq!(lumbre_raytrace::SampleSums::scale_log2_below(1.5), 31);
    /// ```
    pub fn scale_log2_below(max: f32) -> i32 {
        if !(max > 0.0 && max.is_finite()) {
            return HEADROOM_BITS;
        }
        // 2^scale_log2 stays a normal f32, so that scaling a sample by it is exact.
        (HEADROOM_BITS - f64::from(max).log2().ceil() as i32).clamp(-100, 126)
    }

    /// One sample in units of `2^-scale_log2`, rounded to the nearest (as `floor(x + 0.5)`
    /// in f32 below 2^23, where `x` is the scaled value; above, `x` is an integer already);
    /// `u64::MAX` for a value at or past `2^64` units, 0 for a negative or NaN one. Scaling by
    /// a power of two is exact in f32, so the GPU's split of the scaled value into two words
    /// gives the same integer. Rounding, not truncation, keeps the sums unbiased.
    ///
    /// ```
    /// use lumbre_raytrace::SampleSums;
    /// assert_eq!(SampleSums::quantize(1.75, 2), 7);
    /// assert_eq!(SampleSums::quantize(1.6, 0), 2);
    /// assert_eq!(SampleSums::quantize(f32::NAN, 2), 0);
    /// assert_eq!(SampleSums::quantize(1e30, 2), u64::MAX);
    /// ```
    pub fn quantize(v: f32, scale_log2: i32) -> u64 {
        let x = v * 2f32.powi(scale_log2);
        if x.is_nan() || x <= 0.0 {
            0
        } else if x >= 18446744073709551616.0 {
            u64::MAX
        } else if x < 8388608.0 {
            (x + 0.5).floor() as u64
        } else {
            x as u64
        }
    }

    /// Adds one sample's radiance to `pixel`'s sums (saturating); does not count samples.
    pub fn add_sample(&mut self, pixel: usize, radiance: Vec3) {
        add_quantized(&mut self.sums[pixel], radiance, self.scale_log2);
    }

    /// Adds the sums of other samples of the same render: `other` must be of the same size
    /// and unit. Addition is exact, so any grouping of a render's samples sums to the same
    /// bits; the caller keeps the parts' samples disjoint (`first_sample` becomes the lower).
    pub fn merge(&mut self, other: &SampleSums) -> Result<(), String> {
        if (other.width, other.height, other.scale_log2) != (self.width, self.height, self.scale_log2) {
            return Err(format!(
                "sums of {}x{} pixels in units of 2^-{} cannot take sums of {}x{} in units of 2^-{}",
                self.width, self.height, self.scale_log2, other.width, other.height, other.scale_log2
            ));
        }
        if other.samples == 0 {
            return Ok(());
        }
        self.first_sample =
            if self.samples == 0 { other.first_sample } else { self.first_sample.min(other.first_sample) };
        self.samples = self.samples.checked_add(other.samples).ok_or("more than 2^32 samples per pixel")?;
        for (s, o) in self.sums.iter_mut().zip(&other.sums) {
            for c in 0..3 {
                s[c] = s[c].saturating_add(o[c]);
            }
        }
        Ok(())
    }

    /// Pixels with a saturated channel.
    pub fn saturated(&self) -> usize {
        self.sums.iter().filter(|s| s.contains(&u64::MAX)).count()
    }

    /// The mean of the samples: each sum times `2^-scale_log2 / samples` in f64, rounded once
    /// to f32. An error for sums of no samples.
    pub fn mean(&self) -> Result<Image, String> {
        if self.samples == 0 {
            return Err("the mean of no samples".into());
        }
        let unit = (-f64::from(self.scale_log2)).exp2() / f64::from(self.samples);
        let pixels = self.sums.iter().map(|s| (DVec3::new(s[0] as f64, s[1] as f64, s[2] as f64) * unit).as_vec3());
        Image::from_pixels(self.width, self.height, pixels.collect())
    }

    /// The sums as the GPU keeps them: six planes of one word a pixel, the low and high words
    /// of red, then of green, then of blue (a warp's accesses to one word are contiguous).
    ///
    /// ```
    /// let mut s = lumbre_raytrace::SampleSums::new(2, 1, 0, 0);
    /// s.sums[1] = [1 << 32 | 5, 0, 7];
    /// assert_eq!(s.to_planes(), [0, 5, 0, 1, 0, 0, 0, 0, 0, 7, 0, 0]);
    /// ```
    pub fn to_planes(&self) -> Vec<u32> {
        (0..6).flat_map(|w| self.sums.iter().map(move |s| (s[w / 2] >> (32 * (w % 2))) as u32)).collect()
    }

    /// The inverse of [`SampleSums::to_planes`]: the sums from the GPU's six planes.
    pub fn set_planes(&mut self, planes: &[u32]) {
        let n = self.sums.len();
        for (p, s) in self.sums.iter_mut().enumerate() {
            *s = std::array::from_fn(|c| planes[2 * c * n + p] as u64 | (planes[(2 * c + 1) * n + p] as u64) << 32);
        }
    }
}

/// Adds one sample's radiance, quantized, to a pixel's sums (saturating).
pub(crate) fn add_quantized(sums: &mut [u64; 3], radiance: Vec3, scale_log2: i32) {
    for (s, v) in sums.iter_mut().zip(radiance.to_array()) {
        *s = s.saturating_add(SampleSums::quantize(v, scale_log2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_truncates_saturates_and_splits_into_words() {
        assert_eq!(SampleSums::quantize(0.999, 0), 1);
        assert_eq!(SampleSums::quantize(0.499, 0), 0);
        assert_eq!(SampleSums::quantize(3.5, 1), 7);
        assert_eq!(SampleSums::quantize(-1.0, 4), 0);
        assert_eq!(SampleSums::quantize(f32::INFINITY, 4), u64::MAX);
        assert_eq!(SampleSums::quantize(2f32.powi(63), 0), 1 << 63);
        let mut s = SampleSums::new(2, 1, 0, 40);
        s.add_sample(1, Vec3::new(1e6, 1.0, 0.5));
        let mut back = SampleSums::new(2, 1, 0, 40);
        back.set_planes(&s.to_planes());
        assert_eq!(back, s);
        assert_eq!(s.sums[1], [SampleSums::quantize(1e6, 40), 1 << 40, 1 << 39]);
    }

    #[test]
    fn sums_saturate_and_refuse_mismatched_parts() {
        let mut s = SampleSums::new(1, 1, 0, 60);
        s.add_sample(0, Vec3::splat(10.0));
        s.add_sample(0, Vec3::splat(10.0));
        assert_eq!(s.saturated(), 1);
        let mut a = SampleSums::new(1, 1, 4, 8);
        a.samples = 2;
        let mut b = SampleSums::new(1, 1, 1, 8);
        b.samples = 1;
        a.merge(&b).unwrap();
        assert_eq!((a.first_sample, a.samples), (1, 3));
        assert!(a.merge(&SampleSums::new(2, 1, 3, 8)).is_err());
        assert!(SampleSums::new(1, 1, 0, 8).mean().is_err());
    }
}
