//! The codec table: every encoding a vector may be stored in, with the id its header
//! holds, and the one place that picks the encoding from the data. Adding a codec is
//! its file (ending in its `Codec`) and one line in the table below.
//!
//! # Choosing
//!
//! One statistics pass per vector (`codec::Analysis`) yields the exact encoded size of
//! the cheap-to-estimate codecs (plain, frame of reference, delta, delta-of-delta,
//! run-length, Gorilla); ALP and ALP_rd estimate from a sample; for floats that are not
//! decimal, the lag-delta codec first detects the lag (the distance at which values agree
//! most: the number of interleaved series) from a sample, then costs its residuals
//! exactly; the dictionary is built only while it can still win (and not at all when a
//! sample of 128 values has no repeat); byte strings that are all canonical numerics of
//! one display scale are costed as their mantissas in the best integer codec
//! (`scaled_numeric`). The smallest wins. The vector layer then tries
//! general compression on it (`vector`).

use super::base::PhysicalKind;
use super::codec::{Analysis, Codec, EncodingGoal, Tier, VectorValues};
use super::{
    alp, alp_rd_lanes, bitpack, bytesplit, delta, dictionary, gorilla, lagdelta, plain, rle, scaled_numeric,
    short_images,
};
use crate::storage::format::fallible;

/// Declares `EncodingId` (the stored ids; Rust rejects a repeated one) and `CODECS`
/// from one line per codec.
macro_rules! codec_table {
    ($($(#[$doc:meta])* $name:ident = $id:literal => $codec:path,)*) => {
        /// How a vector's non-null values are encoded (stored in the vector header: an id
        /// is never renumbered or reused).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum EncodingId {
            $($(#[$doc])* $name = $id,)*
        }

        impl EncodingId {
            pub fn from_u8(v: u8) -> Option<Self> {
                match v {
                    $($id => Some(Self::$name),)*
                    _ => None,
                }
            }

            /// The codec's function table.
            pub fn codec(self) -> &'static Codec {
                match self {
                    $(Self::$name => &$codec,)*
                }
            }
        }

        /// Every codec, in the order the chooser tries them within a tier: on equal
        /// sizes the earlier wins, so those cheaper to decode come first.
        pub static CODECS: &[EncodingId] = &[$(EncodingId::$name,)*];
    };
}

codec_table! {
    /// Frame of reference + bit packing.
    BitPack = 1 => bitpack::FRAME_OF_REFERENCE,
    Plain = 0 => plain::PLAIN,
    /// Numerics of one display scale as their scale and integer mantissas.
    ScaledNumeric = 11 => scaled_numeric::SCALED_NUMERIC,
    Rle = 4 => rle::RLE,
    Delta = 2 => delta::DELTA,
    DeltaOfDelta = 3 => delta::DELTA_OF_DELTA,
    /// Decimal ALP.
    Alp = 8 => alp::ALP,
    Gorilla = 7 => gorilla::GORILLA,
    /// ALP for full-precision ("real") doubles.
    AlpRd = 9 => alp::ALP_RD,
    /// ALP_rd with its streams in FastLanes blocks.
    AlpRdLanes = 13 => alp_rd_lanes::ALP_RD_LANES,
    /// Floats predicted by the value `lag` positions earlier.
    LagDelta = 10 => lagdelta::LAG_DELTA,
    Dictionary = 5 => dictionary::DICTIONARY,
    ByteSplit = 6 => bytesplit::BYTE_SPLIT,
    /// Byte strings as short varlena images.
    ShortImages = 12 => short_images::SHORT_IMAGES,
}

impl EncodingId {
    /// Whether this encoding exists for `kind`.
    pub fn applies_to(self, kind: PhysicalKind) -> bool {
        self.codec().applies_to(kind)
    }
}

/// Chooses the lightweight encoding of `values` for `goal` and appends the payload to
/// `buf`: the table is walked tier by tier, each applicable codec estimates its size,
/// the lowest score wins (the earlier on ties) and writes the values. A score is the
/// size, plus for scans the codec's decode time weighed in bytes
/// (`EncodingGoal::bytes_per_ns`).
pub fn encode_chosen(values: VectorValues<'_>, goal: EncodingGoal, buf: &mut Vec<u8>) -> EncodingId {
    if values.is_empty() {
        return EncodingId::Plain;
    }
    // One value (a single-row INSERT's): plain stores it in at most 8 bytes more than the
    // best codec would (a byte string's two offsets), and analysing it cost more than the
    // rest of its encoding.
    if values.len() == 1 {
        fallible::reserve(buf, values.plain_bytes());
        (EncodingId::Plain.codec().encode)(values, &(), buf);
        return EncodingId::Plain;
    }
    let kind = values.kind();
    let per_ns = goal.bytes_per_ns(kind) * values.len() as f64;
    let analysis = Analysis::of(values);
    let mut best = None;
    let (mut best_size, mut best_score) = (usize::MAX, f64::INFINITY);
    let mut plain_size = usize::MAX;
    for tier in [Tier::Cheap, Tier::Costly, Tier::Bounded] {
        // A small row group's values are encoded again when VACUUM merges it: the cheap
        // codecs only (a dictionary hashes every value; it cost a 100-row INSERT more
        // than the rest of its encoding).
        if tier != Tier::Cheap && goal == EncodingGoal::Quick {
            continue;
        }
        // The full-precision codecs only pay off when the values are not (mostly) decimal.
        if tier == Tier::Costly && best_size.saturating_mul(10) <= values.plain_bytes() * 6 {
            continue;
        }
        for &id in CODECS {
            let codec = id.codec();
            if codec.tier != tier || !codec.applies_to(kind) {
                continue;
            }
            // To win, a codec must be smaller than the best score less its own decode time.
            let time = per_ns * codec.decode_ns as f64;
            let bound =
                if best_score.is_finite() { (best_score - time).max(0.0) as usize } else { usize::MAX };
            let Some(e) = (codec.estimate)(&analysis, bound) else { continue };
            if id == EncodingId::Plain {
                plain_size = e.size;
            }
            let score = e.size as f64 + e.decode_ns.map_or(time, |ns| per_ns * ns as f64);
            if score < best_score {
                (best_size, best_score) = (e.size, score);
                best = Some((id, e.plan));
            }
        }
    }
    let (id, plan) = best.expect("plain applies to every kind");
    // The estimate is the encoded size: the codec's pushes then do not grow the buffer,
    // whose room (a large value's bytes) is taken fallibly here.
    fallible::reserve(buf, best_size);
    let start = buf.len();
    (id.codec().encode)(values, &*plan, buf);
    // Sampled sizes (ALP) may be off; never store more than plain.
    if buf.len() - start > plain_size {
        buf.truncate(start);
        (EncodingId::Plain.codec().encode)(values, &(), buf);
        return EncodingId::Plain;
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_goal_tries_the_cheap_codecs_only() {
        // Full-precision values: the scan goal picks a codec of the costly tier.
        let mut x = 0.5f64;
        let values: Vec<f64> = (0..2048)
            .map(|_| {
                x = (x * 3.9 * (1.0 - x)).clamp(0.01, 0.99);
                100.0 + x
            })
            .collect();
        let tier = |goal| {
            let mut buf = Vec::new();
            encode_chosen(VectorValues::Float64(&values), goal, &mut buf).codec().tier
        };
        assert_eq!(tier(EncodingGoal::Scan), Tier::Costly);
        assert_eq!(tier(EncodingGoal::Quick), Tier::Cheap);
        // Few distinct values: a dictionary for scans, the cheap codecs for a small group.
        let few: Vec<i64> = (0..2048).map(|i| [7_000_003i64, -5, 1 << 40][i * 7 % 3]).collect();
        let chosen = |goal| encode_chosen(VectorValues::Int(&few), goal, &mut Vec::new());
        assert_eq!(chosen(EncodingGoal::Scan), EncodingId::Dictionary);
        assert_eq!(chosen(EncodingGoal::Quick).codec().tier, Tier::Cheap);
    }

    #[test]
    fn one_value_is_stored_plain_within_8_bytes_of_any_codec() {
        let ints = [0i64, 1, -1, i64::MAX, 1_700_000_000_000_000];
        let floats = [0.0f64, 0.5, -3.25, f64::MAX, 0.1 + 0.2];
        let texts: [&[u8]; 4] = [b"", b"host_42", b"12.50", &[b'x'; 300]];
        let mut cases: Vec<Vec<u8>> = Vec::new();
        let mut check = |values: VectorValues<'_>| {
            let mut buf = Vec::new();
            for goal in [EncodingGoal::Quick, EncodingGoal::Scan, EncodingGoal::Size] {
                buf.clear();
                assert_eq!(encode_chosen(values, goal, &mut buf), EncodingId::Plain);
            }
            let plain = buf.len();
            let analysis = Analysis::of(values);
            for &id in CODECS.iter().filter(|id| id.applies_to(values.kind())) {
                if let Some(e) = (id.codec().estimate)(&analysis, usize::MAX) {
                    assert!(
                        e.size + 8 >= plain,
                        "{id:?} stores one value in {} bytes, plain in {plain}",
                        e.size
                    );
                }
            }
            cases.push(buf.clone());
        };
        for v in ints {
            check(VectorValues::Int(&[v]));
        }
        for v in floats {
            check(VectorValues::Float64(&[v]));
            check(VectorValues::Float32(&[v as f32]));
        }
        for t in texts {
            check(VectorValues::Bytes { offsets: &[0, t.len() as u32], data: t });
        }
        assert_eq!(cases.len(), ints.len() + 2 * floats.len() + texts.len());
    }

    #[test]
    fn ids_round_trip_and_every_kind_has_plain() {
        for &id in CODECS {
            assert_eq!(EncodingId::from_u8(id as u8), Some(id));
        }
        assert_eq!(CODECS.len(), 14);
        for kind in [PhysicalKind::Int, PhysicalKind::Float32, PhysicalKind::Float64, PhysicalKind::Bytes] {
            assert!(EncodingId::Plain.applies_to(kind));
        }
    }
}
