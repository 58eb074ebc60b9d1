//! The path tracer on the GPU as a wavefront: `raytrace/wavefront.wgsl`, a pool of paths in
//! flight and one kernel per stage (new paths, extension rays, vertices, shadow rays) with
//! queues between them, optionally sorting the queued rays by origin and direction (our radix
//! sort). It traces the megakernel's paths and adds up to the same sums.

use lumbre_gpu::stages::Stages;
use lumbre_gpu::{Buffer, Gpu, Recorder, Result};

use super::path::{GpuPathScene, Params, RenderSetup};
use crate::path::{PathRender, PathSchedule};

/// Words of the wavefront's counters (`wf` in the shader).
const WF_WORDS: usize = 4;
/// `wf` words: paths handed out so far, and the queue's length in the last round.
const WF_NEXT: usize = 2;
const WF_LAST_QUEUE: usize = 3;

/// Rounds recorded between two looks at whether the render is done.
const ROUNDS_PER_LOOK: u32 = 32;

/// Paths of one run of the pool: the index of a path in a run must fit 31 bits.
const PATHS_PER_RUN: u64 = 1 << 31;

/// The kernels of the wavefront, compiled for the scene's structure.
struct Kernels {
    regen: lumbre_gpu::Kernel,
    queue_args: lumbre_gpu::Kernel,
    extend: lumbre_gpu::Kernel,
    shade: lumbre_gpu::Kernel,
    shadow_args: lumbre_gpu::Kernel,
    shadow: lumbre_gpu::Kernel,
}

impl Kernels {
    fn new(gpu: &Gpu, s: &GpuPathScene) -> Result<Kernels> {
        let shader =
            s.scene.structure.pick(lumbre_shaders::raytrace::WAVEFRONT_KD, lumbre_shaders::raytrace::WAVEFRONT_BVH);
        Ok(Kernels {
            regen: gpu.kernel(&shader, "regen")?,
            queue_args: gpu.kernel(&shader, "queue_args")?,
            extend: gpu.kernel(&shader, "extend")?,
            shade: gpu.kernel(&shader, "shade")?,
            shadow_args: gpu.kernel(&shader, "shadow_args")?,
            shadow: gpu.kernel(&shader, "shadow")?,
        })
    }
}

impl PathRender {
    /// Records the wavefront render: runs of at most 2^31 paths (whole samples of every
    /// pixel) through a pool of `pool` slots, rounds recorded in groups of
    /// [`ROUNDS_PER_LOOK`] with one read of two counters between groups.
    pub(super) fn record_wavefront(
        &self,
        rec: &mut Recorder,
        s: &GpuPathScene,
        setup: &RenderSetup,
        pool: u32,
        reorder: bool,
    ) -> Result<()> {
        let o = &self.options;
        let gpu = rec.gpu().clone();
        let lanes = setup.tiles as u64 * 64;
        if lanes > PATHS_PER_RUN {
            return Err(lumbre_gpu::Error::Input(format!(
                "wavefront path render of {}x{} pixels: at most 2^31 (in 8x8 tiles); the megakernel renders it",
                o.width, o.height
            )));
        }
        let samples_per_run = (PATHS_PER_RUN / lanes).clamp(1, o.spp as u64) as u32;
        let total = lanes * o.spp as u64;
        let slots = (pool as u64).min(total).next_multiple_of(64) as usize;
        gpu.check_size(
            "wavefront paths in flight",
            slots as u64 * PathSchedule::BYTES_PER_PATH,
            lumbre_gpu::Fit::Pieces,
        )?;
        let k = Kernels::new(&gpu, s)?;
        let state = gpu.zeroed::<[u32; 20]>(slots)?;
        let queue = gpu.zeroed::<u32>(slots)?;
        let shadows = gpu.zeroed::<[u32; 32]>(slots)?;
        let wf = gpu.zeroed::<u32>(WF_WORDS)?;
        let args = gpu.zeroed_indirect::<u32>(6)?;
        let hits = gpu.zeroed::<[u32; 4]>(slots)?;
        let keys = gpu.zeroed::<u32>(if reorder { slots } else { 1 })?;
        let mut first = o.first_sample;
        while first < o.first_sample + o.spp {
            let count = samples_per_run.min(o.first_sample + o.spp - first);
            let params: Buffer<Params> = gpu.upload(&[self.params(s, setup, first, count, 0, 1)])?;
            let mut res = self.bindings(s, &setup.out, &params);
            res.truncate(14);
            res.extend([
                state.binding(),
                queue.binding(),
                shadows.binding(),
                wf.binding(),
                hits.binding(),
                keys.binding(),
                args.binding(),
            ]);
            let bind = |kernel: &lumbre_gpu::Kernel| gpu.bind(kernel, &res);
            let (regen, queue_args, extend, shade, shadow_args, shadow) = (
                bind(&k.regen),
                bind(&k.queue_args),
                bind(&k.extend),
                bind(&k.shade),
                bind(&k.shadow_args),
                bind(&k.shadow),
            );
            let regen_grid = gpu.grid(slots.div_ceil(64) as u64)?;
            rec.clear(&wf);
            loop {
                for _ in 0..ROUNDS_PER_LOOK {
                    rec.pass("wavefront new paths", |pass| {
                        pass.set_pipeline(&k.regen.pipeline);
                        pass.set_bind_group(0, &regen, &[]);
                        pass.dispatch_workgroups(regen_grid.0, regen_grid.1, regen_grid.2);
                        pass.set_pipeline(&k.queue_args.pipeline);
                        pass.set_bind_group(0, &queue_args, &[]);
                        pass.dispatch_workgroups(1, 1, 1);
                    });
                    if reorder {
                        lumbre_compact::record_sort_bits(rec, &keys, Some(&queue), 24)?;
                    }
                    rec.pass("wavefront extend", |pass| {
                        pass.set_pipeline(&k.extend.pipeline);
                        pass.set_bind_group(0, &extend, &[]);
                        pass.dispatch_workgroups_indirect(args.raw(), 0);
                    });
                    rec.pass("wavefront shade", |pass| {
                        pass.set_pipeline(&k.shade.pipeline);
                        pass.set_bind_group(0, &shade, &[]);
                        pass.dispatch_workgroups_indirect(args.raw(), 0);
                        pass.set_pipeline(&k.shadow_args.pipeline);
                        pass.set_bind_group(0, &shadow_args, &[]);
                        pass.dispatch_workgroups(1, 1, 1);
                    });
                    rec.pass("wavefront shadow", |pass| {
                        pass.set_pipeline(&k.shadow.pipeline);
                        pass.set_bind_group(0, &shadow, &[]);
                        pass.dispatch_workgroups_indirect(args.raw(), 12);
                    });
                }
                // Done when a round found no path to trace and none left to start (that
                // round's `regen` added the last paths' radiance).
                let mut st = Stages::record(rec);
                let w = st.adopt(&wf)?;
                let c = st.read_range(w, WF_NEXT..WF_LAST_QUEUE + 1)?;
                let paths = lanes * count as u64;
                if c[0] as u64 >= paths && c[1] == 0 {
                    break;
                }
            }
            first += count;
        }
        Ok(())
    }
}
