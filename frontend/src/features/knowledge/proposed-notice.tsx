import { Lightbulb, X } from 'lucide-react';
import { Link } from 'react-router';
import { create } from 'zustand';

/**
 * The agent's proposals for the team's knowledge a session's stream announced
 * (`knowledge.proposed`, after a run finished), by session, until the user dismisses the notice.
 */
type ProposedState = {
  bySession: Record<string, number>;
  note: (sessionId: string, count: number) => void;
  dismiss: (sessionId: string) => void;
};

export const useProposedStore = create<ProposedState>()((set) => ({
  bySession: {},
  note: (sessionId, count) => set((s) => ({ bySession: { ...s.bySession, [sessionId]: (s.bySession[sessionId] ?? 0) + count } })),
  dismiss: (sessionId) =>
    set((s) => {
      const { [sessionId]: _gone, ...rest } = s.bySession;
      return { bySession: rest };
    }),
}));

/** How many items a `knowledge.proposed` event's data proposes (0 for data it cannot read). */
export function proposedCount(data: string): number {
  try {
    const items = (JSON.parse(data) as { items?: unknown }).items;
    return Array.isArray(items) ? items.length : 0;
  } catch {
    return 0;
  }
}

/** Notes a `knowledge.proposed` event of a session's stream. */
export function noteProposed(sessionId: string, data: string) {
  const n = proposedCount(data);
  if (n > 0) useProposedStore.getState().note(sessionId, n);
}

export const proposedText = (n: number) =>
  `The agent proposed ${n === 1 ? 'an item' : `${n} items`} for the team's knowledge — review ${n === 1 ? 'it' : 'them'} before ${n === 1 ? 'it reaches' : 'they reach'} a question.`;

/** "The agent proposed 2 items for the team's knowledge — review", linking to the Knowledge panel. */
export function ProposedNotice({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const count = useProposedStore((s) => s.bySession[sessionId] ?? 0);
  const dismiss = useProposedStore((s) => s.dismiss);
  if (!count) return null;
  return (
    <div role="status" className="mb-2 flex items-center gap-2 rounded-lg border border-amber-500/30 bg-amber-500/5 px-3 py-2 text-sm" data-testid="proposed-notice">
      <Lightbulb className="size-4 shrink-0 text-amber-600" />
      <p className="min-w-0 flex-1">
        {proposedText(count)}{' '}
        <Link to={`/projects/${projectId}/knowledge?status=proposed`} className="font-medium underline underline-offset-4 hover:no-underline" onClick={() => dismiss(sessionId)}>
          Review
        </Link>
      </p>
      <button type="button" aria-label="Dismiss" className="cursor-pointer rounded-sm opacity-60 hover:opacity-100" onClick={() => dismiss(sessionId)}>
        <X className="size-4" />
      </button>
    </div>
  );
}
