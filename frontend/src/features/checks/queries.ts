import { queryOptions } from '@tanstack/react-query';
import { getCheckRun, listCheckRuns, listChecks } from './api';
import { isGoing } from './checks';

export const checkKeys = {
  checks: (projectId: string) => ['checks', projectId] as const,
  runs: (projectId: string) => ['check-runs', projectId] as const,
  run: (id: string) => ['check-run', id] as const,
};

/** How often a check run that is going is asked for its progress. */
export const CHECK_RUN_POLL_MS = 1500;

export const checksQuery = (projectId: string) => queryOptions({ queryKey: checkKeys.checks(projectId), queryFn: () => listChecks(projectId) });

/** The project's check runs, newest first: the history. */
export const checkRunsQuery = (projectId: string) => queryOptions({ queryKey: checkKeys.runs(projectId), queryFn: () => listCheckRuns(projectId) });

/** One check run with its results; asked again while it goes. */
export const checkRunQuery = (id: string) =>
  queryOptions({
    queryKey: checkKeys.run(id),
    queryFn: () => getCheckRun(id),
    refetchInterval: (q) => (q.state.data && !isGoing(q.state.data.status) ? false : CHECK_RUN_POLL_MS),
  });
