"""Policies: who orients, decides and verifies inside the loop; one module a policy.

* ``offline.OfflinePolicy`` follows the goal file's ``script`` (DESIGN.md), one step
  an iteration: deterministic, for the tests and the demo. A goal with no
  script gets a two-step plan that is honest about what it cannot do: recall
  what memory holds about the goal, then ask a person what to do.
* ``llm.LlmPolicy`` asks an OpenAI-compatible chat model through tool calls:
  ``orient`` (premises with sources, hypotheses citing them), then one of the
  registered tools (or ``ask_human``) with a rationale citing ids, then
  ``verify``. When the first-principles check fails, the failure is sent back
  once and the revised answer is used (both are recorded).

A policy is rebuilt from the ``LoopState`` on every run (the cursor and all
context live in the state), so a loop resumes in another process unchanged.
``protocol`` holds what every policy answers and the helpers they share.
"""
