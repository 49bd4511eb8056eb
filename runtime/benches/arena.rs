//! Allocating and giving back one array of a host arena: an
//! allocate+free pair before dropping frees.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gpu_aligned::arena::Arena;

fn pairs(c: &mut Criterion) {
    let mut group = c.benchmark_group("host arena, one array per step");
    for len in [16usize, 4096] {
        let mut arena = Arena::host(1 << 20).expect("host arena");
        let _keep = arena.alloc::<f32>(100).expect("room");
        group.bench_function(BenchmarkId::new("alloc+free", len), |b| {
            b.iter(|| {
                let a = arena.alloc::<f32>(std::hint::black_box(len)).expect("room");
                arena.free(a).expect("ours");
            });
        });
    }
    group.finish();
}

criterion_group!(benches, pairs);
criterion_main!(benches);
