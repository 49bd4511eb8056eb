//! One function over any backend, using only the verbs every backend has.
//! The host arena runs it here; the device tests run the same function on a
//! CUDA arena (they include this file).

use std::fmt::Debug;

use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::Backend;

/// Allocates, writes, reads, zeroes, copies sub-ranges and pitched rows,
/// checks offsets and addresses and the length and range errors, then frees
/// everything; panics on a wrong value.
pub fn every_verb<B: Backend>(arena: &mut Arena<B>)
where
    B::Error: Debug + PartialEq,
{
    let mut a = arena.alloc::<u32>(1000).unwrap();
    let mut b = arena.alloc::<u32>(1000).unwrap();
    let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    arena.write(&mut a, &data).unwrap();
    arena.write_range(&mut a, 10, &[7, 8, 9]).unwrap();
    let mut middle = [0u32; 5];
    arena.read_range(&a, 9, &mut middle).unwrap();
    assert_eq!(middle, [28, 7, 8, 9, 40]);
    let mut whole = vec![0u32; 1000];
    arena.read(&a, &mut whole).unwrap();
    assert_eq!(&whole[..9], &data[..9]);
    assert_eq!(&whole[13..], &data[13..]);

    // The named-stream form of the same verbs, on the backend's own stream.
    let stream = arena.backend().stream();
    arena.on(stream).write(&mut b, &data).unwrap();
    assert_eq!(arena.on(stream).to_vec(&b).unwrap(), data);
    arena.on(stream).zero(&mut b).unwrap();
    assert!(arena.to_vec(&b).unwrap().iter().all(|&v| v == 0));

    // Zero-fill touches this array only.
    arena.zero(&mut a).unwrap();
    assert!(arena.to_vec(&a).unwrap().iter().all(|&v| v == 0));
    arena.write(&mut b, &data).unwrap();
    assert_eq!(arena.to_vec(&b).unwrap(), data);

    // Offsets and addresses.
    let base = arena.backend().base_address();
    for array in [&a, &b] {
        let offset = arena.offset(array).unwrap();
        assert_eq!(offset % 256, 0);
        assert_eq!(arena.address(array).unwrap(), base + offset);
    }

    // Pitched rows: padding left alone, rows round-trip.
    let (width, height) = (300usize, 7usize);
    let mut image = arena.alloc_pitched::<f32>(width, height).unwrap();
    assert_eq!(image.pitch(), 1536);
    assert_eq!(arena.address(&image).unwrap() % 512, 0);
    let packed: Vec<f32> = (0..width * height).map(|i| i as f32 * 0.5).collect();
    arena.write_rows(&mut image, &packed).unwrap();
    let mut back = vec![f32::NAN; width * height];
    arena.read_rows(&image, &mut back).unwrap();
    assert_eq!(back, packed);

    // Errors are the same on every backend.
    assert_eq!(
        arena.write(&mut a, &data[..999]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 1000,
            found: 999
        }
    );
    assert_eq!(
        arena.read_range(&a, 999, &mut [0, 0]).unwrap_err(),
        ArenaError::OutOfRange {
            start: 999,
            len: 2,
            array_len: 1000
        }
    );
    assert_eq!(
        arena.write_rows(&mut image, &packed[1..]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: width * height,
            found: width * height - 1
        }
    );

    assert_eq!(arena.live(), 3);
    arena.free(a).unwrap();
    arena.free(b).unwrap();
    arena.free(image).unwrap();
    assert_eq!(arena.live(), 0);
}
