//! What CPU twins share: reads and writes past a slice's end as robust buffer access treats
//! them on the GPU, and the threads a dispatch starts.

/// Element `i` of `s`, or zero past its end (a robust out-of-bounds read).
///
/// ```
/// use lumbre_gpu::stages::get;
/// assert_eq!((get(&[7u32, 8], 1), get(&[7u32, 8], 2)), (8, 0));
/// ```
pub fn get<T: Copy + Default>(s: &[T], i: usize) -> T {
    s.get(i).copied().unwrap_or_default()
}

/// Writes `v` to element `i` of `s` unless it lies past the end (a robust out-of-bounds
/// write is dropped).
///
/// ```
/// use lumbre_gpu::stages::put;
/// let mut s = [0u32; 2];
/// put(&mut s, 1, 5);
/// put(&mut s, 2, 9); // dropped
/// assert_eq!(s, [0, 5]);
/// ```
pub fn put<T>(s: &mut [T], i: usize, v: T) {
    if let Some(x) = s.get_mut(i) {
        *x = v;
    }
}

/// Threads of a dispatch sized for `items`, `workgroup` threads per workgroup: a twin loops
/// over these where the kernel's threads past the items still act.
///
/// ```
/// assert_eq!(lumbre_gpu::stages::threads(300, 256), 512);
/// ```
pub fn threads(items: usize, workgroup: usize) -> usize {
    items.div_ceil(workgroup) * workgroup
}
