//! Which row group a scan reads next: the next in order, or, in a parallel scan, the
//! next from a counter in shared memory that the leader and the workers all draw from.
//!
//! A worker's exit is part of a parallel query's time: the leader's Gather waits for
//! every worker to be gone before the query returns (on the benchmark machine about 3 ms
//! of a 40 ms parallel fold, the kernel unmapping the worker's memory and the postmaster
//! telling the leader, once `worker_exit` skips the C library's exit handlers; 4-5 ms
//! with them). When the leader reads row groups until none
//! is left before it returns anything (a partial aggregate), a worker leaves it the last
//! few: the ones the leader alone reads in about the time the worker takes to exit, so
//! that the exit overlaps the leader's last row groups instead of following them.
//!
//! Pure: no PostgreSQL calls (the exit estimate is given).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the next row group to read comes from.
pub enum GroupClaim {
    /// This scan reads every row group in order.
    Serial { next: usize },
    /// Parallel participants take row groups from a counter in shared memory.
    Shared(*const AtomicU64),
    /// The leader of a node that reads row groups until none is left before it returns
    /// a row: it says so once it claims (`leader_claims`), and its workers may then leave
    /// it the last row groups.
    Leader { next: *const AtomicU64, leader_claims: *const AtomicBool },
    /// A worker of such a node: it stops claiming once the leader claims and what is left
    /// takes about as long to read as the worker takes to exit (`TailLeave`).
    Worker { next: *const AtomicU64, leader_claims: *const AtomicBool, tail: TailLeave },
}

impl GroupClaim {
    /// The index of the next row group to read of `groups`; None when the scan is done.
    ///
    /// The pointers of the shared variants point at atomics in the parallel scan's
    /// shared memory, mapped for the whole scan (see where they are made:
    /// `exec::row_group_claims`, `glue::tableam`).
    pub(super) fn claim(&mut self, groups: usize) -> Option<usize> {
        let index = match self {
            GroupClaim::Serial { next } => {
                *next += 1;
                *next - 1
            }
            // SAFETY: the counter lives in the scan's shared memory for the whole scan
            // (this type's contract, above).
            GroupClaim::Shared(next) => unsafe { (**next).fetch_add(1, Ordering::Relaxed) as usize },
            GroupClaim::Leader { next, leader_claims } => {
                // SAFETY: as for `Shared`.
                unsafe {
                    (**leader_claims).store(true, Ordering::Release);
                    (**next).fetch_add(1, Ordering::Relaxed) as usize
                }
            }
            GroupClaim::Worker { next, leader_claims, tail } => {
                let now = Instant::now();
                // SAFETY: as for `Shared`.
                let (next, leader_claims) = unsafe { (&**next, &**leader_claims) };
                // Read before deciding, claimed only if not left: a row group is never
                // taken by a worker that then leaves it. The leader claims until the
                // counter passes the end, so nothing left is lost.
                let unclaimed = groups.saturating_sub(next.load(Ordering::Relaxed) as usize);
                if leader_claims.load(Ordering::Acquire) && tail.leaves(unclaimed, now) {
                    return None;
                }
                tail.claimed(now);
                next.fetch_add(1, Ordering::Relaxed) as usize
            }
        };
        (index < groups).then_some(index)
    }
}

/// When a worker leaves the rest of the row groups to the leader: it measures how long
/// its row groups take (from its first claim) and leaves the rest once reading it would
/// take no longer than its exit, `exit`, is expected to.
#[derive(Debug, Clone)]
pub struct TailLeave {
    exit: Duration,
    first_claim: Option<Instant>,
    claims: u32,
}

impl TailLeave {
    /// A worker whose exit is expected to take `exit`. What the worker knows that comes
    /// closest is its own start, from its fork to its first claim: both are the costs of
    /// a process (on the benchmark machine 2-4 ms each).
    pub fn new(exit: Duration) -> TailLeave {
        TailLeave { exit, first_claim: None, claims: 0 }
    }

    fn claimed(&mut self, now: Instant) {
        self.first_claim.get_or_insert(now);
        self.claims += 1;
    }

    fn leaves(&self, unclaimed: usize, now: Instant) -> bool {
        let Some(first) = self.first_claim else { return false };
        leaves_tail(unclaimed, self.claims, now.saturating_duration_since(first), self.exit)
    }
}

/// Whether a worker that took `busy` for the `claims` row groups it read leaves the
/// `unclaimed` ones to the leader: reading them at its pace would take no longer than
/// `exit`. A worker that read none yet has no pace and claims.
pub fn leaves_tail(unclaimed: usize, claims: u32, busy: Duration, exit: Duration) -> bool {
    if claims == 0 {
        return false;
    }
    busy.as_secs_f64() / claims as f64 * unclaimed as f64 <= exit.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_worker_without_a_pace_claims() {
        assert!(!leaves_tail(1, 0, Duration::ZERO, Duration::from_secs(1)));
    }

    #[test]
    fn a_worker_leaves_what_the_leader_reads_while_it_exits() {
        let ms = Duration::from_millis;
        // 1 ms a row group, an exit of 3 ms: three left are the leader's, four are not.
        assert!(leaves_tail(3, 10, ms(10), ms(3)));
        assert!(!leaves_tail(4, 10, ms(10), ms(3)));
        assert!(leaves_tail(0, 1, ms(1), Duration::ZERO), "nothing left is always left");
        assert!(!leaves_tail(1, 1, ms(1), Duration::ZERO));
    }

    #[test]
    fn serial_and_shared_claims_end_at_the_last_group() {
        let mut serial = GroupClaim::Serial { next: 0 };
        assert_eq!((0..4).map(|_| serial.claim(3)).collect::<Vec<_>>(), [Some(0), Some(1), Some(2), None]);
        let counter = AtomicU64::new(0);
        let mut shared = GroupClaim::Shared(&counter);
        assert_eq!((0..3).map(|_| shared.claim(2)).collect::<Vec<_>>(), [Some(0), Some(1), None]);
    }

    #[test]
    fn a_worker_claims_all_while_the_leader_does_not() {
        let (next, leader_claims) = (AtomicU64::new(0), AtomicBool::new(false));
        let mut worker = GroupClaim::Worker {
            next: &next,
            leader_claims: &leader_claims,
            tail: TailLeave::new(Duration::MAX),
        };
        let got: Vec<_> = std::iter::from_fn(|| worker.claim(5)).collect();
        assert_eq!(
            got,
            [0, 1, 2, 3, 4],
            "an exit that never ends leaves nothing to a leader that does not read"
        );
    }

    /// A leader and workers with every possible exit estimate, on threads: each row group
    /// is read exactly once, and a worker that expects a long exit leaves the leader the
    /// rest after its first row group.
    #[test]
    fn every_group_is_read_once_whatever_the_workers_leave() {
        for exit in [Duration::ZERO, Duration::from_micros(50), Duration::MAX] {
            let groups = 200;
            let next = Arc::new(AtomicU64::new(0));
            let leader_claims = Arc::new(AtomicBool::new(false));
            let read = |mut claim: GroupClaim| {
                let mut mine = Vec::new();
                while let Some(g) = claim.claim(groups) {
                    std::thread::sleep(Duration::from_micros(20));
                    mine.push(g);
                }
                mine
            };
            let (mut all, by_worker) = std::thread::scope(|s| {
                let workers: Vec<_> = (0..2)
                    .map(|_| {
                        let claim = GroupClaim::Worker {
                            next: &*next,
                            leader_claims: &*leader_claims,
                            tail: TailLeave::new(exit),
                        };
                        // The pointers are to atomics this scope outlives.
                        let claim = SendClaim(claim);
                        s.spawn(move || {
                            let claim = claim;
                            read(claim.0)
                        })
                    })
                    .collect();
                let mut all = read(GroupClaim::Leader { next: &*next, leader_claims: &*leader_claims });
                let by_worker: Vec<Vec<usize>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
                by_worker.iter().for_each(|w| all.extend(w));
                (all, by_worker)
            });
            all.sort_unstable();
            assert_eq!(all, (0..groups).collect::<Vec<_>>(), "exit {exit:?}");
            if exit == Duration::MAX {
                // A worker stops once it has a pace and the leader claims; it may start
                // before the leader, so it reads at least one row group.
                assert!(by_worker.iter().all(|w| w.len() < groups / 2), "{by_worker:?}");
            }
        }
    }

    struct SendClaim(GroupClaim);
    // SAFETY: the test's claims point at atomics that outlive the threads.
    unsafe impl Send for SendClaim {}
}
