//! Row-number reservations in shared memory: which transaction took a window of a
//! table's row numbers, while its rows may still be in its memory. A uniqueness check
//! that meets such a row waits for that transaction; VACUUM keeps the index entries in
//! a running writer's windows. Recording a window as a `row_reservation` row cost every
//! writing transaction a catalog insert and index entry (and VACUUM their deletes); a
//! slot here costs a few stores under an LWLock.
//!
//! Each backend has `SLOTS_PER_BACKEND` slots, indexed by its `PGPROC` number, written
//! only by itself, and emptied when its transaction ends: its rows are in row groups
//! (committed) or gone (rolled back). Left full (a backend that died), a slot whose
//! transaction is not the current one is reused all the same; emptying them at the end
//! keeps an ended transaction's window from hiding another's of the same storage id once
//! ids start over (the extension dropped and created again).
//! A transaction that takes more windows than its slots, a backend numbered beyond the
//! array, or a library not loaded through `shared_preload_libraries` (no shared memory)
//! records the window as a `row_reservation` row instead, and readers look at both.
//!
//! Slots are written under the table's reservations lock in share mode, as the catalog
//! rows are (see `catalog::with_reservations_lock`), so VACUUM, which reads both under it
//! in exclusive mode, never sees a writer between taking numbers and recording them.

use pgrx::lwlock::PgLwLock;
use pgrx::pg_sys;
use pgrx::shmem::{PGRXSharedMemory, PgSharedMemoryInitialization};
use std::sync::atomic::{AtomicBool, Ordering};

/// Slots each backend has: windows one transaction may hold at once (one per table it
/// writes, and per subtransaction that writes the same table).
pub const SLOTS_PER_BACKEND: usize = 4;
/// Slots in all: backends numbered up to `SLOTS / SLOTS_PER_BACKEND` have their own.
pub const SLOTS: usize = 2048;

/// One reservation window: rows `first_row .. end_row` of storage `storage_id` in
/// database `database`, taken by transaction `xid` (0: an empty slot).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Slot {
    pub database: u32,
    pub xid: u32,
    pub storage_id: u64,
    pub first_row: u64,
    pub end_row: u64,
}

#[derive(Clone, Copy)]
#[repr(C)]
pub struct ReservationSlots {
    slots: [Slot; SLOTS],
}

impl Default for ReservationSlots {
    fn default() -> Self {
        ReservationSlots { slots: [Slot::default(); SLOTS] }
    }
}

// SAFETY: plain old data (integers only), valid at any bit pattern PostgreSQL's zeroed
// or our written shared memory holds, with no pointers into one process's memory.
unsafe impl PGRXSharedMemory for ReservationSlots {}

/// The slots of the backend numbered `procno`, if it has any.
pub fn own_range(procno: usize) -> Option<std::ops::Range<usize>> {
    let start = procno.checked_mul(SLOTS_PER_BACKEND)?;
    (start + SLOTS_PER_BACKEND <= SLOTS).then_some(start..start + SLOTS_PER_BACKEND)
}

/// Of a backend's own slots, the first it may write: empty, or left by a transaction
/// that is no longer its current one (`current` says whether an xid is).
pub fn free_slot(own: &[Slot], current: impl Fn(u32) -> bool) -> Option<usize> {
    own.iter().position(|s| s.xid == 0 || !current(s.xid))
}

/// The window of `storage_id` in `database` that starts last at or before `row` (the
/// only one that can hold it: see `catalog::reserver_running`).
pub fn last_starting_at_or_before(slots: &[Slot], database: u32, storage_id: u64, row: u64) -> Option<Slot> {
    of_storage(slots, database, storage_id)
        .filter(|s| s.first_row <= row)
        .max_by_key(|s| s.first_row)
        .copied()
}

/// The filled slots that hold windows of `storage_id` in `database`.
fn of_storage(slots: &[Slot], database: u32, storage_id: u64) -> impl Iterator<Item = &Slot> {
    slots.iter().filter(move |s| s.xid != 0 && s.database == database && s.storage_id == storage_id)
}

// SAFETY: the name is ours alone (prefixed).
static SHARED: PgLwLock<ReservationSlots> = unsafe { PgLwLock::new(c"pgcolumnar_reservation_slots") };
static IN_SHARED_MEMORY: AtomicBool = AtomicBool::new(false);
/// Whether this backend's current transaction filled a slot (so its end empties them).
static FILLED: AtomicBool = AtomicBool::new(false);
/// Notes that the slots are in shared memory (`shared_memory::init`, while preloading;
/// backends inherit the flag from the postmaster).
pub fn mark_preloaded() {
    IN_SHARED_MEMORY.store(true, Ordering::Relaxed);
}

/// Asks for the slots' memory (`shared_memory`'s request hook).
///
/// # Safety
/// Call only from the shared-memory request hook, in the postmaster.
pub unsafe fn request() {
    // SAFETY: this fn's contract: in the postmaster, while add-ins ask for memory.
    unsafe { SHARED.on_shmem_request() };
}

/// Sets the slots up (`shared_memory`'s startup hook).
///
/// # Safety
/// Call only from the shared-memory startup hook.
pub unsafe fn startup() {
    // SAFETY: this fn's contract: shared memory is being set up, the add-in init lock free.
    unsafe { SHARED.on_shmem_startup(ReservationSlots::default()) };
}

fn available() -> bool {
    IN_SHARED_MEMORY.load(Ordering::Relaxed)
}

/// Database of this backend (storage ids are numbered per database).
fn database() -> u32 {
    // SAFETY: MyDatabaseId is this backend's database, set at connection.
    unsafe { pg_sys::MyDatabaseId }.into()
}

/// Records that the current (sub)transaction took rows `first_row .. end_row` of
/// `storage_id`; false if it has no slot left (the caller records a catalog row).
///
/// # Safety
/// Call on the backend thread inside a transaction, holding the table's reservations
/// lock in share mode (it assigns the transaction an xid, which may raise an error).
pub unsafe fn publish(storage_id: u64, first_row: u64, end_row: u64) -> bool {
    if !available() {
        return false;
    }
    // SAFETY: on the backend thread inside a transaction (this fn's contract): MyProc is
    // this backend's PGPROC, and an xid may be assigned.
    let (procno, xid) = unsafe { ((*pg_sys::MyProc).pgprocno, pg_sys::GetCurrentTransactionId()) };
    let Some(own) = usize::try_from(procno).ok().and_then(own_range) else { return false };
    let mut shared = SHARED.exclusive();
    let slots = &mut shared.slots[own];
    // SAFETY: reads this backend's transaction state only (no error, no lock).
    let current = |x: u32| unsafe { pg_sys::TransactionIdIsCurrentTransactionId(x.into()) };
    let Some(at) = free_slot(slots, current) else { return false };
    slots[at] = Slot { database: database(), xid: xid.into(), storage_id, first_row, end_row };
    FILLED.store(true, Ordering::Relaxed);
    true
}

/// Empties this backend's slots: its transaction ended (committed, rolled back or
/// prepared, its buffered rows written out before).
///
/// # Safety
/// Call on the backend thread (from a transaction callback).
pub unsafe fn release() {
    if !FILLED.swap(false, Ordering::Relaxed) {
        return;
    }
    // SAFETY: on the backend thread (this fn's contract): MyProc is this backend's PGPROC.
    let procno = unsafe { (*pg_sys::MyProc).pgprocno };
    if let Some(own) = usize::try_from(procno).ok().and_then(own_range) {
        SHARED.exclusive().slots[own].fill(Slot::default());
    }
}

/// The window of `storage_id` that starts last at or before `row`, if a slot has one.
pub fn window_of(storage_id: u64, row: u64) -> Option<Slot> {
    if !available() {
        return None;
    }
    let shared = SHARED.share();
    last_starting_at_or_before(&shared.slots, database(), storage_id, row)
}

/// Every window of `storage_id` in a slot (of running and of ended transactions alike).
pub fn windows(storage_id: u64) -> Vec<Slot> {
    if !available() {
        return Vec::new();
    }
    let shared = SHARED.share();
    of_storage(&shared.slots, database(), storage_id).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(xid: u32, storage_id: u64, first_row: u64) -> Slot {
        Slot { database: 5, xid, storage_id, first_row, end_row: first_row + 100 }
    }

    #[test]
    fn backends_own_disjoint_slots_within_the_array() {
        assert_eq!(own_range(0), Some(0..SLOTS_PER_BACKEND));
        assert_eq!(own_range(3), Some(3 * SLOTS_PER_BACKEND..4 * SLOTS_PER_BACKEND));
        assert_eq!(own_range(SLOTS / SLOTS_PER_BACKEND - 1).map(|r| r.end), Some(SLOTS));
        assert_eq!(own_range(SLOTS / SLOTS_PER_BACKEND), None);
        assert_eq!(own_range(usize::MAX), None);
    }

    #[test]
    fn a_slot_is_reused_once_its_transaction_is_not_the_current_one() {
        let mut own = [Slot::default(); SLOTS_PER_BACKEND];
        let current = |x: u32| x == 10 || x == 11;
        assert_eq!(free_slot(&own, current), Some(0));
        own[0] = slot(10, 1, 0);
        own[1] = slot(11, 1, 500);
        own[2] = slot(7, 2, 0);
        // Slot 2 is left by an ended transaction.
        assert_eq!(free_slot(&own, current), Some(2));
        own[2] = slot(10, 2, 0);
        own[3] = slot(11, 3, 0);
        // All four belong to the current transaction: the caller falls back.
        assert_eq!(free_slot(&own, current), None);
        // The next transaction reuses them all.
        assert_eq!(free_slot(&own, |x| x == 12), Some(0));
    }

    #[test]
    fn the_window_starting_last_at_or_before_a_row_holds_it() {
        let mut slots = vec![Slot::default(); 8];
        slots[0] = slot(10, 1, 0);
        slots[3] = slot(11, 1, 40);
        slots[5] = slot(12, 2, 45);
        slots[6] = Slot { database: 6, ..slot(13, 1, 45) };
        let at = |slots: &[Slot], row| last_starting_at_or_before(slots, 5, 1, row).map(|s| s.xid);
        assert_eq!(at(&slots, 0), Some(10));
        assert_eq!(at(&slots, 39), Some(10));
        assert_eq!(at(&slots, 40), Some(11));
        assert_eq!(at(&slots, 10_000), Some(11));
        assert_eq!(last_starting_at_or_before(&slots, 5, 3, 50), None);
        slots[3].xid = 0;
        assert_eq!(at(&slots, 40), Some(10));
    }
}
