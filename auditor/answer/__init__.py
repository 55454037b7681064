"""The answer as typed models, its validation against the bench_report schema, and the views the rules read."""
