"""Containers, clusters and clouds (docker, kubectl, helm, terraform, aws,
gcloud/az): read commands pass, anything that changes or reveals secrets is held."""

from __future__ import annotations

import re

from core.inbox.commands.options import HIGH, MEDIUM, has, opts, values


def c_docker(cmd, name, ctx):
    options, pos = opts(cmd.args, "H", ("--host", "--context", "--config", "--log-level"))
    if has(options, "-H", "--host", "--config", "--context"):
        ctx.hold("docker-host", HIGH, f"{name} talking to another daemon or config", cmd)
        return
    sub = pos[0].value if pos else None
    read = {"ps", "images", "logs", "inspect", "version", "info", "history", "port", "top", "search", "diff",
            "events", "stats"}
    groups = {"image": {"ls", "list", "inspect", "history"}, "container": {"ls", "list", "inspect", "logs", "top",
                                                                           "port", "diff", "stats"},
              "network": {"ls", "list", "inspect"}, "volume": {"ls", "list", "inspect"},
              "context": {"ls", "list", "show", "inspect"}, "system": {"df", "info", "events"},
              "compose": {"ps", "logs", "config", "ls", "images", "version", "top", "build", "pull", "events"},
              "buildx": {"build", "ls", "version", "inspect", "du"}, "manifest": {"inspect"},
              "builder": {"ls", "inspect", "build"}}
    if sub in read or (sub in ("build", "pull") and True):
        if sub == "stats" and not any(w.value == "--no-stream" for w in cmd.args):
            ctx.hold("docker", MEDIUM, f"{name} stats without --no-stream never ends", cmd)
        if sub == "build":
            ctx.in_project(cmd)
        return
    if sub in groups:
        words = [w.value for w in pos[1:] if w.value is None or not w.value.startswith("-")]
        if words and words[0] in groups[sub]:
            if words[0] == "build":
                ctx.in_project(cmd)
            return
        ctx.hold("docker", HIGH, f"{name} {sub} {words[0] if words else ''}: only its read commands pass", cmd)
        return
    ctx.hold("docker", HIGH, f"{name} {sub or ''}: containers and images can reach anything this user can "
                             "(only ps, images, logs, inspect, build, pull... pass)", cmd)


def c_kubectl(cmd, name, ctx):
    read = {"get", "describe", "logs", "explain", "version", "api-resources", "api-versions", "cluster-info", "top",
            "diff", "events", "auth", "config", "rollout", "wait", "completion", "plugin"}
    options, pos = opts(cmd.args, "nlcosLf", ("--namespace", "--selector", "--context", "--cluster", "--user",
                                             "--output", "--kubeconfig", "--server", "--token", "--field-selector",
                                             "--sort-by", "--container", "--since", "--tail", "--filename",
                                             "--template", "--request-timeout", "--as", "--as-group"))
    if has(options, "--server", "--token", "--kubeconfig", "--as", "--as-group"):
        ctx.hold("kubectl", HIGH, f"{name} with another server, token or identity", cmd)
        return
    words = [w.value for w in pos]
    sub = words[0] if words else None
    if sub not in read:
        ctx.hold(f"kubectl-{sub}" if sub else "kubectl", HIGH,
                 f"{name} {sub or ''} changes the cluster (only get, describe, logs... pass)", cmd)
        return
    if sub == "get" and any(w and (w.split("/")[0].split(".")[0] in ("secret", "secrets")) for w in words[1:]):
        ctx.hold("kubectl-secrets", HIGH, f"{name} get secrets shows secret values", cmd)
    if sub == "config" and (len(words) < 2 or words[1] not in ("view", "get-contexts", "current-context",
                                                                  "get-clusters", "get-users")):
        ctx.hold("kubectl-config", HIGH, f"{name} config {words[1] if len(words) > 1 else ''} changes ~/.kube/config",
                 cmd)
    if sub == "config" and len(words) > 1 and words[1] == "view" and any(w.value == "--raw" for w in cmd.args):
        ctx.hold("kubectl-secrets", HIGH, f"{name} config view --raw shows credentials", cmd)
    if sub == "rollout" and (len(words) < 2 or words[1] not in ("status", "history")):
        ctx.hold("kubectl-rollout", HIGH, f"{name} rollout {words[1] if len(words) > 1 else ''} changes the cluster",
                 cmd)
    if sub == "auth" and (len(words) < 2 or words[1] not in ("can-i", "whoami")):
        ctx.hold("kubectl", HIGH, f"{name} auth {words[1] if len(words) > 1 else ''}", cmd)
    if sub == "plugin" and (len(words) < 2 or words[1] != "list"):
        ctx.hold("kubectl", HIGH, f"{name} plugin", cmd)


def c_helm(cmd, name, ctx):
    read = {"list", "ls", "status", "get", "history", "hist", "show", "inspect", "template", "lint", "search",
            "version", "env", "verify"}
    pos = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    sub = pos[0] if pos else None
    if sub in read:
        return
    if sub in ("repo", "dependency", "dep", "plugin") and len(pos) > 1 and pos[1] in ("list", "ls", "build",
                                                                                      "update", "up"):
        return
    ctx.hold(f"helm-{sub}" if sub else "helm", HIGH, f"helm {sub or ''} changes the cluster or the helm setup", cmd)


def c_terraform(cmd, name, ctx):
    held = {"apply": "changes real infrastructure", "destroy": "destroys real infrastructure",
            "import": "changes the state", "taint": "marks resources for replacement", "untaint": "changes the state",
            "refresh": "rewrites the state", "force-unlock": "breaks the state lock", "login": "stores a token",
            "logout": "removes a token", "console": "an interactive console", "push": "uploads configuration"}
    allowed = {"init", "validate", "plan", "fmt", "show", "output", "version", "providers", "graph", "state",
               "workspace", "get", "test", "metadata", "modules", "help"}
    args = [w for w in cmd.args if not (w.value or "").startswith("-chdir")]
    pos = [w.value for w in args if w.value is None or not w.value.startswith("-")]
    sub = pos[0] if pos else None
    if sub in held:
        ctx.hold(f"terraform-{sub}", HIGH, f"{name} {sub} {held[sub]}", cmd)
        return
    if sub not in allowed:
        ctx.hold("unknown-command", MEDIUM, f"{name} {sub or ''} is not on the gate's allow-list", cmd)
        return
    if sub == "state" and (len(pos) < 2 or pos[1] not in ("list", "show", "pull")):
        ctx.hold("terraform-state", HIGH, f"{name} state {pos[1] if len(pos) > 1 else ''} rewrites the state", cmd)
    if sub == "workspace" and len(pos) > 1 and pos[1] == "delete":
        ctx.hold("terraform-workspace", HIGH, f"{name} workspace delete", cmd)
    ctx.in_project(cmd)


AWS_SECRETISH = re.compile(r"secret|password|token|credential|login|decrypt|private-key|kubeconfig|"
                           r"get-object$|authorization", re.I)


def c_aws(cmd, name, ctx):
    options, pos = opts(cmd.args, "", ("--profile", "--region", "--output", "--query", "--endpoint-url", "--color",
                                       "--cli-read-timeout", "--cli-connect-timeout", "--ca-bundle",
                                       "--cli-binary-format", "--starting-token", "--max-items", "--page-size"))
    for v in values(options, "--endpoint-url"):
        ctx.url(v, cmd)
    words = [w.value for w in pos]
    if len(words) < 2 or words[0] is None or words[1] is None:
        if words and words[0] in ("help", "--version"):
            return
        ctx.hold("aws", HIGH, "aws with a service or operation the gate cannot see", cmd)
        return
    service, op = words[0], words[1]
    if service == "s3":
        if op == "ls":
            return
        ctx.hold("aws-s3", HIGH, f"aws s3 {op} copies, moves or deletes data (only ls passes)", cmd)
        return
    if service == "configure":
        if op in ("list", "list-profiles"):
            return
        ctx.hold("aws-configure", HIGH, f"aws configure {op} reads or writes credentials", cmd)
        return
    if AWS_SECRETISH.search(op) or any(w.value == "--with-decryption" for w in cmd.args):
        ctx.hold("aws-secrets", HIGH, f"aws {service} {op} reveals secrets or writes files", cmd)
        return
    if op.startswith(("describe-", "list-", "get-", "head-", "lookup-", "search-", "batch-get-", "check-",
                      "validate-", "estimate-", "preview-", "test-")) or op in ("scan", "query", "wait", "help"):
        return
    ctx.hold(f"aws-{op}", HIGH, f"aws {service} {op} changes cloud resources (only describe-/list-/get- pass)", cmd)


GCLOUD_READ = {"list", "describe", "info", "version", "get-value", "get-iam-policy", "read", "list-tags",
               "list-grantable-roles", "help", "topic"}
GCLOUD_HELD = {"delete", "remove", "destroy", "reset", "set", "unset", "create", "update", "deploy", "ssh", "scp",
               "print-access-token", "print-identity-token", "activate-service-account", "login", "revoke",
               "add-iam-policy-binding", "remove-iam-policy-binding", "set-iam-policy", "import", "export", "cp",
               "mv", "rm", "rsync", "patch", "enable", "disable", "stop", "start", "resize", "suspend", "resume",
               "restore", "rollback", "run", "exec", "submit", "cancel", "get-credentials", "configure-docker",
               "execute", "call", "send", "publish", "apply", "upgrade", "application-default", "clone", "init",
               "rb", "mb", "setmeta", "acl", "iam", "cat"}


def c_cloud_cli(cmd, name, ctx):
    """gcloud, gsutil, az: held when any word is a verb that changes or reveals; passes when one reads."""
    words = [w.value for w in cmd.args if w.value is None or not w.value.startswith("-")]
    if any(w is None for w in words):
        ctx.hold(name, HIGH, f"{name} with a word only known when it runs", cmd)
        return
    bad = [w for w in words if w in GCLOUD_HELD]
    if name == "gsutil" and words and words[0] in ("ls", "du", "stat", "version", "help", "hash"):
        return
    if bad:
        ctx.hold(f"{name}-{bad[0]}", HIGH, f"{name} ... {bad[0]} changes cloud resources or reveals credentials", cmd)
        return
    if any(w in GCLOUD_READ or (w.startswith(("get-", "show", "list")) and name == "az") or
           (name == "az" and w == "show") for w in words):
        return
    ctx.hold(name, HIGH, f"{name} {' '.join(words[:4])}: only list/describe/show pass", cmd)
