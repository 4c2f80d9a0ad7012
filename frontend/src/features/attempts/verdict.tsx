import { AlertTriangle, CheckCircle2, HelpCircle, Scale } from 'lucide-react';
import { cn } from '@/lib/utils';
import type { AttemptLane } from './lanes';
import type { VerdictOut } from './types';

/** "3/3" → [3, 3]; anything else → null. */
export function parseAgreement(agreement: string): [number, number] | null {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(agreement);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

/** What the verdict says in words: "3 of 3 attempts agree", "2 of 3 agree", "Judged: attempt 2", "Could not tell". */
export function verdictHeadline(v: VerdictOut): string {
  const counts = parseAgreement(v.agreement);
  const of = counts ? `${counts[0]} of ${counts[1]}` : v.agreement;
  switch (v.outcome) {
    case 'agree':
      return `${of} attempts agree`;
    case 'majority':
      return `${of} agree`;
    case 'judged':
      return v.chosen != null ? `The attempts disagreed: the judge chose attempt ${v.chosen}` : 'The attempts disagreed: the judge chose';
    default:
      return 'Could not tell which answer is right';
  }
}

/**
 * The reason, less what the headline already says: the server's reason begins with the count
 * ("3 of 3 attempts agree.", "2 of 3 agree — attempt 3 found 4,812…"), which the headline shows.
 */
export function reasonBeyondHeadline(v: VerdictOut): string {
  const reason = (v.reason ?? '').trim();
  if (v.outcome !== 'agree' && v.outcome !== 'majority') return reason;
  return reason.replace(/^\d+ of \d+( attempts)? agree\.?\s*(—\s*)?/, '').trim();
}

const LOOK = {
  agree: { icon: CheckCircle2, tone: 'border-emerald-500/30 bg-emerald-500/10 text-emerald-800 dark:text-emerald-300', mark: 'Agree' },
  majority: { icon: AlertTriangle, tone: 'border-amber-500/30 bg-amber-500/10 text-amber-800 dark:text-amber-300', mark: 'Split' },
  judged: { icon: Scale, tone: 'border-sky-500/30 bg-sky-500/10 text-sky-800 dark:text-sky-300', mark: 'Judged' },
  undecided: { icon: HelpCircle, tone: 'border-destructive/30 bg-destructive/5 text-destructive', mark: 'Could not tell' },
} as const;

/** The answers the attempts outside the chosen group gave: "attempt 3: 4,812". */
function dissent(v: VerdictOut, lanes: AttemptLane[]): string[] {
  return v.groups
    .filter((g) => v.chosen == null || !g.attempts.includes(v.chosen))
    .map((g) => {
      const who = g.attempts.length === 1 ? `attempt ${g.attempts[0]}` : `attempts ${g.attempts.join(', ')}`;
      const strategy = g.attempts.length === 1 ? lanes.find((l) => l.attempt === g.attempts[0])?.strategy : undefined;
      return `${who}${strategy ? ` (${strategy})` : ''}: ${g.answer ?? 'no answer'}`;
    });
}

/**
 * The verdict above the answer: a mark (agree, split, judged, could not tell), what it means in
 * words, and why: the reason names the dissent; the other groups' answers are listed under it.
 */
export function VerdictBanner({ verdict, lanes }: { verdict: VerdictOut; lanes: AttemptLane[] }) {
  const look = LOOK[verdict.outcome] ?? LOOK.undecided;
  const others = verdict.outcome === 'agree' ? [] : dissent(verdict, lanes);
  const chosen = lanes.find((l) => l.attempt === verdict.chosen);
  const reason = reasonBeyondHeadline(verdict);
  return (
    <div
      role="status"
      className={cn('flex items-start gap-2.5 rounded-lg border px-3 py-2 text-sm', look.tone)}
      data-testid="verdict"
      data-outcome={verdict.outcome}
    >
      <look.icon className="mt-0.5 size-4 shrink-0" aria-hidden />
      <div className="min-w-0 space-y-0.5">
        <p>
          <span className="sr-only">{look.mark}: </span>
          <span className="font-medium" data-testid="verdict-headline">
            {verdictHeadline(verdict)}
          </span>
          {reason && <span data-testid="verdict-reason"> — {reason}</span>}
        </p>
        {chosen && verdict.outcome !== 'agree' && (
          <p className="text-xs opacity-90">
            The answer below is attempt {chosen.attempt}'s{chosen.strategy ? ` (${chosen.strategy})` : ''}.
          </p>
        )}
        {others.length > 0 && (
          <ul className="text-xs opacity-90" data-testid="verdict-dissent">
            {others.map((o) => (
              <li key={o}>{o}</li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
