//! module
// A G-buffer pixel as the G-buffer pass writes it and the shading passes read it
// (lumbre_lightcuts::GPixel, 64 bytes).

struct GPixel {
    position: vec3<f32>,
    flags: u32,
    normal: vec3<f32>,
    _pad0: u32,
    albedo: vec3<f32>,
    _pad1: u32,
    emission: vec3<f32>,
    _pad2: u32,
}
