//! The batched, parallel and one-key-at-a-time paths build the same bits and give the same
//! answers (across many filters too), at a size where the batched paths prefetch (2^24 bits, above the 1 MiB below
//! which they do not) and at small odd sizes. Speed is reported by `bloomlab bench`, never
//! asserted here.

use bloomlab::structures::FilterKind;
use bloomlab::{BloomFilter, HashScheme, KeySource};

const LARGE: u64 = 1 << 24;

fn schemes() -> [HashScheme; 3] {
    [
        HashScheme::MultiplyShift,
        HashScheme::LowBits,
        HashScheme::DoubleHashing,
    ]
}

/// Present keys, then absent ones, in a count that is no multiple of any group size.
fn queries(keys: &KeySource, n: u64) -> Vec<u64> {
    let present = keys.inserted(n).step_by(7);
    present.chain(keys.absent(n, 20_011)).collect()
}

#[test]
fn every_blocked_and_classic_structure_batches_as_it_goes_one_key_at_a_time() {
    let keys = KeySource::new(11);
    for (name, k) in [
        ("classic", 7),
        ("blocked", 7),
        ("blocked-1024", 6),
        ("split-block", 8),
    ] {
        let kind = FilterKind::named(name).unwrap();
        let sizes_and_hashes = [LARGE, 10_007]
            .into_iter()
            .flat_map(|m| [HashScheme::MultiplyShift, HashScheme::DoubleHashing].map(|h| (m, h)));
        for (m, hash) in sizes_and_hashes {
            let n = m / 10;
            let build = || kind.build(n, m, k, hash, 4).unwrap();
            let (mut single, mut batched) = (build(), build());
            let inserted: Vec<u64> = keys.inserted(n).collect();
            inserted.iter().for_each(|&key| single.insert(key));
            batched.insert_many(&inserted).unwrap();
            assert_eq!(single.set_bits(), batched.set_bits(), "{name} {hash} m={m}");
            let asked = queries(&keys, n);
            let one_by_one: Vec<bool> = asked.iter().map(|&key| single.contains(key)).collect();
            let mut answers = vec![false; asked.len()];
            batched.contains_many(&asked, &mut answers).unwrap();
            assert_eq!(one_by_one, answers, "{name} {hash} m={m}");
            assert!(answers[..(n as usize).div_ceil(7)].iter().all(|&a| a));
            let absent_answers = &answers[(n as usize).div_ceil(7)..];
            assert!(
                absent_answers.iter().any(|&a| !a),
                "{name}: absent keys answered"
            );
        }
    }
}

#[test]
fn parallel_batched_and_sequential_insertion_set_the_same_bits() {
    let keys = KeySource::new(12);
    for hash in schemes() {
        for (m, k) in [(LARGE + 3, 7), (1_000, 3), (64, 1), (200_000, 13)] {
            let n = (m / 10).max(5);
            let build = || BloomFilter::new(m, k, hash, 6).unwrap();
            let (mut sequential, mut batched, mut parallel) = (build(), build(), build());
            keys.inserted(n).for_each(|key| sequential.insert(key));
            let inserted: Vec<u64> = keys.inserted(n).collect();
            batched.insert_batch(&inserted);
            parallel.insert_parallel(0..n, |c| keys.key(c));
            assert_eq!(sequential.words(), batched.words(), "{hash} m={m} k={k}");
            assert_eq!(sequential.words(), parallel.words(), "{hash} m={m} k={k}");
            let asked = queries(&keys, n);
            let mut answers = vec![false; asked.len()];
            parallel.contains_batch(&asked, &mut answers);
            let one_by_one: Vec<bool> = asked.iter().map(|&key| sequential.contains(key)).collect();
            assert_eq!(one_by_one, answers, "{hash} m={m} k={k}");
        }
    }
}

#[test]
fn bit_arrays_start_on_a_cache_line() {
    for m in [64, 512, 10_007, LARGE] {
        let filter = BloomFilter::new(m, 3, HashScheme::MultiplyShift, 1).unwrap();
        assert_eq!(filter.words().as_ptr() as usize % 64, 0, "m={m}");
        assert_eq!(filter.words().len() as u64, m.div_ceil(64));
    }
}

/// Queries spread over many filters, batched with the lines hinted first, answer as each
/// filter answers key by key: for the designs that hint and for one that does not (cuckoo),
/// in a count that is no multiple of the group.
#[test]
fn queries_across_many_filters_answer_as_each_filter_does() {
    use bloomlab::structures::contains_across;
    let keys = KeySource::new(13);
    for (name, k) in [
        ("classic", 7),
        ("blocked", 7),
        ("split-block", 8),
        ("cuckoo", 12),
    ] {
        let kind = FilterKind::named(name).unwrap();
        let (count, n) = (9u64, 1_000u64);
        let filters: Vec<_> = (0..count)
            .map(|f| {
                let mut filter = kind
                    .build(n, 10 * n + 13, k, HashScheme::MultiplyShift, f)
                    .unwrap();
                (f * n..(f + 1) * n).for_each(|c| filter.insert(keys.key(c)));
                filter
            })
            .collect();
        let asked: Vec<(u32, u64)> = (0..20_011u64)
            .map(|i| ((i * 7 % count) as u32, keys.key(i * 3 % (3 * count * n))))
            .collect();
        let (picks, queries): (Vec<u32>, Vec<u64>) = asked.iter().copied().unzip();
        let one_by_one: Vec<bool> = asked
            .iter()
            .map(|&(f, key)| filters[f as usize].contains(key))
            .collect();
        let mut answers = vec![false; asked.len()];
        contains_across(&filters, &picks, &queries, &mut answers).unwrap();
        assert_eq!(one_by_one, answers, "{name}");
        assert!(
            answers.iter().any(|&a| a) && answers.iter().any(|&a| !a),
            "{name}"
        );
        let bad_pick = [count as u32];
        let refused = contains_across(&filters, &bad_pick, &queries[..1], &mut answers[..1]);
        assert!(refused.is_err(), "{name}: a pick with no filter");
        let refused = contains_across(&filters, &picks[..1], &queries[..2], &mut answers[..2]);
        assert!(refused.is_err(), "{name}: fewer picks than keys");
    }
}

/// Query counts around the group sizes of the batched paths (16-key stages, 256-key groups).
const COUNTS: [usize; 10] = [0, 1, 15, 16, 17, 255, 256, 257, 511, 4_097];

/// Present keys then absent ones; `count` of them, from the middle, for each of [`COUNTS`].
fn slices(keys: &KeySource, n: u64) -> (Vec<u64>, impl Iterator<Item = std::ops::Range<usize>>) {
    let all: Vec<u64> = keys
        .inserted(n)
        .step_by(3)
        .take(3_000)
        .chain(keys.absent(n, 3_011))
        .collect();
    let mid = all.len() / 2;
    (
        all,
        COUNTS
            .into_iter()
            .map(move |count| mid.saturating_sub(count / 2)..mid.saturating_sub(count / 2) + count),
    )
}

/// The prefetching classic paths at every k shape `every_group` meets (fewer probes than a
/// group, a whole number of groups, a shorter last group) and at every query count around
/// the group size, an empty insert batch included.
#[test]
fn classic_batches_answer_as_key_by_key_at_every_k_shape_and_count() {
    let keys = KeySource::new(5);
    for hash in schemes() {
        for k in [1, 3, 4, 5, 8] {
            let m = (1 << 23) + 3;
            let n = m / 12;
            let build = || BloomFilter::new(m, k, hash, 3).unwrap();
            let (mut single, mut batched) = (build(), build());
            let inserted: Vec<u64> = keys.inserted(n).collect();
            inserted.iter().for_each(|&key| single.insert(key));
            batched.insert_batch(&[]);
            batched.insert_batch(&inserted);
            assert_eq!(single.words(), batched.words(), "{hash} k={k}");
            let (asked, ranges) = slices(&keys, n);
            for range in ranges {
                let asked = &asked[range];
                let one_by_one: Vec<bool> = asked.iter().map(|&key| single.contains(key)).collect();
                let mut answers = vec![false; asked.len()];
                batched.contains_batch(asked, &mut answers);
                assert_eq!(one_by_one, answers, "{hash} k={k} count={}", asked.len());
            }
        }
    }
}

/// The pipelined blocked paths with a power-of-two and another number of blocks, small and
/// large k, a byte hash beside bloomlab's own, inserts in batches of 17 and every query count
/// around the stage size.
#[test]
fn blocked_batches_answer_as_key_by_key_at_every_count() {
    let keys = KeySource::new(7);
    for (name, ks) in [("blocked", &[1, 3, 8][..]), ("split-block", &[8][..])] {
        let kind = FilterKind::named(name).unwrap();
        for m in [1 << 24, 3 << 22] {
            for hash in [HashScheme::MultiplyShift, HashScheme::Xxh3] {
                for &k in ks {
                    let n = m / 10;
                    let build = || kind.build(n, m, k, hash, 4).unwrap();
                    let (mut single, mut batched) = (build(), build());
                    let inserted: Vec<u64> = keys.inserted(n).collect();
                    inserted.iter().for_each(|&key| single.insert(key));
                    batched.insert_many(&[]).unwrap();
                    for chunk in inserted.chunks(17) {
                        batched.insert_many(chunk).unwrap();
                    }
                    assert_eq!(
                        single.set_bits(),
                        batched.set_bits(),
                        "{name} {hash} m={m} k={k}"
                    );
                    let (asked, ranges) = slices(&keys, n);
                    for range in ranges {
                        let asked = &asked[range];
                        let one_by_one: Vec<bool> =
                            asked.iter().map(|&key| single.contains(key)).collect();
                        let mut answers = vec![false; asked.len()];
                        batched.contains_many(asked, &mut answers).unwrap();
                        assert_eq!(one_by_one, answers, "{name} {hash} m={m} k={k}");
                    }
                }
            }
        }
    }
}
