//! Slices cut into consecutive parts, for the CPU paths of the piecewise GPU kernels.

/// `a` cut into consecutive slices of the given sizes.
pub(crate) fn split_sizes<'a, T>(mut a: &'a mut [T], sizes: &[usize]) -> Vec<&'a mut [T]> {
    sizes
        .iter()
        .map(|&s| {
            let (head, tail) = std::mem::take(&mut a).split_at_mut(s);
            a = tail;
            head
        })
        .collect()
}
