//! Row numbers in buckets, and the rows of its bucket that one mark in `pgcolumnar.row_mark`
//! covers, as pure logic.
//!
//! Row numbers are split into buckets of `BUCKET_ROWS`. A statement's deletes (and the
//! old versions of its UPDATEs) in one bucket become one mark: the offsets of its rows
//! in the bucket, and for an UPDATE each row's new version. One metadata row per bucket
//! instead of one per changed row is what makes a 100k-row DELETE cheap.

/// Rows per bucket: a mark's rows fit in a 1 KiB bitmap, so a mark row is never toasted.
pub const BUCKET_ROWS: u64 = 8192;

const BITMAP_WORDS: usize = BUCKET_ROWS as usize / 64;

/// The first row number of the bucket holding `row`.
pub fn bucket_start(row: u64) -> u64 {
    row - row % BUCKET_ROWS
}

/// `row`'s offset in its bucket.
pub fn offset_in_bucket(row: u64) -> u16 {
    (row % BUCKET_ROWS) as u16
}

/// Consecutive rows whose new versions are consecutive too (an UPDATE writes the new
/// versions in the order it changes rows, so a range UPDATE needs one run per bucket).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SuccessorRun {
    offset: u16,
    len: u16,
    first_new_row: u64,
}

/// The rows of a bucket one mark covers, and their successors (new versions).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MarkRows {
    /// Sorted, without repeats.
    offsets: Vec<u16>,
    /// Sorted by offset, not overlapping.
    successors: Vec<SuccessorRun>,
}

/// Stored forms of the row set: a list of 16-bit offsets, or a bitmap when that is
/// smaller.
const ROWS_AS_LIST: u8 = 0;
const ROWS_AS_BITMAP: u8 = 1;
const RUN_BYTES: usize = 12;

impl MarkRows {
    pub fn single(offset: u16, successor: Option<u64>) -> MarkRows {
        let mut b = MarkRowsBuilder::default();
        b.add(offset, successor);
        b.build()
    }

    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    pub fn offsets(&self) -> &[u16] {
        &self.offsets
    }

    pub fn contains(&self, offset: u16) -> bool {
        self.offsets.binary_search(&offset).is_ok()
    }

    /// The new version of the row at `offset`, if an UPDATE made one.
    pub fn successor(&self, offset: u16) -> Option<u64> {
        let i = self.successors.partition_point(|r| r.offset <= offset).checked_sub(1)?;
        let run = self.successors[i];
        let k = offset - run.offset;
        (k < run.len).then(|| run.first_new_row + k as u64)
    }

    /// The stored form of the row set (`row_mark.rows`).
    pub fn rows_bytes(&self) -> Vec<u8> {
        let list_len = 1 + 2 * self.offsets.len();
        if list_len <= 1 + BUCKET_ROWS as usize / 8 {
            let mut out = Vec::with_capacity(list_len);
            out.push(ROWS_AS_LIST);
            for o in &self.offsets {
                out.extend_from_slice(&o.to_le_bytes());
            }
            return out;
        }
        let mut words = [0u64; BITMAP_WORDS];
        for &o in &self.offsets {
            words[o as usize / 64] |= 1 << (o % 64);
        }
        let mut out = Vec::with_capacity(1 + BITMAP_WORDS * 8);
        out.push(ROWS_AS_BITMAP);
        out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        out
    }

    /// The stored form of the successors (`row_mark.successors`), None if there are none.
    pub fn successors_bytes(&self) -> Option<Vec<u8>> {
        if self.successors.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(self.successors.len() * RUN_BYTES);
        for r in &self.successors {
            out.extend_from_slice(&r.offset.to_le_bytes());
            out.extend_from_slice(&r.len.to_le_bytes());
            out.extend_from_slice(&r.first_new_row.to_le_bytes());
        }
        Some(out)
    }

    /// Parses the stored forms; None if they are malformed.
    pub fn from_bytes(rows: &[u8], successors: Option<&[u8]>) -> Option<MarkRows> {
        let (&tag, body) = rows.split_first()?;
        let offsets: Vec<u16> = match tag {
            ROWS_AS_LIST if body.len() % 2 == 0 => {
                body.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
            }
            ROWS_AS_BITMAP if body.len() == BITMAP_WORDS * 8 => body
                .chunks_exact(8)
                .enumerate()
                .flat_map(|(i, b)| {
                    let w = u64::from_le_bytes(b.try_into().unwrap());
                    (0..64u16).filter(move |bit| w >> bit & 1 == 1).map(move |bit| i as u16 * 64 + bit)
                })
                .collect(),
            _ => return None,
        };
        let sorted = offsets.windows(2).all(|w| w[0] < w[1]);
        if !sorted || offsets.last().is_some_and(|&o| o as u64 >= BUCKET_ROWS) {
            return None;
        }
        let mut runs = Vec::new();
        if let Some(bytes) = successors {
            if bytes.len() % RUN_BYTES != 0 {
                return None;
            }
            for b in bytes.chunks_exact(RUN_BYTES) {
                runs.push(SuccessorRun {
                    offset: u16::from_le_bytes([b[0], b[1]]),
                    len: u16::from_le_bytes([b[2], b[3]]),
                    first_new_row: u64::from_le_bytes(b[4..12].try_into().unwrap()),
                });
            }
            let ordered = runs.windows(2).all(|w| w[0].offset + w[0].len <= w[1].offset);
            if !ordered || runs.iter().any(|r| r.len == 0 || r.offset as u64 + r.len as u64 > BUCKET_ROWS) {
                return None;
            }
        }
        Some(MarkRows { offsets, successors: runs })
    }
}

/// Collects the rows of one bucket a statement changes, in any order.
#[derive(Debug, Clone)]
pub struct MarkRowsBuilder {
    bits: Box<[u64; BITMAP_WORDS]>,
    count: usize,
    successors: Vec<(u16, u64)>,
}

impl Default for MarkRowsBuilder {
    fn default() -> MarkRowsBuilder {
        MarkRowsBuilder { bits: Box::new([0; BITMAP_WORDS]), count: 0, successors: Vec::new() }
    }
}

impl MarkRowsBuilder {
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn contains(&self, offset: u16) -> bool {
        self.bits[offset as usize / 64] >> (offset % 64) & 1 == 1
    }

    /// The successor recorded for `offset` (looked up only when a statement meets a row
    /// it changed already).
    pub fn successor(&self, offset: u16) -> Option<u64> {
        self.successors.iter().find(|s| s.0 == offset).map(|s| s.1)
    }

    /// Adds the row at `offset`; false (and nothing changes) if it is there already.
    pub fn add(&mut self, offset: u16, successor: Option<u64>) -> bool {
        if self.contains(offset) {
            return false;
        }
        self.bits[offset as usize / 64] |= 1 << (offset % 64);
        self.count += 1;
        if let Some(s) = successor {
            self.successors.push((offset, s));
        }
        true
    }

    /// The rows collected so far; the builder is left empty.
    pub fn build(&mut self) -> MarkRows {
        let mut offsets = Vec::with_capacity(self.count);
        for (i, w) in self.bits.iter_mut().enumerate() {
            let mut word = std::mem::take(w);
            while word != 0 {
                offsets.push(i as u16 * 64 + word.trailing_zeros() as u16);
                word &= word - 1;
            }
        }
        self.count = 0;
        let mut pairs = std::mem::take(&mut self.successors);
        pairs.sort_unstable();
        let mut successors: Vec<SuccessorRun> = Vec::new();
        for (offset, new_row) in pairs {
            match successors.last_mut() {
                Some(r)
                    if r.offset + r.len == offset
                        && r.first_new_row + r.len as u64 == new_row
                        && r.len < u16::MAX =>
                {
                    r.len += 1
                }
                _ => successors.push(SuccessorRun { offset, len: 1, first_new_row: new_row }),
            }
        }
        MarkRows { offsets, successors }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(m: &MarkRows) -> MarkRows {
        MarkRows::from_bytes(&m.rows_bytes(), m.successors_bytes().as_deref()).unwrap()
    }

    #[test]
    fn buckets_split_row_numbers() {
        assert_eq!((bucket_start(0), offset_in_bucket(0)), (0, 0));
        assert_eq!((bucket_start(8191), offset_in_bucket(8191)), (0, 8191));
        assert_eq!((bucket_start(8192), offset_in_bucket(8192)), (8192, 0));
        assert_eq!((bucket_start(5_000_123), offset_in_bucket(5_000_123)), (4_997_120, 3003));
    }

    #[test]
    fn a_range_update_is_one_run() {
        let mut b = MarkRowsBuilder::default();
        for (k, o) in (100u16..4100).enumerate() {
            assert!(b.add(o, Some(9_000_000 + k as u64)));
        }
        assert!(!b.add(100, Some(1)), "a row is added once");
        assert_eq!(b.successor(150), Some(9_000_050));
        let m = b.build();
        assert!(b.is_empty());
        assert_eq!(m.len(), 4000);
        assert_eq!(m.successors.len(), 1);
        assert_eq!(m.successor(100), Some(9_000_000));
        assert_eq!(m.successor(4099), Some(9_003_999));
        assert_eq!(m.successor(4100), None);
        assert_eq!(m.successor(99), None);
        assert!(m.contains(2000) && !m.contains(4100));
        // 4000 offsets are smaller as a bitmap.
        assert_eq!(m.rows_bytes().len(), 1 + 1024);
        assert_eq!(round_trip(&m), m);
    }

    #[test]
    fn scattered_rows_in_any_order_round_trip() {
        let mut b = MarkRowsBuilder::default();
        let mut x = 12345u64;
        let mut expected = std::collections::BTreeMap::new();
        for _ in 0..300 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let o = (x >> 33) as u16 % BUCKET_ROWS as u16;
            let succ = (!x.is_multiple_of(3)).then_some(x >> 20);
            if b.add(o, succ) {
                expected.insert(o, succ);
            }
        }
        let m = b.build();
        assert_eq!(m.offsets(), expected.keys().copied().collect::<Vec<_>>().as_slice());
        for (&o, &s) in &expected {
            assert_eq!(m.successor(o), s, "offset {o}");
        }
        assert_eq!(m.rows_bytes()[0], ROWS_AS_LIST);
        assert_eq!(round_trip(&m), m);
        let single = MarkRows::single(8191, None);
        assert_eq!(round_trip(&single), single);
        assert_eq!(single.successors_bytes(), None);
    }

    #[test]
    fn malformed_stored_forms_are_refused() {
        assert_eq!(MarkRows::from_bytes(&[], None), None);
        assert_eq!(MarkRows::from_bytes(&[ROWS_AS_LIST, 1], None), None);
        assert_eq!(MarkRows::from_bytes(&[ROWS_AS_LIST, 2, 0, 1, 0], None), None, "unsorted");
        assert_eq!(MarkRows::from_bytes(&[ROWS_AS_LIST, 0, 0x20], None), None, "beyond the bucket");
        assert_eq!(MarkRows::from_bytes(&[ROWS_AS_BITMAP, 0], None), None);
        assert_eq!(MarkRows::from_bytes(&[7], None), None);
        let m = MarkRows::single(3, Some(10));
        let mut succ = m.successors_bytes().unwrap();
        succ[2] = 0; // a run of no rows
        assert_eq!(MarkRows::from_bytes(&m.rows_bytes(), Some(&succ)), None);
        assert_eq!(MarkRows::from_bytes(&m.rows_bytes(), Some(&succ[..5])), None);
    }
}
