//! `cairn mcp`: the MCP server on stdio (tools over the memory store).

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::homes::Homes;

pub fn run(homes: &Homes) -> Result<ExitCode> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        // Started by hand: it would wait in silence for JSON-RPC on stdin.
        errln!(
            "cairn mcp serves MCP over stdin/stdout and is meant to be started by an MCP client: \
             `claude mcp add cairn -- cairn mcp`, or in ~/.codex/config.toml \
             `[mcp_servers.cairn]` with `command = \"cairn\"` and `args = [\"mcp\"]`. \
             Waiting for a client on stdin (Ctrl-D ends)."
        );
    }
    let config = cairn_mcp::McpConfig {
        db_path: homes.db_path(),
        views_dir: homes.data_dir.join("memory"),
        default_cwd: std::env::current_dir().ok(),
    };
    cairn_mcp::serve_stdio(config).context("the MCP server stopped with an error")?;
    Ok(ExitCode::SUCCESS)
}
