//! Progressive density estimation (Hachisuka, Ogaki and Jensen 2008, on disks crossed by
//! photon flights): pass after pass of new photons, each disk's radius shrinks so that its
//! estimate's bias vanishes while its variance stays bounded.

use lumbre_gpu::{Error, Result};

use crate::estimate::Estimate;
use crate::problem::Disk;

/// The running estimate of every disk across passes.
///
/// With `N` the crossings kept so far, `M` this pass's crossings, `R` the radius the pass
/// gathered with and `tau` the flux so far (power summed as if every pass had traced one
/// photon per unit of emitted power, so passes of any size combine):
/// `N' = N + alpha M`, `R'^2 = R^2 N' / (N + M)`, `tau' = (tau + Phi) R'^2 / R^2`, and the
/// irradiance is `tau' / (pi R'^2 P)` after `P` photons in all.
///
/// ```
/// use glam::Vec3;
/// use lumbre_density::{Density, Disk, Problem, Progressive, Segment};
/// use lumbre_gpu::{Backend, Compute};
/// let disks = vec![Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 }];
/// let mut p = Progressive::new(&disks, 0.7)?;
/// for _pass in 0..3 {
///     // One photon of power 1 through the middle of the disk per pass.
///     let seg = Segment { start: Vec3::Y, end: Vec3::NEG_Y, power: [1.0; 3], bounce: 0 };
///     let problem = Problem { segments: vec![seg], disks: p.disks() };
///     let est = Density::default().run(&Backend::Cpu, &problem)?;
///     p.add_pass(&est, 1)?;
/// }
/// // Each pass kept 0.7 of its crossing: R^2 = 0.25 * 0.7 * (1.4 / 1.7) * (2.1 / 2.4).
/// let r2 = 0.25 * 0.7 * (1.4 / 1.7) * (2.1 / 2.4);
/// assert!((p.disks()[0].radius.powi(2) - r2).abs() < 1e-6);
/// assert_eq!(p.passes(), 3);
/// assert!(p.irradiance()[0][0] > 0.0);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Progressive {
    alpha: f64,
    disks: Vec<Disk>,
    kept: Vec<f64>,
    flux: Vec<[f64; 3]>,
    photons: u64,
    passes: u32,
}

impl Progressive {
    /// Starts from `disks` (their radii are the first pass's) with the fraction `alpha` of
    /// each pass's crossings kept (in `(0, 1]`; Hachisuka's 0.7; 1 never shrinks).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Progressive};
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 };
    /// assert!(Progressive::new(&[disk], 0.7).is_ok());
    /// assert!(Progressive::new(&[disk], 0.0).is_err());
    /// ```
    pub fn new(disks: &[Disk], alpha: f32) -> Result<Progressive> {
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(Error::Input(format!("progressive alpha must be in (0, 1], got {alpha}")));
        }
        Ok(Progressive {
            alpha: alpha as f64,
            disks: disks.to_vec(),
            kept: vec![0.0; disks.len()],
            flux: vec![[0.0; 3]; disks.len()],
            photons: 0,
            passes: 0,
        })
    }

    /// The disks with their current radii: what the next pass gathers with.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Progressive};
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 };
    /// assert_eq!(Progressive::new(&[disk], 0.7)?.disks(), vec![disk]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn disks(&self) -> Vec<Disk> {
        self.disks.clone()
    }

    /// Folds in a pass's estimate over [`Progressive::disks`], made from `photons` photons
    /// (whose powers sum to the emitted power: each carries `1 / photons` of it).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Estimate, Progressive};
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
    /// let mut p = Progressive::new(&[disk], 0.5)?;
    /// // Two crossings of 1/4 each from 4 photons: half kept, so R^2 halves.
    /// let pass = Estimate { count: vec![2], power: vec![[0.5; 3]], irradiance: vec![[0.0; 3]], scale_exp: 0 };
    /// p.add_pass(&pass, 4)?;
    /// assert!((p.disks()[0].radius.powi(2) - 0.5).abs() < 1e-6);
    /// assert!(p.add_pass(&Estimate::default(), 4).is_err()); // no sums for the disk
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn add_pass(&mut self, est: &Estimate, photons: u64) -> Result<()> {
        if est.count.len() != self.disks.len() || est.power.len() != self.disks.len() {
            return Err(Error::Input(format!(
                "a progressive pass has {} disks' sums, the estimate holds {} disks",
                est.count.len(),
                self.disks.len()
            )));
        }
        if photons == 0 {
            return Err(Error::Input("a progressive pass needs at least one photon".into()));
        }
        for (i, disk) in self.disks.iter_mut().enumerate() {
            let (n, m) = (self.kept[i], est.count[i] as f64);
            let phi = est.power[i].map(|p| p as f64 * photons as f64);
            // No crossing: the radius and what was kept stay.
            let shrink = if m > 0.0 { (n + self.alpha * m) / (n + m) } else { 1.0 };
            self.kept[i] = n + self.alpha * m;
            for (t, p) in self.flux[i].iter_mut().zip(phi) {
                *t = (*t + p) * shrink;
            }
            disk.radius = (disk.radius as f64 * shrink.sqrt()) as f32;
        }
        self.photons += photons;
        self.passes += 1;
        Ok(())
    }

    /// The irradiance of every disk after the passes so far (zero before the first).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Progressive};
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
    /// assert_eq!(Progressive::new(&[disk], 0.7)?.irradiance(), vec![[0.0; 3]]);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn irradiance(&self) -> Vec<[f32; 3]> {
        self.disks
            .iter()
            .zip(&self.flux)
            .map(|(d, t)| {
                let area = std::f64::consts::PI * (d.radius as f64).powi(2) * self.photons.max(1) as f64;
                t.map(|c| (c / area) as f32)
            })
            .collect()
    }

    /// Passes folded in.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_density::{Disk, Progressive};
    /// let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
    /// assert_eq!(Progressive::new(&[disk], 0.7)?.passes(), 0);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn passes(&self) -> u32 {
        self.passes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn est(count: u32, power: f32) -> Estimate {
        Estimate { count: vec![count], power: vec![[power; 3]], irradiance: vec![[0.0; 3]], scale_exp: 0 }
    }

    #[test]
    fn radius_and_flux_follow_hachisuka() {
        let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
        let mut p = Progressive::new(&[disk], 0.5).unwrap();
        // Pass 1: 4 crossings of 1/10 each from 10 photons: N = 2, R^2 = 2 / 4.
        p.add_pass(&est(4, 0.4), 10).unwrap();
        assert!((p.disks()[0].radius.powi(2) - 0.5).abs() < 1e-6);
        // tau = 4 * 0.5 = 2 in units of one photon's power; E = 2 / (pi 0.5 * 10).
        let e = 2.0 / (std::f32::consts::PI * 0.5 * 10.0);
        assert!((p.irradiance()[0][0] - e).abs() < 1e-6 * e);
        // Pass 2 with no crossing changes nothing but the photon count.
        p.add_pass(&est(0, 0.0), 10).unwrap();
        assert!((p.disks()[0].radius.powi(2) - 0.5).abs() < 1e-6);
        assert!((p.irradiance()[0][0] - e / 2.0).abs() < 1e-6 * e);
        assert_eq!(p.passes(), 2);
    }

    #[test]
    fn bad_alpha_and_mismatched_passes_are_errors() {
        let disk = Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 1.0 };
        for alpha in [0.0, -1.0, 1.5, f32::NAN] {
            assert!(Progressive::new(&[disk], alpha).is_err(), "{alpha}");
        }
        let mut p = Progressive::new(&[disk, disk], 0.7).unwrap();
        assert!(p.add_pass(&est(1, 1.0), 1).is_err());
        let mut q = Progressive::new(&[disk], 0.7).unwrap();
        assert!(q.add_pass(&est(1, 1.0), 0).is_err());
    }
}
