//! Shared helpers for the codec tests: value strategies with float edge cases,
//! corruption checks, and whole-vector round trips.

use super::base::{CorruptData, Fixed, PhysicalKind};
use super::codec::{EncodingGoal, VectorValues};
use super::decoded::{DecodedValues, DecodedVector};
use super::table::EncodingId;
use super::vector::{decode_vector, encode_vector, CompressionPolicy, EncodedVectorInfo};
use proptest::prelude::*;

/// Proptest settings for this module: modest case counts, and no regression files
/// written into the source tree.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Every proper prefix of a valid encoding must be rejected. Long encodings are cut at
/// a few hundred places (all cuts near both ends) to keep the tests fast.
pub fn assert_truncations_fail(buf: &[u8], decode: impl Fn(&[u8]) -> Result<usize, CorruptData>) {
    assert_eq!(decode(buf), Ok(buf.len()), "the full encoding decodes");
    let n = buf.len();
    let cuts: Vec<usize> = if n <= 600 {
        (0..n).collect()
    } else {
        (0..200).chain((0..200).map(|i| 200 + i * (n - 400) / 200)).chain(n - 200..n).collect()
    };
    for cut in cuts {
        assert!(decode(&buf[..cut]).is_err(), "prefix of {cut}/{n} bytes decoded");
    }
}

/// Flipping bits anywhere must never panic (codecs have no checksum, so garbage may decode).
pub fn flip_never_panics(
    buf: &[u8],
    flips: &[(usize, u8)],
    decode: impl Fn(&[u8]) -> Result<usize, CorruptData>,
) {
    if buf.is_empty() {
        return;
    }
    let mut bad = buf.to_vec();
    for &(pos, mask) in flips {
        bad[pos % buf.len()] ^= mask.max(1);
        let _ = decode(&bad);
    }
}

pub fn flips() -> impl Strategy<Value = Vec<(usize, u8)>> {
    proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)
}

/// Doubles with the cases that break naive codecs: NaN payloads, -0.0, infinities,
/// subnormals, decimal-looking values, runs.
pub fn any_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        3 => any::<u64>().prop_map(f64::from_bits),
        3 => (-1_000_000i64..1_000_000).prop_map(|v| v as f64 / 100.0),
        1 => (0u64..1 << 52).prop_map(|m| f64::from_bits(0x7FF0_0000_0000_0001 | m)),
        1 => prop_oneof![
            Just(-0.0f64), Just(0.0), Just(f64::INFINITY), Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE), Just(f64::from_bits(1)), Just(f64::MAX), Just(f64::MIN),
            Just(f64::NAN), Just(f64::from_bits(0xFFF8_0000_0000_0000 | 12345)), Just(1e300),
        ],
        1 => (0u64..1 << 52).prop_map(f64::from_bits), // subnormals
    ]
}

pub fn any_f32() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        3 => any::<u32>().prop_map(f32::from_bits),
        3 => (-1_000_000i32..1_000_000).prop_map(|v| v as f32 / 100.0),
        1 => (0u32..1 << 23).prop_map(|m| f32::from_bits(0x7F80_0001 | m)),
        1 => prop_oneof![
            Just(-0.0f32), Just(0.0), Just(f32::INFINITY), Just(f32::NEG_INFINITY),
            Just(f32::MIN_POSITIVE), Just(f32::from_bits(1)), Just(f32::MAX), Just(f32::NAN),
        ],
    ]
}

pub fn any_i64() -> impl Strategy<Value = i64> + Clone {
    prop_oneof![any::<i64>(), -100i64..100, Just(i64::MIN), Just(i64::MAX), (0i64..1 << 40),]
}

/// Vectors that sometimes repeat values (runs and low cardinality matter to codecs).
pub fn vec_with_repeats<T: Clone + std::fmt::Debug>(
    elem: impl Strategy<Value = T> + Clone,
    max_len: usize,
) -> impl Strategy<Value = Vec<T>> {
    prop_oneof![
        proptest::collection::vec(elem.clone(), 0..max_len),
        // A few distinct values, each repeated in runs.
        (
            proptest::collection::vec(elem, 1..5),
            proptest::collection::vec((any::<prop::sample::Index>(), 1usize..40), 0..20)
        )
            .prop_map(|(pool, runs)| {
                runs.into_iter().flat_map(|(i, n)| std::iter::repeat_n(i.get(&pool).clone(), n)).collect()
            }),
    ]
}

pub fn bits_eq<T: Fixed>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits64() == y.to_bits64())
}

/// Offsets + data for a list of byte strings.
pub fn to_offsets(values: &[Vec<u8>]) -> (Vec<u32>, Vec<u8>) {
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    for v in values {
        data.extend_from_slice(v);
        offsets.push(data.len() as u32);
    }
    (offsets, data)
}

pub fn any_bytes_vec(max_len: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec_with_repeats(proptest::collection::vec(any::<u8>(), 0..20), max_len)
}

/// `sources` interleaved random walks (time-major: value i is source i % sources),
/// each starting uniform in [0, 100) and moving by N(0, sigma) steps clamped to
/// [0, 100]. Deterministic for a seed.
pub fn interleaved_walks(sources: usize, len: usize, seed: u64, sigma: f64) -> Vec<f64> {
    let mut x = seed;
    let mut unit = move || {
        // splitmix64
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut state: Vec<f64> = (0..sources).map(|_| unit() * 100.0).collect();
    let mut out: Vec<f64> = state.clone();
    while out.len() < len {
        for v in state.iter_mut() {
            // Marsaglia's polar method (one of the pair).
            let step = loop {
                let (a, b) = (2.0 * unit() - 1.0, 2.0 * unit() - 1.0);
                let s = a * a + b * b;
                if s > 0.0 && s < 1.0 {
                    break a * (-2.0 * s.ln() / s).sqrt();
                }
            };
            *v = (*v + step * sigma).clamp(0.0, 100.0);
            out.push(*v);
        }
    }
    out.truncate(len);
    out
}

/// Doubles every float codec must carry bit-exactly: NaNs with payloads, signed zeros,
/// infinities, positive and negative subnormals, the extremes, and an inexact decimal.
pub fn special_f64s() -> Vec<f64> {
    vec![
        f64::NAN,
        f64::from_bits(0x7FF0_0000_0000_0001),
        f64::from_bits(0xFFF8_0000_DEAD_BEEF),
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(1),
        f64::from_bits(0x800F_FFFF_FFFF_FFFF),
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        1e300,
        -1e-300,
        0.1 + 0.2,
    ]
}

/// `n` integers spread over the whole 64-bit range (xorshift from `seed`, not 0): what
/// no lightweight encoding or compression makes smaller.
pub fn noise_i64(n: usize, seed: u64) -> Vec<Option<i64>> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Some(x as i64)
        })
        .collect()
}

// Whole vectors: encoded with `encode_vector`, decoded and checked row by row.

pub fn validity_of<T>(rows: &[Option<T>]) -> Option<Vec<bool>> {
    let v: Vec<bool> = rows.iter().map(Option::is_some).collect();
    v.contains(&false).then_some(v)
}

/// `rows` (None = NULL) encoded as one vector; `values` are the non-null ones.
pub fn encode_rows<T>(
    rows: &[Option<T>],
    values: VectorValues<'_>,
    policy: &CompressionPolicy,
) -> (EncodedVectorInfo, Vec<u8>) {
    let validity = validity_of(rows);
    let mut buf = Vec::new();
    let info = encode_vector(rows.len() as u32, validity.as_deref(), values, policy, &mut buf);
    assert_eq!(info.stored_bytes, buf.len());
    (info, buf)
}

/// `rows` encoded as one vector of integers.
pub fn encode_ints(rows: &[Option<i64>], policy: &CompressionPolicy) -> Vec<u8> {
    let dense: Vec<i64> = rows.iter().flatten().copied().collect();
    encode_rows(rows, VectorValues::Int(&dense), policy).1
}

/// Decodes `buf` (followed by other bytes, then alone into the same `DecodedVector`)
/// and checks the row count, the validity and, with `check`, the values.
fn check_decoded<T>(rows: &[Option<T>], buf: &[u8], kind: PhysicalKind, check: impl Fn(&DecodedValues)) {
    let mut out = DecodedVector::default();
    let mut with_tail = buf.to_vec();
    with_tail.extend_from_slice(b"trailing");
    for input in [&with_tail[..], buf] {
        assert_eq!(decode_vector(input, kind, &mut out), Ok(buf.len()));
        assert_eq!(out.rows as usize, rows.len());
        assert_eq!(out.validity, validity_of(rows));
        check(&out.values);
    }
}

/// Round trip of integer rows (None = NULL); returns what `encode_vector` made.
pub fn rt_int(rows: &[Option<i64>], policy: &CompressionPolicy) -> (EncodedVectorInfo, Vec<u8>) {
    let dense: Vec<i64> = rows.iter().flatten().copied().collect();
    let encoded = encode_rows(rows, VectorValues::Int(&dense), policy);
    let want: Vec<i64> = rows.iter().map(|r| r.unwrap_or(0)).collect();
    check_decoded(rows, &encoded.1, PhysicalKind::Int, |v| {
        assert!(matches!(v, DecodedValues::Int(v) if *v == want), "{v:?}")
    });
    encoded
}

pub fn rt_f64(rows: &[Option<f64>], policy: &CompressionPolicy) -> (EncodedVectorInfo, Vec<u8>) {
    let dense: Vec<f64> = rows.iter().flatten().copied().collect();
    let encoded = encode_rows(rows, VectorValues::Float64(&dense), policy);
    let want: Vec<f64> = rows.iter().map(|r| r.unwrap_or(0.0)).collect();
    check_decoded(rows, &encoded.1, PhysicalKind::Float64, |v| {
        assert!(matches!(v, DecodedValues::Float64(v) if bits_eq(v, &want)), "{v:?}")
    });
    encoded
}

pub fn rt_f32(rows: &[Option<f32>], policy: &CompressionPolicy) -> (EncodedVectorInfo, Vec<u8>) {
    let dense: Vec<f32> = rows.iter().flatten().copied().collect();
    let encoded = encode_rows(rows, VectorValues::Float32(&dense), policy);
    let want: Vec<f32> = rows.iter().map(|r| r.unwrap_or(0.0)).collect();
    check_decoded(rows, &encoded.1, PhysicalKind::Float32, |v| {
        assert!(matches!(v, DecodedValues::Float32(v) if bits_eq(v, &want)), "{v:?}")
    });
    encoded
}

pub fn rt_bytes(rows: &[Option<Vec<u8>>], policy: &CompressionPolicy) -> (EncodedVectorInfo, Vec<u8>) {
    let dense: Vec<Vec<u8>> = rows.iter().flatten().cloned().collect();
    let (offsets, data) = to_offsets(&dense);
    let encoded = encode_rows(rows, VectorValues::Bytes { offsets: &offsets, data: &data }, policy);
    check_decoded(rows, &encoded.1, PhysicalKind::Bytes, |v| {
        let DecodedValues::Bytes { offsets, data } = v else { panic!("kind") };
        assert_eq!(offsets.len(), rows.len() + 1);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(&data[offsets[i] as usize..offsets[i + 1] as usize], r.as_deref().unwrap_or(&[]));
        }
    });
    // Decoded for a scan's slot: short images stay where they lie, each row's a short
    // varlena (VARSIZE_1B counts the header) of its value; other vectors as above.
    let mut v = DecodedVector { keep_images: true, ..Default::default() };
    decode_vector(&encoded.1, PhysicalKind::Bytes, &mut v).unwrap();
    assert_eq!(
        v.images.is_some(),
        encoded.0.encoding == EncodingId::ShortImages && !rows.iter().all(Option::is_none)
    );
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(v.is_valid(i), r.is_some());
        match (&v.images, r) {
            (Some(images), Some(r)) => {
                let s = images.starts[i] as usize;
                assert_eq!((images.data[s] & 1, (images.data[s] >> 1) as usize), (1, r.len() + 1));
                assert_eq!(&images.data[s + 1..s + 1 + r.len()], &r[..]);
            }
            (None, Some(r)) => {
                let DecodedValues::Bytes { offsets, data } = &v.values else { panic!("kind") };
                assert_eq!(&data[offsets[i] as usize..offsets[i + 1] as usize], &r[..]);
            }
            _ => {}
        }
    }
    encoded
}

/// `values` as rows, rows 1, 1 + every, 1 + 2 * every ... NULL (none for `every == 0`).
pub fn with_nulls<T: Clone>(values: &[T], every: usize) -> Vec<Option<T>> {
    values.iter().enumerate().map(|(i, v)| (every == 0 || i % every != 1).then(|| v.clone())).collect()
}

pub fn policies() -> [CompressionPolicy; 5] {
    [
        CompressionPolicy::default(),
        CompressionPolicy::NONE,
        CompressionPolicy { lz4: true, zstd: false, zstd_level: 3, goal: EncodingGoal::Scan },
        CompressionPolicy { lz4: false, zstd: true, zstd_level: 1, goal: EncodingGoal::Size },
        CompressionPolicy::for_goal(EncodingGoal::Size),
    ]
}

pub fn opt<T: std::fmt::Debug + Clone>(
    s: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = Option<T>> + Clone {
    prop_oneof![4 => s.prop_map(Some), 1 => Just(None)]
}

pub fn any_policy() -> impl Strategy<Value = CompressionPolicy> {
    (any::<bool>(), any::<bool>(), 1i32..5, any::<bool>()).prop_map(|(lz4, zstd, zstd_level, size)| {
        CompressionPolicy {
            lz4,
            zstd,
            zstd_level,
            goal: if size { EncodingGoal::Size } else { EncodingGoal::Scan },
        }
    })
}
