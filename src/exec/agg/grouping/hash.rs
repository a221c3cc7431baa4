//! GROUP BY: each vector's rows are numbered by their keys (`groups::Grouper`) and
//! folded into their groups. Past work_mem, a partial aggregate flushes its groups (core's
//! Finalize Aggregate combines however many partial states a group has) and a serial one
//! starts over in passes (`multi_pass`). A vector whose every key column holds one
//! value, as its zone maps say (a table sorted by its keys: `sort_by`, TimescaleDB's
//! segmentby), is one group: its keys are neither decoded nor looked up per row.

use super::{fold_rows, GroupingPolicy, GroupingSetup, Run, Step};
use crate::exec::agg::aggregates::raise;
use crate::exec::agg::groups::{retain_partition, ByteKey, Grouper, KeyInput, OneKey};
use crate::exec::agg::kernels::Gids;
use crate::exec::agg::keys::KeyColumns;
use crate::exec::agg::spec::{KeyKind, KeySpec};
use crate::storage::format::zonemap::{ZoneMap, ZoneStats};
use crate::storage::read::reader::Reader;

/// Which share of the key hashes a pass folds (`multi_pass`).
pub struct Share {
    pub passes: u64,
    pub pass: u64,
}

pub struct HashGrouping {
    grouper: Grouper,
    keys: KeyColumns,
    /// Per selected row of the current vector, its group.
    gids: Vec<u32>,
    /// Rows of the scan this batch has seen (to size the passes).
    rows: u64,
    /// The selected rows ordered by group, then their groups (`sort_by_group`).
    sorted: Vec<u32>,
}

/// Most groups for which a vector's rows are ordered by group before they are folded.
const SORTED_GROUPS: usize = 256;

/// `sel`'s rows ordered by their groups `gids` (stable), then those groups, into `out`
/// (a counting sort: `groups` counters).
fn sort_by_group(sel: &[u32], gids: &[u32], groups: usize, out: &mut Vec<u32>) {
    let n = sel.len();
    let mut starts = vec![0u32; groups + 1];
    gids.iter().for_each(|&g| starts[g as usize + 1] += 1);
    for g in 0..groups {
        starts[g + 1] += starts[g];
    }
    out.clear();
    out.resize(2 * n, 0);
    let (rows, ids) = out.split_at_mut(n);
    for (&r, &g) in sel.iter().zip(gids) {
        let at = &mut starts[g as usize];
        rows[*at as usize] = r;
        ids[*at as usize] = g;
        *at += 1;
    }
}

/// The key of a column whose stored values in the vector (`stats`, its zone map) are
/// all one value, or None. Only columns grouped by their integers or bytes as stored
/// (bpchar and numeric keys have no byte-wise zone maps): a zone map's bounds are
/// byte-wise, and equal bounds of at most `ZONE_BYTES` bytes are the value itself (a
/// longer value's bounds differ).
fn one_key(key: &KeySpec, stats: Option<ZoneStats>) -> Option<OneKey> {
    let s = stats?;
    if key.expr.is_some() || s.null_count > 0 || s.rows == 0 {
        return None;
    }
    match (key.kind, s.zone) {
        (KeyKind::Value, ZoneMap::Int { min, max }) if min == max => Some(OneKey::Int(min)),
        (KeyKind::Value, ZoneMap::Bytes { min, max }) if min == max => {
            Some(OneKey::bytes(min.as_slice(), ByteKey::Exact))
        }
        _ => None,
    }
}

/// The keys of the reader's vector if each key column holds one value in it.
fn one_keys(keys: &[KeySpec], reader: &Reader) -> Option<Vec<OneKey>> {
    keys.iter().map(|key| one_key(key, reader.vector_stats(key.att))).collect()
}

impl HashGrouping {
    /// No groups, and no room made for them.
    pub fn empty(keys: usize) -> HashGrouping {
        HashGrouping {
            grouper: Grouper::new(keys),
            keys: KeyColumns::new(keys),
            gids: Vec::new(),
            rows: 0,
            sorted: Vec::new(),
        }
    }

    /// No groups yet, room for this pass's share of the planner's estimate.
    pub fn new(setup: &GroupingSetup, passes: u64) -> HashGrouping {
        let mut h = HashGrouping::empty(setup.keys.len());
        // The estimate, within reason: a wrong one costs a rehash or some memory.
        h.grouper.reserve((setup.estimated_groups / passes as f64).min((1 << 20) as f64) as usize);
        h
    }

    /// Folds the selected rows of the current vector, those of `share` only if given,
    /// into their groups; returns the bytes the fold then holds, or None if no row was
    /// in the share.
    ///
    /// # Safety
    /// As `GroupingPolicy::add_vector`: the run's reader open and positioned on a vector.
    pub unsafe fn fold_vector(
        &mut self,
        run: &mut Run,
        share: Option<&Share>,
        sel: &mut Vec<u32>,
    ) -> Option<usize> {
        let setup = run.setup;
        if !sel.is_empty() {
            if let Some(keys) = one_keys(&setup.keys, run.reader) {
                // SAFETY: the reader is open and positioned on a vector (this fn's contract).
                return unsafe { self.fold_one_group(run, share, sel, &keys) };
            }
        }
        // SAFETY: the reader is open and positioned on a vector (this fn's contract).
        if let Err(failure) = unsafe {
            self.keys.compute(&setup.keys, &setup.key_conditions, run.reader, sel, setup.fixed_offset)
        } {
            // Core computes a row's keys, then its aggregates' arguments, row after row:
            // the rows before the failing one are folded first (an argument may fail
            // there first), then the key's error is raised.
            sel.truncate(failure.at);
            if !sel.is_empty() {
                // SAFETY: as above; the keys of the rows before the failing one compute.
                let computed = unsafe {
                    self.keys.compute(&setup.keys, &setup.key_conditions, run.reader, sel, setup.fixed_offset)
                };
                if computed.is_ok() {
                    // SAFETY: as above.
                    unsafe { self.fold_keyed(run, share, sel) };
                }
            }
            raise(failure.error);
        }
        // SAFETY: the reader is open and positioned on a vector (this fn's contract).
        unsafe { self.fold_keyed(run, share, sel) }
    }

    /// `fold_vector` for a vector whose rows all have the keys `keys`: the group is
    /// numbered once (as its first row would number it) and every row folds into it.
    ///
    /// # Safety
    /// As `fold_vector`.
    unsafe fn fold_one_group(
        &mut self,
        run: &mut Run,
        share: Option<&Share>,
        sel: &[u32],
        keys: &[OneKey],
    ) -> Option<usize> {
        let inputs: Vec<KeyInput> = keys.iter().map(OneKey::input).collect();
        if let Some(share) = share {
            let mut row = vec![0];
            retain_partition(&inputs, &mut row, share.passes, share.pass, &run.setup.partition_hash);
            if row.is_empty() {
                return None;
            }
        }
        self.grouper.assign(&inputs, &[0], &mut self.gids);
        let group = self.gids[0];
        run.aggs.resize(self.grouper.len());
        run.counters.vectors_one_group += 1;
        // SAFETY: the reader is open and positioned on the vector `sel` selects from.
        unsafe { fold_rows(run, sel, Gids::Same(group)) };
        Some(self.held(run))
    }

    /// The bytes the fold holds after a vector, kept as the peak if it is one.
    fn held(&self, run: &mut Run) -> usize {
        let used = run.aggs.memory(Some(&self.grouper));
        run.counters.peak_memory = run.counters.peak_memory.max(used);
        used
    }

    /// `fold_vector` once the keys of the selected rows are computed.
    ///
    /// # Safety
    /// As `fold_vector`.
    unsafe fn fold_keyed(
        &mut self,
        run: &mut Run,
        share: Option<&Share>,
        sel: &mut Vec<u32>,
    ) -> Option<usize> {
        let setup = run.setup;
        let inputs = self.keys.inputs(&setup.keys, run.reader);
        if let Some(share) = share {
            retain_partition(&inputs, sel, share.passes, share.pass, &setup.partition_hash);
            if sel.is_empty() {
                return None;
            }
        }
        self.grouper.assign(&inputs, sel, &mut self.gids);
        let groups = self.grouper.len();
        run.aggs.resize(groups);
        if groups <= SORTED_GROUPS && run.aggs.order_free() {
            // Rows ordered by group (stable: each group's in row order), so that
            // aggregates add runs of one group in registers, not row by row in memory.
            sort_by_group(sel, &self.gids, groups, &mut self.sorted);
            let (rows, gids) = self.sorted.split_at(sel.len());
            // SAFETY: the reader is open and positioned on the vector `rows` selects from.
            unsafe { fold_rows(run, rows, Gids::Each(gids)) };
        } else {
            // SAFETY: the reader is open and positioned on the vector `sel` selects from.
            unsafe { fold_rows(run, sel, Gids::Each(&self.gids)) };
        }
        Some(self.held(run))
    }
}

impl GroupingPolicy for HashGrouping {
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step {
        self.rows += sel.len() as u64;
        // SAFETY: the reader is open and positioned on a vector (the trait's contract).
        let Some(used) = (unsafe { self.fold_vector(run, None, sel) }) else {
            return Step::Next;
        };
        if used <= run.setup.memory_limit {
            return Step::Next;
        }
        if run.setup.partial {
            // These groups go now, the fold goes on after them.
            run.counters.flushes += 1;
            return Step::Flush;
        }
        Step::OverLimit { used, rows: self.rows }
    }

    fn grouper(&self) -> Option<&Grouper> {
        Some(&self.grouper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_ordered_by_group_and_stay_in_row_order_within_one() {
        let sel = [1, 4, 5, 7, 8, 9, 12];
        let gids = [2, 0, 2, 1, 0, 2, 1];
        let mut out = Vec::new();
        sort_by_group(&sel, &gids, 3, &mut out);
        assert_eq!(out, [4, 8, 7, 12, 1, 5, 9, 0, 0, 1, 1, 2, 2, 2]);
    }
}
