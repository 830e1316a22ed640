//! How two memories written in Japanese or Chinese relate.
//!
//! Character pairs over whole sentences (what the content words give CJK text) are mostly
//! particles and endings: "Pythonのバージョンは3.11" and "Pythonのバージョンを3.12に上げた"
//! share few of them, and a paraphrase reads as another memory. Here a sentence is read as its
//! terms instead: words in Latin letters, katakana words whole ("バージョン", "デプロイ"),
//! kanji pairs inside runs of kanji (hiragana, and Chinese function words, cut the runs:
//! "每次提交之前都要跑一下" → 提交, 跑), and apart from them its values (numbers, versions,
//! ports). Then:
//!
//! * another environment on either side (本番 / ステージング, 测试 / 生产) is another memory;
//! * said to be a change (変更, 移行, 上げた, やめて, 升级, 迁移, 改为, 现在 …) about the same
//!   subject (two in five terms shared), turned round (しない, 禁止, 不要 on one side only), or
//!   with another value of the same thing, the new one replaces the old;
//! * the same subject (three in five terms of the shorter shared), no value only the new one
//!   has, and no word put in another's place, is the same memory;
//! * anything else stands beside it.

use std::collections::HashSet;

use super::{Relation, same_word_form};
use crate::text::content_words;

/// Chinese function words and fillers that cut a run of kanji ("都要跑一下": 跑).
const ZH_FUNCTION: &[&str] = &[
    "已经", "我们", "你们", "他们", "这个", "那个", "之前", "之后", "每次", "一下", "的", "了",
    "是", "在", "和", "与", "就", "都", "也", "把", "被", "让", "给", "吧", "吗", "呢", "啊", "要",
    "得", "着", "过", "很", "再", "还", "从", "到", "由", "不要", "不", "别",
];

/// Words that say something changed.
const CHANGES: &[&str] = &[
    "変わり",
    "変わっ",
    "変更",
    "移行",
    "上げ",
    "下げ",
    "切り替え",
    "切替",
    "乗り換え",
    "やめ",
    "廃止",
    "になった",
    "今は",
    "升级",
    "降级",
    "迁移",
    "改为",
    "改成",
    "换成",
    "改由",
    "改用",
    "切换",
    "不再",
    "弃用",
    "废弃",
    "现在",
    "变更",
    "更换",
    "换为",
    "改到",
    "调整为",
    "调整到",
    "挪到",
    "移った",
    "変えた",
    "にした",
];

/// Numerals: a kanji pair with one names a value ("周四", "三秒", "二月").
const NUMERALS: &str = "〇零一二三四五六七八九十百千两";

/// Words that turn a rule round ("しない", "禁止", "不要"): one side with them and the other
/// without, about the same subject, is a reversal.
const NEGATIONS: &[&str] = &[
    "しない",
    "しません",
    "ないこと",
    "ないように",
    "禁止",
    "やめ",
    "不要",
    "不用",
    "别",
    "不能",
    "不允许",
    "不得",
    "不需要",
    "不必",
    "无需",
    "わない",
    "らない",
    "かない",
    "さない",
    "たない",
    "まない",
    "ばない",
    "要りません",
    "いりません",
    "要らない",
    "いらない",
    "不再",
];

/// Whether two Japanese sentences have the same topic (what comes before the first は), or
/// either has none: "振り返りミーティングは金曜16時" is not about "定例ミーティング".
fn same_topic(a: &str, b: &str) -> bool {
    let topic = |t: &str| {
        t.split_once('は')
            .map(|(head, _)| head.split_whitespace().collect::<String>())
    };
    match (topic(a), topic(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// A text with exactly one run of Latin letters (a tool or service name): the text without
/// it (spaces and the final stop dropped), and the name lowercased.
fn one_latin_name(text: &str) -> Option<(String, String)> {
    let mut names = Vec::new();
    let mut rest = String::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || (!current.is_empty() && matches!(c, '.' | '-' | '_')) {
            current.push(c);
        } else {
            if !current.is_empty() {
                names.push(std::mem::take(&mut current));
            }
            if !c.is_whitespace() && !matches!(c, '。' | '.' | '！' | '!') {
                rest.push(c);
            }
        }
    }
    if !current.is_empty() {
        names.push(current);
    }
    let [name] = names.as_slice() else {
        return None;
    };
    (name.chars().any(|c| c.is_ascii_alphabetic()) && rest.chars().count() >= 4)
        .then(|| (rest, name.to_lowercase()))
}

/// Whether the text is for this module: three CJK characters at least.
pub(super) fn applies(text: &str) -> bool {
    text.chars().filter(|c| crate::text::is_cjk(*c)).count() >= 3
}

fn is_katakana(c: char) -> bool {
    matches!(c as u32, 0x30A0..=0x30FF | 0xFF66..=0xFF9F)
}

fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// A text's terms and its values.
fn terms(text: &str) -> (HashSet<String>, HashSet<String>) {
    let mut words = HashSet::new();
    let mut values = HashSet::new();
    // Chinese function words out first (they are kanji too).
    let mut t = text.to_lowercase();
    for f in ZH_FUNCTION {
        t = t.replace(f, " ");
    }
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if is_katakana(c) {
            while i < chars.len() && is_katakana(chars[i]) {
                i += 1;
            }
            if i - start >= 2 {
                words.insert(chars[start..i].iter().collect());
            }
        } else if is_han(c) {
            while i < chars.len() && is_han(chars[i]) {
                i += 1;
            }
            for pair in chars[start..i].windows(2) {
                let pair: String = pair.iter().collect();
                // "周四" / "周二", "五秒" / "三秒", "木曜" / "火曜": a numeral or a day of the week
                // makes the pair a value.
                if pair.chars().any(|c| NUMERALS.contains(c))
                    || (pair.ends_with('曜') && pair != "曜日")
                    || pair.starts_with('周')
                    || pair.starts_with("星期")
                {
                    values.insert(pair);
                } else {
                    words.insert(pair);
                }
            }
        } else if c.is_ascii_alphanumeric() {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || matches!(chars[i], '.' | '_' | '-' | '/' | ':'))
            {
                i += 1;
            }
            let token: String = chars[start..i].iter().collect();
            let token = token.trim_end_matches(['.', ':', '/', '-']);
            if token.contains("://") {
                values.insert(token.to_string());
            } else if token.chars().any(|c| c.is_ascii_digit()) {
                // "redis-stg.internal:6380" holds the value "6380", as "ポートは6380" does.
                values.extend(
                    token
                        .split([':', '/'])
                        .filter(|p| p.chars().any(|c| c.is_ascii_digit()))
                        .map(str::to_string),
                );
            } else {
                words.extend(content_words(token));
            }
        } else {
            i += 1;
        }
    }
    (words, values)
}

/// Two terms that are one word: Latin or katakana forms of one word, or kanji pairs that share
/// a character (服务 / 服务器 give 务监 / 务器).
fn same_term(a: &str, b: &str) -> bool {
    if same_word_form(a, b) {
        return true;
    }
    let han = |s: &str| s.chars().count() == 2 && s.chars().all(is_han);
    han(a) && han(b) && a.chars().any(|c| b.contains(c))
}

/// The state a text gives a switch (on or off), when it gives one.
fn state(text: &str) -> Option<bool> {
    const ON: &[&str] = &["打开", "开启", "启用", "オン", "有効"];
    const OFF: &[&str] = &["关闭", "禁用", "オフ", "無効"];
    let on = ON.iter().any(|w| text.contains(w));
    let off = OFF.iter().any(|w| text.contains(w));
    (on != off).then_some(on)
}

/// The terms of what a text says it gave up: the clause before "はやめ", "をやめ", "は廃止",
/// "は使わない" ("poetryはやめて、uvに移行した" → poetry).
fn given_up(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for marker in [
        "はやめ",
        "をやめ",
        "は廃止",
        "を廃止",
        "は使わない",
        "はもう使わない",
    ] {
        if let Some(i) = text.find(marker) {
            let head = &text[..i];
            let start = head.rfind(['、', '。', '，', ',', '；']).map_or(0, |j| {
                j + head[j..].chars().next().map_or(1, char::len_utf8)
            });
            out.extend(terms(&head[start..]).0);
        }
    }
    // What a change left behind: "把 X 换成 Y", "从 X 迁移到 Y", "XからYに移行した".
    const ZH_VERBS: &[&str] = &[
        "换成",
        "改成",
        "替换成",
        "换为",
        "改为",
        "迁移到",
        "迁到",
        "换到",
        "切换到",
        "切到",
    ];
    for opener in ["把", "从"] {
        for (i, _) in text.match_indices(opener) {
            let rest = &text[i + opener.len()..];
            if let Some(j) = ZH_VERBS.iter().filter_map(|v| rest.find(v)).min() {
                out.extend(terms(&rest[..j]).0);
            }
        }
    }
    if let Some(i) = text.find("から")
        && ["移行", "変更", "切り替え", "切替", "乗り換え", "移"]
            .iter()
            .any(|v| text[i..].contains(v))
    {
        let head = &text[..i];
        let start = head
            .rfind(['、', '。', '，', ',', 'は', 'を'])
            .map_or(0, |j| {
                j + head[j..].chars().next().map_or(1, char::len_utf8)
            });
        out.extend(terms(&head[start..]).0);
    }
    out
}

/// How `new_text` relates to `old_text`; `contradiction`: one rejects what the other wants
/// ("不要用 pnpm，用 yarn" after "不要用 npm，用 pnpm").
pub(super) fn relation(
    new_text: &str,
    old_text: &str,
    cosine: f32,
    contradiction: bool,
) -> Relation {
    let (a, va) = terms(new_text);
    let (b, vb) = terms(old_text);
    let env = |t: &str| -> HashSet<&'static str> {
        let lower = t.to_lowercase();
        // Whole tokens: "alerts-prod" and "redis-stg.internal" name no environment.
        let tokens: HashSet<&str> = lower
            .split(|c: char| {
                !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':'))
            })
            .filter(|w| !w.is_empty())
            .collect();
        // The environments the rest of dedupe knows ("测试" only as "测试环境": 单元测试 is a
        // unit test).
        let latin = super::ENVIRONMENTS
            .iter()
            .chain(super::PARTS)
            .copied()
            .filter(|e| tokens.contains(e));
        let cjk = super::CJK_ENVIRONMENTS
            .iter()
            .copied()
            .filter(|e| lower.contains(e) && (*e != "测试" || lower.contains("测试环境")));
        latin.chain(cjk).collect()
    };
    if env(new_text) != env(old_text) {
        return Relation::Distinct;
    }
    // The same sentence with one name in another's place ("ログは Papertrail に送っています" →
    // "… Datadog …", "前端打包用 webpack" → "… Vite"): the same thing, now done otherwise.
    if let (Some((rest_a, name_a)), Some((rest_b, name_b))) =
        (one_latin_name(new_text), one_latin_name(old_text))
        && rest_a == rest_b
        && name_a != name_b
    {
        return Relation::Supersedes;
    }
    if a.is_empty() || b.is_empty() {
        return Relation::Distinct;
    }
    let shared = a
        .iter()
        .filter(|x| b.iter().any(|y| x == &y || same_term(x, y)))
        .count();
    let overlap = shared as f32 / a.len().min(b.len()) as f32;
    let new_only: Vec<&String> = a
        .iter()
        .filter(|x| !b.iter().any(|y| x == &y || same_term(x, y)))
        .collect();
    let old_only: Vec<&String> = b
        .iter()
        .filter(|y| !a.iter().any(|x| x == *y || same_term(x, y)))
        .collect();
    // (A change word both say is about something else: "フロントエンドの変更をプッシュする前に".)
    let changed = CHANGES
        .iter()
        .any(|w| new_text.contains(w) && !old_text.contains(w));
    let negated = |t: &str| NEGATIONS.iter().any(|w| t.contains(w));
    let reversed = negated(new_text) != negated(old_text);
    let other_value = (!va.is_empty() && !vb.is_empty() && va != vb)
        || matches!((state(new_text), state(old_text)), (Some(x), Some(y)) if x != y);
    // (The static embeddings read short CJK sentences loosely: most words shared needs less of
    // their agreement.)
    let same_subject = (overlap >= 0.4 && cosine >= 0.6) || (overlap >= 0.8 && cosine >= 0.3);
    if same_subject
        && (changed
            || contradiction
            || (reversed && overlap >= 0.6)
            || (other_value
                && overlap >= 0.6
                && same_topic(new_text, old_text)
                // ("分析数据库用的是 PostgreSQL 14" after "我们用 PostgreSQL 16": the new one
                // names a part the old does not, so its value is that part's.)
                && (new_only.is_empty() || old_only.len() >= new_only.len())))
    {
        return Relation::Supersedes;
    }
    // What the new memory gives up is what the old one is about.
    if changed && cosine >= 0.4 && given_up(new_text).iter().any(|t| b.contains(t)) {
        return Relation::Supersedes;
    }
    let new_value = va.difference(&vb).next().is_some();
    let swapped = !new_only.is_empty() && !old_only.is_empty() && {
        // A word put in another's place, unless the new memory only says more ("毎回").
        let shorter = a.len().min(b.len());
        new_only.len() + old_only.len() > 1 || shorter < 3
    };
    if overlap >= 0.6 && cosine >= 0.7 && !new_value && !swapped && !reversed {
        return Relation::Duplicate;
    }
    Relation::Distinct
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(new: &str, old: &str) -> Relation {
        let c = cairn_embed::cosine(&cairn_embed::embed(new), &cairn_embed::embed(old));
        relation(new, old, c, false)
    }

    #[test]
    fn terms_leave_particles_and_function_words_out() {
        let (w, v) = terms("Pythonのバージョンを3.12に上げた。");
        assert!(w.contains("python") && w.contains("バージョン"), "{w:?}");
        assert!(v.contains("3.12"), "{v:?}");
        let (w, _) = terms("每次提交之前都要跑一下 cargo fmt。");
        assert!(
            w.contains("提交") && w.contains("cargo") && !w.contains("之前"),
            "{w:?}"
        );
    }

    #[test]
    fn restatements_changes_and_other_subjects() {
        let cases = [
            (
                "cargo fmtはコミットする前に毎回実行すること。",
                "コミット前に必ずcargo fmtを実行する。",
                Relation::Duplicate,
            ),
            (
                "GitHub ActionsをCIに使っている。",
                "CIはGitHub Actionsで動いている。",
                Relation::Duplicate,
            ),
            (
                "每次提交之前都要跑一下 cargo fmt。",
                "提交前必须运行 cargo fmt。",
                Relation::Duplicate,
            ),
            (
                "我们的数据库是 Postgres 15。",
                "数据库使用 PostgreSQL 15。",
                Relation::Duplicate,
            ),
            (
                "8080 端口是 API 服务器监听的端口。",
                "API 服务监听 8080 端口。",
                Relation::Duplicate,
            ),
            (
                "Pythonのバージョンを3.12に上げた。",
                "Pythonのバージョンは3.11。",
                Relation::Supersedes,
            ),
            (
                "デプロイは毎週月曜日に変更になった。",
                "デプロイは毎週金曜日に行う。",
                Relation::Supersedes,
            ),
            (
                "前端打包已经从 webpack 迁移到 Vite 了。",
                "我们用 webpack 打包前端。",
                Relation::Supersedes,
            ),
            (
                "Node.js 已经升级到 20 了。",
                "Node.js 版本是 18。",
                Relation::Supersedes,
            ),
            (
                "poetryはやめて、uvに移行した。",
                "パッケージ管理にはpoetryを使う。",
                Relation::Supersedes,
            ),
            (
                "PRはスカッシュマージしない。マージコミットで取り込むこと。",
                "PRは必ずスカッシュマージする。",
                Relation::Supersedes,
            ),
            (
                "デフォルトブランチを master から main に変更した。",
                "デフォルトブランチは master。",
                Relation::Supersedes,
            ),
            (
                "构建工具由 Maven 变更为 Gradle。",
                "构建工具用的是 Maven。",
                Relation::Supersedes,
            ),
            (
                "アラートの通知先をSlackの #ops-alerts に切り替えた。",
                "アラートはSlackの #alerts-prod チャンネルに通知される。",
                Relation::Supersedes,
            ),
            (
                "mainにはforce pushしないこと。",
                "mainブランチへのforce pushは禁止。",
                Relation::Duplicate,
            ),
            (
                "应用日志的保存期限是 30 天。",
                "应用日志保留 30 天。",
                Relation::Duplicate,
            ),
            (
                "灰度开关 new_pricing 已在生产环境打开。",
                "灰度开关 new_pricing 在生产环境是关闭的。",
                Relation::Supersedes,
            ),
            (
                "本番デプロイは毎週火曜日に行う。",
                "本番デプロイは毎週木曜日に行う。",
                Relation::Supersedes,
            ),
            (
                "提交 PR 时不需要附截图。",
                "提交 PR 时需要附上截图。",
                Relation::Supersedes,
            ),
            (
                "生产版本发布日调整为每周二。",
                "每周四发布生产版本。",
                Relation::Supersedes,
            ),
            (
                "フロントエンドの変更をプッシュする前に `npm run typecheck` を実行する。",
                "フロントエンドの変更をプッシュする前に `npm run lint` を実行する。",
                Relation::Distinct,
            ),
            (
                "本番環境のURLは https://www.example.com です。",
                "ステージング環境のURLは https://staging.example.com です。",
                Relation::Distinct,
            ),
            (
                "バックエンドのテストは cargo test で実行する。",
                "フロントエンドのテストは pnpm test で実行する。",
                Relation::Distinct,
            ),
            (
                "環境変数REDIS_URLはキャッシュ用Redisを指す。",
                "環境変数DATABASE_URLはメインDBを指す。",
                Relation::Distinct,
            ),
            (
                "生产环境的数据库是 Postgres 16。",
                "测试环境的数据库是 Postgres 14。",
                Relation::Distinct,
            ),
            (
                "JavaScript 函数名使用 camelCase。",
                "Python 函数名使用 snake_case。",
                Relation::Distinct,
            ),
            (
                "账单服务由支付团队负责。",
                "用户服务由身份团队负责。",
                Relation::Distinct,
            ),
        ];
        for (new, old, want) in cases {
            assert_eq!(rel(new, old), want, "{new} against {old}");
        }
        // Restated otherwise, never taken for a change.
        for (new, old) in [
            (
                "ステージングのRedisのホストは redis-stg.internal、ポートは6380です。",
                "ステージング環境のRedisは redis-stg.internal:6380 で動いている。",
            ),
            (
                "本番デプロイは金曜15時以降は行わないルール。",
                "金曜日の15時以降は本番へのデプロイを禁止している。",
            ),
        ] {
            assert_ne!(rel(new, old), Relation::Supersedes, "{new} against {old}");
        }
    }
}
