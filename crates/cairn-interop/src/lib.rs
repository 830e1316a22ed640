//! Moving memory between the two agents, and checking that each can read what it has.
//!
//! This crate owns four things. (1) Claude Code → Codex import: discovering every Claude Code
//! project with auto memory ([`claude_source`]), resolving which Codex memory pipeline (v1
//! `memories/`, v2 `memories_v2/`) a profile uses ([`codex_config`]), planning and running the
//! byte-for-byte mirror into `extensions/external_agent_import/resources/<key>/` under the
//! workspace locks ([`import`], [`workspace`]), leaving out what cairn itself exported from
//! Codex (it would echo back as Claude Code memory). (2) Codex → Claude Code export: reading Codex's
//! memory workspace (task groups, `memory_summary.md`, rollout summaries, ad-hoc notes) and
//! writing marked topic files plus index lines into a project's Claude Code memory dir
//! ([`codex_source`], [`export`]; which files it wrote is remembered in cairn's data dir,
//! [`export_state`], so a file deleted there stays deleted). (3) `doctor` checks with their fixes ([`doctor`], including
//! Codex hook trust in [`hook_trust`]). (4) The Codex memory-workspace lock other crates must
//! hold when they write there ([`workspace::WorkspaceLock`]).
//!
//! It must not touch anything under the Claude Code root during an import (it only reads
//! there), never write through a symlink in either agent's tree, never create Codex's v1
//! `memories/` directory unless the user's configuration asks for v1, and never modify a Claude
//! Code memory file it did not write (in `MEMORY.md`, only the index lines linking to its own
//! files). It knows nothing about cairn's database.

pub mod claude_source;
pub mod codex_config;
pub mod codex_source;
pub mod doctor;
mod error;
pub mod export;
pub mod export_state;
mod fsutil;
pub mod hook_trust;
pub mod import;
pub mod workspace;

pub use error::{BUSY_MESSAGE, InteropError};
