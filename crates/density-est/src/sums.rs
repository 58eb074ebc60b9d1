//! The raw result of a one-pass density estimate: per disk, the crossings and the
//! fixed-point power sums. Integer sums add exactly, so the sums of the parts of a run
//! (photon ranges traced apart, [`PhotonOptions::range`](crate::PhotonOptions::range))
//! merge into the bits of the whole run, and from those its irradiance.

use lumbre_gpu::{Error, Result};

use crate::estimate::Estimate;
use crate::fixed::Acc;
use crate::problem::{Disk, DiskData};

/// One disk's raw result: the flights crossing it and the sum of their power, per channel,
/// in units of `2^-scale_exp` of its [`DensitySums`].
///
/// ```
/// let d = lumbre_density::DiskSums { count: 2, power: [3 << 30, 1 << 30, 0] };
/// assert_eq!(d.power[0] >> 30, 3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiskSums {
    /// Flights crossing the disk.
    pub count: u32,
    /// Their summed power (RGB), in units of `2^-scale_exp`.
    pub power: [u64; 3],
}

impl From<Acc> for DiskSums {
    fn from(a: Acc) -> DiskSums {
        DiskSums { count: a.count, power: a.power }
    }
}

impl From<DiskSums> for Acc {
    fn from(d: DiskSums) -> Acc {
        Acc { count: d.count, power: d.power }
    }
}

/// The raw result of a one-pass [`CameraDensity`](crate::CameraDensity) run or of a part of
/// one ([`CameraEstimate::sums`](crate::CameraEstimate::sums)): per disk, [`DiskSums`] in
/// units of `2^-scale_exp`, an exponent that depends on the scene and the run's photon count
/// only, so every part of a run has the same. The parts' sums [`merge`](DensitySums::merge)
/// into the bits of the one-piece run, and [`CameraEstimate::from_sums`](crate::CameraEstimate::from_sums)
/// turns them into its irradiance.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::{DensitySums, Disk, DiskSums};
/// let part = |count, power| DensitySums {
///     photons: 100,
///     traced: 50,
///     scale_exp: 30,
///     disks: vec![DiskSums { count, power: [power; 3] }],
/// };
/// let mut sums = part(1, 1 << 29);
/// sums.merge(&part(2, 1 << 30))?;
/// assert_eq!((sums.traced, sums.disks[0]), (100, DiskSums { count: 3, power: [3 << 29; 3] }));
/// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
/// let e = sums.irradiance(&[disk])?;
/// assert_eq!(e[0][0], 1.5 / std::f32::consts::PI);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DensitySums {
    /// Photons of the whole run (each carries `1 / photons` of the emitted power).
    pub photons: u32,
    /// Photons whose flights the sums hold (the parts' add up to `photons`).
    pub traced: u32,
    /// The sums are in units of `2^-scale_exp`.
    pub scale_exp: i32,
    /// Per disk, in the order of the run's disks.
    pub disks: Vec<DiskSums>,
}

impl DensitySums {
    /// Adds the sums of another part of the same run: an error, naming what differs, unless
    /// both have as many disks, the same exponent and the same run's photon count, or when
    /// together they would hold more photons than the run (or a count past `u32::MAX`).
    /// Integer addition: any split of a run's photons merges to the same bits.
    ///
    /// ```
    /// use lumbre_density::{DensitySums, DiskSums};
    /// let a = DensitySums { photons: 10, traced: 5, scale_exp: 20, disks: vec![DiskSums::default(); 2] };
    /// let mut b = a.clone();
    /// assert!(b.merge(&DensitySums { scale_exp: 21, ..a.clone() }).unwrap_err().to_string().contains("2^-21"));
    /// assert!(b.merge(&DensitySums { disks: vec![], ..a.clone() }).is_err());
    /// b.merge(&a)?;
    /// assert_eq!(b.traced, 10);
    /// assert!(b.merge(&a).is_err()); // 15 of 10 photons
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn merge(&mut self, other: &DensitySums) -> Result<()> {
        if other.disks.len() != self.disks.len() {
            return Err(Error::Input(format!(
                "density sums of {} disks cannot take sums of {} disks: not parts of the same run",
                self.disks.len(),
                other.disks.len()
            )));
        }
        if other.scale_exp != self.scale_exp {
            return Err(Error::Input(format!(
                "density sums in units of 2^-{} cannot take sums in units of 2^-{}: not parts of the same run",
                self.scale_exp, other.scale_exp
            )));
        }
        if other.photons != self.photons {
            return Err(Error::Input(format!(
                "density sums of a run of {} photons cannot take sums of a run of {} photons",
                self.photons, other.photons
            )));
        }
        let traced = self.traced.checked_add(other.traced).filter(|&t| t <= self.photons).ok_or_else(|| {
            Error::Input(format!(
                "density sums of {} and {} photons hold more than the run's {}: a part was merged twice",
                self.traced, other.traced, self.photons
            ))
        })?;
        let mut merged = self.disks.clone();
        for (i, (s, o)) in merged.iter_mut().zip(&other.disks).enumerate() {
            let overflow = || Error::Input(format!("disk {i}: its merged sums pass 2^64 (or its count 2^32)"));
            s.count = s.count.checked_add(o.count).ok_or_else(overflow)?;
            for (a, b) in s.power.iter_mut().zip(o.power) {
                *a = a.checked_add(b).ok_or_else(overflow)?;
            }
        }
        self.disks = merged;
        self.traced = traced;
        Ok(())
    }

    /// The estimate of `disks` (the run's, in its order) from the sums: counts, power (each
    /// sum times `2^-scale_exp` in f64, rounded once to f32) and irradiance (that power over
    /// the disk's area `pi r^2`, in f32): the same operations, so the same bits, as the
    /// one-piece run. An error unless there are as many disks as sums.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{DensitySums, Disk, DiskSums};
    /// let sums = DensitySums { photons: 1, traced: 1, scale_exp: 2, disks: vec![DiskSums { count: 1, power: [6, 4, 0] }] };
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 };
    /// let est = sums.estimate(&[disk])?;
    /// assert_eq!((est.count[0], est.power[0], est.scale_exp), (1, [1.5, 1.0, 0.0], 2));
    /// assert!(sums.estimate(&[]).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn estimate(&self, disks: &[Disk]) -> Result<Estimate> {
        if disks.len() != self.disks.len() {
            return Err(Error::Input(format!(
                "{} disks for density sums of {} disks: not the run's disks",
                disks.len(),
                self.disks.len()
            )));
        }
        let accs: Vec<Acc> = self.disks.iter().map(|&d| d.into()).collect();
        let radii: Vec<DiskData> = disks.iter().map(|d| DiskData { radius: d.radius, ..Default::default() }).collect();
        Ok(Estimate::from_accs(&accs, &radii, self.scale_exp))
    }

    /// The irradiance of every disk: [`estimate`](DensitySums::estimate)'s (see the type's
    /// example).
    pub fn irradiance(&self, disks: &[Disk]) -> Result<Vec<[f32; 3]>> {
        self.estimate(disks).map(|e| e.irradiance)
    }

    /// The sums of the flights of every disk, from the run's per-disk accumulators.
    pub(crate) fn from_accs(photons: u32, traced: u32, scale_exp: i32, accs: &[Acc]) -> DensitySums {
        DensitySums { photons, traced, scale_exp, disks: accs.iter().map(|&a| a.into()).collect() }
    }
}
