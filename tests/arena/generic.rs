//! One function over any backend, using only the verbs every backend has.
//! The host arena runs it here; the device tests run the same function on a
//! CUDA arena (they include this file).

use std::fmt::Debug;

use crate::support::address_of;
use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::Backend;

/// Allocates, writes, reads, zeroes, copies ranges of flat arrays and of
/// pitched rows, checks offsets and addresses and the length and range
/// errors, then frees everything; panics on a wrong value.
pub fn every_verb<B: Backend>(arena: &mut Arena<B>)
where
    B::Error: Debug + PartialEq,
{
    let mut a = arena.alloc::<u32>(1000).unwrap();
    let mut b = arena.alloc::<u32>(1000).unwrap();
    let data: Vec<u32> = (0..1000).map(|i| i * 3 + 1).collect();
    arena.write(&mut a, .., &data).unwrap();
    arena.write(&mut a, 10..13, &[7, 8, 9]).unwrap();
    let mut middle = [0u32; 5];
    arena.read(&a, 9..=13, &mut middle).unwrap();
    assert_eq!(middle, [28, 7, 8, 9, 40]);
    let mut whole = vec![0u32; 1000];
    arena.read(&a, .., &mut whole).unwrap();
    assert_eq!(&whole[..9], &data[..9]);
    assert_eq!(&whole[13..], &data[13..]);

    // Zero-fill touches this array only.
    arena.zero(&mut a).unwrap();
    assert!(arena.to_vec(&a).unwrap().iter().all(|&v| v == 0));
    arena.write(&mut b, .., &data).unwrap();
    assert_eq!(arena.to_vec(&b).unwrap(), data);

    // Offsets and addresses.
    let base = arena.backend().base_address();
    for array in [&a, &b] {
        let offset = arena.offset(array).unwrap();
        assert_eq!(offset % 256, 0);
        assert_eq!(address_of(arena, array).unwrap(), base + offset);
    }

    // Pitched rows: padding left alone, rows round-trip.
    let (width, height) = (300usize, 7usize);
    let mut image = arena.alloc_pitched::<f32>(width, height).unwrap();
    assert_eq!(image.pitch(), 1536);
    assert_eq!(address_of(arena, &image).unwrap() % 512, 0);
    let packed: Vec<f32> = (0..width * height).map(|i| i as f32 * 0.5).collect();
    arena.write(&mut image, .., &packed).unwrap();
    let mut back = vec![f32::NAN; width * height];
    arena.read(&image, .., &mut back).unwrap();
    assert_eq!(back, packed);
    // Rows 2 and 3 alone, and the rest untouched.
    let rows: Vec<f32> = (0..2 * width).map(|i| -(i as f32)).collect();
    arena.write(&mut image, 2..4, &rows).unwrap();
    let mut two = vec![0.0; 2 * width];
    arena.read(&image, 2..4, &mut two).unwrap();
    assert_eq!(two, rows);
    let all = arena.to_vec(&image).unwrap();
    assert_eq!(&all[..2 * width], &packed[..2 * width]);
    assert_eq!(&all[2 * width..4 * width], &rows[..]);
    assert_eq!(&all[4 * width..], &packed[4 * width..]);

    // Errors are the same on every backend.
    assert_eq!(
        arena.write(&mut a, .., &data[..999]).unwrap_err(),
        ArenaError::LengthMismatch {
            expected: 1000,
            found: 999
        }
    );
    assert_eq!(
        arena.read(&a, 999..1001, &mut [0, 0]).unwrap_err(),
        ArenaError::OutOfRange {
            start: 999,
            end: 1001,
            array_len: 1000
        }
    );
    assert_eq!(
        arena
            .read(&image, 6..8, &mut back[..2 * width])
            .unwrap_err(),
        ArenaError::OutOfRange {
            start: 6,
            end: 8,
            array_len: height
        }
    );
    assert_eq!(
        arena.write(&mut image, .., &packed[1..]).unwrap_err(),
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
