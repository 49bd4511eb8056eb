//! Structures of arrays on a GPU (`--include-ignored` on a machine with one):
//! the same kernel source, compiled by NVRTC against the header the emitter
//! writes for the Rust struct, runs over the Rust-allocated columns
//! (`Arena::alloc_soa`, `Arena::soa_view`) and over the same elements stored as an
//! array of structs, and both give what the same steps give on the host.

use crate::support::address_of;
use crate::support::{Rng, GRID_STRIDE};
use crate::types::{particle, Pair, Particle};
use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gpu_aligned::backend::cuda::CudaBackend;
use gpu_aligned::header::CudaHeader;
use gpu_aligned::soa::{GpuSoa, Soa, SoaView};
use gpu_aligned::vector::{float2, float4};
use std::mem::size_of;
use std::sync::Arc;

/// Every width of column: 16, 8 (a vector and a struct), 4, 2 and 1 bytes;
/// 48 bytes with no padding, so its bytes can go up as an array of structs.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Body {
    pub position: float4,
    pub velocity: float2,
    pub pair: Pair,
    pub mass: f32,
    pub id: u32,
    pub charge: i16,
    pub kind: u8,
    pub flags: u8,
    pub spare: u32,
}

const KERNELS: &str = r#"
template <class View> __device__ void step(View v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.len) return;
    v.mass[i] = v.mass[i] * 2.0f;
    Body b = v.load(i);
    b.position.w += b.mass;
    b.velocity.x -= 1.0f;
    b.id += b.kind;
    b.pair.lo ^= 0xffu;
    b.charge = (short)(b.charge - 3);
    v.store(i, b);
    v.kind[i] = (unsigned char)(v.kind[i] + 1);
}
extern "C" __global__ void step_soa(Body_soa v) { step(v); }
extern "C" __global__ void step_aos(Body_aos v) { step(v); }
extern "C" __global__ void step_aos16(Body_aos16 v) { step(v); }
"#;

fn body(i: usize) -> Body {
    let f = i as f32;
    Body {
        position: float4::new(f, 2.0 * f, 3.0 * f, 0.5),
        velocity: float2::new(-f, 0.25 * f),
        pair: Pair {
            lo: 1000 + i as u32,
            hi: 7,
        },
        mass: 1.0 + f,
        id: 10 * i as u32,
        charge: (i as i16).wrapping_neg(),
        kind: (i % 5) as u8,
        flags: 0xa5,
        spare: 0,
    }
}

/// What `step` does, on the host.
fn stepped(mut b: Body) -> Body {
    b.mass *= 2.0;
    b.position.w += b.mass;
    b.velocity.x -= 1.0;
    b.id += u32::from(b.kind);
    b.pair.lo ^= 0xff;
    b.charge = b.charge.wrapping_sub(3);
    b.kind += 1;
    b
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn one_kernel_source_gives_the_same_results_over_columns_and_structs() {
    let stream = CudaContext::new(0).expect("a CUDA GPU").default_stream();
    let mut header = CudaHeader::new();
    header.add_soa::<Body>().expect("every field is a column");
    let source = format!("{}\n{KERNELS}", header.render());
    let options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&source, options).unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    let module = stream.context().load_module(ptx).expect("module loads");
    let mut arena = Arena::device(&stream, 64 << 20).unwrap();

    let n = 100_003usize;
    let items: Vec<Body> = (0..n).map(body).collect();
    let expected: Vec<Body> = items.iter().copied().map(stepped).collect();
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };

    // Columns: allocated, written and viewed through the arena.
    let mut soa = arena.alloc_soa::<Body>(n).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    let step_soa = module.load_function("step_soa").unwrap();
    {
        let view = arena.soa_view(&mut soa, &stream).unwrap();
        let mut launch = stream.launch_builder(&step_soa);
        launch.arg(&view);
        // SAFETY: the kernel's one parameter is `Body_soa`, whose layout the
        // header asserts to be `SoaView<9>`'s; every column holds `n`
        // elements and the kernel touches element i < len only.
        unsafe { launch.launch(cfg) }.unwrap();
    }
    let from_columns = arena.read_soa(&soa).unwrap();
    assert_eq!(arena.to_vec(&soa.columns().kind).unwrap()[7], 3);
    arena.free(soa).unwrap();

    // The same elements as an array of structs, through the same kernel
    // source (whole 48-byte elements, 16-aligned: `Body_aos` and
    // `Body_aos16` share the layout).
    for kernel in ["step_aos", "step_aos16"] {
        let mut words = arena.alloc::<u32>(n * 12).unwrap();
        arena
            .write(&mut words, .., bytemuck::cast_slice(&items))
            .unwrap();
        let base = address_of(&arena, &words).unwrap();
        assert_eq!(base % 16, 0);
        let mut columns = [0u64; 9];
        for (column, field) in columns.iter_mut().zip(Body::COLUMNS) {
            *column = base + field.offset as u64;
        }
        let view = SoaView {
            columns,
            len: n as u64,
        };
        let function = module.load_function(kernel).unwrap();
        let mut launch = stream.launch_builder(&function);
        launch.arg(&view);
        // SAFETY: `Body_aos` and `Body_aos16` are one pointer per field
        // (element 0's field) and the length, as built above over `n`
        // whole elements of 48 bytes; the launch is on the arena's stream.
        unsafe { launch.launch(cfg) }.unwrap();
        let bytes: Vec<u32> = arena.to_vec(&words).unwrap();
        let from_structs: Vec<Body> = bytemuck::cast_slice::<u32, u8>(&bytes)
            .chunks_exact(size_of::<Body>())
            .map(bytemuck::pod_read_unaligned)
            .collect();
        assert!(from_structs == expected, "{kernel}: differs from the host");
        arena.free(words).unwrap();
    }
    assert!(from_columns == expected, "columns differ from the host");
    println!("{n} elements: columns, array of structs and padded slots agree with the host");
}

/// Each thread spins on `clock64` first, so the kernel is still running
/// when the host issues the read on the other stream.
const SLOW: &str = r#"
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
extern "C" __global__ void slow_mark(Body_soa v, long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < v.len;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        v.mass[i] = 7.0f + (float)i;
        v.id[i] = 3u * (unsigned)i;
    }
}
"#;

/// About 50 ms at the H100's clock: far longer than issuing a copy.
const SLOW_CYCLES: i64 = 100_000_000;

/// Two streams of one context and `SLOW`'s `slow_mark`, compiled against
/// `Body`'s header.
fn two_streams_and_slow_mark() -> (Arc<CudaStream>, Arc<CudaStream>, CudaFunction) {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let (s1, s2) = (context.new_stream().unwrap(), context.new_stream().unwrap());
    let mut header = CudaHeader::new();
    header.add_soa::<Body>().unwrap();
    let source = format!("{}\n{SLOW}", header.render());
    let options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&source, options).unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    let module = context.load_module(ptx).unwrap();
    (s1, s2, module.load_function("slow_mark").unwrap())
}

/// Runs `slow_mark` over `soa` on `stream` through `soa_view`.
fn launch_slow_mark(
    arena: &Arena<CudaBackend>,
    soa: &mut Soa<Body, CudaBackend>,
    stream: &Arc<CudaStream>,
    slow: &CudaFunction,
) {
    let view = arena.soa_view(soa, stream).unwrap();
    let mut launch = stream.launch_builder(slow);
    launch.arg(&view).arg(&SLOW_CYCLES);
    // SAFETY: `slow_mark` takes a `Body_soa` (the view's layout) and a
    // `long long`; it writes elements below `len` only.
    unsafe { launch.launch(GRID_STRIDE) }.unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_read_on_one_stream_waits_for_a_kernel_writing_the_columns_on_another() {
    let (s1, s2, slow) = two_streams_and_slow_mark();
    let mut arena = Arena::device(&s1, 16 << 20).unwrap();
    let n = 1 << 16;
    let mut soa = arena.alloc_soa::<Body>(n).unwrap();
    arena.write_soa(&mut soa, &vec![body(0); n]).unwrap();
    launch_slow_mark(&arena, &mut soa, &s2, &slow);
    // On s1, right away: the columns' write events make it wait.
    let read = arena.read_soa(&soa).unwrap();
    for (i, b) in read.iter().enumerate() {
        assert_eq!(
            (b.mass, b.id),
            (7.0 + i as f32, 3 * i as u32),
            "element {i}"
        );
    }
    println!("tracked (soa_view): a read on s1 saw every column the kernel on s2 wrote");

    // The control: the same launch with a bare copy of the view's value
    // records nothing, so the read on s1 does not wait (reported, not
    // asserted: it is a race).
    arena.write_soa(&mut soa, &vec![body(0); n]).unwrap();
    arena.backend().synchronize().unwrap();
    let bare: SoaView<9> = *arena.soa_view(&mut soa, &s1).unwrap();
    let mut launch = s2.launch_builder(&slow);
    launch.arg(&bare).arg(&SLOW_CYCLES);
    // SAFETY: as `launch_slow_mark`; the columns outlive the kernel
    // (synchronized below before they are freed).
    unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    let early = arena.read_soa(&soa).unwrap();
    let seen = early.iter().filter(|b| b.id != 0 || b.mass != 1.0).count();
    s2.synchronize().unwrap();
    println!("untracked (a bare view): the read on s1 saw {seen} of {n} elements written");
    arena.free(soa).unwrap();
    arena.backend().synchronize().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_stream_of_another_context_is_refused_by_soa_view_and_checked_arrays() {
    use gpu_aligned::arena::ArenaError;
    use gpu_aligned::backend::cuda::CudaError;

    let context = CudaContext::new(0).expect("a CUDA GPU");
    let stream = context.new_stream().unwrap();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut soa = arena.alloc_soa::<Body>(64).unwrap();
    arena.write_soa(&mut soa, &vec![body(3); 64]).unwrap();
    let mut image = arena.alloc_pitched::<u32>(5, 2).unwrap();
    // A second context on the same device: its streams order nothing of
    // this arena's, and cudarc cannot record this arena's events on them.
    let other = CudaContext::new_non_primary(0, 0).expect("a second context");
    let foreign = other.new_stream().unwrap();
    let refused = Err(ArenaError::Backend(CudaError::ForeignStream));
    let launched = arena.soa_view(&mut soa, &foreign).map(drop);
    assert_eq!(launched, refused);
    // Columns of another arena are refused before anything is ordered.
    let elsewhere = Arena::device(&stream, 1 << 16).unwrap();
    let launched = elsewhere.soa_view(&mut soa, &stream).map(drop);
    assert!(
        matches!(launched, Err(ArenaError::Handle(_))),
        "{launched:?}"
    );
    // A view for a foreign stream is refused: the arena cannot order its
    // arrays' uses there.
    let column = &mut soa.columns_mut().id;
    let read = arena
        .view(column, .., &foreign)
        .map(|view| drop(view.checked()));
    assert_eq!(read, refused);
    let written = arena
        .view_mut(column, 1.., &foreign)
        .map(|view| drop(view.checked()));
    assert_eq!(written, refused);
    let rows = arena
        .view_mut(&mut image, .., &foreign)
        .map(|view| drop(view.checked()));
    assert_eq!(rows, refused);
    // The second context goes before the arrays are freed: while it exists,
    // compute-sanitizer (2025.3.1) refuses to unregister any NVTX region,
    // so freeing them would be a warning under memcheck.
    drop(foreign);
    drop(other);
    // Nothing was written.
    assert_eq!(arena.read_soa(&soa).unwrap(), vec![body(3); 64]);
    arena.free(soa).unwrap();
    arena.free(image).unwrap();
    arena.backend().synchronize().unwrap();
}

/// A kernel that reads the arena's columns through the header's
/// `Particle_soa::carve` (not the Rust view): for a struct rustc reordered,
/// each field it loads must be the one Rust wrote, and each field it stores
/// must land in the column Rust reads it from.
const CARVED: &str = r#"
extern "C" __global__ void carved(char* base, unsigned long long n) {
    Particle_soa v = Particle_soa::carve(base, n);
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.len) return;
    Particle p = v.load(i);
    p.kind = (unsigned char)(p.kind + 1);
    p.charge = (short)(p.charge - 2);
    p.mass = p.mass * 2.0f;
    p.id = p.id + 3;
    p.velocity.y = p.velocity.x;
    p.pair.hi = p.pair.lo;
    p.position.w = p.position.x;
    p.big = p.big + 5;
    v.store(i, p);
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_carving_the_columns_with_the_header_sees_each_field_of_a_reordered_struct() {
    let stream = CudaContext::new(0).expect("a CUDA GPU").default_stream();
    let mut header = CudaHeader::new();
    header.add_soa::<Particle>().unwrap();
    let source = format!("{}\n{CARVED}", header.render());
    // `big` is a `u128`: `unsigned __int128`, which NVRTC compiles for the
    // device only when asked.
    let options = CompileOptions {
        arch: Some("compute_90"),
        options: vec!["--device-int128".into()],
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&source, options).unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    let module = stream.context().load_module(ptx).unwrap();
    let carved = module.load_function("carved").unwrap();
    let mut arena = Arena::device(&stream, 16 << 20).unwrap();
    // `P_soa::carve` finds the columns from the first one's address and the
    // layout: red zones between the columns would move them (under
    // compute-sanitizer, kernels take each column's address from
    // `soa_view` instead).
    arena.set_red_zones(false);
    let n = 10_007usize;
    let mut rng = Rng(0xd1ce);
    let items: Vec<Particle> = (0..n).map(|_| particle(&mut rng)).collect();
    let mut soa = arena.alloc_soa::<Particle>(n).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    let base = address_of(&arena, &soa.columns().kind).unwrap();
    {
        // The view orders the launch; the kernel takes only its first
        // address, the first column in declaration order, which is the
        // first in the buffer.
        let view = arena.soa_view(&mut soa, &stream).unwrap();
        assert_eq!(view.columns[0], base);
        let count = n as u64;
        let mut launch = stream.launch_builder(&carved);
        launch.arg(&view.columns[0]).arg(&count);
        let cfg = LaunchConfig::for_num_elems(n as u32);
        // SAFETY: `carved` takes a device pointer and a count; the arena's
        // columns of `n` elements start at `base`, laid out as `carve`
        // expects (each column after the one before, in declaration
        // order, on 256-byte boundaries).
        unsafe { launch.launch(cfg) }.unwrap();
    }
    let after = arena.read_soa(&soa).unwrap();
    for (i, (before, after)) in items.iter().zip(&after).enumerate() {
        let mut expected = *before;
        expected.kind = expected.kind.wrapping_add(1);
        expected.charge = expected.charge.wrapping_sub(2);
        expected.mass *= 2.0;
        expected.id = expected.id.wrapping_add(3);
        expected.velocity.y = expected.velocity.x;
        expected.pair.hi = expected.pair.lo;
        expected.position.w = expected.position.x;
        expected.big = expected.big.wrapping_add(5);
        assert_eq!(*after, expected, "element {i}");
    }
    arena.free(soa).unwrap();
    println!(
        "{n} reordered Particles: the kernel's Particle_soa::carve saw every field Rust wrote"
    );
}

/// Dropped while a kernel on S2 still writes its columns, in an arena that
/// holds one structure: the next one gets the same bytes only after the
/// kernel, so what S1 writes there is what it reads back.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_dropped_structure_is_reused_only_after_a_kernel_writing_it_on_another_stream() {
    let (s1, s2, slow) = two_streams_and_slow_mark();
    let n = 1 << 16;
    let mut arena = Arena::device(&s1, n * size_of::<Body>()).unwrap();
    // Pins an exact capacity (one structure): no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let mut soa = arena.alloc_soa::<Body>(n).unwrap();
    let first = arena.offset(&soa.columns().position).unwrap();
    launch_slow_mark(&arena, &mut soa, &s2, &slow);
    drop(soa);
    let mut again = arena.alloc_soa::<Body>(n).unwrap();
    assert_eq!(arena.offset(&again.columns().position).unwrap(), first);
    assert_eq!(arena.pending_frees(), 0, "the arena waited for the kernel");
    arena.write_soa(&mut again, &vec![body(0); n]).unwrap();
    assert_eq!(arena.read_soa(&again).unwrap(), vec![body(0); n]);
    println!("a dropped structure of arrays was reused only after the kernel on s2");
}
