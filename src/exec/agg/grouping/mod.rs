//! Grouping policies: how a ColumnarAgg's rows become groups, one strategy per shape of
//! query (TimescaleDB's vector_agg grouping policies). Without GROUP BY, one group, its
//! whole vectors answered from zone maps where they can be (`metadata`) or every vector
//! folded (`single`, when an aggregate has a FILTER); with GROUP BY, hash grouping
//! (`hash`), which past work_mem flushes a partial aggregate's groups early or restarts
//! a serial fold in passes over shares of the key hashes (`multi_pass`). The loop over
//! vectors is generic over the policy: one policy call per vector, the kernels' own
//! loops inside it.

mod hash;
mod metadata;
mod multi_pass;
mod single;

use super::aggregates::Aggregates;
use super::groups::{Grouper, KeyValue};
use super::spec::KeySpec;
use crate::storage::format::copy;
use crate::storage::read::reader::Reader;
use hash::HashGrouping;
use metadata::MetadataAnswers;
use multi_pass::{passes_for, MultiPass};
use single::SingleGroup;

/// What a run did, for EXPLAIN ANALYZE.
#[derive(Default, Clone, Copy)]
pub struct FoldCounters {
    pub vectors_folded: u64,
    pub vectors_from_metadata: u64,
    pub rows_folded: u64,
    /// Vectors of a grouped fold whose rows were one group by their zone maps.
    pub vectors_one_group: u64,
    pub peak_memory: usize,
    /// Groups output in total, and early flushes of a partial aggregate.
    pub groups: u64,
    pub flushes: u64,
}

/// What the policies of one scan go by.
pub struct GroupingSetup {
    pub keys: Vec<KeySpec>,
    /// Per key, the CASE conditions of its expression resolved for the scan (in
    /// `Expr::conditions`' order; set when the scan's operands are known).
    pub key_conditions: Vec<Vec<crate::exec::filter::Filter>>,
    /// The planner's estimate of the groups.
    pub estimated_groups: f64,
    /// work_mem × hash_mem_multiplier, in bytes.
    pub memory_limit: usize,
    /// Partial aggregation under a Gather (groups may go out early).
    pub partial: bool,
    /// The session's time zone offset if it has a single one (for date_trunc on
    /// timestamptz without asking PostgreSQL).
    pub fixed_offset: Option<i64>,
    /// Which pass a key belongs to: the same hasher for every pass of a scan.
    pub partition_hash: hashbrown::DefaultHashBuilder,
}

/// What a policy asks for after a vector.
pub enum Step {
    /// Go on with the next vector (from `fold_vectors`: the scan, or this pass, is over).
    Next,
    /// Output the groups folded so far now (a partial aggregate past work_mem); the
    /// fold goes on after them.
    Flush,
    /// Past work_mem in a serial grouped fold, holding `used` bytes after `rows` rows:
    /// start over in passes, each folding the groups of one share of the key hashes.
    OverLimit { used: usize, rows: u64 },
}

/// One run of the fold: what a policy folds vectors with and into.
pub struct Run<'a> {
    pub setup: &'a GroupingSetup,
    pub aggs: &'a mut Aggregates,
    pub reader: &'a mut Reader,
    pub counters: &'a mut FoldCounters,
}

pub trait GroupingPolicy {
    /// Folds the current vector of the run's reader, its selected rows in `sel`.
    ///
    /// # Safety
    /// Backend thread, during the scan: the run's reader is open (relation open, snapshot live) and positioned on a vector by `next_vector`.
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step;

    /// The groups' keys, when there is a GROUP BY.
    fn grouper(&self) -> Option<&Grouper>;
}

/// Folds the reader's vectors with `policy` until the scan is over (`Step::Next`) or
/// the policy stops it.
unsafe fn fold_vectors<P: GroupingPolicy>(policy: &mut P, run: &mut Run) -> Step {
    let mut sel: Vec<u32> = Vec::new();
    // SAFETY: the run's reader is open for the node's scan (the caller's contract,
    // `Policy::fold`'s).
    while unsafe { run.reader.next_vector() } {
        sel.clear();
        // Not Vec's copy: this buffer and the reader's are often 4k aliased (`copy`).
        copy::extend_from_slice(&mut sel, run.reader.selection());
        // SAFETY: `next_vector` just positioned the open reader on a vector.
        match unsafe { policy.add_vector(run, &mut sel) } {
            Step::Next => {}
            stop => return stop,
        }
    }
    Step::Next
}

/// Folds the selected rows of a vector into the groups `gids` gives, and counts them.
unsafe fn fold_rows(run: &mut Run, sel: &[u32], gids: super::kernels::Gids) {
    run.counters.rows_folded += sel.len() as u64;
    run.counters.vectors_folded += 1;
    // SAFETY: the caller (a policy's `add_vector`) runs with the reader open and
    // positioned on the vector `sel` selects from (its contract).
    unsafe { run.aggs.fold(run.reader, sel, gids) };
}

/// The policy a ColumnarAgg folds with; its groups are those of the current batch.
pub enum Policy {
    Metadata(MetadataAnswers),
    Single(SingleGroup),
    Hash(HashGrouping),
    MultiPass(MultiPass),
}

impl Policy {
    /// The policy a scan starts with: by the shape of the query.
    pub fn first(setup: &GroupingSetup, aggs: &Aggregates) -> Policy {
        if !setup.keys.is_empty() {
            Policy::Hash(HashGrouping::empty(setup.keys.len()))
        } else if aggs.filtered() {
            Policy::Single(SingleGroup)
        } else {
            Policy::Metadata(MetadataAnswers)
        }
    }

    /// Folds the next batch of groups into `aggs` (emptied first): the whole scan, or
    /// this pass of it, or (a partial aggregate past work_mem) what fits. Returns whether
    /// the scan (or this pass) is over.
    ///
    /// # Safety
    /// Backend thread, during the node's scan: `reader`'s relation open and its snapshot
    /// live (the reader's buffers are read).
    pub unsafe fn fold(
        &mut self,
        setup: &GroupingSetup,
        aggs: &mut Aggregates,
        reader: &mut Reader,
        counters: &mut FoldCounters,
    ) -> bool {
        self.start_batch(setup);
        aggs.reset(!setup.keys.is_empty());
        let mut run = Run { setup, aggs, reader, counters };
        let over = loop {
            // SAFETY: `reader` is open for the node's scan (this fn's contract).
            let step = unsafe {
                match self {
                    Policy::Metadata(p) => fold_vectors(p, &mut run),
                    Policy::Single(p) => fold_vectors(p, &mut run),
                    Policy::Hash(p) => fold_vectors(p, &mut run),
                    Policy::MultiPass(p) => fold_vectors(p, &mut run),
                }
            };
            match step {
                Step::Next => break true,
                Step::Flush => break false,
                Step::OverLimit { used, rows } => {
                    // As many passes as what this much of the scan made says.
                    let passes = passes_for(used, rows, run.reader.total_rows(), setup.memory_limit);
                    *self = Policy::MultiPass(MultiPass::new(setup, passes));
                    run.reader.restart();
                    run.aggs.reset(true);
                }
            }
        };
        run.counters.peak_memory = run.counters.peak_memory.max(run.aggs.memory(self.grouper()));
        run.counters.groups += self.groups() as u64;
        over
    }

    /// Empty groups for a new batch (a pass keeps its share).
    fn start_batch(&mut self, setup: &GroupingSetup) {
        match self {
            Policy::Metadata(_) | Policy::Single(_) => {}
            Policy::Hash(p) => *p = HashGrouping::new(setup, 1),
            Policy::MultiPass(p) => p.start_pass(setup),
        }
    }

    /// Moves to the next pass, if there is one (the scan then starts over).
    pub fn next_pass(&mut self) -> bool {
        match self {
            Policy::MultiPass(p) => p.next_pass(),
            _ => false,
        }
    }

    /// How many passes the scan makes.
    pub fn passes(&self) -> u64 {
        match self {
            Policy::MultiPass(p) => p.passes(),
            _ => 1,
        }
    }

    fn grouper(&self) -> Option<&Grouper> {
        match self {
            Policy::Metadata(p) => p.grouper(),
            Policy::Single(p) => p.grouper(),
            Policy::Hash(p) => p.grouper(),
            Policy::MultiPass(p) => p.grouper(),
        }
    }

    /// Groups in the current batch.
    pub fn groups(&self) -> usize {
        self.grouper().map_or(1, |g| g.len())
    }

    /// Key column `c` of group `g` (with a GROUP BY).
    pub fn key(&self, g: usize, c: usize) -> &KeyValue {
        self.grouper().expect("a grouped fold").key(g, c)
    }

    /// Frees the groups (at the end of the scan).
    pub fn release(&mut self, setup: &GroupingSetup) {
        match self {
            Policy::Metadata(_) | Policy::Single(_) => {}
            Policy::Hash(p) => *p = HashGrouping::empty(setup.keys.len()),
            Policy::MultiPass(p) => p.release(setup),
        }
    }
}
