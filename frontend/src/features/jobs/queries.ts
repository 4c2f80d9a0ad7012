import { queryOptions } from '@tanstack/react-query';
import { getJob, getJobCode, getJobRun, listJobRuns, listJobs } from './api';
import { isGoing, isRepairing } from './types';

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

/** A job's runs, newest first; asked again while one is queued or running, or its repair is being made. */
export const jobRunsQuery = (id: string) =>
  queryOptions({
    queryKey: jobKeys.runs(id),
    queryFn: () => listJobRuns(id),
    refetchInterval: (q) => (q.state.data?.some((r) => isGoing(r.status) || isRepairing(r)) ? JOB_POLL_MS : false),
  });

export const jobRunQuery = (id: string) =>
  queryOptions({
    queryKey: jobKeys.run(id),
    queryFn: () => getJobRun(id),
    refetchInterval: (q) => (q.state.data && !isGoing(q.state.data.status) ? false : JOB_POLL_MS),
  });

export const jobCodeQuery = (id: string) => queryOptions({ queryKey: jobKeys.code(id), queryFn: () => getJobCode(id) });
