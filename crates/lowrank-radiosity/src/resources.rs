//! What a run will need before it starts: host and GPU memory and the work of the form
//! factors, from the counts a user asks for.

use crate::layout::Storage;

/// Host bytes per cell of the mesh (the piece, its corners, its outline edges, the
/// clustering's tables) and per scene triangle (the triangle, its kd-tree share).
const HOST_PER_CELL: u64 = 400;
const HOST_PER_TRIANGLE: u64 = 450;
/// GPU bytes per cell (the piece, its area tables, its share of the outlines) and per
/// triangle (the kd-tree's triangles and nodes).
const GPU_PER_CELL: u64 = 160;
const GPU_PER_TRIANGLE: u64 = 96;

/// The memory and work of a radiosity run with `n` elements, `k` patches, `cells` mesh
/// pieces over a scene of `triangles` triangles, `samples` point pairs per form factor.
///
/// Host memory on the CPU path: F (n k), U and Y (3 n k each; the factored form keeps a
/// second F instead of Y), `V^T U` and the inverses in f32 and the LU's f64 matrices
/// (3 k^2 each), and the mesh. On the GPU path the host keeps the mesh only (and Y's or F's
/// copy when saving). GPU memory: F, U and Y row-major, the solve's copy of Y (or F and W)
/// while it is laid out, the k x k matrices, the mesh and the kd-tree.
///
/// ```
/// use lumbre_radiosity::{Resources, Storage};
/// let r = Resources::estimate(24_000, 1000, 30_000, 6000, 16, false, Storage::F32);
/// assert_eq!(r.pair_samples, 24_000 * 1000 * 16);
/// assert!(r.cpu_host > 28 * 24_000 * 1000 && r.gpu > r.gpu_host);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resources {
    /// Host bytes when the precompute runs on the CPU.
    pub cpu_host: u64,
    /// Host bytes when it runs on the GPU.
    pub gpu_host: u64,
    /// GPU bytes at the peak (laying out the solve's copy).
    pub gpu: u64,
    /// Point pairs the form factors take (n k samples): their time.
    pub pair_samples: u64,
}

impl Resources {
    /// The estimate for these counts (see the type's notes).
    pub fn estimate(
        n: usize,
        k: usize,
        cells: usize,
        triangles: usize,
        samples: u32,
        factored: bool,
        storage: Storage,
    ) -> Resources {
        let (n, k, cells, triangles) = (n as u64, k as u64, cells as u64, triangles as u64);
        let nk = n * k;
        let mesh = cells * HOST_PER_CELL + triangles * HOST_PER_TRIANGLE;
        let small = 3 * k * k * (4 + 4 + 8 + 8);
        let cpu_host = 4 * nk * (1 + 3 + if factored { 1 } else { 3 }) + small + mesh;
        let solve_copy = match (factored, storage) {
            (false, s) => 3 * nk * s.bytes_per_value() as u64,
            (true, s) => nk * s.bytes_per_value() as u64 + 12 * k * k,
        };
        let gpu =
            4 * nk * (1 + 3 + 3) + solve_copy + 8 * 3 * k * k + cells * GPU_PER_CELL + triangles * GPU_PER_TRIANGLE;
        Resources { cpu_host, gpu_host: mesh + solve_copy, gpu, pair_samples: nk * samples.max(1) as u64 }
    }
}
