//! Fetching single rows by TID (index scans, triggers, EvalPlanQual): finds the row
//! group of the row number and decodes only the vector that holds the row, and only
//! for the columns up to the last one the executor asks for (a columnar slot decodes
//! lazily, as heap deforms). Decoded
//! vectors are shared by this backend's fetchers, for the next fetch (index scans
//! often hit neighbours) and because an UPDATE fetches the old row three times (its
//! index scan, the executor's fetch of the old version, the uniqueness check of the
//! new one), each through a fetcher of its own. Fixed-width and numeric vectors are also
//! decoded into the shared cache (`shared::shared_vectors`), where the next backend finds
//! them.

use crate::storage::catalog::{self, RowGroupMeta};
use crate::storage::format::bucket_rows::bucket_start;
use crate::storage::format::encoding::point::PointVector;
use crate::storage::format::encoding::point::{set_validity_bits, PointValue};
use crate::storage::format::encoding::stripe_rows::{StripeRows, MAX_ATTRIBUTE};
use crate::storage::format::encoding::{decode_vector, DecodedValues, DecodedVector, PhysicalKind};
use crate::storage::format::image_arena::ImageArena;
use crate::storage::relation::datum::{self, ColumnKind};
use hashbrown::HashMap;

use super::decode::{find_in_order, load_order_inverse, open_checked, open_paged_checked};
use super::vector_pages::VectorPages;
use crate::storage::format::encoding::paged::PagedVector;
use crate::storage::format::layout::{self, VECTOR_ROWS};
use crate::storage::format::mark_kind::MarkKind;
use crate::storage::relation::page_pins::PagePins;
use crate::storage::relation::pages;
use crate::storage::relation::prefetch;
use crate::storage::relation::slot::LazyColumns;
use crate::storage::relation::tid::{row_tid, tid_row};
use crate::storage::shared::cache::{kept_for_life, BoundedCache, ClockCache, KeptForLife};
use crate::storage::shared::shared_vectors::{self, SharedVectors, VectorKey, WordKind};
use crate::storage::shared::shared_vectors_memory;
use crate::storage::shared::snapshot_kind::{forget_writers, is_dirty, is_mvcc};
use crate::storage::write::pending_marks;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

/// (storage id, first row of the row group, vector): a stripe, the same rows of every
/// column of a row group. Stored vectors never change and storage ids are never
/// reused, so entries cannot go stale.
type StripeKey = (u64, u64, usize);

/// What the fetch cache keeps of a stripe: the vectors opened so far, by attribute
/// index (a fetch finds every column of its row with one lookup, the vectors side by
/// side), and once fetches came back to it `TRANSPOSE_AFTER` times, its fixed-width
/// vectors as rows instead (`StripeRows`: a row's values in a line or two, not each
/// in a vector of its own).
#[derive(Default)]
struct Stripe {
    columns: Vec<Option<PointVector>>,
    /// Vectors read where they lie (`PagedVector`), with their attribute indexes, while
    /// the stripe has been fetched from fewer than `OPEN_AFTER` times. A list of the few
    /// columns read, not a slot per attribute: a new connection's index scan reaches
    /// hundreds of stripes, and every byte of them is memory the kernel hands out.
    paged: Vec<(usize, PagedVector)>,
    /// Vectors found in (or put into) the shared cache, read there until the stripe is
    /// made rows.
    shared: Vec<(usize, shared_vectors::Handle)>,
    /// A read through `shared` found its slot given to another vector: they are looked
    /// up again.
    shared_stale: Cell<bool>,
    rows: Option<StripeRows>,
    /// Rows fetched from it (saturating).
    fetches: Cell<u32>,
    /// Whether it was offered to be made rows (`transpose`), once.
    transposed: Cell<bool>,
}

impl Stripe {
    /// Whether attribute `i` is opened (rows or a vector kept in memory).
    fn holds(&self, i: usize) -> bool {
        self.rows.as_ref().is_some_and(|r| r.holds(i)) || self.columns.get(i).is_some_and(Option::is_some)
    }

    /// Attribute `i`'s vector as read where it lies, if it is.
    fn paged(&self, i: usize) -> Option<&PagedVector> {
        self.paged.iter().find(|(a, _)| *a == i).map(|(_, p)| p)
    }

    /// Attribute `i`'s vector in the shared cache, if it was found there.
    fn shared(&self, i: usize) -> Option<&shared_vectors::Handle> {
        self.shared.iter().find(|(a, _)| *a == i).map(|(_, h)| h)
    }

    /// Whether attribute `i` can be read now: opened, read where it lies while the stripe
    /// is new to this backend's fetches, or read from the shared cache until the stripe
    /// is made rows (reading there is as fast as from this backend's memory, which
    /// opening the vector again would first have to fill).
    fn readable(&self, i: usize) -> bool {
        let fetches = self.fetches.get();
        self.holds(i)
            || self.paged(i).is_some_and(|p| !came_of_age(fetches, open_after(p)))
            || (!came_of_age(fetches, SHARED_UNTIL) && !self.shared_stale.get() && self.shared(i).is_some())
    }
}

/// Fetches from a stripe after which the vectors read where they lie are opened (kept
/// in memory, decoded where a row cannot be read in place). A first visit reads a
/// value with a small read or two of shared buffers; opening copies the vector and
/// decodes it into memory a new backend has never touched (a page fault every 4 KB).
/// An index scan on a table not ordered by its key visits each stripe a few times per
/// query (one TSBS host: 5 rows a stripe), so a query on a new connection reads in
/// place, and a query repeated on the same connection soon finds the stripe opened.
const OPEN_AFTER: u32 = 8;

/// Fetches from a stripe after which its vector `p`, read where it lies, is opened:
/// `OPEN_AFTER`, or for a vector read from zstd frames, as late as one read from the
/// shared cache (`SHARED_UNTIL`). Its reads cost a frame each, or a copy of a value
/// another backend's fetch left decompressed; opened whole, the vector is decompressed
/// whole, 74 KB of `'cmt ' || md5(i)` (150 µs), which a query reading a row of each of
/// 397 stripes paid for 372 vectors at its ninth run (55 of its 65 ms, against 3).
fn open_after(p: &PagedVector) -> u32 {
    if p.reads_frames() {
        SHARED_UNTIL
    } else {
        OPEN_AFTER
    }
}

/// Fetches from a stripe from which its vectors in the shared cache are opened in this
/// backend's memory, so that the next fetch makes the stripe rows.
const SHARED_UNTIL: u32 = TRANSPOSE_AFTER - 1;

/// Fetches from a stripe after which its fixed-width vectors are made rows. Making
/// them rows reads every value of the stripe twice, which costs what a few hundred
/// fetches save: a stripe fetched a handful of times per query is not worth it, and
/// when the stripes a query reaches outgrow the cache, each is opened again by the
/// next query and would be made rows again. (At 4, one host's 25,000 rows of a 10M-row
/// TSBS table, about 5 per stripe, took 1.4 s instead of 0.13.) Counts last while the
/// stripe stays cached, so a stripe that repeated queries keep reaching gets there.
const TRANSPOSE_AFTER: u32 = 128;

/// Units of opening (`open_cost`) a fetcher may spend at its start to open vectors
/// whole (or make rows of a stripe's vectors, as much) for stripes that came of age
/// (`open_after`, `SHARED_UNTIL`, `TRANSPOSE_AFTER`); each row it fetches earns one
/// more, up to `OPEN_CREDIT_MAX`. Stripes come of age together: a query that reaches
/// 397 stripes once each, repeated on its connection, opened all 6,352 of their vectors
/// at its ninth run (62 ms against 3), and a query reading 5 rows a stripe copied and
/// made rows of 488 stripes at its 26th (92 ms against 2). On credit, a query's opening
/// costs about what its fetches do, and the rest waits for the queries after it, the
/// stripes read as before meanwhile.
const OPEN_CREDIT_START: i64 = 128;
const OPEN_CREDIT_MAX: i64 = 1 << 16;

/// Whether a stripe fetched `fetches` times is past `limit` and the fetcher has credit
/// to open it (`OPEN_CREDIT_START`).
fn came_of_age(fetches: u32, limit: u32) -> bool {
    fetches >= limit && OPEN_CREDIT.get() > 0
}

/// Spends `units` of the fetcher's credit (`OPEN_CREDIT_START`).
fn spend_open_credit(units: usize) {
    OPEN_CREDIT.set(OPEN_CREDIT.get().saturating_sub(units as i64));
}

/// What opening a vector of `len` stored bytes and `rows` rows takes of a fetcher's
/// credit: a unit for each 8 KB stored or decoded (as 8-byte values), one at least.
/// About what fetching a row costs (16 values read where they lie, 5 µs).
fn open_cost(len: u32, rows: u32) -> usize {
    1 + (len as usize).max(8 * rows as usize) / 8192
}

/// Bytes of opened vectors a backend keeps for fetches (`pgcolumnar.fetch_cache_size`,
/// in kB): the rows an index finds scatter over thousands of vectors, each visited
/// again and again; past this bound the least recently used go first.
pub static FETCH_CACHE_KB: GucSetting<i32> = GucSetting::<i32>::new(256 * 1024);

/// Whether fetches use the shared cache of decoded vectors
/// (`pgcolumnar.enable_shared_fetch_cache`).
static USE_SHARED: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_shared_fetch_cache",
        c"Lets index and bitmap fetches read and fill the shared cache of decoded vectors.",
        c"Its size is pgcolumnar.shared_fetch_cache_size; off, a new connection reads vectors where they are stored.",
        &USE_SHARED,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pgcolumnar.fetch_cache_size",
        c"Memory each backend keeps for the column vectors index and bitmap fetches read.",
        c"Vectors are kept in their stored form where single rows can be read from it, decoded otherwise.",
        &FETCH_CACHE_KB,
        64,
        i32::MAX / 1024,
        GucContext::Userset,
        GucFlags::UNIT_KB,
    );
}

/// Stripes the fetch cache has room for before it first grows: one host's 12 hours of
/// a 10M-row TSBS table not sorted by host are 845.
const STRIPES_PRESIZED: usize = 1024;

thread_local! {
    static SHARED: KeptForLife<ClockCache<StripeKey, Stripe>> =
        kept_for_life(ClockCache::with_capacity(usize::MAX, STRIPES_PRESIZED));
}

/// Bytes the fetch cache may hold now.
pub fn fetch_cache_bytes() -> usize {
    FETCH_CACHE_KB.get().max(64) as usize * 1024
}

/// Fetches under one MVCC snapshot that look up their row group alone before the
/// fetcher loads (and caches) every row group. A probe is a few index lookups; loading
/// all reads every row group's and mark's metadata, which on a table written by many
/// small transactions (a row group per UPDATE) is thousands of rows: an index scan that
/// steps over a few recently deleted entries (`min(id)` of a queue table) must not pay
/// that per statement. 64 probes cost about a millisecond.
const PROBES_BEFORE_LOADING_ALL: u32 = 64;

/// Marks of one bucket a probing fetcher reads at once to answer its rows' deletes; a
/// bucket with more (a queue table's, one mark per deleted row) is looked up row by row.
const MARKS_KEPT_PER_BUCKET: usize = 32;

/// Marks of one row group a probing fetcher reads at once; a group with more is probed
/// bucket by bucket.
const MARKS_KEPT_PER_GROUP: usize = 256;

/// Marks of a row group a probing fetcher reads on its first row of the group; a group
/// with more has its first `ROW_PROBES_BEFORE_GROUP_MARKS` rows checked by their own marks
/// (two index lookups each) before up to `MARKS_KEPT_PER_GROUP` are read. A single-row
/// UPDATE or lookup fetches one row of its group, and on a table changed by many small
/// transactions (a mark each) reading the group's marks first read 257 of them and 33
/// more to find out there were too many: a quarter of such an UPDATE's time.
const MARKS_READ_FIRST: usize = 16;
const ROW_PROBES_BEFORE_GROUP_MARKS: u32 = 4;

/// Fetchers after one whose first probe of a row group found more than
/// `MARKS_READ_FIRST` marks there that skip that probe (and look the row's own marks up
/// at once) before one tries it again. Marks pile up until VACUUM folds them: a table
/// changed by single-row UPDATEs kept a statement's every fetch reading 17 marks of the
/// same crowded row group to learn it was crowded, 6% of such an UPDATE's time. Skipping
/// the probe only trades a range read for the lookup it would have ended with.
const SKIP_CROWDED_PROBES: u32 = 64;

/// Row groups whose first probe found them crowded (`SKIP_CROWDED_PROBES`), by storage
/// id and first row, with the fetchers left to skip it.
const CROWDED_GROUPS: usize = 1024;

thread_local! {
    static CROWDED: KeptForLife<BoundedCache<(u64, u64), u32>> = kept_for_life(BoundedCache::new(CROWDED_GROUPS));
}

/// Whether a fetcher's first probe of the row group `key` should be skipped (counting
/// the skip).
fn skip_crowded_probe(key: (u64, u64)) -> bool {
    CROWDED.with(|c| {
        let mut c = c.borrow_mut();
        match c.get_mut(&key) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            Some(_) => {
                c.remove(&key);
                false
            }
            None => false,
        }
    })
}

/// Needed attribute numbers, by slot, bitset address and attribute count.
type NeededAttnums = ((usize, usize, usize), Rc<[i16]>);

pub struct Fetcher {
    rel: pg_sys::Relation,
    kinds: Rc<[ColumnKind]>,
    storage_id: u64,
    /// Row groups visible to `groups_for`, an MVCC snapshot's identity.
    groups: Vec<RowGroupMeta>,
    /// Which of `groups` have their chunks.
    chunks_attached: Vec<bool>,
    /// The index in `groups` of the last row fetched.
    last_group: usize,
    /// Row numbers deleted for that snapshot (marks not folded into masks yet).
    deleted_rows: Vec<u64>,
    groups_for: Option<(usize, u32, u32, u32)>,
    /// The snapshot of the last probes, and how many fetches probed for it.
    probed_for: Option<(usize, u32, u32, u32)>,
    probes: u32,
    /// The row groups those probes found, and the deleted rows of the mark buckets they
    /// read (None: a bucket with too many marks, checked row by row): further fetches of
    /// their rows need no probe. An index scan of a few hundred rows lying together (one
    /// host's hour on a table sorted by host) otherwise probes for each of its first 64.
    probed_groups: Vec<RowGroupMeta>,
    probed_buckets: HashMap<u64, Option<Vec<u64>>>,
    /// The deleted rows of the probed groups' marks, by first row (None: too many marks,
    /// see `probed_buckets`).
    probed_group_marks: HashMap<u64, Option<Vec<u64>>>,
    /// Rows of a probed group (by first row) whose deletes were looked up one by one.
    row_probes: HashMap<u64, u32>,
    /// The attribute numbers of a slot's needed columns, by the slot, the address of
    /// its bitset, and its descriptor's attributes.
    needed: Option<NeededAttnums>,
    /// Where the by-reference values of the last row stored in a non-columnar slot
    /// live.
    held: ImageArena,
    /// The relation's size in blocks as last asked (asking costs a system call; the
    /// relation only grows while it is open, so it is asked again past the end).
    blocks: Rc<Cell<u32>>,
    /// Buffers an index scan's fetches keep pinned from row to row (`keep_pins`), which
    /// its rows read through.
    pins: Option<Rc<RefCell<PagePins>>>,
}

thread_local! {
    /// Row groups found for SnapshotAny fetches (the executor reads every row an UPDATE
    /// changes that way), by (storage id, first row). SnapshotAny ignores delete masks,
    /// and a row group's layout never changes, so entries cannot go stale.
    static ANY_GROUPS: RefCell<BTreeMap<(u64, u64), RowGroupMeta>> = const { RefCell::new(BTreeMap::new()) };
}

const ANY_GROUPS_MAX: usize = 256;

thread_local! {
    /// Per row group stored in sort_by order, (storage id, first row): what this backend
    /// knows of where its rows lie. Stored orders never change, so entries cannot go stale.
    static INVERSE_ORDERS: KeptForLife<InverseOrders> = kept_for_life(BoundedCache::new(INVERSE_ORDERS_MAX));
}

/// Per row group (storage id, first row), what is known of its order.
type InverseOrders = BoundedCache<(u64, u64), KnownOrder>;

/// What a backend knows of a sorted row group's order column.
#[derive(Clone)]
enum KnownOrder {
    /// Fetches found their rows by reading the column (`find_in_order`) this many times.
    Searched(u32),
    /// The position of each row offset.
    Inverse(Rc<[u32]>),
}

/// Row groups' orders kept (an inverse: 400 KB at most).
const INVERSE_ORDERS_MAX: usize = 64;

/// Fetches from a sorted row group that find their row by reading its order column
/// before the column's inverse is made. Making the inverse of a 100k-row group (10M-row
/// TSBS table, `sort_by = 'hostname, time'`) took 0.55 ms of a new connection's first
/// point lookup, most of it the kernel handing out its 400 KB; a search reads half the
/// column on average, in memory already in use: a few fetches, then the inverse pays.
const SEARCHES_BEFORE_INVERSE: u32 = 8;

fn any_group_cached(storage_id: u64, row: u64) -> Option<RowGroupMeta> {
    ANY_GROUPS.with(|c| {
        let c = c.borrow();
        let ((s, first), g) = c.range(..=(storage_id, row)).next_back()?;
        (*s == storage_id && row < first + g.row_count).then(|| g.clone())
    })
}

fn cache_any_group(storage_id: u64, g: &RowGroupMeta) {
    ANY_GROUPS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= ANY_GROUPS_MAX {
            c.clear();
        }
        c.insert((storage_id, g.first_row), g.clone());
    });
}

/// Whether row `row` of group `g` is in the group's delete mask (deleted for every
/// snapshot; VACUUM folds deletes there).
fn masked(g: &RowGroupMeta, row: u64) -> bool {
    g.deleted.as_ref().is_some_and(|m| m.is_deleted((row - g.first_row) as usize))
}

/// A fetched row whose columns are decoded when first asked for (a columnar slot holds
/// it): an index scan that reads the first two columns of twenty decodes two vectors,
/// not twenty.
pub struct LazyRow {
    rel: pg_sys::Relation,
    /// The descriptor of the slot the row is fetched into, which `kinds` and the
    /// missing values of columns added after the row was written come from.
    desc: pg_sys::TupleDesc,
    storage_id: u64,
    kinds: Rc<[ColumnKind]>,
    group: RowGroupMeta,
    /// The vector holding the row, and the row's index in it.
    vector: usize,
    at: usize,
    /// The fetcher's idea of the relation's size in blocks.
    blocks: Rc<Cell<u32>>,
    /// The fetcher's kept pins, if it keeps them.
    pins: Option<Rc<RefCell<PagePins>>>,
    /// Where the slot's by-reference values live (each value is copied out of its
    /// decoded vector: a fetch of one row does not build Datums for 2,048).
    images: ImageArena,
}

impl LazyColumns for LazyRow {
    /// Lets go of the row (its vectors and values) and keeps the arena its values
    /// lived in for the next row.
    fn take_arena(self: Box<Self>) -> ImageArena {
        let mut images = self.images;
        images.clear();
        images
    }

    /// Gives the row an arena to keep its values in (one a previous row left).
    fn use_arena(&mut self, images: ImageArena) {
        self.images = images;
    }

    /// Stores attributes `from .. to` (indexes) of the row in `values` and `nulls`.
    unsafe fn fill(
        &mut self,
        from: usize,
        to: usize,
        values: *mut pg_sys::Datum,
        nulls: *mut bool,
        needed: Option<&[u64]>,
    ) {
        let to = to.min(self.kinds.len());
        match self.prefetch(from, to, needed) {
            // SAFETY: `fill`'s contract: the relation is open, inside a transaction.
            Ready::Missing => unsafe { self.open_missing(from, to, needed) },
            Ready::Transpose => self.transpose(),
            Ready::Yes => {}
        }
        let key = self.key();
        let at = self.at;
        let vectors = shared_vectors_memory::cache();
        SHARED.with(|c| {
            let c = c.borrow();
            let stripe = c.peek(&key);
            let rows = stripe.and_then(|s| s.rows.as_ref());
            let columns = stripe.map_or(&[][..], |s| s.columns.as_slice());
            // A byte string read from the shared cache, copied out (another backend may
            // refill its units while it is read).
            let mut text = Vec::new();
            for i in from..to {
                let (d, n) = if !self.stored(i, needed) {
                    match (self.kinds[i], self.group.chunk(i as i16 + 1)) {
                        (ColumnKind::Dropped, _) => (pg_sys::Datum::from(0usize), true),
                        (_, None) if crate::storage::relation::slot::is_needed(needed, i) => {
                            let mut isnull = false;
                            // SAFETY: `desc` is the open relation's tuple descriptor and `i` one
                            // of its attribute indexes (`kinds` was built from it).
                            let d = unsafe { pg_sys::getmissingattr(self.desc, i as i32 + 1, &mut isnull) };
                            (d, isnull)
                        }
                        _ => (pg_sys::Datum::from(0usize), true),
                    }
                } else {
                    let value = match (rows, columns.get(i)) {
                        (Some(r), _) if r.holds(i) => {
                            if at >= r.rows() {
                                crate::storage::shared::error::data_corrupted("row beyond its vector");
                            }
                            r.value(i, at)
                        }
                        // `open_missing` opened every vector the row reads (or raised an ERROR).
                        (_, Some(Some(v))) => {
                            if at >= v.rows() {
                                crate::storage::shared::error::data_corrupted("row beyond its vector");
                            }
                            v.value(at)
                        }
                        _ => match (stripe.and_then(|s| s.paged(i)), stripe.and_then(|s| s.shared(i))) {
                            // Pages are read inside the cache's borrow: an ERROR unwinds
                            // through it as a panic, which lets the borrow go.
                            (Some(p), _) => {
                                // SAFETY: `fill`'s contract.
                                let mut pages = unsafe { self.vector_pages(i) };
                                p.value(&mut pages, at, &mut text).unwrap_or_else(|e| {
                                    crate::storage::shared::error::data_corrupted(&e.to_string())
                                })
                            }
                            (None, Some(h)) => {
                                // Some(None): the byte string in `text`.
                                let read = match (vectors.as_ref(), h.kind()) {
                                    (None, _) => None,
                                    (Some(c), WordKind::Bytes) => c
                                        .read_bytes(h, at, &mut text)
                                        .map(|v| v.map_or(Some(PointValue::Null), |()| None)),
                                    (Some(c), kind) => c.read(h, at).map(|w| Some(shared_value(kind, w))),
                                };
                                match read {
                                    Some(Some(value)) => value,
                                    Some(None) => PointValue::Bytes(&text),
                                    // The units went to another vector since: this row's
                                    // value is read from the stored vector instead, and the
                                    // stripe's next fetch looks its vectors up again.
                                    None => {
                                        if let Some(s) = stripe {
                                            s.shared_stale.set(true);
                                        }
                                        // SAFETY: `fill`'s contract.
                                        unsafe { self.value_from_storage(i, at, &mut text) }
                                    }
                                }
                            }
                            (None, None) => crate::storage::shared::error::data_corrupted(
                                "vector missing from the fetch cache",
                            ),
                        },
                    };
                    // SAFETY: inside a transaction on the backend thread (`fill`'s contract),
                    // so a by-reference value may be palloc'ed.
                    unsafe { datum::point_datum(self.kinds[i], value, &mut self.images) }
                };
                // SAFETY: `i < to`, and the caller gives arrays valid for writes up to `to`.
                unsafe {
                    *values.add(i) = d;
                    *nulls.add(i) = n;
                }
            }
        });
    }
}

/// What a row's fill has to do before reading its values.
enum Ready {
    Yes,
    /// A vector the row reads is not opened yet.
    Missing,
    /// Its stripe was fetched from often enough to be made rows.
    Transpose,
}

impl LazyRow {
    /// The fetch cache's key of the stripe holding the row.
    fn key(&self) -> StripeKey {
        (self.storage_id, self.group.first_row, self.vector)
    }

    /// Whether attribute `i` is one the row reads (`stored`) that its stripe, as the
    /// fetch cache holds it (if it does), cannot be read from yet.
    fn unopened(&self, stripe: Option<&Stripe>, i: usize, needed: Option<&[u64]>) -> bool {
        self.stored(i, needed) && !stripe.is_some_and(|s| s.readable(i))
    }

    /// Whether attribute `i`'s value is read from its vector: a column the row group
    /// stores, that someone reads.
    fn stored(&self, i: usize, needed: Option<&[u64]>) -> bool {
        !matches!(self.kinds[i], ColumnKind::Dropped)
            && crate::storage::relation::slot::is_needed(needed, i)
            && self.group.chunk(i as i16 + 1).is_some()
    }

    /// Has the CPU load the values of attributes `from .. to` that are cached, before
    /// they are read one by one: each lies in a vector of its own, out of the CPU's
    /// caches, and reading them in turn would wait for each load after the other. Counts
    /// the row's first fill as a fetch from its stripe.
    fn prefetch(&self, from: usize, to: usize, needed: Option<&[u64]>) -> Ready {
        let vectors = shared_vectors_memory::cache();
        SHARED.with(|c| {
            let c = c.borrow();
            let Some(stripe) = c.peek(&self.key()) else { return Ready::Missing };
            let fetches = if from == 0 {
                let fetches = stripe.fetches.get().saturating_add(1);
                stripe.fetches.set(fetches);
                OPEN_CREDIT.set((OPEN_CREDIT.get() + 1).min(OPEN_CREDIT_MAX));
                fetches
            } else {
                stripe.fetches.get()
            };
            let mut ready = Ready::Yes;
            let mut in_rows = false;
            for i in from..to {
                if !self.stored(i, needed) {
                    continue;
                }
                match (&stripe.rows, stripe.columns.get(i)) {
                    (Some(r), _) if r.holds(i) => in_rows = true,
                    (_, Some(Some(v))) if self.at < v.rows() => prefetch(v.value_address(self.at)),
                    (_, Some(Some(_))) => {}
                    _ if stripe.readable(i) => {
                        if let (Some(h), Some(c)) = (stripe.shared(i), vectors.as_ref()) {
                            for p in c.addresses(h, self.at) {
                                prefetch(p);
                            }
                        }
                    }
                    _ => ready = Ready::Missing,
                }
            }
            if let Some(r) = stripe.rows.as_ref().filter(|r| in_rows && self.at < r.rows()) {
                for p in r.row_span(self.at) {
                    prefetch(p);
                }
            }
            if from == 0
                && came_of_age(fetches, TRANSPOSE_AFTER)
                && !stripe.transposed.get()
                && matches!(ready, Ready::Yes)
            {
                return Ready::Transpose;
            }
            ready
        })
    }

    /// Makes the fixed-width vectors of the row's stripe opened so far rows
    /// (`StripeRows`), in their place in the fetch cache.
    fn transpose(&self) {
        let key = self.key();
        SHARED.with(|c| {
            let mut c = c.borrow_mut();
            let Some(stripe) = c.get_mut(&key) else { return };
            // `transposed` is set before `rows` is made: a stripe with rows was offered.
            if stripe.transposed.replace(true) {
                return;
            }
            let fixed: Vec<(usize, &PointVector)> = stripe
                .columns
                .iter()
                .enumerate()
                .take(MAX_ATTRIBUTE)
                .filter_map(|(i, v)| v.as_ref().filter(|v| v.fixed_width()).map(|v| (i, v)))
                .collect();
            if fixed.len() < 2 {
                return;
            }
            spend_open_credit(fixed.iter().map(|(_, v)| open_cost(0, v.rows() as u32)).sum());
            let Some(rows) = StripeRows::transpose(&fixed) else { return };
            let before: usize = fixed.iter().map(|(_, v)| v.heap_bytes()).sum();
            for i in 0..stripe.columns.len() {
                if rows.holds(i) {
                    stripe.columns[i] = None;
                }
            }
            let after = rows.heap_bytes();
            stripe.rows = Some(rows);
            TRANSPOSED.with(|t| t.set(t.get() + 1));
            c.remove_weight(&key, before);
            c.add_weight(&key, after);
        });
    }

    /// Opens the vectors of attributes `from .. to` the row reads that no fetch opened
    /// yet, into the fetch cache.
    ///
    /// # Safety
    /// As `fill`: on the backend thread inside a transaction, while the row's relation
    /// is open.
    unsafe fn open_missing(&mut self, from: usize, to: usize, needed: Option<&[u64]>) {
        let key = self.key();
        let width = self.kinds.len();
        // SAFETY: `fill`'s contract.
        unsafe { self.read_ahead_missing(&key, from, to, needed) };
        // The vectors to open, each with where it lies (a directory entry read once: a
        // new connection's fetch finds each entry in memory it has not touched), and
        // whether it was read where it lies before. The fetch cache is looked up once
        // for the row, and changed once, not per column.
        let (todo, young) = SHARED.with(|c| {
            let c = c.borrow();
            let stripe = c.peek(&key);
            let todo: Vec<Missing> = (from..to)
                .filter(|&i| self.unopened(stripe, i, needed))
                .map(|i| Missing {
                    i,
                    place: self.vector_at(i),
                    was_paged: stripe.is_some_and(|s| s.paged(i).is_some() || s.shared(i).is_some()),
                })
                .collect();
            (todo, stripe.is_none_or(|s| !came_of_age(s.fetches.get(), OPEN_AFTER)))
        });
        if todo.is_empty() {
            return;
        }
        if young {
            self.prefetch_shared_lookups(&todo);
        }
        let mut opened = Vec::with_capacity(todo.len());
        for m in &todo {
            let (at_byte, len, rows) = m.place;
            // Opened outside the cache's borrow: it reads pages, which may raise an ERROR.
            // SAFETY: `self.rel` stays open while the row lives (`fill`'s contract), and we
            // are inside a transaction, so its pages may be read.
            let blocks = unsafe { known_blocks(self.rel, &self.blocks, at_byte, len) };
            let frames_key = self.frames_key(m.i, m.place);
            let mut src = VectorPages {
                rel: self.rel,
                at: at_byte,
                len,
                blocks,
                pins: self.pins.as_deref(),
                frames_key,
            };
            let (o, found) = if young {
                // SAFETY: `fill`'s contract.
                unsafe { self.open_young(m.i, m.place, &mut src) }
            } else {
                spend_open_credit(open_cost(m.place.1, m.place.2));
                OPENED_OF_AGE.set(OPENED_OF_AGE.get() + 1);
                (Opened::Vector(open_vector(&src, self.kinds[m.i], rows)), false)
            };
            if !m.was_paged && !found {
                // A vector read where it lies and now opened whole is counted once.
                OPENED.with(|d| d.set(d.get() + 1));
            }
            opened.push((m.i, o));
        }
        SHARED.with(|c| {
            let mut c = c.borrow_mut();
            c.set_max_weight(fetch_cache_bytes());
            if c.peek(&key).is_none() {
                c.insert(key, Stripe::default(), std::mem::size_of::<Stripe>());
            }
            let stripe = c.get_mut(&key).expect("just inserted");
            let mut more = 0;
            let mut less = 0;
            for (i, o) in opened {
                match o {
                    Opened::Paged(p) => {
                        more += std::mem::size_of::<(usize, PagedVector)>() + p.heap_bytes();
                        stripe.paged.push((i, p));
                    }
                    Opened::Shared(h) => {
                        match stripe.shared.iter_mut().find(|(a, _)| *a == i) {
                            Some(entry) => entry.1 = h,
                            None => {
                                more += std::mem::size_of::<(usize, shared_vectors::Handle)>();
                                stripe.shared.push((i, h));
                            }
                        }
                        stripe.shared_stale.set(false);
                    }
                    Opened::Vector(v) => {
                        let len = width.max(i + 1);
                        if stripe.columns.len() < len {
                            more += (len - stripe.columns.len()) * std::mem::size_of::<Option<PointVector>>();
                            stripe.columns.resize_with(len, || None);
                        }
                        more += v.heap_bytes();
                        stripe.columns[i] = Some(v);
                        if let Some(at) = stripe.paged.iter().position(|(a, _)| *a == i) {
                            let (_, p) = stripe.paged.swap_remove(at);
                            less += std::mem::size_of::<(usize, PagedVector)>() + p.heap_bytes();
                        }
                        if let Some(at) = stripe.shared.iter().position(|(a, _)| *a == i) {
                            stripe.shared.swap_remove(at);
                            less += std::mem::size_of::<(usize, shared_vectors::Handle)>();
                        }
                    }
                }
            }
            c.remove_weight(&key, less);
            c.add_weight(&key, more);
        });
    }

    /// Asks the CPU for the lines the shared cache's lookups of the row's unopened
    /// vectors will read, each round for all columns at once: their sets' tags, then the
    /// headers the tags point to. A new connection's fetch finds its vectors in memory
    /// it has not touched yet, and looked up one column after the other, each waited
    /// for two loads in turn.
    fn prefetch_shared_lookups(&self, todo: &[Missing]) {
        let Some(cache) = shared_vectors_memory::cache().filter(|_| USE_SHARED.get()) else { return };
        if todo.len() < 2 {
            return;
        }
        // Keys are made again for the second round (a few words each, their places known)
        // rather than kept: no allocation per row.
        for m in todo {
            for p in cache.set_addresses(&self.shared_key(m.i, m.place)).into_iter().flatten() {
                prefetch(p);
            }
        }
        for m in todo {
            if let Some(p) = cache.header_address(&self.shared_key(m.i, m.place)) {
                prefetch(p);
            }
        }
    }

    /// Asks the operating system for the pages of every vector `open_missing` is about
    /// to open, one request each, before reading any: a row lies in a vector per column,
    /// and read from disk one after the other each costs the device's latency (on a
    /// scattered index scan, six columns of a row read in turn took twice heap's time).
    /// Only while fetches miss the buffers (`pages::blocks_read` moved since the last
    /// row opened vectors, or for a statement's first, since its fetcher was made: the
    /// index pages that led to it): a fetch of cached data asks for nothing.
    ///
    /// # Safety
    /// As `fill`.
    unsafe fn read_ahead_missing(&self, key: &StripeKey, from: usize, to: usize, needed: Option<&[u64]>) {
        let reads = pages::blocks_read();
        let missed = READS_AT_OPEN.with(|r| r.replace(Some(reads))).is_some_and(|before| before != reads);
        if !missed {
            return;
        }
        // With the statement's columns known, all it reads of the row (the executor asks
        // for its filter's columns first, then the rest): one round of reads, not two.
        let to = if needed.is_some() { self.kinds.len() } else { to };
        let missing: Vec<usize> = SHARED.with(|c| {
            let c = c.borrow();
            let stripe = c.peek(key);
            (from..to).filter(|&i| self.unopened(stripe, i, needed)).collect()
        });
        if missing.len() < 2 {
            return;
        }
        for i in missing {
            let (at, len, _) = self.vector_at(i);
            // SAFETY: this fn's contract.
            let blocks = unsafe { known_blocks(self.rel, &self.blocks, at, len) };
            let (first, _) = layout::locate(at);
            let (last, _) = layout::locate(at + (len as u64).max(1) - 1);
            if last < blocks {
                // SAFETY: this fn's contract: the relation is open, inside a transaction.
                unsafe { prefetch::prefetch_blocks(self.rel, first, last) };
            }
        }
    }

    /// Opens attribute `i`'s vector `src` (of `rows` rows) for the first fetches from its
    /// stripe: found in the shared cache (then true: nothing was read), else put there
    /// (when it admits it), else read where it lies, else opened whole.
    ///
    /// # Safety
    /// As `fill`.
    unsafe fn open_young(
        &self,
        i: usize,
        place: (u64, u32, u32),
        src: &mut VectorPages<'_>,
    ) -> (Opened, bool) {
        let kind = self.kinds[i];
        let rows = place.2;
        // Byte strings stored in more bytes than a vector may take there (compressed,
        // even) have too many distinct values to be kept: not looked up.
        let fits = match kind.physical() {
            None => false,
            Some(PhysicalKind::Bytes) => src.len as usize <= shared_vectors::MAX_BYTES,
            Some(_) => true,
        };
        let cache = shared_vectors_memory::cache()
            .filter(|_| USE_SHARED.get() && fits && rows as usize <= shared_vectors::SLOT_ROWS);
        if let Some(cache) = cache {
            let key = self.shared_key(i, place);
            // Looked up first: what the cache holds it could keep, and whether it could
            // is a read of the vector's header from shared buffers.
            if let Some(h) = cache.find(&key).filter(|h| h.rows() == rows as usize) {
                // The row's value is read once the row's other vectors are open.
                for p in cache.addresses(&h, self.at) {
                    prefetch(p);
                }
                return (Opened::Shared(h), true);
            }
            if cache.admit(&key) {
                return match fill_shared(&cache, &key, src, kind, rows) {
                    Filled::Shared(h) => (Opened::Shared(h), false),
                    Filled::Decoded(v) => (Opened::Vector(v), false),
                };
            }
        }
        let opened = match open_paged_checked(kind, src, src.len, rows) {
            Some(p) => {
                PAGED.with(|d| d.set(d.get() + 1));
                Opened::Paged(p)
            }
            None => Opened::Vector(open_vector(src, kind, rows)),
        };
        (opened, false)
    }

    /// The key under which the shared cache keeps the zstd frames of attribute `i`'s
    /// vector at `place`, decompressed, if it may: a byte string's, with the cache used.
    fn frames_key(&self, i: usize, place: (u64, u32, u32)) -> Option<VectorKey> {
        (self.kinds[i].physical() == Some(PhysicalKind::Bytes) && USE_SHARED.get())
            .then(|| self.shared_key(i, place))
    }

    /// Attribute `i`'s vector of the row's stripe in the shared cache's terms.
    fn shared_key(&self, i: usize, (at, len, _): (u64, u32, u32)) -> VectorKey {
        // SAFETY: `rel` is open while the row lives (`fill`'s contract); MyDatabaseId is
        // set at connection.
        let (database, node) = unsafe { (u32::from(pg_sys::MyDatabaseId), (*self.rel).rd_node.relNode) };
        VectorKey([
            (database as u64) << 32 | u32::from(node) as u64,
            self.storage_id,
            self.group.first_row,
            (self.vector as u64) << 16 | i as u64,
            at ^ (len as u64) << 48,
        ])
    }

    /// Row `at` of attribute `i` read from its stored vector, opened whole for it alone:
    /// for shared units given to another vector between a row's open and its read. A
    /// byte string is copied into `text`.
    ///
    /// # Safety
    /// As `fill`.
    unsafe fn value_from_storage<'t>(&self, i: usize, at: usize, text: &'t mut Vec<u8>) -> PointValue<'t> {
        let (_, _, rows) = self.vector_at(i);
        // SAFETY: this fn's contract.
        let v = open_vector(&unsafe { self.vector_pages(i) }, self.kinds[i], rows);
        if at >= v.rows() {
            crate::storage::shared::error::data_corrupted("row beyond its vector");
        }
        match v.value(at) {
            PointValue::Null => PointValue::Null,
            PointValue::Int(x) => PointValue::Int(x),
            PointValue::Float32(x) => PointValue::Float32(x),
            PointValue::Float64(x) => PointValue::Float64(x),
            PointValue::Scaled { m, scale } => PointValue::Scaled { m, scale },
            PointValue::Bytes(b) => {
                text.clear();
                text.extend_from_slice(b);
                PointValue::Bytes(text)
            }
        }
    }

    /// Where attribute `i`'s vector of the row's stripe is stored: its stream offset,
    /// length and rows.
    fn vector_at(&self, i: usize) -> (u64, u32, u32) {
        let Some(chunk) = self.group.chunk(i as i16 + 1) else {
            crate::storage::shared::error::data_corrupted("column missing from its row group")
        };
        let Some((rows, offset, len)) = chunk.vectors.place(self.vector) else {
            crate::storage::shared::error::data_corrupted("vector missing from chunk")
        };
        (chunk.offset + offset as u64, len, rows)
    }

    /// Attribute `i`'s vector of the row's stripe where it lies. (It was opened by a
    /// fetch that may have been another statement's, which knew the relation to be
    /// longer than this one's fetcher has asked yet.)
    ///
    /// # Safety
    /// As `fill`.
    unsafe fn vector_pages(&self, i: usize) -> VectorPages<'_> {
        let (at, len, _) = self.vector_at(i);
        // SAFETY: this fn's contract.
        let blocks = unsafe { known_blocks(self.rel, &self.blocks, at, len) };
        let frames_key = self.frames_key(i, (at, len, 0));
        VectorPages { rel: self.rel, at, len, blocks, pins: self.pins.as_deref(), frames_key }
    }
}

/// A vector of a row that `open_missing` is to open: attribute index, where it lies
/// (`vector_at`), and whether its stripe had it read where it lies or in the shared
/// cache before.
struct Missing {
    i: usize,
    place: (u64, u32, u32),
    was_paged: bool,
}

/// A vector opened for a fetch: read where it lies, or kept in memory.
enum Opened {
    Paged(PagedVector),
    Shared(shared_vectors::Handle),
    Vector(PointVector),
}

/// A shared cache word as the value it is.
fn shared_value(kind: WordKind, word: Option<u64>) -> PointValue<'static> {
    let Some(w) = word else { return PointValue::Null };
    match kind {
        WordKind::Int => PointValue::Int(w as i64),
        WordKind::Float32 => PointValue::Float32(f32::from_bits(w as u32)),
        WordKind::Float64 => PointValue::Float64(f64::from_bits(w)),
        WordKind::Scaled(scale) => PointValue::Scaled { m: w as i64, scale },
        WordKind::Bytes => unreachable!("byte strings are read with read_bytes"),
    }
}

/// What `fill_shared` made of a vector: kept in the shared cache, or (when the cache
/// does not keep it) opened in this backend's memory, not decoded a second time.
enum Filled {
    Shared(shared_vectors::Handle),
    Decoded(PointVector),
}

/// Decodes the stored vector `src` (of `rows` rows, values of `kind`, which has a
/// physical kind) into the shared cache under `key`.
fn fill_shared(
    cache: &SharedVectors,
    key: &VectorKey,
    src: &mut VectorPages<'_>,
    kind: ColumnKind,
    rows: u32,
) -> Filled {
    let Some(physical) = kind.physical() else { unreachable!("fill_shared of a kind with no values") };
    SCRATCH.with(|s| {
        let (bytes, scratch) = &mut *s.borrow_mut();
        src.read_all(bytes).unwrap_or_else(|e| crate::storage::shared::error::data_corrupted(&e.to_string()));
        scratch.keep_scaled = true;
        scratch.keep_dictionary = true;
        scratch.keep_images = false;
        decode_vector(bytes, physical, scratch)
            .unwrap_or_else(|e| crate::storage::shared::error::data_corrupted(&e.to_string()));
        if scratch.rows != rows {
            crate::storage::shared::error::data_corrupted(
                "vector row count differs from its directory entry",
            );
        }
        let n = rows as usize;
        let mut validity = [0u64; shared_vectors::SLOT_ROWS / 64];
        let valid = scratch.validity.as_deref().map(|v| {
            set_validity_bits(&v[..v.len().min(n)], &mut validity);
            &validity[..]
        });
        let kept = match (&scratch.scaled, &scratch.dictionary, &scratch.values) {
            (Some(sc), _, _) if sc.m.len() >= n => {
                cache.fill(key, WordKind::Scaled(sc.scale), n, sc.m.iter().map(|&m| m as u64), valid)
            }
            (Some(_), _, _) => None,
            (None, Some(d), _) => cache.fill_dictionary(key, n, &d.codes, &d.offsets, &d.data, valid),
            (None, None, DecodedValues::Bytes { offsets, data }) => {
                cache.fill_strings(key, n, offsets, data, valid)
            }
            (None, None, DecodedValues::Int(v)) if v.len() >= n => {
                cache.fill(key, WordKind::Int, n, v.iter().map(|&x| x as u64), valid)
            }
            (None, None, DecodedValues::Float32(v)) if v.len() >= n => {
                cache.fill(key, WordKind::Float32, n, v.iter().map(|&x| x.to_bits() as u64), valid)
            }
            (None, None, DecodedValues::Float64(v)) if v.len() >= n => {
                cache.fill(key, WordKind::Float64, n, v.iter().map(|&x| x.to_bits()), valid)
            }
            _ => None,
        };
        match kept {
            Some(h) => Filled::Shared(h),
            None => Filled::Decoded(PointVector::decoded(scratch.take_rows())),
        }
    })
}

/// The index of the group of `groups` (ordered by first row; `span` gives a group's
/// first row and row count) holding `row`, if one does. Fetches of one index scan often
/// stay in one row group, so `last` (the previous answer) is tried first; then the
/// group a table loaded in full row groups puts the row in; a binary search only after
/// these.
fn group_index<G>(groups: &[G], span: impl Fn(&G) -> (u64, u64), last: usize, row: u64) -> Option<usize> {
    let holds =
        |i: usize| groups.get(i).map(&span).is_some_and(|(first, count)| first <= row && row < first + count);
    let (first, count) = span(groups.first()?);
    let guess = (row.checked_sub(first)? / count.max(1)) as usize;
    let i = if holds(last) {
        last
    } else if holds(guess) {
        guess
    } else {
        groups.partition_point(|g| span(g).0 <= row).checked_sub(1)?
    };
    holds(i).then_some(i)
}

/// Asks the CPU to load the cache line at `p` (a hint: no fault, whatever `p` is).
#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

thread_local! {
    /// `pages::blocks_read` when a row last opened vectors, or a fetcher was made
    /// (`read_ahead_missing`).
    static READS_AT_OPEN: Cell<Option<u64>> = const { Cell::new(None) };
    /// What the fetcher made last may still open (`OPEN_CREDIT_START`).
    static OPEN_CREDIT: Cell<i64> = const { Cell::new(OPEN_CREDIT_START) };
    /// A stored vector's bytes and decode space, reused by every fetch of the backend.
    static SCRATCH: RefCell<(Vec<u8>, DecodedVector)> = RefCell::new(Default::default());
    /// Vectors this backend's fetches opened (`pgcolumnar.fetch_decoded_vectors()`).
    static OPENED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Of those, the ones first read where they lie (`pgcolumnar.fetch_vectors_read_in_place()`).
    static PAGED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Stripes this backend's fetches made rows (`pgcolumnar.fetch_stripes_made_rows()`).
    static TRANSPOSED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Vectors opened whole because their stripe came of age (`vectors_opened_of_age`).
    static OPENED_OF_AGE: Cell<u64> = const { Cell::new(0) };
}

/// How many column vectors row fetches have opened in this backend: read where they
/// lie, or read, decompressed and decoded where single rows cannot be read in place
/// (a vector first read where it lies and later opened whole counts once).
pub fn decoded_vectors() -> u64 {
    OPENED.with(|d| d.get())
}

/// How many of `decoded_vectors` were read where they lie (in shared buffers) by the
/// first fetches from their stripe.
pub fn vectors_read_in_place() -> u64 {
    PAGED.with(|d| d.get())
}

/// How many vectors row fetches have opened whole in this backend because their stripe
/// came of age (`open_after`, `SHARED_UNTIL`), on the fetchers' credit.
pub fn vectors_opened_of_age() -> u64 {
    OPENED_OF_AGE.get()
}

/// How many stripes row fetches have made rows (`StripeRows`) in this backend.
pub fn stripes_made_rows() -> u64 {
    TRANSPOSED.with(|t| t.get())
}

/// Reads the stored vector `src` and opens it for single-row reads, checking it against
/// its directory entry's `rows`.
fn open_vector(src: &VectorPages<'_>, kind: ColumnKind, rows: u32) -> PointVector {
    SCRATCH.with(|s| {
        let (bytes, scratch) = &mut *s.borrow_mut();
        src.read_all(bytes).unwrap_or_else(|e| crate::storage::shared::error::data_corrupted(&e.to_string()));
        open_checked(kind, bytes, rows, scratch)
    })
}

/// The relation's size in blocks, `blocks` as last known or asked again when the `len`
/// bytes at stream offset `at` lie beyond it.
///
/// # Safety
/// `rel` must be an open relation, on the backend thread.
unsafe fn known_blocks(rel: pg_sys::Relation, blocks: &Cell<u32>, at: u64, len: u32) -> u32 {
    let (last_block, _) = layout::locate(at + (len as u64).max(1) - 1);
    if last_block >= blocks.get() {
        // SAFETY: this fn's contract.
        blocks.set(unsafe { pages::nblocks(rel) });
    }
    blocks.get()
}

impl Fetcher {
    /// # Safety
    /// `rel` must be an open relation, locked by the caller; call on the backend thread
    /// inside a transaction. `rel` must stay open for the fetcher's whole life (and the rows
    /// it fetches): they read its pages.
    pub unsafe fn new(rel: pg_sys::Relation) -> Fetcher {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller, and we are on the backend thread inside a transaction, so the
        // metadata reads, transaction-status checks and slot calls are allowed.
        unsafe {
            let kinds = datum::relation_kinds(rel);
            let storage_id = pages::storage_id(rel);
            catalog::note_storage((*rel).rd_id, storage_id);
            // A statement's first row is read ahead when the reads since the fetcher was
            // made (the index's pages, the metadata) missed the buffers.
            READS_AT_OPEN.with(|r| r.set(Some(pages::blocks_read())));
            OPEN_CREDIT.set(OPEN_CREDIT_START);
            Fetcher {
                rel,
                held: ImageArena::default(),
                blocks: Rc::new(Cell::new(0)),
                kinds,
                storage_id,
                groups: Vec::new(),
                chunks_attached: Vec::new(),
                last_group: 0,
                deleted_rows: Vec::new(),
                groups_for: None,
                probed_for: None,
                probes: 0,
                probed_groups: Vec::new(),
                probed_buckets: HashMap::new(),
                probed_group_marks: HashMap::new(),
                row_probes: HashMap::new(),
                needed: None,
                pins: None,
            }
        }
    }

    /// Has this fetcher (an index scan's) keep the buffers its rows read pinned from
    /// row to row, until `release_pins`.
    pub fn keep_pins(&mut self) {
        if self.pins.is_none() {
            self.pins = Some(Rc::new(RefCell::new(PagePins::new(self.rel))));
        }
    }

    /// Lets go of the kept pins (a rescan); later fetches keep pins again.
    ///
    /// # Safety
    /// As `PagePins::release`: under the resource owner of the fetches, with no ERROR
    /// since.
    pub unsafe fn release_pins(&mut self) {
        if let Some(p) = &self.pins {
            // SAFETY: this fn's contract.
            unsafe { p.borrow_mut().release() }
        }
    }

    /// Lets go of the kept pins for good: the scan ends (a row still in a slot reads its
    /// pages without keeping them).
    ///
    /// # Safety
    /// As `release_pins`.
    pub unsafe fn close_pins(&mut self) {
        if let Some(p) = &self.pins {
            // SAFETY: this fn's contract.
            unsafe { p.borrow_mut().close() }
        }
    }

    /// The row group holding `row` as `snapshot` sees it. An MVCC snapshot's first few
    /// fetches probe for just that group (a point lookup reads one index entry of
    /// metadata); after that the whole list is loaded once and cached for the snapshot.
    /// Other kinds (dirty, self, any: uniqueness checks, triggers, row locks) see this
    /// transaction's rows too, so a buffered row is written out first. The group comes
    /// with the chunks of the attributes numbered in `attnums` (sorted; None: all) at
    /// least.
    unsafe fn group_for(
        &mut self,
        row: u64,
        snapshot: pg_sys::Snapshot,
        attnums: Option<&[i16]>,
    ) -> Option<RowGroupMeta> {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `self.rel` is still open (`Fetcher::new`
        // requires it for the fetcher's life), and we are on the backend thread inside a
        // transaction, so the metadata reads, transaction-status checks and slot calls are
        // allowed.
        unsafe {
            if is_mvcc(snapshot) {
                let key = (
                    snapshot as usize,
                    (*snapshot).curcid,
                    (*snapshot).xmin.into_inner(),
                    (*snapshot).xmax.into_inner(),
                );
                if self.groups_for != Some(key) {
                    if self.probed_for != Some(key) {
                        self.probed_for = Some(key);
                        self.probes = 0;
                        self.probed_groups.clear();
                        self.probed_buckets.clear();
                        self.probed_group_marks.clear();
                        self.row_probes.clear();
                    }
                    if let Some(g) =
                        self.probed_groups.iter_mut().find(|g| row.wrapping_sub(g.first_row) < g.row_count)
                    {
                        if !g.chunks.covers(attnums) {
                            catalog::attach_chunks_for(self.storage_id, g, snapshot, attnums);
                        }
                        return Some(g.clone());
                    }
                    if self.probes < PROBES_BEFORE_LOADING_ALL {
                        self.probes += 1;
                        let g = catalog::load_group_of_row(self.storage_id, row, snapshot, attnums);
                        self.probed_groups.extend(g.clone());
                        return g;
                    }
                    // Chunks are attached to the groups fetches reach, not to all of them:
                    // a first query on a large table would read every directory otherwise.
                    self.groups = catalog::load_row_groups(self.storage_id, snapshot, false);
                    self.chunks_attached = vec![false; self.groups.len()];
                    self.deleted_rows = catalog::load_deleted_rows(self.storage_id, snapshot);
                    self.groups_for = Some(key);
                }
                let i = self.group_index(row)?;
                let g = &mut self.groups[i];
                if !self.chunks_attached[i] || !g.chunks.covers(attnums) {
                    catalog::attach_chunks_for(self.storage_id, g, snapshot, attnums);
                    self.chunks_attached[i] = true;
                }
                return Some(g.clone());
            }
            forget_writers(snapshot);
            if !pg_sys::IsInParallelMode() && write_buffer::holds_row((*self.rel).rd_id, row) {
                write_buffer::flush_for_read(self.rel);
            }
            let any = !snapshot.is_null() && (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_ANY;
            if any {
                if let Some(g) = any_group_cached(self.storage_id, row) {
                    return Some(g);
                }
            }
            // Cached for SnapshotAny below with every attribute's chunks.
            let attnums = if any { None } else { attnums };
            let mut group =
                catalog::load_group_of_row(self.storage_id, row, &raw mut pg_sys::SnapshotSelfData, attnums);
            if any {
                if group.is_none() {
                    // A row VACUUM moved away (merging its row group) is still there for
                    // SnapshotAny: an older snapshot's UPDATE reads it before finding out.
                    group = catalog::load_group_of_row(self.storage_id, row, snapshot, attnums);
                }
                if let Some(g) = &group {
                    cache_any_group(self.storage_id, g);
                }
            }
            group
        }
    }

    /// The index in `groups` of the group holding `row`, if any.
    fn group_index(&mut self, row: u64) -> Option<usize> {
        let i = group_index(&self.groups, |g| (g.first_row, g.row_count), self.last_group, row)?;
        self.last_group = i;
        Some(i)
    }

    /// Where row `offset` of row group `g` is stored: the same position, unless a flush
    /// stored the group in sort_by order (then through the order column's inverse,
    /// kept per backend).
    unsafe fn position_of(&mut self, g: &RowGroupMeta, offset: usize) -> usize {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // and `self.rel` is still open (`Fetcher::new` requires it for the fetcher's life),
        // so the metadata reads and transaction-status checks are allowed.
        unsafe {
            let Some(chunk) = &g.chunks.order else { return offset };
            let key = (self.storage_id, g.first_row);
            let inverse = match INVERSE_ORDERS.with(|c| c.borrow_mut().get(&key).cloned()) {
                Some(KnownOrder::Inverse(inv)) => inv,
                known => {
                    let searches = match known {
                        Some(KnownOrder::Searched(n)) => n,
                        _ => 0,
                    };
                    if searches < SEARCHES_BEFORE_INVERSE {
                        let Ok(wanted) = u32::try_from(offset) else {
                            crate::storage::shared::error::data_corrupted("row beyond its row group")
                        };
                        let at = SCRATCH.with(|s| {
                            let (bytes, scratch) = &mut *s.borrow_mut();
                            find_in_order(
                                self.rel,
                                chunk,
                                g.row_count,
                                wanted,
                                std::ptr::null_mut(),
                                bytes,
                                scratch,
                            )
                        });
                        INVERSE_ORDERS
                            .with(|c| c.borrow_mut().insert(key, KnownOrder::Searched(searches + 1)));
                        return at;
                    }
                    let inv = SCRATCH.with(|s| {
                        load_order_inverse(
                            self.rel,
                            chunk,
                            g.row_count,
                            std::ptr::null_mut(),
                            &mut s.borrow_mut().1,
                        )
                    });
                    INVERSE_ORDERS.with(|c| c.borrow_mut().insert(key, KnownOrder::Inverse(inv.clone())));
                    inv
                }
            };
            inverse.get(offset).map_or_else(
                || crate::storage::shared::error::data_corrupted("row beyond its row group"),
                |&p| p as usize,
            )
        }
    }

    /// Whether a dirty or self snapshot meets a row this backend deleted and has not
    /// written out yet: an UPDATE's uniqueness check of the new version meets the old
    /// one, and needs no metadata lookup to know it is gone.
    unsafe fn deleted_by_this_statement(&self, row: u64, snapshot: pg_sys::Snapshot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `self.rel` is still open (`Fetcher::new`
        // requires it for the fetcher's life), and we are on the backend thread inside a
        // transaction, so the metadata reads, transaction-status checks and slot calls are
        // allowed.
        unsafe {
            if snapshot.is_null()
                || is_mvcc(snapshot)
                || (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_ANY
                || pending_marks::pending_delete(self.storage_id, row).is_none()
            {
                return false;
            }
            forget_writers(snapshot);
            true
        }
    }

    /// Whether `snapshot` sees row `row` of group `g` deleted. MVCC snapshots use the
    /// loaded marks (or probe the row's); SnapshotAny sees every row; the others (self,
    /// dirty) see deletes that committed or are this transaction's, and a dirty snapshot
    /// reports a delete still in progress elsewhere in its `xmax`, for the caller to
    /// wait on.
    unsafe fn deleted(&mut self, g: &RowGroupMeta, row: u64, snapshot: pg_sys::Snapshot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `self.rel` is still open (`Fetcher::new`
        // requires it for the fetcher's life), and we are on the backend thread inside a
        // transaction, so the metadata reads, transaction-status checks and slot calls are
        // allowed.
        unsafe {
            if snapshot.is_null() || (*snapshot).snapshot_type == pg_sys::SnapshotType::SNAPSHOT_ANY {
                return false;
            }
            if masked(g, row) {
                return true;
            }
            if let Some(cid) = pending_marks::pending_delete(self.storage_id, row) {
                if pending_marks::own_delete_visible(cid, snapshot) {
                    return true;
                }
            }
            if is_mvcc(snapshot) {
                return if self.groups_for.is_some() && self.probed_for == self.groups_for {
                    self.deleted_rows.binary_search(&row).is_ok()
                } else {
                    self.probed_deleted(g, row, snapshot)
                };
            }
            // Another backend may still be collecting deletes of this row's bucket. Those
            // are uncommitted, so only a dirty snapshot cares; it is a uniqueness or
            // exclusion check, which may hold an index page's buffer lock, so it must not
            // wait here (see pending_marks::begin_check). Neither may SnapshotSelf, which
            // nbtree also uses under the page lock.
            let relid = (*self.rel).rd_id;
            if !is_dirty(snapshot) {
                return self.deleted_by_marks(row, snapshot);
            }
            let access = pending_marks::begin_check(relid, self.storage_id, row, snapshot);
            if access == pending_marks::CheckAccess::Busy {
                return false;
            }
            let deleted = self.deleted_by_marks(row, snapshot);
            pending_marks::end_check(relid, row, access);
            deleted
        }
    }

    /// The attribute numbers of the columns read of rows fetched into `slot` (None: all),
    /// worked out once per set of them.
    ///
    /// # Safety
    /// `slot` must be a valid tuple slot.
    unsafe fn needed_attnums(&mut self, slot: *mut pg_sys::TupleTableSlot) -> Option<Rc<[i16]>> {
        // SAFETY: `slot` is a valid tuple slot (this fn's contract).
        let bits = unsafe { crate::storage::relation::slot::needed_bits(slot) }?;
        // SAFETY: as above; the slot's descriptor is valid while it is.
        let natts = unsafe { (*(*slot).tts_tupleDescriptor).natts } as usize;
        let id = (slot as usize, bits.as_ptr() as usize, natts);
        match &self.needed {
            Some((known, attnums)) if *known == id => Some(attnums.clone()),
            _ => {
                let attnums: Rc<[i16]> = crate::storage::relation::slot::needed_attnums(bits, natts).into();
                self.needed = Some((id, attnums.clone()));
                Some(attnums)
            }
        }
    }

    /// Whether MVCC `snapshot`, the one the fetcher is probing for, sees marks deleting
    /// `row` of group `g`: from the deleted rows of the group's marks, read once per group
    /// (an index scan of a few rows in each of 17 row groups read the marks of 211 mark
    /// buckets one scan each), or of its mark bucket when the group has many. A group with
    /// more than `MARKS_READ_FIRST` marks has its first few rows looked up alone.
    ///
    /// # Safety
    /// As for `deleted`.
    unsafe fn probed_deleted(&mut self, g: &RowGroupMeta, row: u64, snapshot: pg_sys::Snapshot) -> bool {
        let storage_id = self.storage_id;
        let last = g.first_row + g.row_count.max(1) - 1;
        if !self.probed_group_marks.contains_key(&g.first_row) {
            let probes = self.row_probes.entry(g.first_row).or_insert(0);
            *probes += 1;
            if *probes == 1 && !skip_crowded_probe((storage_id, g.first_row)) {
                // SAFETY: as for this fn (its contract is `deleted`'s).
                let few = unsafe {
                    catalog::deleted_rows_in_range(storage_id, g.first_row, last, snapshot, MARKS_READ_FIRST)
                };
                if let Some(rows) = few {
                    let deleted = rows.binary_search(&row).is_ok();
                    self.probed_group_marks.insert(g.first_row, Some(rows));
                    return deleted;
                }
                CROWDED.with(|c| c.borrow_mut().insert((storage_id, g.first_row), SKIP_CROWDED_PROBES));
            }
            if *probes <= ROW_PROBES_BEFORE_GROUP_MARKS {
                // SAFETY: as above.
                return unsafe { catalog::row_deleted(storage_id, row, snapshot) };
            }
        }
        let in_group = self.probed_group_marks.entry(g.first_row).or_insert_with(|| {
            // SAFETY: as for this fn (its contract is `deleted`'s).
            unsafe {
                catalog::deleted_rows_in_range(storage_id, g.first_row, last, snapshot, MARKS_KEPT_PER_GROUP)
            }
        });
        if let Some(rows) = in_group {
            return rows.binary_search(&row).is_ok();
        }
        let start = bucket_start(row);
        let rows = self.probed_buckets.entry(start).or_insert_with(|| {
            // SAFETY: as above.
            unsafe { catalog::deleted_rows_in_bucket(storage_id, start, snapshot, MARKS_KEPT_PER_BUCKET) }
        });
        match rows {
            Some(rows) => rows.binary_search(&row).is_ok(),
            // SAFETY: as above.
            None => unsafe { catalog::row_deleted(storage_id, row, snapshot) },
        }
    }

    /// Whether a committed or own delete mark on `row` is there for a non-MVCC snapshot;
    /// a delete still in progress elsewhere goes into a dirty snapshot's `xmax`.
    unsafe fn deleted_by_marks(&self, row: u64, snapshot: pg_sys::Snapshot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `self.rel` is still open (`Fetcher::new`
        // requires it for the fetcher's life), and we are on the backend thread inside a
        // transaction, so the metadata reads, transaction-status checks and slot calls are
        // allowed.
        unsafe {
            for m in pending_marks::marks_on_any(self.storage_id, row) {
                if m.kind != MarkKind::Delete {
                    continue;
                }
                if pg_sys::TransactionIdIsCurrentTransactionId(m.xmin) {
                    return true;
                }
                if pg_sys::TransactionIdIsInProgress(m.xmin) {
                    if is_dirty(snapshot) {
                        (*snapshot).xmax = m.xmin;
                        // The caller waits for it next; it may be waiting for our bucket.
                        pending_marks::let_go();
                    }
                } else if pg_sys::TransactionIdDidCommit(m.xmin) {
                    return true;
                }
            }
            false
        }
    }

    /// Whether no snapshot can see row `row` of group `g` any more, as heap's
    /// HeapTupleIsSurelyDead: its delete is folded into the group's mask (VACUUM folds
    /// only deletes every snapshot sees), or committed by a transaction that no running
    /// snapshot can still see as in progress. The index scan then marks the entry dead
    /// and later scans skip it: without this, every UPDATE of a key left an entry that
    /// each later lookup of the key visited (and decoded metadata for) until VACUUM.
    unsafe fn surely_dead(&self, g: &RowGroupMeta, row: u64) -> bool {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // and `self.rel` is still open (`Fetcher::new` requires it for the fetcher's life),
        // so the metadata reads and transaction-status checks are allowed.
        unsafe {
            if masked(g, row) {
                return true;
            }
            pending_marks::marks_on_any(self.storage_id, row)
                .iter()
                .any(|m| super::index_delete::deletes_for_everyone(self.rel, m.kind, m.xmin))
        }
    }

    /// Whether the row at `tid` exists for `snapshot`.
    ///
    /// # Safety
    /// `tid` must be a valid item pointer; `snapshot` must be a valid snapshot (or NULL where
    /// this fn's docs allow it); call on the backend thread inside a transaction, while the
    /// relation the fetcher was made for is still open.
    pub unsafe fn visible(&mut self, tid: &pg_sys::ItemPointerData, snapshot: pg_sys::Snapshot) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `tid` is a valid item pointer;
        // `snapshot` is a valid snapshot (or NULL where this fn's docs allow it); `self.rel`
        // is still open (`Fetcher::new` requires it for the fetcher's life), and we are on
        // the backend thread inside a transaction, so the metadata reads, transaction-status
        // checks and slot calls are allowed.
        unsafe {
            let Some(row) = tid_row(tid) else { return false };
            self.group_for(row, snapshot, Some(&[])).is_some_and(|g| !self.deleted(&g, row, snapshot))
        }
    }

    /// A row in no row group `snapshot` sees. For a dirty snapshot (uniqueness and
    /// exclusion checks), a row another transaction is still writing exists: that
    /// transaction goes in the snapshot's `xmin` so the caller waits and checks again;
    /// its values are not known here, the slot gets NULLs, which callers do not use
    /// before waiting. A row whose insert rolled back, or whose row group no snapshot can
    /// see any more (merged away by VACUUM), sets `all_dead` (when asked), so the index
    /// scan marks its entry dead and later scans skip it.
    unsafe fn outside_groups(
        &mut self,
        row: u64,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
        all_dead: *mut bool,
    ) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `slot` is a valid tuple slot; `all_dead`
        // is valid for the reads and writes made through it here (NULL only where the API
        // allows it); `self.rel` is still open (`Fetcher::new` requires it for the fetcher's
        // life), and we are on the backend thread inside a transaction, so the metadata
        // reads, transaction-status checks and slot calls are allowed.
        unsafe {
            if snapshot.is_null() {
                return false;
            }
            let checking = is_dirty(snapshot);
            if !checking && all_dead.is_null() {
                return false;
            }
            let mut own = pg_sys::SnapshotData {
                snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY,
                ..Default::default()
            };
            let dirty = if checking { snapshot } else { &raw mut own };
            let running = catalog::reserver_running(self.storage_id, row, dirty);
            if !running && !all_dead.is_null() {
                *all_dead = !catalog::row_may_be_seen(self.rel, self.storage_id, row);
            }
            if !(running && checking) {
                return false;
            }
            // The caller waits for the writer next; it may be waiting for our bucket.
            pending_marks::let_go();
            pg_sys::ExecClearTuple(slot);
            for i in 0..(*(*slot).tts_tupleDescriptor).natts as usize {
                *(*slot).tts_values.add(i) = pg_sys::Datum::from(0usize);
                *(*slot).tts_isnull.add(i) = true;
            }
            pg_sys::ExecStoreVirtualTuple(slot);
            (*slot).tts_tid = row_tid(row);
            true
        }
    }

    /// Stores the row at `tid` in `slot` if `snapshot` sees it.
    ///
    /// # Safety
    /// `tid` must be a valid item pointer; `snapshot` must be a valid snapshot (or NULL where
    /// this fn's docs allow it); `slot` must be a valid tuple slot; call on the backend
    /// thread inside a transaction, while the relation the fetcher was made for is still
    /// open.
    pub unsafe fn fetch(
        &mut self,
        tid: &pg_sys::ItemPointerData,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `tid` is a valid item pointer;
        // `snapshot` is a valid snapshot (or NULL where this fn's docs allow it); `slot` is a
        // valid tuple slot; `self.rel` is still open (`Fetcher::new` requires it for the
        // fetcher's life), and we are on the backend thread inside a transaction, so the
        // metadata reads, transaction-status checks and slot calls are allowed.
        unsafe { self.fetch_or_dead(tid, snapshot, slot, std::ptr::null_mut()) }
    }

    /// `fetch`, also setting `all_dead` (if not null) when no transaction can ever see
    /// the row.
    ///
    /// # Safety
    /// `tid` must be a valid item pointer; `snapshot` must be a valid snapshot (or NULL where
    /// this fn's docs allow it); `slot` must be a valid tuple slot; `all_dead` must be valid
    /// for the reads and writes made through it here (NULL only where the API allows it);
    /// call on the backend thread inside a transaction, while the relation the fetcher was
    /// made for is still open.
    pub unsafe fn fetch_or_dead(
        &mut self,
        tid: &pg_sys::ItemPointerData,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
        all_dead: *mut bool,
    ) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `tid` is a valid item pointer;
        // `snapshot` is a valid snapshot (or NULL where this fn's docs allow it); `slot` is a
        // valid tuple slot; `all_dead` is valid for the reads and writes made through it here
        // (NULL only where the API allows it); `self.rel` is still open (`Fetcher::new`
        // requires it for the fetcher's life), and we are on the backend thread inside a
        // transaction, so the metadata reads, transaction-status checks and slot calls are
        // allowed.
        unsafe {
            let Some(row) = tid_row(tid) else { return false };
            if self.deleted_by_this_statement(row, snapshot) {
                return false;
            }
            // Only the chunks of the columns read: an index scan reaching a row group
            // for two columns of a wide table need not parse every column's directory.
            let desc = (*slot).tts_tupleDescriptor;
            let attnums = self.needed_attnums(slot);
            let Some(g) = self.group_for(row, snapshot, attnums.as_deref()) else {
                return self.outside_groups(row, snapshot, slot, all_dead);
            };
            if self.deleted(&g, row, snapshot) {
                if !all_dead.is_null() && self.surely_dead(&g, row) {
                    *all_dead = true;
                }
                return false;
            }
            let in_group = self.position_of(&g, (row - g.first_row) as usize);
            let (xmin, cmin) = g.writer;
            // The row is read as the slot's descriptor describes it (see `Reader::read_as`);
            // that is the relation's, whose kinds are cached, but for a caller holding an
            // older one.
            let kinds = if desc == (*self.rel).rd_att {
                self.kinds.clone()
            } else {
                datum::column_kinds(desc).into()
            };
            let mut lazy = LazyRow {
                rel: self.rel,
                desc,
                storage_id: self.storage_id,
                kinds,
                group: g,
                vector: in_group / VECTOR_ROWS,
                at: in_group % VECTOR_ROWS,
                blocks: self.blocks.clone(),
                pins: self.pins.clone(),
                images: ImageArena::default(),
            };
            pg_sys::ExecClearTuple(slot);
            if crate::storage::relation::slot::is_columnar(slot) {
                // Columns are decoded when the executor first asks for them.
                pg_sys::ExecStoreVirtualTuple(slot);
                crate::storage::relation::slot::set_lazy(slot, lazy);
            } else {
                let natts = lazy.kinds.len();
                // The previous row's values are gone with the slot's clear: its arena is
                // reused, and keeps this row's values until the next fetch.
                self.held.clear();
                lazy.use_arena(std::mem::take(&mut self.held));
                lazy.fill(0, natts, (*slot).tts_values, (*slot).tts_isnull, None);
                self.held = std::mem::take(&mut lazy.images);
                pg_sys::ExecStoreVirtualTuple(slot);
            }
            crate::storage::relation::slot::set_writer(slot, xmin, cmin);
            (*slot).tts_tid = row_tid(row);
            (*slot).tts_tableOid = (*self.rel).rd_id;
            true
        }
    }
}

#[cfg(test)]
mod unit_tests {
    use super::{group_index, skip_crowded_probe, CROWDED, SKIP_CROWDED_PROBES};

    #[test]
    fn a_crowded_group_is_probed_again_after_its_skips() {
        let key = (7, 122_880);
        assert!(!skip_crowded_probe(key), "unknown groups are probed");
        CROWDED.with(|c| c.borrow_mut().insert(key, SKIP_CROWDED_PROBES));
        for _ in 0..SKIP_CROWDED_PROBES {
            assert!(skip_crowded_probe(key));
        }
        assert!(!skip_crowded_probe(key), "probed again once the skips are used");
        assert!(!skip_crowded_probe(key), "and forgotten until a probe finds it crowded again");
        assert!(!skip_crowded_probe((8, 122_880)), "by table");
    }

    #[test]
    fn rows_find_their_group_by_guess_last_or_search() {
        // Full groups of 100, then a short one, a gap (a group VACUUM freed), small ones.
        let groups = [(0u64, 100u64), (100, 100), (200, 100), (300, 40), (400, 10), (410, 5), (500, 100)];
        let span = |g: &(u64, u64)| *g;
        let find = |row: u64, last: usize| group_index(&groups, span, last, row);
        for (row, want) in [
            (0, Some(0)),
            (99, Some(0)),
            (100, Some(1)),
            (250, Some(2)),
            (339, Some(3)),
            (340, None),
            (399, None),
            (400, Some(4)),
            (409, Some(4)),
            (410, Some(5)),
            (415, None),
            (499, None),
            (500, Some(6)),
            (599, Some(6)),
            (600, None),
            (u64::MAX, None),
        ] {
            for last in [0, 3, 6, 99] {
                assert_eq!(find(row, last), want, "row {row}, last {last}");
            }
        }
        assert_eq!(group_index(&groups[..0], span, 0, 5), None);
        // Groups that start past row 0.
        let later = [(1000u64, 50u64), (1050, 50)];
        assert_eq!(group_index(&later, span, 0, 999), None);
        assert_eq!(group_index(&later, span, 0, 1075), Some(1));
    }
}

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// The query's result, on `table`.
    fn sums(table: &str) -> String {
        Spi::get_one::<String>(&format!(
            "SELECT concat_ws('|', sum(v), sum(w), max(c)) FROM {table} WHERE k = 7"
        ))
        .unwrap()
        .unwrap()
    }

    /// A query reaching 80 stripes a row each, repeated: at its ninth run the stripes'
    /// vectors read where they lie come of age together, and it opens those its credit
    /// pays for (128 units, one more a row, 3 a vector of 2,048 integers: 26 rows); the runs
    /// after open the rest. The framed text waits for its 127th fetch. Every run returns
    /// heap's rows.
    #[pg_test]
    fn stripes_that_come_of_age_together_are_opened_on_credit() {
        Spi::run(
            "CREATE TABLE oc (id int, k int, v bigint, w int, c text) USING columnar;
             INSERT INTO oc SELECT g, g % 2048, hashint4(g), hashint4(-g) % 1000, 'cmt ' || md5(g::text)
               FROM generate_series(0, 2048 * 80 - 1) g;
             CREATE INDEX ON oc (k);
             CREATE TABLE och AS SELECT * FROM oc;
             SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
             SET LOCAL pgcolumnar.enable_columnar_scan = off;
             SET LOCAL pgcolumnar.enable_shared_fetch_cache = off",
        )
        .unwrap();
        // Read where they lie: bit-packed integers, short images in zstd frames.
        let encodings = Spi::get_one::<String>(
            "SELECT string_agg(DISTINCT attname || ' ' || encodings, ', ') FROM pgcolumnar.stats('oc')
              WHERE attname IN ('v', 'w', 'c')",
        )
        .unwrap()
        .unwrap();
        assert_eq!(encodings, "c shortimages:80 +zstdframes:80, v bitpack:80, w bitpack:80");
        let heap = sums("och");
        let opened = || super::vectors_opened_of_age();
        let start = opened();
        for _ in 0..8 {
            assert_eq!(sums("oc"), heap);
        }
        assert_eq!(opened() - start, 0, "young stripes are read where they lie");
        assert_eq!(sums("oc"), heap);
        let ninth = opened() - start;
        assert!((20..=80).contains(&ninth), "the ninth run opens what its credit pays for: {ninth}");
        for _ in 0..12 {
            assert_eq!(sums("oc"), heap);
        }
        // v and w of 80 stripes; c's 80 framed vectors are still read in frames.
        assert_eq!(opened() - start, 160);
    }
}
