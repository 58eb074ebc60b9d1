//! `lumbre bench radiosity`: the low-rank radiosity paper's Table 3 on the generated box
//! (solves per second for Y and for its factors, in f32 and f16, against the copy kernel and
//! the CPU, with the precompute's times), and the low-rank error against the full solve for
//! 2MF and 2MCE at equal k.

use std::time::Duration;

use super::radiosity_tables::{
    ELEMENT_SIDES, Factors, FormTimes, PATCH_SIDES, PrecomputeTimes, SolveRow, TableOptions, error_table, solve_table,
};
use clap::Args;
use lumbre_gpu::Backend;

use super::Effort;
use crate::backend::{BackendArgs, OnBackend, gpu_by_default};
use crate::error::Result;
use crate::gpus::GpuList;
use crate::limits::{available_memory, human, in_range};
use crate::progress::{bar_progress, progress};
use crate::table::{Table, sig};

/// Low-rank radiosity on the generated box at the paper's sizes (n = 3456 .. 221184,
/// k = 216 .. 3456): solves per second (Y and its factors, f32 and f16) against the copy
/// kernel and the CPU, precompute times, and the low-rank error against the full solve.
#[derive(Args)]
#[command(mut_arg("backend", gpu_by_default))]
pub struct RadiosityArgs {
    /// `s:t` pairs (s x s elements and t x t patches per wall); default: the paper's 12.
    #[arg(long, value_delimiter = ',')]
    sizes: Vec<String>,
    /// Form factor samples per element-patch pair, 1..=4096.
    #[arg(long, default_value_t = 16)]
    samples: u32,
    /// Time solves on synthetic factorisations (no form factors or precompute).
    #[arg(long)]
    synthetic: bool,
    /// Largest n k whose precompute runs on the CPU when there is no GPU (larger sizes are
    /// timed on synthetic factorisations).
    #[arg(long, default_value_t = 4_000_000)]
    cpu_pairs: usize,
    /// Skip the CPU solve column.
    #[arg(long)]
    no_cpu: bool,
    /// Elements per wall side of the error table (n = 6 s^2; 0 skips it), at most 192 and
    /// as the host's memory allows (its reference is the full n x n matrix).
    #[arg(long, default_value_t = 48)]
    error_side: u32,
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    #[arg(long)]
    json: bool,
    /// Instead of the tables: the form factors and precompute of each size on one GPU and
    /// spread over these (`all`, a count N, or adapter indices I,J as `lumbre info` lists them).
    #[arg(long, value_name = "all|N|#I|I,J")]
    gpus: Option<GpuList>,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Most `--samples` per element-patch pair.
const MAX_SAMPLES: u32 = 4096;
/// Most `--error-side`: the paper's largest box (n = 221184).
const MAX_ERROR_SIDE: u32 = 192;

/// An error naming `--error-side` when the error table's full n x n matrix (f32, held twice
/// on the way) cannot fit `available` bytes.
fn check_error_side(side: u32, available: u64) -> Result<()> {
    let n = 6 * u64::from(side).pow(2);
    let bytes = n * n * 4 * 2;
    if bytes > available {
        return Err(format!(
            "--error-side {side}: the full {n} x {n} matrix of the error table needs about {}, more than the {} \
             available: a smaller --error-side, or 0 to skip the table",
            human(bytes),
            human(available)
        )
        .into());
    }
    Ok(())
}

impl OnBackend for RadiosityArgs {
    fn backend_args(&self) -> &BackendArgs {
        &self.backend
    }

    fn check(&self) -> Result<()> {
        parse_sizes(&self.sizes)?;
        Effort::new(self.warmup, self.repeats)?;
        in_range("--samples", self.samples, 1, MAX_SAMPLES)?;
        in_range("--error-side", self.error_side, 0, MAX_ERROR_SIDE)?;
        check_error_side(self.error_side, available_memory())
    }

    fn run(self, backend: &Backend) -> Result<()> {
        let sizes = parse_sizes(&self.sizes)?;
        if let Some(list) = &self.gpus {
            let table = super::radiosity_gpus::spread_table(&list.open(backend)?, &sizes, self.samples)?;
            return super::print(&[table], self.json);
        }
        let effort = Effort::new(self.warmup, self.repeats)?;
        let (samples, synthetic, cpu_pairs, error_side) =
            (self.samples, self.synthetic, self.cpu_pairs, self.error_side);
        let options = Options { samples, synthetic, cpu_pairs, cpu: !self.no_cpu, error_side, effort };
        let tables = radiosity(backend, &sizes, &options)?;
        super::print(&tables, self.json)?;
        Ok(())
    }
}

/// What the benchmark runs.
struct Options {
    pub samples: u32,
    pub synthetic: bool,
    pub cpu_pairs: usize,
    pub cpu: bool,
    /// Elements per wall side of the error table; 0 skips it.
    pub error_side: u32,
    pub effort: Effort,
}

/// `s:t` pairs; none means the paper's twelve.
fn parse_sizes(list: &[String]) -> Result<Vec<(u32, u32)>> {
    if list.is_empty() {
        return Ok(ELEMENT_SIDES.iter().flat_map(|&s| PATCH_SIDES.iter().map(move |&t| (s, t))).collect());
    }
    list.iter()
        .map(|p| {
            let bad = || format!("--sizes {p}: expected s:t, elements and patches per wall side, t dividing s");
            let (s, t) = p.split_once(':').ok_or_else(bad)?;
            let (s, t): (u32, u32) = (s.trim().parse().map_err(|_| bad())?, t.trim().parse().map_err(|_| bad())?);
            if s == 0 || t == 0 || s % t != 0 {
                return Err(bad().into());
            }
            Ok((s, t))
        })
        .collect()
}

fn rate(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| sig(1.0 / d.as_secs_f64().max(1e-12)))
}

fn ms(d: Duration) -> String {
    sig(d.as_secs_f64() * 1e3)
}

fn form_cells(t: &FormTimes) -> Vec<String> {
    vec![
        sig(t.bytes as f64 / 1e6),
        rate(t.cpu),
        rate(t.gpu),
        t.copy_fraction().map_or("-".into(), |f| format!("{}%", sig(100.0 * f))),
        rate(t.gpu_f16),
        t.f16_error.map_or("-".into(), |e| format!("{e:.1e}")),
    ]
}

fn solve_rows(t: &mut Table, r: &SolveRow) {
    let pre = r.precompute.as_ref();
    let cell = |f: &dyn Fn(&PrecomputeTimes) -> Duration| pre.map_or("-".into(), |p| ms(f(p)));
    for (form, times) in [("Y", &r.dense), ("F, W", &r.factored)] {
        let mut row = vec![format!("{} x {}", r.n, r.k), form.to_string()];
        row.extend(form_cells(times));
        if form == "Y" {
            row.push(pre.map_or("synthetic".into(), |p| p.on.to_string()));
            row.push(cell(&|p| p.form_factors));
            row.push(cell(&|p| p.u));
            row.push(cell(&|p| p.inverse));
            row.push(cell(&|p| p.y));
        } else {
            row.extend(["".to_string(), "".into(), "".into(), "".into(), "".into()]);
        }
        t.row(row);
    }
}

/// The solve table and, unless `error_side` is 0, the error table.
fn radiosity(backend: &Backend, sizes: &[(u32, u32)], o: &Options) -> Result<Vec<Table>> {
    let opts = TableOptions {
        samples: o.samples,
        effort: o.effort,
        factors: if o.synthetic { Factors::Synthetic } else { Factors::Auto { cpu_pairs: o.cpu_pairs } },
        cpu: o.cpu,
        f16: true,
    };
    let mut t = Table::new(
        "Low-rank radiosity on the closed box (paper's Table 3): RGB solves per second",
        &[
            "n x k",
            "form",
            "MB read",
            "CPU solves/s",
            "GPU solves/s",
            "GPU / copy",
            "GPU f16 solves/s",
            "f16 error",
            "precompute on",
            "form factors ms",
            "U, V^T U ms",
            "inverse ms",
            "Y ms",
        ],
    );
    let bar = progress(sizes.len() as u64, "radiosity sizes");
    let rows = solve_table(backend, sizes, &opts, &bar_progress(&bar), &mut |_| {})?;
    bar.finish_and_clear();
    for r in &rows {
        solve_rows(&mut t, r);
    }
    t.note(
        "Y: the paper's form, n x 3k; F, W: Y_ch = -diag(rho_ch) F W_ch, F n x k and W 3 x k x k (rows padded to 8)",
    );
    t.note("GPU / copy: the copy kernel's time moving the bytes read (half read, half written) over the solve's time");
    t.note(
        "f16 error: largest |B(f16) - B(f32)| over the largest |B|; every GPU solve is checked against the CPU's first",
    );
    t.note(format!(
        "form factors: {} samples per element-patch pair; CPU: {} rayon threads",
        o.samples,
        rayon::current_num_threads()
    ));
    if let Some(g) = backend.gpu() {
        t.note(format!(
            "adapter: {}; median of {} runs after {} warm-up",
            g.adapter_name(),
            o.effort.repeats,
            o.effort.warmup
        ));
    }
    let mut tables = vec![t];
    if o.error_side > 0 {
        let bar = progress(0, "low-rank error");
        let (n, rows) = error_table(backend, o.error_side, &PATCH_SIDES, o.samples, &bar_progress(&bar))?;
        bar.finish_and_clear();
        let mut e = Table::new(
            format!("Low-rank error against the full solve (n = {n}, Jacobi to 1e-6)"),
            &["method", "k", "mean rel. error", "max rel. error", "mean rel. error, F summed from the reference"],
        );
        for r in rows {
            e.row(vec![
                r.method.to_string(),
                r.k.to_string(),
                format!("{}%", sig(100.0 * r.mean_relative)),
                format!("{}%", sig(100.0 * r.max_relative)),
                format!("{}%", sig(100.0 * r.mean_relative_aggregated)),
            ]);
        }
        e.note("relative error per element: |B - B_ref|_1 / |B_ref|_1 over RGB; 2MCE from 3 x 3 patches per wall to the nearest k");
        tables.push(e);
    }
    Ok(tables)
}
