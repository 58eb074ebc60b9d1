//! Ray-based density estimation on the tangent plane: photon paths as ray segments, query disks, and the octree ray/disk index on the CPU and the GPU.
