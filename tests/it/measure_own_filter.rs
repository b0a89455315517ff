//! Runs the tests of `examples/measure_own_filter.rs` (a user's own filter measured in a
//! `#[test]`) with the suite, so that the example cannot rot.

#[allow(dead_code)]
#[path = "../../examples/measure_own_filter.rs"]
mod example;
