//! A structure of arrays' layout (Rust's field order, whatever it is) as
//! the advisor, the CUDA header (which g++ compiles) and the kernel's view
//! see it; a renamed crate path; columns that are not the layout's fields.

use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::soa::GpuSoa;
use std::mem::{offset_of, size_of};

use crate::support::Rng;
use crate::types::{particle, Bytes, Particle, Scalar};

/// The names of `Particle`'s fields, in declaration order.
const PARTICLE_FIELDS: [&str; 8] = [
    "kind", "charge", "mass", "id", "velocity", "pair", "position", "big",
];

#[test]
fn the_layout_is_rusts_with_fields_in_offset_order_and_the_columns_in_declaration_order() {
    let layout = &Particle::LAYOUT;
    assert_eq!(layout.size, size_of::<Particle>());
    assert_eq!(layout.align, 16);
    assert!(layout.fields.windows(2).all(|w| w[0].offset < w[1].offset));
    let columns: Vec<&str> = Particle::COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(columns, PARTICLE_FIELDS);
    // rustc did reorder it: the two orders differ.
    let laid_out: Vec<&str> = layout.fields.iter().map(|f| f.name).collect();
    assert_ne!(laid_out, columns);
    for column in Particle::COLUMNS {
        assert_eq!(layout.field(column.name), Some(column));
    }
    for (name, offset) in [
        ("kind", offset_of!(Particle, kind)),
        ("charge", offset_of!(Particle, charge)),
        ("mass", offset_of!(Particle, mass)),
        ("id", offset_of!(Particle, id)),
        ("velocity", offset_of!(Particle, velocity)),
        ("pair", offset_of!(Particle, pair)),
        ("position", offset_of!(Particle, position)),
        ("big", offset_of!(Particle, big)),
    ] {
        assert_eq!(layout.field(name).map(|f| f.offset), Some(offset), "{name}");
    }
    // The advisor works from the same layout.
    let one = advise(
        layout,
        &Access::streaming(Fields::Only(&["mass"]), Fields::Only(&["mass"])),
    )
    .unwrap();
    assert_eq!(one.best, Storage::Soa);
}

#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
#[cfg_attr(miri, ignore = "runs g++")]
fn the_header_reproduces_the_reordered_struct_and_gpp_checks_it() {
    let mut header = CudaHeader::new();
    header.add_soa::<Particle>().unwrap();
    header.add_soa::<Bytes>().unwrap();
    let text = header.render();
    assert!(text.contains("struct Particle_soa {"));
    assert!(text.contains("struct __align__(8) Pair {"), "nested first");
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("soa-header");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("types.cuh"), &text).unwrap();
    // Written beside the header, so the test binary runs on any machine.
    std::fs::write(
        dir.join("cuda_prelude.hpp"),
        include_str!("../interop/cuda_prelude.hpp"),
    )
    .unwrap();
    std::fs::write(
        dir.join("main.cpp"),
        format!(
            "#include \"cuda_prelude.hpp\"\n#include \"types.cuh\"\n\
             int main() {{ return sizeof(Particle_soa) == 9 * 8 && sizeof(Particle) == {} ? 0 : 1; }}\n",
            size_of::<Particle>()
        ),
    )
    .unwrap();
    let exe = dir.join("main");
    let compiled = std::process::Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join("main.cpp"))
        .output()
        .expect("run g++");
    assert!(
        compiled.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = std::process::Command::new(&exe).status().expect("run it");
    assert!(ran.success(), "sizes differ between Rust and C++");
}

/// A struct the header declares under another name (`CudaHeader::name`)
/// has its views under that name too, and the names its views take are the
/// ones checked against the other declarations.
#[test]
fn views_take_the_name_the_header_gives_the_struct() {
    /// A GPU element that is also stored as columns.
    #[derive(Clone, Copy, gpu_aligned::GpuAligned, gpu_aligned::GpuSoa)]
    #[repr(C, align(8))]
    struct Sample {
        value: f32,
        count: u32,
    }
    /// Another struct, to be declared under one of `Sample`'s view names.
    #[derive(Clone, Copy, gpu_aligned::GpuAligned)]
    #[repr(C)]
    struct Other {
        value: u32,
    }
    let mut header = CudaHeader::new();
    header
        .name::<Sample>("Reading")
        .unwrap()
        .add_soa::<Sample>()
        .unwrap();
    let text = header.render();
    for view in ["Reading_soa", "Reading_aos", "Reading_aos16"] {
        assert!(text.contains(&format!("struct {view} {{")), "{text}");
    }
    assert!(!text.contains("Sample"), "{text}");

    let mut header = CudaHeader::new();
    header
        .name::<Other>("Reading_aos")
        .unwrap()
        .add::<Other>()
        .unwrap();
    header.name::<Sample>("Reading").unwrap();
    assert_eq!(
        header.add_soa::<Sample>().unwrap_err(),
        gpu_aligned::header::HeaderError::ViewNameTaken {
            ty: "Reading",
            taken_by: "Reading_aos"
        }
    );
}

mod renamed {
    //! The derive reaches the runtime through a renamed path, and the user's
    //! crate needs no `unsafe` (the impl is the runtime's).
    #![forbid(unsafe_code)]

    use gpu_aligned as ga;

    #[derive(Clone, Copy, Debug, PartialEq, ga::GpuSoa)]
    #[gpu_aligned(crate = "ga")]
    pub struct Renamed {
        pub r#type: u32,
        pub weight: f32,
    }

    #[test]
    fn a_renamed_crate_path_and_raw_field_names_work() {
        use ga::soa::GpuSoa;
        let mut arena = ga::arena::Arena::host(1 << 14).unwrap();
        let items = [Renamed {
            r#type: 3,
            weight: 0.5,
        }; 5];
        let mut soa = arena.alloc_soa::<Renamed>(5).unwrap();
        arena.write_soa(&mut soa, &items).unwrap();
        assert_eq!(arena.get(&soa.columns().r#type).unwrap(), &[3; 5]);
        assert_eq!(arena.read_soa(&soa).unwrap(), items);
        assert_eq!(Renamed::LAYOUT.name, "Renamed");
        assert!(Renamed::LAYOUT.field("type").is_some());
        arena.free(soa).unwrap();
    }
}

#[test]
fn the_view_is_the_headers_and_the_carving_lists_columns_in_declaration_order() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let soa = arena.alloc_soa::<Particle>(9).unwrap();
    assert_eq!(
        size_of::<<Particle as GpuSoa>::View>(),
        8 * (Particle::COLUMNS.len() + 1),
        "as the header's Particle_soa"
    );
    let c = soa.columns();
    let by_name = |name: &str| match name {
        "kind" => arena.offset(&c.kind),
        "charge" => arena.offset(&c.charge),
        "mass" => arena.offset(&c.mass),
        "id" => arena.offset(&c.id),
        "velocity" => arena.offset(&c.velocity),
        "pair" => arena.offset(&c.pair),
        "position" => arena.offset(&c.position),
        "big" => arena.offset(&c.big),
        other => panic!("no column {other}"),
    };
    // Carved in declaration order (the view's): each column after the one
    // before.
    let offsets: Vec<u64> = PARTICLE_FIELDS
        .iter()
        .map(|name| by_name(name).unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    let other = Arena::host(1 << 12).unwrap();
    assert!(matches!(other.read_soa(&soa), Err(ArenaError::Handle(_))));
    arena.free(soa).unwrap();
}

/// What `fields.cpp` prints for one element read through `P_soa::load`:
/// its fields in declaration order, floats as their bits.
fn printed(p: &Particle) -> String {
    let f = |x: f32| x.to_bits().to_string();
    [
        p.kind.to_string(),
        p.charge.to_string(),
        f(p.mass),
        p.id.to_string(),
        f(p.velocity.x),
        f(p.velocity.y),
        p.pair.lo.to_string(),
        p.pair.hi.to_string(),
        f(p.position.x),
        f(p.position.y),
        f(p.position.z),
        f(p.position.w),
        ((p.big >> 64) as u64).to_string(),
        (p.big as u64).to_string(),
    ]
    .join(" ")
}

const FIELDS_CPP: &str = r#"
#include "cuda_prelude.hpp"
#include "types.cuh"
#include <cstdio>
#include <cstdlib>
#include <cstring>
static unsigned bits(float x) { unsigned u; std::memcpy(&u, &x, 4); return u; }
int main(int argc, char** argv) {
    unsigned long long n = std::strtoull(argv[2], nullptr, 10);
    void* buffer = std::aligned_alloc(256, Particle_soa::bytes(n));
    FILE* in = std::fopen(argv[1], "rb");
    if (!buffer || !in || std::fread(buffer, 1, Particle_soa::bytes(n), in) != Particle_soa::bytes(n)) return 2;
    Particle_soa v = Particle_soa::carve(buffer, n);
    for (unsigned long long i = 0; i < v.len; ++i) {
        Particle p = v.load(i);
        std::printf("%u %d %u %llu %u %u %u %u %u %u %u %u %llu %llu\n", (unsigned)p.kind, (int)p.charge,
            bits(p.mass), (unsigned long long)p.id, bits(p.velocity.x), bits(p.velocity.y), p.pair.lo,
            p.pair.hi, bits(p.position.x), bits(p.position.y), bits(p.position.z), bits(p.position.w),
            (unsigned long long)(p.big >> 64), (unsigned long long)p.big);
    }
    return 0;
}
"#;

/// The kernel side reads the arena's columns through the header alone: a
/// C++ program (g++ standing in for nvcc) carves the bytes the arena holds
/// with `Particle_soa::carve`, for a struct rustc reordered, and each field
/// it loads is the one Rust wrote.
#[test]
#[cfg_attr(
    not(has_gxx),
    ignore = "needs g++ (not found when the tests were built)"
)]
#[cfg_attr(miri, ignore = "runs g++")]
fn the_headers_carve_over_the_arenas_columns_sees_each_field_of_a_reordered_struct() {
    let n = 37;
    let mut rng = Rng(0xca4e);
    let items: Vec<Particle> = (0..n).map(|_| particle(&mut rng)).collect();
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Particle>(n).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    let start = arena.offset(&soa.columns().kind).unwrap() as usize;
    let bytes = arena.bytes()[start..].to_vec();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("soa-carve");
    std::fs::create_dir_all(&dir).unwrap();
    let mut header = CudaHeader::new();
    header.add_soa::<Particle>().unwrap();
    std::fs::write(dir.join("types.cuh"), header.render()).unwrap();
    std::fs::write(
        dir.join("cuda_prelude.hpp"),
        include_str!("../interop/cuda_prelude.hpp"),
    )
    .unwrap();
    std::fs::write(dir.join("fields.cpp"), FIELDS_CPP).unwrap();
    std::fs::write(dir.join("columns.bin"), &bytes).unwrap();
    let exe = dir.join("fields");
    let compiled = std::process::Command::new("g++")
        .args(["-std=c++17", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join("fields.cpp"))
        .output()
        .expect("run g++");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = std::process::Command::new(&exe)
        .arg(dir.join("columns.bin"))
        .arg(n.to_string())
        .output()
        .expect("run it");
    assert!(ran.status.success(), "{ran:?}");
    let lines: Vec<String> = String::from_utf8(ran.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let expected: Vec<String> = items.iter().map(printed).collect();
    assert_eq!(lines, expected);
    arena.free(soa).unwrap();
}

#[test]
fn the_header_refuses_columns_that_are_not_the_layouts_data_fields_each_once() {
    use gpu_aligned::header::HeaderError;
    let layout = &Particle::LAYOUT;
    let refused = Err(HeaderError::ColumnsNotFields { ty: "Particle" });
    let columns = Particle::COLUMNS;
    // One missing, one twice, one of another struct.
    static TWICE: std::sync::OnceLock<Vec<gpu_aligned::GpuField>> = std::sync::OnceLock::new();
    let twice = TWICE.get_or_init(|| {
        let mut twice = columns.to_vec();
        twice[1] = twice[0];
        twice
    });
    for wrong in [&columns[1..], twice.as_slice(), Scalar::COLUMNS] {
        assert_eq!(
            CudaHeader::new().add_soa_layout(layout, wrong).map(|_| ()),
            refused
        );
    }
    // The same views twice is one declaration; in another order, a clash.
    let mut header = CudaHeader::new();
    header.add_soa::<Particle>().unwrap();
    header.add_soa::<Particle>().unwrap();
    assert_eq!(
        header.add_soa_layout(layout, layout.fields).map(|_| ()),
        refused
    );
    assert_eq!(header.render().matches("struct Particle_soa {").count(), 1);
}
