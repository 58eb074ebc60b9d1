//! Stable stream compaction: keep the elements whose flag is set (or whose value satisfies a
//! predicate), in order, as values or as indices. The "non-uniform stream reduction" of the
//! density-estimation paper.

use lumbre_gpu::{Error, Result};
use rayon::prelude::*;

use crate::pieces::split_sizes;
use crate::scan::{Lookback, ScanMethod};

pub mod twin;

/// Elements per GPU compaction tile (256 threads x 16), `TILE` in `compact/compact.wgsl`.
pub const COMPACT_TILE: usize = 4096;

/// A test on a `u32` value, evaluated identically on the CPU and in WGSL.
///
/// ```
/// use lumbre_compact::Predicate;
/// assert!(Predicate::Lt(5).holds(4));
/// assert!(Predicate::AnyBits(0b100).holds(0b110));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predicate {
    /// `v != 0`
    NonZero,
    /// `v == x`
    Eq(u32),
    /// `v != x`
    Ne(u32),
    /// `v < x`
    Lt(u32),
    /// `v <= x`
    Le(u32),
    /// `v > x`
    Gt(u32),
    /// `v >= x`
    Ge(u32),
    /// `v & x != 0`
    AnyBits(u32),
}

impl Predicate {
    /// Whether `v` satisfies the predicate.
    pub fn holds(self, v: u32) -> bool {
        match self {
            Predicate::NonZero => v != 0,
            Predicate::Eq(x) => v == x,
            Predicate::Ne(x) => v != x,
            Predicate::Lt(x) => v < x,
            Predicate::Le(x) => v <= x,
            Predicate::Gt(x) => v > x,
            Predicate::Ge(x) => v >= x,
            Predicate::AnyBits(x) => v & x != 0,
        }
    }

    /// (op code, operand) as `compact/compact.wgsl` reads them.
    #[cfg(feature = "gpu")]
    pub(crate) fn code(self) -> (u32, u32) {
        match self {
            Predicate::NonZero => (0, 0),
            Predicate::Eq(x) => (1, x),
            Predicate::Ne(x) => (2, x),
            Predicate::Lt(x) => (3, x),
            Predicate::Le(x) => (4, x),
            Predicate::Gt(x) => (5, x),
            Predicate::Ge(x) => (6, x),
            Predicate::AnyBits(x) => (7, x),
        }
    }
}

/// Which elements a compaction keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Select {
    /// Those whose flag (a parallel `u32` array) is non-zero.
    #[default]
    Flags,
    /// Those whose value satisfies the predicate (no flag array needed).
    Where(Predicate),
}

/// What a compaction writes for each kept element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Emit {
    /// Its value.
    #[default]
    Values,
    /// Its index in the input.
    Indices,
}

/// The input of a compaction: values, and flags when selecting by flag (else empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// The values (or, when emitting indices by flag, may be empty).
    pub values: Vec<u32>,
    /// Keep flags, one per element, when [`Select::Flags`].
    pub flags: Vec<u32>,
}

impl Stream {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.values.len().max(self.flags.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Stable stream compaction through the [`Compute`](lumbre_gpu::Compute) trait.
///
/// ```
/// use lumbre_compact::{Compact, Emit, Predicate, Select, Stream};
/// use lumbre_gpu::{Backend, Compute};
/// let c = Compact { select: Select::Where(Predicate::Gt(2)), emit: Emit::Indices, ..Default::default() };
/// let input = Stream { values: vec![5, 1, 3, 2], flags: vec![] };
/// assert_eq!(c.run(&Backend::Cpu, &input).unwrap(), vec![0, 2]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Compact {
    /// What to keep.
    pub select: Select,
    /// What to write.
    pub emit: Emit,
    /// How the GPU path finds where each tile's kept elements go: one pass with a look-back,
    /// or two passes around a scan of the tiles' counts ([`ScanMethod::ReduceThenScan`]: the
    /// first pass also writes one keep bit per element, which the second reads instead of
    /// the flags). [`ScanMethod::Auto`] takes two passes from
    /// [`COMPACT_TWO_PASS_MIN`] elements on.
    pub method: ScanMethod,
    /// Look-back tuning of the GPU path.
    pub lookback: Lookback,
}

/// Elements from which [`Compact::method`]'s `Auto` compacts in two passes (2^25): one pass
/// measured faster below, two above (benches/RESULTS.md).
pub const COMPACT_TWO_PASS_MIN: usize = 1 << 25;

/// CPU compaction (rayon; order preserved).
///
/// ```
/// use lumbre_compact::{Emit, Select, compact_cpu};
/// assert_eq!(compact_cpu(&[7, 8, 9], &[1, 0, 1], Select::Flags, Emit::Values), vec![7, 9]);
/// ```
pub fn compact_cpu(values: &[u32], flags: &[u32], select: Select, emit: Emit) -> Vec<u32> {
    const CHUNK: usize = 1 << 16;
    let n = values.len().max(flags.len());
    let keep = |i: usize| match select {
        Select::Flags => flags[i] != 0,
        Select::Where(p) => p.holds(values[i]),
    };
    let chunk = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(n);
    // Two passes, so that each chunk writes its part of the output in place: count every
    // chunk's kept elements, then write them after the earlier chunks'. (Collecting each
    // chunk into a vector of its own and joining them spends its time growing the vectors
    // and copying them on one thread.)
    let counts: Vec<usize> =
        (0..n.div_ceil(CHUNK)).into_par_iter().map(|c| chunk(c).map(|i| keep(i) as usize).sum()).collect();
    let mut out = vec![0u32; counts.iter().sum()];
    split_sizes(&mut out, &counts).into_par_iter().enumerate().for_each(|(c, part)| {
        let mut k = 0;
        for i in chunk(c) {
            // Every element is written and only a kept one moves on (flags come in no
            // predictable order; the bounds check fails only past the chunk's last kept one).
            if let Some(slot) = part.get_mut(k) {
                *slot = match emit {
                    Emit::Values => values[i],
                    Emit::Indices => i as u32,
                };
            }
            k += keep(i) as usize;
        }
    });
    out
}

impl Compact {
    /// The CPU path: the selected values or indices of `input`, in order ([`compact_cpu`]).
    ///
    /// ```
    /// use lumbre_compact::{Compact, Stream};
    /// let input = Stream { values: vec![7, 8, 9], flags: vec![1, 0, 1] };
    /// assert_eq!(Compact::default().cpu(&input)?, vec![7, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &Stream) -> Result<Vec<u32>> {
        self.check(input.values.len(), input.flags.len())?;
        Ok(compact_cpu(&input.values, &input.flags, self.select, self.emit))
    }

    /// The stream's length, if it has the values and flags this compaction reads.
    pub(crate) fn check(&self, values: usize, flags: usize) -> Result<usize> {
        let n = values.max(flags);
        let need_values = matches!(self.select, Select::Where(_)) || self.emit == Emit::Values;
        if need_values && values != n {
            return Err(Error::Input(format!("compaction needs {n} values, got {values}")));
        }
        if self.select == Select::Flags && flags != n {
            return Err(Error::Input(format!("compaction by flag needs {n} flags, got {flags}")));
        }
        u32::try_from(n).map_err(|_| Error::Input("compaction of more than 2^32 elements".into()))?;
        Ok(n)
    }

    /// The GPU method used for `n` elements: [`Compact::method`], `Auto` resolved.
    ///
    /// ```
    /// use lumbre_compact::{COMPACT_TWO_PASS_MIN, Compact, ScanMethod};
    /// let c = Compact::default();
    /// assert_eq!(c.method_for(COMPACT_TWO_PASS_MIN - 1), ScanMethod::SinglePass);
    /// assert_eq!(c.method_for(COMPACT_TWO_PASS_MIN), ScanMethod::ReduceThenScan);
    /// ```
    pub fn method_for(&self, n: usize) -> ScanMethod {
        match self.method {
            ScanMethod::Auto if n >= COMPACT_TWO_PASS_MIN => ScanMethod::ReduceThenScan,
            ScanMethod::Auto => ScanMethod::SinglePass,
            m => m,
        }
    }
}
