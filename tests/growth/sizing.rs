//! Sizing a fixed arena from a plan: `Plan::bytes_needed` is enough to carve
//! the plan, and where no alignment gap can be filled, one byte less is not.

use gpu_aligned::arena::ArenaOptions;
use gpu_aligned::arena::Plan;
use gpu_aligned::vector::float4;

use crate::support::Rng;

/// A random plan of up to 12 arrays, pitched ones among them if asked.
fn random_plan(rng: &mut Rng, pitched: bool) -> Plan {
    let mut plan = Plan::new();
    for _ in 0..1 + rng.below(12) {
        let longest = if rng.below(2) == 0 { 300 } else { 30_000 };
        let len = 1 + rng.below(longest) as usize;
        match rng.below(if pitched { 5 } else { 4 }) {
            0 => {
                let _ = plan.array::<u8>(len);
            }
            1 => {
                let _ = plan.array::<f32>(len);
            }
            2 => {
                let _ = plan.array::<f64>(len);
            }
            3 => {
                let _ = plan.array::<float4>(len);
            }
            _ => {
                let (width, height) = (1 + rng.below(700), 1 + rng.below(40));
                let _ = plan.pitched::<f32>(width as usize, height as usize);
            }
        }
    }
    plan
}

#[test]
fn an_arena_of_the_bytes_needed_carves_the_plan() {
    let mut rng = Rng(0x5123);
    let trials = if cfg!(miri) { 4 } else { 300 };
    for _ in 0..trials {
        let min_align = 16usize << rng.below(7);
        let pitch_align = 256usize << rng.below(2);
        let plan = random_plan(&mut rng, true);
        let bytes = plan.bytes_needed(min_align, pitch_align).unwrap();
        let mut arena = ArenaOptions::new()
            .min_align(min_align)
            .pitch_align(pitch_align)
            .host(bytes)
            .unwrap();
        let carving = arena
            .carve(&plan)
            .unwrap_or_else(|e| panic!("{bytes} bytes, {min_align}/{pitch_align}: {e}"));
        arena.free(carving).unwrap();
    }
}

#[test]
fn one_byte_less_is_not_enough_for_arrays_back_to_back() {
    let mut rng = Rng(0x77);
    let trials = if cfg!(miri) { 4 } else { 300 };
    for _ in 0..trials {
        // Flat arrays with a minimum alignment at least each element's and
        // no pitched ones: every array starts where the last one's granule
        // ends, so there is no gap to fill.
        let min_align = 16usize << rng.below(5);
        let plan = random_plan(&mut rng, false);
        let bytes = plan.bytes_needed(min_align, 512).unwrap();
        let mut arena = ArenaOptions::new()
            .min_align(min_align)
            .pitch_align(512)
            .host(bytes - 1)
            .unwrap();
        assert!(
            arena.carve(&plan).is_err(),
            "{bytes} - 1 bytes carved the plan"
        );
    }
}

#[test]
fn bad_alignments_and_empty_plans() {
    let mut plan = Plan::new();
    assert_eq!(plan.bytes_needed(256, 512), Ok(0));
    let _ = plan.array::<u32>(10);
    assert!(plan.bytes_needed(3, 512).is_err());
    assert!(plan.bytes_needed(256, 0).is_err());
    assert_eq!(plan.bytes_needed(256, 512), Ok(40));
}
