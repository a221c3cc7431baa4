//! Reuse of stream space. Row groups are written at the end of the relation's byte
//! stream; VACUUM frees the row groups with no live row left and those it merges into
//! new ones, and records their byte ranges in `pgcolumnar.free_extent` (neighbours
//! joined). A writer takes such an extent once the VACUUM that freed it is older than
//! every snapshot (none can still read the old row group there): it deletes the row, so
//! no other writer gets it, and keeps what its row group does not fill as a claim of its
//! own (in memory) for its next row groups. At commit, what is left of its claims goes
//! back to `free_extent`; if it rolls back, so does the delete, and the whole extent is
//! free again (what was written into it belongs to nothing).
//!
//! An install of the extension from before `free_extent` existed keeps working without
//! reusing space.
//!
//! Only row groups of at least `MIN_REUSE_BYTES` look for free space: a one-row
//! UPDATE's row group would cost more catalog work than the bytes are worth. Free
//! ranges smaller than that (after joining neighbours) are not recorded.
//!
//! Small row groups (trickle inserts: one a transaction) are packed into stream space
//! each backend keeps for itself across transactions, its tail (`TailClaims`): appended
//! one after another at the stream's end, every writer's group went into the same last
//! page, whose exclusive lock and generic WAL record made concurrent single-row
//! transactions queue behind each other, and each took the metapage's lock once more to
//! reserve its bytes. A backend's tail grows by doubling from the first group's size up
//! to `TAIL_MAX_BYTES` and always ends at a page boundary, so two backends' tails never
//! share a page. Space is left unused when a group does not fit in what remains of a
//! tail (less than `TAIL_GROUP_BYTES` each time, an eighth of a full tail at most) and
//! when a backend ends (its last tail, no larger than twice what the
//! backend wrote into the table before it).

use crate::storage::catalog;
use crate::storage::relation::pages;
use crate::storage::shared::transaction_state;
use pgrx::pg_sys;
use std::cell::RefCell;

/// Row groups smaller than this (one page) are appended.
const MIN_REUSE_BYTES: u64 = 8192;

/// Free space this transaction took and has not used up.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Claim {
    storage_id: u64,
    offset: u64,
    length: u64,
    /// The subtransaction that took it: if that one rolls back, the take is undone.
    subxact: pg_sys::SubTransactionId,
}

thread_local! {
    static CLAIMS: RefCell<Vec<Claim>> = const { RefCell::new(Vec::new()) };
    static TAILS: RefCell<TailClaims> = const { RefCell::new(TailClaims { tails: Vec::new() }) };
}

/// Row groups of at most this many bytes go into the backend's tail.
const TAIL_GROUP_BYTES: u64 = 4096;
/// A tail is taken at most this large.
const TAIL_MAX_BYTES: u64 = 32 << 10;
/// Tails kept (of as many relations); the oldest goes first.
const MAX_TAILS: usize = 16;

/// Which relation a tail belongs to: its storage id and its file (relfilenode and
/// tablespace): storage ids restart when the extension is dropped and created again, and
/// a file's node is not reused while this backend could still remember it.
type TailKey = (u64, u32, u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tail {
    key: TailKey,
    /// Stream offset of the first unused byte and how many follow, up to a page end.
    offset: u64,
    length: u64,
    /// How many bytes the next tail of the relation is taken with.
    next_take: u64,
}

/// This backend's tails: stream space reserved on a metapage, kept across transactions.
/// A reservation is never undone (the metapage is not transactional), so a tail stays
/// the backend's until the relation's storage goes.
#[derive(Debug, Default)]
struct TailClaims {
    tails: Vec<Tail>,
}

/// What `TailClaims::place` needs done for a row group.
#[derive(Debug, PartialEq, Eq)]
enum Placement {
    /// Written at this offset of the tail.
    At(u64),
    /// Reserve exactly the group's bytes (the relation's first small group here).
    Exact,
    /// Reserve at least this many bytes, up to a page end, as a new tail.
    NewTail(u64),
}

impl TailClaims {
    fn place(&mut self, key: TailKey, length: u64) -> Placement {
        match self.tails.iter_mut().find(|t| t.key == key) {
            None => Placement::Exact,
            Some(t) if t.length >= length => {
                let at = t.offset;
                t.offset += length;
                t.length -= length;
                Placement::At(at)
            }
            Some(t) => Placement::NewTail(t.next_take.max(length)),
        }
    }

    /// After an exact reservation of `length` bytes: the relation's next tail is taken
    /// at twice that.
    fn placed_exact(&mut self, key: TailKey, length: u64) {
        self.remember(Tail { key, offset: 0, length: 0, next_take: (length * 2).min(TAIL_MAX_BYTES) });
    }

    /// A new tail `offset .. offset + got` was reserved for a group of `length` bytes,
    /// which takes its front.
    fn took_tail(&mut self, key: TailKey, offset: u64, got: u64, length: u64) {
        let next_take = self.tails.iter().find(|t| t.key == key).map_or(got, |t| t.next_take);
        let tail = Tail {
            key,
            offset: offset + length,
            length: got - length,
            next_take: (next_take * 2).min(TAIL_MAX_BYTES),
        };
        self.remember(tail);
    }

    fn remember(&mut self, tail: Tail) {
        self.tails.retain(|t| t.key != tail.key);
        if self.tails.len() == MAX_TAILS {
            self.tails.remove(0);
        }
        self.tails.push(tail);
    }

    fn forget(&mut self, storage_id: u64) {
        self.tails.retain(|t| t.key.0 != storage_id);
    }
}

/// Takes `length` bytes from the first claim of `storage_id` that holds them.
fn take_from_claims(claims: &mut Vec<Claim>, storage_id: u64, length: u64) -> Option<u64> {
    let c = claims.iter_mut().find(|c| c.storage_id == storage_id && c.length >= length)?;
    let offset = c.offset;
    c.offset += length;
    c.length -= length;
    claims.retain(|c| c.length > 0);
    Some(offset)
}

/// (start, length) ranges (of bytes or of rows) sorted, empty ones dropped, and those
/// that overlap or touch joined: disjoint ranges covering the same.
pub fn coalesce(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.retain(|r| r.1 > 0);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (start, len) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.0 + last.1 => last.1 = last.1.max(start + len - last.0),
            _ => out.push((start, len)),
        }
    }
    out
}

/// Stream space for `length` bytes of a new row group of `rel`: from this
/// transaction's claims, a settled free extent, or the end of the stream.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn allocate(rel: pg_sys::Relation, storage_id: u64, length: u64) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the transaction
    // horizon and the free-extent metadata may be read and written.
    unsafe {
        if length >= MIN_REUSE_BYTES && catalog::has_free_extents() {
            if let Some(offset) = CLAIMS.with(|c| take_from_claims(&mut c.borrow_mut(), storage_id, length)) {
                return offset;
            }
            let horizon = pg_sys::GetOldestNonRemovableTransactionId(rel);
            if let Some((offset, extent, freed_by)) = catalog::take_free_extent(storage_id, length, horizon) {
                pages::log_space_reuse(rel, freed_by);
                if extent > length {
                    let rest = Claim {
                        storage_id,
                        offset: offset + length,
                        length: extent - length,
                        subxact: transaction_state::current_subxact(),
                    };
                    CLAIMS.with(|c| c.borrow_mut().push(rest));
                }
                return offset;
            }
        }
        if length > TAIL_GROUP_BYTES {
            return pages::reserve_stream(rel, length);
        }
        let node = (*rel).rd_node;
        let key = (storage_id, node.relNode.into(), node.spcNode.into());
        match TAILS.with(|t| t.borrow_mut().place(key, length)) {
            Placement::At(offset) => offset,
            Placement::Exact => {
                let offset = pages::reserve_stream(rel, length);
                TAILS.with(|t| t.borrow_mut().placed_exact(key, length));
                offset
            }
            Placement::NewTail(take) => {
                let (offset, got) = pages::reserve_stream_to_page_end(rel, take);
                TAILS.with(|t| t.borrow_mut().took_tail(key, offset, got, length));
                offset
            }
        }
    }
}

/// Records ranges VACUUM freed (joined where they touch).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn free(storage_id: u64, ranges: Vec<(u64, u64)>) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the transaction horizon and the free-extent metadata may be read and written.
    unsafe {
        if !catalog::has_free_extents() {
            return;
        }
        for (offset, length) in coalesce(ranges).into_iter().filter(|r| r.1 >= MIN_REUSE_BYTES) {
            catalog::insert_free_extent(storage_id, offset, length);
        }
    }
}

/// Before commit: what is left of the claims is free space again (for others once this
/// transaction is older than every snapshot).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn return_claims() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the transaction horizon and the free-extent metadata may be read and written.
    unsafe {
        let claims = CLAIMS.with(|c| std::mem::take(&mut *c.borrow_mut()));
        // A leftover smaller than any row group that looks for space is left unused.
        for c in coalesce_claims(claims).into_iter().filter(|c| c.2 >= MIN_REUSE_BYTES) {
            catalog::insert_free_extent(c.0, c.1, c.2);
        }
    }
}

/// Claims as (storage id, offset, length), joined where they touch.
fn coalesce_claims(claims: Vec<Claim>) -> Vec<(u64, u64, u64)> {
    let mut ids: Vec<u64> = claims.iter().map(|c| c.storage_id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .flat_map(|id| {
            let ranges = claims.iter().filter(|c| c.storage_id == id).map(|c| (c.offset, c.length)).collect();
            coalesce(ranges).into_iter().map(move |(o, l)| (id, o, l))
        })
        .collect()
}

/// The transaction ended without committing (or committed: nothing is left then).
pub fn forget_claims() {
    CLAIMS.with(|c| c.borrow_mut().clear());
}

/// Subtransaction `subxact` rolled back: the extents it (or a subtransaction of it,
/// numbered after it) took are free in the catalog again.
pub fn forget_subxact(subxact: pg_sys::SubTransactionId) {
    CLAIMS.with(|c| c.borrow_mut().retain(|claim| claim.subxact < subxact));
}

/// The storage went away (DROP, TRUNCATE, rewrite) or starts over (a truncate in the
/// transaction that made it): its claims and tail with it.
pub fn forget_storage(storage_id: u64) {
    CLAIMS.with(|c| c.borrow_mut().retain(|claim| claim.storage_id != storage_id));
    TAILS.with(|t| t.borrow_mut().forget(storage_id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_groups_fill_a_tail_that_doubles_up_to_its_bound() {
        let mut tails = TailClaims::default();
        let a = (7, 100, 0);
        // The first small group of a relation reserves exactly its bytes.
        assert_eq!(tails.place(a, 100), Placement::Exact);
        tails.placed_exact(a, 100);
        // The next takes a tail of at least twice that.
        assert_eq!(tails.place(a, 150), Placement::NewTail(200));
        tails.took_tail(a, 1000, 300, 150);
        assert_eq!(tails.place(a, 100), Placement::At(1150));
        assert_eq!(tails.place(a, 50), Placement::At(1250));
        // Full: a larger tail, never beyond the bound, never smaller than the group.
        assert_eq!(tails.place(a, 10), Placement::NewTail(400));
        for _ in 0..10 {
            let Placement::NewTail(take) = tails.place(a, 4000) else { panic!("expected a new tail") };
            assert!((4000..=TAIL_MAX_BYTES).contains(&take));
            tails.took_tail(a, 0, take, take);
        }
        assert_eq!(tails.place(a, 4000), Placement::NewTail(TAIL_MAX_BYTES));
        // Another relation, or the same storage id in another file, has its own.
        assert_eq!(tails.place((8, 100, 0), 10), Placement::Exact);
        assert_eq!(tails.place((7, 101, 0), 10), Placement::Exact);
        tails.forget(7);
        assert_eq!(tails.place(a, 10), Placement::Exact);
    }

    #[test]
    fn tails_are_bounded_oldest_out() {
        let mut tails = TailClaims::default();
        for id in 0..(MAX_TAILS as u64 + 3) {
            tails.placed_exact((id, 1, 0), 10);
        }
        assert_eq!(tails.tails.len(), MAX_TAILS);
        assert_eq!(tails.place((0, 1, 0), 10), Placement::Exact);
        assert!(matches!(tails.place((MAX_TAILS as u64 + 2, 1, 0), 10), Placement::NewTail(20)));
    }

    #[test]
    fn touching_ranges_join_and_claims_are_used_front_first() {
        assert_eq!(
            coalesce(vec![(100, 50), (0, 100), (200, 10), (150, 0), (210, 5)]),
            vec![(0, 150), (200, 15)]
        );
        let sub = pg_sys::SubTransactionId::from(1u32);
        let mut claims = vec![Claim { storage_id: 7, offset: 1000, length: 300, subxact: sub }];
        assert_eq!(take_from_claims(&mut claims, 8, 10), None);
        assert_eq!(take_from_claims(&mut claims, 7, 400), None);
        assert_eq!(take_from_claims(&mut claims, 7, 100), Some(1000));
        assert_eq!(take_from_claims(&mut claims, 7, 200), Some(1100));
        assert!(claims.is_empty());
        let claims = vec![
            Claim { storage_id: 2, offset: 50, length: 50, subxact: sub },
            Claim { storage_id: 1, offset: 0, length: 10, subxact: sub },
            Claim { storage_id: 2, offset: 0, length: 50, subxact: sub },
        ];
        assert_eq!(coalesce_claims(claims), vec![(1, 0, 10), (2, 0, 100)]);
    }
}
