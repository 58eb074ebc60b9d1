// lumbre_octree::Node (32 bytes): first child, child mask, count, 5 channel sums.
struct Node {
    first_child: u32,
    child_mask: u32,
    count: u32,
    sum: array<u32, 5>,
}
