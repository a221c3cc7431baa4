//! VACUUM of a columnar table: folds deletes that every snapshot sees into the row
//! groups' delete masks (dropping their marks), drops the marks of finished row locks,
//! frees the metadata of row groups with no live row left, merges small row groups into
//! full ones, and removes the index entries of deleted and moved rows once no snapshot
//! can reach them. It changes metadata rows through MVCC, so readers are never blocked
//! and old snapshots keep their view; merging moves rows as UPDATEs do, so writers go on
//! too (rows they are changing or have locked stay), and it needs that no index has
//! expressions or a predicate (heap's VACUUM never runs them; VACUUM FULL merges).

use super::{merge_policy, rewrite, row_change};
use crate::pg_list;
use crate::storage::catalog::{self, RowGroupMeta};
use crate::storage::format::delete_mask::{self, DeleteMask};
use crate::storage::format::layout::{PAGE_PAYLOAD, ROW_GROUP_ROWS};
use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::relation::pages;
use crate::storage::write::write_buffer;
use crate::storage::write::{free_space, pending_marks};
use pgrx::pg_sys;
use std::rc::Rc;

/// Rows whose index entries can go: per row group (by first row), all of it (None) or
/// the rows of its mask; and rows below `limit` outside every range in `kept` (rows of
/// aborted inserts, which never became part of a row group).
struct DeadRows {
    groups: Vec<(u64, u64, Option<Rc<DeleteMask>>)>,
    kept: Vec<(u64, u64)>,
    limit: u64,
}

fn in_ranges<T>(ranges: &[(u64, u64, T)], row: u64) -> Option<&(u64, u64, T)> {
    let i = ranges.partition_point(|g| g.0 <= row).checked_sub(1)?;
    (row < ranges[i].0 + ranges[i].1).then(|| &ranges[i])
}

impl DeadRows {
    fn contains(&self, row: u64) -> bool {
        if let Some((first, _, mask)) = in_ranges(&self.groups, row) {
            return mask.as_ref().is_none_or(|m| m.is_deleted((row - first) as usize));
        }
        let i = self.kept.partition_point(|r| r.0 <= row);
        let kept = i > 0 && row < self.kept[i - 1].0 + self.kept[i - 1].1;
        row < self.limit && !kept
    }
}

unsafe extern "C-unwind" fn index_entry_is_dead(
    tid: pg_sys::ItemPointer,
    state: *mut std::ffi::c_void,
) -> bool {
    // SAFETY: the index AM's bulk delete calls this with a valid index TID and the `state` we
    // passed to index_bulk_delete (`remove_index_entries`): a `DeadRows` that outlives the
    // call, read only.
    unsafe {
        let dead = &*(state as *const DeadRows);
        crate::storage::relation::tid::tid_row(&*tid).is_some_and(|row| dead.contains(row))
    }
}

/// What one VACUUM did, for VACUUM VERBOSE and tests.
#[derive(Debug, Default)]
pub struct VacuumReport {
    pub folded: u64,
    pub marks_removed: u64,
    /// Deletes some snapshot may not see yet: folded by a later VACUUM.
    pub pending_deletes: u64,
    pub groups_freed: u64,
    pub groups_merged: u64,
    /// Why merging was skipped or left rows, if it was or did.
    pub merge_skipped: Option<&'static str>,
    /// Row groups left with fewer live rows than a merge would take (after a merge: those
    /// that `merge_policy` would have merged).
    pub small_groups: u64,
    /// Small row groups committed when the VACUUM ends, those written while it ran too.
    pub small_groups_at_end: u64,
    pub live_rows: u64,
}

/// Sets parameters of this backend's `pg_stat_progress_vacuum` row (started by
/// `relation_vacuum`), in heap's VACUUM's order: "scanning heap" while the settled
/// deletes and row groups are read, "vacuuming indexes" while the entries of removed
/// rows are deleted, "vacuuming heap" while deletes are folded into masks and small row
/// groups merged (the blocks of the merged ones counted as vacuumed), then "performing
/// final cleanup".
fn progress(params: &[(u32, u64)]) {
    let index: Vec<i32> = params.iter().map(|p| p.0 as i32).collect();
    let values: Vec<i64> = params.iter().map(|p| p.1 as i64).collect();
    // SAFETY: the backend's own progress slot, on the backend thread (VACUUM runs there).
    unsafe {
        pg_sys::pgstat_progress_update_multi_param(params.len() as i32, index.as_ptr(), values.as_ptr())
    };
}

/// `VacuumReport::merge_skipped` when rows other sessions were changing or had locked
/// were left where they are.
const MERGE_LEFT_ROWS: &str = "rows other transactions are changing or have locked were not moved";

/// An autovacuum that ends with at least this many small row groups (written while it
/// merged) is not done: 1,000 single-row transactions, autovacuum's insert threshold.
const MERGE_AGAIN_GROUPS: u64 = 1000;

impl VacuumReport {
    /// Whether a later VACUUM has merging to do that this one could not: rows other
    /// sessions were changing stayed in small row groups, or writers added many small
    /// row groups while it merged (a steady trickle), which the insert count it resets
    /// would take long to bring it back for.
    pub fn merge_unfinished(&self) -> bool {
        (self.merge_skipped == Some(MERGE_LEFT_ROWS) && self.small_groups >= 2)
            || self.small_groups_at_end >= MERGE_AGAIN_GROUPS
    }
}

/// Row groups with fewer live rows than this are merged.
pub const SMALL_GROUP_ROWS: u64 = ROW_GROUP_ROWS as u64 / 2;

/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn vacuum(rel: pg_sys::Relation, strategy: pg_sys::BufferAccessStrategy) -> VacuumReport {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the snapshot,
    // lock and index-vacuum calls are allowed.
    unsafe {
        stop_being_a_lazy_vacuum();
        // The transaction's snapshot predates the line above: others may have pruned rows
        // it still sees. Internal reads (options) use the active snapshot: a fresh one.
        pg_sys::PushActiveSnapshot(pg_sys::GetLatestSnapshot());
        let report = vacuum_storage(rel, strategy);
        pg_sys::PopActiveSnapshot();
        report
    }
}

/// Lazy VACUUM advertises PROC_IN_VACUUM, and with it every other backend leaves this
/// one's xid out of its snapshots and its xmin out of its pruning horizon: heap's VACUUM
/// writes no MVCC rows, so neither matters there. Ours rewrites metadata rows in a
/// transaction, and a snapshot taken meanwhile would take those writes for aborted ones
/// (an xid below its xmax, not in its running list, not committed) and set hint bits
/// saying so for good: the new delete mask lost, the old row-group version alive again,
/// removed marks back, rows deleted long ago visible again. So this VACUUM is an
/// ordinary writer, as VACUUM FULL is (the flag goes at transaction end anyway).
unsafe fn stop_being_a_lazy_vacuum() {
    // SAFETY: on the backend thread inside a transaction (this fn's contract), `MyProc`,
    // `ProcGlobal` and the main LWLock array are this backend's initialized shared-memory
    // state; the status flags are changed under ProcArrayLock held exclusively, at our own
    // `pgxactoff`, as vacuum_rel sets them.
    unsafe {
        let me = pg_sys::MyProc;
        if (*me).statusFlags as u32 & pg_sys::PROC_IN_VACUUM == 0 {
            return;
        }
        // Taken in exclusive mode to change the flags, as vacuum_rel does to set them.
        let proc_array_lock = &raw mut (*pg_sys::MainLWLockArray.add(PROC_ARRAY_LOCK)).lock;
        pg_sys::LWLockAcquire(proc_array_lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        (*me).statusFlags &= !(pg_sys::PROC_IN_VACUUM as u8);
        *(*pg_sys::ProcGlobal).statusFlags.add((*me).pgxactoff as usize) = (*me).statusFlags;
        pg_sys::LWLockRelease(proc_array_lock);
    }
}

/// `ProcArrayLock`'s index in the main LWLock array (lwlocknames.txt).
const PROC_ARRAY_LOCK: usize = 4;

unsafe fn vacuum_storage(rel: pg_sys::Relation, strategy: pg_sys::BufferAccessStrategy) -> VacuumReport {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the snapshot,
    // lock and index-vacuum calls are allowed.
    unsafe {
        write_buffer::flush_relation((*rel).rd_id);
        let mut report = VacuumReport::default();
        if pages::nblocks(rel) == 0 {
            return report;
        }
        progress(&[
            (pg_sys::PROGRESS_VACUUM_PHASE, pg_sys::PROGRESS_VACUUM_PHASE_SCAN_HEAP as u64),
            (pg_sys::PROGRESS_VACUUM_TOTAL_HEAP_BLKS, pages::nblocks(rel) as u64),
        ]);
        let meta = pages::read_metapage(rel);
        let storage_id = meta.storage_id;
        let oldest_xmin = pg_sys::GetOldestNonRemovableTransactionId(rel);
        // Everything is read and the indexes vacuumed before anything is written, as heap's
        // VACUUM vacuums indexes before it frees tuples. The writes below give this VACUUM
        // a transaction id, and others wait for it: a session whose dirty snapshot meets a
        // row being merged, or that locks one (logical replication's apply does both),
        // may wait holding a pin on an index leaf page, which the index's bulk delete
        // waits to see unpinned: neither would ever go on, and the deadlock detector does
        // not see buffer pins.
        let cleanup = catalog::settled_marks(storage_id, oldest_xmin);
        report.marks_removed = cleanup.settled.len() as u64;
        report.pending_deletes = cleanup.pending_deletes;

        // The groups as of now (committed ones; VACUUM runs outside any transaction block).
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        let groups: Vec<RowGroupMeta> = catalog::load_row_groups(storage_id, snapshot, false);
        pg_sys::UnregisterSnapshot(snapshot);
        // Deletes of rows whose row group is gone (rows a merge moved, the group removed
        // with them) settle too, but fold into nothing.
        report.folded = groups
            .iter()
            .map(|g| {
                let rows = &cleanup.folded;
                (rows.partition_point(|&r| r < g.first_row + g.row_count)
                    - rows.partition_point(|&r| r < g.first_row)) as u64
            })
            .sum();
        let mut dead = DeadRows { groups: Vec::new(), kept: Vec::new(), limit: 0 };
        // (group, its new mask, or None to remove it: every row is deleted).
        let mut changes: Vec<(&RowGroupMeta, Option<Rc<DeleteMask>>)> = Vec::new();
        for g in &groups {
            let Some(mask) =
                delete_mask::group_mask(g.deleted.as_deref(), &cleanup.folded, g.first_row, g.row_count)
            else {
                report.live_rows += g.row_count;
                report.small_groups += (g.row_count < SMALL_GROUP_ROWS) as u64;
                continue;
            };
            let live = g.row_count - mask.count();
            report.small_groups += (live > 0 && live < SMALL_GROUP_ROWS) as u64;
            if mask.count() == g.row_count {
                changes.push((g, None));
                dead.groups.push((g.first_row, g.row_count, None));
                continue;
            }
            report.live_rows += live;
            let mask = Rc::new(mask);
            if g.deleted.as_ref().is_none_or(|old| old.count() != mask.count()) {
                changes.push((g, Some(mask.clone())));
            }
            dead.groups.push((g.first_row, g.row_count, Some(mask)));
        }
        let dead_rows: u64 =
            dead.groups.iter().map(|(_, rows, mask)| mask.as_ref().map_or(*rows, |m| m.count())).sum();
        progress(&[
            (pg_sys::PROGRESS_VACUUM_HEAP_BLKS_SCANNED, pages::nblocks(rel) as u64),
            (pg_sys::PROGRESS_VACUUM_MAX_DEAD_TUPLES, dead_rows),
            (pg_sys::PROGRESS_VACUUM_NUM_DEAD_TUPLES, dead_rows),
        ]);
        (dead.limit, dead.kept) = rows_that_may_live(rel, storage_id, oldest_xmin);
        let limit = dead.limit;
        let covered: u64 = dead.kept.iter().map(|r| r.1.min(limit.saturating_sub(r.0))).sum();
        if !dead.groups.is_empty() || covered < limit {
            progress(&[(pg_sys::PROGRESS_VACUUM_PHASE, pg_sys::PROGRESS_VACUUM_PHASE_VACUUM_INDEX as u64)]);
            remove_index_entries(rel, &dead, report.live_rows as f64, strategy);
            progress(&[(pg_sys::PROGRESS_VACUUM_NUM_INDEX_VACUUMS, 1)]);
        }

        progress(&[(pg_sys::PROGRESS_VACUUM_PHASE, pg_sys::PROGRESS_VACUUM_PHASE_VACUUM_HEAP as u64)]);
        catalog::remove_settled_marks(&cleanup);
        catalog::delete_finished_reservations(storage_id);
        // Stream bytes of the row groups removed: reusable once no snapshot can read them.
        let mut freed: Vec<(u64, u64)> = Vec::new();
        for (g, mask) in changes {
            match mask {
                None => {
                    catalog::delete_row_group(storage_id, g.first_row);
                    freed.push((g.data_offset, g.data_length));
                    report.groups_freed += 1;
                }
                Some(mask) => catalog::set_group_mask(storage_id, g.first_row, &mask),
            }
        }
        let before = freed.iter().map(|f| f.1).sum::<u64>();
        merge_small_groups(rel, storage_id, &mut report, &mut freed);
        report.small_groups_at_end = catalog::count_small_groups(storage_id, SMALL_GROUP_ROWS);
        let merged_bytes = freed.iter().map(|f| f.1).sum::<u64>() - before;
        progress(&[(pg_sys::PROGRESS_VACUUM_HEAP_BLKS_VACUUMED, merged_bytes.div_ceil(PAGE_PAYLOAD as u64))]);
        free_space::free(storage_id, freed);
        progress(&[(pg_sys::PROGRESS_VACUUM_PHASE, pg_sys::PROGRESS_VACUUM_PHASE_FINAL_CLEANUP as u64)]);
        report
    }
}

/// The row numbers below which rows outside the returned ranges belong to inserts that
/// rolled back (their index entries can go), and those ranges (sorted, coalesced): the
/// running writers' reservation windows and the row groups some snapshot may see. A
/// writer takes a new window's numbers on the metapage and records the window under the
/// reservations lock in share mode; the numbers handed out and the reservations are read
/// under it in exclusive mode, so no writer is between the two steps (its numbers would
/// look claimed by no one). Numbers handed out in place later belong to windows already
/// recorded, or lie above the limit.
unsafe fn rows_that_may_live(
    rel: pg_sys::Relation,
    storage_id: u64,
    oldest_xmin: pg_sys::TransactionId,
) -> (u64, Vec<(u64, u64)>) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metapage and
    // metadata reads and the lock are allowed.
    unsafe {
        let (limit, mut kept) = catalog::with_reservations_lock((*rel).rd_id, pg_sys::ExclusiveLock, || {
            (pages::read_metapage(rel).next_row, catalog::running_reservations(storage_id))
        });
        // A reservation overlaps its row groups.
        kept.extend(catalog::live_group_ranges(storage_id, oldest_xmin));
        kept.sort_unstable();
        (limit, free_space::coalesce(kept))
    }
}

/// Rewrites the row groups with few live rows (left by trickle inserts or deletes) as
/// full ones, each in sort_by order if the table has one, while others write the table.
/// The moved rows get new row numbers and index entries; the old groups whose rows all
/// moved are removed for new snapshots (the others keep the rows that could not move),
/// and their index entries go in a later VACUUM, once no snapshot can still read them.
unsafe fn merge_small_groups(
    rel: pg_sys::Relation,
    storage_id: u64,
    report: &mut VacuumReport,
    freed: &mut Vec<(u64, u64)>,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the snapshot,
    // lock and index-vacuum calls are allowed.
    unsafe {
        // See the masks and freed groups this VACUUM just wrote.
        pg_sys::CommandCounterIncrement();
        if catalog::load_row_groups(storage_id, pg_sys::GetLatestSnapshot(), false).is_empty() {
            return;
        }
        // Moved rows need index entries, and an index expression or predicate is user code
        // heap's VACUUM never runs: it may fail there (ANALYZE in it does) or at any time,
        // making every VACUUM of the table fail. Merging is an optimization: leave it to
        // VACUUM FULL, which rebuilds the indexes like heap's.
        if indexes_run_user_code(rel) {
            report.merge_skipped =
                Some("merging skipped: an index has expressions or a predicate; VACUUM FULL merges");
            return;
        }
        // Rows move as an UPDATE moves them (a delete mark naming the new copy), so
        // concurrent writers are not locked out: inserts go on, and a DELETE, UPDATE or
        // row lock of a moved row follows it or fails to serialize; rows others are
        // changing or have locked stay where they are.
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        write_buffer::flush_before_reading(rel);
        let mut reader = Reader::new(rel, snapshot, None, GroupClaim::Serial { next: 0 });
        // (first row, data offset, data length, live rows) of each small group merged.
        let mut sources: Vec<(u64, u64, u64, u64)> = Vec::new();
        reader.retain_groups(|groups| {
            let small: Vec<usize> = (0..groups.len()).filter(|&i| groups[i].1 < SMALL_GROUP_ROWS).collect();
            let merge = merge_policy::groups_to_merge(
                &small
                    .iter()
                    .map(|&i| merge_policy::SmallGroup { stored: groups[i].0.row_count, live: groups[i].1 })
                    .collect::<Vec<_>>(),
            );
            let mut keep = vec![false; groups.len()];
            for (&i, _) in small.iter().zip(&merge).filter(|(_, m)| **m) {
                let (g, live) = groups[i];
                keep[i] = true;
                sources.push((g.first_row, g.data_offset, g.data_length, live));
            }
            keep
        });
        if !sources.is_empty() {
            let moving = sources.iter().map(|s| s.3 as usize).sum::<usize>();
            let mut moved = vec![0u64; sources.len()];
            let mut stayed = 0u64;
            // Opened at the first row that moves: groups whose rows are all deleted for new
            // snapshots (not yet for old ones) are merged away without touching the indexes.
            let mut indexes: Option<IndexInserter> = None;
            let cid = pg_sys::GetCurrentCommandId(true);
            // In stored order: claims go bucket by bucket. Each new row group is sorted by
            // sort_by as it is written.
            rewrite::copy_rows(&mut reader, (*rel).rd_att, rewrite::Order::Stored, None, |slot| {
                let mut old = (*slot).tts_tid;
                let Some(row) = crate::storage::relation::tid::tid_row(&old) else { return };
                if row_change::move_row(rel, &mut old, slot, cid, moving) {
                    indexes.get_or_insert_with(|| IndexInserter::open(rel)).insert(slot);
                    moved[sources.partition_point(|s| s.0 <= row) - 1] += 1;
                } else {
                    stayed += 1;
                }
            });
            pending_marks::let_go();
            write_buffer::flush_relation((*rel).rd_id);
            if let Some(indexes) = indexes {
                indexes.close();
            }
            // A group all of whose rows moved goes at once (new snapshots skip it whole);
            // the others keep the rows that stayed, their moved ones deleted by the marks.
            for (&(first_row, offset, length, live), moved) in sources.iter().zip(&moved) {
                if *moved == live {
                    catalog::delete_row_group(storage_id, first_row);
                    freed.push((offset, length));
                    report.groups_merged += 1;
                }
            }
            // Small groups left: those some rows stayed in, and the last new one if the
            // moved rows did not fill it (it is merged again next time).
            let last_new = moved.iter().sum::<u64>() % ROW_GROUP_ROWS as u64;
            report.small_groups = sources.len() as u64 - report.groups_merged
                + (last_new != 0 && last_new < SMALL_GROUP_ROWS) as u64;
            if stayed > 0 {
                report.merge_skipped = Some(MERGE_LEFT_ROWS);
            }
        }
        reader.release();
        pg_sys::UnregisterSnapshot(snapshot);
    }
}

/// Whether some index of `rel` has expressions or a predicate, which inserting an entry
/// evaluates (looked up in the relcache, nothing evaluated).
unsafe fn indexes_run_user_code(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the snapshot,
    // lock and index-vacuum calls are allowed.
    unsafe {
        let list = pg_sys::RelationGetIndexList(rel);
        let mut found = false;
        if !list.is_null() {
            for oid in pg_list::oids(list) {
                let index = pg_sys::index_open(oid, pg_sys::AccessShareLock as i32);
                found = !pg_sys::RelationGetIndexExpressions(index).is_null()
                    || !pg_sys::RelationGetIndexPredicate(index).is_null();
                pg_sys::index_close(index, pg_sys::AccessShareLock as i32);
                if found {
                    break;
                }
            }
            pg_sys::list_free(list);
        }
        found
    }
}

/// Inserts index entries for rows VACUUM moves, into every index of the table.
struct IndexInserter {
    heap: pg_sys::Relation,
    indexes: *mut pg_sys::Relation,
    count: usize,
    infos: Vec<*mut pg_sys::IndexInfo>,
    predicates: Vec<*mut pg_sys::ExprState>,
    estate: *mut pg_sys::EState,
    econtext: *mut pg_sys::ExprContext,
}

impl IndexInserter {
    unsafe fn open(heap: pg_sys::Relation) -> IndexInserter {
        // SAFETY: the caller guarantees this fn's contract: `heap` is an open relation,
        // locked by the caller, and we are on the backend thread inside a transaction, so the
        // snapshot, lock and index-vacuum calls are allowed.
        unsafe {
            let mut count = 0;
            let mut indexes: *mut pg_sys::Relation = std::ptr::null_mut();
            pg_sys::vac_open_indexes(heap, pg_sys::RowExclusiveLock as i32, &mut count, &mut indexes);
            let estate = pg_sys::CreateExecutorState();
            let econtext = pg_sys::MakePerTupleExprContext(estate);
            let infos: Vec<_> =
                (0..count as usize).map(|i| pg_sys::BuildIndexInfo(*indexes.add(i))).collect();
            let predicates =
                infos.iter().map(|&info| pg_sys::ExecPrepareQual((*info).ii_Predicate, estate)).collect();
            IndexInserter { heap, indexes, count: count as usize, infos, predicates, estate, econtext }
        }
    }

    /// Index entries for the row in `slot` (its TID set). The moved row's old entries
    /// stay until no snapshot needs them, so uniqueness is not checked again.
    unsafe fn insert(&self, slot: *mut pg_sys::TupleTableSlot) {
        // SAFETY: the caller gives a valid slot of the table's rows with its TID set (this
        // fn's contract); `self` holds the indexes `open` opened, their IndexInfos and
        // prepared predicates, and the executor state they were made in, all alive until
        // `close`.
        unsafe {
            pg_sys::MemoryContextReset((*self.econtext).ecxt_per_tuple_memory);
            (*self.econtext).ecxt_scantuple = slot;
            let mut values = [pg_sys::Datum::from(0usize); pg_sys::INDEX_MAX_KEYS as usize];
            let mut isnull = [false; pg_sys::INDEX_MAX_KEYS as usize];
            for i in 0..self.count {
                if !self.predicates[i].is_null() && !pg_sys::ExecQual(self.predicates[i], self.econtext) {
                    continue;
                }
                pg_sys::FormIndexDatum(
                    self.infos[i],
                    slot,
                    self.estate,
                    values.as_mut_ptr(),
                    isnull.as_mut_ptr(),
                );
                pg_sys::index_insert(
                    *self.indexes.add(i),
                    values.as_mut_ptr(),
                    isnull.as_mut_ptr(),
                    &mut (*slot).tts_tid,
                    self.heap,
                    pg_sys::IndexUniqueCheck::UNIQUE_CHECK_NO,
                    false,
                    self.infos[i],
                );
            }
        }
    }

    unsafe fn close(self) {
        // SAFETY: `self` is consumed, so the executor state and the index array `open` made
        // are freed and closed exactly once, inside the transaction that opened them.
        unsafe {
            pg_sys::FreeExecutorState(self.estate);
            pg_sys::vac_close_indexes(self.count as i32, self.indexes, pg_sys::NoLock as i32);
        }
    }
}

unsafe fn remove_index_entries(
    rel: pg_sys::Relation,
    dead: &DeadRows,
    live_rows: f64,
    strategy: pg_sys::BufferAccessStrategy,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the snapshot,
    // lock and index-vacuum calls are allowed.
    unsafe {
        let mut nindexes = 0;
        let mut indexes: *mut pg_sys::Relation = std::ptr::null_mut();
        pg_sys::vac_open_indexes(rel, pg_sys::RowExclusiveLock as i32, &mut nindexes, &mut indexes);
        for i in 0..nindexes as usize {
            let mut info = pg_sys::IndexVacuumInfo {
                index: *indexes.add(i),
                analyze_only: false,
                report_progress: false,
                estimated_count: false,
                message_level: pg_sys::DEBUG2 as i32,
                num_heap_tuples: live_rows,
                strategy,
            };
            let stats = pg_sys::index_bulk_delete(
                &mut info,
                std::ptr::null_mut(),
                Some(index_entry_is_dead),
                dead as *const DeadRows as *mut std::ffi::c_void,
            );
            let stats = pg_sys::index_vacuum_cleanup(&mut info, stats);
            if !stats.is_null() {
                pg_sys::pfree(stats as *mut std::ffi::c_void);
            }
        }
        pg_sys::vac_close_indexes(nindexes, indexes, pg_sys::NoLock as i32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_dead_rows_follow_masks_and_gaps() {
        assert_eq!(
            free_space::coalesce(vec![(0, 10), (0, 5), (5, 10), (20, 5), (24, 2)]),
            vec![(0, 15), (20, 6)]
        );
        let mut mask = DeleteMask::new(10);
        mask.set(3);
        let dead = DeadRows {
            groups: vec![(0, 10, Some(Rc::new(mask))), (10, 10, None)],
            kept: free_space::coalesce(vec![(0, 10), (10, 10), (30, 10)]),
            limit: 45,
        };
        assert!(dead.contains(3) && !dead.contains(4));
        assert!(dead.contains(10) && dead.contains(19));
        // Rows 20..30 belong to nothing (an aborted insert); 30..40 are kept; 45.. may be
        // handed out meanwhile.
        assert!(dead.contains(25) && !dead.contains(35) && dead.contains(42) && !dead.contains(50));
    }
}
