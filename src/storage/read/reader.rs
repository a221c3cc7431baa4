//! Reads a columnar relation row group by row group, decoding only the chosen columns,
//! one vector at a time, into Datums.

use super::decode::{decode_checked, decode_rows_checked, order_values, read_vector};
use super::handed_groups;
use super::read_ahead::ReadAhead;
use super::row_batch::RowBatch;
use super::vector_filter::{ColumnSource, VectorFilter};
use crate::storage::catalog::{self, RowGroupMeta};
use crate::storage::format::delete_mask::{self, DeleteMask};
use crate::storage::format::encoding::DecodedVector;
use crate::storage::format::layout::VECTOR_ROWS;
use crate::storage::format::zonemap::{Verdict, ZonePredicate, ZoneStats};
use crate::storage::relation::datum::{self, ColumnKind, DatumColumn};
use crate::storage::relation::pages;
use crate::storage::relation::prefetch;
use crate::storage::relation::slot;
use crate::storage::relation::tid::row_tid;
use crate::storage::shared::error::data_corrupted;
use crate::storage::shared::snapshot_kind;
use crate::storage::write::{pending_marks, write_buffer};
use pgrx::pg_sys;
use std::rc::Rc;

pub use super::group_claim::GroupClaim;

/// How one attribute is produced for the current row group.
#[derive(Clone, Copy)]
enum Source {
    /// Decoded from this row group's chunk.
    Chunk,
    /// Not stored in this row group (added later): the column's default, or NULL.
    Missing(pg_sys::Datum, bool),
    /// Not requested by the scan.
    Null,
}

pub struct Reader {
    rel: pg_sys::Relation,
    /// The descriptor rows are read with: the relation's, until a slot of another one
    /// asks for rows (see `read_as`). `kinds` and the missing values come from it.
    desc: pg_sys::TupleDesc,
    kinds: Vec<ColumnKind>,
    /// Per attribute of the relation's descriptor: does the scan need it?
    wanted: Vec<bool>,
    /// Per attribute: does the slot need it? (None: every wanted one.) An attribute
    /// only the filter reads is never made into Datums, and a dictionary-encoded vector
    /// of it stays a dictionary.
    output: Option<Vec<bool>>,
    groups: Vec<RowGroupMeta>,
    /// Row numbers deleted for the scan's snapshot (marks not yet folded into masks).
    deleted_rows: Vec<u64>,
    /// The current row group's deleted rows, if it has any.
    mask: Option<DeleteMask>,
    /// Whether the current row group has an order column (a flush stored it in sort_by
    /// order: position p holds the row at offset order[p]), and its vector
    /// `order_vector_at`, read when a vector of the row group needs it.
    has_order: bool,
    order_vector: Vec<u32>,
    order_vector_at: Option<usize>,
    group_first_row: u64,
    claim: GroupClaim,
    strategy: pg_sys::BufferAccessStrategy,
    /// The relation's size in blocks when the scan began (its row groups lie within).
    nblocks: u32,
    // The row group being read.
    group: Option<usize>,
    sources: Vec<Source>,
    /// The stored bytes of the vector being decoded (any column's, or the order's).
    vector_bytes: Vec<u8>,
    vector: usize,
    vector_count: usize,
    vector_first_row: u64,
    vector_rows: usize,
    /// The current vector's rows the scan returns, ascending: live ones that pass the
    /// filter. `row` indexes it (the next one to return).
    selection: Vec<u32>,
    row: usize,
    /// The slot and row group whose constant attributes `next` has written.
    slot_primed_for: Option<(usize, usize)>,
    /// The selected rows of the current vector as the slot takes them: its output
    /// attributes (those decoded from the row group's chunks), row by row.
    batch: RowBatch,
    /// (attribute index, predicate): row groups and vectors they refute are skipped.
    predicates: Vec<(usize, ZonePredicate)>,
    /// A filter pushed into the scan: rows that fail it are never returned.
    filter: Option<Box<dyn VectorFilter>>,
    counters: ReadCounters,
    /// What zone maps say of the filter on the vector `seek_vector` positioned on.
    seek_verdict: Verdict,
    /// For the order column.
    scratch: DecodedVector,
    /// Per attribute, the current vector decoded (if `decoded`) and as Datums.
    vectors: Vec<DecodedVector>,
    decoded: Vec<bool>,
    /// Per attribute decoded, whether only some rows of it were (`partial_rows`, for a
    /// filter test that reads just those: `decode_attr_rows`).
    partial: Vec<bool>,
    /// Those rows, marked (`mark_rows`).
    partial_rows: Vec<Vec<u8>>,
    columns: Vec<DatumColumn>,
    /// Per attribute: decode vectors of scaled numerics as their numbers
    /// (`DecodedVector::keep_scaled`), for a consumer that reads only numbers of it.
    scaled: Vec<bool>,
    /// Which pages of the current row group were asked for ahead of the scan.
    read_ahead: ReadAhead,
    /// Chunk metadata still to attach, for a reader made by `new_lazy`.
    lazy: Option<LazyChunks>,
    /// Where `restart` reads the row groups again, for a snapshot that sees later changes.
    reload: Option<GroupSource>,
    /// Where the row groups are to come from, for a parallel worker's reader made by
    /// `new_lazy_deferred` until its leader's are handed to it (`take_handed`).
    pending: Option<GroupSource>,
}

/// Where a reader's row groups and deleted rows come from.
#[derive(Clone)]
struct GroupSource {
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    /// The wanted attributes' numbers (None: all).
    attnums: Option<Vec<i16>>,
    lazy: bool,
}

impl GroupSource {
    /// The row groups visible to the snapshot, the lazy reader's chunks still to attach,
    /// and the rows deleted by marks.
    ///
    /// # Safety
    /// As `Reader::new`.
    unsafe fn load(&self) -> (Vec<RowGroupMeta>, Option<LazyChunks>, Vec<u64>) {
        let storage_id = self.storage_id;
        // SAFETY: this fn's contract.
        unsafe {
            // A dirty snapshot reads each metadata row as it is when reached: a row group's
            // row, its chunk rows and the delete marks at different moments, so a VACUUM
            // merging meanwhile could hide both copies of a row it moves, or show a row
            // group whose chunk rows it is still writing, or has just removed. Its reads
            // take a snapshot of now instead, which sees the metadata as of one moment:
            // every committed change, and this transaction's. Rows of other transactions
            // in progress are not seen (a dirty snapshot would return them and name their
            // writer), and their deletes do not hide rows (as under a dirty snapshot: the
            // caller, logical replication's apply when it looks for a row by a scan, locks
            // the row it found and then waits for the deleter).
            let dirty = snapshot_kind::is_dirty(self.snapshot);
            let snapshot =
                if dirty { pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot()) } else { self.snapshot };
            let deleted_rows = pending_marks::deleted_rows(storage_id, snapshot);
            let (groups, lazy) = match &self.attnums {
                Some(attnums) if self.lazy && !dirty => {
                    let lazy = LazyChunks::new(storage_id, snapshot, attnums.clone());
                    (catalog::load_row_groups_cached(storage_id, snapshot, &lazy.unread), Some(lazy))
                }
                Some(attnums) => (catalog::load_row_groups_for(storage_id, snapshot, attnums), None),
                None => (catalog::load_row_groups(storage_id, snapshot, true), None),
            };
            if dirty {
                pg_sys::UnregisterSnapshot(snapshot);
            }
            (groups, lazy, deleted_rows)
        }
    }
}

/// What a lazy reader's row groups may still lack: the chunks of the wanted attributes.
/// They are attached to a row group when the scan reaches it, the filter's attributes'
/// first, so that a row group the zone maps rule out gets no others; after `PROBES`
/// such probes, to every row group at once.
struct LazyChunks {
    storage_id: u64,
    snapshot: pg_sys::Snapshot,
    /// The wanted attributes' numbers, sorted.
    attnums: Vec<i16>,
    probes_left: usize,
    /// The chunks of a row group none of whose chunk rows were read yet (not even its
    /// order column's, which a read always parses).
    unread: Rc<catalog::Chunks>,
}

impl LazyChunks {
    fn new(storage_id: u64, snapshot: pg_sys::Snapshot, attnums: Vec<i16>) -> LazyChunks {
        let unread = Rc::new(catalog::Chunks { parsed: Some(Vec::new()), ..Default::default() });
        LazyChunks { storage_id, snapshot, attnums, probes_left: PROBES, unread }
    }

    /// Whether `g` has the chunks of the attributes numbered in `attnums` attached.
    fn attached(&self, g: &RowGroupMeta, attnums: &[i16]) -> bool {
        !Rc::ptr_eq(&g.chunks, &self.unread) && g.chunks.covers(Some(attnums))
    }
}

/// Row-group probes of `chunk` a lazy reader makes before reading the chunks of every
/// row group in one scan (a probe costs an index descent; the scan reads the whole
/// storage's chunk rows).
const PROBES: usize = 8;

/// How `Reader::open` reads the row groups.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// With the wanted attributes' chunks.
    Eager,
    /// With the chunks cached, the others as the scan reaches them (`LazyChunks`).
    Lazy,
    /// Not yet: a parallel worker's are handed to it by its leader (`take_handed`).
    Deferred,
}

/// What a scan did, for EXPLAIN ANALYZE.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadCounters {
    pub groups_read: u64,
    /// Row groups and vectors that zone maps ruled out.
    pub groups_skipped: u64,
    pub vectors_skipped: u64,
    /// Vectors whose rows the scan looked at.
    pub vectors_read: u64,
    /// Vectors the zone maps showed to pass the filter whole (not evaluated).
    pub vectors_passed: u64,
    /// Rows the filter removed.
    pub rows_filtered: u64,
    /// Bytes of column chunks read.
    pub bytes_read: u64,
    /// Blocks the operating system was asked to read ahead of the scan (`read_ahead`).
    pub blocks_read_ahead: u64,
    /// Lists of the row groups read from the metadata tables (one per reader, and per
    /// `reread`), and taken from a parallel leader instead (`take_handed`).
    pub lists_read: u64,
    pub lists_handed: u64,
    /// Row groups whose chunk metadata the scan read from the metadata tables (a
    /// lazy reader's; not those it had cached or was handed).
    pub groups_attached: u64,
}

impl Reader {
    /// A reader over the row groups visible to `snapshot`. Rows this backend still
    /// buffers are not among them: callers write them out first
    /// (`write_buffer::flush_before_reading`). `wanted` lists, per
    /// attribute, whether to decode it; None means every attribute.
    ///
    /// # Safety
    /// `rel` must be an open relation, locked by the caller; `snapshot` must be a valid
    /// snapshot (or NULL where this fn's docs allow it); call on the backend thread inside a
    /// transaction. `rel` must stay open for the reader's whole life: its methods read its
    /// pages.
    pub unsafe fn new(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        wanted: Option<Vec<bool>>,
        claim: GroupClaim,
    ) -> Reader {
        // SAFETY: this fn's contract is `open`'s.
        unsafe { Self::open(rel, snapshot, wanted, claim, Open::Eager) }
    }

    /// `new` for the `wanted` attributes, which reads their chunk metadata as the scan
    /// reaches each row group, and none for row groups the zone maps of the predicates
    /// and the filter rule out (with their attributes' chunks cached, as the plan's
    /// pruning estimate leaves them, those are the only chunk rows read). For scans that
    /// read row groups in order through `next_vector`/`next`; `groups()` and
    /// `group_stats` see only what is attached.
    ///
    /// # Safety
    /// As `new`.
    pub unsafe fn new_lazy(rel: pg_sys::Relation, snapshot: pg_sys::Snapshot, wanted: Vec<bool>) -> Reader {
        // SAFETY: this fn's contract is `open`'s.
        unsafe { Self::open(rel, snapshot, Some(wanted), GroupClaim::Serial { next: 0 }, Open::Lazy) }
    }

    /// `new_lazy` for a parallel worker's part of a parallel scan, whose leader hands it
    /// the row groups (`take_handed`) before it claims any: it reads none itself.
    ///
    /// # Safety
    /// As `new`.
    pub unsafe fn new_lazy_deferred(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        wanted: Vec<bool>,
    ) -> Reader {
        // SAFETY: this fn's contract is `open`'s.
        unsafe { Self::open(rel, snapshot, Some(wanted), GroupClaim::Serial { next: 0 }, Open::Deferred) }
    }

    /// # Safety
    /// As `new`.
    unsafe fn open(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        wanted: Option<Vec<bool>>,
        claim: GroupClaim,
        how: Open,
    ) -> Reader {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller; `snapshot` is a valid snapshot (or NULL where this fn's docs allow
        // it), and we are on the backend thread inside a transaction, so the metadata and
        // buffer reads and the slot calls are allowed.
        unsafe {
            let desc = (*rel).rd_att;
            let kinds = datum::column_kinds(desc);
            let natts = kinds.len();
            let storage_id = pages::storage_id(rel);
            catalog::note_storage((*rel).rd_id, storage_id);
            // Only the wanted columns' chunk metadata is parsed.
            let attnums: Option<Vec<i16>> = wanted.as_ref().map(|w| {
                (0..natts).filter(|&i| w.get(i).copied().unwrap_or(true)).map(|i| i as i16 + 1).collect()
            });
            let source = GroupSource { storage_id, snapshot, attnums, lazy: how != Open::Eager };
            let (groups, lazy, deleted_rows, pending) = match how {
                Open::Deferred => (Vec::new(), None, Vec::new(), Some(source.clone())),
                _ => {
                    let (groups, lazy, deleted_rows) = source.load();
                    (groups, lazy, deleted_rows, None)
                }
            };
            let counters = ReadCounters { lists_read: pending.is_none() as u64, ..ReadCounters::default() };
            let wanted = wanted.unwrap_or_else(|| vec![true; natts]);
            Reader {
                rel,
                desc,
                wanted,
                output: None,
                reload: snapshot_kind::sees_later_changes(snapshot).then_some(source),
                pending,
                groups,
                deleted_rows,
                mask: None,
                has_order: false,
                order_vector: Vec::new(),
                order_vector_at: None,

                group_first_row: 0,
                claim,
                strategy: std::ptr::null_mut(),
                nblocks: pages::nblocks(rel),
                group: None,
                sources: vec![Source::Null; natts],
                vector_bytes: Vec::new(),
                vector: 0,
                vector_count: 0,
                vector_first_row: 0,
                vector_rows: 0,
                selection: Vec::new(),
                row: 0,
                slot_primed_for: None,
                batch: RowBatch::default(),
                predicates: Vec::new(),
                filter: None,
                counters,
                seek_verdict: Verdict::Some,
                lazy,
                scratch: DecodedVector::default(),
                vectors: (0..natts).map(|_| DecodedVector::default()).collect(),
                decoded: vec![false; natts],
                partial: vec![false; natts],
                partial_rows: vec![Vec::new(); natts],
                columns: (0..natts).map(|_| DatumColumn::default()).collect(),
                scaled: vec![false; natts],
                read_ahead: ReadAhead::default(),
                kinds,
            }
        }
    }

    /// Frees the decode buffers at the end of a scan (the reader itself goes with its
    /// memory context).
    pub fn release(&mut self) {
        self.groups = Vec::new();
        self.deleted_rows = Vec::new();
        self.mask = None;
        self.has_order = false;
        self.order_vector = Vec::new();
        self.order_vector_at = None;
        self.vector_bytes = Vec::new();
        self.columns = Vec::new();
        self.vectors = Vec::new();
        self.selection = Vec::new();
        self.batch = RowBatch::default();
        self.scratch = DecodedVector::default();
        self.group = None;
        self.vector_rows = 0;
        self.row = 0;
        self.claim = GroupClaim::Serial { next: usize::MAX };
    }

    /// Skips only the rows of the row groups' masks (deleted for every snapshot) and
    /// `rows` (sorted), whatever the scan's snapshot sees: an index build reads the rows
    /// that some snapshot may still see, deleted or not (see `index_build`).
    pub fn skip_only(&mut self, rows: Vec<u64>) {
        self.deleted_rows = rows;
    }

    /// Keeps only the row groups `choose` picks: given each group and its live rows, in
    /// stored order, it answers which to keep.
    pub fn retain_groups(&mut self, choose: impl FnOnce(&[(&RowGroupMeta, u64)]) -> Vec<bool>) {
        let keep = {
            let live: Vec<(&RowGroupMeta, u64)> =
                self.groups.iter().map(|g| (g, self.live_rows(g))).collect();
            choose(&live)
        };
        let mut keep = keep.into_iter();
        self.groups.retain(|_| keep.next().unwrap_or(false));
    }

    /// For a lazy reader, attaches to row group `index` the chunks of `attnums` (sorted,
    /// among the wanted; None: all wanted) it lacks: a probe of its chunk rows, or, past
    /// `PROBES` of them, every row group's wanted chunks at once.
    ///
    /// # Safety
    /// Backend thread, inside the reader's transaction (it reads metadata).
    unsafe fn attach(&mut self, index: usize, attnums: Option<Vec<i16>>) {
        let Some(lazy) = self.lazy.as_mut() else { return };
        let attnums = match attnums {
            Some(a) => {
                // Attached with the rest when every row group's are read.
                if !a.iter().all(|x| lazy.attnums.binary_search(x).is_ok()) {
                    lazy.attnums.extend_from_slice(&a);
                    lazy.attnums.sort_unstable();
                    lazy.attnums.dedup();
                }
                a
            }
            None => lazy.attnums.clone(),
        };
        if lazy.attached(&self.groups[index], &attnums) {
            return;
        }
        // SAFETY: `lazy.snapshot` is the scan's, registered for the reader's life, and we
        // are inside its transaction (this fn's contract).
        unsafe {
            if lazy.probes_left > 0 {
                lazy.probes_left -= 1;
                self.counters.groups_attached += 1;
                catalog::attach_chunks_for(
                    lazy.storage_id,
                    &mut self.groups[index],
                    lazy.snapshot,
                    Some(&attnums),
                );
            } else {
                // Only the row groups that lack them: the cache does not hold what a
                // parallel worker was handed (`take_handed`).
                let lacking: Vec<usize> = (0..self.groups.len())
                    .filter(|&i| !lazy.attached(&self.groups[i], &lazy.attnums))
                    .collect();
                let mut attached: Vec<RowGroupMeta> =
                    lacking.iter().map(|&i| self.groups[i].clone()).collect();
                catalog::attach_every(lazy.storage_id, &mut attached, lazy.snapshot, &lazy.attnums);
                self.counters.groups_attached += attached.len() as u64;
                for (i, g) in lacking.into_iter().zip(attached) {
                    self.groups[i] = g;
                }
                self.lazy = None;
            }
        }
    }

    /// Skip row groups and vectors whose zone maps show that no row satisfies one of
    /// `predicates` (attribute index, predicate). The caller still filters the rows
    /// returned: zone maps only rule out, they never select.
    pub fn set_predicates(&mut self, predicates: Vec<(usize, ZonePredicate)>) {
        self.predicates = predicates;
    }

    /// Evaluates `filter` in the scan: rows that fail it are not returned. Its
    /// attributes must be among the wanted ones.
    pub fn set_filter(&mut self, filter: Option<Box<dyn VectorFilter>>) {
        self.filter = filter;
    }

    /// Decodes the attributes `scaled` marks, when stored as scaled numerics, into their
    /// numbers only (`DecodedVector::scaled`): for a consumer that reads nothing else of
    /// them (numeric expressions, filters and folds, the slot's Datums).
    pub fn set_scaled(&mut self, scaled: Vec<bool>) {
        self.scaled = scaled;
        self.scaled.resize(self.vectors.len(), false);
    }

    /// Puts only the attributes `output` marks into the slot (the others read NULL);
    /// the filter may read more.
    pub fn set_output(&mut self, output: Vec<bool>) {
        self.output = Some(output);
        self.slot_primed_for = None;
        self.set_batch_attrs();
    }

    /// The batch holds the attributes that go into the slot and that the current row
    /// group stores (the others are constant over it: `emit` writes them once).
    fn set_batch_attrs(&mut self) {
        let attrs = (0..self.sources.len())
            .filter(|&i| matches!(self.sources[i], Source::Chunk) && self.is_output(i))
            .collect();
        self.batch.set_attrs(attrs);
    }

    /// Whether attribute `i` goes into the slot.
    fn is_output(&self, i: usize) -> bool {
        self.output.as_ref().is_none_or(|o| o.get(i).copied().unwrap_or(true))
    }

    /// What the scan has done so far (EXPLAIN ANALYZE).
    pub fn counters(&self) -> ReadCounters {
        self.counters
    }

    /// Zone statistics of attribute `att` in row group `g`, or, with `vector`, in that
    /// vector of it; None if the row group does not store the attribute.
    fn stats(g: &RowGroupMeta, att: usize, vector: Option<usize>) -> Option<ZoneStats> {
        // A row group's own zone maps are in its row_group row when it has chunk rows:
        // no chunk need be read to rule it out.
        let Some(v) = vector else { return g.stats(att) };
        let e = g.chunk(att as i16 + 1)?.vectors.get(v)?;
        Some(ZoneStats { zone: e.zone, rows: e.rows as u64, null_count: e.null_count as u64 })
    }

    /// Whether the predicates rule out row group `g` (using each chunk's merged zone
    /// map), or, with `vector`, that vector of it.
    fn refuted(&self, g: &RowGroupMeta, vector: Option<usize>) -> bool {
        self.predicates
            .iter()
            .any(|(att, pred)| Self::stats(g, *att, vector).is_some_and(|s| !pred.may_match(&s)))
    }

    /// What zone maps say of the filter on row group `g` or one of its vectors.
    fn verdict(&self, g: &RowGroupMeta, vector: Option<usize>) -> Verdict {
        match &self.filter {
            Some(f) => f.verdict(&|att| Self::stats(g, att, vector)),
            None => Verdict::All,
        }
    }

    fn rows_in_vector(&self, g: &RowGroupMeta, vector: usize) -> usize {
        (g.row_count as usize - vector * crate::storage::format::layout::VECTOR_ROWS)
            .min(crate::storage::format::layout::VECTOR_ROWS)
    }

    pub fn groups(&self) -> &[RowGroupMeta] {
        &self.groups
    }

    /// Rows the scan will return (before predicates): stored rows less deleted ones.
    pub fn total_rows(&self) -> u64 {
        self.groups.iter().map(|g| self.live_rows(g)).sum()
    }

    /// `g`'s rows less the deleted ones: its mask's and the scan's deleted rows.
    fn live_rows(&self, g: &RowGroupMeta) -> u64 {
        let mask =
            delete_mask::group_mask(g.deleted.as_deref(), &self.deleted_rows, g.first_row, g.row_count);
        g.row_count - mask.map_or(0, |m| m.count())
    }

    /// Before a rescan: a reader whose snapshot sees changes committed after it began
    /// (dirty, self) writes out this backend's buffered rows and reads its row groups and
    /// delete marks again, as heap's rescan reads its pages again (other readers keep
    /// theirs). Logical replication's apply rescans after waiting for the writer
    /// of the row it found, or after that row turned out updated, and must then find the
    /// new copy, not the old one again.
    ///
    /// # Safety
    /// As `new`; the snapshot the reader was made with must still be valid.
    pub unsafe fn reread(&mut self) {
        let Some(source) = &self.reload else { return };
        // SAFETY: this fn's contract.
        unsafe {
            write_buffer::flush_before_reading(self.rel);
            (self.groups, self.lazy, self.deleted_rows) = source.load();
            self.nblocks = pages::nblocks(self.rel);
            self.counters.lists_read += 1;
        }
        self.group = None;
        self.mask = None;
        self.slot_primed_for = None;
        self.order_vector_at = None;
    }

    /// Starts over (rescan); a parallel scan's shared counter is reset by its owner.
    pub fn restart(&mut self) {
        if let GroupClaim::Serial { next } = &mut self.claim {
            *next = 0;
        }
        self.group = None;
        self.vector_rows = 0;
        self.selection.clear();
        self.batch.clear();
        self.row = 0;
    }

    /// Reads row groups from `claim` from now on (a parallel scan's shared counter).
    pub fn set_claim(&mut self, claim: GroupClaim) {
        self.claim = claim;
    }

    /// The attributes whose chunk metadata the reader attaches, by number.
    fn wanted_attnums(&self) -> Vec<i16> {
        (0..self.wanted.len()).filter(|&i| self.wanted[i]).map(|i| i as i16 + 1).collect()
    }

    /// How a parallel scan's leader would hand its row groups to its workers in at most
    /// `room` bytes (`handed_groups::plan`): the bytes, and whether the chunks go too;
    /// None when that is too much, and each worker reads them itself.
    pub fn handed_plan(&self, room: usize) -> Option<(usize, bool)> {
        handed_groups::plan(&self.groups, &self.wanted_attnums(), &self.deleted_rows, room)
    }

    /// Writes what `handed_plan` sized into `into`.
    pub fn hand_over(&self, into: &mut [u8], with_chunks: bool) {
        handed_groups::write_into(
            into,
            &self.groups,
            &self.wanted_attnums(),
            &self.deleted_rows,
            with_chunks,
        );
    }

    /// Gives a reader made by `new_lazy_deferred` its row groups: those `image` holds
    /// (`hand_over`'s, in its leader under the same snapshot), or else those it reads.
    /// A reader that has them already is left as it is. The directories handed stay in
    /// the image (`handed_groups::read_in_place`).
    ///
    /// # Safety
    /// As `new`, with the snapshot the reader was made with; `image` stays mapped and
    /// unchanged for as long as the reader holds its row groups (until `release`).
    pub unsafe fn take_handed(&mut self, image: Option<&[u8]>) {
        let Some(source) = self.pending.take() else { return };
        let Some(image) = image else {
            // SAFETY: this fn's contract.
            (self.groups, self.lazy, self.deleted_rows) = unsafe { source.load() };
            self.counters.lists_read += 1;
            return;
        };
        let attnums = source.attnums.expect("a deferred reader has its wanted attributes");
        let lazy = LazyChunks::new(source.storage_id, source.snapshot, attnums);
        // SAFETY: the image stays for the row groups' life (this fn's contract).
        let handed = unsafe { handed_groups::read_in_place(image, &lazy.unread) }
            .unwrap_or_else(|e| panic!("row groups handed by the parallel leader: {e}"));
        self.groups = handed.groups;
        self.deleted_rows = handed.deleted_rows;
        self.lazy = Some(lazy);
        self.counters.lists_handed += 1;
    }

    /// The delete mask row group `index` is read with, or None if the scan passes it
    /// by: every row deleted, or zone maps rule it out (counted).
    unsafe fn usable_group(&mut self, index: usize) -> Option<Option<DeleteMask>> {
        let g = &self.groups[index];
        let mask =
            delete_mask::group_mask(g.deleted.as_deref(), &self.deleted_rows, g.first_row, g.row_count);
        if mask.as_ref().is_some_and(|m| m.count() == g.row_count) {
            return None;
        }
        // Ruled out by the zone maps its row_group row keeps, its chunks are not read.
        let zones_kept = g.zones.is_some();
        if zones_kept && self.ruled_out(index) {
            return None;
        }
        if self.lazy.is_some() {
            let mut keys: Vec<i16> = self.predicates.iter().map(|(a, _)| *a as i16 + 1).collect();
            keys.extend(self.filter.iter().flat_map(|f| f.attributes()).map(|&a| a as i16 + 1));
            keys.sort_unstable();
            keys.dedup();
            // SAFETY: this fn's contract.
            unsafe { self.attach(index, Some(keys)) };
        }
        if !zones_kept && self.ruled_out(index) {
            return None;
        }
        Some(mask)
    }

    /// Whether the zone maps of row group `index` rule it out (counted).
    fn ruled_out(&mut self, index: usize) -> bool {
        let g = &self.groups[index];
        let out = self.refuted(g, None) || self.verdict(g, None) == Verdict::None;
        if out {
            self.counters.groups_skipped += 1;
        }
        out
    }

    /// Loads the next row group; false when none is left.
    unsafe fn next_group(&mut self) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            if self.pending.is_some() {
                self.take_handed(None);
            }
            loop {
                let Some(index) = self.claim.claim(self.groups.len()) else {
                    self.group = None;
                    return false;
                };
                if let Some(mask) = self.usable_group(index) {
                    self.load_group(index, mask);
                    return true;
                }
            }
        }
    }

    /// Makes row group `index` the current one, before its first vector.
    unsafe fn load_group(&mut self, index: usize, mask: Option<DeleteMask>) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            self.attach(index, None);
            self.mask = mask;
            self.has_order = self.groups[index].chunks.order.is_some();
            self.order_vector_at = None;
            self.load_sources(index);
            self.read_ahead.reset();
            let g = &self.groups[index];
            self.group = Some(index);
            self.counters.groups_read += 1;
            self.vector = 0;
            self.vector_count = (g.row_count as usize).div_ceil(crate::storage::format::layout::VECTOR_ROWS);
            self.vector_first_row = g.first_row;
            self.group_first_row = g.first_row;
            self.vector_rows = 0;
            self.row = 0;
        }
    }

    /// Decides per attribute where row group `index`'s values come from, and reads the
    /// chunks of the stored ones. An attribute the row group has no chunk for was added
    /// after it was written: its rows read the descriptor's missing value (the ADD
    /// COLUMN's default), or NULL, as heap does for tuples shorter than the descriptor.
    unsafe fn load_sources(&mut self, index: usize) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            let g = &self.groups[index];
            for i in 0..self.kinds.len() {
                let wanted = self.wanted.get(i).copied().unwrap_or(true);
                self.sources[i] = if !wanted || self.kinds[i] == ColumnKind::Dropped {
                    Source::Null
                } else if let Some(chunk) = g.chunk(i as i16 + 1) {
                    if chunk.vectors.rows() != g.row_count {
                        data_corrupted("a column chunk's vectors do not add up to its row group");
                    }
                    // Its vectors are read one by one, when decoded (`decode_attr`): zone
                    // maps and the filter may leave most of them unread.
                    Source::Chunk
                } else {
                    let mut isnull = false;
                    let d = pg_sys::getmissingattr(self.desc, i as i32 + 1, &mut isnull);
                    Source::Missing(d, isnull)
                };
            }
            self.set_batch_attrs();
        }
    }

    /// Has the operating system start reading the current row group's pages that the
    /// scan will read next (`read_ahead`), as it reaches vector `self.vector`.
    unsafe fn read_ahead(&mut self) {
        let Some(index) = self.group else { return };
        let (g, sources, rel) = (&self.groups[index], &self.sources, self.rel);
        let asked = &mut self.counters.blocks_read_ahead;
        let chunk = |i: usize| match sources[i] {
            Source::Chunk => g.chunk(i as i16 + 1),
            _ => None,
        };
        self.read_ahead.reach(
            sources.len(),
            chunk,
            self.vector,
            self.vector_count,
            g.data_length,
            self.nblocks,
            pages::blocks_read(),
            |first, last| {
                // SAFETY: `rel` is open for the reader's life, on the backend thread inside
                // a transaction (the callers' contract).
                if unsafe { prefetch::prefetch_blocks(rel, first, last) } {
                    *asked += (last - first + 1) as u64;
                }
            },
        );
    }

    /// Reads rows with descriptor `desc` from now on. ALTER TABLE's rewrite
    /// (ATRewriteTable) scans the relation, whose descriptor already has the altered
    /// columns, into a slot of the descriptor from before the ALTER: the one the stored
    /// chunks were written with (a changed column type keeps its attribute number), and
    /// with the fast defaults of that time. The slot's arrays are sized by it too.
    unsafe fn read_as(&mut self, desc: pg_sys::TupleDesc) {
        // SAFETY: the caller guarantees this fn's contract: `desc` is a valid tuple
        // descriptor, and we are on the backend thread inside a transaction, so the metadata
        // and buffer reads and the slot calls are allowed.
        unsafe {
            self.desc = desc;
            self.kinds = datum::column_kinds(desc);
            let natts = self.kinds.len();
            self.sources = vec![Source::Null; natts];
            // Clears the batch, which points into the vectors replaced below.
            self.set_batch_attrs();
            self.columns = (0..natts).map(|_| DatumColumn::default()).collect();
            self.vectors = (0..natts).map(|_| DecodedVector::default()).collect();
            self.decoded = vec![false; natts];
            self.partial = vec![false; natts];
            self.partial_rows = vec![Vec::new(); natts];
            self.slot_primed_for = None;
            // Mid-group (a caller switching slots): the current vector again, the new way.
            if let Some(index) = self.group {
                self.load_sources(index);
                if self.vector_rows > 0 {
                    let row = self.row;
                    self.load_vector(Verdict::Some);
                    self.row = row;
                }
            }
        }
    }

    /// The offset in the current row group of the row stored at `position`, which lies
    /// in the vector `ensure_order` read.
    fn offset_at(&self, position: usize) -> usize {
        if !self.has_order {
            return position;
        }
        // Reading the order column is left to the callers that need it: a stale one
        // would give rows the wrong numbers.
        assert_eq!(self.order_vector_at, Some(position / VECTOR_ROWS), "order column vector not read");
        self.order_vector[position % VECTOR_ROWS] as usize
    }

    /// Reads vector `vector` of the current row group's order column, if it has one.
    /// Each offset is checked to lie in the row group (whether they form a permutation
    /// is not: that would read the whole column for any vector).
    unsafe fn ensure_order(&mut self, vector: usize) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            let Some(index) = self.group else { return };
            if !self.has_order || self.order_vector_at == Some(vector) {
                return;
            }
            let g = &self.groups[index];
            let chunk = g.chunks.order.as_ref().expect("has_order");
            let Some(e) = chunk.vectors.get(vector) else { data_corrupted("order column vector missing") };
            if e.rows as usize != self.rows_in_vector(g, vector) {
                data_corrupted("order column vector does not fit its row group");
            }
            let row_count = g.row_count;
            read_vector(self.rel, self.strategy, self.nblocks, chunk, &e, &mut self.vector_bytes);
            let values = order_values(&self.vector_bytes, e.rows, &mut self.scratch);
            if values.iter().any(|&v| v < 0 || v as u64 >= row_count) {
                data_corrupted("order column holds an offset outside its row group");
            }
            self.order_vector.clear();
            self.order_vector.extend(values.iter().map(|&v| v as u32));
            self.order_vector_at = Some(vector);
        }
    }

    /// Whether row `row` of the current vector is deleted.
    fn is_deleted(&self, row: usize) -> bool {
        let position = (self.vector_first_row - self.group_first_row) as usize + row;
        self.mask.as_ref().is_some_and(|m| m.is_deleted(self.offset_at(position)))
    }

    /// How many of the rows stored at positions `start .. start + len` of the current
    /// row group are deleted.
    /// `start` begins a vector; with an order column, `ensure_order` read it.
    fn deleted_in(&self, start: usize, len: usize) -> usize {
        let Some(m) = &self.mask else { return 0 };
        if !self.has_order {
            return m.count_range(start, len);
        }
        debug_assert_eq!(self.order_vector_at, Some(start / VECTOR_ROWS));
        self.order_vector[..len].iter().filter(|&&off| m.is_deleted(off as usize)).count()
    }

    /// Decodes attribute `i` of the current vector into `vectors[i]`, once per vector.
    /// An attribute the row group does not store reads as its missing value.
    unsafe fn decode_attr(&mut self, i: usize) {
        // SAFETY: this fn's contract is `decode_attr_for`'s.
        unsafe { self.decode_attr_for(i, None, false) }
    }

    /// `decode_attr` for a caller that reads only rows `wanted` (ascending) of the
    /// vector: when they are few, a dictionary vector has only their codes decoded. A
    /// later call for other rows, or for all, decodes it again.
    unsafe fn decode_attr_rows(&mut self, i: usize, wanted: &[u32]) {
        // SAFETY: this fn's contract is `decode_attr_for`'s.
        unsafe { self.decode_attr_for(i, Some(wanted), false) }
    }

    /// `decode_attr_rows` for the slot's Datums: a varlena column's scaled numerics stay
    /// numbers (`keep_scaled`), whose images `DatumColumn` writes straight from them, and
    /// its short varlena images stay where they lie (`keep_images`). A
    /// vector the filter decoded already is left as the filter read it.
    unsafe fn decode_output_rows(&mut self, i: usize, wanted: &[u32]) {
        // SAFETY: this fn's contract is `decode_attr_for`'s.
        unsafe { self.decode_attr_for(i, Some(wanted), self.kinds[i] == ColumnKind::Varlena) }
    }

    /// Rows of a vector a filter test must have at most, as a share of the vector's
    /// rows, for its dictionary codes, bit-packed integers or mantissas to be decoded
    /// for those rows alone (reading a field where it lies, one load, costs a few times
    /// what unpacking it among all does).
    const PARTIAL_SHARE: usize = 4;

    unsafe fn decode_attr_for(&mut self, i: usize, wanted: Option<&[u32]>, scaled_output: bool) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            if self.decoded[i]
                && (!self.partial[i] || wanted.is_some_and(|w| all_marked(w, &self.partial_rows[i])))
            {
                return;
            }
            self.decoded[i] = true;
            self.partial[i] = false;
            let wanted = wanted.filter(|w| w.len() * Self::PARTIAL_SHARE < self.vector_rows);
            let rows = self.vector_rows;
            match self.sources[i] {
                Source::Chunk => {
                    let g = &self.groups[self.group.unwrap()];
                    let chunk = g.chunk(i as i16 + 1).unwrap();
                    let entry = chunk
                        .vectors
                        .get(self.vector)
                        .unwrap_or_else(|| data_corrupted("vector missing from chunk"));
                    if entry.rows as usize != rows {
                        data_corrupted("vector row counts disagree between columns");
                    }
                    read_vector(self.rel, self.strategy, self.nblocks, chunk, &entry, &mut self.vector_bytes);
                    self.counters.bytes_read += entry.len as u64;
                    // A dictionary stays one: a filter tests each entry once, and the
                    // slot's Datums are made once per entry (`DatumColumn`).
                    self.vectors[i].keep_dictionary = true;
                    // The slot's Datums are written from the numbers as well as from the
                    // bytes (`DatumColumn`), so an output column may stay numbers where the
                    // scan's other readers (its filter) take them.
                    self.vectors[i].keep_scaled = scaled_output
                        || (self.scaled[i] && (!self.is_output(i) || self.kinds[i] == ColumnKind::Varlena));
                    // The slot's text Datums point at short varlena images where they lie.
                    self.vectors[i].keep_images = scaled_output;
                    match wanted {
                        Some(w) => {
                            let v = &mut self.vectors[i];
                            if decode_rows_checked(self.kinds[i], &self.vector_bytes, entry.rows, w, v) {
                                self.partial[i] = true;
                                mark_rows(&mut self.partial_rows[i], w);
                            }
                        }
                        None => decode_checked(
                            self.kinds[i],
                            &self.vector_bytes,
                            entry.rows,
                            &mut self.vectors[i],
                        ),
                    }
                }
                Source::Missing(d, isnull) => {
                    clear_coded(&mut self.vectors[i]);
                    datum::constant_vector(self.kinds[i], d, isnull, rows, &mut self.vectors[i])
                }
                Source::Null => {
                    clear_coded(&mut self.vectors[i]);
                    datum::constant_vector(
                        self.kinds[i],
                        pg_sys::Datum::from(0usize),
                        true,
                        rows,
                        &mut self.vectors[i],
                    )
                }
            }
        }
    }

    /// Loads vector `self.vector` of the current group: `selection` gets its live rows
    /// that pass the filter (evaluated unless `verdict` is `All`), and only then are the
    /// other wanted columns decoded, as Datums for those rows (none if no row is left).
    unsafe fn load_vector(&mut self, verdict: Verdict) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            // The batch points into the vectors about to be decoded again.
            self.batch.clear();
            self.decoded.iter_mut().for_each(|d| *d = false);
            self.select_rows(verdict);
        }
    }

    /// `load_vector` but for forgetting what was decoded of the vector (`seek_vector`
    /// decodes some of its columns before selecting its rows).
    unsafe fn select_rows(&mut self, verdict: Verdict) {
        // A sorted row group's order column is read for a vector only when its rows'
        // numbers are wanted: for deletes (here), TIDs (`emit`) or `row_number`
        // (`prepare_row_numbers`). An aggregate reads none: decoding it was an eighth of
        // q8 on the sort_by 10M TSBS table.
        if self.mask.is_some() {
            // SAFETY: this fn's contract (backend thread, inside a transaction, `self.rel`
            // still open) is what `ensure_order` requires.
            unsafe { self.ensure_order(self.vector) };
        }
        let g = &self.groups[self.group.unwrap()];
        let rows = self.rows_in_vector(g, self.vector);
        self.vector_rows = rows;
        self.row = 0;
        self.counters.vectors_read += 1;
        self.selection.clear();
        if self.mask.is_none() {
            self.selection.extend(0..rows as u32);
        } else {
            for r in 0..rows {
                if !self.is_deleted(r) {
                    self.selection.push(r as u32);
                }
            }
        }
        if let Some(filter) = self.filter.take() {
            if verdict == Verdict::Some {
                let mut selection = std::mem::take(&mut self.selection);
                let before = selection.len();
                let g = self.groups[self.group.unwrap()].clone();
                let vector = self.vector;
                let stats = |att: usize| Self::stats(&g, att, Some(vector));
                filter.select(&stats, &mut LazyVectors(self), &mut selection);
                self.counters.rows_filtered += (before - selection.len()) as u64;
                self.selection = selection;
            } else {
                self.counters.vectors_passed += 1;
            }
            self.filter = Some(filter);
        }
        self.batch.clear();
        if self.selection.is_empty() {
            return;
        }
        self.batch.begin_selected(rows, self.selection.len());
        // The output reads the selected rows alone: when they are few, a column the
        // filter did not read decodes just those.
        let selection = std::mem::take(&mut self.selection);
        for j in 0..self.batch.attrs().len() {
            let i = self.batch.attrs()[j];
            // SAFETY: as above, for `decode_attr_rows`; `materialize_rows` gets the vector
            // just decoded for attribute `i` (at least the selected rows) and its kind, in this
            // transaction's memory context. The batch keeps pointers into `vectors[i]` or
            // `columns[i]`, which stay as they are until the batch is cleared: they change only
            // when the vector's columns are decoded again (`load_vector`, `seek_vector`,
            // `read_as`) or freed (`release`), which all clear it first.
            unsafe {
                self.decode_output_rows(i, &selection);
                let v = &self.vectors[i];
                let pushed = self.batch.push_values(v)
                    || self.batch.push_images(self.kinds[i], v)
                    || v.dictionary.as_ref().is_some_and(|d| {
                        self.batch.push_codes(v, self.columns[i].materialize_entries(self.kinds[i], d))
                    });
                if !pushed {
                    // Dictionaries and float4s: their Datums first (images in the column's arena).
                    self.columns[i].materialize_rows(self.kinds[i], &self.vectors[i], &selection);
                    if !self.batch.push_datums(&self.columns[i]) {
                        data_corrupted("a column's vector holds fewer rows than the others");
                    }
                }
            }
        }
        self.selection = selection;
    }

    /// The row count of vector `self.vector` of the current group (starting at
    /// `vector_first_row`) and what to do with it: `Verdict::None` to pass it by (every
    /// row deleted, or zone maps rule it out, which is counted), otherwise what zone maps
    /// say of the filter on it.
    unsafe fn vector_fate(&mut self) -> (usize, Verdict) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            if self.mask.is_some() {
                self.ensure_order(self.vector);
            }
            let g = &self.groups[self.group.unwrap()];
            let rows_here = self.rows_in_vector(g, self.vector);
            if self.deleted_in((self.vector_first_row - g.first_row) as usize, rows_here) == rows_here {
                return (rows_here, Verdict::None);
            }
            let verdict = if self.refuted(g, Some(self.vector)) {
                Verdict::None
            } else {
                self.verdict(g, Some(self.vector))
            };
            self.counters.vectors_skipped += (verdict == Verdict::None) as u64;
            (rows_here, verdict)
        }
    }

    /// Moves to the next vector with rows; false at the end of the scan.
    unsafe fn advance(&mut self) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            loop {
                pgrx::check_for_interrupts!();
                if self.group.is_some() && self.vector_rows > 0 {
                    self.vector_first_row += self.vector_rows as u64;
                    self.vector += 1;
                    self.vector_rows = 0;
                }
                if self.group.is_none() || self.vector >= self.vector_count {
                    if !self.next_group() {
                        return false;
                    }
                    continue;
                }
                let (rows_here, verdict) = self.vector_fate();
                if verdict == Verdict::None {
                    self.vector_first_row += rows_here as u64;
                    self.vector += 1;
                    continue;
                }
                self.read_ahead();
                self.load_vector(verdict);
                if !self.selection.is_empty() {
                    return true;
                }
            }
        }
    }

    /// Batch reading (ColumnarAgg): moves to the next vector with rows left, whose
    /// rows are then `selection()`; only the filter's columns are decoded (for a reader
    /// whose `set_output` marks nothing), the others when `decode` asks. False at the end.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn next_vector(&mut self) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            self.row = self.selection.len();
            self.advance()
        }
    }

    /// The current vector's rows that are live and pass the filter, ascending.
    pub fn selection(&self) -> &[u32] {
        &self.selection
    }

    /// Whether the selection holds every row of the current vector.
    pub fn vector_whole(&self) -> bool {
        self.selection.len() == self.vector_rows
    }

    /// Zone statistics of attribute `att` in the current vector (None if its row group
    /// does not store the attribute).
    pub fn vector_stats(&self, att: usize) -> Option<ZoneStats> {
        Self::stats(&self.groups[self.group?], att, Some(self.vector))
    }

    /// Random access by vector (LastPoint): positions the reader on vector `vector` of
    /// row group `group` (an index into `groups()`) without decoding anything; false if
    /// the scan passes it by (every row deleted, or zone maps refute it). `decode` and
    /// `column` then read its columns, and `select` its live rows that pass the filter.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn seek_vector(&mut self, group: usize, vector: usize) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            if self.group != Some(group) {
                let Some(mask) = self.usable_group(group) else {
                    self.group = None;
                    return false;
                };
                self.load_group(group, mask);
            }
            if vector >= self.vector_count {
                return false;
            }
            self.vector = vector;
            self.vector_first_row = self.group_first_row + (vector * VECTOR_ROWS) as u64;
            self.vector_rows = 0;
            self.selection.clear();
            self.row = 0;
            let (rows, verdict) = self.vector_fate();
            if verdict == Verdict::None {
                return false;
            }
            self.vector_rows = rows;
            self.seek_verdict = verdict;
            // The batch points into the vectors about to be decoded again.
            self.batch.clear();
            self.decoded.iter_mut().for_each(|d| *d = false);
            true
        }
    }

    /// The stored bytes of attribute `att` in the vector `seek_vector` positioned on, as
    /// `decode` reads them; None if its row group does not store the attribute.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn stored(&mut self, att: usize) -> Option<&[u8]> {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            if !matches!(self.sources[att], Source::Chunk) {
                return None;
            }
            let g = &self.groups[self.group?];
            let chunk = g.chunk(att as i16 + 1)?;
            let entry =
                chunk.vectors.get(self.vector).unwrap_or_else(|| data_corrupted("vector missing from chunk"));
            read_vector(self.rel, self.strategy, self.nblocks, chunk, &entry, &mut self.vector_bytes);
            self.counters.bytes_read += entry.len as u64;
            Some(&self.vector_bytes)
        }
    }

    /// The live rows of the vector `seek_vector` positioned on that pass the filter.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn select(&mut self) -> &[u32] {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            self.select_rows(self.seek_verdict);
            &self.selection
        }
    }

    /// Makes `row_number` answer for the current vector's rows (reads a sorted row
    /// group's order column for it).
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn prepare_row_numbers(&mut self) {
        // SAFETY: this fn's contract is `ensure_order`'s.
        unsafe { self.ensure_order(self.vector) }
    }

    /// The row number of row `r` of the current vector (its TID's), after
    /// `prepare_row_numbers`.
    pub fn row_number(&self, r: u32) -> u64 {
        let position = (self.vector_first_row - self.group_first_row) as usize + r as usize;
        self.group_first_row + self.offset_at(position) as u64
    }

    /// Zone statistics of attribute `att` in row group `group` (an index into
    /// `groups()`), or, with `vector`, in that vector of it.
    pub fn group_stats(&self, group: usize, att: usize, vector: Option<usize>) -> Option<ZoneStats> {
        Self::stats(&self.groups[group], att, vector)
    }

    /// Decodes attribute `att` of the current vector (once), for `column`.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn decode(&mut self, att: usize) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            self.decode_attr(att);
        }
    }

    /// `decode` for a caller that reads only rows `rows` (ascending) of the attribute:
    /// when they are few, only those may be decoded (the others' values are then
    /// unspecified); a later `decode` decodes it whole.
    ///
    /// # Safety
    /// As `decode`.
    pub unsafe fn decode_rows(&mut self, att: usize, rows: &[u32]) {
        // SAFETY: this fn's contract is `decode`'s, which is `decode_attr_rows`'.
        unsafe { self.decode_attr_rows(att, rows) }
    }

    /// Attribute `att` of the current vector, as `decode` left it.
    pub fn column(&self, att: usize) -> &DecodedVector {
        &self.vectors[att]
    }

    /// The current vector's columns, decoded when first asked for (a filter's input).
    pub fn columns(&mut self) -> impl ColumnSource + '_ {
        LazyVectors(self)
    }

    /// Skips up to `n` rows (not counting deleted ones) without decoding the whole
    /// vectors it passes; returns how many.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction, while the relation the reader was
    /// made for is still open.
    pub unsafe fn skip(&mut self, mut n: u64) -> u64 {
        let mut skipped = 0;
        while n > 0 {
            if self.row < self.selection.len() {
                let k = (n as usize).min(self.selection.len() - self.row);
                self.row += k;
                n -= k as u64;
                skipped += k as u64;
                continue;
            }
            if self.vector_rows > 0 {
                // The loaded vector is used up: step past it.
                self.vector_first_row += self.vector_rows as u64;
                self.vector += 1;
                self.vector_rows = 0;
                self.selection.clear();
                self.row = 0;
            }
            // Skip whole vectors and row groups by their row counts.
            if self.group.is_none() || self.vector >= self.vector_count {
                // SAFETY: this fn's contract (backend thread, inside a transaction, `self.rel` still
                // open) is what `next_group` requires.
                if !unsafe { self.next_group() } {
                    break;
                }
                continue;
            }
            if self.mask.is_some() {
                // SAFETY: as for `next_group` above.
                unsafe { self.ensure_order(self.vector) };
            }
            let rows_here = self.rows_in_vector(&self.groups[self.group.unwrap()], self.vector);
            let deleted = self.deleted_in((self.vector_first_row - self.group_first_row) as usize, rows_here);
            let live = (rows_here - deleted) as u64;
            if live <= n {
                self.vector += 1;
                self.vector_first_row += rows_here as u64;
                n -= live;
                skipped += live;
            } else {
                // SAFETY: as for `next_group` above.
                unsafe { self.load_vector(Verdict::Some) };
            }
        }
        skipped
    }

    /// Stores the next row in `slot` (a virtual slot); false at the end.
    ///
    /// # Safety
    /// `slot` must be a valid tuple slot; call on the backend thread inside a transaction,
    /// while the relation the reader was made for is still open.
    pub unsafe fn next(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot for
        // the reader's descriptor, we are on the backend thread inside a transaction, and
        // `self.rel` is still open (`Reader::new`'s contract), so the buffer reads and slot
        // calls are allowed.
        unsafe {
            if self.next_in_place(slot) {
                return true;
            }
            if (*slot).tts_tupleDescriptor != self.desc {
                self.read_as((*slot).tts_tupleDescriptor);
            }
            if self.row >= self.selection.len() && !self.advance() {
                return false;
            }
            self.emit(slot)
        }
    }

    /// Stores the row before the last one returned in `slot` (scrollable cursors); false
    /// before the first. As in heap's scans, both ends leave the scan unpositioned: going
    /// backward from there starts at the last row, going forward at the first. Serial
    /// scans only (a parallel scan never runs backward).
    ///
    /// # Safety
    /// `slot` must be a valid tuple slot; call on the backend thread inside a transaction,
    /// while the relation the reader was made for is still open.
    pub unsafe fn prev(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot for
        // the reader's descriptor, we are on the backend thread inside a transaction, and
        // `self.rel` is still open (`Reader::new`'s contract), so the buffer reads and slot
        // calls are allowed.
        unsafe {
            if (*slot).tts_tupleDescriptor != self.desc {
                self.read_as((*slot).tts_tupleDescriptor);
            }
            // `row` is one past the last row returned, so the candidate is two before it.
            let mut candidate = match self.group {
                Some(_) => self.row as isize - 2,
                None if matches!(self.claim, GroupClaim::Serial { next: 0 }) => return false,
                None => -1,
            };
            if candidate < 0 {
                if !self.back_to_previous_vector() {
                    self.restart();
                    return false;
                }
                candidate = self.selection.len() as isize - 1;
            }
            self.row = candidate as usize;
            self.emit(slot)
        }
    }

    /// Moves to the vector before the current one (from the end of the scan: the last
    /// one) that has rows, decoded; false if there is none.
    unsafe fn back_to_previous_vector(&mut self) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self.rel` is still open (`Reader::new` requires it for the reader's life), so the
        // metadata and buffer reads are allowed.
        unsafe {
            loop {
                pgrx::check_for_interrupts!();
                let Some(index) = self.group.filter(|_| self.vector > 0) else {
                    let before = self.group.unwrap_or(self.groups.len());
                    let Some((index, mask)) =
                        (0..before).rev().find_map(|i| Some((i, self.usable_group(i)?)))
                    else {
                        return false;
                    };
                    self.load_group(index, mask);
                    self.claim = GroupClaim::Serial { next: index + 1 };
                    self.vector = self.vector_count;
                    continue;
                };
                self.vector -= 1;
                self.vector_rows = 0;
                self.selection.clear();
                self.vector_first_row = self.groups[index].first_row + (self.vector * VECTOR_ROWS) as u64;
                let (_, verdict) = self.vector_fate();
                if verdict == Verdict::None {
                    continue;
                }
                self.load_vector(verdict);
                if !self.selection.is_empty() {
                    return true;
                }
            }
        }
    }

    /// `next` without a call into PostgreSQL, for a scan's per-row path: stores the
    /// current vector's next row in `slot` if the vector has one left and the slot takes
    /// it in place (a columnar slot of the reader's descriptor, primed for this row
    /// group, holding nothing to free: `slot::clear_in_place`). Otherwise it does
    /// nothing and returns false: then `next` is the way. Nothing here raises an ERROR,
    /// so a caller may skip pgrx's per-call guard.
    ///
    /// # Safety
    /// `slot` must be a valid tuple slot.
    pub unsafe fn next_in_place(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        // SAFETY: `slot` is a valid tuple slot (this fn's contract); once `clear_in_place`
        // accepted it, it is a columnar slot of the reader's descriptor, whose arrays have
        // an entry per attribute, as `fill_row` requires.
        unsafe {
            let Some(group) = self.group else { return false };
            // A vector whose order column is not read yet (the rows' TIDs need it) goes
            // to `emit`, which reads it: that may raise an ERROR.
            if self.row >= self.selection.len()
                || self.batch.rows() == 0
                || (*slot).tts_tupleDescriptor != self.desc
                || self.slot_primed_for != Some((slot as usize, group))
                || (self.has_order && self.order_vector_at != Some(self.vector))
                || !slot::clear_in_place(slot)
            {
                return false;
            }
            if !self.fill_row(slot, group) {
                return false;
            }
            slot::store_values(slot);
            true
        }
    }

    /// Stores row `self.row` of the current vector in `slot` and steps past it.
    unsafe fn emit(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot for
        // the reader's descriptor, we are on the backend thread inside a transaction, and
        // `self.rel` is still open (`Reader::new`'s contract), so the buffer reads and slot
        // calls are allowed.
        unsafe {
            if (*slot).tts_flags & pg_sys::TTS_FLAG_SHOULDFREE as u16 != 0 {
                // Materialized: its by-reference values (constant ones too) point into the
                // copies clearing frees, so the constants are written again.
                self.slot_primed_for = None;
            }
            pg_sys::ExecClearTuple(slot);
            let group = self.group.unwrap_or(usize::MAX);
            // Constant attributes (not read, or missing from this row group) are written once
            // per row group and slot; clearing a virtual slot leaves its arrays alone.
            let key = (slot as usize, group);
            if self.slot_primed_for != Some(key) {
                let values = (*slot).tts_values;
                let nulls = (*slot).tts_isnull;
                for (i, source) in self.sources.iter().enumerate() {
                    let (d, n) = match *source {
                        Source::Missing(d, n) => (d, n),
                        Source::Chunk | Source::Null => (pg_sys::Datum::from(0usize), true),
                    };
                    *values.add(i) = d;
                    *nulls.add(i) = n;
                }
                self.slot_primed_for = Some(key);
            }
            self.ensure_order(self.vector);
            if !self.fill_row(slot, group) {
                pgrx::error!("columnar scan: a row of a vector not decoded");
            }
            pg_sys::ExecStoreVirtualTuple(slot);
            true
        }
    }

    /// Writes row `self.row` of the current vector (of row group `group`) into the
    /// arrays of `slot`, which `emit` primed with the row group's constant attributes,
    /// and its TID, table and writer; steps past it. False, with the slot's arrays
    /// untouched, if the batch does not hold that row.
    ///
    /// # Safety
    /// `slot` must be a valid tuple slot whose arrays have an entry per attribute of the
    /// reader's descriptor.
    unsafe fn fill_row(&mut self, slot: *mut pg_sys::TupleTableSlot, group: usize) -> bool {
        // SAFETY: this fn's contract: the slot's arrays have an entry per attribute, and the
        // batch's attributes are attribute indexes of the reader's descriptor.
        unsafe {
            let (Some(&row), Some(g)) = (self.selection.get(self.row), self.groups.get(group)) else {
                return false;
            };
            if !self.batch.store(row as usize, (*slot).tts_values, (*slot).tts_isnull) {
                return false;
            }
            let (xmin, cmin) = g.writer;
            slot::set_writer(slot, xmin, cmin);
            let position = (self.vector_first_row - self.group_first_row) as usize + row as usize;
            (*slot).tts_tid = row_tid(self.group_first_row + self.offset_at(position) as u64);
            (*slot).tts_tableOid = (*self.rel).rd_id;
            self.row += 1;
            true
        }
    }
}

/// The current vector's columns, decoded when the filter first asks for them.
struct LazyVectors<'r>(&'r mut Reader);

impl ColumnSource for LazyVectors<'_> {
    fn column(&mut self, att: usize) -> &DecodedVector {
        // SAFETY: the reader is positioned on a vector (called from `load_vector`).
        unsafe { self.0.decode_attr(att) };
        &self.0.vectors[att]
    }

    fn column_rows(&mut self, att: usize, rows: &[u32]) -> &DecodedVector {
        // SAFETY: as `column`.
        unsafe { self.0.decode_attr_rows(att, rows) };
        &self.0.vectors[att]
    }
}

/// `rows` as a byte a row (1: marked), in `marks`' buffer: each row's mark is a store
/// of its own (setting bits of shared words chained each row to the one before).
fn mark_rows(marks: &mut Vec<u8>, rows: &[u32]) {
    marks.clear();
    marks.resize(rows.last().map_or(0, |&r| r as usize + 1), 0);
    for &r in rows {
        marks[r as usize] = 1;
    }
}

/// Whether every row of `rows` is marked in `marks`: a load a row, each on its own.
fn all_marked(rows: &[u32], marks: &[u8]) -> bool {
    rows.iter().all(|&r| marks.get(r as usize) == Some(&1))
}

/// Forgets an earlier vector's dictionary and scaled numbers before a constant vector
/// (plain values) is written over it.
fn clear_coded(v: &mut DecodedVector) {
    v.dictionary = None;
    v.scaled = None;
    v.images = None;
}

#[cfg(test)]
mod tests {
    use super::{all_marked, mark_rows};

    #[test]
    fn rows_marked_and_looked_up() {
        let mut bits = vec![1u8; 3000];
        mark_rows(&mut bits, &[1, 4, 5, 63, 64, 2000]);
        for (rows, want) in [
            (&[][..], true),
            (&[1][..], true),
            (&[4, 63, 64][..], true),
            (&[1, 4, 5, 63, 64, 2000][..], true),
            (&[0][..], false),
            (&[3][..], false),
            (&[4, 6][..], false),
            (&[65][..], false),
            (&[2000, 2001][..], false),
            (&[2047][..], false),
        ] {
            assert_eq!(all_marked(rows, &bits), want, "{rows:?}");
        }
        mark_rows(&mut bits, &[]);
        assert!(all_marked(&[], &bits) && !all_marked(&[0], &bits));
    }
}
