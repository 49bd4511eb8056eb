//! `cargo run --example demo`: an accepted GPU element, padded ones with
//! their layout reports and bytes, and the rules (with the compiler's own
//! words for a rejected type).

use gpu_aligned::report::LayoutReport;
use gpu_aligned::rules::Violation;
use gpu_aligned::vector::float3;
use gpu_aligned::GpuAligned;

/// Accepted as written: 16 bytes, aligned to 16, no holes.
#[derive(Clone, Copy, GpuAligned)]
#[repr(C, align(16))]
struct Particle {
    position: float3,
    mass: f32,
}

/// `{float x, y, z}` is 12 bytes: three loads per element. Padded, it is
/// CUDA's `float3_16_t`.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug)]
struct Float3 {
    x: f32,
    y: f32,
    z: f32,
}

/// A byte before a word leaves a 3-byte hole; padded, the hole is a field.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug)]
struct Tagged {
    tag: u8,
    value: u32,
}

fn hex(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    hex.join(" ")
}

fn main() {
    println!("== Accepted as written: #[derive(Clone, Copy, GpuAligned)] #[repr(C, align(16))]\n");
    print!("{}", LayoutReport::of::<Particle>());
    let particles = [Particle {
        position: float3::new(1.0, 2.0, 3.0),
        mass: 0.5,
    }; 2];
    let upload: &[u8] = bytemuck::cast_slice(&particles);
    println!("\n  2 particles as bytes, ready to upload: {}", hex(upload));

    println!("\n== Padded by #[gpu_aligned::padded]: the compiler sizes every pad\n");
    print!("{}", LayoutReport::of::<Float3>());
    let v = Float3::new(1.0, 2.0, 3.0);
    println!(
        "\n  Float3::new(1.0, 2.0, 3.0): {}\n",
        hex(bytemuck::bytes_of(&v))
    );
    print!("{}", LayoutReport::of::<Tagged>());
    let t = Tagged::new(0xab, 0x0102_0304);
    println!(
        "\n  Tagged::new(0xab, 0x01020304): {}",
        hex(bytemuck::bytes_of(&t))
    );

    println!("\n== The rule (gpu_aligned::rules), and what breaks it\n");
    println!("  Particle: {:?}", Particle::LAYOUT.check());
    for violation in [
        Violation::NotWordSized { size: 12, align: 4 },
        Violation::Misaligned { size: 16, align: 4 },
        Violation::InteriorHole {
            field: "value",
            offset: 4,
            bytes: 3,
        },
    ] {
        println!("  {violation}: {}", violation.rule());
    }
    println!("  and, from the struct's syntax: #[repr(C)] (optionally with align(N)) or");
    println!("  #[repr(transparent)], never packed; fields of plain GPU data, not bool, char,");
    println!("  usize, references, pointers or Vec");

    println!("\n== What the compiler says about `#[repr(C)] struct Float3 {{ x: f32, y: f32, z: f32 }}`\n");
    print!("{FLOAT3_ERROR}");
}

/// What rustc prints for `#[derive(Clone, Copy, GpuAligned)] #[repr(C)] struct Float3 { x: f32,
/// y: f32, z: f32 }` (the ui test `float3-is-12-bytes` holds the same text).
const FLOAT3_ERROR: &str = r"error[E0080]: evaluation panicked: `Float3` is 12 bytes (align 4): a GPU element must be 1, 2, 4, 8 or 16 bytes
                = rule: CUDA loads or stores an element in one instruction only when it is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes
                = fix: put `#[gpu_aligned::padded]` on the struct to round it up to 16 bytes with explicit zeroed padding, or write `#[repr(C, align(16))]` and add a 4-byte pad field marked `#[gpu_aligned(padding)]`
 --> ui/float3-is-12-bytes.rs:5:8
  |
5 | struct Float3 {
  |        ^^^^^^ evaluation of `_` failed here
";
