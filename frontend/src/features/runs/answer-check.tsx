import { AlertTriangle, CheckCircle2, RotateCcw } from 'lucide-react';
import { cn } from '@/lib/utils';
import type { VerificationView } from './run-reducer';

/** The check of the shown answer: approved, or the answer stands with the check's doubts. */
export function AnswerCheck({ check }: { check: VerificationView }) {
  const approved = check.verdict === 'approve';
  const Icon = approved ? CheckCircle2 : AlertTriangle;
  return (
    <p
      className={cn(
        'flex w-fit max-w-full items-start gap-2 rounded-lg px-3 py-1.5 text-sm',
        approved ? 'bg-emerald-500/10 text-emerald-800 dark:text-emerald-300' : 'bg-amber-500/10 text-amber-800 dark:text-amber-300',
      )}
      data-testid="answer-check"
      data-verdict={check.verdict}
    >
      <Icon className="mt-0.5 size-4 shrink-0" />
      <span>
        <span className="font-medium">{approved ? 'Checked' : 'The check still has doubts'}</span>
        {check.reason ? `: ${check.reason}` : '.'}
      </span>
    </p>
  );
}

/** A check that sent the agent back to work, shown where it happened (not an error in the code). */
export function RevisionNote({ check }: { check: VerificationView }) {
  return (
    <p className="flex items-start gap-2 rounded-lg border bg-muted/60 px-3 py-2 text-sm" data-testid="revision-request">
      <RotateCcw className="mt-0.5 size-4 shrink-0 text-muted-foreground" />
      <span>
        <span className="font-medium">Check asked for a revision</span>
        {check.reason ? `: ${check.reason}` : '.'}
      </span>
    </p>
  );
}
