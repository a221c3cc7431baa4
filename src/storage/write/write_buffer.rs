//! Rows inserted into a columnar relation wait here, per relation and subtransaction,
//! until they fill a row group, the subtransaction or transaction commits, or a scan of
//! the same relation needs to see them. Flushing encodes the columns (in parallel, pure
//! Rust), appends them to the relation's stream and records the row group.
//!
//! Rows carry the command id of the INSERT that made them; a flush records each run of
//! rows under its own command id, so a snapshot sees exactly the rows a heap table
//! would show it. A buffer only ever holds rows of one subtransaction: it is flushed
//! when that subtransaction commits (while it is still in progress, so its rows become
//! its parent's) and dropped when it aborts.
//!
//! A subtransaction that reads rows an enclosing one buffered (a PL/pgSQL exception
//! block) writes them out under its own id, keeping a copy: if it rolls back, the copy
//! becomes the enclosing subtransaction's buffer again, with the same row numbers.

use crate::storage::catalog::{self, ChunkMeta, Chunks, RowGroupMeta};
use crate::storage::format::chunk_encoder::{encode_chunk, EncodedChunk};
use crate::storage::format::column_builder::ColumnBuilder;
use crate::storage::format::encoding::{CompressionPolicy, EncodingGoal, PhysicalKind};
use crate::storage::format::flush_order::{flush_order, permuted};
use crate::storage::format::layout::{self, ROW_GROUP_ROWS, VECTOR_ROWS};
use crate::storage::format::logical_record::{self, FileNode, RecordBuilder, Xids, MAX_GROUP_BLOCKS};
use crate::storage::format::row_group_record;
use crate::storage::format::row_images;
use crate::storage::format::tuple_image::AttrShape;
use crate::storage::relation::am_cache;
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::relation::options;
use crate::storage::relation::pages;
use crate::storage::shared::transaction_state;
use crate::storage::write::owed_rows::{self, Owed};
use pgrx::pg_sys;
use rayon::prelude::*;
use std::cell::RefCell;

/// A buffer is flushed early when its values take more memory than this.
const MAX_BUFFER_BYTES: usize = 256 << 20;

/// Row groups of fewer rows are encoded on the backend thread alone: waking rayon's
/// workers for them cost more than the encoding (a one-row transaction spent most of its
/// time scheduling them).
const PARALLEL_ENCODE_ROWS: usize = 8192;

#[derive(Clone)]
struct WriteBuffer {
    relid: pg_sys::Oid,
    subxact: pg_sys::SubTransactionId,
    kinds: Vec<ColumnKind>,
    /// Per attribute: keep byte-wise zone maps (see `datum::bytewise_ordered`).
    bytes_zone: Vec<bool>,
    /// One per attribute; None for dropped columns.
    columns: Vec<Option<ColumnBuilder>>,
    rows: usize,
    /// Row number of the buffer's first row; rows are numbered consecutively.
    first_row: u64,
    /// End of the row numbers handed out to this buffer so far.
    reserved_end: u64,
    /// End of the buffer's reservation window (its `row_reservation` row): the numbers
    /// handed out to it grow in place up to here while no one else takes any after them.
    window_end: u64,
    /// How many row numbers to take next: doubled each time, so that a transaction that
    /// writes one row takes one number and a bulk load takes few steps.
    step: u64,
    /// (command id, end row) of each run of rows inserted by one command.
    cid_runs: Vec<(pg_sys::CommandId, usize)>,
    /// The table's sort key (attribute indexes): row groups are stored in its order.
    sort_columns: Option<std::rc::Rc<[usize]>>,
    /// What the encodings are chosen for (the table's `compress_for`).
    goal: EncodingGoal,
}

/// A buffer of an enclosing subtransaction, as it was before a subtransaction
/// (`written_under`) wrote its rows out to read them.
struct Borrowed {
    written_under: pg_sys::SubTransactionId,
    buffer: WriteBuffer,
}

/// A statement's planned row count is believed up to this many rows (see `expect_rows`).
const PLANNED_ROWS_CAP: usize = 4096;

/// Unused row numbers are given back at a flush from this many on (see `give_back`).
const GIVE_BACK_ROWS: u64 = 64;

thread_local! {
    /// Relations the statement starting inserts into, with its plan's row estimate.
    static PLANNED: RefCell<Vec<(pg_sys::Oid, usize)>> = const { RefCell::new(Vec::new()) };
    static BUFFERS: RefCell<Vec<WriteBuffer>> = const { RefCell::new(Vec::new()) };
    static BORROWED: RefCell<Vec<Borrowed>> = const { RefCell::new(Vec::new()) };
}

impl WriteBuffer {
    unsafe fn new(
        rel: pg_sys::Relation,
        subxact: pg_sys::SubTransactionId,
        sort_columns: Option<std::rc::Rc<[usize]>>,
        goal: EncodingGoal,
    ) -> WriteBuffer {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller, and we are on the backend thread inside a transaction, so relations
        // may be opened and slots read, and row groups written through `pages` and `catalog`.
        unsafe {
            let kinds = datum::column_kinds((*rel).rd_att);
            let columns = kinds.iter().map(|k| k.physical().map(ColumnBuilder::new)).collect();
            let bytes_zone = (0..kinds.len()).map(|i| datum::bytewise_ordered((*rel).rd_att, i)).collect();
            WriteBuffer {
                relid: (*rel).rd_id,
                subxact,
                kinds,
                bytes_zone,
                columns,
                rows: 0,
                first_row: 0,
                reserved_end: 0,
                window_end: 0,
                step: 1,
                cid_runs: Vec::new(),
                sort_columns,
                goal,
            }
        }
    }

    /// The order to store rows `range` in (see `flush_order`), if not as they are.
    fn order(&self, range: std::ops::Range<usize>) -> Option<Vec<u32>> {
        let keys: Vec<&ColumnBuilder> =
            self.sort_columns.as_deref()?.iter().filter_map(|&i| self.columns.get(i)?.as_ref()).collect();
        if keys.is_empty() {
            return None;
        }
        flush_order(&keys, range)
    }

    /// Whether row `row` of `relid` is one of the buffer's.
    fn holds(&self, relid: pg_sys::Oid, row: u64) -> bool {
        self.relid == relid && self.first_row <= row && row < self.first_row + self.rows as u64
    }

    fn memory(&self) -> usize {
        self.columns.iter().flatten().map(|c| c.heap_bytes()).sum()
    }
}

/// Encodes, writes and records rows `0..rows` of `buf` as row groups, then drops them
/// from the buffer. `by_command` splits the rows into one row group per command id.
/// Unsafe: `rel` must be the buffer's relation, open and locked, on the backend thread
/// inside the transaction that buffered the rows.
unsafe fn write_out(rel: pg_sys::Relation, buf: &mut WriteBuffer, rows: usize, by_command: bool) {
    if rows == 0 {
        return;
    }
    // SAFETY: `rel` is open and locked, inside a transaction (this fn's contract).
    let storage_id = unsafe { pages::storage_id(rel) };
    let mut groups: Vec<(std::ops::Range<usize>, pg_sys::CommandId)> = Vec::new();
    if by_command {
        let mut start = 0;
        for &(cid, end) in &buf.cid_runs {
            let end = end.min(rows);
            if end > start {
                groups.push((start..end, cid));
                start = end;
            }
        }
    } else {
        let cid = buf.cid_runs.iter().map(|r| r.0).max().unwrap_or(0);
        groups.push((0..rows, cid));
    }
    crate::storage::shared::worker_threads::ensure_pool();
    for (range, cid) in groups {
        let policy = match range.len() < VECTOR_ROWS {
            true => CompressionPolicy::QUICK,
            false => CompressionPolicy::for_goal(buf.goal),
        };
        pgrx::check_for_interrupts!();
        // Pure Rust only inside the parallel sections: no PostgreSQL call off this thread.
        let order = buf.order(range.clone());
        let parallel = range.len() >= PARALLEL_ENCODE_ROWS;
        let sorted: Option<Vec<Option<ColumnBuilder>>> = order.as_ref().map(|o| {
            let permute = |c: &Option<ColumnBuilder>| c.as_ref().map(|c| permuted(c, range.clone(), o));
            match parallel {
                true => buf.columns.par_iter().map(permute).collect(),
                false => buf.columns.iter().map(permute).collect(),
            }
        });
        let (columns, rows) = match &sorted {
            Some(sorted) => (sorted, 0..range.len()),
            None => (&buf.columns, range.clone()),
        };
        let encode = |(c, zone): (&Option<ColumnBuilder>, &bool)| {
            c.as_ref().map(|c| encode_chunk(c, rows.clone(), &policy, *zone))
        };
        let encoded: Vec<Option<EncodedChunk>> = match parallel {
            true => columns.par_iter().zip(buf.bytes_zone.par_iter()).map(encode).collect(),
            false => columns.iter().zip(&buf.bytes_zone).map(encode).collect(),
        };
        let order_chunk = order.map(|o| {
            let mut b = ColumnBuilder::new(PhysicalKind::Int);
            o.iter().for_each(|&offset| b.push_int(offset as i64));
            encode_chunk(&b, 0..o.len(), &policy, false)
        });
        let total: usize = encoded.iter().flatten().chain(&order_chunk).map(|c| c.bytes.len()).sum();
        // SAFETY: back on the backend thread (the parallel sections are done), with `rel` open
        // and locked inside a transaction (this fn's contract).
        let data_offset = unsafe { super::free_space::allocate(rel, storage_id, total as u64) };
        // The chunks lie one after another from `data_offset`: the order column last.
        let mut pieces: Vec<(i16, EncodedChunk)> =
            encoded.into_iter().enumerate().filter_map(|(i, c)| Some((i as i16 + 1, c?))).collect();
        pieces.extend(order_chunk.map(|c| (0, c)));
        // SAFETY: as for `allocate` above; `data_offset .. + total` was allocated to this group.
        unsafe { write_group(rel, buf, range.clone(), &pieces, data_offset) };
        // The chunks' metadata takes their directories over once they are written.
        let mut chunks = Chunks { columns: vec![None; buf.columns.len()], ..Default::default() };
        let mut at = data_offset;
        for (attnum, c) in pieces {
            let len = c.bytes.len() as u64;
            let meta = ChunkMeta::new(attnum, at, len, c.null_count, c.raw_bytes, c.vectors);
            at += len;
            match attnum {
                0 => chunks.order = Some(meta),
                a => chunks.columns[a as usize - 1] = Some(std::rc::Rc::new(meta)),
            }
        }
        let group = RowGroupMeta {
            first_row: buf.first_row + range.start as u64,
            row_count: range.len() as u64,
            data_offset,
            data_length: total as u64,
            chunks: std::rc::Rc::new(chunks),
            deleted: None,
            // SAFETY: inside a transaction (this fn's contract), which has an xid from now on.
            writer: (unsafe { pg_sys::GetCurrentTransactionId() }, cid),
            inline: None,
            zones: None,
        };
        // SAFETY: inside a transaction on the backend thread (this fn's contract), so the
        // metadata tables may be written.
        unsafe { catalog::insert_row_group(storage_id, &group, cid) };
    }
    for c in buf.columns.iter_mut().flatten() {
        c.drain_front(rows);
    }
    buf.first_row += rows as u64;
    buf.rows -= rows;
    buf.cid_runs.retain_mut(|run| {
        run.1 = run.1.saturating_sub(rows);
        run.1 > 0
    });
}

/// Writes the bytes of the row group of rows `range` of `buf` (its chunks `pieces`, in
/// stream order from `data_offset`), and logs those of its rows logical decoding is
/// owed (`owed_rows`). A group of up to `ROW_GROUP_RECORD_BYTES` goes into one
/// `ROW_GROUP_WRITE` record, which also tells decoding which of its rows it owes and
/// how its columns are laid out (their heads kept in the relcache entry: `am_cache`);
/// a bigger one is written page by page (`StreamWriter`), its owed rows
/// logged apart as INSERT records laid out from the buffer, as are owed rows of an
/// enclosing subtransaction written out under this one.
///
/// # Safety
/// As for `write_out`; the group's stream space is allocated.
unsafe fn write_group(
    rel: pg_sys::Relation,
    buf: &WriteBuffer,
    range: std::ops::Range<usize>,
    pieces: &[(i16, EncodedChunk)],
    data_offset: u64,
) {
    let rows = buf.first_row + range.start as u64..buf.first_row + range.end as u64;
    let owed = owed_rows::with(|slot| {
        let o = slot.as_mut().filter(|o| o.relid == buf.relid && o.subxact == buf.subxact)?;
        let logged = o.take_in(rows);
        let owed = (!logged.is_empty()).then_some((logged, o.xids, o.node));
        if o.is_empty() {
            *slot = None;
        }
        owed
    });
    // Owed rows of an enclosing subtransaction (written out under this one to be read)
    // are not this one's changes: they are logged apart, under their own.
    let own = owed.is_some() && transaction_state::current_subxact() == buf.subxact;
    let total: usize = pieces.iter().map(|(_, c)| c.bytes.len()).sum();
    let written = total <= ROW_GROUP_RECORD_BYTES && {
        let mut bytes = Vec::with_capacity(total);
        for (_, c) in pieces {
            bytes.extend_from_slice(&c.bytes);
        }
        DESCRIPTION.with_borrow_mut(|description| {
            description.clear();
            if let Some((logged, xids, node)) = owed.as_ref().filter(|_| own) {
                let (rows, ordered) =
                    (range.len() as u32, pieces.last().is_some_and(|(attnum, _)| *attnum == 0));
                row_group_record::encode_written(*node, *xids, rows, logged, ordered, description);
                // SAFETY: `rel` is open (this fn's contract), with an attribute for each
                // of the buffer's kinds.
                unsafe { am_cache::append_column_heads(rel, &buf.kinds, description) };
            }
            // SAFETY: this fn's contract.
            unsafe { pages::write_row_group(rel, data_offset, &bytes, description) }
        })
    };
    // Rows the record did not carry (it described them only when `own`).
    if let Some((logged, xids, node)) = owed.filter(|_| !(written && own)) {
        let ranges =
            logged.iter().map(|&(first, n)| range.start + first as usize..range.start + (first + n) as usize);
        // SAFETY: this fn's contract.
        unsafe { log_rows(buf, &datum::attr_shapes(rel), node, xids, ranges) };
    }
    if !written {
        let mut stream = StreamWriter { rel, at: data_offset, pending: Vec::new() };
        // SAFETY: this fn's contract.
        unsafe {
            for (_, c) in pieces {
                stream.write(&c.bytes);
            }
            stream.finish();
        }
    }
}

thread_local! {
    /// The main data of the last `ROW_GROUP_WRITE` record, kept for the next one's.
    static DESCRIPTION: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A row group's bytes go into one `ROW_GROUP_WRITE` record up to this size: they fall
/// into at most `MAX_GROUP_BLOCKS` pages wherever they start.
const ROW_GROUP_RECORD_BYTES: usize = (MAX_GROUP_BLOCKS - 2) * (layout::BLOCK_SIZE - layout::PAGE_HEADER);

/// Owes logical decoding row `row` of `rel`, inserted by this subtransaction earlier
/// (a speculative insertion, owed once confirmed), if it is still in this
/// subtransaction's buffer; false if it is not (its row group is written: the caller
/// logs it from its slot).
///
/// # Safety
/// `rel` must be an open relation with `change::logical_log::wanted`; on the backend
/// thread inside a transaction.
pub unsafe fn owe(rel: pg_sys::Relation, row: u64) -> bool {
    // SAFETY: this fn's contract.
    unsafe {
        let subxact = transaction_state::current_subxact();
        let relid = (*rel).rd_id;
        let held = BUFFERS
            .with_borrow(|buffers| buffers.iter().any(|b| b.subxact == subxact && b.holds(relid, row)));
        if held {
            owe_inserted(rel, subxact, row);
        }
        held
    }
}

/// Owes logical decoding row `row` of `rel`, in the buffer of `subxact` (the running
/// subtransaction), after every row owed before it; rows owed to another buffer are
/// logged first.
///
/// # Safety
/// As `owe`.
#[inline]
unsafe fn owe_inserted(rel: pg_sys::Relation, subxact: pg_sys::SubTransactionId, row: u64) {
    // SAFETY: this fn's contract.
    unsafe {
        let relid = (*rel).rd_id;
        // Every row but a statement's first: the rows owed are this buffer's.
        let pushed = owed_rows::with(|o| match o {
            Some(o) if o.relid == relid && o.subxact == subxact => {
                o.push(row);
                true
            }
            _ => false,
        });
        if !pushed {
            owe_first(rel, subxact, row);
        }
    }
}

/// `owe_inserted` of a row when no rows of its buffer are owed: those of another buffer
/// are logged first.
///
/// # Safety
/// As `owe`.
#[cold]
unsafe fn owe_first(rel: pg_sys::Relation, subxact: pg_sys::SubTransactionId, row: u64) {
    // SAFETY: this fn's contract.
    unsafe {
        log_owed();
        let xids = transaction_state::current_xids();
        let mut owed = Owed::new((*rel).rd_id, subxact, xids, pages::file_node(rel));
        owed.push(row);
        owed_rows::with(|o| *o = Some(owed));
    }
}

/// At a statement's end: logs the rows logical decoding is owed if they take more than
/// `logical_decoding_work_mem`. A decoder with that setting streams (or spills) a
/// transaction's changes past it while the transaction is in progress, as heap's are
/// when its statements write them; fewer rows wait to be logged with their row group,
/// and a transaction that rolls back before writing them logs nothing of them.
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn log_owed_if_streamed() {
    let owed_bytes = owed_rows::with(|o| {
        let o = o.as_ref()?;
        let rows: u64 = o.runs().iter().map(|r| r.end - r.start).sum();
        BUFFERS.with_borrow(|buffers| {
            let buf = buffers.iter().find(|b| b.relid == o.relid && b.subxact == o.subxact && b.rows > 0)?;
            // As the reorder buffer counts a change: its struct, the tuple's and the values.
            let per_change = std::mem::size_of::<pg_sys::ReorderBufferChange>()
                + std::mem::size_of::<pg_sys::HeapTupleData>();
            Some(buf.memory() as u64 * rows / buf.rows as u64 + rows * per_change as u64)
        })
    });
    // SAFETY: this fn's contract; the setting is a plain global of this backend.
    unsafe {
        if owed_bytes.is_some_and(|b| b > pg_sys::logical_decoding_work_mem as u64 * 1024) {
            log_owed();
        }
    }
}

/// Logs the rows logical decoding is owed, as INSERT records laid out from their
/// buffer: something else decoding would see is about to happen, and must come after
/// them.
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn log_owed() {
    let Some(owed) = owed_rows::with(Option::take) else { return };
    if owed.is_empty() {
        return;
    }
    // SAFETY: this fn's contract. The relation is this transaction's (it inserted the
    // rows), locked until the transaction ends.
    let shapes = unsafe {
        let rel = pg_sys::RelationIdGetRelation(owed.relid);
        if rel.is_null() {
            pgrx::error!("relation {} of rows owed to logical decoding is gone", owed.relid.to_u32());
        }
        let shapes = datum::attr_shapes(rel);
        pg_sys::RelationClose(rel);
        shapes
    };
    let logged = BUFFERS.with_borrow(|buffers| {
        let buf = buffers.iter().find(|b| b.relid == owed.relid && b.subxact == owed.subxact)?;
        let ranges =
            owed.runs().iter().map(|r| (r.start - buf.first_row) as usize..(r.end - buf.first_row) as usize);
        // SAFETY: this fn's contract.
        unsafe { log_rows(buf, &shapes, owed.node, owed.xids, ranges) };
        Some(())
    });
    // Owed rows leave their buffer only with their row group, which logs them.
    if logged.is_none() {
        pgrx::error!("rows owed to logical decoding are not buffered");
    }
}

/// Logs rows `ranges` (indexes into `buf`'s columns) as INSERT records of transaction
/// `xids`, laid out from the buffer.
///
/// # Safety
/// On the backend thread inside a transaction.
unsafe fn log_rows(
    buf: &WriteBuffer,
    shapes: &[AttrShape],
    node: FileNode,
    xids: Xids,
    ranges: impl IntoIterator<Item = std::ops::Range<usize>>,
) {
    let records = row_images::records(shapes, &buf.kinds, &buf.columns, ranges, || {
        RecordBuilder::of_transaction(node, xids)
    });
    for r in records {
        // SAFETY: this fn's contract.
        unsafe { pages::log_change(logical_record::INSERT, r.bytes(), false) };
    }
}

/// Writes a row group's chunks too big for one `ROW_GROUP_WRITE` record (or all of them
/// when pages are logged as generic WAL), which lie one after another in the stream,
/// gathering small ones: each write of a page is a WAL record of its own.
struct StreamWriter {
    rel: pg_sys::Relation,
    /// Stream offset of `pending`'s first byte.
    at: u64,
    pending: Vec<u8>,
}

/// Chunks are gathered until they reach this many bytes.
const GATHERED_BYTES: usize = 64 << 10;

impl StreamWriter {
    /// Appends `bytes` at the stream offset after the ones written so far.
    ///
    /// # Safety
    /// `self.rel` must be open and locked, with the space written to allocated to the
    /// caller; call on the backend thread inside a transaction.
    unsafe fn write(&mut self, bytes: &[u8]) {
        // SAFETY: the caller guarantees this fn's contract.
        unsafe {
            if self.pending.len() + bytes.len() > GATHERED_BYTES {
                self.finish();
            }
            if bytes.len() >= GATHERED_BYTES {
                pages::write_stream(self.rel, self.at, bytes);
                self.at += bytes.len() as u64;
            } else {
                self.pending.extend_from_slice(bytes);
            }
        }
    }

    /// Writes the gathered bytes.
    ///
    /// # Safety
    /// As for `write`.
    unsafe fn finish(&mut self) {
        // SAFETY: the caller guarantees this fn's contract.
        unsafe {
            if !self.pending.is_empty() {
                pages::write_stream(self.rel, self.at, &self.pending);
                self.at += self.pending.len() as u64;
                self.pending.clear();
            }
        }
    }
}

/// Before the first metadata of an unlogged relation that crash recovery reset: a fresh
/// storage id (see `layout::RESET_STORAGE_BIT`), and the stale metadata goes.
unsafe fn take_fresh_storage_after_reset(rel: pg_sys::Relation) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and slots read, and row groups written through `pages` and `catalog`.
    unsafe {
        if pages::storage_id(rel) & crate::storage::format::layout::RESET_STORAGE_BIT == 0 {
            return;
        }
        let fresh = catalog::next_storage_id();
        if let Some(stale) = pages::replace_reset_storage_id(rel, fresh) {
            catalog::delete_storage(stale);
        }
    }
}

/// Hands the buffer, whose row numbers are used up, more: in place while no one has taken
/// any after its last (one row group keeps growing), else a new window after writing the
/// buffered rows out. Numbers are never given back, and the TID space holds about 1.25e12
/// rows: taking one window per transaction (102,400 numbers) used it up after about 12
/// million inserting transactions; growing by doubling wastes at most as many numbers as
/// rows were written.
unsafe fn take_row_numbers(rel: pg_sys::Relation, buf: &mut WriteBuffer, expected: usize) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is the buffer's relation, open
    // and locked, and we are on the backend thread inside a transaction, so the metapage and
    // the metadata tables may be written.
    unsafe {
        let end = buf.reserved_end;
        let want = buf.step.max(expected as u64).min(ROW_GROUP_ROWS as u64);
        let grow = want.min(buf.window_end.saturating_sub(end));
        if grow > 0 && pages::extend_rows(rel, end, grow) {
            buf.reserved_end = end + grow;
        } else {
            let rows = buf.rows;
            write_out(rel, buf, rows, true);
            take_fresh_storage_after_reset(rel);
            // Row groups and reservation windows never span more than ROW_GROUP_ROWS rows:
            // catalog lookups of a row's group rely on it. Windows may overlap those of
            // later writers (who took numbers after ours): a look-up takes the last one
            // starting at or before a row, which is its writer's.
            let storage_id = pages::storage_id(rel);
            buf.first_row = catalog::with_reservations_lock((*rel).rd_id, pg_sys::ShareLock, || {
                let first = pages::reserve_rows(rel, want);
                catalog::insert_reservation(storage_id, first, ROW_GROUP_ROWS as u64);
                first
            });
            buf.reserved_end = buf.first_row + want;
            buf.window_end = buf.first_row + ROW_GROUP_ROWS as u64;
        }
        buf.step = (want * 2).min(ROW_GROUP_ROWS as u64);
    }
}

/// An INSERT starts whose plan expects `rows` rows into `relid`: its first row takes that
/// many numbers at once (up to `PLANNED_ROWS_CAP`), not one, then two, then four: when
/// other sessions take numbers in between, each step that cannot grow in place ends a row
/// group, and four concurrent 100-row INSERTs wrote several small row groups each.
pub fn expect_rows(relid: pg_sys::Oid, rows: f64) {
    let rows = rows.clamp(1.0, PLANNED_ROWS_CAP as f64) as usize;
    PLANNED.with(|p| {
        let mut planned = p.borrow_mut();
        planned.retain(|e| e.0 != relid);
        if rows > 1 {
            planned.push((relid, rows));
        }
    });
}

/// The planned rows of `relid` for the statement running, once (1 if none).
fn planned_rows(relid: pg_sys::Oid) -> usize {
    PLANNED.with(|p| {
        let mut planned = p.borrow_mut();
        match planned.iter().position(|e| e.0 == relid) {
            Some(at) => planned.swap_remove(at).1,
            None => 1,
        }
    })
}

/// Gives the numbers a written-out buffer took and did not use back to the metapage, if
/// no one took any after them and they are many (a plan that expected more rows than
/// came): numbers are otherwise never reused.
///
/// # Safety
/// As for `write_out`.
unsafe fn give_back(rel: pg_sys::Relation, buf: &WriteBuffer) {
    let used_end = buf.first_row + buf.rows as u64;
    if buf.reserved_end >= used_end + GIVE_BACK_ROWS {
        // SAFETY: this fn's contract is `write_out`'s.
        unsafe { pages::give_back_rows(rel, buf.reserved_end, used_end) };
    }
}

/// Runs `f` on the buffer of `rel` for the current subtransaction, made if there is
/// none (or if the table's columns changed since it was: the rows buffered under the old
/// shape are written out first).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
unsafe fn with_buffer<R>(rel: pg_sys::Relation, f: impl FnOnce(&mut WriteBuffer) -> R) -> R {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and row groups written through `pages` and `catalog`.
    unsafe {
        let subxact = transaction_state::current_subxact();
        let relid = (*rel).rd_id;
        let natts = (*(*rel).rd_att).natts as usize;
        let usable = |b: &WriteBuffer| b.relid == relid && b.subxact == subxact && b.kinds.len() == natts;
        let existing = BUFFERS.with(|cell| cell.borrow().iter().position(usable));
        let pos = match existing {
            Some(pos) => pos,
            None => {
                // Before the buffers are borrowed (and only for a new buffer, which keeps
                // them): the first look-up of a table's sort key runs a query, whose
                // ExecutorStart writes buffers out.
                let sort_columns = options::sort_columns(relid);
                let goal = options::encoding_goal(relid);
                BUFFERS.with(|cell| {
                    let mut buffers = cell.borrow_mut();
                    // One of the table's columns changed since the buffer was made: the
                    // rows buffered under the old shape are written out first.
                    if let Some(pos) = buffers.iter().position(|b| b.relid == relid && b.subxact == subxact) {
                        let mut old = buffers.swap_remove(pos);
                        let rows = old.rows;
                        write_out(rel, &mut old, rows, true);
                    }
                    buffers.push(WriteBuffer::new(rel, subxact, sort_columns, goal));
                    buffers.len() - 1
                })
            }
        };
        BUFFERS.with(|cell| {
            let mut buffers = cell.borrow_mut();
            f(&mut buffers[pos])
        })
    }
}

/// Counts `rows` rows of command `cid` into `buf` (their values are in its columns).
fn count_rows(buf: &mut WriteBuffer, rows: usize, cid: pg_sys::CommandId) {
    buf.rows += rows;
    match buf.cid_runs.last_mut() {
        Some((last, end)) if *last == cid => *end = buf.rows,
        _ => buf.cid_runs.push((cid, buf.rows)),
    }
}

/// Writes the buffer out once its values take more than MAX_BUFFER_BYTES.
///
/// # Safety
/// As for `write_out`.
unsafe fn bound_memory(rel: pg_sys::Relation, buf: &mut WriteBuffer) {
    if buf.memory() > MAX_BUFFER_BYTES {
        let rows = buf.rows;
        // SAFETY: this fn's contract is `write_out`'s.
        unsafe { write_out(rel, buf, rows, true) };
    }
}

/// Buffers the row in `slot` and returns its row number. `expected` is how many rows the
/// caller is about to insert (1 if it does not know): how many numbers to take at once.
/// With `owe`, logical decoding is owed the row (`owed_rows`): an INSERT's row at
/// `wal_level = logical`.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `slot` must be a valid tuple slot;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    expected: usize,
    owe: bool,
) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `slot` is a valid tuple slot, and we are on the backend thread inside a
    // transaction, so relations may be opened and slots read, and row groups written through
    // `pages` and `catalog`.
    unsafe {
        let natts = (*(*rel).rd_att).natts as usize;
        pg_sys::slot_getallattrs(slot);
        let expected = expected.max(planned_rows((*rel).rd_id));
        let (row, subxact) = with_buffer(rel, |buf| {
            // Before the row is added: it stays buffered until `owe_inserted` owes it.
            bound_memory(rel, buf);
            if buf.first_row + buf.rows as u64 == buf.reserved_end {
                take_row_numbers(rel, buf, expected);
                if buf.rows == 0 && expected > 1 {
                    let rows = (buf.reserved_end - buf.first_row) as usize;
                    buf.columns.iter_mut().flatten().for_each(|c| c.reserve_rows(rows));
                }
            }
            let values = std::slice::from_raw_parts((*slot).tts_values, natts);
            let nulls = std::slice::from_raw_parts((*slot).tts_isnull, natts);
            for i in 0..natts {
                if let Some(c) = buf.columns[i].as_mut() {
                    datum::push_datum(c, buf.kinds[i], values[i], nulls[i]);
                }
            }
            let row = buf.first_row + buf.rows as u64;
            count_rows(buf, 1, cid);
            (row, buf.subxact)
        });
        if owe {
            owe_inserted(rel, subxact, row);
        }
        row
    }
}

/// Buffers `rows` rows given column by column, `columns[i]` holding attribute i's values
/// (None for a dropped column), all inserted by command `cid` (COPY's rows, parsed
/// apart). Returns their row numbers as runs: (first row of the run among `rows`, its
/// row number, rows in the run).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, whose attributes `columns`
/// matches; call on the backend thread inside a transaction (it calls PostgreSQL, which
/// may raise an error).
pub unsafe fn insert_columns(
    rel: pg_sys::Relation,
    columns: &[Option<ColumnBuilder>],
    rows: usize,
    cid: pg_sys::CommandId,
) -> Vec<(usize, u64, usize)> {
    // SAFETY: the caller guarantees this fn's contract (`with_buffer`'s, `take_row_numbers`'s
    // and `write_out`'s).
    unsafe {
        with_buffer(rel, |buf| {
            let mut runs = Vec::new();
            let mut done = 0;
            while done < rows {
                if buf.first_row + buf.rows as u64 == buf.reserved_end {
                    take_row_numbers(rel, buf, rows - done);
                }
                let free = (buf.reserved_end - (buf.first_row + buf.rows as u64)) as usize;
                let n = free.min(rows - done);
                runs.push((done, buf.first_row + buf.rows as u64, n));
                for (into, from) in buf.columns.iter_mut().zip(columns) {
                    if let (Some(into), Some(from)) = (into, from) {
                        into.extend_from(from, done..done + n);
                    }
                }
                count_rows(buf, n, cid);
                done += n;
                bound_memory(rel, buf);
            }
            runs
        })
    }
}

/// Buffers `slot`'s row for `rel` and gives the slot the row's TID; returns its number.
/// `expected` and `owe` as for `insert`.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `slot` must be a valid tuple slot;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert_row(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    expected: usize,
    owe: bool,
) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `slot` is a valid tuple slot, and we are on the backend thread inside a
    // transaction, so relations may be opened and slots read, and row groups written through
    // `pages` and `catalog`.
    unsafe {
        let row = insert(rel, slot, cid, expected, owe);
        (*slot).tts_tid = crate::storage::relation::tid::row_tid(row);
        (*slot).tts_tableOid = (*rel).rd_id;
        row
    }
}

/// Before a scan of `rel` starts: this transaction's buffered rows written out, so that
/// it sees them (in parallel mode nothing may be written; ExecutorStart flushed).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn flush_before_reading(rel: pg_sys::Relation) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and slots read, and row groups written through `pages` and `catalog`.
    unsafe {
        if !pg_sys::IsInParallelMode() {
            flush_for_read(rel);
        }
    }
}

/// Makes the buffered rows of `rel` visible to scans of this transaction. Rows of the
/// current subtransaction are simply written out. Rows an enclosing subtransaction
/// buffered are written out under the current one too (nothing else can make them
/// visible here), keeping a copy that `on_subxact` restores if this one rolls back.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn flush_for_read(rel: pg_sys::Relation) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and slots read, and row groups written through `pages` and `catalog`.
    unsafe {
        let subxact = transaction_state::current_subxact();
        let relid = (*rel).rd_id;
        BUFFERS.with(|cell| {
            let mut buffers = cell.borrow_mut();
            for buf in buffers.iter_mut().filter(|b| b.relid == relid && b.rows > 0) {
                if buf.subxact != subxact {
                    let copy = Borrowed { written_under: subxact, buffer: buf.clone() };
                    BORROWED.with(|b| b.borrow_mut().push(copy));
                }
                let rows = buf.rows;
                write_out(rel, buf, rows, true);
            }
        });
    }
}

/// Subtransaction `subxact` commits into `parent`: rows it wrote for an enclosing
/// subtransaction now stand or fall with `parent`; once that is their owner, the copy
/// is no longer needed.
fn borrowed_commit(subxact: pg_sys::SubTransactionId, parent: pg_sys::SubTransactionId) {
    BORROWED.with(|cell| {
        let mut borrowed = cell.borrow_mut();
        borrowed.retain_mut(|b| {
            if b.written_under == subxact {
                b.written_under = parent;
            }
            b.buffer.subxact != b.written_under
        });
    });
}

/// Subtransaction `subxact` rolls back: what it wrote for enclosing subtransactions
/// is gone, so their buffers go back to what they were.
fn borrowed_abort(subxact: pg_sys::SubTransactionId) {
    let restored: Vec<WriteBuffer> = BORROWED.with(|cell| {
        let mut borrowed = cell.borrow_mut();
        let (back, keep): (Vec<Borrowed>, Vec<Borrowed>) =
            borrowed.drain(..).partition(|b| b.written_under == subxact);
        *borrowed = keep;
        back.into_iter().map(|b| b.buffer).collect()
    });
    BUFFERS.with(|cell| {
        let mut buffers = cell.borrow_mut();
        buffers.retain(|b| b.subxact != subxact);
        for old in restored {
            buffers.retain(|b| !(b.relid == old.relid && b.subxact == old.subxact));
            buffers.push(old);
        }
    });
}

/// Writes out every buffer of the current subtransaction (commit of it or of the
/// transaction), or of relation `only`.
unsafe fn flush_current(only: Option<pg_sys::Oid>) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and slots read, and row groups written through `pages` and
    // `catalog`.
    unsafe {
        let subxact = transaction_state::current_subxact();
        BUFFERS.with(|cell| {
            let mut buffers = cell.borrow_mut();
            let mut kept = Vec::new();
            for mut buf in buffers.drain(..) {
                let mine = buf.subxact == subxact && only.is_none_or(|r| r == buf.relid);
                if !mine {
                    kept.push(buf);
                    continue;
                }
                // The relation may have been dropped in this transaction: nothing to write.
                let rel = pg_sys::try_relation_open(buf.relid, pg_sys::NoLock as i32);
                if rel.is_null() {
                    continue;
                }
                let rows = buf.rows;
                write_out(rel, &mut buf, rows, false);
                give_back(rel, &buf);
                pg_sys::relation_close(rel, pg_sys::NoLock as i32);
            }
            *buffers = kept;
        });
    }
}

/// Writes out every buffer of the current subtransaction: before a query starts, so
/// that its snapshot (and its parallel workers, which cannot write) see the rows.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn flush_all() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and slots read, and row groups written through `pages` and
    // `catalog`.
    unsafe {
        flush_current(None);
    }
}

/// Writes out the current subtransaction's buffered rows of the relations a query is
/// about to read (`relids`, its range table's), so that its snapshot sees them. Rows of
/// other tables stay buffered: a query that reads none of them (a row trigger's, or a
/// function's inside an index or a CHECK) no longer cuts the inserting statement's row
/// group short, one row group a row.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn flush_for_query(relids: impl Iterator<Item = pg_sys::Oid>) {
    let mut buffered: Vec<pg_sys::Oid> =
        BUFFERS.with(|cell| cell.borrow().iter().filter(|b| b.rows > 0).map(|b| b.relid).collect());
    // Each once (a range table names a table as often as the query reads it), and no
    // further look at a long range table once none is left.
    for relid in relids {
        if buffered.is_empty() {
            return;
        }
        if let Some(at) = buffered.iter().position(|&b| b == relid) {
            buffered.swap_remove(at);
            // SAFETY: per this fn's contract, as `flush_relation`'s.
            unsafe { flush_current(Some(relid)) };
        }
    }
}

/// Writes out the buffered rows of `relid` (end of a bulk insert, e.g. a table rewrite).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn flush_relation(relid: pg_sys::Oid) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and slots read, and row groups written through `pages` and
    // `catalog`.
    unsafe {
        flush_current(Some(relid));
    }
}

/// Forgets the buffered rows of `relid` (its storage is being replaced or truncated),
/// once those logical decoding is owed are logged (a utility statement's start logged
/// them already).
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn discard_relation(relid: pg_sys::Oid) {
    if owed_rows::with(|o| o.as_ref().is_some_and(|o| o.relid == relid)) {
        // SAFETY: this fn's contract.
        unsafe { log_owed() };
    }
    BUFFERS.with(|cell| cell.borrow_mut().retain(|b| b.relid != relid));
}

/// Whether row `row` of `relid` is still in one of this backend's write buffers.
pub fn holds_row(relid: pg_sys::Oid, row: u64) -> bool {
    BUFFERS.with(|cell| cell.borrow().iter().any(|b| b.holds(relid, row)))
}

pub fn has_pending(relid: pg_sys::Oid) -> bool {
    BUFFERS.with(|cell| cell.borrow().iter().any(|b| b.relid == relid && b.rows > 0))
}

/// At a transaction's end: buffered rows written out before commit or prepare, dropped
/// after.
///
/// # Safety
/// Called by the transaction callback (`glue::xact_callbacks`) with PostgreSQL's event.
pub unsafe fn on_xact(event: pg_sys::XactEvent::Type) {
    // SAFETY: a transaction callback, run on the backend thread: before commit or prepare the
    // transaction is still open, so buffered rows may be written out (relations opened,
    // metadata written); after the end only per-backend state is dropped.
    unsafe {
        use pg_sys::XactEvent::*;
        match event {
            XACT_EVENT_PRE_COMMIT | XACT_EVENT_PARALLEL_PRE_COMMIT | XACT_EVENT_PRE_PREPARE => {
                flush_current(None);
                // After the last flush, which may have taken free space.
                super::free_space::return_claims();
            }
            XACT_EVENT_ABORT
            | XACT_EVENT_PARALLEL_ABORT
            | XACT_EVENT_COMMIT
            | XACT_EVENT_PARALLEL_COMMIT
            | XACT_EVENT_PREPARE => {
                BUFFERS.with(|cell| cell.borrow_mut().clear());
                owed_rows::forget(None);
                PLANNED.with(|p| p.borrow_mut().clear());
                super::free_space::forget_claims();
                crate::storage::shared::reservation_slots::release();
            }
            _ => {}
        }
    }
}

/// At a subtransaction's end: its rows written out before it commits; rows it wrote for
/// enclosing subtransactions handed over or restored.
///
/// # Safety
/// Called by the subtransaction callback (`glue::xact_callbacks`) with PostgreSQL's
/// arguments.
pub unsafe fn on_subxact(
    event: pg_sys::SubXactEvent::Type,
    subxact: pg_sys::SubTransactionId,
    parent: pg_sys::SubTransactionId,
) {
    // SAFETY: a subtransaction callback, run on the backend thread: before a subtransaction
    // commits it is still open, so its rows may be written out; at commit and abort only
    // per-backend state is moved or dropped, by the ids PostgreSQL passes.
    unsafe {
        use pg_sys::SubXactEvent::*;
        match event {
            SUBXACT_EVENT_PRE_COMMIT_SUB => flush_current(None),
            SUBXACT_EVENT_COMMIT_SUB => borrowed_commit(subxact, parent),
            SUBXACT_EVENT_ABORT_SUB => {
                owed_rows::forget(Some(subxact));
                borrowed_abort(subxact);
                super::free_space::forget_subxact(subxact);
            }
            _ => {}
        }
    }
}
