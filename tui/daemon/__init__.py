"""The recall daemon: a warm ARS that fresh ``ars recall --json`` processes ask.

Every CLI call and agent hook is a fresh process. With Neo4j configured, a
fresh process pays for importing the driver and opening a Bolt connection on
every call (~450 ms of a ~500 ms answer); the answer itself takes ~15 ms once
both are warm. So, like gpg-agent or Gradle's daemon, the first call answers
by itself and leaves a daemon behind; later calls with the same settings and
code hand their query to it over a private Unix socket and print its answer.

- address.py  where a daemon listens (stdlib only: the client must stay cheap)
- client.py   ask a daemon, else start one (stdlib only)
- server.py   the daemon: one ARS, kept in step with the state directory
"""
