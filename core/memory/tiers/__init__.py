"""The three recall tiers behind one protocol (see ``base.Tier``)."""
