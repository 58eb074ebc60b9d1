//! module
// lumbre_octree::Inner (12 bytes): an interior node of the packed octree.
struct Inner {
    first_child: u32,
    child_mask: u32,
    payload: u32,
}

// lumbre_octree::Payload (24 bytes): a node's point count and channel sums.
struct Payload {
    count: u32,
    sum: array<u32, 5>,
}
