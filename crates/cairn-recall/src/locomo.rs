//! Retrieval evaluation on LoCoMo-format data (Maharana et al., 2024).
//!
//! Per conversation (`sample_id`) an isolated in-memory store is built; every turn is a
//! document (id = its `dia_id`, name = speaker, description = session date, body = text
//! plus the caption of a shared image when there is one, keywords = the two turns before
//! and after it in the same session, timestamps = the session's date; see
//! [`LocomoOptions`]). Each question whose evidence
//! lists at least one well-formed, existing `dia_id` is a query; the rest are skipped and
//! counted. Metrics:
//!
//! * session level (a session's rank is the rank of its best turn): hit@1, hit@5, MRR;
//! * turn level: recall@5 and recall@10 of the evidence turns.
//!
//! Categories are keyed by their number in the data (`"1"` .. `"5"`), each entry also has
//! the name: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;
use serde_json::Value;

use crate::engine::{Document, Recall, RecallConfig};
use crate::error::RecallError;

/// How the evaluation builds documents and queries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocomoOptions {
    /// Ranking configuration of every per-conversation store.
    pub config: RecallConfig,
    /// Put the session date ("1:56 pm on 8 May, 2023") into each turn's description
    /// field (indexed and embedded). On by default: questions often name a date or month
    /// (dev set: session hit@1 +3 points).
    pub date_in_text: bool,
    /// Append the caption of a shared image to the turn text.
    pub captions: bool,
    /// Turns retrieved per question (session metrics look at the sessions among them).
    pub depth: usize,
    /// Neighbouring turns of the same session (this many before and after, as
    /// "speaker: text") put into a turn's `keywords` field, so that a turn is also found by
    /// the words of the exchange around it (an answer by its question, say): the general
    /// "sentence window" technique of conversational retrieval. 2 by default (dev set:
    /// session hit@1 0.67 -> 0.76); 0 indexes each turn alone.
    pub context: usize,
}

impl Default for LocomoOptions {
    fn default() -> Self {
        Self {
            config: RecallConfig::default(),
            date_in_text: true,
            captions: true,
            depth: 50,
            context: 2,
        }
    }
}

/// Metrics over a set of questions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LocomoMetrics {
    /// Category name (only inside `by_category`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Questions evaluated.
    pub questions: usize,
    /// Questions skipped (no usable evidence).
    pub skipped: usize,
    /// Share of questions whose best-ranked session holds evidence.
    pub session_hit_at_1: f64,
    /// Share of questions with an evidence session among the top 5 sessions.
    pub session_hit_at_5: f64,
    /// Mean reciprocal rank of the first evidence session (0 when not retrieved).
    pub session_mrr: f64,
    /// Mean share of evidence turns among the top 5 turns.
    pub turn_recall_at_5: f64,
    /// Mean share of evidence turns among the top 10 turns.
    pub turn_recall_at_10: f64,
}

/// The evaluation report (serialises to the `cairn eval locomo --json` shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LocomoReport {
    /// Questions evaluated.
    pub questions: usize,
    /// Questions skipped (no evidence, or none of it well-formed and present).
    pub skipped: usize,
    /// See [`LocomoMetrics`].
    pub session_hit_at_1: f64,
    /// See [`LocomoMetrics`].
    pub session_hit_at_5: f64,
    /// See [`LocomoMetrics`].
    pub session_mrr: f64,
    /// See [`LocomoMetrics`].
    pub turn_recall_at_5: f64,
    /// See [`LocomoMetrics`].
    pub turn_recall_at_10: f64,
    /// Per category, keyed `"1"` .. `"5"`.
    pub by_category: BTreeMap<String, LocomoMetrics>,
    /// Evidence ids that were malformed (not `D<session>:<turn>`) or absent from the
    /// conversation, and so ignored (a question keeps its other evidence).
    pub bad_evidence_ids: usize,
    /// Conversations evaluated.
    pub conversations: usize,
    /// Turns indexed over all conversations.
    pub turns: usize,
}

/// Category names by number.
pub fn category_name(c: i64) -> &'static str {
    match c {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        5 => "adversarial",
        _ => "other",
    }
}

/// Parses `D<session>:<turn>`; returns the session number.
fn session_of(dia_id: &str) -> Option<u32> {
    let rest = dia_id.strip_prefix('D')?;
    let (s, t) = rest.split_once(':')?;
    if s.is_empty()
        || t.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit())
        || !t.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    s.parse().ok()
}

/// Parses LoCoMo session dates such as "1:56 pm on 8 May, 2023" to Unix seconds (UTC).
pub fn parse_session_date(s: &str) -> Option<i64> {
    let s = s.trim().to_ascii_lowercase();
    let (time, date) = s.split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ').unwrap_or((time.trim(), ""));
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i64, i64) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    match ampm.trim() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        _ => {}
    }
    let parts: Vec<&str> = date.split([' ', ',']).filter(|p| !p.is_empty()).collect();
    let [d, mon, y] = parts.as_slice() else {
        return None;
    };
    let months = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let mon = months
        .iter()
        .position(|x| *x == *mon || x.get(..3) == Some(*mon))? as i64
        + 1;
    let (d, y): (i64, i64) = (d.parse().ok()?, y.parse().ok()?);
    if !(1..=31).contains(&d) || !(0..24).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    // Days from civil (Howard Hinnant).
    let yy = if mon <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mon + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60)
}

struct Question {
    text: String,
    category: i64,
    evidence: HashSet<String>,
}

#[derive(Default)]
struct Acc {
    n: usize,
    skipped: usize,
    h1: f64,
    h5: f64,
    mrr: f64,
    r5: f64,
    r10: f64,
}

impl Acc {
    fn metrics(&self, name: Option<String>) -> LocomoMetrics {
        let d = self.n.max(1) as f64;
        LocomoMetrics {
            name,
            questions: self.n,
            skipped: self.skipped,
            session_hit_at_1: self.h1 / d,
            session_hit_at_5: self.h5 / d,
            session_mrr: self.mrr / d,
            turn_recall_at_5: self.r5 / d,
            turn_recall_at_10: self.r10 / d,
        }
    }
}

/// Evaluates the default engine on a LoCoMo-format file.
pub fn eval_locomo(path: &Path) -> Result<LocomoReport, RecallError> {
    eval_locomo_with(path, &LocomoOptions::default())
}

/// Evaluates with explicit options.
pub fn eval_locomo_with(path: &Path, opts: &LocomoOptions) -> Result<LocomoReport, RecallError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| RecallError::Io {
        path: p.clone(),
        source,
    })?;
    let data: Value = serde_json::from_str(&text).map_err(|source| RecallError::Json {
        path: p.clone(),
        source,
    })?;
    let fmt = |message: &str| RecallError::Format {
        path: p.clone(),
        message: message.to_owned(),
    };
    let samples = data
        .as_array()
        .ok_or_else(|| fmt("top level is not a list of samples"))?;

    let mut report = LocomoReport::default();
    let mut all = Acc::default();
    let mut by_cat: BTreeMap<i64, Acc> = BTreeMap::new();

    for (si, sample) in samples.iter().enumerate() {
        let scope = sample
            .get("sample_id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("sample-{si}"), str::to_owned);
        let conv = sample
            .get("conversation")
            .and_then(Value::as_object)
            .ok_or_else(|| fmt("sample without conversation"))?;
        // Documents.
        let mut docs = Vec::new();
        let mut last_ts = 0i64;
        for (key, turns) in conv {
            let Some(num) = key.strip_prefix("session_") else {
                continue;
            };
            if !num.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Some(turns) = turns.as_array() else {
                continue;
            };
            let date = conv
                .get(&format!("session_{num}_date_time"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let ts = parse_session_date(date).unwrap_or(0);
            last_ts = last_ts.max(ts);
            let session_start = docs.len();
            for t in turns {
                let (Some(dia), Some(text)) = (
                    t.get("dia_id").and_then(Value::as_str),
                    t.get("text").and_then(Value::as_str),
                ) else {
                    continue;
                };
                let speaker = t.get("speaker").and_then(Value::as_str).unwrap_or("");
                let mut body = text.to_owned();
                if opts.captions
                    && let Some(c) = t.get("blip_caption").and_then(Value::as_str)
                {
                    body.push_str(" [shared ");
                    body.push_str(c);
                    body.push(']');
                }
                docs.push(Document {
                    id: dia.to_owned(),
                    scope: scope.clone(),
                    name: speaker.to_owned(),
                    description: if opts.date_in_text {
                        date.to_owned()
                    } else {
                        String::new()
                    },
                    body,
                    keywords: Vec::new(),
                    created_at: ts,
                    updated_at: ts,
                    recall_count: 0,
                });
            }
            if opts.context > 0 {
                let bodies: Vec<String> = docs[session_start..]
                    .iter()
                    .map(|d| format!("{}: {}", d.name, d.body))
                    .collect();
                for (i, d) in docs[session_start..].iter_mut().enumerate() {
                    let lo = i.saturating_sub(opts.context);
                    let hi = (i + opts.context + 1).min(bodies.len());
                    d.keywords = (lo..hi)
                        .filter(|&j| j != i)
                        .map(|j| bodies[j].clone())
                        .collect();
                }
            }
        }
        let ids: HashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
        // Questions.
        let mut questions = Vec::new();
        for q in sample
            .get("qa")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let category = q.get("category").and_then(Value::as_i64).unwrap_or(0);
            let text = q
                .get("question")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let mut evidence = HashSet::new();
            for e in q
                .get("evidence")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                match e.as_str() {
                    Some(e) if session_of(e).is_some() && ids.contains(e) => {
                        evidence.insert(e.to_owned());
                    }
                    _ => report.bad_evidence_ids += 1,
                }
            }
            if evidence.is_empty() || text.trim().is_empty() {
                all.skipped += 1;
                by_cat.entry(category).or_default().skipped += 1;
                continue;
            }
            questions.push(Question {
                text,
                category,
                evidence,
            });
        }

        let conn = Connection::open_in_memory()?;
        let mut recall = Recall::with_config(&conn, opts.config.clone())?;
        recall.upsert_many(&conn, &docs)?;
        report.conversations += 1;
        report.turns += docs.len();
        let now = last_ts + 86_400;

        for q in &questions {
            let hits = recall.search(&conn, &q.text, &[scope.as_str()], opts.depth, now)?;
            let ev_sessions: HashSet<u32> =
                q.evidence.iter().filter_map(|e| session_of(e)).collect();
            let mut sessions: Vec<u32> = Vec::new();
            for h in &hits {
                if let Some(s) = session_of(&h.id)
                    && !sessions.contains(&s)
                {
                    sessions.push(s);
                }
            }
            let first = sessions.iter().position(|s| ev_sessions.contains(s));
            let turn_recall = |k: usize| {
                hits.iter()
                    .take(k)
                    .filter(|h| q.evidence.contains(&h.id))
                    .count() as f64
                    / q.evidence.len() as f64
            };
            for acc in [&mut all, by_cat.entry(q.category).or_default()] {
                acc.n += 1;
                acc.h1 += f64::from(u8::from(first == Some(0)));
                acc.h5 += f64::from(u8::from(first.is_some_and(|r| r < 5)));
                acc.mrr += first.map_or(0.0, |r| 1.0 / (r + 1) as f64);
                acc.r5 += turn_recall(5);
                acc.r10 += turn_recall(10);
            }
        }
    }
    let m = all.metrics(None);
    report.questions = m.questions;
    report.skipped = m.skipped;
    report.session_hit_at_1 = m.session_hit_at_1;
    report.session_hit_at_5 = m.session_hit_at_5;
    report.session_mrr = m.session_mrr;
    report.turn_recall_at_5 = m.turn_recall_at_5;
    report.turn_recall_at_10 = m.turn_recall_at_10;
    report.by_category = by_cat
        .iter()
        .map(|(c, a)| (c.to_string(), a.metrics(Some(category_name(*c).to_owned()))))
        .collect();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dates_and_ids() {
        assert_eq!(
            parse_session_date("1:56 pm on 8 May, 2023"),
            Some(1_683_554_160)
        );
        assert_eq!(
            parse_session_date("12:05 am on 1 January, 2024"),
            Some(1_704_067_500)
        );
        assert_eq!(parse_session_date("nonsense"), None);
        assert_eq!(session_of("D12:3"), Some(12));
        for bad in ["D", "D1", "D:1", "D1:", "1:2", "D8:6; D9:17", "Dx:1"] {
            assert_eq!(session_of(bad), None, "{bad}");
        }
    }
}
