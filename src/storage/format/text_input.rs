//! COPY's text fields of the common types parsed in Rust, giving the values PostgreSQL's
//! input functions give, for the plain forms that make up bulk loads: decimal integers
//! and floats, ISO dates and timestamps (with an explicit UTC offset for `timestamptz`),
//! `t`/`f` booleans, text, ASCII `char(n)`. Every other form (whitespace, `Infinity`, hexadecimal floats,
//! out-of-range values, zone names, other DateStyles...) gives None: the caller hands it
//! to PostgreSQL's input function, which accepts it or raises the error it always
//! raises. Pure, so COPY can parse columns on rayon's threads.

use super::fallible;

/// Days from 0000-03-01 (proleptic Gregorian) to the given date: Howard Hinnant's
/// `days_from_civil`, exact over the whole range used here.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe
}

/// PostgreSQL's date and timestamp epoch, 2000-01-01, as `days_from_civil` counts.
const PG_EPOCH_DAYS: i64 = 730_425;
const USECS_PER_DAY: i64 = 86_400_000_000;

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0i64, |n, d| n * 10 + (d - b'0') as i64))
}

/// A decimal integer (`[+-]digits`) within `min..=max`.
pub fn parse_int(s: &[u8], min: i64, max: i64) -> Option<i64> {
    let (negative, body) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() || body.len() > 19 || !body.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // 19 digits fit an i128 without overflow; the range check does the rest.
    let magnitude = body.iter().fold(0i128, |n, d| n * 10 + (d - b'0') as i128);
    let v = if negative { -magnitude } else { magnitude };
    (v >= min as i128 && v <= max as i128).then_some(v as i64)
}

/// The bytes of a plain decimal float: digits, sign, point, exponent, nothing else.
/// Also whether its mantissa has a non-zero digit (a zero result from one is an
/// underflow, which PostgreSQL refuses).
fn plain_decimal(s: &[u8]) -> Option<bool> {
    if s.is_empty() || !s.iter().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return None;
    }
    let mantissa = s.split(|b| *b == b'e' || *b == b'E').next().unwrap_or(s);
    Some(mantissa.iter().any(|b| (b'1'..=b'9').contains(b)))
}

/// `s` as text, once `plain_decimal` found it all ASCII.
fn ascii(s: &[u8]) -> &str {
    debug_assert!(s.is_ascii());
    // SAFETY: ASCII bytes are UTF-8 (`plain_decimal` checked every byte).
    unsafe { std::str::from_utf8_unchecked(s) }
}

/// A decimal `double precision`, as float8in reads it (both round correctly).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let nonzero = plain_decimal(s)?;
    let v: f64 = ascii(s).parse().ok()?;
    (v.is_finite() && (v != 0.0 || !nonzero)).then_some(v)
}

/// A decimal `real`, as float4in reads it.
pub fn parse_f32(s: &[u8]) -> Option<f32> {
    let nonzero = plain_decimal(s)?;
    let v: f32 = ascii(s).parse().ok()?;
    (v.is_finite() && (v != 0.0 || !nonzero)).then_some(v)
}

pub fn parse_bool(s: &[u8]) -> Option<bool> {
    match s {
        b"t" | b"true" | b"1" => Some(true),
        b"f" | b"false" | b"0" => Some(false),
        _ => None,
    }
}

/// `YYYY-MM-DD` (years 1 to 9999) as days from 2000-01-01.
fn date_days(s: &[u8]) -> Option<i64> {
    if s.len() != 10 || s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let (year, month, day) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if year < 1 || day < 1 || day > month_days {
        return None;
    }
    Some(days_from_civil(year, month, day) - PG_EPOCH_DAYS)
}

/// An ISO date, as date_in reads it: days from 2000-01-01.
pub fn parse_date(s: &[u8]) -> Option<i32> {
    date_days(s).map(|d| d as i32)
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` (or `T` between) as microseconds from 2000-01-01,
/// and what follows it.
fn timestamp_prefix(s: &[u8]) -> Option<(i64, &[u8])> {
    if s.len() < 19 || !matches!(s[10], b' ' | b'T') || s[13] != b':' || s[16] != b':' {
        return None;
    }
    let days = date_days(&s[..10])?;
    let (hour, minute, second) = (digits(&s[11..13])?, digits(&s[14..16])?, digits(&s[17..19])?);
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &s[19..];
    let mut micros = 0;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        // More than 6 digits round, as PostgreSQL does: left to it.
        if n == 0 || n > 6 {
            return None;
        }
        micros = digits(&fraction[..n])? * 10i64.pow(6 - n as u32);
        rest = &fraction[n..];
    }
    let seconds = (hour * 60 + minute) * 60 + second;
    Some((days * USECS_PER_DAY + seconds * 1_000_000 + micros, rest))
}

/// A `timestamp` without a zone, as timestamp_in reads it: microseconds from
/// 2000-01-01. (A zone after it would be ignored by PostgreSQL: left to it.)
pub fn parse_timestamp(s: &[u8]) -> Option<i64> {
    match timestamp_prefix(s)? {
        (t, []) => Some(t),
        _ => None,
    }
}

/// A `timestamptz` with an explicit offset (`+HH`, `+HH:MM`, `-...`), as
/// timestamptz_in reads it: UTC microseconds from 2000-01-01. Without an offset the
/// session's time zone decides: left to PostgreSQL.
pub fn parse_timestamptz(s: &[u8]) -> Option<i64> {
    let (local, zone) = timestamp_prefix(s)?;
    let sign = match zone.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, minutes) = match &zone[1..] {
        [h1, h2] => (digits(&[*h1, *h2])?, 0),
        [h1, h2, b':', m1, m2] => (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?),
        _ => return None,
    };
    // PostgreSQL's limits for a numeric offset (MAX_TZDISP_HOUR).
    if hours > 15 || minutes > 59 {
        return None;
    }
    Some(local - sign * (hours * 60 + minutes) * 60 * 1_000_000)
}

/// The text fields of a batch of COPY rows, copied out of PostgreSQL's line buffer so
/// that threads can parse them: per column, one (start, length) a row into `bytes`,
/// where each field is followed by a NUL (so that it is also a C string for an input
/// function). A NULL field has start `NULL_FIELD`.
#[derive(Default)]
pub struct RawFields {
    bytes: Vec<u8>,
    columns: Vec<Vec<(u32, u32)>>,
    rows: usize,
}

const NULL_FIELD: u32 = u32::MAX;

impl RawFields {
    pub fn new(columns: usize) -> RawFields {
        RawFields { bytes: Vec::new(), columns: vec![Vec::new(); columns], rows: 0 }
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.columns.iter_mut().for_each(Vec::clear);
        self.rows = 0;
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Memory the batch takes: its fields' bytes and their places.
    pub fn bytes(&self) -> usize {
        self.bytes.len() + self.rows * self.columns.len() * std::mem::size_of::<(u32, u32)>()
    }

    /// Adds a row, one field per column (None: NULL).
    pub fn push_row<'a>(&mut self, fields: impl Iterator<Item = Option<&'a [u8]>>) {
        for (column, field) in self.columns.iter_mut().zip(fields) {
            match field {
                None => fallible::push(column, (NULL_FIELD, 0)),
                Some(f) => {
                    fallible::push(column, (self.bytes.len() as u32, f.len() as u32));
                    // A field is as long as the input's line: its room is taken fallibly.
                    fallible::reserve(&mut self.bytes, f.len() + 1);
                    self.bytes.extend_from_slice(f);
                    self.bytes.push(0);
                }
            }
        }
        self.rows += 1;
    }

    /// Field `row` of `column`, without its NUL.
    pub fn field(&self, column: usize, row: usize) -> Option<&[u8]> {
        let (start, len) = self.columns[column][row];
        (start != NULL_FIELD).then(|| &self.bytes[start as usize..(start + len) as usize])
    }

    /// Field `row` of `column` with its NUL.
    pub fn field_with_nul(&self, column: usize, row: usize) -> Option<&[u8]> {
        let (start, len) = self.columns[column][row];
        (start != NULL_FIELD).then(|| &self.bytes[start as usize..=(start + len) as usize])
    }
}

/// The types whose plain text forms `parse_column` reads itself.
#[derive(Clone, Copy, Debug)]
pub enum TextForm {
    Int {
        min: i64,
        max: i64,
    },
    Float4,
    Float8,
    Bool,
    Date,
    Timestamp,
    TimestampTz,
    /// Stored as given; longer than `max_bytes` is left to PostgreSQL (varchar(n)).
    Text {
        max_bytes: Option<usize>,
    },
    /// char(n): ASCII values of at most `chars` characters, padded with spaces to it (the
    /// others, which bpcharin may cut or refuse, are left to PostgreSQL).
    Padded {
        chars: usize,
    },
}

/// Column `column` of `raw` parsed into a builder of `kind`, or None as soon as a field
/// is not in the plain form `form` reads (the caller parses the column otherwise).
pub fn parse_column(
    raw: &RawFields,
    column: usize,
    form: TextForm,
    kind: super::encoding::PhysicalKind,
) -> Option<super::column_builder::ColumnBuilder> {
    let mut b = super::column_builder::ColumnBuilder::new(kind);
    let mut padded = Vec::new();
    for row in 0..raw.rows {
        let Some(s) = raw.field(column, row) else {
            b.push_null();
            continue;
        };
        match form {
            TextForm::Int { min, max } => b.push_int(parse_int(s, min, max)?),
            TextForm::Float4 => b.push_f32(parse_f32(s)?),
            TextForm::Float8 => b.push_f64(parse_f64(s)?),
            TextForm::Bool => b.push_int(parse_bool(s)? as i64),
            TextForm::Date => b.push_int(parse_date(s)? as i64),
            TextForm::Timestamp => b.push_int(parse_timestamp(s)?),
            TextForm::TimestampTz => b.push_int(parse_timestamptz(s)?),
            TextForm::Text { max_bytes } => {
                if max_bytes.is_some_and(|m| s.len() > m) {
                    return None;
                }
                b.push_bytes(s)
            }
            TextForm::Padded { chars } => {
                if s.len() > chars || !s.is_ascii() {
                    return None;
                }
                padded.clear();
                padded.extend_from_slice(s);
                padded.resize(chars, b' ');
                b.push_bytes(&padded)
            }
        }
    }
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_fields_parse_by_column_or_give_up() {
        use crate::storage::format::encoding::PhysicalKind;
        let mut raw = RawFields::new(2);
        raw.push_row([Some(&b"1.5"[..]), Some(b"a")].into_iter());
        raw.push_row([None, Some(&b""[..])].into_iter());
        raw.push_row([Some(&b"-2"[..]), None].into_iter());
        assert_eq!(raw.rows(), 3);
        assert_eq!(raw.field(1, 0), Some(&b"a"[..]));
        assert_eq!(raw.field_with_nul(1, 0), Some(&b"a\0"[..]));
        assert_eq!(raw.field(0, 1), None);
        let floats = parse_column(&raw, 0, TextForm::Float8, PhysicalKind::Float64).unwrap();
        assert_eq!(floats.validity(0..3), &[true, false, true]);
        assert_eq!((floats.f64_at(0), floats.f64_at(1)), (1.5, -2.0));
        let text = parse_column(&raw, 1, TextForm::Text { max_bytes: Some(1) }, PhysicalKind::Bytes).unwrap();
        assert_eq!(text.bytes_at(1), b"");
        assert!(parse_column(&raw, 1, TextForm::Text { max_bytes: Some(0) }, PhysicalKind::Bytes).is_none());
        assert!(parse_column(&raw, 1, TextForm::Bool, PhysicalKind::Int).is_none());
        let chars = parse_column(&raw, 1, TextForm::Padded { chars: 3 }, PhysicalKind::Bytes).unwrap();
        assert_eq!((chars.bytes_at(0), chars.bytes_at(1)), (&b"a  "[..], &b"   "[..]));
        assert!(parse_column(&raw, 0, TextForm::Padded { chars: 2 }, PhysicalKind::Bytes).is_none());
        assert_eq!(raw.bytes(), 10 + 3 * 2 * 8);
        raw.clear();
        assert_eq!((raw.rows(), raw.bytes()), (0, 0));
    }

    #[test]
    fn integers_in_range_only() {
        assert_eq!(parse_int(b"42", i32::MIN as i64, i32::MAX as i64), Some(42));
        assert_eq!(parse_int(b"-2147483648", i32::MIN as i64, i32::MAX as i64), Some(i32::MIN as i64));
        assert_eq!(parse_int(b"+7", -10, 10), Some(7));
        assert_eq!(parse_int(b"2147483648", i32::MIN as i64, i32::MAX as i64), None);
        assert_eq!(parse_int(b"9223372036854775807", i64::MIN, i64::MAX), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808", i64::MIN, i64::MAX), Some(i64::MIN));
        assert_eq!(parse_int(b"9223372036854775808", i64::MIN, i64::MAX), None);
        for odd in [&b""[..], b"-", b" 1", b"1 ", b"1.0", b"0x10", b"1_000", b"12345678901234567890"] {
            assert_eq!(parse_int(odd, i64::MIN, i64::MAX), None, "{odd:?}");
        }
    }

    #[test]
    fn floats_plain_decimals_only() {
        assert_eq!(parse_f64(b"53.90929487359812"), Some(53.90929487359812));
        assert_eq!(parse_f64(b"-0"), Some(-0.0));
        assert!(parse_f64(b"-0").unwrap().is_sign_negative());
        assert_eq!(parse_f64(b"1e10"), Some(1e10));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        assert_eq!(parse_f64(b"0e-400"), Some(0.0));
        // The smallest denormal: PostgreSQL accepts it.
        assert_eq!(parse_f64(b"4.9e-324"), Some(4.9e-324));
        // Underflow and overflow are PostgreSQL's errors to raise.
        assert_eq!(parse_f64(b"1e-400"), None);
        assert_eq!(parse_f64(b"1e400"), None);
        for odd in
            [&b""[..], b"NaN", b"Infinity", b"-inf", b" 1.5", b"1.5 ", b"0x1p3", b"1e", b"1..2", b"--1"]
        {
            assert_eq!(parse_f64(odd), None, "{odd:?}");
        }
        assert_eq!(parse_f32(b"3.4028235e38"), Some(f32::MAX));
        assert_eq!(parse_f32(b"3.5e38"), None);
        assert_eq!(parse_f32(b"1e-50"), None);
        assert_eq!(parse_f32(b"0.1"), Some(0.1f32));
    }

    #[test]
    fn booleans_in_their_common_spellings() {
        assert_eq!(parse_bool(b"t"), Some(true));
        assert_eq!(parse_bool(b"false"), Some(false));
        assert_eq!(parse_bool(b"TRUE"), None);
        assert_eq!(parse_bool(b"yes"), None);
    }

    #[test]
    fn dates_from_the_postgres_epoch() {
        assert_eq!(parse_date(b"2000-01-01"), Some(0));
        assert_eq!(parse_date(b"2000-03-01"), Some(60));
        assert_eq!(parse_date(b"1999-12-31"), Some(-1));
        assert_eq!(parse_date(b"2024-02-29"), Some(8825));
        assert_eq!(parse_date(b"0001-01-01"), Some(-730119));
        for odd in
            [&b"2023-02-29"[..], b"2024-13-01", b"2024-00-10", b"2024-1-01", b"0000-01-01", b"20240101"]
        {
            assert_eq!(parse_date(odd), None, "{odd:?}");
        }
    }

    #[test]
    fn timestamps_with_and_without_offsets() {
        const HOUR: i64 = 3_600_000_000;
        assert_eq!(parse_timestamp(b"2000-01-01 00:00:00"), Some(0));
        assert_eq!(parse_timestamp(b"2000-01-02T01:00:00.5"), Some(25 * HOUR + 500_000));
        assert_eq!(parse_timestamp(b"1999-12-31 23:59:59.999999"), Some(-1));
        assert_eq!(parse_timestamp(b"2000-01-01 00:00:00+00"), None);
        assert_eq!(parse_timestamptz(b"2000-01-01 00:00:00+00"), Some(0));
        assert_eq!(parse_timestamptz(b"2000-01-01 05:30:00+05:30"), Some(0));
        assert_eq!(parse_timestamptz(b"2000-01-01 00:00:00-08"), Some(8 * HOUR));
        assert_eq!(parse_timestamptz(b"2024-01-01 00:00:10+00"), Some((8766 * 24) * HOUR + 10_000_000));
        for odd in [
            &b"2000-01-01 00:00:00"[..],
            b"2000-01-01 24:00:00+00",
            b"2000-01-01 00:00:60+00",
            b"2000-01-01 00:00:00.1234567+00",
            b"2000-01-01 00:00:00Z",
            b"2000-01-01 00:00:00 UTC",
            b"2000-01-01 00:00:00+0530",
            b"2000-01-01 00:00:00+16",
            b"2000-01-01 00:00+00",
        ] {
            assert_eq!(parse_timestamptz(odd), None, "{odd:?}");
        }
    }
}
