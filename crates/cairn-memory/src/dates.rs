//! Relative dates made absolute, from the moment a statement was made.
//!
//! "tomorrow", "next week", "Thursday", "明日", "来週の金曜", "下周五" mean nothing a week later,
//! so when a memory is stored they are rewritten against the source turn's date (in the local
//! time zone): `tomorrow` → `on 2026-11-26`, `Thursday` → `Thursday 2026-11-26`,
//! `next week` → `in the week of 2026-11-30`, `明日` → `2026-11-26`, `下周` → `2026-11-30那一周`.
//! Weeks start on Monday. A bare or "this" weekday is the next one on or after the anchor day;
//! "next <weekday>" is the one in the following week; "last <weekday>" the latest one before.
//! Recurring phrases ("every Friday", "Fridays", "毎週金曜", a habit with plural things: "we do
//! hotfix deploys on Thursday") are left alone, and so is a
//! weekday already followed by a date, so rewriting twice changes nothing. A date without its
//! year ("December 15", "15 December") gets the year that puts it nearest the statement (said
//! in December, "January 6" is next year's), "the end of the month" the month it was said in,
//! and "on the 3rd" its date in this month or the next; a day of every month ("we release at
//! the end of the month", "invoices go out on the 15th") stays as it is.

use std::sync::LazyLock;

use jiff::ToSpan;
use jiff::civil::{Date, Weekday};
use regex::{Captures, Regex};

/// The local calendar date of a Unix timestamp (the system time zone, `TZ` honoured).
pub fn anchor_date(at_secs: i64) -> Date {
    let ts = jiff::Timestamp::from_second(at_secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.to_zoned_datetime(jiff::tz::TimeZone::system()).date()
}

fn add_days(d: Date, n: i64) -> Date {
    d.checked_add(n.days()).unwrap_or(d)
}

fn monday_of(d: Date, week_offset: i64) -> Date {
    let back = i64::from(d.weekday().to_monday_zero_offset());
    add_days(d, -back + 7 * week_offset)
}

fn on_or_after(d: Date, w: Weekday) -> Date {
    let diff = (i64::from(w.to_monday_zero_offset())
        - i64::from(d.weekday().to_monday_zero_offset()))
    .rem_euclid(7);
    add_days(d, diff)
}

fn before(d: Date, w: Weekday) -> Date {
    let diff = (i64::from(d.weekday().to_monday_zero_offset())
        - i64::from(w.to_monday_zero_offset()))
    .rem_euclid(7);
    add_days(d, -(if diff == 0 { 7 } else { diff }))
}

fn in_week(d: Date, week_offset: i64, w: Weekday) -> Date {
    add_days(
        monday_of(d, week_offset),
        i64::from(w.to_monday_zero_offset()),
    )
}

fn iso(d: Date) -> String {
    d.strftime("%Y-%m-%d").to_string()
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn month_shift(d: Date, n: i32) -> (i16, i8) {
    let m = i32::from(d.year()) * 12 + i32::from(d.month()) - 1 + n;
    ((m.div_euclid(12)) as i16, (m.rem_euclid(12) + 1) as i8)
}

fn en_weekday(s: &str) -> Option<Weekday> {
    Some(match s.to_ascii_lowercase().as_str() {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return None,
    })
}

fn cjk_weekday(c: &str) -> Option<Weekday> {
    Some(match c {
        "月" | "一" => Weekday::Monday,
        "火" | "二" => Weekday::Tuesday,
        "水" | "三" => Weekday::Wednesday,
        "木" | "四" => Weekday::Thursday,
        "金" | "五" => Weekday::Friday,
        "土" | "六" => Weekday::Saturday,
        "日" | "天" => Weekday::Sunday,
        _ => return None,
    })
}

fn en_weekday_name(w: Weekday) -> &'static str {
    match w {
        Weekday::Monday => "Monday",
        Weekday::Tuesday => "Tuesday",
        Weekday::Wednesday => "Wednesday",
        Weekday::Thursday => "Thursday",
        Weekday::Friday => "Friday",
        Weekday::Saturday => "Saturday",
        Weekday::Sunday => "Sunday",
    }
}

fn number_word(s: &str) -> Option<i64> {
    if let Ok(n) = s.parse::<i64>() {
        return (0..=366).contains(&n).then_some(n);
    }
    Some(match s.to_ascii_lowercase().as_str() {
        "a" | "an" | "one" => 1,
        "two" => 2,
        "three" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        _ => return None,
    })
}

const PREPOSITIONS: &[&str] = &[
    "on", "by", "until", "till", "til", "before", "after", "from", "since", "through", "for", "of",
    "as", "at", "in", "to", "than", "due",
];

/// The word just before byte offset `at`, lowercased.
fn word_before(text: &str, at: usize) -> String {
    text[..at]
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("")
        .to_lowercase()
}

/// Whether `at` starts a sentence (only whitespace or sentence punctuation before it).
fn sentence_start(text: &str, at: usize) -> bool {
    let before = text[..at].trim_end();
    before.is_empty() || before.ends_with(['.', '!', '?', '\n', ':'])
}

/// Puts `prep` before `expr` unless the text already has a preposition there.
fn with_prep(text: &str, at: usize, prep: &str, expr: &str) -> String {
    if sentence_start(text, at) {
        let mut p = prep.to_string();
        if let Some(f) = p.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        return format!("{p} {expr}");
    }
    let w = word_before(text, at);
    if PREPOSITIONS.contains(&w.as_str()) {
        expr.to_string()
    } else {
        format!("{prep} {expr}")
    }
}

fn followed_by_date(text: &str, end: usize) -> bool {
    static DATE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[\s(（]*\d{4}-\d{2}-\d{2}").expect("static regex"));
    DATE.is_match(&text[end..])
}

fn preceded_by_date(text: &str, start: usize) -> bool {
    static DATE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\d{4}-\d{2}-\d{2}[(（]?$").expect("static regex"));
    DATE.is_match(&text[..start])
}

/// A day of each month, not of one: "we release at the end of the month", "invoices go out on
/// the 15th", "never deploy at the end of the month".
fn month_habit(t: &str) -> bool {
    static HABIT: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\bmonthly\b|\b(?:every|each)\s+month\b|\bas (?:usual|always)\b|\bwe\s+(?:always\s+|usually\s+)?(?:release|ship|deploy|pay|bill|invoice|close|run|rotate|review|report|publish|cut|reconcile)\b|\b[a-z-]+s\s+(?:go out|are paid|are sent|are cut|are closed|run|renew|reset)\b",
        )
    });
    EN_RECURRING.is_match(t) || HABIT.is_match(t)
}

/// A year right after a date: "December 15, 2026", "15 December 2026".
fn followed_by_year(text: &str, end: usize) -> bool {
    let rest = text[end..].trim_start_matches([',', ' ']);
    rest.len() >= 4 && rest.as_bytes()[..4].iter().all(u8::is_ascii_digit)
}

/// The month number of an English month name or its abbreviation.
fn month_number(name: &str) -> Option<i8> {
    let lower = name.trim_end_matches('.').to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| m.to_ascii_lowercase().starts_with(&lower) && lower.len() >= 3)
        .and_then(|i| i8::try_from(i + 1).ok())
}

/// The year that puts `month`/`day` nearest the anchor (within half a year either way): said
/// on 2026-12-01, "January 6" is in 2027 and "November 3" in 2026.
fn nearest_year(anchor: Date, month: i8, day: i8) -> Option<i16> {
    let y = anchor.year();
    [y - 1, y, y + 1]
        .into_iter()
        .filter_map(|y| Date::new(y, month, day).ok())
        .min_by_key(|d| {
            anchor
                .until(*d)
                .map_or(i64::MAX, |span| i64::from(span.get_days()).abs())
        })
        .map(|d| d.year())
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("static regex")
}

static EN_WEEKDAY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:(next|this|last|coming|upcoming)\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    )
});
/// Words that make a bare weekday a recurring one: a habit, a schedule or a rule.
static EN_RECURRING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:every|each|weekly|biweekly|fortnightly|always|usually|normally|typically|generally|never|no|don't|don’t|do not|avoid|routinely|recurring|schedule[sd]?)\b",
    )
});
/// A weekday followed by a plural part of the day ("Wednesday afternoons"), or listed with
/// another weekday ("Monday and Thursday").
static EN_DAY_PART_PLURAL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s+(?:mornings|afternoons|evenings|nights)\b"));
static EN_ANY_WEEKDAY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?\b"));
/// Japanese and Chinese: a rule or a habit around a bare weekday.
static JA_RECURRING: LazyLock<Regex> = LazyLock::new(|| re(r"ない|禁止|毎|いつも|必ず|常に|定期"));
static ZH_RECURRING: LazyLock<Regex> = LazyLock::new(|| re(r"不|别|禁止|每|总是|一律|都|定期"));

/// A habit said in the present with plural things: "we do hotfix deploys on Thursday",
/// "releases go out on Monday", "backups run on Sunday" ("we ship on Friday" may be this
/// Friday: it is made a date).
static EN_HABIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:we\s+(?:do|run|hold|have|take|get)\s+(?:[a-z-]+\s+){0,2}[a-z-]+s|[a-z-]+s\s+(?:go out|go|happen|run|are|take place|get deployed|get released|get cut|are cut|ship))\s+on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    )
});

/// Whether the bare weekday at `start..end` of `t` recurs.
fn recurring_en(t: &str, start: usize, end: usize) -> bool {
    if EN_RECURRING.is_match(t) || EN_DAY_PART_PLURAL.is_match(&t[end..]) || EN_HABIT.is_match(t) {
        return true;
    }
    // Another weekday close by: a schedule.
    let lo = t[..start]
        .char_indices()
        .rev()
        .nth(24)
        .map_or(0, |(i, _)| i);
    let hi = t[end..]
        .char_indices()
        .nth(25)
        .map_or(t.len(), |(i, _)| end + i);
    EN_ANY_WEEKDAY
        .find_iter(&t[lo..hi])
        .any(|m| lo + m.start() != start)
}

static EN_DAY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(the day after tomorrow|the day before yesterday|tomorrow|yesterday|today|tonight)\b",
    )
});
static EN_WEEK: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(next|this|last|the following|the coming|the previous)\s+week\b"));
static EN_MONTH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(next|this|last|the following|the previous)\s+month\b"));
/// "the end of the month", "by the start of this month": the month the statement was made in.
static EN_THE_MONTH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(end|start|beginning|middle)\s+of\s+(?:the|this)\s+month\b"));
/// A day of a month without a year: "December 15", "Dec 15th", "15 December".
static EN_MONTH_DAY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(?:(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?\s+(\d{1,2})(?:st|nd|rd|th)?|(\d{1,2})(?:st|nd|rd|th)?\s+(January|February|March|April|May|June|July|August|September|October|November|December))\b",
    )
});
/// "on the 3rd", "by the 15th": a day of the coming month or this one.
static EN_THE_NTH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(on|by|before|until|after) the (\d{1,2})(st|nd|rd|th)\b"));
static EN_QUARTER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(next|this|last|the previous|the following)\s+(quarter|year)\b"));
static EN_IN_N: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:in\s+(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?)|(\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?)\s+ago)\b",
    )
});
static JA_WEEKDAY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(毎週|再来週|来週|今週|先週)?の?([月火水木金土日])曜日?"));
static JA_DAY: LazyLock<Regex> =
    LazyLock::new(|| re(r"明後日|あさって|一昨日|おととい|明日|あした|昨日|きのう|今日"));
static JA_WEEK: LazyLock<Regex> = LazyLock::new(|| re(r"再来週|来週|今週|先週"));
static JA_MONTH: LazyLock<Regex> = LazyLock::new(|| re(r"再来月|来月|今月|先月"));
static ZH_WEEKDAY: LazyLock<Regex> =
    LazyLock::new(|| re(r"(每|下下|下|这|本|上)?个?(?:周|星期|礼拜)([一二三四五六日天])"));
static ZH_DAY: LazyLock<Regex> = LazyLock::new(|| re(r"大后天|后天|前天|明天|昨天|今天"));
static ZH_WEEK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"下下(?:周|个?星期|个?礼拜)|下(?:周|个?星期|个?礼拜)|(?:这|本)(?:周|个?星期|个?礼拜)|上(?:周|个?星期|个?礼拜)",
    )
});
static ZH_MONTH: LazyLock<Regex> = LazyLock::new(|| re(r"下个?月|这个月|本月|上个?月"));

/// Rewrites the relative dates of `text` against the day `anchor` (see the module docs).
/// Code (between backticks) is left as it is: `date --date='next friday'` is a command.
/// Traditional Chinese is read as Simplified ("下週四" as "下周四") and kept as written.
pub fn absolutise(text: &str, anchor: Date) -> String {
    match crate::t2s::simplified(text) {
        Some(zh) => zh.restore(&absolutise_in(&zh.text, anchor)),
        None => absolutise_in(text, anchor),
    }
}

fn absolutise_in(text: &str, anchor: Date) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].chars().take_while(|&c| c == '`').count();
        let fence = &rest[open..open + ticks];
        let after = &rest[open + ticks..];
        let Some(close) = after.find(fence) else {
            break;
        };
        out.push_str(&absolutise_prose(&rest[..open], anchor));
        let end = open + ticks + close + ticks;
        out.push_str(&rest[open..end]);
        rest = &rest[end..];
    }
    out.push_str(&absolutise_prose(rest, anchor));
    out
}

/// Quoted words: "when I say 'tomorrow morning' I mean CET" speaks of the phrase, not a day.
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#""[^"\n]{1,60}"|“[^”\n]{1,60}”|‘[^’\n]{1,60}’|「[^」\n]{1,60}」|(?:^|[\s(])'[^'\n]{1,60}'(?:[\s.,;:!?)]|$)"#,
    )
});

/// [`absolutise`] on text without code: quoted words are left as they are.
fn absolutise_prose(text: &str, anchor: Date) -> String {
    if !text.contains(['"', '“', '‘', '「', '\'']) {
        return absolutise_words(text, anchor);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in QUOTED.find_iter(text) {
        out.push_str(&absolutise_words(&text[last..m.start()], anchor));
        out.push_str(m.as_str());
        last = m.end();
    }
    out.push_str(&absolutise_words(&text[last..], anchor));
    out
}

/// [`absolutise`] on text without code or quotes.
fn absolutise_words(text: &str, anchor: Date) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mut s = text.to_string();
    // English.
    s = replace(&s, &EN_WEEKDAY, |t, c, start, end| {
        if followed_by_date(t, end) || word_before(t, start) == "every" {
            return None;
        }
        // A bare weekday in a habit or a rule recurs: "no deploys on Friday afternoon",
        // "retrained weekly on Sunday", "standup is on Monday and Thursday".
        if c.get(1).is_none() && recurring_en(t, start, end) {
            return None;
        }
        let w = en_weekday(&c[2])?;
        let d = match c.get(1).map(|m| m.as_str().to_ascii_lowercase()).as_deref() {
            Some("next") => in_week(anchor, 1, w),
            Some("last") => before(anchor, w),
            _ => on_or_after(anchor, w),
        };
        Some(format!("{} {}", en_weekday_name(w), iso(d)))
    });
    s = replace(&s, &EN_DAY, |t, c, start, _| {
        let phrase = c[1].to_ascii_lowercase();
        let (n, expr) = match phrase.as_str() {
            "the day after tomorrow" => (2, None),
            "the day before yesterday" => (-2, None),
            "tomorrow" => (1, None),
            "yesterday" => (-1, None),
            "tonight" => (0, Some("the evening of")),
            _ => (0, None),
        };
        let d = iso(add_days(anchor, n));
        let expr = match expr {
            Some(e) => format!("{e} {d}"),
            None => d,
        };
        Some(with_prep(t, start, "on", &expr))
    });
    s = replace(&s, &EN_WEEK, |t, c, start, _| {
        let off = match c[1].to_ascii_lowercase().as_str() {
            "next" | "the following" | "the coming" => 1,
            "last" | "the previous" => -1,
            _ => 0,
        };
        let expr = format!("the week of {}", iso(monday_of(anchor, off)));
        Some(with_prep(t, start, "in", &expr))
    });
    s = replace(&s, &EN_MONTH, |t, c, start, _| {
        let off = match c[1].to_ascii_lowercase().as_str() {
            "next" | "the following" => 1,
            "last" | "the previous" => -1,
            _ => 0,
        };
        let (y, m) = month_shift(anchor, off);
        let expr = format!("{} {y}", MONTHS[(m - 1) as usize]);
        Some(with_prep(t, start, "in", &expr))
    });
    s = replace(&s, &EN_THE_MONTH, |t, c, _, _| {
        if month_habit(t) {
            return None;
        }
        Some(format!(
            "{} of {} {}",
            &c[1],
            MONTHS[(anchor.month() - 1) as usize],
            anchor.year()
        ))
    });
    s = replace(&s, &EN_MONTH_DAY, |t, c, _, end| {
        if followed_by_year(t, end) {
            return None;
        }
        let (name, day) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
            (Some(m), Some(d), _, _) => (m.as_str(), d.as_str()),
            (_, _, Some(d), Some(m)) => (m.as_str(), d.as_str()),
            _ => return None,
        };
        let month = month_number(name)?;
        let day: i8 = day.parse().ok()?;
        let year = nearest_year(anchor, month, day)?;
        // "December 15" → "December 15, 2026"; "15 December" → "15 December 2026".
        Some(if c.get(1).is_some() {
            format!("{}, {year}", &c[0])
        } else {
            format!("{} {year}", &c[0])
        })
    });
    s = replace(&s, &EN_THE_NTH, |t, c, _, end| {
        // "the 3rd of December", "the 3rd (2026-12-03)": said already.
        let rest = t[end..].trim_start();
        if rest.starts_with('(') || rest.to_ascii_lowercase().starts_with("of ") || month_habit(t) {
            return None;
        }
        let day: i8 = c[2].parse().ok()?;
        let this = Date::new(anchor.year(), anchor.month(), day).ok();
        let date = match this {
            Some(d) if d >= anchor => d,
            _ => {
                let (y, m) = month_shift(anchor, 1);
                Date::new(y, m, day).ok()?
            }
        };
        Some(format!("{} ({})", &c[0], iso(date)))
    });
    s = replace(&s, &EN_QUARTER, |t, c, start, _| {
        let off = match c[1].to_ascii_lowercase().as_str() {
            "next" | "the following" => 1,
            "last" | "the previous" => -1,
            _ => 0,
        };
        let expr = if c[2].eq_ignore_ascii_case("year") {
            format!("{}", i32::from(anchor.year()) + off)
        } else {
            let (y, m) = month_shift(anchor, 3 * off);
            format!("{y} Q{}", (m - 1) / 3 + 1)
        };
        Some(with_prep(t, start, "in", &expr))
    });
    s = replace(&s, &EN_IN_N, |_, c, _, _| {
        let (n, unit, sign) = match (c.get(1), c.get(3)) {
            (Some(n), _) => (number_word(n.as_str())?, c[2].to_ascii_lowercase(), 1),
            (None, Some(n)) => (number_word(n.as_str())?, c[4].to_ascii_lowercase(), -1),
            _ => return None,
        };
        let days = if unit.starts_with("week") { n * 7 } else { n };
        let d = iso(add_days(anchor, sign * days));
        Some(if unit.starts_with("week") && sign > 0 {
            format!("around {d}")
        } else {
            format!("on {d}")
        })
    });
    // Japanese.
    s = replace(&s, &JA_WEEKDAY, |t, c, start, end| {
        let m = c.get(1).map(|m| m.as_str());
        if m == Some("毎週") || followed_by_date(t, end) || preceded_by_date(t, start) {
            return None;
        }
        if m.is_none() && JA_RECURRING.is_match(t) {
            return None;
        }
        let w = cjk_weekday(&c[2])?;
        let d = match m {
            Some("再来週") => in_week(anchor, 2, w),
            Some("来週") => in_week(anchor, 1, w),
            Some("今週") => in_week(anchor, 0, w),
            Some("先週") => in_week(anchor, -1, w),
            _ => on_or_after(anchor, w),
        };
        Some(format!("{}({}曜)", iso(d), &c[2]))
    });
    s = replace(&s, &JA_DAY, |_, c, _, _| {
        let n = match &c[0] {
            "明後日" | "あさって" => 2,
            "一昨日" | "おととい" => -2,
            "明日" | "あした" => 1,
            "昨日" | "きのう" => -1,
            _ => 0,
        };
        Some(iso(add_days(anchor, n)))
    });
    s = replace(&s, &JA_WEEK, |_, c, _, _| {
        let off = match &c[0] {
            "再来週" => 2,
            "来週" => 1,
            "先週" => -1,
            _ => 0,
        };
        Some(format!("{}の週", iso(monday_of(anchor, off))))
    });
    s = replace(&s, &JA_MONTH, |_, c, _, _| {
        let off = match &c[0] {
            "再来月" => 2,
            "来月" => 1,
            "先月" => -1,
            _ => 0,
        };
        let (y, m) = month_shift(anchor, off);
        Some(format!("{y}年{m}月"))
    });
    // Chinese.
    s = replace(&s, &ZH_WEEKDAY, |t, c, start, end| {
        let m = c.get(1).map(|m| m.as_str());
        if m == Some("每") || followed_by_date(t, end) || preceded_by_date(t, start) {
            return None;
        }
        if m.is_none() && ZH_RECURRING.is_match(t) {
            return None;
        }
        let w = cjk_weekday(&c[2])?;
        let d = match m {
            Some("下下") => in_week(anchor, 2, w),
            Some("下") => in_week(anchor, 1, w),
            Some("这") | Some("本") => in_week(anchor, 0, w),
            Some("上") => in_week(anchor, -1, w),
            _ => on_or_after(anchor, w),
        };
        let wd = if &c[2] == "天" { "日" } else { &c[2] };
        Some(format!("{}(周{wd})", iso(d)))
    });
    s = replace(&s, &ZH_DAY, |_, c, _, _| {
        let n = match &c[0] {
            "大后天" => 3,
            "后天" => 2,
            "前天" => -2,
            "明天" => 1,
            "昨天" => -1,
            _ => 0,
        };
        Some(iso(add_days(anchor, n)))
    });
    s = replace(&s, &ZH_WEEK, |_, c, _, _| {
        let p = &c[0];
        let off = if p.starts_with("下下") {
            2
        } else if p.starts_with('下') {
            1
        } else if p.starts_with('上') {
            -1
        } else {
            0
        };
        Some(format!("{}那一周", iso(monday_of(anchor, off))))
    });
    s = replace(&s, &ZH_MONTH, |_, c, _, _| {
        let p = &c[0];
        let off = if p.starts_with('下') {
            1
        } else if p.starts_with('上') {
            -1
        } else {
            0
        };
        let (y, m) = month_shift(anchor, off);
        Some(format!("{y}年{m}月"))
    });
    s
}

/// `replace_all` whose closure sees the whole text and the match offsets, and may decline
/// (returning `None` keeps the match as it is).
fn replace(
    text: &str,
    re: &Regex,
    mut f: impl FnMut(&str, &Captures<'_>, usize, usize) -> Option<String>,
) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut last = 0;
    for c in re.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        out.push_str(&text[last..m.start()]);
        match f(text, &c, m.start(), m.end()) {
            Some(r) => out.push_str(&r),
            None => out.push_str(m.as_str()),
        }
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-25 is a Wednesday.
    fn d() -> Date {
        jiff::civil::date(2026, 11, 25)
    }

    #[test]
    fn english() {
        let a = |s: &str| absolutise(s, d());
        assert_eq!(a("deploy tomorrow"), "deploy on 2026-11-26");
        assert_eq!(
            a("freeze starts by tomorrow."),
            "freeze starts by 2026-11-26."
        );
        assert_eq!(a("Tomorrow we freeze"), "On 2026-11-26 we freeze");
        assert_eq!(a("the demo is Thursday"), "the demo is Thursday 2026-11-26");
        assert_eq!(a("on Wednesday"), "on Wednesday 2026-11-25");
        assert_eq!(a("next Friday"), "Friday 2026-12-04");
        assert_eq!(a("last Friday"), "Friday 2026-11-20");
        assert_eq!(a("ship it next week"), "ship it in the week of 2026-11-30");
        assert_eq!(
            a("the release is next month"),
            "the release is in December 2026"
        );
        assert_eq!(a("in 3 days"), "on 2026-11-28");
        assert_eq!(a("two days ago"), "on 2026-11-23");
        assert_eq!(a("the day after tomorrow"), "On 2026-11-27");
        assert_eq!(
            a("every Friday and on Fridays"),
            "every Friday and on Fridays"
        );
        assert_eq!(a("we got burned last quarter"), "we got burned in 2026 Q3");
        // A weekday that recurs stays a weekday.
        for recurring in [
            "I have no meetings on Wednesday afternoons",
            "The production model is retrained weekly on Sunday at 02:00 UTC",
            "We release every Friday; no deploys on Friday afternoon",
            "Standup is on Monday and Thursday at 10:00",
            "Never deploy on Friday",
            "We do hotfix deploys on Thursday",
            "Releases go out on Monday",
            "Backups run on Sunday at 03:00",
        ] {
            assert_eq!(a(recurring), recurring);
        }
        assert_eq!(
            a("the freeze starts on Thursday"),
            "the freeze starts on Thursday 2026-11-26"
        );
        assert_eq!(
            a("never deploy next Friday"),
            "never deploy Friday 2026-12-04"
        );
        assert_eq!(a("the freeze ends next year"), "the freeze ends in 2027");
        // A quoted phrase is spoken of, not a day.
        for quoted in [
            "when I say 'tomorrow morning' I mean CET",
            "in our standup notes \"tomorrow\" means the next working day",
            "when the PM says “next week” she means the next sprint",
            "「明日」は次の営業日のこと",
        ] {
            assert_eq!(a(quoted), quoted);
        }
        assert_eq!(
            a("it's due tomorrow, the 'quick' fix"),
            "it's due 2026-11-26, the 'quick' fix"
        );
    }

    #[test]
    fn dates_without_a_year_and_the_months_end() {
        let a = |s: &str| absolutise(s, d());
        assert_eq!(
            a("the VPC migration is due by the end of the month"),
            "the VPC migration is due by the end of November 2026"
        );
        assert_eq!(
            a("the deadline got pushed to December 15"),
            "the deadline got pushed to December 15, 2026"
        );
        assert_eq!(
            a("I'm out from Dec 20 to Jan 6"),
            "I'm out from Dec 20, 2026 to Jan 6, 2027"
        );
        assert_eq!(
            a("we shipped it on 3 November"),
            "we shipped it on 3 November 2026"
        );
        assert_eq!(
            a("the freeze lifts on the 3rd"),
            "the freeze lifts on the 3rd (2026-12-03)"
        );
        assert_eq!(a("pay by the 28th"), "pay by the 28th (2026-11-28)");
        // Said with its year, of a month, or of every month: as it is.
        for kept in [
            "we release at the end of the month",
            "As usual, the code freeze starts at the end of the month",
            "invoices go out on the 15th",
            "never deploy at the end of the month",
            "the launch is December 15, 2026",
            "Python 3.12 since May 2024",
            "on the 3rd of December",
            "may 5 people review it",
        ] {
            assert_eq!(a(kept), kept);
        }
    }

    #[test]
    fn idempotent() {
        let once = absolutise(
            "deploy Thursday, review tomorrow, 明日, 下周五, 来週の金曜日, by Dec 15, on the 3rd, end of the month",
            d(),
        );
        assert_eq!(absolutise(&once, d()), once);
    }

    #[test]
    fn japanese() {
        let a = |s: &str| absolutise(s, d());
        assert_eq!(a("明日までにデプロイ"), "2026-11-26までにデプロイ");
        assert_eq!(a("来週の金曜日にリリース"), "2026-12-04(金曜)にリリース");
        assert_eq!(a("来週リリース"), "2026-11-30の週リリース");
        assert_eq!(a("来月"), "2026年12月");
        assert_eq!(a("毎週金曜日に定例"), "毎週金曜日に定例");
        assert_eq!(a("金曜日はデプロイしない"), "金曜日はデプロイしない");
    }

    #[test]
    fn chinese() {
        let a = |s: &str| absolutise(s, d());
        assert_eq!(a("明天上线"), "2026-11-26上线");
        assert_eq!(a("下周五发布"), "2026-12-04(周五)发布");
        assert_eq!(a("下周开始冻结"), "2026-11-30那一周开始冻结");
        assert_eq!(a("后天"), "2026-11-27");
        assert_eq!(a("每周五开会"), "每周五开会");
        assert_eq!(a("周五不发布"), "周五不发布");
        assert_eq!(a("下个月"), "2026年12月");
    }

    #[test]
    fn traditional_chinese_is_dated_and_kept_as_written() {
        let a = |s: &str| absolutise(s, d());
        assert_eq!(a("下週五發布"), "2026-12-04(週五)發布");
        assert_eq!(a("明天上線，後天回顧"), "2026-11-26上線，2026-11-27回顧");
        assert_eq!(a("下個月"), "2026年12月");
    }
}
