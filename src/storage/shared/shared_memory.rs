//! The extension's shared memory, asked for and set up through one pair of
//! PostgreSQL's hooks while `shared_preload_libraries` loads: the row-number
//! reservation slots (`reservation_slots`) and the shared cache of decoded vectors
//! (`shared_vectors_memory`). Without preloading there is none, and both say so.

use super::{reservation_slots, shared_vectors_memory};
use pgrx::pg_sys;

static mut PREV_SHMEM_REQUEST: pg_sys::shmem_request_hook_type = None;
static mut PREV_SHMEM_STARTUP: pg_sys::shmem_startup_hook_type = None;

/// Installs the hooks (backends inherit the memory attached in the postmaster).
///
/// # Safety
/// Call from `_PG_init` only, on the postmaster's thread, while preloading.
pub unsafe fn init() {
    // SAFETY: per this fn's contract, the hook chain and the PREV_* statics are written
    // only here, before PostgreSQL calls either hook.
    unsafe {
        PREV_SHMEM_REQUEST = pg_sys::shmem_request_hook;
        pg_sys::shmem_request_hook = Some(request_shmem);
        PREV_SHMEM_STARTUP = pg_sys::shmem_startup_hook;
        pg_sys::shmem_startup_hook = Some(startup_shmem);
    }
    reservation_slots::mark_preloaded();
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn request_shmem() {
    // SAFETY: PostgreSQL calls this once in the postmaster, when add-ins request memory.
    unsafe {
        if let Some(prev) = PREV_SHMEM_REQUEST {
            prev();
        }
        reservation_slots::request();
        shared_vectors_memory::request();
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn startup_shmem() {
    // SAFETY: PostgreSQL calls this when shared memory is set up (postmaster, and after a
    // crash's reinitialization), with the add-in init lock free.
    unsafe {
        if let Some(prev) = PREV_SHMEM_STARTUP {
            prev();
        }
        reservation_slots::startup();
        shared_vectors_memory::startup();
    }
}
