"""The dashboard's views, one module each: loops, inbox, recall, checkpoints."""
