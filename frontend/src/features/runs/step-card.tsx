import { AlertTriangle, ChevronDown, ChevronRight, Loader2, RotateCcw } from 'lucide-react';
import { useState } from 'react';
import { CodeBlock } from '@/components/code-block';
import { cn, formatDuration, formatTokens } from '@/lib/utils';
import { RevisionNote } from './answer-check';
import { ArtifactView } from './artifact-view';
import type { StreamArtifact } from './events';
import type { StepView, VerificationView } from './run-reducer';

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

export function OutputBlock({ output }: { output: string }) {
  const lines = output.split('\n');
  const long = lines.length > LONG_OUTPUT_LINES;
  const [open, setOpen] = useState(!long);
  return (
    <div className="rounded-lg border bg-code">
      <div className="flex items-center justify-between px-3 pt-2 text-[11px] font-medium tracking-wide text-muted-foreground uppercase">
        Output
        {long && (
          <button type="button" className="flex cursor-pointer items-center gap-1 normal-case hover:text-foreground" onClick={() => setOpen(!open)} aria-expanded={open}>
            {open ? <ChevronDown className="size-3" /> : <ChevronRight className="size-3" />}
            {open ? 'Collapse' : `Show all ${lines.length} lines`}
          </button>
        )}
      </div>
      <pre className="overflow-x-auto px-3 pt-1 pb-2 font-mono text-xs leading-relaxed whitespace-pre" data-testid="step-output">
        {open ? output : lines.slice(0, LONG_OUTPUT_LINES).join('\n') + '\n…'}
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
}) {
  const { thought, draft } = splitThought(step.thought);
  const code = step.code ?? draft;
  const running = live && !step.finished;
  const failed = step.error && !revision;
  return (
    <article className={cn('space-y-3 rounded-xl border bg-card p-4 shadow-xs', failed && 'border-destructive/40')} data-testid="step-card">
      <header className="flex items-center gap-2 text-xs text-muted-foreground">
        <span className="rounded-md bg-muted px-1.5 py-0.5 font-medium text-foreground">Step {step.index}</span>
        {running && <Loader2 className="size-3.5 animate-spin" aria-label="Step running" />}
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
        <span className="ml-auto tabular-nums">
          {step.finished && step.durationMs != null && formatDuration(step.durationMs)}
          {step.finished && step.tokensIn + step.tokensOut > 0 && ` · ${formatTokens(step.tokensIn + step.tokensOut)}`}
        </span>
      </header>
      {thought && <p className="text-sm leading-relaxed whitespace-pre-wrap text-muted-foreground" data-testid="step-thought">{thought}</p>}
      {code && <CodeBlock code={code} />}
      {step.output && <OutputBlock output={step.output} />}
      {revision && <RevisionNote check={revision} />}
      {failed && (
        <div role="alert" className="rounded-lg border border-destructive/30 bg-destructive/5 p-3">
          <div className="mb-1 text-[11px] font-medium tracking-wide text-destructive uppercase">Error</div>
          <pre className="overflow-x-auto font-mono text-xs whitespace-pre-wrap text-destructive" data-testid="step-error">
            {step.error}
          </pre>
        </div>
      )}
      {artifacts.map((a) => (
        <ArtifactView key={a.id} artifact={a} />
      ))}
    </article>
  );
}
