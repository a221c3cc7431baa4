//! How a parallel-aware node over a columnar relation shares its rows out: the leader
//! and the workers take row groups from a counter in shared memory, each reading (and
//! for ColumnarAgg folding) the ones it claims. A node that reads through a `Reader`
//! implements `ClaimsRowGroups` and gets its `ParallelScanNode` methods from here.
//!
//! Beside the counter, the shared memory holds the EXPLAIN ANALYZE counts of every
//! participant (`Tally`): each adds its own when its part of the plan shuts down, the
//! workers before their tuple queues close (so before the leader's Gather ends), and the
//! leader, shutting down last, keeps the totals. EXPLAIN then shows the whole scan's
//! counts, as core's nodes show the rows of every participant.

use super::customscan::{CustomScanNode, ParallelScanNode};
use crate::storage::read::group_claim::TailLeave;
use crate::storage::read::handed_groups;
use crate::storage::read::reader::{GroupClaim, ReadCounters, Reader};
use crate::storage::relation::recent_buffers;
use crate::storage::shared::worker_exit;
use pgrx::pg_sys;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// A node's EXPLAIN ANALYZE counts: sums (their order is the node's), and one maximum
/// (peak memory).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub sums: [u64; TALLY_SUMS],
    pub max: u64,
}

pub const TALLY_SUMS: usize = 20;

/// The sums `read_tally` fills (a reader's counts); a node's own counts follow them.
pub const READ_SUMS: usize = 11;

/// The shared memory of a parallel columnar scan.
#[repr(C)]
struct Shared {
    next_group: AtomicU64,
    /// Set once the leader claims a row group, for nodes whose leader reads until none is
    /// left (`ClaimsRowGroups::leader_reads_to_the_end`).
    leader_claims: AtomicBool,
    sums: [AtomicU64; TALLY_SUMS],
    max: AtomicU64,
    /// How many buffers follow: the leader's of the relation's blocks, lent to the
    /// workers (`recent_buffers`).
    lent: u64,
    /// Where, after the room for the buffers, and how many bytes long the row groups are
    /// that the leader hands the workers (`handed_groups`); none, and each worker reads
    /// them itself.
    handed_at: u64,
    handed: u64,
}

/// A participant's link to the shared counts.
#[derive(Debug, Default)]
pub struct SharedTally {
    shared: Option<*const Shared>,
    published: bool,
    /// Every participant's, in the leader after its shutdown.
    totals: Option<Tally>,
    /// In the leader, the buffers `estimate_dsm` made room for after the Shared.
    lend_room: usize,
    /// In the leader, the handed row groups' bytes `estimate_dsm` made room for after
    /// the buffers, and whether they hold the chunks (`Reader::handed_plan`).
    hand: Option<(usize, bool)>,
}

impl SharedTally {
    /// The counts EXPLAIN shows: every participant's once the leader has them, else `own`.
    pub fn shown(&self, own: Tally) -> Tally {
        self.totals.unwrap_or(own)
    }
}

pub trait ClaimsRowGroups {
    /// The node's reader, once `begin` made it.
    fn reader_mut(&mut self) -> Option<&mut Reader>;
    /// The node's own EXPLAIN ANALYZE counts.
    fn tally(&self) -> Tally;
    fn shared_tally(&mut self) -> &mut SharedTally;
    /// Whether the node's leader, in a parallel plan, reads row groups until none is left
    /// before it returns rows (a partial aggregate): its workers may then leave it the
    /// last few (`group_claim`). Not for a node whose rows stream to the Gather as it
    /// reads: its leader also passes the workers' rows on. Either way the leader's Gather
    /// runs its part of the plan until it returns no row, so what a worker leaves is read.
    fn leader_reads_to_the_end(&self) -> bool {
        false
    }
}

/// A reader's counts as the first `READ_SUMS` sums of a tally (the rest are the node's).
pub fn read_tally(c: &ReadCounters) -> Tally {
    let mut t = Tally::default();
    t.sums[..READ_SUMS].copy_from_slice(&[
        c.groups_read,
        c.groups_skipped,
        c.vectors_skipped,
        c.vectors_read,
        c.vectors_passed,
        c.rows_filtered,
        c.bytes_read,
        c.blocks_read_ahead,
        c.lists_read,
        c.lists_handed,
        c.groups_attached,
    ]);
    t
}

/// The reader's counts of a tally `read_tally` began.
pub fn read_counters(t: &Tally) -> ReadCounters {
    let s = &t.sums;
    ReadCounters {
        groups_read: s[0],
        groups_skipped: s[1],
        vectors_skipped: s[2],
        vectors_read: s[3],
        vectors_passed: s[4],
        rows_filtered: s[5],
        bytes_read: s[6],
        blocks_read_ahead: s[7],
        lists_read: s[8],
        lists_handed: s[9],
        groups_attached: s[10],
    }
}

/// At a participant's shutdown (ShutdownCustomScan, before the shared memory goes):
/// adds its counts to the shared ones, once; the leader then keeps every participant's.
///
/// # Safety
/// Backend thread; the node's shared memory, if it attached to one, is still mapped.
pub unsafe fn publish_tally<N: ClaimsRowGroups>(node: &mut N) {
    let own = node.tally();
    let link = node.shared_tally();
    let Some(shared) = link.shared else { return };
    recent_buffers::end_lending();
    // SAFETY: `shared` is the Shared that `initialize_dsm` wrote, still mapped (this fn's
    // contract); its fields are atomics, shared with the other participants.
    unsafe {
        if !link.published {
            link.published = true;
            for (sum, v) in (*shared).sums.iter().zip(own.sums) {
                sum.fetch_add(v, Ordering::Relaxed);
            }
            (*shared).max.fetch_max(own.max, Ordering::Relaxed);
        }
        if pg_sys::ParallelWorkerNumber < 0 {
            let mut totals = Tally { max: (*shared).max.load(Ordering::Relaxed), ..Tally::default() };
            for (t, sum) in totals.sums.iter_mut().zip(&(*shared).sums) {
                *t = sum.load(Ordering::Relaxed);
            }
            link.totals = Some(totals);
        }
    }
}

/// EXPLAIN ANALYZE of a parallel-aware node: where its participants' row groups came
/// from (the leader's list read, each worker's handed to it or read) and how many row
/// groups' chunk metadata they read from the metadata tables, all of them summed.
///
/// # Safety
/// Backend thread, in the node's ExplainCustomScan: `node` is begun and `es` live.
pub unsafe fn explain_metadata(
    node: *mut pg_sys::CustomScanState,
    c: &ReadCounters,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: `node` is begun, so its plan is set (this fn's contract); the labels are
    // static NUL-terminated strings and `es` the live ExplainState.
    unsafe {
        if !(*(*node).ss.ps.plan).parallel_aware {
            return;
        }
        let int = |label: &std::ffi::CStr, v: u64| {
            pg_sys::ExplainPropertyInteger(label.as_ptr(), std::ptr::null(), v as i64, es)
        };
        int(c"Row Group Lists Read", c.lists_read);
        int(c"Row Group Lists Handed to Workers", c.lists_handed);
        int(c"Row Groups Whose Chunk Metadata Was Read", c.groups_attached);
    }
}

/// The most a parallel query's shared memory holds once the leaders' row groups are in
/// it (`handed_groups`): those of a Parallel Append's partitions are handed while they
/// fit, the other partitions' workers read their own.
const SEGMENT_BYTES: usize = handed_groups::MAX_BYTES + (1 << 20);

/// Where the lent buffers begin: after the Shared (whose size is a multiple of 8).
fn lent_buffers(coordinate: *mut std::ffi::c_void) -> *mut pg_sys::Buffer {
    coordinate.cast::<u8>().wrapping_add(std::mem::size_of::<Shared>()).cast()
}

/// Where the handed row groups begin in the scan's shared memory: after the Shared and
/// room for `room` lent buffers.
fn handed_offset(room: usize) -> usize {
    std::mem::size_of::<Shared>() + room * std::mem::size_of::<pg_sys::Buffer>()
}

/// How long a worker that took `start` from its fork to its first row group is expected
/// to take from its last row group to being gone: what it knows that comes closest is its
/// start, which costs a process about as much. Its exit through the C library's handlers
/// took about as long on the benchmark machine (3 ms of 3.2-3.7); ended early
/// (`worker_exit`), 2.9 ms against starts of 4.1-5 ms in the same timelines (2026-12-07),
/// so 0.6 of its start.
fn expected_exit(start: Duration) -> Duration {
    if worker_exit::armed() {
        start.mul_f64(0.6)
    } else {
        start
    }
}

/// How long this process took from its fork to now: a worker's start. Zero if the clock
/// went back.
fn time_since_start() -> Duration {
    // SAFETY: MyStartTimestamp is set when the process starts; GetCurrentTimestamp reads
    // the clock. Both on the backend thread.
    let micros = unsafe { pg_sys::GetCurrentTimestamp() - pg_sys::MyStartTimestamp };
    Duration::from_micros(micros.max(0) as u64)
}

impl<N: CustomScanNode + ClaimsRowGroups> ParallelScanNode for N {
    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        // SAFETY: `node` is this node's begun state (the trait's contract): its relation
        // is open.
        let room = unsafe { recent_buffers::remembered((*node).ss.ss_currentRelation) };
        // What the segment holds so far: the plan, the tuple queues, and the nodes
        // estimated before this one (a Parallel Append's other partitions' row groups).
        // SAFETY: `pcxt` is the live ParallelContext being estimated (the trait's contract).
        let estimated = unsafe { (*pcxt).estimator.space_for_chunks };
        let hand = self.reader_mut().and_then(|r| r.handed_plan(SEGMENT_BYTES.saturating_sub(estimated)));
        let link = self.shared_tally();
        link.lend_room = room;
        link.hand = hand;
        handed_offset(room) + hand.map_or(0, |(bytes, _)| bytes)
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `coordinate` is the shared chunk of `estimate_dsm`'s size (a Shared),
        // MAXALIGNed by shm_toc_allocate, and `pcxt` the live ParallelContext (the trait's
        // contract); the leader attaches to the counter like a worker.
        unsafe {
            let SharedTally { lend_room: room, hand, .. } = *self.shared_tally();
            let lent = std::slice::from_raw_parts_mut(lent_buffers(coordinate), room);
            let lent = recent_buffers::copy_remembered((*node).ss.ss_currentRelation, lent);
            let handed = match (hand, self.reader_mut()) {
                (Some((bytes, with_chunks)), Some(reader)) => {
                    let into = std::slice::from_raw_parts_mut(
                        coordinate.cast::<u8>().add(handed_offset(room)),
                        bytes,
                    );
                    reader.hand_over(into, with_chunks);
                    bytes
                }
                _ => 0,
            };
            (coordinate as *mut Shared).write(Shared {
                next_group: AtomicU64::new(0),
                leader_claims: AtomicBool::new(false),
                sums: std::array::from_fn(|_| AtomicU64::new(0)),
                max: AtomicU64::new(0),
                lent: lent as u64,
                handed_at: handed_offset(room) as u64,
                handed: handed as u64,
            });
            self.initialize_worker(node, (*pcxt).toc, coordinate);
        }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `coordinate` holds the Shared `initialize_dsm` wrote (the trait's
        // contract); the workers are not running during a reinitialize. The counts go on
        // adding up over the rescans, as each participant's own do.
        unsafe {
            let shared = &*(coordinate as *const Shared);
            shared.next_group.store(0, Ordering::Relaxed);
            shared.leader_claims.store(false, Ordering::Relaxed);
        }
    }

    unsafe fn initialize_worker(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _toc: *mut pg_sys::shm_toc,
        coordinate: *mut std::ffi::c_void,
    ) {
        let shared = coordinate as *const Shared;
        // SAFETY: `coordinate` is the Shared `initialize_dsm` wrote (the trait's contract),
        // mapped for the rest of the scan.
        let (next, leader_claims) =
            unsafe { (&raw const (*shared).next_group, &raw const (*shared).leader_claims) };
        // SAFETY: ParallelWorkerNumber is this process's, read on the backend thread.
        let leader = unsafe { pg_sys::ParallelWorkerNumber } < 0;
        if !leader {
            // SAFETY: the leader's buffers follow the Shared in the scan's shared memory,
            // mapped until this worker's shutdown, which ends the lending
            // (`publish_tally`); `node`'s relation is open.
            unsafe {
                let rel = (*node).ss.ss_currentRelation;
                recent_buffers::lend(rel, lent_buffers(coordinate), (*shared).lent as usize);
            }
            // SAFETY: the leader wrote `handed` bytes at `handed_at` (or none), in the
            // shared memory mapped, unchanged, until this worker's executor ends, after
            // the node's end released its reader's row groups; the reader's snapshot is
            // the leader's, restored in this worker, and `node`'s relation is open.
            unsafe {
                let handed = (*shared).handed as usize;
                let at = coordinate.cast::<u8>().add((*shared).handed_at as usize);
                let image = (handed > 0).then(|| std::slice::from_raw_parts(at, handed));
                if let Some(reader) = self.reader_mut() {
                    reader.take_handed(image);
                }
            }
        }
        let claim = if !self.leader_reads_to_the_end() {
            GroupClaim::Shared(next)
        } else if leader {
            GroupClaim::Leader { next, leader_claims }
        } else {
            GroupClaim::Worker {
                next,
                leader_claims,
                tail: TailLeave::new(expected_exit(time_since_start())),
            }
        };
        if let Some(reader) = self.reader_mut() {
            reader.set_claim(claim);
        }
        *self.shared_tally() = SharedTally { shared: Some(shared), ..SharedTally::default() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_counters_round_trip_through_a_tally() {
        let c = ReadCounters {
            groups_read: 1,
            groups_skipped: 2,
            vectors_skipped: 3,
            vectors_read: 4,
            vectors_passed: 5,
            rows_filtered: 6,
            bytes_read: 7,
            blocks_read_ahead: 8,
            lists_read: 9,
            lists_handed: 10,
            groups_attached: 11,
        };
        let t = read_tally(&c);
        assert_eq!(t.sums[..READ_SUMS], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert!(t.sums[READ_SUMS..].iter().all(|&v| v == 0), "the node's own sums come after");
        let back = read_counters(&t);
        assert_eq!(read_tally(&back), t);
    }

    #[test]
    fn a_tally_not_shared_shows_its_own() {
        let own = Tally { sums: [9; TALLY_SUMS], max: 3 };
        assert_eq!(SharedTally::default().shown(own), own);
    }
}
