//! Form factors on the GPU: `radiosity/formfactor.wgsl`, one thread per element-patch pair.

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_kdtree::GpuKdTree;

use crate::formfactor::Occluders;
use crate::matrix::{BlockMatrix, Matrix, block_rows};
use crate::{FormFactors, Shape, TwoMesh};

/// Pairs per dispatch: bounds each dispatch's time (drivers reset GPUs whose dispatches run
/// too long).
const PAIRS_PER_DISPATCH: usize = 1 << 24;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    bmin: [f32; 3],
    row0: u32,
    bmax: [f32; 3],
    cols: u32,
    pair0: u32,
    pairs: u32,
    samples: u32,
    mult: u32,
    seed: u32,
    eps: f32,
    _pad: [u32; 2],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::radiosity::FORMFACTOR_PARAMS_SIZE);

/// Shapes in the GPU layout (four vec4 each, see [`Shape::to_gpu`]).
pub(crate) fn shapes_to_gpu(shapes: &[Shape]) -> Vec<[f32; 4]> {
    shapes.iter().flat_map(|s| s.to_gpu()).collect()
}

/// A meshed scene on the GPU: the kd-tree, the elements and the columns' shapes (patches,
/// or elements again for the full matrix).
#[derive(Clone, Debug)]
pub struct GpuMesh {
    /// The scene's kd-tree and triangles.
    pub tree: GpuKdTree,
    /// The row shapes (elements).
    pub rows: Buffer<[f32; 4]>,
    /// The column shapes.
    pub cols: Buffer<[f32; 4]>,
    /// Number of rows.
    pub n: usize,
    /// Number of columns.
    pub k: usize,
    /// The scene's ray offset.
    pub eps: f32,
}

impl GpuMesh {
    /// Uploads the elements and patches (or the elements twice when `full`).
    pub fn upload(gpu: &Gpu, mesh: &TwoMesh, full: bool) -> Result<GpuMesh> {
        let p = &mesh.surfaces.prepared;
        let rows = gpu.upload(&shapes_to_gpu(&mesh.elements))?;
        let cols = if full { rows.clone() } else { gpu.upload(&shapes_to_gpu(&mesh.patches))? };
        Ok(GpuMesh {
            tree: GpuKdTree::upload(gpu, &p.tree, &p.tris)?,
            rows,
            cols,
            n: mesh.n(),
            k: if full { mesh.n() } else { mesh.k() },
            eps: p.eps,
        })
    }
}

impl FormFactors {
    /// Records the form factors of `mesh` into `out` (`mesh.n x mesh.k` in row blocks).
    pub fn record_into(&self, rec: &mut Recorder, mesh: &GpuMesh, out: &BlockMatrix) -> Result<()> {
        let gpu = rec.gpu().clone();
        let kernel = gpu.kernel(&lumbre_shaders::radiosity::FORMFACTOR, "pairs")?;
        let [a, b, c] = mesh.tree.bindings();
        for (blk, buf) in out.blocks.iter().enumerate() {
            let (row0, rows) = out.block_range(blk);
            let total = rows * out.cols;
            let mut pair0 = 0;
            while pair0 < total {
                let pairs = PAIRS_PER_DISPATCH.min(total - pair0);
                let params = gpu.uniform(&Params {
                    bmin: mesh.tree.bounds.min.to_array(),
                    row0: row0 as u32,
                    bmax: mesh.tree.bounds.max.to_array(),
                    cols: out.cols as u32,
                    pair0: pair0 as u32,
                    pairs: pairs as u32,
                    samples: self.samples.max(1),
                    mult: self.multiplier(),
                    seed: self.seed,
                    eps: mesh.eps,
                    _pad: [0; 2],
                })?;
                let res = [
                    params.as_entire_binding(),
                    a.clone(),
                    b.clone(),
                    c.clone(),
                    mesh.rows.binding(),
                    mesh.cols.binding(),
                    buf.binding(),
                ];
                rec.dispatch("form factors", &kernel, &res, (pairs as u64).div_ceil(64))?;
                pair0 += pairs;
            }
        }
        Ok(())
    }

    /// The output matrix for `mesh`, in blocks that fit one binding.
    pub fn output(&self, gpu: &Gpu, mesh: &GpuMesh) -> Result<BlockMatrix> {
        let rows = block_rows(gpu, mesh.k.max(1) as u64 * 4, 1, self.block_rows)?;
        BlockMatrix::zeroed(gpu, mesh.n, mesh.k, rows)
    }
}

impl Compute for FormFactors {
    type Input = TwoMesh;
    type Output = Matrix;
    type GpuInput = GpuMesh;
    type GpuOutput = BlockMatrix;

    fn name(&self) -> &'static str {
        "form factors"
    }

    fn cpu(&self, mesh: &TwoMesh) -> Result<Matrix> {
        self.cpu_reported(mesh, &()).map(|(m, _)| m)
    }

    fn cpu_reported(&self, mesh: &TwoMesh, progress: &dyn Progress) -> Result<(Matrix, Report)> {
        let mut report = Report::default();
        let cols = if self.full { &mesh.elements } else { &mesh.patches };
        let f = report.time("form factors", || self.matrix(&Occluders::of(mesh), &mesh.elements, cols, progress));
        report.stat("pairs", (f.rows * f.cols) as f64);
        report.stat("samples per pair", self.samples.max(1) as f64);
        Ok((f, report))
    }

    fn upload(&self, gpu: &Gpu, mesh: &TwoMesh) -> Result<GpuMesh> {
        GpuMesh::upload(gpu, mesh, self.full)
    }

    fn record(&self, rec: &mut Recorder, mesh: &GpuMesh) -> Result<BlockMatrix> {
        let out = self.output(rec.gpu(), mesh)?;
        self.record_into(rec, mesh, &out)?;
        Ok(out)
    }

    fn download(&self, gpu: &Gpu, out: &BlockMatrix) -> Result<Matrix> {
        out.download(gpu)
    }
}
