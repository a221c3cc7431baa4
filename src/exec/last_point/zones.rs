//! LastPoint over a columnar relation's zone maps: row groups and vectors newest first
//! (by the ordering column's zone maps), keys numbered as they appear, each key's best
//! row kept (`best`), and a row group or vector passed by once every key it may hold has
//! a row at least as good as the best one its zone map allows. The winners' rows are
//! fetched by TID at the end, the only time the other columns are read.

use super::best::{Best, Rank, Score};
use super::Counters;
use crate::exec::agg::groups::{ByteKey, Grouper, KeyInput, KeyValue};
use crate::exec::columnar_scan::ScanPlan;
use crate::exec::filter::operands::operand_values;
use crate::exec::filter::plan::FilterPlan;
use crate::exec::filter::pushed::PushedFilter;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::format::layout::VECTOR_ROWS;
use crate::storage::format::zonemap::{ZoneMap, ZonePredicate, ZoneStats};
use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::relation::tid::row_tid;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;

/// Integer keys a zone map may hold that are enumerated to check them all, at most.
const ENUMERABLE_KEYS: i64 = 64;

/// Stored key vectors remembered per run, in bytes, at most.
const KEY_SETS_BYTES: usize = 16 << 20;

/// The keys of stored key vectors seen in this run, by their stored bytes: devices that
/// report in a fixed order write identical key vectors, whose keys are then known
/// without decoding them again (identical bytes decode to identical keys).
#[derive(Default)]
struct KeySets {
    /// By the hash of the stored bytes: those bytes, and the vector's key numbers.
    sets: hashbrown::HashMap<u64, Vec<KeySet>>,
    hasher: hashbrown::DefaultHashBuilder,
    bytes: usize,
}

/// A stored key vector and the numbers of its keys, each once.
type KeySet = (Box<[u8]>, Box<[u32]>);

impl KeySets {
    fn find(&self, stored: &[u8]) -> Option<&[u32]> {
        let h = std::hash::BuildHasher::hash_one(&self.hasher, stored);
        self.sets.get(&h)?.iter().find(|(b, _)| &b[..] == stored).map(|(_, keys)| &keys[..])
    }

    fn remember(&mut self, stored: &[u8], keys: &[u32]) {
        if self.bytes + stored.len() > KEY_SETS_BYTES {
            return;
        }
        let mut unique = keys.to_vec();
        unique.sort_unstable();
        unique.dedup();
        self.bytes += stored.len() + unique.len() * 4;
        let h = std::hash::BuildHasher::hash_one(&self.hasher, stored);
        self.sets.entry(h).or_default().push((stored.into(), unique.into()));
    }
}

pub struct ZoneRun {
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    reader: Reader,
    key_att: usize,
    time_att: usize,
    rank: Rank,
    filter: Option<FilterPlan>,
    operands: Vec<*mut pg_sys::Node>,
    operand_states: Vec<*mut pg_sys::ExprState>,
    /// The winners' row numbers, ascending, once ranked; the next one to return.
    winners: Option<Vec<u64>>,
    next: usize,
    counters: Counters,
}

impl ZoneRun {
    /// The run over `rel` for the node's BeginCustomScan.
    ///
    /// # Safety
    /// Backend thread, in the executor's memory context: `rel` open and locked and
    /// `snapshot` registered until `end`; `operands` are the plan's operand expressions
    /// and `parent` the node's PlanState (their states are initialized here).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn begin(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        scan: &mut ScanPlan,
        key_att: usize,
        time_att: usize,
        rank: Rank,
        operands: &[*mut pg_sys::Node],
        parent: *mut pg_sys::PlanState,
    ) -> ZoneRun {
        // SAFETY: `rel` is open (this fn's contract), so its tuple descriptor is live.
        let natts = unsafe { (*(*rel).rd_att).natts as usize };
        let mut wanted = vec![false; natts];
        for &a in &scan.attnums {
            wanted[a as usize - 1] = true;
        }
        // SAFETY: `rel` is open and locked and `snapshot` registered for the scan (this
        // fn's contract), as writing out buffered rows and making a reader require.
        let mut reader = unsafe {
            write_buffer::flush_before_reading(rel);
            Reader::new(rel, snapshot, Some(wanted), GroupClaim::Serial { next: 0 })
        };
        reader.set_predicates(std::mem::take::<Vec<(usize, ZonePredicate)>>(&mut scan.zone_predicates));
        // Nothing becomes a Datum here: keys stay dictionaries, times stay integers.
        reader.set_output(vec![false; natts]);
        // SAFETY: the operands are the plan's expressions and `parent` the node's PlanState,
        // in the executor's memory context (this fn's contract).
        let operand_states = operands
            .iter()
            .map(|&e| unsafe { pg_sys::ExecInitExpr(e as *mut pg_sys::Expr, parent) })
            .collect();
        ZoneRun {
            rel,
            snapshot,
            reader,
            key_att,
            time_att,
            rank,
            filter: scan.filter.clone(),
            operands: operands.to_vec(),
            operand_states,
            winners: None,
            next: 0,
            counters: Counters::default(),
        }
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    pub fn restart(&mut self) {
        self.reader.restart();
        self.winners = None;
        self.next = 0;
    }

    pub fn end(&mut self) {
        self.reader.release();
    }

    /// Fetches the next winner into `slot`; false after the last.
    ///
    /// # Safety
    /// Backend thread, between `begin` and `end` (the relation still open, the snapshot
    /// registered): `econtext` is the node's live expression context and `slot` a slot
    /// of the relation's row type.
    pub unsafe fn next(
        &mut self,
        econtext: *mut pg_sys::ExprContext,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        if self.winners.is_none() {
            // Parameters may differ at each rescan: the filter is resolved now.
            let plans: Vec<&FilterPlan> = self.filter.iter().collect();
            // SAFETY: the states were initialized for these operands in `begin`, and
            // `econtext` is the node's live context (this fn's contract).
            let values = unsafe { operand_values(&self.operands, &self.operand_states, econtext, &plans) };
            self.reader.set_filter(self.filter.as_ref().map(|f| PushedFilter::boxed(f.resolve(&values))));
            // SAFETY: between `begin` and `end`, so the reader's relation is open.
            self.winners = Some(unsafe { self.rank_rows() });
            self.next = 0;
        }
        let winners = self.winners.as_ref().unwrap();
        let Some(&row) = winners.get(self.next) else { return false };
        self.next += 1;
        let tid = row_tid(row);
        // SAFETY: `rel` is open (this fn's contract), so its table AM routine is live; the
        // fetch gets the registered snapshot, a TID on the stack that outlives the call and
        // the caller's slot, and any ERROR it raises is caught at the FFI boundary.
        let found = unsafe {
            let am = (*self.rel).rd_tableam;
            let fetch = (*am).tuple_fetch_row_version.expect("table AM fetches rows");
            let (rel, snapshot) = (self.rel, self.snapshot);
            pg_sys::ffi::pg_guard_ffi_boundary(|| fetch(rel, &tid as *const _ as *mut _, snapshot, slot))
        };
        if !found {
            pgrx::error!("LastPoint could not fetch row {row}, which its scan saw");
        }
        true
    }

    /// The best row of every key, as row numbers, ascending.
    unsafe fn rank_rows(&mut self) -> Vec<u64> {
        let (key, time, rank) = (self.key_att, self.time_att, self.rank);
        let reader = &mut self.reader;
        let mut counters = Counters::default();
        let mut grouper = Grouper::new(1);
        let mut best = Best::default();
        let mut key_sets = KeySets::default();
        let mut stored: Vec<u8> = Vec::new();
        let mut keys: Vec<u32> = Vec::new();
        let mut gids: Vec<u32> = Vec::new();
        let mut sel: Vec<u32> = Vec::new();
        // Row groups, then their vectors, best possible row first.
        let groups = reader.groups().len();
        let mut order: Vec<(Score, usize)> =
            (0..groups).map(|g| (rank.top(reader.group_stats(g, time, None).as_ref()), g)).collect();
        order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for (top, g) in order {
            pgrx::check_for_interrupts!();
            if zone_covered(&grouper, &best, reader.group_stats(g, key, None).as_ref(), top) {
                counters.groups_skipped += 1;
                continue;
            }
            let rows = reader.groups()[g].row_count as usize;
            let mut vectors: Vec<(Score, usize)> = (0..rows.div_ceil(VECTOR_ROWS))
                .map(|v| (rank.top(reader.group_stats(g, time, Some(v)).as_ref()), v))
                .collect();
            vectors.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut read_any = false;
            for (top, v) in vectors {
                if zone_covered(&grouper, &best, reader.group_stats(g, key, Some(v)).as_ref(), top) {
                    counters.vectors_skipped_by_zones += 1;
                    continue;
                }
                // SAFETY: the reader's relation is open and its snapshot live (this fn is
                // only called from `next`, between `begin` and `end`).
                if !unsafe { reader.seek_vector(g, v) } {
                    continue;
                }
                read_any = true;
                stored.clear();
                // SAFETY: the reader is open and positioned by `seek_vector` just above.
                stored.extend_from_slice(unsafe { reader.stored(key) }.unwrap_or_default());
                let covered = match key_sets.find(&stored).filter(|_| !stored.is_empty()) {
                    Some(set) => set.iter().all(|&k| best.covers(k, top)),
                    None => {
                        // SAFETY: the reader is open and positioned by `seek_vector`.
                        unsafe { reader.decode(key) };
                        let col = reader.column(key);
                        grouper.vector_keys(&key_input(col), col.rows as usize, &mut keys);
                        if !stored.is_empty() {
                            key_sets.remember(&stored, &keys);
                        }
                        keys.iter().all(|&k| best.covers(k, top))
                    }
                };
                if covered {
                    counters.vectors_skipped_by_keys += 1;
                    continue;
                }
                sel.clear();
                // SAFETY: the reader is open and positioned by `seek_vector`.
                sel.extend_from_slice(unsafe { reader.select() });
                if sel.is_empty() {
                    continue;
                }
                counters.vectors_read += 1;
                counters.rows_ranked += sel.len() as u64;
                // SAFETY: the reader is open and positioned by `seek_vector`.
                unsafe { reader.decode(key) };
                grouper.assign(&[key_input(reader.column(key))], &sel, &mut gids);
                // SAFETY: the open reader is still positioned on this vector.
                unsafe {
                    reader.decode(time);
                    reader.prepare_row_numbers();
                }
                let t = reader.column(time);
                for (&r, &gid) in sel.iter().zip(&gids) {
                    best.offer(gid, score(rank, t, r as usize), reader.row_number(r));
                }
            }
            if read_any {
                counters.groups_read += 1;
            } else {
                counters.groups_skipped += 1;
            }
        }
        let mut rows: Vec<u64> = best.winners().map(|(_, row)| row).collect();
        rows.sort_unstable();
        counters.winners = rows.len() as u64;
        self.counters = counters;
        rows
    }
}

fn key_input(col: &DecodedVector) -> KeyInput<'_> {
    match &col.values {
        DecodedValues::Int(v) => KeyInput::Int { values: v, valid: col.validity.as_deref() },
        _ => KeyInput::Bytes(col, ByteKey::Exact),
    }
}

/// The score of row `r` of the ordering column `t`.
#[inline]
fn score(rank: Rank, t: &DecodedVector, r: usize) -> Score {
    if !t.is_valid(r) {
        return rank.of_int(None);
    }
    match &t.values {
        DecodedValues::Int(v) => rank.of_int(Some(v[r])),
        DecodedValues::Float64(v) => rank.of_float(Some(v[r])),
        DecodedValues::Float32(v) => rank.of_float(Some(v[r] as f64)),
        DecodedValues::Bytes { .. } => super::best::UNKNOWN,
    }
}

/// Whether every key a zone may hold (known from its key column's statistics alone: a
/// few integers, or one byte string, or NULL) has a row at least as good as `top`.
fn zone_covered(grouper: &Grouper, best: &Best, key: Option<&ZoneStats>, top: Score) -> bool {
    let Some(s) = key else { return false };
    let covered = |k: &KeyValue| grouper.lookup(k).is_some_and(|id| best.covers(id, top));
    if s.null_count > 0 && !covered(&KeyValue::Null) {
        return false;
    }
    if s.rows == s.null_count {
        return true;
    }
    match s.zone {
        ZoneMap::Int { min, max } if max.checked_sub(min).is_some_and(|d| d < ENUMERABLE_KEYS) => {
            (min..=max).all(|x| covered(&KeyValue::Int(x)))
        }
        ZoneMap::Bytes { min, max } if min == max => covered(&KeyValue::Bytes(min.as_slice().into())),
        _ => false,
    }
}
