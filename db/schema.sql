-- tunetab database schema. Each migration is one block, applied in order inside a transaction;
-- PRAGMA user_version records how many have been applied. Never edit a released block: append one.
-- @migration 1
CREATE TABLE devices (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  arch TEXT NOT NULL,
  cu_count INTEGER NOT NULL,
  clock_khz INTEGER NOT NULL,
  mem_clock_khz INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  runtime_version INTEGER NOT NULL,
  compiler_version TEXT NOT NULL,
  UNIQUE (name, arch, cu_count, clock_khz, mem_clock_khz, driver_version, runtime_version, compiler_version)
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  finished_at TEXT,
  command TEXT NOT NULL,
  tunetab_version TEXT NOT NULL,
  device_id INTEGER REFERENCES devices(id),
  status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'finished', 'failed', 'interrupted'))
);
CREATE TABLE problems (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  key TEXT NOT NULL,
  json TEXT NOT NULL,
  UNIQUE (family, key)
);
CREATE TABLE configs (
  id INTEGER PRIMARY KEY,
  family TEXT NOT NULL,
  name TEXT NOT NULL,
  json TEXT NOT NULL,
  UNIQUE (family, name)
);
CREATE TABLE code_objects (
  key_hash TEXT PRIMARY KEY,
  key_text TEXT NOT NULL,
  family TEXT NOT NULL,
  name_expression TEXT NOT NULL,
  lowered_name TEXT,
  arch TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  tunetab_version TEXT NOT NULL,
  ok INTEGER NOT NULL,
  binary BLOB,
  log TEXT NOT NULL DEFAULT '',
  compile_ms REAL NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE results (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES configs(id),
  tunetab_version TEXT NOT NULL,
  disposition TEXT NOT NULL CHECK (disposition IN ('passed', 'incorrect', 'out_of_bounds', 'faulted', 'timed_out',
                                                   'compile_failed', 'launch_failed', 'not_supported')),
  detail TEXT NOT NULL DEFAULT '',
  code_key TEXT,
  index_bits INTEGER,
  rel_l2 REAL,
  max_abs REAL,
  err_ratio REAL,
  median_us REAL,
  min_us REAL,
  spread REAL,
  iterations INTEGER,
  timing_phase TEXT,
  tflops REAL,
  bw_gbs REAL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (device_id, problem_id, config_id, tunetab_version)
);
CREATE INDEX results_by_problem ON results (device_id, problem_id, disposition, median_us);
-- @migration 2
-- Safety engine: the tolerance and index proof of every result, and coverage validation of chosen rows.
ALTER TABLE results ADD COLUMN tolerance TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN proof_m INTEGER;
CREATE TABLE coverage (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  device_id INTEGER NOT NULL REFERENCES devices(id),
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES configs(id),
  tunetab_version TEXT NOT NULL,
  domain TEXT NOT NULL,
  disposition TEXT NOT NULL CHECK (disposition IN ('passed', 'incorrect', 'out_of_bounds', 'faulted', 'timed_out',
                                                   'compile_failed', 'launch_failed', 'not_supported')),
  detail TEXT NOT NULL DEFAULT '',
  failed_m INTEGER,
  ms_checked INTEGER NOT NULL,
  served TEXT NOT NULL,
  sampled TEXT NOT NULL,
  every_m_limit INTEGER NOT NULL,
  index_bits INTEGER NOT NULL,
  proof_m INTEGER NOT NULL,
  index_bounds TEXT NOT NULL,
  tolerance TEXT NOT NULL,
  code_key TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  rel_l2 REAL,
  max_abs REAL,
  err_ratio REAL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (device_id, problem_id, config_id, tunetab_version, domain)
);
CREATE INDEX coverage_by_problem ON coverage (device_id, problem_id, disposition);
-- @migration 3
-- A row's choice by its time over the Ms it serves: each final candidate's median at a sample of the row's served
-- Ms (JSON [M, ...], the row's own M included) and their mean, NULL when a sampled M does not support the config.
ALTER TABLE results ADD COLUMN served_us REAL;
ALTER TABLE results ADD COLUMN served_ms TEXT NOT NULL DEFAULT '';
-- @migration 4
-- Each result's screening median at the row's M, kept when a final re-time replaces median_us (or quarantines it): the
-- final phase picks its finalists by it, so a resumed tune picks the same ones (it picked by median_us, where a
-- finalist's re-timed median could fall behind another's screening median and bring in a new finalist on every resume).
-- Results stored before it: a screening one's median is taken as its screening median (for a final demoted to screening
-- it is its final median: the screening one is lost); a final's is unknown (NULL: its median stands).
ALTER TABLE results ADD COLUMN screen_us REAL;
UPDATE results SET screen_us = median_us WHERE timing_phase = 'screen';
