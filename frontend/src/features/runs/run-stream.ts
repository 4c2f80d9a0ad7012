import type { QueryClient } from '@tanstack/react-query';
import { fileKeys } from '@/features/files/queries';
import { noteProposed } from '@/features/knowledge/proposed-notice';
import { projectKeys } from '@/features/projects/queries';
import { sessionKeys } from '@/features/sessions/queries';
import type { CellOut } from '@/client';
import { authFetch, ApiError } from '@/lib/api';
import { readSse, sleep } from '@/lib/sse';
import { toRunEvent } from './events';
import { runKeys } from './queries';
import { runErrorOf } from './run-errors';
import { isFinished } from './run-reducer';
import { useRunStore } from './run-store';

/** How this tab follows a run's stream: 'open' from the moment it follows the run (asked or attached), 'reconnecting' while it waits to try again after a drop; no entry once it no longer follows it. */
export type Connection = 'open' | 'reconnecting';

/** What a session's streams tell their owner (useSessionRuns). */
export type StreamListener = {
  connection: (runId: string, state: Connection | null) => void;
  /** The run's run.finished arrived and the session's history, refetched, holds it now. */
  finished: (runId: string) => void;
};

export type QueryBody = {
  query: string;
  file_ids?: string[];
  model?: string | null;
  /** Run `query` as the user's own code (POST /sessions/{id}/cells) instead of asking it. */
  cell?: CellOut;
  /** Independent attempts (1–5, API.md "Attempts and verdicts"); left out: the project's default. */
  attempts?: number;
};

/** How often a question answered "the server is busy" (503 server_busy) is asked again. */
export const BUSY_RETRIES = 3;
const BUSY_WAIT_MAX_MS = 10_000;

/**
 * The event streams of one session's runs, at most one per run, applied to the run store. Made
 * and closed by useSessionRuns: close() aborts every stream (the runs go on on the server, and
 * are re-attached from their last event when the session shows again).
 */
export class SessionStreams {
  /** run id → the stream following it; a question being asked has its own until its run has an id. */
  private readonly streams = new Map<string, AbortController>();
  private readonly asking = new Set<AbortController>();
  private closed = false;

  constructor(
    readonly sessionId: string,
    private readonly queryClient: QueryClient,
    private readonly listener: StreamListener,
  ) {}

  isAttached(runId: string) {
    return this.streams.has(runId);
  }

  /** This tab is asking a question whose run it has not heard of yet (a session runs one at a time: any run announced meanwhile is that one). */
  isAsking() {
    return this.asking.size > 0;
  }

  /**
   * Follows a run until run.finished: (re)attaches with GET /runs/{id}/events and
   * Last-Event-ID = the last applied seq, retrying with backoff when the network drops.
   * A run already followed is left to its stream.
   */
  async attach(runId: string): Promise<void> {
    if (this.closed || this.streams.has(runId)) return;
    const ac = new AbortController();
    this.streams.set(runId, ac);
    this.listener.connection(runId, 'open');
    useRunStore.getState().ensureRun(runId);
    await this.follow(runId, ac);
  }

  /** Stops following a run (it goes on on the server). */
  detach(runId: string) {
    this.streams.get(runId)?.abort();
    this.streams.delete(runId);
    this.listener.connection(runId, null);
  }

  /** Stops following every run and any question being asked; nothing is followed after. */
  close() {
    this.closed = true;
    for (const ac of [...this.streams.values(), ...this.asking]) ac.abort();
    this.streams.clear();
    this.asking.clear();
  }

  /**
   * Asks a question (POST /sessions/{id}/query) and streams its run, falling back to re-attaching
   * if the stream breaks; `started` gets the run's id with its first event. Rejects only when the
   * question is refused (no run was made); resolves when its run has finished, or the streams close.
   */
  async ask(body: QueryBody, started: (runId: string) => void): Promise<void> {
    if (this.closed) return;
    const ac = new AbortController();
    this.asking.add(ac);
    let runId: string | null = null;
    try {
      const res = await this.postQuery(body, ac.signal);
      await this.consume(res, (id) => {
        runId = id;
        this.asking.delete(ac);
        this.streams.set(id, ac);
        this.listener.connection(id, 'open');
        useRunStore.getState().ensureRun(id, body.query);
        if (body.cell) useRunStore.getState().setCell(id, body.cell);
        if (body.file_ids?.length) useRunStore.getState().setPinned(id, body.file_ids);
        started(id);
      });
    } catch (e) {
      if (!runId && !ac.signal.aborted) throw e;
    } finally {
      this.asking.delete(ac);
    }
    if (!runId || ac.signal.aborted) return;
    const view = useRunStore.getState().runs[runId];
    if (view && isFinished(view)) void this.finish(runId);
    else await this.follow(runId, ac);
  }

  /** POST /sessions/{id}/query (or /cells), asked again after the server's Retry-After while it says it is busy. */
  private async postQuery(body: QueryBody, signal: AbortSignal): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { cell, ...question } = body;
        return await authFetch(`/api/v1/sessions/${this.sessionId}/${cell ? 'cells' : 'query'}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify(cell ? { language: cell.language, code: body.query, source: cell.source ?? undefined } : question),
          signal,
        });
      } catch (e) {
        const again = runErrorOf(e).retry && e instanceof ApiError && e.retryAfter !== null;
        if (!again || attempt >= BUSY_RETRIES) throw e;
        await sleep(Math.min(e.retryAfter! * 1000, BUSY_WAIT_MAX_MS), signal);
      }
    }
  }

  /** Applies one SSE response's events; `first` hears the run id of the first one. */
  private async consume(res: Response, first?: (runId: string) => void) {
    if (!res.body) return;
    let seen = !first;
    await readSse(res.body, (m) => {
      // The agent's proposals for the team's knowledge: a notice in the session (the event still counts in the run's sequence below).
      if (m.event === 'knowledge.proposed') noteProposed(this.sessionId, m.data);
      const e = toRunEvent(m.event, m.data);
      if (!e) return;
      if (!seen) {
        seen = true;
        first?.(e.run_id);
      }
      useRunStore.getState().dispatch(e);
    });
  }

  private async follow(runId: string, ac: AbortController) {
    let delay = 500;
    while (!ac.signal.aborted) {
      const view = useRunStore.getState().runs[runId];
      if (view && isFinished(view)) break;
      try {
        const res = await authFetch(`/api/v1/runs/${runId}/events`, {
          headers: { 'Last-Event-ID': String(view?.lastSeq ?? 0), Accept: 'text/event-stream' },
          signal: ac.signal,
        });
        this.listener.connection(runId, 'open');
        delay = 500;
        await this.consume(res);
      } catch (e) {
        if (ac.signal.aborted) return;
        if (e instanceof ApiError && e.status >= 400 && e.status < 500) break;
      }
      const after = useRunStore.getState().runs[runId];
      if (after && isFinished(after)) break;
      this.listener.connection(runId, 'reconnecting');
      await sleep(delay, ac.signal);
      delay = Math.min(delay * 2, 8000);
    }
    if (!ac.signal.aborted) void this.finish(runId);
  }

  private async finish(runId: string) {
    this.streams.delete(runId);
    this.listener.connection(runId, null);
    // The run stays in the session's list until the refetched history holds it: dropped
    // earlier, a just-finished run would vanish from the page until the history came back.
    await this.queryClient.invalidateQueries({ queryKey: runKeys.session(this.sessionId) });
    this.listener.finished(runId);
    // The run's tokens and cost now count in its session's and project's totals (and budget).
    void this.queryClient.invalidateQueries({ queryKey: sessionKeys.all });
    void this.queryClient.invalidateQueries({ queryKey: projectKeys.all });
    // The files it read now list it under their versions.
    void this.queryClient.invalidateQueries({ queryKey: fileKeys.allVersions });
  }
}
