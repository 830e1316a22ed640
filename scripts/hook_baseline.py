#!/usr/bin/env python3
"""Baseline for `cairn-bench hook`: the Stop hook's slice-and-classify step in Python.

The default mode is the approach of the memo.md Stop hook that cairn's capture is modelled on:
read the Codex rollout forward line by line, `json.loads` every line, keep the lines from the
`task_started` event with the hook's turn id to its `task_complete`/`turn_aborted`, then call the
turn "changed" if it applied a patch or ran a command that is not on the read-only allowlist.
`--tail` reads the file backwards in 256 KiB chunks to the turn's start instead (the same idea
as cairn's hook), to show what is left when the full read is gone: interpreter start-up.

Usage: hook_baseline.py [--tail] ROLLOUT TURN_ID   (prints "changed" or "read-only")
"""

import json
import os
import shlex
import sys

READ_ONLY_COMMANDS = {
    "rg", "grep", "cat", "ls", "head", "tail", "wc", "find", "jq", "stat", "diff", "pwd",
    "echo", "which", "file", "tree", "sed", "awk", "git",
}
SHELL_TOOLS = {"shell", "shell_command", "exec_command", "container.exec", "local_shell"}


def extract_turn_slice(path, turn_id):
    records, in_turn = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload")
            if record.get("type") == "event_msg" and isinstance(payload, dict):
                event = payload.get("type")
                if event == "task_started" and payload.get("turn_id") == turn_id:
                    in_turn, records = True, [record]
                    continue
                if in_turn and event in {"task_complete", "turn_aborted"}:
                    records.append(record)
                    in_turn = False
                    continue
            if in_turn:
                records.append(record)
    return records


def extract_turn_slice_tail(path, turn_id, chunk=256 * 1024):
    needle = ('"turn_id":"%s"' % turn_id).encode()
    with open(path, "rb") as f:
        pos = f.seek(0, os.SEEK_END)
        buf = b""
        data = None
        while data is None:
            new = max(0, pos - chunk)
            f.seek(new)
            buf = f.read(pos - new) + buf
            pos = new
            i = buf.rfind(needle)
            while i != -1:
                line_start = buf.rfind(b"\n", 0, i) + 1
                if line_start == 0 and pos > 0:
                    break  # the line starts before what was read: read more
                line_end = buf.find(b"\n", i)
                line = buf[line_start:line_end if line_end != -1 else len(buf)]
                if b"task_started" in line:
                    data = buf[line_start:]
                    break
                i = buf.rfind(needle, 0, i)
            if data is None and pos == 0:
                return []
    records = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
        if (records[-1].get("payload") or {}).get("type") in {"task_complete", "turn_aborted"}:
            break
    return records


def command_is_read_only(cmd):
    for sep in ("&&", "||", "|", ";"):
        cmd = cmd.replace(sep, "\n")
    if ">" in cmd:
        return False
    for part in cmd.split("\n"):
        try:
            words = shlex.split(part)
        except ValueError:
            return False
        if words and os.path.basename(words[0]) not in READ_ONLY_COMMANDS:
            return False
        if words and words[0] == "sed" and any(w.startswith("-i") for w in words):
            return False
        if words and words[0] == "find" and any(w in ("-delete", "-exec") for w in words):
            return False
    return True


def turn_changed(records):
    for r in records:
        p = r.get("payload") or {}
        kind = p.get("type")
        if kind in ("patch_apply_end",) or (kind == "custom_tool_call" and p.get("name") == "apply_patch"):
            return True
        if kind == "function_call":
            name = p.get("name")
            if name == "apply_patch":
                return True
            if name in SHELL_TOOLS:
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    return True
                cmd = args.get("cmd") or args.get("command")
                if isinstance(cmd, list):
                    cmd = " ".join(cmd)
                if not isinstance(cmd, str) or not command_is_read_only(cmd):
                    return True
    return False


def main(argv):
    tail = "--tail" in argv
    args = [a for a in argv if a != "--tail"]
    if len(args) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    path, turn_id = args
    records = extract_turn_slice_tail(path, turn_id) if tail else extract_turn_slice(path, turn_id)
    if not records:
        print("turn not found", file=sys.stderr)
        return 1
    print("changed" if turn_changed(records) else "read-only")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
