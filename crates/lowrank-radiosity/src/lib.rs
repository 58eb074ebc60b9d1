//! Low-rank radiosity with a sparse V: two-mesh scenes (2MF, 2MCE), form factors with visibility, and the fixed-geometry solve on the CPU and the GPU.
