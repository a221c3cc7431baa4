//! Per-table options of columnar tables, set with `ALTER TABLE t SET (option = value)`
//! and removed with `ALTER TABLE t RESET (option)`. PostgreSQL validates table
//! reloptions against heap's list, so the ProcessUtility hook takes ours out of the
//! statement and keeps them in `pgcolumnar.table_option`.
//!
//! `sort_by`: a comma-separated list of columns; VACUUM FULL rewrites the table in that
//! order (CLUSTER uses its index instead), and flushes store each row group's rows in
//! that order (see `flush_order`).
//!
//! `quals_push_down` (boolean): whether a ColumnarScan evaluates the WHERE clauses it
//! can itself, on vectors; unset, the `pgcolumnar.quals_push_down` setting decides. Heap
//! tables take it too (default off, the setting does not apply to them): their scans
//! then pass the quals heapam can test to it as scan keys.
//!
//! `compress_for` (`'scan'` or `'size'`): what the encoding of the table's vectors is
//! chosen for, from the next write (VACUUM FULL rewrites what is stored): unset or
//! `scan`, the smallest encoding once decode time is weighed (`EncodingGoal::Scan`);
//! `size`, the smallest. Columnar tables only.
//!
//! All may also be given in `CREATE TABLE ... USING columnar WITH (...)`; the view
//! `pgcolumnar.options` lists every table's options.

use super::am;
use crate::pg_list;
use crate::storage::format::encoding::EncodingGoal;
use crate::storage::shared::cache::{self, BoundedCache};
use crate::storage::shared::internal_sql::InternalSql;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use std::cell::RefCell;
use std::ffi::CStr;
use std::rc::Rc;

pgrx::extension_sql!(
    r#"
-- Options of columnar tables that PostgreSQL's reloptions cannot hold. pg_dump dumps
-- its rows (the table by name, through regclass); the trigger resolves sort_by again
-- for the restored table, whose columns may be numbered differently.
CREATE TABLE pgcolumnar.table_option (
    relid        regclass PRIMARY KEY,
    sort_by      text,     -- the columns' current names (renames and drops update it)
    sort_attnums int2[],   -- what it resolved to: renames keep it, drops skip
    quals_push_down boolean,
    compress_for text CHECK (compress_for IN ('scan', 'size'))
);
SELECT pg_catalog.pg_extension_config_dump('pgcolumnar.table_option', '');
CREATE FUNCTION pgcolumnar.table_option_resolve() RETURNS trigger
    LANGUAGE C AS 'MODULE_PATHNAME', 'table_option_resolve';
CREATE TRIGGER table_option_resolve BEFORE INSERT ON pgcolumnar.table_option
    FOR EACH ROW EXECUTE FUNCTION pgcolumnar.table_option_resolve();
-- One row per table and option that is set, like reloptions.
CREATE VIEW pgcolumnar.options AS
    SELECT relid, 'sort_by'::text AS option, sort_by AS value
      FROM pgcolumnar.table_option WHERE sort_by IS NOT NULL
    UNION ALL
    SELECT relid, 'quals_push_down', CASE WHEN quals_push_down THEN 'on' ELSE 'off' END
      FROM pgcolumnar.table_option WHERE quals_push_down IS NOT NULL
    UNION ALL
    SELECT relid, 'compress_for', compress_for
      FROM pgcolumnar.table_option WHERE compress_for IS NOT NULL;
GRANT SELECT ON pgcolumnar.options TO PUBLIC;
"#,
    name = "table_options",
    requires = ["catalog_tables"]
);

#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_table_option_resolve() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// BEFORE INSERT on `pgcolumnar.table_option`: `sort_attnums` from the `sort_by` names,
/// against the table as it is now. ALTER TABLE ... SET (sort_by) has checked the names
/// already; a restore brings names that were current when the dump was taken. A name
/// that does not resolve is left out, like a column dropped after the option was set.
///
/// # Safety
/// Only PostgreSQL's function manager calls this (as a trigger function, on the backend
/// thread), with a valid `fcinfo`.
#[unsafe(no_mangle)]
#[pg_guard]
pub unsafe extern "C-unwind" fn table_option_resolve(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: the function manager calls this with a valid `fcinfo` inside a transaction; its
    // `context` is checked to be TriggerData before use, and PostgreSQL keeps the trigger's
    // relation, descriptor and tuple valid for the call.
    unsafe {
        let data = (*fcinfo).context as *mut pg_sys::TriggerData;
        if data.is_null() || (*data).type_ != pg_sys::NodeTag::T_TriggerData {
            error!("table_option_resolve() runs only as a trigger");
        }
        let desc = (*(*data).tg_relation).rd_att;
        let tuple = (*data).tg_trigtuple;
        // relid, sort_by, sort_attnums, then the other options; sized by the descriptor
        // (heap_deform_tuple fills one entry per column).
        let natts = (*desc).natts as usize;
        assert!(natts >= 3, "pgcolumnar.table_option has lost columns");
        let mut values = vec![pg_sys::Datum::from(0usize); natts];
        let mut nulls = vec![false; natts];
        pg_sys::heap_deform_tuple(tuple, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        let relid = pg_sys::Oid::from(values[0].value() as u32);
        match String::from_datum(values[1], nulls[1]) {
            Some(spec) => {
                values[2] = resolve_names(relid, &spec).into_datum().expect("an array datum");
                nulls[2] = false;
            }
            None => nulls[2] = true,
        }
        let mut replace = vec![false; natts];
        replace[2] = true;
        let new = pg_sys::heap_modify_tuple(
            tuple,
            desc,
            values.as_mut_ptr(),
            nulls.as_mut_ptr(),
            replace.as_mut_ptr(),
        );
        pg_sys::Datum::from(new)
    }
}

/// The attribute numbers of the live columns of `relid` named in `spec` ("a, b").
unsafe fn resolve_names(relid: pg_sys::Oid, spec: &str) -> Vec<i16> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let rel = pg_sys::relation_open(relid, pg_sys::AccessShareLock as i32);
        let attnums =
            column_names(spec).filter_map(|name| live_column(rel, name).map(|a| a.attnum)).collect();
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        attnums
    }
}

/// The column names of a `sort_by` value ("a, b").
fn column_names(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(',').map(str::trim)
}

/// The column of `rel` named `name`, unless there is none (or it was dropped).
unsafe fn live_column<'a>(rel: pg_sys::Relation, name: &str) -> Option<&'a pg_sys::FormData_pg_attribute> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and the options' metadata read and written.
    unsafe {
        let desc = (*rel).rd_att;
        (0..(*desc).natts as usize)
            .map(|i| super::datum::attr(desc, i))
            .find(|a| !a.attisdropped && CStr::from_ptr(a.attname.data.as_ptr()).to_str() == Ok(name))
    }
}

pub const SORT_BY: &str = "sort_by";
pub const QUALS_PUSH_DOWN: &str = "quals_push_down";
pub const COMPRESS_FOR: &str = "compress_for";
/// The options the ProcessUtility hook takes out of ALTER TABLE and CREATE TABLE.
pub const OPTIONS: [&str; 3] = [SORT_BY, QUALS_PUSH_DOWN, COMPRESS_FOR];

/// A parsed sort key: attribute numbers with their ordering operators and collations.
pub struct SortKey {
    attnums: Vec<pg_sys::AttrNumber>,
    operators: Vec<pg_sys::Oid>,
    collations: Vec<pg_sys::Oid>,
}

impl SortKey {
    /// Resolves `spec` ("col1, col2") against `rel`'s columns; errors name the problem.
    unsafe fn parse(rel: pg_sys::Relation, spec: &str) -> SortKey {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller, and we are on the backend thread inside a transaction, so relations
        // may be opened and the options' metadata read and written.
        unsafe {
            let mut attnums = Vec::new();
            for name in column_names(spec) {
                let Some(att) = live_column(rel, name) else {
                    ereport!(
                        ERROR,
                        PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                        format!("sort_by: column \"{name}\" does not exist"),
                        "sort_by takes a comma-separated list of the table's column names."
                    );
                };
                if ordering_operator(att.atttypid) == pg_sys::InvalidOid {
                    ereport!(
                        ERROR,
                        PgSqlErrorCode::ERRCODE_UNDEFINED_FUNCTION,
                        format!("sort_by: column \"{name}\" has a type without a default ordering")
                    );
                }
                attnums.push(att.attnum);
            }
            SortKey::for_attnums(rel, &attnums).expect("columns were just resolved")
        }
    }

    /// The key over `attnums` as `rel` has them now: columns dropped since the option
    /// was set (or whose type lost its ordering) are left out; None if none is left.
    unsafe fn for_attnums(rel: pg_sys::Relation, attnums: &[pg_sys::AttrNumber]) -> Option<SortKey> {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller, and we are on the backend thread inside a transaction, so relations
        // may be opened and the options' metadata read and written.
        unsafe {
            let desc = (*rel).rd_att;
            let mut key = SortKey { attnums: Vec::new(), operators: Vec::new(), collations: Vec::new() };
            for &attnum in attnums {
                if attnum < 1 || attnum as i32 > (*desc).natts {
                    continue;
                }
                let att = super::datum::attr(desc, attnum as usize - 1);
                if att.attisdropped {
                    continue;
                }
                let lt = ordering_operator(att.atttypid);
                if lt == pg_sys::InvalidOid {
                    continue;
                }
                key.attnums.push(attnum);
                key.operators.push(lt);
                key.collations.push(att.attcollation);
            }
            (!key.attnums.is_empty()).then_some(key)
        }
    }

    /// Starts a tuplesort of slots by this key.
    ///
    /// # Safety
    /// `desc` must be a valid tuple descriptor; call on the backend thread inside a
    /// transaction (it calls PostgreSQL, which may raise an error).
    pub unsafe fn begin_sort(mut self, desc: pg_sys::TupleDesc) -> *mut pg_sys::Tuplesortstate {
        // SAFETY: the caller guarantees this fn's contract: `desc` is a valid tuple
        // descriptor, and we are on the backend thread inside a transaction, so relations may
        // be opened and the options' metadata read and written.
        unsafe {
            let mut nulls_first = vec![false; self.attnums.len()];
            pg_sys::tuplesort_begin_heap(
                desc,
                self.attnums.len() as i32,
                self.attnums.as_mut_ptr(),
                self.operators.as_mut_ptr(),
                self.collations.as_mut_ptr(),
                nulls_first.as_mut_ptr(),
                pg_sys::maintenance_work_mem,
                std::ptr::null_mut(),
                pg_sys::TUPLESORT_NONE as i32,
            )
        }
    }
}

unsafe fn ordering_operator(typid: pg_sys::Oid) -> pg_sys::Oid {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let mut lt = pg_sys::InvalidOid;
        pg_sys::get_sort_group_operators(
            typid,
            false,
            false,
            false,
            &mut lt,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        lt
    }
}

/// Whether `rel` is one of pgcolumnar's own metadata tables (never has options; while
/// DROP EXTENSION removes them, the options table may be half gone).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn is_own_metadata(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so relations may be
    // opened and the options' metadata read and written.
    unsafe {
        let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        nsp != pg_sys::InvalidOid && (*(*rel).rd_rel).relnamespace == nsp
    }
}

unsafe fn option_table() -> Option<pg_sys::Oid> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        let oid = pg_sys::get_relname_relid(c"table_option".as_ptr(), nsp);
        (nsp != pg_sys::InvalidOid && oid != pg_sys::InvalidOid).then_some(oid)
    }
}

// `pgcolumnar.table_option` is written through SPI as internal SQL, with the
// extension's rights (`InternalSql`): users who may write a table need not, and must
// not, be able to write its options row. The SQL names everything, operators included,
// by schema. It is read through its index (`stored_option`).

/// Column `column` of table `relid`'s row in `pgcolumnar.table_option`, if it has a row
/// and the column is not NULL (and the extension is installed, with that column).
///
/// Read through the table's primary key as the catalogs are read (the catalog
/// snapshot), not by a query: the first statement of a new connection would otherwise
/// pay SPI's set-up and the planning of the query (about 0.2 ms) for each table it plans.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise
/// an error).
unsafe fn stored_option<T: pgrx::FromDatum>(relid: pg_sys::Oid, column: &CStr) -> Option<T> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the options table and its index may be opened and scanned; the tuple descriptor, the
    // scan and the tuple are used before the scan ends and the table is closed, and the
    // value is copied out (`from_datum`) while the tuple is pinned.
    unsafe {
        let table = option_table()?;
        let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        let index = pg_sys::get_relname_relid(c"table_option_pkey".as_ptr(), nsp);
        if index == pg_sys::InvalidOid {
            return None;
        }
        let rel = pg_sys::table_open(table, pg_sys::AccessShareLock as i32);
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let attrs = (*desc).attrs.as_slice(natts);
        let Some(at) =
            attrs.iter().position(|a| !a.attisdropped && CStr::from_ptr(a.attname.data.as_ptr()) == column)
        else {
            pg_sys::table_close(rel, pg_sys::AccessShareLock as i32);
            return None;
        };
        let mut key = pg_sys::ScanKeyData::default();
        pg_sys::ScanKeyInit(
            &mut key,
            1,
            pg_sys::BTEqualStrategyNumber as u16,
            pg_sys::Oid::from(pg_sys::F_OIDEQ),
            pg_sys::Datum::from(relid),
        );
        let scan = pg_sys::systable_beginscan(rel, index, true, std::ptr::null_mut(), 1, &mut key);
        let tup = pg_sys::systable_getnext(scan);
        let value = if tup.is_null() {
            None
        } else {
            let mut values = vec![pg_sys::Datum::from(0usize); natts];
            let mut nulls = vec![true; natts];
            pg_sys::heap_deform_tuple(tup, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            T::from_datum(values[at], nulls[at])
        };
        pg_sys::systable_endscan(scan);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as i32);
        value
    }
}

/// The attribute numbers the table's sort_by resolved to, if set.
unsafe fn stored_sort_attnums(relid: pg_sys::Oid) -> Option<Vec<i16>> {
    // SAFETY: this fn's contract is `stored_option`'s.
    unsafe { stored_option(relid, c"sort_attnums") }
}

/// The sort key of table `relid`, if it has one (and any of its columns is left).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn sort_key(relid: pg_sys::Oid) -> Option<SortKey> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let attnums = stored_sort_attnums(relid)?;
        let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
        let key = SortKey::for_attnums(rel, &attnums);
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        key
    }
}

thread_local! {
    /// Sort-key attribute indexes per table, for flushes; emptied by the table's
    /// relcache invalidation (which setting the option sends).
    static SORT_COLUMNS: RefCell<BoundedCache<pg_sys::Oid, Option<Rc<[usize]>>>> =
        RefCell::new(BoundedCache::new(cache::RELATIONS));
}

/// The attribute indexes (attnum - 1) of table `relid`'s sort key, if it has one.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn sort_columns(relid: pg_sys::Oid) -> Option<Rc<[usize]>> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        if let Some(cached) = SORT_COLUMNS.with(|c| c.borrow_mut().get(&relid).cloned()) {
            return cached;
        }
        let columns: Option<Rc<[usize]>> =
            sort_key(relid).map(|k| k.attnums.iter().map(|&a| a as usize - 1).collect());
        SORT_COLUMNS.with(|c| c.borrow_mut().insert(relid, columns.clone()));
        columns
    }
}

/// Rewrites every `sort_by` as the current names of its columns, leaving out dropped
/// ones, after a statement that may have renamed or dropped columns (of any table: a
/// rename recurses to inheritance children). pg_dump dumps the names; the attribute
/// numbers stay what the option means.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn refresh_sort_by_names() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let Some(table) = option_table() else { return };
        let _internal = InternalSql::on(table);
        Spi::run(
            "UPDATE pgcolumnar.table_option o SET sort_by = n.names \
         FROM (SELECT t.relid, coalesce(string_agg(a.attname::text, ', ' ORDER BY u.ord) \
                   FILTER (WHERE a.attname IS NOT NULL), '') AS names \
               FROM pgcolumnar.table_option t \
               CROSS JOIN LATERAL pg_catalog.unnest(t.sort_attnums) WITH ORDINALITY u(attnum, ord) \
               LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) t.relid \
                    AND a.attnum OPERATOR(pg_catalog.=) u.attnum AND NOT a.attisdropped \
               GROUP BY t.relid) n \
         WHERE o.relid OPERATOR(pg_catalog.=) n.relid AND o.sort_by OPERATOR(pg_catalog.<>) n.names",
        )
        .expect("refreshing sort_by names");
    }
}

thread_local! {
    /// `quals_push_down` per table (None: not set), for plans; emptied like SORT_COLUMNS.
    static PUSH_DOWN: RefCell<BoundedCache<pg_sys::Oid, Option<bool>>> =
        RefCell::new(BoundedCache::new(cache::RELATIONS));
    /// `compress_for` per table, for writes; emptied like SORT_COLUMNS.
    static GOALS: RefCell<BoundedCache<pg_sys::Oid, EncodingGoal>> = RefCell::new(BoundedCache::new(cache::RELATIONS));
    /// Set while a lookup runs its query.
    static LOOKING_UP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Clears LOOKING_UP when the lookup ends, by ERROR too.
struct LookingUp;

impl Drop for LookingUp {
    fn drop(&mut self) {
        LOOKING_UP.set(false);
    }
}

/// Table `relid`'s `quals_push_down`, if set. The lookup plans a query on
/// pgcolumnar.table_option, a heap table, whose planning asks for that table's option
/// in turn (heap tables take it too): the tables a lookup's own query reads have none.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn quals_push_down(relid: pg_sys::Oid) -> Option<bool> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        if let Some(cached) = PUSH_DOWN.with(|c| c.borrow_mut().get(&relid).copied()) {
            return cached;
        }
        if LOOKING_UP.replace(true) {
            return None;
        }
        let _looking_up = LookingUp;
        let value = stored_option::<bool>(relid, c"quals_push_down");
        PUSH_DOWN.with(|c| c.borrow_mut().insert(relid, value));
        value
    }
}

/// What table `relid`'s encodings are chosen for (`compress_for`; scans when unset).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn encoding_goal(relid: pg_sys::Oid) -> EncodingGoal {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read.
    unsafe {
        if let Some(cached) = GOALS.with(|c| c.borrow_mut().get(&relid).copied()) {
            return cached;
        }
        let value = stored_option::<String>(relid, c"compress_for");
        let goal = if value.as_deref() == Some("size") { EncodingGoal::Size } else { EncodingGoal::Scan };
        GOALS.with(|c| c.borrow_mut().insert(relid, goal));
        goal
    }
}

/// Makes the rewrite target `new` (VACUUM FULL and CLUSTER write a new relation, whose
/// OID has no options) encode as table `old` does, until `forget_cached(new)`.
///
/// # Safety
/// As `encoding_goal`.
pub unsafe fn encode_as(new: pg_sys::Oid, old: pg_sys::Oid) {
    // SAFETY: this fn's contract is `encoding_goal`'s.
    let goal = unsafe { encoding_goal(old) };
    GOALS.with(|c| c.borrow_mut().insert(new, goal));
}

/// Drops the cached options of `relid` (all of them for InvalidOid).
pub fn forget_cached(relid: pg_sys::Oid) {
    SORT_COLUMNS.with(|c| super::datum::forget_relation(&mut c.borrow_mut(), relid));
    PUSH_DOWN.with(|c| super::datum::forget_relation(&mut c.borrow_mut(), relid));
    GOALS.with(|c| super::datum::forget_relation(&mut c.borrow_mut(), relid));
}

/// Forgets the options of a dropped table.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn forget(relid: pg_sys::Oid) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        // Most tables have no options: the row is looked up through the index first (under
        // a fresh catalog snapshot, which sees a row this very statement inserted, as the
        // DELETE would), so that dropping them runs no query. A query here runs inside the
        // DROP, with every other extension's planner and executor hooks: DROP EXTENSION
        // timescaledb CASCADE ended its session (FATAL) when TimescaleDB's hooks, run for
        // our DELETE of each of its tables, met its own functions already dropped.
        pg_sys::InvalidateCatalogSnapshot();
        if stored_option::<pg_sys::Oid>(relid, c"relid").is_none() {
            return;
        }
        if let Some(table) = option_table() {
            let _internal = InternalSql::on(table);
            Spi::run_with_args(DELETE_OPTIONS, &[relid.into()]).expect("deleting table options");
        }
    }
}

const DELETE_OPTIONS: &str = "DELETE FROM pgcolumnar.table_option WHERE relid OPERATOR(pg_catalog.=) $1";

/// Stores one option of table `relid` (None resets it); the caller has checked that
/// the user owns the table. A row with no option left goes.
unsafe fn store_option(relid: pg_sys::Oid, columns: &[&str], args: &[pgrx::datum::DatumWithOid]) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        let Some(table) = option_table() else {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
                "pgcolumnar is not installed in this database"
            );
        };
        let internal = InternalSql::on(table);
        let params: Vec<String> = (2..=columns.len() + 1).map(|i| format!("${i}")).collect();
        let updates: Vec<String> = columns.iter().map(|c| format!("{c} = excluded.{c}")).collect();
        Spi::run_with_args(
            &format!(
                "INSERT INTO pgcolumnar.table_option (relid, {}) VALUES ($1, {}) \
             ON CONFLICT (relid) DO UPDATE SET {}",
                columns.join(", "),
                params.join(", "),
                updates.join(", ")
            ),
            args,
        )
        .and_then(|_| {
            Spi::run_with_args(
                "DELETE FROM pgcolumnar.table_option WHERE relid OPERATOR(pg_catalog.=) $1 \
             AND sort_by IS NULL AND quals_push_down IS NULL AND compress_for IS NULL",
                &[relid.into()],
            )
        })
        .expect("storing table options");
        drop(internal);
        // Every backend's cached options (flushes and plans use them) go at commit.
        pg_sys::CacheInvalidateRelcacheByRelid(relid);
    }
}

unsafe fn set_sort_by(relid: pg_sys::Oid, value: Option<(&str, &SortKey)>) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        match value {
            Some((spec, key)) => store_option(
                relid,
                &["sort_by", "sort_attnums"],
                &[relid.into(), spec.into(), key.attnums.clone().into()],
            ),
            None => store_option(
                relid,
                &["sort_by", "sort_attnums"],
                &[relid.into(), Option::<String>::None.into(), Option::<Vec<i16>>::None.into()],
            ),
        }
    }
}

unsafe fn set_quals_push_down(relid: pg_sys::Oid, value: Option<bool>) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // relations may be opened and the options' metadata read and written.
    unsafe {
        store_option(relid, &["quals_push_down"], &[relid.into(), value.into()]);
    }
}

/// Applies option `def` (SET, or RESET if `reset`) to table `rel`, after checking that
/// it is columnar.
unsafe fn apply_option(rel: pg_sys::Relation, def: *mut pg_sys::DefElem, reset: bool) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `def` is a valid parse-tree node, and we are on the backend thread inside a
    // transaction, so relations may be opened and the options' metadata read and written.
    unsafe {
        let relid = (*rel).rd_id;
        let name = CStr::from_ptr((*def).defname).to_string_lossy();
        // quals_push_down also applies to heap tables (their scans pass the quals to heapam
        // as scan keys); sort_by only to columnar ones.
        let heap_ok = name == QUALS_PUSH_DOWN && am::is_heap_table(rel);
        if !am::is_columnar(rel) && !heap_ok {
            let partitioned = (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_PARTITIONED_TABLE;
            let (what, hint) = match (name == SORT_BY, partitioned) {
                _ if name == COMPRESS_FOR => ("columnar tables", "Heap tables store rows as they are."),
                (true, _) => ("columnar tables", "For heap tables, use CLUSTER."),
                (false, true) => ("columnar and heap tables", "Set it on each partition."),
                (false, false) => ("columnar and heap tables", "It is a table's option."),
            };
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("{name} applies only to {what}"),
                hint
            );
        }
        if name == SORT_BY {
            if reset {
                set_sort_by(relid, None);
            } else {
                let value = pg_sys::defGetString(def);
                let spec = CStr::from_ptr(value).to_string_lossy().into_owned();
                let key = SortKey::parse(rel, &spec);
                set_sort_by(relid, Some((&spec, &key)));
            }
        } else if name == COMPRESS_FOR {
            let value = (!reset).then(|| compress_for_option(def));
            store_option(relid, &["compress_for"], &[relid.into(), value.into()]);
        } else {
            set_quals_push_down(relid, (!reset).then(|| boolean_option(def)));
        }
    }
}

/// `compress_for`'s value, `scan` or `size` (any case), with core's error for an enum
/// reloption otherwise.
unsafe fn compress_for_option(def: *mut pg_sys::DefElem) -> String {
    // SAFETY: the caller guarantees `def` is a valid parse-tree node, on the backend thread
    // inside a transaction.
    unsafe {
        let text = if (*def).arg.is_null() {
            String::new()
        } else {
            CStr::from_ptr(pg_sys::defGetString(def)).to_string_lossy().to_lowercase()
        };
        if text != "scan" && text != "size" {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("invalid value for enum option \"compress_for\": {text}"),
                "Valid values are \"scan\" and \"size\"."
            );
        }
        text
    }
}

/// A boolean option's value (no value means on), with core's error for reloptions.
unsafe fn boolean_option(def: *mut pg_sys::DefElem) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `def` is a valid parse-tree node, and
    // we are on the backend thread inside a transaction, so relations may be opened and the
    // options' metadata read and written.
    unsafe {
        if (*def).arg.is_null() {
            return true;
        }
        let text = pg_sys::defGetString(def);
        let mut value = false;
        if !pg_sys::parse_bool(text, &mut value) {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!(
                    "invalid value for boolean option \"{}\": {}",
                    CStr::from_ptr((*def).defname).to_string_lossy(),
                    CStr::from_ptr(text).to_string_lossy()
                )
            );
        }
        value
    }
}

/// Whether `def` names one of our options.
///
/// # Safety
/// `def` must be a valid parse-tree node.
pub unsafe fn is_our_option(def: *mut pg_sys::DefElem) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `def` is a valid parse-tree node.
    unsafe {
        (*def).defnamespace.is_null()
            && OPTIONS.iter().any(|o| CStr::from_ptr((*def).defname).to_bytes() == o.as_bytes())
    }
}

/// Takes our options out of a CREATE TABLE's WITH (...); `apply_to_created` applies
/// them once the table exists.
///
/// # Safety
/// `stmt` must be a valid parse-tree node; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn take_from_create(stmt: *mut pg_sys::CreateStmt) -> Vec<*mut pg_sys::DefElem> {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid parse-tree node,
    // and we are on the backend thread inside a transaction, so relations may be opened and
    // the options' metadata read and written.
    unsafe {
        let mut ours = Vec::new();
        let mut kept: *mut pg_sys::List = std::ptr::null_mut();
        for def in pg_list::ptrs::<pg_sys::DefElem>((*stmt).options) {
            if is_our_option(def) {
                ours.push(def);
            } else {
                kept = pg_sys::lappend(kept, def as *mut std::ffi::c_void);
            }
        }
        (*stmt).options = kept;
        ours
    }
}

/// Applies the options `take_from_create` took to the table the statement created.
///
/// # Safety
/// `stmt`, `defs` must be valid parse-tree nodes; call on the backend thread inside a
/// transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn apply_to_created(stmt: *mut pg_sys::CreateStmt, defs: &[*mut pg_sys::DefElem]) {
    // SAFETY: the caller guarantees this fn's contract: `stmt`, `defs` are valid parse-tree
    // nodes, and we are on the backend thread inside a transaction, so relations may be
    // opened and the options' metadata read and written.
    unsafe {
        let relid = pg_sys::RangeVarGetRelidExtended(
            (*stmt).relation,
            pg_sys::NoLock as i32,
            0,
            None,
            std::ptr::null_mut(),
        );
        // Make the new table visible to the SPI that stores the options.
        pg_sys::CommandCounterIncrement();
        let rel = pg_sys::relation_open(relid, pg_sys::AccessExclusiveLock as i32);
        for &def in defs {
            apply_option(rel, def, false);
        }
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
    }
}

/// Takes our options out of an ALTER TABLE ... SET/RESET (...) and applies them.
/// Returns whether anything is left for PostgreSQL to do.
///
/// # Safety
/// `stmt` must be a valid parse-tree node; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn take_from_alter_table(stmt: *mut pg_sys::AlterTableStmt) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid parse-tree node,
    // and we are on the backend thread inside a transaction, so relations may be opened and
    // the options' metadata read and written.
    unsafe {
        if (*stmt).objtype != pg_sys::ObjectType::OBJECT_TABLE {
            return true;
        }
        let mut kept_cmds: *mut pg_sys::List = std::ptr::null_mut();
        let mut left = false;
        for cmd in pg_list::ptrs::<pg_sys::AlterTableCmd>((*stmt).cmds) {
            let is_set = (*cmd).subtype == pg_sys::AlterTableType::AT_SetRelOptions;
            let is_reset = (*cmd).subtype == pg_sys::AlterTableType::AT_ResetRelOptions;
            if !(is_set || is_reset) {
                kept_cmds = pg_sys::lappend(kept_cmds, cmd as *mut std::ffi::c_void);
                left = true;
                continue;
            }
            let defs = (*cmd).def as *mut pg_sys::List;
            let mut kept_defs: *mut pg_sys::List = std::ptr::null_mut();
            for def in pg_list::ptrs::<pg_sys::DefElem>(defs) {
                if !is_our_option(def) {
                    kept_defs = pg_sys::lappend(kept_defs, def as *mut std::ffi::c_void);
                    continue;
                }
                // Only the owner may set table options; checked before the lock is taken
                // (as ALTER TABLE does), so that others cannot queue for it.
                let relid = pg_sys::RangeVarGetRelidExtended(
                    (*stmt).relation,
                    pg_sys::ShareUpdateExclusiveLock as i32,
                    0,
                    Some(owns_relation),
                    std::ptr::null_mut(),
                );
                let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
                apply_option(rel, def, is_reset);
                pg_sys::relation_close(rel, pg_sys::NoLock as i32);
            }
            if !kept_defs.is_null() {
                (*cmd).def = kept_defs as *mut pg_sys::Node;
                kept_cmds = pg_sys::lappend(kept_cmds, cmd as *mut std::ffi::c_void);
                left = true;
            }
        }
        (*stmt).cmds = kept_cmds;
        left
    }
}

/// PostgreSQL's ownership check for a relation being looked up, as a callback (pg_sys
/// exposes the C function only as a Rust wrapper); pg_guard: it raises errors.
#[pg_guard]
unsafe extern "C-unwind" fn owns_relation(
    relation: *const pg_sys::RangeVar,
    rel_id: pg_sys::Oid,
    old_rel_id: pg_sys::Oid,
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: RangeVarGetRelidExtended calls this callback with its own arguments (the
    // RangeVar being looked up, the OIDs, our NULL `arg`), which are exactly what
    // RangeVarCallbackOwnsRelation expects.
    unsafe {
        pg_sys::RangeVarCallbackOwnsRelation(relation, rel_id, old_rel_id, arg);
    }
}
