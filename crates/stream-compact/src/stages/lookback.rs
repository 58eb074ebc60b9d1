//! What `compact/lookback.wgsl` leaves in its state words after a dispatch: the ticket
//! counter, and each tile's published aggregate and inclusive prefix.

use lumbre_gpu::stages::put;

/// Ready flag of a published half word.
const READY: u32 = 0x10000;

/// Publishes `bits` in slot pair `k` of `tile` (0: aggregate, 2: inclusive prefix).
fn publish(state: &mut [u32], tile: usize, k: usize, bits: u32) {
    let slot = 4 + 4 * tile + k;
    put(state, slot, READY | (bits & 0xffff));
    put(state, slot + 1, READY | (bits >> 16));
}

/// Records what tile `tile` publishes: tile 0 its inclusive prefix only, the others their
/// aggregate and, unless bit 31 of `tuning` asks every tile to walk to tile 0, their
/// inclusive prefix (values as bits).
pub(super) fn publish_tile(state: &mut [u32], tile: usize, aggregate: u32, inclusive: u32, tuning: u32) {
    if tile == 0 {
        publish(state, 0, 2, inclusive);
        return;
    }
    publish(state, tile, 0, aggregate);
    if tuning >> 31 == 0 {
        publish(state, tile, 2, inclusive);
    }
}

/// Counts `tiles` tickets taken from the counter in word 0.
pub(super) fn take_tickets(state: &mut [u32], tiles: u32) {
    if let Some(t) = state.first_mut() {
        *t = t.wrapping_add(tiles);
    }
}
