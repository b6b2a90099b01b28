//! Calendar dates for `accept` entries' `expires:` (`YYYY-MM-DD`, UTC).
//!
//! A date is all an expiry needs, so a small type instead of a date crate:
//! parsing with the days of each month checked, ordering, and the civil
//! date of a count of days since 1970-01-01 (the command line turns the
//! clock into today's date at its edge; the library reads no clock).

use std::fmt;

/// A calendar date (proleptic Gregorian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Year, 1 to 9999.
    pub year: u16,
    /// Month, 1 to 12.
    pub month: u8,
    /// Day of the month, from 1.
    pub day: u8,
}

impl Date {
    /// Parses `YYYY-MM-DD`, the day checked against its month.
    pub fn parse(text: &str) -> Result<Date, String> {
        let invalid = || format!("`{text}` is not a date: write YYYY-MM-DD, e.g. 2025-06-30");
        let parts: Vec<&str> = text.trim().split('-').collect();
        let [year, month, day] = parts.as_slice() else {
            return Err(invalid());
        };
        if year.len() != 4 || month.len() != 2 || day.len() != 2 {
            return Err(invalid());
        }
        let number = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_digit())
                .then(|| s.parse::<u16>().ok())
                .flatten()
        };
        let (Some(year), Some(month), Some(day)) = (number(year), number(month), number(day))
        else {
            return Err(invalid());
        };
        if year == 0 || !(1..=12).contains(&month) {
            return Err(invalid());
        }
        let month = month as u8;
        let last = days_in_month(year, month);
        if day == 0 || day > u16::from(last) {
            return Err(format!(
                "`{text}` is not a date: {year:04}-{month:02} has {last} days"
            ));
        }
        Ok(Date {
            year,
            month,
            day: day as u8,
        })
    }

    /// The date `days` days after 1970-01-01 (negative: before), clamped
    /// to years 1 to 9999 (Howard Hinnant's `civil_from_days`).
    pub fn from_unix_days(days: i64) -> Date {
        let z = days.clamp(-719_162, 2_932_896) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        }
    }
}

impl fmt::Display for Date {
    /// `YYYY-MM-DD`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_with_their_months_checked() {
        let date = Date::parse("2024-02-29").unwrap();
        assert_eq!((date.year, date.month, date.day), (2024, 2, 29));
        assert_eq!(date.to_string(), "2024-02-29");
        assert!(
            Date::parse("2023-02-29")
                .unwrap_err()
                .contains("has 28 days")
        );
        assert!(Date::parse("1900-02-29").is_err());
        assert!(Date::parse("2000-02-29").is_ok());
        for bad in [
            "2024-13-01",
            "2024-1-01",
            "24-01-01",
            "2024/01/01",
            "",
            "+024-01-01",
        ] {
            assert!(
                Date::parse(bad).unwrap_err().contains("YYYY-MM-DD"),
                "{bad}"
            );
        }
        assert!(Date::parse("2024-01-02") > Date::parse("2024-01-01"));
    }

    #[test]
    fn days_since_the_epoch_become_dates() {
        assert_eq!(Date::from_unix_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_unix_days(19_782).to_string(), "2024-02-29");
        assert_eq!(Date::from_unix_days(-1).to_string(), "1969-12-31");
        assert_eq!(Date::from_unix_days(i64::MAX).to_string(), "9999-12-31");
        assert_eq!(Date::from_unix_days(i64::MIN).to_string(), "0001-01-01");
    }
}
