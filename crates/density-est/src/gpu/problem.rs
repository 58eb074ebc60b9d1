//! A [`Problem`] on the GPU: uploaded from the host, or made there (`density/problem.wgsl`)
//! from photon flights and query disks that never left the device. What
//! [`Problem::prepare`] derives on the host is derived there: `disk_data` makes each disk's
//! unit normal, plane tolerance and box, and reduces, with `segment_bounds`, the box of
//! everything, the largest segment power and the box of the disk centres into a few words.
//! The host reads those words (and the number of disks), derives the padding and the
//! fixed-point scale exactly as the host path does, and `pad_boxes` grows the disk boxes.

use std::sync::Arc;

use glam::Vec3;
use lumbre_gpu::{Buffer, Error, Fit, Gpu, Recorder, Report, Result, pieces, wgpu};
use lumbre_kdtree::Aabb;
use lumbre_shaders::density::PROBLEM;

use crate::bvh::build::{centre_grid, centre_grid_of};
use crate::fixed::pow2;
use crate::gpu::disks::GpuDisks;
use crate::gpu::photons::GpuPhotons;
use crate::ordered::decode_box;
use crate::problem::{DiskData, Frame, Problem, frame};

/// What the host knows of a problem on the GPU: sizes, the frame every method derives from
/// the whole input, the box of the disk centres, and the disks themselves when they came
/// from the host (disks made on the GPU are read back with the result).
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub disks: usize,
    pub frame: Frame,
    /// `(min, 1024 / size)` of the disk centres, for Morton codes ([`centre_grid`]).
    pub centre_grid: (Vec3, Vec3),
    pub host_disks: Option<Arc<Vec<DiskData>>>,
}

/// A [`Problem`] on the GPU: segments (geometry and power), disks (with their boxes), and
/// what the host derived from them. Made by [`Compute::upload`](lumbre_gpu::Compute::upload)
/// of [`Density`](crate::Density) from a problem on the host, or by
/// [`GpuProblem::resident`] from photon flights and disks made on the GPU; see
/// [`GpuProblem::segments`].
#[derive(Clone, Debug)]
pub struct GpuProblem {
    /// Two vec4s per segment: start (w unused), end (w unused).
    pub(crate) seg_geom: Buffer<[f32; 4]>,
    /// One vec4 per segment: RGB power, w unused.
    pub(crate) seg_power: Buffer<[f32; 4]>,
    /// Two vec4s per disk ([`DiskData`]).
    pub(crate) disks: Buffer<DiskData>,
    /// Two vec4s per disk: the box's min corner, then its max corner (w unused).
    pub(crate) disk_boxes: Buffer<[f32; 4]>,
    pub(crate) segments: usize,
    pub(crate) layout: Arc<Layout>,
    /// Submissions made to derive it on the GPU ([`GpuProblem::resident`]).
    pub(crate) report: Report,
}

impl GpuProblem {
    /// Number of segments.
    ///
    /// ```no_run
    /// use lumbre_density::{Density, Problem};
    /// use lumbre_gpu::{Compute, Gpu};
    /// let on_gpu = Density::default().upload(&Gpu::new()?, &Problem::default())?;
    /// assert_eq!((on_gpu.segments(), on_gpu.disks()), (0, 0));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// Number of disks.
    pub fn disks(&self) -> usize {
        self.layout.disks
    }

    /// The fixed-point scale `2^k` of the problem's power sums.
    pub(crate) fn scale(&self) -> f32 {
        pow2(self.layout.frame.scale_exp)
    }
}

/// Uploads a problem (validated and prepared on the host).
pub(crate) fn upload(gpu: &Gpu, input: &Problem) -> Result<GpuProblem> {
    let prep = input.prepare()?;
    let mut geom = Vec::with_capacity(2 * input.segments.len().max(1));
    let mut power = Vec::with_capacity(input.segments.len().max(1));
    for s in &input.segments {
        geom.push(s.start.extend(0.0).to_array());
        geom.push(s.end.extend(0.0).to_array());
        power.push([s.power[0], s.power[1], s.power[2], 0.0]);
    }
    let boxes: Vec<[f32; 4]> =
        prep.disk_boxes.iter().flat_map(|b| [b.min.extend(0.0).to_array(), b.max.extend(0.0).to_array()]).collect();
    let or_one = |mut v: Vec<[f32; 4]>, n: usize| {
        v.resize(v.len().max(n), [0.0; 4]);
        v
    };
    let mut disks = prep.disks.clone();
    disks.resize(disks.len().max(1), DiskData::default());
    let layout = Layout {
        disks: prep.disks.len(),
        frame: Frame { root: prep.root, pad: prep.pad, scale_exp: prep.scale_exp },
        centre_grid: centre_grid(&prep),
        host_disks: Some(Arc::new(prep.disks)),
    };
    Ok(GpuProblem {
        seg_geom: gpu.upload_fit(&or_one(geom, 2), Fit::Pieces)?,
        seg_power: gpu.upload_fit(&or_one(power, 1), Fit::Pieces)?,
        disks: gpu.upload(&disks)?,
        disk_boxes: gpu.upload(&or_one(boxes, 2))?,
        segments: input.segments.len(),
        layout: Arc::new(layout),
        report: Report::default(),
    })
}

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
        Self::resident_at(rec, flights, disks, None)
    }

    /// [`resident`](GpuProblem::resident) with power sums in units of `2^-scale_exp`
    /// (`None`: the exponent of these flights, as `resident` derives it).
    pub(crate) fn resident_at(
        rec: &mut Recorder,
        flights: &GpuPhotons,
        disks: &GpuDisks,
        scale_exp: Option<i32>,
    ) -> Result<GpuProblem> {
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
        crate::gpu::flush(rec, "prepare", &mut report)?;
        let w = gpu.download(&stats)?;
        let n = w[STAT_DISKS] as usize;
        if n > disks.capacity {
            return Err(Error::Validation(format!("{n} disks in {} slots", disks.capacity)));
        }
        let max_power = f32::from_bits(w[STAT_POWER]);
        let mut f = frame(decode_box(&w[0..6]), max_power, max_power as f64 * segments as f64);
        if let Some(k) = scale_exp {
            f.scale_exp = k;
        }
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
