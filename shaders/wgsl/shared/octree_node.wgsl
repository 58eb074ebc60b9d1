// lumbre_octree::Node (36 bytes): key, first child, child mask, count, 5 channel sums.
struct Node {
    key: u32,
    first_child: u32,
    child_mask: u32,
    count: u32,
    sum: array<u32, 5>,
}
