"""The semantic judge (issue 41): :class:`~streams.judge.port.JudgePort`, its adapter for the
OpenAI-compatible chat-completions API (:mod:`streams.judge.openai`), and the pacing that keeps calls
within ``EC_SEMANTIC__MAX_IN_FLIGHT`` and ``EC_SEMANTIC__CALLS_PER_SECOND`` (:mod:`streams.judge.pacing`)."""
