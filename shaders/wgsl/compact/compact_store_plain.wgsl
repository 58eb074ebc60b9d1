//! module
// Compaction stores without subgroups: each thread writes its own kept elements from `at`
// on. The includer defines `Quad` and `place`.
fn store_kept(at: u32, q: Quad, l: Lanes) {
    place(at, q);
}
