// `align = N` asks `padded` for an element of that width: fields that do
// not fit it are refused with the element's rule, as before.
#[gpu_aligned::padded(align = 16)]
#[derive(Clone, Copy)]
struct Ball {
    center_radius: gpu_aligned::vector::float4,
    material: u32,
    roughness: f32,
}

fn main() {}
