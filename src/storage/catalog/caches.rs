//! The catalog's per-backend caches (metadata-table OIDs, parsed chunk metadata), as
//! one thing for a relcache invalidation to forget.

use super::row_groups::forget_chunks_of;
use super::tables::forget_relids;
use pgrx::pg_sys;

/// Drops what is cached of relation `relid` (everything for InvalidOid): its chunk
/// metadata, and our metadata tables' OIDs if it is one of them.
pub fn forget_relation(relid: pg_sys::Oid) {
    forget_relids(relid);
    forget_chunks_of(relid);
}
