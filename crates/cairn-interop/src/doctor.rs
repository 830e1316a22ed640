//! `cairn doctor`: what stops either agent from seeing its memory, each with the fix.
//! Only reads (a lock is probed with a try-lock that is released at once).

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::claude_source;
use crate::codex_config::{MemoryVersion, plan_versions, read_config};
use crate::export::{INDEX_MAX_CHARS, INDEX_MAX_LINES};
use crate::hook_trust::{HookTrust, codex_hooks};
use crate::workspace::{LockState, Workspace, probe_lock};

/// The v2 validator's size limit: a summary must be smaller than this many bytes.
pub const SUMMARY_MAX_BYTES: usize = 10_000;
/// The headings a v2 summary must have, each as a whole (trimmed) line.
pub const SUMMARY_HEADINGS: [&str; 4] = [
    "## User Profile",
    "## User preferences",
    "## General Tips",
    "## What's in Memory",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Ok,
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub id: &'static str,
    pub status: CheckStatus,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Check {
    fn new(id: &'static str, status: CheckStatus, message: impl Into<String>) -> Check {
        Check {
            id,
            status,
            message: message.into(),
            fix: None,
            path: None,
        }
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }

    fn path(mut self, p: &Path) -> Check {
        self.path = Some(p.display().to_string());
        self
    }
}

#[derive(Debug, Clone, Default)]
pub struct DoctorRequest {
    pub claude_root: PathBuf,
    pub home: Option<PathBuf>,
    pub codex_home: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub checks: Vec<Check>,
    pub warnings: usize,
    pub errors: usize,
}

/// Problems of a `memory_summary.md` against Codex's validator (v2 rules when `v2`).
pub fn summary_problems(text: &str, v2: bool) -> Vec<String> {
    let mut out = Vec::new();
    if text.lines().next() != Some("v1") {
        out.push("its first line is not exactly `v1`".to_string());
    }
    if v2 {
        if text.len() >= SUMMARY_MAX_BYTES {
            out.push(format!(
                "it is {} bytes (must be under {SUMMARY_MAX_BYTES})",
                text.len()
            ));
        }
        for h in SUMMARY_HEADINGS {
            if !text.lines().any(|l| l.trim() == h) {
                out.push(format!("the heading `{h}` is missing"));
            }
        }
    }
    out
}

/// `MEMORY.md` as Claude Code measures it: frontmatter and whole-line HTML comments
/// stripped, trimmed; returns (lines, UTF-16 units).
pub fn index_size(text: &str) -> (usize, usize) {
    let mut body = text;
    if let Some(rest) = text.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---\n")
    {
        body = &rest[end + 5..];
    }
    let mut kept = String::new();
    let mut in_comment = false;
    for line in body.lines() {
        let t = line.trim();
        if in_comment {
            if t.contains("-->") {
                in_comment = false;
            }
            continue;
        }
        if t.starts_with("<!--") {
            if !t.contains("-->") {
                in_comment = true;
            }
            if t.ends_with("-->") || in_comment {
                continue;
            }
        }
        kept.push_str(line);
        kept.push('\n');
    }
    let t = kept.trim();
    (
        if t.is_empty() {
            0
        } else {
            t.split('\n').count()
        },
        t.encode_utf16().count(),
    )
}

pub fn run(req: &DoctorRequest) -> DoctorReport {
    let mut checks = Vec::new();
    // An agent's directory that does not exist: not installed, or a mistyped path. One missing
    // is information (many use one agent); both missing is a warning.
    let claude_there = req.claude_root.exists();
    let codex_there = req.codex_home.exists();
    for (there, dir, id, agent, flag, var) in [
        (
            claude_there,
            &req.claude_root,
            "claude.home",
            "Claude Code",
            "--claude-dir",
            "CLAUDE_CONFIG_DIR",
        ),
        (
            codex_there,
            &req.codex_home,
            "codex.home",
            "Codex",
            "--codex-home",
            "CODEX_HOME",
        ),
    ] {
        // Something else where the agent's directory should be: no other check can run.
        if there && !dir.is_dir() {
            checks.push(
                Check::new(
                    id,
                    CheckStatus::Error,
                    format!("{} is a file, not a directory", dir.display()),
                )
                .fix(format!(
                    "point cairn at {agent}'s directory with {flag} (or {var}), or move the file \
                     aside if {agent} should make its directory there"
                ))
                .path(dir),
            );
            continue;
        }
        if !there {
            let status = if claude_there || codex_there {
                CheckStatus::Info
            } else {
                CheckStatus::Warn
            };
            checks.push(
                Check::new(
                    id,
                    status,
                    format!("{} does not exist: is {agent} installed?", dir.display()),
                )
                .fix(format!(
                    "if {agent} keeps its files elsewhere, point cairn there with {flag} (or {var})"
                ))
                .path(dir),
            );
        }
    }
    if codex_there && req.codex_home.is_dir() {
        codex_checks(req, &mut checks);
    }
    if claude_there && req.claude_root.is_dir() {
        claude_checks(req, &mut checks);
    }
    let warnings = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Warn)
        .count();
    let errors = checks
        .iter()
        .filter(|c| c.status == CheckStatus::Error)
        .count();
    DoctorReport {
        checks,
        warnings,
        errors,
    }
}

fn codex_checks(req: &DoctorRequest, checks: &mut Vec<Check>) {
    let home = &req.codex_home;
    let cfg = match read_config(home) {
        Ok(c) => c,
        Err(e) => {
            checks.push(
                Check::new("codex.config", CheckStatus::Error, e.to_string())
                    .fix("fix the file: Codex cannot load it either, and no other check of Codex's memory setup can run")
                    .path(&home.join("config.toml")),
            );
            return;
        }
    };
    let vp = plan_versions(&cfg, home, None);
    let v1_dir = home.join(MemoryVersion::V1.dir_name());
    checks.push(
        Check::new(
            "codex.memory_version",
            CheckStatus::Info,
            format!("Codex resolves memory {}: {}", vp.codex_resolves, vp.why),
        )
        .path(&cfg.path),
    );

    // The v1/v2 trap.
    if cfg.version.is_none() && !cfg.memories_on() && !vp.v1_dir_exists {
        if cfg.import_feature == Some(true) {
            checks.push(
                Check::new(
                    "codex.v1_trap",
                    CheckStatus::Warn,
                    format!(
                        "the memory import flag is on but the `memories` feature is off: an import from Codex's /import resolves v1, creates {} and pins this profile to v1 for good",
                        v1_dir.display()
                    ),
                )
                .fix(format!(
                    "add `memories = true` under `[features]` in {} before importing (`cairn import --from claude --to codex` never creates {} in this state)",
                    cfg.path.display(),
                    v1_dir.display()
                ))
                .path(&cfg.path),
            );
        } else {
            checks.push(
                Check::new(
                    "codex.memories_off",
                    CheckStatus::Info,
                    "the `memories` feature is off: Codex neither writes nor reads memory",
                )
                .fix(format!(
                    "to use Codex memory, add `memories = true` under `[features]` in {}",
                    cfg.path.display()
                ))
                .path(&cfg.path),
            );
        }
    }
    if vp.v1_dir_exists && cfg.version.is_none() {
        let only_imports = ["memory_summary.md", "MEMORY.md", "rollout_summaries"]
            .iter()
            .all(|n| !v1_dir.join(n).exists());
        let mut msg = format!(
            "{} exists, so Codex resolves v1 and v2 can never become the default",
            v1_dir.display()
        );
        if only_imports {
            msg.push_str(
                "; it holds no consolidated v1 memory (the mark of an import made while `memories` was off)",
            );
        }
        let mut fix = format!(
            "to use v2, set `version = \"v2\"` under `[memories]` in {}",
            cfg.path.display()
        );
        if only_imports {
            fix.push_str(&format!(
                "; or, since nothing but imported copies is in it, remove {} and re-import with `cairn import --from claude --to codex --all`",
                v1_dir.display()
            ));
        }
        checks.push(
            Check::new("codex.v1_dir", CheckStatus::Warn, msg)
                .fix(fix)
                .path(&v1_dir),
        );
    }

    // memory_summary.md against the validator.
    for v in [MemoryVersion::V2, MemoryVersion::V1] {
        let path = home.join(v.dir_name()).join("memory_summary.md");
        let Ok(bytes) = fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let problems = summary_problems(&text, v == MemoryVersion::V2);
        if problems.is_empty() {
            checks.push(
                Check::new(
                    "codex.memory_summary",
                    CheckStatus::Ok,
                    format!("{v} memory_summary.md passes Codex's validator"),
                )
                .path(&path),
            );
        } else {
            checks.push(
                Check::new(
                    "codex.memory_summary",
                    CheckStatus::Warn,
                    format!(
                        "{v} memory_summary.md fails Codex's validator: {}; Codex rejects the consolidation that produced it and does not count the workspace as ready",
                        problems.join("; ")
                    ),
                )
                .fix("correct the listed problems, or delete the file so the next consolidation writes a new one")
                .path(&path),
            );
        }
    }

    // One layer, two representations: Codex loads both and warns at every start.
    if let Some(check) = hooks_in_both_files(home, cfg.document.as_ref()) {
        checks.push(check);
    }

    // cairn hooks and their trust.
    let hooks: Vec<_> = codex_hooks(home, cfg.document.as_ref())
        .into_iter()
        .filter(|h| h.is_cairn())
        .collect();
    if hooks.is_empty() {
        checks.push(Check::new(
            "codex.hooks",
            CheckStatus::Info,
            "no cairn hooks are configured in Codex",
        ));
    } else if let Some((key, false)) = cfg.hooks_feature.deciding() {
        let old_name = if key == cairn_install::codex_toml::LEGACY_HOOKS_FEATURE_KEY {
            " (`codex_hooks` is the old name of `hooks`, which Codex still reads)"
        } else {
            ""
        };
        let off: Vec<String> = cfg
            .hooks_feature
            .keys_off()
            .iter()
            .map(|k| format!("`{k} = false`"))
            .collect();
        checks.push(
            Check::new(
                "codex.hooks",
                CheckStatus::Warn,
                format!(
                    "cairn hooks are configured but `[features] {key} = false` turns every hook off{old_name}: Codex runs none of them"
                ),
            )
            .fix(format!(
                "run `cairn install codex` again (it sets the flag to `true` and says which other hooks that turns on), or remove {} from `[features]` in {}",
                off.join(" and "),
                cfg.path.display()
            ))
            .path(&cfg.path),
        );
    }
    // The same event run twice (config.toml and hooks.json, or an older install beside a new
    // one): Codex runs cairn twice per turn.
    let mut by_event: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for h in &hooks {
        by_event
            .entry(h.event.as_str())
            .or_default()
            .push(h.key.as_str());
    }
    for (event, keys) in by_event.iter().filter(|(_, k)| k.len() > 1) {
        checks.push(
            Check::new(
                "codex.hooks",
                CheckStatus::Warn,
                format!(
                    "cairn's {event} hook is configured {} times ({}): Codex runs it each time",
                    keys.len(),
                    keys.join(", ")
                ),
            )
            .fix("run `cairn install codex` again (it keeps one), or remove the extra handler by hand"),
        );
    }
    let commands: Vec<(&str, &str, &Path)> = hooks
        .iter()
        .map(|h| (h.event.as_str(), h.command.as_str(), Path::new(&h.source)))
        .collect();
    checks.extend(missing_programs("codex", &commands));
    let trust_fix = "start Codex, open /hooks and trust the cairn hooks (Codex asks again after every change to a hook and skips untrusted hooks silently)";
    for h in &hooks {
        let (status, msg, fix) = match (h.enabled, h.trust) {
            (false, _) => (
                CheckStatus::Warn,
                format!(
                    "cairn {} hook is disabled (`enabled = false` in [hooks.state])",
                    h.event
                ),
                Some("enable it in /hooks in Codex".to_string()),
            ),
            (true, HookTrust::Trusted) => (
                CheckStatus::Ok,
                format!("cairn {} hook is trusted", h.event),
                None,
            ),
            (true, HookTrust::Untrusted) => (
                CheckStatus::Warn,
                format!(
                    "cairn {} hook is not trusted: Codex never runs it ({})",
                    h.event, h.key
                ),
                Some(trust_fix.to_string()),
            ),
            (true, HookTrust::Mismatch) => (
                CheckStatus::Warn,
                format!(
                    "cairn {} hook: its trusted_hash does not match the hash cairn computes ({}). Either it was modified since it was trusted (Codex then skips it), or this Codex version hashes hooks in a way cairn cannot reproduce — cannot verify which",
                    h.event, h.current_hash
                ),
                Some(format!(
                    "open /hooks in Codex: if it shows the hook as modified, {}",
                    "trust it again"
                )),
            ),
        };
        let mut c = Check::new("codex.hooks", status, msg);
        c.fix = fix;
        c.path = Some(h.source.clone());
        checks.push(c);
    }

    // Locks and interrupted imports.
    let ws = Workspace::new(home);
    for v in [MemoryVersion::V2, MemoryVersion::V1] {
        let p = ws.lock_path(v);
        match probe_lock(&p) {
            LockState::Absent | LockState::Free => {}
            LockState::Held => checks.push(
                Check::new(
                    "codex.locks",
                    CheckStatus::Info,
                    format!(
                        "{} is held now: a consolidation or an import is running (these are advisory locks, released by the kernel when their process exits, so a killed process never leaves one behind)",
                        p.display()
                    ),
                )
                .fix("wait for it to finish; imports meanwhile report the workspace busy")
                .path(&p),
            ),
            LockState::Symlink => checks.push(
                Check::new(
                    "codex.locks",
                    CheckStatus::Error,
                    format!("{} is a symbolic link; cairn refuses to lock through it", p.display()),
                )
                .fix("delete the symlink (a lock file holds no data)")
                .path(&p),
            ),
        }
    }
    let staging = ws.staging_dir();
    if fs::read_dir(&staging).is_ok_and(|mut d| d.next().is_some()) {
        checks.push(
            Check::new(
                "codex.locks",
                CheckStatus::Warn,
                format!(
                    "{} was left by an interrupted cairn import",
                    staging.display()
                ),
            )
            .fix("run `cairn import --from claude --to codex` again: it puts back or removes what is there")
            .path(&staging),
        );
    }
    if !checks.iter().any(|c| c.id == "codex.locks") {
        checks.push(Check::new(
            "codex.locks",
            CheckStatus::Ok,
            "no memory workspace lock is held and no interrupted import is left",
        ));
    }
}

/// Codex's user layer holding hooks in `config.toml` `[hooks]` and in `hooks.json` at once:
/// Codex loads both, and warns at every start ("loading hooks from both … prefer a single
/// representation for this layer", `codex-rs/hooks/src/engine/discovery.rs`). As there, a file
/// holds hooks when one of its events has a matcher group.
fn hooks_in_both_files(home: &Path, doc: Option<&toml_edit::DocumentMut>) -> Option<Check> {
    let toml_events: Vec<String> = doc
        .and_then(|d| d.get("hooks"))
        .and_then(toml_edit::Item::as_table_like)?
        .iter()
        .filter(|(event, _)| *event != "state")
        .filter(|(_, groups)| match groups {
            toml_edit::Item::ArrayOfTables(a) => !a.is_empty(),
            toml_edit::Item::Value(toml_edit::Value::Array(a)) => !a.is_empty(),
            _ => false,
        })
        .map(|(event, _)| event.to_owned())
        .collect();
    let json_path = home.join("hooks.json");
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&json_path).ok()?).ok()?;
    let json_events: Vec<String> = json
        .get("hooks")?
        .as_object()?
        .iter()
        .filter(|(_, groups)| groups.as_array().is_some_and(|g| !g.is_empty()))
        .map(|(event, _)| event.clone())
        .collect();
    if toml_events.is_empty() || json_events.is_empty() {
        return None;
    }
    let config = home.join("config.toml");
    Some(
        Check::new(
            "codex.hooks_files",
            CheckStatus::Warn,
            format!(
                "Codex hooks are in both {} ({}) and {} ({}): Codex loads both and warns at every start (\"prefer a single representation for this layer\")",
                config.display(),
                toml_events.join(", "),
                json_path.display(),
                json_events.join(", ")
            ),
        )
        .fix("keep them in one of the two files: move the events of one into the other (`cairn install codex` puts cairn's own next to yours and moves them out of the other file)")
        .path(&json_path),
    )
}

/// Why a directory could not be read, in words ("permission denied").
/// Whether `path` is a file this user may run.
fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// cairn hooks (`(event, command, where configured)`) whose program is an absolute path that
/// is not there (the binary moved or was removed): the agent then runs a failing command on
/// every turn. One check per missing program, naming its events.
fn missing_programs(agent: &'static str, hooks: &[(&str, &str, &Path)]) -> Vec<Check> {
    let mut missing: Vec<(String, Vec<&str>, &Path)> = Vec::new();
    for (event, command, source) in hooks {
        let Some(program) = cairn_install::command_program(command) else {
            continue;
        };
        let path = Path::new(&program);
        if !path.is_absolute() || is_executable(path) {
            continue;
        }
        match missing.iter_mut().find(|(p, ..)| *p == program) {
            Some((_, events, _)) => events.push(event),
            None => missing.push((program, vec![event], source)),
        }
    }
    let (id, name) = if agent == "claude" {
        ("claude.hook_program", "Claude Code")
    } else {
        ("codex.hook_program", "Codex")
    };
    missing
        .into_iter()
        .map(|(program, mut events, source)| {
            events.sort_unstable();
            events.dedup();
            Check::new(
                id,
                CheckStatus::Error,
                format!(
                    "cairn's hooks ({}) run {program}, which does not exist or may not be run: {name} runs a failing command on every turn, and no memory is recorded or given",
                    events.join(", ")
                ),
            )
            .fix(format!(
                "run `cairn install {agent}` again with the cairn you use now (it replaces the hooks), or `cairn install {agent} --uninstall`"
            ))
            .path(source)
        })
        .collect()
}

pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

/// The Claude Code directories that exist but cannot be listed: `<root>/projects`, a project
/// key directory, a project's `memory/` (symlinks are not followed). What is in them is
/// invisible to cairn and to Codex's importer, which would otherwise read as "no transcripts".
pub fn unreadable_claude_dirs(claude_root: &Path) -> Vec<(PathBuf, String)> {
    let projects = claude_root.join("projects");
    let mut out = Vec::new();
    let is_dir = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if !is_dir(&projects) {
        return out;
    }
    let entries = match fs::read_dir(&projects) {
        Ok(rd) => rd,
        Err(e) => {
            out.push((projects, io_reason(&e)));
            return out;
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        if let Err(e) = fs::read_dir(&dir) {
            out.push((dir, io_reason(&e)));
            continue;
        }
        let mem = dir.join("memory");
        if is_dir(&mem)
            && let Err(e) = fs::read_dir(&mem)
        {
            out.push((mem, io_reason(&e)));
        }
    }
    out
}

fn claude_checks(req: &DoctorRequest, checks: &mut Vec<Check>) {
    // Something else where Claude Code keeps its sessions: none are read, none recorded.
    let projects = req.claude_root.join("projects");
    if fs::symlink_metadata(&projects).is_ok_and(|m| !m.is_dir())
        && !fs::metadata(&projects).is_ok_and(|m| m.is_dir())
    {
        checks.push(
            Check::new(
                "claude.projects",
                CheckStatus::Error,
                format!(
                    "{} is not a directory: Claude Code cannot record sessions or auto memory there, and cairn has nothing to read",
                    projects.display()
                ),
            )
            .fix(format!(
                "move it aside (`mv {0} {0}.bak`); Claude Code makes the directory again at its next session",
                projects.display()
            ))
            .path(&projects),
        );
    }
    for (dir, why) in unreadable_claude_dirs(&req.claude_root) {
        checks.push(
            Check::new(
                "claude.unreadable",
                CheckStatus::Error,
                format!(
                    "cannot read {}: {why}; its sessions and memory are invisible to cairn and to Codex's importer (this is not transcript cleanup)",
                    dir.display()
                ),
            )
            .fix(format!(
                "give your user read access (`chmod u+rx {}`), or run cairn as the user who owns it",
                dir.display()
            ))
            .path(&dir),
        );
    }
    let settings = req.claude_root.join("settings.json");
    if let Ok(text) = fs::read_to_string(&settings)
        && cairn_install::claude_hooks_disabled(&text)
    {
        let ours = text.contains("cairn hook");
        checks.push(
            Check::new(
                "claude.hooks",
                if ours { CheckStatus::Warn } else { CheckStatus::Info },
                if ours {
                    "cairn hooks are configured but `\"disableAllHooks\": true` turns every Claude Code hook off: Claude Code runs none of them".to_owned()
                } else {
                    "`\"disableAllHooks\": true`: Claude Code runs no hooks".to_owned()
                },
            )
            .fix(format!(
                "set `\"disableAllHooks\"` to `false` (or remove it) in {}",
                settings.display()
            ))
            .path(&settings),
        );
    }
    if let Ok(text) = fs::read_to_string(&settings)
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(events) = v.get("hooks").and_then(serde_json::Value::as_object)
    {
        let mut commands: Vec<(&str, &str, &Path)> = Vec::new();
        for (event, groups) in events {
            commands.extend(
                groups
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
                    .flatten()
                    .filter_map(|h| h.get("command").and_then(serde_json::Value::as_str))
                    .filter(|c| cairn_install::is_cairn_command(c, cairn_install::Target::Claude))
                    .map(|c| (event.as_str(), c, settings.as_path())),
            );
        }
        checks.extend(missing_programs("claude", &commands));
    }
    let mem = claude_source::discover(&req.claude_root, req.home.as_deref());
    for l in &mem.linked {
        checks.push(
            Check::new(
                "claude.memory_symlink",
                CheckStatus::Info,
                format!(
                    "the memory dir of Claude Code project {} is a symbolic link: Claude Code follows it, but Codex's importer and `cairn import --from claude --to codex` do not, so Codex does not get this memory (a copy imported earlier is kept)",
                    l.key
                ),
            )
            .fix(format!(
                "to import it, make {} a real directory (move the linked files into it)",
                l.memory_dir.display()
            ))
            .path(&l.memory_dir),
        );
    }
    export_temp_checks(req, checks);
    let mut no_cwd = 0;
    for p in &mem.projects {
        if p.cwd.is_some() {
            continue;
        }
        no_cwd += 1;
        let why = p.reason.as_deref().unwrap_or("no usable session");
        let fix = if p.key == claude_source::CUSTOM_KEY {
            format!(
                "import it with `cairn import --from claude --to codex --project {k} --map {k}=DIR`",
                k = p.key
            )
        } else {
            format!(
                "open the project in Claude Code once (a new transcript records its directory), or import it with `cairn import --from claude --to codex --project {k} --map {k}=DIR`",
                k = p.key
            )
        };
        checks.push(
            Check::new(
                "claude.no_cwd",
                CheckStatus::Warn,
                format!(
                    "Claude Code project {} ({} memory file(s)) has no usable working directory: {why}. Codex's importer leaves its memory behind (Claude Code deletes transcripts after `cleanupPeriodDays` but keeps memory; a moved directory leaves transcripts pointing nowhere)",
                    p.key,
                    p.files.len()
                ),
            )
            .fix(fix)
            .path(&p.memory_dir),
        );
    }
    if no_cwd == 0 && !mem.projects.is_empty() {
        checks.push(Check::new(
            "claude.no_cwd",
            CheckStatus::Ok,
            format!(
                "all {} Claude Code project(s) with memory have a working directory",
                mem.projects.len()
            ),
        ));
    }
    let mut over = 0;
    for p in &mem.projects {
        let path = p.memory_dir.join("MEMORY.md");
        let Ok(bytes) = fs::read(&path) else { continue };
        let (lines, chars) = index_size(&String::from_utf8_lossy(&bytes));
        if lines > INDEX_MAX_LINES || chars > INDEX_MAX_CHARS {
            over += 1;
            checks.push(
                Check::new(
                    "claude.memory_index",
                    CheckStatus::Warn,
                    format!(
                        "MEMORY.md of {} has {lines} lines and {chars} characters; Claude Code loads only the first {INDEX_MAX_LINES} lines / {INDEX_MAX_CHARS} characters and silently drops the rest",
                        p.key
                    ),
                )
                .fix("move detail into topic files and keep one index line per memory (under ~150 characters)")
                .path(&path),
            );
        }
    }
    if over == 0 && !mem.projects.is_empty() {
        checks.push(Check::new(
            "claude.memory_index",
            CheckStatus::Ok,
            "every Claude Code MEMORY.md is within 200 lines and 25,000 characters",
        ));
    }
}

/// Temp files a killed Codex → Claude Code export left in a memory dir (only names of exactly
/// cairn's temp shape, older than a live write could be).
fn export_temp_checks(req: &DoctorRequest, checks: &mut Vec<Check>) {
    let claude = cairn_transcript::ClaudeRoot::new(&req.claude_root);
    let mut dirs: Vec<PathBuf> = claude
        .projects(&mut Vec::new())
        .into_iter()
        .map(|p| p.dir.join("memory"))
        .collect();
    dirs.extend(claude.auto_memory_override(req.home.as_deref()));
    for dir in dirs {
        if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let names = crate::fsutil::stale_temps(&dir);
        if names.is_empty() {
            continue;
        }
        checks.push(
            Check::new(
                "claude.export_temp",
                CheckStatus::Warn,
                format!(
                    "{} temp file(s) left in {} by an interrupted `cairn import --from codex --to claude`: {}",
                    names.len(),
                    dir.display(),
                    names.join(", ")
                ),
            )
            .fix("run `cairn import --from codex --to claude` again (it removes them first), or delete them")
            .path(&dir),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_rules() {
        let good = "v1\n\n## User Profile\n\n## User preferences\n\n## General Tips\n\n## What's in Memory\n";
        assert!(summary_problems(good, true).is_empty());
        assert_eq!(summary_problems("v2\n", false).len(), 1);
        let p = summary_problems("v1\n## User Profile\n", true);
        assert_eq!(p.len(), 3);
        let big = format!("{good}{}", "x".repeat(10_000));
        assert_eq!(summary_problems(&big, true).len(), 1);
        assert!(summary_problems(&big, false).is_empty());
    }

    #[test]
    fn index_size_strips_frontmatter_and_comments() {
        let t = "---\nx: y\n---\n<!-- c -->\n- a\n<!--\nmulti\n-->\n- b\n";
        assert_eq!(index_size(t), (2, 7));
    }
}
