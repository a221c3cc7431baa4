//! A small row group's chunk metadata kept in its `row_group` row (column `chunks`, from
//! 0.4.0) instead of one `chunk` row per column. A single-row INSERT of a 5-column table
//! wrote six metadata rows and six index entries for one row group; now it writes one.
//! Readers parse it where they would have read the chunk rows (`row_groups`). Row groups
//! whose metadata is larger (many columns, many vectors) keep their chunk rows, so that a
//! plan that wants two columns of a wide table reads only theirs.
//!
//! The layout, after a format byte: the number of chunks, then per chunk its attribute
//! number, stream offset, length, NULL count, raw bytes and vector directory (as a
//! `chunk.directory` holds it), integers as LEB128 varints (zigzag for the attribute
//! number). Pure: no PostgreSQL calls.

/// Row groups whose inline metadata would be larger keep chunk rows: below the size at
/// which PostgreSQL would TOAST the `row_group` row.
pub const MAX_BYTES: usize = 1024;

const FORMAT: u8 = 1;

/// One chunk's metadata, its vector directory borrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineChunk<'a> {
    pub attnum: i16,
    pub offset: u64,
    pub length: u64,
    pub null_count: u64,
    pub raw_bytes: u64,
    pub directory: &'a [u8],
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at).ok_or("inline chunk metadata ends inside a number")?;
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("inline chunk metadata holds a number longer than 64 bits".into())
}

/// The inline form of `chunks`, or None when it would exceed `MAX_BYTES`.
pub fn encode<'a>(chunks: impl IntoIterator<Item = InlineChunk<'a>>) -> Option<Vec<u8>> {
    let mut out = vec![FORMAT];
    let mut body = Vec::new();
    let mut count = 0u64;
    for c in chunks {
        count += 1;
        put_varint(&mut body, ((c.attnum as i64) << 1 ^ (c.attnum as i64) >> 63) as u64);
        for v in [c.offset, c.length, c.null_count, c.raw_bytes, c.directory.len() as u64] {
            put_varint(&mut body, v);
        }
        body.extend_from_slice(c.directory);
        if body.len() > MAX_BYTES {
            return None;
        }
    }
    put_varint(&mut out, count);
    out.extend_from_slice(&body);
    (out.len() <= MAX_BYTES).then_some(out)
}

/// The chunks of an inline form written by `encode`.
pub fn decode(bytes: &[u8]) -> Result<Vec<InlineChunk<'_>>, String> {
    match bytes.first() {
        Some(&FORMAT) => {}
        Some(f) => return Err(format!("inline chunk metadata of unknown format {f}")),
        None => return Err("empty inline chunk metadata".into()),
    }
    let mut at = 1;
    let count = get_varint(bytes, &mut at)?;
    let mut out = Vec::with_capacity(count.min(4096) as usize);
    for _ in 0..count {
        let z = get_varint(bytes, &mut at)?;
        let attnum = i16::try_from((z >> 1) as i64 ^ -((z & 1) as i64))
            .map_err(|_| "inline chunk metadata with an attribute number out of range")?;
        let mut next = || get_varint(bytes, &mut at);
        let (offset, length, null_count, raw_bytes, dir_len) = (next()?, next()?, next()?, next()?, next()?);
        let end = at
            .checked_add(usize::try_from(dir_len).map_err(|_| "directory length out of range")?)
            .filter(|&e| e <= bytes.len())
            .ok_or("inline chunk metadata ends inside a vector directory")?;
        out.push(InlineChunk { attnum, offset, length, null_count, raw_bytes, directory: &bytes[at..end] });
        at = end;
    }
    if at != bytes.len() {
        return Err("inline chunk metadata has bytes after its last chunk".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn chunk(attnum: i16, offset: u64, directory: &[u8]) -> InlineChunk<'_> {
        InlineChunk { attnum, offset, length: 300, null_count: 2, raw_bytes: 4000, directory }
    }

    #[test]
    fn round_trips_and_stays_small() {
        let dirs: Vec<Vec<u8>> = (0..5).map(|i| vec![i as u8; 30]).collect();
        let chunks: Vec<_> = (0..5).map(|i| chunk(i as i16, (1 << 40) + i as u64 * 300, &dirs[i])).collect();
        let bytes = encode(chunks.clone()).unwrap();
        assert_eq!(decode(&bytes).unwrap(), chunks);
        // 5 × (30-byte directory + 6-byte offset + a few one-byte numbers): not 5 rows.
        assert!(bytes.len() < 5 * 45, "{}", bytes.len());
        assert_eq!(decode(&encode([]).unwrap()).unwrap(), vec![]);
    }

    #[test]
    fn too_large_is_refused() {
        let dir = vec![7u8; MAX_BYTES];
        assert_eq!(encode([chunk(1, 0, &dir)]), None);
        let dirs: Vec<Vec<u8>> = (0..40).map(|_| vec![1u8; 30]).collect();
        assert_eq!(encode(dirs.iter().enumerate().map(|(i, d)| chunk(i as i16, 0, d))), None);
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let dir = [9u8; 20];
        let bytes = encode([chunk(3, 12345, &dir), chunk(0, 99, &dir)]).unwrap();
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let mut other = bytes.clone();
        other[0] = 2;
        assert!(decode(&other).is_err());
        assert!(decode(&[FORMAT, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
    }

    proptest! {
        #[test]
        fn prop_any_chunks_round_trip(
            cs in proptest::collection::vec(
                (any::<i16>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(),
                 proptest::collection::vec(any::<u8>(), 0..40)),
                0..12)
        ) {
            let chunks: Vec<InlineChunk> = cs.iter().map(|(a, o, l, n, r, d)| InlineChunk {
                attnum: *a, offset: *o, length: *l, null_count: *n, raw_bytes: *r, directory: d,
            }).collect();
            if let Some(bytes) = encode(chunks.clone()) {
                prop_assert!(bytes.len() <= MAX_BYTES);
                prop_assert_eq!(decode(&bytes).unwrap(), chunks);
            }
        }

        #[test]
        fn prop_any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }
    }
}
