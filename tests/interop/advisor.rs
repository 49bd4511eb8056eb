//! The layout advisor: its predictions against the H100 measurements it was
//! built on, and the three benchmark kernels' predictions for `Body`.

use crate::views::{BODY, EIGHT, FLOAT3, PARTICLE};
use gpu_aligned::coalesce::{advise, predict, Access, AdviceError, Fields, Storage};
use gpu_aligned::report::LayoutReport;
use gpu_aligned::GpuLayout;

const ALL: Fields<'static> = Fields::All;
const NONE: Fields<'static> = Fields::None;

#[test]
fn one_field_of_a_32_byte_struct_is_cheaper_from_its_column() {
    // Measured: 781 us as an array of structs, 227 us from a column (3.4x;
    // one element per thread, latency-bound). The model: 8x fewer bytes.
    let advice = advise(&EIGHT, &Access::streaming(Fields::Only(&["g"]), NONE)).unwrap();
    assert_eq!(advice.best, Storage::Soa);
    assert_eq!(advice.cost(Storage::Soa).bytes(), 4.0);
    assert_eq!(advice.cost(Storage::Aos).bytes(), 32.0);
    assert_eq!(advice.ratio(Storage::Aos), 8.0);
    assert!(advice.ratio(Storage::Aos) >= 3.4);
}

#[test]
fn a_random_gather_of_whole_elements_is_cheapest_padded() {
    // Measured: packed 2473 us, padded 2305 us, columns 6641 us.
    let advice = advise(&FLOAT3, &Access::gather(ALL, NONE)).unwrap();
    assert_eq!(advice.best, Storage::PaddedAos);
    assert_eq!(advice.cost(Storage::PaddedAos).bytes(), 64.0);
    // 2 of 16 positions of a 12-byte element straddle a 64-byte block.
    assert_eq!(advice.cost(Storage::Aos).bytes(), 72.0);
    assert_eq!(advice.cost(Storage::Soa).bytes(), 192.0);
    let measured_soa = 6641.0 / 2305.0;
    let measured_aos = 2473.0 / 2305.0;
    assert!((advice.ratio(Storage::Soa) - measured_soa).abs() < 0.15);
    assert!((advice.ratio(Storage::Aos) - measured_aos).abs() < 0.06);
    assert_eq!(advice.cost(Storage::PaddedAos).instructions, 1);
    assert_eq!(advice.cost(Storage::Soa).instructions, 3);
}

#[test]
fn streaming_every_field_is_cheapest_packed() {
    // Measured: packed 533 us, padded 713 us (1.34x), columns 620 us.
    let advice = advise(&FLOAT3, &Access::streaming(ALL, ALL)).unwrap();
    assert_eq!(advice.best, Storage::Aos);
    assert_eq!(advice.cost(Storage::Aos).bytes(), 24.0);
    assert_eq!(advice.cost(Storage::Soa).bytes(), 24.0);
    assert_eq!(advice.cost(Storage::PaddedAos).bytes(), 32.0);
    assert!((advice.ratio(Storage::PaddedAos) - 713.0 / 533.0).abs() < 0.02);
    // Packed and columns tie on bytes and instructions; one array wins.
    assert_eq!(advice.cost(Storage::Soa).arrays, 3);
    assert_eq!(advice.cost(Storage::Aos).arrays, 1);
}

/// The device benchmark's three kernels (`tests/device/soa/soa_bench.cu`):
/// (1) read and write one field, (2) read and write every field, (3) a
/// random gather of whole elements.
fn kernels(one: &'static [&'static str]) -> [Access<'static>; 3] {
    [
        Access::streaming(Fields::Only(one), Fields::Only(one)),
        Access::streaming(ALL, ALL),
        Access::gather(ALL, NONE),
    ]
}

/// Microseconds measured on an H100 (33.5 M elements, 8 per thread, median
/// of 11), per kernel, as [structure of arrays, array of structs, padded].
const MEASURED: [(&str, [[f64; 3]; 3]); 3] = [
    (
        "Body",
        [
            [97.9, 1317.0, 1527.7],
            [1373.7, 5348.7, 1864.8],
            [13890.3, 2351.6, 1503.5],
        ],
    ),
    (
        "Eight",
        [
            [97.0, 901.6, 903.3],
            [808.2, 1912.2, 764.8],
            [8573.6, 1187.9, 1175.4],
        ],
    ),
    (
        "Float3",
        [
            [96.2, 295.2, 395.2],
            [286.5, 296.5, 368.0],
            [3203.1, 1225.8, 1147.9],
        ],
    ),
];

fn measured(storage: Storage, times: &[f64; 3]) -> f64 {
    match storage {
        Storage::Soa => times[0],
        Storage::Aos => times[1],
        Storage::PaddedAos => times[2],
    }
}

#[test]
fn the_advisor_picks_the_measured_fastest_layout_or_one_within_5_percent() {
    for (name, per_kernel) in MEASURED {
        let (layout, one): (&GpuLayout, &'static [&'static str]) = match name {
            "Body" => (&BODY, &["mass"]),
            "Eight" => (&EIGHT, &["g"]),
            _ => (&FLOAT3, &["y"]),
        };
        for (kernel, (access, times)) in kernels(one).iter().zip(&per_kernel).enumerate() {
            let advice = advise(layout, access).unwrap();
            let fastest = times.iter().copied().fold(f64::INFINITY, f64::min);
            let picked = measured(advice.best, times);
            assert!(
                picked <= fastest * 1.05,
                "{name} kernel ({}): picked {:?} at {picked} us, fastest {fastest} us\n{advice}",
                kernel + 1,
                advice.best
            );
            if name == "Body" {
                assert_eq!(picked, fastest, "the benchmark struct: exactly the fastest");
            }
            println!("{advice}");
        }
    }
}

#[test]
fn the_benchmark_ratios_are_close_to_the_measured_ones() {
    let [one, every, gather] = kernels(&["mass"]).map(|access| advise(&BODY, &access).unwrap());
    assert_eq!(one.best, Storage::Soa);
    // Measured 13.5x and 15.6x.
    assert_eq!(one.ratio(Storage::Aos), 13.0);
    assert_eq!(one.ratio(Storage::PaddedAos), 16.0);
    assert_eq!(every.best, Storage::Soa);
    assert_eq!(every.cost(Storage::Aos).bytes(), 104.0);
    assert_eq!(every.cost(Storage::Soa).bytes(), 104.0);
    assert_eq!(every.cost(Storage::PaddedAos).bytes(), 128.0);
    // 13 four-byte stores a warp, each touching 13 lines: measured 3.9x.
    let aos = every.ratio(Storage::Aos);
    assert!((aos - 3.89).abs() / 3.89 < 0.1, "{aos}");
    assert_eq!(gather.best, Storage::PaddedAos);
    assert_eq!(gather.cost(Storage::PaddedAos).bytes(), 64.0);
    assert_eq!(gather.cost(Storage::Aos).bytes(), 112.0);
    assert_eq!(gather.cost(Storage::Soa).bytes(), 13.0 * 64.0);
}

#[test]
fn partial_access_counts_shared_sectors_once() {
    // Two neighbouring 4-byte fields of a 32-byte element share a block.
    let two = predict(
        &EIGHT,
        &Access::streaming(Fields::Only(&["a", "b"]), NONE),
        Storage::Aos,
    )
    .unwrap();
    assert_eq!(two.bytes(), 32.0);
    assert_eq!(two.instructions, 2);
    // Mixed widths: a u8 column moves 1 byte an element, a float4 one 16.
    let soa = predict(
        &PARTICLE,
        &Access::streaming(Fields::Only(&["kind", "pos"]), NONE),
        Storage::Soa,
    )
    .unwrap();
    assert_eq!(soa.bytes(), 17.0);
    assert_eq!((soa.instructions, soa.arrays), (2, 2));
}

#[test]
fn unknown_fields_and_empty_accesses_are_errors() {
    assert_eq!(
        advise(&EIGHT, &Access::streaming(Fields::Only(&["mass"]), NONE)).unwrap_err(),
        AdviceError::UnknownField { name: "mass" }
    );
    assert_eq!(
        advise(&EIGHT, &Access::gather(NONE, Fields::Only(&[]))).unwrap_err(),
        AdviceError::NothingAccessed
    );
    assert!(AdviceError::UnknownField { name: "q" }
        .to_string()
        .contains("`q`"));
}

#[test]
fn the_report_prints_the_recommendation_with_the_numbers() {
    let advice = LayoutReport::new(&BODY)
        .advise(&Access::gather(ALL, NONE))
        .unwrap();
    let text = advice.to_string();
    assert!(text.starts_with(
        "Body (52 bytes, align 4), gathered at random indices; reads every field, writes nothing:\n"
    ), "{text}");
    assert!(text.contains("* padded array of structs"), "{text}");
    assert!(text.contains(
        "recommended: padded array of structs (array of structs predicted 1.75x slower, structure of arrays predicted 13.00x slower)"
    ), "{text}");
}

/// `Eight` as a path tracer's sphere table: every thread of a warp tests
/// the same sphere, so each load serves all 32 lanes from one element.
const UNIFORM_ALL: Access<'static> = Access::uniform(ALL, NONE);

#[test]
fn a_uniform_read_of_eight_floats_is_cheapest_as_16_byte_words() {
    let advice = advise(&EIGHT, &UNIFORM_ALL).unwrap();
    // Padded slots of 32 bytes from a 256-aligned base: element e is bytes
    // [32e, 32e + 32), one sector; two LDG.128 at +0 and +16 each request
    // it: 2 instructions, 2 sectors (64 bytes).
    let padded = advice.cost(Storage::PaddedAos);
    assert_eq!((padded.instructions, padded.read_bytes), (2, 2.0 * 32.0));
    // Packed, align 4: moved as eight 4-byte words, each inside that one
    // sector: 8 instructions, 8 sectors (256 bytes), one array.
    let packed = advice.cost(Storage::Aos);
    assert_eq!((packed.instructions, packed.read_bytes), (8, 8.0 * 32.0));
    assert_eq!(packed.arrays, 1);
    // Columns: eight 4-byte loads from eight arrays, one sector each: 8
    // instructions, 8 sectors, and eight addresses to keep.
    let columns = advice.cost(Storage::Soa);
    assert_eq!((columns.instructions, columns.read_bytes), (8, 8.0 * 32.0));
    assert_eq!(columns.arrays, 8);
    assert_eq!(advice.best, Storage::PaddedAos);
    // 256 sector bytes against 64.
    assert_eq!(advice.ratio(Storage::Soa), 4.0);
    assert_eq!(advice.ratio(Storage::Aos), 4.0);
    // Nothing is written.
    assert_eq!(padded.write_bytes, 0.0);
    assert_eq!(padded.store_requests, 0.0);
}

#[test]
fn columns_buy_nothing_for_a_uniform_read_of_a_few_fields() {
    // Centre and radius, the first 16 bytes of each 32. Walked in order,
    // the columns move 16 bytes an element, the structs all 32.
    let centre: &[&str] = &["a", "b", "c", "d"];
    let streaming = advise(&EIGHT, &Access::streaming(Fields::Only(centre), NONE)).unwrap();
    assert_eq!(streaming.best, Storage::Soa);
    assert_eq!(
        Storage::ALL,
        [Storage::Aos, Storage::PaddedAos, Storage::Soa]
    );
    assert_eq!(streaming.best.name(), "structure of arrays");
    assert_eq!(streaming.ratio(Storage::Aos), 2.0);
    // Read by a whole warp, the same four fields are four 4-byte loads, one
    // sector each, in every layout (partial reads go field by field): a tie
    // on time and instructions, broken by arrays, so one array of structs.
    let uniform = advise(&EIGHT, &Access::uniform(Fields::Only(centre), NONE)).unwrap();
    for storage in Storage::ALL {
        let cost = uniform.cost(storage);
        assert_eq!((cost.instructions, cost.read_bytes), (4, 4.0 * 32.0));
    }
    assert_eq!(uniform.best, Storage::Aos);
    assert_eq!(uniform.cost(Storage::Soa).arrays, 4);
}

#[test]
fn a_uniform_read_of_body_picks_padded_slots_where_updating_it_picks_columns() {
    // Streaming read + write of every field: columns (measured fastest).
    let streaming = advise(&BODY, &Access::streaming(ALL, ALL)).unwrap();
    assert_eq!(streaming.best, Storage::Soa);
    let uniform = advise(&BODY, &UNIFORM_ALL).unwrap();
    assert_eq!(uniform.best, Storage::PaddedAos);
    // 52 bytes in 64-byte slots: four LDG.128 at +0, +16, +32, +48, each
    // inside one sector: 4 instructions, 4 sectors.
    let padded = uniform.cost(Storage::PaddedAos);
    assert_eq!((padded.instructions, padded.read_bytes), (4, 4.0 * 32.0));
    // Packed, align 4: thirteen 4-byte words at 52e + 4k; a 4-aligned word
    // never crosses a 32-byte boundary, so 13 sectors. Columns: the same
    // 13 loads and sectors from 13 arrays.
    for storage in [Storage::Aos, Storage::Soa] {
        let cost = uniform.cost(storage);
        assert_eq!((cost.instructions, cost.read_bytes), (13, 13.0 * 32.0));
    }
    assert_eq!(uniform.ratio(Storage::Soa), 13.0 / 4.0);
}

#[test]
fn a_uniform_read_of_a_packed_float3_takes_three_loads_or_one_padded() {
    let advice = advise(&FLOAT3, &UNIFORM_ALL).unwrap();
    // Packed (12 bytes, align 4): three 4-byte words. Padded: one 16-byte
    // word. Columns: three loads. One sector per instruction in each.
    let counts = Storage::ALL.map(|storage| {
        let cost = advice.cost(storage);
        (cost.instructions, cost.read_bytes / 32.0)
    });
    assert_eq!(counts, [(3, 3.0), (1, 1.0), (3, 3.0)]);
    assert_eq!(advice.best, Storage::PaddedAos);
    assert_eq!(advice.ratio(Storage::Aos), 3.0);
}

#[test]
fn a_16_aligned_struct_read_uniformly_is_already_its_best_layout() {
    // Eight floats declared `align(16)`: the packed layout is the padded
    // one (two 16-byte words), so the one array is kept as it is.
    let aligned = GpuLayout::new("Eight16", 32, 16, 0, EIGHT.fields);
    let advice = advise(&aligned, &UNIFORM_ALL).unwrap();
    assert_eq!(advice.cost(Storage::Aos).instructions, 2);
    assert_eq!(advice.cost(Storage::Aos).read_bytes, 64.0);
    assert_eq!(advice.best, Storage::Aos);
}

#[test]
fn a_uniform_write_costs_a_request_per_store_and_line() {
    // One lane per warp writing a whole Eight in padded slots: two 16-byte
    // stores, each inside one 128-byte line, so 2 requests (164 DRAM-byte
    // units), more than the 64 + 64 sector bytes moved.
    let cost = predict(&EIGHT, &Access::uniform(ALL, ALL), Storage::PaddedAos).unwrap();
    assert_eq!(cost.store_requests, 2.0);
    assert_eq!(cost.instructions, 4);
    assert_eq!(cost.time(), 2.0 * 82.0);
}

#[test]
fn the_report_prints_sectors_for_a_uniform_read() {
    let text = advise(&EIGHT, &UNIFORM_ALL).unwrap().to_string();
    assert!(
        text.starts_with(
            "Eight (32 bytes, align 4), each element taken by a whole warp at once; \
             reads every field, writes nothing:\n  layout                       sectors"
        ),
        "{text}"
    );
    assert!(
        text.contains("* padded array of structs          2.0       0.00             2"),
        "{text}"
    );
    assert!(
        text.contains(
            "recommended: padded array of structs (array of structs predicted 4.00x slower, \
             structure of arrays predicted 4.00x slower)"
        ),
        "{text}"
    );
}
