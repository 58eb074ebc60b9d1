//! `lumbre merge`: the partial results of a run's shards (`--shard I/N`) combined into its
//! output, bit for bit the output of the run in one piece. The parts must be every shard of
//! one run, each once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use lumbre_gpu::Backend;
use lumbre_raytrace::SampleSums;

use crate::backend::{BackendArgs, OnBackend};
use crate::density_part::DensityPart;
use crate::error::Result;
use crate::out::out;
use crate::part::{Part, run_hash};
use crate::shard::Shard;
use crate::view::image_path;

/// Combine the partial results of `--shard I/N` runs into the output of one run.
#[derive(Args)]
pub struct MergeArgs {
    /// The parts (`.lpart`), every shard of one run, in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// Output image: .png (8-bit sRGB) or .exr (linear f32); for radiosity parts, the
    /// factorisation (.lrr) that `lumbre radiosity --load` solves and renders.
    #[arg(short, long, default_value = "merged.exr")]
    out: PathBuf,
    /// Where radiosity parts' precompute runs: on the GPU, the factorisation is the bits the
    /// one-piece GPU run saves (from GPU shards); parts of other kinds only add.
    #[command(flatten)]
    backend: BackendArgs,
}

impl OnBackend for MergeArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    /// Reads the parts, checks that they are every shard of one run, and writes the output.
    fn run(self, backend: &Backend) -> Result<()> {
        let parts = self.parts.iter().map(|p| Ok((p.as_path(), Part::load(p)?))).collect::<Result<Vec<_>>>()?;
        let (first_path, first) = &parts[0];
        let out = match first.kind.as_str() {
            "radiosity" => factor_path(&self.out)?,
            _ => image_path("-o", &self.out)?,
        };
        let mut by_index: BTreeMap<u32, &Path> = BTreeMap::new();
        for (path, part) in &parts {
            if (part.kind.as_str(), part.run, part.shard.count) != (first.kind.as_str(), first.run, first.shard.count) {
                return Err(format!(
                    "{}: a part of another run ({} shard {}, run {:016x}) than {} ({} shard {}, run {:016x})",
                    path.display(),
                    part.kind,
                    part.shard,
                    part.run,
                    first_path.display(),
                    first.kind,
                    first.shard,
                    first.run
                )
                .into());
            }
            if let Some(other) = by_index.insert(part.shard.index, path) {
                return Err(format!("{} and {}: both are shard {}", other.display(), path.display(), part.shard).into());
            }
        }
        let missing: Vec<String> =
            (0..first.shard.count).filter(|i| !by_index.contains_key(i)).map(|i| i.to_string()).collect();
        if !missing.is_empty() {
            return Err(format!(
                "shards {} of {} are missing (given: {} parts)",
                missing.join(", "),
                first.shard.count,
                parts.len()
            )
            .into());
        }
        match first.kind.as_str() {
            kind @ ("path" | "whitted") => {
                let sums = merge_sums(&parts)?;
                sums.mean()?.save(&out)?;
                let what = if kind == "path" { "path" } else { "Whitted" };
                out!(
                    "merged {} parts of a {what} render: {} samples per pixel, {}x{} -> {}",
                    parts.len(),
                    sums.samples,
                    sums.width,
                    sums.height,
                    out.display()
                )?;
            }
            "density" => {
                let merged = merge_density(&parts)?;
                merged.compose()?.save(&out)?;
                out!(
                    "merged {} parts of a density estimate: {} photons, {} disks, {}x{} -> {}",
                    parts.len(),
                    merged.sums.photons,
                    merged.sums.disks.len(),
                    merged.width,
                    merged.height,
                    out.display()
                )?;
            }
            "lightcuts" => {
                let image = crate::lightcuts::merge_lightcuts(&parts)?;
                image.save(&out)?;
                out!(
                    "merged {} parts of a lightcuts render (bands of rows): {}x{} -> {}",
                    parts.len(),
                    image.width,
                    image.height,
                    out.display()
                )?;
            }
            "radiosity" => {
                let factor = crate::radiosity_part::merge_radiosity(&parts, backend)?;
                factor.save(&out)?;
                out!(
                    "merged {} parts of radiosity form factors: n = {}, k = {}, precompute on {} -> {} (render it with \
                     `lumbre radiosity SCENE --load {}` and the run's meshing flags)",
                    parts.len(),
                    factor.n,
                    factor.k,
                    backend.describe(),
                    out.display(),
                    out.display()
                )?;
            }
            kind => return Err(format!("{}: parts of kind `{kind}` cannot be merged", first_path.display()).into()),
        }
        Ok(())
    }
}

/// `-o` for merged radiosity parts: a factorisation file.
fn factor_path(out: &Path) -> Result<PathBuf> {
    if out.extension().and_then(|e| e.to_str()) != Some("lrr") {
        return Err(format!("-o {}: radiosity parts merge into a factorisation: -o NAME.lrr", out.display()).into());
    }
    crate::limits::folder_exists("-o", out)?;
    Ok(out.to_path_buf())
}

/// The sums of a path or Whitted render's parts, checked to hold samples `0..spp` once each.
fn merge_sums(parts: &[(&Path, Part)]) -> Result<SampleSums> {
    let mut all: Vec<(&Path, SampleSums, u32)> = Vec::new();
    for (path, part) in parts {
        all.push((path, part_sums(path, part)?, part.field(path, "spp")?));
    }
    all.sort_by_key(|(_, s, _)| s.first_sample);
    let (path0, first, spp) = &all[0];
    let mut sums = SampleSums::new(first.width, first.height, 0, first.scale_log2);
    let mut next = 0u64;
    for (path, part, part_spp) in &all {
        if part_spp != spp {
            return Err(format!(
                "{}: a run of {part_spp} samples per pixel, {} of {spp}",
                path.display(),
                path0.display()
            )
            .into());
        }
        if part.first_sample as u64 != next {
            return Err(format!(
                "{}: samples from {} where the parts before end at {next}",
                path.display(),
                part.first_sample
            )
            .into());
        }
        next += part.samples as u64;
        sums.merge(part).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if next != *spp as u64 {
        return Err(format!("the parts hold {next} of the run's {spp} samples per pixel").into());
    }
    Ok(sums)
}

/// A density run's parts merged, checked to hold every photon and direct-light sample once.
fn merge_density(parts: &[(&Path, Part)]) -> Result<DensityPart> {
    let mut merged: Option<DensityPart> = None;
    let mut samples = 0u64;
    for (path, part) in parts {
        let p = DensityPart::from_part(path, part)?;
        samples += p.direct.as_ref().map_or(0, |d| d.samples as u64);
        match merged.as_mut() {
            None => merged = Some(p),
            Some(m) => m.merge(&p).map_err(|e| format!("{}: {e}", path.display()))?,
        }
    }
    let merged = merged.ok_or("no parts")?;
    if merged.sums.traced != merged.sums.photons {
        return Err(
            format!("the parts hold {} of the run's {} photons", merged.sums.traced, merged.sums.photons).into()
        );
    }
    let spp: u64 = parts[0].1.field(parts[0].0, "spp")?;
    if merged.direct.is_some() && samples != spp {
        return Err(format!("the parts hold {samples} of the run's {spp} direct-light samples per pixel").into());
    }
    Ok(merged)
}

/// A part of kind `kind` (`path` or `whitted`) of a render of `spp` samples per pixel: its
/// sums, what they are, and the run they belong to (`description`, hashed).
pub fn sums_part(kind: &str, sums: &SampleSums, shard: Shard, description: &str, spp: u32) -> Part {
    let mut fields = BTreeMap::new();
    for (k, v) in [
        ("width", sums.width.to_string()),
        ("height", sums.height.to_string()),
        ("spp", spp.to_string()),
        ("first_sample", sums.first_sample.to_string()),
        ("samples", sums.samples.to_string()),
        ("scale_log2", sums.scale_log2.to_string()),
    ] {
        fields.insert(k.to_string(), v);
    }
    Part {
        kind: kind.into(),
        run: run_hash(description.as_bytes()),
        shard,
        fields,
        data: sums.sums.iter().flatten().copied().collect(),
    }
}

/// The sums a path or Whitted part holds; an error naming the file if its values do not fit
/// its size.
fn part_sums(path: &Path, part: &Part) -> Result<SampleSums> {
    let (width, height): (u32, u32) = (part.field(path, "width")?, part.field(path, "height")?);
    part.expect_pixels(path, 3, width, height)?;
    let mut sums = SampleSums::new(width, height, part.field(path, "first_sample")?, part.field(path, "scale_log2")?);
    sums.samples = part.field(path, "samples")?;
    for (s, v) in sums.sums.iter_mut().zip(part.data.chunks_exact(3)) {
        *s = [v[0], v[1], v[2]];
    }
    Ok(sums)
}

/// `-o` of a shard: required, ending in `.lpart`, in a folder that exists.
pub fn part_path(out: Option<&Path>) -> Result<PathBuf> {
    let out = out.ok_or("--shard writes a partial result: name it with -o NAME.lpart")?;
    if out.extension().and_then(|e| e.to_str()) != Some("lpart") {
        return Err(format!("-o {}: with --shard the output is a partial result, NAME.lpart", out.display()).into());
    }
    match out.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            Err(format!("-o {}: the folder {} does not exist", out.display(), dir.display()).into())
        }
        _ => Ok(out.to_path_buf()),
    }
}
