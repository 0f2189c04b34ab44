"""The gate corpus: dangerous.txt and everyday.txt, one JSON object a line
(``tool_name``, ``tool_input``, ``class``, optionally ``cwd``), with
``{project}``, ``{home}`` and ``{state}`` standing for a world made by
:func:`make_world` (a project with a few files, a home with keys in it, a
state directory). Used by bench/gate.py and tests/core/inbox/test_gate.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_world(root: Path) -> dict[str, str]:
    root = Path(root)
    project, home, state, elsewhere = root / "project", root / "home", root / "ars-state", root / "elsewhere"
    for d in (project / "src", project / "logs", project / "build", project / "scripts", project / "frontend",
              project / "empty_dir", project / ".claude", project / ".git" / "hooks", project / "template" / ".claude",
              project / "staging", home / ".ssh", home / ".aws", home / "projects", state / "inbox", elsewhere):
        d.mkdir(parents=True, exist_ok=True)
    files = {project / "src" / "app.py": "print('app')\n", project / "README.md": "# demo\n",
             project / "package.json": '{"version": "1.0.0", "scripts": {"test": "vitest"}}\n',
             project / "data.json": "{}\n", project / "schema.sql": "CREATE TABLE users (id int);\n",
             project / "a.txt": "a\n", project / "b.txt": "b\n", project / "data.txt": "x\n", project / "data.csv": "a,b\n",
             project / "logs" / "app.log": "ok\n", project / "logs" / "access.log": "1.2.3.4 GET /\n",
             project / "config.example.json": "{}\n", project / "old_name.py": "\n", project / "tmp.txt": "\n",
             project / "build" / "output.o": "", project / "scripts" / "deploy.sh": "#!/bin/sh\n",
             project / ".claude" / "settings.json": "{}\n", project / ".git" / "config": "[core]\n",
             project / "template" / ".claude" / "settings.json": "{}\n", project / "staging" / "settings.json": "{}\n",
             project / "cmds.txt": "ls\n", home / ".ssh" / "id_rsa": "-----BEGIN KEY-----\n",
             home / ".aws" / "credentials": "[default]\n", home / ".bashrc": "# rc\n", state / "inbox" / "req-1.json": "{}\n",
             state / "gate.toml": "timeout = 50\n"}
    for path, text in files.items():
        path.write_text(text)
    for link, target in ((project / "link", elsewhere), (project / "keys", home / ".ssh")):
        if not link.is_symlink():
            link.symlink_to(target)
    return {"project": str(project), "home": str(home), "state": str(state)}


def _fill(value, world: dict[str, str]):
    if isinstance(value, str):
        for key, path in world.items():
            value = value.replace("{" + key + "}", path)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, world) for v in value]
    return value


def load(name: str, world: dict[str, str]) -> list[dict]:
    """The entries of ``<name>.txt`` with the world's paths filled in."""
    out = []
    with open(HERE / f"{name}.txt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(_fill(json.loads(line), world))
    return out


def decide(gate, entry: dict, world: dict[str, str]) -> list:
    """The gate's matches for one entry, as the hook would ask for them."""
    return gate.check(entry["tool_name"], entry["tool_input"], project_dir=world["project"], state_dir=world["state"],
                      home=world["home"], cwd=entry.get("cwd", world["project"]))


def describe(entry: dict) -> str:
    inp = entry["tool_input"]
    what = inp.get("command") if entry["tool_name"] == "Bash" else json.dumps(inp, ensure_ascii=False)
    return f"{entry['tool_name']}: {' '.join(str(what).split())[:110]}"


if __name__ == "__main__":  # a quick look: python bench/gate_corpus/corpus.py
    import sys
    import tempfile

    sys.path.insert(0, str(HERE.parents[1]))
    from core.inbox.gate import Gate

    with tempfile.TemporaryDirectory() as tmp:
        world = make_world(Path(tmp))
        gate = Gate.builtin()
        for kind in ("dangerous", "everyday"):
            for e in load(kind, world):
                ms = decide(gate, e, world)
                if bool(ms) != (kind == "dangerous"):
                    print(f"{kind} {'PASSED' if not ms else 'HELD'}: {describe(e)}")
                    for m in ms[:3]:
                        print(f"    {m.rule}: {m.reason[:150]}")
