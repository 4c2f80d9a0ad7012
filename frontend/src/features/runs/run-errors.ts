import type { QueryClient, QueryKey } from '@tanstack/react-query';
import { projectKeys } from '@/features/projects/queries';
import { systemKeys } from '@/features/system/queries';
import { ApiError } from '@/lib/api';
import { runKeys } from './queries';

/** The session (and its project) a refused request was about: what its reaction refetches. */
export type RunErrorScope = { projectId: string; sessionId: string };

/**
 * How the app answers one refusal of a run request (asking, answering, deciding, following).
 * The message is always the server's `detail`, a sentence written for the user (API.md, "Errors").
 */
type Reaction = {
  /**
   * Where the user reads it: `refusal` above the composer until the next question; `none` when
   * what follows shows what happened (the run's stream, the login page); `default` by the control
   * that asked (a toast for the composer, a line under a form).
   */
  show: 'refusal' | 'none' | 'default';
  /** The server state the refusal says this page has wrong, refetched. */
  stale?: (scope: RunErrorScope) => QueryKey[];
  /** The run went on without this request (someone else answered or decided): follow its stream and history. */
  follow?: boolean;
  /** Asked again after the server's Retry-After, a few times, before it is shown. */
  retry?: boolean;
  /** The refusal stands until the session's active run has ended, then goes by itself. */
  untilIdle?: boolean;
  /** Where the user can fix the cause, linked from the refusal. */
  fix?: 'budget';
};

/** Every server error code the runs feature reacts to; any other code gets the default. */
export const RUN_ERRORS: Record<string, Reaction> = {
  // No sandbox can run code (analysis disabled, or its service down): the banner's status is stale.
  sandbox_unavailable: { show: 'refusal', stale: () => [systemKeys.sandbox] },
  // The project's budget is spent: its usage panel shows by how much, and the link leads there.
  budget_exceeded: { show: 'refusal', stale: ({ projectId }) => [projectKeys.detail(projectId)], fix: 'budget' },
  // Another question still runs, or one waits for the user's reply: the history shows which.
  session_busy: { show: 'refusal', stale: ({ sessionId }) => [runKeys.session(sessionId)], untilIdle: true },
  // The user's role does not allow it (made a viewer since the page loaded): the project says the role now.
  forbidden_role: { show: 'refusal', stale: ({ projectId }) => [projectKeys.detail(projectId), projectKeys.all] },
  // Every database connection is in use: asked again shortly.
  server_busy: { show: 'default', retry: true },
  // Answered or decided elsewhere (another tab), or the run ended: its stream shows what happened.
  not_waiting_input: { show: 'none', follow: true },
  not_waiting_approval: { show: 'none', follow: true },
};

const DEFAULT: Reaction = { show: 'default' };
/** A 401 has sent the user to the login page, which says why. */
const SIGNED_OUT: Reaction = { show: 'none' };

export type RunError = Reaction & {
  code: string | null;
  /** The sentence to show, or `fallback` when the failure carries none. */
  message: (fallback: string) => string;
};

/** What a failed run request means here: how it is shown and what it makes stale. */
export function runErrorOf(e: unknown): RunError {
  const api = e instanceof ApiError ? e : null;
  const reaction = api?.status === 401 ? SIGNED_OUT : ((api?.code && RUN_ERRORS[api.code]) || DEFAULT);
  return {
    ...reaction,
    code: api?.code ?? null,
    message: (fallback) => (e instanceof Error && e.message ? e.message : fallback),
  };
}

/** Refetches what the refusal says is stale. */
export function refetchStale(qc: QueryClient, error: RunError, scope: RunErrorScope) {
  for (const queryKey of error.stale?.(scope) ?? []) void qc.invalidateQueries({ queryKey });
}

/** The run no longer waits for this reply: the form that sent it shows nothing, the stream does. */
export const isFollowedError = (e: unknown) => !!runErrorOf(e).follow;
