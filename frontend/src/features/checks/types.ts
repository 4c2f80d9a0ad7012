/** A project's checks as the API gives them (API.md, "Project knowledge and checks"). */
export type ProjectCheck = {
  id: string;
  project_id: string;
  question: string;
  /** {name: value}: the answer must end with @name[value] for each. */
  expected: Record<string, unknown>;
  format: string;
  from_run_id: string | null;
  created_at: string;
};

export type CheckRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type CheckResultStatus = 'pending' | 'passed' | 'failed' | 'error';

export type CheckResult = {
  check_id: string | null;
  status: CheckResultStatus;
  run_id: string | null;
  answer: string | null;
  question?: string;
  expected?: Record<string, unknown>;
  /** Why it failed or erred, in a sentence. */
  detail?: string | null;
};

export type CheckRun = {
  id: string;
  status: CheckRunStatus;
  model?: string | null;
  /** The session its questions were asked in. */
  session_id?: string | null;
  total: number;
  passed: number;
  failed: number;
  errors: number;
  accuracy: number | null;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number | null;
  error?: string | null;
  created_at?: string;
  started_at: string | null;
  finished_at: string | null;
  results?: CheckResult[];
};
