//! The Japanese and Chinese shapes of a memory statement: "覚えて", "今後は", "常に", "〜しないで",
//! "方針で", "XからYに移行した"; "记住", "以后", "总是", "不要", "统一用", "把 X 换成 Y 了". Each
//! pattern is compiled the first time a sentence with CJK text reaches it.

use super::*;

static JA_REMEMBER_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:覚えておいて|覚えといて|覚えて)(?:ください|下さい|ほしいのですが|ほしいんですが|欲しいのですが|ほしいんだけど)?[:：、,]\s*(.+)$",
    )
});

static JA_REMEMBER_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(.+?)(?:ということ|って事|ってこと|こと)?(?:を|って|と)?(?:覚えて|記憶して|メモして)(?:おいて|といて)?(?:ね|ください|下さい)?[。！!]?$",
    )
});

static CJK_THATS_THE_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:这是|这个是|这是我们的|これは|それは|これがうちの)(?:硬性|强制|绝对的|絶対の|厳格な)?(?:规定|规矩|规则|铁律|ルール|決まり)(?:です|だ|哦|啊)?[。！!]?$",
    )
});

/// "每次改完 schema 都要更新 docs/db.md，这是团队规定": a rule, then that it is the rule.
static CJK_RULE_THEN_THATS_THE_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(.+?)[，,、]\s*(?:这是|这是我们的?|这是团队的?|这是公司的?|这是项目的?|これは|これがうちの|うちの)(?:硬性|强制|绝对的|絶対の|厳格な)?(?:规定|规矩|规则|约定|惯例|铁律|ルール|決まり)(?:です|だ|哦|啊|なので|なんで)?[。！!]?$",
    )
});

/// "バグ報告はBacklogに起票することになってます", "来月からminSdkは26に上げることが決まってます":
/// what the team agreed on.
static JA_AGREED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:[るうくすつぬむぶぐ]|ない)こと(?:に|が)(?:なって|決まって)(?:ます|います|いる|る|おり)|(?:[るうくすつぬむぶぐ]|ない)運用(?:で|です|だ|に(?:して|なって)(?:る|います|ます)|なので|だから)",
    )
});

/// "覚えておいてください。" on its own: the sentence before is the memory.
static JA_REMEMBER_ALONE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:これを|それを|この(?:こと|ルール|点)を)?(?:覚えておいて|覚えといて|覚えて|記憶して)(?:おいて)?(?:ください|下さい|ね|くれ)?[。！!]?$",
    )
});

static JA_FROM_NOW: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:今後は|今後も|これからは|これからも|以後は?|今後|次回から|次からは)[、,]?\s*(.+)$")
});

static JA_ALWAYS: LazyLock<Regex> = LazyLock::new(|| re(r"常に|必ず(?:しも)?|いつも|絶対に"));

/// How a Japanese sentence that asks for something ends (a request, an order, a rule).
static JA_DIRECTIVE_END: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:ください|下さい|しろ|せよ|こと|ように|お願いします|お願い|ね|べき|べきです|[てで])[。！!.]?$",
    )
});

/// A Japanese sentence that reports a problem rather than sets a rule ("常に失敗します": it
/// always fails; "いつも落ちる": it always breaks), unless it ends as a request.
static JA_PROBLEM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"失敗|落ち|エラー|壊れ|止ま|遅い|遅く|クラッシュ|バグ|おかしい|動かない|通らない|なぜ|どうして|なんで|何で|[？?]|^もし|なら[、,]|んだけど|けどね|と思います|と思う|みたいです|ようです|通ります|通る|消え|てしまい|ちゃう|再現|んです|のです|ありがとう|助かります|ので[。！!]?$|から[。！!]?$",
    )
});

static JA_DONT: LazyLock<Regex> =
    LazyLock::new(|| re(r"しないで|ないでください|ないように|禁止|しないこと|やめて"));

/// A request not to do something, at the end of a sentence: "手で触らないでね", "入れないで"
/// (not "忘れないでね", a reminder).
static JA_DONT_END: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:[らわまかさたなばがえけせてねめげべ]|[^忘]れ)ないで(?:ね|ほしい|欲しい|くれ|下さい)?[。！!]?$",
    )
});

static JA_ONE_OFF: LazyLock<Regex> =
    LazyLock::new(|| re(r"今回|この|今は|とりあえず|まだ|今日|さっき|それ|これ|ここ|ただし"));

static JA_STANDING_SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"この(?:リポジトリ|リポ|プロジェクト|チーム|コードベース|会社|アプリ|サービス)|これは今後|今後ずっと",
    )
});

static JA_PREFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[^。]+?は[^。]+?で(?:、[^。]+?は[^。]+?で)*(?:書いて|して|お願いします|お願い|統一して|やって)(?:ください|下さい|ほしい|欲しい)?[。！!]?$",
    )
});

static JA_WE_USE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:うちは|うちでは|このプロジェクトでは|このリポジトリでは|私たちは|弊社では|我々は|チームでは).+?(?:を使って(?:います|いる)|を使う|を採用して(?:います|いる))",
    )
});

static JA_USER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^私は.+(?:です|だ|をしています|を使っています|ません|ありません)[。！!]?$|^私は[^。]*(?:基本|普段|いつも|主に|担当)[^。]*(?:ます|です)[。！!]?$|^(?:私|自分|僕|俺)は[^。？]*?(?:JST|UTC|時間|時刻|タイムゾーン)で(?:作業|働い|仕事)",
    )
});

/// A policy said of the project: a verb form, then 方針 / ルール / 決まり ("渡さない方針で",
/// "書かないルールにしてます", "orderする決まりなので").
static JA_POLICY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:[るいうくすつぬむぶぐ]|ない)(?:方針|ルール|決まり|規約)(?:で|です|だ|に(?:して|なって)(?:る|います|ます)|なので|だから)",
    )
});

/// What asks for the task at hand in Japanese ("直して", "確認して", "見てほしい").
static JA_TASK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:直|確認|調べ|見|修正|対応|変更|追加|削除)(?:して|て)(?:ほしい|ください|下さい|くれ|ね|。|$)|お願い",
    )
});

/// How the project changed, in Japanese: "XからYに移行した", "Xはやめて…", "Xは廃止しました",
/// "Xはもう使っていません".
static JA_CHANGED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"[^。、]+?から[^。、]+?(?:に|へ)(?:(?:移行|変更|切り替え|切り替|乗り換え|移)(?:し|まし|になり|になっ)?(?:た|ました|ています|てる|ている)|(?:移行|変更|切り替え|乗り換え)済み)|[^。、]+?(?:に|へ)(?:移行|乗り換え|切り替え)済み|[^。、]+?(?:は|を)(?:やめました|やめた|廃止し(?:た|ました)|もう使って(?:いません|ない)|もう使わない|使わなくなり|使わなくなった)|[^。、]+?に統一(?:しました|した|しています|してる)|[^。、]+?(?:は|を)やめて[、,][^。]*?(?:した|しました|ました|た)[。]?$",
    )
});

/// How the project changed, in Chinese, told as done ("我们上个月把 X 换成 Y 了", "已经从 X
/// 迁移到 Y 了", "已经不用 X 了", "X 已经弃用"); "把 X 改成 Y" alone is a task.
static ZH_CHANGED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:我们|团队|项目|已经|之前|上个月|上周|去年|早就)[^，。？]*?(?:把\s*[^，。]+?\s*(?:换成|改成|迁移到|迁到|切换到|替换成|换为|改为)|从\s*[^，。]+?\s*(?:迁移到|迁到|换到|切换到|换成))[^。？]*?了|(?:已经|现在|早就)(?:不再|不)(?:用|使用)\s*[A-Za-z][^，。]*?了|我们不再(?:用|使用)\s*[A-Za-z]|[A-Za-z][\w.+-]*\s*(?:已经|早就)(?:被)?(?:弃用|废弃|下线|移除|去掉)",
    )
});

/// Ground rules given as such in Chinese: "规矩是…", "约定是…", "背景：我们…只有/都/不允许…".
static ZH_GROUND_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:规矩|规定|约定|原则|惯例)是|^(?:先说一下)?背景[:：，,]\s*我们[^。]*?(?:只有|都是|统一|一律|不允许|不能|只能|必须)",
    )
});

/// One tool for a part of the project, in Japanese: "ログは全部defmtで", "UIはUI Toolkitじゃなくて
/// uGUIで作ってます".
static JA_ONE_TOOL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[^。]{1,12}は(?:全部|すべて|全て)\s*[A-Za-z][\w.+-]*\s*で|(?:じゃなくて|ではなく)[^。]*?(?:で作って|を使って|でやって|で書いて|で管理して)(?:ます|る|います|いる)",
    )
});

/// A choice and what it rules out, in Chinese: "序列化用 postcard，不用 serde_json".
static ZH_USE_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:^|[，,])[^，。]{0,12}用\s*[A-Za-z][\w.+-]*\s*[，,]\s*(?:不用|不要用|别用|而不是|不是)\s*[A-Za-z]",
    )
});

/// "统一用 Coil", "一律使用 pnpm": one choice for the whole project.
static ZH_UNIFORM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:统一|一律|全都|全部都?)(?:用|使用|采用|存|存储|存成|放|走)\s*`?[A-Za-z][\w.+-]*|(?:统一|一律|全都|全部都?)(?:放在|放到|提到|提交到|写在|写到|部署在|部署到)\s*`?[A-Za-z/~.][\w./+-]*",
    )
});

static ZH_REMEMBER: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:请)?(?:帮我)?(?:记住|记得|记一下)(?:一下)?[:：，,]?\s*(.+)$"));

/// "下周三要发布，记住这个": the thing to remember, then 记住.
static ZH_REMEMBER_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(.+?)[，,、]\s*(?:这个|这点|这一点|这条)?(?:你)?(?:请)?(?:帮我)?(?:记住|记一下|记下来|记下)(?:这个|这一点|这件事|这条)?(?:哦|啊|吧|了)?[。！!]?$",
    )
});

static ZH_FROM_NOW: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:以后|今后|从现在开始|从现在起|从今以后|往后|下次)[，,]?\s*(.+)$"));

static ZH_ALWAYS: LazyLock<Regex> = LazyLock::new(|| re(r"总是|始终|一律|永远|务必|一定要"));

/// A Chinese sentence that reports a problem rather than sets a rule ("总是报错": it always
/// errors).
static ZH_PROBLEM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"报错|失败|出错|崩溃|挂了|卡住|卡在|坏了|超时|怎么办|为什么|怎么回事|不行|不工作|有问题|帮我看看|帮我查|查一下|不显示|不出来|唉|哈哈|又是|痛|崩|好几次|重新插|(?i:not found|error|failed)|吗[。！!]?$|呢[。！!]?$",
    )
});

pub(super) static ZH_DONT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:请)?(?:不要|别|不许|禁止|千万不要|请勿|永远不要|绝对不要)|^[^，。！？]{1,10}?(?:不要|别|禁止)(?:用|使用)",
    )
});

/// "所有 DAG 的 owner 字段都必须填 …": a rule for every one of a kind.
static ZH_ALL_MUST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:所有|每个|每一个|任何)[^，。？！]{0,40}?(?:都必须|必须|都要|一律|都得|都放在|都写在|都在|都用|都走)",
    )
});

/// A clause that forbids: "别往 home 目录写大文件", "不要开 GitHub issue".
static ZH_BAN_CLAUSE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:[^，。]{0,6}?)(?:不要|别|不许|禁止|千万别|千万不要|请勿|不能)\S"));

/// What asks for the task at hand in Chinese ("帮我改一下", "把它删掉", "能不能…").
static ZH_TASK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"帮|一下|请|把|麻烦|看看|能不能|可以|吗|修|改|加上|删|试试|给我|先|再|写个|写一个|实现|重构",
    )
});

static ZH_ONE_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"这次|现在|先这样|暂时|还没|今天|今晚|等下|等一下|一会儿|别管|这个|那个|这些|那些|这里|这几天|这两天|先别|先不要",
    )
});

/// "这个项目", "这个仓库": a standing scope, not the thing at hand.
static ZH_STANDING_SCOPE: LazyLock<Regex> =
    LazyLock::new(|| re(r"这个(?:项目|仓库|团队|公司|代码库|应用|服务|以后|规则|约定|要求)"));

static ZH_WE_USE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:我们(?:这个)?(?:仓库|项目)?(?:里)?|我们的项目|这个项目|本项目|这个仓库(?:里)?|团队)(?:现在)?(?:都)?(?:用|使用|采用)",
    )
});

static ZH_USER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^我(?:是|用的是|平时用|一般用|习惯用|平时在|人在)|^我(?:这边)?在[^，。？]{1,12}[，,]\s*时区|^(?:我的|我这边的?)时区是",
    )
});

/// Words that make a Chinese request stand: every time, from now on, always.
static ZH_STANDING: LazyLock<Regex> =
    LazyLock::new(|| re(r"每次|每当|以后|今后|总是|永远|一律|始终|所有|任何|都要"));

static ZH_CORRECTION_VERB: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:用|使用|改用)"));

pub(super) fn detect_cjk(s: &str, correction: bool) -> Option<(Shape, &'static str)> {
    let explicit = |content: &str| {
        // "今後の調査でも使うので覚えておいてください": a reason, pointing back.
        let reason = ["ので", "から", "ため"]
            .iter()
            .any(|r| content.trim().ends_with(r));
        if points_back(content) || reason {
            Shape::BackReference(String::new())
        } else {
            Shape::Explicit(content.trim().to_string())
        }
    };
    // "这是硬性规定。", "これはルールです。" on its own: the sentence before is the rule.
    if CJK_THATS_THE_RULE.is_match(s) {
        return Some((Shape::BackReference(String::new()), "standing"));
    }
    if let Some(c) = CJK_RULE_THEN_THATS_THE_RULE.captures(s)
        && !is_question(&c[1])
    {
        let rule = format!("{}。", c[1].trim());
        return Some((Shape::Rule(rule, MemoryType::Feedback), "standing"));
    }
    // Japanese.
    if JA_REMEMBER_ALONE.is_match(s) {
        return Some((Shape::BackReference(String::new()), "explicit"));
    }
    if let Some(c) = JA_REMEMBER_HEAD
        .captures(s)
        .or_else(|| JA_REMEMBER_TAIL.captures(s))
    {
        return Some((explicit(&c[1]), "explicit"));
    }
    if let Some(c) = JA_FROM_NOW.captures(s) {
        return Some((Shape::FromNowOn(c[1].trim().to_string()), "from-now-on"));
    }
    // "この" (this) marks a one-off, except in "このリポジトリ" and the like (a standing scope).
    let ja_one_off = JA_ONE_OFF.is_match(&JA_STANDING_SCOPE.replace_all(s, ""));
    // "もしCIが常にグリーンなら…": a wish about how things could be.
    let hypothetical = s.starts_with("もし") || s.contains("なら、");
    // ("いつも起動直後に固まる": "いつも" in a plain sentence tells what keeps happening; a
    // rule with it asks for something.)
    // ("いつものflakyなe2e": "the usual", not "always".)
    let always_words: Vec<&str> = JA_ALWAYS
        .find_iter(s)
        .filter(|m| !(m.as_str() == "いつも" && s[m.end()..].starts_with('の')))
        .map(|m| m.as_str())
        .filter(|w| *w != "必ずしも")
        .collect();
    let only_itsumo = !always_words.is_empty() && always_words.iter().all(|w| *w == "いつも");
    if !always_words.is_empty()
        && (JA_DIRECTIVE_END.is_match(s) || (!JA_PROBLEM.is_match(s) && !only_itsumo))
        && !ja_one_off
        && !hypothetical
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    // "poetryはやめて、uvに移行した", "CIはJenkinsからGitHub Actionsに移行しました": how the
    // project changed.
    if JA_CHANGED.is_match(s) && !ja_one_off && !is_question(s) && !JA_PROBLEM.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "changed"));
    }
    let ja_dont = JA_DONT.find_iter(s).any(|m| m.as_str() != "ないように")
        || (JA_DONT.is_match(s) && JA_DIRECTIVE_END.is_match(s));
    if ja_dont && !ja_one_off && !JA_PROBLEM.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"));
    }
    if JA_PREFERENCE.is_match(s) && !ja_one_off {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "preference",
        ));
    }
    if JA_WE_USE.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "…書かないルールにしてます", "…でorderする決まりなので、それに合わせて直して": a policy
    // of the project, without the task that follows it.
    if !is_question(s)
        && let Some(m) = JA_POLICY.find(s)
        // (The task after the policy may point at the code at hand: "それに合わせて直して".)
        && !JA_ONE_OFF.is_match(&JA_STANDING_SCOPE.replace_all(&s[..m.end()], ""))
    {
        let rest = &s[m.end()..];
        let rule = if JA_TASK.is_match(rest) {
            let noun_end = ["方針", "ルール", "決まり", "規約"]
                .iter()
                .filter_map(|n| {
                    s[m.start()..m.end()]
                        .find(n)
                        .map(|i| m.start() + i + n.len())
                })
                .min()
                .unwrap_or(m.end());
            format!("{}。", &s[..noun_end])
        } else {
            s.to_string()
        };
        return Some((Shape::Rule(rule, MemoryType::Project), "standing"));
    }
    // "バグ報告はBacklogに起票することになってます", "modules は infra/modules 配下に置く運用なので、
    // …作ってください": what the team agreed on, without the task that follows it.
    if !is_question(s)
        && let Some(m) = JA_AGREED.find(s)
        && !JA_ONE_OFF.is_match(&JA_STANDING_SCOPE.replace_all(&s[..m.start()], ""))
    {
        let rest = &s[m.end()..];
        let rule = if JA_TASK.is_match(rest) || JA_DIRECTIVE_END.is_match(rest) {
            format!(
                "{}。",
                s[..m.end()].trim_end_matches(['で', 'な', 'の', 'だ'])
            )
        } else {
            s.to_string()
        };
        let t = classify_in(&rule);
        return Some((Shape::Rule(rule, t), "standing"));
    }
    // "ログは全部defmtで", "UIはUI ToolkitじゃなくてuGUIで作ってます": one tool for a part of
    // the project.
    if JA_ONE_TOOL.is_match(s) && !ja_one_off && !is_question(s) && !JA_PROBLEM.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "違う違う、シークレットはSSM Parameter StoreじゃなくてSecrets Managerに入れてる": a
    // correction that says how things are.
    if correction
        && (s.contains("じゃなくて") || s.contains("ではなく"))
        && !ja_one_off
        && !s.contains("その")
        && !JA_TASK.is_match(s)
        && !JA_DIRECTIVE_END.is_match(s)
    {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Project),
            "correction",
        ));
    }
    if correction && s.contains("を使って") && !ja_one_off {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "correction",
        ));
    }
    if JA_USER.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::User), "about-me"));
    }
    // Chinese.
    if !s.starts_with("我记得")
        && !s.starts_with("你还记得")
        && !s.starts_with("还记得")
        && let Some(c) = ZH_REMEMBER.captures(s)
    {
        // "记得把日志级别改回INFO再提交" (remember to …): the task's next step, unless it says
        // it stands ("记得每次提交前跑测试").
        let to_do = s.trim_start_matches('请').starts_with("记得");
        if to_do && !ZH_STANDING.is_match(s) {
            return None;
        }
        return Some((explicit(&c[1]), "explicit"));
    }
    if let Some(c) = ZH_REMEMBER_TAIL.captures(s) {
        return Some((Shape::Explicit(c[1].trim().to_string()), "explicit"));
    }
    if let Some(c) = ZH_FROM_NOW.captures(s) {
        return Some((Shape::FromNowOn(c[1].trim().to_string()), "from-now-on"));
    }
    // "`getUserById` 确保永远不返回 null": what one piece of the code must do.
    let about_the_code =
        s.starts_with('`') && ["确保", "保证", "要", "必须"].iter().any(|w| s.contains(w));
    let zh_one_off = about_the_code || ZH_ONE_OFF.is_match(&ZH_STANDING_SCOPE.replace_all(s, ""));
    // The problem words count before a stated reason only ("…，因为上次失败了" is a rule).
    let zh_head = ["因为", "由于", "否则", "不然"]
        .iter()
        .filter_map(|w| s.find(w))
        .min()
        .map_or(s, |i| &s[..i]);
    if ZH_ALWAYS.is_match(s) && !zh_one_off && !ZH_PROBLEM.is_match(zh_head) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    if ZH_DONT.is_match(s) && !zh_one_off {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"));
    }
    if ZH_ALL_MUST.is_match(s) && !zh_one_off && !ZH_PROBLEM.is_match(zh_head) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    if ZH_WE_USE.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "我们上个月把 Fivetran 换成 Airbyte 了", "我们已经不用 Alamofire 了": how the project
    // changed.
    // ("现在" after the change says how things are now, not that this is a one-off.)
    if let Some(m) = ZH_CHANGED.find(s)
        && !ZH_ONE_OFF.is_match(&ZH_STANDING_SCOPE.replace_all(&s[..m.end()], ""))
        && !is_question(s)
        && !ZH_PROBLEM.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "changed"));
    }
    // "背景：我们的第三方 SDK 只有 Sentry 和 RevenueCat，别的都不允许加", "规矩是字段只能加不能删":
    // the ground rules given as background.
    if ZH_GROUND_RULE.is_match(s) && !zh_one_off && !is_question(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "standing"));
    }
    // "我们这边图片加载统一用 Coil，不用 Glide，你要是看到…": the choice and what it rules out,
    // without the task talk after them.
    // "序列化用 postcard，不用 serde_json，板子上就 256K RAM": the same, without the task or
    // the reason after it.
    if !zh_one_off && !is_question(s) && (ZH_UNIFORM.is_match(s) || ZH_USE_NOT.is_match(s)) {
        let clauses: Vec<&str> = s
            .trim_end_matches(['。', '！', '!'])
            .split(['，', ','])
            .collect();
        if let Some(i) = clauses.iter().enumerate().position(|(i, c)| {
            ZH_UNIFORM.is_match(c)
                || clauses
                    .get(i + 1)
                    .is_some_and(|n| ZH_USE_NOT.is_match(&format!("{c}，{n}")))
        }) {
            let rejects = clauses.get(i + 1).is_some_and(|c| {
                ["不用", "不要", "别", "禁止", "而不是", "不是", "不再用"]
                    .iter()
                    .any(|w| c.trim_start().starts_with(w))
            });
            let end = if rejects { i + 1 } else { i };
            let rule = format!("{}。", clauses[..=end].join("，"));
            return Some((Shape::Rule(rule, MemoryType::Project), "we-use"));
        }
    }
    // "数据集放在 /data/shared/datasets，别往 home 目录写大文件": how things are, then what
    // not to do about it (a request with a ban, "帮我改一下登录，别动接口", is the task's).
    if !zh_one_off
        && !is_question(s)
        && !ZH_PROBLEM.is_match(s)
        && let Some((head, rest)) = s.split_once('，')
        && ZH_BAN_CLAUSE.is_match(rest.trim_start())
        && !ZH_TASK.is_match(head)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"));
    }
    if correction && ZH_CORRECTION_VERB.is_match(s) && !zh_one_off {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "correction",
        ));
    }
    if ZH_USER.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::User), "about-me"));
    }
    None
}

/// "src/api/generated は手で触らないでね": a request not to do something, when no other shape
/// (a fact of the project: "`infra/` はSREチームの管轄なので直接いじらないで") said more.
pub(super) fn dont_at_end(s: &str) -> Option<(Shape, &'static str)> {
    let one_off = JA_ONE_OFF.is_match(&JA_STANDING_SCOPE.replace_all(s, ""));
    (JA_DONT_END.is_match(s) && !one_off && !JA_PROBLEM.is_match(s) && !is_question(s))
        .then(|| (Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"))
}
