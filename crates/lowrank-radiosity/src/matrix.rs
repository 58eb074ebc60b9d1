//! Dense row-major matrices on the host, and their row blocks on the GPU.

use lumbre_gpu::{Agree, Error, Result, Tolerance, compare_slices};
#[cfg(feature = "gpu")]
use lumbre_gpu::{Buffer, Gpu};

/// A dense row-major `rows x cols` matrix of f32.
///
/// ```
/// let m = lumbre_radiosity::Matrix::new(2, 3, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
/// assert_eq!(m.get(1, 2), 6.0);
/// assert_eq!(m.row(0), &[1.0, 2.0, 3.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub data: Vec<f32>,
}

impl Matrix {
    /// A matrix of `data`, which must hold `rows * cols` values.
    pub fn new(rows: usize, cols: usize, data: Vec<f32>) -> Result<Matrix> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::Input(format!("{} values do not make a {rows} x {cols} matrix", data.len())));
        }
        Ok(Matrix { rows, cols, data })
    }

    /// A matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Matrix {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }

    /// The value at `(r, c)`.
    pub fn get(&self, r: usize, c: usize) -> f32 {
        self.data[r * self.cols + c]
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// The sum of each row, in f64.
    pub fn row_sums(&self) -> Vec<f64> {
        (0..self.rows).map(|r| self.row(r).iter().map(|&v| v as f64).sum()).collect()
    }
}

impl Agree for Matrix {
    fn disagreement(&self, gpu: &Self, tol: Tolerance) -> Option<String> {
        if (self.rows, self.cols) != (gpu.rows, gpu.cols) {
            return Some(format!("cpu {}x{} vs gpu {}x{}", self.rows, self.cols, gpu.rows, gpu.cols));
        }
        compare_slices(&self.data, &gpu.data, tol)
    }
}

/// A matrix on the GPU in row blocks, each its own buffer that fits one storage binding
/// (a matrix may be larger than a binding and than a buffer); or some rows of a larger one
/// (a part's), each block a range of the whole matrix's rows.
#[cfg(feature = "gpu")]
#[derive(Clone, Debug)]
pub struct BlockMatrix {
    /// The rows of the whole matrix that each block holds, in the order of the blocks.
    pub ranges: Vec<std::ops::Range<usize>>,
    /// Number of rows held.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Most rows per block.
    pub block_rows: usize,
    /// The blocks, each its rows times `cols` values, row-major.
    pub blocks: Vec<Buffer<f32>>,
}

/// Rows per block for rows of `row_bytes` bytes: as many as fit one binding, a multiple of
/// `align` rows, capped by `cap` (tests lower it to reach several blocks).
#[cfg(feature = "gpu")]
pub(crate) fn block_rows(gpu: &Gpu, row_bytes: u64, align: usize, cap: Option<usize>) -> Result<usize> {
    let max = gpu.limits().max_storage_buffer_binding_size / row_bytes.max(1);
    let rows = (max as usize / align) * align;
    if rows == 0 {
        return Err(Error::LimitExceeded {
            what: format!("{align} rows of {row_bytes} bytes"),
            limit: "max_storage_buffer_binding_size",
            requested: row_bytes * align as u64,
            max: gpu.limits().max_storage_buffer_binding_size,
        });
    }
    Ok(match cap {
        Some(c) => rows.min(c.max(align) / align * align),
        None => rows,
    })
}

#[cfg(feature = "gpu")]
impl BlockMatrix {
    /// A zeroed `rows x cols` matrix in blocks of at most `block_rows` rows.
    pub fn zeroed(gpu: &Gpu, rows: usize, cols: usize, block_rows: usize) -> Result<BlockMatrix> {
        Self::zeroed_rows(gpu, std::slice::from_ref(&(0..rows)), cols, block_rows)
    }

    /// Rows `rows` (ranges of a larger matrix, in order) of a zeroed matrix of `cols` columns,
    /// each range in blocks of at most `block_rows` rows.
    ///
    /// ```no_run
    /// use lumbre_radiosity::BlockMatrix;
    /// let gpu = lumbre_gpu::Gpu::new()?;
    /// let m = BlockMatrix::zeroed_rows(&gpu, &[10..30, 50..55], 8, 16)?;
    /// assert_eq!((m.rows, m.ranges.clone()), (25, vec![10..26, 26..30, 50..55]));
    /// # Ok::<(), lumbre_gpu::Error>(())
    /// ```
    pub fn zeroed_rows(
        gpu: &Gpu,
        rows: &[std::ops::Range<usize>],
        cols: usize,
        block_rows: usize,
    ) -> Result<BlockMatrix> {
        let step = block_rows.max(1);
        let ranges: Vec<_> =
            rows.iter().flat_map(|r| r.clone().step_by(step).map(move |s| s..(s + step).min(r.end))).collect();
        let blocks = ranges.iter().map(|r| gpu.zeroed::<f32>(r.len() * cols)).collect::<Result<Vec<_>>>()?;
        Ok(BlockMatrix { rows: ranges.iter().map(|r| r.len()).sum(), ranges, cols, block_rows: step, blocks })
    }

    /// A zeroed matrix of `cols` columns with the rows and blocks of `other`.
    pub fn zeroed_like(gpu: &Gpu, other: &BlockMatrix, cols: usize) -> Result<BlockMatrix> {
        let blocks = other.ranges.iter().map(|r| gpu.zeroed::<f32>(r.len() * cols)).collect::<Result<Vec<_>>>()?;
        Ok(BlockMatrix { ranges: other.ranges.clone(), rows: other.rows, cols, block_rows: other.block_rows, blocks })
    }

    /// The blocks of several matrices of the same columns, one after another.
    pub fn join(parts: Vec<BlockMatrix>) -> Result<BlockMatrix> {
        let mut all = BlockMatrix { ranges: Vec::new(), rows: 0, cols: 0, block_rows: 1, blocks: Vec::new() };
        for (i, m) in parts.into_iter().enumerate() {
            if i > 0 && m.cols != all.cols {
                return Err(Error::Input(format!("joined matrices of {} and {} columns", all.cols, m.cols)));
            }
            all.cols = m.cols;
            all.block_rows = all.block_rows.max(m.block_rows);
            all.rows += m.rows;
            all.ranges.extend(m.ranges);
            all.blocks.extend(m.blocks);
        }
        Ok(all)
    }

    /// Uploads `m` in blocks of at most `block_rows` rows.
    pub fn upload(gpu: &Gpu, m: &Matrix, block_rows: usize) -> Result<BlockMatrix> {
        let step = block_rows.max(1);
        let blocks = m.data.chunks(step * m.cols.max(1)).map(|c| gpu.upload(c)).collect::<Result<Vec<_>>>()?;
        let ranges = (0..m.rows).step_by(step).map(|s| s..(s + step).min(m.rows)).collect();
        Ok(BlockMatrix { ranges, rows: m.rows, cols: m.cols, block_rows: step, blocks })
    }

    /// The first row (of the whole matrix) and the row count of block `b`.
    pub fn block_range(&self, b: usize) -> (usize, usize) {
        (self.ranges[b].start, self.ranges[b].len())
    }

    /// Reads the matrix back.
    pub fn download(&self, gpu: &Gpu) -> Result<Matrix> {
        let mut data = Vec::with_capacity(self.rows * self.cols);
        for b in &self.blocks {
            data.extend(gpu.download(b)?);
        }
        Matrix::new(self.rows, self.cols, data)
    }
}
