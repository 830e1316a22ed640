#!/usr/bin/env bash
# Runs the property tests (parsers, frontmatter, statements, memo blocks, config) long and prints a
# markdown table of executions and findings for RELIABILITY.md.
#
#   scripts/proptest-long.sh            # 20,000 cases per property
#   PROPTEST_CASES=100000 scripts/proptest-long.sh
#
# A failure prints proptest's minimal failing input; turn it into a regression test in the
# owning crate (see RELIABILITY.md, "Findings").
set -uo pipefail
cd "$(dirname "$0")/.."
cases="${PROPTEST_CASES:-20000}"
targets=(
  "cairn-transcript prop_parsers"
  "cairn-memory prop_frontmatter"
  "cairn-memory prop_statements"
  "cairn-capture prop_memo"
  "cairn-config prop_config"
)
cargo test -q --no-run $(for t in "${targets[@]}"; do set -- $t; echo "-p $1 --test $2"; done) >/dev/null 2>&1
echo "| crate | test file | properties | cases each | executions | time | result |"
echo "|---|---|---|---|---|---|---|"
status=0
for t in "${targets[@]}"; do
  set -- $t
  log="$(mktemp)"
  start=$(date +%s)
  PROPTEST_CASES="$cases" cargo test -q -p "$1" --test "$2" >"$log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  props=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+')
  failed=$(grep -Eo '[0-9]+ failed' "$log" | tail -1 | grep -Eo '[0-9]+')
  props=${props:-0}; failed=${failed:-0}
  total=$(( props + failed ))
  if [ "$rc" -eq 0 ]; then result="no finding"; else result="FAILED ($failed): see below"; status=1; fi
  echo "| $1 | tests/$2.rs | $total | $cases | $(( total * cases )) | ${secs}s | $result |"
  if [ "$rc" -ne 0 ]; then
    grep -A12 "minimal failing input\|panicked" "$log" | sed 's/^/    /' >&2
  fi
  rm -f "$log"
done
exit $status
