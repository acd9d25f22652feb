"""The operations: every change to a session, each inside one store transaction."""
