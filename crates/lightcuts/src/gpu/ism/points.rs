//! Stage 1 on the GPU, the scene's point pool: `lightcuts/ism_points.wgsl`, the twin of
//! `ism/points.rs`.

use glam::Vec3;
use lumbre_gpu::{Buffer, Compute, Error, Gpu, Progress, Recorder, Report, Result};

use crate::ism::options::MAX_POINTS;
use crate::ism::points::{PoolPlan, SamplePoints, ScenePoints};

/// The point pool on the GPU.
#[derive(Clone, Debug)]
pub struct GpuScenePoints {
    /// Positions (w 1), in the pool's order.
    pub positions: Buffer<[f32; 4]>,
    /// The triangle of each point.
    pub triangles: Buffer<u32>,
    /// Bounds of the scene's triangles.
    pub bounds: (Vec3, Vec3),
}

impl GpuScenePoints {
    /// Uploads a pool made on the CPU.
    ///
    /// ```no_run
    /// use glam::Vec3;
    /// use lumbre_lightcuts::ism::{GpuScenePoints, ScenePoints};
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let pool = ScenePoints::sample(&[[Vec3::ZERO, Vec3::X, Vec3::Z]], 100, 0)?;
    /// let on_gpu = GpuScenePoints::upload(&gpu, &pool)?;
    /// assert_eq!(on_gpu.len(), 100);
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn upload(gpu: &Gpu, points: &ScenePoints) -> Result<GpuScenePoints> {
        if points.is_empty() || points.len() > MAX_POINTS as usize || points.triangles.len() != points.len() {
            return Err(Error::Input(format!(
                "a pool of {} points and {} triangle indices: needed 1..={} of each",
                points.len(),
                points.triangles.len(),
                MAX_POINTS
            )));
        }
        if let Some(i) = points.positions.iter().position(|p| !p.is_finite()) {
            return Err(Error::Input(format!("pool point {i} is not finite: {}", points.positions[i])));
        }
        let xyzw: Vec<[f32; 4]> = points.positions.iter().map(|p| [p.x, p.y, p.z, 1.0]).collect();
        Ok(GpuScenePoints {
            positions: gpu.upload(&xyzw)?,
            triangles: gpu.upload(&points.triangles)?,
            bounds: points.bounds,
        })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the pool is empty.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Length of the diagonal of the scene's bounds.
    pub fn diagonal(&self) -> f32 {
        (self.bounds.1 - self.bounds.0).length()
    }
}

/// The input of the GPU point pool: the triangles and the area CDF, made on the host.
#[derive(Clone, Debug)]
pub struct GpuPoolInput {
    pub(crate) plan: PoolPlan,
    pub(crate) tris: Buffer<[f32; 4]>,
    pub(crate) cdf: Buffer<u32>,
}

impl GpuPoolInput {
    /// Checks the triangles, makes the CDF and uploads both.
    pub(crate) fn new(gpu: &Gpu, triangles: &[[Vec3; 3]], count: u32, seed: u32) -> Result<GpuPoolInput> {
        let plan = PoolPlan::new(triangles, count, seed)?;
        let tris: Vec<[f32; 4]> = triangles.iter().flatten().map(|p| [p.x, p.y, p.z, 0.0]).collect();
        Ok(GpuPoolInput { tris: gpu.upload(&tris)?, cdf: gpu.upload(&plan.cdf)?, plan })
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PointsParams {
    count: u32,
    tris: u32,
    seed: u32,
    step: u32,
    half_bits: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<PointsParams>() == lumbre_shaders::lightcuts::ISM_POINTS_PARAMS_SIZE);

/// Records the point pool (`lightcuts/ism_points`).
pub(crate) fn record_points(rec: &mut Recorder, input: &GpuPoolInput) -> Result<GpuScenePoints> {
    let gpu = rec.gpu().clone();
    let plan = &input.plan;
    let n = plan.count as usize;
    let positions = gpu.zeroed::<[f32; 4]>(n)?;
    let triangles = gpu.zeroed::<u32>(n)?;
    let params = gpu.uniform(&PointsParams {
        count: plan.count,
        tris: (plan.cdf.len() - 1) as u32,
        seed: plan.seed,
        step: plan.step,
        half_bits: plan.half_bits,
        _pad: [0; 3],
    })?;
    let kernel = gpu.kernel(&lumbre_shaders::lightcuts::ISM_POINTS, "main")?;
    let bind = [
        params.as_entire_binding(),
        input.tris.binding(),
        input.cdf.binding(),
        positions.binding(),
        triangles.binding(),
    ];
    rec.dispatch("ism points", &kernel, &bind, (n as u64).div_ceil(256))?;
    Ok(GpuScenePoints { positions, triangles, bounds: plan.bounds })
}

impl Compute for SamplePoints {
    type Input = [[Vec3; 3]];
    type Output = ScenePoints;
    type GpuInput = GpuPoolInput;
    type GpuOutput = GpuScenePoints;

    fn name(&self) -> &'static str {
        "ism points"
    }

    fn cpu_reported(&self, triangles: &[[Vec3; 3]], _: &dyn Progress) -> Result<(ScenePoints, Report)> {
        Report::timed(self.name(), || self.cpu(triangles))
    }

    fn upload(&self, gpu: &Gpu, triangles: &[[Vec3; 3]]) -> Result<GpuPoolInput> {
        GpuPoolInput::new(gpu, triangles, self.count, self.seed)
    }

    fn record(&self, rec: &mut Recorder, input: &GpuPoolInput) -> Result<GpuScenePoints> {
        record_points(rec, input)
    }

    fn download(&self, gpu: &Gpu, out: &GpuScenePoints) -> Result<ScenePoints> {
        let positions = gpu.download(&out.positions)?.into_iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect();
        Ok(ScenePoints { positions, triangles: gpu.download(&out.triangles)?, bounds: out.bounds })
    }
}
