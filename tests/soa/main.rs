//! Structure of arrays on the host arena: `#[derive(GpuSoa)]` structs with
//! vector, 1-byte and 16-byte fields round-trip through their columns; the
//! columns are carved together, aligned and disjoint; a length mismatch and
//! foreign columns are refused; an SoA sits in a `Plan` beside ordinary
//! arrays; the struct's layout (Rust's field order, whatever it is) reaches
//! the CUDA header, which g++ compiles. `holes` attacks it with extreme
//! lengths, traded columns and field names the derive uses itself.

#[path = "../support/mod.rs"]
mod support;

#[cfg(feature = "cuda")]
mod device;
mod holes;

use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::soa::GpuSoa;
use gpu_aligned::vector::{float2, float4};
use gpu_aligned::GpuAligned;
use std::mem::{offset_of, size_of};
use support::Rng;

/// A word-sized element used as a field.
#[derive(Clone, Copy, Debug, PartialEq, GpuAligned)]
#[repr(C, align(8))]
pub struct Pair {
    pub lo: u32,
    pub hi: u32,
}

/// Vector, struct, 16-byte, 8, 4, 2 and 1-byte fields, declared small to
/// large so Rust reorders them (no `repr`).
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Particle {
    pub kind: u8,
    pub charge: i16,
    pub mass: f32,
    pub id: u64,
    pub velocity: float2,
    pub pair: Pair,
    pub position: float4,
    pub big: u128,
}

/// One field.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Scalar {
    pub value: f64,
}

/// Only bytes.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
#[repr(C)]
pub struct Bytes {
    pub a: u8,
    pub b: i8,
    pub c: u8,
}

fn particle(rng: &mut Rng) -> Particle {
    Particle {
        kind: rng.u32() as u8,
        charge: rng.u32() as i16,
        mass: rng.f32(),
        id: rng.next_u64(),
        velocity: float2::new(rng.f32(), rng.f32()),
        pair: Pair {
            lo: rng.u32(),
            hi: rng.u32(),
        },
        position: float4::new(rng.f32(), rng.f32(), rng.f32(), rng.f32()),
        big: u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64()),
    }
}

#[test]
fn structs_round_trip_through_their_columns() {
    let mut rng = Rng(0x05ee_d50a);
    let mut arena = Arena::host(1 << 20).unwrap();
    for len in [1, 2, 31, 257, 1000] {
        let particles: Vec<Particle> = (0..len).map(|_| particle(&mut rng)).collect();
        let mut soa = arena.alloc_soa::<Particle>(len).unwrap();
        arena.write_soa(&mut soa, &particles).unwrap();
        assert_eq!(arena.read_soa(&soa).unwrap(), particles);
        // Each column holds its field, in element order.
        let columns = soa.columns();
        let masses: Vec<f32> = particles.iter().map(|p| p.mass).collect();
        assert_eq!(arena.get(&columns.mass).unwrap(), masses.as_slice());
        let bigs: Vec<u128> = particles.iter().map(|p| p.big).collect();
        assert_eq!(arena.get(&columns.big).unwrap(), bigs.as_slice());
        let kinds: Vec<u8> = particles.iter().map(|p| p.kind).collect();
        assert_eq!(arena.get(&columns.kind).unwrap(), kinds.as_slice());
        arena.free(soa).unwrap();
    }
    let scalars: Vec<Scalar> = (0..100).map(|i| Scalar { value: i as f64 }).collect();
    let mut soa = arena.alloc_soa::<Scalar>(100).unwrap();
    arena.write_soa(&mut soa, &scalars).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), scalars);
    arena.free(soa).unwrap();
    let bytes: Vec<Bytes> = (0..=255u8)
        .map(|i| Bytes {
            a: i,
            b: i as i8,
            c: !i,
        })
        .collect();
    let mut soa = arena.alloc_soa::<Bytes>(bytes.len()).unwrap();
    arena.write_soa(&mut soa, &bytes).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), bytes);
    arena.free(soa).unwrap();
    assert_eq!(arena.stats().allocations, 0, "every column was freed");
}

#[test]
fn a_column_written_alone_shows_in_the_elements() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Particle>(4).unwrap();
    let mut rng = Rng(9);
    let particles: Vec<Particle> = (0..4).map(|_| particle(&mut rng)).collect();
    arena.write_soa(&mut soa, &particles).unwrap();
    arena
        .get_mut(&mut soa.columns_mut().charge)
        .unwrap()
        .copy_from_slice(&[-1, -2, -3, -4]);
    let read = arena.read_soa(&soa).unwrap();
    for (i, (before, after)) in particles.iter().zip(&read).enumerate() {
        assert_eq!(after.charge, -(i as i16) - 1);
        assert_eq!(
            Particle {
                charge: before.charge,
                ..*after
            },
            *before
        );
    }
    arena.free(soa).unwrap();
}

#[test]
fn columns_are_aligned_disjoint_and_carved_together() {
    for min_align in [256, 512, 16] {
        let mut arena = ArenaOptions::new()
            .min_align(min_align)
            .pitch_align(512)
            .host(1 << 20)
            .unwrap();
        let soa = arena.alloc_soa::<Particle>(1001).unwrap();
        let c = soa.columns();
        let mut spans = vec![
            (arena.offset(&c.kind).unwrap(), c.kind.size_bytes()),
            (arena.offset(&c.charge).unwrap(), c.charge.size_bytes()),
            (arena.offset(&c.mass).unwrap(), c.mass.size_bytes()),
            (arena.offset(&c.id).unwrap(), c.id.size_bytes()),
            (arena.offset(&c.velocity).unwrap(), c.velocity.size_bytes()),
            (arena.offset(&c.pair).unwrap(), c.pair.size_bytes()),
            (arena.offset(&c.position).unwrap(), c.position.size_bytes()),
            (arena.offset(&c.big).unwrap(), c.big.size_bytes()),
        ];
        for &(offset, bytes) in &spans {
            assert_eq!(offset % arena.min_align() as u64, 0, "column at {offset}");
            assert_eq!(offset % min_align as u64, 0);
            assert!(bytes >= 1001);
        }
        assert_eq!(c.kind.len(), 1001);
        assert_eq!(c.big.size_bytes(), 1001 * 16);
        spans.sort();
        for pair in spans.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 as u64 <= pair[1].0,
                "overlap: {spans:?}"
            );
        }
        arena.free(soa).unwrap();
    }
}

#[test]
fn all_or_nothing_when_the_columns_do_not_fit() {
    // 8 columns of 100 elements need more than 4 KiB; nothing may be left
    // reserved after the refusal.
    let mut arena = Arena::host(4096).unwrap();
    let refused = arena.alloc_soa::<Particle>(100).unwrap_err();
    assert!(matches!(refused, ArenaError::Alloc(_)), "{refused:?}");
    assert_eq!(arena.stats().allocations, 0);
    let fits = arena.alloc_soa::<Bytes>(100).unwrap();
    arena.free(fits).unwrap();
}

#[test]
fn a_length_mismatch_is_refused_and_writes_nothing() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut soa = arena.alloc_soa::<Scalar>(3).unwrap();
    arena
        .write_soa(&mut soa, &[1.0, 2.0, 3.0].map(|value| Scalar { value }))
        .unwrap();
    for wrong in [2, 4] {
        let items = vec![Scalar { value: 9.0 }; wrong];
        assert_eq!(
            arena.write_soa(&mut soa, &items),
            Err(ArenaError::LengthMismatch {
                expected: 3,
                found: wrong
            })
        );
    }
    assert_eq!(arena.get(&soa.columns().value).unwrap(), &[1.0, 2.0, 3.0]);
    arena.free(soa).unwrap();
}

#[test]
fn dropping_gives_every_column_back() {
    // Room for 16 structures of three 256-byte columns, no more.
    let mut arena = Arena::host(16 * 3 * 256).unwrap();
    let held: Vec<_> = (0..16)
        .map(|_| arena.alloc_soa::<Bytes>(100).unwrap())
        .collect();
    assert!(arena.alloc_soa::<Bytes>(100).is_err(), "the arena is full");
    drop(held);
    let items = [Bytes { a: 1, b: -2, c: 3 }; 100];
    for _ in 0..if cfg!(miri) { 50 } else { 10_000 } {
        let mut soa = arena.alloc_soa::<Bytes>(100).unwrap();
        arena.write_soa(&mut soa, &items).unwrap();
        assert_eq!(arena.read_soa(&soa).unwrap()[99], items[99]);
    }
    // A carving dropped with its structure of arrays never taken.
    let mut plan = Plan::new();
    let _never_taken = plan.soa::<Bytes>(100);
    drop(arena.carve(&plan).unwrap());
    assert_eq!(arena.live(), 0);
}

#[test]
fn columns_of_another_arena_are_refused() {
    let mut mine = Arena::host(1 << 16).unwrap();
    let mut other = Arena::host(1 << 16).unwrap();
    let mut soa = other.alloc_soa::<Bytes>(8).unwrap();
    let items = [Bytes { a: 1, b: 2, c: 3 }; 8];
    assert!(matches!(
        mine.write_soa(&mut soa, &items),
        Err(ArenaError::Handle(_))
    ));
    assert!(matches!(mine.read_soa(&soa), Err(ArenaError::Handle(_))));
    assert!(matches!(mine.soa_view(&soa), Err(ArenaError::Handle(_))));
    other.write_soa(&mut soa, &items).unwrap();
    assert_eq!(other.read_soa(&soa).unwrap(), items);
    // A refused free frees nothing and hands the columns back.
    let refused = mine.free(soa).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    let soa = refused.handle;
    assert_eq!(other.read_soa(&soa).unwrap(), items);
    other.free(soa).unwrap();
    assert_eq!(other.stats().allocations, 0);
}

#[test]
fn an_soa_sits_in_a_plan_beside_ordinary_arrays() {
    let mut arena = Arena::host(1 << 20).unwrap();
    let mut plan = Plan::new();
    let before = plan.array::<f32>(100);
    let particles = plan.soa::<Particle>(50);
    let after = plan.array::<u64>(10);
    assert_eq!(plan.len(), 2 + 8, "one array per column");
    let mut carving = arena.carve(&plan).unwrap();
    let mut soa = carving.take_soa(particles).expect("planned here");
    let mut before = carving.take(before).expect("planned here");
    let mut after = carving.take(after).expect("planned here");
    let mut rng = Rng(77);
    let items: Vec<Particle> = (0..50).map(|_| particle(&mut rng)).collect();
    arena.write_soa(&mut soa, &items).unwrap();
    arena.get_mut(&mut before).unwrap().fill(1.5);
    arena.get_mut(&mut after).unwrap().fill(7);
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert!(arena.get(&before).unwrap().iter().all(|&v| v == 1.5));
    arena.free(soa).unwrap();
    arena.free(before).unwrap();
    arena.free(after).unwrap();
    arena.free(carving).unwrap();
    assert_eq!(arena.stats().allocations, 0);

    // A key redeems only in the carving of its own plan.
    let mut first = Plan::new();
    let key = first.soa::<Scalar>(4);
    let second = {
        let mut plan = Plan::new();
        let _ = plan.array::<f64>(4);
        plan
    };
    let mut wrong = arena.carve(&second).unwrap();
    assert!(matches!(wrong.take_soa(key), Err(ArenaError::ForeignKey)));
    arena.free(wrong).unwrap();
    assert_eq!(arena.stats().allocations, 0);
}

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
fn the_kernel_view_and_the_carving_list_columns_in_declaration_order() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let soa = arena.alloc_soa::<Particle>(9).unwrap();
    let view = arena.soa_view(&soa).unwrap();
    assert_eq!(
        size_of::<<Particle as GpuSoa>::View>(),
        8 * (Particle::COLUMNS.len() + 1),
        "as the header's Particle_soa"
    );
    // Carved in declaration order: each column after the one before.
    assert!(view.columns.windows(2).all(|w| w[0] < w[1]), "{view:?}");
    assert_eq!(view.len, 9);
    let c = soa.columns();
    let by_name = |name: &str| match name {
        "kind" => arena.address(&c.kind),
        "charge" => arena.address(&c.charge),
        "mass" => arena.address(&c.mass),
        "id" => arena.address(&c.id),
        "velocity" => arena.address(&c.velocity),
        "pair" => arena.address(&c.pair),
        "position" => arena.address(&c.position),
        "big" => arena.address(&c.big),
        other => panic!("no column {other}"),
    };
    for (name, address) in PARTICLE_FIELDS.iter().zip(view.columns) {
        assert_eq!(by_name(name).unwrap(), address, "{name}");
    }
    let other = Arena::host(1 << 12).unwrap();
    assert!(matches!(other.soa_view(&soa), Err(ArenaError::Handle(_))));
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
            CudaHeader::new().add_soa_columns(layout, wrong).map(|_| ()),
            refused
        );
    }
    // The same views twice is one declaration; in another order, a clash.
    let mut header = CudaHeader::new();
    header.add_soa::<Particle>().unwrap();
    header.add_soa::<Particle>().unwrap();
    assert_eq!(header.add_soa_layout(layout).map(|_| ()), refused);
    assert_eq!(header.render().matches("struct Particle_soa {").count(), 1);
}

/// Packed, as a struct read from a file format might be: its columns are
/// aligned all the same, and no field is ever referenced where it lies.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
#[repr(C, packed)]
pub struct Packed {
    pub tag: u8,
    pub value: f64,
    pub count: u32,
}

#[test]
fn a_packed_struct_round_trips_through_aligned_columns() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let items: Vec<Packed> = (0..9u8)
        .map(|i| Packed {
            tag: i,
            value: f64::from(i) * 1.5,
            count: 1000 + u32::from(i),
        })
        .collect();
    let mut soa = arena.alloc_soa::<Packed>(items.len()).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert_eq!(arena.get(&soa.columns().value).unwrap()[2], 3.0);
    assert_eq!(arena.offset(&soa.columns().value).unwrap() % 256, 0);
    arena.free(soa).unwrap();
}

#[test]
fn an_empty_structure_of_arrays_takes_no_bytes_and_reads_back_empty() {
    let mut arena = Arena::host(4096).unwrap();
    let kept = arena.alloc_soa::<Bytes>(3).unwrap();
    let before = arena.stats();
    let mut soa = arena.alloc_soa::<Particle>(0).unwrap();
    assert!(soa.is_empty());
    assert_eq!(arena.stats(), before);
    arena.write_soa(&mut soa, &[]).unwrap();
    assert!(arena.read_soa(&soa).unwrap().is_empty());
    assert!(arena.write_soa(&mut soa, &[particle(&mut Rng(7))]).is_err());
    // The kernel's view: no elements, every column at the buffer's base.
    let view = arena.soa_view(&soa).unwrap();
    let base = gpu_aligned::backend::Backend::base_address(arena.backend());
    assert_eq!(view.len, 0);
    assert!(
        view.columns.iter().all(|&address| address == base),
        "{view:?}"
    );
    // Planned among other arrays.
    let mut plan = Plan::new();
    let weights = plan.array::<f32>(4);
    let none = plan.soa::<Scalar>(0);
    let mut carving = arena.carve(&plan).unwrap();
    let none = carving.take_soa(none).unwrap();
    let weights = carving.take(weights).unwrap();
    assert_eq!((none.len(), weights.len()), (0, 4));
    arena.free(none).unwrap();
    arena.free(soa).unwrap();
    drop(weights);
    assert_eq!(arena.live(), Bytes::COLUMNS.len());
    arena.free(kept).unwrap();
}
