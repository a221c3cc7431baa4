//! A decoded vector: row-aligned values (or a dictionary's codes and entries), the
//! validity of each row, and the buffers that let `vector::decode_vector` decode vector
//! after vector without allocating. The executor's kernels and the fetches read these.

use super::base::Scratch;

/// A decoded vector, row-aligned: `values` has `rows` entries and NULL rows hold
/// 0 / 0.0 / an empty byte string.
///
/// Create one with `DecodedVector::default()` and pass it to `decode_vector` again and
/// again: it keeps its buffers (values, offsets, data, and private decode scratch such
/// as the codecs' buffers; the decompression buffer is one per thread), so a scan
/// decodes without allocating once warmed up.
#[derive(Debug, Clone, Default)]
pub struct DecodedVector {
    pub rows: u32,
    /// `None` when no row is NULL; otherwise one entry per row, `true` = not null.
    pub validity: Option<Vec<bool>>,
    pub values: DecodedValues,
    /// Set by the caller before decoding: a dictionary-encoded vector of byte strings is
    /// then decoded into `dictionary` only, and `values` is left empty (for filters,
    /// which test each entry once, then the codes).
    pub keep_dictionary: bool,
    pub dictionary: Option<Dictionary>,
    /// Set by the caller before decoding: a vector of scaled numerics
    /// (`EncodingId::ScaledNumeric`) is then decoded into `scaled` only, its numbers,
    /// and `values` is left with `rows` empty byte strings (for the readers of numeric
    /// values: expressions, numeric filters and folds, which never need the bytes).
    pub keep_scaled: bool,
    pub scaled: Option<ScaledNumerics>,
    /// Set by the caller before decoding: a vector of byte strings stored as short
    /// varlena images (`EncodingId::ShortImages`) is then decoded into `images` only,
    /// and `values` is left with `rows` empty byte strings (for a scan's slot, whose
    /// varlena Datums point at the images).
    pub keep_images: bool,
    pub images: Option<ShortImages>,
    pub(super) scratch: DecodeScratch,
}

/// Byte strings as their short varlena images (`short_images`): row i's image starts
/// at `data[starts[i]]` (a NULL row's start is unspecified).
#[derive(Debug, Clone, Default)]
pub struct ShortImages {
    pub starts: Vec<u32>,
    pub data: Vec<u8>,
}

/// Numerics of one display scale: row i is `m[i] / 10^scale` (NULL rows: 0); each
/// is the numeric whose stored bytes are make_result's for (m, scale).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScaledNumerics {
    pub m: Vec<i64>,
    pub scale: u16,
}

impl ScaledNumerics {
    /// Row `r`'s stored bytes, appended to `out`.
    pub fn write_stored(&self, r: usize, out: &mut Vec<u8>) {
        crate::storage::format::numeric::write_canonical(self.m[r] as i128, self.scale, out)
    }
}

/// Byte strings as a dictionary: row i is entry `codes[i]` (NULL rows: 0), entry e is
/// `data[offsets[e]..offsets[e + 1]]`.
#[derive(Debug, Clone, Default)]
pub struct Dictionary {
    pub codes: Vec<u32>,
    pub offsets: Vec<u32>,
    pub data: Vec<u8>,
    /// The stored bytes `offsets` and `data` were decoded from, when a decode keeps them
    /// (`dictionary::decode_bytes_codes_into`): the next vector of a column that stores
    /// the same entries (TSBS's 400 hosts in every vector) keeps them, after one compare.
    /// Whoever changes `offsets` or `data` otherwise empties it.
    pub source: Vec<u8>,
}

impl Dictionary {
    /// Entries (`offsets`, `data`) and codes made by hand, not decoded from stored bytes.
    pub fn new(codes: Vec<u32>, offsets: Vec<u32>, data: Vec<u8>) -> Dictionary {
        Dictionary { codes, offsets, data, source: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn entry(&self, e: usize) -> &[u8] {
        &self.data[self.offsets[e] as usize..self.offsets[e + 1] as usize]
    }

    /// Whether the dictionary has entries and codes for the first `rows` rows, each
    /// naming an entry (NULL rows' codes are 0): what a caller checks once per vector
    /// before it indexes by codes without bounds checks. (A max without an early exit,
    /// which vectorizes.)
    pub fn codes_name_entries(&self, rows: usize) -> bool {
        let Some(codes) = self.codes.get(..rows) else { return false };
        !self.is_empty() && (codes.iter().fold(0u32, |a, &c| a.max(c)) as usize) < self.len()
    }
}

/// What `decode_vector` keeps between vectors.
#[derive(Debug, Clone, Default)]
pub(super) struct DecodeScratch {
    pub(super) codec: Scratch,
    /// Validity buffer kept while `validity` is `None`.
    pub(super) spare_validity: Vec<bool>,
}

/// Row-aligned values.
#[derive(Debug, Clone)]
pub enum DecodedValues {
    Int(Vec<i64>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    /// `offsets.len() == rows + 1`; row i is `data[offsets[i]..offsets[i + 1]]`.
    Bytes {
        offsets: Vec<u32>,
        data: Vec<u8>,
    },
}

impl Default for DecodedValues {
    fn default() -> Self {
        Self::Int(Vec::new())
    }
}

impl DecodedVector {
    /// A vector of these decoded rows (no decode scratch): for building one by hand.
    pub fn from_parts(
        rows: u32,
        validity: Option<Vec<bool>>,
        values: DecodedValues,
        dictionary: Option<Dictionary>,
    ) -> DecodedVector {
        DecodedVector {
            rows,
            validity,
            values,
            keep_dictionary: dictionary.is_some(),
            dictionary,
            keep_scaled: false,
            scaled: None,
            keep_images: false,
            images: None,
            scratch: DecodeScratch::default(),
        }
    }

    /// Whether row `i` is not null.
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i])
    }

    /// Moves the decoded rows out into a vector of their own, leaving this one's decode
    /// scratch (the codecs' buffers) behind for the next decode: for keeping decoded
    /// vectors without their scratch.
    pub fn take_rows(&mut self) -> DecodedVector {
        DecodedVector {
            rows: std::mem::take(&mut self.rows),
            validity: self.validity.take(),
            values: std::mem::take(&mut self.values),
            keep_dictionary: false,
            // A kept vector's entries are never decoded into again.
            dictionary: self.dictionary.take().map(|d| Dictionary { source: Vec::new(), ..d }),
            keep_scaled: false,
            scaled: self.scaled.take(),
            keep_images: false,
            images: self.images.take(),
            scratch: DecodeScratch::default(),
        }
    }

    /// Bytes of memory the decoded rows hold.
    pub fn heap_bytes(&self) -> usize {
        let values = match &self.values {
            DecodedValues::Int(v) => v.capacity() * 8,
            DecodedValues::Float32(v) => v.capacity() * 4,
            DecodedValues::Float64(v) => v.capacity() * 8,
            DecodedValues::Bytes { offsets, data } => offsets.capacity() * 4 + data.capacity(),
        };
        let dictionary = self.dictionary.as_ref().map_or(0, |d| {
            d.codes.capacity() * 4 + d.offsets.capacity() * 4 + d.data.capacity() + d.source.capacity()
        });
        let scaled = self.scaled.as_ref().map_or(0, |s| s.m.capacity() * 8);
        let images = self.images.as_ref().map_or(0, |i| i.starts.capacity() * 4 + i.data.capacity());
        values + dictionary + scaled + images + self.validity.as_ref().map_or(0, Vec::capacity)
    }
}
