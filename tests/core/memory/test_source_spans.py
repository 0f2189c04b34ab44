"""The registry's spans: packed columns that read back as the spans ingestion wrote."""

import pytest

from core.memory.sources import PackedIds, SourceFile, SourceRegistry


def test_packed_ids_read_back_each_id_including_empty_and_non_ascii():
    ids = ["claude-code:s1:0", "", "会话:二:3", "x" * 300, "e\u0301"]
    packed = PackedIds(ids)
    assert len(packed) == 5
    assert list(packed) == ids
    assert packed[-1] == ids[-1] and packed[1:3] == ids[1:3]
    with pytest.raises(IndexError):
        packed[5]


def test_spans_out_of_order_are_sorted_and_each_line_finds_its_episode():
    sf = SourceFile("/x", "episodes", [[10, 12, "c"], [1, 3, "a"], [4, 9, "b"], [4, 4, "a2"]])
    assert list(sf.spans) == [(1, 3, "a"), (4, 4, "a2"), (4, 9, "b"), (10, 12, "c")]
    assert [sf.episode_at(n) for n in (1, 3, 5, 9, 11, 13)] == ["a", "a", "b", "b", "c", None]


def test_a_registered_file_reads_back_from_disk(tmp_path):
    reg = SourceRegistry(tmp_path)
    spans = [(i * 2 + 1, i * 2 + 2, f"ep-{i}-é") for i in range(1000)]
    reg.register(tmp_path / "s.jsonl", "episodes", spans)
    got = SourceRegistry(tmp_path).files()[str((tmp_path / "s.jsonl").resolve())]
    assert list(got.spans) == spans
    assert got.episode_at(2000) == "ep-999-é" and got.episode_at(2001) is None
