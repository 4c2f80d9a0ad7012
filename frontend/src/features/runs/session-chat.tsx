import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Eye, Loader2, Upload } from 'lucide-react';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { toast } from 'sonner';
import type { FileOut, RunOut } from '@/client';
import { Link } from 'react-router';
import { useAuthStore } from '@/features/auth/auth-store';
import { fileKeys, filesQuery } from '@/features/files/queries';
import { useReplaceConfirm } from '@/features/files/replace-confirm';
import { uploadFile } from '@/features/files/upload';
import { can, useProjectRole } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { useRenameSession } from '@/features/sessions/mutations';
import { sessionQuery } from '@/features/sessions/queries';
import { RecordedBanner, useReplay } from '@/features/demo/replay';
import { CellRun } from './cell-run';
import { Composer } from './composer';
import { changedFiles } from './run-files';
import { isTerminal } from './events';
import { RunView, UserQuery, type Asked } from './run-view';
import { ProposedNotice } from '@/features/knowledge/proposed-notice';
import { CommentThread } from '@/features/comments/comment-thread';
import { useScrollToRun } from '@/features/live/scroll-to-run';
import { useSessionLive } from '@/features/live/use-session-live';
import { RunKnowledgeActions } from '@/features/knowledge/run-actions';
import { ShapedBy } from '@/features/knowledge/shaped-by';
import { isInherited } from '@/features/branches/api';
import { useArrival } from '@/features/branches/arrival';
import { BranchFromHere, useRunBranching } from '@/features/branches/branch-actions';
import { ArrivalNote, BranchDivider, PastHeader, useRestoredRefresh } from '@/features/branches/branch-past';
import { SessionStart } from './session-start';
import { ShortcutsDialog, useSessionShortcuts } from './shortcuts';
import { useSessionRuns, type Question } from './use-session-runs';

export function SessionChat({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const { loading, loaded, isNew, runs, sending, active, refusal, ask, stop, stopping, replies, follow: followRun } = useSessionRuns(projectId, sessionId);
  // Questions asked, titles and comments from others arrive through the session's live stream.
  useSessionLive(sessionId, followRun);
  useScrollToRun(loaded);
  const projectFiles = useQuery(filesQuery(projectId));
  const focusComposer = useCallback(() => document.querySelector<HTMLTextAreaElement>('textarea[data-composer]')?.focus(), []);
  const session = useQuery(sessionQuery(sessionId));
  const replay = useReplay(session.data?.recorded ? (runs[0]?.view.runId ?? null) : null);
  const rename = useRenameSession(projectId);
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const [text, setText] = useState('');
  const [pinned, setPinned] = useState<string[]>([]);
  const drop = useDropUploads(projectId, projectFiles.data?.items ?? []);
  const role = useProjectRole();
  const me = useAuthStore((s) => s.auth?.user.id);
  // A viewer reads the session as it goes; asking, uploading and stopping are for editors.
  const readOnly = !can(role, 'editor');

  const shortcuts = useSessionShortcuts(focusComposer, active && !stopping && !readOnly ? () => stop(active.runId) : null);
  const busy = !!sending || !!active;
  const resendBlocked = busy ? 'Another question is still running in this session.' : null;
  const waitingFor = active?.status === 'waiting_input' ? 'input' : active?.status === 'waiting_approval' ? 'approval' : null;

  // The composer's hint leads to what the run waits for: the answer box or the code to approve.
  const showWaiting = () => {
    const target = scroller.current?.querySelector<HTMLElement>('[data-waiting-focus]');
    target?.scrollIntoView({ block: 'center', behavior: 'smooth' });
    target?.focus({ preventScroll: true });
  };

  const content = useRef<HTMLDivElement>(null);
  // An empty session reads from its top (the datasets, the questions to try); a conversation follows its end.
  const starting = loaded && runs.length === 0 && !sending;
  const follow = useRef(true);
  follow.current = !starting;
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current && follow.current) el.scrollTop = el.scrollHeight;
  });
  // Charts and tables grow after they load: keep following the bottom while the user is there.
  useEffect(() => {
    const el = scroller.current;
    const inner = content.current;
    if (!el || !inner || typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(() => {
      if (stickToBottom.current && follow.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(inner);
    return () => ro.disconnect();
  }, []);

  const send = (question: Question) => {
    stickToBottom.current = true;
    // A fresh session takes its first question as its title, so the sidebar says what it is about.
    const title = session.data?.title;
    const { query } = question;
    if (isNew && !question.cell && (!title || title === 'New session')) {
      rename.mutate({ id: sessionId, title: query.length > 60 ? `${query.slice(0, 57).trimEnd()}…` : query });
    }
    return ask(question);
  };

  const arrivalNote = useArrival(loaded, send, focusComposer);
  const branching = useRunBranching(projectId, sessionId, session.data?.title || 'Untitled session');
  // A branch's history starts with its parent chain's runs up to the branch point: its past, read-only here.
  const past = runs.flatMap((r) => (r.stored && isInherited(r.stored) ? [r.stored] : []));
  const branch = session.data && (session.data.parent_session_id || past.length > 0) ? session.data : null;
  useRestoredRefresh(branch, !!active, active?.restored);
  // Drawn once the history is in: before, the past (and so the question it parts after) is unknown.
  const divider = branch && loaded && <BranchDivider session={branch} past={past} canEdit={!readOnly} />;

  const suggest = (question: string) => {
    setText(question);
    focusComposer();
  };

  return (
    <div
      className={cn('relative flex h-full min-h-0 flex-col', drop.over && 'ring-2 ring-primary ring-inset')}
      data-testid="session-chat"
      onDragOver={(e) => {
        if (readOnly || !e.dataTransfer.types.includes('Files')) return;
        e.preventDefault();
        drop.setOver(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) drop.setOver(false);
      }}
      onDrop={(e) => {
        if (readOnly || !e.dataTransfer.files.length) return;
        e.preventDefault();
        drop.setOver(false);
        drop.offer(Array.from(e.dataTransfer.files));
      }}
    >
      {drop.over && (
        <div className="pointer-events-none absolute inset-0 z-10 flex items-center justify-center bg-background/70 text-sm font-medium text-primary">
          <Upload className="mr-2 size-5" /> Drop to add to this project's datasets
        </div>
      )}
      <div
        ref={scroller}
        className="min-h-0 flex-1 overflow-y-auto"
        onScroll={(e) => {
          const el = e.currentTarget;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
        }}
      >
        <div ref={content} className="mx-auto max-w-3xl space-y-10 px-4 py-6 md:px-6">
          {loading && (
            <p className="flex items-center gap-2 text-sm text-muted-foreground">
              <Loader2 className="size-4 animate-spin" /> Loading history…
            </p>
          )}
          {starting && (
            <SessionStart
              projectId={projectId}
              pinned={pinned}
              onPin={(id) => setPinned((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p, id]))}
              onSuggest={suggest}
              uploading={drop.uploading}
              readOnly={readOnly}
            />
          )}
          {session.data?.recorded && runs.length > 0 && (
            <RecordedBanner
              playing={replay.playing}
              replayed={!!replay.view}
              onReplay={() => void replay.start()}
              onStop={replay.stop}
            />
          )}
          {arrivalNote && <ArrivalNote text={arrivalNote} />}
          {past.length > 0 && <PastHeader count={past.length} />}
          {past.length === 0 && divider}
          {runs.map(({ view: stream, stored, live, reconnecting, fileIds, cell }, i) => {
            const inherited = isInherited(stored);
            const finishedRun = !!stored && isTerminal(stored.status);
            const previous = i > 0 ? runs[i - 1].stored : null;
            // The recording replaying shows in place of its run (the history stays as stored).
            const r = replay.view && stream.runId === replay.view.runId ? replay.view : stream;
            const view = cell ? (
              <CellRun
                run={r}
                cell={cell}
                asked={askedOf(stored, me)}
                onStop={() => stop(r.runId)}
                stopping={stopping === r.runId}
              />
            ) : (
              <RunView
                run={r}
                live={live}
                reconnecting={reconnecting}
                replies={replies}
                onStop={() => stop(r.runId)}
                stopping={stopping === r.runId}
                // A retry asks as the run was asked: with as many attempts.
                onResend={
                  readOnly || inherited
                    ? undefined
                    : (query) => send({ query, model: stored?.model ?? null, fileIds: fileIds ?? [], ...(r.attempts.length > 1 && { attempts: r.attempts.length }) })
                }
                // Editing a question that is not the last asks it in a branch after the one before it.
                onEdit={
                  readOnly || inherited || i === runs.length - 1
                    ? undefined
                    : (query) => branching.editEarlier(previous, { query, model: stored?.model ?? null, fileIds: fileIds ?? [] })
                }
                resendBlocked={resendBlocked}
                changed={changedFiles(r, stored?.files ?? [], projectFiles.data?.items ?? [], fileIds)}
                asked={askedOf(stored, me)}
                // Which items it used is known once the history holds it finished.
                shapedBy={stored && isTerminal(stored.status) && <ShapedBy projectId={projectId} knowledge={stored.knowledge ?? []} />}
                actions={
                  !readOnly && stored && finishedRun ? (
                    <>
                      {!inherited && r.status === 'succeeded' && (
                        <RunKnowledgeActions projectId={projectId} runId={r.runId} query={r.query} answer={r.answer} />
                      )}
                      <BranchFromHere pending={branching.pending} onBranch={() => branching.branchAfter(stored)} />
                    </>
                  ) : null
                }
              />
            );
            return (
              <div key={r.runId} className="space-y-10">
                {inherited ? (
                  <div className="border-l-2 border-muted-foreground/20 pl-3 opacity-85 md:pl-4" data-testid="inherited-run">
                    {view}
                  </div>
                ) : (
                  <div>
                    {view}
                    {finishedRun && <CommentThread runId={r.runId} />}
                  </div>
                )}
                {inherited && i === past.length - 1 && divider}
              </div>
            );
          })}
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
          <ProposedNotice projectId={projectId} sessionId={sessionId} />
          {readOnly ? (
            <ViewerNote />
          ) : (
            <Composer
              projectId={projectId}
              busy={busy}
              waitingFor={waitingFor}
              onShowWaiting={showWaiting}
              onSend={send}
              onStop={active ? () => stop(active.runId) : undefined}
              draft={{ text, setText, pinned, setPinned }}
            />
          )}
        </div>
      </div>
      <ShortcutsDialog open={shortcuts.open} onOpenChange={shortcuts.setOpen} />
      {drop.dialog}
    </div>
  );
}

/** Who asked a run and when: a run not in the history yet is the one this tab just asked. */
export function askedOf(stored: RunOut | null, me: string | undefined): Asked {
  if (!stored) return { by: 'you', at: null };
  const by = stored.asked_by ? (stored.asked_by.user_id === me ? 'you' : stored.asked_by.email) : null;
  return { by, at: stored.created_at };
}

/** In place of the question box for a viewer: why there is none, and how to get one. */
export function ViewerNote() {
  return (
    <p className="flex items-start gap-2.5 rounded-2xl border border-dashed bg-muted/40 px-4 py-3 text-sm text-muted-foreground" data-testid="viewer-note">
      <Eye className="mt-0.5 size-4 shrink-0" />
      <span>
        You are a viewer: you can follow the questions and answers as they come, but not ask. An owner can make you an editor.
      </span>
    </p>
  );
}

/**
 * Files dropped on the chat join the project's datasets, as the dataset panel's uploads do (a name
 * the project has asks before it becomes a new version); the agent reads them from the next question.
 */
function useDropUploads(projectId: string, existing: FileOut[]) {
  const qc = useQueryClient();
  const [over, setOver] = useState(false);
  const [uploading, setUploading] = useState<string[]>([]);
  const upload = (files: File[]) => {
    for (const file of files) {
      setUploading((u) => [...u, file.name]);
      uploadFile(projectId, file, () => undefined)
        .then((added) => {
          toast.success(`${added.name} is in the project's datasets (v${added.version}).`);
          void qc.invalidateQueries({ queryKey: fileKeys.project(projectId) });
          void qc.invalidateQueries({ queryKey: fileKeys.allVersions });
        })
        .catch((e: unknown) => toast.error(e instanceof Error ? e.message : `${file.name} could not be added.`))
        .finally(() => setUploading((u) => u.filter((n) => n !== file.name)));
    }
  };
  const { offer, dialog } = useReplaceConfirm(existing, upload);
  return { over, setOver, uploading, offer, dialog };
}
