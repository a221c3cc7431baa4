//! A stored vector's bytes read where they lie in the relation's pages, a few at a
//! time (`format::encoding::paged`): a fetch reads one value of a vector without
//! copying the vector out of shared buffers.

use crate::storage::format::checksum;
use crate::storage::format::encoding::paged::StoredBytes;
use crate::storage::format::encoding::CorruptData;
use crate::storage::relation::pages;
use pgrx::pg_sys;

/// The `len` bytes of a vector at stream offset `at` of `rel`, which has at least
/// `blocks` blocks (the vector lies within them).
pub struct VectorPages {
    pub rel: pg_sys::Relation,
    pub at: u64,
    pub len: u32,
    pub blocks: u32,
}

impl VectorPages {
    fn check(&self, at: usize, len: usize) -> Result<(), CorruptData> {
        if at + len > self.len as usize {
            return Err(CorruptData("read beyond its vector"));
        }
        Ok(())
    }
}

impl StoredBytes for VectorPages {
    fn read(&mut self, at: usize, out: &mut [u8]) -> Result<(), CorruptData> {
        self.check(at, out.len())?;
        let mut done = 0;
        // SAFETY: a `VectorPages` is made by a fetch of an open, locked relation inside a
        // transaction on the backend thread, and lives no longer than that fetch.
        unsafe {
            pages::visit_range(
                self.rel,
                self.at + at as u64,
                out.len(),
                std::ptr::null_mut(),
                self.blocks,
                |b| {
                    out[done..done + b.len()].copy_from_slice(b);
                    done += b.len();
                },
            );
        }
        Ok(())
    }

    fn crc(&mut self, at: usize, len: usize, crc: u32) -> Result<u32, CorruptData> {
        self.check(at, len)?;
        let mut crc = crc;
        // SAFETY: as in `read`.
        unsafe {
            pages::visit_range(self.rel, self.at + at as u64, len, std::ptr::null_mut(), self.blocks, |b| {
                crc = checksum::crc32c_append(crc, b);
            });
        }
        Ok(crc)
    }
}
