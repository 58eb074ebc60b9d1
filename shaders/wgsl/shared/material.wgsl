//! module
// A scene material: lumbre_raytrace's GpuMaterial (64 bytes), as every renderer reads it.

struct Material {
    kd: vec3<f32>,
    kind: u32,
    ks: vec3<f32>,
    ns: f32,
    ke: vec3<f32>,
    ni: f32,
    opacity: f32,
    // three scalars, not a vec3 (whose 16-byte alignment would make the struct 80 bytes)
    _p0: u32,
    _p1: u32,
    _p2: u32,
}
