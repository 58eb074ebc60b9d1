//! Lightcuts with imperfect shadow maps: virtual point lights, light trees, per-pixel cuts and instant radiosity on the CPU and the GPU.
