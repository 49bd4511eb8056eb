//! Planted bugs that compute-sanitizer must report at the right array.
//!
//! Each case allocates arrays in a device arena and launches one kernel
//! that touches memory no array holds: one element past the end (1-, 2-,
//! 4-, 8- and 16-byte elements), one before the start, into the next array,
//! one row past a pitched array, one past a structure-of-arrays column, a
//! read after free, and one past an array in a chunk a growing arena mapped
//! later. After memcheck stops a kernel the context is dead, so each case
//! runs in its own process: [`planted_bugs_are_reported`] runs this binary
//! again under `compute-sanitizer --tool memcheck`, once a case, and checks
//! that the report's allocation is the planted array's (its start and size)
//! and that the arena's region log names it.
//!
//! ```text
//! cargo test -p gpu-aligned-tests --features cuda --test sanitizer -- --include-ignored
//! ```
//!
//! needs an NVIDIA GPU and `compute-sanitizer` on `PATH` (or named by
//! `COMPUTE_SANITIZER`).
#![cfg(feature = "cuda")]

#[path = "../support/mod.rs"]
mod support;

use std::process::Command;
use std::sync::Arc;

use crate::support::address_of;
use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use gpu_aligned::backend::cuda::CudaBackend;
use gpu_aligned::vector::float4;
use support::GrowingArena;

/// Kernels that store (or load) one element at `base + index`, whatever
/// the index: the planted bug is the index.
const KERNELS: &str = r#"
struct __align__(16) sixteen { unsigned int x, y, z, w; };
extern "C" __global__ void store1(unsigned char* p, long long i) { p[i] = 1; }
extern "C" __global__ void store2(unsigned short* p, long long i) { p[i] = 1; }
extern "C" __global__ void store4(unsigned int* p, long long i) { p[i] = 1; }
extern "C" __global__ void store8(unsigned long long* p, long long i) { p[i] = 1; }
extern "C" __global__ void store16(sixteen* p, long long i) { sixteen v = {1, 2, 3, 4}; p[i] = v; }
extern "C" __global__ void load4(const unsigned int* p, long long i, unsigned int* out) { out[0] = p[i]; }
"#;

/// The environment variable that tells a child which case to run.
const CASE_VAR: &str = "GPU_ALIGNED_PLANTED_CASE";

/// What a case planted: the array the report must name.
struct Planted {
    address: u64,
    bytes: u64,
    /// The array's name in the arena's map (`f32[256] "a"`).
    name: String,
}

struct Device {
    stream: Arc<CudaStream>,
    module: Arc<gpu_aligned::backend::cuda::cudarc::driver::CudaModule>,
}

impl Device {
    fn new() -> Device {
        let stream = CudaContext::new(0).unwrap().default_stream();
        let options = CompileOptions {
            arch: Some("compute_90"),
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(KERNELS, options).unwrap();
        let module = stream.context().load_module(ptx).unwrap();
        Device { stream, module }
    }

    fn kernel(&self, name: &str) -> CudaFunction {
        self.module.load_function(name).unwrap()
    }

    /// Launches `kernel(address, index)` on one thread and waits for it.
    fn store(&self, kernel: &str, address: u64, index: i64) {
        let kernel = self.kernel(kernel);
        let mut launch = self.stream.launch_builder(&kernel);
        launch.arg(&address).arg(&index);
        // SAFETY: deliberately not: the kernel stores out of its array's
        // bounds (inside the arena's buffer, so nothing else is hit); the
        // sanitizer stops it.
        let _launched = unsafe { launch.launch(ONE) };
        let _synced = self.stream.synchronize();
    }
}

const ONE: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (1, 1, 1),
    shared_mem_bytes: 0,
};

/// The arena's record of the array at `address`.
fn planted(arena: &Arena<CudaBackend>, address: u64) -> Planted {
    let map = arena.regions();
    let region = map
        .starting_at(address)
        .unwrap_or_else(|| panic!("no region at {address:#x} in\n{map}"));
    Planted {
        address,
        bytes: region.bytes as u64,
        name: region.name().to_string(),
    }
}

fn arena(device: &Device) -> Arena<CudaBackend> {
    let arena = Arena::device(&device.stream, 1 << 20).unwrap();
    assert!(
        arena.red_zones(),
        "red zones are on by themselves under compute-sanitizer"
    );
    arena
}

/// One element past the end of the middle of three arrays of `T`, each
/// `len` long, stored by `kernel`.
fn past_the_end<T: gpu_aligned::GpuAligned>(device: &Device, kernel: &str, len: usize) -> Planted {
    let mut arena = arena(device);
    let before = arena.alloc::<T>(len).unwrap();
    let target = arena.alloc::<T>(len).unwrap();
    let after = arena.alloc::<T>(len).unwrap();
    arena.label(&target, "target").unwrap();
    let address = address_of(&arena, &target).unwrap();
    let planted = planted(&arena, address);
    device.store(kernel, address, len as i64);
    drop((before, after));
    planted
}

/// A kernel reading a `u32[64]` labelled `label` after `give_back` gave it
/// back: the array is no region any more, and the read is reported.
fn read_after(
    device: &Device,
    label: &str,
    give_back: impl FnOnce(&mut Arena<CudaBackend>, ArenaSlice<u32, CudaBackend>),
) -> Planted {
    let mut arena = arena(device);
    let keep = arena.alloc::<u32>(64).unwrap();
    let given = arena.alloc::<u32>(64).unwrap();
    let out = arena.alloc::<u32>(1).unwrap();
    arena.label(&given, label).unwrap();
    let address = address_of(&arena, &given).unwrap();
    let planted = planted(&arena, address);
    give_back(&mut arena, given);
    assert!(arena.regions().starting_at(address).is_none());
    let kernel = device.kernel("load4");
    let out_address = address_of(&arena, &out).unwrap();
    let mut launch = device.stream.launch_builder(&kernel);
    launch.arg(&address).arg(&0i64).arg(&out_address);
    // SAFETY: deliberately not: the kernel reads an array given back.
    let _launched = unsafe { launch.launch(ONE) };
    let _synced = device.stream.synchronize();
    drop((keep, out));
    planted
}

fn run_case(name: &str) -> Planted {
    let device = Device::new();
    match name {
        "past_end_1" => past_the_end::<u8>(&device, "store1", 100),
        "past_end_2" => past_the_end::<u16>(&device, "store2", 100),
        "past_end_4" => past_the_end::<u32>(&device, "store4", 100),
        "past_end_8" => past_the_end::<u64>(&device, "store8", 100),
        "past_end_16" => past_the_end::<float4>(&device, "store16", 100),
        "before_start" => {
            let mut arena = arena(&device);
            let first = arena.alloc::<u32>(64).unwrap();
            let target = arena.alloc::<u32>(64).unwrap();
            arena.label(&target, "target").unwrap();
            let address = address_of(&arena, &target).unwrap();
            let planted = planted(&arena, address);
            device.store("store4", address, -1);
            drop(first);
            planted
        }
        "into_next_array" => {
            // 1,024 bytes: a whole number of 256-byte granules, so without a
            // red zone `next` would start right where `target` ends and the
            // overrun would land in it unseen.
            let mut arena = arena(&device);
            let target = arena.alloc::<u32>(256).unwrap();
            let next = arena.alloc::<u32>(256).unwrap();
            arena.label(&target, "target").unwrap();
            let address = address_of(&arena, &target).unwrap();
            let gap = address_of(&arena, &next).unwrap() - (address + 1024);
            assert_eq!(gap, 256, "only the red zone lies between them");
            let planted = planted(&arena, address);
            device.store("store4", address, 256);
            drop(next);
            planted
        }
        "pitched_row" => {
            let mut arena = arena(&device);
            let image = arena.alloc_pitched::<f32>(100, 8).unwrap();
            let next = arena.alloc::<f32>(64).unwrap();
            arena.label(&image, "image").unwrap();
            let address = address_of(&arena, &image).unwrap();
            let planted = planted(&arena, address);
            // Row 8 of 8, element 0.
            let index = (image.pitch() * 8 / 4) as i64;
            device.store("store4", address, index);
            drop(next);
            planted
        }
        "soa_column" => {
            let mut arena = arena(&device);
            let particles = arena.alloc_soa::<Particle>(100).unwrap();
            let address = address_of(&arena, &particles.columns().mass).unwrap();
            let planted = planted(&arena, address);
            device.store("store4", address, 100);
            drop(particles);
            planted
        }
        "read_after_free" => {
            read_after(&device, "freed", |arena, array| arena.free(array).unwrap())
        }
        // The same with the array dropped: no region from the drop on,
        // before the arena takes it back.
        "read_after_drop" => read_after(&device, "dropped", |_, array| drop(array)),
        "grown_chunk" => {
            let mut arena = ArenaOptions::new()
                .growing_device(&device.stream, GrowthPolicy::up_to(64 << 20))
                .unwrap();
            assert!(
                arena.red_zones(),
                "red zones are on by themselves for a growing arena under compute-sanitizer"
            );
            let initial = arena.capacity();
            // The filler and its red zone (256 bytes for bytes) fill the
            // first chunk exactly.
            let filler = arena.alloc::<u8>(initial - 256).unwrap();
            let target = arena.alloc::<u32>(1 << 20).unwrap();
            arena.label(&target, "target").unwrap();
            let offset = arena.offset(&target).unwrap();
            assert!(
                offset >= initial as u64,
                "the array lies in a chunk mapped after the first ({offset} < {initial})"
            );
            let address = address_of(&arena, &target).unwrap();
            let planted = planted(&arena, address);
            device.store("store4", address, 1 << 20);
            drop(filler);
            planted
        }
        "write_through_read_only_view" => {
            let mut arena = arena(&device);
            let first = arena.alloc::<u32>(64).unwrap();
            let weights = arena.alloc::<u32>(256).unwrap();
            arena.label(&weights, "weights").unwrap();
            let address = address_of(&arena, &weights).unwrap();
            let planted = planted(&arena, address);
            {
                let view = arena
                    .view(&weights, .., &device.stream)
                    .unwrap()
                    .read_only();
                let kernel = device.kernel("store4");
                let mut launch = device.stream.launch_builder(&kernel);
                launch.arg(&view).arg(&7i64);
                // SAFETY: deliberately not: the kernel writes element 7 of
                // an array it was handed read-only (in bounds, so only the
                // permission is wrong).
                let _launched = unsafe { launch.launch(ONE) };
                let _synced = device.stream.synchronize();
            }
            drop(first);
            planted
        }
        "write_after_read_only_view" => {
            // Not a bug: the read-only view has dropped, so writing is fine
            // again; the tool must stay silent.
            let mut arena = arena(&device);
            let mut weights = arena.alloc::<u32>(256).unwrap();
            let address = address_of(&arena, &weights).unwrap();
            let planted = planted(&arena, address);
            {
                let first = arena
                    .view(&weights, .., &device.stream)
                    .unwrap()
                    .read_only();
                let second = arena
                    .view(&weights, .., &device.stream)
                    .unwrap()
                    .read_only();
                drop(first);
                drop(second);
            }
            let mut view = arena.view_mut(&mut weights, .., &device.stream).unwrap();
            let kernel = device.kernel("store4");
            let mut launch = device.stream.launch_builder(&kernel);
            launch.arg(&mut view).arg(&7i64);
            // SAFETY: element 7 of a 256-element array.
            unsafe { launch.launch(ONE) }.unwrap();
            device.stream.synchronize().unwrap();
            planted
        }
        "across_chunks" => {
            // Not a planted bug: an array that straddles two chunks, to see
            // whether the tool takes it.
            let mut arena = ArenaOptions::new()
                .growing_device(&device.stream, GrowthPolicy::up_to(64 << 20))
                .unwrap();
            arena.set_red_zones(true);
            let initial = arena.capacity();
            let filler = arena.alloc::<u8>(initial - 4096).unwrap();
            let target = arena.alloc::<u32>(1 << 20).unwrap();
            let address = address_of(&arena, &target).unwrap();
            let planted = planted(&arena, address);
            device.store("store4", address, 1 << 20);
            drop(filler);
            planted
        }
        other => panic!("no planted case {other:?}"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
#[repr(C)]
struct Particle {
    position: float4,
    mass: f32,
}

/// Cases compute-sanitizer cannot check: the test asserts that memcheck
/// stays silent, so that a sanitizer that lifts the limit shows up here.
/// None now: the growing arena's case (`grown_chunk`) was one while the
/// arena grew on mapped virtual memory under the tool, over which
/// compute-sanitizer 2025.3.1 refuses every NVTX heap.
const UNCHECKED: &[&str] = &[];

/// Cases with no bug, after which the tool must say nothing at all.
const CLEAN: &[&str] = &["write_after_read_only_view"];

const CASES: &[&str] = &[
    "past_end_1",
    "past_end_2",
    "past_end_4",
    "past_end_8",
    "past_end_16",
    "before_start",
    "into_next_array",
    "pitched_row",
    "soa_column",
    "read_after_free",
    "read_after_drop",
    "write_through_read_only_view",
    "write_after_read_only_view",
    "grown_chunk",
];

/// The child: runs the case named by [`CASE_VAR`] and prints what it
/// planted for the parent to find in the report.
#[test]
#[ignore = "a child of planted_bugs_are_reported, run under compute-sanitizer"]
fn planted_case() {
    let case = std::env::var(CASE_VAR).expect("run by planted_bugs_are_reported");
    let planted = run_case(&case);
    println!(
        "PLANTED {case} {:#x} {} {}",
        planted.address, planted.bytes, planted.name
    );
}

/// What memcheck said about the one bad access.
#[derive(Debug)]
struct Report {
    /// `Invalid __global__ write of size 4 bytes`.
    kind: String,
    /// The faulting address.
    address: u64,
    /// The allocation the report blames: start and size.
    allocation: Option<(u64, u64)>,
}

fn hex(word: &str) -> Option<u64> {
    let digits = word.trim_matches(|c: char| !c.is_ascii_hexdigit() && c != 'x');
    u64::from_str_radix(digits.strip_prefix("0x")?, 16).ok()
}

fn parse_report(output: &str) -> Option<Report> {
    let mut lines = output
        .lines()
        .skip_while(|line| !line.contains("Invalid __global__"));
    let kind = lines.next()?.trim_start_matches('=').trim().to_string();
    let mut address = None;
    let mut allocation = None;
    for line in lines.take(12) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(at) = words.iter().position(|w| *w == "Address" || *w == "Access") {
            address = address.or_else(|| {
                words
                    .get(at + 1 + usize::from(words[at] == "Access"))
                    .and_then(|w| hex(w))
            });
        }
        if let Some(at) = words.iter().position(|w| *w == "allocation") {
            // "... the nearest allocation at 0x... of size 1,024 bytes"
            let start = words.get(at + 2).and_then(|w| hex(w));
            let size = words
                .get(at + 5)
                .and_then(|w| w.replace(',', "").parse::<u64>().ok());
            if let (Some(start), Some(size)) = (start, size) {
                allocation = Some((start, size));
            }
        }
    }
    Some(Report {
        kind,
        address: address?,
        allocation,
    })
}

/// Runs every case in its own process under memcheck and checks its report.
#[test]
#[ignore = "needs an NVIDIA GPU and compute-sanitizer"]
fn planted_bugs_are_reported() {
    let sanitizer =
        std::env::var("COMPUTE_SANITIZER").unwrap_or_else(|_| "compute-sanitizer".into());
    let exe = std::env::current_exe().unwrap();
    let mut failures = Vec::new();
    for case in CASES {
        let output = Command::new(&sanitizer)
            .args(["--tool", "memcheck"])
            .arg(&exe)
            .args([
                "--exact",
                "planted_case",
                "--include-ignored",
                "--nocapture",
            ])
            .env(CASE_VAR, case)
            .output()
            .expect("compute-sanitizer runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let planted = text.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("PLANTED ")?;
            let mut words = rest.splitn(4, ' ');
            let _case = words.next()?;
            let address = hex(words.next()?)?;
            let bytes = words.next()?.parse::<u64>().ok()?;
            Some((address, bytes, words.next()?.to_string()))
        });
        let report = parse_report(&text);
        println!("== {case}: planted {planted:?}\n   report {report:?}");
        let verdict = match (&planted, &report) {
            (Some(_), _) if CLEAN.contains(case) => {
                if text.contains("ERROR SUMMARY: 0 errors") {
                    Ok(())
                } else {
                    Err("a case with no bug gave errors or warnings".to_string())
                }
            }
            (Some(_), None) if UNCHECKED.contains(case) => {
                if text.contains("ERROR SUMMARY: 0 errors") {
                    Ok(())
                } else {
                    Err("a case the tool cannot check gave errors or warnings".to_string())
                }
            }
            (_, Some(_)) if UNCHECKED.contains(case) => Err(
                "reported: the limit this case documents is gone; move it to the checked cases"
                    .to_string(),
            ),
            (None, _) => Err("the case did not finish".to_string()),
            (_, None) => Err("memcheck reported nothing".to_string()),
            (Some((address, bytes, name)), Some(report)) => {
                let logged = text.lines().any(|line| {
                    line.contains("gpu-aligned: region")
                        && line.contains(&format!("{address:#x} of size"))
                        && line.ends_with(name.as_str())
                });
                let released = text
                    .lines()
                    .any(|line| line.contains(&format!("gpu-aligned: released {address:#x} ")));
                let kind_expected = match *case {
                    "read_after_free" | "read_after_drop" => "Invalid __global__ read",
                    _ => "Invalid __global__ write",
                };
                match report.allocation {
                    _ if !report.kind.starts_with(kind_expected) => {
                        Err(format!("expected {kind_expected}, got {}", report.kind))
                    }
                    _ if *case == "write_through_read_only_view" && !text.contains("is not writable") => {
                        Err("the report does not say the array is not writable".to_string())
                    }
                    // A freed array is no region: memcheck blames the nearest
                    // live one, and the arena's log says whose bytes these were.
                    _ if matches!(*case, "read_after_free" | "read_after_drop") => {
                        if !(*address..address + bytes).contains(&report.address) {
                            Err(format!("the report's address {:#x} is not the freed array's", report.address))
                        } else if !(logged && released) {
                            Err(format!("the arena's log does not name {name} and its release"))
                        } else {
                            Ok(())
                        }
                    }
                    Some(allocation) if allocation != (*address, *bytes) => Err(format!(
                        "the report blames {allocation:x?}, not the array at {address:#x} of {bytes} bytes"
                    )),
                    None => Err("the report names no allocation".to_string()),
                    Some(_) if !logged => Err(format!("the arena's log does not name {name}")),
                    Some(_) => Ok(()),
                }
            }
        };
        if let Err(why) = verdict {
            failures.push(format!("{case}: {why}\n{text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An element for the checked-index kernels: 8 bytes, one `uint2` word.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuAligned)]
#[repr(C, align(8))]
struct Pair {
    a: f32,
    b: f32,
}

/// The header for `Pair` with checked accessors, and kernels copying
/// `weights[i]` to `out[i]` for `i < n`: through `gpu_array`s, and through
/// plain pointers (the same loads and stores, unchecked).
fn checked_source() -> String {
    use gpu_aligned::header;
    let mut text = String::new();
    header::write_preamble(&mut text).unwrap();
    header::write_array_preamble(&mut text).unwrap();
    header::write_struct(&mut text, &<Pair as gpu_aligned::GpuAligned>::LAYOUT).unwrap();
    header::write_accessors(&mut text, &<Pair as gpu_aligned::GpuAligned>::LAYOUT).unwrap();
    header::write_checked_accessors(&mut text, &<Pair as gpu_aligned::GpuAligned>::LAYOUT).unwrap();
    text.push_str(
        r#"
extern "C" __global__ void copy_arrays(gpu_array<const Pair> weights, gpu_array<Pair> out,
                                       unsigned long long n) {
    for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) {
        GPU_STORE(out, i, GPU_LOAD(weights, i));
    }
}
extern "C" __global__ void copy_pointers(const Pair* weights, Pair* out, unsigned long long n) {
    for (unsigned long long i = threadIdx.x; i < n; i += blockDim.x) {
        gpu_store(out + i, gpu_load(weights + i));
    }
}
"#,
    );
    text
}

/// The child of [`checked_indices_trap_with_the_arrays_name`]: copies 101
/// elements out of a 100-element array, compiled checked or not.
#[test]
#[ignore = "a child of checked_indices_trap_with_the_arrays_name"]
fn checked_case() {
    let checked = std::env::var(CASE_VAR).expect("run by its parent") == "checked";
    let stream = CudaContext::new(0).unwrap().default_stream();
    let mut options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    if checked {
        options.options.push("-DGPU_ALIGNED_CHECKED".into());
    }
    let ptx = compile_ptx_with_opts(checked_source(), options).unwrap();
    let module = stream.context().load_module(ptx).unwrap();
    let kernel = module.load_function("copy_arrays").unwrap();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    arena.set_red_zones(false);
    let mut weights = arena.alloc::<Pair>(100).unwrap();
    let mut out = arena.alloc::<Pair>(101).unwrap();
    arena
        .write(&mut weights, .., &[Pair { a: 1.0, b: 2.0 }; 100])
        .unwrap();
    let (weights_arg, out_arg) = (
        arena.view(&weights, .., &stream).unwrap().checked(),
        arena.view_mut(&mut out, .., &stream).unwrap().checked(),
    );
    let n = 101u64;
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&weights_arg).arg(&out_arg).arg(&n);
    // SAFETY: deliberately not: index 100 of `weights` is one past its end
    // (inside the arena's buffer, so nothing outside it is read).
    let launched = unsafe { launch.launch(ONE) };
    let synced = launched.and_then(|_| stream.synchronize());
    println!("SYNCED {synced:?}");
}

/// Compiled with `-DGPU_ALIGNED_CHECKED`, the copy traps at index 100 and
/// prints the array's name; compiled without, it runs to the end.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn checked_indices_trap_with_the_arrays_name() {
    let exe = std::env::current_exe().unwrap();
    let run = |mode: &str| {
        let output = Command::new(&exe)
            .args([
                "--exact",
                "checked_case",
                "--include-ignored",
                "--nocapture",
            ])
            .env(CASE_VAR, mode)
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    let checked = run("checked");
    println!("{checked}");
    assert!(
        checked.contains("gpu-aligned: index 100 out of range for weights of length 100"),
        "{checked}"
    );
    assert!(!checked.contains("SYNCED Ok"), "{checked}");
    let unchecked = run("unchecked");
    assert!(unchecked.contains("SYNCED Ok"), "{unchecked}");
    assert!(!unchecked.contains("out of range"), "{unchecked}");
}

/// The SASS of one kernel, as opcodes in order (operands dropped: the two
/// kernels read their arguments from different constant-bank offsets).
fn opcodes(sass: &str, kernel: &str) -> Vec<String> {
    let start = sass
        .find(&format!("Function : {kernel}"))
        .unwrap_or_else(|| panic!("{kernel} in\n{sass}"));
    let body = &sass[start..];
    let end = body[1..]
        .find("Function : ")
        .map_or(body.len(), |at| at + 1);
    body[..end]
        .lines()
        .filter_map(|line| {
            // "        /*0070*/                   LDG.E.64 R2, desc[UR4][R2.64] ;"
            let code = line.split("*/").nth(1)?.trim();
            let opcode = code.split_whitespace().next()?;
            (!opcode.is_empty() && !opcode.starts_with("/*")).then(|| opcode.to_string())
        })
        .collect()
}

fn sass_of(source: &str, defines: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("gpu-aligned-sass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join("checked.cu");
    let cubin = dir.join("checked.cubin");
    std::fs::write(&cu, source).unwrap();
    let nvcc = Command::new("nvcc")
        .args(["-cubin", "-O3", "-arch=sm_90", "-o"])
        .arg(&cubin)
        .args(defines)
        .arg(&cu)
        .output()
        .expect("nvcc on PATH");
    assert!(
        nvcc.status.success(),
        "{}",
        String::from_utf8_lossy(&nvcc.stderr)
    );
    let dump = Command::new("cuobjdump")
        .arg("-sass")
        .arg(&cubin)
        .output()
        .expect("cuobjdump on PATH");
    String::from_utf8(dump.stdout).unwrap()
}

/// Without `GPU_ALIGNED_CHECKED` the array accessors are the pointer ones:
/// the same opcodes, one 8-byte load and one 8-byte store per element. With
/// it, the check adds a compare and the trap.
#[test]
#[ignore = "needs nvcc and cuobjdump"]
fn unchecked_accessors_compile_to_the_pointer_accessors_sass() {
    let source = checked_source();
    let plain = sass_of(&source, &[]);
    let arrays = opcodes(&plain, "copy_arrays");
    let pointers = opcodes(&plain, "copy_pointers");
    println!("arrays:   {arrays:?}\npointers: {pointers:?}");
    assert_eq!(arrays, pointers);
    assert!(arrays.iter().any(|op| op == "LDG.E.64"), "{arrays:?}");
    assert!(arrays.iter().any(|op| op == "STG.E.64"), "{arrays:?}");
    let checked = opcodes(&sass_of(&source, &["-DGPU_ALIGNED_CHECKED"]), "copy_arrays");
    println!("checked:  {checked:?}");
    assert_ne!(checked, pointers);
    assert!(checked.iter().any(|op| op == "BPT.TRAP"), "{checked:?}");
}
