//! Table options of Citus-distributed columnar tables. Citus creates each shard from the
//! table's DDL, which does not carry pgcolumnar's options (they live in
//! `pgcolumnar.table_option`, not in the table's reloptions), and forwards only the
//! statements it sees, while the utility hook takes ours out before Citus runs. So:
//!
//! - an ALTER TABLE SET/RESET of our options on a distributed or reference table, on the
//!   coordinator, is run again on every shard and on the table's copy (shell) on every
//!   worker, after it is applied locally;
//! - a shard created later (a new colocated shard, a shard move or copy) takes its
//!   table's options from that table on its node, which Citus's metadata names.
//!
//! Nothing here runs unless Citus is installed in the database.

use crate::pg_list;
use crate::storage::relation::options;
use pgrx::pg_sys;
use pgrx::prelude::*;

/// The SET / RESET clauses of our options in an ALTER TABLE, as SQL (`SET (sort_by =
/// 'ts'), RESET (quals_push_down)`), or None when it sets none of them. Read before the
/// options are taken out of the statement.
///
/// # Safety
/// `stmt` must be a valid AlterTableStmt; on the backend thread inside a transaction.
pub unsafe fn our_option_clauses(stmt: *mut pg_sys::AlterTableStmt) -> Option<String> {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid AlterTableStmt, so
    // its command and option lists and their names are valid; defGetString and
    // quote_literal_cstr only read them and allocate in the current memory context.
    unsafe {
        let mut clauses = Vec::new();
        for cmd in pg_list::ptrs::<pg_sys::AlterTableCmd>((*stmt).cmds) {
            let reset = (*cmd).subtype == pg_sys::AlterTableType::AT_ResetRelOptions;
            if !reset && (*cmd).subtype != pg_sys::AlterTableType::AT_SetRelOptions {
                continue;
            }
            let mut items = Vec::new();
            for def in pg_list::ptrs::<pg_sys::DefElem>((*cmd).def as *mut pg_sys::List) {
                if !options::is_our_option(def) {
                    continue;
                }
                let name = std::ffi::CStr::from_ptr((*def).defname).to_string_lossy().into_owned();
                if reset {
                    items.push(name);
                } else {
                    let value = if (*def).arg.is_null() {
                        c"true".as_ptr() as *mut _
                    } else {
                        pg_sys::defGetString(def)
                    };
                    let quoted =
                        std::ffi::CStr::from_ptr(pg_sys::quote_literal_cstr(value)).to_string_lossy();
                    items.push(format!("{name} = {quoted}"));
                }
            }
            if !items.is_empty() {
                clauses.push(format!("{} ({})", if reset { "RESET" } else { "SET" }, items.join(", ")));
            }
        }
        (!clauses.is_empty()).then(|| clauses.join(", "))
    }
}

fn citus_installed() -> bool {
    Spi::get_one::<bool>("SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL")
        .ok()
        .flatten()
        .unwrap_or(false)
}

/// After our options were applied to table `range` here: when it is a Citus table and
/// this node is the coordinator, applies `clauses` to every shard and to the table on
/// every worker. A failure on any node fails the statement.
///
/// # Safety
/// `range` must be a valid RangeVar; on the backend thread inside a transaction.
pub unsafe fn propagate_options(range: *mut pg_sys::RangeVar, clauses: &str) {
    if !citus_installed() {
        return;
    }
    // SAFETY: the caller guarantees this fn's contract: `range` is a valid RangeVar; the
    // lookup runs on the backend thread inside a transaction.
    let Some(relid) = (unsafe { super::relid_if_exists(range) }) else { return };
    let distributed = Spi::get_one_with_args::<bool>(
        "SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid OPERATOR(pg_catalog.=) $1) \
           AND pg_catalog.citus_is_coordinator()",
        &[relid.into()],
    );
    if !matches!(distributed, Ok(Some(true))) {
        return;
    }
    let on_shards = format!("ALTER TABLE %s {clauses}");
    let failed = Spi::get_two_with_args::<i64, String>(
        "SELECT count(*) FILTER (WHERE NOT success), string_agg(result, '; ') FILTER (WHERE NOT success) \
           FROM pg_catalog.run_command_on_shards($1, $2)",
        &[relid.into(), on_shards.as_str().into()],
    );
    fail_if_any("shards", failed);
    // The table's copy on each worker exists where Citus synced its metadata (the
    // default); later shards on that worker take their options from it.
    let synced = Spi::get_one::<bool>(
        "SELECT count(*) > 0 AND bool_and(hasmetadata) FROM pg_catalog.pg_dist_node \
          WHERE isactive AND noderole OPERATOR(pg_catalog.=) 'primary' AND groupid > 0",
    );
    if matches!(synced, Ok(Some(true))) {
        let on_workers = format!("ALTER TABLE {} {clauses}", qualified_name(relid));
        let failed = Spi::get_two_with_args::<i64, String>(
            "SELECT count(*) FILTER (WHERE NOT success), string_agg(result, '; ') FILTER (WHERE NOT success) \
               FROM pg_catalog.run_command_on_workers($1)",
            &[on_workers.as_str().into()],
        );
        fail_if_any("workers", failed);
    }
}

fn qualified_name(relid: pg_sys::Oid) -> String {
    Spi::get_one_with_args::<String>(
        "SELECT pg_catalog.format('%I.%I', n.nspname, c.relname) FROM pg_catalog.pg_class c \
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid OPERATOR(pg_catalog.=) $1",
        &[relid.into()],
    )
    .ok()
    .flatten()
    .unwrap_or_default()
}

fn fail_if_any(where_: &str, result: Result<(Option<i64>, Option<String>), pgrx::spi::Error>) {
    match result {
        Ok((Some(0) | None, _)) => {}
        Ok((Some(n), detail)) => {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_CONNECTION_EXCEPTION,
                format!("could not set pgcolumnar table options on {n} {where_}"),
                detail.unwrap_or_default()
            );
        }
        Err(e) => {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("could not set pgcolumnar table options on the {where_}: {e}")
            );
        }
    }
}

/// After CREATE TABLE of `stmt`'s table: when it is a Citus shard (named `<table>_<shard
/// id>` by Citus, with that shard id in the metadata) whose table has pgcolumnar options
/// on this node, the shard gets them too.
///
/// # Safety
/// `stmt` must be a valid CreateStmt that has just run; on the backend thread inside a
/// transaction.
pub unsafe fn inherit_shard_options(stmt: *mut pg_sys::CreateStmt) {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid CreateStmt, so its
    // RangeVar's name is a NUL-terminated string.
    let name =
        unsafe { std::ffi::CStr::from_ptr((*(*stmt).relation).relname) }.to_string_lossy().into_owned();
    let Some(shard_id) = shard_id_of(&name) else { return };
    if !citus_installed() {
        return;
    }
    // SAFETY: as above; the lookup runs on the backend thread inside a transaction, after
    // the CREATE made the table.
    let Some(relid) = (unsafe { super::relid_if_exists((*stmt).relation) }) else { return };
    let table_name = name.rsplit_once('_').map_or("", |(table, _)| table);
    // The shard's table by the metadata on this node; a shard being split is not in it
    // yet, so then by name: the Citus table of the name before the suffix, same schema.
    let Ok(table_options) = Spi::connect(|client| {
        client
            .select(
                "SELECT o.option, o.value FROM pgcolumnar.options o \
                  WHERE o.relid OPERATOR(pg_catalog.=) coalesce( \
                    (SELECT s.logicalrelid FROM pg_catalog.pg_dist_shard s \
                      WHERE s.shardid OPERATOR(pg_catalog.=) $1 \
                        AND pg_catalog.shard_name(s.logicalrelid, s.shardid) LIKE '%' || $2), \
                    (SELECT p.logicalrelid FROM pg_catalog.pg_dist_partition p \
                       JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) p.logicalrelid \
                      WHERE c.relname OPERATOR(pg_catalog.=) $3 \
                        AND c.relnamespace OPERATOR(pg_catalog.=) \
                            (SELECT relnamespace FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) $4)))",
                None,
                &[shard_id.into(), name.as_str().into(), table_name.into(), relid.into()],
            )?
            .map(|row| Ok((row.get::<String>(1)?.unwrap_or_default(), row.get::<String>(2)?.unwrap_or_default())))
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    }) else {
        return;
    };
    if table_options.is_empty() {
        return;
    }
    // SAFETY: on the backend thread inside a transaction (this fn's contract); the DefElems
    // are made in the current memory context from NUL-terminated copies.
    unsafe {
        let defs: Vec<*mut pg_sys::DefElem> = table_options
            .iter()
            .map(|(option, value)| {
                let name = pg_sys::pstrdup(std::ffi::CString::new(option.as_str()).unwrap().as_ptr());
                let value = pg_sys::pstrdup(std::ffi::CString::new(value.as_str()).unwrap().as_ptr());
                pg_sys::makeDefElem(name, pg_sys::makeString(value) as *mut pg_sys::Node, -1)
            })
            .collect();
        options::apply_to_created(stmt, &defs);
    }
}

/// The shard id a Citus shard's name ends with (`cpu_102008` -> 102008).
fn shard_id_of(name: &str) -> Option<i64> {
    let (_, digits) = name.rsplit_once('_')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::shard_id_of;

    #[test]
    fn shard_ids_come_from_the_name_suffix() {
        assert_eq!(shard_id_of("cpu_102008"), Some(102008));
        assert_eq!(shard_id_of("host_info_102012"), Some(102012));
        assert_eq!(shard_id_of("cpu"), None);
        assert_eq!(shard_id_of("cpu_"), None);
        assert_eq!(shard_id_of("cpu_x1"), None);
    }
}
