//! Allocating and giving back one array of a host arena, in the same run:
//! an allocate+free pair, and an allocate+drop pair (the dropped array's
//! bytes come back at the next allocation). `docs/RESULTS.md` has the
//! figures, beside the allocate+free pair before dropping freed.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gpu_aligned::arena::Arena;

fn pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("host arena, one array per step");
    for len in [16usize, 4096] {
        let mut arena = Arena::host(1 << 20).expect("host arena");
        // One array stays in front, as in a program that keeps some.
        let _kept = arena.alloc::<f32>(100).expect("room");
        group.bench_function(BenchmarkId::new("alloc+free", len), |b| {
            b.iter(|| {
                let a = arena.alloc::<f32>(std::hint::black_box(len)).expect("room");
                arena.free(a).expect("ours");
            });
        });
        group.bench_function(BenchmarkId::new("alloc+drop", len), |b| {
            b.iter(|| {
                let a = arena.alloc::<f32>(std::hint::black_box(len)).expect("room");
                drop(std::hint::black_box(a));
            });
        });
    }
    group.finish();
}

criterion_group!(benches, pairs);
criterion_main!(benches);
