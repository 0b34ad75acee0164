//! Calendar arithmetic on epoch-based integers (proleptic Gregorian, as Java's `java.time`), and
//! the ISO-8601 text forms of JSON single values.

use crate::error::{Error, Result};

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_HOUR: i64 = 3_600 * MICROS_PER_SECOND;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;
pub const NANOS_PER_MICRO: i64 = 1_000;
pub const NANOS_PER_HOUR: i64 = MICROS_PER_HOUR * NANOS_PER_MICRO;
pub const NANOS_PER_DAY: i64 = MICROS_PER_DAY * NANOS_PER_MICRO;

/// Days from 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`).
#[inline]
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month 1-12, day 1-31) of a count of days from 1970-01-01.
#[inline]
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whole years from 1970 (floor), of a day count.
#[inline]
pub fn years_from_days(days: i64) -> i64 {
    civil_from_days(days).0 - 1970
}

/// Whole months from 1970-01 (floor), of a day count.
#[inline]
pub fn months_from_days(days: i64) -> i64 {
    let (y, m, _) = civil_from_days(days);
    (y - 1970) * 12 + m as i64 - 1
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// `YYYY-MM-DD` as `java.time.LocalDate` prints it: a '+' before years above 9999 and at least
/// four digits after the sign of negative years.
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    };
    format!("{year}-{m:02}-{d:02}")
}

/// `HH:MM:SS.ffffff` (or nine digits for nanoseconds) of a time of day.
pub fn format_time_of_day(ticks: i64, ticks_per_second: i64, fraction_digits: usize) -> String {
    let secs = ticks.div_euclid(ticks_per_second);
    let frac = ticks.rem_euclid(ticks_per_second);
    format!(
        "{:02}:{:02}:{:02}.{:0width$}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60,
        frac,
        width = fraction_digits
    )
}

/// `YYYY-MM-DDTHH:MM:SS.ffffff[+00:00]` of micros or nanos since the epoch.
pub fn format_timestamp(ticks: i64, nanos: bool, with_zone: bool) -> String {
    let per_day = if nanos { NANOS_PER_DAY } else { MICROS_PER_DAY };
    let per_second = if nanos {
        1_000_000_000
    } else {
        MICROS_PER_SECOND
    };
    let days = ticks.div_euclid(per_day);
    let of_day = ticks.rem_euclid(per_day);
    let zone = if with_zone { "+00:00" } else { "" };
    format!(
        "{}T{}{zone}",
        format_date(days),
        format_time_of_day(of_day, per_second, if nanos { 9 } else { 6 })
    )
}

/// A cursor over ASCII text with the few combinators the ISO forms need.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    /// Up to `max` digits, at least `min`; returns the value and the number of digits read.
    fn digits(&mut self, min: usize, max: usize) -> Option<(i64, usize)> {
        let start = self.pos;
        let mut value: i64 = 0;
        while self.pos - start < max {
            match self.peek() {
                Some(b @ b'0'..=b'9') => {
                    value = value.checked_mul(10)?.checked_add((b - b'0') as i64)?;
                    self.pos += 1;
                }
                _ => break,
            }
        }
        let n = self.pos - start;
        (n >= min).then_some((value, n))
    }
    fn done(&self) -> bool {
        self.pos == self.text.len()
    }
}

/// `[±]YYYY-MM-DD` as written (year, month, day), not yet checked for range.
fn date_fields(c: &mut Cursor) -> Option<(i64, i64, i64)> {
    let negative = c.eat(b'-');
    let signed = negative || c.eat(b'+');
    // Years beyond four digits must carry a sign, as in ISO-8601 and java.time.
    let (year, n) = c.digits(4, if signed { 10 } else { 4 })?;
    if !signed && n != 4 {
        return None;
    }
    let year = if negative { -year } else { year };
    if !c.eat(b'-') {
        return None;
    }
    let (month, _) = c.digits(2, 2)?;
    if !c.eat(b'-') {
        return None;
    }
    let (day, _) = c.digits(2, 2)?;
    Some((year, month, day))
}

/// Days from the epoch of a date's fields, or why they are not a date.
fn days_of(year: i64, month: i64, day: i64) -> std::result::Result<i64, &'static str> {
    let month = u32::try_from(month)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or("month must be in 1..12")?;
    let day = u32::try_from(day)
        .ok()
        .filter(|d| *d >= 1 && *d <= days_in_month(year, month))
        .ok_or("day is out of range for month")?;
    Ok(days_from_civil(year, month, day))
}

fn parse_date_at(c: &mut Cursor) -> Option<i64> {
    let (year, month, day) = date_fields(c)?;
    days_of(year, month, day).ok()
}

/// `HH:MM[:SS[.fraction]]` as (hour, minute, second, nanoseconds), not yet checked for range;
/// the fraction has at most `max_fraction` digits (6 or 9).
fn time_fields(c: &mut Cursor, max_fraction: usize) -> Option<(i64, i64, i64, i64)> {
    let (hour, _) = c.digits(2, 2)?;
    if !c.eat(b':') {
        return None;
    }
    let (minute, _) = c.digits(2, 2)?;
    let mut second = 0;
    let mut nanos = 0;
    if c.eat(b':') {
        second = c.digits(2, 2)?.0;
        if c.eat(b'.') {
            let (f, n) = c.digits(1, max_fraction)?;
            if matches!(c.peek(), Some(b'0'..=b'9')) {
                return None; // more precision than allowed
            }
            nanos = f * 10i64.pow((9 - n) as u32);
        }
    }
    Some((hour, minute, second, nanos))
}

fn valid_time(hour: i64, minute: i64, second: i64) -> bool {
    hour <= 23 && minute <= 59 && second <= 59
}

/// `HH:MM[:SS[.fraction]]` as ticks from midnight, with at most 6 (or 9, `nanos`) fraction
/// digits.
fn parse_time_at(c: &mut Cursor, nanos: bool) -> Option<i64> {
    let (hour, minute, second, fraction) = time_fields(c, if nanos { 9 } else { 6 })?;
    if !valid_time(hour, minute, second) {
        return None;
    }
    let (per_second, fraction) = if nanos {
        (1_000_000_000, fraction)
    } else {
        (MICROS_PER_SECOND, fraction / NANOS_PER_MICRO)
    };
    Some(((hour * 60 + minute) * 60 + second) * per_second + fraction)
}

/// A zone offset: `Z` or `±HH:MM` (and `±HH:MM:SS` when `seconds`), in seconds east of UTC.
fn offset_at(c: &mut Cursor, seconds: bool) -> Option<i64> {
    if c.eat(b'Z') || c.eat(b'z') {
        return Some(0);
    }
    let sign = if c.eat(b'+') {
        1
    } else if c.eat(b'-') {
        -1
    } else {
        return None;
    };
    let (h, _) = c.digits(2, 2)?;
    if !c.eat(b':') {
        return None;
    }
    let (m, _) = c.digits(2, 2)?;
    let s = if seconds && c.eat(b':') {
        c.digits(2, 2)?.0
    } else {
        0
    };
    if h > 18 || m > 59 || s > 59 {
        return None;
    }
    Some(sign * (h * 3600 + m * 60 + s))
}

fn parse_offset_at(c: &mut Cursor) -> Option<i64> {
    offset_at(c, false)
}

pub fn parse_date(text: &str) -> Result<i32> {
    let mut c = Cursor { text, pos: 0 };
    parse_date_at(&mut c)
        .filter(|_| c.done())
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(|| Error::decode(format!("invalid date {text:?}")))
}

pub fn parse_time(text: &str) -> Result<i64> {
    let mut c = Cursor { text, pos: 0 };
    parse_time_at(&mut c, false)
        .filter(|_| c.done())
        .ok_or_else(|| Error::decode(format!("invalid time {text:?}")))
}

/// Parses a timestamp into micros (or nanos) from the epoch. Without a zone the text must have no
/// offset; with a zone it must have one, which is applied to give UTC.
pub fn parse_timestamp(text: &str, nanos: bool, with_zone: bool) -> Result<i64> {
    let err = || {
        let what = match (nanos, with_zone) {
            (false, false) => "timestamp",
            (false, true) => "timestamptz",
            (true, false) => "timestamp_ns",
            (true, true) => "timestamptz_ns",
        };
        Error::decode(format!("invalid {what} {text:?}"))
    };
    let mut c = Cursor { text, pos: 0 };
    let days = parse_date_at(&mut c).ok_or_else(err)?;
    if !(c.eat(b'T') || c.eat(b't')) {
        return Err(err());
    }
    let of_day = parse_time_at(&mut c, nanos).ok_or_else(err)?;
    let offset_seconds = if with_zone {
        parse_offset_at(&mut c).ok_or_else(err)?
    } else {
        0
    };
    if !c.done() {
        return Err(err());
    }
    let per_day = if nanos { NANOS_PER_DAY } else { MICROS_PER_DAY };
    let per_second = if nanos {
        1_000_000_000
    } else {
        MICROS_PER_SECOND
    };
    let ticks = (days as i128) * per_day as i128 + of_day as i128
        - offset_seconds as i128 * per_second as i128;
    i64::try_from(ticks).map_err(|_| err())
}

// ---------------------------------------------------------------------------------------------
// Expression literals: the text a row filter compares a date/time column with.

/// Days from the epoch of a date literal: ISO-8601 `[±]YYYY-MM-DD` (Java's `ISO_LOCAL_DATE`),
/// surrounding whitespace ignored.
pub fn parse_date_literal(text: &str) -> Result<i32> {
    let t = text.trim();
    let mut c = Cursor { text: t, pos: 0 };
    let (year, month, day) = date_fields(&mut c)
        .filter(|_| c.done())
        .ok_or_else(|| Error::parse(format!("{text:?} is not an ISO date (yyyy-mm-dd)")))?;
    let days = days_of(year, month, day).map_err(|why| Error::parse(format!("{text:?}: {why}")))?;
    i32::try_from(days).map_err(|_| Error::parse(format!("{text:?} is out of the date range")))
}

/// Nanoseconds of the day of a time literal: `HH:MM[:SS[.fffffffff]]` (Java's
/// `ISO_LOCAL_TIME`, to nanoseconds: the caller decides what a finer value than its column
/// holds means).
pub fn parse_time_literal(text: &str) -> Result<i64> {
    let t = text.trim();
    let mut c = Cursor { text: t, pos: 0 };
    let (hour, minute, second, nanos) =
        time_fields(&mut c, 9).filter(|_| c.done()).ok_or_else(|| {
            Error::parse(format!(
                "{text:?} is not an ISO time (hh:mm[:ss[.fffffffff]])"
            ))
        })?;
    if !valid_time(hour, minute, second) {
        return Err(Error::parse(format!("{text:?} is not a valid time of day")));
    }
    Ok(((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos)
}

/// Nanoseconds from the epoch of a timestamp literal. Java's forms (`ISO_LOCAL_DATE_TIME` for
/// a timestamp, `ISO_DATE_TIME` with an offset for a timestamptz) and two that row filters
/// commonly use: a space instead of the `T`, and a date alone for its midnight. Fractions to
/// nanoseconds; offsets `Z` or `±HH:MM[:SS]`, required exactly when `with_zone`, and applied to
/// give UTC. An `i128` holds every such instant (nanoseconds of year ±999,999,999 overflow i64).
pub fn parse_timestamp_literal(text: &str, with_zone: bool) -> Result<i128> {
    let t = text.trim();
    let invalid = || {
        Error::parse(format!(
            "{text:?} is not an ISO timestamp (yyyy-mm-ddThh:mm:ss[.f])"
        ))
    };
    let mut c = Cursor { text: t, pos: 0 };
    let (year, month, day) = date_fields(&mut c).ok_or_else(invalid)?;
    let mut nanos_of_day = 0;
    if c.eat(b'T') || c.eat(b't') || c.eat(b' ') {
        let (hour, minute, second, nanos) = time_fields(&mut c, 9).ok_or_else(invalid)?;
        if !valid_time(hour, minute, second) {
            return Err(Error::parse(format!("{text:?} is not a valid time of day")));
        }
        nanos_of_day = ((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos;
    }
    let offset = if c.done() {
        None
    } else {
        Some(
            offset_at(&mut c, true)
                .filter(|_| c.done())
                .ok_or_else(invalid)?,
        )
    };
    let days = days_of(year, month, day).map_err(|why| Error::parse(format!("{text:?}: {why}")))?;
    let offset = match (offset, with_zone) {
        (Some(o), true) => o,
        (None, false) => 0,
        (None, true) => {
            return Err(Error::parse(format!(
                "{text:?} has no UTC offset, which a timestamptz needs \
                 (e.g. '2024-01-01T00:00:00+00:00')"
            )))
        }
        (Some(_), false) => {
            return Err(Error::parse(format!(
                "{text:?} has a UTC offset, which a timestamp without zone cannot take"
            )))
        }
    };
    let nanos_per_day = NANOS_PER_DAY as i128;
    Ok(days as i128 * nanos_per_day + nanos_of_day as i128 - offset as i128 * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2017, 11, 16), 17486);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(civil_from_days(-719_528), (0, 1, 1));
        assert_eq!(format_date(17486), "2017-11-16");
        assert_eq!(format_date(-719_529), "-0001-12-31");
        assert_eq!(format_date(days_from_civil(10_000, 1, 1)), "+10000-01-01");
        assert_eq!(years_from_days(-1), -1);
        assert_eq!(months_from_days(-1), -1);
        assert_eq!(months_from_days(31), 1);
    }

    #[test]
    fn text_forms() {
        assert_eq!(parse_date("2017-11-16").unwrap(), 17486);
        assert_eq!(parse_date("-0001-12-31").unwrap(), -719_529);
        assert!(parse_date("2017-02-29").is_err());
        assert!(parse_date("2016-02-30").is_err());
        assert!(parse_date("10000-01-01").is_err());
        assert_eq!(parse_time("22:31:08.123456").unwrap(), 81_068_123_456);
        assert_eq!(parse_time("22:31").unwrap(), 81_060_000_000);
        assert!(parse_time("24:00:00").is_err());
        assert!(parse_time("22:31:08.1234567").is_err());
        assert_eq!(
            parse_timestamp("2017-11-16T14:31:08-08:00", false, true).unwrap(),
            parse_timestamp("2017-11-16T22:31:08", false, false).unwrap()
        );
        assert!(parse_timestamp("2017-11-16T22:31:08+00:00", false, false).is_err());
        assert!(parse_timestamp("2017-11-16T22:31:08", false, true).is_err());
        assert_eq!(
            format_timestamp(1_510_871_468_123_456, false, true),
            "2017-11-16T22:31:08.123456+00:00"
        );
        assert_eq!(
            format_timestamp(-1, true, false),
            "1969-12-31T23:59:59.999999999"
        );
    }

    #[test]
    fn literal_forms() {
        // Java's ISO_LOCAL_DATE, ISO_LOCAL_TIME, ISO_LOCAL_DATE_TIME and ISO_DATE_TIME, to ns
        assert_eq!(parse_date_literal(" 2017-11-16 ").unwrap(), 17486);
        assert_eq!(parse_date_literal("+10000-01-01").unwrap(), 2_932_897);
        let err = parse_date_literal("2024-13-01").unwrap_err();
        assert!(err.message.contains("month must be in 1..12"), "{err}");
        let err = parse_date_literal("2023-02-29").unwrap_err();
        assert!(err.message.contains("day is out of range"), "{err}");
        assert!(parse_date_literal("2024/01/01")
            .unwrap_err()
            .message
            .contains("not an ISO date"));
        assert!(parse_date_literal("10000-01-01").is_err()); // five digits need a sign
        assert_eq!(parse_time_literal("10:11").unwrap(), 36_660_000_000_000);
        assert_eq!(
            parse_time_literal("22:31:08.123456789").unwrap(),
            81_068_123_456_789
        );
        assert!(parse_time_literal("24:00").is_err());
        assert!(parse_time_literal("22:31:08.1234567891").is_err());
        let ts = |t: &str, z: bool| parse_timestamp_literal(t, z);
        let midnight = 1_704_067_200_000_000_000i128; // 2024-01-01T00:00:00Z
        assert_eq!(ts("2024-01-01", false).unwrap(), midnight);
        assert_eq!(ts("2024-01-01 00:00", false).unwrap(), midnight);
        assert_eq!(
            ts("2024-01-01T00:00:00.000000001", false).unwrap(),
            midnight + 1
        );
        assert_eq!(ts("2024-01-01T02:00:00+02:00", true).unwrap(), midnight);
        assert_eq!(ts("2023-12-31T23:59:30-00:00:30", true).unwrap(), midnight);
        assert_eq!(ts("2024-01-01T00:00:00Z", true).unwrap(), midnight);
        assert!(ts("2024-01-01T00:00:00Z", false)
            .unwrap_err()
            .message
            .contains("timestamp without zone"));
        assert!(ts("2024-01-01T00:00:00", true)
            .unwrap_err()
            .message
            .contains("has no UTC offset"));
        for bad in [
            "2024-01-01T",
            "2024-01-01T25:00",
            "2024-01-01X",
            "2024-01-01T00:00+19:00",
        ] {
            assert!(ts(bad, true).is_err(), "{bad}");
        }
        // far beyond i64 nanoseconds, still exact
        assert_eq!(
            ts("+999999-12-31T23:59:59.999999999", false).unwrap(),
            (days_from_civil(1_000_000, 1, 1) as i128) * NANOS_PER_DAY as i128 - 1
        );
    }

    proptest! {
        #[test]
        fn literal_and_strict_forms_agree(t in any::<i64>(), zone: bool) {
            let text = format_timestamp(t, true, zone);
            prop_assert_eq!(parse_timestamp_literal(&text, zone).unwrap(), t as i128);
        }

        #[test]
        fn civil_round_trip(days in -1_000_000_000i64..1_000_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn timestamp_text_round_trip(t in any::<i64>(), nanos: bool, zone: bool) {
            let text = format_timestamp(t, nanos, zone);
            prop_assert_eq!(parse_timestamp(&text, nanos, zone).unwrap(), t);
        }

        #[test]
        fn date_text_round_trip(d in any::<i32>()) {
            prop_assert_eq!(parse_date(&format_date(d as i64)).unwrap(), d);
        }
    }
}
