//! module
// Parameters of one radix sort pass (lumbre_compact::twin::sort::SortParams), shared by its kernels.
struct SortParams {
    n: u32,
    shift: u32,
    // which 32-bit word of a key holds this pass's digit, and words per key (1 or 2)
    word: u32,
    key_words: u32,
    num_tiles: u32,
    has_values: u32,
    // keys longer than one binding are processed in pieces: this piece's first tile, and
    // the window of the output bound in this dispatch (scatter only)
    tile_base: u32,
    out_base: u32,
    out_len: u32,
    // one-sweep sort only: the pass (its row of digit starts), the passes of the whole sort,
    // tiles per counting workgroup, and the look-back tuning word (lumbre_compact::Lookback)
    digit_pass: u32,
    passes: u32,
    tiles_per_group: u32,
    lookback: u32,
}
