//! VACUUM of a columnar table: folds deletes that every snapshot sees into the row
//! groups' delete masks (dropping their marks), drops the marks of finished row locks,
//! frees the metadata of row groups with no live row left, and removes the index
//! entries of deleted rows. It changes only metadata rows, through MVCC, so readers
//! are never blocked and old snapshots keep their view.

use super::catalog::{self, RowGroupMeta};
use super::row_marks::{self, DeleteMask};
use super::{pages, write_buffer};
use pgrx::pg_sys;
use std::rc::Rc;

/// Rows whose index entries can go: per row group (by first row), all of it (None) or
/// the rows of its mask.
struct DeadRows {
    groups: Vec<(u64, u64, Option<Rc<DeleteMask>>)>,
}

impl DeadRows {
    fn contains(&self, row: u64) -> bool {
        let Some(i) = self.groups.partition_point(|g| g.0 <= row).checked_sub(1) else { return false };
        let (first, count, mask) = &self.groups[i];
        row < first + count && mask.as_ref().is_none_or(|m| m.is_deleted((row - first) as usize))
    }
}

unsafe extern "C-unwind" fn index_entry_is_dead(tid: pg_sys::ItemPointer, state: *mut std::ffi::c_void) -> bool {
    let dead = &*(state as *const DeadRows);
    super::fetch::tid_row(&*tid).is_some_and(|row| dead.contains(row))
}

/// What one VACUUM did, for VACUUM VERBOSE and tests.
#[derive(Debug, Default)]
pub struct VacuumReport {
    pub folded: u64,
    pub marks_removed: u64,
    pub groups_freed: u64,
    pub live_rows: u64,
}

pub unsafe fn vacuum(rel: pg_sys::Relation, strategy: pg_sys::BufferAccessStrategy) -> VacuumReport {
    write_buffer::flush_relation((*rel).rd_id);
    let mut report = VacuumReport::default();
    if pages::nblocks(rel) == 0 {
        return report;
    }
    let storage_id = pages::read_metapage(rel).storage_id;
    let oldest_xmin = pg_sys::GetOldestNonRemovableTransactionId(rel);
    let cleanup = catalog::take_settled_marks(storage_id, oldest_xmin);
    report.folded = cleanup.folded.len() as u64;
    report.marks_removed = cleanup.removed;

    // The groups as of now (committed ones; VACUUM runs outside any transaction block).
    let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
    let groups: Vec<RowGroupMeta> = catalog::load_row_groups(storage_id, snapshot, false);
    pg_sys::UnregisterSnapshot(snapshot);
    let mut dead = DeadRows { groups: Vec::new() };
    for g in &groups {
        let Some(mask) = row_marks::group_mask(g.deleted.as_deref(), &cleanup.folded, g.first_row, g.row_count)
        else {
            report.live_rows += g.row_count;
            continue;
        };
        if mask.count() == g.row_count {
            catalog::delete_row_group(storage_id, g.first_row);
            report.groups_freed += 1;
            dead.groups.push((g.first_row, g.row_count, None));
            continue;
        }
        report.live_rows += g.row_count - mask.count();
        if g.deleted.as_ref().is_none_or(|old| old.count() != mask.count()) {
            catalog::set_group_mask(storage_id, g.first_row, &mask);
        }
        dead.groups.push((g.first_row, g.row_count, Some(Rc::new(mask))));
    }
    if !dead.groups.is_empty() {
        remove_index_entries(rel, &dead, report.live_rows as f64, strategy);
    }
    report
}

unsafe fn remove_index_entries(
    rel: pg_sys::Relation,
    dead: &DeadRows,
    live_rows: f64,
    strategy: pg_sys::BufferAccessStrategy,
) {
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
