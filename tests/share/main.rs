//! Sharing a device arena (`gpu_aligned::share`) on real GPUs: two processes reading and writing
//! one arena's typed arrays (the child on device 1 where there are two GPUs), a mismatched element
//! type and a write to a read-only import refused, growth after an export reaching the importer,
//! 1,000 grow/export/import rounds leaking no descriptor and no device memory, and kernels on
//! device 1 reading and writing an arena of device 0 through its mapping.
//!
//! ```text
//! cargo test -p gpu-aligned-tests --features cuda --test share -- --include-ignored --nocapture --test-threads=1
//! ```
//!
//! The children (`child_*`) are this binary run again by their parents (as `tests/sanitizer`
//! does), with [`ROLE`] and [`SOCKET`] set; alone they do nothing.
#![cfg(feature = "cuda")]

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Child, Command};
use std::sync::Arc;

use gpu_aligned::arena::{Arena, ArenaError, ArenaOptions, GrowthPolicy, ViewMut};
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
use gpu_aligned::backend::cuda::{CudaBackend, CudaError};
use gpu_aligned::share::{send, Imported, Share};
use gpu_aligned::vector::float4;

/// Which child to be.
const ROLE: &str = "GPU_ALIGNED_SHARE_ROLE";
/// The Unix socket the parent listens on.
const SOCKET: &str = "GPU_ALIGNED_SHARE_SOCKET";

const ADD: &str = r#"
extern "C" __global__ void add(unsigned* p, unsigned long long n, unsigned v) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] += v;
}
extern "C" __global__ void copy(const unsigned* from, unsigned* to, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        to[i] = from[i];
}
"#;

const N: usize = 1 << 20;
const GRID: LaunchConfig = LaunchConfig {
    grid_dim: (264, 1, 1),
    block_dim: (256, 1, 1),
    shared_mem_bytes: 0,
};

fn kernels(stream: &Arc<CudaStream>) -> (CudaFunction, CudaFunction) {
    let module = stream
        .context()
        .load_module(compile_ptx(ADD).unwrap())
        .unwrap();
    (
        module.load_function("add").unwrap(),
        module.load_function("copy").unwrap(),
    )
}

fn launch_add(stream: &Arc<CudaStream>, add: &CudaFunction, p: &mut ViewMut<'_, u32>, v: u32) {
    let n = N as u64;
    let mut launch = stream.launch_builder(add);
    launch.arg(p).arg(&n).arg(&v);
    // SAFETY: `add` touches elements [0, N) of an array of N `u32`s.
    unsafe { launch.launch(GRID) }.unwrap();
}

/// The device a child imports on: 1 where there are two GPUs.
fn child_device() -> usize {
    match CudaContext::device_count().unwrap() {
        n if n >= 2 => 1,
        _ => 0,
    }
}

fn shared_arena(stream: &Arc<CudaStream>) -> Arena<CudaBackend> {
    let options = ArenaOptions::new().growth(GrowthPolicy::up_to(4 << 30));
    options
        .share(Share::Processes)
        .device(stream, 2 << 20)
        .unwrap()
}

/// This binary again as the child `role`, connecting to a fresh socket: the child and the
/// parent's end of the connection.
fn spawn(role: &str) -> (Child, UnixStream) {
    let path =
        std::env::temp_dir().join(format!("gpu-aligned-share-{}-{role}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", role, "--include-ignored", "--nocapture"])
        .env(ROLE, role)
        .env(SOCKET, &path)
        .spawn()
        .unwrap();
    let (socket, _) = listener.accept().unwrap();
    let _ = std::fs::remove_file(&path);
    (child, socket)
}

/// The child's end, and its stream; `None` when not run as `role`.
fn connect(role: &str) -> Option<(UnixStream, Arc<CudaStream>)> {
    if std::env::var(ROLE).ok()? != role {
        return None;
    }
    let socket = UnixStream::connect(std::env::var(SOCKET).unwrap()).unwrap();
    let stream = CudaContext::new(child_device())
        .unwrap()
        .new_stream()
        .unwrap();
    Some((socket, stream))
}

fn signal(mut socket: &UnixStream, byte: u8) {
    socket.write_all(&[byte]).unwrap();
}

fn wait_for(mut socket: &UnixStream, byte: u8) {
    let mut got = [0u8];
    socket.read_exact(&mut got).unwrap();
    assert_eq!(got[0], byte, "the child failed");
}

#[test]
#[ignore = "needs an NVIDIA GPU (two for the child on another device)"]
fn a_second_process_reads_and_writes_typed_arrays_and_sees_growth() {
    let stream = CudaContext::new(0).unwrap().new_stream().unwrap();
    let mut arena = shared_arena(&stream);
    let values: Vec<u32> = (0..N as u32).collect();
    let points = arena.alloc_from(&values).unwrap();
    let (mut child, socket) = spawn("child_reads_and_writes");
    send(&socket, &arena, &[("points", &points)]).unwrap();
    wait_for(&socket, 1);
    let doubled: Vec<u32> = values.iter().map(|v| v + 1000).collect();
    assert_eq!(arena.to_vec(&points).unwrap(), doubled, "the child's write");
    // Growth after the export: a new chunk, sent again.
    let capacity = arena.capacity();
    let late = arena
        .alloc_from(&vec![float4::new(1.0, 2.0, 3.0, 4.0); 4 << 20])
        .unwrap();
    assert!(arena.capacity() > capacity);
    send(&socket, &arena, &[("points", &points), ("late", &late)]).unwrap();
    wait_for(&socket, 2);
    assert!(child.wait().unwrap().success());
    println!(
        "PARENT OK: the child on device {} read, wrote and saw growth",
        child_device()
    );
}

#[test]
#[ignore = "a child of a_second_process_reads_and_writes_typed_arrays_and_sees_growth"]
fn child_reads_and_writes() {
    let Some((socket, stream)) = connect("child_reads_and_writes") else {
        return;
    };
    let (add, _) = kernels(&stream);
    let mut imported = Imported::receive(socket.try_clone().unwrap(), &stream, true).unwrap();
    let mut points = imported.array::<u32>("points").unwrap();
    let read = stream
        .clone_dtoh(&imported.view(&points, .., &stream).unwrap())
        .unwrap();
    assert_eq!(read, (0..N as u32).collect::<Vec<u32>>());
    launch_add(
        &stream,
        &add,
        &mut imported.view_mut(&mut points, .., &stream).unwrap(),
        1000,
    );
    stream.synchronize().unwrap();
    let refused = imported.array::<f32>("points").unwrap_err();
    let wrong = ArenaError::Backend(CudaError::Sharing(
        "the array was shared as another element type",
    ));
    assert_eq!(format!("{refused:?}"), format!("{wrong:?}"));
    println!("CHILD: f32 for a u32 array refused: {refused}");
    signal(&socket, 1);
    let late = imported.array::<float4>("late").unwrap();
    let tail = imported.view(&late, (4 << 20) - 1.., &stream).unwrap();
    let tail = stream.clone_dtoh(&tail).unwrap();
    assert_eq!(tail, [float4::new(1.0, 2.0, 3.0, 4.0)]);
    println!("CHILD OK: read, wrote, refused a wrong type, read a later chunk");
    signal(&socket, 2);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_read_only_import_refuses_writes() {
    let stream = CudaContext::new(0).unwrap().new_stream().unwrap();
    let mut arena = shared_arena(&stream);
    let points = arena
        .alloc_from(&(0..N as u32).collect::<Vec<u32>>())
        .unwrap();
    let (mut child, socket) = spawn("child_reads_only");
    send(&socket, &arena, &[("points", &points)]).unwrap();
    wait_for(&socket, 1);
    assert!(child.wait().unwrap().success());
    println!("PARENT OK: the read-only child read and was refused a write");
}

#[test]
#[ignore = "a child of a_read_only_import_refuses_writes"]
fn child_reads_only() {
    let Some((socket, stream)) = connect("child_reads_only") else {
        return;
    };
    let mut imported = Imported::receive(socket.try_clone().unwrap(), &stream, false).unwrap();
    let mut points = imported.array::<u32>("points").unwrap();
    let read = stream
        .clone_dtoh(&imported.view(&points, 5..6, &stream).unwrap())
        .unwrap();
    assert_eq!(read, [5]);
    let refused = imported.view_mut(&mut points, .., &stream).unwrap_err();
    assert!(
        matches!(refused, ArenaError::Backend(CudaError::Sharing(_))),
        "{refused:?}"
    );
    println!("CHILD OK: read-only: {refused}");
    signal(&socket, 1);
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Each round grows the arena by a chunk, exports it to a fresh importer and to one that lives
/// through every round (mapping the new chunk, dropping the one trimmed before), reads an element
/// through both, then drops the array and trims. Descriptors and free device memory must come
/// back to where they were after the first round.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_thousand_rounds_leak_no_descriptor_and_no_device_memory() {
    let context = CudaContext::new(0).unwrap();
    let stream = context.new_stream().unwrap();
    let mut arena = shared_arena(&stream);
    let base = arena.alloc_from(&[7u32; 64]).unwrap();
    let (live_tx, live_rx) = UnixStream::pair().unwrap();
    send(&live_tx, &arena, &[("base", &base)]).unwrap();
    let mut live = Imported::receive(live_rx, &stream, false).unwrap();
    let mut before = (0, 0);
    for round in 0..=1000 {
        let name = format!("round {round}");
        let big = arena.alloc_from(&vec![round as u32; 1 << 20]).unwrap(); // 4 MiB: grows
        let (tx, rx) = UnixStream::pair().unwrap();
        send(&tx, &arena, &[("base", &base), (name.as_str(), &big)]).unwrap();
        send(&live_tx, &arena, &[("base", &base), (name.as_str(), &big)]).unwrap();
        let mut fresh = Imported::receive(rx, &stream, true).unwrap();
        for imported in [&mut fresh, &mut live] {
            let array = imported.array::<u32>(&name).unwrap();
            let last = imported.view(&array, (1 << 20) - 1.., &stream).unwrap();
            assert_eq!(stream.clone_dtoh(&last).unwrap(), [round as u32]);
        }
        drop((fresh, tx, big));
        let trimmed = arena.trim().unwrap(); // the round's chunk, unless the arena kept it
        stream.synchronize().unwrap();
        let now = (open_descriptors(), context.mem_get_info().unwrap().0);
        if round == 0 {
            before = now;
        }
        if round % 100 == 0 {
            let capacity = arena.capacity();
            println!(
                "round {round}: {} descriptors, {} bytes free; trimmed {trimmed}, capacity {capacity}",
                now.0, now.1
            );
        }
    }
    // The live importer still maps the last round's chunk until it hears of the trim.
    send(&live_tx, &arena, &[("base", &base), ("end", &base)]).unwrap();
    let _ = live.array::<u32>("end").unwrap();
    let after = (open_descriptors(), context.mem_get_info().unwrap().0);
    println!("after 1,000 rounds: {after:?}, after the first: {before:?}");
    assert_eq!(after.0, before.0, "descriptors leaked");
    assert!(
        after.1 + (2 << 20) >= before.1,
        "device memory leaked: {before:?} -> {after:?}"
    );
}

/// Two devices, or a skip.
fn two_devices() -> Option<(Arc<CudaStream>, Arc<CudaStream>)> {
    if CudaContext::device_count().unwrap() < 2 {
        println!("SKIPPED: needs two GPUs");
        return None;
    }
    let zero = CudaContext::new(0).unwrap().new_stream().unwrap();
    Some((zero, CudaContext::new(1).unwrap().new_stream().unwrap()))
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn a_kernel_on_the_peer_reads_and_writes_the_arena() {
    let Some((zero, one)) = two_devices() else {
        return;
    };
    let (add, copy) = kernels(&one);
    let options = ArenaOptions::new().growth(GrowthPolicy::up_to(4 << 30));
    let peer = Share::Peer {
        device: 1,
        writable: true,
    };
    let mut arena = options.share(peer).device(&zero, 2 << 20).unwrap();
    let first = arena
        .alloc_from(&(0..N as u32).collect::<Vec<u32>>())
        .unwrap();
    // A later chunk, mapped after the grant.
    let mut later = arena.alloc_from(&vec![3u32; 16 << 20]).unwrap();
    launch_add(
        &one,
        &add,
        &mut arena.view_mut(&mut later, ..N, &one).unwrap(),
        4,
    );
    let mut local = one.alloc_zeros::<u32>(N).unwrap();
    {
        let from = arena.view(&first, .., &one).unwrap();
        let n = N as u64;
        let mut launch = one.launch_builder(&copy);
        launch.arg(&from).arg(&mut local).arg(&n);
        // SAFETY: `copy` touches N elements of each.
        unsafe { launch.launch(GRID) }.unwrap();
    }
    assert_eq!(
        one.clone_dtoh(&local).unwrap(),
        (0..N as u32).collect::<Vec<u32>>()
    );
    // Read back on device 0's stream: ordered after the peer's write by an event.
    let back = arena.to_vec(&later).unwrap();
    assert!(back[..N].iter().all(|&v| v == 7) && back[N..].iter().all(|&v| v == 3));
    println!("OK: device 1 read device 0's array and wrote a later chunk");
}

#[test]
#[ignore = "needs two NVIDIA GPUs"]
fn a_read_only_peer_is_refused_a_writable_view_and_others_any() {
    let Some((zero, one)) = two_devices() else {
        return;
    };
    let options = ArenaOptions::new().growth(GrowthPolicy::up_to(1 << 30));
    let peer = Share::Peer {
        device: 1,
        writable: false,
    };
    let mut arena = options.share(peer).device(&zero, 2 << 20).unwrap();
    let mut a = arena.alloc::<u32>(100).unwrap();
    assert!(arena.view(&a, .., &one).is_ok());
    let refused = arena.view_mut(&mut a, .., &one).unwrap_err();
    assert!(matches!(
        refused,
        ArenaError::Backend(CudaError::ForeignStream)
    ));
    let mut plain = Arena::device(&zero, 1 << 20).unwrap();
    let b = plain.alloc::<u32>(100).unwrap();
    assert!(matches!(
        plain.view(&b, .., &one),
        Err(ArenaError::Backend(CudaError::ForeignStream))
    ));
    drop((a, b));
}
