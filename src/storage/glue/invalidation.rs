//! Where PostgreSQL tells us a relation changed (its relcache invalidation): every
//! per-backend cache that holds something of a relation drops it here, in one place.

use crate::storage::catalog;
use crate::storage::relation::datum;
use crate::storage::relation::options;
use pgrx::pg_sys;

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_relcache_invalidation(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    datum::forget_kinds(relid);
    options::forget_cached(relid);
    catalog::forget_relation(relid);
}

/// Registers the callback; once per backend, from `_PG_init`.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn register() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the catalog lookups and relation opens are allowed.
    unsafe {
        pg_sys::CacheRegisterRelcacheCallback(Some(on_relcache_invalidation), pg_sys::Datum::from(0usize));
    }
}
