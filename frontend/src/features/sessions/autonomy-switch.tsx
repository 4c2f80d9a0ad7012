import { useId } from 'react';
import { toast } from 'sonner';
import type { SessionOut } from '@/client';
import { Switch } from '@/components/ui/switch';
import { useBlocked } from '@/features/projects/role';
import { cn } from '@/lib/utils';
import { useSetAutonomy } from './mutations';

/**
 * The session's mode: in review mode each code block the agent writes waits for the user to
 * approve, edit or reject it; otherwise code runs as soon as it is written.
 */
export function AutonomySwitch({ session, className }: { session: SessionOut; className?: string }) {
  const id = useId();
  const set = useSetAutonomy(session.project_id);
  const autonomy = set.isPending ? set.variables.autonomy : session.autonomy;
  const review = autonomy === 'review';
  const blocked = useBlocked('editor', 'switch review mode');
  return (
    <div
      className={cn('flex shrink-0 items-center gap-2 text-xs', className)}
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
        onCheckedChange={(on) =>
          set.mutate(
            { id: session.id, autonomy: on ? 'review' : 'auto' },
            { onError: (e) => toast.error(e instanceof Error ? e.message : 'Could not change the mode.') },
          )
        }
      />
      <label htmlFor={id} className={cn('whitespace-nowrap', blocked ? 'cursor-not-allowed' : 'cursor-pointer', review ? 'font-medium text-foreground' : 'text-muted-foreground')}>
        <span className="hidden lg:inline">Review code before it runs</span>
        <span className="lg:hidden">Review code</span>
      </label>
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
