//! Attacks on structures of arrays by safe code: lengths at the edges of
//! `usize`, columns traded between structures of different lengths, field
//! names that are also names inside the derive's expansion or of constants
//! in scope, handles printed after their arena is gone, and a column traded
//! into another arena's structure of arrays.

use gpu_aligned::arena::{Arena, ArenaError, Plan};
use gpu_aligned::soa::GpuSoa;
use std::mem::size_of;

use crate::support::Rng;
use crate::types::{particle, Particle, Scalar};

#[test]
fn lengths_at_the_edges_of_usize_reserve_nothing() {
    let mut arena = Arena::host(1 << 16).unwrap();
    for len in [usize::MAX, usize::MAX / 16 + 1, usize::MAX / 2, 1 << 40] {
        assert!(
            matches!(arena.alloc_soa::<Particle>(len), Err(ArenaError::Alloc(_))),
            "{len}"
        );
        let mut plan = Plan::new();
        let _before = plan.array::<u8>(10);
        let _soa = plan.soa::<Particle>(len);
        assert!(arena.carve(&plan).is_err(), "{len}");
        assert_eq!(arena.live(), 0, "{len}");
    }
    // Every column fits alone; all of them together do not.
    let each = (1 << 16) / 16;
    assert!(arena.alloc_soa::<Particle>(each).is_err());
    assert_eq!(arena.live(), 0);
    let fits = arena.alloc_soa::<Scalar>(each / 2).unwrap();
    arena.free(fits).unwrap();
}

#[test]
fn columns_traded_between_structures_of_different_lengths_are_refused() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut long = arena.alloc_soa::<Particle>(10).unwrap();
    let mut short = arena.alloc_soa::<Particle>(3).unwrap();
    core::mem::swap(&mut long.columns_mut().id, &mut short.columns_mut().id);
    for soa in [&long, &short] {
        assert!(matches!(
            arena.read_soa(soa),
            Err(ArenaError::LengthMismatch { .. })
        ));
    }
    let mut rng = Rng(7);
    let items: Vec<Particle> = (0..10).map(|_| particle(&mut rng)).collect();
    assert!(matches!(
        arena.write_soa(&mut long, &items),
        Err(ArenaError::LengthMismatch { .. })
    ));
    // Refused before any column was written, those declared before `id`
    // included.
    assert_eq!(arena.get(&long.columns().kind).unwrap(), &[0; 10]);
    assert_eq!(arena.get(&long.columns().mass).unwrap(), &[0.0; 10]);
    // Whole column sets move together: then both are consistent again.
    core::mem::swap(long.columns_mut(), short.columns_mut());
    assert!(arena.read_soa(&long).is_err());
    core::mem::swap(&mut long.columns_mut().id, &mut short.columns_mut().id);
    core::mem::swap(long.columns_mut(), short.columns_mut());
    assert_eq!(arena.read_soa(&long).unwrap().len(), 10);
    arena.write_soa(&mut long, &items).unwrap();
    assert_eq!(arena.read_soa(&long).unwrap(), items);
    arena.free(long).unwrap();
    arena.free(short).unwrap();
    assert_eq!(arena.live(), 0);
}

/// Fields named like the parameters and locals of the derive's expansion.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct Shadows {
    pub items: u32,
    pub len: u32,
    pub index: u16,
    pub reader: u8,
    pub writer: u8,
    pub columns: f32,
    pub values: f64,
    pub source: i32,
    pub visitor: i16,
    pub consumer: i8,
    pub planner: u64,
    pub f: u8,
}

#[test]
fn fields_named_like_the_expansions_own_names_round_trip() {
    let mut arena = Arena::host(1 << 16).unwrap();
    let items: Vec<Shadows> = (0..5u8)
        .map(|i| Shadows {
            items: u32::from(i),
            len: 10 + u32::from(i),
            index: 20 + u16::from(i),
            reader: 30 + i,
            writer: 40 + i,
            columns: f32::from(i) / 2.0,
            values: f64::from(i) * 3.0,
            source: -i32::from(i),
            visitor: -100 - i16::from(i),
            consumer: -(i as i8),
            planner: u64::MAX - u64::from(i),
            f: 200 + i,
        })
        .collect();
    let mut soa = arena.alloc_soa::<Shadows>(items.len()).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert_eq!(
        arena.get(&soa.columns().len).unwrap(),
        &[10, 11, 12, 13, 14]
    );
    assert_eq!(Shadows::COLUMNS.len(), 12);
    assert_eq!(arena.read_soa(&soa).unwrap().len(), 5);
    arena.free(soa).unwrap();
}

#[test]
fn handles_print_without_their_arena() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let soa = arena.alloc_soa::<Scalar>(4).unwrap();
    let a = arena.alloc::<u32>(2).unwrap();
    let image = arena.alloc_pitched::<u8>(3, 2).unwrap();
    let mut plan = Plan::new();
    let key = plan.soa::<Scalar>(2);
    let carving = arena.carve(&plan).unwrap();
    drop(arena);
    // Debug shows where they were, read from the handles alone: no byte of
    // the dropped buffer is touched (Miri checks).
    for text in [
        format!("{soa:?}"),
        format!("{a:?}"),
        format!("{image:?}"),
        format!("{key:?}"),
        format!("{carving:?}"),
    ] {
        assert!(!text.is_empty());
    }
    assert!(format!("{soa:?}").contains("Scalar"));
}

/// Type names one letter long, as a derive's generic parameters often are.
type B = f32;
type S = u32;
type V = u16;
type C = u8;
type W = i64;
type P = i8;

/// A struct named like a generic parameter, with fields of the types above.
#[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
pub struct R {
    pub b: B,
    pub s: S,
    pub v: V,
    pub c: C,
    pub w: W,
    pub p: P,
}

#[test]
fn types_named_like_generic_parameters_round_trip() {
    let mut arena = Arena::host(1 << 14).unwrap();
    let items: Vec<R> = (0..4u8)
        .map(|i| R {
            b: f32::from(i) + 0.5,
            s: 1000 + u32::from(i),
            v: 7 * u16::from(i),
            c: i,
            w: -i64::from(i),
            p: -(i as i8),
        })
        .collect();
    let mut soa = arena.alloc_soa::<R>(items.len()).unwrap();
    arena.write_soa(&mut soa, &items).unwrap();
    assert_eq!(arena.read_soa(&soa).unwrap(), items);
    assert_eq!(
        arena.get(&soa.columns().s).unwrap(),
        &[1000, 1001, 1002, 1003]
    );
    assert_eq!(
        core::mem::size_of::<<R as GpuSoa>::View>(),
        8 * (R::COLUMNS.len() + 1)
    );
    arena.free(soa).unwrap();
}

mod constants_named_like_fields {
    //! Constants in scope spelled like the fields: a field name the
    //! expansion used as a pattern (`let mass = ...`) would become a
    //! constant pattern there, and the derive would not compile.
    #![allow(non_upper_case_globals, dead_code)]

    use gpu_aligned::arena::Arena;

    const mass: f32 = 1.0;
    const id: u32 = 7;
    const columns: u8 = 0;
    const fields: u8 = 0;

    #[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
    pub struct Body {
        pub mass: f32,
        pub id: u32,
    }

    #[test]
    fn a_struct_whose_fields_are_named_like_constants_in_scope_round_trips() {
        let mut arena = Arena::host(1 << 14).unwrap();
        let items = [Body { mass: 2.5, id: 3 }, Body { mass: -1.0, id: 9 }];
        let mut soa = arena.alloc_soa::<Body>(items.len()).unwrap();
        arena.write_soa(&mut soa, &items).unwrap();
        assert_eq!(arena.read_soa(&soa).unwrap(), items);
        assert_eq!(arena.get(&soa.columns().id).unwrap(), &[3, 9]);
        arena.free(soa).unwrap();
    }
}

/// Called directly, the hidden macro takes its column names from the
/// fields themselves and its column count from their list, so the view
/// and the header's `P_soa` have one distinct member per field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ByHand {
    pub id: u32,
    pub r#type: u8,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: ByHand,
    columns: ByHandColumns,
    fields: [id: u32, r#type: u8],
}

#[test]
fn the_hidden_macro_names_and_counts_the_columns_itself() {
    let names: Vec<&str> = ByHand::COLUMNS.iter().map(|c| c.name).collect();
    assert_eq!(names, ["id", "type"]);
    assert_eq!(
        size_of::<<ByHand as GpuSoa>::View>(),
        8 * (ByHand::COLUMNS.len() + 1)
    );
    let mut header = gpu_aligned::header::CudaHeader::new();
    header.add_soa::<ByHand>().unwrap();
    let text = header.render();
    assert!(
        text.contains("struct ByHand_soa {\n    gpu_aligned_column<uint32_t, 4> id;\n    gpu_aligned_column<uint8_t, 1> type;\n"),
        "{text}"
    );
    assert!(text.contains("static_assert(sizeof(ByHand_soa) == 24,"));
}

#[test]
fn a_column_traded_between_arenas_goes_back_to_its_own() {
    let mut mine = Arena::host(1 << 14).unwrap();
    let mut theirs = Arena::host(1 << 14).unwrap();
    let mut soa = mine.alloc_soa::<Scalar>(4).unwrap();
    let mut traded = theirs.alloc::<f64>(4).unwrap();
    core::mem::swap(&mut soa.columns_mut().value, &mut traded);
    // `mine` refuses the structure whole: nothing is given back.
    let refused = mine.free(soa).unwrap_err();
    assert!(matches!(refused.error, ArenaError::Handle(_)));
    assert_eq!((mine.live(), theirs.live()), (1, 1));
    // Dropped, each column goes back to the arena it came from.
    drop(refused.handle);
    assert_eq!((mine.live(), theirs.live()), (1, 0));
    drop(traded);
    assert_eq!((mine.live(), theirs.live()), (0, 0));
}
