"""The first-principles checker on real sentences, Chinese and English: what
must fail (with the offending span as evidence) and what must pass; term lists
tuned through SOUL.md; the loop's structured premises, hypotheses, decisions;
`ars check` as a person runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.loop.checker import SoulError, check_decision, check_hypothesis, check_premise, check_text, load_soul
from core.loop.models import Hypothesis, Premise, ProposedAction
from conftest import env_without_ars

ROOT = Path(__file__).resolve().parents[3]


def verdicts(text: str) -> dict[str, tuple[str, list[str]]]:
    r = check_text(text)
    return {v.rule: (v.verdict, [e.text for e in v.evidence]) for v in r.verdicts}


# -- sentences that must fail, with the rule and the evidence span ----------------------
@pytest.mark.parametrize("text, rule, span", [
    # the article's own example of reasoning that is intercepted
    ("显然，这个问题的解决方案是重启数据库。", "decompose", "显然"),
    ("大家都这么说，所以肯定没错。", "decompose", "大家都这么说"),
    ("毫无疑问，Neo4j 比 SQLite 快。", "decompose", "毫无疑问"),
    ("众所周知，向量数据库能解决记忆问题。", "decompose", "众所周知"),
    ("Obviously the cache is the bottleneck, so we should drop it.", "decompose", "Obviously"),
    ("Everyone knows Neo4j is slow; therefore we use SQLite.", "decompose", "Everyone knows"),
    ("Of course the migration is safe to run on Friday.", "decompose", "Of course"),
    ("This clearly needs a rewrite in Rust.", "decompose", "clearly"),
    # no premise stated at all
    ("The recall tier should be rewritten.", "doubt", "The recall tier should be rewritten."),
    ("这个方案最好。", "doubt", "这个方案最好。"),
    # a conclusion that cites no premise
    ("The deploy failed. So we roll back.", "rebuild", "So we roll back."),
    ("所以我们应该换掉 Neo4j。", "rebuild", "所以我们应该换掉 Neo4j。"),
    ("We should ship today, therefore the tests can wait.", "rebuild", "therefore the tests can wait."),
    # a step that jumps
    ("根据日志，连接超时了，所以显然是网络问题。", "no_skip", "所以显然"),
    ("Given the logs, therefore obviously the disk is full.", "no_skip", "therefore obviously"),
    ("不难看出，这个方案最好。", "no_skip", "不难看出"),
    ("Based on the trace, it is easy to see that the lock is the culprit.", "no_skip", "it is easy to see"),
])
def test_sentences_that_must_fail(text, rule, span):
    r = check_text(text)
    assert not r.passed
    v = next(v for v in r.verdicts if v.rule == rule)
    assert v.verdict == "fail", (rule, v)
    assert any(e.text == span for e in v.evidence), [e.text for e in v.evidence]
    for e in v.evidence:  # offsets point at the span in the checked text
        if e.start >= 0:
            assert text[e.start:e.end].strip() == e.text


@pytest.mark.parametrize("text", [
    "根据昨天的日志，Neo4j 在 10:02 断开了连接，所以召回退回到了 SQLite。",
    "因为账本在返回前 fsync，所以已确认的事件在崩溃后仍在。",
    "观察到 p95 延迟是 40 毫秒；因此 250 毫秒的期限够用。",
    "假设用户只用中文提问，那么 CJK 二元切分就足以覆盖查询。",
    "Because the ledger is fsynced before append returns, an acknowledged event survives a crash.",
    "We measured p95 at 40 ms, so that the deadline of 250 ms holds.",
    "Given that the breaker opened at 10:02, recall answered from SQLite; therefore the outage cost no data.",
    "The logs show three timeouts in the Bolt handshake, so we pin the driver version.",
    "According to the runbook, staging restarts take 30 s.",
    "SOUL.md 规定，根据第四条，推理中不用“显然”这个词。",  # a quoted term is a mention, not a use
])
def test_sentences_that_must_pass(text):
    r = check_text(text)
    assert r.passed, [(v.rule, v.reason, [e.text for e in v.evidence]) for v in r.failures()]
    assert [v.verdict for v in r.verdicts] == ["pass"] * 4


def test_so_is_a_conclusion_only_at_a_clause_start():
    assert verdicts("We measured it, so we keep the index.")["rebuild"][0] == "pass"
    assert verdicts("The index is so fast. So we keep it.")["rebuild"] == ("fail", ["So we keep it."])
    assert verdicts("Nothing failed so far.")["rebuild"][0] == "pass"  # not a conclusion at all


def test_premise_later_in_the_same_sentence_counts():
    assert verdicts("所以回滚，因为新版本的召回率下降了。")["rebuild"][0] == "pass"


def test_titles_come_from_soul_md():
    titles = [v.title for v in check_text("x").verdicts]
    assert titles == ["拆解到底 — Decompose to atoms", "怀疑一切 — Doubt what is unproven",
                      "重建路径 — Rebuild a traceable path", "拒绝跳步 — No skipped steps"]


# -- SOUL.md is where a person tunes the checker -----------------------------------------
def test_editing_soul_md_tunes_the_checker(tmp_path, monkeypatch):
    soul = tmp_path / "SOUL.md"
    text = (ROOT / "SOUL.md").read_text(encoding="utf-8")
    text = text.replace("- 显然\n", "").replace("## Vague certainty terms (rule 1)\n",
                                                  "## Vague certainty terms (rule 1)\n- 无需验证\n- trust me\n")
    soul.write_text(text, encoding="utf-8")
    monkeypatch.setenv("ARS_SOUL_PATH", str(soul))
    assert verdicts("显然如此，根据日志。")["decompose"][0] == "pass"  # removed from the list
    assert verdicts("根据日志，这一步无需验证。")["decompose"] == ("fail", ["无需验证"])
    assert verdicts("Because I said so, trust me.")["decompose"] == ("fail", ["trust me"])
    # an edit applies to the next check, no restart
    soul.write_text(text.replace("- trust me\n", ""), encoding="utf-8")
    os.utime(soul, ns=(1, 1))
    assert verdicts("Because I said so, trust me.")["decompose"][0] == "pass"


def test_a_missing_section_is_an_error_naming_it(tmp_path, monkeypatch):
    soul = tmp_path / "SOUL.md"
    text = (ROOT / "SOUL.md").read_text(encoding="utf-8")
    start = text.index("## Premise markers")
    end = text.index("## Conclusion markers")
    soul.write_text(text[:start] + text[end:], encoding="utf-8")
    monkeypatch.setenv("ARS_SOUL_PATH", str(soul))
    with pytest.raises(SoulError, match="Premise markers"):
        check_text("x")
    monkeypatch.setenv("ARS_SOUL_PATH", str(tmp_path / "nope.md"))
    with pytest.raises(SoulError, match="ARS_SOUL_PATH"):
        check_text("x")


def test_soul_md_is_found_from_the_installation_not_the_working_directory(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "ARS_SOUL_PATH"}
    env["PYTHONPATH"] = str(ROOT)
    code = "from core.loop.checker import load_soul; s = load_soul(); print(s.path)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    assert Path(out) == ROOT / "SOUL.md"


def test_soul_md_keeps_the_four_rules_in_both_languages():
    soul = load_soul(ROOT / "SOUL.md")
    text = (ROOT / "SOUL.md").read_text(encoding="utf-8")
    for zh in ("拆解到底", "怀疑一切", "重建路径", "拒绝跳步"):
        assert zh in text
    vague = {t.text for t in soul.lists["vague"]}
    for term in ("显然", "必然", "肯定", "毫无疑问", "众所周知", "大家都这么说", "obviously", "clearly",
                 "certainly", "of course", "everyone knows"):
        assert term in vague


# -- the loop's structured reasoning -------------------------------------------------------
def test_structured_premises_hypotheses_and_decisions():
    p1 = Premise(id="P1", text="recall returned 3 memories about the outage", source="recalled", ref="ep:1")
    p2 = Premise(id="P2", text="显然用户最在意的是隐私", source="assumed")
    assert check_premise(p1).passed
    bad = check_premise(p2)
    assert [v.rule for v in bad.failures()] == ["decompose"]
    assert bad.failures()[0].evidence[0].text == "显然"

    h_ok = Hypothesis(id="H1", text="the breaker opens too late", because=["P1"])
    h_jump = Hypothesis(id="H2", text="the disk is full", because=["P9"])
    h_none = Hypothesis(id="H3", text="rewrite the tier", because=[])
    assert check_hypothesis(h_ok, ["P1", "P2"]).passed
    jump = check_hypothesis(h_jump, ["P1", "P2"])
    assert {v.rule for v in jump.failures()} >= {"no_skip"}
    assert any(e.text == "P9" for v in jump.failures() for e in v.evidence)
    none = check_hypothesis(h_none, ["P1"])
    assert {v.rule for v in none.failures()} == {"doubt", "rebuild"}

    good = ProposedAction(tool="shell", args={"cmd": "make test"}, rationale="Because H1 holds, run the tests.",
                          because=["H1"])
    empty = ProposedAction(tool="shell", args={"cmd": "rm -rf build"}, rationale="", because=[])
    assert check_decision(good, ["P1", "H1"]).passed
    r = check_decision(empty, ["P1", "H1"])
    assert {v.rule for v in r.failures()} == {"doubt", "rebuild"}
    feedback = r.feedback()  # what the LLM policy is sent back
    assert "怀疑一切" in feedback and "重建路径" in feedback and "拆解到底" not in feedback


# -- ars check ---------------------------------------------------------------------------------
def ars_check(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = env_without_ars()
    return subprocess.run([sys.executable, "-m", "tui.cli.main", "check", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60)


def test_ars_check_cli():
    r = ars_check("显然，这个问题的解决方案是重启数据库。", "--json")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["passed"] is False
    rule1 = next(v for v in data["verdicts"] if v["rule"] == "decompose")
    assert rule1["verdict"] == "fail" and rule1["evidence"][0]["text"] == "显然"

    r = ars_check("-", stdin="Because the ledger is fsynced, an acknowledged event survives a crash.\n")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout

    r = ars_check(stdin="Obviously it works.")
    assert r.returncode == 1 and "FAIL" in r.stdout and "Obviously" in r.stdout

    r = ars_check("   ")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "nothing to check" in r.stderr


def test_checker_module_loads_no_ui_and_no_openai():
    code = ("import sys, core.loop.checker, core.loop.engine, core.loop.rehydrate\n"
            "print(' '.join(m.split('.')[0] for m in sys.modules))")
    mods = set(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.split())
    assert not mods & {"textual", "typer", "rich", "tui", "openai"}
