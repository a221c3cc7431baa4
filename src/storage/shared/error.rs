//! The errors the storage layer raises, with the SQLSTATEs users can rely on.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Stored bytes fail validation: SQLSTATE XX001 (data_corrupted).
pub fn data_corrupted(detail: &str) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("columnar data is corrupt: {detail}"),
        "pgcolumnar",
    )
    .report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// A columnar table stored in a format newer than this library reads (written by a later
/// pgcolumnar, then the library downgraded): SQLSTATE XX001, as for damaged data, since
/// its bytes cannot be read; the message says it is not damage.
pub fn newer_format(relname: &str, found: u32, reads: u32) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!(
            "columnar table \"{relname}\" is stored in format version {found}, newer than this pgcolumnar library reads (version {reads})"
        ),
        "pgcolumnar",
    )
    .set_hint("Install the pgcolumnar version that wrote it, or a later one.")
    .report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// A feature columnar tables do not have (yet): SQLSTATE 0A000, with what to do instead.
pub fn not_supported(what: &str, hint: &str) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!("{what} is not supported for columnar tables"),
        "pgcolumnar",
    )
    .set_hint(hint)
    .report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// NOWAIT met a row another transaction holds: SQLSTATE 55P03, as heap reports it.
pub fn row_lock_not_available(relname: &str) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
        format!("could not obtain lock on row in relation \"{relname}\""),
        "pgcolumnar",
    )
    .report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// Columnar tables cannot be written in this server's configuration: SQLSTATE 55000
/// (object_not_in_prerequisite_state), with what to change.
pub fn not_configured(message: &str, hint: &str) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message.to_string(),
        "pgcolumnar",
    )
    .set_hint(hint)
    .report(PgLogLevel::ERROR);
    unreachable!("ereport(ERROR) returned")
}

/// The operating system refused memory that pgcolumnar asked for (`format::fallible`):
/// SQLSTATE 53200, worded as PostgreSQL's own out-of-memory errors. Installed as
/// `fallible`'s refusal handler at load; it may run on a rayon thread (a row group's
/// columns are encoded in parallel), whose panic would reach the caller's.
///
/// The report unwinds without the panic hook (`resume_unwind`): on another thread than
/// the backend's the hook prints a backtrace, whose symbols take megabytes that are just
/// what is missing, and a failed allocation there aborts the process.
pub fn out_of_memory(bytes: usize) -> ! {
    let report = ErrorReport::new(PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY, "out of memory", "pgcolumnar")
        .set_detail(format!("Failed on request of size {bytes} in pgcolumnar."));
    std::panic::resume_unwind(Box::new(report))
}
