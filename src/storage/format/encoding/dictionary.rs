//! Dictionary encoding: the distinct values once, then a bit-packed code per value.
//!
//! Fixed-width values (ints, floats by bit pattern): `dict_len: u32 LE`, a count-less
//! FOR block of the distinct bit patterns (as i64, in first-occurrence order), a FOR
//! block of the codes. Bytes: `dict_len: u32 LE`, the distinct values in plain byte
//! layout, a FOR block of the codes. The writer stores byte strings in byte order, so
//! vectors holding the same values store the same dictionary, which readers recognise
//! (ColumnarAgg numbers a key's entries once for such vectors); readers accept any
//! order.
//!
//! Building the dictionary is the expensive part (one hash lookup per value), so
//! `build*` take the size to beat and give up as soon as the dictionary cannot beat it.

use std::any::Any;

use hashbrown::HashMap;

use super::base::{CorruptData, Fixed, Scratch, MAX_DECODED_BYTES};
use super::bitpack::{self, bits_needed, packed_len, FOR_HEADER_LEN};
use super::codec::{plan_of, Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, ALL_KINDS};
use super::decoded::Dictionary;
use super::plain;
use crate::storage::format::fallible;

fn codes_len(count: usize, dict_len: usize) -> usize {
    FOR_HEADER_LEN + packed_len(count, bits_needed(dict_len.saturating_sub(1) as u64))
}

/// A dictionary built for fixed-width values.
#[derive(Debug)]
pub struct FixedDict<T> {
    pub values: Vec<T>,
    pub codes: Vec<u32>,
    min: i64,
    max: i64,
}

impl<T: Fixed> FixedDict<T> {
    pub fn encoded_len(&self) -> usize {
        4 + bitpack::for_encoded_len(self.values.len(), self.min, self.max)
            + codes_len(self.codes.len(), self.values.len())
    }
}

/// Values sampled by the quick distinctness check.
const SAMPLE: usize = 128;

/// True when an evenly spaced sample of a large vector has no repeated value. A
/// dictionary only wins with at most about n/2 distinct values, and then a sample of
/// 128 almost surely repeats one (birthday bound), so this skips the hash pass for
/// unique-ish columns (ids, full-precision measurements) at the cost of a small sort.
fn sample_all_distinct<K: Ord>(n: usize, key: impl Fn(usize) -> K) -> bool {
    if n < 8 * SAMPLE {
        return false;
    }
    let mut sample: Vec<K> = (0..SAMPLE).map(|i| key(i * n / SAMPLE)).collect();
    sample.sort_unstable();
    sample.windows(2).all(|w| w[0] != w[1])
}

/// Builds the dictionary of `values`, or returns `None` as soon as its encoding would
/// take `give_up_at` bytes or more (or a sample shows the values are nearly unique).
pub fn build<T: Fixed>(values: &[T], give_up_at: usize) -> Option<FixedDict<T>> {
    let n = values.len();
    if give_up_at != usize::MAX && sample_all_distinct(n, |i| values[i].to_bits64()) {
        return None;
    }
    // Sized for every value distinct: growing the table (rehashing each entry at each
    // doubling) cost as much as the inserts, and a vector has at most a few thousand.
    let mut map: HashMap<u64, u32> = HashMap::with_capacity(n);
    let mut dict = FixedDict { values: Vec::new(), codes: Vec::with_capacity(n), min: 0, max: 0 };
    for &v in values {
        let bits = v.to_bits64();
        let next = dict.values.len() as u32;
        let code = *map.entry(bits).or_insert(next);
        if code == next {
            let b = bits as i64;
            if next == 0 {
                (dict.min, dict.max) = (b, b);
            } else {
                (dict.min, dict.max) = (dict.min.min(b), dict.max.max(b));
            }
            dict.values.push(v);
            // The size only grows with more entries (wider codes, wider range), so the
            // size so far, with all codes at the current width, is a lower bound.
            let d = dict.values.len();
            let lower = 4 + bitpack::for_encoded_len(d, dict.min, dict.max) + codes_len(n, d);
            if lower >= give_up_at {
                return None;
            }
        }
        dict.codes.push(code);
    }
    Some(dict)
}

pub fn encode_built<T: Fixed>(dict: &FixedDict<T>, out: &mut Vec<u8>) {
    let d = dict.values.len();
    out.extend_from_slice(&(d as u32).to_le_bytes());
    let vals = dict.values.iter().map(|v| v.to_bits64() as i64);
    bitpack::encode_for_iter(dict.min, dict.max, vals, d, out);
    let codes = dict.codes.iter().map(|&c| c as i64);
    bitpack::encode_for_iter(0, d.saturating_sub(1) as i64, codes, dict.codes.len(), out);
}

pub fn encode<T: Fixed>(values: &[T], out: &mut Vec<u8>) {
    let dict = build(values, usize::MAX).expect("no size limit");
    encode_built(&dict, out);
}

fn read_dict_len(input: &[u8], count: usize) -> Result<usize, CorruptData> {
    let head = input.get(..4).ok_or(CorruptData("dictionary size truncated"))?;
    let d = u32::from_le_bytes(head.try_into().expect("4 bytes")) as usize;
    if d > count {
        return Err(CorruptData("dictionary larger than the vector"));
    }
    Ok(d)
}

/// Reads the dictionary's entries of a vector of `count` values into
/// `scratch.u64s`; returns where the codes start.
fn read_entries(input: &[u8], count: usize, scratch: &mut Scratch) -> Result<usize, CorruptData> {
    let d = read_dict_len(input, count)?;
    let dict = &mut scratch.u64s;
    dict.clear();
    dict.reserve(d);
    Ok(4 + bitpack::decode_for(&input[4..], d, |v| dict.push(v as u64))?)
}

pub fn decode<T: Fixed>(
    input: &[u8],
    count: usize,
    out: &mut Vec<T>,
    scratch: &mut Scratch,
) -> Result<usize, CorruptData> {
    let mut pos = read_entries(input, count, scratch)?;
    let dict = &scratch.u64s[..];
    // Codes decoded branch-free and looked up as they are: a code out of range gives
    // a filler and marks the vector corrupt.
    let bad = std::cell::Cell::new(false);
    pos += bitpack::decode_for_map(&input[pos..], count, out, |c| match dict.get(c as usize) {
        Some(&v) if c >= 0 => T::from_bits64(v),
        _ => {
            bad.set(true);
            T::default()
        }
    })?;
    if bad.get() {
        return Err(CorruptData("dictionary code out of range"));
    }
    Ok(pos)
}

/// `decode` of integers for a caller that needs only the values at `rows` (ascending,
/// each below `count`): calls `f(row, value)` for those alone, each code read where it
/// lies. Returns the bytes the whole vector takes, as `decode`.
pub fn decode_ints_at(
    input: &[u8],
    count: usize,
    rows: &[u32],
    scratch: &mut Scratch,
    mut f: impl FnMut(usize, i64),
) -> Result<usize, CorruptData> {
    let mut pos = read_entries(input, count, scratch)?;
    let dict = &scratch.u64s[..];
    let mut bad = false;
    pos += bitpack::decode_for_at(&input[pos..], count, rows, |r, c| match dict.get(c as usize) {
        Some(&v) if c >= 0 => f(r, v as i64),
        _ => bad = true,
    })?;
    if bad {
        return Err(CorruptData("dictionary code out of range"));
    }
    Ok(pos)
}

/// A dictionary built for byte strings; entries are ranges of the input's data.
#[derive(Debug)]
pub struct BytesDict {
    pub entries: Vec<(u32, u32)>,
    pub codes: Vec<u32>,
    data_len: usize,
    min_len: u32,
    max_len: u32,
}

impl BytesDict {
    pub fn encoded_len(&self) -> usize {
        4 + plain::bytes_encoded_len(self.entries.len(), self.min_len, self.max_len, self.data_len)
            + codes_len(self.codes.len(), self.entries.len())
    }
}

/// Builds the dictionary of the byte strings `offsets`/`data`, or `None` as soon as its
/// encoding would take `give_up_at` bytes or more (or a sample shows the values are
/// nearly unique).
pub fn build_bytes<'a>(offsets: &[u32], data: &'a [u8], give_up_at: usize) -> Option<BytesDict> {
    let n = offsets.len().saturating_sub(1);
    let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
    if give_up_at != usize::MAX && sample_all_distinct(n, value) {
        return None;
    }
    // Sized for every value distinct, as in `build`.
    let mut map: HashMap<&'a [u8], u32> = HashMap::with_capacity(n);
    let mut dict = BytesDict {
        entries: Vec::new(),
        codes: Vec::with_capacity(n),
        data_len: 0,
        min_len: u32::MAX,
        max_len: 0,
    };
    for i in 0..n {
        let v = value(i);
        let next = dict.entries.len() as u32;
        let code = *map.entry(v).or_insert(next);
        if code == next {
            dict.entries.push((offsets[i], offsets[i + 1]));
            dict.data_len += v.len();
            dict.min_len = dict.min_len.min(v.len() as u32);
            dict.max_len = dict.max_len.max(v.len() as u32);
            let d = dict.entries.len();
            let lower =
                4 + plain::bytes_encoded_len(d, dict.min_len, dict.max_len, dict.data_len) + codes_len(n, d);
            if lower >= give_up_at {
                return None;
            }
        }
        dict.codes.push(code);
    }
    if dict.entries.is_empty() {
        dict.min_len = 0;
    }
    sort_entries(&mut dict, data);
    Some(dict)
}

/// Puts a dictionary's entries in byte order and renumbers its codes.
fn sort_entries(dict: &mut BytesDict, data: &[u8]) {
    let entry = |&(start, end): &(u32, u32)| &data[start as usize..end as usize];
    let mut order: Vec<u32> = (0..dict.entries.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| entry(&dict.entries[a as usize]).cmp(entry(&dict.entries[b as usize])));
    let mut renumber = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        renumber[old as usize] = new as u32;
    }
    dict.entries = order.iter().map(|&o| dict.entries[o as usize]).collect();
    dict.codes.iter_mut().for_each(|c| *c = renumber[*c as usize]);
}

/// Writes a dictionary built from byte strings of `data`.
pub fn encode_bytes_built(dict: &BytesDict, data: &[u8], out: &mut Vec<u8>) {
    let d = dict.entries.len();
    out.extend_from_slice(&(d as u32).to_le_bytes());
    let lens = dict.entries.iter().map(|&(start, end)| (end - start) as i64);
    bitpack::encode_for_iter(dict.min_len as i64, dict.max_len as i64, lens, d, out);
    for &(start, end) in &dict.entries {
        out.extend_from_slice(&data[start as usize..end as usize]);
    }
    let codes = dict.codes.iter().map(|&c| c as i64);
    bitpack::encode_for_iter(0, d.saturating_sub(1) as i64, codes, dict.codes.len(), out);
}

pub fn encode_bytes(offsets: &[u32], data: &[u8], out: &mut Vec<u8>) {
    let dict = build_bytes(offsets, data, usize::MAX).expect("no size limit");
    encode_bytes_built(&dict, data, out);
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
    // Codes first: the total size is then known (and checked: a few long entries
    // repeated could be huge) and reserved once.
    let Scratch { codes, u32s: dends, bytes: ddata, lens, .. } = scratch;
    let pos = decode_bytes_codes(input, count, codes, dends, ddata, lens)?;
    let total: u64 = codes.iter().map(|&c| (dends[c as usize + 1] - dends[c as usize]) as u64).sum();
    if data.len() as u64 + total > MAX_DECODED_BYTES as u64 {
        return Err(CorruptData("decoded byte values too large"));
    }
    ends.reserve(count);
    fallible::reserve(data, total as usize + SMALL);
    // Entries up to SMALL bytes are copied as SMALL bytes, a fixed-size copy the
    // compiler inlines (a call to memcpy per value cost more than the value): the
    // dictionary is padded so every read stays inside it, and `data` has SMALL bytes of
    // spare capacity past the last value.
    ddata.extend_from_slice(&[0; SMALL]);
    for &c in codes.iter() {
        let (start, end) = (dends[c as usize] as usize, dends[c as usize + 1] as usize);
        let len = end - start;
        if len <= SMALL {
            let at = data.len();
            // SAFETY: `start + SMALL <= ddata.len()` (padding); `at + SMALL <=
            // data.capacity()`, as the values before this one and this one's `len`
            // fit in `total`, and SMALL was reserved beyond it; the `len` bytes set
            // are initialized by the copy.
            unsafe {
                std::ptr::copy_nonoverlapping(ddata.as_ptr().add(start), data.as_mut_ptr().add(at), SMALL);
                data.set_len(at + len);
            }
        } else {
            data.extend_from_slice(&ddata[start..end]);
        }
        ends.push(data.len() as u32);
    }
    Ok(pos)
}

/// The entries of a dictionary of `count` byte strings (end offsets after a leading 0,
/// and bytes): how many, and the bytes they take from the front of `input`.
pub(super) fn decode_entries(
    input: &[u8],
    count: usize,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    lens: &mut Vec<u32>,
) -> Result<(usize, usize), CorruptData> {
    let d = read_dict_len(input, count)?;
    ends.clear();
    ends.push(0);
    data.clear();
    Ok((d, 4 + plain::decode_bytes(&input[4..], d, ends, data, lens)?))
}

/// The length of the entries at the front of a byte-string dictionary payload of `count`
/// values (what follows is the codes), or None if it does not parse as one.
pub fn entries_len(payload: &[u8], count: usize) -> Option<usize> {
    let (mut ends, mut data, mut lens) = (Vec::new(), Vec::new(), Vec::new());
    decode_entries(payload, count, &mut ends, &mut data, &mut lens).ok().map(|(_, len)| len)
}

/// Decodes `count` byte strings as their dictionary: the entries (end offsets after a
/// leading 0, and bytes) and a code per value, without copying any value out.
pub fn decode_bytes_codes(
    input: &[u8],
    count: usize,
    codes: &mut Vec<u32>,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    lens: &mut Vec<u32>,
) -> Result<usize, CorruptData> {
    let (d, pos) = decode_entries(input, count, ends, data, lens)?;
    Ok(pos + decode_codes(&input[pos..], count, d, codes)?)
}

/// `decode_bytes_codes` into `d`, keeping its entries when they were decoded from the
/// same bytes as `input`'s (`d.source`): vectors of a column often store one
/// dictionary byte for byte, and comparing its few kilobytes costs a fraction of
/// decoding them again.
pub fn decode_bytes_codes_into(
    input: &[u8],
    count: usize,
    d: &mut Dictionary,
    lens: &mut Vec<u32>,
) -> Result<usize, CorruptData> {
    let known = d.source.len();
    let (entries, pos) = if known > 0 && d.len() <= count && input.get(..known) == Some(d.source.as_slice()) {
        (d.len(), known)
    } else {
        d.source.clear();
        let (entries, pos) = decode_entries(input, count, &mut d.offsets, &mut d.data, lens)?;
        fallible::extend_from_slice(&mut d.source, &input[..pos]);
        (entries, pos)
    };
    Ok(pos + decode_codes(&input[pos..], count, entries, &mut d.codes)?)
}

/// The `count` codes at the front of `input` of a dictionary of `d` entries, into
/// `codes`; returns the bytes they took.
fn decode_codes(input: &[u8], count: usize, d: usize, codes: &mut Vec<u32>) -> Result<usize, CorruptData> {
    codes.clear();
    // This runs for every value of every dictionary vector a scan reads: a code out of
    // range becomes u32::MAX (never one: d <= count <= MAX_VECTOR_ROWS), found in one
    // pass after the branch-free decode.
    let pos = bitpack::decode_for_map(input, count, codes, |c| {
        if (0..d as i64).contains(&c) {
            c as u32
        } else {
            u32::MAX
        }
    })?;
    if codes.contains(&u32::MAX) {
        return Err(CorruptData("dictionary code out of range"));
    }
    Ok(pos)
}

/// `decode_bytes_codes` for a caller that reads only rows `rows` (ascending): the
/// entries are decoded, and of the codes only those rows' (the others are left 0).
pub fn decode_bytes_codes_at(
    input: &[u8],
    count: usize,
    rows: &[u32],
    codes: &mut Vec<u32>,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    lens: &mut Vec<u32>,
) -> Result<usize, CorruptData> {
    let (d, mut pos) = decode_entries(input, count, ends, data, lens)?;
    codes.clear();
    codes.resize(count, 0);
    let mut bad = false;
    pos += bitpack::decode_for_at(&input[pos..], count, rows, |r, c| {
        bad |= !(0..d as i64).contains(&c);
        codes[r] = c as u32;
    })?;
    if bad {
        return Err(CorruptData("dictionary code out of range"));
    }
    Ok(pos)
}

/// Values up to this many bytes are copied with one fixed-size copy.
const SMALL: usize = 16;

/// The codec table's entry: every kind; built last, only while it can beat the best
/// size so far, and the built dictionary is what `encode` writes.
pub static DICTIONARY: Codec = Codec {
    kinds: ALL_KINDS,
    tier: Tier::Bounded,
    decode_ns: 1.0,
    estimate: |a, bound| {
        match *a {
            Analysis::Int(v, _) => build(v, bound).map(|d| (d.encoded_len(), Box::new(d) as Box<dyn Any>)),
            Analysis::Float32(v, _) => {
                build(v, bound).map(|d| (d.encoded_len(), Box::new(d) as Box<dyn Any>))
            }
            Analysis::Float64(v, _) => {
                build(v, bound).map(|d| (d.encoded_len(), Box::new(d) as Box<dyn Any>))
            }
            Analysis::Bytes { offsets, data, .. } => {
                build_bytes(offsets, data, bound).map(|d| (d.encoded_len(), Box::new(d) as Box<dyn Any>))
            }
        }
        .map(|(size, plan)| Estimate { size, plan, decode_ns: None })
    },
    encode: |values, plan, out| match values {
        VectorValues::Int(_) => encode_built::<i64>(plan_of(plan), out),
        VectorValues::Float32(_) => encode_built::<f32>(plan_of(plan), out),
        VectorValues::Float64(_) => encode_built::<f64>(plan_of(plan), out),
        VectorValues::Bytes { data, .. } => encode_bytes_built(plan_of(plan), data, out),
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

    #[test]
    fn byte_entries_are_stored_in_byte_order_so_equal_value_sets_store_one_dictionary() {
        let vector = |start: usize| -> (Vec<u32>, Vec<u8>) {
            let mut offsets = vec![0u32];
            let mut data = Vec::new();
            for i in start..start + 300 {
                data.extend_from_slice(format!("host_{}", i % 40).as_bytes());
                offsets.push(data.len() as u32);
            }
            (offsets, data)
        };
        let mut dictionaries = Vec::new();
        for start in [0, 17] {
            let (offsets, data) = vector(start);
            let mut out = Vec::new();
            encode_bytes(&offsets, &data, &mut out);
            let (mut codes, mut ends, mut entries, mut lens) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            decode_bytes_codes(&out, 300, &mut codes, &mut ends, &mut entries, &mut lens).unwrap();
            let entry = |e: usize| &entries[ends[e] as usize..ends[e + 1] as usize];
            assert!((1..40).all(|e| entry(e - 1) < entry(e)));
            for (i, &c) in codes.iter().enumerate() {
                assert_eq!(entry(c as usize), &data[offsets[i] as usize..offsets[i + 1] as usize]);
            }
            dictionaries.push((ends.clone(), entries.clone()));
        }
        assert_eq!(dictionaries[0], dictionaries[1]);
    }

    /// Decoding into one dictionary vector after vector keeps its entries while the
    /// stored entries are the same bytes, decodes them again when they differ, and
    /// always gives what decoding from scratch gives; a vector smaller than the kept
    /// entries, or a corrupt code, is still an error.
    #[test]
    fn a_dictionary_decoded_into_keeps_entries_stored_alike() {
        let encoded = |hosts: &[usize]| {
            let mut offsets = vec![0u32];
            let mut data = Vec::new();
            for h in hosts {
                data.extend_from_slice(format!("host_{h}").as_bytes());
                offsets.push(data.len() as u32);
            }
            let mut out = Vec::new();
            encode_bytes(&offsets, &data, &mut out);
            out
        };
        let same_a: Vec<usize> = (0..300).map(|i| i * 7 % 40).collect();
        let same_b: Vec<usize> = (0..300).map(|i| i * 11 % 40).collect();
        let other: Vec<usize> = (0..300).map(|i| i % 41).collect();
        let mut d = Dictionary::default();
        let mut lens = Vec::new();
        for (hosts, kept) in [(&same_a, false), (&same_b, true), (&other, false), (&same_a, false)] {
            let bytes = encoded(hosts);
            let before = d.source.clone();
            assert_eq!(decode_bytes_codes_into(&bytes, hosts.len(), &mut d, &mut lens), Ok(bytes.len()));
            assert_eq!(d.source == before, kept);
            let (mut codes, mut ends, mut entries) = (Vec::new(), Vec::new(), Vec::new());
            decode_bytes_codes(&bytes, hosts.len(), &mut codes, &mut ends, &mut entries, &mut lens).unwrap();
            assert_eq!((&d.codes, &d.offsets, &d.data), (&codes, &ends, &entries));
        }
        // The same 40 entries kept, said to be a vector of 9 values: an error, and
        // nothing kept after it.
        let bytes = encoded(&same_a);
        assert!(decode_bytes_codes_into(&bytes, 9, &mut d, &mut lens).is_err());
        assert!(d.source.is_empty());
        // A code past the entries, behind entries the dictionary keeps.
        assert_eq!(decode_bytes_codes_into(&bytes, same_a.len(), &mut d, &mut lens), Ok(bytes.len()));
        let mut bad_code = bytes.clone();
        let last = bad_code.len() - 1;
        bad_code[last] = 0xff;
        assert!(decode_bytes_codes_into(&bad_code, same_a.len(), &mut d, &mut lens).is_err());
        let small = encoded(&(0..10).collect::<Vec<_>>());
        assert_eq!(decode_bytes_codes_into(&small, 10, &mut d, &mut lens), Ok(small.len()));
        assert_eq!(d.len(), 10);
    }

    #[test]
    fn integers_of_chosen_rows_match_the_whole_vector() {
        let values: Vec<i64> = (0..2048).map(|i| [i64::MIN, -7, 0, 2400, i64::MAX][i * 7919 % 5]).collect();
        let mut buf = Vec::new();
        encode(&values, &mut buf);
        let rows: Vec<u32> = (0..2048).filter(|r| r % 13 == 2).chain([2047]).collect();
        let mut got = Vec::new();
        let used = decode_ints_at(&buf, 2048, &rows, &mut Scratch::default(), |r, v| got.push((r, v)));
        assert_eq!(used, Ok(buf.len()));
        assert_eq!(got, rows.iter().map(|&r| (r as usize, values[r as usize])).collect::<Vec<_>>());
        let none = |b: &[u8], rows: &[u32]| decode_ints_at(b, 2048, rows, &mut Scratch::default(), |_, _| {});
        assert!(none(&buf, &[2048]).is_err());
        assert!(none(&buf[..buf.len() - 1], &rows).is_err());
        // A code past the dictionary: the dictionary's size says 2 of its 5 values.
        let mut bad = buf.clone();
        bad[..4].copy_from_slice(&2u32.to_le_bytes());
        assert!(none(&bad, &rows).is_err());
    }

    #[test]
    fn byte_strings_decode_as_codes_and_entries() {
        let values: Vec<&[u8]> = vec![b"b", b"a", b"b", b"", b"a"];
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in &values {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        let mut buf = Vec::new();
        encode_bytes(&offsets, &data, &mut buf);
        let (mut codes, mut ends, mut entries) = (Vec::new(), Vec::new(), Vec::new());
        let used =
            decode_bytes_codes(&buf, values.len(), &mut codes, &mut ends, &mut entries, &mut Vec::new());
        assert_eq!(used, Ok(buf.len()));
        for (i, v) in values.iter().enumerate() {
            let c = codes[i] as usize;
            assert_eq!(&entries[ends[c] as usize..ends[c + 1] as usize], *v);
        }
    }

    fn rt<T: Fixed>(values: &[T]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(values, &mut buf);
        assert_eq!(buf.len(), build(values, usize::MAX).unwrap().encoded_len());
        let mut got = Vec::new();
        assert_eq!(decode(&buf, values.len(), &mut got, &mut Scratch::default()), Ok(buf.len()));
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
        assert_eq!(buf.len(), build_bytes(&offsets, &data, usize::MAX).unwrap().encoded_len());
        let (used, ends, got) = dec_bytes(&buf, values.len()).unwrap();
        assert_eq!((used, ends, got), (buf.len(), offsets, data));
        assert_truncations_fail(&buf, |b| dec_bytes(b, values.len()).map(|r| r.0));
        buf
    }

    #[test]
    fn edge_cases() {
        rt::<i64>(&[]);
        rt(&[i64::MIN]);
        rt(&[i64::MIN, i64::MAX, i64::MIN, i64::MAX]);
        rt(&[f64::NAN, f64::from_bits(0x7FF8_0000_0000_0009), -0.0, 0.0, f64::NAN]);
        rt(&[f32::NAN, -0.0f32, 0.0]);
        let many: Vec<i64> = (0..65536).map(|i| (i % 3) * 1_000_000_007).collect();
        let buf = rt(&many);
        assert!(buf.len() < 65536 * 2 / 8 + 64);
        rt_bytes(&[]);
        rt_bytes(&[vec![]]);
        let words: Vec<Vec<u8>> = (0..2048).map(|i| format!("word{}", i % 7).into_bytes()).collect();
        assert!(rt_bytes(&words).len() < 2048 * 3 / 8 + 80);
    }

    #[test]
    fn gives_up_when_not_worth_it() {
        let distinct: Vec<i64> = (0..1000).map(|i| i * 1_000_003).collect();
        // Worth it compared with plain (30-bit range, 10-bit codes), not with FOR.
        assert!(build(&distinct, 1000 * 8).is_some());
        assert!(build(&distinct, bitpack::for_encoded_len(1000, 0, 999 * 1_000_003)).is_none());
        let (o, d) = to_offsets(&(0..1000).map(|i| format!("v{i}").into_bytes()).collect::<Vec<_>>());
        assert!(build_bytes(&o, &d, d.len()).is_none());
        // Unique values are recognised from a sample, before any hashing.
        let unique: Vec<i64> = (0..4096).collect();
        assert!(build(&unique, usize::MAX - 1).is_none());
        assert!(build(&unique, usize::MAX).is_some());
        let few: Vec<i64> = (0..4096).map(|i| i % 1000).collect();
        assert!(build(&few, usize::MAX - 1).is_some());
    }

    #[test]
    fn bad_code_is_corrupt() {
        let mut buf = Vec::new();
        encode(&[5i64, 6, 5], &mut buf);
        // Dictionary of 2; claim codes start at 1 so code 2 appears.
        let n = buf.len();
        buf[n - 9 - 1..n - 1 - 1].copy_from_slice(&1i64.to_le_bytes());
        assert!(decode::<i64>(&buf, 3, &mut Vec::new(), &mut Scratch::default()).is_err());
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
