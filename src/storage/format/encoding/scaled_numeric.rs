//! Scaled numerics: byte strings that are all `numeric` values of one display scale,
//! stored as that scale and their mantissas (value = m / 10^scale) in an integer codec.
//!
//! The codec looks at bytes only, never at the column's type: it applies when every
//! value parses as a finite numeric, all share one display scale, every mantissa fits
//! an i64, and the bytes PostgreSQL's make_result writes for (m, scale)
//! (`numeric::write_canonical`) are exactly the stored bytes. Decoding writes those
//! bytes again, so any vector it accepts (a text column's included) reads back
//! byte for byte; NaN, infinities, mixed scales, non-canonical bytes and mantissas
//! beyond 64 bits leave the vector to the other codecs. A reader that wants numbers
//! (`DecodedVector::keep_scaled`) takes the mantissas straight from `decode_mantissas`,
//! with no bytes made and nothing parsed per row.
//!
//! # Payload
//!
//! ```text
//! offset size
//!  0     2   display scale (u16, at most NUMERIC_DSCALE_MAX)
//!  2     1   encoding id of the mantissas (an integer codec of the table)
//!  3     -   the `count` mantissas (i64), as that codec writes them
//! ```

use std::any::Any;

use super::base::{CorruptData, PhysicalKind, Scratch};
use super::codec::EncodingGoal;
use super::codec::{plan_of, Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, WRONG_KIND};
use super::table::{encode_chosen, EncodingId};
use super::{bitpack, dictionary};
use crate::storage::format::numeric::{self, Parsed, DSCALE_MAX};

/// What `estimate` found: the scale and the mantissas already encoded.
struct Plan {
    scale: u16,
    id: EncodingId,
    mantissas: Vec<u8>,
}

/// Bytes before the mantissas: the display scale and their encoding id.
pub(super) const HEADER: usize = 3;

/// The values' common display scale and mantissas, if the codec applies to them.
pub fn mantissas(offsets: &[u32], data: &[u8]) -> Option<(u16, Vec<i64>)> {
    let count = offsets.len().checked_sub(1)?;
    let mut out = Vec::with_capacity(count);
    let mut scale = None;
    let mut canonical = Vec::with_capacity(32);
    for w in offsets.windows(2) {
        let bytes = &data[w[0] as usize..w[1] as usize];
        let Parsed::Finite { negative, weight, dscale, digits } = numeric::parse(bytes)? else {
            return None;
        };
        if *scale.get_or_insert(dscale) != dscale || dscale > DSCALE_MAX {
            return None;
        }
        let (m, _) = numeric::scaled(negative, weight, dscale, digits)?;
        let m = i64::try_from(m).ok()?;
        // Only bytes that decoding writes back exactly.
        canonical.clear();
        numeric::write_canonical(m as i128, dscale, &mut canonical);
        if canonical != bytes {
            return None;
        }
        out.push(m);
    }
    Some((scale?, out))
}

fn estimate(a: &Analysis<'_>, bound: usize) -> Option<Estimate> {
    let Analysis::Bytes { offsets, data, stats } = *a else { return None };
    // A numeric's bytes are a 2-byte header and 2-byte digits: an odd length or one
    // below 2 is something else, seen without parsing.
    if stats.min_len < 2 {
        return None;
    }
    let (scale, m) = mantissas(offsets, data)?;
    let mut encoded = Vec::new();
    // Integer codecs that are smallest are also fast to decode: the scan goal's choice
    // serves either goal (the plan has no room for the table's).
    let id = encode_chosen(VectorValues::Int(&m), EncodingGoal::Scan, &mut encoded);
    let size = HEADER + encoded.len();
    (size < bound).then(|| Estimate::planned(size, Plan { scale, id, mantissas: encoded }))?
}

fn encode(values: VectorValues<'_>, plan: &dyn Any, out: &mut Vec<u8>) {
    debug_assert!(matches!(values, VectorValues::Bytes { .. }));
    let plan: &Plan = plan_of(plan);
    out.extend_from_slice(&plan.scale.to_le_bytes());
    out.push(plan.id as u8);
    out.extend_from_slice(&plan.mantissas);
}

/// Decodes `count` mantissas into `out` (appended) and returns the bytes consumed and
/// the display scale.
pub fn decode_mantissas(
    input: &[u8],
    count: usize,
    out: &mut Vec<i64>,
    scratch: &mut Scratch,
) -> Result<(usize, u16), CorruptData> {
    let (scale, id) = read_header(input)?;
    let used = (id.codec().decode)(&input[HEADER..], count, Output::Int(out), scratch)?;
    Ok((HEADER + used, scale))
}

/// The display scale and the mantissas' encoding at the front of a payload, checked.
pub(super) fn read_header(input: &[u8]) -> Result<(u16, EncodingId), CorruptData> {
    let head = input.get(..HEADER).ok_or(CorruptData("scaled numerics truncated"))?;
    let scale = u16::from_le_bytes([head[0], head[1]]);
    if scale > DSCALE_MAX {
        return Err(CorruptData("scaled numerics: display scale out of range"));
    }
    let id = EncodingId::from_u8(head[2]).ok_or(CorruptData("scaled numerics: unknown encoding"))?;
    if !id.applies_to(PhysicalKind::Int) {
        return Err(CorruptData("scaled numerics: mantissas not in an integer encoding"));
    }
    Ok((scale, id))
}

/// `decode_mantissas` for a caller that reads only rows `rows` (ascending, each below
/// `count`) of a vector without NULLs, whose `count` mantissas are bit-packed on a
/// frame of reference or dictionary codes: writes those rows' alone into `out`
/// (`count` slots; the others are left as they are) and returns the bytes consumed
/// and the display scale. None (nothing written) when the mantissas are in another
/// codec: the caller decodes them all.
pub fn decode_mantissas_at(
    input: &[u8],
    count: usize,
    rows: &[u32],
    out: &mut [i64],
    scratch: &mut Scratch,
) -> Result<Option<(usize, u16)>, CorruptData> {
    let head = input.get(..HEADER).ok_or(CorruptData("scaled numerics truncated"))?;
    let scale = u16::from_le_bytes([head[0], head[1]]);
    if scale > DSCALE_MAX {
        return Err(CorruptData("scaled numerics: display scale out of range"));
    }
    if out.len() < count {
        return Ok(None);
    }
    let body = &input[HEADER..];
    let used = match EncodingId::from_u8(head[2]) {
        Some(EncodingId::BitPack) => bitpack::decode_for_at(body, count, rows, |r, m| out[r] = m)?,
        Some(EncodingId::Dictionary) => {
            dictionary::decode_ints_at(body, count, rows, scratch, |r, m| out[r] = m)?
        }
        _ => return Ok(None),
    };
    Ok(Some((HEADER + used, scale)))
}

/// Decodes `count` values as their bytes: offsets (ends appended after each value,
/// from `data.len()`) and data.
fn decode_bytes(
    input: &[u8],
    count: usize,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    scratch: &mut Scratch,
) -> Result<usize, CorruptData> {
    let mut m = std::mem::take(&mut scratch.ints);
    m.clear();
    let decoded = decode_mantissas(input, count, &mut m, scratch);
    if let Ok((_, scale)) = decoded {
        // Each value is at most 2 + 2 * 6 bytes (an i64 has 19 digits, 6 base-10000
        // digits once padded), so no vector of them nears MAX_DECODED_BYTES.
        ends.reserve(count);
        data.reserve(count * 10);
        for &v in &m {
            numeric::write_canonical(v as i128, scale, data);
            ends.push(data.len() as u32);
        }
    }
    scratch.ints = m;
    decoded.map(|(used, _)| used)
}

/// The codec table's entry: byte strings only, tried on every vector (a value that is
/// no numeric refuses at once).
pub static SCALED_NUMERIC: Codec = Codec {
    kinds: &[PhysicalKind::Bytes],
    tier: Tier::Cheap,
    decode_ns: 0.3,
    estimate,
    encode,
    decode: |input, count, out, scratch| match out {
        Output::Bytes { offsets, data } => decode_bytes(input, count, offsets, data, scratch),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::{
        decode_vector, encode_vector, CompressionPolicy, DecodedValues, DecodedVector,
    };

    use crate::storage::format::numeric::stored_literal as stored;

    fn values(items: &[Vec<u8>]) -> (Vec<u32>, Vec<u8>) {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in items {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        (offsets, data)
    }

    /// Encodes the rows (None = NULL) as one vector; returns its encoding and the rows
    /// read back as bytes.
    fn round_trip(rows: &[Option<Vec<u8>>]) -> (EncodingId, Vec<Option<Vec<u8>>>) {
        let present: Vec<Vec<u8>> = rows.iter().flatten().cloned().collect();
        let (offsets, data) = values(&present);
        let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let validity = validity.contains(&false).then_some(validity);
        let mut buf = Vec::new();
        let info = encode_vector(
            rows.len() as u32,
            validity.as_deref(),
            VectorValues::Bytes { offsets: &offsets, data: &data },
            &CompressionPolicy::default(),
            &mut buf,
        );
        let mut out = DecodedVector::default();
        decode_vector(&buf, PhysicalKind::Bytes, &mut out).unwrap();
        let DecodedValues::Bytes { offsets, data } = &out.values else { panic!() };
        let back = (0..rows.len())
            .map(|r| out.is_valid(r).then(|| data[offsets[r] as usize..offsets[r + 1] as usize].to_vec()))
            .collect();
        (info.encoding, back)
    }

    fn prices(n: usize) -> Vec<Option<Vec<u8>>> {
        (0..n).map(|i| Some(stored(&format!("{}.{:02}", 900 + i * 37 % 100_000, i * 7 % 100)))).collect()
    }

    #[test]
    fn one_scale_numerics_round_trip_byte_for_byte() {
        let mut rows = prices(1000);
        rows[3] = None;
        rows[500] = None;
        rows[7] = Some(stored("-0.05"));
        rows[8] = Some(stored("0.00"));
        rows[9] = Some(stored("-123456.78"));
        let (id, back) = round_trip(&rows);
        assert_eq!(id, EncodingId::ScaledNumeric);
        assert_eq!(back, rows);
        // The extremes of 64-bit mantissas.
        let extremes: Vec<_> = ["-92233720368547758.08", "92233720368547758.07", "0.00", "-0.01"]
            .iter()
            .cycle()
            .take(64)
            .map(|t| Some(stored(t)))
            .collect();
        assert_eq!(round_trip(&extremes), (EncodingId::ScaledNumeric, extremes));
        // Few distinct values (a discount column): smaller than their dictionary.
        let discounts: Vec<_> = (0..1000).map(|i| Some(stored(&format!("0.{:02}", i % 11)))).collect();
        let (id, back) = round_trip(&discounts);
        assert_eq!((id, back), (EncodingId::ScaledNumeric, discounts));
        // Display scale 0 and large weights.
        let ints: Vec<_> = (0..300).map(|i| Some(stored(&format!("{}", i * 1_000_003 - 7)))).collect();
        assert_eq!(round_trip(&ints), (EncodingId::ScaledNumeric, ints));
    }

    #[test]
    fn refuses_what_it_cannot_write_back() {
        let ok: Vec<Vec<u8>> = (0..100).map(|i| stored(&format!("{i}.50"))).collect();
        assert!(mantissas(&values(&ok).0, &values(&ok).1).is_some());
        let refused = |bad: Vec<u8>| {
            let mut v = ok.clone();
            v[40] = bad;
            let (offsets, data) = values(&v);
            assert!(mantissas(&offsets, &data).is_none());
            // The vector still round-trips, in another codec.
            let rows: Vec<_> = v.into_iter().map(Some).collect();
            let (id, back) = round_trip(&rows);
            assert_ne!(id, EncodingId::ScaledNumeric);
            assert_eq!(back, rows);
        };
        refused(stored("NaN"));
        refused(stored("Infinity"));
        refused(stored("-Infinity"));
        refused(stored("1.5")); // another display scale
        refused(stored("92233720368547758.08")); // i64::MAX + 1 at scale 2
        refused(stored("123456789012345678901234567890.00"));
        // 1.50 with the long header: a numeric, but not the bytes make_result writes.
        let mut long = 2u16.to_le_bytes().to_vec();
        long.extend_from_slice(&0i16.to_le_bytes());
        long.extend_from_slice(&1u16.to_le_bytes());
        long.extend_from_slice(&5000u16.to_le_bytes());
        refused(long);
        // A trailing zero digit, and a digit past the display scale.
        let mut trailing = stored("1.50");
        trailing.extend_from_slice(&0u16.to_le_bytes());
        refused(trailing);
        let mut past = stored("1.50");
        past.truncate(4);
        past.extend_from_slice(&5001u16.to_le_bytes());
        refused(past);
        // Text is no numeric.
        refused(b"hello".to_vec());
        refused(Vec::new());
    }

    #[test]
    fn text_that_happens_to_parse_reads_back_unchanged() {
        // Two bytes 0x80 0x80 are the short header of a zero with display scale 1:
        // canonical, so the codec may take them, and must give them back.
        let rows: Vec<_> = (0..50).map(|_| Some(vec![0x80u8, 0x80])).collect();
        let (id, back) = round_trip(&rows);
        assert_eq!(id, EncodingId::ScaledNumeric);
        assert_eq!(back, rows);
    }

    #[test]
    fn mantissas_come_straight_out_and_corruption_is_reported() {
        let rows = prices(200);
        let present: Vec<Vec<u8>> = rows.iter().flatten().cloned().collect();
        let (offsets, data) = values(&present);
        let (scale, m) = mantissas(&offsets, &data).unwrap();
        assert_eq!(scale, 2);
        let mut buf = Vec::new();
        let plan =
            estimate(&Analysis::of(VectorValues::Bytes { offsets: &offsets, data: &data }), usize::MAX)
                .unwrap()
                .plan;
        encode(VectorValues::Bytes { offsets: &offsets, data: &data }, &*plan, &mut buf);
        let mut out = Vec::new();
        let mut scratch = Scratch::default();
        assert_eq!(decode_mantissas(&buf, m.len(), &mut out, &mut scratch), Ok((buf.len(), 2)));
        assert_eq!(out, m);
        super::super::test_util::assert_truncations_fail(&buf, |b| {
            let (mut e, mut d) = (vec![0], Vec::new());
            decode_bytes(b, m.len(), &mut e, &mut d, &mut Scratch::default())
        });
        let mut bad = buf.clone();
        bad[0..2].copy_from_slice(&0x4000u16.to_le_bytes());
        assert!(decode_mantissas(&bad, m.len(), &mut out, &mut scratch).is_err());
        let mut bad = buf.clone();
        bad[2] = EncodingId::ScaledNumeric as u8;
        assert!(decode_mantissas(&bad, m.len(), &mut out, &mut scratch).is_err());
        bad[2] = 200;
        assert!(decode_mantissas(&bad, m.len(), &mut out, &mut scratch).is_err());
    }
}
