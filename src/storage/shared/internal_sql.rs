//! SQL that pgcolumnar runs itself, through SPI, on its own metadata (today only
//! `pgcolumnar.table_option`), as opposed to the user's statements.
//!
//! The executor hooks (`lib.rs`) write out buffered rows and publish a statement's
//! collected deletes at every query start and end. That is right for any query of the
//! user's, a trigger's or a function's included, but not for ours: ours can run in the
//! middle of a row change. A session's first UPDATE of a table reads the table's
//! `sort_by` through SPI while it writes the new version, after it has taken the old
//! version's bucket and before it records the delete; letting go of the bucket there
//! let another session change the same row meanwhile (two live versions of the row,
//! and a false unique violation).

use super::privilege::ExtensionRights;
use pgrx::pg_sys;
use std::cell::Cell;

thread_local! {
    /// How many `InternalSql` guards are alive.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// While alive, queries run with the extension's rights (`ExtensionRights`) and are
/// ours: the executor hooks leave buffers and buckets alone. Dropped on normal exit and
/// on Rust unwinding alike (a PostgreSQL error inside SPI unwinds through it).
#[must_use = "the queries are internal only while the guard lives"]
pub struct InternalSql {
    _rights: ExtensionRights,
}

impl InternalSql {
    /// Internal SQL on relation `relid` (one of the extension's), as its owner.
    ///
    /// # Safety
    /// As for `ExtensionRights::of`: on the backend thread inside a transaction, and
    /// guards dropped in the reverse order of their creation.
    pub unsafe fn on(relid: pg_sys::Oid) -> InternalSql {
        // SAFETY: this fn's contract is `ExtensionRights::of`'s, passed on to our caller.
        let rights = unsafe { ExtensionRights::of(relid) };
        DEPTH.with(|d| d.set(d.get() + 1));
        InternalSql { _rights: rights }
    }
}

impl Drop for InternalSql {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// Whether the query being started or ended is one of ours.
pub fn running() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

#[cfg(feature = "pg_test")]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// The UPDATE's new version is the first row written after the table's cached
    /// sort_by was invalidated, so writing it reads the option through SPI while the
    /// UPDATE holds the old version's bucket. The delete must still be recorded under
    /// the bucket's lock (pending_marks asserts it in debug builds) and the row keep one
    /// live version.
    #[pg_test]
    fn internal_sql_in_a_row_change_keeps_the_bucket() {
        Spi::run("CREATE TABLE mid_change (k int PRIMARY KEY, v int) USING columnar").unwrap();
        Spi::run("INSERT INTO mid_change VALUES (1, 0), (2, 0)").unwrap();
        Spi::run("ALTER TABLE mid_change SET (sort_by = 'k')").unwrap();
        Spi::run("UPDATE mid_change SET v = v + 1 WHERE k = 1").unwrap();
        Spi::run("ALTER TABLE mid_change RESET (sort_by)").unwrap();
        Spi::run("UPDATE mid_change SET v = v + 1").unwrap();
        let rows = Spi::get_one::<String>("SELECT string_agg(k || '=' || v, ',' ORDER BY k) FROM mid_change")
            .unwrap()
            .unwrap();
        assert_eq!(rows, "1=2,2=1");
    }
}
