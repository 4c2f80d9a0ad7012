import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';
import type { CellOut } from '@/client';
import type { RunEvent } from './events';
import { emptyRun, isFinished, reduceRun, type RunView } from './run-reducer';

/**
 * The views of the runs this tab has followed, built from their streams, and the files pinned to
 * the questions it asked. Persisted to sessionStorage so a reload (or coming back to a session)
 * resumes each stream with Last-Event-ID = lastSeq. Written by SessionStreams and read by
 * useSessionRuns only: components get runs from that hook.
 */
type RunStreamState = {
  runs: Record<string, RunView>;
  /** run id → the files pinned to its question (file_ids), for runs this tab started: Retry sends them again. */
  pinned: Record<string, string[]>;
  /** run id → what the cell this tab ran was (its language and source), until the history holds its run. */
  cells: Record<string, CellOut>;
  ensureRun: (runId: string, query?: string, model?: string | null) => void;
  dispatch: (e: RunEvent) => void;
  setPinned: (runId: string, fileIds: string[]) => void;
  setCell: (runId: string, cell: CellOut) => void;
};

export const useRunStore = create<RunStreamState>()(
  persist(
    (set) => ({
      runs: {},
      pinned: {},
      cells: {},
      setPinned: (runId, fileIds) => set((s) => ({ pinned: { ...s.pinned, [runId]: fileIds } })),
      setCell: (runId, cell) => set((s) => ({ cells: { ...s.cells, [runId]: cell } })),
      ensureRun: (runId, query, model) =>
        set((s) => (s.runs[runId] ? s : { runs: { ...s.runs, [runId]: emptyRun(runId, query, model ?? null) } })),
      dispatch: (e) =>
        set((s) => {
          const current = s.runs[e.run_id] ?? emptyRun(e.run_id);
          const next = reduceRun(current, e);
          return next === current ? s : { runs: { ...s.runs, [e.run_id]: next } };
        }),
    }),
    {
      name: 'wb.runs',
      storage: createJSONStorage(() => sessionStorage),
      // Version 1 added plans and checks to a run's view, version 2 the agent's questions and the
      // decisions on its code. Older views are dropped: their runs, if still going (or waiting),
      // are re-attached from history and replayed from the first event. Version 3 added the
      // starting sandbox and the pinned files. Version 4 added the attempts' lanes, the verdict and repairs.
      version: 4,
      migrate: () => ({ runs: {}, pinned: {}, cells: {} }),
      // Only unfinished runs need to survive a reload; finished ones come back from history.
      partialize: (s) => ({
        runs: Object.fromEntries(Object.entries(s.runs).filter(([, v]) => !isFinished(v))),
        pinned: s.pinned,
        cells: s.cells,
      }),
    },
  ),
);
