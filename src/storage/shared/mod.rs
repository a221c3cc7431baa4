//! What every room of `storage` may use: `error` (errors with SQLSTATEs), `cache` (the
//! bounded per-backend cache), `privilege` and `internal_sql` (the extension's access to
//! its own metadata: with its rights, and through its own SPI that the hooks leave alone),
//! `snapshot_kind` (which kind of snapshot a read was given), `reservation_slots` (row-number
//! reservations in shared memory), `shared_vectors` (decoded vectors in shared memory, for
//! every backend's fetches; `shared_vectors_memory` places them), `shared_memory` (the
//! hooks that ask for and set up both), `completions` (whether other transactions' writes
//! may have become visible since a memo was made), `worker_threads` (rayon's threads,
//! which take no signal), `worker_exit` (how a parallel worker ends), `transaction_state`
//! (the transaction's ids, read without pgrx's per-call guard).

pub mod cache;
pub mod completions;
pub mod error;
pub mod internal_sql;
pub mod privilege;
pub mod reservation_slots;
pub mod shared_memory;
pub mod shared_vectors;
pub mod shared_vectors_memory;
pub mod snapshot_kind;
pub mod transaction_state;
pub mod worker_exit;
pub mod worker_threads;
