//! Storage tests.
