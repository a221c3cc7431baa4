//! Turns a row range of a `ColumnBuilder` into a column chunk: consecutive encoded
//! vectors of `VECTOR_ROWS` rows, and the directory that finds them. Pure.

use super::column_builder::{ColumnBuilder, DenseSlice};
use super::directory::VectorEntry;
use super::encoding::{encode_vector, CompressionPolicy, VectorValues};
use super::layout::VECTOR_ROWS;
use super::zonemap::ZoneMap;
use std::ops::Range;

pub struct EncodedChunk {
    pub bytes: Vec<u8>,
    pub vectors: Vec<VectorEntry>,
    pub null_count: u64,
    /// Size of the values before encoding, for compression statistics.
    pub raw_bytes: u64,
}

/// Encodes rows `rows` of `b`. `bytes_zone` asks for byte-wise zone maps of byte-string
/// values (for types whose order is byte order, like text under "C" and bytea).
pub fn encode_chunk(
    b: &ColumnBuilder,
    rows: Range<usize>,
    policy: &CompressionPolicy,
    bytes_zone: bool,
) -> EncodedChunk {
    let mut bytes = Vec::new();
    let mut vectors = Vec::with_capacity(rows.len().div_ceil(VECTOR_ROWS));
    let (mut null_count, mut raw_bytes) = (0u64, 0u64);
    let mut dense_at = b.dense_index(rows.start);
    let mut rebased: Vec<u32> = Vec::new();
    let mut start = rows.start;
    while start < rows.end {
        let end = (start + VECTOR_ROWS).min(rows.end);
        let validity = b.validity(start..end);
        let non_null = validity.iter().filter(|v| **v).count();
        let nulls = (validity.len() - non_null) as u32;
        let dense = b.dense(dense_at..dense_at + non_null);
        dense_at += non_null;
        let (values, zone) = match dense {
            DenseSlice::Int(v) => (VectorValues::Int(v), ZoneMap::of_ints(v)),
            DenseSlice::Float32(v) => {
                (VectorValues::Float32(v), ZoneMap::of_floats(v.iter().map(|x| *x as f64)))
            }
            DenseSlice::Float64(v) => (VectorValues::Float64(v), ZoneMap::of_floats(v.iter().copied())),
            DenseSlice::Bytes { offsets, data } => {
                // Vectors take 32-bit offsets relative to their own first value.
                let base = offsets[0];
                rebased.clear();
                rebased.extend(offsets.iter().map(|o| (o - base) as u32));
                let slice = &data[base as usize..offsets[offsets.len() - 1] as usize];
                {
                    let zone = if bytes_zone {
                        ZoneMap::of_bytes(rebased.windows(2).map(|w| &slice[w[0] as usize..w[1] as usize]))
                    } else {
                        ZoneMap::None
                    };
                    (VectorValues::Bytes { offsets: &rebased, data: slice }, zone)
                }
            }
        };
        let offset = bytes.len() as u32;
        let validity = if nulls > 0 { Some(validity) } else { None };
        let info = encode_vector((end - start) as u32, validity, values, policy, &mut bytes);
        vectors.push(VectorEntry {
            rows: (end - start) as u32,
            offset,
            len: bytes.len() as u32 - offset,
            null_count: nulls,
            encoding: info.encoding as u8,
            compression: info.compression as u8,
            zone,
        });
        null_count += nulls as u64;
        raw_bytes += info.raw_bytes as u64;
        start = end;
    }
    EncodedChunk { bytes, vectors, null_count, raw_bytes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::{decode_vector, DecodedValues, DecodedVector, PhysicalKind};

    #[test]
    fn chunk_splits_into_vectors_that_decode_back() {
        let mut b = ColumnBuilder::new(PhysicalKind::Int);
        for i in 0..5000i64 {
            if i % 7 == 0 {
                b.push_null();
            } else {
                b.push_int(i * 3);
            }
        }
        let chunk = encode_chunk(&b, 100..5000, &CompressionPolicy::default(), false);
        assert_eq!(chunk.vectors.len(), 3);
        assert_eq!(chunk.vectors.iter().map(|v| v.rows).sum::<u32>(), 4900);
        let mut out = DecodedVector::default();
        let mut row = 100i64;
        for v in &chunk.vectors {
            let bytes = &chunk.bytes[v.offset as usize..(v.offset + v.len) as usize];
            decode_vector(bytes, PhysicalKind::Int, &mut out).unwrap();
            let DecodedValues::Int(values) = &out.values else { panic!() };
            for (k, value) in values.iter().enumerate() {
                let i = row + k as i64;
                let valid = out.validity.as_ref().is_none_or(|m| m[k]);
                assert_eq!(valid, i % 7 != 0);
                if valid {
                    assert_eq!(*value, i * 3);
                }
            }
            row += v.rows as i64;
        }
        assert_eq!(chunk.null_count, (100..5000).filter(|i| i % 7 == 0).count() as u64);
    }

    #[test]
    fn bytes_chunks_rebase_offsets() {
        let mut b = ColumnBuilder::new(PhysicalKind::Bytes);
        for i in 0..3000 {
            b.push_bytes(format!("value-{i}").as_bytes());
        }
        let chunk = encode_chunk(&b, 2500..3000, &CompressionPolicy::default(), true);
        let v = &chunk.vectors[0];
        let mut out = DecodedVector::default();
        decode_vector(&chunk.bytes[v.offset as usize..], PhysicalKind::Bytes, &mut out).unwrap();
        let DecodedValues::Bytes { offsets, data } = &out.values else { panic!() };
        assert_eq!(&data[offsets[0] as usize..offsets[1] as usize], b"value-2500");
        // Byte-wise zone map: "value-2500" .. "value-2999".
        let ZoneMap::Bytes { min, max } = v.zone else { panic!("{:?}", v.zone) };
        assert_eq!((min.as_slice(), max.as_slice()), (&b"value-2500"[..], &b"value-2999"[..]));
    }
}

#[cfg(test)]
mod null_tests {
    use super::*;
    use crate::storage::format::encoding::{decode_vector, DecodedVector, PhysicalKind};

    #[test]
    fn all_null_vectors_of_every_kind_round_trip() {
        for kind in [PhysicalKind::Int, PhysicalKind::Float32, PhysicalKind::Float64, PhysicalKind::Bytes] {
            for rows in [1usize, 5, 3000] {
                let mut b = ColumnBuilder::new(kind);
                for _ in 0..rows {
                    b.push_null();
                }
                let chunk = encode_chunk(&b, 0..rows, &CompressionPolicy::default(), true);
                let mut out = DecodedVector::default();
                for v in &chunk.vectors {
                    let bytes = &chunk.bytes[v.offset as usize..(v.offset + v.len) as usize];
                    decode_vector(bytes, kind, &mut out).unwrap_or_else(|e| panic!("{kind:?} {rows}: {e}"));
                    assert_eq!(out.rows, v.rows);
                    assert!(out.validity.as_ref().unwrap().iter().all(|ok| !ok));
                }
            }
        }
    }
}
