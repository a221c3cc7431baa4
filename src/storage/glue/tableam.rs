//! The columnar table access method (named `pgcolumnar`, and `columnar` where that name is
//! free): the routine PostgreSQL calls. Each callback is short and delegates to `reader`,
//! `write_buffer`, `pages` and `catalog`; the routine at the bottom is the table of
//! contents. Callbacks for what columnar tables cannot do yet raise SQLSTATE 0A000 instead
//! of being left NULL (which would crash).

// The callbacks' signatures are PostgreSQL's table AM API, however many arguments.
#![allow(clippy::too_many_arguments)]

use crate::storage::catalog;
use crate::storage::change::logical_log;
use crate::storage::change::row_change;
use crate::storage::format::layout::Metapage;
use crate::storage::read::analyze_sample::BlockSample;
use crate::storage::read::bitmap_scan::BitmapScan;
use crate::storage::read::fetch::Fetcher;
use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::read::sample_scan::SampleScan;
use crate::storage::relation::pages;
use crate::storage::relation::tid::tid_row;
use crate::storage::shared::error::not_supported;
use crate::storage::shared::snapshot_kind;
use crate::storage::write::free_space;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgMemoryContexts;
use std::sync::atomic::{AtomicU64, Ordering};

pgrx::extension_sql!(
    r#"
CREATE FUNCTION pgcolumnar.columnar_handler(internal) RETURNS table_am_handler
    LANGUAGE C STRICT AS 'MODULE_PATHNAME', 'columnar_handler';
-- The access method is always `pgcolumnar`, and also `columnar` where that name is free:
-- another columnar extension (citus_columnar, Hydra) may own it, and CREATE EXTENSION must
-- not fail beside it. Both names are members of the extension (DROP EXTENSION removes
-- them) and use the same handler, so a table is columnar whichever name created it.
CREATE ACCESS METHOD pgcolumnar TYPE TABLE HANDLER pgcolumnar.columnar_handler;
COMMENT ON ACCESS METHOD pgcolumnar IS 'columnar table access method (pgcolumnar)';
-- The NOTICE saying so comes from the utility hook after CREATE EXTENSION (an extension
-- script's own NOTICEs are hidden from the client).
DO $pgcolumnar$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_am WHERE amname = 'columnar') THEN
        CREATE ACCESS METHOD columnar TYPE TABLE HANDLER pgcolumnar.columnar_handler;
        COMMENT ON ACCESS METHOD columnar IS 'columnar table access method (pgcolumnar)';
    END IF;
END
$pgcolumnar$;
"#,
    name = "access_method",
    requires = ["catalog_tables"]
);

#[repr(C)]
struct ScanDesc {
    base: pg_sys::TableScanDescData,
    /// NULL for bitmap scans, which fetch by TID instead.
    reader: *mut Reader,
    bitmap: *mut BitmapScan,
    /// Set for TABLESAMPLE scans, which fetch the rows the sampling method picks.
    sample: *mut SampleScan,
    analyze: AnalyzeState,
}

/// ANALYZE asks for physical blocks and keeps a reservoir of `targrows` rows. Rows are
/// spread evenly over the blocks, and from each sampled block we return a Bernoulli
/// sample (`analyze_sample`) small enough that the reservoir never replaces rows: it
/// then stays in row order, which is what the correlation statistic measures.
#[derive(Default, Clone, Copy)]
struct AnalyzeState {
    targrows: u64,
    /// Ordinal of the next row the reader returns.
    ordinal: u64,
    /// End of the current block's rows.
    block_end: u64,
    /// The current block's sample, and the rows to step over before its next row.
    sample: BlockSample,
    pending_skip: u64,
    /// The table's blocks and rows, measured at the first block: summing the rows of
    /// every row group for each of ANALYZE's 30,000 blocks took minutes on a table of
    /// many small row groups.
    size: Option<(u64, u64)>,
}

/// The sample size ANALYZE uses: 300 times the largest statistics target.
unsafe fn analyze_target_rows(rel: pg_sys::Relation) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the catalog
    // lookups and relation opens are allowed.
    unsafe {
        let desc = (*rel).rd_att;
        let target = (0..(*desc).natts as usize)
            .map(|i| crate::storage::relation::datum::attr(desc, i))
            .filter(|a| !a.attisdropped)
            .map(|a| if a.attstattarget < 0 { pg_sys::default_statistics_target } else { a.attstattarget })
            .max()
            .unwrap_or(pg_sys::default_statistics_target);
        300 * target.max(1) as u64
    }
}

#[repr(C)]
struct ParallelScan {
    base: pg_sys::ParallelTableScanDescData,
    next_group: AtomicU64,
}

unsafe fn scan_desc(scan: pg_sys::TableScanDesc) -> &'static mut ScanDesc {
    // SAFETY: the caller guarantees this fn's contract: `scan` is a scan descriptor begun by
    // this access method (a `ScanDesc`).
    unsafe { &mut *(scan as *mut ScanDesc) }
}

#[pg_guard]
unsafe extern "C-unwind" fn slot_callbacks(_rel: pg_sys::Relation) -> *const pg_sys::TupleTableSlotOps {
    crate::storage::relation::slot::ops()
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_begin(
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    nkeys: i32,
    key: *mut pg_sys::ScanKeyData,
    pscan: pg_sys::ParallelTableScanDesc,
    flags: u32,
) -> pg_sys::TableScanDesc {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `snapshot` is the scan's snapshot or
    // NULL (`begin` checks); `key` is valid for the reads and writes made through it here
    // (NULL only where the API allows it); `pscan` is NULL or the parallel scan area this AM
    // sized and initialized (a `ParallelScan`).
    unsafe { begin(rel, snapshot, nkeys, key, pscan, flags, None) }
}

/// Starts a scan that decodes only the attributes marked in `wanted`.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `snapshot` must be a valid snapshot
/// or NULL; `key` must be valid for the reads and writes made through it here (NULL only
/// where the API allows it); `pscan` must be NULL or the parallel scan area this AM sized and
/// initialized (a `ParallelScan`); call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn begin(
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    nkeys: i32,
    key: *mut pg_sys::ScanKeyData,
    pscan: pg_sys::ParallelTableScanDesc,
    flags: u32,
    wanted: Option<Vec<bool>>,
) -> pg_sys::TableScanDesc {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `snapshot` is a valid snapshot or NULL (checked before use); `key` is valid
    // for the reads and writes made through it here (NULL only where the API allows it);
    // `pscan` is NULL or the parallel scan area this AM sized and initialized (a
    // `ParallelScan`), and we are on the backend thread inside a transaction, so the catalog
    // lookups and relation opens are allowed.
    unsafe {
        let desc = pg_sys::palloc0(std::mem::size_of::<ScanDesc>()) as *mut ScanDesc;
        (*desc).base.rs_rd = rel;
        (*desc).base.rs_snapshot = snapshot;
        (*desc).base.rs_nkeys = nkeys;
        (*desc).base.rs_key = key;
        (*desc).base.rs_flags = flags;
        (*desc).base.rs_parallel = pscan;
        if flags & pg_sys::ScanOptions::SO_TYPE_BITMAPSCAN != 0 {
            (*desc).bitmap =
                PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(BitmapScan::new(rel));
            return desc as pg_sys::TableScanDesc;
        }
        if flags & pg_sys::ScanOptions::SO_TYPE_SAMPLESCAN != 0 {
            write_buffer::flush_before_reading(rel);
            let sample = SampleScan::new(rel, snapshot);
            (*desc).sample = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(sample);
            return desc as pg_sys::TableScanDesc;
        }
        let claim = if pscan.is_null() {
            GroupClaim::Serial { next: 0 }
        } else {
            crate::storage::shared::worker_exit::arm();
            GroupClaim::Shared(&(*(pscan as *mut ParallelScan)).next_group)
        };
        // Index builds given a scan (parallel ones, amcheck) scan with SnapshotAny: heap judges
        // every tuple version itself. Row-group metadata has versions too (masks, merges,
        // aborted inserts), so read it as of now instead: the table is locked against
        // writers, and every participant sees the same row groups. GetLatestSnapshot is not
        // allowed in parallel mode; a fresh catalog snapshot is, and is registered because
        // reading the metadata may invalidate it.
        let any = !snapshot.is_null() && (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_ANY;
        let groups_snapshot = if any {
            pg_sys::InvalidateCatalogSnapshot();
            pg_sys::RegisterSnapshot(pg_sys::GetCatalogSnapshot((*rel).rd_id))
        } else {
            snapshot
        };
        write_buffer::flush_before_reading(rel);
        let reader = Reader::new(rel, groups_snapshot, wanted, claim);
        if any {
            pg_sys::UnregisterSnapshot(groups_snapshot);
        }
        if flags & pg_sys::ScanOptions::SO_TYPE_ANALYZE != 0 {
            (*desc).analyze = AnalyzeState { targrows: analyze_target_rows(rel), ..Default::default() };
        }
        // Dropped with the memory context, so an ERROR mid-scan frees it too.
        (*desc).reader = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(reader);
        desc as pg_sys::TableScanDesc
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_end(scan: pg_sys::TableScanDesc) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`).
    unsafe {
        let desc = scan_desc(scan);
        if !desc.reader.is_null() {
            (*desc.reader).release();
        }
        if desc.base.rs_flags & pg_sys::ScanOptions::SO_TEMP_SNAPSHOT != 0 {
            pg_sys::UnregisterSnapshot(desc.base.rs_snapshot);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_rescan(
    scan: pg_sys::TableScanDesc,
    _key: *mut pg_sys::ScanKeyData,
    _set_params: bool,
    _allow_strat: bool,
    _allow_sync: bool,
    _allow_pagemode: bool,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`).
    unsafe {
        let desc = scan_desc(scan);
        if !desc.reader.is_null() {
            (*desc.reader).reread();
            (*desc.reader).restart();
        }
        if !desc.sample.is_null() {
            (*desc.sample).restart();
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_getnextslot(
    scan: pg_sys::TableScanDesc,
    direction: pg_sys::ScanDirection::Type,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `slot` is a
    // valid tuple slot.
    unsafe {
        let reader = &mut *scan_desc(scan).reader;
        let found = if direction == pg_sys::ScanDirection::BackwardScanDirection {
            reader.prev(slot)
        } else {
            reader.next(slot)
        };
        let snapshot = (*scan).rs_snapshot;
        if found && snapshot_kind::is_dirty(snapshot) {
            report_dirty_writer(snapshot, slot);
        }
        found
    }
}

/// A dirty snapshot tells its caller, for each row returned, which transaction still in
/// progress wrote it (heap sets `xmin` so at every tuple it checks): logical
/// replication's apply, finding a row by a scan, waits for that transaction and scans
/// again. Reading the metadata under the same snapshot leaves other transactions' ids in
/// it, which must not outlive the row they were read for (the caller would wait for them
/// again at every scan).
unsafe fn report_dirty_writer(snapshot: pg_sys::Snapshot, slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: `snapshot` is the scan's dirty snapshot and `slot` holds the row just read
    // (the caller's contract); the transaction-status checks read shared state.
    unsafe {
        snapshot_kind::forget_writers(snapshot);
        let writer = crate::storage::relation::slot::writer_xid(slot);
        if writer != pg_sys::InvalidTransactionId
            && !pg_sys::TransactionIdIsCurrentTransactionId(writer)
            && pg_sys::TransactionIdIsInProgress(writer)
        {
            (*snapshot).xmin = writer;
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn parallelscan_estimate(_rel: pg_sys::Relation) -> pg_sys::Size {
    std::mem::size_of::<ParallelScan>()
}

#[pg_guard]
unsafe extern "C-unwind" fn parallelscan_initialize(
    rel: pg_sys::Relation,
    pscan: pg_sys::ParallelTableScanDesc,
) -> pg_sys::Size {
    // SAFETY: PostgreSQL calls this in the leader with `rel` open and locked, and `pscan`
    // pointing at shared memory of the size `parallelscan_estimate` asked for (a
    // `ParallelScan`), not yet initialized: hence the counter is written, not assigned.
    unsafe {
        let p = pscan as *mut ParallelScan;
        (*p).base.phs_relid = (*rel).rd_id;
        (*p).base.phs_syncscan = false;
        std::ptr::write(&mut (*p).next_group, AtomicU64::new(0));
        std::mem::size_of::<ParallelScan>()
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn parallelscan_reinitialize(
    _rel: pg_sys::Relation,
    pscan: pg_sys::ParallelTableScanDesc,
) {
    // SAFETY: PostgreSQL passes the parallel scan area that `parallelscan_initialize` set up
    // (a `ParallelScan`, in shared memory for the whole parallel query).
    unsafe {
        (*(pscan as *mut ParallelScan)).next_group.store(0, Ordering::Relaxed);
    }
}

#[repr(C)]
struct IndexFetch {
    base: pg_sys::IndexFetchTableData,
    fetcher: *mut Fetcher,
}

#[pg_guard]
unsafe extern "C-unwind" fn index_fetch_begin(rel: pg_sys::Relation) -> *mut pg_sys::IndexFetchTableData {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller.
    unsafe {
        let scan = pg_sys::palloc0(std::mem::size_of::<IndexFetch>()) as *mut IndexFetch;
        (*scan).base.rel = rel;
        // Dropped with the memory context, so an ERROR mid-scan frees it too.
        let mut fetcher = Fetcher::new(rel);
        fetcher.keep_pins();
        (*scan).fetcher = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(fetcher);
        scan as *mut pg_sys::IndexFetchTableData
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_fetch_reset(data: *mut pg_sys::IndexFetchTableData) {
    // SAFETY: PostgreSQL calls this on the backend thread with the `IndexFetch`
    // `index_fetch_begin` allocated, under the scan's resource owner (as heap's, which
    // releases its current buffer here).
    unsafe { (*(*(data as *mut IndexFetch)).fetcher).release_pins() }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_fetch_end(data: *mut pg_sys::IndexFetchTableData) {
    // SAFETY: as `index_fetch_reset`. The fetcher itself goes with its memory context
    // (after an ERROR too, when the abort has released its pins and this is not called).
    unsafe { (*(*(data as *mut IndexFetch)).fetcher).close_pins() }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_fetch_tuple(
    scan: *mut pg_sys::IndexFetchTableData,
    tid: pg_sys::ItemPointer,
    snapshot: pg_sys::Snapshot,
    slot: *mut pg_sys::TupleTableSlot,
    call_again: *mut bool,
    all_dead: *mut bool,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is the IndexFetch `index_fetch_begin` allocated (its fetcher lives in the scan's
    // memory context); `call_again` is a valid out-flag and `all_dead` one or NULL (checked);
    // `tid` is a valid item pointer; `snapshot` is a valid snapshot; `slot` is a valid tuple
    // slot.
    unsafe {
        // Rows are never updated in place, so there is no chain to follow.
        *call_again = false;
        if !all_dead.is_null() {
            *all_dead = false;
        }
        (*(*(scan as *mut IndexFetch)).fetcher).fetch_or_dead(&*tid, snapshot, slot, all_dead)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_fetch_row_version(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    snapshot: pg_sys::Snapshot,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `tid` is a valid item pointer;
    // `snapshot` is a valid snapshot; `slot` is a valid tuple slot.
    unsafe {
        // The slot must own its values before the fetcher, which they point into, goes.
        let mut fetcher = Fetcher::new(rel);
        let found = fetcher.fetch(&*tid, snapshot, slot);
        if found {
            pg_sys::ExecMaterializeSlot(slot);
        }
        drop(fetcher);
        found
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_tid_valid(scan: pg_sys::TableScanDesc, tid: pg_sys::ItemPointer) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `tid` is a valid
    // item pointer.
    unsafe {
        let rel = scan_desc(scan).base.rs_rd;
        tid_row(&*tid).is_some_and(|row| row < pages::read_metapage(rel).next_row)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_get_latest_tid(scan: pg_sys::TableScanDesc, tid: pg_sys::ItemPointer) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `tid` is a valid
    // item pointer.
    unsafe { row_change::latest_version(scan_desc(scan).base.rs_rd, tid) }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_satisfies_snapshot(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    snapshot: pg_sys::Snapshot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `slot` is a valid tuple slot;
    // `snapshot` is a valid snapshot.
    unsafe { Fetcher::new(rel).visible(&(*slot).tts_tid, snapshot) }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_delete_tuples(
    rel: pg_sys::Relation,
    delstate: *mut pg_sys::TM_IndexDeleteOp,
) -> pg_sys::TransactionId {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `delstate` is the index AM's delete
    // operation (`ndeltids` entries in `deltids` and `status`), which we may update in place.
    unsafe { crate::storage::read::index_delete::delete_tuples(rel, delstate) }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_insert(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    _options: i32,
    _bistate: *mut pg_sys::BulkInsertStateData,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `slot` is a valid tuple slot.
    unsafe {
        insert_one(rel, slot, cid, 1, logical_log::owing(rel));
    }
}

/// Buffers one row; `expected` rows are about to come, and with `owe` logical decoding
/// is owed it (see `write_buffer::insert`).
unsafe fn insert_one(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    expected: usize,
    owe: bool,
) {
    // SAFETY: the caller guarantees `tuple_insert`'s contract: `rel` is an open relation,
    // locked by the caller; `slot` is a valid tuple slot.
    unsafe {
        write_buffer::insert_row(rel, slot, cid, expected, owe);
        // What autovacuum and autoanalyze go by, as heap counts it.
        pg_sys::pgstat_count_heap_insert(rel, 1);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn multi_insert(
    rel: pg_sys::Relation,
    slots: *mut *mut pg_sys::TupleTableSlot,
    nslots: i32,
    cid: pg_sys::CommandId,
    _options: i32,
    _bistate: *mut pg_sys::BulkInsertStateData,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `slots` is an array of `nslots` valid
    // tuple slots.
    unsafe {
        let owe = logical_log::owing(rel);
        for i in 0..nslots as usize {
            insert_one(rel, *slots.add(i), cid, nslots as usize - i, owe);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_insert_speculative(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    options: i32,
    bistate: *mut pg_sys::BulkInsertStateData,
    _spec_token: u32,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `slot` is a valid tuple slot; `bistate`
    // is valid for the reads and writes made through it here (NULL only where the API allows
    // it).
    unsafe {
        // Other inserters of the same key wait for this whole transaction (its row
        // reservation), not just for the speculative insertion: correct, if less concurrent.
        // Decoding sees the row once the insertion is confirmed (complete_speculative).
        let _ = (options, bistate);
        insert_one(rel, slot, cid, 1, false)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_complete_speculative(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    _spec_token: u32,
    succeeded: bool,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `slot` is a valid tuple slot.
    unsafe {
        if !succeeded {
            row_change::abandon_speculative(rel, slot);
        } else if logical_log::wanted(rel) {
            logical_log::log_confirmed_insert(rel, slot);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_delete(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    cid: pg_sys::CommandId,
    _snapshot: pg_sys::Snapshot,
    _crosscheck: pg_sys::Snapshot,
    wait: bool,
    tmfd: *mut pg_sys::TM_FailureData,
    _changing_part: bool,
) -> pg_sys::TM_Result::Type {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `tid` is a valid item pointer; `tmfd`
    // is the executor's failure-data struct, valid for writes.
    unsafe {
        let result = row_change::delete(rel, tid, cid, wait, tmfd);
        if result == pg_sys::TM_Result::TM_Ok {
            pg_sys::pgstat_count_heap_delete(rel);
            if logical_log::wanted(rel) {
                logical_log::log_delete(rel, &*tid);
            }
        }
        result
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_update(
    rel: pg_sys::Relation,
    otid: pg_sys::ItemPointer,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    _snapshot: pg_sys::Snapshot,
    _crosscheck: pg_sys::Snapshot,
    wait: bool,
    tmfd: *mut pg_sys::TM_FailureData,
    lockmode: *mut pg_sys::LockTupleMode::Type,
    update_indexes: *mut bool,
) -> pg_sys::TM_Result::Type {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `otid` is a valid item pointer; `slot`
    // is a valid tuple slot; `tmfd`, `lockmode`, `update_indexes` are valid for the reads and
    // writes made through it here (NULL only where the API allows it).
    unsafe {
        // The new version gets a new TID: every index needs an entry for it.
        *lockmode = pg_sys::LockTupleMode::LockTupleExclusive;
        *update_indexes = true;
        let result = row_change::update(rel, otid, slot, cid, wait, tmfd);
        if result == pg_sys::TM_Result::TM_Ok {
            pg_sys::pgstat_count_heap_update(rel, false);
            if logical_log::wanted(rel) {
                logical_log::log_update(rel, &*otid, slot);
            }
        }
        result
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn tuple_lock(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    _snapshot: pg_sys::Snapshot,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    mode: pg_sys::LockTupleMode::Type,
    wait_policy: pg_sys::LockWaitPolicy::Type,
    flags: u8,
    tmfd: *mut pg_sys::TM_FailureData,
) -> pg_sys::TM_Result::Type {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `tid` is a valid item pointer; `slot`
    // is a valid tuple slot; `tmfd` is the executor's failure-data struct, valid for writes.
    unsafe { row_change::lock(rel, tid, slot, cid, mode, wait_policy, flags, tmfd) }
}

#[pg_guard]
unsafe extern "C-unwind" fn finish_bulk_insert(rel: pg_sys::Relation, _options: i32) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller.
    unsafe {
        write_buffer::flush_relation((*rel).rd_id);
    }
}

unsafe fn existing_storage_id(rel: pg_sys::Relation) -> Option<u64> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the catalog
    // lookups and relation opens are allowed.
    unsafe {
        let srel = pg_sys::RelationGetSmgr(rel);
        if !pg_sys::smgrexists(srel, pg_sys::ForkNumber::MAIN_FORKNUM) || pages::nblocks(rel) == 0 {
            return None;
        }
        Some(pages::read_metapage(rel).storage_id)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_set_new_filenode(
    rel: pg_sys::Relation,
    newrnode: *const pg_sys::RelFileNode,
    persistence: std::ffi::c_char,
    freeze_xid: *mut pg_sys::TransactionId,
    minmulti: *mut pg_sys::MultiXactId,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `newrnode` is a valid relfilenode;
    // `freeze_xid` and `minmulti` are the caller's out-parameters, valid for writes.
    unsafe {
        // Rows are not stamped with transaction ids, so there is nothing to freeze.
        *freeze_xid = pg_sys::InvalidTransactionId;
        *minmulti = pg_sys::InvalidTransactionId;
        let mut node = *newrnode;
        let old = (*rel).rd_node;
        let replacing =
            old.relNode != node.relNode || old.spcNode != node.spcNode || old.dbNode != node.dbNode;
        if replacing {
            write_buffer::discard_relation((*rel).rd_id);
            if let Some(storage_id) = existing_storage_id(rel) {
                catalog::delete_storage(storage_id);
                free_space::forget_storage(storage_id);
            }
        }
        let srel = pg_sys::RelationCreateStorage(node, persistence, true);
        let needs_wal = persistence as u8 == pg_sys::RELPERSISTENCE_PERMANENT;
        let meta = Metapage::new(catalog::next_storage_id());
        pages::init_new_storage(srel, &mut node, pg_sys::ForkNumber::MAIN_FORKNUM, needs_wal, &meta);
        if persistence as u8 == pg_sys::RELPERSISTENCE_UNLOGGED {
            // What crash recovery copies over the main fork: an empty relation whose id
            // says it was reset. Logged, as heap logs its init fork, so replicas and
            // recovery have it.
            pg_sys::smgrcreate(srel, pg_sys::ForkNumber::INIT_FORKNUM, false);
            pages::log_smgrcreate(&node, pg_sys::ForkNumber::INIT_FORKNUM);
            let reset = Metapage::new(meta.storage_id | crate::storage::format::layout::RESET_STORAGE_BIT);
            pages::init_new_storage(srel, &mut node, pg_sys::ForkNumber::INIT_FORKNUM, true, &reset);
        }
        pg_sys::smgrclose(srel);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_nontransactional_truncate(rel: pg_sys::Relation) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller.
    unsafe {
        // The relation was created (or got its storage) in this transaction.
        write_buffer::discard_relation((*rel).rd_id);
        let old = pages::read_metapage(rel);
        let storage_id = old.storage_id;
        catalog::delete_storage(storage_id);
        // The stream starts over under the same storage id. Row numbers go on from where
        // they were: never handed out twice under a storage id, they name rows (and
        // vectors) for good, which the shared cache of decoded vectors relies on.
        free_space::forget_storage(storage_id);
        pg_sys::RelationTruncate(rel, 0);
        pages::reset_metapage(rel, Metapage { next_row: old.next_row, ..Metapage::new(storage_id) });
        // The indexes are rebuilt next (`RelationTruncateIndexes`), in this command: the
        // metadata rows of the old rows must be gone for its snapshot, and from this
        // backend's caches, or the rebuild reads blocks the truncation removed.
        pg_sys::CommandCounterIncrement();
        catalog::forget_relation((*rel).rd_id);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_copy_data(rel: pg_sys::Relation, newrnode: *const pg_sys::RelFileNode) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `newrnode` is a valid relfilenode.
    unsafe {
        // ALTER TABLE ... SET TABLESPACE: copy the files; the storage id travels along.
        write_buffer::flush_relation((*rel).rd_id);
        pg_sys::FlushRelationBuffers(rel);
        let persistence = (*(*rel).rd_rel).relpersistence;
        let dst = pg_sys::RelationCreateStorage(*newrnode, persistence, true);
        let src = pg_sys::RelationGetSmgr(rel);
        pg_sys::RelationCopyStorage(src, dst, pg_sys::ForkNumber::MAIN_FORKNUM, persistence);
        // An unlogged table's init fork moves too (RelationCopyStorage logs its pages).
        let init = pg_sys::ForkNumber::INIT_FORKNUM;
        if pg_sys::smgrexists(pg_sys::RelationGetSmgr(rel), init) {
            pg_sys::smgrcreate(dst, init, false);
            pages::log_smgrcreate(newrnode, init);
            pg_sys::RelationCopyStorage(pg_sys::RelationGetSmgr(rel), dst, init, persistence);
        }
        pg_sys::RelationDropStorage(rel);
        pg_sys::smgrclose(dst);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_copy_for_cluster(
    old_heap: pg_sys::Relation,
    new_heap: pg_sys::Relation,
    old_index: pg_sys::Relation,
    _use_sort: bool,
    _oldest_xmin: pg_sys::TransactionId,
    _xid_cutoff: *mut pg_sys::TransactionId,
    _multi_cutoff: *mut pg_sys::MultiXactId,
    num_tuples: *mut f64,
    tups_vacuumed: *mut f64,
    tups_recently_dead: *mut f64,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `old_heap` and `new_heap` are open relations, locked by the caller, `old_index` NULL or
    // the open clustering index; `num_tuples`, `tups_vacuumed`, `tups_recently_dead` are
    // valid for the reads and writes made through it here (NULL only where the API allows
    // it).
    unsafe {
        *tups_recently_dead = 0.0;
        crate::storage::change::rewrite::copy_for_cluster(
            old_heap,
            new_heap,
            old_index,
            num_tuples,
            tups_vacuumed,
        )
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_vacuum(
    rel: pg_sys::Relation,
    params: *mut pg_sys::VacuumParams,
    bstrategy: pg_sys::BufferAccessStrategy,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `params` is VACUUM's parameter struct,
    // valid for reads.
    unsafe {
        // Reported as heap's VACUUM reports itself (`vacuum::progress`); an ERROR ends it
        // with the transaction.
        pg_sys::pgstat_progress_start_command(
            pg_sys::ProgressCommandType::PROGRESS_COMMAND_VACUUM,
            (*rel).rd_id,
        );
        let report = crate::storage::change::vacuum::vacuum(rel, bstrategy);
        let verbose = (*params).options & pg_sys::VACOPT_VERBOSE != 0;
        let relname = std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_string_lossy();
        let message = format!(
            "columnar table \"{relname}\": {} deletes folded into row-group masks, {} row marks removed, \
         {} empty row groups freed, {} small row groups merged{}, {} live rows",
            report.folded,
            report.marks_removed,
            report.groups_freed,
            report.groups_merged,
            report.merge_skipped.map(|why| format!(" ({why})")).unwrap_or_default(),
            report.live_rows
        );
        if verbose {
            pgrx::info!("{message}");
        } else {
            pgrx::debug1!("{message}");
        }
        // An autovacuum that left small row groups unmerged (rows others were changing, or
        // many written while it merged) is not reported done: the table keeps its counts of
        // inserts and dead rows since the last report, so autovacuum comes back on its next
        // round instead of waiting for as many inserts again. Heap's VACUUM skips no work.
        let unfinished =
            pg_sys::MyBackendType == pg_sys::BackendType::B_AUTOVAC_WORKER && report.merge_unfinished();
        if !unfinished {
            pg_sys::pgstat_report_vacuum(
                (*rel).rd_id,
                (*(*rel).rd_rel).relisshared,
                report.live_rows as i64,
                report.pending_deletes as i64,
            );
        }
        let mut frozen_updated = false;
        let mut minmulti_updated = false;
        pg_sys::vac_update_relstats(
            rel,
            pages::nblocks(rel),
            report.live_rows as f64,
            0,
            (*(*rel).rd_rel).relhasindex,
            pg_sys::InvalidTransactionId,
            pg_sys::TransactionId::from(0u32), // InvalidMultiXactId: leave relminmxid alone
            &mut frozen_updated,
            &mut minmulti_updated,
            false,
        );
        pg_sys::pgstat_progress_end_command();
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_analyze_next_block(
    scan: pg_sys::TableScanDesc,
    blockno: pg_sys::BlockNumber,
    _bstrategy: pg_sys::BufferAccessStrategy,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`).
    unsafe {
        let desc = scan_desc(scan);
        let reader = &mut *desc.reader;
        let a = &mut desc.analyze;
        let (blocks, rows) = *a
            .size
            .get_or_insert_with(|| (pages::nblocks(desc.base.rs_rd).max(1) as u64, reader.total_rows()));
        let start = (blockno as u128 * rows as u128 / blocks as u128) as u64;
        a.block_end = ((blockno as u128 + 1) * rows as u128 / blocks as u128) as u64;
        a.sample =
            BlockSample::new(blockno as u64, blocks, a.block_end.saturating_sub(start), rows, a.targrows);
        a.pending_skip = a.sample.gap();
        if start > a.ordinal {
            a.ordinal += reader.skip(start - a.ordinal);
        }
        true
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_analyze_next_tuple(
    scan: pg_sys::TableScanDesc,
    _oldest_xmin: pg_sys::TransactionId,
    liverows: *mut f64,
    _deadrows: *mut f64,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `liverows` is
    // ANALYZE's counter, valid for reads and writes; `slot` is a valid tuple slot.
    unsafe {
        let desc = scan_desc(scan);
        let reader = &mut *desc.reader;
        let a = &mut desc.analyze;
        // Rows stepped over still count as live rows for the row-count estimate.
        let skipped = reader.skip(a.pending_skip.min(a.block_end.saturating_sub(a.ordinal)));
        a.ordinal += skipped;
        *liverows += skipped as f64;
        a.pending_skip = 0;
        if a.ordinal >= a.block_end || !reader.next(slot) {
            return false;
        }
        a.ordinal += 1;
        *liverows += 1.0;
        a.pending_skip = a.sample.gap();
        true
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_build_range_scan(
    table_rel: pg_sys::Relation,
    index_rel: pg_sys::Relation,
    index_info: *mut pg_sys::IndexInfo,
    _allow_sync: bool,
    _anyvisible: bool,
    _progress: bool,
    start_blockno: pg_sys::BlockNumber,
    numblocks: pg_sys::BlockNumber,
    callback: pg_sys::IndexBuildCallback,
    callback_state: *mut std::ffi::c_void,
    scan: pg_sys::TableScanDesc,
) -> f64 {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `table_rel`, `index_rel` are open relations, locked by the caller; `index_info`,
    // `callback_state` are valid for the reads and writes made through them here (NULL only
    // where the API allows it); `scan` is NULL (serial build) or a scan this access method
    // began (a `ScanDesc`) for a parallel build.
    unsafe {
        // BRIN summarizes ranges of the table's physical blocks and scans only as many as
        // the file has; TID blocks here are virtual (291 rows each, far more of them than
        // the compressed file has pages), so a BRIN index would silently miss rows.
        if (*(*index_rel).rd_rel).relam == pg_sys::BRIN_AM_OID {
            not_supported(
            "a BRIN index",
            "Columnar tables keep a min/max zone map per 2,048 values, which skips data the way BRIN would; use a B-tree index for lookups.",
        );
        }
        if start_blockno != 0 || numblocks != pg_sys::InvalidBlockNumber {
            not_supported(
                "building an index over a range of blocks",
                "Build the index over the whole table.",
            );
        }
        // A parallel build gives each participant its share of the table as a scan.
        let scan_reader = (!scan.is_null()).then(|| &mut *scan_desc(scan).reader);
        crate::storage::change::index_build::build(
            table_rel,
            index_rel,
            index_info,
            callback,
            callback_state,
            scan,
            scan_reader,
        )
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn index_validate_scan(
    table_rel: pg_sys::Relation,
    index_rel: pg_sys::Relation,
    index_info: *mut pg_sys::IndexInfo,
    snapshot: pg_sys::Snapshot,
    state: *mut pg_sys::ValidateIndexState,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `table_rel`, `index_rel` are open relations, locked by the caller; `index_info` is the
    // index's IndexInfo and `state` validate_index's state; `snapshot` is validate_index's
    // MVCC snapshot.
    unsafe {
        crate::storage::change::index_build::validate(table_rel, index_rel, index_info, snapshot, state)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_size(rel: pg_sys::Relation, fork: pg_sys::ForkNumber::Type) -> u64 {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller.
    unsafe { pg_sys::table_block_relation_size(rel, fork) }
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_needs_toast_table(_rel: pg_sys::Relation) -> bool {
    // Values of any size live in the column chunks.
    false
}

#[pg_guard]
unsafe extern "C-unwind" fn relation_estimate_size(
    rel: pg_sys::Relation,
    _attr_widths: *mut i32,
    pages_out: *mut pg_sys::BlockNumber,
    tuples: *mut f64,
    allvisfrac: *mut f64,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `rel` is an open relation, locked by the caller; `pages_out`, `tuples` and `allvisfrac`
    // are the planner's out-parameters, valid for writes.
    unsafe {
        let nblocks = pages::nblocks(rel);
        // pages::storage_id is cached with the relation; existing_storage_id's smgrexists
        // reopens the file, a tenth of a point lookup's time.
        let rows = if nblocks == 0 { 0 } else { crate::storage::read::plan_sizes::row_count(rel) };
        *pages_out = nblocks;
        *tuples = rows as f64;
        *allvisfrac = 0.0;
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_bitmap_next_block(
    scan: pg_sys::TableScanDesc,
    tbmres: *mut pg_sys::TBMIterateResult,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `tbmres` is
    // valid for the reads and writes made through it here (NULL only where the API allows it).
    unsafe { (*scan_desc(scan).bitmap).next_block(tbmres) }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_bitmap_next_tuple(
    scan: pg_sys::TableScanDesc,
    _tbmres: *mut pg_sys::TBMIterateResult,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `slot` is a
    // valid tuple slot.
    unsafe {
        let desc = scan_desc(scan);
        (*desc.bitmap).next_tuple(desc.base.rs_snapshot, slot)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_sample_next_block(
    scan: pg_sys::TableScanDesc,
    state: *mut pg_sys::SampleScanState,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `state` is the
    // executor's SampleScanState of this scan (its sampling method's routine set).
    unsafe { (*scan_desc(scan).sample).next_block(state) }
}

#[pg_guard]
unsafe extern "C-unwind" fn scan_sample_next_tuple(
    scan: pg_sys::TableScanDesc,
    state: *mut pg_sys::SampleScanState,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `scan` is a scan descriptor begun by this access method (a `ScanDesc`); `state` is the
    // executor's SampleScanState of this scan (its sampling method's routine set); `slot` is
    // a valid tuple slot.
    unsafe {
        let desc = scan_desc(scan);
        (*desc.sample).next_tuple(state, desc.base.rs_snapshot, slot)
    }
}

static mut ROUTINE: pg_sys::TableAmRoutine = pg_sys::TableAmRoutine {
    type_: pg_sys::NodeTag::T_TableAmRoutine,
    slot_callbacks: Some(slot_callbacks),
    scan_begin: Some(scan_begin),
    scan_end: Some(scan_end),
    scan_rescan: Some(scan_rescan),
    scan_getnextslot: Some(scan_getnextslot),
    // Without these, the planner does not consider TID range scans.
    scan_set_tidrange: None,
    scan_getnextslot_tidrange: None,
    parallelscan_estimate: Some(parallelscan_estimate),
    parallelscan_initialize: Some(parallelscan_initialize),
    parallelscan_reinitialize: Some(parallelscan_reinitialize),
    index_fetch_begin: Some(index_fetch_begin),
    index_fetch_reset: Some(index_fetch_reset),
    index_fetch_end: Some(index_fetch_end),
    index_fetch_tuple: Some(index_fetch_tuple),
    tuple_fetch_row_version: Some(tuple_fetch_row_version),
    tuple_tid_valid: Some(tuple_tid_valid),
    tuple_get_latest_tid: Some(tuple_get_latest_tid),
    tuple_satisfies_snapshot: Some(tuple_satisfies_snapshot),
    index_delete_tuples: Some(index_delete_tuples),
    tuple_insert: Some(tuple_insert),
    tuple_insert_speculative: Some(tuple_insert_speculative),
    tuple_complete_speculative: Some(tuple_complete_speculative),
    multi_insert: Some(multi_insert),
    tuple_delete: Some(tuple_delete),
    tuple_update: Some(tuple_update),
    tuple_lock: Some(tuple_lock),
    finish_bulk_insert: Some(finish_bulk_insert),
    relation_set_new_filenode: Some(relation_set_new_filenode),
    relation_nontransactional_truncate: Some(relation_nontransactional_truncate),
    relation_copy_data: Some(relation_copy_data),
    relation_copy_for_cluster: Some(relation_copy_for_cluster),
    relation_vacuum: Some(relation_vacuum),
    scan_analyze_next_block: Some(scan_analyze_next_block),
    scan_analyze_next_tuple: Some(scan_analyze_next_tuple),
    index_build_range_scan: Some(index_build_range_scan),
    index_validate_scan: Some(index_validate_scan),
    relation_size: Some(relation_size),
    relation_needs_toast_table: Some(relation_needs_toast_table),
    relation_toast_am: None,
    relation_fetch_toast_slice: None,
    relation_estimate_size: Some(relation_estimate_size),
    scan_bitmap_next_block: Some(scan_bitmap_next_block),
    scan_bitmap_next_tuple: Some(scan_bitmap_next_tuple),
    scan_sample_next_block: Some(scan_sample_next_block),
    scan_sample_next_tuple: Some(scan_sample_next_tuple),
};

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_columnar_handler() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// # Safety
/// Only PostgreSQL calls this, through the routine it is registered in, on the backend
/// thread, with the arguments that API defines.
#[unsafe(no_mangle)]
#[pg_guard]
pub unsafe extern "C-unwind" fn columnar_handler(_fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    pg_sys::Datum::from(std::ptr::addr_of!(ROUTINE))
}

/// Makes the routine known to `am::is_columnar`; called once from `_PG_init`.
pub fn register() {
    crate::storage::relation::am::register(std::ptr::addr_of!(ROUTINE));
}
