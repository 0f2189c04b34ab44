"""Tokeniser and snippets."""

from hypothesis import given, settings, strategies as st

from core.memory.text import index_terms, query_terms, snippet, tokenize


def test_article_example():
    assert tokenize("第一性原理") == ["第一性原理", "第一", "一性", "性原", "原理"]


def test_single_cjk_character_is_a_unigram():
    assert tokenize("我") == ["我"]
    assert index_terms("我") == ["我"]


def test_mixed_text_lowercases_english_and_keeps_cjk_runs():
    toks = tokenize("Neo4j 的 CJK 分析器 for Recall")
    assert toks == ["neo4j", "的", "cjk", "分析器", "分析", "析器", "for", "recall"]


def test_query_drops_stop_words_but_not_when_only_stop_words():
    assert tokenize("what is the Neo4j status", query=True) == ["neo4j", "status"]
    assert tokenize("what is the", query=True) == ["what", "is", "the"]
    # documents keep stop words
    assert "the" in tokenize("the Neo4j status")


def test_emoji_and_punctuation_are_not_tokens():
    assert tokenize("🚀🔥 ship it!!! 🎉") == ["ship", "it"]
    assert tokenize("🚀") == []


def test_empty_and_whitespace():
    assert tokenize("") == []
    assert tokenize(" \n\t ") == []
    assert index_terms("") == []


def test_one_megabyte_string():
    text = ("Neo4j 召回 recall 第一性原理 " * 40000)[: 1 << 20]
    toks = tokenize(text)
    assert toks[:2] == ["neo4j", "召回"]
    assert len(index_terms(text)) > 100_000


def test_index_terms_stem_english_and_bigram_cjk():
    assert index_terms("Painted paintings") == ["paint", "paint"]
    assert index_terms("第一性原理") == ["第一", "一性", "性原", "原理"]
    # a query's whole CJK run is not an index term; its bigrams are
    assert query_terms(tokenize("第一性原理", query=True)) == ["第一", "一性", "性原", "原理"]


def test_snippet_centres_on_the_matches():
    text = "filler " * 200 + "the neo4j server went down and 召回 fell back to sqlite " + "tail " * 200
    s = snippet(text, ["neo4j", "召回"])
    assert "neo4j" in s and "召回" in s
    assert len(s) <= 162


def test_snippet_of_short_text_is_the_text():
    assert snippet("short  text\nhere", ["x"]) == "short text here"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_tokens_are_clean_and_unique(text):
    toks = tokenize(text)
    assert len(toks) == len(set(toks))
    for t in toks:
        assert t and t == t.strip() and " " not in t
    for term in index_terms(text):
        assert term and " " not in term


def test_query_skips_function_bigrams_but_documents_keep_them():
    assert tokenize("我要去看魔术表演", query=True) == ["我要去看魔术表演", "魔术", "术表", "表演"]
    assert "我要" in tokenize("我要去看魔术表演")
    assert "我要" in index_terms("我要去看魔术表演")


def test_query_of_only_function_words_still_searches():
    assert tokenize("你是谁", query=True) == ["你是谁", "你是", "是谁"]
