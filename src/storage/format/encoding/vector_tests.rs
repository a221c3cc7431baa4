//! Round trips, encoding choices and corruption checks of whole vectors (`vector`).

use super::base::{CorruptData, PhysicalKind};
use super::codec::{EncodingGoal, VectorValues};
use super::compress::Compression;
use super::decoded::{DecodedValues, DecodedVector};
use super::table::EncodingId;
use super::test_util::*;
use super::vector::*;
use crate::storage::format::checksum;
use proptest::prelude::*;

#[test]
fn round_trip_every_kind_with_and_without_nulls() {
    let ints: Vec<i64> = (0..3000).map(|i| (i * 7919) % 1000 - 500).collect();
    let floats: Vec<f64> = (0..3000).map(|i| (i as f64 * 0.37).sin() * 100.0).collect();
    let decimals: Vec<f64> = (0..3000).map(|i| (i % 977) as f64 / 10.0).collect();
    let f32s: Vec<f32> = (0..3000).map(|i| (i as f32 * 0.37).cos()).collect();
    let text: Vec<Vec<u8>> = (0..3000).map(|i| format!("value-{}", i % 37).into_bytes()).collect();
    for p in &policies() {
        // every = 0: no NULLs; otherwise every `every`-th row is NULL.
        for every in [0, 3, 2] {
            rt_int(&with_nulls(&ints, every), p);
            rt_f64(&with_nulls(&floats, every), p);
            rt_f64(&with_nulls(&decimals, every), p);
            rt_f32(&with_nulls(&f32s, every), p);
            rt_bytes(&with_nulls(&text, every), p);
        }
    }
}

#[test]
fn empty_and_all_null_vectors() {
    let p = CompressionPolicy::default();
    let (info, buf) = rt_int(&[], &p);
    assert_eq!((info.encoding, buf.len()), (EncodingId::Plain, HEADER_LEN));
    let (_, buf) = rt_int(&[None; 2048], &p);
    assert_eq!(buf.len(), HEADER_LEN);
    let (_, buf) = rt_f64(&[None; 100], &p);
    assert_eq!(buf.len(), HEADER_LEN);
    rt_f32(&[None], &p);
    let (_, buf) = rt_bytes(&vec![None; 70], &p);
    assert_eq!(buf.len(), HEADER_LEN);
    rt_bytes(&[Some(vec![]), None, Some(vec![])], &p);
}

#[test]
fn max_rows_and_extremes() {
    let p = CompressionPolicy::default();
    let rows: Vec<Option<i64>> =
        (0..65536).map(|i| Some(if i % 2 == 0 { i64::MIN } else { i64::MAX })).collect();
    rt_int(&rows, &p);
    let rows: Vec<Option<i64>> = (0..65536i64).map(|i| (i % 5 != 0).then_some(i * 1000)).collect();
    rt_int(&rows, &p);
    let specials = [
        f64::NAN,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(1),
        f64::from_bits(0x7FF0_0000_0000_0F00),
        1.25,
    ];
    let rows: Vec<Option<f64>> = (0..65536).map(|i| Some(specials[i % specials.len()])).collect();
    rt_f64(&rows, &p);
    let rows: Vec<Option<f32>> =
        (0..65536).map(|i| Some(f32::from_bits((i as u32).wrapping_mul(65599)))).collect();
    rt_f32(&rows, &p);
}

#[test]
#[should_panic(expected = "exceeds")]
fn too_many_rows_panics() {
    let v = vec![0i64; 65537];
    encode_vector(65537, None, VectorValues::Int(&v), &CompressionPolicy::default(), &mut Vec::new());
}

#[test]
fn chooses_sensible_encodings() {
    let p = CompressionPolicy::NONE;
    // Timestamps shared by 400 rows each: run-length.
    let ts: Vec<Option<i64>> =
        (0..2048).map(|i| Some(1_700_000_000_000_000 + (i / 400) * 10_000_000)).collect();
    let (info, buf) = rt_int(&ts, &p);
    assert_eq!(info.encoding, EncodingId::Rle);
    assert!(buf.len() < 80, "{}", buf.len());
    // Low-cardinality text in random order: dictionary.
    let mut x = 7u64;
    let words = ["red", "green", "blue", "cyan", "magenta"];
    let text: Vec<Option<Vec<u8>>> = (0..2048)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            Some(words[(x >> 33) as usize % 5].as_bytes().to_vec())
        })
        .collect();
    let (info, _) = rt_bytes(&text, &p);
    assert_eq!(info.encoding, EncodingId::Dictionary);
    let (info, _) = rt_bytes(&text, &CompressionPolicy::default());
    assert_eq!(info.encoding, EncodingId::Dictionary);
    // Small-range ints: frame of reference.
    let small: Vec<Option<i64>> = (0..2048)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            Some(1_000_000 + (x >> 40) as i64 % 1000)
        })
        .collect();
    let (info, buf) = rt_int(&small, &p);
    assert_eq!(info.encoding, EncodingId::BitPack);
    assert!(buf.len() <= HEADER_LEN + 9 + 2048 * 10 / 8);
    // Fixed step or sorted with jitter: delta; fixed acceleration: delta-of-delta.
    let reg: Vec<Option<i64>> = (0..2048).map(|i| Some(i * 1000)).collect();
    assert_eq!(rt_int(&reg, &p).0.encoding, EncodingId::Delta);
    let accel: Vec<Option<i64>> = (0..2048i64).map(|i| Some(i * i * 3 + 100)).collect();
    assert_eq!(rt_int(&accel, &p).0.encoding, EncodingId::DeltaOfDelta);
    let sorted: Vec<Option<i64>> = (0..2048i64).map(|i| Some(i * 1_000_000 + (i * 7) % 13)).collect();
    assert_eq!(rt_int(&sorted, &p).0.encoding, EncodingId::Delta);
    // Decimal doubles: ALP.
    let prices: Vec<Option<f64>> = (0..2048).map(|i| Some(((i * 7919) % 100_000) as f64 / 100.0)).collect();
    assert_eq!(rt_f64(&prices, &p).0.encoding, EncodingId::Alp);
    // Slowly varying full-precision series: Gorilla or ALP_rd, below plain.
    let series: Vec<Option<f64>> = (0..2048).map(|i| Some(20.0 + (i as f64 / 50.0).sin())).collect();
    let (info, buf) = rt_f64(&series, &p);
    assert!(
        matches!(
            info.encoding,
            EncodingId::Gorilla | EncodingId::AlpRd | EncodingId::AlpRdLanes | EncodingId::LagDelta
        ),
        "{info:?}"
    );
    assert!(buf.len() < 2048 * 8);
    // Interleaved full-precision series (time-major rows of 400 hosts): for size,
    // lag-delta with lag 400, also when compression is allowed; for scans, ALP_rd in
    // FastLanes blocks, about 10% larger and several times faster to decode.
    let walks: Vec<Option<f64>> = interleaved_walks(400, 2048, 3, 1.0).into_iter().map(Some).collect();
    let size = CompressionPolicy::for_goal(EncodingGoal::Size);
    for p in [CompressionPolicy { goal: EncodingGoal::Size, ..p }, size] {
        let (info, buf) = rt_f64(&walks, &p);
        assert_eq!((info.encoding, info.compression), (EncodingId::LagDelta, Compression::None));
        assert_eq!(u16::from_le_bytes([buf[HEADER_LEN], buf[HEADER_LEN + 1]]), 400);
        assert!(buf.len() * 100 <= 2048 * 650, "{}", buf.len());
    }
    for p in [p, CompressionPolicy::default()] {
        let (info, buf) = rt_f64(&walks, &p);
        assert_eq!((info.encoding, info.compression), (EncodingId::AlpRdLanes, Compression::None));
        assert!(buf.len() * 100 <= 2048 * 710, "{}", buf.len());
    }
    // Decimals and integers keep the smallest codec whatever the goal.
    for goal in [EncodingGoal::Scan, EncodingGoal::Size] {
        let p = CompressionPolicy::for_goal(goal);
        assert_eq!(rt_f64(&prices, &p).0.encoding, EncodingId::Alp);
        assert_eq!(rt_int(&small, &p).0.encoding, EncodingId::BitPack);
    }
}

#[test]
fn small_float_savings_are_kept() {
    // Full-precision values, a fifth of them 0.0: ALP_rd leaves the zeros' repeated
    // bytes to zstd, which saves over 3% (but not 10%) of the payload.
    let mut x = 3u64;
    let rows: Vec<Option<f64>> = (0..2048)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            Some(if x >> 61 == 0 { 0.0 } else { (x >> 11) as f64 / (1u64 << 53) as f64 * 100.0 })
        })
        .collect();
    // (Chosen for size: in FastLanes blocks, the scan goal's choice, the zeros' fields
    // are spread among other values' bits, and zstd saves too little to be kept.)
    let (plain, _) = rt_f64(&rows, &CompressionPolicy::NONE);
    let (info, _) = rt_f64(&rows, &CompressionPolicy::for_goal(EncodingGoal::Size));
    assert_ne!(info.compression, Compression::None, "{info:?}");
    assert!(info.stored_bytes * 100 <= plain.stored_bytes * 97);
    assert!(info.stored_bytes * 100 > plain.stored_bytes * 90, "{info:?} {plain:?}");
}

#[test]
fn compression_kept_only_when_it_pays() {
    let text: Vec<Option<Vec<u8>>> =
        (0..2048).map(|i| Some(format!("a fairly long repeated prefix {}", i).into_bytes())).collect();
    let (info, _) = rt_bytes(&text, &CompressionPolicy::default());
    assert_ne!(info.compression, Compression::None);
    assert!(info.stored_bytes * 4 < info.raw_bytes);
    let noise = noise_i64(2048, 1);
    let (info, _) = rt_int(&noise, &CompressionPolicy::default());
    assert_eq!(info.compression, Compression::None);
}

#[test]
fn a_cycle_of_few_values_stays_a_dictionary() {
    // Codes recurring in a fixed cycle: plain + zstd stores the cycle once and beats the
    // compressed dictionary by a few hundred bytes, less than the dictionary's decoding
    // is worth (`dictionary_decode_credit`).
    let padded = |i: usize| format!("{:<10}", format!("C{}", i % 50)).into_bytes();
    let modes = ["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"];
    let short = |i: usize| modes[i % 7].as_bytes().to_vec();
    for values in [(0..2048).map(padded).collect::<Vec<_>>(), (0..2048).map(short).collect()] {
        let rows: Vec<Option<Vec<u8>>> = values.into_iter().map(Some).collect();
        let (info, _) = rt_bytes(&rows, &CompressionPolicy::default());
        assert_eq!(info.encoding, EncodingId::Dictionary, "{info:?}");
        assert!(info.stored_bytes * 10 < info.raw_bytes, "{info:?}");
    }
    // Long unique values with a shared prefix have no dictionary: short images (plain
    // byte strings with a 1-byte header each, as small compressed) + compression; with a
    // value past a short header's reach, plain.
    let mut unique: Vec<Option<Vec<u8>>> =
        (0..2048).map(|i| Some(format!("Customer#{:012} clerk 3", i * 17).into_bytes())).collect();
    let (info, _) = rt_bytes(&unique, &CompressionPolicy::default());
    assert_eq!(info.encoding, EncodingId::ShortImages, "{info:?}");
    assert_ne!(info.compression, Compression::None, "{info:?}");
    assert!(info.stored_bytes * 20 < info.raw_bytes, "{info:?}");
    unique[7] = Some(vec![b'x'; 127]);
    let (info, _) = rt_bytes(&unique, &CompressionPolicy::default());
    assert_eq!(info.encoding, EncodingId::Plain, "{info:?}");
}

#[test]
fn runs_of_a_sorted_text_key_stay_runs() {
    // A vector of a table sorted by its host: eight hosts, 256 rows each. zstd over the
    // short images finds the repeats too and stores a little less, not enough to be
    // worth decompressing every row (`dictionary_decode_credit`).
    let rows: Vec<Option<Vec<u8>>> =
        (0..2048).map(|i| Some(format!("host_{}", 100 + i / 256).into_bytes())).collect();
    let (info, _) = rt_bytes(&rows, &CompressionPolicy::default());
    assert_eq!(info.encoding, EncodingId::Rle, "{info:?}");
    assert!(info.stored_bytes * 50 < info.raw_bytes, "{info:?}");
}

fn sample_vectors() -> Vec<(PhysicalKind, Vec<u8>)> {
    let p = CompressionPolicy::default();
    let mut v = Vec::new();
    let ints: Vec<Option<i64>> = (0..300i64).map(|i| (i % 7 != 0).then_some(i * i)).collect();
    v.push((PhysicalKind::Int, rt_int(&ints, &p).1));
    let text: Vec<Option<Vec<u8>>> = (0..300).map(|i| Some(format!("row {}", i % 10).into_bytes())).collect();
    v.push((PhysicalKind::Bytes, rt_bytes(&text, &p).1));
    let fl: Vec<Option<f64>> = (0..300).map(|i| (i % 3 != 0).then_some(i as f64 * 1.1)).collect();
    v.push((PhysicalKind::Float64, rt_f64(&fl, &p).1));
    // 7 interleaved series; whole rounds of 7 rows are NULL, which keeps the lag.
    let walks = interleaved_walks(7, 300, 1, 1.0);
    let rows: Vec<Option<f64>> =
        walks.iter().enumerate().map(|(i, &w)| (i / 7 % 10 != 3).then_some(w)).collect();
    let (info, buf) = rt_f64(&rows, &CompressionPolicy::for_goal(EncodingGoal::Size));
    assert_eq!(info.encoding, EncodingId::LagDelta);
    v.push((PhysicalKind::Float64, buf));
    // Full-precision walks of 1100 rows (a partial second block), some NULL.
    let walks = interleaved_walks(11, 1100, 2, 1.0);
    let rows: Vec<Option<f64>> = walks.iter().enumerate().map(|(i, &w)| (i % 13 != 5).then_some(w)).collect();
    let (info, buf) = rt_f64(&rows, &p);
    assert_eq!(info.encoding, EncodingId::AlpRdLanes);
    v.push((PhysicalKind::Float64, buf));
    v
}

#[test]
fn corruption_is_detected() {
    for (kind, buf) in sample_vectors() {
        let mut out = DecodedVector::default();
        for cut in 0..buf.len() {
            assert!(decode_vector(&buf[..cut], kind, &mut out).is_err(), "cut {cut}");
        }
        for i in 0..buf.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = buf.clone();
                bad[i] ^= bit;
                assert!(decode_vector(&bad, kind, &mut out).is_err(), "flip at {i}");
            }
        }
        let other = if kind == PhysicalKind::Int { PhysicalKind::Bytes } else { PhysicalKind::Int };
        assert_eq!(decode_vector(&buf, other, &mut out), Err(CorruptData("vector holds another value kind")));
    }
}

#[test]
fn checksum_mismatch_is_reported() {
    let (kind, mut buf) = sample_vectors().remove(0);
    let last = buf.len() - 1;
    buf[last] ^= 0x10;
    assert_eq!(
        decode_vector(&buf, kind, &mut DecodedVector::default()),
        Err(CorruptData("vector checksum mismatch"))
    );
}

/// Rewrites header fields and fixes the checksum, to reach the checks behind it.
fn forge(buf: &[u8], edit: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut b = buf.to_vec();
    edit(&mut b);
    let crc = checksum::crc32c_append(checksum::crc32c(&b[..20]), &b[HEADER_LEN..]);
    b[20..24].copy_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn forged_headers_are_rejected() {
    let (kind, buf) = sample_vectors().remove(0);
    let mut out = DecodedVector::default();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("unknown vector format version", forge(&buf, |b| b[0] = 2)),
        (UNKNOWN_ENCODING, forge(&buf, |b| b[2] = 99)),
        (UNKNOWN_COMPRESSION, forge(&buf, |b| b[3] = 9)),
        ("encoding does not apply to the value kind", forge(&buf, |b| b[2] = EncodingId::Gorilla as u8)),
        ("vector row count too large", forge(&buf, |b| b[4..8].copy_from_slice(&70000u32.to_le_bytes()))),
        ("more nulls than rows", forge(&buf, |b| b[8..12].copy_from_slice(&301u32.to_le_bytes()))),
        (
            "vector payload size implausible",
            forge(&buf, |b| {
                b[3] = Compression::Zstd as u8;
                b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
            }),
        ),
    ];
    for (msg, bad) in cases {
        assert_eq!(decode_vector(&bad, kind, &mut out), Err(CorruptData(msg)));
    }
    // Wrong null count with a consistent checksum: bitmap disagrees.
    let bad = forge(&buf, |b| b[8] += 1);
    assert!(decode_vector(&bad, kind, &mut out).is_err());
}

#[test]
fn decoded_vector_switches_kinds() {
    let mut out = DecodedVector::default();
    for (kind, buf) in sample_vectors().into_iter().chain(sample_vectors()) {
        assert_eq!(decode_vector(&buf, kind, &mut out), Ok(buf.len()));
    }
}

#[test]
fn take_rows_moves_the_rows_out_and_the_decoder_goes_on() {
    let mut out = DecodedVector::default();
    let mut kept = Vec::new();
    for (kind, buf) in sample_vectors() {
        decode_vector(&buf, kind, &mut out).unwrap();
        let expected = (out.rows, out.validity.clone(), format!("{:?}", out.values));
        let rows = out.take_rows();
        assert_eq!((rows.rows, rows.validity.clone(), format!("{:?}", rows.values)), expected);
        assert!(rows.heap_bytes() >= rows.rows as usize);
        assert_eq!((out.rows, out.validity.is_none()), (0, true));
        kept.push((rows, expected));
    }
    // Decoding into the same vector again leaves the rows taken before intact.
    for (kind, buf) in sample_vectors() {
        decode_vector(&buf, kind, &mut out).unwrap();
    }
    for (rows, expected) in kept {
        assert_eq!((rows.rows, rows.validity.clone(), format!("{:?}", rows.values)), expected);
    }
}

proptest! {
    #![proptest_config(crate::storage::format::encoding::test_util::config(96))]
    #[test]
    fn prop_ints(rows in vec_with_repeats(opt(any_i64()), 300), p in any_policy(), fl in flips()) {
        let (_, buf) = rt_int(&rows, &p);
        check_flips(&buf, &fl, PhysicalKind::Int);
    }

    #[test]
    fn prop_f64(rows in vec_with_repeats(opt(any_f64()), 300), p in any_policy(), fl in flips()) {
        let (_, buf) = rt_f64(&rows, &p);
        check_flips(&buf, &fl, PhysicalKind::Float64);
    }

    #[test]
    fn prop_f32(rows in vec_with_repeats(opt(any_f32()), 300), p in any_policy(), fl in flips()) {
        let (_, buf) = rt_f32(&rows, &p);
        check_flips(&buf, &fl, PhysicalKind::Float32);
    }

    #[test]
    fn prop_f64_interleaved(sources in 1usize..600, len in 1usize..2048, seed in any::<u64>(),
                            null_every in 0usize..4, p in any_policy(), fl in flips(),
                            specials in proptest::collection::vec((any::<usize>(), any_f64()), 0..10)) {
        let mut v = interleaved_walks(sources, len, seed, 1.0);
        for (i, x) in specials {
            let n = v.len();
            v[i % n] = x;
        }
        let rows: Vec<Option<f64>> = v
            .iter()
            .enumerate()
            .map(|(i, &x)| (null_every == 0 || i % (null_every * 97) != 1).then_some(x))
            .collect();
        let (_, buf) = rt_f64(&rows, &p);
        check_flips(&buf, &fl, PhysicalKind::Float64);
    }

    #[test]
    fn prop_bytes(rows in vec_with_repeats(opt(proptest::collection::vec(any::<u8>(), 0..30)), 200),
                  p in any_policy(), fl in flips()) {
        let (_, buf) = rt_bytes(&rows, &p);
        check_flips(&buf, &fl, PhysicalKind::Bytes);
    }
}

/// Every truncation and every set of flips is an error (the checksum covers all).
fn check_flips(buf: &[u8], flips: &[(usize, u8)], kind: PhysicalKind) {
    let mut out = DecodedVector::default();
    for cut in 0..buf.len() {
        assert!(decode_vector(&buf[..cut], kind, &mut out).is_err());
    }
    let mut bad = buf.to_vec();
    for &(pos, mask) in flips {
        bad[pos % buf.len()] ^= mask.max(1);
    }
    if bad != buf {
        assert!(decode_vector(&bad, kind, &mut out).is_err());
    }
}

#[test]
fn dictionary_codes_of_chosen_rows_match_the_whole_vector() {
    let words = ["AIR", "AIR REG", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB"];
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for i in 0..2048 {
        data.extend_from_slice(words[(i * 7919) % 7].as_bytes());
        offsets.push(data.len() as u32);
    }
    let wanted: Vec<u32> = (0..2048).filter(|r| r % 97 == 5 || *r == 2047).collect();
    let mut dictionaries = 0;
    for policy in &policies() {
        let mut bytes = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        let info = encode_vector(2048, None, values, policy, &mut bytes);
        if info.encoding != EncodingId::Dictionary {
            continue;
        }
        dictionaries += 1;
        let mut whole = DecodedVector { keep_dictionary: true, ..Default::default() };
        decode_vector(&bytes, PhysicalKind::Bytes, &mut whole).unwrap();
        let mut some = DecodedVector { keep_dictionary: true, ..Default::default() };
        assert_eq!(
            decode_vector_rows(&bytes, PhysicalKind::Bytes, &wanted, &mut some),
            Ok((bytes.len(), true))
        );
        let (w, s) = (whole.dictionary.as_ref().unwrap(), some.dictionary.as_ref().unwrap());
        assert_eq!(some.rows, 2048);
        for &r in &wanted {
            assert_eq!(s.entry(s.codes[r as usize] as usize), w.entry(w.codes[r as usize] as usize));
            assert_eq!(s.entry(s.codes[r as usize] as usize), words[(r as usize * 7919) % 7].as_bytes());
        }
        // A row beyond the vector, and corrupt bytes, are errors.
        assert!(decode_vector_rows(&bytes, PhysicalKind::Bytes, &[2048], &mut some).is_err());
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(decode_vector_rows(&flipped, PhysicalKind::Bytes, &wanted, &mut some).is_err());
    }
    assert!(dictionaries >= 2, "the encoder picks a dictionary for 7 words");
    // With NULLs, or without `keep_dictionary`: decoded whole.
    let text: Vec<Vec<u8>> = (0..2048).map(|i| words[i % 7].as_bytes().to_vec()).collect();
    let (offs, dat) = bytes_parts(&with_nulls(&text, 3));
    let valid: Vec<bool> = (0..2048).map(|i| i % 3 != 1).collect();
    let mut bytes = Vec::new();
    encode_vector(
        2048,
        Some(&valid),
        VectorValues::Bytes { offsets: &offs, data: &dat },
        &CompressionPolicy::NONE,
        &mut bytes,
    );
    let mut out = DecodedVector { keep_dictionary: true, ..Default::default() };
    assert_eq!(decode_vector_rows(&bytes, PhysicalKind::Bytes, &wanted, &mut out).map(|r| r.1), Ok(false));
    assert!(out.validity.is_some());
    let mut out = DecodedVector::default();
    let (offs, dat) = bytes_parts(&text.iter().cloned().map(Some).collect::<Vec<_>>());
    let mut bytes = Vec::new();
    encode_vector(
        2048,
        None,
        VectorValues::Bytes { offsets: &offs, data: &dat },
        &CompressionPolicy::NONE,
        &mut bytes,
    );
    assert_eq!(decode_vector_rows(&bytes, PhysicalKind::Bytes, &wanted, &mut out).map(|r| r.1), Ok(false));
    assert!(out.dictionary.is_none());
}

/// Dense offsets and data of the non-null values.
fn bytes_parts(values: &[Option<Vec<u8>>]) -> (Vec<u32>, Vec<u8>) {
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for v in values.iter().flatten() {
        data.extend_from_slice(v);
        offsets.push(data.len() as u32);
    }
    (offsets, data)
}

#[test]
fn bit_packed_integers_of_chosen_rows_match_the_whole_vector() {
    let ints: Vec<i64> = (0..2048).map(|i| 1000 + (i * 7919) % 5003).collect();
    let wanted: Vec<u32> = (0..2048).filter(|r| r % 61 == 7).collect();
    let mut packed = 0;
    for policy in &policies() {
        let mut bytes = Vec::new();
        let info = encode_vector(2048, None, VectorValues::Int(&ints), policy, &mut bytes);
        let mut out = DecodedVector::default();
        let (used, partial) = decode_vector_rows(&bytes, PhysicalKind::Int, &wanted, &mut out).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(partial, info.encoding == EncodingId::BitPack);
        packed += partial as usize;
        let super::decoded::DecodedValues::Int(got) = &out.values else { panic!("not ints") };
        assert_eq!(got.len(), 2048);
        for &r in &wanted {
            assert_eq!(got[r as usize], ints[r as usize], "row {r}");
        }
        assert!(decode_vector_rows(&bytes, PhysicalKind::Int, &[2048], &mut out).is_err() || !partial);
    }
    assert!(packed >= 1, "the encoder bit-packs noisy integers");
    // Sequences are delta-encoded: decoded whole.
    let seq: Vec<i64> = (0..2048).collect();
    let mut bytes = Vec::new();
    encode_vector(2048, None, VectorValues::Int(&seq), &CompressionPolicy::NONE, &mut bytes);
    let mut out = DecodedVector::default();
    assert_eq!(decode_vector_rows(&bytes, PhysicalKind::Int, &wanted, &mut out).map(|r| r.1), Ok(false));
}

#[test]
fn scaled_numerics_of_chosen_rows_match_the_whole_vector() {
    use crate::storage::format::numeric::stored_literal;
    // Prices (scale 2) in a FOR block of mantissas; and again with NULLs, and as a
    // sequence (its mantissas delta-encoded), which decode whole.
    let prices: Vec<Vec<u8>> =
        (0..2048).map(|i| stored_literal(&format!("{}.{:02}", 900 + i * 7919 % 90_000, i % 100))).collect();
    let seq: Vec<Vec<u8>> = (0..2048).map(|i| stored_literal(&format!("{i}.00"))).collect();
    // Quantities: 50 values, dictionary codes.
    let quantities: Vec<Vec<u8>> =
        (0..2048).map(|i| stored_literal(&format!("{}.00", 1 + i * 31 % 50))).collect();
    let wanted: Vec<u32> = (0..2048).filter(|r| r % 37 == 5).chain([2047]).collect();
    for (values, nulls, sparse) in
        [(&prices, false, true), (&quantities, false, true), (&prices, true, false), (&seq, false, false)]
    {
        let rows: Vec<Option<Vec<u8>>> =
            values.iter().enumerate().map(|(i, v)| (!nulls || i % 5 != 0).then(|| v.clone())).collect();
        let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let (offs, dat) = bytes_parts(&rows);
        let mut bytes = Vec::new();
        let info = encode_vector(
            2048,
            nulls.then_some(&valid[..]),
            VectorValues::Bytes { offsets: &offs, data: &dat },
            &CompressionPolicy::default(),
            &mut bytes,
        );
        assert_eq!(info.encoding, EncodingId::ScaledNumeric);
        let mut whole = DecodedVector { keep_scaled: true, ..Default::default() };
        decode_vector(&bytes, PhysicalKind::Bytes, &mut whole).unwrap();
        // A vector decoded before (bytes, another length) leaves nothing behind.
        let mut some = DecodedVector::default();
        decode_vector(&bytes, PhysicalKind::Bytes, &mut some).unwrap();
        assert!(some.scaled.is_none());
        some.keep_scaled = true;
        assert_eq!(
            decode_vector_rows(&bytes, PhysicalKind::Bytes, &wanted, &mut some),
            Ok((bytes.len(), sparse)),
            "nulls {nulls}"
        );
        let (w, s) = (whole.scaled.as_ref().unwrap(), some.scaled.as_ref().unwrap());
        assert_eq!((some.rows, s.scale, s.m.len()), (2048, 2, 2048));
        assert_eq!(some.validity, whole.validity);
        for &r in &wanted {
            assert_eq!(s.m[r as usize], w.m[r as usize], "row {r}");
        }
        let super::decoded::DecodedValues::Bytes { offsets, data } = &some.values else {
            panic!("not bytes")
        };
        assert!(offsets.len() == 2049 && offsets.iter().all(|&o| o == 0) && data.is_empty());
        if sparse {
            // A row beyond the vector, and a truncated vector, are errors.
            assert!(decode_vector_rows(&bytes, PhysicalKind::Bytes, &[2048], &mut some).is_err());
            assert!(decode_vector_rows(&bytes[..bytes.len() - 1], PhysicalKind::Bytes, &wanted, &mut some)
                .is_err());
        }
    }
}

#[test]
fn runs_of_byte_strings_are_kept_as_a_dictionary_of_runs() {
    // Sorted host names (8 runs of 256), with and without NULLs: a reader that keeps
    // dictionaries gets each run's value once and a code per row.
    let hosts: Vec<Vec<u8>> = (0..2048).map(|i| format!("host_{:03}", i / 256).into_bytes()).collect();
    for every in [0, 5] {
        let rows = with_nulls(&hosts, every);
        let (offs, dat) = bytes_parts(&rows);
        let valid: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let nulls = valid.contains(&false).then_some(valid.as_slice());
        let mut bytes = Vec::new();
        let info = encode_vector(
            2048,
            nulls,
            VectorValues::Bytes { offsets: &offs, data: &dat },
            &CompressionPolicy::NONE,
            &mut bytes,
        );
        assert_eq!(info.encoding, EncodingId::Rle);
        let mut kept = DecodedVector { keep_dictionary: true, ..Default::default() };
        assert_eq!(decode_vector(&bytes, PhysicalKind::Bytes, &mut kept), Ok(bytes.len()));
        let d = kept.dictionary.as_ref().expect("runs kept as a dictionary");
        assert!(d.len() <= 2048 / 5 + 8, "{} entries", d.len());
        for (r, row) in rows.iter().enumerate() {
            match row {
                Some(v) => {
                    assert!(kept.is_valid(r));
                    assert_eq!(d.entry(d.codes[r] as usize), v.as_slice());
                }
                None => assert!(!kept.is_valid(r)),
            }
        }
        // Corrupt run lengths are an error, not a panic.
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 3);
        assert!(decode_vector(&cut, PhysicalKind::Bytes, &mut kept).is_err());
    }
}

#[test]
fn repeated_dictionaries_compress_their_entries_apart_and_read_back() {
    use super::point::{open_vector, PointValue};
    // TSBS's hostnames: every vector holds the same 400 entries at another phase, so its
    // entries are a zstd frame of their own (`Compression::ZstdPrefix`), the same bytes in
    // every vector; under the size goal, one zstd frame.
    let host = |i: usize| format!("host_{}", i % 400).into_bytes();
    let vectors: Vec<Vec<Option<Vec<u8>>>> = (0..3)
        .map(|v| (0..2048).map(|i| (v != 2 || i % 5 != 3).then(|| host(v * 2048 + i))).collect())
        .collect();
    let size = CompressionPolicy::for_goal(EncodingGoal::Size);
    let mut encoded = Vec::new();
    for rows in &vectors {
        let (info, bytes) = rt_bytes(rows, &CompressionPolicy::default());
        assert_eq!((info.encoding, info.compression), (EncodingId::Dictionary, Compression::ZstdPrefix));
        let (info, _) = rt_bytes(rows, &size);
        assert_eq!((info.encoding, info.compression), (EncodingId::Dictionary, Compression::Zstd));
        encoded.push(bytes);
    }
    // Read in turn with another column's vectors (whose frames also enter the cache), as
    // dictionaries and as values, whole, by chosen rows and by single rows.
    let other: Vec<Option<Vec<u8>>> =
        (0..2048).map(|i| Some(format!("rack_{}", i % 97).into_bytes())).collect();
    let (_, other) = rt_bytes(&other, &CompressionPolicy::default());
    for _ in 0..2 {
        for (rows, bytes) in vectors.iter().zip(&encoded) {
            for keep_dictionary in [true, false] {
                let mut v = DecodedVector { keep_dictionary, ..Default::default() };
                decode_vector(&other, PhysicalKind::Bytes, &mut v).unwrap();
                decode_vector(bytes, PhysicalKind::Bytes, &mut v).unwrap();
                for (i, r) in rows.iter().enumerate() {
                    let got = match (&v.dictionary, v.is_valid(i)) {
                        (_, false) => None,
                        (Some(d), true) => Some(d.entry(d.codes[i] as usize).to_vec()),
                        (None, true) => {
                            let DecodedValues::Bytes { offsets, data } = &v.values else { panic!("bytes") };
                            Some(data[offsets[i] as usize..offsets[i + 1] as usize].to_vec())
                        }
                    };
                    assert_eq!(&got, r, "row {i}");
                }
            }
            let wanted: Vec<u32> = (0..2048).step_by(101).collect();
            let mut v = DecodedVector { keep_dictionary: true, ..Default::default() };
            decode_vector_rows(bytes, PhysicalKind::Bytes, &wanted, &mut v).unwrap();
            let d = v.dictionary.as_ref().unwrap();
            for &r in &wanted {
                let want = rows[r as usize].as_deref();
                assert_eq!(v.is_valid(r as usize).then(|| d.entry(d.codes[r as usize] as usize)), want);
            }
            let point = open_vector(bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
            for (i, r) in rows.iter().enumerate().step_by(37) {
                let want = r.as_deref().map_or(PointValue::Null, PointValue::Bytes);
                assert_eq!(point.value(i), want, "row {i}");
            }
        }
    }
}
