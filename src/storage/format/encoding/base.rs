//! The base types every codec shares: the error for corrupt input, the limits that bound
//! decoding, the physical kinds of values, fixed-width values as bit patterns, and
//! reusable decode buffers.

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

/// Most rows one vector may hold. Decoders reject larger claims, which bounds every
/// allocation driven by a row or value count.
pub const MAX_VECTOR_ROWS: u32 = 65536;

/// Most bytes a decoded `Bytes` vector may hold (PostgreSQL's MaxAllocSize is 1 GiB - 1,
/// so a larger vector could not be handed to the executor anyway). Run-length and
/// dictionary decoding check this before expanding, so a small corrupt input cannot make
/// the decoder allocate without limit.
pub const MAX_DECODED_BYTES: usize = 1 << 30;

/// How values are laid out physically, independent of the SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PhysicalKind {
    /// int2/int4/int8/bool/date/time/timestamp/timestamptz/oid ..., widened to i64.
    Int = 0,
    Float32 = 1,
    Float64 = 2,
    /// Any variable-length value as raw bytes.
    Bytes = 3,
}

impl PhysicalKind {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::Int,
            1 => Self::Float32,
            2 => Self::Float64,
            3 => Self::Bytes,
            _ => return None,
        })
    }
}

/// A fixed-width value that codecs handle through its bit pattern, so floats round-trip
/// bit-exactly (NaN payloads, -0.0) and equality means "same bits".
pub trait Fixed: Copy + Default + PartialEq + fmt::Debug + 'static {
    /// Bytes per value in the plain representation.
    const BYTES: usize;
    /// Bits of the representation that can be non-zero (64 or 32).
    const BITS: u32 = (Self::BYTES * 8) as u32;
    /// The bit pattern, zero-extended to 64 bits (`i64` is reinterpreted as `u64`).
    fn to_bits64(self) -> u64;
    /// Inverse of `to_bits64`; higher bits beyond `BITS` are ignored.
    fn from_bits64(bits: u64) -> Self;
}

impl Fixed for i64 {
    const BYTES: usize = 8;
    #[inline]
    fn to_bits64(self) -> u64 {
        self as u64
    }
    #[inline]
    fn from_bits64(bits: u64) -> Self {
        bits as i64
    }
}

impl Fixed for f64 {
    const BYTES: usize = 8;
    #[inline]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
    #[inline]
    fn from_bits64(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl Fixed for f32 {
    const BYTES: usize = 4;
    #[inline]
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
    #[inline]
    fn from_bits64(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}

/// Reusable decode buffers, so decoding vector after vector does not allocate.
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    pub u64s: Vec<u64>,
    /// Dictionary codes.
    pub codes: Vec<u32>,
    pub u32s: Vec<u32>,
    pub lens: Vec<u32>,
    pub bytes: Vec<u8>,
    /// Integers decoded on the way to other values (scaled numerics' mantissas).
    pub ints: Vec<i64>,
}

/// Reads one fixed-width little-endian value from exactly `T::BYTES` bytes.
#[inline]
pub(crate) fn read_fixed<T: Fixed>(bytes: &[u8]) -> T {
    let mut b = [0u8; 8];
    b[..T::BYTES].copy_from_slice(&bytes[..T::BYTES]);
    T::from_bits64(u64::from_le_bytes(b))
}

/// Appends the `T::BYTES` little-endian bytes of `v`.
#[inline]
pub(crate) fn write_fixed<T: Fixed>(v: T, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_bits64().to_le_bytes()[..T::BYTES]);
}
