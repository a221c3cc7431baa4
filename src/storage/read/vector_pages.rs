//! A stored vector's bytes read where they lie in the relation's pages, a few at a
//! time (`format::encoding::paged`): a fetch reads one value of a vector without
//! copying the vector out of shared buffers.

use crate::storage::format::checksum;
use crate::storage::format::encoding::paged::StoredBytes;
use crate::storage::format::encoding::CorruptData;
use crate::storage::format::fallible;
use crate::storage::relation::page_pins::PagePins;
use crate::storage::relation::pages;
use pgrx::pg_sys;
use std::cell::RefCell;

/// The `len` bytes of a vector at stream offset `at` of `rel`, which has at least
/// `blocks` blocks (the vector lies within them), read through the fetch's kept pins
/// when it keeps them.
pub struct VectorPages<'a> {
    pub rel: pg_sys::Relation,
    pub at: u64,
    pub len: u32,
    pub blocks: u32,
    pub pins: Option<&'a RefCell<PagePins>>,
}

impl VectorPages<'_> {
    fn check(&self, at: usize, len: usize) -> Result<(), CorruptData> {
        if at + len > self.len as usize {
            return Err(CorruptData("read beyond its vector"));
        }
        Ok(())
    }

    /// Hands `f` the vector's bytes `at .. at + len`, page by page.
    fn visit(&self, at: usize, len: usize, f: impl FnMut(&[u8])) -> Result<(), CorruptData> {
        self.check(at, len)?;
        let offset = self.at + at as u64;
        // SAFETY: a `VectorPages` is made by a fetch of an open, locked relation inside a
        // transaction on the backend thread, and lives no longer than that fetch; its pins
        // are that fetch's (`rel` is theirs).
        unsafe {
            match self.pins {
                Some(p) => p.borrow_mut().visit_range(offset, len, self.blocks, f),
                None => pages::visit_range(self.rel, offset, len, std::ptr::null_mut(), self.blocks, f),
            }
        }
        Ok(())
    }
}

impl VectorPages<'_> {
    /// The whole vector, copied into `out`.
    pub fn read_all(&self, out: &mut Vec<u8>) -> Result<(), CorruptData> {
        out.clear();
        fallible::reserve(out, self.len as usize);
        self.visit(0, self.len as usize, |b| out.extend_from_slice(b))
    }
}

impl StoredBytes for VectorPages<'_> {
    fn read(&mut self, at: usize, out: &mut [u8]) -> Result<(), CorruptData> {
        let mut done = 0;
        self.visit(at, out.len(), |b| {
            out[done..done + b.len()].copy_from_slice(b);
            done += b.len();
        })
    }

    fn crc(&mut self, at: usize, len: usize, crc: u32) -> Result<u32, CorruptData> {
        let mut crc = crc;
        self.visit(at, len, |b| crc = checksum::crc32c_append(crc, b))?;
        Ok(crc)
    }
}
