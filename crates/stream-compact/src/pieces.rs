//! Splitting buffers longer than one storage binding into binding-sized pieces, and
//! slices into consecutive parts for the CPU paths.

use lumbre_gpu::Gpu;

/// The piece length (in elements of `elem_bytes`) for kernels that process `tile` elements
/// per workgroup: the largest multiple of `tile` whose bytes fit one binding and whose byte
/// offset keeps the binding alignment.
pub fn piece_len(gpu: &Gpu, elem_bytes: usize, tile: usize) -> usize {
    let l = gpu.limits();
    let max = l.max_storage_buffer_binding_size as usize / elem_bytes;
    let align = (l.min_storage_buffer_offset_alignment as usize).div_ceil(elem_bytes).max(1);
    let unit = tile.next_multiple_of(align);
    (max / unit * unit).max(unit)
}

/// `(start, len)` of each piece of `n` elements.
pub fn pieces(n: usize, piece: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(piece)).map(|k| (k * piece, piece.min(n - k * piece))).collect()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_exactly() {
        assert_eq!(pieces(0, 4), vec![]);
        assert_eq!(pieces(9, 4), vec![(0, 4), (4, 4), (8, 1)]);
    }
}
