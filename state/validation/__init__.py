"""Validation: what makes a plan valid, approvals and their chain, overlaps, waves."""
