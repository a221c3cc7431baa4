//! Asking the operating system to read a range of a relation's blocks in the background
//! (`posix_fadvise(WILLNEED)` through PostgreSQL's `FilePrefetch`), in one request per
//! range and file segment.
//!
//! PostgreSQL 15's own `PrefetchBuffer` asks for one block at a time: each becomes an
//! 8 kB read of its own, and a scan of twelve columns issued 15,000 of them where the
//! kernel's read-ahead (up to the device's `read_ahead_kb`) had issued few large ones:
//! it made that scan slower. A range becomes reads as large as the device takes.
//!
//! The files are opened through PostgreSQL's virtual file descriptors (which close
//! kernel descriptors as others need them) the first time a transaction reads ahead in
//! one, and closed when it ends: a descriptor kept open would keep a dropped table's
//! file, and its disk space, alive.

use hashbrown::HashMap;
use pgrx::pg_sys;
use std::cell::RefCell;

/// One open segment file: the relation's file node, its backend (temporary tables),
/// and the segment number.
type Key = (pg_sys::Oid, pg_sys::Oid, pg_sys::Oid, i32, u32);

thread_local! {
    /// The segment files this transaction read ahead in (a gigabyte per segment; a
    /// scan of many partitions reads ahead in each).
    static OPEN: RefCell<HashMap<Key, pg_sys::File>> = RefCell::new(HashMap::new());
}

/// Blocks per segment file.
const SEGMENT_BLOCKS: u32 = pg_sys::RELSEG_SIZE;

/// Asks the operating system to read blocks `first..=last` of `rel`'s main fork; false
/// (nothing asked) with `effective_io_concurrency = 0`, which turns this off as it does
/// PostgreSQL's own prefetching. A file that cannot be opened is passed by: this is a
/// hint, and the read that follows reports what is wrong.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread
/// inside a transaction.
pub unsafe fn prefetch_blocks(rel: pg_sys::Relation, first: u32, last: u32) -> bool {
    // SAFETY: a plain global of this backend.
    if unsafe { pg_sys::effective_io_concurrency } == 0 {
        return false;
    }
    for (segment, offset, bytes) in segment_spans(first, last, SEGMENT_BLOCKS, pg_sys::BLCKSZ) {
        // SAFETY: this fn's contract.
        if let Some(file) = unsafe { segment_file(rel, segment) } {
            // SAFETY: `file` is a virtual file descriptor open in this transaction; a
            // span lies within one segment file (at most a gigabyte), so it fits an i32.
            unsafe {
                pg_sys::FilePrefetch(
                    file,
                    offset as i64,
                    bytes as i32,
                    pg_sys::WaitEventIO::WAIT_EVENT_DATA_FILE_PREFETCH,
                )
            };
        }
    }
    true
}

/// Blocks `first..=last` of `block_size` bytes, in segment files of `segment_blocks`
/// blocks: per segment they touch, its number and the byte offset and length of their
/// part of it.
fn segment_spans(first: u32, last: u32, segment_blocks: u32, block_size: u32) -> Vec<(u32, u64, u64)> {
    let mut out = Vec::new();
    let (seg, size) = (segment_blocks as u64, block_size as u64);
    let mut block = first as u64;
    while block <= last as u64 {
        let segment = block / seg;
        let end = (last as u64).min((segment + 1) * seg - 1);
        out.push((segment as u32, (block % seg) * size, (end - block + 1) * size));
        block = end + 1;
    }
    out
}

/// The virtual file descriptor of segment `segment` of `rel`'s main fork, opened now if
/// this transaction has not yet.
///
/// # Safety
/// As `prefetch_blocks`.
unsafe fn segment_file(rel: pg_sys::Relation, segment: u32) -> Option<pg_sys::File> {
    // SAFETY: `rel` is an open relation (this fn's contract).
    let (node, backend) = unsafe { ((*rel).rd_node, (*rel).rd_backend) };
    let key = (node.spcNode, node.dbNode, node.relNode, backend, segment);
    if let Some(file) = OPEN.with(|o| o.borrow().get(&key).copied()) {
        // A file that could not be opened is not tried again in this transaction.
        return (file >= 0).then_some(file);
    }
    // SAFETY: GetRelationPath pallocs the path in the current memory context; on the
    // backend thread (this fn's contract).
    let file = unsafe {
        let base = pg_sys::GetRelationPath(
            node.dbNode,
            node.spcNode,
            node.relNode,
            backend,
            pg_sys::ForkNumber::MAIN_FORKNUM,
        );
        let mut path = std::ffi::CStr::from_ptr(base).to_bytes().to_vec();
        pg_sys::pfree(base.cast());
        if segment > 0 {
            path.extend_from_slice(format!(".{segment}").as_bytes());
        }
        let path = std::ffi::CString::new(path).ok()?;
        pg_sys::PathNameOpenFile(path.as_ptr(), O_RDONLY)
    };
    OPEN.with(|o| o.borrow_mut().insert(key, file));
    (file >= 0).then_some(file)
}

/// `open`'s read-only flag (0 on every platform PostgreSQL runs on; `PG_BINARY` is 0
/// off Windows).
const O_RDONLY: i32 = 0;

/// Closes the files read ahead in, when a transaction ends (commit, abort, prepare).
///
/// # Safety
/// On the backend thread.
pub unsafe fn close_all() {
    let open = OPEN.with(|o| std::mem::take(&mut *o.borrow_mut()));
    for file in open.into_values().filter(|&f| f >= 0) {
        // SAFETY: each was opened by PathNameOpenFile in this backend and not closed.
        unsafe { pg_sys::FileClose(file) };
    }
}

#[cfg(test)]
mod tests {
    use super::segment_spans;

    #[test]
    fn spans_split_at_segment_files() {
        // Within one segment.
        assert_eq!(segment_spans(3, 5, 10, 100), vec![(0, 300, 300)]);
        // Across two and three.
        assert_eq!(segment_spans(8, 12, 10, 100), vec![(0, 800, 200), (1, 0, 300)]);
        assert_eq!(segment_spans(9, 20, 10, 100), vec![(0, 900, 100), (1, 0, 1000), (2, 0, 100)]);
        // One block; none.
        assert_eq!(segment_spans(7, 7, 10, 100), vec![(0, 700, 100)]);
        assert_eq!(segment_spans(8, 7, 10, 100), vec![]);
        // PostgreSQL's sizes, up to the last block a relation can have.
        let seg = 131_072;
        assert_eq!(
            segment_spans(seg - 1, seg, seg, 8192),
            vec![(0, (seg as u64 - 1) * 8192, 8192), (1, 0, 8192)]
        );
        let top = u32::MAX - 1;
        assert_eq!(segment_spans(top, top, seg, 8192), vec![(top / seg, (top % seg) as u64 * 8192, 8192)]);
    }
}
