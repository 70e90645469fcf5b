"""Time recomputed: run times, durations, run order, phases and timing."""
