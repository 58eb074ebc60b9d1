// Traversal arrays for trees up to depth 10: 8 stack entries per level plus the root's, and
// one corner per level. Sized for the tree, not for lumbre_octree::MAX_DEPTH: the larger
// private arrays made 1080p frames slower on an H200 (benches/RESULTS.md).
const STACK: u32 = 88u;
const LEVELS: u32 = 11u;
