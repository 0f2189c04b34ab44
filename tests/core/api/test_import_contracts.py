"""The layout's rules, checked on every run (DESIGN.md, "Layout"):

* the import contracts in pyproject.toml hold (`lint-imports`): core never imports a
  front end or a UI library, front ends use core's facade, tiers are independent,
  consumers never import Memory;
* no import circle anywhere in core/ or tui/, counting imports inside functions and
  under TYPE_CHECKING (a circle hidden in a function is still one the reader must hold);
* no product module over 450 lines, and at most 7 modules at core's top.
"""

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[3]
LINT = Path(sys.executable).parent / "lint-imports"


def test_the_import_contracts_hold():
    r = subprocess.run([str(LINT), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "broken" not in r.stdout.lower().replace("0 broken", "")


def circles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    mods = sorted(graph.modules)
    adj = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in mods}
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in mods:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            recurse = False
            for j in range(i, len(adj[v])):
                w = adj[v][j]
                if w not in index:
                    work.append((v, j + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def test_no_import_circles_type_only_and_function_local_included():
    graph = grimp.build_graph("core", "tui", include_external_packages=False, cache_dir=None)
    assert circles(graph) == []


def test_the_circle_finder_sees_a_circle(tmp_path, monkeypatch):
    # the check above must be able to fail: a two-module circle through a function-local import
    pkg = tmp_path / "circ"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from circ import b\n")
    (pkg / "b.py").write_text("def f():\n    from circ import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert circles(grimp.build_graph("circ", cache_dir=None)) == [["circ.a", "circ.b"]]


def test_modules_stay_small_and_core_has_few_top_modules():
    big = {str(p.relative_to(ROOT)): n for top in ("core", "tui") for p in (ROOT / top).rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 450}
    assert big == {}
    top = sorted(p.name for p in (ROOT / "core").glob("*.py"))
    assert len(top) <= 7, top


def test_what_the_facades_load_lazily_never_import_a_facade():
    # core.api and core.hook_api re-export names through PEP 562 tables (importlib: grimp does
    # not see those edges), so a module in a table importing a facade would be a circle no
    # check sees
    import core.api
    import core.hook_api

    graph = grimp.build_graph("core", "tui", include_external_packages=False, cache_dir=None)
    for table in (core.api.REEXPORTED, core.hook_api.HOOK_EXPORTS):
        modules = {module for module, _ in table.values()}
        assert modules <= set(graph.modules), modules - set(graph.modules)
        back = sorted((m, facade) for m in modules for facade in ("core.api", "core.hook_api")
                      if graph.chain_exists(importer=m, imported=facade))
        assert back == []


def test_every_lazily_exported_name_resolves():
    # a table row naming a module or attribute that moved fails here, not in a user's hook
    import core.api
    import core.hook_api

    for facade, table in ((core.api, core.api.REEXPORTED), (core.hook_api, core.hook_api.HOOK_EXPORTS)):
        missing = [name for name in table if getattr(facade, name, None) is None]
        assert missing == [], (facade.__name__, missing)
