//! A stored vector's bytes read where they lie in the relation's pages, a few at a
//! time (`format::encoding::paged`): a fetch reads one value of a vector without
//! copying the vector out of shared buffers.

use crate::storage::format::checksum;
use crate::storage::format::encoding::paged::StoredBytes;
use crate::storage::format::encoding::CorruptData;
use crate::storage::format::fallible;
use crate::storage::relation::page_pins::PagePins;
use crate::storage::relation::pages;
use crate::storage::shared::shared_vectors::VectorKey;
use crate::storage::shared::shared_vectors_memory;
use pgrx::pg_sys;
use std::cell::{Cell, RefCell};
use std::ops::Range;

/// The `len` bytes of a vector at stream offset `at` of `rel`, which has at least
/// `blocks` blocks (the vector lies within them), read through the fetch's kept pins
/// when it keeps them.
pub struct VectorPages<'a> {
    pub rel: pg_sys::Relation,
    pub at: u64,
    pub len: u32,
    pub blocks: u32,
    pub pins: Option<&'a RefCell<PagePins>>,
    /// The vector's key in the shared fetch cache, where its zstd frames are kept
    /// decompressed for every backend's fetches (`StoredBytes::shared_frame`); None:
    /// they are not.
    pub frames_key: Option<VectorKey>,
}

thread_local! {
    /// Reads of text this backend's fetches took from frames in the shared cache.
    static SHARED_FRAME_READS: Cell<u64> = const { Cell::new(0) };
}

/// How many reads of text (a value, or the part of it in one frame) this backend's
/// fetches took from frames another fetch left decompressed in the shared cache
/// (another backend's, or its own earlier fetch's).
pub fn shared_frame_reads() -> u64 {
    SHARED_FRAME_READS.get()
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
                None => pages::visit_range(
                    self.rel,
                    offset,
                    len,
                    std::ptr::null_mut(),
                    self.blocks,
                    pages::Ahead::Nothing,
                    f,
                ),
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

    /// What a fetch wants of a frame another backend decompressed: a new connection's
    /// fetch of text with a new value in nearly every row copies that value (36 bytes
    /// of `'cmt ' || md5(i)`) instead of decompressing its frame (9 µs) or copying the
    /// frame (8 KB into memory the process never touched). Read under the cache's
    /// sequence check: a frame whose units were given to another vector meanwhile is
    /// not taken.
    fn shared_frame(&mut self, f: usize, k: usize, part: Option<Range<usize>>, out: &mut Vec<u8>) -> bool {
        let (Some(key), Some(cache)) = (self.frames_key, shared_vectors_memory::cache()) else {
            return false;
        };
        let found = cache
            .find(&key.part(f))
            .is_some_and(|h| cache.read_bytes_part(&h, k, part, out) == Some(Some(())));
        if found {
            SHARED_FRAME_READS.set(SHARED_FRAME_READS.get() + 1);
        }
        found
    }

    /// Kept as its values (a byte string each), when the cache admits it (as it admits
    /// vectors) and they fit the units of a vector.
    fn share_frame(&mut self, f: usize, ends: &[u32], data: &[u8]) {
        let (Some(key), Some(cache)) = (self.frames_key, shared_vectors_memory::cache()) else { return };
        let key = key.part(f);
        if cache.admit(&key) {
            cache.fill_strings(&key, ends.len() - 1, ends, data, None);
        }
    }
}

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// The rows of `k = key` as one string, from `table`.
    fn rows(table: &str, key: i32) -> String {
        Spi::get_one::<String>(&format!(
            "SELECT string_agg(concat_ws('|', id, h, c), ',' ORDER BY id) FROM {table} WHERE k = {key}"
        ))
        .unwrap()
        .unwrap()
    }

    /// Index fetches of text in zstd frames leave the frames they decompress in the
    /// shared cache; a fetch that opens the same vectors again (here: after this
    /// backend's own fetch cache let them go) reads those frames there, decompressing
    /// none, and returns the same values: short images (c) and plain byte strings (h,
    /// past a short image's reach), NULLs among them.
    #[pg_test]
    fn fetches_read_the_frames_the_shared_cache_keeps() {
        Spi::run(
            "CREATE TABLE sf (id int, k int, h text, c text) USING columnar;
             INSERT INTO sf SELECT g, g % 500,
                 CASE WHEN g % 97 = 5 THEN NULL ELSE repeat(md5(g::text), 4) END,
                 CASE WHEN g % 89 = 3 THEN NULL ELSE 'cmt ' || md5((g * 7)::text) END
               FROM generate_series(1, 30000) g;
             CREATE INDEX ON sf (k);
             CREATE TABLE sfh AS SELECT * FROM sf;
             SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
             SET LOCAL pgcolumnar.enable_columnar_scan = off;
             SET LOCAL pgcolumnar.fetch_cache_size = 64",
        )
        .unwrap();
        let encodings = Spi::get_one::<String>(
            "SELECT string_agg(encodings, ' ' ORDER BY attname) FROM pgcolumnar.stats('sf') WHERE attname IN ('c', 'h')",
        )
        .unwrap()
        .unwrap();
        assert!(encodings.matches("+zstdframes:15").count() == 2, "{encodings}");
        assert!(encodings.contains("shortimages") && encodings.contains("plain"), "{encodings}");
        let first = rows("sf", 7);
        assert_eq!(first, rows("sfh", 7));
        // Other stripes push k = 7's out of the small fetch cache; then k = 7 again.
        for key in 8..40 {
            assert_eq!(rows("sf", key), rows("sfh", key));
        }
        let before = super::shared_frame_reads();
        assert_eq!(rows("sf", 7), first);
        assert!(super::shared_frame_reads() - before >= 60, "{}", super::shared_frame_reads() - before);
    }
}
