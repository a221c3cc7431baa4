//! The sizes the planner asks for on every plan of a columnar table — its row count
//! (`relation_estimate_size`) and the bytes of each column (the ColumnarScan's cost) —
//! cached per backend. Both are sums over every row group's metadata, which cost a
//! short point lookup more than its execution did.
//!
//! An entry is valid while no transaction that could have changed the metadata has
//! ended anywhere (PostgreSQL's count of completed transactions, the test it uses to
//! reuse a snapshot), and is only made or used by a transaction that has written
//! nothing itself: its own flushes change the sums without any transaction ending.

use super::catalog;
use hashbrown::HashMap;
use pgrx::pg_sys;
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Default)]
struct Sizes {
    completed: u64,
    rows: Option<u64>,
    column_bytes: Option<Rc<[u64]>>,
}

/// Tables whose sizes are kept; past this the cache starts over.
const MAX_TABLES: usize = 1024;

thread_local! {
    static SIZES: RefCell<HashMap<u64, Sizes>> = RefCell::new(HashMap::new());
}

/// Transactions with an xid that have committed or aborted since the server started,
/// or None when this transaction has written and must not use the cache.
unsafe fn completed_transactions() -> Option<u64> {
    if pg_sys::GetTopTransactionIdIfAny() != pg_sys::InvalidTransactionId {
        return None;
    }
    // Read without ProcArrayLock: an aligned 8-byte load, and a count read before the
    // catalog snapshot is taken can only make an entry look older than it is.
    // (PostgreSQL 17 renames ShmemVariableCache to TransamVariables.)
    Some((*pg_sys::ShmemVariableCache).xactCompletionCount)
}

/// The cached value `get` reads from an entry, or `compute`'s, stored by `put`.
unsafe fn cached<T: Clone>(
    storage_id: u64,
    get: impl Fn(&Sizes) -> Option<T>,
    put: impl Fn(&mut Sizes, T),
    compute: impl FnOnce() -> T,
) -> T {
    let Some(completed) = completed_transactions() else { return compute() };
    let hit = SIZES.with(|s| s.borrow().get(&storage_id).filter(|e| e.completed == completed).and_then(&get));
    if let Some(v) = hit {
        return v;
    }
    let v = compute();
    SIZES.with(|s| {
        let mut sizes = s.borrow_mut();
        if sizes.len() >= MAX_TABLES && !sizes.contains_key(&storage_id) {
            sizes.clear();
        }
        let entry = sizes.entry(storage_id).or_default();
        if entry.completed != completed {
            *entry = Sizes { completed, ..Sizes::default() };
        }
        put(entry, v.clone());
    });
    v
}

/// Rows stored in the row groups the catalog snapshot sees (deleted ones included).
pub unsafe fn row_count(storage_id: u64) -> u64 {
    cached(
        storage_id,
        |e| e.rows,
        |e, v| e.rows = Some(v),
        || {
            catalog::load_row_groups(storage_id, std::ptr::null_mut(), false)
                .iter()
                .map(|g| g.row_count)
                .sum()
        },
    )
}

/// Stored bytes of each of the first `natts` attributes.
pub unsafe fn column_bytes(storage_id: u64, natts: usize) -> Rc<[u64]> {
    cached(
        storage_id,
        |e| e.column_bytes.clone().filter(|b| b.len() == natts),
        |e, v| e.column_bytes = Some(v),
        || catalog::column_bytes(storage_id, natts).into(),
    )
}
