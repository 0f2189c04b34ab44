"""Memory in the agent's turn: the block one turn gets (``ARS.context``) and its receipts.

- query.py     the turn's query: the message and the reply before it, cut and cleaned; days it names
- floor.py     the relevance floor: whether the message is about anything memory holds
- block.py     the one block: dated, attributed, quoted memories within a budget
- when.py      local time, zone and relative day
- seen.py      what a session was already given (never twice)
- receipts.py  the ledger's ``context.injected`` events, written and read
- why.py       why a memory the supervisor expected was not given
- engine.py    all of it, within a deadline (``TurnContexts``, what ``ARS.context`` runs)
- models.py    TurnContext, InjectedMemory, Receipt
"""
