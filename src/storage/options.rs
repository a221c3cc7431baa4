//! Per-table options of columnar tables, set with `ALTER TABLE t SET (option = value)`
//! and removed with `ALTER TABLE t RESET (option)`. PostgreSQL validates table
//! reloptions against heap's list, so the ProcessUtility hook takes ours out of the
//! statement and keeps them in `pgcolumnar.table_option`.
//!
//! `sort_by`: a comma-separated list of columns; VACUUM FULL rewrites the table in that
//! order (CLUSTER uses its index instead), and flushes store each row group's rows in
//! that order (see `flush_order`).

use super::am;
use super::cache::{self, BoundedCache};
use super::internal_sql::InternalSql;
use crate::pg_list;
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
    sort_by      text     NOT NULL,  -- the columns' current names (renames and drops update it)
    sort_attnums int2[]   NOT NULL   -- what it resolved to: renames keep it, drops skip
);
SELECT pg_catalog.pg_extension_config_dump('pgcolumnar.table_option', '');
CREATE FUNCTION pgcolumnar.table_option_resolve() RETURNS trigger
    LANGUAGE C AS 'MODULE_PATHNAME', 'table_option_resolve';
CREATE TRIGGER table_option_resolve BEFORE INSERT ON pgcolumnar.table_option
    FOR EACH ROW EXECUTE FUNCTION pgcolumnar.table_option_resolve();
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
#[unsafe(no_mangle)]
#[pg_guard]
pub unsafe extern "C-unwind" fn table_option_resolve(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    let data = (*fcinfo).context as *mut pg_sys::TriggerData;
    if data.is_null() || (*data).type_ != pg_sys::NodeTag::T_TriggerData {
        error!("table_option_resolve() runs only as a trigger");
    }
    let desc = (*(*data).tg_relation).rd_att;
    let tuple = (*data).tg_trigtuple;
    // relid, sort_by, sort_attnums
    let mut values = [pg_sys::Datum::from(0usize); 3];
    let mut nulls = [false; 3];
    pg_sys::heap_deform_tuple(tuple, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
    let relid = pg_sys::Oid::from(values[0].value() as u32);
    let spec = String::from_datum(values[1], nulls[1]).unwrap_or_default();
    values[2] = resolve_names(relid, &spec).into_datum().expect("an array datum");
    nulls[2] = false;
    let mut replace = [false, false, true];
    let new =
        pg_sys::heap_modify_tuple(tuple, desc, values.as_mut_ptr(), nulls.as_mut_ptr(), replace.as_mut_ptr());
    pg_sys::Datum::from(new)
}

/// The attribute numbers of the live columns of `relid` named in `spec` ("a, b").
unsafe fn resolve_names(relid: pg_sys::Oid, spec: &str) -> Vec<i16> {
    let rel = pg_sys::relation_open(relid, pg_sys::AccessShareLock as i32);
    let attnums = column_names(spec).filter_map(|name| live_column(rel, name).map(|a| a.attnum)).collect();
    pg_sys::relation_close(rel, pg_sys::NoLock as i32);
    attnums
}

/// The column names of a `sort_by` value ("a, b").
fn column_names(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(',').map(str::trim)
}

/// The column of `rel` named `name`, unless there is none (or it was dropped).
unsafe fn live_column<'a>(rel: pg_sys::Relation, name: &str) -> Option<&'a pg_sys::FormData_pg_attribute> {
    let desc = (*rel).rd_att;
    (0..(*desc).natts as usize)
        .map(|i| super::datum::attr(desc, i))
        .find(|a| !a.attisdropped && CStr::from_ptr(a.attname.data.as_ptr()).to_str() == Ok(name))
}

pub const SORT_BY: &str = "sort_by";

/// A parsed sort key: attribute numbers with their ordering operators and collations.
pub struct SortKey {
    attnums: Vec<pg_sys::AttrNumber>,
    operators: Vec<pg_sys::Oid>,
    collations: Vec<pg_sys::Oid>,
}

impl SortKey {
    /// Resolves `spec` ("col1, col2") against `rel`'s columns; errors name the problem.
    unsafe fn parse(rel: pg_sys::Relation, spec: &str) -> SortKey {
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

    /// The key over `attnums` as `rel` has them now: columns dropped since the option
    /// was set (or whose type lost its ordering) are left out; None if none is left.
    unsafe fn for_attnums(rel: pg_sys::Relation, attnums: &[pg_sys::AttrNumber]) -> Option<SortKey> {
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

    /// Starts a tuplesort of slots by this key.
    pub unsafe fn begin_sort(mut self, desc: pg_sys::TupleDesc) -> *mut pg_sys::Tuplesortstate {
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

unsafe fn ordering_operator(typid: pg_sys::Oid) -> pg_sys::Oid {
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

unsafe fn option_table() -> Option<pg_sys::Oid> {
    let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
    let oid = pg_sys::get_relname_relid(c"table_option".as_ptr(), nsp);
    (nsp != pg_sys::InvalidOid && oid != pg_sys::InvalidOid).then_some(oid)
}

// `pgcolumnar.table_option` is read and written through SPI as internal SQL, with the
// extension's rights (`InternalSql`): users who may write a table need not, and must
// not, be able to write its options row. The SQL names everything, operators included,
// by schema.

/// The attribute numbers the table's sort_by resolved to, if set.
unsafe fn stored_sort_attnums(relid: pg_sys::Oid) -> Option<Vec<i16>> {
    let _internal = InternalSql::on(option_table()?);
    Spi::get_one_with_args::<Vec<i16>>(
        "SELECT sort_attnums FROM pgcolumnar.table_option WHERE relid OPERATOR(pg_catalog.=) $1",
        &[relid.into()],
    )
    .ok()
    .flatten()
}

/// The sort key of table `relid`, if it has one (and any of its columns is left).
pub unsafe fn sort_key(relid: pg_sys::Oid) -> Option<SortKey> {
    let attnums = stored_sort_attnums(relid)?;
    let rel = pg_sys::relation_open(relid, pg_sys::NoLock as i32);
    let key = SortKey::for_attnums(rel, &attnums);
    pg_sys::relation_close(rel, pg_sys::NoLock as i32);
    key
}

thread_local! {
    /// Sort-key attribute indexes per table, for flushes; emptied by the table's
    /// relcache invalidation (which setting the option sends).
    static SORT_COLUMNS: RefCell<BoundedCache<pg_sys::Oid, Option<Rc<[usize]>>>> =
        RefCell::new(BoundedCache::new(cache::RELATIONS));
}

/// The attribute indexes (attnum - 1) of table `relid`'s sort key, if it has one.
pub unsafe fn sort_columns(relid: pg_sys::Oid) -> Option<Rc<[usize]>> {
    if let Some(cached) = SORT_COLUMNS.with(|c| c.borrow_mut().get(&relid).cloned()) {
        return cached;
    }
    let columns: Option<Rc<[usize]>> =
        sort_key(relid).map(|k| k.attnums.iter().map(|&a| a as usize - 1).collect());
    SORT_COLUMNS.with(|c| c.borrow_mut().insert(relid, columns.clone()));
    columns
}

/// Rewrites every `sort_by` as the current names of its columns, leaving out dropped
/// ones, after a statement that may have renamed or dropped columns (of any table: a
/// rename recurses to inheritance children). pg_dump dumps the names; the attribute
/// numbers stay what the option means.
pub unsafe fn refresh_sort_by_names() {
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

/// Drops the cached sort key of `relid` (all of them for InvalidOid).
pub fn forget_cached(relid: pg_sys::Oid) {
    SORT_COLUMNS.with(|c| super::datum::forget_relation(&mut c.borrow_mut(), relid));
}

/// Forgets the options of a dropped table.
pub unsafe fn forget(relid: pg_sys::Oid) {
    if let Some(table) = option_table() {
        let _internal = InternalSql::on(table);
        Spi::run_with_args(DELETE_OPTIONS, &[relid.into()]).expect("deleting table options");
    }
}

const DELETE_OPTIONS: &str = "DELETE FROM pgcolumnar.table_option WHERE relid OPERATOR(pg_catalog.=) $1";

/// The caller has checked that the user owns the table.
unsafe fn set_sort_by(relid: pg_sys::Oid, value: Option<(&str, &SortKey)>) {
    let Some(table) = option_table() else {
        ereport!(
            ERROR,
            PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
            "pgcolumnar is not installed in this database"
        );
    };
    let internal = InternalSql::on(table);
    match value {
        Some((spec, key)) => Spi::run_with_args(
            "INSERT INTO pgcolumnar.table_option VALUES ($1, $2, $3) \
             ON CONFLICT (relid) DO UPDATE SET sort_by = excluded.sort_by, sort_attnums = excluded.sort_attnums",
            &[relid.into(), spec.into(), key.attnums.clone().into()],
        ),
        None => Spi::run_with_args(DELETE_OPTIONS, &[relid.into()]),
    }
    .expect("storing table options");
    drop(internal);
    // Every backend's cached sort key (flushes use it) goes at commit.
    pg_sys::CacheInvalidateRelcacheByRelid(relid);
}

/// Takes our options out of an ALTER TABLE ... SET/RESET (...) and applies them.
/// Returns whether anything is left for PostgreSQL to do.
pub unsafe fn take_from_alter_table(stmt: *mut pg_sys::AlterTableStmt) -> bool {
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
            let name = CStr::from_ptr((*def).defname).to_string_lossy();
            if name != SORT_BY || !(*def).defnamespace.is_null() {
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
            let columnar = am::is_columnar(rel);
            if !columnar {
                pg_sys::relation_close(rel, pg_sys::NoLock as i32);
                ereport!(
                    ERROR,
                    PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                    "sort_by applies only to columnar tables",
                    "For heap tables, use CLUSTER."
                );
            }
            if is_set {
                let value = pg_sys::defGetString(def);
                let spec = CStr::from_ptr(value).to_string_lossy().into_owned();
                let key = SortKey::parse(rel, &spec);
                set_sort_by(relid, Some((&spec, &key)));
            } else {
                set_sort_by(relid, None);
            }
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

/// PostgreSQL's ownership check for a relation being looked up, as a callback (pg_sys
/// exposes the C function only as a Rust wrapper); pg_guard: it raises errors.
#[pg_guard]
unsafe extern "C-unwind" fn owns_relation(
    relation: *const pg_sys::RangeVar,
    rel_id: pg_sys::Oid,
    old_rel_id: pg_sys::Oid,
    arg: *mut std::ffi::c_void,
) {
    pg_sys::RangeVarCallbackOwnsRelation(relation, rel_id, old_rel_id, arg);
}
