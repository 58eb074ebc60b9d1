//! A one-pass density run as parts that merge exactly: every part holds the disks (one per
//! pixel that sees the scene, the same in every part), the fixed-point sums of its photons'
//! crossings and of its direct-light samples. The image is composed from the sums the same
//! way for the run in one piece and for merged parts, so the two are the same bits.

use std::collections::BTreeMap;
use std::path::Path;

use glam::Vec3;
use lumbre_density::{DensitySums, Disk, DiskSums};
use lumbre_raytrace::{Image, SampleSums};

use crate::error::Result;
use crate::part::{Part, run_hash};
use crate::shard::Shard;

/// The merging form of a density run (or of one of its parts).
#[derive(Clone, Debug, PartialEq)]
pub struct DensityPart {
    /// Image width.
    pub width: u32,
    /// Image height.
    pub height: u32,
    /// Per pixel: its disk's radius, 0 where the pixel sees no surface.
    pub radius: Vec<f32>,
    /// Per pixel: `Kd` of its disk's material (the radiance is `Kd / pi` times the irradiance).
    pub kd: Vec<Vec3>,
    /// The disks' crossing counts and power sums.
    pub sums: DensitySums,
    /// The direct light's sample sums, if the image has direct light.
    pub direct: Option<SampleSums>,
    /// The image is the irradiance, not the radiance.
    pub irradiance: bool,
    /// The scene's emission unit the image is scaled by.
    pub unit: f32,
}

impl DensityPart {
    /// The image: per pixel, the direct light's mean plus the disk's irradiance, times
    /// `Kd / pi` unless the irradiance is wanted, all times the emission unit.
    pub fn compose(&self) -> Result<Image> {
        let disks: Vec<Disk> = self
            .radius
            .iter()
            .filter(|&&r| r > 0.0)
            .map(|&radius| Disk { centre: Vec3::ZERO, normal: Vec3::Z, radius })
            .collect();
        let irradiance = self.sums.irradiance(&disks)?;
        let direct = self.direct.as_ref().map(|d| d.mean()).transpose()?;
        let mut image = Image::new(self.width, self.height);
        let mut disk = 0;
        for (pixel, &r) in self.radius.iter().enumerate() {
            let (x, y) = (pixel as u32 % self.width, pixel as u32 / self.width);
            let mut value = direct.as_ref().map_or(Vec3::ZERO, |img| img.get(x, y));
            if r > 0.0 {
                let e = Vec3::from(irradiance[disk]);
                disk += 1;
                value += if self.irradiance { e } else { self.kd[pixel] / std::f32::consts::PI * e };
            }
            image.set(x, y, value * self.unit);
        }
        Ok(image)
    }

    /// Adds another part of the same run: the disks must be the same.
    pub fn merge(&mut self, other: &DensityPart) -> Result<()> {
        let same = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
        if (self.width, self.height, self.irradiance, self.unit.to_bits())
            != (other.width, other.height, other.irradiance, other.unit.to_bits())
            || !same(&self.radius, &other.radius)
            || self.kd != other.kd
        {
            return Err("the parts' disks differ: not parts of one run".to_string().into());
        }
        self.sums.merge(&other.sums)?;
        match (&mut self.direct, &other.direct) {
            (Some(a), Some(b)) => a.merge(b)?,
            (None, None) => {}
            _ => return Err("one part has direct light and another not".to_string().into()),
        }
        Ok(())
    }

    /// The part file of shard `shard` of the run `description` (`spp`: the run's direct-light
    /// samples per pixel).
    pub fn to_part(&self, shard: Shard, description: &str, spp: u32) -> Part {
        let mut fields = BTreeMap::new();
        let d = self.direct.as_ref();
        for (k, v) in [
            ("width", self.width.to_string()),
            ("height", self.height.to_string()),
            ("photons", self.sums.photons.to_string()),
            ("traced", self.sums.traced.to_string()),
            ("scale_exp", self.sums.scale_exp.to_string()),
            ("disks", self.sums.disks.len().to_string()),
            ("irradiance", (self.irradiance as u32).to_string()),
            ("unit", format!("{:08x}", self.unit.to_bits())),
            ("spp", spp.to_string()),
            ("direct", (d.is_some() as u32).to_string()),
            ("first_sample", d.map_or(0, |d| d.first_sample).to_string()),
            ("samples", d.map_or(0, |d| d.samples).to_string()),
            ("scale_log2", d.map_or(0, |d| d.scale_log2).to_string()),
        ] {
            fields.insert(k.to_string(), v);
        }
        let bits = |a: f32, b: f32| (a.to_bits() as u64) << 32 | b.to_bits() as u64;
        let mut data: Vec<u64> = Vec::new();
        for (r, kd) in self.radius.iter().zip(&self.kd) {
            data.extend([bits(*r, kd.x), bits(kd.y, kd.z)]);
        }
        for s in &self.sums.disks {
            data.extend([s.count as u64, s.power[0], s.power[1], s.power[2]]);
        }
        if let Some(d) = d {
            data.extend(d.sums.iter().flatten());
        }
        Part { kind: "density".into(), run: run_hash(description.as_bytes()), shard, fields, data }
    }

    /// The part a file holds; an error naming the file if its values do not fit its fields.
    pub fn from_part(path: &Path, part: &Part) -> Result<DensityPart> {
        let (width, height): (u32, u32) = (part.field(path, "width")?, part.field(path, "height")?);
        let disks: u64 = part.field(path, "disks")?;
        let direct = part.field::<u32>(path, "direct")? == 1;
        let pixels = width as u64 * height as u64;
        // Checked before anything is allocated (u128: no count in a file can overflow it).
        let want = 2 * pixels as u128 + 4 * disks as u128 + if direct { 3 * pixels as u128 } else { 0 };
        if part.data.len() as u128 != want {
            return Err(format!(
                "{}: {} values for {width}x{height} pixels and {disks} disks (expected {want})",
                path.display(),
                part.data.len()
            )
            .into());
        }
        let unit_text: String = part.field(path, "unit")?;
        let unit = u32::from_str_radix(&unit_text, 16)
            .map(f32::from_bits)
            .map_err(|_| format!("{}: unit {unit_text}: not f32 bits in hex", path.display()))?;
        let (geometry, rest) = part.data.split_at(2 * pixels as usize);
        let (sums, direct_sums) = rest.split_at(4 * disks as usize);
        let hi = |w: u64| f32::from_bits((w >> 32) as u32);
        let lo = |w: u64| f32::from_bits(w as u32);
        let radius: Vec<f32> = geometry.chunks_exact(2).map(|g| hi(g[0])).collect();
        if radius.iter().filter(|&&r| r > 0.0).count() as u64 != disks {
            return Err(format!("{}: the pixels' disks do not number {disks}", path.display()).into());
        }
        let sums = DensitySums {
            photons: part.field(path, "photons")?,
            traced: part.field(path, "traced")?,
            scale_exp: part.field(path, "scale_exp")?,
            disks: sums.chunks_exact(4).map(|s| DiskSums { count: s[0] as u32, power: [s[1], s[2], s[3]] }).collect(),
        };
        let direct = direct.then(|| -> Result<SampleSums> {
            let mut d =
                SampleSums::new(width, height, part.field(path, "first_sample")?, part.field(path, "scale_log2")?);
            d.samples = part.field(path, "samples")?;
            for (s, v) in d.sums.iter_mut().zip(direct_sums.chunks_exact(3)) {
                *s = [v[0], v[1], v[2]];
            }
            Ok(d)
        });
        Ok(DensityPart {
            width,
            height,
            kd: geometry.chunks_exact(2).map(|g| Vec3::new(lo(g[0]), hi(g[1]), lo(g[1]))).collect(),
            radius,
            sums,
            direct: direct.transpose()?,
            irradiance: part.field::<u32>(path, "irradiance")? == 1,
            unit,
        })
    }
}
