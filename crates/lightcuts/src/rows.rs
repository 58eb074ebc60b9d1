//! Renders by bands of rows: a [`Render`](crate::Render) with `rows` set computes only that
//! band of its image (on one of several GPUs or cluster nodes), and
//! [`Rendering::assemble`] puts the bands back together into the whole render, bit for bit.
//!
//! A band's pixels are the whole render's: each keeps its coordinates in the full image
//! (its camera ray), and nothing else a pixel computes depends on where it is; the stages
//! that do not depend on pixels (VPLs, light tree, shadow maps, clamp) run whole in every
//! band.

use std::fmt;
use std::ops::Range;

use lumbre_gpu::{Error, Result};
use lumbre_raytrace::Image;

use crate::render::Rendering;

/// A band of rows `start..end` of an image, row 0 at the top.
///
/// ```
/// use lumbre_lightcuts::Rows;
/// let band = Rows::from(8..13);
/// assert_eq!((band.start, band.end, band.len()), (8, 13, 5));
/// assert_eq!(band.range(), 8..13);
/// assert_eq!(band.to_string(), "rows 8..13");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rows {
    /// The first row.
    pub start: u32,
    /// One past the last row.
    pub end: u32,
}

impl From<Range<u32>> for Rows {
    fn from(r: Range<u32>) -> Rows {
        Rows { start: r.start, end: r.end }
    }
}

impl From<Rows> for Range<u32> {
    fn from(r: Rows) -> Range<u32> {
        r.start..r.end
    }
}

impl fmt::Display for Rows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rows {}..{}", self.start, self.end)
    }
}

impl Rows {
    /// Every row of an image `height` rows high.
    ///
    /// ```
    /// assert_eq!(lumbre_lightcuts::Rows::all(16), (0..16).into());
    /// ```
    pub fn all(height: u32) -> Rows {
        Rows { start: 0, end: height }
    }

    /// Rows in the band (0 when `end <= start`).
    ///
    /// ```
    /// assert_eq!(lumbre_lightcuts::Rows::from(3..7).len(), 4);
    /// ```
    pub fn len(&self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    /// Whether the band has no row.
    ///
    /// ```
    /// use lumbre_lightcuts::Rows;
    /// assert!(Rows::from(5..5).is_empty() && !Rows::from(5..6).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The band as a range.
    ///
    /// ```
    /// assert_eq!(lumbre_lightcuts::Rows::from(2..9).range().count(), 7);
    /// ```
    pub fn range(&self) -> Range<u32> {
        self.start..self.end
    }

    /// Checks the band against an image `height` rows high: not empty, inside the image;
    /// else an [`Error::Input`] naming the band.
    ///
    /// ```
    /// use lumbre_lightcuts::Rows;
    /// assert!(Rows::from(0..16).check(16).is_ok());
    /// assert!(Rows::from(4..4).check(16).unwrap_err().to_string().contains("rows 4..4"));
    /// assert!(Rows::from(10..17).check(16).unwrap_err().to_string().contains("16 rows"));
    /// ```
    pub fn check(&self, height: u32) -> Result<()> {
        if self.is_empty() {
            return Err(Error::Input(format!("band of {self}: empty (need start < end)")));
        }
        if self.end > height {
            return Err(Error::Input(format!("band of {self}: outside the image's {height} rows")));
        }
        Ok(())
    }

    /// An image `height` rows high cut into `parts` bands, top to bottom, as even as
    /// possible, each (but the last) a whole number of the kernels' 8-row tiles when the
    /// image has at least `parts` tiles (so no GPU thread idles on rows of another band),
    /// else of single rows. An error for no parts or more parts than rows.
    ///
    /// ```
    /// use lumbre_lightcuts::Rows;
    /// let bands = Rows::split(100, 3)?;
    /// assert_eq!(bands, [(0..32).into(), (32..64).into(), (64..100).into()]);
    /// assert_eq!(Rows::split(5, 2)?, [(0..2).into(), (2..5).into()]);
    /// assert!(Rows::split(5, 6).is_err());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn split(height: u32, parts: u32) -> Result<Vec<Rows>> {
        if parts == 0 || parts > height {
            return Err(Error::Input(format!("{parts} bands of an image of {height} rows: need 1 to {height}")));
        }
        let tiles = height.div_ceil(8);
        let (unit, units) = if parts <= tiles { (8, tiles) } else { (1, height) };
        let edge = |k: u32| ((units as u64 * k as u64 / parts as u64) as u32 * unit).min(height);
        Ok((0..parts).map(|k| Rows { start: edge(k), end: edge(k + 1) }).collect())
    }
}

impl Rendering {
    /// The rows of the image this rendering holds: `first_row` and the image's height.
    ///
    /// ```
    /// use lumbre_lightcuts::{Rendering, Rows};
    /// use lumbre_raytrace::Image;
    /// let part = Rendering { image: Image::new(4, 3), cuts: vec![], vpls: 1, queries: 0, first_row: 5 };
    /// assert_eq!(part.rows(), Rows::from(5..8));
    /// ```
    pub fn rows(&self) -> Rows {
        Rows { start: self.first_row, end: self.first_row.saturating_add(self.image.height) }
    }

    /// The rendering of a whole image `height` rows high from renderings of bands of its
    /// rows (in any order): images and cuts row by row, the same VPL count, visibility
    /// queries summed. An [`Error::Input`] names the bands that overlap, the rows no band
    /// covers, and parts that cannot belong to one render (other widths or VPL counts,
    /// cuts in some and not others).
    ///
    /// ```
    /// use lumbre_lightcuts::{Render, Rendering, Rows, View, VplOptions};
    /// use lumbre_raytrace::{Prepared, Scene};
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/scenes/CornellBox-Diffuse.obj");
    /// let prepared = Prepared::new(Scene::load_obj(path.as_ref())?.0, &Default::default());
    /// let render = Render { view: View::cornell(6, 5), vpls: VplOptions::one_bounce(50), ..Default::default() };
    /// let parts = Rows::split(5, 2)?
    ///     .into_iter()
    ///     .map(|rows| Render { rows: Some(rows), ..render }.cpu(&prepared))
    ///     .collect::<Result<Vec<_>, _>>()?;
    /// assert_eq!(parts[1].image.height, 3);
    /// assert_eq!(Rendering::assemble(parts, 5)?, render.cpu(&prepared)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn assemble(parts: impl IntoIterator<Item = Rendering>, height: u32) -> Result<Rendering> {
        let mut parts: Vec<Rendering> = parts.into_iter().collect();
        parts.sort_by_key(|p| (p.first_row, p.image.height));
        let Some(first) = parts.first() else {
            return Err(Error::Input(format!("no band to assemble an image of {height} rows from")));
        };
        let (width, vpls, with_cuts) = (first.image.width, first.vpls, !first.cuts.is_empty());
        let mut next = 0u32;
        let mut last = Rows::default();
        for p in &parts {
            let rows = p.rows();
            if p.image.width != width {
                return Err(Error::Input(format!(
                    "band of {rows} is {} pixels wide, band of {} {width}",
                    p.image.width,
                    first.rows()
                )));
            }
            if p.vpls != vpls {
                return Err(Error::Input(format!(
                    "band of {rows} has {} VPLs, band of {} {vpls}: parts of different renders",
                    p.vpls,
                    first.rows()
                )));
            }
            let cuts = if with_cuts { p.image.pixels.len() } else { 0 };
            if p.cuts.len() != cuts {
                return Err(Error::Input(format!(
                    "band of {rows} has {} cuts for {} pixels, band of {} {}",
                    p.cuts.len(),
                    p.image.pixels.len(),
                    first.rows(),
                    first.cuts.len()
                )));
            }
            if rows.start < next {
                return Err(Error::Input(format!("band of {rows} overlaps band of {last}")));
            }
            if rows.start > next {
                return Err(Error::Input(format!("{} of the image are in no band", Rows::from(next..rows.start))));
            }
            if rows.end > height {
                return Err(Error::Input(format!("band of {rows}: outside the image's {height} rows")));
            }
            (next, last) = (rows.end, rows);
        }
        if next < height {
            return Err(Error::Input(format!("{} of the image are in no band", Rows::from(next..height))));
        }
        let queries = parts.iter().map(|p| p.queries).sum();
        let mut pixels = Vec::with_capacity(width as usize * height as usize);
        let mut cuts = Vec::with_capacity(if with_cuts { pixels.capacity() } else { 0 });
        for p in parts {
            pixels.extend(p.image.pixels);
            cuts.extend(p.cuts);
        }
        let image = Image::from_pixels(width, height, pixels).map_err(Error::Input)?;
        Ok(Rendering { image, cuts, vpls, queries, first_row: 0 })
    }
}
