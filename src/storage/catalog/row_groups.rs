//! Row groups and their column chunks (`pgcolumnar.row_group`, `pgcolumnar.chunk`, or
//! for a small row group `row_group.chunks`: `inline_chunks`), and the per-backend cache
//! of parsed chunk metadata.

use super::inline_chunks::{self, InlineChunk};
use super::tables::{
    datum, insert_row, int8, last_starting_at_or_before, not_null, readable_relid, relid, scan_bounds,
    scan_keys, scan_storage, ScanBound,
};
use crate::storage::format::delete_mask::DeleteMask;
use crate::storage::format::directory::{Directory, VectorEntry};
use crate::storage::format::group_zones::{self, ColumnZone};
use crate::storage::format::zonemap::{ZoneMap, ZoneStats};
use crate::storage::shared::cache::{kept_for_life, BoundedCache, KeptForLife};
use crate::storage::shared::completions::completed_transactions;
use crate::storage::shared::error::data_corrupted;
use hashbrown::HashMap;
use pgrx::pg_sys;
use std::rc::Rc;

/// Columns of `pgcolumnar.row_group` (created in `schema`). Installs of 0.2.0 and 0.3.0
/// have the first 6 only (no `chunks`): the scans read the missing one as NULL.
const ROW_GROUP_NATTS: usize = 8;

/// Columns of `row_group` that installs from before 0.4.0 lack: `chunks` (inline chunk
/// metadata) and `zones` (per column zone maps). An older install's rows read them as
/// NULL, and its writers leave them out.
const WITH_INLINE_CHUNKS: usize = 7;
const WITH_ZONES: usize = 8;

/// Columns of `pgcolumnar.chunk`, the widest metadata table (`storage_ids` sizes its
/// deform buffers by it).
pub(super) const CHUNK_NATTS: usize = 8;

#[derive(Debug, Clone)]
pub struct ChunkMeta {
    pub attnum: i16,
    pub offset: u64,
    pub length: u64,
    pub null_count: u64,
    pub raw_bytes: u64,
    pub vectors: Directory,
    /// The zone map of the whole chunk (its vectors' merged), made once when the chunk's
    /// metadata is parsed: every scan checks it per row group before its vectors'.
    pub zone: ZoneMap,
}

impl ChunkMeta {
    pub fn new(
        attnum: i16,
        offset: u64,
        length: u64,
        null_count: u64,
        raw_bytes: u64,
        vectors: Vec<VectorEntry>,
    ) -> Self {
        let (vectors, zone) = Directory::of(&vectors, length);
        ChunkMeta { attnum, offset, length, null_count, raw_bytes, vectors, zone }
    }
}

/// The chunks of one row group.
#[derive(Debug, Clone, Default)]
pub struct Chunks {
    /// By attribute number - 1; None for columns added after the row group was written
    /// (their value is the column's default) or dropped ones.
    /// Shared between the cached versions of a row group's chunks that parsed more
    /// attributes (`merge`).
    pub columns: Vec<Option<Rc<ChunkMeta>>>,
    /// The order column (attribute number 0) of a row group a flush wrote in sort_by
    /// order: position p holds the row at offset order[p] (see `flush_order`). None when
    /// rows are stored in row-number order.
    pub order: Option<ChunkMeta>,
    /// The attribute numbers whose chunk rows were parsed, if not all of them: a scan
    /// that reads a few columns of a wide table parses only theirs (a parallel worker
    /// starts with an empty cache). `columns` says nothing of the others.
    pub parsed: Option<Vec<i16>>,
}

impl Chunks {
    /// Whether the chunk rows of attribute `attnum` were parsed.
    pub fn has(&self, attnum: i16) -> bool {
        self.parsed.as_ref().is_none_or(|p| p.binary_search(&attnum).is_ok())
    }

    /// The chunk of attribute `attnum`, if it was parsed and is stored.
    pub fn column(&self, attnum: i16) -> Option<&ChunkMeta> {
        if !self.has(attnum) {
            return None;
        }
        self.columns.get(attnum as usize - 1).and_then(|c| c.as_deref())
    }

    /// Whether the chunk rows of every attribute numbered in `attnums` (None: all) were
    /// parsed.
    pub fn covers(&self, attnums: Option<&[i16]>) -> bool {
        match attnums {
            None => self.parsed.is_none(),
            Some(a) => a.iter().all(|&x| self.has(x)),
        }
    }

    /// Of the attributes numbered in `attnums` (sorted; None: all), those whose chunk rows
    /// `cached` (a row group's cached chunks, if any) did not parse; None: all.
    fn lacking(cached: Option<&Chunks>, attnums: Option<&[i16]>) -> Option<Vec<i16>> {
        let a = attnums?;
        Some(match cached {
            Some(c) => a.iter().copied().filter(|&x| !c.has(x)).collect(),
            None => a.to_vec(),
        })
    }

    /// `cached` (if any) with the chunks parsed since, `fresh`: a plan or scan that needs
    /// one more column parses that column's rows, not again those of the ones it had.
    fn merge(cached: Option<Rc<Chunks>>, fresh: Chunks) -> Chunks {
        let (Some(old), Some(parsed)) = (cached, fresh.parsed.as_ref()) else { return fresh };
        let Some(had) = old.parsed.as_ref() else { return fresh };
        let mut union = had.clone();
        union.extend_from_slice(parsed);
        union.sort_unstable();
        union.dedup();
        let mut columns = old.columns.clone();
        for (at, meta) in fresh.columns.into_iter().enumerate() {
            if let Some(meta) = meta {
                if columns.len() <= at {
                    columns.resize(at + 1, None);
                }
                columns[at] = Some(meta);
            }
        }
        Chunks { columns, order: fresh.order.or_else(|| old.order.clone()), parsed: Some(union) }
    }
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
    /// Its chunk metadata as its `row_group` row holds it (`inline_chunks`), parsed into
    /// `chunks` when they are attached; None: in `chunk` rows.
    pub inline: Option<Rc<[u8]>>,
    /// Its zone map per column, as its `row_group` row holds them (`group_zones`); None
    /// for inline metadata and row groups an older install wrote.
    pub zones: Option<Rc<[ColumnZone]>>,
}

impl RowGroupMeta {
    pub fn chunk(&self, attnum: i16) -> Option<&ChunkMeta> {
        debug_assert!(self.chunks.has(attnum), "chunk of attribute {attnum} not loaded");
        self.chunks.columns.get(attnum as usize - 1).and_then(|c| c.as_deref())
    }

    /// The zone statistics of attribute `att` (index) over the whole row group: from the
    /// zone maps its `row_group` row keeps, or else its chunk's (which must be attached);
    /// None if the row group does not store the attribute.
    pub fn stats(&self, att: usize) -> Option<ZoneStats> {
        let attnum = att as i16 + 1;
        if let Some(zones) = self.zones.as_deref() {
            let c = zones.iter().find(|c| c.attnum == attnum)?;
            return Some(ZoneStats { zone: c.zone, rows: self.row_count, null_count: c.null_count });
        }
        let c = self.chunk(attnum)?;
        Some(ZoneStats { zone: c.zone, rows: self.row_count, null_count: c.null_count })
    }
}

/// Per-backend cache of parsed chunk metadata, keyed by (storage id, first row). A row
/// group's chunks never change once written (a storage id is never reused), so an entry
/// cannot go stale; only whether the row group is visible depends on the snapshot, and
/// that is read from `row_group` each time. Entries of a relation are dropped on its
/// relcache invalidation (`forget_relation`).
pub(super) struct ChunkCache {
    entries: BoundedCache<(u64, u64), Rc<Chunks>>,
    storage_of: BoundedCache<pg_sys::Oid, u64>,
    /// Row groups' zone maps as parsed from their `row_group` rows, with the bytes they
    /// were parsed from (`cached_zones`).
    zones: BoundedCache<(u64, u64), ParsedZones>,
}

/// A `row_group.zones` value and what it parses into.
type ParsedZones = (Rc<[u8]>, Rc<[ColumnZone]>);

/// Row groups whose chunks are kept (about 50 MB of directories).
pub(super) const CACHE_MAX_ENTRIES: usize = 20_000;

thread_local! {
    pub(super) static CACHE: KeptForLife<ChunkCache> = kept_for_life(ChunkCache {
        entries: BoundedCache::new(CACHE_MAX_ENTRIES),
        storage_of: BoundedCache::new(crate::storage::shared::cache::RELATIONS),
        zones: BoundedCache::new(CACHE_MAX_ENTRIES),
    });
}

thread_local! {
    /// Chunk rows whose vector directory this backend parsed
    /// (`pgcolumnar.chunk_directories_parsed()`).
    static PARSED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many chunk rows' vector directories this backend has parsed (each is then cached
/// with its row group's chunks).
pub fn directories_parsed() -> u64 {
    PARSED.with(|p| p.get())
}

/// Drops the cached chunks of relation `relid` (all of them for InvalidOid).
pub(super) fn forget_chunks_of(relid: pg_sys::Oid) {
    CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if relid == pg_sys::InvalidOid {
            cache.entries.clear();
            cache.storage_of.clear();
            cache.zones.clear();
        } else if let Some(&storage_id) = cache.storage_of.get(&relid) {
            cache.storage_of.remove(&relid);
            cache.entries.retain(|(s, _), _| *s != storage_id);
            cache.zones.retain(|(s, _), _| *s != storage_id);
        }
    });
}

/// Remembers which storage a relation uses, so its relcache invalidation can drop it.
pub fn note_storage(relid: pg_sys::Oid, storage_id: u64) {
    CACHE.with(|c| c.borrow_mut().storage_of.insert(relid, storage_id));
}

/// Records a written row group and its chunks.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert_row_group(storage_id: u64, group: &RowGroupMeta, cid: u32) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let rg = pg_sys::table_open(relid(c"row_group"), pg_sys::RowExclusiveLock as i32);
        let all = || group.chunks.columns.iter().flatten().map(|c| &**c).chain(&group.chunks.order);
        // Installs from before 0.4.0 have no `chunks` column: chunk rows then.
        let natts = (*(*rg).rd_att).natts as usize;
        let inline = (natts >= WITH_INLINE_CHUNKS)
            .then(|| {
                inline_chunks::encode(all().map(|c| InlineChunk {
                    attnum: c.attnum,
                    offset: c.offset,
                    length: c.length,
                    null_count: c.null_count,
                    raw_bytes: c.raw_bytes,
                    directory: c.vectors.as_bytes(),
                }))
            })
            .flatten();
        // Inline metadata is parsed whole anyway; a group with chunk rows keeps its zone
        // maps here too, for pruning before reading them.
        let zones = (inline.is_none() && natts >= WITH_ZONES).then(|| {
            let columns: Vec<ColumnZone> = group
                .chunks
                .columns
                .iter()
                .flatten()
                .map(|c| ColumnZone {
                    attnum: c.attnum,
                    null_count: c.null_count,
                    length: c.length,
                    zone: c.zone,
                })
                .collect();
            group_zones::encode(&columns)
        });
        let mut values = [
            datum(storage_id as i64),
            datum(group.first_row as i64),
            datum(group.row_count as i64),
            datum(group.data_offset as i64),
            datum(group.data_length as i64),
            pg_sys::Datum::from(0usize),
            inline.as_deref().map_or(pg_sys::Datum::from(0usize), datum),
            zones.as_deref().map_or(pg_sys::Datum::from(0usize), datum),
        ];
        let mut nulls = [false, false, false, false, false, true, inline.is_none(), zones.is_none()];
        insert_row(rg, &mut values, &mut nulls, cid);
        pg_sys::table_close(rg, pg_sys::NoLock as i32);
        // Inline metadata comes with the row and is parsed in no time: caching a trickle
        // insert's few bytes evicted another group's entry each transaction.
        if inline.is_some() {
            return;
        }
        CACHE.with(|c| c.borrow_mut().entries.insert((storage_id, group.first_row), group.chunks.clone()));

        let ch = pg_sys::table_open(relid(c"chunk"), pg_sys::RowExclusiveLock as i32);
        for c in all() {
            let mut values = [
                datum(storage_id as i64),
                datum(group.first_row as i64),
                datum(c.attnum),
                datum(c.offset as i64),
                datum(c.length as i64),
                datum(c.null_count as i64),
                datum(c.raw_bytes as i64),
                datum(c.vectors.as_bytes()),
            ];
            let mut nulls = [false; CHUNK_NATTS];
            insert_row(ch, &mut values, &mut nulls, cid);
        }
        pg_sys::table_close(ch, pg_sys::NoLock as i32);
    }
}

/// Parses the chunk rows of one row group: every one, or with `wanted` those of the
/// order column and of the attribute numbers it lists (sorted).
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub(super) unsafe fn read_chunks(
    storage_id: u64,
    first_row: u64,
    snapshot: pg_sys::Snapshot,
    wanted: Option<&[i16]>,
) -> Chunks {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let mut chunks = Chunks { parsed: wanted.map(<[i16]>::to_vec), ..Chunks::default() };
        let (scan_snapshot, any) = chunk_snapshot(snapshot);
        let group = [
            (1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, storage_id),
            (2, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, first_row),
        ];
        // The wanted attributes' rows only (with the group's key fixed, the attnum bounds
        // position the index scan): a probe of a 21-column table for 3 read 22 rows.
        for bounds in chunk_scans(&group, wanted) {
            scan_bounds::<CHUNK_NATTS>(
                c"chunk",
                c"chunk_pkey",
                &bounds,
                scan_snapshot,
                pg_sys::AccessShareLock,
                |_, tup, v, n| {
                    if !any || inserted(tup) {
                        parse_chunk(&mut chunks, v, n, wanted)
                    }
                },
            );
        }
        chunks
    }
}

/// The snapshot to read a row group's chunk rows with, for a caller that found the group
/// under `snapshot`, and whether it is SnapshotAny (keep then only the rows `inserted`
/// says were). An MVCC snapshot (NULL: the catalog snapshot) sees a group's chunk rows
/// all or none, as its `row_group` row. A dirty or self snapshot checks each row when
/// it reaches it: a VACUUM merging the group away that commits after its `row_group`
/// row was read hides its chunk rows, and its rows would read as NULLs. A group's chunk
/// rows are written once, with it, and deleted only with it, and row numbers are never
/// reused, so the rows of its key whose insert did not roll back are exactly its
/// chunks; the deleted ones cannot be pruned yet (their deleter committed after this
/// statement's snapshot, which holds the horizon back).
///
/// # Safety
/// `snapshot` must be NULL or a valid snapshot.
unsafe fn chunk_snapshot(snapshot: pg_sys::Snapshot) -> (pg_sys::Snapshot, bool) {
    // SAFETY: this fn's contract.
    if snapshot.is_null() || unsafe { crate::storage::shared::snapshot_kind::is_mvcc(snapshot) } {
        (snapshot, false)
    } else {
        (&raw mut pg_sys::SnapshotAnyData, true)
    }
}

/// Whether the insert of `tup` (read with SnapshotAny) committed, is running or is this
/// transaction's: not rolled back.
///
/// # Safety
/// `tup` must be a valid heap tuple; call on the backend thread inside a transaction.
unsafe fn inserted(tup: pg_sys::HeapTuple) -> bool {
    // SAFETY: this fn's contract.
    unsafe {
        let xmin = pg_sys::HeapTupleHeaderGetXmin((*tup).t_data);
        pg_sys::TransactionIdIsCurrentTransactionId(xmin)
            || pg_sys::TransactionIdIsInProgress(xmin)
            || pg_sys::TransactionIdDidCommit(xmin)
    }
}

/// `read_chunks` of the row groups of a storage that `wanted` lists (by first row, with
/// the attributes to parse), in one scan of `chunk` (a scan per row group costs an index
/// descent and its set-up each, which a new connection's first plan of a table with many
/// row groups pays for all of them): by first row.
///
/// # Safety
/// As `read_chunks`.
unsafe fn read_all_chunks(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    wanted: &HashMap<u64, Option<Vec<i16>>>,
) -> HashMap<u64, Chunks> {
    // SAFETY: as in `read_chunks` (this fn's contract is the same).
    unsafe {
        let (snapshot, any) = chunk_snapshot(snapshot);
        let mut all: HashMap<u64, Chunks> = HashMap::new();
        let storage = [(1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, storage_id)];
        // When only some attributes are wanted, the index's attnum column bounds the rows
        // fetched: btree checks it on each index entry, so the heap pages of the others
        // (most of a wide table's metadata) are not read. A new connection's first plan,
        // and each parallel worker, faults in every page it reads.
        for bounds in &chunk_scans(&storage, wanted_union(wanted).as_deref()) {
            scan_bounds::<CHUNK_NATTS>(
                c"chunk",
                c"chunk_pkey",
                bounds,
                snapshot,
                pg_sys::AccessShareLock,
                |_, tup, v, n| {
                    let first_row = int8(v[1]);
                    // Row groups not asked for (cached, or not visible) are skipped unparsed.
                    let Some(wanted) = wanted.get(&first_row) else { return };
                    if any && !inserted(tup) {
                        return;
                    }
                    let chunks = all
                        .entry(first_row)
                        .or_insert_with(|| Chunks { parsed: wanted.clone(), ..Chunks::default() });
                    parse_chunk(chunks, v, n, wanted.as_deref())
                },
            );
        }
        all
    }
}

/// Every attribute number some row group in `wanted` asks for, sorted, unless one asks
/// for all.
fn wanted_union(wanted: &HashMap<u64, Option<Vec<i16>>>) -> Option<Vec<i16>> {
    let mut union = Vec::new();
    for w in wanted.values() {
        union.extend_from_slice(w.as_deref()?);
    }
    union.sort_unstable();
    union.dedup();
    Some(union)
}

/// The bounds of each scan of `chunk` that reads the rows under `key` (its leading
/// columns' bounds) of the attributes numbered in `attnums` (sorted; None: all), by
/// `attnum_ranges`.
fn chunk_scans(key: &[ScanBound], attnums: Option<&[i16]>) -> Vec<Vec<ScanBound>> {
    let Some(attnums) = attnums else { return vec![key.to_vec()] };
    attnum_ranges(attnums)
        .into_iter()
        .map(|(lo, hi)| {
            let mut bounds = key.to_vec();
            bounds.push((3, pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT2GE, lo as u64));
            bounds.push((3, pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT2LE, hi as u64));
            bounds
        })
        .collect()
}

/// Scans of `chunk` past this many read one range of attribute numbers instead.
const MAX_ATTNUM_SCANS: usize = 4;

/// The ranges of attribute numbers to read the chunk rows of, one scan each, for the
/// attributes `attnums` (sorted) and the order column (0): 0 up to the highest wanted
/// in one scan, or, when that would fetch at least twice the rows wanted, a scan per
/// run of consecutive numbers (and one for 0). A scan of the whole storage checks
/// every index entry of it, which costs a small part of fetching a row: on the TSBS
/// table, a filter on one metric and an average of another (attributes 12 and 13 of 21)
/// fetched 14 chunk rows a row group to use 2.
fn attnum_ranges(attnums: &[i16]) -> Vec<(i16, i16)> {
    let Some(&highest) = attnums.last() else { return vec![(0, 0)] };
    let mut runs: Vec<(i16, i16)> = vec![(0, 0)];
    for &a in attnums {
        match runs.last_mut() {
            Some((_, hi)) if a <= *hi + 1 => *hi = (*hi).max(a),
            _ => runs.push((a, a)),
        }
    }
    let rows: usize = runs.iter().map(|(lo, hi)| (hi - lo) as usize + 1).sum();
    if runs.len() > MAX_ATTNUM_SCANS || 2 * rows > highest as usize + 1 {
        return vec![(0, highest)];
    }
    runs
}

/// Adds a `chunk` row (deformed as `v`, `n`) to `chunks`, unless its attribute is not
/// `wanted`.
///
/// # Safety
/// `v`, `n` must be a deformed `chunk` tuple, on the backend thread (a corrupt row raises
/// an error).
unsafe fn parse_chunk(
    chunks: &mut Chunks,
    v: &[pg_sys::Datum; CHUNK_NATTS],
    n: &[bool; CHUNK_NATTS],
    wanted: Option<&[i16]>,
) {
    // SAFETY: `v`, `n` are a deformed chunk tuple (this fn's contract), read as its columns'
    // types.
    unsafe {
        let attnum: i16 = not_null(v[2], n[2], "chunk.attnum");
        // Others are skipped before their directory is detoasted and parsed.
        if attnum > 0 && wanted.is_some_and(|w| w.binary_search(&attnum).is_err()) {
            return;
        }
        let dir: &[u8] = not_null(v[7], n[7], "chunk.directory");
        add_chunk(
            chunks,
            InlineChunk {
                attnum,
                offset: int8(v[3]),
                length: int8(v[4]),
                null_count: int8(v[5]),
                raw_bytes: int8(v[6]),
                directory: dir,
            },
        );
    }
}

/// Parses a chunk's vector directory and adds the chunk to `chunks` (the order column
/// for attribute number 0). Raises XX001 for a negative attribute number or a directory
/// that does not parse.
fn add_chunk(chunks: &mut Chunks, c: InlineChunk<'_>) {
    if c.attnum < 0 {
        data_corrupted("chunk metadata with a negative attribute number");
    }
    PARSED.with(|p| p.set(p.get() + 1));
    let (vectors, zone) =
        Directory::parse(c.directory, c.length).unwrap_or_else(|e| data_corrupted(&e.to_string()));
    let meta = ChunkMeta {
        attnum: c.attnum,
        offset: c.offset,
        length: c.length,
        null_count: c.null_count,
        raw_bytes: c.raw_bytes,
        vectors,
        zone,
    };
    if c.attnum == 0 {
        chunks.order = Some(meta);
        return;
    }
    let at = c.attnum as usize - 1;
    if chunks.columns.len() <= at {
        chunks.columns.resize(at + 1, None);
    }
    chunks.columns[at] = Some(Rc::new(meta));
}

/// The chunks of a row group whose metadata is inline (`g.inline`), from the cache or
/// parsed (all of them: they are few) and cached; None for one with chunk rows. Unlike
/// chunk rows, inline metadata comes with the `row_group` row that the snapshot saw, so
/// it may be cached whatever the snapshot.
fn inline_chunks_of(storage_id: u64, g: &RowGroupMeta) -> Option<Rc<Chunks>> {
    let bytes = g.inline.as_deref()?;
    let key = (storage_id, g.first_row);
    if let Some(cached) = CACHE.with(|c| c.borrow_mut().entries.get(&key).cloned()) {
        return Some(cached);
    }
    let mut chunks = Chunks::default();
    for c in inline_chunks::decode(bytes).unwrap_or_else(|e| data_corrupted(&e)) {
        add_chunk(&mut chunks, c);
    }
    let chunks = Rc::new(chunks);
    CACHE.with(|c| c.borrow_mut().entries.insert(key, chunks.clone()));
    Some(chunks)
}

/// The row groups of a storage visible to `snapshot`, ordered by first row; with their
/// chunks unless `with_chunks` is false (then `chunks` is empty).
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn load_row_groups(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    with_chunks: bool,
) -> Vec<RowGroupMeta> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let mut groups = list_row_groups(storage_id, snapshot);
        if with_chunks {
            attach_all(storage_id, &mut groups, snapshot, None);
        }
        groups
    }
}

/// The row groups of a storage visible to `snapshot`, without chunks. Under the catalog
/// snapshot (NULL) the last list is kept while no transaction completes (and this one
/// has written nothing): a new connection's first plan asks three times (rows, column
/// sizes, zone maps), each a scan of every `row_group` row. Under an MVCC snapshot the
/// list is kept by what the snapshot says of other transactions (`SnapshotKey`): two
/// snapshots that say the same see the same rows of them, so while this transaction has
/// written nothing, a scan under a snapshot like the last one does not read the
/// `row_group` rows again (a tenth of a one-host query on the 10M-row TSBS table).
///
/// # Safety
/// As for `load_row_groups`.
unsafe fn list_row_groups(storage_id: u64, snapshot: pg_sys::Snapshot) -> Vec<RowGroupMeta> {
    // SAFETY: as for `load_row_groups` (this fn's contract): `snapshot` is NULL or valid.
    unsafe {
        let stamp = if snapshot.is_null() {
            completed_transactions().map(|c| Stamp::Catalog(storage_id, c))
        } else if (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_MVCC
            && completed_transactions().is_some()
        {
            Some(Stamp::Mvcc(storage_id, SnapshotKey::of(snapshot)))
        } else {
            None
        };
        if let Some(stamp) = &stamp {
            let known = LISTED.with(|l| l.borrow_mut().get(stamp).cloned());
            if let Some(groups) = known {
                return groups.to_vec();
            }
        }
        let mut groups: Vec<RowGroupMeta> = Vec::new();
        let empty = Rc::new(Chunks::default());
        scan_row_groups(storage_id, snapshot, |_, tup, v, n| {
            groups.push(parse_row_group(storage_id, tup, v, n, &empty))
        });
        if let Some(stamp) = stamp.filter(|_| groups.len() <= LISTED_MAX_GROUPS) {
            // Weighed by the delete masks the list holds besides its entries.
            let masks: usize = groups.iter().filter_map(|g| g.deleted.as_ref()).map(|m| m.byte_len()).sum();
            let weight = groups.len() * std::mem::size_of::<RowGroupMeta>() + masks;
            LISTED.with(|l| l.borrow_mut().insert_weighted(stamp, groups.as_slice().into(), weight));
        }
        groups
    }
}

thread_local! {
    /// The last lists `list_row_groups` made under the catalog snapshot and under MVCC
    /// snapshots.
    static LISTED: KeptForLife<BoundedCache<Stamp, Rc<[RowGroupMeta]>>> =
        kept_for_life(BoundedCache::weighted(LISTED_LISTS, LISTED_BYTES));
}

/// What a kept row-group list was read under: a storage id and the count of completed
/// transactions the catalog snapshot was taken at or after (such a list is kept for the
/// catalog snapshot only: a count read before the snapshot can make a list look older
/// than it is), or an MVCC snapshot's view of other transactions.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Stamp {
    Catalog(u64, u64),
    Mvcc(u64, SnapshotKey),
}

/// All an MVCC snapshot says of other transactions' rows (`XidInMVCCSnapshot`): its
/// bounds, the transactions in progress it lists (sorted) and how. Rows of this
/// transaction depend on its command id too, which is why lists are kept only while it
/// has no xid. (Snapshots copied for the executor lose their completion count, so that
/// cannot stand for this.)
#[derive(Clone, PartialEq, Eq, Hash)]
struct SnapshotKey {
    xmin: u32,
    xmax: u32,
    xip: Box<[u32]>,
    subxip: Box<[u32]>,
    suboverflowed: bool,
    during_recovery: bool,
}

impl SnapshotKey {
    /// # Safety
    /// `snapshot` must be a valid MVCC snapshot.
    unsafe fn of(snapshot: pg_sys::Snapshot) -> SnapshotKey {
        // SAFETY: a valid MVCC snapshot (this fn's contract) holds `xcnt` xids at `xip`
        // and `subxcnt` at `subxip` (either may be NULL when its count is 0).
        unsafe {
            let s = &*snapshot;
            let sorted = |p: *const pg_sys::TransactionId, n: usize| -> Box<[u32]> {
                let mut v: Vec<u32> = match n {
                    0 => Vec::new(),
                    _ => std::slice::from_raw_parts(p, n).iter().map(|&x| u32::from(x)).collect(),
                };
                v.sort_unstable();
                v.into()
            };
            SnapshotKey {
                xmin: s.xmin.into(),
                xmax: s.xmax.into(),
                xip: sorted(s.xip, s.xcnt as usize),
                subxip: sorted(s.subxip, s.subxcnt.max(0) as usize),
                suboverflowed: s.suboverflowed,
                during_recovery: s.takenDuringRecovery,
            }
        }
    }
}

/// Lists kept, and the row groups a kept list holds at most (a table written a row at a
/// time can have hundreds of thousands: such a list is read again rather than kept).
const LISTED_LISTS: usize = 16;
const LISTED_MAX_GROUPS: usize = 4096;
/// Bytes the kept lists hold at most (their entries and delete masks).
const LISTED_BYTES: usize = 8 << 20;

/// Whether chunk rows read under `snapshot` may go into the cache, which holds a row
/// group's chunks for good (they never change). An MVCC snapshot (NULL: the catalog
/// snapshot) sees a row group's chunk rows all or none. A dirty one reads each row as it
/// is when reached: those of a row group whose writer is still inserting them (a VACUUM
/// merging), or that a VACUUM removed since its row was read, come back partly or not
/// at all, and cached they would make the group's rows NULLs for this backend from then
/// on (logical replication's apply then found none of its rows).
unsafe fn keeps_chunks(snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: the caller's snapshot is NULL or valid.
    snapshot.is_null() || unsafe { crate::storage::shared::snapshot_kind::is_mvcc(snapshot) }
}

/// Row groups missing from the chunk cache above which `attach_all` reads the chunk rows
/// of the whole storage in one scan rather than a scan per row group.
const ONE_SCAN_GROUPS: usize = 8;

/// `attach_chunks_for` of every row group in `groups` (all of a storage, as
/// `load_row_groups` returns them).
///
/// # Safety
/// As `attach_chunks_for`.
unsafe fn attach_all(
    storage_id: u64,
    groups: &mut [RowGroupMeta],
    snapshot: pg_sys::Snapshot,
    attnums: Option<&[i16]>,
) {
    // Row groups with inline metadata are left to `attach_chunks_for` below.
    let missing: Vec<(usize, Option<Rc<Chunks>>)> = CACHE.with(|c| {
        let mut c = c.borrow_mut();
        groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.inline.is_none())
            .filter_map(|(i, g)| {
                let cached = c.entries.get(&(storage_id, g.first_row)).cloned();
                (!cached.as_deref().is_some_and(|c| c.covers(attnums))).then_some((i, cached))
            })
            .collect()
    });
    if missing.len() > ONE_SCAN_GROUPS {
        let wanted: HashMap<u64, Option<Vec<i16>>> = missing
            .iter()
            .map(|(i, cached)| (groups[*i].first_row, Chunks::lacking(cached.as_deref(), attnums)))
            .collect();
        // SAFETY: this fn's contract is `read_chunks`'.
        let mut all = unsafe { read_all_chunks(storage_id, snapshot, &wanted) };
        // SAFETY: the snapshot is valid (this fn's contract).
        let keep = unsafe { keeps_chunks(snapshot) };
        CACHE.with(|c| {
            let mut c = c.borrow_mut();
            for (i, cached) in missing {
                let g = &mut groups[i];
                let fresh = all
                    .remove(&g.first_row)
                    .unwrap_or_else(|| Chunks { parsed: wanted[&g.first_row].clone(), ..Chunks::default() });
                g.chunks = Rc::new(Chunks::merge(cached, fresh));
                if keep {
                    c.entries.insert((storage_id, g.first_row), g.chunks.clone());
                }
            }
        });
    }
    for g in groups.iter_mut() {
        // SAFETY: this fn's contract.
        unsafe { attach_chunks_for(storage_id, g, snapshot, attnums) };
    }
}

/// `load_row_groups` with the chunks of the attributes numbered in `attnums` (sorted)
/// only, and the order column.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn load_row_groups_for(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    attnums: &[i16],
) -> Vec<RowGroupMeta> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let mut groups = load_row_groups(storage_id, snapshot, false);
        attach_all(storage_id, &mut groups, snapshot, Some(attnums));
        groups
    }
}

/// `load_row_groups` with the chunks this backend has cached for them, whatever
/// attributes those cover; a group not cached gets `unread` (which should say that no
/// attribute was parsed): nothing is read from `chunk`. A caller attaches what it lacks
/// with `attach_chunks_for`, or `attach_every` when many row groups lack it.
///
/// # Safety
/// As `load_row_groups`.
pub unsafe fn load_row_groups_cached(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    unread: &Rc<Chunks>,
) -> Vec<RowGroupMeta> {
    // SAFETY: this fn's contract is `load_row_groups`'.
    let mut groups = unsafe { load_row_groups(storage_id, snapshot, false) };
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        for g in groups.iter_mut() {
            g.chunks = c.entries.get(&(storage_id, g.first_row)).cloned().unwrap_or_else(|| unread.clone());
        }
    });
    groups
}

/// The chunks of the attributes numbered in `attnums` (sorted) attached to every row
/// group of `groups` (of one storage, as `load_row_groups` returns them), those missing
/// from the cache read in one scan of `chunk` when there are many.
///
/// # Safety
/// As `attach_chunks_for`.
pub unsafe fn attach_every(
    storage_id: u64,
    groups: &mut [RowGroupMeta],
    snapshot: pg_sys::Snapshot,
    attnums: &[i16],
) {
    // SAFETY: this fn's contract.
    unsafe { attach_all(storage_id, groups, snapshot, Some(attnums)) }
}

/// Stored bytes per attribute, summed over chunk rows.
#[derive(Debug, Clone, Default)]
pub struct ColumnSizes {
    /// By attribute number - 1.
    pub bytes: Vec<u64>,
    /// The metadata rows summed (of a sample: those a full sum would read).
    pub chunk_rows: usize,
}

impl ColumnSizes {
    pub fn new(natts: usize) -> Self {
        ColumnSizes { bytes: vec![0; natts], chunk_rows: 0 }
    }

    fn add(&mut self, attnum: i16, bytes: u64) {
        self.chunk_rows += 1;
        if let Some(b) = (attnum as usize).checked_sub(1).and_then(|at| self.bytes.get_mut(at)) {
            *b += bytes;
        }
    }
}

/// What plan-time pruning reads of `groups` (a storage's row groups as the catalog
/// snapshot sees them, without chunks: `load_row_groups`): every one, or, past `sample`
/// row groups, an evenly spaced sample of about `sample` of them (every
/// `sample_step`-th). Those whose `row_group` row holds no zone maps (`zones`: inline
/// metadata, an older install's) come with the chunks of the attributes numbered in
/// `attnums`, read in one go; the others' chunks are read by `attach_chunks_of` for the
/// groups a filter keeps.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn sample_row_groups(
    storage_id: u64,
    groups: &[RowGroupMeta],
    attnums: &[i16],
    sample: usize,
) -> Vec<RowGroupMeta> {
    // SAFETY: as `load_row_groups` with the catalog snapshot (this fn's contract).
    unsafe {
        let snapshot = std::ptr::null_mut();
        let picked: Vec<RowGroupMeta> =
            groups.iter().step_by(sample_step(groups.len(), sample)).cloned().collect();
        // Groups whose row keeps no zone maps get their chunks, in one read for all.
        let (mut unsummed, mut picked): (Vec<_>, Vec<_>) =
            picked.into_iter().partition(|g| g.zones.is_none());
        if !unsummed.is_empty() {
            attach_all(storage_id, &mut unsummed, snapshot, Some(attnums));
            picked.append(&mut unsummed);
            picked.sort_unstable_by_key(|g| g.first_row);
        }
        picked
    }
}

/// The chunks of the attributes numbered in `attnums` (sorted) of `groups` (of one
/// storage, as the catalog snapshot sees them), read in one go.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn attach_chunks_of(storage_id: u64, groups: &mut [RowGroupMeta], attnums: &[i16]) {
    // SAFETY: as `attach_all` with the catalog snapshot (this fn's contract).
    unsafe { attach_all(storage_id, groups, std::ptr::null_mut(), Some(attnums)) }
}

/// Every how many of `groups` row groups a sample of at most `sample` takes one.
pub fn sample_step(groups: usize, sample: usize) -> usize {
    groups.div_ceil(sample.max(1)).max(1)
}

/// The zone maps `bytes` (row group `key`'s `row_group.zones`) hold, parsed once per
/// backend: every scan loads its relation's row groups under its own snapshot, and
/// parsing every column's zone map of every row group was a quarter of a one-host query
/// on the 10M-row TSBS table (98 row groups of 21 columns, to read 2 of them). A row
/// group's zone maps never change, but the cached ones are used only for the same bytes.
fn cached_zones(key: (u64, u64), bytes: &[u8]) -> Rc<[ColumnZone]> {
    let hit =
        CACHE.with(|c| c.borrow_mut().zones.get(&key).filter(|(b, _)| **b == *bytes).map(|(_, z)| z.clone()));
    hit.unwrap_or_else(|| {
        let zones: Rc<[ColumnZone]> =
            Rc::from(group_zones::decode(bytes).unwrap_or_else(|e| data_corrupted(&e.to_string())));
        CACHE.with(|c| c.borrow_mut().zones.insert(key, (Rc::from(bytes), zones.clone())));
        zones
    })
}

/// # Safety
/// `tup` must be a valid `row_group` tuple of storage `storage_id` and `v`, `n` its
/// deformed columns; call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub(super) unsafe fn parse_row_group(
    storage_id: u64,
    tup: pg_sys::HeapTuple,
    v: &[pg_sys::Datum; ROW_GROUP_NATTS],
    n: &[bool; ROW_GROUP_NATTS],
    empty: &Rc<Chunks>,
) -> RowGroupMeta {
    // SAFETY: the caller guarantees this fn's contract: `tup` is a valid `row_group` tuple
    // and `v`, `n` its deformed columns (read as their columns' types), and we are on the
    // backend thread inside a transaction, so the metadata relations may be opened, scanned
    // and written (relation, scan and tuple pointers below come from the calls that return
    // them and are used before being closed, ended or freed).
    unsafe {
        let header = (*tup).t_data;
        let writer = (pg_sys::HeapTupleHeaderGetXmin(header), (*header).t_choice.t_heap.t_field3.t_cid);
        let row_count = int8(v[2]);
        let deleted = (!n[5]).then(|| {
            let bytes: &[u8] = not_null(v[5], n[5], "row_group.deleted_rows");
            Rc::new(
                DeleteMask::from_bytes(bytes, row_count)
                    .unwrap_or_else(|| data_corrupted("delete mask does not fit its row group")),
            )
        });
        let inline = (!n[6]).then(|| Rc::from(not_null::<&[u8]>(v[6], n[6], "row_group.chunks")));
        let first_row = int8(v[1]);
        let zones =
            (!n[7]).then(|| cached_zones((storage_id, first_row), not_null(v[7], n[7], "row_group.zones")));
        RowGroupMeta {
            first_row,
            row_count,
            data_offset: int8(v[3]),
            data_length: int8(v[4]),
            chunks: empty.clone(),
            deleted,
            writer,
            inline,
            zones,
        }
    }
}

/// Fills in `g.chunks` from the cache or the `chunk` table.
/// Gives a row group loaded without its chunks (`load_row_groups(.., false)`) its
/// chunks, from the backend's cache when there.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn attach_chunks(storage_id: u64, g: &mut RowGroupMeta, snapshot: pg_sys::Snapshot) {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe { attach_chunks_for(storage_id, g, snapshot, None) }
}

/// `attach_chunks` for the attributes numbered in `attnums` (sorted; None: all). A
/// cached entry that lacks some has them read and added.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn attach_chunks_for(
    storage_id: u64,
    g: &mut RowGroupMeta,
    snapshot: pg_sys::Snapshot,
    attnums: Option<&[i16]>,
) {
    if let Some(chunks) = inline_chunks_of(storage_id, g) {
        g.chunks = chunks;
        return;
    }
    let key = (storage_id, g.first_row);
    let cached = CACHE.with(|c| c.borrow_mut().entries.get(&key).cloned());
    g.chunks = match cached {
        Some(chunks) if chunks.covers(attnums) => chunks,
        cached => {
            // Parse what is wanted now and the cache lacks, so entries only grow.
            let lacking = Chunks::lacking(cached.as_deref(), attnums);
            // SAFETY: `snapshot` is valid and we are inside a transaction (this fn's contract, the
            // same as `read_chunks`').
            let fresh = unsafe { read_chunks(storage_id, g.first_row, snapshot, lacking.as_deref()) };
            let chunks = Rc::new(Chunks::merge(cached, fresh));
            // SAFETY: as for `read_chunks` above.
            if unsafe { keeps_chunks(snapshot) } {
                CACHE.with(|c| c.borrow_mut().entries.insert(key, chunks.clone()));
            }
            chunks
        }
    };
}

/// The row group holding `row` as `snapshot` sees the row groups, with the chunks of the
/// attributes numbered in `attnums` (sorted; None: all) and its order column: one index
/// probe, for fetches that do not need the whole list. An index scan reading two columns
/// of a 21-column table parsed all 21 directories of each row group it reached.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn load_group_of_row(
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
    attnums: Option<&[i16]>,
) -> Option<RowGroupMeta> {
    // SAFETY: this fn's contract is `group_of_row`'s and `attach_chunks_for`'.
    unsafe {
        let mut g = group_of_row(storage_id, row, snapshot)?;
        attach_chunks_for(storage_id, &mut g, snapshot, attnums);
        Some(g)
    }
}

/// The row group holding `row` as `snapshot` sees the row groups, without chunks (none
/// parsed): for callers that want its writer.
///
/// # Safety
/// As for `load_group_of_row`.
pub unsafe fn group_of_row(storage_id: u64, row: u64, snapshot: pg_sys::Snapshot) -> Option<RowGroupMeta> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened and scanned (relation, scan and
    // tuple pointers below come from the calls that return them and are used before being
    // closed, ended or freed).
    unsafe {
        let none = Rc::new(Chunks { parsed: Some(Vec::new()), ..Chunks::default() });
        if let Some(group) = found_again(storage_id, row, snapshot, &none) {
            return Some(group);
        }
        let (group, tid) = last_starting_at_or_before::<ROW_GROUP_NATTS, _>(
            c"row_group",
            c"row_group_pkey",
            storage_id,
            row,
            snapshot,
            |tup, v, n| (parse_row_group(storage_id, tup, v, n, &none), (*tup).t_self),
        )
        .filter(|(g, _)| row < g.first_row + g.row_count)?;
        remember_found(storage_id, &group, tid);
        Some(group)
    }
}

/// A row group `group_of_row` found (without chunks), and where its `row_group` tuple
/// (that version of it) lies. A tuple version never changes, so what was parsed from it
/// serves again while it is there: parsing the delete mask of a large row group
/// (detoasting it) was most of a look-up.
struct FoundGroup {
    group: RowGroupMeta,
    tid: pg_sys::ItemPointerData,
}

/// Row groups found per storage that are remembered (the last ones found).
const FOUND_PER_STORAGE: usize = 16;

/// Storages whose found row groups are remembered (a large row group's delete mask is
/// up to 12.5 kB: at most about 13 MB in all).
const FOUND_STORAGES: usize = 64;

thread_local! {
    /// Row groups `group_of_row` found lately, by storage id. A row group's rows never
    /// change and no two row groups share a row number, so the one found holding a row is
    /// the only one that can: a later look-up of a row it holds needs only ask whether
    /// the snapshot sees that tuple (one heap fetch) instead of searching `row_group`
    /// again (two index scans). A single-row UPDATE looks its row's group up several
    /// times (the scan's fetch, the uniqueness check, the update), each in a new fetcher.
    static FOUND: KeptForLife<BoundedCache<u64, Vec<FoundGroup>>> = kept_for_life(BoundedCache::new(FOUND_STORAGES));
}

fn remember_found(storage_id: u64, group: &RowGroupMeta, tid: pg_sys::ItemPointerData) {
    FOUND.with(|f| {
        let mut f = f.borrow_mut();
        let groups = f.get_or_insert_with(storage_id, Vec::new);
        groups.retain(|g| g.group.first_row != group.first_row);
        if groups.len() >= FOUND_PER_STORAGE {
            groups.remove(0);
        }
        groups.push(FoundGroup { group: group.clone(), tid });
    });
}

/// The row group holding `row`, from a remembered one that holds it, if `snapshot` sees
/// that version of its tuple. None (the caller searches) when it does not (it may see
/// another version: VACUUM rewrites a group's tuple when it folds deletes into its mask),
/// when no remembered group holds `row`, or for a snapshot this does not serve (NULL,
/// SnapshotAny, historic and toast snapshots).
///
/// # Safety
/// As for `group_of_row`.
unsafe fn found_again(
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
    none: &Rc<Chunks>,
) -> Option<RowGroupMeta> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is valid or NULL, and
    // we are on the backend thread inside a transaction, so `row_group` may be opened and
    // a tuple fetched from it; the fetched tuple points into a pinned buffer, released
    // after it was parsed into owned values.
    unsafe {
        if snapshot.is_null()
            || !matches!(
                (*snapshot).snapshot_type,
                pg_sys::SnapshotType::SNAPSHOT_MVCC
                    | pg_sys::SnapshotType::SNAPSHOT_SELF
                    | pg_sys::SnapshotType::SNAPSHOT_DIRTY
            )
        {
            return None;
        }
        let (known, tid) = FOUND.with(|f| {
            let mut f = f.borrow_mut();
            let g = f
                .get(&storage_id)?
                .iter()
                .find(|g| row.wrapping_sub(g.group.first_row) < g.group.row_count)?;
            Some((g.group.clone(), g.tid))
        })?;
        let first_row = known.first_row;
        let relid = readable_relid(c"row_group")?;
        let rel = pg_sys::table_open(relid, pg_sys::AccessShareLock as i32);
        let mut tuple = pg_sys::HeapTupleData { t_self: tid, ..Default::default() };
        let mut buffer: pg_sys::Buffer = pg_sys::InvalidBuffer as pg_sys::Buffer;
        // VACUUM may have truncated the page away since (reading past the end is an ERROR).
        let (block, _) = pgrx::itemptr::item_pointer_get_both(tid);
        let nblocks = pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM);
        let seen = block < nblocks && pg_sys::heap_fetch(rel, snapshot, &mut tuple, &mut buffer, false);
        let mut group = None;
        if seen {
            let mut values = [pg_sys::Datum::from(0usize); ROW_GROUP_NATTS];
            let mut nulls = [true; ROW_GROUP_NATTS];
            pg_sys::heap_deform_tuple(&mut tuple, (*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
            // The same tuple, not another that took its line pointer after VACUUM: that
            // one's inserter ran later.
            let same = !nulls[0]
                && !nulls[1]
                && int8(values[0]) == storage_id
                && int8(values[1]) == first_row
                && pg_sys::HeapTupleHeaderGetXmin(tuple.t_data) == known.writer.0;
            if same {
                group = Some(RowGroupMeta { chunks: none.clone(), ..known });
            }
        }
        if buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(buffer);
        }
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        if group.is_none() {
            FOUND.with(|f| {
                if let Some(groups) = f.borrow_mut().get_mut(&storage_id) {
                    groups.retain(|g| g.group.first_row != first_row);
                }
            });
        }
        group
    }
}

/// Row groups whose chunk rows `column_bytes` reads at most; of more, an evenly spaced
/// sample of about as many, scaled.
const SIZE_SAMPLE_GROUPS: usize = 16;

/// Stored bytes per attribute (index attnum - 1) over `groups` (a storage's row groups
/// as the catalog snapshot sees them, without chunks: `load_row_groups`), and how many
/// metadata rows a full sum reads: for planning. Past
/// `SIZE_SAMPLE_GROUPS` row groups, the chunk rows of a sample of them, scaled by the
/// stored bytes of all (their `row_group` rows) over those of the sample: a new
/// connection's first plan of a wide table read every chunk row of it (for 10M rows of
/// 21 columns, 400 pages faulted in) to cost a point lookup.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn column_bytes(storage_id: u64, groups: &[RowGroupMeta], natts: usize) -> ColumnSizes {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened and scanned (relation, scan and tuple pointers
    // below come from the calls that return them and are used before being closed, ended
    // or freed).
    unsafe {
        let mut sizes = ColumnSizes::new(natts);
        let add = |sizes: &mut ColumnSizes, v: &[pg_sys::Datum; CHUNK_NATTS], n: &[bool; CHUNK_NATTS]| {
            sizes.add(not_null(v[2], n[2], "chunk.attnum"), int8(v[4]))
        };
        let snapshot = std::ptr::null_mut();
        // Inline metadata is summed without parsing its vector directories, and a row
        // group's zone maps come with its chunks' sizes: neither needs its chunk rows.
        let add_in_row = |sizes: &mut ColumnSizes, g: &RowGroupMeta| {
            if let Some(zones) = g.zones.as_deref() {
                for c in zones {
                    sizes.add(c.attnum, c.length);
                }
                return true;
            }
            let Some(bytes) = g.inline.as_deref() else { return false };
            for c in inline_chunks::decode(bytes).unwrap_or_else(|e| data_corrupted(&e)) {
                sizes.add(c.attnum, c.length);
            }
            true
        };
        if groups.len() <= SIZE_SAMPLE_GROUPS {
            let mut others = hashbrown::HashSet::new();
            for g in groups {
                if !add_in_row(&mut sizes, g) {
                    others.insert(g.first_row);
                }
            }
            // Chunk rows come and go with their row group's, so the chunk table alone has
            // the sums of the others; its vector directories (often toasted) are not read.
            if !others.is_empty() {
                scan_storage::<CHUNK_NATTS>(
                    c"chunk",
                    c"chunk_pkey",
                    storage_id,
                    snapshot,
                    pg_sys::AccessShareLock,
                    |_, _, v, n| {
                        if others.contains(&int8(v[1])) {
                            add(&mut sizes, v, n)
                        }
                    },
                );
            }
            return sizes;
        }
        let step = sample_step(groups.len(), SIZE_SAMPLE_GROUPS);
        let (mut sampled_bytes, mut sampled_groups) = (0u64, 0usize);
        for g in groups.iter().step_by(step) {
            sampled_bytes += g.data_length;
            sampled_groups += 1;
            if add_in_row(&mut sizes, g) {
                continue;
            }
            scan_keys::<CHUNK_NATTS>(
                c"chunk",
                c"chunk_pkey",
                &[storage_id, g.first_row],
                snapshot,
                pg_sys::AccessShareLock,
                |_, _, v, n| add(&mut sizes, v, n),
            );
        }
        let all_bytes: u64 = groups.iter().map(|g| g.data_length).sum();
        let scale = all_bytes as f64 / sampled_bytes.max(1) as f64;
        for b in sizes.bytes.iter_mut() {
            *b = (*b as f64 * scale) as u64;
        }
        // Counted as the rows a full sum would read: what makes a measurement worth scaling
        // rather than redoing at every plan once other transactions end (`plan_sizes`).
        sizes.chunk_rows = sizes.chunk_rows * groups.len() / sampled_groups.max(1) + groups.len();
        sizes
    }
}

/// Replaces the delete mask of row group `first_row` (a new version of its metadata row,
/// so snapshots that predate this transaction keep the old mask and the old marks).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn set_group_mask(storage_id: u64, first_row: u64, mask: &DeleteMask) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        scan_keys::<ROW_GROUP_NATTS>(
            c"row_group",
            c"row_group_pkey",
            &[storage_id, first_row],
            std::ptr::null_mut(),
            pg_sys::RowExclusiveLock,
            |rel, tup, v, n| {
                let mut values = *v;
                let mut nulls = *n;
                values[5] = datum(mask.to_bytes().as_slice());
                nulls[5] = false;
                pg_sys::simple_heap_delete(rel, &mut (*tup).t_self);
                insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
            },
        );
    }
}

/// Deletes the metadata of row group `first_row` (all its rows are deleted for everyone).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn delete_row_group(storage_id: u64, first_row: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
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
}

/// Whether a snapshot may see the row group stored in `tup` (read with SnapshotAny): its
/// insert did not roll back, and its removal (if any) is not yet old enough for
/// `removable` (no snapshot can see the group any more).
unsafe fn group_may_be_seen(
    tup: pg_sys::HeapTuple,
    removable: impl Fn(pg_sys::TransactionId) -> bool,
) -> bool {
    // SAFETY: the caller guarantees `tup` is a valid heap tuple; transaction-status checks
    // are allowed on the backend thread inside a transaction (the caller's context).
    unsafe {
        let running =
            |xid| pg_sys::TransactionIdIsCurrentTransactionId(xid) || pg_sys::TransactionIdIsInProgress(xid);
        let header = (*tup).t_data;
        let inserted = inserted(tup);
        let xmax = (*header).t_choice.t_heap.t_xmax;
        let removed_for_all = (*header).t_infomask as u32 & pg_sys::HEAP_XMAX_INVALID == 0
            && xmax != pg_sys::InvalidTransactionId
            && !running(xmax)
            && pg_sys::TransactionIdDidCommit(xmax)
            && removable(xmax);
        inserted && !removed_for_all
    }
}

/// Calls `f` with each `row_group` row of `storage_id` that `snapshot` sees, in row order.
///
/// # Safety
/// `snapshot` must be a valid snapshot; call on the backend thread inside a transaction (it
/// calls PostgreSQL, which may raise an error).
unsafe fn scan_row_groups(
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    f: impl FnMut(
        pg_sys::Relation,
        pg_sys::HeapTuple,
        &[pg_sys::Datum; ROW_GROUP_NATTS],
        &[bool; ROW_GROUP_NATTS],
    ),
) {
    // SAFETY: the caller guarantees this fn's contract.
    unsafe { scan_storage(c"row_group", c"row_group_pkey", storage_id, snapshot, pg_sys::AccessShareLock, f) }
}

/// The reservation windows of transactions still running (their rows may sit in a write
/// buffer), read with a dirty snapshot. Read these before `live_group_ranges`: a writer
/// inserts its row groups before it commits, so one that commits after this scan has its
/// row groups seen by that one.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn running_reservations(storage_id: u64) -> Vec<(u64, u64)> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be scanned and transaction status checked.
    unsafe {
        let running = |xid: pg_sys::TransactionId| {
            pg_sys::TransactionIdIsCurrentTransactionId(xid) || pg_sys::TransactionIdIsInProgress(xid)
        };
        let mut ranges = Vec::new();
        let mut dirty = pg_sys::SnapshotData {
            snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY,
            ..Default::default()
        };
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
        for w in crate::storage::shared::reservation_slots::windows(storage_id) {
            if running(w.xid.into()) {
                ranges.push((w.first_row, w.end_row - w.first_row));
            }
        }
        ranges
    }
}

/// Row-number ranges of the row groups some transaction may still see: their insert did
/// not roll back and their removal (by VACUUM) is not yet older than `oldest_xmin`.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn live_group_ranges(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> Vec<(u64, u64)> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be scanned and transaction status checked.
    unsafe {
        let mut ranges = Vec::new();
        scan_row_groups(storage_id, &raw mut pg_sys::SnapshotAnyData, |_, tup, v, _| {
            if group_may_be_seen(tup, |xmax| pg_sys::TransactionIdPrecedes(xmax, oldest_xmin)) {
                ranges.push((int8(v[1]), int8(v[2])));
            }
        });
        ranges
    }
}

/// How many row groups of fewer than `rows` rows (stored, deleted ones included) a fresh
/// snapshot sees.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn count_small_groups(storage_id: u64, rows: u64) -> u64 {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be scanned; the snapshot is registered for the scan.
    unsafe {
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        let mut small = 0;
        scan_row_groups(storage_id, snapshot, |_, _, v, _| small += (int8(v[2]) < rows) as u64);
        pg_sys::UnregisterSnapshot(snapshot);
        small
    }
}

/// Whether some snapshot of `rel` may see row `row` in a row group (see
/// `group_may_be_seen`; removals are judged by `GlobalVisCheckRemovableXid`). Rows still
/// in a running writer's memory are not in a row group: ask `reserver_running` first.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, whose storage is `storage_id`;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn row_may_be_seen(rel: pg_sys::Relation, storage_id: u64, row: u64) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is open and locked, and we are
    // on the backend thread inside a transaction, so the metadata relations may be scanned
    // and transaction status checked.
    unsafe {
        let mut seen = false;
        let bounds = [
            (1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, storage_id),
            (
                2,
                pg_sys::BTGreaterEqualStrategyNumber,
                pg_sys::F_INT8GE,
                (row + 1).saturating_sub(crate::storage::format::layout::ROW_GROUP_ROWS as u64),
            ),
            (2, pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, row),
        ];
        scan_bounds::<ROW_GROUP_NATTS>(
            c"row_group",
            c"row_group_pkey",
            &bounds,
            &raw mut pg_sys::SnapshotAnyData,
            pg_sys::AccessShareLock,
            |_, tup, v, _| {
                seen = seen
                    || (row < int8(v[1]) + int8(v[2])
                        && group_may_be_seen(tup, |xmax| pg_sys::GlobalVisCheckRemovableXid(rel, xmax)));
            },
        );
        seen
    }
}

#[cfg(test)]
mod attnum_range_tests {
    use super::attnum_ranges;

    #[test]
    fn scattered_wanted_attributes_are_read_by_runs_adjacent_ones_at_once() {
        // TSBS q6: two metrics of 21 columns.
        assert_eq!(attnum_ranges(&[12, 13]), vec![(0, 0), (12, 13)]);
        assert_eq!(attnum_ranges(&[3, 9, 20]), vec![(0, 0), (3, 3), (9, 9), (20, 20)]);
        // Low attributes, or most of those below the highest: one range.
        assert_eq!(attnum_ranges(&[1, 2]), vec![(0, 2)]);
        assert_eq!(attnum_ranges(&[1, 3, 4, 6]), vec![(0, 6)]);
        // More runs than scans worth it.
        assert_eq!(attnum_ranges(&[10, 20, 30, 40, 50]), vec![(0, 50)]);
        // Only the order column.
        assert_eq!(attnum_ranges(&[]), vec![(0, 0)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_evenly_spaced_and_bounded() {
        assert_eq!(sample_step(0, 256), 1);
        assert_eq!(sample_step(256, 256), 1);
        assert_eq!(sample_step(257, 256), 2);
        for groups in [257, 5000, 24_698, 1_000_000] {
            let taken = (0..groups).step_by(sample_step(groups, 256)).count();
            assert!(taken <= 256 && taken > 128, "{groups}: {taken}");
        }
    }

    fn parsed(attnums: &[i16]) -> Chunks {
        let mut c = Chunks { parsed: Some(attnums.to_vec()), ..Chunks::default() };
        for &a in attnums {
            let at = a as usize - 1;
            if c.columns.len() <= at {
                c.columns.resize(at + 1, None);
            }
            c.columns[at] = Some(Rc::new(ChunkMeta::new(a, 100 * a as u64, 10, 0, 10, Vec::new())));
        }
        c
    }

    #[test]
    fn chunks_parse_only_what_the_cache_lacks_and_keep_what_it_had() {
        let old = Rc::new(parsed(&[1, 4]));
        assert_eq!(Chunks::lacking(Some(&old), Some(&[1, 2, 4, 5])), Some(vec![2, 5]));
        assert_eq!(Chunks::lacking(None, Some(&[2])), Some(vec![2]));
        assert_eq!(Chunks::lacking(Some(&old), None), None);
        let merged = Chunks::merge(Some(old.clone()), parsed(&[2, 5]));
        assert_eq!(merged.parsed, Some(vec![1, 2, 4, 5]));
        assert!(merged.covers(Some(&[1, 2, 4, 5])) && !merged.covers(Some(&[3])) && !merged.covers(None));
        for a in [1, 2, 4, 5] {
            assert_eq!(merged.column(a).map(|c| c.offset), Some(100 * a as u64), "attribute {a}");
        }
        assert!(merged.column(3).is_none());
        // The metadata it had is shared, not copied.
        assert!(Rc::ptr_eq(merged.columns[0].as_ref().unwrap(), old.columns[0].as_ref().unwrap()));
        // A read of every attribute replaces a partial entry.
        let all = Chunks { parsed: None, ..parsed(&[1, 2]) };
        assert_eq!(Chunks::merge(Some(old), all).parsed, None);
    }
}
