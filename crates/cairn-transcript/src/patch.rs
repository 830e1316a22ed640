//! Reading the paths and line counts out of a Codex `apply_patch` envelope.

/// Paths touched by a patch and the number of added / removed lines.
#[derive(Debug, Default, PartialEq)]
pub struct PatchSummary {
    pub paths: Vec<String>,
    pub added: u32,
    pub removed: u32,
}

/// Parses the `*** Begin Patch` format (tolerantly: unknown lines are ignored).
pub fn summarize_patch(patch: &str) -> PatchSummary {
    let mut out = PatchSummary::default();
    for line in patch.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let path = line
            .strip_prefix("*** Update File: ")
            .or_else(|| line.strip_prefix("*** Add File: "))
            .or_else(|| line.strip_prefix("*** Delete File: "))
            .or_else(|| line.strip_prefix("*** Move to: "));
        if let Some(p) = path {
            let p = p.trim();
            if !p.is_empty() && !out.paths.iter().any(|x| x == p) {
                out.paths.push(p.to_string());
            }
        } else if line.starts_with("***") {
            continue;
        } else if line.starts_with('+') {
            out.added = out.added.saturating_add(1);
        } else if line.starts_with('-') {
            out.removed = out.removed.saturating_add(1);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_paths_and_counts() {
        let p = "*** Begin Patch\n*** Update File: src/a.rs\n@@ fn x\n-old\n+new\n+more\n*** Add File: b.md\n+hi\n*** End Patch\n";
        let s = summarize_patch(p);
        assert_eq!(s.paths, vec!["src/a.rs", "b.md"]);
        assert_eq!((s.added, s.removed), (3, 1));
    }
}
