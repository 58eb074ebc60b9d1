//! `lumbre compare`: a rendering against a reference through `lumbre_raytrace::metrics`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use lumbre_raytrace::Image;
use lumbre_raytrace::metrics::{CompareError, DiffMap, Region, compare, false_colour};

use crate::error::Result;
use crate::out::out;

/// Compare a rendering with a reference: RMSE, relative error (overall and per region)
/// and CIE94 ΔE, with an optional false-colour difference image.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The image to judge (.exr or .png).
    test: PathBuf,
    /// The reference image (.exr or .png), e.g. the path tracer's render.
    reference: PathBuf,
    /// Regions whose mean relative error to report: `cornell` (the Cornell box's walls,
    /// ceiling, floor and boxes seen from the reference camera `0,1,3.9, 0,1,0, 0,1,0, 40`)
    /// or `name=x,y,width,height;...` in pixels.
    #[arg(long)]
    regions: Option<String>,
    /// Write a false-colour image of the per-pixel error here (.png or .exr).
    #[arg(long)]
    diff: Option<PathBuf>,
    /// What the false-colour image shows: relative error (0 to 100%) or CIE94 ΔE (0 to 20).
    #[arg(long, value_enum, default_value_t = DiffChoice::Relative)]
    diff_of: DiffChoice,
}

/// `--diff-of`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffChoice {
    /// Relative error on luminance, 0 to 100%.
    Relative,
    /// CIE94 ΔE, 0 to 20.
    DeltaE94,
}

/// The extension of `path` in lower case, if it is one of ours.
fn image_kind(path: &Path) -> Result<&'static str> {
    match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png") => Ok("png"),
        Some("exr") => Ok("exr"),
        _ => Err(format!("{}: unknown image format: the file name must end in .png or .exr", path.display()).into()),
    }
}

/// Loads a PNG (as sRGB) or an EXR (linear) by its extension.
fn load(path: &Path) -> Result<Image> {
    let image = match image_kind(path)? {
        "png" => Image::load_png(path),
        _ => Image::load_exr(path),
    };
    Ok(image?)
}

/// The fewest rows `--regions cornell` accepts.
const CORNELL_MIN_ROWS: u32 = 48;

/// The regions `--regions` names for a `width` x `height` image.
fn regions(spec: Option<&str>, width: u32, height: u32) -> Result<Vec<Region>> {
    match spec.map(str::trim) {
        None => Ok(Vec::new()),
        Some("cornell") => {
            // From 48 rows every region pixel lies wholly on its surface; an image much
            // narrower than square cuts a wall out of view.
            let cornell = Region::cornell(width, height);
            if height < CORNELL_MIN_ROWS || cornell.iter().any(|r| r.width == 0 || r.height == 0) {
                return Err(format!(
                    "--regions cornell: the images are {width}x{height}; the Cornell regions need at least \
                     {CORNELL_MIN_ROWS} rows and every wall in view (e.g. 64x48, 4:3 from the reference camera)"
                )
                .into());
            }
            Ok(cornell)
        }
        Some(text) => Ok(Region::parse_list(text).map_err(|e| format!("--regions: {e}"))?),
    }
}

impl CompareArgs {
    /// Loads both images, prints the metrics and writes `--diff`.
    pub fn run(self) -> Result<()> {
        if let Some(diff) = &self.diff {
            image_kind(diff).map_err(|e| format!("--diff {e}"))?;
        }
        let test = load(&self.test)?;
        let reference = load(&self.reference)?;
        let regions = regions(self.regions.as_deref(), reference.width, reference.height)?;
        let metrics = compare(&test, &reference, &regions).map_err(|e| match &e {
            CompareError::Size(s) => format!(
                "{} is {}x{} but the reference {} is {}x{}",
                self.test.display(),
                s.a.0,
                s.a.1,
                self.reference.display(),
                s.b.0,
                s.b.1
            ),
            CompareError::RegionOutside { .. } | CompareError::EmptyRegion(_) => format!("--regions: {e}"),
            other => other.to_string(),
        })?;
        out!("{} against the reference {}", self.test.display(), self.reference.display())?;
        out!("{metrics}")?;
        if let Some(path) = &self.diff {
            let map = match self.diff_of {
                DiffChoice::Relative => DiffMap::Relative,
                DiffChoice::DeltaE94 => DiffMap::DeltaE94,
            };
            let image = false_colour(&test, &reference, map)?;
            image.save(path)?;
            out!("{}: {}", path.display(), map.legend())?;
        }
        if metrics.non_finite > 0 {
            // The figures above leave those pixels out, so they do not judge the whole image.
            let bad = |img: &Image| img.pixels.iter().filter(|p| !p.is_finite()).count();
            return Err(format!(
                "{} of {} pixels are NaN or infinite ({} in {}, {} in the reference {}) and left out of every \
                 figure above, which judge only the rest",
                metrics.non_finite,
                metrics.width as usize * metrics.height as usize,
                bad(&test),
                self.test.display(),
                bad(&reference),
                self.reference.display()
            )
            .into());
        }
        Ok(())
    }
}
