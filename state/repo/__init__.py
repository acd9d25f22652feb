"""Git: the one hardened runner, the scratch worktree, diffs applied exactly, signing, scans."""
