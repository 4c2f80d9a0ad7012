import { queryOptions } from '@tanstack/react-query';
import { getJob, getJobCode, getJobRun, listJobRuns, listJobs } from './api';
import { isGoing, isRepairing, type JobRun } from './types';

export const jobKeys = {
  jobs: (projectId: string) => ['jobs', projectId] as const,
  job: (id: string) => ['job', id] as const,
  runs: (id: string) => ['job-runs', id] as const,
  run: (id: string) => ['job-run', id] as const,
  code: (id: string) => ['job-code', id] as const,
};

/** How often a job whose checks are being written, or a run that goes, is asked again. */
export const JOB_POLL_MS = 1500;

export const jobsQuery = (projectId: string) => queryOptions({ queryKey: jobKeys.jobs(projectId), queryFn: () => listJobs(projectId) });

/** A job; asked again while its checks are being written. */
export const jobQuery = (id: string) =>
  queryOptions({
    queryKey: jobKeys.job(id),
    queryFn: () => getJob(id),
    refetchInterval: (q) => (q.state.data?.checks.status === 'writing' ? JOB_POLL_MS : false),
  });

/** How long a run that just failed is watched for the repair the server may start after it. */
export const REPAIR_WAIT_MS = 20_000;
// When this page first saw a run failed with no repair (by run id): the repair is recorded
// just after the run ends, so the history is asked again for a while (the server's clock not used).
const failedSeen = new Map<string, number>();

/** Whether the newest run failed a moment ago and no repair of it shows yet. */
export function awaitingRepair(runs: JobRun[] | undefined, now = Date.now()) {
  const newest = runs?.[0];
  if (!newest || newest.status !== 'failed' || newest.repair) return false;
  // A failure long past (minutes, whatever the clocks say) is not watched.
  if (newest.finished_at && now - Date.parse(newest.finished_at) > 10 * 60_000) return false;
  const seen = failedSeen.get(newest.id) ?? now;
  failedSeen.set(newest.id, seen);
  return now - seen < REPAIR_WAIT_MS;
}

/** A job's runs, newest first; asked again while one is queued or running, its repair is being made, or may start. */
export const jobRunsQuery = (id: string) =>
  queryOptions({
    queryKey: jobKeys.runs(id),
    queryFn: () => listJobRuns(id),
    refetchInterval: (q) => (q.state.data?.some((r) => isGoing(r.status) || isRepairing(r)) || awaitingRepair(q.state.data) ? JOB_POLL_MS : false),
  });

export const jobRunQuery = (id: string) =>
  queryOptions({
    queryKey: jobKeys.run(id),
    queryFn: () => getJobRun(id),
    refetchInterval: (q) => (q.state.data && !isGoing(q.state.data.status) ? false : JOB_POLL_MS),
  });

export const jobCodeQuery = (id: string) => queryOptions({ queryKey: jobKeys.code(id), queryFn: () => getJobCode(id) });
