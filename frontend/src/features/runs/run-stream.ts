import { projectKeys } from '@/features/projects/queries';
import { sessionKeys } from '@/features/sessions/queries';
import { authFetch, ApiError } from '@/lib/api';
import { readSse } from '@/lib/sse';
import { queryClient } from '@/lib/query-client';
import { toRunEvent } from './events';
import { isFinished } from './run-reducer';
import { useRunStore } from './run-store';
import { runKeys } from './queries';
import { runErrorOf } from './run-errors';

const controllers = new Map<string, AbortController>();

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });

async function onFinished(sessionId: string, runId: string) {
  const store = useRunStore.getState();
  store.setConnection(runId, null);
  controllers.delete(runId);
  // The run stays the session's live one until the refetched history holds it: cleared
  // earlier, a just-finished run would vanish from the page until the history came back.
  await queryClient.invalidateQueries({ queryKey: runKeys.session(sessionId) });
  if (useRunStore.getState().live[sessionId] === runId) store.setLive(sessionId, null);
  // The run's tokens and cost now count in its session's and project's totals (and budget).
  void queryClient.invalidateQueries({ queryKey: sessionKeys.all });
  void queryClient.invalidateQueries({ queryKey: projectKeys.all });
}

/** Consumes one SSE response, dispatching events; returns the run id it saw (if any). */
async function consume(
  res: Response,
  sessionId: string,
  knownRunId: string | null,
  onRunId?: (runId: string) => void,
): Promise<string | null> {
  let runId = knownRunId;
  const store = useRunStore.getState();
  if (!res.body) return runId;
  await readSse(res.body, (m) => {
    const e = toRunEvent(m.event, m.data);
    if (!e) return;
    if (!runId) {
      runId = e.run_id;
      const query = useRunStore.getState().sending[sessionId] ?? '';
      store.ensureRun(runId, query);
      store.setLive(sessionId, runId);
      store.setSending(sessionId, null);
      onRunId?.(e.run_id);
    }
    store.dispatch(e);
  });
  return runId;
}

/**
 * Follows a run until run.finished: (re)attaches with GET /runs/{id}/events and
 * Last-Event-ID = the last applied seq, retrying with backoff when the network drops.
 */
export async function attachRun(sessionId: string, runId: string) {
  if (controllers.has(runId)) return;
  const ac = new AbortController();
  controllers.set(runId, ac);
  const store = useRunStore.getState();
  store.ensureRun(runId);
  store.setLive(sessionId, runId);
  await follow(sessionId, runId, ac);
}

async function follow(sessionId: string, runId: string, ac: AbortController) {
  const store = useRunStore.getState();
  let delay = 500;
  while (!ac.signal.aborted) {
    const view = useRunStore.getState().runs[runId];
    if (view && isFinished(view)) break;
    try {
      const res = await authFetch(`/api/v1/runs/${runId}/events`, {
        headers: { 'Last-Event-ID': String(view?.lastSeq ?? 0), Accept: 'text/event-stream' },
        signal: ac.signal,
      });
      store.setConnection(runId, 'open');
      delay = 500;
      await consume(res, sessionId, runId);
    } catch (e) {
      if (ac.signal.aborted) return;
      if (e instanceof ApiError && e.status >= 400 && e.status < 500) break;
    }
    const after = useRunStore.getState().runs[runId];
    if (after && isFinished(after)) break;
    store.setConnection(runId, 'reconnecting');
    await sleep(delay, ac.signal);
    delay = Math.min(delay * 2, 8000);
  }
  if (!ac.signal.aborted) void onFinished(sessionId, runId);
}

/** How often a question answered "the server is busy" (503 server_busy) is asked again. */
export const BUSY_RETRIES = 3;
const BUSY_WAIT_MAX_MS = 10_000;

/** POST /sessions/{id}/query, asked again after the server's Retry-After while it says it is busy. */
async function postQuery(sessionId: string, body: object, signal: AbortSignal): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await authFetch(`/api/v1/sessions/${sessionId}/query`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (e) {
      const again = runErrorOf(e).retry && e instanceof ApiError && e.retryAfter !== null;
      if (!again || attempt >= BUSY_RETRIES) throw e;
      await sleep(Math.min(e.retryAfter! * 1000, BUSY_WAIT_MAX_MS), signal);
    }
  }
}

/** Starts a query (POST /sessions/{id}/query) and streams it; falls back to re-attaching if the stream breaks. */
export async function startQuery(sessionId: string, body: { query: string; file_ids?: string[]; model?: string | null }) {
  const store = useRunStore.getState();
  store.setSending(sessionId, body.query);
  const ac = new AbortController();
  let runId: string | null = null;
  try {
    const res = await postQuery(sessionId, body, ac.signal);
    runId = await consume(res, sessionId, null, (id) => {
      runId = id;
      controllers.set(id, ac);
      if (body.file_ids?.length) store.setPinned(id, body.file_ids);
    });
  } catch (e) {
    if (!runId) {
      store.setSending(sessionId, null);
      throw e;
    }
  }
  if (!runId) {
    store.setSending(sessionId, null);
    return;
  }
  const view = useRunStore.getState().runs[runId];
  if (view && isFinished(view)) void onFinished(sessionId, runId);
  else if (!ac.signal.aborted) await follow(sessionId, runId, ac);
}

export function detachRun(runId: string) {
  controllers.get(runId)?.abort();
  controllers.delete(runId);
}

export const isAttached = (runId: string) => controllers.has(runId);
