//! LastPoint through a btree whose first two columns are the key and the ordering
//! column: a skip scan. Each descent starts past the last key returned (`key > last`,
//! or `<`, as the scan runs), in the direction whose order within a key puts the best
//! row first; the first visible row that passes the quals is the next key's winner
//! (rows of keys that have none passing are walked past on the way). NULL keys come
//! first or last as the index orders them, and get a descent of their own.

use super::{attribute, Counters, IndexPlan};
use pgrx::pg_sys;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The first descent: to the NULL keys if they come first, else past them.
    Start,
    /// Past a key: NULL, or the one in `last`.
    After {
        null: bool,
    },
    /// Only NULL keys are left (they come last in the scan's direction).
    Nulls,
    Done,
}

pub struct SkipScan {
    index: pg_sys::Relation,
    scan: pg_sys::IndexScanDesc,
    direction: pg_sys::ScanDirection::Type,
    nulls_first: bool,
    key_att: usize,
    /// The operator that finds the next key, as a scan key needs it.
    next_strategy: u16,
    next_proc: pg_sys::Oid,
    opcintype: pg_sys::Oid,
    collation: pg_sys::Oid,
    key_len: i16,
    key_byval: bool,
    quals: *mut pg_sys::ExprState,
    /// Where `last` lives: the query's memory.
    memory: pg_sys::MemoryContext,
    last: pg_sys::Datum,
    step: Step,
    counters: Counters,
}

impl SkipScan {
    /// Opens the plan's index and begins its scan of `rel`.
    ///
    /// # Safety
    /// Backend thread, in the executor's memory context: `rel` open and locked and
    /// `snapshot` registered until `end`; `quals` are the plan's expressions and `parent`
    /// the node's PlanState.
    pub unsafe fn begin(
        rel: pg_sys::Relation,
        snapshot: pg_sys::Snapshot,
        plan: &IndexPlan,
        key_att: usize,
        quals: &[*mut pg_sys::Node],
        parent: *mut pg_sys::PlanState,
    ) -> SkipScan {
        // SAFETY: PostgreSQL glue for the node's BeginCustomScan: `rel` is open and locked and
        // `snapshot` registered for the scan (this fn's contract); the index is opened and
        // locked here and stays open until `end`, so its rd_opfamily / rd_opcintype /
        // rd_indcollation arrays (one entry per key column, the first read) are live; the
        // quals are the plan's expressions, initialized for `parent` in the executor's
        // memory context, which `memory` records.
        unsafe {
            let index = pg_sys::index_open(plan.index, pg_sys::AccessShareLock as i32);
            let scan = pg_sys::index_beginscan(rel, index, snapshot, 1, 0);
            let opfamily = *(*index).rd_opfamily;
            let opcintype = *(*index).rd_opcintype;
            let next_strategy = if plan.next_greater {
                pg_sys::BTGreaterStrategyNumber
            } else {
                pg_sys::BTLessStrategyNumber
            } as u16;
            let op = pg_sys::get_opfamily_member(opfamily, opcintype, opcintype, next_strategy as i16);
            if op == pg_sys::InvalidOid {
                pgrx::error!("operator family {opfamily:?} lacks strategy {next_strategy}");
            }
            let attr = crate::storage::relation::datum::attr((*rel).rd_att, key_att);
            let qual_list = crate::pg_list::from_ptrs(quals.iter().copied());
            SkipScan {
                index,
                scan,
                direction: if plan.forward {
                    pg_sys::ScanDirection::ForwardScanDirection
                } else {
                    pg_sys::ScanDirection::BackwardScanDirection
                },
                nulls_first: plan.nulls_first,
                key_att,
                next_strategy,
                next_proc: pg_sys::get_opcode(op),
                opcintype,
                collation: *(*index).rd_indcollation,
                key_len: attr.attlen,
                key_byval: attr.attbyval,
                quals: if quals.is_empty() {
                    std::ptr::null_mut()
                } else {
                    pg_sys::ExecInitQual(qual_list, parent)
                },
                memory: pg_sys::CurrentMemoryContext,
                last: pg_sys::Datum::from(0usize),
                step: Step::Start,
                counters: Counters::default(),
            }
        }
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Starts again from the first key.
    ///
    /// # Safety
    /// Between `begin` and `end`, in a memory context where `last` may be freed.
    pub unsafe fn restart(&mut self) {
        // SAFETY: `last` is ours, allocated in `memory` by `next` (this fn's contract).
        unsafe { self.forget_last() };
        self.step = Step::Start;
    }

    /// Ends the index scan and closes the index (its lock is kept to transaction end).
    ///
    /// # Safety
    /// Once, after `begin`, on the backend thread.
    pub unsafe fn end(self) {
        // SAFETY: `scan` and `index` were begun and opened by `begin` and are ended and
        // closed once (this fn takes `self`).
        unsafe {
            pg_sys::index_endscan(self.scan);
            pg_sys::index_close(self.index, pg_sys::NoLock as i32);
        }
    }

    unsafe fn forget_last(&mut self) {
        if matches!(self.step, Step::After { null: false }) && !self.key_byval {
            // SAFETY: a by-reference `last` is the copy `next` palloc'd in `memory`, freed
            // once: it is reset just below.
            unsafe { pg_sys::pfree(self.last.cast_mut_ptr()) };
        }
        self.last = pg_sys::Datum::from(0usize);
    }

    /// The next key's winner into `slot`; false when no key is left. `scan_tuple` makes
    /// the scan tuple the quals read (the econtext's) from `slot`.
    ///
    /// # Safety
    /// Backend thread, between `begin` and `end`: `econtext` is the node's live expression
    /// context and `slot` a slot of the relation's row type.
    pub unsafe fn next(
        &mut self,
        econtext: *mut pg_sys::ExprContext,
        slot: *mut pg_sys::TupleTableSlot,
        scan_tuple: &mut dyn FnMut(*mut pg_sys::TupleTableSlot),
    ) -> bool {
        // SAFETY: the index scan is live between `begin` and `end` (this fn's contract), so
        // rescans and fetches into `slot` are sound; `econtext` is the node's context whose
        // per-tuple memory holds nothing kept across rows; `last` is copied into `memory`
        // (the query's) before the slot's next row can free what it points to.
        unsafe {
            loop {
                let mut key = pg_sys::ScanKeyData::default();
                // Every descent has one key (a btree scan keeps the key count it began with).
                match self.step {
                    Step::Done => return false,
                    Step::Start if self.nulls_first => self.null_key(&mut key, pg_sys::SK_SEARCHNULL),
                    Step::Start | Step::After { null: true } => {
                        self.null_key(&mut key, pg_sys::SK_SEARCHNOTNULL)
                    }
                    Step::After { null: false } => pg_sys::ScanKeyEntryInitialize(
                        &mut key,
                        0,
                        1,
                        self.next_strategy,
                        self.opcintype,
                        self.collation,
                        self.next_proc,
                        self.last,
                    ),
                    Step::Nulls => self.null_key(&mut key, pg_sys::SK_SEARCHNULL),
                }
                pg_sys::index_rescan(self.scan, &mut key, 1, std::ptr::null_mut(), 0);
                self.counters.index_descents += 1;
                let found = loop {
                    pgrx::check_for_interrupts!();
                    if !pg_sys::index_getnext_slot(self.scan, self.direction, slot) {
                        break false;
                    }
                    self.counters.rows_examined += 1;
                    if self.quals.is_null() {
                        break true;
                    }
                    scan_tuple(slot);
                    pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                    if pg_sys::ExecQual(self.quals, econtext) {
                        break true;
                    }
                };
                if !found {
                    self.forget_last();
                    self.step = match self.step {
                        // No NULL key: the others next.
                        Step::Start if self.nulls_first => Step::After { null: true },
                        Step::Nulls => Step::Done,
                        _ if self.nulls_first => Step::Done,
                        _ => Step::Nulls,
                    };
                    continue;
                }
                let (d, null) = attribute(slot, self.key_att as i32 + 1);
                self.forget_last();
                if null {
                    self.step = if self.nulls_first { Step::After { null: true } } else { Step::Done };
                } else {
                    let old = pg_sys::MemoryContextSwitchTo(self.memory);
                    self.last = copy_datum(d, self.key_byval, self.key_len);
                    pg_sys::MemoryContextSwitchTo(old);
                    self.step = Step::After { null: false };
                }
                self.counters.winners += 1;
                return true;
            }
        }
    }

    unsafe fn null_key(&self, key: &mut pg_sys::ScanKeyData, flag: u32) {
        // SAFETY: ScanKeyEntryInitialize only fills in `key`, a live &mut; an IS (NOT)
        // NULL key has no operator or argument to look up.
        unsafe {
            pg_sys::ScanKeyEntryInitialize(
                key,
                (pg_sys::SK_ISNULL | flag) as i32,
                1,
                0,
                pg_sys::InvalidOid,
                pg_sys::InvalidOid,
                pg_sys::InvalidOid,
                pg_sys::Datum::from(0usize),
            );
        }
    }
}

/// A copy of `d` in the current memory context (datumCopy; a TOAST pointer is copied
/// as it is, the value it points to outlives the scan).
unsafe fn copy_datum(d: pg_sys::Datum, byval: bool, len: i16) -> pg_sys::Datum {
    if byval {
        return d;
    }
    let from = d.cast_mut_ptr::<u8>();
    // SAFETY: `d` is a live by-reference Datum of a type with typlen `len` (the caller's
    // slot attribute), so its size is known from the varlena header, the C string's NUL
    // or `len`; the copy goes to a fresh palloc of that size in the current context.
    unsafe {
        let size = match len {
            -1 => pgrx::varlena::varsize_any(from as *const pg_sys::varlena),
            -2 => std::ffi::CStr::from_ptr(from as *const std::ffi::c_char).to_bytes().len() + 1,
            n => n as usize,
        };
        let to = pg_sys::palloc(size) as *mut u8;
        std::ptr::copy_nonoverlapping(from, to, size);
        pg_sys::Datum::from(to)
    }
}
