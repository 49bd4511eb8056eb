//! `cargo run --example demo`: an accepted GPU element, padded ones with
//! their layouts and bytes, and the rules (with the compiler's own words for
//! a rejected type).

use gpu_aligned::report::LayoutReport;
use gpu_aligned::vector::{float3, float3_16_t};
use gpu_aligned::{GpuAligned, GpuLayout, GpuType};

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

/// Three bytes become CUDA's `int8_3_4_t`.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug)]
struct Int8x3 {
    x: i8,
    y: i8,
    z: i8,
}

fn type_name(ty: &GpuType) -> String {
    match ty {
        GpuType::Scalar(scalar) => scalar.rust_name().to_string(),
        GpuType::Array { elem, len } => format!("[{}; {len}]", type_name(elem)),
        GpuType::Vector { cuda_name, .. } => (*cuda_name).to_string(),
        GpuType::Struct(layout) => layout.name.to_string(),
        GpuType::AlignMarker(align) => format!("align marker ({align})"),
        other => format!("{other:?}"),
    }
}

fn print_layout(layout: &GpuLayout) {
    println!(
        "  {}: {} bytes, align {}, {} bytes of explicit padding, one GPU word: {}",
        layout.name,
        layout.size,
        layout.align,
        layout.padding,
        if layout.is_one_word() { "yes" } else { "no" }
    );
    for field in layout.fields {
        let line = format!(
            "    {:>2}..{:<2} {:<20} {:<10}{}",
            field.offset,
            field.offset + field.size,
            field.name,
            type_name(&field.ty),
            if field.is_padding {
                " (padding, always zero)"
            } else {
                ""
            }
        );
        println!("{}", line.trim_end());
    }
}

fn print_bytes(label: &str, bytes: &[u8]) {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    println!("    {label}: {}", hex.join(" "));
}

fn main() {
    println!("== An accepted type (#[derive(Clone, Copy, GpuAligned)], #[repr(C, align(16))])");
    print_layout(&Particle::LAYOUT);
    let particles = [Particle {
        position: float3::new(1.0, 2.0, 3.0),
        mass: 0.5,
    }; 2];
    let upload: &[u8] = bytemuck::cast_slice(&particles);
    println!(
        "    bytemuck::cast_slice of 2 particles: {} bytes, ready to upload",
        upload.len()
    );

    println!();
    println!("== Padded types (#[gpu_aligned::padded]): the compiler sizes every pad");
    print_layout(&Float3::LAYOUT);
    print_bytes(
        "Float3::new(1.0, 2.0, 3.0)",
        bytemuck::bytes_of(&Float3::new(1.0, 2.0, 3.0)),
    );
    print_layout(&Tagged::LAYOUT);
    print_bytes(
        "Tagged::new(0xab, 0x01020304)",
        bytemuck::bytes_of(&Tagged::new(0xab, 0x0102_0304)),
    );
    print_layout(&Int8x3::LAYOUT);
    print_bytes(
        "Int8x3::new(1, -1, 2)",
        bytemuck::bytes_of(&Int8x3::new(1, -1, 2)),
    );
    println!("  the same as the built-in float3_16_t:");
    print_layout(&float3_16_t::LAYOUT);

    println!();
    println!("== The layout report of Float3 (gpu_aligned::report::LayoutReport): map and costs");
    print!("{}", LayoutReport::of::<Float3>());

    println!();
    println!("== The rules, checked at compile time by #[derive(GpuAligned)]");
    for rule in [
        "#[repr(C)], #[repr(C, align(N))] with N in 1, 2, 4, 8, 16, or #[repr(transparent)];\n    \
         never packed",
        "a non-generic struct with fields, each plain GPU data: u8..u64, i8..i64, f32, f64,\n    \
         arrays, gpu_aligned::vector types, derived types (not bool, char, usize, &T, *const T,\n    \
         Vec)",
        "size 1, 2, 4, 8 or 16 bytes: one global-memory instruction moves it (more: use a\n    \
         structure of arrays)",
        "alignment equal to size: an array of it keeps every element naturally aligned",
        "no implicit padding: every hole is a field marked #[gpu_aligned(padding)], so every\n    \
         byte is initialised (#[gpu_aligned::padded] writes those fields for you)",
    ] {
        println!("  - {rule}");
    }
    println!();
    println!(
        "== What the compiler says about `#[repr(C)] struct Float3 {{ x: f32, y: f32, z: f32 }}`"
    );
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
