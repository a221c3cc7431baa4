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
/// Call once, from `_PG_init`, on the backend thread.
pub unsafe fn register() {
    // SAFETY: at load on the backend thread (this fn's contract); the callback is an `extern
    // "C-unwind"` fn with the signature PostgreSQL expects, and its argument is unused.
    unsafe {
        pg_sys::CacheRegisterRelcacheCallback(Some(on_relcache_invalidation), pg_sys::Datum::from(0usize));
    }
}
