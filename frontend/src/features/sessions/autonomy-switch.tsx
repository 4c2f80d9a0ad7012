import { useId } from 'react';
import { toast } from 'sonner';
import type { SessionOut } from '@/client';
import { Switch } from '@/components/ui/switch';
import type { Autonomy } from '@/features/attempts/types';
import { useBlocked } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { useSetAutonomy } from './mutations';

/**
 * The session's mode: in review mode each code block the agent writes waits for the user to
 * approve, edit or reject it; with "Ask before repairs" only a repair (the code that retries a
 * failed step, or the winner of a parallel repair) waits; otherwise code runs as soon as it is written.
 */
export function AutonomySwitch({ session, className }: { session: SessionOut; className?: string }) {
  const id = useId();
  const set = useSetAutonomy(session.project_id);
  const autonomy: Autonomy = set.isPending ? set.variables.autonomy : session.autonomy;
  const review = autonomy === 'review';
  const repairs = autonomy === 'review_repairs';
  const blocked = useBlocked('editor', 'switch review mode');
  const change = (next: Autonomy) =>
    set.mutate({ id: session.id, autonomy: next }, { onError: (e) => toast.error(e instanceof Error ? e.message : 'Could not change the mode.') });
  const labelClass = (on: boolean) => cn('whitespace-nowrap', blocked ? 'cursor-not-allowed' : 'cursor-pointer', on ? 'font-medium text-foreground' : 'text-muted-foreground');
  return (
    <div className={cn('flex shrink-0 items-center gap-2 text-xs', className)}>
      <span
        className="flex items-center gap-2"
        title={
          blocked ??
          (review
            ? 'Review mode: each code block waits for you to approve, edit or reject it before it runs.'
            : 'Code runs as soon as the agent writes it. Turn on to review each block first.')
        }
      >
        <Switch
          id={id}
          data-testid="autonomy-switch"
          checked={review}
          disabled={set.isPending || !!blocked}
          onCheckedChange={(on) => change(on ? 'review' : 'auto')}
        />
        <label htmlFor={id} className={labelClass(review)}>
          <span className="hidden lg:inline">Review code before it runs</span>
          <span className="lg:hidden">Review code</span>
        </label>
      </span>
      {!review && (
        <span
          className="flex items-center gap-2"
          title={
            blocked ??
            (repairs
              ? 'Ordinary steps run on; a repair after an error waits for you to approve it.'
              : 'Turn on to approve each repair (a retry after an error) before it runs; ordinary steps run on.')
          }
        >
          <Switch
            id={`${id}-repairs`}
            data-testid="autonomy-repairs"
            checked={repairs}
            disabled={set.isPending || !!blocked}
            onCheckedChange={(on) => change(on ? 'review_repairs' : 'auto')}
          />
          <label htmlFor={`${id}-repairs`} className={labelClass(repairs)}>
            <span className="hidden lg:inline">Ask before repairs</span>
            <span className="lg:hidden">Repairs</span>
          </label>
        </span>
      )}
    </div>
  );
}

/** A small mark for sessions in review mode, where sessions are listed. */
export function ReviewBadge({ className }: { className?: string }) {
  return (
    <span
      className={cn('shrink-0 rounded-full bg-primary/10 px-1.5 py-px text-[10px] font-medium text-primary', className)}
      title="Review mode: each code block waits for your approval"
      data-testid="review-badge"
    >
      Review
    </span>
  );
}
