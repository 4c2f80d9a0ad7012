import { CheckCircle2, CircleSlash, Hourglass, Loader2, MessageCircleQuestion, ShieldQuestion, Square, WifiOff, XCircle } from 'lucide-react';
import { Fragment } from 'react';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { formatCost, formatDuration, formatNumber } from '@/lib/utils';
import { Answer } from './answer';
import { AnswerCheck, RevisionNote } from './answer-check';
import { ArtifactView } from './artifact-view';
import { QuestionReply } from './question-reply';
import { isTerminal, type RunStatus } from './events';
import { PlanCard } from './plan-card';
import { answerCheck, isRevisionRequest, openApproval, openQuestion, type RunView as RunViewModel } from './run-reducer';
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

export function UserQuery({ text }: { text: string }) {
  return (
    <div className="flex justify-end">
      <div className="max-w-[85%] rounded-2xl rounded-br-md bg-primary px-4 py-2.5 text-sm whitespace-pre-wrap text-primary-foreground shadow-xs">
        {text}
      </div>
    </div>
  );
}

export function RunView({
  sessionId,
  run,
  live,
  reconnecting,
  onStop,
  stopping,
}: {
  sessionId: string;
  run: RunViewModel;
  live?: boolean;
  reconnecting?: boolean;
  onStop?: () => void;
  stopping?: boolean;
}) {
  const finished = isTerminal(run.status);
  const stepIndexes = new Set(run.steps.map((s) => s.index));
  const loose = run.artifacts.filter((a) => a.step == null || !stepIndexes.has(a.step));
  const revisions = run.verifications.filter(isRevisionRequest);
  const check = answerCheck(run);
  const latestPlan = run.plans[run.plans.length - 1];
  const question = openQuestion(run);
  const approval = openApproval(run);
  // The flow by step: a plan above the step it was written before, then that step (with the
  // check that asked to revise its answer, and the decision on its code in review mode), then
  // the question its code asked; a revision request or question whose step has no card stands alone.
  const at = [
    ...new Set([...run.plans.map((p) => p.step), ...stepIndexes, ...revisions.map((c) => c.step), ...run.inputs.map((i) => i.step)]),
  ].sort((a, b) => a - b);
  return (
    <section className="space-y-4" data-testid="run" data-run-id={run.runId} data-status={run.status} aria-label={`Run: ${run.query}`}>
      {run.query && <UserQuery text={run.query} />}
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
                artifacts={run.artifacts.filter((a) => a.step === step.index)}
                revision={revision}
                approval={run.approvals.findLast((a) => a.step === index)}
                review={approval?.step === index ? { sessionId, runId: run.runId } : undefined}
              />
            ) : (
              revision && <RevisionNote check={revision} />
            )}
            {run.inputs
              .filter((i) => i.step === index)
              .map((i, n) => (
                <QuestionReply key={`question-${index}-${n}`} sessionId={sessionId} runId={run.runId} input={i} waiting={i === question} live={live} />
              ))}
          </Fragment>
        );
      })}
      {loose.map((a) => (
        <ArtifactView key={a.id} artifact={a} />
      ))}
      {run.status === 'queued' && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground" data-testid="run-queued">
          <Hourglass className="size-4" /> {queueText(run.queuePosition)}
        </p>
      )}
      {run.status === 'running' && run.steps.length === 0 && run.plans.length === 0 && (
        <p className="flex items-center gap-2 text-sm text-muted-foreground">
          <Loader2 className="size-4 animate-spin" /> Thinking…
        </p>
      )}
      {run.answer && (
        <div className="space-y-2">
          <Answer text={run.answer} />
          {check && <AnswerCheck check={check} />}
        </div>
      )}
      {run.error && run.status === 'failed' && (
        <p role="alert" className="rounded-lg border border-destructive/30 bg-destructive/5 p-3 text-sm text-destructive">
          {run.error}
        </p>
      )}
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
            <span className="tabular-nums">
              {formatNumber(run.tokensIn)} in · {formatNumber(run.tokensOut)} out tokens
            </span>
            {run.costUsd != null && <span className="tabular-nums">{formatCost(run.costUsd)}</span>}
          </>
        )}
        {run.model && <span className="font-mono">{run.model}</span>}
        {!finished && onStop && (
          <Button variant="outline" size="sm" className="ml-auto" onClick={onStop} disabled={stopping}>
            <Square className="fill-current" /> Stop
          </Button>
        )}
      </footer>
    </section>
  );
}
