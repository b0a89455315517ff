//! Speed of the core: insert and query at an in-cache size (key by key, and batched through
//! `contains_many`), and the exact rate at the largest sizes the theory module promises to
//! handle in under a second. `bloomlab bench` is the side-by-side comparison with the peers.

use std::hint::black_box;

use bloomlab::pipeline::timing::Passes;
use bloomlab::structures::{FilterKind, count_present};
use bloomlab::theory::fpr_exact;
use bloomlab::{BloomFilter, HashScheme, KeySource};

/// A registered structure by name.
fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

fn filter_ops(c: &Bench) {
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let group = c.group("filter m=40000", n);
    for k in [1u32, 4, 7, 16] {
        group.bench(format!("insert/{k}"), |b| {
            b.iter(|| {
                let mut filter = BloomFilter::new(40_000, k, HashScheme::MultiplyShift, 2).unwrap();
                keys.inserted(n).for_each(|key| filter.insert(key));
                black_box(filter.set_bits())
            })
        });
        let mut filter = BloomFilter::new(40_000, k, HashScheme::MultiplyShift, 2).unwrap();
        keys.inserted(n).for_each(|key| filter.insert(key));
        group.bench(format!("query absent/{k}"), |b| {
            b.iter(|| {
                keys.absent(n, n)
                    .filter(|&key| filter.contains(key))
                    .count()
            })
        });
    }
}

/// Every structure behind the filter interface (so through the same dynamic dispatch), at
/// 10 bits per key in cache: absent queries.
fn structures(c: &Bench) {
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let group = c.group("structures 10 bits/key n=4000", n);
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
        group.bench(format!("query absent/{kind}"), |b| {
            b.iter(|| {
                keys.absent(n, n)
                    .filter(|&key| filter.contains(key))
                    .count()
            })
        });
        let absent: Vec<u64> = keys.absent(n, n).collect();
        group.bench(format!("query absent batched/{kind}"), |b| {
            b.iter(|| count_present(&*filter, &absent).unwrap())
        });
    }
}

/// The blocked (512-bit, k = 7; multiply-shift and double hashing) and split-block filters on
/// every vector path this CPU runs (scalar, AVX2, AVX-512), in cache at 10 bits per key: absent queries key by key and
/// batched, and batched inserts of the same keys again.
fn block_paths(c: &Bench) {
    use bloomlab::hash::Simd;
    use bloomlab::structures::{BlockedFilter, Membership, Shape, SplitBlockFilter};
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let inserted: Vec<u64> = keys.inserted(n).collect();
    let absent: Vec<u64> = keys.absent(n, n).collect();
    let group = c.group("block paths 10 bits/key n=4000", n);
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
            let id = |what: &str| format!("{name} {what}/{simd}");
            group.bench(id("query absent"), |b| {
                b.iter(|| absent.iter().filter(|&&key| filter.contains(key)).count())
            });
            group.bench(id("query absent batched"), |b| {
                b.iter(|| count_present(&*filter, &absent).unwrap())
            });
            group.bench(id("insert"), |b| {
                b.iter(|| {
                    inserted
                        .iter()
                        .for_each(|&key| filter.insert(black_box(key)))
                })
            });
            group.bench(id("insert batched"), |b| {
                b.iter(|| filter.insert_many(black_box(&inserted)).unwrap())
            });
        }
    }
}

/// The classic filter (k = 7, m = 40,000, multiply-shift) on every vector path this CPU
/// runs: inserts key by key and batched (the k products in vector lanes), present queries
/// batched, and present and absent queries key by key.
fn classic_paths(c: &Bench) {
    use bloomlab::hash::Simd;
    use bloomlab::structures::Membership;
    let keys = KeySource::new(1);
    let n = 4_000u64;
    let inserted: Vec<u64> = keys.inserted(n).collect();
    let absent: Vec<u64> = keys.absent(n, n).collect();
    let group = c.group("classic paths m=40000 k=7", n);
    for simd in Simd::available() {
        let mut filter = BloomFilter::new(40_000, 7, HashScheme::MultiplyShift, 2)
            .unwrap()
            .on(simd)
            .unwrap();
        filter.insert_many(&inserted).unwrap();
        group.bench(format!("insert/{simd}"), |b| {
            b.iter(|| {
                inserted
                    .iter()
                    .for_each(|&key| filter.insert(black_box(key)))
            })
        });
        group.bench(format!("insert batched/{simd}"), |b| {
            b.iter(|| filter.insert_many(black_box(&inserted)).unwrap())
        });
        group.bench(format!("query present batched/{simd}"), |b| {
            b.iter(|| count_present(&filter, black_box(&inserted)).unwrap())
        });
        for (name, asked) in [("query present", &inserted), ("query absent", &absent)] {
            group.bench(format!("{name}/{simd}"), |b| {
                b.iter(|| {
                    asked
                        .iter()
                        .filter(|&&key| filter.contains(black_box(key)))
                        .count()
                })
            });
        }
    }
}

fn exact_rate(c: &Bench) {
    let group = c.group("fpr_exact", 1);
    for (n, m, k) in [
        (4_000u64, 40_000u64, 7u32),
        (100_000_000, 100_000_000, 10),
        (15_625_000, 100_000_000, 64),
    ] {
        group.bench(format!("n={n} m={m} k={k}"), |b| {
            b.iter(|| fpr_exact(black_box(n), black_box(m), black_box(k)))
        });
    }
}

/// A group of timings, printed one line each: `group/name: median ns per element
/// [fastest, slowest]` over [`PASSES`] passes of at least [`PASS_NS`] each. `cargo bench
/// --bench core -- TEXT` times only the names that contain TEXT.
struct Bench {
    only: Option<String>,
}

/// One group's name and the elements each call handles.
struct Group<'a> {
    bench: &'a Bench,
    name: &'static str,
    elements: u64,
}

/// What a timing closure is handed: [`Bencher::iter`] times its argument.
struct Bencher {
    ns_per_call: Vec<f64>,
}

const PASSES: usize = 21;
const PASS_NS: f64 = 5e6;

impl Bench {
    fn group(&self, name: &'static str, elements: u64) -> Group<'_> {
        Group {
            bench: self,
            name,
            elements,
        }
    }
}

impl Group<'_> {
    fn bench(&self, name: impl std::fmt::Display, mut time: impl FnMut(&mut Bencher)) {
        let name = format!("{}/{name}", self.name);
        if (self.bench.only.as_ref()).is_some_and(|only| !name.contains(only.as_str())) {
            return;
        }
        let mut bencher = Bencher {
            ns_per_call: Vec::new(),
        };
        time(&mut bencher);
        let per = |ns: f64| ns / self.elements as f64;
        let passes = Passes::of(bencher.ns_per_call);
        println!(
            "{name}: {:.2} ns [{:.2}, {:.2}]",
            per(passes.median),
            per(passes.low),
            per(passes.high)
        );
    }
}

impl Bencher {
    /// Calls `f` in passes of at least [`PASS_NS`] (as many calls as that takes, found
    /// from one warming call) and keeps each pass's ns per call.
    fn iter<R>(&mut self, mut f: impl FnMut() -> R) {
        let started = std::time::Instant::now();
        black_box(f());
        let once = started.elapsed().as_nanos().max(1) as f64;
        let calls = (PASS_NS / once).ceil() as u32;
        for _ in 0..PASSES {
            let started = std::time::Instant::now();
            for _ in 0..calls {
                black_box(f());
            }
            (self.ns_per_call).push(started.elapsed().as_nanos() as f64 / f64::from(calls));
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; the first other word is the filter.
    let only = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let bench = Bench { only };
    for group in [
        filter_ops,
        structures,
        block_paths,
        classic_paths,
        exact_rate,
    ] {
        group(&bench);
    }
}
