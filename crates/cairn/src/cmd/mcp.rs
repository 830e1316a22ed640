//! `cairn mcp`: the MCP server on stdio (tools over the memory store).

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::homes::Homes;

pub fn run(homes: &Homes) -> Result<ExitCode> {
    let config = cairn_mcp::McpConfig {
        db_path: homes.db_path(),
        views_dir: homes.data_dir.join("memory"),
        default_cwd: std::env::current_dir().ok(),
    };
    cairn_mcp::serve_stdio(config).context("the MCP server stopped with an error")?;
    Ok(ExitCode::SUCCESS)
}
