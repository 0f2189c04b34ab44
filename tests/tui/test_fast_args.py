"""The fast paths' argument grammar: plain forms parse, anything else goes to typer (None)."""

from tui.fast_args import parse

OPTS = ("-k", "--state", "--tiers")


def test_plain_forms_parse_into_args_options_and_flags():
    got = parse(["why did it fail", "-k", "5", "--state=/s", "--json"], options=OPTS, flags=("--json",))
    assert (got.args, got.options, got.flags) == (["why did it fail"], {"-k": "5", "--state": "/s"}, {"--json"})


def test_after_double_dash_and_a_lone_dash_everything_is_positional():
    got = parse(["--json", "--", "-k", "--state"], options=OPTS, flags=("--json",))
    assert got.args == ["-k", "--state"] and got.options == {}
    assert parse(["-"], options=OPTS).args == ["-"]


def test_what_typer_reads_otherwise_is_left_to_typer():
    assert parse(["q", "-k=5"], options=OPTS) is None  # typer reads -k=5 differently
    assert parse(["q", "-k", "1", "-k", "2"], options=OPTS) is None  # repeated
    assert parse(["q", "--state", "--json"], options=OPTS, flags=("--json",)) is None  # value looks like an option
    assert parse(["q", "--help"], options=OPTS) is None
    assert parse(["q", "-k"], options=OPTS) is None  # no value
