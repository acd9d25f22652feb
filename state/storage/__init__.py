"""The store: one journaled transaction across a session's files, its lock, history and schemas."""
