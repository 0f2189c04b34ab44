"""The write-ahead ledger and its cursors."""
