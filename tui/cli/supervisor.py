"""``ars supervisor`` (the key that signs decisions) and ``ars gate`` (the signed policy),
and how every deciding command gets the supervisor's passphrase.

The passphrase comes from the supervisor's terminal (``/dev/tty``, never
stdin: an agent's Bash tool has a stdin but no terminal of the supervisor's),
or from an open file descriptor given with ``--passphrase-fd N`` (as gpg
does: for the supervisor's own scripts). With neither, a deciding command
says so in one line and exits 2; nothing is decided.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Optional

import typer

from tui.cli.common import JsonTextOpt as JsonOpt
from tui.cli.common import StateOpt, err, fail, open_ars, out


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)

supervisor_app = typer.Typer(no_args_is_help=True,
                             help="The supervisor's key: decisions an agent cannot make for itself.")
gate_app = typer.Typer(no_args_is_help=True, help="The gate policy (signed by the supervisor): which agent "
                                                  "tool calls pass, and which wait for a person.")

PassFdOpt = Annotated[Optional[int], typer.Option(
    "--passphrase-fd", help="read the supervisor's passphrase from this open file descriptor (first line; read "
                            "at once and closed), instead of asking on the terminal")]


def read_passphrase(fd: int | None, prompt: str, *, confirm: bool = False, header: str = "") -> bytearray:
    """The passphrase from ``fd`` (its next line: tui/cli/passphrase.py read it at the start),
    else asked on the terminal after ``header``. A bytearray: wipe it once used."""
    from tui.cli import passphrase as pp

    try:
        if fd is not None:
            if fd < 0:
                fail(f"--passphrase-fd {fd}: give an open file descriptor number (e.g. 3 with 3<file)")
            return pp.next_line(fd)
        return pp.from_tty(header, prompt, confirm=confirm)
    except pp.PassphraseProblem as exc:
        fail(str(exc))


def signer_for(ars, fd: int | None, what: str, request=None):
    """An unlocked signer when the state directory has a supervisor key (asking for its
    passphrase, with the real prompt's head: the key, ``what``, and for ``request`` exactly
    what runs and its hash), else None: the decision is recorded unverified."""
    from core.api import BadPassphrase, SigningError, has_key, wipe
    from tui.cli.passphrase import prompt_header

    if not has_key(ars.state_dir):
        if fd is not None:
            fail("--passphrase-fd was given, but there is no supervisor key yet: run `ars supervisor init` first")
        return None  # unverified: ARS's own loops may act on it, no agent's hook will
    if request is not None:
        what = what.split(" (runs:")[0]  # the header says what runs, whole, with its hash
    passphrase = read_passphrase(fd, f"supervisor passphrase to {what}: ",
                                 header=prompt_header(ars.supervisor_fingerprint(), what, request))
    try:
        signer = ars.supervisor_unlock(passphrase)
    except (BadPassphrase, SigningError) as exc:
        fail(str(exc), 1)
    finally:
        wipe(passphrase)
    if signer.upgraded:
        err.print(f"the supervisor key file was upgraded from {signer.upgraded} to today's key derivation "
                  "(same key, same fingerprint)", highlight=False)
    return signer


# -- ars supervisor ----------------------------------------------------------------------------
@supervisor_app.command("init")
def supervisor_init(state: StateOpt = None, passphrase_fd: PassFdOpt = None,
                    rotate: Annotated[bool, typer.Option("--rotate", help="replace the existing key (asks for its "
                                                                          "passphrase first)")] = False,
                    as_json: JsonOpt = False) -> None:
    """Create the supervisor's signing key (Ed25519; the private half encrypted with a passphrase).
    With --passphrase-fd, the fd's first line is the passphrase (for --rotate: the current one,
    then the new one on the next line)."""
    from core.api import MIN_PASSPHRASE, SigningError, has_key, wipe
    from tui.cli.passphrase import prompt_header

    with open_ars(state, create=True) as ars:
        old = None
        if has_key(ars.state_dir):
            if not rotate:
                fail(f"a supervisor key already exists ({ars.supervisor_fingerprint()}): `ars supervisor show` "
                      "prints it; `ars supervisor init --rotate` replaces it")
            old = read_passphrase(passphrase_fd, "current supervisor passphrase: ",
                                  header=prompt_header(ars.supervisor_fingerprint(), "replace this key"))
            try:
                ars.supervisor_unlock(old)
            except SigningError as exc:
                wipe(old)
                fail(str(exc), 1)
        new = read_passphrase(passphrase_fd, f"new supervisor passphrase (at least {MIN_PASSPHRASE} characters): ",
                              confirm=passphrase_fd is None)
        try:
            fp = ars.supervisor_init(new, old_passphrase=old)
        except SigningError as exc:
            fail(str(exc), 2 if "characters" in str(exc) else 1)
        finally:
            wipe(new)
            wipe(old)
    if as_json:
        sys.stdout.write(json.dumps({"fingerprint": fp, "state_dir": str(ars.state_dir)}) + "\n")
        return
    out.print(f"supervisor key {fp}", highlight=False)
    out.print("decisions and the gate policy are signed with it. Pin it in each agent: "
              "`ars install claude-code` (again, if it was installed before).", highlight=False)


@supervisor_app.command("show")
def supervisor_show(state: StateOpt = None, as_json: JsonOpt = False) -> None:
    """The supervisor key's fingerprint (what agents' hooks pin)."""

    with open_ars(state) as ars:
        fp = ars.supervisor_fingerprint()
    if as_json:
        sys.stdout.write(json.dumps({"fingerprint": fp}) + "\n")
        return
    if fp is None:
        out.print("no supervisor key: decisions are unverified and no agent's call is allowed by one "
                  "(`ars supervisor init` sets it up)", highlight=False)
        raise typer.Exit(1)
    out.print(fp, highlight=False)


# -- ars gate ------------------------------------------------------------------------------------
@gate_app.command("show")
def gate_show(state: StateOpt = None,
              pin: Annotated[Optional[str], typer.Option("--pin", help="check against this fingerprint "
                                                                       "(default: the state's key)")] = None) -> None:
    """The policy in force (signed gate.toml, or the built-in defaults and why)."""
    from core.api import gate_policy as policy

    with open_ars(state) as ars:
        fp = pin or ars.supervisor_fingerprint()
        gate, why = policy.load(ars.state_dir, fp)
        text = policy.current_text(ars.state_dir) if not why else None
    if why:
        out.print(f"# {why}", highlight=False, soft_wrap=True)
        good = policy.good_text(ars.state_dir) if why.endswith(policy.LAST_GOOD) else None
        if good is not None:
            out.print(f"# in force: the last good policy, version {policy.seen_version(ars.state_dir)}",
                      highlight=False)
            out.print(good, highlight=False, markup=False)
            return
        out.print("# in force: the built-in defaults", highlight=False)
        from core.api import gate_rules as gate_mod

        out.print(gate_mod.DEFAULT_TOML, highlight=False, markup=False)
        return
    path, _ = policy.paths(ars.state_dir)
    if not os.path.exists(path):
        out.print("# no gate.toml: the built-in defaults are in force (`ars gate edit` to widen them)",
                  highlight=False)
    else:
        out.print(f"# {path}: version {policy.seen_version(ars.state_dir)}, signed by {fp}", highlight=False,
                  soft_wrap=True)
    from core.api import gate_rules as gate_mod

    out.print(text if os.path.exists(path) else gate_mod.DEFAULT_TOML, highlight=False, markup=False)


def _sign(ars, text: str, fd: int | None) -> str:
    from core.api import gate_policy as policy
    from core.api import has_key

    if not has_key(ars.state_dir):
        fail("the gate policy is signed by the supervisor's key, and there is none: run `ars supervisor init` "
              "first")
    from core.api import gate_rules as gate_mod

    try:
        gate_mod.Gate.parse(text, "gate.toml")
    except gate_mod.GateError as exc:
        fail(f"{exc}; nothing was saved")
    signer = signer_for(ars, fd, "sign the gate policy")
    return policy.sign(ars.state_dir, text, signer)


@gate_app.command("edit")
def gate_edit(state: StateOpt = None, passphrase_fd: PassFdOpt = None) -> None:
    """Open the policy in $EDITOR; on save it is checked and signed."""
    from core.api import gate_policy as policy

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with open_ars(state, create=True) as ars:
        before = policy.current_text(ars.state_dir)
        fd, tmp = tempfile.mkstemp(prefix="gate-", suffix=".toml")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(before)
            import shlex

            if subprocess.call(shlex.split(editor) + [tmp]) != 0:
                fail(f"{editor} exited with an error: nothing was saved", 1)
            with open(tmp, encoding="utf-8") as fh:
                after = fh.read()  # read once: what is shown below is what is signed, whatever the file does next
        finally:
            os.unlink(tmp)
        if after == before:
            out.print("nothing changed: nothing was signed", highlight=False)
            return
        _show_change(before, after, policy.next_version(ars.state_dir))
        path = _sign(ars, after, passphrase_fd)
    out.print(f"signed {path}", highlight=False)


def _show_change(before: str, after: str, version: int) -> None:
    """The final diff a person confirms with the passphrase: exactly the text that will be signed."""
    import difflib

    out.print(f"# the change to sign as gate policy version {version} (the passphrase confirms it; Ctrl-C "
              "cancels):", highlight=False)
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), "in force", "to sign", lineterm="", n=2):
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
        out.print(f"[{style}]{_esc(line)}[/]" if style else _esc(line), highlight=False, soft_wrap=True)


@gate_app.command("set")
def gate_set(file: Annotated[Path, typer.Argument(help="a gate policy (TOML) to check, sign and put in force")],
             state: StateOpt = None, passphrase_fd: PassFdOpt = None) -> None:
    """Check, sign and put in force a policy file (for scripts; `ars gate edit` for people)."""

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}")
    with open_ars(state, create=True) as ars:
        path = _sign(ars, text, passphrase_fd)
    out.print(f"signed {path}", highlight=False)
