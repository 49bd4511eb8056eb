//! Arrays of no elements: accepted by every maker, holding no bytes (no
//! allocator call, no region), reading back empty, with empty views, and
//! harmless to drop or free, twice included.

use gpu_aligned::arena::{Arena, ArenaOptions, Plan, ThreadArena};
use gpu_aligned::vector::float4;

use crate::support::address_of;
use crate::support::Rng;

#[test]
fn every_maker_accepts_no_elements_and_takes_no_bytes() {
    let mut arena = Arena::host(4096).unwrap();
    let a = arena.alloc::<f32>(0).unwrap();
    let b = arena.alloc_zeros::<float4>(0).unwrap();
    let c = arena.alloc_from::<u64>(&[]).unwrap();
    let wide = arena.alloc_pitched::<f32>(0, 4).unwrap();
    let flat = arena.alloc_pitched::<f32>(4, 0).unwrap();
    for (len, bytes) in [
        (a.len(), a.size_bytes()),
        (b.len(), b.size_bytes()),
        (c.len(), c.size_bytes()),
    ] {
        assert_eq!((len, bytes), (0, 0));
    }
    assert!(a.is_empty() && b.is_empty() && c.is_empty());
    assert_eq!((wide.size_bytes(), flat.size_bytes()), (0, 0));
    assert_eq!((wide.width(), wide.height()), (0, 4));
    assert_eq!((flat.width(), flat.height()), (4, 0));
    // No allocator call: nothing is used, nothing is live.
    let stats = arena.allocator().stats();
    assert_eq!((stats.allocations, stats.used, arena.live()), (0, 0, 0));
    assert!(arena.leaks().is_empty());
    // The whole buffer is still one array's.
    let all = arena.alloc::<u8>(4096).unwrap();
    assert_eq!(arena.offset(&all).unwrap(), 0);
}

#[test]
fn an_empty_array_reads_back_empty_and_its_views_are_empty() {
    let mut arena = Arena::host(4096).unwrap();
    let mut a = arena.alloc_from::<u32>(&[]).unwrap();
    assert_eq!(arena.to_vec(&a).unwrap(), Vec::<u32>::new());
    assert_eq!(arena.get(&a).unwrap(), &[] as &[u32]);
    assert!(arena.get_mut(&mut a).unwrap().is_empty());
    arena.write(&mut a, .., &[]).unwrap();
    arena.read(&a, .., &mut []).unwrap();
    arena.zero(&mut a).unwrap();
    arena.write(&mut a, 0..0, &[]).unwrap();
    // Past its end is out of range, as for any array.
    assert!(arena.write(&mut a, .., &[1]).is_err());
    assert!(arena.read(&a, 1.., &mut []).is_err());
    let mut b = arena.alloc::<u32>(0).unwrap();
    arena.copy(&a, &mut b).unwrap();
    let full = arena.alloc::<u32>(1).unwrap();
    assert!(arena.copy(&full, &mut b).is_err());
    // The address a kernel would get: the buffer's base, at offset 0.
    assert_eq!(arena.offset(&a).unwrap(), 0);
    assert_eq!(
        address_of(&arena, &a).unwrap(),
        gpu_aligned::backend::Buffer::base_address(arena.backend())
    );
    let mut image = arena.alloc_pitched::<u16>(0, 3).unwrap();
    arena.write(&mut image, .., &[]).unwrap();
    arena.read(&image, .., &mut []).unwrap();
    assert!(arena.write(&mut image, .., &[1]).is_err());
}

#[test]
fn dropping_or_freeing_an_empty_array_changes_nothing() {
    let mut arena = Arena::host(4096).unwrap();
    let kept = arena.alloc_from(&[1u32, 2, 3]).unwrap();
    let before = arena.allocator().stats();
    let a = arena.alloc::<u32>(0).unwrap();
    let b = arena.alloc::<u32>(0).unwrap();
    drop(a);
    arena.free(b).unwrap();
    let image = arena.alloc_pitched::<f32>(0, 0).unwrap();
    arena.free(image).unwrap();
    // An empty array of another arena is no one's bytes: freeing it there
    // is as harmless.
    let mut other = Arena::host(4096).unwrap();
    let theirs = other.alloc::<u32>(0).unwrap();
    arena.free(theirs).unwrap();
    assert_eq!(arena.allocator().stats(), before);
    assert_eq!(arena.to_vec(&kept).unwrap(), [1, 2, 3]);
    assert_eq!((arena.live(), arena.pending_frees()), (1, 0));
    // Freed twice, through a carving that still holds its empty arrays.
    let mut plan = Plan::new();
    let key = plan.array::<f32>(0);
    let mut carving = arena.carve(&plan).unwrap();
    let empty = carving.take(key).unwrap();
    arena.free(empty).unwrap();
    arena.free(carving).unwrap();
    arena.reset().unwrap();
    let stale = arena.alloc::<f32>(0).unwrap();
    arena.reset().unwrap();
    assert_eq!(arena.to_vec(&stale).unwrap(), Vec::<f32>::new());
    drop(stale);
    assert!(arena.allocator().check_invariants().is_ok());
}

#[test]
fn a_plan_mixes_empty_arrays_among_others() {
    let mut plan = Plan::new();
    let a = plan.array::<f32>(10);
    let none = plan.array::<float4>(0);
    let image = plan.pitched::<u8>(0, 7);
    let b = plan.array::<u32>(3);
    let rows = plan.pitched::<f32>(5, 0);
    let bytes = plan.bytes_needed(256, 512).unwrap();
    // The empty arrays take nothing: two 256-byte blocks, the last one's
    // own 12 bytes.
    assert_eq!(bytes, 256 + 12);
    let mut arena = ArenaOptions::new().host_for(&plan).unwrap();
    let mut carving = arena.carve(&plan).unwrap();
    assert_eq!(carving.total_bytes(), 40 + 12);
    let (a, none, image, b, rows) = (
        carving.take(a).unwrap(),
        carving.take(none).unwrap(),
        carving.take_pitched(image).unwrap(),
        carving.take(b).unwrap(),
        carving.take_pitched(rows).unwrap(),
    );
    assert_eq!(arena.offset(&b).unwrap() - arena.offset(&a).unwrap(), 256);
    assert_eq!(
        (none.len(), image.size_bytes(), rows.size_bytes()),
        (0, 0, 0)
    );
    assert_eq!(arena.live(), 2);
    drop((none, image, rows));
    assert_eq!(arena.live(), 2);
    // A plan of empty arrays only needs no bytes, and still gets an arena.
    let mut nothing = Plan::new();
    let key = nothing.array::<u8>(0);
    assert_eq!(nothing.bytes_needed(256, 512).unwrap(), 0);
    let mut tiny = ArenaOptions::new().host_for(&nothing).unwrap();
    let empty = tiny.carve(&nothing).unwrap().take(key).unwrap();
    assert!(empty.is_empty());
}

#[test]
fn a_thread_arena_makes_empty_arrays_too() {
    let arena = ThreadArena::new(Arena::host(4096).unwrap());
    let a = arena.alloc::<f32>(0).unwrap();
    let b = arena.alloc_zeros::<u16>(0).unwrap();
    let c = arena.alloc_from::<u8>(&[]).unwrap();
    assert!(a.is_empty() && b.is_empty() && c.is_empty());
    assert_eq!(arena.lock().to_vec(&c).unwrap(), Vec::<u8>::new());
    drop((a, b, c));
    arena.flush().unwrap();
    assert_eq!(arena.stats().allocations, 0);
}

#[test]
fn empty_arrays_need_no_red_zone_or_region() {
    let mut arena = Arena::host(4096).unwrap();
    arena.set_red_zones(true);
    let a = arena.alloc::<f32>(0).unwrap();
    let image = arena.alloc_pitched::<f32>(0, 2).unwrap();
    arena.label(&a, "nothing").unwrap();
    assert!(arena.regions().regions().is_empty());
    assert_eq!(arena.allocator().stats().allocations, 0);
    drop((a, image));
    assert!(arena.regions().regions().is_empty());
}

/// Random programs that allocate, write, read, drop and free arrays of
/// random lengths, 0 among them: the empty arrays never take bytes, and
/// the others keep their contents.
#[test]
fn random_programs_with_empty_arrays_keep_every_array_intact() {
    let mut rng = Rng(0x0e4f_7a11);
    let steps = if cfg!(miri) { 40 } else { 2000 };
    let mut arena = Arena::host(1 << 16).unwrap();
    let mut live: Vec<(gpu_aligned::arena::ArenaSlice<u32>, Vec<u32>)> = Vec::new();
    for step in 0..steps {
        match rng.pick(4) {
            0 | 1 => {
                let len = if rng.pick(3) == 0 { 0 } else { rng.pick(40) };
                let values: Vec<u32> = (0..len).map(|_| rng.u32()).collect();
                match arena.alloc_from(&values) {
                    Ok(array) => live.push((array, values)),
                    Err(error) => assert!(len > 0, "step {step}: {error}"),
                }
            }
            2 if !live.is_empty() => {
                let (array, _) = live.swap_remove(rng.pick(live.len()));
                arena.free(array).unwrap();
            }
            _ if !live.is_empty() => {
                let (array, _) = live.swap_remove(rng.pick(live.len()));
                drop(array);
            }
            _ => {}
        }
        let holding = live.iter().filter(|(array, _)| !array.is_empty()).count();
        assert_eq!(arena.live(), holding, "step {step}");
        for (array, values) in &live {
            assert_eq!(&arena.to_vec(array).unwrap(), values, "step {step}");
        }
    }
    assert!(arena.allocator().check_invariants().is_ok());
}

/// An empty array's elements are an empty slice whatever the type's
/// alignment: a slice of no elements still needs a pointer aligned for its
/// type (Miri checks it), and a host buffer is aligned to 256 bytes, not to
/// a struct aligned to 4096.
#[test]
fn an_empty_array_of_a_type_aligned_past_the_buffer_reads_as_an_empty_slice() {
    #[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuData)]
    #[repr(C, align(4096))]
    struct Wide {
        a: [float4; 256],
    }
    let mut arena = ArenaOptions::new()
        .min_align(4)
        .pitch_align(4)
        .host(4096)
        .unwrap();
    let mut none = arena.alloc::<Wide>(0).unwrap();
    assert_eq!(arena.get(&none).unwrap(), &[] as &[Wide]);
    assert!(arena.get_mut(&mut none).unwrap().is_empty());
    let copied = arena.alloc_from::<Wide>(&[]).unwrap();
    assert_eq!(arena.to_vec(&copied).unwrap(), Vec::<Wide>::new());
}
