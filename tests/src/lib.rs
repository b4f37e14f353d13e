//! End-to-end test crate; the tests live in this directory as [[test]] targets.
