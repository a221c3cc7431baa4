//! Run-length encoding for every kind.
//!
//! Fixed-width values (ints, and floats by bit pattern): `run_count: u32 LE`, a count-less
//! FOR block of the run values' bit patterns (as i64), a FOR block of the run lengths.
//! Bytes: `run_count: u32 LE`, the run values in plain byte layout (`plain::encode_bytes`),
//! a FOR block of the run lengths. Chosen for sorted or slowly changing columns such as
//! a timestamp shared by many rows.

use super::base::{CorruptData, Fixed, Scratch, MAX_DECODED_BYTES};
use super::bitpack;
use super::codec::{Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, ALL_KINDS};
use super::plain;
use crate::storage::format::fallible;

/// Encoded size for `runs` runs whose value bit patterns (as i64) span `vmin..=vmax` and
/// whose lengths span `lmin..=lmax`.
pub fn encoded_len(runs: usize, vmin: i64, vmax: i64, lmin: u32, lmax: u32) -> usize {
    4 + bitpack::for_encoded_len(runs, vmin, vmax) + bitpack::for_encoded_len(runs, lmin as i64, lmax as i64)
}

/// Encoded size for byte runs; `run_data_len` is the total length of the run values.
pub fn bytes_encoded_len(
    runs: usize,
    vlen_min: u32,
    vlen_max: u32,
    run_data_len: usize,
    lmin: u32,
    lmax: u32,
) -> usize {
    4 + plain::bytes_encoded_len(runs, vlen_min, vlen_max, run_data_len)
        + bitpack::for_encoded_len(runs, lmin as i64, lmax as i64)
}

/// Splits `len` items into maximal runs, `same(i)` telling whether item i equals item
/// i-1; yields `(start, length)`.
fn runs(len: usize, same: impl Fn(usize) -> bool + Clone) -> impl Iterator<Item = (usize, usize)> + Clone {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= len {
            return None;
        }
        let mut end = start + 1;
        while end < len && same(end) {
            end += 1;
        }
        let run = (start, end - start);
        start = end;
        Some(run)
    })
}

fn bounds(it: impl Iterator<Item = i64>) -> (i64, i64) {
    it.fold(None, |acc: Option<(i64, i64)>, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
    .unwrap_or((0, 0))
}

fn write_lengths(it: impl Iterator<Item = (usize, usize)> + Clone, n: usize, out: &mut Vec<u8>) {
    let lens = it.map(|(_, l)| l as i64);
    let (lo, hi) = bounds(lens.clone());
    bitpack::encode_for_iter(lo, hi, lens, n, out);
}

pub fn encode<T: Fixed>(values: &[T], out: &mut Vec<u8>) {
    let it = runs(values.len(), |i| values[i].to_bits64() == values[i - 1].to_bits64());
    let n = it.clone().count();
    out.extend_from_slice(&(n as u32).to_le_bytes());
    let vals = it.clone().map(|(s, _)| values[s].to_bits64() as i64);
    let (lo, hi) = bounds(vals.clone());
    bitpack::encode_for_iter(lo, hi, vals, n, out);
    write_lengths(it, n, out);
}

/// The run count at the front of a payload of `count` values, checked.
fn read_run_count(input: &[u8], count: usize) -> Result<usize, CorruptData> {
    let head = input.get(..4).ok_or(CorruptData("run count truncated"))?;
    let runs = u32::from_le_bytes(head.try_into().expect("4 bytes")) as usize;
    if runs > count {
        return Err(CorruptData("more runs than values"));
    }
    Ok(runs)
}

/// Calls `emit(run_index, run_length)` for each run; checks the lengths add up to `count`.
fn decode_lengths(
    input: &[u8],
    runs: usize,
    count: usize,
    mut emit: impl FnMut(usize, usize) -> Result<(), CorruptData>,
) -> Result<usize, CorruptData> {
    let mut filled = 0usize;
    let mut j = 0usize;
    let mut err = None;
    let used = bitpack::decode_for(input, runs, |l| {
        if err.is_some() {
            return;
        }
        // Each run is non-empty and the runs never overshoot the value count.
        if l < 1 || l as u64 > (count - filled) as u64 {
            err = Some(CorruptData("run length out of range"));
            return;
        }
        if let Err(e) = emit(j, l as usize) {
            err = Some(e);
        }
        filled += l as usize;
        j += 1;
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    if filled != count {
        return Err(CorruptData("run lengths do not add up"));
    }
    Ok(used)
}

pub fn decode<T: Fixed>(
    input: &[u8],
    count: usize,
    out: &mut Vec<T>,
    scratch: &mut Scratch,
) -> Result<usize, CorruptData> {
    let runs = read_run_count(input, count)?;
    let vals = &mut scratch.u64s;
    vals.clear();
    vals.reserve(runs);
    let mut pos = 4;
    pos += bitpack::decode_for(&input[pos..], runs, |v| vals.push(v as u64))?;
    // Runs fill their slots in place: an extend per run (orders of four line items
    // make 500 runs a vector) checks the capacity and loops per run.
    let start = out.len();
    out.resize(start + count, T::default());
    let mut at = start;
    pos += decode_lengths(&input[pos..], runs, count, |j, l| {
        out[at..at + l].fill(T::from_bits64(vals[j]));
        at += l;
        Ok(())
    })?;
    Ok(pos)
}

/// The runs of `count` fixed-width values, when there are at most `max_runs`: each
/// run's value bit pattern into `values`, and where it ends (the index after its last
/// value) into `ends`. Returns whether it had so few runs (if not, nothing is read).
pub fn decode_runs(
    input: &[u8],
    count: usize,
    max_runs: usize,
    values: &mut Vec<u64>,
    ends: &mut Vec<u32>,
) -> Result<bool, CorruptData> {
    let runs = read_run_count(input, count)?;
    if runs > max_runs {
        return Ok(false);
    }
    values.clear();
    ends.clear();
    let mut pos = 4;
    pos += bitpack::decode_for(&input[pos..], runs, |v| values.push(v as u64))?;
    let mut end = 0u32;
    decode_lengths(&input[pos..], runs, count, |_, l| {
        end += l as u32;
        ends.push(end);
        Ok(())
    })?;
    Ok(true)
}

/// Encodes the byte strings given as `offsets` (count + 1 entries) into `data`.
pub fn encode_bytes(offsets: &[u32], data: &[u8], out: &mut Vec<u8>) {
    let count = offsets.len().saturating_sub(1);
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
    let it = runs(count, |i| value(i) == value(i - 1));
    let n = it.clone().count();
    out.extend_from_slice(&(n as u32).to_le_bytes());
    // Run values in plain layout: lengths, then bytes.
    let lens = it.clone().map(|(s, _)| (offsets[s + 1] - offsets[s]) as i64);
    let (lo, hi) = bounds(lens.clone());
    bitpack::encode_for_iter(lo, hi, lens, n, out);
    for (s, _) in it.clone() {
        out.extend_from_slice(value(s));
    }
    write_lengths(it, n, out);
}

/// Decodes `count` byte strings, appending bytes to `data` and end offsets to `ends`
/// (as `plain::decode_bytes` does).
pub fn decode_bytes(
    input: &[u8],
    count: usize,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    scratch: &mut Scratch,
) -> Result<usize, CorruptData> {
    let runs = read_run_count(input, count)?;
    let (vends, vdata) = (&mut scratch.u32s, &mut scratch.bytes);
    vends.clear();
    vends.push(0);
    vdata.clear();
    let mut pos = 4;
    pos += plain::decode_bytes(&input[pos..], runs, vends, vdata, &mut scratch.lens)?;
    ends.reserve(count);
    pos += decode_lengths(&input[pos..], runs, count, |j, l| {
        let v = &vdata[vends[j] as usize..vends[j + 1] as usize];
        // Check before expanding: a long run of a long value could be huge.
        if (data.len() as u64) + (v.len() as u64) * (l as u64) > MAX_DECODED_BYTES as u64 {
            return Err(CorruptData("decoded byte values too large"));
        }
        // Copy the value once, then the copies made so far: log2(l) copies instead of
        // one (small, not inlined) copy per row.
        let (start, len, total) = (data.len(), v.len(), v.len() * l);
        if total > 0 {
            fallible::reserve(data, total);
            data.extend_from_slice(v);
            while data.len() - start < total {
                let have = data.len() - start;
                data.extend_from_within(start..start + have.min(total - have));
            }
        }
        ends.extend((1..=l).map(|k| (start + k * len) as u32));
        Ok(())
    })?;
    Ok(pos)
}

/// Decodes `count` byte strings as a dictionary whose entries are the runs' values (in
/// `ends` after a leading 0, and `data`) and whose codes (`codes`, one per value) name
/// each value's run: no value is copied per row, and a reader that keeps dictionaries
/// (filters, group keys) tests or hashes a value once per run. Entries may repeat.
pub fn decode_bytes_codes(
    input: &[u8],
    count: usize,
    codes: &mut Vec<u32>,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    lens: &mut Vec<u32>,
) -> Result<usize, CorruptData> {
    let runs = read_run_count(input, count)?;
    ends.clear();
    ends.push(0);
    data.clear();
    codes.clear();
    codes.reserve(count);
    let mut pos = 4;
    pos += plain::decode_bytes(&input[pos..], runs, ends, data, lens)?;
    pos += decode_lengths(&input[pos..], runs, count, |j, l| {
        codes.extend(std::iter::repeat_n(j as u32, l));
        Ok(())
    })?;
    Ok(pos)
}

/// The codec table's entry: every kind.
pub static RLE: Codec = Codec {
    kinds: ALL_KINDS,
    tier: Tier::Cheap,
    decode_ns: 0.15,
    estimate: |a, _| {
        // Each run costs ~4.6 ns to expand (a decoded run of one value is slower than a
        // fixed-width field): long runs are almost free, no runs are slow.
        let runs = match a {
            Analysis::Int(_, s) => s.runs.count,
            Analysis::Float32(_, s) | Analysis::Float64(_, s) => s.runs.count,
            Analysis::Bytes { stats: s, .. } => s.runs.count,
        };
        let per_value = 0.15 + 4.6 * runs as f32 / a.values().len().max(1) as f32;
        Estimate::size(match a {
            Analysis::Int(_, s) => encoded_len(s.runs.count, s.min, s.max, s.runs.min_len, s.runs.max_len),
            Analysis::Float32(_, s) | Analysis::Float64(_, s) => {
                encoded_len(s.runs.count, s.min, s.max, s.runs.min_len, s.runs.max_len)
            }
            Analysis::Bytes { stats: s, .. } => bytes_encoded_len(
                s.runs.count,
                s.min_len,
                s.max_len,
                s.run_data,
                s.runs.min_len,
                s.runs.max_len,
            ),
        })
        .map(|e| e.decoding(per_value))
    },
    encode: |values, _, out| match values {
        VectorValues::Int(v) => encode(v, out),
        VectorValues::Float32(v) => encode(v, out),
        VectorValues::Float64(v) => encode(v, out),
        VectorValues::Bytes { offsets, data } => encode_bytes(offsets, data, out),
    },
    decode: |input, count, out, scratch| match out {
        Output::Int(v) => decode(input, count, v, scratch),
        Output::Float32(v) => decode(input, count, v, scratch),
        Output::Float64(v) => decode(input, count, v, scratch),
        Output::Bytes { offsets, data } => decode_bytes(input, count, offsets, data, scratch),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    fn stats<T: Fixed>(values: &[T]) -> usize {
        let it: Vec<_> = runs(values.len(), |i| values[i].to_bits64() == values[i - 1].to_bits64()).collect();
        let (vlo, vhi) = bounds(it.iter().map(|&(s, _)| values[s].to_bits64() as i64));
        let (llo, lhi) = bounds(it.iter().map(|&(_, l)| l as i64));
        encoded_len(it.len(), vlo, vhi, llo as u32, lhi as u32)
    }

    fn rt<T: Fixed>(values: &[T]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(values, &mut buf);
        assert_eq!(buf.len(), stats(values));
        let mut got = Vec::new();
        let mut s = Scratch::default();
        assert_eq!(decode(&buf, values.len(), &mut got, &mut s), Ok(buf.len()));
        assert!(bits_eq(&got, values));
        assert_truncations_fail(&buf, |b| {
            decode::<T>(b, values.len(), &mut Vec::new(), &mut Scratch::default())
        });
        buf
    }

    fn dec_bytes(buf: &[u8], count: usize) -> Result<(usize, Vec<u32>, Vec<u8>), CorruptData> {
        let mut ends = vec![0];
        let mut data = Vec::new();
        let used = decode_bytes(buf, count, &mut ends, &mut data, &mut Scratch::default())?;
        Ok((used, ends, data))
    }

    fn rt_bytes(values: &[Vec<u8>]) -> Vec<u8> {
        let (offsets, data) = to_offsets(values);
        let mut buf = Vec::new();
        encode_bytes(&offsets, &data, &mut buf);
        let (used, ends, got) = dec_bytes(&buf, values.len()).unwrap();
        assert_eq!((used, ends, got), (buf.len(), offsets, data));
        assert_truncations_fail(&buf, |b| dec_bytes(b, values.len()).map(|r| r.0));
        buf
    }

    #[test]
    fn edge_cases() {
        rt::<i64>(&[]);
        rt(&[1i64]);
        assert_eq!(rt(&vec![9i64; 65536]).len(), 4 + 9 + 9);
        rt(&[i64::MIN, i64::MIN, i64::MAX, i64::MAX, i64::MIN]);
        // NaNs with different payloads are different runs; -0.0 differs from 0.0.
        let nan2 = f64::from_bits(0x7FF8_0000_0000_0002);
        rt(&[f64::NAN, f64::NAN, nan2, -0.0, 0.0, 0.0, f64::INFINITY]);
        rt(&[f32::NAN, -0.0f32, -0.0, f32::from_bits(1)]);
        rt_bytes(&[]);
        rt_bytes(&[vec![], vec![], b"x".to_vec()]);
        assert!(rt_bytes(&vec![b"abc".to_vec(); 2048]).len() < 40);
    }

    #[test]
    fn run_lengths_must_add_up() {
        let mut buf = Vec::new();
        encode(&[1i64, 1, 2], &mut buf);
        let mut s = Scratch::default();
        assert!(decode::<i64>(&buf, 4, &mut Vec::new(), &mut s).is_err());
        assert!(decode::<i64>(&buf, 2, &mut Vec::new(), &mut s).is_err());
    }

    #[test]
    fn expansion_bomb_is_rejected() {
        // One 1 MiB value repeated 65536 times would decode to 64 GiB.
        let big = vec![b'a'; 1 << 20];
        let mut buf = Vec::new();
        encode_bytes(&[0, big.len() as u32], &big, &mut buf);
        // Rewrite the single run length from 1 to 65536.
        let n = buf.len();
        buf[n - 9..n - 1].copy_from_slice(&65536i64.to_le_bytes());
        assert_eq!(dec_bytes(&buf, 65536).map(|r| r.0), Err(CorruptData("decoded byte values too large")));
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_fixed(i in vec_with_repeats(any_i64(), 200),
                      f in vec_with_repeats(any_f64(), 200),
                      g in vec_with_repeats(any_f32(), 200),
                      fl in flips()) {
            let b = rt(&i);
            flip_never_panics(&b, &fl, |b| decode::<i64>(b, i.len(), &mut Vec::new(), &mut Scratch::default()));
            let b = rt(&f);
            flip_never_panics(&b, &fl, |b| decode::<f64>(b, f.len(), &mut Vec::new(), &mut Scratch::default()));
            rt(&g);
        }

        #[test]
        fn prop_bytes(values in any_bytes_vec(100), fl in flips()) {
            let buf = rt_bytes(&values);
            flip_never_panics(&buf, &fl, |b| dec_bytes(b, values.len()).map(|r| r.0));
        }
    }
}
