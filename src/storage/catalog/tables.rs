//! Reading and writing rows of the metadata tables as system-table code does (index
//! scans by storage id and row number, inserts with their index entries), and the
//! per-backend cache of the tables' OIDs: what every record file builds on.

use super::extension_version::{check_installed_version, forget_check};
use crate::pg_list;
use crate::storage::format::layout::ROW_GROUP_ROWS;
use crate::storage::shared::error::data_corrupted;
use hashbrown::HashMap;
use pgrx::prelude::*;
use pgrx::{pg_sys, IntoDatum};
use std::cell::RefCell;
use std::ffi::CStr;

thread_local! {
    /// OIDs of the metadata relations by name: looked up for every changed row otherwise.
    /// Emptied by any relcache invalidation of one of them (DROP EXTENSION).
    static RELIDS: RefCell<HashMap<&'static CStr, pg_sys::Oid>> = RefCell::new(HashMap::new());
}

/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub(super) unsafe fn relid(name: &'static CStr) -> pg_sys::Oid {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let oid = relid_if_installed(name);
        if oid == pg_sys::InvalidOid {
            error!("pgcolumnar metadata relation {name:?} is missing; reinstall the extension");
        }
        oid
    }
}

/// The OID of metadata relation `name`, or InvalidOid when the extension's install
/// predates it.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub(super) unsafe fn relid_if_installed(name: &'static CStr) -> pg_sys::Oid {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        if let Some(oid) = RELIDS.with(|r| r.borrow().get(name).copied()) {
            return oid;
        }
        check_installed_version();
        let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), false);
        let oid = pg_sys::get_relname_relid(name.as_ptr(), nsp);
        if oid != pg_sys::InvalidOid {
            RELIDS.with(|r| r.borrow_mut().insert(name, oid));
        }
        oid
    }
}

/// The OID of metadata relation `name`, to read or lock it; None when there is nothing
/// to read yet. That is only so while pg_upgrade restores the schema (the server in
/// binary-upgrade mode): every columnar table is then newly created and empty (its
/// files, and those of our metadata tables, are moved in after the restore), and our
/// metadata indexes come later in the dump than the user's indexes and constraints,
/// whose builds and checks read the table.
///
/// # Safety
/// As `relid`.
pub(super) unsafe fn readable_relid(name: &'static CStr) -> Option<pg_sys::Oid> {
    // SAFETY: this fn's contract is `relid`'s.
    unsafe {
        if pg_sys::IsBinaryUpgrade {
            let oid = relid_if_installed(name);
            return (oid != pg_sys::InvalidOid).then_some(oid);
        }
        Some(relid(name))
    }
}

/// `readable_relid` of a metadata table and of its index: None if either is missing.
///
/// # Safety
/// As `relid`.
unsafe fn readable_relids(table: &'static CStr, pkey: &'static CStr) -> Option<(pg_sys::Oid, pg_sys::Oid)> {
    // SAFETY: this fn's contract is `readable_relid`'s.
    unsafe { Some((readable_relid(table)?, readable_relid(pkey)?)) }
}

/// Forgets the cached OIDs of the metadata tables if `relid` is one of them (all of
/// them for InvalidOid).
pub(super) fn forget_relids(relid: pg_sys::Oid) {
    RELIDS.with(|r| {
        let mut relids = r.borrow_mut();
        if relid == pg_sys::InvalidOid || relids.values().any(|&oid| oid == relid) {
            relids.clear();
            forget_check();
        }
    });
}

// Metadata relations are closed with NoLock: their locks are kept to the end of the
// transaction, so the next open (for every changed row) finds them in the local lock
// table instead of going to the shared lock manager.

/// Inserts a heap row and its index entries with command id `cid`: the cid of the
/// INSERT that produced the rows, so that snapshots see a row group exactly when they
/// would have seen its rows in a heap table.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn insert_row(
    rel: pg_sys::Relation,
    values: &mut [pg_sys::Datum],
    nulls: &mut [bool],
    cid: u32,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metadata
    // relations may be opened, scanned and written (relation, scan and tuple pointers below
    // come from the calls that return them and are used before being closed, ended or freed).
    unsafe {
        let tup = pg_sys::heap_form_tuple((*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
        // Without logical data (as core logs TOAST rewrites): metadata rows are not user
        // changes, and decoding must not show them (glue::wal_resource_manager).
        pg_sys::heap_insert(rel, tup, cid, pg_sys::HEAP_INSERT_NO_LOGICAL as i32, std::ptr::null_mut());
        let indexes = pg_sys::RelationGetIndexList(rel);
        for index_oid in pg_list::oids(indexes) {
            let index = pg_sys::index_open(index_oid, pg_sys::RowExclusiveLock as i32);
            let info = pg_sys::BuildIndexInfo(index);
            let n = (*info).ii_NumIndexAttrs as usize;
            let mut ivalues = [pg_sys::Datum::from(0usize); pg_sys::INDEX_MAX_KEYS as usize];
            let mut inulls = [false; pg_sys::INDEX_MAX_KEYS as usize];
            for k in 0..n {
                let attno = (*info).ii_IndexAttrNumbers[k] as usize;
                ivalues[k] = values[attno - 1];
                inulls[k] = nulls[attno - 1];
            }
            pg_sys::index_insert(
                index,
                ivalues.as_mut_ptr(),
                inulls.as_mut_ptr(),
                &mut (*tup).t_self,
                rel,
                if (*(*index).rd_index).indisunique {
                    pg_sys::IndexUniqueCheck::UNIQUE_CHECK_YES
                } else {
                    pg_sys::IndexUniqueCheck::UNIQUE_CHECK_NO
                },
                false,
                info,
            );
            pg_sys::index_close(index, pg_sys::NoLock as i32);
        }
        pg_sys::heap_freetuple(tup);
    }
}

pub(super) fn datum<T: IntoDatum>(v: T) -> pg_sys::Datum {
    v.into_datum().expect("non-NULL datum")
}

/// Rows just below a looked-up row where `last_starting_at_or_before` looks first.
const NEAR_ROWS: u64 = 16;

/// Calls `f` with the row of `table` (keyed by storage id and first row) whose range
/// starts last at or before `row`, as `snapshot` sees the table: the only one that can
/// hold `row`. None if there is no such row.
///
/// Ranges (row groups, reservations) are never longer than `ROW_GROUP_ROWS` (the write
/// buffer reserves that many rows at a time and writes groups inside a reservation), so
/// only rows starting in the window just below `row` are read, forward: a backward btree
/// scan would check every earlier entry on the leaf page before returning one (about 50
/// per lookup, a third of an UPDATE's time). The `NEAR_ROWS` just below `row` are read
/// first: a trickle of small transactions leaves a range every few rows (thousands in
/// the window), and the one holding `row` then starts among them.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn last_starting_at_or_before<const N: usize, R>(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
    f: impl FnOnce(pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]) -> R,
) -> Option<R> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let window_start = (row + 1).saturating_sub(ROW_GROUP_ROWS as u64);
        let near = (row + 1).saturating_sub(NEAR_ROWS).max(window_start);
        let mut found = starting_in(table, pkey, storage_id, near, row, snapshot);
        if found.is_null() && near > window_start {
            found = starting_in(table, pkey, storage_id, window_start, near - 1, snapshot);
        }
        if found.is_null() {
            return None;
        }
        let rel = pg_sys::table_open(relid(table), pg_sys::AccessShareLock as i32);
        let mut values = [pg_sys::Datum::from(0usize); N];
        // Columns the relation lacks (an older install's) read as NULL.
        let mut nulls = [true; N];
        pg_sys::heap_deform_tuple(found, (*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
        let result = f(found, &values, &nulls);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        Some(result)
    }
}

/// A copy of the last row of `table` for `storage_id` whose first row is in
/// `from ..= to`; null if there is none.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn starting_in(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    from: u64,
    to: u64,
    snapshot: pg_sys::Snapshot,
) -> pg_sys::HeapTuple {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let Some((table_oid, index_oid)) = readable_relids(table, pkey) else { return std::ptr::null_mut() };
        let rel = pg_sys::table_open(table_oid, pg_sys::AccessShareLock as i32);
        let index = pg_sys::index_open(index_oid, pg_sys::AccessShareLock as i32);
        let mut keys = [pg_sys::ScanKeyData::default(); 3];
        let bounds = [
            (1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, storage_id),
            (2, pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT8GE, from),
            (2, pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, to),
        ];
        for (key, (attnum, strategy, proc, v)) in keys.iter_mut().zip(bounds) {
            pg_sys::ScanKeyInit(key, attnum, strategy as u16, pg_sys::Oid::from(proc), datum(v as i64));
        }
        let scan = pg_sys::systable_beginscan_ordered(rel, index, snapshot, 3, keys.as_mut_ptr());
        // A dirty snapshot must name the writers of the row returned, not of the ones before.
        let dirty = crate::storage::shared::snapshot_kind::is_dirty(snapshot);
        let mut writers = (pg_sys::InvalidTransactionId, pg_sys::InvalidTransactionId);
        let mut last: pg_sys::HeapTuple = std::ptr::null_mut();
        loop {
            if dirty {
                (*snapshot).xmin = pg_sys::InvalidTransactionId;
                (*snapshot).xmax = pg_sys::InvalidTransactionId;
            }
            let tup = pg_sys::systable_getnext_ordered(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tup.is_null() {
                break;
            }
            if dirty {
                writers = ((*snapshot).xmin, (*snapshot).xmax);
            }
            if !last.is_null() {
                pg_sys::heap_freetuple(last);
            }
            last = pg_sys::heap_copytuple(tup);
        }
        if dirty {
            ((*snapshot).xmin, (*snapshot).xmax) = writers;
        }
        pg_sys::systable_endscan_ordered(scan);
        pg_sys::index_close(index, pg_sys::NoLock as i32);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        last
    }
}

/// Calls `f` with the deformed columns of each row of `table` whose storage_id matches,
/// in primary-key order, as seen by `snapshot` (NULL: the catalog snapshot).
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it).
pub(super) unsafe fn scan_storage<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it).
    unsafe { scan_keys::<N>(table, pkey, &[storage_id], snapshot, lockmode, f) }
}

/// Like `scan_storage`, matching the leading primary-key columns to `keys` (bigints).
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn scan_keys<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    keys: &[u64],
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let bounds: Vec<ScanBound> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (i as i16 + 1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, k))
            .collect();
        scan_bounds(table, pkey, &bounds, snapshot, lockmode, f)
    }
}

/// A scan key on a bigint index column: (attnum, btree strategy, comparison proc, value).
pub(super) type ScanBound = (i16, u32, u32, u64);

/// Calls `f` with the deformed columns of each row of `table` that satisfies `bounds`
/// (through index `pkey`), as seen by `snapshot` (NULL: the catalog snapshot).
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn scan_bounds<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    bounds: &[ScanBound],
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    mut f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    // SAFETY: this fn's contract is `scan_bounds_while`'s.
    unsafe {
        scan_bounds_while(table, pkey, bounds, snapshot, lockmode, |rel, tup, v, n| {
            f(rel, tup, v, n);
            true
        })
    }
}

/// `scan_bounds`, stopping after the first row for which `f` returns false.
///
/// # Safety
/// As for `scan_bounds`.
pub(super) unsafe fn scan_bounds_while<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    bounds: &[ScanBound],
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    mut f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]) -> bool,
) {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let Some((table_oid, index_oid)) = readable_relids(table, pkey) else { return };
        let rel = pg_sys::table_open(table_oid, lockmode as i32);
        let mut scan_keys = vec![pg_sys::ScanKeyData::default(); bounds.len()];
        for (key, &(attnum, strategy, proc, v)) in scan_keys.iter_mut().zip(bounds) {
            pg_sys::ScanKeyInit(key, attnum, strategy as u16, pg_sys::Oid::from(proc), datum(v as i64));
        }
        let scan = pg_sys::systable_beginscan(
            rel,
            index_oid,
            true,
            snapshot,
            bounds.len() as i32,
            scan_keys.as_mut_ptr(),
        );
        let mut values = [pg_sys::Datum::from(0usize); N];
        // Columns the relation lacks (an older install's) read as NULL.
        let mut nulls = [true; N];
        loop {
            let tup = pg_sys::systable_getnext(scan);
            if tup.is_null() {
                break;
            }
            pg_sys::heap_deform_tuple(tup, (*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
            if !f(rel, tup, &values, &nulls) {
                break;
            }
        }
        pg_sys::systable_endscan(scan);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}

/// # Safety
/// `d` must be a bigint datum.
pub(super) unsafe fn int8(d: pg_sys::Datum) -> u64 {
    // SAFETY: `d` is a bigint datum (this fn's contract), read by value.
    unsafe {
        i64::from_datum(d, false).unwrap_or_else(|| data_corrupted("a bigint metadata column is NULL")) as u64
    }
}

/// The value of a metadata column that is never NULL (`what`: table.column). A NULL
/// there, or a value that does not convert, is corrupt metadata: XX001, never a panic.
///
/// # Safety
/// Unless `is_null`, `d` must be a valid datum of a type `T` converts from (by-reference
/// ones pointing at live memory).
pub(super) unsafe fn not_null<T: FromDatum>(d: pg_sys::Datum, is_null: bool, what: &str) -> T {
    // SAFETY: `d` is a valid datum of a type `T` reads, unless `is_null` (this fn's contract).
    unsafe { T::from_datum(d, is_null).unwrap_or_else(|| data_corrupted(&format!("{what} is NULL"))) }
}
