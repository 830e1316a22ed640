//! Tables other crates keep in cairn's database, each versioned as a *component* in
//! `schema_versions(component, version)`, apart from the store's own `user_version`.

use rusqlite::{Connection, OptionalExtension};

/// What [`ensure_component`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentState {
    /// The tables are at this build's version (created now, or already there).
    Ready,
    /// A newer cairn wrote them: this build must not touch them.
    TooNew { found: i64 },
}

/// Creates `component`'s tables with `ddl` (idempotent `CREATE … IF NOT EXISTS` statements)
/// unless its recorded version is already `version`, and records the version; a newer
/// recorded version is reported, not touched. Runs in a savepoint.
pub fn ensure_component(
    conn: &Connection,
    component: &str,
    version: i64,
    ddl: &str,
) -> rusqlite::Result<ComponentState> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_versions (
            component TEXT PRIMARY KEY,
            version INTEGER NOT NULL
        )",
    )?;
    match recorded_version(conn, component)? {
        Some(v) if v > version => Ok(ComponentState::TooNew { found: v }),
        Some(v) if v == version => Ok(ComponentState::Ready),
        _ => {
            conn.execute_batch(&format!("SAVEPOINT component_schema; {ddl}"))?;
            let done = conn.execute(
                "INSERT INTO schema_versions(component, version) VALUES (?1, ?2)
                 ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                rusqlite::params![component, version],
            );
            match done {
                Ok(_) => conn.execute_batch("RELEASE component_schema")?,
                Err(e) => {
                    conn.execute_batch("ROLLBACK TO component_schema; RELEASE component_schema")?;
                    return Err(e);
                }
            }
            Ok(ComponentState::Ready)
        }
    }
}

/// The version `schema_versions` records for `component` (the table must exist).
fn recorded_version(conn: &Connection, component: &str) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT version FROM schema_versions WHERE component = ?1",
        [component],
        |r| r.get(0),
    )
    .optional()
}

/// For code that only reads `component`'s tables: [`ensure_component`] on a writable
/// connection, and on a read-only one (`Store::open_read_only`), where nothing can be
/// created, `None` when the component is not at `version` in this database (never created,
/// or waiting for a writable run to migrate it): there is nothing this build can read, and
/// the caller reads it as empty instead of failing.
pub fn component_for_reading(
    conn: &Connection,
    component: &str,
    version: i64,
    ddl: &str,
) -> rusqlite::Result<Option<ComponentState>> {
    if !conn.is_readonly(rusqlite::MAIN_DB)? {
        return ensure_component(conn, component, version, ddl).map(Some);
    }
    let has_table: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_versions')",
        [],
        |r| r.get(0),
    )?;
    if !has_table {
        return Ok(None);
    }
    Ok(match recorded_version(conn, component)? {
        Some(v) if v > version => Some(ComponentState::TooNew { found: v }),
        Some(v) if v == version => Some(ComponentState::Ready),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_once_and_refuses_newer() {
        let c = Connection::open_in_memory().unwrap();
        let ddl = "CREATE TABLE IF NOT EXISTS t (x INTEGER);";
        assert_eq!(
            ensure_component(&c, "a", 1, ddl).unwrap(),
            ComponentState::Ready
        );
        assert_eq!(
            ensure_component(&c, "a", 1, ddl).unwrap(),
            ComponentState::Ready
        );
        c.execute(
            "UPDATE schema_versions SET version = 5 WHERE component = 'a'",
            [],
        )
        .unwrap();
        assert_eq!(
            ensure_component(&c, "a", 1, ddl).unwrap(),
            ComponentState::TooNew { found: 5 }
        );
    }
}
