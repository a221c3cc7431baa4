//! A column chunk's vector directory: where each vector starts inside the chunk, how
//! many rows and NULLs it holds, and its zone map. Stored in the chunk's metadata row
//! (so pruning reads no data pages) and parsed as untrusted bytes. Pure.

use super::encoding::CorruptData;
use super::zonemap::ZoneMap;

#[derive(Debug, Clone, PartialEq)]
pub struct VectorEntry {
    pub rows: u32,
    /// Byte offset of the vector inside its chunk.
    pub offset: u32,
    pub len: u32,
    pub null_count: u32,
    /// `encoding::EncodingId` and `encoding::Compression` of the vector, for statistics.
    pub encoding: u8,
    pub compression: u8,
    pub zone: ZoneMap,
}

const ENTRY_LEN: usize = 4 * 4 + 2 + 1 + 16;
const DIR_VERSION: u8 = 1;

pub fn encode(entries: &[VectorEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + entries.len() * ENTRY_LEN);
    out.push(DIR_VERSION);
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for e in entries {
        for v in [e.rows, e.offset, e.len, e.null_count] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(e.encoding);
        out.push(e.compression);
        let (tag, a, b) = match e.zone {
            ZoneMap::None => (0u8, 0u64, 0u64),
            ZoneMap::Int { min, max } => (1, min as u64, max as u64),
            ZoneMap::Float { min, max } => (2, min.to_bits(), max.to_bits()),
        };
        out.push(tag);
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    out
}

/// Parses a directory; `chunk_len` bounds the vectors' byte ranges.
pub fn decode(bytes: &[u8], chunk_len: u64) -> Result<Vec<VectorEntry>, CorruptData> {
    if bytes.first() != Some(&DIR_VERSION) {
        return Err(CorruptData("unknown vector directory version"));
    }
    let count = bytes
        .get(1..5)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
        .ok_or(CorruptData("vector directory truncated"))?;
    let body = &bytes[5..];
    if body.len() != count.checked_mul(ENTRY_LEN).ok_or(CorruptData("vector count"))? {
        return Err(CorruptData("vector directory length mismatch"));
    }
    let mut entries = Vec::with_capacity(count);
    for raw in body.chunks_exact(ENTRY_LEN) {
        let u32_at = |i: usize| u32::from_le_bytes(raw[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(raw[i..i + 8].try_into().unwrap());
        let (a, b) = (u64_at(19), u64_at(27));
        let zone = match raw[18] {
            0 => ZoneMap::None,
            1 => ZoneMap::Int { min: a as i64, max: b as i64 },
            2 => ZoneMap::Float { min: f64::from_bits(a), max: f64::from_bits(b) },
            _ => return Err(CorruptData("unknown zone map kind")),
        };
        let e = VectorEntry {
            rows: u32_at(0),
            offset: u32_at(4),
            len: u32_at(8),
            null_count: u32_at(12),
            encoding: raw[16],
            compression: raw[17],
            zone,
        };
        if e.offset as u64 + e.len as u64 > chunk_len || e.null_count > e.rows {
            return Err(CorruptData("vector directory entry out of range"));
        }
        entries.push(e);
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<VectorEntry> {
        vec![
            VectorEntry {
                rows: 2048,
                offset: 0,
                len: 100,
                null_count: 0,
                encoding: 1,
                compression: 0,
                zone: ZoneMap::Int { min: -5, max: 9 },
            },
            VectorEntry {
                rows: 10,
                offset: 100,
                len: 20,
                null_count: 10,
                encoding: 0,
                compression: 2,
                zone: ZoneMap::None,
            },
            VectorEntry {
                rows: 7,
                offset: 120,
                len: 8,
                null_count: 1,
                encoding: 8,
                compression: 1,
                zone: ZoneMap::Float { min: -0.5, max: 2.0 },
            },
        ]
    }

    #[test]
    fn round_trip() {
        let d = sample();
        assert_eq!(decode(&encode(&d), 128).unwrap(), d);
        assert_eq!(decode(&encode(&[]), 0).unwrap(), vec![]);
    }

    #[test]
    fn rejects_truncation_and_out_of_range() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 128).is_err(), "cut {cut}");
        }
        assert!(decode(&bytes, 127).is_err(), "vector past the chunk end");
    }
}
