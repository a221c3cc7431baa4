//! End-to-end checks of the generated COPY text, through the library and the binary.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

use tsbs_gen::{
    generate, host_series, timestamp_string, Config, Host, Walk, DEFAULT_SEED, INTERVAL_SECS, NUM_COLUMNS,
};

const BIN: &str = env!("CARGO_BIN_EXE_tsbs-gen");

fn gen(cfg: &Config) -> Vec<u8> {
    let mut out = Vec::new();
    let n = generate(cfg, &mut out).unwrap();
    assert_eq!(n, cfg.rows);
    out
}

fn cfg(rows: u64, hosts: u64, seed: u64) -> Config {
    Config { rows, hosts, seed, ..Config::default() }
}

fn run(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(BIN);
    c.args(args).env_remove("ROWS").env_remove("HOSTS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn lines(out: &[u8]) -> Vec<&str> {
    let s = std::str::from_utf8(out).unwrap();
    assert!(s.is_empty() || s.ends_with('\n'), "output must end with a newline");
    s.lines().collect()
}

/// Parse `YYYY-MM-DD HH:MM:SS+00` back into seconds after 2024-01-01 by search over the
/// formatter (monotone), so the check does not reuse the formatter's arithmetic blindly.
fn ts_offset(ts: &str, hint: u64) -> u64 {
    assert_eq!(ts.len(), 22, "{ts}");
    assert!(ts.ends_with("+00"));
    if timestamp_string(hint) == ts {
        return hint;
    }
    let (mut lo, mut hi) = (0u64, 400 * 366 * 86_400);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if timestamp_string(mid).as_str() < ts {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    assert_eq!(timestamp_string(lo), ts);
    lo
}

#[test]
fn same_seed_same_bytes_binary_and_library() {
    let a = run(&["--rows", "20000", "--hosts", "37", "--seed", "9"], &[]);
    let b = run(&["--rows=20000", "--hosts=37", "--seed=9"], &[]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, gen(&cfg(20000, 37, 9)));
    // default seed is fixed too
    let d1 = run(&["--rows", "5000"], &[]);
    let d2 = run(&["--rows", "5000"], &[]);
    assert_eq!(d1.stdout, d2.stdout);
    assert_eq!(d1.stdout, gen(&cfg(5000, 400, DEFAULT_SEED)));
    // a different seed gives different data
    assert_ne!(a.stdout, gen(&cfg(20000, 37, 10)));
}

#[test]
fn exact_row_counts_even_mid_timestamp() {
    for (rows, hosts) in [(0u64, 5u64), (1, 400), (7, 3), (400, 400), (401, 400), (1234, 100)] {
        let out = gen(&cfg(rows, hosts, 1));
        assert_eq!(lines(&out).len() as u64, rows, "rows={rows} hosts={hosts}");
    }
    let out = run(&["--rows", "1_001", "--hosts", "10"], &[]);
    assert!(out.status.success());
    assert_eq!(lines(&out.stdout).len(), 1001);
    let last = lines(&out.stdout)[1000].to_string();
    assert!(last.starts_with("2024-01-01 00:16:40+00\thost_0\t"), "{last}");
}

#[test]
fn structure_order_and_values() {
    let (rows, hosts, seed) = (25_013u64, 50u64, 4242u64);
    let out = gen(&cfg(rows, hosts, seed));
    let mut series: Vec<_> = (0..hosts).map(|h| host_series(seed, h, Walk::Normal)).collect();
    let mut tags: HashMap<String, Vec<String>> = HashMap::new();
    let mut touched_bounds = false;
    for (i, line) in lines(&out).iter().enumerate() {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), NUM_COLUMNS, "line {i}: {line}");
        assert!(!line.contains('\\') && !line.contains('\r'));
        let (tick, host) = (i as u64 / hosts, i as u64 % hosts);
        // time: 10 s steps, every host once per timestamp, hosts in order
        assert_eq!(ts_offset(cols[0], tick * INTERVAL_SECS), tick * INTERVAL_SECS);
        assert_eq!(cols[1], format!("host_{host}"));
        // tags stable per host
        let t: Vec<String> = cols[1..11].iter().map(|s| s.to_string()).collect();
        let prev = tags.entry(t[0].clone()).or_insert_with(|| t.clone());
        assert_eq!(*prev, t, "tags of {} changed", t[0]);
        // metrics: in [0,100], parse to exactly the simulated values, shortest form
        let expect = series[host as usize].next().unwrap();
        for (j, s) in cols[11..].iter().enumerate() {
            let v: f64 = s.parse().unwrap_or_else(|_| panic!("bad float {s:?}"));
            assert!((0.0..=100.0).contains(&v), "{v}");
            assert_eq!(v.to_bits(), expect[j].to_bits(), "line {i} col {j}");
            assert_eq!(s.len(), format!("{v}").len(), "not the shortest round-trip form");
            assert!(!s.contains(['e', 'E', '+']) && !s.starts_with('-'));
            touched_bounds |= v == 0.0 || v == 100.0;
        }
    }
    assert_eq!(tags.len() as u64, hosts);
    assert!(touched_bounds, "500 steps x 500 walks should hit 0 or 100 somewhere");
    // 0 and 100 are printed as integers
    let text = std::str::from_utf8(&out).unwrap();
    assert!(text.contains("\t0\t") || text.contains("\t0\n") || text.contains("\t100"));
}

#[test]
fn host_tags_and_series_do_not_depend_on_host_or_row_count() {
    let small = gen(&cfg(3 * 10, 10, 77));
    let large = gen(&cfg(3 * 50 + 7, 50, 77));
    let pick = |out: &[u8], hosts: usize| -> Vec<String> {
        lines(out)
            .chunks(hosts)
            .take(3)
            .flat_map(|c| c[..10].iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .collect()
    };
    assert_eq!(pick(&small, 10), pick(&large, 50));
    let h = Host::new(77, 3, Walk::Normal);
    let line3 = lines(&small)[3].to_string();
    assert_eq!(line3.split('\t').skip(1).take(10).collect::<Vec<_>>(), h.tags().to_vec());
}

#[test]
fn timestamps_roll_over_into_february_and_2025() {
    // One host, one row per 10 s: 8640 rows a day.
    let per_day = 86_400 / INTERVAL_SECS;
    let rows = 366 * per_day + 2; // 2024 is a leap year
    let out = gen(&cfg(rows, 1, 5));
    let l = lines(&out);
    let ts = |i: u64| l[i as usize].split('\t').next().unwrap().to_string();
    assert_eq!(ts(0), "2024-01-01 00:00:00+00");
    assert_eq!(ts(1), "2024-01-01 00:00:10+00");
    assert_eq!(ts(31 * per_day - 1), "2024-01-31 23:59:50+00");
    assert_eq!(ts(31 * per_day), "2024-02-01 00:00:00+00");
    assert_eq!(ts(59 * per_day), "2024-02-29 00:00:00+00");
    assert_eq!(ts(60 * per_day), "2024-03-01 00:00:00+00");
    assert_eq!(ts(366 * per_day - 1), "2024-12-31 23:59:50+00");
    assert_eq!(ts(366 * per_day), "2025-01-01 00:00:00+00");
    assert_eq!(ts(366 * per_day + 1), "2025-01-01 00:00:10+00");
    // strictly increasing by 10 s throughout
    let mut prev = None;
    for (i, line) in l.iter().enumerate() {
        let off = ts_offset(&line[..22], i as u64 * INTERVAL_SECS);
        assert_eq!(off, i as u64 * INTERVAL_SECS);
        if let Some(p) = prev {
            assert_eq!(off, p + INTERVAL_SECS);
        }
        prev = Some(off);
    }
}

#[test]
fn env_defaults_and_flag_precedence() {
    let a = run(&[], &[("ROWS", "123"), ("HOSTS", "7")]);
    assert!(a.status.success());
    assert_eq!(a.stdout, gen(&cfg(123, 7, DEFAULT_SEED)));
    let b = run(&["--rows", "10", "--hosts", "2"], &[("ROWS", "123"), ("HOSTS", "7")]);
    assert_eq!(b.stdout, gen(&cfg(10, 2, DEFAULT_SEED)));
    let c = run(&["--hosts", "3"], &[("ROWS", "9")]);
    assert_eq!(lines(&c.stdout).len(), 9);
}

#[test]
fn walk_and_truncate_options() {
    let u = run(&["--rows", "2000", "--hosts", "20", "--walk", "uniform"], &[]);
    assert!(u.status.success());
    let expect = gen(&Config { walk: Walk::Uniform, ..cfg(2000, 20, DEFAULT_SEED) });
    assert_eq!(u.stdout, expect);
    let t = run(&["--rows", "2000", "--hosts", "20", "--truncate"], &[]);
    let full = gen(&cfg(2000, 20, DEFAULT_SEED));
    for (lt, lf) in lines(&t.stdout).iter().zip(lines(&full)) {
        let (ct, cf): (Vec<&str>, Vec<&str>) = (lt.split('\t').collect(), lf.split('\t').collect());
        assert_eq!(ct[..11], cf[..11]);
        for j in 11..21 {
            let f: f64 = cf[j].parse().unwrap();
            assert_eq!(ct[j], format!("{}", f.trunc() as u64));
        }
    }
}

#[test]
fn bad_arguments_fail_cleanly() {
    for args in [
        &["--rows", "abc"][..],
        &["--hosts", "0", "--rows", "5"],
        &["--bogus"],
        &["--rows"],
        &["--walk", "gaussian"],
        &["--rows", "18446744073709551615", "--hosts", "1"],
    ] {
        let out = run(args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("tsbs-gen: ") && !err.contains("panicked"), "{err}");
        assert!(out.stdout.is_empty());
    }
    let bad_env = run(&[], &[("ROWS", "ten")]);
    assert_eq!(bad_env.status.code(), Some(2));
    let help = run(&["--help"], &[]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--rows"));
}

#[test]
fn broken_pipe_exits_nonzero_without_panic() {
    let mut child = Command::new(BIN)
        .args(["--rows", "100000000"])
        .env_remove("ROWS")
        .env_remove("HOSTS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken pipe") && !err.contains("panicked"), "{err}");
}

#[test]
fn writer_errors_propagate() {
    struct Failing(usize);
    impl Write for Failing {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 -= 1;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let err = generate(&cfg(100, 10, 1), &mut Failing(5)).unwrap_err();
    assert_eq!(err.to_string(), "disk full");
}
