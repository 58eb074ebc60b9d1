// Traversal arrays for trees up to lumbre_octree::MAX_DEPTH (21): lumbre_octree::STACK_SIZE
// entries (8 per level plus the root's) and one corner per level.
const STACK: u32 = 176u;
const LEVELS: u32 = 22u;
