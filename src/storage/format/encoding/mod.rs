//! Column encodings. Each codec lives in its own file and treats its input bytes as
//! untrusted: a decoder returns `CorruptData` for truncated or inconsistent bytes and
//! never panics or reads out of bounds.
//!
//! Layering, from the ground up:
//! - `base`: the types every codec shares (`CorruptData`, `PhysicalKind`, `Fixed`,
//!   `Scratch`, the size limits).
//! - `codec`: what a codec is, the function table each codec file ends with (estimate,
//!   encode, decode, point open) and the statistics its estimate reads.
//! - the codecs (`plain`, `bitpack`, `delta`, `rle`, `dictionary`, `bytesplit`,
//!   `gorilla`, `alp`, `lagdelta`, `scaled_numeric`, `short_images`) turn a dense slice of non-null values into bytes and
//!   back. They do not store the value count: the caller passes it to `decode`, which
//!   appends exactly that many values and returns how many input bytes it consumed.
//!   `count` is the caller's to bound (the vector layer reads it from a checked header,
//!   at most `MAX_VECTOR_ROWS`); everything read from the input itself is checked.
//! - `table`: the codec table (one line per codec, with its stored `EncodingId`) and the
//!   one place that picks a codec from the data.
//! - `compress` wraps lz4 / zstd with bounded decompression; `frames` is zstd in
//!   independent frames, for reads of one value of high-cardinality text.
//! - `vector` frames one vector (header, checksum, validity bitmap, payload), chooses
//!   the compression, and is the API the rest of the extension uses; it decodes into a
//!   `decoded::DecodedVector`; `point` opens a stored vector for single-row reads.
//!
//! This file only declares the modules and hands their names on.

pub mod alp;
pub mod alp_rd_lanes;
pub mod base;
pub mod bitpack;
pub mod bytesplit;
pub mod codec;
pub mod compress;
pub mod decoded;
pub mod delta;
pub mod dictionary;
pub mod frames;
pub mod gorilla;
pub mod lagdelta;
pub mod lanes;
pub mod paged;
pub mod plain;
pub mod point;
pub mod rle;
pub mod scaled_numeric;
pub mod short_images;
pub mod stripe_rows;
pub mod table;
pub mod vector;

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod vector_tests;
// Size and speed measurements on TSBS-like data, kept with the benchmarks: the size
// bounds are unit tests; the timings run only with the `measure` feature
// (bench/README.md).
#[cfg(test)]
#[path = "../../../../bench/encoding/measure.rs"]
mod measure;

pub use base::{CorruptData, PhysicalKind};
pub use codec::{EncodingGoal, VectorValues};
pub use compress::Compression;
pub use decoded::{DecodedValues, DecodedVector, Dictionary, ScaledNumerics, ShortImages};
pub use table::EncodingId;
pub use vector::{decode_vector, decode_vector_rows, encode_vector, CompressionPolicy, EncodedVectorInfo};
