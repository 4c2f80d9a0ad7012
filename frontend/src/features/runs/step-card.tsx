import { AlertTriangle, Ban, ChevronDown, ChevronRight, Loader2, RotateCcw } from 'lucide-react';
import { useEffect, useState } from 'react';
import type { ApprovalDecision } from '@/client';
import { CodeBlock } from '@/components/code-block';
import { cn, formatDuration, formatTokens } from '@/lib/utils';
import { RevisionNote } from './answer-check';
import { ArtifactView } from './artifact-view';
import { groupArtifacts } from './artifacts';
import { ApprovalNote, CodeReview } from './code-review';
import type { StreamArtifact } from './events';
import type { ApprovalView, StepView, VerificationView } from './run-reducer';
import { StepQueries } from './step-queries';
import { WaitingDot } from './waiting-dot';

const LONG_OUTPUT_LINES = 12;

/**
 * Splits the model's streamed text into its prose ("thought") and the code it is writing, so
 * the code can be shown as code while it streams, before step.code delivers the final version.
 */
export function splitThought(text: string): { thought: string; draft: string | null } {
  const m = text.match(/<code>|```(?:python|py)?\n?/);
  const prose = (m ? text.slice(0, m.index) : text).replace(/^\s*Thought:\s*/i, '').trim();
  if (!m) return { thought: prose, draft: null };
  const draft = text.slice((m.index ?? 0) + m[0].length).replace(/^\n/, '').split(/<\/code>|```/)[0];
  return { thought: prose, draft };
}

/** The first lines of a long text, with "Show all N lines" to see the rest. */
function useClipped(text: string) {
  const lines = text.split('\n');
  const long = lines.length > LONG_OUTPUT_LINES;
  const [open, setOpen] = useState(!long);
  const toggle = long ? (
    <button
      type="button"
      className="flex cursor-pointer items-center gap-1 text-[11px] font-medium tracking-wide normal-case hover:text-foreground"
      onClick={() => setOpen(!open)}
      aria-expanded={open}
    >
      {open ? <ChevronDown className="size-3" /> : <ChevronRight className="size-3" />}
      {open ? 'Collapse' : `Show all ${lines.length} lines`}
    </button>
  ) : null;
  return { shown: open ? text : lines.slice(0, LONG_OUTPUT_LINES).join('\n') + '\n…', toggle };
}

export function OutputBlock({ output }: { output: string }) {
  const { shown, toggle } = useClipped(output);
  return (
    <div className="rounded-lg border bg-code">
      <div className="flex items-center justify-between px-3 pt-2 text-[11px] font-medium tracking-wide text-muted-foreground uppercase">
        Output
        {toggle}
      </div>
      <pre className="overflow-x-auto px-3 pt-1 pb-2 font-mono text-xs leading-relaxed whitespace-pre" data-testid="step-output">
        {shown}
      </pre>
    </div>
  );
}

export function ErrorBlock({ error }: { error: string }) {
  const { shown, toggle } = useClipped(error);
  return (
    <div role="alert" className="rounded-lg border border-destructive/30 bg-destructive/5 p-3">
      <div className="mb-1 flex items-center justify-between text-[11px] font-medium tracking-wide text-destructive uppercase">
        Error
        {toggle}
      </div>
      <pre className="overflow-x-auto font-mono text-xs whitespace-pre-wrap text-destructive" data-testid="step-error">
        {shown}
      </pre>
    </div>
  );
}

export function StepCard({
  step,
  artifacts,
  live,
  nextStep,
  revision,
  approval,
  review,
  defaultOpen,
}: {
  step: StepView;
  artifacts: StreamArtifact[];
  live?: boolean;
  /** The step after this one, if any: where the agent recovered from this step's error. */
  nextStep?: number;
  /**
   * The check of this step's final answer asked for a revision: the step's error is that request
   * (addressed to the agent), not a failure of the code, and is shown as the check's reason.
   */
  revision?: VerificationView;
  /** Review mode: the user's decision on this step's code (undecided while it waits). */
  approval?: ApprovalView;
  /** The run waits for approval of this step's code: where to send the decision. */
  review?: (decision: ApprovalDecision) => Promise<unknown>;
  /**
   * Whether the step shows its body until the user opens or closes it: by default a step shows
   * while it runs (or waits) and folds to its header once finished.
   */
  defaultOpen?: boolean;
}) {
  const { thought, draft } = splitThought(step.thought);
  const code = step.code ?? draft;
  const waiting = !!review && approval?.decision == null && code != null;
  const rejected = approval?.decision === 'reject';
  const running = live && !step.finished && !waiting;
  const failed = step.error && !revision;
  const [userOpen, setUserOpen] = useState<boolean | null>(null);
  // Code waiting for approval always shows: it is what the user has to decide on.
  const open = waiting || (userOpen ?? defaultOpen ?? !step.finished);
  const toggle = () => setUserOpen(!open);
  return (
    <article
      className={cn(
        'space-y-3 rounded-xl border bg-card p-4 shadow-xs',
        !open && 'py-2.5',
        failed && 'border-destructive/40',
        waiting && 'border-amber-500/40 ring-2 ring-amber-500/10',
      )}
      data-testid="step-card"
      data-step={step.index}
      data-open={open}
    >
      <header
        className={cn('flex items-center gap-2 text-xs text-muted-foreground', !waiting && 'cursor-pointer select-none')}
        onClick={waiting ? undefined : toggle}
      >
        <span className="shrink-0 rounded-md bg-muted px-1.5 py-0.5 font-medium whitespace-nowrap text-foreground">Step {step.index}</span>
        {running && <Loader2 className="size-3.5 animate-spin" aria-label="Step running" />}
        {running && <RunningFor />}
        {waiting && (
          <span className="flex items-center gap-1.5 font-medium text-amber-700 dark:text-amber-400">
            <WaitingDot /> waiting for your approval
          </span>
        )}
        {rejected && (
          <span className="flex items-center gap-1">
            <Ban className="size-3.5" />
            {nextStep != null ? `rejected — the agent tried again in step ${nextStep}` : 'rejected — did not run'}
          </span>
        )}
        {revision && (
          <span className="flex items-center gap-1">
            <RotateCcw className="size-3.5" />
            {nextStep != null ? `revision requested — continued in step ${nextStep}` : live ? 'revision requested — the agent goes on' : 'revision requested'}
          </span>
        )}
        {failed && (
          <span className="flex items-center gap-1 text-destructive">
            <AlertTriangle className="size-3.5" />
            {nextStep != null ? `error — retried in step ${nextStep}` : live ? 'error — the agent will try again' : 'error'}
          </span>
        )}
        <span className="ml-auto shrink-0 text-right tabular-nums">
          {step.finished &&
            [
              // A rejected step did not run: it took no time, only the tokens of writing it.
              step.durationMs != null && !rejected && formatDuration(step.durationMs),
              step.tokensIn + step.tokensOut > 0 && formatTokens(step.tokensIn + step.tokensOut),
            ]
              .filter(Boolean)
              .join(' · ')}
        </span>
        {!waiting && (
          <button
            type="button"
            className="-m-1 shrink-0 cursor-pointer rounded p-1 hover:bg-muted hover:text-foreground"
            aria-expanded={open}
            aria-label={open ? `Fold step ${step.index}` : `Show step ${step.index}`}
            onClick={(e) => {
              e.stopPropagation();
              toggle();
            }}
          >
            {open ? <ChevronDown className="size-3.5" /> : <ChevronRight className="size-3.5" />}
          </button>
        )}
      </header>
      {!open && thought && (
        <p className="-mt-1.5 truncate text-sm text-muted-foreground" data-testid="step-preview">
          {thought.split('\n')[0]}
        </p>
      )}
      {open && (
        <>
          {thought && <p className="text-sm leading-relaxed whitespace-pre-wrap text-muted-foreground" data-testid="step-thought">{thought}</p>}
          {waiting && review !== undefined && code != null ? (
            <CodeReview key={code} decide={review} code={code} />
          ) : (
            code && <CodeBlock code={code} className={cn(rejected && 'opacity-60')} />
          )}
          {approval && <ApprovalNote approval={approval} />}
          <StepQueries queries={step.queries} />
          {step.output && <OutputBlock output={step.output} />}
          {revision && <RevisionNote check={revision} />}
          {failed && step.error && <ErrorBlock error={step.error} />}
        </>
      )}
      {/* A step's results stay in view when it folds: the chart the user saw appear does not fold away. */}
      {groupArtifacts(artifacts).map((i) => (
        <ArtifactView key={i.artifact.id} artifact={i.artifact} csv={i.csv} />
      ))}
    </article>
  );
}

/** How long the running step has been running (from when this view saw it start), once it
 * takes more than a moment; what it prints shows below as it comes. */
function RunningFor() {
  const [since] = useState(() => Date.now());
  const [now, setNow] = useState(since);
  useEffect(() => {
    const tick = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(tick);
  }, []);
  const seconds = Math.floor((now - since) / 1000);
  if (seconds < 2) return null;
  return (
    <span className="tabular-nums" data-testid="step-elapsed">
      running for {seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`}
    </span>
  );
}
