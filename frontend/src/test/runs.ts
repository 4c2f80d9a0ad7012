import type { RunOut } from '@/client';

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
