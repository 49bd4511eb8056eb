//! Structure-of-arrays and array-of-structs views in the CUDA header: g++
//! compiles them with their `static_assert`s, and one templated "kernel"
//! (run on the host, `__device__` being empty there) gives the same results
//! over the three layouts; fields that cannot be columns are refused.

use crate::cuda_types::{padding_of, ty, Pair, FRAME, GRID, PAIR};
use crate::header::{gpp, stderr};
use crate::{field, layout};
use gpu_aligned::header::{
    write_accessors, write_preamble, write_struct, write_views, CudaHeader, HeaderError,
};
use gpu_aligned::vector::{float2, float4};
use gpu_aligned::{GpuData, GpuField, GpuLayout, GpuType, Scalar};
use std::mem::{align_of, offset_of, size_of};

/// A struct too big to be one element: a vector, a one-word struct, 1, 2, 4
/// and 16-byte fields, and a 4-byte tail nobody owns.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Particle {
    pub pos: float4,
    pub vel: float2,
    pub mass: f32,
    pub id: u32,
    pub pair: Pair,
    pub kind: u8,
    pub charge: i16,
}
gpu_layout!(PARTICLE = Particle {
    pos: float4 => ty::<float4>(), false;
    vel: float2 => ty::<float2>(), false;
    mass: f32 => ty::<f32>(), false;
    id: u32 => ty::<u32>(), false;
    pair: Pair => ty::<Pair>(), false;
    kind: u8 => ty::<u8>(), false;
    charge: i16 => ty::<i16>(), false;
});

/// The device benchmark's struct: 52 bytes of 4-byte fields, so the three
/// layouts differ (packed 52, padded 64, columns of 4).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Body {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub ax: f32,
    pub ay: f32,
    pub az: f32,
    pub mass: f32,
    pub charge: f32,
    pub energy: f32,
    pub id: u32,
}
gpu_layout!(BODY = Body {
    x: f32 => ty::<f32>(), false; y: f32 => ty::<f32>(), false; z: f32 => ty::<f32>(), false;
    vx: f32 => ty::<f32>(), false; vy: f32 => ty::<f32>(), false; vz: f32 => ty::<f32>(), false;
    ax: f32 => ty::<f32>(), false; ay: f32 => ty::<f32>(), false; az: f32 => ty::<f32>(), false;
    mass: f32 => ty::<f32>(), false; charge: f32 => ty::<f32>(), false;
    energy: f32 => ty::<f32>(), false; id: u32 => ty::<u32>(), false;
});

/// `{float x, y, z}`: the 12-byte shape whose three layouts were measured
/// one element per thread, re-measured by the device benchmark.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Float3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}
gpu_layout!(FLOAT3 = Float3 {
    x: f32 => ty::<f32>(), false; y: f32 => ty::<f32>(), false; z: f32 => ty::<f32>(), false;
});

/// Eight floats, 32 bytes: one field of it read alone was measured 3.4x
/// faster from a column, one element per thread.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Eight {
    pub a: f32,
    pub b: f32,
    pub c: f32,
    pub d: f32,
    pub e: f32,
    pub f: f32,
    pub g: f32,
    pub h: f32,
}
gpu_layout!(EIGHT = Eight {
    a: f32 => ty::<f32>(), false; b: f32 => ty::<f32>(), false; c: f32 => ty::<f32>(), false;
    d: f32 => ty::<f32>(), false; e: f32 => ty::<f32>(), false; f: f32 => ty::<f32>(), false;
    g: f32 => ty::<f32>(), false; h: f32 => ty::<f32>(), false;
});

const F32: GpuType = GpuType::Scalar(Scalar::F32);
const U32: GpuType = GpuType::Scalar(Scalar::U32);

/// 12 bytes, align 4: moved as three 4-byte words, or one 16-byte word
/// padded.
static HIT: GpuLayout = layout(
    "Hit",
    12,
    4,
    0,
    &[
        field("x", 0, 4, 4, false, F32),
        field("y", 4, 4, 4, false, F32),
        field("id", 8, 4, 4, false, U32),
    ],
);

fn particle_header() -> String {
    let mut header = CudaHeader::new();
    header
        .add_soa_layout(&PARTICLE, PARTICLE.fields)
        .expect("every field is one word");
    header.render()
}

/// The same code for every layout: fill, then per-field and whole-element
/// updates, then print every field.
const KERNELS: &str = r#"
#include <cstdio>
template <class View> void fill(View v) {
    for (unsigned long long i = 0; i < v.len; ++i) {
        Particle p = {};
        float f = (float)i;
        p.pos = float4{f, 2 * f, 3 * f, 4 * f};
        p.vel = float2{-f, 0.5f * f};
        p.mass = 1.0f + f;
        p.id = (uint32_t)(7 * i);
        p.pair.id = (uint32_t)(1000 + i);
        p.pair.w = 0.25f * f;
        p.kind = (uint8_t)(i % 3);
        p.charge = (int16_t)(-(int)i);
        v.store(i, p);
    }
}
template <class View> void step(View v) {
    for (unsigned long long i = 0; i < v.len; ++i) {
        v.mass[i] *= 2.0f;
        v.pos[i].w += 1.0f;
        Particle p = v.load(i);
        p.id += p.kind;
        p.vel.x += p.mass;
        p.pair.w = p.pos.x + p.pos.w;
        p.charge = (int16_t)(p.charge - 1);
        v.store(i, p);
        v.kind[i] = (uint8_t)(v.kind[i] + 10);
    }
}
template <class View> void dump(const char* name, View v) {
    std::printf("%s\n", name);
    for (unsigned long long i = 0; i < v.len; ++i) {
        Particle p = v.load(i);
        std::printf("%g %g %g %g|%g %g|%g|%u|%u %g|%u|%d\n", p.pos.x, p.pos.y, p.pos.z, p.pos.w,
                    p.vel.x, p.vel.y, p.mass, p.id, p.pair.id, p.pair.w, p.kind, p.charge);
    }
}
"#;

/// What the kernels above leave in element `i`, computed in Rust.
fn expected(i: usize) -> String {
    let f = i as f32;
    let mass = (1.0 + f) * 2.0;
    let kind = (i % 3) as u32;
    format!(
        "{} {} {} {}|{} {}|{}|{}|{} {}|{}|{}",
        f,
        2.0 * f,
        3.0 * f,
        4.0 * f + 1.0,
        -f + mass,
        0.5 * f,
        mass,
        7 * i as u32 + kind,
        1000 + i,
        f + 4.0 * f + 1.0,
        kind + 10,
        -(i as i32) - 1,
    )
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn one_kernel_source_gives_the_same_results_over_every_layout() {
    let text = particle_header() + KERNELS;
    let body = "    const unsigned long long n = 37;\n\
        \x20   alignas(256) static unsigned char columns[64 * 1024];\n\
        \x20   alignas(16) static unsigned char packed[37 * sizeof(Particle)];\n\
        \x20   alignas(16) static unsigned char slots[37 * 48];\n\
        \x20   if (Particle_soa::bytes(n) > sizeof columns) return 2;\n\
        \x20   Particle_soa soa = Particle_soa::carve(columns, n);\n\
        \x20   Particle_aos aos = Particle_aos::over(packed, n);\n\
        \x20   Particle_aos16 aos16 = Particle_aos16::over(slots, n);\n\
        \x20   fill(soa); fill(aos); fill(aos16);\n\
        \x20   step(soa); step(aos); step(aos16);\n\
        \x20   dump(\"soa\", soa); dump(\"aos\", aos); dump(\"aos16\", aos16);\n\
        \x20   std::printf(\"columns at %ld %ld %ld %ld %ld %ld %ld of %llu bytes\\n\",\n\
        \x20       (long)((char*)soa.pos.ptr - (char*)columns), (long)((char*)soa.vel.ptr - (char*)columns),\n\
        \x20       (long)((char*)soa.mass.ptr - (char*)columns), (long)((char*)soa.id.ptr - (char*)columns),\n\
        \x20       (long)((char*)soa.pair.ptr - (char*)columns), (long)((char*)soa.kind.ptr - (char*)columns),\n\
        \x20       (long)((char*)soa.charge.ptr - (char*)columns), Particle_soa::bytes(n));\n\
        \x20   return 0;";
    let (compiled, ran) = gpp("views", &text, body);
    assert!(
        compiled.status.success(),
        "g++ rejected the views:\n{}\n{text}",
        stderr(&compiled)
    );
    let ran = ran.expect("built");
    assert!(ran.status.success(), "{ran:?}");
    let out = String::from_utf8_lossy(&ran.stdout).into_owned();
    let mut sections = out.split_inclusive('\n').collect::<Vec<_>>();
    let placement = sections.pop().expect("placement line");
    let per_layout: Vec<Vec<&str>> = sections
        .chunks(38)
        .map(|chunk| chunk.iter().map(|l| l.trim_end()).collect())
        .collect();
    assert_eq!(per_layout.len(), 3, "{out}");
    assert_eq!(per_layout[0][0], "soa");
    for layout in &per_layout {
        for (i, line) in layout[1..].iter().enumerate() {
            assert_eq!(*line, expected(i), "{} element {i}", layout[0]);
        }
    }
    // Each of the 37-element columns (16, 8, 4, 4, 8, 1, 2 bytes an
    // element) starts on a multiple of 256.
    let mut at = 0;
    let mut starts = Vec::new();
    for size in [16, 8, 4, 4, 8, 1, 2] {
        starts.push(at.to_string());
        at += (37 * size as usize).div_ceil(256) * 256;
    }
    assert_eq!(
        placement.trim_end(),
        format!("columns at {} of {at} bytes", starts.join(" "))
    );
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn columns_move_one_word_and_structs_move_whole_words() {
    let text = particle_header();
    assert!(text.contains(
        "struct Particle_soa {\n    gpu_aligned_column<float4, 16> pos;\n    gpu_aligned_column<float2, 8> vel;\n    gpu_aligned_column<float, 4> mass;\n    gpu_aligned_column<uint32_t, 4> id;\n    gpu_aligned_column<Pair, 8> pair;\n    gpu_aligned_column<uint8_t, 1> kind;\n    gpu_aligned_column<int16_t, 2> charge;\n    unsigned long long len;\n"
    ), "{text}");
    for column in ["pos", "vel", "mass", "id", "pair", "kind", "charge"] {
        assert!(text.contains(&format!("v.{column} = gpu_aligned_load(&{column}[i]);")));
        assert!(text.contains(&format!("gpu_aligned_store(&{column}[i], v.{column});")));
    }
    // 48 bytes, align 16: three 16-byte words either way.
    assert!(text.contains("struct Particle_aos {\n    gpu_aligned_column<float4, 48> pos;"));
    assert!(text.contains("union { gpu_aligned_word<16>::type words[3]; Particle value; } u;"));
    assert!(text.contains("static_assert(sizeof(Particle_soa) == 64,"));
    assert!(text.contains("static_assert(GPU_ALIGNED_OFFSETOF(Particle_soa, len) == 56,"));

    let mut header = CudaHeader::new();
    header.add_soa_layout(&HIT, HIT.fields).unwrap();
    let hit = header.render();
    assert!(hit.contains("i * 12 bytes, moved\n// as 3 word(s) of 4 bytes."));
    assert!(hit.contains("union { gpu_aligned_word<4>::type words[3]; Hit value; } u;"));
    assert!(hit.contains("i * 16 bytes, moved\n// as 1 word(s) of 16 bytes."));
    assert!(hit.contains("union { gpu_aligned_word<16>::type words[1]; Hit value; } u = {};"));
    let (compiled, _) = gpp("hit-views", &hit, "    return 0;");
    assert!(compiled.status.success(), "{}", stderr(&compiled));
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn a_view_that_drifts_from_rust_fails_to_compile() {
    let text = particle_header();
    let column = "    gpu_aligned_column<float2, 8> vel;\n";
    assert!(text.contains(column));
    let drifted = text.replacen(column, "", 1).replace("v.vel", "v.pos");
    let drifted = drifted.replace("&vel[i]", "&pos[i]").replace(
        "v.vel.ptr = reinterpret_cast<float2*>(at);",
        "v.pos.ptr = reinterpret_cast<float4*>(at);",
    );
    let (compiled, _) = gpp("drifted-view", &drifted, "    return 0;");
    assert!(!compiled.status.success(), "g++ accepted a drifted view");
    let errors = stderr(&compiled);
    assert!(
        errors.contains("Particle_soa is one 8-byte pointer per column"),
        "{errors}"
    );
}

#[test]
fn fields_that_cannot_be_columns_are_refused() {
    // `float3` (12 bytes, align 4) and arrays are legal fields, not columns.
    assert_eq!(
        CudaHeader::new()
            .add_soa_layout(&FRAME, FRAME.fields)
            .unwrap_err(),
        HeaderError::NotAColumn {
            ty: "Frame",
            field: "p"
        }
    );
    let error = CudaHeader::new()
        .add_soa_layout(&GRID, GRID.fields)
        .unwrap_err();
    assert_eq!(
        error,
        HeaderError::NotAColumn {
            ty: "Grid",
            field: "m"
        }
    );
    assert!(error.to_string().contains("`float3_16_t` for a `float3`"));
    static ONLY_PADDING: GpuLayout = layout("Empty", 4, 4, 4, &[field("pad", 0, 4, 4, true, U32)]);
    assert_eq!(
        CudaHeader::new()
            .add_soa_layout(&ONLY_PADDING, ONLY_PADDING.fields)
            .unwrap_err(),
        HeaderError::NoColumns { ty: "Empty" }
    );
    static LEN: GpuLayout = layout("Span", 4, 4, 0, &[field("len", 0, 4, 4, false, U32)]);
    assert_eq!(
        CudaHeader::new()
            .add_soa_layout(&LEN, LEN.fields)
            .unwrap_err(),
        HeaderError::ReservedMember {
            ty: "Span",
            field: "len"
        }
    );
    static TAKEN: GpuLayout = layout("Hit_aos", 4, 4, 0, &[field("v", 0, 4, 4, false, U32)]);
    let mut header = CudaHeader::new();
    header.add_layout(&TAKEN, false).unwrap();
    assert_eq!(
        header.add_soa_layout(&HIT, HIT.fields).unwrap_err(),
        HeaderError::ViewNameTaken {
            ty: "Hit",
            taken_by: "Hit_aos"
        }
    );
    assert_eq!(header.type_names().collect::<Vec<_>>(), ["Hit_aos"]);
    // Other errors leave the header as it was too.
    let mut header = CudaHeader::new();
    assert!(header.add_soa_layout(&FRAME, FRAME.fields).is_err());
    assert_eq!(header.type_names().count(), 0);
}

/// `[[[f32; 1]; 1] ...]`, `$depth` levels deep.
macro_rules! nested {
    (f32) => { f32 };
    ($first:tt $($rest:tt)*) => { [nested!($($rest)*); 1] };
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn array_dimensions_past_32_are_all_declared() {
    type Deep = nested!(a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a f32);
    const DEEP: GpuType = <Deep as GpuData>::TYPE;
    static HOLDER: GpuLayout = layout("Deep", 4, 4, 0, &[field("m", 0, 4, 4, false, DEEP)]);
    let mut header = CudaHeader::new();
    header.add_layout(&HOLDER, false).unwrap();
    let text = header.render();
    let declarator = format!("    float m{};\n", "[1]".repeat(40));
    assert!(text.contains(&declarator), "{text}");
    let (compiled, _) = gpp("deep", &text, "    return sizeof(Deep::m) == 4 ? 0 : 1;");
    assert!(compiled.status.success(), "{}", stderr(&compiled));
}

#[test]
fn the_writers_emit_what_the_header_collects_without_allocating_state() {
    let mut text = String::new();
    write_preamble(&mut text).unwrap();
    write_struct(&mut text, &PAIR).unwrap();
    write_accessors(&mut text, &PAIR).unwrap();
    let mut header = CudaHeader::new();
    header.add::<Pair>().unwrap();
    assert_eq!(text, header.render());
    // A writer that fails is a typed error, not a panic.
    struct Full;
    impl std::fmt::Write for Full {
        fn write_str(&mut self, _: &str) -> std::fmt::Result {
            Err(std::fmt::Error)
        }
    }
    assert_eq!(
        write_views(&mut Full, &HIT).unwrap_err(),
        HeaderError::Write
    );
    assert_eq!(
        write_accessors(&mut Full, &FRAME).unwrap_err(),
        HeaderError::NotOneWord {
            ty: "Frame",
            size: 40,
            align: 8
        }
    );
}

/// The struct's own layout, listed for the report and the advisor tests.
pub const PARTICLE_FIELDS: &[GpuField] = PARTICLE.fields;

#[test]
fn the_particle_layout_is_what_rust_laid_out() {
    assert_eq!(PARTICLE.size, 48);
    assert_eq!(PARTICLE.align, 16);
    assert_eq!(PARTICLE_FIELDS.len(), 7);
    assert_eq!(PARTICLE.implicit_padding(), 48 - 16 - 8 - 4 - 4 - 8 - 1 - 2);
}

/// Where the device benchmark and SASS check find the views.
const DEVICE_HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/device/soa/types.cuh");

fn device_header() -> String {
    let mut header = CudaHeader::new();
    header
        .add_soa_layout(&BODY, BODY.fields)
        .and_then(|h| h.add_soa_layout(&PARTICLE, PARTICLE.fields))
        .and_then(|h| h.add_soa_layout(&FLOAT3, FLOAT3.fields))
        .and_then(|h| h.add_soa_layout(&EIGHT, EIGHT.fields))
        .expect("every one is column-ready");
    header.render()
}

#[test]
fn the_device_benchmark_header_is_what_the_emitter_writes() {
    let text = device_header();
    if std::env::var_os("GPU_ALIGNED_BLESS").is_some() {
        std::fs::write(DEVICE_HEADER, &text).expect("write the device header");
    }
    let current = std::fs::read_to_string(DEVICE_HEADER).unwrap_or_default();
    assert!(
        current == text,
        "{DEVICE_HEADER} is not what the emitter writes now; run this test with GPU_ALIGNED_BLESS=1"
    );
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn the_device_benchmark_header_compiles() {
    let (compiled, _) = gpp("device-header", &device_header(), "    return 0;");
    assert!(compiled.status.success(), "{}", stderr(&compiled));
}
