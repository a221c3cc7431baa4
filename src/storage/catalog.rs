//! Metadata of columnar relations, kept in ordinary heap tables of schema `pgcolumnar`
//! and read through their primary keys. A row group is visible exactly when its
//! metadata row is visible to the reading snapshot: that is how columnar gets MVCC.

use super::cache::BoundedCache;
use super::error::data_corrupted;
use super::format::directory::{self, VectorEntry};
use super::format::layout::ROW_GROUP_ROWS;
use super::format::mark_rows::{bucket_start, offset_in_bucket, MarkRows, BUCKET_ROWS};
use super::format::row_marks::{DeleteMask, MarkKind};
use crate::pg_list;
use hashbrown::HashMap;
use pgrx::prelude::*;
use pgrx::{pg_sys, IntoDatum};
use std::cell::RefCell;
use std::ffi::CStr;
use std::rc::Rc;

pgrx::extension_sql!(
    r#"
-- Everyone may use the schema's functions (pgcolumnar.stats checks SELECT on the table
-- it is given). The metadata below is granted to nobody: pgcolumnar reads and writes it
-- with the extension's rights whoever changes a columnar table (src/storage/privilege.rs).
GRANT USAGE ON SCHEMA pgcolumnar TO PUBLIC;

CREATE SEQUENCE pgcolumnar.storage_id_seq NO CYCLE;

-- One row per row group. Row numbers first_row .. first_row + row_count - 1 map to TIDs.
CREATE TABLE pgcolumnar.row_group (
    storage_id   bigint NOT NULL,
    first_row    bigint NOT NULL,
    row_count    bigint NOT NULL,
    data_offset  bigint NOT NULL,  -- start of the row group's bytes in the stream
    data_length  bigint NOT NULL,
    deleted_rows bytea,            -- delete mask (VACUUM folds old deletes into it)
    PRIMARY KEY (storage_id, first_row)
);

-- One row per bucket of 8192 row numbers and change: the rows of the bucket one
-- statement deleted (also the old versions of its UPDATEs, with their new versions),
-- offsets from the bucket's first row, or one row lock (SELECT ... FOR UPDATE, foreign-key checks). A change takes effect
-- exactly when its row here is visible; a lock matters only while its transaction runs.
CREATE TABLE pgcolumnar.row_mark (
    storage_id bigint   NOT NULL,
    first_row  bigint   NOT NULL,  -- the bucket's first row; the row itself for a one-row mark
    kind       smallint NOT NULL,  -- 0 key share, 1 share, 2 no key update, 3 update, 4 delete
    rows       bytea    NOT NULL,  -- which rows of the bucket (offsets or a bitmap)
    successors bytea               -- an UPDATE's new versions (runs of row numbers)
);
CREATE INDEX row_mark_bucket ON pgcolumnar.row_mark (storage_id, first_row);

-- One row per range of row numbers handed to a writer, inserted by the writing
-- transaction: while it is in progress, uniqueness checks of other sessions that meet
-- one of its rows (still in its memory) find it here and wait for it.
CREATE TABLE pgcolumnar.row_reservation (
    storage_id bigint NOT NULL,
    first_row  bigint NOT NULL,
    row_count  bigint NOT NULL,
    PRIMARY KEY (storage_id, first_row)
);

-- One row per column chunk of a row group.
CREATE TABLE pgcolumnar.chunk (
    storage_id  bigint   NOT NULL,
    first_row   bigint   NOT NULL,
    attnum      smallint NOT NULL,  -- 0: the order column of a row group stored in sort_by order
    data_offset bigint   NOT NULL,  -- absolute stream offset of the chunk
    data_length bigint   NOT NULL,
    null_count  bigint   NOT NULL,
    raw_bytes   bigint   NOT NULL,  -- size of the values before encoding
    directory   bytea    NOT NULL,  -- per vector: rows, offset, length, NULLs, zone map
    PRIMARY KEY (storage_id, first_row, attnum)
);

-- Byte ranges of the stream that VACUUM freed (row groups with no live row left, or
-- merged into others): writers reuse them once no snapshot can read the old row groups
-- (src/storage/free_space.rs).
CREATE TABLE pgcolumnar.free_extent (
    storage_id  bigint NOT NULL,
    data_offset bigint NOT NULL,
    data_length bigint NOT NULL,
    PRIMARY KEY (storage_id, data_offset)
);
"#,
    name = "catalog_tables",
    bootstrap
);

const ROW_GROUP_NATTS: usize = 6;
const CHUNK_NATTS: usize = 8;

#[derive(Debug, Clone)]
pub struct ChunkMeta {
    pub attnum: i16,
    pub offset: u64,
    pub length: u64,
    pub null_count: u64,
    pub raw_bytes: u64,
    pub vectors: Vec<VectorEntry>,
}

/// The chunks of one row group.
#[derive(Debug, Clone, Default)]
pub struct Chunks {
    /// By attribute number - 1; None for columns added after the row group was written
    /// (their value is the column's default) or dropped ones.
    pub columns: Vec<Option<ChunkMeta>>,
    /// The order column (attribute number 0) of a row group a flush wrote in sort_by
    /// order: position p holds the row at offset order[p] (see `flush_order`). None when
    /// rows are stored in row-number order.
    pub order: Option<ChunkMeta>,
}

#[derive(Debug, Clone)]
pub struct RowGroupMeta {
    pub first_row: u64,
    pub row_count: u64,
    pub data_offset: u64,
    pub data_length: u64,
    pub chunks: Rc<Chunks>,
    /// Deletes folded into the row group's metadata by VACUUM.
    pub deleted: Option<Rc<DeleteMask>>,
    /// The transaction and command that wrote the row group (its rows' xmin and cmin).
    pub writer: (pg_sys::TransactionId, u32),
}

impl RowGroupMeta {
    pub fn chunk(&self, attnum: i16) -> Option<&ChunkMeta> {
        self.chunks.columns.get(attnum as usize - 1).and_then(|c| c.as_ref())
    }
}

/// Per-backend cache of parsed chunk metadata, keyed by (storage id, first row). A row
/// group's chunks never change once written (a storage id is never reused), so an entry
/// cannot go stale; only whether the row group is visible depends on the snapshot, and
/// that is read from `row_group` each time. Entries of a relation are dropped on its
/// relcache invalidation (`forget_relation`).
struct ChunkCache {
    entries: BoundedCache<(u64, u64), Rc<Chunks>>,
    storage_of: BoundedCache<pg_sys::Oid, u64>,
}

/// Row groups whose chunks are kept (about 50 MB of directories).
const CACHE_MAX_ENTRIES: usize = 20_000;

thread_local! {
    static CACHE: RefCell<ChunkCache> = RefCell::new(ChunkCache {
        entries: BoundedCache::new(CACHE_MAX_ENTRIES),
        storage_of: BoundedCache::new(super::cache::RELATIONS),
    });
}

/// Remembers which storage a relation uses, so its relcache invalidation can drop it.
pub fn note_storage(relid: pg_sys::Oid, storage_id: u64) {
    CACHE.with(|c| c.borrow_mut().storage_of.insert(relid, storage_id));
}

/// Drops what is cached of relation `relid` (everything for InvalidOid): its chunk
/// metadata, and our metadata tables' OIDs if it is one of them.
pub fn forget_relation(relid: pg_sys::Oid) {
    RELIDS.with(|r| {
        let mut relids = r.borrow_mut();
        if relid == pg_sys::InvalidOid || relids.values().any(|&oid| oid == relid) {
            relids.clear();
        }
    });
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if relid == pg_sys::InvalidOid {
            cache.entries.clear();
            cache.storage_of.clear();
        } else if let Some(&storage_id) = cache.storage_of.get(&relid) {
            cache.storage_of.remove(&relid);
            cache.entries.retain(|(s, _), _| *s != storage_id);
        }
    });
}

thread_local! {
    /// OIDs of the metadata relations by name: looked up for every changed row otherwise.
    /// Emptied by any relcache invalidation of one of them (DROP EXTENSION).
    static RELIDS: RefCell<HashMap<&'static CStr, pg_sys::Oid>> = RefCell::new(HashMap::new());
}

unsafe fn relid(name: &'static CStr) -> pg_sys::Oid {
    let oid = relid_if_installed(name);
    if oid == pg_sys::InvalidOid {
        error!("pgcolumnar metadata relation {name:?} is missing; reinstall the extension");
    }
    oid
}

/// The OID of metadata relation `name`, or InvalidOid when the extension's install
/// predates it.
unsafe fn relid_if_installed(name: &'static CStr) -> pg_sys::Oid {
    if let Some(oid) = RELIDS.with(|r| r.borrow().get(name).copied()) {
        return oid;
    }
    let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), false);
    let oid = pg_sys::get_relname_relid(name.as_ptr(), nsp);
    if oid != pg_sys::InvalidOid {
        RELIDS.with(|r| r.borrow_mut().insert(name, oid));
    }
    oid
}

/// Whether the extension's install records free extents (one created before that
/// keeps working, without reusing space).
pub unsafe fn has_free_extents() -> bool {
    relid_if_installed(c"free_extent") != pg_sys::InvalidOid
}

/// A fresh storage id for a new relfilenode. `nextval` checks USAGE on the sequence,
/// which only the extension has: whoever may create or truncate the table may take one.
pub unsafe fn next_storage_id() -> u64 {
    let seq = relid(c"storage_id_seq");
    let _rights = super::privilege::ExtensionRights::of(seq);
    pgrx::direct_function_call::<i64>(pg_sys::nextval_oid, &[seq.into_datum()])
        .expect("nextval returned NULL") as u64
}

// Metadata relations are closed with NoLock: their locks are kept to the end of the
// transaction, so the next open (for every changed row) finds them in the local lock
// table instead of going to the shared lock manager.

/// Inserts a heap row and its index entries with command id `cid`: the cid of the
/// INSERT that produced the rows, so that snapshots see a row group exactly when they
/// would have seen its rows in a heap table.
unsafe fn insert_row(rel: pg_sys::Relation, values: &mut [pg_sys::Datum], nulls: &mut [bool], cid: u32) {
    let tup = pg_sys::heap_form_tuple((*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
    pg_sys::heap_insert(rel, tup, cid, 0, std::ptr::null_mut());
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

fn datum<T: IntoDatum>(v: T) -> pg_sys::Datum {
    v.into_datum().expect("non-NULL datum")
}

/// Records a written row group and its chunks.
pub unsafe fn insert_row_group(storage_id: u64, group: &RowGroupMeta, cid: u32) {
    let rg = pg_sys::table_open(relid(c"row_group"), pg_sys::RowExclusiveLock as i32);
    CACHE.with(|c| c.borrow_mut().entries.insert((storage_id, group.first_row), group.chunks.clone()));
    let mut values = [
        datum(storage_id as i64),
        datum(group.first_row as i64),
        datum(group.row_count as i64),
        datum(group.data_offset as i64),
        datum(group.data_length as i64),
        pg_sys::Datum::from(0usize),
    ];
    let mut nulls = [false, false, false, false, false, true];
    insert_row(rg, &mut values, &mut nulls, cid);
    pg_sys::table_close(rg, pg_sys::NoLock as i32);

    let ch = pg_sys::table_open(relid(c"chunk"), pg_sys::RowExclusiveLock as i32);
    for c in group.chunks.columns.iter().flatten().chain(&group.chunks.order) {
        let mut values = [
            datum(storage_id as i64),
            datum(group.first_row as i64),
            datum(c.attnum),
            datum(c.offset as i64),
            datum(c.length as i64),
            datum(c.null_count as i64),
            datum(c.raw_bytes as i64),
            datum(directory::encode(&c.vectors).as_slice()),
        ];
        let mut nulls = [false; CHUNK_NATTS];
        insert_row(ch, &mut values, &mut nulls, cid);
    }
    pg_sys::table_close(ch, pg_sys::NoLock as i32);
}

/// Records that this transaction reserved row numbers `first_row .. first_row + count`.
pub unsafe fn insert_reservation(storage_id: u64, first_row: u64, count: u64) {
    let rel = pg_sys::table_open(relid(c"row_reservation"), pg_sys::RowExclusiveLock as i32);
    let mut values = [datum(storage_id as i64), datum(first_row as i64), datum(count as i64)];
    let mut nulls = [false; 3];
    insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
    pg_sys::table_close(rel, pg_sys::NoLock as i32);
}

/// Who handed out a row number, as a dirty snapshot sees `row_reservation`.
#[derive(Debug, PartialEq, Eq)]
pub enum Reservation {
    /// Nobody, or a transaction that rolled back: no one can ever see the row.
    None,
    /// A transaction still running (its number is in the snapshot's `xmin`).
    Running,
    Committed,
}

/// The reservation holding `row`, seen through the dirty snapshot `dirty`, which names a
/// running reserver in its `xmin` (so that a uniqueness check waits for it).
pub unsafe fn reservation_of(storage_id: u64, row: u64, dirty: pg_sys::Snapshot) -> Reservation {
    last_starting_at_or_before::<3, _>(
        c"row_reservation",
        c"row_reservation_pkey",
        storage_id,
        row,
        dirty,
        |_, v, _| match row < int8(v[1]) + int8(v[2]) {
            false => Reservation::None,
            true if (*dirty).xmin != pg_sys::InvalidTransactionId => Reservation::Running,
            true => Reservation::Committed,
        },
    )
    .unwrap_or(Reservation::None)
}

/// Calls `f` with the row of `table` (keyed by storage id and first row) whose range
/// starts last at or before `row`, as `snapshot` sees the table: the only one that can
/// hold `row`. None if there is no such row.
///
/// Ranges (row groups, reservations) are never longer than `ROW_GROUP_ROWS` (the write
/// buffer reserves that many rows at a time and writes groups inside a reservation), so
/// only rows starting in the window just below `row` are read, forward: a backward btree
/// scan would check every earlier entry on the leaf page before returning one (about 50
/// per lookup, a third of an UPDATE's time).
unsafe fn last_starting_at_or_before<const N: usize, R>(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
    f: impl FnOnce(pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]) -> R,
) -> Option<R> {
    let window_start = (row + 1).saturating_sub(ROW_GROUP_ROWS as u64);
    let found = starting_in(table, pkey, storage_id, window_start, row, snapshot);
    if found.is_null() {
        return None;
    }
    let rel = pg_sys::table_open(relid(table), pg_sys::AccessShareLock as i32);
    let mut values = [pg_sys::Datum::from(0usize); N];
    let mut nulls = [false; N];
    pg_sys::heap_deform_tuple(found, (*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
    let result = f(found, &values, &nulls);
    pg_sys::table_close(rel, pg_sys::NoLock as i32);
    Some(result)
}

/// A copy of the last row of `table` for `storage_id` whose first row is in
/// `from ..= to`; null if there is none.
unsafe fn starting_in(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    from: u64,
    to: u64,
    snapshot: pg_sys::Snapshot,
) -> pg_sys::HeapTuple {
    let rel = pg_sys::table_open(relid(table), pg_sys::AccessShareLock as i32);
    let index = pg_sys::index_open(relid(pkey), pg_sys::AccessShareLock as i32);
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
    let dirty = !snapshot.is_null() && (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_DIRTY;
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

/// Calls `f` with the deformed columns of each row of `table` whose storage_id matches,
/// in primary-key order, as seen by `snapshot` (NULL: the catalog snapshot).
unsafe fn scan_storage<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    scan_keys::<N>(table, pkey, &[storage_id], snapshot, lockmode, f)
}

/// Like `scan_storage`, matching the leading primary-key columns to `keys` (bigints).
unsafe fn scan_keys<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    keys: &[u64],
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    let bounds: Vec<ScanBound> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (i as i16 + 1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, k))
        .collect();
    scan_bounds(table, pkey, &bounds, snapshot, lockmode, f)
}

/// A scan key on a bigint index column: (attnum, btree strategy, comparison proc, value).
type ScanBound = (i16, u32, u32, u64);

/// Calls `f` with the deformed columns of each row of `table` that satisfies `bounds`
/// (through index `pkey`), as seen by `snapshot` (NULL: the catalog snapshot).
unsafe fn scan_bounds<const N: usize>(
    table: &'static CStr,
    pkey: &'static CStr,
    bounds: &[ScanBound],
    snapshot: pg_sys::Snapshot,
    lockmode: u32,
    mut f: impl FnMut(pg_sys::Relation, pg_sys::HeapTuple, &[pg_sys::Datum; N], &[bool; N]),
) {
    let rel = pg_sys::table_open(relid(table), lockmode as i32);
    let mut scan_keys = vec![pg_sys::ScanKeyData::default(); bounds.len()];
    for (key, &(attnum, strategy, proc, v)) in scan_keys.iter_mut().zip(bounds) {
        pg_sys::ScanKeyInit(key, attnum, strategy as u16, pg_sys::Oid::from(proc), datum(v as i64));
    }
    let scan = pg_sys::systable_beginscan(
        rel,
        relid(pkey),
        true,
        snapshot,
        bounds.len() as i32,
        scan_keys.as_mut_ptr(),
    );
    let mut values = [pg_sys::Datum::from(0usize); N];
    let mut nulls = [false; N];
    loop {
        let tup = pg_sys::systable_getnext(scan);
        if tup.is_null() {
            break;
        }
        pg_sys::heap_deform_tuple(tup, (*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
        f(rel, tup, &values, &nulls);
    }
    pg_sys::systable_endscan(scan);
    pg_sys::table_close(rel, pg_sys::NoLock as i32);
}

unsafe fn int8(d: pg_sys::Datum) -> u64 {
    i64::from_datum(d, false).unwrap() as u64
}

/// Parses the chunk rows of one row group.
unsafe fn read_chunks(storage_id: u64, first_row: u64, snapshot: pg_sys::Snapshot) -> Chunks {
    let mut chunks = Chunks::default();
    scan_keys::<CHUNK_NATTS>(
        c"chunk",
        c"chunk_pkey",
        &[storage_id, first_row],
        snapshot,
        pg_sys::AccessShareLock,
        |_, _, v, _| {
            let attnum = i16::from_datum(v[2], false).unwrap();
            if attnum < 0 {
                data_corrupted("chunk metadata with a negative attribute number");
            }
            let length = int8(v[4]);
            let dir: &[u8] = <&[u8]>::from_datum(v[7], false).unwrap();
            let vectors = directory::decode(dir, length).unwrap_or_else(|e| data_corrupted(&e.to_string()));
            let meta = ChunkMeta {
                attnum,
                offset: int8(v[3]),
                length,
                null_count: int8(v[5]),
                raw_bytes: int8(v[6]),
                vectors,
            };
            if attnum == 0 {
                chunks.order = Some(meta);
                return;
            }
            let at = attnum as usize - 1;
            if chunks.columns.len() <= at {
                chunks.columns.resize(at + 1, None);
            }
            chunks.columns[at] = Some(meta);
        },
    );
    chunks
}

/// The row groups of a storage visible to `snapshot`, ordered by first row; with their
/// chunks unless `with_chunks` is false (then `chunks` is empty).
pub unsafe fn load_row_groups(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    with_chunks: bool,
) -> Vec<RowGroupMeta> {
    let mut groups: Vec<RowGroupMeta> = Vec::new();
    let empty = Rc::new(Chunks::default());
    scan_storage::<ROW_GROUP_NATTS>(
        c"row_group",
        c"row_group_pkey",
        storage_id,
        snapshot,
        pg_sys::AccessShareLock,
        |_, tup, v, n| groups.push(parse_row_group(tup, v, n, &empty)),
    );
    if !with_chunks {
        return groups;
    }
    for g in &mut groups {
        attach_chunks(storage_id, g, snapshot);
    }
    groups
}

unsafe fn parse_row_group(
    tup: pg_sys::HeapTuple,
    v: &[pg_sys::Datum; ROW_GROUP_NATTS],
    n: &[bool; ROW_GROUP_NATTS],
    empty: &Rc<Chunks>,
) -> RowGroupMeta {
    let header = (*tup).t_data;
    let writer = (pg_sys::HeapTupleHeaderGetXmin(header), (*header).t_choice.t_heap.t_field3.t_cid);
    let row_count = int8(v[2]);
    let deleted = (!n[5]).then(|| {
        let bytes: &[u8] = <&[u8]>::from_datum(v[5], false).unwrap();
        Rc::new(
            DeleteMask::from_bytes(bytes, row_count)
                .unwrap_or_else(|| data_corrupted("delete mask does not fit its row group")),
        )
    });
    RowGroupMeta {
        first_row: int8(v[1]),
        row_count,
        data_offset: int8(v[3]),
        data_length: int8(v[4]),
        chunks: empty.clone(),
        deleted,
        writer,
    }
}

/// Fills in `g.chunks` from the cache or the `chunk` table.
/// Gives a row group loaded without its chunks (`load_row_groups(.., false)`) its
/// chunks, from the backend's cache when there.
pub unsafe fn attach_chunks(storage_id: u64, g: &mut RowGroupMeta, snapshot: pg_sys::Snapshot) {
    let key = (storage_id, g.first_row);
    let cached = CACHE.with(|c| c.borrow_mut().entries.get(&key).cloned());
    g.chunks = match cached {
        Some(chunks) => chunks,
        None => {
            let chunks = Rc::new(read_chunks(storage_id, g.first_row, snapshot));
            CACHE.with(|c| c.borrow_mut().entries.insert(key, chunks.clone()));
            chunks
        }
    };
}

/// The row group holding `row` as `snapshot` sees the row groups, with its chunks: one
/// index probe, for fetches that do not need the whole list.
pub unsafe fn load_group_of_row(
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
) -> Option<RowGroupMeta> {
    let mut g = last_starting_at_or_before::<ROW_GROUP_NATTS, _>(
        c"row_group",
        c"row_group_pkey",
        storage_id,
        row,
        snapshot,
        |tup, v, n| parse_row_group(tup, v, n, &Rc::new(Chunks::default())),
    )
    .filter(|g| row < g.first_row + g.row_count)?;
    attach_chunks(storage_id, &mut g, snapshot);
    Some(g)
}

/// Whether `snapshot` sees a delete mark on `row`.
pub unsafe fn row_deleted(storage_id: u64, row: u64, snapshot: pg_sys::Snapshot) -> bool {
    let offset = offset_in_bucket(row);
    let mut deleted = false;
    for key in mark_keys(row) {
        scan_keys::<MARK_NATTS>(
            c"row_mark",
            c"row_mark_bucket",
            &[storage_id, key],
            snapshot,
            pg_sys::AccessShareLock,
            |_, _, v, n| {
                deleted |= mark_kind(v[2]) == MarkKind::Delete && mark_rows(v, n).contains(offset);
            },
        );
    }
    deleted
}

/// Stored bytes per attribute (index attnum - 1) over the row groups visible to the
/// catalog snapshot, and how many chunk rows that read: for planning.
pub unsafe fn column_bytes(storage_id: u64, natts: usize) -> (Vec<u64>, usize) {
    let mut bytes = vec![0u64; natts];
    let mut chunks = 0;
    // Chunk rows come and go with their row group's, so the chunk table alone has the
    // sums; its vector directories (often toasted) are not read.
    scan_storage::<CHUNK_NATTS>(
        c"chunk",
        c"chunk_pkey",
        storage_id,
        std::ptr::null_mut(),
        pg_sys::AccessShareLock,
        |_, _, v, _| {
            chunks += 1;
            let attnum = i16::from_datum(v[2], false).unwrap();
            if let Some(b) = (attnum as usize).checked_sub(1).and_then(|at| bytes.get_mut(at)) {
                *b += int8(v[4]);
            }
        },
    );
    (bytes, chunks)
}

/// Like `delete_storage`, but a no-op when the metadata tables are gone already
/// (DROP EXTENSION ... CASCADE drops them along with the tables).
pub unsafe fn delete_storage_if_installed(storage_id: u64) {
    let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
    if nsp == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_group".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"chunk".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_reservation".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_mark".as_ptr(), nsp) == pg_sys::InvalidOid
        // An install older than the per-bucket marks: DROP EXTENSION ... CASCADE must work.
        || pg_sys::get_relname_relid(c"row_mark_bucket".as_ptr(), nsp) == pg_sys::InvalidOid
    {
        return;
    }
    delete_storage(storage_id);
}

/// Deletes the metadata of a storage (transactionally: a rollback brings it back). For
/// the id of a reset unlogged relation, that is the stale metadata of its id from
/// before the crash (nothing is kept under the reset id itself).
pub unsafe fn delete_storage(storage_id: u64) {
    let storage_id = storage_id & !super::format::layout::RESET_STORAGE_BIT;
    for (table, pkey) in [
        (c"row_group", c"row_group_pkey"),
        (c"chunk", c"chunk_pkey"),
        (c"row_reservation", c"row_reservation_pkey"),
        (c"row_mark", c"row_mark_bucket"),
        (c"free_extent", c"free_extent_pkey"),
    ] {
        if table == c"free_extent" && !has_free_extents() {
            continue;
        }
        // The arity only sizes the deform buffers; both tables have at most 8 columns.
        scan_storage::<CHUNK_NATTS>(
            table,
            pkey,
            storage_id,
            std::ptr::null_mut(),
            pg_sys::RowExclusiveLock,
            |rel, tup, _, _| pg_sys::simple_heap_delete(rel, &mut (*tup).t_self),
        );
    }
}

const MARK_NATTS: usize = 5;

/// A mark as a concurrent writer sees it (committed, in progress, or our own).
#[derive(Debug, Clone)]
pub struct Mark {
    pub xmin: pg_sys::TransactionId,
    pub cid: u32,
    pub kind: MarkKind,
    pub rows: MarkRows,
}

fn mark_kind(v: pg_sys::Datum) -> MarkKind {
    let k = unsafe { i16::from_datum(v, false) }.unwrap();
    MarkKind::from_i16(k).unwrap_or_else(|| data_corrupted("row mark of unknown kind"))
}

unsafe fn mark_rows(v: &[pg_sys::Datum; MARK_NATTS], n: &[bool; MARK_NATTS]) -> MarkRows {
    let bytes = |d: pg_sys::Datum| <&[u8]>::from_datum(d, false).unwrap();
    let successors = (!n[4]).then(|| bytes(v[4]));
    MarkRows::from_bytes(bytes(v[3]), successors).unwrap_or_else(|| data_corrupted("malformed row mark"))
}

/// The keys (`row_mark.first_row`) under which marks on `row` are found: a mark on
/// several rows of a bucket is kept under the bucket's first row, a mark on one row
/// under that row, so that many one-row changes (single-row DELETEs, row locks of
/// foreign-key checks) do not pile up under one key.
pub fn mark_keys(row: u64) -> impl Iterator<Item = u64> {
    let start = bucket_start(row);
    std::iter::once(start).chain((row != start).then_some(row))
}

/// Records mark `kind` on `rows` of the bucket starting at `bucket_first_row`, with
/// command id `cid`.
pub unsafe fn insert_mark(storage_id: u64, bucket_first_row: u64, kind: MarkKind, rows: &MarkRows, cid: u32) {
    let key = match rows.offsets() {
        [only] => bucket_first_row + *only as u64,
        _ => bucket_first_row,
    };
    let rel = pg_sys::table_open(relid(c"row_mark"), pg_sys::RowExclusiveLock as i32);
    let rows_bytes = rows.rows_bytes();
    let successors = rows.successors_bytes();
    let mut values = [
        datum(storage_id as i64),
        datum(key as i64),
        datum(kind as i16),
        datum(rows_bytes.as_slice()),
        successors.as_deref().map_or(pg_sys::Datum::from(0usize), datum),
    ];
    let mut nulls = [false, false, false, false, successors.is_none()];
    insert_row(rel, &mut values, &mut nulls, cid);
    pg_sys::table_close(rel, pg_sys::NoLock as i32);
}

/// Which marks `marks_of` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkScope {
    /// The marks kept under this key (see `mark_keys`).
    Key(u64),
    /// Every mark of the bucket starting here.
    WholeBucket(u64),
}

/// The marks in `scope` that are committed, in progress or this transaction's, read
/// through a dirty snapshot (aborted ones are left out).
pub unsafe fn marks_of(storage_id: u64, scope: MarkScope) -> Vec<Mark> {
    let mut dirty =
        pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
    let eq = |att: i16, v: u64| (att, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, v);
    let bounds = match scope {
        MarkScope::Key(key) => vec![eq(1, storage_id), eq(2, key)],
        MarkScope::WholeBucket(start) => vec![
            eq(1, storage_id),
            (2, pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT8GE, start),
            (2, pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, start + BUCKET_ROWS - 1),
        ],
    };
    let mut marks = Vec::new();
    scan_bounds::<MARK_NATTS>(
        c"row_mark",
        c"row_mark_bucket",
        &bounds,
        &mut dirty,
        pg_sys::AccessShareLock,
        |_, tup, v, n| {
            let header = (*tup).t_data;
            marks.push(Mark {
                xmin: pg_sys::HeapTupleHeaderGetXmin(header),
                cid: (*header).t_choice.t_heap.t_field3.t_cid,
                kind: mark_kind(v[2]),
                rows: mark_rows(v, n),
            });
        },
    );
    marks
}

/// Calls `f` with each row number a delete mark in `v` covers.
unsafe fn for_each_deleted_row(
    v: &[pg_sys::Datum; MARK_NATTS],
    n: &[bool; MARK_NATTS],
    mut f: impl FnMut(u64),
) {
    if mark_kind(v[2]) == MarkKind::Delete {
        let first = bucket_start(int8(v[1]));
        mark_rows(v, n).offsets().iter().for_each(|&o| f(first + o as u64));
    }
}

/// The row numbers deleted as `snapshot` sees it (marks in `row_mark` only; masks
/// come with the row groups), sorted.
pub unsafe fn load_deleted_rows(storage_id: u64, snapshot: pg_sys::Snapshot) -> Vec<u64> {
    let mut rows = Vec::new();
    scan_storage::<MARK_NATTS>(
        c"row_mark",
        c"row_mark_bucket",
        storage_id,
        snapshot,
        pg_sys::AccessShareLock,
        |_, _, v, n| for_each_deleted_row(v, n, |r| rows.push(r)),
    );
    // Marks of one bucket come in any order; an UPDATE's lock and delete repeat a row.
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Takes the locks reading `row_mark` needs (AccessShareLock on it and its index) if
/// that needs no wait; false otherwise. For callers under a buffer lock, which must
/// never wait for a heavyweight lock (the locks are kept to the end of the transaction,
/// so the scans after find them held).
pub unsafe fn try_lock_marks_for_reading() -> bool {
    [c"row_mark", c"row_mark_bucket"]
        .iter()
        .all(|name| pg_sys::ConditionalLockRelationOid(relid(name), pg_sys::AccessShareLock as i32))
}

/// Calls `f` with each mark row of a storage and the transaction that wrote it, through
/// a dirty snapshot: committed marks, marks in progress and this transaction's; only
/// those of aborted transactions are left out.
unsafe fn each_unaborted_mark(
    storage_id: u64,
    lockmode: u32,
    mut f: impl FnMut(
        pg_sys::Relation,
        pg_sys::HeapTuple,
        pg_sys::TransactionId,
        &[pg_sys::Datum; MARK_NATTS],
        &[bool; MARK_NATTS],
    ),
) {
    let mut dirty =
        pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
    scan_storage::<MARK_NATTS>(
        c"row_mark",
        c"row_mark_bucket",
        storage_id,
        &mut dirty,
        lockmode,
        |rel, tup, v, n| f(rel, tup, pg_sys::HeapTupleHeaderGetXmin((*tup).t_data), v, n),
    );
}

/// The rows delete marks cover, sorted by what an index build does with them (heap's
/// HeapTupleSatisfiesVacuum cases in heapam_index_build_range_scan). Rows in the row
/// groups' masks are dead too; they come with the row groups.
#[derive(Debug, Default)]
pub struct BuildDeletes {
    /// Deleted by a transaction that committed before the horizon, so no snapshot sees
    /// them (heap's DEAD): not indexed.
    pub dead: Vec<u64>,
    /// Deleted by a transaction that committed after the horizon (RECENTLY_DEAD) or by
    /// this one (DELETE_IN_PROGRESS, ours): indexed for the snapshots that still see
    /// them, but never checked for uniqueness.
    pub not_alive: Vec<u64>,
    /// Deleted by another transaction still in progress: indexed like `not_alive`, but
    /// counted as live rows, as heap does.
    pub deleting: Vec<u64>,
    /// One such transaction and one of its rows: a build that checks uniqueness waits
    /// for it and looks again, as heap does.
    pub in_progress: Option<(pg_sys::TransactionId, u64)>,
}

/// Sorts the delete marks of a storage for an index build (see `BuildDeletes`), with
/// `oldest_xmin` the horizon before which a committed delete is seen by everyone.
pub unsafe fn deletes_for_build(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> BuildDeletes {
    let mut out = BuildDeletes::default();
    each_unaborted_mark(storage_id, pg_sys::AccessShareLock, |_, _, xmin, v, n| {
        // Current, then in progress, then committed: the order heap's checks use.
        let list = if pg_sys::TransactionIdIsCurrentTransactionId(xmin) {
            &mut out.not_alive
        } else if pg_sys::TransactionIdIsInProgress(xmin) {
            if out.in_progress.is_none() {
                for_each_deleted_row(v, n, |r| {
                    out.in_progress.get_or_insert((xmin, r));
                });
            }
            &mut out.deleting
        } else if pg_sys::TransactionIdDidCommit(xmin) {
            if pg_sys::TransactionIdPrecedes(xmin, oldest_xmin) {
                &mut out.dead
            } else {
                &mut out.not_alive
            }
        } else {
            // Aborted, or crashed while in progress: no delete.
            return;
        };
        for_each_deleted_row(v, n, |r| list.push(r));
    });
    for list in [&mut out.dead, &mut out.not_alive, &mut out.deleting] {
        list.sort_unstable();
        list.dedup();
    }
    out
}

/// What VACUUM did to a storage's marks.
#[derive(Debug, Default)]
pub struct MarkCleanup {
    /// Rows whose delete every snapshot sees, sorted: folded into masks.
    pub folded: Vec<u64>,
    /// Marks removed (folded deletes and locks of finished transactions).
    pub removed: u64,
    /// Delete marks left because some snapshot may not see them yet.
    pub pending_deletes: u64,
}

/// Removes the marks no snapshot needs any more: deletes committed before `oldest_xmin`
/// (returned, for the caller to fold into the row groups' masks in this transaction)
/// and locks whose transaction has ended.
pub unsafe fn take_settled_marks(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> MarkCleanup {
    let mut out = MarkCleanup::default();
    each_unaborted_mark(storage_id, pg_sys::RowExclusiveLock, |rel, tup, xmin, v, n| {
        let settled = if mark_kind(v[2]) == MarkKind::Delete {
            let visible_to_all =
                pg_sys::TransactionIdDidCommit(xmin) && pg_sys::TransactionIdPrecedes(xmin, oldest_xmin);
            let mut rows = 0;
            for_each_deleted_row(v, n, |r| {
                rows += 1;
                if visible_to_all {
                    out.folded.push(r);
                }
            });
            if !visible_to_all {
                out.pending_deletes += rows;
            }
            visible_to_all
        } else {
            !pg_sys::TransactionIdIsInProgress(xmin) && !pg_sys::TransactionIdIsCurrentTransactionId(xmin)
        };
        if settled {
            pg_sys::simple_heap_delete(rel, &mut (*tup).t_self);
            out.removed += 1;
        }
    });
    out.folded.sort_unstable();
    out.folded.dedup();
    out
}

/// Replaces the delete mask of row group `first_row` (a new version of its metadata row,
/// so snapshots that predate this transaction keep the old mask and the old marks).
pub unsafe fn set_group_mask(storage_id: u64, first_row: u64, mask: &DeleteMask) {
    scan_keys::<ROW_GROUP_NATTS>(
        c"row_group",
        c"row_group_pkey",
        &[storage_id, first_row],
        std::ptr::null_mut(),
        pg_sys::RowExclusiveLock,
        |rel, tup, v, _| {
            let mut values = *v;
            let mut nulls = [false; ROW_GROUP_NATTS];
            values[5] = datum(mask.to_bytes().as_slice());
            pg_sys::simple_heap_delete(rel, &mut (*tup).t_self);
            insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
        },
    );
}

/// Deletes the metadata of row group `first_row` (all its rows are deleted for everyone).
pub unsafe fn delete_row_group(storage_id: u64, first_row: u64) {
    for (table, pkey) in [(c"row_group", c"row_group_pkey"), (c"chunk", c"chunk_pkey")] {
        scan_keys::<CHUNK_NATTS>(
            table,
            pkey,
            &[storage_id, first_row],
            std::ptr::null_mut(),
            pg_sys::RowExclusiveLock,
            |rel, tup, _, _| pg_sys::simple_heap_delete(rel, &mut (*tup).t_self),
        );
    }
}

/// Records that stream bytes `offset .. offset + length` of a storage are free.
pub unsafe fn insert_free_extent(storage_id: u64, offset: u64, length: u64) {
    let rel = pg_sys::table_open(relid(c"free_extent"), pg_sys::RowExclusiveLock as i32);
    let mut values = [datum(storage_id as i64), datum(offset as i64), datum(length as i64)];
    let mut nulls = [false; 3];
    insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
    pg_sys::table_close(rel, pg_sys::NoLock as i32);
}

/// Takes (deletes, in this transaction) the first free extent of a storage, by offset,
/// that holds at least `length` bytes and was freed by a transaction that committed
/// before `horizon` (so no snapshot can still read what was there); returns its offset
/// and length. An extent another transaction is taking is passed over, never waited for.
pub unsafe fn take_free_extent(
    storage_id: u64,
    length: u64,
    horizon: pg_sys::TransactionId,
) -> Option<(u64, u64)> {
    let mut dirty =
        pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
    let mut taken = None;
    scan_storage::<3>(
        c"free_extent",
        c"free_extent_pkey",
        storage_id,
        &mut dirty,
        pg_sys::RowExclusiveLock,
        |rel, tup, v, _| {
            let (offset, extent) = (int8(v[1]), int8(v[2]));
            let xmin = pg_sys::HeapTupleHeaderGetXmin((*tup).t_data);
            let settled =
                pg_sys::TransactionIdDidCommit(xmin) && pg_sys::TransactionIdPrecedes(xmin, horizon);
            if taken.is_some() || extent < length || !settled {
                return;
            }
            let mut tmfd = pg_sys::TM_FailureData::default();
            let result = pg_sys::heap_delete(
                rel,
                &mut (*tup).t_self,
                pg_sys::GetCurrentCommandId(true),
                std::ptr::null_mut(),
                false,
                &mut tmfd,
                false,
            );
            if result == pg_sys::TM_Result::TM_Ok {
                taken = Some((offset, extent));
            }
        },
    );
    taken
}

/// Row-number ranges that may still hold a row some transaction can see: row groups
/// whose insert did not roll back and whose removal (by VACUUM) is not yet older than
/// `oldest_xmin`, and the reservations of transactions still running (their rows may
/// sit in a write buffer). Sorted.
pub unsafe fn live_or_pending_ranges(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> Vec<(u64, u64)> {
    let mut ranges = Vec::new();
    let running =
        |xid| pg_sys::TransactionIdIsCurrentTransactionId(xid) || pg_sys::TransactionIdIsInProgress(xid);
    scan_storage::<ROW_GROUP_NATTS>(
        c"row_group",
        c"row_group_pkey",
        storage_id,
        &raw mut pg_sys::SnapshotAnyData,
        pg_sys::AccessShareLock,
        |_, tup, v, _| {
            let header = (*tup).t_data;
            let xmin = pg_sys::HeapTupleHeaderGetXmin(header);
            let inserted = running(xmin) || pg_sys::TransactionIdDidCommit(xmin);
            let xmax = (*header).t_choice.t_heap.t_xmax;
            let removed_for_all = (*header).t_infomask as u32 & pg_sys::HEAP_XMAX_INVALID == 0
                && xmax != pg_sys::InvalidTransactionId
                && !running(xmax)
                && pg_sys::TransactionIdDidCommit(xmax)
                && pg_sys::TransactionIdPrecedes(xmax, oldest_xmin);
            if inserted && !removed_for_all {
                ranges.push((int8(v[1]), int8(v[2])));
            }
        },
    );
    let mut dirty =
        pg_sys::SnapshotData { snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY, ..Default::default() };
    scan_storage::<3>(
        c"row_reservation",
        c"row_reservation_pkey",
        storage_id,
        &mut dirty,
        pg_sys::AccessShareLock,
        |_, tup, v, _| {
            if running(pg_sys::HeapTupleHeaderGetXmin((*tup).t_data)) {
                ranges.push((int8(v[1]), int8(v[2])));
            }
        },
    );
    ranges.sort_unstable();
    ranges
}
