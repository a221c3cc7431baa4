//! Read-ahead for scans: which pages of a row group to ask the operating system for
//! before the scan reads them.
//!
//! A scan reads a row group's stored columns in turns, a vector of each at a time. The
//! kernel's own read-ahead follows one sequential stream per open file: for these
//! interleaved streams it read whole row groups, columns the scan does not read too
//! (563 MB for a scan of two columns of 138 MB). So as the scan reaches a vector, each
//! column's blocks up to `WINDOW_VECTORS` vectors on are asked for, one request per
//! column (`relation::prefetch`), a window at a time: asking for a whole row group of
//! many columns at once queued the pages needed last in front of the ones needed now.
//!
//! A scan that reads most of a row group's bytes (three quarters of them or more: most
//! of its columns) reads the file nearly in order, which the kernel's own read-ahead
//! serves in larger requests than these windows: such row groups are left to it (a
//! parallel scan of twelve of twenty-one columns was a fifth slower with windows).
//!
//! Only a scan whose reads miss shared buffers asks: the backend's count of blocks read
//! from outside them (`pgBufferUsage`) is checked at each vector, and a window is asked
//! for only when the vector before read some. A scan of cached data pays nothing, and
//! one of data in the operating system's cache but not in shared buffers asks for pages
//! the kernel finds at once (one system call per column and half window).

use crate::storage::catalog::ChunkMeta;
use crate::storage::format::layout;

/// Vectors of each column asked for ahead of the one being read, at most; the window is
/// refilled once half of it is read, so that each request covers half a window (about
/// 250 kB of a column of doubles): requests of a page or two each cost more than the
/// kernel's own read-ahead.
pub const WINDOW_VECTORS: usize = 32;

/// The read-ahead of a scan.
#[derive(Debug, Default)]
pub struct ReadAhead {
    /// Per attribute, the first block of the current row group not yet asked for.
    next: Vec<u32>,
    /// The current row group's vectors before this one are asked for.
    ahead_to: usize,
    started: bool,
    /// The backend's count of blocks read from outside shared buffers when a vector was
    /// last reached.
    reads: Option<u64>,
}

impl ReadAhead {
    /// Forgets the row group read ahead (a new one is loaded).
    pub fn reset(&mut self) {
        self.started = false;
    }

    /// The scan reaches vector `vector` of a row group of `vectors` vectors and
    /// `group_bytes` stored bytes, whose
    /// attribute `i` is stored in `chunk(i)` (None for those not read) of `natts`, in a
    /// relation of `total_blocks` blocks, with `reads` blocks read from outside shared
    /// buffers so far. If the reads since the last vector missed shared buffers and less
    /// than half a window is asked for ahead of `vector`, asks `fetch(first, last)` for
    /// each column's blocks from `vector` to `vector + WINDOW_VECTORS`, once each.
    #[allow(clippy::too_many_arguments)]
    pub fn reach<'c>(
        &mut self,
        natts: usize,
        chunk: impl Fn(usize) -> Option<&'c ChunkMeta>,
        vector: usize,
        vectors: usize,
        group_bytes: u64,
        total_blocks: u32,
        reads: u64,
        mut fetch: impl FnMut(u32, u32),
    ) {
        let missed = self.reads.is_some_and(|r| r != reads);
        self.reads = Some(reads);
        if !self.started {
            self.started = true;
            self.ahead_to = vector;
            self.next.clear();
            self.next.resize(natts, 0);
            let read: u64 = (0..natts).filter_map(&chunk).map(|c| c.length).sum();
            if read.saturating_mul(4) >= group_bytes.saturating_mul(3) {
                // Left to the kernel's read-ahead.
                self.ahead_to = vectors;
            }
        }
        if !missed
            || total_blocks == 0
            || vector + WINDOW_VECTORS / 2 < self.ahead_to
            || self.ahead_to >= vectors
            || vector >= vectors
        {
            return;
        }
        let upto = (vector + WINDOW_VECTORS).min(vectors) - 1;
        self.ahead_to = upto + 1;
        let last_block = total_blocks - 1;
        for (i, next) in self.next.iter_mut().enumerate() {
            let Some(c) = chunk(i) else { continue };
            let (Some(a), Some(b)) = (c.vectors.get(vector), c.vectors.get(upto)) else { continue };
            let from = (*next).max(layout::locate(c.offset + a.offset as u64).0);
            let end = c.offset + b.offset as u64 + (b.len as u64).max(1) - 1;
            let to = layout::locate(end).0.min(last_block);
            if from <= to {
                fetch(from, to);
                *next = to + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::directory::VectorEntry;
    use crate::storage::format::layout::{locate, PAGE_PAYLOAD};
    use crate::storage::format::zonemap::ZoneMap;

    const PAGE: u64 = PAGE_PAYLOAD as u64;

    /// A chunk at stream `offset` of `n` vectors of a page each.
    fn chunk(offset: u64, n: usize) -> ChunkMeta {
        let vectors: Vec<VectorEntry> = (0..n)
            .map(|v| VectorEntry {
                offset: (v as u64 * PAGE) as u32,
                len: PAGE as u32,
                rows: 2048,
                null_count: 0,
                encoding: 0,
                compression: 0,
                zone: ZoneMap::None,
            })
            .collect();
        ChunkMeta::new(1, offset, n as u64 * PAGE, 0, 0, vectors)
    }

    /// The ranges asked for, reaching each `(vector, reads)` in turn in a relation of
    /// `blocks` blocks.
    fn asked(
        ra: &mut ReadAhead,
        chunks: &[Option<&ChunkMeta>],
        vectors: usize,
        reached: &[(usize, u64)],
        blocks: u32,
    ) -> Vec<(u32, u32)> {
        // The chunks are a small part of their row group.
        let group_bytes = 100 * 1000 * PAGE;
        asked_in(ra, chunks, vectors, group_bytes, reached, blocks)
    }

    fn asked_in(
        ra: &mut ReadAhead,
        chunks: &[Option<&ChunkMeta>],
        vectors: usize,
        group_bytes: u64,
        reached: &[(usize, u64)],
        blocks: u32,
    ) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for &(v, reads) in reached {
            ra.reach(
                chunks.len(),
                |i| chunks[i],
                v,
                vectors,
                group_bytes,
                blocks,
                reads,
                |a, b| out.push((a, b)),
            );
        }
        out
    }

    /// Each vector of `vectors` reached once, every one after the first with new reads.
    fn cold(vectors: std::ops::Range<usize>) -> Vec<(usize, u64)> {
        vectors.map(|v| (v, v as u64)).collect()
    }

    #[test]
    fn asks_a_window_ahead_of_each_column_in_turn_once() {
        // Two stored columns of 40 one-page vectors, one not read between them.
        let (a, b) = (chunk(0, 40), chunk(40 * PAGE, 40));
        let (fa, fb) = (locate(0).0, locate(40 * PAGE).0);
        let got = asked(&mut ReadAhead::default(), &[Some(&a), None, Some(&b)], 40, &cold(0..40), u32::MAX);
        // Nothing before the first vector's reads: then the window of 32 vectors from
        // vector 1, and the rest once half of it is read.
        assert_eq!(got, vec![(fa + 1, fa + 32), (fb + 1, fb + 32), (fa + 33, fa + 39), (fb + 33, fb + 39)]);
    }

    #[test]
    fn only_while_reads_miss_shared_buffers() {
        let a = chunk(0, 100);
        let f = locate(0).0;
        // Cached: the count never moves.
        let warm: Vec<(usize, u64)> = (0..100).map(|v| (v, 7)).collect();
        assert_eq!(asked(&mut ReadAhead::default(), &[Some(&a)], 100, &warm, u32::MAX), vec![]);
        // Reads from vector 50 on: asked from the vector reached, not from where the
        // group began.
        let mut mixed = warm[..50].to_vec();
        mixed.extend((50..100).map(|v| (v, v as u64)));
        let got = asked(&mut ReadAhead::default(), &[Some(&a)], 100, &mixed, u32::MAX);
        assert_eq!(got[0], (f + 50, f + 81));
    }

    #[test]
    fn never_past_the_chunk_or_the_relation_and_again_after_a_reset() {
        let a = chunk(0, 40);
        let f = locate(0).0;
        let mut ra = ReadAhead::default();
        assert_eq!(asked(&mut ra, &[Some(&a)], 40, &cold(30..40), u32::MAX), vec![(f + 31, f + 39)]);
        ra.reset();
        assert_eq!(asked(&mut ra, &[Some(&a)], 40, &[(0, 100), (1, 101)], f + 5), vec![(f, f + 4)]);
        ra.reset();
        assert_eq!(asked(&mut ra, &[Some(&a)], 40, &[(0, 102)], u32::MAX), vec![(f, f + 31)]);
    }

    #[test]
    fn row_groups_read_mostly_whole_are_left_to_the_kernel() {
        let (a, b) = (chunk(0, 40), chunk(40 * PAGE, 40));
        // The two columns are 80 of the group's 100 pages: nothing asked.
        let got = asked_in(
            &mut ReadAhead::default(),
            &[Some(&a), Some(&b)],
            40,
            100 * PAGE,
            &cold(0..40),
            u32::MAX,
        );
        assert_eq!(got, vec![]);
        // One of them, 40 of 100: read ahead.
        let got = asked_in(&mut ReadAhead::default(), &[Some(&a)], 40, 100 * PAGE, &cold(0..2), u32::MAX);
        assert_eq!(got, vec![(locate(PAGE).0, locate(PAGE).0 + 31)]);
    }
}
