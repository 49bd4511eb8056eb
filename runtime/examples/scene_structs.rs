//! Structs over 16 bytes, as a real kernel uses them: a 144-byte camera
//! passed to the kernel by value (`#[derive(GpuData)]`, no `unsafe impl`),
//! and a table of 32-byte spheres (`#[gpu_aligned::padded]` over `{float4,
//! u32, f32}`) stored whole in a device arena, which every thread reads all
//! of: a warp-uniform read of whole elements, moved as 16-byte words
//! through the header's `Sphere_aos16` view. The CUDA structs come from the
//! crate's header emitter, prepended to the kernel source for NVRTC.
//!
//! The same kernel, written by hand against cudarc (hand-written C++
//! structs, `unsafe impl DeviceRepr`, plain cudarc allocations), is the
//! baseline: both are timed with CUDA events on one stream, warmed up, in
//! alternating rounds, and their images must be identical bit for bit.
//!
//! Run on a machine with an NVIDIA GPU:
//! `cargo run --release --features cuda --example scene_structs -p gpu-aligned`.

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc::driver::{
    sys, CudaContext, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::{float3, float4};
use gpu_aligned::GpuData;
use std::sync::Arc;

/// The kernel's parameter block, passed by value: 144 bytes, aligned to 8.
#[derive(Clone, Copy, GpuData)]
#[repr(C)]
struct Camera {
    origin: float3,
    lower_left: float3,
    horizontal: float3,
    vertical: float3,
    basis: [float3; 3],
    lens_radius: f32,
    time: [f32; 2],
    size: [u32; 2],
    samples: u32,
    depth: u32,
    seed: u64,
    sky: [f32; 6],
}

/// One sphere: 24 bytes of fields, padded to 32 and aligned to 16, so the
/// arena stores it whole and a kernel reads it as two 16-byte words.
#[gpu_aligned::padded]
#[derive(Clone, Copy)]
struct Sphere {
    center_radius: float4,
    albedo: u32,
    roughness: f32,
}

/// The kernel, shared by both versions: each defines `LOAD_SPHERE(k)`, the
/// read of sphere `k`, before it.
const RENDER: &str = r#"
__device__ __forceinline__ unsigned hash_u32(unsigned x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}
__device__ __forceinline__ float unit(unsigned x) {
    return (hash_u32(x) >> 8) * (1.0f / 16777216.0f);
}
extern "C" __global__ void render(Camera cam, const Sphere* spheres, unsigned count, float4* image) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cam.size[0] || y >= cam.size[1]) return;
    unsigned pixel = y * cam.size[0] + x;
    float r = 0.0f, g = 0.0f, b = 0.0f;
    for (unsigned s = 0; s < cam.samples; ++s) {
        unsigned key = (unsigned)cam.seed ^ ((pixel * cam.samples + s) * 9781U);
        float u = (x + unit(key)) / cam.size[0];
        float v = (y + unit(key + 1U)) / cam.size[1];
        float dx = cam.lower_left.x + u * cam.horizontal.x + v * cam.vertical.x - cam.origin.x;
        float dy = cam.lower_left.y + u * cam.horizontal.y + v * cam.vertical.y - cam.origin.y;
        float dz = cam.lower_left.z + u * cam.horizontal.z + v * cam.vertical.z - cam.origin.z;
        float inv = rsqrtf(dx * dx + dy * dy + dz * dz);
        dx *= inv; dy *= inv; dz *= inv;
        float best = 1e30f, cx = 0.0f, cy = 0.0f, cz = 0.0f, rough = 0.0f;
        unsigned albedo = 0;
        for (unsigned k = 0; k < count; ++k) {
            Sphere sp = LOAD_SPHERE(k);
            float ox = cam.origin.x - sp.center_radius.x;
            float oy = cam.origin.y - sp.center_radius.y;
            float oz = cam.origin.z - sp.center_radius.z;
            float bq = ox * dx + oy * dy + oz * dz;
            float c = ox * ox + oy * oy + oz * oz - sp.center_radius.w * sp.center_radius.w;
            float disc = bq * bq - c;
            if (disc > 0.0f) {
                float t = -bq - sqrtf(disc);
                if (t > 1e-3f && t < best) {
                    best = t; albedo = sp.albedo | 1U; rough = sp.roughness;
                    cx = sp.center_radius.x; cy = sp.center_radius.y; cz = sp.center_radius.z;
                }
            }
        }
        if (albedo != 0) {
            float nx = cam.origin.x + best * dx - cx;
            float ny = cam.origin.y + best * dy - cy;
            float nz = cam.origin.z + best * dz - cz;
            float n = rsqrtf(nx * nx + ny * ny + nz * nz);
            float light = fmaxf(0.0f, (0.3f * nx + 0.8f * ny + 0.5f * nz) * n);
            float shade = (0.2f + 0.8f * light) * (1.0f - 0.5f * rough);
            r += shade * ((albedo >> 24) & 255U) * (1.0f / 255.0f);
            g += shade * ((albedo >> 16) & 255U) * (1.0f / 255.0f);
            b += shade * ((albedo >> 8) & 255U) * (1.0f / 255.0f);
        } else {
            float t = 0.5f * (dy + 1.0f);
            r += (1.0f - t) * cam.sky[0] + t * cam.sky[3];
            g += (1.0f - t) * cam.sky[1] + t * cam.sky[4];
            b += (1.0f - t) * cam.sky[2] + t * cam.sky[5];
        }
    }
    float inv_samples = 1.0f / cam.samples;
    image[pixel] = make_float4(r * inv_samples, g * inv_samples, b * inv_samples, 1.0f);
}
"#;

/// The gpu-aligned version's kernel source: the emitted header, then the
/// kernel reading each sphere through `Sphere_aos16::load`, two 16-byte
/// words.
fn aligned_source() -> Result<String, Box<dyn std::error::Error>> {
    let mut header = CudaHeader::new();
    // The camera as a struct with its `static_assert`s; the sphere, which an
    // arena array holds whole, with its views (`Sphere_aos16`).
    header.add_data::<Camera>()?.add::<Sphere>()?;
    Ok(format!(
        "{}\n#define LOAD_SPHERE(k) Sphere_aos16::over(const_cast<Sphere*>(spheres), count).load(k)\n{RENDER}",
        header.render()
    ))
}

/// The baseline's C++ twins of the Rust structs, kept in step by hand.
const HAND_STRUCTS: &str = r#"
struct Camera {
    float3 origin, lower_left, horizontal, vertical;
    float3 basis[3];
    float lens_radius;
    float time[2];
    unsigned size[2];
    unsigned samples, depth;
    unsigned long long seed;
    float sky[6];
};
struct __align__(16) Sphere {
    float4 center_radius;
    unsigned albedo;
    float roughness;
    unsigned pad[2];
};
#define LOAD_SPHERE(k) spheres[k]
"#;

/// The baseline's Rust side: hand-written twins and `unsafe impl`s.
mod hand {
    use gpu_aligned::backend::cuda::cudarc::driver::DeviceRepr;

    #[derive(Clone, Copy)]
    #[repr(C)]
    pub struct Camera {
        pub origin: [f32; 3],
        pub lower_left: [f32; 3],
        pub horizontal: [f32; 3],
        pub vertical: [f32; 3],
        pub basis: [[f32; 3]; 3],
        pub lens_radius: f32,
        pub time: [f32; 2],
        pub size: [u32; 2],
        pub samples: u32,
        pub depth: u32,
        pub seed: u64,
        pub sky: [f32; 6],
    }

    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    pub struct Sphere {
        pub center_radius: [f32; 4],
        pub albedo: u32,
        pub roughness: f32,
        pub pad: [u32; 2],
    }

    // SAFETY: `repr(C)`, no padding (144 bytes of fields), plain numbers:
    // its bytes are the kernel's `Camera` as they are.
    unsafe impl DeviceRepr for Camera {}
    // SAFETY: `repr(C, align(16))`, 32 bytes of fields, plain numbers, as
    // the kernel's `Sphere`.
    unsafe impl DeviceRepr for Sphere {}

    const _: () = assert!(core::mem::size_of::<Camera>() == 144);
    const _: () = assert!(core::mem::size_of::<Sphere>() == 32);
}

const WIDTH: u32 = 1920;
const HEIGHT: u32 = 1080;
const SAMPLES: u32 = 4;
const SPHERES: usize = 485;
const WARMUP: usize = 3;
const ROUNDS: usize = 21;

fn camera() -> Camera {
    Camera {
        origin: float3::new(0.0, 1.0, 6.0),
        lower_left: float3::new(-3.2, -0.8, 4.0),
        horizontal: float3::new(6.4, 0.0, 0.0),
        vertical: float3::new(0.0, 3.6, 0.0),
        basis: [
            float3::new(1.0, 0.0, 0.0),
            float3::new(0.0, 1.0, 0.0),
            float3::new(0.0, 0.0, 1.0),
        ],
        lens_radius: 0.0,
        time: [0.0, 1.0],
        size: [WIDTH, HEIGHT],
        samples: SAMPLES,
        depth: 1,
        seed: 0x9e37_79b9_7f4a_7c15,
        sky: [1.0, 1.0, 1.0, 0.5, 0.7, 1.0],
    }
}

fn spheres() -> Vec<Sphere> {
    let mut state = 0x2545_f491_u32;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    let mut spheres = vec![Sphere::new(
        float4::new(0.0, -1000.0, 0.0, 1000.0),
        0x8080_80ff,
        0.5,
    )];
    for i in 1..SPHERES {
        let (a, b) = ((i % 22) as f32 - 11.0, (i / 22) as f32 - 11.0);
        let jitter = |n: u32| (n % 1000) as f32 / 1000.0;
        let center = float4::new(a + 0.9 * jitter(next()), 0.2, b + 0.9 * jitter(next()), 0.2);
        spheres.push(Sphere::new(center, next(), jitter(next())));
    }
    spheres
}

/// One timed launch of `render` on `stream`, in milliseconds (CUDA events).
fn timed(
    stream: &Arc<CudaStream>,
    launch: &mut dyn FnMut() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let start = stream.record_event(timing)?;
    launch()?;
    let end = stream.record_event(timing)?;
    end.synchronize()?;
    Ok(f64::from(start.elapsed_ms(&end)?))
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn config() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (WIDTH.div_ceil(16), HEIGHT.div_ceil(16), 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = CudaContext::new(0)?;
    let stream = context.new_stream()?;
    let aligned = context.load_module(compile_ptx(aligned_source()?)?)?;
    let aligned = aligned.load_function("render")?;
    let hand_module = context.load_module(compile_ptx(format!("{HAND_STRUCTS}\n{RENDER}"))?)?;
    let hand_render = hand_module.load_function("render")?;
    let pixels = (WIDTH * HEIGHT) as usize;
    let count = SPHERES as u32;

    // gpu-aligned: one arena, the spheres stored whole, the camera by value.
    let camera = camera();
    let scene = spheres();
    let mut arena = Arena::device(&stream, 64 << 20)?;
    let table = arena.alloc_from(&scene)?;
    let mut image = arena.alloc_zeros::<float4>(pixels)?;
    let mut run_aligned = || -> Result<(), Box<dyn std::error::Error>> {
        let (table, mut image) = (
            arena.view(&table, .., &stream)?,
            arena.view_mut(&mut image, .., &stream)?,
        );
        let mut builder = stream.launch_builder(&aligned);
        builder.arg(&camera).arg(&table).arg(&count).arg(&mut image);
        // SAFETY: `render` takes a `Camera` by value (the header's, which
        // `static_assert`s the Rust layout), `count` spheres, `count`, and
        // WIDTH * HEIGHT `float4`s: the arrays hold that many.
        unsafe { builder.launch(config()) }?;
        Ok(())
    };

    // The baseline: the same data through hand-written twins.
    let hand_camera = hand::Camera {
        origin: [camera.origin.x, camera.origin.y, camera.origin.z],
        lower_left: [
            camera.lower_left.x,
            camera.lower_left.y,
            camera.lower_left.z,
        ],
        horizontal: [
            camera.horizontal.x,
            camera.horizontal.y,
            camera.horizontal.z,
        ],
        vertical: [camera.vertical.x, camera.vertical.y, camera.vertical.z],
        basis: camera.basis.map(|v| [v.x, v.y, v.z]),
        lens_radius: camera.lens_radius,
        time: camera.time,
        size: camera.size,
        samples: camera.samples,
        depth: camera.depth,
        seed: camera.seed,
        sky: camera.sky,
    };
    let hand_scene: Vec<hand::Sphere> = scene
        .iter()
        .map(|s| {
            let fields = SphereFields::from(*s);
            let c = fields.center_radius;
            hand::Sphere {
                center_radius: [c.x, c.y, c.z, c.w],
                albedo: fields.albedo,
                roughness: fields.roughness,
                pad: [0; 2],
            }
        })
        .collect();
    let hand_table = stream.clone_htod(&hand_scene)?;
    let mut hand_image = stream.alloc_zeros::<f32>(4 * pixels)?;
    let mut run_hand = || -> Result<(), Box<dyn std::error::Error>> {
        let mut builder = stream.launch_builder(&hand_render);
        builder
            .arg(&hand_camera)
            .arg(&hand_table)
            .arg(&count)
            .arg(&mut hand_image);
        // SAFETY: as above, with the hand-written twins (their sizes are
        // asserted, their offsets kept in step by hand) and 4 * WIDTH *
        // HEIGHT floats.
        unsafe { builder.launch(config()) }?;
        Ok(())
    };

    for _ in 0..WARMUP {
        timed(&stream, &mut run_aligned)?;
        timed(&stream, &mut run_hand)?;
    }
    let (mut aligned_ms, mut hand_ms) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Alternating which goes first, so neither always runs on a warmer GPU.
        if round % 2 == 0 {
            aligned_ms.push(timed(&stream, &mut run_aligned)?);
            hand_ms.push(timed(&stream, &mut run_hand)?);
        } else {
            hand_ms.push(timed(&stream, &mut run_hand)?);
            aligned_ms.push(timed(&stream, &mut run_aligned)?);
        }
    }

    let ours = arena.to_vec(&image)?;
    let theirs = stream.clone_dtoh(&hand_image)?;
    let ours_bits: Vec<u32> = ours
        .iter()
        .flat_map(|p| [p.x, p.y, p.z, p.w])
        .map(f32::to_bits)
        .collect();
    let theirs_bits: Vec<u32> = theirs.iter().map(|v| v.to_bits()).collect();
    let identical = ours_bits == theirs_bits;
    let checksum: f64 = ours.iter().map(|p| f64::from(p.x + p.y + p.z)).sum();

    let (ours_ms, theirs_ms) = (median(aligned_ms), median(hand_ms));
    println!(
        "scene_structs: {WIDTH}x{HEIGHT}, {SAMPLES} samples, {SPHERES} spheres of {} bytes read whole, a {}-byte camera by value",
        core::mem::size_of::<Sphere>(),
        core::mem::size_of::<Camera>(),
    );
    println!("  gpu-aligned (derived, header, arena) median {ours_ms:.3} ms");
    println!("  hand-written cudarc                    median {theirs_ms:.3} ms");
    println!(
        "  ratio gpu-aligned / hand-written: {:.4} (medians of {ROUNDS} alternating rounds after {WARMUP} warm-up)",
        ours_ms / theirs_ms
    );
    println!("  images identical: {identical} (checksum {checksum:.3})");
    if !identical {
        return Err("the two versions' images differ".into());
    }
    Ok(())
}
