import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { toast } from 'sonner';
import { cancelRun, type CellOut, type RunOut } from '@/client';
import { isTerminal } from './events';
import { replyActions, type ReplyActions } from './mutations';
import { runKeys, runsQuery } from './queries';
import { RUN_ERRORS, refetchStale, runErrorOf } from './run-errors';
import { fromHistory, type RunView } from './run-reducer';
import { useRunStore } from './run-store';
import { SessionStreams, type Connection, type StreamListener } from './run-stream';

/** One run of the session as the chat shows it. */
export type SessionRun = {
  view: RunView;
  /** The run as the history has it; null for a run just asked, until the history holds it. */
  stored: RunOut | null;
  /** This tab has followed its stream (a finishing step folds, an answer box takes the focus). */
  live: boolean;
  reconnecting: boolean;
  /** The files pinned to its question. */
  fileIds: string[] | undefined;
  /** A cell's run: its language and source (null: a question). */
  cell: CellOut | null;
};

/** What this tab knows of the session's runs beyond the history. */
export type StreamState = {
  /** run id → the view built from its stream. */
  views: Record<string, RunView>;
  /** The run this tab's last question started, shown even before the history holds it. */
  started: string | null;
  connection: Record<string, Connection>;
  /** run id → the files pinned to the question this tab asked. */
  pinned: Record<string, string[]>;
  /** run id → the cells this tab ran (their language and source). */
  cells?: Record<string, CellOut>;
};

/**
 * The session's runs in order: each stored run as its stream shows it once the stream has
 * delivered an event (a run re-attached from its first event shows as stored until its replay
 * begins, so a waiting question or code block stays in place instead of flashing away), then the
 * run just asked if the history does not hold it yet.
 */
export function mergeRuns(history: RunOut[], stream: StreamState): SessionRun[] {
  const runs: SessionRun[] = history.map((stored) => {
    const view = stream.views[stored.id];
    // A view this tab kept of a run it no longer follows (it left the session mid-run) is stale once the history says the
    // run ended; a run it still follows shows as its stream tells it, however far the history is ahead.
    const stale = !!view && !stream.connection[stored.id] && isTerminal(stored.status) && !isTerminal(view.status);
    return {
      view: view && view.lastSeq > 0 && !stale ? view : fromHistory(stored),
      stored,
      live: !!view,
      reconnecting: stream.connection[stored.id] === 'reconnecting',
      fileIds: stored.file_ids ?? stream.pinned[stored.id],
      cell: stored.kind === 'cell' ? (stored.cell ?? stream.cells?.[stored.id] ?? { language: 'python' }) : null,
    };
  });
  const started = stream.started ? stream.views[stream.started] : undefined;
  if (started && !history.some((r) => r.id === started.runId)) {
    runs.push({
      view: started,
      stored: null,
      live: true,
      reconnecting: stream.connection[started.runId] === 'reconnecting',
      fileIds: stream.pinned[started.runId],
      cell: stream.cells?.[started.runId] ?? null,
    });
  }
  return runs;
}

/** Why the last question was refused, when that is worth more than a toast. */
export type Refusal = { detail: string; code: string | null; fix?: 'budget' };

export type Question = {
  query: string;
  model: string | null;
  fileIds: string[];
  /** A cell: `query` is the user's own code, run with no model. */
  cell?: CellOut;
  /** Independent attempts whose answers are compared (1–5); left out: the project's default. */
  attempts?: number;
};

/**
 * The one owner of a session's runs: loads the history, follows the streams of the runs still
 * going (re-attached after a reload or when the session shows again, closed when it goes), merges
 * both into the list the chat shows, and holds what the user does to them. A run another member
 * starts is `follow`ed when the session's live stream tells of it (features/live), not on a timer.
 */
export function useSessionRuns(projectId: string, sessionId: string) {
  const qc = useQueryClient();
  const history = useQuery(runsQuery(sessionId));
  const views = useRunStore((s) => s.runs);
  const pinned = useRunStore((s) => s.pinned);
  const cells = useRunStore((s) => s.cells);
  const [started, setStarted] = useState<string | null>(null);
  const [sending, setSending] = useState<string | null>(null);
  const [connection, setConnection] = useState<Record<string, Connection>>({});
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const streams = useRef<SessionStreams | null>(null);

  useEffect(() => {
    const listener: StreamListener = {
      connection: (runId, state) =>
        setConnection((c) => {
          if ((c[runId] ?? null) === state) return c;
          const next = { ...c };
          if (state) next[runId] = state;
          else delete next[runId];
          return next;
        }),
      // Until now the run showed from its stream; the history holds it from here.
      finished: (runId) => setStarted((id) => (id === runId ? null : id)),
    };
    const own = new SessionStreams(sessionId, qc, listener);
    streams.current = own;
    return () => {
      own.close();
      if (streams.current === own) streams.current = null;
      setStarted(null);
      setSending(null);
      setConnection({});
      setRefusal(null);
    };
  }, [qc, sessionId]);

  // Re-attach to any run the server says is still going (after a reload, or one started elsewhere).
  useEffect(() => {
    for (const run of history.data?.items ?? []) {
      if (!isTerminal(run.status)) void streams.current?.attach(run.id);
    }
  }, [history.data, sessionId]);

  const runs = useMemo(
    () => mergeRuns(history.data?.items ?? [], { views, started, connection, pinned, cells }),
    [history.data, views, started, connection, pinned, cells],
  );
  const active = runs.find((r) => !isTerminal(r.view.status))?.view ?? null;

  // "This session is busy" stands until the run it was about has ended.
  const activeId = active?.runId ?? null;
  const busyWith = useRef<string | null>(null);
  useEffect(() => {
    if (activeId) busyWith.current = activeId;
    else if (busyWith.current) {
      busyWith.current = null;
      setRefusal((r) => (r?.code && RUN_ERRORS[r.code]?.untilIdle ? null : r));
    }
  }, [activeId]);

  /** Asks a question as a new run; resolves false when it was refused (the composer gives the text back). */
  const ask = useCallback(
    ({ query, model, fileIds, cell, attempts }: Question): Promise<boolean> => {
      const own = streams.current;
      if (!own) return Promise.resolve(false);
      setRefusal(null);
      setSending(query);
      let runId: string | null = null;
      return own
        .ask({ query, model, file_ids: fileIds.length ? fileIds : undefined, cell, attempts }, (id) => {
          runId = id;
          setStarted(id);
          setSending(null);
          // The history must hold the run if the session shows again while it goes: leaving closes its stream.
          void qc.invalidateQueries({ queryKey: runKeys.session(sessionId) });
        })
        .then(
          () => {
            if (!runId) setSending(null);
            return true;
          },
          (e: unknown) => {
            setSending(null);
            const error = runErrorOf(e);
            refetchStale(qc, error, { projectId, sessionId });
            if (error.show === 'refusal') setRefusal({ detail: error.message(''), code: error.code, fix: error.fix });
            else if (error.show === 'default') toast.error(error.message('Could not send the question.'));
            return false;
          },
        );
    },
    [qc, projectId, sessionId],
  );

  const cancel = useMutation({
    mutationFn: async (runId: string) => (await cancelRun({ path: { run_id: runId } })).data!,
  });

  // A reply taken (or no longer awaited) lets the run go on: follow its stream, refetch its history.
  const replies: ReplyActions = useMemo(
    () =>
      replyActions((runId) => {
        void streams.current?.attach(runId);
        void qc.invalidateQueries({ queryKey: runKeys.session(sessionId) });
      }),
    [qc, sessionId],
  );

  /** A run asked elsewhere (another member, another tab): the refetched history holds it, and a run still going is attached to. */
  const follow = useCallback(
    (runId: string) => {
      // This tab's own question, announced before its stream told this tab its id (a proxy that
      // holds the stream back): the stream it asked on follows it, from where it gets cut.
      if (streams.current?.isAsking()) return;
      if (!history.data?.items.some((r) => r.id === runId)) void qc.invalidateQueries({ queryKey: runKeys.session(sessionId) });
    },
    [qc, sessionId, history.data],
  );

  return {
    follow,
    /** The history is loading for the first time. */
    loading: history.isLoading,
    /** The history has loaded: `runs` holds every run of the session. */
    loaded: !!history.data,
    /** The session has no stored run yet (its first question will name it). */
    isNew: history.data?.items.length === 0,
    runs,
    /** The question just sent, until its run starts (or it is refused). */
    sending,
    /** The run going on (or waiting for the user), if any. */
    active,
    refusal,
    ask,
    stop: cancel.mutate,
    /** The run a Stop was sent for, until the server took it. */
    stopping: cancel.isPending ? (cancel.variables ?? null) : null,
    replies,
  };
}
