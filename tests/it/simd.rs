//! Every vector path this CPU runs (AVX2 forced on an AVX-512 machine too) builds the same
//! bits and gives the same answers as the scalar path, key by key and batched, for the
//! classic filter on multiply-shift, the blocked (512- and 1024-bit) and split-block filters and the
//! sectorized ones (batched), at every shape tried: k below, at and above a
//! register's eight lanes, in-cache and prefetching sizes, one block, power-of-two and other block
//! counts; and the lanes give the indexes of the family's own index function.

use bloomlab::hash::{HashFamily, Simd};
use bloomlab::structures::{BlockedFilter, FilterKind, Membership, Shape, SplitBlockFilter};
use bloomlab::{BloomFilter, HashScheme, KeySource};

const HASHES: [HashScheme; 2] = [HashScheme::MultiplyShift, HashScheme::DoubleHashing];

/// Present keys, then absent ones, in a count that is no multiple of any group size.
fn queries(keys: &KeySource, n: u64) -> Vec<u64> {
    keys.inserted(n)
        .step_by(5)
        .chain(keys.absent(n, 10_007))
        .collect()
}

/// A filter's bits and answers with its probes on `simd`: the first half of the keys
/// inserted key by key, the rest batched; the queries asked key by key and batched.
fn run<F: Membership>(
    mut filter: F,
    words: fn(&F) -> Vec<u64>,
    keys: &KeySource,
    n: u64,
) -> (Vec<u64>, Vec<bool>) {
    let inserted: Vec<u64> = keys.inserted(n).collect();
    let (first, rest) = inserted.split_at(inserted.len() / 2);
    first.iter().for_each(|&key| filter.insert(key));
    filter.insert_many(rest).unwrap();
    let asked = queries(keys, n);
    let one_by_one: Vec<bool> = asked.iter().map(|&key| filter.contains(key)).collect();
    let mut batched = vec![false; asked.len()];
    filter.contains_many(&asked, &mut batched).unwrap();
    assert_eq!(
        one_by_one, batched,
        "batched answers differ from key by key"
    );
    assert!(
        one_by_one[..first.len().div_ceil(5)].iter().all(|&a| a),
        "a false negative"
    );
    (words(&filter), one_by_one)
}

fn blocked(m: u64, k: u32, hash: HashScheme, simd: Simd) -> BlockedFilter {
    blocked_of(512, m, k, hash, simd)
}

/// A blocked filter of `bits`-bit blocks (blocked or blocked-1024) on `simd`.
fn blocked_of(bits: u64, m: u64, k: u32, hash: HashScheme, simd: Simd) -> BlockedFilter {
    let name = if bits == 512 {
        "blocked"
    } else {
        "blocked-1024"
    };
    let shape = Shape {
        kind: FilterKind::named(name).unwrap(),
        n: m / 10,
        m,
        k,
        hash,
        math: None,
        hash_seed: 9,
    };
    BlockedFilter::new(&shape, bits).unwrap().on(simd).unwrap()
}

#[test]
fn blocked_paths_set_the_same_bits_and_answer_alike() {
    let keys = KeySource::new(21);
    let shapes = [40_448, 512, 1 << 24, (1 << 24) + 512]
        .into_iter()
        .flat_map(|m| [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64].map(|k| (m, k)))
        .filter(|&(m, k)| m <= 40_448 || [7, 64].contains(&k));
    for (m, k) in shapes {
        for hash in HASHES {
            let n = m / (10 + u64::from(k) / 4);
            let words = |f: &BlockedFilter| f.words().to_vec();
            let scalar = run(blocked(m, k, hash, Simd::Scalar), words, &keys, n);
            for simd in Simd::available() {
                let on = run(blocked(m, k, hash, simd), words, &keys, n);
                assert!(on.0 == scalar.0, "{simd} bits differ: m={m} k={k} {hash}");
                assert!(
                    on.1 == scalar.1,
                    "{simd} answers differ: m={m} k={k} {hash}"
                );
            }
        }
    }
}

/// blocked-1024's kernel: its four-register test on AVX2 (and AVX-512) and its scalar twin
/// against the scalar path, every k below, at and above a register's lanes, in cache and
/// prefetching, one block and other block counts.
#[test]
fn blocked_1024_paths_set_the_same_bits_and_answer_alike() {
    let keys = KeySource::new(25);
    let shapes = [40_960, 1024, 1 << 24, (1 << 24) + 1024]
        .into_iter()
        .flat_map(|m| [1, 2, 3, 6, 7, 8, 9, 16, 17, 64].map(|k| (m, k)))
        .filter(|&(m, k)| m <= 40_960 || [7, 64].contains(&k));
    for (m, k) in shapes {
        for hash in HASHES {
            let n = m / (10 + u64::from(k) / 4);
            let words = |f: &BlockedFilter| f.words().to_vec();
            let scalar = run(blocked_of(1024, m, k, hash, Simd::Scalar), words, &keys, n);
            for simd in Simd::available() {
                let filter = blocked_of(1024, m, k, hash, simd);
                assert_eq!(filter.simd(), Some(simd));
                let on = run(filter, words, &keys, n);
                assert!(on.0 == scalar.0, "{simd} bits differ: m={m} k={k} {hash}");
                assert!(
                    on.1 == scalar.1,
                    "{simd} answers differ: m={m} k={k} {hash}"
                );
            }
        }
    }
}

#[test]
fn split_block_paths_set_the_same_bits_and_answer_alike() {
    let keys = KeySource::new(22);
    for m in [40_192, 256, 1 << 24, (1 << 24) + 256] {
        for hash in HASHES {
            let n = (m / 10).max(3);
            let build = |simd| SplitBlockFilter::new(m, hash, 9).unwrap().on(simd).unwrap();
            let words = |f: &SplitBlockFilter| f.words().to_vec();
            let scalar = run(build(Simd::Scalar), words, &keys, n);
            for simd in Simd::available() {
                let on = run(build(simd), words, &keys, n);
                assert!(on.0 == scalar.0, "{simd} bits differ: m={m} {hash}");
                assert!(on.1 == scalar.1, "{simd} answers differ: m={m} {hash}");
            }
        }
    }
}

#[test]
fn the_lanes_give_the_family_indexes() {
    let keys = KeySource::new(23);
    for hash in HASHES {
        for (k, m) in [(64, 512), (8, 32), (3, 1 << 20)] {
            let family = HashFamily::new(hash, k, m, 5);
            let lanes = family.lanes().unwrap();
            assert_eq!(lanes.pairs(), hash == HashScheme::DoubleHashing, "{hash}");
            for x in keys.inserted(1000) {
                let branchless = match lanes.pairs() {
                    true => lanes.key_of::<true>(x),
                    false => lanes.key_of::<false>(x),
                };
                assert_eq!(branchless, lanes.key(x), "{hash}");
                for i in 0..k as usize {
                    assert_eq!(
                        lanes.index(i, lanes.key(x)),
                        family.index(i, x),
                        "{hash} k={k} m={m}"
                    );
                }
            }
        }
    }
    let not_pow2 = HashFamily::new(HashScheme::MultiplyShift, 7, 1000, 5);
    assert!(not_pow2.lanes().is_none());
    assert!(
        HashFamily::new(HashScheme::Xxh3, 7, 512, 5)
            .lanes()
            .is_none()
    );
}

#[test]
fn filters_start_on_the_widest_path_and_refuse_a_path_they_cannot_take() {
    let best = Simd::best();
    assert_eq!(
        blocked(40_448, 7, HashScheme::MultiplyShift, best).simd(),
        Some(best)
    );
    let default = SplitBlockFilter::new(40_192, HashScheme::DoubleHashing, 1).unwrap();
    assert_eq!(default.simd(), Some(best));
    let bytes = SplitBlockFilter::new(40_192, HashScheme::Xxh3, 1).unwrap();
    assert_eq!(bytes.simd(), None);
    let refused = bytes.on(Simd::Scalar).unwrap_err().to_string();
    assert!(refused.contains("simd"), "{refused}");
    for simd in Simd::ALL.into_iter().filter(|s| !s.runs_here()) {
        let refused = SplitBlockFilter::new(256, HashScheme::MultiplyShift, 1)
            .unwrap()
            .on(simd);
        assert!(refused.is_err(), "{simd} accepted on a CPU without it");
    }
}

/// A filter's kernels pick among the whole blocks of its words and its probe-by-probe code
/// among `m / block_bits` blocks, and a pick `(h·n) >> 64` lies below n only for n >= 1: so
/// m that is not a whole number of blocks, at least one, is refused (1000 bits would be two
/// blocks to a kernel and one to the probes), naming m; one block works.
#[test]
fn a_filter_of_no_whole_block_or_a_part_block_is_refused() {
    for hash in HASHES {
        for m in [0, 1, 64, 511, 1000, 1600] {
            let shape = Shape {
                kind: FilterKind::named("blocked").unwrap(),
                n: 1,
                m,
                k: 7,
                hash,
                math: None,
                hash_seed: 9,
            };
            let refused = BlockedFilter::new(&shape, 512).unwrap_err().to_string();
            assert!(
                refused.contains("m") && refused.contains("512"),
                "blocked m={m}: {refused}"
            );
        }
        for m in [0, 1, 255, 480] {
            let refused = SplitBlockFilter::new(m, hash, 9).unwrap_err().to_string();
            assert!(refused.contains("256"), "split m={m} {hash}: {refused}");
        }
        let mut one = SplitBlockFilter::new(256, hash, 9).unwrap();
        one.insert(7);
        assert!(one.contains(7), "{hash}");
    }
}

/// The classic filter on multiply-shift: every vector path sets the bits of the scalar
/// loops and gives their answers, key by key and batched, for every count of live lanes
/// in a register and k beyond its lanes, m a power of two or not, in cache and prefetching.
#[test]
fn classic_paths_set_the_same_bits_and_answer_alike() {
    let keys = KeySource::new(24);
    let shapes = [40_000u64, 1 << 16, 1_000, (1 << 23) + 5]
        .into_iter()
        .flat_map(|m| [1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 64].map(|k| (m, k)))
        .filter(|&(m, k)| m < 1 << 20 || [7, 17].contains(&k));
    for (m, k) in shapes {
        let n = m / (10 + u64::from(k) / 4);
        let build = |simd| {
            BloomFilter::new(m, k, HashScheme::MultiplyShift, 9)
                .unwrap()
                .on(simd)
                .unwrap()
        };
        let words = |f: &BloomFilter| f.words().to_vec();
        let scalar = run(build(Simd::Scalar), words, &keys, n);
        for simd in Simd::available() {
            let filter = build(simd);
            assert_eq!(filter.simd(), simd);
            let on = run(filter, words, &keys, n);
            assert!(on.0 == scalar.0, "{simd} bits differ: m={m} k={k}");
            assert!(on.1 == scalar.1, "{simd} answers differ: m={m} k={k}");
        }
    }
}

#[test]
fn classic_filters_start_on_the_widest_path_and_refuse_one_they_cannot_take() {
    let filter = |hash| BloomFilter::new(40_000, 7, hash, 1).unwrap();
    assert_eq!(filter(HashScheme::MultiplyShift).simd(), Simd::best());
    assert_eq!(filter(HashScheme::DoubleHashing).simd(), Simd::Scalar);
    for simd in Simd::available().into_iter().filter(|&s| s != Simd::Scalar) {
        let refused = filter(HashScheme::Xxh3).on(simd).unwrap_err().to_string();
        assert!(refused.contains("simd"), "{refused}");
    }
    for simd in Simd::ALL.into_iter().filter(|s| !s.runs_here()) {
        assert!(filter(HashScheme::MultiplyShift).on(simd).is_err());
    }
}

/// The sectorized filters' batches answer as their keys asked one by one, on every lookup path
/// this CPU runs: the registered shapes (reg-blocked: one 64-bit block; cache-sector: 512 bits
/// in two groups) and others (three groups of one sector, two groups of two, eight of one), on
/// every hash scheme (multiply-shift and double hashing in the vector kernels, the others'
/// probes key by key), one block, a power-of-two and another block count, and a count of
/// keys that leaves a short last chunk on every path.
#[test]
fn sectorized_paths_answer_alike() {
    use bloomlab::structures::sectorized::{Lookup, SectorizedFilter};
    let keys = KeySource::new(21);
    let shapes: [(u64, u32, [u32; 3]); 5] = [
        (64, 1, [1, 7, 16]),
        (512, 2, [2, 8, 16]),
        (192, 3, [3, 9, 12]),
        (256, 2, [2, 6, 10]),
        (512, 8, [8, 16, 24]),
    ];
    for (block, groups, ks) in shapes {
        for (blocks, k, hash) in [1u64, 64, 1_001]
            .into_iter()
            .flat_map(|b| ks.map(|k| (b, k)))
            .flat_map(|(b, k)| HashScheme::ALL.map(|h| (b, k, h)))
        {
            let shape = Shape {
                kind: FilterKind::named("cache-sector").unwrap(),
                n: blocks * block / 10,
                m: blocks * block,
                k,
                hash,
                math: None,
                hash_seed: 13,
            };
            let mut filter = SectorizedFilter::new(&shape, block, groups).unwrap();
            keys.inserted(shape.n).for_each(|key| filter.insert(key));
            let asked: Vec<u64> = keys
                .inserted(shape.n)
                .chain(keys.absent(shape.n, 1_003))
                .collect();
            let single: Vec<bool> = asked.iter().map(|&key| filter.contains(key)).collect();
            assert!(
                single[..shape.n as usize].iter().all(|&a| a),
                "a false negative"
            );
            for path in Lookup::available() {
                let mut answers = vec![false; asked.len()];
                filter.contains_with(path, &asked, &mut answers).unwrap();
                assert_eq!(
                    answers, single,
                    "{block}/{groups} {blocks} blocks k={k} {hash} {path:?}"
                );
            }
        }
    }
}
