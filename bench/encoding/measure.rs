//! Size measurements on TSBS-like data (cpu-only use case: 400 hosts, one row per host
//! every 10 s, metrics are bounded random walks with full-precision doubles). Prints a
//! bytes/value table and asserts the sizes the encoder must reach.
//!
//! `tsbs_normal_walk_sizes` re-implements the metric model of `bench/tsbs-gen` (initial
//! state uniform in [0, 100), then steps from N(0, 1), clamped to [0, 100]; the first
//! reading emits the initial state) with its own PRNG, so the numbers match the
//! generator's output statistically without depending on the binary.
//!
//! This file is a module of `src/storage/format/encoding` (`mod measure`): its size
//! bounds run with the unit tests; the timing (`tsbs_like_speed`) only with the `measure`
//! feature, so the plain unit tests do not pay for it. Run everything with
//! `cargo test --release --lib --features measure encoding::measure -- --nocapture`
//! (see bench/README.md).

use super::base::PhysicalKind;
use super::codec::{EncodingGoal, VectorValues};
use super::decoded::DecodedVector;
use super::vector::{decode_vector, encode_vector, CompressionPolicy, EncodedVectorInfo};
use super::{alp, bitpack, bytesplit, compress, delta, dictionary, gorilla, lagdelta, plain, rle};
#[cfg(feature = "measure")]
use std::time::Instant;

const HOSTS: usize = 400;
const VECTOR: usize = 2048;
const VECTORS: usize = 20;
const ROWS: usize = VECTOR * VECTORS;

/// splitmix64: tiny, deterministic, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A pair of independent N(0, 1) samples (Marsaglia's polar method, like tsbs-gen).
    fn normal_pair(&mut self) -> (f64, f64) {
        loop {
            let u = 2.0 * self.unit() - 1.0;
            let v = 2.0 * self.unit() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                let f = (-2.0 * s.ln() / s).sqrt();
                return (u * f, v * f);
            }
        }
    }
}

/// One metric column: per host a random walk clamped to [0, 100], rows ordered by time
/// with all hosts per timestamp (like TSBS `cpu-only`).
fn metric_column(seed: u64, step: f64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut state: Vec<f64> = (0..HOSTS).map(|_| rng.unit() * 100.0).collect();
    let mut out = Vec::with_capacity(ROWS);
    while out.len() < ROWS {
        for v in state.iter_mut() {
            *v = (*v + (rng.unit() * 2.0 - 1.0) * step).clamp(0.0, 100.0);
            out.push(*v);
        }
    }
    out.truncate(ROWS);
    out
}

/// One metric column as `bench/tsbs-gen` makes it (TSBS `CWD(ND(0,1), 0, 100, U*100)`):
/// per host an initial state uniform in [0, 100), emitted by the first reading, then
/// N(0, 1) steps clamped to [0, 100]; `rows` rows, time-major (all hosts per timestamp).
fn normal_walk_column(seed: u64, rows: usize) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut state: Vec<f64> = (0..HOSTS).map(|_| rng.unit() * 100.0).collect();
    let mut out: Vec<f64> = state.iter().copied().take(rows).collect();
    let mut spare = None;
    while out.len() < rows {
        for v in state.iter_mut() {
            let step = match spare.take() {
                Some(s) => s,
                None => {
                    let (a, b) = rng.normal_pair();
                    spare = Some(b);
                    a
                }
            };
            *v = (*v + step).clamp(0.0, 100.0);
            out.push(*v);
        }
    }
    out.truncate(rows);
    out
}

fn timestamp_column() -> Vec<i64> {
    let start = 1_451_606_400_000_000i64; // 2016-01-01 in microseconds
    (0..ROWS).map(|i| start + (i / HOSTS) as i64 * 10_000_000).collect()
}

fn hostname_column() -> (Vec<u32>, Vec<u8>) {
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for i in 0..ROWS {
        data.extend_from_slice(format!("host_{}", i % HOSTS).as_bytes());
        offsets.push(data.len() as u32);
    }
    (offsets, data)
}

#[derive(Default)]
struct Row {
    name: String,
    bytes: usize,
}

/// Accumulates, over all vectors, the size of one way of storing them. Rows named
/// `  chosen: ...` count vectors instead (what the encoder picked).
struct Table {
    title: String,
    rows: Vec<Row>,
    /// Values per row of the table (the whole column).
    values: usize,
}

impl Table {
    fn new(title: &str) -> Self {
        Self::with_values(title, ROWS)
    }
    fn with_values(title: &str, values: usize) -> Self {
        Self { title: title.into(), rows: Vec::new(), values }
    }
    fn add(&mut self, name: &str, bytes: usize) {
        match self.rows.iter_mut().find(|r| r.name == name) {
            Some(r) => r.bytes += bytes,
            None => self.rows.push(Row { name: name.into(), bytes }),
        }
    }
    fn per_value(&self, name: &str) -> f64 {
        let r = self.rows.iter().find(|r| r.name == name).expect("measured");
        r.bytes as f64 / self.values as f64
    }
    fn print(&self) {
        let n = self.values;
        eprintln!("\n{} ({} values, {} vectors of {})", self.title, n, n.div_ceil(VECTOR), VECTOR);
        for r in &self.rows {
            if r.name.starts_with("  chosen") {
                eprintln!("  {} ({} vectors)", r.name, r.bytes);
            } else {
                eprintln!("  {:<38} {:>8.3} bytes/value", r.name, r.bytes as f64 / n as f64);
            }
        }
    }
}

fn lz4_len(b: &[u8]) -> usize {
    let mut out = Vec::new();
    compress::compress_lz4(b, &mut out);
    out.len()
}

fn zstd_len(b: &[u8]) -> usize {
    let mut out = Vec::new();
    assert!(compress::compress_zstd(b, 3, &mut out));
    out.len()
}

/// Payload sizes of a byte buffer: raw, +lz4, +zstd.
fn add3(t: &mut Table, name: &str, b: &[u8]) {
    t.add(name, b.len());
    t.add(&format!("{name} + lz4"), lz4_len(b));
    t.add(&format!("{name} + zstd"), zstd_len(b));
}

/// The vector layer's choice for the scan goal (the default), or for `size`.
fn chosen(t: &mut Table, info: EncodedVectorInfo, buf: &[u8], kind: PhysicalKind) {
    chosen_for(t, info, buf, kind, "");
}

fn chosen_for(t: &mut Table, info: EncodedVectorInfo, buf: &[u8], kind: PhysicalKind, goal: &str) {
    assert_eq!(info.stored_bytes, buf.len());
    let mut out = DecodedVector::default();
    assert_eq!(decode_vector(buf, kind, &mut out), Ok(buf.len()));
    t.add(&format!("encode_vector{goal} (incl. 24 B header)"), buf.len());
    t.add(&format!("  chosen{goal}: {:?} + {:?}", info.encoding, info.compression), 1);
}

fn metric_table(title: &str, col: &[f64]) -> Table {
    let mut t = Table::with_values(title, col.len());
    let policy = CompressionPolicy::default();
    for v in col.chunks(VECTOR) {
        let mut b = Vec::new();
        plain::encode(v, &mut b);
        add3(&mut t, "plain", &b);
        b.clear();
        bytesplit::encode(v, &mut b);
        t.add("bytesplit + lz4", lz4_len(&b));
        t.add("bytesplit + zstd", zstd_len(&b));
        t.add("gorilla", gorilla::encoded_len(v));
        b.clear();
        let p = alp::choose(v).map(|c| c.0).unwrap_or(alp::AlpParams { e: 0, f: 0 });
        alp::encode(v, p, &mut b);
        add3(&mut t, "alp (decimal)", &b);
        b.clear();
        alp::encode_rd(v, &alp::choose_rd(v).0, &mut b);
        add3(&mut t, "alp_rd", &b);
        b.clear();
        lagdelta::encode(v, &lagdelta::choose(v, 1).0, &mut b);
        t.add("lagdelta, lag 1", b.len());
        b.clear();
        let lag = lagdelta::detect_lag(v);
        t.add(&format!("  chosen: detected lag {lag}"), 1);
        let (params, size) = lagdelta::choose(v, lag);
        lagdelta::encode(v, &params, &mut b);
        assert_eq!(b.len(), size);
        add3(&mut t, "lagdelta, detected lag", &b);
        b.clear();
        let info = encode_vector(v.len() as u32, None, VectorValues::Float64(v), &policy, &mut b);
        chosen(&mut t, info, &b, PhysicalKind::Float64);
        b.clear();
        let size = CompressionPolicy::for_goal(EncodingGoal::Size);
        let info = encode_vector(v.len() as u32, None, VectorValues::Float64(v), &size, &mut b);
        chosen_for(&mut t, info, &b, PhysicalKind::Float64, " for size");
    }
    t
}

#[test]
fn tsbs_like_sizes() {
    // Metric column, full precision.
    let metric = metric_column(42, 1.0);
    let mt = metric_table("metric (random walk in [0,100], full-precision f64)", &metric);
    mt.print();
    // The same rounded to 2 decimals, as many real exports store them.
    let rounded: Vec<f64> = metric.iter().map(|v| (v * 100.0).round() / 100.0).collect();
    let rt = metric_table("metric rounded to 0.01", &rounded);
    rt.print();

    // Timestamps: each repeated for the 400 hosts, 10 s apart, in microseconds.
    let ts = timestamp_column();
    let mut tt = Table::new("timestamp (us, 400 rows per value, +10 s)");
    let policy = CompressionPolicy::default();
    for v in ts.chunks(VECTOR) {
        let mut b = Vec::new();
        plain::encode(v, &mut b);
        add3(&mut tt, "plain", &b);
        b.clear();
        bitpack::encode_for(v, &mut b);
        tt.add("frame of reference", b.len());
        b.clear();
        delta::encode(v, &mut b);
        tt.add("delta", b.len());
        b.clear();
        delta::encode_delta2(v, &mut b);
        tt.add("delta-of-delta", b.len());
        b.clear();
        rle::encode(v, &mut b);
        tt.add("rle", b.len());
        b.clear();
        let info = encode_vector(v.len() as u32, None, VectorValues::Int(v), &policy, &mut b);
        chosen(&mut tt, info, &b, PhysicalKind::Int);
    }
    tt.print();

    // Hostnames host_0..host_399 cycling.
    let (offsets, data) = hostname_column();
    let mut ht = Table::new("hostname (host_0..host_399 cycling)");
    for w in offsets.windows(VECTOR + 1).step_by(VECTOR) {
        let mut b = Vec::new();
        plain::encode_bytes(w, &data, &mut b);
        add3(&mut ht, "plain", &b);
        b.clear();
        dictionary::encode_bytes(w, &data, &mut b);
        add3(&mut ht, "dictionary", &b);
        b.clear();
        let info = encode_vector(
            VECTOR as u32,
            None,
            VectorValues::Bytes { offsets: w, data: &data },
            &policy,
            &mut b,
        );
        chosen(&mut ht, info, &b, PhysicalKind::Bytes);
    }
    ht.print();

    let m = mt.per_value("encode_vector (incl. 24 B header)");
    let r = rt.per_value("encode_vector (incl. 24 B header)");
    let t = tt.per_value("encode_vector (incl. 24 B header)");
    let h = ht.per_value("encode_vector (incl. 24 B header)");
    let m_size = mt.per_value("encode_vector for size (incl. 24 B header)");
    assert!(m <= 7.0, "metric: {m} bytes/value");
    assert!(m_size <= 6.5, "metric for size: {m_size} bytes/value");
    assert!(r <= 3.0, "rounded metric: {r} bytes/value");
    assert!(t <= 0.05, "timestamps: {t} bytes/value");
    // Cycling hostnames stay a dictionary (+ zstd), though plain + zstd stores the
    // cycle in half the bytes: the dictionary decodes per code and its entries' Datums
    // are made once (`vector::dictionary_decode_credit`).
    assert!(h <= 0.55, "hostnames: {h} bytes/value");
}

#[test]
fn tsbs_normal_walk_sizes() {
    // 512 readings per host, like `tsbs-gen --rows 204800`: the walks spread and hit the
    // clamps over time, so a short prefix would not be representative.
    let rows = 512 * HOSTS;
    let mut all = Table::with_values("all ten metric columns", 0);
    for seed in 1..=10u64 {
        let col = normal_walk_column(seed, rows);
        let t = metric_table(&format!("metric {seed} (tsbs-gen model: N(0,1) walk in [0,100])"), &col);
        if seed == 1 {
            t.print();
        }
        for r in &t.rows {
            all.add(&r.name, r.bytes);
        }
        all.values += col.len();
        // The lag is the host count in every vector; for size lag-delta wins everywhere,
        // for scans ALP_rd in FastLanes blocks.
        let count = |name: &str| t.rows.iter().find(|r| r.name == name).map(|r| r.bytes);
        assert_eq!(count(&format!("  chosen: detected lag {HOSTS}")), Some(rows / VECTOR));
        assert_eq!(count("  chosen for size: LagDelta + None"), Some(rows / VECTOR));
        // (A vector that crosses a clamp may do better otherwise.)
        let lanes = count("  chosen: AlpRdLanes + None").unwrap_or(0);
        assert!(
            lanes * 100 >= rows / VECTOR * 95,
            "{:?}",
            t.rows.iter().map(|r| &r.name).collect::<Vec<_>>()
        );
    }
    all.print();
    let m = all.per_value("encode_vector (incl. 24 B header)");
    let m_size = all.per_value("encode_vector for size (incl. 24 B header)");
    // ALP_rd's cut and dictionary from every value's count (from a sample of 256 they
    // stored 6.957 bytes a value here).
    assert!(m <= 6.93, "metric: {m} bytes/value");
    assert!(m_size <= 6.5, "metric for size: {m_size} bytes/value");
}

/// Encode/decode throughput of `encode_vector` (meaningful in release builds only).
#[cfg(feature = "measure")]
#[test]
fn tsbs_like_speed() {
    let metric = normal_walk_column(7, ROWS);
    let ts = timestamp_column();
    let (offsets, data) = hostname_column();
    let policy = CompressionPolicy::default();
    let mut buf = Vec::new();
    let mut out = DecodedVector::default();
    let time = |name: &str,
                enc: &mut dyn FnMut(&mut Vec<u8>),
                kind: PhysicalKind,
                buf: &mut Vec<u8>,
                out: &mut DecodedVector| {
        buf.clear();
        let t0 = Instant::now();
        enc(buf);
        let enc_t = t0.elapsed();
        let t1 = Instant::now();
        let mut pos = 0;
        while pos < buf.len() {
            pos += decode_vector(&buf[pos..], kind, out).expect("decodes");
        }
        let dec_t = t1.elapsed();
        eprintln!(
            "  {name:<10} encode {:>7.1} ns/value, decode {:>6.1} ns/value",
            enc_t.as_nanos() as f64 / ROWS as f64,
            dec_t.as_nanos() as f64 / ROWS as f64
        );
    };
    eprintln!(
        "\nencode_vector / decode_vector speed ({} build)",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    time(
        "metric",
        &mut |b| {
            for v in metric.chunks(VECTOR) {
                encode_vector(v.len() as u32, None, VectorValues::Float64(v), &policy, b);
            }
        },
        PhysicalKind::Float64,
        &mut buf,
        &mut out,
    );
    time(
        "timestamp",
        &mut |b| {
            for v in ts.chunks(VECTOR) {
                encode_vector(v.len() as u32, None, VectorValues::Int(v), &policy, b);
            }
        },
        PhysicalKind::Int,
        &mut buf,
        &mut out,
    );
    time(
        "hostname",
        &mut |b| {
            for w in offsets.windows(VECTOR + 1).step_by(VECTOR) {
                encode_vector(
                    VECTOR as u32,
                    None,
                    VectorValues::Bytes { offsets: w, data: &data },
                    &policy,
                    b,
                );
            }
        },
        PhysicalKind::Bytes,
        &mut buf,
        &mut out,
    );
}

/// Per codec and column of the TSBS-like data: stored bytes per value and decode
/// throughput (values per ns, one core) of the codec's own `decode`, without general
/// compression or the vector frame. `bench/calibrate.py` prints these lines (prefix
/// `decode:`), and BENCHMARKS.md keeps them.
#[cfg(feature = "measure")]
#[test]
fn decode_throughput() {
    use super::base::Scratch;
    use super::codec::{Analysis, Output};
    use super::table::CODECS;
    let rows = 512 * HOSTS;
    let metric = normal_walk_column(3, rows);
    let rounded: Vec<f64> = metric.iter().map(|v| (v * 100.0).round() / 100.0).collect();
    let ts: Vec<i64> =
        (0..rows as i64).map(|i| 1_451_606_400_000_000 + (i / HOSTS as i64) * 10_000_000).collect();
    // A counter per host (TSBS's usage counters, ids): small steps, interleaved.
    let ids: Vec<i64> = (0..rows as i64).map(|i| (i % HOSTS as i64) * 1000 + i / HOSTS as i64).collect();
    let hostnames: Vec<String> = (0..rows).map(|i| format!("host_{}", i % HOSTS)).collect();
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for h in &hostnames {
        data.extend_from_slice(h.as_bytes());
        offsets.push(data.len() as u32);
    }
    let columns: Vec<(&str, Vec<VectorValues>)> = vec![
        ("metric f64 (walk)", metric.chunks(VECTOR).map(VectorValues::Float64).collect()),
        ("metric f64 (0.01)", rounded.chunks(VECTOR).map(VectorValues::Float64).collect()),
        ("timestamp i64", ts.chunks(VECTOR).map(VectorValues::Int).collect()),
        ("counter i64", ids.chunks(VECTOR).map(VectorValues::Int).collect()),
        (
            "hostname bytes",
            offsets
                .windows(VECTOR + 1)
                .step_by(VECTOR)
                .map(|w| VectorValues::Bytes { offsets: w, data: &data })
                .collect(),
        ),
    ];
    eprintln!("\ndecode throughput per codec (release build, one core; values/ns, bytes/value)");
    let mut scratch = Scratch::default();
    for (name, vectors) in &columns {
        for &id in CODECS {
            let codec = id.codec();
            if !codec.applies_to(vectors[0].kind()) {
                continue;
            }
            let mut payloads = Vec::new();
            for &v in vectors {
                let Some(e) = (codec.estimate)(&Analysis::of(v), usize::MAX) else { break };
                let mut b = Vec::new();
                (codec.encode)(v, &*e.plan, &mut b);
                payloads.push((b, v.len()));
            }
            if payloads.len() < vectors.len() {
                continue;
            }
            let values: usize = payloads.iter().map(|p| p.1).sum();
            let bytes: usize = payloads.iter().map(|p| p.0.len()).sum();
            let (mut ints, mut floats, mut offs, mut bytes_out) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = Instant::now();
                for (p, n) in &payloads {
                    ints.clear();
                    floats.clear();
                    offs.clear();
                    bytes_out.clear();
                    let out = match vectors[0].kind() {
                        PhysicalKind::Int => Output::Int(&mut ints),
                        PhysicalKind::Bytes => Output::Bytes { offsets: &mut offs, data: &mut bytes_out },
                        _ => Output::Float64(&mut floats),
                    };
                    (codec.decode)(p, *n, out, &mut scratch).expect("decodes");
                }
                best = best.min(t.elapsed().as_nanos() as f64);
            }
            eprintln!(
                "decode: {name:<18} {:<14} {:>6.2} values/ns {:>6.2} bytes/value",
                format!("{id:?}"),
                values as f64 / best,
                bytes as f64 / values as f64
            );
        }
    }
}
