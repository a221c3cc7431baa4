//! Reads a columnar relation row group by row group, decoding only the chosen columns,
//! one vector at a time, into Datums.

use super::catalog::{self, RowGroupMeta};
use super::datum::{self, ColumnKind, DatumColumn};
use super::decode::{decode_checked, load_order};
use super::error::data_corrupted;
use super::format::encoding::DecodedVector;
use super::format::row_marks::{self, DeleteMask};
use super::format::zonemap::{Verdict, ZoneMap, ZonePredicate, ZoneStats};
use super::tid::row_tid;
use super::vector_filter::VectorFilter;
use super::{mark_batch, pages};
use pgrx::pg_sys;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the next row group to read comes from.
pub enum GroupClaim {
    /// This scan reads every row group in order.
    Serial { next: usize },
    /// Parallel workers take row groups from a counter in shared memory.
    Shared(*const AtomicU64),
}

impl GroupClaim {
    fn claim(&mut self) -> usize {
        match self {
            GroupClaim::Serial { next } => {
                *next += 1;
                *next - 1
            }
            GroupClaim::Shared(counter) => unsafe { (**counter).fetch_add(1, Ordering::Relaxed) as usize },
        }
    }
}

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
    groups: Vec<RowGroupMeta>,
    /// Row numbers deleted for the scan's snapshot (marks not yet folded into masks).
    deleted_rows: Vec<u64>,
    /// The current row group's deleted rows, if it has any.
    mask: Option<DeleteMask>,
    /// The current row group's order column, if a flush stored it in sort_by order:
    /// position p holds the row at offset order[p].
    order: Option<Rc<[u32]>>,
    group_first_row: u64,
    claim: GroupClaim,
    strategy: pg_sys::BufferAccessStrategy,
    // The row group being read.
    group: Option<usize>,
    sources: Vec<Source>,
    chunk_bytes: Vec<Vec<u8>>,
    vector: usize,
    vector_count: usize,
    vector_first_row: u64,
    vector_rows: usize,
    /// The current vector's rows the scan returns, ascending: live ones that pass the
    /// filter. `row` indexes it (the next one to return).
    selection: Vec<u32>,
    row: usize,
    /// The slot and row group whose constant attributes `next` has written, and the
    /// attributes it still writes per row.
    slot_primed_for: Option<(usize, usize)>,
    decoded_attrs: Vec<usize>,
    /// (attribute index, predicate): row groups and vectors they refute are skipped.
    predicates: Vec<(usize, ZonePredicate)>,
    /// A filter pushed into the scan: rows that fail it are never returned.
    filter: Option<Box<dyn VectorFilter>>,
    counters: ReadCounters,
    /// For the order column.
    scratch: DecodedVector,
    /// Per attribute, the current vector decoded (if `decoded`) and as Datums.
    vectors: Vec<DecodedVector>,
    decoded: Vec<bool>,
    columns: Vec<DatumColumn>,
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
}

impl Reader {
    /// A reader over the row groups visible to `snapshot`. Rows this backend still
    /// buffers are not among them: callers write them out first
    /// (`write_buffer::flush_before_reading`). `wanted` lists, per
    /// attribute, whether to decode it; None means every attribute.
    pub unsafe fn new(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        wanted: Option<Vec<bool>>,
        claim: GroupClaim,
    ) -> Reader {
        let desc = (*rel).rd_att;
        let kinds = datum::column_kinds(desc);
        let natts = kinds.len();
        let storage_id = pages::storage_id(rel);
        catalog::note_storage((*rel).rd_id, storage_id);
        let groups = catalog::load_row_groups(storage_id, snapshot, true);
        let deleted_rows = mark_batch::deleted_rows(storage_id, snapshot);
        let wanted = wanted.unwrap_or_else(|| vec![true; natts]);
        Reader {
            rel,
            desc,
            wanted,
            groups,
            deleted_rows,
            mask: None,
            order: None,
            group_first_row: 0,
            claim,
            strategy: std::ptr::null_mut(),
            group: None,
            sources: vec![Source::Null; natts],
            chunk_bytes: (0..natts).map(|_| Vec::new()).collect(),
            vector: 0,
            vector_count: 0,
            vector_first_row: 0,
            vector_rows: 0,
            selection: Vec::new(),
            row: 0,
            slot_primed_for: None,
            decoded_attrs: Vec::new(),
            predicates: Vec::new(),
            filter: None,
            counters: ReadCounters::default(),
            scratch: DecodedVector::default(),
            vectors: (0..natts).map(|_| DecodedVector::default()).collect(),
            decoded: vec![false; natts],
            columns: (0..natts).map(|_| DatumColumn::default()).collect(),
            kinds,
        }
    }

    /// Frees the decode buffers at the end of a scan (the reader itself goes with its
    /// memory context).
    pub fn release(&mut self) {
        self.groups = Vec::new();
        self.deleted_rows = Vec::new();
        self.mask = None;
        self.order = None;
        self.chunk_bytes = Vec::new();
        self.columns = Vec::new();
        self.vectors = Vec::new();
        self.selection = Vec::new();
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

    /// Keeps only the row groups for which `keep(group, live rows)` holds.
    pub fn retain_groups(&mut self, keep: impl Fn(&RowGroupMeta, u64) -> bool) {
        let deleted = std::mem::take(&mut self.deleted_rows);
        self.groups.retain(|g| {
            let mask = row_marks::group_mask(g.deleted.as_deref(), &deleted, g.first_row, g.row_count);
            keep(g, g.row_count - mask.map_or(0, |m| m.count()))
        });
        self.deleted_rows = deleted;
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

    /// What the scan has done so far (EXPLAIN ANALYZE).
    pub fn counters(&self) -> ReadCounters {
        self.counters
    }

    /// Zone statistics of attribute `att` in row group `g`, or, with `vector`, in that
    /// vector of it; None if the row group does not store the attribute.
    fn stats(g: &RowGroupMeta, att: usize, vector: Option<usize>) -> Option<ZoneStats> {
        let chunk = g.chunk(att as i16 + 1)?;
        Some(match vector {
            Some(v) => {
                let e = chunk.vectors.get(v)?;
                ZoneStats { zone: e.zone, rows: e.rows as u64, null_count: e.null_count as u64 }
            }
            None => ZoneStats {
                zone: chunk.vectors.iter().fold(ZoneMap::None, |z, e| z.merge(e.zone)),
                rows: g.row_count,
                null_count: chunk.null_count,
            },
        })
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
        (g.row_count as usize - vector * super::format::layout::VECTOR_ROWS)
            .min(super::format::layout::VECTOR_ROWS)
    }

    pub fn groups(&self) -> &[RowGroupMeta] {
        &self.groups
    }

    /// Rows the scan will return (before predicates): stored rows less deleted ones.
    pub fn total_rows(&self) -> u64 {
        self.groups
            .iter()
            .map(|g| {
                let mask =
                    row_marks::group_mask(g.deleted.as_deref(), &self.deleted_rows, g.first_row, g.row_count);
                g.row_count - mask.map_or(0, |m| m.count())
            })
            .sum()
    }

    /// Starts over (rescan); a parallel scan's shared counter is reset by its owner.
    pub fn restart(&mut self) {
        if let GroupClaim::Serial { next } = &mut self.claim {
            *next = 0;
        }
        self.group = None;
        self.vector_rows = 0;
        self.selection.clear();
        self.row = 0;
    }

    /// Reads row groups from `claim` from now on (a parallel scan's shared counter).
    pub fn set_claim(&mut self, claim: GroupClaim) {
        self.claim = claim;
    }

    /// The delete mask row group `index` is read with, or None if the scan passes it
    /// by: every row deleted, or zone maps rule it out (counted).
    fn usable_group(&mut self, index: usize) -> Option<Option<DeleteMask>> {
        let g = &self.groups[index];
        let mask = row_marks::group_mask(g.deleted.as_deref(), &self.deleted_rows, g.first_row, g.row_count);
        if mask.as_ref().is_some_and(|m| m.count() == g.row_count) {
            return None;
        }
        if self.refuted(g, None) || self.verdict(g, None) == Verdict::None {
            self.counters.groups_skipped += 1;
            return None;
        }
        Some(mask)
    }

    /// Loads the next row group; false when none is left.
    unsafe fn next_group(&mut self) -> bool {
        loop {
            let index = self.claim.claim();
            if index >= self.groups.len() {
                self.group = None;
                return false;
            }
            if let Some(mask) = self.usable_group(index) {
                self.load_group(index, mask);
                return true;
            }
        }
    }

    /// Makes row group `index` the current one, before its first vector.
    unsafe fn load_group(&mut self, index: usize, mask: Option<DeleteMask>) {
        self.mask = mask;
        let g = &self.groups[index];
        self.order = match &g.chunks.order {
            Some(c) => Some(load_order(self.rel, c, g.row_count, self.strategy, &mut self.scratch)),
            None => None,
        };
        self.load_sources(index);
        let g = &self.groups[index];
        self.group = Some(index);
        self.counters.groups_read += 1;
        self.vector = 0;
        self.vector_count = (g.row_count as usize).div_ceil(super::format::layout::VECTOR_ROWS);
        self.vector_first_row = g.first_row;
        self.group_first_row = g.first_row;
        self.vector_rows = 0;
        self.row = 0;
    }

    /// Decides per attribute where row group `index`'s values come from, and reads the
    /// chunks of the stored ones. An attribute the row group has no chunk for was added
    /// after it was written: its rows read the descriptor's missing value (the ADD
    /// COLUMN's default), or NULL, as heap does for tuples shorter than the descriptor.
    unsafe fn load_sources(&mut self, index: usize) {
        let g = &self.groups[index];
        for i in 0..self.kinds.len() {
            let wanted = self.wanted.get(i).copied().unwrap_or(true);
            self.sources[i] = if !wanted || self.kinds[i] == ColumnKind::Dropped {
                Source::Null
            } else if let Some(chunk) = g.chunk(i as i16 + 1) {
                if chunk.vectors.iter().map(|v| v.rows as u64).sum::<u64>() != g.row_count {
                    data_corrupted("a column chunk's vectors do not add up to its row group");
                }
                pages::read_stream(
                    self.rel,
                    chunk.offset,
                    chunk.length as usize,
                    self.strategy,
                    &mut self.chunk_bytes[i],
                );
                self.counters.bytes_read += chunk.length;
                Source::Chunk
            } else {
                let mut isnull = false;
                let d = pg_sys::getmissingattr(self.desc, i as i32 + 1, &mut isnull);
                Source::Missing(d, isnull)
            };
        }
    }

    /// Reads rows with descriptor `desc` from now on. ALTER TABLE's rewrite
    /// (ATRewriteTable) scans the relation, whose descriptor already has the altered
    /// columns, into a slot of the descriptor from before the ALTER: the one the stored
    /// chunks were written with (a changed column type keeps its attribute number), and
    /// with the fast defaults of that time. The slot's arrays are sized by it too.
    unsafe fn read_as(&mut self, desc: pg_sys::TupleDesc) {
        self.desc = desc;
        self.kinds = datum::column_kinds(desc);
        let natts = self.kinds.len();
        self.sources = vec![Source::Null; natts];
        self.chunk_bytes = (0..natts).map(|_| Vec::new()).collect();
        self.columns = (0..natts).map(|_| DatumColumn::default()).collect();
        self.vectors = (0..natts).map(|_| DecodedVector::default()).collect();
        self.decoded = vec![false; natts];
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

    /// The offset in the current row group of the row stored at `position`.
    fn offset_at(&self, position: usize) -> usize {
        self.order.as_ref().map_or(position, |o| o[position] as usize)
    }

    /// Whether row `row` of the current vector is deleted.
    fn is_deleted(&self, row: usize) -> bool {
        let position = (self.vector_first_row - self.group_first_row) as usize + row;
        self.mask.as_ref().is_some_and(|m| m.is_deleted(self.offset_at(position)))
    }

    /// How many of the rows stored at positions `start .. start + len` of the current
    /// row group are deleted.
    fn deleted_in(&self, start: usize, len: usize) -> usize {
        let Some(m) = &self.mask else { return 0 };
        match &self.order {
            None => m.count_range(start, len),
            Some(o) => o[start..start + len].iter().filter(|&&off| m.is_deleted(off as usize)).count(),
        }
    }

    /// Decodes attribute `i` of the current vector into `vectors[i]`, once per vector.
    /// An attribute the row group does not store reads as its missing value.
    unsafe fn decode_attr(&mut self, i: usize) {
        if std::mem::replace(&mut self.decoded[i], true) {
            return;
        }
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
                let bytes = &self.chunk_bytes[i][entry.offset as usize..(entry.offset + entry.len) as usize];
                decode_checked(self.kinds[i], bytes, entry.rows, &mut self.vectors[i]);
            }
            Source::Missing(d, isnull) => {
                datum::constant_vector(self.kinds[i], d, isnull, rows, &mut self.vectors[i])
            }
            Source::Null => datum::constant_vector(
                self.kinds[i],
                pg_sys::Datum::from(0usize),
                true,
                rows,
                &mut self.vectors[i],
            ),
        }
    }

    /// Loads vector `self.vector` of the current group: `selection` gets its live rows
    /// that pass the filter (evaluated unless `verdict` is `All`), and only then are the
    /// other wanted columns decoded, as Datums for those rows (none if no row is left).
    unsafe fn load_vector(&mut self, verdict: Verdict) {
        let g = &self.groups[self.group.unwrap()];
        let rows = self.rows_in_vector(g, self.vector);
        self.vector_rows = rows;
        self.row = 0;
        self.decoded.iter_mut().for_each(|d| *d = false);
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
                for &att in filter.attributes() {
                    self.decode_attr(att);
                }
                let before = self.selection.len();
                let vectors = &self.vectors;
                filter.select(&|att| &vectors[att], &mut self.selection);
                self.counters.rows_filtered += (before - self.selection.len()) as u64;
            } else {
                self.counters.vectors_passed += 1;
            }
            self.filter = Some(filter);
        }
        if self.selection.is_empty() {
            return;
        }
        for i in 0..self.kinds.len() {
            if matches!(self.sources[i], Source::Chunk) {
                self.decode_attr(i);
                self.columns[i].materialize_rows(self.kinds[i], &self.vectors[i], &self.selection);
            }
        }
    }

    /// Whether zone maps let vector `self.vector` of the current group be passed by
    /// (counted); otherwise what they say of the filter on it.
    fn vector_verdict(&mut self) -> Verdict {
        let g = &self.groups[self.group.unwrap()];
        if self.refuted(g, Some(self.vector)) {
            return Verdict::None;
        }
        self.verdict(g, Some(self.vector))
    }

    /// Moves to the next vector with rows; false at the end of the scan.
    unsafe fn advance(&mut self) -> bool {
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
            let g = &self.groups[self.group.unwrap()];
            let rows_here = self.rows_in_vector(g, self.vector);
            let all_deleted =
                self.deleted_in((self.vector_first_row - g.first_row) as usize, rows_here) == rows_here;
            let verdict = if all_deleted { Verdict::None } else { self.vector_verdict() };
            if verdict == Verdict::None {
                self.vector_first_row += rows_here as u64;
                self.vector += 1;
                self.counters.vectors_skipped += !all_deleted as u64;
                continue;
            }
            self.load_vector(verdict);
            if !self.selection.is_empty() {
                return true;
            }
        }
    }

    /// Skips up to `n` rows (not counting deleted ones) without decoding the whole
    /// vectors it passes; returns how many.
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
                if !self.next_group() {
                    break;
                }
                continue;
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
                self.load_vector(Verdict::Some);
            }
        }
        skipped
    }

    /// Stores the next row in `slot` (a virtual slot); false at the end.
    pub unsafe fn next(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        if (*slot).tts_tupleDescriptor != self.desc {
            self.read_as((*slot).tts_tupleDescriptor);
        }
        if self.row >= self.selection.len() && !self.advance() {
            return false;
        }
        self.emit(slot)
    }

    /// Stores the row before the last one returned in `slot` (scrollable cursors); false
    /// before the first. As in heap's scans, both ends leave the scan unpositioned: going
    /// backward from there starts at the last row, going forward at the first. Serial
    /// scans only (a parallel scan never runs backward).
    pub unsafe fn prev(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
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

    /// Moves to the vector before the current one (from the end of the scan: the last
    /// one) that has rows, decoded; false if there is none.
    unsafe fn back_to_previous_vector(&mut self) -> bool {
        loop {
            pgrx::check_for_interrupts!();
            let Some(index) = self.group.filter(|_| self.vector > 0) else {
                let before = self.group.unwrap_or(self.groups.len());
                let Some((index, mask)) = (0..before).rev().find_map(|i| Some((i, self.usable_group(i)?)))
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
            let g = &self.groups[index];
            let rows_here = self.rows_in_vector(g, self.vector);
            self.vector_first_row = g.first_row + (self.vector * super::format::layout::VECTOR_ROWS) as u64;
            let all_deleted =
                self.deleted_in((self.vector_first_row - g.first_row) as usize, rows_here) == rows_here;
            let verdict = if all_deleted { Verdict::None } else { self.vector_verdict() };
            if verdict == Verdict::None {
                self.counters.vectors_skipped += !all_deleted as u64;
                continue;
            }
            self.load_vector(verdict);
            if !self.selection.is_empty() {
                return true;
            }
        }
    }

    /// Stores row `self.row` of the current vector in `slot` and steps past it.
    unsafe fn emit(&mut self, slot: *mut pg_sys::TupleTableSlot) -> bool {
        pg_sys::ExecClearTuple(slot);
        let values = (*slot).tts_values;
        let nulls = (*slot).tts_isnull;
        // Constant attributes (not read, or missing from this row group) are written once
        // per row group and slot; clearing a virtual slot leaves its arrays alone.
        let key = (slot as usize, self.group.unwrap_or(usize::MAX));
        if self.slot_primed_for != Some(key) {
            for (i, source) in self.sources.iter().enumerate() {
                let (d, n) = match *source {
                    Source::Missing(d, n) => (d, n),
                    Source::Chunk | Source::Null => (pg_sys::Datum::from(0usize), true),
                };
                *values.add(i) = d;
                *nulls.add(i) = n;
            }
            self.decoded_attrs =
                (0..self.sources.len()).filter(|&i| matches!(self.sources[i], Source::Chunk)).collect();
            self.slot_primed_for = Some(key);
        }
        let row = self.selection[self.row] as usize;
        for &i in &self.decoded_attrs {
            *values.add(i) = self.columns[i].datums[row];
            *nulls.add(i) = self.columns[i].nulls[row];
        }
        pg_sys::ExecStoreVirtualTuple(slot);
        let (xmin, cmin) = self.groups[self.group.unwrap()].writer;
        super::slot::set_writer(slot, xmin, cmin);
        let position = (self.vector_first_row - self.group_first_row) as usize + row;
        (*slot).tts_tid = row_tid(self.group_first_row + self.offset_at(position) as u64);
        (*slot).tts_tableOid = (*self.rel).rd_id;
        self.row += 1;
        true
    }
}
