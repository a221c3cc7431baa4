//! The sizes the planner asks for on every plan of a columnar table — its row count
//! (`relation_estimate_size`) and the bytes of each column (the ColumnarScan's cost) —
//! cached per backend. Both are sums over every row group's metadata, which cost a
//! short point lookup more than its execution did.
//!
//! A measurement is exact while no transaction that could have changed the metadata has
//! ended anywhere (PostgreSQL's count of completed transactions, the test it uses to
//! reuse a snapshot), and is only made or used as exact by a transaction that has
//! written nothing itself: its own flushes change the sums without any transaction
//! ending.
//!
//! Under a steady stream of small writes (many clients updating a small table) the
//! count changes between any two plans and every writing transaction would sum again,
//! over a row group per write: planning grew with the table's history, to ten
//! milliseconds a statement after a minute. So a measurement that read many metadata
//! rows stays in use, scaled by the relation's size in blocks as it grows, until the
//! relation has grown by a tenth since: what heap's estimate does with `reltuples`,
//! and a sum over N rows then costs O(1) per plan amortized. Small metadata is always
//! summed exactly. The costly measurements of a table are made again together, from one
//! reading of its row groups (`listed_groups`): made one by one, each went stale at
//! another plan and read every row group itself, and under single-row UPDATEs from four
//! clients (a row group each, 50,000 after five seconds) that was a sixth of the time.

use crate::storage::catalog;
use crate::storage::format::encoding::Compression;
use crate::storage::format::zonemap::ZoneStats;
use crate::storage::relation::pages;
use crate::storage::shared::cache::{kept_for_life, BoundedCache, KeptForLife};
use crate::storage::shared::completions::completed_transactions;
use pgrx::pg_sys;
use std::cell::{OnceCell, RefCell};
use std::rc::Rc;

/// One sum, and what it was measured against.
#[derive(Clone)]
struct Measured<T> {
    value: T,
    /// PostgreSQL's completed-transaction count then.
    completed: u64,
    /// The relation's size in blocks then.
    blocks: u32,
    /// Whether summing read enough metadata rows to be worth scaling instead.
    costly: bool,
}

#[derive(Default)]
struct Sizes {
    rows: Option<Measured<u64>>,
    column_bytes: Option<Measured<Rc<[u64]>>>,
    zones: Option<Measured<Rc<ZoneSet>>>,
    framed: Option<Measured<Rc<[f32]>>>,
}

impl Sizes {
    /// Drops the measurements that are scaled rather than redone.
    fn forget_costly(&mut self) {
        fn go<T>(m: &mut Option<Measured<T>>) {
            if m.as_ref().is_some_and(|m| m.costly) {
                *m = None;
            }
        }
        go(&mut self.rows);
        go(&mut self.column_bytes);
        go(&mut self.zones);
        go(&mut self.framed);
    }
}

/// A long row-group list (`COSTLY_ROWS` or more) read for a measurement, kept until the
/// transaction ends for the other measurements of the same table made in it, while the
/// relation has the same size in blocks (see the module's docs).
struct ListedGroups {
    storage_id: u64,
    blocks: u32,
    groups: Rc<[catalog::RowGroupMeta]>,
}

thread_local! {
    static LISTED: RefCell<Option<ListedGroups>> = const { RefCell::new(None) };
}

/// The row groups of `now`'s relation as the catalog snapshot sees them, without chunks:
/// the list a measurement of this transaction kept, or read now.
///
/// # Safety
/// On the backend thread inside a transaction, the relation open and locked.
unsafe fn listed_groups(now: &Now) -> Rc<[catalog::RowGroupMeta]> {
    let kept = LISTED.with_borrow(|l| {
        l.as_ref()
            .filter(|l| l.storage_id == now.storage_id && l.blocks == now.blocks)
            .map(|l| l.groups.clone())
    });
    if let Some(groups) = kept {
        return groups;
    }
    // SAFETY: this fn's contract.
    let groups: Rc<[catalog::RowGroupMeta]> =
        unsafe { catalog::load_row_groups(now.storage_id, std::ptr::null_mut(), false) }.into();
    if groups.len() >= COSTLY_ROWS {
        let kept = ListedGroups { storage_id: now.storage_id, blocks: now.blocks, groups: groups.clone() };
        LISTED.with_borrow_mut(|l| *l = Some(kept));
    }
    groups
}

/// Lets go of the list `listed_groups` kept: at the end of every transaction.
pub fn end_of_transaction() {
    LISTED.with_borrow_mut(|l| *l = None);
}

/// One row group as the planner sees it: its rows, and per attribute (index attnum
/// minus 1) the zone statistics of its chunk and of each of its vectors. They are read
/// from the cached chunk metadata itself, not copied: a new connection's first plan of
/// a table of many row groups would otherwise allocate (and fault in) a second copy of
/// every vector's zone map. A row group whose `row_group` row keeps its zone maps
/// (`group_zones`) answers for its chunks from them, and has its vectors' read only
/// when a filter keeps it (`ZoneSet::read_vectors`).
pub struct GroupZones {
    pub rows: u64,
    group: catalog::RowGroupMeta,
    /// Its chunks' metadata, once read (at once for a group without zone maps kept).
    chunks: OnceCell<Rc<catalog::Chunks>>,
}

impl GroupZones {
    fn new(group: catalog::RowGroupMeta) -> GroupZones {
        let chunks = OnceCell::new();
        if group.zones.is_none() {
            let _ = chunks.set(group.chunks.clone());
        }
        GroupZones { rows: group.row_count, group, chunks }
    }

    fn chunk(&self, att: usize) -> Option<&catalog::ChunkMeta> {
        self.chunks.get()?.column(att as i16 + 1)
    }

    /// The zone statistics of attribute `att`'s chunk; None if it is not stored in this
    /// row group, or was not measured.
    pub fn stats(&self, att: usize) -> Option<ZoneStats> {
        // A group without zone maps kept came with its chunks attached.
        self.group.stats(att)
    }

    /// The zone statistics of vector `v` of attribute `att`'s chunk (None as `stats`, or
    /// when its vectors were not read: see `ZoneSet::read_vectors`).
    pub fn vector(&self, att: usize, v: usize) -> Option<ZoneStats> {
        let e = self.chunk(att)?.vectors.get(v)?;
        Some(ZoneStats { zone: e.zone, rows: e.rows as u64, null_count: e.null_count as u64 })
    }

    /// Whether its vectors' zone maps are known (read, or came with the row group).
    pub fn vectors_read(&self) -> bool {
        self.chunks.get().is_some()
    }

    /// The zone statistics of every vector of attribute `att`'s chunk (none as `vector`).
    pub fn vectors(&self, att: usize) -> impl Iterator<Item = ZoneStats> + '_ {
        (0..self.chunk(att).map_or(0, |c| c.vectors.len())).filter_map(move |v| self.vector(att, v))
    }
}

/// Tables whose sizes are kept; past this the least recently planned go.
const MAX_TABLES: usize = 1024;

/// Metadata rows a sum must read to be scaled rather than redone (about a millisecond).
const COSTLY_ROWS: usize = 1000;

/// The completed-transaction count of a measurement never taken as exact.
const NEVER_EXACT: u64 = u64::MAX;

/// Growth in blocks, as a fraction, up to which a costly sum is scaled.
const SCALE_UP_TO: f64 = 0.1;

thread_local! {
    static SIZES: KeptForLife<BoundedCache<u64, Sizes>> = kept_for_life(BoundedCache::new(MAX_TABLES));
}

/// What a measurement of `rel` is taken against now.
struct Now {
    storage_id: u64,
    /// None when this transaction has written (`completed_transactions`).
    completed: Option<u64>,
    blocks: u32,
}

impl Now {
    /// # Safety
    /// `rel` is open and locked, inside a transaction.
    unsafe fn of(rel: pg_sys::Relation) -> Now {
        // SAFETY: `rel` is open and locked, inside a transaction (this fn's contract), so
        // its metapage and size may be read and transaction ids asked for.
        unsafe {
            Now {
                storage_id: pages::storage_id(rel),
                completed: completed_transactions(),
                blocks: pages::nblocks(rel),
            }
        }
    }

    /// Keeps `value`, which read `read` metadata rows, in `slot`.
    fn record<T>(&self, slot: impl Fn(&mut Sizes) -> &mut Option<Measured<T>>, value: T, read: usize) {
        // A transaction that has written cannot measure exactly (its own row groups are in
        // the sum), but a costly sum is still worth scaling: without it, every statement of
        // a writing transaction (BEGIN; UPDATE ...; DELETE ...; END) summed the table again.
        let costly = read >= COSTLY_ROWS;
        let Some(completed) = self.completed.or(costly.then_some(NEVER_EXACT)) else { return };
        SIZES.with(|s| {
            let measured = Measured { value, completed, blocks: self.blocks, costly };
            *slot(s.borrow_mut().get_or_insert_with(self.storage_id, Sizes::default)) = Some(measured);
        });
    }
}

/// The value of `rel`'s measurement that `slot` selects: exact from the cache, scaled
/// from a costly one, or from `compute` (which also returns the metadata rows it read).
unsafe fn cached<T: Clone>(
    rel: pg_sys::Relation,
    slot: impl Fn(&mut Sizes) -> &mut Option<Measured<T>>,
    scale: impl FnOnce(&T, f64) -> T,
    compute: impl FnOnce(&Now) -> (T, usize),
) -> T {
    // SAFETY: `rel` is open and locked, inside a transaction (this fn's contract).
    let now = unsafe { Now::of(rel) };
    let known = SIZES.with(|s| s.borrow_mut().get_mut(&now.storage_id).and_then(|e| slot(e).clone()));
    if let Some(m) = known {
        if now.completed == Some(m.completed) {
            return m.value;
        }
        let grown = now.blocks as f64 / m.blocks.max(1) as f64;
        if m.costly && now.blocks >= m.blocks && grown <= 1.0 + SCALE_UP_TO {
            return scale(&m.value, grown);
        }
        if m.costly {
            // The others are made again as this plan asks for them, from the same list.
            SIZES.with(|s| {
                if let Some(e) = s.borrow_mut().get_mut(&now.storage_id) {
                    e.forget_costly();
                }
            });
        }
    }
    let (value, read) = compute(&now);
    now.record(slot, value.clone(), read);
    value
}

/// Rows stored in the row groups the catalog snapshot sees (deleted ones included).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn row_count(rel: pg_sys::Relation) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metadata
    // reads and transaction-status checks are allowed.
    unsafe {
        cached(
            rel,
            |e| &mut e.rows,
            |&rows, grown| (rows as f64 * grown) as u64,
            |now| {
                let groups = listed_groups(now);
                (groups.iter().map(|g| g.row_count).sum(), groups.len())
            },
        )
    }
}

/// Stored bytes of each of the first `natts` attributes.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn column_bytes(rel: pg_sys::Relation, natts: usize) -> Rc<[u64]> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metadata
    // reads and transaction-status checks are allowed.
    unsafe {
        let bytes = cached(
            rel,
            |e| &mut e.column_bytes,
            |bytes, grown| bytes.iter().map(|&b| (b as f64 * grown) as u64).collect(),
            |now| {
                let sizes = catalog::column_bytes(now.storage_id, &listed_groups(now), natts);
                (sizes.bytes.into(), sizes.chunk_rows)
            },
        );
        if bytes.len() == natts {
            bytes
        } else {
            // Measured for another number of attributes (ALTER TABLE since).
            SIZES.with(|s| s.borrow_mut().remove(&pages::storage_id(rel)));
            column_bytes(rel, natts)
        }
    }
}

/// Row groups whose vectors `framed_shares` samples.
const FRAMED_SAMPLE_GROUPS: usize = 4;

/// Per attribute of the first `natts`, the share of its vectors compressed in zstd
/// frames (`Compression::ZstdFrames`: a fetch decompresses the frame its row lies in,
/// not the whole vector), from up to `FRAMED_SAMPLE_GROUPS` evenly spaced row groups'
/// chunks of the attributes `atts` (indexes, sorted: the byte-string columns; the
/// others' shares are 0).
///
/// # Safety
/// As `column_bytes`.
pub unsafe fn framed_shares(rel: pg_sys::Relation, natts: usize, atts: &[usize]) -> Rc<[f32]> {
    let compute = |now: &Now| {
        let mut shares = vec![0f32; natts];
        if atts.is_empty() {
            return (Rc::from(shares), 0);
        }
        // SAFETY: run by `cached` during this call, inside the caller's transaction (this fn's
        // contract).
        let groups = unsafe { listed_groups(now) };
        let n = groups.len().min(FRAMED_SAMPLE_GROUPS);
        let mut sample: Vec<catalog::RowGroupMeta> =
            (0..n).map(|k| groups[k * groups.len() / n].clone()).collect();
        let attnums: Vec<i16> = atts.iter().map(|&a| a as i16 + 1).collect();
        // SAFETY: as above.
        unsafe { catalog::attach_chunks_of(now.storage_id, &mut sample, &attnums) };
        let framed = Compression::ZstdFrames as u8;
        for &a in atts.iter().filter(|&&a| a < natts) {
            let (mut all, mut yes) = (0usize, 0usize);
            for c in sample.iter().filter_map(|g| g.chunks.column(a as i16 + 1)) {
                all += c.vectors.len();
                yes += c.vectors.iter().filter(|v| v.compression == framed).count();
            }
            shares[a] = if all == 0 { 0.0 } else { yes as f32 / all as f32 };
        }
        (Rc::from(shares), groups.len() + n * atts.len())
    };
    // SAFETY: `rel` is open and locked, inside a transaction (this fn's contract).
    let shares = unsafe { cached(rel, |e| &mut e.framed, |f, _| f.clone(), compute) };
    if shares.len() == natts {
        shares
    } else {
        // Measured for another number of attributes (ALTER TABLE since).
        // SAFETY: as above.
        unsafe { forget(rel, |e| &mut e.framed) };
        // SAFETY: as above.
        unsafe { framed_shares(rel, natts, atts) }
    }
}

/// Per row group, the zone statistics of attributes `atts` (indexes, sorted) of the
/// first `natts`: what a pushed filter's constants are checked against at plan time.
/// Only those attributes' chunk metadata is read. A scaled (stale) measurement lacks the
/// newest row groups, which only makes the estimate prune less.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn group_zones(rel: pg_sys::Relation, natts: usize, atts: &[usize]) -> Rc<ZoneSet> {
    let compute = |now: &Now, atts: Vec<usize>| {
        let attnums: Vec<i16> = atts.iter().map(|&a| a as i16 + 1).collect();
        // SAFETY: run by `cached` during this call, inside the caller's transaction (this fn's
        // contract).
        let (groups, total_groups) = unsafe {
            let all = listed_groups(now);
            (catalog::sample_row_groups(now.storage_id, &all, &attnums, ZONE_SAMPLE_GROUPS), all.len())
        };
        let zones: Vec<GroupZones> = groups.into_iter().map(GroupZones::new).collect();
        let read = total_groups * (1 + atts.len());
        (Rc::new(ZoneSet { storage_id: now.storage_id, atts, natts, groups: zones, total_groups }), read)
    };
    // SAFETY: `rel` is open and locked, inside a transaction (this fn's contract).
    let set = unsafe { cached(rel, |e| &mut e.zones, |z, _| z.clone(), |now| compute(now, atts.to_vec())) };
    if set.natts == natts && atts.iter().all(|a| set.atts.binary_search(a).is_ok()) {
        return set;
    }
    // Measured for other attributes (or before an ALTER TABLE): measure the union again.
    let mut union = if set.natts == natts { set.atts.clone() } else { Vec::new() };
    union.extend_from_slice(atts);
    union.sort_unstable();
    union.dedup();
    // SAFETY: as above.
    unsafe { forget(rel, |e| &mut e.zones) };
    // SAFETY: as above.
    unsafe { cached(rel, |e| &mut e.zones, |z, _| z.clone(), |now| compute(now, union)) }
}

/// Drops `rel`'s measurement that `slot` selects, so that the next `cached` call makes
/// it again.
///
/// # Safety
/// `rel` is open and locked, inside a transaction.
unsafe fn forget<T>(rel: pg_sys::Relation, slot: impl Fn(&mut Sizes) -> &mut Option<Measured<T>>) {
    // SAFETY: this fn's contract.
    let storage_id = unsafe { pages::storage_id(rel) };
    SIZES.with(|s| {
        if let Some(e) = s.borrow_mut().get_mut(&storage_id) {
            *slot(e) = None;
        }
    });
}

/// Zone statistics of some attributes in every row group.
pub struct ZoneSet {
    storage_id: u64,
    /// The attributes measured (indexes, sorted), of `natts`.
    pub atts: Vec<usize>,
    pub natts: usize,
    /// Every row group, or past `ZONE_SAMPLE_GROUPS` an evenly spaced sample of them.
    pub groups: Vec<GroupZones>,
    /// How many row groups there are.
    pub total_groups: usize,
}

impl ZoneSet {
    /// Reads the vectors' zone maps of the row groups `keeps` keeps (by their chunks'
    /// statistics, `GroupZones::stats`) that have not had them read, in one go: a filter
    /// whose row groups' zone maps rule most of them out reads the directories of the
    /// few it keeps, not of all.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction (it calls PostgreSQL, which may
    /// raise an error).
    pub unsafe fn read_vectors(&self, keeps: impl Fn(&GroupZones) -> bool) {
        // SAFETY: this fn's contract.
        unsafe { self.read_vectors_sampled(keeps, usize::MAX) }
    }

    /// `read_vectors`, but of at most `at_most` of the row groups `keeps` keeps, evenly
    /// spaced among them: what an estimate scales from (see `VECTOR_SAMPLE_GROUPS`).
    ///
    /// # Safety
    /// As `read_vectors`.
    pub unsafe fn read_vectors_sampled(&self, keeps: impl Fn(&GroupZones) -> bool, at_most: usize) {
        let kept: Vec<&GroupZones> = self.groups.iter().filter(|g| keeps(g)).collect();
        let sample = match kept.len() > at_most {
            true => (0..at_most).map(|k| kept[k * kept.len() / at_most]).collect(),
            false => kept,
        };
        let wanted: Vec<&GroupZones> = sample.into_iter().filter(|g| g.chunks.get().is_none()).collect();
        if wanted.is_empty() {
            return;
        }
        let attnums: Vec<i16> = self.atts.iter().map(|&a| a as i16 + 1).collect();
        let mut groups: Vec<catalog::RowGroupMeta> = wanted.iter().map(|g| g.group.clone()).collect();
        // SAFETY: this fn's contract.
        unsafe { catalog::attach_chunks_of(self.storage_id, &mut groups, &attnums) };
        for (g, read) in wanted.into_iter().zip(groups) {
            let _ = g.chunks.set(read.chunks);
        }
    }
}

/// Row groups whose zone maps the planner reads at most. A trickle of small transactions
/// leaves thousands of row groups until they are merged: reading and checking every one
/// made planning each statement (an UPDATE by key) grow with them, and past the chunk
/// cache's size (`catalog::CACHE_MAX_ENTRIES`) each plan parsed them all again. Beyond
/// this many an evenly spaced sample stands for them, which plan-time pruning scales.
pub const ZONE_SAMPLE_GROUPS: usize = 256;

/// Row groups a filter keeps whose vectors' zone maps plan-time pruning reads at most;
/// the others keep the share of vectors the sample did. Reading them means a catalog
/// scan and a directory per filter column and row group: on a new connection, planning
/// a join whose fact table's filter kept all of its 59 row groups read 118 directories.
/// (Answers that need every vector's zone map, such as `kept_range`'s, read them all.)
pub const VECTOR_SAMPLE_GROUPS: usize = 16;
