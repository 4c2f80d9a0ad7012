import type { ArtifactOut, RunOut, RunStartedEvent } from '@/client';
import type { RunEvent } from '@/features/runs/events';

/** A stored run as GET /sessions/{id}/runs returns it: a finished, empty run unless `over` says otherwise. */
export const storedRun = (over: Partial<RunOut> = {}): RunOut => ({
  id: 'run-1',
  session_id: 'session-1',
  status: 'succeeded',
  query: 'Revenue?',
  model: 'm',
  final_answer: null,
  error: null,
  steps: [],
  plans: [],
  verifications: [],
  inputs: [],
  approvals: [],
  pending: null,
  artifacts: [],
  tokens_in: 0,
  tokens_out: 0,
  cost_usd: null,
  created_at: '2026-01-01T00:00:00Z',
  started_at: null,
  finished_at: null,
  ...over,
});

/** `run.started` as the stream sends it (every field its definition requires). */
export const runStarted = (run_id: string, seq: number, over: Partial<RunStartedEvent> = {}): RunEvent => ({
  event: 'run.started',
  run_id,
  seq,
  session_id: 'session-1',
  model: 'm',
  query: 'Revenue?',
  ...over,
});

/** An artifact as an `artifact` event carries it. */
export const streamedArtifact = (over: Partial<ArtifactOut> = {}): ArtifactOut => ({
  id: 'artifact-1',
  run_id: 'run-1',
  session_id: 'session-1',
  step: 1,
  kind: 'table',
  name: 'table.json',
  mime: 'application/json',
  size: 10,
  created_at: '2026-01-01T00:00:00Z',
  url: '/api/v1/artifacts/artifact-1/content',
  ...over,
});
