//! COPY ... FROM into a columnar table, parsed a batch of rows at a time with the
//! columns parsed side by side on rayon's threads. PostgreSQL's COPY parses each value
//! with its type's input function, one row after another on the backend thread: for a
//! bulk load that is most of the time (strtod for every float), and the columnar
//! encoding waited for it. Here PostgreSQL still reads the input (files, programs,
//! STDIN, text and CSV, encodings, quoting: `NextCopyFromRawFields`), and the plain
//! forms of the common types are parsed in Rust (`format::text_input`); any other type
//! or form goes through its input function on this thread, row after row, so every
//! value means what it means to PostgreSQL and every error is PostgreSQL's, with its
//! context (line, column, value).
//!
//! The rows' index entries are made as PostgreSQL's COPY makes them, a row at a time
//! after the rows are buffered (ExecInsertIndexTuples, with its uniqueness and exclusion
//! checks); under `wal_level = logical` the same pass logs each row for decoding, as
//! PostgreSQL's COPY does through `multi_insert`.
//!
//! Taken only for what it does exactly like PostgreSQL's COPY: a columnar table (not a
//! partition) with no triggers (foreign keys and deferred constraints have some), CHECK
//! constraints or generated columns, no default to fill in, the
//! role allowed to INSERT into the whole table (and to read server files or run
//! programs if the COPY does), no row-level security, text or CSV without the FORCE
//! options or WHERE, outside read-only transactions and Citus databases. Anything else
//! goes to PostgreSQL's COPY, which also raises the errors for what is not allowed.
//! `pgcolumnar.enable_parallel_copy = off` sends every COPY there.

use crate::pg_list;
use crate::storage::change::batch_log::{self, BatchLayout};
use crate::storage::change::logical_log;
use crate::storage::format::column_builder::ColumnBuilder;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::encoding::PhysicalKind;
use crate::storage::format::image_arena::ImageArena;
use crate::storage::format::text_input::{parse_column, RawFields, TextForm};
use crate::storage::relation::am;
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use rayon::prelude::*;
use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};

static ENABLE_PARALLEL_COPY: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_parallel_copy",
        c"Parses COPY FROM into columnar tables a batch of rows at a time, columns in parallel.",
        c"Off: every COPY goes through PostgreSQL's own row-by-row COPY.",
        &ENABLE_PARALLEL_COPY,
        GucContext::Userset,
        GucFlags::default(),
    );
}

thread_local! {
    static COPIED_ROWS: Cell<u64> = const { Cell::new(0) };
}

/// Rows this backend loaded through this COPY path.
pub fn copied_rows() -> u64 {
    COPIED_ROWS.with(Cell::get)
}

/// A batch ends at this many rows or bytes of fields.
const BATCH_ROWS: usize = 65_536;
const BATCH_BYTES: usize = 4 << 20;
/// Below this many rows a batch is parsed on this thread alone.
const PARALLEL_ROWS: usize = 4096;

unsafe extern "C-unwind" {
    fn errcontext_msg(fmt: *const c_char, ...) -> i32;
}

/// Runs `stmt` if it is a COPY FROM this path takes (see the module's comment), setting
/// `qc`; false, having done nothing, when PostgreSQL's COPY is to run it.
///
/// # Safety
/// `stmt` must be a valid utility statement and `qc` valid or NULL; call on the backend
/// thread inside a transaction.
pub unsafe fn run(
    stmt: *mut pg_sys::Node,
    query_string: *const c_char,
    qc: *mut pg_sys::QueryCompletion,
) -> bool {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, and
    // `stmt` is a valid node, so its fields may be read and the relation opened.
    unsafe {
        if (*stmt).type_ != pg_sys::NodeTag::T_CopyStmt || !ENABLE_PARALLEL_COPY.get() {
            return false;
        }
        let copy = stmt as *mut pg_sys::CopyStmt;
        if !(*copy).is_from
            || (*copy).relation.is_null()
            || !(*copy).query.is_null()
            || !(*copy).whereClause.is_null()
            || pg_sys::IsInParallelMode()
        {
            return false;
        }
        let Some(format) = plain_options((*copy).options) else { return false };
        if !(*copy).filename.is_null() {
            let role = match (*copy).is_program {
                true => pg_sys::ROLE_PG_EXECUTE_SERVER_PROGRAM,
                false => pg_sys::ROLE_PG_READ_SERVER_FILES,
            };
            if !pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(role)) {
                return false;
            }
        }
        // PostgreSQL's COPY would take this lock too, and keeps it if it runs instead.
        let rel = pg_sys::table_openrv((*copy).relation, pg_sys::RowExclusiveLock as i32);
        if !am::is_columnar(rel) {
            pg_sys::table_close(rel, pg_sys::NoLock as i32);
            return false;
        }
        let attnums: Vec<i32> =
            pg_list::ints(pg_sys::CopyGetAttnums((*rel).rd_att, rel, (*copy).attlist)).collect();
        if !takes(rel, &attnums) {
            pg_sys::table_close(rel, pg_sys::NoLock as i32);
            return false;
        }
        let processed = load(rel, copy, query_string, &attnums, format);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
        if !qc.is_null() {
            pg_sys::SetQueryCompletion(qc, pg_sys::CommandTag::CMDTAG_COPY, processed);
        }
        true
    }
}

/// How rows are laid out in the input.
#[derive(Clone, Copy)]
struct Format {
    csv: bool,
    header: bool,
}

/// The COPY's format when its options are ones this path reads like PostgreSQL (the
/// values are checked by BeginCopyFrom, as for any COPY).
unsafe fn plain_options(options: *mut pg_sys::List) -> Option<Format> {
    // SAFETY: `options` is the statement's list of DefElems (the caller's contract).
    unsafe {
        let mut format = Format { csv: false, header: false };
        for def in pg_list::ptrs::<pg_sys::DefElem>(options) {
            let name = CStr::from_ptr((*def).defname).to_bytes();
            match name {
                b"format" => match CStr::from_ptr(pg_sys::defGetString(def)).to_bytes() {
                    b"text" => format.csv = false,
                    b"csv" => format.csv = true,
                    _ => return None,
                },
                b"header" => {
                    format.header = match (*def).arg.is_null() {
                        true => true,
                        false => {
                            let value = pg_sys::defGetString(def);
                            let mut on = false;
                            match CStr::from_ptr(value).to_bytes().eq_ignore_ascii_case(b"match") {
                                true => true,
                                false if pg_sys::parse_bool(value, &mut on) => on,
                                false => return None,
                            }
                        }
                    }
                }
                b"delimiter" | b"null" | b"quote" | b"escape" | b"encoding" => {}
                _ => return None,
            }
        }
        Some(format)
    }
}

/// Whether this path loads columnar table `rel` (COPY's columns `attnums`) as
/// PostgreSQL's COPY would.
unsafe fn takes(rel: pg_sys::Relation, attnums: &[i32]) -> bool {
    // SAFETY: `rel` is open and locked (the caller's contract); its descriptor, constraints
    // and index list are read as the relcache keeps them.
    unsafe {
        let form = (*rel).rd_rel;
        if (*form).relkind as u8 != pg_sys::RELKIND_RELATION
            || (*form).relispartition
            || !(*rel).trigdesc.is_null()
            || attnums.is_empty()
            || (pg_sys::XactReadOnly && !(*rel).rd_islocaltemp)
        {
            return false;
        }
        let desc = (*rel).rd_att;
        let constr = (*desc).constr;
        if !constr.is_null() && ((*constr).num_check > 0 || (*constr).has_generated_stored) {
            return false;
        }
        // Columns left out get their defaults in PostgreSQL's COPY: only NULL is taken here.
        for i in 0..(*desc).natts as usize {
            let a = datum::attr(desc, i);
            if !a.attisdropped
                && !attnums.contains(&(i as i32 + 1))
                && (a.atthasdef || a.attidentity != 0 || a.attgenerated != 0)
            {
                return false;
            }
        }
        let relid = (*rel).rd_id;
        pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_INSERT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
            && pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true)
                != pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
            && pg_sys::get_extension_oid(c"citus".as_ptr(), true) == pg_sys::InvalidOid
    }
}

/// One of the COPY's columns.
struct Column {
    /// Index of its attribute.
    att: usize,
    kind: ColumnKind,
    /// The plain forms parsed in Rust, if its type has them (and no value of this COPY
    /// failed to parse so: then its input function takes all of them).
    rust: Option<TextForm>,
    flinfo: pg_sys::FmgrInfo,
    ioparam: pg_sys::Oid,
    typmod: i32,
    name: *const c_char,
}

unsafe fn column(desc: pg_sys::TupleDesc, attnum: i32, kind: ColumnKind) -> Column {
    // SAFETY: `desc` is the open relation's descriptor and `attnum` one of its columns
    // (CopyGetAttnums checked); the type lookups run on the backend thread in a transaction.
    unsafe {
        let att = attnum as usize - 1;
        let a = datum::attr(desc, att);
        let plain = a.atttypmod < 0;
        let form = match a.atttypid {
            pg_sys::INT2OID => Some(TextForm::Int { min: i16::MIN as i64, max: i16::MAX as i64 }),
            pg_sys::INT4OID => Some(TextForm::Int { min: i32::MIN as i64, max: i32::MAX as i64 }),
            pg_sys::INT8OID => Some(TextForm::Int { min: i64::MIN, max: i64::MAX }),
            pg_sys::FLOAT4OID => Some(TextForm::Float4),
            pg_sys::FLOAT8OID => Some(TextForm::Float8),
            pg_sys::BOOLOID => Some(TextForm::Bool),
            pg_sys::DATEOID => Some(TextForm::Date),
            pg_sys::TIMESTAMPOID if plain => Some(TextForm::Timestamp),
            pg_sys::TIMESTAMPTZOID if plain => Some(TextForm::TimestampTz),
            pg_sys::TEXTOID => Some(TextForm::Text { max_bytes: None }),
            // varchar(n): a value of at most n bytes has at most n characters.
            pg_sys::VARCHAROID => Some(TextForm::Text {
                max_bytes: (!plain).then(|| (a.atttypmod - pg_sys::VARHDRSZ as i32) as usize),
            }),
            pg_sys::BPCHAROID if !plain => {
                Some(TextForm::Padded { chars: (a.atttypmod - pg_sys::VARHDRSZ as i32) as usize })
            }
            _ => None,
        };
        let (mut func, mut ioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
        pg_sys::getTypeInputInfo(a.atttypid, &mut func, &mut ioparam);
        let mut flinfo = pg_sys::FmgrInfo::default();
        pg_sys::fmgr_info(func, &mut flinfo);
        Column {
            att,
            kind,
            rust: form.filter(|f| stored_as(*f, kind)),
            flinfo,
            ioparam,
            typmod: a.atttypmod,
            name: a.attname.data.as_ptr(),
        }
    }
}

/// `value` (a C string, or NULL) through `c`'s input function, as PostgreSQL's COPY
/// calls it (also for NULL: a domain's input function checks its NOT NULL).
///
/// # Safety
/// On the backend thread inside a transaction; `value` NULL or NUL-terminated.
unsafe fn input(c: &mut Column, value: *const c_char) -> pg_sys::Datum {
    // SAFETY: per this fn's contract; the FmgrInfo was set up by `column`.
    unsafe { pg_sys::InputFunctionCall(&mut c.flinfo, value as *mut c_char, c.ioparam, c.typmod) }
}

/// Whether a column stored as `kind` takes what `form` parses.
fn stored_as(form: TextForm, kind: ColumnKind) -> bool {
    matches!(
        (form, kind),
        (TextForm::Int { min: -32768, .. }, ColumnKind::Int { len: 2 })
            | (TextForm::Int { min: -2147483648, .. }, ColumnKind::Int { len: 4 })
            | (TextForm::Int { min: i64::MIN, .. }, ColumnKind::Int { len: 8 })
            | (TextForm::Float4, ColumnKind::Float4)
            | (TextForm::Float8, ColumnKind::Float8)
            | (TextForm::Bool, ColumnKind::Int { len: 1 })
            | (TextForm::Date, ColumnKind::Int { len: 4 })
            | (TextForm::Timestamp | TextForm::TimestampTz, ColumnKind::Int { len: 8 })
            | (TextForm::Text { .. } | TextForm::Padded { .. }, ColumnKind::Varlena)
    )
}

/// Why reading stopped at a row before the end of the input: PostgreSQL's COPY raises
/// these at that row, after the rows before it (and, for a NULL in a NOT NULL column,
/// the row itself) were parsed.
enum Stop {
    ExtraData,
    /// The row has fewer fields than columns: these.
    MissingData(Vec<Option<std::ffi::CString>>),
    /// The row (the batch's last) has a NULL where the table wants none.
    NotNull,
}

/// What the error context callbacks print: `COPY t, line N, column c: "value"`.
struct Place {
    relname: *const c_char,
    line: u64,
    column: *const c_char,
    value: *const c_char,
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn place_context(arg: *mut c_void) {
    // SAFETY: PostgreSQL calls this with the `Place` that `load` pushed, which outlives its
    // place on the error context stack.
    unsafe {
        let p = &*(arg as *const Place);
        let relname = CStr::from_ptr(p.relname).to_string_lossy();
        let column = CStr::from_ptr(p.column).to_string_lossy();
        let text = match p.value.is_null() {
            true => format!("COPY {relname}, line {}, column {column}: null input", p.line),
            false => {
                let value = CStr::from_ptr(p.value).to_bytes();
                format!("COPY {relname}, line {}, column {column}: \"{}\"", p.line, clipped(value))
            }
        };
        let text = std::ffi::CString::new(text).unwrap_or_default();
        pg_sys::set_errcontext_domain(c"postgres-15".as_ptr());
        errcontext_msg(c"%s".as_ptr(), text.as_ptr());
    }
}

/// A `Place` on PostgreSQL's error context stack (`place_context`), updated through
/// `place` as values are parsed, freed when the guard goes.
struct PlaceGuard {
    /// Written through this pointer, which the error context stack holds too (an error
    /// leaves the box to leak: a few bytes).
    place: *mut Place,
    context: Option<ContextGuard>,
}

impl PlaceGuard {
    /// # Safety
    /// On the backend thread; `relname` stays valid for the guard's life.
    unsafe fn push(relname: *const c_char, line: u64) -> PlaceGuard {
        let place = Box::into_raw(Box::new(Place {
            relname,
            line,
            column: std::ptr::null(),
            value: std::ptr::null(),
        }));
        // SAFETY: per this fn's contract; the box lives until the guard drops, after the
        // context is popped.
        let context = unsafe { ContextGuard::push(place_context, place as *mut c_void) };
        PlaceGuard { place, context: Some(context) }
    }
}

impl Drop for PlaceGuard {
    fn drop(&mut self) {
        self.context.take();
        // SAFETY: `place` came from Box::into_raw in `push`, and nothing points at it now.
        drop(unsafe { Box::from_raw(self.place) });
    }
}

/// A value as COPY's error context shows it: its first 100 bytes (whole characters),
/// then "...".
fn clipped(value: &[u8]) -> String {
    const MAX: usize = 100;
    let text = String::from_utf8_lossy(value);
    if text.len() <= MAX {
        return text.into_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Pushes a callback on PostgreSQL's error context stack for the life of the value.
struct ContextGuard {
    entry: Box<pg_sys::ErrorContextCallback>,
}

impl ContextGuard {
    /// # Safety
    /// `arg` must stay valid for the guard's life; on the backend thread.
    unsafe fn push(callback: unsafe extern "C-unwind" fn(*mut c_void), arg: *mut c_void) -> ContextGuard {
        // SAFETY: per this fn's contract; the entry is boxed, so it does not move while it
        // is on the stack.
        unsafe {
            let mut entry = Box::new(pg_sys::ErrorContextCallback {
                previous: pg_sys::error_context_stack,
                callback: Some(callback),
                arg,
            });
            pg_sys::error_context_stack = &mut *entry;
            ContextGuard { entry }
        }
    }
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        // SAFETY: on the backend thread; an error unwinding past the guard leaves the stack
        // to PostgreSQL's error recovery, which resets it (this only runs on normal exit
        // or a Rust unwind, when our entry is on top).
        unsafe {
            if std::ptr::eq(pg_sys::error_context_stack, &*self.entry) {
                pg_sys::error_context_stack = self.entry.previous;
            }
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn copy_context(arg: *mut c_void) {
    // SAFETY: `arg` is the COPY's state, live while this callback is pushed.
    unsafe { pg_sys::CopyFromErrorCallback(arg) }
}

/// What reading a batch ended with.
struct Read {
    raw: RawFields,
    /// The line number of each row.
    lines: Vec<u64>,
    stop: Option<Stop>,
    end: bool,
}

/// What the threads need of each column (Column itself holds PostgreSQL pointers).
type Forms = Vec<Option<(TextForm, PhysicalKind)>>;

/// The Rust-parsed columns of `raw` (None where a column is not, or a value would not
/// parse): pure Rust, on rayon's threads.
fn parse_rust(raw: &RawFields, forms: &Forms) -> Vec<Option<ColumnBuilder>> {
    let parse = |(p, form): (usize, &Option<(TextForm, PhysicalKind)>)| {
        form.and_then(|(form, kind)| parse_column(raw, p, form, kind))
    };
    match raw.rows() >= PARALLEL_ROWS {
        true => forms.par_iter().enumerate().map(parse).collect(),
        false => forms.iter().enumerate().map(parse).collect(),
    }
}

/// The COPY being loaded.
struct Load {
    cstate: pg_sys::CopyFromState,
    columns: Vec<Column>,
    attnums: Vec<i32>,
    kinds: Vec<ColumnKind>,
    /// Positions among `columns` of the NOT NULL ones.
    not_null: Vec<usize>,
    /// A NOT NULL column left out: every row fails it.
    omitted_not_null: bool,
    csv: bool,
    relname: *const c_char,
    /// Line number of the last row read.
    line: u64,
}

impl Load {
    /// Reads the next batch of rows into `raw`, stopping at the end of the input, at a
    /// full batch, or at a row PostgreSQL's COPY would reject before parsing its values.
    ///
    /// # Safety
    /// On the backend thread inside the COPY's transaction.
    unsafe fn read(&mut self, mut raw: RawFields, mut lines: Vec<u64>) -> Read {
        // SAFETY: per this fn's contract; the fields NextCopyFromRawFields returns are read
        // before the next call.
        unsafe {
            raw.clear();
            lines.clear();
            let _context = ContextGuard::push(copy_context, self.cstate as *mut c_void);
            let width = self.columns.len();
            while raw.rows() < BATCH_ROWS && raw.bytes() < BATCH_BYTES {
                let mut fields: *mut *mut c_char = std::ptr::null_mut();
                let mut nfields = 0;
                if !pg_sys::NextCopyFromRawFields(self.cstate, &mut fields, &mut nfields) {
                    return Read { raw, lines, stop: None, end: true };
                }
                let fields = std::slice::from_raw_parts(fields, nfields as usize);
                let field = |p: usize| (!fields[p].is_null()).then(|| CStr::from_ptr(fields[p]).to_bytes());
                if fields.len() > width {
                    return Read { raw, lines, stop: Some(Stop::ExtraData), end: false };
                }
                if fields.len() < width {
                    let owned = (0..fields.len())
                        .map(|p| field(p).map(|f| std::ffi::CString::new(f).unwrap_or_default()));
                    return Read { raw, lines, stop: Some(Stop::MissingData(owned.collect())), end: false };
                }
                self.line += 1;
                if self.csv {
                    // A quoted field's newlines are lines of the input.
                    self.line +=
                        (0..width).filter_map(field).flatten().filter(|b| **b == b'\n').count() as u64;
                }
                raw.push_row((0..width).map(field));
                lines.push(self.line);
                if self.omitted_not_null || self.not_null.iter().any(|&p| fields[p].is_null()) {
                    return Read { raw, lines, stop: Some(Stop::NotNull), end: false };
                }
            }
            Read { raw, lines, stop: None, end: false }
        }
    }

    /// The batch's columns as builders of the table's attributes (None for dropped
    /// ones): `parsed` (the Rust-parsed ones), then, row after row on this thread, those
    /// that go through input functions (also any whose Rust parse gave up on a value),
    /// so that the first value PostgreSQL would reject is the one that raises.
    ///
    /// # Safety
    /// On the backend thread inside the COPY's transaction.
    unsafe fn finish(
        &mut self,
        raw: &RawFields,
        lines: &[u64],
        mut parsed: Vec<Option<ColumnBuilder>>,
    ) -> Vec<Option<ColumnBuilder>> {
        // SAFETY: the input functions run on this thread, in the caller's transaction, with
        // NUL-terminated fields.
        unsafe {
            let rest: Vec<usize> = (0..self.columns.len()).filter(|&p| parsed[p].is_none()).collect();
            if !rest.is_empty() {
                for &p in &rest {
                    // A value the Rust parse does not take: this column goes through its
                    // input function from now on (a file's odd forms tend to repeat).
                    self.columns[p].rust = None;
                    parsed[p] = self.columns[p].kind.physical().map(ColumnBuilder::new);
                }
                let guard = PlaceGuard::push(self.relname, 0);
                let place = guard.place;
                for (row, &line) in lines.iter().enumerate() {
                    (*place).line = line;
                    for &p in &rest {
                        let c = &mut self.columns[p];
                        let value = raw
                            .field_with_nul(p, row)
                            .map_or(std::ptr::null(), |f| f.as_ptr() as *const c_char);
                        (*place).column = c.name;
                        (*place).value = value;
                        let d = input(c, value);
                        if let Some(b) = parsed[p].as_mut() {
                            datum::push_datum(b, c.kind, d, value.is_null());
                        }
                    }
                }
                drop(guard);
            }
            let mut out: Vec<Option<ColumnBuilder>> =
                self.kinds.iter().map(|k| k.physical().map(ColumnBuilder::new)).collect();
            for b in out.iter_mut().flatten() {
                (0..raw.rows()).for_each(|_| b.push_null());
            }
            for (c, b) in self.columns.iter().zip(parsed) {
                out[c.att] = b;
            }
            out
        }
    }
}

/// Reads, parses and buffers every row; returns how many. The Rust parse of a batch
/// runs on rayon's threads while this thread reads the next one.
unsafe fn load(
    rel: pg_sys::Relation,
    copy: *mut pg_sys::CopyStmt,
    query_string: *const c_char,
    attnums: &[i32],
    format: Format,
) -> u64 {
    // SAFETY: on the backend thread inside a transaction, `rel` open and locked; the COPY
    // state comes from BeginCopyFrom and is ended here. Only `parse_rust` (pure Rust, over
    // owned batches) runs on other threads: `in_place_scope` runs its body on this one.
    unsafe {
        let pstate = pg_sys::make_parsestate(std::ptr::null_mut());
        (*pstate).p_sourcetext = query_string;
        let cstate = pg_sys::BeginCopyFrom(
            pstate,
            rel,
            std::ptr::null_mut(),
            (*copy).filename,
            (*copy).is_program,
            None,
            (*copy).attlist,
            (*copy).options,
        );
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let kinds = datum::column_kinds(desc);
        let columns: Vec<Column> = attnums.iter().map(|&a| column(desc, a, kinds[a as usize - 1])).collect();
        let mut load = Load {
            cstate,
            not_null: (0..columns.len()).filter(|&p| datum::attr(desc, columns[p].att).attnotnull).collect(),
            omitted_not_null: (0..natts)
                .any(|i| datum::attr(desc, i).attnotnull && !attnums.contains(&(i as i32 + 1))),
            columns,
            attnums: attnums.to_vec(),
            kinds,
            csv: format.csv,
            relname: pg_sys::get_rel_name((*rel).rd_id),
            line: format.header as u64,
        };
        let cid = pg_sys::GetCurrentCommandId(true);
        let indexed = (*(*rel).rd_rel).relhasindex;
        let logged = logical_log::wanted(rel).then(|| BatchLayout::new(rel));
        let target = indexed.then(|| Target::new(rel, attnums, true));
        let mut processed = 0u64;
        let mut batch_memory = pgrx::PgMemoryContexts::new("pgcolumnar COPY batch");
        let width = load.columns.len();
        crate::storage::shared::worker_threads::ensure_pool();
        rayon::in_place_scope(|scope| {
            let mut next = load.read(RawFields::new(width), Vec::new());
            let mut spare = (RawFields::new(width), Vec::new());
            loop {
                let Read { raw, lines, stop, end } = next;
                let forms: Forms = load.columns.iter().map(|c| c.rust.zip(c.kind.physical())).collect();
                let (sender, receiver) = std::sync::mpsc::channel();
                scope.spawn(move |_| {
                    let parsed = parse_rust(&raw, &forms);
                    let _ = sender.send((raw, parsed));
                });
                // Meanwhile, the next batch (unless this one ends the input or stops it).
                next = match stop.is_none() && !end {
                    true => load.read(std::mem::take(&mut spare.0), std::mem::take(&mut spare.1)),
                    false => Read { raw: RawFields::new(width), lines: Vec::new(), stop: None, end: true },
                };
                let (raw, parsed) =
                    receiver.recv().expect("the parse of a COPY batch ended without its result");
                let rows = raw.rows();
                let columns = batch_memory.switch_to(|_| load.finish(&raw, &lines, parsed));
                if let Some(stop) = stop {
                    let _context = ContextGuard::push(copy_context, cstate as *mut c_void);
                    let line = load.line + 1;
                    raise(stop, rel, &mut load.columns, &load.attnums, load.relname, line, &raw);
                }
                let runs = write_buffer::insert_columns(rel, &columns, rows, cid);
                // Under wal_level = logical, the rows' change records are laid out on a
                // rayon thread (a big batch's) while this one makes their index entries.
                let columns = std::sync::Arc::new(columns);
                let records = logged.as_ref().map(|layout| {
                    let (sender, receiver) = std::sync::mpsc::channel();
                    let (layout, kinds, columns, runs) =
                        (layout.clone(), load.kinds.clone(), columns.clone(), runs.clone());
                    // Off the backend thread, big records are compressed too.
                    let parallel = rows >= PARALLEL_ROWS;
                    let lay_out = move || {
                        let _ =
                            sender.send(batch_log::finish(layout.records(&kinds, &columns, &runs), parallel));
                    };
                    match parallel {
                        true => scope.spawn(move |_| lay_out()),
                        false => lay_out(),
                    }
                    receiver
                });
                if let Some(target) = &target {
                    target.follow_inserts(rel, &columns, &load.kinds, &runs);
                }
                if let Some(records) = records {
                    let records = records
                        .recv()
                        .expect("the layout of a COPY batch's change records ended without them");
                    batch_log::write(&records);
                }
                pg_sys::pgstat_count_heap_insert(rel, rows as i64);
                processed += rows as u64;
                pg_sys::pgstat_progress_update_param(
                    pg_sys::PROGRESS_COPY_TUPLES_PROCESSED as i32,
                    processed as i64,
                );
                batch_memory.reset();
                spare = (raw, lines);
                if end {
                    break;
                }
                pgrx::check_for_interrupts!();
            }
        });
        pg_sys::EndCopyFrom(cstate);
        if let Some(target) = target {
            target.end();
        }
        // As PostgreSQL's COPY ends with table_finish_bulk_insert.
        write_buffer::flush_relation((*rel).rd_id);
        COPIED_ROWS.with(|c| c.set(c.get() + processed));
        processed
    }
}

/// Raises what stopped reading (with COPY's context for the row, pushed by the caller),
/// as PostgreSQL's COPY does at that row.
///
/// # Safety
/// On the backend thread inside a transaction, the COPY's state still at the row that
/// stopped it; `raw`'s last row is that row for `Stop::NotNull`; `line` is the line of
/// the row after `raw`'s last.
#[allow(clippy::too_many_arguments)]
unsafe fn raise(
    stop: Stop,
    rel: pg_sys::Relation,
    columns: &mut [Column],
    attnums: &[i32],
    relname: *const c_char,
    line: u64,
    raw: &RawFields,
) -> ! {
    // SAFETY: per this fn's contract; the slot, executor state and range table entry are
    // made here for ExecConstraints, which raises.
    unsafe {
        match stop {
            Stop::ExtraData => bad_format("extra data after last expected column".to_string()),
            Stop::MissingData(present) => {
                // PostgreSQL's COPY parses the fields present before it finds one missing.
                {
                    let guard = PlaceGuard::push(relname, line);
                    let place = guard.place;
                    for (c, value) in columns.iter_mut().zip(&present) {
                        (*place).column = c.name;
                        (*place).value = value.as_ref().map_or(std::ptr::null(), |v| v.as_ptr());
                        input(c, (*place).value);
                    }
                }
                let missing = CStr::from_ptr(columns[present.len()].name).to_string_lossy().into_owned();
                bad_format(format!("missing data for column \"{missing}\""))
            }
            Stop::NotNull => {
                let natts = (*(*rel).rd_att).natts as usize;
                let row = raw.rows() - 1;
                let target = Target::new(rel, attnums, false);
                let slot = target.slot;
                pg_sys::ExecClearTuple(slot);
                let values = std::slice::from_raw_parts_mut((*slot).tts_values, natts);
                let nulls = std::slice::from_raw_parts_mut((*slot).tts_isnull, natts);
                nulls.iter_mut().for_each(|n| *n = true);
                for (p, c) in columns.iter_mut().enumerate() {
                    let value =
                        raw.field_with_nul(p, row).map_or(std::ptr::null(), |f| f.as_ptr() as *const c_char);
                    values[c.att] = input(c, value);
                    nulls[c.att] = value.is_null();
                }
                pg_sys::ExecStoreVirtualTuple(slot);
                pg_sys::ExecConstraints(target.rri, slot, target.estate);
                unreachable!("ExecConstraints raised no error for a NULL in a NOT NULL column")
            }
        }
    }
}

fn bad_format(message: String) -> ! {
    pgrx::pg_sys::panic::ErrorReport::new(
        pgrx::PgSqlErrorCode::ERRCODE_BAD_COPY_FILE_FORMAT,
        message,
        "pgcolumnar",
    )
    .report(pgrx::PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// What ExecConstraints and ExecInsertIndexTuples need: an executor state whose range
/// table holds the table (the COPY's columns as inserted ones: the error detail shows
/// those), and a result relation for it, its indexes open if asked.
struct Target {
    estate: *mut pg_sys::EState,
    rri: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    indexes: bool,
}

impl Target {
    /// # Safety
    /// `rel` open and locked; on the backend thread inside a transaction.
    unsafe fn new(rel: pg_sys::Relation, attnums: &[i32], indexes: bool) -> Target {
        // SAFETY: per this fn's contract; the nodes are made in the current memory context.
        unsafe {
            let estate = pg_sys::CreateExecutorState();
            let rte =
                pgrx::PgBox::<pg_sys::RangeTblEntry>::alloc_node(pg_sys::NodeTag::T_RangeTblEntry).into_pg();
            (*rte).rtekind = pg_sys::RTEKind::RTE_RELATION;
            (*rte).relid = (*rel).rd_id;
            (*rte).relkind = (*(*rel).rd_rel).relkind;
            (*rte).rellockmode = pg_sys::RowExclusiveLock as i32;
            (*rte).requiredPerms = pg_sys::ACL_INSERT as pg_sys::AclMode;
            for &a in attnums {
                (*rte).insertedCols = pg_sys::bms_add_member(
                    (*rte).insertedCols,
                    a - pg_sys::FirstLowInvalidHeapAttributeNumber,
                );
            }
            pg_sys::ExecInitRangeTable(estate, pg_list::from_ptrs([rte]));
            let rri =
                pgrx::PgBox::<pg_sys::ResultRelInfo>::alloc_node(pg_sys::NodeTag::T_ResultRelInfo).into_pg();
            pg_sys::InitResultRelInfo(rri, rel, 1, std::ptr::null_mut(), 0);
            if indexes {
                pg_sys::ExecOpenIndices(rri, false);
            }
            let slot = pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, &raw const pg_sys::TTSOpsVirtual);
            Target { estate, rri, slot, indexes }
        }
    }

    /// Makes the index entries of the rows `columns` holds (the target has its indexes
    /// open), numbered as `runs` says (`write_buffer::insert_columns`), a row at a time as
    /// PostgreSQL's COPY does.
    ///
    /// # Safety
    /// On the backend thread inside the COPY's transaction; `rel` is the target's table,
    /// `columns` its attributes as `kinds` describes them.
    unsafe fn follow_inserts(
        &self,
        rel: pg_sys::Relation,
        columns: &[Option<ColumnBuilder>],
        kinds: &[ColumnKind],
        runs: &[(usize, u64, usize)],
    ) {
        // SAFETY: per this fn's contract; by-reference values point into `images`, cleared
        // only after the row's index entries are made; the per-tuple memory (expression
        // indexes) is reset after each row, and the slot's arrays have one entry per
        // attribute.
        unsafe {
            let econtext = pg_sys::MakePerTupleExprContext(self.estate);
            let memory = (*econtext).ecxt_per_tuple_memory;
            let natts = columns.len();
            // The row's by-reference values, as a fetch makes them.
            let mut images = ImageArena::default();
            let mut dense = vec![0usize; natts];
            for &(start, first, n) in runs {
                for i in 0..n {
                    let row = start + i;
                    pg_sys::ExecClearTuple(self.slot);
                    let values = std::slice::from_raw_parts_mut((*self.slot).tts_values, natts);
                    let nulls = std::slice::from_raw_parts_mut((*self.slot).tts_isnull, natts);
                    for a in 0..natts {
                        nulls[a] = true;
                        let Some(b) = &columns[a] else { continue };
                        if b.validity(row..row + 1)[0] {
                            (values[a], nulls[a]) =
                                datum::point_datum(kinds[a], point_value(b, kinds[a], dense[a]), &mut images);
                            dense[a] += 1;
                        }
                    }
                    pg_sys::ExecStoreVirtualTuple(self.slot);
                    (*self.slot).tts_tid = crate::storage::relation::tid::row_tid(first + i as u64);
                    (*self.slot).tts_tableOid = (*rel).rd_id;
                    pg_sys::ExecInsertIndexTuples(
                        self.rri,
                        self.slot,
                        self.estate,
                        false,
                        false,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    );
                    pg_sys::MemoryContextReset(memory);
                    images.clear();
                }
            }
        }
    }

    /// # Safety
    /// As `new`.
    unsafe fn end(self) {
        // SAFETY: per this fn's contract; each piece was made by `new`.
        unsafe {
            if self.indexes {
                pg_sys::ExecCloseIndices(self.rri);
            }
            pg_sys::ExecDropSingleTupleTableSlot(self.slot);
            pg_sys::FreeExecutorState(self.estate);
        }
    }
}

/// The dense value `dense` of `b` (of a column of `kind`) as fetches read a value.
fn point_value(b: &ColumnBuilder, kind: ColumnKind, dense: usize) -> PointValue<'_> {
    match kind {
        ColumnKind::Int { .. } => PointValue::Int(b.int_at(dense)),
        ColumnKind::Float4 => PointValue::Float32(b.f32_at(dense)),
        ColumnKind::Float8 => PointValue::Float64(b.f64_at(dense)),
        ColumnKind::Fixed { .. } | ColumnKind::CString | ColumnKind::Varlena => {
            PointValue::Bytes(b.bytes_at(dense))
        }
        ColumnKind::Dropped => PointValue::Null,
    }
}
