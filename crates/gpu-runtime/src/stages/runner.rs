//! Stages one at a time, each on the GPU or as its CPU twin, with every buffer kept where
//! it was last written and moved (whole) only when a stage on the other side binds it.

use std::ops::Range;

use bytemuck::Pod;

use super::{Bind, Stage, StageRun, bind_group, check_binds, not_ours};
use crate::{Buffer, Error, Fit, Gpu, Recorder, Result};

/// Where a buffer's current contents are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fresh {
    Both,
    Host,
    Device,
}

/// A buffer as words on the host, and on the GPU once a GPU stage bound it.
struct Slot {
    host: Vec<u32>,
    device: Option<Buffer<u32>>,
    fresh: Fresh,
}

/// Which stages run on the CPU, by shader name and entry point.
pub(super) type Placement = Box<dyn Fn(&str, &str) -> bool>;

pub(super) struct Runner {
    gpu: Option<Gpu>,
    on_cpu: Placement,
    slots: Vec<Slot>,
    history: Vec<StageRun>,
    /// Binding size and offset alignment (bytes) that cut buffers into pieces without a GPU.
    cpu_binding: (u64, u64),
}

impl Runner {
    pub(super) fn cpu(binding_bytes: u64) -> Self {
        Runner {
            gpu: None,
            on_cpu: Box::new(|_, _| true),
            slots: Vec::new(),
            history: Vec::new(),
            cpu_binding: (binding_bytes, 256),
        }
    }

    pub(super) fn gpu(gpu: &Gpu, on_cpu: Placement) -> Self {
        Runner { gpu: Some(gpu.clone()), on_cpu, ..Runner::cpu(0) }
    }

    pub(super) fn gpu_ref(&self) -> Option<&Gpu> {
        self.gpu.as_ref()
    }

    pub(super) fn history(&self) -> &[StageRun] {
        &self.history
    }

    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    pub(super) fn len(&self, id: usize) -> usize {
        self.slots[id].host.len()
    }

    /// A new buffer holding `words`; returns its id.
    pub(super) fn push(&mut self, words: Vec<u32>) -> usize {
        self.slots.push(Slot { host: words, device: None, fresh: Fresh::Host });
        self.slots.len() - 1
    }

    /// A new buffer whose contents are `device`'s.
    pub(super) fn adopt(&mut self, device: Buffer<u32>) -> Result<usize> {
        if self.gpu.is_none() {
            return Err(Error::Input("stages without a GPU cannot take a GPU buffer".into()));
        }
        self.slots.push(Slot { host: vec![0; device.len()], device: Some(device), fresh: Fresh::Device });
        Ok(self.slots.len() - 1)
    }

    /// The GPU copy of buffer `id`, made current.
    pub(super) fn device(&mut self, id: usize) -> Result<Buffer<u32>> {
        let Some(gpu) = self.gpu.clone() else {
            return Err(Error::Input("stages without a GPU have no GPU buffers".into()));
        };
        self.sync_device(&gpu, id)
    }

    /// Words `range` of buffer `id`, made current on the host.
    pub(super) fn read(&mut self, id: usize, range: Range<usize>) -> Result<Vec<u32>> {
        self.sync_host(id)?;
        Ok(self.slots[id].host[range].to_vec())
    }

    pub(super) fn clear(&mut self, id: usize) {
        if let Some(slot) = self.slots.get_mut(id) {
            slot.host.fill(0);
            slot.fresh = Fresh::Host;
        }
    }

    pub(super) fn copy(&mut self, src: usize, src_at: usize, dst: usize, dst_at: usize, words: usize) -> Result<()> {
        self.sync_host(src)?;
        self.sync_host(dst)?;
        let data = self.slots[src].host[src_at..src_at + words].to_vec();
        let slot = &mut self.slots[dst];
        slot.host[dst_at..dst_at + words].copy_from_slice(&data);
        slot.fresh = Fresh::Host;
        Ok(())
    }

    /// Whether the stage `(shader, entry)` runs as its twin; records it in the history.
    fn place(&mut self, shader: &'static str, entry: &'static str) -> Option<Gpu> {
        let on_cpu = self.gpu.is_none() || (self.on_cpu)(shader, entry);
        self.history.push(StageRun { shader, entry, on_cpu });
        if on_cpu { None } else { self.gpu.clone() }
    }

    pub(super) fn dispatch<P: Pod>(
        &mut self,
        label: &'static str,
        stage: &Stage,
        params: &P,
        binds: &[Bind],
        workgroups: u64,
        twin: impl FnOnce(&P, &mut [Vec<u32>]),
    ) -> Result<()> {
        check_binds(stage, binds, self.slots.len())?;
        let Some(gpu) = self.place(stage.shader.name, stage.entry) else {
            return self.run_twin(binds, |views| twin(params, views));
        };
        let mut bound = Vec::with_capacity(binds.len());
        for b in binds {
            bound.push((self.sync_device(&gpu, b.id)?, self.clip(b)));
        }
        let uniform = gpu.uniform(params)?;
        let kernel = gpu.kernel(&stage.shader, stage.entry)?;
        let mut rec = gpu.recorder();
        if workgroups > 0 {
            let grid = gpu.grid(workgroups)?;
            let bind = bind_group(&gpu, &kernel, &uniform, bound.iter().map(|(b, r)| b.binding_range(r.clone())));
            rec.dispatch_bound(label, &kernel, &bind, grid);
        }
        rec.submit()?;
        // Which bindings the kernel writes is not known: any may have changed.
        for b in binds {
            self.slots[b.id].fresh = Fresh::Device;
        }
        Ok(())
    }

    /// A recorded stage (see [`Stages::recorded`](super::Stages::recorded)); returns the
    /// output's id and length.
    pub(super) fn recorded<T: Pod>(
        &mut self,
        (shader, entry): (&'static str, &'static str),
        inputs: &[Bind],
        record: impl FnOnce(&mut Recorder, &[Buffer<u32>]) -> Result<Buffer<T>>,
        twin: impl FnOnce(&[Vec<u32>]) -> Result<Vec<T>>,
    ) -> Result<(usize, usize)> {
        let Some(gpu) = self.place(shader, entry) else {
            let mut views = Vec::with_capacity(inputs.len());
            for b in inputs {
                views.push(self.read(b.id, b.words.clone())?);
            }
            let out = twin(&views)?;
            return Ok((self.push(bytemuck::cast_slice(&out).to_vec()), out.len()));
        };
        let mut buffers = Vec::with_capacity(inputs.len());
        for b in inputs {
            buffers.push(self.sync_device(&gpu, b.id)?);
        }
        let mut rec = gpu.recorder();
        let out = record(&mut rec, &buffers)?;
        rec.submit()?;
        let len = out.len();
        Ok((self.adopt(out.cast()?)?, len))
    }

    /// Words of `bind`, clipped to its buffer's length.
    fn clip(&self, bind: &Bind) -> Range<usize> {
        let len = self.len(bind.id);
        bind.words.start.min(len)..bind.words.end.min(len)
    }

    fn run_twin(&mut self, binds: &[Bind], twin: impl FnOnce(&mut [Vec<u32>])) -> Result<()> {
        let mut views = Vec::with_capacity(binds.len());
        for b in binds {
            let r = self.clip(b);
            views.push(self.read(b.id, r)?);
        }
        twin(&mut views);
        for (b, v) in binds.iter().zip(views) {
            let r = self.clip(b);
            if v.len() != r.len() {
                return Err(Error::Input(format!("a twin changed the length of a binding of {} words", r.len())));
            }
            let slot = &mut self.slots[b.id];
            if slot.host[r.clone()] != v[..] {
                slot.host[r].copy_from_slice(&v);
                slot.fresh = Fresh::Host;
            }
        }
        Ok(())
    }

    /// Makes the host copy of buffer `id` current.
    fn sync_host(&mut self, id: usize) -> Result<()> {
        let slot = self.slots.get_mut(id).ok_or_else(|| not_ours(id))?;
        if slot.fresh == Fresh::Device {
            let (Some(gpu), Some(dev)) = (&self.gpu, &slot.device) else {
                return Err(Error::Input("a buffer written on the GPU of stages without one".into()));
            };
            slot.host = gpu.download(dev)?;
            slot.fresh = Fresh::Both;
        }
        Ok(())
    }

    /// Makes the GPU copy of buffer `id` current; returns it.
    fn sync_device(&mut self, gpu: &Gpu, id: usize) -> Result<Buffer<u32>> {
        let slot = self.slots.get_mut(id).ok_or_else(|| not_ours(id))?;
        let dev = match slot.device.take() {
            Some(dev) => dev,
            None => gpu.zeroed_fit::<u32>(slot.host.len(), Fit::Pieces)?,
        };
        if slot.fresh == Fresh::Host {
            gpu.write(&dev, 0, &slot.host)?;
            slot.fresh = Fresh::Both;
        }
        slot.device = Some(dev.clone());
        Ok(dev)
    }

    pub(super) fn piece_len(&self, elem_bytes: usize, tile: usize) -> usize {
        if let Some(gpu) = &self.gpu {
            return gpu.piece_len(elem_bytes, tile);
        }
        let (max, align) = (self.cpu_binding.0 as usize / elem_bytes, self.cpu_binding.1 as usize);
        let step = align / gcd(align, elem_bytes);
        let unit = tile / gcd(tile, step) * step;
        (max / unit * unit).max(unit)
    }

    pub(super) fn binding_alignment(&self) -> u64 {
        match &self.gpu {
            Some(gpu) => gpu.limits().min_storage_buffer_offset_alignment as u64,
            None => self.cpu_binding.1,
        }
    }

    pub(super) fn max_binding(&self) -> u64 {
        match &self.gpu {
            Some(gpu) => gpu.limits().max_storage_buffer_binding_size,
            None => self.cpu_binding.0,
        }
    }

    pub(super) fn check_size(&self, what: &str, bytes: u64, fit: Fit) -> Result<()> {
        match &self.gpu {
            Some(gpu) => gpu.check_size(what, bytes, fit),
            None if fit == Fit::Binding && bytes > self.cpu_binding.0 => Err(Error::LimitExceeded {
                what: what.into(),
                limit: "max_storage_buffer_binding_size",
                requested: bytes,
                max: self.cpu_binding.0,
            }),
            None => Ok(()),
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}
