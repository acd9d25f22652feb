"""The review page: `plan review open` serves a session's plan on 127.0.0.1
for a person to comment on, approve or send back; `plan review wait` blocks until they do."""
