//! Where things are in a columnar relation's main fork, and how row numbers map to TIDs.
//!
//! Block 0 is the metapage. Blocks 1.. hold one logical byte stream: each page carries
//! `PAGE_PAYLOAD` bytes after its standard header, so stream offset `o` lives in block
//! `1 + o / PAGE_PAYLOAD` at byte `PAGE_HEADER + o % PAGE_PAYLOAD`. Row groups are
//! appended to the stream; space is reserved on the metapage, so concurrent writers
//! never overlap. Pure: no PostgreSQL calls.

use super::encoding::CorruptData;

/// Rows per vector: the unit of decoding, zone maps and index fetches.
pub const VECTOR_ROWS: usize = 2048;
/// Rows per row group: 50 vectors.
pub const ROW_GROUP_ROWS: usize = 50 * VECTOR_ROWS;

pub const BLOCK_SIZE: usize = 8192;
/// `SizeOfPageHeaderData`: stream bytes start right after the standard page header.
pub const PAGE_HEADER: usize = 24;
pub const PAGE_PAYLOAD: usize = BLOCK_SIZE - PAGE_HEADER;
pub const METAPAGE_BLOCK: u32 = 0;
pub const FIRST_STREAM_BLOCK: u32 = 1;

/// Row numbers map to TIDs with this many offsets per block: `MaxHeapTuplesPerPage`
/// for 8 kB pages, the most that TID bitmaps (bitmap heap scans) accept.
pub const ROWS_PER_TID_BLOCK: u64 = 291;
/// Row numbers start here so that the first TID is (0,1) and never the invalid TID.
pub const FIRST_ROW_NUMBER: u64 = 0;

/// The block and in-page byte of stream offset `offset`.
pub fn locate(offset: u64) -> (u32, usize) {
    let block = FIRST_STREAM_BLOCK as u64 + offset / PAGE_PAYLOAD as u64;
    let block = u32::try_from(block).expect("columnar stream beyond 2^32 blocks");
    (block, PAGE_HEADER + (offset % PAGE_PAYLOAD as u64) as usize)
}

/// The pieces of the `len` stream bytes at `offset`, page by page: (block, in-page
/// byte, bytes in that page).
pub fn page_spans(offset: u64, len: usize) -> impl Iterator<Item = (u32, usize, usize)> {
    let mut done = 0usize;
    std::iter::from_fn(move || {
        if done >= len {
            return None;
        }
        let (block, in_page) = locate(offset + done as u64);
        let n = (BLOCK_SIZE - in_page).min(len - done);
        done += n;
        Some((block, in_page, n))
    })
}

/// The first stream offset at or after `offset` where a page begins.
pub fn page_end_after(offset: u64) -> u64 {
    offset.div_ceil(PAGE_PAYLOAD as u64) * PAGE_PAYLOAD as u64
}

/// TID (block, 1-based offset) of a row number.
pub fn row_to_tid(row: u64) -> (u32, u16) {
    let block = u32::try_from(row / ROWS_PER_TID_BLOCK).expect("row number beyond TID space");
    (block, (row % ROWS_PER_TID_BLOCK) as u16 + 1)
}

/// Row number of a TID, or None for a TID that no row can have.
pub fn tid_to_row(block: u32, offset: u16) -> Option<u64> {
    if offset == 0 || offset as u64 > ROWS_PER_TID_BLOCK {
        return None;
    }
    Some(block as u64 * ROWS_PER_TID_BLOCK + offset as u64 - 1)
}

/// The metapage's content, stored right after the page header of block 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metapage {
    /// Identifies this relfilenode's rows in the `pgcolumnar` metadata tables; a new
    /// relfilenode (TRUNCATE, rewrite) gets a new one.
    pub storage_id: u64,
    /// Next row number to hand out (row numbers are never reused).
    pub next_row: u64,
    /// Next free byte of the logical stream.
    pub next_offset: u64,
}

/// Set in the storage id of an unlogged relation's init fork, which crash recovery
/// copies over the main fork: no metadata is ever kept under such an id, so the reset
/// relation reads as empty, and its first write takes a fresh storage id (the stale
/// metadata of the id without this bit goes then).
pub const RESET_STORAGE_BIT: u64 = 1 << 63;

const META_MAGIC: u32 = 0x434F_4C52; // "COLR"
pub const FORMAT_VERSION: u32 = 1;
pub const METAPAGE_LEN: usize = 4 + 4 + 8 + 8 + 8;

/// `Metapage::from_bytes`'s error for a table a later library wrote, in a format this
/// one does not read (not damage: `Metapage::version` says which).
pub const NEWER_FORMAT: &str = "written in a newer storage format";

impl Metapage {
    /// The storage format version of metapage bytes `b`, if they are a metapage's.
    pub fn version(b: &[u8]) -> Option<u32> {
        let b = b.get(..8)?;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        (u32_at(0) == META_MAGIC).then(|| u32_at(4))
    }

    pub fn new(storage_id: u64) -> Metapage {
        Metapage { storage_id, next_row: FIRST_ROW_NUMBER, next_offset: 0 }
    }

    pub fn to_bytes(&self) -> [u8; METAPAGE_LEN] {
        let mut b = [0u8; METAPAGE_LEN];
        b[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[8..16].copy_from_slice(&self.storage_id.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_row.to_le_bytes());
        b[24..32].copy_from_slice(&self.next_offset.to_le_bytes());
        b
    }

    pub fn from_bytes(b: &[u8]) -> Result<Metapage, CorruptData> {
        let b = b.get(..METAPAGE_LEN).ok_or(CorruptData("metapage truncated"))?;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        if u32_at(0) != META_MAGIC {
            return Err(CorruptData("not a columnar metapage"));
        }
        if u32_at(4) > FORMAT_VERSION {
            return Err(CorruptData(NEWER_FORMAT));
        }
        if u32_at(4) != FORMAT_VERSION {
            return Err(CorruptData("unsupported columnar format version"));
        }
        Ok(Metapage { storage_id: u64_at(8), next_row: u64_at(16), next_offset: u64_at(24) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_spans_cover_a_range_page_by_page() {
        let spans: Vec<_> = page_spans(PAGE_PAYLOAD as u64 - 10, 20 + PAGE_PAYLOAD).collect();
        assert_eq!(
            spans,
            vec![(1, BLOCK_SIZE - 10, 10), (2, PAGE_HEADER, PAGE_PAYLOAD), (3, PAGE_HEADER, 10)]
        );
        assert_eq!(page_spans(5, 0).count(), 0);
        assert_eq!(page_spans(0, 3).collect::<Vec<_>>(), vec![(1, PAGE_HEADER, 3)]);
    }

    #[test]
    fn stream_offsets_skip_page_headers() {
        assert_eq!(locate(0), (1, PAGE_HEADER));
        assert_eq!(locate(PAGE_PAYLOAD as u64 - 1), (1, BLOCK_SIZE - 1));
        assert_eq!(locate(PAGE_PAYLOAD as u64), (2, PAGE_HEADER));
        let p = PAGE_PAYLOAD as u64;
        assert_eq!(page_end_after(0), 0);
        assert_eq!(page_end_after(1), p);
        assert_eq!(page_end_after(p), p);
        assert_eq!(page_end_after(p + 1), 2 * p);
    }

    #[test]
    fn tids_round_trip_and_stay_in_bitmap_range() {
        for row in [0u64, 1, 290, 291, 292, 1_000_000, 291 * 1_000_000 - 1] {
            let (b, o) = row_to_tid(row);
            assert!((1..=291).contains(&o));
            assert_eq!(tid_to_row(b, o), Some(row));
        }
        assert_eq!(row_to_tid(0), (0, 1));
        assert_eq!(tid_to_row(5, 0), None);
        assert_eq!(tid_to_row(5, 292), None);
    }

    #[test]
    fn metapage_round_trips_and_rejects_garbage() {
        let m = Metapage { storage_id: 7, next_row: 123_456, next_offset: 99 };
        assert_eq!(Metapage::from_bytes(&m.to_bytes()), Ok(m));
        assert!(Metapage::from_bytes(&[0u8; METAPAGE_LEN]).is_err());
        assert!(Metapage::from_bytes(&m.to_bytes()[..10]).is_err());
        let mut v = m.to_bytes();
        v[4..8].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(Metapage::from_bytes(&v), Err(CorruptData("unsupported columnar format version")));
        v[4..8].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert_eq!(Metapage::from_bytes(&v), Err(CorruptData(NEWER_FORMAT)));
        assert_eq!(Metapage::version(&v), Some(FORMAT_VERSION + 1));
        assert_eq!(Metapage::version(&[0u8; METAPAGE_LEN]), None);
    }
}
