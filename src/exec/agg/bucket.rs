//! PostgreSQL 15's `date_trunc` and `date_bin` on raw timestamps (microseconds since
//! 2000-01-01, `i64::MIN`/`i64::MAX` the infinities), bit-identical to the server, so
//! that a vectorized GROUP BY can bucket rows without a function call per row.
//!
//! Every function answers `None` where PostgreSQL would raise an error or where this
//! code is not sure to match it; the caller then asks PostgreSQL.
//! Years are astronomical here, as in PostgreSQL's `struct pg_tm`: 0 is 1 BC.

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_MINUTE: i64 = 60 * USECS_PER_SEC;
const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
/// The Julian day of 2000-01-01, the timestamp epoch.
const POSTGRES_EPOCH_JDATE: i32 = 2_451_545;
/// 4714-11-24 BC 00:00 (Julian day 0), the first valid timestamp; a Monday.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// 294277-01-01 00:00, the first timestamp past the valid range.
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// Julian-day routines are trusted from 4713-11-01 BC on, and before 5874898-06-01.
const JULIAN_MINYEAR: i32 = -4713;
const JULIAN_MINMONTH: i32 = 11;
const JULIAN_MAXYEAR: i32 = 5_874_898;
const JULIAN_MAXMONTH: i32 = 6;
/// The largest time zone offset handled, exclusive: a week.
const MAX_GMTOFF_SECS: i64 = 7 * 24 * 3600;

/// A `date_trunc` unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncUnit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
}

/// The unit tokens of PostgreSQL 15's `deltatktbl` (datetime.c) that `date_trunc`
/// supports; it also holds "@", "ago" and the "timezone*" units, which it rejects.
const UNIT_TOKENS: &[(&str, TruncUnit)] = {
    use TruncUnit::*;
    &[
        ("c", Century),
        ("cent", Century),
        ("centuries", Century),
        ("century", Century),
        ("d", Day),
        ("day", Day),
        ("days", Day),
        ("dec", Decade),
        ("decade", Decade),
        ("decades", Decade),
        ("decs", Decade),
        ("h", Hour),
        ("hour", Hour),
        ("hours", Hour),
        ("hr", Hour),
        ("hrs", Hour),
        ("m", Minute),
        ("microsecon", Microseconds),
        ("mil", Millennium),
        ("millennia", Millennium),
        ("millennium", Millennium),
        ("millisecon", Milliseconds),
        ("mils", Millennium),
        ("min", Minute),
        ("mins", Minute),
        ("minute", Minute),
        ("minutes", Minute),
        ("mon", Month),
        ("mons", Month),
        ("month", Month),
        ("months", Month),
        ("ms", Milliseconds),
        ("msec", Milliseconds),
        ("msecond", Milliseconds),
        ("mseconds", Milliseconds),
        ("msecs", Milliseconds),
        ("qtr", Quarter),
        ("quarter", Quarter),
        ("s", Second),
        ("sec", Second),
        ("second", Second),
        ("seconds", Second),
        ("secs", Second),
        ("us", Microseconds),
        ("usec", Microseconds),
        ("usecond", Microseconds),
        ("useconds", Microseconds),
        ("usecs", Microseconds),
        ("w", Week),
        ("week", Week),
        ("weeks", Week),
        ("y", Year),
        ("year", Year),
        ("years", Year),
        ("yr", Year),
        ("yrs", Year),
    ]
};

/// PostgreSQL compares unit names on their first TOKMAXLEN bytes only, so that
/// "microseconds" matches the token "microsecon" (and so does "millenniums").
const TOKMAXLEN: usize = 10;

const ALL_UNITS: [TruncUnit; 13] = {
    use TruncUnit::*;
    [
        Microseconds,
        Milliseconds,
        Second,
        Minute,
        Hour,
        Day,
        Week,
        Month,
        Quarter,
        Year,
        Decade,
        Century,
        Millennium,
    ]
};

impl TruncUnit {
    /// The unit named as date_trunc accepts it (case-insensitive, PostgreSQL 15's
    /// spellings); None for anything else, including units date_trunc rejects.
    /// Only ASCII letters are folded: a name PostgreSQL would fold through a single-byte
    /// encoding's locale gets None (the caller then asks PostgreSQL).
    pub fn parse(name: &str) -> Option<TruncUnit> {
        let lower = name.as_bytes().to_ascii_lowercase();
        let key = &lower[..lower.len().min(TOKMAXLEN)];
        // Every token is at most TOKMAXLEN bytes, so an exact match of the cut key is
        // PostgreSQL's strncmp(key, token, TOKMAXLEN) == 0.
        UNIT_TOKENS.iter().find(|(token, _)| token.as_bytes() == key).map(|&(_, unit)| unit)
    }

    /// A stable code for serialization.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The unit of `code`, None for an unknown code.
    pub fn from_code(c: u8) -> Option<TruncUnit> {
        ALL_UNITS.get(usize::from(c)).copied()
    }

    /// The width of the unit when every bucket has the same one: a timestamp is then
    /// truncated by floor division alone, no calendar involved.
    fn fixed_width(self) -> Option<i64> {
        match self {
            TruncUnit::Microseconds => Some(1),
            TruncUnit::Milliseconds => Some(1_000),
            TruncUnit::Second => Some(USECS_PER_SEC),
            TruncUnit::Minute => Some(USECS_PER_MINUTE),
            TruncUnit::Hour => Some(USECS_PER_HOUR),
            TruncUnit::Day => Some(USECS_PER_DAY),
            _ => None,
        }
    }
}

/// date_trunc(unit, ts) on `timestamp without time zone`, as PostgreSQL 15's
/// timestamp_trunc. Infinities return themselves; None where PostgreSQL errors.
pub fn trunc_local(unit: TruncUnit, ts: i64) -> Option<i64> {
    if is_infinite(ts) {
        return Some(ts);
    }
    if !is_valid(ts) {
        return None;
    }
    trunc_wall(unit, ts).filter(|&r| is_valid(r))
}

/// date_trunc(unit, ts) on `timestamptz` in a session time zone with the one fixed
/// offset `gmtoff_secs` (seconds east of UTC), as PostgreSQL 15's timestamptz_trunc.
pub fn trunc_fixed_offset(unit: TruncUnit, ts: i64, gmtoff_secs: i64) -> Option<i64> {
    if is_infinite(ts) {
        return Some(ts);
    }
    // A fixed zone makes timestamp2tm's wall clock ts + offset, and both the offset
    // kept for units below a day and DetermineTimeZoneOffset's for the others are
    // that offset again; its "out of range, assume UTC" case errors in tm2timestamp.
    // Zone offsets stay below a week (POSIX zones allow 167 hours), which keeps the
    // wall clock's date where PostgreSQL's date arithmetic is linear.
    if !is_valid(ts) || gmtoff_secs.unsigned_abs() >= MAX_GMTOFF_SECS as u64 {
        return None;
    }
    let offset = gmtoff_secs * USECS_PER_SEC;
    trunc_wall(unit, ts + offset)?.checked_sub(offset).filter(|&r| is_valid(r))
}

/// date_bin(stride, ts, origin) as PostgreSQL 15's timestamp_bin and timestamptz_bin
/// (the same code) for a month-free stride of `stride_us` microseconds.
pub fn date_bin(stride_us: i64, ts: i64, origin: i64) -> Option<i64> {
    // PostgreSQL's order of checks: an infinite ts wins over any bad argument.
    if is_infinite(ts) {
        return Some(ts);
    }
    if is_infinite(origin) || stride_us <= 0 {
        return None;
    }
    let diff = ts.checked_sub(origin)?;
    let modulo = diff % stride_us;
    // origin + (diff - modulo) lies between origin and ts: no overflow.
    let result = origin + (diff - modulo);
    if modulo < 0 {
        // Round towards -infinity; this one step may leave the valid range.
        return result.checked_sub(stride_us).filter(|&r| is_valid(r));
    }
    Some(result)
}

fn is_infinite(ts: i64) -> bool {
    ts == i64::MIN || ts == i64::MAX
}

/// PostgreSQL's IS_VALID_TIMESTAMP.
fn is_valid(ts: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&ts)
}

/// The wall-clock time `wall` (a valid timestamp give or take a week) truncated to
/// `unit`, before the final range check; None where tm2timestamp rejects the date.
fn trunc_wall(unit: TruncUnit, wall: i64) -> Option<i64> {
    match unit.fixed_width() {
        Some(width) => Some(wall - wall.rem_euclid(width)),
        None if unit == TruncUnit::Week => Some(week_start(wall)),
        None => calendar_start(unit, wall),
    }
}

/// The Monday on or before `wall`, which is what date2isoweek + isoweek2date give
/// (checked against a port of them in the tests) without a calendar. MIN_TIMESTAMP is
/// a Monday, so a Monday before it is a week before, still a date tm2timestamp takes
/// (it then fails the final range check, as in PostgreSQL).
fn week_start(wall: i64) -> i64 {
    let day = wall.div_euclid(USECS_PER_DAY);
    // 2000-01-01, day 0, was a Saturday: five days after a Monday.
    (day - (day + 5).rem_euclid(7)) * USECS_PER_DAY
}

/// Month and longer units, which need the calendar: timestamp_trunc's year and month
/// rules on the `struct pg_tm` that j2date gives, then tm2timestamp's Julian check.
fn calendar_start(unit: TruncUnit, wall: i64) -> Option<i64> {
    // Before Julian day 0 (a wall clock before MIN_TIMESTAMP, which only a negative
    // offset gives), j2date does not work, and the month starts so early that the
    // result is out of range anyway.
    let jd = wall.div_euclid(USECS_PER_DAY) + i64::from(POSTGRES_EPOCH_JDATE);
    let (year, month, _) = j2date(i32::try_from(jd).ok().filter(|&jd| jd >= 0)?);
    let (year, month) = match unit {
        TruncUnit::Month => (year, month),
        TruncUnit::Quarter => (year, 3 * ((month - 1) / 3) + 1),
        TruncUnit::Year => (year, 1),
        TruncUnit::Decade => (decade_start(year), 1),
        TruncUnit::Century => (century_start(year), 1),
        // timestamp_trunc falls through from the millennium to the century rule.
        TruncUnit::Millennium => (century_start(millennium_start(year)), 1),
        _ => return None,
    };
    if !is_valid_julian(year, month) {
        return None;
    }
    Some(i64::from(date2j(year, month, 1) - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY)
}

// The three rules below are timestamp_trunc's as they are, C's truncating division
// included, since for BC years they give PostgreSQL's own buckets: the decade of 1 BC
// starts in 1 BC, that of 2 BC in 11 BC; the century of 1 BC in 100 BC.

fn decade_start(year: i32) -> i32 {
    if year > 0 {
        (year / 10) * 10
    } else {
        -((8 - (year - 1)) / 10) * 10
    }
}

fn century_start(year: i32) -> i32 {
    if year > 0 {
        ((year + 99) / 100) * 100 - 99
    } else {
        -((99 - (year - 1)) / 100) * 100 + 1
    }
}

fn millennium_start(year: i32) -> i32 {
    if year > 0 {
        ((year + 999) / 1000) * 1000 - 999
    } else {
        -((999 - (year - 1)) / 1000) * 1000 + 1
    }
}

/// PostgreSQL's IS_VALID_JULIAN for the first day of a month.
fn is_valid_julian(year: i32, month: i32) -> bool {
    (year > JULIAN_MINYEAR || (year == JULIAN_MINYEAR && month >= JULIAN_MINMONTH))
        && (year < JULIAN_MAXYEAR || (year == JULIAN_MAXYEAR && month < JULIAN_MAXMONTH))
}

/// PostgreSQL's date2j: the Julian day of a (proleptic Gregorian) date.
pub(super) fn date2j(year: i32, month: i32, day: i32) -> i32 {
    let (year, month) = if month > 2 { (year + 4800, month + 1) } else { (year + 4799, month + 13) };
    let century = year / 100;
    year * 365 - 32167 + year / 4 - century + century / 4 + 7834 * month / 256 + day
}

/// PostgreSQL's j2date: (year, month, day) of a non-negative Julian day.
pub(super) fn j2date(jd: i32) -> (i32, i32, i32) {
    let mut julian = (jd as u32).wrapping_add(32044);
    let mut quad = julian / 146_097;
    let extra = (julian - quad * 146_097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146_097;
    quad = julian / 1461;
    julian -= quad * 1461;
    let mut y = julian * 4 / 1461;
    julian = if y != 0 { (julian + 305) % 365 } else { (julian + 306) % 366 } + 123;
    y += quad * 4;
    let quad = julian * 2141 / 65536;
    let day = julian - 7834 * quad / 256;
    let month = (quad + 10) % 12 + 1;
    (y as i32 - 4800, month as i32, day as i32)
}

#[cfg(test)]
mod tests {
    use super::TruncUnit::*;
    use super::*;

    const NOBEGIN: i64 = i64::MIN;
    const NOEND: i64 = i64::MAX;

    /// The internal value of a date and time (proleptic Gregorian, astronomical year).
    fn ts(year: i32, month: i32, day: i32, h: i64, mi: i64, s: i64, us: i64) -> i64 {
        i64::from(date2j(year, month, day) - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY
            + h * USECS_PER_HOUR
            + mi * USECS_PER_MINUTE
            + s * USECS_PER_SEC
            + us
    }

    fn date(year: i32, month: i32, day: i32) -> i64 {
        ts(year, month, day, 0, 0, 0, 0)
    }

    #[test]
    fn parse_accepts_postgres_spellings() {
        let cases: &[(&str, TruncUnit)] = &[
            ("microseconds", Microseconds),
            ("MicroSeconds", Microseconds),
            ("microsecond", Microseconds),
            ("microsecon", Microseconds),
            ("microsecondsxyz", Microseconds),
            ("us", Microseconds),
            ("usec", Microseconds),
            ("usecs", Microseconds),
            ("usecond", Microseconds),
            ("useconds", Microseconds),
            ("milliseconds", Milliseconds),
            ("millisecond", Milliseconds),
            ("ms", Milliseconds),
            ("msec", Milliseconds),
            ("msecs", Milliseconds),
            ("msecond", Milliseconds),
            ("mseconds", Milliseconds),
            ("s", Second),
            ("sec", Second),
            ("secs", Second),
            ("second", Second),
            ("SECONDS", Second),
            ("m", Minute),
            ("min", Minute),
            ("mins", Minute),
            ("minute", Minute),
            ("minutes", Minute),
            ("h", Hour),
            ("hr", Hour),
            ("hrs", Hour),
            ("hour", Hour),
            ("Hours", Hour),
            ("d", Day),
            ("day", Day),
            ("days", Day),
            ("w", Week),
            ("week", Week),
            ("weeks", Week),
            ("mon", Month),
            ("mons", Month),
            ("month", Month),
            ("months", Month),
            ("qtr", Quarter),
            ("quarter", Quarter),
            ("y", Year),
            ("yr", Year),
            ("yrs", Year),
            ("year", Year),
            ("years", Year),
            ("dec", Decade),
            ("decs", Decade),
            ("decade", Decade),
            ("decades", Decade),
            ("c", Century),
            ("cent", Century),
            ("century", Century),
            ("centuries", Century),
            ("mil", Millennium),
            ("mils", Millennium),
            ("millennia", Millennium),
            ("millennium", Millennium),
            ("millenniums", Millennium),
        ];
        for &(name, unit) in cases {
            assert_eq!(TruncUnit::parse(name), Some(unit), "{name}");
        }
    }

    #[test]
    fn parse_rejects_what_date_trunc_rejects() {
        for name in [
            "",
            "epoch",
            "timezone",
            "timezone_h",
            "timezone_m",
            "timezone_hour",
            "dow",
            "doy",
            "isoyear",
            "isodow",
            "julian",
            "ago",
            "@",
            "invalid",
            "undefined",
            "quarters",
            "qtrs",
            "centurys",
            "milleniums",
            "microsec",
            "millisec",
            "mi",
            " hour",
            "hour ",
            "weekss",
            "min.",
            "hour\0",
            "hourly",
            "é",
        ] {
            assert_eq!(TruncUnit::parse(name), None, "{name:?}");
        }
    }

    #[test]
    fn codes_round_trip() {
        for (i, unit) in ALL_UNITS.iter().enumerate() {
            assert_eq!(unit.code() as usize, i);
            assert_eq!(TruncUnit::from_code(unit.code()), Some(*unit));
        }
        assert_eq!(TruncUnit::from_code(13), None);
        assert_eq!(TruncUnit::from_code(255), None);
    }

    #[test]
    fn calendar_helpers_match_postgres_epoch() {
        assert_eq!(date2j(2000, 1, 1), POSTGRES_EPOCH_JDATE);
        assert_eq!(j2date(POSTGRES_EPOCH_JDATE), (2000, 1, 1));
        assert_eq!(j2date(0), (-4713, 11, 24));
        assert_eq!(date(-4713, 11, 24), MIN_TIMESTAMP);
        assert_eq!(date(294277, 1, 1), END_TIMESTAMP);
        for jd in (0..3_000_000).step_by(7).chain(100_000_000..100_000_500) {
            let (y, m, d) = j2date(jd);
            assert_eq!(date2j(y, m, d), jd);
        }
    }

    /// Expected values computed by PostgreSQL 15.20, as
    /// `(extract(epoch from date_trunc(unit, x) - timestamp '2000-01-01') * 1000000)::bigint`
    /// (extract(epoch from x) itself is a microsecond off near the end of the range).
    const LOCAL_CASES: &[(TruncUnit, i64, i64)] = &[
        // 2021-05-17 13:14:15.678901
        (Microseconds, 674572455678901, 674572455678901),
        (Milliseconds, 674572455678901, 674572455678000),
        (Second, 674572455678901, 674572455000000),
        (Minute, 674572455678901, 674572440000000),
        (Hour, 674572455678901, 674571600000000),
        (Day, 674572455678901, 674524800000000),
        (Week, 674572455678901, 674524800000000),
        (Month, 674572455678901, 673142400000000),
        (Quarter, 674572455678901, 670550400000000),
        (Year, 674572455678901, 662774400000000),
        (Decade, 674572455678901, 631152000000000),
        (Century, 674572455678901, 31622400000000),
        (Millennium, 674572455678901, 31622400000000),
        // 1969-07-20 20:17:40.999999
        (Milliseconds, -960867739000001, -960867739001000),
        (Second, -960867739000001, -960867740000000),
        (Minute, -960867739000001, -960867780000000),
        (Hour, -960867739000001, -960868800000000),
        (Day, -960867739000001, -960940800000000),
        (Week, -960867739000001, -961459200000000),
        (Month, -960867739000001, -962582400000000),
        (Quarter, -960867739000001, -962582400000000),
        (Year, -960867739000001, -978220800000000),
        (Decade, -960867739000001, -1262304000000000),
        (Century, -960867739000001, -3124137600000000),
        (Millennium, -960867739000001, -31525372800000000),
        // 1999-12-31 23:59:59.999999
        (Microseconds, -1, -1),
        (Milliseconds, -1, -1000),
        (Second, -1, -1000000),
        (Day, -1, -86400000000),
        (Week, -1, -432000000000),
        (Month, -1, -2678400000000),
        (Quarter, -1, -7948800000000),
        (Year, -1, -31536000000000),
        (Decade, -1, -315532800000000),
        (Century, -1, -3124137600000000),
        (Millennium, -1, -31525372800000000),
        // 2000-01-01
        (Week, 0, -432000000000),
        (Decade, 0, 0),
        (Century, 0, -3124137600000000),
        (Millennium, 0, -31525372800000000),
        // 2001-01-01
        (Century, 31622400000000, 31622400000000),
        (Millennium, 31622400000000, 31622400000000),
        // 2024-02-29 12:00
        (Day, 762523200000000, 762480000000000),
        (Week, 762523200000000, 762220800000000),
        (Month, 762523200000000, 760060800000000),
        (Quarter, 762523200000000, 757382400000000),
        // 2021-01-03 10:00
        (Week, 662983200000000, 662428800000000),
        // 2024-12-31 10:00
        (Week, 788954400000000, 788832000000000),
        // 2027-01-01
        (Week, 852076800000000, 851731200000000),
        // 2026-12-28
        (Week, 851731200000000, 851731200000000),
        // 2023-03-31 23:59:59.999999
        (Quarter, 733622399999999, 725846400000000),
        // 2023-04-01
        (Quarter, 733622400000000, 733622400000000),
        // 2023-12-31 12:00
        (Quarter, 757339200000000, 749433600000000),
        // 1900-02-28 12:00
        (Month, -3150619200000000, -3152995200000000),
        // 1900-03-01
        (Month, -3150576000000000, -3150576000000000),
        // 2000-02-29 23:59:59
        (Month, 5183999000000, 2678400000000),
        // 1901-01-01
        (Century, -3124137600000000, -3124137600000000),
        // 2010-06-15
        (Decade, 329875200000000, 315619200000000),
        // 2009-12-31 23:59:59.999999
        (Decade, 315619199999999, 0),
        // 2099-12-31
        (Century, 3155673600000000, 31622400000000),
        // 2100-01-01
        (Century, 3155760000000000, 31622400000000),
        // 2101-01-01
        (Century, 3187296000000000, 3187296000000000),
        // 1000-06-15
        (Millennium, -31542652800000000, -63082281600000000),
        // 1001-01-01
        (Millennium, -31525372800000000, -31525372800000000),
        // 0001-01-01
        (Year, -63082281600000000, -63082281600000000),
        (Decade, -63082281600000000, -63113904000000000),
        (Century, -63082281600000000, -63082281600000000),
        (Millennium, -63082281600000000, -63082281600000000),
        // 0001-06-15 BC
        (Year, -63099561600000000, -63113904000000000),
        (Decade, -63099561600000000, -63113904000000000),
        (Century, -63099561600000000, -66238041600000000),
        (Millennium, -63099561600000000, -94639276800000000),
        // 0002-06-15 BC
        (Decade, -63131184000000000, -63429436800000000),
        // 0006-03-10 BC
        (Week, -63265795200000000, -63266140800000000),
        (Decade, -63265795200000000, -63429436800000000),
        (Century, -63265795200000000, -66238041600000000),
        (Millennium, -63265795200000000, -94639276800000000),
        // 0010-01-01 BC
        (Decade, -63397900800000000, -63429436800000000),
        // 0011-12-31 BC
        (Decade, -63397987200000000, -63429436800000000),
        // 0100-01-01 BC
        (Century, -66238041600000000, -66238041600000000),
        // 0101-01-01 BC
        (Century, -66269577600000000, -69393715200000000),
        // 1000-01-01 BC
        (Millennium, -94639276800000000, -94639276800000000),
        // 1001-01-01 BC
        (Millennium, -94670812800000000, -126196185600000000),
        // 4714-11-24 BC
        (Day, -211813488000000000, -211813488000000000),
        (Week, -211813488000000000, -211813488000000000),
        // 4714-11-24 05:00:00 BC
        (Hour, -211813470000000000, -211813470000000000),
        // 294276-12-31 23:59:59.999999
        (Hour, 9223371331199999999, 9223371327600000000),
        (Month, 9223371331199999999, 9223368652800000000),
        (Year, 9223371331199999999, 9223339708800000000),
        (Millennium, 9223371331199999999, 9214661606400000000),
        // infinities return themselves, whatever the unit
        (Week, NOBEGIN, NOBEGIN),
        (Millennium, NOEND, NOEND),
        (Microseconds, NOBEGIN, NOBEGIN),
    ];

    #[test]
    fn trunc_local_matches_postgres() {
        for &(unit, input, expected) in LOCAL_CASES {
            assert_eq!(trunc_local(unit, input), Some(expected), "{unit:?} {input}");
        }
    }

    #[test]
    fn trunc_local_errors_where_postgres_does() {
        // 4714-11-24 BC: PostgreSQL says "timestamp out of range" for month and longer
        for unit in [Month, Quarter, Year, Decade, Century, Millennium] {
            assert_eq!(trunc_local(unit, MIN_TIMESTAMP + 1), None, "{unit:?}");
        }
        // values no timestamp can hold
        assert_eq!(trunc_local(Hour, MIN_TIMESTAMP - 1), None);
        assert_eq!(trunc_local(Hour, END_TIMESTAMP), None);
        assert_eq!(trunc_local(Day, i64::MIN + 1), None);
    }

    /// Expected values computed by PostgreSQL 15.20 under `SET timezone` to a POSIX
    /// zone of that fixed offset ('<+0530>-05:30' is 19800 s east of UTC), as
    /// `(extract(epoch from date_trunc(unit, x) - timestamptz '2000-01-01 00:00+00')
    ///   * 1000000)::bigint`.
    const OFFSET_CASES: &[(TruncUnit, i64, i64, i64)] = &[
        // 2021-05-17 13:14:15.678901+00 at +05:30
        (Minute, 674572455678901, 19800, 674572440000000),
        (Hour, 674572455678901, 19800, 674569800000000),
        (Day, 674572455678901, 19800, 674505000000000),
        (Week, 674572455678901, 19800, 674505000000000),
        (Month, 674572455678901, 19800, 673122600000000),
        (Year, 674572455678901, 19800, 662754600000000),
        // 2021-05-16 20:00+00 at +05:30
        (Day, 674510400000000, 19800, 674505000000000),
        (Week, 674510400000000, 19800, 674505000000000),
        // 2021-05-16 20:00+00 at -03:00
        (Day, 674510400000000, -10800, 674449200000000),
        (Week, 674510400000000, -10800, 673930800000000),
        // 2023-01-01 02:00+00 at -03:00
        (Year, 725853600000000, -10800, 694321200000000),
        (Month, 725853600000000, -10800, 723178800000000),
        (Quarter, 725853600000000, -10800, 717908400000000),
        (Decade, 725853600000000, -10800, 631162800000000),
        (Century, 725853600000000, -10800, 31633200000000),
        // 2023-01-01 02:00+00 at +05:30
        (Year, 725853600000000, 19800, 725826600000000),
        (Millennium, 725853600000000, 19800, 31602600000000),
        // 1999-12-31 20:00+00 at +05:30
        (Millennium, -14400000000, 19800, -31525392600000000),
        (Decade, -14400000000, 19800, -19800000000),
        // 2021-05-17 13:14:15.678901+00 at +05:45
        (Hour, 674572455678901, 20700, 674568900000000),
        // 2021-05-17 13:14:15.678901+00 at -09:30
        (Minute, 674572455678901, -34200, 674572440000000),
        (Hour, 674572455678901, -34200, 674569800000000),
        // 1999-12-31 23:59:59.999999+00 at +05:30
        (Second, -1, 19800, -1000000),
        // 1999-12-31 23:59:59.999999+00 at +00:00
        (Day, -1, 0, -86400000000),
        (Week, -1, 0, -432000000000),
        // 2021-05-17 13:14:15.678901+00 at +167:00
        (Day, 674572455678901, 601200, 674528400000000),
        (Week, 674572455678901, 601200, 674528400000000),
        (Month, 674572455678901, 601200, 672541200000000),
        // 2021-05-17 13:14:15.678901+00 at -166:59
        (Hour, 674572455678901, -601140, 674571540000000),
        (Day, 674572455678901, -601140, 674521140000000),
        (Week, 674572455678901, -601140, 674521140000000),
        (Month, 674572455678901, -601140, 673743540000000),
        // 4714-11-24 00:30:00+00 BC at +01:00
        (Hour, -211813486200000000, 3600, -211813488000000000),
        // 294276-12-31 23:30:00+00 at +01:00
        (Hour, 9223371329400000000, 3600, 9223371327600000000),
        (Day, 9223371329400000000, 3600, 9223371327600000000),
        (Week, 9223371329400000000, 3600, 9223371327600000000),
        (Month, 9223371329400000000, 3600, 9223371327600000000),
        (Year, 9223371329400000000, 3600, 9223371327600000000),
        // 294276-12-31 23:30:00+00 at -01:00
        (Day, 9223371329400000000, -3600, 9223371248400000000),
        // infinities return themselves
        (Week, NOBEGIN, 19800, NOBEGIN),
        (Year, NOEND, -10800, NOEND),
    ];

    #[test]
    fn trunc_fixed_offset_matches_postgres() {
        for &(unit, input, gmtoff, expected) in OFFSET_CASES {
            assert_eq!(trunc_fixed_offset(unit, input, gmtoff), Some(expected), "{unit:?} {input} {gmtoff}");
        }
    }

    #[test]
    fn trunc_fixed_offset_near_range_limits() {
        // Checked on PostgreSQL 15.20 as well. 4714-11-24 BC 00:30+00 at -01:00: the wall
        // clock is before the range, its hour is not.
        let early = MIN_TIMESTAMP + 30 * USECS_PER_MINUTE;
        assert_eq!(trunc_fixed_offset(Hour, early, -3600), Some(MIN_TIMESTAMP));
        assert_eq!(trunc_fixed_offset(Week, early, -3600), None);
        // at +01:00 its day starts an hour before the range: "timestamp out of range"
        assert_eq!(trunc_fixed_offset(Day, early, 3600), None);
        // 4714-11-24 BC 07:00+00 at -30:00 is 11-23 01:00 on the wall clock
        assert_eq!(
            trunc_fixed_offset(Day, MIN_TIMESTAMP + 7 * USECS_PER_HOUR, -108000),
            Some(-211813466400000000)
        );
        assert_eq!(trunc_fixed_offset(Day, MIN_TIMESTAMP + USECS_PER_HOUR, -108000), None);
        assert_eq!(trunc_fixed_offset(Month, MIN_TIMESTAMP + 6 * USECS_PER_DAY, -108000), None);
        // 294276-12-31 23:59:59.999999+00 at -01:00
        assert_eq!(trunc_fixed_offset(Day, END_TIMESTAMP - 1, -3600), Some(9223371248400000000));
        // offsets of a week or more are not zone offsets
        assert_eq!(trunc_fixed_offset(Day, 0, 7 * 24 * 3600), None);
        assert_eq!(trunc_fixed_offset(Day, 0, i64::MIN), None);
        assert_eq!(trunc_fixed_offset(Day, 0, i64::MAX), None);
        assert_eq!(trunc_fixed_offset(Day, MIN_TIMESTAMP - 1, 0), None);
    }

    /// Expected values computed by PostgreSQL 15.20 (date_bin on timestamp; timestamptz
    /// gives the same internal values).
    const BIN_CASES: &[(i64, i64, i64, i64)] = &[
        // 15 minutes, 2020-02-11 15:44:17, origin 2001-01-01
        (900000000, 634751057000000, 31622400000000, 634750200000000),
        // 15 minutes, 2020-02-11 15:44:17, origin 2030-01-01
        (900000000, 634751057000000, 946771200000000, 634750200000000),
        // 15 minutes, 2020-01-01 00:00, origin 2020-01-01 00:15
        (900000000, 631152000000000, 631152900000000, 631152000000000),
        // 15 minutes, 2020-01-01 00:00:00.000001, origin 2020-01-01 00:15
        (900000000, 631152000000001, 631152900000000, 631152000000000),
        // 15 minutes, 2019-12-31 23:59:59.999999, origin 2020-01-01 00:15
        (900000000, 631151999999999, 631152900000000, 631151100000000),
        // 7 days, 2020-02-11 15:44:17, origin 2000-01-05 03:07:11.5
        (604800000000, 634751057000000, 356831500000, 634187231500000),
        // 7 days, 1999-12-20, origin 2000-01-05 03:07:11.5
        (604800000000, -1036800000000, 356831500000, -1457568500000),
        // 1 microsecond, 2000-01-01, origin 2000-01-01 00:00:00.5
        (1, 0, 500000, 0),
        // 3 hours 7 minutes, 1969-07-20 20:17:40, origin 1970-01-01
        (11220000000, -960867740000000, -946684800000000, -960878100000000),
        // 1 day, 4714-11-24 BC, origin 2000-01-02
        (86400000000, -211813488000000000, 86400000000, -211813488000000000),
        // 100 days, 4713-12-01 BC, origin 2000-01-01
        (8640000000000, -211781260800000000, 0, -211783680000000000),
        // infinite ts returns itself even with a bad stride or origin
        (900000000, NOEND, 0, NOEND),
        (900000000, NOBEGIN, 0, NOBEGIN),
        (0, NOEND, 0, NOEND),
        (-5, NOBEGIN, NOEND, NOBEGIN),
    ];

    #[test]
    fn date_bin_matches_postgres() {
        for &(stride, input, origin, expected) in BIN_CASES {
            assert_eq!(date_bin(stride, input, origin), Some(expected), "{stride} {input} {origin}");
        }
    }

    #[test]
    fn date_bin_errors_where_postgres_does() {
        // "stride must be greater than zero"
        assert_eq!(date_bin(0, 0, 0), None);
        assert_eq!(date_bin(-900000000, 0, 0), None);
        // "origin out of range"
        assert_eq!(date_bin(900000000, 0, NOEND), None);
        assert_eq!(date_bin(900000000, 0, NOBEGIN), None);
        // "interval out of range": ts - origin overflows (294276 AD from 4713 BC)
        let late = date(294276, 12, 1);
        let early = date(-4712, 12, 1);
        assert_eq!(date_bin(USECS_PER_DAY, late, early), None);
        assert_eq!(date_bin(USECS_PER_DAY, early, late), None);
        // "timestamp out of range": the bin starts before 4714-11-24 BC
        assert_eq!(date_bin(100000 * USECS_PER_DAY, early, 0), None);
        assert_eq!(date_bin(USECS_PER_DAY, MIN_TIMESTAMP, USECS_PER_HOUR), None);
        assert_eq!(date_bin(USECS_PER_DAY, MIN_TIMESTAMP, USECS_PER_DAY), Some(MIN_TIMESTAMP));
    }

    /// date2isoweek as PostgreSQL 15 has it (timestamp.c).
    fn date2isoweek(year: i32, mon: i32, mday: i32) -> i32 {
        let dayn = date2j(year, mon, mday);
        let mut day4 = date2j(year, 1, 4);
        let mut day0 = j2day(day4 - 1);
        if dayn < day4 - day0 {
            day4 = date2j(year - 1, 1, 4);
            day0 = j2day(day4 - 1);
        }
        let mut result = (dayn - (day4 - day0)) / 7 + 1;
        if result >= 52 {
            day4 = date2j(year + 1, 1, 4);
            day0 = j2day(day4 - 1);
            if dayn >= day4 - day0 {
                result = (dayn - (day4 - day0)) / 7 + 1;
            }
        }
        result
    }

    fn j2day(date: i32) -> i32 {
        let d = (date + 1) % 7;
        if d < 0 {
            d + 7
        } else {
            d
        }
    }

    /// timestamp_trunc's week case: the Julian day of the week's Monday.
    fn postgres_week_start(jd: i32) -> i32 {
        let (mut year, month, day) = j2date(jd);
        let woy = date2isoweek(year, month, day);
        if woy >= 52 && month == 1 {
            year -= 1;
        }
        if woy <= 1 && month == 12 {
            year += 1;
        }
        let day4 = date2j(year, 1, 4);
        (woy - 1) * 7 + (day4 - j2day(day4 - 1))
    }

    #[test]
    fn week_start_matches_postgres_isoweek_code() {
        let check = |jd: i32| {
            let wall = i64::from(jd - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY + 12 * USECS_PER_HOUR;
            let expected = i64::from(postgres_week_start(jd) - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY;
            assert_eq!(week_start(wall), expected, "julian day {jd}");
        };
        // every day from 4714 BC to AD 3000, and the last centuries of the range
        (0..2_817_000).for_each(check);
        (107_000_000..107_200_000).for_each(check);
    }

    /// A deterministic xorshift generator (no crates).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// A valid timestamp: half of them anywhere, half within 300 years of 2000.
        fn timestamp(&mut self) -> i64 {
            const SPAN: u64 = 300 * 365 * USECS_PER_DAY as u64;
            if self.next() & 1 == 0 {
                MIN_TIMESTAMP.wrapping_add_unsigned(self.next() % END_TIMESTAMP.abs_diff(MIN_TIMESTAMP))
            } else {
                (self.next() % (2 * SPAN)) as i64 - SPAN as i64
            }
        }
    }

    /// Units whose buckets each lie within one bucket of the next (weeks straddle
    /// months, decades start in year 0 and centuries in year 1).
    const NESTED: [TruncUnit; 10] =
        [Microseconds, Milliseconds, Second, Minute, Hour, Day, Month, Quarter, Year, Decade];

    /// trunc_local (offset ignored) or trunc_fixed_offset.
    type Trunc = fn(TruncUnit, i64, i64) -> Option<i64>;

    #[test]
    fn truncation_invariants() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            let x = rng.timestamp();
            let y = x.saturating_add((rng.next() % (400 * USECS_PER_DAY as u64)) as i64);
            let gmtoff = (rng.next() % (2 * 15 * 3600 + 1)) as i64 - 15 * 3600;
            for unit in ALL_UNITS {
                let truncs: [Trunc; 2] = [|u, v, _| trunc_local(u, v), trunc_fixed_offset];
                for trunc in truncs {
                    let Some(t) = trunc(unit, x, gmtoff) else { continue };
                    assert!(t <= x, "{unit:?} {x} {gmtoff}");
                    assert_eq!(trunc(unit, t, gmtoff), Some(t), "{unit:?} {x} {gmtoff}");
                    if let Some(u) = trunc(unit, y, gmtoff) {
                        assert!(t <= u, "{unit:?} {x} {y} {gmtoff}");
                    }
                }
            }
            // truncating to a finer unit first changes nothing where units nest
            for pair in NESTED.windows(2) {
                if let Some(fine) = trunc_local(pair[0], x) {
                    assert_eq!(trunc_local(pair[1], fine), trunc_local(pair[1], x), "{pair:?} {x}");
                }
            }
        }
    }

    #[test]
    fn date_bin_invariants() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..200_000 {
            let x = rng.timestamp();
            let origin = rng.timestamp() / 1000;
            let stride = 1 + (rng.next() % (30 * USECS_PER_DAY as u64)) as i64;
            let Some(b) = date_bin(stride, x, origin) else { continue };
            assert!(b <= x && x - b < stride, "{stride} {x} {origin}");
            assert_eq!((b - origin) % stride, 0);
            assert_eq!(date_bin(stride, b, origin), Some(b));
        }
    }
}
