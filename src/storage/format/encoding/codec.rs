//! What a codec is: the function table each codec file ends with, and the types that
//! pass through it. The table of all codecs, with their stored ids, is `table`.
//!
//! A codec is tried on a vector in two steps, as DuckDB's analyze and compress: its
//! `estimate` reads the values and the statistics of the chooser's one pass over them
//! (`Analysis`) and returns the encoded size with a plan (the parameters it found, or a
//! dictionary it built); the chooser picks the smallest, and that codec's `encode`
//! writes the values with its plan. Each function handles a whole vector, so a call
//! through the table happens once per vector and every per-value loop stays a
//! monomorphic loop inside the codec.

use std::any::Any;

use super::base::{CorruptData, Fixed, PhysicalKind, Scratch};

/// One codec's function table.
pub struct Codec {
    /// The value kinds the encoding exists for; a vector header that pairs it with
    /// another kind is corrupt.
    pub kinds: &'static [PhysicalKind],
    /// When the chooser tries it.
    pub tier: Tier,
    /// Estimated nanoseconds to decode one value on one core: what the chooser weighs
    /// against size when the table's goal is scan speed (`EncodingGoal::Scan`). The
    /// figures are the `decode:` lines of `bench/encoding/measure.rs` on TSBS-like
    /// columns (`bench/calibrate.py` prints them; BENCHMARKS.md keeps them), rounded.
    pub decode_ns: f32,
    /// The encoded size of the analysed values and the plan `encode` follows, or `None`
    /// when the codec cannot store them in fewer than `bound` bytes (it may give up
    /// early) or does not fit them.
    pub estimate: fn(&Analysis<'_>, bound: usize) -> Option<Estimate>,
    /// Appends the values, following the plan of this codec's `estimate` (or `&()` for
    /// a codec whose estimate plans nothing).
    pub encode: fn(VectorValues<'_>, plan: &dyn Any, &mut Vec<u8>),
    /// Appends `count` values (`count > 0`) decoded from the front of the payload and
    /// returns the bytes consumed.
    pub decode: fn(&[u8], count: usize, Output<'_>, &mut Scratch) -> Result<usize, CorruptData>,
    /// How single rows are read (index fetches).
    pub open: Open,
}

impl Codec {
    pub fn applies_to(&self, kind: PhysicalKind) -> bool {
        self.kinds.contains(&kind)
    }
}

pub const ALL_KINDS: &[PhysicalKind] =
    &[PhysicalKind::Int, PhysicalKind::Float32, PhysicalKind::Float64, PhysicalKind::Bytes];
pub const NUMBERS: &[PhysicalKind] = &[PhysicalKind::Int, PhysicalKind::Float32, PhysicalKind::Float64];
pub const INTS: &[PhysicalKind] = &[PhysicalKind::Int];
pub const FLOATS: &[PhysicalKind] = &[PhysicalKind::Float32, PhysicalKind::Float64];

/// When the chooser tries a codec. Within a tier, the table's order breaks ties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// On every vector: sizes from the statistics pass or a small sample.
    Cheap,
    /// Only when the cheap codecs leave more than 60% of the plain size: the codecs for
    /// full-precision floats, which do not pay off on (mostly) decimal values and cost a
    /// pass or a sort to estimate.
    Costly,
    /// Last, bounded by the best size so far: a dictionary is built only while it can
    /// still win.
    Bounded,
    /// Never chosen by size: a layout made for general compression, which the vector
    /// layer tries as an alternative.
    ForCompression,
}

/// What the writer's choice of encoding serves: the table option `compress_for`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EncodingGoal {
    /// Scans: a codec's size plus its decode time, at `SCAN_BYTES_PER_NS`.
    #[default]
    Scan,
    /// Storage: the smallest encoding, however slow to decode.
    Size,
    /// Speed of writing, for a small row group (a trickle insert's) that VACUUM merges
    /// and encodes again: the cheap codecs only (no dictionary), weighed as for scans.
    Quick,
}

/// Bytes of storage per value that one nanosecond of decoding per value is worth when
/// scans are the goal: a codec 1 ns/value faster to decode wins if it stores at most
/// half a byte more per value. On TSBS's full-precision metrics that picks ALP_rd in
/// FastLanes blocks (6.93 bytes/value, 0.75 ns) over lag-delta (6.32, 5.6 ns): 10% more
/// storage, 6× the decode speed; integers and decimals keep the smallest codec, which
/// is also fast there.
pub const SCAN_BYTES_PER_NS: f64 = 0.5;

impl EncodingGoal {
    /// Bytes per value a nanosecond of decoding per value is worth for `kind`. Byte
    /// strings are chosen by size: their decode time goes with their bytes and the
    /// general compression the vector layer weighs (`vector`).
    pub fn bytes_per_ns(self, kind: PhysicalKind) -> f64 {
        match (self, kind) {
            (
                EncodingGoal::Scan | EncodingGoal::Quick,
                PhysicalKind::Int | PhysicalKind::Float32 | PhysicalKind::Float64,
            ) => SCAN_BYTES_PER_NS,
            _ => 0.0,
        }
    }
}

/// A codec's estimated size and what its `encode` needs to reach it.
pub struct Estimate {
    pub size: usize,
    pub plan: Box<dyn Any>,
    /// Nanoseconds per value to decode these values, when the codec can tell better
    /// than its `Codec::decode_ns` (never less: the chooser bounds the estimate by it).
    pub decode_ns: Option<f32>,
}

impl Estimate {
    /// A size that needs no plan (`Box<()>` does not allocate).
    pub fn size(size: usize) -> Option<Self> {
        Some(Self { size, plan: Box::new(()), decode_ns: None })
    }

    pub fn planned<P: Any>(size: usize, plan: P) -> Option<Self> {
        Some(Self { size, plan: Box::new(plan), decode_ns: None })
    }

    /// The estimate with its own decode time per value.
    pub fn decoding(self, ns: f32) -> Self {
        Self { decode_ns: Some(ns), ..self }
    }
}

/// The plan of type `P` that the codec's own estimate made.
pub fn plan_of<P: Any>(plan: &dyn Any) -> &P {
    plan.downcast_ref().expect("the plan comes from the same codec's estimate")
}

/// How a codec's vectors are opened for single-row reads.
#[derive(Debug, Clone, Copy)]
pub enum Open {
    /// Decoded whole when opened.
    Decoded,
    /// Fixed-width values read where they are stored: checks that the (decompressed)
    /// payload of `len` bytes, starting with `head` (its first `IN_PLACE_HEAD` bytes, or
    /// all if fewer), holds `count` values of the kind and says where value i is. Only
    /// the head is read: a vector read in place for a few values is not copied whole.
    InPlace(InPlaceCheck),
}

/// A codec's check of a payload read in place (`Open::InPlace`).
pub type InPlaceCheck =
    fn(PhysicalKind, head: &[u8], len: usize, count: usize) -> Result<InPlace, CorruptData>;

/// Bytes of a payload read in place that its codec's check sees (`Open::InPlace`).
pub const IN_PLACE_HEAD: usize = 16;

/// Where value i of a payload read in place is.
#[derive(Debug, Clone, Copy)]
pub enum InPlace {
    /// `width` little-endian bytes at `i * width`.
    Bytes { width: usize },
    /// `min +` the `width`-bit field i (LSB first) after a header of `skip` bytes.
    Bits { skip: usize, min: u64, width: u8 },
}

/// The non-null values of one vector, dense, in row order.
#[derive(Debug, Clone, Copy)]
pub enum VectorValues<'a> {
    Int(&'a [i64]),
    Float32(&'a [f32]),
    Float64(&'a [f64]),
    /// `offsets.len() == count + 1`; value i is `data[offsets[i]..offsets[i + 1]]`.
    Bytes {
        offsets: &'a [u32],
        data: &'a [u8],
    },
}

impl VectorValues<'_> {
    pub fn kind(&self) -> PhysicalKind {
        match self {
            Self::Int(_) => PhysicalKind::Int,
            Self::Float32(_) => PhysicalKind::Float32,
            Self::Float64(_) => PhysicalKind::Float64,
            Self::Bytes { .. } => PhysicalKind::Bytes,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Int(v) => v.len(),
            Self::Float32(v) => v.len(),
            Self::Float64(v) => v.len(),
            Self::Bytes { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the values in plain form: 8 or 4 bytes per fixed-width value, the total
    /// value length for byte strings.
    pub fn plain_bytes(&self) -> usize {
        match self {
            Self::Int(v) => v.len() * 8,
            Self::Float32(v) => v.len() * 4,
            Self::Float64(v) => v.len() * 8,
            Self::Bytes { offsets, .. } => match (offsets.first(), offsets.last()) {
                (Some(&a), Some(&b)) => (b - a) as usize,
                _ => 0,
            },
        }
    }
}

/// Where a codec's `decode` appends values.
pub enum Output<'a> {
    Int(&'a mut Vec<i64>),
    Float32(&'a mut Vec<f32>),
    Float64(&'a mut Vec<f64>),
    /// End offsets (after those already there) and bytes.
    Bytes {
        offsets: &'a mut Vec<u32>,
        data: &'a mut Vec<u8>,
    },
}

/// The error a codec returns for a kind it does not handle (the vector header was
/// checked against `Codec::kinds`, so only a bug reaches it).
pub const WRONG_KIND: CorruptData = CorruptData("encoding does not apply to the value kind");

/// Non-empty values with the statistics of one pass over them.
pub enum Analysis<'a> {
    Int(&'a [i64], IntStats),
    Float32(&'a [f32], FloatStats),
    Float64(&'a [f64], FloatStats),
    Bytes { offsets: &'a [u32], data: &'a [u8], stats: BytesStats },
}

/// Run statistics: count and the range of run lengths.
#[derive(Debug, Clone, Copy)]
pub struct Runs {
    pub count: usize,
    pub min_len: u32,
    pub max_len: u32,
}

impl Runs {
    fn new() -> Self {
        Self { count: 0, min_len: u32::MAX, max_len: 0 }
    }

    #[inline]
    fn close(&mut self, len: u32) {
        self.count += 1;
        self.min_len = self.min_len.min(len);
        self.max_len = self.max_len.max(len);
    }
}

/// Range, range of deltas, range of deltas of deltas (0..=0 when there are none), runs.
#[derive(Debug, Clone, Copy)]
pub struct IntStats {
    pub min: i64,
    pub max: i64,
    pub dmin: i64,
    pub dmax: i64,
    pub ddmin: i64,
    pub ddmax: i64,
    pub runs: Runs,
}

/// Range of the bit patterns (as i64) and runs of equal bit patterns.
#[derive(Debug, Clone, Copy)]
pub struct FloatStats {
    pub min: i64,
    pub max: i64,
    pub runs: Runs,
}

/// Range of the value lengths, total length, runs of equal values and the length of
/// one value per run.
#[derive(Debug, Clone, Copy)]
pub struct BytesStats {
    pub min_len: u32,
    pub max_len: u32,
    pub data_len: usize,
    pub runs: Runs,
    pub run_data: usize,
}

impl<'a> Analysis<'a> {
    /// One pass over `values` (not empty) for the statistics every cheap estimate reads.
    pub fn of(values: VectorValues<'a>) -> Self {
        match values {
            VectorValues::Int(v) => Analysis::Int(v, int_stats(v)),
            VectorValues::Float32(v) => Analysis::Float32(v, float_stats(v)),
            VectorValues::Float64(v) => Analysis::Float64(v, float_stats(v)),
            VectorValues::Bytes { offsets, data } => {
                Analysis::Bytes { offsets, data, stats: bytes_stats(offsets, data) }
            }
        }
    }

    pub fn values(&self) -> VectorValues<'a> {
        match *self {
            Analysis::Int(v, _) => VectorValues::Int(v),
            Analysis::Float32(v, _) => VectorValues::Float32(v),
            Analysis::Float64(v, _) => VectorValues::Float64(v),
            Analysis::Bytes { offsets, data, .. } => VectorValues::Bytes { offsets, data },
        }
    }
}

fn int_stats(v: &[i64]) -> IntStats {
    // One pass for the exact sizes of FOR, delta, delta-of-delta and RLE.
    let n = v.len();
    let (mut min, mut max) = (v[0], v[0]);
    let (mut dmin, mut dmax) = (i64::MAX, i64::MIN);
    let (mut ddmin, mut ddmax) = (i64::MAX, i64::MIN);
    let mut runs = Runs::new();
    let mut run_len = 1u32;
    let mut prev_d = 0i64;
    for i in 1..n {
        let (x, p) = (v[i], v[i - 1]);
        min = min.min(x);
        max = max.max(x);
        let d = x.wrapping_sub(p);
        dmin = dmin.min(d);
        dmax = dmax.max(d);
        if i >= 2 {
            let dd = d.wrapping_sub(prev_d);
            ddmin = ddmin.min(dd);
            ddmax = ddmax.max(dd);
        }
        prev_d = d;
        if x == p {
            run_len += 1;
        } else {
            runs.close(run_len);
            run_len = 1;
        }
    }
    runs.close(run_len);
    let fix = |lo: i64, hi: i64| if lo > hi { (0, 0) } else { (lo, hi) };
    let (dmin, dmax) = fix(dmin, dmax);
    let (ddmin, ddmax) = fix(ddmin, ddmax);
    IntStats { min, max, dmin, dmax, ddmin, ddmax, runs }
}

fn float_stats<T: Fixed>(v: &[T]) -> FloatStats {
    let first = v[0].to_bits64() as i64;
    let (mut min, mut max) = (first, first);
    let mut runs = Runs::new();
    let mut run_len = 1u32;
    for i in 1..v.len() {
        let x = v[i].to_bits64();
        min = min.min(x as i64);
        max = max.max(x as i64);
        if x == v[i - 1].to_bits64() {
            run_len += 1;
        } else {
            runs.close(run_len);
            run_len = 1;
        }
    }
    runs.close(run_len);
    FloatStats { min, max, runs }
}

fn bytes_stats(offsets: &[u32], data: &[u8]) -> BytesStats {
    let n = offsets.len() - 1;
    let len = |i: usize| offsets[i + 1] - offsets[i];
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
    let (mut min_len, mut max_len) = (len(0), len(0));
    let mut runs = Runs::new();
    let mut run_len = 1u32;
    let mut run_data = len(0) as usize;
    for i in 1..n {
        let l = len(i);
        min_len = min_len.min(l);
        max_len = max_len.max(l);
        // Compare lengths first: most differing neighbours differ in length too.
        if l == len(i - 1) && value(i) == value(i - 1) {
            run_len += 1;
        } else {
            runs.close(run_len);
            run_len = 1;
            run_data += l as usize;
        }
    }
    runs.close(run_len);
    let data_len = (offsets[n] - offsets[0]) as usize;
    BytesStats { min_len, max_len, data_len, runs, run_data }
}
