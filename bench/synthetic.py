"""A seeded synthetic corpus of agent-session episodes, for the benchmarks.

Realistic enough that index statistics behave like real transcripts:

* English words follow a Zipf-like distribution over a few thousand words
  (function words at the head, real technical and everyday words in the body,
  identifier-like coinages in the long tail), so document frequencies range
  from "in nearly every episode" to "in a handful".
* Chinese text is built from a few hundred real phrases with Zipf weights and
  joined without spaces, so CJK bigrams straddle phrase boundaries as in real
  writing.
* Entities (persons, tools, projects, files, technologies; Chinese and English
  person names) come from a shared pool with skewed popularity, are written
  into the text and listed in ``entities``; episodes of one session are chained
  through ``meta.prev`` (Neo4j's ``FOLLOWED_BY``).
* Episodes are 200 to 2,000 characters, timestamps spread over one year,
  sources among openclaw / claude-code / hermes / jsonl.

Everything is a pure function of the seed (no set iteration, no hash order):
the same ``(n, seed)`` gives byte-identical files on every machine.

    from synthetic import write_corpus, make_queries
    n = write_corpus(Path("episodes.jsonl"), 10_000, seed=7)
    queries = make_queries(200, seed=7, corpus=Path("episodes.jsonl"))
"""

from __future__ import annotations

import itertools
import json
import math
import random
from bisect import bisect_left
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator, Sequence

# -- vocabulary ------------------------------------------------------------------
# Head: English function words, most frequent first (their share of running text
# is what makes a tokeniser's stop list and BM25's idf matter).
FUNCTION_WORDS = """the of and to a in is it that for you was on with as i this be at are
have not but we they or from by an what all if can were there will my so your which
when one their has do would about out up them then more could no he she his her our
me been just some also into how any only other than now its these should may did
very here because after where over before those each why both while through most
such between same does being still under again few own off until against""".split()

# Body: everyday and technical words, roughly in order of how often an agent
# transcript uses them.
COMMON_WORDS = """file run test error use need fix code change add check make work see get
let try update now new build look first time call function return value data
read write line output input result issue problem step next command path config
start stop server client request response query index search memory store
cache session user agent model message tool task loop plan goal state status
version branch commit merge push pull review diff patch release deploy install
package module import class method object type field list dict string number
default option flag argument parameter variable log logs debug trace warning fail
failed failure pass passed success retry timeout deadline latency slow fast
database table column row schema migration record event ledger cursor sync
worker thread process queue job batch stream buffer chunk offset limit count
size length format parse parser token tokens text word words phrase language
chinese english score rank ranking recall precision benchmark metric measure
result results report summary note notes doc docs readme guide example sample
project repo repository folder directory script scripts shell terminal window
screen dashboard view panel table chart graph node edge relation entity entities
topic topics source sources episode episodes history checkpoint replay fork
approve reject respond question answer reply prompt context window budget cost
price money hour day week month year today yesterday tomorrow morning evening
night weekend meeting call email chat team friend family home office travel
trip flight hotel dinner lunch coffee book movie music song game sport run walk
health doctor sleep weather rain sun city park car bus train ticket plan idea
think know want like feel remember forget learn teach help ask tell show give
take keep find lose open close save load send receive wait finish begin end
good bad better best worse great small large big long short high low old new
right wrong true false sure maybe probably actually really already almost
always never often sometimes usually quickly slowly carefully exactly simply
network socket port host address connection driver protocol bolt http https
json yaml toml csv markdown html css javascript typescript python rust golang
java kotlin swift sql cypher regex unicode utf encoding bytes binary hash key
secret password token auth login logout permission role admin access policy
rule principle first second third last final early late quick detailed
container image volume mount docker compose kubernetes pod cluster deploy
service endpoint route handler middleware router controller template render
component widget button input form modal dialog menu sidebar header footer
style theme color font layout grid flex margin padding border shadow animation
pytest unittest fixture mock stub assert coverage lint format typecheck ci
pipeline workflow action runner artifact cache dependency lockfile wheel
compile compiler runtime interpreter memory heap stack garbage leak profile
profiler benchmark flamegraph cpu core thread lock mutex race deadlock atomic
transaction commit rollback isolation consistency durability replica backup
restore snapshot shard partition replication leader follower election quorum
vector embedding similarity cosine neighbor cluster centroid dimension
fulltext analyzer lucene bigram unigram stemmer stopword tokenizer bm25 idf tf
weight boost decay recency freshness relevance fusion merge dedupe collapse
outage incident alert pager oncall postmortem root cause mitigation rollback
breaker circuit probe cooldown health liveness readiness heartbeat ping
customer product feature roadmap milestone sprint estimate priority blocker
design proposal decision tradeoff constraint requirement spec contract api
interface protocol implementation refactor cleanup rename move delete remove
archive migrate upgrade downgrade pin bump vendor fork clone mirror fetch
birthday party gift vacation beach mountain hiking camping photo painting
garden cooking recipe bread cake tea wine running yoga gym swim bike
concert guitar piano novel poem story article essay podcast video stream
school class exam homework lesson course degree thesis research paper
hospital medicine appointment insurance tax bill rent salary bonus budget
apartment house room kitchen desk chair laptop phone tablet monitor keyboard
mouse headphone charger cable battery screen camera printer router wifi
""".split()

# Tail syllables: identifier-like coinages (function names, jargon, typos) that
# give real transcripts their long tail of rare terms.
_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "br", "cr", "dr", "gr", "pl", "pr", "sh", "st", "th", "tr"]
_NUCLEI = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ou"]
_CODAS = ["", "", "", "", "", "l", "m", "n", "r", "s", "t", "x", "ng", "nd", "st"]
TAIL_SIZE = 3200
ZIPF_S = 1.05

# Chinese: real phrases (technical and everyday), most frequent first, and the
# particles that glue them into sentences.
ZH_PHRASES = """我们 这个 问题 需要 可以 已经 然后 因为 所以 但是 如果 现在 今天 明天 昨天
数据 数据库 索引 查询 检索 记忆 会话 代理 模型 工具 任务 目标 计划 状态 结果 错误 日志
测试 部署 服务器 客户端 请求 响应 超时 延迟 重试 失败 成功 修复 更新 提交 合并 分支 版本
配置 参数 文件 目录 脚本 命令 终端 界面 仪表盘 表格 图谱 节点 关系 实体 主题 来源 片段
历史 检查点 回放 分叉 批准 拒绝 回复 问题单 上下文 预算 成本 第一性原理 假设 前提 验证
记录 观察 判断 决定 执行 熔断器 探测 冷却 健康检查 心跳 断线 恢复 备份 快照 迁移 升级
中文 英文 分词 二元组 全文索引 倒排 排序 召回率 准确率 基准 指标 性能 内存 线程 进程
队列 批量 缓存 连接 驱动 协议 端口 地址 网络 安全 密码 权限 用户 团队 同事 朋友 家人
会议 邮件 消息 周末 旅行 航班 酒店 晚饭 午饭 咖啡 电影 音乐 运动 跑步 健身 睡觉 天气
下雨 城市 公园 火车 生日 礼物 假期 海边 爬山 露营 照片 画画 花园 做饭 面包 蛋糕 喝茶
医生 医院 看病 保险 房租 工资 公寓 厨房 电脑 手机 键盘 耳机 电池 相机 打印机 路由器
学习 课程 考试 论文 研究 文章 播客 视频 小说 故事 音乐会 吉他 钢琴 读书 写作 讨论
产品 功能 路线图 里程碑 优先级 阻塞 设计 方案 决策 权衡 约束 需求 接口 实现 重构 清理
事故 告警 值班 复盘 根因 缓解 回滚 容器 镜像 集群 流水线 构建 依赖 编译 运行时 分析
向量 嵌入 相似度 聚类 召回 融合 去重 新鲜度 相关性 权重 衰减 评分 排名 候选 截断
一下 一起 一些 一直 还是 或者 而且 不过 其实 应该 可能 比较 非常 特别 马上 终于 突然
""".split()
ZH_PARTICLES = "的 了 是 在 和 也 就 都 要 有 把 被 给 让 对 从 到 还 又 很 吗 呢 吧 啊".split()
ZH_ENDINGS = ["。", "。", "，", "！", "？", "；"]

# -- entities ------------------------------------------------------------------------
PERSONS = """Alice Chen|Bob Martin|Carol Diaz|David Kim|Emma Wilson|Frank Liu|Grace Park|Henry Zhao
|Ivy Nakamura|Jack Brown|Karen Lopez|Leo Rossi|Mia Schmidt|Noah Patel|Olivia Wang|Peter Novak
|Quinn Taylor|Rosa Alvarez|Sam Okafor|Tina Huang|Uma Singh|Victor Petrov|Wendy Xu|Yusuf Demir
|Zoe Fischer|张伟|王芳|李娜|刘洋|陈静|杨帆|赵磊|黄晓明|周杰|吴敏|徐丽|孙浩|马超|朱琳|胡军|郭婷
|何平|高远|林晨|罗刚|郑爽|梁宇|谢娜|宋佳|唐亮|韩雪|冯涛|董洁|萧然|程明""".replace("\n", "").split("|")
TOOLS = """ripgrep|pytest|docker|git|uv|pip|npm|cargo|make|tmux|neovim|vscode|jq|curl|httpie
|sqlite3|psql|cypher-shell|kubectl|helm|terraform|ansible|grafana|prometheus|sentry|jira
|slack|notion|obsidian|figma|pyinstrument|py-spy|hyperfine|valgrind|strace|gdb|black|ruff|mypy
|textual|typer|rich|openclaw|hermes|claude-code""".replace("\n", "").split("|")
PROJECTS = """ars|openclaw-gateway|hermes-agent|memory-bridge|loop-engine|dashboard-v2|ledger-sync
|recall-bench|cjk-tokenizer|neo4j-backfill|billing-service|search-api|mobile-app|data-pipeline
|infra-k8s|docs-site|onboarding-flow|payments|analytics|notification-hub|记忆系统|知识图谱项目
|智能助手|数据平台|搜索服务|监控告警|移动端重构|账单系统|推荐引擎|客服机器人""".replace("\n", "").split("|")
FILES = """core/recall.py|core/scoring.py|core/text.py|core/config.py|core/ledger.py|core/sync.py
|core/tiers/neo4j_tier.py|core/tiers/sqlite_tier.py|core/tiers/files_tier.py|core/breaker.py
|core/loop/engine.py|core/loop/policy.py|core/ingest/pipeline.py|core/ingest/parsers.py
|tui/cli.py|tui/app.py|tui/screens/recall.py|styles/app.tcss|tests/test_recall.py
|tests/test_sync.py|tests/test_tokenizer.py|bench/recall_latency.py|docker-compose.yml
|pyproject.toml|README.md|SOUL.md|DESIGN.md|state/ledger.jsonl|state/sync.json
|state/memory.sqlite|src/server/main.go|src/api/handlers.ts|src/lib/auth.rs|web/index.html
|config/prod.yaml|config/dev.yaml|scripts/deploy.sh|Makefile|.github/workflows/ci.yml
|migrations/0007_add_index.sql|notebooks/analysis.ipynb|docs/architecture.md""".replace("\n", "").split("|")
TECHNOLOGIES = """Neo4j|SQLite|FTS5|Lucene|Python|Rust|Go|TypeScript|PostgreSQL|Redis|Kafka
|Elasticsearch|Kubernetes|Docker|Bolt|Cypher|WAL|BM25|pydantic|asyncio|FastAPI|React|Vue
|GraphQL|gRPC|OpenAI|Ollama|vLLM|llama.cpp|ONNX|CUDA|WebSocket|OAuth|JWT|TLS|nginx|Linux
|macOS|Windows|Java""".replace("\n", "").split("|")
ENTITY_POOL: list[tuple[str, str]] = (
    [(n, "person") for n in PERSONS] + [(n, "tool") for n in TOOLS] + [(n, "project") for n in PROJECTS]
    + [(n, "file") for n in FILES] + [(n, "technology") for n in TECHNOLOGIES]
)

TOPICS = """recall latency|neo4j outage|sqlite fts|cjk tokenization|ledger sync|loop engine
|approval flow|dashboard|ingestion|benchmark|deployment|code review|incident response
|first principles|memory design|circuit breaker|testing|performance|refactoring|documentation
|billing|onboarding|travel plans|family|health|cooking|music|reading|weekend|finance
|记忆检索|中文分词|故障恢复|性能优化|部署上线|代码评审|周末计划|旅行|健康|学习""".replace("\n", "").split("|")
RELATIONS = ["uses", "depends_on", "owns", "fixed", "reviewed", "deployed", "wrote", "blocked_by", "replaces"]

SOURCES = ["openclaw", "claude-code", "hermes", "jsonl"]
SOURCE_WEIGHTS = [0.35, 0.35, 0.2, 0.1]
YEAR_START = datetime(2025, 1, 1, tzinfo=timezone.utc)
YEAR_SECONDS = 365 * 86400
MIN_CHARS, MAX_CHARS = 200, 2000


def _cum_zipf(n: int, s: float = ZIPF_S, offset: float = 2.7) -> list[float]:
    """Cumulative Zipf–Mandelbrot weights 1/(rank + offset)^s for ranks 1..n."""
    return list(itertools.accumulate(1.0 / (r + offset) ** s for r in range(1, n + 1)))


def _tail_words(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        syl = rng.choice((2, 2, 2, 3, 3))
        w = "".join(rng.choice(_ONSETS) + rng.choice(_NUCLEI) + rng.choice(_CODAS) for _ in range(syl))
        if rng.random() < 0.15:
            w += "_" + rng.choice(("id", "fn", "cfg", "v2", "tmp", "ctx", "err"))
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


class Vocabulary:
    """Word lists with cumulative Zipf weights, built from a seed."""

    def __init__(self, seed: int):
        rng = random.Random(f"vocab:{seed}")
        head = list(dict.fromkeys(FUNCTION_WORDS))
        body = [w for w in dict.fromkeys(COMMON_WORDS) if w not in head]
        # The body keeps its rough order but not exactly: shuffle within windows.
        for i in range(0, len(body), 40):
            window = body[i : i + 40]
            rng.shuffle(window)
            body[i : i + 40] = window
        taken = set(head) | set(body)
        self.words: list[str] = head + body + _tail_words(rng, TAIL_SIZE, taken)
        self.cum = _cum_zipf(len(self.words))
        self.n_function = len(head)
        # Content words (queries use these): everything past the function words.
        self.content = self.words[self.n_function :]
        self.content_cum = _cum_zipf(len(self.content), s=1.0, offset=10)
        self.zh = list(dict.fromkeys(ZH_PHRASES))
        self.zh_cum = _cum_zipf(len(self.zh), s=1.0, offset=3)
        self.ent_cum = _cum_zipf(len(ENTITY_POOL), s=0.8, offset=5)
        # Entity popularity must not follow pool order (persons first): permute it.
        self.entities = list(ENTITY_POOL)
        rng.shuffle(self.entities)
        self.topic_cum = _cum_zipf(len(TOPICS), s=0.7, offset=2)


def _pick(rng: random.Random, items: Sequence, cum: list[float], k: int) -> list:
    return rng.choices(items, cum_weights=cum, k=k)


# -- episodes --------------------------------------------------------------------------
def _en_sentence(rng: random.Random, v: Vocabulary, ents: list[tuple[str, str]]) -> str:
    words = _pick(rng, v.words, v.cum, rng.randint(6, 22))
    if ents and rng.random() < 0.45:
        words.insert(rng.randrange(len(words) + 1), rng.choice(ents)[0])
    s = " ".join(words)
    return s[0].upper() + s[1:] + rng.choice((".", ".", ".", "?", "!", ":"))


def _zh_sentence(rng: random.Random, v: Vocabulary, ents: list[tuple[str, str]]) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(3, 9)):
        parts.append(_pick(rng, v.zh, v.zh_cum, 1)[0])
        if rng.random() < 0.55:
            parts.append(rng.choice(ZH_PARTICLES))
    if ents and rng.random() < 0.5:
        name = rng.choice(ents)[0]
        # An English name or path inside Chinese text is set off by spaces.
        parts.insert(rng.randrange(len(parts) + 1), name if _has_cjk(name) else f" {name} ")
    if rng.random() < 0.25:  # code-switching: an English term mid-sentence
        parts.insert(rng.randrange(len(parts) + 1), " " + _pick(rng, v.content, v.content_cum, 1)[0] + " ")
    return "".join(parts) + rng.choice(ZH_ENDINGS)


def _has_cjk(s: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in s)


def _target_length(rng: random.Random) -> int:
    # Log-uniform between the bounds: many short episodes, a long tail of long ones.
    return int(math.exp(rng.uniform(math.log(MIN_CHARS), math.log(MAX_CHARS))))


def generate(n: int, seed: int = 7) -> Iterator[dict]:
    """``n`` episode dicts (``Episode`` JSON shape), deterministic in ``seed``."""
    v = Vocabulary(seed)
    rng = random.Random(f"episodes:{seed}")
    i = 0
    session_no = 0
    while i < n:
        session_no += 1
        source = rng.choices(SOURCES, weights=SOURCE_WEIGHTS)[0]
        session_id = f"s{seed}-{session_no:07d}"
        parts = min(n - i, rng.choice((1, 1, 1, 2, 2, 3, 4, 6, 8)))
        # Language of the session: mostly English, some mixed, some Chinese.
        zh_share = rng.choices((0.0, 0.1, 0.4, 0.85), weights=(0.35, 0.3, 0.2, 0.15))[0]
        ts = YEAR_START + timedelta(seconds=rng.uniform(0, YEAR_SECONDS))
        session_ents = list(dict.fromkeys(_pick(rng, v.entities, v.ent_cum, rng.randint(2, 7))))
        session_topics = list(dict.fromkeys(_pick(rng, TOPICS, v.topic_cum, rng.randint(1, 3))))
        agent = {"openclaw": "openclaw", "claude-code": "claude", "hermes": "hermes", "jsonl": "generic"}[source]
        prev = None
        for part in range(parts):
            ents = [e for e in session_ents if rng.random() < 0.7] or session_ents[:1]
            target = _target_length(rng)
            lines: list[str] = []
            size = 0
            role = "user"
            while size < target:
                k = rng.randint(1, 3)
                sents = [(_zh_sentence if rng.random() < zh_share else _en_sentence)(rng, v, ents) for _ in range(k)]
                line = f"{role}: " + " ".join(sents)
                lines.append(line)
                size += len(line) + 1
                role = "assistant" if role == "user" else "user"
            text = "\n".join(lines)[:MAX_CHARS]
            first = ts
            ts = ts + timedelta(minutes=rng.uniform(2, 90))
            eid = f"{source}:{session_id}:{part}"
            topic = session_topics[0]
            names = ", ".join(e[0] for e in ents[:3])
            summary = (f"{topic}：与 {names} 相关的讨论" if zh_share > 0.5 else f"{topic} with {names}")
            rels = []
            if len(ents) >= 2 and rng.random() < 0.5:
                a, b = rng.sample(ents, 2)
                rels.append({"src": a[0], "rel": rng.choice(RELATIONS), "dst": b[0]})
            ep = {
                "id": eid,
                "source": source,
                "session_id": session_id,
                "agent": agent,
                "channel": rng.choice(("cli", "telegram", "slack", "web")),
                "summary": summary,
                "text": text,
                "topics": session_topics,
                "entities": [{"name": name, "type": typ} for name, typ in ents],
                "relations": rels,
                "first_ts": first.isoformat(),
                "last_ts": ts.isoformat(),
                "message_count": len(lines),
                "meta": {"prev": prev} if prev else {},
            }
            prev = eid
            yield ep
            i += 1


def write_corpus(path: Path, n: int, seed: int = 7) -> int:
    """Write ``n`` episodes as episode JSONL (``ars ingest --format episodes``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as fh:
        for ep in generate(n, seed):
            fh.write(json.dumps(ep, ensure_ascii=False) + "\n")
            count += 1
    return count


# -- queries -----------------------------------------------------------------------------
def _episode_lines(path: Path, picks: Sequence[int]) -> dict[int, dict]:
    want = sorted(set(picks))
    out: dict[int, dict] = {}
    j = 0
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh):
            if j < len(want) and no == want[j]:
                out[no] = json.loads(line)
                j += 1
                if j == len(want):
                    break
    return out


def make_queries(n: int, seed: int = 7, corpus: Path | None = None, corpus_size: int | None = None) -> list[str]:
    """``n`` queries of 2 to 8 tokens mixing English and Chinese, some naming
    entities; with ``corpus`` a third of them take their words from a random
    episode of it (queries about something that is there), the rest are drawn
    from the shared vocabulary (some match little or nothing)."""
    v = Vocabulary(seed)
    rng = random.Random(f"queries:{seed}")
    from_corpus: dict[int, dict] = {}
    if corpus is not None:
        size = corpus_size or sum(1 for _ in open(corpus, encoding="utf-8"))
        picks = [rng.randrange(size) for _ in range(n)]
        from_corpus = _episode_lines(Path(corpus), picks)
    else:
        picks = [0] * n
    out: list[str] = []
    for i in range(n):
        kind = rng.choices(("episode", "en", "zh", "mixed"), weights=(0.35, 0.3, 0.15, 0.2))[0]
        want = rng.randint(2, 8)
        toks: list[str] = []
        if kind == "episode" and picks[i] in from_corpus:
            ep = from_corpus[picks[i]]
            words = [w.strip(".,:;!?") for w in ep["text"].split() if w not in ("user:", "assistant:")]
            words = [w for w in words if w and w.lower() not in FUNCTION_WORDS]
            if ep["entities"] and rng.random() < 0.5:
                toks.append(rng.choice(ep["entities"])["name"])
            while len(toks) < want and words:
                w = rng.choice(words)
                if _has_cjk(w):  # a Chinese clause: take a 2-4 character slice of it
                    start = rng.randrange(max(1, len(w) - 1))
                    w = w[start : start + rng.randint(2, 4)]
                toks.append(w)
        else:
            if kind == "en" or kind == "episode":
                toks = _pick(rng, v.content, v.content_cum, want)
            elif kind == "zh":
                toks = _pick(rng, v.zh, v.zh_cum, want)
            else:
                half = max(1, want // 2)
                toks = _pick(rng, v.content, v.content_cum, half) + _pick(rng, v.zh, v.zh_cum, want - half)
                rng.shuffle(toks)
            if rng.random() < 0.4:
                toks[rng.randrange(len(toks))] = _pick(rng, v.entities, v.ent_cum, 1)[0][0]
        toks = list(dict.fromkeys(t for t in toks if t))[:8] or ["neo4j", "outage"]
        if len(toks) == 1:
            toks.append(_pick(rng, v.content, v.content_cum, 1)[0])
        # Chinese-only queries are usually typed without spaces.
        if all(_has_cjk(t) for t in toks) and rng.random() < 0.6:
            out.append("".join(toks))
        else:
            out.append(" ".join(toks))
    return out


if __name__ == "__main__":  # a quick look: python bench/synthetic.py [n] [seed]
    import sys
    import tempfile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    for ep in generate(n, seed):
        print(json.dumps(ep, ensure_ascii=False)[:600])
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.jsonl"
        write_corpus(p, max(n, 200), seed)
        for q in make_queries(12, seed, p):
            print("Q:", q)
