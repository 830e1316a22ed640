//! What consolidation reads: phase-1 outputs and Codex ad-hoc notes, each with a key, a
//! content hash and the memories it proposes; and the diff against the last manifest.

use std::collections::BTreeMap;
use std::path::Path;

use cairn_memory::{GLOBAL, MemoryType, NewMemory, Source, classify, format_time};
use cairn_stage1::Stage1Output;
use rusqlite::Connection;
use serde::Serialize;

use crate::Result;

/// Largest note read (bytes); longer notes are cut.
const MAX_NOTE_BYTES: u64 = 64 * 1024;

/// One proposed memory with the origin that makes its merge idempotent.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub origin: String,
    pub new: NewMemory,
}

/// One input of consolidation.
#[derive(Debug, Clone)]
pub struct Input {
    /// `stage1` or `note`.
    pub kind: &'static str,
    pub key: String,
    pub hash: String,
    pub candidates: Vec<Candidate>,
}

impl Input {
    /// Every origin of this input starts with this.
    pub fn origin_prefix(&self) -> String {
        origin_prefix(self.kind, &self.key)
    }
}

pub fn origin_prefix(kind: &str, key: &str) -> String {
    match kind {
        "stage1" => format!("s1:{key}:"),
        _ => format!("note:{key}:"),
    }
}

fn norm_hash(s: &str) -> String {
    let n: String = s
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(n.as_bytes()))
}

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The inputs from phase-1 outputs.
pub fn stage1_inputs(outputs: &[Stage1Output]) -> Vec<Input> {
    outputs
        .iter()
        .map(|o| {
            let key = o.key();
            let candidates = o
                .memories
                .iter()
                .filter_map(|m| {
                    let kind = MemoryType::parse(&m.kind)?;
                    Some(Candidate {
                        origin: format!("{}{}", origin_prefix("stage1", &key), norm_hash(&m.body)),
                        new: NewMemory {
                            memory_type: kind,
                            scope: m.scope.clone(),
                            rule: m.body.clone(),
                            why: opt(&m.why),
                            how: opt(&m.how_to_apply),
                            name: opt(&m.name),
                            description: opt(&m.description),
                            source: Source {
                                kind: "model".into(),
                                agent: Some(o.agent.clone()),
                                session: Some(o.session_key.clone()),
                                turn: Some(o.turn_key.clone()),
                                path: Some(o.source_path.clone()),
                                line: None,
                                at: Some(format_time(o.source_updated_at)),
                            },
                            at: o.source_updated_at,
                        },
                    })
                })
                .collect();
            Input {
                kind: "stage1",
                key,
                hash: o.content_hash(),
                candidates,
            }
        })
        .collect()
}

/// When Codex wrote a note, from its name (`YYYY-MM-DDTHH-MM-SS-<slug>.md`), as seconds
/// since the epoch (UTC).
fn note_time(name: &str) -> Option<i64> {
    let stamp = name.get(..19)?;
    let dt = jiff::civil::DateTime::strptime("%Y-%m-%dT%H-%M-%S", stamp).ok()?;
    Some(jiff::tz::TimeZone::UTC.to_timestamp(dt).ok()?.as_second())
}

/// Scopes each note to the project of the Codex turn that wrote it (found by its file name
/// in the stored turns: the `add_ad_hoc_note` call or the patch that created it), so that
/// "the ledger API is versioned with /v2" stays with the ledger repository. A note about the
/// person, or one no stored turn wrote, stays global, as Codex keeps it.
pub fn scope_notes(conn: &Connection, inputs: &mut [Input]) -> Result<()> {
    let names: Vec<String> = inputs
        .iter()
        .filter(|i| i.kind == "note")
        .filter_map(|i| i.key.rsplit('/').next().map(str::to_string))
        .collect();
    if names.is_empty() {
        return Ok(());
    }
    let mut writer: BTreeMap<&str, String> = BTreeMap::new();
    let mut st = conn.prepare(
        "SELECT cwd, body FROM turns WHERE agent = 'codex' AND cwd IS NOT NULL AND cwd != ''
           AND body LIKE '%ad_hoc%' ORDER BY started_at, id",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (cwd, body): (String, String) = (r.get(0)?, r.get(1)?);
        for n in &names {
            if body.contains(n.as_str()) {
                writer.insert(n.as_str(), cwd.clone());
            }
        }
    }
    for i in inputs.iter_mut().filter(|i| i.kind == "note") {
        let Some(cwd) = i.key.rsplit('/').next().and_then(|n| writer.get(n)) else {
            continue;
        };
        let scope = cairn_memory::project_scope(Path::new(cwd));
        for c in &mut i.candidates {
            if c.new.memory_type != MemoryType::User {
                c.new.scope.clone_from(&scope);
            }
        }
    }
    Ok(())
}

/// The text of a note without its front matter.
fn note_body(text: &str) -> &str {
    let t = text.trim_start_matches('\u{feff}');
    if let Some(rest) = t.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---")
    {
        let after = &rest[end + 4..];
        return after.trim_start_matches(['\r', '\n']).trim();
    }
    t.trim()
}

/// Codex's ad-hoc notes (`memories*/extensions/ad_hoc/notes/*.md`): regular files only (no
/// symlinks), each a global memory. Unreadable files are reported, not fatal.
pub fn note_inputs(codex_home: &Path, problems: &mut Vec<String>) -> Vec<Input> {
    let mut out = Vec::new();
    for root in ["memories", "memories_v2"] {
        let dir = codex_home.join(root).join("extensions/ad_hoc/notes");
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            problems.push(format!("{}: not a directory, skipped", dir.display()));
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            problems.push(format!("{}: cannot be read", dir.display()));
            continue;
        };
        let mut names: Vec<_> = entries.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".md") {
                continue;
            }
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if !m.is_file() {
                continue;
            }
            let bytes = match std::fs::read(e.path()) {
                Ok(b) => b,
                Err(err) => {
                    problems.push(format!("{}: {err}", e.path().display()));
                    continue;
                }
            };
            let cut = &bytes[..bytes.len().min(MAX_NOTE_BYTES as usize)];
            let text = String::from_utf8_lossy(cut);
            let body = note_body(&text);
            let key = format!("{root}/{name}");
            let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
            let modified = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs() as i64);
            // Codex names a note by when it wrote it; a copy or a restore changes the mtime.
            let at = note_time(&name)
                .map_or(modified, |t| if modified > 0 { t.min(modified) } else { t });
            let mut candidates = Vec::new();
            if !body.is_empty() {
                let rule: String = body.chars().take(2_000).collect();
                candidates.push(Candidate {
                    origin: format!("{}{}", origin_prefix("note", &key), norm_hash(&rule)),
                    new: NewMemory {
                        memory_type: classify(&rule),
                        scope: GLOBAL.to_string(),
                        rule,
                        why: None,
                        how: None,
                        name: None,
                        description: None,
                        source: Source {
                            kind: "codex-note".into(),
                            agent: Some("codex".into()),
                            session: None,
                            turn: None,
                            path: Some(e.path().display().to_string()),
                            line: None,
                            at: Some(format_time(at)),
                        },
                        at,
                    },
                });
            }
            out.push(Input {
                kind: "note",
                key,
                hash,
                candidates,
            });
        }
    }
    out
}

/// What changed since the last successful consolidation.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diff {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    /// `(kind, key)` of inputs that are gone.
    pub removed: Vec<(String, String)>,
    pub unchanged: usize,
}

/// The manifest as stored: (kind, key) → hash.
pub fn manifest(conn: &Connection) -> Result<BTreeMap<(String, String), String>> {
    let mut st = conn.prepare("SELECT kind, key, hash FROM consolidation_manifest")?;
    let rows = st.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn diff(old: &BTreeMap<(String, String), String>, inputs: &[Input]) -> Diff {
    let mut d = Diff::default();
    let mut seen = std::collections::BTreeSet::new();
    for i in inputs {
        let k = (i.kind.to_string(), i.key.clone());
        match old.get(&k) {
            None => d.added.push(i.key.clone()),
            Some(h) if *h != i.hash => d.updated.push(i.key.clone()),
            Some(_) => d.unchanged += 1,
        }
        seen.insert(k);
    }
    for k in old.keys() {
        if !seen.contains(k) {
            d.removed.push(k.clone());
        }
    }
    d
}

/// Replaces the manifest with the current inputs.
pub fn save_manifest(conn: &Connection, inputs: &[Input]) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute("DELETE FROM consolidation_manifest", [])?;
    {
        let mut st = tx.prepare(
            "INSERT OR REPLACE INTO consolidation_manifest(kind, key, hash) VALUES (?1, ?2, ?3)",
        )?;
        for i in inputs {
            st.execute(rusqlite::params![i.kind, i.key, i.hash])?;
        }
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(key: &str, hash: &str) -> Input {
        Input {
            kind: "stage1",
            key: key.into(),
            hash: hash.into(),
            candidates: vec![],
        }
    }

    #[test]
    fn diff_finds_added_updated_removed() {
        let mut old = BTreeMap::new();
        old.insert(("stage1".to_string(), "a".to_string()), "1".to_string());
        old.insert(("stage1".to_string(), "b".to_string()), "2".to_string());
        old.insert(("note".to_string(), "n".to_string()), "3".to_string());
        let d = diff(&old, &[input("a", "1"), input("b", "9"), input("c", "4")]);
        assert_eq!(d.added, vec!["c"]);
        assert_eq!(d.updated, vec!["b"]);
        assert_eq!(d.removed, vec![("note".to_string(), "n".to_string())]);
        assert_eq!(d.unchanged, 1);
    }

    #[test]
    fn front_matter_is_not_the_note() {
        assert_eq!(note_body("---\ntitle: x\n---\n\nUse pnpm.\n"), "Use pnpm.");
        assert_eq!(note_body("Use pnpm."), "Use pnpm.");
    }
}
