"""SQLite tier: episodes plus an FTS5 index over pre-tokenised columns.

FTS5's ``unicode61`` tokenizer would keep a whole run of Chinese characters as
one token (the article's 0 % on a Chinese benchmark). We index ``index_text``
instead: stemmed English words and CJK bigrams separated by spaces, so every
token FTS5 sees is already a term. Queries are ORs of quoted terms: user text
never reaches MATCH unquoted, so ``"``, ``*``, ``NEAR(``, ``AND`` mean nothing.

Session context: the FTS row has a second column, ``context``, holding the
index terms of the episode's neighbours (``core/memory/context.py``: up to two
episodes either side in the same session, in time order), ranked by
``bm25(1, CONTEXT_WEIGHT)``. A question often names what the turns *around*
an answer talk about; on LoCoMo dev this column took the tier from 68 to 80
R@10. A neighbour that arrives later rewrites the context of the episodes
around it in the same transaction.

One job per module: schema.py (tables, upgrades), write.py (upsert, forget,
session context), search.py (MATCH planning, scoring, lookup), store.py
(``SqliteStore``: connections and plain reads, put together from the others).
"""

from core.memory.tiers.sqlite.schema import SCHEMA_VERSION
from core.memory.tiers.sqlite.store import SqliteStore

__all__ = ["SCHEMA_VERSION", "SqliteStore"]
