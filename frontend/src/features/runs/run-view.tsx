import {
  CheckCircle2,
  ChevronDown,
  ChevronRight,
  CircleSlash,
  Hourglass,
  Loader2,
  MessageCircleQuestion,
  Pencil,
  RotateCcw,
  Server,
  ShieldQuestion,
  Square,
  WifiOff,
  XCircle,
} from 'lucide-react';
import { Fragment, useState, type ReactNode } from 'react';
import { Badge } from '@/components/ui/badge';
import { AttemptLanes, AttemptsDetails } from '@/features/attempts/attempt-lanes';
import { hasAttempts } from '@/features/attempts/lanes';
import { RepairNote } from '@/features/attempts/repair-note';
import { VerdictBanner } from '@/features/attempts/verdict';
import { GuardedButton } from '@/components/guarded-button';
import { Button } from '@/components/ui/button';
import { Textarea } from '@/components/ui/input';
import { useBlocked } from '@/features/projects/role';
import { formatCost, formatDate, formatDuration, formatNumber } from '@/lib/utils';
import { Answer } from './answer';
import { AnswerCheck, RevisionNote } from './answer-check';
import { ArtifactView } from './artifact-view';
import { answerResults, groupArtifacts } from './artifacts';
import { QuestionReply } from './question-reply';
import { isTerminal, type RunStatus } from './events';
import type { ReplyActions } from './mutations';
import { PlanCard } from './plan-card';
import { answerCheck, isRevisionRequest, openApproval, openQuestion, type RunView as RunViewModel, type StepView } from './run-reducer';
import { ChangedFilesNote, type ChangedFile } from './run-files';
import { StepCard } from './step-card';

export function StatusBadge({ status }: { status: RunStatus }) {
  switch (status) {
    case 'succeeded':
      return (
        <Badge variant="success">
          <CheckCircle2 /> Succeeded
        </Badge>
      );
    case 'failed':
      return (
        <Badge variant="error">
          <XCircle /> Failed
        </Badge>
      );
    case 'cancelled':
      return (
        <Badge variant="warning">
          <CircleSlash /> Cancelled
        </Badge>
      );
    case 'waiting_input':
      return (
        <Badge variant="warning">
          <MessageCircleQuestion /> Waiting for your answer
        </Badge>
      );
    case 'waiting_approval':
      return (
        <Badge variant="warning">
          <ShieldQuestion /> Waiting for your approval
        </Badge>
      );
    default:
      return (
        <Badge variant="running">
          <Loader2 className="animate-spin" /> {status === 'queued' ? 'Queued' : 'Running'}
        </Badge>
      );
  }
}

function queueText(position: number | null): string {
  const where = position === 1 ? 'next in line' : position ? `number ${position} in line` : 'in line';
  return `Waiting for a free sandbox (every worker is busy) — ${where}.`;
}

/** Who asked a question and when: the member's email, or "you". */
export type Asked = { by: string | null; at: string | null };

export function UserQuery({ text, asked }: { text: string; asked?: Asked }) {
  return (
    <div className="flex flex-col items-end gap-1">
      <div className="max-w-[85%] rounded-2xl rounded-br-md bg-primary px-4 py-2.5 text-sm whitespace-pre-wrap text-primary-foreground shadow-xs">
        {text}
      </div>
      {asked && (asked.by || asked.at) && (
        <p className="max-w-[85%] truncate pr-1 text-[11px] text-muted-foreground" data-testid="run-asked">
          {asked.by && (
            <span data-testid="run-asked-by" title={asked.by === 'you' ? undefined : `Asked by ${asked.by}`}>
              {asked.by === 'you' ? 'You' : asked.by}
            </span>
          )}
          {asked.by && asked.at && ' · '}
          {asked.at && <time dateTime={asked.at}>{formatDate(asked.at)}</time>}
        </p>
      )}
    </div>
  );
}

/**
 * "4 steps · 2 fixed errors · 1 question · 3.9 s": what the folded steps of a finished run hold. An
 * error counts as fixed only when a later step of the run worked (a check's request to revise an
 * answer is no error); the step a stopped run was stopped in is no error either: the run says "stopped".
 */
export function stepsSummary(run: RunViewModel): string {
  const revisions = new Set(run.verifications.filter(isRevisionRequest).map((c) => c.step));
  // Code the user rejected did not run: neither an error nor a step that worked.
  const rejected = new Set(run.approvals.filter((a) => a.decision === 'reject').map((a) => a.step));
  const worked = (s: StepView) => !rejected.has(s.index) && (!s.error || revisions.has(s.index));
  const stopped = run.status === 'cancelled';
  const last = run.steps[run.steps.length - 1];
  const failed = run.steps.filter((s) => !worked(s) && !rejected.has(s.index) && !(stopped && s === last));
  const fixed = failed.filter((s) => run.steps.some((x) => x.index > s.index && worked(x))).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return [
    plural(run.steps.length, 'step'),
    fixed > 0 && plural(fixed, 'fixed error'),
    failed.length - fixed > 0 && plural(failed.length - fixed, 'error'),
    rejected.size > 0 && `${rejected.size} rejected`,
    stopped && 'stopped',
    run.plans.length > 0 && plural(run.plans.length, 'plan'),
    run.inputs.length > 0 && plural(run.inputs.length, 'question'),
    run.durationMs != null && formatDuration(run.durationMs),
  ]
    .filter(Boolean)
    .join(' · ');
}

/** The question of a finished run, edited in place: sending it asks it as a new run. */
function QueryEditor({ text, hint, onSend, onCancel }: { text: string; hint?: string; onSend: (query: string) => void; onCancel: () => void }) {
  const [value, setValue] = useState(text);
  const send = () => value.trim() && onSend(value.trim());
  return (
    <div className="ml-auto max-w-[85%] space-y-2 rounded-2xl border bg-card p-2 shadow-xs" data-testid="query-editor">
      <Textarea
        aria-label="Edit the question"
        autoFocus
        rows={2}
        className="min-w-[min(28rem,70vw)] border-0 shadow-none focus-visible:ring-0"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            send();
          } else if (e.key === 'Escape') {
            e.preventDefault();
            onCancel();
          }
        }}
      />
      <div className="flex justify-end gap-2">
        <Button variant="ghost" size="sm" onClick={onCancel}>
          Cancel
        </Button>
        <Button size="sm" onClick={send} disabled={!value.trim()}>
          {hint ?? 'Send as a new question'}
        </Button>
      </div>
    </div>
  );
}

export function RunView({
  run,
  replies,
  live,
  reconnecting,
  onStop,
  stopping,
  onResend,
  onEdit,
  resendBlocked,
  changed = [],
  asked,
  shapedBy,
  actions,
}: {
  /** What shaped its answer (the team's knowledge it used), under the answer. */
  shapedBy?: ReactNode;
  /** More of what can be done with a finished run (Save as verified, Add as check), in its footer. */
  actions?: ReactNode;
  run: RunViewModel;
  /** Who asked it and when (the history's; "you" for a question this tab just sent). */
  asked?: Asked;
  /** Where the answer to its question and the decision on its code go. */
  replies: ReplyActions;
  live?: boolean;
  reconnecting?: boolean;
  onStop?: () => void;
  stopping?: boolean;
  /** Asks this run's question again (Retry) or an edited one (Edit) as a new run. */
  onResend?: (query: string) => void;
  /** Asks an edited question elsewhere than at the session's end (an earlier question: in a branch); Edit uses it over `onResend`. */
  onEdit?: (query: string) => void;
  /** Why nothing can be resent now (another run is going), if so. */
  resendBlocked?: string | null;
  /** The files it used that have a newer version now. */
  changed?: ChangedFile[];
}) {
  const finished = isTerminal(run.status);
  const stopBlocked = useBlocked('editor', 'stop a run');
  const [stepsOpen, setStepsOpen] = useState(false);
  const [editing, setEditing] = useState(false);
  const sendEdited = onEdit ?? onResend;
  const stepIndexes = new Set(run.steps.map((s) => s.index));
  // A finished run leads with its answer and every result under it, charts first; the way there
  // folds beneath. While it goes, each result shows in the step that made it (and stays when the
  // step folds), where the user saw it appear.
  const results = finished ? answerResults(groupArtifacts(run.artifacts)) : [];
  const below = finished ? [] : run.artifacts;
  const loose = below.filter((a) => a.step == null || !stepIndexes.has(a.step));
  const revisions = run.verifications.filter(isRevisionRequest);
  const check = answerCheck(run);
  const latestPlan = run.plans[run.plans.length - 1];
  const question = openQuestion(run);
  const approval = openApproval(run);
  const hasFlow = run.steps.length + run.plans.length + run.inputs.length + loose.length > 0;
  const showFlow = !finished || stepsOpen;
  // The flow by step: a plan above the step it was written before, then that step (with the
  // check that asked to revise its answer, and the decision on its code in review mode), then
  // the question its code asked; a revision request or question whose step has no card stands alone.
  const at = [
    ...new Set([
      ...run.plans.map((p) => p.step),
      ...stepIndexes,
      ...revisions.map((c) => c.step),
      ...run.inputs.map((i) => i.step),
      ...run.repairs.map((r) => r.step),
    ]),
  ].sort((a, b) => a - b);
  // Asked with several attempts: lanes while they run, then the verdict above the chosen answer.
  const attempts = hasAttempts(run);
  const answer = (run.answer || run.verdict) && (
    <div className="space-y-2">
      {run.verdict && <VerdictBanner verdict={run.verdict} lanes={run.attempts} />}
      {run.answer && <Answer text={run.answer} />}
      {check && <AnswerCheck check={check} />}
    </div>
  );
  const failure = run.error && run.status === 'failed' && (
    <p role="alert" className="rounded-lg border border-destructive/30 bg-destructive/5 p-3 text-sm text-destructive" data-testid="run-error">
      {run.error}
    </p>
  );
  const flow = (
    <div className="space-y-4" data-testid="run-steps">
      {at.map((index) => {
        const step = run.steps.find((s) => s.index === index);
        const revision = revisions.findLast((c) => c.step === index);
        return (
          <Fragment key={index}>
            {run.plans
              .filter((p) => p.step === index)
              .map((p) => (
                <PlanCard key={`plan-${p.step}`} plan={p} first={p === run.plans[0]} latest={p === latestPlan} />
              ))}
            {step ? (
              <StepCard
                step={step}
                live={live && !finished}
                nextStep={run.steps.find((x) => x.index > step.index)?.index}
                artifacts={below.filter((a) => a.step === step.index)}
                revision={revision}
                approval={run.approvals.findLast((a) => a.step === index)}
                review={approval?.step === index ? (decision) => replies.decide(run.runId, decision) : undefined}
                // Opened from a finished run's summary, every step shows; while a run goes, finished steps fold.
                defaultOpen={finished ? true : undefined}
              />
            ) : (
              revision && <RevisionNote check={revision} />
            )}
            {run.inputs
              .filter((i) => i.step === index)
              .map((i, n) => (
                <QuestionReply
                  key={`question-${index}-${n}`}
                  answer={(text) => replies.answer(run.runId, text)}
                  input={i}
                  waiting={i === question}
                  live={live}
                />
              ))}
            {run.repairs
              .filter((r) => r.step === index)
              .map((r, n) => (
                <RepairNote key={`repair-${index}-${n}`} repair={r} />
              ))}
          </Fragment>
        );
      })}
      {groupArtifacts(loose).map((i) => (
        <ArtifactView key={i.artifact.id} artifact={i.artifact} csv={i.csv} />
      ))}
    </div>
  );
  return (
    <section id={`run-${run.runId}`} className="space-y-4" data-testid="run" data-run-id={run.runId} data-status={run.status} aria-label={`Run: ${run.query}`}>
      {run.query &&
        (editing && sendEdited ? (
          <QueryEditor
            text={run.query}
            hint={onEdit ? 'Ask in a new branch' : undefined}
            onCancel={() => setEditing(false)}
            onSend={(q) => {
              setEditing(false);
              sendEdited(q);
            }}
          />
        ) : (
          <UserQuery text={run.query} asked={asked} />
        ))}
      {finished && (
        <div className="space-y-3" data-testid="run-result">
          {failure || answer || (run.status === 'cancelled' && <p className="text-sm text-muted-foreground">Stopped before an answer.</p>)}
          {results.length > 0 && (
            <div className="space-y-3" data-testid="answer-results">
              {results.map((i) => (
                <ArtifactView key={i.artifact.id} artifact={i.artifact} csv={i.csv} />
              ))}
            </div>
          )}
          {attempts && run.attempts.length > 0 && <AttemptsDetails runId={run.runId} lanes={run.attempts} chosen={run.verdict?.chosen ?? null} />}
          {shapedBy}
          <ChangedFilesNote changed={changed} />
        </div>
      )}
      {finished && hasFlow && (
        <button
          type="button"
          className="flex w-full cursor-pointer items-center gap-1.5 rounded-lg border border-dashed px-3 py-2 text-left text-xs text-muted-foreground hover:bg-muted/50 hover:text-foreground"
          aria-expanded={stepsOpen}
          data-testid="steps-toggle"
          onClick={() => setStepsOpen(!stepsOpen)}
        >
          {stepsOpen ? <ChevronDown className="size-3.5 shrink-0" /> : <ChevronRight className="size-3.5 shrink-0" />}
          <span className="min-w-0 flex-1">{stepsSummary(run)}</span>
          <span className="shrink-0">{stepsOpen ? 'Hide steps' : 'Show steps'}</span>
        </button>
      )}
      {showFlow && flow}
      {!finished && attempts && run.attempts.length > 0 && <AttemptLanes lanes={run.attempts} live={live} decide={(decision) => replies.decide(run.runId, decision)} />}
      {run.status === 'queued' && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground" data-testid="run-queued">
          <Hourglass className="size-4" /> {queueText(run.queuePosition)}
        </p>
      )}
      {run.status === 'running' && run.sandboxStarting && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground" data-testid="sandbox-starting">
          <Server className="size-4 animate-pulse" />
          {run.sandboxStarting.restoring ? 'Starting the sandbox and restoring your variables…' : 'Starting the sandbox…'}
        </p>
      )}
      {run.status === 'running' && !run.sandboxStarting && run.steps.length === 0 && run.plans.length === 0 && !attempts && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground">
          <Loader2 className="size-4 animate-spin" /> Thinking…
        </p>
      )}
      {!finished && answer}
      <footer className="flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted-foreground" data-testid="run-footer">
        <StatusBadge status={run.status} />
        {reconnecting && !finished && (
          <span className="flex items-center gap-1 text-amber-600">
            <WifiOff className="size-3.5" /> Reconnecting…
          </span>
        )}
        {finished && (
          <>
            <span className="tabular-nums">{formatDuration(run.durationMs)}</span>
            <span
              className="tabular-nums"
              data-testid="run-tokens"
              title={run.tokensEstimated ? "Estimated: the model's server did not report its token counts" : undefined}
            >
              {run.tokensEstimated && '≈ '}
              {formatNumber(run.tokensIn)} in · {formatNumber(run.tokensOut)} out tokens
            </span>
            {run.costUsd != null && <span className="tabular-nums">{formatCost(run.costUsd)}</span>}
          </>
        )}
        {run.model && <span className="font-mono">{run.model}</span>}
        {finished && (actions || (onResend && run.query && !editing)) && (
          <span className="ml-auto flex flex-wrap items-center gap-1">
            {actions}
            {onResend && run.query && !editing && (
              <>
                <Button
                  variant="ghost"
                  size="sm"
                  className="h-7 px-2"
                  disabled={!!resendBlocked}
                  title={resendBlocked ?? 'Ask the same question again, as a new run'}
                  onClick={() => onResend(run.query)}
                >
                  <RotateCcw /> Retry
                </Button>
                <Button
                  variant="ghost"
                  size="sm"
                  className="h-7 px-2"
                  // An earlier question's edit goes to a branch: the session may be busy meanwhile.
                  disabled={!onEdit && !!resendBlocked}
                  title={
                    onEdit
                      ? 'Change the question and ask it in a new branch, after the question before it'
                      : (resendBlocked ?? 'Change the question and ask it as a new run')
                  }
                  onClick={() => setEditing(true)}
                >
                  <Pencil /> Edit
                </Button>
              </>
            )}
          </span>
        )}
        {!finished && onStop && (
          <GuardedButton variant="outline" size="sm" place="ml-auto" onClick={onStop} disabled={stopping} blockedBecause={stopBlocked}>
            <Square className="fill-current" /> Stop
          </GuardedButton>
        )}
      </footer>
    </section>
  );
}
