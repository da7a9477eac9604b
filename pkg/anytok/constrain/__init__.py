"""Token masks for constrained generation (work in progress)."""
