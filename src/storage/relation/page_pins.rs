//! Buffer pins an index fetch keeps from one row to the next, as heap's index fetch
//! keeps its current heap page pinned.
//!
//! An index scan on a table not sorted by its key reads a few rows from each stripe it
//! reaches, each row a value or two from every column's vector, and opening a vector
//! in place reads its header, its checksum's bytes and what finding a value takes: one
//! host's 12 hours of a 10M-row TSBS table looked up 66,000 buffers for 4,320 rows, ~80
//! per stripe over the ~15 pages the stripe's six vectors lie in. Each lookup hashes
//! into the shared buffer table under a partition lock and pins the buffer; a page kept
//! pinned is read again without either.
//!
//! A page kept pinned is read with no content lock: what a fetch reads of it is a
//! committed vector, bytes below the page's `pd_lower` that no one changes while a
//! snapshot can see them (writers append above `pd_lower`; freed space is reused only
//! past the xmin horizon). That is the buffer manager's rule for a heap tuple known to
//! be visible (src/backend/storage/buffer/README, rule 2: with the pin held, the
//! tuple's data may be read after the content lock is dropped). `pd_lower` itself is
//! read under a share lock, when the page is pinned and again when a read reaches past
//! what was written then. Heap's index fetch locks its page once per row; locking for
//! each read here (a value read in place is two or three reads) cost a first query
//! more than the buffer lookups.
//!
//! The pins are the fetch's own: `release` lets them go when the scan ends or is
//! rescanned. An ERROR's abort releases them through the resource owner (as every pin),
//! so dropping a `PagePins` (with its memory context, after an ERROR) only forgets
//! them, never releases them twice.

use super::pages;
use crate::storage::format::layout;
use crate::storage::shared::error::data_corrupted;
use pgrx::pg_sys;

/// Most buffers kept pinned: the pages the vectors of a stripe and the next lie in, for
/// a dozen columns (six TSBS columns of ~14 kB vectors are ~18 pages a stripe: with 16
/// pins, first-in-first-out, a row's reads evicted the pages its next column needed,
/// and one host's rows looked up 6,618 buffers instead of 4,519). Fewer with small
/// shared buffers, where every pin held is a buffer no other backend can have.
const MOST_PINS: usize = 64;

/// Shared buffers per buffer kept pinned.
const BUFFERS_PER_PIN: i32 = 256;

/// A block kept pinned, and how many bytes of its page were written when last looked.
struct Held {
    block: u32,
    buf: pg_sys::Buffer,
    page: *const u8,
    written: usize,
}

pub struct PagePins {
    rel: pg_sys::Relation,
    /// The blocks kept pinned, the oldest pinned first.
    held: Vec<Held>,
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
    /// for the next read, read with no content lock (see the module's comment).
    ///
    /// # Safety
    /// As `pages::visit_range`, for this fn's relation; on the resource owner that
    /// holds this fetch's pins (the scan's); the bytes are those of a vector the fetch's
    /// snapshot sees (committed, or its own transaction's).
    pub unsafe fn visit_range(
        &mut self,
        offset: u64,
        len: usize,
        total_blocks: u32,
        mut f: impl FnMut(&[u8]),
    ) {
        if !self.open {
            // SAFETY: this fn's contract.
            return unsafe {
                pages::visit_range(
                    self.rel,
                    offset,
                    len,
                    std::ptr::null_mut(),
                    total_blocks,
                    pages::Ahead::Nothing,
                    f,
                )
            };
        }
        for (block, in_page, n) in layout::page_spans(offset, len) {
            if block >= total_blocks {
                data_corrupted("columnar data lies beyond the end of the relation");
            }
            // SAFETY: this fn's contract.
            let held = unsafe { self.pin(block) };
            if held.written < in_page + n {
                // Written since it was pinned (this transaction's own rows), or corrupt.
                // SAFETY: `held.buf` is pinned here.
                held.written = unsafe { pages::written_bytes(held.buf) };
                if held.written < in_page + n {
                    data_corrupted("columnar page holds fewer bytes than its metadata claims");
                }
            }
            // SAFETY: the buffer is pinned, so its page stays in place, and `in_page + n`
            // lies below its written bytes, which nobody changes while the vector is
            // visible (the module's comment).
            f(unsafe { std::slice::from_raw_parts(held.page.add(in_page), n) });
        }
    }

    /// The pinned buffer of `block`, pinning it (and releasing the oldest pin when
    /// `most` are held).
    ///
    /// # Safety
    /// As `visit_range`.
    unsafe fn pin(&mut self, block: u32) -> &mut Held {
        if let Some(at) = self.held.iter().rposition(|h| h.block == block) {
            return &mut self.held[at];
        }
        // SAFETY: this fn's contract: `rel` is open and locked, inside a transaction.
        let buf = unsafe { pages::read_buffer(self.rel, block, std::ptr::null_mut()) };
        if self.held.len() == self.most {
            let oldest = self.held.remove(0);
            // SAFETY: `oldest` was pinned here and not released since.
            unsafe { pg_sys::ReleaseBuffer(oldest.buf) };
        }
        // SAFETY: `buf` was pinned just above.
        let (page, written) = unsafe { (pg_sys::BufferGetPage(buf) as *const u8, pages::written_bytes(buf)) };
        self.held.push(Held { block, buf, page, written });
        self.held.last_mut().expect("just pushed")
    }

    /// Lets go of every pin; later reads pin again.
    ///
    /// # Safety
    /// On the backend thread, under the resource owner the pins were taken in (the
    /// scan's), with no ERROR since they were taken.
    pub unsafe fn release(&mut self) {
        for h in self.held.drain(..) {
            // SAFETY: this fn's contract: each buffer is still pinned by this backend.
            unsafe { pg_sys::ReleaseBuffer(h.buf) };
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

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    use super::PagePins;
    use crate::storage::relation::pages;
    use pgrx::prelude::*;

    /// `len` bytes at stream offset `at` of `rel`, read through `pins`.
    unsafe fn through(pins: &mut PagePins, rel: pg_sys::Relation, at: u64, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        // SAFETY: the caller's: `rel` open and locked, inside the test's transaction.
        unsafe { pins.visit_range(at, len, pages::nblocks(rel), |b| out.extend_from_slice(b)) };
        out
    }

    /// Opens the test's table, writes 100 bytes into its stream, reads them through
    /// pins, writes 50 more into the same page; returns the relation, the pins (the page
    /// pinned when it held 100 bytes), and where the 50 bytes are.
    unsafe fn pinned_before_a_write(table: &str) -> (pg_sys::Relation, PagePins, u64) {
        Spi::run(&format!("CREATE TABLE {table} (v int) USING columnar")).unwrap();
        let oid = Spi::get_one::<pg_sys::Oid>(&format!("SELECT '{table}'::regclass::oid")).unwrap().unwrap();
        // SAFETY: inside the test's transaction on the backend thread; the table exists.
        unsafe {
            let rel = pg_sys::relation_open(oid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
            let first: Vec<u8> = (0..100u8).collect();
            let at = pages::reserve_stream(rel, first.len() as u64);
            pages::write_stream(rel, at, &first);
            let mut pins = PagePins::new(rel);
            assert_eq!(through(&mut pins, rel, at, first.len()), first);
            let later = at + first.len() as u64;
            let second: Vec<u8> = (100..150u8).collect();
            assert_eq!(pages::reserve_stream(rel, second.len() as u64), later);
            pages::write_stream(rel, later, &second);
            (rel, pins, later)
        }
    }

    /// A page pinned before more bytes were written into it is read past what it held
    /// then: the pins look at its written length again rather than call it corrupt.
    #[pg_test]
    fn a_pinned_page_reads_bytes_written_after_its_pin() {
        // SAFETY: inside the test's transaction on the backend thread.
        unsafe {
            let (rel, mut pins, later) = pinned_before_a_write("pins_reread");
            assert_eq!(through(&mut pins, rel, later, 50), (100..150u8).collect::<Vec<u8>>());
            pins.release();
            pg_sys::relation_close(rel, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        }
    }

    /// A read past the bytes a pinned page holds, even after looking again, is corrupt
    /// data (XX001), not bytes of an unwritten page.
    #[pg_test(error = "columnar data is corrupt: columnar page holds fewer bytes than its metadata claims")]
    fn a_pinned_page_read_past_its_written_bytes_is_corrupt() {
        // SAFETY: inside the test's transaction on the backend thread.
        unsafe {
            let (rel, mut pins, later) = pinned_before_a_write("pins_past_end");
            through(&mut pins, rel, later + 50, 10);
        }
    }
}
