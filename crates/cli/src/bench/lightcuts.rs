//! `lumbre bench lightcuts`: the lightcuts paper's Table 5 and beyond on the diffuse Cornell
//! box from the reference view (frames by stage for lightcuts and instant radiosity with the
//! same VPLs, lightcuts' error against instant radiosity), the cut sizes of its Tables 2
//! and 3 per cluster metric and tree builder, the greedy build's time, and on the GPU the
//! imperfect shadow maps' build and pull-push (its Table 4).

mod frames;
mod ism;

use std::time::Duration;

use clap::Args;
use lumbre_gpu::Backend;
use lumbre_lightcuts::ism::IsmOptions;
use lumbre_lightcuts::{ClusterMetric, CutOptions, HEAP_SIZES, Method, Render, View, Visibility};
use lumbre_raytrace::Prepared;

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::lightcuts::{STAGES, VisibilityChoice};
use crate::limits::{available_memory, human};
use crate::progress::progress;
use crate::table::{Table, sig};
use frames::{ErrorFigures, FrameRow, cut_sizes, greedy_build_time, scaling};

/// Lightcuts on the diffuse Cornell box: frames by stage for lightcuts and instant
/// radiosity (the paper's Table 5 and beyond), lightcuts' error against instant
/// radiosity, cut sizes per cluster metric and builder, the greedy build's time.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct LightcutsArgs {
    /// VPL counts of the frame table (the paper's Table 5: 110,420,930,2550; beyond:
    /// 10000,100000,1000000).
    #[arg(long, value_delimiter = ',', default_values_t = [110, 420, 930])]
    vpls: Vec<u32>,
    /// Side of the frame table's square image (the paper's: 1000).
    #[arg(long, default_value_t = 128)]
    size: u32,
    /// Visibility of the frame table: rays, ism or both (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [VisibilityChoice::Rays, VisibilityChoice::Ism])]
    visibility: Vec<VisibilityChoice>,
    /// Side of each VPL's imperfect shadow map: 32, 64 or 128.
    #[arg(long, default_value_t = IsmOptions::default().size)]
    ism_size: u32,
    /// Instant radiosity, and lightcuts' error against it, up to this many VPLs.
    #[arg(long, default_value_t = 2550)]
    instant_max: u32,
    /// Entries of each pixel's heap of refinable clusters (GPU: 32, 64 or 128).
    #[arg(long, default_value_t = CutOptions::default().heap)]
    heap: u32,
    /// VPL counts of the cut-size table (the paper's Tables 2 and 3); 0 skips it.
    #[arg(long, value_delimiter = ',', default_values_t = [110, 930])]
    cut_vpls: Vec<u32>,
    /// Side of the cut-size table's square image.
    #[arg(long, default_value_t = 64)]
    cut_size: u32,
    /// VPL counts of the greedy build's timing (CPU); 0 skips it.
    #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000])]
    greedy: Vec<u32>,
    /// VPL counts of the ISM build table (GPU: splat and pull-push of 64x64 maps, then
    /// pull-push of the paper's 3968x3968 atlas); 0 skips it.
    #[arg(long, value_delimiter = ',', default_values_t = [1000, 10000, 100000])]
    ism_vpls: Vec<u32>,
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    backend: BackendArgs,
}

impl OnBackend for LightcutsArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        Effort::new(self.warmup, self.repeats)?;
        Ok(())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let effort = Effort::new(self.warmup, self.repeats)?;
        // A list of one 0 skips its table.
        let skip_zero = |v: Vec<u32>| -> Vec<u32> { if v == [0] { Vec::new() } else { v } };
        let options = Options {
            size: self.size,
            vpls: self.vpls,
            visibility: self.visibility,
            ism_size: self.ism_size,
            instant_max: self.instant_max,
            heap: self.heap,
            cut_vpls: skip_zero(self.cut_vpls),
            cut_size: self.cut_size,
            greedy: skip_zero(self.greedy),
            ism_vpls: skip_zero(self.ism_vpls),
            effort,
        };
        let tables = lightcuts(backend, &options)?;
        super::print(&tables, self.json)?;
        Ok(())
    }
}

/// What the benchmark runs.
struct Options {
    /// Side of the square image of the frame table.
    pub size: u32,
    /// VPL counts of the frame table.
    pub vpls: Vec<u32>,
    /// Visibility of the frame table's rows.
    pub visibility: Vec<VisibilityChoice>,
    /// Side of the ISMs.
    pub ism_size: u32,
    /// Instant radiosity (and the error of lightcuts against it) up to this many VPLs.
    pub instant_max: u32,
    /// Entries of each pixel's heap of refinable clusters.
    pub heap: u32,
    /// VPL counts of the cut-size table (none: skipped).
    pub cut_vpls: Vec<u32>,
    /// Side of the square image of the cut-size table.
    pub cut_size: u32,
    /// VPL counts of the greedy build's times (none: skipped).
    pub greedy: Vec<u32>,
    /// VPL counts of the ISM build table (GPU only; none: skipped).
    pub ism_vpls: Vec<u32>,
    pub effort: Effort,
}

impl Options {
    /// Checks the values, naming the flag and what is allowed.
    pub fn check(&self, backend: &Backend) -> Result<()> {
        if self.size == 0 || self.cut_size == 0 {
            return Err(
                format!("--size and --cut-size must be 1 or more, got {} and {}", self.size, self.cut_size).into()
            );
        }
        let max = (1u32 << 31) - 1;
        let lists = [
            ("--vpls", &self.vpls),
            ("--cut-vpls", &self.cut_vpls),
            ("--greedy", &self.greedy),
            ("--ism-vpls", &self.ism_vpls),
        ];
        for (flag, list) in lists {
            if let Some(n) = list.iter().find(|&&n| n == 0 || n > max) {
                return Err(format!("{flag}: every count must be in 1..={max}, got {n}").into());
            }
        }
        if backend.gpu().is_some() && !HEAP_SIZES.contains(&self.heap) {
            return Err(format!("--heap must be one of {HEAP_SIZES:?} on the GPU, got {}", self.heap).into());
        }
        if self.heap == 0 {
            return Err("--heap must be 1 or more, got 0".into());
        }
        // The smallest count must fit, with smaller maps if need be; larger ones that do not
        // are skipped with a note.
        let ism = crate::lightcuts::LightcutsOptions {
            vpls: self.vpls.iter().copied().min().unwrap_or(1),
            visibility: VisibilityChoice::Ism,
            ism_size: self.ism_size,
            ..Default::default()
        };
        if self.visibility.contains(&VisibilityChoice::Ism) {
            ism.check()?;
            ism_size_for(backend, ism.vpls, VisibilityChoice::Ism, self.ism_size)?;
        }
        if backend.gpu().is_some() {
            for &n in &self.ism_vpls {
                check_ism_vpls(backend, n, available_memory())?;
            }
        }
        Ok(())
    }
}

/// Side of the maps of the ISM build table ([`ism::standard`]).
const ISM_TABLE_SIZE: u32 = 64;

/// An error naming `--ism-vpls` when the ISM table's atlas of `vpls` maps cannot fit: the
/// `lightcuts` command's check against the GPU's largest binding, and the host's `available`
/// bytes for the CPU's atlas and the GPU's read back, to which it is compared.
fn check_ism_vpls(backend: &Backend, vpls: u32, available: u64) -> Result<()> {
    let refuse = |why: String| format!("--ism-vpls {vpls}: {why}: fewer --ism-vpls, or 0 to skip the table");
    let one = crate::lightcuts::LightcutsOptions {
        vpls,
        visibility: VisibilityChoice::Ism,
        ism_size: ISM_TABLE_SIZE,
        ..Default::default()
    };
    one.check_memory(backend).map_err(|e| refuse(format!("its {ISM_TABLE_SIZE}x{ISM_TABLE_SIZE} maps: {e}")))?;
    let host = u64::from(vpls) * u64::from(ISM_TABLE_SIZE).pow(2) * 4 * 2;
    if host > available {
        return Err(refuse(format!(
            "the atlas on the CPU and the GPU's read back need about {}, more than the {} available",
            human(host),
            human(available)
        ))
        .into());
    }
    Ok(())
}

/// The benchmark's scene (bundled), seen from the reference view.
const SCENE: &str = "CornellBox-Diffuse";

fn ms(d: Duration) -> String {
    sig(d.as_secs_f64() * 1e3)
}

/// The largest map side, from `asked` down to 32, whose atlas of `vpls` maps `backend`
/// holds, with why `asked` did not fit when it did not; an error when none fits.
fn ism_size_for(
    backend: &Backend,
    vpls: u32,
    visibility: VisibilityChoice,
    asked: u32,
) -> Result<(u32, Option<String>)> {
    let fits = |ism_size| {
        crate::lightcuts::LightcutsOptions { vpls, visibility, ism_size, ..Default::default() }.check_memory(backend)
    };
    let Err(why) = fits(asked) else { return Ok((asked, None)) };
    let mut smaller = std::iter::successors(Some(asked), |&m| (m > 32).then_some(m / 2)).skip(1);
    let why = why.to_string();
    smaller.find(|&m| fits(m).is_ok()).map(|m| (m, Some(why.clone()))).ok_or_else(|| why.into())
}

fn percent(x: f64) -> String {
    format!("{}%", sig(100.0 * x))
}

fn frame_cells(r: &FrameRow) -> Vec<String> {
    let mut row = vec![r.method.to_string(), r.visibility.to_string(), r.asked.to_string(), r.vpls.to_string()];
    row.extend(r.stages.iter().map(|&d| ms(d)));
    row.push(ms(r.frame));
    row.push(r.average_cut.map_or("-".into(), sig));
    let e = |f: fn(&ErrorFigures) -> String| r.error.as_ref().map_or("-".into(), f);
    row.push(e(|e| percent(e.rel_mean)));
    row.push(e(|e| percent(e.rel_p99)));
    row.push(e(|e| percent(e.over_2pct)));
    row.push(e(|e| sig(e.de94_mean)));
    row
}

/// The frame table, the cut-size table and the greedy build's table (the last two when
/// asked for) on `backend`.
fn lightcuts(backend: &Backend, o: &Options) -> Result<Vec<Table>> {
    o.check(backend)?;
    let scene = crate::data::scene(SCENE, None)?;
    let prepared = Prepared::new(scene, &Default::default());
    let effort = o.effort;
    let mut tables = Vec::new();

    let mut columns = vec!["method", "visibility", "asked", "VPLs"];
    let stage_columns: Vec<String> = STAGES.iter().map(|s| format!("{s} ms")).collect();
    columns.extend(stage_columns.iter().map(String::as_str));
    columns.extend(["frame ms", "avg cut", "rel. error", "p99 rel. error", "pixels > 2%", "mean ΔE94"]);
    let mut t = Table::new(
        format!(
            "Lightcuts and instant radiosity, {} ({}x{}, reference view) on {}: frames by stage",
            SCENE,
            o.size,
            o.size,
            backend.describe()
        ),
        &columns,
    );
    let bar = progress((o.vpls.len() * o.visibility.len()) as u64, "lightcuts frames");
    for &vis in &o.visibility {
        for &n in &o.vpls {
            let ism_size = match ism_size_for(backend, n, vis, o.ism_size) {
                Ok((size, None)) => size,
                Ok((size, Some(why))) => {
                    t.note(format!("{n} VPLs: ISMs of {size}x{size} ({why})"));
                    size
                }
                Err(why) => {
                    t.note(format!("skipped: {why}"));
                    bar.inc(1);
                    continue;
                }
            };
            let visibility = match vis {
                VisibilityChoice::Rays => Visibility::Rays,
                VisibilityChoice::Ism => Visibility::Ism(IsmOptions { size: ism_size, ..IsmOptions::default() }),
            };
            let method = Method::Lightcuts(CutOptions { heap: o.heap, ..CutOptions::default() });
            let base = Render { view: View::cornell(o.size, o.size), visibility, method, ..Render::default() };
            for r in scaling(backend, &prepared, &base, &[n], o.instant_max, effort)? {
                t.row(frame_cells(&r));
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    t.note(format!(
        "lightcuts: Morton tree, error 2%, max cut 1000, heap {}; VPLs: a quarter on the light, the rest at the first bounce; ISM {}x{}",
        o.heap, o.ism_size, o.ism_size
    ));
    t.note(match backend {
        Backend::Gpu(_) => format!(
            "median of {} runs after {} unmeasured; stages timed by GPU timestamps (the tree of the greedy builder by the host's clock); downloads are no part of a frame",
            o.effort.repeats.max(1),
            o.effort.warmup
        ),
        Backend::Cpu => format!(
            "median of {} runs after {} unmeasured; stages timed by the wall clock",
            o.effort.repeats.max(1),
            o.effort.warmup
        ),
    });
    if crate::lightcuts::is_lavapipe(backend) && o.visibility.contains(&VisibilityChoice::Rays) {
        t.note(crate::lightcuts::LAVAPIPE_LOOPS);
    }
    t.note(format!(
        "error: lightcuts against instant radiosity with the same VPLs and visibility (up to {} VPLs); relative error on luminance, |test - reference| / (reference + 0.01)",
        o.instant_max
    ));
    tables.push(t);

    if !o.cut_vpls.is_empty() {
        let mut t = Table::new(
            format!(
                "Average cut size at 2% by cluster metric and tree builder (the paper's Tables 2 and 3), {}x{} on {}",
                o.cut_size,
                o.cut_size,
                backend.describe()
            ),
            &["builder", "metric", "VPLs", "avg cut", "build ms"],
        );
        let bar = progress(o.cut_vpls.len() as u64, "cut sizes");
        for &n in &o.cut_vpls {
            let view = View::cornell(o.cut_size, o.cut_size);
            for r in cut_sizes(backend, &prepared, view, &[n])? {
                t.row(vec![r.builder.into(), r.metric.into(), r.vpls.to_string(), sig(r.average_cut), ms(r.build)]);
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        t.note("greedy: built on the CPU; morton: on the backend (position+normal: 3 direction bits per octahedral coordinate in the key); visibility by shadow rays");
        if crate::lightcuts::is_lavapipe(backend) {
            t.note(crate::lightcuts::LAVAPIPE_LOOPS);
        }
        tables.push(t);
    }

    if !o.greedy.is_empty() {
        let mut t = Table::new("Greedy light tree build on the CPU", &["metric", "VPLs", "build ms"]);
        for &n in &o.greedy {
            for metric in [ClusterMetric::Walter, ClusterMetric::PAPER] {
                let (vpls, d) = greedy_build_time(&prepared, n, metric, o.effort.repeats)?;
                t.row(vec![metric.name().into(), vpls.to_string(), ms(d)]);
            }
        }
        t.note(format!("median of {} builds, {} threads", o.effort.repeats.max(1), rayon::current_num_threads()));
        tables.push(t);
    }

    if let (Some(gpu), false) = (backend.gpu(), o.ism_vpls.is_empty()) {
        tables.extend(ism_tables(gpu, &prepared, &o.ism_vpls, effort)?);
    }
    Ok(tables)
}

/// The ISM build at each VPL count (64x64 maps, every texel checked against the CPU's),
/// then pull-push of the paper's 3968x3968 atlas (961 maps of 128x128) against the copy of
/// its bytes.
fn ism_tables(gpu: &lumbre_gpu::Gpu, prepared: &Prepared, vpls: &[u32], effort: Effort) -> Result<Vec<Table>> {
    let triangles = prepared.scene.triangle_positions();
    let (builds, pull_push) = ism::standard(gpu, &triangles, vpls, effort)?;
    let mut b = Table::new(
        format!("Imperfect shadow maps of {SCENE} on {}: build", gpu.adapter_name()),
        &["VPLs", "map", "points/VPL", "atlas", "MB", "splat ms", "pull-push ms", "build ms", "texels != CPU"],
    );
    for r in builds {
        b.row(vec![
            r.vpls.to_string(),
            r.options.size.to_string(),
            r.options.points_per_vpl.to_string(),
            format!("{}x{}", r.atlas.0, r.atlas.1),
            sig(r.bytes as f64 / 1e6),
            ms(r.splat),
            ms(r.pull_push),
            ms(r.build),
            r.differing_texels.to_string(),
        ]);
    }
    b.note(format!("median of {} runs after {} unmeasured; GPU timestamps", effort.repeats.max(1), effort.warmup));
    let mut p = Table::new(
        "Pull-push of the paper's atlas (its Table 4: 80 ms)",
        &["atlas", "map", "levels", "holes before", "pull-push ms", "copy ms (same bytes)", "texels != CPU"],
    );
    for r in pull_push {
        p.row(vec![
            format!("{}x{}", r.atlas.0, r.atlas.1),
            r.size.to_string(),
            r.levels.to_string(),
            r.holes.to_string(),
            ms(r.time),
            ms(r.copy),
            r.differing_texels.to_string(),
        ]);
    }
    Ok(vec![b, p])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ism_maps_shrink_until_the_atlas_fits() {
        let cpu = Backend::Cpu;
        assert_eq!(ism_size_for(&cpu, 1000, VisibilityChoice::Ism, 64).unwrap(), (64, None));
        let (size, why) = ism_size_for(&cpu, 600_000, VisibilityChoice::Ism, 64).unwrap();
        assert!(size == 32 && why.unwrap().contains("GiB"));
        let e = ism_size_for(&cpu, 100_000_000, VisibilityChoice::Ism, 64).unwrap_err().to_string();
        assert!(e.contains("--ism-size 64"));
        // Shadow rays keep the asked size whatever it would weigh as maps.
        assert_eq!(ism_size_for(&cpu, 1_000_000, VisibilityChoice::Rays, 128).unwrap(), (128, None));
    }

    #[test]
    fn the_ism_table_is_refused_beyond_the_host() {
        assert!(check_ism_vpls(&Backend::Cpu, 1000, 1 << 30).is_ok());
        let e = check_ism_vpls(&Backend::Cpu, 100_000_000, 1 << 30).unwrap_err().to_string();
        assert!(e.starts_with("--ism-vpls 100000000:") && e.contains("GiB"), "{e}");
    }
}
