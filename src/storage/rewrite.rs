//! VACUUM FULL and CLUSTER: copy the rows every new snapshot sees into the new
//! relfilenode, in the order of the clustering index (CLUSTER) or of the table's
//! `sort_by` option, else in stored order. Deleted rows are left behind, row groups are
//! rebuilt full, and on sorted data the zone maps of the sort key become tight.
//!
//! Like heap's rewrite under ALTER TABLE, this is not MVCC-safe: a transaction whose
//! snapshot predates the rewrite sees the table empty afterwards.

use super::reader::{GroupClaim, Reader};
use super::{options, write_buffer};
use pgrx::pg_sys;

/// How the rows are ordered.
enum Order {
    Stored,
    /// A tuplesort fed with heap tuples (CLUSTER) or slots (sort_by).
    Cluster(*mut pg_sys::Tuplesortstate),
    Columns(*mut pg_sys::Tuplesortstate),
}

pub unsafe fn copy_for_cluster(
    old: pg_sys::Relation,
    new: pg_sys::Relation,
    old_index: pg_sys::Relation,
    num_tuples: *mut f64,
    tups_vacuumed: *mut f64,
) {
    write_buffer::flush_relation((*old).rd_id);
    let desc = (*old).rd_att;
    // Committed rows and this transaction's; the table is locked against everyone else.
    let mut reader =
        Reader::new(old, &raw mut pg_sys::SnapshotSelfData, None, GroupClaim::Serial { next: 0 });
    let stored: u64 = reader.groups().iter().map(|g| g.row_count).sum();
    let order = if !old_index.is_null() {
        Order::Cluster(pg_sys::tuplesort_begin_cluster(
            desc,
            old_index,
            pg_sys::maintenance_work_mem,
            std::ptr::null_mut(),
            pg_sys::TUPLESORT_NONE as i32,
        ))
    } else {
        match options::sort_key((*old).rd_id) {
            Some(key) => Order::Columns(key.begin_sort(desc)),
            None => Order::Stored,
        }
    };
    let slot = pg_sys::MakeSingleTupleTableSlot(desc, super::slot::ops());
    // Sorted rows come back as minimal tuples, which a virtual slot cannot hold.
    let sorted = pg_sys::MakeSingleTupleTableSlot(desc, &pg_sys::TTSOpsMinimalTuple);
    let cid = pg_sys::GetCurrentCommandId(true);
    let mut copied = 0u64;
    while reader.next(slot) {
        pgrx::check_for_interrupts!();
        match order {
            Order::Stored => {
                write_buffer::insert(new, slot, cid);
            }
            Order::Cluster(sort) => {
                let mut should_free = false;
                let tuple = pg_sys::ExecFetchSlotHeapTuple(slot, false, &mut should_free);
                pg_sys::tuplesort_putheaptuple(sort, tuple);
                if should_free {
                    pg_sys::heap_freetuple(tuple);
                }
            }
            Order::Columns(sort) => pg_sys::tuplesort_puttupleslot(sort, slot),
        }
        copied += 1;
    }
    reader.release();
    match order {
        Order::Stored => {}
        Order::Cluster(sort) => {
            pg_sys::tuplesort_performsort(sort);
            loop {
                let tuple = pg_sys::tuplesort_getheaptuple(sort, true);
                if tuple.is_null() {
                    break;
                }
                pg_sys::ExecForceStoreHeapTuple(tuple, sorted, false);
                write_buffer::insert(new, sorted, cid);
            }
            pg_sys::tuplesort_end(sort);
        }
        Order::Columns(sort) => {
            pg_sys::tuplesort_performsort(sort);
            while pg_sys::tuplesort_gettupleslot(sort, true, false, sorted, std::ptr::null_mut()) {
                write_buffer::insert(new, sorted, cid);
            }
            pg_sys::tuplesort_end(sort);
        }
    }
    pg_sys::ExecDropSingleTupleTableSlot(slot);
    pg_sys::ExecDropSingleTupleTableSlot(sorted);
    write_buffer::flush_relation((*new).rd_id);
    *num_tuples = copied as f64;
    *tups_vacuumed = stored.saturating_sub(copied) as f64;
}
