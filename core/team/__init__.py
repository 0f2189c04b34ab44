"""Team memory: namespaces (a hard boundary), hosts and agents, and the pull
of other hosts' episodes from the shared Neo4j into this host's SQLite."""
