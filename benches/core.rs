//! Speed of the core: insert and query at an in-cache size (key by key, and batched through
//! `contains_many`), and the exact rate at the largest sizes the theory module promises to
//! handle in under a second. `bloomlab bench` is the side-by-side comparison with the peers.

use std::hint::black_box;

use bloomlab::structures::{FilterKind, count_present};
use bloomlab::theory::fpr_exact;
use bloomlab::{BloomFilter, HashScheme, KeySource};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// A registered structure by name.
fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

fn filter_ops(c: &mut Criterion) {
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let mut group = c.benchmark_group("filter m=40000");
    group.throughput(Throughput::Elements(n));
    for k in [1u32, 4, 7, 16] {
        group.bench_with_input(BenchmarkId::new("insert", k), &k, |b, &k| {
            b.iter(|| {
                let mut filter = BloomFilter::new(40_000, k, HashScheme::MultiplyShift, 2).unwrap();
                keys.inserted(n).for_each(|key| filter.insert(key));
                black_box(filter.set_bits())
            })
        });
        let mut filter = BloomFilter::new(40_000, k, HashScheme::MultiplyShift, 2).unwrap();
        keys.inserted(n).for_each(|key| filter.insert(key));
        group.bench_with_input(BenchmarkId::new("query absent", k), &k, |b, _| {
            b.iter(|| {
                keys.absent(n, n)
                    .filter(|&key| filter.contains(key))
                    .count()
            })
        });
    }
    group.finish();
}

/// Every structure behind the filter interface (so through the same dynamic dispatch), at
/// 10 bits per key in cache: absent queries.
fn structures(c: &mut Criterion) {
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let mut group = c.benchmark_group("structures 10 bits/key n=4000");
    group.throughput(Throughput::Elements(n));
    for (kind, k) in [
        (FilterKind::CLASSIC, 7),
        (named("blocked"), 7),
        (named("split-block"), 8),
        (named("counting"), 7),
        (named("cuckoo"), 10),
    ] {
        let m = kind.layout(10 * n, k).unwrap();
        let mut filter = kind.build(n, m, k, HashScheme::MultiplyShift, 2).unwrap();
        keys.inserted(n).for_each(|key| filter.insert(key));
        group.bench_function(BenchmarkId::new("query absent", &kind), |b| {
            b.iter(|| {
                keys.absent(n, n)
                    .filter(|&key| filter.contains(key))
                    .count()
            })
        });
        let absent: Vec<u64> = keys.absent(n, n).collect();
        group.bench_function(BenchmarkId::new("query absent batched", &kind), |b| {
            b.iter(|| count_present(&*filter, &absent).unwrap())
        });
    }
    group.finish();
}

/// The blocked (512-bit, k = 7; multiply-shift and double hashing) and split-block filters on
/// every vector path this CPU runs (scalar, AVX2, AVX-512), in cache at 10 bits per key: absent queries key by key and
/// batched, and batched inserts of the same keys again.
fn block_paths(c: &mut Criterion) {
    use bloomlab::hash::Simd;
    use bloomlab::structures::{BlockedFilter, Membership, Shape, SplitBlockFilter};
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let inserted: Vec<u64> = keys.inserted(n).collect();
    let absent: Vec<u64> = keys.absent(n, n).collect();
    let mut group = c.benchmark_group("block paths 10 bits/key n=4000");
    group.throughput(Throughput::Elements(n));
    for simd in Simd::available() {
        let shape = Shape {
            kind: named("blocked"),
            n,
            m: named("blocked").layout(10 * n, 7).unwrap(),
            k: 7,
            hash: HashScheme::MultiplyShift,
            math: None,
            hash_seed: 2,
        };
        let blocked = BlockedFilter::new(&shape, 512).unwrap().on(simd).unwrap();
        let double = Shape {
            hash: HashScheme::DoubleHashing,
            ..shape.clone()
        };
        let blocked_double = BlockedFilter::new(&double, 512).unwrap().on(simd).unwrap();
        let split_m = named("split-block").layout(10 * n, 8).unwrap();
        let split = SplitBlockFilter::new(split_m, HashScheme::MultiplyShift, 2)
            .unwrap()
            .on(simd)
            .unwrap();
        let filters: [(&str, Box<dyn Membership>); 3] = [
            ("blocked", Box::new(blocked)),
            ("blocked double-hashing", Box::new(blocked_double)),
            ("split-block", Box::new(split)),
        ];
        for (name, mut filter) in filters {
            filter.insert_many(&inserted).unwrap();
            let id = |what: &str| BenchmarkId::new(format!("{name} {what}"), simd);
            group.bench_function(id("query absent"), |b| {
                b.iter(|| absent.iter().filter(|&&key| filter.contains(key)).count())
            });
            group.bench_function(id("query absent batched"), |b| {
                b.iter(|| count_present(&*filter, &absent).unwrap())
            });
            group.bench_function(id("insert"), |b| {
                b.iter(|| {
                    inserted
                        .iter()
                        .for_each(|&key| filter.insert(black_box(key)))
                })
            });
            group.bench_function(id("insert batched"), |b| {
                b.iter(|| filter.insert_many(black_box(&inserted)).unwrap())
            });
        }
    }
    group.finish();
}

/// The classic filter (k = 7, m = 40,000, multiply-shift) on every vector path this CPU
/// runs: inserts key by key and batched (the k products in vector lanes), present queries
/// batched, and present and absent queries key by key.
fn classic_paths(c: &mut Criterion) {
    use bloomlab::hash::Simd;
    use bloomlab::structures::Membership;
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let inserted: Vec<u64> = keys.inserted(n).collect();
    let absent: Vec<u64> = keys.absent(n, n).collect();
    let mut group = c.benchmark_group("classic paths m=40000 k=7");
    group.throughput(Throughput::Elements(n));
    for simd in Simd::available() {
        let mut filter = BloomFilter::new(40_000, 7, HashScheme::MultiplyShift, 2)
            .unwrap()
            .on(simd)
            .unwrap();
        filter.insert_many(&inserted).unwrap();
        group.bench_function(BenchmarkId::new("insert", simd), |b| {
            b.iter(|| {
                inserted
                    .iter()
                    .for_each(|&key| filter.insert(black_box(key)))
            })
        });
        group.bench_function(BenchmarkId::new("insert batched", simd), |b| {
            b.iter(|| filter.insert_many(black_box(&inserted)).unwrap())
        });
        group.bench_function(BenchmarkId::new("query present batched", simd), |b| {
            b.iter(|| count_present(&filter, black_box(&inserted)).unwrap())
        });
        for (name, asked) in [("query present", &inserted), ("query absent", &absent)] {
            group.bench_function(BenchmarkId::new(name, simd), |b| {
                b.iter(|| {
                    asked
                        .iter()
                        .filter(|&&key| filter.contains(black_box(key)))
                        .count()
                })
            });
        }
    }
    group.finish();
}

fn exact_rate(c: &mut Criterion) {
    let mut group = c.benchmark_group("fpr_exact");
    group.sample_size(10);
    for (n, m, k) in [
        (4_000u64, 40_000u64, 7u32),
        (100_000_000, 100_000_000, 10),
        (15_625_000, 100_000_000, 64),
    ] {
        group.bench_function(format!("n={n} m={m} k={k}"), |b| {
            b.iter(|| fpr_exact(black_box(n), black_box(m), black_box(k)))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    filter_ops,
    structures,
    block_paths,
    classic_paths,
    exact_rate
);
criterion_main!(benches);
