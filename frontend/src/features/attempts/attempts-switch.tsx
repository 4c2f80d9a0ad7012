import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Switch } from '@/components/ui/switch';
import { projectQuery } from '@/features/projects/queries';
import { cn } from '@/lib/utils';
import { MAX_ATTEMPTS } from './types';

/** The number the switch offers when the project has no default above 1. */
export const CHECK_ATTEMPTS = 3;

const clamp = (n: number) => Math.min(MAX_ATTEMPTS, Math.max(2, Math.round(n)));

export type AttemptsChoice = {
  on: boolean;
  count: number;
  setOn: (on: boolean) => void;
  setCount: (n: number) => void;
  /** What the question sends as `attempts`: nothing when the user left it as the project has it at 1 (a question as before). */
  attempts: number | undefined;
};

/**
 * The composer's choice of attempts: off (one attempt) unless the project's `default_attempts`
 * is above 1, then on with that number; what the user sets holds for this session's questions.
 */
export function useAttemptsChoice(projectId: string): AttemptsChoice {
  const project = useQuery({ ...projectQuery(projectId), select: (p) => p.default_attempts ?? 1 });
  const fallback = project.data ?? 1;
  const [own, setOwn] = useState<{ on: boolean | null; count: number | null }>({ on: null, count: null });
  const on = own.on ?? fallback > 1;
  const count = own.count ?? (fallback > 1 ? clamp(fallback) : CHECK_ATTEMPTS);
  const attempts = on ? count : fallback > 1 ? 1 : undefined;
  return {
    on,
    count,
    attempts,
    setOn: (next) => setOwn((o) => ({ ...o, on: next })),
    setCount: (n) => setOwn((o) => ({ ...o, count: clamp(n) })),
  };
}

/** "Check with 3 attempts": the question runs as several independent attempts whose answers are compared. */
export function AttemptsSwitch({ choice, disabled, className }: { choice: AttemptsChoice; disabled?: boolean; className?: string }) {
  const id = useId();
  return (
    <div
      className={cn('flex h-8 shrink-0 items-center gap-1.5 rounded-md px-2 text-xs', className)}
      title="Runs the question as independent attempts at once, each its own way, and says whether their answers agree."
      data-testid="attempts-choice"
    >
      <Switch
        id={id}
        data-testid="attempts-switch"
        aria-label={`Check with ${choice.count} attempts`}
        checked={choice.on}
        disabled={disabled}
        onCheckedChange={choice.setOn}
      />
      <label htmlFor={id} className={cn('cursor-pointer whitespace-nowrap', choice.on ? 'font-medium text-foreground' : 'text-muted-foreground')}>
        Check with{choice.on ? '' : ` ${choice.count} attempts`}
      </label>
      {choice.on && (
        <>
          <select
            aria-label="Number of attempts"
            data-testid="attempts-count"
            className="h-7 cursor-pointer rounded-md border bg-transparent px-1 text-xs tabular-nums"
            value={choice.count}
            disabled={disabled}
            onChange={(e) => choice.setCount(Number(e.target.value))}
          >
            {[2, 3, 4, 5].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
          <span className="font-medium text-foreground">attempts</span>
        </>
      )}
    </div>
  );
}
