//! Tests of graph replay.
