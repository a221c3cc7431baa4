//! rayon's threads inside a backend. A PostgreSQL backend is one thread, and its signal
//! handlers assume they interrupt that thread: the timeout handler (statement_timeout,
//! lock_timeout; PostgreSQL leaves its timer running after a statement, so these come
//! at any time) bumps and drops the interrupt holdoff count, others set flags and the
//! latch, none of it atomically. A signal sent to the process goes to any of its threads
//! that does not block it, and the kernel passes over the backend's thread when that
//! one already has a signal pending. So rayon's threads block every signal from their
//! start: a handler that ran on one raced the backend's own HOLD/RESUME_INTERRUPTS, and
//! a backend whose holdoff count it left at -1 processed no interrupt again (its next
//! parallel query waited for ever for workers that had finished; cancel and terminate
//! did nothing).

use std::sync::Once;

static POOL: Once = Once::new();

/// Makes rayon's global pool, once per backend, with every signal blocked in its
/// threads. Every use of rayon in a backend comes after a call of this (the pool is made
/// at the first use otherwise, with threads that take signals). Never in the postmaster:
/// threads do not survive its fork.
pub fn ensure_pool() {
    POOL.call_once(|| {
        // An error means the pool exists already (made before this was asked): nothing
        // to change then.
        let _ = with_signals_blocked(|| builder().build_global());
    });
}

/// The pool's threads, named so that `ps -L` and `top -H` tell them from the backend's.
fn builder() -> rayon::ThreadPoolBuilder {
    rayon::ThreadPoolBuilder::new().thread_name(|i| format!("pgcolumnar {i}"))
}

/// `f` run with every signal blocked in this thread, its mask restored after: a thread
/// starts with its creator's mask, so threads spawned by `f` can take no signal, even
/// before they run.
fn with_signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: `sigfillset` fills the set it is given; `pthread_sigmask` changes this
    // thread's mask and writes the old one into `old`, which the second call puts back.
    unsafe {
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(all.as_mut_ptr());
        let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), old.as_mut_ptr());
        let result = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
        result
    }
}

/// The signal masks (`SigBlk`) of this process's threads whose name starts with
/// `prefix`, from /proc.
#[cfg(any(test, feature = "pg_test"))]
fn masks_of_threads(prefix: &str) -> Vec<u64> {
    let tasks = format!("/proc/{}/task", std::process::id());
    std::fs::read_dir(&tasks)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path().join("status")).ok())
        .filter_map(|status| {
            let field =
                |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string());
            let mask = u64::from_str_radix(&field("SigBlk:")?, 16).ok()?;
            field("Name:")?.starts_with(prefix).then_some(mask)
        })
        .collect()
}

/// Whether `mask` blocks the signals PostgreSQL's backends handle.
#[cfg(any(test, feature = "pg_test"))]
fn blocks_backend_signals(mask: u64) -> bool {
    [
        libc::SIGALRM,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGURG,
    ]
    .iter()
    .all(|&s| mask & (1 << (s - 1)) != 0)
}

#[cfg(any(test, feature = "pg_test"))]
#[cfg_attr(feature = "pg_test", pgrx::pg_schema)]
mod tests {
    use super::*;

    #[cfg(test)]
    #[test]
    fn threads_spawned_with_signals_blocked_take_none() {
        let pool =
            with_signals_blocked(|| builder().thread_name(|i| format!("sigtest {i}")).build()).unwrap();
        // Work for every thread, so that all have started.
        let seen = pool.broadcast(|c| c.index());
        assert_eq!(seen.len(), pool.current_num_threads());
        let masks = masks_of_threads("sigtest");
        assert_eq!(masks.len(), pool.current_num_threads());
        assert!(masks.iter().all(|&m| blocks_backend_signals(m)), "{masks:x?}");
        // The calling thread's mask is as it was.
        // SAFETY: a query of this thread's mask into a set we own.
        unsafe {
            let mut now = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), now.as_mut_ptr());
            assert_eq!(libc::sigismember(now.as_ptr(), libc::SIGALRM), 0);
        }
    }

    /// Rows enough to encode their columns on rayon's threads start the pool; its threads
    /// then block every signal the backend handles.
    #[cfg(feature = "pg_test")]
    #[pgrx::pg_test]
    fn the_backends_rayon_threads_take_no_signal() {
        pgrx::Spi::run(
            "CREATE TABLE sig_threads (a int, b text, c float8) USING columnar;
             INSERT INTO sig_threads SELECT g, 'v' || g, g * 0.5 FROM generate_series(1, 50000) g",
        )
        .unwrap();
        // A read writes the buffered rows out (encoding them) first.
        assert_eq!(pgrx::Spi::get_one::<i64>("SELECT count(*) FROM sig_threads"), Ok(Some(50000)));
        let masks = masks_of_threads("pgcolumnar ");
        assert!(!masks.is_empty(), "the write used no rayon thread");
        assert!(masks.iter().all(|&m| blocks_backend_signals(m)), "{masks:x?}");
    }
}
