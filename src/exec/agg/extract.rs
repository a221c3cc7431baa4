//! PostgreSQL 15's `extract(field FROM date)`, `extract(field FROM timestamp)` and
//! `date_part(field, timestamp)` for the fields whose value is a whole number, on raw
//! dates (days since 2000-01-01) and timestamps (microseconds since then), so that a
//! GROUP BY on them runs without a function call per row.
//!
//! Only years 2 to 9999 are computed here (where no BC year, year 0 or ISO year 0 is
//! near); every other value, the infinities included, answers `None` and the caller asks
//! PostgreSQL's own function, as `bucket` does.

use super::bucket::{date2j, j2date};

const USECS_PER_MINUTE: i64 = 60_000_000;
const USECS_PER_HOUR: i64 = 60 * USECS_PER_MINUTE;
const USECS_PER_DAY: i64 = 24 * USECS_PER_HOUR;
/// The Julian day of 2000-01-01.
const POSTGRES_EPOCH_JDATE: i32 = 2_451_545;

/// A field of `extract` / `date_part` computed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractField {
    Year,
    Quarter,
    Month,
    Day,
    Dow,
    IsoDow,
    Doy,
    Week,
    IsoYear,
    Decade,
    Century,
    Millennium,
    Hour,
    Minute,
}

const ALL_FIELDS: [ExtractField; 14] = [
    ExtractField::Year,
    ExtractField::Quarter,
    ExtractField::Month,
    ExtractField::Day,
    ExtractField::Dow,
    ExtractField::IsoDow,
    ExtractField::Doy,
    ExtractField::Week,
    ExtractField::IsoYear,
    ExtractField::Decade,
    ExtractField::Century,
    ExtractField::Millennium,
    ExtractField::Hour,
    ExtractField::Minute,
];

const NAMES: [&str; 14] = [
    "year",
    "quarter",
    "month",
    "day",
    "dow",
    "isodow",
    "doy",
    "week",
    "isoyear",
    "decade",
    "century",
    "millennium",
    "hour",
    "minute",
];

impl ExtractField {
    /// Whether the field never decreases as time grows (dates and timestamps without a
    /// time zone; ±infinity give ±Infinity): a comparison of it with a constant then
    /// holds on a range of the column's values.
    pub fn grows_with_time(self) -> bool {
        matches!(self, Self::Year | Self::IsoYear | Self::Decade | Self::Century | Self::Millennium)
    }

    /// The field named exactly `name` (ASCII case aside, as PostgreSQL folds it); None
    /// for other spellings, which the caller leaves to PostgreSQL.
    pub fn parse(name: &str) -> Option<ExtractField> {
        let lower = name.to_ascii_lowercase();
        NAMES.iter().position(|n| *n == lower).map(|i| ALL_FIELDS[i])
    }

    /// The field's name, as `extract` takes it.
    pub fn name(self) -> &'static str {
        NAMES[self as usize]
    }

    /// Whether `extract(field FROM date)` has the field (a date has no hours).
    pub fn of_dates(self) -> bool {
        !matches!(self, ExtractField::Hour | ExtractField::Minute)
    }

    /// A stable code for serialization.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<ExtractField> {
        ALL_FIELDS.get(usize::from(c)).copied()
    }
}

/// `extract(field FROM date)` of the date `days` days after 2000-01-01.
pub fn of_date(field: ExtractField, days: i64) -> Option<i64> {
    if !field.of_dates() {
        return None;
    }
    of_day(field, i32::try_from(days).ok()?, 0)
}

/// `extract(field FROM timestamp)` (or `date_part`'s) of the timestamp `usecs`
/// microseconds after 2000-01-01 00:00.
pub fn of_timestamp(field: ExtractField, usecs: i64) -> Option<i64> {
    let days = usecs.div_euclid(USECS_PER_DAY);
    of_day(field, i32::try_from(days).ok()?, usecs.rem_euclid(USECS_PER_DAY))
}

fn of_day(field: ExtractField, days: i32, time: i64) -> Option<i64> {
    let jd = days.checked_add(POSTGRES_EPOCH_JDATE)?;
    if jd < 0 {
        return None;
    }
    let (year, month, day) = j2date(jd);
    if !(2..=9999).contains(&year) {
        return None;
    }
    // 0 = Sunday, as j2day: Julian day 0 was a Monday.
    let dow = (jd + 1).rem_euclid(7);
    let isodow = if dow == 0 { 7 } else { dow };
    // ISO 8601: a week belongs to the year of its Thursday.
    let thursday = jd - isodow + 4;
    let (iso_year, _, _) = j2date(thursday);
    Some(i64::from(match field {
        ExtractField::Year => year,
        ExtractField::Quarter => (month - 1) / 3 + 1,
        ExtractField::Month => month,
        ExtractField::Day => day,
        ExtractField::Dow => dow,
        ExtractField::IsoDow => isodow,
        ExtractField::Doy => jd - date2j(year, 1, 1) + 1,
        ExtractField::Week => (thursday - date2j(iso_year, 1, 1)) / 7 + 1,
        ExtractField::IsoYear => iso_year,
        ExtractField::Decade => year / 10,
        ExtractField::Century => (year + 99) / 100,
        ExtractField::Millennium => (year + 999) / 1000,
        ExtractField::Hour => (time / USECS_PER_HOUR) as i32,
        ExtractField::Minute => (time % USECS_PER_HOUR / USECS_PER_MINUTE) as i32,
    }))
}

#[cfg(test)]
mod tests {
    use super::ExtractField::*;
    use super::*;

    fn days(y: i32, m: i32, d: i32) -> i64 {
        i64::from(date2j(y, m, d) - POSTGRES_EPOCH_JDATE)
    }

    #[test]
    fn fields_of_dates_as_postgres_gives_them() {
        // 2024-12-30 is a Monday of ISO week 1 of 2025; 2021-01-03 a Sunday of week 53
        // of 2020 (SELECT extract(...) on PostgreSQL 15).
        let d = days(2024, 12, 30);
        let got: Vec<_> =
            [Year, Quarter, Month, Day, Dow, IsoDow, Doy, Week, IsoYear, Decade, Century, Millennium]
                .iter()
                .map(|f| of_date(*f, d).unwrap())
                .collect();
        assert_eq!(got, [2024, 4, 12, 30, 1, 1, 365, 1, 2025, 202, 21, 3]);
        let d = days(2021, 1, 3);
        assert_eq!(
            [of_date(Dow, d), of_date(IsoDow, d), of_date(Week, d), of_date(IsoYear, d)],
            [Some(0), Some(7), Some(53), Some(2020)]
        );
        assert_eq!(of_date(Doy, days(2000, 12, 31)), Some(366));
        assert_eq!(of_date(Century, days(2000, 6, 1)), Some(20));
        assert_eq!(of_date(Century, days(2001, 1, 1)), Some(21));
        assert_eq!(of_date(Millennium, days(2000, 1, 1)), Some(2));
        assert_eq!(of_date(Millennium, days(2001, 1, 1)), Some(3));
        assert_eq!(of_date(Hour, 0), None);
        // Outside years 2..9999 PostgreSQL is asked.
        assert_eq!(of_date(Year, days(1, 6, 1)), None);
        assert_eq!(of_date(Year, days(10000, 1, 1)), None);
        assert_eq!(of_date(Year, i64::from(i32::MAX)), None);
    }

    #[test]
    fn fields_of_timestamps_take_the_day_before_midnight() {
        let t = days(1999, 12, 31) * USECS_PER_DAY + 23 * USECS_PER_HOUR + 59 * USECS_PER_MINUTE + 7;
        assert_eq!(
            [of_timestamp(Year, t), of_timestamp(Hour, t), of_timestamp(Minute, t)],
            [Some(1999), Some(23), Some(59)]
        );
        assert_eq!(of_timestamp(Day, -1), Some(31));
        assert_eq!(of_timestamp(Year, i64::MAX), None);
        assert_eq!(of_timestamp(Year, i64::MIN), None);
    }

    #[test]
    fn names_parse_as_written_and_round_trip() {
        assert_eq!(ExtractField::parse("YEAR"), Some(Year));
        assert_eq!(ExtractField::parse("years"), None);
        for f in ALL_FIELDS {
            assert_eq!(ExtractField::parse(f.name()), Some(f));
            assert_eq!(ExtractField::from_code(f.code()), Some(f));
        }
    }
}
