"""Auditing many transcripts: discovery, executors (processes, Dask), a session, baselines and ``--resume``."""
