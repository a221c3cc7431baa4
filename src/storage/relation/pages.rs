//! The relation's main fork as a metapage plus an append-only byte stream (see
//! `layout`), read and written through the buffer manager. Every change is WAL-logged,
//! so data survives a crash and reaches physical replicas: a write of bytes into a page
//! as pgcolumnar's own `PAGE_WRITE` record (just the bytes; `redo_page_write` replays
//! it), or as a generic WAL record when the library was not preloaded (its resource
//! manager is registered only then), and a rewritten metapage as a generic one.

use super::am_cache;
use super::recent_buffers;
use crate::storage::format::encoding::CorruptData;
use crate::storage::format::fallible;
use crate::storage::format::layout::{self, Metapage, BLOCK_SIZE, METAPAGE_BLOCK, METAPAGE_LEN, PAGE_HEADER};
use crate::storage::format::logical_record::{
    FileNode, MAX_GROUP_BLOCKS, PAGE_INIT, PAGE_WRITE, RESOURCE_MANAGER_ID, ROW_GROUP_WRITE, SPACE_REUSE,
};
use crate::storage::format::{cache_lines, page_write, space_reuse};
use crate::storage::shared::error::{data_corrupted, newer_format};
use crate::storage::shared::transaction_state;
use pgrx::pg_sys;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether page writes are logged as `PAGE_WRITE` records: pgcolumnar's resource manager
/// is registered (in the postmaster, inherited by every backend), so recovery and
/// replicas, which load the same `shared_preload_libraries`, can replay them.
static PAGE_RECORDS: AtomicBool = AtomicBool::new(false);

/// Called once the resource manager is registered.
pub fn log_page_writes_as_records() {
    PAGE_RECORDS.store(true, Ordering::Relaxed);
}

// From catalog/storage_xlog.h, which pgrx does not bind.
extern "C-unwind" {
    #[link_name = "log_smgrcreate"]
    fn log_smgrcreate_unguarded(rnode: *const pg_sys::RelFileNode, fork: pg_sys::ForkNumber::Type);
}

/// Logs a fork's creation, so that recovery and replicas create it (an unlogged
/// relation's init fork). An ERROR in it is turned into a Rust panic at this boundary.
///
/// # Safety
/// `rnode` must be a valid relfilenode.
pub unsafe fn log_smgrcreate(rnode: *const pg_sys::RelFileNode, fork: pg_sys::ForkNumber::Type) {
    // SAFETY: the caller guarantees this fn's contract: `rnode` is a valid relfilenode.
    unsafe { pg_sys::ffi::pg_guard_ffi_boundary(|| log_smgrcreate_unguarded(rnode, fork)) }
}

/// An 8 kB page image aligned for smgr writes (like PostgreSQL's PGAlignedBlock).
#[repr(C, align(8))]
struct AlignedBlock([u8; BLOCK_SIZE]);

unsafe fn page_header(page: pg_sys::Page) -> *mut pg_sys::PageHeaderData {
    page as *mut pg_sys::PageHeaderData
}

/// Raises `pd_lower` to cover `end`: generic WAL and full-page images skip the bytes
/// between `pd_lower` and `pd_upper` of a standard page, so written bytes must lie below it.
unsafe fn cover_up_to(page: pg_sys::Page, end: usize) {
    // SAFETY: the caller passes a writable, PageInit'ed page (a locked buffer's page or a
    // local block), so its header may be read and written.
    unsafe {
        let hdr = page_header(page);
        if ((*hdr).pd_lower as usize) < end {
            (*hdr).pd_lower = end as u16;
        }
    }
}

unsafe fn write_metapage_bytes(page: pg_sys::Page, meta: &Metapage) {
    // SAFETY: the caller passes a writable, PageInit'ed page of BLOCK_SIZE bytes (a locked
    // buffer's page or a local block), so the metapage bytes after its header fit inside it.
    unsafe {
        let bytes = meta.to_bytes();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (page as *mut u8).add(PAGE_HEADER), METAPAGE_LEN);
        cover_up_to(page, PAGE_HEADER + METAPAGE_LEN);
    }
}

/// Writes the metapage of a brand-new relfilenode straight through smgr, as index builds
/// do: WAL-logged when the relation is, and synced so a checkpoint cannot lose it.
///
/// # Safety
/// `srel` must be an open storage-manager relation; `rnode` must be a valid relfilenode;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn init_new_storage(
    srel: pg_sys::SMgrRelation,
    rnode: &mut pg_sys::RelFileNode,
    fork: pg_sys::ForkNumber::Type,
    needs_wal: bool,
    meta: &Metapage,
) {
    // SAFETY: the caller guarantees this fn's contract: `srel` is an open storage-manager
    // relation; `rnode` is a valid relfilenode, and we are on the backend thread inside a
    // transaction, so the buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        let mut block = AlignedBlock([0; BLOCK_SIZE]);
        let page = block.0.as_mut_ptr() as pg_sys::Page;
        pg_sys::PageInit(page, BLOCK_SIZE, 0);
        write_metapage_bytes(page, meta);
        if needs_wal {
            pg_sys::log_newpage(rnode, fork, METAPAGE_BLOCK, page, true);
        }
        pg_sys::PageSetChecksumInplace(page, METAPAGE_BLOCK);
        pg_sys::smgrextend(srel, fork, METAPAGE_BLOCK, page, true);
        pg_sys::smgrimmedsync(srel, fork);
    }
}

/// A pinned buffer of main-fork block `block`.
pub(super) unsafe fn read_buffer(
    rel: pg_sys::Relation,
    block: u32,
    strategy: pg_sys::BufferAccessStrategy,
) -> pg_sys::Buffer {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        pg_sys::ReadBufferExtended(
            rel,
            pg_sys::ForkNumber::MAIN_FORKNUM,
            block,
            pg_sys::ReadBufferMode::RBM_NORMAL,
            strategy,
        )
    }
}

/// Number of blocks in the main fork.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn nblocks(rel: pg_sys::Relation) -> u32 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM) }
}

/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn read_metapage(rel: pg_sys::Relation) -> Metapage {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract), so its
    // buffers may be read; the metapage bytes are read only while `buf` is pinned and
    // share-locked, and `METAPAGE_LEN` bytes after the page header lie within the block.
    unsafe {
        if nblocks(rel) == 0 {
            data_corrupted("columnar relation has no metapage");
        }
        let buf = read_buffer(rel, METAPAGE_BLOCK, std::ptr::null_mut());
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
        let page = pg_sys::BufferGetPage(buf) as *const u8;
        let bytes = std::slice::from_raw_parts(page.add(PAGE_HEADER), METAPAGE_LEN);
        let meta = Metapage::from_bytes(bytes);
        let version = Metapage::version(bytes);
        pg_sys::UnlockReleaseBuffer(buf);
        meta.unwrap_or_else(|e| metapage_unreadable(rel, e, version))
    }
}

/// Raises the error for a metapage that `Metapage::from_bytes` refused with `e`
/// (`version`: the format it names, if it is a metapage at all): a newer format than
/// this library reads is named as such, anything else is damage.
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn metapage_unreadable(rel: pg_sys::Relation, e: CorruptData, version: Option<u32>) -> ! {
    match version {
        Some(v) if v > layout::FORMAT_VERSION => {
            // SAFETY: `rel` is open (this fn's contract), so its name may be read.
            let name = unsafe { std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()) };
            newer_format(&name.to_string_lossy(), v, layout::FORMAT_VERSION)
        }
        _ => data_corrupted(&e.to_string()),
    }
}

/// The storage id of `rel`'s current relfilenode, kept in its relcache entry
/// (`am_cache`) once read from the metapage.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn storage_id(rel: pg_sys::Relation) -> u64 {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract).
    unsafe {
        if let Some(storage_id) = am_cache::storage_id(rel) {
            return storage_id;
        }
        let storage_id = read_metapage(rel).storage_id;
        if storage_id & layout::RESET_STORAGE_BIT != 0 {
            // Not kept: the relation's first write replaces it (`replace_reset_storage_id`).
            return storage_id;
        }
        am_cache::keep_storage_id(rel, storage_id);
        storage_id
    }
}

/// Applies `change` to the metapage under an exclusive buffer lock, WAL-logged, and
/// returns its result. Serializes concurrent reservations of rows and stream space.
unsafe fn update_metapage<T>(rel: pg_sys::Relation, change: impl FnOnce(&mut Metapage) -> T) -> T {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); `page` is
    // the metapage buffer's, pinned and exclusively locked until released, and
    // `METAPAGE_LEN` bytes after its header lie within it.
    unsafe {
        let buf = read_buffer(rel, METAPAGE_BLOCK, std::ptr::null_mut());
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
        let page = pg_sys::BufferGetPage(buf);
        let bytes = std::slice::from_raw_parts((page as *const u8).add(PAGE_HEADER), METAPAGE_LEN);
        let mut meta = match Metapage::from_bytes(bytes) {
            Ok(m) => m,
            Err(e) => {
                let version = Metapage::version(bytes);
                pg_sys::UnlockReleaseBuffer(buf);
                metapage_unreadable(rel, e, version)
            }
        };
        let result = change(&mut meta);
        write_page(rel, buf, PAGE_HEADER, &meta.to_bytes());
        pg_sys::UnlockReleaseBuffer(buf);
        result
    }
}

/// Gives an unlogged relation that crash recovery reset (see
/// `layout::RESET_STORAGE_BIT`) the storage id `fresh`; returns the stale id whose
/// metadata is left over, or None if the relation was not in that state (any more).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn replace_reset_storage_id(rel: pg_sys::Relation, fresh: u64) -> Option<u64> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let reset = m.storage_id & layout::RESET_STORAGE_BIT != 0;
            let stale = m.storage_id & !layout::RESET_STORAGE_BIT;
            reset.then(|| {
                m.storage_id = fresh;
                stale
            })
        })
    }
}

/// Reserves `count` row numbers; returns the first.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reserve_rows(rel: pg_sys::Relation, count: u64) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let first = m.next_row;
            m.next_row += count;
            first
        })
    }
}

/// Hands out `count` more row numbers to the reservation ending at `end`, if no one has
/// reserved after it (`end` is still the next row number); false otherwise.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn extend_rows(rel: pg_sys::Relation, end: u64, count: u64) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let last = m.next_row == end;
            if last {
                m.next_row += count;
            }
            last
        })
    }
}

/// Takes back the row numbers `used_end .. end` handed out last, if no one has taken any
/// after them (`end` is still the next row number).
///
/// # Safety
/// As for `extend_rows`.
pub unsafe fn give_back_rows(rel: pg_sys::Relation, end: u64, used_end: u64) {
    // SAFETY: as for `extend_rows` (this fn's contract).
    unsafe {
        update_metapage(rel, |m| {
            if m.next_row == end {
                m.next_row = used_end;
            }
        })
    }
}

/// Reserves `len` bytes of stream space; returns their offset.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reserve_stream(rel: pg_sys::Relation, len: u64) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let at = m.next_offset;
            m.next_offset += len;
            at
        })
    }
}

/// Reserves at least `len` bytes of stream space, up to the end of the page the last of
/// them is in; returns their offset and how many were reserved.
///
/// # Safety
/// As for `reserve_stream`.
pub unsafe fn reserve_stream_to_page_end(rel: pg_sys::Relation, len: u64) -> (u64, u64) {
    // SAFETY: as for `reserve_stream` (this fn's contract).
    unsafe {
        update_metapage(rel, |m| {
            let at = m.next_offset;
            m.next_offset = layout::page_end_after(at + len);
            (at, m.next_offset - at)
        })
    }
}

/// Rewrites the metapage of an existing relfilenode (after a non-transactional truncate).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reset_metapage(rel: pg_sys::Relation, meta: Metapage) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); `page` is
    // the generic-WAL image of the pinned, exclusively locked metapage buffer, written before
    // GenericXLogFinish and the unlock.
    unsafe {
        let buf = extend_to(rel, METAPAGE_BLOCK);
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
        let state = pg_sys::GenericXLogStart(rel);
        let page = pg_sys::GenericXLogRegisterBuffer(state, buf, pg_sys::GENERIC_XLOG_FULL_IMAGE as i32);
        pg_sys::PageInit(page, BLOCK_SIZE, 0);
        write_metapage_bytes(page, &meta);
        pg_sys::GenericXLogFinish(state);
        pg_sys::UnlockReleaseBuffer(buf);
    }
}

/// How many blocks the relation had when this backend last counted or extended it (0 if
/// it does not know): a lower bound, since a columnar relation's file only shrinks by a
/// truncate, which resets the count (`smgrtruncate` here, an smgr invalidation in other
/// backends, received when they lock the relation). Saves the `lseek` that counting
/// costs on every write of a page that exists.
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn known_blocks(rel: pg_sys::Relation) -> u32 {
    // SAFETY: `rel` is open (this fn's contract); its smgr handle, if any, is valid.
    unsafe {
        let smgr = (*rel).rd_smgr;
        match smgr.is_null() {
            true => 0,
            false => match (*smgr).smgr_cached_nblocks[pg_sys::ForkNumber::MAIN_FORKNUM as usize] {
                pg_sys::InvalidBlockNumber => 0,
                n => n,
            },
        }
    }
}

/// A pinned buffer for `block`, extending the relation when it does not reach it yet.
unsafe fn extend_to(rel: pg_sys::Relation, block: u32) -> pg_sys::Buffer {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); blocks are
    // read or added under the relation-extension lock, and every buffer not returned is
    // released.
    unsafe {
        let read = |b: u32| read_buffer(rel, b, std::ptr::null_mut());
        if block < known_blocks(rel) || block < nblocks(rel) {
            return read(block);
        }
        pg_sys::LockRelationForExtension(rel, pg_sys::ExclusiveLock as i32);
        let buf = loop {
            if block < nblocks(rel) {
                break read(block);
            }
            // Blocks between the old end and ours belong to other writers' reservations;
            // they are created empty here and filled by their owners.
            let b = read(pg_sys::InvalidBlockNumber); // P_NEW
            if pg_sys::BufferGetBlockNumber(b) == block {
                break b;
            }
            pg_sys::ReleaseBuffer(b);
        };
        pg_sys::UnlockRelationForExtension(rel, pg_sys::ExclusiveLock as i32);
        buf
    }
}

/// Writes `data` at stream offset `offset` (space reserved with `reserve_stream`).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn write_stream(rel: pg_sys::Relation, offset: u64, data: &[u8]) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); each page
    // is written while its buffer is pinned and exclusively locked, and
    // `in_page + n <= BLOCK_SIZE` keeps the write inside the page.
    unsafe {
        let mut done = 0usize;
        for (block, in_page, n) in layout::page_spans(offset, data.len()) {
            let buf = extend_to(rel, block);
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
            write_page(rel, buf, in_page, &data[done..done + n]);
            pg_sys::UnlockReleaseBuffer(buf);
            done += n;
        }
    }
}

/// WAL insertion calls made inside a critical section, without pgrx's per-call guard (a
/// sigsetjmp each, nine a page write): there an ERROR becomes a PANIC, which aborts the
/// process instead of longjmping past the Rust frames, so the guard would catch nothing.
mod in_critical_section {
    use pgrx::pg_sys;
    extern "C-unwind" {
        #[link_name = "XLogBeginInsert"]
        pub fn begin_insert();
        #[link_name = "XLogSetRecordFlags"]
        pub fn set_record_flags(flags: u8);
        #[link_name = "XLogRegisterData"]
        pub fn register_data(data: *mut std::ffi::c_char, len: i32);
        #[link_name = "XLogRegisterBuffer"]
        pub fn register_buffer(block_id: u8, buffer: pg_sys::Buffer, flags: u8);
        #[link_name = "XLogRegisterBufData"]
        pub fn register_buf_data(block_id: u8, data: *mut std::ffi::c_char, len: i32);
        #[link_name = "XLogInsert"]
        pub fn insert(rmid: pg_sys::RmgrId, info: u8) -> pg_sys::XLogRecPtr;
        #[link_name = "MarkBufferDirty"]
        pub fn mark_buffer_dirty(buffer: pg_sys::Buffer);
    }
}

/// InvalidSubTransactionId (c.h), which pgrx does not bind.
const INVALID_SUBTRANSACTION: pg_sys::SubTransactionId = 0;

/// Whether changes of `rel` are WAL-logged: PostgreSQL's `RelationNeedsWAL` (a permanent
/// relation, unless `wal_level = minimal` and its file was made in this transaction,
/// which is then synced at commit instead).
unsafe fn needs_wal(rel: pg_sys::Relation) -> bool {
    // SAFETY: `rel` is an open relation (the caller's contract); `wal_level` is a GUC.
    unsafe {
        (*(*rel).rd_rel).relpersistence == pg_sys::RELPERSISTENCE_PERMANENT as std::ffi::c_char
            && (pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_REPLICA as i32
                || ((*rel).rd_createSubid == INVALID_SUBTRANSACTION
                    && (*rel).rd_firstRelfilenodeSubid == INVALID_SUBTRANSACTION))
    }
}

/// Writes `bytes` at `in_page` into the page of `buf` (pinned and exclusively locked by
/// the caller), initializing it first if it is new, and WAL-logs the write.
///
/// # Safety
/// `rel` must be the buffer's relation, open and locked; `in_page + bytes.len()` must not
/// pass the page's end; call on the backend thread inside a transaction.
unsafe fn write_page(rel: pg_sys::Relation, buf: pg_sys::Buffer, in_page: usize, bytes: &[u8]) {
    assert!(in_page >= PAGE_HEADER && in_page + bytes.len() <= BLOCK_SIZE, "a page write outside its page");
    // SAFETY: the caller holds the buffer pinned and exclusively locked, so its page may be
    // written; the copy stays inside it (checked above). Between the critical section's
    // start and end nothing can fail but the WAL insert, whose failure PANICs as in heap.
    unsafe {
        let page = pg_sys::BufferGetPage(buf);
        let is_new = pg_sys::PageIsNew(page);
        if !PAGE_RECORDS.load(Ordering::Relaxed) {
            let state = pg_sys::GenericXLogStart(rel);
            let flags = if is_new { pg_sys::GENERIC_XLOG_FULL_IMAGE as i32 } else { 0 };
            let image = pg_sys::GenericXLogRegisterBuffer(state, buf, flags);
            apply_page_write(image, is_new, in_page, bytes);
            pg_sys::GenericXLogFinish(state);
            return;
        }
        let logged = needs_wal(rel);
        pg_sys::CritSectionCount += 1;
        use in_critical_section as wal;
        apply_page_write(page, is_new, in_page, bytes);
        wal::mark_buffer_dirty(buf);
        if logged {
            let header = page_write::header(in_page);
            wal::begin_insert();
            let will_init = if is_new { pg_sys::REGBUF_WILL_INIT } else { 0 };
            wal::register_buffer(0, buf, (pg_sys::REGBUF_STANDARD | will_init) as u8);
            wal::register_buf_data(0, header.as_ptr() as *mut _, header.len() as i32);
            wal::register_buf_data(0, bytes.as_ptr() as *mut _, bytes.len() as i32);
            let info = PAGE_WRITE | if is_new { PAGE_INIT } else { 0 };
            let lsn = wal::insert(RESOURCE_MANAGER_ID, info);
            set_page_lsn(page, lsn);
        }
        pg_sys::CritSectionCount -= 1;
    }
}

/// Writes `data`, a row group's bytes, at stream offset `offset` (space allocated to the
/// caller) in one `ROW_GROUP_WRITE` record: a page write for each page the bytes fall
/// into, which redo replays, and, if `rows` is not empty, its main data: what decoding
/// needs to read the rows it logs out of the same bytes (`format::row_group_record`).
/// False, with nothing written, when the bytes fall into more than `MAX_GROUP_BLOCKS`
/// pages or pages are not logged by our records (the caller then writes them with
/// `write_stream`).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread
/// inside a transaction.
pub unsafe fn write_row_group(rel: pg_sys::Relation, offset: u64, data: &[u8], rows: &[u8]) -> bool {
    struct Piece<'a> {
        block: u32,
        buf: pg_sys::Buffer,
        in_page: usize,
        bytes: &'a [u8],
        header: [u8; page_write::HEADER_BYTES],
        is_new: bool,
    }
    let mut done = 0usize;
    let mut pieces: Vec<Piece<'_>> = layout::page_spans(offset, data.len())
        .map(|(block, in_page, n)| {
            let bytes = &data[done..done + n];
            done += n;
            Piece { block, buf: 0, in_page, bytes, header: [0; page_write::HEADER_BYTES], is_new: false }
        })
        .collect();
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract). The pages
    // are pinned, then locked in block order (no other writer holds two at once), and
    // written inside the critical section, which nothing but the WAL insert can fail (a
    // failure PANICs, as in heap); the headers and bytes live until XLogInsert copied them.
    unsafe {
        if pieces.is_empty()
            || pieces.len() > MAX_GROUP_BLOCKS
            || !PAGE_RECORDS.load(Ordering::Relaxed)
            || !needs_wal(rel)
        {
            return false;
        }
        for p in &mut pieces {
            p.buf = extend_to(rel, p.block);
        }
        // Two registered pieces of data a block, and the main data.
        if pieces.len() > pg_sys::XLR_NORMAL_MAX_BLOCK_ID as usize + 1 {
            pg_sys::XLogEnsureRecordSpace(pieces.len() as i32 - 1, 2 * pieces.len() as i32 + 1);
        }
        for p in &pieces {
            pg_sys::LockBuffer(p.buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
        }
        pg_sys::CritSectionCount += 1;
        use in_critical_section as wal;
        for p in &mut pieces {
            let page = pg_sys::BufferGetPage(p.buf);
            p.is_new = pg_sys::PageIsNew(page);
            apply_page_write(page, p.is_new, p.in_page, p.bytes);
            wal::mark_buffer_dirty(p.buf);
            p.header = page_write::block_header(p.in_page, p.is_new);
        }
        wal::begin_insert();
        // Decoding filters changes by origin, as heap's records carry it (heap sets it
        // at every level too: it costs the record bytes only under a replication origin).
        wal::set_record_flags(pg_sys::XLOG_INCLUDE_ORIGIN as u8);
        for (i, p) in pieces.iter().enumerate() {
            // Decoding reads the bytes even where a full-page image replaces them for redo.
            let will_init = if p.is_new { pg_sys::REGBUF_WILL_INIT } else { 0 };
            let keep = if rows.is_empty() { 0 } else { pg_sys::REGBUF_KEEP_DATA };
            wal::register_buffer(i as u8, p.buf, (pg_sys::REGBUF_STANDARD | keep | will_init) as u8);
            wal::register_buf_data(i as u8, p.header.as_ptr() as *mut _, p.header.len() as i32);
            wal::register_buf_data(i as u8, p.bytes.as_ptr() as *mut _, p.bytes.len() as i32);
        }
        if !rows.is_empty() {
            wal::register_data(rows.as_ptr() as *mut _, rows.len() as i32);
        }
        let lsn = wal::insert(RESOURCE_MANAGER_ID, ROW_GROUP_WRITE);
        for p in &pieces {
            set_page_lsn(pg_sys::BufferGetPage(p.buf), lsn);
        }
        pg_sys::CritSectionCount -= 1;
        for p in &pieces {
            pg_sys::UnlockReleaseBuffer(p.buf);
        }
        true
    }
}

/// The bytes of a `ROW_GROUP_WRITE` record's row group: its blocks' bytes, in order.
///
/// # Safety
/// `record` must be a decoded `ROW_GROUP_WRITE` record.
pub unsafe fn row_group_bytes(record: *mut pg_sys::XLogReaderState) -> Result<Vec<u8>, CorruptData> {
    // SAFETY: this fn's contract: the record is decoded, with `max_block_id + 1` blocks.
    unsafe {
        let blocks = (*(*record).record).max_block_id + 1;
        let mut out = Vec::with_capacity(blocks.max(0) as usize * BLOCK_SIZE);
        for id in 0..blocks {
            let (_, _, bytes) = page_write::parse_block(block_data(record, id as u8))?;
            out.extend_from_slice(bytes);
        }
        Ok(out)
    }
}

/// Writes `record` with the session's replication origin, as heap's records carry it,
/// and, if `this_xid`, under this transaction's xid (assigned first: the record must
/// carry it, and assigning one may itself write WAL); a record that names its rows'
/// transaction needs none.
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn log_change(info: u8, record: &[u8], this_xid: bool) {
    // SAFETY: on the backend thread inside a transaction (callers' contracts); the bytes
    // stay valid until XLogInsert has copied them.
    unsafe {
        if this_xid {
            transaction_state::assign_xid();
        }
        pg_sys::XLogBeginInsert();
        pg_sys::XLogSetRecordFlags(pg_sys::XLOG_INCLUDE_ORIGIN as u8);
        pg_sys::XLogRegisterData(record.as_ptr() as *mut std::ffi::c_char, record.len() as _);
        pg_sys::XLogInsert(RESOURCE_MANAGER_ID, info);
    }
}

/// Ends redo of a record whose data is not what it should be.
unsafe fn corrupt(record: *mut pg_sys::XLogReaderState, e: CorruptData) -> ! {
    // SAFETY: `record` is the decoded record being replayed (callers).
    data_corrupted(&format!("pgcolumnar WAL record at {:X}: {}", unsafe { (*record).ReadRecPtr }, e.0))
}

/// Replays a `ROW_GROUP_WRITE` record's page writes (the resource manager's redo).
///
/// # Safety
/// `record` must be a decoded `ROW_GROUP_WRITE` record, during recovery.
pub unsafe fn redo_row_group_write(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: this fn's contract: the record is decoded, with `max_block_id + 1` blocks;
    // each buffer the redo functions return is pinned and exclusively locked until
    // released.
    unsafe {
        for id in 0..=(*(*record).record).max_block_id {
            let id = id as u8;
            // A block's data says whether its page is new; a page that was not may come as
            // a full-page image alone (without rows to decode, its data is not kept).
            let data = block_data(record, id);
            let init =
                !data.is_empty() && page_write::parse_block(data).unwrap_or_else(|e| corrupt(record, e)).0;
            redo_block(record, id, init, |payload| {
                page_write::parse_block(payload).map(|(_, at, b)| (at, b))
            });
        }
    }
}

/// Replays the write block `id` of `record` stands for (its data, read by `parse`, says
/// where and what; the page is initialized first if `init`), unless a full-page image
/// restored the page or the page is newer.
///
/// # Safety
/// `record` must be a decoded record of ours that references block `id`, during recovery.
unsafe fn redo_block(
    record: *mut pg_sys::XLogReaderState,
    id: u8,
    init: bool,
    parse: impl FnOnce(&[u8]) -> Result<(usize, &[u8]), CorruptData>,
) {
    // SAFETY: this fn's contract; the buffer the redo functions return is pinned and
    // exclusively locked until released.
    unsafe {
        let mut buf: pg_sys::Buffer = pg_sys::InvalidBuffer as pg_sys::Buffer;
        let action = if init {
            buf = pg_sys::XLogInitBufferForRedo(record, id);
            pg_sys::XLogRedoAction::BLK_NEEDS_REDO
        } else {
            pg_sys::XLogReadBufferForRedo(record, id, &mut buf)
        };
        if action == pg_sys::XLogRedoAction::BLK_NEEDS_REDO {
            let (in_page, bytes) = parse(block_data(record, id)).unwrap_or_else(|e| corrupt(record, e));
            let page = pg_sys::BufferGetPage(buf);
            apply_page_write(page, init, in_page, bytes);
            set_page_lsn(page, (*record).EndRecPtr);
            pg_sys::MarkBufferDirty(buf);
        }
        if buf != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::UnlockReleaseBuffer(buf);
        }
    }
}

/// The page change a `PAGE_WRITE` record stands for: `PageInit` of a new page, then the
/// bytes, below `pd_lower`.
///
/// # Safety
/// `page` must be a writable page of `BLOCK_SIZE` bytes (PageInit'ed unless `init`), and
/// `in_page + bytes.len() <= BLOCK_SIZE`.
unsafe fn apply_page_write(page: pg_sys::Page, init: bool, in_page: usize, bytes: &[u8]) {
    // SAFETY: this fn's contract.
    unsafe {
        if init {
            pg_sys::PageInit(page, BLOCK_SIZE, 0);
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (page as *mut u8).add(in_page), bytes.len());
        cover_up_to(page, in_page + bytes.len());
    }
}

/// PageSetLSN.
unsafe fn set_page_lsn(page: pg_sys::Page, lsn: pg_sys::XLogRecPtr) {
    // SAFETY: `page` is a valid page (the caller's), whose header starts it.
    unsafe {
        (*page_header(page)).pd_lsn =
            pg_sys::PageXLogRecPtr { xlogid: (lsn >> 32) as u32, xrecoff: lsn as u32 };
    }
}

/// Before a write puts a row group into stream space of `rel` that transaction
/// `freed_by` freed: WAL-logs a `SPACE_REUSE` record, whose redo on a hot standby
/// resolves the conflict with queries whose snapshots may still see what was there (the
/// primary waited for its own snapshots only). Without pgcolumnar's resource manager
/// (not preloaded) there is no record to log: see docs/replication.md.
///
/// # Safety
/// `rel` must be an open relation; call on the backend thread inside a transaction.
pub unsafe fn log_space_reuse(rel: pg_sys::Relation, freed_by: pg_sys::TransactionId) {
    // SAFETY: `rel` is open (this fn's contract); the payload lives until XLogInsert.
    unsafe {
        if !PAGE_RECORDS.load(Ordering::Relaxed)
            || !needs_wal(rel)
            || pg_sys::wal_level < pg_sys::WalLevel::WAL_LEVEL_REPLICA as i32
        {
            return;
        }
        let payload = space_reuse::encode(file_node(rel), freed_by.into_inner());
        pg_sys::XLogBeginInsert();
        pg_sys::XLogRegisterData(payload.as_ptr() as *mut _, payload.len() as i32);
        pg_sys::XLogInsert(RESOURCE_MANAGER_ID, SPACE_REUSE);
    }
}

/// The file node of `rel`, as our WAL records name a relation.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn file_node(rel: pg_sys::Relation) -> FileNode {
    // SAFETY: `rel` is an open relation (this fn's contract).
    let node = unsafe { (*rel).rd_node };
    FileNode { tablespace: node.spcNode.into(), database: node.dbNode.into(), relation: node.relNode.into() }
}

/// The data a decoded WAL record carries for its block `block` (empty if none).
///
/// # Safety
/// `record` must hold a decoded record, which the slice must not outlive.
pub unsafe fn block_data<'a>(record: *mut pg_sys::XLogReaderState, block: u8) -> &'a [u8] {
    // SAFETY: this fn's contract: the data is `len` bytes of the decoded record.
    unsafe {
        let mut len: pg_sys::Size = 0;
        let data = pg_sys::XLogRecGetBlockData(record, block, &mut len);
        if data.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(data as *const u8, len)
        }
    }
}

/// Replays a `PAGE_WRITE` record (the resource manager's redo).
///
/// # Safety
/// `record` must be a decoded `PAGE_WRITE` record, during recovery.
pub unsafe fn redo_page_write(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: this fn's contract: the record is decoded and references its page as block 0;
    // the buffer the redo functions return is pinned and exclusively locked until released.
    unsafe {
        let info = (*(*record).record).header.xl_info;
        // Parsed only if replayed: a full-page image comes without the block's data.
        redo_block(record, 0, info & PAGE_INIT != 0, page_write::parse);
    }
}

/// Reads `len` stream bytes at `offset` into `out` (cleared first).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, and `strategy` NULL or a valid
/// buffer access strategy; call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn read_stream(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    out: &mut Vec<u8>,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe { read_range(rel, offset, len, strategy, out, nblocks(rel)) }
}

/// `read_stream` for a caller that knows the relation's size in blocks (a scan reads
/// many ranges; asking the storage manager each time costs a system call).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, and `strategy` NULL or a valid
/// buffer access strategy; call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn read_range(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    out: &mut Vec<u8>,
    total_blocks: u32,
) {
    out.clear();
    fallible::reserve(out, len);
    // SAFETY: this fn's contract is `visit_range`'s.
    unsafe {
        visit_range(rel, offset, len, strategy, total_blocks, Ahead::Next, |bytes| {
            fallible::extend_from_slice(out, bytes)
        })
    }
}

/// What a read of a range asks the CPU to bring into its caches once it has a page's
/// bytes (`cache_lines`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ahead {
    /// Nothing: reads of scattered vectors (an index fetch's).
    Nothing,
    /// The rest of the page and the next block: a scan reads a chunk's vectors in order,
    /// so the next vector of the column begins where this one ends.
    Next,
}

/// Hands `f` the `len` stream bytes at `offset` where they lie, page by page (each
/// slice only while its buffer is pinned and share-locked), and after each page asks
/// the CPU for what `ahead` says. `f` must not call PostgreSQL.
///
/// # Safety
/// As `read_range`.
pub unsafe fn visit_range(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    total_blocks: u32,
    ahead: Ahead,
    mut f: impl FnMut(&[u8]),
) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); each page
    // is read only while its buffer is pinned and share-locked, and only below its
    // `pd_lower` (checked), so within the block.
    unsafe {
        for (block, in_page, n) in layout::page_spans(offset, len) {
            if block >= total_blocks {
                data_corrupted("columnar data lies beyond the end of the relation");
            }
            let buf = match recent_buffers::pin(rel, block) {
                Some(buf) => buf,
                None => {
                    let buf = read_buffer(rel, block, strategy);
                    recent_buffers::remember(rel, block, buf);
                    buf
                }
            };
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
            let page = pg_sys::BufferGetPage(buf);
            if ((*page_header(page)).pd_lower as usize) < in_page + n {
                pg_sys::UnlockReleaseBuffer(buf);
                data_corrupted("columnar page holds fewer bytes than its metadata claims");
            }
            f(std::slice::from_raw_parts((page as *const u8).add(in_page), n));
            let lower = (*page_header(page)).pd_lower as usize;
            pg_sys::UnlockReleaseBuffer(buf);
            if ahead == Ahead::Next {
                // Addresses only: the hint reads nothing, so the buffer need not be pinned.
                cache_lines::prefetch((page as *const u8).wrapping_add(in_page + n), lower - (in_page + n));
                if block + 1 < total_blocks {
                    recent_buffers::prefetch(rel, block + 1);
                }
            }
        }
    }
}

/// Blocks this backend has read from outside its buffers (shared and local) so far:
/// PostgreSQL's own count (`pgBufferUsage`), which EXPLAIN (BUFFERS) reports as "read".
pub fn blocks_read() -> u64 {
    // SAFETY: a plain global of this backend, read on its thread.
    unsafe { (pg_sys::pgBufferUsage.shared_blks_read + pg_sys::pgBufferUsage.local_blks_read) as u64 }
}

/// How many bytes of pinned buffer `buf`'s page are written (its `pd_lower`), read
/// under a share lock.
///
/// # Safety
/// `buf` must be a buffer this backend has pinned, on the backend thread.
pub(super) unsafe fn written_bytes(buf: pg_sys::Buffer) -> usize {
    // SAFETY: this fn's contract: `buf` is pinned, so its page stays in place; its header
    // is read under the share lock writers exclude.
    unsafe {
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
        let lower = (*page_header(pg_sys::BufferGetPage(buf))).pd_lower as usize;
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_UNLOCK as i32);
        lower
    }
}

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    // Reads through `recent_buffers` (here, as its tests need the stream's writer).
    use crate::storage::format::layout;
    use crate::storage::relation::recent_buffers::{pin, remember};
    use crate::storage::relation::{am_cache, datum, pages};
    use pgrx::prelude::*;

    /// The blocks the stream's bytes lie in.
    fn blocks(at: u64, len: usize) -> Vec<u32> {
        layout::page_spans(at, len).map(|(block, _, _)| block).collect()
    }

    /// A columnar table whose stream spans a few pages, opened; and the stream's bytes.
    unsafe fn table_of_pages(table: &str) -> (pg_sys::Relation, u64, Vec<u8>) {
        Spi::run(&format!("CREATE TABLE {table} (v int) USING columnar")).unwrap();
        let oid = Spi::get_one::<pg_sys::Oid>(&format!("SELECT '{table}'::regclass::oid")).unwrap().unwrap();
        // SAFETY: inside the test's transaction on the backend thread; the table exists.
        unsafe {
            let rel = pg_sys::relation_open(oid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
            let bytes: Vec<u8> = (0..30_000u32).map(|i| (i % 251) as u8).collect();
            let at = pages::reserve_stream(rel, bytes.len() as u64);
            pages::write_stream(rel, at, &bytes);
            (rel, at, bytes)
        }
    }

    /// The stream's bytes read as a scan reads them.
    unsafe fn read(rel: pg_sys::Relation, at: u64, len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        // SAFETY: the caller's: `rel` open and locked, inside the test's transaction.
        unsafe { pages::read_stream(rel, at, len, std::ptr::null_mut(), &mut out) };
        out
    }

    /// Reads after the first pin the buffers remembered, and read the same bytes.
    #[pg_test]
    fn a_block_read_again_is_pinned_in_the_buffer_it_was_read_in() {
        // SAFETY: inside the test's transaction on the backend thread.
        unsafe {
            let (rel, at, bytes) = table_of_pages("recent_again");
            let block = blocks(at, bytes.len())[0];
            for _ in 0..3 {
                assert_eq!(read(rel, at, bytes.len()), bytes);
            }
            let buf = pin(rel, block).expect("a block read three times is pinned directly");
            assert_eq!(pg_sys::BufferGetBlockNumber(buf), block);
            pg_sys::ReleaseBuffer(buf);
            pg_sys::relation_close(rel, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        }
    }

    /// A remembered buffer that holds another block is not pinned for this one: the
    /// buffer manager's check of its tag says no, and the read goes the usual way.
    #[pg_test]
    fn a_buffer_that_holds_another_block_is_not_taken() {
        // SAFETY: inside the test's transaction on the backend thread.
        unsafe {
            let (rel, at, bytes) = table_of_pages("recent_wrong");
            let (block, other) = (blocks(at, bytes.len())[0], blocks(at, bytes.len())[1]);
            for _ in 0..3 {
                assert_eq!(read(rel, at, bytes.len()), bytes);
            }
            let next = pin(rel, other).expect("the next block is remembered too");
            remember(rel, block, next);
            assert_eq!(pin(rel, block), None, "block {block} is not in block {other}'s buffer");
            pg_sys::ReleaseBuffer(next);
            assert_eq!(read(rel, at, bytes.len()), bytes);
            pg_sys::relation_close(rel, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        }
    }

    /// `oid`'s column heads as a record gives them, and whether they were kept before.
    unsafe fn heads(oid: pg_sys::Oid) -> (Vec<u8>, bool) {
        // SAFETY: inside the test's transaction on the backend thread; the table exists.
        unsafe {
            let rel = pg_sys::relation_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let kinds = datum::column_kinds((*rel).rd_att);
            let kept = am_cache::kept_heads(rel).is_some_and(|(k, _)| k == kinds);
            let mut out = Vec::new();
            am_cache::append_column_heads(rel, &kinds, &mut out);
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            (out, kept)
        }
    }

    /// A `ROW_GROUP_WRITE` record's column heads are kept in the relcache entry beside
    /// the storage id, until a change of the table's definition rebuilds the entry: then
    /// they are laid out again, from the new definition.
    #[pg_test]
    fn column_heads_are_kept_until_the_definition_changes() {
        Spi::run("CREATE TABLE heads_kept (a int, t text) USING columnar").unwrap();
        let oid = Spi::get_one::<pg_sys::Oid>("SELECT 'heads_kept'::regclass::oid").unwrap().unwrap();
        // SAFETY: inside the test's transaction on the backend thread; the table exists.
        unsafe {
            let rel = pg_sys::relation_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let id = pages::storage_id(rel);
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let (first, kept) = heads(oid);
            assert!(!kept, "nothing kept before the first record");
            let (again, kept) = heads(oid);
            assert!(kept && again == first, "kept for the next record");
            let rel = pg_sys::relation_open(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            assert_eq!(am_cache::storage_id(rel), Some(id), "the storage id kept beside them");
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as pg_sys::LOCKMODE);

            Spi::run("ALTER TABLE heads_kept ALTER t SET STORAGE PLAIN").unwrap();
            let (plain, kept) = heads(oid);
            assert!(!kept, "the relcache entry was rebuilt, and the heads with it");
            assert_ne!(plain, first, "a PLAIN text is not packable: another head");
            assert_eq!(plain.len(), first.len());
        }
    }
}
