import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Loader2, Sparkles } from 'lucide-react';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { cancelRunApiV1RunsRunIdCancelPost } from '@/client';
import { filesQuery } from '@/features/files/queries';
import { useRenameSession } from '@/features/sessions/mutations';
import { sessionQuery } from '@/features/sessions/queries';
import { Composer } from './composer';
import { isTerminal } from './events';
import { runsQuery } from './queries';
import { RUN_ERRORS, refetchStale, runErrorOf } from './run-errors';
import { fromHistory, type RunView as RunViewModel } from './run-reducer';
import { useRunStore } from './run-store';
import { attachRun, startQuery } from './run-stream';
import { changedFiles } from './run-files';
import { RunView, UserQuery } from './run-view';
import { ShortcutsDialog, useSessionShortcuts } from './shortcuts';

export function SessionChat({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const history = useQuery(runsQuery(sessionId));
  const liveRuns = useRunStore((s) => s.runs);
  const liveId = useRunStore((s) => s.live[sessionId]);
  const sending = useRunStore((s) => s.sending[sessionId]);
  const connection = useRunStore((s) => s.connection);
  const pinned = useRunStore((s) => s.pinned);
  const projectFiles = useQuery(filesQuery(projectId));
  const focusComposer = useCallback(() => document.querySelector<HTMLTextAreaElement>('textarea[data-composer]')?.focus(), []);
  const qc = useQueryClient();
  const session = useQuery(sessionQuery(sessionId));
  const rename = useRenameSession(projectId);
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  // Why the last question was refused when that is worth more than a toast (analysis disabled, budget spent, session busy).
  const [refusal, setRefusal] = useState<{ detail: string; code: string | null; fix?: 'budget' } | null>(null);

  // Re-attach to any run the server says is still going (after a reload, or one started elsewhere).
  useEffect(() => {
    for (const run of history.data?.items ?? []) {
      if (!isTerminal(run.status)) void attachRun(sessionId, run.id);
    }
  }, [history.data, sessionId]);

  const cancel = useMutation({
    mutationFn: async (runId: string) => (await cancelRunApiV1RunsRunIdCancelPost({ path: { run_id: runId } })).data!,
  });

  // A run re-attached from its first event shows as stored until its replay begins (a waiting
  // question or code block stays in place instead of flashing away).
  const runs: RunViewModel[] = (history.data?.items ?? []).map((r) => {
    const live = liveRuns[r.id];
    return live && live.lastSeq > 0 ? live : fromHistory(r);
  });
  if (liveId && liveRuns[liveId] && !runs.some((r) => r.runId === liveId)) runs.push(liveRuns[liveId]);
  const active = runs.find((r) => !isTerminal(r.status));
  const shortcuts = useSessionShortcuts(focusComposer, active && !cancel.isPending ? () => cancel.mutate(active.runId) : null);
  const busy = !!sending || !!active;
  const resendBlocked = busy ? 'Another question is still running in this session.' : null;
  const stored = new Map((history.data?.items ?? []).map((r) => [r.id, r]));
  const waitingFor = active?.status === 'waiting_input' ? 'input' : active?.status === 'waiting_approval' ? 'approval' : null;

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

  // The composer's hint leads to what the run waits for: the answer box or the code to approve.
  const showWaiting = () => {
    const target = scroller.current?.querySelector<HTMLElement>('[data-waiting-focus]');
    target?.scrollIntoView({ block: 'center', behavior: 'smooth' });
    target?.focus({ preventScroll: true });
  };

  const content = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  });
  // Charts and tables grow after they load: keep following the bottom while the user is there.
  useEffect(() => {
    const el = scroller.current;
    const inner = content.current;
    if (!el || !inner || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      if (stickToBottom.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(inner);
    return () => ro.disconnect();
  }, []);

  const send = ({ query, model, fileIds }: { query: string; model: string | null; fileIds: string[] }) => {
    stickToBottom.current = true;
    // A fresh session takes its first question as its title, so the sidebar says what it is about.
    const title = session.data?.title;
    if (history.data?.items.length === 0 && (!title || title === 'New session')) {
      rename.mutate({ id: sessionId, title: query.length > 60 ? `${query.slice(0, 57).trimEnd()}…` : query });
    }
    setRefusal(null);
    startQuery(sessionId, { query, model, file_ids: fileIds.length ? fileIds : undefined }).catch((e: unknown) => {
      const error = runErrorOf(e);
      refetchStale(qc, error, { projectId, sessionId });
      if (error.show === 'refusal') setRefusal({ detail: error.message(''), code: error.code, fix: error.fix });
      else if (error.show === 'default') toast.error(error.message('Could not send the question.'));
    });
  };

  return (
    <div className="flex h-full min-h-0 flex-col">
      <div
        ref={scroller}
        className="min-h-0 flex-1 overflow-y-auto"
        onScroll={(e) => {
          const el = e.currentTarget;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        <div ref={content} className="mx-auto max-w-3xl space-y-10 px-4 py-6 md:px-6">
          {history.isLoading && (
            <p className="flex items-center gap-2 text-sm text-muted-foreground">
              <Loader2 className="size-4 animate-spin" /> Loading history…
            </p>
          )}
          {history.data && runs.length === 0 && !sending && (
            <div className="flex flex-col items-center gap-2 py-16 text-center text-muted-foreground">
              <Sparkles className="size-6 text-primary" />
              <p className="text-base font-medium text-foreground">What would you like to know?</p>
              <p className="max-w-sm text-sm">
                Ask in plain words — the assistant writes and runs Python against this project's datasets and shows its work.
              </p>
            </div>
          )}
          {runs.map((r) => (
            <RunView
              key={r.runId}
              sessionId={sessionId}
              run={r}
              live={!!liveRuns[r.runId]}
              reconnecting={connection[r.runId] === 'reconnecting'}
              onStop={() => cancel.mutate(r.runId)}
              stopping={cancel.isPending && cancel.variables === r.runId}
              onResend={(query) =>
                send({
                  query,
                  model: stored.get(r.runId)?.model ?? null,
                  fileIds: stored.get(r.runId)?.file_ids ?? pinned[r.runId] ?? [],
                })
              }
              resendBlocked={resendBlocked}
              changed={changedFiles(
                r,
                stored.get(r.runId)?.files ?? [],
                projectFiles.data?.items ?? [],
                stored.get(r.runId)?.file_ids ?? pinned[r.runId],
              )}
            />
          ))}
          {sending && (
            <section className="space-y-4">
              <UserQuery text={sending} />
              <p className="flex items-center gap-2 text-sm text-muted-foreground">
                <Loader2 className="size-4 animate-spin" /> Starting…
              </p>
            </section>
          )}
        </div>
      </div>
      <div className="border-t bg-background/80 px-4 py-3 backdrop-blur md:px-6">
        <div className="mx-auto max-w-3xl">
          {refusal && (
            <div
              role="alert"
              className="mb-2 flex flex-wrap items-baseline gap-x-4 gap-y-1 rounded-lg border border-destructive/30 bg-destructive/5 p-3 text-sm text-destructive"
              data-testid="query-refused"
              data-code={refusal.code ?? undefined}
            >
              <p className="min-w-0 flex-1 basis-64">{refusal.detail}</p>
              {refusal.fix === 'budget' && (
                <Link to={`/projects/${projectId}#usage`} className="shrink-0 font-medium underline underline-offset-4 hover:no-underline">
                  Open project settings
                </Link>
              )}
            </div>
          )}
          <Composer
            projectId={projectId}
            busy={busy}
            waitingFor={waitingFor}
            onShowWaiting={showWaiting}
            onSend={send}
            onStop={active ? () => cancel.mutate(active.runId) : undefined}
          />
        </div>
      </div>
      <ShortcutsDialog open={shortcuts.open} onOpenChange={shortcuts.setOpen} />
    </div>
  );
}
