//! ALP_rd with its two integer streams in FastLanes blocks (`lanes`): the analytic
//! default for full-precision doubles. Same cut, dictionary and exceptions as
//! `alp::encode_rd`, which stores the streams field after field; unpacked lane by lane
//! they decode several times faster (`bench/encoding/measure.rs`, `decode:` lines).
//!
//! Layout: the ALP_rd header (`right_bits: u8`, `dict_len: u8`, the dictionary as
//! `u16 LE` each, `exceptions: u32 LE`), the codes as 8-bit lanes at
//! `rd_code_bits(dict_len)` bits, the right parts as 64-bit lanes at `right_bits`, both
//! padded to whole blocks of 1024 values, then, when there are exceptions, their
//! positions (ascending) and their left parts, each a count-less frame-of-reference
//! block (`bitpack::encode_for`): at most 11 + 12 bits an exception where `alp` stores
//! 32 (on TSBS's metrics about 2% of the values are exceptions, the ones below the
//! dictionary's binades). Doubles only: a block of floats would want 32-bit lanes.

use super::alp::{
    choose_rd_sized, rd_code_bits, rd_codes, read_rd_header, write_rd_header, RdParams, RD_MAX_DICT,
};
use super::base::{CorruptData, PhysicalKind};
use super::bitpack::{self, bits_needed, FOR_HEADER_LEN};
use super::codec::{plan_of, Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, WRONG_KIND};
use super::lanes::{self, BLOCK};
use std::mem::MaybeUninit;

fn size(n: usize, right_bits: u32, dict_len: usize, exc: usize) -> usize {
    // Exceptions: positions at the vector's index width, left parts at their width at
    // most (a frame of reference may need fewer bits).
    let exceptions = if exc == 0 {
        0
    } else {
        2 * FOR_HEADER_LEN
            + (exc * (bits_needed(n as u64 - 1) as usize + 64 - right_bits as usize)).div_ceil(8)
    };
    2 + 2 * dict_len
        + 4
        + lanes::packed_len(n, rd_code_bits(dict_len))
        + lanes::packed_len(n, right_bits as u8)
        + exceptions
}

pub fn choose(values: &[f64]) -> (RdParams, usize) {
    choose_rd_sized(values, size)
}

pub fn encode(values: &[f64], p: &RdParams, out: &mut Vec<u8>) {
    let (codes, exc) = rd_codes(values, p);
    write_rd_header(p, exc.len(), out);
    let r = p.right_bits;
    lanes::pack_u8(values.len(), rd_code_bits(p.dict.len()), |i| codes[i], out);
    lanes::pack_u64(values.len(), r, |i| values[i].to_bits(), out);
    if !exc.is_empty() {
        let positions: Vec<i64> = exc.iter().map(|e| e.0 as i64).collect();
        let lefts: Vec<i64> = exc.iter().map(|e| e.1 as i64).collect();
        bitpack::encode_for(&positions, out);
        bitpack::encode_for(&lefts, out);
    }
}

/// Decodes `count` values into `out` (appended); `words` is space kept between calls.
pub fn decode(
    input: &[u8],
    count: usize,
    out: &mut Vec<f64>,
    words: &mut Vec<u64>,
) -> Result<usize, CorruptData> {
    let h = read_rd_header::<f64>(input, count)?;
    let (r, dict) = (h.right_bits, h.dict);
    let code_bits = rd_code_bits(h.dict_len);
    let mut pos = h.len;
    let codes = input
        .get(pos..pos + lanes::packed_len(count, code_bits))
        .ok_or(CorruptData("ALP_rd codes truncated"))?;
    pos += codes.len();
    let rights = input
        .get(pos..pos + lanes::packed_len(count, r as u8))
        .ok_or(CorruptData("ALP_rd values truncated"))?;
    pos += rights.len();
    let start = out.len();
    out.reserve(count);
    let mut right_block = [0u64; BLOCK];
    let mut code_block = [0u8; BLOCK];
    let mut top = 0u8;
    let (cl, rl) = (lanes::block_len(code_bits), lanes::block_len(r as u8));
    // The left parts in place, shifted once: a value is one lookup and an or.
    let lefts: [u64; RD_MAX_DICT] = std::array::from_fn(|i| dict[i] << r);
    for b in 0..lanes::blocks(count) {
        lanes::unpack_u8(&codes[b * cl..(b + 1) * cl], code_bits, &mut code_block)?;
        lanes::unpack_u64(&rights[b * rl..(b + 1) * rl], r as u8, words, &mut right_block)?;
        let n = BLOCK.min(count - b * BLOCK);
        top = code_block[..n].iter().fold(top, |m, &c| m.max(c));
        let at = out.len();
        out.reserve(n);
        join_parts(&lefts, &code_block[..n], &right_block[..n], &mut out.spare_capacity_mut()[..n]);
        // SAFETY: `join_parts` wrote each of the `n` slots after `at`, within the capacity
        // reserved above.
        unsafe { out.set_len(at + n) };
    }
    if top as usize >= h.dict_len {
        out.truncate(start);
        return Err(CorruptData("ALP_rd code out of range"));
    }
    if h.exceptions > 0 {
        let got = &mut out[start..];
        let mut positions: Vec<usize> = Vec::with_capacity(h.exceptions);
        let mut bad = false;
        pos += bitpack::decode_for(&input[pos..], h.exceptions, |p| {
            // Ascending and within the vector.
            bad |= p < 0 || p as usize >= count || positions.last().is_some_and(|&l| l >= p as usize);
            positions.push(p as usize);
        })?;
        let max_left = 1i64 << (64 - r);
        let right_mask = (1u64 << r) - 1;
        let mut k = 0;
        pos += bitpack::decode_for(&input[pos..], h.exceptions, |left| {
            bad |= !(0..max_left).contains(&left);
            if !bad {
                let i = positions[k];
                got[i] = f64::from_bits(((left as u64) << r) | (got[i].to_bits() & right_mask));
            }
            k += 1;
        })?;
        if bad {
            out.truncate(start);
            return Err(CorruptData("ALP_rd exception out of range"));
        }
    }
    Ok(pos)
}

/// Writes each value of a block into `out`: its left part (`lefts[code]`, already
/// shifted into place; a code is taken modulo 8) or'ed with its right part. `codes`,
/// `rights` and `out` have the same length.
fn join_parts(lefts: &[u64; RD_MAX_DICT], codes: &[u8], rights: &[u64], out: &mut [MaybeUninit<f64>]) {
    assert!(codes.len() == out.len() && rights.len() == out.len());
    // The SIMD joins take whole eights; the scalar loop the rest.
    let mut whole = 0;
    #[cfg(target_arch = "x86_64")]
    {
        let eights = out.len() - out.len() % 8;
        let (c, r, o) = (&codes[..eights], &rights[..eights], &mut out[..eights]);
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512 F (checked just above); the lengths are equal
            // (asserted above) and a multiple of 8.
            unsafe { join_parts_avx512(lefts, c, r, o) };
            whole = eights;
        } else if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above, with AVX2.
            unsafe { join_parts_avx2(lefts, c, r, o) };
            whole = eights;
        }
    }
    join_parts_scalar(lefts, &codes[whole..], &rights[whole..], &mut out[whole..]);
}

fn join_parts_scalar(lefts: &[u64; RD_MAX_DICT], codes: &[u8], rights: &[u64], out: &mut [MaybeUninit<f64>]) {
    for ((o, &c), &right) in out.iter_mut().zip(codes).zip(rights) {
        o.write(f64::from_bits(lefts[c as usize % RD_MAX_DICT] | right));
    }
}

/// `join_parts` eight values at a time: the eight left parts are one register, and a
/// value's is picked by a permute with its code (whose low 3 bits the instruction
/// reads, the same modulo 8), where the scalar loop loads each one (a third of a TSBS
/// metric's decode).
///
/// # Safety
/// The CPU must support AVX-512 F; `codes`, `rights` and `out` have the same length, a
/// multiple of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn join_parts_avx512(
    lefts: &[u64; RD_MAX_DICT],
    codes: &[u8],
    rights: &[u64],
    out: &mut [MaybeUninit<f64>],
) {
    use std::arch::x86_64::*;
    // SAFETY: every load and store below covers elements `i .. i + 8` with
    // `i + 8 <= out.len()`, within `codes`, `rights` and `out` (all as long, a multiple
    // of 8: this fn's contract); unaligned forms are used throughout; the CPU has AVX-512 F.
    unsafe {
        let table = _mm512_loadu_si512(lefts.as_ptr().cast());
        let mut i = 0;
        while i < out.len() {
            let c = _mm_loadl_epi64(codes.as_ptr().add(i).cast());
            let left = _mm512_permutexvar_epi64(_mm512_cvtepu8_epi64(c), table);
            let right = _mm512_loadu_si512(rights.as_ptr().add(i).cast());
            _mm512_storeu_si512(out.as_mut_ptr().add(i).cast(), _mm512_or_si512(left, right));
            i += 8;
        }
    }
}

/// `join_parts` eight values at a time without AVX-512 (AMD Zen 3, whose scalar join
/// made ALP_rd lanes decode 0.86 values/ns): AVX2 permutes only 32-bit lanes, so the
/// left parts are two tables of eight 32-bit halves, each permuted by the eight codes
/// (the instruction reads their low 3 bits: the same modulo 8), and the halves are
/// interleaved back into four 64-bit values per register.
///
/// # Safety
/// The CPU must support AVX2; `codes`, `rights` and `out` have the same length, a
/// multiple of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn join_parts_avx2(
    lefts: &[u64; RD_MAX_DICT],
    codes: &[u8],
    rights: &[u64],
    out: &mut [MaybeUninit<f64>],
) {
    use std::arch::x86_64::*;
    let low: [u32; RD_MAX_DICT] = std::array::from_fn(|i| lefts[i] as u32);
    let high: [u32; RD_MAX_DICT] = std::array::from_fn(|i| (lefts[i] >> 32) as u32);
    // SAFETY: every load and store below covers elements `i .. i + 8` (the codes' load
    // 8 bytes, the others two halves of 4) with `i + 8 <= out.len()`, within `codes`,
    // `rights` and `out` (all as long, a multiple of 8: this fn's contract); the tables
    // are 8 u32s; unaligned forms throughout; the CPU has AVX2.
    unsafe {
        let (low, high) = (_mm256_loadu_si256(low.as_ptr().cast()), _mm256_loadu_si256(high.as_ptr().cast()));
        let mut i = 0;
        while i < out.len() {
            let c = _mm256_cvtepu8_epi32(_mm_loadl_epi64(codes.as_ptr().add(i).cast()));
            let (l, h) = (_mm256_permutevar8x32_epi32(low, c), _mm256_permutevar8x32_epi32(high, c));
            // Per 128-bit lane, values 0, 1 | 4, 5 and 2, 3 | 6, 7; then in order.
            let (a, b) = (_mm256_unpacklo_epi32(l, h), _mm256_unpackhi_epi32(l, h));
            let first = _mm256_permute2x128_si256::<0x20>(a, b);
            let second = _mm256_permute2x128_si256::<0x31>(a, b);
            let r0 = _mm256_loadu_si256(rights.as_ptr().add(i).cast());
            let r1 = _mm256_loadu_si256(rights.as_ptr().add(i + 4).cast());
            _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), _mm256_or_si256(first, r0));
            _mm256_storeu_si256(out.as_mut_ptr().add(i + 4).cast(), _mm256_or_si256(second, r1));
            i += 8;
        }
    }
}

/// The codec table's entry: doubles whose ALP_rd streams fill whole blocks well.
pub static ALP_RD_LANES: Codec = Codec {
    kinds: &[PhysicalKind::Float64],
    tier: Tier::Costly,
    decode_ns: 0.7,
    estimate: |a, _| {
        let Analysis::Float64(v, _) = a else { return None };
        let (params, size) = choose(v);
        Estimate::planned(size, params)
    },
    encode: |values, plan, out| match values {
        VectorValues::Float64(v) => encode(v, plan_of(plan), out),
        _ => unreachable!("ALP_rd lanes encode doubles"),
    },
    decode: |input, count, out, scratch| match out {
        Output::Float64(v) => decode(input, count, v, &mut scratch.u64s),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::alp;
    use proptest::prelude::*;

    fn round_trip(values: &[f64]) -> Vec<u8> {
        let (p, _) = choose(values);
        let mut buf = Vec::new();
        encode(values, &p, &mut buf);
        buf.extend_from_slice(b"next");
        let mut out = vec![1.5];
        let used = decode(&buf, values.len(), &mut out, &mut Vec::new()).unwrap();
        assert_eq!(&buf[used..], b"next");
        assert_eq!(out.len(), values.len() + 1);
        for (a, b) in out[1..].iter().zip(values) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        buf
    }

    #[test]
    fn full_precision_walks_and_specials_round_trip() {
        let mut x = 50.0f64;
        let mut walk: Vec<f64> = (0..2500)
            .map(|i| {
                x = (x + ((i * 7919) % 200) as f64 / 100.0 - 1.0 + 1e-9 * i as f64).clamp(0.0, 100.0);
                x
            })
            .collect();
        round_trip(&walk);
        walk[3] = f64::NAN;
        walk[1000] = -0.0;
        walk[2047] = f64::INFINITY;
        walk[2499] = 1e300;
        round_trip(&walk);
        round_trip(&walk[..1]);
        round_trip(&walk[..1024]);
    }

    #[test]
    fn same_values_as_field_by_field_alp_rd_in_about_its_size() {
        let values: Vec<f64> =
            (0..2048).map(|i| (i as f64 * 0.37).sin() * 40.0 + 50.0 + 1e-7 * i as f64).collect();
        let lanes = round_trip(&values);
        let mut seq = Vec::new();
        alp::encode_rd(&values, &alp::choose_rd(&values).0, &mut seq);
        assert!(lanes.len() - 4 <= seq.len() + 16, "{} vs {}", lanes.len(), seq.len());
    }

    #[test]
    fn parts_join_alike_eight_at_a_time_and_one_by_one() {
        // Bits in both 32-bit halves, which the AVX2 join permutes apart.
        let lefts: [u64; RD_MAX_DICT] =
            std::array::from_fn(|i| ((i as u64 * 0x9E37 + 1) << 48) | (i as u64 * 0x0101_0101_0101 + 3));
        for n in [0, 1, 7, 8, 9, 15, 16, 17, 1023, 1024] {
            // Codes past 7 too: both take them modulo 8.
            let codes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
            let rights: Vec<u64> =
                (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9) & ((1 << 48) - 1)).collect();
            let mut fast = vec![MaybeUninit::new(0.0); n];
            let mut slow = vec![MaybeUninit::new(0.0); n];
            let mut avx2 = vec![MaybeUninit::new(0.0); n];
            join_parts(&lefts, &codes, &rights, &mut fast);
            join_parts_scalar(&lefts, &codes, &rights, &mut slow);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let e = n - n % 8;
                // SAFETY: the CPU has AVX2; the slices are `e` long, a multiple of 8.
                unsafe { join_parts_avx2(&lefts, &codes[..e], &rights[..e], &mut avx2[..e]) };
                join_parts_scalar(&lefts, &codes[e..], &rights[e..], &mut avx2[e..]);
            } else {
                avx2.copy_from_slice(&slow);
            }
            #[cfg(not(target_arch = "x86_64"))]
            avx2.copy_from_slice(&slow);
            for i in 0..n {
                // SAFETY: all three were initialised above (and written by the joins).
                let (f, s, a) =
                    unsafe { (fast[i].assume_init(), slow[i].assume_init(), avx2[i].assume_init()) };
                assert_eq!(f.to_bits(), s.to_bits(), "n {n}, value {i}");
                assert_eq!(a.to_bits(), s.to_bits(), "avx2: n {n}, value {i}");
                assert_eq!(s.to_bits(), lefts[codes[i] as usize % RD_MAX_DICT] | rights[i]);
            }
        }
    }

    #[test]
    fn damaged_input_is_corrupt_not_a_panic() {
        let values: Vec<f64> = (0..1500).map(|i| i as f64 / 3.0).collect();
        let (p, _) = choose(&values);
        let mut buf = Vec::new();
        encode(&values, &p, &mut buf);
        for cut in [0, 1, 5, buf.len() / 2, buf.len() - 1] {
            assert!(
                decode(&buf[..cut], values.len(), &mut Vec::new(), &mut Vec::new()).is_err(),
                "cut at {cut}"
            );
        }
        // A code past the dictionary.
        let mut bad = buf.clone();
        bad[1] = 1;
        let _ = decode(&bad, values.len(), &mut Vec::new(), &mut Vec::new());
    }

    proptest! {
        #[test]
        fn any_doubles_round_trip(bits in proptest::collection::vec(any::<u64>(), 1..3000)) {
            let values: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            round_trip(&values);
        }
    }
}
