//! A column chunk's vector directory: where each vector starts inside the chunk, how
//! many rows and NULLs it holds, and its zone map. Stored in the chunk's metadata row
//! (so pruning reads no data pages) and parsed as untrusted bytes. Pure.

use super::encoding::CorruptData;
use super::zonemap::{ZoneBytes, ZoneMap};

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

/// Fixed part of an entry: rows, offset, len, nulls (u32 each), encoding, compression,
/// zone map kind. The zone map's bounds follow (16 bytes, or two length-prefixed strings).
const ENTRY_FIXED: usize = 4 * 4 + 2 + 1;
const DIR_VERSION: u8 = 1;

pub fn encode(entries: &[VectorEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + entries.len() * (ENTRY_FIXED + 16));
    out.push(DIR_VERSION);
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for e in entries {
        for v in [e.rows, e.offset, e.len, e.null_count] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.push(e.encoding);
        out.push(e.compression);
        let fixed = |out: &mut Vec<u8>, tag: u8, a: u64, b: u64| {
            out.push(tag);
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        };
        match e.zone {
            ZoneMap::None => out.push(0),
            ZoneMap::Int { min, max } => fixed(&mut out, 1, min as u64, max as u64),
            ZoneMap::Float { min, max } => fixed(&mut out, 2, min.to_bits(), max.to_bits()),
            ZoneMap::Bytes { min, max } => {
                out.push(3);
                for bound in [min, max] {
                    out.push(bound.as_slice().len() as u8);
                    out.extend_from_slice(bound.as_slice());
                }
            }
        }
    }
    out
}

/// A cursor over untrusted directory bytes.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CorruptData> {
        if self.0.len() < n {
            return Err(CorruptData("vector directory truncated"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, CorruptData> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, CorruptData> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, CorruptData> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bytes_bound(&mut self) -> Result<ZoneBytes, CorruptData> {
        let len = self.u8()? as usize;
        ZoneBytes::new(self.take(len)?).ok_or(CorruptData("zone map bound too long"))
    }
}

/// Parses a directory; `chunk_len` bounds the vectors' byte ranges.
pub fn decode(bytes: &[u8], chunk_len: u64) -> Result<Vec<VectorEntry>, CorruptData> {
    let mut c = Cursor(bytes);
    if c.u8()? != DIR_VERSION {
        return Err(CorruptData("unknown vector directory version"));
    }
    let count = c.u32()? as usize;
    if count > c.0.len() / ENTRY_FIXED {
        return Err(CorruptData("vector directory length mismatch"));
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let (rows, offset, len, null_count) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
        let (encoding, compression) = (c.u8()?, c.u8()?);
        let zone = match c.u8()? {
            0 => ZoneMap::None,
            1 => ZoneMap::Int { min: c.u64()? as i64, max: c.u64()? as i64 },
            2 => ZoneMap::Float { min: f64::from_bits(c.u64()?), max: f64::from_bits(c.u64()?) },
            3 => ZoneMap::Bytes { min: c.bytes_bound()?, max: c.bytes_bound()? },
            _ => return Err(CorruptData("unknown zone map kind")),
        };
        if offset as u64 + len as u64 > chunk_len || null_count > rows {
            return Err(CorruptData("vector directory entry out of range"));
        }
        entries.push(VectorEntry { rows, offset, len, null_count, encoding, compression, zone });
    }
    if !c.0.is_empty() {
        return Err(CorruptData("vector directory length mismatch"));
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
            VectorEntry {
                rows: 3,
                offset: 128,
                len: 0,
                null_count: 0,
                encoding: 5,
                compression: 0,
                zone: ZoneMap::of_bytes([&b"alpha"[..], b"omega"]),
            },
        ]
    }

    #[test]
    fn round_trip() {
        let d = sample();
        assert_eq!(decode(&encode(&d), 128).unwrap(), d);
        assert!(matches!(d[3].zone, ZoneMap::Bytes { .. }));
        assert_eq!(decode(&encode(&[]), 0).unwrap(), vec![]);
    }

    #[test]
    fn rejects_truncation_and_out_of_range() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 128).is_err(), "cut {cut}");
        }
        assert!(decode(&bytes, 127).is_err(), "vector past the chunk end");
        let mut long = bytes.clone();
        long.push(0);
        assert!(decode(&long, 128).is_err(), "trailing bytes");
    }
}
