//! Column encodings. Each codec lives in its own file and treats its input bytes as
//! untrusted: a decoder returns `CorruptData` for truncated or inconsistent bytes and
//! never panics or reads out of bounds.

pub mod bitpack;

use std::fmt;

/// Stored bytes that cannot be decoded. The pgrx layer reports it as SQLSTATE XX001.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptData(pub &'static str);

impl fmt::Display for CorruptData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "corrupt columnar data: {}", self.0)
    }
}

impl std::error::Error for CorruptData {}
