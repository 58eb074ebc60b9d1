//! Compaction by histogram pyramid, the method of the density-estimation paper, kept to
//! compare against the single-pass compaction on one chart.

use lumbre_gpu::{Error, Result};

use crate::compact::{Emit, Predicate, Select};

pub mod twin;

/// Stream compaction with a histogram pyramid (HistoPyramid): a 4-ary tree of keep counts
/// built bottom-up in one pass per level, then one top-down descent per output element.
/// Keeps by flag or by `value != 0`; emits values or indices.
///
/// ```
/// use lumbre_compact::{Emit, HistoPyramid, Select, Stream};
/// use lumbre_gpu::{Backend, Compute};
/// let hp = HistoPyramid { select: Select::Flags, emit: Emit::Values, index_base: 0 };
/// let s = Stream { values: vec![4, 5, 6], flags: vec![0, 1, 1] };
/// assert_eq!(hp.run(&Backend::Cpu, &s).unwrap(), vec![5, 6]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HistoPyramid {
    /// [`Select::Flags`], or [`Select::Where`] with [`crate::Predicate::NonZero`].
    pub select: Select,
    /// Values or indices.
    pub emit: Emit,
    /// Added to emitted indices (used when a long stream is run in pieces).
    pub index_base: u32,
}

impl HistoPyramid {
    /// The CPU path: what [`Compact`](crate::Compact) keeps, with the same selection.
    ///
    /// ```
    /// use lumbre_compact::{HistoPyramid, Stream};
    /// let s = Stream { values: vec![4, 5, 6], flags: vec![0, 1, 1] };
    /// assert_eq!(HistoPyramid::default().cpu(&s)?, vec![5, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cpu(&self, input: &crate::compact::Stream) -> Result<Vec<u32>> {
        self.mode()?;
        crate::compact::Compact { select: self.select, emit: self.emit, ..Default::default() }.cpu(input)
    }

    /// The `mode` word of `compact/hpyramid.wgsl`; keeping by a predicate other than
    /// [`Predicate::NonZero`](crate::Predicate::NonZero) is an error.
    pub(crate) fn mode(&self) -> Result<u32> {
        let by_value = match self.select {
            Select::Flags => 0,
            Select::Where(Predicate::NonZero) => 1,
            Select::Where(p) => {
                return Err(Error::Input(format!("the histogram pyramid keeps by flag or NonZero, not {p:?}")));
            }
        };
        Ok(by_value | (((self.emit == Emit::Indices) as u32) << 1))
    }
}
