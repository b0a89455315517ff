//! The filter's invariants: no false negatives, determinism, the key source's guarantees.

use bloomlab::pipeline::measurement::Setup;
use bloomlab::pipeline::run_trial;
use bloomlab::structures::{FilterKind, Spec};
use bloomlab::{BloomFilter, HashScheme, KeySource};
use proptest::prelude::*;

fn scheme() -> impl Strategy<Value = HashScheme> {
    prop_oneof![
        Just(HashScheme::MultiplyShift),
        Just(HashScheme::LowBits),
        Just(HashScheme::DoubleHashing),
    ]
}

proptest! {
    #[test]
    fn no_false_negatives(
        n in 1u64..2_000,
        m in 1u64..50_000,
        k in 1u32..=64,
        seed in any::<u64>(),
        hash_seed in any::<u64>(),
        hash in scheme(),
    ) {
        let mut filter = BloomFilter::new(m, k, hash, hash_seed).unwrap();
        let keys = KeySource::new(seed);
        keys.inserted(n).for_each(|key| filter.insert(key));
        prop_assert!(keys.inserted(n).all(|key| filter.contains(key)));
        prop_assert!(filter.set_bits() <= m.min(n * k as u64));
    }

    /// A power-of-two m takes a shift where other sizes multiply: the indexes are the same.
    #[test]
    fn power_of_two_sizes_shift_to_the_indexes_they_would_multiply_to(
        log_m in 1u32..=36,
        i in 0usize..64,
        x in any::<u64>(),
        seed in any::<u64>(),
    ) {
        use bloomlab::hash::{HashFamily, IndexPath};
        let m = 1u64 << log_m;
        let shifting = HashFamily::new(HashScheme::MultiplyShift, 64, m, seed);
        prop_assert_eq!(shifting.path(), IndexPath::MultiplyShiftPow2);
        prop_assert_eq!(shifting.index(i, x), shifting.multiply_shift(i, x));
        let shifting = HashFamily::new(HashScheme::DoubleHashing, 64, m, seed);
        prop_assert_eq!(shifting.path(), IndexPath::DoubleHashingPow2);
        prop_assert_eq!(shifting.index(i, x), shifting.double_hashing(i, x));
    }

    /// Other sizes, 1 among them, keep the multiplication.
    #[test]
    fn other_sizes_multiply(m in 1u64..=1 << 36, i in 0usize..64, x in any::<u64>(), seed in any::<u64>()) {
        use bloomlab::hash::{HashFamily, IndexPath};
        prop_assume!(m == 1 || !m.is_power_of_two());
        let multiplying = HashFamily::new(HashScheme::MultiplyShift, 64, m, seed);
        prop_assert_eq!(multiplying.path(), IndexPath::MultiplyShift);
        prop_assert!(multiplying.index(i, x) < m);
        let multiplying = HashFamily::new(HashScheme::DoubleHashing, 64, m, seed);
        prop_assert_eq!(multiplying.path(), IndexPath::DoubleHashing);
        prop_assert!(multiplying.index(i, x) < m);
    }

    #[test]
    fn inserted_and_absent_keys_never_meet(seed in any::<u64>(), n in 1u64..500, q in 1u64..500) {
        let keys = KeySource::new(seed);
        let inserted: std::collections::HashSet<u64> = keys.inserted(n).collect();
        prop_assert_eq!(inserted.len() as u64, n);
        prop_assert!(keys.absent(n, q).all(|key| !inserted.contains(&key)));
    }
}

#[test]
fn a_trial_is_a_pure_function_of_its_setup() {
    let setup = Setup::new(
        Spec::shape(FilterKind::CLASSIC, 30_000, 5).hashed(HashScheme::MultiplyShift, 4),
        3_000,
        20_000,
        9,
    );
    assert_eq!(run_trial(&setup).unwrap(), run_trial(&setup).unwrap());
    let mut reseeded = setup.clone();
    reseeded.spec.hash_seed = 5;
    let reseeded = run_trial(&reseeded).unwrap();
    assert_ne!(run_trial(&setup).unwrap(), reseeded);
}

#[test]
fn sizes_outside_the_range_are_refused_not_allocated() {
    assert!(BloomFilter::new(0, 4, HashScheme::MultiplyShift, 1).is_err());
    assert!(BloomFilter::new(1 << 40, 4, HashScheme::MultiplyShift, 1).is_err());
    assert!(BloomFilter::new(100, 0, HashScheme::MultiplyShift, 1).is_err());
    assert!(BloomFilter::new(100, 65, HashScheme::MultiplyShift, 1).is_err());
}

#[test]
fn parallel_and_sequential_trials_agree_exactly() {
    use bloomlab::pipeline::Threads;
    use bloomlab::pipeline::run_trial_with;
    for hash in [
        HashScheme::MultiplyShift,
        HashScheme::LowBits,
        HashScheme::DoubleHashing,
    ] {
        let setup = Setup::new(
            Spec::shape(FilterKind::CLASSIC, 480_000, 7).hashed(hash, 8),
            50_000,
            50_000,
            3,
        );
        assert_eq!(
            run_trial_with(&setup, Threads::Sequential).unwrap(),
            run_trial_with(&setup, Threads::Parallel).unwrap(),
            "{hash}"
        );
    }
}
