"""detect-secrets 1.5.0's patterns, as data: what ``redact.py`` matches with.

Copied, not imported at run time: importing ``detect_secrets`` loads its whole
scanner and ``requests`` (150-500 ms), which every ``ars recall`` (the files
tier redacts its snippets), hook and ``ars remember`` would pay. ``from_package()``
reads the same tables from the installed package; tests/core/govern/test_redact.py checks
they are equal, so an upgrade of detect-secrets that changes a pattern fails
the suite until this file is regenerated (``python -m core.govern.ds_patterns``
prints it).
"""

from __future__ import annotations

VERSION = "1.5.0"

# kind -> the plugin's denylist: (pattern, case-insensitive)
PROVIDERS: dict[str, tuple[tuple[str, bool], ...]] = {
    "aws-access-key": (('(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}', False),),
    "github-token": (('(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}', False),),
    "gitlab-token": (('(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)', False), ('GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)', False), ('glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)', False), ('glimt-[A-Za-z0-9_\\-]{25}(?!\\w)', False), ('glptt-[A-Za-z0-9_\\-]{40}(?!\\w)', False), ('glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)', False), ('gloas-[A-Za-z0-9_\\-]{64}(?!\\w)', False),),
    "slack-token": (('xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+', True), ('https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+', True),),
    "stripe-key": (('(?:r|s)k_live_[0-9a-zA-Z]{24}', False),),
    "sendgrid-key": (('SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}', False),),
    "twilio-key": (('AC[a-z0-9]{32}', False), ('SK[a-z0-9]{32}', False),),
    "discord-token": (('[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}', False),),
    "telegram-token": (('\\d{8,10}:[0-9A-Za-z_-]{35}', False),),
    "mailchimp-key": (('[0-9a-z]{32}-us[0-9]{1,2}', False),),
    "pypi-token": (('pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}', False), ('pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}', False),),
    "npm-token": (('\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*', False),),
    "azure-storage-key": (('AccountKey=[a-zA-Z0-9+\\/=]{88}', False),),
    "square-token": (('sq0csp-[0-9A-Za-z\\\\\\-_]{43}', False),),
    "jwt": (('eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?', False),),
}

# PrivateKeyDetector's denylist: the headers of a private key
PRIVATE_KEY_HEADERS: tuple[str, ...] = ('BEGIN DSA PRIVATE KEY', 'BEGIN EC PRIVATE KEY', 'BEGIN OPENSSH PRIVATE KEY', 'BEGIN PGP PRIVATE KEY BLOCK', 'BEGIN PRIVATE KEY', 'BEGIN RSA PRIVATE KEY', 'BEGIN SSH2 ENCRYPTED PRIVATE KEY', 'PuTTY-User-Key-File-2')

# KeywordDetector's DENYLIST: the names a secret is assigned to
KEYWORDS: tuple[str, ...] = ('api_?key', 'auth_?key', 'service_?key', 'account_?key', 'db_?key', 'database_?key', 'priv_?key', 'private_?key', 'client_?key', 'db_?pass', 'database_?pass', 'key_?pass', 'password', 'passwd', 'pwd', 'secret', 'contraseña', 'contrasena')


def from_package() -> tuple[dict, tuple, tuple]:
    """The same three tables read from the installed detect-secrets (slow to import: tests only)."""
    import re

    from detect_secrets.plugins import (aws, azure_storage_key, discord, github_token, gitlab_token, jwt, mailchimp,
                                        npm, pypi_token, sendgrid, slack, square_oauth, stripe, telegram_token,
                                        twilio)
    from detect_secrets.plugins.keyword import DENYLIST
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    plugins = {"aws-access-key": aws.AWSKeyDetector.denylist[:1],  # [1] is the keyword+quotes shape: keywords cover it
               "github-token": github_token.GitHubTokenDetector.denylist,
               "gitlab-token": gitlab_token.GitLabTokenDetector.denylist, "slack-token": slack.SlackDetector.denylist,
               "stripe-key": stripe.StripeDetector.denylist, "sendgrid-key": sendgrid.SendGridDetector.denylist,
               "twilio-key": twilio.TwilioKeyDetector.denylist,
               "discord-token": discord.DiscordBotTokenDetector.denylist,
               "telegram-token": telegram_token.TelegramBotTokenDetector.denylist,
               "mailchimp-key": mailchimp.MailchimpDetector.denylist,
               "pypi-token": pypi_token.PypiTokenDetector.denylist, "npm-token": npm.NpmDetector.denylist,
               "azure-storage-key": azure_storage_key.AzureStorageKeyDetector.denylist,
               "square-token": square_oauth.SquareOAuthDetector.denylist, "jwt": jwt.JwtTokenDetector.denylist}
    providers = {k: tuple((r.pattern, bool(r.flags & re.I)) for r in v) for k, v in plugins.items()}
    return providers, tuple(r.pattern for r in PrivateKeyDetector.denylist), tuple(DENYLIST)


if __name__ == "__main__":
    p, h, k = from_package()
    print("PROVIDERS =", p)
    print("PRIVATE_KEY_HEADERS =", h)
    print("KEYWORDS =", k)
