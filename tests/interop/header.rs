//! The CUDA header emitter. Its output is compiled by g++ with a prelude
//! standing in for nvcc's built-ins, so every emitted `static_assert` is
//! checked here, and drifted copies are shown to fail. (nvcc itself, the
//! SASS and the device results are checked on a GPU machine by
//! `tests/device/interop/run.sh`.)
//!
//! The tests that run g++ are ignored, so counted as skipped, where the
//! tests package's build script found no g++.

use crate::cuda_types::*;
use crate::{field, layout};
use gpu_aligned::header::{member_name, CudaHeader, HeaderError, LayoutFault};
use gpu_aligned::vector::{float3, float4};
use gpu_aligned::{GpuField, GpuLayout, GpuType};
use std::path::PathBuf;
use std::process::{Command, Output};

const PRELUDE: &str = include_str!("cuda_prelude.hpp");

/// Compiles `header` and `main_body` (the body of `int main()`) with g++ in
/// a directory of its own, then runs the program if it built.
pub(crate) fn gpp(test: &str, header: &str, main_body: &str) -> (Output, Option<Output>) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cuda-header")
        .join(test);
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("cuda_prelude.hpp"), PRELUDE).expect("write prelude");
    std::fs::write(dir.join("types.cuh"), header).expect("write header");
    let program = format!(
        "#include \"cuda_prelude.hpp\"\n#include \"types.cuh\"\n#include <cstdio>\n#include <cstring>\n\n\
         template <class T> static int roundtrip(const char* name) {{\n\
         \x20   alignas(16) unsigned char src[sizeof(T)], dst[sizeof(T)];\n\
         \x20   for (unsigned i = 0; i < sizeof(T); ++i) {{ src[i] = (unsigned char)(i * 37 + 11); dst[i] = 0; }}\n\
         \x20   T value = gpu_load(reinterpret_cast<const T*>(src));\n\
         \x20   gpu_store(reinterpret_cast<T*>(dst), value);\n\
         \x20   if (std::memcmp(src, dst, sizeof(T)) != 0) {{ std::printf(\"%s: bytes differ\\n\", name); return 1; }}\n\
         \x20   return 0;\n\
         }}\n\n\
         int main() {{\n{main_body}\n}}\n"
    );
    std::fs::write(dir.join("main.cpp"), program).expect("write program");
    let exe = dir.join("main");
    let compiled = Command::new("g++")
        .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join("main.cpp"))
        .output()
        .expect("run g++ (found by the build script)");
    let ran = compiled.status.success().then(|| {
        Command::new(&exe)
            .output()
            .expect("run the compiled program")
    });
    (compiled, ran)
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn every_test_type_compiles_and_round_trips_through_gpp() {
    let text = full_header().render();
    let mut body = String::from("    int failures = 0;\n");
    for name in ELEMENTS.iter().map(|l| l.name) {
        body += &format!("    failures += roundtrip<{name}>(\"{name}\");\n");
    }
    body += "    std::printf(\"%d failures\\n\", failures);\n    return failures;";
    let (compiled, ran) = gpp("all-types", &text, &body);
    assert!(
        compiled.status.success(),
        "g++ rejected the header:\n{}\n{text}",
        stderr(&compiled)
    );
    let ran = ran.expect("built");
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "0 failures\n");
    assert!(ran.status.success());
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn gpu_load_reads_the_fields_where_rust_put_them() {
    let text = full_header().render();
    // The bytes of Rust's `Mixed { x: 1.5, pad: [0; 4], y: -2.25 }`.
    let mut bytes = Vec::new();
    bytes.extend(1.5f32.to_le_bytes());
    bytes.extend([0u8; 4]);
    bytes.extend((-2.25f64).to_le_bytes());
    assert_eq!(bytes.len(), std::mem::size_of::<Mixed>());
    let list = bytes
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "    alignas(16) unsigned char raw[16] = {{ {list} }};\n\
         \x20   Mixed m = gpu_load(reinterpret_cast<const Mixed*>(raw));\n\
         \x20   std::printf(\"%g %g\\n\", (double)m.x, m.y);\n\
         \x20   return 0;"
    );
    let (compiled, ran) = gpp("field-values", &text, &body);
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert_eq!(
        String::from_utf8_lossy(&ran.expect("built").stdout),
        "1.5 -2.25\n"
    );
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn a_tampered_offset_fails_to_compile() {
    let text = full_header().render();
    let honest = "GPU_ALIGNED_OFFSETOF(Mixed, y) == 8";
    assert!(text.contains(honest), "{text}");
    let tampered = text.replace(honest, "GPU_ALIGNED_OFFSETOF(Mixed, y) == 12");
    let (compiled, _) = gpp("tampered-offset", &tampered, "    return 0;");
    assert!(!compiled.status.success(), "g++ accepted a wrong offset");
    let errors = stderr(&compiled);
    assert!(errors.contains("static assertion failed"), "{errors}");
    assert!(errors.contains("Mixed::y must be at offset 8"), "{errors}");
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn a_drifted_declaration_fails_to_compile() {
    // Someone widens a field in the .cu copy: every later offset moves.
    let text = full_header().render();
    let honest = "struct __align__(16) Mixed {\n    float x;";
    assert!(text.contains(honest), "{text}");
    let drifted = text.replace(honest, "struct __align__(16) Mixed {\n    double x;");
    let (compiled, _) = gpp("drifted-declaration", &drifted, "    return 0;");
    assert!(!compiled.status.success(), "g++ accepted a drifted struct");
    let errors = stderr(&compiled);
    assert!(errors.contains("sizeof(Mixed) must be 16"), "{errors}");
    assert!(errors.contains("Mixed::y must be at offset 8"), "{errors}");
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn a_dropped_pad_member_fails_to_compile() {
    // Without the pad member the offsets survive (alignment puts `y` back at
    // 8), but the hole is implicit again; the header still refuses it.
    let text = full_header().render();
    let pad = "    uint32_t pad; // padding\n";
    assert!(text.contains(pad), "{text}");
    let (compiled, _) = gpp("dropped-pad", &text.replace(pad, ""), "    return 0;");
    assert!(
        !compiled.status.success(),
        "g++ accepted a struct without its pad member"
    );
}

#[test]
fn structs_appear_once_and_after_what_they_contain() {
    let header = full_header();
    let names: Vec<&str> = header.type_names().collect();
    let position = |name: &str| names.iter().position(|n| *n == name).expect(name);
    assert!(position("Pair") < position("Nested"));
    assert!(position("Pair") < position("Pairs"));
    assert_eq!(names.iter().filter(|n| **n == "Pair").count(), 1);
    let text = header.render();
    assert_eq!(text.matches("struct __align__(8) Pair {").count(), 1);
    assert!(text.find("struct __align__(8) Pair {") < text.find("struct __align__(16) Nested {"));
}

#[test]
fn fields_keep_their_order_types_and_padding() {
    let text = full_header().render();
    assert!(text.contains(
        "struct __align__(16) Mixed {\n    float x;\n    uint32_t pad; // padding\n    double y;\n};"
    ));
    assert!(text.contains(
        "struct __align__(16) FloatThenDouble {\n    float x;\n    uint8_t __pad_before_y[4]; // padding\n    double y;\n};"
    ));
    assert!(text.contains(
        "struct __align__(16) Position {\n    float3 p;\n    uint8_t __pad_tail[4]; // padding\n};"
    ));
    assert!(text.contains("struct __align__(16) Grid {\n    uint16_t m[2][2];\n    int2 k;\n};"));
    assert!(text.contains("struct __align__(16) Pairs {\n    Pair pairs[2];\n};"));
    assert!(text.contains("    Pair pair;\n    float2 v;\n"));
    assert!(text.contains("    unsigned __int128 v;\n"));
    assert!(text
        .contains("struct __align__(8) Frame {\n    float3 p;\n    float m;\n    double3 d;\n};"));
    assert!(text.contains("struct __align__(1) Byte {\n    uint8_t v;\n};"));
    assert!(text.contains("    int8_t hi;\n"));
}

#[test]
fn every_field_offset_is_asserted() {
    let text = full_header().render();
    for element in ELEMENTS.iter().chain([&&FRAME]) {
        let name = element.name;
        assert!(text.contains(&format!(
            "static_assert(sizeof({name}) == {},",
            element.size
        )));
        assert!(text.contains(&format!(
            "static_assert(alignof({name}) == {},",
            element.align
        )));
        for field in element.fields {
            let member = member_name(field.name).expect("legal name");
            let check = format!("GPU_ALIGNED_OFFSETOF({name}, {member}) == {}", field.offset);
            assert!(text.contains(&check), "missing {check}");
        }
    }
}

#[test]
fn tuple_and_keyword_fields_get_legal_member_names() {
    let text = full_header().render();
    assert!(text.contains("struct __align__(8) Tuple {\n    float _0;\n    int32_t _1;\n};"));
    assert!(text.contains("    uint32_t class_;\n    float float_;\n"));
    assert_eq!(member_name("r#type").unwrap(), "type");
    assert_eq!(member_name("r#struct").unwrap(), "struct_");
    assert_eq!(member_name("plain").unwrap(), "plain");
    assert!(matches!(
        member_name("größe"),
        Err(HeaderError::InvalidName { .. })
    ));
}

#[test]
fn accessors_move_one_word_of_the_element_size() {
    let text = full_header().render();
    for (name, word) in [
        ("Byte", "unsigned char"),
        ("Half", "unsigned short"),
        ("Rgba", "unsigned int"),
        ("Pair", "uint2"),
        ("Mixed", "uint4"),
        ("Wide", "uint4"),
    ] {
        let load = format!(
            "__device__ __forceinline__ {name} gpu_load(const {name}* p) {{\n    union {{ {word} word; {name} value; }} u;\n    u.word = *reinterpret_cast<const {word}*>(p);"
        );
        assert!(
            text.contains(&load),
            "{name}: no one-word load through {word}\n{text}"
        );
        let store =
            format!("__device__ __forceinline__ void gpu_store({name}* p, const {name}& value)");
        assert!(text.contains(&store), "{name}: no store");
    }
}

#[test]
fn field_only_types_get_no_accessors() {
    let text = full_header().render();
    assert!(text.contains("struct __align__(8) Frame {"));
    assert!(!text.contains("gpu_load(const Frame*"));
    // `Pair` was declared as a part of `Nested` first, then added itself:
    // it gains accessors without being declared twice.
    assert!(text.contains("gpu_load(const Pair*"));
}

#[test]
fn built_in_types_add_nothing() {
    let mut header = CudaHeader::new();
    header
        .add::<float4>()
        .unwrap()
        .add::<f32>()
        .unwrap()
        .add::<u8>()
        .unwrap();
    header
        .add_data::<float3>()
        .unwrap()
        .add_data::<[float4; 3]>()
        .unwrap();
    assert_eq!(header.type_names().count(), 0);
    assert!(!header.render().contains("struct __align__"));
    assert_eq!(header.render(), CudaHeader::new().render());
}

#[test]
fn the_preamble_works_for_nvcc_nvrtc_and_gpp() {
    let text = CudaHeader::new().render();
    assert!(text.starts_with("// Generated by gpu-aligned"));
    assert!(text.contains("#pragma once"));
    assert!(text.contains("#if defined(__CUDACC_RTC__)"));
    assert!(text.contains("typedef unsigned long long uint64_t;"));
    assert!(text.contains("#include <cstdint>"));
}

#[test]
fn accessors_for_a_type_that_is_not_one_word_are_refused() {
    let mut header = CudaHeader::new();
    let error = header.add_layout(&FRAME, true).unwrap_err();
    assert_eq!(
        error,
        HeaderError::NotOneWord {
            ty: "Frame",
            size: 40,
            align: 8
        }
    );
    assert!(error.to_string().contains("40 bytes, align 8"));
    assert_eq!(
        header.type_names().count(),
        0,
        "a failed add leaves the header as it was"
    );
}

const OTHER_PAIR: GpuLayout = layout(
    "Pair",
    8,
    8,
    0,
    &[field(
        "both",
        0,
        8,
        8,
        false,
        GpuType::Scalar(gpu_aligned::Scalar::U64),
    )],
);

#[test]
fn two_types_with_one_name_are_refused() {
    let mut header = CudaHeader::new();
    header.add_layout(&PAIR, true).unwrap();
    header
        .add_layout(&PAIR, true)
        .expect("the same type twice is fine");
    let error = header.add_layout(&OTHER_PAIR, true).unwrap_err();
    assert_eq!(error, HeaderError::NameClash { name: "Pair" });
    // The clash is found inside a nested type too, and nothing is added.
    let mut nested_first = CudaHeader::new();
    nested_first.add_layout(&OTHER_PAIR, false).unwrap();
    assert!(matches!(
        nested_first.add_layout(&NESTED, true),
        Err(HeaderError::NameClash { .. })
    ));
    assert_eq!(nested_first.type_names().collect::<Vec<_>>(), ["Pair"]);
}

const U32: GpuType = GpuType::Scalar(gpu_aligned::Scalar::U32);

const ONE_U32: &[GpuField] = &[field("v", 0, 4, 4, false, U32)];

/// A 4-byte struct called `name`, leaked to get the `'static` a layout needs.
fn named(name: &str) -> &'static GpuLayout {
    Box::leak(Box::new(layout(
        Box::leak(name.to_string().into_boxed_str()),
        4,
        4,
        0,
        ONE_U32,
    )))
}

#[test]
fn names_cuda_already_uses_are_refused() {
    for name in [
        "float4",
        "int",
        "uint32_t",
        "int8_t",
        "dim3",
        "ulonglong2",
        "gpu_load",
        "class",
    ] {
        let error = CudaHeader::new().add_layout(named(name), true).unwrap_err();
        assert_eq!(error, HeaderError::ReservedName { name }, "{name}");
    }
    for name in [
        "Particle",
        "float3_16_t",
        "int8_3_4_t",
        "uint128_t",
        "float5",
    ] {
        CudaHeader::new()
            .add_layout(named(name), true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn names_that_are_not_identifiers_are_refused() {
    const GENERIC: GpuLayout = layout("Pair<f32>", 4, 4, 0, &[field("v", 0, 4, 4, false, U32)]);
    const BAD_FIELD: GpuLayout = layout("Odd", 4, 4, 0, &[field("a-b", 0, 4, 4, false, U32)]);
    assert_eq!(
        CudaHeader::new().add_layout(&GENERIC, false).unwrap_err(),
        HeaderError::InvalidName { name: "Pair<f32>" }
    );
    assert_eq!(
        CudaHeader::new().add_layout(&BAD_FIELD, false).unwrap_err(),
        HeaderError::InvalidName { name: "a-b" }
    );
}

#[test]
fn fields_that_collide_in_cpp_are_refused() {
    const COLLIDE: GpuLayout = layout(
        "Collide",
        8,
        8,
        0,
        &[
            field("0", 0, 4, 4, false, U32),
            field("_0", 4, 4, 4, false, U32),
        ],
    );
    assert_eq!(
        CudaHeader::new().add_layout(&COLLIDE, true).unwrap_err(),
        HeaderError::DuplicateField {
            ty: "Collide",
            field: "_0"
        }
    );
}

#[test]
fn layouts_cpp_cannot_reproduce_are_refused() {
    let fault = |layout: &'static GpuLayout| match CudaHeader::new().add_layout(layout, false) {
        Err(HeaderError::BadLayout { fault, .. }) => fault,
        other => panic!("expected a layout fault, got {other:?}"),
    };
    const OVERLAP: GpuLayout = layout(
        "Overlap",
        8,
        8,
        0,
        &[
            field("a", 0, 4, 4, false, U32),
            field(
                "b",
                2,
                2,
                2,
                false,
                GpuType::Scalar(gpu_aligned::Scalar::U16),
            ),
        ],
    );
    const MISALIGNED: GpuLayout = layout("Misaligned", 8, 8, 0, &[field("a", 2, 4, 4, false, U32)]);
    const PAST_END: GpuLayout = layout("PastEnd", 4, 4, 0, &[field("a", 4, 4, 4, false, U32)]);
    const WRONG_SIZE: GpuLayout = layout("WrongSize", 8, 8, 0, &[field("a", 0, 8, 4, false, U32)]);
    const ODD_ALIGN: GpuLayout = layout("OddAlign", 12, 3, 0, &[field("a", 0, 4, 4, false, U32)]);
    const UNDER_ALIGNED: GpuLayout = layout(
        "UnderAligned",
        8,
        4,
        0,
        &[field(
            "a",
            0,
            8,
            8,
            false,
            GpuType::Scalar(gpu_aligned::Scalar::F64),
        )],
    );
    const MARKER: GpuLayout = layout(
        "Marker",
        4,
        4,
        0,
        &[field("m", 0, 0, 4, false, GpuType::AlignMarker(4))],
    );
    assert_eq!(
        fault(&OVERLAP),
        LayoutFault::Overlap {
            field: "b",
            offset: 2
        }
    );
    assert_eq!(
        fault(&MISALIGNED),
        LayoutFault::Misaligned {
            field: "a",
            offset: 2
        }
    );
    assert_eq!(
        fault(&PAST_END),
        LayoutFault::Overlap {
            field: "a",
            offset: 4
        }
    );
    assert_eq!(fault(&WRONG_SIZE), LayoutFault::FieldType { field: "a" });
    assert_eq!(
        fault(&ODD_ALIGN),
        LayoutFault::SizeOrAlign { size: 12, align: 3 }
    );
    assert_eq!(fault(&UNDER_ALIGNED), LayoutFault::FieldType { field: "a" });
    assert_eq!(fault(&MARKER), LayoutFault::FieldType { field: "m" });
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn a_hole_in_a_hand_built_layout_becomes_an_explicit_member() {
    const HOLEY: GpuLayout = layout(
        "Holey",
        16,
        8,
        0,
        &[
            field("a", 0, 4, 4, false, U32),
            field("b", 8, 4, 4, false, U32),
        ],
    );
    let mut header = CudaHeader::new();
    header.add_layout(&HOLEY, false).unwrap();
    let text = header.render();
    assert!(text.contains(
        "    uint32_t a;\n    uint8_t gpu_aligned_gap_4[4];\n    uint32_t b;\n    uint8_t gpu_aligned_gap_12[4];\n"
    ));
    let (compiled, _) = gpp("holey", &text, "    return 0;");
    assert!(compiled.status.success(), "{}", stderr(&compiled));
}

static CYCLE_A_FIELDS: [GpuField; 1] = [field("b", 0, 8, 8, false, GpuType::Struct(&CYCLE_B))];
static CYCLE_A: GpuLayout = layout("CycleA", 8, 8, 0, &CYCLE_A_FIELDS);
static CYCLE_B_FIELDS: [GpuField; 1] = [field("a", 0, 8, 8, false, GpuType::Struct(&CYCLE_A))];
static CYCLE_B: GpuLayout = layout("CycleB", 8, 8, 0, &CYCLE_B_FIELDS);

#[test]
fn layouts_that_nest_in_a_cycle_are_refused_not_followed_forever() {
    assert!(matches!(
        CudaHeader::new().add_layout(&CYCLE_A, false),
        Err(HeaderError::TooDeep { .. })
    ));
}

#[test]
fn errors_read_as_sentences() {
    let error = HeaderError::BadLayout {
        ty: "Overlap",
        fault: LayoutFault::Overlap {
            field: "b",
            offset: 2,
        },
    };
    assert_eq!(
        error.to_string(),
        "`Overlap` has a layout no C++ struct can reproduce"
    );
    let boxed: Box<dyn std::error::Error + Send + Sync> = error.into();
    let fault = boxed.source().expect("the fault is the source");
    assert_eq!(
        fault.to_string(),
        "field `b` at offset 2 overlaps the previous field or the end"
    );
    assert!(fault.source().is_none());
}

/// A by-value kernel parameter over 16 bytes (`#[derive(GpuData)]`), and a
/// whole struct of 16-byte words (`padded` above 16 bytes).
mod structs {
    use gpu_aligned::vector::{float3, float4};
    use gpu_aligned::GpuData;

    #[derive(Clone, Copy, GpuData)]
    #[repr(C)]
    pub struct Camera {
        pub origin: float3,
        pub lower_left: float3,
        pub horizontal: float3,
        pub vertical: float3,
        pub basis: [float3; 3],
        pub lens_radius: f32,
        pub time: [f32; 2],
        pub size: [u32; 2],
        pub samples: u32,
        pub depth: u32,
        pub seed: u64,
        pub sky: [f32; 6],
    }

    #[gpu_aligned::padded]
    #[derive(Clone, Copy)]
    pub struct Ball {
        pub center_radius: float4,
        pub material: u32,
        pub roughness: f32,
    }
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
fn structs_over_16_bytes_compile_with_their_asserts_and_read_where_rust_wrote() {
    use gpu_aligned::GpuData;
    use structs::{Ball, Camera};
    let GpuType::Struct(ball) = Ball::TYPE else {
        unreachable!()
    };
    let mut header = CudaHeader::new();
    header
        .add_data::<Camera>()
        .and_then(|h| h.add_soa_layout(ball, ball.fields))
        .expect("declared");
    let text = header.render();
    assert!(text.contains("struct __align__(8) Camera {"), "{text}");
    assert!(
        text.contains("static_assert(sizeof(Camera) == 144,"),
        "{text}"
    );
    assert!(
        text.contains("static_assert(GPU_ALIGNED_OFFSETOF(Camera, seed) == 112,"),
        "{text}"
    );
    assert!(text.contains("struct __align__(16) Ball {"), "{text}");
    assert!(text.contains("static_assert(sizeof(Ball) == 32,"), "{text}");
    assert!(text.contains("struct Ball_aos16 {"), "{text}");
    assert!(!text.contains("gpu_load(const Camera*"), "{text}");

    // Two balls as Rust lays them out, read back through the whole-struct
    // view, as a kernel reads a uniform table.
    let balls = [
        Ball::new(float4::new(1.0, 2.0, 3.0, 0.5), 7, 0.25),
        Ball::new(float4::new(-1.0, 0.0, 4.5, 2.0), 9, 0.75),
    ];
    let bytes = gpu_aligned::bytemuck::cast_slice::<Ball, u8>(&balls);
    let list = bytes
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let camera = Camera {
        origin: float3::new(0.0, 1.0, 2.0),
        lower_left: float3::new(0.0, 0.0, 0.0),
        horizontal: float3::new(0.0, 0.0, 0.0),
        vertical: float3::new(0.0, 0.0, 0.0),
        basis: [float3::new(0.0, 0.0, 0.0); 3],
        lens_radius: 0.0,
        time: [0.0; 2],
        size: [640, 480],
        samples: 8,
        depth: 3,
        seed: 1 << 40,
        sky: [0.0, 0.0, 0.0, 0.0, 0.0, 2.5],
    };
    let camera_bytes = gpu_aligned::bytemuck::bytes_of(&camera);
    let camera_list = camera_bytes
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let body = format!(
        "    alignas(16) unsigned char raw[64] = {{ {list} }};\n\
         \x20   Ball_aos16 v = Ball_aos16::over(raw, 2);\n\
         \x20   Ball b = v.load(1);\n\
         \x20   alignas(8) unsigned char cam[144] = {{ {camera_list} }};\n\
         \x20   Camera c;\n\
         \x20   std::memcpy(&c, cam, sizeof c);\n\
         \x20   std::printf(\"%g %g %u %g %u %g %llu %g %g\\n\", (double)b.center_radius.x, (double)b.center_radius.z, b.material, (double)v.roughness[0], c.size[1], (double)c.origin.z, (unsigned long long)c.seed, (double)c.sky[5], (double)v.center_radius[1].w);\n\
         \x20   return 0;"
    );
    let (compiled, ran) = gpp("structs-over-16-bytes", &text, &body);
    assert!(
        compiled.status.success(),
        "g++ rejected the header:\n{}\n{text}",
        stderr(&compiled)
    );
    assert_eq!(
        String::from_utf8_lossy(&ran.expect("built").stdout),
        "-1 4.5 9 0.25 480 2 1099511627776 2.5 2\n"
    );
}
