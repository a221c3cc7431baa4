//! The shared buffer each block of a columnar relation was in when this backend last
//! read it, so that the next read of the block can pin that buffer directly.
//!
//! A scan reads every page of its columns' vectors through the buffer manager, which
//! finds a page by looking its tag up in the shared hash table of all buffers: with
//! `shared_buffers = 4GB` a cache miss or two per page, 11% of a serial fold of two
//! columns of a 10M-row table (q6). PostgreSQL's `ReadRecentBuffer` pins a given buffer
//! if it still holds the block (it compares the tag under the buffer header's lock), and
//! says so; otherwise the read goes the usual way. A buffer remembered here is only ever
//! a guess that `ReadRecentBuffer` checks, so nothing needs forgetting when a relation is
//! dropped or a buffer reused.
//!
//! `ReadRecentBuffer` does not raise the buffer's usage count, by which the clock sweep
//! chooses what to evict: a page read only through it would look unused to it. So a
//! remembered buffer is taken only while its usage count is at least 2; below, the page
//! is read the usual way, which raises the count again.
//!
//! A parallel worker is a new process, with nothing remembered: the leader of a parallel
//! columnar scan copies what it remembers of the relation into the scan's shared memory
//! (`copy_remembered`), and its workers look there too (`lend`, until `end_lending`).

use crate::storage::format::cache_lines;
use pgrx::pg_sys;
use std::cell::RefCell;

/// Relations remembered at most; a further one replaces them all.
const MOST_RELATIONS: usize = 16;
/// Blocks remembered at most, over all relations (4 bytes each: 16 MB, the blocks of
/// 32 GB of tables).
const MOST_BLOCKS: usize = 1 << 22;
/// The usage count below which a block is read the usual way.
const LEAST_USAGE: u32 = 2;

type RelationKey = (u32, u32, u32);

/// Blocks a leader copies for its workers at most (4 MB of shared memory, the blocks of
/// 8 GB of table).
const MOST_LENT: usize = 1 << 20;

#[derive(Default)]
struct Recent {
    relations: Vec<(RelationKey, Vec<pg_sys::Buffer>)>,
    blocks: usize,
    /// A leader's buffers of one relation, in a parallel scan's shared memory.
    lent: Option<(RelationKey, *const pg_sys::Buffer, usize)>,
}

impl Recent {
    /// This process's buffers of relation `key`'s blocks (0: none remembered).
    fn own(&self, key: RelationKey) -> Option<&[pg_sys::Buffer]> {
        self.relations.iter().find(|(k, _)| *k == key).map(|(_, blocks)| blocks.as_slice())
    }

    /// The buffer remembered for `block` of relation `key`: this process's, else a
    /// leader's.
    fn buffer(&self, key: RelationKey, block: usize) -> Option<pg_sys::Buffer> {
        let own = self.own(key).and_then(|b| b.get(block).copied());
        let lent = || match self.lent {
            // SAFETY: `lend`'s contract keeps the leader's copy mapped until `end_lending`.
            Some((k, blocks, len)) if k == key && block < len => Some(unsafe { *blocks.add(block) }),
            _ => None,
        };
        own.filter(|&b| b > 0).or_else(lent).filter(|&b| b > 0)
    }
}

thread_local! {
    static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
}

/// The key of `rel`'s storage.
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn key_of(rel: pg_sys::Relation) -> RelationKey {
    // SAFETY: `rel` is open (this fn's contract).
    let node = unsafe { (*rel).rd_node };
    (node.spcNode.into(), node.dbNode.into(), node.relNode.into())
}

/// Whether a relation's pages live in shared buffers (not a temporary table's local
/// ones).
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn uses_shared_buffers(rel: pg_sys::Relation) -> bool {
    // SAFETY: `rel` is open (this fn's contract), so its pg_class row is there.
    unsafe { (*(*rel).rd_rel).relpersistence != pg_sys::RELPERSISTENCE_TEMP as std::ffi::c_char }
}

/// Block `block` of `rel`'s main fork pinned in the buffer it was last read in, if that
/// buffer still holds it and is well used; None otherwise (the caller reads it).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; on the backend thread inside a
/// transaction.
pub unsafe fn pin(rel: pg_sys::Relation, block: u32) -> Option<pg_sys::Buffer> {
    // SAFETY: `rel` is open (this fn's contract).
    let (node, key) = unsafe { ((*rel).rd_node, key_of(rel)) };
    let buffer = RECENT.with(|r| r.borrow().buffer(key, block as usize))?;
    // SAFETY: the descriptor of a remembered buffer is in the array (`descriptor`); its
    // state is an atomic read without a lock, a hint that ReadRecentBuffer checks under
    // the header lock.
    let usage = unsafe {
        let desc = descriptor(buffer);
        let state = std::sync::atomic::AtomicU32::from_ptr(&raw const (*desc).state.value as *mut u32);
        (state.load(std::sync::atomic::Ordering::Relaxed) & pg_sys::BUF_USAGECOUNT_MASK)
            >> pg_sys::BUF_USAGECOUNT_SHIFT
    };
    if usage < LEAST_USAGE {
        return None;
    }
    // SAFETY: on the backend thread inside a transaction (this fn's contract); the call
    // pins the buffer only if it holds this block of this relation, and is valid.
    let pinned = unsafe { pg_sys::ReadRecentBuffer(node, pg_sys::ForkNumber::MAIN_FORKNUM, block, buffer) };
    pinned.then_some(buffer)
}

/// Where the descriptor of `buffer`, a buffer this module remembers, lies. A positive
/// buffer number is a shared buffer's (`remember` keeps only those), below NBuffers
/// (buffer numbers do not change while the server runs), so the address is in the
/// descriptor array, mapped for the server's life.
fn descriptor(buffer: pg_sys::Buffer) -> *const pg_sys::BufferDesc {
    debug_assert!(buffer > 0);
    // SAFETY: the address stays within the descriptor array (above); nothing is read.
    unsafe { (&raw const (*pg_sys::BufferDescriptors.add(buffer as usize - 1)).bufferdesc) }
}

/// Remembers that block `block` of `rel` was just read into `buffer`.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn remember(rel: pg_sys::Relation, block: u32, buffer: pg_sys::Buffer) {
    // SAFETY: `rel` is open (this fn's contract).
    if buffer <= 0 || !unsafe { uses_shared_buffers(rel) } {
        return;
    }
    // SAFETY: as above.
    let key = unsafe { key_of(rel) };
    RECENT.with(|r| {
        let r = &mut *r.borrow_mut();
        let at = match r.relations.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                if r.relations.len() == MOST_RELATIONS {
                    *r = Recent::default();
                }
                r.relations.push((key, Vec::new()));
                r.relations.len() - 1
            }
        };
        let blocks = &mut r.relations[at].1;
        let block = block as usize;
        if block >= blocks.len() {
            let grow = block + 1 - blocks.len();
            if r.blocks + grow > MOST_BLOCKS {
                return;
            }
            blocks.resize(block + 1, pg_sys::InvalidBuffer as pg_sys::Buffer);
            r.blocks += grow;
        }
        blocks[block] = buffer;
    });
}

/// How many blocks of `rel` a leader would copy for its workers.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn remembered(rel: pg_sys::Relation) -> usize {
    // SAFETY: `rel` is open (this fn's contract).
    let key = unsafe { key_of(rel) };
    RECENT.with(|r| r.borrow().own(key).map_or(0, |b| b.len().min(MOST_LENT)))
}

/// Copies what is remembered of `rel`'s blocks into `out` (from block 0, as much as
/// fits; 0 where a block is not remembered); returns how many.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn copy_remembered(rel: pg_sys::Relation, out: &mut [pg_sys::Buffer]) -> usize {
    // SAFETY: `rel` is open (this fn's contract).
    let key = unsafe { key_of(rel) };
    RECENT.with(|r| {
        let r = r.borrow();
        let Some(blocks) = r.own(key) else { return 0 };
        let n = blocks.len().min(out.len());
        out[..n].copy_from_slice(&blocks[..n]);
        n
    })
}

/// In a parallel worker: `len` buffers of `rel`'s blocks at `blocks` (a leader's
/// `copy_remembered`) are looked at too, until `end_lending`.
///
/// # Safety
/// `rel` must be an open relation; `blocks` must stay valid for `len` buffers until
/// `end_lending` is called.
pub unsafe fn lend(rel: pg_sys::Relation, blocks: *const pg_sys::Buffer, len: usize) {
    // SAFETY: `rel` is open (this fn's contract).
    let key = unsafe { key_of(rel) };
    RECENT.with(|r| r.borrow_mut().lent = Some((key, blocks, len)));
}

/// Stops looking at a leader's buffers (before its shared memory goes).
pub fn end_lending() {
    RECENT.with(|r| r.borrow_mut().lent = None);
}

/// Asks the CPU to bring block `block` of `rel` and its buffer's descriptor into its
/// caches (`cache_lines`), if a buffer is remembered for the block: a sequential read
/// of a chunk asks for the next page while it decodes the current one. Nothing is
/// pinned or checked: shared buffers stay mapped for the server's life, so a buffer
/// that holds another block by now costs a wasted fetch, nothing else.
///
/// # Safety
/// `rel` must be an open relation; on the backend thread.
pub unsafe fn prefetch(rel: pg_sys::Relation, block: u32) {
    // SAFETY: `rel` is open (this fn's contract).
    let key = unsafe { key_of(rel) };
    let Some(buffer) = RECENT.with(|r| r.borrow().buffer(key, block as usize)) else { return };
    // SAFETY: as for `descriptor`, the buffer's block lies in the mapped array of
    // blocks; the address is only computed here, never dereferenced.
    let page =
        unsafe { (pg_sys::BufferBlocks as *const u8).add((buffer as usize - 1) * pg_sys::BLCKSZ as usize) };
    cache_lines::prefetch(descriptor(buffer).cast(), std::mem::size_of::<pg_sys::BufferDesc>());
    cache_lines::prefetch(page, pg_sys::BLCKSZ as usize);
}
