import { CheckCircle2, ChevronDown, ChevronRight, CircleSlash, Loader2, Star, XCircle } from 'lucide-react';
import { useId, useState } from 'react';
import type { ApprovalDecision } from '@/client';
import { Badge } from '@/components/ui/badge';
import { Tabs } from '@/components/ui/tabs';
import { ModelMarkdown } from '@/features/runs/answer';
import { cn, formatCost, formatNumber } from '@/lib/utils';
import type { AttemptLane } from './lanes';
import { LaneFlow } from './lane-flow';
import { useStoredLanes } from './stored-lanes';

/** How an attempt stands: running, or how it ended. */
export function AttemptStatus({ status }: { status: string }) {
  switch (status) {
    case 'running':
    case 'queued':
      return (
        <Badge variant="running">
          <Loader2 className="animate-spin" /> {status === 'queued' ? 'Queued' : 'Running'}
        </Badge>
      );
    case 'succeeded':
      return (
        <Badge variant="success">
          <CheckCircle2 /> Answered
        </Badge>
      );
    case 'cancelled':
      return (
        <Badge variant="warning">
          <CircleSlash /> Stopped
        </Badge>
      );
    case 'timed_out':
    case 'timeout':
      return (
        <Badge variant="error">
          <XCircle /> Timed out
        </Badge>
      );
    default:
      return (
        <Badge variant="error">
          <XCircle /> Failed
        </Badge>
      );
  }
}

/** "Attempt 2 · SQL (DuckDB)". */
export const laneTitle = (l: AttemptLane) => `Attempt ${l.attempt}${l.strategy ? ` · ${l.strategy}` : ''}`;

function LaneHeader({ lane, chosen }: { lane: AttemptLane; chosen?: boolean }) {
  return (
    <header className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs">
      <span className="font-medium text-foreground" data-testid="attempt-title">
        {laneTitle(lane)}
      </span>
      {chosen && (
        <Badge variant="success" data-testid="attempt-chosen">
          <Star /> Chosen
        </Badge>
      )}
      <AttemptStatus status={lane.status} />
      {lane.model && <span className="truncate font-mono text-muted-foreground">{lane.model}</span>}
    </header>
  );
}

function LaneAnswer({ lane }: { lane: AttemptLane }) {
  const answer = lane.answer ?? lane.view.answer;
  if (!answer) return null;
  return (
    <div className="rounded-lg border bg-card px-3 py-2" data-testid="attempt-answer">
      <p className="mb-0.5 text-[11px] font-medium tracking-wide text-muted-foreground uppercase">Its answer</p>
      <ModelMarkdown text={answer} className="text-sm" />
    </div>
  );
}

const laneWaiting = (l: AttemptLane) => l.status === 'running' && l.view.steps.length === 0;

/**
 * The attempts while they run: side by side on a wide screen (each lane streams its own steps),
 * as tabs on a narrow one. One Stop (in the run's footer) stops them all.
 */
export function AttemptLanes({
  lanes,
  live,
  decide,
}: {
  lanes: AttemptLane[];
  live?: boolean;
  /** Where a decision on an attempt's code goes (POST /runs/{id}/approval): one attempt waits at a time. */
  decide?: (decision: ApprovalDecision) => Promise<unknown>;
}) {
  const [chosenTab, setCurrent] = useState(lanes[0]?.attempt ?? 1);
  // On a narrow screen the attempt that waits for the user's approval is the tab shown.
  const current = lanes.find((l) => l.view.status === 'waiting_approval')?.attempt ?? chosenTab;
  const id = useId();
  return (
    <div className="space-y-2" data-testid="attempt-lanes" role="group" aria-label={`${lanes.length} attempts`}>
      <p className="text-xs text-muted-foreground">
        {lanes.length} attempts at once, each its own way; their answers are compared when they are done.
      </p>
      <Tabs
        label="Attempts"
        className="lg:hidden"
        items={lanes.map((l) => ({ value: String(l.attempt), text: laneTitle(l) }))}
        current={String(current)}
        onSelect={(v) => setCurrent(Number(v))}
      />
      {/* Wide screens give the lanes more than the conversation's column: it has room on both sides. */}
      <div className="gap-3 lg:grid lg:auto-cols-[minmax(15rem,1fr)] lg:grid-flow-col lg:overflow-x-auto xl:-mx-24 2xl:-mx-40">
        {lanes.map((l) => (
          <section
            key={l.attempt}
            id={`${id}-${l.attempt}`}
            aria-label={laneTitle(l)}
            className={cn('min-w-0 space-y-3 rounded-xl border bg-muted/30 p-3', l.attempt !== current && 'hidden lg:block')}
            data-testid="attempt-lane"
            data-attempt={l.attempt}
            data-status={l.status}
          >
            <LaneHeader lane={l} />
            {laneWaiting(l) && (
              <p className="flex items-center gap-2 text-xs text-muted-foreground">
                <Loader2 className="size-3.5 animate-spin" /> Thinking…
              </p>
            )}
            <LaneFlow view={l.view} live={live} decide={decide} />
            <LaneAnswer lane={l} />
          </section>
        ))}
      </div>
    </div>
  );
}

function LaneUsage({ lane }: { lane: AttemptLane }) {
  if (lane.tokensIn == null && lane.tokensOut == null) return null;
  return (
    <p className="text-xs text-muted-foreground tabular-nums">
      {formatNumber(lane.tokensIn ?? 0)} in · {formatNumber(lane.tokensOut ?? 0)} out tokens
      {lane.costUsd != null && ` · ${formatCost(lane.costUsd)}`}
    </p>
  );
}

/**
 * A finished run's attempts, one click from its answer: a row of buttons, each opening that
 * attempt's answer, its steps and code. A stored run's steps per attempt come from its events.
 */
export function AttemptsDetails({ runId, lanes, chosen }: { runId: string; lanes: AttemptLane[]; chosen: number | null }) {
  const [open, setOpen] = useState<number | null>(null);
  const id = useId();
  // A stored run lists its attempts but not their steps: those are read from its events, when asked for.
  const bare = lanes.every((l) => l.view.steps.length === 0);
  const stored = useStoredLanes(runId, bare && open != null);
  const shown = bare && stored.data?.length ? lanes.map((l) => ({ ...l, view: stored.data.find((s) => s.attempt === l.attempt)?.view ?? l.view })) : lanes;
  const lane = shown.find((l) => l.attempt === open);
  return (
    <div className="space-y-2" data-testid="attempts">
      <div className="flex flex-wrap items-center gap-1.5" role="group" aria-label="Attempts">
        <span className="text-xs text-muted-foreground">Attempts:</span>
        {shown.map((l) => (
          <button
            key={l.attempt}
            type="button"
            aria-expanded={open === l.attempt}
            aria-controls={open === l.attempt ? `${id}-panel` : undefined}
            onClick={() => setOpen(open === l.attempt ? null : l.attempt)}
            className={cn(
              'flex cursor-pointer items-center gap-1 rounded-full border px-2.5 py-0.5 text-xs',
              open === l.attempt ? 'border-primary bg-primary/10 text-primary' : 'text-muted-foreground hover:bg-muted hover:text-foreground',
            )}
            data-testid="attempt-toggle"
            data-attempt={l.attempt}
          >
            {open === l.attempt ? <ChevronDown className="size-3" /> : <ChevronRight className="size-3" />}
            {laneTitle(l)}
            {l.attempt === chosen && <Star className="size-3 fill-current" aria-label="chosen" />}
            {l.status !== 'succeeded' && <span className="text-destructive">({l.status === 'cancelled' ? 'stopped' : l.status.replace('_', ' ')})</span>}
          </button>
        ))}
      </div>
      {lane && (
        <section id={`${id}-panel`} className="space-y-3 rounded-xl border bg-muted/30 p-3" data-testid="attempt-panel" data-attempt={lane.attempt} aria-label={laneTitle(lane)}>
          <LaneHeader lane={lane} chosen={lane.attempt === chosen} />
          <LaneAnswer lane={lane} />
          <LaneUsage lane={lane} />
          {stored.isLoading && (
            <p className="flex items-center gap-2 text-xs text-muted-foreground">
              <Loader2 className="size-3.5 animate-spin" /> Loading its steps…
            </p>
          )}
          {stored.isError && <p className="text-xs text-destructive">Its steps could not be loaded.</p>}
          <LaneFlow view={lane.view} open />
        </section>
      )}
    </div>
  );
}
