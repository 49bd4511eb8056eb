//! The device arena on a real GPU: carved arrays updated by NVRTC kernels,
//! pitched 2D round trips, the largest array that fits, alignment of every
//! view, copies and their errors.

use crate::support::{grid, GrowingArena};
use gpu_aligned::align::ARRAY_ALIGN;
use gpu_aligned::alloc::AllocError;
use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::backend::cuda::cudarc::driver::{
    sys, DevicePtr, DeviceSlice, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::CudaError;
use gpu_aligned::backend::Buffer;
use gpu_aligned::vector::{float2, float3, float4};
use gpu_aligned::GpuAligned;

use crate::support::address_of;
use crate::support::Rng;
use crate::types::{module, stream, Pair, Particle, Position, Rgba, Sample};

const UPDATE_ALL: &str = r#"
extern "C" __global__ void update_all(
    Position* pos, unsigned long long n_pos, Sample* smp, unsigned long long n_smp,
    Pair* pairs, unsigned long long n_pairs, Particle* parts, unsigned long long n_parts,
    Rgba* px, unsigned long long n_px, float4* f4, unsigned long long n_f4,
    double* d, unsigned long long n_d, unsigned char* bytes, unsigned long long n_bytes)
{
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_pos)   { Position v = gpu_load(pos + i); v.p.x += 1.0f; v.p.y *= 2.0f; v.p.z = -v.p.z; gpu_store(pos + i, v); }
    if (i < n_smp)   { Sample v = gpu_load(smp + i); v.t += 0.5f; v.v *= 2.0; gpu_store(smp + i, v); }
    if (i < n_pairs) { Pair v = gpu_load(pairs + i); v.id += 7u; v.w = -v.w; gpu_store(pairs + i, v); }
    if (i < n_parts) { Particle v = gpu_load(parts + i); v.pair.id ^= 0xffu; v.v.x += v.v.y; gpu_store(parts + i, v); }
    if (i < n_px)    { Rgba v = gpu_load(px + i); for (int k = 0; k < 4; ++k) v.c[k] = 255 - v.c[k]; gpu_store(px + i, v); }
    if (i < n_f4)    { float4 v = f4[i]; v.x += v.w; v.y *= 2.0f; v.z = -v.z; f4[i] = v; }
    if (i < n_d)     { d[i] = d[i] * 2.0 + 1.0; }
    if (i < n_bytes) { bytes[i] = (unsigned char)(bytes[i] + 1); }
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn carved_derived_and_padded_types_are_updated_by_a_kernel() {
    let stream = stream();
    let module = module(&stream, UPDATE_ALL);
    let kernel = module.load_function("update_all").unwrap();
    let mut arena = Arena::device(&stream, 8 << 20).unwrap();

    // Odd lengths, so no array ends on a 256-byte boundary by luck.
    let (n_pos, n_smp, n_pairs, n_parts, n_px, n_f4, n_d, n_bytes) =
        (1001usize, 333, 517, 259, 1027, 77, 129, 3);
    let mut plan = Plan::new();
    let k_pos = plan.array::<Position>(n_pos);
    let k_smp = plan.array::<Sample>(n_smp);
    let k_pairs = plan.array::<Pair>(n_pairs);
    let k_parts = plan.array::<Particle>(n_parts);
    let k_px = plan.array::<Rgba>(n_px);
    let k_f4 = plan.array::<float4>(n_f4);
    let k_d = plan.array::<f64>(n_d);
    let k_bytes = plan.array::<u8>(n_bytes);
    let mut carving = arena.carve(&plan).unwrap();
    assert_eq!(carving.arrays().len(), 8);
    let mut pos = carving.take(k_pos).unwrap();
    let mut smp = carving.take(k_smp).unwrap();
    let mut pairs = carving.take(k_pairs).unwrap();
    let mut parts = carving.take(k_parts).unwrap();
    let mut px = carving.take(k_px).unwrap();
    let mut f4 = carving.take(k_f4).unwrap();
    let mut d = carving.take(k_d).unwrap();
    let mut bytes = carving.take(k_bytes).unwrap();

    // One buffer: every address lies inside it, on a 256-byte boundary.
    let base = arena.backend().base_address();
    let end = base + (8 << 20);
    for address in [
        address_of(&arena, &pos).unwrap(),
        address_of(&arena, &smp).unwrap(),
        address_of(&arena, &pairs).unwrap(),
        address_of(&arena, &parts).unwrap(),
        address_of(&arena, &px).unwrap(),
        address_of(&arena, &f4).unwrap(),
        address_of(&arena, &d).unwrap(),
        address_of(&arena, &bytes).unwrap(),
    ] {
        assert!(
            address >= base && address < end,
            "{address:#x} outside {base:#x}..{end:#x}"
        );
        assert_eq!(address % 256, 0, "{address:#x}");
    }

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let h_pos: Vec<Position> = (0..n_pos)
        .map(|_| Position::new(float3::new(rng.f32(), rng.f32(), rng.f32())))
        .collect();
    let h_smp: Vec<Sample> = (0..n_smp)
        .map(|_| Sample::new(rng.f32(), rng.f64()))
        .collect();
    let h_pairs: Vec<Pair> = (0..n_pairs)
        .map(|_| Pair {
            id: rng.u32() >> 1,
            w: rng.f32(),
        })
        .collect();
    let h_parts: Vec<Particle> = (0..n_parts)
        .map(|_| Particle {
            pair: Pair {
                id: rng.u32(),
                w: rng.f32(),
            },
            v: float2::new(rng.f32(), rng.f32()),
        })
        .collect();
    let h_px: Vec<Rgba> = (0..n_px)
        .map(|_| Rgba {
            c: rng.u32().to_le_bytes(),
        })
        .collect();
    let h_f4: Vec<float4> = (0..n_f4)
        .map(|_| float4::new(rng.f32(), rng.f32(), rng.f32(), rng.f32()))
        .collect();
    let h_d: Vec<f64> = (0..n_d).map(|_| rng.f64()).collect();
    let h_bytes: Vec<u8> = vec![0, 41, 255];

    arena.write(&mut pos, .., &h_pos).unwrap();
    arena.write(&mut smp, .., &h_smp).unwrap();
    arena.write(&mut pairs, .., &h_pairs).unwrap();
    arena.write(&mut parts, .., &h_parts).unwrap();
    arena.write(&mut px, .., &h_px).unwrap();
    arena.write(&mut f4, .., &h_f4).unwrap();
    arena.write(&mut d, .., &h_d).unwrap();
    arena.write(&mut bytes, .., &h_bytes).unwrap();

    {
        let mut views = (
            arena.view_mut(&mut pos, .., &stream).unwrap(),
            arena.view_mut(&mut smp, .., &stream).unwrap(),
            arena.view_mut(&mut pairs, .., &stream).unwrap(),
            arena.view_mut(&mut parts, .., &stream).unwrap(),
            arena.view_mut(&mut px, .., &stream).unwrap(),
            arena.view_mut(&mut f4, .., &stream).unwrap(),
            arena.view_mut(&mut d, .., &stream).unwrap(),
            arena.view_mut(&mut bytes, .., &stream).unwrap(),
        );
        let counts = [n_pos, n_smp, n_pairs, n_parts, n_px, n_f4, n_d, n_bytes].map(|n| n as u64);
        let mut launch = stream.launch_builder(&kernel);
        launch
            .arg(&mut views.0)
            .arg(&counts[0])
            .arg(&mut views.1)
            .arg(&counts[1])
            .arg(&mut views.2)
            .arg(&counts[2]);
        launch
            .arg(&mut views.3)
            .arg(&counts[3])
            .arg(&mut views.4)
            .arg(&counts[4])
            .arg(&mut views.5)
            .arg(&counts[5]);
        launch
            .arg(&mut views.6)
            .arg(&counts[6])
            .arg(&mut views.7)
            .arg(&counts[7]);
        // SAFETY: the argument list matches `update_all`, and every length
        // passed is the length of the view before it.
        unsafe { launch.launch(grid(n_px, 128)) }.unwrap();
    }
    arena.backend().synchronize().unwrap();

    let want_pos: Vec<Position> = h_pos
        .iter()
        .map(|v| Position::new(float3::new(v.p.x + 1.0, v.p.y * 2.0, -v.p.z)))
        .collect();
    assert_eq!(arena.to_vec(&pos).unwrap(), want_pos);
    let want_smp: Vec<Sample> = h_smp
        .iter()
        .map(|v| Sample::new(v.t + 0.5, v.v * 2.0))
        .collect();
    assert_eq!(arena.to_vec(&smp).unwrap(), want_smp);
    let want_pairs: Vec<Pair> = h_pairs
        .iter()
        .map(|v| Pair {
            id: v.id + 7,
            w: -v.w,
        })
        .collect();
    assert_eq!(arena.to_vec(&pairs).unwrap(), want_pairs);
    let want_parts: Vec<Particle> = h_parts
        .iter()
        .map(|v| Particle {
            pair: Pair {
                id: v.pair.id ^ 0xff,
                w: v.pair.w,
            },
            v: float2::new(v.v.x + v.v.y, v.v.y),
        })
        .collect();
    assert_eq!(arena.to_vec(&parts).unwrap(), want_parts);
    let want_px: Vec<Rgba> = h_px
        .iter()
        .map(|v| Rgba {
            c: v.c.map(|c| 255 - c),
        })
        .collect();
    assert_eq!(arena.to_vec(&px).unwrap(), want_px);
    let want_f4: Vec<float4> = h_f4
        .iter()
        .map(|v| float4::new(v.x + v.w, v.y * 2.0, -v.z, v.w))
        .collect();
    assert_eq!(arena.to_vec(&f4).unwrap(), want_f4);
    let want_d: Vec<f64> = h_d.iter().map(|v| v * 2.0 + 1.0).collect();
    assert_eq!(arena.to_vec(&d).unwrap(), want_d);
    assert_eq!(arena.to_vec(&bytes).unwrap(), vec![1, 42, 0]);

    arena.free(carving).unwrap();
    arena.free(pos).unwrap();
    arena.free(smp).unwrap();
    arena.free(pairs).unwrap();
    arena.free(parts).unwrap();
    arena.free(px).unwrap();
    arena.free(f4).unwrap();
    arena.free(d).unwrap();
    arena.free(bytes).unwrap();
    assert_eq!(arena.allocator().stats().allocations, 0);
}

const TOUCH_ROWS: &str = r#"
extern "C" __global__ void touch_rows(float* base, unsigned long long pitch_elems,
                                      unsigned long long width, unsigned long long height)
{
    unsigned long long col = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long row = blockIdx.y;
    if (col < width && row < height) {
        float* r = base + row * pitch_elems;
        r[col] = r[col] * 2.0f + (float)row;
    }
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pitched_round_trip_with_a_kernel_on_every_row() {
    let stream = stream();
    let module = module(&stream, TOUCH_ROWS);
    let kernel = module.load_function("touch_rows").unwrap();
    let mut arena = Arena::device(&stream, 4 << 20).unwrap();
    let (width, height) = (300usize, 97usize);
    let _before = arena.alloc::<u8>(5).unwrap();
    let mut rows = arena.alloc_pitched::<f32>(width, height).unwrap();
    assert_eq!(rows.pitch(), 1536);
    assert_eq!(arena.offset(&rows).unwrap() % 512, 0);

    let mut rng = Rng(7);
    let host: Vec<f32> = (0..width * height).map(|_| rng.f32()).collect();
    arena.write(&mut rows, .., &host).unwrap();
    {
        let pitch_elems = rows.pitch() / 4;
        let mut view = arena.view_mut(&mut rows, .., &stream).unwrap();
        assert_eq!(view.len(), pitch_elems * height);
        let (w, h) = (width as u64, height as u64);
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&mut view).arg(&pitch_elems).arg(&w).arg(&h);
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(width.div_ceil(128)).unwrap(),
                u32::try_from(height).unwrap(),
                1,
            ),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `touch_rows` reads and writes `width` elements of each of
        // `height` rows, `pitch_elems` apart: inside the view.
        unsafe { launch.launch(cfg) }.unwrap();
    }
    let mut back = vec![f32::NAN; host.len()];
    arena.read(&rows, .., &mut back).unwrap();
    for row in 0..height {
        for col in 0..width {
            let i = row * width + col;
            assert_eq!(back[i], host[i] * 2.0 + row as f32, "row {row} col {col}");
        }
    }
    // Neither the 2D copy nor the kernel wrote the padding after each row:
    // it still holds the zeros the backend started with.
    let pitch_elems = rows.pitch() / 4;
    let mut whole = vec![f32::NAN; pitch_elems * height];
    {
        let view = arena.view(&rows, .., &stream).unwrap();
        stream.memcpy_dtoh(&view, &mut whole).unwrap();
        stream.synchronize().unwrap();
    }
    for row in 0..height {
        let line = &whole[row * pitch_elems..(row + 1) * pitch_elems];
        assert_eq!(&line[..width], &back[row * width..(row + 1) * width]);
        assert!(
            line[width..].iter().all(|&v| v.to_bits() == 0),
            "row {row} padding"
        );
    }
    arena.free(rows).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pitch_matches_cu_mem_alloc_pitch() {
    let stream = stream();
    let mut arena = Arena::device(&stream, 16 << 20).unwrap();
    let mut checked = 0;
    for width_bytes in [
        1u64, 4, 12, 16, 100, 256, 500, 512, 513, 1000, 1024, 1500, 2048, 4097, 7680, 65_536,
    ] {
        for elem in [4u64, 8, 16] {
            if width_bytes % elem != 0 {
                continue;
            }
            let mut ptr = 0;
            let mut pitch = 0;
            // SAFETY: writes one pointer and one pitch; freed just below.
            unsafe {
                sys::cuMemAllocPitch_v2(&mut ptr, &mut pitch, width_bytes as usize, 8, elem as u32)
            }
            .result()
            .unwrap();
            // SAFETY: `ptr` came from `cuMemAllocPitch` and is freed once.
            unsafe { sys::cuMemFree_v2(ptr) }.result().unwrap();
            let ours = match elem {
                4 => pitch_of::<f32>(&mut arena, width_bytes / 4),
                8 => pitch_of::<f64>(&mut arena, width_bytes / 8),
                _ => pitch_of::<float4>(&mut arena, width_bytes / 16),
            };
            assert_eq!(
                ours, pitch as u64,
                "{width_bytes} B rows of {elem}-byte elements"
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked}");
}

fn pitch_of<T: GpuAligned>(
    arena: &mut Arena<gpu_aligned::backend::cuda::CudaBackend>,
    width: u64,
) -> u64 {
    let rows = arena.alloc_pitched::<T>(width as usize, 8).unwrap();
    let pitch = rows.pitch();
    arena.free(rows).unwrap();
    pitch as u64
}

const FILL_INDEX: &str = r#"
extern "C" __global__ void fill_index(unsigned int* a, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        a[i] = (unsigned int)(i * 2654435761ull);
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_launch_over_the_largest_array_that_fits() {
    let stream = stream();
    let module = module(&stream, FILL_INDEX);
    let kernel = module.load_function("fill_index").unwrap();
    let capacity = 256usize << 20;
    let mut arena = Arena::device(&stream, capacity).unwrap();
    // Pins an exact layout: no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let head = arena.alloc::<u8>(1000).unwrap();
    let align = arena.min_align().max(align_of::<u32>());
    let largest = arena.allocator().largest_allocatable(align).unwrap() / 4;
    assert!(largest * 4 > capacity - 2048, "{largest}");
    let mut big = arena.alloc::<u32>(largest).unwrap();
    // The kernel's `unsigned long long n`.
    let n = largest as u64;
    match arena.alloc::<u32>(1) {
        Err(ArenaError::Alloc(AllocError::OutOfMemory { .. })) => {}
        other => panic!("a full arena allocated: {other:?}"),
    }
    {
        let mut view = arena.view_mut(&mut big, .., &stream).unwrap();
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&mut view).arg(&n);
        let cfg = LaunchConfig {
            grid_dim: (132 * 8, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `fill_index` writes elements `[0, largest)` of the view.
        unsafe { launch.launch(cfg) }.unwrap();
    }
    let back = arena.to_vec(&big).unwrap();
    assert_eq!(back.len(), largest);
    for (i, v) in back.iter().enumerate() {
        assert_eq!(
            *v,
            (i as u64).wrapping_mul(2_654_435_761) as u32,
            "element {i}"
        );
    }
    // The array ends exactly at the buffer's end or inside it.
    assert!(arena.offset(&big).unwrap() + big.size_bytes() as u64 <= capacity as u64);
    arena.free(big).unwrap();
    arena.free(head).unwrap();
}

const TOUCH_ALIGNED: &str = r#"
extern "C" __global__ void touch_aligned(float4* f4, double* d, unsigned short* s, Position* p) {
    unsigned int i = threadIdx.x;
    if (i < 5) { float4 v = f4[i]; v.x += 1.0f; f4[i] = v; }
    if (i < 7) d[i] += 1.0;
    if (i < 9) s[i] += 1;
    if (i < 3) { Position v = gpu_load(p + i); v.p.y += 1.0f; gpu_store(p + i, v); }
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_misaligned_typed_view_cannot_be_made() {
    let stream = stream();
    let module = module(&stream, TOUCH_ALIGNED);
    let kernel = module.load_function("touch_aligned").unwrap();
    // The weakest arena there is: minimum alignment 1. Odd-sized byte arrays
    // in between try to push every later array off its natural alignment.
    let mut arena = ArenaOptions::new()
        .min_align(1)
        .pitch_align(512)
        .device(&stream, 1 << 20)
        .unwrap();
    assert!(arena.backend().base_alignment() >= ARRAY_ALIGN);
    let b1 = arena.alloc::<u8>(1).unwrap();
    let mut f4 = arena.alloc::<float4>(5).unwrap();
    let b3 = arena.alloc::<u8>(3).unwrap();
    let mut d = arena.alloc::<f64>(7).unwrap();
    let b5 = arena.alloc::<u8>(5).unwrap();
    let mut s = arena.alloc::<u16>(9).unwrap();
    let b7 = arena.alloc::<u8>(7).unwrap();
    let mut p = arena.alloc::<Position>(3).unwrap();
    assert_eq!(address_of(&arena, &f4).unwrap() % 16, 0);
    assert_eq!(address_of(&arena, &d).unwrap() % 8, 0);
    assert_eq!(address_of(&arena, &s).unwrap() % 2, 0);
    assert_eq!(address_of(&arena, &p).unwrap() % 16, 0);
    // With a minimum of 1, the arena did not round these to 256: the
    // alignment each got came from its type alone.
    let offsets = [
        arena.offset(&f4).unwrap(),
        arena.offset(&d).unwrap(),
        arena.offset(&s).unwrap(),
        arena.offset(&p).unwrap(),
    ];
    assert!(offsets.iter().any(|o| o % 256 != 0), "{offsets:?}");

    // Every sub-range view, read-only or writable, starts on an element
    // boundary and holds the elements its range names.
    let base = address_of(&arena, &f4).unwrap();
    for start in 0..5usize {
        let view = arena.view(&f4, start.., &stream).unwrap();
        let (ptr, _sync) = view.device_ptr(&stream);
        assert_eq!(
            ptr,
            base + 16 * start as u64,
            "float4 view at element {start}"
        );
        assert_eq!(view.len(), 5 - start);
    }
    for start in 0..5usize {
        let view = arena.view_mut(&mut f4, start..=start, &stream).unwrap();
        let (ptr, _sync) = view.device_ptr(&stream);
        assert_eq!(
            ptr,
            base + 16 * start as u64,
            "writable float4 view at {start}"
        );
        assert_eq!(view.len(), 1);
    }
    for start in 0..7usize {
        let view = arena.view(&d, start..start + 1, &stream).unwrap();
        let (ptr, _sync) = view.device_ptr(&stream);
        assert_eq!(ptr % 8, 0, "f64 view at element {start}");
    }
    // A range outside the array, reversed or overflowing is refused.
    #[allow(clippy::reversed_empty_ranges)]
    let refused = [
        arena.view(&f4, 4..6, &stream).map(drop),
        arena.view(&f4, usize::MAX.., &stream).map(drop),
        arena.view(&f4, 3..1, &stream).map(drop),
        arena.view(&f4, ..=usize::MAX, &stream).map(drop),
        arena.view_mut(&mut d, 7..8, &stream).map(drop),
        arena.view_mut(&mut d, 2..1, &stream).map(drop),
        arena.view_mut(&mut d, 1..=usize::MAX, &stream).map(drop),
    ];
    for result in refused {
        assert!(
            matches!(result, Err(ArenaError::OutOfRange { .. })),
            "{result:?}"
        );
    }

    // And a kernel doing 16- and 8-byte accesses through them does not fault.
    arena
        .write(&mut f4, .., &[float4::new(1.0, 2.0, 3.0, 4.0); 5])
        .unwrap();
    arena.write(&mut d, .., &[0.5; 7]).unwrap();
    arena.write(&mut s, .., &[10; 9]).unwrap();
    arena
        .write(&mut p, .., &[Position::new(float3::new(1.0, 2.0, 3.0)); 3])
        .unwrap();
    {
        let (mut vf4, mut vd, mut vs, mut vp) = (
            arena.view_mut(&mut f4, .., &stream).unwrap(),
            arena.view_mut(&mut d, .., &stream).unwrap(),
            arena.view_mut(&mut s, .., &stream).unwrap(),
            arena.view_mut(&mut p, .., &stream).unwrap(),
        );
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&mut vf4).arg(&mut vd).arg(&mut vs).arg(&mut vp);
        // SAFETY: `touch_aligned` touches 5, 7, 9 and 3 elements.
        unsafe { launch.launch(grid(32, 32)) }.unwrap();
    }
    arena.backend().synchronize().unwrap();
    assert_eq!(
        arena.to_vec(&f4).unwrap(),
        vec![float4::new(2.0, 2.0, 3.0, 4.0); 5]
    );
    assert_eq!(arena.to_vec(&d).unwrap(), vec![1.5; 7]);
    assert_eq!(arena.to_vec(&s).unwrap(), vec![11; 9]);
    assert_eq!(
        arena.to_vec(&p).unwrap(),
        vec![Position::new(float3::new(1.0, 3.0, 3.0)); 3]
    );
    for b in [b1, b3, b5, b7] {
        arena.free(b).unwrap();
    }
    arena.free(f4).unwrap();
    arena.free(d).unwrap();
    arena.free(s).unwrap();
    arena.free(p).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sub_range_copies_and_zero_fill() {
    let stream = stream();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut a = arena.alloc::<u32>(1000).unwrap();
    let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    arena.write(&mut a, .., &data).unwrap();
    arena.write(&mut a, 10..13, &[7, 8, 9]).unwrap();
    let mut middle = [0u32; 5];
    arena.read(&a, 9..14, &mut middle).unwrap();
    assert_eq!(middle, [28, 7, 8, 9, 40]);
    arena.zero(&mut a).unwrap();
    assert!(arena.to_vec(&a).unwrap().iter().all(|&v| v == 0));
    // The last element alone, then one past the end.
    arena.write(&mut a, 999.., &[5]).unwrap();
    let mut last = [0u32];
    arena.read(&a, 999.., &mut last).unwrap();
    assert_eq!(last, [5]);
    assert!(matches!(
        arena.write(&mut a, 999..1001, &[5, 6]),
        Err(ArenaError::OutOfRange { .. })
    ));
    assert!(matches!(
        arena.read(&a, 1000..1001, &mut last),
        Err(ArenaError::OutOfRange { .. })
    ));
    arena.free(a).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn neighbours_are_untouched_by_copies_and_zero_fill() {
    let stream = stream();
    let mut arena = ArenaOptions::new()
        .min_align(4)
        .pitch_align(512)
        .device(&stream, 1 << 20)
        .unwrap();
    // Pins an exact layout: no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let mut before = arena.alloc::<u32>(3).unwrap();
    let mut middle = arena.alloc::<u32>(5).unwrap();
    let mut after = arena.alloc::<u32>(3).unwrap();
    assert_eq!(arena.offset(&middle).unwrap(), 12);
    arena.write(&mut before, .., &[1, 2, 3]).unwrap();
    arena.write(&mut after, .., &[4, 5, 6]).unwrap();
    arena.write(&mut middle, .., &[9; 5]).unwrap();
    arena.zero(&mut middle).unwrap();
    assert_eq!(arena.to_vec(&before).unwrap(), [1, 2, 3]);
    assert_eq!(arena.to_vec(&middle).unwrap(), [0; 5]);
    assert_eq!(arena.to_vec(&after).unwrap(), [4, 5, 6]);
    for h in [before, middle, after] {
        arena.free(h).unwrap();
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn length_mismatch_and_foreign_handles_are_errors() {
    let stream = stream();
    let mut one = Arena::device(&stream, 1 << 20).unwrap();
    let two = Arena::device(&stream, 1 << 20).unwrap();
    let mut a = one.alloc::<f32>(10).unwrap();
    match one.write(&mut a, .., &[1.0; 9]) {
        Err(ArenaError::LengthMismatch {
            expected: 10,
            found: 9,
        }) => {}
        other => panic!("{other:?}"),
    }
    let mut out = [0.0f32; 11];
    assert!(matches!(
        one.read(&a, .., &mut out),
        Err(ArenaError::LengthMismatch { .. })
    ));
    assert!(matches!(
        two.write(&mut a, .., &[1.0; 10]),
        Err(ArenaError::Handle(_))
    ));
    assert!(matches!(
        two.view(&a, .., &stream),
        Err(ArenaError::Handle(_))
    ));
    assert!(matches!(two.zero(&mut a), Err(ArenaError::Handle(_))));
    let mut rows = one.alloc_pitched::<f32>(10, 4).unwrap();
    assert!(matches!(
        one.write(&mut rows, .., &[0.0; 39]),
        Err(ArenaError::LengthMismatch { .. })
    ));
    assert!(matches!(
        two.write(&mut rows, .., &[0.0; 40]),
        Err(ArenaError::Handle(_))
    ));
    one.free(rows).unwrap();
    one.free(a).unwrap();
    assert!(one.backend().fault().is_none());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_device_base_is_recorded_and_at_least_256_aligned() {
    let stream = stream();
    for len in [1usize, 255, 4096, 1 << 20, 100 << 20] {
        let arena = Arena::device(&stream, len).unwrap();
        let backend = arena.backend();
        assert!(
            backend.base_alignment() >= 256,
            "{len} B: base {:#x}",
            backend.base_address()
        );
        assert_eq!(backend.base_address() % backend.base_alignment() as u64, 0);
        assert_eq!(arena.allocator().stats().capacity, len);
    }
    assert!(matches!(
        Arena::device(&stream, 0),
        Err(ArenaError::Backend(CudaError::ZeroLength))
    ));
    // A huge request is a typed error from the driver, not a panic.
    match Arena::device(&stream, 1 << 50) {
        Err(ArenaError::Backend(CudaError::Driver { error, .. })) => assert!(
            matches!(
                error.0,
                sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY | sys::CUresult::CUDA_ERROR_INVALID_VALUE
            ),
            "{error:?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_fresh_arena_reads_as_zeros() {
    let stream = stream();
    let mut arena = Arena::device(&stream, 1 << 16).unwrap();
    // Pins an exact layout: no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let all = arena.alloc::<u64>((1 << 16) / 8).unwrap();
    assert!(arena.to_vec(&all).unwrap().iter().all(|&v| v == 0));
    arena.free(all).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn handles_made_stale_by_a_reset_or_a_trim_give_no_device_view_and_free_nothing() {
    use gpu_aligned::arena::GrowthPolicy;
    use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;

    // Two streams, so every array used on the device has its own events.
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let (s1, s2) = (context.new_stream().unwrap(), context.new_stream().unwrap());
    let mut arena = Arena::device(&s1, 1 << 20).unwrap();
    let mut old = arena.alloc::<u32>(256).unwrap();
    s2.memcpy_htod(&[5; 256], &mut arena.view_mut(&mut old, .., &s2).unwrap())
        .unwrap();
    let mut old_rows = arena.alloc_pitched::<u32>(8, 4).unwrap();
    arena.write(&mut old_rows, .., &[6; 32]).unwrap();
    let at = arena.offset(&old).unwrap();
    arena.reset().unwrap();
    // A new array takes the same bytes.
    let mut fresh = arena.alloc::<u32>(256).unwrap();
    assert_eq!(arena.offset(&fresh).unwrap(), at);
    s2.memcpy_htod(&[7; 256], &mut arena.view_mut(&mut fresh, .., &s2).unwrap())
        .unwrap();
    // Every verb and view refuses the stale handles.
    let stale = |result: Result<(), ArenaError<CudaError>>| {
        assert!(matches!(result, Err(ArenaError::Handle(_))), "{result:?}");
    };
    stale(arena.view(&old, .., &s1).map(drop));
    stale(arena.view(&old, 0..1, &s1).map(drop));
    stale(arena.view_mut(&mut old, .., &s1).map(drop));
    stale(arena.view(&old_rows, .., &s1).map(drop));
    stale(arena.view_mut(&mut old_rows, 1..2, &s1).map(drop));
    stale(arena.write(&mut old, .., &[9; 256]));
    stale(arena.zero(&mut old));
    stale(arena.to_vec(&old).map(drop));
    stale(arena.write(&mut old_rows, .., &[9; 32]));
    stale(arena.read(&old_rows, .., &mut [0; 32]));
    // A refused free hands the handle back and queues nothing; dropping it
    // gives its events up without freeing any bytes.
    let refused = arena.free(old).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    drop(refused.handle);
    let refused = arena.free(old_rows).unwrap_err();
    drop(refused.handle);
    assert_eq!(arena.pending_frees(), 0);
    assert_eq!(arena.to_vec(&fresh).unwrap(), [7; 256]);
    arena.free(fresh).unwrap();
    arena.backend().synchronize().unwrap();

    // A growing arena: the chunks a trim unmaps held a stale array, which
    // gives no view of the unmapped addresses.
    let mut growing = ArenaOptions::new()
        .growing_device(&s1, GrowthPolicy::up_to(64 << 20))
        .unwrap();
    if growing.growth().grows() {
        let mut big = growing.alloc::<u8>(8 << 20).unwrap();
        s2.memset_zeros(&mut growing.view_mut(&mut big, .., &s2).unwrap())
            .unwrap();
        growing.reset().unwrap();
        assert!(growing.trim().unwrap() > 0);
        assert_eq!(growing.capacity(), growing.growth().initial());
        stale(growing.view(&big, .., &s1).map(drop));
        stale(growing.view_mut(&mut big, .., &s1).map(drop));
        stale(growing.write(&mut big, .., &vec![1; 8 << 20]));
        let refused = growing.free(big).unwrap_err();
        drop(refused.handle);
        let mut again = growing.alloc::<u8>(8 << 20).unwrap();
        assert!(growing.to_vec(&again).unwrap().iter().all(|&b| b == 0));
        growing.zero(&mut again).unwrap();
        growing.free(again).unwrap();
        growing.backend().synchronize().unwrap();
    }
}
