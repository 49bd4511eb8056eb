//! Two processes, one arena: the parent makes a device arena shared with processes, fills a typed
//! array and sends it over a Unix socket; the child (this program again, with `child` as its
//! argument) imports it on device 1 where there are two GPUs (else device 0), reads it, adds 1 to
//! every element with a kernel, and the parent reads the child's writes.
//!
//! ```text
//! cargo run -p gpu-aligned --features cuda --example share_ipc
//! ```

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Command;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
use gpu_aligned::share::{send, Imported, Share};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const N: usize = 1 << 20;

fn main() -> Res<()> {
    match std::env::args().nth(1).as_deref() {
        Some("child") => child(&std::env::args().nth(2).ok_or("no socket path")?),
        _ => parent(),
    }
}

fn parent() -> Res<()> {
    let stream = CudaContext::new(0)?.new_stream()?;
    let mut arena = ArenaOptions::new()
        .growth(GrowthPolicy::up_to(1 << 30))
        .share(Share::Processes)
        .device(&stream, 2 << 20)?;
    let counts = arena.alloc_from(&(0..N as u32).collect::<Vec<u32>>())?;

    let path = std::env::temp_dir().join(format!("share_ipc-{}", std::process::id()));
    let listener = UnixListener::bind(&path)?;
    let mut child = Command::new(std::env::current_exe()?)
        .arg("child")
        .arg(&path)
        .spawn()?;
    let (mut socket, _) = listener.accept()?;
    std::fs::remove_file(&path)?;

    send(&socket, &arena, &[("counts", &counts)])?;
    let mut done = [0u8];
    socket.read_exact(&mut done)?; // the child's kernel has finished
    let back = arena.to_vec(&counts)?;
    assert!(back.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
    assert!(child.wait()?.success());
    println!(
        "parent: the child's writes arrived: counts[{}] = {}",
        N - 1,
        back[N - 1]
    );
    Ok(())
}

fn child(path: &str) -> Res<()> {
    let mut socket = UnixStream::connect(path)?;
    let device = if CudaContext::device_count()? >= 2 {
        1
    } else {
        0
    };
    let stream = CudaContext::new(device)?.new_stream()?;
    let add = stream
        .context()
        .load_module(compile_ptx(
            r#"extern "C" __global__ void add_one(unsigned* p, unsigned n) {
                unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) p[i] += 1;
            }"#,
        )?)?
        .load_function("add_one")?;

    let mut imported = Imported::receive(socket.try_clone()?, &stream, true)?;
    let mut counts = imported.array::<u32>("counts")?; // refused if not sent as u32
    let first = stream.clone_dtoh(&imported.view(&counts, ..4, &stream)?)?;
    println!("child on device {device}: counts[..4] = {first:?}");
    {
        let mut view = imported.view_mut(&mut counts, .., &stream)?;
        let n = N as u32;
        let mut launch = stream.launch_builder(&add);
        launch.arg(&mut view).arg(&n);
        // SAFETY: `add_one` touches elements [0, n) of the n-element array.
        unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
    }
    stream.synchronize()?;
    socket.write_all(&[1])?;
    Ok(())
}
