//! Which versions of the extension's SQL objects (`extversion`: its metadata tables,
//! views and functions) this library reads and writes, and the check that the installed
//! one is among them. A new library and the SQL objects of an older version meet after a
//! package upgrade, until `ALTER EXTENSION pgcolumnar UPDATE` runs the update scripts
//! (sql/pgcolumnar--A--B.sql); an older library meets newer SQL objects after a
//! downgrade. Either way the library must not write metadata tables whose shape it does
//! not know: it refuses, saying what to run.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{pg_sys, GucContext, GucFlags, GucRegistry, GucSetting, PgLogLevel, PgSqlErrorCode};
use std::cell::Cell;

/// The library's own version: that of the SQL objects `CREATE EXTENSION` installs.
pub const LIBRARY_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Versions of the SQL objects whose metadata tables this library reads and writes as
/// they are. From 0.2.0 (the first release) to this one, updates only added objects the
/// library does without when they are missing (0.3.0: `table_stats` and `table_summary`;
/// 0.4.0: column `row_group.chunks`, without which every row group's chunk metadata goes
/// into `chunk` rows as before). An update that changes a metadata table in a way the
/// library cannot work around drops the versions before it from this list.
pub const SCHEMA_VERSIONS: &[&str] = &["0.2.0", "0.3.0", LIBRARY_VERSION];

/// How the installed version relates to this library.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    Supported,
    /// Older than the library and not one it reads: `ALTER EXTENSION ... UPDATE` first.
    Older,
    /// Newer than the library: install a newer library.
    Newer,
    /// Not a version number pgcolumnar ever had.
    Unknown,
}

/// `installed` against the versions this library reads (`supported`, whose last is the
/// library's own).
pub fn verdict(installed: &str, supported: &[&str]) -> Verdict {
    if supported.contains(&installed) {
        return Verdict::Supported;
    }
    let library = supported.last().copied().unwrap_or(LIBRARY_VERSION);
    match (parse(installed), parse(library)) {
        (Some(i), Some(l)) if i < l => Verdict::Older,
        (Some(i), Some(l)) if i > l => Verdict::Newer,
        _ => Verdict::Unknown,
    }
}

/// "major.minor.patch" as numbers, so that 0.10.0 sorts after 0.9.0.
fn parse(version: &str) -> Option<(u32, u32, u32)> {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    let v = (parts.next()??, parts.next()??, parts.next()??);
    parts.next().is_none().then_some(v)
}

static ENABLE_VERSION_CHECKS: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_version_checks",
        c"Refuses to read or write columnar tables when the installed extension version is not one the loaded library supports.",
        c"Turn off only to dump the tables of an install no update script reaches (see docs/install.md).",
        &ENABLE_VERSION_CHECKS,
        GucContext::Suset,
        GucFlags::default(),
    );
}

thread_local! {
    /// The installed version was found supported: set until the metadata OIDs are
    /// forgotten (DROP EXTENSION, or an update script that changes a metadata table).
    static CHECKED: Cell<bool> = const { Cell::new(false) };
}

/// Forgets that the installed version was checked (with the cached metadata OIDs).
pub(super) fn forget_check() {
    CHECKED.with(|c| c.set(false));
}

/// Raises an error unless the installed extension's version is one this library reads.
/// Checked once per backend while it stays supported; no extension installed is left to
/// the caller (its metadata relations are missing then).
///
/// # Safety
/// Call on the backend thread inside a transaction (it reads pg_extension, and may raise
/// an error).
pub(super) unsafe fn check_installed_version() {
    if CHECKED.with(Cell::get) || !ENABLE_VERSION_CHECKS.get() {
        return;
    }
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction.
    let Some(installed) = (unsafe { installed_version() }) else {
        return;
    };
    let (message, hint) = match verdict(&installed, SCHEMA_VERSIONS) {
        Verdict::Supported => {
            CHECKED.with(|c| c.set(true));
            return;
        }
        Verdict::Older => (
            format!(
                "the installed pgcolumnar extension (version {installed}) is older than the loaded library (version {LIBRARY_VERSION}), which reads the SQL objects of versions {}",
                SCHEMA_VERSIONS.join(", ")
            ),
            "Run ALTER EXTENSION pgcolumnar UPDATE.".to_string(),
        ),
        Verdict::Newer => (
            format!(
                "the installed pgcolumnar extension (version {installed}) is newer than the loaded library (version {LIBRARY_VERSION})"
            ),
            format!("Install the pgcolumnar library of version {installed} or later, and restart the server."),
        ),
        Verdict::Unknown => (
            format!(
                "the installed pgcolumnar extension has version \"{installed}\", which the loaded library (version {LIBRARY_VERSION}) does not know"
            ),
            "Run ALTER EXTENSION pgcolumnar UPDATE, or install the library that matches the extension.".to_string(),
        ),
    };
    ErrorReport::new(PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED, message, "pgcolumnar")
        .set_hint(hint)
        .report(PgLogLevel::ERROR);
}

/// `extversion` of pgcolumnar in pg_extension, None when it is not installed.
///
/// # Safety
/// As `check_installed_version`.
unsafe fn installed_version() -> Option<String> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction;
    // the relation, scan and tuple come from the calls that return them and are used
    // before being ended or closed.
    unsafe {
        let ext = pg_sys::get_extension_oid(c"pgcolumnar".as_ptr(), true);
        if ext == pg_sys::InvalidOid {
            return None;
        }
        let rel = pg_sys::table_open(pg_sys::ExtensionRelationId, pg_sys::AccessShareLock as i32);
        let mut key = pg_sys::ScanKeyData::default();
        pg_sys::ScanKeyInit(
            &mut key,
            pg_sys::Anum_pg_extension_oid as i16,
            pg_sys::BTEqualStrategyNumber as u16,
            pg_sys::Oid::from(pg_sys::F_OIDEQ),
            pg_sys::Datum::from(ext),
        );
        let index = pg_sys::Oid::from(pg_sys::ExtensionOidIndexId);
        let scan = pg_sys::systable_beginscan(rel, index, true, std::ptr::null_mut(), 1, &mut key);
        let tup = pg_sys::systable_getnext(scan);
        let version = if tup.is_null() {
            None
        } else {
            let desc = (*rel).rd_att;
            let natts = (*desc).natts as usize;
            let mut values = vec![pg_sys::Datum::from(0usize); natts];
            let mut nulls = vec![true; natts];
            pg_sys::heap_deform_tuple(tup, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
            let at = pg_sys::Anum_pg_extension_extversion as usize - 1;
            String::from_datum(values[at], nulls[at])
        };
        pg_sys::systable_endscan(scan);
        pg_sys::table_close(rel, pg_sys::AccessShareLock as i32);
        version
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const READS: &[&str] = &["0.2.0", "0.3.0", "0.4.0"];

    #[test]
    fn listed_versions_are_supported() {
        assert_eq!(verdict("0.2.0", READS), Verdict::Supported);
        assert_eq!(verdict("0.3.0", READS), Verdict::Supported);
    }

    #[test]
    fn unlisted_versions_are_older_newer_or_unknown() {
        assert_eq!(verdict("0.1.0", READS), Verdict::Older);
        assert_eq!(verdict("0.2.5", READS), Verdict::Older);
        assert_eq!(verdict("0.5.0", READS), Verdict::Newer);
        // Numbers, not text: 0.10.0 is newer than 0.3.0.
        assert_eq!(verdict("0.10.0", READS), Verdict::Newer);
        assert_eq!(verdict("1.0", READS), Verdict::Unknown);
        assert_eq!(verdict("0.3.0-dev", READS), Verdict::Unknown);
        assert_eq!(verdict("", READS), Verdict::Unknown);
    }

    #[test]
    fn the_library_reads_its_own_version_and_the_first_release() {
        assert_eq!(SCHEMA_VERSIONS.first(), Some(&"0.2.0"));
        assert_eq!(SCHEMA_VERSIONS.last(), Some(&LIBRARY_VERSION));
        assert!(SCHEMA_VERSIONS.iter().all(|v| parse(v).is_some()));
    }
}
