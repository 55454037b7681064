"""Paths and safe writes: how a transcript's path is spelled, and outputs that never follow a planted link."""
