//! Deterministic TSBS-style `cpu-only` data generator (devops use case).
//!
//! Produces rows of the `cpu` table (see `cpu.sql`) as PostgreSQL COPY text:
//! `time`, ten host tags, ten `usage_*` metrics.
//!
//! Model (after TSBS `pkg/data/usecases/devops`):
//! * hosts `host_0 .. host_{H-1}`, each with fixed tags drawn from TSBS's value lists;
//! * one reading per host every 10 s from 2024-01-01 00:00:00+00, all hosts per
//!   timestamp, in host order;
//! * each metric is a random walk clamped to [0, 100]: the initial state is uniform in
//!   [0, 100), the first reading emits it, and between readings the state advances by a
//!   step drawn from N(0, 1) (TSBS's `CWD(ND(0,1), 0, 100, U*100)`), or, with
//!   [`Walk::Uniform`], from U[-1, 1).
//!
//! Every host has its own PRNG stream derived from `(seed, host id)`, so a host's tags and
//! series do not depend on the host count or row count, and output is byte-identical
//! for a given seed. Only IEEE basic operations (+ - * / sqrt) are used to produce values,
//! so the output is the same on every platform.

use std::io::{self, Write};

/// Default seed (fixed so that runs without `--seed` are reproducible).
pub const DEFAULT_SEED: u64 = 123;
/// Default number of rows.
pub const DEFAULT_ROWS: u64 = 10_000_000;
/// Default number of hosts.
pub const DEFAULT_HOSTS: u64 = 400;
/// Seconds between two readings of a host.
pub const INTERVAL_SECS: u64 = 10;
/// Number of columns per row.
pub const NUM_COLUMNS: usize = 21;

pub const TAG_NAMES: [&str; 10] = [
    "hostname",
    "region",
    "datacenter",
    "rack",
    "os",
    "arch",
    "team",
    "service",
    "service_version",
    "service_environment",
];

pub const METRIC_NAMES: [&str; 10] = [
    "usage_user",
    "usage_system",
    "usage_idle",
    "usage_nice",
    "usage_iowait",
    "usage_irq",
    "usage_softirq",
    "usage_steal",
    "usage_guest",
    "usage_guest_nice",
];

/// TSBS regions with their datacenters.
pub const REGIONS: [(&str, &[&str]); 9] = [
    ("us-east-1", &["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1e"]),
    ("us-west-1", &["us-west-1a", "us-west-1b"]),
    ("us-west-2", &["us-west-2a", "us-west-2b", "us-west-2c"]),
    ("eu-west-1", &["eu-west-1a", "eu-west-1b", "eu-west-1c"]),
    ("eu-central-1", &["eu-central-1a", "eu-central-1b"]),
    ("ap-southeast-1", &["ap-southeast-1a", "ap-southeast-1b"]),
    ("ap-southeast-2", &["ap-southeast-2a", "ap-southeast-2b"]),
    ("ap-northeast-1", &["ap-northeast-1a", "ap-northeast-1c"]),
    ("sa-east-1", &["sa-east-1a", "sa-east-1b", "sa-east-1c"]),
];
pub const TEAMS: [&str; 4] = ["SF", "NYC", "LON", "CHI"];
pub const OSES: [&str; 3] = ["Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"];
pub const ARCHES: [&str; 2] = ["x64", "x86"];
pub const SERVICE_ENVIRONMENTS: [&str; 3] = ["production", "staging", "test"];
pub const RACK_CHOICES: u64 = 100;
pub const SERVICE_CHOICES: u64 = 20;
pub const SERVICE_VERSION_CHOICES: u64 = 2;

// ---------------------------------------------------------------------------------------
// PRNG: splitmix64 for seeding, xoshiro256** for the streams.
// ---------------------------------------------------------------------------------------

/// splitmix64 step: advances `state` and returns the next output.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** 1.0 (Blackman & Vigna).
#[derive(Clone, Debug)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

impl Xoshiro256 {
    /// Seeds the four state words from a splitmix64 sequence (never all zero).
    pub fn from_seed(seed: u64) -> Self {
        let mut sm = seed;
        let mut s = [0u64; 4];
        for w in &mut s {
            *w = splitmix64(&mut sm);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Xoshiro256 { s }
    }

    /// Independent stream for one host of a run.
    pub fn for_host(seed: u64, host: u64) -> Self {
        let mut a = seed;
        let mut b = host ^ 0x6A09_E667_F3BC_C908;
        Self::from_seed(splitmix64(&mut a) ^ splitmix64(&mut b).rotate_left(17))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift with rejection; unbiased).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = (self.next_u64() as u128) * (n as u128);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A pair of independent N(0, 1) samples (Marsaglia's polar method).
    #[inline]
    pub fn next_normal_pair(&mut self) -> (f64, f64) {
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * ln(s) / s).sqrt();
                return (u * f, v * f);
            }
        }
    }
}

/// Natural logarithm of a positive, normal `x`, using only + - * / so that results are
/// bit-identical on every platform (libm's `ln` is not guaranteed to be).
/// Relative error < 1e-15, plenty for sampling.
pub fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    let mut x = x;
    let mut e: i64 = 0;
    if x < f64::MIN_POSITIVE {
        // subnormal: scale into the normal range
        x *= (1u64 << 54) as f64;
        e -= 54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    // mantissa in [1, 2)
    let mut m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 1.0 / 23.0;
    for k in (0..11).rev() {
        p = p * s2 + 1.0 / (2 * k + 1) as f64;
    }
    2.0 * s * p + e as f64 * std::f64::consts::LN_2
}

// ---------------------------------------------------------------------------------------
// Hosts.
// ---------------------------------------------------------------------------------------

/// How a metric's state moves between two readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// step ~ N(0, 1), as TSBS does (`ND(0.0, 1.0)`).
    Normal,
    /// step ~ U[-1, 1).
    Uniform,
}

/// The fixed tag values of one host, in column order.
pub fn host_tags_from_rng(host: u64, rng: &mut Xoshiro256) -> [String; 10] {
    // Same draw order as TSBS's newHostWithMeasurementGenerator.
    let (region, dcs) = REGIONS[rng.below(REGIONS.len() as u64) as usize];
    let datacenter = dcs[rng.below(dcs.len() as u64) as usize];
    let rack = rng.below(RACK_CHOICES);
    let arch = ARCHES[rng.below(ARCHES.len() as u64) as usize];
    let os = OSES[rng.below(OSES.len() as u64) as usize];
    let service = rng.below(SERVICE_CHOICES);
    let service_version = rng.below(SERVICE_VERSION_CHOICES);
    let env = SERVICE_ENVIRONMENTS[rng.below(SERVICE_ENVIRONMENTS.len() as u64) as usize];
    let team = TEAMS[rng.below(TEAMS.len() as u64) as usize];
    [
        format!("host_{host}"),
        region.to_string(),
        datacenter.to_string(),
        rack.to_string(),
        os.to_string(),
        arch.to_string(),
        team.to_string(),
        service.to_string(),
        service_version.to_string(),
        env.to_string(),
    ]
}

/// One simulated host: its PRNG stream, current metric states and tags.
#[derive(Clone, Debug)]
pub struct Host {
    rng: Xoshiro256,
    walk: Walk,
    values: [f64; 10],
    tags: [String; 10],
}

impl Host {
    pub fn new(seed: u64, id: u64, walk: Walk) -> Self {
        let mut rng = Xoshiro256::for_host(seed, id);
        // TSBS creates the distributions (initial states) before drawing the tags.
        let mut values = [0.0; 10];
        for v in &mut values {
            *v = rng.next_f64() * 100.0;
        }
        let tags = host_tags_from_rng(id, &mut rng);
        Host { rng, walk, values, tags }
    }

    pub fn tags(&self) -> &[String; 10] {
        &self.tags
    }

    pub fn values(&self) -> &[f64; 10] {
        &self.values
    }

    /// Advance every metric by one step (TSBS `TickAll`).
    #[inline]
    pub fn tick(&mut self) {
        match self.walk {
            Walk::Normal => {
                for i in (0..10).step_by(2) {
                    let (a, b) = self.rng.next_normal_pair();
                    self.values[i] = clamp(self.values[i] + a);
                    self.values[i + 1] = clamp(self.values[i + 1] + b);
                }
            }
            Walk::Uniform => {
                for v in &mut self.values {
                    let d = 2.0 * self.rng.next_f64() - 1.0;
                    *v = clamp(*v + d);
                }
            }
        }
    }
}

#[inline]
fn clamp(v: f64) -> f64 {
    // Same order as TSBS: upper bound first, then lower bound.
    let v = if v > 100.0 { 100.0 } else { v };
    if v < 0.0 {
        0.0
    } else {
        v
    }
}

/// The metric values of one host at consecutive readings (reading 0 first).
pub fn host_series(seed: u64, id: u64, walk: Walk) -> impl Iterator<Item = [f64; 10]> {
    let mut host = Host::new(seed, id, walk);
    let mut first = true;
    std::iter::from_fn(move || {
        if !first {
            host.tick();
        }
        first = false;
        Some(host.values)
    })
}

// ---------------------------------------------------------------------------------------
// Formatting.
// ---------------------------------------------------------------------------------------

/// Escape a value for PostgreSQL COPY text format.
pub fn copy_escape(s: &str, out: &mut Vec<u8>) {
    for &b in s.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            0x0B => out.extend_from_slice(b"\\v"),
            _ => out.push(b),
        }
    }
}

/// Seconds from 1970-01-01 to 2024-01-01 00:00:00 UTC.
pub const EPOCH_2024: i64 = 1_704_067_200;

/// Days since 1970-01-01 -> (year, month 1..=12, day 1..=31), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Largest offset (seconds since 2024-01-01) that still formats with a 4-digit year
/// (9999-12-31 23:59:59).
pub const MAX_OFFSET_SECS: u64 = 253_402_300_799 - EPOCH_2024 as u64;

/// Length of a formatted timestamp, e.g. `2024-01-01 00:00:10+00`.
pub const TS_LEN: usize = 22;

/// Format `secs` seconds after 2024-01-01 00:00:00+00 as `YYYY-MM-DD HH:MM:SS+00`.
pub fn format_timestamp(secs: u64, out: &mut [u8; TS_LEN]) {
    assert!(secs <= MAX_OFFSET_SECS, "timestamp beyond year 9999");
    let t = EPOCH_2024 + secs as i64;
    let days = t.div_euclid(86_400);
    let sod = t.rem_euclid(86_400) as u32;
    let (y, m, d) = civil_from_days(days);
    let y = y as u32;
    let (hh, mm, ss) = (sod / 3600, sod / 60 % 60, sod % 60);
    let digits = |v: u32| [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8];
    out[0] = b'0' + (y / 1000) as u8;
    out[1] = b'0' + (y / 100 % 10) as u8;
    out[2..4].copy_from_slice(&digits(y % 100));
    out[4] = b'-';
    out[5..7].copy_from_slice(&digits(m));
    out[7] = b'-';
    out[8..10].copy_from_slice(&digits(d));
    out[10] = b' ';
    out[11..13].copy_from_slice(&digits(hh));
    out[13] = b':';
    out[14..16].copy_from_slice(&digits(mm));
    out[16] = b':';
    out[17..19].copy_from_slice(&digits(ss));
    out[19..22].copy_from_slice(b"+00");
}

pub fn timestamp_string(secs: u64) -> String {
    let mut b = [0u8; TS_LEN];
    format_timestamp(secs, &mut b);
    String::from_utf8(b.to_vec()).unwrap()
}

/// Append the shortest decimal string that parses back to exactly `v`, in plain
/// notation like Rust's `{}` for a finite f64 (0 -> `0`, 100 -> `100`, 1e-7 ->
/// `0.0000001`, never an exponent), but computed with Ryū, which is several times faster
/// than going through `core::fmt`. The only possible difference from `{}` is the last
/// digit when two shortest candidates are exactly equally close to `v` (Ryū rounds the
/// tie to even); both parse back to `v`.
#[inline]
pub fn push_f64(out: &mut Vec<u8>, v: f64) {
    debug_assert!(v.is_finite());
    // Fast path for small non-negative integers (0, 100, and every value with --truncate).
    if v.to_bits() >> 63 == 0 && v < 1e15 {
        let i = v as u64;
        if i as f64 == v {
            push_u64(out, i);
            return;
        }
    }
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(v).as_bytes();
    match s.iter().position(|&b| b == b'e') {
        None => {
            // Ryū writes integral values as `100.0`; `{}` writes `100`.
            let s = s.strip_suffix(b".0").unwrap_or(s);
            out.extend_from_slice(s);
        }
        Some(epos) => push_plain_from_exponent(out, &s[..epos], &s[epos + 1..]),
    }
}

/// Append the decimal digits of `v`.
#[inline]
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Rewrite Ryū's `[-]d[.ddd]` mantissa and `[-]N` exponent as plain decimal.
#[cold]
fn push_plain_from_exponent(out: &mut Vec<u8>, mant: &[u8], exp: &[u8]) {
    let (neg, mant) = match mant.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, mant),
    };
    let exp: i64 = std::str::from_utf8(exp).unwrap().parse().unwrap();
    let digits: Vec<u8> = mant.iter().copied().filter(|&b| b != b'.').collect();
    // The decimal point goes after `point` digits.
    let point = 1 + exp;
    if neg {
        out.push(b'-');
    }
    if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-point) as usize));
        out.extend_from_slice(&digits);
    } else if point as usize >= digits.len() {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', point as usize - digits.len()));
    } else {
        out.extend_from_slice(&digits[..point as usize]);
        out.push(b'.');
        out.extend_from_slice(&digits[point as usize..]);
    }
}

// ---------------------------------------------------------------------------------------
// Driver.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub rows: u64,
    pub hosts: u64,
    pub seed: u64,
    pub walk: Walk,
    /// Emit `trunc(value)` like TSBS's current cpu-only output (`ToPointAllInt64`).
    pub truncate: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rows: DEFAULT_ROWS,
            hosts: DEFAULT_HOSTS,
            seed: DEFAULT_SEED,
            walk: Walk::Normal,
            truncate: false,
        }
    }
}

impl Config {
    /// Check that the run is possible (hosts > 0, last timestamp within year 9999).
    pub fn validate(&self) -> Result<(), String> {
        if self.rows == 0 {
            return Ok(());
        }
        if self.hosts == 0 {
            return Err("--hosts must be at least 1".into());
        }
        let last_tick = (self.rows - 1) / self.hosts;
        match last_tick.checked_mul(INTERVAL_SECS) {
            Some(s) if s <= MAX_OFFSET_SECS => Ok(()),
            _ => Err(format!("{} rows over {} hosts would run past year 9999", self.rows, self.hosts)),
        }
    }
}

/// Write `cfg.rows` rows in COPY text format to `w`. Returns the number of rows written.
/// Memory is O(hosts); each row is formatted into one reused buffer.
pub fn generate<W: Write>(cfg: &Config, w: &mut W) -> io::Result<u64> {
    cfg.validate().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if cfg.rows == 0 {
        return Ok(0);
    }
    // Only the hosts that appear in the output are materialised.
    let n_hosts = cfg.hosts.min(cfg.rows);
    let mut hosts: Vec<Host> = Vec::with_capacity(n_hosts as usize);
    let mut prefixes: Vec<Vec<u8>> = Vec::with_capacity(n_hosts as usize);
    for id in 0..n_hosts {
        let h = Host::new(cfg.seed, id, cfg.walk);
        let mut p = Vec::new();
        for t in h.tags() {
            p.push(b'\t');
            copy_escape(t, &mut p);
        }
        prefixes.push(p);
        hosts.push(h);
    }

    let mut row: Vec<u8> = Vec::with_capacity(512);
    let mut ts = [0u8; TS_LEN];
    let mut written: u64 = 0;
    let mut tick: u64 = 0;
    'outer: loop {
        format_timestamp(tick * INTERVAL_SECS, &mut ts);
        for (host, prefix) in hosts.iter_mut().zip(&prefixes) {
            if written == cfg.rows {
                break 'outer;
            }
            if tick > 0 {
                host.tick();
            }
            row.clear();
            row.extend_from_slice(&ts);
            row.extend_from_slice(prefix);
            for &v in host.values() {
                row.push(b'\t');
                push_f64(&mut row, if cfg.truncate { v.trunc() } else { v });
            }
            row.push(b'\n');
            w.write_all(&row)?;
            written += 1;
        }
        if written == cfg.rows {
            break;
        }
        tick += 1;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_std() {
        use std::f64::consts::SQRT_2;
        let mut rng = Xoshiro256::from_seed(7);
        for _ in 0..100_000 {
            let x = rng.next_f64();
            if x == 0.0 {
                continue;
            }
            let (a, b) = (ln(x), x.ln());
            assert!((a - b).abs() <= 1e-15 * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
        for x in [
            1.0,
            0.5,
            2.0,
            1e-300,
            5e-324,
            f64::MIN_POSITIVE,
            0.999999999,
            SQRT_2,
            SQRT_2.next_up(),
            SQRT_2.next_down(),
        ] {
            let (a, b) = (ln(x), x.ln());
            assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
        assert_eq!(ln(1.0), 0.0);
    }

    #[test]
    fn xoshiro_reference_vector() {
        // xoshiro256** with state {1, 2, 3, 4}: reference outputs from the C implementation.
        let mut r = Xoshiro256 { s: [1, 2, 3, 4] };
        let expect = [11520u64, 0, 1509978240, 1215971899390074240];
        for e in expect {
            assert_eq!(r.next_u64(), e);
        }
    }

    #[test]
    fn normal_moments() {
        let mut r = Xoshiro256::from_seed(42);
        let n = 200_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n / 2 {
            let (a, b) = r.next_normal_pair();
            s1 += a + b;
            s2 += a * a + b * b;
        }
        let mean = s1 / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "var {var}");
    }

    #[test]
    fn below_in_range_and_covers() {
        let mut r = Xoshiro256::from_seed(1);
        let mut seen = [false; 20];
        for _ in 0..10_000 {
            let v = r.below(20);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn civil_known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(EPOCH_2024 / 86_400), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2024 is a leap year: day 59 after 2024-01-01 is Feb 29.
        assert_eq!(civil_from_days(EPOCH_2024 / 86_400 + 59), (2024, 2, 29));
        assert_eq!(civil_from_days(EPOCH_2024 / 86_400 + 60), (2024, 3, 1));
    }

    #[test]
    fn civil_is_consecutive() {
        // Walk day by day from 2024 to 2100 and check calendar succession.
        let dim = |y: i64, m: u32| match m {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            _ => 28,
        };
        let (mut y, mut m, mut d) = (2024i64, 1u32, 1u32);
        let start = EPOCH_2024 / 86_400;
        for z in start..start + 366 * 80 {
            assert_eq!(civil_from_days(z), (y, m, d));
            d += 1;
            if d > dim(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn timestamp_formatting() {
        assert_eq!(timestamp_string(0), "2024-01-01 00:00:00+00");
        assert_eq!(timestamp_string(10), "2024-01-01 00:00:10+00");
        assert_eq!(timestamp_string(3_599), "2024-01-01 00:59:59+00");
        assert_eq!(timestamp_string(86_399), "2024-01-01 23:59:59+00");
        assert_eq!(timestamp_string(86_400), "2024-01-02 00:00:00+00");
        // rollover into February
        assert_eq!(timestamp_string(31 * 86_400 - 10), "2024-01-31 23:59:50+00");
        assert_eq!(timestamp_string(31 * 86_400), "2024-02-01 00:00:00+00");
        // leap day
        assert_eq!(timestamp_string(59 * 86_400), "2024-02-29 00:00:00+00");
        assert_eq!(timestamp_string(60 * 86_400), "2024-03-01 00:00:00+00");
        // rollover into 2025 (2024 has 366 days)
        assert_eq!(timestamp_string(366 * 86_400 - 10), "2024-12-31 23:59:50+00");
        assert_eq!(timestamp_string(366 * 86_400), "2025-01-01 00:00:00+00");
        assert_eq!(timestamp_string(MAX_OFFSET_SECS), "9999-12-31 23:59:59+00");
    }

    #[test]
    fn float_formatting_round_trips() {
        let mut buf = Vec::new();
        for v in [0.0, 100.0, 1.0, 42.123456789012345, 1e-7, 5e-324, 99.99999999999999] {
            buf.clear();
            push_f64(&mut buf, v);
            let s = std::str::from_utf8(&buf).unwrap();
            assert!(!s.contains(['e', 'E']), "{s}");
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
        }
        buf.clear();
        push_f64(&mut buf, 0.0);
        assert_eq!(buf, b"0");
        buf.clear();
        push_f64(&mut buf, 100.0);
        assert_eq!(buf, b"100");
    }

    #[test]
    fn float_formatting_matches_std_display() {
        let mut rng = Xoshiro256::from_seed(99);
        let mut buf = Vec::new();
        let mut ties = 0;
        let mut check = |v: f64, buf: &mut Vec<u8>| {
            buf.clear();
            push_f64(buf, v);
            let (ours, std) = (std::str::from_utf8(buf).unwrap(), format!("{v}"));
            assert_eq!(ours.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{ours}");
            assert_eq!(ours.len(), std.len(), "{ours} vs {std}");
            if ours != std {
                // exact tie between two shortest candidates: only the last digit differs
                let n = ours.len() - 1;
                assert_eq!(ours[..n], std[..n], "{ours} vs {std}");
                let d = |s: &str| s.as_bytes()[n] as i32;
                assert_eq!((d(ours) - d(&std)).abs(), 1, "{ours} vs {std}");
                ties += 1;
            }
        };
        for v in [
            0.0,
            -0.0,
            100.0,
            1.0,
            0.1,
            1e-5,
            1e-6,
            1.5e-7,
            1e15,
            1e16,
            1.25e17,
            1e300,
            -1e-300,
            58.0,
            999999999999999.0,
            1e15 - 0.5,
            7e14,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            123456789.0,
            -42.5,
        ] {
            check(v, &mut buf);
        }
        for _ in 0..200_000 {
            // values in [0, 100], and arbitrary finite bit patterns
            check(rng.next_f64() * 100.0, &mut buf);
            let v = f64::from_bits(rng.next_u64());
            if v.is_finite() {
                check(v, &mut buf);
            }
            // exactly representable with few bits: tie candidates
            check((rng.next_u64() % (100 << 15)) as f64 / 32768.0, &mut buf);
            let tiny = rng.next_f64() * 1e-9;
            check(tiny, &mut buf);
        }
        // Ties do occur (mostly for values with few significant bits); all round-trip.
        assert!(ties > 0);
    }

    #[test]
    fn escaping() {
        let mut out = Vec::new();
        copy_escape("a\\b\tc\nd\re", &mut out);
        assert_eq!(out, b"a\\\\b\\tc\\nd\\re");
        out.clear();
        copy_escape("us-east-1a", &mut out);
        assert_eq!(out, b"us-east-1a");
    }

    #[test]
    fn tags_come_from_tsbs_lists() {
        for id in 0..2000 {
            let h = Host::new(DEFAULT_SEED, id, Walk::Normal);
            let t = h.tags();
            assert_eq!(t[0], format!("host_{id}"));
            let (_, dcs) = REGIONS.iter().find(|(r, _)| *r == t[1]).expect("region");
            assert!(dcs.contains(&t[2].as_str()));
            assert!(t[3].parse::<u64>().unwrap() < RACK_CHOICES);
            assert!(OSES.contains(&t[4].as_str()));
            assert!(ARCHES.contains(&t[5].as_str()));
            assert!(TEAMS.contains(&t[6].as_str()));
            assert!(t[7].parse::<u64>().unwrap() < SERVICE_CHOICES);
            assert!(t[8].parse::<u64>().unwrap() < SERVICE_VERSION_CHOICES);
            assert!(SERVICE_ENVIRONMENTS.contains(&t[9].as_str()));
        }
    }

    #[test]
    fn walk_is_clamped_and_steps_are_bounded() {
        for walk in [Walk::Normal, Walk::Uniform] {
            let mut prev: Option<[f64; 10]> = None;
            let mut hit_bounds = false;
            for vals in host_series(5, 3, walk).take(50_000) {
                for (i, &v) in vals.iter().enumerate() {
                    assert!((0.0..=100.0).contains(&v));
                    hit_bounds |= v == 0.0 || v == 100.0;
                    if let Some(p) = prev {
                        let d = (v - p[i]).abs();
                        match walk {
                            Walk::Uniform => assert!(d <= 1.0),
                            Walk::Normal => assert!(d < 8.0),
                        }
                    }
                }
                prev = Some(vals);
            }
            assert!(hit_bounds, "{walk:?}: a long walk should touch a bound");
        }
    }

    #[test]
    fn validate_limits() {
        let mut c = Config { rows: 10, hosts: 0, ..Config::default() };
        assert!(c.validate().is_err());
        c.rows = 0;
        assert!(c.validate().is_ok());
        c = Config { rows: u64::MAX, hosts: 1, ..Config::default() };
        assert!(c.validate().is_err());
    }
}
