import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { RunEvent } from './events';
import { emptyRun, isFinished, reduceRun, type RunView } from './run-reducer';

/**
 * Stream state only: the live views of runs this tab has watched, and which run each session is
 * streaming. Persisted to sessionStorage so a reload can resume with Last-Event-ID = lastSeq.
 */
type RunStreamState = {
  runs: Record<string, RunView>;
  /** session id → run id currently being streamed by this tab. */
  live: Record<string, string>;
  /** session id → the query just sent, shown until run.started arrives. */
  sending: Record<string, string>;
  connection: Record<string, 'open' | 'reconnecting'>;
  /** run id → the files pinned to its question (file_ids), for runs this tab started: Retry sends them again. */
  pinned: Record<string, string[]>;
  ensureRun: (runId: string, query?: string, model?: string | null) => void;
  dispatch: (e: RunEvent) => void;
  setLive: (sessionId: string, runId: string | null) => void;
  setSending: (sessionId: string, query: string | null) => void;
  setConnection: (runId: string, s: 'open' | 'reconnecting' | null) => void;
  setPinned: (runId: string, fileIds: string[]) => void;
};

export const useRunStore = create<RunStreamState>()(
  persist(
    (set) => ({
      runs: {},
      live: {},
      sending: {},
      connection: {},
      pinned: {},
      setPinned: (runId, fileIds) => set((s) => ({ pinned: { ...s.pinned, [runId]: fileIds } })),
      ensureRun: (runId, query, model) =>
        set((s) => (s.runs[runId] ? s : { runs: { ...s.runs, [runId]: emptyRun(runId, query, model ?? null) } })),
      dispatch: (e) =>
        set((s) => {
          const current = s.runs[e.run_id] ?? emptyRun(e.run_id);
          const next = reduceRun(current, e);
          return next === current ? s : { runs: { ...s.runs, [e.run_id]: next } };
        }),
      setLive: (sessionId, runId) =>
        set((s) => {
          const live = { ...s.live };
          if (runId) live[sessionId] = runId;
          else delete live[sessionId];
          return { live };
        }),
      setSending: (sessionId, query) =>
        set((s) => {
          const sending = { ...s.sending };
          if (query) sending[sessionId] = query;
          else delete sending[sessionId];
          return { sending };
        }),
      setConnection: (runId, c) =>
        set((s) => {
          const connection = { ...s.connection };
          if (c) connection[runId] = c;
          else delete connection[runId];
          return { connection };
        }),
    }),
    {
      name: 'wb.runs',
      storage: createJSONStorage(() => sessionStorage),
      // Version 1 added plans and checks to a run's view, version 2 the agent's questions and the
      // decisions on its code. Older views are dropped: their runs, if still going (or waiting),
      // are re-attached from history and replayed from the first event. Version 3 added the
      // starting sandbox and the pinned files.
      version: 3,
      migrate: () => ({ runs: {}, pinned: {} }),
      // Only unfinished runs need to survive a reload; finished ones come back from history.
      partialize: (s) => ({
        runs: Object.fromEntries(Object.entries(s.runs).filter(([, v]) => !isFinished(v))),
        pinned: s.pinned,
      }),
    },
  ),
);
