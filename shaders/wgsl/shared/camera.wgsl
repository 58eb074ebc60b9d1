//! module
// The pinhole camera (lumbre_raytrace::Camera::to_gpu) and the 8x8 pixel tiles the
// renderers hand out, one per workgroup of 64: neighbouring rays walk the same nodes.

struct Camera {
    eye: vec4<f32>,
    // from the eye to the image plane's lower-left corner (relative: exact far from the origin)
    corner: vec4<f32>,
    horizontal: vec4<f32>,
    vertical: vec4<f32>,
    size: vec4<f32>,
}

fn safe_normalize(v: vec3<f32>) -> vec3<f32> {
    let l = length(v);
    if l > 0.0 {
        return v / l;
    }
    return vec3<f32>(0.0);
}

// Unit direction from the eye through image point (px, py), in pixels from the top-left
// corner (the CPU's Camera::ray).
fn camera_dir(cam: Camera, px: f32, py: f32) -> vec3<f32> {
    let st = vec2<f32>(px / cam.size.x, 1.0 - py / cam.size.y);
    return safe_normalize(cam.corner.xyz + cam.horizontal.xyz * st.x + cam.vertical.xyz * st.y);
}

// Pixel of thread `lid` in 8x8 tile `tile` of an image `width` pixels wide.
fn tile_pixel(tile: u32, width: u32, lid: u32) -> vec2<u32> {
    let tiles_x = (width + 7u) / 8u;
    return vec2<u32>((tile % tiles_x) * 8u + lid % 8u, (tile / tiles_x) * 8u + lid / 8u);
}
