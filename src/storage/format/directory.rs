//! A column chunk's vector directory: where each vector starts inside the chunk, how
//! many rows and NULLs it holds, and its zone map. Stored in the chunk's metadata row
//! (so pruning reads no data pages) and parsed as untrusted bytes. Pure.
//!
//! In memory a directory stays in its stored form (`Directory`), checked once and read
//! an entry at a time: a new connection's first plan of a table parses the directories
//! of every row group of the columns it filters on, and decoding each entry into a
//! `VectorEntry` (whose zone map holds two inline byte-string bounds) took three times
//! the memory, most of that plan's time going to page faults of fresh memory.

use std::cmp::Ordering;

use super::encoding::CorruptData;
use super::metadata_image::{put_bytes, ImageCursor, ImageSink};
use super::zonemap::{pg_float_cmp, ZoneBytes, ZoneMap, ZONE_BYTES};

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
        write_zone(&mut out, &e.zone);
    }
    out
}

/// Appends `zone` as an entry holds it: a kind byte, then 16 bytes of bounds, or two
/// length-prefixed strings.
pub fn write_zone(out: &mut impl ImageSink, zone: &ZoneMap) {
    let mut fixed = |tag: u8, a: u64, b: u64| {
        out.put(&[tag]);
        out.put(&a.to_le_bytes());
        out.put(&b.to_le_bytes());
    };
    match *zone {
        ZoneMap::None => out.put(&[0]),
        ZoneMap::Int { min, max } => fixed(1, min as u64, max as u64),
        ZoneMap::Float { min, max } => fixed(2, min.to_bits(), max.to_bits()),
        ZoneMap::Bytes { min, max } => {
            out.put(&[3]);
            for bound in [min, max] {
                out.put(&[bound.as_slice().len() as u8]);
                out.put(bound.as_slice());
            }
        }
    }
}

/// The zone map at the cursor, as `write_zone` wrote it.
pub fn read_zone(c: &mut ImageCursor<'_>) -> Result<ZoneMap, CorruptData> {
    let mut at = Cursor(c.0);
    let zone = at.zone()?;
    c.0 = at.0;
    Ok(zone)
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
    fn zone(&mut self) -> Result<ZoneMap, CorruptData> {
        Ok(match self.u8()? {
            0 => ZoneMap::None,
            1 => ZoneMap::Int { min: self.u64()? as i64, max: self.u64()? as i64 },
            2 => ZoneMap::Float { min: f64::from_bits(self.u64()?), max: f64::from_bits(self.u64()?) },
            3 => ZoneMap::Bytes { min: self.bytes_bound()?, max: self.bytes_bound()? },
            _ => return Err(CorruptData("unknown zone map kind")),
        })
    }
}

/// Parses a directory into its entries; `chunk_len` bounds the vectors' byte ranges.
#[cfg(test)]
pub fn decode(bytes: &[u8], chunk_len: u64) -> Result<Vec<VectorEntry>, CorruptData> {
    let mut c = Cursor(bytes);
    let count = read_header(&mut c)?;
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let e = read_entry(&mut c)?;
        if e.offset as u64 + e.len as u64 > chunk_len || e.null_count > e.rows {
            return Err(CorruptData("vector directory entry out of range"));
        }
        entries.push(e);
    }
    if !c.0.is_empty() {
        return Err(CorruptData("vector directory length mismatch"));
    }
    Ok(entries)
}

/// Bytes before the first entry: the version and the entry count.
const DIR_HEADER: usize = 5;

/// A checked directory in its stored form (`encode`'s), read an entry at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct Directory {
    bytes: DirectoryBytes,
    /// Where each entry starts in `bytes`, unless all are `stride` bytes long.
    starts: Option<Box<[u32]>>,
    stride: u32,
    count: u32,
    /// The entries' rows, summed.
    rows: u64,
}

/// A directory's stored bytes: its own, or where another process's image of it lies
/// (`read_image_in_place`).
#[derive(Clone)]
enum DirectoryBytes {
    Owned(Box<[u8]>),
    InPlace(*const u8, usize),
}

// SAFETY: the bytes `InPlace` points at are never written while the directory lives
// (`read_image_in_place`'s contract), so reading them from any thread is sound.
unsafe impl Send for DirectoryBytes {}
// SAFETY: as for Send: shared references only read them.
unsafe impl Sync for DirectoryBytes {}

impl std::ops::Deref for DirectoryBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            DirectoryBytes::Owned(b) => b,
            // SAFETY: `read_image_in_place`'s caller keeps these `len` bytes in place and
            // unchanged for the directory's life.
            DirectoryBytes::InPlace(at, len) => unsafe { std::slice::from_raw_parts(*at, *len) },
        }
    }
}

impl PartialEq for DirectoryBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for DirectoryBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// The zone map of a chunk as its entries are checked: the merge of theirs (`ZoneMap::
/// merge` over all), with byte-string bounds kept as places in the directory until the
/// end.
enum Merged {
    Empty,
    Int(i64, i64),
    Float(f64, f64),
    Bytes((usize, usize), (usize, usize)),
    Mixed,
}

impl Directory {
    /// Checks `bytes` (a stored directory; `chunk_len` bounds the vectors' byte ranges)
    /// and keeps them; also returns the chunk's zone map, its vectors' merged.
    pub fn parse(bytes: &[u8], chunk_len: u64) -> Result<(Directory, ZoneMap), CorruptData> {
        let mut c = Cursor(bytes);
        let count = read_header(&mut c)?;
        let mut starts: Vec<u32> = Vec::with_capacity(count);
        let mut rows_total = 0u64;
        let mut merged = Merged::Empty;
        for _ in 0..count {
            let start = bytes.len() - c.0.len();
            let (rows, offset, len, null_count) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
            c.take(2)?;
            if offset as u64 + len as u64 > chunk_len || null_count > rows {
                return Err(CorruptData("vector directory entry out of range"));
            }
            rows_total += rows as u64;
            merged = match c.u8()? {
                0 => merged,
                1 => {
                    let (lo, hi) = (c.u64()? as i64, c.u64()? as i64);
                    match merged {
                        Merged::Empty => Merged::Int(lo, hi),
                        Merged::Int(a, b) => Merged::Int(a.min(lo), b.max(hi)),
                        _ => Merged::Mixed,
                    }
                }
                2 => {
                    let (lo, hi) = (f64::from_bits(c.u64()?), f64::from_bits(c.u64()?));
                    match merged {
                        Merged::Empty => Merged::Float(lo, hi),
                        Merged::Float(a, b) => Merged::Float(
                            if pg_float_cmp(lo, a) == Ordering::Less { lo } else { a },
                            if pg_float_cmp(hi, b) == Ordering::Greater { hi } else { b },
                        ),
                        _ => Merged::Mixed,
                    }
                }
                3 => {
                    let mut bound = || -> Result<(usize, usize), CorruptData> {
                        let len = c.u8()? as usize;
                        if len > ZONE_BYTES {
                            return Err(CorruptData("zone map bound too long"));
                        }
                        let at = bytes.len() - c.0.len();
                        c.take(len)?;
                        Ok((at, len))
                    };
                    let (lo, hi) = (bound()?, bound()?);
                    let at = |(s, n): (usize, usize)| &bytes[s..s + n];
                    match merged {
                        Merged::Empty => Merged::Bytes(lo, hi),
                        Merged::Bytes(a, b) => Merged::Bytes(
                            if at(lo) < at(a) { lo } else { a },
                            if at(hi) > at(b) { hi } else { b },
                        ),
                        _ => Merged::Mixed,
                    }
                }
                _ => return Err(CorruptData("unknown zone map kind")),
            };
            starts.push(start as u32);
        }
        if !c.0.is_empty() {
            return Err(CorruptData("vector directory length mismatch"));
        }
        let at = |(s, n): (usize, usize)| ZoneBytes::new(&bytes[s..s + n]).expect("bound length checked");
        let zone = match merged {
            Merged::Empty | Merged::Mixed => ZoneMap::None,
            Merged::Int(min, max) => ZoneMap::Int { min, max },
            Merged::Float(min, max) => ZoneMap::Float { min, max },
            Merged::Bytes(min, max) => ZoneMap::Bytes { min: at(min), max: at(max) },
        };
        // Entries of one size (no byte-string zone maps, no all-NULL vector) need no
        // table of where each starts.
        let stride = (bytes.len() - DIR_HEADER).checked_div(count).unwrap_or(0);
        let uniform = starts.iter().enumerate().all(|(i, &s)| s as usize == DIR_HEADER + i * stride)
            && DIR_HEADER + count * stride == bytes.len();
        let dir = Directory {
            bytes: DirectoryBytes::Owned(bytes.into()),
            starts: (!uniform).then(|| starts.into_boxed_slice()),
            stride: stride as u32,
            count: count as u32,
            rows: rows_total,
        };
        Ok((dir, zone))
    }

    /// The directory of `entries` (of a chunk `chunk_len` bytes long), as written.
    pub fn of(entries: &[VectorEntry], chunk_len: u64) -> (Directory, ZoneMap) {
        Directory::parse(&encode(entries), chunk_len).expect("a directory encoded here is well formed")
    }

    /// The stored form.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The entries' rows, summed.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Entry `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<VectorEntry> {
        if i >= self.len() {
            return None;
        }
        Some(read_entry(&mut Cursor(&self.bytes[self.start(i)..])).expect("directory checked when parsed"))
    }

    /// Where entry `i` (< len) starts in `bytes`.
    fn start(&self, i: usize) -> usize {
        match &self.starts {
            Some(s) => s[i] as usize,
            None => DIR_HEADER + i * self.stride as usize,
        }
    }

    /// Entry `i`'s rows, offset and length, if there is one: the fixed start of the entry
    /// only (a fetch locating a row's vectors needs no zone map, which for text is two
    /// strings to copy).
    pub fn place(&self, i: usize) -> Option<(u32, u32, u32)> {
        if i >= self.len() {
            return None;
        }
        // Parsing checked that every entry has its fixed part.
        let start = self.start(i);
        let word =
            |k: usize| u32::from_le_bytes(self.bytes[start + 4 * k..start + 4 * k + 4].try_into().unwrap());
        Some((word(0), word(1), word(2)))
    }

    pub fn iter(&self) -> impl Iterator<Item = VectorEntry> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("i < len"))
    }

    /// Appends the directory as it is in memory, checked, for `read_image` in another
    /// process: a parallel scan's leader hands its parsed directories to its workers,
    /// which then neither read the chunk rows nor check every entry again.
    pub fn write_image(&self, out: &mut impl ImageSink) {
        put_bytes(out, &self.bytes);
        for v in [self.count, self.stride] {
            out.put(&v.to_le_bytes());
        }
        out.put(&self.rows.to_le_bytes());
        match &self.starts {
            None => out.put(&[0]),
            Some(starts) => {
                out.put(&[1]);
                for s in starts.iter() {
                    out.put(&s.to_le_bytes());
                }
            }
        }
    }

    /// The directory `write_image` wrote, at the cursor. Its entries are not checked
    /// again (the writer's were); that each begins within the bytes is.
    pub fn read_image(c: &mut ImageCursor<'_>) -> Result<Directory, CorruptData> {
        let (stored, dir) = Self::read_image_parts(c)?;
        Ok(Directory { bytes: DirectoryBytes::Owned(stored.into()), ..dir })
    }

    /// `read_image` of a directory whose stored bytes stay where the image holds them:
    /// a parallel worker's copy of its leader's directories would fill new pages, a
    /// page fault each, where the image lies in shared memory already mapped.
    ///
    /// # Safety
    /// The image's bytes stay where they are, unchanged, for as long as the directory or
    /// any clone of it lives.
    pub unsafe fn read_image_in_place(c: &mut ImageCursor<'_>) -> Result<Directory, CorruptData> {
        let (stored, dir) = Self::read_image_parts(c)?;
        Ok(Directory { bytes: DirectoryBytes::InPlace(stored.as_ptr(), stored.len()), ..dir })
    }

    /// The stored bytes of the directory at the cursor, and the directory with no bytes.
    fn read_image_parts<'a>(c: &mut ImageCursor<'a>) -> Result<(&'a [u8], Directory), CorruptData> {
        let stored = c.bytes()?;
        let len = stored.len();
        let (count, stride, rows) = (c.u32()?, c.u32()?, c.u64()?);
        let starts = match c.u8()? {
            0 => None,
            1 => {
                let raw = c.take(count as usize * 4)?;
                Some(
                    raw.chunks_exact(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                        .collect::<Box<[u32]>>(),
                )
            }
            _ => return Err(CorruptData("directory image malformed")),
        };
        let fits = |start: usize| start >= DIR_HEADER && start + ENTRY_FIXED <= len;
        let well_formed = match &starts {
            None => {
                DIR_HEADER + count as usize * stride as usize == len
                    && (count == 0 || stride as usize >= ENTRY_FIXED)
            }
            Some(s) => s.iter().all(|&start| fits(start as usize)),
        };
        if !well_formed {
            return Err(CorruptData("directory image malformed"));
        }
        let dir = Directory { bytes: DirectoryBytes::Owned(Box::default()), starts, stride, count, rows };
        Ok((stored, dir))
    }
}

/// The entry count of the directory at the cursor (its version checked), which must
/// be plausible for the bytes left.
fn read_header(c: &mut Cursor<'_>) -> Result<usize, CorruptData> {
    if c.u8()? != DIR_VERSION {
        return Err(CorruptData("unknown vector directory version"));
    }
    let count = c.u32()? as usize;
    if count > c.0.len() / ENTRY_FIXED {
        return Err(CorruptData("vector directory length mismatch"));
    }
    Ok(count)
}

/// One entry at the cursor (its range not checked).
fn read_entry(c: &mut Cursor<'_>) -> Result<VectorEntry, CorruptData> {
    let (rows, offset, len, null_count) = (c.u32()?, c.u32()?, c.u32()?, c.u32()?);
    let (encoding, compression) = (c.u8()?, c.u8()?);
    let zone = c.zone()?;
    Ok(VectorEntry { rows, offset, len, null_count, encoding, compression, zone })
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
    fn an_image_reads_back_as_the_directory() {
        let uniform: Vec<VectorEntry> =
            sample().into_iter().filter(|e| matches!(e.zone, ZoneMap::Int { .. })).collect();
        for entries in [sample(), uniform, vec![]] {
            let (dir, _) = Directory::parse(&encode(&entries), 128).unwrap();
            let mut image = Vec::new();
            dir.write_image(&mut image);
            image.push(42);
            let mut c = ImageCursor(&image);
            assert_eq!(Directory::read_image(&mut c).unwrap(), dir);
            assert_eq!(c.0, [42], "the bytes after it are left");
            // SAFETY: `image` outlives the directory read from it in place.
            let in_place = unsafe { Directory::read_image_in_place(&mut ImageCursor(&image)) }.unwrap();
            assert_eq!(in_place, dir);
            assert_eq!(in_place.as_bytes().as_ptr(), image[4..].as_ptr(), "not copied");
            assert_eq!(in_place.iter().collect::<Vec<_>>(), dir.iter().collect::<Vec<_>>());
            for cut in 0..image.len() - 1 {
                assert!(Directory::read_image(&mut ImageCursor(&image[..cut])).is_err(), "cut {cut}");
            }
        }
        // An entry that would begin past the bytes is refused.
        let (dir, _) = Directory::parse(&encode(&sample()), 128).unwrap();
        assert!(dir.starts.is_some());
        let mut bad = dir.clone();
        bad.starts.as_mut().unwrap()[1] = dir.bytes.len() as u32;
        let mut image = Vec::new();
        bad.write_image(&mut image);
        assert!(Directory::read_image(&mut ImageCursor(&image)).is_err());
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

    /// What `Directory::parse` must agree with: the entries `decode` gives, and their
    /// zone maps merged one by one.
    fn check_parse(entries: &[VectorEntry], chunk_len: u64) {
        let bytes = encode(entries);
        let (dir, zone) = Directory::parse(&bytes, chunk_len).unwrap();
        // Debug forms: NaN bounds are equal to themselves only bit for bit.
        assert_eq!(
            format!("{:?}", dir.iter().collect::<Vec<_>>()),
            format!("{:?}", decode(&bytes, chunk_len).unwrap())
        );
        assert_eq!(dir.len(), entries.len());
        assert_eq!(dir.get(entries.len()), None);
        for (i, e) in entries.iter().enumerate() {
            assert_eq!(dir.place(i), Some((e.rows, e.offset, e.len)), "entry {i}");
        }
        assert_eq!(dir.place(entries.len()), None);
        assert_eq!(dir.rows(), entries.iter().map(|e| e.rows as u64).sum::<u64>());
        assert_eq!(format!("{zone:?}"), format!("{:?}", merged(entries)));
        assert_eq!(dir.as_bytes(), &bytes[..]);
    }

    /// The entries' zone maps merged; none when they are of different kinds (a fold of
    /// `ZoneMap::merge` keeps whatever follows a mix).
    fn merged(entries: &[VectorEntry]) -> ZoneMap {
        let kind = |z: &ZoneMap| std::mem::discriminant(z);
        let kinds: std::collections::HashSet<_> =
            entries.iter().map(|e| kind(&e.zone)).filter(|&k| k != kind(&ZoneMap::None)).collect();
        if kinds.len() > 1 {
            return ZoneMap::None;
        }
        entries.iter().fold(ZoneMap::None, |z, e| z.merge(e.zone))
    }

    #[test]
    fn parsed_directories_read_as_decoded() {
        // Mixed sizes: an entry table.
        check_parse(&sample(), 128);
        // One size (integer zones): read by stride.
        let ints: Vec<VectorEntry> = (0..50u32)
            .map(|i| VectorEntry {
                rows: 2048,
                offset: i * 100,
                len: 100,
                null_count: i % 3,
                encoding: 1,
                compression: 0,
                zone: ZoneMap::Int { min: -(i as i64), max: i as i64 * 7 },
            })
            .collect();
        check_parse(&ints, 5000);
        assert!(Directory::parse(&encode(&ints), 5000).unwrap().0.starts.is_none());
        // Text zones, NaN among floats, all-NULL vectors, an empty directory.
        let mut texts = ints.clone();
        for (i, e) in texts.iter_mut().enumerate() {
            e.zone = match i % 4 {
                0 => ZoneMap::of_bytes([format!("host_{i}").as_bytes(), b"zz"]),
                1 => ZoneMap::None,
                _ => ZoneMap::of_bytes([&b""[..], b"a"]),
            };
        }
        check_parse(&texts, 5000);
        let mut floats = ints.clone();
        for (i, e) in floats.iter_mut().enumerate() {
            e.zone = ZoneMap::Float { min: -(i as f64), max: if i == 7 { f64::NAN } else { i as f64 } };
        }
        check_parse(&floats, 5000);
        check_parse(&[], 0);
    }

    #[test]
    fn parse_rejects_what_decode_rejects() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert!(Directory::parse(&bytes[..cut], 128).is_err(), "cut {cut}");
        }
        assert!(Directory::parse(&bytes, 127).is_err(), "vector past the chunk end");
        let mut long = bytes.clone();
        long.push(0);
        assert!(Directory::parse(&long, 128).is_err(), "trailing bytes");
        let mut kind = encode(&sample()[..1]);
        kind[DIR_HEADER + 18] = 9;
        assert!(Directory::parse(&kind, 128).is_err(), "unknown zone kind");
    }

    proptest::proptest! {
        #[test]
        fn parse_agrees_with_decode(
            specs in proptest::collection::vec((0u32..3000, 0u32..100, 0u8..4, proptest::num::i64::ANY, proptest::collection::vec(proptest::num::u8::ANY, 0..31)), 0..40)
        ) {
            let mut offset = 0;
            let entries: Vec<VectorEntry> = specs
                .iter()
                .map(|(rows, len, kind, x, b)| {
                    let e = VectorEntry {
                        rows: *rows,
                        offset,
                        len: *len,
                        null_count: rows / 2,
                        encoding: 2,
                        compression: 1,
                        zone: match kind {
                            0 => ZoneMap::None,
                            1 => ZoneMap::Int { min: *x, max: x.saturating_add(5) },
                            2 => ZoneMap::Float { min: f64::from_bits(*x as u64), max: 1.0 },
                            _ => ZoneMap::of_bytes([&b[..], b"m"]),
                        },
                    };
                    offset += len;
                    e
                })
                .collect();
            let bytes = encode(&entries);
            let (dir, zone) = Directory::parse(&bytes, offset as u64).unwrap();
            // Debug forms: NaN bounds are equal to themselves only bit for bit.
            proptest::prop_assert_eq!(format!("{:?}", dir.iter().collect::<Vec<_>>()), format!("{entries:?}"));
            proptest::prop_assert_eq!(format!("{zone:?}"), format!("{:?}", merged(&entries)));
        }
    }
}
