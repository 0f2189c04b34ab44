"""The four verdicts a person gives a waiting loop, as ``ARS`` methods (``ARS`` inherits them:
core/api.py stays the facade and under its size); each is ``loop_decide`` with its kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.loop.models import LoopState


class LoopVerdicts:
    """Mixed into ``ARS``, whose ``loop_decide`` each calls."""

    def loop_approve(self, loop_id: str, note: str = "", request_id: str | None = None,
                     resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "approve", note=note, request_id=request_id, resume=resume, signer=signer)

    def loop_reject(self, loop_id: str, reason: str, request_id: str | None = None,
                    resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "reject", note=reason, request_id=request_id, resume=resume, signer=signer)

    def loop_respond(self, loop_id: str, text: str, request_id: str | None = None,
                     resume: bool = True, signer: Any = None) -> "LoopState":
        return self.loop_decide(loop_id, "respond", note=text, request_id=request_id, resume=resume, signer=signer)

    def loop_edit(self, loop_id: str, args: "dict[str, Any]", note: str = "", request_id: str | None = None,
                  resume: bool = True, signer: Any = None) -> "LoopState":
        """Approve the proposed action with new arguments."""
        return self.loop_decide(loop_id, "edit", note=note, args=args, request_id=request_id, resume=resume,
                                signer=signer)
