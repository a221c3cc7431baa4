//! The per-row-group delete masks that readers apply, as pure logic: a bitmap of the
//! rows of a row group that are gone. `group_mask` adds deleted row numbers to a group's
//! stored mask: readers the deletes their snapshot sees, VACUUM those it folds into the
//! mask once every snapshot sees them.

/// A bitmap over the rows of one row group: bit i set when row first_row + i is gone.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteMask {
    words: Vec<u64>,
    count: u64,
}

impl DeleteMask {
    pub fn new(rows: u64) -> DeleteMask {
        DeleteMask { words: vec![0; rows.div_ceil(64) as usize], count: 0 }
    }

    pub fn is_deleted(&self, i: usize) -> bool {
        self.words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }

    /// Marks row `i`; rows beyond the mask's size are ignored.
    pub fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            if *w >> (i % 64) & 1 == 0 {
                *w |= 1 << (i % 64);
                self.count += 1;
            }
        }
    }

    /// How many rows are deleted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes the mask holds.
    pub fn byte_len(&self) -> usize {
        self.words.len() * 8
    }

    /// How many of rows `start .. start + len` are deleted.
    pub fn count_range(&self, start: usize, len: usize) -> usize {
        (start..start + len).filter(|&i| self.is_deleted(i)).count()
    }

    pub fn union(&mut self, other: &DeleteMask) {
        for (i, w) in other.words.iter().enumerate() {
            if let Some(mine) = self.words.get_mut(i) {
                self.count += (w & !*mine).count_ones() as u64;
                *mine |= w;
            }
        }
    }

    /// The stored form (`row_group.deleted_rows`): little-endian 64-bit words.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Parses the stored form for a group of `rows` rows; None if the sizes disagree.
    pub fn from_bytes(bytes: &[u8], rows: u64) -> Option<DeleteMask> {
        let mut mask = DeleteMask::new(rows);
        if bytes.len() != mask.words.len() * 8 {
            return None;
        }
        for (w, b) in mask.words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(b.try_into().unwrap());
        }
        // Bits past the last row would make counts lie.
        if !rows.is_multiple_of(64) {
            if let Some(last) = mask.words.last() {
                if last >> (rows % 64) != 0 {
                    return None;
                }
            }
        }
        mask.count = mask.words.iter().map(|w| w.count_ones() as u64).sum();
        Some(mask)
    }
}

/// The mask of the group starting at `first_row` with `rows` rows: its stored mask (if
/// any) plus the deleted row numbers in `deleted` (sorted) that fall in it. None when no
/// row of the group is deleted.
pub fn group_mask(
    stored: Option<&DeleteMask>,
    deleted: &[u64],
    first_row: u64,
    rows: u64,
) -> Option<DeleteMask> {
    let lo = deleted.partition_point(|&r| r < first_row);
    let hi = deleted.partition_point(|&r| r < first_row + rows);
    if lo == hi && stored.is_none_or(|m| m.count() == 0) {
        return None;
    }
    let mut mask = stored.cloned().unwrap_or_else(|| DeleteMask::new(rows));
    for &r in &deleted[lo..hi] {
        mask.set((r - first_row) as usize);
    }
    Some(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_count_and_round_trip() {
        let mut m = DeleteMask::new(130);
        for i in [0, 63, 64, 129, 129, 500] {
            m.set(i);
        }
        assert_eq!(m.count(), 4);
        assert!(m.is_deleted(63) && m.is_deleted(129) && !m.is_deleted(1) && !m.is_deleted(500));
        assert_eq!(m.count_range(60, 10), 2);
        let back = DeleteMask::from_bytes(&m.to_bytes(), 130).unwrap();
        assert_eq!(back, m);
        assert!(DeleteMask::from_bytes(&m.to_bytes(), 200).is_none());
        let mut bad = m.to_bytes();
        *bad.last_mut().unwrap() = 0x80;
        assert!(DeleteMask::from_bytes(&bad, 130).is_none());
    }

    #[test]
    fn group_masks_merge_stored_bits_and_deleted_rows() {
        let deleted = [5, 100, 101, 250, 300];
        assert_eq!(group_mask(None, &deleted, 0, 5), None);
        assert_eq!(group_mask(None, &deleted, 102, 100), None);
        let m = group_mask(None, &deleted, 100, 200).unwrap();
        assert_eq!((m.count(), m.is_deleted(0), m.is_deleted(1), m.is_deleted(150)), (3, true, true, true));
        let mut stored = DeleteMask::new(200);
        stored.set(7);
        stored.set(1);
        let m = group_mask(Some(&stored), &deleted, 100, 200).unwrap();
        assert_eq!(m.count(), 4);
        let mut a = DeleteMask::new(10);
        a.set(1);
        let mut b = DeleteMask::new(10);
        b.set(1);
        b.set(2);
        a.union(&b);
        assert_eq!(a.count(), 2);
    }
}
