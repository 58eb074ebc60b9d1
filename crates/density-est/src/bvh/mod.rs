//! Our index: a bounding volume hierarchy over the disks, traversed by every segment like a
//! ray (segments are long and disks small, so a hierarchy over the disks prunes far better
//! than one over segment boxes, which span much of the scene). The hierarchy is a linear BVH
//! (Karras 2012): disk centres in Morton order (`lumbre_morton`), a stable radix sort
//! (`lumbre_compact`), the radix tree of the sorted codes (`lumbre_morton::RadixTree`, on
//! the GPU `RadixTreeBuild`), boxes bottom-up, then nodes that
//! hold both children's boxes, quantized to 16 bits per coordinate in the root box (32-byte
//! nodes: a million disks' tree fits a GPU's L2), and the disks copied in tree order.
//! Segments traverse in the Morton order of their midpoints (neighbouring threads, and
//! consecutive segments of a CPU thread, visit the same nodes). Crossings add to per-disk
//! fixed-point sums in tree order, so the order of arrival does not matter, and a last stage
//! puts the sums back in the disks' order. Every other stage has a twin entry point in
//! `density/bvh.wgsl`; the trees are identical (integer topology, boxes by min and max,
//! the same quantization). The CPU walks the tree four-wide ([`wide`]) over the same
//! boxes, so it tests the same disks.
//!
//! [`node`] holds the tree's types, [`build`] its stages up to the packed nodes, [`traverse`]
//! the segments' walk and the sums, [`wide`] the four-wide nodes the CPU walks.

pub(crate) mod build;
pub(crate) mod node;
pub(crate) mod traverse;
pub(crate) mod wide;
