"""Build the redaction corpus (deterministic: seeded), written next to this file:

* ``secrets.jsonl``: one object a line, ``{"kind", "secret", "line"}``: a
  transcript line (a user asking, an assistant quoting, a tool's output)
  holding one secret of ``kind``; ``secret`` is the part that must not survive.
* ``clean.txt``: technical lines with no secret, the hard false positives
  first in mind (commit hashes, UUIDs, base64 of short words, paths, URLs,
  versions, docker digests, lockfile hashes, test output, code that names
  passwords and tokens without holding one).

    python bench/redaction_corpus/make_corpus.py

The secrets are random strings in each provider's published shape: none is real.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
R = random.Random(20261201)
AZ, DIG = string.ascii_letters, string.digits
ALNUM = AZ + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def rnd(chars: str, n: int) -> str:
    return "".join(R.choice(chars) for _ in range(n))


def b64block(nbytes: int) -> str:
    return base64.b64encode(R.randbytes(nbytes)).decode()


def pem(kind: str) -> str:
    body = b64block(R.choice((400, 800, 1200)))
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {kind}-----\n{lines}\n-----END {kind}-----"


def jwt() -> str:
    def seg(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
    return ".".join((seg({"alg": "HS256", "typ": "JWT"}),
                     seg({"sub": str(R.randint(1, 10**9)), "name": R.choice(["ana", "li wei", "bob"]),
                          "iat": R.randint(1.6e9, 1.8e9)}),
                     base64.urlsafe_b64encode(R.randbytes(32)).decode().rstrip("=")))


def password() -> str:
    return rnd(ALNUM, R.randint(8, 14)) + R.choice("!#%^*-_.") + rnd(DIG, 2)


# kind -> a generator of secrets
MAKERS = {
    "openai-key": lambda: "sk-proj-" + rnd(URLSAFE, 120),
    "openai-key-legacy": lambda: "sk-" + rnd(ALNUM, 20) + "T3BlbkFJ" + rnd(ALNUM, 20),
    "anthropic-key": lambda: "sk-ant-api03-" + rnd(URLSAFE, 93) + "AA",
    "aws-access-key": lambda: "AKIA" + rnd(string.ascii_uppercase + DIG, 16),
    "aws-secret": lambda: rnd(B64, 40),
    "github-token": lambda: R.choice(["ghp_", "gho_", "ghs_"]) + rnd(ALNUM, 36),
    "github-pat": lambda: "github_pat_" + rnd(ALNUM, 22) + "_" + rnd(ALNUM, 59),
    "gitlab-token": lambda: "glpat-" + rnd(URLSAFE, 20),
    "slack-token": lambda: "xoxb-" + rnd(DIG, 12) + "-" + rnd(DIG, 13) + "-" + rnd(string.ascii_lowercase + DIG, 24),
    "slack-webhook": lambda: "https://hooks.slack.com/services/T" + rnd(ALNUM, 8).upper() + "/B"
                             + rnd(ALNUM, 8).upper() + "/" + rnd(ALNUM, 24),
    "stripe-key": lambda: R.choice(["sk_live_", "rk_live_", "sk_test_"]) + rnd(ALNUM, 24),
    "google-api-key": lambda: "AIza" + rnd(URLSAFE, 35),
    "jwt": jwt,
    "private-key": lambda: pem(R.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY",
                                          "PRIVATE KEY"])),
    "url-password": password,
    "password": password,
    "sendgrid-key": lambda: "SG." + rnd(URLSAFE, 22) + "." + rnd(URLSAFE, 43),
    "twilio-key": lambda: "SK" + rnd(string.ascii_lowercase[:6] + DIG, 32),
    "npm-token": lambda: "npm_" + rnd(ALNUM, 36),
    "pypi-token": lambda: "pypi-AgEIcHlwaS5vcmc" + rnd(URLSAFE, 80),
    "huggingface-token": lambda: "hf_" + rnd(ALNUM, 34),
    "telegram-token": lambda: str(R.randint(10**8, 10**9)) + ":" + rnd(URLSAFE, 35),
    "high-entropy": lambda: rnd(ALNUM, 32),
    "cli-password": password,
    "bearer-token": lambda: rnd(ALNUM + "._-", 48),
}

# kind -> transcript lines with {s} where the secret goes
TEMPLATES = {
    "openai-key": ["user: here is my key {s} please wire it into the client",
                   "tool (Bash): $ cat .env\nOPENAI_API_KEY={s}\nLOG_LEVEL=debug",
                   'assistant: I set `client = OpenAI(api_key="{s}")` for now; move it to the env later'],
    "openai-key-legacy": ["user: old key still works? {s}", "export OPENAI_API_KEY='{s}'"],
    "anthropic-key": ["tool (Bash): $ env | grep ANTHROPIC\nANTHROPIC_API_KEY={s}",
                      "user: use this one: {s} (billing is on the team account)"],
    "aws-access-key": ["tool (Read): [default]\naws_access_key_id = {s}\nregion = eu-west-1",
                       "user: the CI user is {s}, permissions are read-only"],
    "aws-secret": ["tool (Read): [default]\naws_access_key_id = AKIA" + "Q" * 4 + "7XJ2ZP3NRW5L\naws_secret_access_key = {s}",
                   "assistant: I exported AWS_SECRET_ACCESS_KEY={s} in the shell before running terraform plan",
                   "user: keys are AKIAZ2ND7R4PXQ3L5M8K and {s}"],
    "github-token": ["tool (Bash): $ git remote -v\norigin  https://{s}@github.com/acme/api.git (fetch)",
                     "user: use GITHUB_TOKEN={s} for the release workflow",
                     "assistant: The token {s} has repo scope; I will not print it again."],
    "github-pat": ["user: new fine-grained token {s}", "gh auth login --with-token <<< {s}"],
    "gitlab-token": ["tool (Bash): $ git clone https://oauth2:{s}@gitlab.com/acme/infra.git",
                     "user: CI_JOB_TOKEN won't do, take {s}"],
    "slack-token": ["tool (Read): SLACK_BOT_TOKEN={s}\nSLACK_CHANNEL=#deploys",
                    "assistant: posting with token {s} to #alerts failed: not_in_channel"],
    "slack-webhook": ["user: send the report to {s}", "tool (Bash): $ curl -X POST -d @msg.json {s}"],
    "stripe-key": ["tool (Read): STRIPE_SECRET_KEY={s}", "user: test against {s} not prod"],
    "google-api-key": ["tool (Read): const MAPS_KEY = \"{s}\";", "user: geocoding key is {s}"],
    "jwt": ["tool (Bash): $ curl -H 'Authorization: Bearer {s}' https://api.acme.dev/v1/me",
            "user: the session cookie is {s}, it expires tomorrow"],
    "private-key": ["tool (Read): {s}", "user: here is the deploy key\n{s}\nput it on the runner"],
    "url-password": ["tool (Read): DATABASE_URL=postgres://app:{s}@db.internal:5432/orders",
                     "assistant: connecting with mysql://root:{s}@127.0.0.1:3306/shop failed: access denied",
                     "user: redis is at redis://default:{s}@cache.acme.dev:6379/0",
                     "tool (Bash): $ git clone https://deploy:{s}@git.acme.dev/ops/infra.git"],
    "password": ["user: the admin password is password={s}",
                 "tool (Read): db:\n  user: app\n  password: {s}\n  host: db",
                 'tool (Read): {{"username": "svc-backup", "password": "{s}"}}',
                 "assistant: I ran `export PGPASSWORD='{s}'` and psql connected",
                 "tool (Read): SMTP_PASSWORD={s}",
                 "user: DB_PASS={s} on staging"],
    "sendgrid-key": ["tool (Read): SENDGRID_API_KEY={s}", "user: mail key {s}"],
    "twilio-key": ["tool (Read): TWILIO_API_KEY={s}", "user: twilio api key is {s}"],
    "npm-token": ["tool (Read): //registry.npmjs.org/:_authToken={s}", "user: publish with {s}"],
    "pypi-token": ["tool (Read): [pypi]\nusername = __token__\npassword = {s}", "user: twine token {s}"],
    "huggingface-token": ["tool (Bash): $ huggingface-cli login --token {s}", "user: HF_TOKEN={s}"],
    "telegram-token": ["tool (Read): TELEGRAM_BOT_TOKEN={s}", "user: the bot token is {s}"],
    "high-entropy": ['tool (Read): "datadog": {{"api_key": "{s}"}}', "user: the webhook signing secret is {s}",
                     "tool (Read): INTERNAL_SERVICE_KEY={s}"],
    "cli-password": ["tool (Bash): $ mysql -h db.internal -u root -p{s} shop < dump.sql",
                     "tool (Bash): $ sshpass -p '{s}' ssh deploy@10.0.3.7 uptime",
                     "tool (Bash): $ docker login -u ci --password {s} registry.acme.dev",
                     "tool (Bash): $ redis-cli -h cache -a {s} PING",
                     "user: the wifi password is {s}"],
    "bearer-token": ["tool (Bash): $ curl -H 'Authorization: Bearer {s}' https://internal/api/v2/jobs",
                     "assistant: the request sent Authorization: Bearer {s} and got 403"],
}


def secrets(per_kind: int = 5) -> list[dict]:
    out = []
    for kind, make in MAKERS.items():
        for i in range(per_kind):
            s = make()
            line = TEMPLATES[kind][i % len(TEMPLATES[kind])].format(s=s)
            out.append({"kind": kind, "secret": s, "line": line})
    return out


WORDS = ("hello", "world", "admin", "config", "deploy", "release", "token", "test", "user", "main",
         "docker", "build", "cache", "index", "value", "secret", "password", "ok", "yes", "done")
PATHS = ("src/core/ingest/formats/claude_code.py", "tests/test_recall.py", "tui/screens/inbox_screen.py",
         "/home/dev/projects/acme-api/services/billing/handlers/InvoiceWebhookHandler.ts",
         "node_modules/@babel/plugin-transform-runtime/lib/index.js", "/usr/lib/python3.11/site-packages/",
         "~/.cache/pip/wheels/5a/1f/3c", "frontend/src/components/UserProfile/UserProfileCard.tsx",
         "infra/terraform/modules/vpc/main.tf", "/var/log/nginx/access.log.2.gz",
         "app/src/main/java/com/acme/payments/PaymentGatewayClientFactory.java",
         "C:\\Users\\dev\\AppData\\Local\\Temp\\pytest-of-dev\\pytest-42")


def sha(n: int = 40) -> str:
    return rnd(HEX, n)


CLEAN = [
    lambda: f"commit {sha()}\nAuthor: Ana <ana@acme.dev>",
    lambda: f"tool (Bash): $ git log --oneline\n{sha(7)} Fix flaky test in recall\n{sha(7)} Bump deps",
    lambda: f"assistant: I reverted {sha()} and cherry-picked {sha(12)}",
    lambda: f"session {uuid.UUID(int=R.getrandbits(128))} resumed at 2026-11-{R.randint(10, 30)}T10:2{R.randint(0, 9)}:00Z",
    lambda: f'{{"parentUuid": "{uuid.UUID(int=R.getrandbits(128))}", "uuid": "{uuid.UUID(int=R.getrandbits(128))}"}}',
    lambda: f"echo {base64.b64encode(' '.join(R.sample(WORDS, R.randint(1, 4))).encode()).decode()} | base64 -d",
    lambda: f"the fixture stores {base64.b64encode(R.choice(WORDS).encode()).decode()} (base64 of a word)",
    lambda: f"data: {base64.b64encode(' '.join(R.sample(WORDS, 5)).encode()).decode()}",
    lambda: f"tool (Read): {R.choice(PATHS)}:{R.randint(1, 900)}: in test_{R.choice(WORDS)}_{R.choice(WORDS)}",
    lambda: f"assistant: I edited {R.choice(PATHS)} and {R.choice(PATHS)}",
    lambda: f"https://github.com/acme/{R.choice(WORDS)}-{R.choice(WORDS)}/pull/{R.randint(1, 9999)}#discussion_r{R.randint(10**8, 10**9)}",
    lambda: f"https://docs.python.org/3/library/{R.choice(WORDS)}.html?highlight={R.choice(WORDS)}#module-contents",
    lambda: f"git clone git@github.com:acme/{R.choice(WORDS)}.git && cd {R.choice(WORDS)}",
    lambda: f"https://storage.googleapis.com/acme-artifacts/builds/{R.randint(1000, 9999)}/app-{R.randint(1, 9)}.{R.randint(0, 30)}.{R.randint(0, 99)}.tar.gz",
    lambda: f"Successfully installed fastapi-0.{R.randint(90, 120)}.{R.randint(0, 9)} pydantic-2.{R.randint(1, 12)}.{R.randint(0, 9)} uvicorn-0.{R.randint(20, 40)}.0",
    lambda: f"node v{R.randint(18, 24)}.{R.randint(0, 20)}.{R.randint(0, 9)} npm {R.randint(8, 11)}.{R.randint(0, 9)}.{R.randint(0, 9)} python 3.{R.randint(9, 13)}.{R.randint(0, 9)}",
    lambda: f"docker pull ghcr.io/acme/api@sha256:{sha(64)}",
    lambda: f"Digest: sha256:{sha(64)}\nStatus: Downloaded newer image for postgres:16-alpine",
    lambda: f"tool (Bash): $ docker images\nacme/api   latest   {sha(12)}   2 hours ago   412MB",
    lambda: f'"integrity": "sha512-{base64.b64encode(R.randbytes(64)).decode()}"',
    lambda: f"github.com/stretchr/testify v1.{R.randint(7, 9)}.{R.randint(0, 9)} h1:{base64.b64encode(R.randbytes(32)).decode()}",
    lambda: f"requests==2.{R.randint(28, 32)}.{R.randint(0, 3)} --hash=sha256:{sha(64)}",
    lambda: f"{sha(64)}  dist/ars-0.{R.randint(1, 9)}.0-py3-none-any.whl",
    lambda: f"===== {R.randint(1, 400)} passed, {R.randint(0, 5)} skipped, {R.randint(0, 3)} warnings in {R.randint(1, 99)}.{R.randint(10, 99)}s =====",
    lambda: f"FAILED tests/test_{R.choice(WORDS)}.py::test_{R.choice(WORDS)}_{R.choice(WORDS)} - AssertionError: assert {R.randint(0, 9)} == {R.randint(0, 9)}",
    lambda: f"E       KeyError: '{R.choice(WORDS)}_{R.choice(WORDS)}'",
    lambda: f"tests/test_{R.choice(WORDS)}.py ....{'.' * R.randint(0, 30)}F..s  [{R.randint(1, 99)}%]",
    lambda: f"Ran {R.randint(1, 500)} tests in {R.random() * 10:.3f}s\n\nOK",
    lambda: f"  File \"/usr/lib/python3.11/{R.choice(WORDS)}/__init__.py\", line {R.randint(1, 999)}, in {R.choice(WORDS)}",
    lambda: f"pod/api-{rnd('bcdfghjklmnpqrstvwxz2456789', 10)}-{rnd('bcdfghjklmnpqrstvwxz2456789', 5)}   1/1   Running   0   {R.randint(1, 59)}m",
    lambda: f"    password = request.form[\"password\"]",
    lambda: f"    if not check_password_hash(user.password_hash, password):",
    lambda: f"    token = get_token(scope=\"{R.choice(WORDS)}\")",
    lambda: f"    api_key: str = Field(default=\"\", description=\"the provider's key\")",
    lambda: f"max_tokens = {R.choice([256, 1024, 4096, 8192])}",
    lambda: f"usage: input_tokens={R.randint(10, 99999)} output_tokens={R.randint(10, 9999)}",
    lambda: f"secretName: {R.choice(WORDS)}-credentials",
    lambda: f"password_reset_url = https://acme.dev/reset/{R.choice(WORDS)}",
    lambda: f"assistant: the password field is validated in {R.choice(PATHS)}",
    lambda: f"export AWS_PROFILE=staging AWS_REGION=eu-west-{R.randint(1, 3)}",
    lambda: f"token_url: https://auth.acme.dev/oauth/token",
    lambda: f"echo $OPENAI_API_KEY | wc -c",
    lambda: f"    secret_key = os.environ[\"SECRET_KEY\"]",
    lambda: f"DATABASE_URL=postgres://app@db.internal:5432/orders",
    lambda: f"ssh -i ~/.ssh/id_ed25519 deploy@10.0.{R.randint(0, 255)}.{R.randint(0, 255)}",
    lambda: f"color: #{sha(6)}; background: #{sha(6)};",
    lambda: f"inet6 fe80::{sha(4)}:{sha(4)}:{sha(4)}:{sha(4)}/64 scope link",
    lambda: f"{R.choice(WORDS)}Service.handle{R.choice(WORDS).title()}Request(ctx, payload)",
    lambda: f"class {''.join(w.title() for w in R.sample(WORDS, 4))}Factory(Base{R.choice(WORDS).title()}):",
    lambda: f"toolu_01{rnd(ALNUM, 22)} returned 0 matches",
    lambda: f'{{"type": "assistant", "message": {{"id": "msg_01{rnd(ALNUM, 22)}"}}, "requestId": "req_011C{rnd(ALNUM, 20)}"}}',
    lambda: f"chatcmpl-{rnd(ALNUM, 29)} finished with stop",
    lambda: f"2026-11-{R.randint(10, 30)} 12:{R.randint(10, 59)}:{R.randint(10, 59)},{R.randint(100, 999)} INFO  [{R.choice(WORDS)}] request_id={uuid.UUID(int=R.getrandbits(128))} status=200 duration_ms={R.randint(1, 999)}",
    lambda: f"Step {R.randint(1, 20)}/{R.randint(20, 30)} : RUN pip install --no-cache-dir -r requirements.txt\n ---> Running in {sha(12)}",
    lambda: f"go: downloading golang.org/x/net v0.{R.randint(10, 40)}.0",
    lambda: f"warning: LF will be replaced by CRLF in {R.choice(PATHS)}",
    lambda: f"[{R.choice(WORDS)} {sha(7)}] {R.choice(WORDS)}: {R.choice(WORDS)} the {R.choice(WORDS)} path",
    lambda: f"assistant: the test TestRedactAwsSecretKeyHandlerWithRotationPolicy passes now",
    lambda: f"ETag: \"{sha(32)}\"",
    lambda: f"X-Request-Id: {uuid.UUID(int=R.getrandbits(128))}",
    lambda: f"lockfileVersion: '9.0'\n  /@types/node@{R.randint(18, 22)}.{R.randint(0, 20)}.{R.randint(0, 9)}:",
    lambda: f"s3://acme-backups/postgres/{R.randint(2024, 2026)}/{R.randint(1, 12):02d}/dump-{sha(8)}.sql.gz",
    lambda: f"gs://acme-ml/checkpoints/run-{R.randint(1, 999)}/step_{R.randint(1000, 99999)}/model.safetensors",
    lambda: f"the tokenizer splits {R.choice(WORDS)} into {R.randint(1, 5)} tokens",
    lambda: f"PASS src/__tests__/{R.choice(WORDS)}.test.ts ({R.randint(1, 9)}.{R.randint(100, 999)} s)",
    lambda: f"mysql> SELECT id, email FROM users WHERE id = {R.randint(1, 999)};",
    lambda: f"Set-Cookie: theme=dark; Path=/; Max-Age={R.randint(1000, 99999)}",
    lambda: f"CONTAINER ID   IMAGE   COMMAND\n{sha(12)}   redis:7   \"docker-entrypoint.s…\"",
    lambda: f"revision: {sha(40)}\nversion: {R.randint(0, 9)}.{R.randint(0, 9)}.{R.randint(0, 9)}-rc.{R.randint(1, 5)}",
    lambda: f"tool Edit: The file /private/var/folders/{rnd('abcdefghijklmnopqrstuvwxyz0123456789', 2)}/"
            f"{rnd('abcdefghijklmnopqrstuvwxyz0123456789_', 30)}/T/pytest-of-dev/pytest-{R.randint(1, 99)}/"
            f"test_{R.choice(WORDS)}0/{R.choice(WORDS)}.txt has been updated",
    lambda: R.choice(["assistant: the password is incorrect, the login page says so",
                      "tool (Bash): $ echo \"$CR_PAT\" | docker login ghcr.io -u ci --password-stdin",
                      "tool (Bash): $ mysql -u root -p shop",
                      "tool (Bash): $ redis-cli -a $REDIS_PASSWORD ping",
                      "tool (Bash): $ psql --password --username app orders",
                      f"tool (Bash): $ git log --pretty=oneline --author=ana -n {R.randint(2, 50)}",
                      "tool (Bash): $ pip install --upgrade --no-cache-dir requests"]),
    lambda: f"Compiling {R.choice(WORDS)}_{R.choice(WORDS)} v0.{R.randint(1, 30)}.{R.randint(0, 9)} (/home/dev/src/{R.choice(WORDS)})",
]


def clean(n: int = 1200) -> list[str]:
    lines = []
    while len(lines) < n:
        for make in CLEAN:
            lines.append(make())
    return lines[:n]


def main() -> None:
    with open(HERE / "secrets.jsonl", "w", encoding="utf-8") as fh:
        for row in secrets():
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(HERE / "clean.jsonl", "w", encoding="utf-8") as fh:
        for line in clean():
            fh.write(json.dumps({"line": line}, ensure_ascii=False) + "\n")
    print(f"wrote {HERE / 'secrets.jsonl'} and {HERE / 'clean.jsonl'}")


if __name__ == "__main__":
    main()
