"""The first two lines of a gated call's memory: what happened, in English and in Chinese.

A person asks about a call in their own words and language ("did the restart
finish", "was it approved", "重启完了没", "批准了吗"); recall matches words, so
the memory says it both ways: the decision (approved / 批准, rejected / 拒绝,
expired / 过期 …), whether it ran and finished (ran and finished / 已执行完成 …)
and, for the common verbs of a command, the Chinese word too (restart → 重启).
"""

from __future__ import annotations

import re
from typing import Callable

# verbs a held command is usually about, and how a Chinese speaker names them
ZH_VERBS = {
    "restart": "重启", "reboot": "重启", "reload": "重新加载", "upgrade": "升级", "update": "更新",
    "install": "安装", "uninstall": "卸载", "remove": "删除", "rm": "删除", "delete": "删除", "drop": "删除",
    "deploy": "部署", "publish": "发布", "release": "发布", "push": "推送", "start": "启动", "stop": "停止",
    "kill": "终止", "build": "构建", "migrate": "迁移", "backup": "备份", "restore": "恢复", "reset": "重置",
    "send": "发送", "pay": "支付", "transfer": "转账", "merge": "合并", "commit": "提交", "curl": "请求",
    "chmod": "修改权限", "mv": "移动", "write": "写入", "edit": "修改",
}
_WORD_RE = re.compile(r"[A-Za-z]+")


def zh_words(command: str) -> str:
    """The Chinese words for the verbs ``command`` uses, once each, in order ("" for none)."""
    seen: list[str] = []
    for w in _WORD_RE.findall(command[:2000].lower()):
        zh = ZH_VERBS.get(w)
        if zh and zh not in seen:
            seen.append(zh)
    return "、".join(seen[:4])


def _short(text: str, width: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def headline(req, outcome: dict | None, local: Callable) -> tuple[str, str]:
    """(English line, Chinese line) for a decided request and its outcome, if any."""
    cmd = f"`{_short(req.detail or req.summary)}`"
    zh = zh_words(req.detail or req.summary)
    zcmd = f"{cmd}（{zh}）" if zh else cmd
    d = req.decision
    when = local(d.decided_at) if d is not None else local(req.created_at)
    note = f" ({_short(d.note, 200)})" if d is not None and d.note else ""
    ran_en, ran_zh = _ran(outcome, zh.split("、")[0] if zh else "")
    status = req.status
    if status == "approved":
        who = "The supervisor" if d is not None and d.is_signed else "A person"
        zwho = "监督者" if d is not None and d.is_signed else "有人"
        return (f"{who} approved {cmd} at {when}{note}; {ran_en or 'it was allowed to run; no outcome reported yet'}.",
                f"{zwho}于 {when} 批准（同意）了 {zcmd}；{ran_zh or '已批准执行，执行结果尚未报告'}。")
    if status == "rejected":
        return (f"The supervisor rejected {cmd} at {when}{note}; it never ran.",
                f"监督者于 {when} 拒绝（驳回）了 {zcmd}{note}；没有执行。")
    if status == "answered":
        return (f"The supervisor answered instead of approving {cmd} at {when}{note}; it never ran.",
                f"监督者于 {when} 回复了 {zcmd} 的请求但没有批准{note}；没有执行。")
    if status == "expired":
        return (f"Nobody approved {cmd} in time: the request expired at {when}{note}; "
                f"{ran_en or 'it never ran'}.",
                f"无人及时批准 {zcmd}：请求于 {when} 过期（超时）；{ran_zh or '没有执行'}。")
    if status == "withdrawn":
        return (f"{cmd} was not decided in the ARS inbox (withdrawn at {when}{note}); "
                f"{ran_en or 'no outcome reported'}.",
                f"{zcmd} 没有在 ARS 收件箱中决定（于 {when} 撤回）；{ran_zh or '没有执行结果'}。")
    return (f"{cmd} waits for the supervisor's decision since {when}.",
            f"{zcmd} 自 {when} 起等待监督者批准。")


def _ran(outcome: dict | None, verb: str = "") -> tuple[str, str]:
    """How it ended, both ways; ``verb``: the command's Chinese verb ("重启完了" is how one asks)."""
    if not outcome:
        return "", ""
    code = outcome.get("exit")
    first = _short(str(outcome.get("output") or "").split("\n", 1)[0], 120)
    tail_en = f": {first}" if first else ""
    if not outcome.get("ran"):
        return "it did not run", "没有执行"
    if outcome.get("ok"):
        exit_en = f"exit {code}" if code is not None else "it succeeded"
        return (f"it ran and finished (done), result: {exit_en}{tail_en}",
                f"已执行完成（{verb or '执行'}完了，成功）" + (f"，退出码 {code}" if code is not None else ""))
    exit_en = f"exit {code}" if code is not None else str(outcome.get("status") or "error")
    return (f"it ran and failed, result: {exit_en}{tail_en}",
            f"已执行但失败了（{verb or '执行'}没有成功）" + (f"，退出码 {code}" if code is not None else ""))
