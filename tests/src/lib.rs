//! Cross-crate test suites live in `tests/tests/`.
