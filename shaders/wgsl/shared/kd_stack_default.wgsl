// Entries of the kd-tree traversal's short stack.
const KD_SHORT_STACK: u32 = 16u;
