//! Point clouds for the volumetric engine: the thesis's text format, PLY, and image slice stacks.

mod ply;
mod slices;

use std::path::Path;

pub(crate) use slices::{Ellipsoid, SHEPP_LOGAN_3D, phantom_value};
pub use slices::{load_slice_dir, load_slices, shepp_logan_phantom, write_slices};

use crate::error::LoadError;
use crate::obj::text_lines;

/// A coloured point cloud; the four arrays have the same length (one entry per point).
///
/// ```
/// use lumbre_raytrace::PointCloud;
/// let mut cloud = PointCloud::default();
/// cloud.push([0.0, 1.0, 2.0], [1.0, 0.0, 0.0], 0.5, 0.0);
/// assert_eq!(cloud.len(), 1);
/// assert_eq!(cloud.bounds(), Some(([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointCloud {
    /// Positions (finite).
    pub positions: Vec<[f32; 3]>,
    /// RGB colours in `[0, 1]`.
    pub colors: Vec<[f32; 3]>,
    /// Reflection coefficient of each point.
    pub reflection: Vec<f32>,
    /// Refraction coefficient of each point.
    pub refraction: Vec<f32>,
}

impl PointCloud {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the cloud has no points.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Appends a point.
    pub fn push(&mut self, position: [f32; 3], color: [f32; 3], reflection: f32, refraction: f32) {
        self.positions.push(position);
        self.colors.push(color);
        self.reflection.push(reflection);
        self.refraction.push(refraction);
    }

    /// `(min, max)` corners of the positions, or `None` when empty.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let first = *self.positions.first()?;
        Some(self.positions.iter().fold((first, first), |(lo, hi), p| {
            ([0, 1, 2].map(|i| lo[i].min(p[i])), [0, 1, 2].map(|i| hi[i].max(p[i])))
        }))
    }

    /// An error when the four arrays do not have the same length.
    pub fn check(&self) -> Result<(), String> {
        let n = self.positions.len();
        if self.colors.len() != n || self.reflection.len() != n || self.refraction.len() != n {
            return Err(format!(
                "point cloud arrays differ in length: {} positions, {} colours, {} reflection, {} refraction",
                n,
                self.colors.len(),
                self.reflection.len(),
                self.refraction.len()
            ));
        }
        Ok(())
    }

    /// Loads the volumetric engine's text format (see [`PointCloud::save_text`] for writing):
    ///
    /// ```text
    /// # comment
    /// x y z r g b reflection refraction
    /// ```
    ///
    /// One point per line, whitespace-separated; blank lines and lines starting with `#` are
    /// skipped. Colours are 0..1 or 0..255: when any colour component in the file is greater
    /// than 1, all colours are divided by 255. Colours outside `[0, 1]` after that, and
    /// reflection or refraction coefficients outside `[0, 1]`, are clamped (a warning with the
    /// count and the first line). A line with the wrong number of fields or a malformed number
    /// is an error naming its line; a point with any NaN or infinite value is dropped and
    /// counted. A file with no points gives an empty cloud and a warning (not an error).
    ///
    /// ```
    /// use lumbre_raytrace::PointCloud;
    /// let dir = std::env::temp_dir().join(format!("lumbre-doc-text-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("cloud.txt");
    /// std::fs::write(&path, "# a red point\n0 0 0 255 0 0 0.5 0\n1 2 3 0 0 255 0 0.3\n").unwrap();
    /// let (cloud, report) = PointCloud::load_text(&path).unwrap();
    /// assert_eq!(cloud.colors, vec![[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]);
    /// assert_eq!(report.points, 2);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn load_text(path: &Path) -> Result<(PointCloud, PointReport), LoadError> {
        const FIELDS: [&str; 8] = ["x", "y", "z", "r", "g", "b", "reflection", "refraction"];
        let bytes = crate::read::read_input(path)?;
        let mut rows: Vec<([f32; 8], usize)> = Vec::new();
        let mut report = PointReport::default();
        for item in text_lines(path, &bytes) {
            let (ln, line) = item?;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let toks: Vec<&str> = line.split_whitespace().collect();
            if toks.len() != 8 {
                return Err(LoadError::at_line(
                    path,
                    ln,
                    format!("expected 8 values (x y z r g b reflection refraction), found {}", toks.len()),
                ));
            }
            let mut row = [0.0f32; 8];
            for (k, tok) in toks.iter().enumerate() {
                row[k] = tok.parse().map_err(|_| {
                    LoadError::at_line(path, ln, format!("malformed number \"{tok}\" for {}", FIELDS[k]))
                })?;
            }
            if row.iter().all(|v| v.is_finite()) {
                rows.push((row, ln));
            } else {
                report.dropped_non_finite += 1;
            }
        }
        let divisor = if rows.iter().any(|(r, _)| r[3..6].iter().any(|&c| c > 1.0)) { 255.0 } else { 1.0 };
        let mut cloud = PointCloud::default();
        let mut clamped = Clamped::default();
        for (r, ln) in rows {
            let color = clamped.colour([r[3] / divisor, r[4] / divisor, r[5] / divisor], ln);
            let [reflection, refraction] = clamped.coefficients([r[6], r[7]], ln);
            cloud.push([r[0], r[1], r[2]], color, reflection, refraction);
        }
        if divisor != 1.0 {
            report.warnings.push("colours read as 0..255 (a component is greater than 1)".into());
        }
        clamped.warn(&mut report, "line");
        report.finish(&cloud);
        Ok((cloud, report))
    }

    /// Writes the text format of [`PointCloud::load_text`]: a comment line, then one line per
    /// point with colours in 0..1. Numbers are written in the shortest form that reads back to
    /// the same f32, so a save/load round trip is exact (as long as no colour is above 1).
    pub fn save_text(&self, path: &Path) -> Result<(), LoadError> {
        self.check().map_err(|e| LoadError::new(path, e))?;
        crate::write::write_with(path, |w| {
            writeln!(w, "# x y z r g b reflection refraction (colours 0..1), {} points", self.len())?;
            for i in 0..self.len() {
                let (p, c) = (self.positions[i], self.colors[i]);
                writeln!(
                    w,
                    "{} {} {} {} {} {} {} {}",
                    p[0], p[1], p[2], c[0], c[1], c[2], self.reflection[i], self.refraction[i]
                )?;
            }
            Ok(())
        })
    }

    /// Loads a PLY point cloud: `format ascii 1.0` or `format binary_little_endian 1.0`.
    ///
    /// The `vertex` element must have scalar `x`, `y` and `z` properties of any numeric type
    /// (float or double usually). Optional `red`, `green`, `blue` (or `diffuse_*`) give the
    /// colour: 8-bit (and 32-bit) integers are 0..255, 16-bit integers 0..65535, floats 0..1;
    /// without them points are white. Optional `reflection` and `refraction` properties (which
    /// [`PointCloud::save_ply_ascii`] writes) fill those arrays, else 0. Colours and
    /// coefficients outside `[0, 1]` are clamped (a warning with the count and the first line
    /// or vertex). Other properties, list properties and other elements (faces, edges, ...)
    /// are read past and ignored. Counts in the header are not trusted for allocation: a
    /// header claiming more vertices than the file holds is an error (truncated), never a
    /// huge allocation.
    ///
    /// Errors name the file and, for header and ascii data problems, the line: a missing `ply`
    /// magic (including an empty file), `binary_big_endian`, an unknown format, type or keyword, no
    /// `vertex` element or no x/y/z, malformed numbers, too few or too many values on an ascii
    /// line, and data that ends before the header's counts (truncated). A point with a NaN or
    /// infinite value is dropped and counted; `element vertex 0` gives an empty cloud and a warning.
    pub fn load_ply(path: &Path) -> Result<(PointCloud, PointReport), LoadError> {
        ply::load(path)
    }

    /// Writes an ascii PLY: float `x y z`, uchar `red green blue` (colours clamped to `[0, 1]` and
    /// rounded to 8 bits, the convention PLY viewers read), float `reflection refraction`.
    /// Positions and coefficients read back exactly; colours to within 0.5 / 255.
    ///
    /// ```
    /// use lumbre_raytrace::PointCloud;
    /// let mut cloud = PointCloud::default();
    /// cloud.push([0.5, -1.0, 2.0], [1.0, 0.0, 0.2], 0.1, 1.5);
    /// let path = std::env::temp_dir().join(format!("lumbre-doc-{}.ply", std::process::id()));
    /// cloud.save_ply_ascii(&path).unwrap();
    /// let (back, _) = PointCloud::load_ply(&path).unwrap();
    /// assert_eq!(back.positions, cloud.positions);
    /// assert!((back.colors[0][2] - 0.2).abs() <= 0.5 / 255.0);
    /// std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn save_ply_ascii(&self, path: &Path) -> Result<(), LoadError> {
        ply::save_ascii(self, path)
    }

    /// Writes a binary little-endian PLY with the properties of [`PointCloud::save_ply_ascii`]
    /// (23 bytes per point), with the same round-trip guarantees.
    pub fn save_ply_binary(&self, path: &Path) -> Result<(), LoadError> {
        ply::save_binary(self, path)
    }
}

/// Points whose colour or coefficients were outside `[0, 1]` and clamped: counts and the
/// first place (a line, or an element index in binary files).
#[derive(Default)]
pub(crate) struct Clamped {
    colours: (usize, usize),
    coefficients: (usize, usize),
}

impl Clamped {
    /// `c` clamped to `[0, 1]`, counted when it was outside.
    pub(crate) fn colour(&mut self, c: [f32; 3], at: usize) -> [f32; 3] {
        Self::clamp(c, at, &mut self.colours)
    }

    /// Reflection and refraction clamped to `[0, 1]`, counted when outside.
    pub(crate) fn coefficients(&mut self, c: [f32; 2], at: usize) -> [f32; 2] {
        Self::clamp(c, at, &mut self.coefficients)
    }

    fn clamp<const N: usize>(c: [f32; N], at: usize, count: &mut (usize, usize)) -> [f32; N] {
        let clamped = c.map(|x| x.clamp(0.0, 1.0));
        if clamped != c {
            if count.0 == 0 {
                count.1 = at;
            }
            count.0 += 1;
        }
        clamped
    }

    /// Adds the warnings; `place` names what `at` counts (`"line"`, `"vertex"`).
    pub(crate) fn warn(&self, report: &mut PointReport, place: &str) {
        for ((n, first), what) in [(self.colours, "colours"), (self.coefficients, "reflection or refraction")] {
            if n > 0 {
                report
                    .warnings
                    .push(format!("{n} point(s) had {what} outside [0, 1], clamped (the first at {place} {first})"));
            }
        }
    }
}

/// What loading a point cloud found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PointReport {
    /// Points kept.
    pub points: usize,
    /// Points dropped because a value (position, colour, coefficient) is NaN or infinite.
    pub dropped_non_finite: usize,
    /// Things worth telling the user (colour range guessed, empty file, skipped slices, ...).
    pub warnings: Vec<String>,
}

impl PointReport {
    /// Sets `points` and warns about an empty cloud.
    pub(crate) fn finish(&mut self, cloud: &PointCloud) {
        self.points = cloud.len();
        if cloud.is_empty() {
            self.warnings.push("no points".into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_catches_ragged_arrays() {
        let mut c = PointCloud::default();
        c.push([0.0; 3], [0.0; 3], 0.0, 0.0);
        assert!(c.check().is_ok());
        c.reflection.push(1.0);
        assert!(c.check().is_err());
        assert_eq!(PointCloud::default().bounds(), None);
    }
}
