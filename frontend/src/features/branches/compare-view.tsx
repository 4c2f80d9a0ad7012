import { useQuery } from '@tanstack/react-query';
import { ArrowLeftRight, ChevronDown, ChevronRight, GitBranch, Loader2 } from 'lucide-react';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import type { RunOut, SessionOut } from '@/client';
import { Button } from '@/components/ui/button';
import { Tabs } from '@/components/ui/tabs';
import { runsQuery } from '@/features/runs/queries';
import { sessionQuery } from '@/features/sessions/queries';
import { cn } from '@/lib/utils';
import type { BranchNode } from './api';
import { alignHistories } from './compare-diff';
import { CompareRun } from './compare-parts';
import { treeQuery } from './queries';

type Side = 'left' | 'right';

/** Every session of a tree, depth first, with its depth (for the pickers). */
function sessionsOf(node: BranchNode | undefined, depth = 0): { session: SessionOut; depth: number }[] {
  return node ? [{ session: node.session, depth }, ...(node.children ?? []).flatMap((c) => sessionsOf(c, depth + 1))] : [];
}

/** A picker of the sessions of the tree to compare with. */
function SessionPicker({ label, value, options, onChange }: { label: string; value: string; options: { session: SessionOut; depth: number }[]; onChange: (id: string) => void }) {
  return (
    <label className="flex min-w-0 flex-1 basis-56 flex-col gap-1 text-xs text-muted-foreground">
      {label}
      <select
        className="h-8 min-w-0 rounded-md border bg-background px-2 text-sm text-foreground"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-label={label}
      >
        {!options.some((o) => o.session.id === value) && <option value={value}>…</option>}
        {options.map(({ session, depth }) => (
          <option key={session.id} value={session.id}>
            {`${'\u2003'.repeat(depth)}${depth ? '↳ ' : ''}${session.title || 'Untitled session'}`}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * Two sessions of a tree side by side from where they part: the common past on one line (opened
 * on request), then each side's questions paired in order, with the numbers and table rows that
 * differ marked. At a phone's width the two sides become tabs.
 */
export function CompareView({ projectId, leftId, rightId }: { projectId: string; leftId: string; rightId: string }) {
  const navigate = useNavigate();
  const left = useQuery(sessionQuery(leftId));
  const right = useQuery(sessionQuery(rightId));
  const leftRuns = useQuery(runsQuery(leftId));
  const rightRuns = useQuery(runsQuery(rightId));
  const tree = useQuery({ ...treeQuery(rightId), meta: { silent: true } });
  const [pastOpen, setPastOpen] = useState(false);
  const [side, setSide] = useState<Side>('right');
  const go = (l: string, r: string) => void navigate(`/projects/${projectId}/compare/${l}/${r}`, { replace: true });
  const options = sessionsOf(tree.data);
  const title = (s: SessionOut | undefined) => s?.title || 'Untitled session';

  if (left.error || right.error) return <p className="p-8 text-sm text-muted-foreground">One of these sessions could not be found.</p>;
  const loading = !leftRuns.data || !rightRuns.data;
  const { common, pairs } = alignHistories<RunOut>(leftRuns.data?.items ?? [], rightRuns.data?.items ?? []);
  const sideClass = (s: Side) => cn('min-w-0', side !== s && 'hidden md:block');

  return (
    <div className="h-full overflow-y-auto" data-testid="compare-view">
      <div className="mx-auto max-w-6xl space-y-6 px-4 py-6 md:px-6">
        <header className="space-y-3">
          <h1 className="flex items-center gap-2 text-lg font-semibold">
            <GitBranch className="size-5 text-primary" /> Compare branches
          </h1>
          <div className="flex flex-wrap items-end gap-2">
            <SessionPicker label="Left" value={leftId} options={options} onChange={(id) => go(id, rightId)} />
            <Button variant="ghost" size="icon-sm" aria-label="Swap the sides" title="Swap the sides" onClick={() => go(rightId, leftId)}>
              <ArrowLeftRight />
            </Button>
            <SessionPicker label="Right" value={rightId} options={options} onChange={(id) => go(leftId, id)} />
          </div>
        </header>
        {loading ? (
          <p className="flex items-center gap-2 text-sm text-muted-foreground">
            <Loader2 className="size-4 animate-spin" /> Loading both histories…
          </p>
        ) : (
          <>
            <div className="rounded-lg border border-dashed bg-muted/30 text-sm" data-testid="compare-common">
              <button
                type="button"
                className="flex w-full cursor-pointer items-center gap-2 px-3 py-2 text-left text-muted-foreground hover:text-foreground"
                aria-expanded={pastOpen}
                onClick={() => setPastOpen(!pastOpen)}
                disabled={common.length === 0}
              >
                {pastOpen ? <ChevronDown className="size-4 shrink-0" /> : <ChevronRight className="size-4 shrink-0" />}
                <span className="min-w-0 flex-1">
                  {common.length === 0
                    ? 'No common past: the two sessions differ from their first question.'
                    : `${common.length} question${common.length === 1 ? '' : 's'} in common, up to: “${common[common.length - 1].query}”`}
                </span>
              </button>
              {pastOpen && (
                <ol className="list-decimal space-y-1 border-t px-3 py-2 pl-8 text-muted-foreground">
                  {common.map((r) => (
                    <li key={r.id}>{r.query}</li>
                  ))}
                </ol>
              )}
            </div>
            <Tabs
              label="Side shown"
              className="md:hidden"
              items={[
                { value: 'left', text: `Left: ${title(left.data)}` },
                { value: 'right', text: `Right: ${title(right.data)}` },
              ]}
              current={side}
              onSelect={setSide}
            />
            <div className="grid gap-x-6 md:grid-cols-2">
              {(['left', 'right'] as const).map((s) => {
                const session = s === 'left' ? left.data : right.data;
                return (
                  <h2 key={s} className={cn(sideClass(s), 'truncate border-b pb-2 text-sm font-semibold')} data-testid={`compare-title-${s}`}>
                    <Link to={`/projects/${projectId}/sessions/${s === 'left' ? leftId : rightId}`} className="hover:underline">
                      {title(session)}
                    </Link>
                  </h2>
                );
              })}
            </div>
            {pairs.length === 0 && <p className="text-sm text-muted-foreground">Both sides end where they part: nothing differs yet.</p>}
            {pairs.map(([a, b], i) => (
              <div key={`${a?.id}-${b?.id}`} className="grid gap-6 border-b pb-6 md:grid-cols-2" data-testid="compare-pair" data-index={i}>
                <div className={sideClass('left')} data-testid="compare-side-left">
                  <CompareRun run={a} other={b} />
                </div>
                <div className={sideClass('right')} data-testid="compare-side-right">
                  <CompareRun run={b} other={a} />
                </div>
              </div>
            ))}
          </>
        )}
      </div>
    </div>
  );
}
