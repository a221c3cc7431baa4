//! Where `shared_vectors` lives: a block of the server's shared memory, sized by
//! `pgcolumnar.shared_fetch_cache_size` and asked for while `shared_preload_libraries`
//! loads (`shared_memory`; without preloading there is none, and fetches keep to their
//! own caches).

use super::shared_vectors::{bytes_for, sets_in, SharedVectors, ALIGN};
use pgrx::pg_sys;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// kB of shared memory for decoded vectors; -1: a sixteenth of `shared_buffers` (at
/// most 2 GB), 0: none.
static SIZE_KB: GucSetting<i32> = GucSetting::<i32>::new(-1);

/// Most memory the default takes.
const AUTO_MAX_BYTES: usize = 2 << 30;

static BASE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static BYTES: AtomicUsize = AtomicUsize::new(0);
/// Bytes asked for (set when add-ins ask for memory, in the postmaster).
static ASKED: AtomicUsize = AtomicUsize::new(0);

pub fn define_gucs() {
    GucRegistry::define_int_guc(
        c"pgcolumnar.shared_fetch_cache_size",
        c"Shared memory for column vectors decoded by index and bitmap fetches, read by every backend.",
        c"-1 takes a sixteenth of shared_buffers (at most 2 GB); 0 turns the shared cache off.",
        &SIZE_KB,
        -1,
        i32::MAX,
        GucContext::Postmaster,
        GucFlags::UNIT_KB,
    );
}

/// Bytes of sets the setting asks for (whole sets).
fn wanted_bytes() -> usize {
    let kb = SIZE_KB.get();
    let bytes = if kb < 0 {
        // SAFETY: NBuffers is set from shared_buffers before add-ins ask for memory.
        let buffers = unsafe { pg_sys::NBuffers }.max(0) as usize;
        (buffers * pg_sys::BLCKSZ as usize / 16).min(AUTO_MAX_BYTES)
    } else {
        kb as usize * 1024
    };
    bytes_for(sets_in(bytes))
}

/// Asks for the memory (`shared_memory`'s request hook).
///
/// # Safety
/// Call only from the shared-memory request hook, in the postmaster.
pub unsafe fn request() {
    // SAFETY: this fn's contract: in the postmaster, while add-ins ask for memory.
    unsafe {
        let bytes = wanted_bytes();
        ASKED.store(bytes, Ordering::Relaxed);
        if bytes > 0 {
            pg_sys::RequestAddinShmemSpace(bytes + ALIGN);
        }
        if SIZE_KB.get() < 0 {
            // Shows the size taken, as wal_buffers does for its -1.
            let kb = std::ffi::CString::new((bytes / 1024).to_string()).expect("digits");
            pg_sys::SetConfigOption(
                c"pgcolumnar.shared_fetch_cache_size".as_ptr(),
                kb.as_ptr(),
                pg_sys::GucContext::PGC_POSTMASTER,
                pg_sys::GucSource::PGC_S_DYNAMIC_DEFAULT,
            );
        }
    }
}

/// Sets the memory up (`shared_memory`'s startup hook).
///
/// # Safety
/// Call only from the shared-memory startup hook.
pub unsafe fn startup() {
    // SAFETY: this fn's contract: shared memory is being set up (postmaster, and after a
    // crash's reinitialization), with the add-in init lock free; the lock is entry 21 of
    // the main array (`AddinShmemInitLock`).
    unsafe {
        let bytes = ASKED.load(Ordering::Relaxed);
        if bytes == 0 {
            return;
        }
        let lock = &raw mut (*pg_sys::MainLWLockArray.add(21)).lock;
        pg_sys::LWLockAcquire(lock, pg_sys::LWLockMode::LW_EXCLUSIVE);
        let mut found = false;
        let raw = pg_sys::ShmemInitStruct(c"pgcolumnar shared vectors".as_ptr(), bytes + ALIGN, &mut found)
            as *mut u8;
        let base = raw.add(raw.align_offset(ALIGN));
        if !found {
            std::ptr::write_bytes(base, 0, bytes);
        }
        pg_sys::LWLockRelease(lock);
        BYTES.store(bytes, Ordering::Relaxed);
        BASE.store(base, Ordering::Release);
    }
}

/// The shared cache, if this server has one.
pub fn cache() -> Option<SharedVectors> {
    let base = BASE.load(Ordering::Acquire);
    if base.is_null() {
        return None;
    }
    // SAFETY: `base` is the aligned start of `BYTES` bytes of shared memory, zeroed when
    // made, mapped in every backend at this address, and touched only through
    // `SharedVectors`.
    Some(unsafe { SharedVectors::new(base, BYTES.load(Ordering::Relaxed)) })
}
