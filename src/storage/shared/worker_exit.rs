//! How a parallel worker that read a columnar table ends. A parallel query returns only
//! once its workers' processes are gone: the leader waits for each to exit
//! (`DestroyParallelContext`). After PostgreSQL's own exit callbacks, which release
//! everything the worker held in shared memory, `exit` runs the C library's handlers:
//! OpenSSL's cleanup and the loaded libraries' destructors, which free memory the kernel
//! is about to drop, and in a process forked from the postmaster copy each page of it
//! they write. On the benchmark machine that was about 2.5 ms of CPU per worker, with
//! the leader waiting, in a 40 ms parallel fold. So a worker that runs one of
//! pgcolumnar's parallel nodes (`exec::customscan`) or core's parallel scan of a columnar
//! table (`glue::tableam`) ends with `_exit`, and the status PostgreSQL gave, once
//! PostgreSQL's callbacks are done.
//!
//! `arm` registers two things in the worker: a PostgreSQL exit callback, which notes the
//! status `proc_exit` passes, and a C library exit handler, which is registered after
//! every library's and so runs before them. The handler ends the process only if the
//! callback ran: an `exit` that did not come through `proc_exit` (whose clean-up PostgreSQL
//! then runs from its own exit handler) goes on as usual.
//! `pgcolumnar.parallel_worker_quick_exit = off` leaves workers to `exit`.

use pgrx::{pg_guard, pg_sys, GucContext, GucFlags, GucRegistry, GucSetting};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// `pgcolumnar.parallel_worker_quick_exit`: parallel workers of pgcolumnar's nodes and of
/// columnar tables' scans end without the C library's exit handlers (on by default).
pub static QUICK_EXIT: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.parallel_worker_quick_exit",
        c"Parallel workers of pgcolumnar's nodes and of columnar scans end without the C library's exit handlers.",
        c"The leader of a parallel query waits for its workers' processes to end. After PostgreSQL's exit callbacks, such a worker skips the handlers the C library runs at exit (OpenSSL's cleanup, libraries' destructors), which only free memory.",
        &QUICK_EXIT,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// No status noted: PostgreSQL's exit callbacks have not run.
const NOT_NOTED: i32 = i32::MIN;

static ARMED: AtomicBool = AtomicBool::new(false);
static STATUS: AtomicI32 = AtomicI32::new(NOT_NOTED);

/// In a parallel worker, once per process (later calls, and calls in any other
/// process, do nothing): its exit skips the C library's handlers, unless the setting is
/// off.
///
/// # Safety
/// Backend thread, after its libraries are loaded (the handler runs before the
/// handlers registered until now).
pub unsafe fn arm() {
    // SAFETY: ParallelWorkerNumber is this process's, read on the backend thread.
    let worker = unsafe { pg_sys::ParallelWorkerNumber } >= 0;
    if !worker || !QUICK_EXIT.get() || ARMED.swap(true, Ordering::Relaxed) {
        return;
    }
    // SAFETY: on the backend thread (this fn's contract): on_proc_exit appends to
    // PostgreSQL's list of exit callbacks; atexit to the C library's.
    unsafe {
        pg_sys::on_proc_exit(Some(note_status), pg_sys::Datum::from(0));
        libc::atexit(end_now);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn note_status(code: i32, _arg: pg_sys::Datum) {
    note(code);
}

/// Whether this process ends early (`arm` ran with the setting on).
pub fn armed() -> bool {
    ARMED.load(Ordering::Relaxed)
}

/// Notes the status PostgreSQL's exit passes: its callbacks are running.
fn note(code: i32) {
    STATUS.store(code, Ordering::Relaxed);
}

/// The C library exit handler: ends the process with the noted status, if any.
extern "C" fn end_now() {
    let code = STATUS.load(Ordering::Relaxed);
    if code == NOT_NOTED {
        return;
    }
    // SAFETY: called by `exit` after PostgreSQL's exit callbacks ran (the status is
    // noted): what stdio holds is written, then the process ends with that status.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(code);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set in a copy of this test binary run as a child process: how its test exits.
    const CHILD: &str = "PGCOLUMNAR_WORKER_EXIT_CHILD";
    const EARLIER_RAN: &str = "the handler registered earlier ran";

    /// This test binary run again, `exiting` alone, as `mode`: its exit status and output.
    fn run_child(mode: &str) -> (Option<i32>, String) {
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "storage::shared::worker_exit::tests::exiting",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, mode)
            .output()
            .expect("the test binary runs");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    extern "C" fn earlier_handler() {
        // SAFETY: writes a static string to standard output, which stays open.
        unsafe { libc::write(1, EARLIER_RAN.as_ptr().cast(), EARLIER_RAN.len()) };
    }

    /// Only in the child: a library's exit handler, then ours (as `arm` registers it
    /// after the libraries'), then `exit(7)`, after PostgreSQL's callbacks noted 3 when
    /// the mode says so.
    #[test]
    fn exiting() {
        let Ok(mode) = std::env::var(CHILD) else { return };
        // SAFETY: registers two handlers that live as long as the process.
        unsafe {
            libc::atexit(earlier_handler);
            libc::atexit(end_now);
        }
        if mode == "noted" {
            note(3);
        }
        std::process::exit(7);
    }

    #[test]
    fn after_postgres_callbacks_the_process_ends_with_their_status_skipping_other_handlers() {
        let (status, out) = run_child("noted");
        assert_eq!(status, Some(3), "{out}");
        assert!(!out.contains(EARLIER_RAN), "{out}");
    }

    #[test]
    fn an_exit_that_did_not_come_through_postgres_goes_on_as_usual() {
        let (status, out) = run_child("not noted");
        assert_eq!(status, Some(7), "{out}");
        assert!(out.contains(EARLIER_RAN), "{out}");
    }
}
