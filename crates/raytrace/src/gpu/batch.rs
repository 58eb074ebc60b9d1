//! How a render is cut into dispatches: tiles of 8x8 pixels and batches of samples, so that
//! no dispatch and no invocation runs too long.

/// 8x8 pixel tiles per dispatch (a million pixels): bounds each dispatch (drivers reset GPUs
/// whose dispatches run too long) while 1920x1080 takes two, not eight, each of which ends
/// with its slowest rays.
pub(super) const TILES_PER_DISPATCH: u32 = 1 << 14;

/// Samples per pixel in one dispatch of the path tracer and of the Whitted renderer: bounds
/// a dispatch's time whatever the samples per pixel, and the loop iterations of one
/// invocation (lavapipe ends any invocation's loops after 65535 iterations in all; the
/// kernels count pixels cut short and the download refuses their image).
pub const SAMPLES_PER_DISPATCH: u32 = 16;

/// One dispatch of a sampled render: samples `first .. first + count` for tiles
/// `tile_base .. tile_base + tiles`.
pub(super) struct Batch {
    pub first: u32,
    pub count: u32,
    pub last: bool,
    pub tile_base: u32,
    pub tiles: u32,
}

/// The dispatches of `count` samples from `first` over `tiles` tiles: at most
/// [`SAMPLES_PER_DISPATCH`] samples (lavapipe ends a loop nest after 65535 iterations) and
/// `tiles_per_dispatch` tiles each, samples outermost so that each pixel's sum runs in order.
pub(super) fn batches(first: u32, count: u32, tiles: u32, tiles_per_dispatch: u32) -> impl Iterator<Item = Batch> {
    (0..count).step_by(SAMPLES_PER_DISPATCH as usize).flat_map(move |done| {
        let n = SAMPLES_PER_DISPATCH.min(count - done);
        (0..tiles).step_by(tiles_per_dispatch as usize).map(move |tile_base| Batch {
            first: first + done,
            count: n,
            last: done + n == count,
            tile_base,
            tiles: tiles_per_dispatch.min(tiles - tile_base),
        })
    })
}
