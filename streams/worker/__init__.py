"""The stream worker: the Faust app and agent loops (app), one station over one batch (runner),
which offsets may be committed (offsets)."""
