//! How a parallel-aware node over a columnar relation shares its rows out: the leader
//! and the workers take row groups from a counter in shared memory, each reading (and
//! for ColumnarAgg folding) the ones it claims. A node that reads through a `Reader`
//! implements `ClaimsRowGroups` and gets its `ParallelScanNode` methods from here.

use super::customscan::{CustomScanNode, ParallelScanNode};
use crate::storage::read::reader::{GroupClaim, Reader};
use pgrx::pg_sys;
use std::sync::atomic::{AtomicU64, Ordering};

pub trait ClaimsRowGroups {
    /// The node's reader, once `begin` made it.
    fn reader_mut(&mut self) -> Option<&mut Reader>;
}

impl<N: CustomScanNode + ClaimsRowGroups> ParallelScanNode for N {
    unsafe fn estimate_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        std::mem::size_of::<AtomicU64>()
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `coordinate` is the shared chunk of `estimate_dsm`'s size (an AtomicU64),
        // MAXALIGNed by shm_toc_allocate, and `pcxt` the live ParallelContext (the trait's
        // contract); the leader attaches to the counter like a worker.
        unsafe {
            (coordinate as *mut AtomicU64).write(AtomicU64::new(0));
            self.initialize_worker(node, (*pcxt).toc, coordinate);
        }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `coordinate` holds the AtomicU64 `initialize_dsm` wrote (the trait's
        // contract); the workers are not running during a reinitialize.
        unsafe { (*(coordinate as *const AtomicU64)).store(0, Ordering::Relaxed) };
    }

    unsafe fn initialize_worker(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _toc: *mut pg_sys::shm_toc,
        coordinate: *mut std::ffi::c_void,
    ) {
        if let Some(reader) = self.reader_mut() {
            reader.set_claim(GroupClaim::Shared(coordinate as *const AtomicU64));
        }
    }
}
