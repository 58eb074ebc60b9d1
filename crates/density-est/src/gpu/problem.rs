//! A problem made on the GPU (`density/problem.wgsl`): photon flights and query disks that
//! never left the device become a [`GpuProblem`]. What [`Problem::prepare`](crate::Problem)
//! derives on the host is derived there: `disk_data` makes each disk's unit normal, plane
//! tolerance and box, and reduces, with `segment_bounds`, the box of everything, the largest
//! segment power and the box of the disk centres into a few words. The host reads those
//! words (and the number of disks), derives the padding and the fixed-point scale exactly
//! as the host path does, and `pad_boxes` grows the disk boxes.

use std::sync::Arc;

use glam::Vec3;
use lumbre_gpu::{Buffer, Error, Recorder, Report, Result, pieces, wgpu};
use lumbre_kdtree::Aabb;
use lumbre_shaders::density::PROBLEM;

use super::disks::GpuDisks;
use super::photons::GpuPhotons;
use super::{GpuProblem, Layout};
use crate::bvh::build::centre_grid_of;
use crate::problem::{DiskData, frame};

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    count: u32,
    pad: f32,
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::density::PROBLEM_PARAMS_SIZE);

const WG: usize = 256;

/// Words of `stats` (see the shader): bounds, largest power, disks, centres' bounds.
const STATS: usize = 16;
const STAT_POWER: usize = 6;
const STAT_DISKS: usize = 7;
const STAT_CENTRES: usize = 8;

/// The inverse of the shader's order-preserving `encode`.
fn decode(u: u32) -> f32 {
    if u & 0x8000_0000 != 0 { f32::from_bits(u & 0x7fff_ffff) } else { f32::from_bits(!u) }
}

/// The box of six encoded words (lo xyz, hi xyz).
fn decode_box(w: &[u32]) -> Aabb {
    let v = |k: usize| Vec3::new(decode(w[k]), decode(w[k + 1]), decode(w[k + 2]));
    Aabb::new(v(0), v(3))
}

/// The shader's bindings in order.
fn bindings<'a>(
    params: &'a wgpu::Buffer,
    geom: wgpu::BindingResource<'a>,
    power: wgpu::BindingResource<'a>,
    disks: &'a GpuDisks,
    data: &'a Buffer<DiskData>,
    boxes: &'a Buffer<[f32; 4]>,
    stats: &'a Buffer<u32>,
) -> Vec<wgpu::BindingResource<'a>> {
    vec![params.as_entire_binding(), geom, power, disks.raw.binding(), data.binding(), boxes.binding(), stats.binding()]
}

impl GpuProblem {
    /// The problem of photon flights and disks made on the GPU: derives what every method
    /// needs on the device, submitting what `rec` holds with it, and reads back the few
    /// numbers the host needs (the number of disks, the box of everything, the largest
    /// power, the box of the disk centres: 16 words). The flights and disks stay where they
    /// are; then [`Density`](crate::Density)'s `record` runs any method on the result.
    ///
    /// The fixed-point scale is [`Problem`](crate::Problem)'s, from the largest power and, in
    /// place of the total power, its bound `largest x segments`: the same exponent for fewer
    /// than 2^31 segments, where the total never limits it.
    ///
    /// ```no_run
    /// use lumbre_density::{CameraDiskPass, Density, GpuProblem, PhotonOptions, PhotonTracer};
    /// use lumbre_gpu::{Compute, Gpu};
    /// use lumbre_raytrace::{Camera, Prepared, Scene};
    /// let (scene, _) = Scene::load_obj("testdata/scenes/CornellBox-Diffuse.obj".as_ref()).unwrap();
    /// let prepared = Prepared::new(scene, &Default::default());
    /// let gpu = Gpu::new()?;
    /// let tracer = PhotonTracer { options: PhotonOptions { photons: 10_000, ..Default::default() } };
    /// let pass = CameraDiskPass { camera: Camera::parse("0,1,3.9,0,1,0,0,1,0,40").unwrap(), width: 32, height: 32, radius: 0.05 };
    /// let scene = tracer.upload(&gpu, &prepared)?; // serves both
    /// let mut rec = gpu.recorder();
    /// let disks = pass.record(&mut rec, &scene)?;
    /// let flights = tracer.record(&mut rec, &scene)?;
    /// let problem = GpuProblem::resident(&mut rec, &flights, disks.disks())?;
    /// let density = Density::default();
    /// let estimate = density.record(&mut rec, &problem)?;
    /// rec.submit()?;
    /// let est = density.download(&gpu, &estimate)?;
    /// assert_eq!(est.count.len(), problem.disks());
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn resident(rec: &mut Recorder, flights: &GpuPhotons, disks: &GpuDisks) -> Result<GpuProblem> {
        let gpu = rec.gpu().clone();
        let slots = disks.capacity.max(1);
        let data = gpu.zeroed::<DiskData>(slots)?;
        let boxes = gpu.zeroed::<[f32; 4]>(2 * slots)?;
        let stats = gpu.zeroed::<u32>(STATS)?;
        let stand_in = gpu.zeroed::<[f32; 4]>(2)?;
        let segments = flights.segments;
        let params = |count: usize, pad: f32| gpu.uniform(&Params { count: count as u32, pad, _pad: [0; 2] });
        let all = params(0, 0.0)?;
        rec.dispatch(
            "prepare",
            &gpu.kernel(&PROBLEM, "stats_init")?,
            &bindings(&all, stand_in.binding(), stand_in.binding(), disks, &data, &boxes, &stats),
            1,
        )?;
        rec.copy_range(&disks.count, 0, &stats, STAT_DISKS, 1)?;
        let kernel = gpu.kernel(&PROBLEM, "segment_bounds")?;
        for (start, len) in pieces(segments, gpu.piece_len(32, WG)) {
            let p = params(len, 0.0)?;
            let geom = flights.geom.binding_range(2 * start..2 * (start + len));
            let power = flights.power.binding_range(start..start + len);
            rec.dispatch(
                "prepare",
                &kernel,
                &bindings(&p, geom, power, disks, &data, &boxes, &stats),
                len.div_ceil(WG) as u64,
            )?;
        }
        let p = params(disks.capacity, 0.0)?;
        let res = bindings(&p, stand_in.binding(), stand_in.binding(), disks, &data, &boxes, &stats);
        rec.dispatch("prepare", &gpu.kernel(&PROBLEM, "disk_data")?, &res, disks.capacity.div_ceil(WG) as u64)?;
        let mut report = Report::default();
        super::flush(rec, "prepare", &mut report)?;
        let w = gpu.download(&stats)?;
        let n = w[STAT_DISKS] as usize;
        if n > disks.capacity {
            return Err(Error::Validation(format!("{n} disks in {} slots", disks.capacity)));
        }
        let max_power = f32::from_bits(w[STAT_POWER]);
        let f = frame(decode_box(&w[0..6]), max_power, max_power as f64 * segments as f64);
        let centres = if n == 0 { Aabb::new(Vec3::ZERO, Vec3::ZERO) } else { decode_box(&w[STAT_CENTRES..]) };
        let p = params(disks.capacity, f.pad)?;
        let res = bindings(&p, stand_in.binding(), stand_in.binding(), disks, &data, &boxes, &stats);
        rec.dispatch("prepare", &gpu.kernel(&PROBLEM, "pad_boxes")?, &res, disks.capacity.div_ceil(WG) as u64)?;
        drop(res);
        let layout = Layout { disks: n, frame: f, centre_grid: centre_grid_of(&centres, f.pad), host_disks: None };
        Ok(GpuProblem {
            seg_geom: flights.geom.clone(),
            seg_power: flights.power.clone(),
            disks: data,
            disk_boxes: boxes,
            segments,
            layout: Arc::new(layout),
            report,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_inverts_the_order_preserving_words() {
        let encode = |f: f32| {
            let b = f.to_bits();
            if b & 0x8000_0000 == 0 { b | 0x8000_0000 } else { !b }
        };
        for f in [0.0f32, -0.0, 1.5, -1.5, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, -3e38] {
            assert_eq!(decode(encode(f)).to_bits(), f.to_bits());
        }
        // The shader's empty words decode to the empty box.
        assert_eq!(decode(0xff80_0000), f32::INFINITY);
        assert_eq!(decode(0x007f_ffff), f32::NEG_INFINITY);
        assert!(encode(-1.0) < encode(-0.5) && encode(-0.5) < encode(0.0) && encode(0.0) < encode(2.0));
    }
}
