//! Form factors on the GPU: `radiosity/formfactor.wgsl`, one thread per element-patch pair.

use std::time::Duration;

use lumbre_gpu::{Buffer, Compute, Gpu, Progress, Recorder, Report, Result};
use lumbre_kdtree::GpuStructure;

use crate::formfactor::FormFactors;
use crate::matrix::{BlockMatrix, Matrix, block_rows};
use crate::mesh::TwoMesh;
use crate::outline::Bound;
use crate::shape::Shape;

/// Pairs per dispatch: bounds each dispatch's time (drivers reset GPUs whose dispatches run
/// too long).
const PAIRS_PER_DISPATCH: usize = 1 << 24;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    bmin: [f32; 3],
    arow: u32,
    bmax: [f32; 3],
    cols: u32,
    pair0: u32,
    pairs: u32,
    samples: u32,
    mult: u32,
    seed: u32,
    eps: f32,
    full: u32,
    n: u32,
    off_patch: u32,
    off_element_edges: u32,
    off_patch_edges: u32,
    acol: u32,
    lead: u32,
    _pad: [u32; 3],
}
const _: () = assert!(size_of::<Params>() == lumbre_shaders::radiosity::FORMFACTOR_KD_PARAMS_SIZE);

/// Shapes in the GPU layout (four vec4 each, see [`Shape::to_gpu`]).
pub(crate) fn shapes_to_gpu(shapes: &[Shape]) -> Vec<[f32; 4]> {
    shapes.iter().flat_map(|s| s.to_gpu()).collect()
}

/// A meshed scene on the GPU: the BVH or kd-tree, the pieces (with their area tables), the
/// element and patch ranges, and their outlines.
#[derive(Clone, Debug)]
pub struct GpuMesh {
    /// The scene's BVH or kd-tree and triangles.
    pub structure: GpuStructure,
    /// Four vec4 per piece: the shape ([`Shape::to_gpu`]) with the cumulative area
    /// fractions in its element and its patch in the third's and fourth's `w`.
    pub pieces: Buffer<[f32; 4]>,
    /// Element piece ranges, patch element ranges, element and patch edge ranges.
    pub ranges: Buffer<u32>,
    /// Three vec4 per element, then per patch: the [`crate::Bound`] (the piece count as the
    /// bits of the last `w`).
    pub bounds: Buffer<[f32; 4]>,
    /// Two vec4 per boundary edge: elements' first, then patches'.
    pub edges: Buffer<[f32; 4]>,
    /// Elements.
    pub n: usize,
    /// Patches.
    pub k: usize,
    /// Columns: k, or n for the full matrix.
    pub cols: usize,
    /// Whether columns are elements.
    pub full: bool,
    /// The scene's ray offset.
    pub eps: f32,
}

impl GpuMesh {
    /// Uploads the mesh's clusters ([`TwoMesh::clusters`]); columns are patches, or the
    /// elements when `full`.
    pub fn upload(gpu: &Gpu, mesh: &TwoMesh, full: bool) -> Result<GpuMesh> {
        let p = &mesh.surfaces.prepared;
        let c = mesh.clusters();
        let (n, k) = (c.n(), c.k());
        let mut pieces = shapes_to_gpu(&c.pieces);
        for (i, (e, q)) in c.element_cdf.iter().zip(&c.patch_cdf).enumerate() {
            pieces[4 * i + 2][3] = *e;
            pieces[4 * i + 3][3] = *q;
        }
        let element_edges = c.elements.edges.len() as u32;
        let mut ranges: Vec<u32> = Vec::with_capacity(2 * (n + k + 2));
        ranges.extend(&c.piece_start);
        ranges.extend(&c.patch_start);
        ranges.extend(&c.elements.edge_start);
        ranges.extend(c.patches.edge_start.iter().map(|&s| s + element_edges));
        let bound = |b: &Bound| {
            [
                [b.center.x, b.center.y, b.center.z, b.radius],
                [b.axis.x, b.axis.y, b.axis.z, b.spread],
                [b.area.x, b.area.y, b.area.z, f32::from_bits(b.pieces)],
            ]
        };
        let bounds: Vec<[f32; 4]> = c.elements.bound.iter().chain(&c.patches.bound).flat_map(bound).collect();
        let edges: Vec<[f32; 4]> = c
            .elements
            .edges
            .iter()
            .chain(&c.patches.edges)
            .flat_map(|[a, b]| [a.extend(0.0).to_array(), b.extend(0.0).to_array()])
            .collect();
        // A mesh without edges still binds a buffer.
        let edges = if edges.is_empty() { vec![[0.0; 4]; 2] } else { edges };
        Ok(GpuMesh {
            structure: GpuStructure::upload(gpu, &p.structure, &p.tris)?,
            pieces: gpu.upload(&pieces)?,
            ranges: gpu.upload(&ranges)?,
            bounds: gpu.upload(&bounds)?,
            edges: gpu.upload(&edges)?,
            n,
            k,
            cols: if full { n } else { k },
            full,
            eps: p.eps,
        })
    }
}

impl FormFactors {
    /// The dispatches that fill `out`: (block, first pair in the block, pairs).
    fn dispatches(out: &BlockMatrix) -> Vec<(usize, usize, usize)> {
        let mut all = Vec::new();
        for blk in 0..out.blocks.len() {
            let total = out.block_range(blk).1 * out.cols;
            let mut pair0 = 0;
            while pair0 < total {
                let pairs = PAIRS_PER_DISPATCH.min(total - pair0);
                all.push((blk, pair0, pairs));
                pair0 += pairs;
            }
        }
        all
    }

    /// Records one dispatch of [`Self::dispatches`].
    fn record_one(
        &self,
        rec: &mut Recorder,
        mesh: &GpuMesh,
        out: &BlockMatrix,
        d: (usize, usize, usize),
    ) -> Result<()> {
        let (blk, pair0, pairs) = d;
        let gpu = rec.gpu().clone();
        let shader =
            mesh.structure.pick(lumbre_shaders::radiosity::FORMFACTOR_KD, lumbre_shaders::radiosity::FORMFACTOR_BVH);
        let kernel = gpu.kernel(&shader, "pairs")?;
        let [a, b, c] = mesh.structure.bindings();
        let (row0, _) = out.block_range(blk);
        // The dispatch runs the aligned groups of 64 pairs of the whole matrix that hold its own.
        let cols = out.cols.max(1) as u64;
        let first = row0 as u64 * cols + pair0 as u64;
        let (aligned, lead) = (first - first % 64, first % 64);
        let params = gpu.uniform(&Params {
            bmin: mesh.structure.bounds().min.to_array(),
            arow: (aligned / cols) as u32,
            bmax: mesh.structure.bounds().max.to_array(),
            cols: out.cols as u32,
            pair0: pair0 as u32,
            pairs: pairs as u32,
            samples: self.samples.max(1),
            mult: self.multiplier(),
            seed: self.seed,
            eps: mesh.eps,
            full: mesh.full as u32,
            n: mesh.n as u32,
            off_patch: (mesh.n + 1) as u32,
            off_element_edges: (mesh.n + mesh.k + 2) as u32,
            off_patch_edges: (2 * mesh.n + mesh.k + 3) as u32,
            acol: (aligned % cols) as u32,
            lead: lead as u32,
            _pad: [0; 3],
        })?;
        let res = [
            params.as_entire_binding(),
            a,
            b,
            c,
            mesh.pieces.binding(),
            mesh.ranges.binding(),
            mesh.bounds.binding(),
            mesh.edges.binding(),
            out.blocks[blk].binding(),
        ];
        rec.dispatch("form factors", &kernel, &res, (pairs as u64 + lead).div_ceil(64))
    }

    /// Records the form factors of `mesh` into `out` (`mesh.n x mesh.cols` in row blocks).
    pub fn record_into(&self, rec: &mut Recorder, mesh: &GpuMesh, out: &BlockMatrix) -> Result<()> {
        for d in Self::dispatches(out) {
            self.record_one(rec, mesh, out, d)?;
        }
        Ok(())
    }

    /// Computes the form factors of `mesh` into `out`, one submission per dispatch so that
    /// `progress` hears of the rows done (a long run shows its progress); returns the GPU
    /// time.
    pub fn run_into(&self, gpu: &Gpu, mesh: &GpuMesh, out: &BlockMatrix, progress: &dyn Progress) -> Result<Duration> {
        let mut time = Duration::ZERO;
        let mut done_pairs = 0;
        for d in Self::dispatches(out) {
            let mut rec = gpu.recorder();
            self.record_one(&mut rec, mesh, out, d)?;
            time += rec.submit()?.gpu();
            done_pairs += d.2;
            progress.update("form factors", (done_pairs / out.cols.max(1)) as u64, out.rows as u64);
        }
        Ok(time)
    }

    /// The output matrix for `mesh`, in blocks that fit one binding.
    pub fn output(&self, gpu: &Gpu, mesh: &GpuMesh) -> Result<BlockMatrix> {
        self.output_rows(gpu, mesh, std::slice::from_ref(&(0..mesh.n)))
    }

    /// The output matrix's element rows `rows` (ranges of the whole, in order: a part's).
    pub fn output_rows(&self, gpu: &Gpu, mesh: &GpuMesh, rows: &[std::ops::Range<usize>]) -> Result<BlockMatrix> {
        let block = block_rows(gpu, mesh.cols.max(1) as u64 * 4, 1, self.block_rows)?;
        BlockMatrix::zeroed_rows(gpu, rows, mesh.cols, block)
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

    fn cpu_reported(&self, mesh: &TwoMesh, progress: &dyn Progress) -> Result<(Matrix, Report)> {
        self.run_cpu(mesh, progress)
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
