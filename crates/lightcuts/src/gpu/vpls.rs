//! VPLs on the GPU: `lightcuts/vpls.wgsl` (slots, then a stable compaction of the filled
//! ones and a gather), the twin of `vpls.rs`, and the layout every kernel reads lights in.

use glam::Vec3;
use lumbre_compact::{Compact, Emit, GpuStream, Select};
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};
use lumbre_raytrace::twin::{GpuEmitters, ROULETTE_SURVIVAL};
use lumbre_raytrace::{GpuScene, Prepared};

use crate::gpu::scene::query_flags;
use crate::vpls::{DIRECT_STREAM, Vpl, VplPass, emitters};

/// A VPL as the GPU holds it: position, normal and intensity, each padded to a vec4 (48
/// bytes, the layout every lightcuts kernel reads lights in).
///
/// ```
/// use glam::Vec3;
/// use lumbre_lightcuts::{GpuVpl, Vpl};
/// let g = GpuVpl::from(&Vpl { position: Vec3::X, normal: Vec3::Y, intensity: Vec3::Z });
/// assert_eq!(g.normal, [0.0, 1.0, 0.0, 0.0]);
/// assert_eq!(size_of::<GpuVpl>(), 48);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuVpl {
    /// Position, w 0.
    pub position: [f32; 4],
    /// Unit normal, w 0.
    pub normal: [f32; 4],
    /// Intensity, w 0.
    pub intensity: [f32; 4],
}

impl From<&Vpl> for GpuVpl {
    fn from(v: &Vpl) -> GpuVpl {
        let pad = |a: Vec3| [a.x, a.y, a.z, 0.0];
        GpuVpl { position: pad(v.position), normal: pad(v.normal), intensity: pad(v.intensity) }
    }
}

impl Vpl {
    /// The GPU layout ([`GpuVpl`]: position, normal and intensity, each padded to a vec4).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lumbre_lightcuts::Vpl;
    /// let v = Vpl { position: Vec3::new(1.0, 2.0, 3.0), normal: Vec3::Y, intensity: Vec3::ONE };
    /// assert_eq!(v.to_gpu().position, [1.0, 2.0, 3.0, 0.0]);
    /// assert_eq!(Vpl::from_gpu(&v.to_gpu()), v);
    /// ```
    pub fn to_gpu(&self) -> GpuVpl {
        GpuVpl::from(self)
    }

    /// From the GPU layout.
    pub fn from_gpu(g: &GpuVpl) -> Vpl {
        let v = |a: [f32; 4]| Vec3::new(a[0], a[1], a[2]);
        Vpl { position: v(g.position), normal: v(g.normal), intensity: v(g.intensity) }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    bmin: [f32; 3],
    direct: u32,
    bmax: [f32; 3],
    paths: u32,
    eps: f32,
    seed: u32,
    bounces: u32,
    flags: u32,
    far: f32,
    emitters: u32,
    direct_seed: u32,
    rr_depth: u32,
    survive_min: f32,
    survive_max: f32,
    _pad: [u32; 2],
}
const _: () = assert!(
    size_of::<Params>() == lumbre_shaders::lightcuts::VPLS_KD_PARAMS_SIZE
        && size_of::<Params>() == lumbre_shaders::lightcuts::VPLS_BVH_PARAMS_SIZE
);

/// Threads per workgroup of `vpls.wgsl`.
const WG: u64 = 256;

/// A scene with its emitters on the GPU: what VPLs are made from.
#[derive(Clone, Debug)]
pub struct GpuVplScene {
    /// The scene.
    pub scene: GpuScene,
    /// Its emitters.
    pub emitters: GpuEmitters,
}

impl GpuVplScene {
    /// Uploads a scene and its emitters (an error when it has none).
    pub fn upload(gpu: &Gpu, p: &Prepared) -> Result<GpuVplScene> {
        Ok(GpuVplScene { scene: GpuScene::upload(gpu, p)?, emitters: GpuEmitters::upload(gpu, &emitters(p)?)? })
    }
}

/// VPLs on the GPU: the first `count` entries of `vpls` (`count` lives on the GPU).
#[derive(Clone, Debug)]
pub struct GpuVplList {
    /// The VPLs, as long as the slots.
    pub vpls: Buffer<GpuVpl>,
    /// Their number (one word).
    pub count: Buffer<u32>,
}

impl GpuVplList {
    /// Reads the number of VPLs back (a wait for the GPU).
    pub fn read_count(&self, gpu: &Gpu) -> Result<u32> {
        Ok(gpu.download(&self.count)?[0])
    }
}

impl VplPass {
    /// Records the VPLs of an uploaded scene.
    pub fn record_vpls(&self, rec: &mut Recorder, s: &GpuVplScene) -> Result<GpuVplList> {
        let o = &self.options;
        o.validate()?;
        if s.emitters.count == 0 {
            return Err(Error::Input("the scene has no emitters: VPLs come from area lights".into()));
        }
        let gpu = rec.gpu().clone();
        let slots = o.slots() as usize;
        let slot_data = gpu.zeroed::<GpuVpl>(slots)?;
        let filled = gpu.zeroed::<u32>(slots)?;
        let vpls = gpu.zeroed::<GpuVpl>(slots)?;
        let b = s.scene.bounds();
        let params = gpu.uniform(&Params {
            bmin: b.min.to_array(),
            direct: o.direct,
            bmax: b.max.to_array(),
            paths: o.paths,
            eps: s.scene.eps,
            seed: o.seed,
            bounces: o.bounces,
            flags: query_flags(&self.query),
            far: f32::INFINITY,
            emitters: s.emitters.count,
            direct_seed: o.seed ^ DIRECT_STREAM,
            rr_depth: o.rr_depth,
            survive_min: ROULETTE_SURVIVAL.0,
            survive_max: ROULETTE_SURVIVAL.1,
            _pad: [0; 2],
        })?;
        let shader = s.scene.structure.pick(lumbre_shaders::lightcuts::VPLS_KD, lumbre_shaders::lightcuts::VPLS_BVH);
        let main = gpu.kernel(&shader, "main")?;
        let gather = gpu.kernel(&shader, "gather")?;
        let slot_words = slot_data.clone().cast::<[f32; 4]>()?;
        let vpl_words = vpls.clone().cast::<[f32; 4]>()?;
        let placeholder = gpu.zeroed::<u32>(1)?;
        let threads = o.direct as u64 + o.paths as u64;
        let stream = GpuStream { values: placeholder.clone(), flags: filled.clone(), len: slots };
        let compact = Compact { select: Select::Flags, emit: Emit::Indices, ..Default::default() };
        // Both entry points take the whole list (in the shader's order); each binds what
        // it uses.
        let [e1, e2, e3] = s.emitters.bindings();
        let res: Vec<_> = [params.as_entire_binding()]
            .into_iter()
            .chain(s.scene.bindings())
            .chain([e1, e2, e3, slot_words.binding(), filled.binding()])
            .collect();
        let mut first = res.to_vec();
        first.extend([placeholder.binding(), placeholder.binding(), vpl_words.binding()]);
        rec.dispatch("vpls", &main, &first, threads.div_ceil(WG))?;
        let picked = compact.record_compact(rec, &stream)?;
        let mut second = res.to_vec();
        second.extend([picked.out.binding(), picked.count.binding(), vpl_words.binding()]);
        rec.dispatch("vpl gather", &gather, &second, (slots as u64).div_ceil(WG))?;
        Ok(GpuVplList { vpls, count: picked.count })
    }
}

impl Compute for VplPass {
    type Input = Prepared;
    type Output = Vec<Vpl>;
    type GpuInput = GpuVplScene;
    type GpuOutput = GpuVplList;

    fn name(&self) -> &'static str {
        "vpls"
    }

    fn cpu_reported(&self, p: &Prepared, progress: &dyn Progress) -> Result<(Vec<Vpl>, Report)> {
        self.run_cpu(p, progress)
    }

    fn upload(&self, gpu: &Gpu, p: &Prepared) -> Result<GpuVplScene> {
        GpuVplScene::upload(gpu, p)
    }

    fn record(&self, rec: &mut Recorder, s: &GpuVplScene) -> Result<GpuVplList> {
        self.record_vpls(rec, s)
    }

    fn download(&self, gpu: &Gpu, out: &GpuVplList) -> Result<Vec<Vpl>> {
        let n = out.read_count(gpu)? as usize;
        if n == 0 {
            return Err(Error::Input("no VPL was made: every light path left the scene".into()));
        }
        Ok(gpu.download_range(&out.vpls, 0..n)?.iter().map(Vpl::from_gpu).collect())
    }

    fn gpu_stats(&self, gpu: &Gpu, out: &GpuVplList) -> Result<Report> {
        let mut report = Report::default();
        report.stat("vpls", out.read_count(gpu)? as f64);
        Ok(report)
    }
}
