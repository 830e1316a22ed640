//! Shared glue for the memory commands: opening the memory store with its views, the clock,
//! which project a directory belongs to, where the agents keep their own memory.

use std::path::Path;

use anyhow::{Context, Result};
use cairn_memory::{AgentMemoryDirs, Memory, MemoryStore, project_scope, scope_label};

use crate::cmd::ingest;
use crate::homes::Homes;

/// The memory store over cairn's database, writing its views to `<data dir>/memory`.
pub fn open(homes: &Homes) -> Result<MemoryStore> {
    open_with(homes, ingest::open_store(homes)?)
}

/// The memory store for a search on someone's clock (a hook, `cairn recall`): the
/// connection leaves SQLite's checkpoint to the worker, so closing it costs no fsync, and
/// opening the recall index skips the full agreement check that writers make (see
/// [`MemoryStore::check_index_only_when_empty`]).
pub fn open_for_search(homes: &Homes) -> Result<MemoryStore> {
    let store = ingest::open_existing_store_for_reading(homes)?;
    if !store.is_read_only() {
        store.defer_checkpoint_on_close()?;
    }
    let mut mem = open_with(homes, store)?;
    mem.check_index_only_when_empty();
    Ok(mem)
}

/// The memory store for a command that only reads (`list`, `show`): read-only where the
/// data dir may not be written (see [`ingest::open_store_for_reading`]).
pub fn open_for_reading(homes: &Homes) -> Result<MemoryStore> {
    open_with(homes, ingest::open_existing_store_for_reading(homes)?)
}

fn open_with(homes: &Homes, store: cairn_store::Store) -> Result<MemoryStore> {
    let mem = MemoryStore::open(store).with_context(|| {
        format!(
            "cannot open the memory tables in {} (upgrade cairn if it says newer)",
            homes.db_path().display()
        )
    })?;
    Ok(mem.with_views(homes.data_dir.join("memory")))
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The project scope of `cwd` (default: the current directory).
pub fn project_of(cwd: Option<&Path>) -> Result<String> {
    let dir = match cwd {
        // A typo would scope memories to a project that does not exist.
        Some(d) if !d.is_dir() => anyhow::bail!(
            "--cwd {} is not a directory; pass the project's directory (or leave --cwd out for the current one)",
            d.display()
        ),
        Some(d) => d.to_path_buf(),
        None => {
            std::env::current_dir().context("cannot read the current directory; pass --cwd DIR")?
        }
    };
    Ok(project_scope(&dir))
}

/// Where both agents write memory themselves (those turns are not extracted again).
pub fn agent_dirs(homes: &Homes) -> Result<AgentMemoryDirs> {
    let root = cairn_transcript::ClaudeRoot::new(homes.claude_root()?);
    Ok(AgentMemoryDirs {
        claude_roots: vec![homes.claude_root()?.to_path_buf()],
        claude_memory_dirs: root
            .auto_memory_override(homes.home.as_deref())
            .into_iter()
            .collect(),
        codex_homes: vec![homes.codex_home()?.to_path_buf()],
    })
}

/// `feedback · project webshop` style label.
pub fn label(m: &Memory) -> String {
    let scope = if m.scope == cairn_memory::GLOBAL {
        "global".to_string()
    } else {
        format!("project {}", scope_label(&m.scope))
    };
    format!("{} · {scope}", m.memory_type)
}

/// A memory as text: header, body, provenance.
pub fn print_full(m: &Memory, now: i64) {
    outln!("{}  {}  ({})", m.id, m.name, label(m));
    for l in m.body.lines() {
        outln!("  {l}");
    }
    outln!("  source: {}", m.source.describe());
    outln!(
        "  updated {} ({} days ago), recalled {} time(s)",
        cairn_memory::format_time(m.updated_at),
        m.age_days(now),
        m.recall_count
    );
}

/// What `cairn sync` did about memories.
#[derive(serde::Serialize)]
pub struct SyncMemories {
    #[serde(flatten)]
    pub extract: cairn_memory::ExtractReport,
    /// Live memories after the run.
    pub total: usize,
    /// The markdown views directory.
    pub views: String,
    /// Stored vectors recomputed because the embedding tier changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reembedded: Option<cairn_recall::Reembedded>,
}

/// When the views and search snapshots are brought up to date after extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Right away (the worker).
    Now,
    /// By the consolidation that comes next (`cairn sync`), which does both at its end.
    Consolidation,
}

/// Extracts memories from the turns not seen yet; the views and snapshots follow as `follow`
/// says.
pub fn extract(homes: &Homes, follow: Follow, quiet: bool) -> Result<SyncMemories> {
    let mut mem = open(homes)?;
    let now = now();
    let dirs = agent_dirs(homes)?;
    // Reading every turn for memories takes minutes on a first run over months of sessions.
    let bar = crate::progress::Bar::items(quiet, "reading turns for memories");
    let report = mem
        .extract_turns_with_progress(&dirs, now, &mut |done, total| bar.set(done, total))
        .context("memory extraction failed");
    bar.clear();
    let report = report?;
    if follow == Follow::Now {
        mem.refresh_views(now).context("memory extraction failed")?;
    }
    let total = mem.scopes()?.iter().map(|(_, n)| n).sum();
    // After a change of embedding model every memory is embedded again: minutes for many.
    let bar = crate::progress::Bar::items(quiet, "re-embedding memories");
    let reembedded = mem
        .reembed_pending(&mut |done, total| bar.set(done, total))
        .context("recomputing the memory vectors with the active embedding model failed")?;
    bar.clear();
    if follow == Follow::Now {
        // Only speed is at stake: a failure leaves the snapshots to the next search.
        let _ = mem.prepare_search_snapshots();
    }
    Ok(SyncMemories {
        extract: report,
        total,
        views: homes.data_dir.join("memory").display().to_string(),
        reembedded,
    })
}

/// Live memories in every scope.
pub fn live_total(homes: &Homes) -> Result<usize> {
    let mem = open(homes)?;
    Ok(mem.scopes()?.iter().map(|(_, n)| n).sum())
}

/// Reads hand edits of the views back and regenerates them.
pub fn refresh_views(homes: &Homes) -> Result<()> {
    let mut mem = open(homes)?;
    mem.refresh_views(now())
        .context("regenerating the memory views failed")?;
    Ok(())
}

pub fn print_sync(r: &SyncMemories) {
    let e = &r.extract;
    outln!(
        "memories: {} statement(s) in {} new turn(s): {} created, {} merged into existing, {} superseded; {} memories kept",
        e.statements,
        e.turns,
        e.created,
        e.updated,
        e.superseded,
        r.total
    );
    if let Some(x) = &r.reembedded {
        outln!(
            "embeddings: {} memory vector(s) recomputed with {} (were {})",
            x.documents,
            x.to,
            x.from
        );
    }
    // Each count that is not zero gets one line saying what those turns or memories are.
    let notes: [(usize, &str); 14] = [
        (
            e.agent_wrote,
            "turn(s) skipped: the agent wrote memory itself there",
        ),
        (
            e.unreadable,
            "stored turn(s) skipped: their data in cairn's database is damaged and cannot be read back",
        ),
        (
            e.forgotten_skipped,
            "statement(s) skipped: you told cairn to forget them",
        ),
        (
            e.no_project,
            "statement(s) about a project not kept: their session has no working directory, \
             so no project to keep them under",
        ),
        (
            e.withdrawn,
            "memory(ies) withdrawn: their turns, read again (their text changed, or this \
             version's rules differ), no longer give them (a memory you edited stays)",
        ),
        (
            e.rolled_back,
            "rolled-back turn(s) skipped: a Codex rollback dropped them from their thread, \
             so what was said there is not kept (what it gave before is withdrawn)",
        ),
        (
            e.non_interactive,
            "turn(s) of non-interactive Codex sessions skipped: `codex exec` or MCP-driven, \
             their prompts are a program's, not yours",
        ),
        (
            e.memory_disabled,
            "turn(s) of Codex threads kept out of memory skipped: their `memory_mode` is not \
             `enabled` (`[memories] generate_memories = false`, or memory turned off for the \
             thread), so nothing said there is kept (what they gave before is withdrawn)",
        ),
        (
            e.restored,
            "memory(ies) back: withdrawn when their turn's text changed and given again now, \
             replaced by a memory these rules read as about another thing, or replaced by a \
             statement that was rolled back, not yours, or of a thread kept out of memory",
        ),
        (
            e.retracted,
            "memory(ies) forgotten: a prompt asked to forget them (\"forget the rule about …\")",
        ),
        (
            e.copied,
            "statement(s) in turns copied from another session (a Codex fork carries its \
             parent's turns): taken there already, and what became of them since holds",
        ),
        (
            e.redacted,
            "memory(ies) redacted again: this version's redactor found a secret an older one \
             kept in their text",
        ),
        (
            e.sources_moved,
            "memory(ies) name the file their turn moved to (a rollout Codex archived)",
        ),
        (
            e.deferred,
            "turn(s) left for a later run: the last turn of a session is read once it ends \
             (the agent may still save that memory itself) or after an hour; the Stop hook reads \
             it as soon as it ends",
        ),
    ];
    for (count, what) in notes {
        if count > 0 {
            outln!("  {count} {what}");
        }
    }
    outln!("  views: {}", r.views);
}

/// The hooks' memory context: the session-start summary (SessionStart) and the memories
/// relevant to the prompt (UserPromptSubmit), for the project of the hook's working directory.
pub struct MemoryContext<'a> {
    pub homes: &'a Homes,
    /// Session-start token budget (`[recall] session_budget_tokens`).
    pub budget: usize,
}

impl MemoryContext<'_> {
    /// With the budget from an already loaded `config.toml` (the default when it is missing
    /// or broken).
    pub fn new<'a>(homes: &'a Homes, config: Option<&cairn_config::Config>) -> MemoryContext<'a> {
        let budget = config.map_or(cairn_memory::DEFAULT_SESSION_BUDGET, |c| {
            c.recall.session_budget_tokens
        });
        MemoryContext { homes, budget }
    }
}

impl cairn_capture::context::ContextProvider for MemoryContext<'_> {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn provide(
        &self,
        _store: &cairn_store::Store,
        req: &cairn_capture::context::ContextRequest<'_>,
    ) -> Result<Option<cairn_capture::context::ContextPiece>, cairn_capture::CaptureError> {
        use cairn_capture::payload::HookEvent;
        let fail = |e: anyhow::Error| {
            cairn_capture::CaptureError::Io(format!(
                "memory: {}",
                crate::output::error_text(e.as_ref())
            ))
        };
        // Without a working directory no project is known: the global memories (the user's
        // profile and preferences) still apply.
        let scope = req
            .cwd
            .map_or_else(|| cairn_memory::GLOBAL.to_string(), project_scope);
        let session = Some(req.session_id).filter(|s| !s.is_empty());
        let text = match req.event {
            HookEvent::SessionStart => {
                let mut mem = open_for_search(self.homes).map_err(fail)?;
                mem.give_context_to(req.agent.as_str());
                Some(
                    mem.session_start_context(&scope, session, self.budget, req.now)
                        .map_err(|e| fail(e.into()))?,
                )
            }
            HookEvent::UserPromptSubmit => match req.prompt {
                Some(p) => {
                    let mut mem = open_for_search(self.homes).map_err(fail)?;
                    mem.give_context_to(req.agent.as_str());
                    mem.prompt_context(&scope, session, p, req.now)
                        .map_err(|e| fail(e.into()))?
                }
                None => None,
            },
            _ => None,
        };
        Ok(text
            .filter(|t| !t.trim().is_empty())
            .map(|t| cairn_capture::context::ContextPiece {
                for_agent: t,
                for_user: None,
            }))
    }
}
