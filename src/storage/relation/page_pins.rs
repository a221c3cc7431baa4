//! Buffer pins an index fetch keeps from one row to the next, as heap's index fetch
//! keeps its current heap page pinned.
//!
//! An index scan on a table not sorted by its key reads a few rows from each stripe it
//! reaches, each row a value or two from every column's vector, and opening a vector
//! in place reads its header, its checksum's bytes and what finding a value takes: one
//! host's 12 hours of a 10M-row TSBS table looked up 66,000 buffers for 4,320 rows, ~80
//! per stripe over the ~15 pages the stripe's six vectors lie in. Each lookup hashes
//! into the shared buffer table under a partition lock and pins the buffer; a page kept
//! pinned is read again with a share lock alone.
//!
//! The pins are the fetch's own: `release` lets them go when the scan ends or is
//! rescanned. An ERROR's abort releases them through the resource owner (as every pin),
//! so dropping a `PagePins` (with its memory context, after an ERROR) only forgets
//! them, never releases them twice.

use super::pages;
use pgrx::pg_sys;

/// Most buffers kept pinned: the pages a stripe's vectors of a dozen columns lie in.
/// Fewer with small shared buffers, where every pin held is a buffer no other backend
/// can have.
const MOST_PINS: usize = 16;

/// Shared buffers per buffer kept pinned.
const BUFFERS_PER_PIN: i32 = 1024;

pub struct PagePins {
    rel: pg_sys::Relation,
    /// (block, its pinned buffer), the oldest pinned first.
    held: Vec<(u32, pg_sys::Buffer)>,
    most: usize,
    /// Whether pins are kept; after `close`, each read pins and releases at once.
    open: bool,
}

impl PagePins {
    /// Pins of blocks of `rel`, which must stay open (and locked) while pins are held.
    pub fn new(rel: pg_sys::Relation) -> PagePins {
        // SAFETY: NBuffers is set at postmaster start and never changes.
        let buffers = unsafe { pg_sys::NBuffers };
        let most = usize::try_from(buffers / BUFFERS_PER_PIN).unwrap_or(0).clamp(1, MOST_PINS);
        PagePins { rel, held: Vec::with_capacity(most), most, open: true }
    }

    /// `pages::visit_range` (its stream bytes at `offset`), over buffers kept pinned
    /// for the next read.
    ///
    /// # Safety
    /// As `pages::visit_range`, for this fn's relation; on the resource owner that
    /// holds this fetch's pins (the scan's).
    pub unsafe fn visit_range(&mut self, offset: u64, len: usize, total_blocks: u32, f: impl FnMut(&[u8])) {
        let rel = self.rel;
        if !self.open {
            // SAFETY: this fn's contract.
            return unsafe { pages::visit_range(rel, offset, len, std::ptr::null_mut(), total_blocks, f) };
        }
        // SAFETY: this fn's contract; `pin` hands out a buffer pinned by `read_buffer` now
        // or for an earlier read, which stays pinned until `release` or eviction here.
        unsafe { pages::visit_range_in(offset, len, total_blocks, |block| self.pin(block), |_| {}, f) }
    }

    /// The pinned buffer of `block`, pinning it (and releasing the oldest pin when
    /// `most` are held).
    ///
    /// # Safety
    /// As `visit_range`.
    unsafe fn pin(&mut self, block: u32) -> pg_sys::Buffer {
        if let Some(&(_, buf)) = self.held.iter().rev().find(|(b, _)| *b == block) {
            return buf;
        }
        // SAFETY: this fn's contract: `rel` is open and locked, inside a transaction.
        let buf = unsafe { pages::read_buffer(self.rel, block, std::ptr::null_mut()) };
        if self.held.len() == self.most {
            let (_, oldest) = self.held.remove(0);
            // SAFETY: `oldest` was pinned here and not released since.
            unsafe { pg_sys::ReleaseBuffer(oldest) };
        }
        self.held.push((block, buf));
        buf
    }

    /// Lets go of every pin; later reads pin again.
    ///
    /// # Safety
    /// On the backend thread, under the resource owner the pins were taken in (the
    /// scan's), with no ERROR since they were taken.
    pub unsafe fn release(&mut self) {
        for (_, buf) in self.held.drain(..) {
            // SAFETY: this fn's contract: each buffer is still pinned by this backend.
            unsafe { pg_sys::ReleaseBuffer(buf) };
        }
    }

    /// `release`, and pins no more: a row read after its scan ended (still in a slot)
    /// pins each page only while reading it.
    ///
    /// # Safety
    /// As `release`.
    pub unsafe fn close(&mut self) {
        // SAFETY: this fn's contract.
        unsafe { self.release() };
        self.open = false;
    }
}
