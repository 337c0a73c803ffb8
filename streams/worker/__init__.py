"""The stream worker: the Faust app and its composition (app, context), one agent's loop (loop, batches,
commit, crash), health and web routes (health), Faust's Kafka settings (credentials), one station over
one batch (runner), which offsets may be committed (offsets)."""
