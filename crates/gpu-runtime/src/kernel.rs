//! Compute kernels: compiled once per context and cached; dispatch grids folded to 2D.

use std::sync::atomic::Ordering;

use lumbre_shaders::{Requirement, Shader};

use crate::{Error, Gpu, Result};

/// A compiled compute pipeline and its bind group layout (group 0).
///
/// ```no_run
/// let gpu = lumbre_gpu::Gpu::new()?;
/// let copy = gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main")?;
/// let again = gpu.kernel(&lumbre_shaders::runtime::COPY_VEC4, "main")?; // from the cache
/// assert_eq!(gpu.compiled_pipelines(), 1);
/// # let _ = (copy, again);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The pipeline.
    pub pipeline: wgpu::ComputePipeline,
    /// Layout of bind group 0, derived from the shader.
    pub layout: wgpu::BindGroupLayout,
    /// `shader/entry`, for labels and errors.
    pub name: &'static str,
    /// The `@group(0)` bindings the entry point uses (from naga's reflection at build time).
    pub bindings: &'static [u32],
}

fn feature_of(r: Requirement) -> (wgpu::Features, &'static str) {
    match r {
        Requirement::Subgroups => (wgpu::Features::SUBGROUP, "SUBGROUP"),
        Requirement::Int64 => (wgpu::Features::SHADER_INT64, "SHADER_INT64"),
        Requirement::SubgroupBarrier => (wgpu::Features::SUBGROUP_BARRIER, "SUBGROUP_BARRIER"),
    }
}

impl Gpu {
    /// Whether the device has every feature `shader` requires.
    pub fn supports(&self, shader: &Shader) -> bool {
        shader.requires.iter().all(|r| self.has(feature_of(*r).0))
    }

    /// The kernel for `entry` of `shader`, compiled on first use and cached per context.
    pub fn kernel(&self, shader: &Shader, entry: &'static str) -> Result<Kernel> {
        let key = (shader.name, entry);
        if let Some(k) = self.0.kernels.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(k);
        }
        for r in shader.requires {
            let (feature, name) = feature_of(*r);
            if !self.has(feature) {
                return Err(Error::MissingFeature { what: format!("shader {}", shader.name), feature: name.into() });
            }
        }
        let Some(bindings) = shader.bindings_of(entry) else {
            return Err(Error::Input(format!("shader {} has no entry point {entry}", shader.name)));
        };
        let name: &'static str = Box::leak(format!("{}/{entry}", shader.name).into_boxed_str());
        let kernel = self.scoped(|| {
            let module = self.device().create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(shader.name),
                source: wgpu::ShaderSource::Wgsl(shader.source.into()),
            });
            let pipeline = self.device().create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: self.0.disk_cache.as_ref().map(|c| &c.cache),
            });
            let layout = pipeline.get_bind_group_layout(0);
            Ok(Kernel { pipeline, layout, name, bindings })
        })?;
        self.0.compiles.fetch_add(1, Ordering::Relaxed);
        if let Some(c) = &self.0.disk_cache {
            c.touch();
        }
        if let Ok(mut m) = self.0.kernels.lock() {
            m.insert(key, kernel.clone());
        }
        Ok(kernel)
    }

    /// A bind group for `kernel`: `resources[i]` is binding `i` of the shader. Entry points
    /// that use only some of a shader's bindings get only those, so every entry point of a
    /// shader takes the same list (in the order of its CPU twin's arguments).
    pub fn bind(&self, kernel: &Kernel, resources: &[wgpu::BindingResource<'_>]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = resources
            .iter()
            .enumerate()
            .filter(|(i, _)| kernel.bindings.contains(&(*i as u32)))
            .map(|(i, r)| wgpu::BindGroupEntry { binding: i as u32, resource: r.clone() })
            .collect();
        self.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name),
            layout: &kernel.layout,
            entries: &entries,
        })
    }

    /// The grid for `groups` workgroups: 1D up to the per-dimension limit, else folded into
    /// 2D (`x * y >= groups`; shaders use `flat_workgroup` and check bounds).
    ///
    /// ```no_run
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// assert_eq!(gpu.grid(10)?, (10, 1, 1));
    /// let (x, y, _) = gpu.grid(1 << 20)?;
    /// assert!(x as u64 * y as u64 >= 1 << 20);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn grid(&self, groups: u64) -> Result<(u32, u32, u32)> {
        grid(groups, self.limits().max_compute_workgroups_per_dimension)
    }
}

/// Folds `groups` workgroups into `(x, y, 1)` with `x, y <= max_dim` and `x * y >= groups`,
/// keeping the overshoot below `y`.
///
/// ```
/// assert_eq!(lumbre_gpu::grid(70_000, 65_535).unwrap(), (35_000, 2, 1));
/// assert!(lumbre_gpu::grid(u64::MAX, 65_535).is_err());
/// ```
pub fn grid(groups: u64, max_dim: u32) -> Result<(u32, u32, u32)> {
    let max = max_dim as u64;
    if groups <= max {
        return Ok((groups as u32, 1, 1));
    }
    let y = groups.div_ceil(max);
    if y > max {
        return Err(Error::LimitExceeded {
            what: format!("dispatch of {groups} workgroups"),
            limit: "max_compute_workgroups_per_dimension (squared)",
            requested: groups,
            max: max * max,
        });
    }
    let x = groups.div_ceil(y);
    Ok((x as u32, y as u32, 1))
}
