//! `lumbre info`: every adapter, the chosen one, its features and limits.

use clap::Args;
use lumbre_gpu::{Gpu, GpuOptions, adapters};

use crate::error::Result;
use crate::out::out;
use crate::table::Table;

/// List adapters with their indices (for --adapter) and show the chosen one's features and limits.
#[derive(Args)]
pub struct InfoArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// Every adapter, numbered by the index `--adapter` and `LUMBRE_ADAPTER=#N` take.
pub fn adapter_table() -> Table {
    let mut t = Table::new("Adapters", &["#", "name", "type", "backend", "driver"]);
    for (i, a) in adapters().into_iter().enumerate() {
        t.row(vec![i.to_string(), a.name, format!("{:?}", a.device_type), format!("{:?}", a.backend), a.driver]);
    }
    if t.rows.is_empty() {
        t.note(format!("no adapter: {}", lumbre_gpu::NO_ADAPTER_HINT));
    }
    t
}

pub fn chosen_table(gpu: &Gpu) -> Table {
    let l = gpu.limits();
    let a = gpu.adapter();
    let mut t = Table::new("Chosen adapter", &["property", "value"]);
    let mut kv = |k: &str, v: String| t.row(vec![k.to_string(), v]);
    if let Some(i) = gpu.adapter_index() {
        kv("index", i.to_string());
    }
    kv("name", a.name.clone());
    kv("type", format!("{:?}", a.device_type));
    kv("backend", format!("{:?}", a.backend));
    kv("driver", a.driver.clone());
    let names: Vec<&str> = gpu.features().iter_names().map(|(n, _)| n).collect();
    kv("optional features", if names.is_empty() { "none".into() } else { names.join(" ") });
    if gpu.has_subgroups() {
        let (lo, hi) = gpu.subgroup_size_range();
        kv("subgroup size", format!("{lo}..={hi}"));
    }
    kv("max_storage_buffer_binding_size", l.max_storage_buffer_binding_size.to_string());
    kv("max_buffer_size", l.max_buffer_size.to_string());
    kv("max_compute_workgroups_per_dimension", l.max_compute_workgroups_per_dimension.to_string());
    kv("max_compute_invocations_per_workgroup", l.max_compute_invocations_per_workgroup.to_string());
    kv("max_compute_workgroup_storage_size", l.max_compute_workgroup_storage_size.to_string());
    kv("max_storage_buffers_per_shader_stage", l.max_storage_buffers_per_shader_stage.to_string());
    kv("min_storage_buffer_offset_alignment", l.min_storage_buffer_offset_alignment.to_string());
    t
}

impl InfoArgs {
    /// Prints the adapters and the one `opts` chooses; an error, after the tables, when it
    /// chooses none.
    pub fn run(self, opts: &GpuOptions) -> Result<()> {
        let adapters = adapter_table();
        let chosen = Gpu::with_options(opts);
        if self.json {
            let chosen_json = match &chosen {
                Ok(gpu) => chosen_table(gpu).json(),
                Err(e) => crate::table::json_string(&e.to_string()),
            };
            out!("{{\"adapters\": {}, \"chosen\": {}}}", adapters.json(), chosen_json)?;
        } else {
            crate::out::text(&adapters.text())?;
            out!()?;
            match &chosen {
                Ok(gpu) => crate::out::text(&chosen_table(gpu).text())?,
                Err(e) => out!("no adapter chosen: {e}")?,
            }
        }
        chosen?;
        Ok(())
    }
}
