//! Logical change records of columnar rows (`format::logical_record`), written when
//! `wal_level = logical` beside the page writes that make the change durable: the new
//! row and the replica identity's old key (or whole old row) of an UPDATE or DELETE,
//! decided as heap decides it, and inserted rows that cannot go into the WAL with their
//! row group. Most inserted rows do: an INSERT's rows are owed to decoding while they
//! wait in the write buffer and logged with their row group (`write::owed_rows`); this
//! logs them as a change record instead when anything else decoding would see comes
//! first (`flush_inserts`), and lays out the rows of a COPY (`batch_log`) and of a
//! speculative insertion whose row group is already written. Logical decoding reads all
//! of it through pgcolumnar's WAL resource manager (`glue::wal_resource_manager`);
//! VACUUM's merges and rewrites log no rows, as heap's rewrites send none.

use crate::storage::change::row_change;
use crate::storage::format::logical_record::{self, RecordBuilder, TupleImage, Xids};
use crate::storage::format::tuple_image::{self, AttrShape};
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::relation::pages::{self, file_node};
use crate::storage::relation::tid::tid_row;
use crate::storage::shared::error::not_configured;
use crate::storage::shared::transaction_state;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `_PG_init` when the resource manager was registered (the library is in
/// `shared_preload_libraries`): records of an unregistered resource manager would stop
/// recovery and decoding.
static REGISTERED: AtomicBool = AtomicBool::new(false);

pub fn set_registered() {
    REGISTERED.store(true, Ordering::Relaxed);
}

/// Whether changes of `rel` need logical change records: `wal_level = logical` and a
/// permanent relation, as heap's `RelationIsLogicallyLogged` decides (a columnar table
/// is never a catalog), and not the transient table a rewrite fills (ALTER TABLE's
/// type changes, SET ACCESS METHOD): decoding skips such a table's changes, and its
/// file node becomes the rewritten table's before gathered rows would be written.
///
/// # Safety
/// `rel` must be an open relation; on the backend thread.
pub unsafe fn wanted(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees `rel` is an open relation; `wal_level` is a plain
    // global of this backend.
    let wanted = unsafe {
        pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_LOGICAL as i32
            && (*(*rel).rd_rel).relpersistence == pg_sys::RELPERSISTENCE_PERMANENT as i8
            && (*(*rel).rd_rel).relrewrite == pg_sys::InvalidOid
    };
    if wanted && !REGISTERED.load(Ordering::Relaxed) {
        not_configured(
            "columnar tables cannot be written under wal_level = logical unless pgcolumnar is in \
             shared_preload_libraries",
            "Logical decoding reads columnar changes through pgcolumnar's WAL resource manager, \
             which is registered only when the library is preloaded: add pgcolumnar to \
             shared_preload_libraries and restart.",
        );
    }
    wanted
}

/// Whether the rows about to be inserted into `rel` are owed to logical decoding
/// (`write::owed_rows`): `wanted(rel)`; if so, rows gathered before from their slots are
/// logged first, keeping the order.
///
/// # Safety
/// `rel` must be an open relation; on the backend thread inside a transaction.
pub unsafe fn owing(rel: pg_sys::Relation) -> bool {
    // SAFETY: this fn's contract.
    unsafe {
        let wanted = wanted(rel);
        if wanted {
            flush_gathered();
        }
        wanted
    }
}

/// Logs the row in `slot` as inserted into `rel`, a speculative insertion now confirmed
/// (INSERT ... ON CONFLICT): rows an INSERT buffers are owed to decoding as they are
/// inserted (`owing`), a speculative one only once it stands.
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`; `slot` must be valid and hold the
/// row of `rel`; on the backend thread inside a transaction.
pub unsafe fn log_confirmed_insert(rel: pg_sys::Relation, slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: this fn's contract is `InsertLog`'s and `write_buffer::owe`'s.
    unsafe {
        // A row still in its write buffer is owed, and logged with its row group
        // (`write::owed_rows`); rows gathered before it are logged first.
        if tid_row(&(*slot).tts_tid).is_some_and(|row| {
            flush_gathered();
            write_buffer::owe(rel, row)
        }) {
            return;
        }
        // Its row group was written in the meantime: laid out from the slot.
        write_buffer::log_owed();
        if !append_to_current(rel, slot) {
            InsertLog::new(rel).add(slot);
        }
    }
}

/// Adds the row to the rows gathered for `rel` if they are the running subtransaction's
/// (`PendingInserts::current`): an INSERT ... SELECT logs its rows one call at a time,
/// and looking up the subtransaction and its xid for each (two guarded calls into
/// PostgreSQL and three thread-local lookups) took as long as laying the row out. False,
/// with nothing added, when there are none such.
///
/// # Safety
/// As `log_confirmed_insert`.
unsafe fn append_to_current(rel: pg_sys::Relation, slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: this fn's contract: `rel` is open and `slot` holds a row of it.
    unsafe {
        let relid = (*rel).rd_id;
        append_gathered(rel, slot, |p| p.current && p.relid == relid)
    }
}

/// Adds the row in `slot` to the gathered rows if there are some and `takes` says they
/// may have it, and writes them once they hold about `RECORD_BYTES_TARGET` bytes;
/// false, with nothing added, otherwise.
///
/// # Safety
/// As `log_confirmed_insert`; gathered rows `takes` accepts must be `rel`'s.
unsafe fn append_gathered(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    takes: impl FnOnce(&PendingInserts) -> bool,
) -> bool {
    // SAFETY: this fn's contract: `rel` is open and `slot` holds a row of it, laid out
    // by the gathered rows' `shapes` (`rel`'s); an ERROR forming the row unwinds through
    // the borrow, which lets it go.
    unsafe {
        let full = PENDING.with_borrow_mut(|p| {
            let p = p.as_mut().filter(|p| takes(p))?;
            add_image(&mut p.record, rel, &p.shapes, slot, None, Tuple::New);
            Some(p.record.len() >= logical_record::RECORD_BYTES_TARGET)
        });
        if full == Some(true) {
            flush_inserts();
        }
        full.is_some()
    }
}

/// Rows inserted into one relation by one statement, logged as they come. They are
/// gathered with the rows inserted before them into the same relation by the same
/// subtransaction, and written as one record when the statement ends (or anything else
/// is logged first: see `flush_inserts`), or once it holds about `RECORD_BYTES_TARGET`
/// bytes: a 100-row INSERT writes one record, not a hundred. What is the same for every
/// row (the subtransaction, the attributes' layout) is looked up once.
pub struct InsertLog {
    rel: pg_sys::Relation,
    relid: pg_sys::Oid,
    owner: pg_sys::SubTransactionId,
    /// The rows' xid once known (0 before): gathered rows of a subtransaction that
    /// committed into this one keep their own, so this one's start a new record.
    xid: u32,
    shapes: Rc<[AttrShape]>,
}

impl InsertLog {
    /// # Safety
    /// `rel` must be an open relation with `wanted(rel)`, open while the log is used; on
    /// the backend thread inside a transaction, in the subtransaction whose rows it logs
    /// (none starts or ends while it is used).
    pub unsafe fn new(rel: pg_sys::Relation) -> InsertLog {
        // SAFETY: this fn's contract.
        unsafe {
            let relid = (*rel).rd_id;
            // An INSERT logs its rows one at a time: the layout is looked up once.
            let gathered =
                PENDING.with_borrow(|p| p.as_ref().filter(|p| p.relid == relid).map(|p| p.shapes.clone()));
            InsertLog {
                rel,
                relid,
                owner: transaction_state::current_subxact(),
                xid: u32::from(pg_sys::GetCurrentTransactionIdIfAny()),
                shapes: gathered.unwrap_or_else(|| datum::attr_shapes(rel).into()),
            }
        }
    }

    /// Logs the row in `slot` as inserted.
    ///
    /// # Safety
    /// As `new`; `slot` must be valid and hold a row of the relation.
    pub unsafe fn add(&mut self, slot: *mut pg_sys::TupleTableSlot) {
        // SAFETY: this fn's contract: the slot's values may be read and formed into an
        // image, and the WAL may be written on the backend thread inside a transaction.
        unsafe {
            let (relid, owner, xid) = (self.relid, self.owner, self.xid);
            let gathering = PENDING.with_borrow(|p| {
                p.as_ref().is_some_and(|p| p.relid == relid && p.owner == owner && p.xids.own == xid)
            });
            if !gathering {
                flush_inserts();
                // The rows' xid, assigned now: the record may be written from elsewhere.
                let xids = transaction_state::current_xids();
                self.xid = xids.own;
                let record = RecordBuilder::of_transaction(file_node(self.rel), xids);
                let shapes = self.shapes.clone();
                PENDING.with_borrow_mut(|p| {
                    *p = Some(PendingInserts { relid, owner, xids, record, shapes, current: true })
                });
                GATHERED.store(true, Ordering::Relaxed);
            }
            let added = append_gathered(self.rel, slot, |_| true);
            assert!(added, "gathered inserts");
        }
    }
}

/// Inserted rows not yet written: one relation's, of one subtransaction (`owner`, which
/// an abort of drops them), under that subtransaction's xid.
struct PendingInserts {
    relid: pg_sys::Oid,
    owner: pg_sys::SubTransactionId,
    xids: Xids,
    record: RecordBuilder,
    /// The relation's attribute layout, for the next `InsertLog` of the same statement
    /// (gathered rows are written before the relation can change).
    shapes: Rc<[AttrShape]>,
    /// `owner` is the running subtransaction and `xids.own` its xid. Made true with the
    /// rows, which are written when a subtransaction starts; false once they pass to
    /// the parent, whose xid is another.
    current: bool,
}

thread_local! {
    static PENDING: RefCell<Option<PendingInserts>> = const { RefCell::new(None) };
}

/// Set when `PENDING` is given rows, cleared when they are taken or dropped: `owing`
/// looks before each row an INSERT owes, and a static is read without the thread-local
/// lookup (a call into the dynamic linker each). Only the backend thread uses either.
static GATHERED: AtomicBool = AtomicBool::new(false);

/// Writes the gathered inserted rows, if any. Called
/// before anything else this backend does can be decoded — another of our records, an
/// executor that may change rows, a utility statement (DDL, TRUNCATE), a subtransaction's
/// start, the commit — so that decoding shows the changes in the order they were made.
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn flush_inserts() {
    // SAFETY: per this fn's contract. At most one of the two holds rows (each logs the
    // other's before it takes any).
    unsafe {
        flush_gathered();
        write_buffer::log_owed();
    }
}

/// Writes the inserted rows gathered from their slots, if any (see `flush_inserts`).
///
/// # Safety
/// On the backend thread inside a transaction.
#[inline]
unsafe fn flush_gathered() {
    // Looked at before each row an INSERT owes (`owing`): a glance, the writing apart.
    if GATHERED.load(Ordering::Relaxed) {
        // SAFETY: this fn's contract.
        unsafe { write_gathered() };
    }
}

/// Writes the gathered rows (see `flush_gathered`).
///
/// # Safety
/// On the backend thread inside a transaction.
#[cold]
unsafe fn write_gathered() {
    GATHERED.store(false, Ordering::Relaxed);
    let Some(pending) = PENDING.with_borrow_mut(Option::take) else { return };
    // SAFETY: per this fn's contract; an executor shut down while its transaction aborts
    // (a portal's cleanup) finds it no longer in progress: the rows die with it.
    unsafe {
        if pg_sys::IsTransactionState() {
            write_record(logical_record::INSERT, pending.record.bytes(), false);
        }
    }
}

/// The subtransaction `subxact` commits into `parent`: its gathered rows become the
/// parent's to drop if it aborts (they keep their xid, which the commit record names).
fn inserts_to_parent(subxact: pg_sys::SubTransactionId, parent: pg_sys::SubTransactionId) {
    PENDING.with_borrow_mut(|p| {
        if let Some(p) = p.as_mut().filter(|p| p.owner == subxact) {
            p.owner = parent;
            p.current = false;
        }
    });
}

/// Drops the gathered rows of a subtransaction that aborts (or of any, with None).
fn drop_inserts(subxact: Option<pg_sys::SubTransactionId>) {
    PENDING.with_borrow_mut(|p| {
        if p.as_ref().is_some_and(|p| subxact.is_none_or(|s| s == p.owner)) {
            *p = None;
            GATHERED.store(false, Ordering::Relaxed);
        }
    });
}

/// At a transaction's end: gathered inserts written before commit or prepare, dropped
/// after.
///
/// # Safety
/// Called by the transaction callback (`glue::xact_callbacks`) with PostgreSQL's event.
pub unsafe fn on_xact(event: pg_sys::XactEvent::Type) {
    // SAFETY: a transaction callback on the backend thread: before commit or prepare the
    // transaction is still open, so the WAL may be written.
    unsafe {
        use pg_sys::XactEvent::*;
        match event {
            XACT_EVENT_PRE_COMMIT | XACT_EVENT_PRE_PREPARE => {
                flush_inserts();
            }
            XACT_EVENT_ABORT | XACT_EVENT_PARALLEL_ABORT | XACT_EVENT_COMMIT | XACT_EVENT_PREPARE => {
                drop_inserts(None)
            }
            _ => {}
        }
    }
}

/// At a subtransaction's start (gathered inserts written) and end (handed to the parent,
/// or dropped with it).
///
/// # Safety
/// Called by the subtransaction callback (`glue::xact_callbacks`) with PostgreSQL's
/// arguments.
pub unsafe fn on_subxact(
    event: pg_sys::SubXactEvent::Type,
    subxact: pg_sys::SubTransactionId,
    parent: pg_sys::SubTransactionId,
) {
    // SAFETY: a subtransaction callback on the backend thread, inside the transaction; at
    // a start the rows are written under their own xid (the record names it).
    unsafe {
        use pg_sys::SubXactEvent::*;
        match event {
            SUBXACT_EVENT_START_SUB => {
                flush_inserts();
            }
            SUBXACT_EVENT_COMMIT_SUB => inserts_to_parent(subxact, parent),
            SUBXACT_EVENT_ABORT_SUB => drop_inserts(Some(subxact)),
            _ => {}
        }
    }
}

/// Logs the UPDATE of the row at `otid` (still readable, now deleted) to the row in
/// `new_slot`: the new row, and the old key if the replica identity needs it (its
/// columns changed) or the whole old row under REPLICA IDENTITY FULL.
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`, locked by the caller; `otid` a
/// valid item pointer; `new_slot` a valid slot holding a row of `rel`; on the backend
/// thread inside a transaction.
pub unsafe fn log_update(
    rel: pg_sys::Relation,
    otid: &pg_sys::ItemPointerData,
    new_slot: *mut pg_sys::TupleTableSlot,
) {
    // SAFETY: the caller guarantees this fn's contract (see `log_confirmed_insert`); the old row is
    // read through a slot made and dropped here.
    unsafe {
        flush_inserts();
        let mut record = RecordBuilder::new(file_node(rel));
        let identity = Identity::of(rel);
        let shapes = datum::attr_shapes(rel);
        add_old(&mut record, rel, &shapes, otid, &identity, |old| match &identity {
            Identity::Nothing => false,
            Identity::Full => true,
            Identity::Key(attrs) => {
                pg_sys::slot_getallattrs(new_slot);
                attrs.iter().any(|&i| !same_value(rel, i, old, new_slot))
            }
        });
        add_image(&mut record, rel, &shapes, new_slot, None, Tuple::New);
        write_record(logical_record::UPDATE, record.bytes(), true);
    }
}

/// Logs the DELETE of the row at `tid` (still readable, now deleted), with its replica
/// identity's key or whole row (nothing under REPLICA IDENTITY NOTHING, or DEFAULT with
/// no primary key: then decoding shows the delete without data, as for heap).
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`, locked by the caller; `tid` a valid
/// item pointer; on the backend thread inside a transaction.
pub unsafe fn log_delete(rel: pg_sys::Relation, tid: &pg_sys::ItemPointerData) {
    // SAFETY: the caller guarantees this fn's contract (see `log_update`).
    unsafe {
        flush_inserts();
        let mut record = RecordBuilder::new(file_node(rel));
        add_old(&mut record, rel, &datum::attr_shapes(rel), tid, &Identity::of(rel), |_| true);
        write_record(logical_record::DELETE, record.bytes(), true);
    }
}

/// What the replica identity asks an UPDATE or DELETE to log of the old row.
enum Identity {
    Nothing,
    Full,
    /// The attribute indexes (0-based) of the identity's key; DEFAULT without a primary
    /// key logs nothing, like NOTHING.
    Key(Vec<usize>),
}

impl Identity {
    unsafe fn of(rel: pg_sys::Relation) -> Identity {
        // SAFETY: `rel` is an open relation (every caller's contract); the bitmap is a copy
        // we free.
        unsafe {
            match (*(*rel).rd_rel).relreplident as u8 {
                pg_sys::REPLICA_IDENTITY_NOTHING => Identity::Nothing,
                pg_sys::REPLICA_IDENTITY_FULL => Identity::Full,
                _ => {
                    let set = pg_sys::RelationGetIndexAttrBitmap(
                        rel,
                        pg_sys::IndexAttrBitmapKind::INDEX_ATTR_BITMAP_IDENTITY_KEY,
                    );
                    let natts = (*(*rel).rd_att).natts as usize;
                    // The set's words read directly (bms_is_member a column, each a
                    // guarded call, took a tenth of an UPDATE's logging).
                    let words: &[pg_sys::bitmapword] = match set.is_null() {
                        true => &[],
                        false => (*set).words.as_slice((*set).nwords as usize),
                    };
                    let bits = pg_sys::BITS_PER_BITMAPWORD as usize;
                    let member = |m: usize| words.get(m / bits).is_some_and(|w| w >> (m % bits) & 1 != 0);
                    let offset = (1 - pg_sys::FirstLowInvalidHeapAttributeNumber) as usize;
                    let attrs: Vec<usize> = (0..natts).filter(|&i| member(i + offset)).collect();
                    pg_sys::bms_free(set);
                    if attrs.is_empty() {
                        Identity::Nothing
                    } else {
                        Identity::Key(attrs)
                    }
                }
            }
        }
    }

    /// Sets `record`'s old tuple to what the identity logs of the row in `old`: the
    /// whole row, or its key columns with NULL elsewhere.
    unsafe fn add_old_tuple(
        &self,
        record: &mut RecordBuilder,
        rel: pg_sys::Relation,
        shapes: &[AttrShape],
        old: *mut pg_sys::TupleTableSlot,
    ) {
        // SAFETY: `rel` is open and `old` holds a row of it (callers' contracts).
        unsafe {
            let only = match self {
                Identity::Nothing => return,
                Identity::Full => None,
                Identity::Key(attrs) => Some(attrs.as_slice()),
            };
            add_image(record, rel, shapes, old, only, Tuple::Old);
        }
    }
}

/// Adds to `record` what `identity` logs of the row version at `tid` (deleted or not,
/// laid out by `shapes`, `rel`'s `attr_shapes`), if `required` says that row needs it. The row is read only when the identity logs
/// something; nothing is added if the row is gone, which a row this statement just
/// changed never is.
unsafe fn add_old(
    record: &mut RecordBuilder,
    rel: pg_sys::Relation,
    shapes: &[AttrShape],
    tid: &pg_sys::ItemPointerData,
    identity: &Identity,
    required: impl FnOnce(*mut pg_sys::TupleTableSlot) -> bool,
) {
    // SAFETY: `rel` is open and locked, `tid` valid (callers' contracts); the slot is made
    // for the relation's own slot type and dropped here.
    unsafe {
        if matches!(identity, Identity::Nothing) {
            return;
        }
        let slot = pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, crate::storage::relation::slot::ops());
        if let Identity::Key(attrs) = identity {
            // Only the key's columns are decoded (all the record and the test read): a
            // row's other columns cost most of a DELETE's logging.
            let mut needed = vec![false; shapes.len()];
            attrs.iter().for_each(|&a| needed[a] = true);
            crate::storage::relation::slot::set_needed(slot, &needed);
        }
        if row_change::fetch_any(rel, tid, slot) {
            pg_sys::slot_getallattrs(slot);
            if required(slot) {
                identity.add_old_tuple(record, rel, shapes, slot);
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
    }
}

/// Whether attribute `i` has the same bytes in both slots (both fully deformed), as heap
/// compares identity columns to decide whether an UPDATE logs the old key; varlena
/// values are compared detoasted.
unsafe fn same_value(
    rel: pg_sys::Relation,
    i: usize,
    a: *mut pg_sys::TupleTableSlot,
    b: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: both slots are deformed rows of `rel` (callers' contracts): `i` indexes their
    // value arrays, and by-reference values point at valid data of the attribute's type.
    unsafe {
        let (null_a, null_b) = (*(*a).tts_isnull.add(i), *(*b).tts_isnull.add(i));
        if null_a || null_b {
            return null_a == null_b;
        }
        let (va, vb) = (*(*a).tts_values.add(i), *(*b).tts_values.add(i));
        match datum::relation_kinds(rel)[i] {
            kind @ (ColumnKind::Fixed { .. } | ColumnKind::CString | ColumnKind::Varlena) => {
                datum::with_stored_bytes(kind, va, |x| datum::with_stored_bytes(kind, vb, |y| x == y))
            }
            _ => va == vb,
        }
    }
}

/// Which of a record's tuples an image is.
#[derive(Clone, Copy)]
enum Tuple {
    Old,
    New,
}

/// Adds the slot's row to `record` as its old or a new tuple, in heap's image of it
/// (with `only`, just those columns, NULL elsewhere: an identity key). Laid out in place
/// (`format::tuple_image`); a row holding a value stored out of line is formed by
/// `heap_form_tuple` once the value is brought inline (`slot_tuple`).
///
/// # Safety
/// `rel` must be an open relation, `shapes` its `attr_shapes`, and `slot` a valid slot
/// holding a row of it; on the backend thread inside a transaction.
unsafe fn add_image(
    record: &mut RecordBuilder,
    rel: pg_sys::Relation,
    shapes: &[AttrShape],
    slot: *mut pg_sys::TupleTableSlot,
    only: Option<&[usize]>,
    which: Tuple,
) {
    // SAFETY: the slot holds a row of `rel` (this fn's contract): once deformed, its arrays
    // hold a value per attribute of `rel`'s descriptor (`shapes`), by-reference ones
    // pointing at valid values of their types. `Datum` is a transparent machine word.
    unsafe {
        let natts = shapes.len();
        if ((*slot).tts_nvalid as usize) < natts {
            pg_sys::slot_getallattrs(slot);
        }
        let values = std::slice::from_raw_parts((*slot).tts_values as *const usize, natts);
        let nulls = std::slice::from_raw_parts((*slot).tts_isnull, natts);
        let is_null = |i: usize| nulls[i] || only.is_some_and(|keep| !keep.contains(&i));
        let fill = |out: &mut Vec<u8>| tuple_image::append(shapes, values, is_null, out);
        let added = match which {
            Tuple::Old => record.set_old_filled(fill),
            Tuple::New => record.push_new_filled(fill),
        };
        if !added {
            let tuple = slot_tuple(rel, slot, only);
            match which {
                Tuple::Old => record.set_old(&image(tuple)),
                Tuple::New => record.push_new(&image(tuple)),
            }
            pg_sys::heap_freetuple(tuple);
        }
    }
}

/// The slot's row as a heap tuple of `rel`'s descriptor, values stored outside the row
/// (TOAST pointers, expanded objects) brought inline, as heap flattens the tuples it
/// logs for decoding; with `only`, the other columns are NULL (an identity key).
unsafe fn slot_tuple(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    only: Option<&[usize]>,
) -> pg_sys::HeapTuple {
    // SAFETY: `slot` holds a row of `rel` (callers' contracts); after `slot_getallattrs` its
    // arrays hold `natts` deformed values; inlined copies are freed once formed.
    unsafe {
        pg_sys::slot_getallattrs(slot);
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let mut values = std::slice::from_raw_parts((*slot).tts_values, natts).to_vec();
        let mut nulls = std::slice::from_raw_parts((*slot).tts_isnull, natts).to_vec();
        let mut inlined = Vec::new();
        for i in 0..natts {
            if only.is_some_and(|keep| !keep.contains(&i)) {
                nulls[i] = true;
                continue;
            }
            let att = &*(*desc).attrs.as_ptr().add(i);
            if nulls[i] || att.attlen != -1 {
                continue;
            }
            let p = values[i].cast_mut_ptr::<pg_sys::varlena>();
            if pgrx::varlena::varatt_is_1b_e(p) {
                let inline = pg_sys::detoast_external_attr(p);
                values[i] = pg_sys::Datum::from(inline);
                inlined.push(inline);
            }
        }
        let tuple = pg_sys::heap_form_tuple(desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        for p in inlined {
            pg_sys::pfree(p.cast());
        }
        tuple
    }
}

/// Heap's WAL image of `tuple`: its header fields and the bytes after the fixed header.
unsafe fn image<'a>(tuple: pg_sys::HeapTuple) -> TupleImage<'a> {
    // SAFETY: `tuple` is a formed tuple (callers): `t_data` holds `t_len` bytes, which
    // outlive the image (the caller frees the tuple after copying the image).
    unsafe {
        let header = (*tuple).t_data;
        let fixed = std::mem::offset_of!(pg_sys::HeapTupleHeaderData, t_bits);
        let bytes = std::slice::from_raw_parts(header as *const u8, (*tuple).t_len as usize);
        TupleImage {
            infomask2: (*header).t_infomask2,
            infomask: (*header).t_infomask,
            hoff: (*header).t_hoff,
            data: &bytes[fixed..],
        }
    }
}

/// Writes `record` (see `pages::log_change`).
pub(crate) unsafe fn write_record(info: u8, record: &[u8], this_xid: bool) {
    // SAFETY: the callers' contract is `log_change`'s.
    unsafe { pages::log_change(info, record, this_xid) }
}
