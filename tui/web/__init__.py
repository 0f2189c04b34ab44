"""``ars serve``: the dashboard in a browser (textual-serve) and an approvals page for a phone.

access.py   the token, the cookie, the Host and Origin checks (no web framework)
unlock.py   browser sessions: the per-page CSRF token and the key unlocked for a while
cards.py    the approvals page as HTML (one renderer for the page and its updates)
approvals.py the page's handlers: list, poll, decide (ARS calls on one worker thread)
server.py   the aiohttp application: middleware, textual-serve's routes, run
dashboard.py the process textual-serve starts per browser session (the Textual app)
"""
