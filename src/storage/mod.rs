//! The `columnar` table access method and everything it keeps on disk.
//!
//! Pure modules (no PostgreSQL calls, covered by plain `cargo test`): `encoding`.

pub mod encoding;
